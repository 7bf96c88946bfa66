/* cvt_sm100.cu: the Blackwell hardware conversions (FP4, FP6, UE8M0, stochastic rounding), compiled
 * for sm_100a next to the sm_90 build so that the PTX is assembled and kept honest, though only
 * Hopper is here to run it (gpu-numerics.md §1.1: these forms exist on sm_100a/103a; `.rs` only
 * there). Each kernel is guarded by __CUDA_ARCH_FEAT_SM100_ALL; on other targets it traps, and
 * the host entry returns FPSIM_EUNSUPPORTED unless the device is compute capability 10.x.
 *
 * Semantics (PTX ISA 8.6-8.7, gpu-numerics.md §1.1-1.2): `.satfinite` saturates finite overflow
 * and Inf to +-max; NaN gives +max for E2M1/E2M3/E3M2 (the `nv` policy of those formats) and NaN
 * for UE8M0; operand a lands in the high field of the packed result, so (hi, lo) = (x[2i+1],
 * x[2i]) keeps element order. `.rs` adds the random bits at the top of the discarded field
 * (w = 16 bits for the x4 FP8/FP6 forms, 8 for E2M1) — the rule fpsim's software SR uses; whether
 * the hardware's per-element bit layout matches fpsim_sr_word's is to be measured on a B200. */
#include <cuda_runtime.h>

#include "fpsim_core.h"
#include "gpu_internal.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM100_ALL)
#define FPSIM_SM100 1
#else
#define FPSIM_SM100 0
#endif

namespace {

enum sm100_op { OP_E2M1 = 0, OP_E2M3, OP_E3M2, OP_UE8M0_RP, OP_UE8M0_RZ, OP_E4M3_RS, OP_E2M1_RS };

/* Codes of x[0..3] (one byte each; FP4 one nibble in the low half of its byte). */
__device__ __forceinline__ void cvt4(const float x[4], uint32_t rbits, int op, uint8_t out[4])
{
#if FPSIM_SM100
    uint32_t r0 = 0, r1 = 0;
    switch (op) {
    case OP_E2M1: {
        uint16_t lo, hi;
        asm("{ .reg .b8 t; cvt.rn.satfinite.e2m1x2.f32 t, %1, %2; cvt.u16.u8 %0, t; }" : "=h"(lo) : "f"(x[1]), "f"(x[0]));
        asm("{ .reg .b8 t; cvt.rn.satfinite.e2m1x2.f32 t, %1, %2; cvt.u16.u8 %0, t; }" : "=h"(hi) : "f"(x[3]), "f"(x[2]));
        out[0] = lo & 0xF, out[1] = lo >> 4, out[2] = hi & 0xF, out[3] = hi >> 4;
        return;
    }
    case OP_E2M3:
    case OP_E3M2: {
        uint16_t lo, hi;
        if (op == OP_E2M3) {
            asm("cvt.rn.satfinite.e2m3x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(x[1]), "f"(x[0]));
            asm("cvt.rn.satfinite.e2m3x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(x[3]), "f"(x[2]));
        } else {
            asm("cvt.rn.satfinite.e3m2x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(x[1]), "f"(x[0]));
            asm("cvt.rn.satfinite.e3m2x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(x[3]), "f"(x[2]));
        }
        r0 = lo, r1 = hi;
        break;
    }
    case OP_UE8M0_RP:
    case OP_UE8M0_RZ: {
        uint16_t lo, hi;
        if (op == OP_UE8M0_RP) {
            asm("cvt.rp.satfinite.ue8m0x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(x[1]), "f"(x[0]));
            asm("cvt.rp.satfinite.ue8m0x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(x[3]), "f"(x[2]));
        } else {
            asm("cvt.rz.satfinite.ue8m0x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(x[1]), "f"(x[0]));
            asm("cvt.rz.satfinite.ue8m0x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(x[3]), "f"(x[2]));
        }
        r0 = lo, r1 = hi;
        break;
    }
    case OP_E4M3_RS: {
        uint32_t d;
        asm("cvt.rs.satfinite.e4m3x4.f32 %0, {%1, %2, %3, %4}, %5;"
            : "=r"(d) : "f"(x[3]), "f"(x[2]), "f"(x[1]), "f"(x[0]), "r"(rbits));
        out[0] = d & 0xFF, out[1] = (d >> 8) & 0xFF, out[2] = (d >> 16) & 0xFF, out[3] = d >> 24;
        return;
    }
    default: { /* OP_E2M1_RS */
        uint16_t d;
        asm("cvt.rs.satfinite.e2m1x4.f32 %0, {%1, %2, %3, %4}, %5;"
            : "=h"(d) : "f"(x[3]), "f"(x[2]), "f"(x[1]), "f"(x[0]), "r"(rbits));
        out[0] = d & 0xF, out[1] = (d >> 4) & 0xF, out[2] = (d >> 8) & 0xF, out[3] = d >> 12;
        return;
    }
    }
    out[0] = r0 & 0xFF, out[1] = r0 >> 8, out[2] = r1 & 0xFF, out[3] = r1 >> 8;
#else
    (void)x, (void)rbits, (void)op, (void)out;
    __trap(); /* the host never launches this off Blackwell */
#endif
}

__global__ void cvt_sm100_kernel(uint8_t *codes, const float *x, size_t n4, int op, uint64_t seed, uint32_t stream)
{
    for (size_t g = blockIdx.x * (size_t)blockDim.x + threadIdx.x; g < n4; g += (size_t)gridDim.x * blockDim.x) {
        float v[4] = {x[4 * g], x[4 * g + 1], x[4 * g + 2], x[4 * g + 3]};
        /* one Philox word per 4 elements, as fpsim_sr_word(seed, stream, 4g) draws it */
        uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)}, ctr[4] = {(uint32_t)g, (uint32_t)(g >> 32), stream, 0u};
        uint32_t w[4] = {0, 0, 0, 0};
        if (op == OP_E4M3_RS || op == OP_E2M1_RS) fpsim_philox4x32_10(ctr, key, w);
        uint8_t c[4];
        cvt4(v, w[0], op, c);
        for (int j = 0; j < 4; j++) codes[4 * g + j] = c[j];
    }
}

} // namespace

/* Convert n (a multiple of 4) float32 values with one of the Blackwell hardware forms. op: 0 E2M1
 * RN, 1 E2M3 RN, 2 E3M2 RN, 3 UE8M0 RP, 4 UE8M0 RZ, 5 E4M3 RS, 6 E2M1 RS (satfinite all). */
extern "C" fpsim_status fpsim_gpu_convert_sm100_dev(uint8_t *codes, const float *x, size_t n, int op, uint64_t seed,
                                                    uint32_t stream, void *cuda_stream)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    int major = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    if (major != 10)
        return fpsim_fail(FPSIM_EUNSUPPORTED, "the FP4/FP6/UE8M0 and cvt.rs hardware conversions need an sm_100a "
                                              "device (this one is compute capability %d.x)", major);
    if (op < 0 || op > OP_E2M1_RS || n % 4) return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_convert_sm100_dev: op %d, n %zu", op, n);
    cvt_sm100_kernel<<<fpsim_gpu_blocks(n / 4, 256), 256, 0, static_cast<cudaStream_t>(cuda_stream)>>>(codes, x, n / 4, op,
                                                                                                   seed, stream);
    FPSIM_CUDA_LAUNCHED("cvt_sm100_kernel");
    return FPSIM_OK;
}
