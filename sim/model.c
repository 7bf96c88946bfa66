/* model.c: the parameter slab, its deterministic initialization, copies and slices. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_mem.h"
#include "fpsim_model.h"

static const char *const param_names[FPSIM_PARAM_COUNT] = {
    "wte", "ln1w", "qkvw", "attprojw", "ln2w", "gateupw", "downw", "lnfw", "lmheadw"};

const char *fpsim_param_name(int which) {
    return which >= 0 && which < FPSIM_PARAM_COUNT ? param_names[which] : NULL;
}

static void param_sizes(size_t sizes[FPSIM_PARAM_COUNT], const fpsim_model_config *c) {
    size_t L = (size_t)c->layers, C = (size_t)c->d, F = (size_t)c->ffn, V = (size_t)c->vocab;
    size_t QKV = (size_t)fpsim_model_qkv_dim(c);
    sizes[FPSIM_PARAM_WTE] = V * C;
    sizes[FPSIM_PARAM_LN1W] = L * C;
    sizes[FPSIM_PARAM_QKVW] = L * QKV * C;
    sizes[FPSIM_PARAM_ATTPROJW] = L * C * C;
    sizes[FPSIM_PARAM_LN2W] = L * C;
    sizes[FPSIM_PARAM_GATEUPW] = L * 2 * F * C;
    sizes[FPSIM_PARAM_DOWNW] = L * C * F;
    sizes[FPSIM_PARAM_LNFW] = C;
    sizes[FPSIM_PARAM_LMHEADW] = V * C;
}

static void point_views(fpsim_params *p, double *mem, const size_t sizes[FPSIM_PARAM_COUNT]) {
    double **views[FPSIM_PARAM_COUNT] = {&p->wte,  &p->ln1w,    &p->qkvw,
                                         &p->attprojw, &p->ln2w, &p->gateupw,
                                         &p->downw, &p->lnfw,   &p->lmheadw};
    for (int i = 0; i < FPSIM_PARAM_COUNT; i++) {
        *views[i] = mem;
        mem += sizes[i];
    }
}

/* splitmix64 (Steele, Lea, Flood 2014): a 64-bit counter through a fixed mixing function. */
static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A standard normal by Box-Muller from two 53-bit uniforms (u1 in (0, 1], u2 in [0, 1)); the
 * second value of the pair is discarded so that each draw consumes exactly two words. */
static double normal_draw(uint64_t *state) {
    double u1 = (double)((splitmix64(state) >> 11) + 1) * 0x1p-53;
    double u2 = (double)(splitmix64(state) >> 11) * 0x1p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void fill_normal(double *x, size_t n, double std, uint64_t *state) {
    for (size_t i = 0; i < n; i++) x[i] = (double)(float)(std * normal_draw(state));
}

static void fill_ones(double *x, size_t n) {
    for (size_t i = 0; i < n; i++) x[i] = 1.0;
}

static void model_init_params(fpsim_model *m) {
    const fpsim_model_config *c = &m->config;
    uint64_t state = c->seed;
    double std = c->init_std, std_out = c->init_std / sqrt(2.0 * c->layers);
    fill_normal(m->params.wte, m->param_sizes[FPSIM_PARAM_WTE], std, &state);
    fill_ones(m->params.ln1w, m->param_sizes[FPSIM_PARAM_LN1W]);
    fill_normal(m->params.qkvw, m->param_sizes[FPSIM_PARAM_QKVW], std, &state);
    fill_normal(m->params.attprojw, m->param_sizes[FPSIM_PARAM_ATTPROJW], std_out, &state);
    fill_ones(m->params.ln2w, m->param_sizes[FPSIM_PARAM_LN2W]);
    fill_normal(m->params.gateupw, m->param_sizes[FPSIM_PARAM_GATEUPW], std, &state);
    fill_normal(m->params.downw, m->param_sizes[FPSIM_PARAM_DOWNW], std_out, &state);
    fill_ones(m->params.lnfw, m->param_sizes[FPSIM_PARAM_LNFW]);
    fill_normal(m->params.lmheadw, m->param_sizes[FPSIM_PARAM_LMHEADW], std, &state);
}

/* cos and sin of pos * theta^(-2i/hd), i < hd/2, computed in double once. */
static void rope_tables(fpsim_model *m) {
    const fpsim_model_config *c = &m->config;
    int half = fpsim_model_head_dim(c) / 2;
    for (int i = 0; i < half; i++) {
        double inv_freq = pow(c->rope_theta, -2.0 * i / (2.0 * half));
        for (int t = 0; t < c->seq; t++) {
            m->rope_cos[(size_t)t * half + i] = cos(t * inv_freq);
            m->rope_sin[(size_t)t * half + i] = sin(t * inv_freq);
        }
    }
}

static fpsim_status model_alloc(fpsim_model *m, const fpsim_model_config *cfg) {
    memset(m, 0, sizeof *m);
    fpsim_status st = fpsim_model_config_check(cfg, 0);
    if (st) return st;
    m->config = *cfg;
    param_sizes(m->param_sizes, cfg);
    for (int i = 0; i < FPSIM_PARAM_COUNT; i++) m->num_params += m->param_sizes[i];
    size_t n = m->num_params;
    size_t rope = (size_t)cfg->seq * (size_t)(fpsim_model_head_dim(cfg) / 2);
    m->params_memory = malloc(sizeof(double) * n);
    m->grads_memory = calloc(n, sizeof(double));
    m->m_memory = calloc(n, sizeof(double));
    m->v_memory = calloc(n, sizeof(double));
    m->rope_cos = malloc(sizeof(double) * rope);
    m->rope_sin = malloc(sizeof(double) * rope);
    if (!m->params_memory || !m->grads_memory || !m->m_memory || !m->v_memory || !m->rope_cos ||
        !m->rope_sin) {
        fpsim_model_free(m);
        return fpsim_fail(FPSIM_ENOMEM, "model: no memory for %zu parameters", n);
    }
    point_views(&m->params, m->params_memory, m->param_sizes);
    point_views(&m->grads, m->grads_memory, m->param_sizes);
    rope_tables(m);
    return FPSIM_OK;
}

fpsim_status fpsim_model_check_memory(const fpsim_model_config *cfg, double need, const char *who, int n,
                                      const char *noun)
{
    char what[200];
    const double params = fpsim_model_bytes(cfg) / 32.0; /* four doubles each (model_alloc) */
    snprintf(what, sizeof what, "%sthe model (%d layers, d=%d, %.1f %s parameters) with %d %s%s", who, cfg->layers,
             cfg->d, params >= 1e9 ? params / 1e9 : params / 1e6, params >= 1e9 ? "billion" : "million", n, noun,
             n == 1 ? "" : "s");
    return fpsim_mem_check(need < 1.8e19 ? (uint64_t)need : UINT64_MAX, what, "");
}

double fpsim_model_bytes(const fpsim_model_config *cfg) {
    size_t sizes[FPSIM_PARAM_COUNT];
    param_sizes(sizes, cfg);
    double n = 0; /* in double: a config too large for size_t is still sized, to be refused */
    for (int i = 0; i < FPSIM_PARAM_COUNT; i++) n += (double)sizes[i];
    const double rope = (double)cfg->seq * (double)(fpsim_model_head_dim(cfg) / 2);
    return 8.0 * (4.0 * n + 2.0 * rope); /* params, grads, m, v; rope cos, sin (model_alloc) */
}

fpsim_status fpsim_model_create(fpsim_model *m, const fpsim_model_config *cfg) {
    fpsim_status st = model_alloc(m, cfg);
    if (st) return st;
    model_init_params(m);
    return FPSIM_OK;
}

void fpsim_model_free(fpsim_model *m) {
    if (!m) return;
    free(m->params_memory), free(m->grads_memory), free(m->m_memory), free(m->v_memory);
    free(m->rope_cos), free(m->rope_sin);
    memset(m, 0, sizeof *m);
}

fpsim_status fpsim_model_copy_state(fpsim_model *dst, const fpsim_model *src) {
    if (memcmp(&dst->config, &src->config, sizeof src->config) != 0 ||
        dst->num_params != src->num_params)
        return fpsim_fail(FPSIM_EINVAL, "model copy: the two models have different configs");
    size_t bytes = sizeof(double) * src->num_params;
    memcpy(dst->params_memory, src->params_memory, bytes);
    memcpy(dst->m_memory, src->m_memory, bytes);
    memcpy(dst->v_memory, src->v_memory, bytes);
    dst->step = src->step;
    return FPSIM_OK;
}

fpsim_status fpsim_model_clone(fpsim_model *dst, const fpsim_model *src) {
    fpsim_status st = model_alloc(dst, &src->config);
    if (st) return st;
    fpsim_model_copy_state(dst, src);
    memcpy(dst->grads_memory, src->grads_memory, sizeof(double) * src->num_params);
    return FPSIM_OK;
}

fpsim_status fpsim_model_param_slice(const fpsim_model *m, const fpsim_params *slab, int which,
                                     int layer, double **data, size_t *n) {
    if (which < 0 || which >= FPSIM_PARAM_COUNT)
        return fpsim_fail(FPSIM_EINVAL, "model: parameter tensor %d out of range", which);
    double *const base[FPSIM_PARAM_COUNT] = {slab->wte,  slab->ln1w,    slab->qkvw,
                                             slab->attprojw, slab->ln2w, slab->gateupw,
                                             slab->downw, slab->lnfw,   slab->lmheadw};
    int per_layer = which != FPSIM_PARAM_WTE && which != FPSIM_PARAM_LNFW &&
                    which != FPSIM_PARAM_LMHEADW;
    if (!per_layer) {
        *data = base[which];
        *n = m->param_sizes[which];
        return FPSIM_OK;
    }
    if (layer < 0 || layer >= m->config.layers)
        return fpsim_fail(FPSIM_EINVAL, "model: layer %d out of range [0, %d) for %s", layer,
                          m->config.layers, param_names[which]);
    size_t per = m->param_sizes[which] / (size_t)m->config.layers;
    *data = base[which] + (size_t)layer * per;
    *n = per;
    return FPSIM_OK;
}
