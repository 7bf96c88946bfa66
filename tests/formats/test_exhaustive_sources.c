/* test_exhaustive_sources: the other sources and the decoders, against the reference.
 *
 * 1. bf16 and f16 sources: all 2^16 inputs, each through every (format, policy, mode) below,
 *    vs the reference applied to the source value decoded from its definition (a NaN: to its
 *    exact float32 widening), except the casts that return their input, drop a bf16 NaN's
 *    payload, take c10's scalar NaN or quiet an f16 NaN on the way (returns_input,
 *    bf16_nan_quieted, c10_scalar_nan, f16_nan_quieted).
 * 2. f64 sources: every representable value and midpoint of the target, +-1..3 double ulps and
 *    +-1 float ulp around each, both signs, plus 2^20 random doubles per case; rounded once (or
 *    via float32 first where the policy says so: NumPy astype, formats-spec.md §1.3).
 * 3. Decode: every code of every format, to f32 and f64, array and scalar, vs ldexp decoding of
 *    the format definition (NaN codes must decode to a NaN; everything else bit for bit,
 *    signed zeros included). */
#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "reference.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct src_case {
    const char *format, *policy;
    int all_modes; /* 1: rne rna rz ru rd; 0: rne (or the policy's fixed mode) */
} src_case;

static const src_case cases[] = {
    {"e4m3", "nv", 1},         {"e4m3", "nv-nosat", 0},     {"e4m3", "torch", 0},
    {"e4m3", "ml_dtypes", 1},  {"e4m3", "ml_dtypes-sat", 0}, {"e4m3", "clamp", 0},
    {"e5m2", "nv", 1},         {"e5m2", "nv-nosat", 0},     {"e5m2", "torch", 0},
    {"e5m2", "ml_dtypes", 1},  {"e5m2", "ml_dtypes-sat", 0},
    {"e2m1", "nv", 1},         {"e2m1", "ml_dtypes", 1},    {"e2m1", "te", 0},
    {"e2m1", "deepgemm", 0},   {"e2m1", "torchao", 0},      {"e2m3", "torchao", 0},
    {"e3m2", "torchao", 0},    {"e4m3", "torch-sat", 0},   {"e2m3", "nv", 1},           {"e2m3", "ml_dtypes", 1},
    {"e3m2", "nv", 1},         {"e3m2", "ml_dtypes", 1},
    {"e8m0", "torch", 0},      {"e8m0", "ml_dtypes", 0},    {"e8m0", "ml_dtypes-sat", 0},
    {"e8m0", "ptx-rz", 0},     {"e8m0", "ptx-rp", 0},       {"e8m0", "ptx-rz-sat", 0},
    {"e8m0", "ptx-rp-sat", 0},
    {"e4m3fnuz", "ml_dtypes", 1}, {"e5m2fnuz", "ml_dtypes", 1}, {"e4m3b11fnuz", "ml_dtypes", 1},
    {"e4m3ieee", "ml_dtypes", 1}, {"e4m3fnuz", "ml_dtypes-sat", 0},
    {"e4m3ieee", "ml_dtypes-sat", 0},
    {"bf16", "nv", 1},         {"bf16", "ml_dtypes", 0},    {"f16", "nv", 1},
    {"bf16", "torch-cpu", 0},  {"bf16", "clamp", 0},        {"f16", "ml_dtypes", 0},
    {"f16", "clamp", 0},       {"bf16", "torch", 0},        {"f16", "torch", 0},
};

/* Where the emulated cast of a 16-bit source is not the float32 rule of its exact widening
 * (docs/formats.md, measured on ml_dtypes 0.6 / numpy 2.4; torch documents that .to() returns
 * the tensor itself when its dtype already matches): */
static int returns_input(const char *policy, const char *format, int from_bf16)
{
    const int same = strcmp(format, from_bf16 ? "bf16" : "f16") == 0;
    return same && (!strcmp(policy, "torch") || !strcmp(policy, "torch-cpu") || !strcmp(policy, "ml_dtypes"));
}
/* ml_dtypes' bfloat16 -> float16 cast writes the quiet NaN 0x7E00 with the sign, whatever the
 * payload: the float32 quiet NaN of that sign under numpy's float16 rule. */
static int bf16_nan_quieted(const char *policy, const char *format, int from_bf16)
{
    return from_bf16 && !strcmp(format, "f16") && !strcmp(policy, "ml_dtypes");
}
/* torch's CPU casts to bfloat16 from double and from half take c10::BFloat16's scalar rounding,
 * whose NaN is 0x7FC0 whatever the sign (tests/formats/oracle_torch.py measures it); from float32
 * the vectorized path writes the policy's 0xFFFF. */
static int c10_scalar_nan(const char *policy, const char *format)
{
    return !strcmp(policy, "torch-cpu") && !strcmp(format, "bf16");
}
/* torchao's FPx conversion takes float32 tensors: a float16 one reaches it through torch's
 * half -> float widening, which sets the quiet bit of a NaN (oracle_torch.py measures it), and
 * torchao's bit arithmetic then sees that payload. */
static int f16_nan_quieted(const char *policy, int from_bf16)
{
    return !from_bf16 && !strcmp(policy, "torchao");
}

static test_counter tc16, tc64, tcdec;
static ref_grid grid;

static int make_spec(fpsim_spec *s, const char *format, const char *policy, ref_mode m)
{
    const fpsim_format *f = fpsim_format_find(format);
    fpsim_round r;
    if (!f || fpsim_round_find(ref_mode_names[m], &r) != FPSIM_OK ||
        fpsim_spec_make(s, (fpsim_format_id)f->id, policy, r, 0) != FPSIM_OK) {
        test_fail(&tc16, "the core has no %s/%s/%s: %s", format, policy, ref_mode_names[m],
                  fpsim_last_error());
        return 0;
    }
    return 1;
}

static uint32_t code_at(const void *codes, int bits, size_t i)
{
    return bits > 8 ? ((const uint16_t *)codes)[i] : ((const uint8_t *)codes)[i];
}

/* The source value of a 16-bit pattern, decoded from the source format's definition. */
static double source_value(const ref_format *src, uint32_t h) { return ref_decode(src, h); }

static void check_16bit_sources(const src_case *c, ref_mode m, const ref_rules *rr)
{
    fpsim_spec s;
    if (!make_spec(&s, c->format, c->policy, m))
        return;
    static uint16_t in[65536], out[65536];
    for (uint32_t i = 0; i < 65536; i++)
        in[i] = (uint16_t)i;
    for (int from_bf16 = 1; from_bf16 >= 0; from_bf16--) {
        const ref_format *src = ref_format_find(from_bf16 ? "bf16" : "f16");
        fpsim_status st = from_bf16 ? fpsim_convert_bf16(out, in, 65536, &s, 0, 0, 0, 1)
                                    : fpsim_convert_f16(out, in, 65536, &s, 0, 0, 0, 1);
        if (st != FPSIM_OK) {
            test_fail(&tc16, "convert failed: %s", fpsim_last_error());
            continue;
        }
        for (uint32_t h = 0; h < 65536; h++) {
            /* A NaN source is widened exactly to float32: sign and payload move up unchanged
             * (bf16: the top half of the float32; f16: 10 payload bits at the top of 23). */
            double v = source_value(src, h);
            uint32_t nan32 = from_bf16 ? (h << 16)
                                       : ((h & 0x8000u) << 16) | 0x7F800000u | ((h & 0x3FFu) << 13);
            if (bf16_nan_quieted(c->policy, c->format, from_bf16))
                nan32 = ((h & 0x8000u) << 16) | 0x7FC00000u;
            if (f16_nan_quieted(c->policy, from_bf16))
                nan32 |= 0x00400000u;
            uint32_t want = isnan(v) ? ref_nan_f32(grid.f, rr, nan32) : ref_round(&grid, rr, m, v);
            if (returns_input(c->policy, c->format, from_bf16))
                want = h;
            else if (!from_bf16 && isnan(v) && c10_scalar_nan(c->policy, c->format))
                want = 0x7FC0u;
            TEST_CHECK_EQ_HEX(&tc16, code_at(out, grid.f->bits, h), want, "%s 0x%04x -> %s %s %s",
                              src->name, h, c->format, c->policy, ref_mode_names[m]);
        }
    }
}

static void check_f64_source(const src_case *c, ref_mode m, const ref_rules *rr)
{
    fpsim_spec s;
    if (!make_spec(&s, c->format, c->policy, m))
        return;
    size_t cap = (size_t)(grid.n + 1) * 2 * 2 * 11 + (2u << 20) + 16, n = 0;
    double *x = malloc(cap * sizeof *x);
    uint16_t *out = malloc(cap * sizeof *out);
    for (int i = 0; i <= grid.n; i++) {
        double pts[2] = {grid.v[i], i < grid.n ? 0.5 * (grid.v[i] + grid.v[i + 1]) : 2 * grid.v[i]};
        for (int p = 0; p < 2; p++) {
            double b = pts[p];
            double near[11] = {b, b, b, b, b, b, b};
            for (int d = 1; d <= 3; d++) {
                near[2 * d - 1] = b;
                near[2 * d] = b;
                for (int k = 0; k < d; k++) {
                    near[2 * d - 1] = nextafter(near[2 * d - 1], 0.0);
                    near[2 * d] = nextafter(near[2 * d], INFINITY);
                }
            }
            near[7] = (double)nextafterf((float)b, 0.0f);
            near[8] = (double)nextafterf((float)b, INFINITY);
            /* A double just above a float32 midpoint: rounds differently once vs via float. */
            near[9] = 0.5 * ((double)(float)b + (double)nextafterf((float)b, INFINITY)) * (1 + 0x1p-52);
            near[10] = 0.5 * ((double)(float)b + (double)nextafterf((float)b, 0.0f)) * (1 - 0x1p-52);
            for (int k = 0; k < 11; k++) {
                x[n++] = near[k];
                x[n++] = -near[k];
            }
        }
    }
    uint64_t rng = 77;
    double top = 4 * grid.v[grid.n];
    for (int i = 0; i < (1 << 20); i++) {
        uint64_t r = test_splitmix64(&rng);
        double u = (double)(r >> 11) * 0x1p-53;
        x[n++] = (r & 1 ? -u : u) * top;
        x[n++] = ldexp(1.0 + u, (int)((r >> 1) & 511) - 256) * (r & 2 ? -1 : 1);
    }
    x[n++] = INFINITY;
    x[n++] = -INFINITY;
    x[n++] = NAN;
    x[n++] = -NAN;
    x[n++] = 0.0;
    x[n++] = -0.0;
    x[n++] = 0x1p-1074;
    x[n++] = 0x1.fffffffffffffp1023;
    if (fpsim_convert_f64(out, x, n, &s, 0, 0, 0, 2) != FPSIM_OK) {
        test_fail(&tc64, "convert_f64 failed: %s", fpsim_last_error());
    } else {
        for (size_t i = 0; i < n; i++) {
            double v = rr->f64_via_f32 ? (double)(float)x[i] : x[i];
            uint32_t want = ref_round(&grid, rr, m, v);
            if (isnan(x[i]) && c10_scalar_nan(c->policy, c->format))
                want = 0x7FC0u;
            TEST_CHECK_EQ_HEX(&tc64, code_at(out, grid.f->bits, i), want,
                              "f64 %a (0x%016llx) -> %s %s %s", x[i],
                              (unsigned long long)test_f64_bits(x[i]), c->format, c->policy,
                              ref_mode_names[m]);
        }
    }
    free(x);
    free(out);
}

static void check_decode(void)
{
    for (int fi = 0; fi < ref_format_count; fi++) {
        const ref_format *rf = &ref_formats[fi];
        fpsim_spec s;
        const fpsim_format *f = fpsim_format_find(rf->name);
        if (!f || fpsim_spec_make(&s, (fpsim_format_id)f->id, NULL, FPSIM_RNE, 0) != FPSIM_OK) {
            test_fail(&tcdec, "no default spec for %s: %s", rf->name, fpsim_last_error());
            continue;
        }
        size_t ncodes = (size_t)1 << rf->bits;
        uint16_t *codes16 = malloc(ncodes * 2);
        uint8_t *codes8 = malloc(ncodes);
        float *y32 = malloc(ncodes * sizeof *y32);
        double *y64 = malloc(ncodes * sizeof *y64);
        for (size_t c = 0; c < ncodes; c++) {
            codes16[c] = (uint16_t)c;
            codes8[c] = (uint8_t)c;
        }
        const void *codes = rf->bits > 8 ? (const void *)codes16 : (const void *)codes8;
        if (fpsim_decode_array_f32(y32, codes, ncodes, &s, 2) != FPSIM_OK ||
            fpsim_decode_array_f64(y64, codes, ncodes, &s, 2) != FPSIM_OK) {
            test_fail(&tcdec, "decode of %s failed: %s", rf->name, fpsim_last_error());
        } else {
            for (size_t c = 0; c < ncodes; c++) {
                double want = ref_decode(rf, (uint32_t)c);
                float sc32 = test_f32_from_bits(fpsim_decode_f32((uint32_t)c, &s));
                double sc64 = test_f64_from_bits(fpsim_decode_f64((uint32_t)c, &s));
                if (isnan(want)) {
                    TEST_CHECK(&tcdec, isnan(y32[c]) && isnan(y64[c]) && isnan(sc32) && isnan(sc64),
                               "%s code 0x%zx must decode to NaN", rf->name, c);
                    continue;
                }
                TEST_CHECK_EQ_HEX(&tcdec, test_f32_bits(y32[c]), test_f32_bits((float)want),
                                  "%s code 0x%zx decode_array_f32", rf->name, c);
                TEST_CHECK_EQ_HEX(&tcdec, test_f64_bits(y64[c]), test_f64_bits(want),
                                  "%s code 0x%zx decode_array_f64", rf->name, c);
                TEST_CHECK_EQ_HEX(&tcdec, test_f32_bits(sc32), test_f32_bits((float)want),
                                  "%s code 0x%zx fpsim_decode_f32", rf->name, c);
                TEST_CHECK_EQ_HEX(&tcdec, test_f64_bits(sc64), test_f64_bits(want),
                                  "%s code 0x%zx fpsim_decode_f64", rf->name, c);
            }
        }
        free(codes16);
        free(codes8);
        free(y32);
        free(y64);
    }
}

int main(void)
{
    test_counter_reset(&tc16, "bf16/f16 sources, all 2^16");
    test_counter_reset(&tc64, "f64 sources near every threshold + random");
    test_counter_reset(&tcdec, "decode of every code");
    double t0 = test_seconds(), c0 = test_cpu_seconds();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const ref_rules *rr = ref_rules_find(cases[c].format, cases[c].policy);
        if (!rr) {
            test_fail(&tc16, "no reference rule for %s/%s", cases[c].format, cases[c].policy);
            continue;
        }
        ref_grid_build(&grid, ref_format_find(cases[c].format));
        for (int m = 0; m < REF_MODE_COUNT; m++) {
            ref_mode mode = (ref_mode)m;
            if (rr->forced_mode >= 0) {
                if (m != rr->forced_mode)
                    continue;
            } else if (!cases[c].all_modes && m != REF_RNE) {
                continue;
            }
            check_16bit_sources(&cases[c], mode, rr);
            check_f64_source(&cases[c], mode, rr);
        }
    }
    check_decode();
    int failed = test_summary(&tc16) + test_summary(&tc64) + test_summary(&tcdec);
    printf("     sources and decode in %.1f s wall, %.1f s cpu\n", test_seconds() - t0,
           test_cpu_seconds() - c0);
    return failed ? 1 : 0;
}
