/* rht16.cuh: TE's 16-point random Hadamard transform of BF16 inputs in FP32, exact where the
 * inputs allow it or certified by bounds (the columnwise kernel v8; other inputs take its FP64
 * forms).
 *
 * The reference (formats/block_nvfp4.c fpsim_rht16) computes y_j = sum_i +-0.25 s_i u_i in
 * double and rounds each y_j once to BF16 (nearest-even). For BF16 inputs whose exponents span at
 * most 41 binades that double sum is exact, so the reference is BF16_RNE(exact y_j), and any
 * method that finds BF16_RNE(exact y_j) gives the same bits. Two such methods here:
 *  - rht16_fp32: when the nonzero inputs are finite BF16 values with exponent fields 3..250 that
 *    span at most 12 binades, every partial sum of a fast Walsh-Hadamard transform (FWHT) is a
 *    multiple of the smallest term's quantum below 2^24 of them (8 significant bits + 12 binades
 *    + 4 carry bits), so the FP32 butterflies are exact (sums that cancel into the subnormal range
 *    included: FP32 adds are exact there) and one BF16 rounding remains. A zero y_j is +0 (the
 *    reference's in-order sum starts from +0).
 *  - rht16_fp32_bounded: for any finite FP32 inputs without overflow or underflow of the scaled
 *    terms (fields 3..250), the FWHT run twice, every add rounded down in one and up in the other
 *    (interval arithmetic: a difference takes the other bound of its subtrahend), encloses each
 *    exact y_j in [lo_j, hi_j]. BF16 nearest-even rounding is monotonic, so where lo_j and hi_j
 *    round to the same BF16 value, so does y_j: that is the certificate, and the result is exact
 *    without any condition on the span. Where every add is exact, lo_j = hi_j; where some are not,
 *    the interval is a few FP32 ulps wide and straddles a BF16 rounding boundary about once in
 *    2^14 outputs. On the benchmark's default fill (16 rows of 2^[-8, 8] scales), 96.5% of columns
 *    span more than 12 binades, yet 0.035% of them fail the certificate (1.1% of 32-column warps).
 * (A two-group form for spans up to 25, two exact FWHTs joined by a TwoSum and rounding to odd,
 * was measured slower on the H200 than the FP64 FWHT it would replace: gpu/RESULTS.md run 36.)
 * Host builds (tests/gpu/test_rht16.cu) run the same operations as IEEE single adds (SSE, round to
 * nearest; the directed roundings from the nearest sum and its TwoSum error), so the host test of
 * these forms against fpsim_rht16 covers the device arithmetic's algorithm. */
#ifndef FPSIM_RHT16_CUH
#define FPSIM_RHT16_CUH

#include <math.h>
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

/* FP32 a + b rounded down (UP = 0, toward -Inf) or up (UP = 1, toward +Inf): add.rm / add.rp on
 * the device. On the host: the nearest sum s and its TwoSum error e (exact: s + e = a + b when
 * nothing overflows), s moved one ulp toward the exact sum where e points past it; an exact zero
 * sum is -0 rounded down unless both operands are +0 (IEEE 754 6.3), as the device gives it. */
template <int UP> __host__ __device__ __forceinline__ float rht_add_dir(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return UP ? __fadd_ru(a, b) : __fadd_rd(a, b);
#else
    volatile float s = a + b; /* volatile: each step rounded to single, nothing reassociated */
    volatile float bv = s - a, av = s - bv;
    volatile float e = (a - av) + (b - bv);
    float r = s;
    if (UP && e > 0.0f) r = nextafterf(r, INFINITY);
    if (!UP && e < 0.0f) r = nextafterf(r, -INFINITY);
    if (!UP && r == 0.0f && !(rht_bits(a) == 0u && rht_bits(b) == 0u)) r = -0.0f;
    return r;
#endif
}
template <int UP> __host__ __device__ __forceinline__ float rht_sub_dir(float a, float b)
{
#if defined(__CUDA_ARCH__)
    return UP ? __fsub_ru(a, b) : __fsub_rd(a, b);
#else
    return rht_add_dir<UP>(a, -b);
#endif
}

/* BF16 nearest-even of two finite FP32 values, packed (a in the low half, b in the high half):
 * cvt.rn.bf16x2.f32 on the device, the integer rounding of the top 16 bits on the host. */
__host__ __device__ __forceinline__ uint32_t rht_bf16x2(float a, float b)
{
#if defined(__CUDA_ARCH__)
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    uint32_t hb;
    memcpy(&hb, &h, 4);
    return hb;
#else
    const uint32_t x = rht_bits(a), y = rht_bits(b);
    return ((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16) | ((y + 0x7FFFu + ((y >> 16) & 1u)) & 0xFFFF0000u);
#endif
}

/* How the FP32 forms turn a zero sum into +0 (the reference's in-order sums start from +0) and
 * compare the bounds' BF16 roundings: 1 (the default) on the BF16 pairs, one fma.rn.bf16x2 of
 * the pair by 1 (or 0.25, FPSIM_GPU_RHT_SCALE_AFTER) plus +0 (rht_bf16x2_times_plus0) and one
 * value comparison (+0 equals -0); 0: a float add of +0 before each rounding and a bitwise
 * comparison, twice the instructions. The value comparison is safe where the inputs are BF16
 * values and every nonzero one has field >= 3 (rht16_range_of's in_range): a nonzero sum is then
 * a multiple of 2^-133, the smallest BF16 subnormal, so it never rounds to a zero, and bounds
 * that both round to a zero, whatever their signs, hold only the exact sum 0. FP32 inputs of
 * field 3 have sums down to 2^-149, whose BF16 rounding can be -0 (test_rht16 found two): the
 * bounds of those keep the float form. */
#ifndef FPSIM_GPU_RHT_BF16_ZERO
#define FPSIM_GPU_RHT_BF16_ZERO 1
#endif

/* k times the BF16 pairs p (k = 1 or 0.25: exact on the sums these forms round, see
 * FPSIM_GPU_RHT_SCALE_AFTER), with each -0 half made +0 (x + 0 = x for every finite BF16 value,
 * subnormals included, and -0 + 0 = +0): fma.rn.bf16x2(p, k, +0) on the device, one rounding of
 * p k + 0; on the host the FP32 product (exact) plus +0, rounded to BF16. Finite halves. */
__host__ __device__ __forceinline__ uint32_t rht_bf16x2_times_plus0(uint32_t p, float k)
{
#if defined(__CUDA_ARCH__)
    __nv_bfloat162 h;
    memcpy(&h, &p, 4);
    h = __hfma2(h, __floats2bfloat162_rn(k, k), __floats2bfloat162_rn(0.0f, 0.0f));
    memcpy(&p, &h, 4);
    return p;
#else
    return rht_bf16x2(rht_float(p << 16) * k + 0.0f, rht_float(p & 0xFFFF0000u) * k + 0.0f);
#endif
}

/* Whether the BF16 pairs a and b hold equal values in both halves (+0 equals -0; no NaN). */
__host__ __device__ __forceinline__ int rht_bf16x2_same(uint32_t a, uint32_t b)
{
#if defined(__CUDA_ARCH__)
    __nv_bfloat162 x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    return __hbeq2(x, y);
#else
    for (int s = 0; s < 32; s += 16) {
        const uint32_t x = (a >> s) & 0xFFFFu, y = (b >> s) & 0xFFFFu;
        if (x != y && ((x | y) & 0x7FFFu) != 0u) return 0;
    }
    return 1;
#endif
}

/* Whether the FP32 forms on BF16 values leave the factor 0.25 out of the terms and apply it to the
 * BF16 pairs at the end (1), in the instruction that makes a zero sum +0 (rht_bf16x2_times_plus0
 * by 0.25 instead of 1), or multiply each input by +-0.25 first (0: 16 FMUL per column). At 1 the
 * signs become negated operands of the first butterflies' adds, which cost nothing. Exact: the
 * terms +-u_i (fields 3..250) are exact, their sums stay below 16 (2^124 - 2^116) < FLT_MAX (no
 * overflow, also rounded up), and every sum is a multiple of 2^-131, so BF16_RNE(4 y) is exact
 * wherever |4 y| < 2^-124 (it is a BF16 value there) and times 0.25 exact elsewhere (a normal
 * result): 0.25 BF16_RNE(4 y) = BF16_RNE(y) for every sum, and the certificate compares BF16_RNE(4 lo) with BF16_RNE(4 hi),
 * monotone as before. Only with FPSIM_GPU_RHT_BF16_ZERO and BF16 values; FP32 inputs keep 0.
 * Run 198 (H100, probe SA against 0): exact RHT cols 1654-1685 -> 1705-1717 GB/s, SR+RHT
 * 1572-1598 -> 1599-1613 on the default fill, +2% for both at --spread 0; test_rht16's device part
 * and verify (with --large on the RHT schemes) 0 mismatches. */
#ifndef FPSIM_GPU_RHT_SCALE_AFTER
#define FPSIM_GPU_RHT_SCALE_AFTER 1
#endif

/* Term i of the FWHT's input: +-0.25 u_i (rounded to FP32: exact in range), or +-u_i where
 * the 0.25 comes at the end (after: FPSIM_GPU_RHT_SCALE_AFTER on BF16 values). */
__host__ __device__ __forceinline__ float rht_term(float u, int i, int after)
{
    return after ? (rht_sign(i) < 0.0f ? -u : u) : rht_mul(u, 0.25f * rht_sign(i));
}

/* Whether rht16_range_of takes its extremes two elements at a time by three-input max and min (1,
 * the default) or one at a time (0); the same values either way (test_rht16 runs the default).
 * Run 184 (H100): a point more for the exact RHT kernels on top of FPSIM_GPU_RHT_PAIR_AMAX. */
#ifndef FPSIM_GPU_RHT_RANGE3
#define FPSIM_GPU_RHT_RANGE3 1
#endif

/* What the exact forms need to know about u[16]: span = emax - emin, the largest minus the
 * smallest exponent field of the nonzero inputs (0 when all are zero); in_range: every input
 * finite, with field 3..250 when nonzero; bf16: every input a BF16 value; ok = in_range && bf16. */
struct rht16_range {
    uint32_t span;
    int in_range, bf16, ok;
};

/* The range from the largest exponent field emax and, where any input is nonzero (any), the
 * smallest nonzero one emin; bf16 as above. */
__host__ __device__ __forceinline__ rht16_range rht16_range_of_fields(uint32_t emax, uint32_t emin, uint32_t any,
                                                                      int bf16)
{
    if (!any) emin = 255u;
    rht16_range r;
    r.span = emax >= emin ? emax - emin : 0u;
    r.in_range = emax <= 250u && !(any && emin < 3u);
    r.bf16 = bf16;
    r.ok = r.in_range && r.bf16;
    return r;
}

template <int BF16> __host__ __device__ __forceinline__ rht16_range rht16_range_of(const float (&u)[16])
{
    /* the largest and the smallest nonzero |u| bits (zero wraps to the top in bits - 1), and for
     * FP32 inputs whether any is not a BF16 value: 2-4 integer instructions per element */
    uint32_t hi = 0, lo_m1 = 0xFFFFFFFFu, wide = 0;
    if (FPSIM_GPU_RHT_RANGE3) {
        /* two elements a step through the three-input maximum and minimum (sm_90's VIMNMX3) */
FPSIM_RHT_UNROLL
        for (int i = 0; i < 16; i += 2) {
            const uint32_t b0 = rht_bits(u[i]) & 0x7FFFFFFFu, b1 = rht_bits(u[i + 1]) & 0x7FFFFFFFu;
            hi = __vimax3_u32(hi, b0, b1);
            lo_m1 = __vimin3_u32(lo_m1, b0 - 1u, b1 - 1u);
            if (!BF16) wide |= (b0 | b1) & 0xFFFFu;
        }
    } else {
FPSIM_RHT_UNROLL
        for (int i = 0; i < 16; i++) {
            const uint32_t b = rht_bits(u[i]) & 0x7FFFFFFFu;
            hi = hi > b ? hi : b;
            lo_m1 = lo_m1 < b - 1u ? lo_m1 : b - 1u;
            if (!BF16) wide |= b & 0xFFFFu;
        }
    }
    /* lo_m1 stays at the top only where every input is zero */
    return rht16_range_of_fields(hi >> 23, (lo_m1 + 1u) >> 23, lo_m1 != 0xFFFFFFFFu, !wide);
}

/* rht16_range_of<1> of both BF16 columns held by the words w[16] as kernel v8 loads them (row i's
 * word: column 0 in the low half, column 1 in the high half), in r[0] and r[1]: the same results
 * from the 16-bit lanes, both columns at once, 1.5 instructions per element where the float form
 * takes 3. A lane's smallest nonzero magnitude v is found as v - 1 = (v + 0x7FFF) mod 2^15, which
 * maps a zero to 0x7FFF, above every nonzero magnitude less one (v <= 0x7FFF, so the add carries
 * nothing into the other lane). */
__host__ __device__ __forceinline__ void rht16_range_of_pair(const uint32_t (&w)[16], rht16_range (&r)[2])
{
    uint32_t hi = 0, lo_m1 = 0x7FFF7FFFu;
FPSIM_RHT_UNROLL
    for (int i = 0; i < 16; i += 2) {
        const uint32_t a = w[i] & 0x7FFF7FFFu, b = w[i + 1] & 0x7FFF7FFFu;
        hi = __vimax3_u16x2(hi, a, b); /* VIMNMX3.U16x2 on sm_90 */
        lo_m1 = __vimin3_u16x2(lo_m1, (a + 0x7FFF7FFFu) & 0x7FFF7FFFu, (b + 0x7FFF7FFFu) & 0x7FFF7FFFu);
    }
FPSIM_RHT_UNROLL
    for (int c = 0; c < 2; c++) {
        const uint32_t h = (hi >> (16 * c)) & 0xFFFFu, l = (lo_m1 >> (16 * c)) & 0xFFFFu;
        r[c] = rht16_range_of_fields(h >> 7, (l + 1u) >> 7, l != 0x7FFFu, 1);
    }
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

/* The RHT of u[16] in FP32 into pw[8], BF16 pairs packed as rht_bf16x2 gives them (outputs 2k and
 * 2k + 1 in pw[k]); only for r.ok and r.span <= 12 (r = rht16_range_of(u)). */
__host__ __device__ __forceinline__ void rht16_fp32_packed(const float (&u)[16], uint32_t (&pw)[8])
{
    constexpr int after = FPSIM_GPU_RHT_SCALE_AFTER && FPSIM_GPU_RHT_BF16_ZERO; /* r.ok: BF16 values */
    float w[16];
FPSIM_RHT_UNROLL
    for (int i = 0; i < 16; i++)
        w[i] = rht_term(u[i], i, after);
    rht16_fwht(w);
    /* + 0: a zero sum is +0, as the reference's in-order sums from +0 */
FPSIM_RHT_UNROLL
    for (int k = 0; k < 8; k++)
        pw[k] = FPSIM_GPU_RHT_BF16_ZERO
                    ? rht_bf16x2_times_plus0(rht_bf16x2(w[2 * k], w[2 * k + 1]), after ? 0.25f : 1.0f)
                    : rht_bf16x2(rht_add(w[2 * k], 0.0f), rht_add(w[2 * k + 1], 0.0f));
}

/* BF16 pairs packed as above, as 16 floats (the BF16 bits in the top half). */
__host__ __device__ __forceinline__ void rht_unpack_bf16x2(const uint32_t (&pw)[8], float (&out)[16])
{
FPSIM_RHT_UNROLL
    for (int k = 0; k < 8; k++) {
        out[2 * k] = rht_float(pw[k] << 16);
        out[2 * k + 1] = rht_float(pw[k] & 0xFFFF0000u);
    }
}

/* The RHT of u[16] into out[16] in FP32; only for r.ok and r.span <= 12. */
__host__ __device__ __forceinline__ void rht16_fp32(const float (&u)[16], float (&out)[16])
{
    uint32_t pw[8];
    rht16_fp32_packed(u, pw);
    rht_unpack_bf16x2(pw, out);
}

/* The interval FWHT of rht16_fp32_bounded: lo and hi start equal (the exact scaled terms), and each
 * butterfly keeps lo_i + lo_{i+h} and lo_i - hi_{i+h} rounded down, hi_i + hi_{i+h} and
 * hi_i - lo_{i+h} rounded up, so [lo, hi] holds the exact partial sums at every stage. */
__host__ __device__ __forceinline__ void rht16_fwht_bounds(float (&lo)[16], float (&hi)[16])
{
FPSIM_RHT_UNROLL
    for (int h = 1; h < 16; h <<= 1)
FPSIM_RHT_UNROLL
        for (int i = 0; i < 16; i++)
            if ((i & h) == 0) {
                const float pl = lo[i], ph = hi[i], ql = lo[i + h], qh = hi[i + h];
                lo[i] = rht_add_dir<0>(pl, ql);
                hi[i] = rht_add_dir<1>(ph, qh);
                lo[i + h] = rht_sub_dir<0>(pl, qh);
                hi[i + h] = rht_sub_dir<1>(ph, ql);
            }
}

/* The RHT of u[16] into out[16] (BF16 pairs packed as rht_bf16x2 gives them, outputs 2k and 2k + 1
 * in out[k]) by the certified bounds; only where rht16_range_of(u).in_range (finite, fields 3..250:
 * the scaled terms are exact normal numbers and no sum overflows). Returns 1 where every output's
 * BF16 rounding is certain (then out is BF16_RNE of the exact sums, +0 for a zero sum), 0 where
 * some interval straddles a rounding boundary (out is then unspecified). bf16_values: every u[i] is
 * a BF16 value (rht16_range_of's bf16), which the pair forms of FPSIM_GPU_RHT_BF16_ZERO need. */
__host__ __device__ __forceinline__ int rht16_fp32_bounded(const float (&u)[16], uint32_t (&out)[8], int bf16_values)
{
    const int after = FPSIM_GPU_RHT_SCALE_AFTER && FPSIM_GPU_RHT_BF16_ZERO && bf16_values;
    float lo[16], hi[16];
FPSIM_RHT_UNROLL
    for (int i = 0; i < 16; i++)
        lo[i] = hi[i] = rht_term(u[i], i, after);
    rht16_fwht_bounds(lo, hi);
    /* a zero sum stored as +0 and compared equal (lo of an exact zero is -0): see
     * FPSIM_GPU_RHT_BF16_ZERO */
    if (FPSIM_GPU_RHT_BF16_ZERO && bf16_values) {
        int same = 1;
FPSIM_RHT_UNROLL
        for (int k = 0; k < 8; k++) {
            const uint32_t h = rht_bf16x2(hi[2 * k], hi[2 * k + 1]);
            same &= rht_bf16x2_same(h, rht_bf16x2(lo[2 * k], lo[2 * k + 1]));
            out[k] = rht_bf16x2_times_plus0(h, after ? 0.25f : 1.0f);
        }
        return same;
    }
    uint32_t differ = 0;
FPSIM_RHT_UNROLL
    for (int k = 0; k < 8; k++) {
        out[k] = rht_bf16x2(rht_add(hi[2 * k], 0.0f), rht_add(hi[2 * k + 1], 0.0f));
        differ |= out[k] ^ rht_bf16x2(rht_add(lo[2 * k], 0.0f), rht_add(lo[2 * k + 1], 0.0f));
    }
    return differ == 0u;
}

#endif
