/* test_block_props.c: properties every block quantizer must have, checked with arithmetic written
 * independently of formats/block_*.c (frexp/ldexp in double):
 *   - every non-clipped element's error is within half a step (a full step under SR) of the
 *     element grid at its scaled magnitude, times the block's dequantization factor;
 *   - special blocks per policy: all-zero, lone NaN, lone Inf, FP32-subnormal-only, power-of-two
 *     amax;
 *   - 2D tiles (16x16, 32x32, 128x128) give columnwise codes, scales and dequant that are exact
 *     transposes of the rowwise ones;
 *   - TE delayed scaling: the scale of call k is (max * 2^-margin) / max(amax of the previous
 *     `history` calls), 1.0 at first;
 *   - NVFP4 SR is unbiased for values whose fraction has 8 bits (TE uses one byte per element);
 *   - the same bits on 1 and 4 threads; exact statistics merging in any order;
 *   - shape rules (torchao requires K % 32, TE pads) and the BF16 input check;
 *   - vLLM's scale rules, and block FP8's multiplying rules (TE, DeepGEMM), scale with the BF16
 *     amax's power of two inside the bounds that the GPU's scale tables rely on (gpu/divide_fast.cuh
 *     divide_scale_from_table; for the multiplying rules the table of
 *     gpu/results/probe-fp8-table.diff, built but not yet run on a GPU). */
#include "fpsim_block.h"
#include "fpsim_core_types.h"
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <string.h>

static test_counter tc = TEST_COUNTER_INIT("block quantizer properties");

static fpsim_scheme scheme(const char *text)
{
    fpsim_scheme s;
    if (fpsim_scheme_parse(&s, text) != FPSIM_OK) {
        fprintf(stderr, "FAIL scheme '%s': %s\n", text, fpsim_last_error());
        exit(1);
    }
    return s;
}

static double gauss(uint64_t *st)
{
    double u1 = ((test_splitmix64(st) >> 11) + 0.5) * 0x1p-53;
    double u2 = ((test_splitmix64(st) >> 11) + 0.5) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Element grid: mantissa bits, minimum normal exponent, max finite. */
static void grid(int elem, int *mbits, int *emin, double *maxv)
{
    switch (elem) {
    case FPSIM_E4M3: *mbits = 3; *emin = -6; *maxv = 448; break;
    case FPSIM_E5M2: *mbits = 2; *emin = -14; *maxv = 57344; break;
    case FPSIM_E2M3: *mbits = 3; *emin = 0; *maxv = 7.5; break;
    case FPSIM_E3M2: *mbits = 2; *emin = -2; *maxv = 28; break;
    default: *mbits = 1; *emin = 0; *maxv = 6; break;
    }
}

/* Dequantization factor of the block holding stored element (i, j). */
static double block_factor(const fpsim_qtensor *q, size_t i, size_t j)
{
    const fpsim_scheme *s = &q->scheme;
    if (s->kind == FPSIM_KIND_FP8_TENSOR)
        return q->global_scale;
    size_t si = i / s->tile_rows, sj = j / s->tile_cols;
    double f = q->scale_inv[si * q->scols + sj];
    if (s->kind == FPSIM_KIND_NVFP4)
        f *= q->global_scale;
    return f;
}

static void check_error_bound(const char *text, size_t rows, size_t cols, int axis, uint64_t seed)
{
    fpsim_scheme s = scheme(text);
    float *x = malloc(rows * cols * sizeof(float));
    uint64_t st = seed;
    for (size_t r = 0; r < rows; r++) {
        double rs = ldexp(1.0, (int)(test_splitmix64(&st) % 40) - 20);
        for (size_t c = 0; c < cols; c++)
            x[r * cols + c] = (float)(gauss(&st) * rs * ((c % 29 == 0) ? 9.0 : 1.0));
    }
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    fpsim_qopts o;
    fpsim_qopts_default(&o);
    o.axis = axis;
    o.seed = seed;
    if (fpsim_block_quantize(&q, &s, x, rows, cols, &o) != FPSIM_OK) {
        test_fail(&tc, "%s: %s", text, fpsim_last_error());
        free(x);
        return;
    }
    int mbits, emin;
    double maxv;
    grid(s.elem, &mbits, &emin, &maxv);
    size_t bad = 0, clipped = 0;
    for (size_t i = 0; i < q.qrows; i++)
        for (size_t j = 0; j < q.qcols; j++) {
            size_t r = axis ? j : i, c = axis ? i : j;
            double xv = x[r * cols + c], dq = q.dequant[r * cols + c];
            double f = block_factor(&q, i, j);
            if (!(f > 0) || !isfinite(f))
                continue;
            double y = fabs(xv) / f; /* scaled magnitude (up to the rounding of the factor) */
            if (y > maxv * (1 + 1e-6)) {
                clipped++;
                continue;
            }
            int e;
            frexp(y, &e); /* y in [2^(e-1), 2^e) */
            int ex = e - 1 < emin ? emin : e - 1;
            double step = ldexp(1.0, ex - mbits) * f;
            double bound = (s.sr ? 1.0 : 0.5) * step * (1 + 1e-5) + 1e-300;
            tc.checks++;
            if (!(fabs(dq - xv) <= bound) && bad++ < 3)
                test_fail(&tc, "%s: element (%zu,%zu) x=%a dq=%a error %g > bound %g", text, r, c, xv, dq,
                          fabs(dq - xv), bound);
            else if (!(fabs(dq - xv) <= bound))
                tc.failures++;
        }
    TEST_CHECK(&tc, q.stats.finite == rows * cols && q.stats.count == rows * cols, "%s stats count", text);
    /* statistics against a naive long double pass over (x, dequant) */
    {
        long double s2 = 0, e2 = 0, e1 = 0, maxe = 0, amax = 0;
        uint64_t flushed = 0;
        for (size_t i = 0; i < rows * cols; i++) {
            long double xv = x[i], dv = q.dequant[i], e = dv - xv;
            s2 += xv * xv;
            e2 += e * e;
            e1 += e;
            maxe = fabsl(e) > maxe ? fabsl(e) : maxe;
            amax = fabsl(xv) > amax ? fabsl(xv) : amax;
            flushed += x[i] != 0.0f && q.dequant[i] == 0.0f;
        }
        double sqnr = (double)(10.0L * log10l(s2 / e2));
        TEST_CHECK(&tc, fabs(fpsim_qstats_sqnr_db(&q.stats) - sqnr) < 1e-9 * fabs(sqnr) + 1e-12 &&
                            fabs(fpsim_qstats_mean_err(&q.stats) - (double)(e1 / (rows * cols))) <=
                                1e-12 * (double)sqrtl(e2) &&
                            q.stats.max_abs_err == (double)maxe && q.stats.amax == (double)amax &&
                            q.stats.flushed == flushed,
                   "%s stats: sqnr %.12g vs %.12g, flushed %llu vs %llu", text, fpsim_qstats_sqnr_db(&q.stats),
                   sqnr, (unsigned long long)q.stats.flushed, (unsigned long long)flushed);
    }
    (void)clipped;
    fpsim_qtensor_free(&q);
    free(x);
}

static void error_bounds(void)
{
    static const char *const schemes[] = {
        "mxfp8-e4m3", "mxfp8-e5m2:rule=ceil", "mxfp6-e2m3:rule=rceil", "mxfp6-e3m2:rule=even",
        "mxfp4:rule=rceil-sat", "mxfp8-e4m3:rule=rceil-sat,tile=32x32", "mxfp4:rule=gfloat",
        "mxfp8-e4m3:rule=microxcaling", "nvfp4", "nvfp4:tile=16x16", "nvfp4:chain=torchao",
        "nvfp4:chain=torchao-cuda,global=0", "nvfp4:sr=1", "fp8-block", "fp8-block:scale=te-fp32,tile=128x128",
        "fp8-block:scale=deepgemm-fp32", "fp8-block:scale=deepgemm-ue8m0,tile=128x128", "fp8-tensor",
        "fp8-tensor:mode=torchao,pow2=1", "fp8-tensor:fmt=e5m2,pow2=1"};
    for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++) {
        check_error_bound(schemes[i], 48, 256, FPSIM_AXIS_ROWS, 11 + i);
        check_error_bound(schemes[i], 256, 64, FPSIM_AXIS_COLS, 101 + i);
    }
}

/* One 1x32 MX block built by `fill`, quantized under `text`. */
static fpsim_qtensor mx_block(const char *text, const float *x, size_t n)
{
    fpsim_scheme s = scheme(text);
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    if (fpsim_block_quantize(&q, &s, x, 1, n, NULL) != FPSIM_OK)
        test_fail(&tc, "%s: %s", text, fpsim_last_error());
    return q;
}

static void special_blocks(void)
{
    float x[32];
    fpsim_qtensor q;
    /* all-zero: E8M0 0x00 under every rule, codes 0, dequant 0 */
    static const char *const rules[] = {"floor", "ceil", "even", "rceil", "rceil-sat", "microxcaling", "gfloat"};
    memset(x, 0, sizeof x);
    for (size_t i = 0; i < 7; i++) {
        char t[64];
        snprintf(t, sizeof t, "mxfp8-e4m3:rule=%s", rules[i]);
        q = mx_block(t, x, 32);
        int zero = 1;
        for (int j = 0; j < 32; j++)
            zero = zero && q.codes[j] == 0 && q.dequant[j] == 0.0f;
        TEST_CHECK(&tc, q.scale_codes[0] == 0 && zero && q.stats.zero_blocks == 1, "all-zero block %s", t);
        fpsim_qtensor_free(&q);
    }
    /* lone NaN: torch.amax propagates (scale 0xFF, all NaN); TE ignores it (scale from the rest,
     * the NaN element 0x7F) */
    for (int j = 0; j < 32; j++)
        x[j] = (float)(j + 1) * 0.25f;
    x[5] = NAN;
    q = mx_block("mxfp8-e4m3:rule=floor", x, 32);
    TEST_CHECK(&tc, q.scale_codes[0] == 0xFF && isnan(q.dequant[0]) && q.stats.nan == 1 && q.stats.nan_out == 31,
               "lone NaN, propagate: scale 0x%02x", q.scale_codes[0]);
    fpsim_qtensor_free(&q);
    q = mx_block("mxfp8-e4m3:rule=rceil-sat", x, 32);
    /* amax 8: RCEIL descale 8/448 -> 2^-5 (code 122) */
    TEST_CHECK(&tc, q.scale_codes[0] == 122 && q.codes[5] == 0x7F && q.dequant[31] == 8.0f,
               "lone NaN, ignore: scale 0x%02x code 0x%02x", q.scale_codes[0], q.codes[5]);
    fpsim_qtensor_free(&q);
    q = mx_block("mxfp8-e4m3:rule=floor,nan=ignore", x, 32);
    TEST_CHECK(&tc, q.scale_codes[0] == 127 + 3 - 8 && q.dequant[31] == 8.0f, "floor nan=ignore scale 0x%02x",
               q.scale_codes[0]);
    fpsim_qtensor_free(&q);
    /* lone Inf: torchao main 0xFF, torchao 0.18 keeps the exponent (255-127-8 -> 0xF7), TE 0xFE */
    x[5] = INFINITY;
    q = mx_block("mxfp8-e4m3:rule=floor", x, 32);
    TEST_CHECK(&tc, q.scale_codes[0] == 0xFF, "lone Inf floor main 0x%02x", q.scale_codes[0]);
    fpsim_qtensor_free(&q);
    q = mx_block("mxfp8-e4m3:rule=floor,ao=0.18", x, 32);
    TEST_CHECK(&tc, q.scale_codes[0] == 0xF7, "lone Inf floor 0.18 0x%02x", q.scale_codes[0]);
    fpsim_qtensor_free(&q);
    q = mx_block("mxfp8-e4m3:rule=rceil-sat", x, 32);
    TEST_CHECK(&tc, q.scale_codes[0] == 0xFE && q.codes[0] == 0 && q.stats.inf == 1, "lone Inf TE 0x%02x",
               q.scale_codes[0]);
    fpsim_qtensor_free(&q);
    /* FP32-subnormal-only block: floor gives code 0 (2^-127) and the elements are scaled by the
     * exact 2^127 (no flush): x = k * 2^-140 -> y = k * 2^-13 */
    for (int j = 0; j < 32; j++)
        x[j] = (float)ldexp((double)(j + 1), -140);
    q = mx_block("mxfp8-e4m3:rule=floor", x, 32);
    TEST_CHECK(&tc, q.scale_codes[0] == 0, "subnormal block scale 0x%02x", q.scale_codes[0]);
    /* y = 32 * 2^-13 = 2^-8: E4M3 subnormal 2^-8 = code 0x02 */
    TEST_CHECK(&tc, q.codes[31] == 0x02, "subnormal block top code 0x%02x", q.codes[31]);
    fpsim_qtensor_free(&q);
    /* power-of-two amax 2^k: FLOOR scale 2^(k-8), the amax element exactly 256 (0x78), dequant exact */
    for (int k = -20; k <= 20; k += 7) {
        for (int j = 0; j < 32; j++)
            x[j] = (float)ldexp(0.75, k);
        x[9] = (float)ldexp(1.0, k);
        q = mx_block("mxfp8-e4m3", x, 32);
        TEST_CHECK(&tc, q.scale_codes[0] == 127 + k - 8 && q.codes[9] == 0x78 && q.dequant[9] == x[9],
                   "power-of-two amax 2^%d: scale 0x%02x", k, q.scale_codes[0]);
        fpsim_qtensor_free(&q);
    }
}

static void transposes(void)
{
    static const char *const schemes[] = {"nvfp4:tile=16x16", "mxfp8-e4m3:rule=rceil-sat,tile=32x32",
                                          "mxfp4:rule=rceil-sat,tile=32x32", "fp8-block:tile=128x128",
                                          "fp8-block:scale=deepgemm-fp32,tile=128x128"};
    const size_t rows = 160, cols = 272; /* not multiples of the 2D tiles: partial tiles too */
    float *x = malloc(rows * cols * sizeof(float));
    uint64_t st = 5;
    for (size_t i = 0; i < rows * cols; i++)
        x[i] = (float)(gauss(&st) * ((i % 97) == 0 ? 30.0 : 1.0));
    for (size_t k = 0; k < sizeof schemes / sizeof schemes[0]; k++) {
        fpsim_scheme s = scheme(schemes[k]);
        fpsim_qtensor a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        fpsim_qopts o;
        fpsim_qopts_default(&o);
        fpsim_status s1 = fpsim_block_quantize(&a, &s, x, rows, cols, &o);
        o.axis = FPSIM_AXIS_COLS;
        fpsim_status s2 = fpsim_block_quantize(&b, &s, x, rows, cols, &o);
        if (s1 != FPSIM_OK || s2 != FPSIM_OK) {
            test_fail(&tc, "%s: %s", schemes[k], fpsim_last_error());
            continue;
        }
        size_t bad = 0;
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++) {
                bad += fpsim_qtensor_code(&a, i, j) != fpsim_qtensor_code(&b, j, i);
                bad += test_f32_bits(a.dequant[i * cols + j]) != test_f32_bits(b.dequant[i * cols + j]);
            }
        for (size_t i = 0; i < a.srows; i++)
            for (size_t j = 0; j < a.scols; j++)
                bad += test_f32_bits(a.scale_inv[i * a.scols + j]) != test_f32_bits(b.scale_inv[j * b.scols + i]);
        test_count(&tc, rows * cols * 2);
        TEST_CHECK(&tc, bad == 0 && a.srows == b.scols && a.scols == b.srows, "%s: %zu mismatches in the transpose",
                   schemes[k], bad);
        fpsim_qtensor_free(&a);
        fpsim_qtensor_free(&b);
    }
    free(x);
}

static void delayed_scaling(void)
{
    static const float amaxes[] = {2.0f, 8.0f, 1.0f, 0.5f, 0.25f, 4.0f, 0.0f, 3.0f};
    const int n = 8;
    static const char *const texts[] = {"fp8-tensor:mode=delayed,history=3",
                                        "fp8-tensor:mode=delayed,history=3,algo=most_recent",
                                        "fp8-tensor:mode=delayed,history=1,margin=1,fmt=e5m2"};
    for (int t = 0; t < 3; t++) {
        fpsim_scheme s = scheme(texts[t]);
        fpsim_quantizer qz;
        fpsim_qtensor q;
        memset(&q, 0, sizeof q);
        fpsim_quantizer_init(&qz, &s);
        double want = 1.0;
        float x[64];
        for (int k = 0; k < n; k++) {
            for (int j = 0; j < 64; j++)
                x[j] = amaxes[k] * (float)(j % 8) / 7.0f * ((j & 1) ? -1.0f : 1.0f);
            fpsim_quantizer_quantize(&qz, &q, x, 4, 16, NULL);
            TEST_CHECK(&tc, q.tensor_scale == (float)want, "%s call %d: scale %.9g, want %.9g", texts[t], k,
                       (double)q.tensor_scale, want);
            /* next scale from the window of the last `history` amaxes */
            double m = 0;
            int L = s.history;
            if (s.algo == FPSIM_AMAX_MOST_RECENT)
                m = amaxes[k];
            else
                for (int i = k; i > k - L && i >= 0; i--)
                    m = amaxes[i] > m ? amaxes[i] : m;
            double fmax = s.elem == FPSIM_E5M2 ? 57344.0 : 448.0;
            if (m > 0)
                want = (float)((float)ldexp(fmax, -s.margin) / (float)m);
        }
        fpsim_qtensor_free(&q);
        fpsim_quantizer_free(&qz);
    }
}

static void sr_unbiased(void)
{
    /* y values with 8-bit fractions on the E2M1 grid: E[q] = y exactly under TE's byte SR */
    static const float ys[] = {2.25f, 0.625f, 1.1171875f, 4.5f, 3.5f, 5.0f};
    enum { R = 64, C = 1024 };
    static float x[R * C];
    for (size_t k = 0; k < sizeof ys / sizeof ys[0]; k++) {
        for (int i = 0; i < R * C; i++)
            x[i] = (i % 16 == 0) ? 6.0f : ys[k];
        fpsim_scheme s = scheme("nvfp4:sr=1");
        fpsim_qtensor q;
        memset(&q, 0, sizeof q);
        fpsim_qopts o;
        fpsim_qopts_default(&o);
        o.global_amax_given = 1;
        o.global_amax = 2688.0f; /* S_enc = 1, block scale 1: y = x */
        o.seed = 1234 + k;
        fpsim_block_quantize(&q, &s, x, R, C, &o);
        double sum = 0, sum2 = 0;
        long n = 0;
        for (int i = 0; i < R * C; i++)
            if (i % 16) {
                sum += q.dequant[i];
                sum2 += (double)q.dequant[i] * q.dequant[i];
                n++;
            }
        double mean = sum / n, var = sum2 / n - mean * mean, se = sqrt(var / n);
        TEST_CHECK(&tc, fabs(mean - ys[k]) <= 5 * se + 1e-12, "SR mean %.6f for y=%g (se %.2g)", mean,
                   (double)ys[k], se);
        fpsim_qtensor_free(&q);
    }
}

static void threads_and_stats(void)
{
    const size_t rows = 224, cols = 192;
    float *x = malloc(rows * cols * sizeof(float));
    uint64_t st = 77;
    for (size_t i = 0; i < rows * cols; i++)
        x[i] = (float)gauss(&st);
    static const char *const schemes[] = {"nvfp4:sr=1,rht=1", "mxfp8-e4m3", "fp8-block:tile=128x128",
                                          "nvfp4:tile=16x16"};
    for (size_t k = 0; k < 4; k++) {
        fpsim_scheme s = scheme(schemes[k]);
        fpsim_qtensor a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        fpsim_qopts o;
        fpsim_qopts_default(&o);
        o.axis = FPSIM_AXIS_COLS;
        o.seed = 99;
        o.threads = 1;
        fpsim_status s1 = fpsim_block_quantize(&a, &s, x, rows, cols, &o);
        o.threads = 4;
        fpsim_status s2 = fpsim_block_quantize(&b, &s, x, rows, cols, &o);
        if (s1 != FPSIM_OK || s2 != FPSIM_OK) {
            test_fail(&tc, "%s: %s", schemes[k], fpsim_last_error());
            continue;
        }
        int same = memcmp(a.codes, b.codes, a.qrows * a.code_stride) == 0 &&
                   memcmp(a.dequant, b.dequant, rows * cols * sizeof(float)) == 0 &&
                   memcmp(a.scale_inv, b.scale_inv, a.srows * a.scols * sizeof(float)) == 0 &&
                   fpsim_qstats_sqnr_db(&a.stats) == fpsim_qstats_sqnr_db(&b.stats) &&
                   fpsim_qstats_mean_err(&a.stats) == fpsim_qstats_mean_err(&b.stats);
        TEST_CHECK(&tc, same, "%s: 1 vs 4 threads", schemes[k]);
        fpsim_qtensor_free(&a);
        fpsim_qtensor_free(&b);
    }
    /* exact sums: the same multiset of values added in two orders gives the same bits */
    fpsim_xsum f, r, m1, m2;
    fpsim_xsum_init(&f);
    fpsim_xsum_init(&r);
    fpsim_xsum_init(&m1);
    fpsim_xsum_init(&m2);
    double naive = 0;
    for (size_t i = 0; i < rows * cols; i++) {
        double v = ldexp((double)x[i], (int)(i % 61) - 30);
        fpsim_xsum_add(&f, v);
        fpsim_xsum_add(i % 2 ? &m1 : &m2, v);
        naive += v;
    }
    for (size_t i = rows * cols; i-- > 0;)
        fpsim_xsum_add(&r, ldexp((double)x[i], (int)(i % 61) - 30));
    fpsim_xsum_merge(&m2, &m1);
    double vf = fpsim_xsum_value(&f), vr = fpsim_xsum_value(&r), vm = fpsim_xsum_value(&m2);
    TEST_CHECK(&tc, vf == vr && vf == vm, "exact sum order independence %a %a %a", vf, vr, vm);
    TEST_CHECK(&tc, fabs(vf - naive) <= 1e-9 * fabs(naive) + 1e-6, "exact sum value %a vs naive %a", vf, naive);
    free(x);
}

static void shapes_and_inputs(void)
{
    float x[48 * 2];
    for (int i = 0; i < 96; i++)
        x[i] = (float)(i - 40) * 0.125f;
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    fpsim_scheme s = scheme("mxfp8-e4m3");
    fpsim_status st = fpsim_block_quantize(&q, &s, x, 2, 48, NULL);
    TEST_CHECK(&tc, st == FPSIM_ESHAPE && strstr(fpsim_last_error(), "multiple of 32"), "torchao K%%32: %s",
               fpsim_last_error());
    s = scheme("mxfp8-e4m3:rule=rceil-sat");
    st = fpsim_block_quantize(&q, &s, x, 2, 48, NULL);
    TEST_CHECK(&tc, st == FPSIM_OK && q.scols == 2, "TE pads partial blocks: %s", fpsim_last_error());
    s = scheme("nvfp4");
    st = fpsim_block_quantize(&q, &s, x, 2, 47, NULL);
    TEST_CHECK(&tc, st == FPSIM_OK && q.scols == 3 && q.code_stride == 24, "NVFP4 TE pads odd K: %s",
               fpsim_last_error());
    fpsim_qopts o;
    fpsim_qopts_default(&o);
    o.input_bf16 = 1;
    x[3] = 1.0f + 0x1p-20f;
    st = fpsim_block_quantize(&q, &s, x, 2, 48, &o);
    TEST_CHECK(&tc, st == FPSIM_EDATA, "non-BF16 value with input_bf16: status %d", (int)st);
    st = fpsim_block_quantize(&q, &s, x, 0, 48, NULL);
    TEST_CHECK(&tc, st == FPSIM_ESHAPE, "empty tensor: status %d", (int)st);
    fpsim_qtensor_free(&q);
    /* RHT output is BF16 and keeps the energy of each 16-vector (orthogonal up to BF16 rounding) */
    float v[16], y[16];
    uint64_t g = 3;
    double e0 = 0, e1 = 0;
    for (int i = 0; i < 16; i++) {
        v[i] = (float)gauss(&g);
        e0 += (double)v[i] * v[i];
    }
    fpsim_rht16(y, v);
    int bf16 = 1;
    for (int i = 0; i < 16; i++) {
        e1 += (double)y[i] * y[i];
        bf16 = bf16 && (test_f32_bits(y[i]) & 0xFFFF) == 0;
    }
    TEST_CHECK(&tc, bf16 && fabs(e1 / e0 - 1) < 0.02, "RHT: BF16 outputs %d, energy ratio %g", bf16, e1 / e0);
    /* RHT against the defining matrix product (formats-spec 5.5) summed in long double and rounded
     * to BF16 by nearest-even search over the two BF16 neighbours */
    static const int sgn[16] = {1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};
    for (int t = 0; t < 2000; t++) {
        int span = 1 + t % 40;
        for (int i = 0; i < 16; i++) {
            float f = (float)ldexp(gauss(&g), (int)(test_splitmix64(&g) % (unsigned)span) - span / 2);
            v[i] = test_f32_from_bits(test_f32_bits(f) & 0xFFFF0000u); /* BF16 inputs */
        }
        fpsim_rht16(y, v);
        for (int j = 0; j < 16; j++) {
            long double acc = 0;
            for (int i = 0; i < 16; i++)
                acc += 0.25L * sgn[i] * (long double)v[i] * ((__builtin_popcount((unsigned)(i & j)) & 1) ? -1 : 1);
            /* the two BF16 values around acc */
            float lo = (float)acc;
            uint32_t lb = test_f32_bits(lo) & 0xFFFF0000u;
            float a = test_f32_from_bits(lb), b = test_f32_from_bits(lb + 0x10000u);
            if (fabsl((long double)a) > fabsl(acc) || (acc < 0 ? 0 : 0)) { /* truncation went past */
                b = a;
                a = test_f32_from_bits(lb - 0x10000u);
            }
            long double da = fabsl(acc - a), db = fabsl(acc - b);
            float want = da < db ? a : (db < da ? b : ((test_f32_bits(a) >> 16) & 1 ? b : a));
            if (acc == 0)
                want = 0.0f;
            tc.checks++;
            if (test_f32_bits(y[j]) != test_f32_bits(want) && !(y[j] == 0 && want == 0))
                test_fail(&tc, "RHT output %d: got %a want %a (exact %La)", j, (double)y[j], (double)want, acc);
        }
    }
}

/* cuBLASLt Hopper block-scale layouts (gpu-numerics.md section 2, TE CuBLASScaleMunger): VEC128
 * "M x L, M-major" = (l, m) at l * pad4(M) + m; BLK128x128 "K-major, column stride a multiple of 4"
 * = (mb, l) at mb * pad4(L) + l; padding 0. One qtensor reused across kinds. */
static void cublas_layouts(void)
{
    const size_t rows = 301, cols = 517;
    float *x = malloc(rows * cols * sizeof(float));
    uint64_t st = 9;
    for (size_t i = 0; i < rows * cols; i++)
        x[i] = (float)gauss(&st);
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    static const char *const schemes[] = {"fp8-block", "mxfp8-e4m3:rule=rceil-sat", "fp8-block:tile=128x128",
                                          "nvfp4"};
    for (int k = 0; k < 4; k++) {
        fpsim_scheme s = scheme(schemes[k]);
        if (fpsim_block_quantize(&q, &s, x, rows, cols, NULL) != FPSIM_OK) {
            test_fail(&tc, "%s: %s", schemes[k], fpsim_last_error());
            continue;
        }
        if (s.kind != FPSIM_KIND_FP8_BLOCK)
            continue;
        size_t L = (cols + 127) / 128, bad = 0;
        if (s.tile_rows == 1) {
            size_t Mp = (rows + 3) / 4 * 4;
            bad += q.cublas_rows != L || q.cublas_cols != Mp;
            for (size_t l = 0; l < L; l++)
                for (size_t m = 0; m < Mp; m++)
                    bad += test_f32_bits(q.cublas_f32[l * Mp + m]) !=
                           (m < rows ? test_f32_bits(q.scale_inv[m * L + l]) : 0u);
        } else {
            size_t Mb = (rows + 127) / 128, Lp = (L + 3) / 4 * 4;
            bad += q.cublas_rows != Mb || q.cublas_cols != Lp;
            for (size_t mb = 0; mb < Mb; mb++)
                for (size_t l = 0; l < Lp; l++)
                    bad += test_f32_bits(q.cublas_f32[mb * Lp + l]) !=
                           (l < L ? test_f32_bits(q.scale_inv[mb * L + l]) : 0u);
        }
        test_count(&tc, 1);
        TEST_CHECK(&tc, bad == 0, "%s cuBLAS layout: %zu mismatches", schemes[k], bad);
    }
    fpsim_qtensor_free(&q);
    free(x);
}

/* The two power-of-two law checks below quantize one 128-wide block per positive finite BF16
 * value: row r holds pattern r + 1 as its amax and a smaller element, of either sign. */
enum { SWEEP_ROWS = 0x7F7F, SWEEP_COLS = 128 };
static float *bf16_amax_blocks(void)
{
    float *x = calloc((size_t)SWEEP_ROWS * SWEEP_COLS, sizeof(float));
    if (!x) {
        test_fail(&tc, "BF16 amax blocks: out of memory");
        return NULL;
    }
    for (size_t r = 0; r < SWEEP_ROWS; r++) {
        x[r * SWEEP_COLS] = test_f32_from_bits((uint32_t)(r + 1) << 16);
        x[r * SWEEP_COLS + 1 + r % 127] = -0.5f * x[r * SWEEP_COLS];
    }
    return x;
}
/* 1 with *s and *q (one scale per row) where scheme text quantizes the blocks; else a failure. */
static int quantize_amax_blocks(fpsim_qtensor *q, fpsim_scheme *s, const char *text, const float *x)
{
    *s = scheme(text);
    memset(q, 0, sizeof *q);
    if (fpsim_block_quantize(q, s, x, SWEEP_ROWS, SWEEP_COLS, NULL) != FPSIM_OK || q->scols != 1) {
        test_fail(&tc, "%s: %s", text, fpsim_last_error());
        fpsim_qtensor_free(q);
        return 0;
    }
    return 1;
}

/* vLLM's dividing rules give, for a BF16 block amax M 2^e (M in [1, 2)), sf(M 2^e) = sf(M) 2^e and
 * RN(1 / sf) and its two bracketing multiples scaled by 2^-e alike, wherever amax >= max(2^-60,
 * eps), sf >= eps and, for the UE8M0 rounding, sf >= 2^-32, given a format max in [64, 65536] and
 * eps <= 2^-16: the premise of the GPU kernels' scale table (gpu/divide_fast.cuh). Checked on
 * every positive finite BF16 amax against the CPU emulator's own scales (one block per amax). */
static void vllm_scale_power_of_two(void)
{
    static const char *const schemes[] = {
        "fp8-block:scale=vllm-cuda",          "fp8-block:scale=vllm-cuda-ue8m0", "fp8-block:scale=vllm-native",
        "fp8-block:fmt=e5m2,scale=vllm-cuda", "fp8-block:fmt=e5m2,scale=vllm-native",
        "fp8-block:scale=vllm-cuda,eps=0",    "fp8-block:scale=vllm-native,eps=1.5e-5",
    };
    float *x = bf16_amax_blocks();
    if (!x) return;
    for (size_t k = 0; k < sizeof schemes / sizeof schemes[0]; k++) {
        fpsim_scheme s;
        fpsim_qtensor q;
        if (!quantize_amax_blocks(&q, &s, schemes[k], x)) continue;
        const float eps = s.eps;
        const int ue8m0 = strstr(schemes[k], "ue8m0") != NULL;
        TEST_CHECK(&tc, eps <= 0x1p-16f, "%s: eps %g above the table's 2^-16", schemes[k], (double)eps);
        const float amax_lo = fmaxf(0x1p-60f, eps), sf_min = fmaxf(eps, ue8m0 ? 0x1p-32f : 0.0f);
        size_t checked = 0, bad = 0;
        for (size_t r = 0; r < SWEEP_ROWS; r++) {
            const uint32_t bits = (uint32_t)(r + 1) << 16;
            const float amax = test_f32_from_bits(bits);
            if (amax < amax_lo) continue;
            const int e = (int)(bits >> 23) - 127;
            const size_t rm = ((bits & 0x007F0000u) | 0x3F800000u) >> 16; /* M's pattern */
            const float sf = q.scale_inv[r], sf_m = q.scale_inv[rm - 1];
            const float sf_law = ldexpf(sf_m, e);
            if (sf_law < sf_min) continue;
            const float rcp_m = 1.0f / sf_m, rcp = 1.0f / sf; /* RN(1 / sf), as divide_scale_of */
            bad += test_f32_bits(sf) != test_f32_bits(sf_law);
            bad += test_f32_bits(rcp) != test_f32_bits(ldexpf(rcp_m, -e));
            bad += test_f32_bits(rcp * (1.0f - 0x1p-20f)) != test_f32_bits(ldexpf(rcp_m * (1.0f - 0x1p-20f), -e));
            bad += test_f32_bits(rcp * (1.0f + 0x1p-20f)) != test_f32_bits(ldexpf(rcp_m * (1.0f + 0x1p-20f), -e));
            checked++;
        }
        test_count(&tc, checked);
        TEST_CHECK(&tc, bad == 0 && checked > 128 * 128, "%s: %zu mismatches over %zu BF16 amaxes: the power-of-two law fails",
                   schemes[k], bad, checked);
        fpsim_qtensor_free(&q);
    }
    free(x);
}

/* Block FP8's multiplying rules (TE's scale and its power-of-two truncation, DeepGEMM's sf and its
 * UE8M0 rounding up) give, for a BF16 block amax M 2^e, an element multiplier mult(M) 2^-e and a
 * scale_inv scale_inv(M) 2^e wherever amax >= max(eps, 2^-100), given a format max in [64, 65536]
 * and eps <= 1: the premise of a BF16 scale table for these rules in kernels v7 and v8
 * (fp8_block_table_least in gpu/results/probe-fp8-table.diff, not yet on main: it awaits a device
 * run). Checked on every positive finite BF16 amax against the CPU emulator's scale_inv and the
 * multiplier as the library forms it (TE: fpsim_fp8_te_scale; DeepGEMM: RN(1 / sf)); below
 * 2^-100 with eps = 0 the law must fail
 * somewhere (TE's scale overflows), so the bound is needed and the check can see a failure. */
/* Block FP8's element multiplier as the library forms it from a block's amax and its scale_inv:
 * TE's scale (fpsim_fp8_te_scale), DeepGEMM's RN(1 / sf). */
static float library_fp8_mult(const fpsim_scheme *s, float amax, float scale_inv)
{
    const float fmax = s->elem == FPSIM_E5M2 ? 57344.0f : 448.0f;
    if (s->scale == FPSIM_FP8B_TE_POW2 || s->scale == FPSIM_FP8B_TE_FP32)
        return fpsim_fp8_te_scale(amax, fmax, s->scale == FPSIM_FP8B_TE_POW2, s->eps, FLT_MAX);
    return 1.0f / scale_inv;
}
static void fp8_block_scale_power_of_two(void)
{
    static const char *const schemes[] = {
        "fp8-block",                          "fp8-block:scale=te-fp32",          "fp8-block:scale=deepgemm-fp32",
        "fp8-block:scale=deepgemm-ue8m0",     "fp8-block:fmt=e5m2",               "fp8-block:fmt=e5m2,scale=deepgemm-fp32",
        "fp8-block:scale=te-fp32,eps=1e-20", "fp8-block:scale=deepgemm-ue8m0,eps=0", "fp8-block:scale=te-fp32,eps=1",
    };
    float *x = bf16_amax_blocks();
    if (!x) return;
    for (size_t k = 0; k < sizeof schemes / sizeof schemes[0]; k++) {
        fpsim_scheme s;
        fpsim_qtensor q;
        if (!quantize_amax_blocks(&q, &s, schemes[k], x)) continue;
        const int te = s.scale == FPSIM_FP8B_TE_POW2 || s.scale == FPSIM_FP8B_TE_FP32;
        const float eps = s.eps;
        TEST_CHECK(&tc, eps <= 1.0f, "%s: eps %g above the table's 1", schemes[k], (double)eps);
        size_t checked = 0, bad = 0, bad_below = 0;
        for (size_t r = 0; r < SWEEP_ROWS; r++) {
            const uint32_t bits = (uint32_t)(r + 1) << 16;
            const float amax = test_f32_from_bits(bits);
            const int e = (int)(bits >> 23) - 127;
            const size_t rm = ((bits & 0x007F0000u) | 0x3F800000u) >> 16; /* M's pattern */
            const float inv = q.scale_inv[r], inv_m = q.scale_inv[rm - 1];
            const float mult = library_fp8_mult(&s, amax, inv);
            const float mult_m = library_fp8_mult(&s, test_f32_from_bits((uint32_t)rm << 16), inv_m);
            const int fails = test_f32_bits(inv) != test_f32_bits(ldexpf(inv_m, e)) ||
                              test_f32_bits(mult) != test_f32_bits(ldexpf(mult_m, -e));
            if (amax >= fmaxf(eps, 0x1p-100f)) {
                bad += fails;
                checked++;
            } else {
                bad_below += fails;
            }
        }
        test_count(&tc, checked);
        TEST_CHECK(&tc, bad == 0 && checked >= 128 * 128, "%s: %zu mismatches over %zu BF16 amaxes: the power-of-two law fails",
                   schemes[k], bad, checked);
        if (eps == 0.0f && te)
            TEST_CHECK(&tc, bad_below > 0, "%s: the law holds under 2^-100 too: the check cannot see a failure", schemes[k]);
        fpsim_qtensor_free(&q);
    }
    free(x);
}

int main(void)
{
    cublas_layouts();
    error_bounds();
    special_blocks();
    transposes();
    delayed_scaling();
    sr_unbiased();
    threads_and_stats();
    shapes_and_inputs();
    vllm_scale_power_of_two();
    fp8_block_scale_power_of_two();
    return test_summary(&tc);
}
