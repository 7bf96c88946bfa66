/* layer_block.c: one Llama block, pre-norm, two residual branches:
 *   res2 = in + attn(RMSNorm1(in)),   out = res2 + mlp(RMSNorm2(res2)). */
#include <string.h>

#include "fpsim_model.h"

/* One layer's slices of the parameter (or gradient) tensors. */
typedef struct block_grads {
    double *ln1w, *qkvw, *attprojw, *ln2w, *gateupw, *downw;
} block_grads;

/* Layer l's slices of a parameter-shaped slab. */
static block_grads block_slices(const fpsim_model_config *c, const fpsim_params *p, int l) {
    size_t C = (size_t)c->d, F = (size_t)c->ffn, QKV = (size_t)fpsim_model_qkv_dim(c);
    size_t L = (size_t)l;
    block_grads s = {
        p->ln1w + L * C,         p->qkvw + L * QKV * C,      p->attprojw + L * C * C,
        p->ln2w + L * C,         p->gateupw + L * 2 * F * C, p->downw + L * C * F,
    };
    return s;
}

static void add_rows(double *out, const double *a, const double *b, size_t n, int act_round) {
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
    fpsim_act_round_array(out, n, act_round);
}

static fpsim_status check_layer(const fpsim_model *m, int layer) {
    if (layer < 0 || layer >= m->config.layers)
        return fpsim_fail(FPSIM_EINVAL, "block: layer %d out of range [0, %d)", layer,
                          m->config.layers);
    return FPSIM_OK;
}

fpsim_status fpsim_block_forward(const fpsim_model *m, const fpsim_numerics *nx, int layer,
                                 const double *in, double *out, fpsim_block_cache *k) {
    fpsim_status st = check_layer(m, layer);
    if (st) return st;
    const fpsim_model_config *c = &m->config;
    size_t N = fpsim_model_tokens(c), C = (size_t)c->d, F = (size_t)c->ffn;
    size_t QKV = (size_t)fpsim_model_qkv_dim(c);
    int ar = fpsim_numerics_act_round(nx, layer);
    block_grads w = block_slices(c, &m->params, layer);
    if (k->in != in) memcpy(k->in, in, sizeof(double) * N * C);

    /* attention branch */
    fpsim_rmsnorm_forward(k->ln1, k->rstd1, k->in, w.ln1w, N, C, c->norm_eps, ar);
    if ((st = fpsim_linear_forward(nx, layer, FPSIM_SITE_QKV, k->qkv, k->ln1, w.qkvw, N, C, QKV)))
        return st;
    memcpy(k->qkvr, k->qkv, sizeof(double) * N * QKV);
    fpsim_rope_forward(m, k->qkvr, ar);
    fpsim_attention_forward(c, k->atty, k->att, k->qkvr, ar);
    if ((st = fpsim_linear_forward(nx, layer, FPSIM_SITE_ATTN_OUT, k->attproj, k->atty,
                                   w.attprojw, N, C, C)))
        return st;
    add_rows(k->res2, k->in, k->attproj, N * C, ar);

    /* MLP branch */
    fpsim_rmsnorm_forward(k->ln2, k->rstd2, k->res2, w.ln2w, N, C, c->norm_eps, ar);
    if ((st = fpsim_linear_forward(nx, layer, FPSIM_SITE_GATE_UP, k->gu, k->ln2, w.gateupw, N, C,
                                   2 * F)))
        return st;
    fpsim_swiglu_forward(k->h, k->gu, N, F, ar);
    if ((st = fpsim_linear_forward(nx, layer, FPSIM_SITE_DOWN, k->down, k->h, w.downw, N, F, C)))
        return st;
    add_rows(out, k->res2, k->down, N * C, ar);
    return FPSIM_OK;
}

/* The forward in reverse. Scratch: d_nc, d_nc2, d_nc3 (N, C), d_nf (N, F), d_n2f (N, 2F),
 * d_qkv (N, QKV), d_row (T). d_nc3 holds dres2 = dout + (MLP branch's gradient) throughout. */
fpsim_status fpsim_block_backward(const fpsim_model *m, const fpsim_numerics *nx, int layer,
                                  const double *dout, fpsim_block_cache *k, double *din,
                                  const fpsim_params *grads) {
    fpsim_status st = check_layer(m, layer);
    if (st) return st;
    const fpsim_model_config *c = &m->config;
    size_t N = fpsim_model_tokens(c), C = (size_t)c->d, F = (size_t)c->ffn;
    size_t QKV = (size_t)fpsim_model_qkv_dim(c);
    int ar = fpsim_numerics_act_round(nx, layer);
    block_grads w = block_slices(c, &m->params, layer);
    block_grads g = block_slices(c, grads, layer);

    /* MLP branch: out = res2 + down(swiglu(gate_up(rmsnorm2(res2)))) */
    if ((st = fpsim_linear_backward(nx, layer, FPSIM_SITE_DOWN, k->d_nf, g.downw, dout, k->h,
                                    w.downw, N, F, C)))
        return st;
    fpsim_swiglu_backward(k->d_n2f, k->d_nf, k->gu, N, F, ar);
    if ((st = fpsim_linear_backward(nx, layer, FPSIM_SITE_GATE_UP, k->d_nc, g.gateupw, k->d_n2f,
                                    k->ln2, w.gateupw, N, C, 2 * F)))
        return st;
    fpsim_rmsnorm_backward(k->d_nc2, g.ln2w, k->d_nc, k->res2, w.ln2w, k->rstd2, N, C, ar);
    add_rows(k->d_nc3, dout, k->d_nc2, N * C, ar); /* dres2 */

    /* attention branch: res2 = in + attn_out(attention(rope(qkv(rmsnorm1(in))))) */
    if ((st = fpsim_linear_backward(nx, layer, FPSIM_SITE_ATTN_OUT, k->d_nc, g.attprojw,
                                    k->d_nc3, k->atty, w.attprojw, N, C, C)))
        return st;
    fpsim_attention_backward(c, k->d_qkv, k->d_nc, k->qkvr, k->att, k->d_row, ar);
    fpsim_rope_backward(m, k->d_qkv, ar);
    if ((st = fpsim_linear_backward(nx, layer, FPSIM_SITE_QKV, k->d_nc, g.qkvw, k->d_qkv, k->ln1,
                                    w.qkvw, N, C, QKV)))
        return st;
    fpsim_rmsnorm_backward(k->d_nc2, g.ln1w, k->d_nc, k->in, w.ln1w, k->rstd1, N, C, ar);
    add_rows(din, k->d_nc3, k->d_nc2, N * C, ar);
    return FPSIM_OK;
}
