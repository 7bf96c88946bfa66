/* reference_rules.c: the test suite's own table of special-value rules, one row per
 * (format, policy), transcribed from formats-spec.md (section named on each block). It is kept
 * apart from the core's policy table on purpose: a mismatch between the two is a finding.
 *
 * Columns: ovf+ ovf-: finite overflow when rounding away from zero; inf+ inf-; nan+ nan-;
 * flags; e8m0 zero / negative codes (-1 = by magnitude); forced mode (-1 = the caller's). */
#include "reference.h"

#define NONE_ 0
#define UZ 1   /* zero results are unsigned (no -0 code, or the implementation drops the sign) */
#define NZP 2  /* -0.0 input converts as +0.0 */
#define V32 4  /* f64 goes through f32 first (NumPy astype, formats-spec.md §1.3) */
#define NPF16 8  /* NaN: numpy float16 payload rule */
#define TAO 16   /* NaN: torchao normal-branch bits */
/* torch-based implementations (torch, the clamp idiom, TE and DeepGEMM references, torchao) also
 * take f64 through f32: formats-spec.md is silent, but c10's Float8 types are constructed from
 * float only, and the framework references compute on float32 tensors (x.float()). */
#define TV32 V32

#define ROW(fmt, pol, op, on, ip, in, np, nn, flags)                                            \
    {fmt, pol, op, on, ip, in, np, nn, ((flags) & UZ) != 0, ((flags) & NZP) != 0, 0, -1,        \
     ((flags) & V32) != 0, -1,                                                                   \
     ((flags) & NPF16) ? REF_NAN_NUMPY_F16 : (((flags) & TAO) ? REF_NAN_TORCHAO : REF_NAN_CODES)}
#define E8M0_ROW(pol, ovf, inf, nan, zero, neg, flags, forced)                                  \
    {"e8m0", pol, ovf, ovf, inf, inf, nan, nan, 0, 0, zero, neg, ((flags) & V32) != 0, forced,  \
     REF_NAN_CODES}

const ref_rules ref_rules_table[] = {
    /* E4M3 (OCP, e4m3fn), formats-spec.md §1.2 table. */
    ROW("e4m3", "nv", 0x7E, 0xFE, 0x7E, 0xFE, 0x7F, 0x7F, NONE_),        /* PTX satfinite */
    ROW("e4m3", "nv-nosat", 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0x7F, NONE_),  /* float path: +NaN */
    ROW("e4m3", "torch", 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF, TV32),      /* torch <= 2.11 */
    /* torch >= 2.12 saturates finite overflow; Inf/NaN after the change are unverified
     * (formats-spec.md §1.2): taken as in 2.11. */
    ROW("e4m3", "torch-sat", 0x7E, 0xFE, 0x7E, 0xFE, 0x7F, 0xFF, TV32),
    ROW("e4m3", "ml_dtypes", 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF, V32),
    ROW("e4m3", "ml_dtypes-sat", 0x7E, 0xFE, 0x7F, 0xFF, 0x7F, 0xFF, V32), /* Inf before sat */
    ROW("e4m3", "clamp", 0x7E, 0xFE, 0x7E, 0xFE, 0x7F, 0xFF, TV32), /* clamp(+-Inf) = +-max */
    /* E5M2, formats-spec.md §1.2 "E5M2 analogue". */
    ROW("e5m2", "nv", 0x7B, 0xFB, 0x7B, 0xFB, 0x7F, 0x7F, NONE_),
    ROW("e5m2", "nv-nosat", 0x7C, 0xFC, 0x7C, 0xFC, 0x7F, 0x7F, NONE_),
    ROW("e5m2", "torch", 0x7C, 0xFC, 0x7C, 0xFC, 0x7F, 0xFF, TV32),
    ROW("e5m2", "ml_dtypes", 0x7C, 0xFC, 0x7C, 0xFC, 0x7E, 0xFE, V32),
    ROW("e5m2", "ml_dtypes-sat", 0x7B, 0xFB, 0x7C, 0xFC, 0x7E, 0xFE, V32),
    ROW("e5m2", "clamp", 0x7B, 0xFB, 0x7B, 0xFB, 0x7F, 0xFF, TV32),
    /* FP4 E2M1, formats-spec.md §2.2: always saturating; NaN and -0 differ. */
    ROW("e2m1", "nv", 0x7, 0xF, 0x7, 0xF, 0x7, 0x7, NONE_),   /* NaN -> +max */
    ROW("e2m1", "ml_dtypes", 0x7, 0xF, 0x7, 0xF, 0x8, 0x0, V32), /* NaN -> -0 / +0 */
    ROW("e2m1", "ml_dtypes-sat", 0x7, 0xF, 0x7, 0xF, 0x8, 0x0, V32), /* always saturating */
    ROW("e2m1", "torchao", 0x7, 0xF, 0x7, 0xF, 0x3, 0xB, TV32 | TAO), /* 0x3/0xB for 0x7FC00000 */
    ROW("e2m1", "te", 0x7, 0xF, 0x7, 0xF, 0x0, 0x0, NZP | TV32),       /* x >= 0.0 true for -0 */
    ROW("e2m1", "deepgemm", 0x7, 0xF, 0x7, 0xF, 0x0, 0x0, UZ | TV32),  /* sign only if code != 0 */
    /* FP6, formats-spec.md §2.2 last paragraph: same pattern as FP4. */
    ROW("e2m3", "nv", 0x1F, 0x3F, 0x1F, 0x3F, 0x1F, 0x1F, NONE_),
    ROW("e2m3", "ml_dtypes", 0x1F, 0x3F, 0x1F, 0x3F, 0x20, 0x00, V32),
    ROW("e2m3", "ml_dtypes-sat", 0x1F, 0x3F, 0x1F, 0x3F, 0x20, 0x00, V32),
    ROW("e2m3", "torchao", 0x1F, 0x3F, 0x1F, 0x3F, 0x0C, 0x2C, TV32 | TAO),
    ROW("e3m2", "nv", 0x1F, 0x3F, 0x1F, 0x3F, 0x1F, 0x1F, NONE_),
    ROW("e3m2", "ml_dtypes", 0x1F, 0x3F, 0x1F, 0x3F, 0x20, 0x00, V32),
    ROW("e3m2", "ml_dtypes-sat", 0x1F, 0x3F, 0x1F, 0x3F, 0x20, 0x00, V32),
    ROW("e3m2", "torchao", 0x1F, 0x3F, 0x1F, 0x3F, 0x0E, 0x2E, TV32 | TAO),
    /* BF16 and F16, formats-spec.md §8 and gpu-numerics.md "Conversion behaviour": overflow
     * and Inf give Inf; NaN encodings differ. */
    ROW("bf16", "nv", 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0x7FFF, 0x7FFF, NONE_),
    ROW("bf16", "nv-nosat", 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0x7FFF, 0x7FFF, NONE_),
    ROW("bf16", "torch", 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0x7FFF, 0x7FFF, TV32), /* CUDA */
    ROW("bf16", "torch-cpu", 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0xFFFF, 0xFFFF, TV32), /* §8 */
    ROW("bf16", "clamp", 0x7F7F, 0xFF7F, 0x7F7F, 0xFF7F, 0x7FFF, 0x7FFF, TV32),
    ROW("bf16", "ml_dtypes", 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, V32),
    ROW("bf16", "ml_dtypes-sat", 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, V32),
    ROW("f16", "nv", 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7FFF, 0x7FFF, NONE_),
    ROW("f16", "nv-nosat", 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7FFF, 0x7FFF, NONE_),
    ROW("f16", "torch", 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7FFF, 0x7FFF, TV32),
    ROW("f16", "clamp", 0x7BFF, 0xFBFF, 0x7BFF, 0xFBFF, 0x7FFF, 0x7FFF, TV32),
    /* ml_dtypes has no f16: NumPy float16 is what ml_dtypes users get; f64 rounds once. */
    ROW("f16", "ml_dtypes", 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7E00, 0xFE00, NPF16),
    /* ml_dtypes-only FP8 formats (ml_dtypes 0.6 float8.h): NaN is 0x80, there is no Inf and no
     * -0, so Inf and non-saturating overflow give 0x80 and -0 results give 0x00. */
    ROW("e4m3fnuz", "ml_dtypes", 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, UZ | V32),
    ROW("e4m3fnuz", "ml_dtypes-sat", 0x7F, 0xFF, 0x80, 0x80, 0x80, 0x80, UZ | V32),
    ROW("e5m2fnuz", "ml_dtypes", 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, UZ | V32),
    ROW("e5m2fnuz", "ml_dtypes-sat", 0x7F, 0xFF, 0x80, 0x80, 0x80, 0x80, UZ | V32),
    ROW("e4m3b11fnuz", "ml_dtypes", 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, UZ | V32),
    ROW("e4m3b11fnuz", "ml_dtypes-sat", 0x7F, 0xFF, 0x80, 0x80, 0x80, 0x80, UZ | V32),
    /* ml_dtypes float8_e4m3 (IEEE-style): Inf 0x78, quiet NaN 0x7C, sign kept. */
    ROW("e4m3ieee", "ml_dtypes", 0x78, 0xF8, 0x78, 0xF8, 0x7C, 0xFC, V32),
    ROW("e4m3ieee", "ml_dtypes-sat", 0x77, 0xF7, 0x78, 0xF8, 0x7C, 0xFC, V32),
    /* E8M0, formats-spec.md §3 table. Unsigned: -Inf behaves as Inf. */
    E8M0_ROW("torch", 0xFF, 0xFF, 0xFF, 0x00, -1, TV32, -1),
    E8M0_ROW("ml_dtypes", 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, V32, -1),
    E8M0_ROW("ml_dtypes-sat", 0xFE, 0xFF, 0xFF, 0x00, 0x00, V32, -1),
    E8M0_ROW("ptx-rz", 0xFF, 0xFF, 0xFF, 0x00, -1, NONE_, REF_RZ),
    E8M0_ROW("ptx-rp", 0xFF, 0xFF, 0xFF, 0x00, -1, NONE_, REF_RU),
    E8M0_ROW("ptx-rz-sat", 0xFE, 0xFE, 0xFF, 0x00, -1, NONE_, REF_RZ),
    E8M0_ROW("ptx-rp-sat", 0xFE, 0xFE, 0xFF, 0x00, -1, NONE_, REF_RU),
};
const int ref_rules_count = (int)(sizeof ref_rules_table / sizeof ref_rules_table[0]);
