/* mismatch_sample.c: log-probabilities under a temperature, and temperature / top-p sampling.
 *
 * Log-probabilities are of the temperature-scaled distribution softmax(logits / T), computed in
 * double with the max subtracted (log-sum-exp): what the sampler reports as its logprob and
 * what the trainer recomputes (NeMo RL scales the trainer's logits by the same temperature).
 * Top-p (nucleus) sampling draws from the smallest set of most probable tokens whose mass
 * reaches top_p, renormalized; it changes which tokens are drawn, not the log-probabilities. */
#include <math.h>
#include <stdlib.h>

#include "fpsim_mismatch.h"

static double log_sum_exp(const double *x, int n, double inv_t, double *maxv)
{
    double m = -INFINITY;
    for (int i = 0; i < n; i++) m = x[i] * inv_t > m ? x[i] * inv_t : m;
    double s = 0.0;
    for (int i = 0; i < n; i++) s += exp(x[i] * inv_t - m);
    *maxv = m;
    return m + log(s);
}

void fpsim_mm_logprobs(double *lp, const double *logits, const int32_t *tokens, size_t n,
                       size_t len, int vocab, double temp)
{
    double inv_t = 1.0 / temp, m;
    for (size_t s = 0; s < n; s++) {
        lp[s * len] = 0.0;
        for (size_t t = 1; t < len; t++) {
            const double *row = logits + (s * len + t - 1) * (size_t)vocab;
            double lse = log_sum_exp(row, vocab, inv_t, &m);
            lp[s * len + t] = row[tokens[s * len + t]] * inv_t - lse;
        }
    }
}

/* order[] sorted by descending probability, ties by ascending token id (a total order):
 * insertion sort, stable, no global state (vocabularies are small). */
static void sort_desc(int *order, const double *probs, int n)
{
    for (int i = 1; i < n; i++) {
        int k = order[i], j = i - 1;
        while (j >= 0 && probs[order[j]] < probs[k]) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = k;
    }
}

int32_t fpsim_mm_sample(const double *logits, int vocab, double temp, double top_p, double u,
                        double *scratch, int *order)
{
    double inv_t = 1.0 / temp, m;
    double lse = log_sum_exp(logits, vocab, inv_t, &m);
    for (int i = 0; i < vocab; i++) {
        scratch[i] = exp(logits[i] * inv_t - lse);
        order[i] = i;
    }
    sort_desc(order, scratch, vocab);
    int keep = vocab;
    if (top_p < 1.0) {
        double c = 0.0;
        for (int i = 0; i < vocab; i++) {
            c += scratch[order[i]];
            if (c >= top_p) {
                keep = i + 1;
                break;
            }
        }
    }
    double mass = 0.0;
    for (int i = 0; i < keep; i++) mass += scratch[order[i]];
    double target = u * mass, c = 0.0;
    for (int i = 0; i < keep; i++) {
        c += scratch[order[i]];
        if (target < c) return order[i];
    }
    return order[keep - 1];
}
