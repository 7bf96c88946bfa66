/* block_rows_kernel.cuh: the fast block quantizer (kernel v4) for rowwise copies with 1 x TC tiles
 * (MX 1x32, NVFP4 1x16, block FP8 1x128) and per-tensor FP8, where every tile lies inside one
 * row (cols % TC == 0). Included by block_quantize.cu inside its namespace, after the scheme
 * helpers (qargs, tensor_values, scale_of_tile, scale_element) it calls; every other shape takes
 * the general kernel there. The bits are the same: the scale rules are the same functions, and
 * the element rounding is the shared core with the format fixed at compile time (elem_fixed.cuh).
 *
 * Layout: the tensor is a flat array of n = rows x cols elements. Each thread takes V consecutive
 * elements, one 16-byte load (V = 8 bf16, 4 float32), and a warp 32 V consecutive elements, so
 * every load and every code store is coalesced. A tile of TC elements is L = TC / V neighbouring
 * lanes; its amax is reduced by warp shuffles (no shared memory, no barrier). 32-bit indices
 * (the host sends tensors of 2^31 elements or more to the general kernel).
 *
 * The element scaling is one FP32 multiply x * m for every scheme in the common case; NaN order
 * emulation (the x86 NaN-propagation rules of block_rules.cuh) runs only when that product is NaN
 * or the tile's rule is not a plain multiply (MX ao=0.18 with scale code 0 or 255, gfloat with
 * 255): for every non-NaN product the emulation returns exactly __fmul_rn(x, m). */
#ifndef FPSIM_BLOCK_ROWS_KERNEL_CUH
#define FPSIM_BLOCK_ROWS_KERNEL_CUH

#include "divide_fast.cuh"
#include "elem_fixed.cuh"

/* The MX element multiplier of scale code e when scaling is x * m (block_rules.cuh
 * fpsim_mx_scale_element_dev); *plain = 0 where that function divides or takes a NaN factor. */
__device__ __forceinline__ float mx_plain_mult(uint32_t e, int rule, int ao, int *plain)
{
    *plain = 1;
    if (rule == FPSIM_MX_RCEIL_SAT) return e == 0 ? 1.0f : __uint_as_float((uint32_t)(254 - (int)e) << 23);
    if ((rule == FPSIM_MX_FLOOR || rule == FPSIM_MX_CEIL || rule == FPSIM_MX_EVEN) && ao == FPSIM_AO_0_18 &&
        (e == 0 || e == 255))
        *plain = 0;
    if ((rule == FPSIM_MX_GFLOAT || rule == FPSIM_MX_MICROXCALING) && e == 255) *plain = 0;
    if (rule == FPSIM_MX_RCEIL && ao == FPSIM_AO_0_18) {
        if (e == 255) *plain = 0;
        if (e == 0) return 1.0f; /* torchao 0.18's rcp of code 0 */
    }
    return fpsim_e8m0_rcp_exact_dev(e);
}

/* Scale a group of N elements by their tile's multiplier into y, shared by kernels v4-v6 and the
 * exact path of v7-v9: one multiply each and no branch in the common case; the rare path (a NaN
 * product, or a tile whose rule is not a plain multiply, plain = 0) redoes the group with the
 * exact emulation (scale_element). vLLM's dividing rules (a.divides) always take that path here:
 * the kernels code their common tiles by divide_fast.cuh before (divide_store_group,
 * code_tile16). NVFP4 chains other than TE clamp to +-6 (clamp6). Returns how many elements
 * saturate, counted before any clamp (0 unless a.counters is set). KIND: the scheme kind if known
 * at compile time, else -1. */
template <int N, int KIND = -1>
__device__ __forceinline__ uint32_t scale_group(const qargs &a, const float (&v)[N], float (&y)[N],
                                                const tile_scale &ts, int plain, int clamp6,
                                                float elem_max)
{
    /* a dividing rule's ts.mult is sf itself: never the multiplier */
    uint32_t rare = !plain || ((KIND < 0 || KIND == FPSIM_KIND_FP8_BLOCK) && a.divides), sat = 0;
#pragma unroll
    for (int j = 0; j < N; j++) {
        y[j] = __fmul_rn(v[j], ts.mult);
        rare |= fpsim_isnan_bits(__float_as_uint(y[j]));
        if (a.counters) sat += saturates(v[j], y[j], elem_max);
        if (clamp6) y[j] = y[j] < -6.0f ? -6.0f : (y[j] > 6.0f ? 6.0f : y[j]);
    }
    if (rare) {
        sat = 0;
#pragma unroll
        for (int j = 0; j < N; j++) {
            y[j] = scale_element<KIND>(a, v[j], ts);
            if (a.counters) {
                const float pre = a.divides ? __fdiv_rn(v[j], ts.inv) : clamp6 ? fpsim_mul_torch(v[j], ts.mult) : y[j];
                sat += saturates(v[j], pre, elem_max);
            }
        }
    }
    return sat;
}

/* The V codes of a group of finite elements v of an 8-bit format F under vLLM's dividing rules, by
 * divide_fast.cuh with the tile's multipliers d (whose scale divide_fast_scale_ok takes), stored
 * at dst with one vector store; *sat raised by the clipped count (a.counters only). */
template <int F, int V>
__device__ __forceinline__ void divide_codes_store(const qargs &a, const float (&v)[V], const divide_scale &d,
                                                   uint8_t *dst, uint32_t *sat)
{
    static_assert(V % 4 == 0 && (F == FPSIM_E4M3 || F == FPSIM_E5M2), "divide_codes4: 8-bit codes, four at a time");
    uint32_t c[V / 4];
#pragma unroll
    for (int q = 0; q < V / 4; q++)
        c[q] = divide_codes4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3], d, a.fp8max, F == FPSIM_E5M2,
                             a.counters != NULL, sat);
    store_code_words<F, V>(c, dst);
}

/* Kernels v4 and v5 under vLLM's dividing rules (a.divide_hw): divide_codes_store where its form
 * applies (the tile's scale in divide_fast_scale_ok's range, every element finite: tile_finite
 * says so of the whole tile, else each element is tested). Returns 1 with the codes stored, or 0
 * with nothing stored: the caller takes scale_group's exact path. */
template <int F, int V>
__device__ __forceinline__ int divide_store_group(const qargs &a, const float (&v)[V], const tile_scale &ts,
                                                  int tile_finite, uint8_t *dst, uint32_t *sat)
{
    if constexpr (F != FPSIM_E4M3 && F != FPSIM_E5M2) {
        return 0;
    } else {
        if (!a.divide_hw || !divide_fast_scale_ok(ts.inv)) return 0;
        if (!tile_finite) {
            int finite = 1;
#pragma unroll
            for (int j = 0; j < V; j++) finite &= isfinite(v[j]);
            if (!finite) return 0;
        }
        divide_codes_store<F, V>(a, v, divide_scale_of(ts.inv), dst, sat);
        return 1;
    }
}

/* Round a group of V scaled elements (V = 4 or 8) to codes of format F and store them with one
 * vector store at dst: the byte of the group's first code (8-bit formats), or of its first pair
 * (E2M1: two codes a byte, the even element in the low nibble). rb: the elements' random bits for
 * SR, or NULL (nearest modes). Shared by kernels v4-v6. */
template <int F, int MODE, int FULL, int V>
__device__ __forceinline__ void round_store_group(const float (&y)[V], const uint32_t *rb,
                                                  const fpsim_spec &es, uint8_t *dst)
{
    uint32_t packed[V / 4] = {};
#pragma unroll
    for (int j = 0; j < V; j++) {
        const uint32_t c = fpsim_round_f32_fixed<F, MODE, FULL>(__float_as_uint(y[j]), es, rb ? rb[j] : 0u);
        if (F == FPSIM_E2M1)
            packed[j / 8] |= (c & 0xFu) << (4 * (j % 8));
        else
            packed[j / 4] |= (c & 0xFFu) << (8 * (j % 4));
    }
    if (F == FPSIM_E2M1) {
        if (V == 8)
            *reinterpret_cast<uint32_t *>(dst) = packed[0];
        else
            *reinterpret_cast<uint16_t *>(dst) = (uint16_t)packed[0];
    } else {
        if (V == 8)
            *reinterpret_cast<uint2 *>(dst) = make_uint2(packed[0], packed[V / 4 - 1]);
        else
            *reinterpret_cast<uint32_t *>(dst) = packed[0];
    }
}

/* Random bits of elements f .. f+V-1 (f % V == 0, V = 4 or 8) for NVFP4 SR: byte (i & 3) of
 * fpsim_sr_word(seed, stream, i >> 2), i.e. word ((i >> 2) & 3) of the Philox block with counter
 * i >> 4: one block serves the V elements. Shifted to the top of the word (8 random bits). */
template <int V> __device__ __forceinline__ void sr_bytes(uint32_t rb[V], const qargs &a, uint32_t f)
{
    const uint32_t ctr[4] = {f >> 4, 0u, a.stream, 0u};
    const uint32_t key[2] = {(uint32_t)a.seed, (uint32_t)(a.seed >> 32)};
    uint32_t w[4];
    fpsim_philox4x32_10(ctr, key, w);
    const uint32_t wi = (f >> 2) & 3u; /* even when V = 8 */
    const uint32_t lo = wi == 0 ? w[0] : wi == 1 ? w[1] : wi == 2 ? w[2] : w[3];
    const uint32_t hi = wi == 0 ? w[1] : w[3];
#pragma unroll
    for (int j = 0; j < V; j++) rb[j] = (((j < 4 ? lo : hi) >> (8 * (j & 3))) & 0xFFu) << 24;
}

/* F: element format, SR: stochastic rounding (NVFP4), FULL: fpsim_spec_full_rules of the element
 * spec, BF16: input bf16 bits (else float32). tc: tile width (0 for per-tensor FP8). */
template <int F, int SR, int FULL, int BF16>
__global__ void __launch_bounds__(256) block_rows_kernel(qargs a, uint32_t n, uint32_t cols, uint32_t tc)
{
    constexpr int V = BF16 ? 8 : 4;
    constexpr int MODE = SR ? FPSIM_SR : FPSIM_RNE;
    const fpsim_spec es = a.es;
    float tv[6];
    tensor_values(a, tv);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (a.tvals)
            for (int i = 0; i < 4; i++) a.tvals[i] = tv[i];
        if (a.kind == FPSIM_KIND_FP8_TENSOR) a.scale_inv[0] = tv[2];
    }
    const uint32_t lane = threadIdx.x & 31u;
    const uint32_t lanes_per_tile = tc / V; /* 1 .. 32, a power of two */
    const int per_tensor = a.kind == FPSIM_KIND_FP8_TENSOR;
    const int clamp6 = a.kind == FPSIM_KIND_NVFP4 && a.chain != FPSIM_NVFP4_TE;
    const uint32_t per_warp = 32u * V;
    const uint32_t nchunks = (n + per_warp - 1) / per_warp;
    const uint32_t warps = gridDim.x * (blockDim.x / 32u);
    for (uint32_t ch = blockIdx.x * (blockDim.x / 32u) + threadIdx.x / 32u; ch < nchunks; ch += warps) {
        const uint32_t f = ch * per_warp + lane * V;
        const int live = f < n;
        float v[V];
        uint4 w = make_uint4(0, 0, 0, 0);
        if (live) w = __ldcs(reinterpret_cast<const uint4 *>(a.x) + f / V);
        widen_word<BF16>(w, v);
        uint32_t am = 0;
        if (!per_tensor) {
#pragma unroll
            for (int j = 0; j < V; j++) am = max(am, abs_bits(v[j], a.nan_ignore));
            for (uint32_t o = 1; o < lanes_per_tile; o <<= 1) am = max(am, __shfl_xor_sync(0xFFFFFFFFu, am, o));
        }
        if (!live) continue;
        tile_scale ts = scale_of_tile(a, am, tv);
        int plain = !a.divides; /* a dividing rule's elements take scale_group's exact path */
        if (a.kind == FPSIM_KIND_MX) ts.mult = mx_plain_mult(ts.code, a.rule, a.ao, &plain);
        uint32_t rb[V];
        if (SR)
            sr_bytes<V>(rb, a, f);
        else
#pragma unroll
            for (int j = 0; j < V; j++) rb[j] = 0;
        uint8_t *dst = a.codes + (F == FPSIM_E2M1 ? f / 2 : f);
        uint32_t sat = 0;
        if (!divide_store_group<F, V>(a, v, ts, 0, dst, &sat)) {
            float y[V];
            sat = scale_group<V>(a, v, y, ts, plain, clamp6, fpsim_elem_max_dev(a.elem));
            round_store_group<F, MODE, FULL, V>(y, rb, es, dst);
        }
        if (sat) atomicAdd(&a.counters[0], (unsigned long long)sat);
        if (per_tensor || (lane & (lanes_per_tile - 1u)) != 0) continue;
        /* The first lane of a tile writes its scale (and counts a zero-amax block). */
        if (a.counters && am == 0) atomicAdd(&a.counters[1], 1ull);
        const uint32_t t = f / tc, row = f / cols, sc = (f - row * cols) / tc;
        if (a.scale_inv) a.scale_inv[t] = ts.inv;
        if (a.scale_codes) a.scale_codes[t] = (uint8_t)ts.code;
        if (!a.want_cublas) continue;
        if (a.kind == FPSIM_KIND_FP8_BLOCK)
            a.cub32[(size_t)sc * a.cublas_cols + row] = ts.inv; /* VEC128: K-blocks x rows */
        else
            a.cub8[swizzle128x4(row, sc, a.cublas_cols)] = (uint8_t)ts.code;
    }
}

typedef void (*block_rows_kernel_fn)(qargs, uint32_t, uint32_t, uint32_t);

template <int F, int SR> block_rows_kernel_fn block_rows_kernel_of(int full, int bf16)
{
    if (full) return bf16 ? block_rows_kernel<F, SR, 1, 1> : block_rows_kernel<F, SR, 1, 0>;
    return bf16 ? block_rows_kernel<F, SR, 0, 1> : block_rows_kernel<F, SR, 0, 0>;
}

/* The v4 kernel for element spec es, or NULL when the spec's format has no fixed kernel. */
inline block_rows_kernel_fn block_rows_kernel_pick(const fpsim_spec *es, int sr, int bf16)
{
    const int full = fpsim_spec_full_rules(es) != 0;
    if (es->round != (sr ? FPSIM_SR : FPSIM_RNE)) return NULL;
    switch (es->format) {
    case FPSIM_E2M1:
        if (!fpsim_elem_fixed_matches<FPSIM_E2M1>(es)) return NULL;
        return sr ? block_rows_kernel_of<FPSIM_E2M1, 1>(full, bf16) : block_rows_kernel_of<FPSIM_E2M1, 0>(full, bf16);
    case FPSIM_E4M3:
        return !sr && fpsim_elem_fixed_matches<FPSIM_E4M3>(es) ? block_rows_kernel_of<FPSIM_E4M3, 0>(full, bf16) : NULL;
    case FPSIM_E5M2:
        return !sr && fpsim_elem_fixed_matches<FPSIM_E5M2>(es) ? block_rows_kernel_of<FPSIM_E5M2, 0>(full, bf16) : NULL;
    case FPSIM_E2M3:
        return !sr && fpsim_elem_fixed_matches<FPSIM_E2M3>(es) ? block_rows_kernel_of<FPSIM_E2M3, 0>(full, bf16) : NULL;
    case FPSIM_E3M2:
        return !sr && fpsim_elem_fixed_matches<FPSIM_E3M2>(es) ? block_rows_kernel_of<FPSIM_E3M2, 0>(full, bf16) : NULL;
    default:
        return NULL;
    }
}

#endif
