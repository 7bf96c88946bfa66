/* replay_plan.c: an engine plan (fpsim_replay.h) from a named or custom recipe (fpsim_recipe.h).
 *
 * The recipe says, per (pass, role), which scheme quantizes the operand, which precision the
 * unquantized operands and the non-GEMM ops use, and which first/last layers stay in high
 * precision. What the recipe does not say and the plan must:
 *   - GEMM output precision: the recipe's high precision (TE writes fprop/dgrad outputs in the
 *     activation dtype, BF16 under a BF16 recipe); weight gradients FP32 (TE main_grad);
 *   - the LM head: kept in high precision, as NeMo RL (output projections in BF16), Megatron's
 *     FP8 recipes and the NVFP4 paper (linear layers of the blocks only) all do.
 * Extra names: "fp64" (no rounding at all: the identity control, bit-identical to the
 * reference). */
#include <stdio.h>
#include <string.h>

#include "fpsim_replay.h"

enum { PLAN_FP64 = FPSIM_ACT_FP64, PLAN_FP32 = FPSIM_ACT_FP32, PLAN_BF16 = FPSIM_ACT_BF16 };

void fpsim_engine_plan_plain(fpsim_engine_plan *plan, const char *name, int round)
{
    memset(plan, 0, sizeof *plan);
    snprintf(plan->name, sizeof plan->name, "%s", name);
    plan->act_round = round;
    plan->operand_round = round;
    plan->out_round = round;
    plan->hp_head = 1;
}

static fpsim_status plan_from_recipe_name(fpsim_engine_plan *plan, const char *name);

/* "RECIPE@accum=MODEL": the recipe, then the accumulation model; the plan keeps the full text.
 * '@' takes nothing else (no recipe or scheme text contains one). */
fpsim_status fpsim_engine_plan_from_recipe(fpsim_engine_plan *plan, const char *name)
{
    const char *at = strchr(name, '@');
    if (at && strncmp(at, "@accum=", 7))
        return fpsim_fail(FPSIM_ENAME, "recipe '%s': unknown suffix '%s' (the only one is @accum=MODEL)", name, at);
    if (!at) return plan_from_recipe_name(plan, name);
    char recipe[FPSIM_SCHEME_TEXT_MAX];
    size_t n = (size_t)(at - name);
    if (n >= sizeof recipe) return fpsim_fail(FPSIM_EINVAL, "recipe '%s': too long", name);
    memcpy(recipe, name, n);
    recipe[n] = '\0';
    fpsim_status st = plan_from_recipe_name(plan, recipe);
    if (!st) st = fpsim_engine_plan_set_accum(plan, at + 7);
    if (!st) snprintf(plan->name, sizeof plan->name, "%s", name);
    return st;
}

fpsim_status fpsim_engine_plan_set_accum(fpsim_engine_plan *plan, const char *model)
{
    fpsim_accum a;
    fpsim_status st = fpsim_accum_parse(&a, model);
    if (st) return st;
    plan->accum = a;
    plan->accum_set = a.kind != FPSIM_ACCUM_FP32_BLAS;
    return FPSIM_OK;
}

static int is_fp8_elem(int f) { return f == FPSIM_E4M3 || f == FPSIM_E5M2; }

/* 0: per-tensor FP8, 1: 1x128 (VEC128), 128: 128x128 (BLK128x128), -1: not a cuBLASLt FP8 mode. */
static int fp8_scale_mode(const fpsim_scheme *s)
{
    if (!s || !is_fp8_elem(s->elem)) return -1;
    if (s->kind == FPSIM_KIND_FP8_TENSOR) return 0;
    if (s->kind != FPSIM_KIND_FP8_BLOCK || s->tile_cols != 128) return -1;
    return s->tile_rows == 1 || s->tile_rows == 128 ? (int)s->tile_rows : -1;
}

int fpsim_engine_accum_route(const fpsim_engine_plan *plan, const fpsim_scheme *sa, const fpsim_scheme *sb,
                             fpsim_accum *model, const char **why)
{
    *model = plan->accum;
    *why = "";
    if (!plan->accum_set) return FPSIM_ROUTE_SGEMM;
    fpsim_accum_kind k = plan->accum.kind;
    int tensor_core = k == FPSIM_ACCUM_HOPPER_QGMMA || k == FPSIM_ACCUM_HOPPER_HGMMA ||
                      k == FPSIM_ACCUM_MMA_SYNC_FP8;
    if (!sa && !sb) {
        if (plan->operand_round != FPSIM_ACT_BF16) {
            *why = "operands not BF16: no tensor-core model, BLAS sgemm";
            return FPSIM_ROUTE_SGEMM;
        }
        /* BF16 operands go through HGMMA on Hopper whatever the FP8 GEMMs use. */
        if (tensor_core) fpsim_accum_parse(model, "hopper-hgmma");
        return FPSIM_ROUTE_BF16;
    }
    int ma = fp8_scale_mode(sa), mb = fp8_scale_mode(sb);
    if (!sa || !sb) {
        *why = "one operand quantized, one not: dequantized, BLAS sgemm";
        return FPSIM_ROUTE_SGEMM;
    }
    if (ma < 0 || mb < 0) {
        *why = "scales cuBLASLt on Hopper cannot apply (MX / NVFP4 / RHT): dequantized, BLAS sgemm";
        return FPSIM_ROUTE_SGEMM;
    }
    if ((ma == 0) != (mb == 0)) {
        *why = "per-tensor with block scales: dequantized, BLAS sgemm";
        return FPSIM_ROUTE_SGEMM;
    }
    if (k == FPSIM_ACCUM_HOPPER_HGMMA) {
        *why = "hopper-hgmma takes BF16/FP16, not FP8: dequantized, BLAS sgemm";
        return FPSIM_ROUTE_SGEMM;
    }
    if (ma > 0 && k == FPSIM_ACCUM_HOPPER_QGMMA && plan->accum.promote != 128) {
        *why = "block-scaled FP8 promotes every 128 (cuBLASLt refuses fast accumulation): "
               "dequantized, BLAS sgemm";
        return FPSIM_ROUTE_SGEMM;
    }
    return FPSIM_ROUTE_FP8;
}

/* The two operand roles of each pass: fprop ACT x WEIGHT, dgrad GRAD x WEIGHT, wgrad GRAD x ACT. */
static const int pass_roles[FPSIM_PLAN_PASSES][2] = {
    [FPSIM_PASS_FPROP] = {FPSIM_ROLE_ACT, FPSIM_ROLE_WEIGHT},
    [FPSIM_PASS_DGRAD] = {FPSIM_ROLE_GRAD, FPSIM_ROLE_WEIGHT},
    [FPSIM_PASS_WGRAD] = {FPSIM_ROLE_GRAD, FPSIM_ROLE_ACT},
};

static size_t route_text(char *buf, size_t cap, size_t at, const char *label, const fpsim_engine_plan *plan,
                         const fpsim_scheme *sa, const fpsim_scheme *sb)
{
    fpsim_accum m;
    const char *why;
    int r = fpsim_engine_accum_route(plan, sa, sb, &m, &why);
    int n;
    if (r == FPSIM_ROUTE_FP8) n = snprintf(buf + at, cap - at, "%s%s: %s (FP8 codes, scales)", at ? "; " : "", label, m.name);
    else if (r == FPSIM_ROUTE_BF16) n = snprintf(buf + at, cap - at, "%s%s: %s (BF16)", at ? "; " : "", label, m.name);
    else n = snprintf(buf + at, cap - at, "%s%s: fp32 (%s)", at ? "; " : "", label, *why ? why : "BLAS sgemm");
    if (n < 0) return at;
    return at + (size_t)n < cap ? at + (size_t)n : cap - 1;
}

void fpsim_engine_plan_accum_text(const fpsim_engine_plan *plan, char *buf, size_t cap)
{
    if (!cap) return;
    buf[0] = '\0';
    size_t at = 0;
    for (int p = 0; p < FPSIM_PLAN_PASSES; p++) {
        const int *r = pass_roles[p];
        const fpsim_scheme *sa = plan->quantized[p][r[0]] ? &plan->scheme[p][r[0]] : NULL;
        const fpsim_scheme *sb = plan->quantized[p][r[1]] ? &plan->scheme[p][r[1]] : NULL;
        at = route_text(buf, cap, at, fpsim_pass_name(p), plan, sa, sb);
    }
    at = route_text(buf, cap, at, "high-precision layers", plan, NULL, NULL);
}

static fpsim_status plan_from_recipe_name(fpsim_engine_plan *plan, const char *name)
{
    if (!strcmp(name, "fp64")) {
        fpsim_engine_plan_plain(plan, "fp64", PLAN_FP64);
        return FPSIM_OK;
    }
    if (!strncmp(name, "fp64;", 5))
        return fpsim_fail(FPSIM_EINVAL, "recipe '%s': fp64, the unrounded control, takes no overrides (it is not "
                          "a recipe preset and rounds nothing)", name);
    /* An unknown base name (the text before the first ';', when it is not a key=value clause)
     * is told with the valid ones, the fp64 control among them; other errors are the recipe
     * library's own. */
    size_t base = strcspn(name, ";");
    if (base > 0 && !memchr(name, '=', base)) {
        int known = 0;
        for (size_t i = 0; i < fpsim_recipe_count() && !known; i++) {
            const char *p = fpsim_recipe_name_at(i);
            known = strlen(p) == base && !strncmp(p, name, base);
        }
        if (!known) {
            char list[512];
            size_t len = 0;
            list[0] = '\0';
            for (size_t i = 0; i < fpsim_recipe_count() && len + 1 < sizeof list; i++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s, ", fpsim_recipe_name_at(i));
            return fpsim_fail(FPSIM_ENAME, "unknown recipe '%.*s' (valid: %sor fp64, the unrounded control)",
                              (int)base, name, list);
        }
    }
    fpsim_recipe r;
    fpsim_status st = fpsim_recipe_parse(&r, name);
    if (st) return st;
    int hp = r.hp == FPSIM_PREC_BF16 ? PLAN_BF16 : PLAN_FP32;
    fpsim_engine_plan_plain(plan, name, hp);
    for (int p = 0; p < FPSIM_PLAN_PASSES; p++)
        for (int k = 0; k < FPSIM_PLAN_ROLES; k++) {
            const fpsim_operand_quant *oq = &r.op[p][k];
            plan->quantized[p][k] = oq->used && oq->quantized;
            if (plan->quantized[p][k]) plan->scheme[p][k] = oq->scheme;
        }
    plan->hp_first_layers = r.first_hp_layers;
    plan->hp_last_layers = r.last_hp_layers;
    plan->hp_head = 1;
    return FPSIM_OK;
}

fpsim_status fpsim_engine_plan_check_layers(const fpsim_engine_plan *plan, int layers)
{
    int any = 0;
    for (int p = 0; p < FPSIM_PLAN_PASSES; p++)
        for (int k = 0; k < FPSIM_PLAN_ROLES; k++) any |= plan->quantized[p][k];
    int hp = plan->hp_first_layers + plan->hp_last_layers;
    if (any && hp > 0 && hp >= layers)
        return fpsim_fail(FPSIM_EINVAL,
                          "recipe '%s': first_hp=%d and last_hp=%d keep every one of the model's %d layer(s) "
                          "in high precision: it would quantize nothing",
                          plan->name, plan->hp_first_layers, plan->hp_last_layers, layers);
    return FPSIM_OK;
}

int fpsim_engine_plan_block(const fpsim_engine_plan *plan)
{
    int block = 1;
    for (int p = 0; p < FPSIM_PLAN_PASSES; p++)
        for (int k = 0; k < FPSIM_PLAN_ROLES; k++) {
            if (!plan->quantized[p][k]) continue;
            const fpsim_scheme *s = &plan->scheme[p][k];
            if (s->kind == FPSIM_KIND_FP8_TENSOR) continue;
            if (s->tile_cols > block) block = s->tile_cols;
            if (s->tile_rows > block) block = s->tile_rows;
        }
    return block;
}
