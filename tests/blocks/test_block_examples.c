/* test_block_examples.c: the worked block-quantization examples of docs/formats-spec.md (section
 * 4.4 table and section 11 #16-24, #27, #28). Every expected value below is transcribed from the
 * spec (its provenance tags: [TR] C transcriptions of TE / torchao / DeepGEMM source, [T2.11]
 * torch runs), never produced by fpsim. */
#include "fpsim_block.h"
#include "fpsim_core.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

static test_counter tc = TEST_COUNTER_INIT("block worked examples");

static fpsim_scheme scheme(const char *text)
{
    fpsim_scheme s;
    if (fpsim_scheme_parse(&s, text) != FPSIM_OK) {
        fprintf(stderr, "FAIL scheme '%s': %s\n", text, fpsim_last_error());
        exit(1);
    }
    return s;
}

/* Quantize one row of 32 values holding `amax` at element 0 and check the E8M0 scale and the
 * element code of the amax element. */
static void mx_case(const char *text, uint32_t amax_bits, int scale, int elem)
{
    fpsim_scheme s = scheme(text);
    float x[32] = {0};
    x[0] = test_f32_from_bits(amax_bits);
    x[5] = 0.5f * x[0]; /* a smaller companion; does not change the amax */
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    fpsim_qopts o;
    fpsim_qopts_default(&o);
    o.threads = 1;
    if (fpsim_block_quantize(&q, &s, x, 1, 32, &o) != FPSIM_OK) {
        test_fail(&tc, "%s amax 0x%08x: %s", text, amax_bits, fpsim_last_error());
        return;
    }
    TEST_CHECK_EQ_HEX(&tc, q.scale_codes[0], scale, "%s amax 0x%08x scale", text, amax_bits);
    if (elem >= 0)
        TEST_CHECK_EQ_HEX(&tc, fpsim_qtensor_code(&q, 0, 0), elem, "%s amax 0x%08x element", text,
                          amax_bits);
    fpsim_qtensor_free(&q);
}

static void mx_examples(void)
{
    /* section 4.4: MXFP8 E4M3 (floor / ceil / even / rceil) */
    mx_case("mxfp8-e4m3:rule=floor", 0x3F800000, 0x77, 0x78);
    mx_case("mxfp8-e4m3:rule=ceil", 0x3F800000, 0x77, 0x78);
    mx_case("mxfp8-e4m3:rule=even", 0x3F800000, 0x77, -1);
    mx_case("mxfp8-e4m3:rule=rceil", 0x3F800000, 0x77, 0x78);
    mx_case("mxfp8-e4m3:rule=floor", 0x43E00000, 0x7F, 0x7E);
    mx_case("mxfp8-e4m3:rule=ceil", 0x43E00000, 0x80, 0x76);
    mx_case("mxfp8-e4m3:rule=even", 0x43E00000, 0x7F, -1);
    mx_case("mxfp8-e4m3:rule=rceil", 0x43E00000, 0x7F, 0x7E);
    mx_case("mxfp8-e4m3:rule=floor", 0x43FA0000, 0x7F, 0x7E); /* #16: 500 clamped to 448 */
    mx_case("mxfp8-e4m3:rule=ceil", 0x43FA0000, 0x80, 0x78);
    mx_case("mxfp8-e4m3:rule=even", 0x43FA0000, 0x80, -1);
    mx_case("mxfp8-e4m3:rule=rceil", 0x43FA0000, 0x80, 0x78); /* #16 */
    mx_case("mxfp8-e4m3:rule=rceil-sat", 0x43FA0000, 0x80, 0x78);
    mx_case("mxfp8-e4m3:rule=floor", 0x437FFFFF, 0x7E, 0x7E); /* #17: 512 clamped */
    mx_case("mxfp8-e4m3:rule=ceil", 0x437FFFFF, 0x7F, 0x78);
    mx_case("mxfp8-e4m3:rule=even", 0x437FFFFF, 0x7F, -1);
    mx_case("mxfp8-e4m3:rule=rceil", 0x437FFFFF, 0x7F, 0x78);
    mx_case("mxfp8-e4m3:rule=microxcaling", 0x437FFFFF, 0x7F, -1); /* #17: float log2 */
    mx_case("mxfp8-e4m3:rule=floor", 0x00000000, 0x00, 0x00);
    mx_case("mxfp8-e4m3:rule=ceil", 0x00000000, 0x00, 0x00);
    mx_case("mxfp8-e4m3:rule=even", 0x00000000, 0x00, 0x00);
    mx_case("mxfp8-e4m3:rule=rceil", 0x00000000, 0x00, 0x00);
    mx_case("mxfp8-e4m3:rule=rceil-sat", 0x00000000, 0x00, 0x00);
    mx_case("mxfp8-e4m3:rule=microxcaling", 0x00000000, 0x00, 0x00);
    mx_case("mxfp8-e4m3:rule=gfloat", 0x00000000, 0x00, 0x00);
    /* MXFP4 amax 7.0: FLOOR 0x7F (7 saturates to 6 = code 0x7), RCEIL 0x80 */
    mx_case("mxfp4:rule=floor", 0x40E00000, 0x7F, 0x7);
    mx_case("mxfp4:rule=rceil", 0x40E00000, 0x80, -1);
    /* #18: amax +Inf: torchao (main) RCEIL / FLOOR 0xFF, TE (rceil-sat) 0xFE */
    mx_case("mxfp8-e4m3:rule=rceil", 0x7F800000, 0xFF, -1);
    mx_case("mxfp8-e4m3:rule=floor", 0x7F800000, 0xFF, -1);
    mx_case("mxfp8-e4m3:rule=rceil-sat", 0x7F800000, 0xFE, -1);
}

/* #19-#21: NVFP4 scale chains. The tensor holds one block with the given amax and a second block
 * whose amax is the global amax. */
static void nvfp4_scale_case(const char *text, uint32_t gamax, uint32_t bamax, int want)
{
    fpsim_scheme s = scheme(text);
    float x[32] = {0};
    x[0] = test_f32_from_bits(bamax);
    x[16] = test_f32_from_bits(gamax);
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    if (fpsim_block_quantize(&q, &s, x, 1, 32, NULL) != FPSIM_OK) {
        test_fail(&tc, "%s: %s", text, fpsim_last_error());
        return;
    }
    TEST_CHECK_EQ_HEX(&tc, q.scale_codes[0], want, "%s global 0x%08x block 0x%08x", text, gamax,
                      bamax);
    fpsim_qtensor_free(&q);
}

static void nvfp4_examples(void)
{
    fpsim_scheme s = scheme("nvfp4");
    float x[32] = {3.0f, 1.0f, -0.3f, 2.2f};
    x[16] = 10.0f;
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    if (fpsim_block_quantize(&q, &s, x, 1, 32, NULL) != FPSIM_OK) {
        test_fail(&tc, "nvfp4 #19: %s", fpsim_last_error());
        return;
    }
    TEST_CHECK_EQ_HEX(&tc, test_f32_bits(q.s_enc), 0x43866666, "#19 %s", "S_enc");
    TEST_CHECK_EQ_HEX(&tc, test_f32_bits(q.global_scale), 0x3B73CF3E, "#19 %s", "S_dec");
    TEST_CHECK_EQ_HEX(&tc, q.scale_codes[0], 0x70, "#19 %s", "block scale");
    static const int codes[4] = {7, 4, 9, 6};
    for (int i = 0; i < 4; i++)
        TEST_CHECK_EQ_HEX(&tc, fpsim_qtensor_code(&q, 0, (size_t)i), codes[i], "#19 element %d", i);
    fpsim_qtensor_free(&q);

    nvfp4_scale_case("nvfp4:chain=te", 0x429CCC41, 0x3CBE65BD, 0x21);      /* #20 */
    nvfp4_scale_case("nvfp4:chain=torchao", 0x429CCC41, 0x3CBE65BD, 0x20); /* #20 */
    nvfp4_scale_case("nvfp4:chain=te", 0x3E7078CC, 0x3B67E231, 0x4E);      /* #21 */
    nvfp4_scale_case("nvfp4:chain=torchao", 0x3E7078CC, 0x3B67E231, 0x4D); /* #21 */
}

static void fp8_block_examples(void)
{
    float x[128] = {3.0f, 1.5f, -2.0f};
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    /* #22: TE pow2, amax 3: scale 128, scale_inv 2^-7, x = 3 -> 0x7C; DeepGEMM ue8m0 sf 2^-7 */
    fpsim_scheme s = scheme("fp8-block:scale=te-pow2");
    if (fpsim_block_quantize(&q, &s, x, 1, 128, NULL) == FPSIM_OK) {
        TEST_CHECK_EQ_HEX(&tc, test_f32_bits(q.scale_inv[0]), 0x3C000000, "#22 te-pow2 %s",
                          "scale_inv");
        TEST_CHECK_EQ_HEX(&tc, q.codes[0], 0x7C, "#22 te-pow2 %s", "x=3");
    } else
        test_fail(&tc, "#22: %s", fpsim_last_error());
    s = scheme("fp8-block:scale=deepgemm-ue8m0");
    if (fpsim_block_quantize(&q, &s, x, 1, 128, NULL) == FPSIM_OK) {
        TEST_CHECK_EQ_HEX(&tc, test_f32_bits(q.scale_inv[0]), 0x3C000000, "#22 deepgemm-ue8m0 %s",
                          "sf");
        TEST_CHECK_EQ_HEX(&tc, q.codes[0], 0x7C, "#22 deepgemm-ue8m0 %s", "x=3");
    } else
        test_fail(&tc, "#22: %s", fpsim_last_error());
    /* #23: FP32 scales, amax 1.0, x = 0x3E9B6DB8: TE 0x71 vs DeepGEMM 0x70 */
    float y[128] = {1.0f, test_f32_from_bits(0x3E9B6DB8)};
    s = scheme("fp8-block:scale=te-fp32");
    if (fpsim_block_quantize(&q, &s, y, 1, 128, NULL) == FPSIM_OK)
        TEST_CHECK_EQ_HEX(&tc, q.codes[1], 0x71, "#23 %s", "te-fp32");
    s = scheme("fp8-block:scale=deepgemm-fp32");
    if (fpsim_block_quantize(&q, &s, y, 1, 128, NULL) == FPSIM_OK) {
        TEST_CHECK_EQ_HEX(&tc, q.codes[1], 0x70, "#23 %s", "deepgemm-fp32");
        TEST_CHECK_EQ_HEX(&tc, test_f32_bits(1.0f / q.scale_inv[0]), 0x43DFFFFF,
                          "#23 deepgemm multiplier %s", "1/(1/448)");
    }
    /* #24: all-zero 1x128 block: DeepGEMM ue8m0 sf 2^-22 / TE scale 1 / torchao MX 0x00 */
    float z[128] = {0};
    s = scheme("fp8-block:scale=deepgemm-ue8m0");
    if (fpsim_block_quantize(&q, &s, z, 1, 128, NULL) == FPSIM_OK)
        TEST_CHECK_EQ_HEX(&tc, test_f32_bits(q.scale_inv[0]), 0x34800000, "#24 %s", "deepgemm sf");
    s = scheme("fp8-block:scale=te-fp32");
    if (fpsim_block_quantize(&q, &s, z, 1, 128, NULL) == FPSIM_OK)
        TEST_CHECK_EQ_HEX(&tc, test_f32_bits(q.scale_inv[0]), 0x3F800000, "#24 %s", "te scale_inv");
    s = scheme("mxfp8-e4m3");
    if (fpsim_block_quantize(&q, &s, z, 1, 128, NULL) == FPSIM_OK)
        TEST_CHECK_EQ_HEX(&tc, q.scale_codes[0], 0x00, "#24 %s", "torchao mx");
    fpsim_qtensor_free(&q);
}

/* #27: TE SR emulation, scaled y = 2.25: byte 0xBF -> 2.0 (0x4), 0xC0 -> 3.0 (0x5); i.e. round up
 * iff the element's byte >= 0xC0. Global amax 2688 makes S_enc = 1 and a block amax of 6 gives
 * the E4M3 scale 1.0, so y = x. Element i takes byte (i mod 4) of word i/4. */
static void sr_example(void)
{
    enum { N = 4096 };
    static float x[N];
    for (int i = 0; i < N; i++)
        x[i] = (i % 16 == 0) ? 6.0f : 2.25f;
    fpsim_scheme s = scheme("nvfp4:sr=1");
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    fpsim_qopts o;
    fpsim_qopts_default(&o);
    o.global_amax_given = 1;
    o.global_amax = 2688.0f;
    o.seed = 0x0123456789ABCDEFull;
    o.stream = 7;
    if (fpsim_block_quantize(&q, &s, x, 16, N / 16, &o) != FPSIM_OK) {
        test_fail(&tc, "#27: %s", fpsim_last_error());
        return;
    }
    TEST_CHECK_EQ_HEX(&tc, test_f32_bits(q.s_enc), 0x3F800000, "#27 %s", "S_enc");
    int seen_up = 0, seen_down = 0;
    for (int i = 0; i < N; i++) {
        if (i % 16 == 0)
            continue;
        uint32_t w = fpsim_sr_word(o.seed, o.stream, (uint64_t)i >> 2);
        uint32_t byte = (w >> (8 * (i & 3))) & 0xFF;
        int want = byte >= 0xC0 ? 0x5 : 0x4;
        seen_up += want == 5;
        seen_down += want == 4;
        TEST_CHECK_EQ_HEX(&tc, fpsim_qtensor_code(&q, (size_t)(i / (N / 16)), (size_t)(i % (N / 16))),
                          want, "#27 element %d byte 0x%02x", i, byte);
    }
    TEST_CHECK(&tc, seen_up > 0 && seen_down > 0, "#27 both directions exercised (%d up)", seen_up);
    fpsim_qtensor_free(&q);
}

/* #28: RHT of e_0 is 0.25 everywhere. */
static void rht_example(void)
{
    float v[16] = {1.0f}, y[16];
    fpsim_rht16(y, v);
    for (int j = 0; j < 16; j++)
        TEST_CHECK_EQ_HEX(&tc, test_f32_bits(y[j]), 0x3E800000, "#28 output %d", j);
    /* A zero sum is +0, as the FP32 accumulation of TE's BF16 matmul gives it, even when every
     * input is -0 (a butterfly would give -0 + -0 = -0); and x - x is +0. */
    float z[16], w[16];
    for (int i = 0; i < 16; i++) {
        z[i] = -0.0f;
        w[i] = i < 2 ? 1.5f : -0.0f; /* outputs 0.25 (1.5 s_0 +- 1.5 s_1): 0.75 or 0 */
    }
    fpsim_rht16(y, z);
    for (int j = 0; j < 16; j++)
        TEST_CHECK_EQ_HEX(&tc, test_f32_bits(y[j]), 0x00000000, "RHT of -0 vectors: output %d", j);
    fpsim_rht16(y, w);
    for (int j = 0; j < 16; j++)
        TEST_CHECK_EQ_HEX(&tc, test_f32_bits(y[j]), (j & 1) ? 0x00000000 : 0x3F400000, "RHT of (1.5, 1.5, -0, ...): output %d", j);
}

int main(void)
{
    mx_examples();
    nvfp4_examples();
    fp8_block_examples();
    sr_example();
    rht_example();
    return test_summary(&tc);
}
