/* numerics_recipe.c: the recipe engine, fpsim_numerics.gemm for a block-scaled recipe.
 *
 * One call, in order:
 *   1. check the call against the convention of fpsim_numerics.h;
 *   2. for A and B: copy the stored operand (rows x cols, row stride ld) into a contiguous
 *      double buffer; decide whether the recipe quantizes it at (layer, site, pass, role);
 *      quantized: cast to float32 (RNE: the FP32/BF16 tensor a real quantizer reads), quantize
 *      along the reduction dimension with fpsim_block_quantize (axis ROWS when K is the stored
 *      row, COLS otherwise: TE's columnwise copy), and multiply the dequantized values;
 *      not quantized: round to the plan's operand precision (BF16 / FP32), or keep double;
 *   3. engine_multiply(): C = op(A) op(B) with sgemm on the float operands (FP32 accumulate) or the
 *      plan's accumulation model (FP8 codes + scales, BF16 operands: fpsim_gemm.h), or
 *      the fp64 reference engine's own dgemm when neither operand is rounded at all;
 *   4. round C as the emulated kernel writes it (BF16 output for fprop/dgrad under a BF16
 *      recipe, FP32 for wgrad: TE accumulates weight gradients in FP32 main_grad);
 *   5. hand the call and both operand reports to the observer.
 *
 * Stochastic rounding: seed = fpsim_replay_step_seed(engine seed, step), stream =
 * fpsim_replay_stream(layer, site, pass, role), element index = position in the stored
 * (quantized) operand: the same bits on any thread count and in any run order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "fpsim_parallel.h"
#include "fpsim_replay.h"
#include "fpsim_sgemm.h"

/* The 16-point RHT as a matrix, read off fpsim_rht16 (block quantizer's TE/torchao sign vector)
 * applied to the unit vectors: entries are +-0.25, exact in BF16, so H[a][b] is exact and H is
 * orthogonal (H H^T = I). */
static void rht_matrix(double h[16][16])
{
    for (int b = 0; b < 16; b++) {
        float e[16] = {0}, y[16];
        e[b] = 1.0f;
        fpsim_rht16(y, e);
        for (int a = 0; a < 16; a++) h[a][b] = y[a];
    }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ENGINE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define ENGINE_INLINE __attribute__((always_inline)) inline /* into each clone */
#else
#define ENGINE_CLONES
#define ENGINE_INLINE inline
#endif

/* One group of 16 rows, 8 columns from j0: row a of the output = sum over b of g[a][b] * row b,
 * b in increasing order from 0.0, for every element (fixed order, so fixed bits). The 16 input
 * values of a column stay in registers across the 16 outputs. */
static ENGINE_INLINE void rht_group8(double *out, const double *in, size_t cols, size_t j0, const double g[16][16])
{
    double x[16][8];
    for (int b = 0; b < 16; b++)
        for (int l = 0; l < 8; l++) x[b][l] = in[(size_t)b * cols + j0 + (size_t)l];
    for (int a = 0; a < 16; a += 4) { /* four outputs at once: four independent addition chains */
        double acc[4][8];
        for (int k = 0; k < 4; k++)
            for (int l = 0; l < 8; l++) acc[k][l] = 0.0;
        for (int b = 0; b < 16; b++)
            for (int k = 0; k < 4; k++)
                for (int l = 0; l < 8; l++) acc[k][l] += g[a + k][b] * x[b][l];
        for (int k = 0; k < 4; k++)
            for (int l = 0; l < 8; l++) out[(size_t)(a + k) * cols + j0 + (size_t)l] = acc[k][l];
    }
}

/* The same for one column j (the columns past the last whole 8). */
static ENGINE_INLINE void rht_group1(double *out, const double *in, size_t cols, size_t j, const double g[16][16])
{
    for (int a = 0; a < 16; a++) {
        double acc = 0;
        for (int b = 0; b < 16; b++) acc += g[a][b] * in[(size_t)b * cols + j];
        out[(size_t)a * cols + j] = acc;
    }
}

/* Rotate (inverse = 0: y = H x; inverse = 1: x = H^T y) every group of 16 consecutive rows of a
 * rows x cols matrix, column by column: the RHT runs along the blocked dimension, which for a
 * columnwise copy is the rows of the stored operand.
 * (The clones run the same multiplications and additions in the same order, no FMA: the same
 * bits at every vector width.) */
ENGINE_CLONES static void rht_rows_f64(double *out, const double *in, size_t rows, size_t cols,
                                       const double h[16][16], int inverse)
{
    double g[16][16];
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 16; b++) g[a][b] = inverse ? h[b][a] : h[a][b];
    for (size_t r0 = 0; r0 + 16 <= rows; r0 += 16) {
        double *o = out + r0 * cols;
        const double *x = in + r0 * cols;
        size_t j = 0;
        for (; j + 8 <= cols; j += 8) rht_group8(o, x, cols, j, g);
        for (; j < cols; j++) rht_group1(o, x, cols, j, g);
    }
}

/* The forward rotation for the statistics' reference, faster where it gives the same bits. H is
 * a signed Sylvester-Hadamard matrix, H[a][b] = q[b] (-1)^popcount(a & b) with q[b] = +-0.25
 * (fpsim_rht16: TE's sign vector, the Walsh-Hadamard transform, 1/4), so H x is also the fast
 * Walsh-Hadamard transform of q x: 4 butterfly stages instead of 16 terms per output. The two
 * orders of addition give the same double exactly when every partial sum is exact: inputs with
 * 8-bit significands (BF16 values: the recipe's activations and gradients in the accumulated
 * view) whose nonzero exponents lie within 40 binades of each other, far from the double range
 * ends: the exact sum of 16 terms +-x/4 then needs at most 8 + 40 + 5 = 53 bits. A block of 16
 * rows x 8 columns that passes this check takes the transform; any other (FP64 inputs: the local
 * view) the 16-term sums, unchanged. */
static ENGINE_INLINE int fwht_exact(const double *in, size_t cols, size_t j0, size_t w)
{
    uint64_t low = 0;
    int64_t emin = 2047, emax = 0;
    int any = 0;
    for (int b = 0; b < 16; b++)
        for (size_t l = 0; l < w; l++) {
            uint64_t u;
            memcpy(&u, &in[(size_t)b * cols + j0 + l], sizeof u);
            int64_t e = (int64_t)((u >> 52) & 0x7FF);
            int nz = (u & 0x7FFFFFFFFFFFFFFFull) != 0;
            low |= u & ((1ull << 45) - 1); /* below a BF16 significand */
            emin = nz && e < emin ? e : emin;
            emax = nz && e > emax ? e : emax;
            any |= nz;
        }
    return low == 0 && (!any || (emin > 64 && emax < 1983 && emax - emin <= 40));
}

/* Eight doubles of one row, as one value of GCC's vector extension: element-wise IEEE operations,
 * lowered to whatever vector width the clone has (the same bits on each). */
typedef double engine_v8d __attribute__((vector_size(64)));

static ENGINE_INLINE void v8d_load(engine_v8d *v, const double *p)
{
    memcpy(v, p, sizeof *v);
}

static ENGINE_INLINE void v8d_store(double *p, const engine_v8d *v)
{
    memcpy(p, v, sizeof *v);
}

static ENGINE_INLINE void fwht_group8(double *out, const double *in, size_t cols, size_t j0, const double q[16])
{
    engine_v8d v[16];
    for (int b = 0; b < 16; b++) {
        v8d_load(&v[b], in + (size_t)b * cols + j0);
        v[b] = q[b] * v[b];
    }
    for (int h = 1; h < 16; h <<= 1)
        for (int i = 0; i < 16; i += 2 * h)
            for (int j = i; j < i + h; j++) {
                engine_v8d x = v[j], y = v[j + h];
                v[j] = x + y;
                v[j + h] = x - y;
            }
    for (int a = 0; a < 16; a++) v8d_store(out + (size_t)a * cols + j0, &v[a]);
}

static ENGINE_INLINE void fwht_group1(double *out, const double *in, size_t cols, size_t j, const double q[16])
{
    double v[16];
    for (int b = 0; b < 16; b++) v[b] = q[b] * in[(size_t)b * cols + j];
    for (int h = 1; h < 16; h <<= 1)
        for (int i = 0; i < 16; i += 2 * h)
            for (int k = i; k < i + h; k++) {
                double a = v[k], b = v[k + h];
                v[k] = a + b;
                v[k + h] = a - b;
            }
    for (int a = 0; a < 16; a++) out[(size_t)a * cols + j] = v[a];
}

/* The 16-term sums of rht_group8 in the same order, for a signed Sylvester H: H[a][b] x_b =
 * (-1)^popcount(a & b) (q[b] x_b) exactly (negation is exact and RNE is symmetric), so each
 * term is +-v_b with v_b = q[b] x_b formed once, and the signs are constants of the unrolled
 * loops: adds and subtractions, no multiplications, the same bits. */
static ENGINE_INLINE void rht_sylvester_group8(double *out, const double *in, size_t cols, size_t j0,
                                               const double q[16])
{
    engine_v8d v[16];
    for (int b = 0; b < 16; b++) {
        v8d_load(&v[b], in + (size_t)b * cols + j0);
        v[b] = q[b] * v[b];
    }
#pragma GCC unroll 16
    for (int a = 0; a < 16; a++) {
        engine_v8d acc = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma GCC unroll 16
        for (int b = 0; b < 16; b++)
            acc = __builtin_popcount((unsigned)(a & b)) & 1 ? acc - v[b] : acc + v[b];
        v8d_store(out + (size_t)a * cols + j0, &acc);
    }
}

ENGINE_CLONES static void rht_rows_ref_f64(double *out, const double *in, size_t rows, size_t cols,
                                           const double q[16], const double h[16][16])
{
    for (size_t r0 = 0; r0 + 16 <= rows; r0 += 16) {
        double *o = out + r0 * cols;
        const double *x = in + r0 * cols;
        size_t j = 0;
        for (; j + 8 <= cols; j += 8)
            if (fwht_exact(x, cols, j, 8)) fwht_group8(o, x, cols, j, q);
            else rht_sylvester_group8(o, x, cols, j, q);
        for (; j < cols; j++)
            if (fwht_exact(x, cols, j, 1)) fwht_group1(o, x, cols, j, q);
            else rht_group1(o, x, cols, j, h);
    }
}

/* q[b] when h has the signed Sylvester form above (1), else 0 (the 16-term sums are used). */
static int rht_sylvester(double q[16], const double h[16][16])
{
    for (int b = 0; b < 16; b++) {
        q[b] = h[0][b];
        if (q[b] != 0.25 && q[b] != -0.25) return 0;
        for (int a = 0; a < 16; a++)
            if (h[a][b] != (__builtin_popcount((unsigned)(a & b)) & 1 ? -q[b] : q[b])) return 0;
    }
    return 1;
}

struct fpsim_recipe_engine {
    fpsim_engine_plan plan;
    int layers;
    uint64_t seed;
    uint64_t step;
    int threads;
    int stats_on;
    fpsim_gemm_observer observer;
    void *observer_ctx;
    /* Scratch, grown as needed: per operand a double copy, a float copy, a quantized tensor. */
    double *dbuf[2];
    float *fbuf[2];
    size_t dcap[2], fcap[2];
    fpsim_qtensor q[2];
    int rotated[2];      /* the operand's dequantized values are in the RHT domain */
    double *rot[2];      /* the received operand rotated the same way (the stats' reference) */
    size_t rotcap[2];
    double rht[16][16];
    double rht_q[16];    /* H's signs x 1/4 when fwht_rows_f64 applies */
    int rht_fast;
    float *fc;
    size_t fccap;
};

uint32_t fpsim_replay_stream(int layer, int site, int pass, int role)
{
    uint32_t l = (uint32_t)(layer + 1);
    return ((l * FPSIM_SITE_COUNT + (uint32_t)site) * FPSIM_PASS_COUNT + (uint32_t)pass) *
               FPSIM_ROLE_COUNT + (uint32_t)role;
}

uint64_t fpsim_replay_step_seed(uint64_t seed, uint64_t step)
{
    return seed + step * UINT64_C(0x9E3779B97F4A7C15);
}

static fpsim_status grow_d(double **p, size_t *cap, size_t n)
{
    if (n <= *cap) return FPSIM_OK;
    double *q = realloc(*p, n * sizeof *q);
    if (!q) return fpsim_fail(FPSIM_ENOMEM, "recipe engine: cannot allocate %zu doubles", n);
    *p = q;
    *cap = n;
    return FPSIM_OK;
}

static fpsim_status grow_f(float **p, size_t *cap, size_t n)
{
    if (n <= *cap) return FPSIM_OK;
    float *q = realloc(*p, n * sizeof *q);
    if (!q) return fpsim_fail(FPSIM_ENOMEM, "recipe engine: cannot allocate %zu floats", n);
    *p = q;
    *cap = n;
    return FPSIM_OK;
}

fpsim_status fpsim_recipe_engine_create(fpsim_recipe_engine **out, const fpsim_engine_plan *plan,
                                        int layers, uint64_t seed, int threads)
{
    *out = NULL;
    if (!plan || layers <= 0) return fpsim_fail(FPSIM_EINVAL, "recipe engine: no plan or no layers");
    fpsim_recipe_engine *e = calloc(1, sizeof *e);
    if (!e) return fpsim_fail(FPSIM_ENOMEM, "recipe engine: out of memory");
    e->plan = *plan;
    e->layers = layers;
    e->seed = seed;
    e->threads = threads;
    e->stats_on = 1;
    rht_matrix(e->rht);
    e->rht_fast = rht_sylvester(e->rht_q, e->rht);
    *out = e;
    return FPSIM_OK;
}

void fpsim_recipe_engine_free(fpsim_recipe_engine *e)
{
    if (!e) return;
    for (int i = 0; i < 2; i++) {
        free(e->dbuf[i]);
        free(e->fbuf[i]);
        free(e->rot[i]);
        fpsim_qtensor_free(&e->q[i]);
    }
    free(e->fc);
    free(e);
}

void fpsim_recipe_engine_set_step(fpsim_recipe_engine *e, uint64_t step) { e->step = step; }

void fpsim_recipe_engine_set_observer(fpsim_recipe_engine *e, fpsim_gemm_observer fn, void *ctx)
{
    e->observer = fn;
    e->observer_ctx = ctx;
}

void fpsim_recipe_engine_set_stats(fpsim_recipe_engine *e, int on) { e->stats_on = on; }

/* Operand and output conversions over threads: element-wise, so any split gives the same bits.
 * A thread start costs about what converting 64K elements does, so smaller arrays stay on the
 * calling thread. */
enum { CONVERT_GRAIN = 1 << 16 };

typedef struct convert_job {
    float *f;          /* to_float: f[i] = round(d[i]) */
    const double *d;
    int round;
    double *c;         /* to_output: row i of c (stride ldc) = fc row i, to BF16 if out_round is */
    const float *fc;
    size_t ldc, n;
    int out_round;
} convert_job;

static void convert_to_float(void *ctx, size_t b, size_t e)
{
    const convert_job *j = ctx;
    fpsim_act_round_to_float(j->f + b, j->d + b, e - b, j->round);
}

static void convert_to_output(void *ctx, size_t b, size_t e)
{
    const convert_job *j = ctx;
    for (size_t i = b; i < e; i++) {
        double *row = j->c + i * j->ldc;
        const float *src = j->fc + i * j->n;
        for (size_t k = 0; k < j->n; k++) row[k] = (double)src[k];
        if (j->out_round == FPSIM_ACT_BF16) fpsim_act_round_array(row, j->n, FPSIM_ACT_BF16);
    }
}

static void engine_to_float(const fpsim_recipe_engine *e, float *f, const double *d, size_t n, int round)
{
    convert_job j = {.f = f, .d = d, .round = round};
    fpsim_parallel_for(n, CONVERT_GRAIN, convert_to_float, &j, e->threads);
}

/* The recipe lookup, in one place: the scheme for this operand, or NULL (high precision). */
static const fpsim_scheme *engine_scheme(const fpsim_recipe_engine *e, int layer, int site, int pass,
                                         int role)
{
    const fpsim_engine_plan *p = &e->plan;
    if (!p->quantized[pass][role]) return NULL;
    if (site == FPSIM_SITE_LM_HEAD) return p->hp_head ? NULL : &p->scheme[pass][role];
    if (layer < p->hp_first_layers || layer >= e->layers - p->hp_last_layers) return NULL;
    return &p->scheme[pass][role];
}

/* The stored shape of an operand and whether K runs along its stored rows (axis ROWS). */
static void operand_shape(const fpsim_gemm_call *c, int which, size_t *rows, size_t *cols, int *axis)
{
    const fpsim_gemm_operand *op = which == 0 ? &c->a : &c->b;
    size_t other = which == 0 ? c->M : c->N;
    /* A untransposed is M x K; B transposed is stored N x K: K contiguous in both. */
    int k_contiguous = which == 0 ? !op->trans : op->trans;
    *rows = k_contiguous ? other : c->K;
    *cols = k_contiguous ? c->K : other;
    *axis = k_contiguous ? FPSIM_AXIS_ROWS : FPSIM_AXIS_COLS;
}

/* log2 of each block multiplier: how the scales sit (a shift of the whole distribution toward
 * the top of E4M3 shows scales pinned by the amax floor, toward the bottom shows flushing). */
static void report_scales(fpsim_operand_report *r, const fpsim_qtensor *q)
{
    r->scale_log2_min = INFINITY;
    r->scale_log2_max = -INFINITY;
    r->scale_log2_sum = 0;
    r->scale_count = 0;
    if (!q->scale_inv) return;
    size_t n = q->srows * q->scols;
    double gs = q->global_scale > 0 && isfinite(q->global_scale) ? q->global_scale : 1.0;
    if (q->scheme.kind != FPSIM_KIND_NVFP4) gs = 1.0;
    /* A block scale takes few values (an E4M3 or E8M0 code, times one gs per tensor): log2 of
     * each distinct value is computed once, remembered by its float bits (the same log2(s) as
     * computing it every time: only the calls are saved). */
    enum { MEMO = 512 };
    uint32_t key[MEMO];
    double val[MEMO];
    for (int k = 0; k < MEMO; k++) key[k] = 0xFFFFFFFFu; /* a NaN: never a key (skipped below) */
    for (size_t i = 0; i < n; i++) {
        double s = (double)q->scale_inv[i] * gs;
        if (!(s > 0) || !isfinite(s)) continue;
        uint32_t bits;
        memcpy(&bits, &q->scale_inv[i], sizeof bits);
        uint32_t slot = (bits ^ (bits >> 9) ^ (bits >> 20)) & (MEMO - 1);
        if (key[slot] != bits) {
            key[slot] = bits;
            val[slot] = log2(s);
        }
        double l = val[slot];
        if (l < r->scale_log2_min) r->scale_log2_min = l;
        if (l > r->scale_log2_max) r->scale_log2_max = l;
        r->scale_log2_sum += l;
        r->scale_count++;
    }
}

/* Step 2 for one operand: fill the report and the float (or double) values to multiply. */
static fpsim_status engine_prepare(fpsim_recipe_engine *e, const fpsim_gemm_call *c, int which,
                                   int fp64_path, fpsim_operand_report *r)
{
    const fpsim_gemm_operand *op = which == 0 ? &c->a : &c->b;
    size_t rows, cols;
    int axis;
    operand_shape(c, which, &rows, &cols, &axis);
    size_t n = rows * cols;
    fpsim_status st = FPSIM_OK;
    const double *d = op->data;
    if (op->ld != cols) { /* a strided operand: gather it once, contiguous */
        if ((st = grow_d(&e->dbuf[which], &e->dcap[which], n))) return st;
        double *g = e->dbuf[which];
        for (size_t i = 0; i < rows; i++) memcpy(g + i * cols, op->data + i * op->ld, cols * sizeof *g);
        d = g;
    }

    memset(r, 0, sizeof *r);
    e->rotated[which] = 0;
    r->role = op->role;
    r->rows = rows;
    r->cols = cols;
    r->received = d;
    fpsim_stats_init(&r->quant);
    r->scale_log2_min = r->scale_log2_max = NAN;
    if (fp64_path) {
        r->used = NULL;
        if (e->stats_on) st = fpsim_stats_add_f64(&r->quant, d, d, n, e->threads);
        return st;
    }

    st = grow_f(&e->fbuf[which], &e->fcap[which], n);
    if (st) return st;
    float *f = e->fbuf[which];
    const fpsim_scheme *s = engine_scheme(e, c->layer, c->site, c->pass, op->role);
    if (!s) { /* to the plan's operand precision (FP64 is not used here: the fp64 path) */
        engine_to_float(e, f, d, n, e->plan.operand_round);
        r->used = f;
        if (e->stats_on) st = fpsim_stats_add_f32(&r->quant, d, f, n, e->threads);
        return st;
    }

    engine_to_float(e, f, d, n, FPSIM_ACT_FP32);
    fpsim_qopts o;
    fpsim_qopts_default(&o);
    o.axis = axis;
    o.seed = fpsim_replay_step_seed(e->seed, e->step);
    o.stream = fpsim_replay_stream(c->layer, c->site, c->pass, op->role);
    o.want = FPSIM_QWANT_DEQUANT | (e->stats_on ? FPSIM_QWANT_STATS : 0u);
    o.threads = e->threads;
    fpsim_qtensor *q = &e->q[which];
    st = fpsim_block_quantize(q, s, f, rows, cols, &o);
    if (st) return st;
    r->quantized = 1;
    r->used = q->dequant;
    /* NVFP4 with RHT rotates the columnwise copy (block_quantize.c): its dequantized values are
     * H x, not x. Compare them with the received operand rotated the same way, exactly (only
     * the statistics need it). */
    const double *ref = d;
    if (fpsim_scheme_rotates(s, axis)) e->rotated[which] = 1;
    if (e->rotated[which] && e->stats_on) {
        if ((st = grow_d(&e->rot[which], &e->rotcap[which], n))) return st;
        if (e->rht_fast) rht_rows_ref_f64(e->rot[which], d, rows, cols, e->rht_q, e->rht);
        else rht_rows_f64(e->rot[which], d, rows, cols, e->rht, 0);
        ref = e->rot[which];
    }
    if (e->stats_on) {
        st = fpsim_stats_add_f32(&r->quant, ref, q->dequant, n, e->threads);
        fpsim_stats_add_counts(&r->quant, q->stats.saturated);
        report_scales(r, q);
    }
    return st;
}

/* Step 3: the product of the prepared operands, in FP32 with BLAS sgemm (the default, the
 * "fp32" model). Operands are contiguous in their stored shapes, so lda / ldb are their stored
 * column counts. */
static void engine_sgemm(float *fc, const fpsim_gemm_call *c, const float *a, const float *b)
{
    size_t lda = c->a.trans ? c->M : c->K;
    size_t ldb = c->b.trans ? c->K : c->N;
    fpsim_sgemm(c->a.trans ? CblasTrans : CblasNoTrans, c->b.trans ? CblasTrans : CblasNoTrans, (int)c->M,
                (int)c->N, (int)c->K, a, (int)lda, b, (int)ldb, fc, (int)c->N);
}

/* The element values of a quantized FP8 operand, decoded from its codes (exact in the format:
 * dequant = element * scale), in the K-contiguous stored layout the quantizer wrote, which is
 * the TN layout of fpsim_gemm_tn_ex ((M or N) x K) whichever axis the operand was cut along. */
static fpsim_status decode_elements(float *out, const fpsim_qtensor *q)
{
    fpsim_spec sp;
    fpsim_status st = fpsim_spec_make(&sp, (fpsim_format_id)q->scheme.elem, NULL, FPSIM_ROUND_DEFAULT, 0);
    if (st) return st;
    for (size_t i = 0; i < q->qrows; i++)
        for (size_t j = 0; j < q->qcols; j++) {
            uint32_t bits = fpsim_decode_f32(fpsim_qtensor_code(q, i, j), &sp);
            memcpy(&out[i * q->qcols + j], &bits, sizeof bits);
        }
    return FPSIM_OK;
}

/* Step 3 with the plan's accumulation model (fpsim_engine_accum_route says which path):
 * FP8 codes and scales into fpsim_gemm_tn_ex, BF16 operands into fpsim_gemm_blas, anything
 * else BLAS sgemm on the dequantized values. */
static fpsim_status engine_multiply(fpsim_recipe_engine *e, const fpsim_gemm_call *c, const fpsim_scheme *sa,
                                    const fpsim_scheme *sb, const float *a, const float *b)
{
    fpsim_accum model;
    const char *why;
    int route = fpsim_engine_accum_route(&e->plan, sa, sb, &model, &why);
    if (route == FPSIM_ROUTE_SGEMM) {
        engine_sgemm(e->fc, c, a, b);
        return FPSIM_OK;
    }
    fpsim_gemm_args args;
    memset(&args, 0, sizeof args);
    args.threads = e->threads;
    args.scale_a = args.scale_b = 1.0f;
    if (route == FPSIM_ROUTE_BF16) {
        args.fmt_a = args.fmt_b = FPSIM_BF16;
        size_t lda = c->a.trans ? c->M : c->K;
        size_t ldb = c->b.trans ? c->K : c->N;
        return fpsim_gemm_blas(e->fc, c->N, a, lda, c->a.trans, b, ldb, c->b.trans, c->M, c->N, c->K, &model,
                               &args);
    }
    const fpsim_qtensor *qa = &e->q[0], *qb = &e->q[1];
    fpsim_status st = decode_elements(e->fbuf[0], qa);
    if (!st) st = decode_elements(e->fbuf[1], qb);
    if (st) return st;
    args.fmt_a = (fpsim_format_id)sa->elem;
    args.fmt_b = (fpsim_format_id)sb->elem;
    fpsim_gemm_scales ga = {qa->scale_inv, sa->tile_rows}, gb = {qb->scale_inv, sb->tile_rows};
    if (sa->kind == FPSIM_KIND_FP8_TENSOR) {
        args.scale_a = qa->global_scale; /* fp8-tensor: the tensor's scale_inv */
        args.scale_b = qb->global_scale;
    } else {
        args.sa = &ga;
        args.sb = &gb;
    }
    return fpsim_gemm_tn_ex(e->fc, e->fbuf[0], e->fbuf[1], c->M, c->N, c->K, &model, &args);
}

static fpsim_status engine_gemm(void *ctx, const fpsim_gemm_call *c)
{
    fpsim_recipe_engine *e = ctx;
    fpsim_status st = fpsim_gemm_call_check(c);
    if (st) return st;

    /* The FP64 path: no rounding anywhere in this call: the reference engine's own GEMM. */
    int fp64_path = e->plan.operand_round == FPSIM_ACT_FP64 &&
                    !engine_scheme(e, c->layer, c->site, c->pass, c->a.role) &&
                    !engine_scheme(e, c->layer, c->site, c->pass, c->b.role);
    fpsim_operand_report ra, rb;
    if ((st = engine_prepare(e, c, 0, fp64_path, &ra))) return st;
    if ((st = engine_prepare(e, c, 1, fp64_path, &rb))) return st;

    /* Both operands rotated by the same orthogonal H along K: H^T H = I, the product is the
     * product (TE's wgrad GEMM on RHT'd operands). One rotated alone would not be: rotate it
     * back, in double, then to float. */
    if (!fp64_path && e->rotated[0] != e->rotated[1]) {
        int w = e->rotated[0] ? 0 : 1;
        const fpsim_operand_report *r = w == 0 ? &ra : &rb;
        size_t n = r->rows * r->cols;
        if ((st = grow_d(&e->rot[w], &e->rotcap[w], 2 * n))) return st;
        double *y = e->rot[w] + n;
        for (size_t i = 0; i < n; i++) y[i] = r->used[i];
        rht_rows_f64(e->rot[w], y, r->rows, r->cols, e->rht, 1);
        float *f = e->fbuf[w];
        for (size_t i = 0; i < n; i++) f[i] = (float)e->rot[w][i];
        if (w == 0) ra.used = f;
        else rb.used = f;
    }
    if (fp64_path) {
        fpsim_numerics ref = fpsim_numerics_fp64();
        if ((st = ref.gemm(ref.ctx, c))) return st;
    } else {
        if ((st = grow_f(&e->fc, &e->fccap, c->M * c->N))) return st;
        const fpsim_scheme *sa = ra.quantized ? engine_scheme(e, c->layer, c->site, c->pass, c->a.role) : NULL;
        const fpsim_scheme *sb = rb.quantized ? engine_scheme(e, c->layer, c->site, c->pass, c->b.role) : NULL;
        if ((st = engine_multiply(e, c, sa, sb, ra.used, rb.used))) return st;
        /* Step 4: the kernel's output precision. */
        int out_round = c->pass == FPSIM_PASS_WGRAD ? FPSIM_ACT_FP32 : e->plan.out_round;
        if (!c->accumulate) { /* the float results, then to BF16 if the kernel writes BF16 */
            convert_job j = {.c = c->c, .fc = e->fc, .ldc = c->ldc, .n = c->N, .out_round = out_round};
            size_t grain = CONVERT_GRAIN / c->N + 1;
            fpsim_parallel_for(c->M, grain, convert_to_output, &j, e->threads);
        }
        for (size_t i = 0; i < c->M && c->accumulate; i++) {
            double *row = c->c + i * c->ldc;
            const float *src = e->fc + i * c->N;
            for (size_t j = 0; j < c->N; j++) {
                double v = c->accumulate ? (double)src[j] + row[j] : (double)src[j];
                if (out_round == FPSIM_ACT_BF16) v = fpsim_f64_round_bf16(v);
                else if (out_round == FPSIM_ACT_FP32 || c->accumulate) v = (double)(float)v;
                row[j] = v;
            }
        }
    }
    if (e->observer) e->observer(e->observer_ctx, c, &ra, &rb);
    return FPSIM_OK;
}

static int engine_act_round_at(void *ctx, int layer)
{
    (void)layer;
    const fpsim_recipe_engine *e = ctx;
    return e->plan.act_round;
}

fpsim_numerics fpsim_recipe_engine_numerics(fpsim_recipe_engine *e)
{
    fpsim_numerics nx;
    memset(&nx, 0, sizeof nx);
    nx.name = e->plan.name;
    nx.ctx = e;
    nx.gemm = engine_gemm;
    nx.act_round = e->plan.act_round;
    nx.act_round_at = engine_act_round_at;
    return nx;
}
