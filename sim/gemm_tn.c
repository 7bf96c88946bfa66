/* gemm_tn.c: the CPU GEMM C = A B^T under an accumulation model, per-tensor or block-scaled.
 *
 * Operands are validated (exact in their format), decoded once into terms, and every output
 * element is then computed independently by the scalar model of gemm_model.c from its row of A
 * and its row of B (both K-contiguous: the "TN" layout). Rows of C are split among threads with
 * fpsim_parallel_for; since no sum crosses elements, the bits are the same for any thread count.
 * The fp32 model calls the BLAS sgemm (OpenBLAS), whose order is its own. */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>

#include "fpsim_gemm.h"
#include "fpsim_parallel.h"
#include "fpsim_sgemm.h"
#include "gemm_terms.h"

typedef struct gemm_job {
    float *C;
    const float *A, *B;
    size_t M, N, K;
    const fpsim_accum *acc;
    float scale_a, scale_b;                /* per-tensor scales */
    const fpsim_gemm_scales *sa, *sb;       /* block scales (NULL: per-tensor) */
    const fpsim_gemm_term *ta, *tb;         /* decoded A and B (tensor-core models) */
    int mbits_sum;
} gemm_job;

enum { SCALE_BLOCK_K = 128 };

static int is_tensor_core(const fpsim_accum *acc)
{
    return acc->kind == FPSIM_ACCUM_HOPPER_QGMMA || acc->kind == FPSIM_ACCUM_HOPPER_HGMMA ||
           acc->kind == FPSIM_ACCUM_MMA_SYNC_FP8;
}

/* One output element with per-tensor scales. */
static float element_per_tensor(const gemm_job *j, size_t i, size_t n)
{
    const float *a = j->A + i * j->K, *b = j->B + n * j->K;
    switch (j->acc->kind) {
    case FPSIM_ACCUM_FP64: {
        /* Exact reference: the scale product is exact in double (24 x 24 bits), one rounding to
         * double for the product with the sum, one to fp32. */
        double s = (double)j->scale_a * (double)j->scale_b;
        return (float)(fpsim_gemm_dot_fp64(a, b, j->K) * s);
    }
    case FPSIM_ACCUM_FP32_SEQ:
        return fpsim_gemm_epilogue(fpsim_gemm_dot_fp32_seq_split(a, b, j->K, j->acc->splitk), j->scale_a,
                                   j->scale_b);
    case FPSIM_ACCUM_FP32_BLAS: /* computed by sgemm before; only the epilogue here */
        return fpsim_gemm_epilogue(j->C[i * j->N + n], j->scale_a, j->scale_b);
    default: {
        float acc = fpsim_gemm_dot_terms(j->acc, j->ta + i * j->K, j->tb + n * j->K, j->K, j->mbits_sum);
        return fpsim_gemm_epilogue(acc, j->scale_a, j->scale_b);
    }
    }
}

/* One output element with block scales: per 128-K block kb, the partial dot product (a fresh
 * chain for the tensor-core models, i.e. promotion every 128) folded into an fp32 accumulator
 * with sa(i,kb), sb(n,kb) in the model's fold order; fp64 folds exactly and rounds once. */
static float element_block_scaled(const gemm_job *j, size_t i, size_t n)
{
    size_t L = (j->K + SCALE_BLOCK_K - 1) / SCALE_BLOCK_K;
    const float *sa = j->sa->data + (i / (size_t)j->sa->rows_per_block) * L;
    const float *sb = j->sb->data + (n / (size_t)j->sb->rows_per_block) * L;
    const float *a = j->A + i * j->K, *b = j->B + n * j->K;
    fpsim_fold fold = j->acc->fold;
    if (fold == FPSIM_FOLD_AUTO) /* cuBLASLt 13.1 on sm_90, measured: see fpsim_fold */
        fold = j->sa->rows_per_block == 1 && j->sb->rows_per_block == 1 ? FPSIM_FOLD_MULB_FMA : FPSIM_FOLD_FMA;
    /* Split-K (cuBLASLt's heuristic for small outputs): chunks of whole 128-blocks, each folded
     * from zero, the fp32 partials summed in order. Measured on the H200 (cuBLASLt 13.1, 64x64x8192,
     * S = 3): VEC128 x VEC128 cuts K like the per-tensor kernels (unit 128: 22, 22, 20 blocks);
     * with a BLK128x128 operand (the tile-20 kernel) the unit is 512, four scale blocks (24, 24, 16). */
    size_t blocks_per_chunk = L;
    if (j->acc->splitk > 1) {
        size_t unit = j->sa->rows_per_block == 1 && j->sb->rows_per_block == 1 ? FPSIM_SPLITK_UNIT
                                                                                : FPSIM_SPLITK_UNIT_BLK128;
        blocks_per_chunk = fpsim_gemm_splitk_chunk(j->K, j->acc->splitk, unit) / SCALE_BLOCK_K;
    }
    double exact = 0.0;
    float total = 0.0f, acc = 0.0f;
    for (size_t kb = 0; kb < L; kb++) {
        if (kb && kb % blocks_per_chunk == 0) {
            total = total + acc;
            acc = 0.0f;
        }
        size_t k0 = kb * SCALE_BLOCK_K;
        size_t len = j->K - k0 < SCALE_BLOCK_K ? j->K - k0 : SCALE_BLOCK_K;
        switch (j->acc->kind) {
        case FPSIM_ACCUM_FP64:
            exact += (double)sa[kb] * (double)sb[kb] * fpsim_gemm_dot_fp64(a + k0, b + k0, len);
            break;
        case FPSIM_ACCUM_FP32_SEQ:
        case FPSIM_ACCUM_FP32_BLAS:
            acc = fpsim_gemm_fold(fold, acc, fpsim_gemm_dot_fp32_seq(a + k0, b + k0, len), sa[kb], sb[kb]);
            break;
        default: {
            float r = fpsim_gemm_chain_terms(j->acc, 0.0f, j->ta + i * j->K + k0, j->tb + n * j->K + k0, len,
                                             j->mbits_sum);
            acc = fpsim_gemm_fold(fold, acc, r, sa[kb], sb[kb]);
        }
        }
    }
    if (j->acc->kind == FPSIM_ACCUM_FP64) return (float)exact;
    return blocks_per_chunk < L ? total + acc : acc;
}

static void gemm_rows(void *ctx, size_t begin, size_t end)
{
    const gemm_job *j = ctx;
    for (size_t i = begin; i < end; i++)
        for (size_t n = 0; n < j->N; n++)
            j->C[i * j->N + n] = j->sa ? element_block_scaled(j, i, n) : element_per_tensor(j, i, n);
}

static fpsim_gemm_term *decode_all(const float *x, size_t count, const fpsim_gemm_fmt *f)
{
    fpsim_gemm_term *t = malloc((count ? count : 1) * sizeof *t);
    if (t)
        for (size_t i = 0; i < count; i++) t[i] = fpsim_gemm_term_decode(x[i], f);
    return t;
}

static int is_fp8(fpsim_format_id f)
{
    return f == FPSIM_E4M3 || f == FPSIM_E5M2;
}

static int is_half(fpsim_format_id f)
{
    return f == FPSIM_BF16 || f == FPSIM_F16;
}

static fpsim_status gemm_run(float *C, const float *A, const float *B, size_t M, size_t N, size_t K,
                             const fpsim_accum *acc, const fpsim_gemm_args *args)
{
    if (!C || !A || !B || !acc || !args) return fpsim_fail(FPSIM_EINVAL, "gemm: NULL argument");
    if (M == 0 || N == 0 || K == 0) return fpsim_fail(FPSIM_ESHAPE, "gemm: empty shape M=%zu N=%zu K=%zu", M, N, K);
    fpsim_format_id fa = args->fmt_a, fb = args->fmt_b;
    const fpsim_gemm_scales *sa = args->sa, *sb = args->sb;
    int threads = args->threads;
    int f32_in = fa == FPSIM_GEMM_IN_F32 || fb == FPSIM_GEMM_IN_F32;
    if ((!f32_in && ((!is_fp8(fa) && !is_half(fa)) || (!is_fp8(fb) && !is_half(fb)))) ||
        (f32_in && fa != fb))
        return fpsim_fail(FPSIM_EINVAL, "gemm: input formats must be e4m3, e5m2, bf16, f16 (or f32 for both)");
    if ((acc->kind == FPSIM_ACCUM_HOPPER_QGMMA || acc->kind == FPSIM_ACCUM_MMA_SYNC_FP8) && !(is_fp8(fa) && is_fp8(fb)))
        return fpsim_fail(FPSIM_EINVAL, "gemm: model %s takes FP8 inputs (e4m3 or e5m2)", acc->name);
    if (acc->kind == FPSIM_ACCUM_HOPPER_HGMMA && !(is_half(fa) && fa == fb))
        return fpsim_fail(FPSIM_EINVAL, "gemm: model %s takes bf16 or f16 inputs (both the same)", acc->name);
    if (!sa != !sb) return fpsim_fail(FPSIM_EINVAL, "gemm: block scales for one operand only");
    if (acc->splitk > 1 && acc->kind == FPSIM_ACCUM_FP32_BLAS)
        return fpsim_fail(FPSIM_EINVAL, "gemm: splitk does not apply to the BLAS model; use fp32:seq,splitk=%d",
                          acc->splitk);
    if (acc->splitk > 1 && acc->kind == FPSIM_ACCUM_FP64) /* the reference: one exact-order sum */
        return fpsim_fail(FPSIM_EINVAL, "gemm: splitk does not apply to the fp64 reference");
    if (sa) {
        if (!sa->data || !sb->data || (sa->rows_per_block != 1 && sa->rows_per_block != 128) ||
            (sb->rows_per_block != 1 && sb->rows_per_block != 128))
            return fpsim_fail(FPSIM_EINVAL, "gemm: block scales need data and rows_per_block 1 (VEC128) or 128 "
                              "(BLK128x128)");
        if (acc->kind == FPSIM_ACCUM_HOPPER_QGMMA && acc->promote != SCALE_BLOCK_K)
            return fpsim_fail(FPSIM_EINVAL, "gemm: block-scaled FP8 GEMMs promote every 128 K-elements (the scale "
                              "block); model %s does not (cuBLASLt and PyTorch refuse fast accumulation here)",
                              acc->name);
    }
    if (!f32_in) {
        fpsim_status st = fpsim_gemm_check_exact(A, M * K, fa, "A");
        if (st) return st;
        st = fpsim_gemm_check_exact(B, N * K, fb, "B");
        if (st) return st;
    }
    float scale_a = args->scale_a, scale_b = args->scale_b;

    gemm_job j = {C, A, B, M, N, K, acc, scale_a, scale_b, sa, sb, NULL, NULL, 0};
    fpsim_gemm_term *ta = NULL, *tb = NULL;
    if (is_tensor_core(acc)) {
        fpsim_gemm_fmt pa, pb;
        fpsim_gemm_decode_format(acc, fa, &pa);
        fpsim_gemm_decode_format(acc, fb, &pb);
        ta = decode_all(A, M * K, &pa);
        tb = decode_all(B, N * K, &pb);
        if (!ta || !tb) {
            free(ta);
            free(tb);
            return fpsim_fail(FPSIM_ENOMEM, "gemm: out of memory decoding %zu x %zu and %zu x %zu operands", M, K, N, K);
        }
        j.ta = ta;
        j.tb = tb;
        j.mbits_sum = pa.mbits + pb.mbits;
    }
    if (acc->kind == FPSIM_ACCUM_FP32_BLAS && !sa)
        fpsim_sgemm(CblasNoTrans, CblasTrans, (int)M, (int)N, (int)K, A, (int)K, B, (int)K, C, (int)N);
    if (threads <= 0) threads = fpsim_threads_default();
    size_t grain = 1 + 65536 / (N * K + 1); /* rows per chunk: ~64K products at least */
    fpsim_status st = fpsim_parallel_for(M, grain, gemm_rows, &j, threads);
    free(ta);
    free(tb);
    return st;
}

fpsim_status fpsim_gemm_tn_ex(float *C, const float *A, const float *B, size_t M, size_t N, size_t K,
                              const fpsim_accum *accum, const fpsim_gemm_args *args)
{
    return gemm_run(C, A, B, M, N, K, accum, args);
}

fpsim_status fpsim_gemm_tn(float *C, const float *A, const float *B, size_t M, size_t N, size_t K,
                           const fpsim_accum *accum, float scale_a, float scale_b, fpsim_format_id in_format,
                           int threads)
{
    fpsim_gemm_args args = {in_format, in_format, scale_a, scale_b, NULL, NULL, threads};
    return gemm_run(C, A, B, M, N, K, accum, &args);
}

fpsim_status fpsim_gemm_tn_blockscaled(float *C, const float *A, const float *B, size_t M, size_t N, size_t K,
                                       const fpsim_accum *accum, const fpsim_gemm_scales *sa,
                                       const fpsim_gemm_scales *sb, fpsim_format_id in_format, int threads)
{
    if (!sa || !sb) return fpsim_fail(FPSIM_EINVAL, "gemm: block-scaled GEMM without scales");
    fpsim_gemm_args args = {in_format, in_format, 1.0f, 1.0f, sa, sb, threads};
    return gemm_run(C, A, B, M, N, K, accum, &args);
}
