/* verify_gemm.c: `fpsim verify gemm [--device cpu|gpu]`: the accumulation models against
 * measured hardware.
 *
 * --device cpu: the H200 measurements of gpu-numerics.md 3.3 (one tensor-core block each),
 *   reproduced by the block models; exits 1 on any difference.
 * --device gpu: fpsim's own cuBLASLt GEMMs (gpu/gemm_cublaslt.cu) on random and adversarial
 *   operands of several shapes; for each cuBLASLt configuration and each candidate CPU model the
 *   fraction of outputs reproduced bit for bit (NaN matches NaN) and the largest ulp distance
 *   otherwise; plus a swamping probe that reads the promotion interval off one output. Exits 1
 *   if a configuration whose order the model knows (marked "pinned") is below 100%. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_file.h"
#include "fpsim_gemm.h"
#include "fpsim_npy.h"
#ifdef FPSIM_HAVE_CUDA
#include "fpsim_gpu.h"
#include "fpsim_gpu_gemm.h"
#endif

static const char *CMD = "verify gemm";

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* ---- --device cpu: the measured single-block cases ---- */

struct block_case {
    const char *what, *model;
    fpsim_format_id fmt;
    float c, a, b;
    int n;
    float measured;
};

static int verify_cpu(void)
{
    /* gpu-numerics.md 3.3 (H200, wgmma m64n8k32 / m64n8k16 bf16 / mma.sync m16n8k32, uniform fill). */
    const struct block_case cases[] = {
        {"QGMMA c=1, 32 x 2^-15", "hopper-qgmma:fast", FPSIM_E4M3, 1, 0x1p-8f, 0x1p-7f, 32, 1.0f},
        {"mma.sync c=1, 32 x 2^-15", "mma-sync-fp8", FPSIM_E4M3, 1, 0x1p-8f, 0x1p-7f, 32, 1.0f + 0x1p-10f},
        {"QGMMA c=1, 32 x 2^-14", "hopper-qgmma:fast", FPSIM_E4M3, 1, 0x1p-7f, 0x1p-7f, 32, 1.0f},
        {"QGMMA c=1, 32 x 2^-13", "hopper-qgmma:fast", FPSIM_E4M3, 1, 0x1p-7f, 0x1p-6f, 32, 1.0f + 0x1p-8f},
        {"QGMMA c=1+2^-23, products 0", "hopper-qgmma:fast", FPSIM_E4M3, 1.0f + 0x1p-23f, 0, 0, 32, 1.0f},
        {"QGMMA c=1+2^-13, products 0", "hopper-qgmma:fast", FPSIM_E4M3, 1.0f + 0x1p-13f, 0, 0, 32, 1.0f + 0x1p-13f},
        {"QGMMA c=1+2^-14, products 0", "hopper-qgmma:fast", FPSIM_E4M3, 1.0f + 0x1p-14f, 0, 0, 32, 1.0f},
        {"QGMMA c=2^24, 32 x 1", "hopper-qgmma:fast", FPSIM_E4M3, 0x1p24f, 1, 1, 32, 0x1p24f},
        {"mma.sync c=2^24, 32 x 1", "mma-sync-fp8", FPSIM_E4M3, 0x1p24f, 1, 1, 32, 0x1p24f + 32},
        {"QGMMA c=2^14, 32 x 1", "hopper-qgmma:fast", FPSIM_E4M3, 0x1p14f, 1, 1, 32, 0x1p14f},
        {"QGMMA c=1, 32 x -2^-15", "hopper-qgmma:fast", FPSIM_E4M3, 1, -0x1p-8f, 0x1p-7f, 32, 1.0f},
        {"mma.sync c=1, 32 x -2^-15", "mma-sync-fp8", FPSIM_E4M3, 1, -0x1p-8f, 0x1p-7f, 32, 1.0f - 0x1p-10f},
        {"QGMMA c=-0, products 0", "hopper-qgmma:fast", FPSIM_E4M3, -0.0f, 0, 0, 32, 0.0f},
        {"QGMMA e5m2 c=1, 32 x 2^-22", "hopper-qgmma:fast", FPSIM_E5M2, 1, 0x1p-11f, 0x1p-11f, 32, 1.0f},
        {"HGMMA bf16 c=1, 16 x 2^-26", "hopper-hgmma", FPSIM_BF16, 1, 0x1p-13f, 0x1p-13f, 16, 1.0f},
        {"HGMMA bf16 c=1, 16 x 2^-25", "hopper-hgmma", FPSIM_BF16, 1, 0x1p-13f, 0x1p-12f, 16, 1.0f + 0x1p-21f},
    };
    int bad = 0;
    printf("%-34s %-20s %-16s %-16s %s\n", "case (H200, gpu-numerics.md 3.3)", "model", "measured", "model", "");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct block_case *c = &cases[i];
        fpsim_accum m;
        fpsim_accum_parse(&m, c->model);
        float a[32], b[32];
        for (int k = 0; k < c->n; k++) a[k] = c->a, b[k] = c->b;
        float r = fpsim_gemm_block(&m, c->c, a, b, c->n, c->fmt, c->fmt);
        int ok = f32_bits(r) == f32_bits(c->measured);
        bad += !ok;
        printf("%-34s %-20s %-16.10g %-16.10g %s\n", c->what, c->model, (double)c->measured, (double)r,
               ok ? "ok" : "DIFFERS");
    }
    printf("%s: %d of %zu measured cases reproduced\n", bad ? "FAIL" : "ok", (int)(sizeof cases / sizeof cases[0]) - bad,
           sizeof cases / sizeof cases[0]);
    return bad ? FPSIM_EXIT_FAILURE : FPSIM_EXIT_OK;
}

#ifdef FPSIM_HAVE_CUDA

/* ---- --device gpu ---- */

static uint64_t rng;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static float e4m3_value(unsigned code)
{
    int s = (code >> 7) & 1, e = (code >> 3) & 15, m = code & 7;
    double v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    if (e == 15 && m == 7) v = NAN;
    return (float)(s ? -v : v);
}

static float e5m2_value(unsigned code)
{
    int s = (code >> 7) & 1, e = (code >> 2) & 31, m = code & 3;
    double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(4 + m, e - 17) : ldexp(m, -16);
    return (float)(s ? -v : v);
}

/* A random finite value of `fmt` whose exponent field lies in [lo, hi]. */
static float rand_value(fpsim_format_id fmt, int lo, int hi)
{
    unsigned s = rnd() & 1;
    if (fmt == FPSIM_BF16) {
        uint32_t u = (s << 31) | ((uint32_t)(lo + rnd() % (unsigned)(hi - lo + 1)) << 23) | ((rnd() & 0x7F) << 16);
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    if (fmt == FPSIM_E5M2) {
        unsigned e = lo + rnd() % (unsigned)(hi - lo + 1);
        if (e > 30) e = 30;
        return e5m2_value((s << 7) | (e << 2) | (rnd() & 3));
    }
    unsigned e = lo + rnd() % (unsigned)(hi - lo + 1), m = rnd() & 7;
    if (e == 15 && m == 7) m = 6;
    return e4m3_value((s << 7) | (e << 3) | m);
}

enum { DATA_NORMAL, DATA_WIDE, DATA_CANCEL, DATA_SUBNORMAL, DATA_SPECIAL, DATA_COUNT };

/* Exponent-field ranges per data set and format: normal = values near 1, wide = the whole range. */
static void exp_range(fpsim_format_id f, int data, int *lo, int *hi)
{
    int bias = f == FPSIM_E4M3 ? 7 : f == FPSIM_E5M2 ? 15 : 127;
    int top = f == FPSIM_E4M3 ? 15 : f == FPSIM_E5M2 ? 30 : 254;
    switch (data) {
    case DATA_WIDE: *lo = f == FPSIM_BF16 ? bias - 30 : 0, *hi = f == FPSIM_BF16 ? bias + 30 : top; break;
    case DATA_SUBNORMAL: *lo = 0, *hi = f == FPSIM_BF16 ? 0 : 1; break;
    default: *lo = bias - 3, *hi = bias + 2;
    }
}

/* Fill an operand (rows x K) of data set `data`. "cancel": pairs (x, -x) at k and k+1 in A with
 * equal B, so that partial sums cancel; "special": a few NaNs, an e5m2 Inf where the format has
 * one, and all-zero rows (whose outputs must be +0). */
static void fill_operand(float *x, size_t rows, size_t K, fpsim_format_id f, int data, int is_a)
{
    int lo, hi;
    exp_range(f, data, &lo, &hi);
    for (size_t i = 0; i < rows * K; i++) x[i] = rand_value(f, lo, hi);
    if (data == DATA_CANCEL)
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k + 1 < K; k += 2) x[r * K + k + 1] = is_a ? -x[r * K + k] : x[r * K + k];
    if (data == DATA_SPECIAL) {
        for (size_t k = 0; k < K; k++) x[3 * K + k] = 0.0f; /* row 3: zeros */
        x[5 * K + 7] = NAN;
        if (f == FPSIM_E5M2) x[6 * K + 1] = is_a ? INFINITY : -INFINITY;
    }
}

typedef struct gpu_config {
    const char *name;
    fpsim_format_id fa, fb;
    fpsim_gpu_scale_mode ma, mb;
    int fast;
    const char *candidates[5]; /* CPU models tried; the first is the model we claim */
    int pinned;                /* 1: the model claims this order: anything below 100% fails */
} gpu_config;

static const gpu_config configs[] = {
    {"fp8 e4m3 tensor, fast", FPSIM_E4M3, FPSIM_E4M3, FPSIM_GPU_SCALE_TENSOR, FPSIM_GPU_SCALE_TENSOR, 1,
     {"hopper-qgmma:fast", "hopper-qgmma:promote=128", "mma-sync-fp8", NULL}, 1},
    {"fp8 e4m3 tensor, non-fast", FPSIM_E4M3, FPSIM_E4M3, FPSIM_GPU_SCALE_TENSOR, FPSIM_GPU_SCALE_TENSOR, 0,
     {"hopper-qgmma:promote=128", "hopper-qgmma:promote=64", "hopper-qgmma:promote=256", "hopper-qgmma:fast", NULL}, 1},
    {"fp8 e4m3 x e5m2 tensor, non-fast", FPSIM_E4M3, FPSIM_E5M2, FPSIM_GPU_SCALE_TENSOR, FPSIM_GPU_SCALE_TENSOR, 0,
     {"hopper-qgmma:promote=128", "hopper-qgmma:fast", NULL}, 1},
    {"fp8 VEC128 x VEC128, non-fast", FPSIM_E4M3, FPSIM_E4M3, FPSIM_GPU_SCALE_VEC128, FPSIM_GPU_SCALE_VEC128, 0,
     {"hopper-qgmma:promote=128", "hopper-qgmma:promote=128,fold=fma", "hopper-qgmma:promote=128,fold=mul-add",
      "hopper-qgmma:promote=128,fold=mula-fma", NULL}, 1},
    {"fp8 VEC128 x BLK128x128, non-fast", FPSIM_E4M3, FPSIM_E4M3, FPSIM_GPU_SCALE_VEC128, FPSIM_GPU_SCALE_BLK128, 0,
     {"hopper-qgmma:promote=128", "hopper-qgmma:promote=128,fold=mulb-fma", "hopper-qgmma:promote=128,fold=mul-add",
      "hopper-qgmma:promote=128,fold=mul-mul-add", NULL}, 1},
    {"fp8 BLK128x128 x VEC128, non-fast", FPSIM_E4M3, FPSIM_E4M3, FPSIM_GPU_SCALE_BLK128, FPSIM_GPU_SCALE_VEC128, 0,
     {"hopper-qgmma:promote=128", "hopper-qgmma:promote=128,fold=mulb-fma", "hopper-qgmma:promote=128,fold=mul-add",
      "hopper-qgmma:promote=128,fold=mula-fma", NULL}, 1},
    {"fp8 VEC128 x VEC128, fast", FPSIM_E4M3, FPSIM_E4M3, FPSIM_GPU_SCALE_VEC128, FPSIM_GPU_SCALE_VEC128, 1,
     {"hopper-qgmma:promote=128", NULL}, 0},
    {"bf16", FPSIM_BF16, FPSIM_BF16, FPSIM_GPU_SCALE_TENSOR, FPSIM_GPU_SCALE_TENSOR, 0,
     {"hopper-hgmma", "fp32:seq", NULL}, 1},
};

/* ulp distance between two finite floats (ordered integer mapping). */
static uint64_t ulp_distance(float x, float y)
{
    int64_t a = (int32_t)f32_bits(x), b = (int32_t)f32_bits(y);
    if (a < 0) a = INT32_MIN - a;
    if (b < 0) b = INT32_MIN - b;
    return (uint64_t)(a > b ? a - b : b - a);
}

/* Model output with the same scales as the GPU call. */
static fpsim_status model_gemm(float *C, const float *A, const float *B, size_t M, size_t N, size_t K,
                               const gpu_config *g, const char *model, float sa, float sb, const float *bsa,
                               const float *bsb, int threads)
{
    fpsim_accum acc;
    fpsim_status st = fpsim_accum_parse(&acc, model);
    if (st) return st;
    int blk = g->ma != FPSIM_GPU_SCALE_TENSOR;
    fpsim_gemm_scales a = {bsa, g->ma == FPSIM_GPU_SCALE_VEC128 ? 1 : 128};
    fpsim_gemm_scales b = {bsb, g->mb == FPSIM_GPU_SCALE_VEC128 ? 1 : 128};
    fpsim_gemm_args args = {g->fa, g->fb, sa, sb, blk ? &a : NULL, blk ? &b : NULL, threads};
    return fpsim_gemm_tn_ex(C, A, B, M, N, K, &acc, &args);
}

typedef struct tally {
    uint64_t total, equal, nan_pair;
    uint64_t max_ulp;
} tally;

static void compare(tally *t, const float *gpu, const float *cpu, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        t->total++;
        if (isnan(gpu[i]) && isnan(cpu[i])) {
            t->equal++;
            t->nan_pair++;
        } else if (f32_bits(gpu[i]) == f32_bits(cpu[i])) {
            t->equal++;
        } else if (isfinite(gpu[i]) && isfinite(cpu[i])) {
            uint64_t u = ulp_distance(gpu[i], cpu[i]);
            if (u > t->max_ulp) t->max_ulp = u;
        } else {
            t->max_ulp = UINT64_MAX;
        }
    }
}

/* Swamping probe (FPRev-style): a[0] = b[0] = 32 (product 2^10), every other product 2^-4.
 * A QGMMA chain that has reached 1024 truncates each later 2^-4 to 0 (grid 2^-3), so only chains
 * that start fresh count them: with promotion every P, D = 1024 + (K - P) * 2^-4, i.e.
 * P = K - 16 (D - 1024); P = K means never promoted. Uses VEC128 scales of 1 for block modes. */
static void promotion_probe(const gpu_config *g, FILE *md)
{
    const size_t M = 128, N = 128, K = 2048;
    float *A = malloc(M * K * sizeof *A), *B = malloc(N * K * sizeof *B), *C = malloc(M * N * sizeof *C);
    size_t L = K / 128;
    float *ones = malloc(M * L * sizeof *ones);
    for (size_t i = 0; i < M * K; i++) A[i] = 0.25f;
    for (size_t i = 0; i < N * K; i++) B[i] = 0.25f;
    for (size_t i = 0; i < M * L; i++) ones[i] = 1.0f;
    A[0] = B[0] = 32.0f;
    fpsim_gpu_gemm_config cfg = {g->fa, g->fb, g->ma, g->mb, g->fast};
    fpsim_gpu_gemm_info info;
    fpsim_status st = fpsim_gpu_gemm_tn(C, A, B, M, N, K, &cfg, 1.0f, 1.0f, ones, ones, &info);
    if (st) {
        printf("  probe: %s\n", fpsim_last_error());
    } else {
        double d = C[0];
        double P = (double)K - 16.0 * (d - 1024.0);
        printf("  promotion probe (K=%zu): D = %.6g -> promotion interval %.6g%s\n", K, d, P,
               P >= (double)K ? " (never promoted)" : "");
        if (md)
            fprintf(md, "| %s | promotion probe, K=%zu | D = %.6g: interval %.6g K-elements%s |\n", g->name, K, d, P,
                    P >= (double)K ? " (never promoted)" : "");
    }
    free(A), free(B), free(C), free(ones);
}


/* ---- Block-scaled split-K: the model's rule and its nearest alternatives ----
 *
 * How cuBLASLt cuts K for block-scaled split-K was measured on the H200 with this table (the
 * model follows it: unit 128 for VEC128 x VEC128, 512 with a BLK128x128 operand). Each partial is
 * computed by the model on its own slice of K (a plain block-scaled GEMM of that chunk) and the
 * partials are combined five ways, so that a kernel that cuts or sums otherwise shows at once
 * which variant it runs. */
enum { ALT_UNIT128, ALT_UNIT512, ALT_BALANCED, ALT_REVERSE, ALT_UNSPLIT, ALT_COUNT };
static const char *const alt_names[ALT_COUNT] = {
    "chunks ceil(K/128S)*128, summed in order", "chunks ceil(K/512S)*512, summed in order",
    "chunks balanced (L/S +-1 blocks), in order", "chunks ceil(K/128S)*128, last first",
    "no split (one chain of folds)"};

/* Partial C (M x N) of 128-blocks [b0, b1) under `model` (no splitk), scales sliced alike. */
static fpsim_status chunk_partial(float *P, const float *A, const float *B, size_t M, size_t N, size_t K, size_t b0,
                                  size_t b1, const gpu_config *g, const char *model, const float *bsa,
                                  const float *bsb, int threads)
{
    size_t L = (K + 127) / 128, k0 = b0 * 128, k1 = b1 * 128 < K ? b1 * 128 : K, len = k1 - k0, nb = b1 - b0;
    size_t ra = g->ma == FPSIM_GPU_SCALE_VEC128 ? M : (M + 127) / 128;
    size_t rb = g->mb == FPSIM_GPU_SCALE_VEC128 ? N : (N + 127) / 128;
    float *a = malloc(M * len * sizeof *a), *b = malloc(N * len * sizeof *b);
    float *sa = malloc(ra * nb * sizeof *sa), *sb = malloc(rb * nb * sizeof *sb);
    fpsim_status st = FPSIM_ENOMEM;
    if (a && b && sa && sb) {
        for (size_t i = 0; i < M; i++) memcpy(a + i * len, A + i * K + k0, len * sizeof *a);
        for (size_t i = 0; i < N; i++) memcpy(b + i * len, B + i * K + k0, len * sizeof *b);
        for (size_t i = 0; i < ra; i++) memcpy(sa + i * nb, bsa + i * L + b0, nb * sizeof *sa);
        for (size_t i = 0; i < rb; i++) memcpy(sb + i * nb, bsb + i * L + b0, nb * sizeof *sb);
        st = model_gemm(P, a, b, M, N, len, g, model, 1.0f, 1.0f, sa, sb, threads);
    } else {
        fpsim_fail(st, "verify gemm: out of memory for split-K slices");
    }
    free(a), free(b), free(sa), free(sb);
    return st;
}

static fpsim_status splitk_alternatives(tally *t, const float *G, const float *A, const float *B, size_t M, size_t N,
                                        size_t K, int S, const gpu_config *g, const float *bsa, const float *bsb,
                                        int threads)
{
    if (S < 2 || S > 64) return FPSIM_OK;
    size_t L = (K + 127) / 128, per = (L + (size_t)S - 1) / (size_t)S, per4 = (L + 4 * (size_t)S - 1) / (4 * (size_t)S) * 4;
    float *P = malloc((size_t)S * M * N * sizeof *P), *R = malloc(M * N * sizeof *R);
    fpsim_status st = P && R ? FPSIM_OK : fpsim_fail(FPSIM_ENOMEM, "verify gemm: out of memory");
    const char *model = g->candidates[0];
    for (int alt = 0; alt < ALT_COUNT && !st; alt++) {
        size_t bounds[65], nchunks = 0, b0 = 0;
        if (alt == ALT_UNSPLIT) {
            bounds[nchunks++] = L;
        } else {
            for (int c = 0; c < S && b0 < L; c++) {
                size_t nb = alt == ALT_BALANCED ? L / (size_t)S + ((size_t)c < L % (size_t)S)
                            : alt == ALT_UNIT512 ? per4
                                                 : per;
                b0 = b0 + nb < L ? b0 + nb : L;
                bounds[nchunks++] = b0;
            }
        }
        for (size_t c = 0, lo = 0; c < nchunks && !st; lo = bounds[c++])
            st = chunk_partial(P + c * M * N, A, B, M, N, K, lo, bounds[c], g, model, bsa, bsb, threads);
        if (st) break;
        for (size_t e = 0; e < M * N; e++) {
            float acc = 0.0f;
            for (size_t c = 0; c < nchunks; c++) {
                size_t cc = alt == ALT_REVERSE ? nchunks - 1 - c : c;
                acc = c ? acc + P[cc * M * N + e] : P[cc * M * N + e];
            }
            R[e] = acc;
        }
        compare(&t[alt], G, R, M * N);
    }
    free(P), free(R);
    return st;
}

/* --dump DIR: the operands, scales and GPU output of every block-scaled split-K GEMM as .npy,
 * for fitting a model offline when the candidates above all miss. */
static void dump_case(const char *dir, const gpu_config *g, int cfg, size_t M, size_t N, size_t K, int data,
                      const float *A, const float *B, const float *bsa, const float *bsb, const float *G)
{
    size_t L = (K + 127) / 128;
    size_t ra = g->ma == FPSIM_GPU_SCALE_VEC128 ? M : (M + 127) / 128;
    size_t rb = g->mb == FPSIM_GPU_SCALE_VEC128 ? N : (N + 127) / 128;
    struct { const char *what; const float *x; size_t r, c; } arr[] = {
        {"A", A, M, K}, {"B", B, N, K}, {"sa", bsa, ra, L}, {"sb", bsb, rb, L}, {"C", G, M, N}};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) {
        char path[512];
        size_t shape[2] = {arr[i].r, arr[i].c};
        snprintf(path, sizeof path, "%s/cfg%d_%zux%zux%zu_d%d_%s.npy", dir, cfg, M, N, K, data, arr[i].what);
        if (fpsim_npy_save(path, FPSIM_NPY_F32, 2, shape, arr[i].x))
            fprintf(stderr, "fpsim verify gemm: --dump: %s\n", fpsim_last_error());
    }
}

static int verify_gpu(uint64_t seed, int threads, int quick, const char *md_path, const char *dump)
{
    char desc[256];
    if (fpsim_gpu_describe(desc, sizeof desc) != FPSIM_OK) {
        fpsim_cli_error(CMD, "%s", fpsim_last_error());
        return FPSIM_EXIT_USAGE;
    }
    /* The markdown table is written under a temporary name and renamed when complete. */
    FILE *md = NULL;
    char md_tmp[4096] = "";
    if (md_path) {
        fpsim_status st = fpsim_file_open_temp(&md, md_tmp, sizeof md_tmp, md_path);
        if (st) return fpsim_cli_fail_input(CMD, st);
        fpsim_cli_remove_on_signal(md_tmp);
    }
    /* 128x128x4096 (bf16) and 64x64x8192 (FP8 fast) are where cuBLASLt 13.1 picks split-K. */
    struct { size_t M, N, K; } shapes[] = {{128, 128, 256}, {256, 128, 2048}, {64, 96, 208}, {128, 128, 4096},
                                           {64, 64, 8192}};
    size_t nshapes = quick ? 2 : sizeof shapes / sizeof shapes[0];
    int failed = 0;
    printf("device: %s\n", desc);
    if (md) {
        time_t now = time(NULL);
        char date[32];
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
        fprintf(md, "Command: `fpsim verify gemm --device gpu --seed %llu%s`, %s. Device: %s.\n\n",
                (unsigned long long)seed, quick ? " --quick" : "", date, desc);
        fprintf(md, "| cuBLASLt configuration | CPU model | bit-exact outputs | max ulp otherwise |\n|---|---|---|---|\n");
    }
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        const gpu_config *g = &configs[c];
        tally t[5], talt[ALT_COUNT];
        memset(t, 0, sizeof t);
        memset(talt, 0, sizeof talt);
        char alt_shape[96] = "";
        char algo[512] = "";
        int ran = 0;
        const char *skip = NULL;
        for (size_t s = 0; s < nshapes && !skip; s++) {
            size_t M = shapes[s].M, N = shapes[s].N, K = shapes[s].K;
            if (g->ma != FPSIM_GPU_SCALE_TENSOR && (K % 128)) continue; /* block modes: whole 128-K blocks */
            for (int data = 0; data < DATA_COUNT && !skip; data++) {
                rng = seed * 0x9E3779B97F4A7C15ull + c * 1000003u + s * 7919u + (uint64_t)data + 1;
                float *A = malloc(M * K * sizeof *A), *B = malloc(N * K * sizeof *B);
                float *G = malloc(M * N * sizeof *G), *R = malloc(M * N * sizeof *R);
                size_t L = (K + 127) / 128;
                float *bsa = malloc(M * L * sizeof *bsa), *bsb = malloc(N * L * sizeof *bsb);
                fill_operand(A, M, K, g->fa, data, 1);
                fill_operand(B, N, K, g->fb, data, 0);
                /* Scales that are not powers of two, so that fold and epilogue orders show. */
                for (size_t i = 0; i < M * L; i++) bsa[i] = 0.5f + (float)(rnd() % 1024) / 997.0f;
                for (size_t i = 0; i < N * L; i++) bsb[i] = 0.5f + (float)(rnd() % 1024) / 991.0f;
                float sa = g->fa == FPSIM_BF16 ? 1.0f : 0.3720703125f, sb = g->fa == FPSIM_BF16 ? 1.0f : 1.7001953125f;
                fpsim_gpu_gemm_config cfg = {g->fa, g->fb, g->ma, g->mb, g->fast};
                fpsim_gpu_gemm_info info;
                fpsim_status st = fpsim_gpu_gemm_tn(G, A, B, M, N, K, &cfg, sa, sb, bsa, bsb, &info);
                if (st == FPSIM_EUNSUPPORTED) {
                    skip = fpsim_last_error();
                } else if (st) {
                    fpsim_cli_error(CMD, "%s: %s", g->name, fpsim_last_error());
                    failed = 1;
                    skip = "error";
                } else {
                    ran = 1;
                    char one[200];
                    snprintf(one, sizeof one, "%zux%zux%zu: %s; ", M, N, K, info.algo);
                    if (data == 0 && strlen(algo) + strlen(one) < sizeof algo) strcat(algo, one);
                    if (c == 0 && s == 0 && data == 0 && md)
                        fprintf(stderr, "cuBLASLt %zu, %d SMs\n", info.cublaslt_version, info.sm_count);
                    for (int m = 0; m < 5 && g->candidates[m]; m++) {
                        /* The heuristic's split-K (per shape) is part of the order: model it. */
                        char name[96];
                        snprintf(name, sizeof name, "%s", g->candidates[m]);
                        if (info.splitk_num > 1)
                            snprintf(name + strlen(name), sizeof name - strlen(name), ",splitk=%d", info.splitk_num);
                        st = model_gemm(R, A, B, M, N, K, g, name, sa, sb, bsa, bsb, threads);
                        if (st) {
                            fpsim_cli_error(CMD, "model %s: %s", g->candidates[m], fpsim_last_error());
                            failed = 1;
                            continue;
                        }
                        compare(&t[m], G, R, M * N);
                    }
                    int blk_split = g->ma != FPSIM_GPU_SCALE_TENSOR && info.splitk_num > 1 && info.splitk_num <= 64;
                    if (blk_split) {
                        snprintf(alt_shape, sizeof alt_shape, "%zux%zux%zu, %d splits", M, N, K, info.splitk_num);
                        st = splitk_alternatives(talt, G, A, B, M, N, K, info.splitk_num, g, bsa, bsb, threads);
                        if (st) {
                            fpsim_cli_error(CMD, "split-K alternatives: %s", fpsim_last_error());
                            failed = 1;
                        }
                        if (dump) dump_case(dump, g, (int)c, M, N, K, data, A, B, bsa, bsb, G);
                    }
                }
                free(A), free(B), free(G), free(R), free(bsa), free(bsb);
            }
        }
        printf("%s%s\n", g->name, g->pinned ? "  [pinned: model order known]" : "  [not modelled]");
        if (skip) {
            printf("  not run: %s\n", skip);
            if (md) fprintf(md, "| %s | - | not run: %s | |\n", g->name, skip);
            continue;
        }
        if (!ran) continue;
        printf("  algorithms: %s\n", algo);
        for (int m = 0; m < 5 && g->candidates[m]; m++) {
            double frac = t[m].total ? (double)t[m].equal / (double)t[m].total : 0;
            char ulp[32];
            if (t[m].equal == t[m].total) snprintf(ulp, sizeof ulp, "-");
            else if (t[m].max_ulp == UINT64_MAX) snprintf(ulp, sizeof ulp, "non-finite mismatch");
            else snprintf(ulp, sizeof ulp, "%llu", (unsigned long long)t[m].max_ulp);
            printf("  %-42s %8.4f%% bit-exact (%llu of %llu), max ulp %s\n", g->candidates[m], 100.0 * frac,
                   (unsigned long long)t[m].equal, (unsigned long long)t[m].total, ulp);
            if (md)
                fprintf(md, "| %s%s | %s | %.4f%% (%llu/%llu) | %s |\n", g->name, g->pinned && m == 0 ? " (pinned)" : "",
                        g->candidates[m], 100.0 * frac, (unsigned long long)t[m].equal,
                        (unsigned long long)t[m].total, ulp);
            if (m == 0 && g->pinned && t[m].equal != t[m].total) failed = 1;
        }
        for (int a = 0; a < ALT_COUNT && talt[a].total; a++) {
            double frac = (double)talt[a].equal / (double)talt[a].total;
            printf("  split-K %s: %-40s %8.4f%% bit-exact (%llu of %llu)\n", alt_shape, alt_names[a], 100.0 * frac,
                   (unsigned long long)talt[a].equal, (unsigned long long)talt[a].total);
            if (md)
                fprintf(md, "| %s | split-K (%s): %s | %.4f%% (%llu/%llu) | |\n", g->name, alt_shape, alt_names[a],
                        100.0 * frac, (unsigned long long)talt[a].equal, (unsigned long long)talt[a].total);
        }
        if (g->fa != FPSIM_BF16) promotion_probe(g, md);
        if (md) fprintf(md, "| %s | algorithms | %s | |\n", g->name, algo);
    }
    if (md) {
        fpsim_cli_remove_on_signal(NULL);
        fpsim_status st = fclose(md) == 0 ? fpsim_file_commit(md_tmp, md_path)
                                          : fpsim_fail(FPSIM_EIO, "error writing '%s'", md_path);
        if (st) {
            fpsim_file_discard(md_tmp);
            return fpsim_cli_fail(CMD, st);
        }
    }
    printf("%s\n", failed ? "FAIL: a pinned configuration is not reproduced bit for bit" : "ok");
    return failed ? FPSIM_EXIT_FAILURE : FPSIM_EXIT_OK;
}
#endif

static void usage(FILE *out)
{
    fprintf(out, "usage: fpsim verify gemm [--device cpu|gpu] [--seed N] [--threads N] [--quick] [--md FILE] [--dump DIR]\n\n"
                 "  --device cpu   the H200 single-block measurements of gpu-numerics.md 3.3 (default)\n"
                 "  --device gpu   cuBLASLt FP8/BF16 GEMMs vs the CPU models, bit for bit, per configuration;\n"
                 "                 exits 1 if a pinned configuration is not 100%% reproduced\n"
                 "  --md FILE      also write the GPU table as markdown (for gpu/RESULTS.md)\n"
                 "  --dump DIR     write operands, scales and GPU outputs of the block-scaled split-K GEMMs\n"
                 "                 as .npy into DIR (an existing directory), for offline model fitting\n"
                 "  --seed, --threads, --quick, --md and --dump are for --device gpu: the CPU cases are\n"
                 "  fixed, so they are refused there. --md and --dump are checked before the run.\n");
}

/* --dump DIR must be an existing directory this process can write into: checked before the
 * run, not discovered file by file at its end. */
static fpsim_status check_dump_dir(const char *dir)
{
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return fpsim_fail(FPSIM_EINVAL, "--dump '%s': %s (give an existing directory)", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return fpsim_fail(FPSIM_EINVAL, "--dump '%s' is not a directory", dir);
    /* A probe file, created and removed: access() says yes to root even on a read-only mount. */
    char probe[4096];
    snprintf(probe, sizeof probe, "%s/dump-probe", dir);
    if (fpsim_file_check_writable(probe) != FPSIM_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", fpsim_last_error());
        return fpsim_fail(FPSIM_EINVAL, "--dump '%s' cannot be written (%s)", dir, why);
    }
    return FPSIM_OK;
}

int verify_gemm(int argc, char **argv)
{
    const char *device = "cpu", *md = NULL, *dump = NULL, *v;
    const char *gpu_only = NULL; /* the first option that only --device gpu uses */
    uint64_t seed = 1;
    int threads = 0, quick = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--quick")) {
            quick = 1;
            if (!gpu_only) gpu_only = "--quick";
            continue;
        }
        if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--device", &device))) {
            if (r < 0) return 2;
            continue;
        }
        if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--md", &md))) {
            if (r < 0) return 2;
            if (!gpu_only) gpu_only = "--md";
            continue;
        }
        if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--dump", &dump))) {
            if (r < 0) return 2;
            if (!gpu_only) gpu_only = "--dump";
            continue;
        }
        if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--seed", &v))) {
            if (r < 0) return 2;
            if (fpsim_cli_parse_u64(v, "--seed", &seed)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            if (!gpu_only) gpu_only = "--seed";
            continue;
        }
        if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--threads", &v))) {
            if (r < 0) return 2;
            if (fpsim_cli_parse_threads(v, &threads)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
            if (!gpu_only) gpu_only = "--threads";
            continue;
        }
        return fpsim_cli_unknown_option(CMD, argv[i]);
    }
    if (strcmp(device, "cpu") && strcmp(device, "gpu")) {
        fpsim_cli_error(CMD, "unknown device '%s'; valid: cpu, gpu", device);
        return FPSIM_EXIT_USAGE;
    }
    if (!strcmp(device, "cpu")) {
        if (gpu_only) {
            fpsim_cli_error(CMD, "%s has no effect on the CPU (its measured cases are fixed): use it with --device gpu",
                            gpu_only);
            return FPSIM_EXIT_USAGE;
        }
        return verify_cpu();
    }
    fpsim_status st;
    if (dump && (st = check_dump_dir(dump))) return fpsim_cli_fail_input(CMD, st);
    if (md && (st = fpsim_file_check_writable(md))) return fpsim_cli_fail_input(CMD, st);
#ifdef FPSIM_HAVE_CUDA
    return verify_gpu(seed, threads, quick, md, dump);
#else
    (void)seed, (void)threads, (void)quick, (void)md, (void)dump;
    fpsim_cli_error(CMD, "this fpsim was built without CUDA; rebuild with nvcc available for --device gpu");
    return FPSIM_EXIT_USAGE;
#endif
}
