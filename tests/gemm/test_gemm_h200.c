/* test_gemm_h200.c: whole GEMMs measured through cuBLASLt 13.1 on an H200 (tests/gemm/data,
 * README there), reproduced bit for bit by the CPU models. The measured outputs are the oracle.
 *
 *  vv{256,384,1024}: FP8 E4M3, VEC128 x VEC128 block scales, non-fast (fold auto = mulb-fma),
 *                    plus K=256 with B's scales all 1 and with A's all 1;
 *  bf16_4096:        BF16 128x128x4096, where the heuristic chose split-K 3 (COMPUTE_TYPE);
 *  fast8192:         FP8 E4M3 64x64x8192 FAST_ACCUM=1, split-K 3, scales 0.5 and 2;
 *  vb8192, bv8192:   FP8 E4M3 64x64x8192 VEC128 x BLK128x128 and BLK128x128 x VEC128, non-fast,
 *                    split-K 3: chunks of 512-element units (24, 24, 16 scale blocks), not the
 *                    128-element units of the per-tensor kernels (22, 22, 20), which must miss.
 * Only the first 32 (16 for vb/bv8192) rows of A and B and the matching block of C are stored (an output
 * depends only on its row of A and its row of B). Codes are decoded here by formula. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_gemm.h"
#include "fpsim_npy.h"

static int failures = 0;

static void *load(const char *name, fpsim_npy_dtype want, size_t *rows, size_t *cols)
{
    char path[256];
    snprintf(path, sizeof path, "tests/gemm/data/%s.npy", name);
    fpsim_npy_info info;
    void *data = NULL;
    if (fpsim_npy_load(path, &info, &data) != FPSIM_OK || info.dtype != want || info.ndim != 2) {
        fprintf(stderr, "cannot load %s: %s\n", path, fpsim_last_error());
        exit(1);
    }
    *rows = info.shape[0];
    *cols = info.shape[1];
    return data;
}

/* OCP E4M3 code -> value (0x7F/0xFF NaN). */
static float e4m3(uint8_t c)
{
    int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
    if (e == 15 && m == 7) return NAN;
    double v = e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    return (float)(s ? -v : v);
}

static float *fp8_operand(const char *name, size_t *rows, size_t *cols)
{
    uint8_t *c = load(name, FPSIM_NPY_U8, rows, cols);
    float *x = malloc(*rows * *cols * sizeof *x);
    for (size_t i = 0; i < *rows * *cols; i++) x[i] = e4m3(c[i]);
    free(c);
    return x;
}

static float *bf16_operand(const char *name, size_t *rows, size_t *cols)
{
    uint16_t *h = load(name, FPSIM_NPY_U16, rows, cols);
    float *x = malloc(*rows * *cols * sizeof *x);
    for (size_t i = 0; i < *rows * *cols; i++) {
        uint32_t u = (uint32_t)h[i] << 16;
        memcpy(&x[i], &u, sizeof u);
    }
    free(h);
    return x;
}

static void compare(const char *what, const float *got, const float *want, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += memcmp(&got[i], &want[i], sizeof(float)) != 0;
    if (bad) {
        failures++;
        fprintf(stderr, "FAIL %s: %zu of %zu outputs differ from the H200\n", what, bad, n);
    } else {
        printf("%-44s %zu of %zu outputs equal the H200 bit for bit\n", what, n, n);
    }
}

static void vec128_case(size_t K, const char *c_name, int a_ones, int b_ones)
{
    char n[64];
    size_t M, N, K1, L, r, cc;
    snprintf(n, sizeof n, "vv%zu_a", K);
    float *A = fp8_operand(n, &M, &K1);
    snprintf(n, sizeof n, "vv%zu_b", K);
    float *B = fp8_operand(n, &N, &K1);
    snprintf(n, sizeof n, "vv%zu_sa", K);
    float *sa = load(n, FPSIM_NPY_F32, &r, &L);
    snprintf(n, sizeof n, "vv%zu_sb", K);
    float *sb = load(n, FPSIM_NPY_F32, &r, &L);
    if (a_ones)
        for (size_t i = 0; i < M * L; i++) sa[i] = 1.0f;
    if (b_ones)
        for (size_t i = 0; i < N * L; i++) sb[i] = 1.0f;
    float *want = load(c_name, FPSIM_NPY_F32, &r, &cc), *C = malloc(M * N * sizeof *C);
    fpsim_accum acc;
    fpsim_accum_parse(&acc, "hopper-qgmma"); /* promote=128, fold auto */
    fpsim_gemm_scales gsa = {sa, 1}, gsb = {sb, 1};
    fpsim_gemm_args args = {FPSIM_E4M3, FPSIM_E4M3, 1, 1, &gsa, &gsb, 0};
    if (fpsim_gemm_tn_ex(C, A, B, M, N, K, &acc, &args) != FPSIM_OK) {
        fprintf(stderr, "gemm: %s\n", fpsim_last_error());
        exit(1);
    }
    char what[96];
    snprintf(what, sizeof what, "VEC128 x VEC128 K=%zu%s", K, a_ones ? " (A scales 1)" : b_ones ? " (B scales 1)" : "");
    compare(what, C, want, M * N);
    /* The other fold orders must NOT all match, or the data would not pin the order down. */
    acc.fold = FPSIM_FOLD_FMA;
    fpsim_gemm_tn_ex(C, A, B, M, N, K, &acc, &args);
    size_t same = 0;
    for (size_t i = 0; i < M * N; i++) same += memcmp(&C[i], &want[i], 4) == 0;
    if (!a_ones && !b_ones && same == M * N) {
        failures++;
        fprintf(stderr, "FAIL K=%zu: fold fma also matches; the case does not discriminate\n", K);
    }
    free(A), free(B), free(sa), free(sb), free(want), free(C);
}


/* Sum of block-scaled partial GEMMs over K-chunks of `chunk_blocks` 128-blocks each (the model on
 * each slice, partials added in order): the split-K rule written out by hand, for the check that
 * the H200 data tells the 128-unit chunking from the 512-unit one. */
static void split_by_hand(float *C, const float *A, const float *B, size_t M, size_t N, size_t K, const float *sa,
                          size_t ra, int a_rpb, const float *sb, size_t rb, int b_rpb, size_t chunk_blocks)
{
    size_t L = K / 128;
    float *P = malloc(M * N * sizeof *P), *a = malloc(M * K * sizeof *a), *b = malloc(N * K * sizeof *b);
    float *xa = malloc(ra * L * sizeof *xa), *xb = malloc(rb * L * sizeof *xb);
    fpsim_accum acc;
    fpsim_accum_parse(&acc, "hopper-qgmma");
    for (size_t i = 0; i < M * N; i++) C[i] = 0.0f;
    for (size_t b0 = 0; b0 < L; b0 += chunk_blocks) {
        size_t nb = L - b0 < chunk_blocks ? L - b0 : chunk_blocks, len = nb * 128;
        for (size_t i = 0; i < M; i++) memcpy(a + i * len, A + i * K + b0 * 128, len * sizeof *a);
        for (size_t i = 0; i < N; i++) memcpy(b + i * len, B + i * K + b0 * 128, len * sizeof *b);
        for (size_t i = 0; i < ra; i++) memcpy(xa + i * nb, sa + i * L + b0, nb * sizeof *xa);
        for (size_t i = 0; i < rb; i++) memcpy(xb + i * nb, sb + i * L + b0, nb * sizeof *xb);
        fpsim_gemm_scales gsa = {xa, a_rpb}, gsb = {xb, b_rpb};
        fpsim_gemm_args args = {FPSIM_E4M3, FPSIM_E4M3, 1, 1, &gsa, &gsb, 0};
        if (fpsim_gemm_tn_ex(P, a, b, M, N, len, &acc, &args) != FPSIM_OK) {
            fprintf(stderr, "gemm: %s\n", fpsim_last_error());
            exit(1);
        }
        for (size_t i = 0; i < M * N; i++) C[i] = b0 ? C[i] + P[i] : P[i];
    }
    free(P), free(a), free(b), free(xa), free(xb);
}

static size_t count_equal(const float *x, const float *y, size_t n)
{
    size_t same = 0;
    for (size_t i = 0; i < n; i++) same += memcmp(&x[i], &y[i], sizeof(float)) == 0;
    return same;
}

/* Block-scaled split-K (S = 3) with a BLK128x128 operand: `name`_{a,b,sa,sb,c}. */
static void blk_splitk_case(const char *name, int a_blk)
{
    char n[64];
    size_t M, N, K, ra, rb, L, r, cc;
    snprintf(n, sizeof n, "%s_a", name);
    float *A = fp8_operand(n, &M, &K);
    snprintf(n, sizeof n, "%s_b", name);
    float *B = fp8_operand(n, &N, &K);
    snprintf(n, sizeof n, "%s_sa", name);
    float *sa = load(n, FPSIM_NPY_F32, &ra, &L);
    snprintf(n, sizeof n, "%s_sb", name);
    float *sb = load(n, FPSIM_NPY_F32, &rb, &L);
    snprintf(n, sizeof n, "%s_c", name);
    float *want = load(n, FPSIM_NPY_F32, &r, &cc), *C = malloc(M * N * sizeof *C);
    int a_rpb = a_blk ? 128 : 1, b_rpb = a_blk ? 1 : 128;
    fpsim_accum acc;
    fpsim_accum_parse(&acc, "hopper-qgmma,splitk=3");
    fpsim_gemm_scales gsa = {sa, a_rpb}, gsb = {sb, b_rpb};
    fpsim_gemm_args args = {FPSIM_E4M3, FPSIM_E4M3, 1, 1, &gsa, &gsb, 0};
    if (fpsim_gemm_tn_ex(C, A, B, M, N, K, &acc, &args) != FPSIM_OK) {
        fprintf(stderr, "gemm: %s\n", fpsim_last_error());
        exit(1);
    }
    char what[96];
    snprintf(what, sizeof what, "%s K=%zu, split-K 3", a_blk ? "BLK128x128 x VEC128" : "VEC128 x BLK128x128", K);
    compare(what, C, want, M * N);
    /* Written out by hand: 24-block chunks must match, 22-block chunks (the per-tensor unit) not. */
    split_by_hand(C, A, B, M, N, K, sa, ra, a_rpb, sb, rb, b_rpb, 24);
    snprintf(what, sizeof what, "%s by hand, chunks of 24 blocks", name);
    compare(what, C, want, M * N);
    split_by_hand(C, A, B, M, N, K, sa, ra, a_rpb, sb, rb, b_rpb, 22);
    size_t same = count_equal(C, want, M * N);
    printf("%-44s %zu of %zu equal (must not be all)\n", "  chunks of 22 blocks (unit 128)", same, M * N);
    if (same == M * N) {
        failures++;
        fprintf(stderr, "FAIL %s: 22-block chunks also match; the case does not discriminate\n", name);
    }
    free(A), free(B), free(sa), free(sb), free(want), free(C);
}

int main(void)
{
    vec128_case(256, "vv256_c", 0, 0);
    vec128_case(384, "vv384_c", 0, 0);
    vec128_case(1024, "vv1024_c", 0, 0);
    vec128_case(256, "vv256_c_sbone", 0, 1);
    vec128_case(256, "vv256_c_saone", 1, 0);

    size_t M, N, K, r, c;
    float *A = bf16_operand("bf16_4096_a", &M, &K), *B = bf16_operand("bf16_4096_b", &N, &K);
    float *want = load("bf16_4096_c", FPSIM_NPY_F32, &r, &c), *C = malloc(M * N * sizeof *C);
    fpsim_accum acc;
    fpsim_accum_parse(&acc, "hopper-hgmma,splitk=3");
    fpsim_gemm_tn(C, A, B, M, N, K, &acc, 1, 1, FPSIM_BF16, 0);
    compare("BF16 K=4096, split-K 3", C, want, M * N);
    free(A), free(B), free(want), free(C);

    A = fp8_operand("fast8192_a", &M, &K);
    B = fp8_operand("fast8192_b", &N, &K);
    want = load("fast8192_c", FPSIM_NPY_F32, &r, &c);
    C = malloc(M * N * sizeof *C);
    fpsim_accum_parse(&acc, "hopper-qgmma:fast,splitk=3");
    fpsim_gemm_tn(C, A, B, M, N, K, &acc, 0.5f, 2.0f, FPSIM_E4M3, 0);
    compare("FP8 fast K=8192, split-K 3", C, want, M * N);
    free(A), free(B), free(want), free(C);

    blk_splitk_case("vb8192", 0);
    blk_splitk_case("bv8192", 1);

    if (failures) {
        fprintf(stderr, "test_gemm_h200: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_gemm_h200: all measured GEMMs reproduced\n");
    return 0;
}
