/* fpsim_gpu_gemm.h: fpsim's own cuBLASLt GEMMs (BF16; FP8 with per-tensor, VEC128 or BLK128x128
 * scales; fast accumulation on or off), the algorithm pinned and recorded.
 *
 * The layout is the one of fpsim_gemm_tn (sim/fpsim_gemm.h): C (M x N, row-major) = A (M x K,
 * row-major) * B (N x K, row-major)^T with fp32 output and C = 0 (beta = 0). In cuBLASLt terms
 * this is the "TN" FP8 layout: cuBLASLt's A is our A seen as a column-major K x M matrix with
 * op T, its B is our B as column-major K x N with op N, and D is column-major M x N (our C^T,
 * transposed back on the host). Operands are passed as float values that must be exact in the
 * operand format (they are converted exactly with the CUDA 13 cuda_fp8.h / cuda_bf16.h host
 * routines). Host pointers in, host pointers out: these calls are for verification and probes.
 * Every function returns FPSIM_ENODEV with a clear message when no device is present. */
#ifndef FPSIM_GPU_GEMM_H
#define FPSIM_GPU_GEMM_H

#include <stddef.h>

#include "fpsim_core_types.h"
#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Scale mode of one FP8 operand (values of cublasLtMatmulMatrixScale_t in cuBLAS 13). */
typedef enum fpsim_gpu_scale_mode {
    FPSIM_GPU_SCALE_TENSOR = 0,  /* CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F */
    FPSIM_GPU_SCALE_VEC128 = 4,  /* ..._VEC128_32F: one fp32 per 1x128 along K */
    FPSIM_GPU_SCALE_BLK128 = 5   /* ..._BLK128x128_32F: one fp32 per 128x128 tile */
} fpsim_gpu_scale_mode;

typedef struct fpsim_gpu_gemm_config {
    fpsim_format_id a_format, b_format;  /* FPSIM_E4M3/FPSIM_E5M2 (FP8) or FPSIM_BF16 (both) */
    fpsim_gpu_scale_mode a_scale, b_scale;
    int fast_accum;                      /* CUBLASLT_MATMUL_DESC_FAST_ACCUM (FP8 only) */
} fpsim_gpu_gemm_config;

/* What ran: filled by every call. */
typedef struct fpsim_gpu_gemm_info {
    char device[160];        /* fpsim_gpu_describe() */
    size_t cublaslt_version; /* cublasLtGetVersion() */
    int sm_count;
    int algo_id, tile_id, stages_id, splitk_num, reduction_scheme, swizzling, custom_option;
    size_t workspace;
    char algo[160];          /* the fields above as one line */
} fpsim_gpu_gemm_info;

/* C = A B^T on the GPU as described above. Per-tensor modes use scale_a / scale_b; block modes
 * read scales_a / scales_b laid out as fpsim_gemm_scales (row-major rows x ceil(K/128): rows = M
 * (VEC128) or ceil(M/128) (BLK128x128)), rearranged here into cuBLASLt's layouts (VEC128:
 * M-major M x L; BLK128x128: K-major L4 x ceil(M/128), L4 = L rounded up to 4). The algorithm is
 * the first result of cublasLtMatmulAlgoGetHeuristic for this problem (recorded in *info).
 * Block modes need M, N multiples of 4 and K of 16 (cuBLASLt's rules). */
fpsim_status fpsim_gpu_gemm_tn(float *C, const float *A, const float *B, size_t M, size_t N, size_t K,
                               const fpsim_gpu_gemm_config *cfg, float scale_a, float scale_b,
                               const float *scales_a, const float *scales_b, fpsim_gpu_gemm_info *info);

/* Median time in milliseconds of `reps` launches (after 3 warm-ups, CUDA events) of the same
 * GEMM on device-resident random operands (values irrelevant to timing but not zero), for the
 * linear-layer speed experiment. */
fpsim_status fpsim_gpu_gemm_time(double *ms, size_t M, size_t N, size_t K, const fpsim_gpu_gemm_config *cfg,
                                 int reps, fpsim_gpu_gemm_info *info);

/* A GEMM prepared once (descriptors, the heuristic's algorithm, a workspace) and launched many
 * times on device buffers: the linear-layer speed experiment feeds it the codes and scales that
 * fpsim's GPU quantizers (fpsim_gpu_block_quantize_dev) leave on the device.
 *   A_dev: M x K codes, row-major (FP8 one byte each, BF16 two): the activations X;
 *   B_dev: N x K codes, row-major: the weights W;
 *   D_dev: fp32 C = A B^T stored column-major M x N (row n of W gives column n);
 *   scale_a_dev / scale_b_dev (FP8 only, device pointers fixed at creation): per-tensor mode one
 *   fp32 dequantization factor (fpsim_gpu_qbuf tensor_values + 2 for fp8-tensor); VEC128 and
 *   BLK128x128 modes the cuBLASLt layouts, which are fpsim_gpu_qbuf.cublas_f32 of fp8-block
 *   operands quantized along K (axis rows). NULL leaves cuBLASLt's default of 1 (tensor mode). */
typedef struct fpsim_gpu_gemm_plan fpsim_gpu_gemm_plan;

fpsim_status fpsim_gpu_gemm_plan_create(fpsim_gpu_gemm_plan **plan, size_t M, size_t N, size_t K,
                                        const fpsim_gpu_gemm_config *cfg, const float *scale_a_dev,
                                        const float *scale_b_dev, fpsim_gpu_gemm_info *info);

/* Queue one GEMM on cuda_stream (a cudaStream_t, NULL = default stream); does not wait. */
fpsim_status fpsim_gpu_gemm_plan_run(fpsim_gpu_gemm_plan *plan, float *D_dev, const void *A_dev, const void *B_dev,
                                     void *cuda_stream);

void fpsim_gpu_gemm_plan_free(fpsim_gpu_gemm_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
