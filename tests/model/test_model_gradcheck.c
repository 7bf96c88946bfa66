/* test_model_gradcheck.c: every layer's backward against central finite differences, in FP64.
 *
 * For each layer type an objective J = sum(r * output) with fixed random r (or the loss itself
 * for the head and the whole model) is differentiated two ways: the layer's backward with
 * dout = r, and (J(x + h) - J(x - h)) / 2h element by element. The finite difference is the
 * independent oracle: it only runs the forward. Pass: relative L2 error over all elements
 * ||analytic - fd|| / ||fd|| < 1e-6. Tiny configs with large init (std 0.3) so that the
 * nonlinearities matter. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_model.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("gradcheck fp64");
static uint64_t rng = 42;

static double uniform_pm1(void) {
    return (double)(test_splitmix64(&rng) >> 11) * 0x1p-52 - 1.0;
}
static void fill(double *x, size_t n, double scale) {
    for (size_t i = 0; i < n; i++) x[i] = scale * uniform_pm1();
}
static double dot(const double *a, const double *b, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

typedef double (*objective_fn)(void *ctx);

/* Compare analytic[0..n) with central differences of f over x[0..n). */
static void fd_check(const char *what, objective_fn f, void *ctx, double *x, size_t n,
                     const double *analytic) {
    double err2 = 0, ref2 = 0;
    for (size_t i = 0; i < n; i++) {
        double save = x[i];
        double h = 1e-5 * (fabs(save) > 1 ? fabs(save) : 1);
        x[i] = save + h;
        double fp = f(ctx);
        double hp = x[i] - save;
        x[i] = save - h;
        double fm = f(ctx);
        double hm = save - x[i];
        x[i] = save;
        double g = (fp - fm) / (hp + hm);
        err2 += (g - analytic[i]) * (g - analytic[i]);
        ref2 += g * g;
    }
    double rel = sqrt(err2) / (ref2 > 0 ? sqrt(ref2) : 1.0);
    printf("  %-34s n=%-5zu |g|=%-10.3g rel err %.3g\n", what, n, sqrt(ref2), rel);
    TEST_CHECK(&tc, rel < 1e-6 && ref2 > 0, "%s: relative error %g, |g| %g", what, rel,
               sqrt(ref2));
}

static fpsim_model make_model(const char *spec) {
    fpsim_model_config cfg;
    fpsim_model m;
    if (fpsim_model_config_parse(&cfg, spec, 0) || fpsim_model_create(&m, &cfg)) {
        fprintf(stderr, "FAIL: cannot make model '%s': %s\n", spec, fpsim_last_error());
        exit(1);
    }
    /* break the symmetry of the norm weights (init 1) so that their gradients are generic */
    fill(m.params.ln1w, m.param_sizes[FPSIM_PARAM_LN1W], 0.5);
    fill(m.params.ln2w, m.param_sizes[FPSIM_PARAM_LN2W], 0.5);
    fill(m.params.lnfw, m.param_sizes[FPSIM_PARAM_LNFW], 0.5);
    for (size_t i = 0; i < m.param_sizes[FPSIM_PARAM_LN1W]; i++) m.params.ln1w[i] += 1.0;
    for (size_t i = 0; i < m.param_sizes[FPSIM_PARAM_LN2W]; i++) m.params.ln2w[i] += 1.0;
    for (size_t i = 0; i < m.param_sizes[FPSIM_PARAM_LNFW]; i++) m.params.lnfw[i] += 1.0;
    return m;
}

static const char *TINY =
    "layers=2,d=16,heads=4,kv_heads=2,ffn=24,vocab=20,seq=6,batch=2,init_std=0.3,seed=7";

/* ---------------------------------------------------------------------------------------- */
typedef struct rms_ctx {
    double *x, *w, *out, *rstd, *r;
    size_t n, c;
} rms_ctx;
static double rms_obj(void *p) {
    rms_ctx *k = p;
    fpsim_rmsnorm_forward(k->out, k->rstd, k->x, k->w, k->n, k->c, 1e-5, FPSIM_ACT_FP64);
    return dot(k->r, k->out, k->n * k->c);
}
static void check_rmsnorm(void) {
    rms_ctx k = {.n = 5, .c = 12};
    size_t nc = k.n * k.c;
    k.x = malloc(8 * nc), k.out = malloc(8 * nc), k.r = malloc(8 * nc), k.rstd = malloc(8 * k.n);
    k.w = malloc(8 * k.c);
    double *dx = malloc(8 * nc), *dw = malloc(8 * k.c);
    fill(k.x, nc, 2.0), fill(k.w, k.c, 1.5), fill(k.r, nc, 1.0);
    rms_obj(&k);
    fpsim_rmsnorm_backward(dx, dw, k.r, k.x, k.w, k.rstd, k.n, k.c, FPSIM_ACT_FP64);
    fd_check("rmsnorm dx", rms_obj, &k, k.x, nc, dx);
    fd_check("rmsnorm dw", rms_obj, &k, k.w, k.c, dw);
    free(k.x), free(k.out), free(k.r), free(k.rstd), free(k.w), free(dx), free(dw);
}

/* ---------------------------------------------------------------------------------------- */
typedef struct swiglu_ctx {
    double *gu, *h, *r;
    size_t n, f;
} swiglu_ctx;
static double swiglu_obj(void *p) {
    swiglu_ctx *k = p;
    fpsim_swiglu_forward(k->h, k->gu, k->n, k->f, FPSIM_ACT_FP64);
    return dot(k->r, k->h, k->n * k->f);
}
static void check_swiglu(void) {
    swiglu_ctx k = {.n = 4, .f = 10};
    k.gu = malloc(8 * 2 * k.n * k.f), k.h = malloc(8 * k.n * k.f), k.r = malloc(8 * k.n * k.f);
    double *dgu = malloc(8 * 2 * k.n * k.f);
    fill(k.gu, 2 * k.n * k.f, 3.0), fill(k.r, k.n * k.f, 1.0);
    fpsim_swiglu_backward(dgu, k.r, k.gu, k.n, k.f, FPSIM_ACT_FP64);
    fd_check("swiglu dgu", swiglu_obj, &k, k.gu, 2 * k.n * k.f, dgu);
    free(k.gu), free(k.h), free(k.r), free(dgu);
}

/* ---------------------------------------------------------------------------------------- */
typedef struct attn_ctx {
    fpsim_model *m;
    double *qkv, *qkvr, *atty, *att, *r;
} attn_ctx;
static double attn_obj(void *p) {
    attn_ctx *k = p;
    const fpsim_model_config *c = &k->m->config;
    size_t N = fpsim_model_tokens(c), QKV = (size_t)fpsim_model_qkv_dim(c);
    memcpy(k->qkvr, k->qkv, 8 * N * QKV);
    fpsim_rope_forward(k->m, k->qkvr, FPSIM_ACT_FP64);
    fpsim_attention_forward(c, k->atty, k->att, k->qkvr, FPSIM_ACT_FP64);
    return dot(k->r, k->atty, N * (size_t)c->d);
}
static void check_attention(const char *spec, const char *label) {
    fpsim_model m = make_model(spec);
    const fpsim_model_config *c = &m.config;
    size_t N = fpsim_model_tokens(c), QKV = (size_t)fpsim_model_qkv_dim(c), C = (size_t)c->d;
    size_t T = (size_t)c->seq;
    attn_ctx k = {.m = &m};
    k.qkv = malloc(8 * N * QKV), k.qkvr = malloc(8 * N * QKV), k.atty = malloc(8 * N * C);
    k.att = malloc(8 * (size_t)c->batch * c->heads * T * T), k.r = malloc(8 * N * C);
    double *dqkv = malloc(8 * N * QKV), *row = malloc(8 * T);
    fill(k.qkv, N * QKV, 1.5), fill(k.r, N * C, 1.0);
    attn_obj(&k);
    fpsim_attention_backward(c, dqkv, k.r, k.qkvr, k.att, row, FPSIM_ACT_FP64);
    fpsim_rope_backward(&m, dqkv, FPSIM_ACT_FP64);
    fd_check(label, attn_obj, &k, k.qkv, N * QKV, dqkv);
    free(k.qkv), free(k.qkvr), free(k.atty), free(k.att), free(k.r), free(dqkv), free(row);
    fpsim_model_free(&m);
}

/* ---------------------------------------------------------------------------------------- */
typedef struct embed_ctx {
    fpsim_model *m;
    int32_t *tokens;
    double *out, *r;
} embed_ctx;
static double embed_obj(void *p) {
    embed_ctx *k = p;
    fpsim_numerics nx = fpsim_numerics_fp64();
    fpsim_embed_forward(k->m, &nx, k->tokens, k->out);
    return dot(k->r, k->out, fpsim_model_tokens(&k->m->config) * (size_t)k->m->config.d);
}
static void check_embed(void) {
    fpsim_model m = make_model(TINY);
    size_t N = fpsim_model_tokens(&m.config), C = (size_t)m.config.d;
    embed_ctx k = {.m = &m};
    k.tokens = malloc(4 * N), k.out = malloc(8 * N * C), k.r = malloc(8 * N * C);
    for (size_t i = 0; i < N; i++) k.tokens[i] = (int32_t)(i * 7 % 5); /* repeats: scatter-add */
    fill(k.r, N * C, 1.0);
    fpsim_numerics nx = fpsim_numerics_fp64();
    TEST_CHECK(&tc, fpsim_embed_backward(&m, &nx, k.tokens, k.r, &m.grads) == FPSIM_OK, "%s",
               fpsim_last_error());
    fd_check("embedding dwte", embed_obj, &k, m.params.wte, m.param_sizes[FPSIM_PARAM_WTE],
             m.grads.wte);
    free(k.tokens), free(k.out), free(k.r);
    fpsim_model_free(&m);
}

/* ---------------------------------------------------------------------------------------- */
typedef struct head_ctx {
    fpsim_model *m;
    fpsim_head_cache cache;
    double *in;
    int32_t *targets;
    uint8_t *mask;
} head_ctx;
static double head_obj(void *p) {
    head_ctx *k = p;
    fpsim_numerics nx = fpsim_numerics_fp64();
    double loss = NAN;
    fpsim_head_forward(k->m, &nx, k->in, k->targets, k->mask, &k->cache, &loss);
    return loss;
}
static void check_head(void) {
    fpsim_model m = make_model(TINY);
    size_t N = fpsim_model_tokens(&m.config), C = (size_t)m.config.d;
    head_ctx k = {.m = &m};
    fpsim_head_cache_create(&k.cache, &m.config);
    k.in = malloc(8 * N * C), k.targets = malloc(4 * N), k.mask = malloc(N);
    double *din = malloc(8 * N * C);
    fill(k.in, N * C, 2.0);
    for (size_t i = 0; i < N; i++) {
        k.targets[i] = (int32_t)((i * 11 + 3) % (size_t)m.config.vocab);
        k.mask[i] = (i % 3) != 1; /* a third of the tokens outside the loss */
    }
    fpsim_numerics nx = fpsim_numerics_fp64();
    head_obj(&k);
    TEST_CHECK(&tc, fpsim_head_backward(&m, &nx, &k.cache, din, &m.grads) == FPSIM_OK, "%s",
               fpsim_last_error());
    fd_check("head+ce d in", head_obj, &k, k.in, N * C, din);
    fd_check("head+ce d lnfw", head_obj, &k, m.params.lnfw, C, m.grads.lnfw);
    fd_check("head+ce d lmheadw", head_obj, &k, m.params.lmheadw,
             m.param_sizes[FPSIM_PARAM_LMHEADW], m.grads.lmheadw);
    free(k.in), free(k.targets), free(k.mask), free(din);
    fpsim_head_cache_free(&k.cache);
    fpsim_model_free(&m);
}

/* ---------------------------------------------------------------------------------------- */
typedef struct block_ctx {
    fpsim_model *m;
    fpsim_block_cache cache;
    int layer;
    double *in, *out, *r;
} block_ctx;
static double block_obj(void *p) {
    block_ctx *k = p;
    fpsim_numerics nx = fpsim_numerics_fp64();
    fpsim_block_forward(k->m, &nx, k->layer, k->in, k->out, &k->cache);
    return dot(k->r, k->out, fpsim_model_tokens(&k->m->config) * (size_t)k->m->config.d);
}
static void check_block(void) {
    fpsim_model m = make_model(TINY);
    size_t N = fpsim_model_tokens(&m.config), C = (size_t)m.config.d;
    block_ctx k = {.m = &m, .layer = 1};
    fpsim_block_cache_create(&k.cache, &m.config);
    k.in = malloc(8 * N * C), k.out = malloc(8 * N * C), k.r = malloc(8 * N * C);
    double *din = malloc(8 * N * C);
    fill(k.in, N * C, 1.0), fill(k.r, N * C, 1.0);
    fpsim_numerics nx = fpsim_numerics_fp64();
    block_obj(&k);
    TEST_CHECK(&tc, fpsim_block_backward(&m, &nx, 1, k.r, &k.cache, din, &m.grads) == FPSIM_OK,
               "%s", fpsim_last_error());
    fd_check("block d in", block_obj, &k, k.in, N * C, din);
    static const int which[] = {FPSIM_PARAM_LN1W,  FPSIM_PARAM_QKVW,    FPSIM_PARAM_ATTPROJW,
                                FPSIM_PARAM_LN2W,  FPSIM_PARAM_GATEUPW, FPSIM_PARAM_DOWNW};
    for (size_t i = 0; i < sizeof which / sizeof which[0]; i++) {
        double *p, *g;
        size_t n, ng;
        fpsim_model_param_slice(&m, &m.params, which[i], 1, &p, &n);
        fpsim_model_param_slice(&m, &m.grads, which[i], 1, &g, &ng);
        char label[64];
        snprintf(label, sizeof label, "block d %s[1]", fpsim_param_name(which[i]));
        fd_check(label, block_obj, &k, p, n, g);
    }
    free(k.in), free(k.out), free(k.r), free(din);
    fpsim_block_cache_free(&k.cache);
    fpsim_model_free(&m);
}

/* ---------------------------------------------------------------------------------------- */
typedef struct model_ctx {
    fpsim_model *m;
    fpsim_acts acts;
    int32_t *tokens, *targets;
    uint8_t *mask;
} model_ctx;
static double model_obj(void *p) {
    model_ctx *k = p;
    fpsim_numerics nx = fpsim_numerics_fp64();
    double loss = NAN;
    fpsim_model_forward(k->m, &nx, &k->acts, k->tokens, k->targets, k->mask, NULL, NULL, &loss);
    return loss;
}
static void check_model(void) {
    fpsim_model m = make_model(TINY);
    size_t N = fpsim_model_tokens(&m.config);
    model_ctx k = {.m = &m};
    fpsim_acts_create(&k.acts, &m.config);
    k.tokens = malloc(4 * N), k.targets = malloc(4 * N), k.mask = malloc(N);
    for (size_t i = 0; i < N; i++) {
        k.tokens[i] = (int32_t)((i * 5 + 1) % (size_t)m.config.vocab);
        k.targets[i] = (int32_t)((i * 3 + 2) % (size_t)m.config.vocab);
        k.mask[i] = i % 4 != 0;
    }
    fpsim_numerics nx = fpsim_numerics_fp64();
    model_obj(&k);
    TEST_CHECK(&tc, fpsim_model_backward(&m, &nx, &k.acts, NULL, NULL) == FPSIM_OK, "%s",
               fpsim_last_error());
    for (int w = 0; w < FPSIM_PARAM_COUNT; w++) {
        double *p, *g;
        size_t n, ng;
        fpsim_model_param_slice(&m, &m.params, w, 0, &p, &n);
        fpsim_model_param_slice(&m, &m.grads, w, 0, &g, &ng);
        char label[64];
        snprintf(label, sizeof label, "model d %s%s", fpsim_param_name(w),
                 (w == FPSIM_PARAM_WTE || w == FPSIM_PARAM_LNFW || w == FPSIM_PARAM_LMHEADW)
                     ? ""
                     : "[0]");
        fd_check(label, model_obj, &k, p, n, g);
    }
    free(k.tokens), free(k.targets), free(k.mask);
    fpsim_acts_free(&k.acts);
    fpsim_model_free(&m);
}

int main(void) {
    printf("finite-difference gradient checks (FP64 engine)\n");
    check_rmsnorm();
    check_swiglu();
    check_attention("layers=1,d=16,heads=4,kv_heads=4,ffn=8,vocab=16,seq=7,batch=2,init_std=0.3",
                    "attention+rope MHA (4/4) dqkv");
    check_attention("layers=1,d=16,heads=4,kv_heads=2,ffn=8,vocab=16,seq=7,batch=2,init_std=0.3",
                    "attention+rope GQA (4/2) dqkv");
    check_attention("layers=1,d=24,heads=4,kv_heads=1,ffn=8,vocab=16,seq=5,batch=2,init_std=0.3",
                    "attention+rope MQA (4/1) dqkv");
    check_embed();
    check_head();
    check_block();
    check_model();
    return test_summary(&tc);
}
