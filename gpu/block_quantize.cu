/* block_quantize.cu: block-scaled quantizers on the GPU (MX, NVFP4, block FP8, per-tensor FP8).
 *
 * One kernel walks the STORED operand (the input for rowwise copies, its transpose for columnwise
 * ones) in chunks of C consecutive elements along the stored row (C = 16 for NVFP4, 32 otherwise);
 * one thread owns one chunk in registers, so the input is read once. A tile (1 x TC or TR x TC)
 * is G = TC / C chunks wide and TR rows high; the threads of a tile sit in one CTA and reduce their
 * amax through shared memory (atomicMax on the bits of |x|: unsigned order is float order for
 * non-negative values, NaN above Inf, so "propagate" is a plain max and "ignore" drops NaN bits).
 * Thread placement: rowwise, consecutive threads take consecutive chunks of a row (16-byte vector
 * loads, whole sectors); columnwise, consecutive threads take consecutive stored rows (= input
 * columns), so each of the C strided loads is coalesced across the warp. Codes are written as
 * 16-byte (or 8-byte, FP4) vectors in both cases, since a chunk is contiguous in the stored operand.
 *
 * The arithmetic of each scheme lives in block_rules.cuh; the element conversion is the shared
 * core's fpsim_round_f32 with the same spec the CPU uses. */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "block_rules.cuh"
#include "cp_async.cuh"
#include "fast_tile.cuh"
#include "fpsim_formats.h"
#include "fpsim_qstats.h"
#include "gpu_internal.cuh"
#include "rht16.cuh"
#include "rht16_mma.h"

/* 1: rowwise 1 x TC tiles and per-tensor FP8 take kernel v7 (block_rows_fast_kernel.cuh) where
 * the scheme and element spec allow; 0: kernel v4 for them, as before v7. */
#ifndef FPSIM_GPU_ROWS_V7
#define FPSIM_GPU_ROWS_V7 1
#endif

/* 1: columnwise 1 x TC tiles take kernel v8 (block_cols_fast_kernel.cuh) where it applies; 0: v5. */
#ifndef FPSIM_GPU_COLS_V8
#define FPSIM_GPU_COLS_V8 1
#endif

/* 1: rowwise 2D tiles take kernel v6 (block_tiles_kernel.cuh) where the shape allows; 0: the
 * general kernel for every 2D tile, as before v6. */
#ifndef FPSIM_GPU_TILES_FAST
#define FPSIM_GPU_TILES_FAST 1
#endif

/* 1: rowwise NVFP4 16x16 tiles (TE chain) take kernel v9 (block_tiles16_fast_kernel.cuh) where
 * the shape allows; 0: kernel v6 for them, as before v9. */
#ifndef FPSIM_GPU_TILES16_V9
#define FPSIM_GPU_TILES16_V9 1
#endif

namespace {

/* The rowwise copy's outputs where kernel v8 codes it from the columnwise copy's staged tiles
 * (fpsim_gpu_block_quantize2_dev: both copies from one read of the input). */
struct qrows_out {
    uint8_t *codes, *scale_codes, *cub8;
    float *scale_inv, *cub32;
    unsigned long long *counters; /* NULL: not counted */
    size_t code_stride, scols, cublas_cols;
};

struct qargs {
    const void *x;
    int bf16, bf16_vinf, rht, rhtmma, amax_only, axis, kind, elem, rule, ao, gscale, chain, fp8scale, mode, pow2, sr, fp4, nan_ignore;
    int divides;    /* fpsim_fp8_scale_divides: vLLM's rules, x / sf (block FP8) */
    int divide_hw;  /* divides, and kernels v4-v8 may code its tiles by divide_fast.cuh (no division) */
    float eps, fp8max;
    fpsim_spec es;    /* element spec */
    fpsim_spec e4m3;  /* NVFP4 block-scale spec (E4M3 RNE satfinite) */
    size_t rows, cols, qrows, qcols, code_stride, srows, scols, cublas_rows, cublas_cols;
    int TR, TC, G, RC, CC;
    size_t rect_cols, nrect;
    uint8_t *codes, *scale_codes, *cub8;
    float *scale_inv, *cub32, *tvals;
    const uint32_t *gamax; /* tensor |amax| bits on the device, or NULL */
    uint32_t *amax_out;    /* amax_only: where the tensor amax goes */
    float gamax_given;
    int use_given;
    uint64_t seed;
    uint32_t stream;
    /* SR: the Philox round keys of the seed (fpsim_philox_round_keys), so that the kernels read
     * them as constant operands instead of stepping the key per block (sr_block16) */
    uint32_t sr_round_keys[20];
    int want_cublas;
    int fast_mode;      /* FAST_* of fast_tile.cuh: whether tiles with no NaN/Inf take the short path */
    int hw_nvfp4_scale; /* NVFP4 TE on sm_89+: finite blocks round their E4M3 scale with cvt */
    uint32_t v8_group;  /* kernel v8: tile rows taken together (a power of two; its tile order) */
    unsigned long long *counters; /* statistics wanted: [0] saturated elements, [1] zero-amax
                                   * blocks (the quantizer alone sees them); NULL: not counted */
    qrows_out rw;                 /* kernel v8 with DUAL: the rowwise copy */
};

/* Statistics counters (formats/block_*.c): a finite input whose scaled value (before the NVFP4
 * torch chains' clamp) exceeds the element maximum is saturated; a block whose amax is 0 counts. */
__device__ __forceinline__ uint32_t saturates(float x, float y_pre, float elem_max)
{
    return isfinite(x) && fabsf(y_pre) > elem_max;
}

/* Stored element (r, k) of the operand: x[r][k] rowwise, x[k][r] columnwise. */
template <int BF16> __device__ __forceinline__ float load_elem(const qargs &a, size_t r, size_t k)
{
    size_t i = a.axis == FPSIM_AXIS_ROWS ? r * a.cols + k : k * a.cols + r;
    if (BF16) return __uint_as_float((uint32_t) static_cast<const uint16_t *>(a.x)[i] << 16);
    return static_cast<const float *>(a.x)[i];
}

template <int C, int BF16> __device__ __forceinline__ void load_chunk(const qargs &a, size_t r, size_t k0, float v[C])
{
    int inside = r < a.qrows && k0 + C <= a.qcols;
    if (inside && a.axis == FPSIM_AXIS_ROWS) {
        size_t i = r * a.cols + k0;
        constexpr int PER = BF16 ? 8 : 4;
        if ((i % PER) == 0) {
            const uint4 *p = reinterpret_cast<const uint4 *>(BF16 ? (const void *)(static_cast<const uint16_t *>(a.x) + i)
                                                                   : (const void *)(static_cast<const float *>(a.x) + i));
            uint4 w[C / PER];
#pragma unroll
            for (int q = 0; q < C / PER; q++) w[q] = __ldcs(p + q);
#pragma unroll
            for (int q = 0; q < C / PER; q++) {
                if (BF16) {
                    const uint16_t *h = reinterpret_cast<const uint16_t *>(&w[q]);
#pragma unroll
                    for (int j = 0; j < 8; j++) v[q * 8 + j] = __uint_as_float((uint32_t)h[j] << 16);
                } else {
                    const float *f = reinterpret_cast<const float *>(&w[q]);
#pragma unroll
                    for (int j = 0; j < 4; j++) v[q * 4 + j] = f[j];
                }
            }
            return;
        }
    }
#pragma unroll
    for (int j = 0; j < C; j++) v[j] = (r < a.qrows && k0 + j < a.qcols) ? load_elem<BF16>(a, r, k0 + j) : 0.f;
}

/* |v| as bits for an amax: nan_mode 0 keeps NaN (propagate: NaN bits sort above Inf), 1 drops
 * NaN (fmaxf), 2 drops NaN and Inf (the statistics' max over finite inputs). */
__device__ __forceinline__ uint32_t abs_bits(float v, int nan_mode)
{
    uint32_t b = __float_as_uint(v) & 0x7FFFFFFFu;
    return (nan_mode == 1 && b > FPSIM_F32_INF_BITS) || (nan_mode == 2 && b >= FPSIM_F32_INF_BITS) ? 0u : b;
}

/* Per-tensor values, the same in every thread, as formats/block_quantize.c fixes them before its
 * loop: t[0..3] = the fpsim_qtensor fields global_amax, s_enc, global_scale, tensor_scale (1.0 when
 * the kind has none), t[4] = the tensor's element multiplier (NVFP4 torchao 1/per_tensor_scale,
 * fp8-tensor scale), t[5] = NVFP4 TE S_dec. KIND as scale_of_tile's (-1: a.kind). */
template <int KIND = -1> __device__ __forceinline__ void tensor_values(const qargs &a, float t[6])
{
    const int kind = KIND < 0 ? a.kind : KIND;
    float amax = a.use_given ? a.gamax_given : (a.gamax ? __uint_as_float(*a.gamax) : 0.f);
    if (!a.use_given && fpsim_isnan_bits(__float_as_uint(amax))) amax = __uint_as_float(0x7FC00000u); /* C NAN */
    t[0] = amax;
    t[1] = 1.f;
    t[2] = 1.f;
    t[3] = 1.f;
    t[4] = 1.f;
    t[5] = 1.f;
    if (kind == FPSIM_KIND_NVFP4) {
        if (a.chain == FPSIM_NVFP4_TE) {
            /* TE core_nvfp4.cuh: S_enc = fp32(448 * 6) / amax, fminf(., FLT_MAX) (NaN -> FLT_MAX),
             * 1.0 when amax is 0 or the quotient is 0 (Inf amax); S_dec = 1/S_enc. */
            float se = fpsim_fmin_c(fpsim_div_x86(2688.0f, amax), FLT_MAX);
            if (amax == 0.f || se == 0.f) se = 1.0f;
            t[1] = se;
            t[5] = __fdiv_rn(1.0f, se);
            t[2] = t[5];
        } else {
            /* torchao: per_tensor_scale = amax / 2688.0 (CPU true division; CUDA eager amax *
             * fp32(1/2688)); 1.0 / per_tensor_scale a true reciprocal. */
            float pts = a.chain == FPSIM_NVFP4_TORCHAO_CUDA ? fpsim_mul_x86(amax, __frcp_rn(2688.0f))
                                                            : fpsim_div_x86(amax, 2688.0f);
            float rcp = fpsim_div_x86(1.0f, pts);
            t[1] = rcp;
            t[2] = a.gscale ? pts : 1.0f;
            t[4] = rcp;
            t[5] = pts;
        }
    } else if (kind == FPSIM_KIND_FP8_TENSOR) {
        float sc = 1.0f;
        if (a.mode == FPSIM_TENSOR_CURRENT) {
            sc = fpsim_fp8_te_scale_dev(amax, a.fp8max, a.pow2, a.eps,
                                        a.bf16_vinf ? __uint_as_float(0x7F7F0000u) : FLT_MAX);
        } else if (a.mode == FPSIM_TENSOR_TORCHAO) {
            /* torchao float8_utils amax_to_scale: fp32(max / clamp(amax_f64, EPS)), EPS the Python
             * float 1e-12 when the scheme's eps is fp32(1e-12). */
            double e = a.eps == 1e-12f ? 1e-12 : (double)a.eps;
            double m = (double)amax;
            if (!isnan(m) && m < e) m = e;
            sc = __double2float_rn(__ddiv_rn((double)a.fp8max, m));
            if (a.pow2) {
                /* exp2f(floorf(log2f(sc))). sc is NaN, 0 (an Inf amax), Inf (a zero amax under
                 * eps = 0) or at least fp8max / FLT_MAX > 2^-126: exp2f gives NaN, 0, Inf, or 2^l
                 * exactly for l in [-126, 127], which the bits below write */
                const float l = floorf(fpsim_log2f_dev(sc));
                sc = isfinite(l) ? __uint_as_float((uint32_t)((int)l + 127) << 23) : (l > 0.0f ? l : sc);
            }
        }
        t[3] = sc;
        t[4] = sc;
        t[2] = fpsim_div_x86(1.0f, sc);
    }
}

struct tile_scale {
    uint32_t code; /* E8M0 or E4M3 scale code */
    float inv;     /* dequantization multiplier stored in scale_inv */
    float mult;    /* element multiplier (NVFP4, FP8) */
};

/* The block amax the scale rules see, from the raw max of |x| bits: a NaN amax (nan=propagate)
 * is the CPU's NAN constant (positive quiet NaN). */
__device__ __forceinline__ float tile_amax_value(uint32_t amax_bits)
{
    return fpsim_isnan_bits(amax_bits) ? __uint_as_float(0x7FC00000u) : __uint_as_float(amax_bits);
}

/* KIND >= 0: the scheme kind known at compile time, so that the kernel carries only that kind's
 * rules (kernels v6-v8; with every kind's code, v6's 64-register 128x128 CTAs ran 12% slower,
 * gpu/RESULTS.md runs 26-31); -1: a.kind. */
template <int KIND = -1>
__device__ __forceinline__ tile_scale scale_of_tile(const qargs &a, uint32_t amax_bits, const float tv[6])
{
    const int kind = KIND < 0 ? a.kind : KIND;
    tile_scale s;
    const float amax = tile_amax_value(amax_bits);
    s.code = 0;
    s.mult = 1.f;
    if (kind == FPSIM_KIND_MX) {
        s.code = fpsim_mx_scale_code_dev(amax, a.rule, a.ao, a.elem);
        s.inv = fpsim_e8m0_value_dev(s.code);
    } else if (kind == FPSIM_KIND_NVFP4) {
        float sb;
        if (a.chain == FPSIM_NVFP4_TE) {
            /* d = block_amax * (S_enc * fp32(1/6)), ONE rounding of the product; fminf(d, FLT_MAX). */
            float te_mul = __fmul_rn(tv[1], __frcp_rn(6.0f));
            sb = fpsim_fmin_c(fpsim_mul_x86(amax, te_mul), FLT_MAX);
        } else {
            int cuda = a.chain == FPSIM_NVFP4_TORCHAO_CUDA;
            float bs = cuda ? fpsim_mul_x86(amax, __frcp_rn(6.0f)) : fpsim_div_x86(amax, 6.0f);
            if (a.gscale) bs = fpsim_div_x86(bs, tv[5]);
            sb = fpsim_clamp_torch(bs, 0.015625f, 448.0f);
        }
        s.code = fpsim_round_f32(__float_as_uint(sb), &a.e4m3, 0);
        s.inv = __uint_as_float(fpsim_decode_f32(s.code, &a.e4m3));
        /* torch's E4M3 -> float of a NaN code: 0x7FF00000 with the code's sign */
        if (a.chain != FPSIM_NVFP4_TE && (s.code & 0x7Fu) == 0x7Fu)
            s.inv = __uint_as_float(0x7FF00000u | ((s.code & 0x80u) << 24));
        if (a.chain == FPSIM_NVFP4_TE)
            s.mult = fpsim_fmin_c(fpsim_div_x86(1.0f, fpsim_mul_x86(s.inv, tv[5])), FLT_MAX);
        else if (a.gscale)
            s.mult = fpsim_div_x86(tv[4], s.inv);
        else
            s.mult = fpsim_div_x86(1.0f, s.inv);
    } else if (kind == FPSIM_KIND_FP8_BLOCK) {
        if (fpsim_fp8_scale_vllm_op(a.fp8scale)) {
            /* vLLM's CUDA op: fmaxf(eps, amax) (a NaN amax only under nan=propagate), sf = amax / 448;
             * the x86 division so that a NaN amax keeps the CPU's NaN bits (__fdiv_rn gives 0x7FFFFFFF) */
            const float m = fpsim_isnan_bits(amax_bits) ? amax : (amax < a.eps ? a.eps : amax);
            s.inv = s.mult = fpsim_div_x86(m, a.fp8max);
            if (a.fp8scale == FPSIM_FP8B_VLLM_CUDA_UE8M0) /* scale_ue8m0: up to a power of two */
                s.inv = s.mult = __uint_as_float(fpsim_vllm_ue8m0_bits(__float_as_uint(s.inv)));
        } else if (a.fp8scale == FPSIM_FP8B_VLLM_NATIVE) {
            /* eager CUDA torch: amax * fp32(1/448), then clamp(min=eps) keeping a NaN */
            const float sf = fpsim_mul_torch(amax, __frcp_rn(a.fp8max));
            s.inv = s.mult = fpsim_isnan_bits(__float_as_uint(sf)) ? sf : (sf < a.eps ? a.eps : sf);
        } else if (a.fp8scale == FPSIM_FP8B_TE_POW2 || a.fp8scale == FPSIM_FP8B_TE_FP32) {
            float vinf = a.bf16_vinf ? __uint_as_float(0x7F7F0000u) : FLT_MAX;
            s.mult = fpsim_fp8_te_scale_dev(amax, a.fp8max, a.fp8scale == FPSIM_FP8B_TE_POW2, a.eps, vinf);
            s.inv = __fdiv_rn(1.0f, s.mult);
        } else {
            /* DeepGEMM on CUDA eager: sf = clamp(amax, eps) * fp32(1/448); ue8m0 rounds sf up to
             * 2^k by bits, byte clamped to [1, 254]; elements x * (1 / sf). */
            float m = fpsim_clamp_torch(amax, a.eps, __uint_as_float(FPSIM_F32_INF_BITS));
            float sf = fpsim_mul_x86(m, __frcp_rn(a.fp8max));
            if (a.fp8scale == FPSIM_FP8B_DEEPGEMM_UE8M0 && isfinite(sf))
                sf = __uint_as_float(fpsim_deepgemm_ue8m0_bits(__float_as_uint(sf)));
            s.mult = fpsim_div_x86(1.0f, sf);
            s.inv = sf;
        }
    } else { /* per-tensor */
        s.mult = tv[4];
        s.inv = tv[2];
    }
    return s;
}

/* The scaled element, before the element cast. */
template <int KIND = -1> __device__ __forceinline__ float scale_element(const qargs &a, float x, const tile_scale &ts)
{
    const int kind = KIND < 0 ? a.kind : KIND; /* as scale_of_tile's */
    if (kind == FPSIM_KIND_MX) return fpsim_mx_scale_element_dev(x, ts.code, a.rule, a.ao);
    /* vLLM's dividing rules (formats/block_fp8.c divide_block): x / sf clamped to +-max, by
     * fmaxf / fminf (a NaN quotient gives -max) in the CUDA op, by torch.clamp (NaN kept) in eager */
    if (kind == FPSIM_KIND_FP8_BLOCK && fpsim_fp8_scale_vllm_op(a.fp8scale))
        return fminf(fmaxf(__fdiv_rn(x, ts.inv), -a.fp8max), a.fp8max);
    if (kind == FPSIM_KIND_FP8_BLOCK && a.fp8scale == FPSIM_FP8B_VLLM_NATIVE)
        return fpsim_clamp_torch(fpsim_div_x86(x, ts.inv), -a.fp8max, a.fp8max);
    /* TE: x * enc with enc finite (plain C on the CPU: x's NaN); torch chains: mul_torch */
    if (kind == FPSIM_KIND_NVFP4 && a.chain == FPSIM_NVFP4_TE) return fpsim_mul_x86(x, ts.mult);
    float y = fpsim_mul_torch(x, ts.mult);
    if (kind == FPSIM_KIND_NVFP4) y = fpsim_clamp_torch(y, -6.0f, 6.0f);
    return y;
}

/* Random bits of stored element idx (row-major linear index) for NVFP4 SR: byte (idx & 3) of the
 * Philox word fpsim_sr_word(seed, stream, idx / 4), at the top of the discarded field (TE's
 * byte-per-element emulation = the core's SR with 8 random bits). */
__device__ __forceinline__ uint32_t sr_bits_of(const qargs &a, uint64_t idx)
{
    uint32_t w = fpsim_sr_word(a.seed, a.stream, idx >> 2);
    return ((w >> (8 * (uint32_t)(idx & 3))) & 0xFFu) << 24;
}

/* 16-point RHT of one stored vector (formats/block_nvfp4.c fpsim_rht16): y_j = sum_i +-0.25 s_i
 * v_i in double, in index order (exact unless the terms span ~45 binades), then ONE rounding to
 * BF16 (RNE, BF16 subnormal grid 2^-133 below 2^-126), as TE's BF16 Hadamard matmul output. */
__device__ void rht16_bf16(float v[16])
{
    const int sign[16] = {1, 1, 1, -1, 1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, -1};
    double w[16];
    float out[16];
#pragma unroll
    for (int i = 0; i < 16; i++) w[i] = __dmul_rn(__dmul_rn(0.25, (double)v[i]), (double)sign[i]);
#pragma unroll
    for (int j = 0; j < 16; j++) {
        double acc = 0.0;
#pragma unroll
        for (int i = 0; i < 16; i++) acc = __dadd_rn(acc, (__popc(i & j) & 1) ? -w[i] : w[i]);
        if (acc == 0.0 || !isfinite(acc)) {
            out[j] = (float)acc;
            continue;
        }
        int ex;
        double m = frexp(fabs(acc), &ex);
        double sc = ldexp(m, 8);
        double fl = floor(sc), fr = __dsub_rn(sc, fl);
        if (fr > 0.5 || (fr == 0.5 && fmod(fl, 2.0) != 0.0)) fl = __dadd_rn(fl, 1.0);
        double r = ldexp(fl, ex - 8);
        if (fabs(acc) < 0x1p-126) {
            double q = __ddiv_rn(acc, 0x1p-133);
            double fq = floor(fabs(q)), rq = __dsub_rn(fabs(q), fq);
            if (rq > 0.5 || (rq == 0.5 && fmod(fq, 2.0) != 0.0)) fq = __dadd_rn(fq, 1.0);
            r = __dmul_rn(fq, 0x1p-133);
        }
        out[j] = __double2float_rn(acc < 0 ? -r : r);
    }
#pragma unroll
    for (int j = 0; j < 16; j++) v[j] = out[j];
}

/* The RHT of one stored vector under the scheme's rhtsum: the exact sum (rht16_bf16), or the BF16
 * tensor-core block rule of formats/rht16_mma.h, evaluated here in integers (kernel v8 issues the
 * MMA itself). */
__device__ void rht16_policy(float v[16], int mma)
{
    if (!mma) {
        rht16_bf16(v);
        return;
    }
    uint32_t in[16], out[16];
#pragma unroll
    for (int i = 0; i < 16; i++) in[i] = __float_as_uint(v[i]);
    fpsim_rht16_mma_bits(out, in);
#pragma unroll
    for (int i = 0; i < 16; i++) v[i] = __uint_as_float(out[i]);
}

__device__ __forceinline__ size_t swizzle128x4(size_t r, size_t c, size_t padded_cols)
{
    return ((r / 128) * (padded_cols / 4) + c / 4) * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4);
}

/* Write C codes of one chunk at element k0 of a stored row: packed into 32-bit words with shifts
 * (no byte arrays, which would live in local memory), 16- or 8-byte stores when the chunk is whole
 * and aligned, bytes otherwise. */
template <int C> __device__ __forceinline__ void store_codes(const qargs &a, uint8_t *row, size_t k0, const uint32_t code[C])
{
    if (a.fp4) {
        constexpr int NW = C / 8; /* 8 nibbles per word */
        uint32_t w[NW];
#pragma unroll
        for (int q = 0; q < NW; q++) {
            w[q] = 0;
#pragma unroll
            for (int j = 0; j < 8; j++) w[q] |= (code[8 * q + j] & 0xFu) << (4 * j);
        }
        uint8_t *p = row + k0 / 2;
        if (k0 + C <= a.qcols && ((uintptr_t)p % (4 * NW)) == 0) {
            if (NW == 4)
                *reinterpret_cast<uint4 *>(p) = make_uint4(w[0], w[1 % NW], w[2 % NW], w[3 % NW]);
            else
                *reinterpret_cast<uint2 *>(p) = make_uint2(w[0], w[1 % NW]);
        } else {
            for (int j = 0; j < C / 2; j++)
                if (k0 + 2 * j < a.qcols) p[j] = (uint8_t)(w[j / 4] >> (8 * (j % 4)));
        }
        return;
    }
    constexpr int NW = C / 4;
    uint32_t w[NW];
#pragma unroll
    for (int q = 0; q < NW; q++)
        w[q] = (code[4 * q] & 0xFFu) | ((code[4 * q + 1] & 0xFFu) << 8) | ((code[4 * q + 2] & 0xFFu) << 16) |
               (code[4 * q + 3] << 24);
    uint8_t *p = row + k0;
    if (k0 + C <= a.qcols && ((uintptr_t)p % 16) == 0) {
#pragma unroll
        for (int q = 0; q < NW / 4; q++)
            reinterpret_cast<uint4 *>(p)[q] = make_uint4(w[4 * q], w[4 * q + 1], w[4 * q + 2], w[4 * q + 3]);
    } else {
        for (int j = 0; j < C; j++)
            if (k0 + j < a.qcols) p[j] = (uint8_t)code[j];
    }
}

/* MAXT: the CTA size the kernel is compiled for (512 only for 128x128 tiles), so the common
 * 256-thread shapes may use up to 255 registers without spilling. */
template <int C, int BF16, int MAXT> __global__ void __launch_bounds__(MAXT) block_quantize_kernel(qargs a)
{
    __shared__ uint32_t slot[256];
    const int t = threadIdx.x;
    int rr, cc;
    if (a.axis == FPSIM_AXIS_ROWS) {
        rr = t / a.CC;
        cc = t % a.CC;
    } else {
        rr = t % a.RC;
        cc = t / a.RC;
    }
    const int nslot = (a.RC / a.TR) * (a.CC / a.G);
    const int my = (rr / a.TR) * (a.CC / a.G) + cc / a.G;
    const int solo = a.TR == 1 && a.G == 1; /* one thread per tile: no reduction */
    const int nan_mode = a.nan_ignore;
    const fpsim_spec es = a.es; /* in registers, not re-read through a parameter pointer */
    float tv[6];
    tensor_values(a, tv);
    if (blockIdx.x == 0 && t == 0 && !a.amax_only) {
        if (a.tvals)
            for (int i = 0; i < 4; i++) a.tvals[i] = tv[i];
        if (a.kind == FPSIM_KIND_FP8_TENSOR) a.scale_inv[0] = tv[2];
    }
    for (size_t rect = blockIdx.x; rect < a.nrect; rect += gridDim.x) {
        size_t r = (rect / a.rect_cols) * a.RC + rr;
        size_t c = (rect % a.rect_cols) * a.CC + cc;
        size_t k0 = c * C;
        float v[C];
        load_chunk<C, BF16>(a, r, k0, v);
        if (C == 16 && a.rht) rht16_policy(v, a.rhtmma);
        uint32_t am = 0;
#pragma unroll
        for (int j = 0; j < C; j++) am = max(am, abs_bits(v[j], nan_mode));
        if (a.amax_only) { /* the tensor amax over the stored operand (post-RHT) */
            for (int o = 16; o; o >>= 1) am = max(am, __shfl_xor_sync(0xFFFFFFFFu, am, o));
            if ((t & 31) == 0) atomicMax(a.amax_out, am);
            continue;
        }
        if (!solo) {
            __syncthreads();
            if (t < nslot) slot[t] = 0;
            __syncthreads();
            if (a.kind != FPSIM_KIND_FP8_TENSOR) atomicMax(&slot[my], am);
            __syncthreads();
            am = slot[my];
        }
        tile_scale ts = scale_of_tile(a, am, tv);
        if (r >= a.qrows || k0 >= a.qcols) continue;
        /* Elements: the scheme's scaling (one FP32 operation), then the shared core. */
        uint32_t code[C];
        uint32_t sat = 0;
#pragma unroll
        for (int j = 0; j < C; j++) {
            float y = scale_element(a, v[j], ts);
            if (a.counters && k0 + j < a.qcols) {
                const int clamps = a.kind == FPSIM_KIND_NVFP4 && a.chain != FPSIM_NVFP4_TE;
                const float pre = a.divides ? __fdiv_rn(v[j], ts.inv) : clamps ? fpsim_mul_torch(v[j], ts.mult) : y;
                sat += saturates(v[j], pre, fpsim_elem_max_dev(a.elem));
            }
            uint32_t rb = a.sr ? sr_bits_of(a, (uint64_t)r * a.qcols + k0 + j) : 0u;
            code[j] = fpsim_round_f32(__float_as_uint(y), &es, rb);
            if (k0 + j >= a.qcols) code[j] = 0; /* the padding nibble of an odd FP4 row stays 0 */
        }
        store_codes<C>(a, a.codes + r * a.code_stride, k0, code);
        if (sat) atomicAdd(&a.counters[0], (unsigned long long)sat);
        if (a.kind == FPSIM_KIND_FP8_TENSOR || (r % a.TR) != 0 || (c % a.G) != 0) continue;
        if (a.counters && am == 0) atomicAdd(&a.counters[1], 1ull);
        size_t sr_ = r / a.TR, sc_ = c / a.G;
        size_t si = sr_ * a.scols + sc_;
        if (a.scale_inv) a.scale_inv[si] = ts.inv;
        if (a.scale_codes) a.scale_codes[si] = (uint8_t)ts.code;
        if (!a.want_cublas) continue;
        if (a.kind == FPSIM_KIND_FP8_BLOCK) {
            if (a.TR == 1)
                a.cub32[sc_ * a.cublas_cols + sr_] = ts.inv; /* VEC128: K-blocks x rows */
            else
                a.cub32[sr_ * a.cublas_cols + sc_] = ts.inv; /* BLK128x128 */
        } else {
            /* 128x4 swizzle over the per-row grid; a 2D tile's scale serves each of its TR rows. */
            for (int i = 0; i < a.TR; i++) {
                size_t row_i = r + (size_t)i;
                if (row_i >= a.qrows) break;
                a.cub8[swizzle128x4(row_i, sc_, a.cublas_cols)] = (uint8_t)ts.code;
            }
        }
    }
}

#include "block_rows_kernel.cuh"
#include "block_rows_fast_kernel.cuh"
#include "block_cols_kernel.cuh"
#include "block_cols_fast_kernel.cuh"
#include "rht_amax_kernel.cuh"
#include "block_tiles_kernel.cuh"
#include "block_tiles16_fast_kernel.cuh"
#include "block_stats.cuh"

size_t cdiv(size_t a, size_t b) { return (a + b - 1) / b; }
size_t round_up(size_t a, size_t b) { return cdiv(a, b) * b; }

/* Element spec (NVFP4 SR: 8 random bits, one byte of a Philox word) and the NVFP4 scale spec. */
fpsim_status element_specs(fpsim_spec *es, fpsim_spec *scale8, const fpsim_scheme *s)
{
    const char *cast = s->cast[0] ? s->cast : fpsim_block_default_cast(s);
    fpsim_round mode = FPSIM_RNE;
    int sr_bits = 0;
    if (s->kind == FPSIM_KIND_MX && s->rule == FPSIM_MX_MICROXCALING) mode = FPSIM_RNA;
    if (s->kind == FPSIM_KIND_NVFP4 && s->sr) {
        mode = FPSIM_SR;
        sr_bits = 8;
    }
    fpsim_status st = fpsim_spec_make(es, (fpsim_format_id)s->elem, cast, mode, sr_bits);
    if (st != FPSIM_OK) return st;
    return fpsim_spec_make(scale8, FPSIM_E4M3, s->chain == FPSIM_NVFP4_TE ? "nv" : "torch", FPSIM_RNE, 0);
}

struct geom {
    size_t qrows, qcols, code_stride, srows, scols, cublas_rows, cublas_cols;
    int TR, TC, C, G, RC, CC;
};

fpsim_status geometry(geom *g, const fpsim_scheme *s, size_t rows, size_t cols, int axis)
{
    memset(g, 0, sizeof *g);
    if (axis != FPSIM_AXIS_ROWS && axis != FPSIM_AXIS_COLS)
        return fpsim_fail(FPSIM_EINVAL, "gpu block quantize: axis %d is neither rows nor cols", axis);
    if (s->kind >= FPSIM_KIND_COUNT) return fpsim_fail(FPSIM_EINVAL, "gpu block quantize: scheme kind %u", s->kind);
    g->qrows = axis == FPSIM_AXIS_ROWS ? rows : cols;
    g->qcols = axis == FPSIM_AXIS_ROWS ? cols : rows;
    int fp4 = s->elem == FPSIM_E2M1;
    g->code_stride = fp4 ? cdiv(g->qcols, 2) : g->qcols;
    if (s->kind == FPSIM_KIND_FP8_TENSOR) {
        g->TR = 1;
        g->TC = 32;
        g->srows = g->scols = 1; /* scale_inv[0] = the tensor's scale_inv */
    } else {
        g->TR = s->tile_rows ? s->tile_rows : 1;
        g->TC = s->tile_cols;
        g->srows = cdiv(g->qrows, g->TR);
        g->scols = cdiv(g->qcols, g->TC);
    }
    g->C = g->TC < 32 ? g->TC : 32;
    if (g->C != 16 && g->C != 32) return fpsim_fail(FPSIM_EUNSUPPORTED, "gpu block quantize: tile width %d", g->TC);
    g->G = g->TC / g->C;
    if (g->TR == 1) {
        g->RC = axis == FPSIM_AXIS_ROWS ? 8 : 32;
        g->CC = axis == FPSIM_AXIS_ROWS ? 32 : 8;
    } else {
        if (g->TR != 16 && g->TR != 32 && g->TR != 128)
            return fpsim_fail(FPSIM_EUNSUPPORTED, "gpu block quantize: tile height %d", g->TR);
        g->RC = g->TR;
        g->CC = 256 / g->TR > g->G ? 256 / g->TR : g->G;
    }
    if (s->kind == FPSIM_KIND_MX || s->kind == FPSIM_KIND_NVFP4) {
        /* cuBLAS 128x4 layout of the per-row (1 x TC) scale grid; a 2D tile's scale repeated. */
        g->cublas_rows = round_up(g->qrows, 128);
        g->cublas_cols = round_up(g->scols, 4);
    } else if (s->kind == FPSIM_KIND_FP8_BLOCK) {
        if (g->TR == 1) { /* VEC128_32F: ceil(K/128) x rows padded to 4 */
            g->cublas_rows = g->scols;
            g->cublas_cols = round_up(g->qrows, 4);
        } else { /* BLK128x128_32F: ceil(rows/128) x ceil(K/128) padded to 4 */
            g->cublas_rows = g->srows;
            g->cublas_cols = round_up(g->scols, 4);
        }
    }
    return FPSIM_OK;
}

} // namespace

extern "C" fpsim_status fpsim_gpu_qbuf_alloc(fpsim_gpu_qbuf *b, const fpsim_scheme *s, size_t rows, size_t cols,
                                             int axis)
{
    memset(b, 0, sizeof *b);
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    geom g;
    if ((st = geometry(&g, s, rows, cols, axis)) != FPSIM_OK) return st;
    b->axis = axis;
    b->rows = rows;
    b->cols = cols;
    b->qrows = g.qrows;
    b->qcols = g.qcols;
    b->code_stride = g.code_stride;
    b->srows = g.srows;
    b->scols = g.scols;
    b->cublas_rows = g.cublas_rows;
    b->cublas_cols = g.cublas_cols;
    st = fpsim_gpu_alloc((void **)&b->codes, g.qrows * g.code_stride);
    if (st == FPSIM_OK && g.srows) st = fpsim_gpu_alloc((void **)&b->scale_inv, g.srows * g.scols * 4);
    if (st == FPSIM_OK && g.srows && (s->kind == FPSIM_KIND_MX || s->kind == FPSIM_KIND_NVFP4)) {
        st = fpsim_gpu_alloc((void **)&b->scale_codes, g.srows * g.scols);
        if (st == FPSIM_OK) st = fpsim_gpu_alloc((void **)&b->cublas_codes, g.cublas_rows * g.cublas_cols);
    }
    if (st == FPSIM_OK && s->kind == FPSIM_KIND_FP8_BLOCK)
        st = fpsim_gpu_alloc((void **)&b->cublas_f32, g.cublas_rows * g.cublas_cols * 4);
    if (st == FPSIM_OK) st = fpsim_gpu_alloc((void **)&b->tensor_values, 4 * sizeof(float));
    if (st == FPSIM_OK) st = fpsim_gpu_alloc((void **)&b->amax_bits, sizeof(uint32_t));
    if (st == FPSIM_OK) st = fpsim_gpu_alloc((void **)&b->counters, 2 * sizeof(unsigned long long));
    if (st != FPSIM_OK) fpsim_gpu_qbuf_free(b);
    return st;
}

extern "C" fpsim_status fpsim_gpu_qbuf_drop_scale_inv(fpsim_gpu_qbuf *b)
{
    if (!b) return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_qbuf_drop_scale_inv: NULL buffer");
    if (!b->scale_codes)
        return fpsim_fail(FPSIM_EINVAL, "fpsim_gpu_qbuf_drop_scale_inv: only MX and NVFP4 buffers (which have scale "
                                        "codes) can do without scale_inv");
    fpsim_gpu_free(b->scale_inv);
    b->scale_inv = NULL;
    return FPSIM_OK;
}

extern "C" void fpsim_gpu_qbuf_free(fpsim_gpu_qbuf *b)
{
    fpsim_gpu_free(b->codes);
    fpsim_gpu_free(b->scale_codes);
    fpsim_gpu_free(b->scale_inv);
    fpsim_gpu_free(b->cublas_codes);
    fpsim_gpu_free(b->cublas_f32);
    fpsim_gpu_free(b->tensor_values);
    fpsim_gpu_free(b->amax_bits);
    fpsim_gpu_free(b->counters);
    memset(b, 0, sizeof *b);
}

/* FPSIM_EINVAL unless b has its codes and, outside MX and NVFP4 (whose scale codes carry the
 * scales), its scale_inv; which: "" or "rowwise " in the message. */
static fpsim_status check_outputs(const fpsim_gpu_qbuf *b, const fpsim_scheme *s, const char *which)
{
    if (!b->codes || (!b->scale_inv && !(s->kind == FPSIM_KIND_MX || s->kind == FPSIM_KIND_NVFP4)))
        return fpsim_fail(FPSIM_EINVAL, "gpu block quantize: %s%s is NULL (only MX and NVFP4 may leave out "
                                        "scale_inv, their scale codes carry the scales)",
                          which, b->codes ? "scale_inv" : "codes");
    return FPSIM_OK;
}

/* Zero b's cuBLAS-layout scales (their padding stays 0; the kernels write the scales only). */
static fpsim_status clear_cublas_scales(const fpsim_gpu_qbuf *b, cudaStream_t cs)
{
    const size_t n = b->cublas_rows * b->cublas_cols;
    if (b->cublas_codes) FPSIM_CUDA_TRY(cudaMemsetAsync(b->cublas_codes, 0, n, cs));
    if (b->cublas_f32) FPSIM_CUDA_TRY(cudaMemsetAsync(b->cublas_f32, 0, n * 4, cs));
    return FPSIM_OK;
}

/* rows_too (columnwise calls only): the rowwise buffers that kernel v8 may fill from the same read
 * (fpsim_gpu_block_quantize2_dev); FPSIM_EINVAL unless allocated for this scheme and shape, rowwise. */
static fpsim_status check_rows_too(const fpsim_gpu_qbuf *b, const fpsim_scheme *s, size_t rows, size_t cols)
{
    geom g;
    fpsim_status st = geometry(&g, s, rows, cols, FPSIM_AXIS_ROWS);
    if (st != FPSIM_OK) return st;
    if (b->rows != rows || b->cols != cols || b->axis != FPSIM_AXIS_ROWS || b->qrows != g.qrows ||
        b->code_stride != g.code_stride || b->scols != g.scols)
        return fpsim_fail(FPSIM_EINVAL, "gpu block quantize: the rowwise buffers were allocated for another shape "
                                        "or axis");
    return check_outputs(b, s, "rowwise ");
}

/* The body of fpsim_gpu_block_quantize_dev; force_amax: compute the tensor amax even where the
 * scheme does not use it (the host API reports it in global_amax, like the CPU). rows_too: see
 * check_rows_too; *fused = 1 when the kernel wrote that copy too (else the caller quantizes it). */
static fpsim_status quantize_dev(fpsim_gpu_qbuf *out, const fpsim_scheme *s, const void *x, int x_is_bf16,
                                 size_t rows, size_t cols, const fpsim_qopts *opt, void *cuda_stream, int force_amax,
                                 fpsim_gpu_qbuf *rows_too = NULL, int *fused = NULL)
{
    if (fused) *fused = 0;
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    if (!out || !s || !x) return fpsim_fail(FPSIM_EINVAL, "gpu block quantize: NULL argument");
    fpsim_qopts o;
    if (opt)
        o = *opt;
    else
        fpsim_qopts_default(&o);
    geom g;
    if ((st = geometry(&g, s, rows, cols, o.axis)) != FPSIM_OK) return st;
    /* the CPU's shape rules (an empty tensor, the emulated implementations' block multiples, the RHT) */
    if ((st = fpsim_block_check_shape(s, rows, cols, o.axis)) != FPSIM_OK) return st;
    if (out->rows != rows || out->cols != cols || out->axis != o.axis || out->qrows != g.qrows)
        return fpsim_fail(FPSIM_EINVAL, "gpu block quantize: buffers were allocated for another shape or axis");
    if (!fpsim_gpu_aligned16(x)) return fpsim_fail(FPSIM_EINVAL, "gpu block quantize: input not 16-byte aligned");
    if (rows_too && o.axis != FPSIM_AXIS_COLS) rows_too = NULL;
    if (rows_too && (st = check_rows_too(rows_too, s, rows, cols)) != FPSIM_OK) return st;
    if ((st = check_outputs(out, s, "")) != FPSIM_OK) return st;
    qargs a;
    memset(&a, 0, sizeof a);
    if ((st = element_specs(&a.es, &a.e4m3, s)) != FPSIM_OK) return st;
    cudaStream_t cs = static_cast<cudaStream_t>(cuda_stream);
    a.x = x;
    a.bf16 = x_is_bf16 != 0;
    a.bf16_vinf = a.bf16 || o.input_bf16;
    a.axis = o.axis;
    a.kind = s->kind;
    a.elem = s->elem;
    a.rule = s->rule;
    a.ao = s->ao;
    a.gscale = s->gscale;
    a.chain = s->chain;
    a.fp8scale = s->scale;
    a.divides = s->kind == FPSIM_KIND_FP8_BLOCK && fpsim_fp8_scale_divides(s->scale);
    a.mode = s->mode;
    a.pow2 = s->pow2;
    a.sr = s->kind == FPSIM_KIND_NVFP4 && s->sr;
    a.rht = s->kind == FPSIM_KIND_NVFP4 && s->rht && o.axis == FPSIM_AXIS_COLS;
    a.rhtmma = a.rht && s->rhtsum == FPSIM_RHT_MMA;
    a.fp4 = s->elem == FPSIM_E2M1;
    a.nan_ignore = s->nan == FPSIM_NAN_IGNORE;
    a.eps = s->eps;
    a.fp8max = s->elem == FPSIM_E5M2 ? 57344.f : 448.f;
    a.rows = rows;
    a.cols = cols;
    a.qrows = g.qrows;
    a.qcols = g.qcols;
    a.code_stride = g.code_stride;
    a.srows = g.srows;
    a.scols = g.scols;
    a.cublas_rows = g.cublas_rows;
    a.cublas_cols = g.cublas_cols;
    a.TR = g.TR;
    a.TC = g.TC;
    a.G = g.G;
    a.RC = g.RC;
    a.CC = g.CC;
    size_t nchunks = cdiv(g.qcols, (size_t)g.C);
    a.rect_cols = cdiv(nchunks, (size_t)g.CC);
    a.nrect = cdiv(g.qrows, (size_t)g.RC) * a.rect_cols;
    a.codes = out->codes;
    a.scale_codes = out->scale_codes;
    a.scale_inv = out->scale_inv;
    a.cub8 = out->cublas_codes;
    a.cub32 = out->cublas_f32;
    a.tvals = out->tensor_values;
    a.seed = o.seed;
    const uint32_t sr_key[2] = {(uint32_t)o.seed, (uint32_t)(o.seed >> 32)};
    fpsim_philox_round_keys(sr_key, a.sr_round_keys);
    a.stream = o.stream;
    a.want_cublas = (o.want & FPSIM_QWANT_CUBLAS) != 0 && (out->cublas_codes || out->cublas_f32);
    a.fast_mode = fast_elem_mode(&a.es, fpsim_gpu_hw_cvt_available());
    a.hw_nvfp4_scale = s->kind == FPSIM_KIND_NVFP4 && s->chain == FPSIM_NVFP4_TE && fpsim_gpu_hw_cvt_available();
    /* the cast of a clamped quotient is the hardware's: E4M3/E5M2 RNE with no zero rule, sm_89+ */
    a.divide_hw = a.divides && a.fast_mode != FAST_NEVER &&
                  (a.es.format == FPSIM_E4M3 || a.es.format == FPSIM_E5M2);
    if ((o.want & FPSIM_QWANT_STATS) && out->counters) {
        FPSIM_CUDA_TRY(cudaMemsetAsync(out->counters, 0, 2 * sizeof(unsigned long long), cs));
        a.counters = out->counters;
    }

    unsigned threads = (unsigned)(g.RC * g.CC);
    size_t cap = (size_t)(fpsim_gpu_sm_count() > 0 ? fpsim_gpu_sm_count() : 132) * (threads > 256 ? 4 : 8);
    unsigned blocks = (unsigned)(a.nrect < cap ? a.nrect : cap);
    void (*kernel)(qargs);
    if (threads > 256)
        kernel = a.bf16 ? block_quantize_kernel<32, 1, 512> : block_quantize_kernel<32, 0, 512>;
    else if (g.C == 16)
        kernel = a.bf16 ? block_quantize_kernel<16, 1, 256> : block_quantize_kernel<16, 0, 256>;
    else
        kernel = a.bf16 ? block_quantize_kernel<32, 1, 256> : block_quantize_kernel<32, 0, 256>;

    /* vLLM's rules divide each element by the scale. Kernels v4 and v5 code a tile by
     * divide_fast.cuh where its form applies (divide_store_group), else by scale_group's exact
     * division; v6 has a dividing instance for a.divide_hw and divides exactly otherwise; v7 and v8
     * take these rules only where the form applies to the spec (a.divide_hw: needs_fdiv is 0). */
    const int needs_fdiv = a.divides && !a.divide_hw;

    /* Kernel v5 for columnwise 1 x TC tiles whose blocks fill the shape (block_cols_kernel.cuh). */
    block_cols_kernel_fn fast_cols = NULL;
    unsigned cols_blocks = 0;
    if (o.axis == FPSIM_AXIS_COLS && g.TR == 1 && rows * cols < ((size_t)1 << 31) && s->kind != FPSIM_KIND_FP8_TENSOR) {
        const size_t rin = g.TC > 32 ? (size_t)g.TC : 32, cin = 2048 / rin;
        if (rows % rin == 0 && cols % cin == 0 && !a.rhtmma) /* v5 has only the exact RHT */
            fast_cols = block_cols_kernel_pick(&a.es, s->kind, g.TC, a.sr, a.rht, a.bf16);
        if (fast_cols) cols_blocks = one_wave_ctas(fast_cols, 256, (rows / rin) * (cols / cin), 2);
    }

    /* Kernel v8 for columnwise 1 x TC tiles of the kinds' usual widths, in whole warp tiles
     * (block_cols_fast_kernel.cuh); v5 for the other shapes and chains it does not take. */
    block_cols_fast_kernel_fn fast8 = NULL;
    int dual8 = 0; /* fast8 writes rows_too as well */
    unsigned blocks8 = 0, threads8 = 0;
    size_t smem8 = 0;
#if FPSIM_GPU_COLS_V8
    if (o.axis == FPSIM_AXIS_COLS && g.TR == 1 && rows * cols < ((size_t)1 << 31) && a.fast_mode != FAST_NEVER &&
        !needs_fdiv && fpsim_gpu_hw_cvt_available() && rows % block_cols_fast_warp_rows(g.TC) == 0 &&
        cols % block_cols_fast_warp_cols(g.TC, a.bf16) == 0 && (uintptr_t)x % 16u == 0 &&
        ((s->kind == FPSIM_KIND_NVFP4 && s->chain == FPSIM_NVFP4_TE && g.TC == 16) ||
         (s->kind == FPSIM_KIND_MX && g.TC == 32) || (s->kind == FPSIM_KIND_FP8_BLOCK && g.TC == 128))) {
        const int rht8 = a.rht ? (a.rhtmma ? COLS_V8_RHT_MMA : COLS_V8_RHT_EXACT) : 0;
        fast8 = block_cols_fast_pick(s->kind, g.TC, a.es.format, a.sr, rht8, a.bf16, a.divide_hw);
        a.v8_group = block_cols_fast_group(a.es.format, a.bf16);
        /* the widest CTA tile (8, 4, 2 or 1 warp tiles side by side) that divides the columns */
        const size_t wcols = block_cols_fast_warp_cols(g.TC, a.bf16);
        unsigned wx = 8;
        while (cols % (wx * wcols) != 0)
            wx /= 2;
        threads8 = 32u * wx;
        /* both copies from this read: a dual form of the kernel, rowwise tiles inside the CTA tile,
         * and the same outputs wanted of both copies */
        const int rows_cub = rows_too && (rows_too->cublas_codes || rows_too->cublas_f32);
        if (fast8 && rows_too && !a.rht && (wx * wcols) % (size_t)g.TC == 0 && (!a.want_cublas || rows_cub)) {
            block_cols_fast_kernel_fn dual = block_cols_dual_pick(s->kind, g.TC, a.es.format, a.sr, a.bf16);
            if (dual) {
                fast8 = dual;
                dual8 = 1;
            }
        }
        smem8 = block_cols_fast_smem(wx, rht8);
        int per_sm = 0;
        if (fast8 &&
            (cudaFuncSetAttribute(fast8, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem8) != cudaSuccess ||
             cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fast8, (int)threads8, smem8) != cudaSuccess ||
             per_sm < 1)) {
            (void)cudaGetLastError(); /* not sticky: clear it, and take v5 instead */
            fast8 = NULL;
            dual8 = 0;
        }
        const size_t nt = (rows / block_cols_fast_warp_rows(g.TC)) * (cols / (wx * wcols));
        const size_t cap = (size_t)(fpsim_gpu_sm_count() > 0 ? fpsim_gpu_sm_count() : 132) * per_sm;
        blocks8 = (unsigned)(nt < cap ? nt : cap);
    }
#endif

    /* The tensor amax (over the stored operand: after the RHT when there is one), unless given.
     * Like the CPU driver: NVFP4 and per-tensor FP8 need it; other kinds report NaN, or with
     * statistics wanted (host API) the max over finite inputs. */
    int needs_amax = s->kind == FPSIM_KIND_NVFP4 || s->kind == FPSIM_KIND_FP8_TENSOR;
    int finite_amax = !needs_amax && force_amax && (o.want & FPSIM_QWANT_STATS);
    if (o.global_amax_given) {
        a.use_given = 1;
        a.gamax_given = o.global_amax;
    } else if (needs_amax || finite_amax) {
        if (a.rht) {
            FPSIM_CUDA_TRY(cudaMemsetAsync(out->amax_bits, 0, sizeof(uint32_t), cs));
            qargs am = a;
            am.amax_only = 1;
            am.amax_out = out->amax_bits;
            /* columnwise bf16: rht_amax_kernel.cuh's passes, without the quantizer's staging */
            const int own_pass = o.axis == FPSIM_AXIS_COLS &&
                                 rht_amax_launch(a.rhtmma, x, rows, cols, a.bf16, out->amax_bits, a.nan_ignore, cs);
            if (!own_pass) { /* else the quantizer kernel itself, with the max only */
                if (fast8)
                    fast8<<<blocks8, threads8, smem8, cs>>>(am, (uint32_t)rows, (uint32_t)cols);
                else if (fast_cols)
                    fast_cols<<<cols_blocks, 256, 0, cs>>>(am, (uint32_t)rows, (uint32_t)cols);
                else
                    kernel<<<blocks, threads, 0, cs>>>(am);
            }
            FPSIM_CUDA_LAUNCHED("block_quantize_kernel (amax)");
        } else if ((st = fpsim_gpu_amax_dev(out->amax_bits, x, a.bf16, rows * cols, finite_amax ? 2 : s->nan, cs)) !=
                   FPSIM_OK) {
            return st;
        }
        a.gamax = out->amax_bits;
    } else {
        a.use_given = 1;
        a.gamax_given = __builtin_nanf("");
    }
    if (a.want_cublas && (st = clear_cublas_scales(out, cs)) != FPSIM_OK) return st;
    /* Kernel v4 where the shape allows it: rowwise, 1 x TC tiles inside rows (or per-tensor),
     * whole 16-byte vectors, 32-bit indices, an element format with a fixed kernel. */
    const size_t n = rows * cols, V = a.bf16 ? 8 : 4;
    block_rows_kernel_fn fast = NULL;
    uint32_t tc = 0;
    if (o.axis == FPSIM_AXIS_ROWS && g.TR == 1 && !a.rht && n < ((size_t)1 << 31)) {
        int fits = s->kind == FPSIM_KIND_FP8_TENSOR ? n % V == 0
                                                    : cols % (size_t)g.TC == 0 && g.TC % V == 0 && g.TC / V <= 32;
        tc = s->kind == FPSIM_KIND_FP8_TENSOR ? 0u : (uint32_t)g.TC;
        if (fits) fast = block_rows_kernel_pick(&a.es, a.sr, a.bf16);
    }
    /* Kernel v7 where it applies: the same shapes as v4, nearest-even or NVFP4 SR, the scheme's usual tile
     * width (its lanes per tile are compiled in), NVFP4 only under the TE chain, and sm_89+. */
    block_rows_fast_kernel_fn fast7 = NULL;
#if FPSIM_GPU_ROWS_V7
    if (fast && !needs_fdiv && a.fast_mode != FAST_NEVER && fpsim_gpu_hw_cvt_available() && n % 16 == 0) {
        const int usual_tc = s->kind == FPSIM_KIND_MX      ? g.TC == 32
                             : s->kind == FPSIM_KIND_NVFP4 ? g.TC == 16 && s->chain == FPSIM_NVFP4_TE
                             : s->kind == FPSIM_KIND_FP8_BLOCK ? g.TC == 128
                                                               : 1;
        if (usual_tc) fast7 = block_rows_fast_pick(s->kind, a.es.format, a.bf16, a.sr, a.divide_hw);
    }
#endif
    if (fast7) { /* one wave of CTAs of 8 warps, grid-stride over the warp chunks inside */
        const size_t span = a.bf16 ? 1024 : 512;
        fast7<<<one_wave_ctas(fast7, 256, cdiv(cdiv(n, span), 8), 4), 256, 0, cs>>>(a, (uint32_t)n, (uint32_t)cols);
        FPSIM_CUDA_LAUNCHED("block_rows_fast_kernel");
        return FPSIM_OK;
    }
    /* Kernel v9 for rowwise NVFP4 16 x 16 tiles under the TE chain, nearest-even, on whole 16 x 64
     * chunks, sm_89+ (the scale's cvt), a fast mode other than FAST_NEVER (as v7). */
    block_tiles16_fast_kernel_fn fast9 = NULL;
#if FPSIM_GPU_TILES16_V9
    if (o.axis == FPSIM_AXIS_ROWS && s->kind == FPSIM_KIND_NVFP4 && s->chain == FPSIM_NVFP4_TE &&
        g.TR == 16 && g.TC == 16 && !a.sr && !a.rht && a.es.round == FPSIM_RNE && a.es.format == FPSIM_E2M1 &&
        a.fast_mode != FAST_NEVER && fpsim_gpu_hw_cvt_available() && rows % 16 == 0 && cols % 64 == 0 &&
        n < ((size_t)1 << 31))
        fast9 = block_tiles16_fast_pick(a.bf16, cols);
#endif
    if (fast9) { /* one wave of CTAs of 8 warps, grid-stride over the 16-row chunks inside */
        const size_t nb = cdiv((rows / 16) * (cols / block_tiles16_chunk_cols(a.bf16, cols)), 8);
        fast9<<<one_wave_ctas(fast9, 256, nb, 3), 256, 0, cs>>>(a, (uint32_t)rows, (uint32_t)cols);
        FPSIM_CUDA_LAUNCHED("block_tiles16_fast_kernel");
        return FPSIM_OK;
    }
    /* Kernel v6 for rowwise square 2D tiles on whole 128-column regions (block_tiles_kernel.cuh);
     * FPSIM_GPU_TILES_FAST=0 at compile time keeps every 2D tile on the general kernel. */
    block_tiles_kernel_fn fast_tiles = NULL;
#if FPSIM_GPU_TILES_FAST
    if (o.axis == FPSIM_AXIS_ROWS && g.TR > 1 && g.TR == g.TC && !a.sr && !a.rht && n < ((size_t)1 << 31) &&
        s->kind != FPSIM_KIND_FP8_TENSOR && rows % (size_t)g.TR == 0 && cols % 128 == 0)
        fast_tiles = block_tiles_kernel_pick(&a.es, s->kind, g.TR, a.bf16,
                                             block_tiles_region_width(g.TR, a.bf16, cols) != 128, a.divide_hw);
#endif
    if (fast_tiles) {
        /* one wave of CTAs, grid-stride over the T x 128 regions inside */
        const unsigned tthreads = block_tiles_kernel_threads(g.TR);
        const size_t nreg = (rows / (size_t)g.TR) * (cols / block_tiles_region_width(g.TR, a.bf16, cols));
        fast_tiles<<<one_wave_ctas(fast_tiles, tthreads, nreg, 1), tthreads, 0, cs>>>(a, (uint32_t)rows,
                                                                                     (uint32_t)cols);
        FPSIM_CUDA_LAUNCHED("block_tiles_kernel");
        return FPSIM_OK;
    }
    if (fast8 && dual8) {
        a.rw.codes = rows_too->codes;
        a.rw.scale_codes = rows_too->scale_codes;
        a.rw.scale_inv = rows_too->scale_inv;
        a.rw.cub8 = rows_too->cublas_codes;
        a.rw.cub32 = rows_too->cublas_f32;
        a.rw.code_stride = rows_too->code_stride;
        a.rw.scols = rows_too->scols;
        a.rw.cublas_cols = rows_too->cublas_cols;
        if (a.counters && rows_too->counters) {
            FPSIM_CUDA_TRY(cudaMemsetAsync(rows_too->counters, 0, 2 * sizeof(unsigned long long), cs));
            a.rw.counters = rows_too->counters;
        }
        if (a.want_cublas && (st = clear_cublas_scales(rows_too, cs)) != FPSIM_OK) return st;
    }
    if (fast8) {
        fast8<<<blocks8, threads8, smem8, cs>>>(a, (uint32_t)rows, (uint32_t)cols);
        FPSIM_CUDA_LAUNCHED(dual8 ? "block_cols_fast_kernel (both copies)" : "block_cols_fast_kernel");
        if (dual8) { /* the per-tensor values and the amax are the rowwise copy's too (no RHT) */
            FPSIM_CUDA_TRY(cudaMemcpyAsync(rows_too->tensor_values, out->tensor_values, 4 * sizeof(float),
                                           cudaMemcpyDeviceToDevice, cs));
            FPSIM_CUDA_TRY(cudaMemcpyAsync(rows_too->amax_bits, out->amax_bits, sizeof(uint32_t),
                                           cudaMemcpyDeviceToDevice, cs));
            if (fused) *fused = 1;
        }
        return FPSIM_OK;
    }
    if (fast_cols) {
        fast_cols<<<cols_blocks, 256, 0, cs>>>(a, (uint32_t)rows, (uint32_t)cols);
        FPSIM_CUDA_LAUNCHED("block_cols_kernel");
        return FPSIM_OK;
    }
    if (fast) {
        /* as many CTAs as fit at once: one wave, grid-stride inside */
        fast<<<one_wave_ctas(fast, 256, cdiv(cdiv(n, 32 * V), 8), 4), 256, 0, cs>>>(a, (uint32_t)n, (uint32_t)cols,
                                                                                 tc);
        FPSIM_CUDA_LAUNCHED("block_rows_kernel");
        return FPSIM_OK;
    }
    kernel<<<blocks, threads, 0, cs>>>(a);
    FPSIM_CUDA_LAUNCHED("block_quantize_kernel");
    return FPSIM_OK;
}

extern "C" fpsim_status fpsim_gpu_block_quantize_dev(fpsim_gpu_qbuf *out, const fpsim_scheme *s, const void *x,
                                                     int x_is_bf16, size_t rows, size_t cols, const fpsim_qopts *opt,
                                                     void *cuda_stream)
{
    return quantize_dev(out, s, x, x_is_bf16, rows, cols, opt, cuda_stream, 0);
}

/* Both copies: the columnwise call with the rowwise buffers offered to kernel v8, then the rowwise
 * call where no kernel took them. */
static fpsim_status quantize2_dev(fpsim_gpu_qbuf *rows_out, fpsim_gpu_qbuf *cols_out, const fpsim_scheme *s,
                                  const void *x, int x_is_bf16, size_t rows, size_t cols, const fpsim_qopts *opt,
                                  void *cuda_stream, int force_amax, int *fused)
{
    if (fused) *fused = 0;
    if (!rows_out || !cols_out || !s) return fpsim_fail(FPSIM_EINVAL, "gpu block quantize (both copies): NULL argument");
    if (rows_out->axis != FPSIM_AXIS_ROWS || cols_out->axis != FPSIM_AXIS_COLS)
        return fpsim_fail(FPSIM_EINVAL, "gpu block quantize (both copies): the buffers must be allocated rowwise "
                                        "and columnwise, in that order");
    fpsim_qopts o;
    if (opt)
        o = *opt;
    else
        fpsim_qopts_default(&o);
    o.axis = FPSIM_AXIS_COLS;
    int one_read = 0;
    fpsim_status st = quantize_dev(cols_out, s, x, x_is_bf16, rows, cols, &o, cuda_stream, force_amax, rows_out,
                                   &one_read);
    if (st == FPSIM_OK && !one_read) {
        o.axis = FPSIM_AXIS_ROWS;
        st = quantize_dev(rows_out, s, x, x_is_bf16, rows, cols, &o, cuda_stream, force_amax);
    }
    if (fused) *fused = st == FPSIM_OK && one_read;
    return st;
}

extern "C" fpsim_status fpsim_gpu_block_quantize2_dev(fpsim_gpu_qbuf *rows_out, fpsim_gpu_qbuf *cols_out,
                                                      const fpsim_scheme *s, const void *x, int x_is_bf16,
                                                      size_t rows, size_t cols, const fpsim_qopts *opt, int *fused,
                                                      void *cuda_stream)
{
    return quantize2_dev(rows_out, cols_out, s, x, x_is_bf16, rows, cols, opt, cuda_stream, 0, fused);
}

namespace {

fpsim_status take(void **p, size_t bytes)
{
    free(*p);
    *p = bytes ? malloc(bytes) : NULL;
    if (bytes && !*p) return fpsim_fail(FPSIM_ENOMEM, "gpu block quantize: no host memory for %zu bytes", bytes);
    return FPSIM_OK;
}

/* The dequantized tensor and the statistics of the quantized buffers b (block_stats.cuh), into
 * out->dequant / out->stats as the CPU fills them. global_amax: the tensor amax the quantizer
 * used (fp8-tensor counts its one block as zero when it is 0). */
fpsim_status dequant_stats(fpsim_qtensor *out, const fpsim_gpu_qbuf *b, const fpsim_scheme *s, const void *dx,
                           int bf16, size_t rows, size_t cols, const fpsim_qopts *o, float global_amax)
{
    geom g;
    fpsim_status st = geometry(&g, s, rows, cols, o->axis);
    if (st != FPSIM_OK) return st;
    stats_args a;
    memset(&a, 0, sizeof a);
    fpsim_spec scale8;
    if ((st = element_specs(&a.es, &scale8, s)) != FPSIM_OK) return st;
    a.x = dx;
    a.bf16 = bf16;
    a.axis = o->axis;
    a.rht = s->kind == FPSIM_KIND_NVFP4 && s->rht && o->axis == FPSIM_AXIS_COLS;
    a.rhtmma = a.rht && s->rhtsum == FPSIM_RHT_MMA;
    a.fp4 = s->elem == FPSIM_E2M1;
    a.per_tensor = s->kind == FPSIM_KIND_FP8_TENSOR;
    a.nvfp4 = s->kind == FPSIM_KIND_NVFP4;
    a.rows = rows;
    a.cols = cols;
    a.qrows = b->qrows;
    a.qcols = b->qcols;
    a.code_stride = b->code_stride;
    a.scols = b->scols;
    a.TR = g.TR;
    a.TC = g.TC;
    a.codes = b->codes;
    a.scale_inv = b->scale_inv;
    a.tvals = b->tensor_values;
    a.gdec_from_tvals = a.nvfp4;
    const int want_dq = (o->want & FPSIM_QWANT_DEQUANT) != 0, want_st = (o->want & FPSIM_QWANT_STATS) != 0;
    row_stats *d_rows = NULL, *h_rows = NULL;
    float *d_dq = NULL;
    unsigned long long cnt[2] = {0, 0};
    st = fpsim_gpu_alloc((void **)&d_rows, b->qrows * sizeof(row_stats));
    if (st == FPSIM_OK && want_dq) st = fpsim_gpu_alloc((void **)&d_dq, rows * cols * sizeof(float));
    if (st == FPSIM_OK) {
        a.dq = d_dq;
        a.out = d_rows;
        size_t nb = cdiv(b->qrows * 4, 256);
        dequant_stats_kernel<<<(unsigned)nb, 256>>>(a);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) st = fpsim_gpu_fail_cuda(e, "dequant_stats_kernel");
    }
    if (st == FPSIM_OK && want_dq) {
        st = take((void **)&out->dequant, rows * cols * sizeof(float));
        out->cap_dequant = rows * cols * sizeof(float);
        if (st == FPSIM_OK) st = fpsim_gpu_copy(out->dequant, d_dq, rows * cols * sizeof(float), 1);
    }
    if (st == FPSIM_OK && want_st) {
        h_rows = (row_stats *)malloc(b->qrows * sizeof(row_stats));
        if (!h_rows) st = fpsim_fail(FPSIM_ENOMEM, "gpu block quantize: no host memory for the statistics");
        if (st == FPSIM_OK) st = fpsim_gpu_copy(h_rows, d_rows, b->qrows * sizeof(row_stats), 1);
        if (st == FPSIM_OK) st = fpsim_gpu_copy(cnt, b->counters, sizeof cnt, 1);
    }
    if (st == FPSIM_OK && want_st) {
        fpsim_qstats *t = &out->stats;
        fpsim_qstats_init(t);
        for (size_t r = 0; r < b->qrows; r++) {
            const row_stats *q = &h_rows[r];
            t->count += b->qcols;
            t->finite += q->finite;
            t->nan += q->nan;
            t->inf += q->inf;
            t->nan_out += q->nan_out;
            t->flushed += q->flushed;
            t->amax = q->amax > t->amax ? q->amax : t->amax;
            t->max_abs_err = q->maxe > t->max_abs_err ? q->maxe : t->max_abs_err;
            fpsim_xsum_add(&t->sum_ref2, q->sr2);
            fpsim_xsum_add(&t->sum_err, q->se);
            fpsim_xsum_add(&t->sum_err2, q->se2);
        }
        t->saturated = cnt[0];
        t->zero_blocks = s->kind == FPSIM_KIND_FP8_TENSOR ? (global_amax == 0.0f) : cnt[1];
        t->blocks = s->kind == FPSIM_KIND_FP8_TENSOR ? 1 : b->srows * b->scols;
    }
    free(h_rows);
    fpsim_gpu_free(d_rows);
    fpsim_gpu_free(d_dq);
    return st;
}

/* Fill the host tensor `out` in the CPU's layout from the device buffers b, which quantized dx
 * under o (the dequantized tensor and the statistics computed on the GPU when o->want asks). */
fpsim_status fill_host(fpsim_qtensor *out, const fpsim_gpu_qbuf *b, const fpsim_scheme *s, const void *dx, int bf16,
                       size_t rows, size_t cols, const fpsim_qopts *o)
{
    float tv[4] = {0, 0, 0, 0};
    fpsim_status st = fpsim_gpu_copy(tv, b->tensor_values, sizeof tv, 1);
    int want_cub = (o->want & FPSIM_QWANT_CUBLAS) != 0;
    if (st == FPSIM_OK) {
        fpsim_qtensor_free(out);
        memset(out, 0, sizeof *out);
        out->scheme = *s;
        out->axis = o->axis;
        out->rows = rows;
        out->cols = cols;
        out->qrows = b->qrows;
        out->qcols = b->qcols;
        out->code_stride = b->code_stride;
        out->srows = b->srows;
        out->scols = b->scols;
        st = take((void **)&out->codes, b->qrows * b->code_stride);
        out->cap_codes = b->qrows * b->code_stride;
    }
    if (st == FPSIM_OK) st = fpsim_gpu_copy(out->codes, b->codes, b->qrows * b->code_stride, 1);
    if (st == FPSIM_OK && b->scale_inv) {
        st = take((void **)&out->scale_inv, b->srows * b->scols * 4);
        if (st == FPSIM_OK) st = fpsim_gpu_copy(out->scale_inv, b->scale_inv, b->srows * b->scols * 4, 1);
        out->cap_scales = b->srows * b->scols;
    }
    if (st == FPSIM_OK && b->scale_codes) {
        st = take((void **)&out->scale_codes, b->srows * b->scols);
        if (st == FPSIM_OK) st = fpsim_gpu_copy(out->scale_codes, b->scale_codes, b->srows * b->scols, 1);
    }
    if (st == FPSIM_OK && want_cub && (b->cublas_codes || b->cublas_f32)) {
        out->cublas_rows = b->cublas_rows;
        out->cublas_cols = b->cublas_cols;
        size_t n = b->cublas_rows * b->cublas_cols;
        out->cap_cublas = n;
        if (b->cublas_codes) {
            st = take((void **)&out->cublas_codes, n);
            if (st == FPSIM_OK) st = fpsim_gpu_copy(out->cublas_codes, b->cublas_codes, n, 1);
        } else {
            st = take((void **)&out->cublas_f32, n * 4);
            if (st == FPSIM_OK) st = fpsim_gpu_copy(out->cublas_f32, b->cublas_f32, n * 4, 1);
        }
    }
    if (st == FPSIM_OK) {
        out->global_amax = tv[0];
        out->s_enc = tv[1];
        out->global_scale = tv[2];
        out->tensor_scale = tv[3];
    }
    if (st == FPSIM_OK && (o->want & (FPSIM_QWANT_STATS | FPSIM_QWANT_DEQUANT)))
        st = dequant_stats(out, b, s, dx, bf16, rows, cols, o, tv[0]);
    return st;
}

/* The host API: x copied to the device, quantized into one copy (rows_out NULL: out, along
 * opt->axis) or both (rows_out rowwise, out columnwise: fpsim_gpu_block_quantize2), filled back. */
fpsim_status quantize_host(fpsim_qtensor *out, fpsim_qtensor *rows_out, const fpsim_scheme *s, const void *x,
                           int bf16, size_t rows, size_t cols, const fpsim_qopts *opt, int *fused)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    if (!out || !s || (!x && rows && cols)) return fpsim_fail(FPSIM_EINVAL, "gpu block quantize: NULL argument");
    fpsim_qopts o;
    if (opt)
        o = *opt;
    else
        fpsim_qopts_default(&o);
    const int both = rows_out != NULL;
    if (both) o.axis = FPSIM_AXIS_COLS;
    fpsim_gpu_qbuf b, br;
    memset(&br, 0, sizeof br);
    if ((st = fpsim_gpu_qbuf_alloc(&b, s, rows, cols, o.axis)) != FPSIM_OK) return st;
    if (both && (st = fpsim_gpu_qbuf_alloc(&br, s, rows, cols, FPSIM_AXIS_ROWS)) != FPSIM_OK) {
        fpsim_gpu_qbuf_free(&b);
        return st;
    }
    size_t in_bytes = rows * cols * (bf16 ? 2 : 4);
    void *dx = NULL;
    st = fpsim_gpu_alloc(&dx, in_bytes);
    if (st == FPSIM_OK) st = fpsim_gpu_copy(dx, x, in_bytes, 0);
    if (st == FPSIM_OK)
        st = both ? quantize2_dev(&br, &b, s, dx, bf16, rows, cols, &o, NULL, 1, fused)
                  : quantize_dev(&b, s, dx, bf16, rows, cols, &o, NULL, 1);
    if (st == FPSIM_OK) st = fpsim_gpu_sync();
    if (st == FPSIM_OK) st = fill_host(out, &b, s, dx, bf16, rows, cols, &o);
    if (st == FPSIM_OK && both) {
        fpsim_qopts orow = o;
        orow.axis = FPSIM_AXIS_ROWS;
        st = fill_host(rows_out, &br, s, dx, bf16, rows, cols, &orow);
    }
    fpsim_gpu_free(dx);
    fpsim_gpu_qbuf_free(&b);
    if (both) fpsim_gpu_qbuf_free(&br);
    return st;
}

} // namespace

extern "C" fpsim_status fpsim_gpu_block_quantize(fpsim_qtensor *out, const fpsim_scheme *s, const float *x, size_t rows,
                                                 size_t cols, const fpsim_qopts *opt)
{
    return quantize_host(out, NULL, s, x, 0, rows, cols, opt, NULL);
}

extern "C" fpsim_status fpsim_gpu_block_quantize_bf16(fpsim_qtensor *out, const fpsim_scheme *s, const uint16_t *x,
                                                      size_t rows, size_t cols, const fpsim_qopts *opt)
{
    return quantize_host(out, NULL, s, x, 1, rows, cols, opt, NULL);
}

extern "C" fpsim_status fpsim_gpu_block_quantize2(fpsim_qtensor *rows_out, fpsim_qtensor *cols_out,
                                                  const fpsim_scheme *s, const void *x, int x_is_bf16, size_t rows,
                                                  size_t cols, const fpsim_qopts *opt, int *fused)
{
    if (!rows_out) return fpsim_fail(FPSIM_EINVAL, "gpu block quantize (both copies): NULL argument");
    return quantize_host(cols_out, rows_out, s, x, x_is_bf16 != 0, rows, cols, opt, fused);
}
