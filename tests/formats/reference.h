/* reference.h: an independent, slow, obviously-correct model of fpsim's element formats.
 *
 * Written from the format definitions in formats-spec.md §0-3 and §8 and nothing else: it does
 * not include or call fpsim_core.h or the core's policy table. A format is decoded code by code
 * with ldexp into doubles; rounding a value means finding the two neighbouring representable
 * values in that sorted list and choosing one by the rounding mode, comparing against the exact
 * midpoint (a double; every midpoint of these formats is exact in double). Special values come
 * from a small per-policy table (reference_rules.c) transcribed from formats-spec.md.
 *
 * Sweeps over 2^32 inputs use ref_segments: the result of rounding a magnitude is constant on
 * the open intervals between consecutive "breakpoints" (representable values and midpoints),
 * so the reference is evaluated once per interval and once per breakpoint, and a monotone walk
 * over sorted inputs keeps the per-input cost O(1). */
#ifndef FPSIM_TEST_REFERENCE_H
#define FPSIM_TEST_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How the top of a format's code space is used (formats-spec.md §0). */
typedef enum ref_kind {
    REF_KIND_IEEE, /* exponent all ones: Inf (mantissa 0) or NaN */
    REF_KIND_FN,   /* only S.1111.111 is NaN, no Inf (OCP E4M3) */
    REF_KIND_FNUZ, /* the code 1000...0 is the only NaN, no -0, no Inf */
    REF_KIND_NONE, /* every code finite (FP4, FP6) */
    REF_KIND_E8M0  /* unsigned power of two 2^(code-127), 0xFF NaN */
} ref_kind;

typedef struct ref_format {
    const char *name; /* fpsim's canonical name */
    int bits, ebits, mbits, bias;
    ref_kind kind;
} ref_format;

/* Reference rounding modes, in the order of fpsim's fpsim_round enum names. */
typedef enum ref_mode { REF_RNE, REF_RNA, REF_RZ, REF_RU, REF_RD, REF_MODE_COUNT } ref_mode;
extern const char *const ref_mode_names[REF_MODE_COUNT]; /* "rne", "rna", "rz", "ru", "rd" */

/* Special-value rules of one implementation for one format (formats-spec.md §1.2, §2.2, §3, §8).
 * Codes are full codes (sign included). */
typedef struct ref_rules {
    const char *format, *policy;
    int ovf_pos, ovf_neg; /* finite overflow when the mode rounds away from zero (nearest, RU>0) */
    int inf_pos, inf_neg; /* +-Inf input */
    int nan_pos, nan_neg; /* NaN input, sign bit clear / set */
    int zero_unsigned;    /* results of zero magnitude are written as +0 */
    int negzero_as_pos;   /* an input of -0.0 converts as +0.0 (TE reference cast_to_fp4x2) */
    int e8m0_zero;        /* E8M0: code for zero input */
    int e8m0_neg;         /* E8M0: code for negative finite input, -1 = convert |x| */
    int f64_via_f32;      /* f64 sources are first rounded to f32 (NumPy astype) */
    int forced_mode;      /* -1, or the mode the policy fixes (ptx-rz: RZ, ptx-rp: RU) */
    int nan_rule;         /* ref_nan_rule: how NaN inputs are encoded */
} ref_rules;

/* NaN encodings that depend on the payload rather than only on the sign. */
typedef enum ref_nan_rule {
    REF_NAN_CODES = 0,  /* nan_pos / nan_neg */
    REF_NAN_NUMPY_F16,  /* numpy npy_floatbits_to_halfbits: sign | 0x7C00 | top payload bits,
                         * a payload that truncates to 0 becomes 1 (not quieted) */
    REF_NAN_TORCHAO     /* torchao _f32_to_fpx_unpacked: NaN falls into the normal branch */
} ref_nan_rule;

/* Code for a NaN input given as float32 bits / float64 bits. */
uint32_t ref_nan_f32(const ref_format *f, const ref_rules *r, uint32_t bits);
uint32_t ref_nan_f64(const ref_format *f, const ref_rules *r, uint64_t bits);

/* The formats of formats-spec.md §0 plus bf16/f16, and the lookup. */
extern const ref_format ref_formats[];
extern const int ref_format_count;
const ref_format *ref_format_find(const char *name);

/* The rule table; NULL when formats-spec.md defines no such (format, policy) pair. */
const ref_rules *ref_rules_find(const char *format, const char *policy);
extern const ref_rules ref_rules_table[];
extern const int ref_rules_count;

/* Decode a code to a double from the format definition (NaN and +-Inf as such). */
double ref_decode(const ref_format *f, uint32_t code);

/* The sorted non-negative finite values of a format, with one more entry past the largest:
 * the next value of the grid if the exponent range had no top (448 -> 480 for E4M3). */
typedef struct ref_grid {
    const ref_format *f;
    int n;                 /* representable non-negative finite values */
    double v[1 << 16];     /* v[0..n-1] ascending, v[n] = next value past the largest */
    uint32_t mag[1 << 16]; /* magnitude code of v[i]; mag[n] = mag[n-1] + 1 (for the tie rule) */
} ref_grid;

void ref_grid_build(ref_grid *g, const ref_format *f);

/* Round a double (finite, NaN or Inf) into the format: the obviously-correct slow path
 * (binary search of the grid). */
uint32_t ref_round(const ref_grid *g, const ref_rules *r, ref_mode mode, double x);

/* Stochastic rounding as fpsim defines it: the top sr_bits of rbits are added at the top of the
 * discarded field, then truncated; i.e. |x| rounds up to the next grid value iff
 * frac * 2^sr_bits + r >= 2^sr_bits, with frac = (|x| - lo) / (hi - lo) and r = rbits >> (32 -
 * sr_bits). Overflow gives the policy's overflow code. Computed exactly in double. */
uint32_t ref_round_sr(const ref_grid *g, const ref_rules *r, double x, uint32_t rbits, int sr_bits);

/* Piecewise-constant form of ref_round over the magnitudes of one sign, for fast sweeps. */
typedef struct ref_segments {
    int count;                        /* breakpoints */
    double bp[3 << 16];               /* ascending magnitudes where the result may change */
    uint32_t at[3 << 16];             /* result for |x| == bp[k] */
    uint32_t below[(3 << 16) + 1];    /* result for bp[k-1] < |x| < bp[k] (k = count: above all) */
} ref_segments;

/* Build the segments of (grid, rules, mode) for inputs of sign `negative`. Finite inputs only;
 * zero, Inf and NaN are handled by ref_round directly. */
void ref_segments_build(ref_segments *s, const ref_grid *g, const ref_rules *r, ref_mode mode,
                        int negative);

/* Index of the first breakpoint >= a (count if none): the starting point of a walk. */
int ref_segments_find(const ref_segments *s, double a);

/* Result for magnitude a with walk position *k (advanced monotonically; a must not decrease). */
static inline uint32_t ref_segments_walk(const ref_segments *s, int *k, double a)
{
    int i = *k;
    while (i < s->count && a > s->bp[i])
        i++;
    *k = i;
    return (i < s->count && a == s->bp[i]) ? s->at[i] : s->below[i];
}

/* Philox4x32-10 written from Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"
 * (SC'11): multipliers 0xD2511F53, 0xCD9E8D57, Weyl key increments 0x9E3779B9, 0xBB67AE85. */
void ref_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);

/* The random word of element `index` of stream `stream` per fpsim's contract: word (index & 3)
 * of Philox4x32-10 with counter {lo(index>>2), hi(index>>2), stream, 0}, key {lo(seed), hi(seed)}. */
uint32_t ref_sr_word(uint64_t seed, uint32_t stream, uint64_t index);

#ifdef __cplusplus
}
#endif
#endif
