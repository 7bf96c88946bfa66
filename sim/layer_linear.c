/* layer_linear.c: the three GEMMs of a linear layer y = x w^T, handed to the engine with the
 * operand convention of fpsim_numerics.h (x (n, in) activation, w (out, in) weight). */
#include "fpsim_model.h"

fpsim_status fpsim_linear_forward(const fpsim_numerics *nx, int layer, fpsim_site site,
                                  double *y, const double *x, const double *w, size_t n,
                                  size_t in, size_t out) {
    /* FPROP: y (n x out) = x (n x in) * w^T; K = in */
    fpsim_gemm_call call = {
        .layer = layer, .site = site, .pass = FPSIM_PASS_FPROP, .M = n, .N = out, .K = in,
        .a = {x, in, 0, FPSIM_ROLE_ACT}, .b = {w, in, 1, FPSIM_ROLE_WEIGHT},
        .c = y, .ldc = out, .accumulate = 0,
    };
    return nx->gemm(nx->ctx, &call);
}

fpsim_status fpsim_linear_backward(const fpsim_numerics *nx, int layer, fpsim_site site,
                                   double *dx, double *dw, const double *dy, const double *x,
                                   const double *w, size_t n, size_t in, size_t out) {
    fpsim_status st;
    if (dx) {
        /* DGRAD: dx (n x in) = dy (n x out) * w (out x in); K = out */
        fpsim_gemm_call call = {
            .layer = layer, .site = site, .pass = FPSIM_PASS_DGRAD, .M = n, .N = in, .K = out,
            .a = {dy, out, 0, FPSIM_ROLE_GRAD}, .b = {w, in, 0, FPSIM_ROLE_WEIGHT},
            .c = dx, .ldc = in, .accumulate = 0,
        };
        if ((st = nx->gemm(nx->ctx, &call))) return st;
    }
    /* WGRAD: dw (out x in) = dy^T (out x n) * x (n x in); K = n tokens */
    fpsim_gemm_call call = {
        .layer = layer, .site = site, .pass = FPSIM_PASS_WGRAD, .M = out, .N = in, .K = n,
        .a = {dy, out, 1, FPSIM_ROLE_GRAD}, .b = {x, in, 0, FPSIM_ROLE_ACT},
        .c = dw, .ldc = in, .accumulate = 0,
    };
    return nx->gemm(nx->ctx, &call);
}
