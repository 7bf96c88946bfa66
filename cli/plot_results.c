/* plot_results.c: a results file of `fpsim replay` read and checked for `fpsim plot` (see
 * plot_results.h). */
#include "plot_results.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "fpsim_h5.h"
#include "gnuplot_run.h"

static const char *const CMD = "plot";

/* ---- the file's name lists ---------------------------------------------------------------- */

/* More names along one axis than any results file has: a larger count is a damaged file. */
enum { MAX_NAMES = 1 << 16 };

static void names_free(plot_names *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* A 1-D string-array attribute of `loc` (the names along one axis of the datasets). */
static int read_names(hid_t loc, const char *attr, plot_names *out, const char *path)
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
static int find_name(const plot_names *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name)) return (int)i;
    return -1;
}

/* Names that become part of an output file name (the passes: gemm_error_<pass>): 1 to 32
 * letters, digits, '-' or '_', so that a damaged file cannot name a path outside --outdir. */
static int check_file_name_parts(const plot_names *s, const char *attr, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (!gnuplot_is_plain_name(s->v[i], 32)) {
            fpsim_cli_error(CMD, "%s: attribute '%s' has the name '%.40s', which cannot be part of a file name",
                            path, attr, s->v[i]);
            return 2;
        }
    return 0;
}

/* ---- the datasets --------------------------------------------------------------------------- */

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
                             const hsize_t *want, const char *axes, plot_table *t)
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

static size_t table_size(const plot_table *t)
{
    size_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= (size_t)t->dims[i];
    return n;
}

/* Dataset `name` (a path from the file's root) as float64, after checking that it exists, holds
 * numbers and has the dims `want` (rank `rank`, at most 4). */
static int read_table(hid_t file, const char *path, const char *name, int rank, const hsize_t *want,
                      const char *axes, plot_table *t)
{
    memset(t, 0, sizeof *t);
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
        fpsim_cli_error(CMD, "%s: dataset %s missing (not a replay results file?)", path, name);
        return 2;
    }
    hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    if (ds < 0) { /* another kind of object, or one that cannot be opened (damaged, not missing) */
        hid_t obj = H5Oopen(file, name, H5P_DEFAULT);
        if (obj >= 0) H5Oclose(obj);
        fpsim_cli_error(CMD, obj >= 0 ? "%s: %s is not a dataset" : "%s: cannot read dataset %s (damaged file)", path,
                        name);
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

void plot_results_free(plot_results *r)
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
    plot_names *all[] = {&r->recipes, &r->layers, &r->passes, &r->roles, &r->views, &r->points, &r->players, &r->cases};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) names_free(all[i]);
    free(r->bias_n.v);
    free(r->bias.v);
    free(r->rmse.v);
}

/* Root attribute `steps` (int64, at least 1: the plots draw the last step). */
static int load_steps(plot_results *r)
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
static int load_names(plot_results *r)
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
static int check_recipe_groups(const plot_results *r)
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
static int load_recipe_tables(plot_results *r)
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
static int load_bias_variance(plot_results *r)
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
int plot_results_load(plot_results *r)
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
double plot_last_step_layer(const plot_table *t, size_t view, size_t layer, size_t k)
{
    const hsize_t *d = t->dims;
    return t->v[((((size_t)d[0] - 1) * d[1] + view) * d[2] + layer) * d[3] + k];
}

/* A [step, point, point_layer] table (point_) at the last step. */
double plot_last_step_point(const plot_table *t, size_t point, size_t player)
{
    const hsize_t *d = t->dims;
    return t->v[(((size_t)d[0] - 1) * d[1] + point) * d[2] + player];
}

static int gemm_pass_has_value(const plot_results *r, size_t pass)
{
    for (size_t k = 0; k < r->recipes.n; k++)
        for (size_t l = 0; l < r->layers.n; l++)
            if (isfinite(plot_last_step_layer(&r->gemm[k], (size_t)r->local, l, pass)) ||
                isfinite(plot_last_step_layer(&r->gemm[k], (size_t)r->accumulated, l, pass)))
                return 1;
    return 0;
}

static int stream_has_value(const plot_results *r)
{
    for (size_t k = 0; k < r->recipes.n; k++)
        for (size_t l = 1; l < r->players.n; l++)
            if (isfinite(plot_last_step_point(&r->stream[k], (size_t)r->grad_stream, l)) ||
                isfinite(plot_last_step_point(&r->stream[k], (size_t)r->block_out, l)))
                return 1;
    return 0;
}

static int rates_have_value(const plot_results *r, const plot_table *per_recipe)
{
    for (size_t k = 0; k < r->recipes.n; k++)
        for (size_t l = 0; l < r->layers.n; l++)
            for (size_t role = 0; role < r->roles.n; role++)
                if (isfinite(plot_last_step_layer(&per_recipe[k], (size_t)r->accumulated, l, role))) return 1;
    return 0;
}

static int bias_has_value(const plot_results *r)
{
    for (size_t i = 0; i < table_size(&r->rmse); i++)
        if (isfinite(r->rmse.v[i])) return 1;
    return 0;
}

/* gnuplot fails on a figure with no point at all: say which data is all NaN instead. */
int plot_check_drawable(const plot_results *r)
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
