/* fpsim_core_types.h: plain-data descriptors shared by the CPU emulators and the CUDA kernels.
 *
 * A format is data (bits, bias, special values); a spec is one implementation's complete rule for
 * converting into that format (rounding mode plus the codes it writes for overflow, Inf, NaN and
 * zeros). Both are plain structs with no pointers to functions, so a kernel can take them by
 * value. The functions that use them live in fpsim_core.h (scalar, inline, host and device). */
#ifndef FPSIM_CORE_TYPES_H
#define FPSIM_CORE_TYPES_H

#include <stdint.h>

/* Mark a function for both host and device under nvcc; plain static inline in C. */
#if defined(__CUDACC__)
#define FPSIM_HD __host__ __device__ static inline
#else
#define FPSIM_HD static inline
#endif

typedef enum fpsim_format_id {
    FPSIM_E4M3 = 0,      /* OCP E4M3 (e4m3fn): bias 7, max 448, NaN S.1111.111, no Inf */
    FPSIM_E5M2,          /* OCP/IEEE-style E5M2: bias 15, max 57344, Inf and NaN */
    FPSIM_E2M1,          /* FP4: bias 1, max 6, no Inf/NaN */
    FPSIM_E2M3,          /* FP6: bias 1, max 7.5, no Inf/NaN */
    FPSIM_E3M2,          /* FP6: bias 3, max 28, no Inf/NaN */
    FPSIM_E8M0,          /* UE8M0 scale: unsigned, 2^(e-127), 0xFF NaN, no zero */
    FPSIM_BF16,          /* bfloat16 */
    FPSIM_F16,           /* IEEE binary16 */
    FPSIM_E4M3FNUZ,      /* bias 8, max 240, NaN 0x80, no -0, no Inf */
    FPSIM_E5M2FNUZ,      /* bias 16, max 57344, NaN 0x80, no -0, no Inf */
    FPSIM_E4M3B11FNUZ,   /* bias 11, max 30, NaN 0x80, no -0, no Inf */
    FPSIM_E4M3IEEE,      /* ml_dtypes float8_e4m3: bias 7, IEEE-style Inf 0x78, max 240 */
    FPSIM_FORMAT_COUNT
} fpsim_format_id;

/* How the top of the code space is used. */
typedef enum fpsim_specials {
    FPSIM_SPECIALS_IEEE = 0, /* all-ones exponent: Inf (mantissa 0) and NaN (mantissa != 0) */
    FPSIM_SPECIALS_FN,       /* only the all-ones code S.1..1.1..1 is NaN; no Inf (OCP E4M3) */
    FPSIM_SPECIALS_FNUZ,     /* 0x80 (negative zero's code) is the only NaN; no Inf, no -0 */
    FPSIM_SPECIALS_NONE,     /* every code is finite (FP4, FP6) */
    FPSIM_SPECIALS_E8M0      /* unsigned exponent-only: 0xFF NaN, no zero, no Inf */
} fpsim_specials;

typedef struct fpsim_format {
    const char *name;        /* canonical name, e.g. "e4m3" */
    uint8_t id;              /* fpsim_format_id */
    uint8_t bits;            /* storage bits, sign included (8 or fewer: one byte per code) */
    uint8_t ebits, mbits;    /* exponent and explicit mantissa bits */
    int16_t bias;
    uint8_t is_signed;       /* 0 only for E8M0 */
    uint8_t specials;        /* fpsim_specials */
    uint16_t max_mag;        /* code magnitude (sign bit clear) of the largest finite value */
    uint16_t inf_mag;        /* magnitude code of Inf, 0 if the format has none */
    uint16_t nan_mag;        /* magnitude code of the canonical (quiet) NaN, 0 if none; for the
                              * FNUZ formats the full code 0x80 */
    double max, min_normal, min_subnormal, epsilon; /* limits (min_subnormal 0 if none) */
} fpsim_format;

typedef enum fpsim_round {
    FPSIM_RNE = 0, /* nearest, ties to even */
    FPSIM_RNA,     /* nearest, ties away from zero */
    FPSIM_RZ,      /* toward zero */
    FPSIM_RU,      /* toward +Inf */
    FPSIM_RD,      /* toward -Inf */
    FPSIM_SR,      /* stochastic: add random bits at the top of the discarded field, truncate */
    FPSIM_ROUND_COUNT,
    FPSIM_ROUND_DEFAULT = 15 /* for fpsim_spec_make() only: the policy's default rounding */
} fpsim_round;

/* Flags of a spec. */
enum {
    FPSIM_SPEC_UNSIGNED_ZERO = 1u << 0,  /* a result of zero magnitude is written as +0 */
    FPSIM_SPEC_NEGZERO_IN_POS = 1u << 1, /* an input of exactly -0.0 converts as +0.0 (TE ref) */
    FPSIM_SPEC_F64_VIA_F32 = 1u << 2,    /* f64 sources are first rounded to f32 (numpy astype) */
    FPSIM_SPEC_CLAMP_FIRST = 1u << 3,    /* finite values and Inf are clamped to +-max first; a
                                          * marker only: the table encodes it as overflow and
                                          * Inf codes equal to +-max, which gives the same bits */
    FPSIM_SPEC_E8M0_ABS = 1u << 4,       /* E8M0: negative inputs convert by magnitude */
    FPSIM_SPEC_E8M0_NEG_NAN = 1u << 5,   /* E8M0: negative inputs (-0 included) give e8m0_neg */
    FPSIM_SPEC_NAN_PAYLOAD = 1u << 6,    /* NaN keeps its top payload bits (truncated, not
                                          * quieted); a payload truncated to 0 becomes 1
                                          * (numpy float16 npy_floatbits_to_halfbits) */
    FPSIM_SPEC_NAN_TORCHAO = 1u << 7,    /* NaN goes through torchao's normal-branch bit
                                          * arithmetic: a payload-dependent code (FP4/FP6) */
    FPSIM_SPEC_E8M0_TRUE_GRID = 1u << 8, /* E8M0: nonzero |x| <= 2^-127 gives 0x00 (PTX
                                          * cvt.{rz,rp}.ue8m0x2 host emulation, cuda_fp8.hpp) */
    FPSIM_SPEC_SAME_FORMAT_COPY = 1u << 9, /* BF16/F16: a source already in this format is copied,
                                            * NaN payloads included (torch .to() returns self,
                                            * numpy astype to the same dtype copies) */
    FPSIM_SPEC_BF16_NAN_QUIET = 1u << 10,  /* a bf16 NaN source converts as the float32 quiet NaN
                                            * of its sign, payload dropped (ml_dtypes' bfloat16 ->
                                            * float16 cast: 0x7E00 with the sign) */
    FPSIM_SPEC_NAN_C10_SCALAR = 1u << 11   /* BF16: a NaN from a float64 or f16 source gives
                                            * 0x7FC0 whatever its sign (c10::BFloat16's scalar
                                            * rounding, which torch's CPU casts from double and
                                            * half take); float32 sources keep nan_pos/nan_neg */
};

/* One implementation's complete conversion rule for one format: everything that decides bits.
 * Codes are full codes (sign included). Filled by fpsim_spec_make() from the format table and
 * the policy table; kernels take it by value. */
typedef struct fpsim_spec {
    uint8_t format;            /* fpsim_format_id */
    uint8_t round;             /* fpsim_round */
    uint8_t sr_bits;           /* random bits used by FPSIM_SR (1..32) */
    uint8_t bits;              /* storage bits of the format, sign included */
    uint8_t ebits, mbits;      /* exponent and explicit mantissa bits of the format */
    uint8_t is_signed;         /* 0 only for E8M0 */
    uint8_t specials;          /* fpsim_specials of the format */
    uint16_t flags;            /* FPSIM_SPEC_* */
    int16_t bias;              /* exponent bias of the format */
    uint16_t max_mag;          /* magnitude code of the largest finite value */
    uint16_t ovf_pos, ovf_neg; /* finite overflow under nearest and SR rounding, and under
                                * directed rounding away from zero */
    uint16_t inf_pos, inf_neg; /* +Inf / -Inf input */
    uint16_t nan_pos, nan_neg; /* NaN input with sign bit clear / set */
    uint16_t e8m0_zero;        /* E8M0: code for an input of zero */
    uint16_t e8m0_neg;         /* E8M0: code for a negative input under FPSIM_SPEC_E8M0_NEG_NAN */
    uint16_t policy;           /* index of the policy in the table (for names in outputs) */
} fpsim_spec;

#endif
