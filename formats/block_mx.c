/* block_mx.c: MX block scales (E8M0 per 32 elements) and the MX row-group kernel.
 *
 * Scale rules (formats-spec.md 4.2; each is one implementation's code, cited at its case):
 *   floor/ceil/even  torchao to_mx: FP32 exponent field of amax (+1 if the mantissa is nonzero for
 *                    CEIL; amax first rounded to the element's mantissa width for EVEN), minus the
 *                    element emax, clamped to [-127, 128], biased by 127.
 *   rceil            torchao main _f32_to_e8m0_rceil: ceil of amax * fp32(1/max) by bits,
 *                    non-satfinite (Inf/NaN -> 0xFF). ao=0.18: clamp(ceil(log2f(amax / max)))
 *                    with NaN -> 0xFF and Inf -> 0xFE (torchao 0.18.0 eager fallback).
 *   rceil-sat        TE float_to_e8m0 (cvt.rp.satfinite.ue8m0x2.f32 or its software fallback).
 *   microxcaling     microsoft/microxcaling _shared_exponents: floor(log2f(amax)) - emax with
 *                    float log2 (log2f here; torch's log2 may round a few values differently),
 *                    > 127 -> NaN scale, < -127 -> -127; elements round half away from zero.
 *   gfloat           graphcore gfloat compute_scale_amax: floor(log2(amax)) in float64 (exact for
 *                    FP32 amax), amax 0 -> 2^-127, clipped to [-127, 127].
 * Element scaling (fpsim_mx_scale_element): x times the exact reciprocal 2^(127-e) built from
 * bits, which equals the IEEE division x / 2^(e-127) including FP32-subnormal results, except
 * where an implementation special-cases codes 0, 254, 255 (noted at each case). */
#define FPSIM_BLOCK_INTERNAL
#include "block_arith.h"
#include "fpsim_block.h"
#include "fpsim_core.h"

#include <math.h>
#include <string.h>

float fpsim_block_elem_max(int elem)
{
    switch (elem) {
    case FPSIM_E4M3: return 448.0f;
    case FPSIM_E5M2: return 57344.0f;
    case FPSIM_E2M3: return 7.5f;
    case FPSIM_E3M2: return 28.0f;
    case FPSIM_E2M1: return 6.0f;
    default: return NAN;
    }
}

/* Largest power of two of the element format (torchao constants.py *_MAX_POW2). */
int fpsim_block_elem_emax(int elem)
{
    switch (elem) {
    case FPSIM_E4M3: return 8;
    case FPSIM_E5M2: return 15;
    case FPSIM_E2M3: return 2;
    case FPSIM_E3M2: return 4;
    case FPSIM_E2M1: return 2;
    default: return 0;
    }
}

static int elem_mbits(int elem)
{
    switch (elem) {
    case FPSIM_E4M3: return 3;
    case FPSIM_E5M2: return 2;
    case FPSIM_E2M3: return 3;
    case FPSIM_E3M2: return 2;
    default: return 1; /* E2M1 */
    }
}

float fpsim_e8m0_value(uint8_t e)
{
    if (e == 0xFF)
        return NAN;
    return e == 0 ? u2f(0x00400000u) : u2f((uint32_t)e << 23);
}

/* 2^(127-e) from bits: code 0 -> 2^127, 254 -> FP32 subnormal 2^-127 (torchao main
 * _e8m0_scale_to_reciprocal_fp32; 255 gives its NaN 0x7F800001). */
static float rcp_exact(uint8_t e)
{
    if (e == 0xFF)
        return u2f(0x7F800001u);
    if (e == 254)
        return u2f(0x00400000u);
    return u2f((uint32_t)(254 - e) << 23);
}

/* torchao FLOOR / CEIL / EVEN (both releases agree on the code except for Inf amax). */
static uint8_t scale_torchao_bits(float amax, const fpsim_scheme *s)
{
    const int emax = fpsim_block_elem_emax(s->elem);
    uint32_t a = f2u(amax) & 0x7FFFFFFFu;
    int nan = isnan(amax);
    if (s->rule == FPSIM_MX_EVEN && !nan) {
        /* round to the element mantissa width, keep sign + exponent (may carry to Inf) */
        a = (a + (1u << (23 - elem_mbits(s->elem) - 1))) & 0xFF800000u;
    }
    int e = (int)((a >> 23) & 0xFF) - 127;
    if (s->rule == FPSIM_MX_CEIL)
        e += (a & 0x7FFFFFu) != 0;
    int u = e - emax;
    u = u < -127 ? -127 : (u > 128 ? 128 : u);
    uint8_t code = (uint8_t)(u + 127);
    if (nan)
        return 0xFF;
    /* main: `torch.where(torch.isfinite(max_abs), ..., 0xFF)` on the (rounded) amax; 0.18 only
     * replaces NaN, so an Inf amax keeps the code of its exponent field. */
    if (s->ao == FPSIM_AO_MAIN && a >= 0x7F800000u)
        return 0xFF;
    return code;
}

/* PTX cvt.rp{.satfinite}.ue8m0x2.f32 on a non-negative value. */
static uint8_t e8m0_round_up(float v, int satfinite)
{
    uint32_t b = f2u(v) & 0x7FFFFFFFu;
    if (b > 0x7F800000u)
        return 0xFF;
    if (b == 0x7F800000u)
        return satfinite ? 0xFE : 0xFF;
    uint32_t e = b >> 23, m = b & 0x7FFFFFu;
    uint32_t up = e == 0 ? (m > 0x400000u) : (m != 0);
    uint32_t code = e + up;
    if (satfinite && code > 0xFE)
        code = 0xFE;
    return (uint8_t)code;
}

uint8_t fpsim_mx_scale_code(float amax, const fpsim_scheme *s)
{
    const float maxv = fpsim_block_elem_max(s->elem);
    const int emax = fpsim_block_elem_emax(s->elem);
    switch (s->rule) {
    case FPSIM_MX_FLOOR:
    case FPSIM_MX_CEIL:
    case FPSIM_MX_EVEN:
        return scale_torchao_bits(amax, s);
    case FPSIM_MX_RCEIL:
        if (s->ao == FPSIM_AO_0_18) {
            /* torchao 0.18 _to_mx_rceil eager: descale = max_abs / max_pos (CPU true division),
             * clamp(ceil(log2(descale)), -127, 127) + 127, NaN -> 255, Inf -> 254. */
            float d = amax / maxv;
            if (isnan(d))
                return 0xFF;
            if (isinf(d))
                return 0xFE;
            float l = ceilf(log2f(d));
            l = l < -127.0f ? -127.0f : (l > 127.0f ? 127.0f : l);
            return (uint8_t)((int)l + 127);
        }
        /* torchao main: descale = max_abs * (1.0 / max_pos) as an FP32 multiply, then the
         * bit-exact round-up, non-satfinite. */
        return e8m0_round_up(amax * (1.0f / maxv), 0);
    case FPSIM_MX_RCEIL_SAT:
        /* TE: amax * Quantized_Limits::max_norm_rcp, float_to_e8m0 (satfinite). */
        return e8m0_round_up(amax * (1.0f / maxv), 1);
    case FPSIM_MX_MICROXCALING: {
        /* floor(log2(amax + 2^-126 [amax == 0])) in float, minus emax; > 127 -> NaN. */
        float a = amax == 0.0f ? u2f(0x00800000u) : amax;
        float l = floorf(log2f(a));
        if (isnan(l))
            return 0xFF;
        float u = l - (float)emax;
        if (u > 127.0f)
            return 0xFF;
        if (u < -127.0f)
            u = -127.0f;
        return (uint8_t)((int)u + 127);
    }
    case FPSIM_MX_GFLOAT: {
        if (isnan(amax))
            return 0xFF;
        if (amax == 0.0f)
            return 0; /* 2^-127 */
        double l = floor(log2((double)amax)) - emax;
        l = l < -127.0 ? -127.0 : (l > 127.0 ? 127.0 : l);
        return (uint8_t)((int)l + 127);
    }
    default:
        return 0xFF;
    }
}

float fpsim_mx_scale_element(float x, uint8_t e, float amax, const fpsim_scheme *s)
{
    switch (s->rule) {
    case FPSIM_MX_RCEIL_SAT: {
        /* TE ptx::exp2f_rcp (transformer_engine/common/util/ptx.cuh): code 0 -> 1.0, otherwise
         * the bits (254 - e) << 23, so 254 -> +0.0 and 255 -> 0xFF800000 (-Inf). CUDA
         * arithmetic: NaN results are the canonical 0x7FFFFFFF (the cast ignores NaN sign). */
        float r = e == 0 ? 1.0f : u2f((uint32_t)(254 - (int)e) << 23);
        float y = x * r;
        return isnan(y) ? u2f(0x7FFFFFFFu) : y;
    }
    case FPSIM_MX_RCEIL:
        if (s->ao == FPSIM_AO_0_18) {
            /* rcp = 255 -> descale (NaN), 254 -> 2^-127, 0 -> 1.0, else exp2(127 - e). */
            float r;
            if (e == 255)
                r = amax / fpsim_block_elem_max(s->elem);
            else if (e == 254)
                r = u2f(0x00400000u);
            else if (e == 0)
                r = 1.0f;
            else
                r = u2f((uint32_t)(254 - e) << 23);
            return mul_torch(x, r);
        }
        return mul_torch(x, rcp_exact(e));
    case FPSIM_MX_FLOOR:
    case FPSIM_MX_CEIL:
    case FPSIM_MX_EVEN:
        if (s->ao == FPSIM_AO_0_18) {
            /* data_hp / clamp(bits(e << 23), min=2^-126): code 0 divides by 2^-126, code 255
             * by +Inf. For other codes the division equals the exact reciprocal product. */
            if (e == 0)
                return div_torch(x, u2f(0x00800000u));
            if (e == 255)
                return div_torch(x, u2f(0x7F800000u));
            return mul_torch(x, rcp_exact(e));
        }
        return mul_torch(x, rcp_exact(e));
    case FPSIM_MX_MICROXCALING:
        /* A / 2^shared_exp in float; NaN shared exponent -> NaN elements. */
        if (e == 255)
            return div_torch(x, u2f(0x7FC00000u));
        return mul_torch(x, rcp_exact(e));
    default: /* gfloat: x / 2^e, exact */
        if (e == 255)
            return div_torch(x, u2f(0x7FC00000u));
        return mul_torch(x, rcp_exact(e));
    }
}

/* The factor f with element = x * f for code e, when it is finite and nonzero (then a plain
 * multiply gives the emulated bits, see fpsim_block_fast_run); 0 when the code needs
 * fpsim_mx_scale_element (NaN scales, TE's 0.0 reciprocal of code 254). */
static float mx_fast_factor(uint8_t e, const fpsim_scheme *s)
{
    if (e == 255)
        return 0.0f;
    switch (s->rule) {
    case FPSIM_MX_RCEIL_SAT:
        return e == 0 ? 1.0f : (e == 254 ? 0.0f : u2f((uint32_t)(254 - e) << 23));
    case FPSIM_MX_RCEIL:
        if (s->ao == FPSIM_AO_0_18)
            return e == 0 ? 1.0f : rcp_exact(e);
        return rcp_exact(e);
    case FPSIM_MX_FLOOR:
    case FPSIM_MX_CEIL:
    case FPSIM_MX_EVEN:
        if (s->ao == FPSIM_AO_0_18 && e == 0)
            return 0x1p126f; /* x / 2^-126 */
        return rcp_exact(e);
    default:
        return rcp_exact(e);
    }
}

/* Tile row g (one row for 1x32, 32 rows for 32x32): the scales of a chunk of blocks from the
 * amax over the tile rows, then each row's elements in one vector pass when every block's factor
 * is fast (the common case), else block by block. */
static void mx_row(const fpsim_block_plan *p, size_t g)
{
    enum { NB = 64 };
    const fpsim_scheme *s = &p->s;
    fpsim_qtensor *o = p->out;
    const size_t tc = s->tile_cols, tr = s->tile_rows;
    const size_t r0 = g * tr, r1 = r0 + tr < p->qrows ? r0 + tr : p->qrows;
    const int fp4 = s->elem == FPSIM_E2M1;
    uint8_t tmp[NB * 32];
    float fs[NB], am[NB];
    uint64_t sat = 0, zero = 0;
    /* chunks start at even columns and cover the row, so fpsim_block_store_run writes every
     * byte, except that FP4 ORs into a last byte shared by an odd row length */
    if (fp4 && (p->qcols & 1u))
        for (size_t r = r0; r < r1; r++)
            o->codes[r * o->code_stride + o->code_stride - 1] = 0;
    for (size_t b0 = 0; b0 < o->scols; b0 += NB) {
        const size_t nb = b0 + NB < o->scols ? NB : o->scols - b0;
        const size_t c0 = b0 * tc, c1 = (b0 + nb) * tc < p->qcols ? (b0 + nb) * tc : p->qcols;
        int all_fast = 1;
        uint32_t mb[NB];
        uint8_t nanb[NB];
        fpsim_block_amax_tile(p->src + r0 * p->qcols + c0, p->qcols, r1 - r0, c1 - c0, tc, mb, nanb);
        for (size_t k = 0; k < nb; k++) {
            am[k] = (nanb[k] && s->nan == FPSIM_NAN_PROPAGATE) ? NAN : u2f(mb[k]);
            const uint8_t e = fpsim_mx_scale_code(am[k], s);
            fs[k] = mx_fast_factor(e, s);
            all_fast &= fs[k] != 0.0f;
            zero += am[k] == 0.0f;
            o->scale_codes[g * o->scols + b0 + k] = e;
            o->scale_inv[g * o->scols + b0 + k] = fpsim_e8m0_value(e);
        }
        for (size_t r = r0; r < r1; r++) {
            const float *xr = p->src + r * p->qcols;
            if (all_fast) {
                sat += fpsim_block_fast_row(tmp, xr + c0, c1 - c0, tc, fs, &p->fast, p->elem_max);
            } else {
                for (size_t k = 0; k < nb; k++) {
                    const size_t a0 = c0 + k * tc, a1 = a0 + tc < p->qcols ? a0 + tc : p->qcols;
                    const uint8_t e = o->scale_codes[g * o->scols + b0 + k];
                    if (fs[k] != 0.0f) {
                        sat += fpsim_block_fast_run(tmp + (a0 - c0), xr + a0, a1 - a0, fs[k], &p->fast,
                                                    p->elem_max);
                        continue;
                    }
                    for (size_t i = a0; i < a1; i++) {
                        float y = fpsim_mx_scale_element(xr[i], e, am[k], s);
                        sat += isfinite(xr[i]) && fabsf(y) > p->elem_max;
                        tmp[i - c0] = (uint8_t)fpsim_round_f32(f2u(y), &p->elem, 0);
                    }
                }
            }
            fpsim_block_store_run(o, r, c0, tmp, c1 - c0, fp4);
            if (p->dq) {
                float *d = p->dq + r * p->qcols;
                for (size_t i = c0; i < c1; i++)
                    d[i] = p->elem_lut[tmp[i - c0]] * o->scale_inv[g * o->scols + i / tc];
            }
        }
    }
    p->group_sat[g] = sat;
    p->group_zero[g] = zero;
}

void fpsim_block_mx_group(const fpsim_block_plan *p, size_t g)
{
    mx_row(p, g);
}
