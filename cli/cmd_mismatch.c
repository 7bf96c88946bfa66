/* cmd_mismatch.c: `fpsim mismatch`: generator/trainer mismatch, token by token and layer by layer
 * (docs/mismatch.md). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_capture.h"
#include "cli_util.h"
#include "commands.h"
#include "fpsim_capture.h"
#include "fpsim_file.h"
#include "fpsim_mismatch.h"
#include "mismatch_plot.h"

static const char *const CMD = "mismatch";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim mismatch --generator G --trainer T [--tokens FILE | --sample N | --from CAP]\n"
            "                      [--steps S] [--out m.h5] [--seed S] [--quiet] [--suite]\n"
            "                      [--model SPEC] [--pretrain N] [--temperature X] [--top-p X]\n"
            "                      [--no-attribution] [--threads T] [--plot m.h5 [--plots DIR]]\n\n"
            "Scores the same tokens with two engines of one model and weights: the generator\n"
            "(sampler) and the trainer (logprob recomputation), each a recipe plus kernel numerics,\n"
            "and reports NeMo RL's mismatch metrics (token_mult_prob_error, gen_kl_error,\n"
            "policy_kl_error, js_divergence_error, sampling_importance_ratio), the Thinking\n"
            "Machines kl_sample_train_v1/v2 and quantiles of g - p, the IS corrections (tis C=2,\n"
            "icepop [0.5,5], seq-mask-tis [0.999,1.002]) with how often they bite, per-layer\n"
            "errors at the canonical points (rel L2, max abs, cosine, logit-lens KL), and an\n"
            "attribution that swaps one layer or part of the generator to the trainer's numerics.\n\n"
            "  --generator G    engine text RECIPE[,key=value...]: RECIPE from `fpsim recipes` (or\n"
            "                   fp32, fp64, or a custom recipe, whose schemes may hold ','); keys\n"
            "                   accum=fp32|hopper-qgmma|hopper-qgmma:fast|fp64 (FP8 fprop GEMMs only),\n"
            "                   reduce=seq|pairwise|blocked, kv=hp|fp8, kv_scales=fresh|stale,\n"
            "                   style=decode|prefill, refit=bf16|none\n"
            "                   (generator defaults: style=decode,reduce=pairwise,refit=bf16)\n"
            "  --trainer T      same grammar (defaults: style=prefill,reduce=seq,refit=none)\n"
            "  --tokens FILE    score these sequences instead of sampling: one per line, token ids\n"
            "                   separated by spaces, '|' before the scored part (docs/mismatch.md)\n"
            "  --sample N       sequences sampled per step by the generator (default 32)\n"
            "  --steps S        optimizer steps (refit, KV recalibration, sample, score; default 1)\n"
            "  --suite          the standard configurations side by side (bf16, fp8-e2e,\n"
            "                   fp8-gen-only, fp8-pow2-train, fp8-kv-fresh/stale, nvfp4-gen-only)\n"
            "  --out PATH       HDF5 results, named .h5 or .hdf5 (schema in docs/mismatch.md)\n"
            "  --seed S         sampling and SR seed (default 1)\n"
            "  --model SPEC     model spec (fpsim replay --help), default the 4-layer d=256 model\n"
            "  --pretrain N     FP32 training steps before step 0 (default 150)\n"
            "  --temperature X  sampling temperature, >= 1e-5 (default 1); --top-p X nucleus (default 1)\n"
            "  --no-attribution skip the per-layer / per-part swaps\n"
            "  --threads T      threads (same bits on any count)\n"
            "  --plot FILE      draw the plots of a mismatch file into --plots DIR (default plots), and\n"
            "                   nothing else: run options beside it are refused\n"
            "  --from FILE      a PyTorch capture (scripts/capture_torch.py): its model and weights\n"
            "                   (no pretraining) and its batch's sequences as --tokens, every token\n"
            "                   scored (the capture's loss mask is over its targets); prints fpsim\n"
            "                   FP32 vs PyTorch per tensor first\n"
            "  --quiet, -q      no notes, no table\n\n"
            "Options that would have no effect are refused (exit 2): --sample or --top-p with --tokens\n"
            "or --from, --pretrain with --from. So is a token file in which no token is scored.\n");
}

/* --plot FILE: an existing readable file, not a directory (a missing one is bad input, exit 2,
 * not a failure of the plotting). */
static fpsim_status check_plot_input(const char *h5)
{
    struct stat sb;
    if (stat(h5, &sb) != 0)
        return fpsim_fail(FPSIM_EINVAL, "--plot '%s': %s", h5, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return fpsim_fail(FPSIM_EINVAL, "--plot '%s' is a directory, not a mismatch file", h5);
    if (access(h5, R_OK) != 0)
        return fpsim_fail(FPSIM_EINVAL, "--plot '%s' is not readable: %s", h5, strerror(errno));
    return FPSIM_OK;
}

static void on_progress(void *ctx, const char *what)
{
    (void)ctx;
    fpsim_cli_note("mismatch: %s done", what);
}

static void print_table(const fpsim_mm_run *r)
{
    int N = r->nresults, S = r->config.steps, L = r->config.model.layers;
    printf("%-34s", "metric (last step)");
    for (int i = 0; i < N; i++) printf(" %14s", r->results[i].name);
    printf("\n");
#define ROW(label, expr)                                                                  \
    do {                                                                                  \
        printf("%-34s", label);                                                           \
        for (int i = 0; i < N; i++) {                                                     \
            const fpsim_mm_result *x = &r->results[i];                                    \
            const fpsim_mm_summary *s = &x->summary[S - 1];                               \
            (void)s;                                                                      \
            printf(" %14.6g", (double)(expr));                                            \
        }                                                                                 \
        printf("\n");                                                                     \
    } while (0)
    ROW("tokens scored", s->tokens);
    ROW("token_mult_prob_error mean", s->token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean);
    ROW("token_mult_prob_error median", s->token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].median);
    ROW("token_mult_prob_error p99", s->token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].p99);
    ROW("token_mult_prob_error max", s->token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].max);
    ROW("gen_kl_error", s->token[FPSIM_MM_GEN_KL_ERROR].mean);
    ROW("policy_kl_error", s->token[FPSIM_MM_POLICY_KL_ERROR].mean);
    ROW("js_divergence_error", s->token[FPSIM_MM_JS_DIVERGENCE_ERROR].mean);
    ROW("sampling_importance_ratio", s->token[FPSIM_MM_SAMPLING_IMPORTANCE_RATIO].mean);
    ROW("kl_sample_train_v1", s->token[FPSIM_MM_KL_SAMPLE_TRAIN_V1].mean);
    ROW("kl_sample_train_v2", s->token[FPSIM_MM_KL_SAMPLE_TRAIN_V2].mean);
    ROW("train_rollout_logprob_abs_diff", s->token[FPSIM_MM_LOGPROB_ABS_DIFF].mean);
    ROW("g-p p05", s->diff_p05);
    ROW("g-p p50", s->diff_p50);
    ROW("g-p p95", s->diff_p95);
    ROW("g-p max_abs", s->diff_max_abs);
    ROW("seq mult_prob_error max", s->seq_mult_prob_error.max);
    ROW("is_oob_ratio tis(2)", x->is[(size_t)(S - 1) * FPSIM_IS_COUNT + FPSIM_IS_TIS].oob_ratio);
    ROW("is_oob_ratio icepop[0.5,5]", x->is[(size_t)(S - 1) * FPSIM_IS_COUNT + FPSIM_IS_ICEPOP].oob_ratio);
    ROW("is_oob_ratio seq-mask-tis", x->is[(size_t)(S - 1) * FPSIM_IS_COUNT + FPSIM_IS_SEQ_MASK_TIS].oob_ratio);
    ROW("logits rel L2", x->points[(size_t)(S - 1) * (size_t)(L + 3) + (size_t)(L + 2)].rel_l2);
    ROW("logits KL(gen||train)", x->points[(size_t)(S - 1) * (size_t)(L + 3) + (size_t)(L + 2)].lens_kl);
    ROW("KV clip fraction", x->kv_clip[S - 1]);
    ROW("reward (sampled)", x->reward_mean);
#undef ROW
    for (int i = 0; i < N; i++) {
        const fpsim_mm_result *x = &r->results[i];
        printf("\n%s: generator %s\n%*s  trainer   %s\n", x->name, x->gen_text, (int)strlen(x->name), "", x->train_text);
        printf("  %-12s %12s %12s %12s %12s\n", "point", "rel_l2", "max_abs", "cosine", "lens_kl");
        for (int k = 0; k <= L + 2; k++) {
            const fpsim_mm_point *p = &x->points[(size_t)(S - 1) * (size_t)(L + 3) + (size_t)k];
            char nm[32];
            if (k == 0) snprintf(nm, sizeof nm, "embed");
            else if (k <= L) snprintf(nm, sizeof nm, "block%d", k - 1);
            else if (k == L + 1) snprintf(nm, sizeof nm, "final_norm");
            else snprintf(nm, sizeof nm, "logits");
            printf("  %-12s %12.4g %12.4g %12.8f %12.4g\n", nm, p->rel_l2, p->max_abs, p->cosine, p->lens_kl);
        }
        if (x->have_attr) {
            double base = x->summary[S - 1].token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean - 1.0;
            printf("  attribution: token_mult_prob_error - 1 with one part on the trainer's numerics (full: %.4g)\n", base);
            for (int k = 0; k < L + 2; k++) {
                double v = x->attr_layer[k].token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean - 1.0;
                char nm[32];
                if (k == 0) snprintf(nm, sizeof nm, "embed");
                else if (k <= L) snprintf(nm, sizeof nm, "layer%d", k - 1);
                else snprintf(nm, sizeof nm, "head");
                printf("    %-10s %12.4g  (drop %+.4g)\n", nm, v, base - v);
            }
            const char *parts[3] = {"gemm", "reduce", "kv"};
            for (int k = 0; k < 3; k++) {
                double v = x->attr_part[k].token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean - 1.0;
                printf("    %-10s %12.4g  (drop %+.4g)\n", parts[k], v, base - v);
            }
        }
    }
}

/* --plot only draws an existing file: a run option beside it would be silently ignored, and so
 * would --plots without --plot. Prints the error line; returns 1 if refused. */
static int refuse_with_plot(const char *plot, const char *run_option)
{
    if (!plot) {
        fpsim_cli_error(CMD, "--plots DIR needs --plot FILE (it names where the plots of FILE go)");
        return 1;
    }
    if (run_option) {
        fpsim_cli_error(CMD, "%s has no effect with --plot, which draws an existing mismatch file (run first, "
                        "then plot)", run_option);
        return 1;
    }
    return 0;
}

/* Options that given sequences make meaningless: --sample (the number of sequences sampled),
 * --top-p (a sampling filter) with --tokens or --from, and --pretrain with --from (a capture's
 * weights are used as they are). Prints the error line; returns 1 if refused. */
static int refuse_ignored_run_options(const char *tokens, const char *from, int sample_given, int pretrain_given,
                                      int top_p_given)
{
    const char *given = tokens ? "--tokens" : from ? "--from" : NULL;
    const char *ignored = !given ? NULL : sample_given ? "--sample" : top_p_given ? "--top-p" : NULL;
    if (ignored) {
        fpsim_cli_error(CMD, "%s has no effect with %s: the sequences are given, not sampled", ignored, given);
        return 1;
    }
    if (from && pretrain_given) {
        fpsim_cli_error(CMD, "--pretrain has no effect with --from: the capture's weights are used as they are");
        return 1;
    }
    return 0;
}

int cmd_mismatch(int argc, char **argv)
{
    if (fpsim_cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    fpsim_mm_config cfg;
    fpsim_mm_config_default(&cfg);
    const char *gen = NULL, *train = NULL, *tokens = NULL, *out = NULL, *model = NULL;
    const char *plot = NULL, *plots_dir = NULL, *from = NULL;
    const char *run_option = NULL; /* the first option of a run (none of them means anything to --plot) */
    int suite = 0, quiet = 0, sample_given = 0, pretrain_given = 0, top_p_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i]; /* "--name" or "--name=VALUE" (i moves past a separate value) */
        const char *v = NULL;
        int k;
        long n;
        uint64_t u;
        double d;
        if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--generator", &v))) {
            if (k < 0) return 2;
            gen = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--trainer", &v))) {
            if (k < 0) return 2;
            train = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--tokens", &v))) {
            if (k < 0) return 2;
            tokens = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--sample", &v))) {
            if (k < 0) return 2;
            if (fpsim_cli_parse_int(v, "--sample", 1, 1 << 20, &n)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            cfg.samples = (size_t)n;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--steps", &v))) {
            if (k < 0) return 2;
            if (fpsim_cli_parse_int(v, "--steps", 1, 100000, &n)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            cfg.steps = (int)n;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--pretrain", &v))) {
            if (k < 0) return 2;
            if (fpsim_cli_parse_int(v, "--pretrain", 0, 1000000, &n)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            cfg.pretrain_steps = (int)n;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--out", &v))) {
            if (k < 0) return 2;
            out = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--seed", &v))) {
            if (k < 0) return 2;
            if (fpsim_cli_parse_u64(v, "--seed", &u)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            cfg.seed = u;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--model", &v))) {
            if (k < 0) return 2;
            model = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--temperature", &v))) {
            if (k < 0) return 2;
            if (fpsim_cli_parse_double(v, "--temperature", &d)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            cfg.temperature = d;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--top-p", &v))) {
            if (k < 0) return 2;
            if (fpsim_cli_parse_double(v, "--top-p", &d)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            cfg.top_p = d;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--threads", &v))) {
            int t;
            if (k < 0) return 2;
            if (fpsim_cli_parse_threads(v, &t)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            cfg.threads = t;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--plot", &v))) {
            if (k < 0) return 2;
            plot = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--plots", &v))) {
            if (k < 0) return 2;
            plots_dir = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--from", &v))) {
            if (k < 0) return 2;
            from = v;
        } else if (!strcmp(argv[i], "--suite")) {
            suite = 1;
        } else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (!strcmp(argv[i], "--no-attribution")) {
            cfg.attribution = 0;
        } else {
            return fpsim_cli_unknown_option(CMD, argv[i]);
        }
        if (!run_option && strncmp(opt, "--plot", 6) && strcmp(opt, "--quiet") && strcmp(opt, "-q"))
            run_option = opt;
        sample_given |= !strncmp(opt, "--sample", 8);
        pretrain_given |= !strncmp(opt, "--pretrain", 10);
        top_p_given |= !strncmp(opt, "--top-p", 7);
    }
    fpsim_cli_set_quiet(quiet);
    if (plot || plots_dir) {
        if (refuse_with_plot(plot, run_option)) return 2;
        if (!plots_dir) plots_dir = "plots";
        fpsim_status st;
        if ((st = check_plot_input(plot))) return fpsim_cli_fail_input(CMD, st);
        /* the directory checked as fpsim plot and replay check theirs (one made for the check is
         * removed again: mismatch_plot_draw creates it once the file has been read) */
        if (plot_check_outdir(CMD, "--plots", plots_dir, 0)) return 2;
        setenv("FPSIM_PLOT_SCRIPTS", FPSIM_SOURCE_DIR "/scripts/plot", 0); /* unless the user set it */
        st = mismatch_plot_draw(plot, plots_dir, "png");
        return st ? fpsim_cli_fail(CMD, st) : 0;
    }
    if (refuse_ignored_run_options(tokens, from, sample_given, pretrain_given, top_p_given)) return 2;
    if (out && !fpsim_file_name_is_hdf5(out)) {
        fpsim_cli_error(CMD, "--out '%s': the name must end in .h5 or .hdf5 (the results file is HDF5)", out);
        return 2;
    }
    static fpsim_capture capture; /* --from: the model the run starts from */
    if (from) {
        if (model || tokens) {
            fpsim_cli_error(CMD, "--from conflicts with --model and --tokens: the capture fixes both");
            return 2;
        }
        fpsim_status st = fpsim_capture_load(&capture, from);
        if (st) return fpsim_cli_fail_input(CMD, st);
        if (!quiet && (st = fpsim_cli_print_capture_diffs(&capture, from))) return fpsim_cli_fail(CMD, st);
        cfg.model = capture.model.config;
        cfg.start = &capture.model;
        cfg.pretrain_steps = 0;
    }
    if (!(cfg.temperature > 0.0) || !isfinite(cfg.temperature)) {
        fpsim_cli_error(CMD, "--temperature must be a positive finite number");
        return 2;
    }
    if (cfg.temperature < FPSIM_MM_TEMPERATURE_MIN) { /* the metrics would be Inf and NaN */
        fpsim_cli_error(CMD, "--temperature %g is below %g: vLLM samples greedily there (_SAMPLING_EPS), which "
                        "fpsim does not model", cfg.temperature, FPSIM_MM_TEMPERATURE_MIN);
        return 2;
    }
    if (!(cfg.top_p > 0.0 && cfg.top_p <= 1.0)) {
        fpsim_cli_error(CMD, "--top-p must be in (0, 1]");
        return 2;
    }
    fpsim_status st;
    if (model && (st = fpsim_model_config_parse(&cfg.model, model, 0))) return fpsim_cli_fail(CMD, st);
    if (suite) {
        if (gen || train) {
            fpsim_cli_error(CMD, "--suite runs its own configurations: drop --generator / --trainer");
            return 2;
        }
        if ((st = fpsim_mm_config_suite(&cfg))) return fpsim_cli_fail(CMD, st);
        if (cfg.steps < 2) cfg.steps = 3; /* fresh vs stale KV scales need steps */
        cfg.attribution = 0;
    } else {
        if (!gen || !train) {
            fpsim_cli_error(CMD, "needs --generator and --trainer (or --suite); see fpsim mismatch --help");
            return 2;
        }
        cfg.nconfigs = 1;
        snprintf(cfg.names[0], sizeof cfg.names[0], "run");
        fpsim_engine_config_generator(&cfg.gen[0], "bf16");
        fpsim_engine_config_trainer(&cfg.train[0], "bf16");
        if ((st = fpsim_engine_config_parse(&cfg.gen[0], gen))) return fpsim_cli_fail(CMD, st);
        if ((st = fpsim_engine_config_parse(&cfg.train[0], train))) return fpsim_cli_fail(CMD, st);
    }
    int32_t *tok = NULL;
    uint8_t *mask = NULL;
    if (from) { /* the captured batch: batch sequences of seq tokens, every token real */
        size_t n = fpsim_model_tokens(&cfg.model);
        tok = malloc(sizeof(int32_t) * n);
        mask = malloc(n);
        if (!tok || !mask) {
            free(tok), free(mask);
            return fpsim_cli_fail(CMD, fpsim_fail(FPSIM_ENOMEM, "out of memory"));
        }
        memcpy(tok, capture.tokens, sizeof(int32_t) * n);
        memset(mask, 1, n);
        cfg.tokens = tok;
        cfg.mask = mask;
        cfg.given_n = (size_t)cfg.model.batch;
        cfg.given_len = (size_t)cfg.model.seq;
    }
    if (tokens) {
        if ((st = fpsim_mm_tokens_read_ctx(tokens, cfg.model.vocab, (size_t)cfg.model.seq, &tok, &mask, &cfg.given_n,
                                           &cfg.given_len)))
            return fpsim_cli_fail_input(CMD, st);
        cfg.tokens = tok;
        cfg.mask = mask;
    }
    if (out) {
        if (fpsim_cli_refuse_input_as_output(CMD, "--out", out, "--from", from) ||
            fpsim_cli_refuse_input_as_output(CMD, "--out", out, "--tokens", tokens)) {
            free(tok);
            free(mask);
            return 2;
        }
        if ((st = fpsim_file_check_writable(out))) {
            free(tok);
            free(mask);
            return fpsim_cli_fail_input(CMD, st);
        }
    }
    if (!quiet) {
        cfg.progress = on_progress;
    }
    char cmdline[4096];
    fpsim_cli_command_line(cmdline, sizeof cmdline, argc, argv);
    double t0 = fpsim_cli_seconds();
    fpsim_mm_run *r = NULL;
    st = fpsim_mm_run_all(&r, &cfg);
    free(tok);
    free(mask);
    if (st) return fpsim_cli_fail(CMD, st);
    fpsim_cli_note("mismatch: %.1f s", fpsim_cli_seconds() - t0);
    if (!quiet) print_table(r);
    if (out && (st = fpsim_mm_write_h5(r, out, cmdline))) {
        fpsim_mm_run_free(r);
        return fpsim_cli_fail(CMD, st);
    }
    fpsim_mm_run_free(r);
    return 0;
}
