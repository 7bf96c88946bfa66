/* test_core_npy.c: fpsim's .npy reader/writer (sim/npy.c) against the NumPy format description
 * (numpy/lib/format.py): headers written here byte by byte from that description are read back,
 * files fpsim writes have exactly the documented layout, and malformed files are refused with
 * the right status instead of crashing. Runs in a temporary directory. (The .npy code is used by
 * `fpsim convert` and the other commands that read or write arrays.) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

/* The tests in tests/formats link only the formats library; the .npy reader and the temp+rename
 * helper (sim/npy.c, sim/file.c) depend on nothing but libc, so they are compiled in here. */
#include "../../sim/file.c"
#include "../../sim/npy.c"

static test_counter tc = TEST_COUNTER_INIT("npy reader/writer");
static char dir[64];

static const char *path_of(const char *name)
{
    static char buf[160];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

/* Write a .npy file by hand: magic, version, header length, header text padded with spaces to
 * a multiple of 64 (v1) and a newline, then `data_bytes` bytes of data. */
static size_t write_by_hand(const char *name, int major, const char *dict, const void *data, size_t data_bytes)
{
    FILE *f = fopen(path_of(name), "wb");
    const size_t fixed = major == 1 ? 10 : 12;
    size_t hlen = strlen(dict) + 1;
    hlen += (64 - (fixed + hlen) % 64) % 64;
    unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, 0,
                             (unsigned char)hlen, (unsigned char)(hlen >> 8), 0, 0};
    fwrite(pre, 1, fixed, f);
    fputs(dict, f);
    for (size_t i = strlen(dict) + 1; i < hlen; i++)
        fputc(' ', f);
    fputc('\n', f);
    if (data_bytes)
        fwrite(data, 1, data_bytes, f);
    fclose(f);
    return fixed + hlen; /* where the data starts */
}

static void check_status(const char *name, fpsim_status want)
{
    fpsim_npy_info info;
    void *data = NULL;
    const fpsim_status st = fpsim_npy_load(path_of(name), &info, &data);
    TEST_CHECK(&tc, st == want, "%s: status %d, want %d (%s)", name, (int)st, (int)want, fpsim_last_error());
    free(data);
}

static void hand_written_files(void)
{
    const float f[6] = {1, 2, 3, 4, 5, 6};
    const size_t off_a =
        write_by_hand("a.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f, sizeof f);
    fpsim_npy_info info;
    void *data = NULL;
    TEST_CHECK(&tc, fpsim_npy_load(path_of("a.npy"), &info, &data) == FPSIM_OK, "%s", fpsim_last_error());
    TEST_CHECK(&tc, info.dtype == FPSIM_NPY_F32 && info.ndim == 2 && info.shape[0] == 2 && info.shape[1] == 3 &&
                        info.count == 6 && info.data_offset == off_a,
               "a.npy: dtype %d ndim %d count %zu offset %zu", (int)info.dtype, info.ndim, info.count,
               info.data_offset);
    TEST_CHECK(&tc, data && !memcmp(data, f, sizeof f), "%s", "a.npy data");
    free(data);

    /* version 2 header, double quotes, no trailing comma, a scalar */
    const double d = 0.5;
    const size_t off_b =
        write_by_hand("b.npy", 2, "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": ()}", &d, sizeof d);
    data = NULL;
    TEST_CHECK(&tc, fpsim_npy_load(path_of("b.npy"), &info, &data) == FPSIM_OK, "%s", fpsim_last_error());
    TEST_CHECK(&tc, info.dtype == FPSIM_NPY_F64 && info.ndim == 0 && info.count == 1 && info.data_offset == off_b,
               "b.npy: dtype %d ndim %d", (int)info.dtype, info.ndim);
    free(data);

    /* ml_dtypes bfloat16 and float8 arrays */
    const uint16_t h[3] = {0x3F80, 0x4000, 0xBF80};
    write_by_hand("c.npy", 1, "{'descr': '<V2', 'fortran_order': False, 'shape': (3,), }", h, sizeof h);
    data = NULL;
    TEST_CHECK(&tc, fpsim_npy_load(path_of("c.npy"), &info, &data) == FPSIM_OK && info.dtype == FPSIM_NPY_V2 &&
                        info.elem_size == 2,
               "%s", "c.npy <V2");
    free(data);

    write_by_hand("d.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f, sizeof f - 4);
    check_status("d.npy", FPSIM_EFORMAT); /* truncated data */
    write_by_hand("e.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", f, sizeof f);
    check_status("e.npy", FPSIM_EFORMAT); /* trailing bytes */
    write_by_hand("f.npy", 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f, sizeof f);
    check_status("f.npy", FPSIM_EUNSUPPORTED);
    write_by_hand("g.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }", f, sizeof f);
    check_status("g.npy", FPSIM_EUNSUPPORTED);
    write_by_hand("h.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }", f, sizeof f);
    check_status("h.npy", FPSIM_EFORMAT);
    write_by_hand("i.npy", 1, "{'fortran_order': False, 'shape': (6,), }", f, sizeof f);
    check_status("i.npy", FPSIM_EFORMAT);
    FILE *fp = fopen(path_of("j.npy"), "wb");
    fputs("\x93NUMPX\x01\x00", fp);
    fclose(fp);
    check_status("j.npy", FPSIM_EFORMAT); /* bad magic */
    fp = fopen(path_of("k.npy"), "wb");
    fwrite("\x93NUMPY\x01\x00\x40\x00{'descr'", 1, 18, fp);
    fclose(fp);
    check_status("k.npy", FPSIM_EFORMAT); /* header cut short */
    check_status("missing.npy", FPSIM_EIO);
}

static void written_files(void)
{
    /* Layout of what fpsim writes: v1, 128-byte header for 1-D and 2-D, data right after. */
    const uint8_t codes[5] = {1, 2, 3, 4, 5};
    const size_t shape[1] = {5};
    TEST_CHECK(&tc, fpsim_npy_save(path_of("w.npy"), FPSIM_NPY_U8, 1, shape, codes) == FPSIM_OK, "%s",
               fpsim_last_error());
    unsigned char buf[256];
    FILE *f = fopen(path_of("w.npy"), "rb");
    const size_t got = fread(buf, 1, sizeof buf, f);
    fclose(f);
    const char *want = "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }";
    TEST_CHECK(&tc, got == 128 + 5, "w.npy is %zu bytes", got);
    TEST_CHECK(&tc, !memcmp(buf, "\x93NUMPY\x01\x00", 8) && buf[8] == 118 && buf[9] == 0, "%s", "w.npy preamble");
    TEST_CHECK(&tc, !memcmp(buf + 10, want, strlen(want)) && buf[127] == '\n', "%s", "w.npy header text");
    TEST_CHECK(&tc, got == 133 && !memcmp(buf + 128, codes, 5), "%s", "w.npy data");

    /* Round trip of a 3-D array of every writable dtype. */
    const size_t shape3[3] = {2, 1, 3};
    const uint16_t v[6] = {1, 2, 3, 4, 5, 0xFFFF};
    for (int dt = 0; dt < FPSIM_NPY_DTYPE_COUNT; dt++) {
        unsigned char src[48];
        for (size_t i = 0; i < sizeof src; i++)
            src[i] = (unsigned char)(i * 7 + (size_t)dt);
        if (dt == FPSIM_NPY_U16)
            memcpy(src, v, sizeof v);
        TEST_CHECK(&tc, fpsim_npy_save(path_of("r.npy"), (fpsim_npy_dtype)dt, 3, shape3, src) == FPSIM_OK, "dtype %d",
                   dt);
        fpsim_npy_info info;
        void *data = NULL;
        TEST_CHECK(&tc, fpsim_npy_load(path_of("r.npy"), &info, &data) == FPSIM_OK, "reload dtype %d: %s", dt,
                   fpsim_last_error());
        TEST_CHECK(&tc, (int)info.dtype == dt && info.ndim == 3 && info.shape[0] == 2 && info.shape[1] == 1 &&
                            info.shape[2] == 3 && data && !memcmp(data, src, 6 * info.elem_size),
                   "round trip dtype %d", dt);
        free(data);
    }
    /* No temporary file is left behind. */
    char tmp[256];
    TEST_CHECK(&tc, fpsim_file_temp_name(tmp, sizeof tmp, path_of("r.npy")) == FPSIM_OK, "%s", "temp name");
    TEST_CHECK(&tc, access(tmp, F_OK) != 0, "temporary %s left behind", tmp);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/fpsim_test_npy.XXXXXX");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    hand_written_files();
    written_files();
    const int rc = test_summary(&tc);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", dir);
    return rc;
}
