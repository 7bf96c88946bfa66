/* engine_core.c: a generator or trainer engine: weights, KV cache, prefill and decode forwards.
 *
 * One forward over R rows (tokens, each with its sequence and position), block by block:
 *   x0 = wte[token]                                        rounded to act_round(-1)
 *   ln1 = RMSNorm(x)       FP32 reduction in the engine's order (FP64 engines: the model's)
 *   qkv = ln1 W_qkv^T      the GEMM hook (recipe quantizers, accumulation model)
 *   RoPE(q, k)             rotate-half, double, rounded to act_round
 *   K, V -> cache          at (sequence, position); kv=fp8: E4M3 of x / scale (saturating at
 *                          448, vLLM's scaled_fp8 convert), dequantized as code * scale
 *   attention              each row over the cache's positions 0..pos of its sequence
 *   res2 = x + atty W_o^T, ln2, SwiGLU MLP, out = res2 + h W_down^T
 *   lnf = RMSNorm(resid[L]), logits = lnf W_head^T
 * Prefill passes all n len rows at once (every K, V written before any attention row reads);
 * decode passes the n rows of one position, the cache holding the earlier ones. Both use the
 * same code, so the style changes only the GEMM shapes (M = n len vs M = n) and nothing else:
 * with fp32 sgemm, M decides OpenBLAS's blocking, hence the bits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "fpsim_parallel.h"

static fpsim_status kernel_init(engine_kernel *k, const fpsim_engine_config *cfg,
                                const fpsim_model_config *mc, uint64_t seed, int threads)
{
    memset(k, 0, sizeof *k);
    k->cfg = *cfg;
    fpsim_status st = fpsim_engine_plan_from_recipe(&k->plan, cfg->recipe);
    if (st) return st; /* names the bad recipe and lists the presets */
    int block = fpsim_engine_plan_block(&k->plan);
    if ((st = fpsim_model_config_check(mc, block > 1 ? block : 0))) return st;
    if ((st = fpsim_accum_parse(&k->accum, cfg->accum))) return st;
    k->own_accum = k->accum.kind != FPSIM_ACCUM_FP32_BLAS;
    if ((st = fpsim_recipe_engine_create(&k->re, &k->plan, mc->layers, seed, threads))) return st;
    fpsim_recipe_engine_set_stats(k->re, 0);
    k->rnx = fpsim_recipe_engine_numerics(k->re);
    return FPSIM_OK;
}

void fpsim_engine_free(fpsim_engine *e)
{
    if (!e) return;
    for (int i = 0; i < e->nk; i++) fpsim_recipe_engine_free(e->k[i].re);
    fpsim_model_free(&e->w);
    free(e->kcache);
    free(e->vcache);
    free(e->kv_scale);
    free(e->ln);
    free(e->seq);
    free(e->pos);
    free(e->tok);
    free(e->dec_resid);
    free(e->scratch);
    fpsim_qtensor_free(&e->qa);
    fpsim_qtensor_free(&e->qb);
    free(e->fa);
    free(e->fb);
    free(e->fc);
    free(e);
}

const char *fpsim_engine_name(const fpsim_engine *e) { return e->name; }

fpsim_status fpsim_engine_create(fpsim_engine **out, const fpsim_engine_config *cfg,
                                 const fpsim_engine_config *swap, uint64_t swap_layers,
                                 unsigned swap_parts, const fpsim_model *m, uint64_t seed,
                                 int threads)
{
    *out = NULL;
    if (m->config.layers > 62)
        return fpsim_fail(FPSIM_ESHAPE, "engine: at most 62 layers (got %d)", m->config.layers);
    fpsim_engine *e = calloc(1, sizeof *e);
    if (!e) return fpsim_fail(FPSIM_ENOMEM, "engine: out of memory");
    fpsim_status st = kernel_init(&e->k[0], cfg, &m->config, seed, threads);
    e->nk = 1;
    if (!st && swap) {
        st = kernel_init(&e->k[1], swap, &m->config, seed, threads);
        e->nk = 2;
    }
    if (st) {
        if (e->nk == 2 && !e->k[1].re) e->nk = 1;
        fpsim_engine_free(e);
        return st;
    }
    e->swap_layers = swap_layers;
    e->swap_parts = swap_parts;
    e->style = cfg->style;
    e->threads = threads;
    fpsim_engine_config_format(cfg, e->name, sizeof e->name);
    memset(&e->nx, 0, sizeof e->nx);
    e->nx.name = e->name;
    e->nx.ctx = e;
    e->nx.gemm = fpsim_engine_gemm;
    e->nx.act_round = e->k[0].plan.act_round;
    const fpsim_model_config *c = &m->config;
    e->kvw = (size_t)c->kv_heads * (size_t)fpsim_model_head_dim(c);
    e->kv_scale = malloc(2 * (size_t)c->layers * sizeof *e->kv_scale);
    if (!e->kv_scale) st = fpsim_fail(FPSIM_ENOMEM, "engine: out of memory");
    else
        for (int i = 0; i < 2 * c->layers; i++) e->kv_scale[i] = 1.0;
    if (!st) st = fpsim_spec_make(&e->e4m3, FPSIM_E4M3, "nv", FPSIM_RNE, 0);
    if (!st) st = fpsim_model_clone(&e->w, m);
    if (!st) st = fpsim_engine_refit(e, m, 0);
    if (st) {
        fpsim_engine_free(e);
        return st;
    }
    *out = e;
    return FPSIM_OK;
}

fpsim_status fpsim_engine_refit(fpsim_engine *e, const fpsim_model *m, uint64_t step)
{
    if (m->num_params != e->w.num_params)
        return fpsim_fail(FPSIM_ESHAPE, "engine: refit from a model of another size");
    memcpy(e->w.params_memory, m->params_memory, m->num_params * sizeof(double));
    if (e->k[0].cfg.refit_bf16)
        for (size_t i = 0; i < m->num_params; i++)
            e->w.params_memory[i] = fpsim_f64_round_bf16(e->w.params_memory[i]);
    for (int i = 0; i < e->nk; i++) fpsim_recipe_engine_set_step(e->k[i].re, step);
    return FPSIM_OK;
}

fpsim_status fpsim_engine_set_kv_scales(fpsim_engine *e, const double *scales)
{
    for (int i = 0; i < 2 * e->w.config.layers; i++) {
        if (!(scales[i] > 0.0) || !isfinite(scales[i]))
            return fpsim_fail(FPSIM_EDATA, "engine: KV scale %d is %g (must be positive, finite)", i, scales[i]);
        e->kv_scale[i] = scales[i];
    }
    return FPSIM_OK;
}

void fpsim_engine_kv_clip_counts(fpsim_engine *e, uint64_t *clipped, uint64_t *seen)
{
    *clipped = e->kv_clipped;
    *seen = e->kv_seen;
    e->kv_clipped = e->kv_seen = 0;
}

/* ---- buffers ---- */

static fpsim_status engine_rows(fpsim_engine *e, size_t R)
{
    const fpsim_model_config *c = &e->w.config;
    size_t C = (size_t)c->d, Q = (size_t)fpsim_model_qkv_dim(c), F = (size_t)c->ffn;
    size_t need_scratch = (size_t)(4 * (c->seq + fpsim_model_head_dim(c) + 64) + c->d + 64);
    if (need_scratch > e->scratch_cap) {
        free(e->scratch);
        e->scratch = malloc(need_scratch * sizeof(float));
        if (!e->scratch) return fpsim_fail(FPSIM_ENOMEM, "engine: out of memory");
        e->scratch_cap = need_scratch;
    }
    if (R <= e->cap_rows) return FPSIM_OK;
    free(e->ln);
    free(e->seq);
    free(e->pos);
    free(e->tok);
    size_t per = C + Q + C + C + C + C + 2 * F + F + C + 1;
    e->ln = malloc(R * per * sizeof(double));
    e->seq = malloc(R * sizeof *e->seq);
    e->pos = malloc(R * sizeof *e->pos);
    e->tok = malloc(R * sizeof *e->tok);
    if (!e->ln || !e->seq || !e->pos || !e->tok) {
        e->cap_rows = 0;
        return fpsim_fail(FPSIM_ENOMEM, "engine: out of memory for %zu rows", R);
    }
    e->qkv = e->ln + R * C;
    e->atty = e->qkv + R * Q;
    e->proj = e->atty + R * C;
    e->res2 = e->proj + R * C;
    e->down = e->res2 + R * C;
    e->gu = e->down + R * C;
    e->h = e->gu + R * 2 * F;
    e->rstd = e->h + R * F + R * C; /* R values */
    e->cap_rows = R;
    return FPSIM_OK;
}

static fpsim_status engine_cache(fpsim_engine *e, size_t n, size_t len)
{
    if (len > (size_t)e->w.config.seq)
        return fpsim_fail(FPSIM_ESHAPE, "engine: sequence length %zu exceeds the model's context %d",
                          len, e->w.config.seq);
    size_t need = (size_t)e->w.config.layers * n * len * e->kvw;
    if (n * len > e->cache_n * e->cache_len || !e->kcache) {
        free(e->kcache);
        free(e->vcache);
        e->kcache = malloc(need * sizeof(double));
        e->vcache = malloc(need * sizeof(double));
        if (!e->kcache || !e->vcache) return fpsim_fail(FPSIM_ENOMEM, "engine: out of memory for the KV cache");
    }
    e->cache_n = n;
    e->cache_len = len;
    return FPSIM_OK;
}

static double act(double v, int a)
{
    if (a == FPSIM_ACT_BF16) return fpsim_f64_round_bf16(v);
    if (a == FPSIM_ACT_FP32) return (double)(float)v;
    return v;
}

/* E4M3 with a per-layer scale: y = fl32(x / s) saturated to +-448, RNE; value = code * s. */
static double kv_fp8(fpsim_engine *e, double x, double s)
{
    float y = (float)x / (float)s;
    e->kv_seen++;
    if (y > 448.0f) { y = 448.0f; e->kv_clipped++; }
    else if (y < -448.0f) { y = -448.0f; e->kv_clipped++; }
    uint32_t bits;
    memcpy(&bits, &y, 4);
    uint32_t code = fpsim_round_f32(bits, &e->e4m3, 0);
    uint32_t db = fpsim_decode_f32(code, &e->e4m3);
    float v;
    memcpy(&v, &db, 4);
    return (double)(v * (float)s);
}

static void rmsnorm(fpsim_engine *e, const engine_kernel *k, double *out, const double *x,
                    const double *w, size_t R)
{
    const fpsim_model_config *c = &e->w.config;
    int ar = k->plan.act_round;
    if (ar == FPSIM_ACT_FP64) fpsim_rmsnorm_forward(out, e->rstd, x, w, R, (size_t)c->d, c->norm_eps, ar);
    else fpsim_engine_rmsnorm_f32(out, x, w, R, (size_t)c->d, c->norm_eps, k->cfg.reduce, ar, e->scratch);
}

static double *param(fpsim_engine *e, int which, int layer)
{
    double *d = NULL;
    size_t n = 0;
    fpsim_model_param_slice(&e->w, &e->w.params, which, layer, &d, &n);
    return d;
}

typedef struct attn_job {
    fpsim_engine *e;
    const engine_kernel *k;
    int layer;
    size_t R;
    float *scratch; /* per-chunk scratch, chunk-indexed */
    size_t scratch_per;
} attn_job;

static void attention_rows(void *ctx, size_t begin, size_t end)
{
    attn_job *j = ctx;
    fpsim_engine *e = j->e;
    const fpsim_model_config *c = &e->w.config;
    int hd = fpsim_model_head_dim(c), group = c->heads / c->kv_heads;
    size_t Q = (size_t)fpsim_model_qkv_dim(c), C = (size_t)c->d;
    int ar = j->k->plan.act_round;
    size_t lbase = (size_t)j->layer * e->cache_n * e->cache_len * e->kvw;
    float *scratch = j->scratch + (begin / 16) * j->scratch_per;
    double *probs = (double *)(scratch + 4 * (c->seq + hd + 64));
    for (size_t r = begin; r < end; r++) {
        size_t base = lbase + e->seq[r] * e->cache_len * e->kvw;
        int t = (int)e->pos[r];
        for (int h = 0; h < c->heads; h++) {
            const double *q = e->qkv + r * Q + (size_t)h * hd;
            size_t g = (size_t)(h / group) * (size_t)hd;
            double *o = e->atty + r * C + (size_t)h * hd;
            if (ar == FPSIM_ACT_FP64)
                fpsim_attention_row(o, probs, q, e->kcache + base + g, e->vcache + base + g, e->kvw,
                                    t, hd, ar);
            else
                fpsim_engine_attention_row_f32(o, q, e->kcache + base + g, e->vcache + base + g,
                                               e->kvw, t, hd, j->k->cfg.reduce, ar, scratch);
        }
    }
}

/* The forward of R rows (e->tok, e->seq, e->pos set): resid (L+1, R, C), lnf (R, C),
 * logits (R, V). */
static fpsim_status rows_forward(fpsim_engine *e, size_t R, double *resid, double *lnf,
                                 double *logits)
{
    const fpsim_model_config *c = &e->w.config;
    size_t C = (size_t)c->d, Q = (size_t)fpsim_model_qkv_dim(c), F = (size_t)c->ffn;
    int L = c->layers, hd = fpsim_model_head_dim(c);
    size_t kvw = e->kvw;
    fpsim_status st;
    /* embedding */
    int ar0 = engine_kernel_at(e, -1, FPSIM_PART_REDUCE)->plan.act_round;
    for (size_t r = 0; r < R; r++) {
        if (e->tok[r] < 0 || e->tok[r] >= c->vocab)
            return fpsim_fail(FPSIM_EDATA, "engine: token %d outside the vocabulary [0, %d)",
                              (int)e->tok[r], c->vocab);
        for (size_t i = 0; i < C; i++)
            resid[r * C + i] = act(e->w.params.wte[(size_t)e->tok[r] * C + i], ar0);
    }
    size_t scratch_per = (size_t)(4 * (c->seq + hd + 64)) + 2 * (size_t)(c->seq + 8);
    size_t chunks = (R + 15) / 16;
    float *ascratch = malloc(chunks * scratch_per * sizeof(float));
    if (!ascratch) return fpsim_fail(FPSIM_ENOMEM, "engine: out of memory");
    for (int l = 0; l < L; l++) {
        const engine_kernel *kr = engine_kernel_at(e, l, FPSIM_PART_REDUCE);
        const engine_kernel *kk = engine_kernel_at(e, l, FPSIM_PART_KV);
        int ar = kr->plan.act_round;
        const double *in = resid + (size_t)l * R * C;
        double *out = resid + (size_t)(l + 1) * R * C;
        rmsnorm(e, kr, e->ln, in, param(e, FPSIM_PARAM_LN1W, l), R);
        if ((st = fpsim_linear_forward(&e->nx, l, FPSIM_SITE_QKV, e->qkv, e->ln,
                                       param(e, FPSIM_PARAM_QKVW, l), R, C, Q)))
            goto fail;
        /* RoPE on q and k heads, rotate-half, at each row's own position */
        int half = hd / 2, rot = c->heads + c->kv_heads;
        for (size_t r = 0; r < R; r++) {
            double *row = e->qkv + r * Q;
            const double *cs = e->w.rope_cos + e->pos[r] * (size_t)half;
            const double *sn = e->w.rope_sin + e->pos[r] * (size_t)half;
            for (int h = 0; h < rot; h++) {
                double *x = row + (size_t)h * hd;
                for (int i = 0; i < half; i++) {
                    double x1 = x[i], x2 = x[i + half];
                    x[i] = x1 * cs[i] - x2 * sn[i];
                    x[i + half] = x2 * cs[i] + x1 * sn[i];
                }
            }
            fpsim_act_round_array(row, (size_t)rot * hd, ar);
        }
        /* K, V into the cache */
        size_t kcol = (size_t)c->heads * hd, vcol = kcol + kvw;
        size_t lbase = (size_t)l * e->cache_n * e->cache_len * kvw;
        int fp8 = kk->cfg.kv == FPSIM_KV_FP8;
        double sk = e->kv_scale[2 * l], sv = e->kv_scale[2 * l + 1];
        for (size_t r = 0; r < R; r++) {
            size_t at = lbase + (e->seq[r] * e->cache_len + e->pos[r]) * kvw;
            const double *k = e->qkv + r * Q + kcol, *v = e->qkv + r * Q + vcol;
            for (size_t i = 0; i < kvw; i++) {
                if (e->amax) {
                    if (fabs(k[i]) > e->amax[2 * l]) e->amax[2 * l] = fabs(k[i]);
                    if (fabs(v[i]) > e->amax[2 * l + 1]) e->amax[2 * l + 1] = fabs(v[i]);
                }
                e->kcache[at + i] = fp8 ? kv_fp8(e, k[i], sk) : k[i];
                e->vcache[at + i] = fp8 ? kv_fp8(e, v[i], sv) : v[i];
            }
        }
        attn_job job = {e, kr, l, R, ascratch, scratch_per};
        if ((st = fpsim_parallel_for(R, 16, attention_rows, &job, e->threads))) goto fail;
        if ((st = fpsim_linear_forward(&e->nx, l, FPSIM_SITE_ATTN_OUT, e->proj, e->atty,
                                       param(e, FPSIM_PARAM_ATTPROJW, l), R, C, C)))
            goto fail;
        for (size_t i = 0; i < R * C; i++) e->res2[i] = act(in[i] + e->proj[i], ar);
        rmsnorm(e, kr, e->ln, e->res2, param(e, FPSIM_PARAM_LN2W, l), R);
        if ((st = fpsim_linear_forward(&e->nx, l, FPSIM_SITE_GATE_UP, e->gu, e->ln,
                                       param(e, FPSIM_PARAM_GATEUPW, l), R, C, 2 * F)))
            goto fail;
        fpsim_swiglu_forward(e->h, e->gu, R, F, ar);
        if ((st = fpsim_linear_forward(&e->nx, l, FPSIM_SITE_DOWN, e->down, e->h,
                                       param(e, FPSIM_PARAM_DOWNW, l), R, F, C)))
            goto fail;
        for (size_t i = 0; i < R * C; i++) out[i] = act(e->res2[i] + e->down[i], ar);
    }
    free(ascratch);
    ascratch = NULL;
    rmsnorm(e, engine_kernel_at(e, L, FPSIM_PART_REDUCE), lnf, resid + (size_t)L * R * C,
            e->w.params.lnfw, R);
    return fpsim_linear_forward(&e->nx, L, FPSIM_SITE_LM_HEAD, logits, lnf, e->w.params.lmheadw,
                                R, C, (size_t)c->vocab);
fail:
    free(ascratch);
    return st;
}

/* ---- public forwards ---- */

fpsim_status fpsim_engine_acts_create(fpsim_engine_acts *a, const fpsim_model_config *cfg,
                                      size_t n, size_t len)
{
    memset(a, 0, sizeof *a);
    a->n = n;
    a->len = len;
    a->rows = n * len;
    a->layers = cfg->layers;
    a->d = cfg->d;
    a->vocab = cfg->vocab;
    size_t C = (size_t)cfg->d;
    a->resid = malloc(((size_t)(cfg->layers + 1) * a->rows * C + a->rows * C +
                       a->rows * (size_t)cfg->vocab) * sizeof(double));
    if (!a->resid) return fpsim_fail(FPSIM_ENOMEM, "engine: out of memory for activations");
    a->lnf = a->resid + (size_t)(cfg->layers + 1) * a->rows * C;
    a->logits = a->lnf + a->rows * C;
    return FPSIM_OK;
}

void fpsim_engine_acts_free(fpsim_engine_acts *a)
{
    free(a->resid);
    memset(a, 0, sizeof *a);
}

fpsim_status fpsim_engine_decode_begin(fpsim_engine *e, size_t n, size_t max_len)
{
    fpsim_status st = engine_cache(e, n, max_len);
    if (st) return st;
    if ((st = engine_rows(e, n))) return st;
    const fpsim_model_config *c = &e->w.config;
    free(e->dec_resid);
    e->dec_resid = malloc(((size_t)(c->layers + 1) * n * (size_t)c->d + n * (size_t)c->d) * sizeof(double));
    if (!e->dec_resid) return fpsim_fail(FPSIM_ENOMEM, "engine: out of memory");
    e->dec_lnf = e->dec_resid + (size_t)(c->layers + 1) * n * (size_t)c->d;
    return FPSIM_OK;
}

fpsim_status fpsim_engine_decode_step(fpsim_engine *e, const int32_t *tokens, size_t t,
                                      double *logits)
{
    if (t >= e->cache_len) return fpsim_fail(FPSIM_ESHAPE, "engine: position %zu past the cache", t);
    for (size_t s = 0; s < e->cache_n; s++) {
        e->tok[s] = tokens[s];
        e->seq[s] = s;
        e->pos[s] = t;
    }
    return rows_forward(e, e->cache_n, e->dec_resid, e->dec_lnf, logits);
}

void fpsim_engine_decode_acts(const fpsim_engine *e, fpsim_engine_acts *a, size_t t,
                              const double *logits)
{
    size_t n = e->cache_n, C = (size_t)a->d, V = (size_t)a->vocab;
    for (size_t s = 0; s < n; s++) {
        size_t row = s * a->len + t;
        for (int l = 0; l <= a->layers; l++)
            memcpy(a->resid + ((size_t)l * a->rows + row) * C, e->dec_resid + ((size_t)l * n + s) * C,
                   C * sizeof(double));
        memcpy(a->lnf + row * C, e->dec_lnf + s * C, C * sizeof(double));
        memcpy(a->logits + row * V, logits + s * V, V * sizeof(double));
    }
}

fpsim_status fpsim_engine_forward(fpsim_engine *e, const int32_t *tokens, size_t n, size_t len,
                                  fpsim_engine_acts *a)
{
    const fpsim_model_config *c = &e->w.config;
    size_t V = (size_t)c->vocab;
    fpsim_status st;
    if (e->style == FPSIM_STYLE_PREFILL) {
        size_t R = n * len;
        if ((st = engine_cache(e, n, len))) return st;
        if ((st = engine_rows(e, R))) return st;
        for (size_t r = 0; r < R; r++) {
            e->tok[r] = tokens[r];
            e->seq[r] = r / len;
            e->pos[r] = r % len;
        }
        return rows_forward(e, R, a->resid, a->lnf, a->logits);
    }
    if ((st = fpsim_engine_decode_begin(e, n, len))) return st;
    int32_t *col = malloc(n * sizeof *col);
    double *lg = malloc(n * V * sizeof *lg);
    if (!col || !lg) {
        free(col);
        free(lg);
        return fpsim_fail(FPSIM_ENOMEM, "engine: out of memory");
    }
    for (size_t t = 0; t < len && !st; t++) {
        for (size_t s = 0; s < n; s++) col[s] = tokens[s * len + t];
        if ((st = fpsim_engine_decode_step(e, col, t, lg))) break;
        fpsim_engine_decode_acts(e, a, t, lg);
    }
    free(col);
    free(lg);
    return st;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

fpsim_status fpsim_engine_calibrate_kv(fpsim_engine *e, const int32_t *tokens, size_t n,
                                       size_t len, size_t mb, double *scales)
{
    int L = e->w.config.layers;
    if (mb == 0) mb = 1;
    size_t nmb = (n + mb - 1) / mb;
    double *amax = calloc(nmb * 2 * (size_t)L + nmb, sizeof *amax);
    fpsim_engine_acts a;
    fpsim_status st = amax ? fpsim_engine_acts_create(&a, &e->w.config, mb, len)
                           : fpsim_fail(FPSIM_ENOMEM, "engine: out of memory");
    if (st) {
        free(amax);
        return st;
    }
    int style = e->style;
    e->style = FPSIM_STYLE_PREFILL;
    for (size_t b = 0; b < nmb && !st; b++) {
        size_t cnt = b + 1 < nmb ? mb : n - b * mb;
        e->amax = amax + b * 2 * (size_t)L;
        a.n = cnt;
        a.rows = cnt * len;
        st = fpsim_engine_forward(e, tokens + b * mb * len, cnt, len, &a);
    }
    e->amax = NULL;
    e->style = style;
    /* p99.9 over microbatches, x 1.05 margin, / 448 (NeMo RL calibrate_qkv_fp8_scales) */
    double *col = amax + nmb * 2 * (size_t)L;
    for (int i = 0; i < 2 * L && !st; i++) {
        for (size_t b = 0; b < nmb; b++) col[b] = amax[b * 2 * (size_t)L + (size_t)i];
        qsort(col, nmb, sizeof *col, cmp_double);
        double pos = 0.999 * (double)(nmb - 1);
        size_t lo = (size_t)floor(pos);
        double q = lo + 1 < nmb ? col[lo] + (pos - (double)lo) * (col[lo + 1] - col[lo]) : col[nmb - 1];
        scales[i] = q * 1.05 / 448.0;
        if (!(scales[i] > 0.0)) scales[i] = 1.0;
    }
    fpsim_engine_acts_free(&a);
    free(amax);
    return st;
}
