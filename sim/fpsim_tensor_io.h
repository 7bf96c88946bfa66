/* fpsim_tensor_io.h: read the 2-D tensor a user hands fpsim, from .npy, HDF5 or raw bytes.
 *
 * The result is float32 or bfloat16 exactly as stored (bf16 kept as bits, so quantizers can
 * take it through their exact BF16 path). float64 data (npy '<f8', HDF5 IEEE F64) is rounded once
 * to float32 (RNE, the C conversion), and the tensor says so (source_dtype "f64", rounded = 1).
 *
 * NaN and Inf values are VALID input (a quantizer counts them in its statistics). Errors, each
 * one line naming the file: missing/unreadable file (FPSIM_EIO); malformed or truncated file,
 * non-float dtype, unknown format (FPSIM_EFORMAT); rank != 2 or a zero dimension (FPSIM_ESHAPE);
 * inconsistent options (FPSIM_EINVAL).
 *
 * Format selection: `shape` given -> raw; else by content (the .npy magic "\x93NUMPY", the HDF5
 * signature), falling back to an error that says how to pass raw data. */
#ifndef FPSIM_TENSOR_IO_H
#define FPSIM_TENSOR_IO_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_status.h"

typedef enum fpsim_tensor_dtype {
    FPSIM_TENSOR_F32 = 0,
    FPSIM_TENSOR_BF16
} fpsim_tensor_dtype;

/* Where the tensor comes from (zero-initialise, then set what the user gave). */
typedef struct fpsim_tensor_source {
    const char *path;
    const char *dataset; /* HDF5 dataset path; NULL: the file's only dataset at the root */
    size_t rows, cols;   /* raw: the shape (both 0 = not raw) */
    const char *dtype;   /* "f32" | "bf16": raw data's type (default f32); for .npy, "bf16"
                            reads 2-byte void/uint16 data ('<V2', as ml_dtypes saves bfloat16,
                            or '<u2') as bfloat16 bits. NULL = default. */
} fpsim_tensor_source;

typedef struct fpsim_tensor2d {
    size_t rows, cols;
    fpsim_tensor_dtype dtype; /* which of f32 / bf16 holds the data */
    float *f32;               /* rows x cols row-major, when dtype == FPSIM_TENSOR_F32 */
    uint16_t *bf16;           /* rows x cols bfloat16 bits, when dtype == FPSIM_TENSOR_BF16 */
    char format[8];           /* "npy", "hdf5" or "raw" */
    char source_dtype[8];     /* as stored: "f32", "f64", "bf16" */
    char dataset[256];        /* HDF5: the dataset read (found when none was named); else "" */
    int rounded;              /* 1 if values were rounded to float32 (float64 input) */
} fpsim_tensor2d;

/* Read the tensor; on failure *out holds no memory. */
fpsim_status fpsim_tensor_read(fpsim_tensor2d *out, const fpsim_tensor_source *src);

/* What fpsim_tensor_read would give, without reading the data: the same checks of the input's
 * header (the .npy header and file size, the HDF5 dataset's shape, type and storage, a raw file's
 * size) and the same errors; *out has rows, cols, dtype, format, source_dtype, dataset and
 * rounded set, and no data. For sizing a run before its memory is allocated. */
fpsim_status fpsim_tensor_peek(fpsim_tensor2d *out, const fpsim_tensor_source *src);

/* Bytes fpsim_tensor_read holds at its peak for the tensor `t` describes (from fpsim_tensor_peek):
 * the stored elements, and for float64 input also their float32 copy. */
uint64_t fpsim_tensor_read_bytes(const fpsim_tensor2d *t);

/* FPSIM_ENOMEM, before anything is allocated, when reading the input and making outputs of
 * `out_bytes_per_element` bytes per input element would need more memory than the machine has
 * available (fpsim_mem.h): "input 'x.h5' dataset 'x' (60000x60000 float32) needs 59.4 GB (input
 * 14.4 GB, outputs 45.0 GB); 23.1 GB is available". The input is peeked (fpsim_tensor_peek), so
 * a bad input gives the read's own error. Need = max(what the read holds at its peak, the tensor
 * as held after it + the outputs). */
fpsim_status fpsim_tensor_check_memory(const fpsim_tensor_source *src, double out_bytes_per_element);

/* Read raw little-endian bytes: exactly rows*cols elements of `dtype` (a shorter file is
 * truncated, a longer one is rejected too: the shape is then wrong). */
fpsim_status fpsim_tensor_read_raw(fpsim_tensor2d *out, const char *path, size_t rows, size_t cols,
                                   fpsim_tensor_dtype dtype);

/* Parse "f32" (also "float32") / "bf16" (also "bfloat16"); FPSIM_ENAME lists the valid names. */
fpsim_status fpsim_tensor_dtype_parse(fpsim_tensor_dtype *out, const char *name);

void fpsim_tensor2d_free(fpsim_tensor2d *t);

#endif
