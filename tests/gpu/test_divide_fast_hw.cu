/* test_divide_fast_hw.cu: gpu/divide_fast.cuh (vLLM's dividing FP8 rules coded without a division)
 * against the division itself, on the device.
 *
 * Oracle: the code of clamp(__fdiv_rn(x, sf), -max, max) by cvt.rn.satfinite, and whether
 * |__fdiv_rn(x, sf)| > max: IEEE division, then the cast that the `nv` policy is bit for bit
 * (runs 5-6). Checked for E4M3 (max 448) and E5M2 (max 57344), the codes and the clip count, on
 *  - every finite BF16 pattern x against 1024 scales sf: the extremes that divide_fast_scale_ok
 *    admits (2^-80, 2^125), vLLM's eps / 448, and random scales, half of them RN(amax / 448) of a
 *    BF16 amax as vLLM forms them;
 *  - the hard cases: x within 24 float32 steps of RN(M sf), both signs, for every midpoint M
 *    between two codes of the format and for M = max, against the same scales.
 * The test also counts how many of its quotients are midpoints exactly (the ties that the FMA
 * remainder settles) and fails if none are, so a bracket that never straddles cannot pass it
 * vacuously.
 * It also checks divide_table_floor, the least raw max a scale-table entry serves, against the
 * table's bounds as divide_fast.cuh states them (usable max and eps, raw >= max(eps, 2^-60),
 * sf_m 2^e >= sf_min by ldexpf, raw < Inf), on every (mantissa, exponent) pair, for eps, format max and UE8M0
 * settings at and around each bound and 64 entry scales sf_m in [2^-16, 2^-4) per setting; it
 * fails if the usable settings are never served or the unusable ones are.
 * Without a CUDA device: prints "no CUDA device: skipped" and exits 77. */
#include <cuda_runtime.h>
#include <float.h>
#include <stdint.h>
#include <stdio.h>

#include "divide_fast.cuh"
#include "gpu_test.cuh"
#include "test_util.h"

#define NSCALES 1024u
#define NOFFSETS 48 /* offsets -24 .. 23 float32 steps around RN(M sf) */

__device__ __forceinline__ uint32_t mix32(uint32_t v)
{
    v ^= v >> 16;
    v *= 0x7FEB352Du;
    v ^= v >> 15;
    v *= 0x846CA68Bu;
    return v ^ (v >> 16);
}

/* Scale k of the sweep, in [2^-80, 2^125]. */
__device__ float sweep_scale(uint32_t k, float max)
{
    if (k == 0) return 0x1p-80f;
    if (k == 1) return 0x1p125f;
    if (k == 2) return __fdiv_rn(1e-10f, max); /* vLLM's eps / max */
    const uint32_t h = mix32(k * 0x9E3779B9u + 17u), e = 47u + h % 205u; /* exponent field 47 .. 251 */
    if (k & 1u) { /* RN(amax / max) of a BF16 amax */
        const uint32_t ea = e + 8u < 254u ? e + 8u : 254u; /* amax about 2^8 sf */
        const float amax = __uint_as_float(ea << 23 | (mix32(h) & 0x7F0000u));
        const float sf = __fdiv_rn(amax, max);
        return divide_fast_scale_ok(sf) ? sf : 1.0f;
    }
    return __uint_as_float(e << 23 | (mix32(h) & 0x7FFFFFu));
}

/* The oracle's code and clip bit of x under sf. */
__device__ __forceinline__ uint32_t oracle_code(float x, float sf, float max, int e5m2)
{
    const float t = __fdiv_rn(x, sf);
    const float y = fminf(fmaxf(t, -max), max);
    return (fpsim_hw_cvt_pair(y, 0.0f, e5m2) & 0xFFu) | (fabsf(t) > max ? 0x100u : 0u);
}

/* The value of a non-NaN E4M3 or E5M2 magnitude code, exactly (E5M2 is FP16's top byte). */
__device__ float fp8_code_value(uint32_t code, int e5m2)
{
    if (!e5m2) return fpsim_hw_e4m3_value(code);
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)(code << 8)));
    return f;
}

/* 1 where x / sf rounds to a midpoint between two codes exactly (a tie of the cast). */
__device__ __forceinline__ int is_tie(float x, float sf, float max, int e5m2)
{
    const float t = fabsf(__fdiv_rn(x, sf));
    if (!(t < max) || t == 0.0f) return 0;
    const uint32_t c = fpsim_hw_cvt_pair(t, 0.0f, e5m2) & 0x7Fu;
    const float v = fp8_code_value(c, e5m2);
    const float up = c < 0x7Fu ? fp8_code_value(c + 1u, e5m2) : v;
    const float down = c > 0u ? fp8_code_value(c - 1u, e5m2) : v;
    return t == __fmul_rn(v + up, 0.5f) || t == __fmul_rn(v + down, 0.5f);
}

/* Four inputs against the oracle; bad: [0] code mismatches, [1] clip-count mismatches, [2] ties
 * met, [3] first failing (scale, input) index + 1. */
__device__ void check4(const float (&x)[4], float sf, float max, int e5m2, uint64_t where, unsigned long long *bad)
{
    const divide_scale d = divide_scale_of(sf);
    uint32_t clipped = 0, want_clipped = 0, code_bad = 0, ties = 0;
    const uint32_t got = divide_codes4(x[0], x[1], x[2], x[3], d, max, e5m2, 1, &clipped);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const uint32_t want = oracle_code(x[k], sf, max, e5m2);
        code_bad += ((got >> (8 * k)) & 0xFFu) != (want & 0xFFu);
        want_clipped += want >> 8;
        ties += is_tie(x[k], sf, max, e5m2);
    }
    if (code_bad) atomicAdd(&bad[0], (unsigned long long)code_bad);
    if (clipped != want_clipped) atomicAdd(&bad[1], 1ull);
    if (ties) atomicAdd(&bad[2], (unsigned long long)ties);
    if (code_bad || clipped != want_clipped) atomicMin(&bad[3], where + 1ull);
}

/* Every finite BF16 x (four per thread) against every scale. */
__global__ void sweep_bf16(int e5m2, float max, unsigned long long *bad)
{
    const uint64_t n = (uint64_t)NSCALES * (65536u / 4u), stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint32_t k = (uint32_t)(i / (65536u / 4u)), x0 = (uint32_t)(i % (65536u / 4u)) * 4u;
        float x[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const uint32_t b = (x0 + (uint32_t)j) << 16;
            x[j] = (b & 0x7F800000u) == 0x7F800000u ? 0.0f : __uint_as_float(b); /* finite only */
        }
        check4(x, sweep_scale(k, max), max, e5m2, i, bad);
    }
}

/* x within 24 steps of RN(M sf) for every midpoint M and M = max, both signs (four offsets per
 * thread). ncodes: the format's largest finite magnitude code; midpoint m < ncodes lies between
 * codes m and m + 1, m == ncodes is max itself. */
__global__ void sweep_midpoints(int e5m2, float max, uint32_t ncodes, unsigned long long *bad)
{
    const uint32_t per_scale = (ncodes + 1u) * 2u * (NOFFSETS / 4);
    const uint64_t n = (uint64_t)NSCALES * per_scale, stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const uint32_t k = (uint32_t)(i / per_scale), r = (uint32_t)(i % per_scale);
        const uint32_t m = r / (2u * (NOFFSETS / 4)), neg = (r / (NOFFSETS / 4)) & 1u, o0 = (r % (NOFFSETS / 4)) * 4u;
        const float sf = sweep_scale(k, max);
        const float mid =
            m == ncodes ? max : __fmul_rn(fp8_code_value(m, e5m2) + fp8_code_value(m + 1u, e5m2), 0.5f);
        const uint32_t c = __float_as_uint(__fmul_rn(mid, sf));
        float x[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const int off = (int)(o0 + (uint32_t)j) - NOFFSETS / 2;
            const uint32_t b = (uint32_t)((int)c + off);
            x[j] = (b & 0x7F800000u) == 0x7F800000u ? 0.0f : __uint_as_float(b | (neg << 31));
        }
        check4(x, sf, max, e5m2, i, bad);
    }
}

/* Settings for the table floor sweep: eps, format max, UE8M0 rounding. */
#define NSETTINGS 16
__constant__ float setting_eps[NSETTINGS] = {0.0f,     1e-45f,         1e-30f,   1e-10f,
                                             1e-6f,    1e-5f,          0x1p-16f, 0x1.000002p-16f,
                                             1e-3f,    0x1p-60f,       0x1.000002p-60f, 0x1.fffffep-61f,
                                             1e-10f,   1e-10f,         1e-10f,   1e-10f};
__constant__ float setting_max[NSETTINGS] = {448.0f, 448.0f, 57344.0f, 448.0f, 448.0f, 57344.0f, 448.0f, 448.0f,
                                             448.0f, 448.0f, 448.0f,   448.0f, 64.0f,  65536.0f, 63.9f,  70000.0f};

/* Thread i: setting i / (2 * 64 * 128), UE8M0 or not, entry scale j, mantissa m; every exponent.
 * bad: [0] served where the bounds say no or the reverse, [1] served in usable settings,
 * [2] served in unusable ones, [3] first failing index + 1. */
__global__ void sweep_table_floor(unsigned long long *bad)
{
    const uint32_t n = NSETTINGS * 2u * 64u * 128u;
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint32_t m = i % 128u, j = (i / 128u) % 64u, ue8m0 = (i / (128u * 64u)) % 2u, k = i / (2u * 64u * 128u);
    const float eps = setting_eps[k], max = setting_max[k];
    const int usable = max >= 64.0f && max <= 65536.0f && eps <= 0x1p-16f;
    /* the ends of [2^-16, 2^-4) and random scales between */
    const uint32_t h = mix32(i * 0x9E3779B9u + 5u);
    const float sf_m = j == 0 ? 0x1p-16f : j == 1 ? 0x1.fffffep-5f : __uint_as_float((111u + h % 12u) << 23 | (mix32(h) & 0x7FFFFFu));
    const divide_table_range range = divide_table_bounds(eps, max, (int)ue8m0);
    const uint32_t least = divide_table_floor(m, sf_m, range);
    const uint32_t lo = __float_as_uint(fmaxf(eps, 0x1p-60f));
    const float sf_min = fmaxf(eps, ue8m0 ? 0x1p-32f : 0.0f);
    unsigned long long wrong = 0, served = 0;
    for (uint32_t e = 0; e < 256u; e++) {
        const uint32_t raw = e << 23 | m << 16;
        const float sf = ldexpf(sf_m, (int)e - 127);
        const int want = usable && raw >= lo && raw < 0x7F800000u && sf >= sf_min;
        const int got = raw - least < 0x7F800000u - least;
        wrong += got != want;
        served += got;
    }
    if (wrong) {
        atomicAdd(&bad[0], wrong);
        atomicMin(&bad[3], (unsigned long long)i + 1ull);
    }
    if (served) atomicAdd(&bad[usable ? 1 : 2], served);
}

int main(void)
{
    if (!gpu_test_have_device("skipped")) return TEST_SKIP;
    int failed = 0;
    for (int e5m2 = 0; e5m2 < 2; e5m2++) {
        const float max = e5m2 ? 57344.0f : 448.0f;
        const uint32_t ncodes = e5m2 ? 0x7Bu : 0x7Eu;
        unsigned long long a[4] = {0ull, 0ull, 0ull, ~0ull}, b[4] = {0ull, 0ull, 0ull, ~0ull};
        if (gpu_test_counters(a, 4, [&](unsigned long long *d) { sweep_bf16<<<2048, 256>>>(e5m2, max, d); }) ||
            gpu_test_counters(b, 4, [&](unsigned long long *d) { sweep_midpoints<<<2048, 256>>>(e5m2, max, ncodes, d); }))
            return 1;
        const char *fmt = e5m2 ? "E5M2" : "E4M3";
        printf("%s, every finite BF16 x x %u scales: %llu code mismatches, %llu clip-count mismatches, %llu ties",
               fmt, NSCALES, a[0], a[1], a[2]);
        if (a[0] || a[1]) printf(" (first: index %llu)", a[3] - 1ull);
        printf("\n%s, x within 24 steps of each midpoint and max x %u scales: %llu code mismatches, "
               "%llu clip-count mismatches, %llu ties",
               fmt, NSCALES, b[0], b[1], b[2]);
        if (b[0] || b[1]) printf(" (first: index %llu)", b[3] - 1ull);
        printf("\n");
        failed |= a[0] || a[1] || b[0] || b[1];
        if (!a[2] || !b[2]) {
            printf("FAIL: %s: no tie met, the midpoint path went untested\n", fmt);
            failed = 1;
        }
    }
    unsigned long long t[4] = {0ull, 0ull, 0ull, ~0ull};
    if (gpu_test_counters(t, 4, [&](unsigned long long *d) {
            sweep_table_floor<<<(NSETTINGS * 2 * 64 * 128 + 255) / 256, 256>>>(d);
        }))
        return 1;
    printf("scale table floor, %d settings x 2 roundings x 64 entry scales x every BF16 raw max: %llu disagree with "
           "the bounds, %llu served (usable settings), %llu served (unusable)",
           NSETTINGS, t[0], t[1], t[2]);
    if (t[0]) printf(" (first: index %llu)", t[3] - 1ull);
    printf("\n");
    if (t[0] || !t[1] || t[2]) {
        printf("FAIL: the scale table's floor does not follow its bounds\n");
        failed = 1;
    }
    return failed;
}
