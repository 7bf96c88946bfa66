/* elem_fixed.cuh: fpsim_core.h's float32 -> code rounding with the format fixed at compile time.
 *
 * The kernels v1-v3 called fpsim_round_f32 with the whole spec as run-time data, so none of the
 * format arithmetic (shift amounts, bias, the largest code) folded: about 70 lane-instructions per
 * element. Here the FORMAT fields (bits, mantissa bits, bias, largest finite magnitude) and the
 * rounding mode are template constants, while the POLICY fields (overflow, Inf, NaN codes, flags,
 * sr_bits) stay data in the spec. The function called is still fpsim_round_f32_mode of the shared
 * core, on a copy of the spec whose format fields hold the same values as constants: the bits are
 * the core's by construction. The host checks fpsim_elem_fixed_matches() before it picks a fixed
 * kernel (a spec whose fields differ from the constants takes the generic kernel), and passes
 * FULL = fpsim_spec_full_rules(spec) so specs that need no payload/zero/E8M0 rules drop them. */
#ifndef FPSIM_ELEM_FIXED_CUH
#define FPSIM_ELEM_FIXED_CUH

#include <stdint.h>
#include <string.h>

#include "fpsim_core.h"

/* Format constants (formats/format_table.c). F = -1: nothing fixed (the generic core). */
template <int F> struct fpsim_elem_traits { enum { fixed = 0, bits = 0, mbits = 0, bias = 0, max_mag = 0 }; };
template <> struct fpsim_elem_traits<FPSIM_E4M3> { enum { fixed = 1, bits = 8, mbits = 3, bias = 7, max_mag = 0x7E }; };
template <> struct fpsim_elem_traits<FPSIM_E5M2> { enum { fixed = 1, bits = 8, mbits = 2, bias = 15, max_mag = 0x7B }; };
template <> struct fpsim_elem_traits<FPSIM_E2M1> { enum { fixed = 1, bits = 4, mbits = 1, bias = 1, max_mag = 0x7 }; };
template <> struct fpsim_elem_traits<FPSIM_E2M3> { enum { fixed = 1, bits = 6, mbits = 3, bias = 1, max_mag = 0x1F }; };
template <> struct fpsim_elem_traits<FPSIM_E3M2> { enum { fixed = 1, bits = 6, mbits = 2, bias = 3, max_mag = 0x1F }; };

/* 1 when spec s has exactly the format fields fpsim_elem_traits<F> fixes (host check). */
template <int F> inline int fpsim_elem_fixed_matches(const fpsim_spec *s)
{
    typedef fpsim_elem_traits<F> T;
    return T::fixed && s->format == F && s->bits == T::bits && s->mbits == T::mbits && s->bias == T::bias &&
           s->max_mag == T::max_mag && s->is_signed == 1;
}

/* Nearest-even with no full rules, written for the GPU's issue rate (about 20 instructions instead
 * of 40): the same codes as fpsim_round_f32_mode(x, s, 0, FPSIM_RNE, 0), for these reasons.
 *  - Normal results (|x| >= 2^emin, emin = 1 - bias): the core's magnitude (k << M) + ((sig + inc)
 *    >> D), with k = e - emin, D = 23 - M, sig the significand with its hidden bit and inc =
 *    2^(D-1) - 1 + bit D, equals ((|x|bits + inc) >> D) - ((127 - bias) << M): the exponent field
 *    ef sits above bit 23 of |x|bits, a multiple of 2^D, and k + 1 = ef - (127 - bias); the
 *    rounding carry runs into the exponent in both forms, and bit D of sig is bit D of |x|bits.
 *  - Results below 2^emin: the core gives RNE(|x| / 2^(emin - M)) (its step 2 widens D). The FP32
 *    sum |x| + 2^(emin - M + 23) is that same nearest-even rounding done by the adder (the sum lies
 *    in one binade whose ulp is 2^(emin - M); FP32 subnormal inputs are added exactly, no
 *    flush-to-zero since fpsim builds without fast math), and its bits minus the constant's bits
 *    count the quanta. emin - M + 23 >= 7 for every format here, so the constant is normal.
 *  - Overflow, Inf and NaN: the core's codes for RNE (toward_zero = 0), sign-selected.
 * `fpsim verify --device gpu --full` compares the kernels with the CPU over all 2^32 inputs, and
 * tests/gpu/test_lean_rne.cu compares this function (host build) with fpsim_round_f32 for every
 * spec that takes it, over all 2^32 inputs, without a GPU. */
template <int F> __host__ __device__ __forceinline__ uint32_t fpsim_round_f32_rne_lean(uint32_t x, const fpsim_spec &s)
{
    typedef fpsim_elem_traits<F> T;
    constexpr uint32_t D = 23 - T::mbits;
    constexpr int EMIN = 1 - T::bias;
    constexpr uint32_t MIN_NORMAL_BITS = (uint32_t)(127 + EMIN) << 23;
    constexpr uint32_t MAGIC_BITS = (uint32_t)(127 + EMIN - (int)T::mbits + 23) << 23;
    constexpr uint32_t REBIAS = (uint32_t)(127 - T::bias) << T::mbits;
    const uint32_t sign = x >> 31, a = x & 0x7FFFFFFFu;
    const uint32_t mag_normal = ((a + ((1u << (D - 1)) - 1u) + ((a >> D) & 1u)) >> D) - REBIAS;
#if defined(__CUDA_ARCH__)
    const uint32_t mag_small =
        __float_as_uint(__fadd_rn(__uint_as_float(a), __uint_as_float(MAGIC_BITS))) - MAGIC_BITS;
#else /* host (tests/gpu/test_lean_rne.cu): the same IEEE single add, SSE, no flush to zero */
    float fa, fm, sum;
    uint32_t sum_bits, magic = MAGIC_BITS;
    memcpy(&fa, &a, 4);
    memcpy(&fm, &magic, 4);
    sum = fa + fm;
    memcpy(&sum_bits, &sum, 4);
    const uint32_t mag_small = sum_bits - MAGIC_BITS;
#endif
    const uint32_t mag = a >= MIN_NORMAL_BITS ? mag_normal : mag_small;
    const uint32_t sign_code = (0u - sign) & (1u << (T::bits - 1));
    const uint32_t ovf = sign ? s.ovf_neg : s.ovf_pos;
    const uint32_t code = mag > (uint32_t)T::max_mag ? ovf : (sign_code | mag);
    const uint32_t special = a == 0x7F800000u ? (sign ? s.inf_neg : s.inf_pos) : (sign ? s.nan_neg : s.nan_pos);
    return a >= 0x7F800000u ? special : code;
}

/* The smallest of three magic-constant sums (the forms below): with t = |x| and M = 2^K, the
 * codes bits(RN(t + M)) - bits(M), bits(RN(t + 2M)) - bits(2M) + STEP and bits(RN(t + 4M)) -
 * bits(4M) + 2 STEP, then at most MAXC, with x's sign at bit SIGN. */
template <int K, uint32_t STEP, uint32_t MAXC, int SIGN>
__host__ __device__ __forceinline__ uint32_t fpsim_magic3_rne_sat(uint32_t x)
{
    constexpr uint32_t B1 = (uint32_t)(127 + K) << 23, B2 = B1 + (1u << 23), B3 = B2 + (1u << 23);
    constexpr float M = (float)(1u << K);
#if defined(__CUDA_ARCH__)
    const float t = fabsf(__uint_as_float(x));
    const uint32_t c1 = __float_as_uint(__fadd_rn(t, M)) - B1;
    const uint32_t c2 = __float_as_uint(__fadd_rn(t, 2.0f * M)) - (B2 - STEP);
    const uint32_t c3 = __float_as_uint(__fadd_rn(t, 4.0f * M)) - (B3 - 2u * STEP);
#else
    const uint32_t a = x & 0x7FFFFFFFu;
    float t, s1, s2, s3;
    uint32_t b1, b2, b3;
    memcpy(&t, &a, 4);
    s1 = t + M;
    s2 = t + 2.0f * M;
    s3 = t + 4.0f * M;
    memcpy(&b1, &s1, 4);
    memcpy(&b2, &s2, 4);
    memcpy(&b3, &s3, 4);
    const uint32_t c1 = b1 - B1, c2 = b2 - (B2 - STEP), c3 = b3 - (B3 - 2u * STEP);
#endif
    uint32_t mag = c1 < c2 ? c1 : c2;
    mag = mag < c3 ? mag : c3;
    mag = mag < MAXC ? mag : MAXC;
    return ((x >> (31 - SIGN)) & (1u << SIGN)) | mag;
}

/* E2M1 nearest-even of a NON-NaN float32 under a saturating policy (overflow and Inf -> +-6,
 * -0 -> 0x8: nv, ml_dtypes, torchao, which differ only in NaN codes), written so that most of the
 * work is FP32 adds (the FMA pipe) rather than integer ALU instructions. With t = |x|:
 *  - c1 = bits(RN(t + 2^22)) - bits(2^22) = RNE(2t): the sum's ulp is 0.5 (for t < 2^22);
 *  - c2 = bits(RN(t + 2^23)) - bits(2^23) + 2 = RNE(t) + 2 = RNE(t + 2) (2 is even);
 *  - c3 = bits(RN(t + 2^24)) - bits(2^24) + 4 = RNE(t / 2) + 4 = RNE(t / 2 + 4).
 * On [0, 2] the E2M1 code is c1 (quanta of 0.5), on [2, 4] c2 (quanta of 1 above code 4), on
 * [4, inf) c3 (quanta of 2 above code 6), and each is the smallest of the three there: 2t <= t + 2
 * <= t/2 + 4 for t <= 2, the reverse orders hold past 2 and 4, and RNE is monotone. Ties go to
 * the even code because each code has the parity of its rounded integer. Codes above 7 (overflow,
 * Inf: every sum's bits exceed its constant by more than 7) saturate. Large t cannot wrap: the
 * bits of a finite or infinite sum are below 0x7F800001. tests/gpu/test_lean_rne.cu compares it
 * with fpsim_round_f32 over every non-NaN float32. */
__host__ __device__ __forceinline__ uint32_t fpsim_e2m1_rne_sat(uint32_t x)
{
    return fpsim_magic3_rne_sat<22, 2u, 7u, 3>(x);
}

/* E2M3 nearest-even of a NON-NaN float32, saturating at +-7.5 (code 31), by the same three
 * magic-constant sums as fpsim_e2m1_rne_sat, one binade lower. E2M3's grid (bias 1): [0, 2) in
 * quanta of 1/8 (subnormals and the first binade alike), [2, 4) in quanta of 1/4, [4, 7.5] in
 * quanta of 1/2; so with t = |x|:
 *  - c1 = bits(RN(t + 2^20)) - bits(2^20) = RNE(8t) (the sum's ulp is 1/8), the code on [0, 2];
 *  - c2 = bits(RN(t + 2^21)) - bits(2^21) + 8 = RNE(4t) + 8, the code on [2, 4];
 *  - c3 = bits(RN(t + 2^22)) - bits(2^22) + 16 = RNE(2t) + 16, the code on [4, inf).
 * 8t <= 4t + 8 <= 2t + 16 for t <= 2 and the reverse orders hold past 2 and 4, RNE is monotone
 * and commutes with adding an even integer, so the code is the smallest of the three, then 31 at
 * most; ties go to even codes (the offsets are even). Large t and Inf make every difference far
 * above 31. Used where the policy saturates, or on inputs of magnitude at most 7.5 (fast tiles and
 * vectors); tests/gpu/test_lean_rne.cu compares it with the core on exactly those inputs. */
__host__ __device__ __forceinline__ uint32_t fpsim_e2m3_rne_sat(uint32_t x)
{
    return fpsim_magic3_rne_sat<20, 8u, 31u, 5>(x);
}

/* E2M1 stochastic rounding with 8 random bits (the top byte of rb, as the core's FPSIM_SR with
 * sr_bits = 8: NVFP4's byte per element) of a NON-NaN float32 under a saturating policy.
 *  - |x| >= 1: the core's q = floor((sig + r * 2^(d-32)) / 2^d) with d = 22 is the lean form
 *    (|x|bits + (r >> 10)) >> 22 - 252: r >> 10 = byte * 2^14 exactly, and the carry runs into the
 *    exponent as in the nearest-even form above;
 *  - |x| < 1: the core's q is floor(2|x| + byte / 256) (d = 149 - exponent field, FP32
 *    subnormals included). In FP32: byte / 512 is exact ((1 + byte/256) * 0.5 - 0.5), and two
 *    additions rounded toward zero keep the floor: RZ(|x| + byte/512) never rises past a
 *    multiple of 0.5 it had not reached, and RZ(s + 2^22) truncates s to quanta of 0.5 above
 *    2^22, so its bits minus 2^22's count them.
 * The kernels' fast tiles use the paired form below since run 37; this one-element form, swept
 * against the core by tests/gpu/test_lean_rne.cu, is that test's reference for the pair's second
 * lane. The host build computes the same adds and must run with the rounding mode set to
 * toward-zero (fesetround(FE_TOWARDZERO)). */
__host__ __device__ __forceinline__ uint32_t fpsim_e2m1_sr8_sat(uint32_t x, uint32_t rb)
{
    const uint32_t a = x & 0x7FFFFFFFu, r = rb & 0xFF000000u;
    const uint32_t mag_normal = (a + (r >> 10) - 0x3F000000u) >> 22;
#if defined(__CUDA_ARCH__)
    const float half_u = __fmaf_rn(__uint_as_float(0x3F800000u | (r >> 9)), 0.5f, -0.5f);
    const float s = __fadd_rz(__fadd_rz(__uint_as_float(a), half_u), 4194304.0f);
    const uint32_t mag_small = __float_as_uint(s) - 0x4A800000u;
#else
    float fa, f1;
    const uint32_t one_u = 0x3F800000u | (r >> 9);
    memcpy(&fa, &a, 4);
    memcpy(&f1, &one_u, 4);
    const float half_u = f1 * 0.5f - 0.5f; /* exact in any rounding mode */
    const float s = (fa + half_u) + 4194304.0f;
    uint32_t s_bits;
    memcpy(&s_bits, &s, 4);
    const uint32_t mag_small = s_bits - 0x4A800000u;
#endif
    uint32_t mag = a >= 0x3F800000u ? mag_normal : mag_small;
    mag = mag < 7u ? mag : 7u;
    return ((x >> 28) & 8u) | mag;
}

/* ---- E2M1 two elements at a time --------------------------------------------------------------
 * The magic-sum forms above end in about 7 integer instructions per element (the subtractions, the
 * two mins, the clamp, the sign, the packing), and Hopper issues integer instructions at half the
 * FP32 rate. When |x| < 2^13 every candidate code is below 2^15, so it is the low 16 bits of its
 * sum (the constants' low 16 bits are zero, up to the candidates' small offsets): two elements'
 * candidates then share one register, one per 16-bit lane (PRMT), and sm_90's 16x2 SIMD
 * instructions (VIMNMX3.U16x2, VIMNMX.U16x2) take the min steps for both lanes at once. A PRMT that
 * replicates each float's sign byte and one LOP3 add the signs: about 3.5 integer instructions per
 * element. The host stand-ins below define what these instructions compute, for
 * tests/gpu/test_lean_rne.cu. */

/* The low 16 bits of a (lane 0) and of b (lane 1). */
__host__ __device__ __forceinline__ uint32_t fpsim_lo16_pair(uint32_t a, uint32_t b)
{
#if defined(__CUDA_ARCH__)
    return __byte_perm(a, b, 0x5410u);
#else
    return (a & 0xFFFFu) | (b << 16);
#endif
}

/* Per 16-bit lane: min(a, b, c). */
__host__ __device__ __forceinline__ uint32_t fpsim_min3_u16x2(uint32_t a, uint32_t b, uint32_t c)
{
#if defined(__CUDA_ARCH__)
    return __vimin3_u16x2(a, b, c);
#else
    uint32_t r = 0;
    for (int k = 0; k < 32; k += 16) {
        const uint32_t x = (a >> k) & 0xFFFFu, y = (b >> k) & 0xFFFFu, z = (c >> k) & 0xFFFFu;
        const uint32_t m = x < y ? x : y;
        r |= (m < z ? m : z) << k;
    }
    return r;
#endif
}

/* Per 16-bit lane: min(a, b). */
__host__ __device__ __forceinline__ uint32_t fpsim_min_u16x2(uint32_t a, uint32_t b)
{
#if defined(__CUDA_ARCH__)
    return __vminu2(a, b);
#else
    return fpsim_min3_u16x2(a, b, b);
#endif
}

/* prmt.b32 d, a, b, SEL in PTX's default mode: byte i of d is byte (n & 7) of the pair b:a (a the
 * low four), n = nibble i of SEL, or that byte's sign bit replicated over the byte when n & 8.
 * Inline asm on the device, since CUDA's __byte_perm ignores the replicate bit; the host stand-in
 * spells the rule out. */
template <uint32_t SEL> __host__ __device__ __forceinline__ uint32_t fpsim_prmt(uint32_t a, uint32_t b)
{
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "n"(SEL));
    return r;
#else
    const uint64_t ba = (uint64_t)b << 32 | a;
    uint32_t r = 0;
    for (int i = 0; i < 4; i++) {
        const uint32_t n = (SEL >> (4 * i)) & 0xFu, byte = (uint32_t)(ba >> (8 * (n & 7u))) & 0xFFu;
        r |= ((n & 8u) ? ((byte & 0x80u) ? 0xFFu : 0u) : byte) << (8 * i);
    }
    return r;
#endif
}

/* Lane 0 all ones when a's sign bit is set, lane 1 when b's is: bytes 3 and 7 replicated. */
__host__ __device__ __forceinline__ uint32_t fpsim_sign_pair(uint32_t a, uint32_t b)
{
    return fpsim_prmt<0xFFBBu>(a, b);
}

/* E2M1 nearest-even of two NON-NaN float32 a and b with |a|, |b| < 2^13 under a saturating
 * policy: fpsim_e2m1_rne_sat's codes, a's in bits 0..3 and b's in bits 16..19 (0 elsewhere). The
 * same three sums per element, with the candidates' offsets moved into the constants: t + 2^22
 * gives RNE(2t), t + (2^23 + 2) gives RNE(t) + 2 and t + (2^24 + 8) gives RNE(t/2) + 4 in the
 * low bits (each constant is a multiple of its sum's ulp, so it shifts the rounded sum without
 * changing its rounding or its parity). Below 2^13 the candidates are at most 2^14 + 4, so each is
 * the low 16 bits of its sum and one VIMNMX3.U16x2 takes the smallest for both elements.
 * tests/gpu/test_lean_rne.cu compares both lanes with fpsim_round_f32 on every non-NaN input below
 * 2^13. */
__host__ __device__ __forceinline__ uint32_t fpsim_e2m1x2_rne_sat_small(uint32_t a, uint32_t b)
{
    constexpr float M1 = 4194304.0f, M2 = 8388610.0f, M3 = 16777224.0f; /* 2^22, 2^23 + 2, 2^24 + 8 */
#if defined(__CUDA_ARCH__)
    const float ta = fabsf(__uint_as_float(a)), tb = fabsf(__uint_as_float(b));
    const uint32_t p1 = fpsim_lo16_pair(__float_as_uint(__fadd_rn(ta, M1)), __float_as_uint(__fadd_rn(tb, M1)));
    const uint32_t p2 = fpsim_lo16_pair(__float_as_uint(__fadd_rn(ta, M2)), __float_as_uint(__fadd_rn(tb, M2)));
    const uint32_t p3 = fpsim_lo16_pair(__float_as_uint(__fadd_rn(ta, M3)), __float_as_uint(__fadd_rn(tb, M3)));
#else
    const uint32_t aa = a & 0x7FFFFFFFu, ab = b & 0x7FFFFFFFu;
    float ta, tb;
    memcpy(&ta, &aa, 4);
    memcpy(&tb, &ab, 4);
    const float s[6] = {ta + M1, tb + M1, ta + M2, tb + M2, ta + M3, tb + M3};
    uint32_t sb[6];
    memcpy(sb, s, sizeof sb);
    const uint32_t p1 = fpsim_lo16_pair(sb[0], sb[1]), p2 = fpsim_lo16_pair(sb[2], sb[3]), p3 = fpsim_lo16_pair(sb[4], sb[5]);
#endif
    const uint32_t m = fpsim_min_u16x2(fpsim_min3_u16x2(p1, p2, p3), 0x00070007u); /* saturate at 6 (code 7) */
    return m | (fpsim_sign_pair(a, b) & 0x00080008u);
}

/* The float16 bits of the non-negative float32 with bits u, below 65520, rounded toward zero (the
 * model of cvt.rz's lanes, from the bits alone): below 2^-14 the multiple of 2^-24 under it,
 * floor(t 2^24) = the significand shifted right by 126 - exponent (0 for float32 subnormals and
 * shifts past 31); from 2^-14 on the exponent rebiased from 127 to 15 and the mantissa's top 10
 * bits. tests/gpu/test_f16_rz_hw.cu compares it with the hardware on every input below 2^-1. */
__host__ __device__ __forceinline__ uint32_t fpsim_f16_rz_bits(uint32_t u)
{
    if (u >= 0x38800000u) return (u >> 13) - (112u << 10);
    const uint32_t e = u >> 23;
    return e == 0 || 126u - e > 31u ? 0u : (0x800000u | (u & 0x7FFFFFu)) >> (126u - e);
}

/* Two of them: a's in the low half, b's in the high (cvt.rz.f16x2.f32 on the device, subnormal
 * halves kept; fpsim_f16_rz_bits on the host). */
__host__ __device__ __forceinline__ uint32_t fpsim_f16x2_rz(float a, float b)
{
#if defined(__CUDA_ARCH__)
    uint32_t d;
    asm("cvt.rz.f16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(b), "f"(a)); /* the first source is the high half */
    return d;
#else
    uint32_t ua, ub;
    memcpy(&ua, &a, 4);
    memcpy(&ub, &b, 4);
    /* the sign bit as it is, the magnitude's bits as above (cvt rounds the magnitude) */
    return (fpsim_f16_rz_bits(ua & 0x7FFFFFFFu) | (ua >> 16 & 0x8000u)) |
           (fpsim_f16_rz_bits(ub & 0x7FFFFFFFu) | (ub >> 16 & 0x8000u)) << 16;
#endif
}

/* E2M1 stochastic rounding with 8 random bits by way of float16 (from run 122), two elements at
 * once: the magnitudes of fpsim_e2m1_sr8_sat's codes in bits 9-11 (element a) and 25-27 (b), 0
 * elsewhere. h = fpsim_f16x2_rz(t_a 2^-14, t_b 2^-14) for the magnitudes t = |y| < 2^13 (2^-14 t is
 * exact unless below 2^-126, where the code is 0 either way); r = the elements' random bytes in
 * bits 0-7 and 16-23, 0 elsewhere. Per lane, with u = byte / 256:
 *  - t < 1: 2^-14 t is a float16 subnormal, bits floor(1024 t), and (bits + 2 byte) >> 9 =
 *    floor((floor(512 t) + byte) / 256) = floor(2t + u), the core's code below 1 (the dropped
 *    lowest bit cannot carry: 2 (floor(512 t) + byte) is even);
 *  - t in [2^e, 2^(e+1)), e >= 0: the exponent field is e + 1 and the mantissa the fraction's top
 *    10 bits M, so (bits + 2 byte) >> 9 = 2 (e + 1) + floor((M + 2 byte) / 512): the code of 2^e,
 *    plus the mantissa's top bit, plus one where the fraction's next 8 bits and the byte carry (a
 *    carry out of the mantissa runs into the exponent), as the core's mag_normal;
 *  - one VIMNMX.U16x2 caps the lane at 0x0FFF (code 7, 6.0) and a mask keeps the code bits. Lanes
 *    stay below 0x4000 (2^-14 t < 2^-1), so the 32-bit add never carries between them.
 * Until run 122 the kernels took two float32 candidates per element instead (floor(2t + u) from
 * an FMA rounded toward zero, and the normal code from the bits of max(t, 1) plus the byte), about
 * 16 instructions a pair against 8 here. tests/gpu/test_lean_rne.cu compares both lanes with the
 * core on every input below 2^13 with three bytes each, on the host; `fpsim verify --device gpu`
 * checks the hardware's conversion through the kernels. */
__host__ __device__ __forceinline__ uint32_t fpsim_e2m1x2_sr8_f16(uint32_t h, uint32_t r)
{
    return fpsim_min_u16x2(h + 2u * r, 0x0FFF0FFFu) & 0x0E000E00u;
}

/* Per 16-bit lane of two float16 pairs h and c (no NaN lanes): the smaller magnitude with the sign
 * of h xor that of c (min.xorsign.abs.f16x2, subnormals kept; on the host the same from the bits:
 * the magnitudes of non-NaN float16 order as their bits do). */
__host__ __device__ __forceinline__ uint32_t fpsim_f16x2_min_abs_xorsign(uint32_t h, uint32_t c)
{
#if defined(__CUDA_ARCH__)
    uint32_t d;
    asm("min.xorsign.abs.f16x2 %0, %1, %2;" : "=r"(d) : "r"(h), "r"(c));
    return d;
#else
    return fpsim_min_u16x2(h & 0x7FFF7FFFu, c & 0x7FFF7FFFu) | ((h ^ c) & 0x80008000u);
#endif
}

/* The same stochastic rounding on SIGNED lanes: h = fpsim_f16x2_rz(y_a 2^-14, y_b 2^-14) of the
 * scaled elements themselves (|y| < 2^13), r as above. The magnitude is capped at 6 2^-14 (0x0E00)
 * BEFORE the byte goes in, which gives the same codes as the cap after it: at or above 6 the code
 * is 7 whatever the byte (0x0E00 + 2 * 255 = 0x0FFE), and below 6 the sum stays under 0x1000. One
 * min.xorsign.abs keeps the sign, so a lane is sign (bit 15), 0 (bits 12-14), the code's magnitude
 * (bits 9-11) and bits 0-8 that fpsim_e2m1_nibbles_of_sr_lanes drops; no lane carries into the
 * next. */
__host__ __device__ __forceinline__ uint32_t fpsim_e2m1x2_sr8_f16_signed(uint32_t h, uint32_t r)
{
    return fpsim_f16x2_min_abs_xorsign(h, 0x0E000E00u) + 2u * r;
}

/* Eight E2M1 codes as one word, element j in nibble j, from four such pairs of signed lanes: m[k]
 * holds element k (low lane) and k + 4 (high lane). Byte 1 of a lane reads s000cccg (s the sign,
 * ccc the magnitude, g dropped); two PRMTs put elements 0, 2, 4, 6 (a) and 1, 3, 5, 7 (b) in the
 * bytes of the word they land in, then per byte (a >> 1 | a >> 4) & 0x0F is s ccc and
 * (b << 3 | b) & 0xF0 the same in the high nibble (the bits shifted in from a neighbouring byte
 * fall outside each mask). */
__host__ __device__ __forceinline__ uint32_t fpsim_e2m1_nibbles_of_sr_lanes(const uint32_t (&m)[4])
{
    const uint32_t a = fpsim_prmt<0x7351u>(m[0], m[2]), b = fpsim_prmt<0x7351u>(m[1], m[3]);
    return (((a >> 1) | (a >> 4)) & 0x0F0F0F0Fu) | (((b << 3) | b) & 0xF0F0F0F0u);
}

/* E8M0 nearest of four float32 x[0..3] whose magnitudes are normal and below 0x7F400000 (codes 1 to
 * 254), as bytes 0..3. The core with no mantissa bits rounds the significand 1.m to 1 or 2 with
 * the implicit bit as the parity bit (ties up): the code is the exponent field plus (m >= 2^22),
 * i.e. (|x| + 2^22) >> 23, which is byte 3 of (x << 1) + 2^23 (the shift drops the sign, and
 * below 0x7F400000 the sum stays under 2^32). Three PRMTs gather the bytes. Negative inputs: the
 * magnitude's code (the sign is ignored), or neg_code where the policy sends them to NaN or 0
 * (neg_nan: FPSIM_SPEC_E8M0_NEG_NAN), put in through the sign bytes. tests/gpu/test_lean_rne.cu
 * compares it with the core on every such input. */
__host__ __device__ __forceinline__ uint32_t fpsim_e8m0_rne_x4(const uint32_t *x, uint32_t neg_nan,
                                                               uint32_t neg_code)
{
    const uint32_t t0 = (x[0] << 1) + 0x800000u, t1 = (x[1] << 1) + 0x800000u, t2 = (x[2] << 1) + 0x800000u,
                   t3 = (x[3] << 1) + 0x800000u;
    const uint32_t w = fpsim_prmt<0x5410u>(fpsim_prmt<0x0073u>(t0, t1), fpsim_prmt<0x0073u>(t2, t3));
    if (!neg_nan) return w;
    const uint32_t sign =
        fpsim_prmt<0x5410u>(fpsim_prmt<0x00FBu>(x[0], x[1]), fpsim_prmt<0x00FBu>(x[2], x[3]));
    return (w & ~sign) | ((neg_code * 0x01010101u) & sign);
}

/* float32 bits -> code: fpsim_round_f32_mode(x, s, rbits, MODE, FULL) with F's format fields as
 * constants (F = -1: the spec as given); RNE without full rules takes the form above. */
template <int F, int MODE, int FULL>
__device__ __forceinline__ uint32_t fpsim_round_f32_fixed(uint32_t x, const fpsim_spec &s, uint32_t rbits)
{
    typedef fpsim_elem_traits<F> T;
    if (!T::fixed) return fpsim_round_f32_mode(x, &s, rbits, MODE, FULL);
    if (MODE == FPSIM_RNE && !FULL) return fpsim_round_f32_rne_lean<(T::fixed ? F : FPSIM_E4M3)>(x, s);
    fpsim_spec f = s;
    f.bits = T::bits;
    f.mbits = T::mbits;
    f.bias = T::bias;
    f.max_mag = T::max_mag;
    f.is_signed = 1;
    return fpsim_round_f32_mode(x, &f, rbits, MODE, FULL);
}

#endif
