/* capture_compare.c: run fpsim on a captured step and measure how far it is from PyTorch. */
#include "fpsim_capture.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ||a - b|| / ||b||, both L2 over n values; ||a - b|| when b is all zero. */
static double rel_l2(const double *a, const double *b, size_t n) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = a[i] - b[i];
        num += d * d;
        den += b[i] * b[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static void put(fpsim_capture_diff *diffs, size_t *k, const char *name, double rel, double *max) {
    snprintf(diffs[*k].name, sizeof diffs[*k].name, "%s", name);
    diffs[*k].rel_l2 = rel;
    if (!(rel <= *max)) *max = rel; /* a NaN difference becomes the maximum */
    (*k)++;
}

fpsim_status fpsim_capture_compare(const fpsim_capture *cap, const fpsim_numerics *nx,
                                   fpsim_capture_diff *diffs, size_t cap_n, double *max_rel) {
    size_t need = fpsim_capture_diff_count(cap);
    if (cap_n < need)
        return fpsim_fail(FPSIM_EINVAL, "capture compare: room for %zu diffs, %zu needed", cap_n,
                          need);
    const fpsim_model_config *c = &cap->model.config;
    size_t N = fpsim_model_tokens(c), C = (size_t)c->d, V = (size_t)c->vocab;
    fpsim_model m;
    fpsim_acts a;
    fpsim_status st = fpsim_model_clone(&m, &cap->model);
    if (st) return st;
    if ((st = fpsim_acts_create(&a, c))) {
        fpsim_model_free(&m);
        return st;
    }
    double loss = 0.0, max = 0.0;
    st = fpsim_model_forward(&m, nx, &a, cap->tokens, cap->targets, cap->mask, NULL, NULL, &loss);
    if (!st) st = fpsim_model_backward(&m, nx, &a, NULL, NULL);
    if (!st) {
        size_t k = 0;
        char name[48];
        put(diffs, &k, "embed", rel_l2(a.resid, cap->embed, N * C), &max);
        for (int l = 0; l < c->layers; l++) {
            snprintf(name, sizeof name, "block_out[%d]", l);
            put(diffs, &k, name,
                rel_l2(a.resid + (size_t)(l + 1) * N * C, cap->block_out + (size_t)l * N * C,
                       N * C), &max);
        }
        put(diffs, &k, "final_norm", rel_l2(a.head.lnf, cap->final_norm, N * C), &max);
        put(diffs, &k, "logits", rel_l2(a.head.logits, cap->logits, N * V), &max);
        put(diffs, &k, "loss", rel_l2(&loss, &cap->loss, 1), &max);
        size_t off = 0;
        for (int p = 0; p < FPSIM_PARAM_COUNT; p++) {
            snprintf(name, sizeof name, "grad:%s", fpsim_param_name(p));
            put(diffs, &k, name,
                rel_l2(m.grads_memory + off, cap->grads + off, m.param_sizes[p]), &max);
            off += m.param_sizes[p];
        }
        if (max_rel) *max_rel = max;
    }
    fpsim_acts_free(&a);
    fpsim_model_free(&m);
    return st;
}
