/* fpsim_sgemm.h: the FP32 GEMM every fpsim engine and tool calls (cblas_sgemm, row-major), with
 * bits that do not depend on the thread count. */
#ifndef FPSIM_SGEMM_H
#define FPSIM_SGEMM_H

#include <cblas.h>

/* C (M x N, leading dimension ldc) = op(A) op(B), FP32, as cblas_sgemm(CblasRowMajor, ta, tb, M, N,
 * K, 1, A, lda, B, ldb, 0, C, ldc). Uses as many threads as OpenBLAS is set to
 * (openblas_set_num_threads, which fpsim's --threads sets); the bits are the same for any count.
 * Call it from one thread at a time: it sets OpenBLAS to one thread while it runs. */
void fpsim_sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, const float *A, int lda,
                 const float *B, int ldb, float *C, int ldc);

#endif
