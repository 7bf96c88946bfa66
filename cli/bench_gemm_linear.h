/* bench_gemm_linear.h: the GPU linear-layer experiment behind `fpsim bench gemm --device gpu
 * --linear` (bench_gemm_linear.c; built only with CUDA). */
#ifndef FPSIM_BENCH_GEMM_LINEAR_H
#define FPSIM_BENCH_GEMM_LINEAR_H

#include <stddef.h>

#ifdef FPSIM_HAVE_CUDA
/* BF16 vs FP8 (per-tensor and 1x128 x 128x128 block) Llama-3.1-8B linear layers at T tokens:
 * GEMMs alone, fpsim's GPU quantizers and recalibration, whole steps; JSON or text on stdout.
 * Returns a CLI exit code (errors: one line on stderr). */
int bench_gemm_linear(int json, size_t T, int reps);
#endif

#endif
