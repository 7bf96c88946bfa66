/* model_run.c: the whole model, forward and backward, chaining the layers and reporting the
 * canonical comparison points to an observer. */
#include <string.h>

#include "fpsim_model.h"

static const char *const point_names[FPSIM_POINT_COUNT] = {
    "embed", "block_out", "final_norm", "logits", "grad_logits", "grad_stream"};

const char *fpsim_point_name(int point) {
    return point >= 0 && point < FPSIM_POINT_COUNT ? point_names[point] : NULL;
}

static fpsim_status observe(fpsim_model_observer fn, void *ctx, fpsim_point point, int layer,
                            const double *data, size_t rows, size_t cols) {
    if (!fn) return FPSIM_OK;
    fpsim_clear_error();
    fpsim_status st = fn(ctx, point, layer, data, rows, cols);
    if (st && !fpsim_last_error()[0])
        return fpsim_fail(st, "model: stopped by the observer at %s of layer %d",
                          point_names[point], layer);
    return st;
}

static fpsim_status same_config(const fpsim_model *m, const fpsim_acts *a) {
    if (memcmp(&m->config, &a->config, sizeof m->config) != 0)
        return fpsim_fail(FPSIM_EINVAL, "model: activations were made for another config");
    return FPSIM_OK;
}

fpsim_status fpsim_model_forward(const fpsim_model *m, const fpsim_numerics *nx, fpsim_acts *a,
                                 const int32_t *tokens, const int32_t *targets,
                                 const uint8_t *mask, fpsim_model_observer observer, void *ctx,
                                 double *loss) {
    fpsim_status st = same_config(m, a);
    if (st) return st;
    const fpsim_model_config *c = &m->config;
    size_t N = fpsim_model_tokens(c), C = (size_t)c->d, L = (size_t)c->layers;
    if ((st = fpsim_embed_forward(m, nx, tokens, a->resid))) return st;
    memcpy(a->tokens, tokens, sizeof(int32_t) * N);
    if ((st = observe(observer, ctx, FPSIM_POINT_EMBED, -1, a->resid, N, C))) return st;
    for (size_t l = 0; l < L; l++) {
        double *in = a->resid + l * N * C, *out = in + N * C;
        if ((st = fpsim_block_forward(m, nx, (int)l, in, out, &a->blocks[l]))) return st;
        if ((st = observe(observer, ctx, FPSIM_POINT_BLOCK_OUT, (int)l, out, N, C))) return st;
    }
    if ((st = fpsim_head_forward(m, nx, a->resid + L * N * C, targets, mask, &a->head,
                                 &a->loss)))
        return st;
    if ((st = observe(observer, ctx, FPSIM_POINT_FINAL_NORM, (int)L, a->head.lnf, N, C)))
        return st;
    if ((st = observe(observer, ctx, FPSIM_POINT_LOGITS, (int)L, a->head.logits, N,
                      (size_t)c->vocab)))
        return st;
    if (loss) *loss = a->loss;
    return FPSIM_OK;
}

fpsim_status fpsim_model_backward(fpsim_model *m, const fpsim_numerics *nx, fpsim_acts *a,
                                  fpsim_model_observer observer, void *ctx) {
    fpsim_status st = same_config(m, a);
    if (st) return st;
    const fpsim_model_config *c = &m->config;
    size_t N = fpsim_model_tokens(c), C = (size_t)c->d, L = (size_t)c->layers;
    double *dfinal = a->dresid + L * N * C;
    if ((st = fpsim_head_backward(m, nx, &a->head, dfinal, &m->grads))) return st;
    if ((st = observe(observer, ctx, FPSIM_POINT_GRAD_LOGITS, (int)L, a->head.dlogits, N,
                      (size_t)c->vocab)))
        return st;
    if ((st = observe(observer, ctx, FPSIM_POINT_GRAD_STREAM, (int)L, dfinal, N, C))) return st;
    for (size_t l = L; l-- > 0;) {
        double *dout = a->dresid + (l + 1) * N * C, *din = a->dresid + l * N * C;
        if ((st = fpsim_block_backward(m, nx, (int)l, dout, &a->blocks[l], din, &m->grads)))
            return st;
        if ((st = observe(observer, ctx, FPSIM_POINT_GRAD_STREAM, (int)l, din, N, C))) return st;
    }
    return fpsim_embed_backward(m, nx, a->tokens, a->dresid, &m->grads);
}
