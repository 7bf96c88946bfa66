/* block_tiles16_fast_kernel.cuh: kernel v9, the rowwise NVFP4 16 x 16 quantizer (TE chain,
 * nearest-even) built like kernel v7. Included by block_quantize.cu inside its namespace after
 * block_rows_fast_kernel.cuh, whose tile coding (code_tile16), scale table and stores it shares.
 *
 * Why: kernel v6 (block_tiles_kernel.cuh) reduces each tile's amax through shared memory and a
 * CTA barrier per region, divides once per thread for the NVFP4 scale, and holds 64 bytes of
 * loads per thread; NVFP4 16x16 ran at 55% of a copy there (runs 47-70) against 84% for the 1x16
 * tiles of v7. Here a 16 x 16 tile lives in one warp, so its amax is a register max and three xor
 * shuffles, and the scale comes from v7's per-CTA table.
 *
 * Layout: a warp takes a chunk of 16 rows x 64 columns (four tiles side by side); chunk ch is row
 * block ch / (cols / 64), column block ch % (cols / 64), so the CTA's warps read neighbouring
 * pieces of the same rows. Lane l holds tile column c = l % 4 and, in group g = 0, 1, row
 * r = l / 4 + 8 g of the chunk: 16 consecutive elements (32 bytes bf16, 64 float32), all loads of
 * both groups issued before any arithmetic. The tile's lanes are those with the same c (xor
 * offsets 4, 8, 16); its amax is the max over both groups and those lanes. Each (lane, group)
 * codes its 16 elements with code_tile16 as a 1 x 16 row piece of the tile, whose scale all of
 * them compute alike from the tile amax; the exact path's NaN-policy amax adds the lane's other
 * group (am_more). Stores: 8 (FP4) code bytes per lane and group, the tile's scale once (lane
 * with r = 0, group 0), the cuBLAS 128x4 swizzled scale once per tile ROW (every row of a tile
 * carries its scale), and the counters as v7. Shapes: rows % 16 == 0, cols % 64 == 0, fewer than
 * 2^31 elements (the host checks). */
#ifndef FPSIM_BLOCK_TILES16_FAST_KERNEL_CUH
#define FPSIM_BLOCK_TILES16_FAST_KERNEL_CUH

/* Grid-stride passes ahead that kernel v9 prefetches into L2 (as v7). */
#ifndef FPSIM_GPU_V9_PREFETCH_AHEAD
#define FPSIM_GPU_V9_PREFETCH_AHEAD 1u
#endif

/* 1: each warp loads its next chunk into registers before coding the current one (two CTAs per
 * SM, up to 128 registers); 0 (the default): the loads of a chunk at the start of its pass (three
 * CTAs). Run 73 measured 1 slower: 74.6-75.3% of copy against 76.2%. */
#ifndef FPSIM_GPU_V9_PIPE
#define FPSIM_GPU_V9_PIPE 0
#endif

template <int BF16>
__global__ void __launch_bounds__(256, FPSIM_GPU_V9_PIPE ? 2 : FPSIM_GPU_V7_MIN_BLOCKS)
    block_tiles16_fast_kernel(const __grid_constant__ qargs a, uint32_t rows, uint32_t cols)
{
    constexpr int KIND = FPSIM_KIND_NVFP4, F = FPSIM_E2M1;
    constexpr int W = BF16 ? 2 : 4;                   /* 16-byte words per 16 elements */
    constexpr uint32_t ESIZE = BF16 ? 2u : 4u;
    float tv[6];
    tensor_values<KIND>(a, tv);
    if (blockIdx.x == 0 && threadIdx.x == 0 && a.tvals)
        for (int i = 0; i < 4; i++)
            a.tvals[i] = tv[i];
    const float elem_max = fpsim_elem_max_dev(a.elem);
    const float te_mul = __fmul_rn(tv[1], __frcp_rn(6.0f)); /* S_enc * fp32(1/6), as v7 */
    __shared__ float4 tab[scale_table_size<KIND>::N];
    scale_table_fill<KIND, BF16>(tab, a, tv[5]);
    const uint32_t lane = threadIdx.x & 31u, c = lane % 4u, r = lane / 4u;
    const uint32_t tile_mask = 0x11111111u << c;
    const uint32_t ncb = cols / 64u, nch = (rows / 16u) * ncb;
    const uint32_t warps = gridDim.x * (blockDim.x / 32u);
    constexpr int PIPE = FPSIM_GPU_V9_PIPE;
    /* this lane's 16 elements of rows r and r + 8 of chunk ch */
    auto load_chunk = [&](uint32_t ch, uint4(&dst)[2][W]) {
        const uint32_t rb = ch / ncb, cb = ch % ncb;
#pragma unroll
        for (int g = 0; g < 2; g++) {
            const size_t f = (size_t)(rb * 16u + r + 8u * (uint32_t)g) * cols + cb * 64u + c * 16u;
#pragma unroll
            for (int k = 0; k < W; k++)
                dst[g][k] = __ldcs(reinterpret_cast<const uint4 *>(a.x) + f / (16 / W) + k);
        }
    };
    const uint32_t first = blockIdx.x * (blockDim.x / 32u) + threadIdx.x / 32u;
    uint4 w[2][W];
    if (PIPE && first < nch) load_chunk(first, w);
    for (uint32_t ch = first; ch < nch; ch += warps) {
        const uint32_t rb = ch / ncb, cb = ch % ncb;
        /* The chunk FPSIM_GPU_V9_PREFETCH_AHEAD passes beyond the loaded ones into L2: its 16 row
         * pieces of 64 elements, one 128-byte line per lane. */
        const uint32_t ahead = ch + ((uint32_t)PIPE + FPSIM_GPU_V9_PREFETCH_AHEAD) * warps;
        if (ahead < nch && lane < 16u * (ESIZE / 2u)) {
            const uint32_t pr = (ahead / ncb) * 16u + lane / (ESIZE / 2u), pc = (ahead % ncb) * 64u;
            prefetch_line_l2(static_cast<const char *>(a.x) +
                             ((size_t)pr * cols + pc) * ESIZE + (lane % (ESIZE / 2u)) * 128u);
        }
        uint4 wn[2][W];
        if (!PIPE)
            load_chunk(ch, w);
        else if (ch + warps < nch)
            load_chunk(ch + warps, wn);
        /* the tile's max of |x| bits (NaN above Inf): both groups, then the tile's 8 lanes */
        uint32_t raw = 0;
#pragma unroll
        for (int g = 0; g < 2; g++)
#pragma unroll
            for (int k = 0; k < W; k++)
                raw = max(raw, BF16 ? raw_max_bf16x8(w[g][k]) : raw_max_f32x4(w[g][k]));
#pragma unroll
        for (int o = 4; o < 32; o <<= 1)
            raw = max(raw, __shfl_xor_sync(0xFFFFFFFFu, raw, o));
        /* a NaN or Inf in the tile (uniform over its lanes): each group's amax under the NaN
         * policy, for the exact path of the other */
        uint32_t pm[2] = {0, 0};
        if (raw >= FPSIM_F32_INF_BITS)
#pragma unroll
            for (int g = 0; g < 2; g++)
#pragma unroll
                for (int k = 0; k < W; k++) {
                    float v[BF16 ? 8 : 4];
                    widen_word<BF16>(w[g][k], v);
#pragma unroll
                    for (int j = 0; j < (BF16 ? 8 : 4); j++)
                        pm[g] = max(pm[g], abs_bits(v[j], a.nan_ignore));
                }
        const uint32_t tile_col = cb * 4u + c;
#pragma unroll
        for (int g = 0; g < 2; g++) {
            const uint32_t row = rb * 16u + r + 8u * (uint32_t)g;
            v7_elems e;
#pragma unroll
            for (int k = 0; k < W; k++)
                widen_word<BF16>(w[g][k], e.v + (BF16 ? 8 : 4) * k);
            const v7_tile tc = code_tile16<KIND, F, BF16, 0, 4, 32>(a, e, raw, tv, te_mul, elem_max, 0u, tile_mask,
                                                                    tab, pm[1 - g]);
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
            for (int g = 0; g < 2; g++)
#pragma unroll
                for (int k = 0; k < W; k++)
                    w[g][k] = wn[g][k];
    }
}

typedef void (*block_tiles16_fast_kernel_fn)(qargs, uint32_t, uint32_t);

/* Kernel v9 for the input type. The host has checked: rowwise NVFP4 16 x 16 tiles, TE chain,
 * nearest-even, no RHT, rows % 16 == 0, cols % 64 == 0, fewer than 2^31 elements, sm_89+, and a
 * fast mode other than FAST_NEVER. */
inline block_tiles16_fast_kernel_fn block_tiles16_fast_pick(int bf16)
{
    return bf16 ? block_tiles16_fast_kernel<1> : block_tiles16_fast_kernel<0>;
}

#endif
