/* numerics_plain.c: the two plain engines (fp64 reference, fp32) and the shared rounding helpers.
 *
 * Determinism: OpenBLAS (0.3.21 here) threads its level-3 GEMMs by partitioning M and N only, and
 * its dgemm returns the same bits on 1 and 2 threads with both the "Cooperlake" and the "Zen"
 * kernels measured. Its sgemm does too with "Cooperlake" but not with "Zen", where an element's
 * sum depends on where the partition puts it; so the FP32 GEMMs go through fpsim_sgemm
 * (sgemm_det.c), whose blocks of C are fixed by the shape. tests/model/test_model_numerics.c
 * checks both engines on 1 and 2 threads. The bits do depend on the kernel OpenBLAS picks for the
 * CPU (DYNAMIC_ARCH): the same machine type gives the same bits. */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_numerics.h"
#include "fpsim_sgemm.h"

static const char *const site_names[FPSIM_SITE_COUNT] = {"qkv", "attn_out", "gate_up", "down",
                                                         "lm_head"};
static const char *const act_names[FPSIM_ACT_COUNT] = {"fp64", "fp32", "bf16"};

const char *fpsim_site_name(int site) {
    return site >= 0 && site < FPSIM_SITE_COUNT ? site_names[site] : NULL;
}
const char *fpsim_act_round_name(int act_round) {
    return act_round >= 0 && act_round < FPSIM_ACT_COUNT ? act_names[act_round] : NULL;
}

/* Double -> float is correctly rounded (RNE, IEEE 754 convertFormat) in C on SSE2 hardware,
 * with -fexcess-precision=standard so that the float is not kept wider. */
double fpsim_f64_round_f32(double x) {
    volatile float f = (float)x;
    return (double)f;
}

/* Double -> bfloat16 value, rounded once (not via float: that would round twice).
 * bfloat16 has float32's exponent range and 8 significant bits, so the quantum of x is
 * 2^(max(e, -126) - 7), e = floor(log2|x|); x / quantum is exact (a power-of-two scaling that
 * stays in double range), rint() rounds it to an integer with ties to even (default rounding
 * mode), and scaling back is exact. The largest finite bfloat16 is (2 - 2^-7) * 2^127; a result
 * above it is the rounding of a value at or past the overflow threshold, hence +-Inf
 * (PyTorch's c10::BFloat16 round_to_nearest_even behaves the same). */
double fpsim_f64_round_bf16(double x) {
    /* Fast path (added for the mismatch engines, same results): a normal bf16 range value
     * rounds by adding half an ulp of bit 45 (plus the kept lsb: ties to even) to the double's
     * bits and clearing the 45 discarded bits; a carry into the exponent is exact. */
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    uint64_t mag = b & 0x7FFFFFFFFFFFFFFFull;
    if (mag >= 0x3810000000000000ull && mag < 0x7FF0000000000000ull) { /* 2^-126 <= |x| < Inf */
        b += (1ull << 44) - 1u + ((b >> 45) & 1u);
        b &= ~((1ull << 45) - 1u);
        double r;
        memcpy(&r, &b, sizeof r);
        if (fabs(r) > 0x1.FEp127) return copysign(INFINITY, x);
        return r;
    }
    if (x == 0.0 || !isfinite(x)) return x;
    int e = ilogb(x);
    if (e < -126) e = -126;
    double r = ldexp(rint(ldexp(x, 7 - e)), e - 7);
    const double bf16_max = ldexp(255.0, 120); /* 0x7F7F: (2 - 2^-7) * 2^127 */
    if (fabs(r) > bf16_max) return copysign(INFINITY, x);
    return r;
}

/* Array rounding, vectorized: the integer fast path of fpsim_f64_round_bf16 as selects (no
 * branch), so the compiler runs it 2, 4 or 8 doubles at a time (clones picked at load time, the
 * same integer operations on each: the same bits). Values that the fast path does not cover
 * (zero, Inf, NaN, below 2^-126) keep their input here; the nonzero finite ones among them
 * (bfloat16 subnormals) are counted and rounded afterwards by the scalar routine. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ROUND_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ROUND_CLONES
#endif

#define F64_ABS_MASK 0x7FFFFFFFFFFFFFFFull
#define F64_MIN_NORMAL_BF16 0x3810000000000000ull /* 2^-126 */
#define F64_INF_BITS 0x7FF0000000000000ull
#define F64_MAX_BF16 0x47EFE00000000000ull       /* 0x1.FEp127: the largest finite bfloat16 */

ROUND_CLONES static size_t round_bf16_fast(double *out, const double *in, size_t n)
{
    size_t tiny = 0;
    for (size_t i = 0; i < n; i++) {
        union { double d; uint64_t u; } v = {in[i]}; /* (a union, not memcpy: it vectorizes) */
        uint64_t b = v.u, r;
        uint64_t mag = b & F64_ABS_MASK;
        r = (b + (1ull << 44) - 1u + ((b >> 45) & 1u)) & ~((1ull << 45) - 1u);
        r = (r & F64_ABS_MASK) > F64_MAX_BF16 ? (b & ~F64_ABS_MASK) | F64_INF_BITS : r;
        r = mag >= F64_MIN_NORMAL_BF16 && mag < F64_INF_BITS ? r : b;
        tiny += (size_t)(mag != 0 && mag < F64_MIN_NORMAL_BF16);
        v.u = r;
        out[i] = v.d;
    }
    return tiny;
}

/* out[i] = fpsim_f64_round_bf16(in[i]); out may be in. */
static void round_bf16_array(double *out, const double *in, size_t n)
{
    if (round_bf16_fast(out, in, n) == 0) return;
    for (size_t i = 0; i < n; i++) { /* out[i] still holds in[i] where the fast path passed */
        uint64_t b;
        memcpy(&b, &out[i], sizeof b);
        if ((b & F64_ABS_MASK) != 0 && (b & F64_ABS_MASK) < F64_MIN_NORMAL_BF16)
            out[i] = fpsim_f64_round_bf16(out[i]);
    }
}

ROUND_CLONES static void round_f32_array(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) x[i] = (double)(float)x[i];
}

void fpsim_act_round_array(double *x, size_t n, int act_round) {
    if (act_round == FPSIM_ACT_FP32) round_f32_array(x, n);
    else if (act_round == FPSIM_ACT_BF16) round_bf16_array(x, x, n);
}

/* Double to float, RNE (a C cast). */
ROUND_CLONES static void cast_f32_array(float *out, const double *in, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = (float)in[i];
}

void fpsim_act_round_to_float(float *out, const double *in, size_t n, int act_round) {
    if (act_round != FPSIM_ACT_BF16) {
        cast_f32_array(out, in, n);
        return;
    }
    double buf[1024]; /* bfloat16 values in double, a stack chunk at a time, then to float */
    for (size_t i0 = 0; i0 < n; i0 += 1024) {
        size_t k = n - i0 < 1024 ? n - i0 : 1024;
        round_bf16_array(buf, in + i0, k);
        cast_f32_array(out + i0, buf, k); /* exact: every bfloat16 value is a float */
    }
}

int fpsim_numerics_act_round(const fpsim_numerics *nx, int layer) {
    if (nx->act_round_at) return nx->act_round_at(nx->ctx, layer);
    return nx->act_round;
}

fpsim_status fpsim_gemm_call_check(const fpsim_gemm_call *c) {
    if (!c || !c->a.data || !c->b.data || !c->c)
        return fpsim_fail(FPSIM_EINVAL, "gemm call: missing operand or output pointer");
    if (c->M == 0 || c->N == 0 || c->K == 0)
        return fpsim_fail(FPSIM_ESHAPE, "gemm call: empty shape M=%zu N=%zu K=%zu", c->M, c->N,
                          c->K);
    size_t a_cols = c->a.trans ? c->M : c->K;
    size_t b_cols = c->b.trans ? c->K : c->N;
    if (c->a.ld < a_cols)
        return fpsim_fail(FPSIM_ESHAPE, "gemm call: A's ld %zu < %zu stored columns", c->a.ld,
                          a_cols);
    if (c->b.ld < b_cols)
        return fpsim_fail(FPSIM_ESHAPE, "gemm call: B's ld %zu < %zu stored columns", c->b.ld,
                          b_cols);
    if (c->ldc < c->N)
        return fpsim_fail(FPSIM_ESHAPE, "gemm call: ldc %zu < N %zu", c->ldc, c->N);
    if ((unsigned)c->site >= FPSIM_SITE_COUNT || (unsigned)c->pass >= FPSIM_PASS_COUNT)
        return fpsim_fail(FPSIM_EINVAL, "gemm call: site %d or pass %d out of range", c->site,
                          c->pass);
    return FPSIM_OK;
}

static fpsim_status plain_gemm_fp64(void *ctx, const fpsim_gemm_call *c) {
    (void)ctx;
    fpsim_status st = fpsim_gemm_call_check(c);
    if (st) return st;
    cblas_dgemm(CblasRowMajor, c->a.trans ? CblasTrans : CblasNoTrans,
                c->b.trans ? CblasTrans : CblasNoTrans, (int)c->M, (int)c->N, (int)c->K, 1.0,
                c->a.data, (int)c->a.ld, c->b.data, (int)c->b.ld, c->accumulate ? 1.0 : 0.0, c->c,
                (int)c->ldc);
    return FPSIM_OK;
}

/* Copy a stored rows x cols operand (row stride ld) into a dense float matrix, rounding RNE. */
static void pack_f32(float *dst, const double *src, size_t rows, size_t cols, size_t ld) {
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) dst[i * cols + j] = (float)src[i * ld + j];
}

static fpsim_status plain_gemm_fp32(void *ctx, const fpsim_gemm_call *c) {
    (void)ctx;
    fpsim_status st = fpsim_gemm_call_check(c);
    if (st) return st;
    size_t a_rows = c->a.trans ? c->K : c->M, a_cols = c->a.trans ? c->M : c->K;
    size_t b_rows = c->b.trans ? c->N : c->K, b_cols = c->b.trans ? c->K : c->N;
    float *a = malloc(sizeof(float) * a_rows * a_cols);
    float *b = malloc(sizeof(float) * b_rows * b_cols);
    float *p = malloc(sizeof(float) * c->M * c->N);
    if (!a || !b || !p) {
        free(a), free(b), free(p);
        return fpsim_fail(FPSIM_ENOMEM, "fp32 gemm: no memory for %zux%zux%zu operands", c->M,
                          c->N, c->K);
    }
    pack_f32(a, c->a.data, a_rows, a_cols, c->a.ld);
    pack_f32(b, c->b.data, b_rows, b_cols, c->b.ld);
    fpsim_sgemm(c->a.trans ? CblasTrans : CblasNoTrans, c->b.trans ? CblasTrans : CblasNoTrans, (int)c->M,
                (int)c->N, (int)c->K, a, (int)a_cols, b, (int)b_cols, p, (int)c->N);
    for (size_t i = 0; i < c->M; i++) {
        double *row = c->c + i * c->ldc;
        const float *prow = p + i * c->N;
        if (c->accumulate) {
            /* an FP32 gradient buffer: the sum of two floats, rounded to float */
            for (size_t j = 0; j < c->N; j++) row[j] = (double)((float)row[j] + prow[j]);
        } else {
            for (size_t j = 0; j < c->N; j++) row[j] = (double)prow[j];
        }
    }
    free(a), free(b), free(p);
    return FPSIM_OK;
}

fpsim_numerics fpsim_numerics_fp64(void) {
    fpsim_numerics nx = {"fp64", NULL, plain_gemm_fp64, FPSIM_ACT_FP64, NULL};
    return nx;
}

fpsim_numerics fpsim_numerics_fp32(void) {
    fpsim_numerics nx = {"fp32", NULL, plain_gemm_fp32, FPSIM_ACT_FP32, NULL};
    return nx;
}
