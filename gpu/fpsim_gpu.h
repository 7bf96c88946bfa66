/* fpsim_gpu.h: the GPU library API (fpsim_gpu_*), C-callable.
 *
 * The kernels include the same scalar core as the CPU emulators (formats/fpsim_core.h, compiled
 * by nvcc with -fmad=false), so a GPU code equals the CPU code by construction; `fpsim verify
 * --device gpu` proves it over every float32 input. Where the policy allows it (E4M3/E5M2, nearest
 * even, PTX satfinite specials: policy `nv`), sm_89+ uses the hardware `cvt.rn.satfinite` instead.
 *
 * Two flavours of every call:
 *   - host pointers (fpsim_gpu_convert_f32, ...): convenience for the CLI; the data is copied to
 *     the device in chunks, converted, copied back. Blocking.
 *   - device pointers (..._dev): for benchmarks and callers that keep data on the GPU; the work is
 *     queued on `cuda_stream` (a cudaStream_t, NULL = the default stream) and not waited for.
 * Codes are one byte per code for formats of 8 bits or fewer (FP4/FP6 unpacked, one per byte) and
 * one uint16_t per code for BF16/F16, as in the CPU array API (formats/fpsim_formats.h).
 * Stochastic rounding draws fpsim_sr_word(seed, stream, index0 + i) for element i, exactly as the
 * CPU does, so bits do not depend on the launch shape.
 *
 * Every function returns FPSIM_ENODEV (message "no CUDA device ...") when no device is present,
 * and FPSIM_ENODEV ("fpsim was built without CUDA") in builds without nvcc (the CLI checks
 * FPSIM_HAVE_CUDA before calling). */
#ifndef FPSIM_GPU_H
#define FPSIM_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_core_types.h"
#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- device ---------------------------------------------------------------------------- */

/* Number of CUDA devices (0 when none or no driver). */
int fpsim_gpu_device_count(void);

/* One line describing device 0 (name, SM count, driver/runtime versions) into buf. */
fpsim_status fpsim_gpu_describe(char *buf, unsigned long cap);

/* FPSIM_OK when a device is usable, else FPSIM_ENODEV with the reason recorded. */
fpsim_status fpsim_gpu_require(void);

/* Device memory for callers that work on device pointers (benchmarks, verify). */
fpsim_status fpsim_gpu_alloc(void **dev, size_t bytes);
void fpsim_gpu_free(void *dev);
/* Copies: kind 0 host->device, 1 device->host, 2 device->device. Blocking. */
fpsim_status fpsim_gpu_copy(void *dst, const void *src, size_t bytes, int kind);
fpsim_status fpsim_gpu_sync(void);

/* ---- element conversions ---------------------------------------------------------------- */

/* Flags of the _dev calls. */
enum {
    FPSIM_GPU_SOFTWARE_ONLY = 1u << 0 /* never use the hardware cvt, even where the spec allows */
};

/* 1 if `s` converts float32 exactly like PTX cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 (format E4M3 or
 * E5M2, RNE, overflow and Inf to +-max, every NaN to 0x7F, no -0 rewrite): the hardware path is
 * then used on devices of compute capability 8.9 or newer. */
int fpsim_gpu_spec_has_hw_cvt(const fpsim_spec *s);

/* 1 if the device (0) runs the hardware cvt path (sm_89+), 0 if not or no device. */
int fpsim_gpu_hw_cvt_available(void);

/* Host pointers. x: n source values; codes: n codes. */
fpsim_status fpsim_gpu_convert_f32(void *codes, const float *x, size_t n, const fpsim_spec *s,
                                   uint64_t seed, uint32_t stream, uint64_t index0);
fpsim_status fpsim_gpu_convert_f64(void *codes, const double *x, size_t n, const fpsim_spec *s,
                                   uint64_t seed, uint32_t stream, uint64_t index0);
fpsim_status fpsim_gpu_convert_bf16(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s,
                                    uint64_t seed, uint32_t stream, uint64_t index0);
fpsim_status fpsim_gpu_convert_f16(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s,
                                   uint64_t seed, uint32_t stream, uint64_t index0);
/* Decode n codes into float32. */
fpsim_status fpsim_gpu_decode_f32(float *y, const void *codes, size_t n, const fpsim_spec *s);

/* Device pointers, queued on cuda_stream. */
fpsim_status fpsim_gpu_convert_f32_dev(void *codes, const float *x, size_t n, const fpsim_spec *s,
                                       uint64_t seed, uint32_t stream, uint64_t index0,
                                       unsigned flags, void *cuda_stream);
fpsim_status fpsim_gpu_convert_f64_dev(void *codes, const double *x, size_t n, const fpsim_spec *s,
                                       uint64_t seed, uint32_t stream, uint64_t index0,
                                       unsigned flags, void *cuda_stream);
fpsim_status fpsim_gpu_convert_bf16_dev(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s,
                                        uint64_t seed, uint32_t stream, uint64_t index0,
                                        unsigned flags, void *cuda_stream);
fpsim_status fpsim_gpu_convert_f16_dev(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s,
                                       uint64_t seed, uint32_t stream, uint64_t index0,
                                       unsigned flags, void *cuda_stream);
fpsim_status fpsim_gpu_decode_f32_dev(float *y, const void *codes, size_t n, const fpsim_spec *s,
                                      void *cuda_stream);

/* Exhaustive sweep: codes[i] = convert(float32 with bits first + i), i < n, with SR words drawn
 * for index first + i. Reads no input: the sweep over all 2^32 floats runs at write bandwidth. */
fpsim_status fpsim_gpu_sweep_f32_dev(void *codes, uint64_t first, size_t n, const fpsim_spec *s,
                                     uint64_t seed, uint32_t stream, unsigned flags, void *cuda_stream);

#ifdef __cplusplus
}
#endif
#endif
