/* test_gemm_cli.c: `fpsim gemm` as a user drives it (the fpsim binary is argv[1]).
 *
 *  - the result equals the library call with the same model and scales (layout, scales and
 *    block scales are plumbed through unchanged), per-tensor and VEC128/BLK128x128;
 *  - bad input gives exit 2, one line on stderr naming the problem, and no output file:
 *    wrong dtype, wrong rank, K mismatch, a value not exact in the format, unknown model or
 *    format, block scales of the wrong shape, missing input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fpsim_gemm.h"
#include "fpsim_npy.h"

static int failures = 0;
#define CHECK(cond, ...)                                                                                           \
    do {                                                                                                           \
        if (!(cond)) {                                                                                             \
            failures++;                                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                   \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fprintf(stderr, "\n");                                                                                 \
        }                                                                                                          \
    } while (0)

static const char *fpsim_bin;
static char dir[256];

static const char *path(const char *name)
{
    static char buf[8][512];
    static int k = 0;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Run `fpsim gemm ARGS`; returns the exit status; stderr goes to dir/err.txt. */
static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd %s && %s gemm %s --quiet 2>err.txt >out.txt", dir, fpsim_bin, args);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int stderr_lines(char *first, size_t cap)
{
    FILE *f = fopen(path("err.txt"), "r");
    int n = 0;
    char line[2048];
    first[0] = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (n++ == 0) snprintf(first, cap, "%s", line);
    }
    if (f) fclose(f);
    return n;
}

static void expect_usage_error(const char *args, const char *needle)
{
    remove(path("C.npy"));
    int rc = run(args);
    char first[2048];
    int lines = stderr_lines(first, sizeof first);
    CHECK(rc == 2, "'%s': exit %d, expected 2", args, rc);
    CHECK(lines == 1, "'%s': %d lines on stderr, expected one", args, lines);
    CHECK(strstr(first, needle) != NULL, "'%s': message '%s' does not mention '%s'", args, first, needle);
    CHECK(access(path("C.npy"), F_OK) != 0, "'%s': an output file was left behind", args);
}

static uint64_t rng = 12345;
static float rand_e4m3(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    unsigned s = (rng >> 63) & 1, e = 3 + (rng >> 40) % 8, m = (rng >> 20) & 7;
    return (float)((s ? -1 : 1) * ldexp(8 + m, (int)e - 10));
}

static void save(const char *name, size_t r, size_t c, const float *x)
{
    size_t shape[2] = {r, c};
    if (fpsim_npy_save(path(name), FPSIM_NPY_F32, 2, shape, x) != FPSIM_OK) {
        fprintf(stderr, "cannot write %s\n", name);
        exit(1);
    }
}

static int same_as_library(const char *args, const float *want, size_t M, size_t N)
{
    remove(path("C.npy"));
    int rc = run(args);
    if (rc != 0) {
        char first[2048];
        stderr_lines(first, sizeof first);
        fprintf(stderr, "'%s' failed (%d): %s", args, rc, first);
        return 0;
    }
    fpsim_npy_info info;
    void *data = NULL;
    if (fpsim_npy_load(path("C.npy"), &info, &data) != FPSIM_OK) return 0;
    int ok = info.dtype == FPSIM_NPY_F32 && info.ndim == 2 && info.shape[0] == M && info.shape[1] == N &&
             !memcmp(data, want, M * N * sizeof(float));
    free(data);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_gemm_cli PATH/TO/fpsim\n");
        return 2;
    }
    fpsim_bin = argv[1];
    snprintf(dir, sizeof dir, "/tmp/fpsim_test_gemm_cli.%d", (int)getpid());
    char mk[300];
    snprintf(mk, sizeof mk, "mkdir -p %s", dir);
    if (system(mk)) return 1;

    enum { M = 4, N = 3, K = 256 };
    float A[M * K], B[N * K], C[M * N];
    for (int i = 0; i < M * K; i++) A[i] = rand_e4m3();
    for (int i = 0; i < N * K; i++) B[i] = rand_e4m3();
    save("A.npy", M, K, A);
    save("B.npy", N, K, B);

    /* Per-tensor, fast and promoted. */
    fpsim_accum fast, prom;
    fpsim_accum_parse(&fast, "hopper-qgmma:fast");
    fpsim_accum_parse(&prom, "hopper-qgmma:promote=128");
    fpsim_gemm_tn(C, A, B, M, N, K, &fast, 0.375f, 3.0f, FPSIM_E4M3, 1);
    CHECK(same_as_library("--a A.npy --b B.npy --accum hopper-qgmma:fast --scale-a 0.375 --scale-b 3 --out C.npy", C,
                          M, N),
          "fast: CLI result differs from fpsim_gemm_tn");
    fpsim_gemm_tn(C, A, B, M, N, K, &prom, 1.0f, 1.0f, FPSIM_E4M3, 1);
    CHECK(same_as_library("--a A.npy --b B.npy --accum hopper-qgmma --in-format e4m3 --out C.npy --threads 2", C, M, N),
          "promoted: CLI result differs from fpsim_gemm_tn");

    /* Block scales: VEC128 for A (M x 2), BLK128x128 for B (1 x 2). */
    float sa[M * 2], sb[2] = {0.75f, 1.25f};
    for (int i = 0; i < M * 2; i++) sa[i] = 0.5f + 0.125f * (float)i;
    save("SA.npy", M, 2, sa);
    save("SB.npy", 1, 2, sb);
    fpsim_gemm_scales gsa = {sa, 1}, gsb = {sb, 128};
    fpsim_accum folded = prom;
    folded.fold = FPSIM_FOLD_MUL_ADD;
    fpsim_gemm_tn_blockscaled(C, A, B, M, N, K, &folded, &gsa, &gsb, FPSIM_E4M3, 1);
    CHECK(same_as_library("--a A.npy --b B.npy --accum hopper-qgmma --scale-a SA.npy --scale-b SB.npy --fold mul-add "
                          "--out C.npy",
                          C, M, N),
          "block-scaled: CLI result differs from fpsim_gemm_tn_blockscaled");

    /* Bad input. */
    float bad[M * K];
    memcpy(bad, A, sizeof bad);
    bad[2 * K + 5] = 0.1f;
    save("Abad.npy", M, K, bad);
    expect_usage_error("--a Abad.npy --b B.npy --accum hopper-qgmma:fast --out C.npy", "row 2: element 5");
    save("Bk.npy", N, K - 16, B);
    expect_usage_error("--a A.npy --b Bk.npy --accum hopper-qgmma:fast --out C.npy", "K mismatch");
    {
        double d[4] = {1, 2, 3, 4};
        size_t shape[2] = {2, 2};
        fpsim_npy_save(path("A64.npy"), FPSIM_NPY_F64, 2, shape, d);
        size_t shape3[3] = {1, 2, 2};
        float f[4] = {1, 2, 3, 4};
        fpsim_npy_save(path("A3.npy"), FPSIM_NPY_F32, 3, shape3, f);
    }
    expect_usage_error("--a A64.npy --b B.npy --accum fp64 --out C.npy", "float32");
    expect_usage_error("--a A3.npy --b B.npy --accum fp64 --out C.npy", "2-D");
    expect_usage_error("--a A.npy --b B.npy --accum qgmma --out C.npy", "hopper-qgmma:fast");
    expect_usage_error("--a A.npy --b B.npy --accum hopper-qgmma --in-format e3m4 --out C.npy", "e5m2");
    expect_usage_error("--a A.npy --b B.npy --accum hopper-qgmma --scale-a B.npy --scale-b SB.npy --out C.npy",
                       "VEC128");
    expect_usage_error("--a A.npy --b B.npy --accum hopper-qgmma --scale-a SA.npy --out C.npy", "block scales");
    expect_usage_error("--a A.npy --b B.npy --accum hopper-qgmma --scale-a nan --out C.npy", "--scale-a");
    expect_usage_error("--a missing.npy --b B.npy --accum fp64 --out C.npy", "missing.npy");
    expect_usage_error("--a A.npy --b B.npy --accum hopper-qgmma:fast --scale-a SA.npy --scale-b SB.npy --out C.npy",
                       "promote");
    /* Scales that are not positive normal float32 numbers: 1e-50 rounded to 0 and gave an all-zero
     * C with exit 0. */
    expect_usage_error("--a A.npy --b B.npy --accum hopper-qgmma --scale-a 1e-50 --out C.npy", "1e-50 is 0 in float32");
    expect_usage_error("--a A.npy --b B.npy --accum hopper-qgmma --scale-b -2 --out C.npy", "positive normal");
    expect_usage_error("--a A.npy --b B.npy --accum hopper-qgmma --scale-a 1e-39 --out C.npy", "positive normal");
    /* split-K beyond the chunks K has (K = 256: two units of 128; one of 512 with a BLK128x128
     * operand) changes nothing: refused, naming both */
    expect_usage_error("--a A.npy --b B.npy --accum hopper-qgmma,splitk=257 --out C.npy", "splitk=257");
    expect_usage_error("--a A.npy --b B.npy --accum hopper-qgmma,splitk=3 --out C.npy", "2 chunk(s) that K=256");
    expect_usage_error("--a A.npy --b B.npy --accum hopper-qgmma,splitk=2 --scale-a SA.npy --scale-b SB.npy --out C.npy",
                       "1 chunk(s) that K=256");
    {
        fpsim_accum split2;
        fpsim_accum_parse(&split2, "hopper-qgmma,splitk=2");
        fpsim_gemm_tn(C, A, B, M, N, K, &split2, 1.0f, 1.0f, FPSIM_E4M3, 1);
        CHECK(same_as_library("--a A.npy --b B.npy --accum hopper-qgmma,splitk=2 --out C.npy", C, M, N),
              "splitk=2 (the most K=256 has): CLI result differs from fpsim_gemm_tn");
    }
    CHECK(run("--help") == 0, "--help must succeed");

    snprintf(mk, sizeof mk, "rm -rf %s", dir);
    if (system(mk)) return 1;
    if (failures) {
        fprintf(stderr, "test_gemm_cli: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gemm_cli: all checks passed\n");
    return 0;
}
