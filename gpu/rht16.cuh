/* rht16.cuh: TE's 16-point random Hadamard transform of BF16 inputs in FP32, exact, where the
 * inputs allow it (the columnwise kernel v8; other inputs take its FP64 forms).
 *
 * The reference (formats/block_nvfp4.c fpsim_rht16) computes y_j = sum_i +-0.25 s_i u_i in
 * double and rounds each y_j once to BF16 (nearest-even). For BF16 inputs whose exponents span at
 * most 41 binades that double sum is exact, so the reference is BF16_RNE(exact y_j), and any
 * exact method gives the same bits. When the nonzero inputs are finite BF16 values with exponent
 * fields 3..250 that span at most 12 binades, every partial sum of a fast Walsh-Hadamard
 * transform (FWHT) is a multiple of the smallest term's quantum below 2^24 of them (8 significant
 * bits + 12 binades + 4 carry bits), so the FP32 butterflies are exact (sums that cancel into the
 * subnormal range included: FP32 adds are exact there) and one BF16 rounding remains. A zero y_j
 * is +0 (the reference's in-order sum starts from +0).
 * (A two-group form for spans up to 25, two exact FWHTs joined by a TwoSum and rounding to odd,
 * was measured slower on the H200 than the FP64 FWHT it would replace: gpu/RESULTS.md run 36.)
 * Host builds (tests/gpu/test_rht16.cu) run the same operations as IEEE single adds (SSE, round to
 * nearest), so the host test of this form against fpsim_rht16 covers the device arithmetic. */
#ifndef FPSIM_RHT16_CUH
#define FPSIM_RHT16_CUH

#include <stdint.h>
#include <string.h>
#if defined(__CUDACC__)
#include <cuda_bf16.h>
#endif

/* TE's 16-point RHT sign vector (formats/block_nvfp4.c fpsim_rht16). */
__host__ __device__ __forceinline__ float rht_sign(int i)
{
    return ((0xD7E8u >> i) & 1u) ? -1.0f : 1.0f; /* -1 at i = 3, 5, 6, 7, 8, 9, 10, 12, 14, 15 */
}

__host__ __device__ __forceinline__ uint32_t rht_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}
__host__ __device__ __forceinline__ float rht_float(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* Unrolled on the device; host compilers do not know the pragma. */
#if defined(__CUDA_ARCH__)
#define FPSIM_RHT_UNROLL _Pragma("unroll")
#else
#define FPSIM_RHT_UNROLL
#endif

/* FP32 add, subtract and multiply, each rounded to nearest even (no contraction). */
__host__ __device__ __forceinline__ float rht_add(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}
__host__ __device__ __forceinline__ float rht_sub(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}
__host__ __device__ __forceinline__ float rht_mul(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

/* BF16 nearest-even of two finite FP32 values, as floats (the BF16 bits in the top half):
 * cvt.rn.bf16x2.f32 on the device, the integer rounding of the top 16 bits on the host. */
__host__ __device__ __forceinline__ void rht_bf16_pair(float a, float b, float &ra, float &rb)
{
#if defined(__CUDA_ARCH__)
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    uint32_t hb;
    memcpy(&hb, &h, 4);
    ra = rht_float(hb << 16);
    rb = rht_float(hb & 0xFFFF0000u);
#else
    const uint32_t x = rht_bits(a), y = rht_bits(b);
    ra = rht_float((x + 0x7FFFu + ((x >> 16) & 1u)) & 0xFFFF0000u);
    rb = rht_float((y + 0x7FFFu + ((y >> 16) & 1u)) & 0xFFFF0000u);
#endif
}

/* What the exact forms need to know about u[16]: span = emax - emin, the largest minus the
 * smallest exponent field of the nonzero inputs (0 when all are zero); in_range: every input
 * finite, with field 3..250 when nonzero; bf16: every input a BF16 value; ok = in_range && bf16. */
struct rht16_range {
    uint32_t span;
    int in_range, bf16, ok;
};

template <int BF16> __host__ __device__ __forceinline__ rht16_range rht16_range_of(const float (&u)[16])
{
    /* the largest and the smallest nonzero |u| bits (zero wraps to the top in bits - 1), and for
     * FP32 inputs whether any is not a BF16 value: 2-4 integer instructions per element */
    uint32_t hi = 0, lo_m1 = 0xFFFFFFFFu, wide = 0;
FPSIM_RHT_UNROLL
    for (int i = 0; i < 16; i++) {
        const uint32_t b = rht_bits(u[i]) & 0x7FFFFFFFu;
        hi = hi > b ? hi : b;
        lo_m1 = lo_m1 < b - 1u ? lo_m1 : b - 1u;
        if (!BF16) wide |= b & 0xFFFFu;
    }
    const uint32_t any = lo_m1 != 0xFFFFFFFFu; /* a nonzero input */
    const uint32_t emax = hi >> 23, emin = any ? (lo_m1 + 1u) >> 23 : 255u;
    rht16_range r;
    r.span = emax >= emin ? emax - emin : 0u;
    r.in_range = emax <= 250u && !(any && emin < 3u);
    r.bf16 = !wide;
    r.ok = r.in_range && r.bf16;
    return r;
}

/* In-place FWHT of w[16] (h = 1, 2, 4, 8: w_i + w_{i+h}, w_i - w_{i+h}); exact where the
 * comment above says so. */
__host__ __device__ __forceinline__ void rht16_fwht(float (&w)[16])
{
FPSIM_RHT_UNROLL
    for (int h = 1; h < 16; h <<= 1)
FPSIM_RHT_UNROLL
        for (int i = 0; i < 16; i++)
            if ((i & h) == 0) {
                const float p = w[i], q = w[i + h];
                w[i] = rht_add(p, q);
                w[i + h] = rht_sub(p, q);
            }
}

/* The RHT of u[16] into out[16] in FP32; only for r.ok and r.span <= 12 (r = rht16_range_of(u)). */
__host__ __device__ __forceinline__ void rht16_fp32(const float (&u)[16], float (&out)[16])
{
    float w[16];
FPSIM_RHT_UNROLL
    for (int i = 0; i < 16; i++)
        w[i] = rht_mul(u[i], 0.25f * rht_sign(i));
    rht16_fwht(w);
    /* + 0: a zero sum is +0, as the reference's in-order sums from +0 */
FPSIM_RHT_UNROLL
    for (int i = 0; i < 16; i += 2)
        rht_bf16_pair(rht_add(w[i], 0.0f), rht_add(w[i + 1], 0.0f), out[i], out[i + 1]);
}

#endif
