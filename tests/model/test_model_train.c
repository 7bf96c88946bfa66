/* test_model_train.c: model spec parsing, the built-in task, AdamW and a short training run.
 *
 *  - spec strings: the default round-trips; each bad spec gets its own status and a message
 *    naming the offending key or dimension;
 *  - the task: every problem in a batch, parsed back from its tokens by this test, has a
 *    scratchpad and answer equal to the arithmetic done here on the parsed operands; the mask
 *    covers exactly the responses; batches are reproducible and independent of order;
 *  - AdamW: the first step moves every weight with a non-negligible gradient by lr against its
 *    gradient's sign (Adam's bias-corrected first step), weights stay float32;
 *  - training: 40 FP32 AdamW steps lower the loss on a held-out batch; pretraining twice from
 *    the same seed gives the same bits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_model.h"
#include "fpsim_task.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("model spec, task, adamw, training");

static void expect_error(const char *spec, int block, fpsim_status want, const char *needle) {
    fpsim_model_config cfg;
    fpsim_status st = fpsim_model_config_parse(&cfg, spec, block);
    const char *msg = fpsim_last_error();
    TEST_CHECK(&tc, st == want && strstr(msg, needle) != NULL,
               "spec '%s' block %d: status %d message '%s' (want %d with '%s')", spec, block,
               (int)st, msg, (int)want, needle);
}

static void check_spec(void) {
    fpsim_model_config cfg, back;
    char buf[512];
    TEST_CHECK(&tc,
               fpsim_model_config_parse(&cfg, "layers=4,d=256,heads=4,kv_heads=4,ffn=768,"
                                              "vocab=128,seq=128,batch=8,rope_theta=10000",
                                        128) == FPSIM_OK,
               "%s", fpsim_last_error());
    TEST_CHECK(&tc, cfg.batch == 8 && cfg.ffn == 768 && cfg.rope_theta == 10000.0, "%s",
               "parsed values");
    fpsim_model_config def = fpsim_model_config_default();
    TEST_CHECK(&tc, fpsim_model_config_check(&def, 128) == FPSIM_OK,
               "default not 128-aligned: %s", fpsim_last_error());
    cfg.norm_eps = 1e-6, cfg.seed = 0xFFFFFFFFFFFFFFFFull, cfg.init_std = 0.1 / 3;
    TEST_CHECK(&tc, fpsim_model_config_format(&cfg, buf, sizeof buf) == FPSIM_OK, "%s", buf);
    TEST_CHECK(&tc, fpsim_model_config_parse(&back, buf, 0) == FPSIM_OK && !memcmp(&back, &cfg, sizeof cfg),
               "round trip of '%s'", buf);
    expect_error("d=250", 128, FPSIM_ESHAPE, "d = 250");
    expect_error("ffn=700", 128, FPSIM_ESHAPE, "ffn");
    expect_error("vocab=100", 128, FPSIM_ESHAPE, "vocab");
    expect_error("seq=100", 128, FPSIM_ESHAPE, "batch*seq");
    expect_error("kv_heads=1", 128, FPSIM_ESHAPE, "kv_heads*head_dim");
    expect_error("heads=3", 0, FPSIM_ESHAPE, "divisible by heads");
    expect_error("heads=4,kv_heads=3", 0, FPSIM_ESHAPE, "kv_heads");
    expect_error("d=260,heads=20", 0, FPSIM_ESHAPE, "even");
    expect_error("layer=4", 0, FPSIM_ENAME, "kv_heads"); /* lists the valid keys */
    expect_error("layers=four", 0, FPSIM_EINVAL, "layers");
    expect_error("layers=0", 0, FPSIM_EINVAL, "layers");
    expect_error("eps=nan", 0, FPSIM_EINVAL, "eps");
    expect_error("d", 0, FPSIM_EINVAL, "key=value");
    /* strtoull skips a space and negates: " -1" must not become 2^64-1; no octal either */
    expect_error("seed= -1", 0, FPSIM_EINVAL, "seed");
    expect_error("layers= 4", 0, FPSIM_EINVAL, "layers");
    /* a key given twice or an empty clause is refused, not resolved by the last one winning */
    expect_error("layers=1,layers=2", 0, FPSIM_EINVAL, "given twice");
    expect_error("layers=1,,d=64", 0, FPSIM_EINVAL, "empty clause");
    expect_error("layers=1,", 0, FPSIM_EINVAL, "empty clause");
    expect_error(",layers=1", 0, FPSIM_EINVAL, "empty clause");
    TEST_CHECK(&tc, fpsim_model_config_parse(&cfg, "seed=010", 0) == FPSIM_OK && cfg.seed == 10,
               "seed=010 read as %llu, want 10 (decimal)", (unsigned long long)cfg.seed);
    TEST_CHECK(&tc, fpsim_model_config_parse(&cfg, "seed=0x10", 0) == FPSIM_OK && cfg.seed == 16,
               "seed=0x10 read as %llu, want 16", (unsigned long long)cfg.seed);
}

/* Parse a number of digit tokens starting at *i. */
static long parse_number(const int32_t *t, size_t n, size_t *i, int *ok) {
    long v = 0;
    size_t start = *i;
    while (*i < n && t[*i] >= 0 && t[*i] <= 9) v = v * 10 + t[(*i)++];
    if (*i == start) *ok = 0;
    return v;
}
static void expect_tok(const int32_t *t, size_t n, size_t *i, int32_t tok, int *ok) {
    if (*i < n && t[*i] == tok) (*i)++;
    else *ok = 0;
}

/* Walk one row (BOS problems PAD...) and check every problem's arithmetic and mask. */
static int check_row(const int32_t *row, const uint8_t *resp, size_t n, int *problems) {
    size_t i = 0;
    int ok = 1;
    expect_tok(row, n, &i, FPSIM_TOK_BOS, &ok);
    if (resp[0]) ok = 0;
    while (ok && i < n && row[i] != FPSIM_TOK_PAD) {
        size_t p0 = i;
        long a = parse_number(row, n, &i, &ok);
        expect_tok(row, n, &i, FPSIM_TOK_MUL, &ok);
        long b = parse_number(row, n, &i, &ok);
        expect_tok(row, n, &i, FPSIM_TOK_PLUS, &ok);
        long c = parse_number(row, n, &i, &ok);
        expect_tok(row, n, &i, FPSIM_TOK_EQ, &ok);
        for (size_t k = p0; k < i && k < n; k++) ok &= resp[k] == 0;
        size_t r0 = i;
        long sum = 0, place = 1, bb = b;
        int digit_i = 0;
        do { /* one partial product per digit of b, least significant first */
            if (digit_i++ > 0) expect_tok(row, n, &i, FPSIM_TOK_PLUS, &ok);
            long pp = parse_number(row, n, &i, &ok);
            ok &= pp == a * (bb % 10) * place;
            sum += pp, place *= 10, bb /= 10;
        } while (bb > 0 && ok);
        expect_tok(row, n, &i, FPSIM_TOK_EQ, &ok);
        ok &= parse_number(row, n, &i, &ok) == a * b && sum == a * b;
        expect_tok(row, n, &i, FPSIM_TOK_PLUS, &ok);
        ok &= parse_number(row, n, &i, &ok) == c;
        expect_tok(row, n, &i, FPSIM_TOK_EQ, &ok);
        ok &= parse_number(row, n, &i, &ok) == a * b + c;
        expect_tok(row, n, &i, FPSIM_TOK_END, &ok);
        for (size_t k = r0; k < i && k < n; k++) ok &= resp[k] == 1;
        if (ok) {
            ok &= fpsim_task_reward(a, b, c, row + r0, i - r0) == 1;
            int32_t wrong[256];
            memcpy(wrong, row + r0, sizeof(int32_t) * (i - r0));
            wrong[i - r0 - 2] = (wrong[i - r0 - 2] + 1) % 10; /* last digit of the answer */
            ok &= fpsim_task_reward(a, b, c, wrong, i - r0) == 0;
        }
        (*problems)++;
    }
    for (; ok && i < n; i++) ok &= row[i] == FPSIM_TOK_PAD && resp[i] == 0;
    return ok;
}

static void check_task(void) {
    fpsim_model_config cfg = fpsim_model_config_default();
    fpsim_task_config t = fpsim_task_config_default();
    size_t N = fpsim_model_tokens(&cfg), T = (size_t)cfg.seq;
    int32_t *in = malloc(4 * N), *tg = malloc(4 * N), *in2 = malloc(4 * N), *tg2 = malloc(4 * N);
    uint8_t *mk = malloc(N), *mk2 = malloc(N);
    int32_t *row = malloc(4 * (T + 1));
    uint8_t *resp = malloc(T + 1);
    int problems = 0;
    for (uint64_t bi = 0; bi < 20; bi++) {
        TEST_CHECK(&tc, fpsim_task_batch(&t, &cfg, bi, in, tg, mk) == FPSIM_OK, "%s",
                   fpsim_last_error());
        for (int r = 0; r < cfg.batch; r++) {
            /* rebuild the row of T+1 tokens: inputs then the last target */
            for (size_t i = 0; i < T; i++) row[i] = in[r * T + i], resp[i + 1] = mk[r * T + i];
            row[T] = tg[r * T + T - 1];
            resp[0] = 0;
            int targets_shifted = 1;
            for (size_t i = 0; i + 1 < T; i++) targets_shifted &= tg[r * T + i] == in[r * T + i + 1];
            TEST_CHECK(&tc, targets_shifted && check_row(row, resp, T + 1, &problems),
                       "batch %llu row %d is not a valid packed row", (unsigned long long)bi, r);
        }
    }
    TEST_CHECK(&tc, problems > 20 * cfg.batch, "only %d problems in 20 batches", problems);
    /* batch 7 alone (fresh) equals batch 7 made after the others */
    fpsim_task_batch(&t, &cfg, 7, in, tg, mk);
    fpsim_task_batch(&t, &cfg, 3, in2, tg2, mk2);
    fpsim_task_batch(&t, &cfg, 7, in2, tg2, mk2);
    TEST_CHECK(&tc, !memcmp(in, in2, 4 * N) && !memcmp(tg, tg2, 4 * N) && !memcmp(mk, mk2, N),
               "%s", "batch 7 not reproducible");
    fpsim_task_batch(&t, &cfg, 8, in2, tg2, mk2);
    TEST_CHECK(&tc, memcmp(in, in2, 4 * N) != 0, "%s", "batches 7 and 8 are equal");
    fpsim_model_config small = cfg;
    small.vocab = 8;
    TEST_CHECK(&tc, fpsim_task_batch(&t, &small, 0, in, tg, mk) == FPSIM_ESHAPE, "%s",
               "vocab 8 accepted");
    free(in), free(tg), free(in2), free(tg2), free(mk), free(mk2), free(row), free(resp);
}

static const char *SMALL = "layers=2,d=128,heads=4,kv_heads=2,ffn=256,vocab=128,seq=64,batch=4";

static double eval_loss(fpsim_model *m, fpsim_acts *a, uint64_t batch) {
    size_t N = fpsim_model_tokens(&m->config);
    int32_t *in = malloc(4 * N), *tg = malloc(4 * N);
    uint8_t *mk = malloc(N);
    fpsim_task_config t = fpsim_task_config_default();
    fpsim_numerics nx = fpsim_numerics_fp32();
    double loss = NAN;
    fpsim_task_batch(&t, &m->config, batch, in, tg, mk);
    fpsim_model_forward(m, &nx, a, in, tg, mk, NULL, NULL, &loss);
    free(in), free(tg), free(mk);
    return loss;
}

static void check_adamw_and_training(void) {
    fpsim_model_config cfg;
    fpsim_model m, m2;
    fpsim_acts a;
    if (fpsim_model_config_parse(&cfg, SMALL, 0) || fpsim_model_create(&m, &cfg) ||
        fpsim_acts_create(&a, &cfg)) {
        fprintf(stderr, "FAIL: cannot make '%s': %s\n", SMALL, fpsim_last_error());
        exit(1);
    }
    fpsim_adamw_config opt = fpsim_adamw_config_default();

    /* AdamW's first step (no decay, no clipping): delta = -lr sign(g) |g| / (|g| + eps) */
    fpsim_model_clone(&m2, &m);
    eval_loss(&m2, &a, 0);
    fpsim_numerics nx = fpsim_numerics_fp32();
    fpsim_model_backward(&m2, &nx, &a, NULL, NULL);
    double *before = malloc(8 * m.num_params);
    memcpy(before, m2.params_memory, 8 * m.num_params);
    opt.weight_decay = 0, opt.grad_clip = 0;
    TEST_CHECK(&tc, fpsim_adamw_step(&m2, &opt, NULL) == FPSIM_OK, "%s", fpsim_last_error());
    size_t bad = 0, checked = 0;
    for (size_t i = 0; i < m.num_params; i++) {
        double g = m2.grads_memory[i], d = m2.params_memory[i] - before[i];
        bad += (double)(float)m2.params_memory[i] != m2.params_memory[i];
        if (fabs(g) < 1e-6) continue;
        checked++;
        /* mhat / (sqrt(vhat) + eps) = |g| / (|g| + eps) up to the float32 rounding of m and v
         * (relative 1e-7); the new weight is rounded to float32: allow an ulp of it */
        double want = -copysign(opt.lr, g) * fabs(g) / (fabs(g) + opt.eps);
        double tol = 1e-6 * opt.lr + ldexp(1.0, ilogb(fabs(m2.params_memory[i])) - 23);
        bad += fabs(d - want) > tol;
    }
    TEST_CHECK(&tc, bad == 0 && checked > 1000, "adamw first step: %zu of %zu wrong", bad, checked);
    TEST_CHECK(&tc, m2.step == 1, "step %ld", m2.step);
    free(before);
    fpsim_model_free(&m2);

    /* 40 FP32 steps lower the loss on a held-out batch */
    opt = fpsim_adamw_config_default();
    opt.lr = 3e-3;
    double l0 = eval_loss(&m, &a, 1000000);
    fpsim_task_config t = fpsim_task_config_default();
    double last = 0;
    fpsim_model_clone(&m2, &m);
    TEST_CHECK(&tc, fpsim_model_pretrain(&m, &t, 40, &opt, &last) == FPSIM_OK, "%s",
               fpsim_last_error());
    double l1 = eval_loss(&m, &a, 1000000);
    printf("  held-out loss %.4f -> %.4f after 40 AdamW steps (last train loss %.4f)\n", l0, l1,
           last);
    TEST_CHECK(&tc, l1 < 0.6 * l0, "loss %g -> %g did not drop by 40%%", l0, l1);
    /* the same pretraining again: the same bits */
    TEST_CHECK(&tc, fpsim_model_pretrain(&m2, &t, 40, &opt, NULL) == FPSIM_OK, "%s",
               fpsim_last_error());
    TEST_CHECK(&tc, !memcmp(m.params_memory, m2.params_memory, 8 * m.num_params) &&
                        !memcmp(m.m_memory, m2.m_memory, 8 * m.num_params) && m2.step == 40,
               "%s", "pretraining twice differs");
    fpsim_model_free(&m2);
    fpsim_acts_free(&a);
    fpsim_model_free(&m);
}

int main(void) {
    check_spec();
    check_task();
    check_adamw_and_training();
    return test_summary(&tc);
}
