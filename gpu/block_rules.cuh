/* block_rules.cuh: the per-block scale arithmetic of every scheme, as device functions.
 *
 * Mirrors formats/block_mx.c, block_nvfp4.c and block_fp8.c rule by rule (formats-spec.md §4-7;
 * the emulated implementation is cited at each case there). Every FP32 operation is an explicit
 * __f*_rn intrinsic so -fmad or fast-math could not change a bit, and operations that can meet a
 * NaN follow x86 SSE propagation like the CPU emulator (the NaN operand, quieted, keeps its sign;
 * an invalid operation gives the default NaN 0xFFC00000): the CUDA intrinsics would return the
 * canonical 0x7FFFFFFF instead, and some element policies keep the NaN's sign. Amax values arrive
 * as the bits of |x| (unsigned order is float order for non-negative values, NaN above Inf). */
#ifndef FPSIM_BLOCK_RULES_CUH
#define FPSIM_BLOCK_RULES_CUH

#include <float.h>
#include <stdint.h>

#include "fpsim_block.h"
#include "fpsim_core.h"

#define FPSIM_F32_INF_BITS 0x7F800000u

__device__ __forceinline__ int fpsim_isnan_bits(uint32_t b) { return (b & 0x7FFFFFFFu) > FPSIM_F32_INF_BITS; }
__device__ __forceinline__ float fpsim_u2f(uint32_t u) { return __uint_as_float(u); }
__device__ __forceinline__ uint32_t fpsim_f2u(float f) { return __float_as_uint(f); }

/* NaN propagation of a*b and a/b as the CPU emulator writes it (formats/block_arith.h mul_torch: the
 * multiplier's NaN first, as torch's CPU kernels order the operands; div_torch: the dividend's). */
__device__ __forceinline__ float fpsim_mul_x86(float a, float b)
{
    if (fpsim_isnan_bits(fpsim_f2u(b))) return fpsim_u2f(fpsim_f2u(b) | 0x00400000u);
    if (fpsim_isnan_bits(fpsim_f2u(a))) return fpsim_u2f(fpsim_f2u(a) | 0x00400000u);
    float r = __fmul_rn(a, b);
    return fpsim_isnan_bits(fpsim_f2u(r)) ? fpsim_u2f(0xFFC00000u) : r;
}
__device__ __forceinline__ float fpsim_div_x86(float a, float b)
{
    if (fpsim_isnan_bits(fpsim_f2u(a))) return fpsim_u2f(fpsim_f2u(a) | 0x00400000u);
    if (fpsim_isnan_bits(fpsim_f2u(b))) return fpsim_u2f(fpsim_f2u(b) | 0x00400000u);
    float r = __fdiv_rn(a, b);
    return fpsim_isnan_bits(fpsim_f2u(r)) ? fpsim_u2f(0xFFC00000u) : r;
}
/* torch CPU a * b (formats/block_nvfp4.c, block_fp8.c mul_torch): b's NaN first, then a's. */
__device__ __forceinline__ float fpsim_mul_torch(float a, float b)
{
    if (fpsim_isnan_bits(fpsim_f2u(b))) return fpsim_u2f(fpsim_f2u(b) | 0x00400000u);
    if (fpsim_isnan_bits(fpsim_f2u(a))) return fpsim_u2f(fpsim_f2u(a) | 0x00400000u);
    float r = __fmul_rn(a, b);
    return fpsim_isnan_bits(fpsim_f2u(r)) ? fpsim_u2f(0xFFC00000u) : r;
}
/* C fminf / fmaxf: a NaN operand is ignored. */
__device__ __forceinline__ float fpsim_fmin_c(float a, float b) { return fminf(a, b); }
/* torch.clamp: NaN propagates. */
__device__ __forceinline__ float fpsim_clamp_torch(float v, float lo, float hi)
{
    return fpsim_isnan_bits(fpsim_f2u(v)) ? v : (v < lo ? lo : (v > hi ? hi : v));
}

__device__ __forceinline__ float fpsim_elem_max_dev(int elem)
{
    return elem == FPSIM_E4M3 ? 448.f : elem == FPSIM_E5M2 ? 57344.f : elem == FPSIM_E2M3 ? 7.5f
           : elem == FPSIM_E3M2 ? 28.f : 6.f;
}
__device__ __forceinline__ int fpsim_elem_emax_dev(int elem)
{
    return elem == FPSIM_E4M3 ? 8 : elem == FPSIM_E5M2 ? 15 : elem == FPSIM_E3M2 ? 4 : 2;
}
__device__ __forceinline__ int fpsim_elem_mbits_dev(int elem)
{
    return elem == FPSIM_E4M3 ? 3 : elem == FPSIM_E5M2 ? 2 : elem == FPSIM_E2M3 ? 3 : elem == FPSIM_E3M2 ? 2 : 1;
}

/* ---- MX (E8M0 per block) ---------------------------------------------------------------- */

/* PTX cvt.rp{.satfinite}.ue8m0.f32 of a non-negative value (formats-spec.md §3). */
__device__ __forceinline__ uint32_t fpsim_e8m0_round_up_dev(float v, int satfinite)
{
    uint32_t b = fpsim_f2u(v) & 0x7FFFFFFFu;
    if (b > FPSIM_F32_INF_BITS) return 0xFF;
    if (b == FPSIM_F32_INF_BITS) return satfinite ? 0xFE : 0xFF;
    uint32_t e = b >> 23, m = b & 0x7FFFFFu;
    uint32_t up = e == 0 ? (m > 0x400000u) : (m != 0);
    uint32_t code = e + up;
    if (satfinite && code > 0xFE) code = 0xFE;
    return code;
}

/* float32 log2 as the C library's log2f rounds it, for floor() and ceil() only: the scale rules
 * that take floorf(log2f(x)) or ceilf(log2f(x)) (MX microxcaling, MX rceil under torchao 0.18,
 * torchao's power-of-two FP8 scales) on the CPU. Returned: RN_float(log2(x)) with log2 evaluated
 * in double precision (CUDA's log2 is within 1 ulp of double). Only the integer part after
 * floor/ceil matters, and that depends on the float rounding only next to an integer k: whether
 * log2(x) falls within half a float ulp of k. Those x lie next to powers of two, where log2(x) =
 * k -+ delta with delta close to a multiple of 2^-23 / ln 2, and for these to sit on a half-ulp
 * boundary to double precision, ln(2) * 2^j (j <= 7) would need a fractional part within about
 * 2^-28 of an integer, which it does not have; so the double, and any log2f whose error stays
 * below about 0.5 ulp (glibc's), round to the same side. The argument is backed by the exhaustive
 * check: tests/gpu/test_log2_rules.cu compares floor and ceil with the host's log2f on every
 * positive float32 (0 differences, gpu/RESULTS.md run 24). x = 0 gives -Inf, Inf gives Inf, NaN
 * and x < 0 give NaN. */
static __device__ __noinline__ float fpsim_log2f_dev(float x)
{
    /* out of line (noinline): only the three rules above call it */
    if (!(x > 0.0f)) return x == 0.0f ? -INFINITY : __uint_as_float(0x7FC00000u);
    if (x == INFINITY) return INFINITY;
    return __double2float_rn(log2((double)x));
}

/* E8M0 code of a block under the two rules that take a float log2 (rceil with ao=0.18 or
 * microxcaling), out of line: inlined, the division and the log2 call cost the kernels that
 * carry every rule registers and speed (gpu/RESULTS.md runs 26-27). */
static __device__ __noinline__ uint32_t fpsim_mx_scale_code_log2_dev(float amax, int rule, int emax, float elem_max)
{
    if (rule == FPSIM_MX_RCEIL) {
        /* torchao 0.18 _to_mx_rceil: descale = max_abs / max_pos (true division),
         * clamp(ceil(log2(descale)), -127, 127) + 127; NaN -> 255, Inf -> 254. */
        const float d = __fdiv_rn(amax, elem_max);
        if (isnan(d)) return 0xFF;
        if (isinf(d)) return 0xFE;
        float l = ceilf(fpsim_log2f_dev(d));
        l = l < -127.0f ? -127.0f : (l > 127.0f ? 127.0f : l);
        return (uint32_t)((int)l + 127);
    }
    /* microsoft/microxcaling: floor(log2(amax + 2^-126 [amax == 0])) in float, minus emax; above
     * 127 (Inf) or NaN -> 255 */
    const float l = floorf(fpsim_log2f_dev(amax == 0.0f ? __uint_as_float(0x00800000u) : amax));
    if (isnan(l)) return 0xFF;
    float u = l - (float)emax;
    if (u > 127.0f) return 0xFF;
    if (u < -127.0f) u = -127.0f;
    return (uint32_t)((int)u + 127);
}

/* E8M0 code of a block (rules floor, ceil, even, rceil under both torchao versions, rceil-sat,
 * gfloat, microxcaling). */
__device__ __forceinline__ uint32_t fpsim_mx_scale_code_dev(float amax, int rule, int ao, int elem)
{
    const int emax = fpsim_elem_emax_dev(elem);
    if ((rule == FPSIM_MX_RCEIL && ao == FPSIM_AO_0_18) || rule == FPSIM_MX_MICROXCALING)
        return fpsim_mx_scale_code_log2_dev(amax, rule, emax, fpsim_elem_max_dev(elem));
    if (rule == FPSIM_MX_RCEIL || rule == FPSIM_MX_RCEIL_SAT) {
        /* amax * fp32(1/max): a multiply by the FP32 reciprocal (torchao main, TE). */
        float d = __fmul_rn(amax, __frcp_rn(fpsim_elem_max_dev(elem)));
        return fpsim_e8m0_round_up_dev(d, rule == FPSIM_MX_RCEIL_SAT);
    }
    if (rule == FPSIM_MX_GFLOAT) {
        uint32_t a = fpsim_f2u(amax) & 0x7FFFFFFFu;
        if (a > FPSIM_F32_INF_BITS) return 0xFF;
        if (a == 0) return 0;
        if (a == FPSIM_F32_INF_BITS) return 0xFE; /* log2(Inf) = Inf: clipped to 127 */
        /* floor(log2(amax)) exactly: the exponent of the leading bit (Inf: 128 -> clipped). */
        int l = (a >> 23) ? (int)(a >> 23) - 127 : -149 + (31 - __clz(a));
        l -= emax;
        l = l < -127 ? -127 : (l > 127 ? 127 : l);
        return (uint32_t)(l + 127);
    }
    /* torchao FLOOR / CEIL / EVEN */
    uint32_t a = fpsim_f2u(amax) & 0x7FFFFFFFu;
    int nan = a > FPSIM_F32_INF_BITS;
    if (rule == FPSIM_MX_EVEN && !nan) a = (a + (1u << (23 - fpsim_elem_mbits_dev(elem) - 1))) & 0xFF800000u;
    int e = (int)((a >> 23) & 0xFF) - 127;
    if (rule == FPSIM_MX_CEIL) e += (a & 0x7FFFFFu) != 0;
    int u = e - emax;
    u = u < -127 ? -127 : (u > 128 ? 128 : u);
    if (nan) return 0xFF;
    if (ao == FPSIM_AO_MAIN && a >= FPSIM_F32_INF_BITS) return 0xFF;
    return (uint32_t)(u + 127);
}

/* 2^(127-e) from bits (torchao main _e8m0_scale_to_reciprocal_fp32): 254 -> 2^-127 subnormal,
 * 255 -> NaN 0x7F800001. */
__device__ __forceinline__ float fpsim_e8m0_rcp_exact_dev(uint32_t e)
{
    if (e == 0xFF) return fpsim_u2f(0x7F800001u);
    if (e == 254) return fpsim_u2f(0x00400000u);
    return fpsim_u2f((254u - e) << 23);
}

/* 2^(e-127): 0 -> 2^-127 subnormal, 255 -> NaN. */
__device__ __forceinline__ float fpsim_e8m0_value_dev(uint32_t e)
{
    if (e == 0xFF) return fpsim_u2f(0x7FC00000u);
    return e == 0 ? fpsim_u2f(0x00400000u) : fpsim_u2f(e << 23);
}

/* Element x of a block with code e, scaled as the emulated implementation does it. */
__device__ __forceinline__ float fpsim_mx_scale_element_dev(float x, uint32_t e, int rule, int ao)
{
    if (rule == FPSIM_MX_RCEIL_SAT) {
        /* TE ptx::exp2f_rcp: 0 -> 1.0, else bits (254 - e) << 23 (254 -> +0, 255 -> -Inf); CUDA
         * NaN results are 0x7FFFFFFF. */
        float r = e == 0 ? 1.0f : fpsim_u2f((uint32_t)(254 - (int)e) << 23);
        float y = __fmul_rn(x, r);
        return fpsim_isnan_bits(fpsim_f2u(y)) ? fpsim_u2f(0x7FFFFFFFu) : y;
    }
    if ((rule == FPSIM_MX_FLOOR || rule == FPSIM_MX_CEIL || rule == FPSIM_MX_EVEN) && ao == FPSIM_AO_0_18) {
        if (e == 0) return fpsim_div_x86(x, fpsim_u2f(0x00800000u));
        if (e == 255) return fpsim_div_x86(x, fpsim_u2f(0x7F800000u));
        return fpsim_mul_x86(x, fpsim_e8m0_rcp_exact_dev(e));
    }
    if (rule == FPSIM_MX_RCEIL && ao == FPSIM_AO_0_18) {
        /* torchao 0.18: code 255 multiplies by descale (amax / max: the NaN amax, which the
         * caller's scale_of_tile made the CPU's quiet NaN), 0 by 1.0, others by 2^(127 - e) */
        const float r = e == 255 ? fpsim_u2f(0x7FC00000u) : e == 0 ? 1.0f : fpsim_e8m0_rcp_exact_dev(e);
        return fpsim_mul_x86(x, r);
    }
    /* gfloat and microxcaling: x / 2^shared_exp, so a NaN scale divides (the dividend's NaN wins) */
    if ((rule == FPSIM_MX_GFLOAT || rule == FPSIM_MX_MICROXCALING) && e == 255)
        return fpsim_div_x86(x, fpsim_u2f(0x7FC00000u));
    return fpsim_mul_x86(x, fpsim_e8m0_rcp_exact_dev(e));
}

/* ---- block FP8 ---------------------------------------------------------------------------- */

/* TE compute_scale_from_amax (recipe_common.cuh). */
__device__ __forceinline__ float fpsim_fp8_te_scale_dev(float amax, float fp8_max, int pow2, float eps,
                                                        float value_for_inf)
{
    float a = amax < eps ? eps : amax;
    if (a == 0.0f || isinf(a) || isnan(a)) return 1.0f;
    float scale = __fdiv_rn(fp8_max, a);
    if (isinf(scale)) scale = value_for_inf;
    if (pow2) scale = fpsim_u2f(fpsim_f2u(scale) & 0xFF800000u);
    return scale;
}

#endif
