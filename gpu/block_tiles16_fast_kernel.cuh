/* block_tiles16_fast_kernel.cuh: kernel v9, the rowwise NVFP4 16 x 16 quantizer (TE chain,
 * nearest-even) built like kernel v7. Included by block_quantize.cu inside its namespace after
 * block_rows_fast_kernel.cuh, whose tile coding (code_tile16), scale table and stores it shares.
 *
 * Why: kernel v6 (block_tiles_kernel.cuh) reduces each tile's amax through shared memory and a
 * CTA barrier per region, divides once per thread for the NVFP4 scale, and holds 64 bytes of
 * loads per thread; NVFP4 16x16 ran at 55% of a copy there (runs 47-70) against 84% for the 1x16
 * tiles of v7. Here a 16 x 16 tile lives in one warp, so its amax is a register max and two or
 * three xor shuffles, and the scale comes from v7's per-CTA table.
 *
 * Layout: a warp takes a chunk of 16 rows x 16 TW columns (TW = 8 tiles side by side where the
 * columns allow it, else 4); chunk ch is row block ch / (cols / 16 TW), column block the rest, so
 * the CTA's warps read neighbouring pieces of the same rows. Lane l holds tile column c = l % TW
 * and the NG = TW / 2 rows r = l / TW + (32 / TW) g of the chunk (g < NG): 16 consecutive
 * elements each (32 bytes bf16, 64 float32), all loads issued before any arithmetic (on 16 x 128
 * chunks, a chunk ahead: FPSIM_GPU_V9_PIPE). The tile's lanes are those with the same c (xor
 * offsets TW .. 16); its amax is the max over the lane's rows and those lanes. Each lane computes
 * the tile's scale from that amax once (scale_tile16) and codes each of its rows' 16 elements as a
 * 1 x 16 row piece of the tile (code_tile16_scaled); the exact path's NaN-policy amax adds the
 * lane's other rows (am_more). Stores: 8 code bytes per lane and row, the tile's scale once (lane
 * with r = 0, g = 0), the cuBLAS 128x4 swizzled scale once per tile ROW (every row of a tile
 * carries its scale), and the counters as v7. Shapes: rows % 16 == 0, cols % 64 == 0, fewer than
 * 2^31 elements (the host checks). */
#ifndef FPSIM_BLOCK_TILES16_FAST_KERNEL_CUH
#define FPSIM_BLOCK_TILES16_FAST_KERNEL_CUH

/* Grid-stride passes ahead that kernel v9 prefetches into L2 (as v7). */
#ifndef FPSIM_GPU_V9_PREFETCH_AHEAD
#define FPSIM_GPU_V9_PREFETCH_AHEAD 1u
#endif

/* 1: bf16 inputs take chunks of 8 tiles side by side (16 x 128, four rows per lane, two CTAs per
 * SM) where the columns allow it; 0: always 4 (16 x 64, two rows per lane, three CTAs). */
#ifndef FPSIM_GPU_V9_WIDE
#define FPSIM_GPU_V9_WIDE 1
#endif

/* 1: a warp of the 16 x 128 chunks loads its next chunk into registers before coding the current
 * one, as kernel v7's E2M1 kernels do since run 74 (run 92 found v9 waiting on its loads); 0: at
 * the chunk's start. Run 108: NVFP4 16x16 79.4 -> 82.3% of copy; the 16 x 64 chunks measured 3
 * points slower pipelined than the 16 x 128 ones without, so they load at the chunk's start. */
#ifndef FPSIM_GPU_V9_PIPE
#define FPSIM_GPU_V9_PIPE 1
#endif

/* Kernel v9 with TW tiles per chunk (4 or 8): lane l holds tile column l % TW and the NG = TW / 2
 * rows l / TW + (32 / TW) g of the chunk. */
template <int BF16, int TW>
__global__ void __launch_bounds__(256, TW == 8 ? 2 : FPSIM_GPU_V7_MIN_BLOCKS)
    block_tiles16_fast_kernel(const __grid_constant__ qargs a, uint32_t rows, uint32_t cols)
{
    constexpr int KIND = FPSIM_KIND_NVFP4, F = FPSIM_E2M1;
    constexpr int W = BF16 ? 2 : 4; /* 16-byte words per 16 elements */
    constexpr int NG = TW / 2;      /* rows per lane */
    constexpr uint32_t ESIZE = BF16 ? 2u : 4u, RSTEP = 32u / TW, CW = 16u * TW;
    constexpr uint32_t LINES = 16u * CW * ESIZE / 128u; /* 128-byte lines per chunk */
    float tv[6];
    tensor_values<KIND>(a, tv);
    if (blockIdx.x == 0 && threadIdx.x == 0 && a.tvals)
        for (int i = 0; i < 4; i++)
            a.tvals[i] = tv[i];
    const float elem_max = fpsim_elem_max_dev(a.elem);
    const float te_mul = __fmul_rn(tv[1], __frcp_rn(6.0f)); /* S_enc * fp32(1/6), as v7 */
    __shared__ float4 tab[scale_table_size<KIND>::N];
    scale_table_fill<KIND, BF16>(tab, a, tv[5]);
    const uint32_t lane = threadIdx.x & 31u, c = lane % TW, r = lane / TW;
    const uint32_t tile_mask = (TW == 8 ? 0x01010101u : 0x11111111u) << c;
    const uint32_t ncb = cols / CW, nch = (rows / 16u) * ncb;
    const uint32_t warps = gridDim.x * (blockDim.x / 32u);
    constexpr int PIPE = FPSIM_GPU_V9_PIPE && TW == 8;
    auto load_chunk = [&](uint32_t chunk, uint4(&dst)[NG][W]) {
        const uint32_t lrb = chunk / ncb, lcb = chunk % ncb;
#pragma unroll
        for (int g = 0; g < NG; g++) {
            const size_t f = (size_t)(lrb * 16u + r + RSTEP * (uint32_t)g) * cols + lcb * CW + c * 16u;
#pragma unroll
            for (int k = 0; k < W; k++)
                dst[g][k] = __ldcs(reinterpret_cast<const uint4 *>(a.x) + f / (16 / W) + k);
        }
    };
    const uint32_t first = blockIdx.x * (blockDim.x / 32u) + threadIdx.x / 32u;
    uint4 w[NG][W];
    if (PIPE && first < nch) load_chunk(first, w);
    for (uint32_t ch = first; ch < nch; ch += warps) {
        const uint32_t rb = ch / ncb, cb = ch % ncb;
        /* The chunk FPSIM_GPU_V9_PREFETCH_AHEAD passes beyond the loaded ones into L2: its 16 row
         * pieces of CW elements, 128-byte lines spread over the lanes. */
        const uint32_t ahead = ch + ((uint32_t)PIPE + FPSIM_GPU_V9_PREFETCH_AHEAD) * warps;
        if (ahead < nch) {
            const char *base = static_cast<const char *>(a.x) +
                               ((size_t)(ahead / ncb) * 16u * cols + (ahead % ncb) * CW) * ESIZE;
#pragma unroll
            for (uint32_t i = lane; i < LINES; i += 32u) {
                constexpr uint32_t PER_ROW = CW * ESIZE / 128u;
                prefetch_line_l2(base + (size_t)(i / PER_ROW) * cols * ESIZE + (i % PER_ROW) * 128u);
            }
        }
        uint4 wn[NG][W];
        if (!PIPE)
            load_chunk(ch, w);
        else if (ch + warps < nch)
            load_chunk(ch + warps, wn);
        /* the tile's max of |x| bits (NaN above Inf): this lane's rows, then the tile's lanes */
        uint32_t raw = 0;
#pragma unroll
        for (int g = 0; g < NG; g++)
#pragma unroll
            for (int k = 0; k < W; k++)
                raw = max(raw, BF16 ? raw_max_bf16x8(w[g][k]) : raw_max_f32x4(w[g][k]));
#pragma unroll
        for (int o = TW; o < 32; o <<= 1)
            raw = max(raw, __shfl_xor_sync(0xFFFFFFFFu, raw, o));
        /* a NaN or Inf in the tile (uniform over its lanes): each row's amax under the NaN policy,
         * for the exact path of the lane's other rows */
        uint32_t pm[NG];
#pragma unroll
        for (int g = 0; g < NG; g++)
            pm[g] = 0;
        if (raw >= FPSIM_F32_INF_BITS)
#pragma unroll
            for (int g = 0; g < NG; g++)
#pragma unroll
                for (int k = 0; k < W; k++) {
                    float v[BF16 ? 8 : 4];
                    widen_word<BF16>(w[g][k], v);
#pragma unroll
                    for (int j = 0; j < (BF16 ? 8 : 4); j++)
                        pm[g] = max(pm[g], abs_bits(v[j], a.nan_ignore));
                }
        const uint32_t tile_col = cb * TW + c;
        /* the tile's scale, once for the lane's four rows (code_tile16 computed it per row: run
         * 109, with the pipelined loads, 82.3 -> 86.9% of copy) */
        const v7_scale s = scale_tile16<KIND, F, BF16>(a, raw, tv, te_mul, elem_max, tab);
#pragma unroll
        for (int g = 0; g < NG; g++) {
            const uint32_t row = rb * 16u + r + RSTEP * (uint32_t)g;
            uint32_t am_more = 0;
#pragma unroll
            for (int h = 0; h < NG; h++)
                if (h != g) am_more = max(am_more, pm[h]);
            v7_elems e;
#pragma unroll
            for (int k = 0; k < W; k++)
                widen_word<BF16>(w[g][k], e.v + (BF16 ? 8 : 4) * k);
            const v7_tile tc = code_tile16_scaled<KIND, F, BF16, 0, TW, 32>(a, e, raw, s, tv, elem_max, 0u,
                                                                            tile_mask, am_more);
            store_tile16<F>(a, tc, a.codes + (size_t)row * a.code_stride + tile_col * 8u);
            if (a.want_cublas) a.cub8[swizzle128x4(row, tile_col, a.cublas_cols)] = (uint8_t)tc.ts.code;
            if (g != 0 || r != 0) continue;
            /* the tile's scale, once (and a zero-amax tile counted once) */
            if (a.counters && tc.am == 0) atomicAdd(&a.counters[1], 1ull);
            const size_t si = (size_t)rb * a.scols + tile_col;
            if (a.scale_inv) a.scale_inv[si] = tc.ts.inv;
            if (a.scale_codes) a.scale_codes[si] = (uint8_t)tc.ts.code;
        }
        if (PIPE)
#pragma unroll
            for (int g = 0; g < NG; g++)
#pragma unroll
                for (int k = 0; k < W; k++)
                    w[g][k] = wn[g][k];
    }
}

typedef void (*block_tiles16_fast_kernel_fn)(qargs, uint32_t, uint32_t);

/* Columns of kernel v9's chunks: 128 for bf16 inputs whose columns allow it, under
 * FPSIM_GPU_V9_WIDE (float32 ones would hold 64 registers of loads and spill), else 64. */
inline size_t block_tiles16_chunk_cols(int bf16, size_t cols)
{
    return FPSIM_GPU_V9_WIDE && bf16 && cols % 128 == 0 ? 128 : 64;
}

/* Kernel v9 for the input type and the chunk width of block_tiles16_chunk_cols. The host has
 * checked: rowwise NVFP4 16 x 16 tiles, TE chain, nearest-even, no RHT, rows % 16 == 0,
 * cols % 64 == 0, fewer than 2^31 elements, sm_89+, and a fast mode other than FAST_NEVER. */
inline block_tiles16_fast_kernel_fn block_tiles16_fast_pick(int bf16, size_t cols)
{
    if (block_tiles16_chunk_cols(bf16, cols) == 128) return block_tiles16_fast_kernel<1, 8>;
    return bf16 ? block_tiles16_fast_kernel<1, 4> : block_tiles16_fast_kernel<0, 4>;
}

#endif
