/* test_half_minmax_hw.cu: the two 16x2 min/max instructions of the block kernels against their
 * bit-level models, on every 32-bit word.
 *  - min.xorsign.abs.f16x2 (fpsim_f16x2_min_abs_xorsign, gpu/elem_fixed.cuh): the NVFP4 SR route
 *    caps each signed float16 lane at 6 2^-14 (0x0E00) with it. Model: the smaller of the two
 *    magnitudes' bits, the sign bit of h; every non-NaN word h (both lanes), against 0x0E000E00.
 *  - max.NaN.xorsign.abs.bf16x2 (bf16x2_max_abs_tree, gpu/gpu_internal.cuh), the tiles' max |x| of
 *    BF16 pairs. Model, after the sign bits are cleared: per lane max(|a|, |b|) of the bits, or
 *    0x7FFF where either lane is NaN; every word a against a partner b (a hash of a) and b against
 *    a, NaN and subnormal lanes included.
 * Counted on the device, no tolerance. Without a CUDA device: prints "no CUDA device: skipped"
 * and exits 77. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#include "elem_fixed.cuh"
#include "gpu_internal.cuh"
#include "gpu_test.cuh"
#include "test_util.h"

/* One lane's model of the capped float16 magnitude, h not NaN. */
__device__ __forceinline__ uint32_t min_abs_model(uint32_t h, uint32_t c)
{
    const uint32_t m = h & 0x7FFFu;
    return (m < c ? m : c) | (h & 0x8000u);
}

/* One lane's model of the BF16 max |x| with NaN as 0x7FFF. */
__device__ __forceinline__ uint32_t max_abs_model(uint32_t a, uint32_t b)
{
    const uint32_t x = a & 0x7FFFu, y = b & 0x7FFFu;
    if (x > 0x7F80u || y > 0x7F80u) return 0x7FFFu;
    return x > y ? x : y;
}

__device__ __forceinline__ int f16_nan(uint32_t lane)
{
    return (lane & 0x7FFFu) > 0x7C00u;
}

/* bad[0], bad[1]: mismatches of the min and of the max; bad[2], bad[3]: the first such word + 1. */
__global__ void half_minmax_sweep(unsigned long long *bad)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < (1ull << 32); i += stride) {
        const uint32_t a = (uint32_t)i;
        if (!f16_nan(a) && !f16_nan(a >> 16)) {
            const uint32_t got = fpsim_f16x2_min_abs_xorsign(a, 0x0E000E00u);
            const uint32_t want = min_abs_model(a, 0x0E00u) | min_abs_model(a >> 16, 0x0E00u) << 16;
            if (got != want) {
                atomicAdd(&bad[0], 1ull);
                atomicMin(&bad[2], i + 1ull);
            }
        }
        const uint32_t b = a * 2654435761u + 0x9E3779B9u;
        const uint32_t pair[2] = {a, b}, swapped[2] = {b, a};
        const uint32_t got_ab = bf16x2_max_abs_tree<2>(pair), got_ba = bf16x2_max_abs_tree<2>(swapped);
        const uint32_t want = max_abs_model(a, b) | max_abs_model(a >> 16, b >> 16) << 16;
        if (got_ab != want || got_ba != want) {
            atomicAdd(&bad[1], 1ull);
            atomicMin(&bad[3], i + 1ull);
        }
    }
}

int main(void)
{
    if (!gpu_test_have_device("skipped")) return TEST_SKIP;
    unsigned long long bad[4] = {0ull, 0ull, ~0ull, ~0ull};
    if (gpu_test_counters(bad, 4, [](unsigned long long *d) { half_minmax_sweep<<<2048, 256>>>(d); })) return 1;
    printf("min.xorsign.abs.f16x2 against its model: every non-NaN word, %llu mismatches", bad[0]);
    if (bad[0]) printf(" (first: 0x%08llx)", bad[2] - 1ull);
    printf("\nmax.NaN.xorsign.abs.bf16x2 against its model: 2^32 word pairs x 2 orders, %llu mismatches",
           bad[1]);
    if (bad[1]) printf(" (first: 0x%08llx)", bad[3] - 1ull);
    printf("\n");
    return bad[0] || bad[1] ? 1 : 0;
}
