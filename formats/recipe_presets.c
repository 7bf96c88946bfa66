/* recipe_presets.c: the named recipes, each as the text of the recipe grammar (fpsim_recipe.h)
 * over a high-precision base, with the source of every choice.
 *
 *   nemo-rl-fp8    NVIDIA-NeMo/RL FP8 training (TE Float8BlockScaling with
 *                  NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1, examples/configs/grpo_math_8B_megatron_fp8.yaml): W 128x128,
 *                  X and dY 1x128, E4M3 everywhere, FP32 scales; BF16 elsewhere.
 *   te-fp8-block   TE Float8BlockScaling defaults: the same with power-of-two scales.
 *   vllm-fp8-block NeMo RL's FP8 generator (vLLM with NeMo RL's patches, DeepGEMM GEMMs); forward
 *                  operands only matter there. W: NeMo RL's refit cast cast_tensor_to_fp8_blockwise
 *                  (nemo_rl/models/generation/vllm/quantization/fp8.py): multiplier 448/amax per
 *                  128x128 block, 1 for amax 0 or Inf, descale its reciprocal: TE's FP32 rule
 *                  (te-fp32) bit for bit, but where 448/amax overflows (amax < 448/FLT_MAX), which
 *                  TE caps and NeMo RL does not. X (and dY, unused by a generator): vLLM's
 *                  per_token_group_quant_fp8 on CUDA, its CUDA op (vllm-cuda): sf =
 *                  fmaxf(amax, 1e-10)/448, elements x / sf. Against the trainer's te-fp32 it
 *                  gives another E4M3 code for 0.03% of Gaussian BF16 elements; deepgemm-fp32,
 *                  its stand-in before Dec 7 2026, for 0.12% (tests/blocks/oracle_vllm_fp8.py).
 *   te-mxfp8       TE MXFP8BlockScaling: E4M3 for all tensors, 1x32, RCEIL (cvt.rp.satfinite).
 *   torchao-mxfp8  torchao MXLinear defaults: E4M3, 1x32, FLOOR (to_mx default).
 *   te-nvfp4       TE NVFP4BlockScaling: W 16x16 2D; X 1x16; dY 1x16 with stochastic rounding;
 *                  RHT on the wgrad (columnwise) copies of X and dY.
 *   torchao-nvfp4  torchao nvfp4_quantize, two-level, 1x16 for every operand.
 *   te-delayed     TE DelayedScaling HYBRID: E4M3 forward (X, W), E5M2 gradients, history 1024,
 *                  max. Needs a stateful fpsim_quantizer per tensor to carry the scale.
 *   te-current     TE Float8CurrentScaling HYBRID: E4M3 forward, E5M2 gradients.
 *   torchao-float8 torchao Float8Linear tensorwise: E4M3 X and W, E5M2 dY (cast config default).
 *   bf16 / fp32    no quantization: operands rounded to BF16, or kept FP32 (the replay control,
 *                  alias identity). */
#include "fpsim_recipe.h"

#include <stddef.h>

typedef struct recipe_preset {
    const char *name;
    const char *text;
    const char *description;
} recipe_preset;

static const recipe_preset g_presets[] = {
    {"fp32", "hp=fp32", "no quantization, FP32 operands (the replay control; alias identity)"},
    {"identity", "hp=fp32", "alias of fp32"},
    {"bf16", "hp=bf16", "no quantization, BF16 operands and non-GEMM ops"},
    {"nemo-rl-fp8",
     "hp=bf16;w=fp8-block:scale=te-fp32,tile=128x128;x=fp8-block:scale=te-fp32;g=fp8-block:scale=te-fp32",
     "NeMo RL FP8 (TE Float8BlockScaling, FP32 scales): W 128x128, X and dY 1x128, E4M3"},
    {"te-fp8-block",
     "hp=bf16;w=fp8-block:scale=te-pow2,tile=128x128;x=fp8-block:scale=te-pow2;g=fp8-block:scale=te-pow2",
     "TE Float8BlockScaling defaults: W 128x128, X and dY 1x128, E4M3, power-of-two scales"},
    {"vllm-fp8-block",
     "hp=bf16;w=fp8-block:scale=te-fp32,tile=128x128;x=fp8-block:scale=vllm-cuda;g=fp8-block:scale=vllm-cuda",
     "NeMo RL's vLLM generator: W 128x128 as its refit cast (448/amax), X 1x128 x / (amax/448) (vLLM's CUDA op)"},
    {"te-mxfp8", "hp=bf16;w=mxfp8-e4m3:rule=rceil-sat;x=mxfp8-e4m3:rule=rceil-sat;g=mxfp8-e4m3:rule=rceil-sat",
     "TE MXFP8BlockScaling: E4M3 everywhere, 1x32 blocks along K, RCEIL E8M0 scales, NaN ignored"},
    {"torchao-mxfp8", "hp=bf16;w=mxfp8-e4m3:rule=floor;x=mxfp8-e4m3:rule=floor;g=mxfp8-e4m3:rule=floor",
     "torchao MXLinear defaults: E4M3, 1x32, FLOOR E8M0 scales (OCP), NaN propagates"},
    {"te-nvfp4",
     "hp=bf16;w=nvfp4:tile=16x16;x=nvfp4;g=nvfp4:sr=1;wgrad.x=nvfp4:rht=1;wgrad.g=nvfp4:sr=1,rht=1",
     "TE NVFP4BlockScaling: W 2D 16x16, X 1x16, dY 1x16 with SR, RHT on wgrad operands"},
    {"torchao-nvfp4", "hp=bf16;w=nvfp4:chain=torchao;x=nvfp4:chain=torchao;g=nvfp4:chain=torchao",
     "torchao nvfp4_quantize (CPU chain), two-level, 1x16 for every operand"},
    {"te-delayed",
     "hp=bf16;w=fp8-tensor:mode=delayed;x=fp8-tensor:mode=delayed;g=fp8-tensor:mode=delayed,fmt=e5m2",
     "TE DelayedScaling HYBRID: E4M3 X and W, E5M2 dY, amax history 1024, max, margin 0"},
    {"te-current", "hp=bf16;w=fp8-tensor;x=fp8-tensor;g=fp8-tensor:fmt=e5m2",
     "TE Float8CurrentScaling HYBRID: per-tensor E4M3 X and W, E5M2 dY"},
    {"torchao-float8",
     "hp=bf16;w=fp8-tensor:mode=torchao;x=fp8-tensor:mode=torchao;g=fp8-tensor:mode=torchao,fmt=e5m2",
     "torchao Float8Linear tensorwise: E4M3 X and W, E5M2 dY, scale 448/amax (eps 1e-12)"},
};
#define N_PRESETS (sizeof g_presets / sizeof g_presets[0])

size_t fpsim_recipe_count(void)
{
    return N_PRESETS;
}

const char *fpsim_recipe_name_at(size_t i)
{
    return i < N_PRESETS ? g_presets[i].name : NULL;
}

/* Internal to recipe.c: the text and description of preset i. */
const char *fpsim_recipe_preset_text(size_t i)
{
    return i < N_PRESETS ? g_presets[i].text : NULL;
}

const char *fpsim_recipe_preset_description(size_t i)
{
    return i < N_PRESETS ? g_presets[i].description : NULL;
}
