/* test_robust_cli.c: regressions of bad input found by the review, through the fpsim binary.
 *
 * Each case runs `fpsim ...` without a shell (fork + execv, stdout and stderr to files) and
 * checks what a user sees: the exit status (2 for bad input), exactly one line on stderr
 * containing the expected words, and no output file (nor a temporary one) left behind.
 *
 * usage: test_robust_cli PATH/TO/fpsim */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fpsim_h5.h"
#include "fpsim_model.h"
#include "fpsim_npy.h"
#include "io/io_test_util.h"
#include "test_util.h"

static const char *fpsim_bin;
static char dir[1024];
static test_counter tc = TEST_COUNTER_INIT("robust cli");

/* Start fpsim with `args` (NULL-terminated, without argv[0]) in the scratch directory, stdin
 * from /dev/null, stdout and stderr into the scratch files stdout.txt and stderr.txt. Returns
 * the child's pid (-1: fork failed). */
static pid_t start_fpsim(const char *const *args)
{
    char err_path[1200], out_path[1200];
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", dir);
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)fpsim_bin;
    for (; args[n - 1] && n < 31; n++) argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fi = open("/dev/null", O_RDONLY);
        if (fe < 0 || fo < 0 || fi < 0 || chdir(dir) != 0) _exit(126);
        /* In sanitizer builds: HDF5 1.10.8 leaks a little on a damaged file, which is not
         * fpsim's to free; LeakSanitizer would add its report to stderr. */
        setenv("LSAN_OPTIONS", "detect_leaks=0", 1);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(fpsim_bin, argv);
        _exit(127);
    }
    return pid;
}

/* Wait for a start_fpsim child: its wait status (-1: none), stderr in err[] (at most cap-1
 * bytes); the scratch output files removed. */
static int wait_fpsim(pid_t pid, char *err, size_t cap)
{
    char err_path[1200], out_path[1200];
    snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
    snprintf(out_path, sizeof out_path, "%s/stdout.txt", dir);
    int status = -1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) status = -1;
    err[0] = '\0';
    FILE *f = fopen(err_path, "rb");
    if (f) {
        size_t got = fread(err, 1, cap - 1, f);
        err[got] = '\0';
        fclose(f);
    }
    remove(err_path);
    remove(out_path);
    return status;
}

/* Run fpsim with `args`; returns the exit status (-1 if it did not exit normally: a crash) and
 * leaves stderr in err[] (at most cap-1 bytes). */
static int run_fpsim(const char *const *args, char *err, size_t cap)
{
    const int status = wait_fpsim(start_fpsim(args), err, cap);
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        if (*s == '\n') n++;
    return n;
}

/* Bad input: exit 2, one stderr line containing `needle`, no file named like `output` left. */
static void expect_bad_input(const char *label, const char *const *args, const char *needle, const char *output)
{
    char err[4096];
    const int rc = run_fpsim(args, err, sizeof err);
    TEST_CHECK(&tc, rc == 2, "%s: exit %d, want 2 (stderr: %s)", label, rc, err);
    TEST_CHECK(&tc, count_lines(err) == 1, "%s: %d stderr lines, want 1: %s", label, count_lines(err), err);
    TEST_CHECK(&tc, strstr(err, needle) != NULL, "%s: stderr lacks '%s': %s", label, needle, err);
    if (output) TEST_CHECK(&tc, io_dir_entries(dir, output) == 0, "%s: '%s' (or its temporary) left behind", label, output);
}

/* A small gzip-compressed HDF5 tensor with one bit of its superblock area flipped (byte 124:
 * with HDF5 1.10.8, H5Fopen then fails and leaves a file-driver object behind). */
static int write_damaged_h5(const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    float x[48];
    for (int i = 0; i < 48; i++) x[i] = (float)i * 0.25f - 3.0f;
    const size_t dims[2] = {6, 8};
    fpsim_h5_file f;
    fpsim_status st = fpsim_h5_create(&f, path);
    if (!st) st = fpsim_h5_write(f.id, "x", FPSIM_H5_F32, 2, dims, x, 4);
    if (!st) st = fpsim_h5_attr_string(f.id, "note", "mutation base");
    if (st) {
        fpsim_h5_discard(&f);
        return -1;
    }
    if (fpsim_h5_commit(&f)) return -1;
    FILE *h = fopen(path, "r+b");
    if (!h) return -1;
    fseek(h, 124, SEEK_SET);
    int c = fgetc(h);
    fseek(h, 124, SEEK_SET);
    fputc(c ^ 0x01, h);
    fclose(h);
    return 0;
}

/* A .npy file whose header claims `claim` (e.g. "(1000000000, 4)") but holds 3x4 float32 data. */
static int write_lying_npy(const char *name, const char *claim)
{
    char path[1200], text[200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const size_t shape[2] = {3, 4};
    float x[12] = {0};
    if (fpsim_npy_save(path, FPSIM_NPY_F32, 2, shape, x)) return -1;
    /* Rewrite the header dict in place (same 128-byte header, space padded). */
    FILE *f = fopen(path, "r+b");
    if (!f) return -1;
    int len = snprintf(text, sizeof text, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", claim);
    fseek(f, 10, SEEK_SET);
    fwrite(text, 1, (size_t)len, f);
    fclose(f);
    return 0;
}

/* ---- convert, verify and mismatch: helpers of convert_verify_mismatch_regressions() ---- */

static void scratch_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", dir, name);
}

/* Run "INPUT fpsim ARGS" through /bin/sh in the scratch directory, for stdin redirections and
 * pipes (INPUT e.g. "cat x.npy |"). Returns the exit status (-1: no normal exit) with stderr in
 * err[], stdout's first bytes in out[] (if not NULL) and its size in *out_bytes. */
static int run_fpsim_shell(const char *input, const char *args, char *err, size_t cap, char *out, size_t out_cap,
                           long *out_bytes)
{
    char cmd[4096], err_path[1200], out_path[1200];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s LSAN_OPTIONS=detect_leaks=0 '%s' %s >shell_out.bin 2>shell_err.txt", dir,
             input, fpsim_bin, args);
    scratch_path(err_path, sizeof err_path, "shell_err.txt");
    scratch_path(out_path, sizeof out_path, "shell_out.bin");
    fflush(NULL);
    const int status = system(cmd);
    err[0] = '\0';
    FILE *f = fopen(err_path, "rb");
    if (f) {
        err[fread(err, 1, cap - 1, f)] = '\0';
        fclose(f);
    }
    if (out && (f = fopen(out_path, "rb"))) {
        out[fread(out, 1, out_cap - 1, f)] = '\0';
        fclose(f);
    }
    struct stat sb;
    *out_bytes = stat(out_path, &sb) == 0 ? (long)sb.st_size : -1;
    remove(err_path);
    remove(out_path);
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Bad input through the shell: exit 2, one stderr line containing `needle`, nothing on stdout. */
static void expect_bad_input_shell(const char *label, const char *input, const char *args, const char *needle)
{
    char err[4096];
    long out_bytes = -1;
    const int rc = run_fpsim_shell(input, args, err, sizeof err, NULL, 0, &out_bytes);
    TEST_CHECK(&tc, rc == 2, "%s: exit %d, want 2 (stderr: %s)", label, rc, err);
    TEST_CHECK(&tc, count_lines(err) == 1, "%s: %d stderr lines, want 1: %s", label, count_lines(err), err);
    TEST_CHECK(&tc, strstr(err, needle) != NULL, "%s: stderr lacks '%s': %s", label, needle, err);
    TEST_CHECK(&tc, out_bytes == 0, "%s: %ld bytes on stdout, want none", label, out_bytes);
}

/* A capture file (docs/model.md, "Capture") of a 1-layer model with all-zero weights, valid but
 * for what the arguments change: schema_version stored as the string "1", the loss mask's value. */
static int write_capture(const char *name, int schema_as_string, int mask_value)
{
    fpsim_model_config c;
    if (fpsim_model_config_parse(&c, "layers=1,d=64,heads=2,kv_heads=2,ffn=128,vocab=64,seq=16,batch=2", 0))
        return -1;
    const size_t L = (size_t)c.layers, C = (size_t)c.d, V = (size_t)c.vocab, F = (size_t)c.ffn;
    const size_t QKV = (size_t)fpsim_model_qkv_dim(&c), N = fpsim_model_tokens(&c);
    const int ranks[FPSIM_PARAM_COUNT] = {2, 2, 3, 3, 2, 3, 3, 1, 2};
    const size_t shapes[FPSIM_PARAM_COUNT][3] = {{V, C}, {L, C},        {L, QKV, C}, {L, C, C}, {L, C},
                                                 {L, 2 * F, C}, {L, C, F}, {C},        {V, C}};
    float *zeros = calloc(L * 2 * F * C + N * V, sizeof *zeros); /* room for the largest tensor */
    int32_t *ints = calloc(N, sizeof *ints), *mask = malloc(N * sizeof *mask);
    char path[1200];
    scratch_path(path, sizeof path, name);
    fpsim_h5_file f;
    fpsim_status st = zeros && ints && mask ? fpsim_h5_create(&f, path) : FPSIM_ENOMEM;
    for (size_t i = 0; mask && i < N; i++) mask[i] = mask_value;
    if (!st) st = fpsim_h5_attr_string(f.id, "kind", "fpsim-capture");
    if (!st) st = schema_as_string ? fpsim_h5_attr_string(f.id, "schema_version", "1")
                                   : fpsim_h5_attr_int64(f.id, "schema_version", 1);
    if (!st) st = fpsim_h5_attr_string(f.id, "model", "layers=1,d=64,heads=2,kv_heads=2,ffn=128,vocab=64,seq=16,batch=2");
    const char *groups[] = {"params", "grads", "batch", "acts"};
    for (size_t g = 0; g < 4 && !st; g++) {
        hid_t gid;
        if (!(st = fpsim_h5_group_create(&gid, f.id, groups[g]))) H5Gclose(gid);
    }
    char dname[64];
    for (int p = 0; p < FPSIM_PARAM_COUNT && !st; p++)
        for (int g = 0; g < 2 && !st; g++) {
            snprintf(dname, sizeof dname, "%s/%s", groups[g], fpsim_param_name(p));
            st = fpsim_h5_write(f.id, dname, FPSIM_H5_F32, ranks[p], shapes[p], zeros, 0);
        }
    const size_t bt[2] = {(size_t)c.batch, (size_t)c.seq}, nc[2] = {N, C}, lnc[3] = {L, N, C}, nv[2] = {N, V}, one = 1;
    if (!st) st = fpsim_h5_write(f.id, "batch/tokens", FPSIM_H5_I32, 2, bt, ints, 0);
    if (!st) st = fpsim_h5_write(f.id, "batch/targets", FPSIM_H5_I32, 2, bt, ints, 0);
    if (!st) st = fpsim_h5_write(f.id, "batch/mask", FPSIM_H5_I32, 2, bt, mask, 0);
    if (!st) st = fpsim_h5_write(f.id, "acts/embed", FPSIM_H5_F32, 2, nc, zeros, 0);
    if (!st) st = fpsim_h5_write(f.id, "acts/block_out", FPSIM_H5_F32, 3, lnc, zeros, 0);
    if (!st) st = fpsim_h5_write(f.id, "acts/final_norm", FPSIM_H5_F32, 2, nc, zeros, 0);
    if (!st) st = fpsim_h5_write(f.id, "acts/logits", FPSIM_H5_F32, 2, nv, zeros, 0);
    if (!st) st = fpsim_h5_write(f.id, "loss", FPSIM_H5_F32, 1, &one, zeros, 0);
    if (!st) st = fpsim_h5_commit(&f);
    else if (zeros && ints && mask) fpsim_h5_discard(&f);
    free(zeros), free(ints), free(mask);
    return st ? -1 : 0;
}

/* A file of n bytes in the scratch directory (n given: the text may hold a NUL byte). */
static int write_text(const char *name, const char *text, size_t n)
{
    char path[1200];
    scratch_path(path, sizeof path, name);
    return io_write_bytes(path, text, n);
}

/* Regressions of the convert / verify / mismatch audit: bad input was masked, reinterpreted,
 * half-written, or accepted while checking nothing. */
static void convert_verify_mismatch_regressions(void)
{
    char err[4096], out[4096], path[1200], path2[1200];
    long out_bytes = -1;
    int rc;

    /* convert --decode: FP4/FP6 codes sit one per byte in the low bits; a high bit was masked
     * off (0x10 decoded as e2m1 code 0, exit 0). Refused, from a file before anything is
     * written, and from a pipe. */
    TEST_CHECK(&tc, write_text("codes.bin", "\x10\x3f\x40\xff", 4) == 0 && write_text("codes6.bin", "\x01\x3f\x40", 3) == 0,
               "%s", "cannot write the code files");
    expect_bad_input_shell("convert --decode e2m1, code 0x10", "", "convert --decode --to e2m1 --in codes.bin",
                           "code 0x10 at index 0 is out of range for the 4-bit format e2m1");
    expect_bad_input_shell("convert --decode e3m2, code 0x40", "", "convert --decode --to e3m2 --in codes6.bin",
                           "code 0x40 at index 2 is out of range for the 6-bit format e3m2");
    expect_bad_input_shell("convert --decode e2m1 from a pipe", "cat codes.bin |", "convert --decode --to e2m1",
                           "out of range");
    expect_bad_input("convert --decode e2m3 --out",
                     (const char *const[]){"convert", "--decode", "--to", "e2m3", "--in", "codes.bin", "--out",
                                           "vals.bin", NULL},
                     "code 0x40 at index 2", "vals.bin");
    /* A float16 .npy decoded as bf16 had its bits taken for codes. */
    {
        const uint16_t h[4] = {0x3C00, 0x4000, 0xC000, 0x0000};
        const size_t n4 = 4;
        scratch_path(path, sizeof path, "f16.npy");
        TEST_CHECK(&tc, fpsim_npy_save(path, FPSIM_NPY_F16, 1, &n4, h) == FPSIM_OK, "%s", "cannot write f16.npy");
        expect_bad_input("convert --decode bf16 of a <f2 .npy",
                         (const char *const[]){"convert", "--decode", "--to", "bf16", "--in", "f16.npy", "--out",
                                               "vals.npy", NULL},
                         "'<f2' values, not bf16 codes (<u2 expected)", "vals.npy");
    }
    /* A .npy was read as raw float32 (its header as data) unless named *.npy in lower case:
     * now recognised by its magic, from any name and from stdin redirected from a file. */
    scratch_path(path, sizeof path, "small.npy");
    scratch_path(path2, sizeof path2, "SMALL.NPY");
    TEST_CHECK(&tc, io_copy_prefix(path, path2, 1.0) == 0, "%s", "cannot copy small.npy");
    scratch_path(path2, sizeof path2, "small.dat");
    TEST_CHECK(&tc, io_copy_prefix(path, path2, 1.0) == 0, "%s", "cannot copy small.npy");
    const char *const npy_names[] = {"SMALL.NPY", "small.dat"};
    for (int k = 0; k < 2; k++) {
        rc = run_fpsim((const char *const[]){"convert", "--to", "e4m3", "--in", npy_names[k], "--out", "c.npy", NULL}, err,
                       sizeof err);
        fpsim_npy_info info;
        void *data = NULL;
        scratch_path(path2, sizeof path2, "c.npy");
        const int loaded = rc == 0 && fpsim_npy_load(path2, &info, &data) == FPSIM_OK;
        TEST_CHECK(&tc, loaded && info.ndim == 2 && info.count == 128 && info.dtype == FPSIM_NPY_U8,
                   "convert --in %s: exit %d, not read as the 4x32 .npy it is: %s", npy_names[k], rc, err);
        free(data);
        remove(path2);
    }
    rc = run_fpsim_shell("", "convert --to e4m3 < small.npy", err, sizeof err, NULL, 0, &out_bytes);
    TEST_CHECK(&tc, rc == 0 && out_bytes == 128, "convert < small.npy: exit %d, %ld bytes, want 128: %s", rc, out_bytes,
               err);
    expect_bad_input_shell("convert, .npy through a pipe", "cat small.npy |", "convert --to e4m3", "on a pipe");
    /* A truncated .npy with stdout as output: codes were written before the error. */
    scratch_path(path2, sizeof path2, "trunc.npy");
    TEST_CHECK(&tc, io_copy_prefix(path, path2, 0.8) == 0, "%s", "cannot write trunc.npy");
    expect_bad_input_shell("convert, truncated .npy to stdout", "", "convert --to e4m3 --in trunc.npy", "truncated");
    /* Options that mean nothing when decoding were accepted. */
    expect_bad_input("convert --decode --round sr",
                     (const char *const[]){"convert", "--decode", "--to", "e4m3", "--round", "sr", NULL},
                     "--round has no effect with --decode", NULL);
    expect_bad_input("convert --decode --from f64 --as f32",
                     (const char *const[]){"convert", "--decode", "--to", "e4m3", "--from", "f64", "--as", "f32", NULL},
                     "both name the --decode output type", NULL);

    /* verify: a filter that matched nothing printed "0 checks, 0 failed" and exit 0, even the
     * help's own example (e4m3/nv) on the CPU. */
    expect_bad_input("verify --only nosuch", (const char *const[]){"verify", "--only", "nosuch", NULL},
                     "--only 'nosuch' matches no check", NULL);
    rc = run_fpsim_shell("", "verify --only e4m3/nv", err, sizeof err, out, sizeof out, &out_bytes);
    TEST_CHECK(&tc, rc == 0 && strstr(out, "array vs scalar core: e4m3") && !strstr(out, "\n0 checks"),
               "verify --only e4m3/nv: exit %d, checks no e4m3/nv case: %s", rc, out);
    rc = run_fpsim_shell("", "verify --only mxfp8", err, sizeof err, out, sizeof out, &out_bytes);
    TEST_CHECK(&tc, rc == 0 && strstr(out, "block quantizers"), "verify --only mxfp8: exit %d: %s", rc, out);
    expect_bad_input("verify --no-elements --no-blocks",
                     (const char *const[]){"verify", "--no-elements", "--no-blocks", NULL}, "nothing to check", NULL);
    expect_bad_input("verify --full on the CPU", (const char *const[]){"verify", "--full", NULL},
                     "--full applies to --device gpu only", NULL);
    expect_bad_input("verify gemm --md on the CPU", (const char *const[]){"verify", "gemm", "--md", "v.md", NULL},
                     "--md has no effect on the CPU", "v.md");
    expect_bad_input("verify gemm --dump on the CPU",
                     (const char *const[]){"verify", "gemm", "--dump", "/nonexistent-dir", NULL},
                     "--dump has no effect on the CPU", NULL);

    /* mismatch: token files. Nothing scored gave "tokens scored 0" and NaN metrics, exit 0; a
     * bad token quoted the rest of the line (two lines); a NUL byte was "longer than 65535
     * characters"; an overflowing id was reported as 9223372036854775807; the prefix was
     * doubled ("fpsim mismatch: mismatch:"). */
#define MISMATCH_TOKENS(FILE) \
    (const char *const[]) { "mismatch", "--generator", "bf16", "--trainer", "bf16", "--tokens", FILE, NULL }
#define TEXT(S) S, sizeof S - 1
    TEST_CHECK(&tc,
               write_text("t_unscored.txt", TEXT("1 2 3 |\n")) == 0 && write_text("t_alpha.txt", TEXT("1 2 x 3 | 4 5\n")) == 0 &&
                   write_text("t_nul.txt", TEXT("1 2 3 | 4\n\0\1\n")) == 0 &&
                   write_text("t_huge.txt", TEXT("1 2 | 99999999999999999999\n")) == 0 &&
                   write_text("t_ok.txt", TEXT("1 2 3 | 4 5\n")) == 0,
               "%s", "cannot write the token files");
    expect_bad_input("mismatch, nothing scored", MISMATCH_TOKENS("t_unscored.txt"), "no token is scored", NULL);
    expect_bad_input("mismatch, bad token", MISMATCH_TOKENS("t_alpha.txt"), "line 1: 'x' is not a token id", NULL);
    expect_bad_input("mismatch, NUL byte", MISMATCH_TOKENS("t_nul.txt"), "line 2 holds a NUL byte", NULL);
    expect_bad_input("mismatch, huge token id", MISMATCH_TOKENS("t_huge.txt"),
                     "token 99999999999999999999 is outside the vocabulary", NULL);
    rc = run_fpsim(MISMATCH_TOKENS("t_alpha.txt"), err, sizeof err);
    TEST_CHECK(&tc, !strstr(err, "mismatch: mismatch"), "mismatch: doubled prefix: %s", err);
    /* Options with no effect were accepted. */
    expect_bad_input("mismatch --tokens --sample",
                     (const char *const[]){"mismatch", "--generator", "bf16", "--trainer", "bf16", "--tokens", "t_ok.txt",
                                           "--sample", "4", NULL},
                     "--sample has no effect with --tokens", NULL);
    expect_bad_input("mismatch --from --sample",
                     (const char *const[]){"mismatch", "--generator", "bf16", "--trainer", "bf16", "--from", "cap.h5",
                                           "--sample", "4", NULL},
                     "--sample has no effect with --from", NULL);
#undef MISMATCH_TOKENS
#undef TEXT
    /* --plot: a missing file was exit 1; a --plots that is a regular file failed at the end. */
    TEST_CHECK(&tc, write_text("m.h5", "x", 1) == 0 && write_text("plots.txt", "x", 1) == 0, "%s", "cannot write");
    expect_bad_input("mismatch --plot missing file", (const char *const[]){"mismatch", "--plot", "nonexistent.h5", NULL},
                     "nonexistent.h5", NULL);
    expect_bad_input("mismatch --plots regular file",
                     (const char *const[]){"mismatch", "--plot", "m.h5", "--plots", "plots.txt", NULL},
                     "not a directory", NULL);
    expect_bad_input("mismatch --plot --generator",
                     (const char *const[]){"mismatch", "--plot", "m.h5", "--generator", "bf16", NULL},
                     "--generator has no effect with --plot", NULL);
    /* Captures (shared by replay and mismatch): an all-zero loss mask scored nothing; a string
     * schema_version was "has no root attribute". */
    TEST_CHECK(&tc, write_capture("cap_mask0.h5", 0, 0) == 0 && write_capture("cap_schemastr.h5", 1, 1) == 0, "%s",
               "cannot write the captures");
    expect_bad_input("mismatch --from, all-zero mask",
                     (const char *const[]){"mismatch", "--generator", "bf16", "--trainer", "bf16", "--from",
                                           "cap_mask0.h5", NULL},
                     "batch/mask is all zero", NULL);
    expect_bad_input("replay --from, all-zero mask", (const char *const[]){"replay", "--from", "cap_mask0.h5", NULL},
                     "batch/mask is all zero", NULL);
    expect_bad_input("mismatch --from, string schema_version",
                     (const char *const[]){"mismatch", "--generator", "bf16", "--trainer", "bf16", "--from",
                                           "cap_schemastr.h5", NULL},
                     "'schema_version' has the wrong type", NULL);
    /* --out naming the input: the capture was replaced by the results file, exit 0 */
    TEST_CHECK(&tc, write_capture("cap_ok.h5", 0, 1) == 0, "%s", "cannot write the capture");
    /* a model spec the datasets do not match (d=65536 over d=64 tensors): the model's memory
     * (17 G parameters) was asked for before any shape was checked */
    TEST_CHECK(&tc, write_capture("cap_bigspec.h5", 0, 1) == 0, "%s", "cannot write the capture");
    char bigspec[1200];
    scratch_path(bigspec, sizeof bigspec, "cap_bigspec.h5");
    hid_t bf = H5Fopen(bigspec, H5F_ACC_RDWR, H5P_DEFAULT);
    const int respecced = bf >= 0 && H5Adelete(bf, "model") >= 0 &&
                          fpsim_h5_attr_string(bf, "model",
                                               "layers=1,d=65536,heads=2,kv_heads=2,ffn=128,vocab=64,seq=16,batch=2") ==
                              FPSIM_OK;
    if (bf >= 0) H5Fclose(bf);
    TEST_CHECK(&tc, respecced, "%s", "cannot change the capture's model spec");
    expect_bad_input("replay --from, a spec larger than the datasets",
                     (const char *const[]){"replay", "-q", "--no-plots", "--from", "cap_bigspec.h5", "--out",
                                           "big_out.h5", NULL},
                     "has shape", "big_out.h5");
    expect_bad_input("replay --out the --from capture",
                     (const char *const[]){"replay", "-q", "--no-plots", "--from", "cap_ok.h5", "--out", "cap_ok.h5",
                                           NULL},
                     "would destroy the input", NULL);
    expect_bad_input("mismatch --out the --from capture",
                     (const char *const[]){"mismatch", "-q", "--generator", "bf16", "--trainer", "bf16", "--from",
                                           "cap_ok.h5", "--out", "./cap_ok.h5", NULL},
                     "would destroy the input", NULL);
}

/* ---- replay and plot: helpers of replay_plot_regressions() ---- */

/* How a copy of a good results file is damaged: each a file `fpsim plot` read out of bounds,
 * drew junk from, or answered with an HDF5 error stack. */
typedef enum results_damage {
    DAMAGE_TINY_TABLE,   /* layer_gemm_rel_l2 replaced by a 1x1x1x1 array */
    DAMAGE_HUGE_TABLE,   /* ... by a 1x200x200x30 array */
    DAMAGE_MORE_LAYERS,  /* layers and point_layers name 5 and 6 layers; the data has 2 */
    DAMAGE_STEPS,        /* attribute steps = 2; the data has 1 step */
    DAMAGE_STRING_TABLE, /* layer_gemm_rel_l2 holds strings */
    DAMAGE_NO_RECIPE,    /* the recipe's group deleted, still listed in `recipes` */
    DAMAGE_ALL_NAN       /* layer_gemm_rel_l2 all NaN, with the right dims */
} results_damage;

/* The recipe's layer_gemm_rel_l2 replaced by a float64 array of `dims` filled with `value`. */
static int replace_gemm_table(hid_t f, const size_t dims[4], double value)
{
    const char *name = "recipes/bf16/layer_gemm_rel_l2";
    const size_t n = dims[0] * dims[1] * dims[2] * dims[3];
    double *v = malloc(n * sizeof *v);
    if (!v) return -1;
    for (size_t i = 0; i < n; i++)
        v[i] = value;
    const int rc =
        H5Ldelete(f, name, H5P_DEFAULT) < 0 || fpsim_h5_write(f, name, FPSIM_H5_F64, 4, dims, v, 0) ? -1 : 0;
    free(v);
    return rc;
}

/* The recipe's layer_gemm_rel_l2 replaced by two 4-character strings. */
static int replace_gemm_table_by_strings(hid_t f)
{
    const char *name = "recipes/bf16/layer_gemm_rel_l2";
    const hsize_t n[1] = {2};
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate_simple(1, n, NULL);
    H5Tset_size(t, 4);
    int rc = H5Ldelete(f, name, H5P_DEFAULT) < 0 ? -1 : 0;
    hid_t d = rc ? H5I_INVALID_HID : H5Dcreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (d < 0 || H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, "abcdefgh") < 0) rc = -1;
    if (d >= 0) H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(t);
    return rc;
}

/* A copy `name` of the scratch directory's results file `good` (1 step, 1 block + head, recipe
 * bf16), damaged as `damage` says. */
static int write_damaged_results(const char *good, const char *name, results_damage damage)
{
    char src[1200], dst[1200];
    scratch_path(src, sizeof src, good);
    scratch_path(dst, sizeof dst, name);
    if (io_copy_prefix(src, dst, 1.0)) return -1;
    hid_t f = H5Fopen(dst, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) return -1;
    static const char *const layer_names[6] = {"embed", "0", "1", "2", "3", "head"};
    int rc = -1;
    switch (damage) {
    case DAMAGE_TINY_TABLE:
        rc = replace_gemm_table(f, (const size_t[]){1, 1, 1, 1}, 0.5);
        break;
    case DAMAGE_HUGE_TABLE:
        rc = replace_gemm_table(f, (const size_t[]){1, 200, 200, 30}, 0.5);
        break;
    case DAMAGE_MORE_LAYERS:
        rc = fpsim_h5_attr_strings(f, "layers", layer_names + 1, 5) ||
                     fpsim_h5_attr_strings(f, "point_layers", layer_names, 6)
                 ? -1
                 : 0;
        break;
    case DAMAGE_STEPS:
        rc = fpsim_h5_attr_int64(f, "steps", 2) ? -1 : 0;
        break;
    case DAMAGE_STRING_TABLE:
        rc = replace_gemm_table_by_strings(f);
        break;
    case DAMAGE_NO_RECIPE:
        rc = H5Ldelete(f, "recipes/bf16", H5P_DEFAULT) < 0 ? -1 : 0;
        break;
    case DAMAGE_ALL_NAN:
        rc = replace_gemm_table(f, (const size_t[]){1, 2, 2, 3}, NAN);
        break;
    }
    H5Fclose(f);
    return rc;
}

/* A directory of gnuplot scripts that gnuplot rejects (for FPSIM_PLOT_SCRIPTS). */
static int write_broken_scripts(const char *sub)
{
    char path[1200];
    scratch_path(path, sizeof path, sub);
    if (mkdir(path, 0755) != 0) return -1;
    const char *const scripts[] = {"error_vs_layer.gp", "rates_vs_layer.gp", "bias_vs_n.gp"};
    const char *text = "plot no_such_function(x)\n";
    for (int i = 0; i < 3; i++) {
        char name[1300];
        snprintf(name, sizeof name, "%s/%s", sub, scripts[i]);
        if (write_text(name, text, strlen(text))) return -1;
    }
    return 0;
}

/* replay refuses bad requests before its run; plot checks the whole results file before it
 * writes anything, and writes each output under a temporary name. */
/* An HDF5 file whose root attribute `kind` is an array of 100 variable-length strings: read as
 * one string, the array was written over the reader's stack (plot, replay --from: exit 139). */
static int write_kind_array(const char *name)
{
    char path[1200];
    scratch_path(path, sizeof path, name);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) return -1;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    hsize_t n = 100;
    hid_t s = H5Screate_simple(1, &n, NULL);
    const char *words[100];
    for (int i = 0; i < 100; i++) words[i] = "fpsim-mismatch";
    hid_t a = H5Acreate2(f, "kind", t, s, H5P_DEFAULT, H5P_DEFAULT);
    const herr_t w = H5Awrite(a, t, words);
    H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
    return H5Fclose(f) < 0 || w < 0 ? -1 : 0;
}

static void replay_plot_regressions(void)
{
    TEST_CHECK(&tc, write_kind_array("kind_array.h5") == 0, "%s", "cannot write kind_array.h5");
    expect_bad_input("plot, a string array as kind",
                     (const char *const[]){"plot", "kind_array.h5", "--outdir", "kind_plots", NULL},
                     "not a replay results file", "kind_plots");
    expect_bad_input("replay --from, a string array as kind",
                     (const char *const[]){"replay", "-q", "--no-plots", "--from", "kind_array.h5", "--out",
                                           "kind_out.h5", NULL},
                     "kind", "kind_out.h5");
    /* heads=2 without kv_heads: kv_heads follows heads now (it stayed 4: "heads = 2 is not
     * divisible by kv_heads = 4"). */
    const char *model = "layers=1,d=32,heads=2,ffn=32,vocab=16,seq=40,batch=1";
    /* The same recipe twice ran the whole replay, then failed creating its HDF5 group (exit 1). */
    expect_bad_input("replay, a recipe given twice",
                     (const char *const[]){"replay", "--quiet", "--steps", "1", "--pretrain", "0", "--model",
                                           model, "--recipe", "bf16", "--recipe", "bf16", "--out",
                                           "replayed.h5", "--no-plots", NULL},
                     "given twice", "replayed.h5");
    expect_bad_input("replay --out replayed.npy",
                     (const char *const[]){"replay", "--quiet", "--steps", "1", "--pretrain", "0", "--model",
                                           model, "--recipe", "bf16", "--out", "replayed.npy", "--no-plots",
                                           NULL},
                     ".h5", "replayed.npy");
    /* A sequence too short for the task's problems failed in the run with exit 1. */
    expect_bad_input("replay, seq too short for the task",
                     (const char *const[]){"replay", "--quiet", "--steps", "1", "--pretrain", "0", "--model",
                                           "layers=1,d=32,heads=2,ffn=32,vocab=16,seq=16,batch=1", "--recipe",
                                           "bf16", "--out", "replayed.h5", "--no-plots", NULL},
                     "seq = 16", "replayed.h5");
    /* A --plots that cannot be a directory failed only after the whole run. */
    expect_bad_input("replay --plots FILE",
                     (const char *const[]){"replay", "--quiet", "--steps", "1", "--pretrain", "0", "--model",
                                           model, "--recipe", "bf16", "--out", "replayed.h5", "--plots",
                                           "small.npy", NULL},
                     "not a directory", "replayed.h5");
    expect_bad_input("replay --plots FILE/SUB",
                     (const char *const[]){"replay", "--quiet", "--steps", "1", "--pretrain", "0", "--model",
                                           model, "--recipe", "bf16", "--out", "replayed.h5", "--plots",
                                           "small.npy/plots", NULL},
                     "cannot create", "replayed.h5");
    /* --pretrain was silently ignored with --from (the capture's weights are the start). */
    expect_bad_input("replay --from with --pretrain",
                     (const char *const[]){"replay", "--quiet", "--from", "cap.h5", "--pretrain", "3",
                                           "--out", "replayed.h5", "--no-plots", NULL},
                     "--pretrain", "replayed.h5");
    char err[4096];
    int rc = run_fpsim((const char *const[]){"replay", "--quiet", "--steps", "1", "--pretrain", "0",
                                             "--no-local", "--model", model, "--recipe", "bf16", "--out",
                                             "replayed.h5", "--no-plots", NULL},
                       err, sizeof err);
    TEST_CHECK(&tc, rc == 0 && io_dir_entries(dir, "replayed.h5") == 1,
               "replay, heads=2 without kv_heads: exit %d: %s", rc, err);
    if (rc != 0) return;
    if (system("gnuplot --version >/dev/null 2>&1") != 0) {
        printf("note: no gnuplot: the fpsim plot cases are skipped\n");
        return;
    }

    /* A good file: every output renamed onto its name, no temporary left. */
    char plotout[1200];
    scratch_path(plotout, sizeof plotout, "plotout");
    rc = run_fpsim((const char *const[]){"plot", "--quiet", "replayed.h5", "--outdir", "plotout", NULL}, err,
                   sizeof err);
    TEST_CHECK(&tc,
               rc == 0 && io_dir_entries(plotout, "gemm_error_fprop.png") == 1 &&
                   io_dir_entries(plotout, ".tmp.") == 0,
               "plot of a good file: exit %d: %s", rc, err);
    io_remove_dir(plotout);

    /* The fp64 control alone: every error exactly 0, which a log axis cannot show; gnuplot
     * failed with "all points y value undefined" and the replay exited 1 with no plots. */
    char zeroplots[1200];
    scratch_path(zeroplots, sizeof zeroplots, "zeroplots");
    rc = run_fpsim((const char *const[]){"replay", "--quiet", "--steps", "1", "--pretrain", "0", "--model", model,
                                         "--recipe", "fp64", "--out", "zero.h5", "--plots", "zeroplots", NULL},
                   err, sizeof err);
    TEST_CHECK(&tc, rc == 0 && io_dir_entries(zeroplots, "gemm_error_fprop.png") == 1 &&
                        io_dir_entries(zeroplots, "stream_error.png") == 1,
               "replay --recipe fp64 with plots: exit %d: %s", rc, err);
    io_remove_dir(zeroplots);

    /* Damaged files: one line, exit 2, no output directory (everything is checked first). */
    static const struct {
        results_damage damage;
        const char *label, *needle;
    } cases[] = {
        {DAMAGE_TINY_TABLE, "plot, a 1x1x1x1 layer_gemm_rel_l2", "has dims 1x1x1x1, expected 1x2x2x3"},
        {DAMAGE_HUGE_TABLE, "plot, a 1x200x200x30 layer_gemm_rel_l2", "has dims 1x200x200x30"},
        {DAMAGE_MORE_LAYERS, "plot, 5 layer names for 2-layer data", "expected 1x2x5x3"},
        {DAMAGE_STEPS, "plot, steps = 2 for 1-step data", "expected 2x2x2x3"},
        {DAMAGE_STRING_TABLE, "plot, a string dataset", "holds strings"},
        {DAMAGE_NO_RECIPE, "plot, a listed recipe without its group", "has no group recipes/bf16"},
        {DAMAGE_ALL_NAN, "plot, an all-NaN layer_gemm_rel_l2", "no finite value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TEST_CHECK(&tc, write_damaged_results("replayed.h5", "bad.h5", cases[i].damage) == 0,
                   "%s: cannot write bad.h5", cases[i].label);
        expect_bad_input(cases[i].label,
                         (const char *const[]){"plot", "--quiet", "bad.h5", "--outdir", "plotout", NULL},
                         cases[i].needle, "plotout");
    }

    /* Scripts missing or rejected by gnuplot: fpsim's line first, nothing left in the directory. */
    setenv("FPSIM_PLOT_SCRIPTS", "no-such-dir", 1);
    expect_bad_input("plot, FPSIM_PLOT_SCRIPTS pointing nowhere",
                     (const char *const[]){"plot", "--quiet", "replayed.h5", "--outdir", "plotout", NULL},
                     "cannot read plot script", "plotout");
    char scripts[1200];
    scratch_path(scripts, sizeof scripts, "badgp");
    TEST_CHECK(&tc, write_broken_scripts("badgp") == 0, "%s", "cannot write the broken scripts");
    setenv("FPSIM_PLOT_SCRIPTS", scripts, 1);
    rc = run_fpsim((const char *const[]){"plot", "--quiet", "replayed.h5", "--outdir", "plotout", NULL}, err,
                   sizeof err);
    unsetenv("FPSIM_PLOT_SCRIPTS");
    TEST_CHECK(&tc, rc == 1 && !strncmp(err, "fpsim plot: gnuplot failed", 26),
               "plot, gnuplot failing: exit %d, want 1 and fpsim's line first: %s", rc, err);
    TEST_CHECK(&tc, io_dir_entries(plotout, "") == 0, "plot, gnuplot failing: %d file(s) left in plotout",
               io_dir_entries(plotout, ""));
    io_remove_dir(plotout);
    io_remove_dir(scripts);
}

/* Options that would change nothing are refused (quantize, gemm), and a write over the file-size
 * limit fails cleanly: SIGXFSZ used to kill fpsim with its temporary file left behind. */
/* 1 if the file `name` (in the scratch directory) begins with the .npy magic "\x93NUMPY". */
static int file_starts_with_npy_magic(const char *name)
{
    char path[2048];
    scratch_path(path, sizeof path, name);
    unsigned char head[6] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    const size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n == sizeof head && !memcmp(head, "\x93NUMPY", sizeof head);
}

static void quantize_gemm_option_regressions(void)
{
    /* the shape is checked against every case before the table's header is printed */
    expect_bad_input_shell("bench quantize, a size no MX case takes", "", "bench quantize --size 1x1",
                           "multiple of 32");
    expect_bad_input("quantize, --seed without stochastic rounding",
                     (const char *const[]){"quantize", "-q", "--scheme", "mxfp8-e4m3", "--in", "small.npy", "--seed",
                                           "3", "--out", "q.h5", NULL},
                     "draws no random bits", "q.h5");
    expect_bad_input("quantize, --stream without stochastic rounding",
                     (const char *const[]){"quantize", "-q", "--scheme", "nvfp4", "--in", "small.npy", "--stream",
                                           "1", "--out", "q.h5", NULL},
                     "--stream has no effect", "q.h5");
    expect_bad_input("quantize, --gzip with a .npy output",
                     (const char *const[]){"quantize", "-q", "--scheme", "nvfp4", "--in", "small.npy", "--gzip", "4",
                                           "--out", "q.npy", NULL},
                     "--gzip has no effect", "q.npy");
    expect_bad_input("gemm, a fold order without block scales",
                     (const char *const[]){"gemm", "-q", "--a", "small.npy", "--b", "small.npy", "--accum",
                                           "hopper-qgmma", "--in-format", "f32", "--fold", "fma", "--out",
                                           "fold.npy", NULL},
                     "needs block scales", "fold.npy");
    expect_bad_input("gemm, --fold and fold= together",
                     (const char *const[]){"gemm", "-q", "--a", "small.npy", "--b", "small.npy", "--accum",
                                           "hopper-qgmma:promote=128,fold=fma", "--fold", "mul-add", "--out",
                                           "fold.npy", NULL},
                     "both set the fold order", "fold.npy");
    expect_bad_input("quantize, a scheme key given twice",
                     (const char *const[]){"quantize", "-q", "--scheme", "nvfp4:sr=1,sr=0", "--in", "small.npy",
                                           "--out", "q.h5", NULL},
                     "given twice", "q.h5");
    expect_bad_input("gemm, --out not .npy",
                     (const char *const[]){"gemm", "-q", "--a", "small.npy", "--b", "small.npy", "--accum", "fp32",
                                           "--out", "c.txt", NULL},
                     "must end in .npy", "c.txt");
    expect_bad_input("mismatch, --out not .h5",
                     (const char *const[]){"mismatch", "-q", "--generator", "bf16", "--trainer", "bf16", "--out",
                                           "m.txt", NULL},
                     "must end in .h5 or .hdf5", "m.txt");
    /* An empty option value: verify --only '' matched every case */
    expect_bad_input("verify --only ''", (const char *const[]){"verify", "--only", "", NULL}, "it is empty", NULL);
    /* formats --policies showed Inf codes (7C00/FC00) as ml_dtypes' f16 NaN; numpy's float16 of
     * the quiet NaN 0x7FC00000 is 0x7E00 (and 0xFE00 with the sign) */
    static char listing[32768];
    long listed = -1;
    char lerr[4096];
    const int lrc = run_fpsim_shell("", "formats --policies", lerr, sizeof lerr, listing, sizeof listing, &listed);
    const char *row = strstr(listing, "\nml_dtypes      f16 ");
    const char *eol = row ? strchr(row + 1, '\n') : NULL;
    TEST_CHECK(&tc, lrc == 0 && row && eol && strstr(row, "7E00/FE00*") && strstr(row, "7E00/FE00*") < eol,
               "formats --policies: the ml_dtypes f16 row lacks NaN 7E00/FE00 (exit %d)", lrc);
    /* Input taken in silence before: options and keys without effect; a key given twice in recipe,
     * engine and accumulation texts (scheme texts and model specs already refused it); an empty
     * raw input (it wrote an empty .npy, exit 0); --out naming the input, here or through another
     * spelling (the input was overwritten) */
    TEST_CHECK(&tc, write_text("empty.raw", "", 0) == 0, "%s", "cannot write empty.raw");
    const struct {
        const char *label;
        const char *const *args;
        const char *needle, *output;
    } refused[] = {
        {"replay --bv-seeds without --bias-variance",
         (const char *const[]){"replay", "-q", "--bv-seeds", "4", "--out", "bv.h5", NULL}, "without --bias-variance",
         "bv.h5"},
        {"replay --format with --no-plots",
         (const char *const[]){"replay", "-q", "--no-plots", "--format", "svg", "--out", "bv.h5", NULL},
         "with --no-plots", "bv.h5"},
        {"mismatch, kv_scales=stale without kv=fp8",
         (const char *const[]){"mismatch", "-q", "--generator", "bf16,kv_scales=stale", "--trainer", "bf16", "--out",
                               "stale.h5", NULL},
         "without kv=fp8", "stale.h5"},
        {"gemm, fp64 with splitk",
         (const char *const[]){"gemm", "-q", "--a", "small.npy", "--b", "small.npy", "--accum", "fp64,splitk=2",
                               "--out", "split.npy", NULL},
         "fp64 reference", "split.npy"},
        {"mismatch, --temperature nan",
         (const char *const[]){"mismatch", "-q", "--generator", "bf16", "--trainer", "bf16", "--temperature", "nan",
                               "--out", "temp.h5", NULL},
         "not a finite number", "temp.h5"},
        {"recipes, a key twice", (const char *const[]){"recipes", "te-nvfp4;first_hp=1;first_hp=2", NULL},
         "given twice", NULL},
        {"mismatch, an engine key twice",
         (const char *const[]){"mismatch", "-q", "--generator", "bf16,kv=fp8,kv=hp", "--trainer", "bf16", "--out",
                               "twice.h5", NULL},
         "given twice", "twice.h5"},
        {"gemm, an accumulation option twice",
         (const char *const[]){"gemm", "-q", "--a", "small.npy", "--b", "small.npy", "--accum",
                               "hopper-qgmma,splitk=2,splitk=4", "--out", "twice.npy", NULL},
         "given twice", "twice.npy"},
        {"convert, an empty raw file",
         (const char *const[]){"convert", "--to", "e4m3", "--in", "empty.raw", "--out", "from_empty.npy", NULL},
         "is empty", "from_empty.npy"},
        {"quantize, --out the --in file",
         (const char *const[]){"quantize", "-q", "--scheme", "nvfp4", "--in", "small.npy", "--out", "./small.npy",
                               NULL},
         "would destroy the input", NULL},
        {"convert, --out the --in file",
         (const char *const[]){"convert", "--to", "e4m3", "--in", "small.npy", "--out", "small.npy", NULL},
         "would destroy the input", NULL},
        {"gemm, --out the --b file",
         (const char *const[]){"gemm", "-q", "--a", "small.npy", "--b", "small.npy", "--accum", "fp32", "--out",
                               "small.npy", NULL},
         "would destroy the input", NULL},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        expect_bad_input(refused[i].label, refused[i].args, refused[i].needle, refused[i].output);
    /* A bad FPSIM_THREADS was dropped in silence (all cores instead) */
    expect_bad_input_shell("FPSIM_THREADS=abc", "FPSIM_THREADS=abc", "formats", "FPSIM_THREADS");
    expect_bad_input_shell("FPSIM_THREADS=0", "FPSIM_THREADS=0", "formats", "out of range");
    TEST_CHECK(&tc, file_starts_with_npy_magic("small.npy"), "%s", "small.npy damaged by --out small.npy");
    /* A file's kind follows its name without regard to case: quantize refused --out Q.NPY, and
     * convert wrote raw bytes to it. Both write .npy now. */
    char upper[4096];
    TEST_CHECK(&tc,
               run_fpsim((const char *const[]){"quantize", "-q", "--scheme", "nvfp4", "--in", "small.npy", "--out",
                                               "Q.NPY", NULL},
                         upper, sizeof upper) == 0,
               "quantize --out Q.NPY: %s", upper);
    TEST_CHECK(&tc, file_starts_with_npy_magic("Q.NPY"), "%s", "quantize --out Q.NPY: not a .npy file");
    TEST_CHECK(&tc,
               run_fpsim((const char *const[]){"convert", "--to", "e4m3", "--in", "small.npy", "--out",
                                               "C.NPY", NULL},
                         upper, sizeof upper) == 0,
               "convert --out C.NPY: %s", upper);
    TEST_CHECK(&tc, file_starts_with_npy_magic("C.NPY"), "%s", "convert --out C.NPY: not a .npy file");
    /* ulimit -f 1: 512 bytes, less than any HDF5 file quantize writes (and more than one line of
     * stderr): the write fails (EFBIG), exit 1, one line, nothing left */
    char err[4096];
    long out_bytes = -1;
    const int rc = run_fpsim_shell("ulimit -f 1;", "quantize --scheme nvfp4 --in small.npy --out q.h5 --quiet", err,
                                   sizeof err, NULL, 0, &out_bytes);
    TEST_CHECK(&tc, rc == 1, "quantize over ulimit -f: exit %d, want 1 (stderr: %s)", rc, err);
    TEST_CHECK(&tc, count_lines(err) == 1, "quantize over ulimit -f: %d stderr lines, want 1: %s", count_lines(err),
               err);
    TEST_CHECK(&tc, io_dir_entries(dir, "q.h5") == 0, "%s", "quantize over ulimit -f: q.h5 (or its temporary) left");
}

/* mismatch --plot checks that p and mask pair with g before it writes anything, and writes its
 * data and images in a staging directory moved out only when every plot succeeded. */
/* A copy of the mismatch file `good` in the scratch file `name` whose one configuration is
 * renamed `config` (the group and the root's `configs` list). */
static int write_renamed_config(const char *good, const char *name, const char *config)
{
    char path[1200], group[256];
    scratch_path(path, sizeof path, name);
    if (io_copy_prefix(good, path, 1.0) != 0) return -1;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0) return -1;
    snprintf(group, sizeof group, "configs/%s", config);
    const char *const names[1] = {config};
    int ok = H5Lmove(f, "configs/run", f, group, H5P_DEFAULT, H5P_DEFAULT) >= 0 && H5Adelete(f, "configs") >= 0 &&
             fpsim_h5_attr_strings(f, "configs", names, 1) == FPSIM_OK;
    H5Fclose(f);
    return ok ? 0 : -1;
}

/* Names and paths reach gnuplot as text, never as commands; a stop signal during the plots
 * leaves no staging directory behind. */
static void mismatch_plot_safety(const char *good)
{
    char err[4096];
    /* A configuration name that closed gnuplot's quote ran system() (the file's own command). */
    TEST_CHECK(&tc, write_renamed_config(good, "mm_cmd.h5", "x';system('touch pwned');y='") == 0, "%s",
               "cannot write mm_cmd.h5");
    expect_bad_input("mismatch --plot, a configuration name with gnuplot code",
                     (const char *const[]){"mismatch", "--plot", "mm_cmd.h5", "--plots", "mmcmd", NULL},
                     "not a configuration name", "mmcmd");
    TEST_CHECK(&tc, io_dir_entries(dir, "pwned") == 0, "%s", "mismatch --plot ran a command from the file");
    /* g with 2^32 x 2^32 entries (chunked, none stored): rows x columns x 8 wrapped to a tiny
     * buffer that the read then overran. */
    char huge[1200];
    scratch_path(huge, sizeof huge, "mm_huge.h5");
    int made = io_copy_prefix(good, huge, 1.0) == 0;
    hid_t f = made ? H5Fopen(huge, H5F_ACC_RDWR, H5P_DEFAULT) : -1;
    if (f >= 0) {
        const hsize_t dims[2] = {(hsize_t)1 << 32, (hsize_t)1 << 32}, chunk[2] = {64, 64};
        hid_t space = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
        made = H5Pset_chunk(dcpl, 2, chunk) >= 0 && H5Ldelete(f, "configs/run/g", H5P_DEFAULT) >= 0;
        hid_t d = made ? H5Dcreate2(f, "configs/run/g", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
        made = d >= 0;
        if (d >= 0) H5Dclose(d);
        H5Pclose(dcpl);
        H5Sclose(space);
        H5Fclose(f);
    }
    TEST_CHECK(&tc, made, "%s", "cannot write mm_huge.h5");
    expect_bad_input("mismatch --plot, g of 2^64 entries",
                     (const char *const[]){"mismatch", "--plot", "mm_huge.h5", "--plots", "mmhuge", NULL},
                     "over 2^27 entries", "mmhuge");
    /* Paths with a single quote (refused before, when they were not quoted). */
    int rc = run_fpsim((const char *const[]){"mismatch", "--plot", "mm.h5", "--plots", "it's plots", NULL}, err,
                       sizeof err);
    char quoted[1200];
    scratch_path(quoted, sizeof quoted, "it's plots");
    TEST_CHECK(&tc, rc == 0 && io_dir_entries(quoted, ".png") == 4,
               "mismatch --plots with a quote: exit %d, %d images (want 4): %s", rc, io_dir_entries(quoted, ".png"),
               err);
    io_remove_dir(quoted);
    /* SIGTERM while gnuplot draws (a script that pauses): fpsim ends by that signal, and neither
     * the staging directory nor any output is left. */
    char slow[1200];
    scratch_path(slow, sizeof slow, "mmslow");
    int ok = mkdir(slow, 0755) == 0;
    const char *pause = "pause 20\n";
    ok = ok && write_text("mmslow/mismatch_hist.gp", pause, strlen(pause)) == 0;
    TEST_CHECK(&tc, ok, "%s", "cannot write the pausing script");
    setenv("FPSIM_PLOT_SCRIPTS", slow, 1);
    const pid_t pid = start_fpsim((const char *const[]){"mismatch", "--plot", "mm.h5", "--plots", "mmstop", NULL});
    unsetenv("FPSIM_PLOT_SCRIPTS");
    char stop_dir[1200];
    scratch_path(stop_dir, sizeof stop_dir, "mmstop");
    int staged = 0; /* the data file is in the staging directory, not in mmstop itself */
    for (int i = 0; i < 500 && !staged; i++) {
        char sub[1600];
        DIR *d = opendir(stop_dir);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (!strncmp(e->d_name, ".mismatch-plot-", 15)) {
                snprintf(sub, sizeof sub, "%s/%s", stop_dir, e->d_name);
                staged = io_dir_entries(sub, "mismatch_hist.dat") > 0;
            }
        if (d) closedir(d);
        if (!staged) usleep(10000);
    }
    TEST_CHECK(&tc, staged, "%s", "mismatch --plot with a pausing script: no staged data file within 5 s");
    usleep(200000); /* gnuplot started on it */
    kill(pid, SIGTERM);
    const int status = wait_fpsim(pid, err, sizeof err);
    TEST_CHECK(&tc, status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM,
               "mismatch --plot stopped by SIGTERM: wait status %d, want death by SIGTERM: %s", status, err);
    TEST_CHECK(&tc, io_dir_entries(stop_dir, "") == 0, "mismatch --plot stopped by SIGTERM: %d entries left in mmstop",
               io_dir_entries(stop_dir, ""));
    io_remove_dir(stop_dir);
    io_remove_dir(slow);
}

static void mismatch_plot_regressions(void)
{
    if (system("gnuplot --version >/dev/null 2>&1") != 0) {
        printf("note: no gnuplot: the mismatch --plot cases are skipped\n");
        return;
    }
    char err[4096];
    int rc = run_fpsim((const char *const[]){"mismatch", "-q", "--generator", "bf16", "--trainer", "fp32", "--model",
                                             "layers=1,d=32,heads=2,ffn=32,vocab=16,seq=40,batch=1", "--steps", "1",
                                             "--sample", "2", "--pretrain", "0", "--out", "mm.h5", NULL},
                       err, sizeof err);
    TEST_CHECK(&tc, rc == 0, "mismatch run for the plot cases: exit %d: %s", rc, err);
    if (rc != 0) return;
    /* identical engines: g = p on every token, which the log axes of the scatter and sequence
     * plots could not show (gnuplot: "all points y value undefined", exit 1) */
    rc = run_fpsim((const char *const[]){"mismatch", "-q", "--generator", "bf16", "--trainer", "bf16", "--model",
                                         "layers=1,d=32,heads=2,ffn=32,vocab=16,seq=40,batch=1", "--steps", "1",
                                         "--sample", "2", "--pretrain", "0", "--no-attribution", "--out", "same.h5",
                                         NULL},
                   err, sizeof err);
    TEST_CHECK(&tc, rc == 0, "mismatch of identical engines: exit %d: %s", rc, err);
    char sameplots[1200];
    scratch_path(sameplots, sizeof sameplots, "sameplots");
    rc = run_fpsim((const char *const[]){"mismatch", "--plot", "same.h5", "--plots", "sameplots", NULL}, err,
                   sizeof err);
    TEST_CHECK(&tc, rc == 0 && io_dir_entries(sameplots, "mismatch_scatter.png") == 1 &&
                        io_dir_entries(sameplots, "mismatch_seqlen.png") == 1,
               "mismatch --plot of identical engines: exit %d: %s", rc, err);
    io_remove_dir(sameplots);
    char good[1200], bad[1200];
    scratch_path(good, sizeof good, "mm.h5");
    scratch_path(bad, sizeof bad, "mm_bad.h5");
    TEST_CHECK(&tc, io_copy_prefix(good, bad, 1.0) == 0, "%s", "cannot copy mm.h5");
    /* configs/run/p (run: the configuration's name for one --generator/--trainer pair) as 1 x 1 */
    hid_t f = H5Fopen(bad, H5F_ACC_RDWR, H5P_DEFAULT);
    const size_t one[2] = {1, 1};
    const double zero = 0.0;
    const int damaged = f >= 0 && H5Ldelete(f, "configs/run/p", H5P_DEFAULT) >= 0 &&
                        fpsim_h5_write(f, "configs/run/p", FPSIM_H5_F64, 2, one, &zero, 0) == FPSIM_OK;
    if (f >= 0) H5Fclose(f);
    TEST_CHECK(&tc, damaged, "%s", "cannot damage mm_bad.h5");
    expect_bad_input("mismatch --plot, p not the shape of g",
                     (const char *const[]){"mismatch", "--plot", "mm_bad.h5", "--plots", "mmplots", NULL}, "has dims",
                     "mmplots");
    /* gnuplot rejecting a script: fpsim's line first (quoting gnuplot), nothing in the directory */
    const char *text = "plot no_such_function(x)\n";
    const char *const scripts[] = {"mismatch_hist.gp", "mismatch_scatter.gp", "mismatch_seqlen.gp",
                                   "mismatch_attr.gp", "mismatch_common.gp"};
    char dirpath[1200];
    scratch_path(dirpath, sizeof dirpath, "mmgp");
    int ok = mkdir(dirpath, 0755) == 0;
    for (int i = 0; i < 5 && ok; i++) {
        char name[64];
        snprintf(name, sizeof name, "mmgp/%.40s", scripts[i]);
        ok = write_text(name, text, strlen(text)) == 0;
    }
    TEST_CHECK(&tc, ok, "%s", "cannot write the broken mismatch scripts");
    setenv("FPSIM_PLOT_SCRIPTS", dirpath, 1);
    rc = run_fpsim((const char *const[]){"mismatch", "--plot", "mm.h5", "--plots", "mmplots2", NULL}, err, sizeof err);
    unsetenv("FPSIM_PLOT_SCRIPTS");
    TEST_CHECK(&tc, rc == 1 && !strncmp(err, "fpsim mismatch: --plot: gnuplot failed", 38) && count_lines(err) == 1,
               "mismatch --plot, gnuplot failing: exit %d, want 1 and one line of fpsim's: %s", rc, err);
    char plots2[1200];
    scratch_path(plots2, sizeof plots2, "mmplots2");
    TEST_CHECK(&tc, io_dir_entries(plots2, "") == 0, "mismatch --plot, gnuplot failing: %d entries left in mmplots2",
               io_dir_entries(plots2, ""));
    /* the good file plots, and leaves exactly its outputs (no staging directory) */
    rc = run_fpsim((const char *const[]){"mismatch", "--plot", "mm.h5", "--plots", "mmplots3", NULL}, err, sizeof err);
    char plots3[1200];
    scratch_path(plots3, sizeof plots3, "mmplots3");
    TEST_CHECK(&tc, rc == 0 && io_dir_entries(plots3, ".png") == 4 && io_dir_entries(plots3, ".mismatch-plot") == 0,
               "mismatch --plot: exit %d, %d images (want 4), %d staging entries: %s", rc,
               io_dir_entries(plots3, ".png"), io_dir_entries(plots3, ".mismatch-plot"), err);
    io_remove_dir(plots2);
    io_remove_dir(plots3);
    io_remove_dir(dirpath);
    mismatch_plot_safety(good);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_robust_cli PATH/TO/fpsim\n");
        return 2;
    }
    static char bin[4096];
    if (!realpath(argv[1], bin)) snprintf(bin, sizeof bin, "%s", argv[1]); /* runs from the scratch dir */
    fpsim_bin = bin;
    if (access(fpsim_bin, X_OK) != 0) {
        fprintf(stderr, "test_robust_cli: %s is not an executable\n", fpsim_bin);
        return 1;
    }
    if (io_make_temp_dir(dir, sizeof dir, "robust_cli")) {
        fprintf(stderr, "cannot create a scratch directory\n");
        return 1;
    }
    char small[1200];
    snprintf(small, sizeof small, "%s/small.npy", dir);
    const size_t shape[2] = {4, 32};
    float x[128];
    for (int i = 0; i < 128; i++) x[i] = (float)(i % 7) - 3.0f;
    char small_raw[1200];
    snprintf(small_raw, sizeof small_raw, "%s/small.raw", dir);
    FILE *raw = fopen(small_raw, "wb");
    const int raw_ok = raw && fwrite(x, sizeof x, 1, raw) == 1;
    if (raw) fclose(raw);
    if (!raw_ok || fpsim_npy_save(small, FPSIM_NPY_F32, 2, shape, x) || write_lying_npy("huge.npy", "(1000000000, 4)")) {
        fprintf(stderr, "cannot write the inputs in %s\n", dir);
        io_remove_dir(dir);
        return 1;
    }

    /* A .npy header claiming far more data than the file holds: "truncated" (bad input, exit
     * 2) before any allocation, not "out of memory" (exit 1). */
    expect_bad_input("quantize, lying .npy header",
                     (const char *const[]){"quantize", "--quiet", "--scheme", "nvfp4", "--in", "huge.npy", "--out",
                                           "q.h5", NULL},
                     "truncated", "q.h5");
    expect_bad_input("gemm, lying .npy header",
                     (const char *const[]){"gemm", "--quiet", "--a", "huge.npy", "--b", "small.npy", "--accum",
                                           "fp32", "--out", "c.npy", NULL},
                     "truncated", "c.npy");
    expect_bad_input("convert, lying .npy header",
                     (const char *const[]){"convert", "--to", "e4m3", "--in", "huge.npy", "--out", "codes.npy",
                                           NULL},
                     "truncated", "codes.npy");
    /* A raw --shape far larger than the file: refused from the file size, without allocating. */
    expect_bad_input("quantize, raw shape larger than the file",
                     (const char *const[]){"quantize", "--quiet", "--scheme", "nvfp4", "--in", "small.raw",
                                           "--shape", "400000x400000", "--out", "q.h5", NULL},
                     "truncated", "q.h5");
    /* --shape with a .npy file: its header is not data */
    expect_bad_input("quantize, --shape with a .npy input",
                     (const char *const[]){"quantize", "--quiet", "--scheme", "nvfp4", "--in", "small.npy",
                                           "--shape", "4x32", "--out", "q.h5", NULL},
                     "--shape is for raw input", "q.h5");
    /* " -1" was read as 2^64-1 (strtoull skips the space, then negates). */
    expect_bad_input("quantize, --seed ' -1'",
                     (const char *const[]){"quantize", "--quiet", "--scheme", "nvfp4", "--in", "small.npy",
                                           "--seed", " -1", "--out", "q.h5", NULL},
                     "--seed", "q.h5");
    expect_bad_input("convert, --seed ' -1'",
                     (const char *const[]){"convert", "--to", "e4m3", "--round", "sr", "--in", "small.npy",
                                           "--seed", " -1", "--out", "codes.npy", NULL},
                     "--seed", "codes.npy");
    /* --seed / --sr-bits without --round sr were ignored: round-to-nearest bits came back. */
    expect_bad_input("convert --sr-bits without --round sr",
                     (const char *const[]){"convert", "--to", "e2m1", "--sr-bits", "5", "--in", "small.npy", "--out",
                                           "codes.npy", NULL},
                     "--round sr", "codes.npy");
    expect_bad_input("convert --seed without --round sr",
                     (const char *const[]){"convert", "--to", "e2m1", "--seed", "7", "--in", "small.npy", "--out",
                                           "codes.npy", NULL},
                     "--round sr", "codes.npy");
    expect_bad_input("quantize, --shape ' 4x32'",
                     (const char *const[]){"quantize", "--quiet", "--scheme", "nvfp4", "--in", "small.npy",
                                           "--shape", " 4x32", "--out", "q.h5", NULL},
                     "--shape", "q.h5");
    /* A bare `fpsim gemm` printed the whole usage on stderr: one line now, like the others. */
    expect_bad_input("gemm without arguments", (const char *const[]){"gemm", NULL}, "missing --a", NULL);
    /* A custom recipe with an unknown scheme: the message names it once, intact. */
    expect_bad_input("recipes, unknown scheme in a custom recipe",
                     (const char *const[]){"recipes", "te-nvfp4;g=bogus", NULL}, "unknown scheme 'bogus'", NULL);

    /* Outputs are renamed onto their name: a directory, a FIFO (like /dev/null, a device) or a
     * symbolic link (like /dev/stdout) there was replaced by a regular file, as root even in /dev.
     * Refused before the run now, and left as they were. */
    {
        char sub[1200], fifo[1200], link[1200], target[1200];
        snprintf(sub, sizeof sub, "%s/outdir", dir);
        snprintf(fifo, sizeof fifo, "%s/fifo.npy", dir);
        snprintf(target, sizeof target, "%s/target.npy", dir);
        snprintf(link, sizeof link, "%s/link.npy", dir);
        const int made = mkdir(sub, 0755) == 0 && mkfifo(fifo, 0644) == 0 && io_write_bytes(target, "x", 1) == 0 &&
                         symlink("target.npy", link) == 0;
        TEST_CHECK(&tc, made, "%s", "cannot make the directory, FIFO and link outputs");
        expect_bad_input("convert --out DIRECTORY",
                         (const char *const[]){"convert", "--to", "e4m3", "--in", "small.npy", "--out", "outdir", NULL},
                         "is a directory", NULL);
        expect_bad_input("gemm --out FIFO",
                         (const char *const[]){"gemm", "--quiet", "--a", "small.npy", "--b", "small.npy", "--accum",
                                               "fp32", "--out", "fifo.npy", NULL},
                         "not a regular file", NULL);
        expect_bad_input("quantize --out SYMLINK.npy",
                         (const char *const[]){"quantize", "--quiet", "--scheme", "nvfp4", "--in", "small.npy",
                                               "--out", "link.npy", NULL},
                         "symbolic link", NULL);
        /* A directory as input: "error reading" with exit 1 (convert) or "neither .npy nor
         * HDF5" before; now named as a directory, exit 2. */
        expect_bad_input("convert --in DIRECTORY",
                         (const char *const[]){"convert", "--to", "e4m3", "--in", "outdir", "--out", "codes.bin", NULL},
                         "is a directory", "codes.bin");
        expect_bad_input("quantize --in DIRECTORY",
                         (const char *const[]){"quantize", "--quiet", "--scheme", "nvfp4", "--in", "outdir", "--out",
                                               "q.h5", NULL},
                         "is a directory", "q.h5");
        expect_bad_input("gemm --a DIRECTORY",
                         (const char *const[]){"gemm", "--quiet", "--a", "outdir", "--b", "small.npy", "--accum", "fp32",
                                               "--out", "c.npy", NULL},
                         "is a directory", "c.npy");
        struct stat sb;
        TEST_CHECK(&tc, lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "%s", "the FIFO was replaced");
        TEST_CHECK(&tc, lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode), "%s", "the symbolic link was replaced");
        TEST_CHECK(&tc, io_dir_entries(dir, ".tmp.") == 0, "%s", "a temporary output was left behind");
        remove(link);
        remove(target);
        remove(fifo);
        rmdir(sub);
    }

    /* A damaged HDF5 input: HDF5's exit handler printed "HDF5: infinite loop closing library"
     * and a line of package names after fpsim's error line. Whether this flip breaks the file
     * depends on the HDF5 version; if it is read, it must be read cleanly. */
    if (write_damaged_h5("damaged.h5") == 0) {
        char err[4096];
        const int rc = run_fpsim((const char *const[]){"quantize", "--quiet", "--scheme", "nvfp4", "--in",
                                                       "damaged.h5", "--out", "q.h5", NULL},
                                 err, sizeof err);
        TEST_CHECK(&tc, rc == 0 || rc == 2, "quantize damaged.h5: exit %d: %s", rc, err);
        TEST_CHECK(&tc, count_lines(err) == (rc == 0 ? 0 : 1), "quantize damaged.h5: exit %d with stderr: %s", rc,
                   err);
        TEST_CHECK(&tc, rc == 0 || io_dir_entries(dir, "q.h5") == 0, "%s", "quantize damaged.h5 left q.h5");
        char q[1200];
        snprintf(q, sizeof q, "%s/q.h5", dir);
        remove(q);
    } else {
        TEST_CHECK(&tc, 0, "%s", "cannot write damaged.h5");
    }

    /* "--seed 010" is ten, not octal eight: the seed recorded in the file says so. */
    {
        char err[4096];
        const int rc = run_fpsim((const char *const[]){"quantize", "--quiet", "--scheme", "nvfp4:sr=1", "--in",
                                                       "small.npy", "--seed", "010", "--out", "q.h5", NULL},
                                 err, sizeof err);
        TEST_CHECK(&tc, rc == 0, "quantize --seed 010: exit %d: %s", rc, err);
        char q[1200];
        snprintf(q, sizeof q, "%s/q.h5", dir);
        hid_t f;
        int64_t seed = -1;
        if (rc == 0 && fpsim_h5_open_read(&f, q) == FPSIM_OK) {
            fpsim_h5_read_attr_int64(f, ".", "seed", &seed);
            fpsim_h5_close_read(f);
        }
        TEST_CHECK(&tc, seed == 10, "quantize --seed 010 recorded seed %lld, want 10", (long long)seed);
        remove(q);
    }

    convert_verify_mismatch_regressions();
    replay_plot_regressions();
    quantize_gemm_option_regressions();
    mismatch_plot_regressions();

    io_remove_dir(dir);
    return test_summary(&tc);
}
