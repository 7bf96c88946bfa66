/* test_sr: stochastic rounding.
 *
 * 1. Philox4x32-10 of the core against Random123's kat_vectors, and fpsim_sr_word against the
 *    test's own Philox (reference.c) for random (seed, stream, index).
 * 2. Exact bits: the array conversion under FPSIM_SR equals the reference's SR rule
 *    (ref_round_sr: round up iff frac * 2^B + r >= 2^B, with r the top B bits of the element's
 *    Philox word) on 2^20 random inputs per format and B in {default, 1, 4, 32}.
 * 3. Statistics: for inputs whose dropped fraction is a multiple of 2^-B, the mean of the decoded
 *    result over N = 2^20 draws equals x within 5 standard deviations (unbiased); for arbitrary
 *    fractions the round-up frequency equals floor(frac * 2^B) / 2^B within 5 sigma, and is
 *    exactly 0 when frac < 2^-B.
 * 4. Determinism: the same seed gives the same bits on 1, 2 and 7 threads and for any chunking
 *    (pieces converted with the running index0); another seed or another stream gives other bits. */
#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "reference.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static test_counter tc_philox = TEST_COUNTER_INIT("philox kat + sr_word");
static test_counter tc_exact = TEST_COUNTER_INIT("sr exact bits vs reference");
static test_counter tc_stats = TEST_COUNTER_INIT("sr statistics");
static test_counter tc_det = TEST_COUNTER_INIT("sr determinism");

static int make_spec(fpsim_spec *s, const char *format, const char *policy, const char *mode,
                     int sr_bits)
{
    const fpsim_format *f = fpsim_format_find(format);
    fpsim_round r;
    if (!f || fpsim_round_find(mode, &r) != FPSIM_OK ||
        fpsim_spec_make(s, (fpsim_format_id)f->id, policy, r, sr_bits) != FPSIM_OK) {
        test_fail(&tc_exact, "no spec %s/%s/%s/%d: %s", format, policy, mode, sr_bits,
                  fpsim_last_error());
        return 0;
    }
    return 1;
}

static void check_philox(void)
{
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        fpsim_philox4x32_10(kat[i], kat[i] + 4, out);
        for (int w = 0; w < 4; w++)
            TEST_CHECK_EQ_HEX(&tc_philox, out[w], kat[i][6 + w], "kat %d word %d", i, w);
    }
    uint64_t rng = 1;
    for (int i = 0; i < 100000; i++) {
        uint64_t seed = test_splitmix64(&rng), index = test_splitmix64(&rng);
        uint32_t stream = (uint32_t)test_splitmix64(&rng);
        if (i & 1)
            index &= 0xFFFFF; /* small indices too */
        TEST_CHECK_EQ_HEX(&tc_philox, fpsim_sr_word(seed, stream, index),
                          ref_sr_word(seed, stream, index), "seed=0x%llx stream=%u index=%llu",
                          (unsigned long long)seed, stream, (unsigned long long)index);
    }
}

/* Random float32 inputs around the format's range: random exponent in [-lo, hi], random bits. */
static void random_inputs(float *x, size_t n, uint64_t seed, int emin, int emax)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = test_splitmix64(&seed);
        int e = emin + (int)((r >> 40) % (uint64_t)(emax - emin + 1));
        float m = 1.0f + (float)(r & 0x7FFFFF) * 0x1p-23f;
        x[i] = ldexpf(r >> 63 ? -m : m, e);
    }
}

static void check_exact(void)
{
    struct { const char *format, *policy; int emin, emax; } cases[] = {
        {"e4m3", "nv", -12, 9},  {"e5m2", "nv", -18, 16}, {"e2m1", "nv", -3, 3},
        {"e2m3", "nv", -4, 3},   {"e3m2", "nv", -6, 5},   {"bf16", "nv", -130, 127},
        {"f16", "nv", -26, 16},  {"e4m3", "ml_dtypes", -12, 9},
    };
    const int bits_list[] = {0, 1, 4, 32};
    const size_t n = 1u << 20;
    float *x = malloc(n * sizeof *x);
    uint16_t *codes = malloc(n * sizeof *codes);
    static ref_grid grid;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const ref_format *rf = ref_format_find(cases[c].format);
        const ref_rules *rr = ref_rules_find(cases[c].format, cases[c].policy);
        ref_grid_build(&grid, rf);
        random_inputs(x, n, 1000 + c, cases[c].emin, cases[c].emax);
        for (size_t b = 0; b < sizeof bits_list / sizeof bits_list[0]; b++) {
            fpsim_spec s;
            if (!make_spec(&s, cases[c].format, cases[c].policy, "sr", bits_list[b]))
                continue;
            const uint64_t seed = 0x1234567890ABCDEFull + b;
            const uint32_t stream = 7;
            const uint64_t index0 = 1000003;
            if (fpsim_convert_f32(codes, x, n, &s, seed, stream, index0, 2) != FPSIM_OK) {
                test_fail(&tc_exact, "convert failed: %s", fpsim_last_error());
                continue;
            }
            for (size_t i = 0; i < n; i++) {
                uint32_t got = rf->bits > 8 ? codes[i] : ((uint8_t *)codes)[i];
                uint32_t r = ref_sr_word(seed, stream, index0 + i);
                uint32_t want = ref_round_sr(&grid, rr, (double)x[i], r, s.sr_bits);
                TEST_CHECK_EQ_HEX(&tc_exact, got, want, "%s/%s sr_bits=%d x=0x%08x r=0x%08x",
                                  cases[c].format, cases[c].policy, s.sr_bits, test_f32_bits(x[i]), r);
                /* The scalar core with the same word must agree with the array path. */
                if ((i & 1023) == 0)
                    TEST_CHECK_EQ_HEX(&tc_exact, fpsim_round_f32(test_f32_bits(x[i]), &s, r), want,
                                      "scalar %s sr_bits=%d x=0x%08x r=0x%08x", cases[c].format,
                                      s.sr_bits, test_f32_bits(x[i]), r);
            }
        }
    }
    free(x);
    free(codes);
}

/* N draws of SR of one value: returns the number of round-ups and the mean decoded value. */
static uint64_t sr_draws(const fpsim_spec *s, float x, size_t n, uint64_t seed, double *mean,
                         float *xs, uint8_t *codes, float *dec)
{
    for (size_t i = 0; i < n; i++)
        xs[i] = x;
    fpsim_convert_f32(codes, xs, n, s, seed, 0, 0, 2);
    fpsim_decode_array_f32(dec, codes, n, s, 2);
    double sum = 0;
    uint64_t ups = 0;
    for (size_t i = 0; i < n; i++) {
        sum += dec[i];
        ups += fabsf(dec[i]) > fabsf(x);
    }
    *mean = sum / (double)n;
    return ups;
}

static void check_statistics(void)
{
    const size_t n = 1u << 20;
    float *xs = malloc(n * sizeof *xs), *dec = malloc(n * sizeof *dec);
    uint8_t *codes = malloc(n);
    static ref_grid grid;
    /* (format, sr_bits, x): x with a dropped fraction that is a multiple of 2^-sr_bits -> unbiased. */
    struct { const char *format; int sr_bits; float x; } unbiased[] = {
        {"e4m3", 16, 1.0f + 0.125f * 0.3125f},  /* frac 0.3125 */
        {"e4m3", 16, -3.3125f},                 /* between 3.25 and 3.5: frac 0.25 */
        {"e4m3", 8, 0x1.5p-8f},                 /* subnormal target: frac of 2^-9 spacing */
        {"e2m1", 8, 2.75f},                     /* between 2 and 3: frac 0.75 */
        {"e2m1", 8, -0.1171875f},               /* 0.234375 of 0.5 */
        {"e5m2", 16, 1000.0f},
    };
    for (size_t i = 0; i < sizeof unbiased / sizeof unbiased[0]; i++) {
        fpsim_spec s;
        if (!make_spec(&s, unbiased[i].format, "nv", "sr", unbiased[i].sr_bits))
            continue;
        ref_grid_build(&grid, ref_format_find(unbiased[i].format));
        double a = fabs((double)unbiased[i].x);
        int lo = 0;
        while (grid.v[lo + 1] <= a)
            lo++;
        double spacing = grid.v[lo + 1] - grid.v[lo], p = (a - grid.v[lo]) / spacing;
        double mean;
        sr_draws(&s, unbiased[i].x, n, 42 + i, &mean, xs, codes, dec);
        double sigma = spacing * sqrt(p * (1 - p) / (double)n);
        TEST_CHECK(&tc_stats, fabs(mean - unbiased[i].x) <= 5 * sigma + 1e-300,
                   "%s SR mean of %a over %zu draws = %.9g, |diff| %.3g > 5 sigma %.3g",
                   unbiased[i].format, (double)unbiased[i].x, n, mean,
                   fabs(mean - unbiased[i].x), 5 * sigma);
    }
    /* P(round up) = floor(frac * 2^B) / 2^B for arbitrary fractions. */
    struct { const char *format; int sr_bits; float x; } pup[] = {
        {"e4m3", 4, 1.0f + 0.125f * 0.3f},  {"e4m3", 4, 1.0f + 0.125f * 0.05f},
        {"e4m3", 1, 1.0f + 0.125f * 0.7f},  {"e2m1", 8, 1.2f}, {"e2m1", 2, 4.9f},
        {"e4m3", 16, 1.0f + 0.125f * 0.123456f}, {"e2m3", 3, 0.3f},
    };
    for (size_t i = 0; i < sizeof pup / sizeof pup[0]; i++) {
        fpsim_spec s;
        if (!make_spec(&s, pup[i].format, "nv", "sr", pup[i].sr_bits))
            continue;
        ref_grid_build(&grid, ref_format_find(pup[i].format));
        double a = fabs((double)pup[i].x);
        int lo = 0;
        while (grid.v[lo + 1] <= a)
            lo++;
        double frac = (a - grid.v[lo]) / (grid.v[lo + 1] - grid.v[lo]);
        double p = floor(ldexp(frac, pup[i].sr_bits)) / ldexp(1.0, pup[i].sr_bits);
        double mean;
        uint64_t ups = sr_draws(&s, pup[i].x, n, 4242 + i, &mean, xs, codes, dec);
        double freq = (double)ups / (double)n, sigma = sqrt(p * (1 - p) / (double)n);
        if (p == 0.0)
            TEST_CHECK(&tc_stats, ups == 0, "%s sr_bits=%d x=%a: frac %.6f < 2^-B yet %llu round-ups",
                       pup[i].format, pup[i].sr_bits, (double)pup[i].x, frac, (unsigned long long)ups);
        else
            TEST_CHECK(&tc_stats, fabs(freq - p) <= 5 * sigma,
                       "%s sr_bits=%d x=%a: P(up) %.6f, expected %.6f (+-5 sigma %.6f)",
                       pup[i].format, pup[i].sr_bits, (double)pup[i].x, freq, p, 5 * sigma);
    }
    free(xs);
    free(dec);
    free(codes);
}

static void check_determinism(void)
{
    const size_t n = 3000017; /* odd, above any threading threshold */
    float *x = malloc(n * sizeof *x);
    uint8_t *ref = malloc(n), *got = malloc(n);
    random_inputs(x, n, 99, -12, 9);
    fpsim_spec s;
    if (!make_spec(&s, "e4m3", "nv", "sr", 0))
        goto out;
    const uint64_t seed = 2024;
    fpsim_convert_f32(ref, x, n, &s, seed, 3, 0, 1);
    const int threads[] = {1, 2, 7};
    for (int t = 0; t < 3; t++) {
        memset(got, 0xAA, n);
        fpsim_convert_f32(got, x, n, &s, seed, 3, 0, threads[t]);
        TEST_CHECK(&tc_det, memcmp(got, ref, n) == 0, "threads=%d differs from threads=1", threads[t]);
    }
    /* Chunked: pieces of awkward sizes with the running index. */
    const size_t pieces[] = {1, 3, 4, 5, 1000, 65537, 999999};
    size_t at = 0, k = 0;
    memset(got, 0xAA, n);
    while (at < n) {
        size_t len = pieces[k++ % 7];
        if (len > n - at)
            len = n - at;
        fpsim_convert_f32(got + at, x + at, len, &s, seed, 3, at, 1 + (int)(k % 3));
        at += len;
    }
    TEST_CHECK(&tc_det, memcmp(got, ref, n) == 0, "%s", "chunked conversion differs");
    /* Another seed / another stream: different bits somewhere (fraction of changed codes > 1%). */
    uint64_t diff_seed = 0, diff_stream = 0;
    fpsim_convert_f32(got, x, n, &s, seed + 1, 3, 0, 2);
    for (size_t i = 0; i < n; i++)
        diff_seed += got[i] != ref[i];
    fpsim_convert_f32(got, x, n, &s, seed, 4, 0, 2);
    for (size_t i = 0; i < n; i++)
        diff_stream += got[i] != ref[i];
    TEST_CHECK(&tc_det, diff_seed > n / 100, "another seed changed only %llu codes",
               (unsigned long long)diff_seed);
    TEST_CHECK(&tc_det, diff_stream > n / 100, "another stream changed only %llu codes",
               (unsigned long long)diff_stream);
    /* Same seed again: same bits. */
    fpsim_convert_f32(got, x, n, &s, seed, 3, 0, 2);
    TEST_CHECK(&tc_det, memcmp(got, ref, n) == 0, "%s", "same seed, different bits");
out:
    free(x);
    free(ref);
    free(got);
}

int main(void)
{
    check_philox();
    check_exact();
    check_statistics();
    check_determinism();
    int failed = 0;
    failed += test_summary(&tc_philox);
    failed += test_summary(&tc_exact);
    failed += test_summary(&tc_stats);
    failed += test_summary(&tc_det);
    return failed ? 1 : 0;
}
