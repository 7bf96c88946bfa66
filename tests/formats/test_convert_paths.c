/* test_convert_paths.c: the array conversions (fpsim_convert_f32/bf16/f16, whatever kernel they
 * pick on this CPU: the AVX-512 kernel of convert_avx512.c for plain-rule specs, the vectorized
 * loops of convert_array.c otherwise) give, element by element, the bits of the scalar core
 * fpsim_round_f32 with the random word fpsim_sr_word(seed, stream, index0 + i).
 *
 * Every format, every policy of it, every rounding mode, SR with the default and with 3 and 32
 * random bits; inputs: every (sign, exponent, top 7 mantissa bits) pattern with five choices of
 * the low 16 bits (ties, just above and below them, zero, all ones), the special values
 * (+-0, +-Inf, quiet and signalling NaNs with several payloads, the float32 subnormal and normal
 * limits) and random bit patterns; lengths and start indices that are not multiples of 16 or 4;
 * bf16 and f16 sources over all 65536 patterns; and the same with MXCSR.DAZ set (the AVX-512
 * kernel must then step aside). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "test_util.h"

int fpsim_convert_avx512_usable(const fpsim_spec *s); /* formats/convert_avx512.c */

static test_counter tc = TEST_COUNTER_INIT("convert paths vs fpsim_round_f32");

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t make_inputs(uint32_t *x, size_t random_count)
{
    size_t n = 0;
    static const uint32_t low[5] = {0x0000u, 0x8000u, 0x7FFFu, 0x8001u, 0xFFFFu};
    for (uint32_t hi = 0; hi < 0x10000u; hi++)
        for (int j = 0; j < 5; j++)
            x[n++] = (hi << 16) | low[j];
    static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
                                        0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FBFFFFFu, 0x7FFFFFFFu,
                                        0xFFFFFFFFu, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu,
                                        0x00800000u, 0x80800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x00400000u};
    for (size_t j = 0; j < sizeof specials / sizeof specials[0]; j++)
        x[n++] = specials[j];
    uint64_t seed = 12345;
    for (size_t j = 0; j < random_count; j++)
        x[n++] = (uint32_t)splitmix64(&seed);
    return n;
}

/* Convert x[0..n) with index0 and compare with the scalar core. */
static void check_f32(const fpsim_spec *s, const char *what, const uint32_t *x, size_t n, uint64_t index0,
                      void *codes)
{
    const uint64_t seed = 0x0123456789ABCDEFull;
    const uint32_t stream = 7;
    if (fpsim_convert_f32(codes, (const float *)(const void *)x, n, s, seed, stream, index0, 1) != FPSIM_OK) {
        test_fail(&tc, "%s: fpsim_convert_f32 failed: %s", what, fpsim_last_error());
        return;
    }
    for (size_t i = 0; i < n; i++) {
        const uint32_t r = s->round == FPSIM_SR ? fpsim_sr_word(seed, stream, index0 + i) : 0u;
        const uint32_t want = fpsim_round_f32(x[i], s, r);
        const uint32_t got = s->bits > 8 ? ((const uint16_t *)codes)[i] : ((const uint8_t *)codes)[i];
        TEST_CHECK_EQ_HEX(&tc, got, want, "%s x=0x%08x index=%llu", what, x[i], (unsigned long long)(index0 + i));
    }
}

/* All 65536 bf16 or f16 patterns, widened exactly, against the scalar core. */
static void check_half(const fpsim_spec *s, const char *what, int f16, void *codes)
{
    uint16_t h[65536];
    for (uint32_t i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    const uint64_t seed = 99, index0 = 3;
    const fpsim_status st = f16 ? fpsim_convert_f16(codes, h, 65536, s, seed, 1, index0, 1)
                                : fpsim_convert_bf16(codes, h, 65536, s, seed, 1, index0, 1);
    if (st != FPSIM_OK) {
        test_fail(&tc, "%s: half conversion failed: %s", what, fpsim_last_error());
        return;
    }
    for (uint32_t i = 0; i < 65536; i++) {
        const uint32_t xb = f16 ? fpsim_f16_to_f32_bits(i) : fpsim_bf16_to_f32_bits(i);
        const uint32_t r = s->round == FPSIM_SR ? fpsim_sr_word(seed, 1, index0 + i) : 0u;
        uint32_t want = fpsim_round_f32(xb, s, r);
        (void)fpsim_src16_rule(s, f16 ? FPSIM_F16 : FPSIM_BF16, i, &want); /* NaN and copy rules */
        const uint32_t got = s->bits > 8 ? ((const uint16_t *)codes)[i] : ((const uint8_t *)codes)[i];
        TEST_CHECK_EQ_HEX(&tc, got, want, "%s %s=0x%04x", what, f16 ? "f16" : "bf16", i);
    }
}

/* fpsim_decode_array_f32 (table lookups: vpermi2b with AVX-512 VBMI, vpermt2d with AVX-512F,
 * plain C otherwise) against fpsim_decode_f32 code by code: every code at every position of a
 * 64-code step, a length that leaves a tail, and a start that is not 64-byte aligned. */
static void check_decode(const fpsim_spec *s, const char *what)
{
    enum { N = 64 * 256 + 37 };
    static uint8_t c[N + 1];
    static float y[N];
    for (size_t i = 0; i < N + 1; i++)
        c[i] = (uint8_t)(i * 7 + i / 256);
    if (fpsim_decode_array_f32(y, c + 1, N, s, 1) != FPSIM_OK) {
        test_fail(&tc, "%s: decode failed: %s", what, fpsim_last_error());
        return;
    }
    for (size_t i = 0; i < N; i++) {
        uint32_t got;
        memcpy(&got, &y[i], 4);
        TEST_CHECK_EQ_HEX(&tc, got, fpsim_decode_f32(c[i + 1], s), "%s decode code=0x%02x position=%zu", what,
                          c[i + 1], i);
    }
}

int main(void)
{
    const size_t random_count = 1u << 18;
    uint32_t *x = malloc((5u * 65536u + 64u + random_count) * sizeof *x);
    void *codes = malloc((5u * 65536u + 64u + random_count) * 2);
    if (!x || !codes)
        return 1;
    const size_t n = make_inputs(x, random_count);
    int specs = 0, fast = 0;
    for (int f = 0; f < FPSIM_FORMAT_COUNT; f++) {
        for (int p = -1; p < fpsim_policy_count(); p++) {
            const char *policy = p < 0 ? NULL : fpsim_policy_name(p);
            for (int mode = FPSIM_RNE; mode < FPSIM_ROUND_COUNT; mode++) {
                static const int sr_bits_list[3] = {0, 3, 32};
                for (int b = 0; b < (mode == FPSIM_SR ? 3 : 1); b++) {
                    fpsim_spec s;
                    if (fpsim_spec_make(&s, (fpsim_format_id)f, policy, (fpsim_round)mode, sr_bits_list[b]) !=
                        FPSIM_OK)
                        continue; /* this policy does not apply to this format */
                    char what[160];
                    snprintf(what, sizeof what, "%s policy=%s %s sr_bits=%d%s", fpsim_format_get((fpsim_format_id)f)->name,
                             policy ? policy : "(default)", fpsim_round_name((fpsim_round)mode), s.sr_bits,
                             fpsim_convert_avx512_usable(&s) ? " [avx512]" : "");
                    specs++;
                    fast += fpsim_convert_avx512_usable(&s);
                    /* the default policy gets every input; the others a part (a tail that is not a
                     * multiple of 16, a start index that is not a multiple of 4) */
                    if (p < 0)
                        check_f32(&s, what, x, n, 5, codes);
                    else
                        check_f32(&s, what, x + 3 * 65536 + 11, n - 3 * 65536 - 11 - (random_count / 2), 1u << 30 | 2,
                                  codes);
                    if (p < 0 && mode == FPSIM_RNE && s.bits <= 8)
                        check_decode(&s, what);
                    if (p < 0 && (f == FPSIM_E4M3 || f == FPSIM_E2M1 || f == FPSIM_BF16)) {
                        check_half(&s, what, 0, codes);
                        check_half(&s, what, 1, codes);
                    }
                }
            }
        }
    }
#if defined(__x86_64__)
    /* With denormals-are-zero set the AVX-512 kernel must not be used (its float32 add would read
     * float32 subnormal inputs as zero); the result must still be the core's. */
    const unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | 0x40u);
    fpsim_spec s;
    if (fpsim_spec_make(&s, FPSIM_BF16, NULL, FPSIM_RNE, 0) == FPSIM_OK) {
        TEST_CHECK(&tc, !fpsim_convert_avx512_usable(&s), "%s", "AVX-512 kernel chosen under MXCSR.DAZ");
        check_f32(&s, "bf16 rne under DAZ", x, 65536 * 5, 0, codes);
    }
    _mm_setcsr(csr);
#endif
    printf("%d specs checked, %d of them on the AVX-512 kernel (this CPU %s it)\n", specs, fast,
           fast ? "has" : "lacks");
    free(x);
    free(codes);
    return test_summary(&tc);
}
