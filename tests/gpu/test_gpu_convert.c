/* test_gpu_convert.c: GPU element conversions against oracles that are not the code under test.
 *
 *  1. Measured values (formats-spec.md §11: PTX on an H200, torch 2.11, ml_dtypes 0.6, CUDA 13
 *     headers) converted through the GPU kernels (host-pointer API).
 *  2. The hardware instruction cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32 as an oracle for the software
 *     core running on the GPU (policy nv), over 2^24 float32 patterns covering every exponent.
 *  3. Stochastic rounding does not depend on how the array is split: one call, and three calls
 *     with the running element index, give the same codes; the CPU emulator gives them too.
 * Without a CUDA device: prints "no CUDA device: skipped" and exits 77. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "fpsim_gpu.h"

static int failures = 0;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

static fpsim_spec spec(const char *fmt, const char *policy, fpsim_round mode)
{
    fpsim_spec s;
    fpsim_format_id id;
    memset(&s, 0, sizeof s);
    if (fpsim_format_lookup(fmt, &id) != FPSIM_OK || fpsim_spec_make(&s, id, policy, mode, 0) != FPSIM_OK) {
        fprintf(stderr, "FAIL: cannot make spec %s/%s: %s\n", fmt, policy, fpsim_last_error());
        exit(1);
    }
    return s;
}

static void measured_values(void)
{
    static const struct {
        const char *fmt, *policy;
        uint32_t in, want;
    } t[] = {
        {"e4m3", "nv", 0x43E80001u, 0x7E},     {"e4m3", "torch", 0x43E80001u, 0x7F},
        {"e4m3", "nv", 0x7F800000u, 0x7E},     {"e4m3", "nv", 0xFFC00000u, 0x7F},
        {"e4m3", "torch", 0xFFC00000u, 0xFF},  {"e4m3", "nv", 0x3A800000u, 0x00},
        {"e4m3", "nv", 0x3A800001u, 0x01},     {"e4m3", "nv", 0xAEDBE6FFu, 0x80},
        {"e5m2", "nv", 0x47700000u, 0x7B},     {"e5m2", "nv-nosat", 0x47700000u, 0x7C},
        {"e5m2", "ml_dtypes", 0x7FC00000u, 0x7E}, {"e2m1", "nv", 0x40A00000u, 0x6},
        {"e2m1", "nv", 0xBDCCCCCDu, 0x8},      {"e2m1", "ml_dtypes", 0xFFC00000u, 0x0},
        {"e2m1", "torchao", 0x7FC00000u, 0x3}, {"e8m0", "torch", 0x3FC00000u, 0x80},
        {"e8m0", "ml_dtypes", 0x00000000u, 0xFF}, {"e8m0", "ptx-rp-sat", 0x7F000001u, 0xFE},
        {"bf16", "nv", 0x7FC00000u, 0x7FFF},   {"bf16", "ml_dtypes", 0xFFC00000u, 0xFFC0},
        {"bf16", "nv", 0x3F818000u, 0x3F82},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        fpsim_spec s = spec(t[i].fmt, t[i].policy, FPSIM_ROUND_DEFAULT);
        float x;
        memcpy(&x, &t[i].in, 4);
        uint16_t code = 0;
        fpsim_status st = fpsim_gpu_convert_f32(&code, &x, 1, &s, 0, 0, 0);
        uint32_t got = fpsim_format_code_bytes((fpsim_format_id)s.format) == 2 ? code : (uint32_t)(code & 0xFF);
        CHECK(st == FPSIM_OK && got == t[i].want, "%s/%s 0x%08x: want 0x%x got 0x%x (%s)", t[i].fmt, t[i].policy,
              t[i].in, t[i].want, got, fpsim_last_error());
    }
}

static void hardware_oracle(void)
{
    if (!fpsim_gpu_hw_cvt_available()) {
        printf("hardware cvt: device older than sm_89, not checked\n");
        return;
    }
    const size_t n = (size_t)1 << 24;
    uint8_t *dhw = NULL, *dsw = NULL;
    uint8_t *hw = malloc(n), *sw = malloc(n);
    CHECK(fpsim_gpu_alloc((void **)&dhw, n) == FPSIM_OK && fpsim_gpu_alloc((void **)&dsw, n) == FPSIM_OK && hw && sw,
          "alloc");
    const char *fmts[2] = {"e4m3", "e5m2"};
    for (int f = 0; f < 2; f++) {
        fpsim_spec s = spec(fmts[f], "nv", FPSIM_RNE);
        CHECK(fpsim_gpu_spec_has_hw_cvt(&s), "%s/nv should take the hardware path", fmts[f]);
        uint64_t bad = 0;
        for (uint64_t first = 0; first < (1ull << 32); first += (1ull << 28)) {
            /* 2^24 consecutive patterns out of every 2^28: all signs and exponents, varied mantissas */
            uint64_t at = first + ((first >> 28) * 0x9E3779ull % ((1ull << 28) - n));
            CHECK(fpsim_gpu_sweep_f32_dev(dhw, at, n, &s, 0, 0, 0, NULL) == FPSIM_OK, "sweep hw");
            CHECK(fpsim_gpu_sweep_f32_dev(dsw, at, n, &s, 0, 0, FPSIM_GPU_SOFTWARE_ONLY, NULL) == FPSIM_OK, "sweep sw");
            CHECK(fpsim_gpu_copy(hw, dhw, n, 1) == FPSIM_OK && fpsim_gpu_copy(sw, dsw, n, 1) == FPSIM_OK, "copy");
            for (size_t i = 0; i < n; i++)
                if (hw[i] != sw[i]) {
                    if (!bad) fprintf(stderr, "%s: 0x%08llx hw 0x%02x sw 0x%02x\n", fmts[f], (unsigned long long)(at + i), hw[i], sw[i]);
                    bad++;
                }
        }
        CHECK(bad == 0, "%s/nv: %llu hardware/software mismatches", fmts[f], (unsigned long long)bad);
        printf("%s/nv: hardware cvt == software core on 16 x 2^24 patterns (%llu mismatches)\n", fmts[f],
               (unsigned long long)bad);
    }
    fpsim_gpu_free(dhw);
    fpsim_gpu_free(dsw);
    free(hw);
    free(sw);
}

static void sr_split_invariance(void)
{
    const size_t n = 1000003;
    float *x = malloc(n * 4);
    uint8_t *a = malloc(n), *b = malloc(n), *c = malloc(n);
    uint64_t z = 1;
    for (size_t i = 0; i < n; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t bits = (uint32_t)(z >> 32);
        bits = (bits & 0x807FFFFFu) | ((uint32_t)(110 + (z >> 20) % 30) << 23); /* |x| in [2^-17, 2^13) */
        memcpy(&x[i], &bits, 4);
    }
    const char *fmts[3] = {"e4m3", "e2m1", "bf16"};
    for (int f = 0; f < 3; f++) {
        fpsim_spec s = spec(fmts[f], "nv", FPSIM_SR);
        int wide = fpsim_format_code_bytes((fpsim_format_id)s.format) == 2;
        uint8_t *aa = wide ? malloc(2 * n) : a, *bb = wide ? malloc(2 * n) : b, *cc = wide ? malloc(2 * n) : c;
        size_t w = wide ? 2 : 1, cut1 = 333331, cut2 = 777777;
        CHECK(fpsim_gpu_convert_f32(aa, x, n, &s, 99, 3, 0) == FPSIM_OK, "whole");
        CHECK(fpsim_gpu_convert_f32(bb, x, cut1, &s, 99, 3, 0) == FPSIM_OK, "piece 1");
        CHECK(fpsim_gpu_convert_f32(bb + cut1 * w, x + cut1, cut2 - cut1, &s, 99, 3, cut1) == FPSIM_OK, "piece 2");
        CHECK(fpsim_gpu_convert_f32(bb + cut2 * w, x + cut2, n - cut2, &s, 99, 3, cut2) == FPSIM_OK, "piece 3");
        CHECK(fpsim_convert_f32(cc, x, n, &s, 99, 3, 0, 2) == FPSIM_OK, "cpu");
        CHECK(!memcmp(aa, bb, n * w), "%s SR: one call and three calls differ", fmts[f]);
        CHECK(!memcmp(aa, cc, n * w), "%s SR: GPU and CPU differ", fmts[f]);
        if (wide) free(aa), free(bb), free(cc);
    }
    free(x), free(a), free(b), free(c);
}

int main(void)
{
    if (fpsim_gpu_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    char dev[256];
    if (fpsim_gpu_describe(dev, sizeof dev) == FPSIM_OK) printf("device: %s\n", dev);
    measured_values();
    hardware_oracle();
    sr_split_invariance();
    printf("%s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
