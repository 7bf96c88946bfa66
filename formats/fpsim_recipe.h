/* fpsim_recipe.h: named training recipes: which block scheme quantizes each GEMM operand.
 *
 * A linear layer Y = X W^T (X: M x K activations, W: N x K weights, torch Linear layout) runs
 * three GEMMs per step, each with two quantized operands whose blocks run along that GEMM's
 * reduction dimension:
 *   fprop  Y  = X  . W^T   reduce over K: X rowwise (axis rows), W rowwise (axis rows)
 *   dgrad  dX = dY . W     reduce over N: dY rowwise (axis rows), W columnwise (axis cols)
 *   wgrad  dW = dY^T . X   reduce over M: dY columnwise (axis cols), X columnwise (axis cols)
 * A recipe gives, for every (pass, role), whether the operand is quantized and with which scheme
 * (fpsim_block.h); operands that are not quantized are rounded to the recipe's high precision
 * (bf16 or fp32). Per-layer overrides keep the first / last N layers in high precision
 * (NeMo RL num_first_layers_in_bf16 / num_last_layers_in_bf16; NVFP4 paper's selective BF16).
 *
 * Text form (docs/quantizers.md "Recipes"): `BASE[;key=value]...` with BASE a preset name and keys
 *   w= x= g=SCHEME          scheme of a role in every pass ("none" = high precision)
 *   fprop.x= fprop.w= dgrad.g= dgrad.w= wgrad.x= wgrad.g=SCHEME   one operand of one pass
 *   first_hp=N last_hp=N    layers kept in high precision at either end
 *   hp=bf16|fp32            precision of unquantized operands and non-GEMM ops
 * SCHEME is any fpsim_scheme text (it may contain ':' and ','; clauses are split at ';'). */
#ifndef FPSIM_RECIPE_H
#define FPSIM_RECIPE_H

#include <stddef.h>

#include "fpsim_block.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpsim_pass {
    FPSIM_PASS_FPROP = 0,
    FPSIM_PASS_DGRAD,
    FPSIM_PASS_WGRAD,
    FPSIM_PASS_COUNT
} fpsim_pass;

typedef enum fpsim_role {
    FPSIM_ROLE_WEIGHT = 0, /* W */
    FPSIM_ROLE_ACT,        /* X, the layer input */
    FPSIM_ROLE_GRAD,       /* dY, the gradient of the layer output */
    FPSIM_ROLE_COUNT
} fpsim_role;

typedef enum fpsim_precision {
    FPSIM_PREC_FP32 = 0,
    FPSIM_PREC_BF16
} fpsim_precision;

/* One operand of one pass. */
typedef struct fpsim_operand_quant {
    int quantized;       /* 0: the operand is only rounded to the recipe's hp precision */
    int used;            /* 0: this role takes no part in this pass (e.g. W in wgrad) */
    int axis;            /* FPSIM_AXIS_ROWS / FPSIM_AXIS_COLS of the role's tensor (see above) */
    fpsim_scheme scheme; /* valid when quantized */
} fpsim_operand_quant;

#define FPSIM_RECIPE_NAME_MAX 32
#define FPSIM_RECIPE_DESC_MAX 160
typedef struct fpsim_recipe {
    char name[FPSIM_RECIPE_NAME_MAX];
    char description[FPSIM_RECIPE_DESC_MAX];
    fpsim_operand_quant op[FPSIM_PASS_COUNT][FPSIM_ROLE_COUNT];
    int hp;              /* fpsim_precision of unquantized operands and non-GEMM ops */
    int first_hp_layers; /* layers [0, first_hp_layers) run with no quantization */
    int last_hp_layers;  /* the last last_hp_layers layers likewise */
} fpsim_recipe;

/* A preset by name (bf16, fp32/identity, nemo-rl-fp8, te-fp8-block, te-mxfp8, torchao-mxfp8,
 * te-nvfp4, torchao-nvfp4, te-delayed, te-current, torchao-float8, mxfp4); unknown -> FPSIM_ENAME
 * listing the presets. */
fpsim_status fpsim_recipe_find(fpsim_recipe *out, const char *name);
/* A preset name or a custom text spec (grammar above). */
fpsim_status fpsim_recipe_parse(fpsim_recipe *out, const char *text);
/* Number of presets; line i: "name  description". */
size_t fpsim_recipe_count(void);
fpsim_status fpsim_recipe_list(size_t i, char *buf, size_t cap);
const char *fpsim_recipe_name_at(size_t i);
/* The operand rule for layer `layer` of `nlayers` (applies the first/last overrides). */
const fpsim_operand_quant *fpsim_recipe_operand(const fpsim_recipe *r, int layer, int nlayers,
                                                fpsim_pass pass, fpsim_role role);
/* Canonical text of a recipe (every operand's scheme; parses back to an equal recipe). */
fpsim_status fpsim_recipe_format(char *buf, size_t cap, const fpsim_recipe *r);
const char *fpsim_pass_name(int pass); /* "fprop" ... */
const char *fpsim_role_name(int role); /* "weight", "act", "grad" */

#ifdef __cplusplus
}
#endif
#endif
