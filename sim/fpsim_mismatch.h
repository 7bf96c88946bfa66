/* fpsim_mismatch.h: generator/trainer mismatch of an RL pipeline, token by token and layer by layer.
 *
 * Three parts:
 *
 * 1. Metrics (mismatch_metrics.c, mismatch_is.c): the definitions of NeMo RL (NVIDIA-NeMo/RL
 *    nemo_rl/algorithms/loss_functions.py, ClippedPGLoss, head 7ea279abf) and of the Thinking
 *    Machines tinker-cookbook (rl/metrics.py), on per-token log-probabilities
 *      g_t = log pi_gen(y_t)   (the generator's, as returned by the sampler)
 *      p_t = log pi_train(y_t) (the trainer's recomputation, NeMo RL prev_logprobs)
 *    over the masked (generated) tokens; docs/mismatch.md gives every formula.
 *
 * 2. Engines (engine_*.c): one model and weights scored by two engines, each a recipe
 *    (fpsim_replay.h recipe engine: quantized GEMM operands) plus kernel numerics: GEMM
 *    accumulation model (fpsim_gemm.h), FP32 reduction order of softmax and RMSNorm, KV-cache
 *    format (BF16 or FP8 E4M3 with per-layer static scales), decode-style (one token at a time
 *    from a KV cache) or prefill-style attention, and the BF16 refit of the generator's weights.
 *
 * 3. The run (mismatch_run.c): the generator samples responses to the task's prompts
 *    (temperature, top-p, seeded), both engines score every token, canonical points are compared
 *    layer by layer, and attribution swaps one layer or one part of the generator to the
 *    trainer's numerics at a time. Results go to HDF5 (docs/mismatch.md); the
 *    plots of such a file are drawn by the CLI (cli/mismatch_plot.c).
 *
 * Library code: returns fpsim_status with fpsim_fail messages, never prints. */
#ifndef FPSIM_MISMATCH_H
#define FPSIM_MISMATCH_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_model.h"
#include "fpsim_status.h"
#include "fpsim_task.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* 1. Metrics                                                                                   */

/* Per-token quantities, each a function of (g, p) only (docs/mismatch.md):
 *   token_mult_prob_error   exp(|g - p|)
 *   gen_kl_error            k3(p - g)            k3(r) = exp(r) - 1 - r
 *   policy_kl_error         k3(g - p)
 *   js_divergence_error     0.5 k3(p - m) + 0.5 k3(g - m),  m = log(0.5 e^p + 0.5 e^g)
 *   sampling_importance_ratio  exp(p - g)
 *   kl_sample_train_v1      g - p                (k1)
 *   kl_sample_train_v2      0.5 (g - p)^2        (k2)
 *   logprob_diff            g - p
 *   abs_prob_diff           |e^p - e^g|          (verl rollout_probs_diff)
 *   train_rollout_logprob_abs_diff  |g - p|      (slime)
 * The signs of js follow NeMo RL's code (kl_prev_to_mixture = exp(p - m) - (p - m) - 1). */
enum {
    FPSIM_MM_TOKEN_MULT_PROB_ERROR = 0,
    FPSIM_MM_GEN_KL_ERROR,
    FPSIM_MM_POLICY_KL_ERROR,
    FPSIM_MM_JS_DIVERGENCE_ERROR,
    FPSIM_MM_SAMPLING_IMPORTANCE_RATIO,
    FPSIM_MM_KL_SAMPLE_TRAIN_V1,
    FPSIM_MM_KL_SAMPLE_TRAIN_V2,
    FPSIM_MM_LOGPROB_DIFF,
    FPSIM_MM_ABS_PROB_DIFF,
    FPSIM_MM_LOGPROB_ABS_DIFF,
    FPSIM_MM_TOKEN_METRIC_COUNT
};
const char *fpsim_mm_token_metric_name(int metric);
/* The per-token value of `metric` for one token. */
double fpsim_mm_token_metric(int metric, double g, double p);
/* k3(r) = exp(r) - 1 - r to a few ulps for every r: its Taylor series below |r| = 1/2, where
 * expm1(r) - r would cancel, expm1(r) - r above. js_divergence_error and abs_prob_diff are
 * likewise formed from |g - p| without cancellation; equal log-probs give exactly 0. */
double fpsim_mm_k3(double r);

/* Aggregates of a per-token quantity over the masked tokens: mean, median, p99, max (and min).
 * Quantiles by linear interpolation between order statistics (numpy / torch.quantile default:
 * position q (n - 1)). A NaN among the values makes every aggregate NaN (numpy's mean, quantile
 * and max do the same), so a NaN log-prob is never hidden behind finite order statistics. */
typedef struct fpsim_mm_agg {
    double mean, median, p99, max, min;
    size_t count;
} fpsim_mm_agg;

/* Quantile q in [0, 1] of x[0..n) (sorted copy; NaN if n == 0 or any x[i] is NaN). */
double fpsim_mm_quantile(const double *x, size_t n, double q);
/* mean / median / p99 / max / min of x[i] for mask[i] != 0 (mask NULL: all). */
fpsim_status fpsim_mm_aggregate(fpsim_mm_agg *out, const double *x, const uint8_t *mask, size_t n);

/* Every metric of a token set, aggregated: n sequences of len tokens, row-major (n, len); mask
 * (n, len) 1 where a token is scored. Sequence-level figures are over sequences with at least
 * one scored token. */
typedef struct fpsim_mm_summary {
    size_t tokens, sequences;
    fpsim_mm_agg token[FPSIM_MM_TOKEN_METRIC_COUNT];   /* over tokens */
    /* the log-prob difference g - p: quantiles p05 p50 p95 p99, max |g - p|, fraction < 0,
     * and the ratio fractions below: all NaN when a scored token's g - p is NaN */
    double diff_p05, diff_p50, diff_p95, diff_p99, diff_max_abs, diff_frac_neg;
    /* sampling ratio exp(p - g): fraction > 2 and fraction < 0.5 (tinker-cookbook) */
    double ratio_frac_gt2, ratio_frac_lt05;
    /* per sequence: mean over its tokens of exp(|g - p|) (NeMo RL seq mult_prob_error) */
    fpsim_mm_agg seq_mult_prob_error;
    /* per sequence: mean k3(p - g) (per-datum KL), and the sequence log-ratio sum_t (p - g) */
    fpsim_mm_agg seq_gen_kl;
    fpsim_mm_agg seq_log_ratio;
} fpsim_mm_summary;

fpsim_status fpsim_mm_summarize(fpsim_mm_summary *out, const double *g, const double *p,
                                const uint8_t *mask, size_t n, size_t len);

/* Importance-sampling corrections (rl-and-recipes.md section 3; NeMo RL ClippedPGLoss):
 *   FPSIM_IS_PLAIN         w = exp(p - g), NaN/Inf -> 0, no truncation
 *   FPSIM_IS_TIS           w = exp(p - g) clamped to [min, max] (min 0: NeMo RL's min(w, max));
 *                          bites where w is outside
 *   FPSIM_IS_ICEPOP        w = exp(p - g) if min <= w <= max, else 0; bites where outside
 *   FPSIM_IS_SEQ_MASK_TIS  a sequence whose geometric-mean ratio exp(mean_t(p - g)) is outside
 *                          [min, max] gets weight 0 on every token; kept sequences keep raw w
 *   FPSIM_IS_SEQ_RATIO     GSPO-style: every token of a sequence gets exp(sum_t (p - g)), 0 where
 *                          that is NaN or Inf (a -Inf trainer log-prob zeroes the sequence).
 *                          weight_mean is over tokens, so long sequences weigh more than in a
 *                          mean over sequences */
typedef enum fpsim_is_kind {
    FPSIM_IS_PLAIN = 0,
    FPSIM_IS_TIS,
    FPSIM_IS_ICEPOP,
    FPSIM_IS_SEQ_MASK_TIS,
    FPSIM_IS_SEQ_RATIO,
    FPSIM_IS_COUNT
} fpsim_is_kind;
const char *fpsim_is_kind_name(int kind);

typedef struct fpsim_is_result {
    double oob_ratio;     /* is_oob_ratio: fraction of tokens (tis, icepop) or of sequences
                             (seq-mask-tis) outside the bounds; 0 for plain and seq-ratio */
    double weight_mean;   /* mean effective weight over scored tokens */
    double weight_max, weight_min;
    double zero_fraction; /* fraction of scored tokens whose weight is 0 */
} fpsim_is_result;

/* Effective weights w (n, len) (0 where mask is 0) and the summary. lo, hi: the bounds (plain
 * and seq-ratio use neither). Reference bounds: tis hi 2; icepop [0.5, 5]; seq-mask-tis [0.999, 1.002]. w may be
 * NULL. */
fpsim_status fpsim_is_weights(fpsim_is_result *out, double *w, fpsim_is_kind kind, double lo,
                              double hi, const double *g, const double *p, const uint8_t *mask,
                              size_t n, size_t len);

/* ------------------------------------------------------------------------------------------ */
/* 2. Engines                                                                                   */

/* FP32 reduction order of the non-GEMM reductions (RMSNorm sum of squares, softmax max/sum,
 * attention score dot products and P V): each a real float32 summation in that order. */
typedef enum fpsim_reduce_order {
    FPSIM_REDUCE_SEQ = 0,  /* left to right: one thread walking the row */
    FPSIM_REDUCE_PAIRWISE, /* pairwise tree (adjacent pairs, then pairs of pairs): a warp shuffle
                              reduction over 32 lanes ends the same way */
    FPSIM_REDUCE_BLOCKED,  /* blocks of 32 summed left to right, block partials summed left to
                              right; the softmax as an online (flash) softmax over 32-key chunks */
    FPSIM_REDUCE_COUNT
} fpsim_reduce_order;
const char *fpsim_reduce_order_name(int order);

typedef enum fpsim_kv_format {
    FPSIM_KV_HP = 0,  /* the engine's activation precision (BF16 in BF16 recipes) */
    FPSIM_KV_FP8,     /* E4M3 with a static per-layer scale for K and for V (NeMo RL / vLLM) */
    FPSIM_KV_COUNT
} fpsim_kv_format;

typedef enum fpsim_attn_style {
    FPSIM_STYLE_PREFILL = 0, /* the whole sequence in one forward (the trainer's get_logprobs) */
    FPSIM_STYLE_DECODE,      /* one token at a time from a KV cache (the sampler) */
    FPSIM_STYLE_COUNT
} fpsim_attn_style;

/* One engine's numerics. Text form (fpsim_engine_config_parse): RECIPE[,key=value...] where
 * RECIPE is a recipe name of fpsim_recipe.h (bf16, nemo-rl-fp8, te-nvfp4, ...; also fp32, fp64;
 * or a custom recipe text), keys:
 *   accum=fp32|hopper-qgmma:fast|hopper-qgmma|fp64   accumulation of FP8 fprop GEMMs
 *   reduce=seq|pairwise|blocked                       FP32 reduction order
 *   kv=hp|fp8   kv_scales=fresh|stale                 KV cache format and calibration
 *   style=decode|prefill   refit=bf16|none            attention style, weight refit */
#define FPSIM_ENGINE_TEXT_MAX 512
typedef struct fpsim_engine_config {
    char recipe[FPSIM_ENGINE_TEXT_MAX]; /* recipe name or custom recipe text */
    char accum[64];                     /* fpsim_accum name */
    int reduce;                         /* fpsim_reduce_order */
    int kv;                             /* fpsim_kv_format */
    int kv_stale;                       /* 1: KV scales calibrated once at step 0 */
    int style;                          /* fpsim_attn_style */
    int refit_bf16;                     /* 1: weights are the trainer's masters rounded to BF16 */
} fpsim_engine_config;

/* Defaults of a generator (decode, pairwise reductions, BF16 refit) and of a trainer
 * (prefill, sequential reductions, no refit), both fp32 accumulation, KV in hp. */
void fpsim_engine_config_generator(fpsim_engine_config *c, const char *recipe);
void fpsim_engine_config_trainer(fpsim_engine_config *c, const char *recipe);
/* Parse "RECIPE[,key=value...]" over *c (keeps fields not named). Errors name the bad key or
 * value and list the valid ones. The recipe is checked whole, and so is accum against it (it
 * must reach an FP8 fprop GEMM that takes it). RECIPE ends at the first ',' followed by an
 * engine key and '=', so a custom recipe's scheme keeps its own ',' (`bf16;x=nvfp4:sr=1,rht=1,
 * kv=fp8`); the accum value keeps its ",splitk=" / ",fold=" options. '@' is refused (replay's
 * RECIPE@accum= suffix: an engine's model is its accum key). accum is stored canonical. */
fpsim_status fpsim_engine_config_parse(fpsim_engine_config *c, const char *text);
/* What needs the model: the recipe's high-precision first/last layers must leave a layer
 * quantized, and the model's dimensions must tile by the recipe's blocks. fpsim_mm_run_all
 * checks every configuration with it before any work. */
fpsim_status fpsim_engine_config_check(const fpsim_engine_config *c, const fpsim_model_config *m);
fpsim_status fpsim_engine_config_format(const fpsim_engine_config *c, char *buf, size_t cap);

/* Parts of an engine that attribution can swap one at a time. */
enum {
    FPSIM_PART_GEMM = 1u << 0,   /* the recipe's GEMMs (quantizers + accumulation) */
    FPSIM_PART_REDUCE = 1u << 1, /* reduction order and activation rounding of non-GEMM ops */
    FPSIM_PART_KV = 1u << 2,     /* KV-cache format */
    FPSIM_PART_ALL = 7u
};

typedef struct fpsim_engine fpsim_engine;

/* An engine over model m (the trainer's masters; the engine keeps its own refitted copy when
 * refit_bf16). swap (may be NULL): another engine's config that replaces this engine's numerics
 * in the layers whose bit (layer + 1, layer -1 = embedding, L = final norm and head) is set in
 * swap_layers, for the parts in swap_parts (the style stays this engine's). seed keys SR. */
fpsim_status fpsim_engine_create(fpsim_engine **out, const fpsim_engine_config *cfg,
                                 const fpsim_engine_config *swap, uint64_t swap_layers,
                                 unsigned swap_parts, const fpsim_model *m, uint64_t seed,
                                 int threads);
void fpsim_engine_free(fpsim_engine *e);
/* Refit from the trainer's masters (copy, rounded to BF16 when refit_bf16), and set the step
 * (fresh SR bits). */
fpsim_status fpsim_engine_refit(fpsim_engine *e, const fpsim_model *m, uint64_t step);
/* Per-layer KV scales (K and V of each layer: scales[2 l], scales[2 l + 1]), dequantization
 * multipliers. Ignored unless kv=fp8. */
fpsim_status fpsim_engine_set_kv_scales(fpsim_engine *e, const double *scales);
/* KV clipping: values with |x / scale| > 448 seen since the last call, and values seen. */
void fpsim_engine_kv_clip_counts(fpsim_engine *e, uint64_t *clipped, uint64_t *seen);
/* The engine's fpsim_numerics (its GEMM hook), for calibration forwards. */
const char *fpsim_engine_name(const fpsim_engine *e);

/* Activations at the canonical points of one forward of n sequences of len tokens (N = n len
 * rows): resid (L+1, N, C): embedding and each block's output; lnf (N, C): the final norm
 * output; logits (N, V). */
typedef struct fpsim_engine_acts {
    size_t n, len, rows;
    int layers, d, vocab;
    double *resid, *lnf, *logits;
} fpsim_engine_acts;
fpsim_status fpsim_engine_acts_create(fpsim_engine_acts *a, const fpsim_model_config *cfg,
                                      size_t n, size_t len);
void fpsim_engine_acts_free(fpsim_engine_acts *a);

/* Run the engine over tokens (n, len) in its style: every position's activations into acts.
 * (Decode: position t is computed from the KV cache of positions 0..t-1.) */
fpsim_status fpsim_engine_forward(fpsim_engine *e, const int32_t *tokens, size_t n, size_t len,
                                  fpsim_engine_acts *acts);

/* Decode one position for n sequences (the sampler's step): tokens (n) at position t (the
 * cache holds 0..t-1), logits (n, V) out. fpsim_engine_decode_begin resets the cache. */
fpsim_status fpsim_engine_decode_begin(fpsim_engine *e, size_t n, size_t max_len);
fpsim_status fpsim_engine_decode_step(fpsim_engine *e, const int32_t *tokens, size_t t,
                                      double *logits);

/* Copy the canonical points of the last decode step (n rows) into acts at position t. */
void fpsim_engine_decode_acts(const fpsim_engine *e, fpsim_engine_acts *acts, size_t t,
                              const double *logits);

/* KV calibration as NeMo RL calibrate_qkv_fp8_scales: run `e` (a prefill engine, the trainer)
 * over tokens in microbatches of mb sequences; per layer and microbatch the amax of post-RoPE K
 * and V; the 99.9th percentile over microbatches (linear interpolation) x 1.05 / 448. scales:
 * 2 L values (K, V per layer). */
fpsim_status fpsim_engine_calibrate_kv(fpsim_engine *e, const int32_t *tokens, size_t n,
                                       size_t len, size_t mb, double *scales);

/* Log-probabilities under temperature temp: lp (n, len) with lp[i][t] = log softmax(logits of
 * position t - 1 / temp)[tokens[i][t]] for t >= 1 (lp[i][0] = 0). */
void fpsim_mm_logprobs(double *lp, const double *logits, const int32_t *tokens, size_t n,
                       size_t len, int vocab, double temp);

/* Sample one token from logits (V) with temperature temp and nucleus top_p (1: off), using the
 * uniform u in [0, 1). Ties in the top-p ordering break by token id. */
int32_t fpsim_mm_sample(const double *logits, int vocab, double temp, double top_p, double u,
                        double *scratch, int *order);

/* ------------------------------------------------------------------------------------------ */
/* 3. The run                                                                                   */

#define FPSIM_MM_MAX_CONFIGS 12
/* The lowest sampling temperature: below it vLLM samples greedily (_SAMPLING_EPS = 1e-5,
 * vllm/sampling_params.py and v1/sample/sampler.py), which fpsim does not model; softmax(l / T)
 * would also overflow to Inf metrics as T goes to 0. */
#define FPSIM_MM_TEMPERATURE_MIN 1e-5

typedef struct fpsim_mm_config {
    fpsim_model_config model;
    fpsim_task_config task;
    int pretrain_steps;        /* FP32 steps on the task before step 0 (a usable policy) */
    fpsim_adamw_config opt;    /* the policy update between steps */
    int steps;                 /* optimizer steps (>= 1 measurement step; S steps = S samples) */
    size_t samples;            /* sequences sampled per step */
    double temperature, top_p;
    uint64_t seed;
    int threads;
    int attribution;           /* 1: per-layer and per-part swaps */
    int kv_microbatch;         /* sequences per calibration microbatch */
    /* token sequences given instead of sampled: tokens (n, len), mask (n, len) */
    const int32_t *tokens;
    const uint8_t *mask;
    size_t given_n, given_len;
    /* the pairs (generator, trainer) */
    int nconfigs;
    char names[FPSIM_MM_MAX_CONFIGS][64];
    fpsim_engine_config gen[FPSIM_MM_MAX_CONFIGS], train[FPSIM_MM_MAX_CONFIGS];
    const fpsim_model *start;  /* optional: start from this model instead of init + pretrain */
    void (*progress)(void *ctx, const char *what);
    void *progress_ctx;
} fpsim_mm_config;

void fpsim_mm_config_default(fpsim_mm_config *c);
/* The suite's configurations (section 6 of rl-and-recipes.md, arms A C B Cs D Ds E). */
fpsim_status fpsim_mm_config_suite(fpsim_mm_config *c);

/* Per configuration, per step: the summary; per layer point: the error figures. */
typedef struct fpsim_mm_point {
    double rel_l2, max_abs, cosine, lens_kl; /* lens_kl: mean over scored tokens of
                                                KL(gen || train) of softmax(head(x)) */
} fpsim_mm_point;

typedef struct fpsim_mm_result {
    char name[64];
    char gen_text[FPSIM_ENGINE_TEXT_MAX], train_text[FPSIM_ENGINE_TEXT_MAX];
    fpsim_mm_summary *summary;    /* [step] */
    fpsim_is_result *is;          /* [step][kind] (tis 2, icepop [0.5,5], seq-mask-tis
                                     [0.999,1.002], plain, seq-ratio) */
    fpsim_mm_point *points;       /* [step][L + 3]: embed, blocks 0..L-1, final norm, logits */
    double *kv_scales;            /* [step][2L] (NaN when kv is not fp8) */
    double *kv_clip;              /* [step] fraction of K/V values clipped in the generator */
    /* last step, per token (n, len): g, p, mask; per sequence length */
    double *g, *p;
    uint8_t *mask;
    int32_t *tokens;
    double reward_mean;           /* last step: mean task reward of the sampled responses */
    /* attribution (last step): metric with layer `i` swapped, i = 0..L+1 (embed, blocks, head),
       and with part j swapped over all layers (gemm, reduce, kv) */
    int have_attr;
    fpsim_mm_summary *attr_layer; /* [L + 2] */
    fpsim_mm_summary attr_part[3];
} fpsim_mm_result;

typedef struct fpsim_mm_run {
    fpsim_mm_config config;
    size_t n, len;                /* sequences and length of the last step */
    int nresults;
    fpsim_mm_result results[FPSIM_MM_MAX_CONFIGS];
} fpsim_mm_run;

fpsim_status fpsim_mm_run_all(fpsim_mm_run **out, const fpsim_mm_config *cfg);
void fpsim_mm_run_free(fpsim_mm_run *r);

/* Token file (text): one sequence per line, space-separated integer token ids; a '|' token
 * separates the prompt from the scored response (tokens after it are scored; without '|',
 * every token but the first is scored). Lines shorter than the longest are padded (PAD, not
 * scored). '#' starts a comment line. Errors name the line. */
fpsim_status fpsim_mm_tokens_read(const char *path, int vocab, int32_t **tokens, uint8_t **mask,
                                  size_t *n, size_t *len);
/* The same, with the model's context: a line of more than max_len tokens is an error naming the
 * file and line (max_len 0: no limit, as fpsim_mm_tokens_read). */
fpsim_status fpsim_mm_tokens_read_ctx(const char *path, int vocab, size_t max_len, int32_t **tokens,
                                      uint8_t **mask, size_t *n, size_t *len);

/* HDF5 output (docs/mismatch.md "HDF5 schema"); temp + rename. */
fpsim_status fpsim_mm_write_h5(const fpsim_mm_run *r, const char *path, const char *command_line);

#ifdef __cplusplus
}
#endif
#endif
