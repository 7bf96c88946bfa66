/* model_acts.c: the activation slab (one allocation of doubles) and the caches carved from it. */
#include <stdlib.h>
#include <string.h>

#include "fpsim_model.h"

typedef struct dims {
    size_t N, C, QKV, F, V, T, BHTT;
} dims;

static dims dims_of(const fpsim_model_config *c) {
    dims d;
    d.N = fpsim_model_tokens(c);
    d.C = (size_t)c->d;
    d.QKV = (size_t)fpsim_model_qkv_dim(c);
    d.F = (size_t)c->ffn;
    d.V = (size_t)c->vocab;
    d.T = (size_t)c->seq;
    d.BHTT = (size_t)c->batch * (size_t)c->heads * d.T * d.T;
    return d;
}

/* Doubles a block saves, without its input (which may live elsewhere). */
static size_t block_saved_size(const dims *d) {
    return 6 * d->N * d->C + 2 * d->N + 2 * d->N * d->QKV + d->BHTT + 3 * d->N * d->F;
}
static size_t block_scratch_size(const dims *d) {
    return 3 * d->N * d->C + 3 * d->N * d->F + d->N * d->QKV + d->T;
}
static size_t head_size(const dims *d) {
    return 2 * d->N * d->C + 3 * d->N * d->V + 2 * d->N;
}

static double *take(double **cursor, size_t n) {
    double *p = *cursor;
    *cursor += n;
    return p;
}

static void carve_block_saved(fpsim_block_cache *b, double **cur, const dims *d) {
    b->ln1 = take(cur, d->N * d->C);
    b->rstd1 = take(cur, d->N);
    b->qkv = take(cur, d->N * d->QKV);
    b->qkvr = take(cur, d->N * d->QKV);
    b->att = take(cur, d->BHTT);
    b->atty = take(cur, d->N * d->C);
    b->attproj = take(cur, d->N * d->C);
    b->res2 = take(cur, d->N * d->C);
    b->ln2 = take(cur, d->N * d->C);
    b->rstd2 = take(cur, d->N);
    b->gu = take(cur, 2 * d->N * d->F);
    b->h = take(cur, d->N * d->F);
    b->down = take(cur, d->N * d->C);
}

static void carve_block_scratch(fpsim_block_cache *b, double **cur, const dims *d) {
    b->d_nc = take(cur, d->N * d->C);
    b->d_nc2 = take(cur, d->N * d->C);
    b->d_nc3 = take(cur, d->N * d->C);
    b->d_nf = take(cur, d->N * d->F);
    b->d_n2f = take(cur, 2 * d->N * d->F);
    b->d_qkv = take(cur, d->N * d->QKV);
    b->d_row = take(cur, d->T);
}

static void carve_head(fpsim_head_cache *h, double **cur, const dims *d) {
    h->lnf = take(cur, d->N * d->C);
    h->rstd = take(cur, d->N);
    h->logits = take(cur, d->N * d->V);
    h->probs = take(cur, d->N * d->V);
    h->losses = take(cur, d->N);
    h->dlogits = take(cur, d->N * d->V);
    h->dlnf = take(cur, d->N * d->C);
}

fpsim_status fpsim_block_cache_create(fpsim_block_cache *c, const fpsim_model_config *cfg) {
    memset(c, 0, sizeof *c);
    fpsim_status st = fpsim_model_config_check(cfg, 0);
    if (st) return st;
    dims d = dims_of(cfg);
    size_t n = d.N * d.C + block_saved_size(&d) + block_scratch_size(&d);
    double *mem = calloc(n, sizeof(double));
    if (!mem) return fpsim_fail(FPSIM_ENOMEM, "block cache: no memory for %zu doubles", n);
    double *cur = mem;
    c->in = take(&cur, d.N * d.C); /* first: the pointer that owns the allocation */
    carve_block_saved(c, &cur, &d);
    carve_block_scratch(c, &cur, &d);
    return FPSIM_OK;
}

void fpsim_block_cache_free(fpsim_block_cache *c) {
    if (!c) return;
    free(c->in);
    memset(c, 0, sizeof *c);
}

fpsim_status fpsim_head_cache_create(fpsim_head_cache *c, const fpsim_model_config *cfg) {
    memset(c, 0, sizeof *c);
    fpsim_status st = fpsim_model_config_check(cfg, 0);
    if (st) return st;
    dims d = dims_of(cfg);
    size_t n = d.N * d.C + head_size(&d);
    double *mem = calloc(n, sizeof(double));
    c->targets = calloc(d.N, sizeof(int32_t));
    c->mask = calloc(d.N, 1);
    if (!mem || !c->targets || !c->mask) {
        free(mem), free(c->targets), free(c->mask);
        memset(c, 0, sizeof *c);
        return fpsim_fail(FPSIM_ENOMEM, "head cache: no memory for %zu doubles", n);
    }
    double *cur = mem;
    c->in = take(&cur, d.N * d.C);
    carve_head(c, &cur, &d);
    return FPSIM_OK;
}

void fpsim_head_cache_free(fpsim_head_cache *c) {
    if (!c) return;
    free(c->in), free(c->targets), free(c->mask);
    memset(c, 0, sizeof *c);
}

double fpsim_acts_bytes(const fpsim_model_config *cfg) {
    dims d = dims_of(cfg);
    const double L = (double)cfg->layers;
    /* the doubles of fpsim_acts_create's slab, and its token, target and mask arrays */
    const double doubles = 2.0 * (L + 1) * (double)d.N * (double)d.C + L * (double)block_saved_size(&d) +
                           (double)block_scratch_size(&d) + (double)head_size(&d);
    return 8.0 * doubles + 9.0 * (double)d.N;
}

fpsim_status fpsim_acts_create(fpsim_acts *a, const fpsim_model_config *cfg) {
    memset(a, 0, sizeof *a);
    fpsim_status st = fpsim_model_config_check(cfg, 0);
    if (st) return st;
    dims d = dims_of(cfg);
    size_t L = (size_t)cfg->layers;
    size_t n = 2 * (L + 1) * d.N * d.C + L * block_saved_size(&d) + block_scratch_size(&d) +
               head_size(&d);
    a->config = *cfg;
    a->memory = calloc(n, sizeof(double));
    a->blocks = calloc(L, sizeof *a->blocks);
    a->tokens = calloc(d.N, sizeof(int32_t));
    a->head.targets = calloc(d.N, sizeof(int32_t));
    a->head.mask = calloc(d.N, 1);
    if (!a->memory || !a->blocks || !a->tokens || !a->head.targets || !a->head.mask) {
        fpsim_acts_free(a);
        return fpsim_fail(FPSIM_ENOMEM, "activations: no memory for %zu doubles", n);
    }
    double *cur = a->memory;
    a->resid = take(&cur, (L + 1) * d.N * d.C);
    a->dresid = take(&cur, (L + 1) * d.N * d.C);
    for (size_t l = 0; l < L; l++) {
        a->blocks[l].in = a->resid + l * d.N * d.C;
        carve_block_saved(&a->blocks[l], &cur, &d);
    }
    fpsim_block_cache scratch;
    carve_block_scratch(&scratch, &cur, &d);
    for (size_t l = 0; l < L; l++) {
        a->blocks[l].d_nc = scratch.d_nc, a->blocks[l].d_nc2 = scratch.d_nc2;
        a->blocks[l].d_nc3 = scratch.d_nc3, a->blocks[l].d_nf = scratch.d_nf;
        a->blocks[l].d_n2f = scratch.d_n2f, a->blocks[l].d_qkv = scratch.d_qkv;
        a->blocks[l].d_row = scratch.d_row;
    }
    a->head.in = a->resid + L * d.N * d.C;
    carve_head(&a->head, &cur, &d);
    return FPSIM_OK;
}

void fpsim_acts_free(fpsim_acts *a) {
    if (!a) return;
    free(a->memory), free(a->blocks), free(a->tokens), free(a->head.targets), free(a->head.mask);
    memset(a, 0, sizeof *a);
}
