/* bench_gemm.c: `fpsim bench gemm [--device cpu|gpu]`.
 *
 * cpu: the accumulation-model GEMMs against the BLAS sgemm of the same shape, measured in the
 *      same run (ratio = model time / sgemm time).
 * gpu: cuBLASLt at the linear-layer shapes of Llama-3.1-8B (hidden 4096, MLP 14336, 32 query /
 *      8 KV heads of 128) for T tokens: BF16 vs FP8 E4M3 with per-tensor scales (fast and
 *      non-fast accumulation) and with block scales (1x128 activations x 128x128 weights, the
 *      DeepSeek-V3 / NeMo RL FP8 recipe). Median of CUDA-event timings; fp32 output for all.
 * gpu --linear: the same layers with fpsim's GPU quantizers and scale recalibration included
 *      (bench_gemm_linear.c, experiments/fp8-linear-speed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_gemm_linear.h"
#include "cli_util.h"
#include "commands.h"
#include "fpsim_gemm.h"
#ifdef FPSIM_HAVE_CUDA
#include "fpsim_gpu_gemm.h"
#endif

static const char *CMD = "bench gemm";

static float rand_e4m3(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    unsigned e = 4 + (unsigned)((*s >> 40) % 6), m = (*s >> 20) & 7, neg = (unsigned)(*s >> 63);
    float v = (float)(8 + m) * (float)(1u << e) / 8192.0f; /* (8+m) * 2^(e-10), e in 4..9 */
    return neg ? -v : v;
}

static int bench_cpu(int json, int threads)
{
    const size_t M = 256, N = 256, K = 1024;
    float *A = malloc(M * K * sizeof *A), *B = malloc(N * K * sizeof *B), *C = malloc(M * N * sizeof *C);
    uint64_t s = 42;
    for (size_t i = 0; i < M * K; i++) A[i] = rand_e4m3(&s);
    for (size_t i = 0; i < N * K; i++) B[i] = rand_e4m3(&s);
    const char *models[] = {"fp32", "fp32:seq", "fp64", "hopper-qgmma:fast", "hopper-qgmma:promote=128", "mma-sync-fp8"};
    double base = 0;
    if (json) printf("{\"device\": \"cpu\", \"shape\": [%zu, %zu, %zu], \"results\": [", M, N, K);
    else printf("CPU GEMM %zux%zux%zu (e4m3 inputs), threads %d; baseline = BLAS sgemm, same run\n", M, N, K, threads);
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        fpsim_accum acc;
        fpsim_accum_parse(&acc, models[m]);
        double best = 1e30;
        for (int r = 0; r < 3; r++) {
            double t0 = fpsim_cli_seconds();
            fpsim_gemm_tn(C, A, B, M, N, K, &acc, 1, 1, FPSIM_E4M3, threads);
            double t = fpsim_cli_seconds() - t0;
            if (t < best) best = t;
        }
        if (m == 0) base = best;
        double gprod = (double)M * N * K / best / 1e9;
        if (json)
            printf("%s{\"model\": \"%s\", \"seconds\": %.6g, \"gproducts_per_s\": %.4g, \"ratio_vs_sgemm\": %.4g}",
                   m ? ", " : "", acc.name, best, gprod, best / base);
        else
            printf("  %-26s %9.4f s  %8.3f Gproducts/s  %7.1fx sgemm time\n", acc.name, best, gprod, best / base);
    }
    if (json) printf("]}\n");
    free(A), free(B), free(C);
    return 0;
}

#ifdef FPSIM_HAVE_CUDA
static int bench_gpu(int json, size_t T, int reps)
{
    struct { const char *name; size_t N, K; } layers[] = {
        {"qkv", 4096 + 2 * 1024, 4096}, {"o", 4096, 4096}, {"gate_up", 2 * 14336, 4096}, {"down", 4096, 14336}};
    struct { const char *name; fpsim_gpu_gemm_config cfg; } kinds[] = {
        {"bf16", {FPSIM_BF16, FPSIM_BF16, FPSIM_GPU_SCALE_TENSOR, FPSIM_GPU_SCALE_TENSOR, 0}},
        {"fp8 tensor fast", {FPSIM_E4M3, FPSIM_E4M3, FPSIM_GPU_SCALE_TENSOR, FPSIM_GPU_SCALE_TENSOR, 1}},
        {"fp8 tensor non-fast", {FPSIM_E4M3, FPSIM_E4M3, FPSIM_GPU_SCALE_TENSOR, FPSIM_GPU_SCALE_TENSOR, 0}},
        {"fp8 1x128 x 128x128", {FPSIM_E4M3, FPSIM_E4M3, FPSIM_GPU_SCALE_VEC128, FPSIM_GPU_SCALE_BLK128, 0}},
    };
    enum { NK = 4 };
    double total[NK] = {0};
    fpsim_gpu_gemm_info info;
    if (json) printf("{\"device\": \"gpu\", \"tokens\": %zu, \"results\": [", T);
    else printf("cuBLASLt linear layers of Llama-3.1-8B, %zu tokens (Y = X W^T: M = tokens), fp32 output\n", T);
    int first = 1;
    for (size_t l = 0; l < sizeof layers / sizeof layers[0]; l++) {
        double bf16_ms = 0;
        for (int k = 0; k < NK; k++) {
            double ms;
            /* cuBLASLt's A is our first operand: the weight (N x K) would make M the output width;
             * fpsim_gpu_gemm_tn computes C (M x N) = A B^T with A = activations (T x K). */
            fpsim_status st = fpsim_gpu_gemm_time(&ms, T, layers[l].N, layers[l].K, &kinds[k].cfg, reps, &info);
            if (st) {
                fpsim_cli_error(CMD, "%s %s: %s", layers[l].name, kinds[k].name, fpsim_last_error());
                return FPSIM_EXIT_FAILURE;
            }
            if (k == 0) bf16_ms = ms;
            total[k] += ms;
            double tflops = 2.0 * T * layers[l].N * layers[l].K / (ms * 1e-3) / 1e12;
            if (json)
                printf("%s{\"layer\": \"%s\", \"kind\": \"%s\", \"M\": %zu, \"N\": %zu, \"K\": %zu, \"ms\": %.5g, "
                       "\"tflops\": %.4g, \"speedup_vs_bf16\": %.4g, \"algo\": \"%s\"}",
                       first ? "" : ", ", layers[l].name, kinds[k].name, T, layers[l].N, layers[l].K, ms, tflops,
                       bf16_ms / ms, info.algo);
            else
                printf("  %-8s %-22s %6zux%5zux%5zu %8.4f ms %7.1f TFLOP/s  %5.2fx bf16   %s\n", layers[l].name,
                       kinds[k].name, T, layers[l].N, layers[l].K, ms, tflops, bf16_ms / ms, info.algo);
            first = 0;
        }
    }
    if (json) {
        printf("], \"device_name\": ");
        fpsim_cli_json_string(stdout, info.device);
        printf(", \"cublaslt_version\": %zu}\n", info.cublaslt_version);
    } else {
        printf("  all four layers:\n");
        for (int k = 0; k < NK; k++)
            printf("  %-31s %8.4f ms  %5.2fx bf16\n", kinds[k].name, total[k], total[0] / total[k]);
        printf("  device: %s, cuBLASLt %zu\n", info.device, info.cublaslt_version);
    }
    return 0;
}
#endif

int bench_gemm(int argc, char **argv)
{
    const char *device = "cpu", *v;
    int json = 0, threads = 0, linear = 0;
    long tokens = 8192, reps = 20;
    for (int i = 1; i < argc; i++) {
        int r;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: fpsim bench gemm [--device cpu|gpu] [--linear] [--tokens T] [--reps N] [--threads N] [--json]\n\n"
                   "  cpu: accumulation-model GEMMs vs BLAS sgemm (same run)\n"
                   "  gpu: cuBLASLt BF16 vs FP8 (per-tensor fast/non-fast, 1x128 x 128x128) at Llama-3.1-8B\n"
                   "       linear shapes with T tokens (default 8192)\n"
                   "  gpu --linear: the same layers from BF16 inputs with fpsim's GPU quantizers and scale\n"
                   "       recalibration (per-tensor current scaling; NeMo RL's 1x128 x 128x128 block FP8)\n"
                   "       included, step vs BF16 GEMM (experiments/fp8-linear-speed)\n");
            return 0;
        }
        if (!strcmp(argv[i], "--json")) {
            json = 1;
            continue;
        }
        if (!strcmp(argv[i], "--linear")) {
            linear = 1;
            continue;
        }
        if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--device", &device))) {
            if (r < 0) return 2;
            continue;
        }
        if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--tokens", &v))) {
            if (r < 0 || fpsim_cli_parse_int(v, "--tokens", 16, 1 << 20, &tokens)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            continue;
        }
        if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--reps", &v))) {
            if (r < 0 || fpsim_cli_parse_int(v, "--reps", 1, 10000, &reps)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            continue;
        }
        if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--threads", &v))) {
            if (r < 0 || fpsim_cli_parse_threads(v, &threads)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            continue;
        }
        return fpsim_cli_unknown_option(CMD, argv[i]);
    }
    if (!strcmp(device, "cpu")) {
        if (linear) {
            fpsim_cli_error(CMD, "--linear times GPU kernels; use it with --device gpu");
            return 2;
        }
        return bench_cpu(json, threads);
    }
    if (strcmp(device, "gpu")) {
        fpsim_cli_error(CMD, "unknown device '%s'; valid: cpu, gpu", device);
        return 2;
    }
#ifdef FPSIM_HAVE_CUDA
    if (tokens % 16) {
        fpsim_cli_error(CMD, "--tokens must be a multiple of 16 for FP8 GEMMs");
        return 2;
    }
    if (linear) return bench_gemm_linear(json, (size_t)tokens, (int)reps);
    return bench_gpu(json, (size_t)tokens, (int)reps);
#else
    (void)tokens, (void)reps, (void)linear;
    fpsim_cli_error(CMD, "this fpsim was built without CUDA; --device gpu is not available");
    return 2;
#endif
}
