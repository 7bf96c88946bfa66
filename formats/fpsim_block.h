/* fpsim_block.h: block-scaled quantizers (MX, NVFP4, block FP8, per-tensor FP8), bit-exact.
 *
 * A scheme (fpsim_scheme) is plain data naming one implementation's complete rule: element format,
 * block shape, scale rule, the order of FP32 operations, and what NaN/Inf/zero blocks do. Every
 * [DIFF] point of docs/formats-spec.md sections 4-7 is a named value of one field. Schemes are
 * written as text `NAME[:key=value,...]` (docs/quantizers.md lists every key and default):
 *
 *   NAME  mxfp8-e4m3 | mxfp8-e5m2 | mxfp6-e2m3 | mxfp6-e3m2 | mxfp4 | nvfp4 | fp8-block | fp8-tensor
 *   rule  MX E8M0 scale rule: floor | ceil | even | rceil | rceil-sat | microxcaling | gfloat
 *   nan   NaN inside a block: propagate (torch.amax) | ignore (fmaxf, TE)
 *   chain NVFP4 operation order: te | torchao | torchao-cuda
 *   tile  1x16 | 16x16 | 1x32 | 32x32 | 1x128 | 128x128 (must suit the kind)
 *   scale block FP8 scale rule: te-pow2 | te-fp32 | deepgemm-fp32 | deepgemm-ue8m0 | vllm-cuda |
 *         vllm-native
 *   mode  per-tensor FP8: current | delayed | torchao
 *   fmt   FP8 element format of fp8-block / fp8-tensor: e4m3 | e5m2
 *   sr=0|1 rht=0|1 pow2=0|1 eps=FLOAT margin=INT history=INT algo=max|most_recent
 *   rhtsum NVFP4 RHT arithmetic: exact (one BF16 rounding of the exact sum) | mma (as TE's BF16
 *         tensor-core matmul computes it: formats/rht16_mma.h)
 *   cast  element conversion policy name of fpsim_formats (default: the emulated library's)
 *   ao=main|0.18 (torchao release for MX edge cases)  global=0|1 (NVFP4 torchao two-level)
 *
 * Orientation. A quantized operand has its blocks along its LAST (stored) dimension, the K of the
 * GEMM that consumes it. axis = FPSIM_AXIS_ROWS quantizes the rows x cols input as is (rowwise
 * copy); FPSIM_AXIS_COLS quantizes its transpose (columnwise copy, stored cols x rows like TE's
 * columnwise data), each copy from the high-precision input, never from the other copy. 2D tiles
 * give columnwise codes and scales that are exact transposes of the rowwise ones. The dequantized
 * tensor is always in the input's rows x cols shape.
 *
 * Library code: returns fpsim_status, never prints. */
#ifndef FPSIM_BLOCK_H
#define FPSIM_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_core_types.h" /* FPSIM_HD */
#include "fpsim_qstats.h"
#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpsim_scheme_kind {
    FPSIM_KIND_MX = 0,     /* E8M0 scale per 32 (OCP MX v1.0) */
    FPSIM_KIND_NVFP4,      /* E2M1, E4M3 scale per 16, FP32 global scale */
    FPSIM_KIND_FP8_BLOCK,  /* FP8, FP32 scale per 1x128 / 128x128 (DeepSeek-V3, TE, NeMo RL) */
    FPSIM_KIND_FP8_TENSOR, /* FP8, one FP32 scale per tensor */
    FPSIM_KIND_COUNT
} fpsim_scheme_kind;

typedef enum fpsim_mx_rule {
    FPSIM_MX_FLOOR = 0,     /* OCP / torchao FLOOR: exponent(amax) - emax */
    FPSIM_MX_CEIL,          /* torchao CEIL */
    FPSIM_MX_EVEN,          /* torchao EVEN: amax rounded to the element mantissa, then floor */
    FPSIM_MX_RCEIL,         /* torchao RCEIL: ceil(amax * fp32(1/max)), non-satfinite E8M0 */
    FPSIM_MX_RCEIL_SAT,     /* TE / cuBLAS: same with cvt.rp.satfinite (Inf amax -> 0xFE) */
    FPSIM_MX_MICROXCALING,  /* microsoft/microxcaling: float log2f, round-half-away elements */
    FPSIM_MX_GFLOAT,        /* graphcore gfloat: float64 log2, clip to [-127, 127] */
    FPSIM_MX_RULE_COUNT
} fpsim_mx_rule;

typedef enum fpsim_nan_policy {
    FPSIM_NAN_PROPAGATE = 0, /* a NaN in the block makes the block amax NaN (torch.amax) */
    FPSIM_NAN_IGNORE         /* NaN elements are skipped by the amax (CUDA fmaxf, TE) */
} fpsim_nan_policy;

typedef enum fpsim_nvfp4_chain {
    FPSIM_NVFP4_TE = 0,       /* TE core_nvfp4.cuh, formats-spec.md 5.2 */
    FPSIM_NVFP4_TORCHAO,      /* torchao nvfp4_quantize on CPU: true FP32 divisions */
    FPSIM_NVFP4_TORCHAO_CUDA, /* same on CUDA eager: tensor / python float = x * fp32(1/f) */
    FPSIM_NVFP4_CHAIN_COUNT
} fpsim_nvfp4_chain;

typedef enum fpsim_rht_sum {
    FPSIM_RHT_EXACT = 0, /* y_j = BF16_RNE(exact sum): TE's result whenever the FP32 accumulation is exact */
    FPSIM_RHT_MMA,       /* the BF16 MMA's block rule (16 products aligned, RZ to FP32), then BF16 RNE */
    FPSIM_RHT_SUM_COUNT
} fpsim_rht_sum;

typedef enum fpsim_fp8_block_scale {
    FPSIM_FP8B_TE_POW2 = 0,   /* TE: 448/amax rounded down to 2^k (scale), scale_inv = 1/scale */
    FPSIM_FP8B_TE_FP32,       /* TE with NVTE_FP8_BLOCK_SCALING_FP32_SCALES=1 */
    FPSIM_FP8B_DEEPGEMM_FP32, /* DeepGEMM: sf = max(amax,1e-4)/448, x * (1/sf) */
    FPSIM_FP8B_DEEPGEMM_UE8M0,/* DeepGEMM ceil_to_ue8m0(sf), bytes clamped to [1, 254] */
    FPSIM_FP8B_VLLM_CUDA,     /* vLLM's CUDA per_token_group_fp8_quant: sf = fmaxf(amax, 1e-10)/448,
                                 fminf(fmaxf(x / sf, -448), 448) (a NaN element gives -448) */
    FPSIM_FP8B_VLLM_NATIVE,   /* vLLM QuantFP8 forward_native in eager CUDA torch: sf =
                                 clamp(amax * fp32(1/448), min=1/(448*512)), clamp(x / sf) */
    FPSIM_FP8B_VLLM_CUDA_UE8M0, /* the same CUDA op with scale_ue8m0: sf = fmaxf(amax, 1e-10)/448,
                                 fmaxf(sf, 1e-10) rounded up to 2^k by bits; elements as vllm-cuda */
    FPSIM_FP8B_SCALE_COUNT
} fpsim_fp8_block_scale;

/* torchao release whose MX edge cases to follow (normal blocks agree in both). */
typedef enum fpsim_torchao_version {
    FPSIM_AO_MAIN = 0, /* torchao main (2026, formats-spec.md 4.2): x * 2^(127-e) from bits, non-finite
                          amax -> 0xFF, RCEIL = ceil(amax * fp32(1/max)) by bits, non-satfinite */
    FPSIM_AO_0_18      /* torchao 0.18.0 release: x / 2^(e-127) with the scale clamped to 2^-126
                          (so code 0 divides by 2^-126), Inf amax keeps its exponent, 0xFF divides
                          by +Inf; RCEIL = clamp(ceil(log2f(amax / max))) with Inf -> 0xFE and a
                          reciprocal of 1.0 for code 0 (eager CPU path) */
} fpsim_torchao_version;

typedef enum fpsim_tensor_mode {
    FPSIM_TENSOR_CURRENT = 0, /* TE Float8CurrentScaling */
    FPSIM_TENSOR_DELAYED,     /* TE DelayedScaling: scale from the amax history, used next call */
    FPSIM_TENSOR_TORCHAO,     /* torchao float8 (torchtitan) tensorwise */
    FPSIM_TENSOR_MODE_COUNT
} fpsim_tensor_mode;

typedef enum fpsim_amax_algo {
    FPSIM_AMAX_MAX = 0,     /* max over the history window */
    FPSIM_AMAX_MOST_RECENT  /* the last recorded amax */
} fpsim_amax_algo;

enum { FPSIM_AXIS_ROWS = 0, FPSIM_AXIS_COLS = 1 };

#define FPSIM_SCHEME_TEXT_MAX 256
#define FPSIM_CAST_NAME_MAX 24

/* One block-scaled quantizer, as plain data. Fill with fpsim_scheme_parse (or
 * fpsim_scheme_default + edits); fields not used by the kind are ignored. */
typedef struct fpsim_scheme {
    uint8_t kind;        /* fpsim_scheme_kind */
    uint8_t elem;        /* fpsim_format_id of the elements */
    uint8_t rule;        /* fpsim_mx_rule (MX) */
    uint8_t nan;         /* fpsim_nan_policy */
    uint8_t chain;       /* fpsim_nvfp4_chain (NVFP4) */
    uint8_t scale;       /* fpsim_fp8_block_scale (fp8-block) */
    uint8_t mode;        /* fpsim_tensor_mode (fp8-tensor) */
    uint8_t algo;        /* fpsim_amax_algo (delayed) */
    uint8_t sr;          /* NVFP4: stochastic rounding of elements (TE byte-per-element) */
    uint8_t rht;         /* NVFP4: 16-point random Hadamard transform on columnwise copies */
    uint8_t rhtsum;      /* fpsim_rht_sum: how the RHT's 16-term sums are computed */
    uint8_t pow2;        /* fp8-tensor current/torchao: power-of-two scale */
    uint8_t ao;          /* fpsim_torchao_version (MX rules floor/ceil/even/rceil) */
    uint8_t gscale;      /* NVFP4 torchao chains: 1 two-level (per-tensor FP32 scale), 0 single */
    uint16_t tile_rows;  /* block shape over the stored operand: 1 x N or N x N */
    uint16_t tile_cols;
    int32_t margin;      /* delayed: scale = (max * 2^-margin) / amax */
    int32_t history;     /* delayed: amax history length */
    float eps;           /* amax floor (TE amax_epsilon; DeepGEMM 1e-4; torchao float8 1e-12; vLLM
                            CUDA 1e-10); vllm-native: the floor of the scale sf, 1/(max*512) */
    char cast[FPSIM_CAST_NAME_MAX]; /* element policy for fpsim_spec_make ("" = the default) */
} fpsim_scheme;

/* Defaults of a scheme NAME (see fpsim_scheme_parse). */
fpsim_status fpsim_scheme_default(fpsim_scheme *out, const char *name);
/* Parse `NAME[:key=value,...]`; unknown names/keys/values -> FPSIM_ENAME/FPSIM_EINVAL with a
 * message listing the valid ones; combinations the kind cannot take -> FPSIM_EINVAL. */
fpsim_status fpsim_scheme_parse(fpsim_scheme *out, const char *text);
/* Canonical text with every key that decides bits (parses back to an equal scheme). */
fpsim_status fpsim_scheme_format(char *buf, size_t cap, const fpsim_scheme *s);
/* The scheme NAMEs in order; *count receives their number. */
const char *const *fpsim_scheme_names(size_t *count);
/* Line i (0 <= i < count) of the --list text: "NAME  description" and, on a second line, the
 * canonical text with every default. */
fpsim_status fpsim_scheme_list(size_t i, char *buf, size_t cap);
/* Short name of an enum value for outputs ("rceil-sat", "torchao-cuda", ...). */
const char *fpsim_mx_rule_name(int rule);
const char *fpsim_nvfp4_chain_name(int chain);
const char *fpsim_fp8_block_scale_name(int scale);
const char *fpsim_tensor_mode_name(int mode);
/* 1 if the scheme's tiles are 2D (16x16, 32x32, 128x128: tile_rows > 1). */
int fpsim_scheme_is_2d(const fpsim_scheme *s);

/* Options of one quantize call (NULL = defaults: rows, seed 0, stream 0, all outputs, threads
 * from fpsim_threads_default(), amax computed). */
enum {
    FPSIM_QWANT_DEQUANT = 1u << 0, /* fill dequant (input shape, float32) */
    FPSIM_QWANT_STATS = 1u << 1,   /* fill stats */
    FPSIM_QWANT_CUBLAS = 1u << 2,  /* fill the cuBLAS-layout scale copy */
    FPSIM_QWANT_ALL = 7u
};
typedef struct fpsim_qopts {
    int axis;             /* FPSIM_AXIS_ROWS | FPSIM_AXIS_COLS */
    uint64_t seed;        /* SR: Philox key */
    uint32_t stream;      /* SR: tensor/stream id (Philox counter word 2) */
    unsigned want;        /* FPSIM_QWANT_* */
    int threads;          /* <= 0: fpsim_threads_default() */
    int input_bf16;       /* the float input holds BF16 values (checked: FPSIM_EDATA if not) */
    int global_amax_given;/* use global_amax instead of computing it (NVFP4 / per-tensor; e.g.
                             after an all-reduce across ranks, or TE's post-RHT amax) */
    float global_amax;
} fpsim_qopts;
void fpsim_qopts_default(fpsim_qopts *o);

/* A quantized operand. Buffers are owned by the struct: fpsim_block_quantize (re)allocates them
 * as the shape requires; fpsim_qtensor_free releases them. Zero-initialize before first use. */
typedef struct fpsim_qtensor {
    fpsim_scheme scheme;  /* the scheme that produced it */
    int axis;             /* FPSIM_AXIS_* used */
    size_t rows, cols;    /* input (high-precision) shape */
    size_t qrows, qcols;  /* stored operand: rows x cols, or cols x rows for FPSIM_AXIS_COLS */
    /* Element codes, qrows x code_stride bytes. FP4: two per byte, even element in the low nibble
     * (code_stride = ceil(qcols/2)); every other format one code per byte. */
    uint8_t *codes;
    size_t code_stride;
    /* Plain scale grid over the stored operand, row-major srows x scols (one per block;
     * 2D tiles: one per tile). Partial blocks at the edges are zero-padded. */
    size_t srows, scols;
    uint8_t *scale_codes; /* MX: E8M0, NVFP4: E4M3; NULL for the FP8 kinds */
    float *scale_inv;     /* dequantization multiplier of every block as FP32: MX 2^(e-127),
                             NVFP4 the decoded E4M3 block scale (global scale not included),
                             FP8 the stored scale_inv / sf (what cuBLAS consumes) */
    /* cuBLAS-layout copy (FPSIM_QWANT_CUBLAS): MX / NVFP4 128x4 swizzle of scale_codes
     * (cublas_rows x cublas_cols bytes, padding 0); block FP8 VEC128_32F (1x128 tiles: stored as
     * ceil(qcols/128) x qrows padded to 4) or BLK128x128_32F (ceil(qrows/128) x ceil(qcols/128)
     * padded to 4) of scale_inv, padding 0. */
    size_t cublas_rows, cublas_cols;
    uint8_t *cublas_codes; /* MX / NVFP4 */
    float *cublas_f32;     /* block FP8 */
    /* Per-tensor values. NVFP4: global_amax, s_enc = 2688/amax (TE) and global_scale = the
     * per-tensor dequantization factor (TE S_dec = 1/S_enc; torchao per_tensor_scale).
     * fp8-tensor: tensor_scale = multiplier applied before the cast, global_scale = scale_inv.
     * global_amax is the tensor amax under the scheme's NaN policy (MX and block FP8: from the
     * statistics, NaN when neither statistics nor the caller's amax were asked for). */
    float global_amax;
    float s_enc;
    float global_scale;
    float tensor_scale;
    float *dequant;       /* rows x cols (input shape), float32; NULL unless wanted */
    fpsim_qstats stats;   /* filled when FPSIM_QWANT_STATS */
    size_t cap_codes, cap_scales, cap_cublas, cap_dequant; /* allocation sizes (internal) */
    /* Scratch kept between calls (internal): the stored operand of a columnwise copy and its
     * stored-orientation dequant, so that repeated calls do not fault in fresh pages. */
    float *work_src, *work_dq;
    size_t cap_work_src, cap_work_dq;
} fpsim_qtensor;

void fpsim_qtensor_free(fpsim_qtensor *t);
/* Code of stored element (i, j) of a quantized operand (unpacks FP4). */
uint32_t fpsim_qtensor_code(const fpsim_qtensor *t, size_t i, size_t j);

/* 1 for the block FP8 scale rules of vLLM's CUDA op per_token_group_fp8_quant (vllm-cuda and its
 * scale_ue8m0 form): fmaxf reduction from eps, fminf(fmaxf(x / sf, -max), max), satfinite cast. */
FPSIM_HD int fpsim_fp8_scale_vllm_op(int scale)
{
    return scale == FPSIM_FP8B_VLLM_CUDA || scale == FPSIM_FP8B_VLLM_CUDA_UE8M0;
}

/* The exponent field of the power of two that |x| rounds up to by its fields, as DeepGEMM's and
 * vLLM's UE8M0 scales do: the field, raised by one where the mantissa is not zero (abs_bits: the
 * bits of |x|, not NaN; a subnormal rounds up to field 1, FLT_MAX to 255). */
FPSIM_HD uint32_t fpsim_pow2_up_field(uint32_t abs_bits)
{
    return (abs_bits >> 23) + ((abs_bits & 0x7FFFFFu) != 0u);
}

/* deepgemm-ue8m0's scale from DeepGEMM's finite sf, as bits: ceil_to_ue8m0, the field of the
 * power of two above clamped to [1, 254]. Shared by the CPU and the GPU. */
FPSIM_HD uint32_t fpsim_deepgemm_ue8m0_bits(uint32_t sf_bits)
{
    const uint32_t e = fpsim_pow2_up_field(sf_bits & 0x7FFFFFFFu);
    return (e < 1u ? 1u : (e > 254u ? 254u : e)) << 23;
}

/* vllm-cuda-ue8m0's scale from vllm-cuda's sf, as bits: fmaxf(|sf|, 1e-10f) (0x2EDBE6FF; a NaN
 * sf gives it too) rounded up to a power of two by its fields (Inf stays Inf). The register
 * kernel of vLLM's per_token_group_quant.cu writes it so; shared by the CPU and the GPU. */
FPSIM_HD uint32_t fpsim_vllm_ue8m0_bits(uint32_t sf_bits)
{
    uint32_t a = sf_bits & 0x7FFFFFFFu;
    if (a > 0x7F800000u || a < 0x2EDBE6FFu) a = 0x2EDBE6FFu;
    return fpsim_pow2_up_field(a) << 23;
}

/* 1 if block FP8 scale rule `scale` divides each element by sf (vLLM), 0 if it multiplies by a
 * per-block multiplier as the other rules do. */
FPSIM_HD int fpsim_fp8_scale_divides(int scale)
{
    return fpsim_fp8_scale_vllm_op(scale) || scale == FPSIM_FP8B_VLLM_NATIVE;
}

/* 1 if quantizing along `axis` (FPSIM_AXIS_*) applies the scheme's RHT: NVFP4 rht=1 rotates
 * the columnwise copy only (TE's wgrad operands); a rowwise copy is not rotated. */
static inline int fpsim_scheme_rotates(const fpsim_scheme *s, int axis)
{
    return s->kind == FPSIM_KIND_NVFP4 && s->rht && axis == FPSIM_AXIS_COLS;
}

/* The element conversion policy the scheme's emulated library uses ("nv", "torch", "clamp",
 * "torchao"), taken when the scheme has no cast= of its own; the GPU driver takes the same. */
const char *fpsim_block_default_cast(const fpsim_scheme *s);

/* FPSIM_OK if scheme s accepts a rows x cols tensor quantized along `axis`, else the error that
 * fpsim_block_quantize would give for the shape (torchao's multiples of 32 and 16); lets a caller
 * refuse a shape before it starts work. */
fpsim_status fpsim_block_check_shape(const fpsim_scheme *s, size_t rows, size_t cols, int axis);

/* Stateless quantization of a rows x cols float32 tensor (row-major). For fp8-tensor delayed
 * scaling this uses a fresh state (scale 1.0); use fpsim_quantizer for steps. */
fpsim_status fpsim_block_quantize(fpsim_qtensor *out, const fpsim_scheme *s, const float *x,
                                  size_t rows, size_t cols, const fpsim_qopts *opt);
/* Same from BF16 bits (exact upcast, input_bf16 implied). */
fpsim_status fpsim_block_quantize_bf16(fpsim_qtensor *out, const fpsim_scheme *s,
                                       const uint16_t *x, size_t rows, size_t cols,
                                       const fpsim_qopts *opt);

/* A quantizer with state across calls: TE DelayedScaling keeps its amax history and the scale
 * computed after each call for the NEXT call. Other kinds are stateless through it. */
typedef struct fpsim_quantizer {
    fpsim_scheme scheme;
    float scale;          /* delayed: scale used by the next call (initially 1.0) */
    float *amax_history;  /* history[0] = slot the next call records into; length scheme.history */
    int32_t history_len;
    uint64_t steps;       /* calls so far */
} fpsim_quantizer;

fpsim_status fpsim_quantizer_init(fpsim_quantizer *q, const fpsim_scheme *s);
void fpsim_quantizer_free(fpsim_quantizer *q);
/* Quantize with the current state, then (delayed) record the amax and update the scale. */
fpsim_status fpsim_quantizer_quantize(fpsim_quantizer *q, fpsim_qtensor *out, const float *x,
                                      size_t rows, size_t cols, const fpsim_qopts *opt);

/* Building blocks exposed for tests and for the GPU mirror. */

/* E8M0 code of an MX block from its amax (NaN, Inf, 0 allowed) under s->rule / s->ao for
 * elements s->elem. */
uint8_t fpsim_mx_scale_code(float amax, const fpsim_scheme *s);
/* Element x of a block with E8M0 code e, scaled as the emulated implementation does it (multiply
 * by an exact reciprocal, or divide; its special cases for codes 0, 254, 255), before the
 * element cast. amax is the block amax (torchao 0.18 RCEIL reuses it for NaN blocks). */
float fpsim_mx_scale_element(float x, uint8_t e, float amax, const fpsim_scheme *s);
float fpsim_e8m0_value(uint8_t e); /* 2^(e-127); 0 -> 2^-127 (subnormal), 255 -> NaN */

/* 16-point RHT of one vector, TE / torchao sign vector, 0.25 normalization; y rounded to BF16
 * (returned as float holding a BF16 value). x and y may alias. */
void fpsim_rht16(float y[16], const float x[16]);
/* The same transform as a BF16 tensor-core MMA computes it (rhtsum=mma, formats/rht16_mma.h).
 * Vectors that fpsim_rht16_mma_is_exact passes take fpsim_rht16 of the BF16-rounded input, whose
 * bits are the model's there; the others take the model. */
void fpsim_rht16_mma(float y[16], const float x[16]);
/* Whether the rhtsum=mma model forms the exact sums of the BF16 values b[16] (FP32 bits), so that
 * its results are fpsim_rht16's: every input finite and the nonzero ones' exponents (a subnormal
 * counting as -126) within 12 binades. Then, in the model's units of 2^(E - 25) (rht16_mma.h), a
 * term is m 2^(18 - d) with 8-bit m and d <= 12: step 3 truncates nothing, every term and so
 * every sum is a multiple of 2^6, and |sum| < 16 * 2^8 * 2^18 = 2^30 has at most 24 significant
 * bits, so step 4 truncates nothing either; the unit 2^(-126 - 9) or coarser is on FP32's 2^-149
 * grid; a sum past FLT_MAX is Inf under both policies. One BF16 rounding of the same exact sum
 * remains in each. */
int fpsim_rht16_mma_is_exact(const uint32_t b[16]);
/* fpsim_rht16 or fpsim_rht16_mma, as the scheme's rhtsum says. */
void fpsim_rht16_scheme(float y[16], const float x[16], const fpsim_scheme *s);
/* Swizzled offset of scale (r, c) in the cuBLAS 128x4 layout of a grid with `scols` columns
 * (padded to 4). */
size_t fpsim_cublas_swizzle_offset(size_t r, size_t c, size_t scols);
/* TE compute_scale_from_amax (recipe_common.cuh): the FP32 multiplier for an amax. */
float fpsim_fp8_te_scale(float amax, float fp8_max, int pow2, float eps, float value_for_inf);
/* Largest finite value and largest power of two (emax) of an element format. */
float fpsim_block_elem_max(int elem);
int fpsim_block_elem_emax(int elem);

#ifdef FPSIM_BLOCK_INTERNAL
/* Shared by formats/block_*.c only: everything a row-group kernel needs, fixed before the
 * parallel loop so that the result cannot depend on the partition. */
#include <string.h>
#include "fpsim_core.h"
/* Element conversion of a run (block_convert.c): a vectorized path for RNE to signed formats
 * with signed zeros on finite in-range values, the core for everything else. */
typedef struct fpsim_block_fast {
    fpsim_spec spec;     /* the conversion (its definition: fpsim_round_f32) */
    int ok;              /* the fast path applies to this spec */
    uint32_t mbits, ebmin, maxbits, sign_shift;
    float sub_mul;       /* 2^(mbits - emin) */
    uint32_t max_mag;    /* largest finite magnitude code */
    int sr;              /* the spec rounds stochastically (fpsim_block_fast_sr_run) */
    uint32_t slow_above; /* |y| bits above this go to the core (NaN only for satfinite specs) */
    int simd;            /* 1: the AVX-512 twins (block_avx512.c) may run; tests clear it to
                            compare them with the portable loops */
} fpsim_block_fast;
void fpsim_block_fast_init(fpsim_block_fast *fc, const fpsim_spec *s);
/* codes[i] = round(x[i] * f) for f finite and nonzero (then x * f has the same bits whatever the
 * operand order: the only possible NaN is x's, quieted). Returns the number of finite x with
 * |x * f| > satmax (clipped). */
uint64_t fpsim_block_fast_run(uint8_t *restrict codes, const float *restrict x, size_t n, float f,
                              const fpsim_block_fast *fc, float satmax);
/* The same over a row of n elements in blocks of bs, block b scaled by fs[b] (each finite and
 * nonzero). */
uint64_t fpsim_block_fast_row(uint8_t *restrict codes, const float *restrict x, size_t n, size_t bs,
                              const float *restrict fs, const fpsim_block_fast *fc, float satmax);
/* Per block of bs along a row of n: m[b] = bits of max |x| over non-NaN elements, nan[b] = 1 if
 * the block holds a NaN. */
void fpsim_block_amax_row(const float *restrict x, size_t n, size_t bs, uint32_t *restrict m,
                          uint8_t *restrict nan);
/* The same over a tile row: nrows rows of n elements from x with row stride `stride`, block b
 * covering columns [b bs, (b + 1) bs) of every row (1 x bs blocks for nrows = 1, bs x bs tiles
 * for nrows = bs). At most FPSIM_BLOCK_TILE_NB blocks per call. */
enum { FPSIM_BLOCK_TILE_NB = 256 };
void fpsim_block_amax_tile(const float *x, size_t stride, size_t nrows, size_t n, size_t bs,
                           uint32_t *restrict m, uint8_t *restrict nan);
/* Stochastic rounding of a row in blocks of bs scaled by fs[b], with the random word
 * rbytes[i] << 24 for element i (8 random bits: the spec's sr_bits must be <= 8). */
uint64_t fpsim_block_fast_sr_row_bytes(uint8_t *restrict codes, const float *restrict x, size_t n,
                                       size_t bs, const float *restrict fs,
                                       const uint8_t *restrict rbytes, const fpsim_block_fast *fc,
                                       float satmax);
/* dst[k] = (codes[2k] & 15) | (codes[2k+1] & 15) << 4 for 2k + 1 < n. */
void fpsim_block_pack_fp4(uint8_t *restrict dst, const uint8_t *restrict codes, size_t n);
/* AVX-512 twins (block_avx512.c; callable only when fpsim_block_have_avx512()): the same bits as
 * the portable loops named in that file. bs: a multiple of 16. */
int fpsim_block_have_avx512(void);
/* 8 x 8 float transpose (AVX only; x86-64 builds): dst[j * dstride + i] = src[i * sstride + j]. */
void fpsim_block_transpose8x8_avx(float *dst, size_t dstride, const float *src, size_t sstride);
void fpsim_block_amax_row_avx512(const float *restrict x, size_t n, size_t bs, uint32_t *restrict m,
                                 uint8_t *restrict nan);
void fpsim_block_amax_tile_avx512(const float *restrict x, size_t stride, size_t nrows, size_t n,
                                  size_t bs, uint32_t *restrict m, uint8_t *restrict nan);
uint32_t fpsim_block_amax_bits_avx512(const float *restrict x, size_t n, int *saw_nan);
/* x[i] = the float of BF16 bits h[i], i < n, and the block amaxes of x (as amax_tile, one row). */
void fpsim_block_widen_bf16_amax_avx512(float *restrict x, const uint16_t *restrict h, size_t n,
                                        size_t bs, uint32_t *restrict m, uint8_t *restrict nan);
uint64_t fpsim_block_fast_row_avx512(uint8_t *restrict codes, const float *restrict x, size_t n,
                                     size_t bs, const float *restrict fs, const fpsim_block_fast *fc,
                                     uint32_t satbits, uint32_t *slow);
uint64_t fpsim_block_fast_sr_row_avx512(uint8_t *restrict codes, const float *restrict x, size_t n,
                                        size_t bs, const float *restrict fs,
                                        const uint8_t *restrict rbytes, const fpsim_block_fast *fc,
                                        uint32_t satbits, uint32_t *slow);
void fpsim_block_pack_fp4_avx512(uint8_t *restrict dst, const uint8_t *restrict codes, size_t n);
/* Stored rows j0 .. j0 + 16 nbands - 1 of the RHT'd columnwise copy of a rows x cols input (rows
 * a multiple of 16, j0 + 16 nbands <= cols): stored row j = fpsim_rht16 (mma = 0) or
 * fpsim_rht16_mma (mma = 1) of each 16-vector of input column j, written as float to dst or, when
 * dst is NULL, as BF16 bits to dst16 (exact unless a result is NaN: callers redo a copy that saw
 * NaN in float). Returns the max |y| bits over non-NaN results; *saw_nan |= any NaN. */
uint32_t fpsim_block_rht_cols_avx512(float *restrict dst, uint16_t *restrict dst16,
                                     const float *restrict x, size_t rows, size_t cols, size_t j0,
                                     size_t nbands, int mma, int *saw_nan);
/* Stochastic rounding of a run scaled by f with the random word rbits[i] of element i (the
 * spec's sr_bits <= 8 at the top). */
uint64_t fpsim_block_fast_sr_run(uint8_t *restrict codes, const float *restrict x, size_t n, float f,
                                 const uint32_t *restrict rbits, const fpsim_block_fast *fc,
                                 float satmax);
/* The same over a row in blocks of bs scaled by fs[b] (finite, nonzero). */
uint64_t fpsim_block_fast_sr_row(uint8_t *restrict codes, const float *restrict x, size_t n, size_t bs,
                                 const float *restrict fs, const uint32_t *restrict rbits,
                                 const fpsim_block_fast *fc, float satmax);
/* Bits of max |x| over the non-NaN elements of a run (0 if none); *saw_nan |= any NaN. */
uint32_t fpsim_block_amax_bits(const float *restrict x, size_t n, int *saw_nan);
typedef struct fpsim_block_plan {
    fpsim_scheme s;
    fpsim_spec elem;      /* element conversion (nearest) */
    fpsim_spec elem_sr;   /* NVFP4 element conversion under stochastic rounding (8 bits) */
    fpsim_spec scale8;    /* NVFP4 E4M3 block-scale conversion */
    float elem_max;
    const float *src;     /* stored operand, qrows x qcols row-major (rotated for RHT) */
    const uint16_t *src_bf16; /* NVFP4 only: the stored operand as BF16 bits instead of src (the
                                 RHT'd copy, whose values are BF16) */
    size_t qrows, qcols;
    fpsim_qtensor *out;
    float *dq;            /* stored-orientation dequant (qrows x qcols) or NULL */
    uint64_t seed;
    uint32_t stream;
    int bf16_in;
    /* per-tensor values fixed before the loop */
    float s_enc, s_dec;   /* NVFP4 TE: 2688/amax and 1/S_enc */
    float pts, pts_rcp;   /* NVFP4 torchao: per_tensor_scale and 1/per_tensor_scale */
    float tscale, tscale_inv; /* fp8-tensor: multiplier and scale_inv */
    float elem_lut[256];  /* decoded element codes */
    fpsim_block_fast fast; /* element conversion of runs (from elem) */
    fpsim_block_fast fast_sr; /* NVFP4 stochastic-rounding conversion of runs (from elem_sr) */
    fpsim_block_fast fast_scale; /* NVFP4 E4M3 block-scale conversion of runs (from scale8) */
    float scale_lut[256];  /* decoded NVFP4 scale codes */
    uint64_t *group_sat;  /* per group: elements clipped */
    uint64_t *group_zero; /* per group: blocks with amax 0 */
} fpsim_block_plan;
void fpsim_block_mx_group(const fpsim_block_plan *p, size_t g);
void fpsim_block_nvfp4_group(const fpsim_block_plan *p, size_t g);
void fpsim_block_fp8_group(const fpsim_block_plan *p, size_t g);
/* Store a run of codes into row r from column c0 (FP4: nibbles, even element low; the row's
 * bytes start zeroed). */
static inline void fpsim_block_store_run(fpsim_qtensor *o, size_t r, size_t c0, const uint8_t *codes,
                                         size_t n, int fp4)
{
    uint8_t *row = o->codes + r * o->code_stride;
    if (!fp4) {
        memcpy(row + c0, codes, n);
        return;
    }
    size_t i = 0;
    if (c0 & 1u) { /* odd start: high nibble of the shared byte */
        row[c0 >> 1] |= (uint8_t)((codes[0] & 0xFu) << 4);
        i = 1;
    }
    fpsim_block_pack_fp4(row + ((c0 + i) >> 1), codes + i, n - i);
    i += (n - i) & ~(size_t)1;
    if (i < n)
        row[(c0 + i) >> 1] |= (uint8_t)(codes[i] & 0xFu);
}
/* Float value of every code of an 8-bit-or-smaller format (dequantization table). */
static inline void fpsim_block_decode_table(float lut[256], const fpsim_spec *s)
{
    for (uint32_t c = 0; c < 256; c++) {
        uint32_t b = fpsim_decode_f32(c & ((1u << s->bits) - 1u), s);
        memcpy(&lut[c], &b, 4);
    }
}
#endif

#ifdef __cplusplus
}
#endif
#endif
