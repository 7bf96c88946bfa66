/* adamw.c: AdamW (Loshchilov & Hutter 2019) in the form of torch.optim.AdamW (PyTorch 2.x,
 * non-fused): decoupled weight decay p -= lr*wd*p, bias-corrected moments,
 * p -= lr * mhat / (sqrt(vhat) + eps). Arithmetic in double; the parameters and both moments
 * are then rounded to float32 (RNE), which is what FP32 master weights and FP32 optimizer state
 * hold. Weight decay applies to the matrices (embedding, projections, head), not to the norm
 * weights. */
#include <math.h>

#include "fpsim_model.h"

fpsim_adamw_config fpsim_adamw_config_default(void) {
    fpsim_adamw_config c = {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8,
                            .weight_decay = 0.1, .grad_clip = 1.0};
    return c;
}

static int decays(int which) {
    return which != FPSIM_PARAM_LN1W && which != FPSIM_PARAM_LN2W && which != FPSIM_PARAM_LNFW;
}

fpsim_status fpsim_adamw_step(fpsim_model *m, const fpsim_adamw_config *o, double *grad_norm) {
    if (!(o->lr >= 0) || !(o->beta1 >= 0 && o->beta1 < 1) || !(o->beta2 >= 0 && o->beta2 < 1) ||
        !(o->eps > 0) || !(o->weight_decay >= 0) || !(o->grad_clip >= 0))
        return fpsim_fail(FPSIM_EINVAL, "adamw: a hyperparameter is out of range");
    double ss = 0.0;
    for (size_t i = 0; i < m->num_params; i++) ss += m->grads_memory[i] * m->grads_memory[i];
    double norm = sqrt(ss);
    if (grad_norm) *grad_norm = norm;
    if (!isfinite(norm))
        return fpsim_fail(FPSIM_EDATA, "adamw: the gradient is not finite (norm %g)", norm);
    double gscale = (o->grad_clip > 0 && norm > o->grad_clip) ? o->grad_clip / norm : 1.0;

    long t = m->step + 1;
    double bc1 = 1.0 - pow(o->beta1, (double)t), bc2 = 1.0 - pow(o->beta2, (double)t);
    size_t offset = 0;
    for (int which = 0; which < FPSIM_PARAM_COUNT; which++) {
        double wd = decays(which) ? o->weight_decay : 0.0;
        for (size_t i = offset; i < offset + m->param_sizes[which]; i++) {
            double g = m->grads_memory[i] * gscale;
            double mom = o->beta1 * m->m_memory[i] + (1.0 - o->beta1) * g;
            double var = o->beta2 * m->v_memory[i] + (1.0 - o->beta2) * g * g;
            mom = (double)(float)mom;
            var = (double)(float)var;
            double p = m->params_memory[i] * (1.0 - o->lr * wd);
            p -= o->lr * (mom / bc1) / (sqrt(var / bc2) + o->eps);
            m->m_memory[i] = mom;
            m->v_memory[i] = var;
            m->params_memory[i] = (double)(float)p;
        }
        offset += m->param_sizes[which];
    }
    m->step = t;
    return FPSIM_OK;
}
