/* fpsim_replay.h: the recipe engine (a GEMM hook that quantizes operands as a recipe says) and
 * the replay of training steps that measures, layer by layer, the error a recipe adds.
 *
 * Two parts:
 *
 * 1. The recipe engine (numerics_recipe.c) implements fpsim_numerics.gemm (fpsim_numerics.h):
 *    for each call it looks up the scheme of (layer, site, pass, role) for each operand,
 *    quantizes the operand along the GEMM's reduction dimension with fpsim_block_quantize
 *    (rowwise or columnwise copy, each from the high-precision operand; SR and RHT where the
 *    scheme says, with a Philox stream per (layer, site, pass, role) and the step in the seed),
 *    multiplies the dequantized values with BLAS sgemm (FP32 accumulate; engine_multiply() is
 *    the one place an accumulation model plugs in), and rounds the output as the emulated kernel
 *    writes it (BF16 for fprop and dgrad outputs when the recipe's activations are BF16; FP32
 *    for weight gradients, TE's main_grad). Operands that the recipe leaves unquantized are
 *    rounded to the recipe's high precision (BF16 or FP32), or passed through untouched under
 *    FP64 (then the call is the fp64 reference engine's, bit for bit: the identity control).
 *    An observer callback receives every call with the quantization statistics of its operands.
 *
 * 2. The replay (replay*.c): runs the FP64 reference and each recipe for N optimizer steps from
 *    the same initial state and data and records statistics (fpsim_stats) in two views:
 *      accumulated: the recipe's own run, errors propagating forward and backward;
 *      local:       every GEMM of the reference run recomputed by the recipe engine on the
 *                   reference's own operands (only that GEMM's quantization error).
 *    Results go to HDF5 (docs/hdf5-layout.md, "replay results").
 *
 * Library code: returns fpsim_status, never prints. */
#ifndef FPSIM_REPLAY_H
#define FPSIM_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_block.h"
#include "fpsim_gemm.h"
#include "fpsim_numerics.h"
#include "fpsim_recipe.h"
#include "fpsim_stats.h"
#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plan's tables are indexed [pass][role] (fpsim_pass, fpsim_role of fpsim_recipe.h). */
#define FPSIM_PLAN_PASSES FPSIM_PASS_COUNT
#define FPSIM_PLAN_ROLES FPSIM_ROLE_COUNT

/* ------------------------------------------------------------------------------------------ */
/* The recipe engine                                                                           */

/* What the engine needs from a recipe, as plain data (filled from a named recipe by
 * fpsim_engine_plan_from_recipe, or by hand for controls and tests). */
typedef struct fpsim_engine_plan {
    char name[64];
    int act_round;      /* FPSIM_ACT_*: non-GEMM outputs */
    int operand_round;  /* FPSIM_ACT_*: operands the recipe does not quantize */
    int out_round;      /* FPSIM_ACT_*: fprop and dgrad GEMM outputs (wgrad outputs: FP32,
                           or FP64 when operand_round is FP64) */
    int quantized[FPSIM_PLAN_PASSES][FPSIM_PLAN_ROLES]; /* 1: the operand uses scheme[][] */
    fpsim_scheme scheme[FPSIM_PLAN_PASSES][FPSIM_PLAN_ROLES];
    int hp_first_layers;/* this many first blocks keep every operand in operand_round */
    int hp_last_layers; /* same for the last blocks */
    int hp_head;        /* the LM head keeps its operands in operand_round */
    int accum_set;      /* 0: products summed by BLAS sgemm on the dequantized operands (the
                           default, the "fp32" model); 1: `accum` where it applies */
    fpsim_accum accum;  /* accumulation model (fpsim_gemm.h), see fpsim_engine_accum_route */
} fpsim_engine_plan;

/* A plan with no quantization: operands, GEMM outputs and non-GEMM outputs all at `round`
 * (FPSIM_ACT_FP64: the identity control, bit-identical to the fp64 reference engine). */
void fpsim_engine_plan_plain(fpsim_engine_plan *plan, const char *name, int round);

/* A plan from a named recipe (fpsim_recipe.h names: bf16, nemo-rl-fp8, te-mxfp8, te-nvfp4, ...,
 * plus the controls "fp64" and "fp32"). Unknown name: FPSIM_ENAME listing the valid ones. */
fpsim_status fpsim_engine_plan_from_recipe(fpsim_engine_plan *plan, const char *name);

/* Refuses (FPSIM_EINVAL, naming both counts) a plan whose first/last high-precision layers
 * cover every one of the model's `layers` blocks: it would quantize nothing. Callers check it
 * when the model is known, before any work. */
fpsim_status fpsim_engine_plan_check_layers(const fpsim_engine_plan *plan, int layers);

/* The largest block length along K that the plan's schemes need (every GEMM dimension that is
 * a reduction dimension must be a multiple of it), and along the other dimension (2-D tiles). */
int fpsim_engine_plan_block(const fpsim_engine_plan *plan);

/* Accumulation models behind the engine's GEMM (docs/replay.md, "Accumulation models").
 * A recipe name may end in "@accum=MODEL" (fpsim_accum_parse names, e.g.
 * "nemo-rl-fp8@accum=hopper-qgmma"); fpsim_engine_plan_from_recipe applies it.
 * fpsim_engine_plan_set_accum sets the model by name (unknown: FPSIM_ENAME listing the valid
 * ones); "fp32" restores the default BLAS path exactly. */
fpsim_status fpsim_engine_plan_set_accum(fpsim_engine_plan *plan, const char *model);

/* How a GEMM with operand schemes sa, sb (NULL: operand unquantized, rounded to the plan's
 * operand_round) is multiplied under the plan:
 *   FPSIM_ROUTE_FP8:   both FP8 (E4M3/E5M2) per-tensor or both 1x128/128x128 block-scaled: the
 *                      element codes and the scales go to fpsim_gemm_tn_ex under *model;
 *   FPSIM_ROUTE_BF16:  both unquantized BF16: fpsim_gemm_blas with BF16 inputs under *model
 *                      (hopper-hgmma when the plan's model is a Hopper tensor-core one);
 *   FPSIM_ROUTE_SGEMM: BLAS sgemm on the dequantized values; *why says why when a model was
 *                      asked for (MX / NVFP4 scales, which cuBLASLt on Hopper cannot apply, ...).
 * *model receives the model to use (meaningful for the first two). */
enum { FPSIM_ROUTE_SGEMM = 0, FPSIM_ROUTE_FP8, FPSIM_ROUTE_BF16 };
int fpsim_engine_accum_route(const fpsim_engine_plan *plan, const fpsim_scheme *sa, const fpsim_scheme *sb,
                             fpsim_accum *model, const char **why);

/* One line per pass saying what each pass's GEMMs in quantized layers use, and what the
 * high-precision layers use, e.g. "fprop: hopper-qgmma:fast (FP8 codes, scales); ...". */
void fpsim_engine_plan_accum_text(const fpsim_engine_plan *plan, char *buf, size_t cap);


/* What the observer learns about one operand of one call. */
typedef struct fpsim_operand_report {
    int quantized;            /* 0: passed through (rounded to operand_round) */
    fpsim_role role;
    size_t rows, cols;        /* stored shape (the operand as the model holds it) */
    const double *received;   /* the operand as received, contiguous rows x cols */
    const float *used;        /* what was multiplied, rows x cols (NULL on the FP64 path) */
    fpsim_stats quant;        /* used vs received: this operand's own rounding error; includes
                                 the quantizer's saturation count */
    /* log2 of the block dequantization multipliers (scale_inv), over blocks with a nonzero
     * finite multiplier; count 0 when the operand has no block scales. */
    double scale_log2_min, scale_log2_max, scale_log2_sum;
    uint64_t scale_count;
} fpsim_operand_report;

/* Called after every GEMM with the call (its C holding the output) and both operand reports.
 * The pointers are valid only during the call. */
typedef void (*fpsim_gemm_observer)(void *ctx, const fpsim_gemm_call *call,
                                    const fpsim_operand_report *a, const fpsim_operand_report *b);

typedef struct fpsim_recipe_engine fpsim_recipe_engine;

/* Build an engine for `plan` over a model of `layers` blocks. seed keys stochastic rounding;
 * threads as fpsim_threads_default() when <= 0 (any count gives the same bits). */
fpsim_status fpsim_recipe_engine_create(fpsim_recipe_engine **out, const fpsim_engine_plan *plan,
                                        int layers, uint64_t seed, int threads);
void fpsim_recipe_engine_free(fpsim_recipe_engine *e);
/* The fpsim_numerics to hand to the model (ctx = e). */
fpsim_numerics fpsim_recipe_engine_numerics(fpsim_recipe_engine *e);
/* The optimizer step: part of every SR stream, so that each step draws fresh random bits. */
void fpsim_recipe_engine_set_step(fpsim_recipe_engine *e, uint64_t step);
/* Install (or remove, with NULL) the observer. */
void fpsim_recipe_engine_set_observer(fpsim_recipe_engine *e, fpsim_gemm_observer fn, void *ctx);
/* Turn the per-operand statistics off (the benchmark's uninstrumented baseline keeps them on;
 * the bias-variance sweep turns them off). */
void fpsim_recipe_engine_set_stats(fpsim_recipe_engine *e, int on);

/* The Philox stream id of an operand: (((layer + 1) * FPSIM_SITE_COUNT + site) *
 * FPSIM_PASS_COUNT + pass) * FPSIM_ROLE_COUNT + role. The step enters through the seed:
 * seed + step * 0x9E3779B97F4A7C15 (mod 2^64). */
uint32_t fpsim_replay_stream(int layer, int site, int pass, int role);
uint64_t fpsim_replay_step_seed(uint64_t seed, uint64_t step);


/* ------------------------------------------------------------------------------------------ */
/* The replay                                                                                  */

#include "fpsim_model.h"
#include "fpsim_task.h"

#define FPSIM_REPLAY_MAX_RECIPES 16

/* The two views of a GEMM's error (first index of the gemm / operand tables). */
enum { FPSIM_VIEW_LOCAL = 0, FPSIM_VIEW_ACCUMULATED = 1, FPSIM_VIEW_COUNT = 2 };
const char *fpsim_view_name(int view);

/* Supplies the batch of optimizer step `step` (N = batch*seq each): the same for every engine. */
typedef fpsim_status (*fpsim_replay_batch_fn)(void *ctx, int step, int32_t *tokens,
                                              int32_t *targets, uint8_t *mask);

typedef struct fpsim_replay_config {
    fpsim_model_config model;
    const char *recipes[FPSIM_REPLAY_MAX_RECIPES]; /* recipe names or custom texts */
    int nrecipes;
    int steps;                 /* optimizer steps */
    uint64_t seed;             /* SR seed of every recipe engine */
    int threads;               /* <= 0: fpsim_threads_default() */
    int local_view;            /* 1: also recompute every GEMM on the reference operands */
    fpsim_adamw_config opt;
    int pretrain_steps;        /* FP32 AdamW steps on the task before step 0 (fpsim_model_pretrain),
                                  so the replay starts from a trained state, not random init */
    fpsim_task_config task;    /* the built-in task (used when batch is NULL) */
    fpsim_replay_batch_fn batch; /* NULL: batch `step` of the built-in task */
    void *batch_ctx;
    const double *init_params; /* NULL: initialize from `model` (and pretrain); else num_params
                                  float32 weights in fpsim's slab order (e.g. a PyTorch capture,
                                  fpsim_capture.h) that replace the initial state */
    /* Optional: called after each unit of work (one engine's step), done of total. */
    void (*progress)(void *ctx, int done, int total);
    void *progress_ctx;
    /* Optional: called after every finished step (e.g. to write the results file); a non-OK
     * status stops the run with it. */
    fpsim_status (*step_done)(void *ctx, int steps_done);
    void *step_ctx;
} fpsim_replay_config;

/* Defaults: the default model, recipes bf16 nemo-rl-fp8 te-mxfp8 te-nvfp4, 2 steps, seed 1,
 * local view on, AdamW defaults, the built-in task (seed 1), FPSIM_REPLAY_PRETRAIN steps of
 * pretraining. */
#define FPSIM_REPLAY_PRETRAIN 30
void fpsim_replay_config_default(fpsim_replay_config *cfg);

/* Index helpers over layers 0..L (L = the LM head), sites, passes, roles, canonical points
 * (layer -1 .. L stored at index layer + 1). */
typedef struct fpsim_replay_dims {
    int steps, layers; /* layers = L + 1 rows: the blocks and the head */
    int tensors;       /* parameter tensors: wte, per block 6, lnfw, lmheadw */
} fpsim_replay_dims;

static inline size_t fpsim_replay_gemm_index(const fpsim_replay_dims *d, int step, int view,
                                             int layer, int site, int pass)
{
    return ((((size_t)step * FPSIM_VIEW_COUNT + (size_t)view) * (size_t)d->layers + (size_t)layer) *
                FPSIM_SITE_COUNT + (size_t)site) * FPSIM_PASS_COUNT + (size_t)pass;
}
static inline size_t fpsim_replay_operand_index(const fpsim_replay_dims *d, int step, int view,
                                                int layer, int site, int pass, int role)
{
    return fpsim_replay_gemm_index(d, step, view, layer, site, pass) * FPSIM_ROLE_COUNT +
           (size_t)role;
}
#define FPSIM_REPLAY_POINT_LAYERS(d) ((size_t)(d)->layers + 1) /* -1 .. L */
static inline size_t fpsim_replay_point_index(const fpsim_replay_dims *d, int step, int point,
                                              int layer)
{
    return ((size_t)step * FPSIM_POINT_COUNT + (size_t)point) * FPSIM_REPLAY_POINT_LAYERS(d) +
           (size_t)(layer + 1);
}

/* Scale statistics of one operand: log2 of block multipliers. */
typedef struct fpsim_replay_scale {
    double log2_min, log2_max, log2_sum;
    uint64_t count;
} fpsim_replay_scale;

typedef struct fpsim_replay_result {
    fpsim_engine_plan plan;
    char spec[FPSIM_SCHEME_TEXT_MAX]; /* the recipe as given */
    double *loss;                /* [step] the recipe's own loss on the step's batch */
    fpsim_stats *gemm;           /* [step][view][layer][site][pass]: GEMM output vs reference */
    fpsim_stats *operand;        /* [step][view][layer][site][pass][role]: used vs received */
    fpsim_replay_scale *scale;   /* same index as operand */
    fpsim_stats *operand_drift;  /* [step][0][layer][site][pass][role] (view slot 0 only):
                                    accumulated run's operand vs the reference's */
    fpsim_stats *point;          /* [step][point][layer+1]: canonical points vs reference */
    fpsim_stats *grad;           /* [step][tensor]: parameter gradient vs reference */
    fpsim_stats *drift;          /* [step][tensor]: weights after the step vs reference */
    int skipped_updates;         /* steps whose gradient was not finite (no update made) */
    double seconds_accumulated;  /* wall time of the last step's accumulated run (forward,
                                    backward, comparisons, gradient stats, AdamW) */
    double seconds_local;        /* wall time of the last step's local view */
    double cpu_accumulated;      /* the same two in CPU time of the process (all its threads: */
    double cpu_local;            /* CLOCK_PROCESS_CPUTIME_ID), which a loaded machine disturbs less */
} fpsim_replay_result;

typedef struct fpsim_replay {
    fpsim_replay_config config;
    fpsim_replay_dims dims;
    int steps_done;
    double *ref_loss;            /* [step] */
    double ref_seconds;          /* wall time of the last step's recorded reference run */
    double ref_cpu;              /* its CPU time (process, all threads) */
    char (*tensor_names)[32];    /* [tensor] "wte", "l0.qkvw", ..., "lmheadw" */
    int *tensor_kind, *tensor_layer;
    int nrecipes;
    fpsim_replay_result *results;
    void *state;                 /* models, engines, recordings (replay_run.c) */
} fpsim_replay;

/* Check the config (recipes known, model spec consistent with the largest block any recipe
 * needs), allocate everything. Errors name the bad recipe or dimension. */
fpsim_status fpsim_replay_create(fpsim_replay **out, const fpsim_replay_config *cfg);
/* Run the steps (calling step_done after each). */
fpsim_status fpsim_replay_run(fpsim_replay *r);
void fpsim_replay_free(fpsim_replay *r);


/* ------------------------------------------------------------------------------------------ */
/* Bias vs variance of a summed weight gradient (biasvar.c)                                    */

#define FPSIM_BIASVAR_MAX_CASES 8
#define FPSIM_BIASVAR_MAX_NS 16

typedef struct fpsim_biasvar_config {
    const double *dy;   /* (tokens, out) output gradients of one linear layer */
    const double *x;    /* (tokens, in) its inputs */
    size_t tokens, out, in;
    int layer, site;    /* for the SR streams and the file */
    int seeds;          /* SR seeds per case (RNE cases use one) */
    uint64_t seed;
    int threads;
} fpsim_biasvar_config;

typedef struct fpsim_biasvar_result {
    int ncases, nns;
    char case_names[FPSIM_BIASVAR_MAX_CASES][64];
    char case_schemes[FPSIM_BIASVAR_MAX_CASES][FPSIM_SCHEME_TEXT_MAX];
    size_t ns[FPSIM_BIASVAR_MAX_NS];       /* token counts N */
    int seeds;
    int layer, site;                        /* the wgrad GEMM swept */
    /* [case][n]: all relative to ||G_N|| (the reference sum over N tokens) */
    double bias[FPSIM_BIASVAR_MAX_CASES][FPSIM_BIASVAR_MAX_NS];     /* sqrt(max(0, ||mean_s G^ - G||^2
                                                                       - V/S)) / ||G|| */
    double std[FPSIM_BIASVAR_MAX_CASES][FPSIM_BIASVAR_MAX_NS];      /* sqrt(V) / ||G||, V = sum_s
                                                                       ||G^_s - mean||^2 / (S-1) */
    double rmse[FPSIM_BIASVAR_MAX_CASES][FPSIM_BIASVAR_MAX_NS];     /* sqrt(mean_s ||G^_s - G||^2) / ||G|| */
    double cosine[FPSIM_BIASVAR_MAX_CASES][FPSIM_BIASVAR_MAX_NS];   /* of the seed mean with G */
    /* NVFP4 cases, from the independent reference sim/nvfp4_ref.c (NaN for the E4M3 cases):
     * ||E[G^] - G|| / ||G|| with E over the SR draws in closed form (TE's 8 random bits), the same
     * with unlimited random bits (what the clip at 6 and scale-0 blocks leave), and without the
     * clip (scale-0 blocks and RHT's BF16 rounding only); fractions of nonzero blocks whose
     * amax * enc > 6 and of nonzero elements with |x * enc| > 6, over both operands. */
    double bias_expect[FPSIM_BIASVAR_MAX_CASES][FPSIM_BIASVAR_MAX_NS];
    double bias_clip[FPSIM_BIASVAR_MAX_CASES][FPSIM_BIASVAR_MAX_NS];
    double bias_noclip[FPSIM_BIASVAR_MAX_CASES][FPSIM_BIASVAR_MAX_NS];
    double over6[FPSIM_BIASVAR_MAX_CASES][FPSIM_BIASVAR_MAX_NS];
    double sat[FPSIM_BIASVAR_MAX_CASES][FPSIM_BIASVAR_MAX_NS];
    double sat_dy[FPSIM_BIASVAR_MAX_CASES][FPSIM_BIASVAR_MAX_NS]; /* sat of each operand alone */
    double sat_x[FPSIM_BIASVAR_MAX_CASES][FPSIM_BIASVAR_MAX_NS];
} fpsim_biasvar_result;

/* The sweep: for N = 64, 128, ... up to tokens (at most 65536), G_N = dY[:N]^T X[:N] in FP64 and
 * under each case (e4m3-rne, e4m3-sr per-tensor; nvfp4-rne, nvfp4-sr, nvfp4-sr-rht; the what-ifs
 * nvfp4-sr-up, nvfp4-sr-rht-up with the block scale rounded up: see biasvar.c), both operands
 * quantized along tokens as the wgrad GEMM does, seeds SR seeds for the stochastic cases. */
fpsim_status fpsim_biasvar_run(fpsim_biasvar_result *out, const fpsim_biasvar_config *cfg);

/* The sweep on the replay's own reference model (its state after the finished steps): the
 * operands of the wgrad GEMM of the last block's ATTN_OUT projection (dY, X: N x d), gathered
 * from fresh batches of the task (FP32 forward, head and last-block backward) up to max_tokens
 * rows (a power of two, at most 65536). Overwrites the reference model's gradients. */
fpsim_status fpsim_replay_biasvar(fpsim_replay *r, fpsim_biasvar_result *out, int seeds,
                                  size_t max_tokens);

/* Write the results of the replay's finished steps, and the bias-variance sweep when bv is not
 * NULL, to `path` (temp + rename; layout in docs/hdf5-layout.md, "Replay results"). */
fpsim_status fpsim_replay_write_h5(const fpsim_replay *r, const char *path,
                                   const char *command_line, const fpsim_biasvar_result *bv);


#ifdef __cplusplus
}
#endif
#endif
