/* test_recipe.c: scheme and recipe text (parse, canonical text round trip, errors), the recipe
 * presets' operand tables against the documented TE / torchao / NeMo RL placements, and the
 * per-layer overrides. */
#include "fpsim_recipe.h"
#include "fpsim_core_types.h"
#include "test_util.h"

#include <string.h>

static test_counter tc = TEST_COUNTER_INIT("schemes and recipes");

static void scheme_roundtrips(void)
{
    size_t n;
    const char *const *names = fpsim_scheme_names(&n);
    TEST_CHECK(&tc, n == 8, "8 scheme names, got %zu", n);
    static const char *const extra[] = {
        "mxfp8-e4m3:rule=rceil-sat", "mxfp4:rule=microxcaling,tile=32x32", "mxfp6-e3m2:rule=gfloat,nan=ignore",
        "nvfp4:chain=torchao-cuda,global=0", "nvfp4:sr=1,rht=1", "nvfp4:tile=16x16",
        "fp8-block:scale=deepgemm-ue8m0,tile=128x128", "fp8-block:scale=te-fp32,eps=1e-6,fmt=e5m2",
        "fp8-tensor:mode=delayed,margin=2,history=16,algo=most_recent",
        "fp8-tensor:mode=torchao,pow2=1", "mxfp8-e5m2:rule=rceil,ao=0.18,cast=nv"};
    for (size_t i = 0; i < n + sizeof extra / sizeof extra[0]; i++) {
        const char *text = i < n ? names[i] : extra[i - n];
        fpsim_scheme a, b;
        char t1[FPSIM_SCHEME_TEXT_MAX], t2[FPSIM_SCHEME_TEXT_MAX];
        fpsim_status st = fpsim_scheme_parse(&a, text);
        TEST_CHECK(&tc, st == FPSIM_OK, "parse '%s': %s", text, fpsim_last_error());
        if (st != FPSIM_OK)
            continue;
        fpsim_scheme_format(t1, sizeof t1, &a);
        st = fpsim_scheme_parse(&b, t1);
        TEST_CHECK(&tc, st == FPSIM_OK, "reparse '%s': %s", t1, fpsim_last_error());
        fpsim_scheme_format(t2, sizeof t2, &b);
        TEST_CHECK(&tc, strcmp(t1, t2) == 0 && memcmp(&a, &b, sizeof a) == 0,
                   "round trip '%s' -> '%s' -> '%s'", text, t1, t2);
    }
    char line[512];
    for (size_t i = 0; i < n; i++)
        TEST_CHECK(&tc, fpsim_scheme_list(i, line, sizeof line) == FPSIM_OK && strstr(line, names[i]),
                   "list line %zu", i);
    /* defaults that decide bits */
    fpsim_scheme s;
    fpsim_scheme_parse(&s, "mxfp8-e4m3");
    TEST_CHECK(&tc, s.rule == FPSIM_MX_FLOOR && s.nan == FPSIM_NAN_PROPAGATE && s.tile_cols == 32,
               "mxfp8 defaults %s", "floor/propagate/1x32");
    fpsim_scheme_parse(&s, "mxfp8-e4m3:rule=rceil-sat");
    TEST_CHECK(&tc, s.nan == FPSIM_NAN_IGNORE, "TE rule ignores NaN by default %s", "");
    fpsim_scheme_parse(&s, "fp8-block:scale=deepgemm-fp32");
    TEST_CHECK(&tc, s.eps == 1e-4f, "DeepGEMM amax floor 1e-4, got %g", (double)s.eps);
    fpsim_scheme_parse(&s, "nvfp4");
    TEST_CHECK(&tc, s.chain == FPSIM_NVFP4_TE && s.nan == FPSIM_NAN_IGNORE && s.tile_cols == 16 && !s.sr && !s.rht,
               "nvfp4 defaults %s", "te");

    /* errors: the message names the bad part and lists valid values */
    static const struct {
        const char *text;
        fpsim_status st;
        const char *must;
    } bad[] = {
        {"mxfp9", FPSIM_ENAME, "mxfp8-e4m3"},
        {"mxfp8-e4m3:rule=round", FPSIM_ENAME, "rceil-sat"},
        {"mxfp8-e4m3:chain=te", FPSIM_EINVAL, "does not apply"},
        {"mxfp8-e4m3:tile=1x16", FPSIM_EINVAL, "1x32"},
        {"nvfp4:sr=2", FPSIM_EINVAL, "0, 1"},
        {"nvfp4:bogus=1", FPSIM_ENAME, "chain"},
        {"nvfp4:rht=1,tile=16x16", FPSIM_EINVAL, "1x16"},
        {"fp8-block:eps=-1", FPSIM_EINVAL, "eps"},
        {"fp8-tensor:mode=delayed,history=0", FPSIM_EINVAL, "history"},
        {"fp8-tensor:history=5", FPSIM_EINVAL, "mode=delayed only"}, /* no effect in current mode */
        {"fp8-tensor:mode=torchao,margin=1", FPSIM_EINVAL, "mode=delayed only"},
        {"nvfp4:rhtsum=mma", FPSIM_EINVAL, "without rht=1"},
        {"fp8-tensor:eps=1e-400", FPSIM_EINVAL, "underflows to 0"}, /* was taken as eps=0 */
        {"fp8-block:eps=1e-60", FPSIM_EINVAL, "underflows to 0"},
        {"nvfp4:", FPSIM_EINVAL, "nothing"},
        {"nvfp4:sr", FPSIM_EINVAL, "key=value"},
        {"", FPSIM_EINVAL, "empty"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fpsim_status st = fpsim_scheme_parse(&s, bad[i].text);
        TEST_CHECK(&tc, st == bad[i].st && strstr(fpsim_last_error(), bad[i].must),
                   "bad scheme '%s': status %d, message '%s'", bad[i].text, (int)st, fpsim_last_error());
    }
    /* an eps of 0, or one that float32 holds (subnormal included), is kept */
    TEST_CHECK(&tc, fpsim_scheme_parse(&s, "fp8-tensor:eps=0") == FPSIM_OK && s.eps == 0.0f, "eps=0: %s",
               fpsim_last_error());
    TEST_CHECK(&tc, fpsim_scheme_parse(&s, "fp8-tensor:eps=1e-40") == FPSIM_OK && s.eps > 0.0f, "eps=1e-40: %s",
               fpsim_last_error());
}

static const fpsim_scheme *op(const fpsim_recipe *r, int p, int k)
{
    return r->op[p][k].quantized ? &r->op[p][k].scheme : NULL;
}

static void recipe_presets(void)
{
    char line[512], text[4096];
    for (size_t i = 0; i < fpsim_recipe_count(); i++) {
        fpsim_recipe r, r2;
        const char *name = fpsim_recipe_name_at(i);
        fpsim_status st = fpsim_recipe_find(&r, name);
        TEST_CHECK(&tc, st == FPSIM_OK, "preset %s: %s", name, fpsim_last_error());
        TEST_CHECK(&tc, fpsim_recipe_list(i, line, sizeof line) == FPSIM_OK && strstr(line, name) &&
                            strlen(line) > strlen(name) + 10,
                   "list line of %s", name);
        TEST_CHECK(&tc, fpsim_recipe_format(text, sizeof text, &r) == FPSIM_OK, "format %s", name);
        st = fpsim_recipe_parse(&r2, text);
        TEST_CHECK(&tc, st == FPSIM_OK, "reparse %s: %s", text, fpsim_last_error());
        int same = r.hp == r2.hp && r.first_hp_layers == r2.first_hp_layers;
        for (int p = 0; p < FPSIM_PASS_COUNT; p++)
            for (int k = 0; k < FPSIM_ROLE_COUNT; k++)
                same = same && r.op[p][k].quantized == r2.op[p][k].quantized &&
                       (!r.op[p][k].quantized ||
                        memcmp(&r.op[p][k].scheme, &r2.op[p][k].scheme, sizeof(fpsim_scheme)) == 0);
        TEST_CHECK(&tc, same, "round trip of %s", name);
    }

    fpsim_recipe r;
    /* NeMo RL: W 128x128, X and dY 1x128, E4M3, FP32 scales (rl-and-recipes.md 1.1) */
    fpsim_recipe_find(&r, "nemo-rl-fp8");
    const fpsim_scheme *w = op(&r, FPSIM_PASS_FPROP, FPSIM_ROLE_WEIGHT),
                       *x = op(&r, FPSIM_PASS_FPROP, FPSIM_ROLE_ACT),
                       *g = op(&r, FPSIM_PASS_DGRAD, FPSIM_ROLE_GRAD);
    TEST_CHECK(&tc, w && x && g && w->tile_rows == 128 && x->tile_rows == 1 && x->tile_cols == 128 &&
                        g->tile_cols == 128 && w->scale == FPSIM_FP8B_TE_FP32 &&
                        g->elem == FPSIM_E4M3 && r.hp == FPSIM_PREC_BF16,
               "nemo-rl-fp8 placement %s", "");
    TEST_CHECK(&tc, r.op[FPSIM_PASS_DGRAD][FPSIM_ROLE_WEIGHT].axis == FPSIM_AXIS_COLS &&
                        r.op[FPSIM_PASS_WGRAD][FPSIM_ROLE_GRAD].axis == FPSIM_AXIS_COLS &&
                        r.op[FPSIM_PASS_WGRAD][FPSIM_ROLE_ACT].axis == FPSIM_AXIS_COLS &&
                        r.op[FPSIM_PASS_FPROP][FPSIM_ROLE_ACT].axis == FPSIM_AXIS_ROWS,
               "operand axes follow each GEMM's K %s", "");
    TEST_CHECK(&tc, !r.op[FPSIM_PASS_WGRAD][FPSIM_ROLE_WEIGHT].used &&
                        !r.op[FPSIM_PASS_FPROP][FPSIM_ROLE_GRAD].used,
               "unused roles %s", "");
    /* TE NVFP4: W 2D, SR only on dY, RHT only on wgrad operands (rl-and-recipes.md 4.1) */
    fpsim_recipe_find(&r, "te-nvfp4");
    w = op(&r, FPSIM_PASS_FPROP, FPSIM_ROLE_WEIGHT);
    TEST_CHECK(&tc, w && w->tile_rows == 16 && !w->sr && !w->rht, "te-nvfp4 W %s", "16x16");
    for (int p = 0; p < FPSIM_PASS_COUNT; p++)
        for (int k = 0; k < FPSIM_ROLE_COUNT; k++) {
            const fpsim_scheme *s = op(&r, p, k);
            if (!r.op[p][k].used)
                continue;
            TEST_CHECK(&tc, s && s->kind == FPSIM_KIND_NVFP4, "te-nvfp4 %s.%s quantized", fpsim_pass_name(p),
                       fpsim_role_name(k));
            if (!s)
                continue;
            TEST_CHECK(&tc, s->sr == (k == FPSIM_ROLE_GRAD), "te-nvfp4 %s.%s sr=%d", fpsim_pass_name(p),
                       fpsim_role_name(k), s->sr);
            TEST_CHECK(&tc, s->rht == (p == FPSIM_PASS_WGRAD), "te-nvfp4 %s.%s rht=%d", fpsim_pass_name(p),
                       fpsim_role_name(k), s->rht);
        }
    /* te-delayed: E4M3 forward, E5M2 gradients */
    fpsim_recipe_find(&r, "te-delayed");
    TEST_CHECK(&tc, op(&r, 0, FPSIM_ROLE_ACT)->elem == FPSIM_E4M3 && op(&r, 1, FPSIM_ROLE_GRAD)->elem == FPSIM_E5M2 &&
                        op(&r, 0, FPSIM_ROLE_ACT)->mode == FPSIM_TENSOR_DELAYED,
               "te-delayed formats %s", "");

    /* custom text and overrides */
    TEST_CHECK(&tc, fpsim_recipe_parse(&r, "te-nvfp4;first_hp=2;last_hp=1;wgrad.g=nvfp4:sr=1") == FPSIM_OK,
               "custom: %s", fpsim_last_error());
    TEST_CHECK(&tc, !op(&r, FPSIM_PASS_WGRAD, FPSIM_ROLE_GRAD)->rht && op(&r, FPSIM_PASS_WGRAD, FPSIM_ROLE_ACT)->rht,
               "override of one operand %s", "");
    const fpsim_operand_quant *o0 = fpsim_recipe_operand(&r, 1, 10, FPSIM_PASS_FPROP, FPSIM_ROLE_WEIGHT);
    const fpsim_operand_quant *o2 = fpsim_recipe_operand(&r, 2, 10, FPSIM_PASS_FPROP, FPSIM_ROLE_WEIGHT);
    const fpsim_operand_quant *o9 = fpsim_recipe_operand(&r, 9, 10, FPSIM_PASS_DGRAD, FPSIM_ROLE_WEIGHT);
    TEST_CHECK(&tc, o0 && !o0->quantized && o2 && o2->quantized && o9 && !o9->quantized &&
                        o9->axis == FPSIM_AXIS_COLS && o9->used,
               "first/last layer overrides %s", "");
    TEST_CHECK(&tc, fpsim_recipe_parse(&r, "x=mxfp8-e4m3;hp=fp32") == FPSIM_OK && r.hp == FPSIM_PREC_FP32 &&
                        op(&r, 0, FPSIM_ROLE_ACT) && !op(&r, 0, FPSIM_ROLE_WEIGHT),
               "recipe without base %s", fpsim_last_error());

    static const struct {
        const char *text;
        fpsim_status st;
        const char *must;
    } bad[] = {
        {"nemo-rl", FPSIM_ENAME, "nemo-rl-fp8"},
        {"te-nvfp4;zz=1", FPSIM_ENAME, "wgrad.x"},
        {"te-nvfp4;wgrad.w=nvfp4", FPSIM_EINVAL, "no part"},
        {"te-nvfp4;x=nvfp4:rule=floor", FPSIM_EINVAL, "does not apply"},
        {"te-nvfp4;first_hp=-1", FPSIM_EINVAL, "layer count"},
        {"te-nvfp4;;x=none", FPSIM_EINVAL, "empty clause"},
        {"hp=fp16", FPSIM_ENAME, "bf16, fp32"},
        /* rht=1 on one rowwise operand would change nothing (the RHT rotates columnwise copies) */
        {"bf16;fprop.x=nvfp4:rht=1", FPSIM_EINVAL, "rowwise"},
        {"te-nvfp4;dgrad.g=nvfp4:sr=1,rht=1", FPSIM_EINVAL, "wgrad.g="},
        {"bf16;fprop.w=nvfp4:rht=1,rhtsum=mma", FPSIM_EINVAL, "rowwise"},
        /* layers kept in high precision in a recipe that quantizes nothing */
        {"bf16;first_hp=1", FPSIM_EINVAL, "quantizes no operand"},
        {"te-nvfp4;x=none;w=none;g=none;last_hp=2", FPSIM_EINVAL, "quantizes no operand"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fpsim_status st = fpsim_recipe_parse(&r, bad[i].text);
        TEST_CHECK(&tc, st == bad[i].st && strstr(fpsim_last_error(), bad[i].must),
                   "bad recipe '%s': status %d, message '%s'", bad[i].text, (int)st, fpsim_last_error());
    }
}

/* A role-wide rht=1 (x=, g=, w=) rotates the role's columnwise copy only, as the quantizer does
 * (block_quantize.c) and TE: its rowwise uses get the scheme without it, and the recipe says so
 * (it listed "fprop X rows nvfp4:...rht=1" and quantized as plain nvfp4). */
static void recipe_rht_placement(void)
{
    fpsim_recipe r, t;
    TEST_CHECK(&tc, fpsim_recipe_parse(&r, "te-nvfp4;x=nvfp4:rht=1;g=nvfp4:sr=1,rht=1,rhtsum=mma") == FPSIM_OK,
               "role-wide rht=1: %s", fpsim_last_error());
    const fpsim_scheme *fx = op(&r, FPSIM_PASS_FPROP, FPSIM_ROLE_ACT), *wx = op(&r, FPSIM_PASS_WGRAD, FPSIM_ROLE_ACT);
    const fpsim_scheme *dg = op(&r, FPSIM_PASS_DGRAD, FPSIM_ROLE_GRAD), *wg = op(&r, FPSIM_PASS_WGRAD, FPSIM_ROLE_GRAD);
    TEST_CHECK(&tc, fx && wx && !fx->rht && wx->rht, "x=nvfp4:rht=1: fprop X rht=%d, wgrad X rht=%d",
               fx ? fx->rht : -1, wx ? wx->rht : -1);
    TEST_CHECK(&tc, dg && wg && !dg->rht && dg->rhtsum == FPSIM_RHT_EXACT && dg->sr && wg->rht &&
                        wg->rhtsum == FPSIM_RHT_MMA,
               "g=nvfp4:sr=1,rht=1,rhtsum=mma: dgrad dY rht=%d, wgrad dY rht=%d", dg ? dg->rht : -1,
               wg ? wg->rht : -1);
    /* the same operands as te-nvfp4's own text, which names wgrad.x and wgrad.g */
    fpsim_recipe_find(&t, "te-nvfp4");
    TEST_CHECK(&tc, !memcmp(op(&r, 0, FPSIM_ROLE_ACT), op(&t, 0, FPSIM_ROLE_ACT), sizeof(fpsim_scheme)) &&
                        !memcmp(op(&r, 2, FPSIM_ROLE_ACT), op(&t, 2, FPSIM_ROLE_ACT), sizeof(fpsim_scheme)),
               "x=nvfp4:rht=1 in te-nvfp4 changes its X operands %s", "");
    /* the canonical text of the rowwise copy parses back (no rhtsum without rht) */
    char text[4096];
    fpsim_recipe back;
    TEST_CHECK(&tc, fpsim_recipe_format(text, sizeof text, &r) == FPSIM_OK &&
                        fpsim_recipe_parse(&back, text) == FPSIM_OK &&
                        !memcmp(back.op, r.op, sizeof r.op),
               "canonical '%s' parses back: %s", text, fpsim_last_error());
    /* W's columnwise copy is dgrad's: w= rotates it and not fprop's */
    TEST_CHECK(&tc, fpsim_recipe_parse(&r, "bf16;w=nvfp4:rht=1") == FPSIM_OK &&
                        !op(&r, FPSIM_PASS_FPROP, FPSIM_ROLE_WEIGHT)->rht && op(&r, FPSIM_PASS_DGRAD, FPSIM_ROLE_WEIGHT)->rht,
               "w=nvfp4:rht=1: %s", fpsim_last_error());
    /* first_hp beside a quantized operand is kept (the model decides whether it leaves one) */
    TEST_CHECK(&tc, fpsim_recipe_parse(&r, "te-nvfp4;first_hp=5") == FPSIM_OK && r.first_hp_layers == 5,
               "te-nvfp4;first_hp=5: %s", fpsim_last_error());
}

int main(void)
{
    scheme_roundtrips();
    recipe_presets();
    recipe_rht_placement();
    return test_summary(&tc);
}
