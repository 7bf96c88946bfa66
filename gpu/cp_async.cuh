/* cp_async.cuh: the sm_80+ asynchronous global -> shared copy (cp.async) in 16-byte pieces, as
 * kernel v8 uses it to stage whole 128-byte lines of its input through shared memory.
 *
 * A copy moves bytes unchanged, so staging cannot alter any value a kernel computes from them.
 * .cg caches the piece in L2 only (each input byte is read once). Groups: every thread commits
 * one group per stage, and cp_async_wait<N> returns once at most N of its groups are pending; the
 * CTA then needs a __syncthreads before reading what other threads copied. */
#ifndef FPSIM_CP_ASYNC_CUH
#define FPSIM_CP_ASYNC_CUH

#include <stdint.h>

/* Copy 16 bytes from global src to shared dst (both 16-byte aligned). */
__device__ __forceinline__ void cp_async16(void *dst, const void *src)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src) : "memory");
#else
    *static_cast<uint4 *>(dst) = *static_cast<const uint4 *>(src);
#endif
}

/* The same with dst as a shared-space address (__cvta_generic_to_shared), so that a caller can
 * form it with integer operations and compile-time offsets. */
__device__ __forceinline__ void cp_async16_shared(uint32_t dst, const void *src)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
#else
    *static_cast<uint4 *>(__cvta_shared_to_generic(dst)) = *static_cast<const uint4 *>(src);
#endif
}

/* Close this thread's current group of copies (an empty group is allowed). */
__device__ __forceinline__ void cp_async_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

/* Wait until at most N of this thread's committed groups are still in flight. */
template <int N> __device__ __forceinline__ void cp_async_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

#endif
