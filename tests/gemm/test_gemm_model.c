/* test_gemm_model.c: the accumulation models against measured H200 results and independent sums.
 *
 *  1. gpu-numerics.md 3.3: every case measured on the H200 (QGMMA e4m3/e5m2 via wgmma, mma.sync
 *     e4m3, HGMMA bf16) is reproduced by the block model (expected values are the measured ones).
 *  2. The threaded CPU GEMM equals a plain scalar loop over the same model, at 1 and 3 threads.
 *  3. The fp64 model equals a long-double sum (exact for these e4m3 inputs) rounded once.
 *  4. promote=128 and fast differ on a case built so they must, with both values worked by hand.
 *  5. Special values (3.2 step 6), exactness checks, model names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_gemm.h"

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

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static fpsim_accum model(const char *name)
{
    fpsim_accum a;
    if (fpsim_accum_parse(&a, name) != FPSIM_OK) {
        fprintf(stderr, "cannot parse model %s: %s\n", name, fpsim_last_error());
        exit(1);
    }
    return a;
}

/* One uniform block as in the H200 probe: c plus n products a*b, all equal. */
static float uniform_block(const char *name, float c, float a, float b, int n, fpsim_format_id fmt)
{
    fpsim_accum m = model(name);
    float va[32], vb[32];
    for (int i = 0; i < n; i++) va[i] = a, vb[i] = b;
    return fpsim_gemm_block(&m, c, va, vb, n, fmt, fmt);
}

static void expect_bits(const char *what, float got, float want)
{
    CHECK(bits_of(got) == bits_of(want), "%s: got %.10g (0x%08x), measured %.10g (0x%08x)", what, (double)got,
          bits_of(got), (double)want, bits_of(want));
}

/* 1. gpu-numerics.md 3.3, column by column. */
static void test_h200_cases(void)
{
    const char *Q = "hopper-qgmma:fast", *S = "mma-sync-fp8", *H = "hopper-hgmma";
    float p15 = ldexpf(1, -15);
    /* products 2^-15 = 2^-8 (e4m3 subnormal) * 2^-7 (subnormal) */
    expect_bits("qgmma c=1, 32 x 2^-15", uniform_block(Q, 1, ldexpf(1, -8), ldexpf(1, -7), 32, FPSIM_E4M3), 1.0f);
    expect_bits("mma.sync c=1, 32 x 2^-15", uniform_block(S, 1, ldexpf(1, -8), ldexpf(1, -7), 32, FPSIM_E4M3),
                1.0f + ldexpf(1, -10));
    expect_bits("qgmma c=1, 32 x 2^-14", uniform_block(Q, 1, ldexpf(1, -7), ldexpf(1, -7), 32, FPSIM_E4M3), 1.0f);
    expect_bits("qgmma c=1, 32 x 2^-13", uniform_block(Q, 1, ldexpf(1, -7), ldexpf(1, -6), 32, FPSIM_E4M3),
                1.0f + ldexpf(1, -8));
    expect_bits("mma.sync c=1, 32 x 2^-13", uniform_block(S, 1, ldexpf(1, -7), ldexpf(1, -6), 32, FPSIM_E4M3),
                1.0f + ldexpf(1, -8));
    float c23 = 1.0f + ldexpf(1, -23);
    expect_bits("qgmma c=1+2^-23, products 0", uniform_block(Q, c23, 0, 0, 32, FPSIM_E4M3), 1.0f);
    expect_bits("mma.sync c=1+2^-23, products 0", uniform_block(S, c23, 0, 0, 32, FPSIM_E4M3), c23);
    expect_bits("qgmma c=1+2^-13, products 0", uniform_block(Q, 1.0f + ldexpf(1, -13), 0, 0, 32, FPSIM_E4M3),
                1.0f + ldexpf(1, -13));
    expect_bits("qgmma c=1+2^-14, products 0", uniform_block(Q, 1.0f + ldexpf(1, -14), 0, 0, 32, FPSIM_E4M3), 1.0f);
    expect_bits("qgmma c=2^24, 32 x 1", uniform_block(Q, ldexpf(1, 24), 1, 1, 32, FPSIM_E4M3), ldexpf(1, 24));
    expect_bits("mma.sync c=2^24, 32 x 1", uniform_block(S, ldexpf(1, 24), 1, 1, 32, FPSIM_E4M3),
                ldexpf(1, 24) + 32);
    expect_bits("qgmma c=2^14, 32 x 1", uniform_block(Q, ldexpf(1, 14), 1, 1, 32, FPSIM_E4M3), ldexpf(1, 14));
    expect_bits("qgmma c=1, 32 x -2^-15", uniform_block(Q, 1, -ldexpf(1, -8), ldexpf(1, -7), 32, FPSIM_E4M3), 1.0f);
    expect_bits("mma.sync c=1, 32 x -2^-15", uniform_block(S, 1, -ldexpf(1, -8), ldexpf(1, -7), 32, FPSIM_E4M3),
                1.0f - ldexpf(1, -10));
    {
        float c = 1.0f;
        for (int r = 0; r < 4; r++) c = uniform_block(Q, c, ldexpf(1, -8), ldexpf(1, -7), 32, FPSIM_E4M3);
        expect_bits("qgmma c=1, 4 chained x (32 x 2^-15)", c, 1.0f);
    }
    expect_bits("qgmma c=-0, products 0", uniform_block(Q, -0.0f, 0, 0, 32, FPSIM_E4M3), 0.0f);
    expect_bits("mma.sync c=-0, products 0", uniform_block(S, -0.0f, 0, 0, 32, FPSIM_E4M3), 0.0f);
    expect_bits("qgmma e5m2 c=1, 32 x 2^-22", uniform_block(Q, 1, ldexpf(1, -11), ldexpf(1, -11), 32, FPSIM_E5M2),
                1.0f);
    expect_bits("hgmma bf16 c=1, 16 x 2^-26", uniform_block(H, 1, ldexpf(1, -13), ldexpf(1, -13), 16, FPSIM_BF16),
                1.0f);
    expect_bits("hgmma bf16 c=1, 16 x 2^-25", uniform_block(H, 1, ldexpf(1, -13), ldexpf(1, -12), 16, FPSIM_BF16),
                1.0f + ldexpf(1, -21));
    (void)p15;
}

/* ---- random inputs from an independent decoder (OCP FP8 v1.0 by formula) ---- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* e4m3 code -> value (code 0x7F/0xFF are NaN; callers skip them). */
static float e4m3_value(unsigned code)
{
    int s = (code >> 7) & 1, e = (code >> 3) & 15, m = code & 7;
    double v = e ? ldexp(8 + m, e - 7 - 3) : ldexp(m, -6 - 3);
    return (float)(s ? -v : v);
}

static float e5m2_value(unsigned code)
{
    int s = (code >> 7) & 1, e = (code >> 2) & 31, m = code & 3;
    double v = e ? ldexp(4 + m, e - 15 - 2) : ldexp(m, -14 - 2);
    return (float)(s ? -v : v);
}

/* Random e4m3 value with exponent field in [lo, hi] (so the spread can be chosen). */
static float rand_e4m3(int lo, int hi)
{
    unsigned e = lo + rnd() % (unsigned)(hi - lo + 1), m = rnd() % 8, s = rnd() & 1;
    if (e == 15 && m == 7) m = 6;
    return e4m3_value((s << 7) | (e << 3) | m);
}

static float rand_bf16(void)
{
    /* bf16: top 16 bits of an fp32 with a moderate exponent. */
    uint32_t u = ((rnd() & 0x80FFu) | ((uint32_t)(112 + rnd() % 32) << 7)) << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* 2. Threaded GEMM == scalar loop over the same model (and thread-count independent). */
static void test_gemm_equals_scalar(void)
{
    const size_t M = 7, N = 5, K = 300; /* K not a multiple of 32 or 128 */
    float *A = malloc(M * K * sizeof *A), *B = malloc(N * K * sizeof *B), *A16 = malloc(M * K * sizeof *A),
          *B16 = malloc(N * K * sizeof *B);
    float C1[7 * 5], C3[7 * 5];
    for (size_t i = 0; i < M * K; i++) A[i] = rand_e4m3(0, 15), A16[i] = rand_bf16();
    for (size_t i = 0; i < N * K; i++) B[i] = rand_e4m3(0, 15), B16[i] = rand_bf16();
    const char *names[] = {"hopper-qgmma:fast", "hopper-qgmma:promote=128", "hopper-qgmma:promote=64",
                           "mma-sync-fp8", "fp32:seq", "fp64", "hopper-hgmma"};
    for (size_t t = 0; t < sizeof names / sizeof names[0]; t++) {
        fpsim_accum m = model(names[t]);
        int half = m.kind == FPSIM_ACCUM_HOPPER_HGMMA;
        const float *a = half ? A16 : A, *b = half ? B16 : B;
        fpsim_format_id f = half ? FPSIM_BF16 : FPSIM_E4M3;
        float sa = 0.75f, sb = 1.0f / 3.0f;
        CHECK(fpsim_gemm_tn(C1, a, b, M, N, K, &m, sa, sb, f, 1) == FPSIM_OK, "%s: %s", names[t], fpsim_last_error());
        CHECK(fpsim_gemm_tn(C3, a, b, M, N, K, &m, sa, sb, f, 3) == FPSIM_OK, "%s: %s", names[t], fpsim_last_error());
        int bad = 0;
        for (size_t i = 0; i < M; i++)
            for (size_t n = 0; n < N; n++) {
                double acc = fpsim_gemm_dot(&m, a + i * K, b + n * K, K, f, f);
                float want = m.kind == FPSIM_ACCUM_FP64 ? (float)(acc * ((double)sa * sb))
                                                        : fpsim_gemm_epilogue((float)acc, sa, sb);
                if (bits_of(C1[i * N + n]) != bits_of(want) || bits_of(C3[i * N + n]) != bits_of(want)) bad++;
            }
        CHECK(bad == 0, "%s: %d of %zu GEMM outputs differ from the scalar loop", names[t], bad, M * N);
    }
    free(A), free(B), free(A16), free(B16);
}

/* 3. fp64 model vs an exact long-double sum (e4m3 products are multiples of 2^-18 below 2^18, so
 *    64-bit-significand partial sums of up to 2^10 of them are exact). */
static void test_fp64_exact(void)
{
    fpsim_accum m = model("fp64");
    for (int trial = 0; trial < 200; trial++) {
        float a[256], b[256];
        size_t K = 1 + rnd() % 256;
        for (size_t k = 0; k < K; k++) {
            unsigned ca = rnd() & 0xFF, cb = rnd() & 0xFF;
            if ((ca & 0x7F) == 0x7F) ca ^= 1;
            if ((cb & 0x7F) == 0x7F) cb ^= 1;
            a[k] = e4m3_value(ca), b[k] = e4m3_value(cb);
        }
        long double s = 0;
        for (size_t k = 0; k < K; k++) s += (long double)a[k] * (long double)b[k];
        float want = (float)s, got;
        CHECK(fpsim_gemm_tn(&got, a, b, 1, 1, K, &m, 1.0f, 1.0f, FPSIM_E4M3, 1) == FPSIM_OK, "fp64: %s",
              fpsim_last_error());
        CHECK(bits_of(got) == bits_of(want), "fp64 K=%zu: %.10g vs exact %.10g", K, (double)got, (double)want);
    }
    /* e5m2 with a narrow spread, Neumaier-compensated long double as the oracle. */
    for (int trial = 0; trial < 100; trial++) {
        float a[128], b[128];
        size_t K = 128;
        for (size_t k = 0; k < K; k++) {
            a[k] = e5m2_value(((rnd() & 1) << 7) | ((10 + rnd() % 10) << 2) | (rnd() & 3));
            b[k] = e5m2_value(((rnd() & 1) << 7) | ((10 + rnd() % 10) << 2) | (rnd() & 3));
        }
        long double s = 0, comp = 0;
        for (size_t k = 0; k < K; k++) {
            long double p = (long double)a[k] * b[k], t = s + p;
            comp += fabsl(s) >= fabsl(p) ? (s - t) + p : (p - t) + s;
            s = t;
        }
        float want = (float)(s + comp), got;
        fpsim_gemm_tn(&got, a, b, 1, 1, K, &m, 1.0f, 1.0f, FPSIM_E5M2, 1);
        CHECK(bits_of(got) == bits_of(want), "fp64 e5m2: %.10g vs %.10g", (double)got, (double)want);
    }
}

/* 4. Promotion vs fast, worked by hand. K = 256; a[0] = b[0] = 32 (product 2^10), every other
 *    product 2^-2 * 2^-2 = 2^-4.
 *    fast: after block 0, c = 1024; from then on E = 10, grid 2^-3, so each 2^-4 truncates to 0:
 *          the result stays 1024 to the end.
 *    promote=128: chain 0 as above gives 1024; chain 1 starts at c = 0: 128 x 2^-4 = 8 exactly;
 *          1024 + 8 = 1032.  fp64: 1024 + 255 * 2^-4 = 1039.9375. */
static void test_promotion_differs(void)
{
    enum { K = 256 };
    float a[K], b[K], fast, prom, ref;
    for (int k = 0; k < K; k++) a[k] = b[k] = 0.25f;
    a[0] = b[0] = 32.0f;
    fpsim_accum mf = model("hopper-qgmma:fast"), mp = model("hopper-qgmma:promote=128"), m64 = model("fp64");
    fpsim_gemm_tn(&fast, a, b, 1, 1, K, &mf, 1, 1, FPSIM_E4M3, 1);
    fpsim_gemm_tn(&prom, a, b, 1, 1, K, &mp, 1, 1, FPSIM_E4M3, 1);
    fpsim_gemm_tn(&ref, a, b, 1, 1, K, &m64, 1, 1, FPSIM_E4M3, 1);
    expect_bits("fast accumulation swamps", fast, 1024.0f);
    expect_bits("promotion every 128 recovers chain 1", prom, 1032.0f);
    expect_bits("fp64", ref, 1039.9375f);
    /* The default hopper-qgmma is promote=128. */
    fpsim_accum md = model("hopper-qgmma");
    CHECK(md.promote == 128 && !strcmp(md.name, "hopper-qgmma:promote=128"), "default model is %s", md.name);
}

/* 5a. Special values (gpu-numerics.md 3.2 step 6). */
static void test_special_values(void)
{
    fpsim_accum q = model("hopper-qgmma:fast");
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 1, 1, 1};
    float r = fpsim_gemm_block(&q, 0, a, b, 4, FPSIM_E4M3, FPSIM_E4M3);
    expect_bits("1+2+3+4", r, 10.0f);
    a[2] = NAN;
    CHECK(isnan(fpsim_gemm_block(&q, 0, a, b, 4, FPSIM_E4M3, FPSIM_E4M3)), "NaN operand must give NaN");
    a[2] = INFINITY; /* e5m2 has Inf */
    expect_bits("one +Inf product", fpsim_gemm_block(&q, 0, a, b, 4, FPSIM_E5M2, FPSIM_E5M2), INFINITY);
    a[3] = -INFINITY;
    CHECK(isnan(fpsim_gemm_block(&q, 0, a, b, 4, FPSIM_E5M2, FPSIM_E5M2)), "+Inf with -Inf must give NaN");
    a[3] = 4, b[2] = 0;
    CHECK(isnan(fpsim_gemm_block(&q, 0, a, b, 4, FPSIM_E5M2, FPSIM_E5M2)), "Inf * 0 must give NaN");
    a[2] = 3, b[2] = 1;
    expect_bits("c = -Inf passes", fpsim_gemm_block(&q, -INFINITY, a, b, 4, FPSIM_E4M3, FPSIM_E4M3), -INFINITY);
    a[0] = 1, a[1] = -1, a[2] = 2, a[3] = -2;
    expect_bits("exact cancellation gives +0", fpsim_gemm_block(&q, -0.0f, a, b, 4, FPSIM_E4M3, FPSIM_E4M3), 0.0f);
    /* A negative sum keeps its sign and truncates by magnitude: -(1 + 2^-14) -> -1. */
    a[0] = -1, a[1] = -ldexpf(1, -7), a[2] = -ldexpf(1, -7), a[3] = 0;
    b[0] = 1, b[1] = ldexpf(1, -8), b[2] = 0, b[3] = 0; /* -1 - 2^-15 */
    expect_bits("negative truncation", fpsim_gemm_block(&q, 0, a, b, 4, FPSIM_E4M3, FPSIM_E4M3), -1.0f);
}

/* 5b. Exactness checks and names. */
static void test_inputs_and_names(void)
{
    float ok[3] = {448.0f, -0.001953125f /* 2^-9, min subnormal */, 0.0f};
    CHECK(fpsim_gemm_check_exact(ok, 3, FPSIM_E4M3, "A") == FPSIM_OK, "valid e4m3 rejected: %s", fpsim_last_error());
    float bad1[2] = {1.0f, 0.1f};
    CHECK(fpsim_gemm_check_exact(bad1, 2, FPSIM_E4M3, "A") == FPSIM_EDATA && strstr(fpsim_last_error(), "element 1"),
          "0.1 must be rejected naming element 1 (%s)", fpsim_last_error());
    float bad2[1] = {480.0f};
    CHECK(fpsim_gemm_check_exact(bad2, 1, FPSIM_E4M3, "A") == FPSIM_EDATA, "480 is not e4m3");
    float bad3[1] = {1.125f};
    CHECK(fpsim_gemm_check_exact(bad3, 1, FPSIM_E5M2, "A") == FPSIM_EDATA, "1.125 is not e5m2");
    float inf[1] = {INFINITY};
    CHECK(fpsim_gemm_check_exact(inf, 1, FPSIM_E4M3, "A") == FPSIM_EDATA, "Inf is not e4m3");
    CHECK(fpsim_gemm_check_exact(inf, 1, FPSIM_E5M2, "A") == FPSIM_OK, "Inf is e5m2");
    float sub[1] = {ldexpf(1, -10)};
    CHECK(fpsim_gemm_check_exact(sub, 1, FPSIM_E4M3, "A") == FPSIM_EDATA, "2^-10 is below e4m3's min subnormal");
    fpsim_accum a;
    CHECK(fpsim_accum_parse(&a, "hopper-qgmma:promote=100") == FPSIM_EINVAL, "promote=100 must be rejected");
    CHECK(fpsim_accum_parse(&a, "qgmma") == FPSIM_ENAME && strstr(fpsim_last_error(), "hopper-qgmma:fast"),
          "unknown names must list the valid ones: %s", fpsim_last_error());
    CHECK(fpsim_accum_parse(&a, "hopper-qgmma,fold=mul-add") == FPSIM_OK && a.fold == FPSIM_FOLD_MUL_ADD,
          "fold option");
    float C;
    float x[1] = {1.0f};
    fpsim_accum q = model("hopper-qgmma:fast");
    CHECK(fpsim_gemm_tn(&C, x, x, 1, 1, 1, &q, 1, 1, FPSIM_BF16, 1) == FPSIM_EINVAL, "qgmma with bf16 input");
}

/* 5c. Block scales: unit scales equal the per-tensor promoted GEMM; power-of-two scales act
 *     exactly on each 128-block (checked against separately computed per-block GEMMs). */
static void test_block_scales(void)
{
    enum { M = 3, N = 2, K = 384 };
    float A[M * K], B[N * K], C[M * N], R[M * N];
    for (int i = 0; i < M * K; i++) A[i] = rand_e4m3(3, 10);
    for (int i = 0; i < N * K; i++) B[i] = rand_e4m3(3, 10);
    float ones[M * 3], onesb[N * 3];
    for (int i = 0; i < M * 3; i++) ones[i] = 1;
    for (int i = 0; i < N * 3; i++) onesb[i] = 1;
    fpsim_accum p = model("hopper-qgmma:promote=128");
    fpsim_gemm_scales sa = {ones, 1}, sb = {onesb, 1};
    CHECK(fpsim_gemm_tn_blockscaled(C, A, B, M, N, K, &p, &sa, &sb, FPSIM_E4M3, 2) == FPSIM_OK, "%s",
          fpsim_last_error());
    fpsim_gemm_tn(R, A, B, M, N, K, &p, 1, 1, FPSIM_E4M3, 1);
    int bad = 0;
    for (int i = 0; i < M * N; i++) bad += bits_of(C[i]) != bits_of(R[i]);
    CHECK(bad == 0, "unit VEC128 scales: %d outputs differ from the per-tensor promoted GEMM", bad);
    /* Power-of-two scale 2^kb on K-block kb for A (BLK128x128: one row block), 1 for B:
     * C = sum_kb 2^kb * chain_kb, each chain computed as a K=128 GEMM. */
    float sA[3] = {1, 2, 4};
    fpsim_gemm_scales blk = {sA, 128};
    fpsim_gemm_tn_blockscaled(C, A, B, M, N, K, &p, &blk, &sb, FPSIM_E4M3, 1);
    bad = 0;
    for (int i = 0; i < M; i++)
        for (int n = 0; n < N; n++) {
            float acc = 0;
            for (int kb = 0; kb < 3; kb++) {
                float chain;
                fpsim_gemm_tn(&chain, A + i * K + kb * 128, B + n * K + kb * 128, 1, 1, 128, &p, 1, 1, FPSIM_E4M3, 1);
                acc = acc + chain * sA[kb];
            }
            bad += bits_of(C[i * N + n]) != bits_of(acc);
        }
    CHECK(bad == 0, "BLK128x128 power-of-two scales: %d outputs differ", bad);
    fpsim_accum f = model("hopper-qgmma:fast");
    CHECK(fpsim_gemm_tn_blockscaled(C, A, B, M, N, K, &f, &sa, &sb, FPSIM_E4M3, 1) == FPSIM_EINVAL,
          "fast accumulation with block scales must be refused");
}

/* 5d. fpsim_gemm_blas: every transpose combination and a padded ldc give the bits of
 *     fpsim_gemm_tn on the same matrices laid out by hand. */
static void test_blas_layouts(void)
{
    enum { M = 5, N = 4, K = 96, LDC = 7 };
    float A[M * K], B[N * K], At[K * M], Bt[K * N], want[M * N], C[M * LDC];
    for (int i = 0; i < M * K; i++) A[i] = rand_e4m3(2, 12);
    for (int i = 0; i < N * K; i++) B[i] = rand_e4m3(2, 12);
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) At[k * M + i] = A[i * K + k];
    for (int j = 0; j < N; j++)
        for (int k = 0; k < K; k++) Bt[k * N + j] = B[j * K + k];
    fpsim_accum m = model("hopper-qgmma:fast");
    fpsim_gemm_tn(want, A, B, M, N, K, &m, 0.5f, 3.0f, FPSIM_E4M3, 1);
    fpsim_gemm_args args = {FPSIM_E4M3, FPSIM_E4M3, 0.5f, 3.0f, NULL, NULL, 1};
    for (int ta = 0; ta <= 1; ta++)
        for (int tb = 0; tb <= 1; tb++) {
            /* op(A) = A: A stored M x K; op(A) = A^T: stored K x M (At). op(B) = B: stored K x N
             * (Bt); op(B) = B^T: stored N x K (B). */
            const float *a = ta ? At : A, *b = tb ? B : Bt;
            size_t lda = ta ? M : K, ldb = tb ? K : N;
            for (int i = 0; i < M * LDC; i++) C[i] = -1.0f;
            CHECK(fpsim_gemm_blas(C, LDC, a, lda, ta, b, ldb, tb, M, N, K, &m, &args) == FPSIM_OK, "%s",
                  fpsim_last_error());
            int bad = 0;
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) bad += bits_of(C[i * LDC + j]) != bits_of(want[i * N + j]);
            CHECK(bad == 0 && C[N] == -1.0f, "fpsim_gemm_blas trans_a=%d trans_b=%d: %d outputs differ", ta, tb, bad);
        }
}

int main(void)
{
    test_h200_cases();
    test_gemm_equals_scalar();
    test_fp64_exact();
    test_promotion_differs();
    test_special_values();
    test_inputs_and_names();
    test_block_scales();
    test_blas_layouts();
    if (failures) {
        fprintf(stderr, "test_gemm_model: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gemm_model: all checks passed\n");
    return 0;
}
