/* layer_head.c: final RMSNorm, untied LM head and softmax cross-entropy over masked tokens. */
#include <math.h>
#include <string.h>

#include "fpsim_model.h"

/* loss_i = log(sum_j exp(z_j - max)) - (z_target - max): the log-sum-exp form, which stays
 * accurate when p(target) is tiny (computing -log(probs[target]) would lose it). */
void fpsim_crossentropy_forward(double *probs, double *losses, const double *logits,
                                const int32_t *targets, const uint8_t *mask, size_t n, size_t v,
                                int act_round) {
    for (size_t i = 0; i < n; i++) {
        const double *z = logits + i * v;
        double *p = probs + i * v;
        double maxv = -INFINITY;
        for (size_t j = 0; j < v; j++)
            if (z[j] > maxv) maxv = z[j];
        double sum = 0.0;
        for (size_t j = 0; j < v; j++) {
            p[j] = exp(z[j] - maxv);
            sum += p[j];
        }
        for (size_t j = 0; j < v; j++) p[j] /= sum;
        int counted = mask ? mask[i] != 0 : 1;
        losses[i] = counted ? log(sum) - (z[targets[i]] - maxv) : 0.0;
    }
    fpsim_act_round_array(probs, n * v, act_round);
    fpsim_act_round_array(losses, n, act_round);
}

void fpsim_crossentropy_backward(double *dlogits, const double *probs, const int32_t *targets,
                                 const uint8_t *mask, double count, size_t n, size_t v,
                                 int act_round) {
    double inv = count > 0 ? 1.0 / count : 0.0;
    for (size_t i = 0; i < n; i++) {
        double *d = dlogits + i * v;
        const double *p = probs + i * v;
        int counted = mask ? mask[i] != 0 : 1;
        if (!counted || count <= 0) {
            memset(d, 0, sizeof(double) * v);
            continue;
        }
        for (size_t j = 0; j < v; j++) d[j] = p[j] * inv;
        d[targets[i]] = (p[targets[i]] - 1.0) * inv;
    }
    fpsim_act_round_array(dlogits, n * v, act_round);
}

fpsim_status fpsim_head_forward(const fpsim_model *m, const fpsim_numerics *nx, const double *in,
                                const int32_t *targets, const uint8_t *mask,
                                fpsim_head_cache *cache, double *loss) {
    const fpsim_model_config *c = &m->config;
    size_t n = fpsim_model_tokens(c), C = (size_t)c->d, V = (size_t)c->vocab;
    int layer = c->layers, ar = fpsim_numerics_act_round(nx, layer);
    for (size_t i = 0; i < n; i++)
        if (targets[i] < 0 || targets[i] >= c->vocab)
            return fpsim_fail(FPSIM_EDATA, "target %zu is %d, outside the vocabulary [0, %d)", i,
                              (int)targets[i], c->vocab);
    if (cache->in != in) memcpy(cache->in, in, sizeof(double) * n * C);
    memcpy(cache->targets, targets, sizeof(int32_t) * n);
    double count = 0;
    for (size_t i = 0; i < n; i++) {
        cache->mask[i] = mask ? (mask[i] != 0) : 1;
        count += cache->mask[i];
    }
    cache->count = count;

    fpsim_rmsnorm_forward(cache->lnf, cache->rstd, cache->in, m->params.lnfw, n, C,
                          c->norm_eps, ar);
    fpsim_status st = fpsim_linear_forward(nx, layer, FPSIM_SITE_LM_HEAD, cache->logits,
                                           cache->lnf, m->params.lmheadw, n, C, V);
    if (st) return st;
    fpsim_crossentropy_forward(cache->probs, cache->losses, cache->logits, cache->targets,
                               cache->mask, n, V, ar);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) sum += cache->losses[i];
    double mean = count > 0 ? sum / count : 0.0;
    fpsim_act_round_array(&mean, 1, ar);
    if (loss) *loss = mean;
    return FPSIM_OK;
}

fpsim_status fpsim_head_backward(const fpsim_model *m, const fpsim_numerics *nx,
                                 fpsim_head_cache *cache, double *din, const fpsim_params *grads) {
    const fpsim_model_config *c = &m->config;
    size_t n = fpsim_model_tokens(c), C = (size_t)c->d, V = (size_t)c->vocab;
    int layer = c->layers, ar = fpsim_numerics_act_round(nx, layer);
    fpsim_crossentropy_backward(cache->dlogits, cache->probs, cache->targets, cache->mask,
                                cache->count, n, V, ar);
    fpsim_status st = fpsim_linear_backward(nx, layer, FPSIM_SITE_LM_HEAD, cache->dlnf,
                                            grads->lmheadw, cache->dlogits, cache->lnf,
                                            m->params.lmheadw, n, C, V);
    if (st) return st;
    fpsim_rmsnorm_backward(din, grads->lnfw, cache->dlnf, cache->in, m->params.lnfw, cache->rstd,
                           n, C, ar);
    return FPSIM_OK;
}
