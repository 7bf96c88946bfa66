/* cmd_recipes.c: `fpsim recipes`: the named training recipes (formats/fpsim_recipe.h).
 *
 *   fpsim recipes [--json]          every preset with a one-line description
 *   fpsim recipes RECIPE [--json]   the pass x role table of one preset or custom recipe text */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_recipe.h"

static const char *const CMD = "recipes";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim recipes [--json]\n"
            "       fpsim recipes RECIPE [--json]\n\n"
            "Without RECIPE: the named recipes, one line each. With RECIPE (a preset name or a\n"
            "custom spec such as 'te-nvfp4;first_hp=1;g=mxfp8-e5m2'): which scheme quantizes each\n"
            "GEMM operand in each pass (fprop, dgrad, wgrad) and along which axis.\n"
            "Grammar of custom specs: docs/quantizers.md \"Recipes\".\n\n"
            "  --json    machine-readable output\n");
}

static const char *precision_name(int hp) { return hp == FPSIM_PREC_FP32 ? "fp32" : "bf16"; }

/* The operand symbol of a role in a pass (Y = X W^T; dX = dY W; dW = dY^T X). */
static const char *operand_symbol(int role)
{
    static const char *const sym[FPSIM_ROLE_COUNT] = {"W", "X", "dY"};
    return sym[role];
}

static int list_recipes(int json)
{
    size_t n = fpsim_recipe_count();
    if (json) printf("{\"recipes\": [");
    for (size_t i = 0; i < n; i++) {
        fpsim_recipe r;
        const char *name = fpsim_recipe_name_at(i);
        fpsim_status st = fpsim_recipe_find(&r, name);
        if (st) return fpsim_cli_fail(CMD, st);
        if (json) {
            printf("%s\n  {\"name\": ", i ? "," : "");
            fpsim_cli_json_string(stdout, r.name);
            printf(", \"description\": ");
            fpsim_cli_json_string(stdout, r.description);
            printf("}");
        } else {
            printf("%-16s %s\n", r.name, r.description);
        }
    }
    if (json) printf("\n]}\n");
    else printf("\nfpsim recipes NAME shows the scheme of every operand of a recipe.\n");
    return FPSIM_EXIT_OK;
}

static void show_text(const fpsim_recipe *r, const char *canonical)
{
    printf("recipe %s: %s\n", r->name[0] ? r->name : "(custom)", r->description);
    printf("high precision: %s; layers kept in high precision: first %d, last %d\n",
           precision_name(r->hp), r->first_hp_layers, r->last_hp_layers);
    printf("canonical: %s\n\n", canonical);
    printf("%-6s %-10s %-3s %-5s %s\n", "pass", "role", "op", "axis", "scheme");
    for (int p = 0; p < FPSIM_PASS_COUNT; p++) {
        for (int k = 0; k < FPSIM_ROLE_COUNT; k++) {
            const fpsim_operand_quant *o = &r->op[p][k];
            if (!o->used) continue;
            char scheme[FPSIM_SCHEME_TEXT_MAX];
            if (o->quantized) fpsim_scheme_format(scheme, sizeof scheme, &o->scheme);
            else snprintf(scheme, sizeof scheme, "none (%s)", precision_name(r->hp));
            printf("%-6s %-10s %-3s %-5s %s\n", fpsim_pass_name(p), fpsim_role_name(k), operand_symbol(k),
                   o->axis == FPSIM_AXIS_COLS ? "cols" : "rows", scheme);
        }
    }
    printf("\nfprop Y = X W^T (blocks along K), dgrad dX = dY W (along N), wgrad dW = dY^T X (along M);\n"
           "axis cols = the columnwise copy, quantized from the high-precision tensor.\n");
}

static void show_json(const fpsim_recipe *r, const char *canonical)
{
    printf("{\"name\": ");
    fpsim_cli_json_string(stdout, r->name);
    printf(", \"description\": ");
    fpsim_cli_json_string(stdout, r->description);
    printf(", \"hp\": \"%s\", \"first_hp_layers\": %d, \"last_hp_layers\": %d, \"canonical\": ",
           precision_name(r->hp), r->first_hp_layers, r->last_hp_layers);
    fpsim_cli_json_string(stdout, canonical);
    printf(",\n \"operands\": [");
    int first = 1;
    for (int p = 0; p < FPSIM_PASS_COUNT; p++) {
        for (int k = 0; k < FPSIM_ROLE_COUNT; k++) {
            const fpsim_operand_quant *o = &r->op[p][k];
            if (!o->used) continue;
            printf("%s\n  {\"pass\": \"%s\", \"role\": \"%s\", \"axis\": \"%s\", \"quantized\": %s, \"scheme\": ",
                   first ? "" : ",", fpsim_pass_name(p), fpsim_role_name(k),
                   o->axis == FPSIM_AXIS_COLS ? "cols" : "rows", o->quantized ? "true" : "false");
            if (o->quantized) {
                char scheme[FPSIM_SCHEME_TEXT_MAX];
                fpsim_scheme_format(scheme, sizeof scheme, &o->scheme);
                fpsim_cli_json_string(stdout, scheme);
            } else {
                printf("null");
            }
            printf("}");
            first = 0;
        }
    }
    printf("\n]}\n");
}

int cmd_recipes(int argc, char **argv)
{
    if (fpsim_cli_wants_help(argc, argv)) {
        usage(stdout);
        return FPSIM_EXIT_OK;
    }
    int json = 0;
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (argv[i][0] == '-' && argv[i][1] == '-') return fpsim_cli_unknown_option(CMD, argv[i]);
        else if (!name) name = argv[i];
        else {
            fpsim_cli_error(CMD, "one recipe at a time ('%s' and '%s' given)", name, argv[i]);
            return FPSIM_EXIT_USAGE;
        }
    }
    if (!name) return list_recipes(json);
    fpsim_recipe r;
    fpsim_status st = fpsim_recipe_parse(&r, name);
    if (st) return fpsim_cli_fail(CMD, st);
    char canonical[4096];
    st = fpsim_recipe_format(canonical, sizeof canonical, &r);
    if (st) return fpsim_cli_fail(CMD, st);
    if (json) show_json(&r, canonical);
    else show_text(&r, canonical);
    return FPSIM_EXIT_OK;
}
