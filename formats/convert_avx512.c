/* convert_avx512.c: float32 bits -> codes, 16 elements per step with AVX-512 intrinsics, codes
 * stored straight to bytes or halfwords (vpmovdb / vpmovdw), for the specs most conversions use:
 * plain rules (fpsim_spec_full_rules() == 0: no E8M0, payload NaNs, unsigned zeros) and the
 * modes RNE, RZ, RU, RD and SR. convert_array.c calls it when fpsim_convert_avx512_usable() says
 * so and keeps its portable loops (the scalar core) for everything else and for other CPUs.
 *
 * The bits are those of fpsim_round_f32_mode (fpsim_core.h) with full_rules = 0; the test
 * tests/formats/test_convert_paths.c compares the two on every spec this path takes. How:
 *
 *   nearest and directed modes, |x| at or above the target's smallest normal 2^emin:
 *       the code magnitude is ((|x| bits) - ((127 - bias) << 23) + increment) >> (23 - mbits):
 *       rebiasing the exponent field and rounding the mantissa field in one integer add (a carry
 *       out of the mantissa moves into the exponent, as in fpsim_core.h step 4);
 *   the same modes, |x| below 2^emin (the target's subnormals and zero):
 *       |x| + M in float32 with the instruction's static rounding mode (vaddps {rn,rz,ru,rd}-sae),
 *       M = 2^(emin - mbits + 23), whose ulp is the target's subnormal spacing 2^(emin - mbits):
 *       the sum lies in M's binade, so the hardware rounds |x| to a multiple of that spacing
 *       exactly once, and bits(sum) - bits(M) is the code magnitude (2^mbits, the smallest
 *       normal, when it rounds up to 2^emin). Ties go to the even code (the sum's last bit is the
 *       code's). RU/RD add copysign(M, x) to x itself, so that the sign picks the direction.
 *       Needs float32 subnormal inputs read as they are: not used when MXCSR.DAZ is set;
 *   stochastic rounding: the core's integer rule lane by lane (sig, d, the discarded field
 *       aligned to the top of a word plus the random word, carry), with variable shifts whose
 *       counts of 32 or more give 0 as the core's selects do;
 *   overflow, Inf and NaN: one 8-entry table of codes indexed by (sign, class), class 0 =
 *       finite overflow (the mode's overflow code, fpsim_core_pack), 1 = Inf, 2 = NaN. */
#include <stddef.h>
#include <stdint.h>

#include "fpsim_core.h"

/* Declared here and in convert_array.c (the only caller) and the test: not a public API. */
int fpsim_convert_avx512_usable(const fpsim_spec *s);
void fpsim_convert_avx512_f32(void *codes, const uint32_t *x, size_t n, const fpsim_spec *s, const uint32_t *rb);

#if defined(__GNUC__) && defined(__x86_64__) && !defined(FPSIM_NO_CLONES)
#include <immintrin.h>

#define FPSIM_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define FPSIM_AVX512_INLINE FPSIM_AVX512 static inline __attribute__((always_inline))

int fpsim_convert_avx512_usable(const fpsim_spec *s)
{
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512dq") || !__builtin_cpu_supports("avx512vl"))
        return 0;
    if (fpsim_spec_full_rules(s) || s->round == FPSIM_RNA || s->bits > 16 || s->mbits > 22 || s->bias > 127 ||
        s->bias < 0)
        return 0;
    return (_mm_getcsr() & 0x40u) == 0; /* DAZ would read float32 subnormal inputs as zero */
}

/* Per-spec constants, broadcast once per call. */
typedef struct avx512_consts {
    __m512i abs, thr, inf, max_mag, sign_code, one, two, table;
    __m512i near_add, dir_sub, away, magic_bits;
    __m512 magic;
    __m512i sr_mask, sr_dc, sr_d, sr_c0, man, hidden, top, exp_field;
    uint32_t shift, mbits;
} avx512_consts;

FPSIM_AVX512_INLINE avx512_consts consts_make(const fpsim_spec *s, uint32_t mode)
{
    avx512_consts c;
    const uint32_t D = 23u - s->mbits;            /* mantissa bits dropped for normals */
    const uint32_t c0 = 128u - (uint32_t)s->bias; /* float32 exponent field of 2^emin */
    const uint32_t off = (127u - (uint32_t)s->bias) << 23;
    const uint32_t sign_code = 1u << (s->bits - 1);
    c.abs = _mm512_set1_epi32(0x7FFFFFFF);
    c.thr = _mm512_set1_epi32((int)(c0 << 23));
    c.inf = _mm512_set1_epi32(0x7F800000);
    c.max_mag = _mm512_set1_epi32(s->max_mag);
    c.sign_code = _mm512_set1_epi32((int)sign_code);
    c.one = _mm512_set1_epi32(1);
    c.two = _mm512_set1_epi32(2);
    /* fpsim_core_pack with full_rules = 0: toward zero (RZ, RU of a negative, RD of a positive)
     * overflows to +-max, other modes to the policy's overflow codes. */
    const uint32_t max_pos = s->max_mag, max_neg = sign_code | s->max_mag;
    const uint32_t ovf_pos = (mode == FPSIM_RZ || mode == FPSIM_RD) ? max_pos : s->ovf_pos;
    const uint32_t ovf_neg = (mode == FPSIM_RZ || mode == FPSIM_RU) ? max_neg : s->ovf_neg;
    c.table = _mm512_setr_epi32((int)ovf_pos, (int)ovf_neg, s->inf_pos, s->inf_neg, s->nan_pos, s->nan_neg, 0, 0, 0,
                                0, 0, 0, 0, 0, 0, 0);
    c.near_add = _mm512_set1_epi32((int)((1u << (D - 1)) - 1u - off)); /* RNE: half - 1, rebiased */
    c.dir_sub = _mm512_set1_epi32((int)off);
    c.away = _mm512_set1_epi32((int)((1u << D) - 1u));
    const uint32_t magic_bits = (151u - (uint32_t)s->bias - s->mbits) << 23; /* M = 2^(emin - mbits + 23) */
    c.magic_bits = _mm512_set1_epi32((int)magic_bits);
    c.magic = _mm512_castsi512_ps(c.magic_bits);
    c.sr_mask = _mm512_set1_epi32((int)(0xFFFFFFFFu << (32u - s->sr_bits)));
    c.sr_dc = _mm512_set1_epi32((int)(D + c0)); /* d = max(D + c0 - max(ef, 1), D) */
    c.sr_d = _mm512_set1_epi32((int)D);
    c.sr_c0 = _mm512_set1_epi32((int)c0);
    c.man = _mm512_set1_epi32(0x7FFFFF);
    c.hidden = _mm512_set1_epi32(0x800000);
    c.top = _mm512_set1_epi32(32);
    c.exp_field = _mm512_set1_epi32(0x7F800000);
    c.shift = D;
    c.mbits = s->mbits;
    return c;
}

/* Code magnitudes of 16 lanes (before overflow), mode a constant after inlining. */
FPSIM_AVX512_INLINE __m512i magnitude16(const avx512_consts *c, __m512i x, __m512i a, __mmask16 neg, __m512i r,
                                        uint32_t mode)
{
    if (mode == FPSIM_SR) {
        /* fpsim_round_f32_mode's SR branch: q = (sig >> d) + carry(field + r). */
        const __m512i ef = _mm512_max_epu32(_mm512_srli_epi32(a, 23), c->one);
        const __m512i k = _mm512_sub_epi32(ef, c->sr_c0);
        const __m512i d = _mm512_max_epi32(_mm512_sub_epi32(c->sr_dc, ef), c->sr_d);
        __m512i sig = _mm512_and_si512(a, c->man);
        sig = _mm512_mask_or_epi32(sig, _mm512_test_epi32_mask(a, c->exp_field), sig, c->hidden);
        const __m512i field = _mm512_or_si512(_mm512_sllv_epi32(sig, _mm512_sub_epi32(c->top, d)),
                                              _mm512_srlv_epi32(sig, _mm512_sub_epi32(d, c->top)));
        const __m512i rr = _mm512_and_si512(r, c->sr_mask);
        const __mmask16 carry = _mm512_cmplt_epu32_mask(_mm512_add_epi32(field, rr), rr);
        __m512i q = _mm512_srlv_epi32(sig, d);
        q = _mm512_mask_add_epi32(q, carry, q, c->one);
        const __m512i base = _mm512_slli_epi32(_mm512_max_epi32(k, _mm512_setzero_si512()), c->mbits);
        return _mm512_add_epi32(base, q);
    }
    /* normals of the target: integer rebias and round */
    __m512i nrm;
    if (mode == FPSIM_RNE) {
        const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(a, c->shift), c->one);
        nrm = _mm512_add_epi32(_mm512_add_epi32(a, c->near_add), lsb);
    } else {
        nrm = _mm512_sub_epi32(a, c->dir_sub);
        if (mode == FPSIM_RU)
            nrm = _mm512_mask_add_epi32(nrm, (__mmask16)~neg, nrm, c->away);
        else if (mode == FPSIM_RD)
            nrm = _mm512_mask_add_epi32(nrm, neg, nrm, c->away);
    }
    nrm = _mm512_srli_epi32(nrm, c->shift);
    /* subnormals and zero of the target: one float32 add in the mode */
    __m512 sum;
    if (mode == FPSIM_RNE)
        sum = _mm512_add_round_ps(_mm512_castsi512_ps(a), c->magic, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    else if (mode == FPSIM_RZ)
        sum = _mm512_add_round_ps(_mm512_castsi512_ps(a), c->magic, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    else {
        /* 0xEA: (x & sign) | M_bits = copysign(M, x) */
        const __m512 m = _mm512_castsi512_ps(
            _mm512_ternarylogic_epi32(x, _mm512_set1_epi32((int)0x80000000u), c->magic_bits, 0xEA));
        if (mode == FPSIM_RU)
            sum = _mm512_add_round_ps(_mm512_castsi512_ps(x), m, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
        else
            sum = _mm512_add_round_ps(_mm512_castsi512_ps(x), m, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        sum = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(sum), c->abs));
    }
    const __m512i sub = _mm512_sub_epi32(_mm512_castps_si512(sum), c->magic_bits);
    return _mm512_mask_mov_epi32(nrm, _mm512_cmplt_epu32_mask(a, c->thr), sub);
}

/* Full codes of 16 lanes. */
FPSIM_AVX512_INLINE __m512i codes16(const avx512_consts *c, __m512i x, __m512i r, uint32_t mode)
{
    const __m512i a = _mm512_and_si512(x, c->abs);
    const __mmask16 neg = _mm512_movepi32_mask(x);
    const __m512i mag = magnitude16(c, x, a, neg, r, mode);
    __m512i code = _mm512_mask_or_epi32(mag, neg, mag, c->sign_code);
    const __mmask16 special = _mm512_cmpge_epu32_mask(a, c->inf);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(a, c->inf);
    const __mmask16 exc = special | _mm512_cmpgt_epu32_mask(mag, c->max_mag);
    __m512i idx = _mm512_srli_epi32(x, 31);
    idx = _mm512_mask_add_epi32(idx, special, idx, c->two);
    idx = _mm512_mask_add_epi32(idx, nan, idx, c->two);
    return _mm512_mask_mov_epi32(code, exc, _mm512_permutexvar_epi32(idx, c->table));
}

FPSIM_AVX512_INLINE void round_loop(void *codes, const uint32_t *x, size_t n, const fpsim_spec *s,
                                    const uint32_t *rb, uint32_t mode, int wide)
{
    const avx512_consts c = consts_make(s, mode);
    uint8_t *o8 = codes;
    uint16_t *o16 = codes;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i xv = _mm512_loadu_si512((const void *)(x + i));
        const __m512i r = mode == FPSIM_SR ? _mm512_loadu_si512((const void *)(rb + i)) : _mm512_setzero_si512();
        const __m512i v = codes16(&c, xv, r, mode);
        if (wide)
            _mm256_storeu_si256((__m256i *)(o16 + i), _mm512_cvtepi32_epi16(v));
        else
            _mm_storeu_si128((__m128i *)(o8 + i), _mm512_cvtepi32_epi8(v));
    }
    if (i < n) {
        const __mmask16 k = (__mmask16)((1u << (n - i)) - 1u);
        const __m512i xv = _mm512_maskz_loadu_epi32(k, x + i);
        const __m512i r = mode == FPSIM_SR ? _mm512_maskz_loadu_epi32(k, rb + i) : _mm512_setzero_si512();
        const __m512i v = codes16(&c, xv, r, mode);
        if (wide)
            _mm512_mask_cvtepi32_storeu_epi16(o16 + i, k, v);
        else
            _mm512_mask_cvtepi32_storeu_epi8(o8 + i, k, v);
    }
}

/* codes[i] = fpsim_round_f32(x[i], s, rb[i]) for i < n (rb read only under SR), as bytes when
 * s->bits <= 8, else as halfwords. Only for specs that fpsim_convert_avx512_usable() accepts. */
FPSIM_AVX512 void fpsim_convert_avx512_f32(void *codes, const uint32_t *x, size_t n, const fpsim_spec *sp,
                                           const uint32_t *rb)
{
    const fpsim_spec s = *sp;
    const int wide = s.bits > 8;
#define FPSIM_CASE(MODE)                                                                                           \
    case MODE:                                                                                                     \
        if (wide)                                                                                                  \
            round_loop(codes, x, n, &s, rb, MODE, 1);                                                              \
        else                                                                                                       \
            round_loop(codes, x, n, &s, rb, MODE, 0);                                                              \
        break
    switch (s.round) {
        FPSIM_CASE(FPSIM_RNE);
        FPSIM_CASE(FPSIM_RZ);
        FPSIM_CASE(FPSIM_RU);
        FPSIM_CASE(FPSIM_RD);
    default:
        FPSIM_CASE(FPSIM_SR);
    }
#undef FPSIM_CASE
}

#else /* no AVX-512 build: the portable loops in convert_array.c do all the work */

int fpsim_convert_avx512_usable(const fpsim_spec *s)
{
    (void)s;
    return 0;
}

void fpsim_convert_avx512_f32(void *codes, const uint32_t *x, size_t n, const fpsim_spec *s, const uint32_t *rb)
{
    (void)codes, (void)x, (void)n, (void)s, (void)rb;
}

#endif
