/* stats.c: mergeable error statistics over (reference, candidate) pairs (fpsim_stats.h).
 *
 * Each fixed chunk of FPSIM_STATS_CHUNK pairs is summed into its own accumulator (in four
 * interleaved lanes folded in lane order: see stats_chunk_lanes);
 * the chunk accumulators are folded in index order. The partition depends only on n, so the bits
 * of every sum are the same whoever computes the chunks. Sums are plain double: for the error
 * figures we report (relative errors to 3-4 digits) the rounding of a 4096-term double sum is
 * far below what is shown. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_stats.h"

void fpsim_stats_init(fpsim_stats *s)
{
    memset(s, 0, sizeof *s);
}

void fpsim_stats_add_counts(fpsim_stats *s, uint64_t saturated)
{
    s->saturated += saturated;
}

void fpsim_stats_merge(fpsim_stats *into, const fpsim_stats *from)
{
    into->count += from->count;
    into->finite += from->finite;
    into->nonfinite += from->nonfinite;
    into->flushed += from->flushed;
    into->saturated += from->saturated;
    into->sum_ref2 += from->sum_ref2;
    into->sum_cand2 += from->sum_cand2;
    into->sum_err2 += from->sum_err2;
    into->sum_dot += from->sum_dot;
    into->sum_err += from->sum_err;
    into->sum_err_ref += from->sum_err_ref;
    if (from->max_abs_err > into->max_abs_err) into->max_abs_err = from->max_abs_err;
    if (from->max_abs_ref > into->max_abs_ref) into->max_abs_ref = from->max_abs_ref;
}

/* One pair into an accumulator. The error is formed in double: c - r is exact when both are
 * float32 values (Sterbenz does not even matter: two floats differ by a double exactly). */
static inline void stats_add_pair(fpsim_stats *s, double r, double c)
{
    s->count++;
    if (!isfinite(r) || !isfinite(c)) {
        s->nonfinite++;
        return;
    }
    double e = c - r;
    s->finite++;
    if (r != 0.0 && c == 0.0) s->flushed++;
    s->sum_ref2 += r * r;
    s->sum_cand2 += c * c;
    s->sum_err2 += e * e;
    s->sum_dot += r * c;
    s->sum_err += e;
    s->sum_err_ref += e * r;
    double ae = fabs(e), ar = fabs(r);
    if (ae > s->max_abs_err) s->max_abs_err = ae;
    if (ar > s->max_abs_ref) s->max_abs_ref = ar;
}

typedef struct stats_job {
    const double *ref;
    const double *cand64;
    const float *cand32;
    size_t n;
    fpsim_stats *chunks; /* one accumulator per chunk */
} stats_job;

/* Lanes of a chunk: element i of the chunk goes to lane i % STATS_LANES, lanes are folded
 * 0, 1, 2, 3 at the chunk's end. A fixed order (so fixed bits) whose four independent
 * addition chains run ~4x faster than one. */
#define STATS_LANES 4

/* All-finite chunks (the common case) take a branch-free path: per lane plain double
 * accumulators, the same additions in the same order as stats_add_pair would make. */
static int chunk_all_finite(const double *ref, const double *c64, const float *c32, size_t lo, size_t hi)
{
    double z = 0.0; /* x * 0 is NaN exactly when x is NaN or Inf */
    for (size_t i = lo; i < hi; i++) z += ref[i] * 0.0 + (c64 ? c64[i] : (double)c32[i]) * 0.0;
    return z == 0.0;
}

static void stats_chunk_lanes(fpsim_stats *acc, const double *ref, const double *c64, const float *c32,
                              size_t lo, size_t hi)
{
    fpsim_stats lane[STATS_LANES];
    for (int l = 0; l < STATS_LANES; l++) fpsim_stats_init(&lane[l]);
    size_t i = lo;
    if (chunk_all_finite(ref, c64, c32, lo, hi)) {
        double r2[STATS_LANES] = {0}, c2[STATS_LANES] = {0}, e2[STATS_LANES] = {0};
        double dot[STATS_LANES] = {0}, se[STATS_LANES] = {0}, ser[STATS_LANES] = {0};
        double me[STATS_LANES] = {0}, mr[STATS_LANES] = {0};
        uint64_t fl[STATS_LANES] = {0};
        for (; i + STATS_LANES <= hi; i += STATS_LANES)
            for (int l = 0; l < STATS_LANES; l++) {
                double r = ref[i + (size_t)l];
                double c = c64 ? c64[i + (size_t)l] : (double)c32[i + (size_t)l];
                double e = c - r, ae = fabs(e), ar = fabs(r);
                fl[l] += (uint64_t)((r != 0.0) & (c == 0.0));
                r2[l] += r * r;
                c2[l] += c * c;
                e2[l] += e * e;
                dot[l] += r * c;
                se[l] += e;
                ser[l] += e * r;
                me[l] = ae > me[l] ? ae : me[l];
                mr[l] = ar > mr[l] ? ar : mr[l];
            }
        for (int l = 0; l < STATS_LANES; l++) {
            uint64_t n = (uint64_t)((i - lo) / STATS_LANES);
            lane[l].count = lane[l].finite = n;
            lane[l].flushed = fl[l];
            lane[l].sum_ref2 = r2[l];
            lane[l].sum_cand2 = c2[l];
            lane[l].sum_err2 = e2[l];
            lane[l].sum_dot = dot[l];
            lane[l].sum_err = se[l];
            lane[l].sum_err_ref = ser[l];
            lane[l].max_abs_err = me[l];
            lane[l].max_abs_ref = mr[l];
        }
    }
    for (; i + STATS_LANES <= hi; i += STATS_LANES)
        for (int l = 0; l < STATS_LANES; l++)
            stats_add_pair(&lane[l], ref[i + (size_t)l], c64 ? c64[i + (size_t)l] : (double)c32[i + (size_t)l]);
    for (int l = 0; i < hi; i++, l++) stats_add_pair(&lane[l], ref[i], c64 ? c64[i] : (double)c32[i]);
    fpsim_stats_init(acc);
    for (int l = 0; l < STATS_LANES; l++) fpsim_stats_merge(acc, &lane[l]);
}

static void stats_chunks(void *ctx, size_t begin, size_t end)
{
    const stats_job *job = ctx;
    for (size_t c = begin; c < end; c++) {
        size_t lo = c * FPSIM_STATS_CHUNK;
        size_t hi = lo + FPSIM_STATS_CHUNK < job->n ? lo + FPSIM_STATS_CHUNK : job->n;
        stats_chunk_lanes(&job->chunks[c], job->ref, job->cand64, job->cand32, lo, hi);
    }
}

/* Small stack buffer for the chunk partials; larger arrays allocate. */
enum { STATS_STACK_CHUNKS = 64 };

static fpsim_status stats_add(fpsim_stats *s, const double *ref, const double *c64, const float *c32,
                              size_t n, int threads)
{
    if (n == 0) return FPSIM_OK;
    if (!s || !ref || (!c64 && !c32)) return fpsim_fail(FPSIM_EINVAL, "stats: null array");
    size_t nchunks = (n + FPSIM_STATS_CHUNK - 1) / FPSIM_STATS_CHUNK;
    fpsim_stats stack[STATS_STACK_CHUNKS];
    fpsim_stats *chunks = nchunks <= STATS_STACK_CHUNKS ? stack : malloc(nchunks * sizeof *chunks);
    if (!chunks) return fpsim_fail(FPSIM_ENOMEM, "stats: cannot allocate %zu chunk partials", nchunks);
    stats_job job = {ref, c64, c32, n, chunks};
    fpsim_status st = FPSIM_OK;
    (void)threads; /* the chunk sums are cheap next to the GEMMs they describe: one thread */
    stats_chunks(&job, 0, nchunks);
    if (st == FPSIM_OK)
        for (size_t c = 0; c < nchunks; c++) fpsim_stats_merge(s, &chunks[c]);
    if (chunks != stack) free(chunks);
    return st;
}

fpsim_status fpsim_stats_add_f64(fpsim_stats *s, const double *ref, const double *cand, size_t n,
                                 int threads)
{
    return stats_add(s, ref, cand, NULL, n, threads);
}

fpsim_status fpsim_stats_add_f32(fpsim_stats *s, const double *ref, const float *cand, size_t n,
                                 int threads)
{
    return stats_add(s, ref, NULL, cand, n, threads);
}

void fpsim_stats_summarize(fpsim_stats_summary *out, const fpsim_stats *s)
{
    double nf = (double)s->finite;
    out->count = s->count;
    out->max_abs_err = s->max_abs_err;
    out->rel_l2 = s->sum_ref2 > 0 ? sqrt(s->sum_err2 / s->sum_ref2) : (s->sum_err2 > 0 ? INFINITY : NAN);
    double den = sqrt(s->sum_ref2) * sqrt(s->sum_cand2);
    out->cosine = den > 0 ? s->sum_dot / den : NAN;
    if (s->sum_ref2 > 0)
        out->sqnr_db = s->sum_err2 > 0 ? 10.0 * log10(s->sum_ref2 / s->sum_err2) : INFINITY;
    else
        out->sqnr_db = NAN;
    out->bias = nf > 0 ? s->sum_err / nf : NAN;
    double rms = nf > 0 ? sqrt(s->sum_ref2 / nf) : 0.0;
    out->rel_bias = rms > 0 ? out->bias / rms : NAN;
    out->proj = s->sum_ref2 > 0 ? s->sum_err_ref / s->sum_ref2 : NAN;
    double n = (double)s->count;
    out->flush_rate = n > 0 ? (double)s->flushed / n : NAN;
    out->sat_rate = n > 0 ? (double)s->saturated / n : NAN;
    out->nonfinite_rate = n > 0 ? (double)s->nonfinite / n : NAN;
}
