/* fpsim_h5.h: the HDF5 helpers every fpsim output goes through (HDF5 C API, 1.10+).
 *
 * Files are created under a temporary name and renamed when complete (sim/fpsim_file.h), so a
 * failed run leaves nothing behind. Datasets of any rank in the types below, optionally gzip
 * compressed; scalar string/number attributes, 1-D string-array attributes (the names of an
 * indexed dimension: layers, sites, passes, roles) and numeric-array attributes; groups; the
 * provenance attributes every fpsim file carries at its root; and a reader for the 2-D
 * float tensors fpsim takes as input, with one clear error for each way it can be wrong.
 *
 * Strings are written as variable-length UTF-8 (h5py reads them as `str`). Every function
 * returns an fpsim_status and records a message naming the file and object; HDF5's own error
 * stack printing is switched off inside these calls (the library never prints).
 * Objects are addressed by an HDF5 location id (a file or group id), so callers may mix these
 * helpers with direct HDF5 calls. The layout of each command's file is in docs/hdf5-layout.md. */
#ifndef FPSIM_H5_H
#define FPSIM_H5_H

#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>

#include "fpsim_status.h"

/* Element types of datasets (memory and file types are the same; little-endian in the file). */
typedef enum fpsim_h5_type {
    FPSIM_H5_F32 = 0,
    FPSIM_H5_F64,
    FPSIM_H5_BF16, /* raw bfloat16 bits in uint16_t; read only (see fpsim_h5_read_matrix) */
    FPSIM_H5_U8,
    FPSIM_H5_U16,
    FPSIM_H5_I32,
    FPSIM_H5_U32,
    FPSIM_H5_I64,
    FPSIM_H5_U64,
    FPSIM_H5_TYPE_COUNT
} fpsim_h5_type;

/* Bytes per element of a type ("f32", "bf16", ... names for messages). */
size_t fpsim_h5_type_size(fpsim_h5_type type);
const char *fpsim_h5_type_name(fpsim_h5_type type);

/* An output file being written: `id` is the HDF5 file id to write into; `tmp` the temporary
 * name; `path` the final name. */
typedef struct fpsim_h5_file {
    hid_t id;
    char path[4096];
    char tmp[4096];
} fpsim_h5_file;

/* Create `path`'s temporary file (truncating any stale one). On failure f->id is negative. */
fpsim_status fpsim_h5_create(fpsim_h5_file *f, const char *path);

/* Flush and close the file, then rename it onto its final path. On failure the temporary
 * file is removed. Either way f->id is closed. */
fpsim_status fpsim_h5_commit(fpsim_h5_file *f);

/* Close (if open) and remove the temporary file: for every error path after fpsim_h5_create.
 * Safe to call twice, and after a failed create. */
void fpsim_h5_discard(fpsim_h5_file *f);

/* The provenance attributes of the root group: `fpsim_version` (FPSIM_VERSION), `git_commit`
 * (FPSIM_GIT_COMMIT at build time), `command_line`, `seed` (uint64), `date` (UTC, ISO 8601,
 * e.g. "2026-11-30T01:35:16Z"). */
fpsim_status fpsim_h5_write_provenance(hid_t file, const char *command_line, uint64_t seed);

/* Open an existing file read-only. A missing file is FPSIM_EIO; a file that is not HDF5 is
 * FPSIM_EFORMAT. Close with fpsim_h5_close_read.
 *
 * From this call until fpsim_h5_close_read, a fault inside the HDF5 library (SIGSEGV, SIGBUS,
 * SIGFPE: libhdf5 1.10 trusts lengths stored in a damaged file and reads past its buffers) ends
 * the process with the one line "fpsim: damaged HDF5 file 'PATH': the HDF5 library faulted
 * reading it" on stderr and exit status 2, after removing the temporary files of outputs still
 * being written with fpsim_h5_create. This is the one place where the library ends the process:
 * the library call that faulted cannot be resumed, and the alternative is death by the signal.
 * The previous handlers return when the last file opened this way is closed (files may nest).
 * The guard is process-wide: open and close input files from one thread. */
fpsim_status fpsim_h5_open_read(hid_t *out, const char *path);

/* Close a file of fpsim_h5_open_read (H5Fclose) and end its fault guard. A negative id is
 * ignored. */
void fpsim_h5_close_read(hid_t file);

/* Create a group (intermediate groups of "a/b/c" included). Close with H5Gclose. */
fpsim_status fpsim_h5_group_create(hid_t *out, hid_t loc, const char *name);

/* Write a dataset `name` under `loc`: `rank` dims (0 = scalar, up to 32), row-major `data` of
 * `type` (not FPSIM_H5_BF16). gzip_level 1..9 compresses (chunked, with the shuffle filter;
 * chunks of at most ~1 MiB); 0 stores contiguously. Zero-sized dimensions are allowed. */
fpsim_status fpsim_h5_write(hid_t loc, const char *name, fpsim_h5_type type, int rank,
                            const size_t *dims, const void *data, int gzip_level);

/* Scalar attributes on a file, group or dataset (replacing an existing one of the same name). */
fpsim_status fpsim_h5_attr_string(hid_t obj, const char *name, const char *value);
fpsim_status fpsim_h5_attr_double(hid_t obj, const char *name, double value);
fpsim_status fpsim_h5_attr_int64(hid_t obj, const char *name, int64_t value);
fpsim_status fpsim_h5_attr_uint64(hid_t obj, const char *name, uint64_t value);
/* 1-D attributes: n strings (the names of an indexed dimension), n doubles, n int64. */
fpsim_status fpsim_h5_attr_strings(hid_t obj, const char *name, const char *const *values, size_t n);
fpsim_status fpsim_h5_attr_doubles(hid_t obj, const char *name, const double *values, size_t n);
fpsim_status fpsim_h5_attr_int64s(hid_t obj, const char *name, const int64_t *values, size_t n);

/* Attributes of the object at `path` under `loc` ("." = loc itself). A missing attribute or
 * one of another class is FPSIM_EFORMAT. read_attr_string copies at most cap-1 characters. */
fpsim_status fpsim_h5_read_attr_string(hid_t loc, const char *path, const char *name, char *out,
                                       size_t cap);
fpsim_status fpsim_h5_read_attr_double(hid_t loc, const char *path, const char *name, double *out);
fpsim_status fpsim_h5_read_attr_int64(hid_t loc, const char *path, const char *name, int64_t *out);

/* A 2-D floating-point matrix read back exactly as stored (no conversion of values). */
typedef struct fpsim_h5_matrix {
    fpsim_h5_type type; /* FPSIM_H5_F32, FPSIM_H5_F64 or FPSIM_H5_BF16 (uint16_t bits) */
    size_t rows, cols;
    void *data;         /* rows*cols elements, row-major; malloc'd, caller frees */
} fpsim_h5_matrix;

/* Read the 2-D float dataset `dataset` of file `path`. Accepted: IEEE float32 and float64 (any
 * byte order), bfloat16 stored as a 16-bit float type with 8 exponent and 7 mantissa bits, or
 * as uint16 with a string attribute dtype = "bfloat16" (or "bf16"). Errors (FPSIM_EFORMAT
 * unless noted): file missing (FPSIM_EIO) or not HDF5, dataset missing (the message lists the
 * datasets at the root), not a dataset, rank != 2 (FPSIM_ESHAPE), integer/string/other dtype,
 * truncated or unreadable data; data stored outside the file (external storage, a virtual
 * dataset), which fpsim does not read (a file must not make fpsim read other files). */
fpsim_status fpsim_h5_read_matrix(fpsim_h5_matrix *out, const char *path, const char *dataset);

/* The shape and stored type of what fpsim_h5_read_matrix would read (the same checks and errors,
 * no data read): for sizing a run before its memory is allocated. */
fpsim_status fpsim_h5_matrix_info(fpsim_h5_type *type, size_t *rows, size_t *cols, const char *path,
                                  const char *dataset);

#endif
