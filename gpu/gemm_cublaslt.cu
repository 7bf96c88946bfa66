/* gemm_cublaslt.cu: fpsim's own cuBLASLt GEMMs (see fpsim_gpu_gemm.h).
 *
 * One descriptor set per call, the algorithm = first heuristic result, recorded with its config
 * (algo id, tile, stages, split-K, reduction scheme, swizzle, custom option), the cuBLASLt
 * version and the SM count, so that a bit-exact comparison names exactly what it compared. */
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <vector>

#include "fpsim_gpu.h"
#include "fpsim_gpu_gemm.h"

namespace {

const size_t kWorkspace = 32u << 20;

fpsim_status cuda_fail(cudaError_t e, const char *what)
{
    return fpsim_fail(FPSIM_EIO, "CUDA error in %s: %s", what, cudaGetErrorString(e));
}

fpsim_status lt_fail(cublasStatus_t s, const char *what)
{
    return fpsim_fail(s == CUBLAS_STATUS_NOT_SUPPORTED ? FPSIM_EUNSUPPORTED : FPSIM_EIO, "cuBLASLt %s failed: status %d",
                      what, (int)s);
}

#define CU(call)                                                                                                       \
    do {                                                                                                               \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess) {                                                                                       \
            st = cuda_fail(e_, #call);                                                                                 \
            goto done;                                                                                                 \
        }                                                                                                              \
    } while (0)
#define LT(call)                                                                                                       \
    do {                                                                                                               \
        cublasStatus_t s_ = (call);                                                                                    \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                             \
            st = lt_fail(s_, #call);                                                                                   \
            goto done;                                                                                                 \
        }                                                                                                              \
    } while (0)

bool is_fp8(fpsim_format_id f) { return f == FPSIM_E4M3 || f == FPSIM_E5M2; }

cudaDataType_t cuda_type(fpsim_format_id f)
{
    return f == FPSIM_E4M3 ? CUDA_R_8F_E4M3 : f == FPSIM_E5M2 ? CUDA_R_8F_E5M2 : CUDA_R_16BF;
}

/* Exact host conversion of values already representable in the format (CUDA 13 headers, host
 * path): NOSAT so that an e5m2 Inf stays Inf; the float path writes NaN as 0x7F. */
void encode(std::vector<uint8_t> &out, const float *x, size_t n, fpsim_format_id f)
{
    if (is_fp8(f)) {
        out.resize(n);
        __nv_fp8_interpretation_t kind = f == FPSIM_E4M3 ? __NV_E4M3 : __NV_E5M2;
        for (size_t i = 0; i < n; i++) out[i] = __nv_cvt_float_to_fp8(x[i], __NV_NOSAT, kind);
    } else {
        out.resize(2 * n);
        for (size_t i = 0; i < n; i++) {
            __nv_bfloat16 h = __float2bfloat16_rn(x[i]);
            memcpy(&out[2 * i], &h, 2);
        }
    }
}

/* fpsim_gemm_scales layout (rows x L, row-major) -> cuBLASLt's. */
std::vector<float> scales_for_lt(const float *s, fpsim_gpu_scale_mode mode, size_t rows, size_t K)
{
    size_t L = (K + 127) / 128;
    std::vector<float> out;
    if (mode == FPSIM_GPU_SCALE_VEC128) { /* M-major M x L: element (m, kb) at m + kb*M */
        out.assign(rows * L, 0.0f);
        for (size_t m = 0; m < rows; m++)
            for (size_t kb = 0; kb < L; kb++) out[m + kb * rows] = s[m * L + kb];
    } else { /* K-major L4 x ceil(rows/128): tile (t, kb) at kb + t*L4 */
        size_t T = (rows + 127) / 128, L4 = (L + 3) / 4 * 4;
        out.assign(L4 * T, 0.0f);
        for (size_t t = 0; t < T; t++)
            for (size_t kb = 0; kb < L; kb++) out[kb + t * L4] = s[t * L + kb];
    }
    return out;
}

/* Descriptors for one problem; released by the destructor. */
struct LtProblem {
    cublasLtHandle_t lt = nullptr;
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulHeuristicResult_t heur;
    ~LtProblem()
    {
        if (pref) cublasLtMatmulPreferenceDestroy(pref);
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (c) cublasLtMatrixLayoutDestroy(c);
        if (op) cublasLtMatmulDescDestroy(op);
        if (lt) cublasLtDestroy(lt);
    }
};

fpsim_status check_config(const fpsim_gpu_gemm_config *cfg, size_t M, size_t N, size_t K)
{
    bool fp8 = is_fp8(cfg->a_format) && is_fp8(cfg->b_format);
    bool bf16 = cfg->a_format == FPSIM_BF16 && cfg->b_format == FPSIM_BF16;
    if (!fp8 && !bf16) return fpsim_fail(FPSIM_EINVAL, "gpu gemm: operands must be both FP8 (e4m3/e5m2) or both bf16");
    if (fp8 && cfg->a_format == FPSIM_E5M2 && cfg->b_format == FPSIM_E5M2)
        return fpsim_fail(FPSIM_EUNSUPPORTED, "gpu gemm: cuBLASLt has no e5m2 x e5m2 FP8 GEMM");
    if (bf16 && (cfg->a_scale || cfg->b_scale || cfg->fast_accum))
        return fpsim_fail(FPSIM_EINVAL, "gpu gemm: scale modes and fast accumulation are FP8 options");
    bool blk = cfg->a_scale || cfg->b_scale;
    if (blk && (cfg->a_scale == FPSIM_GPU_SCALE_TENSOR || cfg->b_scale == FPSIM_GPU_SCALE_TENSOR))
        return fpsim_fail(FPSIM_EINVAL, "gpu gemm: block scales on one operand need block scales on the other");
    if (cfg->a_scale == FPSIM_GPU_SCALE_BLK128 && cfg->b_scale == FPSIM_GPU_SCALE_BLK128)
        return fpsim_fail(FPSIM_EUNSUPPORTED, "gpu gemm: cuBLASLt on sm_90 has no BLK128x128 x BLK128x128 mode");
    if (fp8 && (K % 16 || M % 16 || N % 16))
        return fpsim_fail(FPSIM_ESHAPE, "gpu gemm: FP8 needs M, N, K multiples of 16 (got %zu x %zu x %zu)", M, N, K);
    return FPSIM_OK;
}

/* Build descriptors and pick the algorithm. dA_scale/dB_scale: device scale pointers (may be
 * null for timing: then scales are left at the library default of 1 in tensor mode). */
fpsim_status setup(LtProblem &p, size_t M, size_t N, size_t K, const fpsim_gpu_gemm_config *cfg,
                   const float *dA_scale, const float *dB_scale, fpsim_gpu_gemm_info *info)
{
    fpsim_status st = FPSIM_OK;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    size_t ws = kWorkspace;
    int nres = 0;
    LT(cublasLtCreate(&p.lt));
    LT(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (is_fp8(cfg->a_format)) {
        int8_t fast = cfg->fast_accum ? 1 : 0;
        LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
        cublasLtMatmulMatrixScale_t ma = (cublasLtMatmulMatrixScale_t)cfg->a_scale;
        cublasLtMatmulMatrixScale_t mb = (cublasLtMatmulMatrixScale_t)cfg->b_scale;
        if (cfg->a_scale) {
            LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &ma, sizeof ma));
            LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mb, sizeof mb));
        }
        if (dA_scale) LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &dA_scale, sizeof dA_scale));
        if (dB_scale) LT(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &dB_scale, sizeof dB_scale));
    }
    LT(cublasLtMatrixLayoutCreate(&p.a, cuda_type(cfg->a_format), K, M, K));
    LT(cublasLtMatrixLayoutCreate(&p.b, cuda_type(cfg->b_format), K, N, K));
    LT(cublasLtMatrixLayoutCreate(&p.c, CUDA_R_32F, M, N, M));
    LT(cublasLtMatmulPreferenceCreate(&p.pref));
    LT(cublasLtMatmulPreferenceSetAttribute(p.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    LT(cublasLtMatmulAlgoGetHeuristic(p.lt, p.op, p.a, p.b, p.c, p.c, p.pref, 1, &p.heur, &nres));
    if (nres < 1) {
        st = fpsim_fail(FPSIM_EUNSUPPORTED, "cuBLASLt found no algorithm for this GEMM");
        goto done;
    }
    if (info) {
        memset(info, 0, sizeof *info);
        fpsim_gpu_describe(info->device, sizeof info->device);
        info->cublaslt_version = cublasLtGetVersion();
        cudaDeviceGetAttribute(&info->sm_count, cudaDevAttrMultiProcessorCount, 0);
        const cublasLtMatmulAlgo_t *al = &p.heur.algo;
        size_t w;
        cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_ID, &info->algo_id, sizeof(int), &w);
        cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_TILE_ID, &info->tile_id, sizeof(int), &w);
        cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_STAGES_ID, &info->stages_id, sizeof(int), &w);
        cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &info->splitk_num, sizeof(int), &w);
        cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &info->reduction_scheme,
                                             sizeof(int), &w);
        cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &info->swizzling, sizeof(int), &w);
        cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &info->custom_option, sizeof(int),
                                             &w);
        info->workspace = p.heur.workspaceSize;
        snprintf(info->algo, sizeof info->algo,
                 "algo %d tile %d stages %d splitK %d reduction %d swizzle %d custom %d ws %zu", info->algo_id,
                 info->tile_id, info->stages_id, info->splitk_num, info->reduction_scheme, info->swizzling,
                 info->custom_option, info->workspace);
    }
done:
    return st;
}

}  // namespace

extern "C" fpsim_status fpsim_gpu_gemm_tn(float *C, const float *A, const float *B, size_t M, size_t N, size_t K,
                                          const fpsim_gpu_gemm_config *cfg, float scale_a, float scale_b,
                                          const float *scales_a, const float *scales_b, fpsim_gpu_gemm_info *info)
{
    if (fpsim_gpu_device_count() == 0) return fpsim_fail(FPSIM_ENODEV, "no CUDA device found");
    if (!C || !A || !B || !cfg) return fpsim_fail(FPSIM_EINVAL, "gpu gemm: NULL argument");
    fpsim_status st = check_config(cfg, M, N, K);
    if (st) return st;
    bool blk = cfg->a_scale != FPSIM_GPU_SCALE_TENSOR;
    if (blk && (!scales_a || !scales_b)) return fpsim_fail(FPSIM_EINVAL, "gpu gemm: block scale modes need scales");

    std::vector<uint8_t> ha, hb;
    encode(ha, A, M * K, cfg->a_format);
    encode(hb, B, N * K, cfg->b_format);
    std::vector<float> sa, sb, hd(M * N);
    if (blk) {
        sa = scales_for_lt(scales_a, cfg->a_scale, M, K);
        sb = scales_for_lt(scales_b, cfg->b_scale, N, K);
    } else if (is_fp8(cfg->a_format)) {
        sa.assign(1, scale_a);
        sb.assign(1, scale_b);
    }
    void *dA = nullptr, *dB = nullptr, *dD = nullptr, *dws = nullptr;
    float *dsa = nullptr, *dsb = nullptr;
    float alpha = 1.0f, beta = 0.0f;
    {
        LtProblem p;
        CU(cudaMalloc(&dA, ha.size()));
        CU(cudaMalloc(&dB, hb.size()));
        CU(cudaMalloc(&dD, M * N * sizeof(float)));
        CU(cudaMalloc(&dws, kWorkspace));
        CU(cudaMemcpy(dA, ha.data(), ha.size(), cudaMemcpyHostToDevice));
        CU(cudaMemcpy(dB, hb.data(), hb.size(), cudaMemcpyHostToDevice));
        CU(cudaMemset(dD, 0xFF, M * N * sizeof(float))); /* poison: NaN everywhere until written */
        if (!sa.empty()) {
            CU(cudaMalloc((void **)&dsa, sa.size() * sizeof(float)));
            CU(cudaMalloc((void **)&dsb, sb.size() * sizeof(float)));
            CU(cudaMemcpy(dsa, sa.data(), sa.size() * sizeof(float), cudaMemcpyHostToDevice));
            CU(cudaMemcpy(dsb, sb.data(), sb.size() * sizeof(float), cudaMemcpyHostToDevice));
        }
        st = setup(p, M, N, K, cfg, dsa, dsb, info);
        if (st) goto done;
        LT(cublasLtMatmul(p.lt, p.op, &alpha, dA, p.a, dB, p.b, &beta, dD, p.c, dD, p.c, &p.heur.algo, dws, kWorkspace,
                          0));
        CU(cudaDeviceSynchronize());
        CU(cudaMemcpy(hd.data(), dD, M * N * sizeof(float), cudaMemcpyDeviceToHost));
        /* D is column-major M x N: element (i, n) at i + n*M. */
        for (size_t i = 0; i < M; i++)
            for (size_t n = 0; n < N; n++) C[i * N + n] = hd[i + n * M];
    }
done:
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dD);
    cudaFree(dws);
    cudaFree(dsa);
    cudaFree(dsb);
    return st;
}

namespace {

/* Fill n bytes with valid non-NaN FP8 codes (or bf16 halves with moderate exponents). */
__global__ void fill_random(uint8_t *p, size_t n, int bf16, uint32_t seed)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t h = (uint32_t)i * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        uint8_t v = (uint8_t)h;
        if (bf16) v = (i & 1) ? (uint8_t)(0x3C | (h & 0x80)) : v; /* high byte: exponent near 2^-7..2^0 */
        else if ((v & 0x7F) == 0x7F) v ^= 1;
        p[i] = v;
    }
}

__global__ void fill_ones(float *p, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) p[i] = 1.0f;
}

}  // namespace

extern "C" fpsim_status fpsim_gpu_gemm_time(double *ms, size_t M, size_t N, size_t K, const fpsim_gpu_gemm_config *cfg,
                                            int reps, fpsim_gpu_gemm_info *info)
{
    if (fpsim_gpu_device_count() == 0) return fpsim_fail(FPSIM_ENODEV, "no CUDA device found");
    fpsim_status st = check_config(cfg, M, N, K);
    if (st) return st;
    if (reps < 1) reps = 1;
    size_t esz = is_fp8(cfg->a_format) ? 1 : 2;
    size_t L = (K + 127) / 128, nscale = std::max<size_t>(std::max(M, N) * ((L + 3) / 4 * 4), 1);
    void *dA = nullptr, *dB = nullptr, *dD = nullptr, *dws = nullptr;
    float *dsa = nullptr, *dsb = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    float alpha = 1.0f, beta = 0.0f;
    std::vector<float> times;
    {
        LtProblem p;
        CU(cudaMalloc(&dA, M * K * esz));
        CU(cudaMalloc(&dB, N * K * esz));
        CU(cudaMalloc(&dD, M * N * sizeof(float)));
        CU(cudaMalloc(&dws, kWorkspace));
        CU(cudaMalloc((void **)&dsa, nscale * sizeof(float)));
        CU(cudaMalloc((void **)&dsb, nscale * sizeof(float)));
        fill_random<<<1024, 256>>>((uint8_t *)dA, M * K * esz, esz == 2, 0x1234u);
        fill_random<<<1024, 256>>>((uint8_t *)dB, N * K * esz, esz == 2, 0x9876u);
        fill_ones<<<(unsigned)((nscale + 255) / 256), 256>>>(dsa, nscale);
        fill_ones<<<(unsigned)((nscale + 255) / 256), 256>>>(dsb, nscale);
        CU(cudaGetLastError());
        st = setup(p, M, N, K, cfg, esz == 1 ? dsa : nullptr, esz == 1 ? dsb : nullptr, info);
        if (st) goto done;
        CU(cudaEventCreate(&e0));
        CU(cudaEventCreate(&e1));
        for (int r = 0; r < reps + 3; r++) {
            CU(cudaEventRecord(e0));
            LT(cublasLtMatmul(p.lt, p.op, &alpha, dA, p.a, dB, p.b, &beta, dD, p.c, dD, p.c, &p.heur.algo, dws,
                              kWorkspace, 0));
            CU(cudaEventRecord(e1));
            CU(cudaEventSynchronize(e1));
            float t;
            CU(cudaEventElapsedTime(&t, e0, e1));
            if (r >= 3) times.push_back(t);
        }
        std::sort(times.begin(), times.end());
        *ms = times[times.size() / 2];
    }
done:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dD);
    cudaFree(dws);
    cudaFree(dsa);
    cudaFree(dsb);
    return st;
}

/* ---- Plans: one GEMM set up once, launched on device buffers ---- */

struct fpsim_gpu_gemm_plan {
    LtProblem p;
    void *workspace = nullptr;
};

extern "C" fpsim_status fpsim_gpu_gemm_plan_create(fpsim_gpu_gemm_plan **plan, size_t M, size_t N, size_t K,
                                                   const fpsim_gpu_gemm_config *cfg, const float *scale_a_dev,
                                                   const float *scale_b_dev, fpsim_gpu_gemm_info *info)
{
    if (!plan || !cfg) return fpsim_fail(FPSIM_EINVAL, "gpu gemm plan: NULL argument");
    *plan = nullptr;
    if (fpsim_gpu_device_count() == 0) return fpsim_fail(FPSIM_ENODEV, "no CUDA device found");
    fpsim_status st = check_config(cfg, M, N, K);
    if (st) return st;
    if (cfg->a_scale != FPSIM_GPU_SCALE_TENSOR && (!scale_a_dev || !scale_b_dev))
        return fpsim_fail(FPSIM_EINVAL, "gpu gemm plan: block scale modes need device scale pointers");
    fpsim_gpu_gemm_plan *q = new (std::nothrow) fpsim_gpu_gemm_plan;
    if (!q) return fpsim_fail(FPSIM_ENOMEM, "gpu gemm plan: no host memory");
    bool fp8 = is_fp8(cfg->a_format);
    st = setup(q->p, M, N, K, cfg, fp8 ? scale_a_dev : nullptr, fp8 ? scale_b_dev : nullptr, info);
    if (st == FPSIM_OK) {
        cudaError_t e = cudaMalloc(&q->workspace, kWorkspace);
        if (e != cudaSuccess) st = cuda_fail(e, "cudaMalloc(workspace)");
    }
    if (st) {
        fpsim_gpu_gemm_plan_free(q);
        return st;
    }
    *plan = q;
    return FPSIM_OK;
}

extern "C" fpsim_status fpsim_gpu_gemm_plan_run(fpsim_gpu_gemm_plan *plan, float *D_dev, const void *A_dev,
                                                const void *B_dev, void *cuda_stream)
{
    if (!plan || !D_dev || !A_dev || !B_dev) return fpsim_fail(FPSIM_EINVAL, "gpu gemm plan run: NULL argument");
    float alpha = 1.0f, beta = 0.0f;
    LtProblem &p = plan->p;
    cublasStatus_t s = cublasLtMatmul(p.lt, p.op, &alpha, A_dev, p.a, B_dev, p.b, &beta, D_dev, p.c, D_dev, p.c,
                                      &p.heur.algo, plan->workspace, kWorkspace, static_cast<cudaStream_t>(cuda_stream));
    if (s != CUBLAS_STATUS_SUCCESS) return lt_fail(s, "cublasLtMatmul");
    return FPSIM_OK;
}

extern "C" void fpsim_gpu_gemm_plan_free(fpsim_gpu_gemm_plan *plan)
{
    if (!plan) return;
    cudaFree(plan->workspace);
    delete plan;
}
