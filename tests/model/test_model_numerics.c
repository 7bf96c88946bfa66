/* test_model_numerics.c: the engines and the rounding of non-GEMM outputs.
 *
 *  1. fpsim_f64_round_bf16 / _f32 against oracles written another way (integer bit arithmetic
 *     on the IEEE encodings; integer floor and compare in the bfloat16 subnormal range).
 *  2. The model's GEMM calls follow the convention of fpsim_numerics.h: a naive engine that
 *     evaluates C[i][j] = sum_k op(A)[i][k] op(B)[k][j] from the documented index formulas
 *     reproduces the fp64 engine (to summation-order rounding), and every site x pass appears
 *     once per layer with the documented M, N, K, roles and transposes.
 *  3. The fp64 engine gives identical bits when run twice, and on 1 and 2 OpenBLAS threads (so
 *     does fp32).
 *  4. The fp32 engine is close to fp64 (relative 1e-5) and differs from it (it really rounds);
 *     the fp32 accumulate flag gives fl32(C + product).
 *  5. Decode-style attention: fpsim_attention_row fed one query at a time from a separate KV
 *     cache (another layout and stride) gives the full-sequence block's attention output bit for
 *     bit, so a later one-token-at-a-time engine can reuse it. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_model.h"
#include "fpsim_task.h"
#include "test_util.h"

/* ---------------------------------------------------------------------------------------- */
/* 1. scalar rounding oracles                                                                  */

/* bfloat16 RNE of a double in the bfloat16 normal range (|x| >= 2^-126): on the double's bits,
 * keep 1 + 7 significand bits, i.e. drop the low 45 fraction bits with round-half-even; a carry
 * out of the fraction correctly bumps the exponent. */
static double oracle_bf16_normal(double x) {
    uint64_t u = test_f64_bits(x);
    uint64_t low = u & ((1ull << 45) - 1), half = 1ull << 44;
    u &= ~((1ull << 45) - 1);
    if (low > half || (low == half && ((u >> 45) & 1))) u += 1ull << 45;
    return test_f64_from_bits(u);
}

/* bfloat16 RNE in the subnormal range: multiples of 2^-133; floor and compare the remainder. */
static double oracle_bf16_subnormal(double x) {
    double ax = fabs(x);
    double v = ax * 0x1p133; /* exact: a power-of-two scaling */
    long k = (long)v;        /* floor, v >= 0 */
    double rem = v - (double)k;
    if (rem > 0.5 || (rem == 0.5 && (k & 1))) k++;
    double r = (double)k * 0x1p-133;
    return x < 0 ? -r : r;
}

static double oracle_bf16(double x) {
    if (fabs(x) < 0x1p-126) return oracle_bf16_subnormal(x);
    double r = oracle_bf16_normal(x);
    if (fabs(r) > 0x1.FEp127) return copysign(INFINITY, x); /* above 0x7F7F: overflow */
    return r;
}

/* float32 RNE via the bits of the double (normal float range only). */
static double oracle_f32_normal(double x) {
    uint64_t u = test_f64_bits(x);
    uint64_t low = u & ((1ull << 29) - 1), half = 1ull << 28;
    u &= ~((1ull << 29) - 1);
    if (low > half || (low == half && ((u >> 29) & 1))) u += 1ull << 29;
    return test_f64_from_bits(u);
}

/* PyTorch c10::round_to_nearest_even on float bits (for inputs that are floats). */
static double torch_bf16_from_float(float f) {
    uint32_t u = test_f32_bits(f);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (double)test_f32_from_bits(u & 0xFFFF0000u);
}

static int same_value(double a, double b) {
    return test_f64_bits(a) == test_f64_bits(b) || (isnan(a) && isnan(b));
}

static void check_scalar_rounding(void) {
    static test_counter tc = TEST_COUNTER_INIT("bf16/f32 rounding vs bit oracles");
    uint64_t s = 99;
    for (int i = 0; i < 400000; i++) {
        /* random sign, exponent in [-140, 129], random 52-bit fraction; every 4th a tie */
        uint64_t r = test_splitmix64(&s);
        int e = (int)(r % 270) - 140;
        uint64_t frac = test_splitmix64(&s) & ((1ull << 52) - 1);
        if (i % 4 == 0) frac = (frac & ~((1ull << 45) - 1)) | (1ull << 44);
        double x = ldexp(1.0 + (double)frac * 0x1p-52, e);
        if (r & (1ull << 40)) x = -x;
        double got = fpsim_f64_round_bf16(x), want = oracle_bf16(x);
        tc.checks++;
        if (!same_value(got, want))
            test_fail(&tc, "bf16(%a) = %a, oracle %a", x, got, want);
        if (e >= -126 && e <= 127) {
            double g32 = fpsim_f64_round_f32(x), w32 = oracle_f32_normal(x);
            if (fabs(w32) >= 0x1p128) w32 = copysign(INFINITY, x);
            tc.checks++;
            if (!same_value(g32, w32)) test_fail(&tc, "f32(%a) = %a, oracle %a", x, g32, w32);
        }
        float f = (float)x;
        if (isfinite(f)) {
            tc.checks++;
            double gf = fpsim_f64_round_bf16((double)f), wf = torch_bf16_from_float(f);
            if (!same_value(gf, wf)) test_fail(&tc, "bf16(float %a) = %a, torch %a", (double)f, gf, wf);
        }
    }
    /* edges: the largest bfloat16, the overflow threshold (ties to even -> Inf), zeros, Inf, NaN */
    double edges[][2] = {
        {0x1.FEp127, 0x1.FEp127},          {0x1.FEFFFFFFFFFFFp127, 0x1.FEp127},
        {0x1.FFp127, INFINITY},            {-0x1.FFp127, -INFINITY},
        {0x1p-133, 0x1p-133},              {0x1p-134, 0.0},
        {0x1.0000000000001p-134, 0x1p-133}, {0x1.8p-133, 0x1p-132},
        {0.0, 0.0},                        {-0.0, -0.0},
        {INFINITY, INFINITY},              {1.0 + 0x1p-8, 1.0},
        {1.0 + 0x1p-8 + 0x1p-52, 1.0 + 0x1p-7},
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        double got = fpsim_f64_round_bf16(edges[i][0]);
        tc.checks++;
        if (!same_value(got, edges[i][1]))
            test_fail(&tc, "bf16(%a) = %a, want %a", edges[i][0], got, edges[i][1]);
    }
    tc.checks++;
    if (!isnan(fpsim_f64_round_bf16(NAN))) test_fail(&tc, "%s", "bf16(NaN) is not NaN");
    test_summary(&tc);
    if (tc.failures) exit(1);
}

/* The vectorized array roundings (fpsim_act_round_array, fpsim_act_round_to_float) against
 * the same bit oracles, element by element, on the random values above plus every edge (zeros,
 * subnormal range, overflow, Inf, NaN) at every position of a vector. */
static void check_array_rounding(void) {
    static test_counter tc = TEST_COUNTER_INIT("bf16/f32 array rounding vs bit oracles");
    enum { N = 4099 }; /* not a multiple of any vector width */
    static double x[N], y[N], z[N];
    static float f[N];
    uint64_t s = 7;
    const double edges[] = {0x1.FEp127, 0x1.FFp127, -0x1.FFp127, 0x1p-133, 0x1p-134, 0x1.8p-133,
                            0x1p-126, 0x1.FFp-127, 0.0, -0.0, INFINITY, -INFINITY, NAN, 1e300, -1e-300};
    const size_t nedges = sizeof edges / sizeof edges[0];
    for (size_t i = 0; i < N; i++) {
        uint64_t r = test_splitmix64(&s);
        int e = (int)(r % 270) - 140;
        uint64_t frac = test_splitmix64(&s) & ((1ull << 52) - 1);
        if (i % 4 == 0) frac = (frac & ~((1ull << 45) - 1)) | (1ull << 44);
        x[i] = ldexp(1.0 + (double)frac * 0x1p-52, e);
        if (r & (1ull << 40)) x[i] = -x[i];
        if (i % 7 == 3) x[i] = edges[(i / 7) % nedges];
    }
    memcpy(y, x, sizeof x);
    fpsim_act_round_array(y, N, FPSIM_ACT_BF16);
    fpsim_act_round_to_float(f, x, N, FPSIM_ACT_BF16);
    for (size_t i = 0; i < N; i++) {
        double want = isnan(x[i]) ? x[i] : x[i] == 0.0 || isinf(x[i]) ? x[i] : oracle_bf16(x[i]);
        tc.checks += 2;
        if (!same_value(y[i], want)) test_fail(&tc, "bf16 array [%zu] %a = %a, oracle %a", i, x[i], y[i], want);
        if (!same_value((double)f[i], want))
            test_fail(&tc, "bf16 to float [%zu] %a = %a, oracle %a", i, x[i], (double)f[i], want);
    }
    memcpy(z, x, sizeof x);
    fpsim_act_round_array(z, N, FPSIM_ACT_FP32);
    fpsim_act_round_to_float(f, x, N, FPSIM_ACT_FP32);
    for (size_t i = 0; i < N; i++) {
        if (!isfinite(x[i]) || x[i] == 0.0) continue;
        int e = ilogb(x[i]);
        if (!(e >= -126 && e <= 127)) continue; /* the oracle covers the normal range */
        double want = oracle_f32_normal(x[i]);
        if (fabs(want) >= 0x1p128) want = copysign(INFINITY, x[i]);
        tc.checks += 2;
        if (!same_value(z[i], want)) test_fail(&tc, "f32 array [%zu] %a = %a, oracle %a", i, x[i], z[i], want);
        if (!same_value((double)f[i], want))
            test_fail(&tc, "f32 to float [%zu] %a = %a, oracle %a", i, x[i], (double)f[i], want);
    }
    test_summary(&tc);
    if (tc.failures) exit(1);
}

/* ---------------------------------------------------------------------------------------- */
/* 2. the GEMM convention                                                                      */

typedef struct naive_ctx {
    int seen[64][FPSIM_SITE_COUNT][FPSIM_PASS_COUNT];
    test_counter *tc;
    const fpsim_model_config *cfg;
} naive_ctx;

/* op(A)[i][k] and op(B)[k][j] straight from the header's description. */
static double op_a(const fpsim_gemm_call *c, size_t i, size_t k) {
    return c->a.trans ? c->a.data[k * c->a.ld + i] : c->a.data[i * c->a.ld + k];
}
static double op_b(const fpsim_gemm_call *c, size_t k, size_t j) {
    return c->b.trans ? c->b.data[j * c->b.ld + k] : c->b.data[k * c->b.ld + j];
}

static void expect_shape(naive_ctx *x, const fpsim_gemm_call *c) {
    const fpsim_model_config *m = x->cfg;
    size_t T = fpsim_model_tokens(m), in = 0, out = 0;
    switch (c->site) {
    case FPSIM_SITE_QKV: in = (size_t)m->d, out = (size_t)fpsim_model_qkv_dim(m); break;
    case FPSIM_SITE_ATTN_OUT: in = out = (size_t)m->d; break;
    case FPSIM_SITE_GATE_UP: in = (size_t)m->d, out = 2 * (size_t)m->ffn; break;
    case FPSIM_SITE_DOWN: in = (size_t)m->ffn, out = (size_t)m->d; break;
    case FPSIM_SITE_LM_HEAD: in = (size_t)m->d, out = (size_t)m->vocab; break;
    default: break;
    }
    size_t M = 0, N = 0, K = 0;
    int ra = -1, rb = -1, ta = -1, tb = -1;
    if (c->pass == FPSIM_PASS_FPROP)
        M = T, N = out, K = in, ra = FPSIM_ROLE_ACT, ta = 0, rb = FPSIM_ROLE_WEIGHT, tb = 1;
    if (c->pass == FPSIM_PASS_DGRAD)
        M = T, N = in, K = out, ra = FPSIM_ROLE_GRAD, ta = 0, rb = FPSIM_ROLE_WEIGHT, tb = 0;
    if (c->pass == FPSIM_PASS_WGRAD)
        M = out, N = in, K = T, ra = FPSIM_ROLE_GRAD, ta = 1, rb = FPSIM_ROLE_ACT, tb = 0;
    int layer_ok = c->site == FPSIM_SITE_LM_HEAD ? c->layer == m->layers
                                                 : (c->layer >= 0 && c->layer < m->layers);
    TEST_CHECK(x->tc,
               c->M == M && c->N == N && c->K == K && (int)c->a.role == ra &&
                   (int)c->b.role == rb && c->a.trans == ta && c->b.trans == tb && layer_ok &&
                   !c->accumulate,
               "%s %s layer %d: M N K %zu %zu %zu roles %d %d trans %d %d",
               fpsim_site_name(c->site), fpsim_pass_name(c->pass), c->layer, c->M, c->N, c->K,
               c->a.role, c->b.role, c->a.trans, c->b.trans);
}

static fpsim_status naive_gemm(void *ctx, const fpsim_gemm_call *c) {
    naive_ctx *x = ctx;
    expect_shape(x, c);
    if (c->layer >= 0 && c->layer < 64) x->seen[c->layer][c->site][c->pass]++;
    for (size_t i = 0; i < c->M; i++)
        for (size_t j = 0; j < c->N; j++) {
            double s = 0;
            for (size_t k = 0; k < c->K; k++) s += op_a(c, i, k) * op_b(c, k, j);
            c->c[i * c->ldc + j] = c->accumulate ? c->c[i * c->ldc + j] + s : s;
        }
    return FPSIM_OK;
}

static double rel_l2(const double *a, const double *b, size_t n) {
    double e = 0, r = 0;
    for (size_t i = 0; i < n; i++) e += (a[i] - b[i]) * (a[i] - b[i]), r += b[i] * b[i];
    return r > 0 ? sqrt(e / r) : sqrt(e);
}

typedef struct run_out {
    double loss;
    double *grads, *logits, *resid;
    size_t n_grads, n_logits, n_resid;
} run_out;

static void run_free(run_out *r) { free(r->grads), free(r->logits), free(r->resid); }

/* One forward + backward of model state `m` on batch 0 of the task, under nx. */
static run_out run_step(const fpsim_model *m0, const fpsim_numerics *nx) {
    fpsim_model m;
    fpsim_acts a;
    run_out r = {0};
    const fpsim_model_config *cfg = &m0->config;
    size_t N = fpsim_model_tokens(cfg);
    int32_t *in = malloc(4 * N), *tg = malloc(4 * N);
    uint8_t *mk = malloc(N);
    fpsim_task_config t = fpsim_task_config_default();
    if (fpsim_model_clone(&m, m0) || fpsim_acts_create(&a, cfg) ||
        fpsim_task_batch(&t, cfg, 0, in, tg, mk) ||
        fpsim_model_forward(&m, nx, &a, in, tg, mk, NULL, NULL, &r.loss) ||
        fpsim_model_backward(&m, nx, &a, NULL, NULL)) {
        fprintf(stderr, "FAIL: run_step: %s\n", fpsim_last_error());
        exit(1);
    }
    r.n_grads = m.num_params;
    r.n_logits = N * (size_t)cfg->vocab;
    r.n_resid = ((size_t)cfg->layers + 1) * N * (size_t)cfg->d;
    r.grads = malloc(8 * r.n_grads), r.logits = malloc(8 * r.n_logits);
    r.resid = malloc(8 * r.n_resid);
    memcpy(r.grads, m.grads_memory, 8 * r.n_grads);
    memcpy(r.logits, a.head.logits, 8 * r.n_logits);
    memcpy(r.resid, a.resid, 8 * r.n_resid);
    fpsim_acts_free(&a);
    fpsim_model_free(&m);
    free(in), free(tg), free(mk);
    return r;
}

static int bits_equal(const run_out *x, const run_out *y) {
    return test_f64_bits(x->loss) == test_f64_bits(y->loss) &&
           !memcmp(x->grads, y->grads, 8 * x->n_grads) &&
           !memcmp(x->logits, y->logits, 8 * x->n_logits) &&
           !memcmp(x->resid, y->resid, 8 * x->n_resid);
}

static fpsim_model make(const char *spec) {
    fpsim_model_config cfg;
    fpsim_model m;
    if (fpsim_model_config_parse(&cfg, spec, 0) || fpsim_model_create(&m, &cfg)) {
        fprintf(stderr, "FAIL: model '%s': %s\n", spec, fpsim_last_error());
        exit(1);
    }
    return m;
}

static void check_convention(void) {
    static test_counter tc = TEST_COUNTER_INIT("gemm convention (naive engine)");
    fpsim_model m = make("layers=2,d=64,heads=4,kv_heads=2,ffn=96,vocab=32,seq=48,batch=2");
    naive_ctx x = {.tc = &tc, .cfg = &m.config};
    fpsim_numerics naive = {"naive", &x, naive_gemm, FPSIM_ACT_FP64, NULL};
    fpsim_numerics fp64 = fpsim_numerics_fp64();
    run_out a = run_step(&m, &naive), b = run_step(&m, &fp64);
    double e_loss = fabs(a.loss - b.loss) / fabs(b.loss);
    double e_grad = rel_l2(a.grads, b.grads, a.n_grads);
    double e_logit = rel_l2(a.logits, b.logits, a.n_logits);
    printf("  naive vs fp64 engine: loss %.2e, logits %.2e, grads %.2e (relative)\n", e_loss,
           e_logit, e_grad);
    TEST_CHECK(&tc, e_loss < 1e-13 && e_grad < 1e-12 && e_logit < 1e-12,
               "naive engine differs: %g %g %g", e_loss, e_grad, e_logit);
    for (int l = 0; l <= m.config.layers; l++)
        for (int s = 0; s < FPSIM_SITE_COUNT; s++)
            for (int p = 0; p < FPSIM_PASS_COUNT; p++) {
                int want = (s == FPSIM_SITE_LM_HEAD) == (l == m.config.layers);
                TEST_CHECK(&tc, x.seen[l][s][p] == want, "layer %d %s %s seen %d times", l,
                           fpsim_site_name(s), fpsim_pass_name(p), x.seen[l][s][p]);
            }
    run_free(&a), run_free(&b);
    fpsim_model_free(&m);
    test_summary(&tc);
    if (tc.failures) exit(1);
}

/* ---------------------------------------------------------------------------------------- */
/* 3 and 4: determinism, threads, fp32 vs fp64                                                 */

static int check_engines(void) {
    static test_counter tc = TEST_COUNTER_INIT("engines: determinism, threads, fp32 vs fp64");
    /* the default model: GEMMs large enough that OpenBLAS really uses its threads */
    fpsim_model_config cfg = fpsim_model_config_default();
    fpsim_model m;
    if (fpsim_model_create(&m, &cfg)) return 1;
    fpsim_numerics fp64 = fpsim_numerics_fp64(), fp32 = fpsim_numerics_fp32();

    openblas_set_num_threads(1);
    run_out d1 = run_step(&m, &fp64), d1b = run_step(&m, &fp64), s1 = run_step(&m, &fp32);
    openblas_set_num_threads(2);
    run_out d2 = run_step(&m, &fp64), s2 = run_step(&m, &fp32);
    TEST_CHECK(&tc, bits_equal(&d1, &d1b), "%s", "fp64 engine: two runs differ");
    TEST_CHECK(&tc, bits_equal(&d1, &d2), "%s", "fp64 engine: 1 and 2 threads differ");
    TEST_CHECK(&tc, bits_equal(&s1, &s2), "%s", "fp32 engine: 1 and 2 threads differ");

    double e_loss = fabs(s1.loss - d1.loss) / fabs(d1.loss);
    double e_logit = rel_l2(s1.logits, d1.logits, d1.n_logits);
    double e_resid = rel_l2(s1.resid, d1.resid, d1.n_resid);
    double e_grad = rel_l2(s1.grads, d1.grads, d1.n_grads);
    printf("  fp32 vs fp64: loss %.2e, logits %.2e, residual stream %.2e, grads %.2e\n", e_loss,
           e_logit, e_resid, e_grad);
    TEST_CHECK(&tc, e_loss < 1e-5 && e_logit < 1e-5 && e_resid < 1e-5 && e_grad < 1e-5,
               "fp32 far from fp64: %g %g %g %g", e_loss, e_logit, e_resid, e_grad);
    TEST_CHECK(&tc, e_loss > 0 && e_logit > 1e-9 && e_grad > 1e-9,
               "fp32 does not round: %g %g %g", e_loss, e_logit, e_grad);
    /* every value the fp32 engine leaves in the logits is a float */
    size_t not_float = 0;
    for (size_t i = 0; i < s1.n_logits; i++)
        not_float += (double)(float)s1.logits[i] != s1.logits[i];
    TEST_CHECK(&tc, not_float == 0, "%zu fp32 logits are not floats", not_float);
    run_free(&d1), run_free(&d1b), run_free(&d2), run_free(&s1), run_free(&s2);
    fpsim_model_free(&m);

    /* fp32 accumulate: C = fl32(C + fl32 product) */
    double A[2] = {1.0, 0x1p-30}, B[2] = {1.0, 1.0}, C[1] = {0x1p-25};
    fpsim_gemm_call call = {.layer = 0, .site = FPSIM_SITE_DOWN, .pass = FPSIM_PASS_WGRAD,
                            .M = 1, .N = 1, .K = 2, .a = {A, 2, 0, FPSIM_ROLE_GRAD},
                            .b = {B, 1, 0, FPSIM_ROLE_ACT}, .c = C, .ldc = 1,
                            .accumulate = 1};
    TEST_CHECK(&tc, fp32.gemm(NULL, &call) == FPSIM_OK, "%s", fpsim_last_error());
    /* product: 1 + 2^-30 rounds to 1 in float; 1 + 2^-25 rounds to 1 (half ulp 2^-24 > 2^-25) */
    TEST_CHECK(&tc, C[0] == 1.0, "fp32 accumulate gave %a, want 0x1p+0", C[0]);
    C[0] = 0x1p-25;
    TEST_CHECK(&tc, fp64.gemm(NULL, &call) == FPSIM_OK, "%s", fpsim_last_error());
    TEST_CHECK(&tc, C[0] == 1.0 + 0x1p-30 + 0x1p-25, "fp64 accumulate gave %a", C[0]);
    /* a malformed call is refused with a message */
    call.ldc = 0;
    TEST_CHECK(&tc, fp64.gemm(NULL, &call) == FPSIM_ESHAPE, "%s", "ldc 0 accepted");
    return test_summary(&tc);
}

/* ---------------------------------------------------------------------------------------- */
/* 5. decode-style attention from a KV cache                                                   */

static void check_decode_attention(void) {
    static test_counter tc = TEST_COUNTER_INIT("attention row from a KV cache");
    fpsim_model m = make("layers=1,d=64,heads=4,kv_heads=2,ffn=64,vocab=32,seq=24,batch=2,init_std=0.2");
    const fpsim_model_config *c = &m.config;
    size_t N = fpsim_model_tokens(c), C = (size_t)c->d, T = (size_t)c->seq;
    size_t QKV = (size_t)fpsim_model_qkv_dim(c), hd = (size_t)fpsim_model_head_dim(c);
    fpsim_block_cache k;
    fpsim_block_cache_create(&k, c);
    double *in = malloc(8 * N * C), *out = malloc(8 * N * C);
    uint64_t s = 5;
    for (size_t i = 0; i < N * C; i++) in[i] = (double)(test_splitmix64(&s) >> 11) * 0x1p-52 - 1;
    fpsim_numerics nx = fpsim_numerics_fp64();
    TEST_CHECK(&tc, fpsim_block_forward(&m, &nx, 0, in, out, &k) == FPSIM_OK, "%s",
               fpsim_last_error());
    /* cache[kv head][pos] = k (hd) then v (hd): a layout unlike the qkv rows */
    double *cache = malloc(8 * (size_t)c->kv_heads * T * 2 * hd);
    double *o = malloc(8 * hd), *p = malloc(8 * T);
    size_t differ = 0;
    for (int b = 0; b < c->batch; b++) {
        for (size_t t = 0; t < T; t++) { /* append position t to the cache, then query it */
            const double *row = k.qkvr + ((size_t)b * T + t) * QKV;
            for (int g = 0; g < c->kv_heads; g++) {
                double *slot = cache + ((size_t)g * T + t) * 2 * hd;
                memcpy(slot, row + (size_t)(c->heads + g) * hd, 8 * hd);
                memcpy(slot + hd, row + (size_t)(c->heads + c->kv_heads + g) * hd, 8 * hd);
            }
            for (int h = 0; h < c->heads; h++) {
                size_t g = (size_t)(h / (c->heads / c->kv_heads));
                const double *kv = cache + g * T * 2 * hd;
                fpsim_attention_row(o, p, row + (size_t)h * hd, kv, kv + hd, 2 * hd, (int)t,
                                    (int)hd, FPSIM_ACT_FP64);
                differ += memcmp(o, k.atty + ((size_t)b * T + t) * C + (size_t)h * hd, 8 * hd) != 0;
            }
        }
    }
    test_count(&tc, (uint64_t)c->batch * T * c->heads);
    if (differ) test_fail(&tc, "%zu decode rows differ from the full-sequence attention", differ);
    free(in), free(out), free(cache), free(o), free(p);
    fpsim_block_cache_free(&k);
    fpsim_model_free(&m);
    test_summary(&tc);
    if (tc.failures) exit(1);
}

int main(void) {
    check_scalar_rounding();
    check_array_rounding();
    check_convention();
    check_decode_attention();
    return check_engines();
}
