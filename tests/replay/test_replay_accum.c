/* test_replay_accum.c: accumulation models behind the recipe engine's GEMM (docs/replay.md).
 *
 *  1. "te-current@accum=fp32" gives bit-identical GEMM outputs to "te-current" (the default
 *     BLAS path) over a forward and backward of a small model;
 *  2. "te-current@accum=hopper-qgmma:fast": the outputs differ from the fp32 run's, and one
 *     captured call (the first wgrad with both operands quantized, FP32 output) equals
 *     fpsim_gemm_tn_ex called here on codes and scales this test quantizes itself from the
 *     operands the observer received (same scheme, seed, stream, axis along K); the decoded
 *     elements times the scale must also give the engine's own dequantized operand;
 *  3. an unknown model name fails with FPSIM_ENAME and a message listing the valid names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "fpsim_replay.h"
#include "fpsim_task.h"

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static const char *SMALL = "layers=2,d=128,heads=2,kv_heads=2,ffn=256,vocab=128,seq=64,batch=2";
static const uint64_t SEED = 7;

/* Every GEMM output of a run, in call order, plus the one captured call's check. */
typedef struct run_log {
    double *out;
    size_t n, cap;
    const fpsim_engine_plan *plan;
    int checked;          /* the captured call was checked */
    size_t mismatches;    /* of the captured call vs fpsim_gemm_tn_ex */
    size_t dequant_bad;   /* decoded element * scale != the engine's dequantized operand */
    size_t elements;
} run_log;

/* Quantize the stored operand r the way a recipe engine must (along K), return the element
 * values in TN layout (rows = M or N, K contiguous), and check them against the engine's. */
static fpsim_status reference_operand(run_log *log, const fpsim_gemm_call *c, const fpsim_operand_report *r,
                                      int k_contiguous, fpsim_qtensor *q, float **elem)
{
    const fpsim_scheme *s = &log->plan->scheme[c->pass][r->role];
    size_t n = r->rows * r->cols;
    float *x = malloc(n * sizeof *x);
    *elem = malloc(n * sizeof **elem);
    if (!x || !*elem) return FPSIM_ENOMEM;
    for (size_t i = 0; i < n; i++) x[i] = (float)r->received[i];
    fpsim_qopts o;
    fpsim_qopts_default(&o);
    o.axis = k_contiguous ? FPSIM_AXIS_ROWS : FPSIM_AXIS_COLS;
    o.seed = fpsim_replay_step_seed(SEED, 0);
    o.stream = fpsim_replay_stream(c->layer, c->site, c->pass, r->role);
    o.want = FPSIM_QWANT_DEQUANT;
    o.threads = 1;
    fpsim_status st = fpsim_block_quantize(q, s, x, r->rows, r->cols, &o);
    free(x);
    if (st) return st;
    fpsim_spec sp;
    if ((st = fpsim_spec_make(&sp, (fpsim_format_id)s->elem, NULL, FPSIM_ROUND_DEFAULT, 0))) return st;
    size_t other = k_contiguous ? r->rows : r->cols, K = k_contiguous ? r->cols : r->rows;
    for (size_t i = 0; i < other; i++)
        for (size_t k = 0; k < K; k++) {
            uint32_t bits = fpsim_decode_f32(fpsim_qtensor_code(q, i, k), &sp);
            float v;
            memcpy(&v, &bits, sizeof v);
            (*elem)[i * K + k] = v;
            /* The engine's dequantized value at the stored position of (i, k). */
            float used = k_contiguous ? r->used[i * K + k] : r->used[k * other + i];
            if ((float)(v * q->global_scale) != used) log->dequant_bad++;
        }
    return FPSIM_OK;
}

static void check_call(run_log *log, const fpsim_gemm_call *c, const fpsim_operand_report *a,
                       const fpsim_operand_report *b)
{
    fpsim_qtensor qa, qb;
    memset(&qa, 0, sizeof qa);
    memset(&qb, 0, sizeof qb);
    float *ea = NULL, *eb = NULL, *C = malloc(c->M * c->N * sizeof *C);
    fpsim_status st = reference_operand(log, c, a, !c->a.trans, &qa, &ea);
    if (!st) st = reference_operand(log, c, b, c->b.trans, &qb, &eb);
    fpsim_accum acc;
    if (!st) st = fpsim_accum_parse(&acc, "hopper-qgmma:fast");
    fpsim_gemm_args args = {(fpsim_format_id)log->plan->scheme[c->pass][a->role].elem,
                            (fpsim_format_id)log->plan->scheme[c->pass][b->role].elem,
                            qa.global_scale, qb.global_scale, NULL, NULL, 1};
    if (!st && C) st = fpsim_gemm_tn_ex(C, ea, eb, c->M, c->N, c->K, &acc, &args);
    CHECK(!st && C, "direct fpsim_gemm_tn_ex on the captured call: %s", fpsim_last_error());
    if (!st && C) {
        for (size_t i = 0; i < c->M; i++)
            for (size_t j = 0; j < c->N; j++)
                if ((double)C[i * c->N + j] != c->c[i * c->ldc + j]) log->mismatches++;
        log->elements = c->M * c->N;
        log->checked = 1;
    }
    fpsim_qtensor_free(&qa);
    fpsim_qtensor_free(&qb);
    free(ea);
    free(eb);
    free(C);
}

static void observe(void *ctx, const fpsim_gemm_call *c, const fpsim_operand_report *a,
                    const fpsim_operand_report *b)
{
    run_log *log = ctx;
    size_t n = c->M * c->N;
    if (log->n + n > log->cap) {
        size_t cap = 2 * (log->n + n);
        double *p = realloc(log->out, cap * sizeof *p);
        if (!p) return;
        log->out = p;
        log->cap = cap;
    }
    for (size_t i = 0; i < c->M; i++)
        memcpy(log->out + log->n + i * c->N, c->c + i * c->ldc, c->N * sizeof(double));
    log->n += n;
    if (log->plan->accum_set && !log->checked && c->pass == FPSIM_PASS_WGRAD && !c->accumulate &&
        a->quantized && b->quantized)
        check_call(log, c, a, b);
}

/* One forward and backward of the small model under `recipe`, logging every GEMM output. */
static fpsim_status run(const char *recipe, run_log *log)
{
    memset(log, 0, sizeof *log);
    fpsim_model_config mc;
    fpsim_status st = fpsim_model_config_parse(&mc, SMALL, 0);
    if (st) return st;
    static fpsim_engine_plan plan;
    if ((st = fpsim_engine_plan_from_recipe(&plan, recipe))) return st;
    log->plan = &plan;
    fpsim_model m;
    fpsim_acts acts;
    memset(&m, 0, sizeof m);
    memset(&acts, 0, sizeof acts);
    fpsim_recipe_engine *e = NULL;
    size_t N = (size_t)mc.batch * (size_t)mc.seq;
    int32_t *tok = malloc(N * sizeof *tok), *tgt = malloc(N * sizeof *tgt);
    uint8_t *mask = malloc(N);
    fpsim_task_config tc = fpsim_task_config_default();
    if (!tok || !tgt || !mask) st = FPSIM_ENOMEM;
    if (!st) st = fpsim_model_create(&m, &mc);
    if (!st) st = fpsim_acts_create(&acts, &mc);
    if (!st) st = fpsim_recipe_engine_create(&e, &plan, mc.layers, SEED, 1);
    if (!st) st = fpsim_task_batch(&tc, &mc, 0, tok, tgt, mask);
    if (!st) {
        fpsim_recipe_engine_set_observer(e, observe, log);
        fpsim_numerics nx = fpsim_recipe_engine_numerics(e);
        st = fpsim_model_forward(&m, &nx, &acts, tok, tgt, mask, NULL, NULL, NULL);
        if (!st) st = fpsim_model_backward(&m, &nx, &acts, NULL, NULL);
    }
    fpsim_recipe_engine_free(e);
    fpsim_acts_free(&acts);
    fpsim_model_free(&m);
    free(tok);
    free(tgt);
    free(mask);
    return st;
}

int main(void)
{
    run_log def, fp32, fast;
    fpsim_status st = run("te-current", &def);
    CHECK(!st, "te-current: %s", fpsim_last_error());
    st = run("te-current@accum=fp32", &fp32);
    CHECK(!st, "te-current@accum=fp32: %s", fpsim_last_error());
    st = run("te-current@accum=hopper-qgmma:fast", &fast);
    CHECK(!st, "te-current@accum=hopper-qgmma:fast: %s", fpsim_last_error());

    /* 1. fp32 = the default, bit for bit. */
    CHECK(def.n > 0 && def.n == fp32.n && !memcmp(def.out, fp32.out, def.n * sizeof(double)),
          "accum=fp32 GEMM outputs differ from the default (%zu vs %zu values)", def.n, fp32.n);

    /* 2. hopper-qgmma:fast differs from fp32, and equals the direct model call. */
    size_t diff = 0;
    for (size_t i = 0; i < def.n && i < fast.n; i++) diff += def.out[i] != fast.out[i];
    CHECK(fast.n == def.n && diff > 0, "hopper-qgmma:fast GEMM outputs equal fp32's (%zu values)", fast.n);
    CHECK(fast.checked, "no wgrad call with both operands quantized was captured");
    CHECK(fast.checked && fast.mismatches == 0, "captured call: %zu of %zu outputs differ from fpsim_gemm_tn_ex",
          fast.mismatches, fast.elements);
    CHECK(fast.dequant_bad == 0, "%zu decoded elements * scale differ from the engine's dequantized operand",
          fast.dequant_bad);
    printf("fp32 vs default: %zu GEMM outputs, identical; hopper-qgmma:fast: %zu of %zu differ from fp32; "
           "captured wgrad call: %zu outputs, %zu mismatches vs fpsim_gemm_tn_ex\n",
           def.n, diff, fast.n, fast.elements, fast.mismatches);

    /* 3. unknown model: FPSIM_ENAME, the valid names listed. */
    fpsim_engine_plan plan;
    st = fpsim_engine_plan_from_recipe(&plan, "te-current@accum=hopper-qmma");
    CHECK(st == FPSIM_ENAME, "unknown model: status %d, want FPSIM_ENAME", (int)st);
    CHECK(strstr(fpsim_last_error(), "hopper-qgmma:fast") && strstr(fpsim_last_error(), "mma-sync-fp8"),
          "unknown model message does not list the valid names: %s", fpsim_last_error());

    free(def.out);
    free(fp32.out);
    free(fast.out);
    if (failures) printf("%d failure(s)\n", failures);
    else printf("test_replay_accum: ok\n");
    return failures ? 1 : 0;
}
