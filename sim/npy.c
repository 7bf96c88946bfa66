/* npy.c: the .npy reader and writer (format description: numpy/lib/format.py, NEP 1). */
#include "fpsim_npy.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fpsim_file.h"

static const struct {
    const char *descr;
    size_t size;
} dtypes[FPSIM_NPY_DTYPE_COUNT] = {
    {"<f4", 4}, {"<f8", 8}, {"<f2", 2}, {"|u1", 1}, {"<u2", 2}, {"<V2", 2}, {"<V1", 1},
};

/* Other spellings of the same types that numpy or ml_dtypes write. */
static const struct {
    const char *descr;
    fpsim_npy_dtype dtype;
} descr_aliases[] = {
    {"<u1", FPSIM_NPY_U8}, {"|V2", FPSIM_NPY_V2}, {"|V1", FPSIM_NPY_V1},
};

const char *fpsim_npy_dtype_descr(fpsim_npy_dtype dtype)
{
    return (int)dtype >= 0 && dtype < FPSIM_NPY_DTYPE_COUNT ? dtypes[dtype].descr : "?";
}

size_t fpsim_npy_dtype_size(fpsim_npy_dtype dtype)
{
    return (int)dtype >= 0 && dtype < FPSIM_NPY_DTYPE_COUNT ? dtypes[dtype].size : 0;
}

/* ---- header parsing: a Python dict literal with three keys ---------------------------------- */

static const char *skip_space(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return p;
}

/* Find the value that follows 'key': (quotes of either kind) in the dict text. */
static const char *find_key(const char *text, const char *key)
{
    char pat1[32], pat2[32];
    snprintf(pat1, sizeof pat1, "'%s'", key);
    snprintf(pat2, sizeof pat2, "\"%s\"", key);
    const char *p = strstr(text, pat1);
    if (!p)
        p = strstr(text, pat2);
    if (!p)
        return NULL;
    p = skip_space(p + strlen(pat1));
    if (*p != ':')
        return NULL;
    return skip_space(p + 1);
}

/* How often 'key' (quotes of either kind) appears in the dict text. */
static int count_key(const char *text, const char *key)
{
    char pat[2][32];
    snprintf(pat[0], sizeof pat[0], "'%s'", key);
    snprintf(pat[1], sizeof pat[1], "\"%s\"", key);
    int n = 0;
    for (int k = 0; k < 2; k++)
        for (const char *p = strstr(text, pat[k]); p; p = strstr(p + 1, pat[k]))
            n++;
    return n;
}

/* The dict is read as numpy's literal_eval would take it, or refused: braces around it, each key
 * once (numpy keeps a repeated key's last value, a first-match search its first), and shape
 * integers as Python writes them (no leading zeros, which Python 3 rejects). */
static fpsim_status check_dict_form(const char *text, const char *name)
{
    const char *p = skip_space(text);
    const char *end = p + strlen(p);
    while (end > p && isspace((unsigned char)end[-1]))
        end--;
    if (*p != '{' || end == p || end[-1] != '}')
        return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header is not a {...} dict", name);
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; k++)
        if (count_key(text, keys[k]) > 1)
            return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header gives '%s' twice", name, keys[k]);
    return FPSIM_OK;
}

static fpsim_status parse_header_text(const char *text, const char *name, fpsim_npy_info *info)
{
    fpsim_status form = check_dict_form(text, name);
    if (form)
        return form;
    /* descr */
    const char *p = find_key(text, "descr");
    if (!p || (*p != '\'' && *p != '"'))
        return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header has no 'descr' string", name);
    const char quote = *p++;
    const char *q = strchr(p, quote);
    if (!q || q - p > 15)
        return fpsim_fail(FPSIM_EFORMAT, "%s: malformed 'descr' in .npy header", name);
    char descr[16];
    memcpy(descr, p, (size_t)(q - p));
    descr[q - p] = '\0';
    int found = -1;
    for (int i = 0; i < FPSIM_NPY_DTYPE_COUNT; i++)
        if (!strcmp(descr, dtypes[i].descr))
            found = i;
    for (size_t i = 0; found < 0 && i < sizeof descr_aliases / sizeof descr_aliases[0]; i++)
        if (!strcmp(descr, descr_aliases[i].descr))
            found = (int)descr_aliases[i].dtype;
    if (found < 0)
        return fpsim_fail(FPSIM_EUNSUPPORTED,
                          "%s: unsupported .npy element type '%s' (supported: <f4 <f8 <f2 |u1 <u2, and <V2/<V1 "
                          "as saved by ml_dtypes)",
                          name, descr);
    info->dtype = (fpsim_npy_dtype)found;
    info->elem_size = dtypes[found].size;

    /* fortran_order */
    p = find_key(text, "fortran_order");
    if (!p)
        return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header has no 'fortran_order'", name);
    if (!strncmp(p, "True", 4))
        return fpsim_fail(FPSIM_EUNSUPPORTED, "%s: Fortran-order .npy arrays are not supported (save with C order)",
                          name);
    if (strncmp(p, "False", 5))
        return fpsim_fail(FPSIM_EFORMAT, "%s: malformed 'fortran_order' in .npy header", name);

    /* shape: a tuple of non-negative integers, "()" for a scalar, "(n,)" for 1-D */
    p = find_key(text, "shape");
    if (!p || *p != '(')
        return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header has no 'shape' tuple", name);
    p = skip_space(p + 1);
    info->ndim = 0;
    info->count = 1;
    while (*p != ')') {
        if (!isdigit((unsigned char)*p) || (*p == '0' && isdigit((unsigned char)p[1])))
            return fpsim_fail(FPSIM_EFORMAT, "%s: malformed 'shape' in .npy header", name);
        if (info->ndim == FPSIM_NPY_MAX_DIMS)
            return fpsim_fail(FPSIM_EUNSUPPORTED, "%s: .npy array has more than %d dimensions", name,
                              FPSIM_NPY_MAX_DIMS);
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        info->shape[info->ndim++] = (size_t)v;
        if (v != 0 && info->count > SIZE_MAX / v / 8)
            return fpsim_fail(FPSIM_EFORMAT, "%s: .npy shape is too large", name);
        info->count *= (size_t)v;
        p = skip_space(end);
        if (*p == ',')
            p = skip_space(p + 1);
        else if (*p != ')')
            return fpsim_fail(FPSIM_EFORMAT, "%s: malformed 'shape' in .npy header", name);
    }
    return FPSIM_OK;
}

fpsim_status fpsim_npy_read_header(FILE *f, const char *name, fpsim_npy_info *info)
{
    unsigned char pre[12];
    if (!name)
        name = "(npy)";
    memset(info, 0, sizeof *info);
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6))
        return fpsim_fail(FPSIM_EFORMAT, "%s: not a .npy file (no \\x93NUMPY magic)", name);
    const int major = pre[6];
    size_t hlen, fixed;
    if (major == 1) {
        if (fread(pre + 8, 1, 2, f) != 2)
            return fpsim_fail(FPSIM_EFORMAT, "%s: truncated .npy header", name);
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
        fixed = 10;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 8, 1, 4, f) != 4)
            return fpsim_fail(FPSIM_EFORMAT, "%s: truncated .npy header", name);
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        fixed = 12;
    } else {
        return fpsim_fail(FPSIM_EUNSUPPORTED, "%s: .npy format version %d.%d is not supported", name, major, pre[7]);
    }
    if (hlen == 0 || hlen > (1u << 24))
        return fpsim_fail(FPSIM_EFORMAT, "%s: implausible .npy header length %zu", name, hlen);
    char *text = malloc(hlen + 1);
    if (!text)
        return fpsim_fail(FPSIM_ENOMEM, "%s: out of memory reading the .npy header", name);
    if (fread(text, 1, hlen, f) != hlen) {
        free(text);
        return fpsim_fail(FPSIM_EFORMAT, "%s: truncated .npy header", name);
    }
    text[hlen] = '\0';
    if (strlen(text) != hlen) {
        free(text);
        return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header contains a NUL byte", name);
    }
    fpsim_status st = parse_header_text(text, name, info);
    free(text);
    info->data_offset = fixed + hlen;
    return st;
}

fpsim_status fpsim_npy_load(const char *path, fpsim_npy_info *info, void **data)
{
    *data = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return fpsim_fail(FPSIM_EIO, "cannot open '%s' for reading", path);
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return fpsim_fail(FPSIM_EFORMAT, "'%s' is a directory, not a .npy file", path);
    }
    fpsim_status st = fpsim_npy_read_header(f, path, info);
    if (st) {
        fclose(f);
        return st;
    }
    const size_t bytes = info->count * info->elem_size;
    /* A header may claim any shape: compare the claim with the bytes the file holds before
     * allocating, so a damaged header is "truncated", not an attempt at a huge allocation. */
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode)) {
        const unsigned long long have = (unsigned long long)sb.st_size > info->data_offset
                                            ? (unsigned long long)sb.st_size - info->data_offset
                                            : 0;
        if (have < bytes) {
            fclose(f);
            return fpsim_fail(FPSIM_EFORMAT, "%s: truncated .npy data: %llu of %zu bytes", path, have, bytes);
        }
    }
    void *buf = bytes ? malloc(bytes) : NULL;
    if (bytes && !buf) {
        fclose(f);
        return fpsim_fail(FPSIM_ENOMEM, "%s: out of memory for %zu bytes of data", path, bytes);
    }
    const size_t got = bytes ? fread(buf, 1, bytes, f) : 0;
    const int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != bytes) {
        free(buf);
        return fpsim_fail(FPSIM_EFORMAT, "%s: truncated .npy data: %zu of %zu bytes", path, got, bytes);
    }
    if (extra) {
        free(buf);
        return fpsim_fail(FPSIM_EFORMAT, "%s: trailing bytes after the .npy data (header says %zu elements)", path,
                          info->count);
    }
    *data = buf;
    return FPSIM_OK;
}

/* The dict text for a header, without padding. */
static int header_dict(char *out, size_t cap, fpsim_npy_dtype dtype, int ndim, const size_t *shape)
{
    int len = snprintf(out, cap, "{'descr': '%s', 'fortran_order': False, 'shape': (", fpsim_npy_dtype_descr(dtype));
    for (int i = 0; i < ndim && len > 0 && (size_t)len < cap; i++)
        len += snprintf(out + len, cap - (size_t)len, "%zu%s", shape[i], (ndim == 1 || i + 1 < ndim) ? ", " : "");
    if (len > 0 && (size_t)len < cap) {
        /* numpy writes "(3,)" and "(2, 3)": drop the space after a lone trailing comma */
        if (ndim == 1)
            len--;
        len += snprintf(out + len, cap - (size_t)len, "), }");
    }
    return len;
}

size_t fpsim_npy_header_bytes(fpsim_npy_dtype dtype, int ndim, const size_t *shape)
{
    char dict[1024];
    const int len = header_dict(dict, sizeof dict, dtype, ndim, shape);
    const size_t fixed = len + 11 <= 65535 ? 10 : 12;
    size_t total = fixed + (size_t)len + 1; /* + newline */
    total = (total + 63) / 64 * 64;
    if (ndim <= 2 && total < 128)
        total = 128;
    return total;
}

fpsim_status fpsim_npy_write_header(FILE *f, fpsim_npy_dtype dtype, int ndim, const size_t *shape)
{
    if ((int)dtype < 0 || dtype >= FPSIM_NPY_DTYPE_COUNT || ndim < 0 || ndim > FPSIM_NPY_MAX_DIMS)
        return fpsim_fail(FPSIM_EINVAL, "npy header: invalid dtype or ndim %d", ndim);
    char dict[1024];
    const int len = header_dict(dict, sizeof dict, dtype, ndim, shape);
    if (len <= 0 || (size_t)len >= sizeof dict)
        return fpsim_fail(FPSIM_EINVAL, "npy header: shape text too long");
    const size_t total = fpsim_npy_header_bytes(dtype, ndim, shape);
    const size_t fixed = total <= 65535 + 10 ? 10 : 12;
    const size_t hlen = total - fixed;
    unsigned char pre[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)(fixed == 10 ? 1 : 2), 0};
    pre[8] = (unsigned char)hlen;
    pre[9] = (unsigned char)(hlen >> 8);
    pre[10] = (unsigned char)(hlen >> 16);
    pre[11] = (unsigned char)(hlen >> 24);
    char text[1200];
    memset(text, ' ', sizeof text);
    memcpy(text, dict, (size_t)len);
    text[hlen - 1] = '\n';
    if (fwrite(pre, 1, fixed, f) != fixed || fwrite(text, 1, hlen, f) != hlen)
        return fpsim_fail(FPSIM_EIO, "cannot write the .npy header");
    return FPSIM_OK;
}

fpsim_status fpsim_npy_save(const char *path, fpsim_npy_dtype dtype, int ndim, const size_t *shape,
                            const void *data)
{
    size_t count = 1;
    for (int i = 0; i < ndim; i++)
        count *= shape[i];
    FILE *f;
    char tmp[4096];
    fpsim_status st = fpsim_file_open_temp(&f, tmp, sizeof tmp, path);
    if (st)
        return st;
    st = fpsim_npy_write_header(f, dtype, ndim, shape);
    const size_t bytes = count * fpsim_npy_dtype_size(dtype);
    if (!st && bytes && fwrite(data, 1, bytes, f) != bytes)
        st = fpsim_fail(FPSIM_EIO, "cannot write '%s'", path);
    if (fclose(f) != 0 && !st)
        st = fpsim_fail(FPSIM_EIO, "cannot write '%s'", path);
    if (st) {
        fpsim_file_discard(tmp);
        return st;
    }
    return fpsim_file_commit(tmp, path);
}
