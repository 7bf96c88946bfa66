/* block_fp8.c: FP8 with FP32 scales: 1x128 / 128x128 blocks and per-tensor scaling.
 *
 * Block scale rules (formats-spec.md 6.2):
 *   te-pow2 / te-fp32  TE compute_scale_from_amax (transformer_engine/common/recipe/
 *       recipe_common.cuh): amax < eps -> eps; amax 0, Inf or NaN -> scale 1; scale =
 *       __fdiv_rn(max, amax); an Inf quotient -> the input dtype's max finite (FLT_MAX, or BF16
 *       max for BF16 input); pow2 keeps sign + exponent (& 0xFF800000: rounds the scale down);
 *       elements static_cast<fp8>(x * scale) (RNE satfinite); scale_inv = 1 / scale.
 *   deepgemm-fp32  DeepGEMM per_token_cast_to_fp8 / per_block_cast_to_fp8 (deep_gemm/utils/
 *       math.py) on CUDA: sf = clamp(amax, 1e-4) / 448.0, which eager CUDA computes as
 *       amax * fp32(1/448); elements x * (1 / sf) (a correctly rounded reciprocal), torch cast.
 *   deepgemm-ue8m0 the same sf rounded up to a power of two by bits (exponent field + (mantissa
 *       != 0), byte clamped to [1, 254]).
 *   vllm-cuda  vLLM's per_token_group_fp8_quant CUDA op (csrc/quantization/8bit/fp8/
 *       per_token_group_quant.cu), which per_token_group_quant_fp8 prefers on CUDA: the amax
 *       reduction starts at eps (1e-10) and uses fmaxf (NaN skipped); sf = amax / 448 and each
 *       element x / sf, both IEEE divisions (nvcc without fast math); then fminf(fmaxf(q, -448),
 *       448), so a NaN quotient becomes -448; the cast is satfinite RNE. Stored scale: sf.
 *   vllm-cuda-ue8m0  the same op with scale_ue8m0 (vLLM's choice where DeepGEMM takes E8M0 scales):
 *       sf as vllm-cuda, then fmaxf(|sf|, 1e-10) rounded up to a power of two by bits (exponent
 *       field + (mantissa != 0)), the register kernel's form for 16-bit inputs in groups of 128;
 *       elements as vllm-cuda (x / 2^k is exact, so the kernel's x * (1 / 2^k) is the same). The
 *       shared-memory kernel (other inputs) writes exp2f(ceilf(log2f(.))), which CUDA's log2f may
 *       round to the power of two below for sf just above one (not modelled).
 *   vllm-native  QuantFP8._quantize_group_native under eager CUDA torch: amax = abs().max() (NaN
 *       propagates); sf = amax / 448.0, which CUDA torch computes as amax * fp32(1/448) (a CPU
 *       scalar divisor); sf = clamp(sf, min=eps) with eps = 1/(448*512) (NaN propagates); each
 *       element x / sf (tensor by tensor: an IEEE division), torch.clamp to +-448 and the torch
 *       cast. Under torch.compile Inductor generates this code, and its division may not be IEEE
 *       (not modelled).
 * Per-tensor (section 7): TE current scaling (compute_scale_from_amax with FLT_MAX for Inf and
 * an optional power of two), TE delayed scaling (the scale comes from the quantizer state), and
 * torchao float8 (scale = fp32(max / clamp(amax_f64, 1e-12)), optional exp2(floor(log2f))). */
#define FPSIM_BLOCK_INTERNAL
#include "block_arith.h"
#include "fpsim_block.h"
#include "fpsim_core.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* TE compute_scale_from_amax (FP32). value_for_inf: FLT_MAX for FP32 input, BF16 max for BF16. */
float fpsim_fp8_te_scale(float amax, float fp8_max, int pow2, float eps, float value_for_inf)
{
    float a = amax < eps ? eps : amax; /* NaN compares false: kept */
    if (a == 0.0f || isinf(a) || isnan(a))
        return 1.0f;
    float scale = fp8_max / a; /* __fdiv_rn */
    if (isinf(scale))
        scale = value_for_inf;
    if (pow2)
        scale = u2f(f2u(scale) & 0xFF800000u);
    return scale;
}

/* max(v, lo) as torch.clamp(min=lo) and fmaxf after a NaN-skipping reduction both give it, with
 * a NaN v kept (torch.clamp propagates it; a reduction only yields NaN under nan=propagate). */
static float floor_keep_nan(float v, float lo)
{
    return isnan(v) ? v : (v < lo ? lo : v);
}

/* Block scale of the rule: the multiplier applied to elements and the stored scale_inv. */
static void block_scale(const fpsim_block_plan *p, float amax, float *mult, float *sinv)
{
    const fpsim_scheme *s = &p->s;
    const float fmax = p->elem_max;
    switch (s->scale) {
    case FPSIM_FP8B_TE_POW2:
    case FPSIM_FP8B_TE_FP32: {
        float vinf = p->bf16_in ? u2f(0x7F7F0000u) : FLT_MAX;
        float sc = fpsim_fp8_te_scale(amax, fmax, s->scale == FPSIM_FP8B_TE_POW2, s->eps, vinf);
        *mult = sc;
        *sinv = 1.0f / sc;
        return;
    }
    case FPSIM_FP8B_VLLM_CUDA:
    case FPSIM_FP8B_VLLM_CUDA_UE8M0: {
        float sf = floor_keep_nan(amax, s->eps) / fmax; /* fmaxf(eps, amax) / 448 */
        if (s->scale == FPSIM_FP8B_VLLM_CUDA_UE8M0) sf = u2f(fpsim_vllm_ue8m0_bits(f2u(sf))); /* scale_ue8m0 */
        *mult = *sinv = sf;
        return;
    }
    case FPSIM_FP8B_VLLM_NATIVE: {
        *mult = *sinv = floor_keep_nan(mul_torch(amax, 1.0f / fmax), s->eps); /* clamp(sf, min=eps) */
        return;
    }
    default: {
        float sf = floor_keep_nan(amax, s->eps) * (1.0f / fmax); /* torch.clamp(min=eps) */
        if (s->scale == FPSIM_FP8B_DEEPGEMM_UE8M0 && isfinite(sf)) sf = u2f(fpsim_deepgemm_ue8m0_bits(f2u(sf)));
        *mult = 1.0f / sf;
        *sinv = sf;
        return;
    }
    }
}

/* The elements x[0, n) of one block under a dividing rule (vllm-cuda, vllm-native), before the
 * cast, into y: x / sf clamped to +-fmax. vLLM's CUDA op clamps with fmaxf then fminf, and
 * fmaxf(q, -max) = (q >= -max ? q : -max) for every q, NaN included (then -max); torch.clamp keeps
 * a NaN, and a NaN quotient takes div_torch's NaN (the dividend's, else the divisor's, else the
 * x86 default NaN). Written as selects so that the loops vectorize. Returns how many finite x
 * have |x / sf| > fmax (the clipped count). */
FPSIM_CLONES
static uint64_t divide_block(float *restrict y, const float *restrict x, size_t n, float sf, int cuda,
                             float fmax)
{
    uint64_t sat = 0;
    if (cuda) {
        for (size_t i = 0; i < n; i++) {
            float q = x[i] / sf;
            sat += (uint64_t)((fabsf(x[i]) <= FLT_MAX) & (fabsf(q) > fmax)); /* & keeps the loop branch-free */
            q = q >= -fmax ? q : -fmax;
            y[i] = q <= fmax ? q : fmax;
        }
        return sat;
    }
    int nan = 0;
    for (size_t i = 0; i < n; i++) {
        float q = x[i] / sf;
        sat += (uint64_t)((fabsf(x[i]) <= FLT_MAX) & (fabsf(q) > fmax)); /* & keeps the loop branch-free */
        nan |= (int)(q != q);
        y[i] = q < -fmax ? -fmax : (q > fmax ? fmax : q);
    }
    for (size_t i = 0; nan && i < n; i++)
        if (y[i] != y[i])
            y[i] = div_torch(x[i], sf);
    return sat;
}

/* Tile row g (one row for 1x128, 128 rows for 128x128): the block scales of a chunk from the
 * amax over the tile rows, then one vector pass per row when every multiplier is finite and
 * nonzero. */
static void fp8_row(const fpsim_block_plan *p, size_t g)
{
    enum { NB = 64 };
    const fpsim_scheme *s = &p->s;
    fpsim_qtensor *o = p->out;
    const size_t tc = s->tile_cols, tr = s->tile_rows;
    const size_t r0 = g * tr, r1 = r0 + tr < p->qrows ? r0 + tr : p->qrows;
    float fs[NB];
    uint64_t sat = 0, zero = 0;
    const int divides = fpsim_fp8_scale_divides(s->scale);
    for (size_t b0 = 0; b0 < o->scols; b0 += NB) {
        const size_t nb = b0 + NB < o->scols ? NB : o->scols - b0;
        const size_t c0 = b0 * tc, c1 = (b0 + nb) * tc < p->qcols ? (b0 + nb) * tc : p->qcols;
        int all_fast = 1;
        uint32_t mb[NB];
        uint8_t nanb[NB];
        fpsim_block_amax_tile(p->src + r0 * p->qcols + c0, p->qcols, r1 - r0, c1 - c0, tc, mb, nanb);
        for (size_t k = 0; k < nb; k++) {
            float amax = (nanb[k] && s->nan == FPSIM_NAN_PROPAGATE) ? NAN : u2f(mb[k]);
            float sinv;
            block_scale(p, amax, &fs[k], &sinv);
            all_fast &= !divides && isfinite(fs[k]) && fs[k] != 0.0f;
            zero += amax == 0.0f;
            o->scale_inv[g * o->scols + b0 + k] = sinv;
        }
        for (size_t r = r0; r < r1; r++) {
            const float *xr = p->src + r * p->qcols;
            uint8_t *cr = o->codes + r * o->code_stride;
            if (all_fast) {
                sat += fpsim_block_fast_row(cr + c0, xr + c0, c1 - c0, tc, fs, &p->fast, p->elem_max);
            } else if (divides) {
                /* the quotients, then the cast alone (a factor of 1 changes no value and no NaN) */
                float y[128];
                for (size_t i0 = c0; i0 < c1; i0 += tc) {
                    const size_t n = i0 + tc < c1 ? tc : c1 - i0;
                    sat += divide_block(y, xr + i0, n, fs[(i0 - c0) / tc], fpsim_fp8_scale_vllm_op(s->scale),
                                        p->elem_max);
                    fpsim_block_fast_run(cr + i0, y, n, 1.0f, &p->fast, p->elem_max);
                }
            } else {
                for (size_t i = c0; i < c1; i++) {
                    float y = mul_torch(xr[i], fs[(i - c0) / tc]);
                    sat += isfinite(xr[i]) && fabsf(y) > p->elem_max;
                    cr[i] = (uint8_t)fpsim_round_f32(f2u(y), &p->elem, 0);
                }
            }
            if (p->dq) {
                float *d = p->dq + r * p->qcols;
                for (size_t i = c0; i < c1; i++)
                    d[i] = p->elem_lut[cr[i]] * o->scale_inv[g * o->scols + i / tc];
            }
        }
    }
    p->group_sat[g] = sat;
    p->group_zero[g] = zero;
}

void fpsim_block_fp8_group(const fpsim_block_plan *p, size_t g)
{
    if (p->s.kind == FPSIM_KIND_FP8_BLOCK) {
        fp8_row(p, g);
        return;
    }
    const fpsim_scheme *s = &p->s;
    fpsim_qtensor *o = p->out;
    const int tensor = s->kind == FPSIM_KIND_FP8_TENSOR;
    const size_t tr = tensor ? 1 : s->tile_rows, tc = tensor ? p->qcols : s->tile_cols;
    const size_t r0 = g * tr, r1 = r0 + tr < p->qrows ? r0 + tr : p->qrows;
    const size_t nb = tensor ? 1 : o->scols;
    uint64_t sat = 0, zero = 0;
    for (size_t b = 0; b < nb; b++) {
        const size_t c0 = b * tc, c1 = c0 + tc < p->qcols ? c0 + tc : p->qcols;
        float mult, sinv;
        if (tensor) {
            mult = p->tscale;
            sinv = p->tscale_inv;
        } else {
            uint32_t m;
            uint8_t nan;
            fpsim_block_amax_tile(p->src + r0 * p->qcols + c0, p->qcols, r1 - r0, c1 - c0, c1 - c0,
                                  &m, &nan);
            float amax = (nan && s->nan == FPSIM_NAN_PROPAGATE) ? NAN : u2f(m);
            zero += amax == 0.0f;
            block_scale(p, amax, &mult, &sinv);
            o->scale_inv[g * o->scols + b] = sinv;
        }
        const int fast = isfinite(mult) && mult != 0.0f;
        for (size_t r = r0; r < r1; r++) {
            const float *x = p->src + r * p->qcols + c0;
            uint8_t *codes = o->codes + r * o->code_stride + c0;
            const size_t n = c1 - c0;
            if (fast) {
                sat += fpsim_block_fast_run(codes, x, n, mult, &p->fast, p->elem_max);
            } else {
                for (size_t i = 0; i < n; i++) {
                    float y = mul_torch(x[i], mult);
                    sat += isfinite(x[i]) && fabsf(y) > p->elem_max;
                    codes[i] = (uint8_t)fpsim_round_f32(f2u(y), &p->elem, 0);
                }
            }
            if (p->dq) {
                float *d = p->dq + r * p->qcols + c0;
                for (size_t i = 0; i < n; i++)
                    d[i] = p->elem_lut[codes[i]] * sinv;
            }
        }
    }
    p->group_sat[g] = sat;
    p->group_zero[g] = zero;
}
