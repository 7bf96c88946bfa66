/* sgemm_det.c: FP32 GEMMs through cblas_sgemm whose bits do not depend on the thread count.
 *
 * Why: OpenBLAS's threaded sgemm splits C among its threads, and with some of its kernels an
 * element's sum then comes out of a different micro-kernel path than in the single-threaded call.
 * Measured with OpenBLAS 0.3.21: its "Zen" kernels gave different bits for 1 and 2 threads on
 * every shape tried (M 8-256, N 256, K 64-2048; its dgemm did not), where its "Cooperlake" kernels
 * had given the same, so fpsim's promise of the same bits on any thread count held on one machine
 * and not on the next (test_model_numerics, test_replay_run).
 *
 * Here C is cut into blocks of SGEMM_BLOCK_ROWS rows, a function of M alone, and each block is one
 * single-threaded sgemm call; fpsim_parallel_for shares the blocks among the threads. An element's
 * arithmetic then depends on its block, never on the thread that computes it. OpenBLAS packs its
 * operands into its own buffers, so where a block's rows start in memory does not matter either.
 * The cost: B is packed once per block instead of once per call. */
#include "fpsim_sgemm.h"

#include <stddef.h>

#include "fpsim_parallel.h"

/* From OpenBLAS (cblas.h declares them in OpenBLAS's own header, not in every cblas.h). */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

/* A multiple of every OpenBLAS sgemm kernel's row unroll (4 to 32). */
enum { SGEMM_BLOCK_ROWS = 64 };

typedef struct sgemm_job {
    CBLAS_TRANSPOSE ta, tb;
    int M, N, K, lda, ldb, ldc;
    const float *A, *B;
    float *C;
} sgemm_job;

static void sgemm_blocks(void *ctx, size_t begin, size_t end)
{
    const sgemm_job *j = ctx;
    for (size_t blk = begin; blk < end; blk++) {
        int r0 = (int)blk * SGEMM_BLOCK_ROWS,
            rows = j->M - r0 < SGEMM_BLOCK_ROWS ? j->M - r0 : SGEMM_BLOCK_ROWS;
        /* rows r0 .. r0 + rows - 1 of op(A): rows of A, or columns of A when transposed */
        const float *a = j->ta == CblasNoTrans ? j->A + (size_t)r0 * (size_t)j->lda : j->A + r0;
        cblas_sgemm(CblasRowMajor, j->ta, j->tb, rows, j->N, j->K, 1.0f, a, j->lda, j->B, j->ldb, 0.0f,
                    j->C + (size_t)r0 * (size_t)j->ldc, j->ldc);
    }
}

void fpsim_sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, const float *A, int lda,
                 const float *B, int ldb, float *C, int ldc)
{
    if (M <= 0 || N <= 0) return;
    sgemm_job j = {ta, tb, M, N, K, lda, ldb, ldc, A, B, C};
    int threads = openblas_get_num_threads();
    if (threads < 1) threads = 1;
    const size_t blocks = ((size_t)M + SGEMM_BLOCK_ROWS - 1) / SGEMM_BLOCK_ROWS;
    openblas_set_num_threads(1);
    fpsim_parallel_for(blocks, 1, sgemm_blocks, &j, threads);
    openblas_set_num_threads(threads);
}
