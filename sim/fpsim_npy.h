/* fpsim_npy.h: fpsim's own .npy reader and writer (NumPy format versions 1.0, 2.0 and 3.0).
 *
 * Supported element types (little-endian, C order only):
 *   '<f4' float32, '<f8' float64, '<f2' float16, '|u1' uint8, '<u2' uint16,
 *   '<V2' / '|V2' two opaque bytes (how ml_dtypes saves bfloat16 arrays; fpsim reads them as
 *   bf16 bits), '<V1' / '|V1' one opaque byte (ml_dtypes float8/float4/float6 arrays: codes).
 * Anything else (big-endian, Fortran order, object arrays, other types) is refused with a
 * message naming what was found. Truncated or malformed files are FPSIM_EFORMAT, never a crash.
 * Writers produce version 1.0 (2.0 if the header does not fit), data aligned to 64 bytes, and
 * write through a temporary name renamed on success (fpsim_file.h). */
#ifndef FPSIM_NPY_H
#define FPSIM_NPY_H

#include <stddef.h>
#include <stdio.h>

#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpsim_npy_dtype {
    FPSIM_NPY_F32 = 0, /* '<f4' */
    FPSIM_NPY_F64,     /* '<f8' */
    FPSIM_NPY_F16,     /* '<f2' */
    FPSIM_NPY_U8,      /* '|u1' */
    FPSIM_NPY_U16,     /* '<u2' */
    FPSIM_NPY_V2,      /* '<V2': ml_dtypes bfloat16 (2 opaque bytes) */
    FPSIM_NPY_V1,      /* '<V1': ml_dtypes 8-bit and smaller float codes (1 opaque byte) */
    FPSIM_NPY_DTYPE_COUNT
} fpsim_npy_dtype;

enum { FPSIM_NPY_MAX_DIMS = 8 };

typedef struct fpsim_npy_info {
    fpsim_npy_dtype dtype;
    int ndim;                         /* 0 for a scalar array (count 1) */
    size_t shape[FPSIM_NPY_MAX_DIMS];
    size_t count;                     /* number of elements (product of shape) */
    size_t elem_size;                 /* bytes per element */
    size_t data_offset;               /* bytes from the start of the file to the data */
} fpsim_npy_info;

/* The descr string ("<f4", ...) and the element size of a dtype. */
const char *fpsim_npy_dtype_descr(fpsim_npy_dtype dtype);
size_t fpsim_npy_dtype_size(fpsim_npy_dtype dtype);

/* Read and check the header from the current position of `f` (the start of the file); on
 * success `f` is positioned at the first data byte. `name` names the file in messages. */
fpsim_status fpsim_npy_read_header(FILE *f, const char *name, fpsim_npy_info *info);

/* Read a whole file: header checked, then exactly count * elem_size data bytes (fewer:
 * FPSIM_EFORMAT "truncated"; more: FPSIM_EFORMAT "trailing bytes"). *data is malloc'ed (free()
 * it); NULL when count is 0. */
fpsim_status fpsim_npy_load(const char *path, fpsim_npy_info *info, void **data);

/* The checks of fpsim_npy_load without reading the data: the header, and for a regular file its
 * size against the header's claim (the same "truncated" and "trailing bytes" errors). */
fpsim_status fpsim_npy_peek(const char *path, fpsim_npy_info *info);

/* Bytes of the header that fpsim_npy_write_header writes for this shape (a multiple of 64). A
 * 1-D or 2-D header is always 128 bytes, so a writer that learns the length only at the end
 * can write a placeholder and rewrite it in place. */
size_t fpsim_npy_header_bytes(fpsim_npy_dtype dtype, int ndim, const size_t *shape);

/* Write the header at the current position of `f`. */
fpsim_status fpsim_npy_write_header(FILE *f, fpsim_npy_dtype dtype, int ndim, const size_t *shape);

/* Write a whole file (temporary name, renamed when complete). */
fpsim_status fpsim_npy_save(const char *path, fpsim_npy_dtype dtype, int ndim, const size_t *shape,
                            const void *data);

#ifdef __cplusplus
}
#endif
#endif
