/* parallel.c: fpsim_parallel_for with one pthread per run (created per call: the calls that go
 * parallel convert at least a few hundred thousand elements, so creation cost is negligible). */
#include "fpsim_parallel.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

enum { MAX_THREADS = 1024 };

int fpsim_threads_default(void)
{
    const char *env = getenv("FPSIM_THREADS");
    if (env && *env) {
        char *end = NULL;
        long v = strtol(env, &end, 10);
        if (end && *end == '\0' && v >= 1 && v <= MAX_THREADS)
            return (int)v;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores >= 1 ? (int)(cores < MAX_THREADS ? cores : MAX_THREADS) : 1;
}

typedef struct run {
    void (*fn)(void *ctx, size_t begin, size_t end);
    void *ctx;
    size_t begin, end;
    pthread_t thread;
    int started;
} run;

static void *run_main(void *arg)
{
    run *r = arg;
    r->fn(r->ctx, r->begin, r->end);
    return NULL;
}

fpsim_status fpsim_parallel_for(size_t n, size_t grain, void (*fn)(void *ctx, size_t begin, size_t end),
                                void *ctx, int threads)
{
    if (n == 0)
        return FPSIM_OK;
    if (grain == 0)
        grain = 1;
    if (threads <= 0)
        threads = fpsim_threads_default();
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    const size_t chunks = n / grain + (n % grain != 0);
    const size_t t = (size_t)threads < chunks ? (size_t)threads : chunks;
    if (t <= 1) {
        fn(ctx, 0, n);
        return FPSIM_OK;
    }
    run runs[MAX_THREADS];
    for (size_t i = 0; i < t; i++) {
        const size_t c0 = chunks * i / t, c1 = chunks * (i + 1) / t;
        runs[i].fn = fn;
        runs[i].ctx = ctx;
        runs[i].begin = c0 * grain;
        runs[i].end = c1 * grain < n ? c1 * grain : n;
        runs[i].started = 0;
    }
    for (size_t i = 1; i < t; i++)
        runs[i].started = pthread_create(&runs[i].thread, NULL, run_main, &runs[i]) == 0;
    fn(ctx, runs[0].begin, runs[0].end);
    for (size_t i = 1; i < t; i++) {
        if (runs[i].started)
            pthread_join(runs[i].thread, NULL);
        else
            fn(ctx, runs[i].begin, runs[i].end);
    }
    return FPSIM_OK;
}
