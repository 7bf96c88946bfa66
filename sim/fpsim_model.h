/* fpsim_model.h: a Llama-style decoder, forward and backward, written out in C (llm.c manner).
 *
 * One token's path, with the file that holds each step:
 *
 *   tokens (B, T)
 *     -> embedding gather wte[token]                  layer_embed.c      resid[0]   (N, C)
 *     -> for each block l (layer_block.c):
 *          ln1  = RMSNorm(x) * ln1w                    layer_rmsnorm.c               (N, C)
 *          qkv  = ln1 qkvw^T            [GEMM QKV]     layer_linear.c                (N, QKV)
 *          qkvr = RoPE(q), RoPE(k), v                  layer_attention.c             (N, QKV)
 *          atty = softmax(q k^T / sqrt(hd), causal) v  layer_attention.c             (N, C)
 *          res2 = x + atty attprojw^T   [GEMM ATTN_OUT]                              (N, C)
 *          ln2  = RMSNorm(res2) * ln2w                                               (N, C)
 *          gu   = ln2 gateupw^T         [GEMM GATE_UP] (gate | up)                   (N, 2F)
 *          h    = silu(gate) * up                      layer_swiglu.c                (N, F)
 *          out  = res2 + h downw^T      [GEMM DOWN]                      resid[l+1] (N, C)
 *     -> lnf = RMSNorm(resid[L]) * lnfw                layer_head.c                  (N, C)
 *     -> logits = lnf lmheadw^T         [GEMM LM_HEAD]                               (N, V)
 *     -> loss = mean over masked tokens of -log softmax(logits)[target]
 *
 * N = batch * seq tokens, C = d, QKV = (heads + 2 kv_heads) * head_dim, F = ffn, V = vocab,
 * head_dim = d / heads; kv head g serves query heads g*(heads/kv_heads) .. (g+1)*(heads/kv_heads)-1
 * (grouped-query attention; kv_heads == heads is plain multi-head attention).
 * RoPE is the "rotate half" form of Hugging Face Llama: within a head, element i (< hd/2) pairs with
 * i + hd/2, rotated by angle pos * rope_theta^(-2i/hd). No biases anywhere; the head is untied.
 *
 * Storage and arithmetic are double throughout; the fpsim_numerics engine passed to every call
 * decides what rounds (fpsim_numerics.h), so the same code is the FP64 reference and the FP32 or
 * low-precision candidate. Parameters are FP32 master weights: kept float32-representable by the
 * initializer and by AdamW (moments float32 too), whatever the engine.
 *
 * Every fallible function returns fpsim_status with an fpsim_fail() message; nothing prints. */
#ifndef FPSIM_MODEL_H
#define FPSIM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_numerics.h"
#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Configuration                                                                                */

typedef struct fpsim_model_config {
    int layers;        /* L, transformer blocks */
    int d;             /* C, model width */
    int heads;         /* query heads; head_dim = d / heads (even, for RoPE) */
    int kv_heads;      /* key/value heads, dividing heads */
    int ffn;           /* F, SwiGLU hidden width */
    int vocab;         /* V */
    int seq;           /* T, tokens per sequence */
    int batch;         /* B, sequences per batch */
    double rope_theta; /* RoPE base */
    double norm_eps;   /* RMSNorm epsilon */
    double init_std;   /* std of the normal init of matrices (output projections / sqrt(2L)) */
    uint64_t seed;     /* initialization seed */
} fpsim_model_config;

/* The default model: "layers=4,d=256,heads=4,kv_heads=4,ffn=768,vocab=128,seq=128,batch=4,
 * rope_theta=10000,eps=1e-5,init_std=0.02,seed=1234": every GEMM dimension a multiple of 128. */
fpsim_model_config fpsim_model_config_default(void);

/* Parse "key=value,key=value" over the defaults. Keys: layers d heads kv_heads ffn vocab seq batch
 * rope_theta eps init_std seed. kv_heads not given is heads (plain multi-head attention, as in the
 * default model), so "heads=2" alone is valid; grouped-query attention needs kv_heads. Unknown key
 * -> FPSIM_ENAME listing the keys; malformed value -> FPSIM_EINVAL. Then checks the result with
 * fpsim_model_config_check(cfg, block). */
fpsim_status fpsim_model_config_parse(fpsim_model_config *cfg, const char *spec, int block);

/* Validate: positive sizes, d % heads, heads % kv_heads, even head_dim, and (when block > 1)
 * every GEMM dimension a multiple of `block`: d, ffn, vocab, kv width kv_heads*head_dim, and the
 * token count batch*seq (the K of every WGRAD). FPSIM_ESHAPE names the dimension that fails. */
fpsim_status fpsim_model_config_check(const fpsim_model_config *cfg, int block);

/* Write the config as a spec string that fpsim_model_config_parse() reads back exactly. */
fpsim_status fpsim_model_config_format(const fpsim_model_config *cfg, char *buf, size_t cap);

static inline int fpsim_model_head_dim(const fpsim_model_config *c) { return c->d / c->heads; }
static inline int fpsim_model_qkv_dim(const fpsim_model_config *c) {
    return (c->heads + 2 * c->kv_heads) * (c->d / c->heads);
}
static inline size_t fpsim_model_tokens(const fpsim_model_config *c) {
    return (size_t)c->batch * (size_t)c->seq;
}

/* ------------------------------------------------------------------------------------------ */
/* Parameters: one flat slab, views with shapes                                                 */

enum {
    FPSIM_PARAM_WTE = 0,  /* (V, C)        token embedding */
    FPSIM_PARAM_LN1W,     /* (L, C)        RMSNorm before attention */
    FPSIM_PARAM_QKVW,     /* (L, QKV, C)   rows: q heads, then k heads, then v heads */
    FPSIM_PARAM_ATTPROJW, /* (L, C, C)     attention output projection */
    FPSIM_PARAM_LN2W,     /* (L, C)        RMSNorm before the MLP */
    FPSIM_PARAM_GATEUPW,  /* (L, 2F, C)    rows 0..F-1 gate, F..2F-1 up */
    FPSIM_PARAM_DOWNW,    /* (L, C, F)     MLP down projection */
    FPSIM_PARAM_LNFW,     /* (C)           final RMSNorm */
    FPSIM_PARAM_LMHEADW,  /* (V, C)        untied LM head */
    FPSIM_PARAM_COUNT
};

typedef struct fpsim_params {
    double *wte, *ln1w, *qkvw, *attprojw, *ln2w, *gateupw, *downw, *lnfw, *lmheadw;
} fpsim_params;

/* "wte", "ln1w", ... (NULL when out of range). */
const char *fpsim_param_name(int which);

typedef struct fpsim_model {
    fpsim_model_config config;
    size_t param_sizes[FPSIM_PARAM_COUNT]; /* elements per tensor (all layers) */
    size_t num_params;
    double *params_memory; /* num_params, FP32-representable master weights */
    double *grads_memory;  /* num_params, written by the backward (not accumulated) */
    double *m_memory;      /* num_params, AdamW first moment (float32-representable) */
    double *v_memory;      /* num_params, AdamW second moment (float32-representable) */
    fpsim_params params, grads;
    double *rope_cos, *rope_sin; /* (T, head_dim/2) cos and sin of pos * theta^(-2i/hd) */
    long step;                   /* AdamW steps taken */
} fpsim_model;

/* Allocate and initialize from cfg (checked with block 0): matrices ~ N(0, init_std^2), the
 * output projections (attprojw, downw) ~ N(0, (init_std/sqrt(2L))^2), norm weights 1, all rounded
 * to float32. The normals come from splitmix64 + Box-Muller (model.c), a fixed function of
 * cfg->seed on every platform. Moments zero, step 0. */
fpsim_status fpsim_model_create(fpsim_model *m, const fpsim_model_config *cfg);
/* Bytes fpsim_model_create allocates for cfg (parameters, gradients, both moments, RoPE tables),
 * and fpsim_acts_create: for checking a run against the memory available before it starts. */
double fpsim_model_bytes(const fpsim_model_config *cfg);
double fpsim_acts_bytes(const fpsim_model_config *cfg);
/* FPSIM_ENOMEM when a run of this model needing `need` bytes cannot fit in the memory available
 * (fpsim_mem_check), the message naming the model: "WHO the model (L layers, d=D, P million
 * parameters) with N NOUN(s) needs ...". */
fpsim_status fpsim_model_check_memory(const fpsim_model_config *cfg, double need, const char *who, int n,
                                      const char *noun);
void fpsim_model_free(fpsim_model *m);
/* dst = an independent copy of src (parameters, moments, step; grads too). dst is created. */
fpsim_status fpsim_model_clone(fpsim_model *dst, const fpsim_model *src);
/* Copy parameters, moments and step from src into dst (same config). */
fpsim_status fpsim_model_copy_state(fpsim_model *dst, const fpsim_model *src);

/* One parameter tensor's slice for layer l (for per-layer tensors; l ignored for wte, lnfw,
 * lmheadw): *data points into the slab (params or grads), *n its element count. */
fpsim_status fpsim_model_param_slice(const fpsim_model *m, const fpsim_params *slab, int which,
                                     int layer, double **data, size_t *n);

/* ------------------------------------------------------------------------------------------ */
/* Saved activations                                                                            */

/* One block's activations, as views into a slab (shapes as in the diagram at the top). The
 * forward fills them; the backward reads them and uses the scratch buffers. */
typedef struct fpsim_block_cache {
    double *in;      /* (N, C)      block input (the residual stream); copied in if distinct */
    double *ln1;     /* (N, C) */
    double *rstd1;   /* (N)         1 / sqrt(mean(x^2) + eps) */
    double *qkv;     /* (N, QKV)    QKV GEMM output */
    double *qkvr;    /* (N, QKV)    q, k after RoPE; v unchanged */
    double *att;     /* (B, H, T, T) softmax probabilities, row t has entries 0..t */
    double *atty;    /* (N, C)      attention output, heads side by side */
    double *attproj; /* (N, C)      ATTN_OUT GEMM output */
    double *res2;    /* (N, C)      in + attproj */
    double *ln2;     /* (N, C) */
    double *rstd2;   /* (N) */
    double *gu;      /* (N, 2F)     GATE_UP GEMM output, gate | up */
    double *h;       /* (N, F)      silu(gate) * up */
    double *down;    /* (N, C)      DOWN GEMM output */
    /* backward scratch (may be shared between blocks) */
    double *d_nc;    /* (N, C) */
    double *d_nc2;   /* (N, C) */
    double *d_nc3;   /* (N, C) */
    double *d_nf;    /* (N, F) */
    double *d_n2f;   /* (N, 2F) */
    double *d_qkv;   /* (N, QKV) */
    double *d_row;   /* (T) */
} fpsim_block_cache;

/* The final norm, head and loss. */
typedef struct fpsim_head_cache {
    double *in;      /* (N, C)   final pre-norm residual stream; copied in if distinct */
    double *lnf;     /* (N, C) */
    double *rstd;    /* (N) */
    double *logits;  /* (N, V)   LM_HEAD GEMM output */
    double *probs;   /* (N, V)   softmax(logits) */
    double *losses;  /* (N)      -log probs[target] (0 where masked out) */
    int32_t *targets;/* (N) */
    uint8_t *mask;   /* (N)      1: token counts in the loss */
    double count;    /* number of tokens in the loss */
    /* backward scratch */
    double *dlogits; /* (N, V) */
    double *dlnf;    /* (N, C) */
} fpsim_head_cache;

typedef struct fpsim_acts {
    fpsim_model_config config;
    double *memory;            /* everything below that is double lives here */
    double *resid;             /* (L+1, N, C) resid[0] embedding, resid[l+1] block l output */
    double *dresid;            /* (L+1, N, C) dLoss/d resid[l] after the backward */
    fpsim_block_cache *blocks; /* (L) views, scratch shared */
    fpsim_head_cache head;
    int32_t *tokens;           /* (N) inputs of the last forward */
    double loss;               /* mean loss of the last forward */
} fpsim_acts;

fpsim_status fpsim_acts_create(fpsim_acts *a, const fpsim_model_config *cfg);
void fpsim_acts_free(fpsim_acts *a);

/* A standalone cache for calling one block or the head alone (the replay's local view). */
fpsim_status fpsim_block_cache_create(fpsim_block_cache *c, const fpsim_model_config *cfg);
void fpsim_block_cache_free(fpsim_block_cache *c);
fpsim_status fpsim_head_cache_create(fpsim_head_cache *c, const fpsim_model_config *cfg);
void fpsim_head_cache_free(fpsim_head_cache *c);

/* ------------------------------------------------------------------------------------------ */
/* Layers, one at a time (given inputs, so the replay can feed each the reference input)         */

/* out (N, C) = wte[tokens]; tokens in [0, V) (else FPSIM_EDATA). */
fpsim_status fpsim_embed_forward(const fpsim_model *m, const fpsim_numerics *nx,
                                 const int32_t *tokens, double *out);
/* grads->wte = scatter-add of dout rows (overwritten, not accumulated). */
fpsim_status fpsim_embed_backward(const fpsim_model *m, const fpsim_numerics *nx,
                                  const int32_t *tokens, const double *dout,
                                  const fpsim_params *grads);

/* Block `layer`: in (N, C) -> out (N, C), saving what the backward needs in cache. in and out may
 * not alias. */
fpsim_status fpsim_block_forward(const fpsim_model *m, const fpsim_numerics *nx, int layer,
                                 const double *in, double *out, fpsim_block_cache *cache);
/* dout (N, C) -> din (N, C) and this layer's slices of grads (ln1w, qkvw, attprojw, ln2w,
 * gateupw, downw), overwritten. din may not alias dout. */
fpsim_status fpsim_block_backward(const fpsim_model *m, const fpsim_numerics *nx, int layer,
                                  const double *dout, fpsim_block_cache *cache, double *din,
                                  const fpsim_params *grads);

/* Final RMSNorm, LM head, softmax cross-entropy: in (N, C) -> *loss = sum over masked tokens of
 * -log p(target) / count. mask NULL: every token. targets in [0, V) (else FPSIM_EDATA). A batch
 * with no token in the loss gives loss 0 and zero gradients. */
fpsim_status fpsim_head_forward(const fpsim_model *m, const fpsim_numerics *nx, const double *in,
                                const int32_t *targets, const uint8_t *mask,
                                fpsim_head_cache *cache, double *loss);
/* -> din (N, C) = dLoss/d in; grads->lnfw and grads->lmheadw overwritten. */
fpsim_status fpsim_head_backward(const fpsim_model *m, const fpsim_numerics *nx,
                                 fpsim_head_cache *cache, double *din, const fpsim_params *grads);

/* ------------------------------------------------------------------------------------------ */
/* The whole model                                                                              */

/* Canonical comparison points, reported to an observer as the model runs. */
typedef enum fpsim_point {
    FPSIM_POINT_EMBED = 0,    /* resid[0]          (N, C)  layer -1 */
    FPSIM_POINT_BLOCK_OUT,    /* resid[l+1]        (N, C)  layer l: post-residual stream */
    FPSIM_POINT_FINAL_NORM,   /* lnf               (N, C)  layer L: output of the final norm */
    FPSIM_POINT_LOGITS,       /* logits            (N, V)  layer L */
    FPSIM_POINT_GRAD_LOGITS,  /* dLoss/dlogits     (N, V)  layer L */
    FPSIM_POINT_GRAD_STREAM,  /* dresid[l]         (N, C)  layer l = 0..L: gradient at block l's
                                 input (l = L: at the final pre-norm stream) */
    FPSIM_POINT_COUNT
} fpsim_point;

const char *fpsim_point_name(int point);

/* Return FPSIM_OK to go on; anything else stops the run, which returns that status. */
typedef fpsim_status (*fpsim_model_observer)(void *ctx, fpsim_point point, int layer,
                                             const double *data, size_t rows, size_t cols);

/* Forward of the whole model on tokens/targets/mask (each N = batch*seq, row-major (B, T)):
 * fills acts (resid, caches, head), sets acts->loss (also *loss if not NULL). observer may be
 * NULL. */
fpsim_status fpsim_model_forward(const fpsim_model *m, const fpsim_numerics *nx, fpsim_acts *a,
                                 const int32_t *tokens, const int32_t *targets,
                                 const uint8_t *mask, fpsim_model_observer observer, void *ctx,
                                 double *loss);
/* Backward after fpsim_model_forward with the same acts: writes m->grads (every tensor) and
 * acts->dresid. */
fpsim_status fpsim_model_backward(fpsim_model *m, const fpsim_numerics *nx, fpsim_acts *a,
                                  fpsim_model_observer observer, void *ctx);

/* ------------------------------------------------------------------------------------------ */
/* AdamW with FP32 master weights (adamw.c)                                                     */

typedef struct fpsim_adamw_config {
    double lr, beta1, beta2, eps, weight_decay;
    double grad_clip; /* clip the global gradient L2 norm to this (0: no clipping) */
} fpsim_adamw_config;

/* lr 1e-3, betas (0.9, 0.95), eps 1e-8, weight decay 0.1 (matrices only), clip 1.0. */
fpsim_adamw_config fpsim_adamw_config_default(void);

/* One step from m->grads: updates params and moments (each rounded to float32 after the update,
 * as FP32 master weights and moments are), step += 1. *grad_norm (if not NULL): the global L2
 * norm of the gradient before clipping. FPSIM_EDATA if the gradient is not finite (nothing
 * changes then). */
fpsim_status fpsim_adamw_step(fpsim_model *m, const fpsim_adamw_config *opt, double *grad_norm);

/* ------------------------------------------------------------------------------------------ */
/* Layer primitives (used by the layers above; exposed for gradient checks and later engines).  */
/* Every non-GEMM output is rounded to act_round. Backward outputs are overwritten.              */

void fpsim_rmsnorm_forward(double *out, double *rstd, const double *x, const double *w, size_t n,
                           size_t c, double eps, int act_round);
void fpsim_rmsnorm_backward(double *dx, double *dw, const double *dout, const double *x,
                            const double *w, const double *rstd, size_t n, size_t c,
                            int act_round);

/* GEMM wrappers of a linear layer y = x w^T (x (n, in), w (out, in)), one call per pass.
 * backward: dx (n, in) = dy w [DGRAD] when dx != NULL; dw (out, in) = dy^T x [WGRAD]. */
fpsim_status fpsim_linear_forward(const fpsim_numerics *nx, int layer, fpsim_site site,
                                  double *y, const double *x, const double *w, size_t n,
                                  size_t in, size_t out);
fpsim_status fpsim_linear_backward(const fpsim_numerics *nx, int layer, fpsim_site site,
                                   double *dx, double *dw, const double *dy, const double *x,
                                   const double *w, size_t n, size_t in, size_t out);

/* RoPE, in place on the q and k parts of qkv rows (N, QKV) of B sequences of T positions. */
void fpsim_rope_forward(const fpsim_model *m, double *qkv, int act_round);
/* The inverse rotation, in place on dq and dk (the gradient of a rotation is its transpose). */
void fpsim_rope_backward(const fpsim_model *m, double *dqkv, int act_round);

/* Causal softmax attention of one query position t of sequence b, query head h, over keys
 * 0..t: probs (t+1) and out (head_dim). The full-sequence path calls it for every t; a decode
 * path (one token at a time with a KV cache) calls it for the newest t only. q points at the
 * query head's head_dim values; k_rows / v_rows at key/value position 0 of this head's kv group,
 * with row stride `stride` elements. */
void fpsim_attention_row(double *out, double *probs, const double *q, const double *k_rows,
                         const double *v_rows, size_t stride, int t, int head_dim,
                         int act_round);
/* Attention on RoPE'd qkvr (N, QKV) -> atty (N, C), att (B, H, T, T). */
void fpsim_attention_forward(const fpsim_model_config *cfg, double *atty, double *att,
                             const double *qkvr, int act_round);
/* datty (N, C) -> dqkvr (N, QKV); row (T) scratch. */
void fpsim_attention_backward(const fpsim_model_config *cfg, double *dqkvr, const double *datty,
                              const double *qkvr, const double *att, double *row,
                              int act_round);

/* SwiGLU: h (n, f) = silu(gu[:, :f]) * gu[:, f:], silu(x) = x / (1 + exp(-x)). */
void fpsim_swiglu_forward(double *h, const double *gu, size_t n, size_t f, int act_round);
void fpsim_swiglu_backward(double *dgu, const double *dh, const double *gu, size_t n, size_t f,
                           int act_round);

/* Softmax cross-entropy over rows of logits (n, v): probs, losses (0 where mask is 0);
 * backward: dlogits = (probs - onehot(target)) * mask / count. */
void fpsim_crossentropy_forward(double *probs, double *losses, const double *logits,
                                const int32_t *targets, const uint8_t *mask, size_t n, size_t v,
                                int act_round);
void fpsim_crossentropy_backward(double *dlogits, const double *probs, const int32_t *targets,
                                 const uint8_t *mask, double count, size_t n, size_t v,
                                 int act_round);

#ifdef __cplusplus
}
#endif
#endif
