/* engine_config.c: generator / trainer engine configurations and their text form. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_gemm.h"
#include "fpsim_mismatch.h"

static const char *const reduce_names[FPSIM_REDUCE_COUNT] = {"seq", "pairwise", "blocked"};
static const char *const kv_names[FPSIM_KV_COUNT] = {"hp", "fp8"};
static const char *const style_names[FPSIM_STYLE_COUNT] = {"prefill", "decode"};

const char *fpsim_reduce_order_name(int order)
{
    if (order < 0 || order >= FPSIM_REDUCE_COUNT) return NULL;
    return reduce_names[order];
}

static void config_base(fpsim_engine_config *c, const char *recipe)
{
    memset(c, 0, sizeof *c);
    snprintf(c->recipe, sizeof c->recipe, "%s", recipe ? recipe : "bf16");
    snprintf(c->accum, sizeof c->accum, "fp32");
    c->kv = FPSIM_KV_HP;
}

void fpsim_engine_config_generator(fpsim_engine_config *c, const char *recipe)
{
    config_base(c, recipe);
    c->reduce = FPSIM_REDUCE_PAIRWISE;
    c->style = FPSIM_STYLE_DECODE;
    c->refit_bf16 = 1;
}

void fpsim_engine_config_trainer(fpsim_engine_config *c, const char *recipe)
{
    config_base(c, recipe);
    c->reduce = FPSIM_REDUCE_SEQ;
    c->style = FPSIM_STYLE_PREFILL;
    c->refit_bf16 = 0;
}

static int find_name(const char *const *names, int n, const char *v)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], v)) return i;
    return -1;
}

/* One key=value clause. */
static fpsim_status config_key(fpsim_engine_config *c, const char *key, const char *val)
{
    int k;
    if (!strcmp(key, "accum")) {
        fpsim_accum a;
        fpsim_status st = fpsim_accum_parse(&a, val);
        if (st) return st;
        snprintf(c->accum, sizeof c->accum, "%s", val);
        return FPSIM_OK;
    }
    if (!strcmp(key, "reduce")) {
        if ((k = find_name(reduce_names, FPSIM_REDUCE_COUNT, val)) < 0)
            return fpsim_fail(FPSIM_ENAME, "engine: unknown reduce order '%s' (valid: seq, pairwise, blocked)", val);
        c->reduce = k;
        return FPSIM_OK;
    }
    if (!strcmp(key, "kv")) {
        if ((k = find_name(kv_names, FPSIM_KV_COUNT, val)) < 0)
            return fpsim_fail(FPSIM_ENAME, "engine: unknown kv format '%s' (valid: hp, fp8)", val);
        c->kv = k;
        return FPSIM_OK;
    }
    if (!strcmp(key, "kv_scales")) {
        if (!strcmp(val, "fresh")) c->kv_stale = 0;
        else if (!strcmp(val, "stale")) c->kv_stale = 1;
        else return fpsim_fail(FPSIM_ENAME, "engine: unknown kv_scales '%s' (valid: fresh, stale)", val);
        return FPSIM_OK;
    }
    if (!strcmp(key, "style")) {
        if ((k = find_name(style_names, FPSIM_STYLE_COUNT, val)) < 0)
            return fpsim_fail(FPSIM_ENAME, "engine: unknown style '%s' (valid: prefill, decode)", val);
        c->style = k;
        return FPSIM_OK;
    }
    if (!strcmp(key, "refit")) {
        if (!strcmp(val, "bf16")) c->refit_bf16 = 1;
        else if (!strcmp(val, "none")) c->refit_bf16 = 0;
        else return fpsim_fail(FPSIM_ENAME, "engine: unknown refit '%s' (valid: bf16, none)", val);
        return FPSIM_OK;
    }
    return fpsim_fail(FPSIM_ENAME,
                      "engine: unknown key '%s' (valid: accum, reduce, kv, kv_scales, style, refit)", key);
}

fpsim_status fpsim_engine_config_parse(fpsim_engine_config *c, const char *text)
{
    if (!text || !*text) return fpsim_fail(FPSIM_EINVAL, "engine: empty engine text");
    if (strlen(text) >= FPSIM_ENGINE_TEXT_MAX)
        return fpsim_fail(FPSIM_EINVAL, "engine: engine text longer than %d characters", FPSIM_ENGINE_TEXT_MAX - 1);
    char buf[FPSIM_ENGINE_TEXT_MAX];
    snprintf(buf, sizeof buf, "%s", text);
    char *comma = strchr(buf, ',');
    if (comma) *comma = 0;
    snprintf(c->recipe, sizeof c->recipe, "%s", buf);
    char *p = comma ? comma + 1 : NULL;
    const char *seen[16]; /* the keys so far: one given twice would be last-wins in silence */
    int nseen = 0;
    while (p) {
        char *next = strchr(p, ',');
        if (next) *next = 0;
        if (!*p) return fpsim_fail(FPSIM_EINVAL, "engine '%s': empty clause", text);
        char *eq = strchr(p, '=');
        if (!eq) return fpsim_fail(FPSIM_EINVAL, "engine: '%s' is not key=value", p);
        *eq = 0;
        for (int i = 0; i < nseen; i++)
            if (!strcmp(seen[i], p)) return fpsim_fail(FPSIM_EINVAL, "engine '%s': key '%s' is given twice", text, p);
        fpsim_status st = config_key(c, p, eq + 1);
        if (st) return st;
        if (nseen < (int)(sizeof seen / sizeof seen[0])) seen[nseen++] = p; /* valid keys: 6 */
        p = next ? next + 1 : NULL;
    }
    if (c->kv_stale && c->kv != FPSIM_KV_FP8)
        return fpsim_fail(FPSIM_EINVAL, "engine '%s': kv_scales=stale has no effect without kv=fp8", text);
    return FPSIM_OK;
}

fpsim_status fpsim_engine_config_format(const fpsim_engine_config *c, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s,accum=%s,reduce=%s,kv=%s,kv_scales=%s,style=%s,refit=%s",
                     c->recipe, c->accum, reduce_names[c->reduce], kv_names[c->kv],
                     c->kv_stale ? "stale" : "fresh", style_names[c->style],
                     c->refit_bf16 ? "bf16" : "none");
    if (n < 0 || (size_t)n >= cap) return fpsim_fail(FPSIM_EINVAL, "engine: text buffer too small");
    return FPSIM_OK;
}
