/* test_tensor_io.c: sim/fpsim_tensor_io.h: the 2-D input tensor from raw bytes, HDF5 and .npy.
 *
 * Input files are written here byte by byte (raw, .npy headers typed out per the NumPy format
 * spec, numpy/lib/format.py) or with the plain HDF5 C API, never with fpsim's writers. Checks:
 * values come back bit for bit (NaN, Inf, -0 and subnormals included: they are valid input);
 * float64 is rounded once to float32; bfloat16 stays bits; every malformed input gives the
 * documented status and a one-line message naming the file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_h5.h"
#include "fpsim_tensor_io.h"
#include "io_test_util.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("tensor_io");
static char dir[256];

static const char *in_dir(const char *name)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static fpsim_status read_src(fpsim_tensor2d *t, const char *path, const char *dataset, size_t rows,
                             size_t cols, const char *dtype)
{
    fpsim_tensor_source src = {path, dataset, rows, cols, dtype};
    fpsim_clear_error();
    return fpsim_tensor_read(t, &src);
}

static void expect_fail(const char *what, fpsim_status st, fpsim_status want, const char *needle)
{
    TEST_CHECK(&tc, st == want, "%s: status %d, want %d (%s)", what, (int)st, (int)want, fpsim_last_error());
    TEST_CHECK(&tc, needle == NULL || strstr(fpsim_last_error(), needle) != NULL, "%s: message should mention '%s': %s",
               what, needle, fpsim_last_error());
    TEST_CHECK(&tc, strchr(fpsim_last_error(), '\n') == NULL && fpsim_last_error()[0], "%s: one non-empty line", what);
}

static const uint32_t special[6] = {0x7FC00001u, 0xFF800000u, 0x80000000u, 0x00000001u, 0x3F800000u, 0xC1200000u};

static void test_raw(void)
{
    float v[6];
    for (int i = 0; i < 6; i++) v[i] = test_f32_from_bits(special[i]);
    io_write_bytes(in_dir("x.f32"), v, sizeof v);
    fpsim_tensor2d t;
    fpsim_status st = read_src(&t, in_dir("x.f32"), NULL, 2, 3, NULL);
    TEST_CHECK(&tc, st == FPSIM_OK && t.dtype == FPSIM_TENSOR_F32 && t.rows == 2 && t.cols == 3, "raw f32: %s",
               fpsim_last_error());
    if (!st) {
        for (int i = 0; i < 6; i++) TEST_CHECK_EQ_HEX(&tc, test_f32_bits(t.f32[i]), special[i], "raw f32[%d]", i);
        TEST_CHECK(&tc, !strcmp(t.format, "raw") && !strcmp(t.source_dtype, "f32") && !t.rounded, "%s", "raw f32 labels");
        fpsim_tensor2d_free(&t);
    }
    /* The same 24 bytes as 3x4 bf16 (little-endian halves of the floats). */
    st = read_src(&t, in_dir("x.f32"), NULL, 3, 4, "bf16");
    TEST_CHECK(&tc, st == FPSIM_OK && t.dtype == FPSIM_TENSOR_BF16, "raw bf16: %s", fpsim_last_error());
    if (!st) {
        for (int i = 0; i < 6; i++) {
            TEST_CHECK_EQ_HEX(&tc, t.bf16[2 * i], special[i] & 0xFFFF, "raw bf16 lo %d", i);
            TEST_CHECK_EQ_HEX(&tc, t.bf16[2 * i + 1], special[i] >> 16, "raw bf16 hi %d", i);
        }
        fpsim_tensor2d_free(&t);
    }
    expect_fail("raw truncated", read_src(&t, in_dir("x.f32"), NULL, 2, 4, NULL), FPSIM_EFORMAT, "truncated");
    expect_fail("raw too long", read_src(&t, in_dir("x.f32"), NULL, 1, 5, NULL), FPSIM_EFORMAT, "--shape");
    expect_fail("raw bad dtype", read_src(&t, in_dir("x.f32"), NULL, 2, 3, "f16"), FPSIM_ENAME, "bf16");
    expect_fail("raw missing", read_src(&t, in_dir("nope.f32"), NULL, 2, 3, NULL), FPSIM_EIO, "nope.f32");
    expect_fail("raw + dataset", read_src(&t, in_dir("x.f32"), "x", 2, 3, NULL), FPSIM_EINVAL, "--dataset");
    expect_fail("unknown format", read_src(&t, in_dir("x.f32"), NULL, 0, 0, NULL), FPSIM_EFORMAT, "--shape");
}

static void test_hdf5(void)
{
    const char *one = in_dir("one.h5");
    hid_t f = H5Fcreate(one, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t d2[2] = {3, 2}, d1[1] = {6};
    hid_t s2 = H5Screate_simple(2, d2, NULL), s1 = H5Screate_simple(1, d1, NULL);
    double v64[6] = {0.1, -1e40, 1e-50, NAN, INFINITY, 3.0};
    hid_t d = H5Dcreate2(f, "w", H5T_IEEE_F64LE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v64);
    H5Dclose(d);
    H5Fclose(f);
    fpsim_tensor2d t;
    fpsim_status st = read_src(&t, one, NULL, 0, 0, NULL); /* the only dataset is found */
    TEST_CHECK(&tc, st == FPSIM_OK && t.rows == 3 && t.cols == 2 && t.dtype == FPSIM_TENSOR_F32, "h5 f64: %s",
               fpsim_last_error());
    if (!st) {
        TEST_CHECK(&tc, t.rounded && !strcmp(t.source_dtype, "f64") && !strcmp(t.format, "hdf5") && !strcmp(t.dataset, "w"),
                   "%s", "f64 labels (and the dataset found)");
        /* Independent: float64 -> float32 RNE, computed with nextafterf bracketing. */
        for (int i = 0; i < 6; i++) {
            float got = t.f32[i];
            if (isnan(v64[i])) {
                TEST_CHECK(&tc, isnan(got), "f64[%d] NaN stays NaN", i);
                continue;
            }
            if (isinf(v64[i]) || fabs(v64[i]) > 3.5e38) {
                TEST_CHECK(&tc, isinf(got) && (got > 0) == (v64[i] > 0), "f64[%d] overflows to Inf", i);
                continue;
            }
            double err = fabs((double)got - v64[i]);
            TEST_CHECK(&tc, err <= fabs((double)nextafterf(got, INFINITY) - v64[i]) &&
                                err <= fabs((double)nextafterf(got, -INFINITY) - v64[i]), "f64[%d] nearest", i);
        }
        fpsim_tensor2d_free(&t);
    }
    const char *two = in_dir("two.h5");
    f = H5Fcreate(two, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    d = H5Dcreate2(f, "a", H5T_IEEE_F32LE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(d);
    d = H5Dcreate2(f, "vec", H5T_IEEE_F32LE, s1, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(d);
    H5Fclose(f);
    H5Sclose(s1);
    H5Sclose(s2);
    expect_fail("h5 two datasets", read_src(&t, two, NULL, 0, 0, NULL), FPSIM_EINVAL, "--dataset");
    expect_fail("h5 rank 1", read_src(&t, two, "vec", 0, 0, NULL), FPSIM_ESHAPE, "rank 1");
    expect_fail("h5 + dtype", read_src(&t, two, "a", 0, 0, "bf16"), FPSIM_EINVAL, "--dtype");
    st = read_src(&t, two, "a", 0, 0, NULL);
    TEST_CHECK(&tc, st == FPSIM_OK, "h5 named dataset: %s", fpsim_last_error());
    if (!st) fpsim_tensor2d_free(&t);
    io_write_bytes(in_dir("bad.h5"), "\x89HDF\r\n\x1a\ngarbage", 15);
    expect_fail("h5 garbage after signature", read_src(&t, in_dir("bad.h5"), NULL, 0, 0, NULL), FPSIM_EFORMAT, "bad.h5");
}

/* A .npy file: magic, version 1.0, header padded with spaces to a multiple of 64, data. */
static void write_npy(const char *path, const char *dict, const void *data, size_t bytes)
{
    char header[256];
    int n = snprintf(header, sizeof header, "%s", dict);
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    FILE *f = fopen(path, "wb");
    unsigned short hlen = (unsigned short)(n + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(hlen & 0xFF, f);
    fputc(hlen >> 8, f);
    fwrite(header, 1, (size_t)n, f);
    for (int i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    fwrite(data, 1, bytes, f);
    fclose(f);
}

static void test_npy(void)
{
    float v[6];
    for (int i = 0; i < 6; i++) v[i] = test_f32_from_bits(special[i]);
    fpsim_tensor2d t;
    write_npy(in_dir("f4.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, sizeof v);
    fpsim_status st = read_src(&t, in_dir("f4.npy"), NULL, 0, 0, NULL);
    if (st == FPSIM_EUNSUPPORTED) {
        printf("note: .npy input not built yet (%s): npy cases skipped\n", fpsim_last_error());
        return;
    }
    TEST_CHECK(&tc, st == FPSIM_OK && t.rows == 2 && t.cols == 3 && t.dtype == FPSIM_TENSOR_F32, "npy f4: %s",
               fpsim_last_error());
    if (!st) {
        for (int i = 0; i < 6; i++) TEST_CHECK_EQ_HEX(&tc, test_f32_bits(t.f32[i]), special[i], "npy f4[%d]", i);
        TEST_CHECK(&tc, !strcmp(t.format, "npy"), "%s", "npy label");
        fpsim_tensor2d_free(&t);
    }
    write_npy(in_dir("v2.npy"), "{'descr': '<V2', 'fortran_order': False, 'shape': (3, 4), }", v, sizeof v);
    st = read_src(&t, in_dir("v2.npy"), NULL, 0, 0, "bf16");
    TEST_CHECK(&tc, st == FPSIM_OK && t.dtype == FPSIM_TENSOR_BF16 && t.rows == 3 && t.cols == 4, "npy V2 as bf16: %s",
               fpsim_last_error());
    if (!st) {
        TEST_CHECK_EQ_HEX(&tc, t.bf16[1], special[0] >> 16, "%s", "npy bf16 bits");
        fpsim_tensor2d_free(&t);
    }
    expect_fail("npy V2 without --dtype", read_src(&t, in_dir("v2.npy"), NULL, 0, 0, NULL), FPSIM_EFORMAT, "bf16");
    double v8[4] = {1.0 / 3.0, 2, 3, 4};
    write_npy(in_dir("f8.npy"), "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 1), }", v8, sizeof v8);
    st = read_src(&t, in_dir("f8.npy"), NULL, 0, 0, NULL);
    TEST_CHECK(&tc, st == FPSIM_OK && t.rounded && t.f32[0] == (float)(1.0 / 3.0), "npy f8: %s", fpsim_last_error());
    if (!st) fpsim_tensor2d_free(&t);
    write_npy(in_dir("i4.npy"), "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", v, sizeof v);
    expect_fail("npy int32", read_src(&t, in_dir("i4.npy"), NULL, 0, 0, NULL), FPSIM_EFORMAT, "i4.npy");
    write_npy(in_dir("r3.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }", v, sizeof v);
    expect_fail("npy rank 3", read_src(&t, in_dir("r3.npy"), NULL, 0, 0, NULL), FPSIM_ESHAPE, "r3.npy");
    write_npy(in_dir("short.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, sizeof v - 5);
    expect_fail("npy truncated", read_src(&t, in_dir("short.npy"), NULL, 0, 0, NULL), FPSIM_EFORMAT, "short.npy");
    write_npy(in_dir("junk.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3 }", v, sizeof v);
    expect_fail("npy malformed header", read_src(&t, in_dir("junk.npy"), NULL, 0, 0, NULL), FPSIM_EFORMAT, "junk.npy");
    /* headers numpy would read otherwise or not at all: a key twice (numpy takes the last value;
     * a first-match reader took '<f4'), no closing brace, a leading zero in the shape */
    write_npy(in_dir("dup.npy"), "{'descr': '<f4', 'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", v,
              sizeof v);
    expect_fail("npy key twice", read_src(&t, in_dir("dup.npy"), NULL, 0, 0, NULL), FPSIM_EFORMAT, "twice");
    write_npy(in_dir("open.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", v, sizeof v);
    expect_fail("npy dict not closed", read_src(&t, in_dir("open.npy"), NULL, 0, 0, NULL), FPSIM_EFORMAT, "dict");
    write_npy(in_dir("zero.npy"), "{'descr': '<f4', 'fortran_order': False, 'shape': (02, 3), }", v, sizeof v);
    expect_fail("npy shape 02", read_src(&t, in_dir("zero.npy"), NULL, 0, 0, NULL), FPSIM_EFORMAT, "shape");
    io_write_bytes(in_dir("notnpy.npy"), "hello", 5);
    expect_fail("npy no magic", read_src(&t, in_dir("notnpy.npy"), NULL, 0, 0, NULL), FPSIM_EFORMAT, "notnpy.npy");
}

int main(void)
{
    if (io_make_temp_dir(dir, sizeof dir, "test_tensor_io")) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    test_raw();
    test_hdf5();
    test_npy();
    io_remove_dir(dir);
    return test_summary(&tc);
}
