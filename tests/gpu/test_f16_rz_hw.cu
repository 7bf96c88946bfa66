/* test_f16_rz_hw.cu: the hardware's cvt.rz.f16x2.f32 against its model fpsim_f16_rz_bits
 * (gpu/elem_fixed.cuh), on every float32 the NVFP4 SR kernels give it.
 *
 * The kernels' float16 route (fpsim_e2m1x2_sr8_f16) converts 2^-14 |y| for scaled magnitudes
 * |y| < 2^13, so every non-negative float32 below 2^-1: 0x00000000 .. 0x3EFFFFFF; its signed twin
 * (fpsim_e2m1x2_sr8_f16_signed) converts 2^-14 y, so the same magnitudes with either sign, where
 * the model keeps the sign bit as it is (cvt rounds the magnitude toward zero). The model, an
 * integer reading of the bits, is what tests/gpu/test_lean_rne.cu checks the route with against
 * the core on the host; this test checks the model against the instruction itself, both halves
 * (each input in the low half beside a partner in the high half, then the other way round), so
 * that the host test and the device agree on every input. Counted on the device, no tolerance.
 * Without a CUDA device: prints "no CUDA device: skipped" and exits 77. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "elem_fixed.cuh"
#include "gpu_test.cuh"
#include "test_util.h"

#define F16_RZ_END 0x3F000000u /* 2^-1: the first input past the kernels' range */

/* The partner of input u, another input of the range (a multiplicative hash of u). */
__device__ __forceinline__ uint32_t partner(uint32_t u)
{
    return (u * 2654435761u) % F16_RZ_END;
}

/* The model of one half with the sign: the magnitude's bits and the sign bit. */
__device__ __forceinline__ uint32_t f16_rz_signed_model(uint32_t x)
{
    return fpsim_f16_rz_bits(x & 0x7FFFFFFFu) | (x >> 16 & 0x8000u);
}

/* Every u of the range in both halves, positive and negative (the partner's sign from another
 * bit of the hash); bad[0]: mismatching halves, bad[1]: the first such u + 1. */
__global__ void f16_rz_sweep(unsigned long long *bad)
{
    const uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t u0 = blockIdx.x * blockDim.x + threadIdx.x; u0 < F16_RZ_END; u0 += stride) {
        unsigned n = 0;
        for (uint32_t neg = 0; neg < 2; neg++) {
            const uint32_t u = u0 | neg << 31, p = partner(u0) | ((u0 * 2246822519u) & 0x80000000u);
            const uint32_t lo = fpsim_f16x2_rz(__uint_as_float(u), __uint_as_float(p));
            const uint32_t hi = fpsim_f16x2_rz(__uint_as_float(p), __uint_as_float(u));
            const uint32_t want_u = f16_rz_signed_model(u), want_p = f16_rz_signed_model(p);
            n += (lo != (want_u | want_p << 16)) + (hi != (want_p | want_u << 16));
        }
        if (n) {
            atomicAdd(&bad[0], (unsigned long long)n);
            atomicMin(&bad[1], (unsigned long long)u0 + 1ull);
        }
    }
}

int main(void)
{
    if (!gpu_test_have_device("skipped")) return TEST_SKIP;
    unsigned long long bad[2] = {0ull, ~0ull};
    if (gpu_test_counters(bad, 2, [](unsigned long long *d) { f16_rz_sweep<<<1024, 256>>>(d); })) return 1;
    printf("cvt.rz.f16x2.f32 against fpsim_f16_rz_bits: %u magnitudes x 2 signs x 2 halves, %llu mismatches",
           F16_RZ_END,
           bad[0]);
    if (bad[0]) printf(" (first input: 0x%08llx)", bad[1] - 1ull);
    printf("\n");
    return bad[0] ? 1 : 0;
}
