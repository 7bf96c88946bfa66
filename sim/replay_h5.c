/* replay_h5.c: the replay's results file (layout in docs/hdf5-layout.md, "Replay results").
 *
 * The whole file is rewritten under a temporary name and renamed after every finished step, so
 * a step that completed is never lost when a later one fails, and a reader never sees a partial
 * file. Every statistic is stored as the derived figure (rel_l2, cosine, ...) in a float64
 * dataset whose dimensions are named by its `dims` attribute; the names along each dimension
 * are string-array attributes of the root (layers, sites, passes, roles, views, points,
 * tensors, recipes). Entries that do not exist (e.g. the head's qkv site) hold count 0 and NaN. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_h5.h"
#include "replay_internal.h"

/* The figures written for every statistic, in this order. */
enum {
    M_REL_L2 = 0, M_MAX_ABS_ERR, M_COSINE, M_SQNR_DB, M_BIAS, M_REL_BIAS, M_PROJ, M_FLUSH_RATE,
    M_SAT_RATE, M_NONFINITE_RATE, M_COUNT, M_NMETRICS
};
static const char *const metric_names[M_NMETRICS] = {
    "rel_l2", "max_abs_err", "cosine", "sqnr_db", "bias", "rel_bias", "proj", "flush_rate",
    "sat_rate", "nonfinite_rate", "count"};

static double metric(const fpsim_stats_summary *m, int k)
{
    if (m->count == 0) return k == M_COUNT ? 0.0 : NAN;
    switch (k) {
    case M_REL_L2: return m->rel_l2;
    case M_MAX_ABS_ERR: return m->max_abs_err;
    case M_COSINE: return m->cosine;
    case M_SQNR_DB: return m->sqnr_db;
    case M_BIAS: return m->bias;
    case M_REL_BIAS: return m->rel_bias;
    case M_PROJ: return m->proj;
    case M_FLUSH_RATE: return m->flush_rate;
    case M_SAT_RATE: return m->sat_rate;
    case M_NONFINITE_RATE: return m->nonfinite_rate;
    default: return (double)m->count;
    }
}

/* Write every metric of stats[0..n) (shape dims[0..rank)) as datasets "<prefix><metric>". */
static fpsim_status write_stats(hid_t loc, const char *prefix, const fpsim_stats *stats, int rank,
                                const size_t *dims, const char *dim_names)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    double *buf = malloc((n ? n : 1) * sizeof *buf);
    fpsim_stats_summary *sum = malloc((n ? n : 1) * sizeof *sum);
    if (!buf || !sum) {
        free(buf);
        free(sum);
        return fpsim_fail(FPSIM_ENOMEM, "replay results: out of memory");
    }
    for (size_t i = 0; i < n; i++) fpsim_stats_summarize(&sum[i], &stats[i]);
    fpsim_status st = FPSIM_OK;
    for (int k = 0; k < M_NMETRICS && !st; k++) {
        for (size_t i = 0; i < n; i++) buf[i] = metric(&sum[i], k);
        char name[96];
        snprintf(name, sizeof name, "%s%s", prefix, metric_names[k]);
        st = fpsim_h5_write(loc, name, FPSIM_H5_F64, rank, dims, buf, 0);
        if (!st) {
            hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
            if (ds >= 0) {
                st = fpsim_h5_attr_string(ds, "dims", dim_names);
                H5Dclose(ds);
            }
        }
    }
    free(buf);
    free(sum);
    return st;
}

static fpsim_status write_doubles(hid_t loc, const char *name, const double *v, int rank,
                                  const size_t *dims, const char *dim_names)
{
    fpsim_status st = fpsim_h5_write(loc, name, FPSIM_H5_F64, rank, dims, v, 0);
    if (st) return st;
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    if (ds < 0) return fpsim_fail(FPSIM_EIO, "replay results: cannot reopen %s", name);
    st = fpsim_h5_attr_string(ds, "dims", dim_names);
    H5Dclose(ds);
    return st;
}

/* Merge stats over sites (and optionally passes) in fixed index order, for per-layer views. */
static fpsim_status write_layer_views(hid_t g, const fpsim_replay *r, const fpsim_replay_result *res,
                                      int steps)
{
    const fpsim_replay_dims *d = &r->dims;
    size_t L = (size_t)d->layers;
    size_t n1 = (size_t)steps * FPSIM_VIEW_COUNT * L * FPSIM_PASS_COUNT;
    size_t n2 = (size_t)steps * FPSIM_VIEW_COUNT * L * FPSIM_ROLE_COUNT;
    fpsim_stats *gl = calloc(n1, sizeof *gl), *ol = calloc(n2, sizeof *ol);
    if (!gl || !ol) {
        free(gl);
        free(ol);
        return fpsim_fail(FPSIM_ENOMEM, "replay results: out of memory");
    }
    for (int s = 0; s < steps; s++)
        for (int v = 0; v < FPSIM_VIEW_COUNT; v++)
            for (int l = 0; l < d->layers; l++)
                for (int site = 0; site < FPSIM_SITE_COUNT; site++)
                    for (int p = 0; p < FPSIM_PASS_COUNT; p++) {
                        size_t base = (((size_t)s * FPSIM_VIEW_COUNT + (size_t)v) * L + (size_t)l);
                        fpsim_stats_merge(&gl[base * FPSIM_PASS_COUNT + (size_t)p],
                                          &res->gemm[fpsim_replay_gemm_index(d, s, v, l, site, p)]);
                        for (int k = 0; k < FPSIM_ROLE_COUNT; k++)
                            fpsim_stats_merge(&ol[base * FPSIM_ROLE_COUNT + (size_t)k],
                                              &res->operand[fpsim_replay_operand_index(d, s, v, l, site, p, k)]);
                    }
    size_t dg[4] = {(size_t)steps, FPSIM_VIEW_COUNT, L, FPSIM_PASS_COUNT};
    size_t dop[4] = {(size_t)steps, FPSIM_VIEW_COUNT, L, FPSIM_ROLE_COUNT};
    fpsim_status st = write_stats(g, "layer_gemm_", gl, 4, dg, "step,view,layer,pass");
    if (!st) st = write_stats(g, "layer_operand_", ol, 4, dop, "step,view,layer,role");
    free(gl);
    free(ol);
    return st;
}

void replay_recipe_group_name(char *out, size_t cap, const char *recipe)
{
    snprintf(out, cap, "%s", recipe);
    for (char *c = out; *c; c++)
        if (*c == '/') *c = '_';
}

static fpsim_status write_recipe(hid_t parent, const fpsim_replay *r, const fpsim_replay_result *res,
                                 int steps)
{
    const fpsim_replay_dims *d = &r->dims;
    char gname[FPSIM_SCHEME_TEXT_MAX];
    replay_recipe_group_name(gname, sizeof gname, res->spec);
    hid_t g;
    fpsim_status st = fpsim_h5_group_create(&g, parent, gname);
    if (st) return st;
    const fpsim_engine_plan *p = &res->plan;
    st = fpsim_h5_attr_string(g, "recipe", res->spec);
    if (!st) st = fpsim_h5_attr_string(g, "act_round", fpsim_act_round_name(p->act_round));
    if (!st) st = fpsim_h5_attr_string(g, "operand_round", fpsim_act_round_name(p->operand_round));
    if (!st) st = fpsim_h5_attr_string(g, "out_round", fpsim_act_round_name(p->out_round));
    if (!st) st = fpsim_h5_attr_int64(g, "hp_first_layers", p->hp_first_layers);
    if (!st) st = fpsim_h5_attr_int64(g, "hp_last_layers", p->hp_last_layers);
    if (!st) st = fpsim_h5_attr_int64(g, "hp_head", p->hp_head);
    if (!st) st = fpsim_h5_attr_int64(g, "skipped_updates", res->skipped_updates);
    if (!st) { /* the accumulation model asked for, and what each pass's GEMMs used (docs/replay.md) */
        char routes[1024];
        fpsim_engine_plan_accum_text(p, routes, sizeof routes);
        st = fpsim_h5_attr_string(g, "accum", p->accum_set ? p->accum.name : "fp32");
        if (!st) st = fpsim_h5_attr_string(g, "accum_routes", routes);
    }
    for (int ps = 0; ps < FPSIM_PASS_COUNT && !st; ps++)
        for (int k = 0; k < FPSIM_ROLE_COUNT && !st; k++) {
            char key[64], text[FPSIM_SCHEME_TEXT_MAX];
            snprintf(key, sizeof key, "scheme.%s.%s", fpsim_pass_name(ps), fpsim_role_name(k));
            if (p->quantized[ps][k]) {
                if ((st = fpsim_scheme_format(text, sizeof text, &p->scheme[ps][k]))) break;
            } else {
                snprintf(text, sizeof text, "none (%s)", fpsim_act_round_name(p->operand_round));
            }
            st = fpsim_h5_attr_string(g, key, text);
        }

    size_t dsteps[1] = {(size_t)steps};
    double *diff = malloc(((size_t)steps + 1) * sizeof *diff);
    if (!st && !diff) st = fpsim_fail(FPSIM_ENOMEM, "replay results: out of memory");
    if (!st) {
        for (int s = 0; s < steps; s++) diff[s] = res->loss[s] - r->ref_loss[s];
        st = write_doubles(g, "loss", res->loss, 1, dsteps, "step");
        if (!st) st = write_doubles(g, "loss_diff", diff, 1, dsteps, "step");
    }
    free(diff);

    size_t L = (size_t)d->layers;
    size_t dgemm[5] = {(size_t)steps, FPSIM_VIEW_COUNT, L, FPSIM_SITE_COUNT, FPSIM_PASS_COUNT};
    size_t dop[6] = {(size_t)steps, FPSIM_VIEW_COUNT, L, FPSIM_SITE_COUNT, FPSIM_PASS_COUNT, FPSIM_ROLE_COUNT};
    size_t ddrift[5] = {(size_t)steps, L, FPSIM_SITE_COUNT, FPSIM_PASS_COUNT, FPSIM_ROLE_COUNT};
    size_t dpoint[3] = {(size_t)steps, FPSIM_POINT_COUNT, FPSIM_REPLAY_POINT_LAYERS(d)};
    size_t dtens[2] = {(size_t)steps, (size_t)d->tensors};
    if (!st) st = write_stats(g, "gemm_", res->gemm, 5, dgemm, "step,view,layer,site,pass");
    if (!st) st = write_stats(g, "operand_", res->operand, 6, dop, "step,view,layer,site,pass,role");
    if (!st) {
        /* operand_drift uses the view-0 slots of an operand-shaped table: gather them. */
        size_t n = (size_t)steps * L * FPSIM_SITE_COUNT * FPSIM_PASS_COUNT * FPSIM_ROLE_COUNT;
        fpsim_stats *od = malloc((n ? n : 1) * sizeof *od);
        if (!od) st = fpsim_fail(FPSIM_ENOMEM, "replay results: out of memory");
        for (int s = 0; !st && s < steps; s++)
            for (size_t l = 0; l < L; l++)
                for (int site = 0; site < FPSIM_SITE_COUNT; site++)
                    for (int ps = 0; ps < FPSIM_PASS_COUNT; ps++)
                        for (int k = 0; k < FPSIM_ROLE_COUNT; k++)
                            od[(((((size_t)s * L + l) * FPSIM_SITE_COUNT + (size_t)site) * FPSIM_PASS_COUNT) +
                                 (size_t)ps) * FPSIM_ROLE_COUNT + (size_t)k] =
                                res->operand_drift[fpsim_replay_operand_index(d, s, 0, (int)l, site, ps, k)];
        if (!st) st = write_stats(g, "operand_drift_", od, 5, ddrift, "step,layer,site,pass,role");
        free(od);
    }
    if (!st) {
        size_t n = (size_t)steps * FPSIM_VIEW_COUNT * L * FPSIM_SITE_COUNT * FPSIM_PASS_COUNT * FPSIM_ROLE_COUNT;
        double *mn = malloc((n ? n : 1) * sizeof *mn), *mx = malloc((n ? n : 1) * sizeof *mx),
               *mean = malloc((n ? n : 1) * sizeof *mean);
        if (!mn || !mx || !mean) st = fpsim_fail(FPSIM_ENOMEM, "replay results: out of memory");
        for (size_t i = 0; !st && i < n; i++) {
            const fpsim_replay_scale *sc = &res->scale[i];
            mn[i] = sc->count ? sc->log2_min : NAN;
            mx[i] = sc->count ? sc->log2_max : NAN;
            mean[i] = sc->count ? sc->log2_sum / (double)sc->count : NAN;
        }
        const char *dn = "step,view,layer,site,pass,role";
        if (!st) st = write_doubles(g, "scale_log2_min", mn, 6, dop, dn);
        if (!st) st = write_doubles(g, "scale_log2_max", mx, 6, dop, dn);
        if (!st) st = write_doubles(g, "scale_log2_mean", mean, 6, dop, dn);
        free(mn);
        free(mx);
        free(mean);
    }
    if (!st) st = write_stats(g, "point_", res->point, 3, dpoint, "step,point,point_layer");
    if (!st) st = write_stats(g, "grad_", res->grad, 2, dtens, "step,tensor");
    if (!st) st = write_stats(g, "drift_", res->drift, 2, dtens, "step,tensor");
    if (!st) st = write_layer_views(g, r, res, steps);
    H5Gclose(g);
    return st;
}

static fpsim_status write_names(hid_t root, const fpsim_replay *r)
{
    const fpsim_replay_dims *d = &r->dims;
    const char *sites[FPSIM_SITE_COUNT], *passes[FPSIM_PASS_COUNT], *roles[FPSIM_ROLE_COUNT];
    const char *views[FPSIM_VIEW_COUNT], *points[FPSIM_POINT_COUNT];
    for (int i = 0; i < FPSIM_SITE_COUNT; i++) sites[i] = fpsim_site_name(i);
    for (int i = 0; i < FPSIM_PASS_COUNT; i++) passes[i] = fpsim_pass_name(i);
    for (int i = 0; i < FPSIM_ROLE_COUNT; i++) roles[i] = fpsim_role_name(i);
    for (int i = 0; i < FPSIM_VIEW_COUNT; i++) views[i] = fpsim_view_name(i);
    for (int i = 0; i < FPSIM_POINT_COUNT; i++) points[i] = fpsim_point_name(i);
    int nl = d->layers, npl = d->layers + 1;
    char (*lnames)[16] = calloc((size_t)npl, sizeof *lnames);
    const char **lp = calloc((size_t)npl, sizeof *lp), **tp = calloc((size_t)d->tensors, sizeof *tp);
    const char **rp = calloc((size_t)r->nrecipes, sizeof *rp);
    if (!lnames || !lp || !tp || !rp) {
        free(lnames);
        free(lp);
        free(tp);
        free(rp);
        return fpsim_fail(FPSIM_ENOMEM, "replay results: out of memory");
    }
    for (int l = 0; l < nl; l++) {
        if (l == nl - 1) snprintf(lnames[l], 16, "head");
        else snprintf(lnames[l], 16, "%d", l);
        lp[l] = lnames[l];
    }
    fpsim_status st = fpsim_h5_attr_strings(root, "layers", lp, (size_t)nl);
    /* point layers: -1 (embedding) .. L (head) */
    for (int l = 0; l < npl; l++) {
        if (l == 0) snprintf(lnames[l], 16, "embed");
        else if (l == npl - 1) snprintf(lnames[l], 16, "head");
        else snprintf(lnames[l], 16, "%d", l - 1);
        lp[l] = lnames[l];
    }
    if (!st) st = fpsim_h5_attr_strings(root, "point_layers", lp, (size_t)npl);
    for (int t = 0; t < d->tensors; t++) tp[t] = r->tensor_names[t];
    for (int i = 0; i < r->nrecipes; i++) rp[i] = r->results[i].spec;
    if (!st) st = fpsim_h5_attr_strings(root, "sites", sites, FPSIM_SITE_COUNT);
    if (!st) st = fpsim_h5_attr_strings(root, "passes", passes, FPSIM_PASS_COUNT);
    if (!st) st = fpsim_h5_attr_strings(root, "roles", roles, FPSIM_ROLE_COUNT);
    if (!st) st = fpsim_h5_attr_strings(root, "views", views, FPSIM_VIEW_COUNT);
    if (!st) st = fpsim_h5_attr_strings(root, "points", points, FPSIM_POINT_COUNT);
    if (!st) st = fpsim_h5_attr_strings(root, "tensors", tp, (size_t)d->tensors);
    if (!st) st = fpsim_h5_attr_strings(root, "recipes", rp, (size_t)r->nrecipes);
    free(lnames);
    free(lp);
    free(tp);
    free(rp);
    return st;
}

fpsim_status fpsim_replay_write_h5(const fpsim_replay *r, const char *path, const char *command_line,
                                   const fpsim_biasvar_result *bv)
{
    fpsim_h5_file f;
    fpsim_status st = fpsim_h5_create(&f, path);
    if (st) return st;
    int steps = r->steps_done;
    const fpsim_replay_config *cfg = &r->config;
    char spec[512];
    st = fpsim_h5_write_provenance(f.id, command_line ? command_line : "", cfg->seed);
    if (!st) st = fpsim_model_config_format(&cfg->model, spec, sizeof spec);
    if (!st) st = fpsim_h5_attr_string(f.id, "kind", "fpsim replay results");
    if (!st) st = fpsim_h5_attr_string(f.id, "model", spec);
    if (!st) st = fpsim_h5_attr_int64(f.id, "steps", steps);
    if (!st) st = fpsim_h5_attr_int64(f.id, "steps_requested", cfg->steps);
    if (!st) st = fpsim_h5_attr_string(f.id, "reference", "fp64");
    int any_accum = 0; /* a recipe with its own accumulation model (replay --accum, recipe@accum=) */
    for (int i = 0; i < r->nrecipes; i++) any_accum |= r->results[i].plan.accum_set;
    if (!st)
        st = fpsim_h5_attr_string(f.id, "gemm_accumulation",
                                  any_accum ? "per recipe: each recipe group's accum and accum_routes"
                                            : "fp32 (BLAS sgemm on dequantized operands)");
    if (!st) st = fpsim_h5_attr_int64(f.id, "local_view", cfg->local_view);
    if (!st) st = fpsim_h5_attr_double(f.id, "adamw_lr", cfg->opt.lr);
    if (!st) st = fpsim_h5_attr_double(f.id, "adamw_beta1", cfg->opt.beta1);
    if (!st) st = fpsim_h5_attr_double(f.id, "adamw_beta2", cfg->opt.beta2);
    if (!st) st = fpsim_h5_attr_double(f.id, "adamw_eps", cfg->opt.eps);
    if (!st) st = fpsim_h5_attr_double(f.id, "adamw_weight_decay", cfg->opt.weight_decay);
    if (!st) st = fpsim_h5_attr_double(f.id, "adamw_grad_clip", cfg->opt.grad_clip);
    if (!st) st = write_names(f.id, r);
    if (!st) {
        hid_t g;
        st = fpsim_h5_group_create(&g, f.id, "reference");
        if (!st) {
            size_t ds[1] = {(size_t)steps};
            st = write_doubles(g, "loss", r->ref_loss, 1, ds, "step");
            if (!st) st = fpsim_h5_attr_string(g, "engine", "fp64");
            H5Gclose(g);
        }
    }
    if (!st) {
        hid_t g;
        st = fpsim_h5_group_create(&g, f.id, "recipes");
        if (!st) {
            for (int i = 0; !st && i < r->nrecipes; i++) st = write_recipe(g, r, &r->results[i], steps);
            H5Gclose(g);
        }
    }
    if (!st && bv) st = replay_biasvar_write(f.id, bv);
    if (st) {
        fpsim_h5_discard(&f);
        return st;
    }
    return fpsim_h5_commit(&f);
}
