/* layer_embed.c: token embedding lookup and its gradient (a scatter-add into wte rows). */
#include <string.h>

#include "fpsim_model.h"

static fpsim_status check_tokens(const int32_t *tokens, size_t n, int vocab, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= vocab)
            return fpsim_fail(FPSIM_EDATA, "%s %zu is %d, outside the vocabulary [0, %d)", what,
                              i, (int)tokens[i], vocab);
    return FPSIM_OK;
}

fpsim_status fpsim_embed_forward(const fpsim_model *m, const fpsim_numerics *nx,
                                 const int32_t *tokens, double *out) {
    const fpsim_model_config *c = &m->config;
    size_t n = fpsim_model_tokens(c), C = (size_t)c->d;
    fpsim_status st = check_tokens(tokens, n, c->vocab, "token");
    if (st) return st;
    for (size_t i = 0; i < n; i++)
        memcpy(out + i * C, m->params.wte + (size_t)tokens[i] * C, sizeof(double) * C);
    fpsim_act_round_array(out, n * C, fpsim_numerics_act_round(nx, -1));
    return FPSIM_OK;
}

/* Rows are added in token order (deterministic), in double, and rounded once at the end. */
fpsim_status fpsim_embed_backward(const fpsim_model *m, const fpsim_numerics *nx,
                                  const int32_t *tokens, const double *dout,
                                  const fpsim_params *grads) {
    const fpsim_model_config *c = &m->config;
    size_t n = fpsim_model_tokens(c), C = (size_t)c->d;
    fpsim_status st = check_tokens(tokens, n, c->vocab, "token");
    if (st) return st;
    memset(grads->wte, 0, sizeof(double) * (size_t)c->vocab * C);
    for (size_t i = 0; i < n; i++) {
        double *row = grads->wte + (size_t)tokens[i] * C;
        const double *d = dout + i * C;
        for (size_t j = 0; j < C; j++) row[j] += d[j];
    }
    fpsim_act_round_array(grads->wte, (size_t)c->vocab * C, fpsim_numerics_act_round(nx, -1));
    return FPSIM_OK;
}
