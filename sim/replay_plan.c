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

fpsim_status fpsim_engine_plan_from_recipe(fpsim_engine_plan *plan, const char *name)
{
    if (!strcmp(name, "fp64")) {
        fpsim_engine_plan_plain(plan, "fp64", PLAN_FP64);
        return FPSIM_OK;
    }
    fpsim_recipe r;
    fpsim_status st = fpsim_recipe_parse(&r, name);
    if (st) {
        if (st == FPSIM_ENAME) {
            /* Name the extra control too, next to the recipe library's own list. */
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", fpsim_last_error());
            return fpsim_fail(FPSIM_ENAME, "%s (or fp64, the unrounded control)", msg);
        }
        return st;
    }
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
