/* mismatch_suite.c: the configurations of `fpsim mismatch --suite` (rl-and-recipes.md 6.2).
 *
 *   bf16            A   BF16 decode (pairwise reductions) vs BF16 prefill (sequential): kernel
 *                       order only
 *   fp8-e2e         C   vLLM/DeepGEMM block FP8 generator vs NeMo RL FP8 trainer (FP32 scales
 *                       on both sides); FP32 (sgemm) accumulation in the suite, for speed:
 *                       accum=hopper-qgmma is a per-product emulation, ~50x slower
 *   fp8-gen-only    B   the same FP8 generator vs a BF16 trainer
 *   fp8-pow2-train  Cs  FP8 generator (FP32 scales) vs TE default FP8 trainer (power-of-two)
 *   fp8-kv-fresh    D   fp8-e2e + FP8 KV cache, scales recalibrated every step
 *   fp8-kv-stale    Ds  the same with the scales of step 0
 *   nvfp4-gen-only  E   TE NVFP4 generator vs BF16 trainer */
#include <stdio.h>
#include <string.h>

#include "fpsim_mismatch.h"

static fpsim_status add(fpsim_mm_config *c, const char *name, const char *gen, const char *train)
{
    int i = c->nconfigs;
    if (i >= FPSIM_MM_MAX_CONFIGS) return fpsim_fail(FPSIM_EINVAL, "too many configurations");
    snprintf(c->names[i], sizeof c->names[i], "%s", name);
    fpsim_engine_config_generator(&c->gen[i], "bf16");
    fpsim_engine_config_trainer(&c->train[i], "bf16");
    fpsim_status st = fpsim_engine_config_parse(&c->gen[i], gen);
    if (!st) st = fpsim_engine_config_parse(&c->train[i], train);
    if (!st) c->nconfigs = i + 1;
    return st;
}

fpsim_status fpsim_mm_config_suite(fpsim_mm_config *c)
{
    c->nconfigs = 0;
    const char *g8 = "vllm-fp8-block";
    fpsim_status st = add(c, "bf16", "bf16", "bf16");
    if (!st) st = add(c, "fp8-e2e", g8, "nemo-rl-fp8");
    if (!st) st = add(c, "fp8-gen-only", g8, "bf16");
    if (!st) st = add(c, "fp8-pow2-train", g8, "te-fp8-block");
    if (!st) st = add(c, "fp8-kv-fresh", "vllm-fp8-block,kv=fp8,kv_scales=fresh",
                      "nemo-rl-fp8");
    if (!st) st = add(c, "fp8-kv-stale", "vllm-fp8-block,kv=fp8,kv_scales=stale",
                      "nemo-rl-fp8");
    if (!st) st = add(c, "nvfp4-gen-only", "te-nvfp4", "bf16");
    return st;
}
