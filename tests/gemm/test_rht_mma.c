/* test_rht_mma.c: the NVFP4 RHT under rhtsum=mma (formats/rht16_mma.h) against independent
 * oracles.
 *
 *  1. Worked by hand: a vector whose exact sum lies just above a BF16 midpoint, where the MMA's
 *     alignment drops the deciding term (mma rounds to even, exact rounds up).
 *  2. The tensor-core block model of sim/ (`hopper-hgmma`, fpsim_gemm_tn: a different code base,
 *     which reproduced cuBLASLt BF16 GEMMs on the H200 bit for bit, gpu/RESULTS.md) as a 1 x 16 x
 *     16 GEMM against TE's matrix 0.25 diag(s) H16, rounded to BF16 here: on narrow, wide,
 *     subnormal, cancelling, near-overflow and special vectors, and vectors whose largest input
 *     lies just above the FP32 subnormal range (H200 run 57 found the first model wrong there:
 *     results below 2^-126 from a grid above 2^-149 were packed as if on 2^-149).
 *  3. rhtsum=exact and rhtsum=mma agree where the MMA is exact (nonzero inputs within 11
 *     binades, away from the range ends), and differ on some wide vectors.
 *  4. The quantizer: nvfp4 rht=1,rhtsum=mma columnwise equals rht=0 rowwise of the transpose
 *     rotated here with the model (codes and scales), and the scheme text round-trips; on mixed
 *     spans also against a rotation by the GEMM model of 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_block.h"
#include "fpsim_gemm.h"
#include "rht16_mma.h"
#include "rht_vectors.h"
#include "test_util.h"

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* xorshift64*: test data only */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next32(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 0x2545F4914F6CDD1Dull) >> 32);
}

/* A BF16 value with a random sign and mantissa and an exponent field in [lo, hi] (0 = subnormal
 * or zero). */
static float bf16_in(uint32_t lo, uint32_t hi)
{
    const uint32_t r = next32();
    const uint32_t ef = lo + r % (hi - lo + 1);
    return from_bits(((r >> 31) << 31) | (ef << 23) | (((r >> 8) & 0x7Fu) << 16));
}

/* BF16 nearest-even of a finite FP32 value, written out on doubles: the two neighbours on the
 * BF16 grid and the distance to each. */
static uint32_t bf16_rne_ref(float f)
{
    if (isnan(f)) return 0x7FFF0000u;
    if (isinf(f) || f == 0.0f) return bits(f);
    const uint32_t down = bits(f) & 0xFFFF0000u; /* toward zero */
    const uint32_t up = down + 0x10000u;         /* away from zero (may be Inf) */
    /* past the largest BF16 value the next grid point is 2^128 (IEEE: round as if the exponent
     * were unbounded, then overflow to Inf) */
    const double d = fabs((double)f), a = fabs((double)from_bits(down));
    const double b = (up & 0x7FFFFFFFu) == 0x7F800000u ? 0x1p128 : fabs((double)from_bits(up));
    if (d - a < b - d) return down;
    if (d - a > b - d) return up;
    return ((down >> 16) & 1u) ? up : down;
}

/* B (16 outputs x 16 inputs, the TN layout): B[j][i] = 0.25 s_i (-1)^popcount(i & j) */
static void rht_matrix(float b[256])
{
    for (int j = 0; j < 16; j++)
        for (int i = 0; i < 16; i++)
            b[j * 16 + i] = (__builtin_popcount((unsigned)(i & j)) & 1 ? -0.25f : 0.25f) * (float)rht_test_sign[i];
}

static int test_worked_example(void)
{
    static test_counter tc =
        TEST_COUNTER_INIT("worked example: a term below the MMA's alignment decides a tie");
    /* x = (1, 2^-8, 2^-30, 0, ...): y_0 = 0.25 (1 + 2^-8 + 2^-30). Exactly: just above the midpoint
     * of 0.25 and 0.25 (1 + 2^-7), so BF16 rounds up to 0x3E810000. The MMA aligns on 2^-2
     * (products x/4) with grid 2^-27: 2^-32 falls below it and is dropped, the sum 0.25 (1 + 2^-8)
     * is the midpoint itself, and nearest-even gives 0.25 = 0x3E800000. */
    float x[16] = {1.0f, 0x1p-8f, 0x1p-30f}, ye[16], ym[16];
    fpsim_rht16(ye, x);
    fpsim_rht16_mma(ym, x);
    TEST_CHECK_EQ_HEX(&tc, bits(ye[0]), 0x3E810000u, "exact y0 %s", "");
    TEST_CHECK_EQ_HEX(&tc, bits(ym[0]), 0x3E800000u, "mma y0 %s", "");
    /* x = (1, 3 2^-8, -2^-30): y_0 = 0.25 (1 + 3 2^-8 - 2^-30), just below the midpoint of
     * 0.25 (1 + 2^-7) (odd) and 0.25 (1 + 2^-6) (even): exact rounds down to 0x3E810000; the MMA
     * drops -2^-32 (magnitude truncation) and rounds the midpoint to even, 0x3E820000. */
    float x2[16] = {1.0f, 3 * 0x1p-8f, -0x1p-30f};
    fpsim_rht16(ye, x2);
    fpsim_rht16_mma(ym, x2);
    TEST_CHECK_EQ_HEX(&tc, bits(ye[0]), 0x3E810000u, "exact y0 of x2 %s", "");
    TEST_CHECK_EQ_HEX(&tc, bits(ym[0]), 0x3E820000u, "mma y0 of x2 %s", "");
    /* Within 13 binades the policies can already differ, so fpsim_rht16_mma_is_exact stops at 12.
     * x_i = s_i m_i 2^-7 (exponent 0) for i < 14 with sum m_i = 2056 (13 x 147 + 145), x_14 =
     * s_14 129 2^-20 and x_15 = -s_15 2^-13 (exponent -13: 13 binades). Output 0 adds them all with
     * sign +: y_0 = 0.25 (2056 2^-7 + 2^-20) = 4.015625 + 2^-22, just above the midpoint of 4 and
     * 4.03125, so exact rounds up to 0x40810000. In the MMA's grid 2^-27 the sum is 2056 2^18 +
     * 2^5, 30 bits wide: the truncation to 24 drops 2^5, leaving the midpoint, which goes to
     * even: 0x40800000. */
    float x3[16];
    rht_test_span13_tie(x3);
    fpsim_rht16(ye, x3);
    fpsim_rht16_mma(ym, x3);
    uint32_t u3[16];
    memcpy(u3, x3, sizeof u3);
    TEST_CHECK_EQ_HEX(&tc, bits(ye[0]), 0x40810000u, "exact y0 of x3 %s", "");
    TEST_CHECK_EQ_HEX(&tc, bits(ym[0]), 0x40800000u, "mma y0 of x3 %s", "");
    TEST_CHECK(&tc, !fpsim_rht16_mma_is_exact(u3), "x3 (13 binades) not certified %s", "");
    return test_summary(&tc);
}

enum { KINDS = 11 };
static const char *const kind_names[KINDS] = {"narrow",         "wide",    "subnormal", "cancel",
                                              "near-overflow",  "zeros",   "special",   "subnormal edge",
                                              "span 12",        "span 13", "span 12, cancelling"};

/* A BF16 value with exponent field ef exactly (random sign and mantissa). */
static float bf16_at(uint32_t ef)
{
    return bf16_in(ef, ef);
}

static void fill(float x[16], int kind)
{
    const uint32_t base = 100u + next32() % 40u;
    for (int i = 0; i < 16; i++) {
        switch (kind) {
        case 0:
            x[i] = bf16_in(base, base + 8u);
            break;
        case 1:
            x[i] = bf16_in(1u, 254u);
            break;
        case 2:
            x[i] = bf16_in(0u, (next32() & 1u) ? 0u : 3u);
            break;
        case 3:
            x[i] = (i & 1) ? -x[i - 1] * (next32() % 4u ? 1.0f : 0x1p-20f) : bf16_in(base, base + 30u);
            break;
        case 4:
            x[i] = bf16_in(240u, 254u);
            break;
        case 5:
            x[i] = next32() % 3u ? 0.0f : bf16_in(1u, 254u);
            break;
        case 6:
            x[i] = bf16_in(60u, 200u);
            break;
        /* the widest span fpsim_rht16_mma computes by the exact policy's paths (12 binades:
         * exponents base and base + 12 both present), one beyond it, and the former with
         * cancelling pairs (small sums whose low bits are the deciding ones) */
        case 8:
        case 9:
            x[i] = i == 0 ? bf16_at(base) : i == 1 ? bf16_at(base + (kind == 8 ? 12u : 13u))
                                               : bf16_in(base, base + (kind == 8 ? 12u : 13u));
            break;
        case 10:
            x[i] = i == 0 ? bf16_at(base + 12u) : i == 15 ? bf16_at(base)
                   : (i & 1) && next32() % 4u ? -x[i - 1]
                                               : bf16_in(base, base + 12u);
            break;
        /* the largest input near 2^-126, sums below it: FP32-subnormal results whose grid 2^(E-25)
         * is finer than 2^-149 by 0-4 bits, or coarser by up to 3 */
        default:
            x[i] = bf16_in(1u, 8u);
            break;
        }
    }
    if (kind == 6) { /* one or two of NaN, +Inf, -Inf */
        static const uint32_t sp[3] = {0x7FC00000u, 0x7F800000u, 0xFF800000u};
        x[next32() % 16u] = from_bits(sp[next32() % 3u]);
        if (next32() & 1u) x[next32() % 16u] = from_bits(sp[next32() % 3u]);
    }
}

static int test_against_gemm_model(void)
{
    static test_counter tc = TEST_COUNTER_INIT("rht16_mma vs the hopper-hgmma GEMM model");
    static test_counter td = TEST_COUNTER_INIT("exact == mma model where the MMA is exact; differ on wide data");
    fpsim_accum acc;
    if (fpsim_accum_parse(&acc, "hopper-hgmma") != FPSIM_OK) {
        test_fail(&tc, "cannot parse hopper-hgmma: %s", fpsim_last_error());
        return test_summary(&tc);
    }
    enum { M = 4096, ROUNDS = 8 };
    float *A = malloc(sizeof(float) * M * 16), *C = malloc(sizeof(float) * M * 16), B[256];
    rht_matrix(B);
    uint64_t differ_wide = 0, exact_span = 0, differ_13 = 0;
    for (int round = 0; round < ROUNDS; round++)
        for (int kind = 0; kind < KINDS; kind++) {
            for (size_t v = 0; v < M; v++)
                fill(A + v * 16, kind);
            if (fpsim_gemm_tn(C, A, B, M, 16, 16, &acc, 1.0f, 1.0f, FPSIM_BF16, 1) != FPSIM_OK) {
                test_fail(&tc, "fpsim_gemm_tn: %s", fpsim_last_error());
                continue;
            }
            for (size_t v = 0; v < M; v++) {
                float ym[16], ye[16];
                fpsim_rht16_mma(ym, A + v * 16);
                for (int j = 0; j < 16; j++) {
                    const uint32_t want = bf16_rne_ref(C[v * 16 + j]);
                    TEST_CHECK_EQ_HEX(&tc, bits(ym[j]), want, "%s vector %zu output %d", kind_names[kind], v,
                                      j);
                }
                /* fpsim_rht16_mma takes the exact policy's paths where fpsim_rht16_mma_is_exact
                 * holds; there the model itself (rht16_mma.h, integers) must give those bits */
                uint32_t in[16], model[16];
                memcpy(in, A + v * 16, sizeof in);
                fpsim_rht16_mma_bits(model, in);
                fpsim_rht16(ye, A + v * 16);
                const int same = memcmp(ye, model, sizeof ye) == 0;
                const int certified = fpsim_rht16_mma_is_exact(in); /* inputs are BF16 here */
                if (certified) {
                    exact_span++;
                    TEST_CHECK(&td, same, "%s vector %zu: certified exact, model differs", kind_names[kind], v);
                }
                if (kind == 0 || kind == 8 || kind == 10)
                    TEST_CHECK(&td, certified, "%s vector %zu not certified", kind_names[kind], v);
                if (kind == 9) {
                    TEST_CHECK(&td, !certified, "span-13 vector %zu certified", v);
                    differ_13 += !same;
                }
                if (kind == 1)
                    differ_wide += !same;
            }
        }
    TEST_CHECK(&td, differ_wide > 0, "%llu wide vectors differ", (unsigned long long)differ_wide);
    printf("     wide vectors where rhtsum=exact and mma differ: %llu of %d; span-13 vectors: %llu of %d;"
           " vectors certified exact: %llu\n",
           (unsigned long long)differ_wide, M * ROUNDS, (unsigned long long)differ_13, M * ROUNDS,
           (unsigned long long)exact_span);
    free(A);
    free(C);
    return test_summary(&tc) | test_summary(&td);
}

/* nvfp4 rht=1,rhtsum=mma columnwise of x (rows x cols) against plain nvfp4 rowwise of t, x's
 * transpose rotated by an oracle: codes, scale codes and the global scale identical. */
static void check_rotated(test_counter *tc, const float *x, const float *t, size_t rows, size_t cols,
                          int threads)
{
    fpsim_scheme sm, s0;
    fpsim_qtensor qa, qb;
    memset(&qa, 0, sizeof qa);
    memset(&qb, 0, sizeof qb);
    fpsim_qopts oa, ob;
    fpsim_qopts_default(&oa);
    fpsim_qopts_default(&ob);
    oa.axis = FPSIM_AXIS_COLS;
    ob.axis = FPSIM_AXIS_ROWS;
    oa.threads = ob.threads = threads;
    const int ok = fpsim_scheme_parse(&sm, "nvfp4:rht=1,rhtsum=mma") == FPSIM_OK &&
                   fpsim_scheme_parse(&s0, "nvfp4") == FPSIM_OK &&
                   fpsim_block_quantize(&qa, &sm, x, rows, cols, &oa) == FPSIM_OK &&
                   fpsim_block_quantize(&qb, &s0, t, cols, rows, &ob) == FPSIM_OK;
    TEST_CHECK(tc, ok, "quantize: %s", fpsim_last_error());
    if (ok) {
        TEST_CHECK(tc, memcmp(qa.codes, qb.codes, qa.qrows * qa.code_stride) == 0, "codes, %d threads", threads);
        TEST_CHECK(tc, memcmp(qa.scale_codes, qb.scale_codes, qa.srows * qa.scols) == 0, "scales, %d threads",
                   threads);
        TEST_CHECK(tc, qa.global_scale == qb.global_scale, "global scale, %d threads", threads);
    }
    fpsim_qtensor_free(&qa);
    fpsim_qtensor_free(&qb);
}

static int test_quantizer(void)
{
    static test_counter tc =
        TEST_COUNTER_INIT("nvfp4 rht=1,rhtsum=mma cols == rht=0 rows of the rotated transpose");
    enum { R = 256, COLS = 272 };
    float *x = malloc(sizeof(float) * R * COLS), *t = malloc(sizeof(float) * R * COLS);
    for (size_t i = 0; i < (size_t)R * COLS; i++)
        x[i] = bf16_in(1u, 254u); /* wide spans: about 2% of the vectors differ between the policies */
    for (size_t c = 0; c < COLS; c++)
        for (size_t r0 = 0; r0 < R; r0 += 16) {
            uint32_t v[16]; /* rotated by the model itself (rht16_mma.h), not fpsim_rht16_mma */
            for (int k = 0; k < 16; k++)
                v[k] = bits(x[(r0 + (size_t)k) * COLS + c]);
            fpsim_rht16_mma_bits(v, v);
            for (int k = 0; k < 16; k++)
                t[c * R + r0 + (size_t)k] = from_bits(v[k]);
        }
    check_rotated(&tc, x, t, R, COLS, 0);
    /* and the exact policy stores another operand on this data (the statistics compare the stored
     * operand with its dequantized codes), or the test could not tell them apart */
    fpsim_scheme se, sm;
    fpsim_qtensor qe, qm;
    memset(&qe, 0, sizeof qe);
    memset(&qm, 0, sizeof qm);
    fpsim_qopts oa;
    fpsim_qopts_default(&oa);
    oa.axis = FPSIM_AXIS_COLS;
    oa.want |= FPSIM_QWANT_STATS;
    fpsim_scheme_parse(&se, "nvfp4:rht=1");
    fpsim_scheme_parse(&sm, "nvfp4:rht=1,rhtsum=mma");
    TEST_CHECK(&tc, fpsim_block_quantize(&qe, &se, x, R, COLS, &oa) == FPSIM_OK, "exact %s", "");
    TEST_CHECK(&tc, fpsim_block_quantize(&qm, &sm, x, R, COLS, &oa) == FPSIM_OK, "mma %s", "");
    TEST_CHECK(&tc, fpsim_xsum_value(&qe.stats.sum_ref2) != fpsim_xsum_value(&qm.stats.sum_ref2),
               "exact vs mma: sum of the stored operand's squares %s", "");
    fpsim_qtensor_free(&qm);
    fpsim_qtensor_free(&qe);
    char text[FPSIM_SCHEME_TEXT_MAX];
    fpsim_scheme back;
    TEST_CHECK(&tc,
               fpsim_scheme_format(text, sizeof text, &sm) == FPSIM_OK && strstr(text, "rhtsum=mma") &&
                   fpsim_scheme_parse(&back, text) == FPSIM_OK && back.rhtsum == FPSIM_RHT_MMA,
               "format/parse '%s'", text);
    TEST_CHECK(&tc, fpsim_scheme_parse(&back, "nvfp4:rhtsum=fma") == FPSIM_ENAME, "unknown value %s", "");
    TEST_CHECK(&tc, fpsim_scheme_parse(&back, "mxfp8-e4m3:rhtsum=mma") != FPSIM_OK, "MX key %s", "");
    free(x);
    free(t);
    return test_summary(&tc);
}

/* The quantizer's rhtsum=mma copy (on AVX-512 the model in vector form, else fpsim_rht16_mma,
 * whose vectors within 12 binades take the exact policy's paths) against the GEMM model of sim/,
 * on spans of 0 to 20 binades, cancelling pairs, all-zero and subnormal vectors, inputs that are
 * not BF16 values (rounded to BF16 by the operand cast), and columns past the last band of 16
 * (fpsim_rht16_mma on every machine). */
static int test_quantizer_mixed(void)
{
    static test_counter tc = TEST_COUNTER_INIT("nvfp4 rhtsum=mma cols on mixed spans == the GEMM model's rotation");
    enum { R = 256, COLS = 72 };
    fpsim_accum acc;
    float *x = malloc(sizeof(float) * R * COLS), *a = malloc(sizeof(float) * R * COLS),
          *c = malloc(sizeof(float) * R * COLS), *t = malloc(sizeof(float) * R * COLS), b[256];
    rht_matrix(b);
    /* a = the BF16 operand, vector by vector: a[(c * R / 16 + r0 / 16) * 16 + k] */
    for (size_t col = 0; col < COLS; col++)
        for (size_t r0 = 0; r0 < R; r0 += 16) {
            const uint32_t kind = next32() % 8u, base = 90u + next32() % 40u, span = next32() % 21u;
            float fv[16];
            if (kind >= 6) /* cancelling pairs, wide (where the policies can differ) or within 12 */
                fill(fv, kind == 6 ? 3 : 10);
            for (size_t k = 0; k < 16; k++) {
                float v;
                if (kind >= 6)
                    v = fv[k];
                else if (kind == 0)
                    v = 0.0f;
                else if (kind == 1)
                    v = bf16_in(0u, 1u);
                else if (kind == 2) /* any FP32 value, rounded to BF16 by the quantizer */
                    v = from_bits((next32() & 0x807FFFFFu) | ((base + next32() % (span + 1u)) << 23));
                else
                    v = bf16_in(base, base + span);
                x[(r0 + k) * COLS + col] = v;
                a[(col * R + r0) + k] = from_bits(bf16_rne_ref(v));
            }
        }
    /* column 5, rows 16-31: the third worked example's vector (the policies differ on it) */
    float x3[16];
    rht_test_span13_tie(x3);
    for (size_t k = 0; k < 16; k++)
        x[(16 + k) * COLS + 5] = a[5 * R + 16 + k] = x3[k];
    int ok = fpsim_accum_parse(&acc, "hopper-hgmma") == FPSIM_OK &&
             fpsim_gemm_tn(c, a, b, (size_t)R * COLS / 16, 16, 16, &acc, 1.0f, 1.0f, FPSIM_BF16, 1) == FPSIM_OK;
    TEST_CHECK(&tc, ok, "GEMM model: %s", fpsim_last_error());
    for (size_t i = 0; ok && i < (size_t)R * COLS; i++)
        t[i] = from_bits(bf16_rne_ref(c[i])); /* t: the transpose, rotated (COLS x R) */
    for (int threads = 1; ok && threads <= 3; threads += 2)
        check_rotated(&tc, x, t, R, COLS, threads);
    free(x);
    free(a);
    free(c);
    free(t);
    return test_summary(&tc);
}

int main(void)
{
    int bad = test_worked_example();
    bad |= test_against_gemm_model();
    bad |= test_quantizer();
    bad |= test_quantizer_mixed();
    return bad;
}
