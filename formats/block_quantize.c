/* block_quantize.c: the driver shared by every block scheme.
 *
 * Steps: check the shape against the emulated implementation (torchao requires K divisible by
 * the block, TE and DeepGEMM pad partial blocks with zeros); build the stored operand (the input,
 * or its transpose for the columnwise copy; NVFP4 rht=1 rotates the columnwise copy and rounds it
 * to BF16); fix the per-tensor values (NVFP4 global scale, per-tensor FP8 scale) BEFORE the
 * parallel loop; run the kind's kernel over tile rows (each group is independent, so the thread
 * count cannot change bits); then the cuBLAS scale layout, the dequantized tensor in the input's
 * shape, and the statistics (exact sums, see qstats.c). */
#define FPSIM_BLOCK_INTERNAL
#include "block_arith.h"
#include "fpsim_block.h"
#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "fpsim_parallel.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

void fpsim_qopts_default(fpsim_qopts *o)
{
    memset(o, 0, sizeof *o);
    o->axis = FPSIM_AXIS_ROWS;
    o->want = FPSIM_QWANT_ALL;
}

void fpsim_qtensor_free(fpsim_qtensor *t)
{
    if (!t)
        return;
    free(t->codes);
    free(t->scale_codes);
    free(t->scale_inv);
    free(t->cublas_codes);
    free(t->cublas_f32);
    free(t->dequant);
    free(t->work_src);
    free(t->work_dq);
    memset(t, 0, sizeof *t);
}

uint32_t fpsim_qtensor_code(const fpsim_qtensor *t, size_t i, size_t j)
{
    if (t->scheme.elem == FPSIM_E2M1)
        return (t->codes[i * t->code_stride + (j >> 1)] >> ((j & 1u) * 4u)) & 0xFu;
    return t->codes[i * t->code_stride + j];
}

size_t fpsim_cublas_swizzle_offset(size_t r, size_t c, size_t scols)
{
    size_t tiles_per_row = (scols + 3) / 4;
    size_t tile = (r / 128) * tiles_per_row + c / 4;
    return tile * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4);
}

/* (Re)allocate a buffer to at least n bytes. */
static int grow(void **p, size_t *cap, size_t n)
{
    if (n <= *cap && *p)
        return 1;
    void *q = realloc(*p, n ? n : 1);
    if (!q)
        return 0;
    *p = q;
    *cap = n;
    return 1;
}

/* (Re)allocate a scratch buffer of at least n bytes on a 64-byte boundary (whole cache lines for
 * the streamed columnwise copy); its old contents are not kept. */
static int grow_aligned(float **p, size_t *cap, size_t n)
{
    if (n <= *cap && *p)
        return 1;
    free(*p);
    *cap = 0;
    /* large buffers on 2 MB boundaries, offered to the kernel as transparent huge pages (a hint:
     * the columnwise copy is written and read across thousands of 4 KB pages) */
    const size_t align = n >= ((size_t)8 << 20) ? ((size_t)2 << 20) : 64;
    const size_t bytes = (n + align - 1) / align * align + align;
    *p = aligned_alloc(align, bytes);
    if (!*p)
        return 0;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (align > 64)
        madvise(*p, bytes, MADV_HUGEPAGE);
#endif
    *cap = n;
    return 1;
}

const char *fpsim_block_default_cast(const fpsim_scheme *s)
{
    int fp8 = s->elem == FPSIM_E4M3 || s->elem == FPSIM_E5M2;
    switch (s->kind) {
    case FPSIM_KIND_MX:
        switch (s->rule) {
        case FPSIM_MX_RCEIL_SAT: return "nv";
        case FPSIM_MX_GFLOAT: return "nv";
        case FPSIM_MX_MICROXCALING: return fp8 ? "clamp" : "nv";
        default: return fp8 ? "clamp" : "torchao"; /* torchao: clamp + torch cast; f32_to_fpx */
        }
    case FPSIM_KIND_NVFP4: return s->chain == FPSIM_NVFP4_TE ? "nv" : "torchao";
    case FPSIM_KIND_FP8_BLOCK:
        return (s->scale == FPSIM_FP8B_TE_POW2 || s->scale == FPSIM_FP8B_TE_FP32 ||
                fpsim_fp8_scale_vllm_op(s->scale)) ? "nv" : "torch"; /* vLLM: __nv_fp8_e4m3(float) */
    default: return s->mode == FPSIM_TENSOR_TORCHAO ? "clamp" : "nv";
    }
}

static fpsim_status make_plan_specs(fpsim_block_plan *p)
{
    const fpsim_scheme *s = &p->s;
    const char *cast = s->cast[0] ? s->cast : fpsim_block_default_cast(s);
    fpsim_round mode = (s->kind == FPSIM_KIND_MX && s->rule == FPSIM_MX_MICROXCALING) ? FPSIM_RNA
                                                                                     : FPSIM_RNE;
    fpsim_status st = fpsim_spec_make(&p->elem, (fpsim_format_id)s->elem, cast, mode, 0);
    if (st != FPSIM_OK)
        return st;
    if (s->kind == FPSIM_KIND_NVFP4) {
        /* TE SR: 8 random bits per element (one byte of a Philox word) */
        st = fpsim_spec_make(&p->elem_sr, FPSIM_E2M1, cast, FPSIM_SR, 8);
        if (st != FPSIM_OK)
            return st;
        fpsim_block_fast_init(&p->fast_sr, &p->elem_sr);
        st = fpsim_spec_make(&p->scale8, FPSIM_E4M3, s->chain == FPSIM_NVFP4_TE ? "nv" : "torch",
                             FPSIM_RNE, 0);
        if (st != FPSIM_OK)
            return st;
        fpsim_block_fast_init(&p->fast_scale, &p->scale8);
        fpsim_block_decode_table(p->scale_lut, &p->scale8);
    }
    p->elem_max = s->kind == FPSIM_KIND_NVFP4 ? 6.0f : fpsim_block_elem_max(s->elem);
    fpsim_block_decode_table(p->elem_lut, &p->elem);
    fpsim_block_fast_init(&p->fast, &p->elem);
    return FPSIM_OK;
}

/* Whole-tensor amax under the NaN policy, over chunks in parallel: a max of |x| bits and an OR
 * of NaN flags are order-independent, so the partition changes nothing. */
typedef struct amax_ctx {
    const float *x;
    uint32_t m;
    int nan;
    pthread_mutex_t lock;
} amax_ctx;

static void amax_chunk(void *ctx, size_t b, size_t e)
{
    amax_ctx *c = ctx;
    int nan = 0;
    uint32_t m = fpsim_block_amax_bits(c->x + b, e - b, &nan);
    pthread_mutex_lock(&c->lock);
    c->m = m > c->m ? m : c->m;
    c->nan |= nan;
    pthread_mutex_unlock(&c->lock);
}

static float tensor_amax(const float *x, size_t n, int nan_policy, int threads)
{
    amax_ctx c = {x, 0, 0, PTHREAD_MUTEX_INITIALIZER};
    fpsim_parallel_for(n, (size_t)1 << 18, amax_chunk, &c, threads);
    pthread_mutex_destroy(&c.lock);
    return (c.nan && nan_policy == FPSIM_NAN_PROPAGATE) ? NAN : u2f(c.m);
}

/* The RHT'd columnwise copy in one pass (AVX-512): bands of 16 input columns, transformed down
 * the rows and transposed in registers; the amax of the result on the way. Columns past the last
 * whole band: transposed and transformed by the portable code. */
typedef struct rht_cols_ctx {
    const float *x;
    float *dst;       /* float copy, or NULL for ... */
    uint16_t *dst16;  /* ... the BF16 copy */
    size_t rows, cols;
    const fpsim_scheme *s; /* rhtsum: exact or mma */
    uint32_t m;
    int nan;
    pthread_mutex_t lock;
} rht_cols_ctx;

static void rht_cols_bands(void *ctx, size_t b, size_t e)
{
    rht_cols_ctx *c = ctx;
    int nan = 0;
    uint32_t m = 0;
    const size_t whole = c->cols / 16; /* bands of 16 columns in [b, e) */
    const size_t wend = e < whole ? e : whole;
    for (size_t band = b; band < wend; band += 64) {
        const size_t nb = wend - band < 64 ? wend - band : 64;
        const uint32_t v = fpsim_block_rht_cols_avx512(c->dst, c->dst16, c->x, c->rows, c->cols,
                                                       band * 16, nb,
                                                       c->s->rhtsum == FPSIM_RHT_MMA, &nan);
        m = v > m ? v : m;
    }
    if (e > whole) {
        for (size_t j = whole * 16; j < c->cols; j++)
            for (size_t i0 = 0; i0 < c->rows; i0 += 16) {
                float y[16];
                for (size_t k = 0; k < 16; k++)
                    y[k] = c->x[(i0 + k) * c->cols + j];
                fpsim_rht16_scheme(y, y, c->s);
                const uint32_t v = fpsim_block_amax_bits(y, 16, &nan);
                m = v > m ? v : m;
                for (size_t k = 0; k < 16; k++) {
                    if (c->dst)
                        c->dst[j * c->rows + i0 + k] = y[k];
                    else
                        c->dst16[j * c->rows + i0 + k] = (uint16_t)(f2u(y[k]) >> 16);
                }
            }
    }
    pthread_mutex_lock(&c->lock);
    c->m = m > c->m ? m : c->m;
    c->nan |= nan;
    pthread_mutex_unlock(&c->lock);
}

/* torchao float8 amax_to_scale: fp32(max / clamp(amax_f64, 1e-12)), optional
 * exp2(floor(log2(scale))) with float log2. */
static float torchao_float8_scale(float amax, float fmax, float eps, int pow2)
{
    double a = (double)amax;
    double e = eps == 1e-12f ? 1e-12 : (double)eps; /* EPS is the Python float 1e-12 */
    if (!isnan(a) && a < e)
        a = e;
    float sc = (float)((double)fmax / a);
    if (pow2)
        sc = exp2f(floorf(log2f(sc)));
    return sc;
}

/* Statistics over stored rows in parallel: each range sums into its own accumulator and merges
 * it under a lock; merging is exact and order-independent (qstats.c), so the thread count and
 * the order of the merges change no bit. */
typedef struct stats_ctx {
    const float *src, *dq;
    size_t qcols;
    fpsim_qstats *total;
    pthread_mutex_t lock;
} stats_ctx;

static void stats_rows(void *ctx, size_t b, size_t e)
{
    stats_ctx *c = ctx;
    fpsim_qstats local;
    fpsim_qstats_init(&local);
    for (size_t r = b; r < e; r++)
        fpsim_qstats_add_block(&local, c->src + r * c->qcols, c->dq + r * c->qcols, c->qcols, 1);
    pthread_mutex_lock(&c->lock);
    fpsim_qstats_merge(c->total, &local);
    pthread_mutex_unlock(&c->lock);
}

typedef struct rht_ctx {
    float *x;
    size_t qcols; /* a multiple of 16 */
    const fpsim_scheme *s;
} rht_ctx;

static void rht_rows(void *ctx, size_t b, size_t e)
{
    const rht_ctx *c = ctx;
    for (size_t r = b; r < e; r++)
        for (size_t j = 0; j < c->qcols; j += 16)
            fpsim_rht16_scheme(c->x + r * c->qcols + j, c->x + r * c->qcols + j, c->s);
}

typedef struct run_ctx {
    const fpsim_block_plan *plan;
    void (*group)(const fpsim_block_plan *, size_t);
} run_ctx;

static void run_groups(void *ctx, size_t b, size_t e)
{
    const run_ctx *c = ctx;
    for (size_t g = b; g < e; g++)
        c->group(c->plan, g);
}

typedef struct transpose_ctx {
    const float *src;
    float *dst;
    size_t rows, cols; /* of src */
} transpose_ctx;

#if defined(__GNUC__) && defined(__x86_64__)
/* transpose_rows with 8 x 8 register tiles inside the 32 x 32 cache tiles; edges element-wise. */
__attribute__((target("avx"))) static void transpose_rows_avx(const transpose_ctx *t, size_t b, size_t e)
{
    for (size_t j0 = b; j0 < e; j0 += 32) {
        size_t j1 = j0 + 32 < e ? j0 + 32 : e;
        for (size_t i0 = 0; i0 < t->rows; i0 += 32) {
            size_t i1 = i0 + 32 < t->rows ? i0 + 32 : t->rows;
            size_t j = j0;
            for (; j + 8 <= j1; j += 8) {
                size_t i = i0;
                for (; i + 8 <= i1; i += 8)
                    fpsim_block_transpose8x8_avx(t->dst + j * t->rows + i, t->rows,
                                                 t->src + i * t->cols + j, t->cols);
                for (size_t jj = j; jj < j + 8; jj++)
                    for (size_t ii = i; ii < i1; ii++)
                        t->dst[jj * t->rows + ii] = t->src[ii * t->cols + jj];
            }
            for (; j < j1; j++)
                for (size_t i = i0; i < i1; i++)
                    t->dst[j * t->rows + i] = t->src[i * t->cols + j];
        }
    }
}
#endif

static void transpose_rows(void *ctx, size_t b, size_t e)
{
    const transpose_ctx *t = ctx;
#if defined(__GNUC__) && defined(__x86_64__)
    if (__builtin_cpu_supports("avx")) {
        transpose_rows_avx(t, b, e);
        return;
    }
#endif
    /* dst row j = src column j, in 32 x 32 tiles for the caches */
    for (size_t j0 = b; j0 < e; j0 += 32) {
        size_t j1 = j0 + 32 < e ? j0 + 32 : e;
        for (size_t i0 = 0; i0 < t->rows; i0 += 32) {
            size_t i1 = i0 + 32 < t->rows ? i0 + 32 : t->rows;
            for (size_t j = j0; j < j1; j++)
                for (size_t i = i0; i < i1; i++)
                    t->dst[j * t->rows + i] = t->src[i * t->cols + j];
        }
    }
}

/* Fill the cuBLAS-layout scale copy. */
static fpsim_status cublas_layout(fpsim_qtensor *o)
{
    const fpsim_scheme *s = &o->scheme;
    if (s->kind == FPSIM_KIND_FP8_TENSOR) {
        o->cublas_rows = o->cublas_cols = 0; /* SCALAR_32F: global_scale itself */
        return FPSIM_OK;
    }
    if (s->kind == FPSIM_KIND_FP8_BLOCK) {
        size_t n;
        if (s->tile_rows == 1) { /* VEC128_32F: scale (m, kb) at kb * pad4(M) + m */
            o->cublas_rows = o->scols;
            o->cublas_cols = (o->qrows + 3) / 4 * 4;
        } else { /* BLK128x128_32F: (mb, kb) at mb * pad4(KB) + kb */
            o->cublas_rows = o->srows;
            o->cublas_cols = (o->scols + 3) / 4 * 4;
        }
        n = o->cublas_rows * o->cublas_cols;
        /* exact reallocation: cublas_f32 and cublas_codes share no capacity field */
        float *q = realloc(o->cublas_f32, n * sizeof(float) + 1);
        if (!q)
            return fpsim_fail(FPSIM_ENOMEM, "out of memory for %zu cuBLAS scales", n);
        o->cublas_f32 = q;
        o->cap_cublas = n * sizeof(float);
        memset(o->cublas_f32, 0, n * sizeof(float));
        for (size_t r = 0; r < o->srows; r++)
            for (size_t c = 0; c < o->scols; c++) {
                float v = o->scale_inv[r * o->scols + c];
                if (s->tile_rows == 1)
                    o->cublas_f32[c * o->cublas_cols + r] = v;
                else
                    o->cublas_f32[r * o->cublas_cols + c] = v;
            }
        return FPSIM_OK;
    }
    /* MX / NVFP4: the 128x4 swizzle over one scale per (row, K block); 2D tiles repeat their
     * scale on each of their rows. */
    o->cublas_rows = (o->qrows + 127) / 128 * 128;
    o->cublas_cols = (o->scols + 3) / 4 * 4;
    size_t n = o->cublas_rows * o->cublas_cols;
    uint8_t *q = realloc(o->cublas_codes, n + 1);
    if (!q)
        return fpsim_fail(FPSIM_ENOMEM, "out of memory for %zu cuBLAS scales", n);
    o->cublas_codes = q;
    o->cap_cublas = n;
    memset(o->cublas_codes, 0, n);
    /* fpsim_cublas_swizzle_offset(r, c, .) walked tile by tile: within a 128 x 4 tile, row r's 4
     * scales are contiguous at (r % 32) * 16 + ((r % 128) / 32) * 4 */
    const size_t tiles_per_row = o->cublas_cols / 4;
    for (size_t r = 0; r < o->qrows; r++) {
        const uint8_t *src = o->scale_codes + (r / s->tile_rows) * o->scols;
        uint8_t *dst = o->cublas_codes + (r / 128) * tiles_per_row * 512 + (r % 32) * 16 +
                       ((r % 128) / 32) * 4;
        size_t c = 0;
        for (; c + 4 <= o->scols; c += 4)
            memcpy(dst + (c / 4) * 512, src + c, 4);
        for (; c < o->scols; c++)
            dst[(c / 4) * 512 + c % 4] = src[c];
    }
    return FPSIM_OK;
}

/* Shape rules of the emulated implementations (and of the RHT, which rotates whole 16-element
 * blocks), for a copy blocked along `axis` whose blocked dimension is qcols. The GPU driver
 * applies the same rules through fpsim_block_check_shape. */
static fpsim_status check_shape(const fpsim_scheme *s, size_t qcols, int axis)
{
    if (s->kind == FPSIM_KIND_MX &&
        (s->rule == FPSIM_MX_FLOOR || s->rule == FPSIM_MX_CEIL || s->rule == FPSIM_MX_EVEN ||
         s->rule == FPSIM_MX_RCEIL) &&
        qcols % 32 != 0)
        return fpsim_fail(FPSIM_ESHAPE,
                          "torchao to_mx requires the blocked dimension (%zu) to be a multiple of 32 "
                          "(this rule follows torchao; the rules rceil-sat, microxcaling and gfloat zero-pad a "
                          "partial block)",
                          qcols);
    if (s->kind == FPSIM_KIND_NVFP4 && s->chain != FPSIM_NVFP4_TE && qcols % 16 != 0)
        return fpsim_fail(FPSIM_ESHAPE,
                          "torchao nvfp4_quantize requires the blocked dimension (%zu) to be a "
                          "multiple of 16 (chain=te zero-pads)",
                          qcols);
    if (fpsim_scheme_rotates(s, axis) && qcols % 16 != 0)
        return fpsim_fail(FPSIM_ESHAPE, "RHT needs the blocked dimension (%zu) to be a multiple of 16", qcols);
    return FPSIM_OK;
}

fpsim_status fpsim_block_check_shape(const fpsim_scheme *s, size_t rows, size_t cols, int axis)
{
    if (rows == 0 || cols == 0)
        return fpsim_fail(FPSIM_ESHAPE, "quantize: empty tensor (%zu x %zu)", rows, cols);
    return check_shape(s, axis == FPSIM_AXIS_COLS ? rows : cols, axis);
}

/* The common body; `tensor_scale` is the per-tensor FP8 scale to use for delayed scaling (NAN:
 * compute it as the scheme says). On return *amax_out is the tensor amax (delayed scaling records
 * it). */
static fpsim_status quantize_impl(fpsim_qtensor *out, const fpsim_scheme *s, const float *x,
                                  size_t rows, size_t cols, const fpsim_qopts *opt_in,
                                  float delayed_scale, float *amax_out)
{
    fpsim_qopts opt;
    if (opt_in)
        opt = *opt_in;
    else
        fpsim_qopts_default(&opt);
    if (!out || !s || !x)
        return fpsim_fail(FPSIM_EINVAL, "quantize: NULL argument");
    if (rows == 0 || cols == 0)
        return fpsim_fail(FPSIM_ESHAPE, "quantize: empty tensor (%zu x %zu)", rows, cols);
    if (opt.axis != FPSIM_AXIS_ROWS && opt.axis != FPSIM_AXIS_COLS)
        return fpsim_fail(FPSIM_EINVAL, "quantize: axis must be rows (0) or cols (1), got %d",
                          opt.axis);
    if (s->kind >= FPSIM_KIND_COUNT)
        return fpsim_fail(FPSIM_EINVAL, "quantize: bad scheme kind %d", s->kind);
    const int cols_axis = opt.axis == FPSIM_AXIS_COLS;
    const size_t qrows = cols_axis ? cols : rows, qcols = cols_axis ? rows : cols;
    fpsim_status st = check_shape(s, qcols, opt.axis);
    if (st != FPSIM_OK)
        return st;
    if (opt.input_bf16)
        for (size_t i = 0; i < rows * cols; i++)
            if ((f2u(x[i]) & 0xFFFFu) && !isnan(x[i]))
                return fpsim_fail(FPSIM_EDATA,
                                  "input element %zu (%.9g) is not a BF16 value but input_bf16 is set",
                                  i, (double)x[i]);
    const int rht = fpsim_scheme_rotates(s, opt.axis);

    fpsim_block_plan p;
    memset(&p, 0, sizeof p);
    p.s = *s;
    if ((st = make_plan_specs(&p)) != FPSIM_OK)
        return st;

    /* 1. Stored operand (the columnwise copy in a buffer kept in the output between calls). */
    float *tmp = NULL;
    const float *src = x;
    int threads = opt.threads > 0 ? opt.threads : fpsim_threads_default();
    int rht_amax_done = 0, rht_nan = 0;
    uint32_t rht_m = 0;
    const uint16_t *src_bf16 = NULL;
    if (cols_axis) {
        if (!grow_aligned(&out->work_src, &out->cap_work_src, rows * cols * sizeof(float)))
            return fpsim_fail(FPSIM_ENOMEM, "out of memory for a %zu x %zu transpose", cols, rows);
        tmp = out->work_src;
        if (rht && fpsim_block_have_avx512()) {
            /* TE: BF16 output of the Hadamard matmul, 16-vectors along the stored rows; the
             * transpose, the transform and the post-RHT amax in one pass. The copy is kept as
             * BF16 bits (half the memory traffic; its values are BF16) unless the statistics
             * need it as float or a result is NaN (a NaN payload need not fit in BF16): then
             * it is made again in float. */
            if (!(opt.want & FPSIM_QWANT_STATS)) {
                rht_cols_ctx rc = {x, NULL, (uint16_t *)tmp, rows, cols, s, 0, 0, PTHREAD_MUTEX_INITIALIZER};
                fpsim_parallel_for((cols + 15) / 16, 4, rht_cols_bands, &rc, threads);
                pthread_mutex_destroy(&rc.lock);
                if (!rc.nan) {
                    rht_amax_done = 1;
                    rht_m = rc.m;
                    src_bf16 = (const uint16_t *)tmp;
                }
            }
            if (!rht_amax_done) {
                rht_cols_ctx rc = {x, tmp, NULL, rows, cols, s, 0, 0, PTHREAD_MUTEX_INITIALIZER};
                fpsim_parallel_for((cols + 15) / 16, 4, rht_cols_bands, &rc, threads);
                pthread_mutex_destroy(&rc.lock);
                rht_amax_done = 1;
                rht_m = rc.m;
                rht_nan = rc.nan;
            }
        } else {
            transpose_ctx t = {x, tmp, rows, cols};
            fpsim_parallel_for(cols, 64, transpose_rows, &t, threads);
            if (rht) {
                rht_ctx rc = {tmp, qcols, s};
                fpsim_parallel_for(qrows, 16, rht_rows, &rc, threads);
            }
        }
        src = tmp;
    }

    /* 2. Outputs. */
    out->scheme = *s;
    out->axis = opt.axis;
    out->rows = rows;
    out->cols = cols;
    out->qrows = qrows;
    out->qcols = qcols;
    const int fp4 = s->elem == FPSIM_E2M1;
    out->code_stride = fp4 ? (qcols + 1) / 2 : qcols;
    if (s->kind == FPSIM_KIND_FP8_TENSOR) {
        out->srows = out->scols = 1;
    } else {
        out->srows = (qrows + s->tile_rows - 1) / s->tile_rows;
        out->scols = (qcols + s->tile_cols - 1) / s->tile_cols;
    }
    const size_t ngroups = s->kind == FPSIM_KIND_FP8_TENSOR ? qrows : out->srows;
    const int want_dq = (opt.want & FPSIM_QWANT_DEQUANT) != 0;
    const int want_st = (opt.want & FPSIM_QWANT_STATS) != 0;
    size_t nsc = out->srows * out->scols;
    uint64_t *counters = calloc(2 * ngroups, sizeof(uint64_t));
    float *dq_stored = NULL;
    int ok = counters != NULL;
    ok = ok && grow((void **)&out->codes, &out->cap_codes, qrows * out->code_stride);
    size_t cap_sc = out->cap_scales;
    ok = ok && grow((void **)&out->scale_inv, &cap_sc, nsc * sizeof(float));
    if (ok && (s->kind == FPSIM_KIND_MX || s->kind == FPSIM_KIND_NVFP4)) {
        void *q = realloc(out->scale_codes, nsc);
        ok = q != NULL;
        if (ok)
            out->scale_codes = q;
    } else if (ok) {
        free(out->scale_codes);
        out->scale_codes = NULL;
    }
    out->cap_scales = cap_sc;
    if (ok && want_dq)
        ok = grow((void **)&out->dequant, &out->cap_dequant, rows * cols * sizeof(float));
    if (ok && (want_dq || want_st)) {
        if (!cols_axis && want_dq)
            dq_stored = out->dequant;
        else if ((ok = grow_aligned(&out->work_dq, &out->cap_work_dq, rows * cols * sizeof(float))))
            dq_stored = out->work_dq;
    }
    if (!ok) {
        free(counters);
        return fpsim_fail(FPSIM_ENOMEM, "out of memory for a %zu x %zu quantized tensor", rows, cols);
    }

    /* 3. Per-tensor values. */
    p.src = src_bf16 ? NULL : src;
    p.src_bf16 = src_bf16;
    p.qrows = qrows;
    p.qcols = qcols;
    p.out = out;
    p.dq = dq_stored;
    p.seed = opt.seed;
    p.stream = opt.stream;
    p.bf16_in = opt.input_bf16;
    p.group_sat = counters;
    p.group_zero = counters + ngroups;
    /* the tensor amax: needed by NVFP4 and per-tensor FP8 (and reported); the stats pass finds
     * it too, so block kinds skip this pass when they need neither */
    const int need_amax = s->kind == FPSIM_KIND_NVFP4 || s->kind == FPSIM_KIND_FP8_TENSOR;
    float amax = NAN;
    if (opt.global_amax_given)
        amax = opt.global_amax;
    else if (need_amax && rht_amax_done)
        amax = (rht_nan && s->nan == FPSIM_NAN_PROPAGATE) ? NAN : u2f(rht_m);
    else if (need_amax) /* the same elements in either orientation: read the input unless RHT'd */
        amax = tensor_amax(rht ? src : x, qrows * qcols, s->nan, threads);
    out->global_amax = amax;
    out->s_enc = 1.0f;
    out->global_scale = 1.0f;
    out->tensor_scale = 1.0f;
    if (s->kind == FPSIM_KIND_NVFP4) {
        if (s->chain == FPSIM_NVFP4_TE) {
            float se = 2688.0f / amax;        /* fp32(448 * 6) / amax */
            se = fminf(se, FLT_MAX);          /* fminf: NaN -> FLT_MAX (plain kernel) */
            if (amax == 0.0f || se == 0.0f)
                se = 1.0f;
            p.s_enc = se;
            p.s_dec = 1.0f / se;
            out->s_enc = se;
            out->global_scale = p.s_dec;
        } else {
            int cuda = s->chain == FPSIM_NVFP4_TORCHAO_CUDA;
            p.pts = cuda ? amax * (1.0f / 2688.0f) : amax / 2688.0f;
            p.pts_rcp = 1.0f / p.pts; /* torch: 1.0 / tensor = reciprocal */
            out->s_enc = p.pts_rcp;
            out->global_scale = s->gscale ? p.pts : 1.0f;
        }
    } else if (s->kind == FPSIM_KIND_FP8_TENSOR) {
        float sc;
        if (s->mode == FPSIM_TENSOR_DELAYED)
            sc = isnan(delayed_scale) ? 1.0f : delayed_scale;
        else if (s->mode == FPSIM_TENSOR_CURRENT)
            sc = fpsim_fp8_te_scale(amax, p.elem_max, s->pow2, s->eps,
                                    opt.input_bf16 ? u2f(0x7F7F0000u) : FLT_MAX);
        else
            sc = torchao_float8_scale(amax, p.elem_max, s->eps, s->pow2);
        p.tscale = sc;
        p.tscale_inv = 1.0f / sc; /* TE __frcp_rn / torch reciprocal */
        out->tensor_scale = sc;
        out->global_scale = p.tscale_inv;
        out->scale_inv[0] = p.tscale_inv;
    }
    if (amax_out)
        *amax_out = amax;

    /* 4. Kernels over tile rows. */
    run_ctx rc = {&p, s->kind == FPSIM_KIND_MX      ? fpsim_block_mx_group
                      : s->kind == FPSIM_KIND_NVFP4 ? fpsim_block_nvfp4_group
                                                    : fpsim_block_fp8_group};
    size_t grain = s->kind == FPSIM_KIND_FP8_TENSOR ? 16 : (s->tile_rows > 1 ? 1 : 16);
    fpsim_parallel_for(ngroups, grain, run_groups, &rc, threads);

    /* 5. Layouts, dequant, stats. */
    st = FPSIM_OK;
    if (opt.want & FPSIM_QWANT_CUBLAS)
        st = cublas_layout(out);
    if (st == FPSIM_OK && want_dq && cols_axis) {
        transpose_ctx t = {dq_stored, out->dequant, qrows, qcols};
        fpsim_parallel_for(qcols, 64, transpose_rows, &t, threads);
    }
    fpsim_qstats_init(&out->stats);
    if (st == FPSIM_OK && want_st) {
        stats_ctx sc = {src, dq_stored, qcols, &out->stats, PTHREAD_MUTEX_INITIALIZER};
        fpsim_parallel_for(qrows, 64, stats_rows, &sc, threads); /* one fixed-order run per row */
        pthread_mutex_destroy(&sc.lock);
        for (size_t g = 0; g < ngroups; g++) {
            out->stats.saturated += p.group_sat[g];
            out->stats.zero_blocks += p.group_zero[g];
        }
        out->stats.blocks = s->kind == FPSIM_KIND_FP8_TENSOR ? 1 : nsc;
        if (!need_amax && !opt.global_amax_given)
            out->global_amax = (float)out->stats.amax; /* NaN inputs excluded here */
        if (s->kind == FPSIM_KIND_FP8_TENSOR)
            out->stats.zero_blocks = amax == 0.0f;
    }
    free(counters);
    return st;
}

fpsim_status fpsim_block_quantize(fpsim_qtensor *out, const fpsim_scheme *s, const float *x,
                                  size_t rows, size_t cols, const fpsim_qopts *opt)
{
    return quantize_impl(out, s, x, rows, cols, opt, NAN, NULL);
}

fpsim_status fpsim_block_quantize_bf16(fpsim_qtensor *out, const fpsim_scheme *s,
                                       const uint16_t *x, size_t rows, size_t cols,
                                       const fpsim_qopts *opt)
{
    if (!x)
        return fpsim_fail(FPSIM_EINVAL, "quantize: NULL input");
    float *f = malloc(rows * cols * sizeof(float) + 1);
    if (!f)
        return fpsim_fail(FPSIM_ENOMEM, "out of memory for a %zu x %zu BF16 input", rows, cols);
    for (size_t i = 0; i < rows * cols; i++)
        f[i] = u2f(fpsim_bf16_to_f32_bits(x[i]));
    fpsim_qopts o;
    if (opt)
        o = *opt;
    else
        fpsim_qopts_default(&o);
    o.input_bf16 = 1;
    fpsim_status st = quantize_impl(out, s, f, rows, cols, &o, NAN, NULL);
    free(f);
    return st;
}

/* ---- stateful quantizer: TE DelayedScaling ---------------------------------------------- */

fpsim_status fpsim_quantizer_init(fpsim_quantizer *q, const fpsim_scheme *s)
{
    memset(q, 0, sizeof *q);
    if (!s)
        return fpsim_fail(FPSIM_EINVAL, "quantizer: NULL scheme");
    q->scheme = *s;
    q->scale = 1.0f; /* TE initial scale */
    if (s->kind == FPSIM_KIND_FP8_TENSOR && s->mode == FPSIM_TENSOR_DELAYED) {
        if (s->history < 1)
            return fpsim_fail(FPSIM_EINVAL, "delayed scaling: history must be >= 1, got %d",
                              (int)s->history);
        q->amax_history = calloc((size_t)s->history, sizeof(float));
        if (!q->amax_history)
            return fpsim_fail(FPSIM_ENOMEM, "out of memory for an amax history of %d",
                              (int)s->history);
        q->history_len = s->history;
    }
    return FPSIM_OK;
}

void fpsim_quantizer_free(fpsim_quantizer *q)
{
    if (!q)
        return;
    free(q->amax_history);
    memset(q, 0, sizeof *q);
}

/* TE delayed_scaling.cu update: amax = max over the whole history window (or history[0] for
 * most_recent); history rolled by -1 (old[0] to the end), slot 0 zeroed; scale = (fp8_max *
 * 2^-margin) / amax if amax is finite and > 0, else the previous scale; Inf -> FLT_MAX. */
static void delayed_update(fpsim_quantizer *q)
{
    const int L = q->history_len;
    float *h = q->amax_history;
    float amax = 0.0f, last = h[0];
    for (int i = 0; i < L; i++) {
        float a = i < L - 1 ? h[i + 1] : last;
        amax = fmaxf(amax, a);
    }
    if (q->scheme.algo == FPSIM_AMAX_MOST_RECENT)
        amax = last;
    for (int i = 0; i < L; i++)
        h[i] = i < L - 1 ? h[i + 1] : last;
    h[0] = 0.0f;
    float fmax = fpsim_block_elem_max(q->scheme.elem);
    float scaled_max = (float)((double)fmax / pow(2.0, (double)q->scheme.margin));
    if (isfinite(amax) && amax > 0.0f) {
        float sc = scaled_max / amax;
        q->scale = isinf(sc) ? FLT_MAX : sc;
    }
}

fpsim_status fpsim_quantizer_quantize(fpsim_quantizer *q, fpsim_qtensor *out, const float *x,
                                      size_t rows, size_t cols, const fpsim_qopts *opt)
{
    if (!q)
        return fpsim_fail(FPSIM_EINVAL, "quantizer: NULL");
    const fpsim_scheme *s = &q->scheme;
    int delayed = s->kind == FPSIM_KIND_FP8_TENSOR && s->mode == FPSIM_TENSOR_DELAYED;
    float amax = 0.0f;
    fpsim_status st = quantize_impl(out, s, x, rows, cols, opt, delayed ? q->scale : NAN, &amax);
    if (st != FPSIM_OK)
        return st;
    q->steps++;
    if (delayed) {
        /* the cast kernel records amax into history[0] (fmaxf: NaN never enters) */
        q->amax_history[0] = fmaxf(q->amax_history[0], amax);
        delayed_update(q);
    }
    return FPSIM_OK;
}
