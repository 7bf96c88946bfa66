/* test_core_parallel.c: fpsim_parallel_for visits every index of [0, n) exactly once, in ranges
 * that are a fixed function of (n, grain, threads), for sizes around the grain and thread
 * boundaries; fpsim_threads_default honours FPSIM_THREADS. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_parallel.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("parallel_for");

typedef struct visit {
    _Atomic unsigned char *seen;
    size_t n;
    _Atomic int calls;
    _Atomic int bad;
} visit;

static void mark(void *ctx, size_t begin, size_t end)
{
    visit *v = ctx;
    v->calls++;
    if (begin >= end || end > v->n)
        v->bad++;
    for (size_t i = begin; i < end && i < v->n; i++)
        v->seen[i]++;
}

int main(void)
{
    const size_t sizes[] = {1, 2, 7, 63, 64, 65, 1000, 4096, 4097, 100003};
    const size_t grains[] = {1, 3, 64, 4096};
    const int threads[] = {1, 2, 3, 8, 17};
    for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; a++)
        for (size_t b = 0; b < sizeof grains / sizeof grains[0]; b++)
            for (size_t c = 0; c < sizeof threads / sizeof threads[0]; c++) {
                const size_t n = sizes[a], grain = grains[b];
                visit v;
                v.seen = calloc(n, 1);
                v.n = n;
                v.calls = 0;
                v.bad = 0;
                TEST_CHECK(&tc, fpsim_parallel_for(n, grain, mark, &v, threads[c]) == FPSIM_OK, "n=%zu", n);
                size_t wrong = 0;
                for (size_t i = 0; i < n; i++)
                    wrong += v.seen[i] != 1;
                TEST_CHECK(&tc, wrong == 0 && v.bad == 0, "n=%zu grain=%zu threads=%d: %zu indices not visited once",
                           n, grain, threads[c], wrong);
                const size_t chunks = (n + grain - 1) / grain;
                const size_t want_calls = chunks < (size_t)threads[c] ? chunks : (size_t)threads[c];
                TEST_CHECK(&tc, (size_t)v.calls == want_calls, "n=%zu grain=%zu threads=%d: %d calls, want %zu", n,
                           grain, threads[c], (int)v.calls, want_calls);
                free((void *)v.seen);
            }
    /* n = 0 calls nothing. */
    visit none = {NULL, 0, 0, 0};
    TEST_CHECK(&tc, fpsim_parallel_for(0, 1, mark, &none, 4) == FPSIM_OK && none.calls == 0, "%s", "n = 0");

    setenv("FPSIM_THREADS", "3", 1);
    TEST_CHECK(&tc, fpsim_threads_default() == 3, "FPSIM_THREADS=3 gives %d", fpsim_threads_default());
    setenv("FPSIM_THREADS", "nonsense", 1);
    TEST_CHECK(&tc, fpsim_threads_default() >= 1, "%s", "bad FPSIM_THREADS falls back to the core count");
    return test_summary(&tc);
}
