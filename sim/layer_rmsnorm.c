/* layer_rmsnorm.c: RMSNorm (Zhang & Sennrich 2019) as in Hugging Face Llama:
 * out = w * (x * rstd), rstd = 1 / sqrt(mean(x^2) + eps), per token row of c values. */
#include <math.h>
#include <string.h>

#include "fpsim_model.h"

void fpsim_rmsnorm_forward(double *out, double *rstd, const double *x, const double *w, size_t n,
                           size_t c, double eps, int act_round) {
    for (size_t i = 0; i < n; i++) {
        const double *xi = x + i * c;
        double ss = 0.0;
        for (size_t j = 0; j < c; j++) ss += xi[j] * xi[j];
        double r = 1.0 / sqrt(ss / (double)c + eps);
        rstd[i] = r;
        double *oi = out + i * c;
        for (size_t j = 0; j < c; j++) oi[j] = w[j] * (xi[j] * r);
    }
    fpsim_act_round_array(out, n * c, act_round);
}

/* With xhat = x * rstd and g = dout * w:
 *   dw = sum over rows of dout * xhat
 *   dx = rstd * (g - xhat * mean(g * xhat))     (the derivative of rstd gives the second term). */
void fpsim_rmsnorm_backward(double *dx, double *dw, const double *dout, const double *x,
                            const double *w, const double *rstd, size_t n, size_t c,
                            int act_round) {
    memset(dw, 0, sizeof(double) * c);
    for (size_t i = 0; i < n; i++) {
        const double *xi = x + i * c, *di = dout + i * c;
        double r = rstd[i];
        double dot = 0.0;
        for (size_t j = 0; j < c; j++) {
            double xhat = xi[j] * r;
            dot += di[j] * w[j] * xhat;
            dw[j] += di[j] * xhat;
        }
        double mean = dot / (double)c;
        double *dxi = dx + i * c;
        for (size_t j = 0; j < c; j++) dxi[j] = r * (di[j] * w[j] - xi[j] * r * mean);
    }
    fpsim_act_round_array(dx, n * c, act_round);
    fpsim_act_round_array(dw, c, act_round);
}
