/* layer_swiglu.c: the SwiGLU gate of the Llama MLP (Shazeer 2020):
 * h = silu(gate) * up, silu(x) = x * sigmoid(x), gate and up side by side in each gu row. */
#include <math.h>

#include "fpsim_model.h"

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

void fpsim_swiglu_forward(double *h, const double *gu, size_t n, size_t f, int act_round) {
    for (size_t i = 0; i < n; i++) {
        const double *gate = gu + i * 2 * f, *up = gate + f;
        double *hi = h + i * f;
        for (size_t j = 0; j < f; j++) hi[j] = gate[j] * sigmoid(gate[j]) * up[j];
    }
    fpsim_act_round_array(h, n * f, act_round);
}

/* d/dg [g sigmoid(g)] = sigmoid(g) (1 + g (1 - sigmoid(g))). */
void fpsim_swiglu_backward(double *dgu, const double *dh, const double *gu, size_t n, size_t f,
                           int act_round) {
    for (size_t i = 0; i < n; i++) {
        const double *gate = gu + i * 2 * f, *up = gate + f, *dhi = dh + i * f;
        double *dgate = dgu + i * 2 * f, *dup = dgate + f;
        for (size_t j = 0; j < f; j++) {
            double s = sigmoid(gate[j]);
            double silu = gate[j] * s;
            dgate[j] = dhi[j] * up[j] * s * (1.0 + gate[j] * (1.0 - s));
            dup[j] = dhi[j] * silu;
        }
    }
    fpsim_act_round_array(dgu, n * 2 * f, act_round);
}
