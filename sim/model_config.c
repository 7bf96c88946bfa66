/* model_config.c: the model spec string "layers=4,d=256,..." and its validation. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_model.h"

fpsim_model_config fpsim_model_config_default(void) {
    fpsim_model_config c = {
        .layers = 4, .d = 256, .heads = 4, .kv_heads = 4, .ffn = 768, .vocab = 128, .seq = 128,
        .batch = 4, .rope_theta = 10000.0, .norm_eps = 1e-5, .init_std = 0.02, .seed = 1234,
    };
    return c;
}

#define KEY_LIST "layers d heads kv_heads ffn vocab seq batch rope_theta eps init_std seed"

static fpsim_status parse_int(int *out, const char *key, const char *val, size_t len) {
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return fpsim_fail(FPSIM_EINVAL, "model spec: bad value for '%s'", key);
    memcpy(buf, val, len), buf[len] = 0;
    char *end;
    errno = 0;
    long v = strtol(buf, &end, 10);
    if (!isdigit((unsigned char)buf[0]) || *end || errno || v < 1 || v > (1L << 24))
        return fpsim_fail(FPSIM_EINVAL, "model spec: '%s=%s' is not an integer in [1, 2^24]",
                          key, buf);
    *out = (int)v;
    return FPSIM_OK;
}

static fpsim_status parse_double(double *out, const char *key, const char *val, size_t len) {
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return fpsim_fail(FPSIM_EINVAL, "model spec: bad value for '%s'", key);
    memcpy(buf, val, len), buf[len] = 0;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (*end || errno || !isfinite(v) || v <= 0)
        return fpsim_fail(FPSIM_EINVAL, "model spec: '%s=%s' is not a positive finite number",
                          key, buf);
    *out = v;
    return FPSIM_OK;
}

static fpsim_status parse_u64(uint64_t *out, const char *key, const char *val, size_t len) {
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return fpsim_fail(FPSIM_EINVAL, "model spec: bad value for '%s'", key);
    memcpy(buf, val, len), buf[len] = 0;
    char *end;
    errno = 0;
    /* Digits only from the start (strtoull would skip a space and negate a '-' after it:
     * " -1" read as 2^64-1); decimal, or hexadecimal after 0x, never octal ("010" is ten). */
    const int hex = buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X');
    const char *digits = hex ? buf + 2 : buf;
    if (!(hex ? isxdigit((unsigned char)digits[0]) : isdigit((unsigned char)digits[0])))
        return fpsim_fail(FPSIM_EINVAL, "model spec: '%s=%s' is not an unsigned integer", key,
                          buf);
    unsigned long long v = strtoull(digits, &end, hex ? 16 : 10);
    if (*end || errno)
        return fpsim_fail(FPSIM_EINVAL, "model spec: '%s=%s' is not an unsigned integer", key,
                          buf);
    *out = (uint64_t)v;
    return FPSIM_OK;
}

static fpsim_status set_key(fpsim_model_config *c, const char *key, size_t klen, const char *val,
                            size_t vlen) {
    char k[32];
    if (klen == 0 || klen >= sizeof k)
        return fpsim_fail(FPSIM_ENAME, "model spec: missing or overlong key (valid: " KEY_LIST ")");
    memcpy(k, key, klen), k[klen] = 0;
    if (!strcmp(k, "layers")) return parse_int(&c->layers, k, val, vlen);
    if (!strcmp(k, "d")) return parse_int(&c->d, k, val, vlen);
    if (!strcmp(k, "heads")) return parse_int(&c->heads, k, val, vlen);
    if (!strcmp(k, "kv_heads")) return parse_int(&c->kv_heads, k, val, vlen);
    if (!strcmp(k, "ffn")) return parse_int(&c->ffn, k, val, vlen);
    if (!strcmp(k, "vocab")) return parse_int(&c->vocab, k, val, vlen);
    if (!strcmp(k, "seq")) return parse_int(&c->seq, k, val, vlen);
    if (!strcmp(k, "batch")) return parse_int(&c->batch, k, val, vlen);
    if (!strcmp(k, "rope_theta")) return parse_double(&c->rope_theta, k, val, vlen);
    if (!strcmp(k, "eps")) return parse_double(&c->norm_eps, k, val, vlen);
    if (!strcmp(k, "init_std")) return parse_double(&c->init_std, k, val, vlen);
    if (!strcmp(k, "seed")) return parse_u64(&c->seed, k, val, vlen);
    return fpsim_fail(FPSIM_ENAME, "model spec: unknown key '%s' (valid: " KEY_LIST ")", k);
}

fpsim_status fpsim_model_config_parse(fpsim_model_config *cfg, const char *spec, int block) {
    fpsim_model_config c = fpsim_model_config_default();
    /* kv_heads not given follows heads (plain multi-head attention, as in the default model):
     * with the default's 4, "heads=2" alone failed as "not divisible by kv_heads = 4". 0 marks
     * it unset (parse_int accepts only values >= 1). */
    c.kv_heads = 0;
    const char *p = spec ? spec : "";
    const char *seen[32]; /* the keys given so far (each is at most once in KEY_LIST) */
    size_t seen_len[32], nseen = 0;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        /* an empty clause (",," or a trailing ",") is a typo, not a default */
        if (len == 0)
            return fpsim_fail(FPSIM_EINVAL, "model spec '%s': empty clause (two commas, or a comma at an end)",
                              spec);
        const char *eq = memchr(p, '=', len);
        if (!eq)
            return fpsim_fail(FPSIM_EINVAL, "model spec: '%.*s' is not key=value", (int)len, p);
        const size_t klen = (size_t)(eq - p);
        /* a key given twice: the last would silently win */
        for (size_t i = 0; i < nseen; i++)
            if (seen_len[i] == klen && !memcmp(seen[i], p, klen))
                return fpsim_fail(FPSIM_EINVAL, "model spec '%s': key '%.*s' given twice", spec, (int)klen, p);
        fpsim_status st = set_key(&c, p, klen, eq + 1, len - klen - 1);
        if (st) return st;
        if (nseen < sizeof seen / sizeof seen[0]) seen[nseen] = p, seen_len[nseen++] = klen;
        p += len;
        if (*p == ',' && *++p == '\0')
            return fpsim_fail(FPSIM_EINVAL, "model spec '%s': empty clause (two commas, or a comma at an end)",
                              spec);
    }
    if (c.kv_heads == 0) c.kv_heads = c.heads;
    fpsim_status st = fpsim_model_config_check(&c, block);
    if (st) return st;
    *cfg = c;
    return FPSIM_OK;
}

static fpsim_status check_multiple(const char *what, long value, int block) {
    if (block > 1 && value % block != 0)
        return fpsim_fail(FPSIM_ESHAPE,
                          "model spec: %s = %ld is not a multiple of the block size %d", what,
                          value, block);
    return FPSIM_OK;
}

fpsim_status fpsim_model_config_check(const fpsim_model_config *c, int block) {
    if (c->layers < 1 || c->d < 1 || c->heads < 1 || c->kv_heads < 1 || c->ffn < 1 ||
        c->vocab < 1 || c->seq < 1 || c->batch < 1)
        return fpsim_fail(FPSIM_EINVAL, "model spec: every size must be at least 1");
    if (!(c->rope_theta > 0) || !(c->norm_eps > 0) || !(c->init_std > 0))
        return fpsim_fail(FPSIM_EINVAL, "model spec: rope_theta, eps and init_std must be > 0");
    if (c->d % c->heads)
        return fpsim_fail(FPSIM_ESHAPE, "model spec: d = %d is not divisible by heads = %d",
                          c->d, c->heads);
    if (c->heads % c->kv_heads)
        return fpsim_fail(FPSIM_ESHAPE,
                          "model spec: heads = %d is not divisible by kv_heads = %d", c->heads,
                          c->kv_heads);
    int hd = c->d / c->heads;
    if (hd % 2)
        return fpsim_fail(FPSIM_ESHAPE, "model spec: head_dim d/heads = %d must be even (RoPE)",
                          hd);
    if ((double)c->batch * c->seq > (double)(1 << 24))
        return fpsim_fail(FPSIM_ESHAPE, "model spec: batch*seq = %.0f tokens is too many",
                          (double)c->batch * c->seq);
    fpsim_status st;
    if ((st = check_multiple("d", c->d, block))) return st;
    if ((st = check_multiple("ffn", c->ffn, block))) return st;
    if ((st = check_multiple("vocab", c->vocab, block))) return st;
    if ((st = check_multiple("kv width kv_heads*head_dim", (long)c->kv_heads * hd, block)))
        return st;
    if ((st = check_multiple("tokens batch*seq", (long)c->batch * c->seq, block))) return st;
    return FPSIM_OK;
}

fpsim_status fpsim_model_config_format(const fpsim_model_config *c, char *buf, size_t cap) {
    int n = snprintf(buf, cap,
                     "layers=%d,d=%d,heads=%d,kv_heads=%d,ffn=%d,vocab=%d,seq=%d,batch=%d,"
                     "rope_theta=%.17g,eps=%.17g,init_std=%.17g,seed=%" PRIu64,
                     c->layers, c->d, c->heads, c->kv_heads, c->ffn, c->vocab, c->seq, c->batch,
                     c->rope_theta, c->norm_eps, c->init_std, c->seed);
    if (n < 0 || (size_t)n >= cap)
        return fpsim_fail(FPSIM_EINVAL, "model spec: buffer of %zu bytes too small", cap);
    return FPSIM_OK;
}
