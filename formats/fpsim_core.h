/* fpsim_core.h: the scalar conversion core, one round-and-pack for every format and policy.
 *
 * Compiled by gcc for the CPU emulators and by nvcc for the GPU kernels (every function is
 * FPSIM_HD: static inline, __host__ __device__ under nvcc). Integer-only, no globals, no tables:
 * everything that decides bits comes in through the fpsim_spec (format fields plus the policy's
 * special-value codes) and, for stochastic rounding, through the caller's random word.
 *
 * Data-dependent choices are written as selects (c ? a : b on values that are all computed), so
 * that an array loop over this code if-converts and vectorizes. The only `if`s test spec fields
 * (loop invariants): the rounding mode, the E8M0 rules, the f64-via-f32 policy flag.
 *
 * The rule, for a finite float32 x (the f64 path is the same with 64-bit fields, rounded once):
 *   1. unpack: sign, magnitude, unbiased exponent e (FP32 subnormals: e = -126, no hidden bit),
 *      24-bit significand sig with the hidden bit;
 *   2. dropped bits d = 23 - mbits, plus (emin - e) more when the result is subnormal in the
 *      target (emin = 1 - bias, the exponent of the smallest normal);
 *   3. round sig to a multiple of 2^d: RNE adds 2^(d-1) - 1 + (the LSB of the kept significand,
 *      hidden bit included), RNA adds 2^(d-1), RZ nothing, RU/RD 2^d - 1 when rounding away
 *      from zero; SR adds the top sr_bits of the random word at the top of the discarded field
 *      and truncates (gpu-numerics.md §1.2); q = the kept significand, hidden bit included;
 *   4. pack: magnitude code = (max(e - emin, 0) << mbits) + q: the hidden bit (and a carry out
 *      of the significand) moves into the exponent field by the addition;
 *   5. overflow: a magnitude code above the largest finite code gives the policy's overflow
 *      code, except under directed rounding toward zero (IEEE: RZ, RU of a negative, RD of a
 *      positive value), which gives +-max;
 *   6. zeros, E8M0 zero/negative rules, Inf and NaN: the policy's codes (fpsim_spec).
 * E8M0 needs no separate rounding: with bias 127 and no mantissa bits, step 3 rounds with the
 * implicit bit as LSB and step 4 gives code = exponent field + round bit, which is torch's and
 * ml_dtypes' rule including FP32 subnormals (code = RNE(x / 2^-126)). */
#ifndef FPSIM_CORE_H
#define FPSIM_CORE_H

#include <stdint.h>
#include <string.h>

#include "fpsim_core_types.h"

/* ---- small branch-free helpers ------------------------------------------------------------ */

FPSIM_HD int32_t fpsim_core_max_i32(int32_t a, int32_t b) { return a > b ? a : b; }
FPSIM_HD uint32_t fpsim_core_min_u32(uint32_t a, uint32_t b) { return a < b ? a : b; }
FPSIM_HD uint32_t fpsim_core_max_u32(uint32_t a, uint32_t b) { return a > b ? a : b; }

/* Increment that rounds a significand to a multiple of 2^dd (2 <= dd <= 32) under a
 * deterministic mode; `neg` is the sign used by directed rounding. RNE's tie rule uses the LSB of
 * the kept significand, hidden bit included. */
FPSIM_HD uint32_t fpsim_core_round_increment32(uint32_t mode, uint32_t sig, uint32_t dd, uint32_t neg)
{
    const uint32_t half_m1 = 0xFFFFFFFFu >> (33u - dd); /* 2^(dd-1) - 1 */
    const uint32_t away = 0xFFFFFFFFu >> (32u - dd);    /* 2^dd - 1: any nonzero discarded bits carry */
    const uint32_t lsb = (sig >> dd) & 1u;
    return mode == FPSIM_RNE   ? half_m1 + lsb
           : mode == FPSIM_RNA ? half_m1 + 1u
           : mode == FPSIM_RU  ? (neg ? 0u : away)
           : mode == FPSIM_RD  ? (neg ? away : 0u)
                               : 0u; /* FPSIM_RZ */
}

/* The same for 64-bit significands (1 <= dd <= 63). */
FPSIM_HD uint64_t fpsim_core_round_increment64(uint32_t mode, uint64_t sig, uint32_t dd, uint32_t neg)
{
    const uint64_t half = (uint64_t)1 << (dd - 1);
    const uint64_t away = ((uint64_t)1 << dd) - 1u;
    const uint64_t lsb = (sig >> dd) & 1u;
    return mode == FPSIM_RNE   ? half - 1u + lsb
           : mode == FPSIM_RNA ? half
           : mode == FPSIM_RU  ? (neg ? 0u : away)
           : mode == FPSIM_RD  ? (neg ? away : 0u)
                               : 0u;
}

/* Steps 4-6 shared by the f32 and f64 paths: pack (base, q) and apply overflow and zero rules.
 * `mag` is the packed magnitude code (above max_mag: it overflowed). */
FPSIM_HD uint32_t fpsim_core_pack(const fpsim_spec *s, uint32_t mode, uint32_t sign, uint32_t mag,
                                  uint32_t full_rules)
{
    /* Sign-dependent codes as bit masks (x ^ ((x ^ y) & m)), one instruction each in a vector
     * loop. Only E8M0 is unsigned, and it always takes the full rules. */
    const uint32_t neg = full_rules ? sign & s->is_signed : sign;
    const uint32_t neg_mask = 0u - neg, sign_mask = 0u - sign;
    const uint32_t sign_code = neg_mask & (1u << (s->bits - 1));
    /* IEEE 754 directed rounding: overflow toward zero stops at the largest finite value. */
    const uint32_t toward_zero = (mode == FPSIM_RZ) | ((mode == FPSIM_RU) & neg) |
                                 ((mode == FPSIM_RD) & (neg ^ 1u));
    const uint32_t ovf_policy = s->ovf_pos ^ ((s->ovf_pos ^ s->ovf_neg) & sign_mask);
    const uint32_t ovf_code = toward_zero ? (sign_code | s->max_mag) : ovf_policy;
    uint32_t code = mag > s->max_mag ? ovf_code : (sign_code | mag);
    /* Formats or implementations without -0 (FNUZ, DeepGEMM's reference) write +0. */
    if (full_rules) {
        const uint32_t unsigned_zero = (s->flags & FPSIM_SPEC_UNSIGNED_ZERO) != 0;
        code = (unsigned_zero & (mag == 0)) ? 0u : code;
    }
    return code;
}

/* The policy's code for an Inf or NaN input (a = magnitude bits above 0x7F800000 or equal). */
FPSIM_HD uint32_t fpsim_core_special(const fpsim_spec *s, uint32_t is_inf, uint32_t sign, uint32_t nan_code)
{
    const uint32_t sign_mask = 0u - sign;
    const uint32_t inf_code = s->inf_pos ^ ((s->inf_pos ^ s->inf_neg) & sign_mask);
    return is_inf ? inf_code : nan_code;
}

/* ---- float32 -> code ---------------------------------------------------------------------- */

/* 1 if the spec uses rules that most policies do not: E8M0 zero/negative/grid rules, NaN codes
 * that depend on the payload, +0 for zero results or for -0 inputs. Array loops pass the value
 * as a constant `full_rules` to fpsim_round_f32_mode, so the common loop carries none of them. */
FPSIM_HD uint32_t fpsim_spec_full_rules(const fpsim_spec *s)
{
    return s->specials == FPSIM_SPECIALS_E8M0 ||
           (s->flags & (FPSIM_SPEC_NAN_PAYLOAD | FPSIM_SPEC_NAN_TORCHAO | FPSIM_SPEC_UNSIGNED_ZERO |
                        FPSIM_SPEC_NEGZERO_IN_POS)) != 0;
}

/* fpsim_round_f32 with the rounding mode passed separately, so that array loops can pass a
 * constant and let the compiler drop the other modes; full_rules = fpsim_spec_full_rules(s), or
 * a constant 0 when the caller knows the spec needs none of those rules. */
FPSIM_HD uint32_t fpsim_round_f32_mode(uint32_t x, const fpsim_spec *s, uint32_t rbits, uint32_t mode,
                                       uint32_t full_rules)
{
    /* 1. Unpack. FP32 subnormals have exponent field 1 and no hidden bit. */
    const uint32_t sign = x >> 31;
    const uint32_t a = x & 0x7FFFFFFFu;
    const uint32_t ef = a >> 23;
    const uint32_t sig = (a & 0x7FFFFFu) | (ef != 0 ? 0x800000u : 0u);
    const uint32_t mbits = s->mbits;
    /* k = e - emin (e = unbiased exponent, emin = 1 - bias the target's smallest normal). */
    const int32_t k = (int32_t)fpsim_core_max_u32(ef, 1) - (128 - (int32_t)s->bias);

    /* 2. Bits to drop: wider when the result is subnormal in the target (k < 0). */
    const int32_t d_normal = 23 - (int32_t)mbits;
    const uint32_t d = (uint32_t)fpsim_core_max_i32(d_normal - k, d_normal); /* >= 13 */

    /* 3. Round the significand to a multiple of 2^d. */
    uint32_t q;
    if (mode == FPSIM_SR) {
        /* q = floor((sig + r * 2^(d-32)) / 2^d) with r = the top sr_bits of rbits: r added at the
         * top of the discarded field, then truncation. In 32-bit words: the kept part sig >> d
         * plus the carry out of (discarded field aligned to the top of a word) + r. For d > 32
         * the word is sig >> (d - 32) (the lower discarded bits can never carry, since r is an
         * integer) and the kept part is 0. */
        const uint32_t r = rbits & (0xFFFFFFFFu << (32u - s->sr_bits));
        const uint32_t ds = fpsim_core_min_u32(d, 56); /* beyond 56 every result is 0 */
        const uint32_t up = sig << (32u - fpsim_core_min_u32(ds, 32));
        const uint32_t down = sig >> (fpsim_core_max_u32(ds, 32) - 32u);
        const uint32_t field = ds <= 32 ? up : down;
        q = (sig >> fpsim_core_min_u32(ds, 31)) + (uint32_t)(field + r < r);
    } else {
        /* Capping d at 26 is exact: sig < 2^24, so for d >= 25 nearest modes give 0 and directed
         * modes give 0 or 1 exactly as with the true d. */
        const uint32_t dd = fpsim_core_min_u32(d, 26);
        const uint32_t inc = fpsim_core_round_increment32(mode, sig, dd, full_rules ? sign & s->is_signed : sign);
        q = (sig + inc) >> dd;
    }

    /* 4-5. Pack, overflow, zeros. */
    const uint32_t mag = ((uint32_t)fpsim_core_max_i32(k, 0) << mbits) + q; /* < 2^19 */
    uint32_t code = fpsim_core_pack(s, mode, sign, mag, full_rules);
    if (full_rules) {
        const uint32_t negzero_in_pos = (s->flags & FPSIM_SPEC_NEGZERO_IN_POS) != 0;
        code = (negzero_in_pos & (x == 0x80000000u)) ? 0u : code;
    }

    /* 6. E8M0 rules for zero, tiny and negative inputs. */
    if (full_rules && s->specials == FPSIM_SPECIALS_E8M0) {
        const uint32_t true_grid = (s->flags & FPSIM_SPEC_E8M0_TRUE_GRID) != 0;
        const uint32_t neg_nan = (s->flags & FPSIM_SPEC_E8M0_NEG_NAN) != 0;
        code = (true_grid & (a != 0) & (a <= 0x00400000u)) ? 0u : code;
        code = a == 0 ? s->e8m0_zero : code;
        code = (neg_nan & sign) ? s->e8m0_neg : code;
    }

    /* 7. Inf and NaN. */
    uint32_t nan_code = s->nan_pos ^ ((s->nan_pos ^ s->nan_neg) & (0u - sign));
    if (full_rules && (s->flags & FPSIM_SPEC_NAN_PAYLOAD)) {
        const uint32_t payload = (a & 0x7FFFFFu) >> (23u - mbits);
        nan_code |= payload | (uint32_t)(payload == 0);
    }
    if (full_rules && (s->flags & FPSIM_SPEC_NAN_TORCHAO)) {
        /* torchao f32_to_fpx_unpacked sends NaN down its normal branch: add
         * ((bias - 127) << 23) + 2^(22 - mbits) - 1 + (mantissa LSB), shift, keep 8 bits, OR in
         * the sign (pytorch/ao torchao/prototype/custom_fp_utils.py). */
        uint32_t t = a + ((uint32_t)((int32_t)s->bias - 127) << 23) + ((1u << (22u - mbits)) - 1u);
        t += (a >> (23u - mbits)) & 1u;
        nan_code = ((t >> (23u - mbits)) & 0xFFu) | (sign << (s->bits - 1));
    }
    const uint32_t special = fpsim_core_special(s, a == 0x7F800000u, sign, nan_code);
    return a >= 0x7F800000u ? special : code;
}

/* float32 (given as its bits) -> code under spec s. rbits is used only when s->round == FPSIM_SR. */
FPSIM_HD uint32_t fpsim_round_f32(uint32_t xbits, const fpsim_spec *s, uint32_t rbits)
{
    return fpsim_round_f32_mode(xbits, s, rbits, s->round, 1);
}

/* ---- float64 -> code ---------------------------------------------------------------------- */

/* float64 bits -> float32 bits rounded to nearest even (a C cast; the numpy astype / torch
 * first step of policies with FPSIM_SPEC_F64_VIA_F32). */
FPSIM_HD uint32_t fpsim_f64_to_f32_bits(uint64_t x)
{
    double xd;
    float xf;
    uint32_t xb;
    memcpy(&xd, &x, sizeof xd);
    xf = (float)xd;
    memcpy(&xb, &xf, sizeof xb);
    return xb;
}

/* float64 -> code rounded once, whatever FPSIM_SPEC_F64_VIA_F32 says (fpsim_round_f64 applies
 * that flag); mode and full_rules as in fpsim_round_f32_mode. */
FPSIM_HD uint32_t fpsim_round_f64_once(uint64_t x, const fpsim_spec *s, uint32_t rbits, uint32_t mode,
                                       uint32_t full_rules)
{
    /* 1. Unpack. */
    const uint32_t sign = (uint32_t)(x >> 63);
    const uint64_t a = x & 0x7FFFFFFFFFFFFFFFull;
    const uint32_t ef = (uint32_t)(a >> 52);
    const uint64_t sig = (a & 0xFFFFFFFFFFFFFull) | ((uint64_t)(ef != 0) << 52);
    const int32_t e = (int32_t)(ef + (ef == 0)) - 1023;
    const int32_t emin = 1 - (int32_t)s->bias;
    const uint32_t mbits = s->mbits;

    /* 2. Bits to drop (>= 42). */
    const uint32_t d = 52u - mbits + (uint32_t)fpsim_core_max_i32(emin - e, 0);

    /* 3. Round once. */
    uint64_t q;
    if (mode == FPSIM_SR) {
        /* d >= 42 > 32: q = floor((floor(sig / 2^(d-32)) + r) / 2^32), exact as in the f32 path. */
        const uint32_t r = rbits & (0xFFFFFFFFu << (32u - s->sr_bits));
        const uint32_t sh = fpsim_core_min_u32(d - 32u, 63);
        q = ((sig >> sh) + r) >> 32;
    } else {
        /* sig < 2^53: capping d at 55 is exact (see the f32 path). */
        const uint32_t dd = fpsim_core_min_u32(d, 55);
        q = (sig + fpsim_core_round_increment64(mode, sig, dd, sign & s->is_signed)) >> dd;
    }

    /* 4-5. Pack (the exponent is clamped first so that the code fits 32 bits: anything that
     * large overflows every format). q <= 2^(mbits + 1). */
    const int32_t base = fpsim_core_max_i32(e - emin, 0);
    const uint32_t mag = ((uint32_t)(base < 4096 ? base : 4096) << mbits) + (uint32_t)q;
    uint32_t code = fpsim_core_pack(s, mode, sign, mag, full_rules);
    if (full_rules) {
        const uint32_t negzero_in_pos = (s->flags & FPSIM_SPEC_NEGZERO_IN_POS) != 0;
        code = (negzero_in_pos & (x == 0x8000000000000000ull)) ? 0u : code;
    }

    /* 6. E8M0 rules (2^-127 is 0x3800000000000000). */
    if (full_rules && s->specials == FPSIM_SPECIALS_E8M0) {
        const uint32_t true_grid = (s->flags & FPSIM_SPEC_E8M0_TRUE_GRID) != 0;
        const uint32_t neg_nan = (s->flags & FPSIM_SPEC_E8M0_NEG_NAN) != 0;
        code = (true_grid & (a != 0) & (a <= 0x3800000000000000ull)) ? 0u : code;
        code = a == 0 ? s->e8m0_zero : code;
        code = (neg_nan & sign) ? s->e8m0_neg : code;
    }

    /* 7. Inf and NaN. */
    uint32_t nan_code = sign ? s->nan_neg : s->nan_pos;
    if (full_rules && (s->flags & FPSIM_SPEC_NAN_PAYLOAD)) {
        const uint32_t payload = (uint32_t)((a & 0xFFFFFFFFFFFFFull) >> (52u - mbits));
        nan_code |= payload | (uint32_t)(payload == 0);
    }
    code = a == 0x7FF0000000000000ull ? (sign ? s->inf_neg : s->inf_pos) : code;
    code = a > 0x7FF0000000000000ull ? nan_code : code;
    return code;
}

/* float64 (given as its bits) -> code under spec s, rounded once (unless the policy converts
 * through float32 first, FPSIM_SPEC_F64_VIA_F32). */
FPSIM_HD uint32_t fpsim_round_f64(uint64_t xbits, const fpsim_spec *s, uint32_t rbits)
{
    if ((s->flags & FPSIM_SPEC_NAN_C10_SCALAR) && (xbits & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull)
        return 0x7FC0u; /* c10::BFloat16's NaN, sign dropped */
    if (s->flags & (FPSIM_SPEC_F64_VIA_F32 | FPSIM_SPEC_NAN_TORCHAO))
        return fpsim_round_f32_mode(fpsim_f64_to_f32_bits(xbits), s, rbits, s->round, 1);
    return fpsim_round_f64_once(xbits, s, rbits, s->round, 1);
}

/* ---- code -> float32 / float64 ------------------------------------------------------------ */

/* Significand of a code normalized into a 16-bit window (bit 15 = leading one) and the number
 * of places it moved (subnormal codes); four selects instead of a count-leading-zeros loop. */
FPSIM_HD uint32_t fpsim_core_normalize16(uint32_t sig, uint32_t *shift)
{
    uint32_t lz = 0, t;
    t = sig < 0x100u;  sig = t ? sig << 8 : sig;  lz += t ? 8u : 0u;
    t = sig < 0x1000u; sig = t ? sig << 4 : sig;  lz += t ? 4u : 0u;
    t = sig < 0x4000u; sig = t ? sig << 2 : sig;  lz += t ? 2u : 0u;
    t = sig < 0x8000u; sig = t ? sig << 1 : sig;  lz += t ? 1u : 0u;
    *shift = lz;
    return sig;
}

/* Code -> (sign, unbiased exponent, 15 fraction bits, class) for the decoders. */
typedef struct fpsim_core_fields {
    uint32_t sign, frac15, is_zero, is_inf, is_nan;
    int32_t exp;
    uint32_t payload; /* NaN mantissa bits of 16-bit IEEE formats (decoded exactly) */
} fpsim_core_fields;

FPSIM_HD fpsim_core_fields fpsim_core_unpack_code(uint32_t code, const fpsim_spec *s)
{
    fpsim_core_fields f;
    const uint32_t mbits = s->mbits;
    const uint32_t magbits = (uint32_t)s->bits - s->is_signed;
    const uint32_t mag = code & ((1u << magbits) - 1u);
    const uint32_t ef = mag >> mbits;
    const uint32_t man = mag & ((1u << mbits) - 1u);
    const uint32_t ef_top = (1u << s->ebits) - 1u;
    uint32_t lz;
    const uint32_t sig = fpsim_core_normalize16((man | ((uint32_t)(ef != 0) << mbits)) << (15u - mbits), &lz);
    f.sign = s->is_signed ? (code >> (s->bits - 1)) & 1u : 0u;
    f.frac15 = sig & 0x7FFFu;
    f.exp = (int32_t)(ef + (ef == 0)) - (int32_t)s->bias - (int32_t)lz;
    f.is_zero = mag == 0;
    f.payload = man;
    f.is_inf = 0;
    f.is_nan = 0;
    if (s->specials == FPSIM_SPECIALS_IEEE) {
        f.is_inf = (ef == ef_top) & (man == 0);
        f.is_nan = (ef == ef_top) & (man != 0);
    } else if (s->specials == FPSIM_SPECIALS_FN) {
        f.is_nan = mag == (1u << magbits) - 1u;
    } else if (s->specials == FPSIM_SPECIALS_FNUZ) {
        f.is_nan = code == (1u << (s->bits - 1));
        f.is_zero = code == 0;
    } else if (s->specials == FPSIM_SPECIALS_E8M0) {
        /* 2^(code - 127); code 0 is 2^-127 (not zero); 0xFF is NaN. */
        f.is_nan = code == 0xFFu;
        f.is_zero = 0;
        f.exp = (int32_t)code - 127;
        f.frac15 = 0;
    }
    return f;
}

/* code -> float32 bits. NaN codes of 8-bit and smaller formats give the quiet NaN with the code's
 * sign (ml_dtypes 0.6 astype(float32)); NaN codes of BF16/F16 keep their payload exactly. */
FPSIM_HD uint32_t fpsim_decode_f32(uint32_t code, const fpsim_spec *s)
{
    if (s->format == FPSIM_BF16)
        return (code & 0xFFFFu) << 16; /* exact, subnormals and NaN payloads included */
    const fpsim_core_fields f = fpsim_core_unpack_code(code, s);
    const uint32_t sbit = f.sign << 31;
    /* Every format except BF16 has its smallest subnormal >= 2^-126 or is E8M0: 2^-127 is the
     * only FP32 subnormal result (E8M0 code 0 = 0x00400000). */
    const int32_t be = f.exp + 127;
    uint32_t out = be >= 1 ? sbit | ((uint32_t)be << 23) | (f.frac15 << 8) : sbit | (0x00400000u >> (uint32_t)(-be));
    out = f.is_zero ? sbit : out;
    out = f.is_inf ? sbit | 0x7F800000u : out;
    const uint32_t nan = s->bits == 16 ? sbit | 0x7F800000u | (f.payload << (23u - s->mbits)) : sbit | 0x7FC00000u;
    out = f.is_nan ? nan : out;
    return out;
}

/* code -> float64 bits (exact: every code of every format is a float64). */
FPSIM_HD uint64_t fpsim_decode_f64(uint32_t code, const fpsim_spec *s)
{
    const fpsim_core_fields f = fpsim_core_unpack_code(code, s);
    const uint64_t sbit = (uint64_t)f.sign << 63;
    uint64_t out = sbit | ((uint64_t)(uint32_t)(f.exp + 1023) << 52) | ((uint64_t)f.frac15 << 37);
    out = f.is_zero ? sbit : out;
    out = f.is_inf ? sbit | 0x7FF0000000000000ull : out;
    const uint64_t nan = s->bits == 16 ? sbit | 0x7FF0000000000000ull | ((uint64_t)f.payload << (52u - s->mbits))
                                       : sbit | 0x7FF8000000000000ull;
    out = f.is_nan ? nan : out;
    return out;
}

/* bfloat16 bits -> float32 bits (exact: bf16 is the top half of a float32). */
FPSIM_HD uint32_t fpsim_bf16_to_f32_bits(uint32_t h) { return (h & 0xFFFFu) << 16; }

/* binary16 bits -> float32 bits, exact (subnormals normalized, NaN payload kept unquieted). */
FPSIM_HD uint32_t fpsim_f16_to_f32_bits(uint32_t h)
{
    const uint32_t sbit = (h & 0x8000u) << 16;
    const uint32_t ef = (h >> 10) & 0x1Fu;
    const uint32_t man = h & 0x3FFu;
    uint32_t lz;
    const uint32_t sig = fpsim_core_normalize16((man | ((uint32_t)(ef != 0) << 10)) << 5, &lz);
    const uint32_t be = ef + (ef == 0) - 15u + 127u - lz; /* >= 103 for nonzero values */
    uint32_t out = sbit | (be << 23) | ((sig & 0x7FFFu) << 8);
    out = (ef | man) == 0 ? sbit : out;
    out = ef == 0x1Fu ? sbit | 0x7F800000u | (man << 13) : out;
    return out;
}

/* 16-bit sources (src_format FPSIM_BF16 or FPSIM_F16) convert as the float32 rule of their exact
 * widening, except where the emulated cast does something else (the flags below). Only NaN
 * codes can differ: the widening is exact and the copy is an identity on every other value. */
FPSIM_HD uint32_t fpsim_src16_has_rule(const fpsim_spec *s, uint32_t src_format)
{
    return ((s->flags & FPSIM_SPEC_SAME_FORMAT_COPY) && s->format == src_format) ||
           ((s->flags & FPSIM_SPEC_BF16_NAN_QUIET) && src_format == FPSIM_BF16) ||
           ((s->flags & (FPSIM_SPEC_NAN_C10_SCALAR | FPSIM_SPEC_NAN_TORCHAO)) && src_format == FPSIM_F16);
}

/* 1 where a 16-bit source value h does not take the float32 rule of its widening; *code is then
 * its code: h itself under FPSIM_SPEC_SAME_FORMAT_COPY, the rule of the float32 quiet NaN of its
 * sign for a bf16 NaN under FPSIM_SPEC_BF16_NAN_QUIET, 0x7FC0 for an f16 NaN under
 * FPSIM_SPEC_NAN_C10_SCALAR, and under FPSIM_SPEC_NAN_TORCHAO the rule of an f16 NaN widened as
 * torch widens half (x.float(): the quiet bit set, the payload kept), whose bit arithmetic
 * torchao then applies (all independent of the rounding mode). */
FPSIM_HD uint32_t fpsim_src16_rule(const fpsim_spec *s, uint32_t src_format, uint32_t h, uint32_t *code)
{
    h &= 0xFFFFu;
    if ((s->flags & FPSIM_SPEC_SAME_FORMAT_COPY) && s->format == src_format) {
        *code = h;
        return 1;
    }
    if ((s->flags & FPSIM_SPEC_BF16_NAN_QUIET) && src_format == FPSIM_BF16 && (h & 0x7FFFu) > 0x7F80u) {
        *code = fpsim_round_f32(((h & 0x8000u) << 16) | 0x7FC00000u, s, 0u);
        return 1;
    }
    if ((s->flags & FPSIM_SPEC_NAN_C10_SCALAR) && src_format == FPSIM_F16 && (h & 0x7FFFu) > 0x7C00u) {
        *code = 0x7FC0u;
        return 1;
    }
    if ((s->flags & FPSIM_SPEC_NAN_TORCHAO) && src_format == FPSIM_F16 && (h & 0x7FFFu) > 0x7C00u) {
        *code = fpsim_round_f32(fpsim_f16_to_f32_bits(h) | 0x00400000u, s, 0u);
        return 1;
    }
    return 0;
}

/* ---- random bits for stochastic rounding --------------------------------------------------- */

/* Philox4x32-10 (Salmon et al., SC'11; Random123 philox.h): 10 rounds of two 32x32->64
 * multiplies with the Weyl key schedule. Tested against Random123's known-answer vectors.
 * The schedule and the rounds are also callable apart: kernels that use one key for many blocks
 * compute the round keys once (fpsim_philox_round_keys) and run fpsim_philox4x32_rounds. */
FPSIM_HD void fpsim_philox_round_keys(const uint32_t key[2], uint32_t rk[20])
{
    for (int round = 0; round < 10; round++) {
        rk[2 * round] = key[0] + (uint32_t)round * 0x9E3779B9u;
        rk[2 * round + 1] = key[1] + (uint32_t)round * 0xBB67AE85u;
    }
}

FPSIM_HD void fpsim_philox4x32_rounds(const uint32_t ctr[4], const uint32_t rk[20], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    for (int round = 0; round < 10; round++) {
        const uint64_t p0 = (uint64_t)0xD2511F53u * c0;
        const uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
        const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ rk[2 * round];
        const uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ rk[2 * round + 1];
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

FPSIM_HD void fpsim_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t rk[20];
    fpsim_philox_round_keys(key, rk);
    fpsim_philox4x32_rounds(ctr, rk, out);
}

/* The random word of element `index` of tensor/stream `stream`: word (index & 3) of
 * Philox4x32-10 with counter {lo32(index >> 2), hi32(index >> 2), stream, 0} and key
 * {lo32(seed), hi32(seed)}. The same on CPU and GPU, for any thread count and chunking. */
FPSIM_HD uint32_t fpsim_sr_word(uint64_t seed, uint32_t stream, uint64_t index)
{
    const uint64_t group = index >> 2;
    const uint32_t ctr[4] = {(uint32_t)group, (uint32_t)(group >> 32), stream, 0u};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t out[4];
    fpsim_philox4x32_10(ctr, key, out);
    return out[index & 3];
}

#endif
