/* layer_attention.c: RoPE and causal softmax attention with grouped-query heads.
 *
 * Row layout of qkv / qkvr (QKV = (H + 2 KVH) * hd values per token):
 *   [ q head 0 .. q head H-1 | k head 0 .. k head KVH-1 | v head 0 .. v head KVH-1 ]
 * Query head h reads kv head h / (H / KVH). Scores are (q . k) * (1 / sqrt(hd)), the softmax
 * subtracts the row maximum, and everything inside a row is double; the probabilities and the
 * output are the op's outputs (rounded to act_round), as in an unfused eager attention. */
#include <math.h>
#include <string.h>

#include "fpsim_model.h"

/* RoPE, "rotate half" pairing (i, i + hd/2), as Hugging Face transformers' Llama
 * (apply_rotary_pos_emb): x'[i] = x[i] cos - x[i+h] sin, x'[i+h] = x[i+h] cos + x[i] sin.
 * sign = -1 applies the inverse (transpose) rotation, which is the backward. */
static void rope_apply(const fpsim_model *m, double *qkv, int sign, int act_round) {
    const fpsim_model_config *c = &m->config;
    int hd = fpsim_model_head_dim(c), half = hd / 2;
    size_t qkv_dim = (size_t)fpsim_model_qkv_dim(c);
    int rotated_heads = c->heads + c->kv_heads; /* q heads then k heads, contiguous */
    for (int b = 0; b < c->batch; b++) {
        for (int t = 0; t < c->seq; t++) {
            double *row = qkv + ((size_t)b * c->seq + t) * qkv_dim;
            const double *cs = m->rope_cos + (size_t)t * half, *sn = m->rope_sin + (size_t)t * half;
            for (int h = 0; h < rotated_heads; h++) {
                double *x = row + (size_t)h * hd;
                for (int i = 0; i < half; i++) {
                    double x1 = x[i], x2 = x[i + half], s = sign * sn[i];
                    x[i] = x1 * cs[i] - x2 * s;
                    x[i + half] = x2 * cs[i] + x1 * s;
                }
            }
            fpsim_act_round_array(row, (size_t)rotated_heads * hd, act_round);
        }
    }
}

void fpsim_rope_forward(const fpsim_model *m, double *qkv, int act_round) {
    rope_apply(m, qkv, +1, act_round);
}

void fpsim_rope_backward(const fpsim_model *m, double *dqkv, int act_round) {
    rope_apply(m, dqkv, -1, act_round);
}

void fpsim_attention_row(double *out, double *probs, const double *q, const double *k_rows,
                         const double *v_rows, size_t stride, int t, int head_dim,
                         int act_round) {
    double scale = 1.0 / sqrt((double)head_dim);
    double maxv = -INFINITY;
    for (int s = 0; s <= t; s++) {
        const double *k = k_rows + (size_t)s * stride;
        double dot = 0.0;
        for (int i = 0; i < head_dim; i++) dot += q[i] * k[i];
        probs[s] = dot * scale;
        if (probs[s] > maxv) maxv = probs[s];
    }
    double sum = 0.0;
    for (int s = 0; s <= t; s++) {
        probs[s] = exp(probs[s] - maxv);
        sum += probs[s];
    }
    for (int s = 0; s <= t; s++) probs[s] /= sum;
    fpsim_act_round_array(probs, (size_t)t + 1, act_round);
    for (int i = 0; i < head_dim; i++) out[i] = 0.0;
    for (int s = 0; s <= t; s++) {
        const double *v = v_rows + (size_t)s * stride;
        for (int i = 0; i < head_dim; i++) out[i] += probs[s] * v[i];
    }
    fpsim_act_round_array(out, (size_t)head_dim, act_round);
}

typedef struct head_view {
    size_t qkv_dim, c, T;
    int hd, group;
    size_t k_off, v_off; /* column of k head 0 and v head 0 in a qkv row */
} head_view;

static head_view head_view_of(const fpsim_model_config *cfg) {
    head_view v;
    v.qkv_dim = (size_t)fpsim_model_qkv_dim(cfg);
    v.c = (size_t)cfg->d;
    v.T = (size_t)cfg->seq;
    v.hd = fpsim_model_head_dim(cfg);
    v.group = cfg->heads / cfg->kv_heads;
    v.k_off = (size_t)cfg->heads * v.hd;
    v.v_off = v.k_off + (size_t)cfg->kv_heads * v.hd;
    return v;
}

void fpsim_attention_forward(const fpsim_model_config *cfg, double *atty, double *att,
                             const double *qkvr, int act_round) {
    head_view hv = head_view_of(cfg);
    for (int b = 0; b < cfg->batch; b++) {
        const double *seq0 = qkvr + (size_t)b * hv.T * hv.qkv_dim;
        for (int h = 0; h < cfg->heads; h++) {
            size_t g = (size_t)(h / hv.group);
            const double *k_rows = seq0 + hv.k_off + g * hv.hd;
            const double *v_rows = seq0 + hv.v_off + g * hv.hd;
            for (int t = 0; t < cfg->seq; t++) {
                const double *q = seq0 + (size_t)t * hv.qkv_dim + (size_t)h * hv.hd;
                double *probs = att + (((size_t)b * cfg->heads + h) * hv.T + t) * hv.T;
                double *out = atty + ((size_t)b * hv.T + t) * hv.c + (size_t)h * hv.hd;
                fpsim_attention_row(out, probs, q, k_rows, v_rows, hv.qkv_dim, t, hv.hd,
                                    act_round);
                for (size_t s = (size_t)t + 1; s < hv.T; s++) probs[s] = 0.0;
            }
        }
    }
}

/* For one query row with probabilities p (t+1 entries) and output gradient dout:
 *   dp_s = dout . v_s,  dv_s += p_s dout,
 *   ds_s = p_s (dp_s - sum_r p_r dp_r)           (softmax backward),
 *   dq  += scale sum_s ds_s k_s,   dk_s += scale ds_s q.
 * k and v gradients of a kv head sum over its query heads and over t, in loop order (b, h, t). */
void fpsim_attention_backward(const fpsim_model_config *cfg, double *dqkvr, const double *datty,
                              const double *qkvr, const double *att, double *row,
                              int act_round) {
    head_view hv = head_view_of(cfg);
    double scale = 1.0 / sqrt((double)hv.hd);
    size_t n = fpsim_model_tokens(cfg);
    memset(dqkvr, 0, sizeof(double) * n * hv.qkv_dim);
    for (int b = 0; b < cfg->batch; b++) {
        const double *seq0 = qkvr + (size_t)b * hv.T * hv.qkv_dim;
        double *dseq0 = dqkvr + (size_t)b * hv.T * hv.qkv_dim;
        for (int h = 0; h < cfg->heads; h++) {
            size_t g = (size_t)(h / hv.group);
            for (int t = 0; t < cfg->seq; t++) {
                const double *q = seq0 + (size_t)t * hv.qkv_dim + (size_t)h * hv.hd;
                double *dq = dseq0 + (size_t)t * hv.qkv_dim + (size_t)h * hv.hd;
                const double *p = att + (((size_t)b * cfg->heads + h) * hv.T + t) * hv.T;
                const double *dout = datty + ((size_t)b * hv.T + t) * hv.c + (size_t)h * hv.hd;
                double pdp = 0.0;
                for (int s = 0; s <= t; s++) {
                    const double *v = seq0 + (size_t)s * hv.qkv_dim + hv.v_off + g * hv.hd;
                    double *dv = dseq0 + (size_t)s * hv.qkv_dim + hv.v_off + g * hv.hd;
                    double dp = 0.0;
                    for (int i = 0; i < hv.hd; i++) {
                        dp += dout[i] * v[i];
                        dv[i] += p[s] * dout[i];
                    }
                    row[s] = dp;
                    pdp += p[s] * dp;
                }
                for (int s = 0; s <= t; s++) {
                    double ds = p[s] * (row[s] - pdp) * scale;
                    const double *k = seq0 + (size_t)s * hv.qkv_dim + hv.k_off + g * hv.hd;
                    double *dk = dseq0 + (size_t)s * hv.qkv_dim + hv.k_off + g * hv.hd;
                    for (int i = 0; i < hv.hd; i++) {
                        dq[i] += ds * k[i];
                        dk[i] += ds * q[i];
                    }
                }
            }
        }
    }
    fpsim_act_round_array(dqkvr, n * hv.qkv_dim, act_round);
}
