/* h5_read.c: reading attributes, and the 2-D float tensors fpsim takes as input. */
#include "fpsim_h5.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "h5_internal.h"

/* ---- attributes ---- */

static hid_t attr_open(hid_t loc, const char *path, const char *name)
{
    hid_t a;
    H5E_BEGIN_TRY { a = H5Aopen_by_name(loc, path, name, H5P_DEFAULT, H5P_DEFAULT); } H5E_END_TRY;
    return a;
}

fpsim_status fpsim_h5_read_attr_string(hid_t loc, const char *path, const char *name, char *out,
                                       size_t cap)
{
    hid_t a = attr_open(loc, path, name);
    if (a < 0) return fpsim_fail(FPSIM_EFORMAT, "no attribute '%s' on '%s'", name, path);
    fpsim_status st = FPSIM_OK;
    H5E_BEGIN_TRY {
        hid_t t = H5Aget_type(a);
        hid_t space = H5Aget_space(a);
        const char *text = NULL; /* the string read, owned by vlen or buf below */
        char *vlen = NULL, *buf = NULL;
        if (t < 0 || H5Tget_class(t) != H5T_STRING) {
            st = fpsim_fail(FPSIM_EFORMAT, "attribute '%s' on '%s' is not a string", name, path);
        } else if (space < 0 || H5Sget_simple_extent_npoints(space) != 1) {
            /* read as one string, an array would overrun the buffer */
            st = fpsim_fail(FPSIM_EFORMAT, "attribute '%s' on '%s' is not a single string", name, path);
        } else if (H5Tis_variable_str(t) > 0) {
            hid_t mt = fpsim_h5_vlen_string_type();
            if (H5Aread(a, mt, &vlen) < 0 || !vlen)
                st = fpsim_fail(FPSIM_EFORMAT, "cannot read attribute '%s' on '%s'", name, path);
            text = vlen;
            H5Tclose(mt);
        } else {
            /* size + 1 in memory, null-terminated: a stored null-padded (or space-padded) string
             * of exactly `size` characters keeps its last one */
            size_t size = H5Tget_size(t);
            buf = calloc(size + 2, 1);
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, size + 1);
            if (!buf) st = fpsim_fail(FPSIM_ENOMEM, "out of memory reading attribute '%s'", name);
            else if (H5Aread(a, mt, buf) < 0)
                st = fpsim_fail(FPSIM_EFORMAT, "cannot read attribute '%s' on '%s'", name, path);
            text = buf;
            H5Tclose(mt);
        }
        if (!st && strlen(text) >= cap)
            st = fpsim_fail(FPSIM_EFORMAT, "attribute '%s' on '%s' is longer than %zu characters", name,
                            path, cap - 1);
        if (!st) memcpy(out, text, strlen(text) + 1);
        if (vlen) H5free_memory(vlen);
        free(buf);
        if (space >= 0) H5Sclose(space);
        if (t >= 0) H5Tclose(t);
        H5Aclose(a);
    } H5E_END_TRY;
    return st;
}

static fpsim_status read_attr_number(hid_t loc, const char *path, const char *name, hid_t mem_type,
                                     void *out)
{
    hid_t a = attr_open(loc, path, name);
    if (a < 0) return fpsim_fail(FPSIM_EFORMAT, "no attribute '%s' on '%s'", name, path);
    fpsim_status st = FPSIM_OK;
    H5E_BEGIN_TRY {
        hid_t t = H5Aget_type(a);
        hid_t space = H5Aget_space(a);
        H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
        if (cls != H5T_INTEGER && cls != H5T_FLOAT)
            st = fpsim_fail(FPSIM_EFORMAT, "attribute '%s' on '%s' is not a number", name, path);
        else if (H5Sget_simple_extent_npoints(space) != 1)
            st = fpsim_fail(FPSIM_EFORMAT, "attribute '%s' on '%s' is not a scalar", name, path);
        else if (H5Aread(a, mem_type, out) < 0)
            st = fpsim_fail(FPSIM_EFORMAT, "cannot read attribute '%s' on '%s'", name, path);
        if (space >= 0) H5Sclose(space);
        if (t >= 0) H5Tclose(t);
        H5Aclose(a);
    } H5E_END_TRY;
    return st;
}

fpsim_status fpsim_h5_read_attr_double(hid_t loc, const char *path, const char *name, double *out)
{
    return read_attr_number(loc, path, name, H5T_NATIVE_DOUBLE, out);
}

fpsim_status fpsim_h5_read_attr_int64(hid_t loc, const char *path, const char *name, int64_t *out)
{
    return read_attr_number(loc, path, name, H5T_NATIVE_INT64, out);
}

/* ---- links that lead nowhere ---- */

enum { CAUSE_CAP = 160 };

/* The innermost message of HDF5's error stack (the cause, e.g. "bad version number for hyperslab
 * selection"; walked upward, entry 0 is the innermost), before any other API call clears it. */
static herr_t note_innermost(unsigned n, const H5E_error2_t *err, void *data)
{
    if (n == 0 && err->desc) snprintf(data, CAUSE_CAP, "%s", err->desc);
    return 0;
}

fpsim_status fpsim_h5_link_problem(hid_t loc, const char *name, const char *path)
{
    H5L_info_t info;
    if (H5Lget_info(loc, name, &info, H5P_DEFAULT) < 0)
        return fpsim_fail(FPSIM_EFORMAT, "cannot read the link '%s' in '%s' (damaged file)", name, path);
    char val[1024] = "";
    if (info.type == H5L_TYPE_SOFT) {
        if (info.u.val_size > sizeof val || H5Lget_val(loc, name, val, sizeof val, H5P_DEFAULT) < 0)
            return fpsim_fail(FPSIM_EFORMAT, "'%s' in '%s' is a soft link that cannot be read (damaged file)", name,
                              path);
        return fpsim_fail(FPSIM_EFORMAT,
                          "'%s' in '%s' is a soft link to '%.256s', which leads to no object (dangling link)", name,
                          path, val);
    }
    if (info.type == H5L_TYPE_EXTERNAL) {
        const char *file = NULL, *obj = NULL;
        unsigned flags;
        if (info.u.val_size > sizeof val || H5Lget_val(loc, name, val, sizeof val, H5P_DEFAULT) < 0 ||
            H5Lunpack_elink_val(val, info.u.val_size, &flags, &file, &obj) < 0)
            return fpsim_fail(FPSIM_EFORMAT, "'%s' in '%s' is an external link that cannot be read (damaged file)",
                              name, path);
        return fpsim_fail(FPSIM_EFORMAT, "'%s' in '%s' is an external link to '%.256s' in file '%.256s', which cannot be "
                                         "opened (missing or damaged file)",
                          name, path, obj, file);
    }
    /* a hard link to an object the library cannot open: say the library's own reason */
    char cause[CAUSE_CAP] = "";
    hid_t obj = H5Oopen(loc, name, H5P_DEFAULT);
    if (obj >= 0) H5Oclose(obj);
    else H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, note_innermost, cause);
    unsigned major = 0, minor = 0, release = 0;
    H5get_libversion(&major, &minor, &release);
    return fpsim_fail(FPSIM_EFORMAT, "'%s' in '%s' cannot be opened%s%s (a damaged object, or one that this HDF5 "
                                     "library, %u.%u.%u, cannot read)",
                      name, path, cause[0] ? ": " : "", cause, major, minor, release);
}

/* ---- 2-D float matrices ---- */

/* Collect the root's link names into a short list for "no dataset X; it has: a, b, c". */
struct name_list {
    char text[512];
    size_t len;
};

static herr_t collect_name(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
    (void)group;
    (void)info;
    struct name_list *list = data;
    int n = snprintf(list->text + list->len, sizeof list->text - list->len, "%s%s",
                     list->len ? ", " : "", name);
    if (n < 0 || (size_t)n >= sizeof list->text - list->len) return 1; /* full: stop */
    list->len += (size_t)n;
    return 0;
}

/* How a stored float type is to be read: its fpsim type, or FPSIM_H5_TYPE_COUNT if unsupported
 * (then `why` names the stored type). IEEE layouts are checked field by field, so that e.g. a
 * 16-bit IEEE half is not taken for bfloat16. */
static fpsim_h5_type classify(hid_t dset, hid_t t, char *why, size_t cap)
{
    H5T_class_t cls = H5Tget_class(t);
    size_t size = H5Tget_size(t);
    if (cls == H5T_FLOAT) {
        size_t spos, epos, esize, mpos, msize;
        if (H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize) < 0) {
            snprintf(why, cap, "an unreadable float type");
            return FPSIM_H5_TYPE_COUNT;
        }
        if (size == 4 && esize == 8 && msize == 23 && spos == 31) return FPSIM_H5_F32;
        if (size == 8 && esize == 11 && msize == 52 && spos == 63) return FPSIM_H5_F64;
        if (size == 2 && esize == 8 && msize == 7 && spos == 15) return FPSIM_H5_BF16;
        if (size == 2 && esize == 5 && msize == 10) snprintf(why, cap, "dtype float16");
        else snprintf(why, cap, "a %zu-byte float type (%zu exponent, %zu mantissa bits)", size, esize, msize);
        return FPSIM_H5_TYPE_COUNT;
    }
    if (cls == H5T_INTEGER) {
        /* bfloat16 saved as its bits (numpy has no bfloat16): uint16 tagged dtype="bfloat16". */
        char tag[32] = "";
        if (size == 2 && H5Tget_sign(t) == H5T_SGN_NONE &&
            fpsim_h5_read_attr_string(dset, ".", "dtype", tag, sizeof tag) == FPSIM_OK &&
            (!strcmp(tag, "bfloat16") || !strcmp(tag, "bf16")))
            return FPSIM_H5_BF16;
        snprintf(why, cap, "integer dtype (%s%zu)", H5Tget_sign(t) == H5T_SGN_NONE ? "uint" : "int", 8 * size);
        return FPSIM_H5_TYPE_COUNT;
    }
    static const char *const class_names[] = {"integer", "float", "time", "string", "bitfield",
                                               "opaque", "compound", "reference", "enum",
                                               "variable-length", "array"};
    snprintf(why, cap, "dtype class %s", (cls >= 0 && cls < 11) ? class_names[cls] : "unknown");
    return FPSIM_H5_TYPE_COUNT;
}

/* Storage that cannot belong to this shape is refused before H5Dread and before fpsim allocates
 * a buffer for the claimed shape: the HDF5 C library
 * (1.10.8 here) trusts it and reads out of bounds (found by tests/robust: a chunk of 6x4104
 * in a 6x8 dataset overflowed a heap buffer inside H5Dread). Valid files always pass: HDF5
 * itself refuses to create a chunk larger than a fixed dimension, and compact data holds
 * exactly the dataset's bytes. */
static fpsim_status check_layout(hid_t dset, hid_t space, hid_t t, const hsize_t dims[2], const char *name,
                                 const char *path)
{
    fpsim_status st = FPSIM_OK;
    hid_t dcpl = H5Dget_create_plist(dset);
    if (dcpl < 0) return fpsim_fail(FPSIM_EFORMAT, "dataset '%s' in '%s' has unreadable storage properties", name, path);
    const H5D_layout_t layout = H5Pget_layout(dcpl);
    if (layout == H5D_CHUNKED) {
        hsize_t chunk[32], maxdims[2];
        const int crank = H5Pget_chunk(dcpl, 32, chunk);
        if (crank != 2 || H5Sget_simple_extent_dims(space, NULL, maxdims) != 2) {
            st = fpsim_fail(FPSIM_EFORMAT, "dataset '%s' in '%s' has a damaged chunk layout", name, path);
        } else {
            for (int d = 0; d < 2 && !st; d++)
                if (chunk[d] == 0 || (maxdims[d] != H5S_UNLIMITED && chunk[d] > maxdims[d]))
                    st = fpsim_fail(FPSIM_EFORMAT,
                                    "dataset '%s' in '%s' has chunks of %llux%llu for a %llux%llu dataset (damaged file)",
                                    name, path, (unsigned long long)chunk[0], (unsigned long long)chunk[1],
                                    (unsigned long long)dims[0], (unsigned long long)dims[1]);
        }
    } else if (layout == H5D_COMPACT) {
        const size_t stored = H5Tget_size(t);
        const hsize_t need = dims[0] * dims[1] * (hsize_t)stored;
        if (stored == 0 || (dims[1] && dims[0] > (hsize_t)-1 / dims[1] / stored) || H5Dget_storage_size(dset) != need)
            st = fpsim_fail(FPSIM_EFORMAT, "dataset '%s' in '%s': compact storage does not match its %llux%llu shape "
                                           "(damaged file)",
                            name, path, (unsigned long long)dims[0], (unsigned long long)dims[1]);
    } else if (layout == H5D_CONTIGUOUS && H5Pget_external_count(dcpl) != 0) {
        /* External storage: the data lives in raw files named by the dataset, anywhere on the
         * machine (h5py: create_dataset(..., external=[("/etc/shadow", 0, n)])). A tensor file
         * must not make fpsim read other files, so it is refused, not followed. */
        st = fpsim_fail(FPSIM_EFORMAT, "dataset '%s' in '%s' keeps its data in external files; external storage is "
                                       "not read (store the data in the file)",
                        name, path);
    } else if (layout == H5D_CONTIGUOUS) {
        /* Allocated contiguous storage holds exactly the dataset's bytes (0: never written,
         * HDF5 reads the fill value). A damaged shape claiming more is refused before fpsim
         * allocates a buffer for it. */
        const hsize_t have = H5Dget_storage_size(dset);
        const size_t stored = H5Tget_size(t);
        if (have != 0 && stored != 0 &&
            ((dims[1] && dims[0] > (hsize_t)-1 / dims[1] / stored) || have != dims[0] * dims[1] * (hsize_t)stored))
            st = fpsim_fail(FPSIM_EFORMAT, "dataset '%s' in '%s' stores %llu bytes, not the %llux%llu of its shape "
                                           "(damaged file)",
                            name, path, (unsigned long long)have, (unsigned long long)dims[0],
                            (unsigned long long)dims[1]);
    } else if (layout == H5D_VIRTUAL) {
        /* A virtual dataset maps other files' datasets; a missing source reads as fill values,
         * silently. Refused for the same reason as external storage. */
        st = fpsim_fail(FPSIM_EFORMAT, "dataset '%s' in '%s' is a virtual dataset (its data lives in other files), "
                                       "which fpsim does not read",
                        name, path);
    } else {
        st = fpsim_fail(FPSIM_EFORMAT, "dataset '%s' in '%s' has an unreadable storage layout", name, path);
    }
    H5Pclose(dcpl);
    return st;
}

/* A dataset that passed every check of fpsim_h5_read_matrix, open, not read yet. */
typedef struct checked_matrix {
    hid_t dset, t;
    fpsim_h5_type type;
    hsize_t dims[2];
} checked_matrix;

static void close_matrix(checked_matrix *m)
{
    if (m->t >= 0) H5Tclose(m->t);
    if (m->dset >= 0) H5Dclose(m->dset);
    m->t = m->dset = H5I_INVALID_HID;
}

/* Open dataset `name` of `file` and check it: a 2-D float dataset whose storage fits its shape. */
static fpsim_status open_matrix(checked_matrix *m, hid_t file, const char *path, const char *name)
{
    fpsim_status st = FPSIM_OK;
    hid_t space = H5I_INVALID_HID;
    m->dset = m->t = H5I_INVALID_HID;

    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
        struct name_list list = {.text = "", .len = 0};
        hsize_t idx = 0;
        H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, &idx, collect_name, &list);
        return fpsim_fail(FPSIM_EFORMAT, "'%s' has no dataset '%s' (root holds: %s)", path, name,
                          list.len ? list.text : "nothing");
    }
    m->dset = H5Dopen2(file, name, H5P_DEFAULT);
    if (m->dset < 0) {
        /* the link is there: another kind of object, or why it leads to none (dangling link,
         * damaged object). H5Oopen + H5Iget_type: the same in HDF5 1.10 and 1.12+. */
        hid_t obj = H5Oopen(file, name, H5P_DEFAULT);
        const H5I_type_t kind = obj >= 0 ? H5Iget_type(obj) : H5I_BADID;
        if (obj >= 0) H5Oclose(obj);
        if (kind != H5I_BADID && kind != H5I_DATASET)
            return fpsim_fail(FPSIM_EFORMAT, "'%s' in '%s' is not a dataset", name, path);
        return fpsim_h5_link_problem(file, name, path);
    }

    space = H5Dget_space(m->dset);
    int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    hsize_t dims[32];
    if (rank < 0 || rank > 32) {
        st = fpsim_fail(FPSIM_EFORMAT, "dataset '%s' in '%s' has an unreadable shape", name, path);
        goto done;
    }
    H5Sget_simple_extent_dims(space, dims, NULL);
    if (rank != 2) {
        st = fpsim_fail(FPSIM_ESHAPE, "dataset '%s' in '%s' has rank %d; a 2-D tensor is needed", name, path, rank);
        goto done;
    }

    m->t = H5Dget_type(m->dset);
    char why[96] = "";
    m->type = m->t >= 0 ? classify(m->dset, m->t, why, sizeof why) : FPSIM_H5_TYPE_COUNT;
    if (m->type == FPSIM_H5_TYPE_COUNT) {
        st = fpsim_fail(FPSIM_EFORMAT, "dataset '%s' in '%s' has %s; fpsim reads float32, float64 or bfloat16",
                        name, path, why[0] ? why : "an unknown type");
        goto done;
    }
    if ((st = check_layout(m->dset, space, m->t, dims, name, path))) goto done;
    if (dims[1] && dims[0] > SIZE_MAX / fpsim_h5_type_size(m->type) / dims[1]) {
        st = fpsim_fail(FPSIM_ESHAPE, "dataset '%s' in '%s' is too large", name, path);
        goto done;
    }
    m->dims[0] = dims[0];
    m->dims[1] = dims[1];
done:
    if (space >= 0) H5Sclose(space);
    if (st) close_matrix(m);
    return st;
}

static fpsim_status read_matrix(fpsim_h5_matrix *out, hid_t file, const char *path, const char *name)
{
    checked_matrix m;
    fpsim_status st = open_matrix(&m, file, path, name);
    if (st) return st;
    const size_t esize = fpsim_h5_type_size(m.type);
    const size_t count = (size_t)m.dims[0] * (size_t)m.dims[1];
    void *data = malloc(count ? count * esize : 1);
    hid_t mt = H5I_INVALID_HID;
    if (!data) {
        st = fpsim_fail(FPSIM_ENOMEM, "out of memory for dataset '%s' (%zu elements)", name, count);
        goto done;
    }
    /* Memory types equal to the stored layout in native byte order: no value conversion.
     * bfloat16 as float: the stored type itself in little-endian order (its bits unchanged);
     * as tagged uint16: native uint16. */
    if (m.type == FPSIM_H5_BF16 && H5Tget_class(m.t) == H5T_FLOAT) {
        mt = H5Tcopy(m.t);
        H5Tset_order(mt, H5T_ORDER_LE);
    } else {
        mt = H5Tcopy(m.type == FPSIM_H5_BF16 ? H5T_NATIVE_UINT16 : fpsim_h5_mem_type(m.type));
    }
    if (count && H5Dread(m.dset, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
        free(data);
        st = fpsim_fail(FPSIM_EFORMAT, "cannot read dataset '%s' in '%s' (truncated or damaged file)", name, path);
        goto done;
    }
    out->type = m.type;
    out->rows = (size_t)m.dims[0];
    out->cols = (size_t)m.dims[1];
    out->data = data;
done:
    if (mt >= 0) H5Tclose(mt);
    close_matrix(&m);
    return st;
}

fpsim_status fpsim_h5_read_matrix(fpsim_h5_matrix *out, const char *path, const char *dataset)
{
    out->data = NULL;
    out->rows = out->cols = 0;
    hid_t file;
    fpsim_status st = fpsim_h5_open_read(&file, path);
    if (st) return st;
    H5E_BEGIN_TRY { st = read_matrix(out, file, path, dataset); } H5E_END_TRY;
    fpsim_h5_close_read(file);
    return st;
}

fpsim_status fpsim_h5_matrix_info(fpsim_h5_type *type, size_t *rows, size_t *cols, const char *path,
                                  const char *dataset)
{
    hid_t file;
    fpsim_status st = fpsim_h5_open_read(&file, path);
    if (st) return st;
    checked_matrix m;
    H5E_BEGIN_TRY {
        st = open_matrix(&m, file, path, dataset);
        if (!st) close_matrix(&m);
    } H5E_END_TRY;
    fpsim_h5_close_read(file);
    if (st) return st;
    *type = m.type;
    *rows = (size_t)m.dims[0];
    *cols = (size_t)m.dims[1];
    return FPSIM_OK;
}
