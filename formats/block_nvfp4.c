/* block_nvfp4.c: NVFP4 (E2M1 elements, E4M3 scale per 16, FP32 per-tensor scale), the 16-point
 * random Hadamard transform, and TE's stochastic rounding.
 *
 * TE chain (formats-spec.md 5.2; TransformerEngine transformer_engine/common/cast/nvfp4/
 * core_nvfp4.cuh, mirrored by pytorch/custom_recipes/reference_nvfp4.py):
 *   S_enc = fp32(2688) / amax (FP32 division), min(., FLT_MAX), 1.0 if amax == 0 or S_enc == 0;
 *   S_dec = 1 / S_enc; per block d = block_amax * (S_enc * fp32(1/6)) (the product in brackets
 *   first: ONE rounding of d), fminf(d, FLT_MAX), E4M3 RNE satfinite -> scale s;
 *   enc = min(1 / (float(s) * S_dec), FLT_MAX); element y = x * enc, E2M1 RNE satfinite
 *   (or stochastic rounding, below). No lower clamp of s: a block whose d rounds to 0 stores
 *   scale 0 and gets enc = FLT_MAX (its elements saturate; it dequantizes to 0).
 * torchao chain (pytorch/ao 0.18 torchao/prototype/mx_formats/nvfp4_tensor.py nvfp4_quantize):
 *   per_tensor_scale = amax / 2688.0; block_scale = block_amax / 6.0; s = block_scale /
 *   per_tensor_scale; clamp to [2^-6, 448]; torch cast to E4M3; y = x * ((1/pts) / float(s));
 *   clamp +-6; f32_to_f4_unpacked. `tensor / python_float` is a true division on CPU and a
 *   multiply by the FP32 reciprocal on CUDA (aten BinaryDivTrueKernel.cu): chain torchao-cuda.
 *   global=0: single level, s = e4m3(clamp(block_amax / 6, 2^-6, 448)), y = x * (1 / float(s)).
 * Stochastic rounding (5.4, TE ptx.cuh stochastic_round_fp4_e2m1 emulation): element i of the
 *   stored operand (row-major linear index) uses byte (i mod 4) of the 32-bit word
 *   fpsim_sr_word(seed, stream, i / 4); it rounds up with probability floor(256 frac)/256, which
 *   is the core's SR with the byte as the top 8 random bits. */
#define FPSIM_BLOCK_INTERNAL
#include "block_arith.h"
#include "fpsim_block.h"
#include "fpsim_core.h"
#include "rht16_mma.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* 16-point Sylvester Hadamard with TE's fixed wgrad sign vector (get_wgrad_sign_vector; the same
 * default in torchao hadamard_utils.py): y_j = 0.25 * sum_i s_i v_i H[i][j], H[i][j] =
 * (-1)^popcount(i & j). The 16 terms are BF16 values times +-0.25, so their sum is exact in double
 * unless they span more than ~45 binades; the result is rounded once to BF16 (RNE), as TE's BF16
 * matmul output. */
/* The float fast path of fpsim_rht16: when the 16 inputs are BF16 values (8-bit significands),
 * finite, with exponents of the nonzero ones within 11 binades and far from the FP32 range ends,
 * every partial sum of +-0.25 x_i is a multiple of the smallest term's ulp below 2^24 of them, so
 * the FP32 butterflies are exact and one RNE rounding to BF16 of the exact sum remains. Returns 0
 * when the conditions do not hold (the double path then runs). */
static int rht16_float(float y[16], const float x[16])
{
    static const float sign[16] = {1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};
    uint32_t lowbits = 0, emax = 0, emin = 255;
    for (int i = 0; i < 16; i++) {
        const uint32_t b = f2u(x[i]), e = (b >> 23) & 0xFFu;
        lowbits |= b & 0xFFFFu;
        const int nz = (b & 0x7FFFFFFFu) != 0;
        emax = nz && e > emax ? e : emax;
        emin = nz && e < emin ? e : emin;
    }
    if (lowbits || emax == 255 || (emax > 0 && (emin < 20 || emax > 230 || emax - emin > 11)))
        return 0;
    float v[16];
    for (int i = 0; i < 16; i++)
        v[i] = 0.25f * sign[i] * x[i]; /* exact: a power of two and a sign */
    for (int h = 1; h < 16; h <<= 1)
        for (int i = 0; i < 16; i += 2 * h)
            for (int j = i; j < i + h; j++) {
                const float a = v[j], b = v[j + h];
                v[j] = a + b;
                v[j + h] = a - b;
            }
    for (int j = 0; j < 16; j++) {
        /* float -> BF16 RNE (results are normal or zero here); + 0 makes a zero sum +0, as the
         * tensor cores' FP32 accumulation of TE's BF16 matmul gives it (a -0 sum arises when
         * every term is -0) */
        uint32_t u = f2u(v[j] + 0.0f);
        u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
        y[j] = u2f(u);
    }
    return 1;
}

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
/* The double path below in AVX-512 registers: the same products, the same butterflies in the
 * same order (h = 1, 2, 4, 8; lower lane + upper lane and lower - upper, finite operands, so
 * a + b and b + a have the same bits) and the same RNE rounding to BF16 by bits, 8 lanes at a
 * time. Returns 0 (nothing written) for non-finite inputs or results outside the BF16 normal
 * range other than zero; the scalar double path then runs and gives the same bits. */
__attribute__((target("avx512f"))) static int rht16_avx512(float y[16], const float x[16])
{
    const __m512 xf = _mm512_loadu_ps(x);
    const __m512i xb = _mm512_castps_si512(xf);
    const __m512i expo = _mm512_and_si512(xb, _mm512_set1_epi32(0x7F800000));
    if (_mm512_cmpeq_epi32_mask(expo, _mm512_set1_epi32(0x7F800000)))
        return 0;
    /* 0.25 * s_i, exact */
    const __m512d slo = _mm512_setr_pd(0.25, 0.25, 0.25, -0.25, 0.25, -0.25, -0.25, -0.25);
    const __m512d shi = _mm512_setr_pd(-0.25, -0.25, -0.25, 0.25, -0.25, 0.25, -0.25, -0.25);
    __m512d a = _mm512_mul_pd(slo, _mm512_cvtps_pd(_mm256_loadu_ps(x)));
    __m512d b = _mm512_mul_pd(shi, _mm512_cvtps_pd(_mm256_loadu_ps(x + 8)));
    /* h = 1: partner in the other lane of each pair; upper lane = partner - self */
    __m512d ta = _mm512_permute_pd(a, 0x55), tb = _mm512_permute_pd(b, 0x55);
    a = _mm512_mask_sub_pd(_mm512_add_pd(a, ta), 0xAA, ta, a);
    b = _mm512_mask_sub_pd(_mm512_add_pd(b, tb), 0xAA, tb, b);
    /* h = 2 */
    ta = _mm512_permutex_pd(a, 0x4E);
    tb = _mm512_permutex_pd(b, 0x4E);
    a = _mm512_mask_sub_pd(_mm512_add_pd(a, ta), 0xCC, ta, a);
    b = _mm512_mask_sub_pd(_mm512_add_pd(b, tb), 0xCC, tb, b);
    /* h = 4 */
    ta = _mm512_shuffle_f64x2(a, a, 0x4E);
    tb = _mm512_shuffle_f64x2(b, b, 0x4E);
    a = _mm512_mask_sub_pd(_mm512_add_pd(a, ta), 0xF0, ta, a);
    b = _mm512_mask_sub_pd(_mm512_add_pd(b, tb), 0xF0, tb, b);
    /* h = 8: a = v[0..7], b = v[8..15] */
    const __m512d zero = _mm512_setzero_pd(); /* + 0: a zero sum is +0, as the float path */
    const __m512d lo = _mm512_add_pd(_mm512_add_pd(a, b), zero), hi = _mm512_add_pd(_mm512_sub_pd(a, b), zero);
    /* double -> BF16 RNE at bit 45, as the scalar path; zero passes through unchanged */
    const __m512i emin = _mm512_set1_epi64(1023 - 126), emax = _mm512_set1_epi64(1023 + 127);
    const __m512i absm = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFFll);
    const __m512i half = _mm512_set1_epi64((1ll << 44) - 1), keep = _mm512_set1_epi64(~((1ll << 45) - 1));
    __m512i u[2] = {_mm512_castpd_si512(lo), _mm512_castpd_si512(hi)};
    for (int k = 0; k < 2; k++) {
        const __m512i e = _mm512_srli_epi64(u[k], 52);
        const __m512i ea = _mm512_and_si512(e, _mm512_set1_epi64(0x7FF));
        const __mmask8 ok = _mm512_cmpge_epu64_mask(ea, emin) & _mm512_cmple_epu64_mask(ea, emax);
        const __mmask8 zero = _mm512_testn_epi64_mask(u[k], absm);
        if ((__mmask8)(ok | zero) != 0xFF)
            return 0;
        const __m512i odd = _mm512_and_si512(_mm512_srli_epi64(u[k], 45), _mm512_set1_epi64(1));
        u[k] = _mm512_and_si512(_mm512_add_epi64(u[k], _mm512_add_epi64(half, odd)), keep);
    }
    const __m256 ylo = _mm512_cvtpd_ps(_mm512_castsi512_pd(u[0]));
    const __m256 yhi = _mm512_cvtpd_ps(_mm512_castsi512_pd(u[1]));
    _mm256_storeu_ps(y, ylo);
    _mm256_storeu_ps(y + 8, yhi);
    return 1;
}
static int rht16_have_avx512(void)
{
    /* libgcc's CPU model, filled once at load time: a read, no state of ours */
    return __builtin_cpu_supports("avx512f");
}
#endif

void fpsim_rht16(float y[16], const float x[16])
{
#if defined(__GNUC__) && defined(__x86_64__)
    if (rht16_have_avx512() && rht16_avx512(y, x))
        return;
#endif
    if (rht16_float(y, x))
        return;
    static const double sign[16] = {1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};
    double v[16];
    for (int i = 0; i < 16; i++)
        v[i] = 0.25 * sign[i] * (double)x[i];
    /* fast Walsh-Hadamard transform: out_j = sum_i v_i (-1)^popcount(i & j); every partial sum
     * is a sum of distinct terms, exact in double for BF16 inputs within 45 binades */
    for (int h = 1; h < 16; h <<= 1)
        for (int i = 0; i < 16; i += 2 * h)
            for (int j = i; j < i + h; j++) {
                double a = v[j], b = v[j + h];
                v[j] = a + b;
                v[j + h] = a - b;
            }
    for (int j = 0; j < 16; j++) {
        /* double -> BF16, one RNE rounding at bit 45 of the double's significand (7 fraction
         * bits kept); BF16-subnormal and non-finite results take the slow path */
        double a = v[j] + 0.0; /* a zero sum is +0, as the float path */
        uint64_t u;
        memcpy(&u, &a, 8);
        uint64_t ea = (u >> 52) & 0x7FF;
        if (ea >= 1023 - 126 && ea <= 1023 + 127) {
            u += (1ull << 44) - 1 + ((u >> 45) & 1);
            u &= ~((1ull << 45) - 1);
            memcpy(&a, &u, 8);
            y[j] = (float)a; /* exact: 8 significant bits, in range (or exactly the BF16 carry) */
        } else if (a == 0.0 || !isfinite(a) || ea > 1023 + 127) {
            y[j] = (float)a; /* zero, Inf, NaN; beyond the BF16 range: Inf */
        } else {
            double q = fabs(a) / 0x1p-133, fq = floor(q), rq = q - fq;
            if (rq > 0.5 || (rq == 0.5 && fmod(fq, 2.0) != 0.0))
                fq += 1.0;
            y[j] = (float)(a < 0 ? -fq * 0x1p-133 : fq * 0x1p-133);
        }
    }
}

int fpsim_rht16_mma_is_exact(const uint32_t b[16])
{
    uint32_t emax = 0, emin = 255;
    for (int i = 0; i < 16; i++) {
        const uint32_t e = (b[i] >> 23) & 0xFFu;
        if (e == 0xFFu)
            return 0;
        if (b[i] & 0x7FFFFFFFu) {
            const uint32_t ee = e ? e : 1u; /* a subnormal counts with exponent -126 */
            emax = ee > emax ? ee : emax;
            emin = ee < emin ? ee : emin;
        }
    }
    return emax < emin || emax - emin <= 12;
}

void fpsim_rht16_mma(float y[16], const float x[16])
{
    uint32_t in[16], operand[16], out[16];
    memcpy(in, x, sizeof in);
    for (int i = 0; i < 16; i++)
        operand[i] = fpsim_rht_mma_bf16_bits(in[i]); /* the matmul's operand cast */
    if (fpsim_rht16_mma_is_exact(operand)) {
        float b[16];
        memcpy(b, operand, sizeof b);
        fpsim_rht16(y, b); /* the same bits, by the fast paths of the exact policy */
        return;
    }
    fpsim_rht16_mma_bits(out, in); /* the model, from the raw inputs as it is defined */
    memcpy(y, out, sizeof out);
}

void fpsim_rht16_scheme(float y[16], const float x[16], const fpsim_scheme *s)
{
    if (s->rhtsum == FPSIM_RHT_MMA)
        fpsim_rht16_mma(y, x);
    else
        fpsim_rht16(y, x);
}

/* torch's E4M3 -> float32 (c10 fp8e4m3fn_to_fp32_value) turns the NaN codes into 0x7FF00000
 * with the sign; torchao's FP4 NaN code depends on that payload. */
static inline float e4m3_to_f32_torch(uint32_t code, const fpsim_spec *s)
{
    if ((code & 0x7Fu) == 0x7Fu)
        return u2f(0x7FF00000u | ((code & 0x80u) << 24));
    return u2f(fpsim_decode_f32(code, s));
}

/* FP32 division / multiply by a python float as torch does it on the chain's device. */
static inline float div_scalar(float a, float b, int cuda)
{
    return cuda ? a * (1.0f / b) : a / b;
}

/* fminf(v, FLT_MAX) as a select: NaN and +Inf give FLT_MAX, everything else itself (no libm
 * call, so the loops around it vectorize). */
static inline float min_flt_max(float v)
{
    return v <= FLT_MAX ? v : FLT_MAX;
}

static inline float clampf(float v, float lo, float hi)
{
    /* torch.clamp: NaN propagates */
    return isnan(v) ? v : (v < lo ? lo : (v > hi ? hi : v));
}

/* The chain's block scale: E4M3 code, its value, and the element multiplier. */
static void nvfp4_block_scale(const fpsim_block_plan *p, float amax, uint32_t *scode, float *sf,
                              float *enc)
{
    const fpsim_scheme *s = &p->s;
    const int cuda = s->chain == FPSIM_NVFP4_TORCHAO_CUDA;
    if (s->chain == FPSIM_NVFP4_TE) {
        const float sixth = 1.0f / 6.0f; /* fp32(1/6) = 0x3E2AAAAB */
        float d = fminf(amax * (p->s_enc * sixth), FLT_MAX);
        *scode = fpsim_round_f32(f2u(d), &p->scale8, 0);
        *sf = u2f(fpsim_decode_f32(*scode, &p->scale8));
        *enc = fminf(1.0f / (*sf * p->s_dec), FLT_MAX);
    } else if (s->gscale) {
        float bs = div_scalar(amax, 6.0f, cuda);
        float sb = clampf(div_torch(bs, p->pts), 0x1p-6f, 448.0f);
        *scode = fpsim_round_f32(f2u(sb), &p->scale8, 0);
        *sf = e4m3_to_f32_torch(*scode, &p->scale8);
        *enc = div_torch(p->pts_rcp, *sf);
    } else {
        float bs = clampf(div_scalar(amax, 6.0f, cuda), 0x1p-6f, 448.0f);
        *scode = fpsim_round_f32(f2u(bs), &p->scale8, 0);
        *sf = e4m3_to_f32_torch(*scode, &p->scale8);
        *enc = div_torch(1.0f, *sf);
    }
}

/* x86-64: AVX-512 and AVX2 clones beside the baseline one (integer code: the same bits). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define NVFP4_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define NVFP4_CLONES
#endif

/* Philox4x32-10 (fpsim_philox4x32_10, the definition) of PB consecutive counters {lo32(blk),
 * hi32(blk), stream, 0} at once, lane-parallel so that the compiler vectorizes the 32x32->64
 * multiplies; w receives the 4 output words of each block, block after block. */
enum { PB = 16 };
static inline __attribute__((always_inline)) void philox_lanes(uint32_t *restrict w, uint64_t blk0,
                                                               uint32_t stream, uint64_t seed)
{
    uint32_t c0[PB], c1[PB], c2[PB], c3[PB];
    for (int l = 0; l < PB; l++) {
        const uint64_t b = blk0 + (uint64_t)l;
        c0[l] = (uint32_t)b;
        c1[l] = (uint32_t)(b >> 32);
        c2[l] = stream;
        c3[l] = 0;
    }
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int round = 0; round < 10; round++) {
        for (int l = 0; l < PB; l++) {
            const uint64_t p0 = (uint64_t)0xD2511F53u * c0[l];
            const uint64_t p1 = (uint64_t)0xCD9E8D57u * c2[l];
            const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1[l] ^ k0;
            const uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3[l] ^ k1;
            c1[l] = (uint32_t)p1;
            c3[l] = (uint32_t)p0;
            c0[l] = n0;
            c2[l] = n2;
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    for (int l = 0; l < PB; l++) {
        w[4 * l + 0] = c0[l];
        w[4 * l + 1] = c1[l];
        w[4 * l + 2] = c2[l];
        w[4 * l + 3] = c3[l];
    }
}

/* rb[i] = byte ((k0+i) mod 4) of fpsim_sr_word(seed, stream, (k0+i) / 4) for i < n: the
 * Philox block with counter k / 16 holds, as little-endian bytes, the bytes of elements 16 (k/16)
 * .. 16 (k/16) + 15 in order (word (k/4) & 3, byte k & 3). */
#if defined(__GNUC__) && defined(__x86_64__)
/* philox_lanes in AVX-512 registers: 16 counters per vector, the 32x32 -> 64 products as
 * mullo (low words) and two vpmuludq (high words of even and odd lanes). */
__attribute__((target("avx512f"))) static void philox_lanes_avx512(uint32_t *restrict w, uint64_t blk0,
                                                                  uint32_t stream, uint64_t seed)
{
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i lo = _mm512_add_epi32(_mm512_set1_epi32((int)(uint32_t)blk0), lane);
    /* hi32 of blk0 + l: a carry where the low word wrapped */
    const __mmask16 wrap = _mm512_cmplt_epu32_mask(lo, _mm512_set1_epi32((int)(uint32_t)blk0));
    __m512i c0 = lo;
    __m512i c1 = _mm512_mask_add_epi32(_mm512_set1_epi32((int)(uint32_t)(blk0 >> 32)), wrap,
                                       _mm512_set1_epi32((int)(uint32_t)(blk0 >> 32)),
                                       _mm512_set1_epi32(1));
    __m512i c2 = _mm512_set1_epi32((int)stream), c3 = _mm512_setzero_si512();
    const __m512i m0 = _mm512_set1_epi32((int)0xD2511F53u), m1 = _mm512_set1_epi32((int)0xCD9E8D57u);
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    for (int round = 0; round < 10; round++) {
        const __m512i lo0 = _mm512_mullo_epi32(c0, m0), lo1 = _mm512_mullo_epi32(c2, m1);
        const __m512i hi0 = _mm512_mask_blend_epi32(
            0xAAAA, _mm512_srli_epi64(_mm512_mul_epu32(c0, m0), 32),
            _mm512_mul_epu32(_mm512_srli_epi64(c0, 32), m0));
        const __m512i hi1 = _mm512_mask_blend_epi32(
            0xAAAA, _mm512_srli_epi64(_mm512_mul_epu32(c2, m1), 32),
            _mm512_mul_epu32(_mm512_srli_epi64(c2, 32), m1));
        const __m512i n0 = _mm512_xor_si512(_mm512_xor_si512(hi1, c1), _mm512_set1_epi32((int)k0));
        const __m512i n2 = _mm512_xor_si512(_mm512_xor_si512(hi0, c3), _mm512_set1_epi32((int)k1));
        c1 = lo1;
        c3 = lo0;
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    /* interleave to block order: w[4 l + j] = c_j[l] */
    const __m512i a01lo = _mm512_unpacklo_epi32(c0, c1), a01hi = _mm512_unpackhi_epi32(c0, c1);
    const __m512i a23lo = _mm512_unpacklo_epi32(c2, c3), a23hi = _mm512_unpackhi_epi32(c2, c3);
    /* per 128-bit lane q: rows l = 4q..4q+3 */
    const __m512i r0 = _mm512_unpacklo_epi64(a01lo, a23lo); /* l = 4q + 0 */
    const __m512i r1 = _mm512_unpackhi_epi64(a01lo, a23lo); /* l = 4q + 1 */
    const __m512i r2 = _mm512_unpacklo_epi64(a01hi, a23hi); /* l = 4q + 2 */
    const __m512i r3 = _mm512_unpackhi_epi64(a01hi, a23hi); /* l = 4q + 3 */
    uint32_t t[4][16];
    _mm512_storeu_si512(t[0], r0);
    _mm512_storeu_si512(t[1], r1);
    _mm512_storeu_si512(t[2], r2);
    _mm512_storeu_si512(t[3], r3);
    for (int q = 0; q < 4; q++)
        for (int j = 0; j < 4; j++)
            memcpy(w + 4 * (4 * q + j), &t[j][4 * q], 16);
}
#endif

NVFP4_CLONES
static void sr_bytes(uint8_t *restrict rb, uint64_t k0, size_t n, uint64_t seed, uint32_t stream)
{
    uint32_t w[4 * PB];
    size_t i = 0;
    while (i < n) {
        const uint64_t k = k0 + i, blk = k >> 4;
#if defined(__GNUC__) && defined(__x86_64__)
        if (rht16_have_avx512())
            philox_lanes_avx512(w, blk, stream, seed);
        else
#endif
            philox_lanes(w, blk, stream, seed);
        const size_t off = (size_t)(k & 15u); /* byte of the first element in this batch */
        const size_t take = 16 * PB - off < n - i ? 16 * PB - off : n - i;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(rb + i, (const uint8_t *)w + off, take); /* byte b of word q is byte 4 q + b */
#else
        for (size_t j = 0; j < take; j++) {
            const size_t byte = off + j;
            rb[i + j] = (uint8_t)(w[byte >> 2] >> (8u * (uint32_t)(byte & 3u)));
        }
#endif
        i += take;
    }
}

/* Tile row g (one row for 1x16, 16 rows for 16x16): one row, one vector pass per chunk of blocks when every multiplier is
 * finite and nonzero (always under the TE chain). */
NVFP4_CLONES
static void nvfp4_row(const fpsim_block_plan *p, size_t g)
{
    enum { NB = 128 };
    const fpsim_scheme *s = &p->s;
    fpsim_qtensor *o = p->out;
    const size_t tc = s->tile_cols, tr = s->tile_rows;
    const size_t r0 = g * tr, r1 = r0 + tr < p->qrows ? r0 + tr : p->qrows;
    const float gdec = s->chain == FPSIM_NVFP4_TE ? p->s_dec : (s->gscale ? p->pts : 1.0f);
    uint8_t tmp[NB * 16];
    uint8_t rbv[NB * 16];
    float fs[NB];
    uint64_t sat = 0, zero = 0;
    /* every chunk starts at an even column, so fpsim_block_store_run writes whole bytes except
     * a last one shared by an odd row length, which it ORs into */
    if (p->qcols & 1u)
        for (size_t r = r0; r < r1; r++)
            o->codes[r * o->code_stride + o->code_stride - 1] = 0;
    /* a BF16 stored operand is widened chunk by chunk into xbuf (the chunk of each of the tile's
     * rows; exact: BF16 bits are the top half of the FP32 bits) */
    enum { BFE = 8192 };
    float xbuf[BFE];
    const size_t step = p->src_bf16 && BFE / (tr * tc) < NB ? BFE / (tr * tc) : NB;
    for (size_t b0 = 0; b0 < o->scols; b0 += step) {
        const size_t nb = b0 + step < o->scols ? step : o->scols - b0;
        const size_t c0 = b0 * tc, c1 = (b0 + nb) * tc < p->qcols ? (b0 + nb) * tc : p->qcols;
        int all_fast = 1;
        uint32_t mb[NB];
        uint8_t nanb[NB];
        const float *x0 = p->src ? p->src + r0 * p->qcols + c0 : xbuf; /* (r0, c0) */
        const size_t xstride = p->src ? p->qcols : c1 - c0;
        const int widened = !p->src && r1 - r0 == 1 && tc % 16 == 0 && p->fast.simd;
        if (widened) /* one row: widen and take the block amaxes in one pass */
            fpsim_block_widen_bf16_amax_avx512(xbuf, p->src_bf16 + r0 * p->qcols + c0, c1 - c0, tc, mb,
                                               nanb);
        else if (!p->src)
            for (size_t r = r0; r < r1; r++) {
                const uint16_t *h = p->src_bf16 + r * p->qcols + c0;
                /* the same chunk of the next group's row: hardware prefetchers stop at page
                 * boundaries, and the copy was streamed past the caches */
                if (r + tr < p->qrows)
                    for (size_t i = 0; i < c1 - c0; i += 32)
                        __builtin_prefetch(h + tr * p->qcols + i);
                float *d = xbuf + (r - r0) * (c1 - c0);
                for (size_t i = 0; i < c1 - c0; i++)
                    d[i] = u2f((uint32_t)h[i] << 16);
            }
        if (!widened)
            fpsim_block_amax_tile(x0, xstride, r1 - r0, c1 - c0, tc, mb, nanb);
        if (s->chain == FPSIM_NVFP4_TE) {
            /* the TE chain's block scales as runs: d = amax * (S_enc * fp32(1/6)), one E4M3
             * conversion pass, enc = fminf(1 / (float(s) * S_dec), FLT_MAX) */
            float dv[NB];
            uint8_t sc[NB];
            const float mul = p->s_enc * (1.0f / 6.0f);
            const int propagate = s->nan == FPSIM_NAN_PROPAGATE;
            for (size_t k = 0; k < nb; k++) {
                const float amax = (nanb[k] && propagate) ? NAN : u2f(mb[k]);
                dv[k] = min_flt_max(amax * mul);
                zero += amax == 0.0f;
            }
            fpsim_block_fast_run(sc, dv, nb, 1.0f, &p->fast_scale, 448.0f);
            uint8_t *scodes = o->scale_codes + g * o->scols + b0;
            float *sinv = o->scale_inv + g * o->scols + b0;
            for (size_t k = 0; k < nb; k++) {
                const float sf = p->scale_lut[sc[k]];
                fs[k] = min_flt_max(1.0f / (sf * p->s_dec));
                scodes[k] = sc[k];
                sinv[k] = sf;
            }
        } else {
        for (size_t k = 0; k < nb; k++) {
            const int saw_nan = nanb[k];
            const uint32_t m = mb[k];
            float amax = (saw_nan && s->nan == FPSIM_NAN_PROPAGATE) ? NAN : u2f(m);
            uint32_t scode;
            float sf;
            nvfp4_block_scale(p, amax, &scode, &sf, &fs[k]);
            all_fast &= isfinite(fs[k]) && fs[k] != 0.0f;
            zero += amax == 0.0f;
            o->scale_codes[g * o->scols + b0 + k] = (uint8_t)scode;
            o->scale_inv[g * o->scols + b0 + k] = sf;
        }
        }
        for (size_t r = r0; r < r1; r++) {
            const float *xc = x0 + (r - r0) * xstride; /* element c0 of row r */
            if (s->sr) {
                /* element k of the stored operand: byte (k mod 4) of fpsim_sr_word(seed, stream,
                 * k / 4) = word (k/4) & 3 of the Philox block with counter k / 16 */
                const uint64_t k0 = (uint64_t)r * p->qcols + c0;
                sr_bytes(rbv, k0, c1 - c0, p->seed, p->stream);
                if (all_fast) {
                    sat += fpsim_block_fast_sr_row_bytes(tmp, xc, c1 - c0, tc, fs, rbv,
                                                         &p->fast_sr, 6.0f);
                } else {
                    for (size_t i = c0; i < c1; i++) {
                        const float y = mul_torch(xc[i - c0], fs[(i - c0) / tc]);
                        sat += isfinite(xc[i - c0]) && fabsf(y) > 6.0f;
                        tmp[i - c0] = (uint8_t)fpsim_round_f32(f2u(y), &p->elem_sr,
                                                               (uint32_t)rbv[i - c0] << 24);
                    }
                }
            } else if (all_fast) {
                sat += fpsim_block_fast_row(tmp, xc, c1 - c0, tc, fs, &p->fast, 6.0f);
            } else {
                for (size_t i = c0; i < c1; i++) {
                    const float enc = fs[(i - c0) / tc];
                    float y = clampf(mul_torch(xc[i - c0], enc), -6.0f, 6.0f);
                    sat += isfinite(xc[i - c0]) && fabsf(mul_torch(xc[i - c0], enc)) > 6.0f;
                    tmp[i - c0] = (uint8_t)fpsim_round_f32(f2u(y), &p->elem, 0);
                }
            }
            fpsim_block_store_run(o, r, c0, tmp, c1 - c0, 1);
            if (p->dq) {
                float *d = p->dq + r * p->qcols;
                for (size_t i = c0; i < c1; i++)
                    d[i] = (p->elem_lut[tmp[i - c0]] * o->scale_inv[g * o->scols + i / tc]) * gdec;
            }
        }
    }
    p->group_sat[g] = sat;
    p->group_zero[g] = zero;
}

void fpsim_block_nvfp4_group(const fpsim_block_plan *p, size_t g)
{
    nvfp4_row(p, g);
}
