/* mismatch_h5.c: the results file of `fpsim mismatch` (schema: docs/mismatch.md "HDF5 schema").
 *
 * Root attributes: provenance (fpsim_h5_write_provenance), kind = "fpsim-mismatch",
 * schema_version = 1, steps, layers, configs (names), and the names along each indexed
 * dimension (token_metrics, stats, seq_metrics, diff_stats, is_kinds, is_stats, points,
 * point_stats, attr_metrics, parts). One group per configuration under /configs/<name>. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_h5.h"
#include "fpsim_mismatch.h"

static const char *const stat_names[5] = {"mean", "median", "p99", "max", "min"};
static const char *const seq_names[3] = {"seq_mult_prob_error", "seq_gen_kl_error", "seq_log_ratio"};
static const char *const diff_names[8] = {"p05", "p50", "p95", "p99", "max_abs", "frac_neg",
                                          "ratio_frac_gt2", "ratio_frac_lt05"};
static const char *const is_stat_names[5] = {"is_oob_ratio", "weight_mean", "weight_max",
                                             "weight_min", "zero_fraction"};
static const char *const point_stat_names[4] = {"rel_l2", "max_abs", "cosine", "lens_kl"};
static const char *const attr_names[4] = {"token_mult_prob_error", "gen_kl_error",
                                          "policy_kl_error", "js_divergence_error"};
static const char *const part_names[3] = {"gemm", "reduce", "kv"};

static void agg_put(double *o, const fpsim_mm_agg *a)
{
    o[0] = a->mean;
    o[1] = a->median;
    o[2] = a->p99;
    o[3] = a->max;
    o[4] = a->min;
}

static void attr_put(double *o, const fpsim_mm_summary *s)
{
    o[0] = s->token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean;
    o[1] = s->token[FPSIM_MM_GEN_KL_ERROR].mean;
    o[2] = s->token[FPSIM_MM_POLICY_KL_ERROR].mean;
    o[3] = s->token[FPSIM_MM_JS_DIVERGENCE_ERROR].mean;
}

static fpsim_status write_result(hid_t root, const fpsim_mm_run *r, const fpsim_mm_result *x)
{
    int S = r->config.steps, L = r->config.model.layers, M = FPSIM_MM_TOKEN_METRIC_COUNT;
    char path[128];
    snprintf(path, sizeof path, "configs/%s", x->name);
    hid_t g;
    fpsim_status st = fpsim_h5_group_create(&g, root, path);
    if (st) return st;
    size_t big = (size_t)S * (size_t)(M * 5 + 15 + 8 + FPSIM_IS_COUNT * 5 + (L + 3) * 4 + 2 * L + 1) +
                 (size_t)(L + 5) * 4 + 16;
    double *b = malloc(big * sizeof *b);
    if (!b) {
        H5Gclose(g);
        return fpsim_fail(FPSIM_ENOMEM, "mismatch results: out of memory");
    }
    st = fpsim_h5_attr_string(g, "generator", x->gen_text);
    if (!st) st = fpsim_h5_attr_string(g, "trainer", x->train_text);
    if (!st) st = fpsim_h5_attr_double(g, "reward_mean", x->reward_mean);
    /* token metrics (steps, metric, stat) */
    for (int s = 0; s < S; s++)
        for (int k = 0; k < M; k++) agg_put(b + ((size_t)s * M + k) * 5, &x->summary[s].token[k]);
    size_t d3[3] = {(size_t)S, (size_t)M, 5};
    if (!st) st = fpsim_h5_write(g, "token_metrics", FPSIM_H5_F64, 3, d3, b, 0);
    for (int s = 0; s < S; s++) {
        agg_put(b + (size_t)s * 15, &x->summary[s].seq_mult_prob_error);
        agg_put(b + (size_t)s * 15 + 5, &x->summary[s].seq_gen_kl);
        agg_put(b + (size_t)s * 15 + 10, &x->summary[s].seq_log_ratio);
    }
    size_t ds[3] = {(size_t)S, 3, 5};
    if (!st) st = fpsim_h5_write(g, "seq_metrics", FPSIM_H5_F64, 3, ds, b, 0);
    for (int s = 0; s < S; s++) {
        const fpsim_mm_summary *y = &x->summary[s];
        double v[8] = {y->diff_p05, y->diff_p50, y->diff_p95, y->diff_p99, y->diff_max_abs,
                       y->diff_frac_neg, y->ratio_frac_gt2, y->ratio_frac_lt05};
        memcpy(b + (size_t)s * 8, v, sizeof v);
    }
    size_t dd[2] = {(size_t)S, 8};
    if (!st) st = fpsim_h5_write(g, "diff_stats", FPSIM_H5_F64, 2, dd, b, 0);
    uint64_t *cnt = malloc((size_t)S * 2 * sizeof *cnt);
    if (!cnt) st = fpsim_fail(FPSIM_ENOMEM, "mismatch results: out of memory");
    for (int s = 0; s < S && cnt; s++) {
        cnt[2 * s] = x->summary[s].tokens;
        cnt[2 * s + 1] = x->summary[s].sequences;
    }
    size_t dc[2] = {(size_t)S, 2};
    if (!st) st = fpsim_h5_write(g, "counts", FPSIM_H5_U64, 2, dc, cnt, 0);
    free(cnt);
    for (int s = 0; s < S; s++)
        for (int k = 0; k < FPSIM_IS_COUNT; k++) {
            const fpsim_is_result *y = &x->is[(size_t)s * FPSIM_IS_COUNT + k];
            double v[5] = {y->oob_ratio, y->weight_mean, y->weight_max, y->weight_min, y->zero_fraction};
            memcpy(b + ((size_t)s * FPSIM_IS_COUNT + k) * 5, v, sizeof v);
        }
    size_t di[3] = {(size_t)S, FPSIM_IS_COUNT, 5};
    if (!st) st = fpsim_h5_write(g, "is", FPSIM_H5_F64, 3, di, b, 0);
    for (size_t i = 0; i < (size_t)S * (size_t)(L + 3); i++) {
        const fpsim_mm_point *p = &x->points[i];
        b[4 * i] = p->rel_l2;
        b[4 * i + 1] = p->max_abs;
        b[4 * i + 2] = p->cosine;
        b[4 * i + 3] = p->lens_kl;
    }
    size_t dp[3] = {(size_t)S, (size_t)(L + 3), 4};
    if (!st) st = fpsim_h5_write(g, "points", FPSIM_H5_F64, 3, dp, b, 0);
    size_t dk[2] = {(size_t)S, 2 * (size_t)L};
    if (!st) st = fpsim_h5_write(g, "kv_scales", FPSIM_H5_F64, 2, dk, x->kv_scales, 0);
    size_t d1[1] = {(size_t)S};
    if (!st) st = fpsim_h5_write(g, "kv_clip_fraction", FPSIM_H5_F64, 1, d1, x->kv_clip, 0);
    size_t dt[2] = {r->n, r->len};
    if (!st) st = fpsim_h5_write(g, "g", FPSIM_H5_F64, 2, dt, x->g, 4);
    if (!st) st = fpsim_h5_write(g, "p", FPSIM_H5_F64, 2, dt, x->p, 4);
    if (!st) st = fpsim_h5_write(g, "mask", FPSIM_H5_U8, 2, dt, x->mask, 4);
    if (!st) st = fpsim_h5_write(g, "tokens", FPSIM_H5_I32, 2, dt, x->tokens, 4);
    if (!st && x->have_attr) {
        for (int k = 0; k < L + 2; k++) attr_put(b + 4 * (size_t)k, &x->attr_layer[k]);
        size_t da[2] = {(size_t)(L + 2), 4};
        st = fpsim_h5_write(g, "attr_layer", FPSIM_H5_F64, 2, da, b, 0);
        for (int k = 0; k < 3 && !st; k++) attr_put(b + 4 * (size_t)k, &x->attr_part[k]);
        size_t dq[2] = {3, 4};
        if (!st) st = fpsim_h5_write(g, "attr_part", FPSIM_H5_F64, 2, dq, b, 0);
    }
    free(b);
    H5Gclose(g);
    return st;
}

fpsim_status fpsim_mm_write_h5(const fpsim_mm_run *r, const char *path, const char *command_line)
{
    fpsim_h5_file f;
    fpsim_status st = fpsim_h5_create(&f, path);
    if (st) return st;
    int L = r->config.model.layers;
    const char *tm[FPSIM_MM_TOKEN_METRIC_COUNT], *isk[FPSIM_IS_COUNT], *cfgs[FPSIM_MM_MAX_CONFIGS];
    for (int k = 0; k < FPSIM_MM_TOKEN_METRIC_COUNT; k++) tm[k] = fpsim_mm_token_metric_name(k);
    for (int k = 0; k < FPSIM_IS_COUNT; k++) isk[k] = fpsim_is_kind_name(k);
    for (int k = 0; k < r->nresults; k++) cfgs[k] = r->results[k].name;
    char names[66][16];
    const char *pts[66];
    for (int k = 0; k <= L + 2 && k < 66; k++) {
        if (k == 0) snprintf(names[k], sizeof names[k], "embed");
        else if (k <= L) snprintf(names[k], sizeof names[k], "block%d", k - 1);
        else if (k == L + 1) snprintf(names[k], sizeof names[k], "final_norm");
        else snprintf(names[k], sizeof names[k], "logits");
        pts[k] = names[k];
    }
    const char *alay[66];
    char anames[66][16];
    for (int k = 0; k < L + 2 && k < 66; k++) {
        if (k == 0) snprintf(anames[k], sizeof anames[k], "embed");
        else if (k <= L) snprintf(anames[k], sizeof anames[k], "layer%d", k - 1);
        else snprintf(anames[k], sizeof anames[k], "head");
        alay[k] = anames[k];
    }
    hid_t root = f.id;
    st = fpsim_h5_write_provenance(root, command_line, r->config.seed);
    if (!st) st = fpsim_h5_attr_string(root, "kind", "fpsim-mismatch");
    if (!st) st = fpsim_h5_attr_int64(root, "schema_version", 1);
    if (!st) st = fpsim_h5_attr_int64(root, "steps", r->config.steps);
    if (!st) st = fpsim_h5_attr_int64(root, "layers", L);
    if (!st) st = fpsim_h5_attr_double(root, "temperature", r->config.temperature);
    if (!st) st = fpsim_h5_attr_double(root, "top_p", r->config.top_p);
    if (!st) st = fpsim_h5_attr_strings(root, "configs", cfgs, (size_t)r->nresults);
    if (!st) st = fpsim_h5_attr_strings(root, "token_metrics", tm, FPSIM_MM_TOKEN_METRIC_COUNT);
    if (!st) st = fpsim_h5_attr_strings(root, "stats", stat_names, 5);
    if (!st) st = fpsim_h5_attr_strings(root, "seq_metrics", seq_names, 3);
    if (!st) st = fpsim_h5_attr_strings(root, "diff_stats", diff_names, 8);
    if (!st) st = fpsim_h5_attr_strings(root, "is_kinds", isk, FPSIM_IS_COUNT);
    if (!st) st = fpsim_h5_attr_strings(root, "is_stats", is_stat_names, 5);
    if (!st) st = fpsim_h5_attr_strings(root, "points", pts, (size_t)(L + 3));
    if (!st) st = fpsim_h5_attr_strings(root, "point_stats", point_stat_names, 4);
    if (!st) st = fpsim_h5_attr_strings(root, "attr_metrics", attr_names, 4);
    if (!st) st = fpsim_h5_attr_strings(root, "attr_layers", alay, (size_t)(L + 2));
    if (!st) st = fpsim_h5_attr_strings(root, "parts", part_names, 3);
    for (int i = 0; i < r->nresults && !st; i++) st = write_result(root, r, &r->results[i]);
    if (st) {
        fpsim_h5_discard(&f);
        return st;
    }
    return fpsim_h5_commit(&f);
}
