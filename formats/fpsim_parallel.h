/* fpsim_parallel.h: a deterministic parallel-for over an index range (pthreads).
 *
 * [0, n) is cut into chunks of `grain` indices, and the chunks into `threads` contiguous runs
 * (a fixed function of n, grain and threads). Work functions must give the same result for any
 * partition (fpsim's conversions key their random bits by absolute element index), so the thread
 * count never changes bits. The calling thread runs the first run itself. */
#ifndef FPSIM_PARALLEL_H
#define FPSIM_PARALLEL_H

#include <stddef.h>

#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads to use by default: the environment variable FPSIM_THREADS (a positive integer) if set,
 * else the number of online processors (at least 1). */
int fpsim_threads_default(void);

/* Call fn(ctx, begin, end) over disjoint ranges covering [0, n). threads <= 0: the default.
 * grain 0 counts as 1. Runs in the caller alone when n <= grain or threads == 1. If a thread
 * cannot be created its range runs in the caller (never an error). Returns FPSIM_OK. */
fpsim_status fpsim_parallel_for(size_t n, size_t grain, void (*fn)(void *ctx, size_t begin, size_t end),
                                void *ctx, int threads);

#ifdef __cplusplus
}
#endif
#endif
