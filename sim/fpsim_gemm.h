/* fpsim_gemm.h: GEMM with a chosen accumulation model (how a GPU sums the products).
 *
 * Quantized operands are half of a low-precision GEMM's numerics; the other half is how the
 * tensor cores add the products. The models here are bit-level descriptions of Hopper (sm_90)
 * tensor-core accumulation, measured on an H200 (docs/gemm.md, gpu-numerics.md section 3):
 *
 *   fp64                    exact products, summed in double in increasing k, rounded once to
 *                           fp32 (exact for e4m3 inputs up to K = 2^17: every product is a
 *                           multiple of 2^-18 below 2^18, so the double sum never rounds).
 *   fp32                    BLAS sgemm (OpenBLAS; its own summation order).
 *   fp32:seq                fp32 multiply then fp32 add, sequential in increasing k (no FMA).
 *   hopper-qgmma:fast       wgmma FP8 (SASS QGMMA): 32-product blocks, every term and the
 *                           incoming accumulator truncated to 13 fraction bits below the block's
 *                           largest exponent, exact integer sum, result truncated to 14
 *                           significant bits; one chain over all of K (cuBLASLt FAST_ACCUM=1).
 *   hopper-qgmma:promote=N  a fresh QGMMA chain every N K-elements (N a multiple of 32), each
 *                           chain added into an fp32 accumulator with one round-to-nearest add
 *                           (cuBLASLt non-fast mode, DeepSeek, CUTLASS 2xAcc: N = 128).
 *   hopper-qgmma            = hopper-qgmma:promote=128.
 *   hopper-hgmma            wgmma BF16/FP16 (HGMMA): 16-product blocks, grid 2^(E-25), result
 *                           truncated (RZ) to 24 bits, one chain over K.
 *   mma-sync-fp8            mma.sync FP8 on sm_90, which ptxas lowers to FP8->FP16 unpacking and
 *                           two HMMA.16816 per k = 32: the HGMMA rule on 16-product blocks.
 *
 * Epilogue with per-tensor scales (cuBLASLt SCALAR_32F, measured on the H200 via
 * torch._scaled_mm): D = acc * fp32(scale_a * scale_b): the scale product rounded to fp32
 * first, then one fp32 multiply. The fp64 model applies the scales exactly and rounds once.
 *
 * Block-scaled operands (cuBLASLt VEC128_32F: one fp32 per 1x128 along K; BLK128x128_32F: one
 * per 128x128 tile) fold each promoted chain into the fp32 accumulator with its block scales,
 * in the order cuBLASLt uses (measured on the H200, see fpsim_fold); other orders selectable.
 *
 * Split-K (",splitk=S"): what cuBLASLt's heuristic picks for small outputs with long K (seen:
 * 128x128x4096 bf16 and 64x64x8192 FP8, per-tensor and block-scaled, 3 splits, reduction scheme
 * COMPUTE_TYPE); the chunking rule per scale mode is in fpsim_accum.splitk.
 *
 * Everything here is deterministic: each output element is computed by one thread from its own
 * row of A and row of B in a fixed order, so any thread count gives the same bits. */
#ifndef FPSIM_GEMM_H
#define FPSIM_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_core_types.h"
#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpsim_accum_kind {
    FPSIM_ACCUM_FP64 = 0,
    FPSIM_ACCUM_FP32_BLAS,
    FPSIM_ACCUM_FP32_SEQ,
    FPSIM_ACCUM_HOPPER_QGMMA,
    FPSIM_ACCUM_HOPPER_HGMMA,
    FPSIM_ACCUM_MMA_SYNC_FP8
} fpsim_accum_kind;

/* How a promoted chain result r (fp32, 14 significant bits) and the block scales sa (A's) and sb
 * (B's) enter the fp32 accumulator acc in block-scaled GEMMs. Each is one compiled form of
 * `acc += sa * sb * r`. Measured with cuBLASLt 13.1 on the H200 (docs/gemm.md): VEC128 x VEC128
 * uses MULB_FMA; VEC128 x BLK128x128 and BLK128x128 x VEC128 use FMA, each 100% bit-exact. */
typedef enum fpsim_fold {
    FPSIM_FOLD_AUTO = 0,      /* what cuBLASLt does for the pair of scale modes (measured, above) */
    FPSIM_FOLD_FMA,           /* s = fp32(sa*sb); acc = fma(r, s, acc)          (FMUL, FFMA) */
    FPSIM_FOLD_MUL_ADD,       /* s = fp32(sa*sb); acc = acc + fp32(r*s)         (2 FMUL, FADD) */
    FPSIM_FOLD_MUL_MUL_ADD,   /* acc = acc + fp32(fp32(r*sa)*sb)                (2 FMUL, FADD) */
    FPSIM_FOLD_MULA_FMA,      /* acc = fma(fp32(r*sa), sb, acc)                 (FMUL, FFMA) */
    FPSIM_FOLD_MULB_FMA,      /* acc = fma(fp32(r*sb), sa, acc)                 (FMUL, FFMA) */
    FPSIM_FOLD_COUNT
} fpsim_fold;

/* An accumulation model: parsed from a name by fpsim_accum_parse(), plain data otherwise. */
typedef struct fpsim_accum {
    fpsim_accum_kind kind;
    int block;        /* products per tensor-core block (32 QGMMA, 16 HGMMA/HMMA), 0 if none */
    int grid_bits;    /* terms truncated to multiples of 2^(E - grid_bits) (13 or 25) */
    int result_bits;  /* block result truncated to this many significant bits (14 or 24) */
    int promote;      /* K-elements per chain before promotion into fp32; 0 = never (fast) */
    fpsim_fold fold;  /* block-scaled fold order (used only with block scales) */
    int splitk;       /* > 1: K cut into splitk chunks of ceil(K / (splitk*U)) * U elements, each
                         reduced by the model from zero, the partial fp32 results summed in order
                         (cuBLASLt split-K with reduction scheme COMPUTE_TYPE, measured on the H200):
                         U = 128, or 512 in block-scaled GEMMs with a BLK128x128 operand; the fp64
                         reference ignores it, the BLAS fp32 model refuses it */
    char name[64];    /* canonical name, e.g. "hopper-qgmma:promote=128" */
} fpsim_accum;

/* Parse a model name (see the list above), optionally followed by ",fold=ORDER" (auto, fma,
 * mul-add, mul-mul-add, mula-fma, mulb-fma) and ",splitk=S". Unknown names fail with
 * FPSIM_ENAME and a message listing the valid ones. */
fpsim_status fpsim_accum_parse(fpsim_accum *out, const char *name);

/* The valid model names, one line, for help and error messages. */
const char *fpsim_accum_names(void);

/* Name of a fold order ("auto", "fma", ...), and the inverse (-1 if unknown). */
const char *fpsim_fold_name(fpsim_fold fold);
int fpsim_fold_find(const char *name);

/* Pass as in_format when the inputs are arbitrary fp32 (only the fp32 and fp64 models accept it). */
#define FPSIM_GEMM_IN_F32 ((fpsim_format_id)FPSIM_FORMAT_COUNT)

/* C (M x N, row-major) = A (M x K, row-major) * B (N x K, row-major)^T, the "TN" layout of
 * cuBLASLt FP8 GEMMs, under accumulation model `accum`, with per-tensor scales applied as the
 * hardware does (see the epilogue above). Every value of A and B must be exact in in_format
 * (e4m3, e5m2, bf16 or f16; NaN allowed, Inf only where the format has it); otherwise
 * FPSIM_EDATA names the first offending element. threads <= 0 means fpsim_threads_default(). */
fpsim_status fpsim_gemm_tn(float *C, const float *A, const float *B, size_t M, size_t N, size_t K,
                           const fpsim_accum *accum, float scale_a, float scale_b,
                           fpsim_format_id in_format, int threads);

/* Block scales of one operand, row-major (rows x ceil(K/128)):
 *   rows_per_block = 1:   VEC128_32F: one factor per row and 128-element K block (rows = M or N)
 *   rows_per_block = 128: BLK128x128_32F: one factor per 128x128 tile (rows = ceil(M/128)) */
typedef struct fpsim_gemm_scales {
    const float *data;
    int rows_per_block;
} fpsim_gemm_scales;

/* The most chunks split-K can cut K into: ceil(K / U), U as in fpsim_accum.splitk (512 when a
 * block-scaled operand is BLK128x128, else 128; sa, sb NULL for per-tensor scales). Any splitk
 * above it gives the bits of splitk = that count, so a caller that knows K before the run
 * refuses it (fpsim gemm does). */
size_t fpsim_gemm_splitk_max(size_t K, const fpsim_gemm_scales *sa, const fpsim_gemm_scales *sb);

/* As fpsim_gemm_tn, with block-scaled operands: C[i][j] = sum over 128-K blocks kb of
 * sa(i,kb) * sb(j,kb) * (partial dot product of block kb). With hopper-qgmma the partial is a
 * QGMMA chain of 128 K-elements (promote must be 128) folded as accum->fold says; other models
 * fold exactly as written in their own precision (fp64: exact, rounded once). */
fpsim_status fpsim_gemm_tn_blockscaled(float *C, const float *A, const float *B, size_t M, size_t N,
                                       size_t K, const fpsim_accum *accum, const fpsim_gemm_scales *sa,
                                       const fpsim_gemm_scales *sb, fpsim_format_id in_format,
                                       int threads);

/* The general form: operand formats may differ (e4m3 x e5m2, as cuBLASLt allows), and the
 * scales are per-tensor (sa == sb == NULL) or per block. fpsim_gemm_tn and
 * fpsim_gemm_tn_blockscaled are this with fmt_a == fmt_b. */
typedef struct fpsim_gemm_args {
    fpsim_format_id fmt_a, fmt_b;
    float scale_a, scale_b;              /* per-tensor scales (ignored with block scales) */
    const fpsim_gemm_scales *sa, *sb;    /* block scales, or both NULL */
    int threads;                         /* <= 0: fpsim_threads_default() */
} fpsim_gemm_args;

fpsim_status fpsim_gemm_tn_ex(float *C, const float *A, const float *B, size_t M, size_t N, size_t K,
                              const fpsim_accum *accum, const fpsim_gemm_args *args);

/* Any BLAS layout (row-major, like cblas with CblasRowMajor and the replay's fpsim_gemm_call):
 *   C (M x N, row stride ldc) = op(A) (M x K) * op(B) (K x N),
 *   op(A) = A (stored M x K, row stride lda) if !trans_a, else A^T (A stored K x M);
 *   op(B) = B (stored K x N, row stride ldb) if !trans_b, else B^T (B stored N x K).
 * The operands are copied into the K-contiguous TN layout and passed to fpsim_gemm_tn_ex, so the
 * bits are those of fpsim_gemm_tn_ex on op(A) and op(B)^T. Block scales in args index (row of
 * op(A) or column of op(B), 128-block of K) as in fpsim_gemm_scales, whatever the storage. */
fpsim_status fpsim_gemm_blas(float *C, size_t ldc, const float *A, size_t lda, int trans_a, const float *B,
                             size_t ldb, int trans_b, size_t M, size_t N, size_t K, const fpsim_accum *accum,
                             const fpsim_gemm_args *args);

/* Check that every value of x is exact in `fmt` (one of e4m3, e5m2, bf16, f16). On failure
 * returns FPSIM_EDATA naming `what`, the index and the value of the first offender. */
fpsim_status fpsim_gemm_check_exact(const float *x, size_t n, fpsim_format_id fmt, const char *what);

/* ---- Scalar models (one output element), used by the GEMM and by tests. ---- */

/* One tensor-core block: c plus up to `n` products a[i]*b[i], under the block rule of `accum`
 * (QGMMA or HGMMA: align to the largest exponent, truncate terms by magnitude to the grid, exact
 * integer sum, truncate to result_bits; zero gives +0; NaN, or +Inf with -Inf, gives NaN).
 * a and b hold values exact in their formats (fmt_a, fmt_b). Returns the fp32 result. */
float fpsim_gemm_block(const fpsim_accum *accum, float c, const float *a, const float *b, int n,
                       fpsim_format_id fmt_a, fpsim_format_id fmt_b);

/* One output element: the dot product of a[0..K) and b[0..K) (contiguous) under `accum`,
 * before any epilogue scaling (fp32 accumulator value; fp64 model: the double sum). */
double fpsim_gemm_dot(const fpsim_accum *accum, const float *a, const float *b, size_t K,
                      fpsim_format_id fmt_a, fpsim_format_id fmt_b);

/* The per-tensor epilogue: fp32(acc * fp32(scale_a * scale_b)). */
float fpsim_gemm_epilogue(float acc, float scale_a, float scale_b);

/* Fold one promoted chain result r into acc with block scales sa, sb in order `fold` (not AUTO). */
float fpsim_gemm_fold(fpsim_fold fold, float acc, float r, float sa, float sb);

#ifdef __cplusplus
}
#endif
#endif
