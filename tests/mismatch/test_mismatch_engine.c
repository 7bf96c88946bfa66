/* test_mismatch_engine.c: generator/trainer engines and runs on a small model.
 *   - identical engine configurations give exactly zero mismatch (every metric at its perfect
 *     value, every canonical point equal), sampled and scored;
 *   - BF16 decode with pairwise reductions vs BF16 prefill with sequential ones: a small,
 *     nonzero mismatch (the kernel-order effect), below NeMo RL's 1.05 acceptance bound;
 *   - attribution on a constructed case: generator and trainer differ only in the reduction
 *     order; swapping the reduce part makes the mismatch exactly zero, swapping the unrelated
 *     parts (gemm, kv) leaves it exactly unchanged;
 *   - the FP32 reduction orders are really different orders (hand-made cancelling vector);
 *   - the sampler's draws follow the distribution (stratified uniforms), top-p keeps the head;
 *   - same bits on 1 and 2 threads;
 *   - the token file reader (prompt | response, padding, errors). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "fpsim_h5.h"
#include "fpsim_mismatch.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("mismatch engines");

static void small_config(fpsim_mm_config *c)
{
    fpsim_mm_config_default(c);
    fpsim_status st = fpsim_model_config_parse(&c->model, "layers=2,d=64,heads=2,kv_heads=2,ffn=128,vocab=16,seq=40,batch=4", 0);
    if (st) {
        fprintf(stderr, "model config: %s\n", fpsim_last_error());
        exit(1);
    }
    c->pretrain_steps = 20;
    c->samples = 6;
    c->steps = 1;
    c->nconfigs = 1;
    snprintf(c->names[0], sizeof c->names[0], "t");
}

static const fpsim_mm_summary *last(const fpsim_mm_run *r) { return &r->results[0].summary[r->config.steps - 1]; }

int main(void)
{
    fpsim_mm_config c;
    fpsim_mm_run *r = NULL;
    fpsim_status st;

    /* 1. identical engines */
    small_config(&c);
    fpsim_engine_config_generator(&c.gen[0], "bf16");
    c.train[0] = c.gen[0];
    c.attribution = 0;
    if ((st = fpsim_mm_run_all(&r, &c))) { fprintf(stderr, "run: %s\n", fpsim_last_error()); return 1; }
    const fpsim_mm_summary *s = last(r);
    tc.checks++;
    if (s->token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].max != 1.0 || s->token[FPSIM_MM_GEN_KL_ERROR].max != 0.0 ||
        s->token[FPSIM_MM_JS_DIVERGENCE_ERROR].max != 0.0 || s->diff_max_abs != 0.0 || s->tokens == 0)
        test_fail(&tc, "identical engines: mult max %.17g gen_kl max %g diff %g tokens %zu",
                  s->token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].max, s->token[FPSIM_MM_GEN_KL_ERROR].max,
                  s->diff_max_abs, s->tokens);
    for (int k = 0; k < c.model.layers + 3; k++) {
        tc.checks++;
        if (r->results[0].points[k].max_abs != 0.0) test_fail(&tc, "identical engines: point %d differs", k);
    }
    fpsim_mm_run_free(r);

    /* 2. BF16 decode / pairwise vs BF16 prefill / sequential */
    small_config(&c);
    fpsim_engine_config_generator(&c.gen[0], "bf16");
    fpsim_engine_config_trainer(&c.train[0], "bf16");
    c.attribution = 0;
    if ((st = fpsim_mm_run_all(&r, &c))) { fprintf(stderr, "run: %s\n", fpsim_last_error()); return 1; }
    double mult = last(r)->token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean;
    tc.checks++;
    if (!(mult > 1.0 && mult < 1.05)) test_fail(&tc, "bf16 vs bf16: token_mult_prob_error %.17g not in (1, 1.05)", mult);
    /* results file round trip: g read back through the generic HDF5 reader, bit for bit */
    {
        const char *h5 = "test_mismatch_out.h5";
        st = fpsim_mm_write_h5(r, h5, "test");
        fpsim_h5_matrix mx;
        char ds[128];
        snprintf(ds, sizeof ds, "configs/%s/g", r->results[0].name);
        fpsim_status st2 = st ? st : fpsim_h5_read_matrix(&mx, h5, ds);
        tc.checks++;
        if (st2) test_fail(&tc, "results file: %s", fpsim_last_error());
        else {
            tc.checks++;
            if (mx.type != FPSIM_H5_F64 || mx.rows != r->n || mx.cols != r->len ||
                memcmp(mx.data, r->results[0].g, r->n * r->len * sizeof(double)))
                test_fail(&tc, "results file: g differs after the round trip");
            free(mx.data);
        }
        remove(h5);
        /* an unwritable path fails and leaves nothing */
        st = fpsim_mm_write_h5(r, "no_such_dir/x.h5", "test");
        tc.checks++;
        if (st == FPSIM_OK || fopen("no_such_dir/x.h5", "r")) test_fail(&tc, "unwritable results path accepted");
    }
    /* determinism across thread counts */
    double *g1 = malloc(r->n * r->len * sizeof *g1);
    memcpy(g1, r->results[0].g, r->n * r->len * sizeof *g1);
    fpsim_mm_run_free(r);
    c.threads = 2;
    if ((st = fpsim_mm_run_all(&r, &c))) { fprintf(stderr, "run: %s\n", fpsim_last_error()); return 1; }
    tc.checks++;
    if (memcmp(g1, r->results[0].g, r->n * r->len * sizeof *g1)) test_fail(&tc, "1 vs 2 threads: different g");
    fpsim_mm_run_free(r);
    free(g1);

    /* 3. attribution on a constructed case: only the reduce order differs (both prefill) */
    small_config(&c);
    fpsim_engine_config_trainer(&c.gen[0], "bf16");
    fpsim_engine_config_trainer(&c.train[0], "bf16");
    c.gen[0].reduce = FPSIM_REDUCE_BLOCKED;
    c.attribution = 1;
    if ((st = fpsim_mm_run_all(&r, &c))) { fprintf(stderr, "run: %s\n", fpsim_last_error()); return 1; }
    const fpsim_mm_result *x = &r->results[0];
    double full = last(r)->token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean;
    tc.checks++;
    if (!(full > 1.0)) test_fail(&tc, "blocked vs seq reductions: no mismatch (%.17g)", full);
    tc.checks++;
    if (x->attr_part[1].token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].max != 1.0)
        test_fail(&tc, "reduce swapped everywhere: mismatch left %.17g", x->attr_part[1].token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean);
    for (int k = 0; k < 3; k += 2) {
        tc.checks++;
        if (x->attr_part[k].token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean != full)
            test_fail(&tc, "part %d swapped (no difference there) changed the mismatch", k);
    }
    /* the embedding has no reduction: swapping it changes nothing */
    tc.checks++;
    if (x->attr_layer[0].token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean != full)
        test_fail(&tc, "embedding swap changed the mismatch");
    /* each block swap removes part of it: never more than all of it */
    for (int k = 1; k <= c.model.layers + 1; k++) {
        double v = x->attr_layer[k].token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean;
        tc.checks++;
        if (!(v >= 1.0)) test_fail(&tc, "layer swap %d: %.17g below perfect", k, v);
    }
    fpsim_mm_run_free(r);

    /* 4. reduction orders: [1e8, 1, -1e8, 1] in float */
    float v[4] = {1e8f, 1.0f, -1e8f, 1.0f}, w[4];
    memcpy(w, v, sizeof w);
    float seq = fpsim_engine_sum_f32(w, 4, FPSIM_REDUCE_SEQ);
    memcpy(w, v, sizeof w);
    float pair = fpsim_engine_sum_f32(w, 4, FPSIM_REDUCE_PAIRWISE);
    tc.checks++;
    if (seq != 1.0f || pair != 0.0f) test_fail(&tc, "orders: seq %g (want 1) pairwise %g (want 0)", seq, pair);
    float big[40];
    for (int i = 0; i < 40; i++) big[i] = (i == 0) ? 1e8f : (i == 32 ? -1e8f : 1.0f);
    float blk = fpsim_engine_sum_f32(big, 40, FPSIM_REDUCE_BLOCKED);
    /* block 0: 1e8 + 31 ones -> 1e8 (each 1 lost: ulp 8); block 1: -1e8 + 7 ones -> -1e8; sum 0 */
    tc.checks++;
    if (blk != 0.0f) test_fail(&tc, "blocked order: %g (want 0)", blk);

    /* 5. sampler: stratified uniforms reproduce the probabilities */
    double logits[4] = {log(0.5), log(0.25), log(0.125), log(0.125)}, scratch[4];
    int order[4], counts[4] = {0};
    for (int i = 0; i < 800; i++) counts[fpsim_mm_sample(logits, 4, 1.0, 1.0, (i + 0.5) / 800, scratch, order)]++;
    tc.checks++;
    if (counts[0] != 400 || counts[1] != 200 || counts[2] != 100 || counts[3] != 100)
        test_fail(&tc, "sampler counts %d %d %d %d", counts[0], counts[1], counts[2], counts[3]);
    int top = 0;
    for (int i = 0; i < 100; i++) top += fpsim_mm_sample(logits, 4, 1.0, 0.5, (i + 0.5) / 100, scratch, order) == 0;
    tc.checks++;
    if (top != 100) test_fail(&tc, "top_p 0.5 kept more than the head (%d of 100)", top);
    /* temperature -> log-probs of the scaled distribution */
    int32_t toks[2] = {0, 1};
    double lp[2];
    fpsim_mm_logprobs(lp, logits, toks, 1, 2, 4, 2.0);
    double z = sqrt(0.5) + sqrt(0.25) + 2 * sqrt(0.125);
    tc.checks++;
    if (fabs(lp[1] - log(sqrt(0.25) / z)) > 1e-14) test_fail(&tc, "temperature logprob %.17g", lp[1]);

    /* 6. token files */
    const char *path = "test_mismatch_tokens.txt";
    FILE *f = fopen(path, "w");
    fprintf(f, "# comment\n14 1 2 | 3 4 5\n\n14 7 8 9\n");
    fclose(f);
    int32_t *tk;
    uint8_t *mk;
    size_t n, len;
    st = fpsim_mm_tokens_read(path, 16, &tk, &mk, &n, &len);
    tc.checks++;
    if (st || n != 2 || len != 6) test_fail(&tc, "token file: st %d n %zu len %zu", (int)st, n, len);
    else {
        uint8_t want_m[12] = {0, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0};
        int32_t want_t[12] = {14, 1, 2, 3, 4, 5, 14, 7, 8, 9, FPSIM_TOK_PAD, FPSIM_TOK_PAD};
        tc.checks++;
        if (memcmp(mk, want_m, 12) || memcmp(tk, want_t, sizeof want_t)) test_fail(&tc, "token file contents");
        free(tk);
        free(mk);
    }
    f = fopen(path, "w");
    fprintf(f, "1 2 x 3\n");
    fclose(f);
    st = fpsim_mm_tokens_read(path, 16, &tk, &mk, &n, &len);
    tc.checks++;
    if (st != FPSIM_EFORMAT || !strstr(fpsim_last_error(), "line 1")) test_fail(&tc, "bad token not reported: %s", fpsim_last_error());
    f = fopen(path, "w");
    fprintf(f, "1 2 99\n");
    fclose(f);
    st = fpsim_mm_tokens_read(path, 16, &tk, &mk, &n, &len);
    tc.checks++;
    if (st != FPSIM_EDATA) test_fail(&tc, "token outside the vocabulary not reported");
    /* an empty prompt: its first response token has no prediction, and was dropped unscored */
    f = fopen(path, "w");
    fprintf(f, "1 2 3\n| 1 2\n");
    fclose(f);
    st = fpsim_mm_tokens_read(path, 16, &tk, &mk, &n, &len);
    tc.checks++;
    if (st != FPSIM_EFORMAT || !strstr(fpsim_last_error(), "line 2 has an empty prompt"))
        test_fail(&tc, "empty prompt not reported: %s", fpsim_last_error());
    remove(path);
    return test_summary(&tc);
}
