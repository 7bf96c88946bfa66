/* tensor_amax.cu: the tensor-wide amax pass on the GPU (NVFP4's global scale, FP8 current scaling,
 * the statistics' finite max), fpsim_gpu_amax_dev.
 *
 * Exact: the result is the max of the bits of |x| over the tensor (unsigned order is float order
 * for non-negative values, NaN bits above Inf), with the NaN policy's elements left out, so the
 * order of the reads cannot change it.
 *
 * Speed (gpu/RESULTS.md runs 95-96, 512 MiB of bf16 on the H200): the pass reads at about 4.0-4.1
 * TB/s, the copy's rate, where the grid-stride kernel before it (32 CTAs of 256 threads per SM,
 * one 16-byte load per thread per step, the max taken per element) read at about 3.8. The grid is
 * one wave now and bf16 takes both halves of a word with one SIMD max; 1, 2, 4, 8 or 16 loads in
 * flight per thread measured the same, within the runs' spread. Reading the tensor's first bytes
 * last, so that the quantizer after it finds them in L2, gained nothing measurable (run 95: 16-44
 * MiB kept by the default cache policy, the rest streamed), so every load streams (evict-first). */
#include <cuda_runtime.h>

#include "fpsim_block.h"
#include "gpu_internal.cuh"

namespace
{

constexpr unsigned AMAX_THREADS = 256;
constexpr int AMAX_LOADS = 4; /* 16-byte loads per thread per step, issued before the max */

/* The max so far folded with one 16-byte vector: bf16 per 16-bit lane (gpu_internal.cuh), with
 * lim = amax_limit_bf16x2(mode); float32 per word, with lim = amax_limit_f32(mode). */
template <int BF16> __device__ __forceinline__ uint32_t amax_fold(uint32_t m, uint4 v, uint32_t lim)
{
    const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (BF16) {
            m = amax_fold_bf16x2(m, w[k], lim);
        } else {
            const uint32_t t = w[k] & 0x7FFFFFFFu;
            m = max(m, t <= lim ? t : 0u);
        }
    }
    return m;
}

/* nv 16-byte vectors, then the n % per-vector elements after them (bf16 or float32); step p
 * reads vectors p * span .. p * span + span - 1, span = AMAX_LOADS x the grid's threads, load u of
 * thread t vector p * span + u * threads + t. */
template <int BF16>
__global__ void __launch_bounds__(AMAX_THREADS)
    tensor_amax_kernel(uint32_t *out, const uint4 *x, size_t nv, size_t n, int mode)
{
    const size_t threads = (size_t)gridDim.x * AMAX_THREADS,
                 t = blockIdx.x * (size_t)AMAX_THREADS + threadIdx.x;
    const uint32_t lim = BF16 ? amax_limit_bf16x2(mode) : amax_limit_f32(mode);
    constexpr int L = AMAX_LOADS;
    uint32_t m = 0;
    for (size_t i0 = t; i0 < nv; i0 += threads * L) {
        uint4 v[L];
#pragma unroll
        for (int u = 0; u < L; u++) {
            const size_t i = i0 + u * threads;
            v[u] = i < nv ? __ldcs(x + i) : make_uint4(0u, 0u, 0u, 0u);
        }
#pragma unroll
        for (int u = 0; u < L; u++)
            m = amax_fold<BF16>(m, v[u], lim);
    }
    if (BF16) m = amax_of_bf16x2(m);
    const size_t done = nv * (BF16 ? 8u : 4u);
    if (t < n - done) {
        const uint32_t b = BF16 ? (uint32_t) reinterpret_cast<const uint16_t *>(x)[done + t] << 16
                                : reinterpret_cast<const uint32_t *>(x)[done + t];
        const uint32_t a = b & 0x7FFFFFFFu;
        m = max(m, a <= amax_limit_f32(mode) ? a : 0u);
    }
    for (int o = 16; o; o >>= 1)
        m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
    if ((threadIdx.x & 31u) == 0) atomicMax(out, m);
}

/* One wave of CTAs at most, one when the tensor is small (its threads also take the tail). */
template <int BF16> void amax_launch(uint32_t *out, const void *x, size_t n, int mode, cudaStream_t cs)
{
    const size_t nv = n / (BF16 ? 8u : 4u), per_cta = (size_t)AMAX_THREADS * AMAX_LOADS,
                 want = (nv + per_cta - 1) / per_cta;
    const unsigned blocks = one_wave_ctas(tensor_amax_kernel<BF16>, AMAX_THREADS, want ? want : 1, 8);
    tensor_amax_kernel<BF16>
        <<<blocks, AMAX_THREADS, 0, cs>>>(out, static_cast<const uint4 *>(x), nv, n, mode);
}

} // namespace

extern "C" fpsim_status fpsim_gpu_amax_dev(uint32_t *amax_bits_dev, const void *x, int x_is_bf16, size_t n,
                                           int nan_policy, void *cuda_stream)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    if (!fpsim_gpu_aligned16(x))
        return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_amax_dev: input not 16-byte aligned");
    if (nan_policy != FPSIM_NAN_PROPAGATE && nan_policy != FPSIM_NAN_IGNORE && nan_policy != 2)
        return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_amax_dev: NaN policy %d is not propagate, ignore or 2",
                          nan_policy);
    cudaStream_t cs = static_cast<cudaStream_t>(cuda_stream);
    FPSIM_CUDA_TRY(cudaMemsetAsync(amax_bits_dev, 0, sizeof(uint32_t), cs));
    const int mode = nan_policy == FPSIM_NAN_IGNORE ? 1 : nan_policy == 2 ? 2 : 0;
    if (x_is_bf16)
        amax_launch<1>(amax_bits_dev, x, n, mode, cs);
    else
        amax_launch<0>(amax_bits_dev, x, n, mode, cs);
    FPSIM_CUDA_LAUNCHED("tensor_amax_kernel");
    return FPSIM_OK;
}
