/* test_bf16_pairs_hw.cu: the bf16-pair E2M1/E2M3 forms (gpu/elem_bf16_pairs.cuh) run on the GPU,
 * against the CPU emulator's chain.
 *
 * The forms rest on the hardware's fma.rn.bf16x2 rounding once to nearest even; the host build of
 * the header models that instruction, and tests/gpu/test_lean_rne.cu checks the model's algorithm
 * on the host. Here the device build runs: for every bf16 x in lane 0 (a partner of another
 * magnitude and sign in lane 1) and every scale 2^k the forms accept (k = -124 .. 120), the codes
 * are compared with the core's code of the float32 product x * 2^k under a saturating spec,
 * computed on the host: the independent oracle. Also the instruction itself: fma.rn.bf16x2 of every
 * bf16 |x| times 2^k plus each constant the forms add, against the host model.
 * Without a CUDA device: prints "no CUDA device: skipped" and exits 77. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elem_bf16_pairs.cuh"
#include "fpsim_formats.h"
#include "gpu_test.cuh"
#include "test_util.h"

enum { K_MIN = -124, K_COUNT = 245, PAIRS = 0x10000 };

static __host__ __device__ uint32_t partner_of(uint32_t x)
{
    return (x * 40503u + 0x1234u) & 0xFFFFu;
}

/* Thread i: k = K_MIN + i / PAIRS, lane 0 = i % PAIRS. */
template <int F> __global__ void pairs_probe(uint32_t *out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (uint32_t)K_COUNT * PAIRS) return;
    const uint32_t x = i % PAIRS, k_field = i / PAIRS + (uint32_t)(K_MIN + 127);
    out[i] =
        fpsim_e2mx_bf16x2_rne_sat<F>(x | partner_of(x) << 16, fpsim_bf16x2_pow2_of_f32_bits(k_field << 23));
}

/* Thread i: fma.rn.bf16x2(|x| pair, 2^k pair, c pair) with x = i % PAIRS (both lanes: x and its
 * partner), k = K_MIN + (i / PAIRS) % K_COUNT, c = consts[i / PAIRS / K_COUNT]. */
__global__ void fma_probe(uint32_t *out, const uint32_t *consts, int nconst)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (uint32_t)K_COUNT * PAIRS * (uint32_t)nconst) return;
    const uint32_t x = i % PAIRS, k_field = (i / PAIRS) % K_COUNT + (uint32_t)(K_MIN + 127);
    const uint32_t u = (x | partner_of(x) << 16) & 0x7FFF7FFFu;
    out[i] =
        fpsim_bf16x2_fma_rn(u, fpsim_bf16x2_pow2_of_f32_bits(k_field << 23), consts[i / PAIRS / K_COUNT]);
}

static int is_nan_bf16(uint32_t b)
{
    return (b & 0x7FFFu) > 0x7F80u;
}

/* The first spec of format f that saturates overflow and Inf (the forms' policies). */
static int saturating_spec(fpsim_spec *s, fpsim_format_id f)
{
    for (int p = 0; p < fpsim_policy_count(); p++) {
        if (fpsim_spec_make(s, f, fpsim_policy_name(p), FPSIM_RNE, 0) != FPSIM_OK) continue;
        if (s->flags & (FPSIM_SPEC_UNSIGNED_ZERO | FPSIM_SPEC_NEGZERO_IN_POS)) continue;
        const uint16_t top = (uint16_t)(1u << (s->bits - 1));
        if (s->ovf_pos == s->max_mag && s->inf_pos == s->max_mag && s->ovf_neg == (top | s->max_mag) &&
            s->inf_neg == (top | s->max_mag))
            return 1;
    }
    return 0;
}

template <int F> static int check_form(uint32_t *dout, uint32_t *host)
{
    fpsim_spec spec;
    if (!saturating_spec(&spec, (fpsim_format_id)F)) {
        printf("FAIL: no saturating spec of %s\n", fpsim_format_get((fpsim_format_id)F)->name);
        return 1;
    }
    const size_t n = (size_t)K_COUNT * PAIRS;
    pairs_probe<F><<<(unsigned)((n + 255) / 256), 256>>>(dout);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        printf("FAIL: kernel: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    cudaMemcpy(host, dout, n * 4, cudaMemcpyDeviceToHost);
    char name[96];
    snprintf(name, sizeof name, "%s bf16 pairs x 2^k on the GPU vs float32 product + core (%s)",
             fpsim_format_get((fpsim_format_id)F)->name, fpsim_policy_name(spec.policy));
    test_counter tc = TEST_COUNTER_INIT(name);
    for (size_t i = 0; i < n; i++) {
        const uint32_t x = (uint32_t)(i % PAIRS), y = partner_of(x);
        if (is_nan_bf16(x) || is_nan_bf16(y)) continue;
        const int k = K_MIN + (int)(i / PAIRS);
        const uint32_t pbits = (uint32_t)(k + 127) << 23;
        float p;
        memcpy(&p, &pbits, 4);
        for (int lane = 0; lane < 2; lane++) {
            const uint32_t xb = (lane ? y : x) << 16;
            float xv;
            memcpy(&xv, &xb, 4);
            const float yv = xv * p;
            uint32_t yb;
            memcpy(&yb, &yv, 4);
            TEST_CHECK_EQ_HEX(&tc, (host[i] >> (16 * lane)) & 0xFFFFu, fpsim_round_f32(yb, &spec, 0),
                              "bf16 0x%04x x 2^%d (lane %d)", lane ? y : x, k, lane);
        }
    }
    return test_summary(&tc);
}

int main(void)
{
    if (!gpu_test_have_device("skipped")) return TEST_SKIP;
    static const uint32_t consts[] = {0x42804280u, 0x42824282u, 0x42844284u,
                                      0x41804180u, 0x41884188u, 0x41904190u};
    const int nconst = (int)(sizeof consts / sizeof consts[0]);
    const size_t n = (size_t)K_COUNT * PAIRS * nconst;
    uint32_t *dout, *dconst, *host = (uint32_t *)malloc(n * 4);
    if (!host || cudaMalloc(&dout, n * 4) != cudaSuccess ||
        cudaMalloc(&dconst, sizeof consts) != cudaSuccess) {
        printf("FAIL: allocation\n");
        return 1;
    }
    cudaMemcpy(dconst, consts, sizeof consts, cudaMemcpyHostToDevice);
    int failed = 0;

    fma_probe<<<(unsigned)((n + 255) / 256), 256>>>(dout, dconst, nconst);
    if (cudaDeviceSynchronize() != cudaSuccess) {
        printf("FAIL: kernel: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 1;
    }
    cudaMemcpy(host, dout, n * 4, cudaMemcpyDeviceToHost);
    test_counter tf = TEST_COUNTER_INIT("fma.rn.bf16x2(|x|, 2^k, c) on the GPU vs the host model");
    for (size_t i = 0; i < n; i++) {
        const uint32_t x = (uint32_t)(i % PAIRS), y = partner_of(x);
        if (is_nan_bf16(x) || is_nan_bf16(y)) continue;
        const uint32_t kf = (uint32_t)((i / PAIRS) % K_COUNT) + (uint32_t)(K_MIN + 127);
        const uint32_t want =
            fpsim_bf16x2_fma_rn((x | y << 16) & 0x7FFF7FFFu, fpsim_bf16x2_pow2_of_f32_bits(kf << 23),
                                consts[i / PAIRS / K_COUNT]);
        TEST_CHECK_EQ_HEX(&tf, host[i], want, "x 0x%04x 0x%04x, k field %u, c 0x%08x", x, y, kf,
                          consts[i / PAIRS / K_COUNT]);
    }
    failed |= test_summary(&tf);
    failed |= check_form<FPSIM_E2M1>(dout, host);
    failed |= check_form<FPSIM_E2M3>(dout, host);
    cudaFree(dout);
    cudaFree(dconst);
    free(host);
    return failed ? 1 : 0;
}
