/* test_block_simd.c: the AVX-512 twins of the block kernels (formats/block_avx512.c) against
 * independent references: the core's fpsim_round_f32 (the definition of every element
 * conversion), fpsim_rht16 and the rhtsum=mma model of rht16_mma.h (the definitions of the RHT's
 * two policies), and plain loops written here for the
 * block amax and the FP4 nibble packing. Also the twins against the portable loops they replace
 * (fpsim_block_fast.simd cleared), and whole quantize calls on adversarial tensors on 1 and 3
 * threads.
 *
 * Data: random FP32 of every exponent, values at the element grid's rounding boundaries,
 * zeros of both signs, FP32 subnormals, Inf, NaN payloads; row lengths that are not multiples of
 * 16 (masked tails); block factors from tiny to huge (subnormal and saturating results).
 * Skips (77) on a CPU without AVX-512 F/BW/DQ/VL, where the twins never run. */
#define FPSIM_BLOCK_INTERNAL
#include "fpsim_block.h"
#include "fpsim_formats.h"
#include "rht16_mma.h"
#include "rht_vectors.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static test_counter tc_amax = TEST_COUNTER_INIT("amax row/tile/bits, BF16 widening vs plain loop");
static test_counter tc_rne = TEST_COUNTER_INIT("RNE row vs core and portable loop");
static test_counter tc_sr = TEST_COUNTER_INIT("SR row (bytes) vs core and portable loop");
static test_counter tc_pack = TEST_COUNTER_INIT("FP4 packing vs plain loop");
static test_counter tc_rht = TEST_COUNTER_INIT("transposed RHT vs fpsim_rht16 and the rhtsum=mma model");
static test_counter tc_quant = TEST_COUNTER_INIT("quantize 1 vs 3 threads, columnwise RHT");

enum { NMAX = 4096 + 37 };

/* An adversarial float: mostly random normal values, with specials mixed in. */
static float adversarial(uint64_t *rng)
{
    const uint64_t z = test_splitmix64(rng);
    const uint32_t k = (uint32_t)(z >> 56);
    const uint32_t sign = (uint32_t)(z >> 55 & 1u) << 31;
    if (k < 4)
        return test_f32_from_bits(sign | 0x7F800000u | (uint32_t)(z & 0x7FFFFFu) | 1u); /* NaN */
    if (k < 6)
        return test_f32_from_bits(sign | 0x7F800000u); /* Inf */
    if (k < 12)
        return test_f32_from_bits(sign); /* +-0 */
    if (k < 20)
        return test_f32_from_bits(sign | (uint32_t)(z & 0x7FFFFFu)); /* subnormal */
    if (k < 60) /* any exponent */
        return test_f32_from_bits(sign | (uint32_t)(z & 0x7FFFFFFFu) % 0x7F800000u);
    /* O(1) values, some on 1/16 grid points (rounding ties of the FP4/FP8 grids) */
    const float v = (float)((int32_t)(z & 0xFFFF) - 32768) / 4096.0f;
    return k < 100 ? roundf(v * 16.0f) / 16.0f : v;
}

static void fill(float *x, size_t n, uint64_t seed, int specials)
{
    uint64_t rng = seed;
    for (size_t i = 0; i < n; i++) {
        if (specials) {
            x[i] = adversarial(&rng);
        } else {
            const uint64_t z = test_splitmix64(&rng);
            x[i] = ldexpf((float)((int32_t)(z & 0xFFFFFF) - 0x800000) / 0x800000, (int)(z >> 59) - 8);
        }
    }
}

/* ---- block amax ------------------------------------------------------------------------- */

static void ref_amax(const float *x, size_t n, uint32_t *m, int *nan)
{
    *m = 0;
    *nan = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i])) {
            *nan = 1;
            continue;
        }
        const uint32_t a = test_f32_bits(fabsf(x[i]));
        *m = a > *m ? a : *m;
    }
}

static void check_amax(const float *x, size_t n, size_t bs)
{
    uint32_t m[FPSIM_BLOCK_TILE_NB];
    uint8_t nan[FPSIM_BLOCK_TILE_NB];
    const size_t nb = (n + bs - 1) / bs;
    if (nb > FPSIM_BLOCK_TILE_NB)
        return;
    fpsim_block_amax_row_avx512(x, n, bs, m, nan);
    for (size_t b = 0; b < nb; b++) {
        uint32_t rm;
        int rn;
        ref_amax(x + b * bs, (b + 1) * bs <= n ? bs : n - b * bs, &rm, &rn);
        tc_amax.checks++;
        if (m[b] != rm || nan[b] != rn)
            test_fail(&tc_amax, "amax row n=%zu bs=%zu block %zu: 0x%08x/%d, want 0x%08x/%d", n, bs, b,
                      m[b], nan[b], rm, rn);
    }
    int sn = 0, rn;
    uint32_t rm, got = fpsim_block_amax_bits_avx512(x, n, &sn);
    ref_amax(x, n, &rm, &rn);
    tc_amax.checks++;
    if (got != rm || sn != rn)
        test_fail(&tc_amax, "amax bits n=%zu: 0x%08x/%d, want 0x%08x/%d", n, got, sn, rm, rn);
}

static void check_amax_tile(const float *x, size_t stride, size_t nrows, size_t n, size_t bs)
{
    uint32_t m[FPSIM_BLOCK_TILE_NB];
    uint8_t nan[FPSIM_BLOCK_TILE_NB];
    fpsim_block_amax_tile(x, stride, nrows, n, bs, m, nan);
    for (size_t b = 0; b * bs < n; b++) {
        uint32_t want = 0;
        int wnan = 0;
        for (size_t r = 0; r < nrows; r++) {
            uint32_t rm;
            int rn;
            ref_amax(x + r * stride + b * bs, (b + 1) * bs <= n ? bs : n - b * bs, &rm, &rn);
            want = rm > want ? rm : want;
            wnan |= rn;
        }
        tc_amax.checks++;
        if (m[b] != want || nan[b] != wnan)
            test_fail(&tc_amax, "amax tile %zux%zu block %zu: 0x%08x/%d, want 0x%08x/%d", nrows, bs, b,
                      m[b], nan[b], want, wnan);
    }
}

/* The BF16 widening + block amax of one row against the exact widening and ref_amax. */
static void check_widen(size_t n, uint64_t seed)
{
    static uint16_t h[NMAX];
    static float x[NMAX];
    uint32_t m[FPSIM_BLOCK_TILE_NB];
    uint8_t nan[FPSIM_BLOCK_TILE_NB];
    uint64_t rng = seed;
    for (size_t i = 0; i < n; i++)
        h[i] = (uint16_t)(test_f32_bits(adversarial(&rng)) >> 16);
    fpsim_block_widen_bf16_amax_avx512(x, h, n, 16, m, nan);
    for (size_t i = 0; i < n; i++) {
        tc_amax.checks++;
        if (test_f32_bits(x[i]) != (uint32_t)h[i] << 16)
            test_fail(&tc_amax, "widen n=%zu element %zu: 0x%08x, want 0x%04x0000", n, i, test_f32_bits(x[i]),
                      h[i]);
    }
    for (size_t b = 0; b * 16 < n; b++) {
        uint32_t rm;
        int rn;
        ref_amax(x + b * 16, (b + 1) * 16 <= n ? 16 : n - b * 16, &rm, &rn);
        tc_amax.checks++;
        if (m[b] != rm || nan[b] != rn)
            test_fail(&tc_amax, "widen amax n=%zu block %zu: 0x%08x/%d, want 0x%08x/%d", n, b, m[b], nan[b],
                      rm, rn);
    }
}

/* ---- element conversion ------------------------------------------------------------------ */

static void check_rne(const fpsim_block_fast *fc, const float *x, size_t n, size_t bs, const float *fs,
                      const char *what)
{
    static uint8_t got[NMAX], port[NMAX];
    fpsim_block_fast simd = *fc, plain = *fc;
    simd.simd = 1;
    plain.simd = 0;
    const float satmax = fpsim_block_elem_max(fc->spec.format) * 0.75f;
    const uint64_t s1 = fpsim_block_fast_row(got, x, n, bs, fs, &simd, satmax);
    const uint64_t s2 = fpsim_block_fast_row(port, x, n, bs, fs, &plain, satmax);
    uint64_t want_sat = 0;
    for (size_t i = 0; i < n; i++) {
        const float y = x[i] * fs[i / bs];
        want_sat += isfinite(x[i]) && fabsf(y) > satmax;
        const uint32_t want = fpsim_round_f32(test_f32_bits(y), &fc->spec, 0);
        tc_rne.checks++;
        if (got[i] != (uint8_t)want || port[i] != got[i])
            test_fail(&tc_rne, "%s bs=%zu x=0x%08x f=%a: simd 0x%02x, portable 0x%02x, core 0x%02x", what,
                      bs, test_f32_bits(x[i]), (double)fs[i / bs], got[i], port[i], want);
    }
    tc_rne.checks++;
    if (s1 != want_sat || s2 != want_sat)
        test_fail(&tc_rne, "%s bs=%zu n=%zu: clipped simd %llu portable %llu, want %llu", what, bs, n,
                  (unsigned long long)s1, (unsigned long long)s2, (unsigned long long)want_sat);
}

static void check_sr(const fpsim_block_fast *fc, const float *x, size_t n, size_t bs, const float *fs,
                     const uint8_t *rb, const char *what)
{
    static uint8_t got[NMAX], port[NMAX];
    fpsim_block_fast simd = *fc, plain = *fc;
    simd.simd = 1;
    plain.simd = 0;
    const uint64_t s1 = fpsim_block_fast_sr_row_bytes(got, x, n, bs, fs, rb, &simd, 6.0f);
    const uint64_t s2 = fpsim_block_fast_sr_row_bytes(port, x, n, bs, fs, rb, &plain, 6.0f);
    uint64_t want_sat = 0;
    for (size_t i = 0; i < n; i++) {
        const float y = x[i] * fs[i / bs];
        want_sat += isfinite(x[i]) && fabsf(y) > 6.0f;
        const uint32_t want = fpsim_round_f32(test_f32_bits(y), &fc->spec, (uint32_t)rb[i] << 24);
        tc_sr.checks++;
        if (got[i] != (uint8_t)want || port[i] != got[i])
            test_fail(&tc_sr, "%s bs=%zu x=0x%08x f=%a r=%02x: simd 0x%02x, portable 0x%02x, core 0x%02x",
                      what, bs, test_f32_bits(x[i]), (double)fs[i / bs], rb[i], got[i], port[i], want);
    }
    tc_sr.checks++;
    if (s1 != want_sat || s2 != want_sat)
        test_fail(&tc_sr, "%s bs=%zu: clipped simd %llu portable %llu, want %llu", what, bs,
                  (unsigned long long)s1, (unsigned long long)s2, (unsigned long long)want_sat);
}

/* Every policy of every element format the block schemes use, rows of several lengths and
 * block sizes, factors from 2^-40 to 2^40 (finite and nonzero: the rows' contract). */
static void conversions(void)
{
    static const int fmts[] = {FPSIM_E4M3, FPSIM_E5M2, FPSIM_E2M3, FPSIM_E3M2, FPSIM_E2M1};
    static const size_t lens[] = {16, 37, 128, 1000, 4096 + 37};
    static const size_t bss[] = {16, 32, 128};
    static float x[NMAX], fs[NMAX];
    static uint8_t rb[NMAX];
    uint64_t rng = 99;
    int specs = 0;
    for (size_t fi = 0; fi < 5; fi++) {
        char names[512];
        snprintf(names, sizeof names, "%s", fpsim_policy_names(fmts[fi]));
        for (char *p = strtok(names, ", "); p; p = strtok(NULL, ", ")) {
            for (int sr = 0; sr < 2; sr++) {
                fpsim_spec s;
                if (fpsim_spec_make(&s, (fpsim_format_id)fmts[fi], p, sr ? FPSIM_SR : FPSIM_RNE, sr ? 8 : 0) !=
                    FPSIM_OK)
                    continue;
                fpsim_block_fast fc;
                fpsim_block_fast_init(&fc, &s);
                if (!fc.ok)
                    continue;
                specs++;
                char what[64];
                snprintf(what, sizeof what, "%s/%s%s", fpsim_format_get((fpsim_format_id)fmts[fi])->name, p,
                         sr ? "/sr" : "");
                for (size_t li = 0; li < 5; li++)
                    for (size_t bi = 0; bi < 3; bi++)
                        for (int special = 0; special < 2; special++) {
                            const size_t n = lens[li], bs = bss[bi];
                            fill(x, n, test_splitmix64(&rng), special);
                            for (size_t b = 0; b * bs < n; b++) {
                                const uint64_t z = test_splitmix64(&rng);
                                fs[b] = ldexpf(1.0f + (float)(z & 0xFFFF) / 65536.0f, (int)(z >> 58) - 32);
                            }
                            for (size_t i = 0; i < n; i++)
                                rb[i] = (uint8_t)test_splitmix64(&rng);
                            if (sr)
                                check_sr(&fc, x, n, bs, fs, rb, what);
                            else
                                check_rne(&fc, x, n, bs, fs, what);
                        }
            }
        }
    }
    if (specs < 10)
        test_fail(&tc_rne, "only %d specs take the fast path", specs);
}

/* ---- packing, RHT ----------------------------------------------------------------------- */

static void packing(void)
{
    static uint8_t codes[NMAX], got[NMAX / 2 + 1];
    uint64_t rng = 5;
    for (size_t n = 0; n < 300; n += 7) {
        for (size_t i = 0; i < n; i++)
            codes[i] = (uint8_t)test_splitmix64(&rng);
        memset(got, 0xA5, sizeof got);
        fpsim_block_pack_fp4_avx512(got, codes, n);
        for (size_t k = 0; 2 * k + 1 < n; k++) {
            tc_pack.checks++;
            const uint8_t want = (uint8_t)((codes[2 * k] & 0xFu) | ((codes[2 * k + 1] & 0xFu) << 4));
            if (got[k] != want)
                test_fail(&tc_pack, "n=%zu byte %zu: 0x%02x, want 0x%02x", n, k, got[k], want);
        }
        tc_pack.checks++;
        if (got[n / 2] != 0xA5 && (n & 1u))
            test_fail(&tc_pack, "n=%zu: wrote the odd tail byte", n);
    }
}

/* mma: the rhtsum=mma copy against the model of rht16_mma.h (integers, no fast path).
 * narrow = 1: values 2^k (1 + f), k uniform in [0, 13], with cancelling pairs, so that about half
 * the vectors lie within the 12 binades where the two policies agree and the rest just beyond;
 * narrow = 2: vectors whose every result is a tie that terms below the MMA's alignment decide. */
static void rht(size_t rows, size_t cols, int specials, uint64_t seed, int mma, int narrow)
{
    float *x = malloc(rows * cols * sizeof(float));
    float *d = malloc(rows * cols * sizeof(float));
    uint16_t *h = malloc(rows * cols * sizeof(uint16_t));
    fill(x, rows * cols, seed, 0);
    if (narrow == 2) { /* each vector at a BF16 midpoint: +-2^e, +-2^(e-8), decided by one or two
                          * terms 17-27 binades below, which the MMA's alignment truncates */
        uint64_t rng = seed ^ 0x3C;
        for (size_t j = 0; j < cols; j++)
            for (size_t i0 = 0; i0 < rows; i0 += 16) {
                const uint64_t z = test_splitmix64(&rng);
                const uint32_t e = 100u + (uint32_t)(z % 40u);
                for (size_t k = 0; k < 16; k++) {
                    const uint64_t w = test_splitmix64(&rng);
                    const uint32_t sign = (uint32_t)(w >> 63) << 31;
                    uint32_t b = 0;
                    if (k == 0)
                        b = sign | e << 23;
                    else if (k == 1)
                        b = sign | (e - 8u) << 23;
                    else if (k == 2 || (k == 3 && (z >> 40) % 2u))
                        b = sign | (e - 17u - (uint32_t)(w % 11u)) << 23 | (uint32_t)((w >> 8) & 0x7Fu) << 16;
                    x[(i0 + k) * cols + j] = test_f32_from_bits(b);
                }
            }
    } else if (narrow) {
        uint64_t rng = seed ^ 0xA7;
        for (size_t i = 0; i < rows * cols; i++) {
            const uint64_t z = test_splitmix64(&rng);
            x[i] = ldexpf((z & 1u ? -1.0f : 1.0f) * (1.0f + (float)((z >> 8) & 0xFFFFFF) / 16777216.0f),
                          (int)((z >> 40) % 14u));
            if ((i / cols) % 2u && (z >> 60) % 2u) /* cancelling pairs down the column */
                x[i] = -x[i - cols];
        }
        /* column 3, rows 0-15: a vector 13 binades wide on which the policies differ, so that a
         * vector form cutting the MMA's sums wrongly by one bit fails here */
        float tie[16];
        rht_test_span13_tie(tie);
        for (int k = 0; k < 16; k++)
            x[(size_t)k * cols + 3] = tie[k];
    }
    if (specials) { /* wide exponent spans, tiny values (BF16-subnormal results), Inf, NaN */
        uint64_t rng = seed ^ 0x55;
        for (size_t i = 0; i < rows * cols; i += 1 + test_splitmix64(&rng) % 61)
            x[i] = adversarial(&rng);
    }
    const size_t bands = cols / 16;
    int nan_f = 0, nan_h = 0;
    const uint32_t mf = fpsim_block_rht_cols_avx512(d, NULL, x, rows, cols, 0, bands, mma, &nan_f);
    const uint32_t mh = fpsim_block_rht_cols_avx512(NULL, h, x, rows, cols, 0, bands, mma, &nan_h);
    uint32_t want_m = 0;
    int want_nan = 0;
    for (size_t j = 0; j < bands * 16; j++)
        for (size_t i0 = 0; i0 < rows; i0 += 16) {
            float v[16];
            for (size_t k = 0; k < 16; k++)
                v[k] = x[(i0 + k) * cols + j];
            if (mma) {
                uint32_t u[16];
                memcpy(u, v, sizeof u);
                fpsim_rht16_mma_bits(u, u);
                memcpy(v, u, sizeof u);
            } else {
                fpsim_rht16(v, v);
            }
            for (size_t k = 0; k < 16; k++) {
                const uint32_t want = test_f32_bits(v[k]), got = test_f32_bits(d[j * rows + i0 + k]);
                if (isnan(v[k]))
                    want_nan = 1;
                else
                    want_m = (want & 0x7FFFFFFFu) > want_m ? (want & 0x7FFFFFFFu) : want_m;
                tc_rht.checks++;
                if (got != want)
                    test_fail(&tc_rht, "%s %zux%zu column %zu rows %zu+%zu: 0x%08x, want 0x%08x",
                              mma ? "mma" : "exact", rows, cols, j, i0, k, got, want);
                if (!isnan(v[k]) && h[j * rows + i0 + k] != (uint16_t)(want >> 16))
                    test_fail(&tc_rht, "%s %zux%zu column %zu rows %zu+%zu: BF16 0x%04x, want 0x%04x",
                              mma ? "mma" : "exact", rows, cols, j, i0, k, h[j * rows + i0 + k], want >> 16);
            }
        }
    tc_rht.checks++;
    if (mf != want_m || mh != want_m || nan_f != want_nan || nan_h != want_nan)
        test_fail(&tc_rht, "%zux%zu amax 0x%08x/0x%08x nan %d/%d, want 0x%08x nan %d", rows, cols, mf, mh,
                  nan_f, nan_h, want_m, want_nan);
    free(x);
    free(d);
    free(h);
}

/* ---- whole calls -------------------------------------------------------------------------- */

/* Codes, scales and (NVFP4: from the tensor, not from the statistics) the tensor amax. */
static int same_tensor(const fpsim_qtensor *a, const fpsim_qtensor *b)
{
    return a->qrows == b->qrows && !memcmp(a->codes, b->codes, a->qrows * a->code_stride) &&
           !memcmp(a->scale_inv, b->scale_inv, a->srows * a->scols * sizeof(float)) &&
           (!a->scale_codes || !memcmp(a->scale_codes, b->scale_codes, a->srows * a->scols)) &&
           (a->scheme.kind != FPSIM_KIND_NVFP4 ||
            test_f32_bits(a->global_amax) == test_f32_bits(b->global_amax));
}

static void quantize_threads(void)
{
    static const char *const schemes[] = {"nvfp4:sr=1,rht=1", "nvfp4:rht=1", "nvfp4:rht=1,tile=16x16",
                                          "nvfp4", "mxfp8-e4m3:rule=rceil-sat", "fp8-block"};
    static const size_t shapes[][2] = {{64, 100}, {96, 48}, {48, 160}};
    for (size_t si = 0; si < sizeof schemes / sizeof *schemes; si++)
        for (size_t sh = 0; sh < 3; sh++)
            for (int specials = 0; specials < 2; specials++)
                for (unsigned want = 0; want < 2; want++) {
                    const size_t rows = shapes[sh][0], cols = shapes[sh][1];
                    float *x = malloc(rows * cols * sizeof(float));
                    fill(x, rows * cols, 1000 + sh, specials);
                    fpsim_scheme s;
                    fpsim_scheme_parse(&s, schemes[si]);
                    fpsim_qopts o;
                    fpsim_qopts_default(&o);
                    o.axis = FPSIM_AXIS_COLS;
                    o.seed = 7;
                    o.want = want ? FPSIM_QWANT_ALL : FPSIM_QWANT_CUBLAS; /* BF16 / float RHT copy */
                    fpsim_qtensor a, b;
                    memset(&a, 0, sizeof a);
                    memset(&b, 0, sizeof b);
                    o.threads = 1;
                    fpsim_status s1 = fpsim_block_quantize(&a, &s, x, rows, cols, &o);
                    o.threads = 3;
                    fpsim_status s2 = fpsim_block_quantize(&b, &s, x, rows, cols, &o);
                    tc_quant.checks++;
                    if (s1 != FPSIM_OK || s2 != FPSIM_OK || !same_tensor(&a, &b))
                        test_fail(&tc_quant, "%s %zux%zu specials=%d want=%u: status %d/%d, same=%d", schemes[si],
                                  rows, cols, specials, want, (int)s1, (int)s2,
                                  s1 == FPSIM_OK && s2 == FPSIM_OK && same_tensor(&a, &b));
                    /* the BF16 and float copies of the RHT give the same codes */
                    if (want) {
                        fpsim_qtensor c;
                        memset(&c, 0, sizeof c);
                        o.want = FPSIM_QWANT_CUBLAS;
                        fpsim_status s3 = fpsim_block_quantize(&c, &s, x, rows, cols, &o);
                        tc_quant.checks++;
                        if (s3 != FPSIM_OK || !same_tensor(&a, &c))
                            test_fail(&tc_quant, "%s %zux%zu specials=%d: codes+scales differ from the call with stats",
                                      schemes[si], rows, cols, specials);
                        fpsim_qtensor_free(&c);
                    }
                    fpsim_qtensor_free(&a);
                    fpsim_qtensor_free(&b);
                    free(x);
                }
}

int main(void)
{
    if (!fpsim_block_have_avx512()) {
        printf("skip: this CPU has no AVX-512 F/BW/DQ/VL, so the AVX-512 block kernels never run\n");
        return TEST_SKIP;
    }
    static float x[NMAX];
    static const size_t lens[] = {1, 15, 16, 17, 31, 32, 100, 128, 129, 1000, 4096 + 37};
    for (int special = 0; special < 2; special++)
        for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
            fill(x, lens[li], 17 + li, special);
            for (size_t bs = 16; bs <= 128; bs *= 2)
                check_amax(x, lens[li], bs);
        }
    fill(x, 16 * 200, 3, 1);
    check_amax_tile(x, 200, 16, 200, 16);
    check_amax_tile(x, 200, 3, 190, 32);
    check_widen(2048, 1);
    check_widen(100, 2);
    check_widen(4096, 3);
    conversions();
    packing();
    for (int mma = 0; mma < 2; mma++) {
        rht(64, 48, 0, 1, mma, 0);
        rht(32, 80, 1, 2, mma, 0);
        rht(48, 32, 1, 3, mma, 0);
        rht(64, 64, 0, 4, mma, 1);
        rht(32, 48, 1, 5, mma, 1);
        rht(256, 64, 0, 6, mma, 2);
    }
    quantize_threads();
    int bad = 0;
    bad |= test_summary(&tc_amax);
    bad |= test_summary(&tc_rne);
    bad |= test_summary(&tc_sr);
    bad |= test_summary(&tc_pack);
    bad |= test_summary(&tc_rht);
    bad |= test_summary(&tc_quant);
    return bad;
}
