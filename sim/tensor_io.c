/* tensor_io.c: the 2-D input tensor from .npy, HDF5 or raw bytes (see fpsim_tensor_io.h). */
#include "fpsim_tensor_io.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fpsim_file.h"
#include "fpsim_h5.h"
#include "fpsim_mem.h"
#include "fpsim_npy.h"
#include "h5_internal.h"

fpsim_status fpsim_tensor_dtype_parse(fpsim_tensor_dtype *out, const char *name)
{
    if (!strcmp(name, "f32") || !strcmp(name, "float32")) {
        *out = FPSIM_TENSOR_F32;
        return FPSIM_OK;
    }
    if (!strcmp(name, "bf16") || !strcmp(name, "bfloat16")) {
        *out = FPSIM_TENSOR_BF16;
        return FPSIM_OK;
    }
    return fpsim_fail(FPSIM_ENAME, "unknown dtype '%s'; valid: f32, bf16", name);
}

void fpsim_tensor2d_free(fpsim_tensor2d *t)
{
    free(t->f32);
    free(t->bf16);
    t->f32 = NULL;
    t->bf16 = NULL;
}

static void tensor_clear(fpsim_tensor2d *t)
{
    memset(t, 0, sizeof *t);
}

/* rows*cols*esize without overflow, or 0 with an error recorded. */
static fpsim_status byte_count(size_t *bytes, size_t rows, size_t cols, size_t esize, const char *path)
{
    if (rows == 0 || cols == 0)
        return fpsim_fail(FPSIM_ESHAPE, "'%s': tensor shape %zux%zu has a zero dimension", path, rows, cols);
    if (rows > SIZE_MAX / cols / esize)
        return fpsim_fail(FPSIM_ESHAPE, "'%s': tensor shape %zux%zu is too large", path, rows, cols);
    *bytes = rows * cols * esize;
    return FPSIM_OK;
}

/* Round float64 values to float32, once (C conversion: round to nearest even under the default
 * rounding mode; finite values beyond FLT_MAX become +-Inf, as numpy astype(float32) does). */
static float *f64_to_f32(const double *x, size_t n)
{
    float *y = malloc(n * sizeof *y);
    if (!y) return NULL;
    for (size_t i = 0; i < n; i++) y[i] = (float)x[i];
    return y;
}

/* ---- raw ---- */

fpsim_status fpsim_tensor_read_raw(fpsim_tensor2d *out, const char *path, size_t rows, size_t cols,
                                   fpsim_tensor_dtype dtype)
{
    tensor_clear(out);
    size_t esize = dtype == FPSIM_TENSOR_BF16 ? 2 : 4, bytes = 0;
    fpsim_status st = byte_count(&bytes, rows, cols, esize, path);
    if (st) return st;
    FILE *f = fopen(path, "rb");
    if (!f) return fpsim_fail(FPSIM_EIO, "cannot read '%s': %s", path, strerror(errno));
    const char *tname = dtype == FPSIM_TENSOR_BF16 ? "bf16" : "f32";
    /* A regular file shorter than the shape needs is refused before allocating (a typo in
     * --shape must not try to allocate terabytes). */
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (unsigned long long)sb.st_size < bytes) {
        fclose(f);
        return fpsim_fail(FPSIM_EFORMAT, "'%s' is truncated: %llu bytes, a %zux%zu %s tensor needs %zu", path,
                          (unsigned long long)sb.st_size, rows, cols, tname, bytes);
    }
    void *data = malloc(bytes);
    if (!data) {
        fclose(f);
        return fpsim_fail(FPSIM_ENOMEM, "out of memory for a %zux%zu tensor", rows, cols);
    }
    size_t got = fread(data, 1, bytes, f);
    int extra = got == bytes && fgetc(f) != EOF;
    int err = ferror(f);
    fclose(f);
    if (err) st = fpsim_fail(FPSIM_EIO, "cannot read '%s': read error", path);
    else if (got < bytes)
        st = fpsim_fail(FPSIM_EFORMAT, "'%s' is truncated: %zu bytes, a %zux%zu %s tensor needs %zu",
                        path, got, rows, cols, tname, bytes);
    else if (extra)
        st = fpsim_fail(FPSIM_EFORMAT, "'%s' is longer than a %zux%zu %s tensor (%zu bytes): wrong --shape or --dtype?",
                        path, rows, cols, tname, bytes);
    if (st) {
        free(data);
        return st;
    }
    /* Raw data is little-endian, like every machine fpsim runs on (x86-64, aarch64). */
    out->rows = rows;
    out->cols = cols;
    out->dtype = dtype;
    if (dtype == FPSIM_TENSOR_BF16) out->bf16 = data;
    else out->f32 = data;
    strcpy(out->format, "raw");
    strcpy(out->source_dtype, tname);
    return FPSIM_OK;
}

/* ---- HDF5 ---- */

/* Name of the only dataset at the root of an HDF5 file (for a missing --dataset), and the first
 * link that leads to no object (a dangling soft or external link, a damaged object): when there
 * is no dataset, that link is the real problem, not "no dataset". */
struct only_dataset {
    int count, unopenable;
    char name[256], bad[256];
};

static herr_t note_dataset(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
    (void)info;
    struct only_dataset *o = data;
    /* H5Oopen + H5Iget_type: the same in HDF5 1.10 and 1.12+ (H5Oget_info changed). */
    hid_t obj = H5Oopen(group, name, H5P_DEFAULT);
    if (obj < 0) {
        if (o->unopenable++ == 0) snprintf(o->bad, sizeof o->bad, "%s", name);
        return 0;
    }
    if (H5Iget_type(obj) == H5I_DATASET && o->count++ == 0) snprintf(o->name, sizeof o->name, "%s", name);
    H5Oclose(obj);
    return 0;
}

static fpsim_status find_only_dataset(char *name, size_t cap, const char *path)
{
    hid_t file;
    fpsim_status st = fpsim_h5_open_read(&file, path);
    if (st) return st;
    struct only_dataset o = {0, 0, "", ""};
    hsize_t idx = 0;
    H5E_BEGIN_TRY {
        H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, &idx, note_dataset, &o);
        if (o.count == 0 && o.unopenable) st = fpsim_h5_link_problem(file, o.bad, path);
    } H5E_END_TRY;
    fpsim_h5_close_read(file);
    if (st) return st;
    if (o.count == 0) return fpsim_fail(FPSIM_EFORMAT, "'%s' has no dataset at its root; name one with --dataset", path);
    if (o.count > 1)
        return fpsim_fail(FPSIM_EINVAL, "'%s' holds %d datasets; choose one with --dataset (e.g. --dataset %s)",
                          path, o.count, o.name);
    snprintf(name, cap, "%s", o.name);
    return FPSIM_OK;
}

/* What a stored HDF5 type becomes: float32 (float64 rounded once) or bfloat16 bits. */
static void set_h5_kind(fpsim_tensor2d *out, fpsim_h5_type type)
{
    out->dtype = type == FPSIM_H5_BF16 ? FPSIM_TENSOR_BF16 : FPSIM_TENSOR_F32;
    strcpy(out->source_dtype, type == FPSIM_H5_BF16 ? "bf16" : type == FPSIM_H5_F64 ? "f64" : "f32");
    out->rounded = type == FPSIM_H5_F64;
}

/* peek: everything but the data (fpsim_tensor_peek). */
static fpsim_status read_hdf5(fpsim_tensor2d *out, const fpsim_tensor_source *src, int peek)
{
    char only[256];
    const char *dataset = src->dataset;
    if (!dataset) {
        fpsim_status st = find_only_dataset(only, sizeof only, src->path);
        if (st) return st;
        dataset = only;
    }
    fpsim_h5_matrix m = {FPSIM_H5_F32, 0, 0, NULL};
    fpsim_status st = peek ? fpsim_h5_matrix_info(&m.type, &m.rows, &m.cols, src->path, dataset)
                           : fpsim_h5_read_matrix(&m, src->path, dataset);
    if (st) return st;
    if (m.rows == 0 || m.cols == 0) {
        free(m.data);
        return fpsim_fail(FPSIM_ESHAPE, "dataset '%s' in '%s' has shape %zux%zu (empty)", dataset,
                          src->path, m.rows, m.cols);
    }
    out->rows = m.rows;
    out->cols = m.cols;
    strcpy(out->format, "hdf5");
    snprintf(out->dataset, sizeof out->dataset, "%s", dataset);
    set_h5_kind(out, m.type);
    if (peek) return FPSIM_OK;
    if (m.type == FPSIM_H5_BF16) {
        out->bf16 = m.data;
    } else if (m.type == FPSIM_H5_F64) {
        out->f32 = f64_to_f32(m.data, m.rows * m.cols);
        free(m.data);
        if (!out->f32) return fpsim_fail(FPSIM_ENOMEM, "out of memory for a %zux%zu tensor", m.rows, m.cols);
    } else {
        out->f32 = m.data;
    }
    return FPSIM_OK;
}

/* ---- .npy ---- */

/* What a .npy header's array becomes (2-D; float32, float64 rounded once, or 2-byte data as
 * bfloat16 bits when the user says --dtype bf16): rows, cols, dtype, source_dtype, rounded, format. */
static fpsim_status npy_kind(fpsim_tensor2d *out, const fpsim_npy_info *info, const char *path,
                             const fpsim_tensor_dtype *dtype)
{
    const char *descr = fpsim_npy_dtype_descr(info->dtype);
    if (info->ndim != 2)
        return fpsim_fail(FPSIM_ESHAPE, "'%s' holds a %d-D array; a 2-D tensor is needed", path, info->ndim);
    size_t rows = info->shape[0], cols = info->shape[1], bytes;
    fpsim_status st = byte_count(&bytes, rows, cols, 1, path);
    if (st) return st;
    int want_bf16 = dtype && *dtype == FPSIM_TENSOR_BF16;
    switch (info->dtype) {
    case FPSIM_NPY_F32:
    case FPSIM_NPY_F64:
        if (want_bf16) return fpsim_fail(FPSIM_EINVAL, "--dtype bf16, but '%s' holds '%s' data", path, descr);
        out->dtype = FPSIM_TENSOR_F32;
        out->rounded = info->dtype == FPSIM_NPY_F64;
        strcpy(out->source_dtype, out->rounded ? "f64" : "f32");
        break;
    case FPSIM_NPY_V2:
    case FPSIM_NPY_U16:
        if (!want_bf16)
            return fpsim_fail(FPSIM_EFORMAT,
                              "'%s' holds 2-byte '%s' data; if it is bfloat16 (ml_dtypes saves it as '<V2') pass --dtype bf16",
                              path, descr);
        out->dtype = FPSIM_TENSOR_BF16;
        strcpy(out->source_dtype, "bf16");
        break;
    default:
        return fpsim_fail(FPSIM_EFORMAT, "'%s' has dtype '%s'; fpsim reads float32 ('<f4'), float64 ('<f8') or bfloat16",
                          path, descr);
    }
    out->rows = rows;
    out->cols = cols;
    strcpy(out->format, "npy");
    return FPSIM_OK;
}

/* dtype: the user's --dtype (NULL if not given): "bf16" admits 2-byte data as bfloat16 bits.
 * peek: everything but the data (fpsim_tensor_peek). */
static fpsim_status read_npy(fpsim_tensor2d *out, const char *path, const fpsim_tensor_dtype *dtype, int peek)
{
    fpsim_npy_info info;
    void *data = NULL;
    fpsim_status st = peek ? fpsim_npy_peek(path, &info) : fpsim_npy_load(path, &info, &data);
    /* An element type the npy reader does not know is, for a tensor input, a wrong dtype. */
    if (st == FPSIM_EUNSUPPORTED) st = FPSIM_EFORMAT;
    if (!st) st = npy_kind(out, &info, path, dtype);
    if (st || peek) {
        free(data);
        return st;
    }
    if (info.dtype == FPSIM_NPY_F64) {
        out->f32 = f64_to_f32(data, out->rows * out->cols);
        free(data);
        if (!out->f32) return fpsim_fail(FPSIM_ENOMEM, "out of memory for a %zux%zu tensor", out->rows, out->cols);
    } else if (out->dtype == FPSIM_TENSOR_BF16) {
        out->bf16 = data;
    } else {
        out->f32 = data;
    }
    return FPSIM_OK;
}

/* ---- dispatch ---- */

enum input_kind { INPUT_UNKNOWN, INPUT_NPY, INPUT_HDF5 };

static fpsim_status sniff(enum input_kind *kind, const char *path)
{
    static const unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    static const unsigned char h5_magic[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    unsigned char head[8] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) return fpsim_fail(FPSIM_EIO, "cannot read '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return fpsim_fail(FPSIM_EFORMAT, "'%s' is a directory, not a tensor file", path);
    }
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    *kind = INPUT_UNKNOWN;
    if (got >= 6 && !memcmp(head, npy_magic, 6)) *kind = INPUT_NPY;
    else if (got == 8 && !memcmp(head, h5_magic, 8)) *kind = INPUT_HDF5;
    else {
        /* HDF5 files may start with a user block (signature at 512, 1024, ...): ask HDF5. */
        htri_t is_h5;
        H5E_BEGIN_TRY { is_h5 = H5Fis_hdf5(path); } H5E_END_TRY;
        if (is_h5 > 0) *kind = INPUT_HDF5;
    }
    return FPSIM_OK;
}

/* A raw input's shape checked against its size (a regular file), without reading it. */
static fpsim_status peek_raw(fpsim_tensor2d *out, const char *path, size_t rows, size_t cols, fpsim_tensor_dtype dtype)
{
    size_t bytes = 0;
    fpsim_status st = byte_count(&bytes, rows, cols, dtype == FPSIM_TENSOR_BF16 ? 2 : 4, path);
    if (st) return st;
    const char *tname = dtype == FPSIM_TENSOR_BF16 ? "bf16" : "f32";
    struct stat sb;
    if (stat(path, &sb) != 0) return fpsim_fail(FPSIM_EIO, "cannot read '%s': %s", path, strerror(errno));
    if (S_ISREG(sb.st_mode) && (unsigned long long)sb.st_size < bytes)
        return fpsim_fail(FPSIM_EFORMAT, "'%s' is truncated: %llu bytes, a %zux%zu %s tensor needs %zu", path,
                          (unsigned long long)sb.st_size, rows, cols, tname, bytes);
    out->rows = rows;
    out->cols = cols;
    out->dtype = dtype;
    strcpy(out->format, "raw");
    strcpy(out->source_dtype, tname);
    return FPSIM_OK;
}

/* fpsim_tensor_read, or with peek fpsim_tensor_peek: one dispatch, so both check the same. */
static fpsim_status tensor_load(fpsim_tensor2d *out, const fpsim_tensor_source *src, int peek)
{
    tensor_clear(out);
    if (!src->path || !*src->path) return fpsim_fail(FPSIM_EINVAL, "no input file given");
    fpsim_tensor_dtype dtype = FPSIM_TENSOR_F32;
    if (src->dtype) {
        fpsim_status st = fpsim_tensor_dtype_parse(&dtype, src->dtype);
        if (st) return st;
    }
    enum input_kind kind = INPUT_UNKNOWN;
    fpsim_status st;
    if (src->rows || src->cols) {
        if (src->dataset) return fpsim_fail(FPSIM_EINVAL, "--dataset and --shape exclude each other (HDF5 vs raw input)");
        /* a .npy or HDF5 file read as raw bytes would take its header for data (only regular files
         * are looked at: a pipe's first bytes could not be read twice) */
        struct stat sb;
        if (stat(src->path, &sb) == 0 && S_ISREG(sb.st_mode) && (st = sniff(&kind, src->path))) return st;
        if (kind != INPUT_UNKNOWN)
            return fpsim_fail(FPSIM_EINVAL, "--shape is for raw input; '%s' is a %s file, which gives its own shape",
                              src->path, kind == INPUT_NPY ? ".npy" : "HDF5");
        return peek ? peek_raw(out, src->path, src->rows, src->cols, dtype)
                    : fpsim_tensor_read_raw(out, src->path, src->rows, src->cols, dtype);
    }
    if ((st = sniff(&kind, src->path))) return st;
    if (kind == INPUT_NPY) {
        if (src->dataset) return fpsim_fail(FPSIM_EINVAL, "--dataset given but '%s' is a .npy file", src->path);
        return read_npy(out, src->path, src->dtype ? &dtype : NULL, peek);
    }
    if (kind == INPUT_HDF5) {
        if (src->dtype) return fpsim_fail(FPSIM_EINVAL, "--dtype is for raw and .npy input; HDF5 '%s' says its own type", src->path);
        return read_hdf5(out, src, peek);
    }
    if (fpsim_file_name_has_ext(src->path, ".npy"))
        return fpsim_fail(FPSIM_EFORMAT, "'%s' is not a valid .npy file (no \\x93NUMPY magic)", src->path);
    if (fpsim_file_name_is_hdf5(src->path))
        return fpsim_fail(FPSIM_EFORMAT, "'%s' is not a valid HDF5 file (no signature)", src->path);
    return fpsim_fail(FPSIM_EFORMAT, "'%s' is neither .npy nor HDF5; for raw data give --shape RxC [--dtype f32|bf16]",
                      src->path);
}

fpsim_status fpsim_tensor_read(fpsim_tensor2d *out, const fpsim_tensor_source *src)
{
    return tensor_load(out, src, 0);
}

fpsim_status fpsim_tensor_peek(fpsim_tensor2d *out, const fpsim_tensor_source *src)
{
    return tensor_load(out, src, 1);
}

uint64_t fpsim_tensor_read_bytes(const fpsim_tensor2d *t)
{
    const uint64_t n = (uint64_t)t->rows * (uint64_t)t->cols;
    if (!strcmp(t->source_dtype, "f64")) return n * (8 + 4); /* the stored doubles and their float32 copy */
    return n * (t->dtype == FPSIM_TENSOR_BF16 ? 2 : 4);
}

fpsim_status fpsim_tensor_check_memory(const fpsim_tensor_source *src, double out_bytes_per_element)
{
    fpsim_tensor2d t;
    fpsim_status st = fpsim_tensor_peek(&t, src);
    if (st) return st;
    const double n = (double)t.rows * (double)t.cols;
    const uint64_t read = fpsim_tensor_read_bytes(&t);
    const uint64_t held = (uint64_t)n * (t.dtype == FPSIM_TENSOR_BF16 ? 2u : 4u);
    const uint64_t outputs = (uint64_t)(out_bytes_per_element * n);
    const uint64_t need = read > held + outputs ? read : held + outputs;
    char what[4400], in[32], out[32], detail[96];
    const char *type = !strcmp(t.source_dtype, "f64")    ? "float64"
                       : !strcmp(t.source_dtype, "bf16") ? "bfloat16"
                                                         : "float32";
    snprintf(what, sizeof what, "input '%s'%s%s%s (%zux%zu %s)", src->path, t.dataset[0] ? " dataset '" : "",
             t.dataset, t.dataset[0] ? "'" : "", t.rows, t.cols, type);
    fpsim_mem_format(in, sizeof in, read);
    fpsim_mem_format(out, sizeof out, outputs);
    snprintf(detail, sizeof detail, " (input %s, outputs %s)", in, out);
    return fpsim_mem_check(need, what, detail);
}
