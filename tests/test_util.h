/* test_util.h: small helpers shared by fpsim's test executables.
 *
 * A test counts its failures, prints the first few with their inputs in hex (so a failure can be
 * reproduced with `fpsim convert`), and returns non-zero from main when anything failed. A test
 * that cannot run here (missing headers, missing Python module, no GPU) prints why and exits with
 * TEST_SKIP (77), which ctest shows as skipped, never as passed.
 *
 *   static test_counter tc = TEST_COUNTER_INIT("e4m3 nv rne");
 *   TEST_CHECK_EQ_HEX(&tc, got, want, "x=0x%08x", xbits);
 *   return test_report(&tc);
 *
 * Counters may be shared by threads: failures are counted atomically and the printing of the
 * first few is serialized. */
#ifndef FPSIM_TEST_UTIL_H
#define FPSIM_TEST_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#if !defined(__cplusplus)
#include <stdatomic.h>
#define TEST_ATOMIC_U64 _Atomic uint64_t
#else
#include <atomic>
#define TEST_ATOMIC_U64 std::atomic<uint64_t>
#endif

#define TEST_SKIP 77
#define TEST_PRINT_LIMIT 10 /* failures printed per counter; the rest are only counted */

typedef struct test_counter {
    const char *name;        /* what is being checked, printed with each failure */
    TEST_ATOMIC_U64 checks;  /* comparisons made */
    TEST_ATOMIC_U64 failures; /* comparisons that failed */
} test_counter;

#define TEST_COUNTER_INIT(label) {(label), 0, 0}

static inline void test_counter_reset(test_counter *tc, const char *name)
{
    tc->name = name;
    tc->checks = 0;
    tc->failures = 0;
}

/* Record one failed comparison; print it if it is among the first TEST_PRINT_LIMIT. */
static inline void test_fail(test_counter *tc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static inline void test_fail(test_counter *tc, const char *fmt, ...)
{
    uint64_t k = tc->failures++;
    if (k < TEST_PRINT_LIMIT) {
        char line[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        fprintf(stderr, "FAIL [%s] %s\n", tc->name, line);
    }
}

/* Compare two integers (codes, bit patterns); on mismatch print both in hex plus the context. */
#define TEST_CHECK_EQ_HEX(tc, got, want, ctxfmt, ...)                                             \
    do {                                                                                         \
        uint64_t test_got_ = (uint64_t)(got), test_want_ = (uint64_t)(want);                      \
        (tc)->checks++;                                                                          \
        if (test_got_ != test_want_)                                                             \
            test_fail((tc), ctxfmt ": got 0x%llx, want 0x%llx", __VA_ARGS__,                      \
                      (unsigned long long)test_got_, (unsigned long long)test_want_);             \
    } while (0)

/* Check a condition; on failure print the context. */
#define TEST_CHECK(tc, cond, ctxfmt, ...)                                                         \
    do {                                                                                         \
        (tc)->checks++;                                                                          \
        if (!(cond))                                                                             \
            test_fail((tc), "%s: " ctxfmt, #cond, __VA_ARGS__);                                  \
    } while (0)

/* Add `n` comparisons made in bulk (a loop that calls test_fail only on mismatch). */
static inline void test_count(test_counter *tc, uint64_t n) { tc->checks += n; }

/* Print the one-line summary of a counter; returns 0 if it saw no failure (and >0 checks). */
static inline int test_summary(test_counter *tc)
{
    uint64_t c = tc->checks, f = tc->failures;
    if (c == 0) {
        fprintf(stderr, "FAIL [%s] made no comparison\n", tc->name);
        return 1;
    }
    printf("%s [%s] %llu checks, %llu failures\n", f ? "FAIL" : "ok  ", tc->name,
           (unsigned long long)c, (unsigned long long)f);
    fflush(stdout);
    return f ? 1 : 0;
}

/* Wall-clock seconds (for the progress lines the sweeps print, not for pass/fail). */
static inline double test_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds used by this process so far, all threads (user + system): the figure that does not
 * depend on how busy the machine is. */
static inline double test_cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* Number of worker threads for a sweep: env FPSIM_TEST_THREADS, else 2 (CI has 2 cores). */
static inline int test_threads(void)
{
    const char *s = getenv("FPSIM_TEST_THREADS");
    int t = s ? atoi(s) : 2;
    return t < 1 ? 1 : (t > 256 ? 256 : t);
}

/* Bits <-> values without aliasing problems. */
static inline float test_f32_from_bits(uint32_t b)
{
    union { uint32_t u; float f; } v;
    v.u = b;
    return v.f;
}
static inline uint32_t test_f32_bits(float f)
{
    union { uint32_t u; float f; } v;
    v.f = f;
    return v.u;
}
static inline double test_f64_from_bits(uint64_t b)
{
    union { uint64_t u; double d; } v;
    v.u = b;
    return v.d;
}
static inline uint64_t test_f64_bits(double d)
{
    union { uint64_t u; double d; } v;
    v.d = d;
    return v.u;
}

/* SplitMix64: the tests' own reproducible pseudo-random source for sampled inputs. */
static inline uint64_t test_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#endif
