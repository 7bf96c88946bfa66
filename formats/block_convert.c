/* block_convert.c: the element conversion of a block run, x * f -> codes, fast.
 *
 * The core's fpsim_round_f32 is the definition of every conversion; this file only makes the
 * common case fast and hands everything else to the core:
 *   fast path (a loop the compiler vectorizes): round-to-nearest-even of a finite |y| <= max to a
 *     signed 8-bit-or-smaller format with a sign bit and signed zeros, by the FP32 "magic adder":
 *     with E = max(exponent(|y|), emin) and C = 2^(E - mbits + 23), (|y| + C) - C is |y| rounded
 *     to a multiple of 2^(E - mbits), i.e. to the target grid, with RNE (one IEEE add whose ulp is
 *     the grid step); the code is then read from the rounded value's bits (normal) or from the
 *     exact integer |y| / 2^(emin - mbits) (subnormal);
 *   slow path (the core, element by element): NaN, Inf, |y| > max (each policy's overflow rule),
 *     every other rounding mode, and formats/policies with unsigned zeros or no -0 (FNUZ, TE's
 *     reference, DeepGEMM's FP4 reference).
 * tests/blocks/test_block_convert.c checks the fast path against the core over every exponent
 * with dense mantissa samples for every spec that takes it. */
/* GCC does not if-convert (so does not vectorize) FP arithmetic under -ftrapping-math, its
 * default. Not trapping changes no value: IEEE results are the same, only the assumption that FP
 * exceptions may trap is dropped (no reassociation, no contraction: -ffp-contract=off stays). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#define FPSIM_BLOCK_INTERNAL
#include "block_arith.h"
#include "fpsim_block.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void fpsim_block_fast_init(fpsim_block_fast *fc, const fpsim_spec *s)
{
    memset(fc, 0, sizeof *fc);
    fc->spec = *s;
    const int eligible = (s->round == FPSIM_RNE || (s->round == FPSIM_SR && s->sr_bits <= 8)) &&
                         s->bits <= 8 && s->is_signed &&
                         s->specials != FPSIM_SPECIALS_FNUZ && s->specials != FPSIM_SPECIALS_E8M0 &&
                         !(s->flags & (FPSIM_SPEC_UNSIGNED_ZERO | FPSIM_SPEC_NEGZERO_IN_POS)) &&
                         s->mbits >= 1 && s->mbits <= 7;
    if (!eligible)
        return;
    fc->ok = 1;
    fc->mbits = s->mbits;
    fc->ebmin = (uint32_t)(128 - s->bias); /* biased FP32 exponent of the smallest normal */
    fc->maxbits = fpsim_decode_f32(s->max_mag, s);
    fc->sub_mul = u2f((uint32_t)(127 + s->mbits + s->bias - 1) << 23); /* 2^(mbits - emin) */
    fc->sign_shift = (uint32_t)s->bits - 1u;
    fc->max_mag = s->max_mag;
    fc->sr = s->round == FPSIM_SR;
    /* satfinite specs (finite overflow and Inf give +-max): clamping |y| to max gives their code
     * in the vector loop, and only NaN needs the core */
    const uint32_t neg_max = (1u << (s->bits - 1)) | s->max_mag;
    const int sat = s->ovf_pos == s->max_mag && s->ovf_neg == neg_max && s->inf_pos == s->max_mag &&
                    s->inf_neg == neg_max;
    fc->slow_above = sat ? 0x7F800000u : fc->maxbits;
    fc->simd = fpsim_block_have_avx512();
}


FPSIM_CLONES
uint32_t fpsim_block_amax_bits(const float *restrict x, size_t n, int *saw_nan)
{
    if (fpsim_block_have_avx512())
        return fpsim_block_amax_bits_avx512(x, n, saw_nan);
    /* |x| of non-NaN floats orders like its bits (as signed integers, all < 2^31) */
    int32_t m = 0, nan = 0;
    for (size_t i = 0; i < n; i++) {
        const int32_t ab = (int32_t)(f2u(x[i]) & 0x7FFFFFFFu);
        nan |= ab > 0x7F800000;
        const int32_t v = ab > 0x7F800000 ? 0 : ab;
        m = v > m ? v : m;
    }
    *saw_nan |= nan != 0;
    return (uint32_t)m;
}

/* The vector loop: codes of n elements, element i scaled by fv[i] (finite, nonzero). */
static inline __attribute__((always_inline)) uint32_t fast_loop(uint8_t *restrict codes, const float *restrict x,
                                 const float *restrict fv, size_t n, const fpsim_block_fast *fc,
                                 uint32_t satbits, uint32_t *slow)
{
    const uint32_t m = fc->mbits, ebmin = fc->ebmin, maxbits = fc->maxbits, sh = fc->sign_shift;
    const uint32_t minnorm = ebmin << 23, lim = fc->slow_above;
    /* subnormal codes: r + D is exact for r < 2^emin with D = 2^(emin - mbits + 23), and its bits
     * are bits(D) + r / 2^(emin - mbits) (no float-to-int conversion, so the loop if-converts) */
    const float d = u2f((ebmin + 23u - m) << 23);
    const uint32_t dbits = f2u(d);
    uint32_t sl = 0, nsat = 0;
    for (size_t i = 0; i < n; i++) {
        const float y = x[i] * fv[i];
        const uint32_t b = f2u(y);
        const uint32_t ab = b & 0x7FFFFFFFu;
        const uint32_t abc = ab < maxbits ? ab : maxbits; /* NaN, Inf, > max: clamped (satfinite
                                                             specs) or fixed up after */
        const float a = u2f(abc);
        const uint32_t eb = (abc >> 23) > ebmin ? (abc >> 23) : ebmin;
        const float c = u2f((eb + 23u - m) << 23);
        const float r = (a + c) - c;
        const uint32_t rb = f2u(r);
        const uint32_t normal = (rb >> (23u - m)) - ((ebmin - 1u) << m);
        const uint32_t sub = f2u(r + d) - dbits;
        const uint32_t code = (rb >= minnorm ? normal : sub) | ((b >> 31) << sh);
        codes[i] = (uint8_t)code;
        sl |= (uint32_t)(ab > lim);
        nsat += (uint32_t)(((f2u(x[i]) & 0x7FFFFFFFu) < 0x7F800000u) & (ab > satbits) &
                           (ab <= 0x7F800000u));
    }
    *slow |= sl;
    return nsat;
}

/* Chunks of up to FV elements with their factors expanded, one long vector loop each. */
enum { FV = 1024 };

static inline __attribute__((always_inline)) uint64_t fast_expand(uint8_t *restrict codes, const float *restrict x, size_t n, size_t bs,
                            const float *restrict fs, const fpsim_block_fast *fc, uint32_t satbits,
                            uint32_t *slow)
{
    float fv[FV];
    uint64_t sat = 0;
    for (size_t c0 = 0; c0 < n; c0 += FV) {
        const size_t len = c0 + FV < n ? FV : n - c0;
        size_t b = c0 / bs, off = c0 % bs;
        for (size_t i = 0; i < len; b++, off = 0) {
            const size_t take = bs - off < len - i ? bs - off : len - i;
            const float f = fs[b];
            for (size_t k = 0; k < take; k++)
                fv[i + k] = f;
            i += take;
        }
        sat += fast_loop(codes + c0, x + c0, fv, len, fc, satbits, slow);
    }
    return sat;
}

/* Elements whose scaled value is NaN, Inf or above max: the core decides (overflow policy). */
static void fix_block(uint8_t *codes, const float *x, size_t n, float f, const fpsim_block_fast *fc)
{
    for (size_t i = 0; i < n; i++) {
        const float y = x[i] * f;
        if ((f2u(y) & 0x7FFFFFFFu) > fc->slow_above)
            codes[i] = (uint8_t)fpsim_round_f32(f2u(y), &fc->spec, 0);
    }
}

FPSIM_CLONES
uint64_t fpsim_block_fast_run(uint8_t *restrict codes, const float *restrict x, size_t n, float f,
                              const fpsim_block_fast *fc, float satmax)
{
    uint64_t sat = 0;
    if (!fc->ok || fc->sr || !isfinite(f) || f == 0.0f) {
        /* core for everything (f NaN/0/Inf never reaches here from the kernels, but be total) */
        for (size_t i = 0; i < n; i++) {
            float y = x[i] * f;
            sat += (uint64_t)(isfinite(x[i]) && fabsf(y) > satmax);
            codes[i] = (uint8_t)fpsim_round_f32(f2u(y), &fc->spec, 0);
        }
        return sat;
    }
    uint32_t slow = 0;
    sat = fc->simd ? fpsim_block_fast_row_avx512(codes, x, n, (n + 15) & ~(size_t)15, &f, fc,
                                                 f2u(satmax), &slow)
                   : fast_expand(codes, x, n, n, &f, fc, f2u(satmax), &slow);
    if (slow)
        fix_block(codes, x, n, f, fc);
    return sat;
}

FPSIM_CLONES
uint64_t fpsim_block_fast_row(uint8_t *restrict codes, const float *restrict x, size_t n, size_t bs,
                              const float *restrict fs, const fpsim_block_fast *fc, float satmax)
{
    if (!fc->ok || fc->sr) {
        uint64_t sat = 0;
        for (size_t c0 = 0; c0 < n; c0 += bs)
            sat += fpsim_block_fast_run(codes + c0, x + c0, c0 + bs < n ? bs : n - c0, fs[c0 / bs], fc,
                                        satmax);
        return sat;
    }
    uint32_t slow = 0;
    uint64_t sat = fc->simd && bs % 16 == 0
                       ? fpsim_block_fast_row_avx512(codes, x, n, bs, fs, fc, f2u(satmax), &slow)
                       : fast_expand(codes, x, n, bs, fs, fc, f2u(satmax), &slow);
    if (slow)
        for (size_t b = 0; b * bs < n; b++)
            fix_block(codes + b * bs, x + b * bs, (b + 1) * bs <= n ? bs : n - b * bs, fs[b], fc);
    return sat;
}

static inline __attribute__((always_inline)) void amax_row_bs(const float *restrict x, size_t n,
                                                              const size_t BS, uint32_t *restrict m,
                                                              uint8_t *restrict nan)
{
    /* |x| bits as signed 32-bit integers (all < 2^31) order like the values; NaN lanes count 0 */
    for (size_t b = 0; b * BS < n; b++) {
        const size_t len = (b + 1) * BS <= n ? BS : n - b * BS;
        const float *xb = x + b * BS;
        int32_t mm = 0, nn = 0;
        for (size_t i = 0; i < len; i++) {
            const int32_t ab = (int32_t)(f2u(xb[i]) & 0x7FFFFFFFu);
            nn |= ab > 0x7F800000;
            const int32_t v = ab > 0x7F800000 ? 0 : ab;
            mm = v > mm ? v : mm;
        }
        m[b] = (uint32_t)mm;
        nan[b] = (uint8_t)(nn != 0);
    }
}

FPSIM_CLONES
void fpsim_block_amax_row(const float *restrict x, size_t n, size_t bs, uint32_t *restrict m,
                          uint8_t *restrict nan)
{
    if (bs % 16 == 0 && fpsim_block_have_avx512()) {
        fpsim_block_amax_row_avx512(x, n, bs, m, nan);
        return;
    }
    switch (bs) {
    case 16: amax_row_bs(x, n, 16, m, nan); break;
    case 32: amax_row_bs(x, n, 32, m, nan); break;
    case 128: amax_row_bs(x, n, 128, m, nan); break;
    default: amax_row_bs(x, n, bs, m, nan); break;
    }
}

void fpsim_block_amax_tile(const float *x, size_t stride, size_t nrows, size_t n, size_t bs,
                           uint32_t *restrict m, uint8_t *restrict nan)
{
    uint32_t mr[FPSIM_BLOCK_TILE_NB];
    uint8_t nr[FPSIM_BLOCK_TILE_NB];
    const size_t nb = (n + bs - 1) / bs;
    if (bs % 16 == 0 && nrows <= 16 && fpsim_block_have_avx512()) {
        /* rows folded per block, one reduction per block (taller tiles: row by row below, which
         * reads the rows sequentially) */
        fpsim_block_amax_tile_avx512(x, stride, nrows, n, bs, m, nan);
        return;
    }
    fpsim_block_amax_row(x, n, bs, m, nan);
    for (size_t r = 1; r < nrows; r++) { /* 2D tiles: the max over the tile's rows */
        fpsim_block_amax_row(x + r * stride, n, bs, mr, nr);
        for (size_t k = 0; k < nb; k++) {
            m[k] = mr[k] > m[k] ? mr[k] : m[k];
            nan[k] |= nr[k];
        }
    }
}

void fpsim_block_pack_fp4(uint8_t *restrict dst, const uint8_t *restrict codes, size_t n)
{
    if (fpsim_block_have_avx512()) {
        fpsim_block_pack_fp4_avx512(dst, codes, n);
        return;
    }
    for (size_t i = 0; i + 1 < n; i += 2)
        dst[i / 2] = (uint8_t)((codes[i] & 0xFu) | ((codes[i + 1] & 0xFu) << 4));
}

/* Stochastic rounding (the core's rule: the random bits r, at most 8 of them at the top of the
 * word, are added at the top of the discarded field, then truncate) of a run scaled by f:
 * q = floor((sig * 2^(32-d) + r) / 2^32) in 32-bit integers, d = the dropped bits (wider for
 * results subnormal in the target). With 8 random bits and d > 32 nothing can carry (sig >>
 * (d - 32) < 2^23), so q = 0. NaN, Inf, |y| > max and a carry past max go to the core. */
/* The SR vector loop with per-element factors fv[i]. */
static inline __attribute__((always_inline)) uint32_t sr_loop(uint8_t *restrict codes,
                                                              const float *restrict x,
                                                              const float *restrict fv, size_t n,
                                                              const uint32_t *restrict rbits,
                                                              const fpsim_block_fast *fc,
                                                              float satmax, uint32_t *slow_out)
{
    const uint32_t m = fc->mbits, ebmin = fc->ebmin, maxbits = fc->maxbits, sh = fc->sign_shift;
    const uint32_t max_mag = fc->max_mag, satbits = f2u(satmax), lim = fc->slow_above;
    const uint32_t rmask = 0xFFFFFFFFu << (32u - fc->spec.sr_bits);
    uint32_t slow = 0, nsat = 0;
    for (size_t i = 0; i < n; i++) {
        const float y = x[i] * fv[i];
        const uint32_t b = f2u(y);
        const uint32_t ab = b & 0x7FFFFFFFu;
        const uint32_t a = ab < maxbits ? ab : maxbits;
        const uint32_t ef = a >> 23;
        const uint32_t sig = (a & 0x7FFFFFu) | ((uint32_t)(ef != 0) << 23);
        const uint32_t e1 = ef + (ef == 0);
        const uint32_t extra = ebmin > e1 ? ebmin - e1 : 0u;
        const uint32_t d = 23u - m + extra;
        const uint32_t dc = d < 32u ? d : 32u;
        const uint32_t hi = d < 32u ? sig >> dc : 0u;
        const uint32_t frac = sig << (32u - dc);
        const uint32_t r = rbits[i] & rmask;
        const uint32_t carry = (d <= 32u) & ((uint32_t)(frac + r) < frac);
        const uint32_t mag = ((e1 > ebmin ? e1 - ebmin : 0u) << m) + hi + carry;
        codes[i] = (uint8_t)(mag | ((b >> 31) << sh));
        slow |= (uint32_t)(ab > lim) | (uint32_t)(mag > max_mag);
        nsat += (uint32_t)(((f2u(x[i]) & 0x7FFFFFFFu) < 0x7F800000u) & (ab > satbits) &
                           (ab <= 0x7F800000u));
    }
    *slow_out |= slow;
    return nsat;
}

FPSIM_CLONES
uint64_t fpsim_block_fast_sr_run(uint8_t *restrict codes, const float *restrict x, size_t n, float f,
                                 const uint32_t *restrict rbits, const fpsim_block_fast *fc,
                                 float satmax)
{
    uint64_t sat = 0;
    if (!fc->ok || !fc->sr || !isfinite(f) || f == 0.0f) {
        for (size_t i = 0; i < n; i++) {
            float y = x[i] * f;
            sat += (uint64_t)(isfinite(x[i]) && fabsf(y) > satmax);
            codes[i] = (uint8_t)fpsim_round_f32(f2u(y), &fc->spec, rbits[i]);
        }
        return sat;
    }
    const uint32_t maxbits = fc->maxbits;
    uint32_t slow = 0, nsat = 0;
    float fv[FV];
    for (size_t c0 = 0; c0 < n; c0 += FV) {
        const size_t len = c0 + FV < n ? FV : n - c0;
        for (size_t i = 0; i < len; i++)
            fv[i] = f;
        nsat += sr_loop(codes + c0, x + c0, fv, len, rbits + c0, fc, satmax, &slow);
    }
    sat = nsat;
    if (slow)
        for (size_t i = 0; i < n; i++) {
            const float y = x[i] * f;
            const uint32_t ab = f2u(y) & 0x7FFFFFFFu;
            /* a carry past max needs |y| >= max (|y| below max rounds up to max at most) */
            if (ab > fc->slow_above || (ab >= maxbits && fc->slow_above == maxbits))
                codes[i] = (uint8_t)fpsim_round_f32(f2u(y), &fc->spec, rbits[i]);
        }
    return sat;
}

FPSIM_CLONES
uint64_t fpsim_block_fast_sr_row(uint8_t *restrict codes, const float *restrict x, size_t n, size_t bs,
                                 const float *restrict fs, const uint32_t *restrict rbits,
                                 const fpsim_block_fast *fc, float satmax)
{
    uint64_t sat = 0;
    if (!fc->ok || !fc->sr) {
        for (size_t c0 = 0; c0 < n; c0 += bs)
            sat += fpsim_block_fast_sr_run(codes + c0, x + c0, c0 + bs < n ? bs : n - c0, fs[c0 / bs],
                                           rbits + c0, fc, satmax);
        return sat;
    }
    uint32_t slow = 0;
    float fv[FV];
    for (size_t c0 = 0; c0 < n; c0 += FV) {
        const size_t len = c0 + FV < n ? FV : n - c0;
        size_t b = c0 / bs, off = c0 % bs;
        for (size_t i = 0; i < len; b++, off = 0) {
            const size_t take = bs - off < len - i ? bs - off : len - i;
            for (size_t k = 0; k < take; k++)
                fv[i + k] = fs[b];
            i += take;
        }
        sat += sr_loop(codes + c0, x + c0, fv, len, rbits + c0, fc, satmax, &slow);
    }
    if (slow)
        for (size_t i = 0; i < n; i++) {
            const float y = x[i] * fs[i / bs];
            const uint32_t ab = f2u(y) & 0x7FFFFFFFu;
            if (ab > fc->slow_above || (ab >= fc->maxbits && fc->slow_above == fc->maxbits))
                codes[i] = (uint8_t)fpsim_round_f32(f2u(y), &fc->spec, rbits[i]);
        }
    return sat;
}

uint64_t fpsim_block_fast_sr_row_bytes(uint8_t *restrict codes, const float *restrict x, size_t n,
                                       size_t bs, const float *restrict fs,
                                       const uint8_t *restrict rbytes, const fpsim_block_fast *fc,
                                       float satmax)
{
    if (fc->ok && fc->sr && fc->simd && bs % 16 == 0 && fc->spec.sr_bits <= 8) {
        uint32_t slow = 0;
        uint64_t sat = fpsim_block_fast_sr_row_avx512(codes, x, n, bs, fs, rbytes, fc, f2u(satmax),
                                                      &slow);
        if (slow) /* the same fix-up as fpsim_block_fast_sr_row */
            for (size_t i = 0; i < n; i++) {
                const float y = x[i] * fs[i / bs];
                const uint32_t ab = f2u(y) & 0x7FFFFFFFu;
                if (ab > fc->slow_above || (ab >= fc->maxbits && fc->slow_above == fc->maxbits))
                    codes[i] = (uint8_t)fpsim_round_f32(f2u(y), &fc->spec, (uint32_t)rbytes[i] << 24);
            }
        return sat;
    }
    /* portable: widen the bytes to words in whole blocks, then the word-fed row */
    uint32_t rb[FV];
    const size_t step = bs <= FV ? FV / bs * bs : bs;
    uint64_t sat = 0;
    if (step > FV) {
        uint32_t *big = malloc(n * sizeof *big + 1);
        if (!big) { /* no memory for the words: element by element through the core */
            for (size_t i = 0; i < n; i++) {
                const float y = x[i] * fs[i / bs];
                sat += (uint64_t)(isfinite(x[i]) && fabsf(y) > satmax);
                codes[i] = (uint8_t)fpsim_round_f32(f2u(y), &fc->spec, (uint32_t)rbytes[i] << 24);
            }
            return sat;
        }
        for (size_t i = 0; i < n; i++)
            big[i] = (uint32_t)rbytes[i] << 24;
        sat = fpsim_block_fast_sr_row(codes, x, n, bs, fs, big, fc, satmax);
        free(big);
        return sat;
    }
    for (size_t c0 = 0; c0 < n; c0 += step) {
        const size_t len = c0 + step < n ? step : n - c0;
        for (size_t i = 0; i < len; i++)
            rb[i] = (uint32_t)rbytes[c0 + i] << 24;
        sat += fpsim_block_fast_sr_row(codes + c0, x + c0, len, bs, fs + c0 / bs, rb, fc, satmax);
    }
    return sat;
}
