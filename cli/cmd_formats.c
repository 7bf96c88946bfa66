/* cmd_formats.c: `fpsim formats [--json] [--policies]`: the element formats with their limits,
 * and (with --policies) the policy table: what each implementation writes for overflow, Inf and
 * NaN, per format. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_core.h"
#include "fpsim_formats.h"

static const char *const CMD = "formats";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim formats [--json] [--policies]\n\n"
            "List the element formats: bits, exponent/mantissa bits, bias, largest finite value, smallest\n"
            "normal and subnormal, epsilon (the gap above 1), the codes of Inf and NaN, the default policy\n"
            "and the policies that define the format.\n\n"
            "  --json      one JSON object per format (an array), numbers as decimals\n"
            "  --policies  also print every (policy, format) row: codes for +-overflow, +-Inf, +-NaN,\n"
            "              the default rounding and the implementation it emulates (with --json:\n"
            "              only these rows, one JSON object each, codes as integers)\n");
}

static const char *specials_name(int sp)
{
    switch (sp) {
    case FPSIM_SPECIALS_IEEE: return "ieee";
    case FPSIM_SPECIALS_FN: return "fn";
    case FPSIM_SPECIALS_FNUZ: return "fnuz";
    case FPSIM_SPECIALS_NONE: return "none";
    default: return "e8m0";
    }
}

static void print_json(void)
{
    printf("[\n");
    for (int i = 0; i < FPSIM_FORMAT_COUNT; i++) {
        const fpsim_format *f = fpsim_format_get((fpsim_format_id)i);
        printf("  {\"name\": \"%s\", \"bits\": %d, \"ebits\": %d, \"mbits\": %d, \"bias\": %d, \"signed\": %s, "
               "\"specials\": \"%s\", \"max\": %.17g, \"min_normal\": %.17g, \"min_subnormal\": %.17g, "
               "\"epsilon\": %.17g, \"max_code\": %d, \"inf_code\": %d, \"nan_code\": %d, \"default_policy\": ",
               f->name, f->bits, f->ebits, f->mbits, f->bias, f->is_signed ? "true" : "false",
               specials_name(f->specials), f->max, f->min_normal, f->min_subnormal, f->epsilon, f->max_mag,
               f->inf_mag, f->nan_mag);
        fpsim_cli_json_string(stdout, fpsim_policy_default((fpsim_format_id)i));
        printf(", \"policies\": ");
        fpsim_cli_json_string(stdout, fpsim_policy_names(i));
        printf("}%s\n", i + 1 < FPSIM_FORMAT_COUNT ? "," : "");
    }
    printf("]\n");
}

static void print_table(void)
{
    printf("%-12s %4s %2s %2s %4s %-5s %-14s %-14s %-14s %-10s %-6s %-6s %-9s %s\n", "format", "bits", "E", "M",
           "bias", "kind", "max", "min_normal", "min_subnorm", "epsilon", "Inf", "NaN", "default", "policies");
    for (int i = 0; i < FPSIM_FORMAT_COUNT; i++) {
        const fpsim_format *f = fpsim_format_get((fpsim_format_id)i);
        char inf[16] = "-", nan[16] = "-", sub[32] = "-";
        if (f->inf_mag)
            snprintf(inf, sizeof inf, "0x%02X", f->inf_mag);
        if (f->specials != FPSIM_SPECIALS_NONE)
            snprintf(nan, sizeof nan, "0x%02X", f->nan_mag);
        if (f->min_subnormal > 0)
            snprintf(sub, sizeof sub, "%.8g", f->min_subnormal);
        printf("%-12s %4d %2d %2d %4d %-5s %-14.8g %-14.8g %-14s %-10.8g %-6s %-6s %-9s %s\n", f->name, f->bits,
               f->ebits, f->mbits, f->bias, specials_name(f->specials), f->max, f->min_normal, sub, f->epsilon, inf,
               nan, fpsim_policy_default((fpsim_format_id)i), fpsim_policy_names(i));
    }
}

static void print_policies_json(void)
{
    int first = 1;
    printf("[\n");
    for (int p = 0; p < fpsim_policy_count(); p++)
        for (int i = 0; i < FPSIM_FORMAT_COUNT; i++) {
            const char *name = fpsim_policy_name(p);
            fpsim_spec s;
            if (fpsim_spec_make(&s, (fpsim_format_id)i, name, FPSIM_ROUND_DEFAULT, 0))
                continue;
            printf("%s  {\"policy\": \"%s\", \"format\": \"%s\", \"round\": \"%s\", \"overflow\": [%d, %d], "
                   "\"inf\": [%d, %d], \"nan\": [%d, %d], \"flags\": %d, \"emulates\": ",
                   first ? "" : ",\n", name, fpsim_format_get((fpsim_format_id)i)->name,
                   fpsim_round_name((fpsim_round)s.round), s.ovf_pos, s.ovf_neg, s.inf_pos, s.inf_neg, s.nan_pos,
                   s.nan_neg, s.flags);
            fpsim_cli_json_string(stdout, fpsim_policy_source(name, (fpsim_format_id)i));
            printf("}");
            first = 0;
        }
    printf("\n]\n");
}

/* What the spec makes of +-NaN 0x7FC00000 / 0xFFC00000: for the payload-dependent policies the
 * table's NaN fields are a base the payload is added to, not a code. */
static void canonical_nan_codes(const fpsim_spec *s, unsigned *pos, unsigned *neg)
{
    const uint32_t bits[2] = {0x7FC00000u, 0xFFC00000u};
    float x[2];
    memcpy(x, bits, sizeof x);
    uint16_t c16[2] = {0, 0};
    uint8_t c8[2] = {0, 0};
    const int wide = fpsim_format_code_bytes((fpsim_format_id)s->format) == 2;
    if (fpsim_convert_f32(wide ? (void *)c16 : (void *)c8, x, 2, s, 0, 0, 0, 1) != FPSIM_OK) return;
    *pos = wide ? c16[0] : c8[0];
    *neg = wide ? c16[1] : c8[1];
}

static void print_policies(void)
{
    printf("\n%-14s %-12s %-5s %-13s %-13s %-13s %s\n", "policy", "format", "round", "overflow +/-", "Inf +/-",
           "NaN +/-", "emulates");
    for (int p = 0; p < fpsim_policy_count(); p++)
        for (int i = 0; i < FPSIM_FORMAT_COUNT; i++) {
            const char *name = fpsim_policy_name(p);
            fpsim_spec s;
            if (fpsim_spec_make(&s, (fpsim_format_id)i, name, FPSIM_ROUND_DEFAULT, 0))
                continue;
            char ovf[24], inf[24], nan[24];
            const int w = s.bits > 8 ? 4 : 2;
            snprintf(ovf, sizeof ovf, "%0*X/%0*X", w, s.ovf_pos, w, s.ovf_neg);
            snprintf(inf, sizeof inf, "%0*X/%0*X", w, s.inf_pos, w, s.inf_neg);
            unsigned nan_pos = s.nan_pos, nan_neg = s.nan_neg;
            const int by_payload = (s.flags & (FPSIM_SPEC_NAN_PAYLOAD | FPSIM_SPEC_NAN_TORCHAO)) != 0;
            if (by_payload) /* the codes of the canonical quiet NaNs, by the conversion itself */
                canonical_nan_codes(&s, &nan_pos, &nan_neg);
            snprintf(nan, sizeof nan, "%0*X/%0*X%s", w, nan_pos, w, nan_neg, by_payload ? "*" : "");
            printf("%-14s %-12s %-5s %-13s %-13s %-13s %s\n", name, fpsim_format_get((fpsim_format_id)i)->name,
                   fpsim_round_name((fpsim_round)s.round), ovf, inf, nan,
                   fpsim_policy_source(name, (fpsim_format_id)i));
        }
    printf("(* NaN code depends on the payload; the canonical quiet NaN's code is shown)\n");
}

int cmd_formats(int argc, char **argv)
{
    int json = 0, policies = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--policies")) {
            policies = 1;
        } else {
            return fpsim_cli_unknown_option(CMD, argv[i]);
        }
    }
    if (json && policies)
        print_policies_json();
    else if (json)
        print_json();
    else
        print_table();
    if (policies && !json)
        print_policies();
    return 0;
}
