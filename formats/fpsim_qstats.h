/* fpsim_qstats.h: per-tensor quantization statistics that merge exactly.
 *
 * A quantizer compares its dequantized output q with the high-precision input x element by
 * element. Counts are integers. Sums (sum x^2, sum (q-x)^2, sum (q-x)) are accumulated per run
 * (a stored row) in double in a fixed order that the data layout decides, and the run sums are
 * added into exact fixed-point superaccumulators (fpsim_xsum): integer bins, so merging in any
 * order, from any number of threads, chunks or GPU blocks, gives the same bits. Maxima are
 * order-independent by nature.
 *
 * Elements whose input is NaN or +-Inf are counted (nan / inf) and excluded from the sums and the
 * error maxima; an element whose input is finite but whose dequantized value is NaN (a NaN block
 * scale) is counted in nan_out and also excluded from the sums. */
#ifndef FPSIM_QSTATS_H
#define FPSIM_QSTATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exact sum of doubles: value = sum_k bin[k] * 2^(32*k - FPSIM_XSUM_BIAS). Each finite double is
 * split into 32-bit limbs; bins are normalized (carried) before they can overflow. */
#define FPSIM_XSUM_BINS 70
#define FPSIM_XSUM_BIAS 1088 /* 32*34: bin 0 holds bits of weight 2^-1088 (below 2^-1074) */
typedef struct fpsim_xsum {
    int64_t bin[FPSIM_XSUM_BINS];
    uint32_t pending; /* additions since the last carry pass */
} fpsim_xsum;

void fpsim_xsum_init(fpsim_xsum *s);
void fpsim_xsum_add(fpsim_xsum *s, double v); /* v finite; non-finite values are ignored */
void fpsim_xsum_merge(fpsim_xsum *into, const fpsim_xsum *from);
double fpsim_xsum_value(const fpsim_xsum *s); /* the exact sum rounded to double (RNE) */

typedef struct fpsim_qstats {
    uint64_t count;      /* elements seen (finite or not) */
    uint64_t finite;     /* elements with a finite input: the ones in the sums */
    uint64_t nan;        /* inputs that are NaN */
    uint64_t inf;        /* inputs that are +-Inf */
    uint64_t nan_out;    /* finite inputs that dequantized to NaN or Inf (NaN scale, nosat casts) */
    uint64_t flushed;    /* nonzero finite inputs that dequantized to (+-)0 */
    uint64_t saturated;  /* finite inputs whose scaled value exceeded the element max (clipped) */
    uint64_t zero_blocks;/* blocks whose amax was 0 */
    uint64_t blocks;     /* blocks quantized */
    double amax;         /* max |x| over finite inputs */
    double max_abs_err;  /* max |q - x| over finite inputs with finite q */
    fpsim_xsum sum_ref2; /* sum x^2 */
    fpsim_xsum sum_err2; /* sum (q - x)^2 */
    fpsim_xsum sum_err;  /* sum (q - x): the bias */
} fpsim_qstats;

void fpsim_qstats_init(fpsim_qstats *st);
void fpsim_qstats_merge(fpsim_qstats *into, const fpsim_qstats *from);

/* Add one run of n elements (x the inputs, q the dequantized values, both with `stride`): counts,
 * maxima, and sums formed in double in a fixed order (four interleaved lanes, i mod 4) then added
 * exactly. The caller fixes the runs by the data layout (one row), never by the thread count.
 * `saturated`, `blocks` and `zero_blocks` are counted by the quantizer, which alone sees the
 * scaled values. */
void fpsim_qstats_add_block(fpsim_qstats *st, const float *x, const float *q, size_t n,
                            size_t stride);

/* Derived figures (computed from the exact sums at the end). */
double fpsim_qstats_rel_l2(const fpsim_qstats *st);   /* sqrt(sum err^2 / sum x^2); 0 if x = 0 */
double fpsim_qstats_sqnr_db(const fpsim_qstats *st);  /* 10 log10(sum x^2 / sum err^2); +Inf if exact */
double fpsim_qstats_mean_err(const fpsim_qstats *st); /* sum (q - x) / finite */

#ifdef __cplusplus
}
#endif
#endif
