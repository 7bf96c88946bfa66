/* capture_load.c: read and validate a PyTorch capture file (schema: docs/model.md, "Capture"). */
#include "fpsim_capture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_h5.h"

/* Check that dataset `name` exists with exactly `rank` dims `want`; returns the open dataset. */
static fpsim_status dataset_open(hid_t *out, hid_t file, const char *path, const char *name,
                                 int rank, const hsize_t *want) {
    hid_t d = -1;
    H5E_BEGIN_TRY { d = H5Dopen2(file, name, H5P_DEFAULT); } H5E_END_TRY;
    if (d < 0) return fpsim_fail(FPSIM_EFORMAT, "%s: capture has no dataset '%s'", path, name);
    hid_t sp = H5Dget_space(d);
    hsize_t dims[8] = {0};
    int r = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    if (r >= 0 && r <= 8) H5Sget_simple_extent_dims(sp, dims, NULL);
    if (sp >= 0) H5Sclose(sp);
    int same = r == rank;
    for (int i = 0; same && i < rank; i++) same = dims[i] == want[i];
    if (!same) {
        char got[128] = "", exp[128] = "";
        for (int i = 0; i < r && i < 8; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%llu", i ? "," : "",
                     (unsigned long long)dims[i]);
        for (int i = 0; i < rank; i++)
            snprintf(exp + strlen(exp), sizeof exp - strlen(exp), "%s%llu", i ? "," : "",
                     (unsigned long long)want[i]);
        H5Dclose(d);
        return fpsim_fail(FPSIM_ESHAPE, "%s: dataset '%s' has shape (%s), expected (%s)", path,
                          name, got, exp);
    }
    *out = d;
    return FPSIM_OK;
}

/* Read a float dataset (float32 or float64 in the file) as double, all values finite. */
static fpsim_status read_doubles(double *dst, hid_t file, const char *path, const char *name,
                                 int rank, const hsize_t *want) {
    hid_t d = -1;
    fpsim_status st = dataset_open(&d, file, path, name, rank, want);
    if (st) return st;
    hid_t t = H5Dget_type(d);
    int is_float = t >= 0 && H5Tget_class(t) == H5T_FLOAT;
    if (t >= 0) H5Tclose(t);
    herr_t rc = -1;
    if (is_float) H5E_BEGIN_TRY { rc = H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, dst); } H5E_END_TRY;
    H5Dclose(d);
    if (!is_float) return fpsim_fail(FPSIM_EFORMAT, "%s: dataset '%s' is not floating point", path, name);
    if (rc < 0) return fpsim_fail(FPSIM_EFORMAT, "%s: dataset '%s' is unreadable", path, name);
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= (size_t)want[i];
    for (size_t i = 0; i < n; i++)
        if (!isfinite(dst[i]))
            return fpsim_fail(FPSIM_EDATA, "%s: dataset '%s' has a non-finite value at %zu", path,
                              name, i);
    return FPSIM_OK;
}

/* Read an integer dataset as int32 (values converted by HDF5; range checked by the caller). */
static fpsim_status read_ints(int32_t *dst, hid_t file, const char *path, const char *name,
                              const hsize_t *want) {
    hid_t d = -1;
    fpsim_status st = dataset_open(&d, file, path, name, 2, want);
    if (st) return st;
    hid_t t = H5Dget_type(d);
    int is_int = t >= 0 && H5Tget_class(t) == H5T_INTEGER;
    if (t >= 0) H5Tclose(t);
    herr_t rc = -1;
    if (is_int) H5E_BEGIN_TRY { rc = H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, dst); } H5E_END_TRY;
    H5Dclose(d);
    if (!is_int) return fpsim_fail(FPSIM_EFORMAT, "%s: dataset '%s' is not integer", path, name);
    if (rc < 0) return fpsim_fail(FPSIM_EFORMAT, "%s: dataset '%s' is unreadable", path, name);
    return FPSIM_OK;
}

static fpsim_status check_range(const int32_t *x, size_t n, int32_t hi, const char *path,
                                const char *name) {
    for (size_t i = 0; i < n; i++)
        if (x[i] < 0 || x[i] >= hi)
            return fpsim_fail(FPSIM_EDATA, "%s: %s[%zu] = %d is outside [0, %d)", path, name, i,
                              (int)x[i], (int)hi);
    return FPSIM_OK;
}

/* A batch whose loss mask is all zero has no token in the loss: the captured loss is a mean
 * over nothing, and neither replay nor mismatch has anything to compare. */
static fpsim_status check_mask_not_empty(const int32_t *mask, size_t n, const char *path) {
    for (size_t i = 0; i < n; i++)
        if (mask[i]) return FPSIM_OK;
    return fpsim_fail(FPSIM_EDATA, "%s: batch/mask is all zero: no token counts in the loss", path);
}

/* Why a root attribute could not be read: missing, or present with another type than `want`
 * (a schema_version stored as a string is not "no schema_version"). */
static fpsim_status root_attr_error(hid_t file, const char *path, const char *name, const char *want) {
    htri_t exists = -1;
    H5E_BEGIN_TRY { exists = H5Aexists(file, name); } H5E_END_TRY;
    if (exists > 0)
        return fpsim_fail(FPSIM_EFORMAT, "%s: capture root attribute '%s' has the wrong type (%s expected)",
                          path, name, want);
    return fpsim_fail(FPSIM_EFORMAT, "%s: capture has no root attribute '%s'", path, name);
}

/* schema_version: a scalar integer attribute (a float 1.5 would otherwise read as 1). */
static fpsim_status read_schema_version(hid_t file, const char *path, int64_t *version) {
    hid_t a = -1;
    H5E_BEGIN_TRY { a = H5Aopen(file, "schema_version", H5P_DEFAULT); } H5E_END_TRY;
    if (a < 0) return root_attr_error(file, path, "schema_version", "an integer");
    hid_t t = H5Aget_type(a);
    const int is_int = t >= 0 && H5Tget_class(t) == H5T_INTEGER;
    if (t >= 0) H5Tclose(t);
    H5Aclose(a);
    if (!is_int || fpsim_h5_read_attr_int64(file, ".", "schema_version", version))
        return root_attr_error(file, path, "schema_version", "a scalar integer");
    return FPSIM_OK;
}

/* Each parameter tensor's rank and shape under config c, in fpsim_model.h's enum order. */
static const int param_ranks[FPSIM_PARAM_COUNT] = {2, 2, 3, 3, 2, 3, 3, 1, 2};
static void param_shapes(const fpsim_model_config *c, hsize_t shapes[FPSIM_PARAM_COUNT][3]) {
    const hsize_t L = (hsize_t)c->layers, C = (hsize_t)c->d, V = (hsize_t)c->vocab;
    const hsize_t F = (hsize_t)c->ffn, QKV = (hsize_t)fpsim_model_qkv_dim(c);
    const hsize_t s[FPSIM_PARAM_COUNT][3] = {{V, C}, {L, C}, {L, QKV, C}, {L, C, C}, {L, C},
                                             {L, 2 * F, C}, {L, C, F}, {C}, {V, C}};
    memcpy(shapes, s, sizeof s);
}

/* Bytes a loaded capture holds (read_body's arrays and the model), in double so that an absurd
 * spec is still sized, to be refused. */
static double capture_bytes(const fpsim_model_config *c) {
    const double n = (double)fpsim_model_tokens(c), nc = n * c->d;
    const double model = fpsim_model_bytes(c);                     /* params, grads, m, v, rope */
    const double arrays = n * 13.0                                  /* tokens, targets, mask, mask32 */
                          + 8.0 * (nc * (c->layers + 2.0) + n * c->vocab) /* embed, blocks, norm, logits */
                          + model / 4.0;                            /* the captured gradients */
    return model + arrays;
}

static fpsim_status read_header(fpsim_capture *cap, hid_t file, const char *path) {
    char kind[64] = "";
    int64_t version = 0;
    fpsim_status st = fpsim_h5_read_attr_string(file, ".", "kind", kind, sizeof kind);
    if (st) {
        htri_t exists = -1;
        H5E_BEGIN_TRY { exists = H5Aexists(file, "kind"); } H5E_END_TRY;
        if (exists > 0) return root_attr_error(file, path, "kind", "a string");
        return fpsim_fail(st, "%s: not an fpsim capture (no root attribute 'kind')", path);
    }
    if (strcmp(kind, FPSIM_CAPTURE_KIND) != 0)
        return fpsim_fail(FPSIM_EFORMAT, "%s: kind is '%s', expected '%s'", path, kind,
                          FPSIM_CAPTURE_KIND);
    if ((st = read_schema_version(file, path, &version))) return st;
    if (version != FPSIM_CAPTURE_SCHEMA_VERSION)
        return fpsim_fail(FPSIM_EUNSUPPORTED, "%s: capture schema_version %lld is not supported "
                          "(this fpsim reads version %d)", path, (long long)version,
                          FPSIM_CAPTURE_SCHEMA_VERSION);
    if ((st = fpsim_h5_read_attr_string(file, ".", "model", cap->model_spec,
                                        sizeof cap->model_spec)))
        return root_attr_error(file, path, "model", "a string");
    fpsim_model_config cfg;
    if ((st = fpsim_model_config_parse(&cfg, cap->model_spec, 0))) {
        char why[256];
        snprintf(why, sizeof why, "%s", fpsim_last_error());
        return fpsim_fail(st, "%s: capture model spec: %s", path, why);
    }
    /* The parameter datasets must have the spec's shapes before the model's memory is taken: a
     * spec the data does not match (d=65536 over small tensors) is a shape error, not an
     * attempt at a huge allocation. */
    hsize_t shapes[FPSIM_PARAM_COUNT][3];
    param_shapes(&cfg, shapes);
    for (int p = 0; p < FPSIM_PARAM_COUNT; p++) {
        char name[64];
        hid_t d = -1;
        snprintf(name, sizeof name, "params/%s", fpsim_param_name(p));
        if ((st = dataset_open(&d, file, path, name, param_ranks[p], shapes[p]))) return st;
        H5Dclose(d);
    }
    /* Datasets of those shapes can be declared and left unwritten, so a file of a few kB may
     * describe a model of terabytes: what loading holds is checked before any of it is taken. */
    char who[256];
    snprintf(who, sizeof who, "%.200s: loading the capture of ", path);
    if ((st = fpsim_model_check_memory(&cfg, capture_bytes(&cfg), who, cfg.batch, "sequence")))
        return st;
    return fpsim_model_create(&cap->model, &cfg);
}

static fpsim_status read_body(fpsim_capture *cap, hid_t file, const char *path) {
    const fpsim_model_config *c = &cap->model.config;
    hsize_t L = (hsize_t)c->layers, C = (hsize_t)c->d, V = (hsize_t)c->vocab;
    hsize_t N = (hsize_t)fpsim_model_tokens(c), BT[2] = {(hsize_t)c->batch, (hsize_t)c->seq};
    hsize_t shapes[FPSIM_PARAM_COUNT][3];
    param_shapes(c, shapes);
    size_t n = (size_t)N, nc = (size_t)(N * C);
    cap->tokens = malloc(sizeof(int32_t) * n);
    cap->targets = malloc(sizeof(int32_t) * n);
    cap->mask = malloc(n);
    cap->embed = malloc(sizeof(double) * nc);
    cap->block_out = malloc(sizeof(double) * nc * (size_t)L);
    cap->final_norm = malloc(sizeof(double) * nc);
    cap->logits = malloc(sizeof(double) * n * (size_t)V);
    cap->grads = malloc(sizeof(double) * cap->model.num_params);
    int32_t *mask32 = malloc(sizeof(int32_t) * n);
    if (!cap->tokens || !cap->targets || !cap->mask || !cap->embed || !cap->block_out ||
        !cap->final_norm || !cap->logits || !cap->grads || !mask32) {
        free(mask32);
        return fpsim_fail(FPSIM_ENOMEM, "%s: out of memory loading the capture", path);
    }
    fpsim_status st = FPSIM_OK;
    size_t off = 0;
    for (int p = 0; p < FPSIM_PARAM_COUNT && !st; p++) {
        char name[64];
        snprintf(name, sizeof name, "params/%s", fpsim_param_name(p));
        st = read_doubles(cap->model.params_memory + off, file, path, name, param_ranks[p], shapes[p]);
        snprintf(name, sizeof name, "grads/%s", fpsim_param_name(p));
        if (!st) st = read_doubles(cap->grads + off, file, path, name, param_ranks[p], shapes[p]);
        off += cap->model.param_sizes[p];
    }
    const hsize_t nc_dims[2] = {N, C}, lnc_dims[3] = {L, N, C}, nv_dims[2] = {N, V}, one[1] = {1};
    if (!st) st = read_ints(cap->tokens, file, path, "batch/tokens", BT);
    if (!st) st = read_ints(cap->targets, file, path, "batch/targets", BT);
    if (!st) st = read_ints(mask32, file, path, "batch/mask", BT);
    if (!st) st = read_doubles(cap->embed, file, path, "acts/embed", 2, nc_dims);
    if (!st) st = read_doubles(cap->block_out, file, path, "acts/block_out", 3, lnc_dims);
    if (!st) st = read_doubles(cap->final_norm, file, path, "acts/final_norm", 2, nc_dims);
    if (!st) st = read_doubles(cap->logits, file, path, "acts/logits", 2, nv_dims);
    if (!st) st = read_doubles(&cap->loss, file, path, "loss", 1, one);
    if (!st) st = check_range(cap->tokens, n, c->vocab, path, "batch/tokens");
    if (!st) st = check_range(cap->targets, n, c->vocab, path, "batch/targets");
    if (!st) st = check_range(mask32, n, 2, path, "batch/mask");
    if (!st) st = check_mask_not_empty(mask32, n, path);
    for (size_t i = 0; i < n && !st; i++) cap->mask[i] = (uint8_t)mask32[i];
    free(mask32);
    /* Captured weights are float32 (stored as such), so fpsim's FP32 master-weight invariant
     * holds; a float64 file is rejected rather than silently rounded. */
    for (size_t i = 0; i < cap->model.num_params && !st; i++)
        if ((double)(float)cap->model.params_memory[i] != cap->model.params_memory[i])
            st = fpsim_fail(FPSIM_EDATA, "%s: parameter element %zu is not float32", path, i);
    return st;
}

fpsim_status fpsim_capture_load(fpsim_capture *cap, const char *path) {
    memset(cap, 0, sizeof *cap);
    hid_t file;
    fpsim_status st = fpsim_h5_open_read(&file, path);
    if (st) return st;
    st = read_header(cap, file, path);
    if (!st) st = read_body(cap, file, path);
    fpsim_h5_close_read(file);
    if (st) fpsim_capture_free(cap);
    return st;
}

void fpsim_capture_free(fpsim_capture *cap) {
    if (cap->model.params_memory) fpsim_model_free(&cap->model);
    free(cap->tokens), free(cap->targets), free(cap->mask), free(cap->embed);
    free(cap->block_out), free(cap->final_norm), free(cap->logits), free(cap->grads);
    memset(cap, 0, sizeof *cap);
}
