/* hw_cvt.cuh: the Hopper (sm_89+) FP8 conversion instructions fpsim uses, in one place.
 *
 * cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 is the `nv` policy of E4M3/E5M2 bit for bit (verified on
 * the H200 over all 2^32 float32 inputs, gpu/RESULTS.md runs 5-6); on every non-NaN input it is
 * also every policy whose overflow and Inf codes are the saturated +-max and that has no zero
 * rule (fast_tile.cuh's fast_elem_mode), because the policy fields differ only in NaN codes there.
 * cvt.rn.f16x2.e4m3x2 widens E4M3 codes to FP16 exactly (every E4M3 value is an FP16 value:
 * 2^-9 .. 448), and FP16 -> FP32 is exact; NaN codes are not taken through it (callers check).
 * Callers select these paths only where fpsim_gpu_hw_cvt_available() says sm_89+. */
#ifndef FPSIM_HW_CVT_CUH
#define FPSIM_HW_CVT_CUH

#include <stdint.h>

#include "fpsim_core.h"

/* Codes of lo (low byte) and hi (high byte) through cvt.rn.satfinite (operand a = hi). */
__device__ __forceinline__ uint32_t fpsim_hw_cvt_pair(float lo, float hi, int e5m2)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    unsigned short d;
    if (e5m2)
        asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
    else
        asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
    return d;
#else
    (void)lo;
    (void)hi;
    (void)e5m2;
    return 0; /* never reached: the host selects the hardware path only on sm_89+ */
#endif
}

/* The value of a non-NaN E4M3 code (low byte of code), exactly. */
__device__ __forceinline__ float fpsim_hw_e4m3_value(uint32_t code)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    uint32_t h2;
    float f;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"((unsigned short)(code & 0xFFu)));
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)(h2 & 0xFFFFu)));
    return f;
#else
    (void)code;
    return 0.f;
#endif
}

#endif
