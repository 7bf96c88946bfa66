/* gemm_model.c: the scalar accumulation models: one tensor-core block, one dot product, the
 * per-tensor epilogue and the block-scale fold.
 *
 * The tensor-core block rule is gpu-numerics.md section 3.2 (Hopper QGMMA/HGMMA; Fasi et al.
 * 2021, Khattak & Mikaitis arXiv:2512.07004, confirmed on an H200 with nonzero C):
 *   1. each input becomes (sign, e, integer significand m): value = m * 2^(e - mbits), with e the
 *      input format's exponent (emin for its subnormals, no hidden bit); products are exact:
 *      significand ma*mb, exponent e_p = ea + eb, NOT renormalized;
 *   2. the incoming fp32 accumulator c likewise (e_c, 24-bit significand; -126 for subnormals);
 *   3. E = max over nonzero products and nonzero c of the exponents, floored at -133;
 *   4. every term's MAGNITUDE is truncated to a multiple of 2^(E - grid_bits), then signed;
 *   5. the signed integers are summed exactly (int64: at most 33 terms below 2^28);
 *   6. a zero sum gives +0; otherwise the magnitude is truncated to result_bits significant bits
 *      (and to the fp32 subnormal grid), overflow gives +-Inf. NaN anywhere, or +Inf with -Inf,
 *      gives NaN (written as 0x7FFFFFFF, the NVIDIA canonical NaN); a lone Inf passes through.
 * Everything here is integer arithmetic except the final exact conversion to fp32, so the
 * result does not depend on the compiler's floating-point evaluation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_gemm.h"
#include "gemm_terms.h"

/* ---- Input formats ---- */

int fpsim_gemm_format_params(fpsim_format_id fmt, fpsim_gemm_fmt *out)
{
    /* mbits, emin, largest finite, has Inf (OCP FP8 v1.0; IEEE binary16; bfloat16). */
    switch ((int)fmt) {
    case FPSIM_E4M3: *out = (fpsim_gemm_fmt){3, -6, 448.0, 0}; return 1;
    case FPSIM_E5M2: *out = (fpsim_gemm_fmt){2, -14, 57344.0, 1}; return 1;
    case FPSIM_BF16: *out = (fpsim_gemm_fmt){7, -126, 3.38953138925153547590e38, 1}; return 1;
    case FPSIM_F16: *out = (fpsim_gemm_fmt){10, -14, 65504.0, 1}; return 1;
    default: return 0;
    }
}

static const char *format_name(fpsim_format_id fmt)
{
    switch ((int)fmt) {
    case FPSIM_E4M3: return "e4m3";
    case FPSIM_E5M2: return "e5m2";
    case FPSIM_BF16: return "bf16";
    case FPSIM_F16: return "f16";
    default: return "f32";
    }
}

/* ---- Decoding ---- */

static int bit_length(uint64_t u)
{
    return u ? 64 - __builtin_clzll(u) : 0;
}

/* Decode fp32 x into a term of a format with `mbits` explicit mantissa bits and minimum exponent
 * `emin`. Sets *exact to 0 when x is not representable with that precision (bits would be lost). */
static fpsim_gemm_term term_from_f32(float x, int mbits, int emin, int *exact)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    fpsim_gemm_term t = {0, (int16_t)emin, FPSIM_TERM_FINITE};
    uint32_t ef = (u >> 23) & 0xFF, fr = u & 0x7FFFFF;
    int neg = (int)(u >> 31);
    *exact = 1;
    if (ef == 0xFF) {
        t.cls = fr ? FPSIM_TERM_NAN : FPSIM_TERM_INF;
        t.m = neg ? -1 : 1;
        return t;
    }
    uint32_t sig = ef ? (fr | 0x800000u) : fr; /* value = sig * 2^q */
    int q = ef ? (int)ef - 150 : -149;
    if (sig == 0) return t; /* +-0: m = 0 (the sign of a zero product never matters: zeros are dropped) */
    int e = q + bit_length(sig) - 1; /* floor(log2 |x|) */
    if (e < emin) e = emin;
    int shift = q - (e - mbits); /* m = sig * 2^shift */
    uint64_t m;
    if (shift >= 0) {
        m = (uint64_t)sig << shift;
    } else {
        m = (-shift >= 32) ? 0 : sig >> -shift;
        if (-shift >= 32 || (m << -shift) != sig) *exact = 0;
    }
    if (m >> (mbits + 1)) *exact = 0;
    t.m = neg ? -(int32_t)m : (int32_t)m;
    t.e = (int16_t)e;
    return t;
}

fpsim_gemm_term fpsim_gemm_term_decode(float x, const fpsim_gemm_fmt *f)
{
    int exact;
    return term_from_f32(x, f->mbits, f->emin, &exact);
}

fpsim_status fpsim_gemm_check_exact(const float *x, size_t n, fpsim_format_id fmt, const char *what)
{
    fpsim_gemm_fmt f;
    if (!fpsim_gemm_format_params(fmt, &f))
        return fpsim_fail(FPSIM_EINVAL, "%s: input format must be e4m3, e5m2, bf16 or f16", what);
    for (size_t i = 0; i < n; i++) {
        int exact;
        fpsim_gemm_term t = term_from_f32(x[i], f.mbits, f.emin, &exact);
        int ok = exact;
        if (t.cls == FPSIM_TERM_INF && !f.has_inf) ok = 0;
        if (t.cls == FPSIM_TERM_FINITE && fabs((double)x[i]) > f.max) ok = 0;
        if (!ok)
            return fpsim_fail(FPSIM_EDATA, "%s: element %zu (%.9g) is not exactly representable in %s", what, i,
                              (double)x[i], format_name(fmt));
    }
    return FPSIM_OK;
}

/* ---- One block ---- */

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* sign * mag * 2^q as fp32: magnitude truncated to `bits` significant bits, then to the fp32
 * subnormal grid 2^-149 (both toward zero); +-Inf beyond FLT_MAX. */
static float pack_rz(int neg, uint64_t mag, int q, int bits)
{
    int nb = bit_length(mag);
    if (nb > bits) {
        mag >>= nb - bits;
        q += nb - bits;
    }
    if (q < -149) {
        int s = -149 - q;
        mag = s >= 64 ? 0 : mag >> s;
        q = -149;
    }
    if (mag == 0) return neg ? -0.0f : 0.0f;
    if (q + bit_length(mag) - 1 > 127) return neg ? -INFINITY : INFINITY;
    float v = (float)ldexp((double)mag, q); /* exact: at most 24 significant bits, in range */
    return neg ? -v : v;
}

/* Magnitude `mag` at weight 2^lsb, truncated to a multiple of 2^g, in units of 2^g. */
static int64_t truncate_to_grid(int64_t mag, int lsb, int g)
{
    int sh = lsb - g;
    if (sh >= 0) return mag << sh; /* callers keep mag << sh below 2^40 (see the header) */
    return -sh >= 63 ? 0 : mag >> -sh;
}

/* Step 6 for blocks holding a NaN or an Inf (c included): NaN anywhere, Inf * 0, or +Inf with
 * -Inf give NaN; otherwise the infinity passes through. */
static float block_special(const fpsim_gemm_term *tc, const fpsim_gemm_term *a, const fpsim_gemm_term *b, int n)
{
    int nan = tc->cls == FPSIM_TERM_NAN, pinf = 0, ninf = 0;
    if (tc->cls == FPSIM_TERM_INF) {
        if (tc->m < 0) ninf = 1;
        else pinf = 1;
    }
    for (int i = 0; i < n; i++) {
        if (a[i].cls == FPSIM_TERM_FINITE && b[i].cls == FPSIM_TERM_FINITE) continue;
        if (a[i].cls == FPSIM_TERM_NAN || b[i].cls == FPSIM_TERM_NAN || a[i].m == 0 || b[i].m == 0) {
            nan = 1; /* NaN operand, or Inf * 0 */
            continue;
        }
        if ((a[i].m < 0) != (b[i].m < 0)) ninf = 1;
        else pinf = 1;
    }
    if (nan || (pinf && ninf)) return f32_from_bits(0x7FFFFFFFu);
    return pinf ? INFINITY : -INFINITY;
}

float fpsim_gemm_block_terms(const fpsim_accum *acc, float c, const fpsim_gemm_term *a, const fpsim_gemm_term *b,
                             int n, int mbits_sum)
{
    static const fpsim_gemm_fmt f32 = {23, -126, 3.40282346638528859812e38, 1};
    fpsim_gemm_term tc = fpsim_gemm_term_decode(c, &f32);
    int special = tc.cls;
    for (int i = 0; i < n; i++) special |= a[i].cls | b[i].cls;
    if (special) return block_special(&tc, a, b, n);

    /* Steps 1 and 3: exact products and the alignment exponent over the nonzero ones. */
    int64_t p[64];
    int ep[64];
    int E = INT32_MIN;
    for (int i = 0; i < n; i++) {
        p[i] = (int64_t)a[i].m * b[i].m;
        ep[i] = a[i].e + b[i].e;
        int e = p[i] ? ep[i] : INT32_MIN;
        E = e > E ? e : E;
    }
    if (tc.m != 0 && tc.e > E) E = tc.e;
    if (E == INT32_MIN) return 0.0f; /* step 6: an all-zero block gives +0, even for c = -0 */
    if (E < -133) E = -133;
    int g = E - acc->grid_bits;

    /* Steps 4-5: truncate each magnitude to the grid 2^g, sum exactly. A product's weight is
     * 2^(ep - mbits_sum); a nonzero one lies at most grid_bits - mbits_sum (<= 25) bits above the
     * grid, zeros anywhere (clamped shifts keep them 0). */
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
        int64_t mag = p[i] < 0 ? -p[i] : p[i];
        int s = g - (ep[i] - mbits_sum); /* right shift; negative: exact left shift */
        int64_t t = s <= 0 ? mag << (-s < 40 ? -s : 40) : (s > 62 ? 0 : mag >> s);
        sum += p[i] < 0 ? -t : t;
    }
    if (tc.m != 0) {
        int64_t mc = tc.m < 0 ? -(int64_t)tc.m : tc.m;
        int64_t t = truncate_to_grid(mc, tc.e - 23, g);
        sum += tc.m < 0 ? -t : t;
    }
    if (sum == 0) return 0.0f;
    /* Step 6: normalize and truncate. */
    return pack_rz(sum < 0, (uint64_t)(sum < 0 ? -sum : sum), g, acc->result_bits);
}

/* ---- Dot products over decoded rows ---- */

float fpsim_gemm_chain_terms(const fpsim_accum *acc, float c, const fpsim_gemm_term *a, const fpsim_gemm_term *b,
                             size_t K, int mbits_sum)
{
    for (size_t k0 = 0; k0 < K; k0 += (size_t)acc->block) {
        size_t n = K - k0 < (size_t)acc->block ? K - k0 : (size_t)acc->block;
        c = fpsim_gemm_block_terms(acc, c, a + k0, b + k0, (int)n, mbits_sum);
    }
    return c;
}

static float dot_terms_unsplit(const fpsim_accum *acc, const fpsim_gemm_term *a, const fpsim_gemm_term *b, size_t K,
                               int mbits_sum)
{
    if (acc->kind != FPSIM_ACCUM_HOPPER_QGMMA || acc->promote == 0)
        return fpsim_gemm_chain_terms(acc, 0.0f, a, b, K, mbits_sum);
    /* Promotion: a fresh chain (c = 0) every `promote` K-elements, added into an fp32
     * accumulator with one round-to-nearest-even add (CUDA-core FADD). */
    float total = 0.0f;
    for (size_t k0 = 0; k0 < K; k0 += (size_t)acc->promote) {
        size_t n = K - k0 < (size_t)acc->promote ? K - k0 : (size_t)acc->promote;
        float chain = fpsim_gemm_chain_terms(acc, 0.0f, a + k0, b + k0, n, mbits_sum);
        total = total + chain;
    }
    return total;
}

size_t fpsim_gemm_splitk_max(size_t K, const fpsim_gemm_scales *sa, const fpsim_gemm_scales *sb)
{
    /* the units of element_block_scaled (gemm_tn.c) and of the per-tensor paths */
    size_t unit = sa && sb && (sa->rows_per_block != 1 || sb->rows_per_block != 1) ? FPSIM_SPLITK_UNIT_BLK128
                                                                                   : FPSIM_SPLITK_UNIT;
    return (K + unit - 1) / unit;
}

size_t fpsim_gemm_splitk_chunk(size_t K, int splitk, size_t unit)
{
    /* cuBLASLt split-K on sm_90 (measured, cuBLASLt 13.1): chunks of ceil(K / (S*unit)) * unit,
     * unit 128 (per-tensor, VEC128 x VEC128) or 512 (a BLK128x128 operand). */
    size_t all = (size_t)splitk * unit;
    return (K + all - 1) / all * unit;
}

float fpsim_gemm_dot_terms(const fpsim_accum *acc, const fpsim_gemm_term *a, const fpsim_gemm_term *b, size_t K,
                           int mbits_sum)
{
    if (acc->splitk <= 1) return dot_terms_unsplit(acc, a, b, K, mbits_sum);
    /* Split-K: each chunk reduced from zero, the fp32 partials summed in chunk order
     * ((p0 + p1) + p2 ..., reduction scheme COMPUTE_TYPE). */
    size_t chunk = fpsim_gemm_splitk_chunk(K, acc->splitk, FPSIM_SPLITK_UNIT);
    float total = 0.0f;
    for (size_t k0 = 0; k0 < K; k0 += chunk) {
        size_t n = K - k0 < chunk ? K - k0 : chunk;
        float part = dot_terms_unsplit(acc, a + k0, b + k0, n, mbits_sum);
        total = total + part;
    }
    return total;
}

/* ---- Float-level models ---- */

double fpsim_gemm_dot_fp64(const float *a, const float *b, size_t K)
{
    double s = 0.0;
    for (size_t k = 0; k < K; k++) s += (double)a[k] * (double)b[k];
    return s;
}

float fpsim_gemm_dot_fp32_seq(const float *a, const float *b, size_t K)
{
    float s = 0.0f;
    for (size_t k = 0; k < K; k++) {
        float p = a[k] * b[k];
        s = s + p;
    }
    return s;
}

float fpsim_gemm_dot_fp32_seq_split(const float *a, const float *b, size_t K, int splitk)
{
    if (splitk <= 1) return fpsim_gemm_dot_fp32_seq(a, b, K);
    size_t chunk = fpsim_gemm_splitk_chunk(K, splitk, FPSIM_SPLITK_UNIT);
    float total = 0.0f;
    for (size_t k0 = 0; k0 < K; k0 += chunk) {
        float part = fpsim_gemm_dot_fp32_seq(a + k0, b + k0, K - k0 < chunk ? K - k0 : chunk);
        total = total + part;
    }
    return total;
}

/* ---- Public scalar API ---- */

/* The format the tensor core decodes an operand in: mma.sync FP8 on sm_90 unpacks FP8 to f16
 * first (F2FP.F16.E4M3.UNPACK_B), so its exponents are f16's (an e4m3 subnormal is an f16 normal). */
int fpsim_gemm_decode_format(const fpsim_accum *acc, fpsim_format_id in, fpsim_gemm_fmt *out)
{
    if (acc->kind == FPSIM_ACCUM_MMA_SYNC_FP8) in = FPSIM_F16;
    return fpsim_gemm_format_params(in, out);
}

static fpsim_gemm_term *decode_row(const float *x, size_t n, const fpsim_gemm_fmt *f)
{
    fpsim_gemm_term *t = malloc((n ? n : 1) * sizeof *t);
    if (!t) return NULL;
    for (size_t i = 0; i < n; i++) t[i] = fpsim_gemm_term_decode(x[i], f);
    return t;
}

float fpsim_gemm_block(const fpsim_accum *accum, float c, const float *a, const float *b, int n,
                       fpsim_format_id fmt_a, fpsim_format_id fmt_b)
{
    fpsim_gemm_fmt fa, fb;
    if (!accum->block || n < 0 || n > 64 || !fpsim_gemm_decode_format(accum, fmt_a, &fa) ||
        !fpsim_gemm_decode_format(accum, fmt_b, &fb))
        return f32_from_bits(0x7FFFFFFFu);
    fpsim_gemm_term ta[64], tb[64];
    for (int i = 0; i < n; i++) {
        ta[i] = fpsim_gemm_term_decode(a[i], &fa);
        tb[i] = fpsim_gemm_term_decode(b[i], &fb);
    }
    return fpsim_gemm_block_terms(accum, c, ta, tb, n, fa.mbits + fb.mbits);
}

double fpsim_gemm_dot(const fpsim_accum *accum, const float *a, const float *b, size_t K, fpsim_format_id fmt_a,
                      fpsim_format_id fmt_b)
{
    switch (accum->kind) {
    case FPSIM_ACCUM_FP64: return fpsim_gemm_dot_fp64(a, b, K);
    case FPSIM_ACCUM_FP32_BLAS: /* a single dot: sequential, as sdot's reference order */
    case FPSIM_ACCUM_FP32_SEQ: return fpsim_gemm_dot_fp32_seq_split(a, b, K, accum->splitk);
    default: break;
    }
    fpsim_gemm_fmt fa, fb;
    if (!fpsim_gemm_decode_format(accum, fmt_a, &fa) || !fpsim_gemm_decode_format(accum, fmt_b, &fb)) return NAN;
    fpsim_gemm_term *ta = decode_row(a, K, &fa), *tb = decode_row(b, K, &fb);
    double r = NAN;
    if (ta && tb) r = fpsim_gemm_dot_terms(accum, ta, tb, K, fa.mbits + fb.mbits);
    free(ta);
    free(tb);
    return r;
}

float fpsim_gemm_epilogue(float acc, float scale_a, float scale_b)
{
    /* cuBLASLt SCALAR_32F, measured on the H200 (gpu-numerics.md 3.4): the scale product is
     * rounded to fp32 once, then one fp32 multiply. Written as two statements so that no
     * compiler may contract or reassociate it. */
    float s = scale_a * scale_b;
    float d = acc * s;
    return d;
}

float fpsim_gemm_fold(fpsim_fold fold, float acc, float r, float sa, float sb)
{
    float s, t;
    switch (fold) {
    case FPSIM_FOLD_FMA: /* cuBLASLt 13.1 with a BLK128x128 operand on sm_90 (measured) */
        s = sa * sb;
        return fmaf(r, s, acc);
    case FPSIM_FOLD_MUL_ADD:
        s = sa * sb;
        t = r * s;
        return acc + t;
    case FPSIM_FOLD_MUL_MUL_ADD:
        t = r * sa;
        t = t * sb;
        return acc + t;
    case FPSIM_FOLD_MULA_FMA:
        t = r * sa;
        return fmaf(t, sb, acc);
    case FPSIM_FOLD_MULB_FMA: /* cuBLASLt 13.1 VEC128 x VEC128 on sm_90 (measured) */
        t = r * sb;
        return fmaf(t, sa, acc);
    default: return f32_from_bits(0x7FFFFFFFu);
    }
}
