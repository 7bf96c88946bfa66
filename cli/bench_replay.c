/* bench_replay.c: `fpsim bench replay [--json]`: what the replay's instruments cost.
 *
 * Measured in one run, on one model and one batch, best of --repeat:
 *   fp32 step          forward + backward + AdamW on the plain fp32 engine (uninstrumented);
 *   recipe step        the same with the recipe engine, statistics off, no observer;
 *   instrumented step  one replay step of the recipe: the recipe's run with every GEMM and
 *                      canonical point compared against the reference, gradient statistics and
 *                      AdamW ("accumulated"), plus the local view (every GEMM again on the
 *                      reference's operands). The reference's own recorded run is reported apart.
 * and, per GEMM shape of the model, the recipe engine's achieved rate (GFLOP/s of 2MNK, copies,
 * conversions and quantization included) next to the BLAS's own sgemm on the same shapes and
 * pre-converted float operands. Targets (issue #4): instrumented <= 2x fp32; engine >= 70% of
 * sgemm with the fp32 plan. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_replay.h"

static const char *const CMD = "bench replay";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim bench replay [--json] [--recipe R] [--model SPEC] [--threads T] [--repeat N]\n\n"
            "Times one instrumented replay step of recipe R (default te-nvfp4) against one plain\n"
            "FP32 training step of the same model in the same run, and the recipe engine's GEMM\n"
            "rate against BLAS sgemm on the model's own GEMM shapes.\n");
}

typedef struct shape {
    size_t M, N, K;
    int ta, tb;
    fpsim_site site;
    fpsim_pass pass;
    int count;
} shape;

typedef struct shape_log {
    shape s[64];
    int n;
} shape_log;

static fpsim_status log_gemm(void *ctx, const fpsim_gemm_call *c)
{
    shape_log *log = ctx;
    fpsim_numerics f = fpsim_numerics_fp32();
    fpsim_status st = f.gemm(f.ctx, c);
    for (int i = 0; i < log->n; i++) {
        shape *s = &log->s[i];
        if (s->M == c->M && s->N == c->N && s->K == c->K && s->ta == c->a.trans && s->tb == c->b.trans) {
            s->count++;
            return st;
        }
    }
    if (log->n < 64)
        log->s[log->n++] = (shape){c->M, c->N, c->K, c->a.trans, c->b.trans, c->site, c->pass, 1};
    return st;
}

static double step_time(fpsim_model *m, const fpsim_numerics *nx, fpsim_acts *a, const int32_t *tok,
                        const int32_t *tgt, const uint8_t *mask, const fpsim_adamw_config *opt,
                        int repeat, fpsim_status *st)
{
    double best = INFINITY;
    for (int r = 0; r < repeat && !*st; r++) {
        double t0 = fpsim_cli_seconds();
        *st = fpsim_model_forward(m, nx, a, tok, tgt, mask, NULL, NULL, NULL);
        if (!*st) *st = fpsim_model_backward(m, nx, a, NULL, NULL);
        if (!*st) {
            fpsim_status s2 = fpsim_adamw_step(m, opt, NULL);
            if (s2 && s2 != FPSIM_EDATA) *st = s2;
        }
        double t = fpsim_cli_seconds() - t0;
        if (t < best) best = t;
    }
    return best;
}

/* One shape: the engine's call vs cblas_sgemm on float copies; returns GFLOP/s pair. */
static fpsim_status bench_shape(const shape *s, fpsim_recipe_engine *e, int repeat, double *engine_gf,
                                double *blas_gf)
{
    size_t arows = s->ta ? s->K : s->M, acols = s->ta ? s->M : s->K;
    size_t brows = s->tb ? s->N : s->K, bcols = s->tb ? s->K : s->N;
    double *a = malloc(arows * acols * sizeof *a), *b = malloc(brows * bcols * sizeof *b);
    double *c = malloc(s->M * s->N * sizeof *c);
    float *fa = malloc(arows * acols * sizeof *fa), *fb = malloc(brows * bcols * sizeof *fb);
    float *fc = malloc(s->M * s->N * sizeof *fc);
    if (!a || !b || !c || !fa || !fb || !fc) {
        free(a), free(b), free(c), free(fa), free(fb), free(fc);
        return fpsim_fail(FPSIM_ENOMEM, "out of memory");
    }
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < arows * acols; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        fa[i] = (float)((double)(x >> 11) * 0x1p-53 - 0.5);
        a[i] = fa[i];
    }
    for (size_t i = 0; i < brows * bcols; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        fb[i] = (float)((double)(x >> 11) * 0x1p-53 - 0.5);
        b[i] = fb[i];
    }
    fpsim_gemm_call call;
    memset(&call, 0, sizeof call);
    call.layer = 0;
    call.site = s->site;
    call.pass = s->pass;
    call.M = s->M;
    call.N = s->N;
    call.K = s->K;
    fpsim_role ra = s->pass == FPSIM_PASS_FPROP ? FPSIM_ROLE_ACT : FPSIM_ROLE_GRAD;
    fpsim_role rb = s->pass == FPSIM_PASS_WGRAD ? FPSIM_ROLE_ACT : FPSIM_ROLE_WEIGHT;
    call.a = (fpsim_gemm_operand){a, acols, s->ta, ra};
    call.b = (fpsim_gemm_operand){b, bcols, s->tb, rb};
    call.c = c;
    call.ldc = s->N;
    fpsim_numerics nx = fpsim_recipe_engine_numerics(e);
    double flop = 2.0 * (double)s->M * (double)s->N * (double)s->K;
    double te = INFINITY, tb = INFINITY;
    fpsim_status st = FPSIM_OK;
    for (int r = 0; r < repeat && !st; r++) {
        double t0 = fpsim_cli_seconds();
        st = nx.gemm(nx.ctx, &call);
        double t1 = fpsim_cli_seconds();
        cblas_sgemm(CblasRowMajor, s->ta ? CblasTrans : CblasNoTrans, s->tb ? CblasTrans : CblasNoTrans,
                    (int)s->M, (int)s->N, (int)s->K, 1.0f, fa, (int)acols, fb, (int)bcols, 0.0f, fc, (int)s->N);
        double t2 = fpsim_cli_seconds();
        if (t1 - t0 < te) te = t1 - t0;
        if (t2 - t1 < tb) tb = t2 - t1;
    }
    *engine_gf = flop / te * 1e-9;
    *blas_gf = flop / tb * 1e-9;
    free(a), free(b), free(c), free(fa), free(fb), free(fc);
    return st;
}

int bench_replay(int argc, char **argv)
{
    if (fpsim_cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    int json = 0;
    long repeat = 3;
    const char *recipe = "te-nvfp4", *spec = NULL;
    int threads = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int k;
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--recipe", &v))) {
            if (k < 0) return 2;
            recipe = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--model", &v))) {
            if (k < 0) return 2;
            spec = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--threads", &v))) {
            if (k < 0) return 2;
            if (fpsim_cli_parse_threads(v, &threads)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--repeat", &v))) {
            if (k < 0) return 2;
            if (fpsim_cli_parse_int(v, "--repeat", 1, 1000, &repeat)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
        } else {
            return fpsim_cli_unknown_option(CMD, argv[i]);
        }
    }
    if (threads <= 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (int)cores : 1;
    }
    openblas_set_num_threads(threads);

    fpsim_replay_config cfg;
    fpsim_replay_config_default(&cfg);
    cfg.recipes[0] = recipe;
    cfg.nrecipes = 1;
    cfg.steps = 2; /* the second step is timed: buffers warm, as in a long replay */
    cfg.pretrain_steps = 0;
    cfg.threads = threads;
    fpsim_status st = FPSIM_OK;
    if (spec && (st = fpsim_model_config_parse(&cfg.model, spec, 0))) return fpsim_cli_fail(CMD, st);
    fpsim_engine_plan plan, plan32;
    if ((st = fpsim_engine_plan_from_recipe(&plan, recipe))) return fpsim_cli_fail(CMD, st);
    fpsim_engine_plan_plain(&plan32, "fp32", FPSIM_ACT_FP32);
    if ((st = fpsim_model_config_check(&cfg.model, fpsim_engine_plan_block(&plan)))) return fpsim_cli_fail(CMD, st);

    /* 1. plain steps on one model and batch */
    fpsim_model m;
    fpsim_acts a;
    size_t N = fpsim_model_tokens(&cfg.model);
    int32_t *tok = malloc(N * sizeof *tok), *tgt = malloc(N * sizeof *tgt);
    uint8_t *mask = malloc(N);
    if (!tok || !tgt || !mask) return fpsim_cli_fail(CMD, fpsim_fail(FPSIM_ENOMEM, "out of memory"));
    if ((st = fpsim_model_create(&m, &cfg.model))) return fpsim_cli_fail(CMD, st);
    if ((st = fpsim_acts_create(&a, &cfg.model))) return fpsim_cli_fail(CMD, st);
    if ((st = fpsim_task_batch(&cfg.task, &cfg.model, 0, tok, tgt, mask))) return fpsim_cli_fail(CMD, st);
    fpsim_recipe_engine *e = NULL, *e32 = NULL;
    if ((st = fpsim_recipe_engine_create(&e, &plan, cfg.model.layers, 1, threads))) return fpsim_cli_fail(CMD, st);
    if ((st = fpsim_recipe_engine_create(&e32, &plan32, cfg.model.layers, 1, threads))) return fpsim_cli_fail(CMD, st);
    fpsim_recipe_engine_set_stats(e, 0);
    fpsim_recipe_engine_set_stats(e32, 0);
    fpsim_numerics fp32 = fpsim_numerics_fp32(), rnx = fpsim_recipe_engine_numerics(e);
    shape_log log = {.n = 0};
    fpsim_numerics lognx = fp32;
    lognx.ctx = &log;
    lognx.gemm = log_gemm;
    fpsim_adamw_config opt = fpsim_adamw_config_default();
    step_time(&m, &lognx, &a, tok, tgt, mask, &opt, 1, &st);
    double t_fp32 = step_time(&m, &fp32, &a, tok, tgt, mask, &opt, (int)repeat, &st);
    double t_recipe = step_time(&m, &rnx, &a, tok, tgt, mask, &opt, (int)repeat, &st);
    if (st) return fpsim_cli_fail(CMD, st);

    /* 2. the instrumented replay step (the second step of each of `repeat` replays; best) */
    double t_acc = INFINITY, t_local = INFINITY, t_ref = INFINITY;
    for (int r = 0; r < repeat && !st; r++) {
        fpsim_replay *rp;
        if ((st = fpsim_replay_create(&rp, &cfg))) break;
        st = fpsim_replay_run(rp);
        if (!st) {
            if (rp->results[0].seconds_accumulated < t_acc) t_acc = rp->results[0].seconds_accumulated;
            if (rp->results[0].seconds_local < t_local) t_local = rp->results[0].seconds_local;
            if (rp->ref_seconds < t_ref) t_ref = rp->ref_seconds;
        }
        fpsim_replay_free(rp);
    }
    if (st) return fpsim_cli_fail(CMD, st);

    /* 3. GEMM rates per shape */
    double eng_r[64], eng32_r[64], blas_r[64];
    double flop_total = 0, t_eng = 0, t_eng32 = 0, t_blas = 0;
    for (int i = 0; i < log.n && !st; i++) {
        double gb2;
        st = bench_shape(&log.s[i], e, (int)repeat, &eng_r[i], &blas_r[i]);
        if (!st) st = bench_shape(&log.s[i], e32, (int)repeat, &eng32_r[i], &gb2);
        if (gb2 > blas_r[i]) blas_r[i] = gb2; /* the BLAS's best of both timings */
        double f = 2.0 * (double)log.s[i].M * (double)log.s[i].N * (double)log.s[i].K * log.s[i].count;
        flop_total += f;
        t_eng += f / (eng_r[i] * 1e9);
        t_eng32 += f / (eng32_r[i] * 1e9);
        t_blas += f / (blas_r[i] * 1e9);
    }
    if (st) return fpsim_cli_fail(CMD, st);
    double inst = t_acc + t_local;
    char model[512];
    fpsim_model_config_format(&cfg.model, model, sizeof model);
    if (json) {
        printf("{\"bench\": \"replay\", \"recipe\": ");
        fpsim_cli_json_string(stdout, recipe);
        printf(", \"model\": ");
        fpsim_cli_json_string(stdout, model);
        printf(", \"threads\": %d, \"fp32_step_s\": %.6f, \"recipe_step_s\": %.6f, "
               "\"instrumented_accumulated_s\": %.6f, \"instrumented_local_s\": %.6f, "
               "\"instrumented_step_s\": %.6f, \"reference_recorded_s\": %.6f, "
               "\"instrumented_over_fp32\": %.3f, \"accumulated_over_fp32\": %.3f, "
               "\"gemm_sgemm_gflops\": %.3f, \"gemm_engine_fp32_gflops\": %.3f, \"gemm_engine_recipe_gflops\": %.3f, "
               "\"engine_fp32_over_sgemm\": %.3f, \"engine_recipe_over_sgemm\": %.3f, \"shapes\": [",
               threads, t_fp32, t_recipe, t_acc, t_local, inst, t_ref, inst / t_fp32, t_acc / t_fp32,
               flop_total / t_blas * 1e-9, flop_total / t_eng32 * 1e-9, flop_total / t_eng * 1e-9,
               t_blas / t_eng32, t_blas / t_eng);
        for (int i = 0; i < log.n; i++)
            printf("%s{\"M\": %zu, \"N\": %zu, \"K\": %zu, \"site\": \"%s\", \"pass\": \"%s\", \"calls\": %d, "
                   "\"sgemm_gflops\": %.3f, \"engine_fp32_gflops\": %.3f, \"engine_recipe_gflops\": %.3f}",
                   i ? ", " : "", log.s[i].M, log.s[i].N, log.s[i].K, fpsim_site_name(log.s[i].site),
                   fpsim_pass_name(log.s[i].pass), log.s[i].count, blas_r[i], eng32_r[i], eng_r[i]);
        printf("]}\n");
    } else {
        printf("fpsim bench replay: model %s, recipe %s, %d thread(s), best of %ld\n", model, recipe,
               threads, repeat);
        printf("  fp32 step (uninstrumented)          %8.3f s\n", t_fp32);
        printf("  %-12s step (no statistics)     %8.3f s  (%.2fx fp32)\n", recipe, t_recipe, t_recipe / t_fp32);
        printf("  instrumented step: accumulated     %8.3f s  (%.2fx fp32; target <= 2x)\n", t_acc, t_acc / t_fp32);
        printf("                     + local view    %8.3f s  (%.2fx fp32 in all)\n", t_local, inst / t_fp32);
        printf("  reference run, FP64, recorded      %8.3f s  (once per step, shared by all recipes)\n", t_ref);
        printf("  GEMMs (2MNK over the step's shapes): sgemm %.2f GFLOP/s; engine fp32 plan %.2f GFLOP/s "
               "(%.0f%%, target >= 70%%); engine %s %.2f GFLOP/s (%.0f%%, quantization included)\n",
               flop_total / t_blas * 1e-9, flop_total / t_eng32 * 1e-9, 100 * t_blas / t_eng32, recipe,
               flop_total / t_eng * 1e-9, 100 * t_blas / t_eng);
        printf("  %-6s %-6s %-6s %-9s %-6s %6s %10s %10s %10s\n", "M", "N", "K", "site", "pass", "calls",
               "sgemm", "eng fp32", "eng recipe");
        for (int i = 0; i < log.n; i++)
            printf("  %-6zu %-6zu %-6zu %-9s %-6s %6d %10.2f %10.2f %10.2f\n", log.s[i].M, log.s[i].N,
                   log.s[i].K, fpsim_site_name(log.s[i].site), fpsim_pass_name(log.s[i].pass),
                   log.s[i].count, blas_r[i], eng32_r[i], eng_r[i]);
    }
    fpsim_recipe_engine_free(e);
    fpsim_recipe_engine_free(e32);
    fpsim_acts_free(&a);
    fpsim_model_free(&m);
    free(tok);
    free(tgt);
    free(mask);
    return 0;
}
