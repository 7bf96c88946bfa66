/* cmd_plot.c: `fpsim plot results.h5 [--outdir plots] [--format png|svg]`: reads a replay
 * results file (docs/hdf5-layout.md), writes small .dat tables beside the plots and runs
 * gnuplot on the scripts in scripts/plot:
 *   gemm_error_<pass>.<fmt>   GEMM output rel L2 error vs layer, per recipe, local and accumulated
 *   stream_error.<fmt>        residual stream (forward) and its gradient (backward) vs layer
 *   flush_rate.<fmt>, sat_rate.<fmt>   per-role flush-to-zero and saturation rates vs layer
 *   bias_vs_n.<fmt>           summed-gradient error vs tokens, log-log (when the file has it)
 * The scripts are looked up in $FPSIM_PLOT_SCRIPTS, else the source tree's scripts/plot. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_h5.h"
#include "fpsim_mismatch.h"

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
            "bias-vs-N sweep when the file has one. Writes DIR/*.dat and DIR/*.png (or .svg).\n\n"
            "  --outdir DIR   output directory (default plots; created if missing)\n"
            "  --format F     png (default) or svg\n"
            "  --quiet        no notes\n"
            "Environment: FPSIM_PLOT_SCRIPTS, the directory of the .gp scripts.\n");
}

/* ---- reading ------------------------------------------------------------------------------ */

typedef struct names {
    size_t n;
    char **v;
} names;

static void names_free(names *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* A 1-D string-array attribute of the root. */
static int read_names(hid_t file, const char *attr, names *out, const char *path)
{
    out->n = 0;
    out->v = NULL;
    if (H5Aexists(file, attr) <= 0) {
        fpsim_cli_error(CMD, "%s: not a replay results file (no '%s' attribute)", path, attr);
        return 2;
    }
    hid_t a = H5Aopen(file, attr, H5P_DEFAULT);
    hid_t sp = H5Aget_space(a);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    char **buf = calloc(n > 0 ? (size_t)n : 1, sizeof *buf);
    int rc = 0;
    if (!buf || n <= 0 || H5Aread(a, t, buf) < 0) {
        fpsim_cli_error(CMD, "%s: attribute '%s' is not an array of strings", path, attr);
        rc = 2;
    } else {
        out->v = calloc((size_t)n, sizeof *out->v);
        out->n = (size_t)n;
        for (hssize_t i = 0; i < n; i++) out->v[i] = strdup(buf[i] ? buf[i] : "");
        H5Dvlen_reclaim(t, sp, H5P_DEFAULT, buf);
    }
    free(buf);
    H5Tclose(t);
    H5Sclose(sp);
    H5Aclose(a);
    return rc;
}

/* A float64 dataset of any rank with its dims. */
typedef struct table {
    int rank;
    hsize_t dims[8];
    double *v;
} table;

static int read_table(hid_t loc, const char *name, table *t, const char *path, int rank)
{
    memset(t, 0, sizeof *t);
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) {
        fpsim_cli_error(CMD, "%s: dataset '%s' missing (not a replay results file?)", path, name);
        return 2;
    }
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    hid_t sp = H5Dget_space(ds);
    t->rank = H5Sget_simple_extent_ndims(sp);
    int rc = 0;
    if (t->rank != rank) {
        fpsim_cli_error(CMD, "%s: dataset '%s' has rank %d, expected %d", path, name, t->rank, rank);
        rc = 2;
    } else {
        H5Sget_simple_extent_dims(sp, t->dims, NULL);
        size_t n = 1;
        for (int i = 0; i < rank; i++) n *= (size_t)t->dims[i];
        t->v = malloc((n ? n : 1) * sizeof *t->v);
        if (!t->v || H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->v) < 0) {
            fpsim_cli_error(CMD, "%s: cannot read dataset '%s'", path, name);
            rc = 2;
        }
    }
    H5Sclose(sp);
    H5Dclose(ds);
    return rc;
}

/* "recipes/<recipe>/<dataset>", the recipe's '/' written as '_' as the writer does. */
static void recipe_path(char *buf, size_t cap, const char *recipe, const char *dataset)
{
    char g[512];
    snprintf(g, sizeof g, "%s", recipe);
    for (char *c = g; *c; c++)
        if (*c == '/') *c = '_';
    snprintf(buf, cap, "recipes/%s/%s", g, dataset);
}

/* ---- writing and running ------------------------------------------------------------------ */

static void put(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, " %.9g", v);
    else fprintf(f, " ?");
}

/* Header names may not contain spaces (gnuplot columnheader). */
static void put_name(FILE *f, const char *a, const char *b)
{
    fputc(' ', f);
    for (const char *c = a; *c; c++) fputc(*c == ' ' ? '_' : *c, f);
    if (b) {
        fputc(':', f);
        for (const char *c = b; *c; c++) fputc(*c == ' ' ? '_' : *c, f);
    }
}

static int gnuplot_available(void)
{
    int rc = system("gnuplot --version >/dev/null 2>&1");
    return rc == 0;
}

/* gnuplot -e ASSIGN SCRIPT, stderr kept (gnuplot's own error lines help). */
static int run_gnuplot(const char *assign, const char *script)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execlp("gnuplot", "gnuplot", "-e", assign, script, (char *)NULL);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

typedef struct plot_ctx {
    const char *path, *outdir, *fmt, *scripts;
    int made;
} plot_ctx;

static int plot(plot_ctx *p, const char *script, const char *base, const char *title,
                const char *ylab, const char *extra)
{
    char dat[1024], outf[1024], scr[1024], assign[4096 + 3072];
    snprintf(dat, sizeof dat, "%s/%s.dat", p->outdir, base);
    snprintf(outf, sizeof outf, "%s/%s.%s", p->outdir, base, p->fmt);
    snprintf(scr, sizeof scr, "%s/%s", p->scripts, script);
    snprintf(assign, sizeof assign, "datafile='%s'; outfile='%s'; fmt='%s'; plottitle='%s'; ylab='%s'%s%s",
             dat, outf, p->fmt, title, ylab ? ylab : "", extra ? "; " : "", extra ? extra : "");
    int rc = run_gnuplot(assign, scr);
    if (rc != 0) {
        fpsim_cli_error(CMD, "gnuplot failed on %s (exit %d)", scr, rc);
        return 1;
    }
    p->made++;
    return 0;
}

static FILE *open_dat(const plot_ctx *p, const char *base)
{
    char dat[4096];
    snprintf(dat, sizeof dat, "%s/%s.dat", p->outdir, base);
    FILE *f = fopen(dat, "w");
    if (!f) fpsim_cli_error(CMD, "cannot write %s: %s", dat, strerror(errno));
    return f;
}

/* GEMM error vs layer, one file per pass: columns recipe:local, recipe:accumulated. */
static int plot_gemm_error(plot_ctx *p, hid_t file, const names *recipes, const names *layers,
                           const names *passes)
{
    size_t R = recipes->n, L = layers->n;
    table *t = calloc(R, sizeof *t);
    int rc = 0;
    for (size_t r = 0; r < R && !rc; r++) {
        char name[1024];
        recipe_path(name, sizeof name, recipes->v[r], "layer_gemm_rel_l2");
        rc = read_table(file, name, &t[r], p->path, 4);
    }
    for (size_t ps = 0; ps < passes->n && !rc; ps++) {
        char base[64], title[256];
        snprintf(base, sizeof base, "gemm_error_%s", passes->v[ps]);
        FILE *f = open_dat(p, base);
        if (!f) {
            rc = 1;
            break;
        }
        fprintf(f, "index layer");
        for (size_t r = 0; r < R; r++) {
            put_name(f, recipes->v[r], "local");
            put_name(f, recipes->v[r], "accumulated");
        }
        fprintf(f, "\n");
        for (size_t l = 0; l < L; l++) {
            fprintf(f, "%zu %s", l, layers->v[l]);
            for (size_t r = 0; r < R; r++) {
                const table *x = &t[r];
                size_t step = (size_t)x->dims[0] - 1, V = x->dims[1], LL = x->dims[2], P = x->dims[3];
                for (size_t v = 0; v < V; v++) put(f, x->v[((step * V + v) * LL + l) * P + ps]);
            }
            fprintf(f, "\n");
        }
        fclose(f);
        snprintf(title, sizeof title, "%s GEMM output error vs layer (dashed: local, solid: accumulated)",
                 passes->v[ps]);
        rc = plot(p, "error_vs_layer.gp", base, title, "relative L2 error vs FP64 reference", "paired=1");
    }
    for (size_t r = 0; r < R; r++) free(t[r].v);
    free(t);
    return rc;
}

/* Residual stream (forward: block outputs) and its gradient (backward) vs layer. */
static int plot_stream_error(plot_ctx *p, hid_t file, const names *recipes, const names *points,
                             const names *players)
{
    size_t R = recipes->n;
    int fwd = -1, bwd = -1;
    for (size_t i = 0; i < points->n; i++) {
        if (!strcmp(points->v[i], "block_out")) fwd = (int)i;
        if (!strcmp(points->v[i], "grad_stream")) bwd = (int)i;
    }
    if (fwd < 0 || bwd < 0) return 0; /* a file without these points: nothing to draw */
    FILE *f = open_dat(p, "stream_error");
    if (!f) return 1;
    table *t = calloc(R, sizeof *t);
    int rc = 0;
    for (size_t r = 0; r < R && !rc; r++) {
        char name[1024];
        recipe_path(name, sizeof name, recipes->v[r], "point_rel_l2");
        rc = read_table(file, name, &t[r], p->path, 3);
    }
    if (!rc) {
        fprintf(f, "index layer");
        for (size_t r = 0; r < R; r++) {
            put_name(f, recipes->v[r], "backward");
            put_name(f, recipes->v[r], "forward");
        }
        fprintf(f, "\n");
        /* point layers: embed, 0..L-1, head; rows for the blocks and the head */
        for (size_t l = 1; l < players->n; l++) {
            fprintf(f, "%zu %s", l - 1, players->v[l]);
            for (size_t r = 0; r < R; r++) {
                const table *x = &t[r];
                size_t step = (size_t)x->dims[0] - 1, P = x->dims[1], LL = x->dims[2];
                put(f, x->v[(step * P + (size_t)bwd) * LL + l]);
                put(f, x->v[(step * P + (size_t)fwd) * LL + l]);
            }
            fprintf(f, "\n");
        }
    }
    fclose(f);
    if (!rc)
        rc = plot(p, "error_vs_layer.gp", "stream_error",
                  "residual stream vs layer, accumulated (solid: block output; dashed: its gradient)",
                  "relative L2 error vs FP64 reference", "paired=1");
    for (size_t r = 0; r < R; r++) free(t[r].v);
    free(t);
    return rc;
}

/* Flush or saturation rate vs layer, per recipe and role (accumulated view, last step). */
static int plot_rates(plot_ctx *p, hid_t file, const names *recipes, const names *layers,
                      const names *roles, const char *metric, const char *base, const char *title)
{
    size_t R = recipes->n;
    table *t = calloc(R, sizeof *t);
    int rc = 0;
    for (size_t r = 0; r < R && !rc; r++) {
        char name[1024], ds[128];
        snprintf(ds, sizeof ds, "layer_operand_%s", metric);
        recipe_path(name, sizeof name, recipes->v[r], ds);
        rc = read_table(file, name, &t[r], p->path, 4);
    }
    FILE *f = rc ? NULL : open_dat(p, base);
    if (!rc && !f) rc = 1;
    if (!rc) {
        fprintf(f, "index layer");
        for (size_t r = 0; r < R; r++)
            for (size_t k = 0; k < roles->n; k++) put_name(f, recipes->v[r], roles->v[k]);
        fprintf(f, "\n");
        double vmax = 0;
        for (size_t l = 0; l < layers->n; l++) {
            fprintf(f, "%zu %s", l, layers->v[l]);
            for (size_t r = 0; r < R; r++) {
                const table *x = &t[r];
                size_t step = (size_t)x->dims[0] - 1, V = x->dims[1], LL = x->dims[2], K = x->dims[3];
                for (size_t k = 0; k < K; k++) {
                    double v = x->v[((step * V + 1) * LL + l) * K + k];
                    put(f, v);
                    if (v > vmax) vmax = v;
                }
            }
            fprintf(f, "\n");
        }
        fclose(f);
        char extra[64];
        /* all zero: a fixed axis height (percent axis: 1%) */
        snprintf(extra, sizeof extra, "nroles=%zu%s", roles->n, vmax > 0 ? "" : "; ymax=0.01");
        rc = plot(p, "rates_vs_layer.gp", base, title, "elements of the operand", extra);
    }
    for (size_t r = 0; r < R; r++) free(t[r].v);
    free(t);
    return rc;
}

static int plot_bias_vs_n(plot_ctx *p, hid_t file)
{
    if (H5Lexists(file, "bias_variance", H5P_DEFAULT) <= 0) return 0;
    hid_t g = H5Gopen2(file, "bias_variance", H5P_DEFAULT);
    names cases;
    int rc = read_names(g, "cases", &cases, p->path);
    table n, bias, rmse;
    memset(&n, 0, sizeof n);
    memset(&bias, 0, sizeof bias);
    memset(&rmse, 0, sizeof rmse);
    if (!rc) rc = read_table(g, "n", &n, p->path, 1);
    if (!rc) rc = read_table(g, "bias", &bias, p->path, 2);
    if (!rc) rc = read_table(g, "rmse", &rmse, p->path, 2);
    H5Gclose(g);
    FILE *f = rc ? NULL : open_dat(p, "bias_vs_n");
    if (!rc && !f) rc = 1;
    if (!rc) {
        size_t C = cases.n, J = (size_t)n.dims[0];
        /* the N^-1/2 guide through the first stochastic case's rmse at the smallest N */
        size_t guide = 0;
        for (size_t k = 0; k < C; k++)
            if (strstr(cases.v[k], "sr")) {
                guide = k;
                break;
            }
        fprintf(f, "N");
        for (size_t k = 0; k < C; k++) {
            put_name(f, cases.v[k], "rmse");
            put_name(f, cases.v[k], "bias");
        }
        fprintf(f, " guide\n");
        for (size_t j = 0; j < J; j++) {
            fprintf(f, "%.0f", n.v[j]);
            for (size_t k = 0; k < C; k++) {
                put(f, rmse.v[k * J + j]);
                put(f, bias.v[k * J + j] > 0 ? bias.v[k * J + j] : NAN);
            }
            put(f, rmse.v[guide * J] * sqrt(n.v[0] / n.v[j]));
            fprintf(f, "\n");
        }
        fclose(f);
        rc = plot(p, "bias_vs_n.gp", "bias_vs_n",
                  "summed weight gradient: error vs tokens N (solid: total rmse, dashed: bias)", NULL, NULL);
    }
    names_free(&cases);
    free(n.v);
    free(bias.v);
    free(rmse.v);
    return rc;
}

/* 1 when the file's root attribute `kind` (a string, as fpsim writes it) equals `kind`. */
static int file_kind_is(hid_t file, const char *kind)
{
    if (H5Aexists(file, "kind") <= 0) return 0;
    hid_t a = H5Aopen(file, "kind", H5P_DEFAULT);
    if (a < 0) return 0;
    hid_t t = H5Aget_type(a); /* read in the attribute's own string type: no conversion */
    int same = 0;
    if (t >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0) {
        char *value = NULL;
        same = H5Aread(a, t, &value) >= 0 && value && !strcmp(value, kind);
        if (value) H5free_memory(value);
    }
    if (t >= 0) H5Tclose(t);
    H5Aclose(a);
    return same;
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
        } else if (!strcmp(argv[i], "--quiet")) {
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
    if (strchr(path, '\'') || strchr(outdir, '\'')) {
        fpsim_cli_error(CMD, "paths with a single quote cannot be passed to gnuplot: '%s'", outdir);
        return 2;
    }
    const char *scripts = getenv("FPSIM_PLOT_SCRIPTS");
    if (!scripts || !*scripts) scripts = FPSIM_SOURCE_DIR "/scripts/plot";
    if (!gnuplot_available()) {
        fpsim_cli_error(CMD, "gnuplot not found on PATH: install gnuplot (e.g. apt-get install gnuplot) "
                             "or skip plots (fpsim replay --no-plots)");
        return 1;
    }
    hid_t file;
    fpsim_status st = fpsim_h5_open_read(&file, path);
    if (st) return fpsim_cli_fail_input(CMD, st);
    if (file_kind_is(file, "fpsim-mismatch")) { /* a file of `fpsim mismatch`: its own plots */
        H5Fclose(file);
        setenv("FPSIM_PLOT_SCRIPTS", scripts, 1);
        st = fpsim_mismatch_plot(path, outdir, fmt);
        if (st) return fpsim_cli_fail_input(CMD, st);
        fpsim_cli_note("fpsim plot: mismatch plots in %s/\n", outdir);
        return 0;
    }

    names recipes = {0}, layers = {0}, passes = {0}, roles = {0}, points = {0}, players = {0};
    int rc = read_names(file, "recipes", &recipes, path);
    if (!rc) rc = read_names(file, "layers", &layers, path);
    if (!rc) rc = read_names(file, "passes", &passes, path);
    if (!rc) rc = read_names(file, "roles", &roles, path);
    if (!rc) rc = read_names(file, "points", &points, path);
    if (!rc) rc = read_names(file, "point_layers", &players, path);
    if (!rc && mkdir(outdir, 0777) != 0 && errno != EEXIST) {
        fpsim_cli_error(CMD, "cannot create directory %s: %s", outdir, strerror(errno));
        rc = 2;
    }
    plot_ctx p = {path, outdir, fmt, scripts, 0};
    if (!rc) rc = plot_gemm_error(&p, file, &recipes, &layers, &passes);
    if (!rc) rc = plot_stream_error(&p, file, &recipes, &points, &players);
    if (!rc) rc = plot_rates(&p, file, &recipes, &layers, &roles, "flush_rate", "flush_rate",
                             "operands flushed to zero by quantization vs layer (accumulated view)");
    if (!rc) rc = plot_rates(&p, file, &recipes, &layers, &roles, "sat_rate", "sat_rate",
                             "operands saturated (clipped) by quantization vs layer (accumulated view)");
    if (!rc) rc = plot_bias_vs_n(&p, file);
    H5Fclose(file);
    names_free(&recipes);
    names_free(&layers);
    names_free(&passes);
    names_free(&roles);
    names_free(&points);
    names_free(&players);
    if (!rc) fpsim_cli_note("fpsim plot: %d plot(s) in %s/", p.made, outdir);
    return rc;
}
