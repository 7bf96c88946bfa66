/* block_avx512.c: AVX-512 forms of the block kernels' hot loops, picked at run time.
 *
 * Each function here computes, 16 lanes at a time, exactly the integer and single IEEE FP32/FP64
 * operations of its portable twin (named at each function), in the same order, so it gives the
 * same bits: IEEE add, subtract, multiply and the float <-> double conversions are correctly
 * rounded in every lane as in scalar SSE code (default MXCSR: round to nearest even, no FTZ/DAZ;
 * no FMA: nothing here contracts). What changes is only the data movement: a block's factor is a
 * broadcast instead of an expanded array, random bytes are widened in registers, and the RHT runs
 * down 16 input rows at once (the same butterflies per column) before an in-register transpose.
 * Lanes that the vector code does not cover (NaN, Inf, overflow, BF16-subnormal RHT results)
 * are flagged and left to the portable code, which defines them.
 * tests/blocks/test_block_simd.c compares every function here with its portable twin on random
 * and adversarial data. */
#define FPSIM_BLOCK_INTERNAL
#include "block_arith.h"
#include "fpsim_block.h"

#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

int fpsim_block_have_avx512(void)
{
    /* libgcc's CPU model, filled once at load time: a read, no state of ours */
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

static inline AVX512 __mmask16 tail_mask(size_t left)
{
    return left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1u);
}

/* Lane b of the result = max over the 16 lanes of v[b] (b < 16): a transposed reduction tree,
 * each level halving the lanes per block with two two-source permutes and a max. */
static inline AVX512 __m512i hmax16x16(__m512i v[16])
{
    static const int32_t lvl[4][2][16] = {
        {{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23},
         {8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31}},
        {{0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27},
         {4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31}},
        {{0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29},
         {2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31}},
        {{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30},
         {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31}}};
    int n = 16;
#pragma GCC unroll 4
    for (int l = 0; l < 4; l++) {
        const __m512i i1 = _mm512_loadu_si512(lvl[l][0]), i2 = _mm512_loadu_si512(lvl[l][1]);
        n /= 2;
#pragma GCC unroll 8
        for (int k = 0; k < n; k++)
            v[k] = _mm512_max_epi32(_mm512_permutex2var_epi32(v[2 * k], i1, v[2 * k + 1]),
                                    _mm512_permutex2var_epi32(v[2 * k], i2, v[2 * k + 1]));
    }
    return v[0];
}

/* Twin of fpsim_block_amax_tile's portable loops (amax_row_bs over each of nrows rows, then the
 * max and OR across rows): integer max of |x| bits over non-NaN lanes, NaN flag; lanes past n
 * load as +0, which changes neither. bs is a multiple of 16. Blocks are taken 16 at a time, the
 * rows folded into one vector per block, and the 16 vectors reduced together (hmax16x16);
 * missing blocks of the last group count as 0. */
AVX512 void fpsim_block_amax_tile_avx512(const float *restrict x, size_t stride, size_t nrows,
                                         size_t n, size_t bs, uint32_t *restrict m,
                                         uint8_t *restrict nan)
{
    const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
    const size_t nb = (n + bs - 1) / bs;
    for (size_t b0 = 0; b0 < nb; b0 += 16) {
        __m512i acc[16];
        const size_t g = nb - b0 < 16 ? nb - b0 : 16;
        for (size_t k = 0; k < 16; k++)
            acc[k] = _mm512_setzero_si512();
        for (size_t k = 0; k < g; k++) {
            const size_t b = b0 + k;
            __mmask16 nn = 0;
            for (size_t r = 0; r < nrows; r++)
                for (size_t i = b * bs; i < (b + 1) * bs && i < n; i += 16) {
                    const __m512i v = _mm512_and_si512(
                        _mm512_maskz_loadu_epi32(tail_mask(n - i), x + r * stride + i), absm);
                    const __mmask16 isnan = _mm512_cmpgt_epi32_mask(v, inf);
                    nn |= isnan;
                    acc[k] = _mm512_mask_max_epi32(acc[k], (__mmask16)~isnan, acc[k], v);
                }
            nan[b] = nn != 0;
        }
        _Alignas(64) uint32_t r[16];
        _mm512_store_si512(r, hmax16x16(acc));
        memcpy(m + b0, r, g * sizeof *m);
    }
}

AVX512 void fpsim_block_amax_row_avx512(const float *restrict x, size_t n, size_t bs,
                                        uint32_t *restrict m, uint8_t *restrict nan)
{
    fpsim_block_amax_tile_avx512(x, n, 1, n, bs, m, nan);
}

/* The widening of a BF16 row chunk (x[i] = h[i] << 16, exact) and, in the same pass, its block
 * amaxes as fpsim_block_amax_tile_avx512 gives them for one row. bs is a multiple of 16. */
AVX512 void fpsim_block_widen_bf16_amax_avx512(float *restrict x, const uint16_t *restrict h,
                                               size_t n, size_t bs, uint32_t *restrict m,
                                               uint8_t *restrict nan)
{
    const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
    const size_t nb = (n + bs - 1) / bs;
    for (size_t b0 = 0; b0 < nb; b0 += 16) {
        __m512i acc[16];
        const size_t g = nb - b0 < 16 ? nb - b0 : 16;
        for (size_t k = 0; k < 16; k++)
            acc[k] = _mm512_setzero_si512();
        for (size_t k = 0; k < g; k++) {
            const size_t b = b0 + k;
            __mmask16 nn = 0;
            for (size_t i = b * bs; i < (b + 1) * bs && i < n; i += 16) {
                const __mmask16 t = tail_mask(n - i);
                const __m512i w = _mm512_slli_epi32(
                    _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(t, h + i)), 16);
                _mm512_mask_storeu_epi32(x + i, t, w);
                const __m512i v = _mm512_and_si512(w, absm);
                const __mmask16 isnan = _mm512_cmpgt_epi32_mask(v, inf);
                nn |= isnan;
                acc[k] = _mm512_mask_max_epi32(acc[k], (__mmask16)~isnan, acc[k], v);
            }
            nan[b] = nn != 0;
        }
        _Alignas(64) uint32_t r[16];
        _mm512_store_si512(r, hmax16x16(acc));
        memcpy(m + b0, r, g * sizeof *m);
    }
}

/* Twin of fast_loop (block_convert.c) for 16 lanes of y = x * f: the code of each lane, the
 * lanes above fc->slow_above (*slow) and the count of clipped finite lanes. */
typedef struct rne_consts {
    __m512i absm, maxbits, ebmin, m23, shift, nbias, minnorm, dbits, lim, satbits, inf, sh;
    __m512 d;
} rne_consts;

static inline AVX512 void rne_init(rne_consts *k, const fpsim_block_fast *fc, uint32_t satbits)
{
    const uint32_t m = fc->mbits, ebmin = fc->ebmin;
    k->absm = _mm512_set1_epi32(0x7FFFFFFF);
    k->maxbits = _mm512_set1_epi32((int)fc->maxbits);
    k->ebmin = _mm512_set1_epi32((int)ebmin);
    k->m23 = _mm512_set1_epi32((int)(23u - m));
    k->shift = _mm512_set1_epi32((int)(23u - m));
    k->nbias = _mm512_set1_epi32((int)((ebmin - 1u) << m));
    k->minnorm = _mm512_set1_epi32((int)(ebmin << 23));
    k->d = _mm512_castsi512_ps(_mm512_set1_epi32((int)((ebmin + 23u - m) << 23)));
    k->dbits = _mm512_set1_epi32((int)((ebmin + 23u - m) << 23));
    k->lim = _mm512_set1_epi32((int)fc->slow_above);
    k->satbits = _mm512_set1_epi32((int)satbits);
    k->inf = _mm512_set1_epi32(0x7F800000);
    k->sh = _mm512_set1_epi32((int)fc->sign_shift);
}

static inline AVX512 __m512i rne_codes(const rne_consts *k, __m512 xv, __m512 f, __mmask16 *slow,
                                       __mmask16 *sat)
{
    const __m512 y = _mm512_mul_ps(xv, f);
    const __m512i b = _mm512_castps_si512(y);
    const __m512i ab = _mm512_and_si512(b, k->absm);
    const __m512i abc = _mm512_min_epu32(ab, k->maxbits);
    const __m512 a = _mm512_castsi512_ps(abc);
    const __m512i eb = _mm512_max_epu32(_mm512_srli_epi32(abc, 23), k->ebmin);
    const __m512 c = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(eb, k->m23), 23));
    const __m512 r = _mm512_sub_ps(_mm512_add_ps(a, c), c);
    const __m512i rb = _mm512_castps_si512(r);
    const __m512i normal = _mm512_sub_epi32(_mm512_srlv_epi32(rb, k->shift), k->nbias);
    const __m512i sub = _mm512_sub_epi32(_mm512_castps_si512(_mm512_add_ps(r, k->d)), k->dbits);
    const __mmask16 isnorm = _mm512_cmpge_epu32_mask(rb, k->minnorm);
    const __m512i code = _mm512_or_si512(_mm512_mask_blend_epi32(isnorm, sub, normal),
                                         _mm512_sllv_epi32(_mm512_srli_epi32(b, 31), k->sh));
    *slow |= _mm512_cmpgt_epu32_mask(ab, k->lim);
    /* clipped: x finite and |y| > satmax (f is finite and nonzero, so y of a finite x is never
     * NaN and fast_loop's |y| <= Inf test always holds) */
    const __m512i ax = _mm512_and_si512(_mm512_castps_si512(xv), k->absm);
    *sat = _mm512_cmplt_epu32_mask(ax, k->inf) & _mm512_cmpgt_epu32_mask(ab, k->satbits);
    return code;
}

/* Twin of fast_expand + fast_loop: codes of a row of n elements in blocks of bs (a multiple of
 * 16), block b scaled by fs[b]. Returns the clipped count; *slow |= 1 if a lane needs the core. */
AVX512 uint64_t fpsim_block_fast_row_avx512(uint8_t *restrict codes, const float *restrict x,
                                            size_t n, size_t bs, const float *restrict fs,
                                            const fpsim_block_fast *fc, uint32_t satbits,
                                            uint32_t *slow)
{
    rne_consts k;
    rne_init(&k, fc, satbits);
    __mmask16 sl = 0;
    __m512i cnt = _mm512_setzero_si512(); /* clipped lanes, per lane */
    const __m512i one = _mm512_set1_epi32(1);
    for (size_t b = 0; b * bs < n; b++) {
        const __m512 f = _mm512_set1_ps(fs[b]);
        for (size_t i = b * bs; i < (b + 1) * bs && i < n; i += 16) {
            const __mmask16 t = tail_mask(n - i);
            __mmask16 sat;
            const __m512i code = rne_codes(&k, _mm512_maskz_loadu_ps(t, x + i), f, &sl, &sat);
            _mm512_mask_cvtepi32_storeu_epi8(codes + i, t, code);
            cnt = _mm512_mask_add_epi32(cnt, sat & t, cnt, one);
        }
    }
    *slow |= sl != 0;
    return (uint64_t)(uint32_t)_mm512_reduce_add_epi32(cnt);
}

/* Twin of sr_loop (block_convert.c) with random words rbytes[i] << 24 (8 random bits, the only
 * width the kernels use), blocks of bs (a multiple of 16) scaled by fs[b]. */
AVX512 uint64_t fpsim_block_fast_sr_row_avx512(uint8_t *restrict codes, const float *restrict x,
                                               size_t n, size_t bs, const float *restrict fs,
                                               const uint8_t *restrict rbytes,
                                               const fpsim_block_fast *fc, uint32_t satbits,
                                               uint32_t *slow)
{
    const uint32_t m = fc->mbits;
    const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF), maxbits = _mm512_set1_epi32((int)fc->maxbits);
    const __m512i ebmin = _mm512_set1_epi32((int)fc->ebmin), one = _mm512_set1_epi32(1);
    const __m512i mant = _mm512_set1_epi32(0x7FFFFF), d0m8 = _mm512_set1_epi32((int)(15u - m));
    const __m512i bmask = _mm512_set1_epi32((int)(0xFFu << (8u - fc->spec.sr_bits) & 0xFFu));
    __m512i cnt = _mm512_setzero_si512(); /* clipped lanes, per lane (< 2^32 / 16 rows of n) */
    const __m512i maxmag = _mm512_set1_epi32((int)fc->max_mag), lim = _mm512_set1_epi32((int)fc->slow_above);
    const __m512i sat = _mm512_set1_epi32((int)satbits), inf = _mm512_set1_epi32(0x7F800000);
    const __m512i msh = _mm512_set1_epi32((int)m), sh = _mm512_set1_epi32((int)fc->sign_shift);
    __mmask16 sl = 0;
    uint64_t nsat = 0;
    for (size_t b = 0; b * bs < n; b++) {
        const __m512 f = _mm512_set1_ps(fs[b]);
        for (size_t i = b * bs; i < (b + 1) * bs && i < n; i += 16) {
            const __mmask16 t = tail_mask(n - i);
            const __m512 xv = _mm512_maskz_loadu_ps(t, x + i);
            const __m512i bits = _mm512_castps_si512(_mm512_mul_ps(xv, f));
            const __m512i ab = _mm512_and_si512(bits, absm);
            const __m512i a = _mm512_min_epu32(ab, maxbits);
            const __m512i ef = _mm512_srli_epi32(a, 23);
            const __mmask16 efnz = _mm512_test_epi32_mask(ef, ef);
            const __m512i sig = _mm512_mask_or_epi32(_mm512_and_si512(a, mant), efnz,
                                                     _mm512_and_si512(a, mant),
                                                     _mm512_set1_epi32(1 << 23));
            const __m512i e1 = _mm512_max_epu32(ef, one); /* ef + (ef == 0) */
            /* extra = ebmin > e1 ? ebmin - e1 : 0 */
            const __m512i extra = _mm512_sub_epi32(_mm512_max_epu32(ebmin, e1), e1);
            /* sr_loop's hi + carry with d = 23 - m + extra dropped bits (d >= 16 here): the random
             * word is byte << 24 (masked to sr_bits), so frac + r carries out of 32 bits exactly
             * when (top 8 dropped bits) + byte >= 256, and hi * 256 + top 8 dropped bits is
             * sig >> (d - 8); hence hi + carry = ((sig >> (d - 8)) + byte) >> 8. For d >= 32 both
             * forms give 0 (sig < 2^24). */
            const __m512i d8 = _mm512_add_epi32(d0m8, extra);
            const __m512i rb = _mm512_and_si512(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(t, rbytes + i)),
                                                bmask);
            const __m512i hc = _mm512_srli_epi32(_mm512_add_epi32(_mm512_srlv_epi32(sig, d8), rb), 8);
            const __m512i ehi = _mm512_sub_epi32(_mm512_max_epu32(e1, ebmin), ebmin);
            const __m512i mag = _mm512_add_epi32(_mm512_sllv_epi32(ehi, msh), hc);
            const __m512i code = _mm512_or_si512(mag, _mm512_sllv_epi32(_mm512_srli_epi32(bits, 31), sh));
            _mm512_mask_cvtepi32_storeu_epi8(codes + i, t, code);
            sl |= (_mm512_cmpgt_epu32_mask(ab, lim) | _mm512_cmpgt_epu32_mask(mag, maxmag)) & t;
            /* clipped: x finite and |y| > satmax (with f finite and nonzero, y of a finite x is
             * never NaN, so sr_loop's |y| <= Inf test always holds here) */
            const __m512i ax = _mm512_and_si512(_mm512_castps_si512(xv), absm);
            const __mmask16 s = _mm512_cmplt_epu32_mask(ax, inf) & _mm512_cmpgt_epu32_mask(ab, sat) & t;
            cnt = _mm512_mask_add_epi32(cnt, s, cnt, one);
        }
    }
    *slow |= sl != 0;
    return (uint64_t)(uint32_t)_mm512_reduce_add_epi32(cnt) + nsat;
}

/* Twin of fpsim_block_store_run's FP4 loop for an even start column: dst[k] = codes[2k] low
 * nibble | codes[2k+1] << 4, n even. */
AVX512 void fpsim_block_pack_fp4_avx512(uint8_t *restrict dst, const uint8_t *restrict codes, size_t n)
{
    const __m512i lo = _mm512_set1_epi16(0x0F), hi = _mm512_set1_epi16(0xF0);
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m512i v = _mm512_loadu_si512(codes + i);
        const __m512i p = _mm512_or_si512(_mm512_and_si512(v, lo),
                                          _mm512_and_si512(_mm512_srli_epi16(v, 4), hi));
        _mm256_storeu_si256((__m256i *)(dst + i / 2), _mm512_cvtepi16_epi8(p));
    }
    for (; i + 1 < n; i += 2)
        dst[i / 2] = (uint8_t)((codes[i] & 0xFu) | ((codes[i + 1] & 0xFu) << 4));
}

/* 8 x 8 float transpose in AVX registers (pure data movement: the same bits as a copy loop);
 * needs AVX only, so block_quantize.c's AVX transpose calls it too. */
__attribute__((target("avx"))) void fpsim_block_transpose8x8_avx(float *dst, size_t dstride,
                                                                const float *src, size_t sstride)
{
    __m256 r[8], u[8], v[8];
    for (int i = 0; i < 8; i++)
        r[i] = _mm256_loadu_ps(src + (size_t)i * sstride);
    for (int i = 0; i < 8; i += 2) {
        u[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        u[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        v[i] = _mm256_shuffle_ps(u[i], u[i + 2], 0x44);
        v[i + 1] = _mm256_shuffle_ps(u[i], u[i + 2], 0xEE);
        v[i + 2] = _mm256_shuffle_ps(u[i + 1], u[i + 3], 0x44);
        v[i + 3] = _mm256_shuffle_ps(u[i + 1], u[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(dst + (size_t)i * dstride, _mm256_permute2f128_ps(v[i], v[i + 4], 0x20));
        _mm256_storeu_ps(dst + (size_t)(i + 4) * dstride, _mm256_permute2f128_ps(v[i], v[i + 4], 0x31));
    }
}

/* The transposed RHT of a band of 16 input columns [j0, j0 + 16) over all `rows` input rows (a
 * multiple of 16): stored row j0 + c, elements i0 .. i0 + 15 = fpsim_rht16 of input column
 * j0 + c, rows i0 .. i0 + 15. Twin of rht16_avx512 (block_nvfp4.c) turned on its side: lane c
 * of vector k holds element k of column c's 16-vector, so the butterflies (h = 1, 2, 4, 8; lower
 * + upper, lower - upper) are additions between whole vectors, in the same order, in double; the
 * same RNE rounding to BF16 by bits. A column whose inputs are not all finite, or with a result
 * outside the BF16 normal range other than zero, is recomputed by fpsim_rht16 (its definition).
 * dst has `rows` columns. Returns the max |y| bits over non-NaN results; *saw_nan |= any NaN. */
static const double rht_sign[16] = {1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};

/* One 16 x 16 tile: input rows i0 .. i0 + 15, columns j0 .. j0 + 15, into tt[c][k] = element
 * k of the transformed column c. A column is covered by the vector form when every result is
 * zero or has a biased double exponent in [1023 - 126, 1023 + 127] (the range test of
 * rht16_avx512, taken here as the lane-wise max and min of the nonzero |v| bits, which order
 * like the values); a non-finite input makes every result of its column Inf or NaN (each output
 * is +-0.25 times the sum of all 16 inputs), so the same test catches it. Covered columns add
 * their max |v| (double bits) to vmax[h] for the amax: rounding to BF16 is monotone, so the
 * rounded max is the max of the rounded values. Other columns are recomputed by fpsim_rht16
 * (fpsim_rht16_mma under mma), their amax into *bad_max / *bad_nan. mma = 1: rhtsum=mma, the
 * same butterflies on the model's truncated integer products (below). */
static inline AVX512 void rht_tile(float tt[16][16], const float *restrict x, size_t cols,
                                   size_t i0, size_t j0, int mma, __m512i vmax[2],
                                   uint32_t *bad_max, int *bad_nan)
{
    const __m512i lo = _mm512_set1_epi64((int64_t)(1023 - 126) << 52);
    const __m512i hi = _mm512_set1_epi64(((int64_t)(1023 + 128) << 52) - 1);
    const __m512i absm = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll);
    const __m512i half = _mm512_set1_epi64((1ll << 44) - 1), keep = _mm512_set1_epi64(~((1ll << 45) - 1));
    const __m512i one = _mm512_set1_epi64(1);
    const __m512i trunc24 = _mm512_set1_epi64(~((1ll << 29) - 1));
    float tile[16][16];
    __mmask16 bad = 0;
#pragma GCC unroll 16
    for (int h = 0; h < 2; h++) { /* columns 8h .. 8h + 7 */
        __m512d v[16];
        /* rhtsum=mma: the inputs rounded to BF16 (the matmul's operand cast; a NaN may become
         * Inf, either way its column goes to the model) and each column's largest |x| bits */
        __m256i amax_bits = _mm256_setzero_si256();
#pragma GCC unroll 16
        for (int k = 0; k < 16; k++) {
            __m256 xk = _mm256_loadu_ps(x + (i0 + (size_t)k) * cols + j0 + 8 * (size_t)h);
            if (mma) {
                __m256i u = _mm256_castps_si256(xk);
                const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
                u = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), odd));
                u = _mm256_and_si256(u, _mm256_set1_epi32((int)0xFFFF0000u));
                xk = _mm256_castsi256_ps(u);
                amax_bits = _mm256_max_epu32(amax_bits, _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF)));
            }
            v[k] = _mm512_mul_pd(_mm512_set1_pd(0.25 * rht_sign[k]), _mm512_cvtps_pd(xk));
        }
        /* rhtsum=mma, the model of rht16_mma.h on 8 columns at once. In units of its grid
         * 2^(E - 25), E = emx - 127 - 2, a product 0.25 s_k x_k is scaled by 2^(154 - emx) (exact in
         * double) and truncated toward zero to an integer (step 3: m 2^(18 - d), or m >> (d - 18),
         * or 0); the butterflies below then add integers below 2^30, exactly. After them each sum
         * is truncated to 24 significant bits (step 4, RZ: the low 29 of the double's 52 fraction
         * bits cleared) and scaled back by 2^(emx - 154). Results outside the FP32 normal range,
         * where step 4 also truncates to the subnormal grid or overflows, fail the range test
         * below and their columns take the model itself, as do non-finite inputs (emx = 255). */
        __m512d sout = _mm512_setzero_pd();
        if (mma) {
            /* the largest |x| bits give the largest exponent field; at least 1 (a subnormal's
             * exponent, and for an all-zero column any scale will do) */
            const __m256i emx = _mm256_max_epu32(_mm256_srli_epi32(amax_bits, 23), _mm256_set1_epi32(1));
            const __m512i e64 = _mm512_cvtepu32_epi64(emx);
            const __m512d sin = _mm512_castsi512_pd(
                _mm512_slli_epi64(_mm512_sub_epi64(_mm512_set1_epi64(1023 + 154), e64), 52));
            sout = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(_mm512_set1_epi64(1023 - 154), e64), 52));
            const __mmask8 special = _mm256_cmpeq_epi32_mask(emx, _mm256_set1_epi32(255));
            bad |= (__mmask16)((unsigned)special << (8 * h));
#pragma GCC unroll 16
            for (int k = 0; k < 16; k++)
                v[k] = _mm512_roundscale_pd(_mm512_mul_pd(v[k], sin), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        }
#pragma GCC unroll 4
        for (int hh = 1; hh < 16; hh <<= 1)
#pragma GCC unroll 8
            for (int p = 0; p < 8; p++) { /* pair p of the stage: (j, j + hh), j lower */
                const int j = (p / hh) * 2 * hh + p % hh;
                const __m512d a = v[j], b = v[j + hh];
                v[j] = _mm512_add_pd(a, b);
                v[j + hh] = _mm512_sub_pd(a, b);
            }
        __m512i mx = _mm512_setzero_si512(), mn = _mm512_set1_epi64(-1);
#pragma GCC unroll 16
        for (int k = 0; k < 16; k++) {
            /* + 0: a zero sum is +0 (fpsim_rht16; the model's step 4) */
            __m512d w = _mm512_add_pd(v[k], _mm512_setzero_pd());
            if (mma)
                w = _mm512_mul_pd(_mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(w), trunc24)), sout);
            __m512i u = _mm512_castpd_si512(w);
            const __m512i au = _mm512_and_si512(u, absm);
            mx = _mm512_max_epu64(mx, au);
            mn = _mm512_mask_min_epu64(mn, _mm512_test_epi64_mask(au, au), mn, au);
            const __m512i odd = _mm512_and_si512(_mm512_srli_epi64(u, 45), one);
            u = _mm512_and_si512(_mm512_add_epi64(u, _mm512_add_epi64(half, odd)), keep);
            _mm256_storeu_ps(&tile[k][8 * h], _mm512_cvtpd_ps(_mm512_castsi512_pd(u)));
        }
        const __mmask8 ok = _mm512_cmple_epu64_mask(mx, hi) & _mm512_cmpge_epu64_mask(mn, lo) &
                            (__mmask8)~(bad >> (8 * h));
        vmax[h] = _mm512_mask_max_epu64(vmax[h], ok, vmax[h], mx);
        bad |= (__mmask16)((unsigned)(__mmask8)~ok << (8 * h));
    }
    if (bad) { /* the definition for the columns the vector form does not cover */
        for (int c = 0; c < 16; c++) {
            if (!((bad >> c) & 1u))
                continue;
            float col[16];
            for (int k = 0; k < 16; k++)
                col[k] = x[(i0 + (size_t)k) * cols + j0 + (size_t)c];
            if (mma)
                fpsim_rht16_mma(col, col);
            else
                fpsim_rht16(col, col);
            for (int k = 0; k < 16; k++) {
                tile[k][c] = col[k];
                const uint32_t ab = f2u(col[k]) & 0x7FFFFFFFu;
                *bad_nan |= ab > 0x7F800000u;
                *bad_max = ab <= 0x7F800000u && ab > *bad_max ? ab : *bad_max;
            }
        }
    }
    /* tt[c][k] = tile[k][c]: stored row j0 + c, elements i0 + k */
    for (int q = 0; q < 4; q++)
        fpsim_block_transpose8x8_avx(&tt[(q & 1) * 8][(q >> 1) * 8], 16,
                                     &tile[(q >> 1) * 8][(q & 1) * 8], 16);
}

AVX512 uint32_t fpsim_block_rht_cols_avx512(float *restrict dst, uint16_t *restrict dst16,
                                            const float *restrict x, size_t rows, size_t cols,
                                            size_t j0, size_t nbands, int mma, int *saw_nan)
{
    __m512i vmax[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
    uint32_t bad_max = 0;
    int bad_nan = 0;
    _Alignas(64) float tt[2][16][16];
    /* row blocks outside, bands inside: the input is read along its rows (nbands x 64 bytes per
     * row), the rows of the next blocks prefetched; 32 rows per step for the BF16 copy so that
     * each stored row receives a whole 64-byte line */
    const size_t step = dst16 && rows % 32 == 0 ? 32 : 16;
    for (size_t i0 = 0; i0 < rows; i0 += step) {
        for (size_t b = 0; b < nbands; b++) {
            const size_t jb = j0 + 16 * b;
            for (size_t t = 0; t * 16 < step; t++)
                rht_tile(tt[t], x, cols, i0 + 16 * t, jb, mma, vmax, &bad_max, &bad_nan);
            /* stored rows jb .. jb + 15, elements i0 .. i0 + step - 1; whole aligned lines are
             * written past the caches (the copy is larger than the caches and is read back only
             * by the next pass) */
            if (dst16) {
                uint16_t *d0 = dst16 + jb * rows + i0;
                const int aligned = step == 32 && (((uintptr_t)d0 | (rows * 2u)) & 63u) == 0;
#pragma GCC unroll 16
                for (int c = 0; c < 16; c++) {
                    /* the results are BF16 values (no NaN reaches here: the caller checks), so
                     * the top halves of their bits are exact */
                    const __m256i lo = _mm512_cvtepi32_epi16(
                        _mm512_srli_epi32(_mm512_load_si512(tt[0][c]), 16));
                    if (step == 16) {
                        _mm256_storeu_si256((__m256i *)(d0 + (size_t)c * rows), lo);
                        continue;
                    }
                    const __m256i hi = _mm512_cvtepi32_epi16(
                        _mm512_srli_epi32(_mm512_load_si512(tt[1][c]), 16));
                    const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
                    if (aligned)
                        _mm512_stream_si512((__m512i *)(d0 + (size_t)c * rows), both);
                    else
                        _mm512_storeu_si512(d0 + (size_t)c * rows, both);
                }
            } else {
                float *d0 = dst + jb * rows + i0;
                const int aligned = (((uintptr_t)d0 | (rows * sizeof(float))) & 63u) == 0;
#pragma GCC unroll 16
                for (int c = 0; c < 16; c++) {
                    if (aligned)
                        _mm512_stream_ps(d0 + (size_t)c * rows, _mm512_load_ps(tt[0][c]));
                    else
                        _mm512_storeu_ps(d0 + (size_t)c * rows, _mm512_load_ps(tt[0][c]));
                }
            }
        }
    }
    _mm_sfence(); /* the streamed lines are visible before another thread reads them */
    /* the covered columns' max |v|, rounded to BF16 as the results were */
    uint32_t m = bad_max;
    for (int h = 0; h < 2; h++) {
        const __m512i u = vmax[h];
        const __m512i odd = _mm512_and_si512(_mm512_srli_epi64(u, 45), _mm512_set1_epi64(1));
        const __m512i r = _mm512_and_si512(
            _mm512_add_epi64(u, _mm512_add_epi64(_mm512_set1_epi64((1ll << 44) - 1), odd)),
            _mm512_set1_epi64(~((1ll << 45) - 1)));
        _Alignas(32) uint32_t f[8];
        _mm256_store_si256((__m256i *)f, _mm256_castps_si256(_mm512_cvtpd_ps(_mm512_castsi512_pd(r))));
        for (int l = 0; l < 8; l++)
            m = f[l] > m ? f[l] : m;
    }
    *saw_nan |= bad_nan;
    return m;
}

/* Twin of fpsim_block_amax_bits. */
AVX512 uint32_t fpsim_block_amax_bits_avx512(const float *restrict x, size_t n, int *saw_nan)
{
    const __m512i absm = _mm512_set1_epi32(0x7FFFFFFF), inf = _mm512_set1_epi32(0x7F800000);
    __m512i m0 = _mm512_setzero_si512(), m1 = _mm512_setzero_si512();
    __mmask16 nn = 0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512i a = _mm512_and_si512(_mm512_loadu_si512(x + i), absm);
        const __m512i b = _mm512_and_si512(_mm512_loadu_si512(x + i + 16), absm);
        const __mmask16 na = _mm512_cmpgt_epi32_mask(a, inf), nb = _mm512_cmpgt_epi32_mask(b, inf);
        nn |= na | nb;
        m0 = _mm512_mask_max_epi32(m0, (__mmask16)~na, m0, a);
        m1 = _mm512_mask_max_epi32(m1, (__mmask16)~nb, m1, b);
    }
    for (; i < n; i += 16) {
        const __m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi32(tail_mask(n - i), x + i), absm);
        const __mmask16 na = _mm512_cmpgt_epi32_mask(a, inf);
        nn |= na;
        m0 = _mm512_mask_max_epi32(m0, (__mmask16)~na, m0, a);
    }
    *saw_nan |= nn != 0;
    return (uint32_t)_mm512_reduce_max_epi32(_mm512_max_epi32(m0, m1));
}

#else /* no x86-64 GCC-compatible compiler: the portable code runs everywhere */

int fpsim_block_have_avx512(void)
{
    return 0;
}
void fpsim_block_amax_row_avx512(const float *restrict x, size_t n, size_t bs, uint32_t *restrict m,
                                 uint8_t *restrict nan)
{
    (void)x, (void)n, (void)bs, (void)m, (void)nan;
}
void fpsim_block_amax_tile_avx512(const float *restrict x, size_t stride, size_t nrows, size_t n,
                                  size_t bs, uint32_t *restrict m, uint8_t *restrict nan)
{
    (void)x, (void)stride, (void)nrows, (void)n, (void)bs, (void)m, (void)nan;
}
uint64_t fpsim_block_fast_row_avx512(uint8_t *restrict codes, const float *restrict x, size_t n,
                                     size_t bs, const float *restrict fs, const fpsim_block_fast *fc,
                                     uint32_t satbits, uint32_t *slow)
{
    (void)codes, (void)x, (void)n, (void)bs, (void)fs, (void)fc, (void)satbits, (void)slow;
    return 0;
}
uint64_t fpsim_block_fast_sr_row_avx512(uint8_t *restrict codes, const float *restrict x, size_t n,
                                        size_t bs, const float *restrict fs,
                                        const uint8_t *restrict rbytes, const fpsim_block_fast *fc,
                                        uint32_t satbits, uint32_t *slow)
{
    (void)codes, (void)x, (void)n, (void)bs, (void)fs, (void)rbytes, (void)fc, (void)satbits, (void)slow;
    return 0;
}
void fpsim_block_pack_fp4_avx512(uint8_t *restrict dst, const uint8_t *restrict codes, size_t n)
{
    (void)dst, (void)codes, (void)n;
}
uint32_t fpsim_block_rht_cols_avx512(float *restrict dst, uint16_t *restrict dst16,
                                     const float *restrict x, size_t rows, size_t cols, size_t j0,
                                     size_t nbands, int *saw_nan)
{
    (void)dst, (void)dst16, (void)x, (void)rows, (void)cols, (void)j0, (void)nbands, (void)saw_nan;
    return 0;
}
void fpsim_block_widen_bf16_amax_avx512(float *restrict x, const uint16_t *restrict h, size_t n,
                                        size_t bs, uint32_t *restrict m, uint8_t *restrict nan)
{
    (void)x, (void)h, (void)n, (void)bs, (void)m, (void)nan;
}
uint32_t fpsim_block_amax_bits_avx512(const float *restrict x, size_t n, int *saw_nan)
{
    (void)x, (void)n, (void)saw_nan;
    return 0;
}
#endif
