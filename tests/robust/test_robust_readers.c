/* test_robust_readers.c: mutation test of the file readers users feed fpsim (sim/npy.c,
 * sim/tensor_io.c, sim/h5_read.c).
 *
 * Valid .npy (float32, float64, ml_dtypes-style bf16 '<V2', 1-D uint8) and HDF5 files are
 * written, then damaged in a loop with a fixed seed: truncated at a random length, random bytes
 * flipped (half the time inside the header, where the parser lives), or both. Every damaged file
 * is read with fpsim_npy_load and fpsim_tensor_read. Checked for each read: no crash (ASan/UBSan
 * builds turn any memory error into a failure), and either success with a consistent result
 * (data present, shape and count agree) or an error status with a one-line message and no memory
 * handed back; every HDF5 object opened is closed again. The loop is bounded by an iteration
 * count and by a few seconds of wall clock.
 *
 * Triage by hand: FPSIM_ROBUST_KEEP=DIR writes the damaged files into DIR (kept) and prints how
 * each was damaged (the last one printed before a crash is the culprit); FPSIM_ROBUST_H5_ITERS=N
 * runs a longer HDF5 campaign, FPSIM_ROBUST_SEED=S another sequence of mutants. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_h5.h"
#include "fpsim_npy.h"
#include "fpsim_tensor_io.h"
#include "io/io_test_util.h"
#include "test_util.h"

/* A damaged HDF5 header may claim any dataset size; the reader then asks malloc for it and
 * reports FPSIM_ENOMEM when refused. ASan's allocator aborts on such requests unless told to
 * return NULL like the C library does. (Unused in builds without ASan.) */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
/* HDF5 1.10.8 itself leaks a few bytes when H5Fopen fails on a damaged superblock (fpsim holds
 * no handle to free them: sim/h5_file.c); LeakSanitizer is told that these are HDF5's. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libhdf5\n"; }

enum { NPY_ITERS = 1500, H5_ITERS = 300 };
static double time_cap_s = 8.0; /* per file kind; the counts normally finish first */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) /* xorshift64*: a fixed sequence, the same on every run */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static size_t rng_below(size_t n) { return n ? (size_t)(rng_next() % n) : 0; }

typedef struct blob {
    unsigned char *bytes;
    size_t size;
    size_t header; /* bytes worth aiming at (the .npy header; the HDF5 superblock and metadata) */
} blob;

static int blob_load(blob *b, const char *path, size_t header)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b->bytes = malloc(n > 0 ? (size_t)n : 1);
    b->size = b->bytes && n > 0 && fread(b->bytes, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
    fclose(f);
    b->header = header < b->size ? header : b->size;
    return b->size ? 0 : -1;
}

/* Write a damaged copy of `b` to `path`; `what` describes the damage (for failure messages). */
static void write_mutant(const blob *b, const char *path, char *what, size_t cap)
{
    unsigned char *m = malloc(b->size);
    memcpy(m, b->bytes, b->size);
    size_t size = b->size;
    const unsigned kind = (unsigned)rng_below(3); /* 0 truncate, 1 flip, 2 both */
    int len = snprintf(what, cap, "%s", kind == 0 ? "truncate" : kind == 1 ? "flip" : "flip+truncate");
    if (kind >= 1) {
        const size_t flips = 1 + rng_below(8);
        for (size_t k = 0; k < flips; k++) {
            const size_t at = rng_below(2) ? rng_below(b->header) : rng_below(size);
            const unsigned char x = (unsigned char)(rng_below(2) ? 1u << rng_below(8) : 1 + rng_below(255));
            m[at] ^= x;
            if (len > 0 && (size_t)len < cap) len += snprintf(what + len, cap - (size_t)len, " @%zu^%02x", at, x);
        }
    }
    if (kind != 1) {
        size = rng_below(2) ? rng_below(b->header + 1) : rng_below(b->size);
        if (len > 0 && (size_t)len < cap) snprintf(what + len, cap - (size_t)len, " to %zu bytes", size);
    }
    io_write_bytes(path, m, size);
    free(m);
}

/* An error must come with a one-line message. */
static void check_error_message(test_counter *tc, fpsim_status st, const char *reader, const char *what)
{
    const char *msg = fpsim_last_error();
    TEST_CHECK(tc, msg && *msg && !strchr(msg, '\n'), "%s: status %d without a one-line message (%s)", reader,
               (int)st, what);
}

static void read_npy_mutant(test_counter *tc, const char *path, const char *what)
{
    fpsim_npy_info info;
    void *data = (void *)&info; /* must be reset by the reader */
    fpsim_status st = fpsim_npy_load(path, &info, &data);
    tc->checks++;
    if (st == FPSIM_OK) {
        size_t count = 1;
        for (int d = 0; d < info.ndim; d++) count *= info.shape[d];
        TEST_CHECK(tc, count == info.count && (data != NULL) == (count > 0) &&
                           info.elem_size == fpsim_npy_dtype_size(info.dtype),
                   "npy_load accepted an inconsistent result (%s)", what);
    } else {
        check_error_message(tc, st, "npy_load", what);
        TEST_CHECK(tc, data == NULL, "npy_load failed but handed back memory (%s)", what);
    }
    free(data == (void *)&info ? NULL : data);
}

static void read_tensor_mutant(test_counter *tc, const char *path, const char *dtype, const char *what)
{
    fpsim_tensor_source src;
    memset(&src, 0, sizeof src);
    src.path = path;
    src.dtype = dtype;
    fpsim_tensor2d t;
    fpsim_status st = fpsim_tensor_read(&t, &src);
    tc->checks++;
    if (st == FPSIM_OK) {
        const int has = t.dtype == FPSIM_TENSOR_BF16 ? t.bf16 != NULL : t.f32 != NULL;
        TEST_CHECK(tc, t.rows > 0 && t.cols > 0 && has, "tensor_read accepted an empty or dataless tensor (%s)",
                   what);
    } else {
        check_error_message(tc, st, "tensor_read", what);
        TEST_CHECK(tc, t.f32 == NULL && t.bf16 == NULL, "tensor_read failed but holds memory (%s)", what);
    }
    fpsim_tensor2d_free(&t);
}

/* HDF5 objects still open in any file (files, groups, datasets, attributes, named types). */
static ssize_t h5_open_ids(void) { return H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL); }

/* Damage each base file `iters` times in turn (or until the time cap), reading every mutant.
 * Each mutant gets a file of its own, kept until the end (in `dir`, or FPSIM_ROBUST_KEEP's
 * directory): HDF5 1.10.8 keeps a little state of a file whose H5Fopen failed, matched to later
 * files by device and inode, so a reused inode would mix two damaged files in one process
 * (fpsim reads one input per process; the test must not do otherwise). */
static void mutate_loop(test_counter *tc, blob *bases, const char *const *dtypes, int nbases, int iters,
                        const char *dir, const char *tag, int npy)
{
    const double t0 = test_seconds();
    const ssize_t ids0 = h5_open_ids();
    const char *keep = getenv("FPSIM_ROBUST_KEEP");
    int i = 0;
    char what[256], mutant[1300];
    for (; i < iters && test_seconds() - t0 < time_cap_s; i++) {
        const int k = i % nbases;
        snprintf(mutant, sizeof mutant, "%s/%s.%d", keep ? keep : dir, tag, i);
        write_mutant(&bases[k], mutant, what, sizeof what);
        if (keep) fprintf(stderr, "%s: %s\n", mutant, what); /* the last one before a crash is the culprit */
        if (npy) read_npy_mutant(tc, mutant, what);
        read_tensor_mutant(tc, mutant, dtypes[k], what);
        /* Every HDF5 object the reader opened is closed again, on every path. */
        const ssize_t open_ids = h5_open_ids();
        TEST_CHECK(tc, open_ids == ids0, "%zd HDF5 objects left open after reading a mutant (%s)", open_ids, what);
    }
    printf("     [%s] %d damaged files read in %.1f s\n", tc->name, i, test_seconds() - t0);
}

int main(void)
{
    char dir[1024], path[1200];
    if (io_make_temp_dir(dir, sizeof dir, "robust")) {
        fprintf(stderr, "cannot create a scratch directory\n");
        return 1;
    }
    int rc = 0;

    /* ---- .npy ---- */
    static test_counter npy_tc = TEST_COUNTER_INIT("npy mutations");
    float f32[6 * 8];
    double f64[3 * 5];
    uint16_t bf16[4 * 4];
    uint8_t u8[11];
    for (int i = 0; i < 48; i++) f32[i] = (float)i * 0.25f - 3.0f;
    for (int i = 0; i < 15; i++) f64[i] = (double)i * 1e-3;
    for (int i = 0; i < 16; i++) bf16[i] = (uint16_t)(0x3F80 + i);
    for (int i = 0; i < 11; i++) u8[i] = (uint8_t)i;
    const struct {
        const char *name;
        fpsim_npy_dtype dtype;
        int ndim;
        size_t shape[2];
        const void *data;
        const char *tensor_dtype; /* what a user passes as --dtype for it */
    } npy_bases[] = {
        {"f32.npy", FPSIM_NPY_F32, 2, {6, 8}, f32, NULL},
        {"f64.npy", FPSIM_NPY_F64, 2, {3, 5}, f64, NULL},
        {"bf16.npy", FPSIM_NPY_V2, 2, {4, 4}, bf16, "bf16"},
        {"u8.npy", FPSIM_NPY_U8, 1, {11, 0}, u8, NULL},
    };
    enum { NPY_BASES = sizeof npy_bases / sizeof npy_bases[0] };
    blob npy_blobs[NPY_BASES];
    const char *npy_dtypes[NPY_BASES];
    for (int k = 0; k < NPY_BASES; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, npy_bases[k].name);
        fpsim_status st = fpsim_npy_save(path, npy_bases[k].dtype, npy_bases[k].ndim, npy_bases[k].shape,
                                         npy_bases[k].data);
        const size_t header = fpsim_npy_header_bytes(npy_bases[k].dtype, npy_bases[k].ndim, npy_bases[k].shape);
        if (st || blob_load(&npy_blobs[k], path, header)) {
            fprintf(stderr, "cannot write the base file %s: %s\n", path, fpsim_last_error());
            io_remove_dir(dir);
            return 1;
        }
        npy_dtypes[k] = npy_bases[k].tensor_dtype;
        /* The undamaged file reads back (so the mutants start from something valid). */
        fpsim_npy_info info;
        void *data = NULL;
        st = fpsim_npy_load(path, &info, &data);
        TEST_CHECK(&npy_tc, st == FPSIM_OK && info.count == (npy_bases[k].ndim == 2 ? npy_bases[k].shape[0] *
                                                                                          npy_bases[k].shape[1]
                                                                                    : npy_bases[k].shape[0]),
                   "undamaged %s: %s", npy_bases[k].name, st ? fpsim_last_error() : "wrong count");
        free(data);
    }
    mutate_loop(&npy_tc, npy_blobs, npy_dtypes, NPY_BASES, NPY_ITERS, dir, "npy_mutant", 1);
    rc |= test_summary(&npy_tc);

    /* ---- HDF5 ---- */
    static test_counter h5_tc = TEST_COUNTER_INIT("hdf5 mutations");
    blob h5_blobs[2];
    const char *h5_dtypes[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/base%d.h5", dir, k);
        fpsim_h5_file f;
        fpsim_status st = fpsim_h5_create(&f, path);
        const size_t dims[2] = {6, 8};
        /* base0: contiguous float32; base1: gzip-compressed (chunked, shuffle filter) */
        if (!st) st = fpsim_h5_write(f.id, "x", FPSIM_H5_F32, 2, dims, f32, k == 0 ? 0 : 4);
        if (!st) st = fpsim_h5_attr_string(f.id, "note", "mutation base");
        if (!st) st = fpsim_h5_commit(&f);
        else fpsim_h5_discard(&f);
        /* HDF5's metadata (superblock, object headers, B-trees) sits in the first ~2 KiB here. */
        if (st || blob_load(&h5_blobs[k], path, 2048)) {
            fprintf(stderr, "cannot write the base file %s: %s\n", path, fpsim_last_error());
            io_remove_dir(dir);
            return 1;
        }
        fpsim_tensor_source src;
        memset(&src, 0, sizeof src);
        src.path = path;
        fpsim_tensor2d t;
        st = fpsim_tensor_read(&t, &src);
        TEST_CHECK(&h5_tc, st == FPSIM_OK && t.rows == 6 && t.cols == 8 && t.f32 && t.f32[47] == f32[47],
                   "undamaged %s: %s", path, st ? fpsim_last_error() : "wrong contents");
        fpsim_tensor2d_free(&t);
    }
    /* FPSIM_ROBUST_H5_ITERS=N (and FPSIM_ROBUST_SEED=S) run a longer campaign by hand; the
     * ctest run keeps the defaults. Known: with the default seed, mutant 1965 of a long campaign
     * (and mutant 1615 with seed 12345), bytes flipped inside the gzip-compressed chunk of
     * base1.h5, make HDF5 1.10.8's H5Dread
     * copy a whole 192-byte chunk out of the 85 bytes its deflate filter returned (a heap
     * over-read inside the library, which does not check the filter's output size; fpsim
     * cannot see the chunk before H5Dread does). */
    if (getenv("FPSIM_ROBUST_SEED")) rng_state = strtoull(getenv("FPSIM_ROBUST_SEED"), NULL, 0) | 1;
    if (getenv("FPSIM_ROBUST_H5_ITERS")) time_cap_s = 500.0;
    const int h5_iters = getenv("FPSIM_ROBUST_H5_ITERS") ? atoi(getenv("FPSIM_ROBUST_H5_ITERS")) : H5_ITERS;
    mutate_loop(&h5_tc, h5_blobs, h5_dtypes, 2, h5_iters, dir, "h5_mutant", 0);
    rc |= test_summary(&h5_tc);

    for (int k = 0; k < NPY_BASES; k++) free(npy_blobs[k].bytes);
    for (int k = 0; k < 2; k++) free(h5_blobs[k].bytes);
    io_remove_dir(dir);
    return rc;
}
