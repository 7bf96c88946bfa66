/* fpsim_gpu_verify.h: GPU kernels checked byte for byte against the CPU emulators.
 *
 * The library computes the rows of the verification table; the CLI (`fpsim verify --device gpu`)
 * prints them. Rows are handed to a callback as soon as each finishes, so a long exhaustive
 * run shows progress. A mismatch is a spec bug on one side: there is no tolerance. */
#ifndef FPSIM_GPU_VERIFY_H
#define FPSIM_GPU_VERIFY_H

#include <stdint.h>

#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fpsim_gpu_check {
    char name[96];        /* e.g. "f32->e4m3/nv/rne [hw]" or "mxfp8-e4m3:rule=floor rows 1000x4096" */
    uint64_t inputs;      /* values (or elements) compared */
    uint64_t mismatches;  /* bytes (codes, scales) that differ */
    double seconds;       /* wall time of the row, CPU side included */
    char example[160];    /* first mismatch, "" when none */
    int skipped;          /* 1: not run (reason in example), not a failure */
} fpsim_gpu_check;

typedef void (*fpsim_gpu_check_fn)(const fpsim_gpu_check *row, void *ctx);

typedef struct fpsim_gpu_verify_opts {
    int full;             /* 1: every float32 input (2^32); 0: a sample of 2^24 covering every exponent */
    int threads;          /* CPU threads of the emulator side (<= 0: fpsim_threads_default()) */
    const char *only;     /* run only rows whose name contains this text (NULL: all) */
    int large;            /* block quantizers: also the large (8192 x 8192) tensors */
} fpsim_gpu_verify_opts;

/* Element conversions: every format x policy x rounding mode that fpsim_spec_make accepts, from
 * float32 (all 2^32 or the sample, software core; and the hardware cvt for specs that allow it),
 * from all 2^16 bf16 and f16 values, and decode of every code. */
fpsim_status fpsim_gpu_verify_elements(const fpsim_gpu_verify_opts *o, fpsim_gpu_check_fn fn, void *ctx,
                                       uint64_t *total_mismatches);

/* Block quantizers: every scheme the GPU implements, on random tensors of odd and large shapes and
 * on adversarial tensors; codes, scales, cuBLAS-layout scales and per-tensor values compared; then
 * the tensor amax pass (fpsim_gpu_verify_amax). */
fpsim_status fpsim_gpu_verify_blocks(const fpsim_gpu_verify_opts *o, fpsim_gpu_check_fn fn, void *ctx,
                                     uint64_t *total_mismatches);

/* The tensor amax pass (fpsim_gpu_amax_dev) against a host loop: bf16 and float32, odd sizes and
 * tensors of several chunks, NaN/Inf plantings, every NaN mode. Called by fpsim_gpu_verify_blocks. */
fpsim_status fpsim_gpu_verify_amax(const fpsim_gpu_verify_opts *o, fpsim_gpu_check_fn fn, void *ctx,
                                   uint64_t *total_mismatches);

#ifdef __cplusplus
}
#endif
#endif
