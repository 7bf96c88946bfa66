/* test_h5.c: sim/fpsim_h5.h round trips, read back with the plain HDF5 C API (not through the
 * helpers under test), and the reader's errors on bad files.
 *
 * Checks: datasets of rank 0..3 in every writable type, compressed and not, come back bit for
 * bit; string, number, string-array and number-array attributes come back; the output only
 * appears under its final name after commit, and discard leaves nothing; the provenance
 * attributes exist; fpsim_h5_read_matrix returns f32/f64/bf16 data unchanged and names the
 * problem for a missing dataset, rank 3, integer and float16 data, a non-HDF5 file, a truncated
 * file and a missing file; string attributes of other writers (null-padded, arrays, too long). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fpsim_h5.h"
#include "io_test_util.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("h5");

/* Read a whole dataset with the plain C API into a malloc'd buffer of native `mem` type. */
static void *raw_read(hid_t f, const char *name, hid_t mem, size_t esize, int *rank, hsize_t dims[8])
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0) return NULL;
    hid_t s = H5Dget_space(d);
    *rank = H5Sget_simple_extent_ndims(s);
    H5Sget_simple_extent_dims(s, dims, NULL);
    hssize_t n = H5Sget_simple_extent_npoints(s);
    void *buf = malloc((size_t)(n ? n : 1) * esize);
    if (n > 0 && H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        free(buf);
        buf = NULL;
    }
    H5Sclose(s);
    H5Dclose(d);
    return buf;
}

static int is_filtered(hid_t f, const char *name)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t p = H5Dget_create_plist(d);
    int n = H5Pget_nfilters(p);
    H5Pclose(p);
    H5Dclose(d);
    return n > 0;
}

static void test_roundtrip(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/roundtrip.h5", dir);

    /* Data with bit patterns that value conversion would change: NaN payloads, -0, subnormals. */
    enum { R = 37, C = 70, N3 = 2 * 3 * 5 };
    float *f32 = malloc(R * C * sizeof *f32);
    uint64_t seed = 1;
    for (int i = 0; i < R * C; i++) f32[i] = test_f32_from_bits((uint32_t)test_splitmix64(&seed));
    f32[0] = test_f32_from_bits(0x7FC12345u);
    f32[1] = test_f32_from_bits(0x80000000u);
    f32[2] = test_f32_from_bits(0x00000001u);
    double f64[N3];
    for (int i = 0; i < N3; i++) f64[i] = test_f64_from_bits(test_splitmix64(&seed));
    uint8_t u8[5] = {0, 1, 127, 128, 255};
    int64_t i64[3] = {INT64_MIN, -1, INT64_MAX};
    uint64_t u64[2] = {0, UINT64_MAX};
    int32_t i32 = -123456;

    fpsim_h5_file f;
    fpsim_status st = fpsim_h5_create(&f, path);
    TEST_CHECK(&tc, st == FPSIM_OK, "create: %s", fpsim_last_error());
    if (st) return;
    struct stat sb;
    TEST_CHECK(&tc, stat(path, &sb) != 0, "%s", "final name must not exist before commit");
    size_t d2[2] = {R, C}, d3[3] = {2, 3, 5}, d1[1] = {5}, d1b[1] = {3}, d1c[1] = {2}, d0[2] = {0, 4};
    st = fpsim_h5_write(f.id, "f32", FPSIM_H5_F32, 2, d2, f32, 0);
    if (!st) st = fpsim_h5_write(f.id, "f32_gzip", FPSIM_H5_F32, 2, d2, f32, 6);
    if (!st) st = fpsim_h5_write(f.id, "f64_rank3", FPSIM_H5_F64, 3, d3, f64, 1);
    if (!st) st = fpsim_h5_write(f.id, "u8", FPSIM_H5_U8, 1, d1, u8, 0);
    if (!st) st = fpsim_h5_write(f.id, "i64", FPSIM_H5_I64, 1, d1b, i64, 0);
    if (!st) st = fpsim_h5_write(f.id, "u64", FPSIM_H5_U64, 1, d1c, u64, 9);
    if (!st) st = fpsim_h5_write(f.id, "i32_scalar", FPSIM_H5_I32, 0, NULL, &i32, 0);
    if (!st) st = fpsim_h5_write(f.id, "empty", FPSIM_H5_F32, 2, d0, NULL, 4);
    hid_t g;
    if (!st) st = fpsim_h5_group_create(&g, f.id, "layers/0");
    const char *names[] = {"fprop", "dgrad", "wgrad", "ünïcode"};
    double dv[3] = {1.5, -0.0, 1e-310};
    int64_t iv[2] = {-7, 1ll << 40};
    if (!st) {
        st = fpsim_h5_attr_strings(g, "passes", names, 4);
        if (!st) st = fpsim_h5_attr_doubles(g, "dv", dv, 3);
        if (!st) st = fpsim_h5_attr_int64s(g, "iv", iv, 2);
        if (!st) st = fpsim_h5_write(g, "x", FPSIM_H5_U8, 1, d1, u8, 0);
        H5Gclose(g);
    }
    if (!st) st = fpsim_h5_attr_string(f.id, "scheme", "nvfp4:chain=te");
    if (!st) st = fpsim_h5_attr_string(f.id, "scheme", "replaced"); /* replace, not fail */
    if (!st) st = fpsim_h5_attr_double(f.id, "sqnr_db", 19.25);
    if (!st) st = fpsim_h5_attr_int64(f.id, "block", -16);
    if (!st) st = fpsim_h5_attr_uint64(f.id, "big", UINT64_MAX);
    if (!st) st = fpsim_h5_write_provenance(f.id, "fpsim quantize --x 'a b'", 42);
    TEST_CHECK(&tc, st == FPSIM_OK, "writes: %s", fpsim_last_error());
    char tmp[4096];
    strcpy(tmp, f.tmp);
    st = fpsim_h5_commit(&f);
    TEST_CHECK(&tc, st == FPSIM_OK, "commit: %s", fpsim_last_error());
    TEST_CHECK(&tc, stat(tmp, &sb) != 0, "temporary %s must be gone after commit", tmp);

    /* Read back with the plain C API. */
    hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    TEST_CHECK(&tc, h >= 0, "reopen %s", path);
    if (h < 0) return;
    int rank;
    hsize_t dims[8];
    const char *fnames[] = {"f32", "f32_gzip"};
    for (int k = 0; k < 2; k++) {
        float *back = raw_read(h, fnames[k], H5T_NATIVE_FLOAT, 4, &rank, dims);
        TEST_CHECK(&tc, back && rank == 2 && dims[0] == R && dims[1] == C, "%s shape", fnames[k]);
        if (back) {
            TEST_CHECK(&tc, !memcmp(back, f32, R * C * 4), "%s bits differ", fnames[k]);
            free(back);
        }
    }
    TEST_CHECK(&tc, !is_filtered(h, "f32") && is_filtered(h, "f32_gzip"), "%s", "gzip only where asked");
    double *b64 = raw_read(h, "f64_rank3", H5T_NATIVE_DOUBLE, 8, &rank, dims);
    TEST_CHECK(&tc, b64 && rank == 3 && dims[0] == 2 && dims[1] == 3 && dims[2] == 5 && !memcmp(b64, f64, sizeof f64),
               "%s", "f64 rank 3");
    free(b64);
    uint8_t *b8 = raw_read(h, "u8", H5T_NATIVE_UINT8, 1, &rank, dims);
    TEST_CHECK(&tc, b8 && rank == 1 && dims[0] == 5 && !memcmp(b8, u8, 5), "%s", "u8");
    free(b8);
    int64_t *bi = raw_read(h, "i64", H5T_NATIVE_INT64, 8, &rank, dims);
    TEST_CHECK(&tc, bi && !memcmp(bi, i64, sizeof i64), "%s", "i64");
    free(bi);
    uint64_t *bu = raw_read(h, "u64", H5T_NATIVE_UINT64, 8, &rank, dims);
    TEST_CHECK(&tc, bu && !memcmp(bu, u64, sizeof u64), "%s", "u64");
    free(bu);
    int32_t *bs = raw_read(h, "i32_scalar", H5T_NATIVE_INT32, 4, &rank, dims);
    TEST_CHECK(&tc, bs && rank == 0 && *bs == i32, "%s", "scalar i32");
    free(bs);
    float *be = raw_read(h, "empty", H5T_NATIVE_FLOAT, 4, &rank, dims);
    TEST_CHECK(&tc, rank == 2 && dims[0] == 0 && dims[1] == 4, "%s", "empty dataset shape");
    free(be);

    /* Attributes through the C API. */
    hid_t a = H5Aopen_by_name(h, "layers/0", "passes", H5P_DEFAULT, H5P_DEFAULT);
    TEST_CHECK(&tc, a >= 0, "%s", "string-array attribute exists");
    if (a >= 0) {
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, H5T_VARIABLE);
        H5Tset_cset(t, H5T_CSET_UTF8);
        char *got[4] = {0};
        hid_t sp = H5Aget_space(a);
        TEST_CHECK(&tc, H5Sget_simple_extent_npoints(sp) == 4, "%s", "4 names");
        H5Sclose(sp);
        TEST_CHECK(&tc, H5Aread(a, t, got) >= 0, "%s", "read names");
        for (int i = 0; i < 4; i++) {
            TEST_CHECK(&tc, got[i] && !strcmp(got[i], names[i]), "name %d", i);
            H5free_memory(got[i]);
        }
        H5Tclose(t);
        H5Aclose(a);
    }
    double dback[3];
    a = H5Aopen_by_name(h, "layers/0", "dv", H5P_DEFAULT, H5P_DEFAULT);
    TEST_CHECK(&tc, a >= 0 && H5Aread(a, H5T_NATIVE_DOUBLE, dback) >= 0 && !memcmp(dback, dv, sizeof dv), "%s", "doubles");
    if (a >= 0) H5Aclose(a);
    int64_t iback[2];
    a = H5Aopen_by_name(h, "layers/0", "iv", H5P_DEFAULT, H5P_DEFAULT);
    TEST_CHECK(&tc, a >= 0 && H5Aread(a, H5T_NATIVE_INT64, iback) >= 0 && !memcmp(iback, iv, sizeof iv), "%s", "int64s");
    if (a >= 0) H5Aclose(a);
    uint64_t big = 0;
    a = H5Aopen(h, "big", H5P_DEFAULT);
    TEST_CHECK(&tc, a >= 0 && H5Aread(a, H5T_NATIVE_UINT64, &big) >= 0 && big == UINT64_MAX, "%s", "uint64 attr");
    if (a >= 0) H5Aclose(a);

    /* And through the helpers' readers. */
    char s[256];
    TEST_CHECK(&tc, fpsim_h5_read_attr_string(h, ".", "scheme", s, sizeof s) == FPSIM_OK && !strcmp(s, "replaced"),
               "scheme attr '%s'", s);
    TEST_CHECK(&tc, fpsim_h5_read_attr_string(h, ".", "command_line", s, sizeof s) == FPSIM_OK &&
                        !strcmp(s, "fpsim quantize --x 'a b'"), "command_line '%s'", s);
    TEST_CHECK(&tc, fpsim_h5_read_attr_string(h, ".", "fpsim_version", s, sizeof s) == FPSIM_OK && s[0],
               "%s", "fpsim_version");
    TEST_CHECK(&tc, fpsim_h5_read_attr_string(h, ".", "git_commit", s, sizeof s) == FPSIM_OK && s[0], "%s", "git_commit");
    TEST_CHECK(&tc, fpsim_h5_read_attr_string(h, ".", "date", s, sizeof s) == FPSIM_OK && strlen(s) == 20 && s[10] == 'T' &&
                        s[19] == 'Z', "date '%s'", s);
    int64_t seed_back = 0, blk = 0;
    double sq = 0;
    TEST_CHECK(&tc, fpsim_h5_read_attr_int64(h, ".", "seed", &seed_back) == FPSIM_OK && seed_back == 42, "%s", "seed");
    TEST_CHECK(&tc, fpsim_h5_read_attr_int64(h, ".", "block", &blk) == FPSIM_OK && blk == -16, "%s", "int64 attr");
    TEST_CHECK(&tc, fpsim_h5_read_attr_double(h, ".", "sqnr_db", &sq) == FPSIM_OK && sq == 19.25, "%s", "double attr");
    TEST_CHECK(&tc, fpsim_h5_read_attr_double(h, ".", "nope", &sq) == FPSIM_EFORMAT, "%s", "missing attr");
    TEST_CHECK(&tc, fpsim_h5_read_attr_double(h, ".", "scheme", &sq) == FPSIM_EFORMAT, "%s", "string attr as number");
    H5Fclose(h);
    free(f32);
}

static void test_discard(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/discarded.h5", dir);
    fpsim_h5_file f;
    TEST_CHECK(&tc, fpsim_h5_create(&f, path) == FPSIM_OK, "create: %s", fpsim_last_error());
    size_t d[1] = {3};
    uint8_t v[3] = {1, 2, 3};
    fpsim_h5_write(f.id, "v", FPSIM_H5_U8, 1, d, v, 0);
    /* The same name twice is an error, not a crash, and prints nothing. */
    TEST_CHECK(&tc, fpsim_h5_write(f.id, "v", FPSIM_H5_U8, 1, d, v, 0) != FPSIM_OK, "%s", "duplicate dataset");
    TEST_CHECK(&tc, fpsim_h5_write(f.id, "w", FPSIM_H5_BF16, 1, d, v, 0) == FPSIM_EINVAL, "%s", "bf16 not writable");
    fpsim_h5_discard(&f);
    fpsim_h5_discard(&f); /* twice is safe */
    TEST_CHECK(&tc, io_dir_entries(dir, "discarded") == 0, "%s", "discard leaves no file");

    snprintf(path, sizeof path, "%s/no/such/dir/x.h5", dir);
    TEST_CHECK(&tc, fpsim_h5_create(&f, path) == FPSIM_EIO, "%s", "unwritable path");
    TEST_CHECK(&tc, strstr(fpsim_last_error(), "no/such/dir") != NULL, "message names the path: %s", fpsim_last_error());
    fpsim_h5_discard(&f);
}

/* Files for the reader, made with the plain C API. */
static void make_inputs(const char *path)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t d2[2] = {2, 3}, d3[3] = {2, 2, 2};
    hid_t s2 = H5Screate_simple(2, d2, NULL), s3 = H5Screate_simple(3, d3, NULL);
    float v32[6] = {1.0f, -2.5f, 0.0f, 3e-45f, 65504.0f, -0.0f};
    v32[2] = test_f32_from_bits(0x7FC00001u); /* NaN is valid input */
    double v64[6] = {1.0 / 3.0, -1e300, 0, 5e-324, 2, 3};
    uint16_t vbf[6] = {0x3F80, 0xC020, 0x7FC0, 0x0001, 0xFF80, 0x8000};
    int32_t vi[6] = {1, 2, 3, 4, 5, 6};
    hid_t d = H5Dcreate2(f, "x32", H5T_IEEE_F32BE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT); /* big-endian file */
    H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v32);
    H5Dclose(d);
    d = H5Dcreate2(f, "x64", H5T_IEEE_F64LE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v64);
    H5Dclose(d);
    /* bfloat16 as an HDF5 float type: 16 bits, sign 15, exponent 7..14, mantissa 0..6, bias 127. */
    hid_t bf = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(bf, 15, 7, 8, 0, 7);
    H5Tset_size(bf, 2);
    H5Tset_ebias(bf, 127);
    d = H5Dcreate2(f, "xbf16", bf, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, bf, H5S_ALL, H5S_ALL, H5P_DEFAULT, vbf); /* same type in memory: bits as given */
    H5Dclose(d);
    H5Tclose(bf);
    d = H5Dcreate2(f, "xbf16_u16", H5T_STD_U16LE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, vbf);
    fpsim_h5_attr_string(d, "dtype", "bfloat16");
    H5Dclose(d);
    d = H5Dcreate2(f, "u16_untagged", H5T_STD_U16LE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_UINT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, vbf);
    H5Dclose(d);
    hid_t h16 = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(h16, 15, 10, 5, 0, 10);
    H5Tset_size(h16, 2);
    H5Tset_ebias(h16, 15);
    d = H5Dcreate2(f, "half", h16, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(d);
    H5Tclose(h16);
    d = H5Dcreate2(f, "ints", H5T_STD_I32LE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, vi);
    H5Dclose(d);
    d = H5Dcreate2(f, "cube", H5T_IEEE_F32LE, s3, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(d);
    hid_t g = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(g);
    H5Sclose(s2);
    H5Sclose(s3);
    H5Fclose(f);
}

static void expect_error(const char *path, const char *ds, fpsim_status want, const char *needle)
{
    fpsim_h5_matrix m;
    fpsim_clear_error();
    fpsim_status st = fpsim_h5_read_matrix(&m, path, ds);
    TEST_CHECK(&tc, st == want, "read '%s': status %d, want %d (%s)", ds, (int)st, (int)want, fpsim_last_error());
    TEST_CHECK(&tc, strstr(fpsim_last_error(), needle) != NULL, "message for '%s' should mention '%s': %s", ds,
               needle, fpsim_last_error());
    TEST_CHECK(&tc, strchr(fpsim_last_error(), '\n') == NULL, "one line: %s", fpsim_last_error());
    if (st == FPSIM_OK) free(m.data);
}

static void test_read_matrix(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/inputs.h5", dir);
    make_inputs(path);

    fpsim_h5_matrix m;
    fpsim_status st = fpsim_h5_read_matrix(&m, path, "x32");
    TEST_CHECK(&tc, st == FPSIM_OK && m.type == FPSIM_H5_F32 && m.rows == 2 && m.cols == 3, "x32: %s", fpsim_last_error());
    if (!st) {
        const uint32_t want[6] = {0x3F800000u, 0xC0200000u, 0x7FC00001u, test_f32_bits(3e-45f), 0x477FE000u, 0x80000000u};
        for (int i = 0; i < 6; i++) TEST_CHECK_EQ_HEX(&tc, test_f32_bits(((float *)m.data)[i]), want[i], "x32[%d]", i);
        free(m.data);
    }
    st = fpsim_h5_read_matrix(&m, path, "x64");
    TEST_CHECK(&tc, st == FPSIM_OK && m.type == FPSIM_H5_F64, "x64: %s", fpsim_last_error());
    if (!st) {
        TEST_CHECK(&tc, ((double *)m.data)[0] == 1.0 / 3.0 && ((double *)m.data)[3] == 5e-324, "%s", "x64 values");
        free(m.data);
    }
    const uint16_t vbf[6] = {0x3F80, 0xC020, 0x7FC0, 0x0001, 0xFF80, 0x8000};
    const char *bfs[] = {"xbf16", "xbf16_u16"};
    for (int k = 0; k < 2; k++) {
        st = fpsim_h5_read_matrix(&m, path, bfs[k]);
        TEST_CHECK(&tc, st == FPSIM_OK && m.type == FPSIM_H5_BF16, "%s: %s", bfs[k], fpsim_last_error());
        if (!st) {
            for (int i = 0; i < 6; i++) TEST_CHECK_EQ_HEX(&tc, ((uint16_t *)m.data)[i], vbf[i], "%s[%d]", bfs[k], i);
            free(m.data);
        }
    }
    expect_error(path, "missing", FPSIM_EFORMAT, "x32"); /* lists what the file holds */
    expect_error(path, "cube", FPSIM_ESHAPE, "rank 3");
    expect_error(path, "ints", FPSIM_EFORMAT, "int32");
    expect_error(path, "u16_untagged", FPSIM_EFORMAT, "uint16");
    expect_error(path, "half", FPSIM_EFORMAT, "float16");
    expect_error(path, "grp", FPSIM_EFORMAT, "not a dataset");

    /* Not HDF5; truncated HDF5; missing file. */
    char other[1024];
    snprintf(other, sizeof other, "%s/not_hdf5.h5", dir);
    FILE *t = fopen(other, "wb");
    fputs("just some text, not an HDF5 file at all\n", t);
    fclose(t);
    expect_error(other, "x", FPSIM_EFORMAT, "not an HDF5 file");
    snprintf(other, sizeof other, "%s/truncated.h5", dir);
    TEST_CHECK(&tc, io_copy_prefix(path, other, 0.5) == 0, "%s", "make truncated copy");
    fpsim_h5_matrix mt;
    st = fpsim_h5_read_matrix(&mt, other, "x32");
    TEST_CHECK(&tc, st == FPSIM_EFORMAT, "truncated file: status %d (%s)", (int)st, fpsim_last_error());
    if (st == FPSIM_OK) free(mt.data);
    snprintf(other, sizeof other, "%s/absent.h5", dir);
    expect_error(other, "x", FPSIM_EIO, "absent.h5");
}

/* String attributes written by other tools: a null-padded fixed-length string keeps its last
 * character; an array of strings (fixed or variable length) and a string too long for the
 * buffer are errors, not overruns or truncations. */
static void put_fixed(hid_t f, const char *name, const char *text, H5T_str_t pad, hsize_t count)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(text));
    H5Tset_strpad(t, pad);
    hid_t s = count ? H5Screate_simple(1, &count, NULL) : H5Screate(H5S_SCALAR);
    char buf[64 * 8] = {0};
    for (hsize_t i = 0; i < (count ? count : 1); i++) memcpy(buf + i * strlen(text), text, strlen(text));
    hid_t a = H5Acreate2(f, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, t, buf);
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
}

static void test_string_attributes(const char *dir)
{
    char path[512], s[64];
    snprintf(path, sizeof path, "%s/attrs.h5", dir);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    put_fixed(f, "nullpad", "seed=17", H5T_STR_NULLPAD, 0);
    put_fixed(f, "nullterm", "seed=17", H5T_STR_NULLTERM, 0);
    put_fixed(f, "fixed_array", "abcdefgh", H5T_STR_NULLPAD, 8);
    hid_t vt = H5Tcopy(H5T_C_S1);
    H5Tset_size(vt, H5T_VARIABLE);
    hsize_t n = 3;
    hid_t vs = H5Screate_simple(1, &n, NULL);
    const char *words[3] = {"one", "two", "three"};
    hid_t a = H5Acreate2(f, "vlen_array", vt, vs, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, vt, words);
    H5Aclose(a);
    H5Sclose(vs);
    H5Tclose(vt);
    H5Fclose(f);

    hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    TEST_CHECK(&tc, fpsim_h5_read_attr_string(h, ".", "nullpad", s, sizeof s) == FPSIM_OK && !strcmp(s, "seed=17"),
               "null-padded string read as '%s'", s);
    /* written as 7 bytes with no terminator: all 7 come back, as h5py reads them */
    TEST_CHECK(&tc, fpsim_h5_read_attr_string(h, ".", "nullterm", s, sizeof s) == FPSIM_OK && !strcmp(s, "seed=17"),
               "null-terminated string read as '%s'", s);
    fpsim_status st = fpsim_h5_read_attr_string(h, ".", "fixed_array", s, sizeof s);
    TEST_CHECK(&tc, st == FPSIM_EFORMAT && strstr(fpsim_last_error(), "not a single string"),
               "fixed-length string array: status %d (%s)", (int)st, fpsim_last_error());
    st = fpsim_h5_read_attr_string(h, ".", "vlen_array", s, sizeof s);
    TEST_CHECK(&tc, st == FPSIM_EFORMAT && strstr(fpsim_last_error(), "not a single string"),
               "variable-length string array: status %d (%s)", (int)st, fpsim_last_error());
    char small[4];
    st = fpsim_h5_read_attr_string(h, ".", "nullpad", small, sizeof small);
    TEST_CHECK(&tc, st == FPSIM_EFORMAT && strstr(fpsim_last_error(), "longer than 3"),
               "string longer than the buffer: status %d (%s)", (int)st, fpsim_last_error());
    H5Fclose(h);
}

int main(void)
{
    char dir[256];
    if (io_make_temp_dir(dir, sizeof dir, "test_h5")) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    test_roundtrip(dir);
    test_discard(dir);
    test_read_matrix(dir);
    test_string_attributes(dir);
    io_remove_dir(dir);
    return test_summary(&tc);
}
