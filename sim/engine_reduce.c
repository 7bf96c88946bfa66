/* engine_reduce.c: RMSNorm and causal attention rows with real FP32 reductions in a chosen order.
 *
 * The model's own layers (layer_rmsnorm.c, layer_attention.c) compute in double and round the
 * output once: the same value whatever the order. Real kernels reduce in float32, and the order
 * of those additions is what makes two BF16 engines disagree (Thinking Machines, "Defeating
 * Nondeterminism in LLM Inference": RMSNorm, split-K and split-KV reductions). Here every sum is
 * a float32 addition (no FMA: -ffp-contract=off), in one of three orders (fpsim_reduce_order):
 *   seq       s = ((x0 + x1) + x2) + ...                     one thread along the row
 *   pairwise  adjacent pairs, then pairs of pairs (a tree)  warp-shuffle style
 *   blocked   blocks of 32 left to right, partials left to right;  the softmax as an online
 *             (FlashAttention-2 style) softmax over 32-key chunks with running max and rescale.
 * Products are float32 products of float32 inputs. exp is expf (glibc, correctly rounded in
 * practice); divisions are float32 divisions. Outputs are rounded to the engine's act_round. */
#include <math.h>
#include <string.h>

#include "engine_internal.h"

float fpsim_engine_sum_f32(float *x, int n, int order)
{
    if (n <= 0) return 0.0f;
    if (order == FPSIM_REDUCE_PAIRWISE) {
        /* in place: x[i] = x[2i] + x[2i+1], odd tail carried */
        while (n > 1) {
            int h = n / 2;
            for (int i = 0; i < h; i++) x[i] = x[2 * i] + x[2 * i + 1];
            if (n & 1) {
                x[h] = x[n - 1];
                h++;
            }
            n = h;
        }
        return x[0];
    }
    if (order == FPSIM_REDUCE_BLOCKED) {
        float total = 0.0f;
        for (int b = 0; b < n; b += 32) {
            float part = 0.0f;
            int e = b + 32 < n ? b + 32 : n;
            for (int i = b; i < e; i++) part += x[i];
            total = b == 0 ? part : total + part;
        }
        return total;
    }
    float s = 0.0f;
    for (int i = 0; i < n; i++) s += x[i];
    return s;
}

static double act(double v, int act_round)
{
    if (act_round == FPSIM_ACT_BF16) return fpsim_f64_round_bf16(v);
    if (act_round == FPSIM_ACT_FP32) return (double)(float)v;
    return v;
}

/* out = w * fl32(x * rstd), rstd = 1 / sqrtf(sum(x^2) / C + eps) with the sum in `order` (the
 * order of Hugging Face LlamaRMSNorm: normalize in fp32, cast, multiply by the weight). */
void fpsim_engine_rmsnorm_f32(double *out, const double *x, const double *w, size_t rows,
                              size_t c, double eps, int order, int act_round, float *scratch)
{
    for (size_t r = 0; r < rows; r++) {
        const double *xr = x + r * c;
        double *o = out + r * c;
        for (size_t i = 0; i < c; i++) {
            float f = (float)xr[i];
            scratch[i] = f * f;
        }
        float ss = fpsim_engine_sum_f32(scratch, (int)c, order);
        float rstd = 1.0f / sqrtf(ss / (float)c + (float)eps);
        for (size_t i = 0; i < c; i++) {
            float y = (float)xr[i] * rstd;
            o[i] = act((double)(float)act((double)y, act_round) * w[i], act_round);
        }
    }
}

/* q . k in float32 in `order`. */
static float dot_f32(const double *q, const double *k, int hd, int order, float *tmp)
{
    for (int i = 0; i < hd; i++) tmp[i] = (float)q[i] * (float)k[i];
    return fpsim_engine_sum_f32(tmp, hd, order);
}

void fpsim_engine_attention_row_f32(double *out, const double *q, const double *k_rows,
                                    const double *v_rows, size_t stride, int t, int hd,
                                    int order, int act_round, float *scratch)
{
    /* scratch: scores (t + 1), then a (max(hd, t + 1)) temporary, then acc (hd) */
    float *s = scratch, *tmp = scratch + (t + 1), *acc = tmp + (hd > t + 1 ? hd : t + 1) + 32;
    float scale = 1.0f / sqrtf((float)hd);
    for (int j = 0; j <= t; j++) s[j] = dot_f32(q, k_rows + (size_t)j * stride, hd, order, tmp) * scale;
    if (order == FPSIM_REDUCE_BLOCKED) {
        /* online softmax over chunks of 32 keys: m running max, l running sum, acc running P V */
        float m = -INFINITY, l = 0.0f;
        for (int i = 0; i < hd; i++) acc[i] = 0.0f;
        for (int b = 0; b <= t; b += 32) {
            int e = b + 32 <= t + 1 ? b + 32 : t + 1;
            float cm = m;
            for (int j = b; j < e; j++) cm = s[j] > cm ? s[j] : cm;
            float alpha = expf(m - cm); /* exp(-inf) = 0 on the first chunk */
            float part = 0.0f;
            for (int j = b; j < e; j++) {
                s[j] = (float)act((double)expf(s[j] - cm), act_round); /* P in the PV GEMM's type */
                part += s[j];
            }
            l = l * alpha + part;
            for (int i = 0; i < hd; i++) {
                float pv = 0.0f;
                for (int j = b; j < e; j++) pv += s[j] * (float)v_rows[(size_t)j * stride + i];
                acc[i] = acc[i] * alpha + pv;
            }
            m = cm;
        }
        for (int i = 0; i < hd; i++) out[i] = act((double)(acc[i] / l), act_round);
        return;
    }
    float m = -INFINITY;
    for (int j = 0; j <= t; j++) m = s[j] > m ? s[j] : m;
    for (int j = 0; j <= t; j++) tmp[j] = s[j] = expf(s[j] - m);
    float sum = fpsim_engine_sum_f32(tmp, t + 1, order);
    for (int j = 0; j <= t; j++) s[j] = (float)act((double)(s[j] / sum), act_round);
    for (int i = 0; i < hd; i++) {
        for (int j = 0; j <= t; j++) tmp[j] = s[j] * (float)v_rows[(size_t)j * stride + i];
        out[i] = act((double)fpsim_engine_sum_f32(tmp, t + 1, order), act_round);
    }
}
