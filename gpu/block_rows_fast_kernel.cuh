/* block_rows_fast_kernel.cuh: kernel v7, the rowwise 1 x TC / per-tensor block quantizer built
 * for memory bandwidth (MX 1x32, NVFP4 TE 1x16, block FP8 1x128, per-tensor FP8; nearest-even).
 * Included by block_quantize.cu inside its namespace after block_rows_kernel.cuh (kernel v4),
 * whose exact element arithmetic it keeps for the tiles that need it.
 *
 * Why it is faster than v4 (gpu/RESULTS.md, "Where each kernel stands"): v4 spent about 110
 * lane-instructions per element, most of them in the general element rounding and in code that
 * only NaN, Inf or overflow can need. v7 splits every tile into two cases, decided once per tile:
 *  - FAST (the common case): no NaN or Inf among the tile's inputs, a finite element multiplier
 *    that the rule applies as one multiply, and either a saturating element policy or a tile
 *    whose largest scaled magnitude RN(amax * |mult|) does not exceed the element maximum. Then
 *    no product is NaN, the x86 NaN-order emulation is the plain __fmul_rn, and the element cast
 *    is the policy's on non-NaN inputs: cvt.rn.satfinite for E4M3/E5M2 (hw_cvt.cuh says why it
 *    is exact) and the short nearest-even forms of elem_fixed.cuh for E2M1/E2M3/E3M2. The amax is
 *    the raw max of |x| bits (with no NaN in the tile every NaN policy gives that same max).
 *  - EXACT (any other tile): the amax under the scheme's NaN policy, scale_of_tile, and kernel
 *    v4's scale_group plus the shared core's fpsim_round_f32 with the full spec, as before.
 * Both cases write the same scale (the rule functions of block_rules.cuh); NVFP4 TE rounds its
 * E4M3 block scale with cvt.rn.satfinite too, since that scale's spec is `nv` on every input.
 *
 * Layout: a thread owns G groups of 16 consecutive elements (bf16: two 16-byte loads per group;
 * float32: four), all loads issued before any arithmetic so 64 bytes per thread are in flight.
 * Group g of warp chunk c starts at element (c * G + g) * 512 + lane * 16: loads and the 16-byte
 * (8-byte FP4) code stores are coalesced. A tile of TC elements is L = TC / 16 neighbouring lanes
 * (NVFP4: one thread per tile), reduced by xor shuffles inside the tile. */
#ifndef FPSIM_BLOCK_ROWS_FAST_KERNEL_CUH
#define FPSIM_BLOCK_ROWS_FAST_KERNEL_CUH

#include "fast_tile.cuh"

/* E4M3 scale of an NVFP4 TE block (scale_of_tile's TE case) for a finite block amax, in two
 * halves: the code (the same operations with no NaN possible, the E4M3 rounding, spec `nv`, by
 * cvt.rn.satfinite: never 0x7F, the input is not NaN) and, per code, the exact hardware decode
 * and the element multiplier 1 / (scale x S_dec), at most FLT_MAX. */
__device__ __forceinline__ uint32_t nvfp4_te_code(float amax, float te_mul)
{
    /* TE clamps the product at FLT_MAX before its cast; satfinite takes +Inf to 448 as it takes
     * FLT_MAX, and the product is never NaN (amax finite, te_mul finite: S_enc <= FLT_MAX), so the
     * clamp is left out (run 117) */
    return fpsim_hw_cvt_pair(__fmul_rn(amax, te_mul), 0.f, 0) & 0xFFu;
}
__device__ __forceinline__ float nvfp4_te_mult(float inv, float s_dec)
{
    return fminf(__fdiv_rn(1.0f, __fmul_rn(inv, s_dec)), FLT_MAX);
}
__device__ __forceinline__ tile_scale nvfp4_te_scale_finite(float amax, float te_mul, float s_dec)
{
    tile_scale s;
    s.code = nvfp4_te_code(amax, te_mul);
    s.inv = fpsim_hw_e4m3_value(s.code);
    s.mult = nvfp4_te_mult(s.inv, s_dec);
    return s;
}

/* MX scale codes of BF16 block amaxes by exponent field (kernels v7 and v8, BF16 inputs). Under the
 * rules floor, ceil, even, rceil and rceil-sat (torchao main) and gfloat, the code is a
 * non-decreasing function of the amax that rises by at most one within a binade: each is the
 * exponent of the amax, of the amax rounded at the element's mantissa width, or of the RN product
 * amax * fp32(1 / max) (monotone, and less than a factor 2 wide over a binade) rounded up to a
 * power of two, then clamped. So for a finite amax with exponent field e in 1..254 the code is
 * base(e) + (mantissa > thr(e)). mx_code_entry finds base and thr with the rule itself
 * (fpsim_mx_scale_code_dev) at the binade's two ends and by bisection over its 128 BF16 mantissas,
 * so the entry holds for BF16 amax values only. Entry bits: base 0-7, 8 set when the entry holds,
 * thr 9-31; 0 (the rule per block) for the fields 0 (subnormal amax: several steps within the
 * field) and 255, for the log2f rules (rceil of torchao 0.18, microxcaling), and for any binade
 * whose ends are more than one code apart. `fpsim verify --device gpu` sweeps every BF16 amax
 * (tensor "amax sweep"). Replaces about 40 instructions of rule branches per block (run 45). */
__device__ __forceinline__ uint32_t mx_code_entry(const qargs &a, uint32_t e)
{
    if (e < 1u || e > 254u || (a.rule == FPSIM_MX_RCEIL && a.ao == FPSIM_AO_0_18) ||
        a.rule == FPSIM_MX_MICROXCALING)
        return 0;
    auto code_at = [&](uint32_t m7) {
        return fpsim_mx_scale_code_dev(__uint_as_float(e << 23 | m7 << 16), a.rule, a.ao, a.elem);
    };
    const uint32_t lo = code_at(0), hi = code_at(127);
    if (hi == lo) return lo | 0x100u | (0x7FFFFFu << 9);
    if (hi != lo + 1u) return 0;
    uint32_t l = 0, h = 127; /* code_at(l) == lo, code_at(h) == hi */
    while (h - l > 1u) {
        const uint32_t mid = (l + h) / 2u, c = code_at(mid);
        if (c == lo)
            l = mid;
        else if (c == hi)
            h = mid;
        else
            return 0;
    }
    return lo | 0x100u | ((l << 16 | 0xFFFFu) << 9); /* a BF16 mantissa above l's steps up */
}

/* The per-code half of a tile's scale for kernels v7 and v8, filled once per CTA: tab[code] =
 * (decoded scale, element multiplier, plain as int bits, MX: mx_code_entry of exponent field
 * code as bits) for all 256 codes, by the very operations the per-tile path used (so any code has
 * its entry):
 *  - NVFP4 TE (E4M3 codes): nvfp4_te_scale_finite after its cvt, in place of a decode and an
 *    IEEE division per block (run 39);
 *  - MX (E8M0 codes): fpsim_e8m0_value_dev and mx_plain_mult under the scheme's rule, in place of
 *    their run-time rule branches per block (run 42), and with BF16 inputs the code entries above;
 *  - block FP8 under vLLM's dividing rules from BF16 (DIV = 1): tab[m] = (sf, r-, r+) of the BF16
 *    amax 1 + m / 128 by scale_of_tile and divide_scale_of, and the least raw max that entry
 *    serves (divide_table_floor, from the kernel's arguments alone), for divide_scale_from_table
 *    (128 entries, run 220).
 * Other kinds have no table. Ends with a barrier: call it where every thread of the CTA arrives. */
template <int KIND, int BF16 = 0, int DIV = 0> struct scale_table_size {
    enum {
        N = KIND == FPSIM_KIND_NVFP4 || KIND == FPSIM_KIND_MX ? 256
            : KIND == FPSIM_KIND_FP8_BLOCK && BF16 && DIV == 1 ? 128
                                                                : 1
    };
};
template <int KIND, int BF16, int DIV = 0>
__device__ __forceinline__ void scale_table_fill(float4 *tab, const qargs &a, float s_dec)
{
    if constexpr (KIND == FPSIM_KIND_FP8_BLOCK && BF16 && DIV == 1) {
        const float tv[6] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f}; /* not read by the block FP8 rules */
        const divide_table_range range =
            divide_table_bounds(a.eps, a.fp8max, a.fp8scale == FPSIM_FP8B_VLLM_CUDA_UE8M0);
        for (uint32_t m = threadIdx.x; m < 128u; m += blockDim.x) {
            const float sf = scale_of_tile<KIND>(a, 0x3F800000u | (m << 16), tv).inv;
            /* entries the table bounds never reach may be out of divide_scale_of's range: unused */
            const divide_scale d = divide_scale_of(sf);
            tab[m] = make_float4(d.sf, d.r_lo, d.r_hi, __uint_as_float(divide_table_floor(m, d.sf, range)));
        }
        (void)s_dec;
        __syncthreads();
    } else if constexpr (KIND == FPSIM_KIND_NVFP4 || KIND == FPSIM_KIND_MX) {
        for (uint32_t c = threadIdx.x; c < 256u; c += blockDim.x) {
            int plain = 1;
            float inv, mult;
            uint32_t entry = 0;
            if (KIND == FPSIM_KIND_NVFP4) {
                inv = fpsim_hw_e4m3_value(c);
                mult = nvfp4_te_mult(inv, s_dec);
            } else {
                inv = fpsim_e8m0_value_dev(c);
                mult = mx_plain_mult(c, a.rule, a.ao, &plain);
                if (BF16) entry = mx_code_entry(a, c);
            }
            tab[c] = make_float4(inv, mult, __int_as_float(plain), __uint_as_float(entry));
        }
        __syncthreads();
    } else {
        (void)tab, (void)a, (void)s_dec;
    }
}

/* nvfp4_te_scale_finite with the decode and the multiplier read from that table. */
__device__ __forceinline__ tile_scale nvfp4_te_scale_tab(float amax, float te_mul, const float4 *tab)
{
    tile_scale s;
    s.code = nvfp4_te_code(amax, te_mul);
    const float4 e = tab[s.code];
    s.inv = e.x;
    s.mult = e.y;
    return s;
}

/* scale_of_tile<MX> and mx_plain_mult with the per-code part read from that table, and with BF16
 * inputs the code too where its exponent field's entry holds. */
template <int BF16>
__device__ __forceinline__ tile_scale mx_scale_tab(const qargs &a, uint32_t amax_bits, const float4 *tab,
                                                   int *plain)
{
    tile_scale s;
    const uint32_t entry = BF16 ? __float_as_uint(tab[amax_bits >> 23].w) : 0u; /* amax_bits <= 0x7FFFFFFF */
    if (entry & 0x100u)
        s.code = (entry & 0xFFu) + ((amax_bits & 0x7FFFFFu) > (entry >> 9));
    else
        s.code = fpsim_mx_scale_code_dev(tile_amax_value(amax_bits), a.rule, a.ao, a.elem);
    const float4 e = tab[s.code];
    s.inv = e.x;
    s.mult = e.y;
    *plain = __float_as_int(e.z);
    return s;
}

/* NVFP4 SR: the Philox block with counter f / 16 (f % 16 == 0) holds the random bytes of elements
 * f .. f+15, element f+j in byte j % 4 of word j / 4 (fpsim_sr_word's definition, as sr_bytes of
 * kernel v4). */
__device__ __forceinline__ void sr_block16(uint32_t (&w)[4], const qargs &a, uint32_t f)
{
    /* the round keys come from the kernel's arguments, filled by the host with
     * fpsim_philox_round_keys: constant operands instead of two uniform adds per round (run 59) */
    const uint32_t ctr[4] = {f >> 4, 0u, a.stream, 0u};
    fpsim_philox4x32_rounds(ctr, a.sr_round_keys, w);
}

/* Those bytes moved to bits 31..24 (the core's layout, for the exact path). */
__device__ __forceinline__ void sr_bytes16(uint32_t (&rb)[16], const qargs &a, uint32_t f)
{
    uint32_t w[4];
    sr_block16(w, a, f);
#pragma unroll
    for (int j = 0; j < 16; j++)
        rb[j] = __byte_perm(w[j / 4], 0u, 0x0444u | (uint32_t)(j % 4) << 12);
}

/* Sixteen elements, and their packed codes with the count of saturated elements. */
struct v7_elems {
    float v[16];
};
struct v7_codes {
    uint32_t c[4], sat;
};

/* Sixteen bf16 elements as loaded (fast_tile.cuh), the form kernels v7 and v8 hand over where
 * code_tile16 codes fast tiles by the bf16-pair forms: MX E2M1/E2M3 from bf16, nearest-even. */
typedef bf16_elems<16> v7_bf16_elems;
template <int KIND, int F, int BF16, int SR> struct bf16_pairs_apply {
    enum { value = KIND == FPSIM_KIND_MX && BF16 && !SR && (F == FPSIM_E2M1 || F == FPSIM_E2M3) };
};

/* Element j as float32, and all 16 as v7_elems (exact widening for v7_bf16_elems). */
__device__ __forceinline__ float elem_f32(const v7_elems &e, int j)
{
    return e.v[j];
}
__device__ __forceinline__ float elem_f32(const v7_bf16_elems &e, int j)
{
    return bf16_elem_f32(e, j);
}
template <class E> __device__ __forceinline__ v7_elems elems_f32(const E &e)
{
    v7_elems out;
#pragma unroll
    for (int j = 0; j < 16; j++)
        out.v[j] = elem_f32(e, j);
    return out;
}

/* The same 16 codes by the exact path: kernel v4's scaling and the shared core, full spec. Out of
 * line (rare tiles only), with its inputs by value so the fast path's registers stay registers. */
__device__ __noinline__ v7_codes exact_codes16(const qargs &a, v7_elems in, tile_scale ts, int plain,
                                               float elem_max, uint32_t f)
{
    v7_codes out;
    float y[16];
    uint32_t rb[16];
    if (a.sr) sr_bytes16(rb, a, f);
    out.sat = scale_group<16>(a, in.v, y, ts, plain, 0, elem_max);
    out.c[0] = out.c[1] = out.c[2] = out.c[3] = 0;
#pragma unroll
    for (int j = 0; j < 16; j++) {
        const uint32_t code = fpsim_round_f32(__float_as_uint(y[j]), &a.es, a.sr ? rb[j] : 0u);
        if (a.fp4)
            out.c[j / 8] |= (code & 0xFu) << (4 * (j % 8));
        else
            out.c[j / 4] |= (code & 0xFFu) << (8 * (j % 4));
    }
    return out;
}

/* One tile's 16 elements e of one lane (v7_elems; v7_bf16_elems where bf16_pairs_apply), coded
 * (kernels v7 and v8): the tile scale from the raw max
 * of |x| bits (NVFP4 TE finite blocks by cvt, MX by its rule's code, then scale_table_fill's
 * table; else scale_of_tile), the fast-tile case or the exact
 * path, whose NaN/Inf tiles first reduce the amax under the NaN policy over the tile's lanes: xor
 * offsets O0, 2 O0, ... below O1 within tile_mask, starting from am_more (that policy's max over
 * the tile's other elements this lane holds: kernel v9's other group; else 0). f: the stored
 * index of element 0 (SR). */
struct v7_tile {
    tile_scale ts;
    uint32_t c[4], sat, am;
};

/* Which rare-tile code kernels v7 and v8 keep out of line (the OOL template arguments below):
 * OOL_RARE_SCALE, the scale of a NaN/Inf tile (scale_of_rare_tile; NVFP4), and OOL_NAN_AMAX,
 * that tile's amax under the NaN policy (abs_max16_ool; MX E2M1, runs 136-138: MXFP4 cols +0.6
 * points on average). */
enum { OOL_RARE_SCALE = 1, OOL_NAN_AMAX = 2 };
/* The flags of a kernel of scheme kind KIND and element format F; no_transform: no RHT before it. */
__host__ __device__ constexpr int rare_tile_ool(int kind, int f, int no_transform)
{
    return kind == FPSIM_KIND_NVFP4 && no_transform   ? (int)OOL_RARE_SCALE
           : kind == FPSIM_KIND_MX && f == FPSIM_E2M1 ? (int)OOL_NAN_AMAX
                                                      : 0;
}

/* scale_of_tile out of line, for the tiles whose raw max is NaN or Inf (rare). Inlined, its divisions
 * and the E4M3 rounding by the general core put about 20 KB of cold code between every two of
 * kernel v8's unrolled NVFP4 columns: its hot loop spread over 70 KB of instructions, and a tenth
 * of its stall samples were instruction fetches ("no instruction", run 120). Out of line (with
 * abs_max16_ool, run 132): NVFP4 cols 83.6 -> 85.6% of copy, NVFP4 SR rows and cols +1.5-2
 * points; the MX, 16x16 and RHT kernels measured 0.5-1.5 points slower that way and keep it
 * inline (OOL_RARE_SCALE is for NVFP4 only; the MXFP4 kernels took OOL_NAN_AMAX instead, runs
 * 136-138: MXFP4 cols +0.6, MXFP8 cols -0.6 that way). tv by value: a pointer would move the caller's
 * copy to the stack. */
struct v7_tvals {
    float v[6];
};
template <int KIND>
__device__ __noinline__ tile_scale scale_of_tile_ool(const qargs &a, uint32_t amax_bits, v7_tvals tv)
{
    return scale_of_tile<KIND>(a, amax_bits, tv.v);
}
template <int KIND>
__device__ __forceinline__ tile_scale scale_of_rare_tile(const qargs &a, uint32_t amax_bits,
                                                         const float (&tv)[6])
{
    v7_tvals t;
#pragma unroll
    for (int i = 0; i < 6; i++)
        t.v[i] = tv[i];
    return scale_of_tile_ool<KIND>(a, amax_bits, t);
}

/* The max of m and 16 elements' |x| bits under the NaN policy, out of line: a NaN or Inf tile's
 * amax (OOL_NAN_AMAX) and kernel v8's amax-only pass. Inlined, its selects sit between the hot
 * instructions of every unrolled tile (see scale_of_rare_tile). */
__device__ __noinline__ uint32_t abs_max16_ool(uint32_t m, v7_elems e, int nan_ignore)
{
#pragma unroll
    for (int i = 0; i < 16; i++)
        m = max(m, abs_bits(e.v[i], nan_ignore));
    return m;
}

/* Whether a tile is coded under vLLM's dividing rules by divide_fast.cuh: DIV 0 or 1 where the
 * kernel is built for one case (kernel v7 has a dividing instance), -1 where a.divide_hw says. */
template <int DIV> __device__ __forceinline__ int divide_tiles(const qargs &a)
{
    return DIV < 0 ? a.divide_hw : DIV;
}

/* The first half of code_tile16: a tile's scale from its raw max, whether its multiplier is a plain
 * power of two (MX; 1 otherwise), and whether it takes the fast-tile case. Kernel v9 calls it
 * once for the four row pieces of a tile that a lane codes (run 109). */
struct v7_scale {
    tile_scale ts;
    int plain, fast;
    divide_scale d; /* vLLM's dividing rules (DIV), a fast tile: its multipliers */
};
template <int KIND, int F, int BF16, int OOL = 0, int DIV = -1>
__device__ __forceinline__ v7_scale scale_tile16(const qargs &a, uint32_t raw, const float (&tv)[6],
                                                 float te_mul, float elem_max, const float4 *tab)
{
    v7_scale s;
    s.plain = 1;
    if constexpr (KIND == FPSIM_KIND_FP8_BLOCK && BF16 && DIV == 1) {
        /* vLLM's dividing rules from BF16: scale_table_fill's table where its bounds hold (one
         * compare with the entry's least raw); the rule itself below for the other tiles */
        s.fast = divide_scale_from_table(raw, tab, &s.d);
        if (s.fast) {
            s.ts.code = 0;
            s.ts.inv = s.ts.mult = s.d.sf;
            return s;
        }
    }
    if (KIND == FPSIM_KIND_NVFP4 && raw < FPSIM_F32_INF_BITS)
        s.ts = nvfp4_te_scale_tab(__uint_as_float(raw), te_mul, tab);
    else if (KIND == FPSIM_KIND_MX)
        s.ts = mx_scale_tab<BF16>(a, raw, tab, &s.plain);
    else if ((OOL & OOL_RARE_SCALE) && KIND == FPSIM_KIND_NVFP4) /* a NaN or Inf raw max */
        s.ts = scale_of_rare_tile<KIND>(a, raw, tv);
    else
        s.ts = scale_of_tile<KIND>(a, raw, tv);
    /* E2M1 kernels run with FAST_SAT_SMALL only (fast_elem_mode), so their test folds */
    const int fast_mode = F == FPSIM_E2M1 ? (int)FAST_SAT_SMALL : a.fast_mode;
    s.fast = tile_is_fast(fast_mode, raw, s.plain, s.ts.mult, elem_max);
    /* vLLM's dividing rules: a finite tile whose scale divide_fast_scale_ok takes is coded by
     * divide_fast.cuh (the clamp before the cast makes any policy of the format saturate) */
    if (KIND == FPSIM_KIND_FP8_BLOCK && divide_tiles<DIV>(a)) {
        s.fast = raw < FPSIM_F32_INF_BITS && divide_fast_scale_ok(s.ts.inv);
        if (s.fast) s.d = divide_scale_of(s.ts.inv);
    }
    return s;
}

/* The second half: the 16 codes under that scale. */
template <int KIND, int F, int BF16, int SR, int O0, int O1, int OOL = 0, int DIV = -1, class E>
__device__ __forceinline__ v7_tile code_tile16_scaled(const qargs &a, const E &e, uint32_t raw,
                                                      const v7_scale &s, const float (&tv)[6], float elem_max,
                                                      uint32_t f, uint32_t tile_mask, uint32_t am_more)
{
    v7_tile out;
    out.ts = s.ts;
    int plain = s.plain;
    constexpr int NW = code_words<F, 16>::W;
    uint32_t c[NW];
    out.sat = 0;
    out.am = raw;
    /* MX E2M1/E2M3 from bf16: the scale is a power of two, so the bf16-pair forms code the inputs
     * themselves (elem_bf16_pairs.cuh; half the instructions of the float32 forms) */
    constexpr int BF16_PAIRS = bf16_pairs_apply<KIND, F, BF16, SR>::value;
    static_assert(!BF16_PAIRS || is_bf16_elems<E>::value, "the pair forms read the loaded bf16 words");
    /* the float16 SR route needs 2^-14 times the multiplier exact: other tiles take the exact path */
    int fast = s.fast && (!SR || out.ts.mult >= 0x1p-112f);
    if (KIND == FPSIM_KIND_FP8_BLOCK && F != FPSIM_E2M1 && divide_tiles<DIV>(a)) {
        /* vLLM's dividing rules: divide_fast.cuh's codes (a finite tile, its scale in range) */
        if (fast) {
            const divide_scale &d = s.d;
            uint32_t sat = 0;
#pragma unroll
            for (int q = 0; q < 4; q++)
                c[q % NW] = divide_codes4(elem_f32(e, 4 * q), elem_f32(e, 4 * q + 1), elem_f32(e, 4 * q + 2),
                                          elem_f32(e, 4 * q + 3), d, a.fp8max, F == FPSIM_E5M2, a.counters != NULL,
                                          &sat);
            if (a.counters) out.sat = sat;
        }
    } else if (fast) {
        if (a.counters) /* the statistics' saturation count, from the float32 products */
#pragma unroll
            for (int j = 0; j < 16; j++)
                out.sat += fabsf(__fmul_rn(elem_f32(e, j), out.ts.mult)) > elem_max;
        if (BF16_PAIRS && fpsim_bf16_pair_scale_ok(__float_as_uint(out.ts.mult))) {
            /* no float32 products on this path */
            if constexpr (BF16_PAIRS)
                fast_codes_bf16_pow2<F, 16>(e, fpsim_bf16x2_pow2_of_f32_bits(__float_as_uint(out.ts.mult)),
                                            c);
        } else if constexpr (SR) {
            /* the float16 route (fast_codes_sr_f16, run 122: NVFP4 SR rows 63 -> 72% of copy, SR+RHT
             * under rhtsum=mma 48 -> 55.5%): the multiplier times 2^-14, exact since the fast case
             * here needs the multiplier at least 2^-112 */
            const float m14 = __fmul_rn(out.ts.mult, 0x1p-14f);
            float t[16];
            uint32_t sg[16], w[4];
#pragma unroll
            for (int j = 0; j < 16; j++) {
                const float x = elem_f32(e, j);
                t[j] = __fmul_rn(FPSIM_GPU_SR_SIGNED ? x : fabsf(x), m14);
                sg[j] = __float_as_uint(x);
            }
            sr_block16(w, a, f);
            if (FPSIM_GPU_SR_SIGNED)
                fast_codes_sr_f16_signed<16>(t, w, c);
            else
                fast_codes_sr_f16<16>(t, sg, w, c);
        } else {
            float y[16];
#pragma unroll
            for (int j = 0; j < 16; j++)
                y[j] = __fmul_rn(elem_f32(e, j), out.ts.mult);
            fast_codes<F, 16>(y, a.es, c);
        }
    }
    if (!fast) {
        if (raw >= FPSIM_F32_INF_BITS) {
            /* NaN or Inf: the tile's amax under its NaN policy, and the scale of that amax (a
             * finite tile's raw max is that amax, and ts its scale already). */
            uint32_t am = am_more;
            if constexpr ((OOL & OOL_NAN_AMAX) != 0) {
                am = abs_max16_ool(am, elems_f32(e), a.nan_ignore);
            } else {
#pragma unroll
                for (int j = 0; j < 16; j++)
                    am = max(am, abs_bits(elem_f32(e, j), a.nan_ignore));
            }
#pragma unroll
            for (int o = O0; o < O1; o <<= 1)
                am = max(am, __shfl_xor_sync(tile_mask, am, o));
            out.am = am;
            out.ts =
                (OOL & OOL_RARE_SCALE) ? scale_of_rare_tile<KIND>(a, am, tv) : scale_of_tile<KIND>(a, am, tv);
            plain = 1;
            if (KIND == FPSIM_KIND_MX) out.ts.mult = mx_plain_mult(out.ts.code, a.rule, a.ao, &plain);
        }
        const v7_codes x = exact_codes16(a, elems_f32(e), out.ts, plain, elem_max, f);
#pragma unroll
        for (int q = 0; q < NW; q++)
            c[q] = x.c[q];
        out.sat = x.sat;
    }
#pragma unroll
    for (int q = 0; q < 4; q++)
        out.c[q] = q < NW ? c[q % NW] : 0u;
    return out;
}

/* Both halves: the whole tile as kernels v7 and v8 code it. OOL: OOL_* flags, the rare-tile code
 * out of line. */
template <int KIND, int F, int BF16, int SR, int O0, int O1, int OOL = 0, int DIV = -1, class E>
__device__ __forceinline__ v7_tile code_tile16(const qargs &a, const E &e, uint32_t raw, const float (&tv)[6],
                                               float te_mul, float elem_max, uint32_t f, uint32_t tile_mask,
                                               const float4 *tab, uint32_t am_more = 0)
{
    const v7_scale s = scale_tile16<KIND, F, BF16, OOL, DIV>(a, raw, tv, te_mul, elem_max, tab);
    return code_tile16_scaled<KIND, F, BF16, SR, O0, O1, OOL, DIV>(a, e, raw, s, tv, elem_max, f, tile_mask,
                                                                   am_more);
}

/* Store a coded tile's 16 codes at dst and count its saturated elements (kernels v7 and v8). */
template <int F> __device__ __forceinline__ void store_tile16(const qargs &a, const v7_tile &tc, uint8_t *dst)
{
    constexpr int NW = code_words<F, 16>::W;
    uint32_t c[NW];
#pragma unroll
    for (int q = 0; q < NW; q++)
        c[q] = tc.c[q];
    if (tc.sat) atomicAdd(&a.counters[0], (unsigned long long)tc.sat);
    store_code_words<F, 16>(c, dst);
}

/* KIND: the scheme kind (NVFP4 means the TE chain); F: element format; BF16: input bf16;
 * L: lanes per tile (TC / 16; 0 for per-tensor); G: groups per thread per pass. a.fast_mode says
 * whether tiles may take the fast case (fast_tile.cuh). */
/* How many grid-stride passes ahead kernel v7 prefetches into L2. */
#ifndef FPSIM_GPU_V7_PREFETCH_AHEAD
#define FPSIM_GPU_V7_PREFETCH_AHEAD 1u
#endif

/* CTAs of 256 threads per SM that kernel v7 is compiled for (80 registers at 3). */
#ifndef FPSIM_GPU_V7_MIN_BLOCKS
#define FPSIM_GPU_V7_MIN_BLOCKS 3
#endif

/* Whether kernel v7 loads a warp's next pass into registers before coding the current one (two
 * CTAs per SM, up to 128 registers) instead of at the pass's start (FPSIM_GPU_V7_MIN_BLOCKS CTAs).
 * -1 (the default): for the E2M1 nearest-even kernels, whose coding is longest (run 73, A/B
 * alternated twice: NVFP4 rows 82.0-83.0% -> 85.0-85.5% of copy, MXFP4 rows +1 point; the E4M3
 * kernels lost 0.3-1.8 points, NVFP4 SR none); 0 or 1: every kernel. */
#ifndef FPSIM_GPU_V7_PIPE
#define FPSIM_GPU_V7_PIPE -1
#endif
template <int F, int SR> struct v7_pipe {
    enum { value = FPSIM_GPU_V7_PIPE < 0 ? F == FPSIM_E2M1 && !SR : FPSIM_GPU_V7_PIPE };
};

/* DIV: 1 for the instance that codes vLLM's dividing rules (divide_fast.cuh; the host picks it
 * where a.divide_hw), 0 for every other, which then holds none of that code (run 211: with the
 * rules behind a kernel argument, 31% of the stall samples were instruction fetch). Loading the
 * next pass ahead (v7_pipe) measured 7 points slower for it (run 213, probe M3). */
template <int KIND, int F, int BF16, int L, int G, int SR, int DIV = 0>
__global__ void __launch_bounds__(256, v7_pipe<F, SR>::value ? 2 : FPSIM_GPU_V7_MIN_BLOCKS)
    block_rows_fast_kernel(const __grid_constant__ qargs a, uint32_t n, uint32_t cols)
{
    constexpr int W = BF16 ? 2 : 4; /* 16-byte words per group of 16 elements */
    constexpr int FP4 = F == FPSIM_E2M1;
    constexpr uint32_t TC = 16u * (uint32_t)(L ? L : 1);
    constexpr int OOL = rare_tile_ool(KIND, F, 1); /* see OOL_RARE_SCALE */
    float tv[6];
    tensor_values<KIND>(a, tv);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (a.tvals)
            for (int i = 0; i < 4; i++)
                a.tvals[i] = tv[i];
        if (KIND == FPSIM_KIND_FP8_TENSOR) a.scale_inv[0] = tv[2];
    }
    const float elem_max = fpsim_elem_max_dev(a.elem);
    const float te_mul = __fmul_rn(tv[1], __frcp_rn(6.0f)); /* NVFP4 TE: S_enc * fp32(1/6) */
    __shared__ float4 tab[scale_table_size<KIND, BF16, DIV>::N];
    scale_table_fill<KIND, BF16, DIV>(tab, a, tv[5]);
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t tile_mask = L <= 1 ? (1u << lane) : (((1u << L) - 1u) << (lane & ~(uint32_t)(L - 1)));
    const uint32_t span = 512u * G; /* elements per warp and pass */
    const uint32_t nchunks = (n + span - 1) / span;
    const uint32_t warps = gridDim.x * (blockDim.x / 32u);
    constexpr int PIPE = v7_pipe<F, SR>::value;
    auto load_pass = [&](uint32_t ch, uint4(&dst)[G][W]) {
#pragma unroll
        for (int g = 0; g < G; g++) {
            const uint32_t f = ch * span + (uint32_t)g * 512u + lane * 16u;
#pragma unroll
            for (int k = 0; k < W; k++)
                dst[g][k] = f < n ? __ldcs(reinterpret_cast<const uint4 *>(a.x) + f / (16 / W) + k)
                                  : make_uint4(0, 0, 0, 0);
        }
    };
    const uint32_t first = blockIdx.x * (blockDim.x / 32u) + threadIdx.x / 32u;
    uint4 w[G][W];
    if (PIPE && first < nchunks) load_pass(first, w);
    for (uint32_t ch = first; ch < nchunks; ch += warps) {
        /* The warp's chunk FPSIM_GPU_V7_PREFETCH_AHEAD passes beyond the loaded ones into L2
         * while this one computes (whole chunks only): one 128-byte line per lane (2 KB: 16
         * lanes). */
        const uint32_t ahead = ch + ((uint32_t)PIPE + FPSIM_GPU_V7_PREFETCH_AHEAD) * warps,
                       chunk_bytes = span * (BF16 ? 2u : 4u);
        if (lane * 128u < chunk_bytes && (ahead + 1u) * span <= n)
            prefetch_line_l2(static_cast<const char *>(a.x) + (size_t)ahead * chunk_bytes + lane * 128u);
        uint4 wn[G][W];
        if (!PIPE)
            load_pass(ch, w);
        else if (ch + warps < nchunks)
            load_pass(ch + warps, wn);
#pragma unroll
        for (int g = 0; g < G; g++) {
            const uint32_t f = ch * span + (uint32_t)g * 512u + lane * 16u;
            uint32_t raw = 0; /* max of |x| bits, NaN above Inf */
#pragma unroll
            for (int k = 0; k < W; k++)
                raw = max(raw, BF16 ? raw_max_bf16x8(w[g][k]) : raw_max_f32x4(w[g][k]));
#pragma unroll
            for (int o = 1; o < L; o <<= 1)
                raw = max(raw, __shfl_xor_sync(0xFFFFFFFFu, raw, o));
            if (f >= n) continue;

            v7_tile tc;
            if constexpr (bf16_pairs_apply<KIND, F, BF16, SR>::value) {
                v7_bf16_elems e; /* element j in word j / 2, the high half for odd j */
#pragma unroll
                for (int j = 0; j < 16; j++) {
                    const uint4 &q = w[g][j / 8];
                    const uint32_t u[4] = {q.x, q.y, q.z, q.w};
                    e.w[j] = u[j / 2 % 4];
                }
                e.hi = 0xAAAAu;
                e.words_paired = 1;
                tc = code_tile16<KIND, F, BF16, SR, 1, (L > 1 ? L : 1), OOL, DIV>(a, e, raw, tv, te_mul, elem_max,
                                                                             f, tile_mask, tab);
            } else {
                v7_elems e;
#pragma unroll
                for (int k = 0; k < W; k++)
                    widen_word<BF16>(w[g][k], e.v + (BF16 ? 8 : 4) * k);
                tc = code_tile16<KIND, F, BF16, SR, 1, (L > 1 ? L : 1), OOL, DIV>(a, e, raw, tv, te_mul, elem_max,
                                                                             f, tile_mask, tab);
            }
            const tile_scale &ts = tc.ts;
            const uint32_t am = tc.am;
            store_tile16<F>(a, tc, a.codes + (FP4 ? f / 2 : f));
            if (KIND == FPSIM_KIND_FP8_TENSOR || (L > 1 && (lane & (uint32_t)(L - 1)) != 0)) continue;
            /* The first lane of a tile writes its scale (and counts a zero-amax block). */
            if (a.counters && am == 0) atomicAdd(&a.counters[1], 1ull);
            const uint32_t t = f / TC, row = f / cols, sc = (f - row * cols) / TC;
            if (a.scale_inv) a.scale_inv[t] = ts.inv;
            if (a.scale_codes) a.scale_codes[t] = (uint8_t)ts.code;
            if (!a.want_cublas) continue;
            if (KIND == FPSIM_KIND_FP8_BLOCK)
                a.cub32[(size_t)sc * a.cublas_cols + row] = ts.inv; /* VEC128: K-blocks x rows */
            else
                a.cub8[swizzle128x4(row, sc, a.cublas_cols)] = (uint8_t)ts.code;
        }
        if (PIPE)
#pragma unroll
            for (int g = 0; g < G; g++)
#pragma unroll
                for (int k = 0; k < W; k++)
                    w[g][k] = wn[g][k];
    }
}

typedef void (*block_rows_fast_kernel_fn)(qargs, uint32_t, uint32_t);

/* Kernel v7 for element format F and the input type, with the tile lanes of the scheme kind. */
template <int KIND, int F, int SR = 0, int DIV = 0> block_rows_fast_kernel_fn block_rows_fast_of(int bf16)
{
    constexpr int L = KIND == FPSIM_KIND_NVFP4       ? 1
                      : KIND == FPSIM_KIND_MX        ? 2
                      : KIND == FPSIM_KIND_FP8_BLOCK ? 8
                                                     : 0;
    return bf16 ? block_rows_fast_kernel<KIND, F, 1, L, 2, SR, DIV> : block_rows_fast_kernel<KIND, F, 0, L, 1, SR, DIV>;
}

/* Kernel v7 for scheme kind and element format (instantiated for the formats each kind has), or
 * NULL. The host has checked: rowwise, 1 x TC tiles with cols % TC == 0 (or per-tensor with
 * n % 16 == 0), the kind's usual TC, nearest-even (or NVFP4 SR), no RHT, fewer than 2^31 elements, the NVFP4
 * chain is TE, sm_89+ (the NVFP4 scale uses cvt), and a fast mode other than FAST_NEVER. */
inline block_rows_fast_kernel_fn block_rows_fast_pick(int kind, int format, int bf16, int sr, int divide_hw)
{
    if (sr) /* NVFP4 only */
        return kind == FPSIM_KIND_NVFP4 && format == FPSIM_E2M1
                   ? block_rows_fast_of<FPSIM_KIND_NVFP4, FPSIM_E2M1, 1>(bf16)
                   : NULL;
    switch (kind) {
    case FPSIM_KIND_MX:
        switch (format) {
        case FPSIM_E4M3:
            return block_rows_fast_of<FPSIM_KIND_MX, FPSIM_E4M3>(bf16);
        case FPSIM_E5M2:
            return block_rows_fast_of<FPSIM_KIND_MX, FPSIM_E5M2>(bf16);
        case FPSIM_E2M1:
            return block_rows_fast_of<FPSIM_KIND_MX, FPSIM_E2M1>(bf16);
        case FPSIM_E2M3:
            return block_rows_fast_of<FPSIM_KIND_MX, FPSIM_E2M3>(bf16);
        case FPSIM_E3M2:
            return block_rows_fast_of<FPSIM_KIND_MX, FPSIM_E3M2>(bf16);
        default:
            return NULL;
        }
    case FPSIM_KIND_NVFP4:
        return format == FPSIM_E2M1 ? block_rows_fast_of<FPSIM_KIND_NVFP4, FPSIM_E2M1>(bf16) : NULL;
    case FPSIM_KIND_FP8_BLOCK:
    case FPSIM_KIND_FP8_TENSOR: {
        const int block = kind == FPSIM_KIND_FP8_BLOCK;
        if (format == FPSIM_E4M3)
            return !block     ? block_rows_fast_of<FPSIM_KIND_FP8_TENSOR, FPSIM_E4M3>(bf16)
                   : divide_hw ? block_rows_fast_of<FPSIM_KIND_FP8_BLOCK, FPSIM_E4M3, 0, 1>(bf16)
                               : block_rows_fast_of<FPSIM_KIND_FP8_BLOCK, FPSIM_E4M3>(bf16);
        if (format == FPSIM_E5M2)
            return !block     ? block_rows_fast_of<FPSIM_KIND_FP8_TENSOR, FPSIM_E5M2>(bf16)
                   : divide_hw ? block_rows_fast_of<FPSIM_KIND_FP8_BLOCK, FPSIM_E5M2, 0, 1>(bf16)
                               : block_rows_fast_of<FPSIM_KIND_FP8_BLOCK, FPSIM_E5M2>(bf16);
        return NULL;
    }
    default:
        return NULL;
    }
}

#endif
