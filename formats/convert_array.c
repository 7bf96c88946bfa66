/* convert_array.c: array conversions (f32/f64/bf16/f16 -> codes, codes -> f32/f64).
 *
 * Each hot loop calls the scalar core (fpsim_core.h) with the rounding mode and the rule set
 * (fpsim_spec_full_rules) as compile-time constants, on a local copy of the spec (so that stores
 * to the codes cannot alias it), and is compiled three times (AVX-512, AVX2, baseline x86-64)
 * with the best chosen at load time (gcc target_clones). The core is branch-free in the data, so
 * these loops vectorize; docs/formats.md records the loop sizes and the measured speed.
 *
 * Work is cut into tiles of TILE elements: a tile of bf16/f16 sources is first widened exactly to
 * float32 bits (f64 sources under FPSIM_SPEC_F64_VIA_F32 narrowed to float32 with RNE), under
 * stochastic rounding the tile's random words are drawn first (fpsim_sr_word layout: word
 * (i & 3) of the Philox block of counter i >> 2; 16 blocks at a time with AVX-512 where the CPU
 * has it), codes are computed as 32-bit words and then narrowed to bytes or halfwords. Specs
 * with plain rules under RNE/RZ/RU/RD/SR skip those loops on CPUs with AVX-512 F/BW/DQ/VL: the
 * tile goes through convert_avx512.c, which stores the codes directly (same bits; checked by
 * tests/formats/test_convert_paths.c). 8-bit codes decode through a 256-entry table read with
 * byte permutes (AVX-512 VBMI) or dword permutes (AVX-512F), or plain loads. Large
 * arrays are split over threads (fpsim_parallel_for); element i always uses random word
 * index0 + i, so neither threads nor tiles change any bit. */
#include <string.h>

#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "fpsim_parallel.h"

/* convert_avx512.c: the AVX-512 kernel for plain-rule specs (same bits as the loops below). */
int fpsim_convert_avx512_usable(const fpsim_spec *s);
void fpsim_convert_avx512_f32(void *codes, const uint32_t *x, size_t n, const fpsim_spec *s, const uint32_t *rb);

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(FPSIM_NO_CLONES)
#define FPSIM_HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define FPSIM_HOT
#endif

enum { TILE = 2048, GRAIN = 1 << 16 };

enum source { SRC_F32, SRC_F64, SRC_BF16, SRC_F16 };

/* ---- loads and stores through memcpy (no aliasing assumptions; compiled to plain moves) ---- */

static inline uint32_t load32(const unsigned char *p, size_t i)
{
    uint32_t v;
    memcpy(&v, p + 4 * i, 4);
    return v;
}

static inline uint64_t load64(const unsigned char *p, size_t i)
{
    uint64_t v;
    memcpy(&v, p + 8 * i, 8);
    return v;
}

/* ---- random words ------------------------------------------------------------------------- */

/* Philox blocks g0 + k for k < groups: rb[4k + w] = word w of block g0 + k (counter
 * {lo32(block), hi32(block), stream, 0}, key {lo32(seed), hi32(seed)}). */
FPSIM_HOT static void philox_blocks_scalar(uint32_t *rb, uint64_t g0, size_t groups, uint64_t seed, uint32_t stream)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    for (size_t k = 0; k < groups; k++) {
        const uint64_t g = g0 + k;
        const uint32_t ctr[4] = {(uint32_t)g, (uint32_t)(g >> 32), stream, 0u};
        fpsim_philox4x32_10(ctr, key, rb + 4 * k);
    }
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(FPSIM_NO_CLONES)
#include <immintrin.h>
#define FPSIM_HAVE_PHILOX_AVX512 1 /* AVX-512 kernels chosen at run time (Philox, table lookup) */

/* The same blocks, 16 at a time (the same Philox4x32-10 as fpsim_philox4x32_10: checked through
 * the array conversions against the scalar definition). Each counter word lives in the low half
 * of a 64-bit lane, 8 blocks per register, so that vpmuludq gives the whole 32x32 -> 64 product
 * in place: hi = product >> 32, lo = the product itself (its upper half is never read, since
 * vpmuludq and the final narrowing look only at low halves). */
__attribute__((target("avx512f"))) static void philox_blocks_avx512(uint32_t *rb, uint64_t g0, size_t groups,
                                                                     uint64_t seed, uint32_t stream)
{
    const __m512i m0 = _mm512_set1_epi64(0xD2511F53), m1 = _mm512_set1_epi64(0xCD9E8D57);
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    size_t k = 0;
    for (; k + 16 <= groups; k += 16) {
        const uint64_t g = g0 + k;
        const __m512i base_lo = _mm512_set1_epi32((int)(uint32_t)g);
        const __m512i lo16 = _mm512_add_epi32(base_lo, lane);
        /* a carry into the high word when the low word wraps inside these 16 blocks */
        const __mmask16 wrap = _mm512_cmplt_epu32_mask(lo16, base_lo);
        const __m512i hi16 = _mm512_mask_add_epi32(_mm512_set1_epi32((int)(uint32_t)(g >> 32)), wrap,
                                                   _mm512_set1_epi32((int)(uint32_t)(g >> 32)), _mm512_set1_epi32(1));
        __m512i c[2][4];
        for (int h = 0; h < 2; h++) {
            c[h][0] = _mm512_cvtepu32_epi64(h ? _mm512_extracti64x4_epi64(lo16, 1) : _mm512_castsi512_si256(lo16));
            c[h][1] = _mm512_cvtepu32_epi64(h ? _mm512_extracti64x4_epi64(hi16, 1) : _mm512_castsi512_si256(hi16));
            c[h][2] = _mm512_set1_epi64(stream);
            c[h][3] = _mm512_setzero_si512();
        }
        __m512i k0 = _mm512_set1_epi64((uint32_t)seed), k1 = _mm512_set1_epi64((uint32_t)(seed >> 32));
        const __m512i w0 = _mm512_set1_epi64(0x9E3779B9), w1 = _mm512_set1_epi64(0xBB67AE85);
        for (int round = 0; round < 10; round++) {
            for (int h = 0; h < 2; h++) {
                const __m512i p0 = _mm512_mul_epu32(c[h][0], m0);
                const __m512i p1 = _mm512_mul_epu32(c[h][2], m1);
                /* 0x96: a ^ b ^ c */
                c[h][0] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), c[h][1], k0, 0x96);
                c[h][2] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), c[h][3], k1, 0x96);
                c[h][1] = p1;
                c[h][3] = p0;
            }
            k0 = _mm512_add_epi64(k0, w0); /* only the low 32 bits are ever used */
            k1 = _mm512_add_epi64(k1, w1);
        }
        /* Low halves back to 16 words per register, then 4x16 words -> 16 blocks of 4 words. */
        __m512i v[4];
        for (int w = 0; w < 4; w++)
            v[w] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(c[0][w])),
                                      _mm512_cvtepi64_epi32(c[1][w]), 1);
        const __m512i t0 = _mm512_unpacklo_epi32(v[0], v[1]), t1 = _mm512_unpackhi_epi32(v[0], v[1]);
        const __m512i t2 = _mm512_unpacklo_epi32(v[2], v[3]), t3 = _mm512_unpackhi_epi32(v[2], v[3]);
        const __m512i u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
        const __m512i u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
        const __m512i a = _mm512_shuffle_i32x4(u0, u1, 0x44), b = _mm512_shuffle_i32x4(u2, u3, 0x44);
        const __m512i cc = _mm512_shuffle_i32x4(u0, u1, 0xEE), d = _mm512_shuffle_i32x4(u2, u3, 0xEE);
        _mm512_storeu_si512((void *)(rb + 4 * k), _mm512_shuffle_i32x4(a, b, 0x88));
        _mm512_storeu_si512((void *)(rb + 4 * k + 16), _mm512_shuffle_i32x4(a, b, 0xDD));
        _mm512_storeu_si512((void *)(rb + 4 * k + 32), _mm512_shuffle_i32x4(cc, d, 0x88));
        _mm512_storeu_si512((void *)(rb + 4 * k + 48), _mm512_shuffle_i32x4(cc, d, 0xDD));
    }
    philox_blocks_scalar(rb + 4 * k, g0 + k, groups - k, seed, stream);
}
#endif

/* rb[(first & 3) + i] = fpsim_sr_word(seed, stream, first + i) for i < len: whole Philox blocks
 * are written, so rb needs room for len + 6 words. */
static void sr_fill(uint32_t *rb, uint64_t seed, uint32_t stream, uint64_t first, size_t len)
{
    const size_t groups = ((size_t)(first & 3) + len + 3) / 4;
#ifdef FPSIM_HAVE_PHILOX_AVX512
    if (__builtin_cpu_supports("avx512f")) {
        philox_blocks_avx512(rb, first >> 2, groups, seed, stream);
        return;
    }
#endif
    philox_blocks_scalar(rb, first >> 2, groups, seed, stream);
}

/* ---- rounding kernels ------------------------------------------------------------------- */

/* Codes are computed into a tile of 32-bit words and narrowed to bytes or halfwords by a second
 * loop: a loop that computed and narrowed at once would work on 64 elements per iteration
 * (four 512-bit vectors for one of bytes) and spill its masks to the stack.
 *
 * One loop each; `mode` and `full` (fpsim_spec_full_rules) are constants at every call site
 * below, so after inlining each call is a loop specialised to one rounding mode, with or without
 * the rules that few policies use. */
#define FPSIM_INLINE static inline __attribute__((always_inline))

FPSIM_INLINE void loop_f32(uint32_t *out, const unsigned char *x, size_t n, const fpsim_spec *s,
                           const uint32_t *rb, uint32_t mode, uint32_t full)
{
    for (size_t i = 0; i < n; i++)
        out[i] = fpsim_round_f32_mode(load32(x, i), s, mode == FPSIM_SR ? rb[i] : 0u, mode, full);
}

FPSIM_INLINE void loop_f64(uint32_t *out, const unsigned char *x, size_t n, const fpsim_spec *s,
                           const uint32_t *rb, uint32_t mode, uint32_t full)
{
    for (size_t i = 0; i < n; i++)
        out[i] = fpsim_round_f64_once(load64(x, i), s, mode == FPSIM_SR ? rb[i] : 0u, mode, full);
}

/* The case list of a kernel: (mode, full rules) -> its specialised loop. */
#define FPSIM_MODE_CASES(LOOP)                                                                   \
    case 2 * FPSIM_RNE: LOOP(out, x, n, &s, rb, FPSIM_RNE, 0); break;                            \
    case 2 * FPSIM_RNE + 1: LOOP(out, x, n, &s, rb, FPSIM_RNE, 1); break;                        \
    case 2 * FPSIM_RNA: LOOP(out, x, n, &s, rb, FPSIM_RNA, 0); break;                            \
    case 2 * FPSIM_RNA + 1: LOOP(out, x, n, &s, rb, FPSIM_RNA, 1); break;                        \
    case 2 * FPSIM_RZ: LOOP(out, x, n, &s, rb, FPSIM_RZ, 0); break;                              \
    case 2 * FPSIM_RZ + 1: LOOP(out, x, n, &s, rb, FPSIM_RZ, 1); break;                          \
    case 2 * FPSIM_RU: LOOP(out, x, n, &s, rb, FPSIM_RU, 0); break;                              \
    case 2 * FPSIM_RU + 1: LOOP(out, x, n, &s, rb, FPSIM_RU, 1); break;                          \
    case 2 * FPSIM_RD: LOOP(out, x, n, &s, rb, FPSIM_RD, 0); break;                              \
    case 2 * FPSIM_RD + 1: LOOP(out, x, n, &s, rb, FPSIM_RD, 1); break;                          \
    case 2 * FPSIM_SR: LOOP(out, x, n, &s, rb, FPSIM_SR, 0); break;                              \
    default: LOOP(out, x, n, &s, rb, FPSIM_SR, 1); break

FPSIM_HOT static void round_f32(uint32_t *out, const unsigned char *x, size_t n, const fpsim_spec *sp,
                                const uint32_t *rb)
{
    const fpsim_spec s = *sp;
    switch (2 * s.round + fpsim_spec_full_rules(&s)) { FPSIM_MODE_CASES(loop_f32); }
}

/* float64 sources rounded once (policies that go through float32 take the f32 kernel). */
FPSIM_HOT static void round_f64(uint32_t *out, const unsigned char *x, size_t n, const fpsim_spec *sp,
                                const uint32_t *rb)
{
    const fpsim_spec s = *sp;
    switch (2 * s.round + fpsim_spec_full_rules(&s)) { FPSIM_MODE_CASES(loop_f64); }
}

#undef FPSIM_MODE_CASES

FPSIM_HOT static void narrow_u8(uint8_t *out, const uint32_t *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t)c[i];
}

FPSIM_HOT static void narrow_u16(uint16_t *out, const uint32_t *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (uint16_t)c[i];
}

/* bf16 / binary16 bits -> float32 bits, exact. */
FPSIM_HOT static void widen_bf16(uint32_t *out, const uint16_t *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = fpsim_bf16_to_f32_bits(h[i]);
}

FPSIM_HOT static void widen_f16(uint32_t *out, const uint16_t *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = fpsim_f16_to_f32_bits(h[i]);
}

/* float64 -> float32 bits, RNE (policies with FPSIM_SPEC_F64_VIA_F32). */
FPSIM_HOT static void narrow_f64(uint32_t *out, const unsigned char *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = fpsim_f64_to_f32_bits(load64(x, i));
}

/* ---- the threaded driver ------------------------------------------------------------------ */

typedef struct convert_job {
    void *codes;
    const void *x;
    enum source src;
    const fpsim_spec *spec;
    uint64_t seed;
    uint32_t stream;
    uint64_t index0;
    int avx512; /* fpsim_convert_avx512_usable(spec): float32 bits go through convert_avx512.c */
    int src16_rule; /* a 16-bit source whose NaNs the policy codes its own way (fpsim_src16_rule) */
    int src16_copy; /* ... by copying every element: the target is the source's own format */
} convert_job;

static uint32_t src_format(enum source src) { return src == SRC_BF16 ? FPSIM_BF16 : FPSIM_F16; }

static void store_code(void *codes, int wide, size_t i, uint32_t code)
{
    if (wide)
        ((uint16_t *)codes)[i] = (uint16_t)code;
    else
        ((uint8_t *)codes)[i] = (uint8_t)code;
}

/* Codes [pos, pos + len) of float64 NaN sources under FPSIM_SPEC_NAN_C10_SCALAR: the scalar
 * core's (fpsim_round_f64), where the float32 path above gave the float32 source's NaN. */
static void apply_f64_nan_rule(void *codes, int wide, const unsigned char *x, size_t pos, size_t len,
                               const fpsim_spec *s)
{
    for (size_t i = 0; i < len; i++) {
        const uint64_t b = load64(x, i);
        if ((b & 0x7FFFFFFFFFFFFFFFull) <= 0x7FF0000000000000ull)
            continue;
        store_code(codes, wide, pos + i, fpsim_round_f64(b, s, 0u));
    }
}

/* Codes [pos, pos + len) of 16-bit sources h[0 .. len) where fpsim_src16_rule decides them (NaN
 * sources only: the caller has coded every element by the float32 rule already). */
static void apply_src16_rule(void *codes, int wide, const uint16_t *h, size_t pos, size_t len, const fpsim_spec *s,
                             uint32_t src)
{
    for (size_t i = 0; i < len; i++) {
        uint32_t code;
        if (fpsim_src16_rule(s, src, h[i], &code))
            store_code(codes, wide, pos + i, code);
    }
}

static void convert_range(void *ctx, size_t begin, size_t end)
{
    const convert_job *job = ctx;
    const fpsim_spec *s = job->spec;
    const int wide = s->bits > 8;
    const int via_f32 = (s->flags & (FPSIM_SPEC_F64_VIA_F32 | FPSIM_SPEC_NAN_TORCHAO)) != 0;
    uint32_t widened[TILE];
    uint32_t codes32[TILE];
    uint32_t rb[TILE + 8];
    for (size_t pos = begin; pos < end; pos += TILE) {
        const size_t len = end - pos < TILE ? end - pos : TILE;
        const uint64_t first = job->index0 + pos;
        const uint32_t *rbits = rb;
        if (s->round == FPSIM_SR) {
            sr_fill(rb, job->seed, job->stream, first, len);
            rbits = rb + (first & 3);
        }
        const unsigned char *src;
        int f64 = 0;
        if (job->src16_copy) { /* the emulated cast returns its input: codes = source bits */
            memcpy((uint16_t *)job->codes + pos, (const uint16_t *)job->x + pos, 2 * len);
            continue;
        }
        if (job->src == SRC_BF16 || job->src == SRC_F16) {
            const uint16_t *h = (const uint16_t *)job->x + pos;
            if (job->src == SRC_BF16)
                widen_bf16(widened, h, len);
            else
                widen_f16(widened, h, len);
            src = (const unsigned char *)widened;
        } else if (job->src == SRC_F64 && via_f32) {
            narrow_f64(widened, (const unsigned char *)job->x + 8 * pos, len);
            src = (const unsigned char *)widened;
        } else {
            f64 = job->src == SRC_F64;
            src = (const unsigned char *)job->x + (f64 ? 8 : 4) * pos;
        }
        if (!f64 && job->avx512) {
            const size_t width = wide ? 2 : 1;
            fpsim_convert_avx512_f32((unsigned char *)job->codes + width * pos, (const uint32_t *)(const void *)src,
                                     len, s, rbits);
        } else {
            if (f64)
                round_f64(codes32, src, len, s, rbits);
            else
                round_f32(codes32, src, len, s, rbits);
            if (wide)
                narrow_u16((uint16_t *)job->codes + pos, codes32, len);
            else
                narrow_u8((uint8_t *)job->codes + pos, codes32, len);
        }
        if (job->src16_rule)
            apply_src16_rule(job->codes, wide, (const uint16_t *)job->x + pos, pos, len, s, src_format(job->src));
        if (job->src == SRC_F64 && (s->flags & FPSIM_SPEC_NAN_C10_SCALAR))
            apply_f64_nan_rule(job->codes, wide, (const unsigned char *)job->x + 8 * pos, pos, len, s);
    }
}

static fpsim_status check_spec(const fpsim_spec *s, const void *a, const void *b, size_t n)
{
    if (!s || s->format >= FPSIM_FORMAT_COUNT || s->round >= FPSIM_ROUND_COUNT || s->sr_bits < 1 ||
        s->sr_bits > 32)
        return fpsim_fail(FPSIM_EINVAL, "invalid spec (build it with fpsim_spec_make)");
    if (n > 0 && (!a || !b))
        return fpsim_fail(FPSIM_EINVAL, "NULL array with n = %zu", n);
    return FPSIM_OK;
}

static fpsim_status convert_any(void *codes, const void *x, enum source src, size_t n, const fpsim_spec *s,
                                uint64_t seed, uint32_t stream, uint64_t index0, int threads)
{
    fpsim_status st = check_spec(s, codes, x, n);
    if (st)
        return st;
    const fpsim_spec local = *s;
    const int src16 = src == SRC_BF16 || src == SRC_F16;
    const int rule = src16 && fpsim_src16_has_rule(&local, src_format(src));
    const int copy = rule && (local.flags & FPSIM_SPEC_SAME_FORMAT_COPY) && local.format == src_format(src);
    convert_job job = {codes, x, src, &local, seed, stream, index0, fpsim_convert_avx512_usable(&local), rule, copy};
    return fpsim_parallel_for(n, GRAIN, convert_range, &job, threads);
}

fpsim_status fpsim_convert_f32(void *codes, const float *x, size_t n, const fpsim_spec *s, uint64_t seed,
                               uint32_t stream, uint64_t index0, int threads)
{
    return convert_any(codes, x, SRC_F32, n, s, seed, stream, index0, threads);
}

fpsim_status fpsim_convert_f64(void *codes, const double *x, size_t n, const fpsim_spec *s, uint64_t seed,
                               uint32_t stream, uint64_t index0, int threads)
{
    return convert_any(codes, x, SRC_F64, n, s, seed, stream, index0, threads);
}

fpsim_status fpsim_convert_bf16(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s, uint64_t seed,
                                uint32_t stream, uint64_t index0, int threads)
{
    return convert_any(codes, x, SRC_BF16, n, s, seed, stream, index0, threads);
}

fpsim_status fpsim_convert_f16(void *codes, const uint16_t *x, size_t n, const fpsim_spec *s, uint64_t seed,
                               uint32_t stream, uint64_t index0, int threads)
{
    return convert_any(codes, x, SRC_F16, n, s, seed, stream, index0, threads);
}

/* ---- decoding ----------------------------------------------------------------------------- */

#ifdef FPSIM_HAVE_PHILOX_AVX512
/* A 256-entry table lookup without gathers: eight 32-entry two-register permutes (vpermt2d),
 * the one for the code's top three bits kept per lane. */
__attribute__((target("avx512f"))) static void lut8_avx512(unsigned char *y, const uint8_t *c, size_t n,
                                                            const uint32_t *lut)
{
    __m512i t[16];
    for (int j = 0; j < 16; j++)
        t[j] = _mm512_loadu_si512((const void *)(lut + 16 * j));
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i idx = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(c + i)));
        const __m512i top = _mm512_srli_epi32(idx, 5);
        __m512i r = _mm512_permutex2var_epi32(t[0], idx, t[1]);
        for (int p = 1; p < 8; p++) {
            const __mmask16 k = _mm512_cmpeq_epi32_mask(top, _mm512_set1_epi32(p));
            r = _mm512_mask_mov_epi32(r, k, _mm512_permutex2var_epi32(t[2 * p], idx, t[2 * p + 1]));
        }
        _mm512_storeu_si512((void *)(y + 4 * i), r);
    }
    for (; i < n; i++)
        memcpy(y + 4 * i, &lut[c[i]], 4);
}

/* The same lookup, 64 codes per step with byte permutes (AVX-512 VBMI), for tables whose entries
 * have their low 16 bits zero (every format of 8 bits or fewer: at most 7 mantissa bits, NaN
 * decoded as the quiet NaN): the two upper bytes of the 256 entries are two 256-byte tables of
 * four registers each, read with vpermi2b (128 entries; bit 7 of the code picks the pair), and
 * interleaved with zeros into float32 words by unpacks. The unpacks work inside 128-bit lanes,
 * so the codes are first permuted (vpermb) such that the words come out in memory order:
 * after the unpacks word t of lane L of output register j holds input byte 16L + 4j + t, so
 * that byte is loaded from code 16j + 4L + t. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static size_t lut8_vbmi(unsigned char *y, const uint8_t *c,
                                                                            size_t n, const uint32_t *lut)
{
    uint8_t b2[256], b3[256], order[64];
    for (int k = 0; k < 256; k++) {
        b2[k] = (uint8_t)(lut[k] >> 16);
        b3[k] = (uint8_t)(lut[k] >> 24);
    }
    for (int L = 0; L < 4; L++)
        for (int j = 0; j < 4; j++)
            for (int t = 0; t < 4; t++)
                order[16 * L + 4 * j + t] = (uint8_t)(16 * j + 4 * L + t);
    __m512i t2[4], t3[4];
    for (int q = 0; q < 4; q++) {
        t2[q] = _mm512_loadu_si512((const void *)(b2 + 64 * q));
        t3[q] = _mm512_loadu_si512((const void *)(b3 + 64 * q));
    }
    const __m512i perm = _mm512_loadu_si512((const void *)order);
    const __m512i zero = _mm512_setzero_si512();
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m512i idx = _mm512_permutexvar_epi8(perm, _mm512_loadu_si512((const void *)(c + i)));
        const __mmask64 top = _mm512_movepi8_mask(idx);
        const __m512i v2 = _mm512_mask_blend_epi8(top, _mm512_permutex2var_epi8(t2[0], idx, t2[1]),
                                                  _mm512_permutex2var_epi8(t2[2], idx, t2[3]));
        const __m512i v3 = _mm512_mask_blend_epi8(top, _mm512_permutex2var_epi8(t3[0], idx, t3[1]),
                                                  _mm512_permutex2var_epi8(t3[2], idx, t3[3]));
        const __m512i wlo = _mm512_unpacklo_epi8(v2, v3), whi = _mm512_unpackhi_epi8(v2, v3);
        _mm512_storeu_si512((void *)(y + 4 * i), _mm512_unpacklo_epi16(zero, wlo));
        _mm512_storeu_si512((void *)(y + 4 * i + 64), _mm512_unpackhi_epi16(zero, wlo));
        _mm512_storeu_si512((void *)(y + 4 * i + 128), _mm512_unpacklo_epi16(zero, whi));
        _mm512_storeu_si512((void *)(y + 4 * i + 192), _mm512_unpackhi_epi16(zero, whi));
    }
    return i;
}
#endif

/* Codes of 8 bits or fewer: a 256-entry table built from the scalar decoder, then a lookup. */
FPSIM_HOT static void decode_u8_f32(unsigned char *y, const uint8_t *c, size_t n, const fpsim_spec *sp)
{
    uint32_t lut[256];
    for (uint32_t k = 0; k < 256; k++)
        lut[k] = fpsim_decode_f32(k, sp);
#ifdef FPSIM_HAVE_PHILOX_AVX512
    uint32_t low = 0;
    for (uint32_t k = 0; k < 256; k++)
        low |= lut[k] & 0xFFFFu;
    if (low == 0 && __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw")) {
        const size_t done = lut8_vbmi(y, c, n, lut);
        for (size_t i = done; i < n; i++)
            memcpy(y + 4 * i, &lut[c[i]], 4);
        return;
    }
    if (__builtin_cpu_supports("avx512f")) {
        lut8_avx512(y, c, n, lut);
        return;
    }
#endif
    for (size_t i = 0; i < n; i++)
        memcpy(y + 4 * i, &lut[c[i]], 4);
}

FPSIM_HOT static void decode_u8_f64(unsigned char *y, const uint8_t *c, size_t n, const fpsim_spec *sp)
{
    uint64_t lut[256];
    for (uint32_t k = 0; k < 256; k++)
        lut[k] = fpsim_decode_f64(k, sp);
    for (size_t i = 0; i < n; i++)
        memcpy(y + 8 * i, &lut[c[i]], 8);
}

/* 16-bit codes: BF16 is the top half of a float32; F16 widens branch-free. */
FPSIM_HOT static void decode_u16_f32(unsigned char *y, const uint16_t *c, size_t n, const fpsim_spec *sp)
{
    if (sp->format == FPSIM_BF16) {
        for (size_t i = 0; i < n; i++) {
            const uint32_t v = fpsim_bf16_to_f32_bits(c[i]);
            memcpy(y + 4 * i, &v, 4);
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            const uint32_t v = fpsim_f16_to_f32_bits(c[i]);
            memcpy(y + 4 * i, &v, 4);
        }
    }
}

FPSIM_HOT static void decode_u16_f64(unsigned char *y, const uint16_t *c, size_t n, const fpsim_spec *sp)
{
    const fpsim_spec s = *sp;
    for (size_t i = 0; i < n; i++) {
        const uint64_t v = fpsim_decode_f64(c[i], &s);
        memcpy(y + 8 * i, &v, 8);
    }
}

typedef struct decode_job {
    void *y;
    const void *codes;
    int f64;
    const fpsim_spec *spec;
} decode_job;

static void decode_range(void *ctx, size_t begin, size_t end)
{
    const decode_job *job = ctx;
    const int wide = job->spec->bits > 8;
    unsigned char *y = (unsigned char *)job->y + (job->f64 ? 8 : 4) * begin;
    const size_t n = end - begin;
    if (wide) {
        const uint16_t *c = (const uint16_t *)job->codes + begin;
        if (job->f64)
            decode_u16_f64(y, c, n, job->spec);
        else
            decode_u16_f32(y, c, n, job->spec);
    } else {
        const uint8_t *c = (const uint8_t *)job->codes + begin;
        if (job->f64)
            decode_u8_f64(y, c, n, job->spec);
        else
            decode_u8_f32(y, c, n, job->spec);
    }
}

static fpsim_status decode_any(void *y, const void *codes, int f64, size_t n, const fpsim_spec *s, int threads)
{
    fpsim_status st = check_spec(s, y, codes, n);
    if (st)
        return st;
    const fpsim_spec local = *s;
    decode_job job = {y, codes, f64, &local};
    return fpsim_parallel_for(n, GRAIN, decode_range, &job, threads);
}

fpsim_status fpsim_decode_array_f32(float *y, const void *codes, size_t n, const fpsim_spec *s, int threads)
{
    return decode_any(y, codes, 0, n, s, threads);
}

fpsim_status fpsim_decode_array_f64(double *y, const void *codes, size_t n, const fpsim_spec *s, int threads)
{
    return decode_any(y, codes, 1, n, s, threads);
}
