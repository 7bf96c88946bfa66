/* model_pretrain.c: a fixed "pretrained" starting point: FP32 training steps on the built-in task,
 * so that replays and mismatch runs start from a model that has learned something rather than
 * from random initialization. */
#include <stdlib.h>

#include "fpsim_task.h"

fpsim_status fpsim_model_pretrain(fpsim_model *m, const fpsim_task_config *t, int steps,
                                  const fpsim_adamw_config *opt, double *final_loss) {
    if (steps < 0) return fpsim_fail(FPSIM_EINVAL, "pretrain: steps %d < 0", steps);
    size_t N = fpsim_model_tokens(&m->config);
    fpsim_acts acts;
    fpsim_status st = fpsim_acts_create(&acts, &m->config);
    if (st) return st;
    int32_t *inputs = malloc(sizeof(int32_t) * N), *targets = malloc(sizeof(int32_t) * N);
    uint8_t *mask = malloc(N);
    if (!inputs || !targets || !mask) {
        st = fpsim_fail(FPSIM_ENOMEM, "pretrain: no memory for a batch of %zu tokens", N);
        goto done;
    }
    fpsim_numerics nx = fpsim_numerics_fp32();
    double loss = 0.0;
    for (int s = 0; s < steps; s++) {
        /* batch m->step: a second call continues the data stream instead of repeating it */
        if ((st = fpsim_task_batch(t, &m->config, (uint64_t)m->step, inputs, targets, mask)))
            goto done;
        if ((st = fpsim_model_forward(m, &nx, &acts, inputs, targets, mask, NULL, NULL, &loss)))
            goto done;
        if ((st = fpsim_model_backward(m, &nx, &acts, NULL, NULL))) goto done;
        if ((st = fpsim_adamw_step(m, opt, NULL))) goto done;
    }
    if (final_loss) *final_loss = loss;
done:
    free(inputs), free(targets), free(mask);
    fpsim_acts_free(&acts);
    return st;
}
