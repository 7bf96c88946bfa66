/* mismatch_is.c: importance-sampling corrections and how often they bite (fpsim_mismatch.h).
 *
 * As NVIDIA-NeMo/RL ClippedPGLoss (loss_functions.py, head 7ea279abf):
 *   token weight w = exp(p - g), NaN / +-Inf mapped to 0 (torch.nan_to_num(..., 0, 0, 0));
 *   "tis":          is_oob_ratio = 1 - mean(min <= w <= max); w = clamp(w, min, max) (NeMo RL
 *                   clamps to max only; rl-and-recipes.md section 3 clamps to [min, max] with min
 *                   defaulting to 0, which is the same for every w >= 0);
 *   "icepop":       kept = min <= w <= max; is_oob_ratio = 1 - mean(kept); w = kept ? w : 0;
 *   "seq-mask-tis": geo = exp(mean_t nan_to_num(p - g)); kept = min <= geo <= max per sequence;
 *                   is_oob_ratio = 1 - mean over sequences(kept); w *= kept;
 *   sequence_level_importance_ratios: w = nan_to_num(exp(sum_t (p - g))) on every token of the
 *                   sequence: the sum of the raw differences, so one -Inf trainer log-prob
 *                   zeroes the sequence's weight (it is not dropped from the sum). */
#include <math.h>
#include <stdlib.h>

#include "fpsim_mismatch.h"

static const char *const is_names[FPSIM_IS_COUNT] = {"plain", "tis", "icepop", "seq-mask-tis",
                                                     "seq-ratio"};

const char *fpsim_is_kind_name(int kind)
{
    if (kind < 0 || kind >= FPSIM_IS_COUNT) return NULL;
    return is_names[kind];
}

static double finite_or_zero(double x) { return isfinite(x) ? x : 0.0; }

fpsim_status fpsim_is_weights(fpsim_is_result *out, double *w, fpsim_is_kind kind, double lo,
                              double hi, const double *g, const double *p, const uint8_t *mask,
                              size_t n, size_t len)
{
    if ((int)kind < 0 || kind >= FPSIM_IS_COUNT)
        return fpsim_fail(FPSIM_EINVAL, "unknown IS correction %d", (int)kind);
    if (!(lo <= hi)) return fpsim_fail(FPSIM_EINVAL, "IS bounds [%g, %g] are empty", lo, hi);
    size_t tokens = 0, oob_tokens = 0, seqs = 0, oob_seqs = 0, zeros = 0;
    double sum = 0.0, wmax = -INFINITY, wmin = INFINITY;
    for (size_t s = 0; s < n; s++) {
        const double *gs = g + s * len, *ps = p + s * len;
        const uint8_t *ms = mask + s * len;
        double lsum = 0.0, raw_sum = 0.0;
        size_t cnt = 0;
        for (size_t t = 0; t < len; t++) {
            if (!ms[t]) continue;
            lsum += finite_or_zero(ps[t] - gs[t]);
            raw_sum += ps[t] - gs[t];
            cnt++;
        }
        int seq_kept = 1;
        if (cnt > 0) {
            seqs++;
            if (kind == FPSIM_IS_SEQ_MASK_TIS) {
                double geo = exp(lsum / (double)cnt);
                seq_kept = geo >= lo && geo <= hi;
                oob_seqs += !seq_kept;
            }
        }
        double seq_w = finite_or_zero(exp(raw_sum));
        for (size_t t = 0; t < len; t++) {
            double wt = 0.0;
            if (ms[t]) {
                double raw = finite_or_zero(exp(ps[t] - gs[t]));
                switch (kind) {
                case FPSIM_IS_PLAIN: wt = raw; break;
                case FPSIM_IS_TIS:
                    oob_tokens += !(raw >= lo && raw <= hi);
                    wt = raw > hi ? hi : (raw < lo ? lo : raw);
                    break;
                case FPSIM_IS_ICEPOP: {
                    int kept = raw >= lo && raw <= hi;
                    oob_tokens += !kept;
                    wt = kept ? raw : 0.0;
                    break;
                }
                case FPSIM_IS_SEQ_MASK_TIS: wt = seq_kept ? raw : 0.0; break;
                case FPSIM_IS_SEQ_RATIO: wt = seq_w; break;
                default: break;
                }
                tokens++;
                sum += wt;
                zeros += wt == 0.0;
                if (wt > wmax) wmax = wt;
                if (wt < wmin) wmin = wt;
            }
            if (w) w[s * len + t] = wt;
        }
    }
    out->weight_mean = tokens ? sum / (double)tokens : NAN;
    out->weight_max = tokens ? wmax : NAN;
    out->weight_min = tokens ? wmin : NAN;
    out->zero_fraction = tokens ? (double)zeros / (double)tokens : NAN;
    if (kind == FPSIM_IS_TIS || kind == FPSIM_IS_ICEPOP)
        out->oob_ratio = tokens ? (double)oob_tokens / (double)tokens : NAN;
    else if (kind == FPSIM_IS_SEQ_MASK_TIS)
        out->oob_ratio = seqs ? (double)oob_seqs / (double)seqs : NAN;
    else
        out->oob_ratio = 0.0;
    return FPSIM_OK;
}
