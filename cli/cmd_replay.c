/* cmd_replay.c: `fpsim replay`: the FP64 reference and each recipe for N optimizer steps from the
 * same state and data; per-layer error tables, results.h5 and plots (docs/replay.md). */
#include <cblas.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_capture.h"
#include "cli_util.h"
#include "commands.h"
#include "fpsim_capture.h"
#include "fpsim_file.h"
#include "fpsim_parallel.h"
#include "fpsim_replay.h"

static const char *const CMD = "replay";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim replay [--recipe R]... [--steps N] [--model SPEC] [--seed S]\n"
            "                    [--out results.h5] [--threads T] [--quiet] [--bias-variance]\n"
            "                    [--bv-seeds K] [--bv-tokens N] [--pretrain N] [--no-local]\n"
            "                    [--no-plots] [--plots DIR] [--format png|svg] [--accum MODEL]\n"
            "                    [--from capture.h5]\n\n"
            "Runs the FP64 reference and each recipe for N optimizer steps from the same initial\n"
            "state and data (the built-in synthetic task), and measures per layer, GEMM site,\n"
            "pass and operand role: relative L2 error, max abs error, cosine, SQNR, bias, the\n"
            "error's projection on the reference, flushed/saturated/NaN counts and block scales,\n"
            "in two views: local (each GEMM fed the reference's operands) and accumulated\n"
            "(errors propagate). Per parameter tensor: gradient error and cosine; loss difference;\n"
            "weight drift from the reference trajectory. With no arguments: the built-in default\n"
            "(reference + bf16, nemo-rl-fp8, te-mxfp8, te-nvfp4; 2 steps; results.h5 and plots/).\n\n"
            "  --recipe R       a recipe name or custom text (fpsim recipes lists them; repeatable;\n"
            "                   also fp64, the unrounded control); R@accum=MODEL sets its\n"
            "                   accumulation model (see --accum)\n"
            "  --accum MODEL    accumulation model of every recipe without its own @accum=:\n"
            "                   fp32 (default, BLAS sgemm), fp64, fp32:seq, hopper-qgmma:fast,\n"
            "                   hopper-qgmma:promote=N, hopper-hgmma, mma-sync-fp8 (docs/replay.md)\n"
            "  --steps N        optimizer steps (default 2)\n"
            "  --model SPEC     model spec, e.g. layers=4,d=256,heads=4,ffn=768,vocab=128,seq=128,batch=4\n"
            "                   (unset keys keep the default; kv_heads unset = heads, plain multi-head\n"
            "                   attention; seq must hold one problem of the task, vocab >= 16)\n"
            "  --from PATH      start from a PyTorch capture (scripts/capture_torch.py; docs/model.md,\n"
            "                   \"Capture\"): its model, weights and batch (every step), no pretraining;\n"
            "                   prints fpsim FP32 vs PyTorch per tensor first; --steps defaults to 1;\n"
            "                   --model and --pretrain are refused with it\n"
            "  --seed S         seed of stochastic rounding and of the task's data (default 1)\n"
            "  --out PATH       results file, .h5 or .hdf5 (default results.h5; written after every step)\n"
            "  --threads T      threads (default: FPSIM_THREADS or all cores; same bits on any count)\n"
            "  --bias-variance  also sweep a summed weight gradient over N = 64..65536 tokens under\n"
            "                   RNE and stochastic rounding (E4M3, NVFP4, NVFP4+RHT)\n"
            "  --bv-seeds K     SR seeds per case in the sweep (default 8)\n"
            "  --bv-tokens N    largest N of the sweep, 64..65536 (default 65536)\n"
            "  --pretrain N     FP32 training steps on the task before step 0 (default %d), so that\n"
            "                   the replay starts from a trained state rather than random init\n"
            "  --no-local       skip the local view (halves the recipe GEMM work)\n"
            "  --no-plots       do not run `fpsim plot` at the end\n"
            "  --plots DIR      plot directory (default plots; checked, or created, before the run)\n"
            "  --format F       plot format, png (default) or svg\n"
            "  --quiet, -q      no notes, no progress bar, no table\n",
            FPSIM_REPLAY_PRETRAIN);
}

typedef struct replay_cli {
    fpsim_replay *r;
    const char *out;
    char cmdline[4096];
    fpsim_cli_progress progress;
} replay_cli;

static void on_progress(void *ctx, int done, int total)
{
    (void)total;
    replay_cli *c = ctx;
    fpsim_cli_progress_update(&c->progress, (uint64_t)done);
}

/* Ctrl-C / SIGTERM: finish the step under way, write it, stop (a second signal kills). */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = 1;
    signal(sig, SIG_DFL);
}

/* After every finished step: the whole file again (temp + rename), so no finished step is lost. */
static fpsim_status on_step(void *ctx, int steps_done)
{
    replay_cli *c = ctx;
    fpsim_status st = fpsim_replay_write_h5(c->r, c->out, c->cmdline, NULL);
    if (!st && interrupted)
        return fpsim_fail(FPSIM_EINTERRUPTED, "interrupted after step %d; %s holds the finished steps",
                          steps_done, c->out);
    return st;
}

/* Merge a recipe's GEMM stats of one layer and pass over sites (fixed order). */
static void layer_pass(fpsim_stats_summary *out, const fpsim_replay *r, const fpsim_replay_result *res,
                       int step, int view, int layer, int pass)
{
    fpsim_stats acc;
    fpsim_stats_init(&acc);
    for (int site = 0; site < FPSIM_SITE_COUNT; site++)
        fpsim_stats_merge(&acc, &res->gemm[fpsim_replay_gemm_index(&r->dims, step, view, layer, site, pass)]);
    fpsim_stats_summarize(out, &acc);
}

static void print_table(const fpsim_replay *r)
{
    int step = r->steps_done - 1;
    if (step < 0) return;
    printf("fpsim replay: %d step(s); rel L2 error of GEMM outputs at step %d, merged over sites\n"
           "(local: each GEMM on the reference's operands; acc: the recipe's own run);\n"
           "grad cos: lowest cosine of the layer's weight gradients with the reference's.\n",
           r->steps_done, step);
    for (int i = 0; i < r->nrecipes; i++) {
        const fpsim_replay_result *res = &r->results[i];
        printf("\n%s: loss %.6f (reference %.6f, diff %+.3e)\n", res->spec, res->loss[step],
               r->ref_loss[step], res->loss[step] - r->ref_loss[step]);
        printf("  layer   fprop local  fprop acc   dgrad local  dgrad acc   wgrad local  wgrad acc   grad cos\n");
        for (int l = 0; l < r->dims.layers; l++) {
            char name[16];
            if (l == r->dims.layers - 1) snprintf(name, sizeof name, "head");
            else snprintf(name, sizeof name, "%d", l);
            printf("  %-6s", name);
            for (int p = 0; p < FPSIM_PASS_COUNT; p++)
                for (int v = 0; v < FPSIM_VIEW_COUNT; v++) {
                    fpsim_stats_summary m;
                    layer_pass(&m, r, res, step, v, l, p);
                    if (m.count) printf("  %-11.3e", m.rel_l2);
                    else printf("  %-11s", "-");
                }
            double cmin = INFINITY;
            for (int t = 0; t < r->dims.tensors; t++) {
                int tl = r->tensor_layer[t];
                int row = tl < 0 ? -1 : tl;
                if (row != l) continue;
                fpsim_stats_summary m;
                fpsim_stats_summarize(&m, &res->grad[(size_t)step * (size_t)r->dims.tensors + (size_t)t]);
                if (m.cosine < cmin) cmin = m.cosine;
            }
            if (isfinite(cmin)) printf("  %.6f\n", cmin);
            else printf("  -\n");
        }
        if (res->skipped_updates)
            printf("  (%d step(s) had a non-finite gradient: no update was made)\n", res->skipped_updates);
    }
}

/* --from: the captured batch, the same for every step. */
static fpsim_status capture_batch(void *ctx, int step, int32_t *tokens, int32_t *targets,
                                  uint8_t *mask)
{
    (void)step;
    const fpsim_capture *cap = ctx;
    size_t n = fpsim_model_tokens(&cap->model.config);
    memcpy(tokens, cap->tokens, sizeof(int32_t) * n);
    memcpy(targets, cap->targets, sizeof(int32_t) * n);
    memcpy(mask, cap->mask, n);
    return FPSIM_OK;
}

int cmd_replay(int argc, char **argv)
{
    if (fpsim_cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    fpsim_replay_config cfg;
    fpsim_replay_config_default(&cfg);
    const char *model_spec = NULL, *out = "results.h5", *plots = "plots", *format = "png";
    int quiet = 0, bias_variance = 0, no_plots = 0, nrec = 0;
    long bv_seeds = 8;
    uint64_t bv_tokens = 65536;
    const char *recipes[FPSIM_REPLAY_MAX_RECIPES];
    const char *accum = NULL, *from = NULL;
    int steps_given = 0, pretrain_given = 0;
    const char *bv_option = NULL, *plot_option = NULL; /* given: refused where they have no effect */
    static fpsim_capture capture; /* --from: lives as long as the replay reads its batch */
    static char accum_recipes[FPSIM_REPLAY_MAX_RECIPES][FPSIM_SCHEME_TEXT_MAX];
    for (int i = 1; i < argc; i++) {
        const char *v;
        int k;
        if ((k = fpsim_cli_take_list_value(CMD, argc, argv, &i, "--recipe", &v))) {
            if (k < 0) return 2;
            if (nrec == FPSIM_REPLAY_MAX_RECIPES) {
                fpsim_cli_error(CMD, "at most %d recipes", FPSIM_REPLAY_MAX_RECIPES);
                return 2;
            }
            recipes[nrec++] = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--accum", &v))) {
            fpsim_accum a;
            if (k < 0) return 2;
            if (fpsim_accum_parse(&a, v)) return fpsim_cli_fail(CMD, FPSIM_ENAME);
            accum = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--from", &v))) {
            if (k < 0) return 2;
            from = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--steps", &v))) {
            steps_given = 1;
            long n;
            if (k < 0) return 2;
            if (fpsim_cli_parse_int(v, "--steps", 1, 100000, &n)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            cfg.steps = (int)n;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--pretrain", &v))) {
            long n;
            if (k < 0) return 2;
            if (fpsim_cli_parse_int(v, "--pretrain", 0, 100000, &n)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            cfg.pretrain_steps = (int)n;
            pretrain_given = 1;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--model", &v))) {
            if (k < 0) return 2;
            model_spec = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--seed", &v))) {
            if (k < 0) return 2;
            if (fpsim_cli_parse_u64(v, "--seed", &cfg.seed)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--out", &v))) {
            if (k < 0) return 2;
            out = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--threads", &v))) {
            if (k < 0) return 2;
            if (fpsim_cli_parse_threads(v, &cfg.threads)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--bv-seeds", &v))) {
            if (k < 0) return 2;
            bv_option = "--bv-seeds";
            if (fpsim_cli_parse_int(v, "--bv-seeds", 2, 4096, &bv_seeds)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--bv-tokens", &v))) {
            if (k < 0) return 2;
            bv_option = "--bv-tokens";
            if (fpsim_cli_parse_size(v, "--bv-tokens", &bv_tokens)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            if (bv_tokens < 64 || bv_tokens > 65536) {
                fpsim_cli_error(CMD, "--bv-tokens must be between 64 and 65536 (got %llu)",
                                (unsigned long long)bv_tokens);
                return 2;
            }
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--plots", &v))) {
            if (k < 0) return 2;
            plots = v;
            plot_option = "--plots";
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--format", &v))) {
            if (k < 0) return 2;
            if (strcmp(v, "png") && strcmp(v, "svg")) {
                fpsim_cli_error(CMD, "unknown --format '%s'; valid: png svg", v);
                return 2;
            }
            format = v;
            plot_option = "--format";
        } else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (!strcmp(argv[i], "--bias-variance")) {
            bias_variance = 1;
        } else if (!strcmp(argv[i], "--no-plots")) {
            no_plots = 1;
        } else if (!strcmp(argv[i], "--no-local")) {
            cfg.local_view = 0;
        } else {
            return fpsim_cli_unknown_option(CMD, argv[i]);
        }
    }
    fpsim_cli_set_quiet(quiet);
    if (bv_option && !bias_variance) {
        fpsim_cli_error(CMD, "%s has no effect without --bias-variance", bv_option);
        return 2;
    }
    if (plot_option && no_plots) {
        fpsim_cli_error(CMD, "%s has no effect with --no-plots", plot_option);
        return 2;
    }
    if (!fpsim_file_name_is_hdf5(out)) {
        fpsim_cli_error(CMD, "--out '%s': the name must end in .h5 or .hdf5 (the results file is HDF5)", out);
        return 2;
    }
    if (nrec) {
        for (int i = 0; i < nrec; i++) cfg.recipes[i] = recipes[i];
        cfg.nrecipes = nrec;
    }
    for (int i = 0; accum && i < cfg.nrecipes; i++) /* --accum: RECIPE@accum=MODEL */
        if (!strstr(cfg.recipes[i], "@accum=")) {
            snprintf(accum_recipes[i], sizeof accum_recipes[i], "%s@accum=%s", cfg.recipes[i], accum);
            cfg.recipes[i] = accum_recipes[i];
        }
    if (model_spec) {
        fpsim_status st = fpsim_model_config_parse(&cfg.model, model_spec, 0);
        if (st) return fpsim_cli_fail(CMD, st);
    }
    cfg.task.seed = cfg.seed;
    if (from) {
        if (model_spec) {
            fpsim_cli_error(CMD, "--from and --model conflict: the capture fixes the model");
            return 2;
        }
        if (pretrain_given) { /* it would be ignored: the capture's weights are the starting point */
            fpsim_cli_error(CMD, "--from and --pretrain conflict: the replay starts from the capture's weights");
            return 2;
        }
        fpsim_status st = fpsim_capture_load(&capture, from);
        if (st) return fpsim_cli_fail_input(CMD, st);
        if (!quiet && (st = fpsim_cli_print_capture_diffs(&capture, from))) return fpsim_cli_fail(CMD, st);
        cfg.model = capture.model.config;
        cfg.init_params = capture.model.params_memory;
        cfg.pretrain_steps = 0;
        cfg.batch = capture_batch;
        cfg.batch_ctx = &capture;
        if (!steps_given) cfg.steps = 1;
    }
    /* Recipes against the model, before any work (fpsim_replay_create pretrains before it builds
     * the engines): one whose first/last high-precision layers cover every layer quantizes
     * nothing. */
    for (int i = 0; i < cfg.nrecipes; i++) {
        fpsim_engine_plan plan;
        fpsim_status st = fpsim_engine_plan_from_recipe(&plan, cfg.recipes[i]);
        if (!st) st = fpsim_engine_plan_check_layers(&plan, cfg.model.layers);
        if (st) return fpsim_cli_fail(CMD, st);
    }
    if (cfg.threads <= 0) cfg.threads = fpsim_threads_default(); /* FPSIM_THREADS (checked by main.c), else the cores */
    openblas_set_num_threads(cfg.threads);

    /* Unwritable output: found before the run, not after it. */
    if (fpsim_cli_refuse_input_as_output(CMD, "--out", out, "--from", from)) return 2;
    fpsim_status st = fpsim_file_check_writable(out);
    if (st) return fpsim_cli_fail_input(CMD, st);
    if (!no_plots && plot_check_outdir(CMD, "--plots", plots, 0)) return 2;

    replay_cli c;
    memset(&c, 0, sizeof c);
    c.out = out;
    fpsim_cli_command_line(c.cmdline, sizeof c.cmdline, argc, argv);
    cfg.progress = on_progress;
    cfg.progress_ctx = &c;
    cfg.step_done = on_step;
    cfg.step_ctx = &c;
    if ((st = fpsim_replay_create(&c.r, &cfg))) {
        return fpsim_cli_fail(CMD, st);
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    double t0 = fpsim_cli_seconds();
    fpsim_cli_progress_begin(&c.progress, "replay", (uint64_t)(cfg.steps * (1 + cfg.nrecipes)));
    st = fpsim_replay_run(c.r);
    fpsim_cli_progress_end(&c.progress);
    if (st) {
        int code = fpsim_cli_fail(CMD, st);
        if (c.r->steps_done && st != FPSIM_EINTERRUPTED)
            fpsim_cli_note("fpsim replay: %s keeps the %d finished step(s)", out, c.r->steps_done);
        fpsim_replay_free(c.r);
        return code == 2 ? 1 : code;
    }
    double t_replay = fpsim_cli_seconds() - t0;

    if (bias_variance) {
        fpsim_biasvar_result bv;
        fpsim_cli_note("fpsim replay: bias-variance sweep (%ld SR seeds, N up to %llu)", bv_seeds,
                       (unsigned long long)bv_tokens);
        st = fpsim_replay_biasvar(c.r, &bv, (int)bv_seeds, (size_t)bv_tokens);
        if (!st) st = fpsim_replay_write_h5(c.r, out, c.cmdline, &bv);
        if (st) {
            fpsim_replay_free(c.r);
                return fpsim_cli_fail(CMD, st);
        }
        if (!quiet) {
            printf("\nbias vs variance of a summed weight gradient (%s wgrad of layer %d; relative "
                   "to ||G_N||; %d SR seeds)\n  %-16s", fpsim_site_name(bv.site), bv.layer, bv.seeds, "N");
            for (int j = 0; j < bv.nns; j++) printf(" %9zu", bv.ns[j]);
            printf("\n");
            for (int k = 0; k < bv.ncases; k++) {
                printf("  %-16s", bv.case_names[k]);
                for (int j = 0; j < bv.nns; j++) printf(" %9.2e", bv.rmse[k][j]);
                printf("   (rmse)\n  %-16s", "");
                for (int j = 0; j < bv.nns; j++) printf(" %9.2e", bv.bias[k][j]);
                printf("   (bias)\n");
            }
        }
    }
    if (!quiet) print_table(c.r);
    fpsim_cli_note("fpsim replay: %d step(s) x (reference + %d recipes) in %.1f s; wrote %s",
                   c.r->steps_done, c.r->nrecipes, t_replay, out);
    fpsim_replay_free(c.r);

    if (no_plots) return 0;
    char *pargv[] = {"plot", (char *)out, "--outdir", (char *)plots, "--format", (char *)format,
                     quiet ? "--quiet" : NULL, NULL};
    int pargc = quiet ? 7 : 6;
    return cmd_plot(pargc, pargv);
}
