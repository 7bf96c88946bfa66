/* fast_tile.cuh: the "fast tile" case shared by the block kernels v5-v8.
 *
 * A tile is FAST when none of its inputs is NaN or Inf, the element multiplier is finite and the
 * scheme applies it as one multiply (plain), and either the element policy saturates or the
 * tile's largest scaled magnitude RN(amax * |mult|) is at most the element maximum. Then:
 *  - no product x * mult is NaN, so the x86 NaN-order emulation of block_rules.cuh is exactly
 *    __fmul_rn, and every NaN policy sees the same amax (the raw max of |x| bits);
 *  - the element cast only meets non-NaN inputs, where the policies of one format differ only in
 *    their overflow/Inf codes (saturating: all the same; otherwise nothing overflows), so it is
 *    cvt.rn.satfinite for E4M3/E5M2 (hw_cvt.cuh), the paired fpsim_e2m1x2_*_small forms for E2M1
 *    (whose fast tiles stay below 2^13: FAST_SAT_SMALL),
 *    fpsim_e2m3_rne_sat for E2M3 (from run 32) and the lean nearest-even form for E3M2
 *    (elem_fixed.cuh; all compared with the core by tests/gpu/test_lean_rne.cu).
 * Any other tile takes the kernels' exact path (scale_group and the shared core), which also
 * recomputes the amax under the scheme's NaN policy. */
#ifndef FPSIM_FAST_TILE_CUH
#define FPSIM_FAST_TILE_CUH

#include <float.h>

#include "block_rules.cuh" /* FPSIM_F32_INF_BITS */
#include "elem_bf16_pairs.cuh"
#include "elem_fixed.cuh"
#include "hw_cvt.cuh"

/* qargs.fast_mode: whether and how tiles may take the fast case. FAST_SAT_SMALL: the policy
 * saturates, but the fast form (E2M1's paired forms) needs every scaled magnitude below 2^13, so
 * a tile whose RN(amax * |mult|) reaches 2^13 (a saturated NVFP4 scale, an amax given too small)
 * takes the exact path. FAST_E8M0: element conversions into E8M0 under nearest, on vectors whose
 * magnitudes are all normal and below 0x7F400000 (convert_fast.cuh). */
enum { FAST_NEVER = 0, FAST_SATURATING = 1, FAST_IF_NO_OVERFLOW = 2, FAST_SAT_SMALL = 3, FAST_E8M0 = 4 };
#define FPSIM_FAST_SMALL_MAX_BITS 0x45FFFFFFu /* the largest float32 below 2^13 */

/* The fast mode of element spec es (host): the format's standard fields, no zero rule,
 * nearest-even (or E2M1 stochastic rounding with 8 random bits); E4M3/E5M2 need the hardware cvt
 * (sm_89+, hw != 0). */
inline int fast_elem_mode(const fpsim_spec *es, int hw)
{
    /* stochastic rounding: E2M1 with a byte per element only (fpsim_e2m1x2_sr8_f16) */
    const int sr8 = es->round == FPSIM_SR && es->format == FPSIM_E2M1 && es->sr_bits == 8;
    if ((es->round != FPSIM_RNE && !sr8) || !es->is_signed ||
        (es->flags & (FPSIM_SPEC_UNSIGNED_ZERO | FPSIM_SPEC_NEGZERO_IN_POS)))
        return FAST_NEVER;
    const uint16_t top = (uint16_t)(1u << (es->bits - 1));
    const int sat = es->ovf_pos == es->max_mag && es->inf_pos == es->max_mag &&
                    es->ovf_neg == (top | es->max_mag) && es->inf_neg == (top | es->max_mag);
    switch (es->format) {
    case FPSIM_E4M3:
        if (!hw || !fpsim_elem_fixed_matches<FPSIM_E4M3>(es)) return FAST_NEVER;
        return sat ? FAST_SATURATING : FAST_IF_NO_OVERFLOW;
    case FPSIM_E5M2:
        if (!hw || !fpsim_elem_fixed_matches<FPSIM_E5M2>(es)) return FAST_NEVER;
        return sat ? FAST_SATURATING : FAST_IF_NO_OVERFLOW;
    case FPSIM_E2M1: /* the paired forms saturate: only saturating policies */
        return fpsim_elem_fixed_matches<FPSIM_E2M1>(es) && sat ? FAST_SAT_SMALL : FAST_NEVER;
    case FPSIM_E2M3:
        if (!fpsim_elem_fixed_matches<FPSIM_E2M3>(es)) return FAST_NEVER;
        return sat ? FAST_SATURATING : FAST_IF_NO_OVERFLOW;
    case FPSIM_E3M2:
        if (!fpsim_elem_fixed_matches<FPSIM_E3M2>(es)) return FAST_NEVER;
        return sat ? FAST_SATURATING : FAST_IF_NO_OVERFLOW;
    default:
        return FAST_NEVER;
    }
}

/* The fast-case test for one tile: raw = max |x| bits over the tile (NaN above Inf). */
__device__ __forceinline__ int tile_is_fast(int mode, uint32_t raw, int plain, float mult, float elem_max)
{
    const float m = fabsf(mult);
    if (mode == FAST_NEVER || raw >= FPSIM_F32_INF_BITS || !plain || !(m <= FLT_MAX)) return 0;
    if (mode == FAST_SATURATING) return 1;
    const float top = __fmul_rn(__uint_as_float(raw), m); /* no |x * mult| of the tile exceeds it */
    return mode == FAST_SAT_SMALL ? top < 8192.0f : top <= elem_max;
}

/* Eight E2M1 codes as one packed word from four bf16 pairs, u[k] = elements k (lane 0) and k + 4
 * (lane 1), scaled by s1 (elem_bf16_pairs.cuh), whose signs are those of sgn[k] (u[k] itself, or
 * any word with the same sign bits, so that u[k] can stay a value the form masks anyway): the
 * biased pairs shifted by 4 k are ADDED (one
 * LEA each), which is the packed codes plus BIAS * 0x1111 modulo 2^32, exactly, so one
 * subtraction removes every lane's bias. The signs (bits 15 and 31 of pair k) belong at bits
 * 4 k + 3 and 4 k + 19: two PRMTs gather the sign bytes (1 and 3) of pairs 0 and 2, replicated,
 * and of pairs 1 and 3, as they are, so that masks 0x08080808 and 0x80808080 leave exactly those
 * bits (run 71; a shift and a mask per pair before). */
__device__ __forceinline__ uint32_t e2m1_word_of_pairs(const uint32_t (&u)[4], const uint32_t (&sgn)[4],
                                                       uint32_t s1)
{
    typedef fpsim_e2mx_bf16_consts<FPSIM_E2M1> K;
    uint32_t sum = 0;
#pragma unroll
    for (int k = 0; k < 4; k++)
        sum += fpsim_e2mx_bf16x2_biased<FPSIM_E2M1>(u[k], s1) << (4 * k);
    /* elements 0, 2, 4, 6 (bytes 1, 5, 3, 7 of pairs 0 and 2, sign-replicated: bits 3, 11, 19,
     * 27 under the mask) and 1, 3, 5, 7 (the same bytes of pairs 1 and 3, each sign at bit 7 of
     * its byte: bits 7, 15, 23, 31) */
    const uint32_t even = fpsim_prmt<0xFBD9u>(sgn[0], sgn[2]), odd = fpsim_prmt<0x7351u>(sgn[1], sgn[3]);
    return (sum - K::BIAS * 0x1111u) | (even & 0x08080808u) | (odd & 0x80808080u);
}

/* Words holding N codes of format F: 8 nibbles (E2M1) or 4 bytes a word. */
template <int F, int N> struct code_words {
    enum { W = F == FPSIM_E2M1 ? (N + 7) / 8 : (N + 3) / 4 };
};

/* Codes of N scaled, non-NaN elements of a fast tile, packed: element j in nibble j (E2M1) or
 * byte j (8-bit storage). */
template <int F, int N>
__device__ __forceinline__ void fast_codes(const float (&y)[N], const fpsim_spec &es,
                                           uint32_t (&c)[code_words<F, N>::W])
{
#pragma unroll
    for (int q = 0; q < code_words<F, N>::W; q++)
        c[q] = 0;
    if (F == FPSIM_E4M3 || F == FPSIM_E5M2) {
#pragma unroll
        for (int j = 0; j < N; j += 2)
            c[j / 4] |= fpsim_hw_cvt_pair(y[j], y[j + 1], F == FPSIM_E5M2) << (8 * (j % 4));
    } else if (F == FPSIM_E2M1 && N % 8 == 0) { /* fast tiles of E2M1 are below 2^13 (FAST_SAT_SMALL) */
        /* elements j and j + 4 of each 8 as one bf16 pair, rounded to odd (elem_bf16_pairs.cuh:
         * the same codes as the float32 forms, run 76), coded and packed as the bf16 inputs of MX */
#pragma unroll
        for (int q = 0; q < N / 8; q++) {
            uint32_t u[4], hi[4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                const uint32_t a = __float_as_uint(y[8 * q + k]), b = __float_as_uint(y[8 * q + k + 4]);
                hi[k] = fpsim_prmt<0x7632u>(a, b); /* the signs: the round-to-odd pair's are these */
                u[k] = fpsim_bf16x2_round_odd(a, b);
            }
            c[q] = e2m1_word_of_pairs(u, hi, FPSIM_BF16X2_ONE);
        }
    } else if (F == FPSIM_E2M1) {
#pragma unroll
        for (int j = 0; j < N; j++)
            c[j / 8] |= fpsim_e2m1_rne_sat(__float_as_uint(y[j])) << (4 * (j % 8));
    } else if (F == FPSIM_E2M3) { /* fast tiles never exceed 7.5 unless the policy saturates */
#pragma unroll
        for (int j = 0; j < N; j++)
            c[j / 4] |= fpsim_e2m3_rne_sat(__float_as_uint(y[j])) << (8 * (j % 4));
    } else {
        constexpr int G = F == FPSIM_E2M3 || F == FPSIM_E3M2 ? F : FPSIM_E2M3;
#pragma unroll
        for (int j = 0; j < N; j++)
            c[j / 4] |= fpsim_round_f32_rne_lean<G>(__float_as_uint(y[j]), es) << (8 * (j % 4));
    }
}

/* N bf16 inputs as loaded, not yet widened: element j is the high half of word w[j] when bit j
 * of hi is set, else its low half (kernel v7: w[j] = word j / 2 of the row, hi = 0xAAAA, and
 * words_paired set: elements 2i and 2i + 1 share a word in that order; kernel v8: the row j word
 * that holds the column, hi = 0 or 0xFFFF). The bf16-pair forms read these directly: widened
 * float32 copies cost one instruction per element, and the tiles on the pair path only need them
 * for the statistics and the exact path (run 71). */
template <int N> struct bf16_elems {
    uint32_t w[N];
    uint32_t hi;
    int words_paired;
};

template <class E> struct is_bf16_elems {
    enum { value = 0 };
};
template <int N> struct is_bf16_elems<bf16_elems<N>> {
    enum { value = 1 };
};

/* Element j of such inputs widened to float32 (exact). */
template <int N> __device__ __forceinline__ float bf16_elem_f32(const bf16_elems<N> &e, int j)
{
    return __uint_as_float((e.hi >> j & 1u) ? e.w[j] & 0xFFFF0000u : e.w[j] << 16);
}

/* Elements a (lane 0) and b (lane 1) as one bf16 pair: one PRMT, none where both already share
 * a word in that order (the compiler does not drop an identity PRMT by itself). */
template <int N> __device__ __forceinline__ uint32_t bf16_elem_pair(const bf16_elems<N> &e, int a, int b)
{
    if (e.words_paired && a % 2 == 0 && b == a + 1) return e.w[a];
    const uint32_t lo = (e.hi >> a & 1u) ? 0x32u : 0x10u, hi = (e.hi >> b & 1u) ? 0x7600u : 0x5400u;
    return __byte_perm(e.w[a], e.w[b], lo | hi);
}

/* The same for bf16 inputs scaled by a power of two (F = E2M1 or E2M3; N a multiple of 8): e the
 * inputs as loaded, s1 the pair 2^k, 2^k (fpsim_bf16_pair_scale_ok holds). elem_bf16_pairs.cuh's
 * forms on the bf16 pairs themselves, packed with the bias and the signs taken once per word:
 *  - E2M1 pairs elements j and j + 4 of each 8 (lane 0 -> nibble j, lane 1 -> nibble j + 4),
 *    packed by e2m1_word_of_pairs.
 *  - E2M3 pairs 2q and 2q + 1 (in kernel v7 a loaded word as it is); a PRMT takes the low bytes
 *    of two pairs (0x80 + code each, as BIAS = 0x4180) into the word of elements 4q .. 4q + 3,
 *    and a PRMT replicates the four sign bytes. One LOP3 merges the two: bits 0-4 and 6 from the
 *    codes (the code, and a 0), bits 5 and 7 from sign & ~codes (bit 5 of the codes is 0, so the
 *    sign passes; bit 7, the 0x80, is 1, so it clears). */
template <int F, int N>
__device__ __forceinline__ void fast_codes_bf16_pow2(const bf16_elems<N> &e, uint32_t s1,
                                                     uint32_t (&c)[code_words<F, N>::W])
{
    static_assert((F == FPSIM_E2M1 || F == FPSIM_E2M3) && N % 8 == 0, "E2M1 or E2M3, whole words");
    if (F == FPSIM_E2M1) {
#pragma unroll
        for (int q = 0; q < N / 8; q++) {
            uint32_t u[4];
#pragma unroll
            for (int k = 0; k < 4; k++)
                u[k] = bf16_elem_pair(e, 8 * q + k, 8 * q + k + 4);
            c[q % code_words<F, N>::W] = e2m1_word_of_pairs(u, u, s1);
        }
    } else {
#pragma unroll
        for (int q = 0; q < N / 4; q++) {
            const uint32_t ulo = bf16_elem_pair(e, 4 * q, 4 * q + 1),
                           uhi = bf16_elem_pair(e, 4 * q + 2, 4 * q + 3);
            const uint32_t w = __byte_perm(fpsim_e2mx_bf16x2_biased<F>(ulo, s1),
                                           fpsim_e2mx_bf16x2_biased<F>(uhi, s1), 0x6420u),
                           sign = fpsim_sign_bf16x4_bytes(ulo, uhi);
            constexpr uint32_t KEEP = 0x5F5F5F5Fu; /* code bits 0-4, and bit 6 (0 in w) */
            c[q % code_words<F, N>::W] = (w & KEEP) | (sign & ~w & ~KEEP);
        }
    }
}

/* E2M1 under stochastic rounding with 8 random bits (N a multiple of 8, every scaled |y| below
 * 2^13), by way of float16 (fpsim_e2m1x2_sr8_f16): t[j] = |x_j| times (the tile's multiplier times
 * 2^-14), one float32 multiply, which is 2^-14 |y_j| exactly wherever that is a normal float and
 * below 2^-126 elsewhere (code 0 either way); sg[j] = x_j's bits (its sign is the code's);
 * w[j / 4] = element j's random word (byte j % 4, as fpsim_sr_word). Elements k and k + 4 of each
 * group of 8 share a conversion; their bytes, byte k of words 2q and 2q + 1, reach the lanes by
 * two PRMTs per two pairs plus one per pair. */
template <int N>
__device__ __forceinline__ void fast_codes_sr_f16(const float (&t)[N], const uint32_t (&sg)[N],
                                                  const uint32_t (&w)[N / 4], uint32_t (&c)[N / 8])
{
    static_assert(N % 8 == 0, "whole words of nibbles");
#pragma unroll
    for (int q = 0; q < N / 8; q++) {
        /* bytes 0, 1 (q01) or 2, 3 (q23) of word 2q in the low half, of word 2q + 1 in the high */
        const uint32_t q01 = __byte_perm(w[2 * q], w[2 * q + 1], 0x5410u),
                       q23 = __byte_perm(w[2 * q], w[2 * q + 1], 0x7632u);
        uint32_t acc = 0;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const uint32_t r = __byte_perm(k < 2 ? q01 : q23, 0u, k % 2 ? 0x4341u : 0x4240u);
            const uint32_t m = fpsim_e2m1x2_sr8_f16(fpsim_f16x2_rz(t[8 * q + k], t[8 * q + k + 4]), r);
            acc |= k == 3 ? m << 3 : m >> (9 - 4 * k); /* bits 9-11 to nibble k's bits 0-2 */
            acc |= fpsim_sign_pair(sg[8 * q + k], sg[8 * q + k + 4]) & (0x00080008u << (4 * k));
        }
        c[q] = acc;
    }
}

/* The same codes from the SIGNED scaled elements: t[j] = x_j times (the multiplier times 2^-14),
 * signs included, w as above. Per pair one conversion, one min.xorsign.abs and one add
 * (fpsim_e2m1x2_sr8_f16_signed), then two PRMTs and a few shifts and masks a word
 * (fpsim_e2m1_nibbles_of_sr_lanes) where fast_codes_sr_f16 spends a cap, a mask, a shifted add, a
 * sign PRMT and its mask per pair: in the SR+RHT kernel's column code 110 instructions per 16
 * elements against 132, most of the saving on the ALU pipe (LOP3, VIMNMX, LEA, PRMT). The
 * callers take this form unless FPSIM_GPU_SR_SIGNED is 0 (run 175, % of copy: NVFP4 SR rows
 * 73.2-73.9 -> 78.3-78.9, SR cols 69.7-70.3 -> 75.8-76.2, SR+RHT rhtsum=mma 57.0-57.4 ->
 * 60.5-60.7). */
#ifndef FPSIM_GPU_SR_SIGNED
#define FPSIM_GPU_SR_SIGNED 1
#endif
template <int N>
__device__ __forceinline__ void fast_codes_sr_f16_signed(const float (&t)[N], const uint32_t (&w)[N / 4],
                                                         uint32_t (&c)[N / 8])
{
    static_assert(N % 8 == 0, "whole words of nibbles");
#pragma unroll
    for (int q = 0; q < N / 8; q++) {
        const uint32_t q01 = __byte_perm(w[2 * q], w[2 * q + 1], 0x5410u),
                       q23 = __byte_perm(w[2 * q], w[2 * q + 1], 0x7632u);
        uint32_t m[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const uint32_t r = __byte_perm(k < 2 ? q01 : q23, 0u, k % 2 ? 0x4341u : 0x4240u);
            m[k] = fpsim_e2m1x2_sr8_f16_signed(fpsim_f16x2_rz(t[8 * q + k], t[8 * q + k + 4]), r);
        }
        c[q] = fpsim_e2m1_nibbles_of_sr_lanes(m);
    }
}

/* Store N packed codes of format F (N = 4, 8 or 16) at dst with one vector store. */
template <int F, int N>
__device__ __forceinline__ void store_code_words(const uint32_t (&c)[code_words<F, N>::W], uint8_t *dst)
{
    constexpr int BYTES = F == FPSIM_E2M1 ? N / 2 : N;
    if (BYTES == 16)
        *reinterpret_cast<uint4 *>(dst) = make_uint4(c[0], c[1 % code_words<F, N>::W],
                                                     c[2 % code_words<F, N>::W], c[3 % code_words<F, N>::W]);
    else if (BYTES == 8)
        *reinterpret_cast<uint2 *>(dst) = make_uint2(c[0], c[1 % code_words<F, N>::W]);
    else if (BYTES == 4)
        *reinterpret_cast<uint32_t *>(dst) = c[0];
    else
        *reinterpret_cast<uint16_t *>(dst) = (uint16_t)c[0];
}

/* Ask the L2 for `bytes` bytes at p (16-byte aligned, a multiple of 16) ahead of their loads: one
 * bulk-copy-engine prefetch (sm_90), no registers held, nothing returned; a hint only. */
__device__ __forceinline__ void prefetch_l2(const void *p, uint32_t bytes)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
#else
    (void)p;
    (void)bytes;
#endif
}

/* Prefetch the 128-byte line at p into L2 (prefetch.global.L2): a plain per-lane instruction, where
 * prefetch_l2's bulk form needs warp-uniform operands and costs a loop of about 20 instructions
 * around it when they come from per-thread registers (run 47's profile of kernel v7). */
__device__ __forceinline__ void prefetch_line_l2(const void *p)
{
#if defined(__CUDA_ARCH__)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
    (void)p;
#endif
}

/* The elements of a 16-byte word as floats: 8 bf16 (exact widening; element 2q + 1 in the high
 * half of 32-bit word q) or 4 float32, into v[0 .. 7] or v[0 .. 3]. */
template <int BF16> __device__ __forceinline__ void widen_word(const uint4 &w, float *v)
{
    const uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int q = 0; q < 4; q++) {
        if (BF16) {
            v[2 * q] = __uint_as_float(u[q] << 16);
            v[2 * q + 1] = __uint_as_float(u[q] & 0xFFFF0000u);
        } else {
            v[q] = __uint_as_float(u[q]);
        }
    }
}

/* Max of |x| bits over the 8 bf16 elements of a 16-byte word (NaN above Inf), as float32 bits. */
__device__ __forceinline__ uint32_t raw_max_bf16x8(const uint4 &w)
{
    uint32_t m = __vmaxu2(__vmaxu2(w.x & 0x7FFF7FFFu, w.y & 0x7FFF7FFFu),
                          __vmaxu2(w.z & 0x7FFF7FFFu, w.w & 0x7FFF7FFFu));
    return max(m >> 16, m & 0xFFFFu) << 16;
}

/* The same over the 4 float32 elements of a 16-byte word. */
__device__ __forceinline__ uint32_t raw_max_f32x4(const uint4 &w)
{
    return max(max(w.x & 0x7FFFFFFFu, w.y & 0x7FFFFFFFu), max(w.z & 0x7FFFFFFFu, w.w & 0x7FFFFFFFu));
}

#endif
