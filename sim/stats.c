/* stats.c: mergeable error statistics over (reference, candidate) pairs (fpsim_stats.h).
 *
 * One pass computes every figure of a pair (counts, the six sums, both maxima). The array is cut
 * into fixed chunks of FPSIM_STATS_CHUNK pairs; inside a chunk pair i goes to lane i % 8 and each
 * lane keeps its own double sums, so the loop is eight independent addition chains that the
 * compiler turns into SIMD lanes (SSE2, AVX2 or AVX-512, picked at load time: the same IEEE
 * additions and multiplications in the same order on each, no FMA, so the same bits). The lanes
 * are folded 0..7 at the chunk's end and the chunk partials in index order. The partition depends
 * only on n, so the bits of every sum are the same whoever computes the chunks (threads: large
 * arrays spread whole chunks over fpsim_parallel_for).
 *
 * Sums are plain double: for the error figures we report (relative errors to 3-4 digits) the
 * rounding of a 4096-term double sum is far below what is shown. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_parallel.h"
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

/* Lanes of a chunk: pair i of the chunk goes to lane i % STATS_LANES. */
#define STATS_LANES 8

/* One pair into an accumulator, any values. The error is formed in double: c - r is exact when
 * both are float32 values (two floats differ by a double exactly). */
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

/* The lane sums of the all-finite path. */
typedef struct stats_lanes {
    double r2[STATS_LANES], c2[STATS_LANES], e2[STATS_LANES], dot[STATS_LANES];
    double se[STATS_LANES], ser[STATS_LANES], me[STATS_LANES], mr[STATS_LANES];
    double fl[STATS_LANES];  /* flushed pairs, counted in double: exact below 2^53 */
    double bad[STATS_LANES]; /* sum of r*0 + c*0: NaN exactly when some r or c is NaN or Inf */
} stats_lanes;

/* The same IEEE operations in the same order per lane as stats_add_pair, branch-free. One pair
 * into lane l; written as a macro-free inline so the clones below share it. */
static inline void lane_add(stats_lanes *restrict z, int l, double r, double c)
{
    double e = c - r, ae = fabs(e), ar = fabs(r);
    z->fl[l] += (r != 0.0) & (c == 0.0) ? 1.0 : 0.0;
    z->r2[l] += r * r;
    z->c2[l] += c * c;
    z->e2[l] += e * e;
    z->dot[l] += r * c;
    z->se[l] += e;
    z->ser[l] += e * r;
    z->me[l] = ae > z->me[l] ? ae : z->me[l];
    z->mr[l] = ar > z->mr[l] ? ar : z->mr[l];
    z->bad[l] += r * 0.0 + c * 0.0;
}

/* Best code for the machine, chosen at load time; every clone computes the same bits. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define STATS_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define STATS_CLONES
#endif

/* All-finite chunk, double candidate: 0 when some value is NaN or Inf (the caller then takes
 * the element-by-element path, which counts and skips them). */
STATS_CLONES static int lanes_f64(stats_lanes *restrict z, const double *restrict ref,
                                  const double *restrict cand, size_t n)
{
    memset(z, 0, sizeof *z);
    size_t i = 0;
    for (; i + STATS_LANES <= n; i += STATS_LANES)
        for (int l = 0; l < STATS_LANES; l++) lane_add(z, l, ref[i + (size_t)l], cand[i + (size_t)l]);
    for (int l = 0; i < n; i++, l++) lane_add(z, l, ref[i], cand[i]);
    int ok = 1;
    for (int l = 0; l < STATS_LANES; l++) ok &= z->bad[l] == 0.0;
    return ok;
}

/* The same with a float32 candidate, widened exactly. */
STATS_CLONES static int lanes_f32(stats_lanes *restrict z, const double *restrict ref,
                                  const float *restrict cand, size_t n)
{
    memset(z, 0, sizeof *z);
    size_t i = 0;
    for (; i + STATS_LANES <= n; i += STATS_LANES)
        for (int l = 0; l < STATS_LANES; l++)
            lane_add(z, l, ref[i + (size_t)l], (double)cand[i + (size_t)l]);
    for (int l = 0; i < n; i++, l++) lane_add(z, l, ref[i], (double)cand[i]);
    int ok = 1;
    for (int l = 0; l < STATS_LANES; l++) ok &= z->bad[l] == 0.0;
    return ok;
}

/* One chunk [lo, hi) into *acc: the branch-free lanes, or, when a NaN or Inf is in the chunk,
 * pair by pair into the same lanes (counting and skipping the non-finite pairs). */
static void stats_chunk(fpsim_stats *acc, const double *ref, const double *c64, const float *c32,
                        size_t lo, size_t hi)
{
    fpsim_stats lane[STATS_LANES];
    for (int l = 0; l < STATS_LANES; l++) fpsim_stats_init(&lane[l]);
    size_t n = hi - lo;
    stats_lanes z;
    int fast = c64 ? lanes_f64(&z, ref + lo, c64 + lo, n) : lanes_f32(&z, ref + lo, c32 + lo, n);
    if (fast) {
        for (int l = 0; l < STATS_LANES; l++) {
            uint64_t k = (uint64_t)(n / STATS_LANES + ((size_t)l < n % STATS_LANES));
            lane[l].count = lane[l].finite = k;
            lane[l].flushed = (uint64_t)z.fl[l];
            lane[l].sum_ref2 = z.r2[l];
            lane[l].sum_cand2 = z.c2[l];
            lane[l].sum_err2 = z.e2[l];
            lane[l].sum_dot = z.dot[l];
            lane[l].sum_err = z.se[l];
            lane[l].sum_err_ref = z.ser[l];
            lane[l].max_abs_err = z.me[l];
            lane[l].max_abs_ref = z.mr[l];
        }
    } else {
        for (size_t i = lo; i < hi; i++)
            stats_add_pair(&lane[(i - lo) % STATS_LANES], ref[i], c64 ? c64[i] : (double)c32[i]);
    }
    fpsim_stats_init(acc);
    for (int l = 0; l < STATS_LANES; l++) fpsim_stats_merge(acc, &lane[l]);
}

typedef struct stats_job {
    const double *ref;
    const double *cand64;
    const float *cand32;
    size_t n;
    fpsim_stats *chunks; /* one accumulator per chunk */
} stats_job;

static void stats_chunks(void *ctx, size_t begin, size_t end)
{
    const stats_job *job = ctx;
    for (size_t c = begin; c < end; c++) {
        size_t lo = c * FPSIM_STATS_CHUNK;
        size_t hi = lo + FPSIM_STATS_CHUNK < job->n ? lo + FPSIM_STATS_CHUNK : job->n;
        stats_chunk(&job->chunks[c], job->ref, job->cand64, job->cand32, lo, hi);
    }
}

/* Small stack buffer for the chunk partials; larger arrays allocate. */
enum { STATS_STACK_CHUNKS = 64 };
/* Chunks per thread below which threads are not worth starting (a thread start costs about
 * what 16 chunks of pairs cost). */
enum { STATS_THREAD_GRAIN = 16 };

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
    /* threads only decide who sums which chunks; the fold below is in index order */
    fpsim_status st = fpsim_parallel_for(nchunks, STATS_THREAD_GRAIN, stats_chunks, &job, threads < 1 ? 1 : threads);
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
