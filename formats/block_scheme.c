/* block_scheme.c: scheme names, defaults, `NAME[:key=value,...]` parsing and canonical text.
 *
 * Defaults follow the implementation most users run (docs/quantizers.md says which and why):
 * MX torchao to_mx (FLOOR, NaN propagates); NVFP4 TransformerEngine (1x16, NaN ignored by fmaxf);
 * fp8-block TE Float8BlockScaling (1x128, power-of-two scales); fp8-tensor TE current scaling. */
#include "fpsim_block.h"
#include "fpsim_core_types.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scheme_name {
    const char *name;
    uint8_t kind, elem;
    const char *desc;
} scheme_name;

static const scheme_name g_names[] = {
    {"mxfp8-e4m3", FPSIM_KIND_MX, FPSIM_E4M3, "MXFP8: E4M3 elements, E8M0 scale per 32 (OCP MX v1.0)"},
    {"mxfp8-e5m2", FPSIM_KIND_MX, FPSIM_E5M2, "MXFP8: E5M2 elements, E8M0 scale per 32"},
    {"mxfp6-e2m3", FPSIM_KIND_MX, FPSIM_E2M3, "MXFP6: E2M3 elements, E8M0 scale per 32"},
    {"mxfp6-e3m2", FPSIM_KIND_MX, FPSIM_E3M2, "MXFP6: E3M2 elements, E8M0 scale per 32"},
    {"mxfp4", FPSIM_KIND_MX, FPSIM_E2M1, "MXFP4: E2M1 elements, E8M0 scale per 32"},
    {"nvfp4", FPSIM_KIND_NVFP4, FPSIM_E2M1,
     "NVFP4: E2M1 elements, E4M3 scale per 16, FP32 per-tensor scale"},
    {"fp8-block", FPSIM_KIND_FP8_BLOCK, FPSIM_E4M3,
     "block FP8: FP32 scale per 1x128 / 128x128 (DeepSeek-V3, TE Float8BlockScaling, NeMo RL, vLLM)"},
    {"fp8-tensor", FPSIM_KIND_FP8_TENSOR, FPSIM_E4M3,
     "per-tensor FP8: TE current / delayed scaling, torchao float8"},
};
#define N_NAMES (sizeof g_names / sizeof g_names[0])

static const char *const g_name_list[N_NAMES] = {"mxfp8-e4m3", "mxfp8-e5m2", "mxfp6-e2m3",
                                                 "mxfp6-e3m2", "mxfp4",      "nvfp4",
                                                 "fp8-block",  "fp8-tensor"};

static const char *const g_rules[FPSIM_MX_RULE_COUNT] = {
    "floor", "ceil", "even", "rceil", "rceil-sat", "microxcaling", "gfloat"};
static const char *const g_chains[FPSIM_NVFP4_CHAIN_COUNT] = {"te", "torchao", "torchao-cuda"};
static const char *const g_fp8b[FPSIM_FP8B_SCALE_COUNT] = {"te-pow2",        "te-fp32",   "deepgemm-fp32",
                                                          "deepgemm-ue8m0", "vllm-cuda", "vllm-native",
                                                          "vllm-cuda-ue8m0"};
static const char *const g_modes[FPSIM_TENSOR_MODE_COUNT] = {"current", "delayed", "torchao"};
static const char *const g_nans[2] = {"propagate", "ignore"};
static const char *const g_algos[2] = {"max", "most_recent"};
static const char *const g_aos[2] = {"main", "0.18"};
static const char *const g_rhtsums[FPSIM_RHT_SUM_COUNT] = {"exact", "mma"};

const char *const *fpsim_scheme_names(size_t *count)
{
    if (count)
        *count = N_NAMES;
    return g_name_list;
}

const char *fpsim_mx_rule_name(int r)
{
    return r >= 0 && r < FPSIM_MX_RULE_COUNT ? g_rules[r] : "?";
}
const char *fpsim_nvfp4_chain_name(int c)
{
    return c >= 0 && c < FPSIM_NVFP4_CHAIN_COUNT ? g_chains[c] : "?";
}
const char *fpsim_fp8_block_scale_name(int s)
{
    return s >= 0 && s < FPSIM_FP8B_SCALE_COUNT ? g_fp8b[s] : "?";
}
const char *fpsim_tensor_mode_name(int m)
{
    return m >= 0 && m < FPSIM_TENSOR_MODE_COUNT ? g_modes[m] : "?";
}

int fpsim_scheme_is_2d(const fpsim_scheme *s)
{
    return s->tile_rows > 1;
}

/* "a, b, c" of a name table, for error messages. */
static void join(char *buf, size_t cap, const char *const *names, int n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && len + 1 < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", names[i]);
}

static int lookup(const char *const *names, int n, const char *v)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], v) == 0)
            return i;
    return -1;
}

/* Sentinels for defaults that depend on other keys, resolved after all keys are read. */
#define NAN_AUTO 0xFF

fpsim_status fpsim_scheme_default(fpsim_scheme *out, const char *name)
{
    if (name && strchr(name, ':'))
        return fpsim_fail(FPSIM_EINVAL, "scheme name '%s' has options; use fpsim_scheme_parse", name);
    return fpsim_scheme_parse(out, name);
}

/* Default of the NaN policy and eps once every key is known. */
static void resolve_defaults(fpsim_scheme *s)
{
    if (s->nan == NAN_AUTO) {
        int te = 0;
        switch (s->kind) {
        case FPSIM_KIND_MX: te = s->rule == FPSIM_MX_RCEIL_SAT; break;
        case FPSIM_KIND_NVFP4: te = s->chain == FPSIM_NVFP4_TE; break;
        case FPSIM_KIND_FP8_BLOCK:
            /* vLLM's CUDA kernel reduces with fmaxf as TE does */
            te = s->scale == FPSIM_FP8B_TE_POW2 || s->scale == FPSIM_FP8B_TE_FP32 || fpsim_fp8_scale_vllm_op(s->scale);
            break;
        default: te = s->mode != FPSIM_TENSOR_TORCHAO; break;
        }
        /* TE reduces amax with fmaxf / max.xorsign.abs (NaN skipped); torch.amax propagates. */
        s->nan = te ? FPSIM_NAN_IGNORE : FPSIM_NAN_PROPAGATE;
    }
    if (isnan(s->eps)) {
        if (s->kind == FPSIM_KIND_FP8_BLOCK &&
            (s->scale == FPSIM_FP8B_DEEPGEMM_FP32 || s->scale == FPSIM_FP8B_DEEPGEMM_UE8M0))
            s->eps = 1e-4f; /* DeepGEMM per_token_cast_to_fp8: amax.clamp(1e-4) */
        else if (s->kind == FPSIM_KIND_FP8_BLOCK && fpsim_fp8_scale_vllm_op(s->scale))
            s->eps = 1e-10f; /* per_token_group_quant_fp8(eps=1e-10): the reduction starts at eps */
        else if (s->kind == FPSIM_KIND_FP8_BLOCK && s->scale == FPSIM_FP8B_VLLM_NATIVE)
            /* _FP8_MIN_SCALING_FACTOR = 1.0 / (fp8 max * 512.0), a Python double that torch.clamp
             * takes as FP32 (a floor of the scale, not of the amax) */
            s->eps = (float)(1.0 / ((s->elem == FPSIM_E5M2 ? 57344.0 : 448.0) * 512.0));
        else if (s->kind == FPSIM_KIND_FP8_TENSOR && s->mode == FPSIM_TENSOR_TORCHAO)
            s->eps = 1e-12f; /* torchao float8_utils EPS (compared in float64, see block_fp8.c) */
        else
            s->eps = 0.0f; /* TE amax_epsilon default */
    }
}

static const char *kind_keys(int kind)
{
    switch (kind) {
    case FPSIM_KIND_MX: return "rule, nan, tile (1x32|32x32), ao, cast";
    case FPSIM_KIND_NVFP4: return "chain, nan, tile (1x16|16x16), sr, rht, rhtsum, global, cast";
    case FPSIM_KIND_FP8_BLOCK:
        return "scale, nan, tile (1x128|128x128), eps, fmt, cast";
    default: return "mode, nan, fmt, pow2, eps, margin, history, algo, cast";
    }
}

static fpsim_status parse_int(const char *key, const char *v, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno || x < lo || x > hi)
        return fpsim_fail(FPSIM_EINVAL, "bad value '%s' for scheme key '%s' (an integer in [%ld, %ld])",
                          v, key, lo, hi);
    *out = x;
    return FPSIM_OK;
}

static fpsim_status parse_bool(const char *key, const char *v, uint8_t *out)
{
    if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0) {
        *out = (uint8_t)(v[0] - '0');
        return FPSIM_OK;
    }
    return fpsim_fail(FPSIM_EINVAL, "bad value '%s' for scheme key '%s' (valid: 0, 1)", v, key);
}

static fpsim_status enum_value(const char *key, const char *v, const char *const *names, int n,
                               uint8_t *out)
{
    int i = lookup(names, n, v);
    if (i < 0) {
        char list[256];
        join(list, sizeof list, names, n);
        return fpsim_fail(FPSIM_ENAME, "unknown value '%s' for scheme key '%s' (valid: %s)", v, key,
                          list);
    }
    *out = (uint8_t)i;
    return FPSIM_OK;
}

/* One key=value. */
static fpsim_status apply_key(fpsim_scheme *s, const char *name, const char *key, const char *v)
{
    int k = s->kind;
    long n;
    fpsim_status st;
#define ONLY(cond)                                                                                 \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return fpsim_fail(FPSIM_EINVAL, "scheme key '%s' does not apply to %s (its keys: %s)",  \
                              key, name, kind_keys(k));                                            \
    } while (0)
    if (strcmp(key, "rule") == 0) {
        ONLY(k == FPSIM_KIND_MX);
        return enum_value(key, v, g_rules, FPSIM_MX_RULE_COUNT, &s->rule);
    }
    if (strcmp(key, "nan") == 0)
        return enum_value(key, v, g_nans, 2, &s->nan);
    if (strcmp(key, "chain") == 0) {
        ONLY(k == FPSIM_KIND_NVFP4);
        return enum_value(key, v, g_chains, FPSIM_NVFP4_CHAIN_COUNT, &s->chain);
    }
    if (strcmp(key, "scale") == 0) {
        ONLY(k == FPSIM_KIND_FP8_BLOCK);
        return enum_value(key, v, g_fp8b, FPSIM_FP8B_SCALE_COUNT, &s->scale);
    }
    if (strcmp(key, "mode") == 0) {
        ONLY(k == FPSIM_KIND_FP8_TENSOR);
        return enum_value(key, v, g_modes, FPSIM_TENSOR_MODE_COUNT, &s->mode);
    }
    if (strcmp(key, "algo") == 0) {
        ONLY(k == FPSIM_KIND_FP8_TENSOR);
        return enum_value(key, v, g_algos, 2, &s->algo);
    }
    if (strcmp(key, "ao") == 0) {
        ONLY(k == FPSIM_KIND_MX);
        return enum_value(key, v, g_aos, 2, &s->ao);
    }
    if (strcmp(key, "tile") == 0) {
        static const char *const tiles[] = {"1x16", "16x16", "1x32", "32x32", "1x128", "128x128"};
        static const uint16_t tr[] = {1, 16, 1, 32, 1, 128}, tc[] = {16, 16, 32, 32, 128, 128};
        uint8_t t;
        ONLY(k != FPSIM_KIND_FP8_TENSOR);
        if ((st = enum_value(key, v, tiles, 6, &t)) != FPSIM_OK)
            return st;
        int ok = (k == FPSIM_KIND_NVFP4 && tc[t] == 16) || (k == FPSIM_KIND_MX && tc[t] == 32) ||
                 (k == FPSIM_KIND_FP8_BLOCK && tc[t] == 128);
        if (!ok)
            return fpsim_fail(FPSIM_EINVAL, "tile %s does not suit %s (valid: %s)", v, name,
                              k == FPSIM_KIND_NVFP4 ? "1x16, 16x16"
                              : k == FPSIM_KIND_MX  ? "1x32, 32x32"
                                                    : "1x128, 128x128");
        s->tile_rows = tr[t];
        s->tile_cols = tc[t];
        return FPSIM_OK;
    }
    if (strcmp(key, "sr") == 0) {
        ONLY(k == FPSIM_KIND_NVFP4);
        return parse_bool(key, v, &s->sr);
    }
    if (strcmp(key, "rht") == 0) {
        ONLY(k == FPSIM_KIND_NVFP4);
        return parse_bool(key, v, &s->rht);
    }
    if (strcmp(key, "rhtsum") == 0) {
        ONLY(k == FPSIM_KIND_NVFP4);
        return enum_value(key, v, g_rhtsums, FPSIM_RHT_SUM_COUNT, &s->rhtsum);
    }
    if (strcmp(key, "global") == 0) {
        ONLY(k == FPSIM_KIND_NVFP4);
        return parse_bool(key, v, &s->gscale);
    }
    if (strcmp(key, "pow2") == 0) {
        ONLY(k == FPSIM_KIND_FP8_TENSOR);
        return parse_bool(key, v, &s->pow2);
    }
    if (strcmp(key, "margin") == 0) {
        ONLY(k == FPSIM_KIND_FP8_TENSOR);
        if ((st = parse_int(key, v, -64, 64, &n)) != FPSIM_OK)
            return st;
        s->margin = (int32_t)n;
        return FPSIM_OK;
    }
    if (strcmp(key, "history") == 0) {
        ONLY(k == FPSIM_KIND_FP8_TENSOR);
        if ((st = parse_int(key, v, 1, 1 << 20, &n)) != FPSIM_OK)
            return st;
        s->history = (int32_t)n;
        return FPSIM_OK;
    }
    if (strcmp(key, "eps") == 0) {
        ONLY(k == FPSIM_KIND_FP8_BLOCK || k == FPSIM_KIND_FP8_TENSOR);
        char *end;
        errno = 0;
        float e = strtof(v, &end);
        if (*v == '\0' || *end != '\0' || !(e >= 0.0f) || isinf(e))
            return fpsim_fail(FPSIM_EINVAL, "bad value '%s' for scheme key 'eps' (a finite number >= 0)",
                              v);
        /* A nonzero text that underflows to 0 in float32 would be taken as no floor at all. */
        if (e == 0.0f && errno == ERANGE)
            return fpsim_fail(FPSIM_EINVAL,
                              "bad value '%s' for scheme key 'eps': it underflows to 0 in float32 (give 0, or a value "
                              "of at least 1.4e-45)", v);
        s->eps = e;
        return FPSIM_OK;
    }
    if (strcmp(key, "fmt") == 0) {
        static const char *const fmts[] = {"e4m3", "e5m2"};
        uint8_t f;
        ONLY(k == FPSIM_KIND_FP8_BLOCK || k == FPSIM_KIND_FP8_TENSOR);
        if ((st = enum_value(key, v, fmts, 2, &f)) != FPSIM_OK)
            return st;
        s->elem = f ? FPSIM_E5M2 : FPSIM_E4M3;
        return FPSIM_OK;
    }
    if (strcmp(key, "cast") == 0) {
        if (strlen(v) >= FPSIM_CAST_NAME_MAX || v[0] == '\0')
            return fpsim_fail(FPSIM_EINVAL, "bad cast policy '%s'", v);
        strcpy(s->cast, v);
        return FPSIM_OK; /* checked against the element format when quantizing */
    }
#undef ONLY
    return fpsim_fail(FPSIM_ENAME, "unknown scheme key '%s' for %s (its keys: %s)", key, name,
                      kind_keys(k));
}

fpsim_status fpsim_scheme_parse(fpsim_scheme *out, const char *text)
{
    if (!text || !*text)
        return fpsim_fail(FPSIM_EINVAL, "empty scheme text");
    if (strlen(text) >= FPSIM_SCHEME_TEXT_MAX)
        return fpsim_fail(FPSIM_EINVAL, "scheme text longer than %d characters",
                          FPSIM_SCHEME_TEXT_MAX - 1);
    char buf[FPSIM_SCHEME_TEXT_MAX];
    strcpy(buf, text);
    char *colon = strchr(buf, ':');
    if (colon)
        *colon = '\0';
    fpsim_scheme s;
    {
        size_t i;
        for (i = 0; i < N_NAMES; i++)
            if (strcmp(g_names[i].name, buf) == 0)
                break;
        if (i == N_NAMES) {
            char list[256];
            join(list, sizeof list, g_name_list, (int)N_NAMES);
            return fpsim_fail(FPSIM_ENAME, "unknown scheme '%s' (valid: %s)", buf, list);
        }
        memset(&s, 0, sizeof s);
        s.kind = g_names[i].kind;
        s.elem = g_names[i].elem;
        s.nan = NAN_AUTO;
        s.eps = NAN;
        s.gscale = 1;
        s.history = 1024;
        s.tile_rows = s.kind == FPSIM_KIND_FP8_TENSOR ? 0 : 1;
        s.tile_cols = s.kind == FPSIM_KIND_MX      ? 32
                      : s.kind == FPSIM_KIND_NVFP4 ? 16
                      : s.kind == FPSIM_KIND_FP8_BLOCK ? 128
                                                       : 0;
    }
    if (colon) {
        char *p = colon + 1;
        if (*p == '\0')
            return fpsim_fail(FPSIM_EINVAL, "scheme '%s': nothing after ':'", text);
        const char *seen[32]; /* the keys given so far, NUL-terminated in buf */
        size_t nseen = 0;
        while (p && *p) {
            char *comma = strchr(p, ',');
            if (comma)
                *comma = '\0';
            char *eq = strchr(p, '=');
            if (!eq || eq == p || eq[1] == '\0')
                return fpsim_fail(FPSIM_EINVAL, "scheme '%s': '%s' is not key=value", text, p);
            *eq = '\0';
            /* a key given twice ("sr=1,sr=0"): the last would silently win */
            for (size_t i = 0; i < nseen; i++)
                if (strcmp(seen[i], p) == 0)
                    return fpsim_fail(FPSIM_EINVAL, "scheme '%s': key '%s' given twice", text, p);
            if (nseen < sizeof seen / sizeof seen[0])
                seen[nseen++] = p;
            fpsim_status st = apply_key(&s, buf, p, eq + 1);
            if (st != FPSIM_OK)
                return st;
            p = comma ? comma + 1 : NULL;
            if (comma && *p == '\0')
                return fpsim_fail(FPSIM_EINVAL, "scheme '%s': trailing ','", text);
        }
    }
    /* Keys that would change nothing are refused, as the CLI refuses options without effect (the
     * canonical text, which names every key at its default, parses back) */
    if (s.kind == FPSIM_KIND_NVFP4 && !s.rht && s.rhtsum != FPSIM_RHT_EXACT)
        return fpsim_fail(FPSIM_EINVAL, "scheme '%s': rhtsum has no effect without rht=1", text);
    if (s.kind == FPSIM_KIND_FP8_TENSOR && s.mode != FPSIM_TENSOR_DELAYED &&
        (s.margin != 0 || s.history != 1024 || s.algo != 0))
        return fpsim_fail(FPSIM_EINVAL, "scheme '%s': margin, history and algo apply to mode=delayed only", text);
    if (s.rht && s.kind == FPSIM_KIND_NVFP4 && s.tile_rows != 1)
        return fpsim_fail(FPSIM_EINVAL,
                          "scheme '%s': rht=1 needs tile=1x16 (TE applies RHT to 1D columnwise copies only)",
                          text);
    resolve_defaults(&s);
    *out = s;
    return FPSIM_OK;
}

static const char *scheme_name_of(const fpsim_scheme *s)
{
    for (size_t i = 0; i < N_NAMES; i++)
        if (g_names[i].kind == s->kind &&
            (g_names[i].elem == s->elem || s->kind == FPSIM_KIND_FP8_BLOCK ||
             s->kind == FPSIM_KIND_FP8_TENSOR))
            return g_names[i].name;
    return "?";
}

fpsim_status fpsim_scheme_format(char *buf, size_t cap, const fpsim_scheme *s)
{
    const char *name = scheme_name_of(s);
    const char *nan = s->nan < 2 ? g_nans[s->nan] : "?";
    const char *fmt = s->elem == FPSIM_E5M2 ? "e5m2" : "e4m3";
    int n;
    char cast[FPSIM_CAST_NAME_MAX + 8] = "";
    if (s->cast[0])
        snprintf(cast, sizeof cast, ",cast=%s", s->cast);
    switch (s->kind) {
    case FPSIM_KIND_MX:
        n = snprintf(buf, cap, "%s:rule=%s,nan=%s,tile=%ux%u,ao=%s%s", name, fpsim_mx_rule_name(s->rule),
                     nan, s->tile_rows, s->tile_cols, s->ao < 2 ? g_aos[s->ao] : "?", cast);
        break;
    case FPSIM_KIND_NVFP4:
        n = snprintf(buf, cap, "%s:chain=%s,nan=%s,tile=%ux%u,sr=%u,rht=%u,rhtsum=%s,global=%u%s", name,
                     fpsim_nvfp4_chain_name(s->chain), nan, s->tile_rows, s->tile_cols, s->sr, s->rht,
                     s->rhtsum < FPSIM_RHT_SUM_COUNT ? g_rhtsums[s->rhtsum] : "?", s->gscale, cast);
        break;
    case FPSIM_KIND_FP8_BLOCK:
        n = snprintf(buf, cap, "%s:scale=%s,nan=%s,tile=%ux%u,fmt=%s,eps=%.9g%s", name,
                     fpsim_fp8_block_scale_name(s->scale), nan, s->tile_rows, s->tile_cols, fmt,
                     (double)s->eps, cast);
        break;
    default:
        n = snprintf(buf, cap, "%s:mode=%s,nan=%s,fmt=%s,pow2=%u,eps=%.9g,margin=%d,history=%d,algo=%s%s",
                     name, fpsim_tensor_mode_name(s->mode), nan, fmt, s->pow2, (double)s->eps,
                     (int)s->margin, (int)s->history, s->algo < 2 ? g_algos[s->algo] : "?", cast);
        break;
    }
    if (n < 0 || (size_t)n >= cap)
        return fpsim_fail(FPSIM_EINVAL, "scheme text does not fit in %zu bytes", cap);
    return FPSIM_OK;
}

fpsim_status fpsim_scheme_list(size_t i, char *buf, size_t cap)
{
    if (i >= N_NAMES)
        return fpsim_fail(FPSIM_EINVAL, "scheme index %zu out of range (%zu schemes)", i,
                          (size_t)N_NAMES);
    fpsim_scheme s;
    char text[FPSIM_SCHEME_TEXT_MAX];
    fpsim_status st = fpsim_scheme_parse(&s, g_names[i].name);
    if (st == FPSIM_OK)
        st = fpsim_scheme_format(text, sizeof text, &s);
    if (st != FPSIM_OK)
        return st;
    int n = snprintf(buf, cap, "%-11s %s\n            %s", g_names[i].name, g_names[i].desc, text);
    if (n < 0 || (size_t)n >= cap)
        return fpsim_fail(FPSIM_EINVAL, "list line does not fit in %zu bytes", cap);
    return FPSIM_OK;
}
