/* convert_fast.cuh: the "fast vector" case of the element conversions (convert.cu), the element
 * analogue of fast_tile.cuh's fast tile.
 *
 * A vector of 16 inputs is FAST when none is NaN or Inf and either the policy saturates or no
 * |x| exceeds the format's largest finite value. On such inputs the policies of one format
 * differ in nothing (they differ only in NaN, Inf and overflow codes, and in zero rules, which
 * convert_fast_mode refuses), so nearest-even is the short form of each format:
 *  - E4M3/E5M2: cvt.rn.satfinite (hw_cvt.cuh: `nv` on all 2^32 inputs), sm_89+;
 *  - E2M1: fpsim_e2m1x2_rne_sat_small, two elements at a time (vectors whose largest |x| is below
 *    2^13, mode FAST_SAT_SMALL); from bf16, E2M1 and E2M3 take elem_bf16_pairs.cuh's forms on the
 *    bf16 pairs themselves; E2M3: fpsim_e2m3_rne_sat; E3M2: the lean nearest-even form
 *    (elem_fixed.cuh; compared with the core by tests/gpu/test_lean_rne.cu);
 *  - E8M0: fpsim_e8m0_rne_x4 (elem_fixed.cuh), vectors whose magnitudes are all normal and
 *    below 0x7F400000 (mode FAST_E8M0: no zero, Inf, NaN, subnormal or overflow to meet);
 *  - BF16/F16: cvt.rn.bf16x2.f32 / cvt.rn.f16x2.f32, IEEE nearest-even with subnormals kept (no
 *    .ftz), which is what every BF16/F16 policy does to a finite value that does not overflow.
 * Any other vector goes element by element through the shared core, the definition itself.
 * `fpsim verify --device gpu --full` sweeps these kernels over all 2^32 float32 inputs. */
#ifndef FPSIM_CONVERT_FAST_CUH
#define FPSIM_CONVERT_FAST_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fast_tile.cuh"

/* The fast mode (fast_tile.cuh's FAST_*) of an element conversion by spec s (host); hw: whether
 * the hardware cvt may be used (sm_89+ and not FPSIM_GPU_SOFTWARE_ONLY). */
inline int convert_fast_mode(const fpsim_spec *s, int hw)
{
    if (s->round != FPSIM_RNE) return FAST_NEVER;
    if (s->format == FPSIM_E8M0) /* fpsim_e8m0_rne_x4 assumes the standard fields */
        return s->bits == 8 && s->mbits == 0 && s->bias == 127 && s->max_mag == 0xFE && !s->is_signed
                   ? FAST_E8M0
                   : FAST_NEVER;
    if (s->format == FPSIM_BF16 || s->format == FPSIM_F16) {
        const int bf = s->format == FPSIM_BF16;
        const int standard = s->bits == 16 && s->is_signed && s->specials == FPSIM_SPECIALS_IEEE &&
                             s->mbits == (bf ? 7 : 10) && s->bias == (bf ? 127 : 15) &&
                             s->max_mag == (bf ? 0x7F7F : 0x7BFF) &&
                             !(s->flags & (FPSIM_SPEC_UNSIGNED_ZERO | FPSIM_SPEC_NEGZERO_IN_POS));
        return standard && hw ? FAST_IF_NO_OVERFLOW : FAST_NEVER;
    }
    return fast_elem_mode(s, hw);
}

/* float32 bits of format F's largest finite value (the no-overflow bound of FAST_IF_NO_OVERFLOW). */
template <int F> __host__ __device__ constexpr uint32_t convert_fast_max_bits()
{
    return F == FPSIM_E4M3   ? 0x43E00000u  /* 448 */
           : F == FPSIM_E5M2 ? 0x47600000u  /* 57344 */
           : F == FPSIM_E2M1 ? 0x40C00000u  /* 6 */
           : F == FPSIM_E2M3 ? 0x40F00000u  /* 7.5 */
           : F == FPSIM_E3M2 ? 0x41E00000u  /* 28 */
           : F == FPSIM_BF16 ? 0x7F7F0000u  /* 0x1.FEp127 */
           : F == FPSIM_E8M0 ? 0x7F3FFFFFu  /* the largest magnitude with code 254 */
                             : 0x477FE000u; /* F16: 65504 */
}

/* Codes of 16 fast inputs (float32 bits xb) as the little-endian words of their stored codes:
 * 4 words of bytes (8-bit formats, E2M1 one code per byte) or 8 words of 16-bit codes. */
template <int F> struct convert_fast_words {
    enum { W = F == FPSIM_BF16 || F == FPSIM_F16 ? 8 : 4 };
};
template <int F>
__device__ __forceinline__ void convert_fast_codes(const uint32_t (&xb)[16], const fpsim_spec &s,
                                                   uint32_t (&c)[convert_fast_words<F>::W])
{
    if (F == FPSIM_BF16 || F == FPSIM_F16) {
#pragma unroll
        for (int q = 0; q < 8; q++) {
            const float lo = __uint_as_float(xb[2 * q]), hi = __uint_as_float(xb[2 * q + 1]);
            if (F == FPSIM_BF16) {
                const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
                c[q % convert_fast_words<F>::W] = *reinterpret_cast<const uint32_t *>(&h);
            } else {
                const __half2 h = __floats2half2_rn(lo, hi);
                c[q % convert_fast_words<F>::W] = *reinterpret_cast<const uint32_t *>(&h);
            }
        }
    } else if (F == FPSIM_E8M0) { /* magnitudes normal and below 0x7F400000 (FAST_E8M0) */
        const uint32_t neg_nan = (s.flags & FPSIM_SPEC_E8M0_NEG_NAN) != 0;
#pragma unroll
        for (int q = 0; q < 4; q++)
            c[q] = fpsim_e8m0_rne_x4(xb + 4 * q, neg_nan, s.e8m0_neg);
    } else if (F == FPSIM_E2M1) { /* |x| < 2^13 (FAST_SAT_SMALL): the paired form */
        /* elements 4q + k and 4q + k + 2 as one pair: lanes 0 and 1 -> bytes k and k + 2 */
#pragma unroll
        for (int q = 0; q < 4; q++)
            c[q] = fpsim_e2m1x2_rne_sat_small(xb[4 * q], xb[4 * q + 2]) |
                   fpsim_e2m1x2_rne_sat_small(xb[4 * q + 1], xb[4 * q + 3]) << 8;
    } else {
        constexpr int G = F == FPSIM_E5M2 || F == FPSIM_E2M3 || F == FPSIM_E3M2 ? F : FPSIM_E4M3;
        float y[16];
#pragma unroll
        for (int j = 0; j < 16; j++)
            y[j] = __uint_as_float(xb[j]);
        uint32_t b[4];
        fast_codes<G, 16>(y, s, b);
#pragma unroll
        for (int q = 0; q < 4; q++)
            c[q % convert_fast_words<F>::W] = b[q];
    }
}

/* The same for 16 bf16 inputs into E2M1 or E2M3 (one code per byte): elem_bf16_pairs.cuh's forms
 * with the scale 2^0 on the bf16 pairs 2q, 2q + 1, whose lanes (bytes 0 and 2) go to bytes
 * 2q % 4 and 2q % 4 + 1 of word q / 2. Any non-NaN input (Inf saturates, as the policy must). */
template <int F>
__device__ __forceinline__ void convert_fast_codes_bf16(const uint16_t (&v)[16], uint32_t (&c)[4])
{
    constexpr uint32_t ONE = 0x3F803F80u; /* bf16 1.0, both lanes */
#pragma unroll
    for (int q = 0; q < 4; q++) {
        const uint32_t lo = fpsim_e2mx_bf16x2_rne_sat<F>(v[4 * q] | (uint32_t)v[4 * q + 1] << 16, ONE),
                       hi = fpsim_e2mx_bf16x2_rne_sat<F>(v[4 * q + 2] | (uint32_t)v[4 * q + 3] << 16, ONE);
        c[q] = __byte_perm(lo, hi, 0x6420u);
    }
}

#endif
