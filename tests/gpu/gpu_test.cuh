/* gpu_test.cuh: what the device tests share: the visible skip where no CUDA device is present,
 * and the round trip of a sweep kernel that counts its mismatches on the device. */
#ifndef FPSIM_GPU_TEST_CUH
#define FPSIM_GPU_TEST_CUH

#include <cuda_runtime.h>
#include <stdio.h>

/* 1 where a CUDA device is present; else prints "no CUDA device: <what>" and returns 0. */
static inline int gpu_test_have_device(const char *what)
{
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0) return 1;
    printf("no CUDA device: %s\n", what);
    return 0;
}

/* Copies counters[0 .. n) to the device, runs launch(device copy) (a kernel that counts into it)
 * and copies them back: 0, or 1 after a FAIL line naming the CUDA error. */
template <typename Launch> static int gpu_test_counters(unsigned long long *counters, size_t n, Launch launch)
{
    unsigned long long *d = NULL;
    const size_t bytes = n * sizeof *counters;
    if (cudaMalloc(&d, bytes) != cudaSuccess || cudaMemcpy(d, counters, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        printf("FAIL: device memory\n");
        cudaFree(d);
        return 1;
    }
    launch(d);
    const cudaError_t err = cudaMemcpy(counters, d, bytes, cudaMemcpyDeviceToHost);
    cudaFree(d);
    if (err != cudaSuccess) {
        printf("FAIL: %s\n", cudaGetErrorString(err));
        return 1;
    }
    return 0;
}

#endif
