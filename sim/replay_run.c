/* replay_run.c: run the FP64 reference and each recipe for N optimizer steps from the same
 * initial state and data, and fill the statistics of fpsim_replay.h.
 *
 * One step s:
 *   1. the batch of step s (the same tokens for every engine);
 *   2. reference: forward + backward on the recording fp64 engine (every GEMM and canonical
 *      point copied);
 *   3. each recipe, on its own trajectory (its own weights since step 0):
 *        accumulated view: forward + backward with the recipe engine, every GEMM and canonical
 *        point compared with the reference's; gradients of every parameter tensor compared;
 *        local view: every recorded reference GEMM re-issued to the recipe engine with the
 *        reference's operands (weights included), output compared;
 *        then its AdamW step;
 *   4. the reference's AdamW step; weight drift of each recipe from the reference trajectory.
 * Everything is sequential in a fixed order; threads only work inside a GEMM, a quantizer, a
 * conversion or a statistics pass over whole fixed chunks, where the partition is fixed: the
 * results have the same bits on any thread count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fpsim_parallel.h"
#include "replay_internal.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the process, all threads together. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *const view_names[FPSIM_VIEW_COUNT] = {"local", "accumulated"};

const char *fpsim_view_name(int view)
{
    return view >= 0 && view < FPSIM_VIEW_COUNT ? view_names[view] : NULL;
}

void fpsim_replay_config_default(fpsim_replay_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->model = fpsim_model_config_default();
    static const char *const defaults[] = {"bf16", "nemo-rl-fp8", "te-mxfp8", "te-nvfp4"};
    for (int i = 0; i < 4; i++) cfg->recipes[i] = defaults[i];
    cfg->nrecipes = 4;
    cfg->steps = 2;
    cfg->seed = 1;
    cfg->local_view = 1;
    cfg->opt = fpsim_adamw_config_default();
    cfg->pretrain_steps = FPSIM_REPLAY_PRETRAIN;
    cfg->task = fpsim_task_config_default();
}

/* The built-in batch source: batch `step` of the task, offset so that the replay's batches are
 * not the ones the pretraining saw. */
static fpsim_status task_batch(void *ctx, int step, int32_t *tokens, int32_t *targets, uint8_t *mask)
{
    const fpsim_replay *r = ctx;
    return fpsim_task_batch(&r->config.task, &r->config.model,
                            (uint64_t)r->config.pretrain_steps + (uint64_t)step, tokens, targets, mask);
}

/* The parameter tensors, in slab order per layer: wte, l<i>.{ln1w, qkvw, attprojw, ln2w,
 * gateupw, downw}, lnfw, lmheadw. */
static fpsim_status replay_tensors(fpsim_replay *r)
{
    int L = r->config.model.layers;
    int n = 3 + 6 * L;
    r->dims.tensors = n;
    r->tensor_names = calloc((size_t)n, sizeof *r->tensor_names);
    r->tensor_kind = calloc((size_t)n, sizeof *r->tensor_kind);
    r->tensor_layer = calloc((size_t)n, sizeof *r->tensor_layer);
    if (!r->tensor_names || !r->tensor_kind || !r->tensor_layer)
        return fpsim_fail(FPSIM_ENOMEM, "replay: out of memory");
    static const int per_layer[6] = {FPSIM_PARAM_LN1W, FPSIM_PARAM_QKVW, FPSIM_PARAM_ATTPROJW,
                                     FPSIM_PARAM_LN2W, FPSIM_PARAM_GATEUPW, FPSIM_PARAM_DOWNW};
    int t = 0;
    r->tensor_kind[t] = FPSIM_PARAM_WTE;
    r->tensor_layer[t] = -1;
    snprintf(r->tensor_names[t++], 32, "%s", fpsim_param_name(FPSIM_PARAM_WTE));
    for (int l = 0; l < L; l++)
        for (int k = 0; k < 6; k++) {
            r->tensor_kind[t] = per_layer[k];
            r->tensor_layer[t] = l;
            snprintf(r->tensor_names[t++], 32, "l%d.%s", l, fpsim_param_name(per_layer[k]));
        }
    r->tensor_kind[t] = FPSIM_PARAM_LNFW;
    r->tensor_layer[t] = L;
    snprintf(r->tensor_names[t++], 32, "%s", fpsim_param_name(FPSIM_PARAM_LNFW));
    r->tensor_kind[t] = FPSIM_PARAM_LMHEADW;
    r->tensor_layer[t] = L;
    snprintf(r->tensor_names[t++], 32, "%s", fpsim_param_name(FPSIM_PARAM_LMHEADW));
    return FPSIM_OK;
}

/* Each recipe is one group of the results file, named by its text with '/' as '_': two recipes
 * with one group name (the same recipe twice) are refused before any work, not when the file is
 * written after the first step. */
static fpsim_status check_distinct_recipes(const fpsim_replay_config *cfg)
{
    for (int i = 1; i < cfg->nrecipes; i++)
        for (int j = 0; j < i; j++) {
            char gi[FPSIM_SCHEME_TEXT_MAX], gj[FPSIM_SCHEME_TEXT_MAX];
            replay_recipe_group_name(gi, sizeof gi, cfg->recipes[i]);
            replay_recipe_group_name(gj, sizeof gj, cfg->recipes[j]);
            if (strcmp(gi, gj)) continue;
            if (!strcmp(cfg->recipes[i], cfg->recipes[j]))
                return fpsim_fail(FPSIM_EINVAL, "replay: recipe '%s' is given twice", cfg->recipes[i]);
            return fpsim_fail(FPSIM_EINVAL, "replay: recipes '%s' and '%s' would share the results group '%s'",
                              cfg->recipes[j], cfg->recipes[i], gi);
        }
    return FPSIM_OK;
}

/* The built-in task feeds the pretraining, and every step unless the caller gives its batches:
 * its tokens must fit the model's vocab and one whole problem a sequence, exactly as
 * fpsim_task_batch() requires. Checked before any work, as bad input (FPSIM_ESHAPE). */
static fpsim_status check_task_fits(const fpsim_replay_config *cfg)
{
    if (cfg->batch && cfg->pretrain_steps <= 0) return FPSIM_OK;
    fpsim_status st = fpsim_task_config_check(&cfg->task);
    if (st) return st;
    const fpsim_model_config *m = &cfg->model;
    if (m->vocab < FPSIM_TASK_VOCAB)
        return fpsim_fail(FPSIM_ESHAPE, "model spec: vocab = %d is smaller than the task's %d tokens", m->vocab,
                          FPSIM_TASK_VOCAB);
    size_t longest = fpsim_task_max_problem_len(&cfg->task);
    if ((size_t)m->seq < longest)
        return fpsim_fail(FPSIM_ESHAPE, "model spec: seq = %d cannot hold one problem of the task (up to %zu tokens)",
                          m->seq, longest);
    return FPSIM_OK;
}

/* Doubles the reference's recording keeps for one linear layer y = x w^T (x: tokens x in, w: out
 * x in): each of its three GEMMs (fprop, dgrad, wgrad) copies both operands and the output, which
 * are, over the three, every pairing of the tokens x in, tokens x out and out x in matrices. */
static double recorded_linear(double tokens, double in, double out)
{
    return 3.0 * (tokens * in + tokens * out + out * in);
}

/* Bytes a replay holds while it runs, a lower bound for checking against the memory available
 * before anything is allocated: the reference model and one copy per recipe (parameters,
 * gradients, AdamW moments: fpsim_model_bytes), the activations, the reference's recorded GEMM
 * operands and outputs (replay_record.c) and canonical points, and the statistics tables. The
 * recipe engines' own scratch (one GEMM's quantized operands at a time) is left out. Against peak
 * RSS (/usr/bin/time, the default model with other layers, 1 step, --pretrain 0, 2026-12-07):
 * bf16 at 1, 16 and 32 layers 0.19, 2.54 and 5.05 GB estimated, 0.23, 2.58 and 5.10 GB measured;
 * bf16 + te-nvfp4 at 16 layers 2.98 and 3.06; d=512,ffn=1536 at 16 layers 7.45 and 7.51. */
static double replay_memory_estimate(const fpsim_replay_config *cfg)
{
    const fpsim_model_config *m = &cfg->model;
    const double L = (double)m->layers, N = (double)fpsim_model_tokens(m), C = (double)m->d;
    const double Q = (double)fpsim_model_qkv_dim(m), F = (double)m->ffn, V = (double)m->vocab;
    const double per_block = recorded_linear(N, C, Q) + recorded_linear(N, C, C) + recorded_linear(N, C, 2 * F) +
                             recorded_linear(N, F, C);
    const double recorded = L * per_block + recorded_linear(N, C, V);
    /* canonical points: embedding, block outputs, final norm, stream gradients; logits, their gradients */
    const double points = (2 * L + 3) * N * C + 2 * N * V;
    const double layers = L + 1, steps = (double)cfg->steps;
    const double gemms = steps * FPSIM_VIEW_COUNT * layers * FPSIM_SITE_COUNT * FPSIM_PASS_COUNT;
    const double operands = gemms * FPSIM_ROLE_COUNT, tensors = steps * (3 + 6 * L);
    const double tables = (gemms + 2 * operands + steps * FPSIM_POINT_COUNT * (layers + 1) + 2 * tensors) *
                              (double)sizeof(fpsim_stats) + operands * (double)sizeof(fpsim_replay_scale);
    return (1.0 + cfg->nrecipes) * fpsim_model_bytes(m) + fpsim_acts_bytes(m) + 8.0 * (recorded + points) +
           cfg->nrecipes * tables;
}

/* FPSIM_ENOMEM naming the model when the replay cannot fit in the memory available. */
static fpsim_status check_memory(const fpsim_replay_config *cfg)
{
    return fpsim_model_check_memory(&cfg->model, replay_memory_estimate(cfg), "replay: ", cfg->nrecipes, "recipe");
}

static void *xcalloc(size_t n, size_t size, int *oom)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) *oom = 1;
    return p;
}

fpsim_status fpsim_replay_create(fpsim_replay **out, const fpsim_replay_config *cfg)
{
    *out = NULL;
    if (cfg->steps <= 0) return fpsim_fail(FPSIM_EINVAL, "replay: steps must be positive (got %d)", cfg->steps);
    if (cfg->nrecipes <= 0 || cfg->nrecipes > FPSIM_REPLAY_MAX_RECIPES)
        return fpsim_fail(FPSIM_EINVAL, "replay: between 1 and %d recipes (got %d)",
                          FPSIM_REPLAY_MAX_RECIPES, cfg->nrecipes);

    fpsim_status st = check_distinct_recipes(cfg);
    if (st) return st;

    /* Plans first: an unknown recipe is reported before anything is allocated; the model must
     * tile by the largest block any recipe needs. */
    fpsim_engine_plan plans[FPSIM_REPLAY_MAX_RECIPES];
    int block = 1;
    const char *block_recipe = NULL;
    for (int i = 0; i < cfg->nrecipes; i++) {
        st = fpsim_engine_plan_from_recipe(&plans[i], cfg->recipes[i]);
        if (st) return st;
        int b = fpsim_engine_plan_block(&plans[i]);
        if (b > block) {
            block = b;
            block_recipe = cfg->recipes[i];
        }
    }
    st = fpsim_model_config_check(&cfg->model, block);
    if (st) {
        if (block_recipe) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", fpsim_last_error());
            return fpsim_fail(st, "%s (recipe %s needs blocks of %d)", msg, block_recipe, block);
        }
        return st;
    }
    if ((st = check_task_fits(cfg))) return st;
    if ((st = check_memory(cfg))) return st;

    fpsim_replay *r = calloc(1, sizeof *r);
    replay_state *s = calloc(1, sizeof *s);
    if (!r || !s) {
        free(r);
        free(s);
        return fpsim_fail(FPSIM_ENOMEM, "replay: out of memory");
    }
    r->config = *cfg;
    if (!r->config.batch) {
        r->config.batch = task_batch;
        r->config.batch_ctx = r;
    }
    r->state = s;
    s->threads = cfg->threads > 0 ? cfg->threads : fpsim_threads_default();
    r->nrecipes = cfg->nrecipes;
    r->dims.steps = cfg->steps;
    r->dims.layers = cfg->model.layers + 1;
    if ((st = replay_tensors(r))) goto fail;
    s->dims = r->dims;

    int oom = 0;
    const fpsim_replay_dims *d = &r->dims;
    size_t ngemm = (size_t)d->steps * FPSIM_VIEW_COUNT * (size_t)d->layers * FPSIM_SITE_COUNT * FPSIM_PASS_COUNT;
    size_t nop = ngemm * FPSIM_ROLE_COUNT;
    size_t npoint = (size_t)d->steps * FPSIM_POINT_COUNT * FPSIM_REPLAY_POINT_LAYERS(d);
    size_t ntens = (size_t)d->steps * (size_t)d->tensors;
    r->ref_loss = xcalloc((size_t)d->steps, sizeof *r->ref_loss, &oom);
    r->results = xcalloc((size_t)r->nrecipes, sizeof *r->results, &oom);
    s->cand = xcalloc((size_t)r->nrecipes, sizeof *s->cand, &oom);
    s->engines = xcalloc((size_t)r->nrecipes, sizeof *s->engines, &oom);
    s->rec = xcalloc((size_t)d->layers * FPSIM_SITE_COUNT * FPSIM_PASS_COUNT, sizeof *s->rec, &oom);
    s->points = xcalloc(FPSIM_POINT_COUNT * FPSIM_REPLAY_POINT_LAYERS(d), sizeof *s->points, &oom);
    if (oom) {
        st = fpsim_fail(FPSIM_ENOMEM, "replay: out of memory");
        goto fail;
    }
    for (int i = 0; i < r->nrecipes; i++) {
        fpsim_replay_result *res = &r->results[i];
        res->plan = plans[i];
        snprintf(res->spec, sizeof res->spec, "%s", cfg->recipes[i]);
        res->loss = xcalloc((size_t)d->steps, sizeof *res->loss, &oom);
        res->gemm = xcalloc(ngemm, sizeof *res->gemm, &oom);
        res->operand = xcalloc(nop, sizeof *res->operand, &oom);
        res->scale = xcalloc(nop, sizeof *res->scale, &oom);
        res->operand_drift = xcalloc(nop, sizeof *res->operand_drift, &oom);
        res->point = xcalloc(npoint, sizeof *res->point, &oom);
        res->grad = xcalloc(ntens, sizeof *res->grad, &oom);
        res->drift = xcalloc(ntens, sizeof *res->drift, &oom);
        for (size_t k = 0; k < (size_t)d->steps && res->loss; k++) res->loss[k] = NAN;
    }
    for (size_t k = 0; k < (size_t)d->steps && r->ref_loss; k++) r->ref_loss[k] = NAN;
    size_t N = fpsim_model_tokens(&cfg->model);
    s->tokens = xcalloc(N, sizeof *s->tokens, &oom);
    s->targets = xcalloc(N, sizeof *s->targets, &oom);
    s->mask = xcalloc(N, sizeof *s->mask, &oom);
    if (oom) {
        st = fpsim_fail(FPSIM_ENOMEM, "replay: out of memory");
        goto fail;
    }

    /* The models: one initial state, cloned for every recipe. */
    if ((st = fpsim_model_create(&s->ref, &cfg->model))) goto fail;
    if (cfg->pretrain_steps > 0 &&
        (st = fpsim_model_pretrain(&s->ref, &cfg->task, cfg->pretrain_steps, &cfg->opt, NULL)))
        goto fail;
    if (cfg->init_params)
        memcpy(s->ref.params_memory, cfg->init_params, sizeof(double) * s->ref.num_params);
    for (int i = 0; i < r->nrecipes; i++)
        if ((st = fpsim_model_clone(&s->cand[i], &s->ref))) goto fail;
    if ((st = fpsim_acts_create(&s->acts, &cfg->model))) goto fail;
    for (int i = 0; i < r->nrecipes; i++) {
        if ((st = fpsim_recipe_engine_create(&s->engines[i], &plans[i], cfg->model.layers, cfg->seed,
                                             cfg->threads)))
            goto fail;
        fpsim_recipe_engine_set_observer(s->engines[i], replay_observe_gemm, s);
    }
    *out = r;
    return FPSIM_OK;
fail:
    fpsim_replay_free(r);
    return st;
}

void fpsim_replay_free(fpsim_replay *r)
{
    if (!r) return;
    replay_state *s = r->state;
    if (s) {
        size_t nrec = (size_t)r->dims.layers * FPSIM_SITE_COUNT * FPSIM_PASS_COUNT;
        for (size_t i = 0; s->rec && i < nrec; i++) {
            free(s->rec[i].a);
            free(s->rec[i].b);
            free(s->rec[i].c);
        }
        for (size_t i = 0; s->points && i < FPSIM_POINT_COUNT * FPSIM_REPLAY_POINT_LAYERS(&r->dims); i++)
            free(s->points[i].data);
        free(s->rec);
        free(s->points);
        if (s->ref.params_memory) fpsim_model_free(&s->ref);
        for (int i = 0; s->cand && i < r->nrecipes; i++)
            if (s->cand[i].params_memory) fpsim_model_free(&s->cand[i]);
        for (int i = 0; s->engines && i < r->nrecipes; i++) fpsim_recipe_engine_free(s->engines[i]);
        free(s->cand);
        free(s->engines);
        if (s->acts.memory) fpsim_acts_free(&s->acts);
        free(s->tokens);
        free(s->targets);
        free(s->mask);
        free(s->scratch_c);
        free(s);
    }
    for (int i = 0; r->results && i < r->nrecipes; i++) {
        fpsim_replay_result *res = &r->results[i];
        free(res->loss);
        free(res->gemm);
        free(res->operand);
        free(res->scale);
        free(res->operand_drift);
        free(res->point);
        free(res->grad);
        free(res->drift);
    }
    free(r->results);
    free(r->ref_loss);
    free(r->tensor_names);
    free(r->tensor_kind);
    free(r->tensor_layer);
    free(r);
}

/* Compare every parameter tensor of two slabs into stats[tensor]. */
static fpsim_status compare_tensors(const fpsim_replay *r, const fpsim_model *ref,
                                    const fpsim_params *ref_slab, const fpsim_model *cand,
                                    const fpsim_params *cand_slab, fpsim_stats *stats)
{
    const int threads = ((const replay_state *)r->state)->threads;
    for (int t = 0; t < r->dims.tensors; t++) {
        double *a, *b;
        size_t na, nb;
        fpsim_status st = fpsim_model_param_slice(ref, ref_slab, r->tensor_kind[t], r->tensor_layer[t], &a, &na);
        if (!st) st = fpsim_model_param_slice(cand, cand_slab, r->tensor_kind[t], r->tensor_layer[t], &b, &nb);
        if (st) return st;
        if ((st = fpsim_stats_add_f64(&stats[t], a, b, na < nb ? na : nb, threads))) return st;
    }
    return FPSIM_OK;
}

/* The local view: every recorded reference GEMM, re-issued with the reference's operands. */
static fpsim_status run_local(replay_state *s, fpsim_recipe_engine *e)
{
    fpsim_numerics nx = fpsim_recipe_engine_numerics(e);
    size_t nrec = (size_t)s->dims.layers * FPSIM_SITE_COUNT * FPSIM_PASS_COUNT;
    s->view = FPSIM_VIEW_LOCAL;
    for (size_t i = 0; i < nrec; i++) {
        const replay_gemm_record *r = &s->rec[i];
        if (!r->valid) continue;
        size_t n = r->M * r->N;
        if (n > s->scratch_cap) {
            double *p = realloc(s->scratch_c, n * sizeof *p);
            if (!p) return fpsim_fail(FPSIM_ENOMEM, "replay: out of memory");
            s->scratch_c = p;
            s->scratch_cap = n;
        }
        fpsim_gemm_call c;
        memset(&c, 0, sizeof c);
        c.layer = (int)(i / (FPSIM_SITE_COUNT * FPSIM_PASS_COUNT));
        c.site = (fpsim_site)((i / FPSIM_PASS_COUNT) % FPSIM_SITE_COUNT);
        c.pass = (fpsim_pass)(i % FPSIM_PASS_COUNT);
        c.M = r->M;
        c.N = r->N;
        c.K = r->K;
        c.a = (fpsim_gemm_operand){r->a, r->a_cols, r->a_trans, r->a_role};
        c.b = (fpsim_gemm_operand){r->b, r->b_cols, r->b_trans, r->b_role};
        c.c = s->scratch_c;
        c.ldc = r->N;
        fpsim_status st = nx.gemm(nx.ctx, &c);
        if (st) return st;
    }
    s->view = FPSIM_VIEW_ACCUMULATED;
    return FPSIM_OK;
}

/* The loss of the last forward as the mean of its per-token losses, summed in double: the
 * model's scalar loss is itself rounded to the engine's activation precision (BF16 for most
 * recipes: 8 bits), too coarse to show a recipe's loss difference. */
static double token_mean_loss(const fpsim_acts *a)
{
    size_t n = fpsim_model_tokens(&a->config);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += a->head.losses[i];
    return a->head.count > 0 ? sum / a->head.count : 0.0;
}

static fpsim_status run_step(fpsim_replay *r, int step, int *done, int total)
{
    replay_state *s = r->state;
    const fpsim_replay_config *cfg = &r->config;
    s->step = step;
    fpsim_status st = cfg->batch(cfg->batch_ctx, step, s->tokens, s->targets, s->mask);
    if (st) return st;

    /* 2. the reference, recorded */
    fpsim_numerics refnx = replay_recorder_numerics(s);
    double loss, t0 = now_seconds(), c0 = cpu_seconds();
    if ((st = fpsim_model_forward(&s->ref, &refnx, &s->acts, s->tokens, s->targets, s->mask,
                                  replay_record_point, s, &loss)))
        return st;
    if ((st = fpsim_model_backward(&s->ref, &refnx, &s->acts, replay_record_point, s))) return st;
    r->ref_loss[step] = token_mean_loss(&s->acts);
    r->ref_seconds = now_seconds() - t0;
    r->ref_cpu = cpu_seconds() - c0;
    if (cfg->progress) cfg->progress(cfg->progress_ctx, ++*done, total);

    /* 3. each recipe */
    for (int i = 0; i < r->nrecipes; i++) {
        fpsim_replay_result *res = &r->results[i];
        fpsim_model *m = &s->cand[i];
        fpsim_recipe_engine *e = s->engines[i];
        fpsim_numerics nx = fpsim_recipe_engine_numerics(e);
        fpsim_recipe_engine_set_step(e, (uint64_t)step);
        s->cur = res;
        s->view = FPSIM_VIEW_ACCUMULATED;
        s->failed = 0;
        t0 = now_seconds();
        c0 = cpu_seconds();
        if ((st = fpsim_model_forward(m, &nx, &s->acts, s->tokens, s->targets, s->mask,
                                      replay_compare_point, s, &loss)))
            return st;
        if ((st = fpsim_model_backward(m, &nx, &s->acts, replay_compare_point, s))) return st;
        res->loss[step] = token_mean_loss(&s->acts);
        if ((st = compare_tensors(r, &s->ref, &s->ref.grads, m, &m->grads,
                                  &res->grad[(size_t)step * (size_t)r->dims.tensors])))
            return st;
        double t1 = now_seconds(), c1 = cpu_seconds();
        if (cfg->local_view && (st = run_local(s, e))) return st;
        double t2 = now_seconds(), c2 = cpu_seconds();
        if (s->failed) return fpsim_fail(FPSIM_ENOMEM, "replay: out of memory while comparing");
        st = fpsim_adamw_step(m, &cfg->opt, NULL);
        if (st == FPSIM_EDATA) {
            res->skipped_updates++; /* a non-finite gradient is data: no update, keep going */
            fpsim_clear_error();
        } else if (st) {
            return st;
        }
        res->seconds_local = t2 - t1;
        res->seconds_accumulated = (t1 - t0) + (now_seconds() - t2);
        res->cpu_local = c2 - c1;
        res->cpu_accumulated = (c1 - c0) + (cpu_seconds() - c2);
        if (cfg->progress) cfg->progress(cfg->progress_ctx, ++*done, total);
    }

    /* 4. the reference's update, then each recipe's distance from it */
    if ((st = fpsim_adamw_step(&s->ref, &cfg->opt, NULL))) return st;
    for (int i = 0; i < r->nrecipes; i++) {
        fpsim_stats *drift = &r->results[i].drift[(size_t)step * (size_t)r->dims.tensors];
        if ((st = compare_tensors(r, &s->ref, &s->ref.params, &s->cand[i], &s->cand[i].params, drift)))
            return st;
    }
    return FPSIM_OK;
}

fpsim_status fpsim_replay_run(fpsim_replay *r)
{
    int done = 0, total = r->dims.steps * (1 + r->nrecipes);
    for (int step = r->steps_done; step < r->dims.steps; step++) {
        fpsim_status st = run_step(r, step, &done, total);
        if (st) return st;
        r->steps_done = step + 1;
        if (r->config.step_done && (st = r->config.step_done(r->config.step_ctx, r->steps_done)))
            return st;
    }
    return FPSIM_OK;
}
