/* test_biasvar.c: why NVFP4 with stochastic rounding keeps a bias in a summed weight gradient.
 *
 * 1. The core's SR rule for E2M1 with TE's 8 random bits, over all 256 byte values: the mean is
 *    exactly y for y on the 1/256-step grid, exactly lo + step * floor(256 frac) / 256 off it, and
 *    6 for every y in (6, 6.375] (satfinite: what SR cannot undo).
 * 2. The block quantizer (formats/block_nvfp4.c, TE chain, columnwise copy, RNE / SR / SR+RHT)
 *    against the slow reference sim/nvfp4_ref.c: dequantized values bit for bit, same Philox bytes.
 * 3. The explanation, quantitatively: the mean over S seeds of G^ = A^T B (both operands SR-
 *    quantized by the block quantizer) agrees within its noise with the expectation computed by a
 *    direct loop here from the per-element losses (the part above 6 that satfinite clips, and the
 *    part of the fraction TE's 8 bits cannot see); that bias is many noise units from zero and the
 *    clip carries most of it; the what-if with the block scale rounded up leaves almost none.
 * 4. fpsim_biasvar_run on a small case: the reference's RNE result equals the measured one. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_block.h"
#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "fpsim_nvfp4ref.h"
#include "fpsim_replay.h"
#include "test_util.h"

/* ---- deterministic test data ------------------------------------------------------------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double rng_u01(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return ((double)(rng_state >> 11) + 0.5) * 0x1p-53;
}
static double rng_normal(void)
{
    return sqrt(-2.0 * log(rng_u01())) * cos(6.283185307179586 * rng_u01());
}
static float to_bf16(double v)
{
    float f = (float)v;
    uint32_t u = test_f32_bits(f);
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    return test_f32_from_bits(u);
}

/* rows x cols, BF16 values. kind 0: a gradient (normal x lognormal, heavy tails, plus a column
 * mean so that the summed gradient grows ~N like a real one); kind 1: an
 * activation whose columns are nearly constant along tokens (a mean +- 0.5%), like the attention
 * output the replay's sweep uses; kind 2: a mix with tiny and zero columns (scale-0 blocks). */
static void make_operand(float *x, size_t rows, size_t cols, int kind)
{
    for (size_t c = 0; c < cols; c++) {
        double mu = (rng_u01() < 0.5 ? -1.0 : 1.0) * exp(rng_normal());
        int tiny = kind == 2 && c % 5 == 3, zero = kind == 2 && c % 7 == 6;
        for (size_t t = 0; t < rows; t++) {
            double v = kind == 0 ? 0.5 * mu + rng_normal() * exp(rng_normal())
                       : kind == 1 ? mu * (1.0 + 0.005 * rng_normal())
                                   : rng_normal() * (c % 2 ? mu : 1.0);
            if (tiny) v *= 1e-6;
            if (zero) v = 0.0;
            x[t * cols + c] = to_bf16(v);
        }
    }
}

/* ---- 1. the core's SR rule --------------------------------------------------------------- */

static void test_core_sr(test_counter *tc)
{
    fpsim_spec sr;
    if (fpsim_spec_make(&sr, FPSIM_E2M1, NULL, FPSIM_SR, 8)) {
        test_fail(tc, "fpsim_spec_make: %s", fpsim_last_error());
        return;
    }
    static const double grid[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
    for (int sign = 0; sign < 2; sign++)
        for (int iv = 0; iv < 7; iv++)
            for (int k = 0; k < 256; k++)
                for (int off = 0; off < 2; off++) {
                    double lo = grid[iv], step = grid[iv + 1] - lo;
                    double y = lo + step * (k + (off ? 0.37 : 0.0)) / 256.0; /* float-exact */
                    double want = lo + step * k / 256.0;
                    float yf = (float)(sign ? -y : y);
                    double sum = 0;
                    for (uint32_t b = 0; b < 256; b++)
                        sum += test_f32_from_bits(fpsim_decode_f32(
                            fpsim_round_f32(test_f32_bits(yf), &sr, b << 24), &sr));
                    TEST_CHECK(tc, fabs(sum / 256.0) == want && (sum == 0 || (sum < 0) == sign),
                               "y=%a mean over 256 bytes %a, want %s%a", (double)yf, sum / 256.0,
                               sign ? "-" : "", want);
                }
    for (int k = 1; k <= 48; k++) { /* (6, 6.375]: the range a rounded-down block scale reaches */
        float y = (float)(6.0 + k / 128.0);
        for (uint32_t b = 0; b < 256; b += 15)
            TEST_CHECK(tc, test_f32_from_bits(fpsim_decode_f32(fpsim_round_f32(test_f32_bits(y), &sr, b << 24), &sr)) == 6.0f,
                       "y=%a byte %u", (double)y, b);
    }
}

/* ---- 2. the block quantizer against the reference ---------------------------------------- */

static void test_bitexact(test_counter *tc)
{
    enum { R = 256, C = 40 };
    float *x = malloc(R * C * sizeof *x), *ref = malloc(R * C * sizeof *ref);
    static const struct { const char *scheme; int elem, rht; } cs[] = {
        {"nvfp4:sr=0,rht=0", FPSIM_NVFP4REF_RNE, 0},
        {"nvfp4:sr=1,rht=0", FPSIM_NVFP4REF_SR, 0},
        {"nvfp4:sr=1,rht=1", FPSIM_NVFP4REF_SR, 1},
    };
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    for (int kind = 0; kind < 3; kind++) {
        make_operand(x, R, C, kind);
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++)
            for (uint64_t seed = 1; seed <= 3; seed++) {
                fpsim_scheme s;
                fpsim_qopts o;
                fpsim_qopts_default(&o);
                o.axis = FPSIM_AXIS_COLS;
                o.seed = seed;
                o.stream = 7;
                o.want = FPSIM_QWANT_DEQUANT;
                o.threads = 2;
                /* 1, 2, 3 threads: the reference's bits must not depend on it either */
                fpsim_nvfp4ref_opts ro = {cs[i].elem, FPSIM_NVFP4REF_SCALE_RNE, cs[i].rht, seed, 7, (int)seed};
                if (fpsim_scheme_parse(&s, cs[i].scheme) || fpsim_block_quantize(&q, &s, x, R, C, &o) ||
                    fpsim_nvfp4ref_quantize(ref, NULL, x, R, C, &ro)) {
                    test_fail(tc, "%s: %s", cs[i].scheme, fpsim_last_error());
                    continue;
                }
                uint64_t bad = 0;
                for (size_t k = 0; k < (size_t)R * C; k++)
                    if (test_f32_bits(q.dequant[k]) != test_f32_bits(ref[k]) && bad++ < 3)
                        test_fail(tc, "%s data %d seed %llu element (%zu, %zu) x=%a: block quantizer %a, "
                                  "reference %a", cs[i].scheme, kind, (unsigned long long)seed, k / C,
                                  k % C, (double)x[k], (double)q.dequant[k], (double)ref[k]);
                test_count(tc, (uint64_t)R * C - (bad > 0));
            }
    }
    fpsim_qtensor_free(&q);
    free(x);
    free(ref);
}

/* ---- 3. the explanation ------------------------------------------------------------------- */

/* E2M1 neighbours of 0 <= a < 6, written out directly. */
static void bracket(double a, double *lo, double *step)
{
    *lo = a < 2.0 ? floor(a * 2.0) / 2.0 : (a < 4.0 ? floor(a) : 4.0);
    *step = a < 2.0 ? 0.5 : (a < 4.0 ? 1.0 : 2.0);
}

/* The expectation of an operand's dequantized values under TE's chain with SR, by a direct loop:
 * dequantized = (x * enc - loss) * s * S_dec with loss = (|y| - 6) above 6 (satfinite) and, below
 * 6, the fraction TE's byte cannot see: frac - floor(256 frac) / 256 steps. sat receives the clip
 * part only. The scale is E4M3 of d (RNE, or rounded up for the what-if). Counts saturated
 * elements. */
static uint64_t expect_direct(double *e, double *sat, const float *x, size_t rows, size_t cols, int up)
{
    float amax = 0;
    for (size_t i = 0; i < rows * cols; i++) amax = fmaxf(amax, fabsf(x[i]));
    float s_enc = 2688.0f / amax, s_dec = 1.0f / s_enc;
    uint64_t nsat = 0;
    for (size_t c = 0; c < cols; c++)
        for (size_t t0 = 0; t0 < rows; t0 += 16) {
            float bmax = 0;
            for (size_t t = t0; t < t0 + 16; t++) bmax = fmaxf(bmax, fabsf(x[t * cols + c]));
            float s = fpsim_nvfp4ref_e4m3(bmax * (s_enc * (1.0f / 6.0f)), up);
            float enc = fminf(1.0f / (s * s_dec), FLT_MAX);
            for (size_t t = t0; t < t0 + 16; t++) {
                float y = x[t * cols + c] * enc;
                double a = fabs((double)y), clip = a > 6.0 ? a - 6.0 : 0.0, lo, step, trunc = 0;
                if (a < 6.0) {
                    bracket(a, &lo, &step);
                    double f = (a - lo) / step;
                    trunc = (f - floor(256.0 * f) / 256.0) * step;
                }
                nsat += clip > 0;
                double sg = y < 0 ? -1.0 : 1.0, m = (double)s * (double)s_dec;
                e[t * cols + c] = sg * (a - clip - trunc) * m;
                sat[t * cols + c] = sg * clip * m;
            }
        }
    return nsat;
}

/* ||M||_F of M = E^T F - G (E rows x m, F rows x n, G m x n) in double. */
static double gram_err(const double *e, const double *f, const double *g, size_t rows, size_t m, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double acc = 0;
            for (size_t t = 0; t < rows; t++) acc += e[t * m + i] * f[t * n + j];
            double d = acc - (g ? g[i * n + j] : 0.0);
            s += d * d;
        }
    return sqrt(s);
}

static void gram(double *g, const float *a, const float *b, size_t rows, size_t m, size_t n)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double acc = 0;
            for (size_t t = 0; t < rows; t++) acc += (double)a[t * m + i] * (double)b[t * n + j];
            g[i * n + j] = acc;
        }
}

typedef struct seed_stats {
    double bias_meas; /* ||mean_s G^_s - G|| */
    double dist_expect; /* ||mean_s G^_s - E[G^]|| */
    double noise;     /* sqrt(V / S): the norm the seed mean's noise has on average */
} seed_stats;

/* S seeds of G^ = Aq^T Bq from the block quantizer (ref == 0) or the reference with the scale
 * rounded up (ref == 1), against G and the expectation ge. */
static void run_seeds(seed_stats *out, const float *a, const float *b, size_t R, size_t M, size_t N, int S,
                      int ref, const double *g, const double *ge)
{
    double *sum = calloc(M * N, sizeof *sum), *sq = calloc(M * N, sizeof *sq), *gs = malloc(M * N * sizeof *gs);
    float *da = malloc(R * M * sizeof *da), *db = malloc(R * N * sizeof *db);
    fpsim_qtensor qa, qb;
    memset(&qa, 0, sizeof qa);
    memset(&qb, 0, sizeof qb);
    fpsim_scheme s;
    fpsim_scheme_parse(&s, "nvfp4:sr=1,rht=0");
    for (int k = 0; k < S; k++) {
        uint64_t seed = 1000 + (uint64_t)k;
        if (ref) {
            fpsim_nvfp4ref_opts o = {FPSIM_NVFP4REF_SR, FPSIM_NVFP4REF_SCALE_UP, 0, seed, 1, 1};
            fpsim_nvfp4ref_quantize(da, NULL, a, R, M, &o);
            o.stream = 2;
            fpsim_nvfp4ref_quantize(db, NULL, b, R, N, &o);
        } else {
            fpsim_qopts o;
            fpsim_qopts_default(&o);
            o.axis = FPSIM_AXIS_COLS;
            o.seed = seed;
            o.want = FPSIM_QWANT_DEQUANT;
            o.threads = 1;
            o.stream = 1;
            fpsim_block_quantize(&qa, &s, a, R, M, &o);
            o.stream = 2;
            fpsim_block_quantize(&qb, &s, b, R, N, &o);
            memcpy(da, qa.dequant, R * M * sizeof *da);
            memcpy(db, qb.dequant, R * N * sizeof *db);
        }
        gram(gs, da, db, R, M, N);
        for (size_t i = 0; i < M * N; i++) {
            sum[i] += gs[i];
            sq[i] += gs[i] * gs[i];
        }
    }
    double b2 = 0, e2 = 0, v = 0;
    for (size_t i = 0; i < M * N; i++) {
        double m = sum[i] / S;
        b2 += (m - g[i]) * (m - g[i]);
        e2 += (m - ge[i]) * (m - ge[i]);
        v += (sq[i] - S * m * m) / (S - 1);
    }
    out->bias_meas = sqrt(b2);
    out->dist_expect = sqrt(e2);
    out->noise = sqrt(v / S);
    fpsim_qtensor_free(&qa);
    fpsim_qtensor_free(&qb);
    free(sum);
    free(sq);
    free(gs);
    free(da);
    free(db);
}

/* First order in the clip: ||Sa^T B + A^T Sb||, the part of the bias the saturated elements make
 * (Sa, Sb: what the clip removes from each element). */
static double clip_norm(const double *sa, const double *sb, const double *fa, const double *fb, size_t R,
                        size_t M, size_t N)
{
    double s = 0;
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double acc = 0;
            for (size_t t = 0; t < R; t++) acc += sa[t * M + i] * fb[t * N + j] + fa[t * M + i] * sb[t * N + j];
            s += acc * acc;
        }
    return sqrt(s);
}

static void test_explanation(test_counter *tc)
{
    enum { R = 2048, M = 8, N = 8, S = 300 };
    float *a = malloc(R * M * sizeof *a), *b = malloc(R * N * sizeof *b);
    double *ea = malloc(R * M * sizeof *ea), *eb = malloc(R * N * sizeof *eb);
    double *sa = malloc(R * M * sizeof *sa), *sb = malloc(R * N * sizeof *sb);
    double *g = malloc(M * N * sizeof *g), *ge = malloc(M * N * sizeof *ge), *gu = malloc(M * N * sizeof *gu);
    make_operand(a, R, M, 0); /* dY: heavy-tailed */
    make_operand(b, R, N, 1); /* X: nearly constant along tokens */
    gram(g, a, b, R, M, N);
    double gn = gram_err(NULL, NULL, g, 0, M, N); /* ||G|| */

    /* the expectation under TE's chain, and what the clip alone takes away */
    uint64_t nsat = expect_direct(ea, sa, a, R, M, 0) + expect_direct(eb, sb, b, R, N, 0);
    double *fa = malloc(R * M * sizeof *fa), *fb = malloc(R * N * sizeof *fb);
    for (size_t i = 0; i < (size_t)R * M; i++) fa[i] = (double)a[i];
    for (size_t i = 0; i < (size_t)R * N; i++) fb[i] = (double)b[i];
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double acc = 0;
            for (size_t t = 0; t < R; t++) acc += ea[t * M + i] * eb[t * N + j];
            ge[i * N + j] = acc;
        }
    double bias_expect = gram_err(ea, eb, g, R, M, N);
    double bias_clip = clip_norm(sa, sb, fa, fb, R, M, N);

    /* the reference's counts: the same saturated elements */
    fpsim_nvfp4ref_counts ca, cb;
    float *tmp = malloc(R * (M > N ? M : N) * sizeof *tmp);
    fpsim_nvfp4ref_opts ro = {FPSIM_NVFP4REF_EXPECT_TE, FPSIM_NVFP4REF_SCALE_RNE, 0, 0, 0, 1};
    fpsim_nvfp4ref_quantize(tmp, &ca, a, R, M, &ro);
    fpsim_nvfp4ref_quantize(tmp, &cb, b, R, N, &ro);
    TEST_CHECK_EQ_HEX(tc, ca.elems_sat + cb.elems_sat, nsat, "saturated elements: reference %s", "vs direct loop");

    seed_stats te;
    run_seeds(&te, a, b, R, M, N, S, 0, g, ge);
    printf("     TE chain, %d seeds: measured bias %.4e, expected %.4e (clip part %.4e), noise %.2e, "
           "mean - expectation %.2e; %llu of %d elements above 6 (rel. to ||G||)\n",
           S, te.bias_meas / gn, bias_expect / gn, bias_clip / gn, te.noise / gn, te.dist_expect / gn,
           (unsigned long long)nsat, R * (M + N));
    TEST_CHECK(tc, te.dist_expect < 3.0 * te.noise, "seed mean vs expectation %.3e, noise %.3e",
               te.dist_expect / gn, te.noise / gn);
    TEST_CHECK(tc, bias_expect > 8.0 * te.noise, "expected bias %.3e vs noise %.3e: no power",
               bias_expect / gn, te.noise / gn);
    TEST_CHECK(tc, te.bias_meas > 5.0 * te.noise, "measured bias %.3e vs noise %.3e", te.bias_meas / gn,
               te.noise / gn);
    TEST_CHECK(tc, bias_clip > 0.8 * bias_expect && bias_clip < 1.2 * bias_expect,
               "clip part %.3e of the expected bias %.3e", bias_clip / gn, bias_expect / gn);

    /* what-if: scale rounded up: nothing above 6, only the 8-bit truncation is left */
    uint64_t nsat_up = expect_direct(ea, sa, a, R, M, 1) + expect_direct(eb, sb, b, R, N, 1);
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double acc = 0;
            for (size_t t = 0; t < R; t++) acc += ea[t * M + i] * eb[t * N + j];
            gu[i * N + j] = acc;
        }
    double bias_up = gram_err(ea, eb, g, R, M, N), clip_up = clip_norm(sa, sb, fa, fb, R, M, N);
    seed_stats up;
    run_seeds(&up, a, b, R, M, N, S, 1, g, gu);
    printf("     scale rounded up:    measured bias %.4e, expected %.4e (clip part %.1e), noise %.2e, "
           "%llu elements above 6\n", up.bias_meas / gn, bias_up / gn, clip_up / gn, up.noise / gn,
           (unsigned long long)nsat_up);
    /* above 6 only by the FP32 rounding of enc and x * enc (a few ulps) */
    TEST_CHECK(tc, clip_up < 1e-4 * bias_expect, "clip part %.3e with the scale rounded up", clip_up / gn);
    TEST_CHECK(tc, bias_up < 0.2 * bias_expect, "what-if bias %.3e vs TE %.3e", bias_up / gn, bias_expect / gn);
    TEST_CHECK(tc, up.dist_expect < 3.0 * up.noise, "what-if seed mean vs expectation %.3e, noise %.3e",
               up.dist_expect / gn, up.noise / gn);
    free(a); free(b); free(ea); free(eb); free(sa); free(sb); free(g); free(ge); free(gu);
    free(fa); free(fb); free(tmp);
}

/* ---- 4. the sweep on a small case -------------------------------------------------------- */

static void test_sweep(test_counter *tc)
{
    enum { T = 256, D = 16 };
    double *dy = malloc(T * D * sizeof *dy), *x = malloc(T * D * sizeof *x);
    float *f = malloc(T * D * sizeof *f);
    make_operand(f, T, D, 0);
    for (size_t i = 0; i < T * D; i++) dy[i] = f[i];
    make_operand(f, T, D, 1);
    for (size_t i = 0; i < T * D; i++) x[i] = f[i];
    fpsim_biasvar_config cfg = {dy, x, T, D, D, 0, 0, 4, 1, 1};
    fpsim_biasvar_result *r = malloc(sizeof *r);
    if (fpsim_biasvar_run(r, &cfg)) {
        test_fail(tc, "fpsim_biasvar_run: %s", fpsim_last_error());
    } else {
        for (int k = 0; k < r->ncases; k++)
            for (int j = 0; j < r->nns; j++) {
                int nv = strncmp(r->case_names[k], "nvfp4", 5) == 0;
                TEST_CHECK(tc, nv == !isnan(r->bias_expect[k][j]), "%s n=%zu bias_expect %g", r->case_names[k],
                           r->ns[j], r->bias_expect[k][j]);
                if (!strcmp(r->case_names[k], "nvfp4-rne")) /* deterministic: the same bits */
                    TEST_CHECK(tc, r->bias_expect[k][j] == r->bias[k][j], "n=%zu reference %.9e measured %.9e",
                               r->ns[j], r->bias_expect[k][j], r->bias[k][j]);
                if (strstr(r->case_names[k], "-up")) /* the clip changes nothing (FP32 ulps at most) */
                    TEST_CHECK(tc, r->sat[k][j] < 1e-3 && fabs(r->bias_clip[k][j] - r->bias_noclip[k][j]) < 1e-5,
                               "%s n=%zu sat %g clip %g noclip %g", r->case_names[k], r->ns[j], r->sat[k][j],
                               r->bias_clip[k][j], r->bias_noclip[k][j]);
                else if (nv)
                    TEST_CHECK(tc, r->over6[k][j] > 0.2 && r->over6[k][j] < 0.8, "%s n=%zu over6 %g",
                               r->case_names[k], r->ns[j], r->over6[k][j]);
            }
    }
    free(r);
    free(dy);
    free(x);
    free(f);
}

int main(void)
{
    int rc = 0;
    test_counter tc = TEST_COUNTER_INIT("core E2M1 SR mean over 256 bytes");
    test_core_sr(&tc);
    rc |= test_summary(&tc);
    test_counter_reset(&tc, "block quantizer vs reference (nvfp4 rne / sr / sr+rht)");
    test_bitexact(&tc);
    rc |= test_summary(&tc);
    test_counter_reset(&tc, "SR bias = clip at 6 (seed mean vs closed form)");
    test_explanation(&tc);
    rc |= test_summary(&tc);
    test_counter_reset(&tc, "fpsim_biasvar_run small case");
    test_sweep(&tc);
    rc |= test_summary(&tc);
    return rc;
}
