/* device.cu: device discovery. */
#include <cuda_runtime.h>
#include <stdio.h>

#include "fpsim_gpu.h"

extern "C" int fpsim_gpu_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" fpsim_status fpsim_gpu_describe(char *buf, unsigned long cap)
{
    if (fpsim_gpu_device_count() == 0) return fpsim_fail(FPSIM_ENODEV, "no CUDA device found");
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) return fpsim_fail(FPSIM_ENODEV, "cannot query CUDA device 0");
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    snprintf(buf, cap, "%s, sm_%d%d, %d SMs, %.0f GiB, driver API %d, runtime %d", p.name, p.major, p.minor,
             p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, drv, rt);
    return FPSIM_OK;
}
