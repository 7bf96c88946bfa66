/* device.cu: device discovery, memory and the CUDA-error -> fpsim_status bridge. */
#include <cuda_runtime.h>
#include <stdio.h>

#include "gpu_internal.cuh"

fpsim_status fpsim_gpu_fail_cuda(cudaError_t e, const char *what)
{
    fpsim_status st = FPSIM_EINVAL;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInitializationError)
        st = FPSIM_ENODEV;
    else if (e == cudaErrorMemoryAllocation)
        st = FPSIM_ENOMEM;
    return fpsim_fail(st, "%s: %s", what, cudaGetErrorString(e));
}

extern "C" int fpsim_gpu_device_count(void)
{
    static int cached = -1;
    if (cached >= 0) return cached;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        n = 0;
    }
    cached = n;
    return n;
}

int fpsim_gpu_sm_count(void)
{
    static int cached = -1;
    if (cached >= 0) return cached;
    int n = 0;
    if (fpsim_gpu_device_count() > 0 && cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess)
        n = 0;
    cached = n;
    return n;
}

extern "C" fpsim_status fpsim_gpu_require(void)
{
    if (fpsim_gpu_device_count() == 0)
        return fpsim_fail(FPSIM_ENODEV, "no CUDA device found (cudaGetDeviceCount reports none or no driver)");
    return FPSIM_OK;
}

extern "C" fpsim_status fpsim_gpu_describe(char *buf, unsigned long cap)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return fpsim_fail(FPSIM_ENODEV, "cannot query CUDA device 0");
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    snprintf(buf, cap, "%s, sm_%d%d, %d SMs, %.0f GiB, L2 %d MiB, driver API %d, runtime %d", p.name, p.major,
             p.minor, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, p.l2CacheSize >> 20, drv, rt);
    return FPSIM_OK;
}

extern "C" int fpsim_gpu_hw_cvt_available(void)
{
    static int cached = -1;
    if (cached >= 0) return cached;
    int major = 0, minor = 0;
    if (fpsim_gpu_device_count() > 0) {
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    }
    cached = major * 10 + minor >= 89;
    return cached;
}

extern "C" fpsim_status fpsim_gpu_alloc(void **dev, size_t bytes)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    *dev = NULL;
    cudaError_t e = cudaMalloc(dev, bytes ? bytes : 16);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fpsim_fail(FPSIM_ENOMEM, "cudaMalloc of %zu bytes: %s", bytes, cudaGetErrorString(e));
    }
    return FPSIM_OK;
}

extern "C" void fpsim_gpu_free(void *dev)
{
    if (dev) cudaFree(dev);
}

extern "C" fpsim_status fpsim_gpu_copy(void *dst, const void *src, size_t bytes, int kind)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    static const cudaMemcpyKind kinds[3] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice};
    if (kind < 0 || kind > 2) return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_copy: kind %d is not 0, 1 or 2", kind);
    if (bytes == 0) return FPSIM_OK;
    FPSIM_CUDA_TRY(cudaMemcpy(dst, src, bytes, kinds[kind]));
    return FPSIM_OK;
}

extern "C" fpsim_status fpsim_gpu_sync(void)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    FPSIM_CUDA_TRY(cudaDeviceSynchronize());
    return FPSIM_OK;
}

extern "C" fpsim_status fpsim_gpu_host_alloc(void **host, size_t bytes)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    *host = NULL;
    cudaError_t e = cudaMallocHost(host, bytes ? bytes : 16);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fpsim_fail(FPSIM_ENOMEM, "cudaMallocHost of %zu bytes: %s", bytes, cudaGetErrorString(e));
    }
    return FPSIM_OK;
}

extern "C" void fpsim_gpu_host_free(void *host)
{
    if (host) cudaFreeHost(host);
}
