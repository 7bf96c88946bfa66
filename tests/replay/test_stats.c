/* test_stats.c: fpsim_stats against GSL on small cases, and thread-count independence.
 *
 * The oracle is GSL's own routines, computing each figure another way: norms with gsl_blas_dnrm2
 * (scaled, not a sum of squares), dot products with gsl_blas_ddot, the bias with gsl_stats_mean
 * (a running mean, not a sum divided by n), the max with gsl_stats_max on |error|. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>

#include "fpsim_stats.h"

static int failures;

static void check_close(const char *what, double got, double want, double rtol)
{
    double tol = rtol * fmax(1.0, fabs(want));
    if (!(fabs(got - want) <= tol)) {
        printf("FAIL %s: got %.17g want %.17g\n", what, got, want);
        failures++;
    }
}

static void check_u64(const char *what, uint64_t got, uint64_t want)
{
    if (got != want) {
        printf("FAIL %s: got %llu want %llu\n", what, (unsigned long long)got, (unsigned long long)want);
        failures++;
    }
}

/* Compare fpsim's figures for (r, c) with GSL's. */
static void check_case(const char *name, const double *r, const double *c, size_t n)
{
    fpsim_stats s;
    fpsim_stats_init(&s);
    if (fpsim_stats_add_f64(&s, r, c, n, 1) != FPSIM_OK) {
        printf("FAIL %s: add failed\n", name);
        failures++;
        return;
    }
    fpsim_stats_summary m;
    fpsim_stats_summarize(&m, &s);

    double *e = malloc(n * sizeof *e), *ae = malloc(n * sizeof *ae);
    for (size_t i = 0; i < n; i++) {
        e[i] = c[i] - r[i];
        ae[i] = fabs(e[i]);
    }
    gsl_vector_const_view vr = gsl_vector_const_view_array(r, n);
    gsl_vector_const_view vc = gsl_vector_const_view_array(c, n);
    gsl_vector_const_view ve = gsl_vector_const_view_array(e, n);
    double nr = gsl_blas_dnrm2(&vr.vector), nc = gsl_blas_dnrm2(&vc.vector);
    double ne = gsl_blas_dnrm2(&ve.vector);
    double dot = 0, edot = 0;
    gsl_blas_ddot(&vr.vector, &vc.vector, &dot);
    gsl_blas_ddot(&ve.vector, &vr.vector, &edot);

    char what[128];
    snprintf(what, sizeof what, "%s rel_l2", name);
    check_close(what, m.rel_l2, ne / nr, 1e-12);
    snprintf(what, sizeof what, "%s cosine", name);
    check_close(what, m.cosine, dot / (nr * nc), 1e-12);
    snprintf(what, sizeof what, "%s sqnr", name);
    check_close(what, m.sqnr_db, 20.0 * log10(nr / ne), 1e-10);
    snprintf(what, sizeof what, "%s bias", name);
    check_close(what, m.bias, gsl_stats_mean(e, 1, n), 1e-12);
    snprintf(what, sizeof what, "%s rel_bias", name);
    check_close(what, m.rel_bias, gsl_stats_mean(e, 1, n) / (nr / sqrt((double)n)), 1e-10);
    snprintf(what, sizeof what, "%s proj", name);
    check_close(what, m.proj, edot / (nr * nr), 1e-12);
    snprintf(what, sizeof what, "%s max_abs_err", name);
    check_close(what, m.max_abs_err, gsl_stats_max(ae, 1, n), 0);
    free(e);
    free(ae);
}

int main(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 12345);

    /* 1. A tiny hand case: r = (1, 2, 3), c = (1, 2.5, 2). */
    {
        double r[3] = {1, 2, 3}, c[3] = {1, 2.5, 2};
        check_case("tiny", r, c, 3);
    }
    /* 2. Gaussian reference, candidate = 0.99 r + noise: a shrinkage shows as proj ~ -0.01. */
    size_t n = 10007; /* several chunks and a ragged tail */
    double *r = malloc(n * sizeof *r), *c = malloc(n * sizeof *c);
    for (size_t i = 0; i < n; i++) {
        r[i] = gsl_ran_gaussian(rng, 1.0);
        c[i] = 0.99 * r[i] + gsl_ran_gaussian(rng, 0.01) + 1e-3;
    }
    check_case("gaussian", r, c, n);
    {
        fpsim_stats s;
        fpsim_stats_init(&s);
        fpsim_stats_add_f64(&s, r, c, n, 1);
        fpsim_stats_summary m;
        fpsim_stats_summarize(&m, &s);
        if (!(m.proj < -0.009 && m.proj > -0.011)) {
            printf("FAIL shrinkage: proj %.6f not near -0.01\n", m.proj);
            failures++;
        }
    }

    /* 3. Counts: flushed, nonfinite (left out of the sums), saturated passed through. */
    {
        double rr[6] = {1e-9, -2e-9, 0.0, 1.0, 2.0, NAN};
        double cc[6] = {0.0, -0.0, 0.0, INFINITY, 2.0, 1.0};
        fpsim_stats s;
        fpsim_stats_init(&s);
        fpsim_stats_add_f64(&s, rr, cc, 6, 1);
        fpsim_stats_add_counts(&s, 3);
        check_u64("counts count", s.count, 6);
        check_u64("counts flushed", s.flushed, 2);
        check_u64("counts nonfinite", s.nonfinite, 2);
        check_u64("counts finite", s.finite, 4);
        check_u64("counts saturated", s.saturated, 3);
        /* The finite pairs only: r = (1e-9, -2e-9, 0, 2), c = (0, -0, 0, 2). */
        double fr[4] = {1e-9, -2e-9, 0.0, 2.0}, fc[4] = {0, -0.0, 0, 2.0};
        fpsim_stats f;
        fpsim_stats_init(&f);
        fpsim_stats_add_f64(&f, fr, fc, 4, 1);
        check_close("nonfinite excluded sum_err2", s.sum_err2, f.sum_err2, 0);
    }

    /* 4. Same bits on any thread count, and merging two halves at a chunk boundary equals one
     *    call (the partition is fixed). */
    {
        fpsim_stats a, b, h;
        fpsim_stats_init(&a);
        fpsim_stats_init(&b);
        fpsim_stats_init(&h);
        fpsim_stats_add_f64(&a, r, c, n, 1);
        fpsim_stats_add_f64(&b, r, c, n, 2);
        if (memcmp(&a, &b, sizeof a)) {
            printf("FAIL threads: 1 and 2 threads differ\n");
            failures++;
        }
        fpsim_stats h2;
        fpsim_stats_init(&h2);
        fpsim_stats_add_f64(&h, r, c, 2 * FPSIM_STATS_CHUNK, 1);
        fpsim_stats_add_f64(&h2, r + 2 * FPSIM_STATS_CHUNK, c + 2 * FPSIM_STATS_CHUNK,
                            n - 2 * FPSIM_STATS_CHUNK, 1);
        fpsim_stats_merge(&h, &h2);
        if (memcmp(&a, &h, sizeof a)) {
            printf("FAIL merge: halves merged at a chunk boundary differ from one call\n");
            failures++;
        }
    }

    /* 5. float32 candidate path equals the double path on the same (float) values. */
    {
        float *cf = malloc(n * sizeof *cf);
        double *cd = malloc(n * sizeof *cd);
        /* Through a volatile float: gcc 12 -O3 was seen to vectorize this loop into
         * cd[i] = c[i] without the float rounding in between. */
        for (size_t i = 0; i < n; i++) {
            volatile float t = (float)c[i];
            cf[i] = t;
            cd[i] = (double)t;
        }
        fpsim_stats a, b;
        fpsim_stats_init(&a);
        fpsim_stats_init(&b);
        fpsim_stats_add_f32(&a, r, cf, n, 2);
        fpsim_stats_add_f64(&b, r, cd, n, 1);
        if (memcmp(&a, &b, sizeof a)) {
            printf("FAIL f32: float candidate path differs from double path\n");
            failures++;
        }
        free(cf);
        free(cd);
    }

    /* 6. A large case (many chunks: the threaded path), with a NaN and an Inf in two chunks:
     *    the same bits on 1, 2 and 3 threads, the counts right, and the figures of the finite
     *    pairs against GSL. */
    {
        size_t nb = 300007;
        double *br = malloc(nb * sizeof *br), *bc = malloc(nb * sizeof *bc);
        for (size_t i = 0; i < nb; i++) {
            br[i] = gsl_ran_gaussian(rng, 1.0);
            bc[i] = br[i] + gsl_ran_gaussian(rng, 0.05);
        }
        fpsim_stats t[3];
        for (int k = 0; k < 3; k++) {
            fpsim_stats_init(&t[k]);
            fpsim_stats_add_f64(&t[k], br, bc, nb, k + 1);
        }
        if (memcmp(&t[0], &t[1], sizeof t[0]) || memcmp(&t[0], &t[2], sizeof t[0])) {
            printf("FAIL large: 1, 2 and 3 threads differ\n");
            failures++;
        }
        check_case("large", br, bc, nb);
        br[70000] = NAN;
        bc[200001] = INFINITY;
        for (int k = 0; k < 2; k++) {
            fpsim_stats_init(&t[k]);
            fpsim_stats_add_f64(&t[k], br, bc, nb, k + 1);
        }
        check_u64("large nonfinite", t[0].nonfinite, 2);
        check_u64("large finite", t[0].finite, nb - 2);
        if (memcmp(&t[0], &t[1], sizeof t[0])) {
            printf("FAIL large with NaN: 1 and 2 threads differ\n");
            failures++;
        }
        free(br);
        free(bc);
    }

    free(r);
    free(c);
    gsl_rng_free(rng);
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    printf("stats: all checks passed\n");
    return 0;
}
