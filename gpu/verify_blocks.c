/* verify_blocks.c: block quantizers, GPU kernel vs CPU emulator, byte for byte.
 *
 * For each scheme, both sides quantize the same tensors (float32 and BF16 inputs, rowwise and
 * columnwise): random data whose block amax spans many binades, odd shapes with partial tiles,
 * adversarial blocks (all-zero, lone NaN, lone +-Inf, subnormal-only, amax exactly at and one ulp
 * around powers of two, every element midpoint of the format after scaling, constant blocks), and
 * optionally large tensors. Compared: element codes, scale codes, scale_inv (bits), the cuBLAS-
 * layout scales, the per-tensor values, the dequantized tensor (bits, NaN payloads included) and
 * every statistic (counts, maxima, the exact sums as doubles). A shape one side rejects must be
 * rejected by both. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fpsim_block.h"
#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "fpsim_gpu.h"
#include "fpsim_gpu_verify.h"

static const char *const scheme_texts[] = {
    /* MX: every element format under every scale rule */
    "mxfp8-e4m3:rule=floor", "mxfp8-e4m3:rule=ceil", "mxfp8-e4m3:rule=even", "mxfp8-e4m3:rule=rceil",
    "mxfp8-e4m3:rule=rceil-sat", "mxfp8-e4m3:rule=gfloat", "mxfp8-e4m3:rule=floor,nan=ignore",
    "mxfp8-e4m3:rule=rceil-sat,nan=ignore", "mxfp8-e4m3:rule=floor,ao=0.18", "mxfp8-e4m3:rule=floor,tile=32x32",
    "mxfp8-e4m3:rule=rceil-sat,tile=32x32", "mxfp8-e5m2:rule=floor", "mxfp8-e5m2:rule=rceil",
    "mxfp8-e5m2:rule=rceil-sat", "mxfp8-e5m2:rule=even", "mxfp6-e2m3:rule=floor", "mxfp6-e2m3:rule=rceil-sat",
    "mxfp6-e2m3:rule=ceil", "mxfp6-e3m2:rule=floor", "mxfp6-e3m2:rule=rceil", "mxfp6-e3m2:rule=gfloat",
    "mxfp4:rule=floor", "mxfp4:rule=ceil", "mxfp4:rule=even", "mxfp4:rule=rceil", "mxfp4:rule=rceil-sat",
    "mxfp4:rule=gfloat", "mxfp4:rule=floor,ao=0.18", "mxfp8-e4m3:rule=microxcaling", "mxfp8-e5m2:rule=microxcaling",
    "mxfp6-e2m3:rule=microxcaling", "mxfp4:rule=microxcaling", "mxfp8-e4m3:rule=rceil,ao=0.18",
    "mxfp6-e3m2:rule=rceil,ao=0.18", "mxfp4:rule=rceil,ao=0.18",
    /* NVFP4 */
    "nvfp4", "nvfp4:tile=16x16", "nvfp4:sr=1", "nvfp4:rht=1", "nvfp4:sr=1,rht=1", "nvfp4:rht=1,rhtsum=mma",
    "nvfp4:sr=1,rht=1,rhtsum=mma", "nvfp4:nan=propagate",
    "nvfp4:chain=torchao", "nvfp4:chain=torchao-cuda", "nvfp4:chain=torchao,global=0",
    "nvfp4:chain=torchao-cuda,tile=16x16",
    /* block FP8 */
    "fp8-block", "fp8-block:scale=te-fp32", "fp8-block:scale=deepgemm-fp32", "fp8-block:scale=deepgemm-ue8m0",
    "fp8-block:tile=128x128", "fp8-block:tile=128x128,scale=te-fp32", "fp8-block:tile=128x128,scale=deepgemm-fp32",
    "fp8-block:tile=128x128,scale=deepgemm-ue8m0", "fp8-block:fmt=e5m2", "fp8-block:nan=propagate",
    "fp8-block:scale=vllm-cuda", "fp8-block:scale=vllm-native", "fp8-block:tile=128x128,scale=vllm-cuda",
    "fp8-block:scale=vllm-cuda,nan=propagate", "fp8-block:scale=vllm-cuda-ue8m0",
    "fp8-block:scale=vllm-cuda-ue8m0,nan=propagate", "fp8-block:fmt=e5m2,scale=vllm-cuda",
    /* vLLM's rules under other floors: the BF16 scale table's bounds move with eps (divide_fast.cuh),
     * and 1e-3 puts every tile off the table */
    "fp8-block:scale=vllm-cuda,eps=1e-5", "fp8-block:scale=vllm-native,eps=1e-6",
    "fp8-block:scale=vllm-cuda-ue8m0,eps=0", "fp8-block:scale=vllm-cuda,eps=1e-3",
    /* per-tensor FP8 */
    "fp8-tensor", "fp8-tensor:pow2=1", "fp8-tensor:fmt=e5m2", "fp8-tensor:mode=delayed", "fp8-tensor:mode=torchao",
    "fp8-tensor:mode=torchao,pow2=1", "fp8-tensor:mode=torchao,pow2=1,fmt=e5m2",
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static float rng_unit(uint64_t *s) { return (float)(rng_next(s) >> 40) * 0x1p-24f; } /* [0, 1) */
static float rng_normalish(uint64_t *s)
{
    return rng_unit(s) + rng_unit(s) + rng_unit(s) + rng_unit(s) - 2.0f;
}

/* Positive values of an element format in increasing order (decoded codes), for midpoints. */
static size_t format_values(int elem, float *v, size_t cap)
{
    fpsim_spec sp;
    if (fpsim_spec_make(&sp, (fpsim_format_id)elem, NULL, FPSIM_RNE, 0) != FPSIM_OK) return 0;
    const fpsim_format *f = fpsim_format_get((fpsim_format_id)elem);
    size_t n = 0;
    for (uint32_t c = 0; c <= f->max_mag && n < cap; c++) v[n++] = u2f(fpsim_decode_f32(c, &sp));
    return n;
}

/* Random tensor: blocks of 16 share a magnitude 2^k, k in [-spread, spread]. */
static void fill_random(float *x, size_t rows, size_t cols, uint64_t seed, int spread)
{
    uint64_t s = seed;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            if (c % 16 == 0) s ^= rng_next(&s);
            uint64_t t = s;
            int k = (int)(rng_next(&t) % (uint64_t)(2 * spread + 1)) - spread;
            x[r * cols + c] = ldexpf(rng_normalish(&s), k);
        }
}

/* Adversarial tensor: block b (width B along each row) of row r gets pattern (7r + b) % 10. */
static void fill_adversarial(float *x, size_t rows, size_t cols, size_t B, int elem, uint64_t seed)
{
    float vals[256];
    size_t nv = format_values(elem, vals, 256);
    float emax = nv ? vals[nv - 1] : 448.0f;
    uint64_t s = seed;
    for (size_t r = 0; r < rows; r++) {
        for (size_t b0 = 0; b0 < cols; b0 += B) {
            size_t b1 = b0 + B < cols ? b0 + B : cols, n = b1 - b0;
            float *p = x + r * cols + b0;
            int pat = (int)((7 * r + b0 / B) % 10);
            int k = (int)((r + b0 / B) % 41) - 20;
            float two_k = ldexpf(1.0f, k);
            for (size_t i = 0; i < n; i++) p[i] = rng_normalish(&s) * two_k * 0.25f;
            size_t at = (r + b0 / B) % n;
            switch (pat) {
            case 0:
                for (size_t i = 0; i < n; i++) p[i] = 0.0f;
                break;
            case 1:
                p[at] = u2f(r & 1 ? 0xFFC00000u : 0x7FC00000u);
                break;
            case 2:
                p[at] = r & 1 ? -INFINITY : INFINITY;
                break;
            case 3:
                for (size_t i = 0; i < n; i++)
                    p[i] = u2f((uint32_t)(rng_next(&s) % 0x7FFFFFu + 1) | (rng_next(&s) & 1 ? 0x80000000u : 0));
                break;
            case 4:
                p[at] = two_k;
                break;
            case 5:
                p[at] = u2f(f2u(two_k) - 1); /* one ulp below 2^k */
                break;
            case 6:
                p[at] = u2f(f2u(two_k) + 1); /* one ulp above */
                break;
            case 7:
                /* ties after scaling: the block max is the element max times 2^k, the others sit on
                 * midpoints between neighbouring element values, times 2^k */
                for (size_t i = 0; i < n; i++) {
                    size_t j = nv > 1 ? (i + r) % (nv - 1) : 0;
                    float m = nv > 1 ? (float)(((double)vals[j] + (double)vals[j + 1]) * 0.5) : 0.5f;
                    p[i] = (i & 1 ? -m : m) * two_k;
                }
                p[at] = emax * two_k;
                break;
            case 8:
                for (size_t i = 0; i < n; i++) p[i] = 3.0f * two_k;
                break;
            default:
                for (size_t i = 0; i < n; i++) p[i] = ldexpf(rng_normalish(&s), (int)(rng_next(&s) % 60) - 30);
                break;
            }
        }
    }
}

/* Every positive finite BF16 value (0x0001 .. 0x7F7F) as a block amax, rowwise and columnwise at
 * once: within each 32 x 32 tile, diagonal element i is value d + 1 (d = tile * 32 + i, cycling;
 * negative for odd d), so it is the largest of its row's 32-wide block and of its column's 32-tall
 * block; every other element is min(the two diagonals it shares a block with) times [0, 1). The
 * MX kernels take the scale code of a BF16 amax from a per-exponent table (block_rows_fast_kernel.cuh
 * mx_code_entry); this sweep puts each table step under its rule. rows and cols: multiples of 32. */
static float bf16_sweep_value(size_t d)
{
    const uint32_t bits = 1u + (uint32_t)(d % 0x7F7Fu);
    return u2f(bits << 16 | (d & 1 ? 0x80000000u : 0u));
}

static void fill_amax_sweep(float *x, size_t rows, size_t cols, uint64_t seed)
{
    uint64_t s = seed;
    const size_t tcols = cols / 32;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++) {
            const size_t tile = (r / 32) * tcols + c / 32;
            if (r % 32 == c % 32) {
                x[r * cols + c] = bf16_sweep_value(tile * 32 + r % 32);
                continue;
            }
            const float a = fabsf(bf16_sweep_value(tile * 32 + r % 32));
            const float b = fabsf(bf16_sweep_value(tile * 32 + c % 32));
            const float v = (a < b ? a : b) * rng_unit(&s);
            x[r * cols + c] = rng_next(&s) & 1 ? -v : v;
        }
}

static void to_bf16(uint16_t *h, float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t b = f2u(x[i]);
        h[i] = (uint16_t)(b >> 16); /* truncation keeps NaN a NaN (quiet bit is in the top half) */
        x[i] = u2f((uint32_t)h[i] << 16);
    }
}

static uint64_t diff_bytes(const void *a, const void *b, size_t n, size_t *first)
{
    const uint8_t *p = a, *q = b;
    uint64_t d = 0;
    for (size_t i = 0; i < n; i++)
        if (p[i] != q[i]) {
            if (!d) *first = i;
            d++;
        }
    return d;
}

static uint64_t diff_f32(const float *a, const float *b, size_t n, size_t *first)
{
    uint64_t d = 0;
    for (size_t i = 0; i < n; i++)
        if (f2u(a[i]) != f2u(b[i])) {
            if (!d) *first = i;
            d++;
        }
    return d;
}

/* Compare one CPU and one GPU result; adds to row. */
static void compare_q(const fpsim_qtensor *c, const fpsim_qtensor *g, fpsim_gpu_check *row, const char *what)
{
    size_t at = 0;
    uint64_t d;
    if (c->qrows != g->qrows || c->qcols != g->qcols || c->code_stride != g->code_stride || c->srows != g->srows ||
        c->scols != g->scols) {
        row->mismatches++;
        if (!row->example[0])
            snprintf(row->example, sizeof row->example, "%s: geometry cpu %zux%zu/%zux%zu gpu %zux%zu/%zux%zu", what,
                     c->qrows, c->qcols, c->srows, c->scols, g->qrows, g->qcols, g->srows, g->scols);
        return;
    }
    d = diff_bytes(c->codes, g->codes, c->qrows * c->code_stride, &at);
    if (d && !row->example[0])
        snprintf(row->example, sizeof row->example, "%s: code byte %zu (row %zu) cpu 0x%02x gpu 0x%02x", what, at,
                 at / c->code_stride, c->codes[at], g->codes[at]);
    row->mismatches += d;
    size_t ns = c->srows * c->scols;
    if (c->scale_codes) {
        d = g->scale_codes ? diff_bytes(c->scale_codes, g->scale_codes, ns, &at) : ns;
        if (d && !row->example[0] && g->scale_codes)
            snprintf(row->example, sizeof row->example, "%s: scale %zu cpu 0x%02x gpu 0x%02x", what, at,
                     c->scale_codes[at], g->scale_codes[at]);
        row->mismatches += d;
    }
    if (c->scale_inv && ns) {
        d = g->scale_inv ? diff_f32(c->scale_inv, g->scale_inv, ns, &at) : ns;
        if (d && !row->example[0] && g->scale_inv)
            snprintf(row->example, sizeof row->example, "%s: scale_inv %zu cpu 0x%08x gpu 0x%08x", what, at,
                     f2u(c->scale_inv[at]), f2u(g->scale_inv[at]));
        row->mismatches += d;
    }
    size_t nc = c->cublas_rows * c->cublas_cols;
    if (nc) {
        if (g->cublas_rows != c->cublas_rows || g->cublas_cols != c->cublas_cols) {
            row->mismatches++;
            if (!row->example[0]) snprintf(row->example, sizeof row->example, "%s: cuBLAS layout shape", what);
        } else if (c->cublas_codes) {
            d = g->cublas_codes ? diff_bytes(c->cublas_codes, g->cublas_codes, nc, &at) : nc;
            if (d && !row->example[0]) snprintf(row->example, sizeof row->example, "%s: cuBLAS scale byte %zu", what, at);
            row->mismatches += d;
        } else if (c->cublas_f32) {
            d = g->cublas_f32 ? diff_f32(c->cublas_f32, g->cublas_f32, nc, &at) : nc;
            if (d && !row->example[0]) snprintf(row->example, sizeof row->example, "%s: cuBLAS scale %zu", what, at);
            row->mismatches += d;
        }
    }
    if (c->dequant) {
        size_t n = c->rows * c->cols;
        d = g->dequant ? diff_f32(c->dequant, g->dequant, n, &at) : n;
        if (d && !row->example[0] && g->dequant)
            snprintf(row->example, sizeof row->example, "%s: dequant %zu cpu 0x%08x gpu 0x%08x", what, at,
                     f2u(c->dequant[at]), f2u(g->dequant[at]));
        row->mismatches += d;
    }
    /* statistics: every count, both maxima and the three exact sums (as rounded doubles) */
    const fpsim_qstats *cs = &c->stats, *gs = &g->stats;
    const uint64_t cc[9] = {cs->count, cs->finite, cs->nan, cs->inf, cs->nan_out, cs->flushed, cs->saturated,
                            cs->zero_blocks, cs->blocks};
    const uint64_t gc[9] = {gs->count, gs->finite, gs->nan, gs->inf, gs->nan_out, gs->flushed, gs->saturated,
                            gs->zero_blocks, gs->blocks};
    static const char *const cnames[9] = {"count", "finite", "nan", "inf", "nan_out", "flushed", "saturated",
                                          "zero_blocks", "blocks"};
    for (int i = 0; i < 9; i++)
        if (cc[i] != gc[i]) {
            row->mismatches++;
            if (!row->example[0])
                snprintf(row->example, sizeof row->example, "%s: stats %s cpu %llu gpu %llu", what, cnames[i],
                         (unsigned long long)cc[i], (unsigned long long)gc[i]);
        }
    const double cd[5] = {cs->amax, cs->max_abs_err, fpsim_xsum_value(&cs->sum_ref2), fpsim_xsum_value(&cs->sum_err2),
                          fpsim_xsum_value(&cs->sum_err)};
    const double gd[5] = {gs->amax, gs->max_abs_err, fpsim_xsum_value(&gs->sum_ref2), fpsim_xsum_value(&gs->sum_err2),
                          fpsim_xsum_value(&gs->sum_err)};
    static const char *const dnames[5] = {"amax", "max_abs_err", "sum x^2", "sum err^2", "sum err"};
    for (int i = 0; i < 5; i++)
        if (memcmp(&cd[i], &gd[i], sizeof(double))) {
            row->mismatches++;
            if (!row->example[0])
                snprintf(row->example, sizeof row->example, "%.60s: stats %s cpu %.17g gpu %.17g", what, dnames[i], cd[i],
                         gd[i]);
        }
    const float cv[4] = {c->global_amax, c->s_enc, c->global_scale, c->tensor_scale};
    const float gv[4] = {g->global_amax, g->s_enc, g->global_scale, g->tensor_scale};
    static const char *const names[4] = {"global_amax", "s_enc", "global_scale", "tensor_scale"};
    for (int i = 0; i < 4; i++)
        if (f2u(cv[i]) != f2u(gv[i])) {
            row->mismatches++;
            if (!row->example[0])
                snprintf(row->example, sizeof row->example, "%s: %s cpu 0x%08x gpu 0x%08x", what, names[i], f2u(cv[i]),
                         f2u(gv[i]));
        }
}

/* The GPU's status gs against the CPU's cs (message cerr) for one case: the row skipped (not on the
 * GPU), *st set (no device or memory: the run stops), a mismatch counted (statuses differ), or 1
 * when both succeeded and the outputs are to be compared. */
static int statuses_agree(fpsim_gpu_check *row, fpsim_status cs, const char *cerr, fpsim_status gs, const char *what,
                          fpsim_status *st)
{
    if (gs == FPSIM_EUNSUPPORTED) {
        row->skipped = 1;
        snprintf(row->example, sizeof row->example, "not on the GPU: %.140s", fpsim_last_error());
    } else if (gs == FPSIM_ENODEV || gs == FPSIM_ENOMEM) {
        *st = gs;
    } else if (cs != gs) {
        row->mismatches++;
        if (!row->example[0])
            snprintf(row->example, sizeof row->example, "%.40s: cpu status %d (%.40s) gpu status %d (%.40s)", what,
                     (int)cs, cerr, (int)gs, fpsim_last_error());
    } else {
        return gs == FPSIM_OK;
    }
    return 0;
}

typedef struct tensor_case {
    const char *name;
    size_t rows, cols;
    int kind; /* 0 random, 1 adversarial, 2 amax sweep */
    int large;
} tensor_case;

fpsim_status fpsim_gpu_verify_blocks(const fpsim_gpu_verify_opts *o, fpsim_gpu_check_fn fn, void *ctx,
                                     uint64_t *total_mismatches)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    *total_mismatches = 0;
    static const tensor_case tensors[] = {
        {"random 512x1024", 512, 1024, 0, 0},  {"odd 77x200", 77, 200, 0, 0},
        {"odd 130x96", 130, 96, 1, 0},         {"adversarial 256x512", 256, 512, 1, 0},
        /* columnwise kernel v8 CTAs 1-4 warp tiles wide (bf16 208 = 13 x 16 columns, 864 = 54 x 16) */
        {"narrow 384x208", 384, 208, 1, 0},    {"random 256x864", 256, 864, 0, 0},
        /* 96 rows: columnwise copies take kernel v5 (rows a multiple of 32, not of 128) */
        {"v5 96x512", 96, 512, 1, 0},          {"amax sweep 256x4096", 256, 4096, 2, 0},
        /* 320 columns = 5 x 64: NVFP4 16x16 bf16 takes kernel v9's 16 x 64 chunks, not 16 x 128 */
        {"v9 narrow 48x320", 48, 320, 1, 0},
        {"large 4096x8192", 4096, 8192, 0, 1},
    };
    size_t maxn = o->large ? 4096 * 8192 : 256 * 4096;
    float *x = malloc(maxn * sizeof *x);
    uint16_t *h = malloc(maxn * sizeof *h);
    if (!x || !h) {
        free(x);
        free(h);
        return fpsim_fail(FPSIM_ENOMEM, "verify: no memory for test tensors");
    }
    for (size_t si = 0; si < sizeof scheme_texts / sizeof scheme_texts[0] && st == FPSIM_OK; si++) {
        fpsim_scheme s;
        /* row: each copy by its own call; both: the two copies by fpsim_gpu_block_quantize2 (one
         * kernel where it fuses them), against the same CPU results */
        fpsim_gpu_check row, both;
        memset(&row, 0, sizeof row);
        memset(&both, 0, sizeof both);
        snprintf(row.name, sizeof row.name, "%s", scheme_texts[si]);
        snprintf(both.name, sizeof both.name, "%s [both copies]", scheme_texts[si]);
        const int run_row = !o->only || strstr(row.name, o->only), run_both = !o->only || strstr(both.name, o->only);
        if (!run_row && !run_both) continue;
        double t0 = now_s();
        if (fpsim_scheme_parse(&s, scheme_texts[si]) != FPSIM_OK) {
            row.skipped = 1;
            snprintf(row.example, sizeof row.example, "scheme not parsed by the CPU: %.120s", fpsim_last_error());
            fn(&row, ctx);
            continue;
        }
        size_t B = s.kind == FPSIM_KIND_FP8_TENSOR ? 32 : s.tile_cols;
        unsigned fused_cases = 0, both_cases = 0;
        double both_seconds = 0;
        for (size_t ti = 0; ti < sizeof tensors / sizeof tensors[0] && st == FPSIM_OK; ti++) {
            const tensor_case *tc = &tensors[ti];
            if (tc->large && !o->large) continue;
            size_t n = tc->rows * tc->cols;
            for (int bf = 0; bf < 2; bf++) {
                if (tc->kind == 0)
                    fill_random(x, tc->rows, tc->cols, 1000 + ti * 7 + si, 12);
                else if (tc->kind == 2)
                    fill_amax_sweep(x, tc->rows, tc->cols, 3000 + si);
                else
                    fill_adversarial(x, tc->rows, tc->cols, B, s.elem, 2000 + ti * 7 + si);
                if (bf) to_bf16(h, x, n);
                fpsim_qopts q;
                fpsim_qopts_default(&q);
                q.seed = 0x1234ABCDull + si;
                q.stream = 5;
                q.want = FPSIM_QWANT_ALL; /* codes, scales, cuBLAS layout, dequant, statistics */
                q.threads = o->threads;
                fpsim_qtensor cq[2];
                fpsim_status cs[2];
                char cerr[2][160];
                memset(cq, 0, sizeof cq);
                for (int axis = 0; axis < 2; axis++) {
                    q.axis = axis;
                    cs[axis] = bf ? fpsim_block_quantize_bf16(&cq[axis], &s, h, tc->rows, tc->cols, &q)
                                  : fpsim_block_quantize(&cq[axis], &s, x, tc->rows, tc->cols, &q);
                    snprintf(cerr[axis], sizeof cerr[axis], "%s", fpsim_last_error());
                }
                for (int axis = 0; axis < 2 && run_row && !row.skipped && st == FPSIM_OK; axis++) {
                    q.axis = axis;
                    fpsim_qtensor gq;
                    memset(&gq, 0, sizeof gq);
                    fpsim_status gs = bf ? fpsim_gpu_block_quantize_bf16(&gq, &s, h, tc->rows, tc->cols, &q)
                                         : fpsim_gpu_block_quantize(&gq, &s, x, tc->rows, tc->cols, &q);
                    char what[96];
                    snprintf(what, sizeof what, "%s %s %s", tc->name, bf ? "bf16" : "f32", axis ? "cols" : "rows");
                    if (statuses_agree(&row, cs[axis], cerr[axis], gs, what, &st)) {
                        compare_q(&cq[axis], &gq, &row, what);
                        row.inputs += n;
                    }
                    fpsim_qtensor_free(&gq);
                }
                if (run_both && !both.skipped && st == FPSIM_OK) {
                    const double tb = now_s();
                    q.axis = FPSIM_AXIS_ROWS;
                    fpsim_qtensor gr, gc;
                    memset(&gr, 0, sizeof gr);
                    memset(&gc, 0, sizeof gc);
                    int fused = 0;
                    fpsim_status gs = fpsim_gpu_block_quantize2(&gr, &gc, &s, bf ? (const void *)h : (const void *)x, bf,
                                                                tc->rows, tc->cols, &q, &fused);
                    /* the two CPU calls' first failure, columnwise first as the GPU runs them */
                    const int bad_axis = cs[1] != FPSIM_OK ? 1 : 0;
                    const fpsim_status cboth = cs[bad_axis];
                    char what[96];
                    snprintf(what, sizeof what, "%s %s both", tc->name, bf ? "bf16" : "f32");
                    if (statuses_agree(&both, cboth, cerr[bad_axis], gs, what, &st)) {
                        snprintf(what, sizeof what, "%s %s both: rows", tc->name, bf ? "bf16" : "f32");
                        compare_q(&cq[0], &gr, &both, what);
                        snprintf(what, sizeof what, "%s %s both: cols", tc->name, bf ? "bf16" : "f32");
                        compare_q(&cq[1], &gc, &both, what);
                        both.inputs += 2 * n;
                        both_cases++;
                        fused_cases += fused != 0;
                    }
                    fpsim_qtensor_free(&gr);
                    fpsim_qtensor_free(&gc);
                    both_seconds += now_s() - tb;
                }
                fpsim_qtensor_free(&cq[0]);
                fpsim_qtensor_free(&cq[1]);
                if ((row.skipped || !run_row) && (both.skipped || !run_both)) break;
            }
            if ((row.skipped || !run_row) && (both.skipped || !run_both)) break;
        }
        row.seconds = now_s() - t0 - both_seconds;
        both.seconds = both_seconds;
        if (run_row) {
            *total_mismatches += row.mismatches;
            fn(&row, ctx);
        }
        if (run_both) {
            if (!both.example[0] && !both.skipped)
                snprintf(both.example, sizeof both.example, "one kernel for both copies in %u of %u cases",
                         fused_cases, both_cases);
            *total_mismatches += both.mismatches;
            fn(&both, ctx);
        }
    }
    free(x);
    free(h);
    if (st == FPSIM_OK) st = fpsim_gpu_verify_amax(o, fn, ctx, total_mismatches);
    return st;
}
