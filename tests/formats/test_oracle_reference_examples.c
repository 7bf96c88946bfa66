/* test_oracle_reference_examples: checks the test suite's own reference model (reference.c)
 * against values measured on real implementations (formats-spec.md §11 and the §1-3, §8 tables,
 * tagged [PTX] H200 hardware, [T2.11] torch 2.11, [MLD] ml_dtypes 0.6, [CUH] CUDA 13 headers),
 * and Philox4x32-10 against Random123's kat_vectors. The exhaustive tests trust the reference,
 * so the reference must first agree with the measured data. */
#include "reference.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>

static test_counter tc = TEST_COUNTER_INIT("reference vs measured examples");

/* Round float32 bits `x` into `fmt` under `policy` and mode, compare with the measured code. */
static void check(const char *fmt, const char *policy, ref_mode mode, uint32_t x, uint32_t want)
{
    static ref_grid grid;
    const ref_format *f = ref_format_find(fmt);
    const ref_rules *r = ref_rules_find(fmt, policy);
    if (!f || !r) {
        test_fail(&tc, "no reference rule for %s/%s", fmt, policy);
        return;
    }
    ref_grid_build(&grid, f);
    uint32_t got = ref_round(&grid, r, mode, (double)test_f32_from_bits(x));
    TEST_CHECK_EQ_HEX(&tc, got, want, "%s %s %s x=0x%08x", fmt, policy, ref_mode_names[mode], x);
}

static void check_f64(const char *fmt, const char *policy, double x, uint32_t want)
{
    static ref_grid grid;
    const ref_format *f = ref_format_find(fmt);
    const ref_rules *r = ref_rules_find(fmt, policy);
    ref_grid_build(&grid, f);
    double v = r->f64_via_f32 ? (double)(float)x : x;
    uint32_t got = ref_round(&grid, r, REF_RNE, v);
    TEST_CHECK_EQ_HEX(&tc, got, want, "%s %s f64 x=%a", fmt, policy, x);
}

static uint32_t fbits(float f) { return test_f32_bits(f); }

static void check_examples(void)
{
    /* §11 #1-#5 */
    const char *e4m3_all[] = {"nv", "nv-nosat", "torch", "ml_dtypes", "ml_dtypes-sat", "clamp"};
    for (int i = 0; i < 6; i++) {
        check("e4m3", e4m3_all[i], REF_RNE, 0x43E80000, 0x7E);
        check("e4m3", e4m3_all[i], REF_RNE, 0x3A800000, 0x00);
        check("e4m3", e4m3_all[i], REF_RNE, 0x3A800001, 0x01);
        check("e4m3", e4m3_all[i], REF_RNE, 0xAEDBE6FF, 0x80); /* #6 */
        check("e4m3", e4m3_all[i], REF_RNE, 0x3F880001, 0x39); /* #9 direct */
    }
    check("e4m3", "nv", REF_RNE, 0x43E80001, 0x7E);
    check("e4m3", "torch", REF_RNE, 0x43E80001, 0x7F);
    check("e4m3", "ml_dtypes", REF_RNE, 0x43E80001, 0x7F);
    check("e4m3", "nv", REF_RNE, 0x7F800000, 0x7E);
    check("e4m3", "nv", REF_RNE, 0xFF800000, 0xFE);
    check("e4m3", "nv-nosat", REF_RNE, 0x7F800000, 0x7F);
    check("e4m3", "nv-nosat", REF_RNE, 0xFF800000, 0xFF);
    check("e4m3", "torch", REF_RNE, 0xFF800000, 0xFF);
    check("e4m3", "ml_dtypes-sat", REF_RNE, 0x7F800000, 0x7F);
    check("e4m3", "ml_dtypes-sat", REF_RNE, 0xFF800000, 0xFF);
    check("e4m3", "nv", REF_RNE, 0xFFC00000, 0x7F);        /* #4 */
    check("e4m3", "torch", REF_RNE, 0xFFC00000, 0xFF);
    check("e4m3", "ml_dtypes", REF_RNE, 0xFFC00000, 0xFF);
    check("e4m3", "nv", REF_RNE, 0x3F880000, 0x38);        /* #9 via BF16 0x3F88: a tie -> 1.0 */
    check("e4m3", "nv", REF_RNE, fbits(480.0f), 0x7E);     /* gpu-numerics.md §1.3 host table */
    check("e4m3", "nv-nosat", REF_RNE, fbits(480.0f), 0x7F);
    /* #6, #7, #8: E5M2 */
    const char *e5m2_all[] = {"nv", "nv-nosat", "torch", "ml_dtypes", "ml_dtypes-sat", "clamp"};
    for (int i = 0; i < 6; i++) {
        check("e5m2", e5m2_all[i], REF_RNE, 0xAEDBE6FF, 0x80);
        check("e5m2", e5m2_all[i], REF_RNE, 0x476FFFFF, 0x7B);
        check("e5m2", e5m2_all[i], REF_RNE, fbits(480.0f), 0x60); /* tie 448|512 -> 512 */
    }
    check("e5m2", "nv", REF_RNE, 0x47700000, 0x7B);
    check("e5m2", "nv-nosat", REF_RNE, 0x47700000, 0x7C);
    check("e5m2", "nv", REF_RNE, 0x7FC00000, 0x7F);
    check("e5m2", "torch", REF_RNE, 0x7FC00000, 0x7F);
    check("e5m2", "ml_dtypes", REF_RNE, 0x7FC00000, 0x7E);
    check("e5m2", "nv", REF_RNE, 0x7F800000, 0x7B);
    check("e5m2", "nv-nosat", REF_RNE, 0x7F800000, 0x7C);
    /* #10: f64 464.0000000001: via f32 (numpy astype) -> 464 -> 0x7E; C++ ctor rounds once. */
    check_f64("e4m3", "ml_dtypes", 464.0000000001, 0x7E);
    check_f64("e4m3", "nv-nosat", 464.0000000001, 0x7F); /* __nv_cvt_double_to_fp8 rounds once */
    /* #11: E2M1 RNE sat */
    const float x11[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 7.0f, -0.1f};
    const uint32_t y11[] = {0, 2, 2, 4, 4, 6, 6, 7, 8};
    for (int i = 0; i < 9; i++) {
        check("e2m1", "nv", REF_RNE, fbits(x11[i]), y11[i]);
        check("e2m1", "ml_dtypes", REF_RNE, fbits(x11[i]), y11[i]);
        check("e2m1", "torchao", REF_RNE, fbits(x11[i]), y11[i]);
        check("e2m1", "te", REF_RNE, fbits(x11[i]), y11[i]);
    }
    /* #12 and the §2.2 table */
    check("e2m1", "nv", REF_RNE, 0x7FC00000, 0x7);
    check("e2m1", "nv", REF_RNE, 0xFFC00000, 0x7);
    check("e2m1", "ml_dtypes", REF_RNE, 0x7FC00000, 0x8);
    check("e2m1", "ml_dtypes", REF_RNE, 0xFFC00000, 0x0);
    check("e2m1", "torchao", REF_RNE, 0x7FC00000, 0x3);
    check("e2m1", "torchao", REF_RNE, 0xFFC00000, 0xB);
    check("e2m1", "te", REF_RNE, 0xFFC00000, 0x0);
    check("e2m1", "te", REF_RNE, 0x80000000, 0x0);
    check("e2m1", "te", REF_RNE, fbits(-0.1f), 0x8);
    check("e2m1", "deepgemm", REF_RNE, fbits(-0.1f), 0x0);
    check("e2m1", "deepgemm", REF_RNE, 0x80000000, 0x0);
    check("e2m1", "nv", REF_RNE, 0x80000000, 0x8);
    check("e2m1", "nv", REF_RNE, 0xFF800000, 0xF);
    check("e2m3", "nv", REF_RNE, 0x7FC00000, 0x1F);
    check("e2m3", "ml_dtypes", REF_RNE, 0x7FC00000, 0x20);
    check("e2m3", "ml_dtypes", REF_RNE, 0xFFC00000, 0x00);
    check("e2m1", "nv", REF_RZ, fbits(-0.1f), 0x8); /* gpu-numerics.md §1.3: RZ keeps the sign */
    /* #13-#15 and the §3 table: E8M0 */
    check("e8m0", "torch", REF_RNE, 0x3FC00000, 0x80);
    check("e8m0", "torch", REF_RNE, 0x3FBFFFFF, 0x7F);
    check("e8m0", "torch", REF_RNE, 0xBFC00000, 0x80);
    check("e8m0", "torch", REF_RNE, 0x00000000, 0x00);
    check("e8m0", "torch", REF_RNE, 0x7F400000, 0xFF);
    check("e8m0", "torch", REF_RNE, 0x00400000, 0x00);
    check("e8m0", "torch", REF_RNE, 0x00600000, 0x01);
    check("e8m0", "ml_dtypes", REF_RNE, 0x00500000, 0x01);
    check("e8m0", "ml_dtypes", REF_RNE, 0x00000000, 0xFF);
    check("e8m0", "ml_dtypes", REF_RNE, 0xBFC00000, 0xFF);
    check("e8m0", "ml_dtypes-sat", REF_RNE, 0x00000000, 0x00);
    check("e8m0", "ml_dtypes-sat", REF_RNE, 0xBFC00000, 0x00);
    check("e8m0", "ml_dtypes-sat", REF_RNE, 0x7F400000, 0xFE);
    const uint32_t x15[] = {0x00400000, 0x00400001, 0x7F800000, 0x7F000001};
    const uint32_t nosat15[] = {0x00, 0x01, 0xFF, 0xFF}, sat15[] = {0x00, 0x01, 0xFE, 0xFE};
    for (int i = 0; i < 4; i++) {
        check("e8m0", "ptx-rp", REF_RNE, x15[i], nosat15[i]);
        check("e8m0", "ptx-rp-sat", REF_RNE, x15[i], sat15[i]);
    }
    check("e8m0", "ptx-rp", REF_RNE, 0x3F800001, 0x80);
    check("e8m0", "ptx-rp", REF_RNE, fbits(480.0f), 0x88); /* gpu-numerics.md §1.3 host table */
    check("e8m0", "ptx-rz", REF_RNE, fbits(480.0f), 0x87);
    check("e8m0", "ptx-rz", REF_RNE, 0x80000000, 0x00);
    check("e8m0", "ptx-rp", REF_RNE, 0x7FC00000, 0xFF);
    /* §8 BF16 and #26 */
    check("bf16", "nv", REF_RNE, 0x7F7FFFFF, 0x7F80);
    check("bf16", "nv", REF_RNE, 0x807FFFFF, 0x8080);
    check("bf16", "nv", REF_RNE, 0x00000001, 0x0000);
    check("bf16", "nv", REF_RNE, 0x3F808000, 0x3F80);
    check("bf16", "nv", REF_RNE, 0x3F818000, 0x3F82);
    check("bf16", "nv", REF_RNE, 0x7FC00000, 0x7FFF);
    check("bf16", "ml_dtypes", REF_RNE, 0x7FC00000, 0x7FC0);
    check("bf16", "ml_dtypes", REF_RNE, 0xFFC00000, 0xFFC0);
    check("bf16", "nv", REF_RZ, 0x7F7FFFFF, 0x7F7F); /* gpu-numerics.md: cvt.rz keeps max */
    check("f16", "nv", REF_RNE, fbits(65520.0f), 0x7C00);
    check("f16", "nv", REF_RNE, fbits(65519.0f), 0x7BFF);
    check("f16", "nv", REF_RNE, 0xFFC00000, 0x7FFF);
}

/* Random123 kat_vectors, the three "philox4x32 10" lines (counter, key, expected). */
static void check_philox(void)
{
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int i = 0; i < 3; i++) {
        uint32_t out[4];
        ref_philox4x32_10(kat[i], kat[i] + 4, out);
        for (int w = 0; w < 4; w++)
            TEST_CHECK_EQ_HEX(&tc, out[w], kat[i][6 + w], "philox kat %d word %d", i, w);
    }
}

/* Decode examples from formats-spec.md §0. */
static void check_decode(void)
{
    struct { const char *fmt; uint32_t code; double want; } d[] = {
        {"e4m3", 0x7E, 448.0}, {"e4m3", 0x08, 0x1p-6}, {"e4m3", 0x01, 0x1p-9},
        {"e5m2", 0x7B, 57344.0}, {"e5m2", 0x01, 0x1p-16}, {"e2m1", 0x7, 6.0}, {"e2m1", 0x1, 0.5},
        {"e2m3", 0x1F, 7.5}, {"e2m3", 0x01, 0.125}, {"e3m2", 0x1F, 28.0}, {"e3m2", 0x01, 0.0625},
        {"e8m0", 0xFE, 0x1p127}, {"e8m0", 0x00, 0x1p-127}, {"bf16", 0x7F7F, 0x1.FEp127},
        {"e4m3fnuz", 0x7F, 240.0}, {"e5m2fnuz", 0x7F, 57344.0}, {"e4m3b11fnuz", 0x7F, 30.0},
        {"e4m3ieee", 0x77, 240.0}, {"f16", 0x7BFF, 65504.0},
    };
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
        double got = ref_decode(ref_format_find(d[i].fmt), d[i].code);
        TEST_CHECK(&tc, got == d[i].want, "%s decode 0x%x = %a, want %a", d[i].fmt, d[i].code, got,
                   d[i].want);
    }
    TEST_CHECK(&tc, isnan(ref_decode(ref_format_find("e4m3"), 0xFF)), "%s", "e4m3 0xFF NaN");
    TEST_CHECK(&tc, isnan(ref_decode(ref_format_find("e8m0"), 0xFF)), "%s", "e8m0 0xFF NaN");
    TEST_CHECK(&tc, isnan(ref_decode(ref_format_find("e4m3fnuz"), 0x80)), "%s", "fnuz 0x80 NaN");
    TEST_CHECK(&tc, isinf(ref_decode(ref_format_find("e5m2"), 0xFC)), "%s", "e5m2 0xFC -Inf");
}

int main(void)
{
    check_examples();
    check_philox();
    check_decode();
    return test_summary(&tc);
}
