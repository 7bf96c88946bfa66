/* fpsim_numerics.h: the engine hook that every operation of the model goes through.
 *
 * The model (fpsim_model.h) stores and computes everything in double, so that one code path is
 * also the FP64 reference. What makes a run "FP32" or "FP8 recipe X" is the engine passed in:
 *
 *   - every GEMM of every site, pass and layer is handed to engine->gemm() as an
 *     fpsim_gemm_call (operands in double, row-major, with the BLAS transpose convention below);
 *     the engine quantizes the operands as its recipe says, multiplies, and writes C as the
 *     values the emulated kernel would output (e.g. float32 results of an sgemm, as doubles);
 *   - the output of every non-GEMM operation (RMSNorm, RoPE, attention core, softmax, SiLU*mul,
 *     residual adds, embedding gather and scatter, loss and its gradient, norm-weight gradients)
 *     is rounded to act_round (FPSIM_ACT_FP64: not at all, FP32: to float, BF16: to bfloat16),
 *     per layer if act_round_at is set. The arithmetic inside such an op is double, then rounded
 *     once; that is the "FP32 compute, BF16 output" model of a fused kernel, not a bit-exact
 *     emulation of one particular FP32 kernel.
 *
 * GEMM convention (the same in every pass; row-major storage, like cblas with CblasRowMajor):
 *
 *     C (M x N)  =  op(A) (M x K)  *  op(B) (K x N)        [C += ... when accumulate != 0]
 *
 *   op(A) = A when a.trans == 0: A is stored M x K, row i at A + i*a.ld (a.ld >= K);
 *         = A^T when a.trans == 1: A is stored K x M, row k at A + k*a.ld (a.ld >= M).
 *   op(B) = B when b.trans == 0: B is stored K x N (b.ld >= N);
 *         = B^T when b.trans == 1: B is stored N x K (b.ld >= K).
 *   C is stored M x N with row stride ldc (>= N). K is always the reduction dimension.
 *
 *   So, for a quantizer that blocks along the reduction dimension K: an operand with trans == 0
 *   (A) or trans == 1 (B) has K contiguous in memory ("rowwise" blocks of the stored matrix);
 *   an operand with trans == 1 (A) or trans == 0 (B) has K along its stored columns
 *   ("columnwise" blocks of the stored matrix, i.e. the transposed copy that Transformer Engine
 *   keeps for the backward).
 *
 * The three passes of a linear layer Y = X W^T, with X (T tokens x in), W (out x in), Y (T x out):
 *
 *   pass   computes        M    N    K    A (role, trans, stored)          B (role, trans, stored)
 *   FPROP  Y  = X W^T      T    out  in   X  (ACTIVATION, 0, T x in)        W  (WEIGHT, 1, out x in)
 *   DGRAD  dX = dY W       T    in   out  dY (GRAD,       0, T x out)       W  (WEIGHT, 0, out x in)
 *   WGRAD  dW = dY^T X     out  in   T    dY (GRAD,       1, T x out)       X  (ACTIVATION, 0, T x in)
 *
 *   FPROP reduces over `in`: X rowwise, W rowwise.
 *   DGRAD reduces over `out`: dY rowwise, W columnwise.
 *   WGRAD reduces over tokens: dY columnwise, X columnwise.
 *
 * The model never sets accumulate (each call overwrites its C: weight gradients are written,
 * not added); engines still honour it so that gradient accumulation can be added later.
 *
 * Sites and the `layer` field: the five GEMM sites of a Llama block and the head:
 *   QKV       fused [q; k; v] projection, W is ((heads + 2 kv_heads) * head_dim) x d
 *   ATTN_OUT  attention output projection, W is d x d
 *   GATE_UP   fused [gate; up] projection of the SwiGLU MLP, W is (2 ffn) x d
 *   DOWN      MLP down projection, W is d x ffn
 *   LM_HEAD   untied output head, W is vocab x d; its layer is `layers` (one past the last block)
 * Layer numbers in act_round_at(): -1 embedding, 0..layers-1 the blocks, `layers` the final
 * norm, head and loss. */
#ifndef FPSIM_NUMERICS_H
#define FPSIM_NUMERICS_H

#include <stddef.h>

#include "fpsim_recipe.h"
#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpsim_site {
    FPSIM_SITE_QKV = 0,
    FPSIM_SITE_ATTN_OUT,
    FPSIM_SITE_GATE_UP,
    FPSIM_SITE_DOWN,
    FPSIM_SITE_LM_HEAD,
    FPSIM_SITE_COUNT
} fpsim_site;

/* fpsim_pass (FPSIM_PASS_FPROP, _DGRAD, _WGRAD) and fpsim_role (FPSIM_ROLE_WEIGHT, _ACT, _GRAD),
 * with fpsim_pass_name() and fpsim_role_name(), come from the recipes in formats/fpsim_recipe.h:
 * a recipe and the model speak of the same passes and roles. */

/* Rounding of the outputs of non-GEMM operations. */
enum {
    FPSIM_ACT_FP64 = 0, /* no rounding: the reference */
    FPSIM_ACT_FP32 = 1, /* round to nearest float32, ties to even (a C cast on IEEE hardware) */
    FPSIM_ACT_BF16 = 2, /* round to nearest bfloat16, ties to even, overflow to Inf (PyTorch) */
    FPSIM_ACT_COUNT
};

/* Names of sites and activation roundings ("qkv", "attn_out", "gate_up", "down", "lm_head";
 * "fp64", "fp32", "bf16"). NULL when out of range. */
const char *fpsim_site_name(int site);
const char *fpsim_act_round_name(int act_round);

/* One GEMM operand: see the convention at the top of this file. */
typedef struct fpsim_gemm_operand {
    const double *data; /* row-major */
    size_t ld;          /* row stride of the stored matrix, in elements */
    int trans;          /* 0: used as stored; 1: used transposed */
    fpsim_role role;
} fpsim_gemm_operand;

typedef struct fpsim_gemm_call {
    int layer;          /* 0..layers-1 for block sites, `layers` for LM_HEAD */
    fpsim_site site;
    fpsim_pass pass;
    size_t M, N, K;     /* C is M x N, K is the reduction dimension */
    fpsim_gemm_operand a, b;
    double *c;          /* output, row-major M x N */
    size_t ldc;         /* row stride of C (>= N) */
    int accumulate;     /* 0: C = op(A) op(B); 1: C += op(A) op(B) */
} fpsim_gemm_call;

/* An engine: a GEMM hook plus the rounding of everything else. Plain data; copy freely. */
typedef struct fpsim_numerics {
    const char *name;   /* for messages and file attributes */
    void *ctx;          /* passed back to the hooks; owned by whoever built the engine */
    /* Required. Returns FPSIM_OK or a status with fpsim_fail() message (the model stops and
     * returns it). Must not keep pointers to the operands after returning. */
    fpsim_status (*gemm)(void *ctx, const fpsim_gemm_call *call);
    int act_round;      /* FPSIM_ACT_*: rounding of non-GEMM outputs, all layers */
    /* Optional per-layer override of act_round (layer numbering at the top of this file);
     * NULL: act_round everywhere. */
    int (*act_round_at)(void *ctx, int layer);
} fpsim_numerics;

/* The rounding that applies to non-GEMM outputs of `layer` under engine `nx`. */
int fpsim_numerics_act_round(const fpsim_numerics *nx, int layer);

/* Round x[0..n) in place to act_round (FPSIM_ACT_FP64: unchanged). */
void fpsim_act_round_array(double *x, size_t n, int act_round);

/* out[i] = in[i] rounded to act_round, as float: FPSIM_ACT_BF16 the bfloat16 value (exact in
 * float), otherwise the float nearest in[i] (RNE). Vectorized; the same bits as the scalar
 * roundings below. */
void fpsim_act_round_to_float(float *out, const double *in, size_t n, int act_round);

/* Scalar roundings used above, exact: round-to-nearest-even of a double to the nearest float32
 * value or bfloat16 value (subnormals kept, overflow to +-Inf, NaN stays NaN). */
double fpsim_f64_round_f32(double x);
double fpsim_f64_round_bf16(double x);

/* Check a call against the convention (sizes nonzero, ld large enough, pointers set). Engines
 * may call it first; returns FPSIM_ESHAPE / FPSIM_EINVAL with a message naming the field. */
fpsim_status fpsim_gemm_call_check(const fpsim_gemm_call *call);

/* The two plain engines (numerics_plain.c):
 *   fp64: cblas_dgemm on the operands as given, non-GEMM outputs not rounded (the reference).
 *   fp32: operands rounded to float (RNE), sgemm (fpsim_sgemm), C = the float results (with accumulate:
 *         C = fl32(C + product)); non-GEMM outputs rounded to float.
 * Both are deterministic on any thread count: see numerics_plain.c for how. ctx is NULL. */
fpsim_numerics fpsim_numerics_fp64(void);
fpsim_numerics fpsim_numerics_fp32(void);

#ifdef __cplusplus
}
#endif
#endif
