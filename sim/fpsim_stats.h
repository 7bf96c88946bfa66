/* fpsim_stats.h: error statistics of a candidate tensor against a reference tensor.
 *
 * An fpsim_stats is a mergeable accumulator over (reference, candidate) pairs: counts, sums of
 * squares, the dot product, signed error sums and the max abs error, from which the derived
 * figures (relative L2 error, cosine, SQNR, bias, projection on the reference direction) are
 * computed at the end (fpsim_stats_summarize).
 *
 * Determinism. Floating-point addition is not associative, so a sum's bits depend on its order.
 * fpsim_stats_add_f64 / _f32 cut the array into fixed chunks of FPSIM_STATS_CHUNK elements (a
 * partition that depends on nothing but n), sum each chunk in a fixed interleaved order (element
 * i into lane i mod 8, lanes folded in order), and fold the chunk
 * partials in index order with fpsim_stats_merge. Threads only decide who computes a chunk, never
 * the order of any addition, so the result has the same bits on any thread count.
 * fpsim_stats_merge(a, b) itself is order-dependent in the last bit (a+b+c != a+(b+c)); callers
 * merge in a fixed order (layer, then call ordinal), never in completion order.
 *
 * Pairs where either value is NaN or Inf are counted (nonfinite) and left out of every sum, so
 * one NaN does not hide the statistics of the rest. "Flushed" counts pairs whose reference is
 * nonzero and whose candidate is exactly zero (underflow to zero by the quantizer). Saturation
 * cannot be seen from values alone: the quantizer's own count is added with fpsim_stats_add_counts. */
#ifndef FPSIM_STATS_H
#define FPSIM_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Elements per fixed chunk of the deterministic partition. */
#define FPSIM_STATS_CHUNK 4096

typedef struct fpsim_stats {
    uint64_t count;      /* pairs added (finite and not) */
    uint64_t finite;     /* pairs where both values are finite: the ones in the sums below */
    uint64_t nonfinite;  /* pairs with a NaN or Inf in the reference or the candidate */
    uint64_t flushed;    /* reference != 0, candidate == 0 */
    uint64_t saturated;  /* reported by the quantizer (fpsim_stats_add_counts) */
    double sum_ref2;     /* sum r^2 */
    double sum_cand2;    /* sum c^2 */
    double sum_err2;     /* sum (c - r)^2 */
    double sum_dot;      /* sum r c */
    double sum_err;      /* sum (c - r): signed, for the bias */
    double sum_err_ref;  /* sum (c - r) r: the error's component along the reference */
    double max_abs_err;  /* max |c - r| */
    double max_abs_ref;  /* max |r| (amax of the reference) */
} fpsim_stats;

/* Derived figures. NaN where undefined (e.g. cosine of a zero vector; SQNR of an exact match is
 * +Inf, of a zero reference is NaN). */
typedef struct fpsim_stats_summary {
    double rel_l2;       /* ||c - r|| / ||r|| */
    double max_abs_err;  /* max |c - r| */
    double cosine;       /* <r, c> / (||r|| ||c||) */
    double sqnr_db;      /* 10 log10(||r||^2 / ||c - r||^2) */
    double bias;         /* mean signed error: sum (c - r) / finite */
    double rel_bias;     /* bias / rms(r): the bias in units of the reference's RMS */
    double proj;         /* <c - r, r> / ||r||^2: relative error along the reference direction
                          * (-0.01: the candidate is the reference shrunk by 1%, plus an
                          * orthogonal part) */
    double flush_rate;   /* flushed / count */
    double sat_rate;     /* saturated / count */
    double nonfinite_rate;
    uint64_t count;
} fpsim_stats_summary;

/* An empty accumulator. */
void fpsim_stats_init(fpsim_stats *s);

/* Add the n pairs (ref[i], cand[i]) of two contiguous arrays. `threads` <= 1 runs on the calling
 * thread; any value gives the same bits (fixed chunks, folded in index order). */
fpsim_status fpsim_stats_add_f64(fpsim_stats *s, const double *ref, const double *cand, size_t n,
                                 int threads);
/* Same with a float32 candidate (a dequantized tensor) against a float64 reference. */
fpsim_status fpsim_stats_add_f32(fpsim_stats *s, const double *ref, const float *cand, size_t n,
                                 int threads);

/* Add counts that only the quantizer knows. */
void fpsim_stats_add_counts(fpsim_stats *s, uint64_t saturated);

/* *into += *from: counts add, sums add (in this order), maxima take the max. */
void fpsim_stats_merge(fpsim_stats *into, const fpsim_stats *from);

/* Compute the derived figures. */
void fpsim_stats_summarize(fpsim_stats_summary *out, const fpsim_stats *s);

#ifdef __cplusplus
}
#endif
#endif
