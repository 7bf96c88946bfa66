/* format_table.c: the element-format descriptors, their names and the rounding-mode names.
 *
 * Limits follow ml_dtypes 0.6 finfo (float8.h, mxfloat.h numeric_limits) and formats-spec.md §0;
 * tests/formats check them against values recomputed from (bits, bias). */
#include <stdio.h>
#include <string.h>

#include "fpsim_formats.h"

#define FPSIM_NFORMATS ((int)FPSIM_FORMAT_COUNT)

/* name, id, bits, ebits, mbits, bias, signed, specials, max_mag, inf_mag, nan_mag,
 * max, min_normal, min_subnormal, epsilon */
static const fpsim_format formats[FPSIM_NFORMATS] = {
    {"e4m3", FPSIM_E4M3, 8, 4, 3, 7, 1, FPSIM_SPECIALS_FN, 0x7E, 0, 0x7F,
     448.0, 0x1p-6, 0x1p-9, 0x1p-3},
    {"e5m2", FPSIM_E5M2, 8, 5, 2, 15, 1, FPSIM_SPECIALS_IEEE, 0x7B, 0x7C, 0x7E,
     57344.0, 0x1p-14, 0x1p-16, 0x1p-2},
    {"e2m1", FPSIM_E2M1, 4, 2, 1, 1, 1, FPSIM_SPECIALS_NONE, 0x7, 0, 0,
     6.0, 1.0, 0.5, 0.5},
    {"e2m3", FPSIM_E2M3, 6, 2, 3, 1, 1, FPSIM_SPECIALS_NONE, 0x1F, 0, 0,
     7.5, 1.0, 0x1p-3, 0x1p-3},
    {"e3m2", FPSIM_E3M2, 6, 3, 2, 3, 1, FPSIM_SPECIALS_NONE, 0x1F, 0, 0,
     28.0, 0x1p-2, 0x1p-4, 0x1p-2},
    {"e8m0", FPSIM_E8M0, 8, 8, 0, 127, 0, FPSIM_SPECIALS_E8M0, 0xFE, 0, 0xFF,
     0x1p127, 0x1p-127, 0.0, 1.0},
    {"bf16", FPSIM_BF16, 16, 8, 7, 127, 1, FPSIM_SPECIALS_IEEE, 0x7F7F, 0x7F80, 0x7FC0,
     0x1.FEp127, 0x1p-126, 0x1p-133, 0x1p-7},
    {"f16", FPSIM_F16, 16, 5, 10, 15, 1, FPSIM_SPECIALS_IEEE, 0x7BFF, 0x7C00, 0x7E00,
     65504.0, 0x1p-14, 0x1p-24, 0x1p-10},
    {"e4m3fnuz", FPSIM_E4M3FNUZ, 8, 4, 3, 8, 1, FPSIM_SPECIALS_FNUZ, 0x7F, 0, 0x80,
     240.0, 0x1p-7, 0x1p-10, 0x1p-3},
    {"e5m2fnuz", FPSIM_E5M2FNUZ, 8, 5, 2, 16, 1, FPSIM_SPECIALS_FNUZ, 0x7F, 0, 0x80,
     57344.0, 0x1p-15, 0x1p-17, 0x1p-2},
    {"e4m3b11fnuz", FPSIM_E4M3B11FNUZ, 8, 4, 3, 11, 1, FPSIM_SPECIALS_FNUZ, 0x7F, 0, 0x80,
     30.0, 0x1p-10, 0x1p-13, 0x1p-3},
    {"e4m3ieee", FPSIM_E4M3IEEE, 8, 4, 3, 7, 1, FPSIM_SPECIALS_IEEE, 0x77, 0x78, 0x7C,
     240.0, 0x1p-6, 0x1p-9, 0x1p-3},
};

/* Other spellings users know (ml_dtypes / torch dtype names, OCP names). */
static const struct {
    const char *alias;
    fpsim_format_id id;
} aliases[] = {
    {"e4m3fn", FPSIM_E4M3},         {"float8_e4m3fn", FPSIM_E4M3},
    {"float8_e5m2", FPSIM_E5M2},    {"e2m1fn", FPSIM_E2M1},
    {"fp4", FPSIM_E2M1},            {"float4_e2m1fn", FPSIM_E2M1},
    {"e2m3fn", FPSIM_E2M3},         {"float6_e2m3fn", FPSIM_E2M3},
    {"e3m2fn", FPSIM_E3M2},         {"float6_e3m2fn", FPSIM_E3M2},
    {"ue8m0", FPSIM_E8M0},          {"e8m0fnu", FPSIM_E8M0},
    {"float8_e8m0fnu", FPSIM_E8M0}, {"bfloat16", FPSIM_BF16},
    {"fp16", FPSIM_F16},            {"float16", FPSIM_F16},
    {"half", FPSIM_F16},            {"float8_e4m3fnuz", FPSIM_E4M3FNUZ},
    {"float8_e5m2fnuz", FPSIM_E5M2FNUZ}, {"float8_e4m3b11fnuz", FPSIM_E4M3B11FNUZ},
    {"float8_e4m3", FPSIM_E4M3IEEE},
};

const fpsim_format *fpsim_format_get(fpsim_format_id id)
{
    return (int)id >= 0 && (int)id < FPSIM_NFORMATS ? &formats[id] : NULL;
}

const fpsim_format *fpsim_format_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; i < FPSIM_NFORMATS; i++)
        if (!strcmp(name, formats[i].name))
            return &formats[i];
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(name, aliases[i].alias))
            return &formats[aliases[i].id];
    return NULL;
}

const char *fpsim_format_names(void)
{
    static const char names[] = "e4m3 (alias e4m3fn), e5m2, e2m1, e2m3, e3m2, e8m0, bf16, f16, "
                                "e4m3fnuz, e5m2fnuz, e4m3b11fnuz, e4m3ieee";
    return names;
}

fpsim_status fpsim_format_lookup(const char *name, fpsim_format_id *out)
{
    const fpsim_format *f = fpsim_format_find(name);
    if (!f)
        return fpsim_fail(FPSIM_ENAME, "unknown format '%s'; valid formats: %s", name ? name : "(null)",
                          fpsim_format_names());
    *out = (fpsim_format_id)f->id;
    return FPSIM_OK;
}

size_t fpsim_format_code_bytes(fpsim_format_id id)
{
    const fpsim_format *f = fpsim_format_get(id);
    return f && f->bits > 8 ? 2 : 1;
}

static const char *const round_names[FPSIM_ROUND_COUNT] = {"rne", "rna", "rz", "ru", "rd", "sr"};

fpsim_status fpsim_round_find(const char *name, fpsim_round *out)
{
    for (int i = 0; i < FPSIM_ROUND_COUNT; i++)
        if (name && !strcmp(name, round_names[i])) {
            *out = (fpsim_round)i;
            return FPSIM_OK;
        }
    return fpsim_fail(FPSIM_ENAME, "unknown rounding mode '%s'; valid modes: %s", name ? name : "(null)",
                      fpsim_round_names());
}

const char *fpsim_round_name(fpsim_round mode)
{
    return (int)mode >= 0 && mode < FPSIM_ROUND_COUNT ? round_names[mode] : "?";
}

const char *fpsim_round_names(void) { return "rne, rna, rz, ru, rd, sr"; }

int fpsim_sr_bits_default(fpsim_format_id id)
{
    switch (id) {
    case FPSIM_E2M1: return 8;
    case FPSIM_F16: return 13;
    default: return 16;
    }
}
