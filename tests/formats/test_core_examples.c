/* test_core_examples.c: the element-format worked examples of formats-spec.md §11 (#1-15,
 * #25-26), whose expected codes were measured on real implementations (PTX on an H200, torch
 * 2.11, ml_dtypes 0.6, CUDA 13 host headers), and Random123's published Philox4x32-10
 * known-answer vectors. Every expected value here comes from those sources, not from fpsim. */
#include <math.h>
#include <string.h>

#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("formats-spec §11 worked examples");

static fpsim_spec spec(fpsim_format_id fmt, const char *policy)
{
    fpsim_spec s;
    fpsim_status st = fpsim_spec_make(&s, fmt, policy, FPSIM_ROUND_DEFAULT, 0);
    TEST_CHECK(&tc, st == FPSIM_OK, "spec_make(%d, %s): %s", (int)fmt, policy, fpsim_last_error());
    return s;
}

/* Check the scalar core and the array path (threads 1) on one float32 input. */
static void check_f32(fpsim_format_id fmt, const char *policy, uint32_t x, uint32_t want, const char *ex)
{
    const fpsim_spec s = spec(fmt, policy);
    TEST_CHECK_EQ_HEX(&tc, fpsim_round_f32(x, &s, 0), want, "%s %s x=0x%08x (scalar)", ex, policy, x);
    float xf;
    memcpy(&xf, &x, 4);
    uint16_t code16 = 0xABCD;
    uint8_t code8 = 0xAB;
    void *out = s.bits > 8 ? (void *)&code16 : (void *)&code8;
    TEST_CHECK(&tc, fpsim_convert_f32(out, &xf, 1, &s, 0, 0, 0, 1) == FPSIM_OK, "%s", ex);
    TEST_CHECK_EQ_HEX(&tc, s.bits > 8 ? code16 : code8, want, "%s %s x=0x%08x (array)", ex, policy, x);
}

static void examples_fp8(void)
{
    const char *all_e4m3[] = {"nv", "nv-nosat", "torch", "ml_dtypes", "ml_dtypes-sat", "clamp"};
    for (int i = 0; i < 6; i++) {
        check_f32(FPSIM_E4M3, all_e4m3[i], 0x43E80000, 0x7E, "#1 464 is a tie to 448");
        check_f32(FPSIM_E4M3, all_e4m3[i], 0x3A800000, 0x00, "#5 2^-10 ties to 0");
        check_f32(FPSIM_E4M3, all_e4m3[i], 0x3A800001, 0x01, "#5 2^-10 + ulp");
        check_f32(FPSIM_E4M3, all_e4m3[i], 0xAEDBE6FF, 0x80, "#6 -1e-10 -> -0");
    }
    check_f32(FPSIM_E4M3, "nv", 0x43E80001, 0x7E, "#2");
    check_f32(FPSIM_E4M3, "torch", 0x43E80001, 0x7F, "#2");
    check_f32(FPSIM_E4M3, "ml_dtypes", 0x43E80001, 0x7F, "#2");
    const struct { const char *p; uint32_t pos, neg; } inf3[] = {
        {"nv", 0x7E, 0xFE}, {"nv-nosat", 0x7F, 0xFF}, {"torch", 0x7F, 0xFF}, {"ml_dtypes-sat", 0x7F, 0xFF}};
    for (int i = 0; i < 4; i++) {
        check_f32(FPSIM_E4M3, inf3[i].p, 0x7F800000, inf3[i].pos, "#3 +Inf");
        check_f32(FPSIM_E4M3, inf3[i].p, 0xFF800000, inf3[i].neg, "#3 -Inf");
    }
    check_f32(FPSIM_E4M3, "nv", 0xFFC00000, 0x7F, "#4 -NaN");
    check_f32(FPSIM_E4M3, "torch", 0xFFC00000, 0xFF, "#4 -NaN");
    check_f32(FPSIM_E4M3, "ml_dtypes", 0xFFC00000, 0xFF, "#4 -NaN");

    const char *all_e5m2[] = {"nv", "nv-nosat", "torch", "ml_dtypes", "ml_dtypes-sat"};
    for (int i = 0; i < 5; i++)
        check_f32(FPSIM_E5M2, all_e5m2[i], 0xAEDBE6FF, 0x80, "#6 -1e-10 -> -0");
    check_f32(FPSIM_E5M2, "nv", 0x47700000, 0x7B, "#7 61440 satfinite");
    check_f32(FPSIM_E5M2, "nv", 0x476FFFFF, 0x7B, "#7");
    check_f32(FPSIM_E5M2, "nv-nosat", 0x47700000, 0x7C, "#7 61440 nosat -> Inf");
    check_f32(FPSIM_E5M2, "nv-nosat", 0x476FFFFF, 0x7B, "#7");
    check_f32(FPSIM_E5M2, "torch", 0x47700000, 0x7C, "#7");
    check_f32(FPSIM_E5M2, "ml_dtypes", 0x47700000, 0x7C, "#7");
    check_f32(FPSIM_E5M2, "nv", 0x7FC00000, 0x7F, "#8 NaN");
    check_f32(FPSIM_E5M2, "torch", 0x7FC00000, 0x7F, "#8 NaN");
    check_f32(FPSIM_E5M2, "ml_dtypes", 0x7FC00000, 0x7E, "#8 NaN");
}

static void example_double_rounding(void)
{
    /* #9: 0x3F880001 direct -> 0x39; through BF16 (0x3F88, a tie) -> 0x38. */
    check_f32(FPSIM_E4M3, "ml_dtypes", 0x3F880001, 0x39, "#9 direct");
    const fpsim_spec bf = spec(FPSIM_BF16, "ml_dtypes"), e4 = spec(FPSIM_E4M3, "ml_dtypes");
    const uint16_t h = (uint16_t)fpsim_round_f32(0x3F880001, &bf, 0);
    TEST_CHECK_EQ_HEX(&tc, h, 0x3F88, "#9 x=0x%08x to bf16", 0x3F880001u);
    uint8_t code = 0;
    TEST_CHECK(&tc, fpsim_convert_bf16(&code, &h, 1, &e4, 0, 0, 0, 1) == FPSIM_OK, "%s", "#9 bf16 source");
    TEST_CHECK_EQ_HEX(&tc, code, 0x38, "#9 via bf16 0x%04x", h);

    /* #10: FP64 464.0000000001: rounded once (ml_dtypes C++ ctor, like CUDA's double path
     * without saturation) -> 0x7F; numpy astype through float32 -> 0x7E. */
    const double x = 464.0000000001;
    uint64_t xb;
    memcpy(&xb, &x, 8);
    const fpsim_spec once = spec(FPSIM_E4M3, "nv-nosat"), numpy = spec(FPSIM_E4M3, "ml_dtypes");
    TEST_CHECK_EQ_HEX(&tc, fpsim_round_f64(xb, &once, 0), 0x7F, "#10 %s", "rounded once");
    TEST_CHECK_EQ_HEX(&tc, fpsim_round_f64(xb, &numpy, 0), 0x7E, "#10 %s", "via float32");
    uint8_t c2[2] = {0, 0};
    const double xs[2] = {x, x};
    TEST_CHECK(&tc, fpsim_convert_f64(c2, xs, 1, &once, 0, 0, 0, 1) == FPSIM_OK, "%s", "#10");
    TEST_CHECK(&tc, fpsim_convert_f64(c2 + 1, xs, 1, &numpy, 0, 0, 0, 1) == FPSIM_OK, "%s", "#10");
    TEST_CHECK_EQ_HEX(&tc, c2[0], 0x7F, "#10 %s", "array, once");
    TEST_CHECK_EQ_HEX(&tc, c2[1], 0x7E, "#10 %s", "array, via float32");
}

static void examples_fp4(void)
{
    const float in[9] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 7.0f, -0.1f};
    const uint32_t want[9] = {0x0, 0x2, 0x2, 0x4, 0x4, 0x6, 0x6, 0x7, 0x8};
    const char *pol[] = {"nv", "ml_dtypes", "torchao"};
    for (int p = 0; p < 3; p++)
        for (int i = 0; i < 9; i++) {
            uint32_t b;
            memcpy(&b, &in[i], 4);
            check_f32(FPSIM_E2M1, pol[p], b, want[i], "#11 E2M1 RNE sat");
        }
    const struct { const char *p; uint32_t pos, neg; } nan[] = {
        {"nv", 0x7, 0x7}, {"ml_dtypes", 0x8, 0x0}, {"torchao", 0x3, 0xB}, {"te", 0x0, 0x0}};
    for (int i = 0; i < 4; i++) {
        check_f32(FPSIM_E2M1, nan[i].p, 0x7FC00000, nan[i].pos, "#12 +NaN");
        check_f32(FPSIM_E2M1, nan[i].p, 0xFFC00000, nan[i].neg, "#12 -NaN");
    }
    /* §2.2: -0.0 and -0.1 per implementation. */
    check_f32(FPSIM_E2M1, "te", 0x80000000, 0x0, "§2.2 TE -0.0");
    check_f32(FPSIM_E2M1, "te", 0xBDCCCCCD, 0x8, "§2.2 TE -0.1");
    check_f32(FPSIM_E2M1, "deepgemm", 0xBDCCCCCD, 0x0, "§2.2 DeepGEMM -0.1");
    check_f32(FPSIM_E2M1, "nv", 0x80000000, 0x8, "§2.2 CUDA -0.0");
}

static void examples_e8m0(void)
{
    check_f32(FPSIM_E8M0, "torch", 0x3FC00000, 0x80, "#13 1.5");
    check_f32(FPSIM_E8M0, "torch", 0x3FBFFFFF, 0x7F, "#13");
    check_f32(FPSIM_E8M0, "torch", 0xBFC00000, 0x80, "#13 -1.5");
    check_f32(FPSIM_E8M0, "torch", 0x00000000, 0x00, "#13 0");
    check_f32(FPSIM_E8M0, "ml_dtypes", 0x00000000, 0xFF, "#14 0 nosat");
    check_f32(FPSIM_E8M0, "ml_dtypes", 0xBFC00000, 0xFF, "#14 -1.5 nosat");
    check_f32(FPSIM_E8M0, "ml_dtypes-sat", 0x00000000, 0x00, "#14 0 sat");
    check_f32(FPSIM_E8M0, "ml_dtypes-sat", 0xBFC00000, 0x00, "#14 -1.5 sat");
    const uint32_t in[4] = {0x00400000, 0x00400001, 0x7F800000, 0x7F000001};
    const uint32_t nosat[4] = {0x00, 0x01, 0xFF, 0xFF}, sat[4] = {0x00, 0x01, 0xFE, 0xFE};
    for (int i = 0; i < 4; i++) {
        check_f32(FPSIM_E8M0, "ptx-rp", in[i], nosat[i], "#15 PTX rp");
        check_f32(FPSIM_E8M0, "ptx-rp-sat", in[i], sat[i], "#15 PTX rp satfinite");
    }
    /* §3: FP32 subnormals in torch: code = RNE(x / 2^-126). */
    check_f32(FPSIM_E8M0, "torch", 0x00400000, 0x00, "§3 torch subnormal tie");
    check_f32(FPSIM_E8M0, "torch", 0x00600000, 0x01, "§3 torch subnormal");
    check_f32(FPSIM_E8M0, "ml_dtypes", 0x00500000, 0x01, "§3 ml_dtypes subnormal");
    check_f32(FPSIM_E8M0, "ptx-rp", 0x3F800001, 0x80, "§3 PTX rp 1+ulp");
    check_f32(FPSIM_E8M0, "torch", 0x7F400000, 0xFF, "§3 torch overflow");
    /* gpu-numerics.md §1.3 host table: 480 -> rp 0x88, rz 0x87. */
    check_f32(FPSIM_E8M0, "ptx-rp", 0x43F00000, 0x88, "header table 480 rp");
    check_f32(FPSIM_E8M0, "ptx-rz", 0x43F00000, 0x87, "header table 480 rz");
}

static void example_division(void)
{
    /* #25: 0x3F800004 / 448: CPU true division 0x3B124929; CUDA eager x * fp32(1/448)
     * 0x3B12492A. Checks that this build keeps IEEE FP32 arithmetic (no contraction, no fast
     * math), which the recipes built on the core rely on. */
    const volatile float x = test_f32_from_bits(0x3F800004), d = 448.0f;
    const volatile float r = 1.0f / d;
    TEST_CHECK_EQ_HEX(&tc, test_f32_bits(x / d), 0x3B124929, "#25 %s", "division");
    TEST_CHECK_EQ_HEX(&tc, test_f32_bits(x * r), 0x3B12492A, "#25 %s", "multiply by reciprocal");
}

static void examples_bf16(void)
{
    check_f32(FPSIM_BF16, "nv", 0x7FC00000, 0x7FFF, "#26 CUDA NaN");
    check_f32(FPSIM_BF16, "nv", 0xFFC00000, 0x7FFF, "#26 CUDA -NaN");
    check_f32(FPSIM_BF16, "torch-cpu", 0x7FC00000, 0xFFFF, "#26 torch CPU NaN");
    check_f32(FPSIM_BF16, "ml_dtypes", 0x7FC00000, 0x7FC0, "#26 ml_dtypes NaN");
    check_f32(FPSIM_BF16, "ml_dtypes", 0xFFC00000, 0xFFC0, "#26 ml_dtypes -NaN");
    /* §8 rule examples. */
    check_f32(FPSIM_BF16, "nv", 0x7F7FFFFF, 0x7F80, "§8 overflow -> Inf");
    check_f32(FPSIM_BF16, "nv", 0x807FFFFF, 0x8080, "§8 subnormal rounds");
    check_f32(FPSIM_BF16, "nv", 0x00000001, 0x0000, "§8 tiny");
    check_f32(FPSIM_BF16, "nv", 0x3F808000, 0x3F80, "§8 tie to even");
    check_f32(FPSIM_BF16, "nv", 0x3F818000, 0x3F82, "§8 tie to even");
}

static void check_philox(const uint32_t ctr[4], const uint32_t key[2], const uint32_t want[4])
{
    uint32_t out[4];
    fpsim_philox4x32_10(ctr, key, out);
    for (int i = 0; i < 4; i++)
        TEST_CHECK_EQ_HEX(&tc, out[i], want[i], "Philox4x32-10 KAT ctr0=0x%08x word %d", ctr[0], i);
}

static void philox_known_answers(void)
{
    /* Random123 examples/kat_vectors, "philox4x32 10" lines. */
    const uint32_t c0[4] = {0, 0, 0, 0}, k0[2] = {0, 0};
    const uint32_t w0[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
    const uint32_t c1[4] = {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, k1[2] = {0xffffffff, 0xffffffff};
    const uint32_t w1[4] = {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
    const uint32_t c2[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, k2[2] = {0xa4093822, 0x299f31d0};
    const uint32_t w2[4] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
    check_philox(c0, k0, w0);
    check_philox(c1, k1, w1);
    check_philox(c2, k2, w2);
    /* fpsim_sr_word is word (index & 3) of the block with counter {index >> 2, 0, stream, 0}:
     * index 0..3 of seed 0, stream 0 are the first KAT's words. */
    for (uint32_t i = 0; i < 4; i++)
        TEST_CHECK_EQ_HEX(&tc, fpsim_sr_word(0, 0, i), w0[i], "sr_word index %u", i);
    /* The counter and key layout of fpsim_sr_word: block (index >> 2) split into counter words
     * 0 and 1, the stream in word 2, word 3 zero, the seed split into the key words. */
    const uint64_t seed = ((uint64_t)0x299f31d0 << 32) | 0xa4093822;
    const uint64_t group = ((uint64_t)0x05a308d3 << 32) | 0x243f6a88;
    const uint32_t c3[4] = {0x243f6a88, 0x05a308d3, 0x13198a2e, 0};
    uint32_t out[4];
    fpsim_philox4x32_10(c3, k2, out);
    for (uint32_t j = 0; j < 4; j++)
        TEST_CHECK_EQ_HEX(&tc, fpsim_sr_word(seed, 0x13198a2e, group * 4 + j), out[j], "sr_word layout %u", j);
}

int main(void)
{
    examples_fp8();
    example_double_rounding();
    examples_fp4();
    examples_e8m0();
    example_division();
    examples_bf16();
    philox_known_answers();
    return test_summary(&tc);
}
