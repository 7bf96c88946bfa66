/* mismatch_run.c: sample with the generator, score with both engines, compare layer by layer.
 *
 * Per optimizer step s and configuration (generator G, trainer T):
 *   1. refit: G and T take the trainer's FP32 masters (G rounds them to BF16 when refit=bf16,
 *      then its recipe re-quantizes them in every GEMM, as vLLM's load_weights does);
 *   2. KV scales (G with kv=fp8): T runs over a calibration batch (the task's batch 1000 + s,
 *      one sequence per microbatch) and the scales are p99.9(amax) x 1.05 / 448 per layer for K
 *      and V; recomputed every step (fresh) or only at step 0 (stale);
 *   3. G samples `samples` responses (decode with its KV cache) to the task's prompts
 *      (problem s * samples + i of the task stream), temperature and top-p, uniforms from
 *      splitmix64(seed, step, sequence, position); a response ends at '$' and is padded after;
 *   4. both engines score every token (G in its style, T prefill): g and p, the summary, the IS
 *      corrections, and the canonical points of the two forwards compared on the rows that
 *      predict a scored token;
 *   5. the policy update: one FP32 AdamW step on the task's next training batch (a stand-in for
 *      the RL update: the mismatch is measured, not learned from).
 * Attribution (last step): G rebuilt with one layer (or one part, all layers) on T's numerics,
 * scoring the same tokens. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "fpsim_mismatch.h"

void fpsim_mm_config_default(fpsim_mm_config *c)
{
    memset(c, 0, sizeof *c);
    c->model = fpsim_model_config_default();
    c->task = fpsim_task_config_default();
    c->pretrain_steps = 150;
    c->opt = fpsim_adamw_config_default();
    c->steps = 1;
    c->samples = 32;
    c->temperature = 1.0;
    c->top_p = 1.0;
    c->seed = 1;
    c->threads = 0;
    c->attribution = 1;
    c->kv_microbatch = 1;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double uniform_at(uint64_t seed, uint64_t step, uint64_t seq, uint64_t pos)
{
    uint64_t s = seed ^ (step * 0xD1B54A32D192ED03ull) ^ (seq * 0x8CB92BA72F3D8DD7ull) ^
                 (pos * 0xABC98388FB8FAC03ull);
    splitmix64(&s);
    return (double)(splitmix64(&s) >> 11) * (1.0 / 9007199254740992.0);
}

void fpsim_mm_run_free(fpsim_mm_run *r)
{
    if (!r) return;
    for (int i = 0; i < r->nresults; i++) {
        fpsim_mm_result *x = &r->results[i];
        free(x->summary);
        free(x->is);
        free(x->points);
        free(x->kv_scales);
        free(x->kv_clip);
        free(x->g); /* p lives in g's block */
        free(x->mask);
        free(x->tokens);
        free(x->attr_layer);
    }
    free(r);
}

/* ---- sampling ---- */

typedef struct sampled {
    int32_t *tokens;
    uint8_t *mask;
    double reward;
} sampled;

/* Samples with g in decode style; when acts is not NULL every step's canonical points are kept
 * (the generator's scoring forward: decode is deterministic, so it equals a second pass). */
static fpsim_status sample_responses(fpsim_engine *g, const fpsim_mm_config *cfg, int step,
                                     size_t n, size_t len, sampled *out, fpsim_engine_acts *acts)
{
    const fpsim_model_config *mc = &cfg->model;
    size_t cap = len;
    int32_t *prob = malloc(n * cap * sizeof *prob);
    size_t *plen = malloc(n * sizeof *plen), *tlen = malloc(n * sizeof *tlen);
    long *abc = malloc(3 * n * sizeof *abc);
    double *logits = malloc(n * (size_t)mc->vocab * sizeof *logits);
    double *scratch = malloc((size_t)mc->vocab * sizeof *scratch);
    int *order = malloc((size_t)mc->vocab * sizeof *order);
    int32_t *col = malloc(n * sizeof *col);
    uint8_t *done = calloc(n, 1);
    fpsim_status st = FPSIM_OK;
    if (!prob || !plen || !tlen || !abc || !logits || !scratch || !order || !col || !done) {
        st = fpsim_fail(FPSIM_ENOMEM, "out of memory sampling");
        goto out;
    }
    for (size_t s = 0; s < n && !st; s++) {
        prob[s * cap] = FPSIM_TOK_BOS;
        st = fpsim_task_problem(&cfg->task, (uint64_t)step * n + s, prob + s * cap + 1, cap - 1,
                                &plen[s], &tlen[s], &abc[3 * s], &abc[3 * s + 1], &abc[3 * s + 2]);
        plen[s] += 1; /* BOS */
    }
    if (st) goto out;
    if ((st = fpsim_engine_decode_begin(g, n, len))) goto out;
    memset(out->mask, 0, n * len);
    for (size_t s = 0; s < n; s++) out->tokens[s * len] = FPSIM_TOK_BOS;
    for (size_t t = 0; t < len && !st; t++) {
        for (size_t s = 0; s < n; s++) col[s] = out->tokens[s * len + t];
        if ((st = fpsim_engine_decode_step(g, col, t, logits))) break;
        if (acts) fpsim_engine_decode_acts(g, acts, t, logits);
        if (t + 1 == len) break;
        for (size_t s = 0; s < n; s++) {
            int32_t next;
            if (t + 1 < plen[s]) {
                next = prob[s * cap + t + 1];
            } else if (done[s]) {
                next = FPSIM_TOK_PAD;
            } else {
                double u = uniform_at(cfg->seed, (uint64_t)step, s, t);
                next = fpsim_mm_sample(logits + s * (size_t)mc->vocab, mc->vocab, cfg->temperature,
                                       cfg->top_p, u, scratch, order);
                out->mask[s * len + t + 1] = 1;
                if (next == FPSIM_TOK_END) done[s] = 1;
            }
            out->tokens[s * len + t + 1] = next;
        }
    }
    double rsum = 0.0;
    for (size_t s = 0; s < n; s++) {
        const int32_t *resp = out->tokens + s * len + plen[s];
        size_t rl = 0;
        while (plen[s] + rl < len && out->mask[s * len + plen[s] + rl]) rl++;
        rsum += fpsim_task_reward(abc[3 * s], abc[3 * s + 1], abc[3 * s + 2], resp, rl);
    }
    out->reward = rsum / (double)n;
out:
    free(prob);
    free(plen);
    free(tlen);
    free(abc);
    free(logits);
    free(scratch);
    free(order);
    free(col);
    free(done);
    return st;
}

/* ---- layer points ---- */

typedef struct scored_rows {
    size_t *rows; /* rows (s * len + t - 1) that predict a scored token t */
    size_t count;
} scored_rows;

static void point_compare(fpsim_mm_point *pt, const double *a, const double *b, size_t cols,
                          const scored_rows *sr)
{
    double e2 = 0, r2 = 0, c2 = 0, dot = 0, mx = 0;
    for (size_t k = 0; k < sr->count; k++) {
        const double *x = a + sr->rows[k] * cols, *y = b + sr->rows[k] * cols;
        for (size_t j = 0; j < cols; j++) {
            double d = x[j] - y[j];
            e2 += d * d;
            r2 += y[j] * y[j];
            c2 += x[j] * x[j];
            dot += x[j] * y[j];
            if (fabs(d) > mx) mx = fabs(d);
        }
    }
    pt->rel_l2 = r2 > 0 ? sqrt(e2 / r2) : (e2 > 0 ? INFINITY : 0.0);
    pt->max_abs = mx;
    pt->cosine = (r2 > 0 && c2 > 0) ? dot / sqrt(r2 * c2) : NAN;
}

/* Mean over scored rows of KL(softmax(x) || softmax(y)), rows of V logits. */
static double rows_kl(const double *x, const double *y, size_t V, size_t count)
{
    double total = 0.0;
    for (size_t k = 0; k < count; k++) {
        const double *a = x + k * V, *b = y + k * V;
        double ma = -INFINITY, mb = -INFINITY;
        for (size_t j = 0; j < V; j++) {
            ma = a[j] > ma ? a[j] : ma;
            mb = b[j] > mb ? b[j] : mb;
        }
        double sa = 0, sb = 0;
        for (size_t j = 0; j < V; j++) {
            sa += exp(a[j] - ma);
            sb += exp(b[j] - mb);
        }
        double la = ma + log(sa), lb = mb + log(sb), kl = 0.0;
        for (size_t j = 0; j < V; j++) {
            double lpa = a[j] - la, lpb = b[j] - lb;
            kl += exp(lpa) * (lpa - lpb);
        }
        total += kl;
    }
    return count ? total / (double)count : NAN;
}

/* Logit lens in FP64: logits = RMSNorm(x) * lnfw . W_head^T of the scored rows of x (normed = 0:
 * x is already the final norm's output). */
static void lens_logits(double *out, double *tmp, const double *x, const fpsim_model *m,
                        const scored_rows *sr, int normed)
{
    size_t C = (size_t)m->config.d, V = (size_t)m->config.vocab;
    for (size_t k = 0; k < sr->count; k++) {
        const double *r = x + sr->rows[k] * C;
        double *o = tmp + k * C;
        if (normed) {
            memcpy(o, r, C * sizeof *o);
            continue;
        }
        double ss = 0;
        for (size_t j = 0; j < C; j++) ss += r[j] * r[j];
        double rstd = 1.0 / sqrt(ss / (double)C + m->config.norm_eps);
        for (size_t j = 0; j < C; j++) o[j] = r[j] * rstd * m->params.lnfw[j];
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)sr->count, (int)V, (int)C, 1.0, tmp,
                (int)C, m->params.lmheadw, (int)C, 0.0, out, (int)V);
}

static fpsim_status compare_points(fpsim_mm_point *pts, const fpsim_engine_acts *ga,
                                   const fpsim_engine_acts *ta, const fpsim_model *m,
                                   const scored_rows *sr)
{
    int L = m->config.layers;
    size_t C = (size_t)m->config.d, V = (size_t)m->config.vocab;
    double *la = malloc(sr->count * (2 * V + 2 * C + 1) * sizeof *la);
    if (!la) return fpsim_fail(FPSIM_ENOMEM, "out of memory for the logit lens");
    double *lb = la + sr->count * V, *tmp = lb + sr->count * V;
    for (int i = 0; i <= L + 2; i++) {
        const double *a, *b;
        size_t cols = C;
        int normed = 0;
        if (i <= L) {
            a = ga->resid + (size_t)i * ga->rows * C;
            b = ta->resid + (size_t)i * ta->rows * C;
        } else if (i == L + 1) {
            a = ga->lnf;
            b = ta->lnf;
            normed = 1;
        } else {
            a = ga->logits;
            b = ta->logits;
            cols = V;
        }
        point_compare(&pts[i], a, b, cols, sr);
        if (i <= L + 1) {
            lens_logits(la, tmp, a, m, sr, normed);
            lens_logits(lb, tmp, b, m, sr, normed);
        } else {
            for (size_t k = 0; k < sr->count; k++) {
                memcpy(la + k * V, a + sr->rows[k] * V, V * sizeof *la);
                memcpy(lb + k * V, b + sr->rows[k] * V, V * sizeof *lb);
            }
        }
        pts[i].lens_kl = rows_kl(la, lb, V, sr->count);
    }
    free(la);
    return FPSIM_OK;
}

/* ---- one configuration at one step ---- */

typedef struct mm_state {
    fpsim_engine *gen, *train;
    double *scales0; /* step 0's KV scales (stale) */
} mm_state;

static fpsim_status score(fpsim_engine *e, const int32_t *tokens, size_t n, size_t len,
                          fpsim_engine_acts *a, double *lp, double temp)
{
    fpsim_status st = fpsim_engine_forward(e, tokens, n, len, a);
    if (!st) fpsim_mm_logprobs(lp, a->logits, tokens, n, len, a->vocab, temp);
    return st;
}

static const double is_lo[FPSIM_IS_COUNT] = {0.0, 0.0, 0.5, 0.999, 0.0};
static const double is_hi[FPSIM_IS_COUNT] = {INFINITY, 2.0, 5.0, 1.002, INFINITY};

static fpsim_status run_one(fpsim_mm_run *run, int ci, mm_state *ms, const fpsim_model *m,
                            int step, int last)
{
    const fpsim_mm_config *cfg = &run->config;
    fpsim_mm_result *res = &run->results[ci];
    int L = m->config.layers;
    size_t n, len;
    fpsim_status st;
    if ((st = fpsim_engine_refit(ms->gen, m, (uint64_t)step))) return st;
    if ((st = fpsim_engine_refit(ms->train, m, (uint64_t)step))) return st;
    /* KV scales */
    double *sc = res->kv_scales + (size_t)step * 2 * L;
    for (int i = 0; i < 2 * L; i++) sc[i] = NAN;
    if (cfg->gen[ci].kv == FPSIM_KV_FP8) {
        if (!cfg->gen[ci].kv_stale || step == 0) {
            fpsim_model_config cc = m->config;
            cc.batch = 8;
            size_t tok_n = (size_t)cc.batch * (size_t)cc.seq;
            int32_t *in = malloc(tok_n * sizeof *in), *tg = malloc(tok_n * sizeof *tg);
            uint8_t *mk = malloc(tok_n);
            st = (in && tg && mk) ? fpsim_task_batch(&cfg->task, &cc, 1000 + (uint64_t)step, in, tg, mk)
                                  : fpsim_fail(FPSIM_ENOMEM, "out of memory");
            if (!st)
                st = fpsim_engine_calibrate_kv(ms->train, in, (size_t)cc.batch, (size_t)cc.seq,
                                               (size_t)cfg->kv_microbatch, ms->scales0);
            free(in);
            free(tg);
            free(mk);
            if (st) return st;
        }
        memcpy(sc, ms->scales0, 2 * (size_t)L * sizeof *sc);
        if ((st = fpsim_engine_set_kv_scales(ms->gen, sc))) return st;
    }
    /* tokens */
    int32_t *tokens = NULL;
    uint8_t *mask = NULL;
    double reward = NAN;
    if (cfg->tokens) {
        n = cfg->given_n;
        len = cfg->given_len;
        tokens = malloc(n * len * sizeof *tokens);
        mask = malloc(n * len);
        if (!tokens || !mask) st = fpsim_fail(FPSIM_ENOMEM, "out of memory");
        else {
            memcpy(tokens, cfg->tokens, n * len * sizeof *tokens);
            memcpy(mask, cfg->mask, n * len);
        }
    } else {
        n = cfg->samples;
        len = 1 + fpsim_task_max_problem_len(&cfg->task);
    }
    fpsim_engine_acts ga = {0}, ta = {0};
    double *g = malloc(2 * n * len * sizeof *g), *p = g ? g + n * len : NULL;
    scored_rows sr = {malloc(n * len * sizeof(size_t)), 0};
    if (!st && (!g || !sr.rows)) st = fpsim_fail(FPSIM_ENOMEM, "out of memory");
    if (!st) st = fpsim_engine_acts_create(&ga, &m->config, n, len);
    if (!st) st = fpsim_engine_acts_create(&ta, &m->config, n, len);
    uint64_t clip0, seen0;
    fpsim_engine_kv_clip_counts(ms->gen, &clip0, &seen0); /* reset */
    if (!st && !cfg->tokens) {
        sampled sp = {malloc(n * len * sizeof(int32_t)), malloc(n * len), 0};
        tokens = sp.tokens;
        mask = sp.mask;
        if (!tokens || !mask) st = fpsim_fail(FPSIM_ENOMEM, "out of memory");
        /* a decode generator scores while it samples; a prefill one scores afterwards */
        int decode = cfg->gen[ci].style == FPSIM_STYLE_DECODE;
        if (!st) st = sample_responses(ms->gen, cfg, step, n, len, &sp, decode ? &ga : NULL);
        reward = sp.reward;
        if (!st && decode) fpsim_mm_logprobs(g, ga.logits, tokens, n, len, ga.vocab, cfg->temperature);
        else if (!st) st = score(ms->gen, tokens, n, len, &ga, g, cfg->temperature);
    } else if (!st) {
        st = score(ms->gen, tokens, n, len, &ga, g, cfg->temperature);
    }
    if (!st) st = score(ms->train, tokens, n, len, &ta, p, cfg->temperature);
    if (!st) {
        uint64_t clip, seen;
        fpsim_engine_kv_clip_counts(ms->gen, &clip, &seen);
        res->kv_clip[step] = seen ? (double)clip / (double)seen : 0.0;
        for (size_t s = 0; s < n; s++) {
            mask[s * len] = 0;
            for (size_t t = 1; t < len; t++)
                if (mask[s * len + t]) sr.rows[sr.count++] = s * len + t - 1;
        }
        st = fpsim_mm_summarize(&res->summary[step], g, p, mask, n, len);
    }
    for (int k = 0; k < FPSIM_IS_COUNT && !st; k++)
        st = fpsim_is_weights(&res->is[(size_t)step * FPSIM_IS_COUNT + (size_t)k], NULL,
                              (fpsim_is_kind)k, is_lo[k], is_hi[k], g, p, mask, n, len);
    if (!st) st = compare_points(res->points + (size_t)step * (size_t)(L + 3), &ga, &ta, m, &sr);
    if (!st && last) {
        run->n = n;
        run->len = len;
        res->reward_mean = reward;
        free(res->g);
        free(res->tokens);
        free(res->mask);
        res->g = g;
        res->p = p;
        res->tokens = tokens;
        res->mask = mask;
        g = NULL;
        tokens = NULL;
        mask = NULL;
        /* attribution */
        if (cfg->attribution) {
            double *ga2 = malloc(n * len * sizeof *ga2);
            if (!ga2) st = fpsim_fail(FPSIM_ENOMEM, "out of memory");
            for (int i = 0; i < L + 2 + 3 && !st; i++) {
                fpsim_engine *sw = NULL;
                uint64_t layers = i < L + 2 ? (1ull << i) : ~0ull;
                unsigned parts = i < L + 2 ? FPSIM_PART_ALL : (1u << (i - (L + 2)));
                st = fpsim_engine_create(&sw, &cfg->gen[ci], &cfg->train[ci], layers, parts, m,
                                         cfg->seed, cfg->threads);
                if (!st) st = fpsim_engine_refit(sw, m, (uint64_t)step);
                if (!st && cfg->gen[ci].kv == FPSIM_KV_FP8) st = fpsim_engine_set_kv_scales(sw, sc);
                if (!st) st = score(sw, res->tokens, n, len, &ga, ga2, cfg->temperature);
                if (!st) {
                    fpsim_mm_summary *into = i < L + 2 ? &res->attr_layer[i] : &res->attr_part[i - (L + 2)];
                    st = fpsim_mm_summarize(into, ga2, res->p, res->mask, n, len);
                }
                fpsim_engine_free(sw);
                if (cfg->progress && !st) cfg->progress(cfg->progress_ctx, "attribution");
            }
            res->have_attr = !st;
            free(ga2);
        }
    }
    fpsim_engine_acts_free(&ga);
    fpsim_engine_acts_free(&ta);
    free(sr.rows);
    free(g);
    free(tokens);
    free(mask);
    return st;
}

/* Bytes one engine holds for scoring n sequences of len tokens: its copy of the model
 * (fpsim_engine_create clones it whole), its KV cache (K and V, every layer) and its row buffers
 * (every token at once for a prefill engine, one row per sequence for a decode one: engine_rows). */
static double engine_bytes(const fpsim_engine_config *e, const fpsim_model_config *m, double n, double len)
{
    const double C = (double)m->d, Q = (double)fpsim_model_qkv_dim(m), F = (double)m->ffn;
    const double kvw = (double)m->kv_heads * (double)fpsim_model_head_dim(m);
    const double rows = e->style == FPSIM_STYLE_PREFILL ? n * len : n;
    return fpsim_model_bytes(m) + 8.0 * (2.0 * (double)m->layers * n * len * kvw + rows * (6 * C + Q + 3 * F + 1));
}

/* Bytes a mismatch run holds at its peak, a lower bound checked against the memory available
 * before anything is allocated: the policy model, both engines of every configuration (they live
 * through the run), one attribution engine at a time, and the two engines' activations (every
 * layer's residual stream, the final norm and the logits of every token) while a configuration
 * is scored. Against peak RSS (/usr/bin/time, bf16 against bf16, --pretrain 0, 2026-12-07): 4 layers
 * --sample 256 --no-attribution 1.25 GB estimated, 1.38 GB measured; 16 layers --sample 32 1.74 and
 * 1.86; d=512, 8 layers --sample 32 3.22 and 3.37; --sample 256 --no-attribution 4.95 and 5.19. */
static double mm_memory_estimate(const fpsim_mm_config *cfg)
{
    const fpsim_model_config *m = &cfg->model;
    const double n = cfg->tokens ? (double)cfg->given_n : (double)cfg->samples;
    const double len = cfg->tokens ? (double)cfg->given_len : 1.0 + (double)fpsim_task_max_problem_len(&cfg->task);
    /* the policy model's gradients and moments stay untouched zero pages (not resident) unless
     * it trains: a pretraining, or an update between steps; a capture's model is copied whole */
    const int trains = cfg->start || (cfg->pretrain_steps > 0) || cfg->steps > 1;
    double need = fpsim_model_bytes(m) * ((trains ? 1.0 : 0.25) + (cfg->attribution ? 1.0 : 0.0));
    for (int i = 0; i < cfg->nconfigs; i++)
        need += engine_bytes(&cfg->gen[i], m, n, len) + engine_bytes(&cfg->train[i], m, n, len);
    const double rows = n * len;
    return need + 2.0 * 8.0 * (((double)m->layers + 2) * rows * (double)m->d + rows * (double)m->vocab);
}

static fpsim_status mm_check_memory(const fpsim_mm_config *cfg)
{
    return fpsim_model_check_memory(&cfg->model, mm_memory_estimate(cfg), "", cfg->nconfigs, "configuration");
}

/* Given sequences must score something: position 0 has no prediction (its mask is cleared),
 * so at least one mask bit at a later position must be set, or every metric is a mean over
 * nothing (NaN) reported as a result. */
static int given_tokens_scored(const fpsim_mm_config *cfg)
{
    for (size_t s = 0; s < cfg->given_n; s++)
        for (size_t t = 1; t < cfg->given_len; t++)
            if (cfg->mask[s * cfg->given_len + t])
                return 1;
    return 0;
}

fpsim_status fpsim_mm_run_all(fpsim_mm_run **out, const fpsim_mm_config *cfg)
{
    *out = NULL;
    if (cfg->nconfigs < 1 || cfg->nconfigs > FPSIM_MM_MAX_CONFIGS)
        return fpsim_fail(FPSIM_EINVAL, "%d configurations (1..%d)", cfg->nconfigs, FPSIM_MM_MAX_CONFIGS);
    if (cfg->steps < 1) return fpsim_fail(FPSIM_EINVAL, "steps must be >= 1");
    if (!cfg->tokens && cfg->samples < 1) return fpsim_fail(FPSIM_EINVAL, "samples must be >= 1");
    if (cfg->tokens && (!cfg->mask || !given_tokens_scored(cfg)))
        return fpsim_fail(FPSIM_EDATA, "no token is scored: the mask of the given sequences is 0 after position 0");
    if (!(cfg->temperature > 0.0) || !(cfg->top_p > 0.0 && cfg->top_p <= 1.0))
        return fpsim_fail(FPSIM_EINVAL, "temperature must be > 0 and top_p in (0, 1]");
    fpsim_status st = fpsim_model_config_check(&cfg->model, 0);
    if (st) return st;
    if (!(cfg->temperature >= FPSIM_MM_TEMPERATURE_MIN))
        return fpsim_fail(FPSIM_EINVAL, "temperature %g is below %g, where vLLM samples greedily (its "
                          "_SAMPLING_EPS), which is not modelled", cfg->temperature, FPSIM_MM_TEMPERATURE_MIN);
    /* Every configuration against the model, before the pretraining: an error found when the
     * engines are built would come after it. */
    for (int i = 0; i < cfg->nconfigs; i++) {
        if ((st = fpsim_engine_config_check(&cfg->gen[i], &cfg->model))) return st;
        if ((st = fpsim_engine_config_check(&cfg->train[i], &cfg->model))) return st;
    }
    if (cfg->tokens && cfg->given_len > (size_t)cfg->model.seq)
        return fpsim_fail(FPSIM_ESHAPE, "the given sequences have %zu tokens, more than the model's context (seq=%d)",
                          cfg->given_len, cfg->model.seq);
    if (!cfg->tokens && (size_t)cfg->model.seq < 1 + fpsim_task_max_problem_len(&cfg->task))
        return fpsim_fail(FPSIM_ESHAPE, "model seq %d shorter than a task problem (%zu)",
                          cfg->model.seq, 1 + fpsim_task_max_problem_len(&cfg->task));
    if ((st = mm_check_memory(cfg))) return st;
    fpsim_mm_run *r = calloc(1, sizeof *r);
    if (!r) return fpsim_fail(FPSIM_ENOMEM, "out of memory");
    r->config = *cfg;
    int L = cfg->model.layers, S = cfg->steps, N = cfg->nconfigs;
    fpsim_model m;
    int have_model = 0;
    mm_state ms[FPSIM_MM_MAX_CONFIGS];
    memset(ms, 0, sizeof ms);
    if (cfg->start) st = fpsim_model_clone(&m, cfg->start);
    else st = fpsim_model_create(&m, &cfg->model);
    have_model = !st;
    if (!st && !cfg->start && cfg->pretrain_steps > 0)
        st = fpsim_model_pretrain(&m, &cfg->task, cfg->pretrain_steps, &cfg->opt, NULL);
    for (int i = 0; i < N && !st; i++) {
        fpsim_mm_result *x = &r->results[i];
        r->nresults = i + 1;
        snprintf(x->name, sizeof x->name, "%s", cfg->names[i]);
        fpsim_engine_config_format(&cfg->gen[i], x->gen_text, sizeof x->gen_text);
        fpsim_engine_config_format(&cfg->train[i], x->train_text, sizeof x->train_text);
        x->summary = calloc((size_t)S, sizeof *x->summary);
        x->is = calloc((size_t)S * FPSIM_IS_COUNT, sizeof *x->is);
        x->points = calloc((size_t)S * (size_t)(L + 3), sizeof *x->points);
        x->kv_scales = calloc((size_t)S * 2 * (size_t)L, sizeof *x->kv_scales);
        x->kv_clip = calloc((size_t)S, sizeof *x->kv_clip);
        x->attr_layer = calloc((size_t)(L + 2), sizeof *x->attr_layer);
        ms[i].scales0 = calloc(2 * (size_t)L, sizeof(double));
        if (!x->summary || !x->is || !x->points || !x->kv_scales || !x->kv_clip || !x->attr_layer ||
            !ms[i].scales0)
            st = fpsim_fail(FPSIM_ENOMEM, "out of memory");
        if (!st) st = fpsim_engine_create(&ms[i].gen, &cfg->gen[i], NULL, 0, 0, &m, cfg->seed, cfg->threads);
        if (!st) st = fpsim_engine_create(&ms[i].train, &cfg->train[i], NULL, 0, 0, &m, cfg->seed, cfg->threads);
    }
    for (int s = 0; s < S && !st; s++) {
        for (int i = 0; i < N && !st; i++) {
            st = run_one(r, i, &ms[i], &m, s, s == S - 1);
            if (cfg->progress && !st) cfg->progress(cfg->progress_ctx, cfg->names[i]);
        }
        if (!st && s + 1 < S) st = fpsim_model_pretrain(&m, &cfg->task, 1, &cfg->opt, NULL);
    }
    for (int i = 0; i < N; i++) {
        fpsim_engine_free(ms[i].gen);
        fpsim_engine_free(ms[i].train);
        free(ms[i].scales0);
    }
    if (have_model) fpsim_model_free(&m);
    if (st) {
        fpsim_mm_run_free(r);
        return st;
    }
    *out = r;
    return FPSIM_OK;
}
