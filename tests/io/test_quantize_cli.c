/* test_quantize_cli.c: `fpsim quantize` end to end, run as a user would (fork + exec of the
 * fpsim binary given as argv[1]).
 *
 * Bad input: every case must print exactly one line "fpsim quantize: ..." on stderr, exit 2, and
 * leave nothing in the output directory (neither the output nor a temporary).
 * Good input: the HDF5 file is read back with the plain HDF5 C API and checked for internal
 * consistency against an independent decoder written here (ldexp of sign/exponent/mantissa
 * fields, not fpsim's tables): dequant == value(code) x block scale (x global scale for NVFP4,
 * left to right in float32), shapes and attributes as docs/hdf5-layout.md says; bits identical
 * for 1 and 2 threads; NaN/Inf input accepted and counted; the .npy output equals the HDF5
 * dequant. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "io_test_util.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("quantize_cli");
static const char *fpsim_bin;
static char dir[256];
static char err_text[4096];

/* "<dir>/<name>"; the strings live until the end of the test (a small arena). */
static const char *in_dir(const char *name)
{
    static char arena[256][512];
    static int k;
    char *p = arena[k++ % 256];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

/* Run fpsim with a NULL-terminated argument list; stderr captured into err_text. */
static int run_fpsim(const char *first, ...)
{
    const char *args[64];
    int n = 0;
    args[n++] = fpsim_bin;
    va_list ap;
    va_start(ap, first);
    for (const char *a = first; a && n < 63; a = va_arg(ap, const char *)) args[n++] = a;
    va_end(ap);
    args[n] = NULL;
    char err_path[1100];
    snprintf(err_path, sizeof err_path, "%s/../%s.stderr", dir, strrchr(dir, '/') + 1);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *e = freopen(err_path, "w", stderr);
        FILE *o = freopen("/dev/null", "w", stdout);
        (void)e;
        (void)o;
        execv(fpsim_bin, (char *const *)args);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    FILE *e = fopen(err_path, "r");
    size_t got = e ? fread(err_text, 1, sizeof err_text - 1, e) : 0;
    err_text[got] = '\0';
    if (e) fclose(e);
    remove(err_path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int line_count(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* The bad-input contract. `needle` must appear in the message. */
static void expect_bad(const char *what, int rc, const char *needle)
{
    TEST_CHECK(&tc, rc == 2, "%s: exit %d, want 2 (%s)", what, rc, err_text);
    TEST_CHECK(&tc, line_count(err_text) == 1 && !strncmp(err_text, "fpsim quantize: ", 16),
               "%s: want one 'fpsim quantize:' line, got: %s", what, err_text);
    TEST_CHECK(&tc, !needle || strstr(err_text, needle), "%s: message should mention '%s': %s", what, needle, err_text);
    TEST_CHECK(&tc, io_dir_entries(dir, "out") == 0, "%s: an output or temporary file was left behind", what);
}

static void write_raw(const char *name, const float *x, size_t n) { io_write_bytes(in_dir(name), x, n * sizeof *x); }

static void make_h5_inputs(void)
{
    hid_t f = H5Fcreate(in_dir("in.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t d2[2] = {4, 32}, d3[3] = {2, 2, 32};
    hid_t s2 = H5Screate_simple(2, d2, NULL), s3 = H5Screate_simple(3, d3, NULL);
    float v[128];
    int32_t iv[128];
    for (int i = 0; i < 128; i++) {
        v[i] = (float)(i - 64) * 0.37f;
        iv[i] = i;
    }
    hid_t d = H5Dcreate2(f, "x", H5T_IEEE_F32LE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(d);
    d = H5Dcreate2(f, "ints", H5T_STD_I32LE, s2, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, iv);
    H5Dclose(d);
    d = H5Dcreate2(f, "cube", H5T_IEEE_F32LE, s3, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    H5Dclose(d);
    H5Sclose(s2);
    H5Sclose(s3);
    H5Fclose(f);
    io_copy_prefix(in_dir("in.h5"), in_dir("trunc.h5"), 0.6);
    io_write_bytes(in_dir("junk.h5"), "\x89HDF\r\n\x1a\n this is no superblock", 30);
    io_write_bytes(in_dir("junk.npy"), "\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'", 26);
    io_write_bytes(in_dir("text.npy"), "not an array", 12);
    /* A .npy (typed out per the format spec) whose data stops short, and a 1-D one. */
    const char h1[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 32), }";
    const char h2[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (128,), }";
    const char *hs[2] = {h1, h2};
    const char *names[2] = {"short.npy", "vector.npy"};
    for (int k = 0; k < 2; k++) {
        char buf[1024];
        size_t hl = strlen(hs[k]), total = 10 + hl + 1, pad = (64 - total % 64) % 64;
        memcpy(buf, "\x93NUMPY\x01\x00", 8);
        buf[8] = (char)((hl + pad + 1) & 0xFF);
        buf[9] = (char)((hl + pad + 1) >> 8);
        memcpy(buf + 10, hs[k], hl);
        memset(buf + 10 + hl, ' ', pad);
        buf[10 + hl + pad] = '\n';
        size_t len = 10 + hl + pad + 1;
        size_t data = k == 0 ? 100 : 512; /* short: 100 of 512 bytes */
        memcpy(buf + len, v, data);
        io_write_bytes(in_dir(names[k]), buf, len + data);
    }
}

static void test_bad_input(void)
{
    float x[128];
    for (int i = 0; i < 128; i++) x[i] = (float)i;
    write_raw("x.raw", x, 128);
    make_h5_inputs();
    const char *out = in_dir("out.h5");
    const char *raw = in_dir("x.raw");
    expect_bad("unknown scheme", run_fpsim("quantize", "--scheme", "nvfp5", "--in", raw, "--shape", "4x32", "--out", out, NULL), "nvfp4");
    expect_bad("unknown key", run_fpsim("quantize", "--scheme", "nvfp4:bogus=1", "--in", raw, "--shape", "4x32", "--out", out, NULL), "bogus");
    expect_bad("bad value", run_fpsim("quantize", "--scheme", "mxfp8-e4m3:rule=sideways", "--in", raw, "--shape", "4x32", "--out", out, NULL), "sideways");
    expect_bad("unknown option", run_fpsim("quantize", "--scheme", "nvfp4", "--in", raw, "--shape", "4x32", "--out", out, "--frobnicate", NULL), "--frobnicate");
    expect_bad("missing value", run_fpsim("quantize", "--scheme", "nvfp4", "--in", raw, "--shape", "4x32", "--out", NULL), "--out");
    expect_bad("missing --in", run_fpsim("quantize", "--scheme", "nvfp4", "--out", out, NULL), "--in");
    expect_bad("bad axis", run_fpsim("quantize", "--scheme", "nvfp4", "--in", raw, "--shape", "4x32", "--axis", "diag", "--out", out, NULL), "diag");
    expect_bad("bad shape text", run_fpsim("quantize", "--scheme", "nvfp4", "--in", raw, "--shape", "4by32", "--out", out, NULL), "4by32");
    expect_bad("bad dtype", run_fpsim("quantize", "--scheme", "nvfp4", "--in", raw, "--shape", "4x32", "--dtype", "f8", "--out", out, NULL), "f8");
    expect_bad("raw truncated", run_fpsim("quantize", "--scheme", "nvfp4", "--in", raw, "--shape", "8x32", "--out", out, NULL), "truncated");
    expect_bad("missing input", run_fpsim("quantize", "--scheme", "nvfp4", "--in", in_dir("absent.npy"), "--out", out, NULL), "absent.npy");
    expect_bad("malformed npy", run_fpsim("quantize", "--scheme", "nvfp4", "--in", in_dir("junk.npy"), "--out", out, NULL), "junk.npy");
    expect_bad("not npy", run_fpsim("quantize", "--scheme", "nvfp4", "--in", in_dir("text.npy"), "--out", out, NULL), "text.npy");
    expect_bad("truncated npy", run_fpsim("quantize", "--scheme", "nvfp4", "--in", in_dir("short.npy"), "--out", out, NULL), "short.npy");
    expect_bad("npy rank 1", run_fpsim("quantize", "--scheme", "nvfp4", "--in", in_dir("vector.npy"), "--out", out, NULL), "vector.npy");
    expect_bad("malformed hdf5", run_fpsim("quantize", "--scheme", "nvfp4", "--in", in_dir("junk.h5"), "--dataset", "x", "--out", out, NULL), "junk.h5");
    expect_bad("truncated hdf5", run_fpsim("quantize", "--scheme", "nvfp4", "--in", in_dir("trunc.h5"), "--dataset", "x", "--out", out, NULL), "trunc.h5");
    expect_bad("missing dataset", run_fpsim("quantize", "--scheme", "nvfp4", "--in", in_dir("in.h5"), "--dataset", "y", "--out", out, NULL), "'y'");
    expect_bad("hdf5 rank 3", run_fpsim("quantize", "--scheme", "nvfp4", "--in", in_dir("in.h5"), "--dataset", "cube", "--out", out, NULL), "rank 3");
    expect_bad("hdf5 int dtype", run_fpsim("quantize", "--scheme", "nvfp4", "--in", in_dir("in.h5"), "--dataset", "ints", "--out", out, NULL), "int32");
    /* The same 128 floats as 8 x 16: torchao's to_mx needs the blocked dimension % 32 == 0. */
    expect_bad("shape the scheme cannot take", run_fpsim("quantize", "--scheme", "mxfp8-e4m3:rule=floor", "--in", raw, "--shape", "8x16", "--out", out, NULL), "multiple of 32");
    expect_bad("unwritable output", run_fpsim("quantize", "--scheme", "nvfp4", "--in", raw, "--shape", "4x32", "--out", "/nonexistent-dir/out.h5", NULL), "/nonexistent-dir/out.h5");
    expect_bad("output suffix", run_fpsim("quantize", "--scheme", "nvfp4", "--in", raw, "--shape", "4x32", "--out", in_dir("out.txt"), NULL), ".npy");
    /* rht=1 on a rowwise copy changed nothing (plain nvfp4's bits) but was recorded as rht=1 */
    expect_bad("rht=1 rowwise (default axis)", run_fpsim("quantize", "--scheme", "nvfp4:rht=1", "--in", raw, "--shape", "4x32", "--out", out, NULL), "--axis cols");
    expect_bad("rht=1 --axis rows", run_fpsim("quantize", "--scheme", "nvfp4:sr=1,rht=1", "--axis", "rows", "--seed", "2", "--in", raw, "--shape", "4x32", "--out", out, NULL), "columnwise");
#if !defined(FPSIM_TEST_HAVE_GPU)
    int rc = run_fpsim("quantize", "--scheme", "nvfp4", "--in", raw, "--shape", "4x32", "--out", out, "--device", "gpu", NULL);
    if (rc != 0) expect_bad("--device gpu without a GPU", rc, "gpu");
    remove(out);
#endif
}

/* ---- the independent decoder ---- */

/* Value of a code of a minifloat with `e` exponent bits, `m` mantissa bits, bias b (no Inf/NaN
 * handling beyond E4M3's S.1111.111 and E5M2's all-ones exponent). */
static double minifloat_value(unsigned code, int e, int m, int bias, int fn_nan)
{
    int sign = (code >> (e + m)) & 1;
    unsigned ex = (code >> m) & ((1u << e) - 1), man = code & ((1u << m) - 1);
    double v;
    if (fn_nan == 1 && ex == (1u << e) - 1 && man == (1u << m) - 1) return NAN; /* E4M3 NaN */
    if (fn_nan == 2 && ex == (1u << e) - 1) v = man ? NAN : INFINITY;           /* E5M2 */
    else if (ex == 0) v = ldexp((double)man, 1 - bias - m);
    else v = ldexp((double)(man + (1u << m)), (int)ex - bias - m);
    return sign ? -v : v;
}

struct h5_out {
    int ok;
    hsize_t cdims[2], sdims[2], ddims[2], cbdims[2];
    uint8_t *codes, *scales_u8;
    float *scales_f32, *scale_inv, *dequant;
    float global_scale;
    char scheme[256], axis[16];
    uint64_t nan_count, inf_count;
};

static void *read_ds(hid_t f, const char *name, hid_t mem, size_t esize, hsize_t dims[2])
{
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) return NULL;
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    dims[0] = dims[1] = 1;
    H5Sget_simple_extent_dims(s, dims, NULL);
    hssize_t n = H5Sget_simple_extent_npoints(s);
    void *buf = malloc((size_t)n * esize);
    H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Sclose(s);
    H5Dclose(d);
    return buf;
}

static void read_attr_str(hid_t f, const char *name, char *out, size_t cap)
{
    out[0] = '\0';
    if (H5Aexists(f, name) <= 0) return;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    char *s = NULL;
    if (H5Aread(a, t, &s) >= 0 && s) {
        snprintf(out, cap, "%s", s);
        H5free_memory(s);
    }
    H5Tclose(t);
    H5Aclose(a);
}

static uint64_t read_attr_u64(hid_t f, const char *name)
{
    uint64_t v = UINT64_MAX;
    if (H5Aexists(f, name) <= 0) return v;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    H5Aread(a, H5T_NATIVE_UINT64, &v);
    H5Aclose(a);
    return v;
}

static struct h5_out load(const char *path)
{
    struct h5_out o;
    memset(&o, 0, sizeof o);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return o;
    hsize_t dummy[2];
    o.codes = read_ds(f, "codes", H5T_NATIVE_UINT8, 1, o.cdims);
    hid_t d = H5Dopen2(f, "scales", H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    int is_float = H5Tget_class(t) == H5T_FLOAT;
    H5Tclose(t);
    H5Dclose(d);
    if (is_float) o.scales_f32 = read_ds(f, "scales", H5T_NATIVE_FLOAT, 4, o.sdims);
    else o.scales_u8 = read_ds(f, "scales", H5T_NATIVE_UINT8, 1, o.sdims);
    o.scale_inv = read_ds(f, "scale_inv", H5T_NATIVE_FLOAT, 4, dummy);
    o.dequant = read_ds(f, "dequant", H5T_NATIVE_FLOAT, 4, o.ddims);
    free(read_ds(f, "scales_cublas", H5T_NATIVE_UINT8, 1, o.cbdims)); /* presence and shape */
    float *g = read_ds(f, "global_scale", H5T_NATIVE_FLOAT, 4, dummy);
    if (g) o.global_scale = *g;
    free(g);
    read_attr_str(f, "scheme", o.scheme, sizeof o.scheme);
    read_attr_str(f, "axis", o.axis, sizeof o.axis);
    o.nan_count = read_attr_u64(f, "nan_count");
    o.inf_count = read_attr_u64(f, "inf_count");
    char s[64];
    read_attr_str(f, "git_commit", s, sizeof s);
    o.ok = o.codes && o.dequant && (o.scales_u8 || o.scales_f32) && s[0] && o.cbdims[0] > 0;
    H5Fclose(f);
    return o;
}

static void unload(struct h5_out *o)
{
    free(o->codes);
    free(o->scales_u8);
    free(o->scales_f32);
    free(o->scale_inv);
    free(o->dequant);
}

/* Check dequant against codes and scales for a 1 x bc (or bc x bc) tiling of the stored operand.
 * kind: 0 MX E4M3, 1 NVFP4, 2 FP8 block E4M3. */
static void check_consistency(const char *what, const struct h5_out *o, size_t rows, size_t cols, int kind, int tr,
                              int tcols, int cols_axis)
{
    size_t qrows = cols_axis ? cols : rows, qcols = cols_axis ? rows : cols;
    size_t want_stride = kind == 1 ? (qcols + 1) / 2 : qcols;
    TEST_CHECK(&tc, o->cdims[0] == qrows && o->cdims[1] == want_stride, "%s: codes shape %llux%llu", what,
               (unsigned long long)o->cdims[0], (unsigned long long)o->cdims[1]);
    TEST_CHECK(&tc, o->ddims[0] == rows && o->ddims[1] == cols, "%s: dequant shape", what);
    TEST_CHECK(&tc, o->sdims[0] == (qrows + tr - 1) / tr && o->sdims[1] == (qcols + tcols - 1) / tcols,
               "%s: scales shape %llux%llu", what, (unsigned long long)o->sdims[0], (unsigned long long)o->sdims[1]);
    if (o->cdims[0] != qrows || o->ddims[0] != rows) return;
    size_t bad = 0;
    for (size_t i = 0; i < qrows; i++) {
        for (size_t j = 0; j < qcols; j++) {
            size_t b = (i / tr) * o->sdims[1] + j / tcols;
            float got = cols_axis ? o->dequant[j * cols + i] : o->dequant[i * cols + j];
            float want;
            if (kind == 1) {
                unsigned byte = o->codes[i * want_stride + j / 2];
                unsigned c = (j & 1) ? byte >> 4 : byte & 0xF; /* even element in the low nibble */
                float q = (float)minifloat_value(c, 2, 1, 1, 0);
                float s = (float)minifloat_value(o->scales_u8[b], 4, 3, 7, 1);
                want = (q * s) * o->global_scale;
            } else if (kind == 0) {
                float q = (float)minifloat_value(o->codes[i * qcols + j], 4, 3, 7, 1);
                /* E8M0: 2^(e-127), 0xFF is NaN */
                want = o->scales_u8[b] == 0xFF ? NAN : (float)((double)q * ldexp(1.0, (int)o->scales_u8[b] - 127));
            } else {
                float q = (float)minifloat_value(o->codes[i * qcols + j], 4, 3, 7, 1);
                want = q * o->scales_f32[b];
            }
            if (!(test_f32_bits(got) == test_f32_bits(want) || (isnan(got) && isnan(want)))) {
                if (bad++ < 3) test_fail(&tc, "%s: dequant (%zu,%zu) = %a, codes and scales say %a", what, i, j, got, want);
            }
        }
    }
    test_count(&tc, qrows * qcols);
}

/* `fpsim recipes`: presets listed; one recipe's table names every pass; unknown names exit 2
 * with one line listing the valid ones. */
static void test_recipes(void)
{
    int rc = run_fpsim("recipes", "no-such-recipe", NULL);
    TEST_CHECK(&tc, rc == 2 && line_count(err_text) == 1 && !strncmp(err_text, "fpsim recipes: ", 15) &&
                        strstr(err_text, "te-nvfp4"), "unknown recipe: exit %d: %s", rc, err_text);
    rc = run_fpsim("recipes", "--bogus", NULL);
    TEST_CHECK(&tc, rc == 2 && line_count(err_text) == 1, "unknown option: exit %d: %s", rc, err_text);
    const char *out = in_dir("recipes.txt");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' recipes te-nvfp4 > '%s' && '%s' recipes >> '%s' && '%s' recipes --json >> '%s'",
             fpsim_bin, out, fpsim_bin, out, fpsim_bin, out);
    rc = system(cmd);
    FILE *f = fopen(out, "r");
    static char text[65536];
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f) fclose(f);
    remove(out);
    TEST_CHECK(&tc, rc == 0, "recipes runs: %d", rc);
    const char *needles[] = {"fprop", "dgrad", "wgrad", "sr=1", "rht=1", "tile=16x16", "nemo-rl-fp8", "\"recipes\""};
    for (size_t i = 0; i < sizeof needles / sizeof *needles; i++)
        TEST_CHECK(&tc, strstr(text, needles[i]) != NULL, "recipes output lacks '%s'", needles[i]);
}

static void fill(float *x, size_t n, uint64_t seed);

/* rht=1 rotates columnwise copies only. In recipes: a role-wide rht=1 is listed on the role's
 * columnwise use only (it was listed on fprop X too, where nothing rotates), and one rowwise
 * operand with rht=1 is refused. In quantize --axis both: the rowwise copy is plain nvfp4's,
 * and each group's rht attribute says which copy was rotated. */
static void test_rht_rowwise(void)
{
    int rc = run_fpsim("recipes", "bf16;fprop.x=nvfp4:rht=1", NULL);
    TEST_CHECK(&tc, rc == 2 && line_count(err_text) == 1 && strstr(err_text, "rowwise"),
               "recipes with fprop.x rht=1: exit %d: %s", rc, err_text);
    const char *out = in_dir("rht_recipe.txt");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' recipes 'te-nvfp4;x=nvfp4:rht=1' > '%s'", fpsim_bin, out);
    rc = system(cmd);
    FILE *f = fopen(out, "r");
    char line[1024];
    int fprop_x = 0, wgrad_x = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "fprop  act", 10)) fprop_x = strstr(line, "rht=0") ? 1 : -1;
        if (!strncmp(line, "wgrad  act", 10)) wgrad_x = strstr(line, "rht=1") ? 1 : -1;
    }
    if (f) fclose(f);
    remove(out);
    TEST_CHECK(&tc, rc == 0 && fprop_x == 1 && wgrad_x == 1,
               "recipes 'te-nvfp4;x=nvfp4:rht=1': fprop X must show rht=0, wgrad X rht=1 (%d, %d)", fprop_x,
               wgrad_x);

    float x[32 * 64];
    fill(x, 32 * 64, 77);
    write_raw("rht.raw", x, 32 * 64);
    const char *raw = in_dir("rht.raw"), *both = in_dir("rht_both.h5"), *rows = in_dir("rht_rows.h5");
    int rc1 = run_fpsim("quantize", "--scheme", "nvfp4:rht=1", "--axis", "both", "--in", raw, "--shape", "32x64",
                        "--out", both, "--quiet", NULL);
    int rc2 = run_fpsim("quantize", "--scheme", "nvfp4", "--in", raw, "--shape", "32x64", "--out", rows, "--quiet",
                        NULL);
    TEST_CHECK(&tc, rc1 == 0 && rc2 == 0, "rht=1 --axis both / nvfp4 rows: exit %d %d: %s", rc1, rc2, err_text);
    hid_t fb = H5Fopen(both, H5F_ACC_RDONLY, H5P_DEFAULT), fr = H5Fopen(rows, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (fb >= 0 && fr >= 0) {
        hsize_t d1[2], d2[2];
        uint8_t *c1 = read_ds(fb, "rowwise/codes", H5T_NATIVE_UINT8, 1, d1);
        uint8_t *c2 = read_ds(fr, "codes", H5T_NATIVE_UINT8, 1, d2);
        TEST_CHECK(&tc, c1 && c2 && d1[0] == d2[0] && d1[1] == d2[1] && !memcmp(c1, c2, d1[0] * d1[1]),
                   "%s", "--axis both rht=1: the rowwise copy is not plain nvfp4's");
        free(c1);
        free(c2);
        int64_t r_rht = -1, c_rht = -1;
        hid_t g = H5Gopen2(fb, "rowwise", H5P_DEFAULT);
        if (g >= 0 && H5Aexists(g, "rht") > 0) {
            hid_t a = H5Aopen(g, "rht", H5P_DEFAULT);
            H5Aread(a, H5T_NATIVE_INT64, &r_rht);
            H5Aclose(a);
        }
        if (g >= 0) H5Gclose(g);
        g = H5Gopen2(fb, "columnwise", H5P_DEFAULT);
        if (g >= 0 && H5Aexists(g, "rht") > 0) {
            hid_t a = H5Aopen(g, "rht", H5P_DEFAULT);
            H5Aread(a, H5T_NATIVE_INT64, &c_rht);
            H5Aclose(a);
        }
        if (g >= 0) H5Gclose(g);
        TEST_CHECK(&tc, r_rht == 0 && c_rht == 1, "--axis both rht=1: group rht attributes %lld / %lld, want 0 / 1",
                   (long long)r_rht, (long long)c_rht);
    }
    if (fb >= 0) H5Fclose(fb);
    if (fr >= 0) H5Fclose(fr);
    remove(both);
    remove(rows);
}

static void fill(float *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t z = test_splitmix64(&seed);
        double u = ((double)(z >> 11) / 9007199254740992.0 - 0.5) * 8.0;
        x[i] = (float)ldexp(u, (int)((i / 16) % 7) - 3);
    }
}

static void test_good_runs(void)
{
    enum { R = 48, C = 96 };
    static float x[R * C];
    fill(x, R * C, 11);
    x[5] = NAN;
    x[7] = INFINITY;
    x[200] = -INFINITY;
    write_raw("good.raw", x, R * C);
    const char *raw = in_dir("good.raw");
    struct {
        const char *scheme, *axis;
        int kind, tr, tc, cols_axis;
    } cases[] = {
        {"mxfp8-e4m3", "rows", 0, 1, 32, 0},
        {"mxfp8-e4m3:rule=rceil-sat,nan=ignore", "cols", 0, 1, 32, 1},
        {"nvfp4", "rows", 1, 1, 16, 0},
        {"nvfp4:tile=16x16", "cols", 1, 16, 16, 1},
        {"fp8-block", "rows", 2, 1, 128, 0},
        {"fp8-block:tile=128x128,scale=deepgemm-fp32", "rows", 2, 128, 128, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const char *out = in_dir("good.h5");
        remove(out);
        int rc = run_fpsim("quantize", "--scheme", cases[k].scheme, "--axis", cases[k].axis, "--in", raw, "--shape",
                           "48x96", "--out", out, "--quiet", NULL);
        TEST_CHECK(&tc, rc == 0, "%s: exit %d: %s", cases[k].scheme, rc, err_text);
        TEST_CHECK(&tc, err_text[0] == '\0', "%s: --quiet printed: %s", cases[k].scheme, err_text);
        if (rc) continue;
        struct h5_out o = load(out);
        TEST_CHECK(&tc, o.ok, "%s: datasets/attributes missing", cases[k].scheme);
        TEST_CHECK(&tc, !strcmp(o.axis, cases[k].axis), "%s: axis attr '%s'", cases[k].scheme, o.axis);
        TEST_CHECK(&tc, o.nan_count == 1 && o.inf_count == 2, "%s: nan %llu inf %llu", cases[k].scheme,
                   (unsigned long long)o.nan_count, (unsigned long long)o.inf_count);
        if (o.ok) check_consistency(cases[k].scheme, &o, R, C, cases[k].kind, cases[k].tr, cases[k].tc, cases[k].cols_axis);
        /* The canonical scheme text reproduces the same file contents. */
        const char *again = in_dir("again.h5");
        rc = run_fpsim("quantize", "--scheme", o.scheme, "--axis", cases[k].axis, "--in", raw, "--shape", "48x96",
                       "--out", again, "--quiet", NULL);
        struct h5_out o2 = load(again);
        TEST_CHECK(&tc, rc == 0 && o2.ok && !memcmp(o.codes, o2.codes, o.cdims[0] * o.cdims[1]) &&
                            !memcmp(o.dequant, o2.dequant, sizeof x), "%s: canonical text '%s' gives other bits",
                   cases[k].scheme, o.scheme);
        unload(&o2);
        unload(&o);
        remove(again);
        remove(out);
    }

    /* Same bits on 1 and 2 threads, with stochastic rounding and RHT. */
    const char *o1 = in_dir("t1.h5"), *o2 = in_dir("t2.h5");
    int rc1 = run_fpsim("quantize", "--scheme", "nvfp4:sr=1,rht=1", "--axis", "cols", "--seed", "1234", "--in", raw,
                        "--shape", "48x96", "--out", o1, "--threads", "1", "--quiet", NULL);
    int rc2 = run_fpsim("quantize", "--scheme", "nvfp4:sr=1,rht=1", "--axis", "cols", "--seed", "1234", "--in", raw,
                        "--shape", "48x96", "--out", o2, "--threads", "2", "--quiet", NULL);
    TEST_CHECK(&tc, rc1 == 0 && rc2 == 0, "sr/rht runs: %s", err_text);
    struct h5_out a = load(o1), b = load(o2);
    TEST_CHECK(&tc, a.ok && b.ok && a.cdims[0] == b.cdims[0] && !memcmp(a.codes, b.codes, a.cdims[0] * a.cdims[1]) &&
                        !memcmp(a.scales_u8, b.scales_u8, a.sdims[0] * a.sdims[1]) &&
                        !memcmp(a.dequant, b.dequant, sizeof x), "%s", "1 vs 2 threads differ");
    unload(&a);
    unload(&b);

    /* --gzip: same contents, compressed datasets. */
    const char *oz = in_dir("z.h5");
    int rcz = run_fpsim("quantize", "--scheme", "nvfp4:sr=1,rht=1", "--axis", "cols", "--seed", "1234", "--in", raw,
                        "--shape", "48x96", "--out", oz, "--gzip", "6", "--quiet", NULL);
    a = load(o1);
    struct h5_out z = load(oz);
    TEST_CHECK(&tc, rcz == 0 && z.ok && a.ok && !memcmp(a.codes, z.codes, a.cdims[0] * a.cdims[1]) &&
                        !memcmp(a.dequant, z.dequant, sizeof x), "--gzip 6 changes contents: %s", err_text);
    hid_t zf = H5Fopen(oz, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (zf >= 0) {
        hid_t d = H5Dopen2(zf, "dequant", H5P_DEFAULT);
        hid_t p = H5Dget_create_plist(d);
        TEST_CHECK(&tc, H5Pget_nfilters(p) >= 1, "%s", "--gzip 6: dequant is not compressed");
        H5Pclose(p);
        H5Dclose(d);
        H5Fclose(zf);
    }
    unload(&a);
    unload(&z);

    /* .npy output = the HDF5 dequant. */
    const char *h5 = in_dir("n.h5"), *npy = in_dir("n.npy");
    int rc = run_fpsim("quantize", "--scheme", "mxfp4", "--in", raw, "--shape", "48x96", "--out", h5, "--quiet", NULL);
    rc |= run_fpsim("quantize", "--scheme", "mxfp4", "--in", raw, "--shape", "48x96", "--out", npy, NULL);
    TEST_CHECK(&tc, rc == 0, "npy run: %s", err_text);
    TEST_CHECK(&tc, strstr(err_text, "sqnr") != NULL, "summary on stderr without --quiet: %s", err_text);
    FILE *f = fopen(npy, "rb");
    static unsigned char buf[R * C * 4 + 4096];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    struct h5_out m = load(h5);
    size_t hlen = n > 10 ? 10 + (size_t)(buf[8] | buf[9] << 8) : 0;
    TEST_CHECK(&tc, n == hlen + sizeof x && strstr((char *)buf + 10, "'<f4'") && strstr((char *)buf + 10, "(48, 96)"),
               "npy header/size (%zu bytes)", n);
    TEST_CHECK(&tc, m.ok && n == hlen + sizeof x && !memcmp(buf + hlen, m.dequant, sizeof x), "%s", "npy data = h5 dequant");
    unload(&m);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_quantize_cli PATH/TO/fpsim\n");
        return 2;
    }
    fpsim_bin = argv[1];
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* failures are reported by the checks */
    if (access(fpsim_bin, X_OK) != 0) {
        fprintf(stderr, "fpsim binary '%s' not found\n", fpsim_bin);
        return 1;
    }
    if (io_make_temp_dir(dir, sizeof dir, "test_quantize_cli")) return 1;
    test_bad_input();
    test_good_runs();
    test_recipes();
    test_rht_rowwise();
    io_remove_dir(dir);
    return test_summary(&tc);
}
