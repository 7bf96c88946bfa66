/* mismatch_metrics.c: per-token mismatch metrics and their aggregates (fpsim_mismatch.h).
 *
 * Formulas as NVIDIA-NeMo/RL ClippedPGLoss (loss_functions.py, head 7ea279abf) computes them:
 *   token_mult_prob_error = masked_mean(exp(|g - p|))
 *   gen_kl_error          = k3 with log_ratio = p - g
 *   policy_kl_error       = k3 with log_ratio = g - p
 *   js_divergence_error   = 0.5 (exp(p - m) - (p - m) - 1) + 0.5 (exp(g - m) - (g - m) - 1),
 *                           m = log(0.5 exp(p) + 0.5 exp(g))
 *   sampling_importance_ratio = masked_mean(exp(p - g))
 * and thinking-machines-lab/tinker-cookbook rl/metrics.py: kl_sample_train_v1 = mean(g - p),
 * v2 = 0.5 mean((g - p)^2); and slime's train_rollout_logprob_abs_diff = mean(|p - g|). Sums are
 * in double in token order (deterministic). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_mismatch.h"

static const char *const token_metric_names[FPSIM_MM_TOKEN_METRIC_COUNT] = {
    "token_mult_prob_error", "gen_kl_error",        "policy_kl_error",
    "js_divergence_error",   "sampling_importance_ratio", "kl_sample_train_v1",
    "kl_sample_train_v2",    "logprob_diff",        "abs_prob_diff",
    "train_rollout_logprob_abs_diff"};

const char *fpsim_mm_token_metric_name(int metric)
{
    if (metric < 0 || metric >= FPSIM_MM_TOKEN_METRIC_COUNT) return NULL;
    return token_metric_names[metric];
}

/* k3(r) = e^r - 1 - r. Below |r| = 1/2 as its Taylor series sum_{n>=2} r^n / n!, by Horner from
 * n = 18 (the first term left out is below 2^-60 of r^2 / 2 there): expm1(r) - r would cancel,
 * its relative error growing as 2 eps / |r| (about 1e-8 at r = 1e-8). From |r| = 1/2 on
 * expm1(r) - r loses at most two bits. */
double fpsim_mm_k3(double r)
{
    if (!(fabs(r) < 0.5)) return expm1(r) - r;
    double factorial = 6402373705728000.0; /* 18!, below 2^53: it and every n! below are exact */
    double s = 1.0 / factorial;
    for (int n = 17; n >= 2; n--) {
        factorial /= (double)(n + 1);
        s = s * r + 1.0 / factorial;
    }
    return s * r * r;
}

/* JS of one token: 0.5 k3(hi - m) + 0.5 k3(lo - m), m = log(0.5 e^hi + 0.5 e^lo), from
 * d = hi - lo >= 0 alone: hi - m = -log1p(expm1(-d) / 2) and lo - m = (hi - m) - d, so no
 * rounded m enters the arguments (its error would cancel between the two terms only to first
 * order). The two terms are then accurate to a few ulps through k3. */
static double js_divergence(double g, double p)
{
    if (g == p) return 0.0;
    double d = fabs(g - p);
    double a = -log1p(0.5 * expm1(-d));
    return 0.5 * fpsim_mm_k3(a) + 0.5 * fpsim_mm_k3(a - d);
}

/* |e^p - e^g| = e^max(p, g) (1 - e^-|p - g|): no cancellation when p and g are close. */
static double abs_prob_diff(double g, double p)
{
    if (g == p) return 0.0;
    return exp(fmax(g, p)) * -expm1(-fabs(g - p));
}

double fpsim_mm_token_metric(int metric, double g, double p)
{
    switch (metric) {
    case FPSIM_MM_TOKEN_MULT_PROB_ERROR: return exp(fabs(g - p));
    case FPSIM_MM_GEN_KL_ERROR: return fpsim_mm_k3(p - g);
    case FPSIM_MM_POLICY_KL_ERROR: return fpsim_mm_k3(g - p);
    case FPSIM_MM_JS_DIVERGENCE_ERROR: return js_divergence(g, p);
    case FPSIM_MM_SAMPLING_IMPORTANCE_RATIO: return exp(p - g);
    case FPSIM_MM_KL_SAMPLE_TRAIN_V1: return g - p;
    case FPSIM_MM_KL_SAMPLE_TRAIN_V2: return 0.5 * (g - p) * (g - p);
    case FPSIM_MM_LOGPROB_DIFF: return g - p;
    case FPSIM_MM_ABS_PROB_DIFF: return abs_prob_diff(g, p);
    case FPSIM_MM_LOGPROB_ABS_DIFF: return fabs(g - p);
    default: return NAN;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile of an already sorted array: position q (n - 1), linear between neighbours. */
static double sorted_quantile(const double *s, size_t n, double q)
{
    if (n == 0) return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)floor(pos);
    if (i + 1 >= n) return s[n - 1];
    double f = pos - (double)i;
    if (s[i] == s[i + 1]) return s[i]; /* equal neighbours, Inf included (Inf - Inf is NaN) */
    return s[i] + f * (s[i + 1] - s[i]);
}

double fpsim_mm_quantile(const double *x, size_t n, double q)
{
    if (n == 0) return NAN;
    for (size_t i = 0; i < n; i++)
        if (isnan(x[i])) return NAN;
    double *s = malloc(n * sizeof *s);
    if (!s) return NAN;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    double v = sorted_quantile(s, n, q);
    free(s);
    return v;
}

fpsim_status fpsim_mm_aggregate(fpsim_mm_agg *out, const double *x, const uint8_t *mask, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) m += (!mask || mask[i]);
    out->count = m;
    out->mean = out->median = out->p99 = out->max = out->min = NAN;
    if (m == 0) return FPSIM_OK;
    double *s = malloc(m * sizeof *s);
    if (!s) return fpsim_fail(FPSIM_ENOMEM, "out of memory aggregating %zu values", m);
    double sum = 0.0;
    size_t k = 0, nans = 0;
    for (size_t i = 0; i < n; i++) {
        if (mask && !mask[i]) continue;
        s[k++] = x[i];
        sum += x[i];
        nans += isnan(x[i]) != 0;
    }
    out->mean = sum / (double)m;
    if (nans) { /* NaN has no place in the order: every order statistic is NaN, as numpy's */
        free(s);
        return FPSIM_OK;
    }
    qsort(s, m, sizeof *s, cmp_double);
    out->median = sorted_quantile(s, m, 0.5);
    out->p99 = sorted_quantile(s, m, 0.99);
    out->min = s[0];
    out->max = s[m - 1];
    free(s);
    return FPSIM_OK;
}

fpsim_status fpsim_mm_summarize(fpsim_mm_summary *out, const double *g, const double *p,
                                const uint8_t *mask, size_t n, size_t len)
{
    memset(out, 0, sizeof *out);
    size_t total = n * len;
    double *v = malloc((total + 3 * n + 1) * sizeof *v);
    uint8_t *seq_mask = malloc(n + 1);
    if (!v || !seq_mask) {
        free(v);
        free(seq_mask);
        return fpsim_fail(FPSIM_ENOMEM, "out of memory summarizing %zu tokens", total);
    }
    fpsim_status st = FPSIM_OK;
    for (int k = 0; k < FPSIM_MM_TOKEN_METRIC_COUNT && !st; k++) {
        for (size_t i = 0; i < total; i++) v[i] = fpsim_mm_token_metric(k, g[i], p[i]);
        st = fpsim_mm_aggregate(&out->token[k], v, mask, total);
    }
    /* quantiles of g - p over scored tokens */
    size_t m = 0, neg = 0, gt2 = 0, lt05 = 0, nans = 0;
    double max_abs = 0.0;
    for (size_t i = 0; i < total; i++) {
        if (!mask[i]) continue;
        double d = g[i] - p[i], r = exp(p[i] - g[i]);
        v[m++] = d;
        nans += isnan(d) != 0;
        neg += d < 0.0;
        gt2 += r > 2.0;
        lt05 += r < 0.5;
        if (fabs(d) > max_abs) max_abs = fabs(d);
    }
    out->tokens = m;
    if (m > 0 && !nans) {
        qsort(v, m, sizeof *v, cmp_double);
        out->diff_p05 = sorted_quantile(v, m, 0.05);
        out->diff_p50 = sorted_quantile(v, m, 0.50);
        out->diff_p95 = sorted_quantile(v, m, 0.95);
        out->diff_p99 = sorted_quantile(v, m, 0.99);
        out->diff_max_abs = max_abs;
        out->diff_frac_neg = (double)neg / (double)m;
        out->ratio_frac_gt2 = (double)gt2 / (double)m;
        out->ratio_frac_lt05 = (double)lt05 / (double)m;
    } else { /* no scored token, or a NaN among them */
        out->diff_p05 = out->diff_p50 = out->diff_p95 = out->diff_p99 = NAN;
        out->diff_max_abs = out->diff_frac_neg = out->ratio_frac_gt2 = out->ratio_frac_lt05 = NAN;
    }
    /* per sequence */
    double *mult = v, *kl = v + n, *lr = v + 2 * n;
    size_t seqs = 0;
    for (size_t s = 0; s < n; s++) {
        double a = 0.0, b = 0.0, c = 0.0;
        size_t cnt = 0;
        for (size_t t = 0; t < len; t++) {
            size_t i = s * len + t;
            if (!mask[i]) continue;
            a += exp(fabs(g[i] - p[i]));
            b += fpsim_mm_k3(p[i] - g[i]);
            c += p[i] - g[i];
            cnt++;
        }
        seq_mask[s] = cnt > 0;
        seqs += cnt > 0;
        mult[s] = cnt ? a / (double)cnt : 0.0;
        kl[s] = cnt ? b / (double)cnt : 0.0;
        lr[s] = c;
    }
    out->sequences = seqs;
    if (!st) st = fpsim_mm_aggregate(&out->seq_mult_prob_error, mult, seq_mask, n);
    if (!st) st = fpsim_mm_aggregate(&out->seq_gen_kl, kl, seq_mask, n);
    if (!st) st = fpsim_mm_aggregate(&out->seq_log_ratio, lr, seq_mask, n);
    free(v);
    free(seq_mask);
    return st;
}
