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
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
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
#include "fpsim_file.h"
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
            "bias-vs-N sweep when the file has one. Writes DIR/*.dat and DIR/*.png (or .svg).\n"
            "The whole file is checked first (every dataset's type and dims against the file's\n"
            "name lists): a damaged file is one error line and exit 2, with nothing written.\n"
            "Each output is written under a temporary name and renamed when gnuplot succeeded.\n\n"
            "  --outdir DIR   output directory (default plots; created if missing)\n"
            "  --format F     png (default) or svg\n"
            "  --quiet        no notes\n"
            "Environment: FPSIM_PLOT_SCRIPTS, the directory of the .gp scripts.\n");
}

/* ---- the file's name lists ---------------------------------------------------------------- */

/* More names along one axis than any results file has: a larger count is a damaged file. */
enum { MAX_NAMES = 1 << 16 };

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

/* A 1-D string-array attribute of `loc` (the names along one axis of the datasets). */
static int read_names(hid_t loc, const char *attr, names *out, const char *path)
{
    out->n = 0;
    out->v = NULL;
    if (H5Aexists(loc, attr) <= 0) {
        fpsim_cli_error(CMD, "%s: not a replay results file (no '%s' attribute)", path, attr);
        return 2;
    }
    hid_t a = H5Aopen(loc, attr, H5P_DEFAULT);
    hid_t sp = a < 0 ? H5I_INVALID_HID : H5Aget_space(a);
    hssize_t n = sp < 0 ? -1 : H5Sget_simple_extent_npoints(sp);
    if (n <= 0 || n > MAX_NAMES) {
        fpsim_cli_error(CMD, "%s: attribute '%s' holds %lld names, expected 1 to %d", path, attr, (long long)n,
                        MAX_NAMES);
        if (sp >= 0) H5Sclose(sp);
        if (a >= 0) H5Aclose(a);
        return 2;
    }
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    char **buf = calloc((size_t)n, sizeof *buf);
    int rc = 0;
    if (!buf || H5Aread(a, t, buf) < 0) {
        fpsim_cli_error(CMD, "%s: attribute '%s' is not an array of strings", path, attr);
        rc = 2;
    } else {
        out->v = calloc((size_t)n, sizeof *out->v);
        out->n = out->v ? (size_t)n : 0;
        for (size_t i = 0; i < out->n; i++) out->v[i] = strdup(buf[i] ? buf[i] : "");
        for (size_t i = 0; i < out->n && !rc; i++)
            if (!out->v[i]) rc = 1;
        if (!out->v || rc) {
            fpsim_cli_error(CMD, "out of memory reading attribute '%s'", attr);
            rc = 1;
        }
        H5Dvlen_reclaim(t, sp, H5P_DEFAULT, buf);
    }
    free(buf);
    H5Tclose(t);
    H5Sclose(sp);
    H5Aclose(a);
    return rc;
}

/* The index of `name` in `s`, or -1. */
static int find_name(const names *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name)) return (int)i;
    return -1;
}

/* Names that become part of an output file name (the passes: gemm_error_<pass>): 1 to 32
 * letters, digits, '-' or '_', so that a damaged file cannot name a path outside --outdir. */
static int check_file_name_parts(const names *s, const char *attr, const char *path)
{
    for (size_t i = 0; i < s->n; i++) {
        const char *c = s->v[i];
        size_t len = strlen(c);
        int ok = len > 0 && len <= 32;
        for (; ok && *c; c++)
            ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                 *c == '_';
        if (!ok) {
            fpsim_cli_error(CMD, "%s: attribute '%s' has the name '%.40s', which cannot be part of a file name",
                            path, attr, s->v[i]);
            return 2;
        }
    }
    return 0;
}

/* ---- the datasets --------------------------------------------------------------------------- */

/* A numeric dataset read as float64, with its dims (rank at most 4). */
typedef struct table {
    int rank;
    hsize_t dims[4];
    double *v;
} table;

/* In an expected dims list: any size of at least 1. */
#define ANY_SIZE ((hsize_t)0)

/* A dataset larger than this (elements) is no replay results file: 1 GiB of float64. */
#define MAX_TABLE_ELEMENTS ((hsize_t)1 << 27)

/* "1x2x2x3" ("N" for ANY_SIZE; "scalar" for rank 0). */
static void format_dims(char *buf, size_t cap, int rank, const hsize_t *dims)
{
    size_t n = 0;
    buf[0] = '\0';
    if (rank == 0) snprintf(buf, cap, "scalar");
    for (int i = 0; i < rank && n < cap; i++) {
        int k = dims[i] == ANY_SIZE ? snprintf(buf + n, cap - n, "%sN", i ? "x" : "")
                                    : snprintf(buf + n, cap - n, "%s%llu", i ? "x" : "", (unsigned long long)dims[i]);
        if (k < 0) break;
        n += (size_t)k;
    }
}

static const char *type_class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_STRING: return "strings";
    case H5T_COMPOUND: return "compound records";
    case H5T_ENUM: return "enums";
    case H5T_ARRAY: return "arrays";
    case H5T_VLEN: return "variable-length sequences";
    case H5T_REFERENCE: return "references";
    default: return "non-numbers";
    }
}

/* The element type holds numbers and the dims are exactly `want` (`axes` names them for the
 * message); on success t->rank and t->dims are set. */
static int check_table_shape(const char *path, const char *name, hid_t type, hid_t space, int rank,
                             const hsize_t *want, const char *axes, table *t)
{
    H5T_class_t cls = H5Tget_class(type);
    if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
        fpsim_cli_error(CMD, "%s: %s holds %s, expected float64 numbers", path, name, type_class_name(cls));
        return 2;
    }
    hsize_t got[H5S_MAX_RANK];
    int got_rank = H5Sget_simple_extent_ndims(space);
    if (got_rank < 0 || H5Sget_simple_extent_dims(space, got, NULL) < 0) {
        fpsim_cli_error(CMD, "%s: cannot read the dims of %s", path, name);
        return 2;
    }
    int same = got_rank == rank;
    hsize_t elements = 1;
    for (int i = 0; same && i < rank; i++) {
        same = want[i] == ANY_SIZE ? got[i] >= 1 : got[i] == want[i];
        elements = got[i] && elements > MAX_TABLE_ELEMENTS / got[i] ? MAX_TABLE_ELEMENTS + 1 : elements * got[i];
    }
    if (!same) {
        char have[128], expect[128];
        format_dims(have, sizeof have, got_rank, got);
        format_dims(expect, sizeof expect, rank, want);
        fpsim_cli_error(CMD, "%s: %s has dims %s, expected %s (%s)", path, name, have, expect, axes);
        return 2;
    }
    if (elements > MAX_TABLE_ELEMENTS) {
        fpsim_cli_error(CMD, "%s: %s has %llu or more elements, too many for a replay results file", path, name,
                        (unsigned long long)MAX_TABLE_ELEMENTS);
        return 2;
    }
    t->rank = rank;
    for (int i = 0; i < rank; i++) t->dims[i] = got[i];
    return 0;
}

static size_t table_size(const table *t)
{
    size_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= (size_t)t->dims[i];
    return n;
}

/* Dataset `name` (a path from the file's root) as float64, after checking that it exists, holds
 * numbers and has the dims `want` (rank `rank`, at most 4). */
static int read_table(hid_t file, const char *path, const char *name, int rank, const hsize_t *want,
                      const char *axes, table *t)
{
    memset(t, 0, sizeof *t);
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
        fpsim_cli_error(CMD, "%s: dataset %s missing (not a replay results file?)", path, name);
        return 2;
    }
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (ds < 0) {
        fpsim_cli_error(CMD, "%s: %s is not a dataset", path, name);
        return 2;
    }
    hid_t type = H5Dget_type(ds), space = H5Dget_space(ds);
    int rc = check_table_shape(path, name, type, space, rank, want, axes, t);
    if (!rc) {
        t->v = malloc(table_size(t) * sizeof *t->v);
        if (!t->v) {
            fpsim_cli_error(CMD, "out of memory reading %s", name);
            rc = 1;
        } else if (H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->v) < 0) {
            fpsim_cli_error(CMD, "%s: cannot read dataset %s (truncated or damaged?)", path, name);
            rc = 2;
        }
    }
    H5Tclose(type);
    H5Sclose(space);
    H5Dclose(ds);
    return rc;
}

/* "recipes/<recipe>[/<dataset>]", the recipe's '/' written as '_' as the writer does. */
static void recipe_path(char *buf, size_t cap, const char *recipe, const char *dataset)
{
    char g[512];
    snprintf(g, sizeof g, "%s", recipe);
    for (char *c = g; *c; c++)
        if (*c == '/') *c = '_';
    snprintf(buf, cap, "recipes/%s%s%s", g, dataset ? "/" : "", dataset ? dataset : "");
}

/* ---- the whole file, read and checked ------------------------------------------------------ */

typedef struct results {
    const char *path; /* for messages */
    hid_t file;
    hsize_t steps;    /* root attribute `steps`: the first dim of every per-step dataset */
    names recipes, layers, passes, roles, views, points, players;
    int local, accumulated;      /* indices in views */
    int block_out, grad_stream;  /* indices in points; -1 when the file lacks one (no stream plot) */
    /* per recipe: layer_gemm_rel_l2, point_rel_l2, layer_operand_flush_rate, ..._sat_rate */
    table *gemm, *stream, *flush, *sat;
    int have_bias; /* the /bias_variance group: */
    names cases;
    table bias_n, bias, rmse;
} results;

static void results_free(results *r)
{
    for (size_t k = 0; k < r->recipes.n; k++) {
        if (r->gemm) free(r->gemm[k].v);
        if (r->stream) free(r->stream[k].v);
        if (r->flush) free(r->flush[k].v);
        if (r->sat) free(r->sat[k].v);
    }
    free(r->gemm);
    free(r->stream);
    free(r->flush);
    free(r->sat);
    names *all[] = {&r->recipes, &r->layers, &r->passes, &r->roles, &r->views, &r->points, &r->players, &r->cases};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) names_free(all[i]);
    free(r->bias_n.v);
    free(r->bias.v);
    free(r->rmse.v);
}

/* Root attribute `steps` (int64, at least 1: the plots draw the last step). */
static int load_steps(results *r)
{
    int64_t steps = 0;
    if (fpsim_h5_read_attr_int64(r->file, ".", "steps", &steps)) {
        fpsim_cli_error(CMD, "%s: not a replay results file (no integer 'steps' attribute)", r->path);
        return 2;
    }
    if (steps < 1) {
        fpsim_cli_error(CMD, "%s: attribute 'steps' is %lld: no finished step to plot", r->path, (long long)steps);
        return 2;
    }
    r->steps = (hsize_t)steps;
    return 0;
}

/* The root's name lists, and how they must relate: views has local and accumulated; point_layers
 * is embed + layers (one more than layers). */
static int load_names(results *r)
{
    int rc = read_names(r->file, "recipes", &r->recipes, r->path);
    if (!rc) rc = read_names(r->file, "layers", &r->layers, r->path);
    if (!rc) rc = read_names(r->file, "passes", &r->passes, r->path);
    if (!rc) rc = read_names(r->file, "roles", &r->roles, r->path);
    if (!rc) rc = read_names(r->file, "views", &r->views, r->path);
    if (!rc) rc = read_names(r->file, "points", &r->points, r->path);
    if (!rc) rc = read_names(r->file, "point_layers", &r->players, r->path);
    if (!rc) rc = check_file_name_parts(&r->passes, "passes", r->path);
    if (rc) return rc;
    r->local = find_name(&r->views, "local");
    r->accumulated = find_name(&r->views, "accumulated");
    if (r->local < 0 || r->accumulated < 0) {
        fpsim_cli_error(CMD, "%s: attribute 'views' lacks '%s'", r->path, r->local < 0 ? "local" : "accumulated");
        return 2;
    }
    if (r->players.n != r->layers.n + 1) {
        fpsim_cli_error(CMD, "%s: attribute 'point_layers' has %zu names, expected %zu (embed and the %zu layers)",
                        r->path, r->players.n, r->layers.n + 1, r->layers.n);
        return 2;
    }
    r->block_out = find_name(&r->points, "block_out");
    r->grad_stream = find_name(&r->points, "grad_stream");
    return 0;
}

/* Every recipe of `recipes` has its group under /recipes, and /recipes holds no other. */
static int check_recipe_groups(const results *r)
{
    H5G_info_t info;
    if (H5Lexists(r->file, "recipes", H5P_DEFAULT) <= 0 ||
        H5Gget_info_by_name(r->file, "recipes", &info, H5P_DEFAULT) < 0) {
        fpsim_cli_error(CMD, "%s: no group /recipes (not a replay results file?)", r->path);
        return 2;
    }
    for (size_t k = 0; k < r->recipes.n; k++) {
        char group[1024];
        recipe_path(group, sizeof group, r->recipes.v[k], NULL);
        if (H5Lexists(r->file, group, H5P_DEFAULT) <= 0) {
            fpsim_cli_error(CMD, "%s: recipe '%s' of attribute 'recipes' has no group %s", r->path,
                            r->recipes.v[k], group);
            return 2;
        }
    }
    if (info.nlinks != r->recipes.n) {
        fpsim_cli_error(CMD, "%s: /recipes holds %llu group(s) but attribute 'recipes' lists %zu", r->path,
                        (unsigned long long)info.nlinks, r->recipes.n);
        return 2;
    }
    return 0;
}

/* The four tables each recipe's plots draw, with the dims the name lists give them. */
static int load_recipe_tables(results *r)
{
    size_t R = r->recipes.n;
    r->gemm = calloc(R, sizeof *r->gemm);
    r->stream = calloc(R, sizeof *r->stream);
    r->flush = calloc(R, sizeof *r->flush);
    r->sat = calloc(R, sizeof *r->sat);
    if (!r->gemm || !r->stream || !r->flush || !r->sat) {
        fpsim_cli_error(CMD, "out of memory");
        return 1;
    }
    const hsize_t gemm_dims[4] = {r->steps, r->views.n, r->layers.n, r->passes.n};
    const hsize_t rate_dims[4] = {r->steps, r->views.n, r->layers.n, r->roles.n};
    const hsize_t point_dims[3] = {r->steps, r->points.n, r->players.n};
    const int want_stream = r->block_out >= 0 && r->grad_stream >= 0;
    int rc = 0;
    for (size_t k = 0; k < R && !rc; k++) {
        char name[1024];
        const char *rc_name = r->recipes.v[k];
        recipe_path(name, sizeof name, rc_name, "layer_gemm_rel_l2");
        rc = read_table(r->file, r->path, name, 4, gemm_dims, "steps x views x layers x passes", &r->gemm[k]);
        recipe_path(name, sizeof name, rc_name, "layer_operand_flush_rate");
        if (!rc) rc = read_table(r->file, r->path, name, 4, rate_dims, "steps x views x layers x roles", &r->flush[k]);
        recipe_path(name, sizeof name, rc_name, "layer_operand_sat_rate");
        if (!rc) rc = read_table(r->file, r->path, name, 4, rate_dims, "steps x views x layers x roles", &r->sat[k]);
        recipe_path(name, sizeof name, rc_name, "point_rel_l2");
        if (!rc && want_stream)
            rc = read_table(r->file, r->path, name, 3, point_dims, "steps x points x point_layers", &r->stream[k]);
    }
    return rc;
}

/* /bias_variance, when present: cases names K, n [J], bias and rmse [K, J]; every N a positive
 * finite token count (the N^-1/2 guide divides by them). */
static int load_bias_variance(results *r)
{
    if (H5Lexists(r->file, "bias_variance", H5P_DEFAULT) <= 0) return 0;
    r->have_bias = 1;
    hid_t g = H5Gopen2(r->file, "bias_variance", H5P_DEFAULT);
    if (g < 0) {
        fpsim_cli_error(CMD, "%s: bias_variance is not a group", r->path);
        return 2;
    }
    int rc = read_names(g, "cases", &r->cases, r->path);
    H5Gclose(g);
    const hsize_t any[1] = {ANY_SIZE};
    if (!rc) rc = read_table(r->file, r->path, "bias_variance/n", 1, any, "token counts", &r->bias_n);
    if (rc) return rc;
    const hsize_t case_dims[2] = {r->cases.n, r->bias_n.dims[0]};
    rc = read_table(r->file, r->path, "bias_variance/bias", 2, case_dims, "cases x token counts", &r->bias);
    if (!rc) rc = read_table(r->file, r->path, "bias_variance/rmse", 2, case_dims, "cases x token counts", &r->rmse);
    for (size_t j = 0; !rc && j < table_size(&r->bias_n); j++)
        if (!(isfinite(r->bias_n.v[j]) && r->bias_n.v[j] > 0)) {
            fpsim_cli_error(CMD, "%s: bias_variance/n[%zu] = %g is not a positive token count", r->path, j,
                            r->bias_n.v[j]);
            rc = 2;
        }
    return rc;
}

/* HDF5's error printing is off for these calls (the caller wraps them): a damaged file is
 * reported by the one line of each check. */
static int results_load(results *r)
{
    int rc = load_steps(r);
    if (!rc) rc = load_names(r);
    if (!rc) rc = check_recipe_groups(r);
    if (!rc) rc = load_recipe_tables(r);
    if (!rc) rc = load_bias_variance(r);
    return rc;
}

/* ---- the values drawn: the last step ---------------------------------------------------------- */

/* A [step, view, layer, k] table (layer_gemm_, layer_operand_) at the last step. */
static double last_step_layer(const table *t, size_t view, size_t layer, size_t k)
{
    const hsize_t *d = t->dims;
    return t->v[((((size_t)d[0] - 1) * d[1] + view) * d[2] + layer) * d[3] + k];
}

/* A [step, point, point_layer] table (point_) at the last step. */
static double last_step_point(const table *t, size_t point, size_t player)
{
    const hsize_t *d = t->dims;
    return t->v[(((size_t)d[0] - 1) * d[1] + point) * d[2] + player];
}

static int gemm_pass_has_value(const results *r, size_t pass)
{
    for (size_t k = 0; k < r->recipes.n; k++)
        for (size_t l = 0; l < r->layers.n; l++)
            if (isfinite(last_step_layer(&r->gemm[k], (size_t)r->local, l, pass)) ||
                isfinite(last_step_layer(&r->gemm[k], (size_t)r->accumulated, l, pass)))
                return 1;
    return 0;
}

static int stream_has_value(const results *r)
{
    for (size_t k = 0; k < r->recipes.n; k++)
        for (size_t l = 1; l < r->players.n; l++)
            if (isfinite(last_step_point(&r->stream[k], (size_t)r->grad_stream, l)) ||
                isfinite(last_step_point(&r->stream[k], (size_t)r->block_out, l)))
                return 1;
    return 0;
}

static int rates_have_value(const results *r, const table *per_recipe)
{
    for (size_t k = 0; k < r->recipes.n; k++)
        for (size_t l = 0; l < r->layers.n; l++)
            for (size_t role = 0; role < r->roles.n; role++)
                if (isfinite(last_step_layer(&per_recipe[k], (size_t)r->accumulated, l, role))) return 1;
    return 0;
}

static int bias_has_value(const results *r)
{
    for (size_t i = 0; i < table_size(&r->rmse); i++)
        if (isfinite(r->rmse.v[i])) return 1;
    return 0;
}

/* gnuplot fails on a figure with no point at all: say which data is all NaN instead. */
static int check_drawable(const results *r)
{
    for (size_t ps = 0; ps < r->passes.n; ps++)
        if (!gemm_pass_has_value(r, ps)) {
            fpsim_cli_error(CMD, "%s: recipes/*/layer_gemm_rel_l2 has no finite value for pass %s at the last step",
                            r->path, r->passes.v[ps]);
            return 2;
        }
    if (r->block_out >= 0 && r->grad_stream >= 0 && !stream_has_value(r)) {
        fpsim_cli_error(CMD, "%s: recipes/*/point_rel_l2 has no finite value at the last step", r->path);
        return 2;
    }
    if (!rates_have_value(r, r->flush) || !rates_have_value(r, r->sat)) {
        fpsim_cli_error(CMD, "%s: recipes/*/layer_operand_%s has no finite value at the last step", r->path,
                        rates_have_value(r, r->flush) ? "sat_rate" : "flush_rate");
        return 2;
    }
    if (r->have_bias && !bias_has_value(r)) {
        fpsim_cli_error(CMD, "%s: bias_variance/rmse has no finite value", r->path);
        return 2;
    }
    return 0;
}

/* ---- the output directory -------------------------------------------------------------------- */

int plot_check_outdir(const char *cmd, const char *option, const char *dir, int keep_created)
{
    if (!*dir) {
        fpsim_cli_error(cmd, "%s: empty directory name", option);
        return 2;
    }
    if (strchr(dir, '\'')) {
        fpsim_cli_error(cmd, "%s '%s': a path with a single quote cannot be passed to gnuplot", option, dir);
        return 2;
    }
    struct stat sb;
    int created = 0;
    if (stat(dir, &sb) != 0) {
        if (errno != ENOENT || mkdir(dir, 0777) != 0) {
            fpsim_cli_error(cmd, "%s '%s': cannot create the directory: %s", option, dir, strerror(errno));
            return 2;
        }
        created = 1;
    } else if (!S_ISDIR(sb.st_mode)) {
        fpsim_cli_error(cmd, "%s '%s' exists and is not a directory", option, dir);
        return 2;
    }
    /* A file can be created in it (a read-only file system or mount passes the checks above). */
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.fpsim-plot-probe.%ld", dir, (long)getpid());
    FILE *f = fopen(probe, "wb");
    int err = errno;
    if (f) {
        fclose(f);
        remove(probe);
    }
    if (created && !keep_created) rmdir(dir);
    if (!f) {
        fpsim_cli_error(cmd, "%s '%s': cannot write in the directory: %s", option, dir, strerror(err));
        return 2;
    }
    return 0;
}

/* ---- gnuplot ------------------------------------------------------------------------------------ */

static int gnuplot_available(void)
{
    int rc = system("gnuplot --version >/dev/null 2>&1");
    return rc == 0;
}

/* The scripts the plots need, readable (FPSIM_PLOT_SCRIPTS may point anywhere). */
static int check_scripts(const char *scripts, int have_bias)
{
    const char *const needed[] = {"error_vs_layer.gp", "rates_vs_layer.gp", "bias_vs_n.gp"};
    for (int i = 0; i < (have_bias ? 3 : 2); i++) {
        char scr[4200];
        snprintf(scr, sizeof scr, "%s/%s", scripts, needed[i]);
        if (access(scr, R_OK) != 0) {
            fpsim_cli_error(CMD, "cannot read plot script %s: %s (FPSIM_PLOT_SCRIPTS names the scripts' directory)",
                            scr, strerror(errno));
            return 2;
        }
    }
    return 0;
}

/* A stop signal (SIGINT, SIGTERM, SIGHUP) that arrived while gnuplot was running, or 0. */
static volatile sig_atomic_t stop_signal;

static void remember_stop_signal(int sig) { stop_signal = sig; }

/* gnuplot -e ASSIGN SCRIPT, its stdout to /dev/null and its stderr into `log` (/dev/null when
 * NULL), so that fpsim's error line comes first. While it runs a stop signal (unless ignored, as
 * under nohup) is remembered and passed on to gnuplot rather than killing fpsim at once: the
 * caller removes its temporary outputs, then takes the signal (die_if_stopped). Returns the
 * wait status (exit 127: gnuplot could not be started), or -1 if it could not be run. */
static int run_gnuplot(const char *assign, const char *script, FILE *log)
{
    static const int stops[3] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction remember, saved[3];
    memset(&remember, 0, sizeof remember);
    remember.sa_handler = remember_stop_signal; /* no SA_RESTART: waitpid returns EINTR */
    sigemptyset(&remember.sa_mask);
    stop_signal = 0;
    for (int i = 0; i < 3; i++) {
        sigaction(stops[i], NULL, &saved[i]);
        if (saved[i].sa_handler != SIG_IGN) sigaction(stops[i], &remember, NULL);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* exec resets the handlers to their defaults */
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
        if (log) dup2(fileno(log), STDERR_FILENO);
        else if (devnull >= 0) dup2(devnull, STDERR_FILENO);
        signal(SIGXFSZ, SIG_DFL); /* main() ignores it; gnuplot over ulimit -f should stop, not go on */
        execlp("gnuplot", "gnuplot", "-e", assign, script, (char *)NULL);
        _exit(127);
    }
    int status = -1, forwarded = 0;
    if (pid > 0) {
        pid_t w;
        while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
            if (stop_signal && !forwarded) {
                kill(pid, stop_signal);
                forwarded = 1;
            }
        if (w != pid) status = -1;
    }
    for (int i = 0; i < 3; i++) sigaction(stops[i], &saved[i], NULL);
    return status;
}

static int gnuplot_succeeded(int status) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

/* "exit 1", "killed by signal 25: over the file-size limit", ... for the error line. */
static void describe_status(char *buf, size_t cap, int status)
{
    if (status < 0) snprintf(buf, cap, "could not be run");
    else if (WIFEXITED(status)) snprintf(buf, cap, "exit %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, cap, "killed by signal %d%s", WTERMSIG(status),
                 WTERMSIG(status) == SIGXFSZ ? ": over the file-size limit" : "");
    else snprintf(buf, cap, "wait status %d", status);
}

/* After the temporaries are removed: a stop signal caught during gnuplot takes its default
 * action now (the exit status says which signal, as for every fpsim command). */
static void die_if_stopped(void)
{
    if (!stop_signal) return;
    signal(stop_signal, SIG_DFL);
    raise(stop_signal);
}

/* gnuplot's own lines after fpsim's (at most 4 KiB of them). */
static void print_log(FILE *log)
{
    char buf[4096];
    if (!log || fseek(log, 0, SEEK_SET) != 0) return;
    size_t n = fread(buf, 1, sizeof buf - 1, log);
    buf[n] = '\0';
    const char *text = buf + strspn(buf, "\n"); /* gnuplot starts its messages with an empty line */
    if (!*text) return;
    fputs(text, stderr);
    if (buf[n - 1] != '\n') fputc('\n', stderr);
}

/* ---- writing ----------------------------------------------------------------------------------- */

typedef struct plot_ctx {
    const char *path, *outdir, *fmt, *scripts;
    int made;
} plot_ctx;

/* One figure's outputs, DIR/BASE.dat and DIR/BASE.FMT, each under its temporary name
 * (fpsim_file_temp_name) until gnuplot has drawn the image. */
typedef struct plot_output {
    char dat[4096], img[4096], dat_tmp[4200], img_tmp[4200];
    FILE *f; /* the .dat temporary, open for writing */
} plot_output;

static void output_discard(plot_output *o)
{
    fpsim_cli_remove_on_signal(NULL);
    if (o->f) fclose(o->f);
    o->f = NULL;
    fpsim_file_discard(o->dat_tmp);
    fpsim_file_discard(o->img_tmp);
}

static int output_open(const plot_ctx *p, const char *base, plot_output *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->dat, sizeof o->dat, "%s/%s.dat", p->outdir, base);
    snprintf(o->img, sizeof o->img, "%s/%s.%s", p->outdir, base, p->fmt);
    fpsim_status st = fpsim_file_temp_name(o->img_tmp, sizeof o->img_tmp, o->img);
    if (!st) st = fpsim_file_open_temp(&o->f, o->dat_tmp, sizeof o->dat_tmp, o->dat);
    if (st) {
        o->img_tmp[0] = '\0';
        return fpsim_cli_fail_input(CMD, st);
    }
    fpsim_cli_remove_on_signal(o->dat_tmp); /* an interrupted run leaves no partial file */
    return 0;
}

/* The image gnuplot wrote is whole. gnuplot 5's pngcairo and svg terminals exit 0 when a write
 * fails (disk full, ulimit -f) and leave a truncated file, so the file must end as its format
 * does: PNG with its IEND chunk (length 0, "IEND", CRC AE 42 60 82), SVG with "</svg>" and
 * white space. */
static int image_complete(const char *tmp, const char *fmt)
{
    static const unsigned char png_end[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    unsigned char tail[64];
    FILE *f = fopen(tmp, "rb");
    if (!f) return 0;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    long n = size < (long)sizeof tail ? size : (long)sizeof tail;
    int ok = n > 0 && fseek(f, size - n, SEEK_SET) == 0 && fread(tail, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (!ok) return 0;
    if (!strcmp(fmt, "png")) return n >= 12 && !memcmp(tail + n - 12, png_end, 12);
    while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r' || tail[n - 1] == ' ')) n--;
    return n >= 6 && !memcmp(tail + n - 6, "</svg>", 6);
}

/* Close the .dat, run gnuplot on it, and rename both outputs onto their names; on any failure
 * both are removed and one fpsim line says why (gnuplot's own lines may follow it). */
static int output_finish(plot_ctx *p, plot_output *o, const char *script, const char *title, const char *ylab,
                         const char *extra)
{
    int write_failed = ferror(o->f) != 0;
    write_failed |= fclose(o->f) != 0;
    int err = errno;
    o->f = NULL;
    fpsim_cli_remove_on_signal(NULL);
    if (write_failed) {
        output_discard(o);
        fpsim_cli_error(CMD, "cannot write %s: %s", o->dat, strerror(err));
        return 1;
    }
    char scr[4200], assign[4096 + 3 * 4200];
    snprintf(scr, sizeof scr, "%s/%s", p->scripts, script);
    snprintf(assign, sizeof assign, "datafile='%s'; outfile='%s'; fmt='%s'; plottitle='%s'; ylab='%s'%s%s",
             o->dat_tmp, o->img_tmp, p->fmt, title, ylab ? ylab : "", extra ? "; " : "", extra ? extra : "");
    FILE *log = tmpfile();
    int status = run_gnuplot(assign, scr, log);
    const int drawn = gnuplot_succeeded(status);
    if (!drawn || stop_signal || !image_complete(o->img_tmp, p->fmt)) {
        output_discard(o);
        die_if_stopped();
        char how[96];
        describe_status(how, sizeof how, status);
        if (drawn) fpsim_cli_error(CMD, "gnuplot left %s incomplete (disk full?); nothing written for it", o->img);
        else fpsim_cli_error(CMD, "gnuplot failed (%s) drawing %s with %s; nothing written for it%s", how, o->img,
                             scr, log && ftell(log) > 0 ? "; gnuplot said:" : "");
        if (!drawn) print_log(log);
        if (log) fclose(log);
        return 1;
    }
    if (log) fclose(log);
    fpsim_status st = fpsim_file_commit(o->img_tmp, o->img);
    if (st) {
        fpsim_file_discard(o->dat_tmp);
        return fpsim_cli_fail(CMD, st);
    }
    if ((st = fpsim_file_commit(o->dat_tmp, o->dat))) return fpsim_cli_fail(CMD, st);
    p->made++;
    return 0;
}

static void put(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, " %.9g", v);
    else fprintf(f, " ?");
}

/* One whitespace-separated field of a .dat: " a" or " a:b", white space and control characters
 * written as '_' (gnuplot splits on them), an empty name as '_'. */
static void put_label(FILE *f, const char *a, const char *b)
{
    fputc(' ', f);
    if (!*a) fputc('_', f);
    for (const char *c = a; *c; c++) fputc((unsigned char)*c <= ' ' ? '_' : *c, f);
    if (b) {
        fputc(':', f);
        for (const char *c = b; *c; c++) fputc((unsigned char)*c <= ' ' ? '_' : *c, f);
    }
}

/* GEMM error vs layer, one figure per pass: columns recipe:local, recipe:accumulated. */
static int plot_gemm_error(plot_ctx *p, const results *r)
{
    for (size_t ps = 0; ps < r->passes.n; ps++) {
        char base[64], title[256];
        snprintf(base, sizeof base, "gemm_error_%s", r->passes.v[ps]);
        plot_output o;
        if (output_open(p, base, &o)) return 2;
        fprintf(o.f, "index layer");
        for (size_t k = 0; k < r->recipes.n; k++) {
            put_label(o.f, r->recipes.v[k], "local");
            put_label(o.f, r->recipes.v[k], "accumulated");
        }
        fprintf(o.f, "\n");
        for (size_t l = 0; l < r->layers.n; l++) {
            fprintf(o.f, "%zu", l);
            put_label(o.f, r->layers.v[l], NULL);
            for (size_t k = 0; k < r->recipes.n; k++) {
                put(o.f, last_step_layer(&r->gemm[k], (size_t)r->local, l, ps));
                put(o.f, last_step_layer(&r->gemm[k], (size_t)r->accumulated, l, ps));
            }
            fprintf(o.f, "\n");
        }
        snprintf(title, sizeof title, "%s GEMM output error vs layer (dashed: local, solid: accumulated)",
                 r->passes.v[ps]);
        if (output_finish(p, &o, "error_vs_layer.gp", title, "relative L2 error vs FP64 reference", "paired=1"))
            return 1;
    }
    return 0;
}

/* Residual stream (forward: block outputs) and its gradient (backward) vs layer. */
static int plot_stream_error(plot_ctx *p, const results *r)
{
    if (r->block_out < 0 || r->grad_stream < 0) return 0; /* a file without these points: nothing to draw */
    plot_output o;
    if (output_open(p, "stream_error", &o)) return 2;
    fprintf(o.f, "index layer");
    for (size_t k = 0; k < r->recipes.n; k++) {
        put_label(o.f, r->recipes.v[k], "backward");
        put_label(o.f, r->recipes.v[k], "forward");
    }
    fprintf(o.f, "\n");
    /* point layers: embed, 0..L-1, head; rows for the blocks and the head */
    for (size_t l = 1; l < r->players.n; l++) {
        fprintf(o.f, "%zu", l - 1);
        put_label(o.f, r->players.v[l], NULL);
        for (size_t k = 0; k < r->recipes.n; k++) {
            put(o.f, last_step_point(&r->stream[k], (size_t)r->grad_stream, l));
            put(o.f, last_step_point(&r->stream[k], (size_t)r->block_out, l));
        }
        fprintf(o.f, "\n");
    }
    return output_finish(p, &o, "error_vs_layer.gp",
                         "residual stream vs layer, accumulated (solid: block output; dashed: its gradient)",
                         "relative L2 error vs FP64 reference", "paired=1");
}

/* Flush or saturation rate vs layer, per recipe and role (accumulated view, last step). */
static int plot_rates(plot_ctx *p, const results *r, const table *per_recipe, const char *base, const char *title)
{
    plot_output o;
    if (output_open(p, base, &o)) return 2;
    fprintf(o.f, "index layer");
    for (size_t k = 0; k < r->recipes.n; k++)
        for (size_t role = 0; role < r->roles.n; role++) put_label(o.f, r->recipes.v[k], r->roles.v[role]);
    fprintf(o.f, "\n");
    double vmax = 0;
    for (size_t l = 0; l < r->layers.n; l++) {
        fprintf(o.f, "%zu", l);
        put_label(o.f, r->layers.v[l], NULL);
        for (size_t k = 0; k < r->recipes.n; k++)
            for (size_t role = 0; role < r->roles.n; role++) {
                double v = last_step_layer(&per_recipe[k], (size_t)r->accumulated, l, role);
                put(o.f, v);
                if (v > vmax) vmax = v;
            }
        fprintf(o.f, "\n");
    }
    char extra[64];
    /* all zero: a fixed axis height (percent axis: 1%) */
    snprintf(extra, sizeof extra, "nroles=%zu%s", r->roles.n, vmax > 0 ? "" : "; ymax=0.01");
    return output_finish(p, &o, "rates_vs_layer.gp", title, "elements of the operand", extra);
}

static int plot_bias_vs_n(plot_ctx *p, const results *r)
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
    if (output_open(p, "bias_vs_n", &o)) return 2;
    fprintf(o.f, "N");
    for (size_t k = 0; k < C; k++) {
        put_label(o.f, r->cases.v[k], "rmse");
        put_label(o.f, r->cases.v[k], "bias");
    }
    fprintf(o.f, " guide\n");
    for (size_t j = 0; j < J; j++) {
        fprintf(o.f, "%.0f", n[j]);
        for (size_t k = 0; k < C; k++) {
            put(o.f, rmse[k * J + j]);
            put(o.f, bias[k * J + j] > 0 ? bias[k * J + j] : NAN);
        }
        put(o.f, rmse[guide * J] * sqrt(n[0] / n[j]));
        fprintf(o.f, "\n");
    }
    return output_finish(p, &o, "bias_vs_n.gp",
                         "summed weight gradient: error vs tokens N (solid: total rmse, dashed: bias)", NULL, NULL);
}

static int plot_all(plot_ctx *p, const results *r)
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
    const char *scripts = getenv("FPSIM_PLOT_SCRIPTS");
    if (!scripts || !*scripts) scripts = FPSIM_SOURCE_DIR "/scripts/plot";
    if (strchr(scripts, '\'')) {
        fpsim_cli_error(CMD, "paths with a single quote cannot be passed to gnuplot: FPSIM_PLOT_SCRIPTS '%s'", scripts);
        return 2;
    }
    if (!gnuplot_available()) {
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
        H5Fclose(file);
        setenv("FPSIM_PLOT_SCRIPTS", scripts, 1);
        st = fpsim_mismatch_plot(path, outdir, fmt);
        if (st) return fpsim_cli_fail_input(CMD, st);
        fpsim_cli_note("fpsim plot: mismatch plots in %s/\n", outdir);
        return 0;
    }

    /* Read and check everything, with HDF5's own error printing off: each way the file can be
     * wrong is one line of ours. */
    results r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.file = file;
    int rc;
    H5E_BEGIN_TRY {
        rc = results_load(&r);
        H5Fclose(file);
    } H5E_END_TRY;
    if (!rc) rc = check_drawable(&r);
    if (!rc) rc = check_scripts(scripts, r.have_bias);
    if (!rc) rc = plot_check_outdir(CMD, "--outdir", outdir, 1);
    plot_ctx p = {path, outdir, fmt, scripts, 0};
    if (!rc) rc = plot_all(&p, &r);
    results_free(&r);
    if (!rc) fpsim_cli_note("fpsim plot: %d plot(s) in %s/", p.made, outdir);
    return rc;
}
