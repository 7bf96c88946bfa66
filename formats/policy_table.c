/* policy_table.c: THE table of implementation behaviours, one row per (policy, format).
 *
 * Every code that an implementation writes for overflow, Inf, NaN, zeros and E8M0 zero/negative
 * inputs lives here and nowhere else (SoftFloat's specialize.h idea). Sources and measurements:
 * formats-spec.md §1.2 (FP8), §2.2 (FP4/FP6), §3 (E8M0), §8 (BF16 NaN payloads), anchors.md
 * (PTX on H200, torch 2.11, ml_dtypes 0.6 over all 2^32 float32 inputs). docs/formats.md shows
 * the same table for readers. Finite values in range round the same way under every policy; only
 * the rounding mode (default per row, overridable) changes them. */
#include <stdio.h>
#include <string.h>

#include "fpsim_formats.h"

typedef struct policy_row {
    const char *policy;
    fpsim_format_id fmt;
    uint16_t ovf_pos, ovf_neg; /* finite overflow (nearest, SR, directed away from zero) */
    uint16_t inf_pos, inf_neg;
    uint16_t nan_pos, nan_neg;
    uint16_t e8m0_zero, e8m0_neg;
    uint16_t flags;
    fpsim_round round;         /* default rounding */
    const char *source;        /* what is emulated */
} policy_row;

enum {
    UZERO = FPSIM_SPEC_UNSIGNED_ZERO,
    NEGZ0 = FPSIM_SPEC_NEGZERO_IN_POS,
    VIA32 = FPSIM_SPEC_F64_VIA_F32,
    CLAMP = FPSIM_SPEC_CLAMP_FIRST,
    ABS = FPSIM_SPEC_E8M0_ABS,
    NEGNAN = FPSIM_SPEC_E8M0_NEG_NAN,
    PAYLOAD = FPSIM_SPEC_NAN_PAYLOAD,
    TORCHAO = FPSIM_SPEC_NAN_TORCHAO,
    GRID = FPSIM_SPEC_E8M0_TRUE_GRID,
    COPY = FPSIM_SPEC_SAME_FORMAT_COPY,
    BF16Q = FPSIM_SPEC_BF16_NAN_QUIET,
    C10NAN = FPSIM_SPEC_NAN_C10_SCALAR
};

/* Policy names in display order (every row's policy must be here). */
static const char *const policy_names[] = {
    "nv", "nv-nosat", "torch", "torch-sat", "torch-cpu", "ml_dtypes", "ml_dtypes-sat", "clamp",
    "torchao", "te", "deepgemm", "ptx-rz", "ptx-rz-sat", "ptx-rp", "ptx-rp-sat",
};
#define NPOLICIES ((int)(sizeof policy_names / sizeof policy_names[0]))

static const policy_row rows[] = {
    /* policy       format       ovf+    ovf-    inf+    inf-    nan+    nan-   e8m0 0 / neg  flags   round */
    /* ---- E4M3 (OCP e4m3fn): max 0x7E, NaN 0x7F|s, no Inf (formats-spec §1.2) ---- */
    {"nv",            FPSIM_E4M3, 0x7E, 0xFE, 0x7E, 0xFE, 0x7F, 0x7F, 0, 0, 0, FPSIM_RNE,
     "PTX cvt.rn.satfinite.e4m3x2.f32 (H200) = CUDA 13 __nv_cvt_float_to_fp8(__NV_SATFINITE): NaN -> 0x7F"},
    {"nv-nosat",      FPSIM_E4M3, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0x7F, 0, 0, 0, FPSIM_RNE,
     "CUDA 13 cuda_fp8.hpp __nv_cvt_float_to_fp8(__NV_NOSAT): overflow -> NaN, NaN canonicalized to 0x7F"},
    {"torch",         FPSIM_E4M3, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF, 0, 0, VIA32, FPSIM_RNE,
     "torch <= 2.11 .to(float8_e4m3fn), CPU = CUDA (c10 Float8_e4m3fn.h): overflow and Inf -> NaN, NaN sign kept"},
    {"torch-sat",     FPSIM_E4M3, 0x7E, 0xFE, 0x7E, 0xFE, 0x7F, 0xFF, 0, 0, VIA32, FPSIM_RNE,
     "torch >= 2.12 .to(float8_e4m3fn), CPU = CUDA (PR #178817, c10 Float8_e4m3fn.h): overflow and Inf -> +-448, NaN sign kept"},
    {"ml_dtypes",     FPSIM_E4M3, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 astype(float8_e4m3fn) (numpy astype from float64 goes through float32)"},
    {"ml_dtypes-sat", FPSIM_E4M3, 0x7E, 0xFE, 0x7F, 0xFF, 0x7F, 0xFF, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 ConvertFrom<kSaturate=true>: finite overflow -> +-max, Inf handled first -> NaN"},
    {"clamp",         FPSIM_E4M3, 0x7E, 0xFE, 0x7E, 0xFE, 0x7F, 0xFF, 0, 0, VIA32 | CLAMP, FPSIM_RNE,
     "framework idiom torch.clamp(x, -448, 448).to(float8_e4m3fn) (torchao, TE references): NaN stays NaN"},

    /* ---- E5M2: max 0x7B, Inf 0x7C|s, NaN 0x7D-0x7F|s ---- */
    {"nv",            FPSIM_E5M2, 0x7B, 0xFB, 0x7B, 0xFB, 0x7F, 0x7F, 0, 0, 0, FPSIM_RNE,
     "PTX cvt.rn.satfinite.e5m2x2.f32 (H200) = CUDA 13 __NV_SATFINITE: overflow, Inf -> +-max, NaN -> 0x7F"},
    {"nv-nosat",      FPSIM_E5M2, 0x7C, 0xFC, 0x7C, 0xFC, 0x7F, 0x7F, 0, 0, 0, FPSIM_RNE,
     "CUDA 13 cuda_fp8.hpp __nv_cvt_float_to_fp8(__NV_NOSAT): overflow -> Inf, NaN -> 0x7F"},
    {"torch",         FPSIM_E5M2, 0x7C, 0xFC, 0x7C, 0xFC, 0x7F, 0xFF, 0, 0, VIA32, FPSIM_RNE,
     "torch <= 2.11 .to(float8_e5m2) (c10 Float8_e5m2.h): overflow -> Inf, NaN -> 0x7F with sign"},
    {"ml_dtypes",     FPSIM_E5M2, 0x7C, 0xFC, 0x7C, 0xFC, 0x7E, 0xFE, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 astype(float8_e5m2): overflow -> Inf, NaN -> quiet 0x7E with sign"},
    {"ml_dtypes-sat", FPSIM_E5M2, 0x7B, 0xFB, 0x7C, 0xFC, 0x7E, 0xFE, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 ConvertFrom<kSaturate=true>: finite overflow -> +-max, Inf kept"},
    {"clamp",         FPSIM_E5M2, 0x7B, 0xFB, 0x7B, 0xFB, 0x7F, 0xFF, 0, 0, VIA32 | CLAMP, FPSIM_RNE,
     "torch.clamp(x, -57344, 57344).to(float8_e5m2) (torchao mx_tensor.py): NaN stays NaN (torch code)"},

    /* ---- E2M1 (FP4): max 0x7, no Inf/NaN (formats-spec §2.2) ---- */
    {"nv",            FPSIM_E2M1, 0x7, 0xF, 0x7, 0xF, 0x7, 0x7, 0, 0, 0, FPSIM_RNE,
     "CUDA 13 cuda_fp4.hpp __nv_cvt_float_to_fp4 / PTX cvt.rn.satfinite.e2m1x2.f32: NaN -> +6"},
    {"ml_dtypes",     FPSIM_E2M1, 0x7, 0xF, 0x7, 0xF, 0x8, 0x0, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 float4_e2m1fn: saturates, +NaN -> 0x8 (-0), -NaN -> 0x0"},
    {"ml_dtypes-sat", FPSIM_E2M1, 0x7, 0xF, 0x7, 0xF, 0x8, 0x0, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 float4_e2m1fn (always saturating: same as ml_dtypes)"},
    {"torchao",       FPSIM_E2M1, 0x7, 0xF, 0x7, 0xF, 0x3, 0xB, 0, 0, VIA32 | TORCHAO, FPSIM_RNE,
     "torchao f32_to_f4_unpacked (custom_fp_utils.py): NaN -> normal-branch bits (0x3/0xB for 0x7FC00000)"},
    {"te",            FPSIM_E2M1, 0x7, 0xF, 0x7, 0xF, 0x0, 0x0, 0, 0, VIA32 | NEGZ0, FPSIM_RNE,
     "TE reference_nvfp4.py cast_to_fp4x2: NaN -> 0, -0.0 -> +0 (x >= 0.0 holds for -0)"},
    {"deepgemm",      FPSIM_E2M1, 0x7, 0xF, 0x7, 0xF, 0x0, 0x0, 0, 0, VIA32 | UZERO, FPSIM_RNE,
     "DeepGEMM deep_gemm/utils/math.py _quantize_to_fp4_e2m1: NaN -> 0, sign only on nonzero codes"},

    /* ---- E2M3 / E3M2 (FP6): max 0x1F, no Inf/NaN ---- */
    {"nv",            FPSIM_E2M3, 0x1F, 0x3F, 0x1F, 0x3F, 0x1F, 0x1F, 0, 0, 0, FPSIM_RNE,
     "CUDA 13 cuda_fp6.hpp __nv_cvt_float_to_fp6 (satfinite): NaN -> +7.5"},
    {"ml_dtypes",     FPSIM_E2M3, 0x1F, 0x3F, 0x1F, 0x3F, 0x20, 0x00, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 float6_e2m3fn: saturates, +NaN -> 0x20 (-0), -NaN -> 0x00"},
    {"ml_dtypes-sat", FPSIM_E2M3, 0x1F, 0x3F, 0x1F, 0x3F, 0x20, 0x00, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 float6_e2m3fn (always saturating: same as ml_dtypes)"},
    {"torchao",       FPSIM_E2M3, 0x1F, 0x3F, 0x1F, 0x3F, 0x0C, 0x2C, 0, 0, VIA32 | TORCHAO, FPSIM_RNE,
     "torchao f32_to_fpx_unpacked(ebits=2, mbits=3): NaN -> normal-branch bits"},
    {"nv",            FPSIM_E3M2, 0x1F, 0x3F, 0x1F, 0x3F, 0x1F, 0x1F, 0, 0, 0, FPSIM_RNE,
     "CUDA 13 cuda_fp6.hpp __nv_cvt_float_to_fp6 (satfinite): NaN -> +28"},
    {"ml_dtypes",     FPSIM_E3M2, 0x1F, 0x3F, 0x1F, 0x3F, 0x20, 0x00, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 float6_e3m2fn: saturates, +NaN -> 0x20 (-0), -NaN -> 0x00"},
    {"ml_dtypes-sat", FPSIM_E3M2, 0x1F, 0x3F, 0x1F, 0x3F, 0x20, 0x00, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 float6_e3m2fn (always saturating: same as ml_dtypes)"},
    {"torchao",       FPSIM_E3M2, 0x1F, 0x3F, 0x1F, 0x3F, 0x0E, 0x2E, 0, 0, VIA32 | TORCHAO, FPSIM_RNE,
     "torchao f32_to_fpx_unpacked(ebits=3, mbits=2): NaN -> normal-branch bits"},

    /* ---- E8M0 (UE8M0): max 0xFE, NaN 0xFF, no zero (formats-spec §3) ---- */
    {"torch",         FPSIM_E8M0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, VIA32 | ABS, FPSIM_RNE,
     "torch 2.11 .to(float8_e8m0fnu) (c10 Float8_e8m0fnu-inl.h): RNE with the implicit bit as LSB, 0 -> 0x00, sign ignored"},
    {"ml_dtypes",     FPSIM_E8M0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, VIA32 | NEGNAN, FPSIM_RNE,
     "ml_dtypes 0.6 astype(float8_e8m0fnu): 0 and negatives (-0 included) -> NaN 0xFF"},
    {"ml_dtypes-sat", FPSIM_E8M0, 0xFE, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, VIA32 | NEGNAN, FPSIM_RNE,
     "ml_dtypes 0.6 ConvertFrom<kSaturate=true>: overflow -> 0xFE, 0 and negatives -> 0x00, Inf -> NaN"},
    {"ptx-rz",        FPSIM_E8M0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, ABS | GRID, FPSIM_RZ,
     "PTX cvt.rz.ue8m0x2.f32 (cuda_fp8.hpp host emulation): floor of |x|, Inf -> 0xFF"},
    {"ptx-rz-sat",    FPSIM_E8M0, 0xFE, 0xFE, 0xFE, 0xFE, 0xFF, 0xFF, 0x00, 0x00, ABS | GRID, FPSIM_RZ,
     "PTX cvt.rz.satfinite.ue8m0x2.f32: floor of |x|, Inf -> 0xFE"},
    {"ptx-rp",        FPSIM_E8M0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, ABS | GRID, FPSIM_RU,
     "PTX cvt.rp.ue8m0x2.f32 (cuda_fp8.hpp host emulation): ceil of |x|, overflow and Inf -> 0xFF"},
    {"ptx-rp-sat",    FPSIM_E8M0, 0xFE, 0xFE, 0xFE, 0xFE, 0xFF, 0xFF, 0x00, 0x00, ABS | GRID, FPSIM_RU,
     "PTX cvt.rp.satfinite.ue8m0x2.f32 (TE MXFP8 scales): ceil of |x|, overflow and Inf -> 0xFE"},

    /* ---- BF16: no saturation under nearest rounding; NaN payloads differ (formats-spec §8) ---- */
    {"nv",            FPSIM_BF16, 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0x7FFF, 0x7FFF, 0, 0, 0, FPSIM_RNE,
     "CUDA __float2bfloat16 host and device (cvt.rn.bf16.f32): overflow -> Inf, NaN -> 0x7FFF"},
    {"nv-nosat",      FPSIM_BF16, 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0x7FFF, 0x7FFF, 0, 0, 0, FPSIM_RNE,
     "same as nv (cvt.rn.bf16.f32 does not saturate)"},
    {"torch",         FPSIM_BF16, 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0x7FFF, 0x7FFF, 0, 0, VIA32 | COPY, FPSIM_RNE,
     "torch 2.11 .to(bfloat16) on a CUDA device: NaN -> 0x7FFF; a bf16 tensor is returned as it is"},
    {"torch-cpu",     FPSIM_BF16, 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0xFFFF, 0xFFFF, 0, 0, VIA32 | COPY | C10NAN, FPSIM_RNE,
     "torch 2.11-2.15 CPU tensor .to(bfloat16): NaN -> 0xFFFF from float32 (vectorized path), 0x7FC0 from "
     "float64 and float16 (c10 scalar path); a bf16 tensor is returned as it is"},
    {"ml_dtypes",     FPSIM_BF16, 0x7F80, 0xFF80, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0, 0, VIA32 | COPY, FPSIM_RNE,
     "ml_dtypes 0.6 / Eigen float_to_bfloat16_rtne<false>: NaN -> 0x7FC0 with sign; astype from bfloat16 copies"},
    {"ml_dtypes-sat", FPSIM_BF16, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 ConvertFrom<kSaturate=true>: finite overflow -> +-max, Inf kept"},
    {"clamp",         FPSIM_BF16, 0x7F7F, 0xFF7F, 0x7F7F, 0xFF7F, 0x7FFF, 0x7FFF, 0, 0, VIA32 | CLAMP, FPSIM_RNE,
     "torch.clamp(x, -max, max).to(bfloat16) on CUDA: NaN -> 0x7FFF"},

    /* ---- F16 ---- */
    {"nv",            FPSIM_F16, 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7FFF, 0x7FFF, 0, 0, 0, FPSIM_RNE,
     "PTX cvt.rn.f16.f32 / CUDA __float2half: overflow -> Inf, every NaN -> 0x7FFF"},
    {"nv-nosat",      FPSIM_F16, 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7FFF, 0x7FFF, 0, 0, 0, FPSIM_RNE,
     "same as nv (cvt.rn.f16.f32 does not saturate)"},
    {"torch",         FPSIM_F16, 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7FFF, 0x7FFF, 0, 0, VIA32 | COPY, FPSIM_RNE,
     "torch 2.11 .to(float16) on a CUDA device (__float2half): NaN -> 0x7FFF; a float16 tensor is returned as it is"},
    {"ml_dtypes",     FPSIM_F16, 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0x7C00, 0xFC00, 0, 0, PAYLOAD | COPY | BF16Q, FPSIM_RNE,
     "numpy 2.x astype(float16) (npy_floatbits_to_halfbits, f64 rounded once): NaN payload truncated, not quieted; "
     "from bfloat16 (ml_dtypes' cast) NaN -> 0x7E00 with sign"},
    {"clamp",         FPSIM_F16, 0x7BFF, 0xFBFF, 0x7BFF, 0xFBFF, 0x7FFF, 0x7FFF, 0, 0, VIA32 | CLAMP, FPSIM_RNE,
     "torch.clamp(x, -65504, 65504).to(float16) on CUDA: NaN -> 0x7FFF"},

    /* ---- FNUZ formats (ml_dtypes only): NaN 0x80, no -0, no Inf ---- */
    {"ml_dtypes",     FPSIM_E4M3FNUZ, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 0, VIA32 | UZERO, FPSIM_RNE,
     "ml_dtypes 0.6 astype(float8_e4m3fnuz): overflow, Inf, NaN -> 0x80; -0 -> +0"},
    {"ml_dtypes-sat", FPSIM_E4M3FNUZ, 0x7F, 0xFF, 0x80, 0x80, 0x80, 0x80, 0, 0, VIA32 | UZERO, FPSIM_RNE,
     "ml_dtypes 0.6 ConvertFrom<kSaturate=true>: finite overflow -> +-max, Inf -> NaN"},
    {"ml_dtypes",     FPSIM_E5M2FNUZ, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 0, VIA32 | UZERO, FPSIM_RNE,
     "ml_dtypes 0.6 astype(float8_e5m2fnuz): overflow, Inf, NaN -> 0x80; -0 -> +0"},
    {"ml_dtypes-sat", FPSIM_E5M2FNUZ, 0x7F, 0xFF, 0x80, 0x80, 0x80, 0x80, 0, 0, VIA32 | UZERO, FPSIM_RNE,
     "ml_dtypes 0.6 ConvertFrom<kSaturate=true>: finite overflow -> +-max, Inf -> NaN"},
    {"ml_dtypes",     FPSIM_E4M3B11FNUZ, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0, 0, VIA32 | UZERO, FPSIM_RNE,
     "ml_dtypes 0.6 astype(float8_e4m3b11fnuz): overflow, Inf, NaN -> 0x80; -0 -> +0"},
    {"ml_dtypes-sat", FPSIM_E4M3B11FNUZ, 0x7F, 0xFF, 0x80, 0x80, 0x80, 0x80, 0, 0, VIA32 | UZERO, FPSIM_RNE,
     "ml_dtypes 0.6 ConvertFrom<kSaturate=true>: finite overflow -> +-max, Inf -> NaN"},

    /* ---- E4M3IEEE (ml_dtypes float8_e4m3): max 0x77, Inf 0x78, NaN 0x7C ---- */
    {"ml_dtypes",     FPSIM_E4M3IEEE, 0x78, 0xF8, 0x78, 0xF8, 0x7C, 0xFC, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 astype(float8_e4m3): overflow -> Inf, NaN -> 0x7C with sign"},
    {"ml_dtypes-sat", FPSIM_E4M3IEEE, 0x77, 0xF7, 0x78, 0xF8, 0x7C, 0xFC, 0, 0, VIA32, FPSIM_RNE,
     "ml_dtypes 0.6 ConvertFrom<kSaturate=true>: finite overflow -> +-max, Inf kept"},
};
#define NROWS ((int)(sizeof rows / sizeof rows[0]))

int fpsim_policy_count(void) { return NPOLICIES; }

const char *fpsim_policy_name(int index) { return index >= 0 && index < NPOLICIES ? policy_names[index] : NULL; }

static int policy_index(const char *name)
{
    for (int i = 0; name && i < NPOLICIES; i++)
        if (!strcmp(name, policy_names[i]))
            return i;
    return -1;
}

static const policy_row *find_row(const char *policy, fpsim_format_id fmt)
{
    for (int i = 0; i < NROWS; i++)
        if (rows[i].fmt == fmt && !strcmp(rows[i].policy, policy))
            return &rows[i];
    return NULL;
}

const char *fpsim_policy_names(int fmt)
{
    /* One buffer per format (and one for all): built on first use from the const table; the
     * content never changes, so concurrent first calls write the same bytes. */
    static _Thread_local char buf[FPSIM_FORMAT_COUNT + 1][256];
    char *out = buf[fmt >= 0 && fmt < FPSIM_FORMAT_COUNT ? fmt : FPSIM_FORMAT_COUNT];
    size_t len = 0;
    out[0] = '\0';
    for (int p = 0; p < NPOLICIES; p++) {
        if (fmt >= 0 && fmt < FPSIM_FORMAT_COUNT && !find_row(policy_names[p], (fpsim_format_id)fmt))
            continue;
        len += (size_t)snprintf(out + len, 256 - len, "%s%s", len ? ", " : "", policy_names[p]);
        if (len >= 256)
            break;
    }
    return out;
}

const char *fpsim_policy_default(fpsim_format_id fmt)
{
    switch (fmt) {
    case FPSIM_E8M0: return "torch";
    case FPSIM_E4M3FNUZ:
    case FPSIM_E5M2FNUZ:
    case FPSIM_E4M3B11FNUZ:
    case FPSIM_E4M3IEEE: return "ml_dtypes";
    default: return "nv";
    }
}

const char *fpsim_policy_source(const char *policy, fpsim_format_id fmt)
{
    const policy_row *r = policy ? find_row(policy, fmt) : NULL;
    return r ? r->source : NULL;
}

const char *fpsim_spec_policy_name(const fpsim_spec *s)
{
    return s && s->policy < NPOLICIES ? policy_names[s->policy] : "?";
}

fpsim_status fpsim_spec_make(fpsim_spec *out, fpsim_format_id fmt, const char *policy,
                             fpsim_round mode, int sr_bits)
{
    const fpsim_format *f = fpsim_format_get(fmt);
    if (!out || !f)
        return fpsim_fail(FPSIM_EINVAL, "fpsim_spec_make: invalid format id %d", (int)fmt);
    if (!policy)
        policy = fpsim_policy_default(fmt);
    const int pi = policy_index(policy);
    if (pi < 0)
        return fpsim_fail(FPSIM_ENAME, "unknown policy '%s'; valid policies: %s", policy, fpsim_policy_names(-1));
    const policy_row *r = find_row(policy, fmt);
    if (!r)
        return fpsim_fail(FPSIM_ENAME, "policy '%s' does not define format %s; policies for %s: %s", policy,
                          f->name, f->name, fpsim_policy_names(fmt));
    if (mode == FPSIM_ROUND_DEFAULT)
        mode = r->round;
    if ((int)mode < 0 || mode >= FPSIM_ROUND_COUNT)
        return fpsim_fail(FPSIM_EINVAL, "invalid rounding mode %d; valid modes: %s", (int)mode, fpsim_round_names());
    if (sr_bits == 0)
        sr_bits = fpsim_sr_bits_default(fmt);
    if (sr_bits < 1 || sr_bits > 32)
        return fpsim_fail(FPSIM_EINVAL, "sr_bits %d out of range 1..32", sr_bits);

    memset(out, 0, sizeof *out);
    out->format = f->id;
    out->round = (uint8_t)mode;
    out->sr_bits = (uint8_t)sr_bits;
    out->bits = f->bits;
    out->ebits = f->ebits;
    out->mbits = f->mbits;
    out->is_signed = f->is_signed;
    out->specials = f->specials;
    out->flags = r->flags;
    out->bias = f->bias;
    out->max_mag = f->max_mag;
    out->ovf_pos = r->ovf_pos;
    out->ovf_neg = r->ovf_neg;
    out->inf_pos = r->inf_pos;
    out->inf_neg = r->inf_neg;
    out->nan_pos = r->nan_pos;
    out->nan_neg = r->nan_neg;
    out->e8m0_zero = r->e8m0_zero;
    out->e8m0_neg = r->e8m0_neg;
    out->policy = (uint16_t)pi;
    return FPSIM_OK;
}
