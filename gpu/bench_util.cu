/* bench_util.cu: what `fpsim bench quantize --device gpu` needs from CUDA: random device data,
 * event timing (median of repeats), and the device-to-device copy used as the bandwidth baseline. */
#include <cuda_runtime.h>
#include <stdlib.h>

#include "gpu_internal.cuh"

namespace {

__device__ __forceinline__ uint32_t mix32(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* Roughly normal (sum of four uniforms, centred) times 2^k, k in [-spread, spread] by row of 64. */
__global__ void fill_kernel(void *x, size_t n, int kind, uint64_t seed, int spread)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t h = seed * 0x100000001B3ull + i;
        float u = 0.f;
        for (int k = 0; k < 4; k++) u = __fadd_rn(u, __uint_as_float(0x3F800000u | (mix32(h * 4 + k) >> 9)));
        u = __fsub_rn(u, 6.0f); /* four values in [1, 2): mean 6 */
        int k = spread ? (int)(mix32(seed ^ (i >> 6) ^ 0xABCDull) % (uint32_t)(2 * spread + 1)) - spread : 0;
        float v = __fmul_rn(u, __uint_as_float((uint32_t)(127 + k) << 23));
        if (kind == 0)
            static_cast<float *>(x)[i] = v;
        else
            static_cast<uint16_t *>(x)[i] = (uint16_t)(__float_as_uint(v) >> 16); /* truncation: any bf16 */
    }
}

} // namespace

extern "C" fpsim_status fpsim_gpu_fill_random_dev(void *x, size_t n, int kind, uint64_t seed, int spread)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    if (kind != 0 && kind != 1) return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_fill_random_dev: kind %d is not 0 or 1", kind);
    if (spread < 0 || spread > 100) return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_fill_random_dev: spread %d", spread);
    fill_kernel<<<fpsim_gpu_blocks(n, 256), 256>>>(x, n, kind, seed, spread);
    FPSIM_CUDA_LAUNCHED("fill_kernel");
    return FPSIM_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

extern "C" fpsim_status fpsim_gpu_time_ms(double *median_ms, fpsim_gpu_work_fn fn, void *ctx, int warmup, int reps)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    if (reps < 1 || reps > 10000) return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_time_ms: reps %d out of [1, 10000]", reps);
    for (int i = 0; i < warmup; i++)
        if ((st = fn(ctx)) != FPSIM_OK) return st;
    double *t = (double *)malloc(sizeof(double) * (size_t)reps);
    if (!t) return fpsim_fail(FPSIM_ENOMEM, "fpsim_gpu_time_ms: no memory");
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < reps && st == FPSIM_OK; i++) {
        cudaEventRecord(a);
        st = fn(ctx);
        cudaEventRecord(b);
        cudaError_t e = cudaEventSynchronize(b);
        if (st == FPSIM_OK && e != cudaSuccess) st = fpsim_gpu_fail_cuda(e, "timed work");
        float ms = 0.f;
        cudaEventElapsedTime(&ms, a, b);
        t[i] = ms;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    if (st == FPSIM_OK) {
        qsort(t, (size_t)reps, sizeof(double), cmp_double);
        *median_ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    }
    free(t);
    return st;
}

extern "C" fpsim_status fpsim_gpu_copy_dev_async(void *dst, const void *src, size_t bytes)
{
    FPSIM_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0));
    return FPSIM_OK;
}
