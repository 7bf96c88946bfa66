/* test_log2_rules.cu: the GPU's floorf/ceilf of log2f (gpu/block_rules.cuh fpsim_log2f_dev, used
 * by MX microxcaling, MX rceil under torchao 0.18 and torchao's power-of-two FP8 scales) against
 * the host C library's floorf(log2f(x)) and ceilf(log2f(x)), the CPU emulator's definition, over
 * every positive finite float32 (2^31 - 2^23 inputs) and the special inputs (+-0, +-Inf, NaN,
 * negatives). Needs a CUDA device: without one it prints "no CUDA device: skipped" and exits 77.
 * The host side compares on every core (pthreads); about 10 s on the H200's machine. */
#include <cuda_runtime.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "block_rules.cuh"
#include "gpu_test.cuh"

#define CHUNK (1u << 27)

__global__ void floor_ceil_kernel(int16_t *fl, int16_t *ce, uint32_t first, uint32_t n)
{
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const float l = fpsim_log2f_dev(__uint_as_float(first + i));
        fl[i] = (int16_t)floorf(l);
        ce[i] = (int16_t)ceilf(l);
    }
}

__global__ void specials_kernel(const float *x, float *l, int n)
{
    const int i = threadIdx.x;
    if (i < n) l[i] = fpsim_log2f_dev(x[i]);
}

typedef struct part {
    const int16_t *fl, *ce;
    uint32_t first, begin, end;
    uint64_t mismatches;
    uint32_t example;
} part;

static void *compare_part(void *arg)
{
    part *p = (part *)arg;
    for (uint32_t i = p->begin; i < p->end; i++) {
        const uint32_t bits = p->first + i;
        float x;
        memcpy(&x, &bits, 4);
        const float l = log2f(x);
        if ((int)floorf(l) != p->fl[i] || (int)ceilf(l) != p->ce[i]) {
            if (!p->mismatches) p->example = bits;
            p->mismatches++;
        }
    }
    return NULL;
}

static int same_value(float a, float b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

int main(void)
{
    if (!gpu_test_have_device("skipped")) return 77;
    int fails = 0;

    /* specials: the value itself (NaN for NaN and negatives, -Inf for zeros, Inf for Inf) */
    const float sx[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -1.0f, -1e-40f, 1.0f, 2.0f, 0.5f};
    const int ns = (int)(sizeof sx / sizeof sx[0]);
    float *dx, *dl, sl[16];
    cudaMalloc(&dx, sizeof sx);
    cudaMalloc(&dl, sizeof sx);
    cudaMemcpy(dx, sx, sizeof sx, cudaMemcpyHostToDevice);
    specials_kernel<<<1, 32>>>(dx, dl, ns);
    cudaMemcpy(sl, dl, sizeof sx, cudaMemcpyDeviceToHost);
    for (int i = 0; i < ns; i++)
        if (!same_value(sl[i], log2f(sx[i]))) {
            printf("log2 of %a: GPU %a, host log2f %a\n", (double)sx[i], (double)sl[i], (double)log2f(sx[i]));
            fails++;
        }
    cudaFree(dx);
    cudaFree(dl);

    /* every positive finite float32: bits 1 .. 0x7F7FFFFF */
    int16_t *dfl, *dce, *hfl, *hce;
    if (cudaMalloc(&dfl, CHUNK * 2) != cudaSuccess || cudaMalloc(&dce, CHUNK * 2) != cudaSuccess ||
        cudaMallocHost(&hfl, CHUNK * 2) != cudaSuccess || cudaMallocHost(&hce, CHUNK * 2) != cudaSuccess) {
        printf("test_log2_rules: out of memory\n");
        return 1;
    }
    long nth = sysconf(_SC_NPROCESSORS_ONLN);
    if (nth < 1) nth = 1;
    if (nth > 64) nth = 64;
    uint64_t total = 0, checked = 0;
    uint32_t example = 0;
    const uint32_t last = 0x7F7FFFFFu;
    for (uint64_t first = 1; first <= last; first += CHUNK) {
        const uint32_t n = (uint32_t)(last - first + 1 < CHUNK ? last - first + 1 : CHUNK);
        floor_ceil_kernel<<<1024, 256>>>(dfl, dce, (uint32_t)first, n);
        if (cudaMemcpy(hfl, dfl, (size_t)n * 2, cudaMemcpyDeviceToHost) != cudaSuccess ||
            cudaMemcpy(hce, dce, (size_t)n * 2, cudaMemcpyDeviceToHost) != cudaSuccess) {
            printf("test_log2_rules: CUDA error %s\n", cudaGetErrorString(cudaGetLastError()));
            return 1;
        }
        pthread_t th[64];
        part parts[64];
        for (long t = 0; t < nth; t++) {
            parts[t] = (part){hfl, hce, (uint32_t)first, (uint32_t)((uint64_t)n * t / nth),
                              (uint32_t)((uint64_t)n * (t + 1) / nth), 0, 0};
            pthread_create(&th[t], NULL, compare_part, &parts[t]);
        }
        for (long t = 0; t < nth; t++) {
            pthread_join(th[t], NULL);
            if (parts[t].mismatches && !total) example = parts[t].example;
            total += parts[t].mismatches;
        }
        checked += n;
    }
    cudaFree(dfl);
    cudaFree(dce);
    cudaFreeHost(hfl);
    cudaFreeHost(hce);
    if (total) {
        float x;
        memcpy(&x, &example, 4);
        printf("floor/ceil of log2: %llu of %llu positive floats differ; first 0x%08X (%a): host log2f %a\n",
               (unsigned long long)total, (unsigned long long)checked, example, (double)x, (double)log2f(x));
        fails++;
    }
    printf("test_log2_rules: %llu positive floats and %d specials, %s\n", (unsigned long long)checked, ns,
           fails ? "FAILED" : "floor and ceil identical to the host's log2f");
    return fails ? 1 : 0;
}
