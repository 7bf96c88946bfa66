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

#include "fpsim_block.h"
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
/* Page-locked host memory (fast device<->host copies for the exhaustive sweeps). */
fpsim_status fpsim_gpu_host_alloc(void **host, size_t bytes);
void fpsim_gpu_host_free(void *host);

/* ---- benchmarking helpers (C callers need no CUDA header) -------------------------------- */

/* Fill n device values with a deterministic pseudo-random pattern of seed: kind 0 float32,
 * 1 bf16 bits. Values are roughly normal (sum of uniforms) times 2^k with k spread over
 * [-spread, spread], so blocks see varied amax; never NaN or Inf. */
fpsim_status fpsim_gpu_fill_random_dev(void *x, size_t n, int kind, uint64_t seed, int spread);
/* Median time in milliseconds of `reps` runs of fn(ctx) after `warmup` runs, timed with CUDA
 * events on the default stream; fn queues work and returns a status. */
typedef fpsim_status (*fpsim_gpu_work_fn)(void *ctx);
fpsim_status fpsim_gpu_time_ms(double *median_ms, fpsim_gpu_work_fn fn, void *ctx, int warmup, int reps);
/* A device-to-device copy (the bandwidth baseline), queued. */
fpsim_status fpsim_gpu_copy_dev_async(void *dst, const void *src, size_t bytes);

/* ---- element conversions ---------------------------------------------------------------- */

/* Flags of the _dev calls. */
enum {
    FPSIM_GPU_SOFTWARE_ONLY = 1u << 0 /* element conversions: never the hardware cvt or the fast-vector
                                       * forms, every element through the shared core */
};

/* 1 if `s` converts float32 exactly like PTX cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 (format E4M3 or
 * E5M2, RNE, overflow and Inf to +-max, every NaN to 0x7F, no -0 rewrite): the hardware path is
 * then used on devices of compute capability 8.9 or newer. */
int fpsim_gpu_spec_has_hw_cvt(const fpsim_spec *s);

/* 1 if conversions by `s` without FPSIM_GPU_SOFTWARE_ONLY take a path other than the shared core
 * on this device: the hardware cvt above, or the fast-vector kernel (gpu/convert_fast.cuh: inputs
 * free of NaN, Inf and overflow by short exact forms). verify checks both paths against the CPU. */
int fpsim_gpu_convert_has_fast_path(const fpsim_spec *s);

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
/* Decode n codes into float32 / float64 (exact). */
fpsim_status fpsim_gpu_decode_f32(float *y, const void *codes, size_t n, const fpsim_spec *s);
fpsim_status fpsim_gpu_decode_f64(double *y, const void *codes, size_t n, const fpsim_spec *s);

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
fpsim_status fpsim_gpu_decode_f64_dev(double *y, const void *codes, size_t n, const fpsim_spec *s,
                                      void *cuda_stream);

/* Exhaustive sweep: codes[i] = convert(float32 with bits first + i), i < n, with SR words drawn
 * for index first + i. Reads no input: the sweep over all 2^32 floats runs at write bandwidth. */
fpsim_status fpsim_gpu_sweep_f32_dev(void *codes, uint64_t first, size_t n, const fpsim_spec *s,
                                     uint64_t seed, uint32_t stream, unsigned flags, void *cuda_stream);

/* Blackwell hardware conversions (gpu/sm100/cvt_sm100.cu, built for sm_100a): n float32 values
 * (n % 4 == 0) -> one code per byte with op 0 E2M1 RN, 1 E2M3 RN, 2 E3M2 RN, 3 UE8M0 RP, 4 UE8M0 RZ,
 * 5 E4M3 RS, 6 E2M1 RS (all .satfinite; RS draws one Philox word per 4 elements). Returns
 * FPSIM_EUNSUPPORTED on devices other than compute capability 10.x (so on the H200). Present only
 * when nvcc knows sm_100a (12.8+). */
fpsim_status fpsim_gpu_convert_sm100_dev(uint8_t *codes, const float *x, size_t n, int op, uint64_t seed,
                                         uint32_t stream, void *cuda_stream);

/* ---- block quantizers -------------------------------------------------------------------- */

/* Host pointers: the GPU twin of fpsim_block_quantize / fpsim_block_quantize_bf16. Fills `out`
 * in the same layout with the same bits (codes, scale codes, scale_inv, the cuBLAS-layout copy
 * when opt->want has FPSIM_QWANT_CUBLAS, and the per-tensor values), and, computed on the GPU, the
 * dequantized tensor (FPSIM_QWANT_DEQUANT) and the statistics (FPSIM_QWANT_STATS) with the CPU's
 * values, every field (gpu/block_stats.cuh says how the sums keep the CPU's order). Schemes the GPU does not implement return FPSIM_EUNSUPPORTED naming the missing piece.
 * Stateless: fp8-tensor delayed scaling uses a fresh state (scale 1.0), like the CPU call. */
fpsim_status fpsim_gpu_block_quantize(fpsim_qtensor *out, const fpsim_scheme *s, const float *x,
                                      size_t rows, size_t cols, const fpsim_qopts *opt);
fpsim_status fpsim_gpu_block_quantize_bf16(fpsim_qtensor *out, const fpsim_scheme *s, const uint16_t *x,
                                           size_t rows, size_t cols, const fpsim_qopts *opt);

/* Device buffers of one quantized operand, in fpsim_qtensor's layout. */
typedef struct fpsim_gpu_qbuf {
    int axis;
    size_t rows, cols, qrows, qcols, code_stride, srows, scols, cublas_rows, cublas_cols;
    uint8_t *codes;        /* qrows x code_stride */
    uint8_t *scale_codes;  /* srows x scols (MX, NVFP4), else NULL */
    float *scale_inv;      /* srows x scols (NULL after fpsim_gpu_qbuf_drop_scale_inv) */
    uint8_t *cublas_codes; /* cublas_rows x cublas_cols (MX, NVFP4), zero padding */
    float *cublas_f32;     /* cublas_rows x cublas_cols (block FP8), zero padding */
    float *tensor_values;  /* float[4]: global_amax, s_enc, global_scale, tensor_scale */
    uint32_t *amax_bits;   /* scratch: the tensor amax as bits of |x| */
    unsigned long long *counters; /* statistics counters (saturated, zero-amax blocks), filled when
                                   * opt->want has FPSIM_QWANT_STATS */
} fpsim_gpu_qbuf;

fpsim_status fpsim_gpu_qbuf_alloc(fpsim_gpu_qbuf *b, const fpsim_scheme *s, size_t rows, size_t cols, int axis);
void fpsim_gpu_qbuf_free(fpsim_gpu_qbuf *b);
/* MX and NVFP4: free b->scale_inv and leave it NULL, so that the quantizer writes the codes and
 * the scale codes only (what TE's kernels and cuBLAS use; the float copy of each scale is 4 more
 * bytes per block to store). FPSIM_EINVAL for buffers without scale codes. */
fpsim_status fpsim_gpu_qbuf_drop_scale_inv(fpsim_gpu_qbuf *b);

/* Device pointers, queued on cuda_stream. x: rows x cols float32 (x_is_bf16 = 0) or bf16 bits
 * (x_is_bf16 = 1), row-major. `out` must come from fpsim_gpu_qbuf_alloc with the same scheme,
 * shape and opt->axis. Where the scheme needs a tensor amax (NVFP4, fp8-tensor current), it is
 * opt->global_amax when opt->global_amax_given, else computed on the GPU first (a second pass). */
fpsim_status fpsim_gpu_block_quantize_dev(fpsim_gpu_qbuf *out, const fpsim_scheme *s, const void *x, int x_is_bf16,
                                          size_t rows, size_t cols, const fpsim_qopts *opt, void *cuda_stream);

/* Both copies of x from one read where a kernel takes them together: rows_out (allocated with axis
 * FPSIM_AXIS_ROWS) gets the rowwise copy, cols_out (FPSIM_AXIS_COLS) the columnwise one, each the
 * same bits as fpsim_gpu_block_quantize_dev along that axis (opt->axis is ignored). One kernel
 * writes both (TransformerEngine's fused cast-and-transpose) for MX 1x32 (E4M3, E5M2, E2M1), NVFP4
 * TE 1x16 without RHT (nearest-even or SR) and block FP8 1x128 from bf16, on the columnwise fast
 * kernel's shapes (rows a multiple of 128, the CTA tile's width a multiple of the block); every
 * other scheme or shape takes two passes. *fused (may be NULL): 1 where one kernel wrote both. The
 * tensor amax of NVFP4 is computed once for both when not given. */
fpsim_status fpsim_gpu_block_quantize2_dev(fpsim_gpu_qbuf *rows_out, fpsim_gpu_qbuf *cols_out, const fpsim_scheme *s,
                                           const void *x, int x_is_bf16, size_t rows, size_t cols,
                                           const fpsim_qopts *opt, int *fused, void *cuda_stream);

/* The same from host memory into two host tensors, as two fpsim_gpu_block_quantize calls would fill
 * them (x: float32, or bf16 bits when x_is_bf16). */
fpsim_status fpsim_gpu_block_quantize2(fpsim_qtensor *rows_out, fpsim_qtensor *cols_out, const fpsim_scheme *s,
                                       const void *x, int x_is_bf16, size_t rows, size_t cols, const fpsim_qopts *opt,
                                       int *fused);

/* amax of |x| over n values, written as float bits to *amax_bits_dev: nan_policy FPSIM_NAN_PROPAGATE
 * (a NaN gives NaN), FPSIM_NAN_IGNORE (NaN skipped), or 2 (NaN and Inf skipped: finite inputs only). */
fpsim_status fpsim_gpu_amax_dev(uint32_t *amax_bits_dev, const void *x, int x_is_bf16, size_t n, int nan_policy,
                                void *cuda_stream);

#ifdef __cplusplus
}
#endif
#endif
