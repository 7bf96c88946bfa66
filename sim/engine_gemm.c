/* engine_gemm.c: the engine's GEMM hook: the recipe engine, or an accumulation model for FP8.
 *
 * Every GEMM goes to the recipe engine of the kernel that rules (layer, GEMM part), which
 * quantizes the operands as its recipe says and multiplies with sgemm (FP32 accumulate). When
 * the kernel names an accumulation model other than fp32 (accum=hopper-qgmma, ...) and both
 * fprop operands are FP8 (block or per-tensor), the GEMM instead runs as the Hopper kernel
 * would: the operands are quantized here (same scheme, same fpsim_block_quantize, so the same
 * codes and scales), the codes decoded to float, and fpsim_gemm_tn_blockscaled (VEC128 x
 * BLK128x128 scales, QGMMA chains promoted every 128, as DeepGEMM / cuBLASLt) or fpsim_gemm_tn
 * (per-tensor scales; hopper-qgmma:fast = one QGMMA chain over K) computes the output, then
 * rounded to the recipe's output precision. */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

static fpsim_status grow_f(float **p, size_t *cap, size_t n)
{
    if (n <= *cap) return FPSIM_OK;
    float *q = realloc(*p, n * sizeof *q);
    if (!q) return fpsim_fail(FPSIM_ENOMEM, "engine: out of memory (%zu floats)", n);
    *p = q;
    *cap = n;
    return FPSIM_OK;
}

/* The recipe's scheme for an fprop operand at (layer, site), or NULL when it stays in high
 * precision there (the plan's first/last high-precision layers and head). */
static const fpsim_scheme *fprop_scheme(const engine_kernel *k, int layers, int layer, int site,
                                        int role)
{
    const fpsim_engine_plan *p = &k->plan;
    if (!p->quantized[FPSIM_PASS_FPROP][role]) return NULL;
    if (site == FPSIM_SITE_LM_HEAD) {
        if (p->hp_head) return NULL;
    } else if (layer < p->hp_first_layers || layer >= layers - p->hp_last_layers) {
        return NULL;
    }
    return &p->scheme[FPSIM_PASS_FPROP][role];
}

static int is_fp8(const fpsim_scheme *s)
{
    return s && (s->kind == FPSIM_KIND_FP8_BLOCK || s->kind == FPSIM_KIND_FP8_TENSOR);
}

/* Contiguous float copy of a stored operand (rows x cols, stride ld). */
static void to_float(float *dst, const double *src, size_t rows, size_t cols, size_t ld)
{
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) dst[i * cols + j] = (float)src[i * ld + j];
}

static fpsim_status quantize_decode(fpsim_engine *e, fpsim_qtensor *q, float *vals,
                                    const fpsim_scheme *s, const float *x, size_t rows, size_t cols)
{
    fpsim_qopts o;
    fpsim_qopts_default(&o);
    o.axis = FPSIM_AXIS_ROWS;
    o.want = 0;
    o.threads = e->threads;
    fpsim_status st = fpsim_block_quantize(q, s, x, rows, cols, &o);
    if (st) return st;
    fpsim_spec spec;
    if ((st = fpsim_spec_make(&spec, (fpsim_format_id)s->elem, NULL, FPSIM_RNE, 0))) return st;
    float lut[256];
    for (uint32_t code = 0; code < 256; code++) {
        uint32_t b = fpsim_decode_f32(code & ((1u << spec.bits) - 1u), &spec);
        memcpy(&lut[code], &b, sizeof b);
    }
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) vals[i * cols + j] = lut[q->codes[i * q->code_stride + j]];
    return FPSIM_OK;
}

static fpsim_status own_fprop(fpsim_engine *e, const engine_kernel *k, const fpsim_gemm_call *c,
                              const fpsim_scheme *sx, const fpsim_scheme *sw)
{
    size_t M = c->M, N = c->N, K = c->K;
    fpsim_status st;
    if ((st = grow_f(&e->fa, &e->cap_fa, 2 * M * K))) return st;
    if ((st = grow_f(&e->fb, &e->cap_fb, 2 * N * K))) return st;
    if ((st = grow_f(&e->fc, &e->cap_fc, M * N))) return st;
    float *xa = e->fa + M * K, *xb = e->fb + N * K;
    to_float(xa, c->a.data, M, K, c->a.ld); /* X: M x K, trans 0 */
    to_float(xb, c->b.data, N, K, c->b.ld); /* W: stored N x K, used transposed */
    if ((st = quantize_decode(e, &e->qa, e->fa, sx, xa, M, K))) return st;
    if ((st = quantize_decode(e, &e->qb, e->fb, sw, xb, N, K))) return st;
    /* each operand in its own element format (a custom recipe may pair E4M3 with E5M2) */
    fpsim_gemm_args args = {(fpsim_format_id)sx->elem, (fpsim_format_id)sw->elem, 1.0f, 1.0f, NULL, NULL,
                            e->threads};
    if (sx->kind == FPSIM_KIND_FP8_BLOCK && sw->kind == FPSIM_KIND_FP8_BLOCK) {
        fpsim_gemm_scales sa = {e->qa.scale_inv, sx->tile_rows};
        fpsim_gemm_scales sb = {e->qb.scale_inv, sw->tile_rows};
        args.sa = &sa;
        args.sb = &sb;
        st = fpsim_gemm_tn_ex(e->fc, e->fa, e->fb, M, N, K, &k->accum, &args);
    } else if (sx->kind == FPSIM_KIND_FP8_TENSOR && sw->kind == FPSIM_KIND_FP8_TENSOR) {
        args.scale_a = e->qa.global_scale;
        args.scale_b = e->qb.global_scale;
        st = fpsim_gemm_tn_ex(e->fc, e->fa, e->fb, M, N, K, &k->accum, &args);
    } else {
        return fpsim_fail(FPSIM_EUNSUPPORTED,
                          "engine: accum=%s needs both fprop operands block FP8 or both per-tensor FP8",
                          k->accum.name);
    }
    if (st) return st;
    int out_round = k->plan.out_round;
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double v = (double)e->fc[i * N + j];
            if (c->accumulate) v += c->c[i * c->ldc + j];
            if (out_round == FPSIM_ACT_BF16) v = fpsim_f64_round_bf16(v);
            else if (out_round == FPSIM_ACT_FP32 || c->accumulate) v = (double)(float)v;
            c->c[i * c->ldc + j] = v;
        }
    return FPSIM_OK;
}

fpsim_status fpsim_engine_gemm(void *ctx, const fpsim_gemm_call *c)
{
    fpsim_engine *e = ctx;
    const engine_kernel *k = engine_kernel_at(e, c->layer, FPSIM_PART_GEMM);
    if (k->own_accum && c->pass == FPSIM_PASS_FPROP) {
        int L = e->w.config.layers;
        const fpsim_scheme *sx = fprop_scheme(k, L, c->layer, c->site, FPSIM_ROLE_ACT);
        const fpsim_scheme *sw = fprop_scheme(k, L, c->layer, c->site, FPSIM_ROLE_WEIGHT);
        if (is_fp8(sx) && is_fp8(sw) && c->a.role == FPSIM_ROLE_ACT && !c->a.trans &&
            c->b.role == FPSIM_ROLE_WEIGHT && c->b.trans) {
            fpsim_status st = fpsim_gemm_call_check(c);
            if (st) return st;
            return own_fprop(e, k, c, sx, sw);
        }
    }
    return k->rnx.gemm(k->rnx.ctx, c);
}
