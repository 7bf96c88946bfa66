/* recipe.c: recipe text grammar, lookup, per-layer overrides and canonical text.
 *
 * A recipe text is `[BASE;]key=value[;key=value]...` (clauses split at ';', each clause split at
 * its FIRST '=' since scheme texts contain '=' and ','). BASE is a preset name; without it the
 * recipe starts with nothing quantized and BF16 high precision. Later clauses override earlier
 * ones, so `te-nvfp4;first_hp=2;wgrad.g=nvfp4:sr=1` is te-nvfp4 with two BF16 layers and no RHT
 * on dY's wgrad copy. */
#include "fpsim_recipe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *fpsim_recipe_preset_text(size_t i);
const char *fpsim_recipe_preset_description(size_t i);

static const char *const g_pass_names[FPSIM_PASS_COUNT] = {"fprop", "dgrad", "wgrad"};
static const char *const g_role_names[FPSIM_ROLE_COUNT] = {"weight", "act", "grad"};
static const char g_role_keys[FPSIM_ROLE_COUNT] = {'w', 'x', 'g'};

const char *fpsim_pass_name(int pass)
{
    return pass >= 0 && pass < FPSIM_PASS_COUNT ? g_pass_names[pass] : "?";
}

const char *fpsim_role_name(int role)
{
    return role >= 0 && role < FPSIM_ROLE_COUNT ? g_role_names[role] : "?";
}

/* Which roles take part in which pass, and along which axis of the role's tensor the blocks run
 * (X: M x K, W: N x K, dY: M x N; see fpsim_recipe.h). */
static void recipe_clear(fpsim_recipe *r)
{
    static const int used[FPSIM_PASS_COUNT][FPSIM_ROLE_COUNT] = {
        /* weight act grad */
        {1, 1, 0}, /* fprop: X . W^T */
        {1, 0, 1}, /* dgrad: dY . W */
        {0, 1, 1}, /* wgrad: dY^T . X */
    };
    static const int axis[FPSIM_PASS_COUNT][FPSIM_ROLE_COUNT] = {
        {FPSIM_AXIS_ROWS, FPSIM_AXIS_ROWS, FPSIM_AXIS_ROWS},
        {FPSIM_AXIS_COLS, FPSIM_AXIS_ROWS, FPSIM_AXIS_ROWS},
        {FPSIM_AXIS_ROWS, FPSIM_AXIS_COLS, FPSIM_AXIS_COLS},
    };
    memset(r, 0, sizeof *r);
    r->hp = FPSIM_PREC_BF16;
    for (int p = 0; p < FPSIM_PASS_COUNT; p++)
        for (int k = 0; k < FPSIM_ROLE_COUNT; k++) {
            r->op[p][k].used = used[p][k];
            r->op[p][k].axis = axis[p][k];
        }
}

static fpsim_status preset_index(const char *name, size_t *out)
{
    for (size_t i = 0; i < fpsim_recipe_count(); i++)
        if (strcmp(fpsim_recipe_name_at(i), name) == 0) {
            *out = i;
            return FPSIM_OK;
        }
    char list[512];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < fpsim_recipe_count() && len + 1 < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "",
                                fpsim_recipe_name_at(i));
    return fpsim_fail(FPSIM_ENAME, "unknown recipe '%s' (valid: %s)", name, list);
}

/* The operand symbol of a role, for messages. */
static const char *role_symbol(int k)
{
    static const char *const sym[FPSIM_ROLE_COUNT] = {"W", "X", "dY"};
    return sym[k];
}

/* The scheme of one operand. `role_wide`: the clause names the role in every pass (w=, x=, g=).
 *
 * The RHT (nvfp4 rht=1) rotates columnwise copies only (block_quantize.c; TE applies it to the
 * columnwise wgrad operands and never to a rowwise copy), so on a rowwise operand it would be
 * recorded but change nothing. A role-wide clause gives its rowwise uses the scheme without
 * it, which is what is done to them (`x=nvfp4:rht=1`: fprop X `nvfp4`, wgrad X `nvfp4:rht=1`,
 * as te-nvfp4 writes it); a clause naming one rowwise operand with rht=1 is refused. */
static fpsim_status set_operand(fpsim_recipe *r, int p, int k, const char *v, const char *key, int role_wide)
{
    fpsim_operand_quant *o = &r->op[p][k];
    if (!o->used)
        return fpsim_fail(FPSIM_EINVAL, "recipe key '%s': the %s takes no part in %s", key,
                          fpsim_role_name(k), fpsim_pass_name(p));
    if (strcmp(v, "none") == 0) {
        o->quantized = 0;
        return FPSIM_OK;
    }
    fpsim_scheme s;
    fpsim_status st = fpsim_scheme_parse(&s, v);
    if (st != FPSIM_OK) {
        char msg[512]; /* the last-error buffer is rewritten by fpsim_fail: copy it first */
        snprintf(msg, sizeof msg, "%s", fpsim_last_error());
        return fpsim_fail(st, "recipe key '%s': %s", key, msg);
    }
    if (s.kind == FPSIM_KIND_NVFP4 && s.rht && o->axis == FPSIM_AXIS_ROWS) {
        if (!role_wide)
            return fpsim_fail(FPSIM_EINVAL,
                              "recipe key '%s': rht=1 has no effect on %s in %s, a rowwise operand; the RHT "
                              "applies to columnwise copies (TE's wgrad operands: wgrad.x=, wgrad.g=)",
                              key, role_symbol(k), fpsim_pass_name(p));
        s.rht = 0;
        s.rhtsum = FPSIM_RHT_EXACT; /* rhtsum means nothing without rht */
    }
    o->quantized = 1;
    o->scheme = s;
    return FPSIM_OK;
}

static fpsim_status parse_count(const char *key, const char *v, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || n < 0 || n > 100000)
        return fpsim_fail(FPSIM_EINVAL, "recipe key '%s': bad layer count '%s'", key, v);
    *out = (int)n;
    return FPSIM_OK;
}

/* One key=value clause. */
static fpsim_status apply_clause(fpsim_recipe *r, char *clause)
{
    char *eq = strchr(clause, '=');
    if (!eq || eq == clause || eq[1] == '\0')
        return fpsim_fail(FPSIM_EINVAL, "recipe clause '%s' is not key=value", clause);
    *eq = '\0';
    const char *key = clause, *v = eq + 1;
    fpsim_status st;
    if (strcmp(key, "hp") == 0) {
        if (strcmp(v, "bf16") == 0)
            r->hp = FPSIM_PREC_BF16;
        else if (strcmp(v, "fp32") == 0)
            r->hp = FPSIM_PREC_FP32;
        else
            return fpsim_fail(FPSIM_ENAME, "recipe key 'hp': unknown precision '%s' (valid: bf16, fp32)", v);
        return FPSIM_OK;
    }
    if (strcmp(key, "first_hp") == 0)
        return parse_count(key, v, &r->first_hp_layers);
    if (strcmp(key, "last_hp") == 0)
        return parse_count(key, v, &r->last_hp_layers);
    for (int k = 0; k < FPSIM_ROLE_COUNT; k++) {
        /* role in every pass that uses it */
        if (key[0] == g_role_keys[k] && key[1] == '\0') {
            for (int p = 0; p < FPSIM_PASS_COUNT; p++)
                if (r->op[p][k].used && (st = set_operand(r, p, k, v, key, 1)) != FPSIM_OK)
                    return st;
            return FPSIM_OK;
        }
        for (int p = 0; p < FPSIM_PASS_COUNT; p++) {
            size_t n = strlen(g_pass_names[p]);
            if (strncmp(key, g_pass_names[p], n) == 0 && key[n] == '.' && key[n + 1] == g_role_keys[k] &&
                key[n + 2] == '\0')
                return set_operand(r, p, k, v, key, 0);
        }
    }
    return fpsim_fail(FPSIM_ENAME,
                      "unknown recipe key '%s' (valid: w, x, g, fprop.x, fprop.w, dgrad.g, dgrad.w, "
                      "wgrad.x, wgrad.g, first_hp, last_hp, hp)",
                      key);
}

static fpsim_status parse_text(fpsim_recipe *out, const char *text, int depth)
{
    if (!text || !*text)
        return fpsim_fail(FPSIM_EINVAL, "empty recipe text");
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    if (!buf)
        return fpsim_fail(FPSIM_ENOMEM, "out of memory parsing a recipe");
    memcpy(buf, text, len + 1);
    fpsim_recipe r;
    recipe_clear(&r);
    fpsim_status st = FPSIM_OK;
    char *p = buf;
    int first = 1;
    while (p && st == FPSIM_OK) {
        char *semi = strchr(p, ';');
        if (semi)
            *semi = '\0';
        if (*p == '\0') {
            st = fpsim_fail(FPSIM_EINVAL, "recipe '%s': empty clause", text);
            break;
        }
        if (first && !strchr(p, '=')) {
            /* BASE preset */
            size_t i = 0;
            if (depth > 0)
                st = fpsim_fail(FPSIM_EINVAL, "recipe preset text may not name a base");
            else if ((st = preset_index(p, &i)) == FPSIM_OK)
                st = parse_text(&r, fpsim_recipe_preset_text(i), depth + 1);
        } else {
            /* A key given twice in one text would be last-wins in silence (a base preset's keys
             * are meant to be overridden, and are not counted here). */
            const char *eq = strchr(p, '=');
            const size_t klen = eq ? (size_t)(eq - p) : strlen(p);
            /* earlier clauses, read from `text` (apply_clause cuts buf's at their '=') */
            for (const char *q = text; q < text + (p - buf) && !st; q = strchr(q, ';') + 1)
                if (strncmp(q, p, klen) == 0 && q[klen] == '=')
                    st = fpsim_fail(FPSIM_EINVAL, "recipe '%s': key '%.*s' is given twice", text, (int)klen, p);
            if (!st)
                st = apply_clause(&r, p);
        }
        first = 0;
        p = semi ? semi + 1 : NULL;
    }
    free(buf);
    /* first_hp / last_hp keep layers out of the quantization: in a recipe that quantizes nothing
     * they would change nothing. */
    int any = 0;
    for (int q = 0; q < FPSIM_PASS_COUNT; q++)
        for (int k = 0; k < FPSIM_ROLE_COUNT; k++)
            any |= r.op[q][k].used && r.op[q][k].quantized;
    if (st == FPSIM_OK && depth == 0 && !any && (r.first_hp_layers || r.last_hp_layers))
        st = fpsim_fail(FPSIM_EINVAL, "recipe '%s': first_hp/last_hp have no effect: the recipe quantizes no operand",
                        text);
    if (st == FPSIM_OK)
        *out = r;
    return st;
}

fpsim_status fpsim_recipe_find(fpsim_recipe *out, const char *name)
{
    size_t i = 0;
    fpsim_status st = preset_index(name ? name : "", &i);
    if (st != FPSIM_OK)
        return st;
    fpsim_recipe r;
    if ((st = parse_text(&r, fpsim_recipe_preset_text(i), 1)) != FPSIM_OK)
        return st;
    snprintf(r.name, sizeof r.name, "%s", fpsim_recipe_name_at(i));
    snprintf(r.description, sizeof r.description, "%s", fpsim_recipe_preset_description(i));
    *out = r;
    return FPSIM_OK;
}

fpsim_status fpsim_recipe_parse(fpsim_recipe *out, const char *text)
{
    if (text && !strchr(text, ';') && !strchr(text, '='))
        return fpsim_recipe_find(out, text);
    fpsim_recipe r;
    fpsim_status st = parse_text(&r, text, 0);
    if (st != FPSIM_OK)
        return st;
    snprintf(r.name, sizeof r.name, "custom");
    snprintf(r.description, sizeof r.description, "custom: %s", text);
    *out = r;
    return FPSIM_OK;
}

fpsim_status fpsim_recipe_list(size_t i, char *buf, size_t cap)
{
    if (i >= fpsim_recipe_count())
        return fpsim_fail(FPSIM_EINVAL, "recipe index %zu out of range", i);
    int n = snprintf(buf, cap, "%-15s %s", fpsim_recipe_name_at(i), fpsim_recipe_preset_description(i));
    if (n < 0 || (size_t)n >= cap)
        return fpsim_fail(FPSIM_EINVAL, "recipe line does not fit in %zu bytes", cap);
    return FPSIM_OK;
}

const fpsim_operand_quant *fpsim_recipe_operand(const fpsim_recipe *r, int layer, int nlayers,
                                                fpsim_pass pass, fpsim_role role)
{
    static const fpsim_operand_quant hp_operand[FPSIM_PASS_COUNT][FPSIM_ROLE_COUNT] = {
        {{0, 1, FPSIM_AXIS_ROWS, {0}}, {0, 1, FPSIM_AXIS_ROWS, {0}}, {0, 0, FPSIM_AXIS_ROWS, {0}}},
        {{0, 1, FPSIM_AXIS_COLS, {0}}, {0, 0, FPSIM_AXIS_ROWS, {0}}, {0, 1, FPSIM_AXIS_ROWS, {0}}},
        {{0, 0, FPSIM_AXIS_ROWS, {0}}, {0, 1, FPSIM_AXIS_COLS, {0}}, {0, 1, FPSIM_AXIS_COLS, {0}}},
    };
    if (!r || pass < 0 || pass >= FPSIM_PASS_COUNT || (int)role < 0 || role >= FPSIM_ROLE_COUNT)
        return NULL;
    if (layer < r->first_hp_layers || (nlayers > 0 && layer >= nlayers - r->last_hp_layers))
        return &hp_operand[pass][role];
    return &r->op[pass][role];
}

fpsim_status fpsim_recipe_format(char *buf, size_t cap, const fpsim_recipe *r)
{
    size_t len = 0;
    int n = snprintf(buf, cap, "hp=%s;first_hp=%d;last_hp=%d", r->hp == FPSIM_PREC_FP32 ? "fp32" : "bf16",
                     r->first_hp_layers, r->last_hp_layers);
    if (n < 0 || (size_t)n >= cap)
        return fpsim_fail(FPSIM_EINVAL, "recipe text does not fit in %zu bytes", cap);
    len = (size_t)n;
    for (int p = 0; p < FPSIM_PASS_COUNT; p++)
        for (int k = 0; k < FPSIM_ROLE_COUNT; k++) {
            const fpsim_operand_quant *o = &r->op[p][k];
            if (!o->used)
                continue;
            char s[FPSIM_SCHEME_TEXT_MAX] = "none";
            if (o->quantized) {
                fpsim_status st = fpsim_scheme_format(s, sizeof s, &o->scheme);
                if (st != FPSIM_OK)
                    return st;
            }
            n = snprintf(buf + len, cap - len, ";%s.%c=%s", g_pass_names[p], g_role_keys[k], s);
            if (n < 0 || (size_t)n >= cap - len)
                return fpsim_fail(FPSIM_EINVAL, "recipe text does not fit in %zu bytes", cap);
            len += (size_t)n;
        }
    return FPSIM_OK;
}
