/* gpu_internal.cuh: helpers shared by the .cu files of fpsim_gpu (not installed, not C).
 *
 * Status plumbing (a failing CUDA call becomes an fpsim_status with a message naming the call),
 * launch geometry, and 16-byte vector types. Bits are decided in fpsim_core.h, never here. */
#ifndef FPSIM_GPU_INTERNAL_CUH
#define FPSIM_GPU_INTERNAL_CUH

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "fpsim_gpu.h"

/* Turn a CUDA error into FPSIM_ENODEV/EINVAL/ENOMEM with "what: cuda message". */
fpsim_status fpsim_gpu_fail_cuda(cudaError_t e, const char *what);

/* Check a CUDA call inside a function returning fpsim_status. */
#define FPSIM_CUDA_TRY(call)                                                                    \
    do {                                                                                        \
        cudaError_t fpsim_e_ = (call);                                                          \
        if (fpsim_e_ != cudaSuccess) return fpsim_gpu_fail_cuda(fpsim_e_, #call);               \
    } while (0)

/* Check the launch just queued (configuration errors; asynchronous faults surface at sync). */
#define FPSIM_CUDA_LAUNCHED(name)                                                               \
    do {                                                                                        \
        cudaError_t fpsim_e_ = cudaGetLastError();                                              \
        if (fpsim_e_ != cudaSuccess) return fpsim_gpu_fail_cuda(fpsim_e_, name);                \
    } while (0)

/* Number of multiprocessors of device 0 (cached; 0 when no device). */
int fpsim_gpu_sm_count(void);

/* Blocks for a grid-stride loop over `items` work items of `threads` threads each: enough to
 * fill every SM several times over, never more than there are items. */
static inline unsigned fpsim_gpu_blocks(size_t items, unsigned threads)
{
    size_t need = (items + threads - 1) / threads;
    size_t cap = (size_t)(fpsim_gpu_sm_count() > 0 ? fpsim_gpu_sm_count() : 132) * 32;
    if (need > cap) need = cap;
    return need ? (unsigned)need : 1u;
}

/* CTAs for a grid-stride kernel with nb CTAs' worth of work: nb, but at most one wave (the SMs
 * times the CTAs of `threads` threads and `smem` bytes of dynamic shared memory that fit on one,
 * or `fallback` per SM when the occupancy query fails). */
template <class K>
static inline unsigned one_wave_ctas(K kernel, unsigned threads, size_t nb, int fallback, size_t smem = 0)
{
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, (int)threads, smem) != cudaSuccess || per_sm < 1)
        per_sm = fallback;
    const size_t cap = (size_t)(fpsim_gpu_sm_count() > 0 ? fpsim_gpu_sm_count() : 132) * (size_t)per_sm;
    return (unsigned)(nb < cap ? nb : cap);
}

static inline int fpsim_gpu_aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

/* ---- the tensor amax passes' max of |x| bits (tensor_amax.cu, rht_amax_kernel.cuh) ----
 * Exact: unsigned order of |x| bits is float order, NaN bits above Inf. The limit keeps, per NaN
 * mode (block_quantize.cu's abs_bits): every value (0, propagate), Inf and below (1, NaN dropped),
 * finite values only (2). BF16 pairs go per 16-bit lane: a BF16 value widens to float32 exactly
 * as its bits << 16, so the lanes' order is the floats' order too. */
__host__ __device__ constexpr uint32_t amax_limit_f32(int mode)
{
    return mode == 0 ? 0x7FFFFFFFu : mode == 1 ? 0x7F800000u : 0x7F7FFFFFu;
}
/* The limit's high half in both lanes. */
__host__ __device__ constexpr uint32_t amax_limit_bf16x2(int mode)
{
    return (amax_limit_f32(mode) >> 16) * 0x00010001u;
}
/* m2 (per-lane maxima) folded with the BF16 pair w under lim2 = amax_limit_bf16x2(mode). */
__device__ __forceinline__ uint32_t amax_fold_bf16x2(uint32_t m2, uint32_t w, uint32_t lim2)
{
    const uint32_t t = w & 0x7FFF7FFFu;
    return __vmaxu2(m2, t & __vcmpleu2(t, lim2));
}
/* The larger lane of m2 as float32 bits. */
__device__ __forceinline__ uint32_t amax_of_bf16x2(uint32_t m2)
{
    return max(m2 & 0xFFFF0000u, m2 << 16);
}

/* Whether the block kernels take a tile's max |x| over BF16 pairs with max.NaN.xorsign.abs.bf16x2
 * (HMNMX2: one instruction per pair of words, the mask once at the end) rather than masks and
 * integer SIMD maxima: 0 no, 1 (the default) the rhtsum=mma kernels, 2 those and the bf16 column
 * kernels. Run 175: 1 took the SR+RHT rhtsum=mma kernel from 60.5-60.7 to 61.5-61.7% of copy
 * (with FPSIM_GPU_SR_SIGNED) and the nearest-even one half a point up; 2 cost NVFP4 SR cols 1-1.5
 * points and left the nearest-even column kernels where they were. */
#ifndef FPSIM_GPU_HMAX_AMAX
#define FPSIM_GPU_HMAX_AMAX 1
#endif
/* Per lane, max(|a|, |b|) of two BF16 pairs (subnormals kept) with the sign bit the xor of theirs,
 * and the canonical NaN 0x7FFF (or 0xFFFF) where either lane is NaN. After the sign bits are
 * cleared a lane is the max of the |x| bits of a tree of such maxima with any NaN read as 0x7FFF,
 * above Inf: the tile is then not fast and the kernels recompute its amax under the NaN policy. */
__device__ __forceinline__ uint32_t bf16x2_max_abs(uint32_t a, uint32_t b)
{
    uint32_t d;
    asm("max.NaN.xorsign.abs.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}
/* The per-lane max |x| bits of N BF16 pairs (N a power of two), NaN as 0x7FFF: N - 1 maxima in a
 * tree, then one mask. */
template <int N> __device__ __forceinline__ uint32_t bf16x2_max_abs_signed(const uint32_t *w)
{
    if constexpr (N == 2)
        return bf16x2_max_abs(w[0], w[1]);
    else
        return bf16x2_max_abs(bf16x2_max_abs_signed<N / 2>(w), bf16x2_max_abs_signed<N / 2>(w + N / 2));
}
template <int N> __device__ __forceinline__ uint32_t bf16x2_max_abs_tree(const uint32_t *w)
{
    static_assert(N >= 2 && (N & (N - 1)) == 0, "a power of two, at least 2");
    return bf16x2_max_abs_signed<N>(w) & 0x7FFF7FFFu;
}

#endif
