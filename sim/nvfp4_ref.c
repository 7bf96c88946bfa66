/* nvfp4_ref.c: slow independent reference of TE's NVFP4 chain for a columnwise (wgrad) operand,
 * with the expectations of its stochastic rounding (fpsim_nvfp4ref.h).
 *
 * Every step is written the plain way on purpose (table searches, double sums), so that it can
 * check formats/block_nvfp4.c, which computes the same bits with integer tricks and vector code. */
#include "fpsim_nvfp4ref.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_core.h"
#include "fpsim_parallel.h"

/* The 127 finite non-negative E4M3 (OCP e4m3fn) values in increasing order, code = index:
 * exponent field e, mantissa m: e = 0 -> m * 2^-9 (subnormal), else (1 + m/8) * 2^(e-7);
 * code 0x7F is NaN. */
static void e4m3_table(float v[127])
{
    for (int c = 0; c < 127; c++) {
        int e = c >> 3, m = c & 7;
        v[c] = e == 0 ? ldexpf((float)m, -9) : ldexpf(1.0f + (float)m / 8.0f, e - 7);
    }
}

/* E4M3 of d >= 0 from the value table: the first value >= d by bisection, then (RNE) the nearer
 * of it and the one below, a tie to the even code (even mantissa). */
static float e4m3_pick(const float v[127], float d, int scale_rule)
{
    if (!(d > 0.0f)) return 0.0f;
    if (d >= 448.0f) return 448.0f; /* satfinite (448 is also the largest value to round up to) */
    int lo = 0, hi = 126; /* v[hi] >= d */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (v[mid] >= d) hi = mid;
        else lo = mid + 1;
    }
    if (scale_rule == FPSIM_NVFP4REF_SCALE_UP || v[hi] == d) return v[hi];
    double up = (double)v[hi] - d, down = d - (double)v[hi - 1];
    if (up < down) return v[hi];
    if (down < up) return v[hi - 1];
    return (hi & 1) == 0 ? v[hi] : v[hi - 1];
}

float fpsim_nvfp4ref_e4m3(float d, int scale_rule)
{
    float v[127];
    e4m3_table(v);
    return e4m3_pick(v, d, scale_rule);
}

void fpsim_nvfp4ref_e2m1_bracket(double ay, double *lo, double *hi)
{
    static const double grid[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};
    int i = 0;
    while (i < 6 && ay >= grid[i + 1]) i++;
    *lo = grid[i];
    *hi = grid[i + 1];
}

/* E2M1 nearest, ties to the even code (codes 0..7 are the grid points in order). */
static double e2m1_rne(double ay)
{
    if (ay >= 6.0) return 6.0;
    double lo, hi;
    fpsim_nvfp4ref_e2m1_bracket(ay, &lo, &hi);
    double mid = 0.5 * (lo + hi);
    if (ay < mid) return lo;
    if (ay > mid) return hi;
    /* a tie: the grid index of lo is even iff lo is one of 0, 1, 2, 4 */
    return (lo == 0.0 || lo == 1.0 || lo == 2.0 || lo == 4.0) ? lo : hi;
}

/* BF16 round to nearest even of a double (8 significant bits; subnormals on the 2^-133 grid). */
static float bf16_rne(double v)
{
    if (v == 0.0 || !isfinite(v)) return (float)v;
    if (fabs(v) < 0x1p-126) return (float)(nearbyint(v / 0x1p-133) * 0x1p-133);
    int e;
    double m = frexp(v, &e); /* v = m 2^e, 0.5 <= |m| < 1 */
    return (float)ldexp(nearbyint(ldexp(m, 8)), e - 8); /* default FE_TONEAREST: ties to even */
}

void fpsim_nvfp4ref_rht16(float y[16], const float x[16])
{
    /* TE get_wgrad_sign_vector; H16 Sylvester, normalised by 1/4 */
    static const int sign[16] = {1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};
    for (int j = 0; j < 16; j++) {
        double acc = 0.0; /* 16 terms of a float times +-1/4: exact in double over < 29 binades */
        for (int i = 0; i < 16; i++) {
            int odd = __builtin_popcount((unsigned)(i & j)) & 1;
            acc += (odd ? -0.25 : 0.25) * sign[i] * (double)x[i];
        }
        y[j] = bf16_rne(acc);
    }
}

/* One element's value under the chosen element rule, y = x * enc already in FP32. */
static double elem_value(float y, int rule, uint32_t byte)
{
    double ay = fabs((double)y), q;
    if (rule == FPSIM_NVFP4REF_NOCLIP) return (double)y;
    if (rule == FPSIM_NVFP4REF_RNE) {
        q = e2m1_rne(ay);
    } else if (ay >= 6.0) {
        q = 6.0; /* satfinite: the part above 6 is lost whatever the random bits */
    } else if (rule == FPSIM_NVFP4REF_EXPECT_IDEAL) {
        q = ay;
    } else {
        double lo, hi;
        fpsim_nvfp4ref_e2m1_bracket(ay, &lo, &hi);
        double f256 = 256.0 * (ay - lo) / (hi - lo); /* exact: hi - lo is a power of two */
        if (rule == FPSIM_NVFP4REF_SR)
            /* TE: the byte is added at the top of the discarded fraction, then truncate:
             * up iff byte / 256 + frac >= 1 */
            q = (double)byte + f256 >= 256.0 ? hi : lo;
        else
            q = lo + (hi - lo) * floor(f256) / 256.0; /* floor(256 frac) of the 256 bytes go up */
    }
    return y < 0.0f ? -q : q;
}

/* The work of one call, shared by the column ranges. */
typedef struct ref_job {
    const fpsim_nvfp4ref_opts *o;
    const float *x;
    float *v, *deq;
    size_t rows, cols;
    float s_enc, s_dec;
    float e4m3v[127];
    float *col_amax;                  /* [cols] */
    fpsim_nvfp4ref_counts *col_counts; /* [cols] */
} ref_job;

/* Columns [c0, c1): the columnwise copy v (cols x rows), rotated per block of 16 tokens when
 * asked, and each column's amax. */
static void ref_copy_cols(void *ctx, size_t c0, size_t c1)
{
    ref_job *j = ctx;
    for (size_t c = c0; c < c1; c++) {
        float *vc = j->v + c * j->rows, amax = 0.0f;
        for (size_t t = 0; t < j->rows; t++) vc[t] = j->x[t * j->cols + c];
        if (j->o->rht)
            for (size_t t = 0; t < j->rows; t += 16) {
                float blk[16];
                fpsim_nvfp4ref_rht16(blk, vc + t);
                memcpy(vc + t, blk, sizeof blk);
            }
        for (size_t t = 0; t < j->rows; t++) amax = fmaxf(amax, fabsf(vc[t]));
        j->col_amax[c] = amax;
    }
}

/* Columns [c0, c1): blocks, elements, counts per column. */
static void ref_quantize_cols(void *ctx, size_t c0, size_t c1)
{
    ref_job *j = ctx;
    const fpsim_nvfp4ref_opts *o = j->o;
    const float sixth = 1.0f / 6.0f, s_enc = j->s_enc, s_dec = j->s_dec;
    for (size_t c = c0; c < c1; c++) {
        fpsim_nvfp4ref_counts cnt;
        memset(&cnt, 0, sizeof cnt);
        uint32_t word = 0;
        for (size_t k0 = c * j->rows; k0 < (c + 1) * j->rows; k0 += 16) {
            const float *vb = j->v + k0;
            float bmax = 0.0f;
            for (int i = 0; i < 16; i++) bmax = fmaxf(bmax, fabsf(vb[i]));
            float d = fminf(bmax * (s_enc * sixth), FLT_MAX); /* one rounding of the product */
            float s = e4m3_pick(j->e4m3v, d, o->scale);
            float enc = fminf(1.0f / (s * s_dec), FLT_MAX);
            if (bmax > 0.0f) {
                cnt.blocks++;
                cnt.blocks_over6 += bmax * enc > 6.0f;
                cnt.blocks_zero_scale += s == 0.0f;
                if (s > 0.0f && (double)(bmax * enc) > cnt.over6_max) cnt.over6_max = bmax * enc;
            }
            for (int i = 0; i < 16; i++) {
                /* stored element k = c * rows + t: TE's columnwise index, and its SR byte */
                size_t k = k0 + (size_t)i, t = k - c * j->rows;
                if ((k & 3u) == 0 && o->elem == FPSIM_NVFP4REF_SR)
                    word = fpsim_sr_word(o->seed, o->stream, k / 4);
                uint32_t byte = (word >> (8u * (uint32_t)(k & 3u))) & 0xFFu;
                float y = vb[i] * enc;
                cnt.elems += vb[i] != 0.0f;
                cnt.elems_sat += fabsf(y) > 6.0f;
                double dq;
                if (o->elem == FPSIM_NVFP4REF_INPUT) {
                    dq = s == 0.0f ? 0.0 : (double)vb[i];
                } else if (o->elem == FPSIM_NVFP4REF_RNE || o->elem == FPSIM_NVFP4REF_SR) {
                    /* the block quantizer's order: (q * s) * S_dec in FP32 */
                    float q = (float)elem_value(y, o->elem, byte);
                    dq = (double)((q * s) * s_dec); /* exact back to float */
                } else {
                    dq = elem_value(y, o->elem, byte) * (double)s * (double)s_dec;
                }
                j->deq[t * j->cols + c] = (float)dq;
            }
        }
        j->col_counts[c] = cnt;
    }
}

fpsim_status fpsim_nvfp4ref_quantize(float *deq, fpsim_nvfp4ref_counts *counts, const float *x,
                                     size_t rows, size_t cols, const fpsim_nvfp4ref_opts *o)
{
    if (rows % 16 != 0)
        return fpsim_fail(FPSIM_ESHAPE, "nvfp4 reference: %zu rows is not a multiple of 16", rows);
    ref_job j;
    memset(&j, 0, sizeof j);
    j.o = o;
    j.x = x;
    j.deq = deq;
    j.rows = rows;
    j.cols = cols;
    j.v = malloc(rows * cols * sizeof *j.v);
    j.col_amax = malloc(cols * sizeof *j.col_amax);
    j.col_counts = malloc(cols * sizeof *j.col_counts);
    if (!j.v || !j.col_amax || !j.col_counts) {
        free(j.v);
        free(j.col_amax);
        free(j.col_counts);
        return fpsim_fail(FPSIM_ENOMEM, "nvfp4 reference: out of memory");
    }
    /* Columns are independent (their SR bytes are keyed by the element index), so any split of
     * them across threads gives the same bits. */
    fpsim_parallel_for(cols, 1, ref_copy_cols, &j, o->threads);
    /* Tensor scale: S_enc = fp32(2688) / amax, S_dec = 1 / S_enc (FP32 divisions). */
    float amax = 0.0f;
    for (size_t c = 0; c < cols; c++) amax = fmaxf(amax, j.col_amax[c]);
    j.s_enc = fminf(2688.0f / amax, FLT_MAX);
    if (amax == 0.0f || j.s_enc == 0.0f) j.s_enc = 1.0f;
    j.s_dec = 1.0f / j.s_enc;
    e4m3_table(j.e4m3v);
    fpsim_parallel_for(cols, 1, ref_quantize_cols, &j, o->threads);
    fpsim_nvfp4ref_counts cnt;
    memset(&cnt, 0, sizeof cnt);
    for (size_t c = 0; c < cols; c++) {
        const fpsim_nvfp4ref_counts *q = &j.col_counts[c];
        cnt.blocks += q->blocks;
        cnt.blocks_over6 += q->blocks_over6;
        cnt.blocks_zero_scale += q->blocks_zero_scale;
        cnt.elems += q->elems;
        cnt.elems_sat += q->elems_sat;
        cnt.over6_max = fmax(cnt.over6_max, q->over6_max);
    }
    free(j.v);
    free(j.col_amax);
    free(j.col_counts);
    if (counts) *counts = cnt;
    return FPSIM_OK;
}
