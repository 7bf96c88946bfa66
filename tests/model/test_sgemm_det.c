/* test_sgemm_det.c: fpsim_sgemm (sim/sgemm_det.c) gives the same bits on 1, 2 and 3 threads, on
 * shapes with partial row blocks and with every transpose, and its results are the product: each
 * element within a float-accumulation bound of the exact sum, computed here in long double from
 * the same float operands (an independent oracle; OpenBLAS's own threaded sgemm is not one, as it
 * may differ from its single-threaded self by the partition, which is what fpsim_sgemm removes). */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_sgemm.h"
#include "test_util.h"

void openblas_set_num_threads(int num_threads);

static float rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*s >> 40) / (double)(1ull << 24) - 0.5);
}

int main(void)
{
    static test_counter tc = TEST_COUNTER_INIT("fpsim_sgemm: thread count, transposes, values");
    const int shapes[][3] = {{1, 7, 5}, {63, 65, 33}, {64, 64, 64}, {130, 96, 257}, {257, 40, 700}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int tr = 0; tr < 4; tr++) {
            const int M = shapes[si][0], N = shapes[si][1], K = shapes[si][2];
            const CBLAS_TRANSPOSE ta = tr & 1 ? CblasTrans : CblasNoTrans,
                                  tb = tr & 2 ? CblasTrans : CblasNoTrans;
            const int lda = ta == CblasNoTrans ? K : M, ldb = tb == CblasNoTrans ? N : K;
            float *A = malloc(sizeof(float) * (size_t)M * (size_t)K),
                  *B = malloc(sizeof(float) * (size_t)K * (size_t)N);
            float *C[3];
            uint64_t s = 12345u + (uint64_t)si * 7u + (uint64_t)tr;
            for (int i = 0; i < M * K; i++)
                A[i] = rnd(&s);
            for (int i = 0; i < K * N; i++)
                B[i] = rnd(&s);
            for (int t = 0; t < 3; t++) {
                C[t] = malloc(sizeof(float) * (size_t)M * (size_t)N);
                openblas_set_num_threads(t + 1);
                fpsim_sgemm(ta, tb, M, N, K, A, lda, B, ldb, C[t], N);
            }
            openblas_set_num_threads(1);
            TEST_CHECK(&tc, memcmp(C[0], C[1], sizeof(float) * (size_t)M * (size_t)N) == 0,
                       "%dx%dx%d transposes %d: 1 and 2 threads differ", M, N, K, tr);
            TEST_CHECK(&tc, memcmp(C[0], C[2], sizeof(float) * (size_t)M * (size_t)N) == 0,
                       "%dx%dx%d transposes %d: 1 and 3 threads differ", M, N, K, tr);
            /* |fl(sum) - sum| <= K u sum |a b| (u = 2^-24), with room for any summation order */
            int bad = 0;
            for (int i = 0; i < M && !bad; i++)
                for (int j = 0; j < N && !bad; j++) {
                    long double exact = 0, mag = 0;
                    for (int k = 0; k < K; k++) {
                        const float a = ta == CblasNoTrans ? A[i * lda + k] : A[k * lda + i];
                        const float b = tb == CblasNoTrans ? B[k * ldb + j] : B[j * ldb + k];
                        exact += (long double)a * b;
                        mag += fabsl((long double)a * b);
                    }
                    bad = fabsl((long double)C[0][i * N + j] - exact) >
                          (long double)K * 0x1p-24L * mag + 1e-30L;
                }
            TEST_CHECK(&tc, !bad, "%dx%dx%d transposes %d: an element outside the error bound", M, N, K, tr);
            for (int t = 0; t < 3; t++)
                free(C[t]);
            free(A), free(B);
        }
    return test_summary(&tc);
}
