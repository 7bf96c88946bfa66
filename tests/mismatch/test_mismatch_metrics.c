/* test_mismatch_metrics.c: the metric and IS functions against hand-computed cases.
 * Every expected value below is written from the definition (rl-and-recipes.md section 2/3),
 * as closed forms or numbers worked out by hand, not produced by the code under test. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fpsim_mismatch.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("mismatch metrics");

static void near(double got, double want, double tol, const char *what)
{
    tc.checks++;
    if (!(fabs(got - want) <= tol * (1.0 + fabs(want))))
        test_fail(&tc, "%s: got %.17g want %.17g", what, got, want);
}

/* relative error at most tol (for values far below 1, where near() would pass anything) */
static void rel(double got, double want, double tol, const char *what)
{
    tc.checks++;
    if (!(fabs(got - want) <= tol * fabs(want)))
        test_fail(&tc, "%s: got %.17g want %.17g (relative error %.3g)", what, got, want,
                  fabs(got - want) / fabs(want));
}

static void is_nan(double got, const char *what)
{
    tc.checks++;
    if (!isnan(got)) test_fail(&tc, "%s: got %.17g, want NaN", what, got);
}

int main(void)
{
    /* The doc's example: gen -5 vs train -15: policy_kl ~ 22015, gen_kl ~ 9. */
    near(fpsim_mm_token_metric(FPSIM_MM_POLICY_KL_ERROR, -5, -15), exp(10.0) - 11.0, 1e-14, "policy_kl(-5,-15)");
    near(fpsim_mm_token_metric(FPSIM_MM_GEN_KL_ERROR, -5, -15), exp(-10.0) + 9.0, 1e-14, "gen_kl(-5,-15)");
    near(fpsim_mm_token_metric(FPSIM_MM_POLICY_KL_ERROR, -5, -15), 22015.465794806718, 1e-12, "policy_kl value");
    /* token_mult_prob_error: exp|ln 2| = 2 either sign */
    near(fpsim_mm_token_metric(FPSIM_MM_TOKEN_MULT_PROB_ERROR, log(0.5), log(0.25)), 2.0, 1e-15, "mult 2");
    near(fpsim_mm_token_metric(FPSIM_MM_TOKEN_MULT_PROB_ERROR, log(0.25), log(0.5)), 2.0, 1e-15, "mult 2 rev");
    /* JS with p = 1/2, g = 1/4: m = 3/8; 0.5 k3(log 4/3) + 0.5 k3(log 2/3) = 0.0588915... */
    near(fpsim_mm_token_metric(FPSIM_MM_JS_DIVERGENCE_ERROR, log(0.25), log(0.5)),
         0.5 * ((4.0 / 3 - 1 - log(4.0 / 3)) + (2.0 / 3 - 1 - log(2.0 / 3))), 1e-14, "js");
    near(fpsim_mm_token_metric(FPSIM_MM_JS_DIVERGENCE_ERROR, log(0.25), log(0.5)), 0.0588915, 1e-6, "js number");
    near(fpsim_mm_token_metric(FPSIM_MM_SAMPLING_IMPORTANCE_RATIO, log(0.25), log(0.5)), 2.0, 1e-15, "ratio");
    near(fpsim_mm_token_metric(FPSIM_MM_KL_SAMPLE_TRAIN_V1, -1.0, -1.5), 0.5, 0, "v1");
    near(fpsim_mm_token_metric(FPSIM_MM_KL_SAMPLE_TRAIN_V2, -1.0, -1.5), 0.125, 0, "v2");
    near(fpsim_mm_token_metric(FPSIM_MM_ABS_PROB_DIFF, log(0.25), log(0.5)), 0.25, 1e-15, "abs prob");
    /* every metric of identical log-probs is its perfect value */
    for (int k = 0; k < FPSIM_MM_TOKEN_METRIC_COUNT; k++) {
        double v = fpsim_mm_token_metric(k, -0.7, -0.7), want = 0.0;
        if (k == FPSIM_MM_TOKEN_MULT_PROB_ERROR || k == FPSIM_MM_SAMPLING_IMPORTANCE_RATIO) want = 1.0;
        tc.checks++;
        if (v != want) test_fail(&tc, "metric %s of equal logprobs: %g", fpsim_mm_token_metric_name(k), v);
    }
    /* k3 to a few ulps for every r, near 0 above all, where e^r - 1 - r cancels. The expected
     * values are mpmath's expm1(r) - r at 60 digits of the same double r, rounded to 20. */
    static const struct { double r, k3; } k3_ref[] = {
        {1e-12, 5.0000000000016664655e-25},   {-1e-12, 4.9999999999983331322e-25},
        {1e-8, 5.0000000166666669176e-17},    {-1e-8, 4.9999999833333335842e-17},
        {1e-4, 5.0001666708334171473e-9},     {-1e-4, 4.9998333374999171472e-9},
        {0.3, 0.0498588075760031001},         {-0.49, 0.10262639418441606555},
        {0.4999999, 0.14872120582800931858},  {0.5, 0.14872127070012814685},
        {-0.5, 0.1065306597126334236},        {0.75, 0.36700001661267466855},
        {-3.0, 2.049787068367863943},
    };
    for (size_t i = 0; i < sizeof k3_ref / sizeof k3_ref[0]; i++) {
        char what[64];
        snprintf(what, sizeof what, "k3(%g)", k3_ref[i].r);
        rel(fpsim_mm_k3(k3_ref[i].r), k3_ref[i].k3, 4e-16, what);
    }
    /* js and abs_prob_diff of close log-probs, where forming m or e^p - e^g first cancels
     * (mpmath at 60 digits from the same doubles: log((e^p + e^g) / 2), |e^p - e^g|) */
    static const struct { double g, p, js, apd; } close_ref[] = {
        {-5.0, -5.0 - 1e-9, 1.2500002068509360551e-19, 6.7379475532167275173e-12},
        {-0.25, -0.25 + 3e-7, 1.1250000000646960264e-14, 2.3364026997417868552e-7},
        {-20.0, -19.5, 0.030929803620161371456, 1.3371141970565133972e-9},
    };
    for (size_t i = 0; i < sizeof close_ref / sizeof close_ref[0]; i++) {
        double g0 = close_ref[i].g, p0 = close_ref[i].p;
        rel(fpsim_mm_token_metric(FPSIM_MM_JS_DIVERGENCE_ERROR, g0, p0), close_ref[i].js, 1e-14, "js close");
        rel(fpsim_mm_token_metric(FPSIM_MM_JS_DIVERGENCE_ERROR, p0, g0), close_ref[i].js, 1e-14, "js close swapped");
        rel(fpsim_mm_token_metric(FPSIM_MM_ABS_PROB_DIFF, g0, p0), close_ref[i].apd, 1e-14, "abs prob close");
    }
    near(fpsim_mm_token_metric(FPSIM_MM_LOGPROB_ABS_DIFF, -1.0, -1.5), 0.5, 0, "abs logprob diff");
    near(fpsim_mm_token_metric(FPSIM_MM_LOGPROB_ABS_DIFF, -1.5, -1.0), 0.5, 0, "abs logprob diff rev");

    /* quantiles: numpy linear: {1..5} median 3, p99 at position 3.96 -> 4.96 */
    double x[5] = {5, 1, 4, 2, 3};
    near(fpsim_mm_quantile(x, 5, 0.5), 3.0, 0, "median");
    near(fpsim_mm_quantile(x, 5, 0.99), 4.96, 1e-15, "p99");
    near(fpsim_mm_quantile(x, 5, 0.25), 2.0, 0, "p25");
    /* between two infinite neighbours: Inf, not Inf - Inf = NaN (a near-zero temperature makes
     * exp|g - p| overflow) */
    double xi[4] = {1, INFINITY, INFINITY, INFINITY};
    tc.checks++;
    if (!(fpsim_mm_quantile(xi, 4, 0.5) == INFINITY)) test_fail(&tc, "median of 1, Inf, Inf, Inf: %g", fpsim_mm_quantile(xi, 4, 0.5));
    fpsim_mm_agg a;
    uint8_t m5[5] = {1, 0, 1, 0, 1}; /* 5, 4, 3 */
    fpsim_mm_aggregate(&a, x, m5, 5);
    near(a.mean, 4.0, 0, "masked mean");
    near(a.median, 4.0, 0, "masked median");
    near(a.max, 5.0, 0, "masked max");
    near(a.min, 3.0, 0, "masked min");
    tc.checks++;
    if (a.count != 3) test_fail(&tc, "masked count %zu", a.count);

    /* 2 sequences x 3 tokens; token 0 of each unscored. d = g - p. */
    double g[6] = {0, -1.0, -2.0, 0, -0.5, -0.5};
    double p[6] = {0, -2.0, -2.0, 0, -0.5, -0.5 + log(2.0)};
    uint8_t mk[6] = {0, 1, 1, 0, 1, 1};
    fpsim_mm_summary s;
    fpsim_mm_summarize(&s, g, p, mk, 2, 3);
    /* per token mult: e^1, 1, 1, 2 */
    near(s.token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].mean, (exp(1.0) + 1 + 1 + 2) / 4, 1e-15, "summary mult mean");
    near(s.token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].max, exp(1.0), 1e-15, "summary mult max");
    near(s.token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].median, 1.5, 1e-15, "summary mult median");
    near(s.seq_mult_prob_error.mean, ((exp(1.0) + 1) / 2 + (1 + 2.0) / 2) / 2, 1e-15, "seq mult");
    near(s.seq_log_ratio.min, -1.0, 1e-15, "seq log ratio");
    near(s.diff_frac_neg, 0.25, 0, "frac neg");
    near(s.diff_max_abs, 1.0, 0, "max abs");
    near(s.ratio_frac_lt05, 0.25, 0, "ratio < 0.5 (e^-1)");
    tc.checks++;
    if (s.tokens != 4 || s.sequences != 2) test_fail(&tc, "counts %zu %zu", s.tokens, s.sequences);

    /* IS: token ratios w = e^-1, 1, 1, 2 (exp(p - g)) */
    double w[6];
    fpsim_is_result r;
    fpsim_is_weights(&r, w, FPSIM_IS_PLAIN, 0, INFINITY, g, p, mk, 2, 3);
    near(r.weight_mean, (exp(-1.0) + 1 + 1 + 2) / 4, 1e-15, "plain mean");
    near(w[0], 0.0, 0, "unscored weight 0");
    fpsim_is_weights(&r, w, FPSIM_IS_TIS, 0, 0.9, g, p, mk, 2, 3);
    near(r.oob_ratio, 0.75, 0, "tis oob (1, 1, 2 above 0.9)");
    near(w[2], 0.9, 0, "tis clamp");
    near(w[1], exp(-1.0), 1e-15, "tis keeps small");
    fpsim_is_weights(&r, w, FPSIM_IS_ICEPOP, 0.5, 5, g, p, mk, 2, 3);
    near(r.oob_ratio, 0.25, 0, "icepop oob (e^-1 < 0.5)");
    near(w[1], 0.0, 0, "icepop masks");
    near(w[5], 2.0, 1e-15, "icepop keeps 2");
    near(r.zero_fraction, 0.25, 0, "icepop zero fraction");
    /* seq-mask-tis: geo means e^(-1/2) = 0.6065 and e^(ln2/2) = 1.414; bounds [0.7, 2] drop seq 0 */
    fpsim_is_weights(&r, w, FPSIM_IS_SEQ_MASK_TIS, 0.7, 2.0, g, p, mk, 2, 3);
    near(r.oob_ratio, 0.5, 0, "seq-mask-tis oob");
    near(w[1] + w[2], 0.0, 0, "seq-mask-tis drops seq 0");
    near(w[4], 1.0, 0, "seq-mask-tis keeps raw weights");
    near(w[5], 2.0, 1e-15, "seq-mask-tis raw weight");
    fpsim_is_weights(&r, w, FPSIM_IS_SEQ_RATIO, 0, INFINITY, g, p, mk, 2, 3);
    near(w[4], 2.0, 1e-15, "seq ratio exp(sum)");
    near(w[1], exp(-1.0), 1e-15, "seq ratio seq 0");
    /* NaN / Inf ratios map to 0 */
    double gi[2] = {0, -INFINITY}, pi[2] = {0, 0};
    uint8_t mi[2] = {0, 1};
    fpsim_is_weights(&r, w, FPSIM_IS_PLAIN, 0, INFINITY, gi, pi, mi, 1, 2);
    near(w[1], 0.0, 0, "inf ratio -> 0");
    /* TIS with a lower bound: clamp to [lo, hi]; e^-1 = 0.37 below 0.5 is raised and counted */
    fpsim_is_weights(&r, w, FPSIM_IS_TIS, 0.5, 1.5, g, p, mk, 2, 3);
    near(w[1], 0.5, 0, "tis raises to lo");
    near(w[5], 1.5, 0, "tis lowers to hi");
    near(w[4], 1.0, 0, "tis keeps inside");
    near(r.oob_ratio, 0.5, 0, "tis oob both sides (e^-1 and 2)");
    /* seq-ratio: the sum of raw differences, so a -Inf trainer log-prob (ratio 0) zeroes the
     * sequence (NeMo RL sums before the exponential); it is not dropped from the sum, which
     * would give e^(1 - 1 + 2) = e^2 */
    double gs3[4] = {-1.0, -1.0, -3.0, -1.0}, ps3[4] = {0.0, -2.0, -1.0, -INFINITY};
    uint8_t ms3[4] = {1, 1, 1, 1};
    fpsim_is_weights(&r, w, FPSIM_IS_SEQ_RATIO, 0, INFINITY, gs3, ps3, ms3, 1, 4);
    near(w[0] + w[1] + w[2] + w[3], 0.0, 0, "seq ratio with a -Inf log-prob");

    /* A NaN log-prob: every aggregate NaN (numpy), never finite order statistics of a
     * scrambled sort */
    double xn[9] = {5, NAN, 1, 4, NAN, 2, 3, NAN, 0};
    fpsim_mm_aggregate(&a, xn, NULL, 9);
    is_nan(a.mean, "NaN mean");
    is_nan(a.median, "NaN median");
    is_nan(a.p99, "NaN p99");
    is_nan(a.max, "NaN max");
    is_nan(a.min, "NaN min");
    is_nan(fpsim_mm_quantile(xn, 9, 0.5), "NaN quantile");
    uint8_t mskip[9] = {1, 0, 1, 1, 0, 1, 1, 0, 1}; /* the NaNs masked out: 5 1 4 2 3 0 */
    fpsim_mm_aggregate(&a, xn, mskip, 9);
    near(a.max, 5.0, 0, "masked-out NaN max");
    near(a.min, 0.0, 0, "masked-out NaN min");
    near(a.median, 2.5, 0, "masked-out NaN median");
    double gn[3] = {-1.0, NAN, -2.0}, pn[3] = {-1.5, -1.0, -2.0};
    uint8_t mn[3] = {1, 1, 1};
    fpsim_mm_summarize(&s, gn, pn, mn, 1, 3);
    is_nan(s.token[FPSIM_MM_TOKEN_MULT_PROB_ERROR].max, "summary NaN mult max");
    is_nan(s.diff_p50, "summary NaN diff p50");
    is_nan(s.diff_max_abs, "summary NaN max_abs");
    is_nan(s.diff_frac_neg, "summary NaN frac_neg");
    is_nan(s.seq_mult_prob_error.mean, "summary NaN seq mult");
    return test_summary(&tc);
}
