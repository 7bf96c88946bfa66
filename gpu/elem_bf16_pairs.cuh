/* elem_bf16_pairs.cuh: E2M1 and E2M3 nearest-even codes of two bf16 inputs at once, scaled by a
 * power of two, on the bf16x2 FMA (HFMA2.BF16_V2) and the 16x2 integer instructions.
 *
 * The paired float32 forms of elem_fixed.cuh (fpsim_e2m1x2_rne_sat_small) first widen each bf16
 * to float32, multiply by the scale, then take three float32 magic sums per element and move
 * their low halves into 16-bit lanes (PRMT): about 8.5 instructions per element. When the inputs
 * are bf16 and the multiplier is a power of two 2^k (every MX scale), the scaled value
 * y = x * 2^k is exact, and each magic sum can be taken on the bf16 pair itself: one bf16x2 FMA
 * computes fma(|x|, 2^k', C) for both lanes with ONE rounding (the product is exact inside the
 * FMA), and its result already sits in a 16-bit lane. About 4 instructions per element.
 *
 * Why the three sums give the codes. Let t = |x| * 2^k (exact). With C = 2^B:
 *  - E2M1 (B = 6, ulp 1/2 on [64, 128)): RN(t + 64) = 64 + RNE(2t)/2, RN(t/2 + 65) =
 *    64 + (RNE(t) + 2)/2, RN(t/4 + 66) = 64 + (RNE(t/2) + 4)/2, so the bf16 bits of the three are
 *    0x4280 plus RNE(2t), RNE(t) + 2 and RNE(t/2) + 4: elem_fixed.cuh's three E2M1 candidates
 *    (the code on [0, 2), [2, 4) and [4, 6]), the true code being the smallest, 7 at most.
 *  - E2M3 (B = 4, ulp 1/8 on [16, 32)): 0x4180 plus RNE(8t), RNE(4t) + 8 and RNE(2t) + 16, the
 *    codes on [0, 2), [2, 4) and [4, 7.5] (code = 8t, 4t + 8, 2t + 16 there), 31 at most; the
 *    smallest again, since 8t <= 4t + 8 <= 2t + 16 up to t = 2, the first two swap at 2 and the
 *    last two at 4, and RNE is monotone.
 * Ties go to even in both: the added 1 and 2 are even numbers of ulps (2 and 4 for E2M1, 8 and
 * 16 for E2M3), so the parity of the bf16 significand is the candidate's. A sum that leaves [2^B, 2^(B+1)) (t
 * large) has bits above 0x4280 + 7 (0x4180 + 31) and loses the minimum or saturates: it is never below a true
 * candidate. |x| bf16-subnormal, or t below 2^-126: the codes are 0 whatever the FMA does with subnormals, as
 * |x| < 2^-126 and k <= 120 keep t below 2^-6, under the smallest value that rounds away from zero (1/4 for
 * E2M1, 1/16 for E2M3). The lanes' minimum and the clamp at the largest code are one VIMNMX3 and
 * one VIMNMX (16x2), the removal of the 0x4280 / 0x4180 bias one subtraction, which callers that
 * pack several pairs take once per word; the signs, a PRMT that replicates each lane's sign byte.
 *
 * Inputs: u = two bf16 (lane 0 in bits 0..15), NOT NaN (Inf saturates: the policy must
 * saturate); s1 = 2^k in both bf16 lanes, -124 <= k <= 120. Result: lane 0's code in bits
 * 0..3 (E2M1) or 0..5 (E2M3), lane 1's in bits 16.., zero elsewhere.
 *
 * The host build spells each instruction out (fpsim_bf16x2_fma_rn, elem_fixed.cuh's 16x2 stand-ins)
 * so that tests/gpu/test_lean_rne.cu checks the algorithm against the core on every bf16 input and every
 * k without a GPU; tests/gpu/test_bf16_pairs_hw.cu runs the device build on the H200 against the
 * core, the check of the hardware's bf16 FMA rounding. */
#ifndef FPSIM_ELEM_BF16_PAIRS_CUH
#define FPSIM_ELEM_BF16_PAIRS_CUH

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "elem_fixed.cuh" /* fpsim_min3_u16x2 */

#if !defined(__CUDA_ARCH__)
/* bf16 bits of double d rounded to nearest even (finite d; overflow gives Inf). Exact: the
 * significand is cut at 8 bits (or at the subnormal quantum 2^-133) by an explicit tie rule, so
 * the host's rounding mode does not matter. */
static inline uint32_t fpsim_bf16_rne_of_double(double d)
{
    const uint32_t sign = d < 0 ? 0x8000u : 0u;
    const double a = fabs(d);
    if (a == 0) return sign;
    int e;
    (void)frexp(a, &e);                  /* a = m 2^e, m in [1/2, 1) */
    int q = e - 8 < -133 ? -133 : e - 8; /* the quantum's exponent: 8 significant bits, or 2^-133 */
    const double s = ldexp(a, -q);       /* exact */
    double r = floor(s);
    const double frac = s - r;
    if (frac > 0.5 || (frac == 0.5 && fmod(r, 2.0) != 0)) r += 1;
    const float v = (float)ldexp(r, q); /* r 2^q is a bf16 value or 2^128: exact in float or Inf */
    uint32_t bits;
    memcpy(&bits, &v, 4);
    return sign | (bits >> 16);
}
#endif

/* Per bf16 lane: a * b + c with one rounding to nearest even (fma.rn.bf16x2). The host stand-in
 * evaluates a * b + c in double: exact when b is a power of two and no lane's a * b is below
 * 2^-900 (two 8-bit significands; when their binades are more than 45 apart the smaller term is
 * below half an ulp of the larger in bf16 and in double alike), which are the forms' inputs. */
__host__ __device__ __forceinline__ uint32_t fpsim_bf16x2_fma_rn(uint32_t a, uint32_t b, uint32_t c)
{
#if defined(__CUDA_ARCH__)
    uint32_t d;
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
#else
    uint32_t r = 0;
    for (int k = 0; k < 32; k += 16) {
        const uint32_t fa = ((a >> k) & 0xFFFFu) << 16, fb = ((b >> k) & 0xFFFFu) << 16,
                       fc = ((c >> k) & 0xFFFFu) << 16;
        float va, vb, vc;
        memcpy(&va, &fa, 4);
        memcpy(&vb, &fb, 4);
        memcpy(&vc, &fc, 4);
        r |= fpsim_bf16_rne_of_double((double)va * (double)vb + (double)vc) << k;
    }
    return r;
#endif
}

/* Each 16-bit lane all ones when its bf16 sign bit is set: bytes 1 and 3 replicated. */
__host__ __device__ __forceinline__ uint32_t fpsim_sign_bf16x2(uint32_t u)
{
    return fpsim_prmt<0xBB99u>(u, 0u);
}

/* Four bytes, all ones where the bf16 is negative: lanes 0 and 1 of lo, then of hi (bytes 1, 3,
 * 5, 7 replicated). */
__host__ __device__ __forceinline__ uint32_t fpsim_sign_bf16x4_bytes(uint32_t lo, uint32_t hi)
{
    return fpsim_prmt<0xFDB9u>(lo, hi);
}

/* The bf16 pair 2^k, 2^k (s1 of the forms) from a float32 power of two p = 2^k. */
__host__ __device__ __forceinline__ uint32_t fpsim_bf16x2_pow2_of_f32_bits(uint32_t p)
{
    return (p >> 16) * 0x10001u;
}

/* 1 when float32 bits p are 2^k with -124 <= k <= 120 (the forms' scale range). */
__host__ __device__ __forceinline__ int fpsim_bf16_pair_scale_ok(uint32_t p)
{
    return (p & 0x807FFFFFu) == 0 && p >= (3u << 23) && p <= (247u << 23);
}

/* The forms' constants for F = FPSIM_E2M1 or FPSIM_E2M3: bf16 pairs of 2^B, 2^B + 1, 2^B + 2
 * (B = 6 or 4), the bias of the candidates' bits (2^B's bf16 bits) per lane, the largest code and
 * the code's sign bit per lane. */
template <int F> struct fpsim_e2mx_bf16_consts {
    static_assert(F == FPSIM_E2M1 || F == FPSIM_E2M3, "E2M1 or E2M3");
    static constexpr int E2M1 = F == FPSIM_E2M1;
    static constexpr uint32_t C1 = E2M1 ? 0x42804280u : 0x41804180u, C2 = E2M1 ? 0x42824282u : 0x41884188u,
                              C3 = E2M1 ? 0x42844284u : 0x41904190u;
    static constexpr uint32_t BIAS = C1, TOP = E2M1 ? 0x00070007u : 0x001F001Fu,
                              SIGN = E2M1 ? 0x00080008u : 0x00200020u;
};

/* The magnitudes' codes of the bf16 pair u scaled by s1, still biased: per lane BIAS + code (the
 * smallest candidate, clamped at BIAS + TOP). Callers that pack several pairs remove the bias once
 * per packed word (see fast_tile.cuh). */
template <int F>
__host__ __device__ __forceinline__ uint32_t fpsim_e2mx_bf16x2_biased(uint32_t u, uint32_t s1)
{
    typedef fpsim_e2mx_bf16_consts<F> K;
    const uint32_t a = u & 0x7FFF7FFFu;
    const uint32_t s2 = s1 - 0x00800080u, s3 = s1 - 0x01000100u; /* 2^(k-1), 2^(k-2) */
    const uint32_t c1 = fpsim_bf16x2_fma_rn(a, s1, K::C1), c2 = fpsim_bf16x2_fma_rn(a, s2, K::C2),
                   c3 = fpsim_bf16x2_fma_rn(a, s3, K::C3);
    return fpsim_min_u16x2(fpsim_min3_u16x2(c1, c2, c3), K::BIAS + K::TOP);
}

/* The codes of the bf16 pair u scaled by s1 (see the top): the bias removed (no lane borrows: each
 * is at least BIAS) and the signs added. */
template <int F>
__host__ __device__ __forceinline__ uint32_t fpsim_e2mx_bf16x2_rne_sat(uint32_t u, uint32_t s1)
{
    typedef fpsim_e2mx_bf16_consts<F> K;
    return (fpsim_e2mx_bf16x2_biased<F>(u, s1) - K::BIAS) | (fpsim_sign_bf16x2(u) & K::SIGN);
}

/* ---- float32 inputs through bf16 round-to-odd ----
 * E2M1 nearest-even of float32 y (any y the paired forms take: not NaN, |y| < 2^13) equals the
 * bf16-pair form's code of z = RO_bf16(y), y rounded to bf16 toward zero with the lowest bit set
 * when inexact (round to odd), at scale 2^0. Why: every point that decides E2M1's rounding below
 * 8 (the codes' values and their midpoints 0.25, 0.75, ..., 3.5, 5, 7) is a bf16 value with at
 * least two spare significand bits below it (quantum 0.25 on [0, 2), bf16's 2^-7 or finer; 0.5 on
 * [2, 4), 2^-6; 1 on [4, 8), 2^-5), so those points are even bf16 values. An exact y gives z = y;
 * otherwise z is an odd bf16 value, so not one of those points, in the same open interval between
 * two neighbouring points as y (truncation stays within y's bf16 cell, whose even ends bound it),
 * so nearest-even picks the same code, ties included. Above 8 both saturate. The sign is y's.
 * Per pair: two PRMTs (the high halves, and the low halves whose nonzero lanes min(lo, 1) turns
 * into the sticky bit) and one OR, in place of the float32 forms' six FADD and three PRMTs.
 * tests/gpu/test_lean_rne.cu compares fpsim_e2m1x2_rne_sat_ro with the core on every |y| < 2^13,
 * both lanes. */
__host__ __device__ __forceinline__ uint32_t fpsim_bf16x2_round_odd(uint32_t a, uint32_t b)
{
    return fpsim_prmt<0x7632u>(a, b) | fpsim_min_u16x2(fpsim_prmt<0x5410u>(a, b), 0x00010001u);
}

/* The bf16 pair 2^0, 2^0: s1 of the forms for already scaled inputs. */
#define FPSIM_BF16X2_ONE 0x3F803F80u

/* E2M1 codes of two non-NaN float32 a, b with |a|, |b| < 2^13 under a saturating policy (the codes
 * of fpsim_e2m1x2_rne_sat_small, in the same places): the bf16-pair form on their round-to-odd
 * bf16 pair. */
__host__ __device__ __forceinline__ uint32_t fpsim_e2m1x2_rne_sat_ro(uint32_t a, uint32_t b)
{
    return fpsim_e2mx_bf16x2_rne_sat<FPSIM_E2M1>(fpsim_bf16x2_round_odd(a, b), FPSIM_BF16X2_ONE);
}

#endif
