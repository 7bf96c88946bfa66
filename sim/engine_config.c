/* engine_config.c: generator / trainer engine configurations and their text form. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_gemm.h"
#include "fpsim_mismatch.h"
#include "fpsim_replay.h"

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

static const char *const engine_keys[] = {"accum", "reduce", "kv", "kv_scales", "style", "refit"};
#define N_ENGINE_KEYS (int)(sizeof engine_keys / sizeof engine_keys[0])

/* The engine key that text starts with, followed by '=' (-1: none). */
static int engine_key_at(const char *text)
{
    for (int i = 0; i < N_ENGINE_KEYS; i++) {
        size_t n = strlen(engine_keys[i]);
        if (!strncmp(text, engine_keys[i], n) && text[n] == '=') return i;
    }
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
        snprintf(c->accum, sizeof c->accum, "%s", a.name); /* canonical: one spelling per model */
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

static int is_fp8_scheme(const fpsim_scheme *s)
{
    return s->kind == FPSIM_KIND_FP8_BLOCK || s->kind == FPSIM_KIND_FP8_TENSOR;
}

/* accum=MODEL reaches only the fprop GEMMs whose two operands are FP8 (engine_gemm.c): one that
 * would reach none, or that those GEMMs would refuse, is refused here, before any work. */
static fpsim_status check_accum(const fpsim_engine_config *c, const fpsim_engine_plan *plan, const char *text)
{
    fpsim_accum a;
    fpsim_status st = fpsim_accum_parse(&a, c->accum);
    if (st) return st;
    if (a.kind == FPSIM_ACCUM_FP32_BLAS) {
        if (a.splitk > 1 || a.fold != FPSIM_FOLD_AUTO)
            return fpsim_fail(FPSIM_EINVAL, "engine '%s': accum=%s: %s has no effect on BLAS sgemm (the fp32 "
                              "model); give fp32:seq or a tensor-core model", text, a.name,
                              a.splitk > 1 ? "splitk" : "fold");
        return FPSIM_OK; /* the default */
    }
    const int x = FPSIM_ROLE_ACT, w = FPSIM_ROLE_WEIGHT, fp = FPSIM_PASS_FPROP;
    if (!plan->quantized[fp][x] || !plan->quantized[fp][w] || !is_fp8_scheme(&plan->scheme[fp][x]) ||
        !is_fp8_scheme(&plan->scheme[fp][w]))
        return fpsim_fail(FPSIM_EINVAL, "engine '%s': accum=%s has no effect: recipe '%s' has no FP8 GEMM (accum "
                          "applies to fprop GEMMs whose X and W are both FP8, block or per-tensor)",
                          text, a.name, c->recipe);
    const fpsim_scheme *sx = &plan->scheme[fp][x], *sw = &plan->scheme[fp][w];
    if (sx->kind != sw->kind)
        return fpsim_fail(FPSIM_EINVAL, "engine '%s': accum=%s needs the fprop X and W both block FP8 or both "
                          "per-tensor FP8 (cuBLASLt pairs no others); recipe '%s' mixes them", text, a.name, c->recipe);
    if (a.kind == FPSIM_ACCUM_HOPPER_HGMMA)
        return fpsim_fail(FPSIM_EINVAL, "engine '%s': accum=hopper-hgmma takes BF16/FP16 operands, not the FP8 ones "
                          "accum applies to (use hopper-qgmma or mma-sync-fp8)", text);
    if (sx->kind == FPSIM_KIND_FP8_BLOCK) {
        if (a.kind == FPSIM_ACCUM_HOPPER_QGMMA && a.promote != 128)
            return fpsim_fail(FPSIM_EINVAL, "engine '%s': accum=%s: block-scaled FP8 GEMMs promote every 128 "
                              "K-elements (cuBLASLt and PyTorch refuse fast accumulation with block scales); use "
                              "accum=hopper-qgmma", text, a.name);
    } else if (a.fold != FPSIM_FOLD_AUTO) {
        return fpsim_fail(FPSIM_EINVAL, "engine '%s': accum=%s: fold has no effect on per-tensor FP8 (it orders "
                          "block scales only)", text, a.name);
    }
    if (a.kind == FPSIM_ACCUM_FP64 && a.splitk > 1)
        return fpsim_fail(FPSIM_EINVAL, "engine '%s': accum=%s: splitk does not apply to the fp64 reference", text,
                          a.name);
    return FPSIM_OK;
}

/* The text is RECIPE[,key=value...]. A custom recipe's schemes hold ',' too (`bf16;x=nvfp4:sr=1,
 * rht=1`), so the recipe ends at the first ',' followed by an engine key and '=' (scheme keys
 * and engine keys are distinct names: tests/mismatch/test_mismatch_cli.c checks it), and an
 * accum value keeps its own ",fold=" / ",splitk=" options up to the next engine key. '@' is
 * replay's recipe suffix (RECIPE@accum=MODEL), refused here: an engine's accumulation model
 * is its accum key. */
fpsim_status fpsim_engine_config_parse(fpsim_engine_config *c, const char *text)
{
    if (!text || !*text) return fpsim_fail(FPSIM_EINVAL, "engine: empty engine text");
    if (strlen(text) >= FPSIM_ENGINE_TEXT_MAX)
        return fpsim_fail(FPSIM_EINVAL, "engine: engine text longer than %d characters", FPSIM_ENGINE_TEXT_MAX - 1);
    char buf[FPSIM_ENGINE_TEXT_MAX];
    snprintf(buf, sizeof buf, "%s", text);
    char *at = strchr(buf, '@');
    if (at && !strncmp(at, "@accum=", 7)) {
        *at = 0; /* the same request as a key: RECIPE,accum=MODEL */
        return fpsim_fail(FPSIM_EINVAL, "engine '%s': '@accum=' is replay's recipe suffix; an engine takes its "
                          "accumulation model as a key: '%s,%s'", text, buf, at + 1);
    }
    if (at)
        return fpsim_fail(FPSIM_EINVAL, "engine '%s': unknown suffix '%s' (engine keys follow the recipe after ',': "
                          "RECIPE,key=value)", text, at);
    /* The recipe: up to the first ",KEY=" with KEY an engine key. */
    char *comma = buf;
    while ((comma = strchr(comma, ',')) && engine_key_at(comma + 1) < 0) comma++;
    if (comma) *comma = 0;
    /* A ',' before the recipe's first '=' cannot belong to a scheme: what follows it is a key. */
    char *early = strchr(buf, ',');
    if (early && (!strchr(buf, '=') || early < strchr(buf, '='))) {
        if (early[1] == '\0' || early[1] == ',')
            return fpsim_fail(FPSIM_EINVAL, "engine '%s': empty clause", text);
        early[1 + strcspn(early + 1, ",")] = 0;
        if (strchr(early + 1, '=')) *strchr(early + 1, '=') = 0;
        return fpsim_fail(FPSIM_ENAME, "engine '%s': unknown key '%s' (valid: accum, reduce, kv, kv_scales, style, "
                          "refit)", text, early + 1);
    }
    if (!*buf) return fpsim_fail(FPSIM_EINVAL, "engine '%s': no recipe before the keys", text);
    snprintf(c->recipe, sizeof c->recipe, "%s", buf);
    fpsim_engine_plan plan;
    fpsim_status st = fpsim_engine_plan_from_recipe(&plan, c->recipe);
    if (st) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", fpsim_last_error());
        return fpsim_fail(st, "engine '%s': %s", text, msg);
    }
    char *p = comma ? comma + 1 : NULL;
    int seen[N_ENGINE_KEYS] = {0}; /* a key given twice would be last-wins in silence */
    while (p) {
        if (!*p || *p == ',') return fpsim_fail(FPSIM_EINVAL, "engine '%s': empty clause", text);
        int k = engine_key_at(p);
        if (k < 0) { /* not an engine key (accum's own ',' options went with its value) */
            char *eq = strchr(p, '=');
            char *end = p + strcspn(p, ",");
            if (!eq || eq > end) {
                *end = 0;
                return fpsim_fail(FPSIM_EINVAL, "engine '%s': '%s' is not key=value", text, p);
            }
            *eq = 0;
            return fpsim_fail(FPSIM_ENAME,
                              "engine '%s': unknown key '%s' (valid: accum, reduce, kv, kv_scales, style, refit)",
                              text, p);
        }
        /* the value: up to the next ",KEY=" for accum (its options hold ','), else the next ',' */
        char *val = p + strlen(engine_keys[k]) + 1, *next = val;
        if (k == 0) {
            while ((next = strchr(next, ',')) && engine_key_at(next + 1) < 0) next++;
        } else {
            next = strchr(val, ',');
        }
        if (next) *next = 0;
        if (seen[k]) return fpsim_fail(FPSIM_EINVAL, "engine '%s': key '%s' is given twice", text, engine_keys[k]);
        seen[k] = 1;
        if ((st = config_key(c, engine_keys[k], val))) return st;
        p = next ? next + 1 : NULL;
    }
    if (c->kv_stale && c->kv != FPSIM_KV_FP8)
        return fpsim_fail(FPSIM_EINVAL, "engine '%s': kv_scales=stale has no effect without kv=fp8", text);
    return check_accum(c, &plan, text);
}

fpsim_status fpsim_engine_config_check(const fpsim_engine_config *c, const fpsim_model_config *m)
{
    fpsim_engine_plan plan;
    fpsim_status st = fpsim_engine_plan_from_recipe(&plan, c->recipe);
    if (st) return st;
    if ((st = fpsim_engine_plan_check_layers(&plan, m->layers))) return st;
    int block = fpsim_engine_plan_block(&plan);
    if ((st = fpsim_model_config_check(m, block > 1 ? block : 0))) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", fpsim_last_error());
        return fpsim_fail(st, "%s (recipe %s needs blocks of %d)", msg, c->recipe, block);
    }
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
