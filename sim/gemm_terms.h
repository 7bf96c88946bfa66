/* gemm_terms.h: internal to sim/gemm_*.c: operands decoded for the tensor-core block rule.
 *
 * A term is one input value as (sign, e, integer significand m) with value = m * 2^(e - mbits):
 * e is the format's exponent (its emin for subnormals, which have no hidden bit), so a product's
 * exponent e_a + e_b is the one the hardware aligns on (gpu-numerics.md 3.2 step 1). Operands are
 * decoded once per GEMM and then read K-contiguous. */
#ifndef FPSIM_GEMM_TERMS_H
#define FPSIM_GEMM_TERMS_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_gemm.h"

enum { FPSIM_TERM_FINITE = 0, FPSIM_TERM_INF = 1, FPSIM_TERM_NAN = 2 };

typedef struct fpsim_gemm_term {
    int32_t m;   /* signed integer significand (0 for zeros; +-1 carries the sign of Inf/NaN) */
    int16_t e;   /* exponent of the leading significand bit position */
    int16_t cls; /* FPSIM_TERM_* */
} fpsim_gemm_term;

typedef struct fpsim_gemm_fmt {
    int mbits, emin;
    double max;
    int has_inf;
} fpsim_gemm_fmt;

/* Parameters of e4m3, e5m2, bf16, f16; 0 for any other format. */
int fpsim_gemm_format_params(fpsim_format_id fmt, fpsim_gemm_fmt *out);
/* The format an operand is decoded in under `acc` (mma-sync-fp8 decodes FP8 as f16). */
int fpsim_gemm_decode_format(const fpsim_accum *acc, fpsim_format_id in, fpsim_gemm_fmt *out);
fpsim_gemm_term fpsim_gemm_term_decode(float x, const fpsim_gemm_fmt *f);

/* The block rule on decoded terms (mbits_sum = mbits of a's format + b's). */
float fpsim_gemm_block_terms(const fpsim_accum *acc, float c, const fpsim_gemm_term *a, const fpsim_gemm_term *b,
                             int n, int mbits_sum);
/* Blocks of acc->block chained over K in increasing k, starting from c. */
float fpsim_gemm_chain_terms(const fpsim_accum *acc, float c, const fpsim_gemm_term *a, const fpsim_gemm_term *b,
                             size_t K, int mbits_sum);
/* A whole dot product of a tensor-core model, promotion included (no epilogue). */
float fpsim_gemm_dot_terms(const fpsim_accum *acc, const fpsim_gemm_term *a, const fpsim_gemm_term *b, size_t K,
                           int mbits_sum);
double fpsim_gemm_dot_fp64(const float *a, const float *b, size_t K);
float fpsim_gemm_dot_fp32_seq(const float *a, const float *b, size_t K);
float fpsim_gemm_dot_fp32_seq_split(const float *a, const float *b, size_t K, int splitk);
/* Elements per split-K chunk: ceil(K / (splitk*unit)) * unit. cuBLASLt 13.1 on sm_90, measured
 * on the H200: unit = 128 for per-tensor scales and VEC128 x VEC128, 512 (four scale blocks)
 * when an operand is BLK128x128 (fpsim_gemm_splitk_unit). */
size_t fpsim_gemm_splitk_chunk(size_t K, int splitk, size_t unit);
enum { FPSIM_SPLITK_UNIT = 128, FPSIM_SPLITK_UNIT_BLK128 = 512 };

#endif
