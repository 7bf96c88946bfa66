/* divide_fast.cuh: vLLM's dividing FP8 rules (fp8-block:scale=vllm-cuda, vllm-cuda-ue8m0,
 * vllm-native) without a division: two multiplies per element bracket the quotient, and an exact
 * remainder settles the rare element whose bracket holds a rounding boundary.
 *
 * The rules cast clamp(RN(x / sf), -max, max); __fdiv_rn computes RN(x / sf) exactly but costs a
 * dozen instructions and a branch. Instead, with r = RN(1 / sf) and the two multipliers
 * r- = RN(r (1 - 2^-20)), r+ = RN(r (1 + 2^-20)) (once per tile), each element takes
 * lo = RN(x r-) and hi = RN(x r+). For t = x / sf in the normal range, every factor within
 * 2^-24 of its exact value:
 *     |lo| <= |t| (1 + 2^-24)^3 (1 - 2^-20) < |t| (1 - 2^-24) <= |RN(t)|, and |hi| > |RN(t)| alike,
 * so RN(t) lies between lo and hi, which are at most 2^-19 |t| apart. Below the normal range, lo,
 * hi and RN(t) all lie far under the formats' least subnormal's half (2^-10 for E4M3, 2^-17 for
 * E5M2) and cast to the same signed zero.
 *
 * The cast of the clamped value is monotone, so where lo and hi cast to the same code (both by
 * cvt.rn.satfinite, hw_cvt.cuh, four elements' codes compared as one word), RN(t) casts to it.
 * Otherwise exactly one boundary of the cast lies between them (the format's spacing is 2^15 times
 * the bracket's width or more): the midpoint M of the two codes' values, which hi's bits give
 * (divide_rounds_up). That is not rare with BF16 data: x and the block amax carry 8 significant
 * bits each, so t = 448 x / amax is often a midpoint exactly (about 0.4% of Gaussian BF16
 * elements). It is settled without dividing:
 * RN(t) < M, = M or > M as |t| < M - u-/2, within, or > M + u/2 (u, u-: the float32 spacing above
 * and below M, whose significand is even, so both ties go to M), and with e = fma(-M, sf, |x|)
 * that is e against -sf u-/2 and sf u/2. All three are exact: sf u/2 is sf times a power of two,
 * and x - M sf, a multiple of 2^(E(M) + E(sf) - 27) at most 2^(E(M) + E(sf) - 15) in magnitude
 * (|t - M| <= 2^-19 |t|), fits 24 bits; for sf in [2^-80, 2^125] (divide_fast_scale_ok, which also
 * keeps r, r- and r+ normal) and M >= 2^-17 none of them is subnormal. A tie takes the even code
 * (RNE). Whether RN(t) exceeds max (the clipped-element count) is the same test with M = max,
 * where lo and hi do not settle it. Finite x only (the callers test the tile); only for specs
 * whose cast is the hardware's on every value in [-max, max] (qargs.divide_hw: fast_elem_mode is
 * not FAST_NEVER). */
#ifndef FPSIM_DIVIDE_FAST_CUH
#define FPSIM_DIVIDE_FAST_CUH

#include <stdint.h>

#include "hw_cvt.cuh"

/* 1 when the tile's scale sf allows this form (above). Under vLLM's rules sf is at most
 * FLT_MAX / 448 < 2^120, and at least eps / 448. */
__device__ __forceinline__ int divide_fast_scale_ok(float sf)
{
    return sf >= 0x1p-80f && sf <= 0x1p125f;
}

/* A tile's scale and its bracketing multipliers. */
struct divide_scale {
    float sf, r_lo, r_hi;
};
__device__ __forceinline__ divide_scale divide_scale_of(float sf)
{
    const float r = __frcp_rn(sf);
    return {sf, __fmul_rn(r, 1.0f - 0x1p-20f), __fmul_rn(r, 1.0f + 0x1p-20f)};
}

/* A tile's divide_scale from a table, for BF16 inputs (kernels v7 and v8, run 220). A BF16 block
 * amax is M 2^e with M = 1 + m / 128 (m: its 7 mantissa bits), and each of vLLM's scale rules
 * (sf = RN(max(amax, eps) / max), its power-of-two rounding up, or eager torch's
 * max(RN(amax RN(1 / max)), eps)) gives sf(M 2^e) = sf(M) 2^e, and so r-(M 2^e) = r-(M) 2^-e and
 * r+ alike, wherever no clamp acts and every value stays normal: scaling by a power of two is
 * exact there and commutes with RN and with the rounding up. The CTA fills tab[m] =
 * (sf(M), r-(M), r+(M)) once (scale_table_fill, by the per-tile operations themselves), so a tile
 * takes one shared load and three exponent adds where it took a division and a reciprocal (about
 * 2 of vLLM columnwise's 17 instructions per element in run 215's profile).
 *
 * The table holds for raw in [lo, Inf) and sf >= sf_min (divide_table_bounds): lo is at least
 * 2^-60 and at least eps (the CUDA op's clamp of amax does nothing), sf_min at least eps (eager
 * torch's clamp of sf does nothing) and, for the UE8M0 rounding, 2^-32 (its clamp of sf at about
 * 1e-10 does nothing: the rounded sf is under twice the value rounded, and 2^-33 > 1e-10). With
 * the table's sf(M) in [2^-16, 2^-4] (max in [64, 65536], eps <= 2^-16, so no clamp acts on
 * [1, 2) either) and e in [-60, 127], sf lies in [2^-76, 2^124], inside divide_fast_scale_ok, and
 * r-, r+ in [2^-125, 2^81]: all normal. Both tests are monotone in e, so for each m they come down
 * to one least raw (divide_table_floor), which the fill stores beside the entry: a tile tests its
 * raw against it and nothing else (the bounds themselves, about 12 instructions, were once
 * recomputed per tile). Elsewhere the caller takes the rule itself.
 * tests/blocks/test_block_props.c checks the law inside these bounds (and its failure without
 * them) on every positive BF16 amax against the CPU emulator's scales. */
struct divide_table_range {
    uint32_t lo; /* least raw max of |x| bits the table serves; Inf bits: none */
    float sf_min;
};
__device__ __forceinline__ divide_table_range divide_table_bounds(float eps, float max, int ue8m0)
{
    const int usable = max >= 64.0f && max <= 65536.0f && eps <= 0x1p-16f; /* false for a NaN eps */
    const uint32_t eps_bits = eps > 0.0f ? __float_as_uint(eps) : 0u;
    const uint32_t lo = eps_bits > (67u << 23) ? eps_bits : (67u << 23); /* 2^-60 */
    return {usable ? lo : 0x7F800000u, fmaxf(eps, ue8m0 ? 0x1p-32f : 0.0f)};
}
/* The least BF16 raw max of |x| bits with mantissa bits m (its low 16 bits zero) that the table
 * serves, given entry m's scale sf_m = sf(1 + m / 128): the least exponent field e with
 * raw = e << 23 | m << 16 >= range.lo and sf_m 2^(e - 127) >= range.sf_min; Inf bits where none.
 * From e >= 67 on (lo >= 2^-60) the entry's exponent add is the exact scaling, as in
 * divide_scale_from_table. sf_min <= 2^-16 <= sf_m (table bounds), so the second test's least e
 * lies at or below 127 + the two exponents' difference + 1: one step past it at most. */
__device__ __forceinline__ uint32_t divide_table_floor(uint32_t m, float sf_m, const divide_table_range &range)
{
    if (range.lo >= 0x7F800000u) return 0x7F800000u;
    const uint32_t mb = m << 16;
    int e = (int)(range.lo >> 23) + (((range.lo >> 23) << 23 | mb) < range.lo ? 1 : 0);
    const int e_sf = 127 + (int)((__float_as_uint(range.sf_min) >> 23) & 0xFFu) -
                     (int)((__float_as_uint(sf_m) >> 23) & 0xFFu); /* sf_m 2^(e_sf - 127): sf_min's binade */
    e = e > e_sf ? e : e_sf;
    if (e < 255 && __int_as_float(__float_as_int(sf_m) + ((e - 127) << 23)) < range.sf_min) e++;
    return e >= 255 ? 0x7F800000u : (uint32_t)e << 23 | mb;
}
/* 1 and *d where the table serves the tile whose BF16 raw max of |x| bits is raw (its low 16 bits
 * zero); 0 otherwise (then *d is meaningless). tab[m].w holds divide_table_floor's bits. */
__device__ __forceinline__ int divide_scale_from_table(uint32_t raw, const float4 *tab, divide_scale *d)
{
    const float4 t = tab[(raw >> 16) & 0x7Fu];
    const uint32_t least = __float_as_uint(t.w);
    const int e23 = (int)(raw & 0x7F800000u) - 0x3F800000; /* e << 23 */
    d->sf = __int_as_float(__float_as_int(t.x) + e23);
    d->r_lo = __int_as_float(__float_as_int(t.y) - e23);
    d->r_hi = __int_as_float(__float_as_int(t.z) - e23);
    return raw - least < 0x7F800000u - least; /* least <= raw < Inf */
}

/* Where RN(|x| / sf) lies against m, a float32 with an even significand, at least 2^-17 and
 * within 2^-19 of |x| / sf relatively: -1 below, 0 equal, 1 above. */
__device__ __forceinline__ int divide_side_of(float ax, float sf, float m)
{
    const uint32_t em = (__float_as_uint(m) >> 23) & 0xFFu;
    const float half_up = __fmul_rn(sf, __uint_as_float((em - 24u) << 23)); /* sf u / 2 */
    const float half_down = (__float_as_uint(m) & 0x7FFFFFu) ? half_up : __fmul_rn(half_up, 0.5f);
    const float e = __fmaf_rn(-m, sf, ax); /* |x| - m sf, exact */
    return e < -half_down ? -1 : (e > half_up ? 1 : 0);
}

/* 1 where an element whose bracket [lo, hi] straddles a boundary of the cast rounds to the code
 * above lo's (whose magnitude is odd where odd). The boundary is the midpoint M with
 * |lo| <= M <= |hi| (one of them on M where the cast of M ties), so |hi| lies in [M, M + s/2), s the
 * format's spacing at M: M is an odd multiple of s/2 = 2^h and |hi| in its binade (powers of two
 * are codes), so M is |hi| with the bits of weight below 2^h cleared: 22 - MB of them in the
 * normal range (MB mantissa bits), 22 - MB + (EMIN - E) for E, the binade's exponent, below the
 * least normal 2^EMIN, where the spacing stays 2^(EMIN - MB). M has an even significand (it is a
 * power of two at the least midpoint, half the least subnormal) and lies within 2^-19 of |t|, so
 * divide_side_of places RN(t) against it: above rounds up, and RN(t) == M, a tie of the cast, goes
 * to the even code, up only where lo's code is odd. */
__device__ __forceinline__ uint32_t divide_rounds_up(float x, float hi, float sf, uint32_t odd, int e5m2)
{
    const uint32_t hb = __float_as_uint(hi) & 0x7FFFFFFFu, eb = hb >> 23;
    const int mbits = e5m2 ? 2 : 3, emin_b = e5m2 ? 127 - 14 : 127 - 6;
    const int below = max(22 - mbits, 22 - mbits + emin_b - (int)eb);
    const int side = divide_side_of(fabsf(x), sf, __uint_as_float(hb & (0xFFFFFFFFu << below)));
    return (uint32_t)(side > 0 || (odd && side == 0));
}

/* The codes of four elements x[0..3] (byte k: element k, sign included) under the tile's scale;
 * *clipped += how many have |RN(x / sf)| > max, where count (else left alone). */
__device__ __forceinline__ uint32_t divide_codes4(float x0, float x1, float x2, float x3, const divide_scale &d,
                                                  float max, int e5m2, int count, uint32_t *clipped)
{
    const float x[4] = {x0, x1, x2, x3};
    float lo[4], hi[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        lo[k] = __fmul_rn(x[k], d.r_lo);
        hi[k] = __fmul_rn(x[k], d.r_hi);
    }
    /* pairs joined by OR and shift, which ptxas folds into the second cvt (F2FP's merge operand);
     * the same word through __byte_perm cost a mask per pair and a PRMT (run 221) */
    uint32_t w_lo = fpsim_hw_cvt_pair(lo[0], lo[1], e5m2) | fpsim_hw_cvt_pair(lo[2], lo[3], e5m2) << 16;
    const uint32_t w_hi = fpsim_hw_cvt_pair(hi[0], hi[1], e5m2) | fpsim_hw_cvt_pair(hi[2], hi[3], e5m2) << 16;
    /* A midpoint inside some bracket: the code of lo or the next one. One straddled element an
     * iteration, its x and hi picked by selects, so that a warp takes the step once for all of its
     * lanes' straddled elements (two in one group of four are rare: about 10^-4 of the groups of
     * Gaussian BF16 data); a guarded step per element took it once for each of the four positions
     * where some lane straddled (run 212: BF16 rows 80 -> 87.5% of the copy). */
    for (uint32_t left = w_lo ^ w_hi; left;) {
        const uint32_t k = (uint32_t)(__ffs((int)left) - 1) >> 3;
        const float xk = k & 2u ? (k & 1u ? x[3] : x[2]) : (k & 1u ? x[1] : x[0]);
        const float hk = k & 2u ? (k & 1u ? hi[3] : hi[2]) : (k & 1u ? hi[1] : hi[0]);
        w_lo += divide_rounds_up(xk, hk, d.sf, (w_lo >> (8 * k)) & 1u, e5m2) << (8 * k);
        left &= ~(0xFFu << (8 * k));
    }
    if (count)
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const float alo = fabsf(lo[k]), ahi = fabsf(hi[k]);
            *clipped += alo > max ? 1u : (ahi <= max ? 0u : (uint32_t)(divide_side_of(fabsf(x[k]), d.sf, max) > 0));
        }
    return w_lo;
}

#endif
