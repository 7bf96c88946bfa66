/* gemm_layout.c: fpsim_gemm_blas: any BLAS row-major layout -> the TN layout of fpsim_gemm_tn_ex.
 * Copying is exact (values move, nothing rounds), so the bits are those of the TN call. */
#include <stdlib.h>
#include <string.h>

#include "fpsim_gemm.h"

/* Rows x K, K contiguous, from a stored matrix: `kmajor` = stored rows x K with stride ld,
 * else stored K x rows with stride ld (gathered). */
static float *to_k_contiguous(const float *x, size_t ld, int kmajor, size_t rows, size_t K)
{
    float *t = malloc(rows * K * sizeof *t);
    if (!t) return NULL;
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < K; k++) t[r * K + k] = kmajor ? x[r * ld + k] : x[k * ld + r];
    return t;
}

fpsim_status fpsim_gemm_blas(float *C, size_t ldc, const float *A, size_t lda, int trans_a, const float *B,
                             size_t ldb, int trans_b, size_t M, size_t N, size_t K, const fpsim_accum *accum,
                             const fpsim_gemm_args *args)
{
    if (!C || !A || !B || !accum || !args) return fpsim_fail(FPSIM_EINVAL, "gemm: NULL argument");
    if (ldc < N || lda < (trans_a ? M : K) || ldb < (trans_b ? K : N))
        return fpsim_fail(FPSIM_ESHAPE, "gemm: leading dimensions too small (lda %zu, ldb %zu, ldc %zu for %zu x %zu "
                          "x %zu)", lda, ldb, ldc, M, N, K);
    /* op(A) row i is A row i (no transpose); op(B)^T row j is B row j when B is stored N x K. */
    float *ta = to_k_contiguous(A, lda, !trans_a, M, K);
    float *tb = to_k_contiguous(B, ldb, trans_b, N, K);
    float *tc = ldc == N ? C : malloc(M * N * sizeof *tc);
    fpsim_status st;
    if (!ta || !tb || !tc) {
        st = fpsim_fail(FPSIM_ENOMEM, "gemm: out of memory for a %zu x %zu x %zu GEMM", M, N, K);
    } else {
        st = fpsim_gemm_tn_ex(tc, ta, tb, M, N, K, accum, args);
        if (!st && tc != C)
            for (size_t i = 0; i < M; i++) memcpy(C + i * ldc, tc + i * N, N * sizeof *C);
    }
    free(ta);
    free(tb);
    if (tc != C) free(tc);
    return st;
}
