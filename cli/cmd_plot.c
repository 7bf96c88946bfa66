/* cmd_plot.c: `fpsim plot results.h5 [--outdir plots] [--format png|svg]`: reads a replay
 * results file (docs/hdf5-layout.md), writes small .dat tables beside the plots and runs
 * gnuplot on the scripts in scripts/plot:
 *   gemm_error_<pass>.<fmt>   GEMM output rel L2 error vs layer, per recipe, local and accumulated
 *   stream_error.<fmt>        residual stream (forward) and its gradient (backward) vs layer
 *   flush_rate.<fmt>, sat_rate.<fmt>   per-role flush-to-zero and saturation rates vs layer
 *   bias_vs_n.<fmt>           summed-gradient error vs tokens, log-log (when the file has it)
 * The scripts are looked up in $FPSIM_PLOT_SCRIPTS, else the source tree's scripts/plot.
 *
 * Everything is read and checked before anything is written: each dataset's element type, rank
 * and dims against the file's own name lists (attribute `steps`, and `views`, `layers`, `passes`,
 * `roles`, `points`, `point_layers`, `recipes`, bias_variance's `cases`), the recipe groups
 * against `recipes`, and that every plot has a finite value to draw. A file that fails is one
 * line and exit 2, with no output. Each output (.dat and image) is written under a temporary
 * name and renamed onto its name only once gnuplot has drawn the image; removed otherwise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_h5.h"
#include "mismatch_plot.h"
#include "plot_gnuplot.h"
#include "plot_results.h"

static const char *const CMD = "plot";

#ifndef FPSIM_SOURCE_DIR
#define FPSIM_SOURCE_DIR "."
#endif

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim plot RESULTS.h5 [--outdir DIR] [--format png|svg] [--quiet]\n\n"
            "Plots a results file of `fpsim replay` with gnuplot (which must be installed):\n"
            "GEMM output error vs layer per recipe (fprop, dgrad, wgrad; local and accumulated),\n"
            "residual-stream error vs layer, per-role flush and saturation rates, and the\n"
            "bias-vs-N sweep when the file has one. Writes DIR/*.dat and DIR/*.png (or .svg).\n"
            "A results file of `fpsim mismatch` gets the mismatch plots (as mismatch --plot).\n"
            "Every dataset a plot reads is checked first (type and dims against the file's name\n"
            "lists): a damaged file is one error line and exit 2, with nothing written.\n"
            "Each output is written under a temporary name and renamed when gnuplot succeeded.\n\n"
            "  --outdir DIR   output directory (default plots; created if missing)\n"
            "  --format F     png (default) or svg\n"
            "  --quiet, -q    no notes\n"
            "Environment: FPSIM_PLOT_SCRIPTS, the directory of the .gp scripts.\n");
}

/* GEMM error vs layer, one figure per pass: columns recipe:local, recipe:accumulated. */
static int plot_gemm_error(plot_ctx *p, const plot_results *r)
{
    for (size_t ps = 0; ps < r->passes.n; ps++) {
        char base[64], title[256];
        snprintf(base, sizeof base, "gemm_error_%s", r->passes.v[ps]);
        plot_output o;
        int any_positive = 0; /* none (an fp64 control alone): no log axis to draw them on */
        if (plot_output_open(p, base, &o)) return 2;
        fprintf(o.f, "index layer");
        for (size_t k = 0; k < r->recipes.n; k++) {
            plot_put_label(o.f, r->recipes.v[k], "local");
            plot_put_label(o.f, r->recipes.v[k], "accumulated");
        }
        fprintf(o.f, "\n");
        for (size_t l = 0; l < r->layers.n; l++) {
            fprintf(o.f, "%zu", l);
            plot_put_label(o.f, r->layers.v[l], NULL);
            for (size_t k = 0; k < r->recipes.n; k++) {
                double local = plot_last_step_layer(&r->gemm[k], (size_t)r->local, l, ps);
                double accumulated = plot_last_step_layer(&r->gemm[k], (size_t)r->accumulated, l, ps);
                plot_put(o.f, local);
                plot_put(o.f, accumulated);
                any_positive |= local > 0 || accumulated > 0;
            }
            fprintf(o.f, "\n");
        }
        snprintf(title, sizeof title, "%s GEMM output error vs layer (dashed: local, solid: accumulated)",
                 r->passes.v[ps]);
        if (plot_output_finish(p, &o, "error_vs_layer.gp", title, "relative L2 error vs FP64 reference",
                               any_positive ? "paired=1" : "paired=1; allzero=1"))
            return 1;
    }
    return 0;
}

/* Residual stream (forward: block outputs) and its gradient (backward) vs layer. */
static int plot_stream_error(plot_ctx *p, const plot_results *r)
{
    if (r->block_out < 0 || r->grad_stream < 0) return 0; /* a file without these points: nothing to draw */
    plot_output o;
    if (plot_output_open(p, "stream_error", &o)) return 2;
    fprintf(o.f, "index layer");
    for (size_t k = 0; k < r->recipes.n; k++) {
        plot_put_label(o.f, r->recipes.v[k], "backward");
        plot_put_label(o.f, r->recipes.v[k], "forward");
    }
    fprintf(o.f, "\n");
    int any_positive = 0;
    /* point layers: embed, 0..L-1, head; rows for the blocks and the head */
    for (size_t l = 1; l < r->players.n; l++) {
        fprintf(o.f, "%zu", l - 1);
        plot_put_label(o.f, r->players.v[l], NULL);
        for (size_t k = 0; k < r->recipes.n; k++) {
            double backward = plot_last_step_point(&r->stream[k], (size_t)r->grad_stream, l);
            double forward = plot_last_step_point(&r->stream[k], (size_t)r->block_out, l);
            plot_put(o.f, backward);
            plot_put(o.f, forward);
            any_positive |= backward > 0 || forward > 0;
        }
        fprintf(o.f, "\n");
    }
    return plot_output_finish(p, &o, "error_vs_layer.gp",
                         "residual stream vs layer, accumulated (solid: block output; dashed: its gradient)",
                         "relative L2 error vs FP64 reference", any_positive ? "paired=1" : "paired=1; allzero=1");
}

/* Flush or saturation rate vs layer, per recipe and role (accumulated view, last step). */
static int plot_rates(plot_ctx *p, const plot_results *r, const plot_table *per_recipe, const char *base,
                      const char *title)
{
    plot_output o;
    if (plot_output_open(p, base, &o)) return 2;
    fprintf(o.f, "index layer");
    for (size_t k = 0; k < r->recipes.n; k++)
        for (size_t role = 0; role < r->roles.n; role++) plot_put_label(o.f, r->recipes.v[k], r->roles.v[role]);
    fprintf(o.f, "\n");
    double vmax = 0;
    for (size_t l = 0; l < r->layers.n; l++) {
        fprintf(o.f, "%zu", l);
        plot_put_label(o.f, r->layers.v[l], NULL);
        for (size_t k = 0; k < r->recipes.n; k++)
            for (size_t role = 0; role < r->roles.n; role++) {
                double v = plot_last_step_layer(&per_recipe[k], (size_t)r->accumulated, l, role);
                plot_put(o.f, v);
                if (v > vmax) vmax = v;
            }
        fprintf(o.f, "\n");
    }
    char extra[64];
    /* all zero: a fixed axis height (percent axis: 1%) */
    snprintf(extra, sizeof extra, "nroles=%zu%s", r->roles.n, vmax > 0 ? "" : "; ymax=0.01");
    return plot_output_finish(p, &o, "rates_vs_layer.gp", title, "elements of the operand", extra);
}

static int plot_bias_vs_n(plot_ctx *p, const plot_results *r)
{
    if (!r->have_bias) return 0;
    size_t C = r->cases.n, J = (size_t)r->bias_n.dims[0];
    const double *n = r->bias_n.v, *bias = r->bias.v, *rmse = r->rmse.v;
    /* the N^-1/2 guide through the first stochastic case's rmse at the smallest N */
    size_t guide = 0;
    for (size_t k = 0; k < C; k++)
        if (strstr(r->cases.v[k], "sr")) {
            guide = k;
            break;
        }
    plot_output o;
    if (plot_output_open(p, "bias_vs_n", &o)) return 2;
    fprintf(o.f, "N");
    for (size_t k = 0; k < C; k++) {
        plot_put_label(o.f, r->cases.v[k], "rmse");
        plot_put_label(o.f, r->cases.v[k], "bias");
    }
    fprintf(o.f, " guide\n");
    for (size_t j = 0; j < J; j++) {
        fprintf(o.f, "%.0f", n[j]);
        for (size_t k = 0; k < C; k++) {
            plot_put(o.f, rmse[k * J + j]);
            plot_put(o.f, bias[k * J + j] > 0 ? bias[k * J + j] : NAN);
        }
        plot_put(o.f, rmse[guide * J] * sqrt(n[0] / n[j]));
        fprintf(o.f, "\n");
    }
    return plot_output_finish(p, &o, "bias_vs_n.gp",
                         "summed weight gradient: error vs tokens N (solid: total rmse, dashed: bias)", NULL, NULL);
}

static int plot_all(plot_ctx *p, const plot_results *r)
{
    int rc = plot_gemm_error(p, r);
    if (!rc) rc = plot_stream_error(p, r);
    if (!rc) rc = plot_rates(p, r, r->flush, "flush_rate",
                             "operands flushed to zero by quantization vs layer (accumulated view)");
    if (!rc) rc = plot_rates(p, r, r->sat, "sat_rate",
                             "operands saturated (clipped) by quantization vs layer (accumulated view)");
    if (!rc) rc = plot_bias_vs_n(p, r);
    return rc;
}

/* 1 when the file's root attribute `kind` (a string, as fpsim writes it) equals `kind`. */
static int file_kind_is(hid_t file, const char *kind)
{
    /* through the checked reader: a string array or a long string is "not this kind" (an array
     * read into one pointer overran the stack) */
    char value[64];
    return fpsim_h5_read_attr_string(file, ".", "kind", value, sizeof value) == FPSIM_OK && !strcmp(value, kind);
}

int cmd_plot(int argc, char **argv)
{
    if (fpsim_cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    const char *path = NULL, *outdir = "plots", *fmt = "png";
    for (int i = 1; i < argc; i++) {
        const char *v;
        int k;
        if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--outdir", &v))) {
            if (k < 0) return 2;
            outdir = v;
        } else if ((k = fpsim_cli_take_value(CMD, argc, argv, &i, "--format", &v))) {
            if (k < 0) return 2;
            if (strcmp(v, "png") && strcmp(v, "svg")) {
                fpsim_cli_error(CMD, "unknown --format '%s'; valid: png svg", v);
                return 2;
            }
            fmt = v;
        } else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            fpsim_cli_set_quiet(1);
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return fpsim_cli_unknown_option(CMD, argv[i]);
        } else if (!path) {
            path = argv[i];
        } else {
            fpsim_cli_error(CMD, "one results file only (got '%s' and '%s')", path, argv[i]);
            return 2;
        }
    }
    if (!path) {
        fpsim_cli_error(CMD, "no results file given (usage: fpsim plot RESULTS.h5 [--outdir DIR])");
        return 2;
    }
    const char *scripts = getenv("FPSIM_PLOT_SCRIPTS");
    if (!scripts || !*scripts) scripts = FPSIM_SOURCE_DIR "/scripts/plot";
    if (!plot_gnuplot_available()) {
        fpsim_cli_error(CMD, "gnuplot not found on PATH: install gnuplot (e.g. apt-get install gnuplot) "
                             "or skip plots (fpsim replay --no-plots)");
        return 1;
    }
    hid_t file;
    fpsim_status st = fpsim_h5_open_read(&file, path);
    if (st) return fpsim_cli_fail_input(CMD, st);
    int mismatch_file;
    H5E_BEGIN_TRY { mismatch_file = file_kind_is(file, "fpsim-mismatch"); } H5E_END_TRY;
    if (mismatch_file) { /* a file of `fpsim mismatch`: its own plots */
        fpsim_h5_close_read(file);
        setenv("FPSIM_PLOT_SCRIPTS", scripts, 1);
        st = mismatch_plot_draw(path, outdir, fmt);
        if (st) { /* its messages name `mismatch --plot`'s option, which is not given here */
            const char *msg = fpsim_last_error();
            fpsim_cli_error(CMD, "%s", strncmp(msg, "--plot: ", 8) ? msg : msg + 8);
            return FPSIM_EXIT_USAGE;
        }
        fpsim_cli_note("fpsim plot: mismatch plots in %s/", outdir);
        return 0;
    }

    /* Read and check everything, with HDF5's own error printing off: each way the file can be
     * wrong is one line of ours. */
    plot_results r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.file = file;
    int rc;
    H5E_BEGIN_TRY {
        rc = plot_results_load(&r);
        fpsim_h5_close_read(file);
    } H5E_END_TRY;
    if (!rc) rc = plot_check_drawable(&r);
    if (!rc) rc = plot_check_scripts(scripts, r.have_bias);
    if (!rc) rc = plot_check_outdir(CMD, "--outdir", outdir, 1);
    plot_ctx p = {path, outdir, fmt, scripts, 0};
    if (!rc) rc = plot_all(&p, &r);
    plot_results_free(&r);
    if (!rc) fpsim_cli_note("fpsim plot: %d plot(s) in %s/", p.made, outdir);
    return rc;
}
