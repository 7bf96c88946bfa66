/* npy.c: the .npy reader and writer (format description: numpy/lib/format.py, NEP 1). */
#include "fpsim_npy.h"

#include <ctype.h>
#include <errno.h>
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

/* ---- header parsing: a Python dict literal with exactly three keys -------------------------
 *
 * numpy (lib/format.py, _read_array_header) evaluates the header with ast.literal_eval and
 * refuses it unless it is a dict whose keys are exactly {'descr', 'fortran_order', 'shape'}, the
 * shape a tuple of ints and fortran_order a bool. The dict is parsed here by that grammar (the
 * Python literals numpy writes: quoted strings, True/False, a tuple of decimal integers), so that
 * what numpy refuses is refused too: an extra key, a key twice (literal_eval keeps the last value,
 * a first-match search the first), "(16)" (an int in Python, not a tuple: "(16,)" is the 1-tuple),
 * leading zeros (a syntax error in Python 3). */

static const char *skip_space(const char *p)
{
    while (*p && isspace((unsigned char)*p))
        p++;
    return p;
}

/* A quoted string at *p (single or double quotes, no escapes: numpy's descr and keys have none)
 * into out; *p moved past it. 0 if there is none or it does not fit. */
static int take_string(const char **p, char *out, size_t cap)
{
    const char quote = **p;
    if (quote != '\'' && quote != '"')
        return 0;
    const char *start = *p + 1, *q = start;
    while (*q && *q != quote && *q != '\\' && *q != '\n')
        q++;
    if (*q != quote || (size_t)(q - start) >= cap)
        return 0;
    memcpy(out, start, (size_t)(q - start));
    out[q - start] = '\0';
    *p = q + 1;
    return 1;
}

/* The bool literal True or False (a whole word) at *p; *p moved past it. 0 if neither. */
static int take_bool(const char **p, int *value)
{
    static const char *const words[2] = {"False", "True"};
    for (int v = 0; v < 2; v++) {
        const size_t n = strlen(words[v]);
        if (!strncmp(*p, words[v], n) && !isalnum((unsigned char)(*p)[n]) && (*p)[n] != '_') {
            *value = v;
            *p += n;
            return 1;
        }
    }
    return 0;
}

static fpsim_status parse_descr(const char **p, const char *name, fpsim_npy_info *info)
{
    char descr[16];
    if (**p == '[')
        return fpsim_fail(FPSIM_EUNSUPPORTED, "%s: .npy array has a structured dtype (a 'descr' list); fpsim reads "
                          "plain element types", name);
    if (!take_string(p, descr, sizeof descr))
        return fpsim_fail(FPSIM_EFORMAT, "%s: malformed 'descr' in .npy header", name);
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
    return FPSIM_OK;
}

static fpsim_status parse_fortran_order(const char **p, const char *name)
{
    int fortran;
    if (!take_bool(p, &fortran))
        return fpsim_fail(FPSIM_EFORMAT, "%s: malformed 'fortran_order' in .npy header (True or False)", name);
    if (fortran)
        return fpsim_fail(FPSIM_EUNSUPPORTED, "%s: Fortran-order .npy arrays are not supported (save with C order)",
                          name);
    return FPSIM_OK;
}

/* A tuple of non-negative decimal integers: "()" a scalar, "(n,)" 1-D, "(r, c)" or "(r, c,)" 2-D. */
static fpsim_status parse_shape(const char **p, const char *name, fpsim_npy_info *info)
{
    const char *q = *p;
    if (*q != '(')
        return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header's 'shape' is not a tuple", name);
    q = skip_space(q + 1);
    info->ndim = 0;
    info->count = 1;
    int trailing_comma = 0;
    while (*q != ')') {
        if (!isdigit((unsigned char)*q) || (*q == '0' && isdigit((unsigned char)q[1])))
            return fpsim_fail(FPSIM_EFORMAT, "%s: malformed 'shape' in .npy header", name);
        if (info->ndim == FPSIM_NPY_MAX_DIMS)
            return fpsim_fail(FPSIM_EUNSUPPORTED, "%s: .npy array has more than %d dimensions", name,
                              FPSIM_NPY_MAX_DIMS);
        char *end;
        errno = 0;
        unsigned long long v = strtoull(q, &end, 10);
        if (errno || v > SIZE_MAX)
            return fpsim_fail(FPSIM_EFORMAT, "%s: .npy shape is too large", name);
        info->shape[info->ndim++] = (size_t)v;
        if (v != 0 && info->count > SIZE_MAX / v / 8)
            return fpsim_fail(FPSIM_EFORMAT, "%s: .npy shape is too large", name);
        info->count *= (size_t)v;
        q = skip_space(end);
        trailing_comma = *q == ',';
        if (trailing_comma)
            q = skip_space(q + 1);
        else if (*q != ')')
            return fpsim_fail(FPSIM_EFORMAT, "%s: malformed 'shape' in .npy header", name);
    }
    /* "(16)" is the int 16 in Python: numpy refuses it ("shape is not valid") */
    if (info->ndim == 1 && !trailing_comma)
        return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header's 'shape' (%zu) is not a tuple (a 1-D shape is written "
                          "(%zu,))", name, info->shape[0], info->shape[0]);
    *p = q + 1;
    return FPSIM_OK;
}

static fpsim_status parse_header_text(const char *text, const char *name, fpsim_npy_info *info)
{
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    int seen[3] = {0, 0, 0};
    const char *p = skip_space(text);
    if (*p != '{')
        return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header is not a {...} dict", name);
    p = skip_space(p + 1);
    while (*p != '}') {
        char key[32];
        if (!take_string(&p, key, sizeof key))
            return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header is not a {...} dict of quoted keys", name);
        int k = 0;
        while (k < 3 && strcmp(key, keys[k]))
            k++;
        if (k == 3)
            return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header has the key '%s'; numpy allows only 'descr', "
                              "'fortran_order' and 'shape'", name, key);
        if (seen[k]++)
            return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header gives '%s' twice", name, key);
        p = skip_space(p);
        if (*p != ':')
            return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header has no ':' after '%s'", name, key);
        p = skip_space(p + 1);
        fpsim_status st = k == 0 ? parse_descr(&p, name, info)
                        : k == 1 ? parse_fortran_order(&p, name)
                                 : parse_shape(&p, name, info);
        if (st)
            return st;
        p = skip_space(p);
        if (*p == ',')
            p = skip_space(p + 1);
        else if (*p != '}')
            return fpsim_fail(FPSIM_EFORMAT, "%s: malformed .npy header after '%s' (expected ',' or '}')", name, key);
    }
    if (*skip_space(p + 1))
        return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header has text after its {...} dict", name);
    for (int k = 0; k < 3; k++)
        if (!seen[k])
            return fpsim_fail(FPSIM_EFORMAT, "%s: .npy header has no '%s'", name, keys[k]);
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

/* Open `path`, read its header and compare the header's claim with the bytes a regular file holds
 * (before anything is allocated for it: a damaged header is "truncated", not an attempt at a huge
 * allocation). On success *out is positioned at the data. */
static fpsim_status open_checked(FILE **out, const char *path, fpsim_npy_info *info)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fpsim_fail(FPSIM_EIO, "cannot open '%s' for reading", path);
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return fpsim_fail(FPSIM_EFORMAT, "'%s' is a directory, not a .npy file", path);
    }
    fpsim_status st = fpsim_npy_read_header(f, path, info);
    const size_t bytes = info->count * info->elem_size;
    if (!st && fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode)) {
        const unsigned long long have = (unsigned long long)sb.st_size > info->data_offset
                                            ? (unsigned long long)sb.st_size - info->data_offset
                                            : 0;
        if (have < bytes)
            st = fpsim_fail(FPSIM_EFORMAT, "%s: truncated .npy data: %llu of %zu bytes", path, have, bytes);
        else if (have > bytes)
            st = fpsim_fail(FPSIM_EFORMAT, "%s: trailing bytes after the .npy data (header says %zu elements)", path,
                            info->count);
    }
    if (st) {
        fclose(f);
        return st;
    }
    *out = f;
    return FPSIM_OK;
}

fpsim_status fpsim_npy_peek(const char *path, fpsim_npy_info *info)
{
    FILE *f;
    fpsim_status st = open_checked(&f, path, info);
    if (!st)
        fclose(f);
    return st;
}

fpsim_status fpsim_npy_load(const char *path, fpsim_npy_info *info, void **data)
{
    *data = NULL;
    FILE *f;
    fpsim_status st = open_checked(&f, path, info);
    if (st)
        return st;
    const size_t bytes = info->count * info->elem_size;
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
