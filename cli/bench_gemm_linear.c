/* bench_gemm_linear.c: `fpsim bench gemm --device gpu --linear`: FP8 vs BF16 linear layers on the
 * GPU, GEMM alone and with fpsim's own GPU quantizers and scale recalibration
 * (experiments/fp8-linear-speed).
 *
 * One forward linear layer Y = X W^T at the Llama-3.1-8B shapes (M = T tokens), inputs in BF16 as
 * a BF16 model holds them. Per layer, timed with CUDA events (median of `reps` after 3 warm-ups):
 *   bf16             the cuBLASLt BF16 GEMM (the baseline);
 *   fp8 per-tensor   TE Float8CurrentScaling (`fp8-tensor:mode=current`): the GEMM alone (fast
 *                    accumulation, as the forward GEMM; non-fast listed too), the casts with the
 *                    amax given, the same with fpsim's amax pass (the recalibration: amax + scale
 *                    every step), and the whole step: quantize X, quantize W, GEMM;
 *   fp8 block        NeMo RL's recipe (X `fp8-block:scale=te-fp32` 1x128, W the same with 128x128
 *                    tiles; cuBLASLt VEC128_32F x BLK128x128_32F): the block scales are computed
 *                    inside the quantizer (the recalibration is fused), then the GEMM.
 * "step" quantizes both operands (training: the weights change every optimizer step); "cached W"
 * quantizes X only (generation between refits). The quantizers write the cuBLASLt operands
 * directly (codes and cuBLAS-layout scales on the device), so nothing else runs in between.
 * A device-to-device copy measured in the same run gives the roofline the quantizers would reach
 * at copy bandwidth (bytes read + written), printed next to the measured step as an estimate. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_gemm_linear.h"
#include "cli_util.h"

#ifdef FPSIM_HAVE_CUDA
#include "fpsim_block.h"
#include "fpsim_gpu.h"
#include "fpsim_gpu_gemm.h"

static const char *CMD = "bench gemm";

/* ---- timed work items ---- */

typedef struct gemm_work {
    fpsim_gpu_gemm_plan *plan;
    float *D;
    const void *A, *B;
} gemm_work;

typedef struct quant_work {
    fpsim_gpu_qbuf *q;
    const fpsim_scheme *s;
    const void *x;
    size_t rows, cols;
    fpsim_qopts opt;
} quant_work;

typedef struct amax_work {
    uint32_t *out;
    const void *x;
    size_t n;
} amax_work;

/* The per-tensor dequantization factor (fpsim_gpu_qbuf tensor_values[2]) copied to its own
 * allocation. With the scale pointer tensor_values + 2 (8-byte aligned) cublasLtMatmul returned
 * status 15 (NOT_SUPPORTED) on the H200; every scale pointer that worked was cudaMalloc'd (256-byte
 * aligned), so the alignment is the likely cause (not yet confirmed by a run with this copy). */
typedef struct scale_work {
    float *dst[2];
    const float *src[2];
} scale_work;

typedef struct seq_work {
    fpsim_gpu_work_fn fn[5];
    void *ctx[5];
    int n;
} seq_work;

static fpsim_status run_gemm(void *c)
{
    gemm_work *g = c;
    return fpsim_gpu_gemm_plan_run(g->plan, g->D, g->A, g->B, NULL);
}

static fpsim_status run_quant(void *c)
{
    quant_work *q = c;
    return fpsim_gpu_block_quantize_dev(q->q, q->s, q->x, 1, q->rows, q->cols, &q->opt, NULL);
}

static fpsim_status run_amax(void *c)
{
    amax_work *a = c;
    return fpsim_gpu_amax_dev(a->out, a->x, 1, a->n, FPSIM_NAN_IGNORE, NULL);
}

static fpsim_status run_scales(void *c)
{
    scale_work *w = c;
    fpsim_status st = fpsim_gpu_copy_dev_async(w->dst[0], w->src[0], sizeof(float));
    return st ? st : fpsim_gpu_copy_dev_async(w->dst[1], w->src[1], sizeof(float));
}

static fpsim_status run_seq(void *c)
{
    seq_work *s = c;
    for (int i = 0; i < s->n; i++) {
        fpsim_status st = s->fn[i](s->ctx[i]);
        if (st) return st;
    }
    return FPSIM_OK;
}

typedef struct copy_work {
    void *dst;
    const void *src;
    size_t bytes;
} copy_work;

static fpsim_status run_copy(void *c)
{
    copy_work *p = c;
    return fpsim_gpu_copy_dev_async(p->dst, p->src, p->bytes);
}

/* ---- one layer ---- */

typedef struct layer_shape {
    const char *name;
    size_t N, K;
} layer_shape;

typedef struct layer_result {
    double bf16;
    /* per-tensor */
    double t_gemm_fast, t_gemm_nonfast, t_amax_x, t_amax_w, t_cast_x, t_cast_w, t_quant_x, t_quant_w, t_step,
        t_cached;
    /* block */
    double b_gemm, b_quant_x, b_quant_w, b_step, b_cached;
    /* roofline estimates of the quantizers at copy bandwidth (ms) */
    double roof_t_x, roof_t_w, roof_b_x, roof_b_w;
    char algo_bf16[160], algo_t[160], algo_b[160];
    char err_t[256], err_b[256]; /* a kind that failed: its message (times left 0), else "" */
} layer_result;

typedef struct bench_ctx {
    size_t T;
    int reps;
    double copy_gbps;
    fpsim_scheme tensor, block_x, block_w;
} bench_ctx;

#define TRY(call)                                                                                                      \
    do {                                                                                                               \
        st = (call);                                                                                                   \
        if (st) goto done;                                                                                             \
    } while (0)

static fpsim_status time_work(double *ms, fpsim_gpu_work_fn fn, void *ctx, int reps)
{
    fpsim_status st = fpsim_gpu_time_ms(ms, fn, ctx, 3, reps);
    if (st == FPSIM_OK) st = fpsim_gpu_sync();
    return st;
}

/* Per-tensor FP8: casts with the amax given and with the amax pass, the GEMM, the step. */
static fpsim_status bench_tensor(layer_result *r, const bench_ctx *b, const layer_shape *l, const void *x,
                                 const void *w, float *D)
{
    size_t T = b->T, N = l->N, K = l->K;
    fpsim_gpu_qbuf qx, qw;
    memset(&qx, 0, sizeof qx);
    memset(&qw, 0, sizeof qw);
    fpsim_gpu_gemm_plan *fast = NULL, *nonfast = NULL;
    uint32_t *amax = NULL;
    float *scale_x = NULL, *scale_w = NULL;
    fpsim_status st;
    TRY(fpsim_gpu_qbuf_alloc(&qx, &b->tensor, T, K, FPSIM_AXIS_ROWS));
    TRY(fpsim_gpu_qbuf_alloc(&qw, &b->tensor, N, K, FPSIM_AXIS_ROWS));
    TRY(fpsim_gpu_alloc((void **)&amax, 2 * sizeof *amax));
    TRY(fpsim_gpu_alloc((void **)&scale_x, sizeof *scale_x));
    TRY(fpsim_gpu_alloc((void **)&scale_w, sizeof *scale_w));

    fpsim_qopts opt;
    fpsim_qopts_default(&opt);
    opt.axis = FPSIM_AXIS_ROWS;
    opt.want = 0;
    quant_work quant_x = {&qx, &b->tensor, x, T, K, opt}, quant_w = {&qw, &b->tensor, w, N, K, opt};
    amax_work amax_x = {amax, x, T * K}, amax_w = {amax + 1, w, N * K};
    TRY(time_work(&r->t_amax_x, run_amax, &amax_x, b->reps));
    TRY(time_work(&r->t_amax_w, run_amax, &amax_w, b->reps));
    /* Casts alone: the amax as the pass found it, handed over (delayed-scaling style). */
    uint32_t bits[2];
    TRY(fpsim_gpu_copy(bits, amax, sizeof bits, 1));
    quant_work cast_x = quant_x, cast_w = quant_w;
    cast_x.opt.global_amax_given = cast_w.opt.global_amax_given = 1;
    memcpy(&cast_x.opt.global_amax, &bits[0], sizeof(float));
    memcpy(&cast_w.opt.global_amax, &bits[1], sizeof(float));
    TRY(time_work(&r->t_cast_x, run_quant, &cast_x, b->reps));
    TRY(time_work(&r->t_cast_w, run_quant, &cast_w, b->reps));
    TRY(time_work(&r->t_quant_x, run_quant, &quant_x, b->reps));
    TRY(time_work(&r->t_quant_w, run_quant, &quant_w, b->reps));

    fpsim_gpu_gemm_config cf = {FPSIM_E4M3, FPSIM_E4M3, FPSIM_GPU_SCALE_TENSOR, FPSIM_GPU_SCALE_TENSOR, 1};
    fpsim_gpu_gemm_config cn = cf;
    cn.fast_accum = 0;
    fpsim_gpu_gemm_info info;
    scale_work scales = {{scale_x, scale_w}, {qx.tensor_values + 2, qw.tensor_values + 2}};
    TRY(run_scales(&scales));
    TRY(fpsim_gpu_gemm_plan_create(&nonfast, T, N, K, &cn, scale_x, scale_w, &info));
    TRY(fpsim_gpu_gemm_plan_create(&fast, T, N, K, &cf, scale_x, scale_w, &info));
    snprintf(r->algo_t, sizeof r->algo_t, "%s", info.algo);
    gemm_work g_fast = {fast, D, qx.codes, qw.codes}, g_nonfast = {nonfast, D, qx.codes, qw.codes};
    TRY(time_work(&r->t_gemm_fast, run_gemm, &g_fast, b->reps));
    TRY(time_work(&r->t_gemm_nonfast, run_gemm, &g_nonfast, b->reps));
    seq_work step = {{run_quant, run_quant, run_scales, run_gemm}, {&quant_x, &quant_w, &scales, &g_fast}, 4};
    seq_work cached = {{run_quant, run_scales, run_gemm}, {&quant_x, &scales, &g_fast}, 3};
    TRY(time_work(&r->t_step, run_seq, &step, b->reps));
    TRY(time_work(&r->t_cached, run_seq, &cached, b->reps));
    /* Roofline: the amax pass reads the bf16 input, the cast reads it again and writes a byte. */
    r->roof_t_x = (double)T * K * (2 + 2 + 1) / (b->copy_gbps * 1e6);
    r->roof_t_w = (double)N * K * (2 + 2 + 1) / (b->copy_gbps * 1e6);
done:
    fpsim_gpu_gemm_plan_free(fast);
    fpsim_gpu_gemm_plan_free(nonfast);
    fpsim_gpu_qbuf_free(&qx);
    fpsim_gpu_qbuf_free(&qw);
    fpsim_gpu_free(amax);
    fpsim_gpu_free(scale_x);
    fpsim_gpu_free(scale_w);
    return st;
}

/* Block FP8 (1x128 x 128x128): quantizers writing cuBLASLt's scale layouts, the GEMM, the step. */
static fpsim_status bench_block(layer_result *r, const bench_ctx *b, const layer_shape *l, const void *x,
                                const void *w, float *D)
{
    size_t T = b->T, N = l->N, K = l->K;
    fpsim_gpu_qbuf qx, qw;
    memset(&qx, 0, sizeof qx);
    memset(&qw, 0, sizeof qw);
    fpsim_gpu_gemm_plan *plan = NULL;
    fpsim_status st;
    TRY(fpsim_gpu_qbuf_alloc(&qx, &b->block_x, T, K, FPSIM_AXIS_ROWS));
    TRY(fpsim_gpu_qbuf_alloc(&qw, &b->block_w, N, K, FPSIM_AXIS_ROWS));
    fpsim_qopts opt;
    fpsim_qopts_default(&opt);
    opt.axis = FPSIM_AXIS_ROWS;
    opt.want = FPSIM_QWANT_CUBLAS;
    quant_work quant_x = {&qx, &b->block_x, x, T, K, opt}, quant_w = {&qw, &b->block_w, w, N, K, opt};
    TRY(time_work(&r->b_quant_x, run_quant, &quant_x, b->reps));
    TRY(time_work(&r->b_quant_w, run_quant, &quant_w, b->reps));
    fpsim_gpu_gemm_config cfg = {FPSIM_E4M3, FPSIM_E4M3, FPSIM_GPU_SCALE_VEC128, FPSIM_GPU_SCALE_BLK128, 0};
    fpsim_gpu_gemm_info info;
    TRY(fpsim_gpu_gemm_plan_create(&plan, T, N, K, &cfg, qx.cublas_f32, qw.cublas_f32, &info));
    snprintf(r->algo_b, sizeof r->algo_b, "%s", info.algo);
    gemm_work g = {plan, D, qx.codes, qw.codes};
    TRY(time_work(&r->b_gemm, run_gemm, &g, b->reps));
    seq_work step = {{run_quant, run_quant, run_gemm}, {&quant_x, &quant_w, &g}, 3};
    seq_work cached = {{run_quant, run_gemm}, {&quant_x, &g}, 2};
    TRY(time_work(&r->b_step, run_seq, &step, b->reps));
    TRY(time_work(&r->b_cached, run_seq, &cached, b->reps));
    /* Roofline: one read of the bf16 input, a byte per code, one fp32 scale per block. */
    r->roof_b_x = ((double)T * K * 3 + (double)T * (K / 128) * 4) / (b->copy_gbps * 1e6);
    r->roof_b_w = ((double)N * K * 3 + (double)(N / 128) * (K / 128) * 4) / (b->copy_gbps * 1e6);
done:
    fpsim_gpu_gemm_plan_free(plan);
    fpsim_gpu_qbuf_free(&qx);
    fpsim_gpu_qbuf_free(&qw);
    return st;
}

static fpsim_status bench_layer(layer_result *r, const bench_ctx *b, const layer_shape *l)
{
    size_t T = b->T, N = l->N, K = l->K;
    void *x = NULL, *w = NULL;
    float *D = NULL;
    fpsim_gpu_gemm_plan *plan = NULL;
    fpsim_status st;
    memset(r, 0, sizeof *r);
    TRY(fpsim_gpu_alloc(&x, T * K * 2));
    TRY(fpsim_gpu_alloc(&w, N * K * 2));
    TRY(fpsim_gpu_alloc((void **)&D, T * N * sizeof *D));
    /* Activations with a spread of 2^+-4 around normal values; weights narrower. */
    TRY(fpsim_gpu_fill_random_dev(x, T * K, 1, 0x5eed0001u + K, 4));
    TRY(fpsim_gpu_fill_random_dev(w, N * K, 1, 0x5eed0002u + N, 2));
    fpsim_gpu_gemm_config bf = {FPSIM_BF16, FPSIM_BF16, FPSIM_GPU_SCALE_TENSOR, FPSIM_GPU_SCALE_TENSOR, 0};
    fpsim_gpu_gemm_info info;
    TRY(fpsim_gpu_gemm_plan_create(&plan, T, N, K, &bf, NULL, NULL, &info));
    snprintf(r->algo_bf16, sizeof r->algo_bf16, "%s", info.algo);
    gemm_work g = {plan, D, x, w};
    TRY(time_work(&r->bf16, run_gemm, &g, b->reps));
    /* A failing FP8 kind is recorded with its message; the other kinds still run. */
    if (bench_tensor(r, b, l, x, w, D)) snprintf(r->err_t, sizeof r->err_t, "%s", fpsim_last_error());
    if (bench_block(r, b, l, x, w, D)) snprintf(r->err_b, sizeof r->err_b, "%s", fpsim_last_error());
    fpsim_gpu_sync();
done:
    fpsim_gpu_gemm_plan_free(plan);
    fpsim_gpu_free(x);
    fpsim_gpu_free(w);
    fpsim_gpu_free(D);
    return st;
}

static fpsim_status measure_copy(double *gbps, int reps)
{
    const size_t bytes = (size_t)1 << 30;
    void *a = NULL, *c = NULL;
    fpsim_status st;
    TRY(fpsim_gpu_alloc(&a, bytes));
    TRY(fpsim_gpu_alloc(&c, bytes));
    TRY(fpsim_gpu_fill_random_dev(a, bytes / 4, 0, 1, 0));
    copy_work cw = {c, a, bytes};
    double ms;
    TRY(time_work(&ms, run_copy, &cw, reps));
    *gbps = 2.0 * (double)bytes / (ms * 1e6);
done:
    fpsim_gpu_free(a);
    fpsim_gpu_free(c);
    return st;
}

/* ---- output ---- */

static double ratio(double base, double t)
{
    return t > 0 ? base / t : 0;
}

static void print_json_layer(const layer_shape *l, const layer_result *r, size_t T, int first)
{
    printf("%s\n  {\"layer\": \"%s\", \"M\": %zu, \"N\": %zu, \"K\": %zu, \"bf16_ms\": %.5g,", first ? "" : ",", l->name,
           T, l->N, l->K, r->bf16);
    printf("\n   \"tensor\": {\"gemm_fast_ms\": %.5g, \"gemm_nonfast_ms\": %.5g, \"amax_x_ms\": %.5g, \"amax_w_ms\": %.5g, "
           "\"cast_x_ms\": %.5g, \"cast_w_ms\": %.5g, \"quant_x_ms\": %.5g, \"quant_w_ms\": %.5g, \"step_ms\": %.5g, "
           "\"cached_w_ms\": %.5g, \"roofline_quant_x_ms\": %.5g, \"roofline_quant_w_ms\": %.5g, \"algo\": \"%s\"},",
           r->t_gemm_fast, r->t_gemm_nonfast, r->t_amax_x, r->t_amax_w, r->t_cast_x, r->t_cast_w, r->t_quant_x,
           r->t_quant_w, r->t_step, r->t_cached, r->roof_t_x, r->roof_t_w, r->algo_t);
    if (r->err_t[0]) {
        printf("\n   \"tensor_error\": ");
        fpsim_cli_json_string(stdout, r->err_t);
        printf(",");
    }
    if (r->err_b[0]) {
        printf("\n   \"block_error\": ");
        fpsim_cli_json_string(stdout, r->err_b);
        printf(",");
    }
    printf("\n   \"block\": {\"gemm_ms\": %.5g, \"quant_x_ms\": %.5g, \"quant_w_ms\": %.5g, \"step_ms\": %.5g, "
           "\"cached_w_ms\": %.5g, \"roofline_quant_x_ms\": %.5g, \"roofline_quant_w_ms\": %.5g, \"algo\": \"%s\"},",
           r->b_gemm, r->b_quant_x, r->b_quant_w, r->b_step, r->b_cached, r->roof_b_x, r->roof_b_w, r->algo_b);
    printf("\n   \"bf16_algo\": \"%s\"}", r->algo_bf16);
}

static void print_text_layer(const layer_shape *l, const layer_result *r)
{
    double recal = (r->t_quant_x - r->t_cast_x) + (r->t_quant_w - r->t_cast_w);
    printf("%s (N %zu, K %zu): bf16 GEMM %.4f ms\n", l->name, l->N, l->K, r->bf16);
    if (r->err_t[0]) printf("  fp8 per-tensor FAILED: %s\n", r->err_t);
    if (r->err_b[0]) printf("  fp8 block FAILED: %s\n", r->err_b);
    printf("  fp8 per-tensor: GEMM %.4f ms (%.2fx; non-fast %.4f ms, %.2fx); quantize X %.4f + W %.4f ms "
           "(casts %.4f + %.4f, recalibration %.4f); step %.4f ms (%.2fx), W cached %.4f ms (%.2fx); "
           "at the copy roofline %.2fx\n",
           r->t_gemm_fast, ratio(r->bf16, r->t_gemm_fast), r->t_gemm_nonfast, ratio(r->bf16, r->t_gemm_nonfast),
           r->t_quant_x, r->t_quant_w, r->t_cast_x, r->t_cast_w, recal, r->t_step, ratio(r->bf16, r->t_step),
           r->t_cached, ratio(r->bf16, r->t_cached), ratio(r->bf16, r->t_gemm_fast + r->roof_t_x + r->roof_t_w));
    printf("  fp8 block 1x128 x 128x128: GEMM %.4f ms (%.2fx); quantize X %.4f + W %.4f ms; step %.4f ms (%.2fx), "
           "W cached %.4f ms (%.2fx); at the copy roofline %.2fx\n",
           r->b_gemm, ratio(r->bf16, r->b_gemm), r->b_quant_x, r->b_quant_w, r->b_step, ratio(r->bf16, r->b_step),
           r->b_cached, ratio(r->bf16, r->b_cached), ratio(r->bf16, r->b_gemm + r->roof_b_x + r->roof_b_w));
}

int bench_gemm_linear(int json, size_t T, int reps)
{
    static const layer_shape layers[] = {
        {"qkv", 4096 + 2 * 1024, 4096}, {"o", 4096, 4096}, {"gate_up", 2 * 14336, 4096}, {"down", 4096, 14336}};
    enum { NL = sizeof layers / sizeof layers[0] };
    bench_ctx b;
    memset(&b, 0, sizeof b);
    b.T = T;
    b.reps = reps;
    fpsim_status st = fpsim_scheme_parse(&b.tensor, "fp8-tensor:mode=current");
    if (!st) st = fpsim_scheme_parse(&b.block_x, "fp8-block:scale=te-fp32,tile=1x128");
    if (!st) st = fpsim_scheme_parse(&b.block_w, "fp8-block:scale=te-fp32,tile=128x128");
    if (!st) st = measure_copy(&b.copy_gbps, reps);
    if (st) {
        fpsim_cli_error(CMD, "%s", fpsim_last_error());
        return FPSIM_EXIT_FAILURE;
    }
    char desc[256] = "";
    fpsim_gpu_describe(desc, sizeof desc);
    layer_result r[NL], sum;
    memset(&sum, 0, sizeof sum);
    int failed_kinds = 0;
    if (json) {
        printf("{\"experiment\": \"fp8-linear-speed\", \"tokens\": %zu, \"reps\": %d, \"copy_gbps\": %.1f, "
               "\"schemes\": {\"tensor\": \"fp8-tensor:mode=current\", \"block_x\": "
               "\"fp8-block:scale=te-fp32,tile=1x128\", \"block_w\": \"fp8-block:scale=te-fp32,tile=128x128\"},\n"
               " \"device\": ",
               T, reps, b.copy_gbps);
        fpsim_cli_json_string(stdout, desc);
        printf(",\n \"layers\": [");
    } else {
        printf("FP8 vs BF16 linear layers of Llama-3.1-8B, %zu tokens, BF16 inputs, fp32 output; median of %d; copy "
               "%.0f GB/s\ndevice: %s\n",
               T, reps, b.copy_gbps, desc);
    }
    for (int i = 0; i < NL; i++) {
        st = bench_layer(&r[i], &b, &layers[i]);
        if (st) {
            if (json) printf("]}\n");
            fpsim_cli_error(CMD, "%s: %s", layers[i].name, fpsim_last_error());
            return FPSIM_EXIT_FAILURE;
        }
        failed_kinds += (r[i].err_t[0] != 0) + (r[i].err_b[0] != 0);
        if (json) print_json_layer(&layers[i], &r[i], T, i == 0);
        else print_text_layer(&layers[i], &r[i]);
        /* The timings are the leading doubles of layer_result (up to algo_bf16): sum them. */
        double *s = &sum.bf16, *v = &r[i].bf16;
        for (size_t k = 0; k < offsetof(layer_result, algo_bf16) / sizeof(double); k++) s[k] += v[k];
    }
    double recal = (sum.t_quant_x - sum.t_cast_x) + (sum.t_quant_w - sum.t_cast_w);
    if (json) {
        printf("],\n \"all\": {\"bf16_ms\": %.5g, \"tensor_gemm_fast_ms\": %.5g, \"tensor_gemm_nonfast_ms\": %.5g, "
               "\"tensor_step_ms\": %.5g, \"tensor_cached_w_ms\": %.5g, \"tensor_recalibration_ms\": %.5g, "
               "\"tensor_roofline_step_ms\": %.5g, \"block_gemm_ms\": %.5g, \"block_step_ms\": %.5g, "
               "\"block_cached_w_ms\": %.5g, \"block_roofline_step_ms\": %.5g}}\n",
               sum.bf16, sum.t_gemm_fast, sum.t_gemm_nonfast, sum.t_step, sum.t_cached, recal,
               sum.t_gemm_fast + sum.roof_t_x + sum.roof_t_w, sum.b_gemm, sum.b_step, sum.b_cached,
               sum.b_gemm + sum.roof_b_x + sum.roof_b_w);
    } else {
        printf("all four layers: bf16 %.4f ms\n", sum.bf16);
        printf("  fp8 per-tensor: GEMM %.2fx, step %.2fx (recalibration %.1f%% of the step), W cached %.2fx, "
               "copy-roofline quantizers %.2fx\n",
               ratio(sum.bf16, sum.t_gemm_fast), ratio(sum.bf16, sum.t_step), 100.0 * recal / sum.t_step,
               ratio(sum.bf16, sum.t_cached), ratio(sum.bf16, sum.t_gemm_fast + sum.roof_t_x + sum.roof_t_w));
        printf("  fp8 block:      GEMM %.2fx, step %.2fx, W cached %.2fx, copy-roofline quantizers %.2fx\n",
               ratio(sum.bf16, sum.b_gemm), ratio(sum.bf16, sum.b_step), ratio(sum.bf16, sum.b_cached),
               ratio(sum.bf16, sum.b_gemm + sum.roof_b_x + sum.roof_b_w));
        printf("  NeMo RL reports 15-25%% (1.15-1.25x) from FP8 linear layers and 2-3%% of step time for dynamic "
               "recalibration (experiments/fp8-linear-speed/README.md: why these differ)\n");
    }
    if (failed_kinds) {
        fpsim_cli_error(CMD, "%d layer/kind combination(s) failed (see above); their times are 0", failed_kinds);
        return FPSIM_EXIT_FAILURE;
    }
    return FPSIM_EXIT_OK;
}
#endif
