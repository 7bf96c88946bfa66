/* h5_write.c: datasets (any rank, optional gzip) and attributes. */
#include "fpsim_h5.h"

#include <string.h>

#include "h5_internal.h"

hid_t fpsim_h5_file_type(fpsim_h5_type type)
{
    switch (type) {
    case FPSIM_H5_F32: return H5T_IEEE_F32LE;
    case FPSIM_H5_F64: return H5T_IEEE_F64LE;
    case FPSIM_H5_U8: return H5T_STD_U8LE;
    case FPSIM_H5_U16: return H5T_STD_U16LE;
    case FPSIM_H5_I32: return H5T_STD_I32LE;
    case FPSIM_H5_U32: return H5T_STD_U32LE;
    case FPSIM_H5_I64: return H5T_STD_I64LE;
    case FPSIM_H5_U64: return H5T_STD_U64LE;
    default: return H5I_INVALID_HID;
    }
}

hid_t fpsim_h5_mem_type(fpsim_h5_type type)
{
    switch (type) {
    case FPSIM_H5_F32: return H5T_NATIVE_FLOAT;
    case FPSIM_H5_F64: return H5T_NATIVE_DOUBLE;
    case FPSIM_H5_U8: return H5T_NATIVE_UINT8;
    case FPSIM_H5_U16: return H5T_NATIVE_UINT16;
    case FPSIM_H5_I32: return H5T_NATIVE_INT32;
    case FPSIM_H5_U32: return H5T_NATIVE_UINT32;
    case FPSIM_H5_I64: return H5T_NATIVE_INT64;
    case FPSIM_H5_U64: return H5T_NATIVE_UINT64;
    default: return H5I_INVALID_HID;
    }
}

/* Chunk shape for compressed datasets: the whole dataset, halving the largest dimension until a
 * chunk is at most 1 MiB (HDF5 caps a chunk at 4 GiB; small chunks keep partial reads cheap). */
static void chunk_dims(hsize_t *chunk, const hsize_t *dims, int rank, size_t elem_size)
{
    hsize_t bytes = elem_size;
    for (int d = 0; d < rank; d++) {
        chunk[d] = dims[d] ? dims[d] : 1;
        bytes *= chunk[d];
    }
    while (bytes > ((hsize_t)1 << 20)) {
        int big = 0;
        for (int d = 1; d < rank; d++)
            if (chunk[d] > chunk[big]) big = d;
        if (chunk[big] == 1) break;
        bytes /= chunk[big];
        chunk[big] = (chunk[big] + 1) / 2;
        bytes *= chunk[big];
    }
}

static fpsim_status write_quietly(hid_t loc, const char *name, fpsim_h5_type type, int rank,
                                  const size_t *dims, const void *data, int gzip_level)
{
    hsize_t hdims[32], chunk[32];
    hsize_t count = 1;
    for (int d = 0; d < rank; d++) {
        hdims[d] = dims[d];
        count *= dims[d];
    }
    hid_t space = rank ? H5Screate_simple(rank, hdims, NULL) : H5Screate(H5S_SCALAR);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t dset = H5I_INVALID_HID;
    fpsim_status st = FPSIM_OK;
    if (space < 0 || dcpl < 0) {
        st = fpsim_fail(FPSIM_ENOMEM, "cannot create HDF5 dataspace for '%s'", name);
        goto done;
    }
    if (gzip_level > 0 && rank > 0 && count > 0) {
        chunk_dims(chunk, hdims, rank, fpsim_h5_type_size(type));
        if (H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 ||
            H5Pset_deflate(dcpl, (unsigned)gzip_level) < 0) {
            st = fpsim_fail(FPSIM_EUNSUPPORTED, "cannot set gzip compression on '%s'", name);
            goto done;
        }
    }
    dset = H5Dcreate2(loc, name, fpsim_h5_file_type(type), space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    if (dset < 0) {
        st = fpsim_fail(FPSIM_EIO, "cannot create HDF5 dataset '%s' (exists already?)", name);
        goto done;
    }
    if (count > 0 && H5Dwrite(dset, fpsim_h5_mem_type(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        st = fpsim_fail(FPSIM_EIO, "cannot write HDF5 dataset '%s' (disk full?)", name);
done:
    if (dset >= 0) H5Dclose(dset);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    return st;
}

fpsim_status fpsim_h5_write(hid_t loc, const char *name, fpsim_h5_type type, int rank,
                            const size_t *dims, const void *data, int gzip_level)
{
    if (fpsim_h5_file_type(type) < 0)
        return fpsim_fail(FPSIM_EINVAL, "dataset '%s': type %s cannot be written", name,
                          fpsim_h5_type_name(type));
    if (rank < 0 || rank > 32) return fpsim_fail(FPSIM_EINVAL, "dataset '%s': rank %d out of range", name, rank);
    if (gzip_level < 0 || gzip_level > 9)
        return fpsim_fail(FPSIM_EINVAL, "dataset '%s': gzip level %d out of range [0, 9]", name, gzip_level);
    fpsim_status st;
    H5E_BEGIN_TRY { st = write_quietly(loc, name, type, rank, dims, data, gzip_level); } H5E_END_TRY;
    return st;
}

/* Write attribute `name` of `type` over `space` on obj, replacing an existing one. */
static fpsim_status attr_write(hid_t obj, const char *name, hid_t file_type, hid_t mem_type,
                               hid_t space, const void *value)
{
    fpsim_status st = FPSIM_OK;
    H5E_BEGIN_TRY {
        if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
        hid_t attr = H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
        if (attr < 0) st = fpsim_fail(FPSIM_EIO, "cannot create HDF5 attribute '%s'", name);
        else {
            if (H5Awrite(attr, mem_type, value) < 0)
                st = fpsim_fail(FPSIM_EIO, "cannot write HDF5 attribute '%s'", name);
            H5Aclose(attr);
        }
    } H5E_END_TRY;
    return st;
}

static fpsim_status attr_scalar(hid_t obj, const char *name, hid_t file_type, hid_t mem_type,
                                const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    if (space < 0) return fpsim_fail(FPSIM_ENOMEM, "cannot create dataspace for attribute '%s'", name);
    fpsim_status st = attr_write(obj, name, file_type, mem_type, space, value);
    H5Sclose(space);
    return st;
}

static fpsim_status attr_vector(hid_t obj, const char *name, hid_t file_type, hid_t mem_type,
                                const void *values, size_t n)
{
    hsize_t dim = n;
    hid_t space = H5Screate_simple(1, &dim, NULL);
    if (space < 0) return fpsim_fail(FPSIM_ENOMEM, "cannot create dataspace for attribute '%s'", name);
    fpsim_status st = attr_write(obj, name, file_type, mem_type, space, values);
    H5Sclose(space);
    return st;
}

/* Variable-length UTF-8 strings: h5py returns them as Python str. */
hid_t fpsim_h5_vlen_string_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return t;
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

fpsim_status fpsim_h5_attr_string(hid_t obj, const char *name, const char *value)
{
    hid_t t = fpsim_h5_vlen_string_type();
    if (t < 0) return fpsim_fail(FPSIM_ENOMEM, "cannot create string type for attribute '%s'", name);
    fpsim_status st = attr_scalar(obj, name, t, t, &value);
    H5Tclose(t);
    return st;
}

fpsim_status fpsim_h5_attr_strings(hid_t obj, const char *name, const char *const *values, size_t n)
{
    hid_t t = fpsim_h5_vlen_string_type();
    if (t < 0) return fpsim_fail(FPSIM_ENOMEM, "cannot create string type for attribute '%s'", name);
    fpsim_status st = attr_vector(obj, name, t, t, values, n);
    H5Tclose(t);
    return st;
}

fpsim_status fpsim_h5_attr_double(hid_t obj, const char *name, double value)
{
    return attr_scalar(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

fpsim_status fpsim_h5_attr_int64(hid_t obj, const char *name, int64_t value)
{
    return attr_scalar(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

fpsim_status fpsim_h5_attr_uint64(hid_t obj, const char *name, uint64_t value)
{
    return attr_scalar(obj, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value);
}

fpsim_status fpsim_h5_attr_doubles(hid_t obj, const char *name, const double *values, size_t n)
{
    return attr_vector(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values, n);
}

fpsim_status fpsim_h5_attr_int64s(hid_t obj, const char *name, const int64_t *values, size_t n)
{
    return attr_vector(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, values, n);
}
