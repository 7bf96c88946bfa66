/* block_tiles_kernel.cuh: the fast block quantizer (kernel v6) for ROWWISE copies with square 2D
 * tiles T x T (NVFP4 16x16, MX 32x32, block FP8 128x128) on shapes made of whole regions
 * (rows % T == 0, cols % 128 == 0). Included by block_quantize.cu inside its namespace, after
 * block_rows_kernel.cuh; every other case (columnwise copies, partial tiles, SR, other formats or
 * tile shapes, 2^31 elements or more) takes the general block_quantize_kernel.
 *
 * Layout (fpsim_tiles_layout, host-callable so tests/gpu/test_tiles_layout.cu checks it without a
 * GPU): a CTA of THREADS = 256 threads (512 for 128x128 tiles, which keeps a thread's vectors
 * in 128 registers) takes one region of T input rows x 128 columns, i.e. 128 / T tiles side by
 * side. Row segments of 128 elements are VR = 128 / V vectors of V elements (one 16-byte
 * load: V = 8 bf16, 4 float32); vector i = k * THREADS + t of the region (k = 0 .. K-1, K = T * VR
 * / THREADS) lies in region row i / VR and column vector i % VR = t % VR (THREADS is a multiple
 * of VR), so
 * every vector a thread holds lies in ONE tile: tile (t % VR) / L, L = T / V lanes per tile row.
 * Loads and code stores are coalesced along rows as in kernel v4.
 *
 * Tile amax: each thread's max over its K vectors, then a warp max over the lanes of the same tile
 * (xor offsets below L: the tile's vectors in one row; offsets VR and up: the warp's other rows),
 * then the CTA's warp maxima through shared memory. Every step is an exact max of abs_bits, the
 * general kernel's own |x| bits with its NaN mode (propagate: NaN bits sort above Inf; ignore:
 * NaN dropped), so the order of the reduction does not change the result. The scale is
 * scale_of_tile on that amax; the elements go through kernel v4's arithmetic (one multiply, the
 * exact emulation when the product is NaN or the rule is not a plain multiply, the fixed-format
 * rounding of elem_fixed.cuh). Writes are the general kernel's: codes, scale_inv and scale codes
 * once per tile, the cuBLAS 128x4 swizzled code once per tile ROW (each of the tile's T rows
 * carries the tile's scale), the BLK128x128 fp32 scale once per tile, and the two counters. */
#ifndef FPSIM_BLOCK_TILES_KERNEL_CUH
#define FPSIM_BLOCK_TILES_KERNEL_CUH

/* Geometry of kernel v6 for tile side T, V elements per vector and region width RW (compile-time
 * constants). RW = 128 for every T; T <= 32 also has a wide variant (RW = 64 V: 512 bf16 or 256
 * float32 columns, four times the vectors per thread in flight) for shapes whose columns allow it.
 * With RW > 32 V a region row spans several warps: a warp then covers the tiles of one part of the
 * row (covers()), and the CTA's maximum of a tile combines only the warps that cover it. */
template <int T, int V, int RW_ = 128> struct fpsim_tiles_layout {
    enum {
        THREADS = T == 128 ? 512 : 256, /* 128x128: half the vectors per thread, no spills */
        RW = RW_,                /* region width in elements */
        VR = RW / V,             /* vectors per region row */
        L = T / V,               /* lanes (vectors) per tile row */
        NT = RW / T,             /* tiles per region */
        K = T * VR / THREADS,    /* vectors per thread */
        WARPS = THREADS / 32,
        ROWS_PER_PASS = THREADS / VR
    };
    /* Region row and first column of vector k of thread t. */
    static __host__ __device__ __forceinline__ int row(int t, int k) { return k * ROWS_PER_PASS + t / VR; }
    static __host__ __device__ __forceinline__ int col(int t) { return (t % VR) * V; }
    /* The region's tile holding every vector of thread t. */
    static __host__ __device__ __forceinline__ int tile(int t) { return (t % VR) / L; }
    /* Warp lanes xor-combined in the tile amax: below L, and VR and above. */
    static __host__ __device__ __forceinline__ int shuffles(int o) { return o < L || o >= VR; }
    /* The one lane per warp and tile that publishes the warp's tile maximum. */
    static __host__ __device__ __forceinline__ int publishes(int t) { return (t % 32) < VR && (t % L) == 0; }
    /* Whether warp w holds vectors of tile i (every warp does when a region row fits in a warp). */
    static __host__ __device__ __forceinline__ int covers(int w, int i)
    {
        return VR <= 32 || (w * 32 % VR) / 32 == i * L / 32;
    }
};

#ifndef FPSIM_TILES_LAYOUT_ONLY /* tests/gpu/test_tiles_layout.cu takes the layout alone */

/* The max over a tile of the per-thread values m (exact: max is order-free): warp shuffles over
 * the lanes of the same tile, then the CTA's warps through slots[] (one barrier). */
template <typename lay>
__device__ __forceinline__ uint32_t tile_max(uint32_t m, uint32_t (*slots)[lay::NT], int t, int warp, int my_tile)
{
#pragma unroll
    for (int o = 1; o < 32; o <<= 1)
        if (lay::shuffles(o)) m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
    if (lay::publishes(t)) slots[warp][my_tile] = m;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < lay::WARPS; i++)
        if (lay::covers(i, my_tile)) m = max(m, slots[i][my_tile]);
    return m;
}

/* A group of V elements of a tile that divide_fast.cuh codes (div_tile), by divide_codes_store with
 * the tile's multipliers d; 0, with nothing stored, elsewhere and in the instances without it
 * (DIVF = 0). */
template <int DIVF, int F, int V>
__device__ __forceinline__ int divide_tile_group(const qargs &a, const float (&v)[V], const divide_scale &d,
                                                 int div_tile, uint8_t *dst, uint32_t *sat)
{
    if constexpr (DIVF) {
        if (div_tile) {
            divide_codes_store<F, V>(a, v, d, dst, sat);
            return 1;
        }
    }
    return 0;
}

/* DIV: 1 for the block FP8 instance that codes vLLM's dividing rules (a.divide_hw) by
 * divide_fast.cuh, with each tile's multipliers computed once and no multiplying path; 0 for
 * every other instance. */
template <int F, int FULL, int BF16, int T, int WIDE, int DIV = 0>
__global__ void __launch_bounds__(T == 128 ? 512 : 256, (T == 128 && BF16) || WIDE ? 2 : 1)
    block_tiles_kernel(qargs a, uint32_t rows, uint32_t cols)
{
    constexpr int V = BF16 ? 8 : 4;
    /* the tile side says the kind (block_tiles_kernel_pick): the kernel carries only its rules */
    constexpr int KIND = T == 128 ? FPSIM_KIND_FP8_BLOCK : T == 32 ? FPSIM_KIND_MX : FPSIM_KIND_NVFP4;
    typedef fpsim_tiles_layout<T, V, WIDE ? 64 * V : 128> lay;
    static_assert(lay::K >= 1 && lay::K * lay::THREADS == T * lay::VR, "whole vectors per thread");
    static_assert(lay::THREADS % lay::VR == 0, "every vector of a thread in one column");
    static_assert(lay::L >= 1 && lay::L <= 32 && lay::L <= lay::VR && (lay::VR <= 32 || lay::VR % 32 == 0),
                  "a tile row inside a warp row");
    __shared__ uint32_t warp_max[2][lay::WARPS][lay::NT]; /* double-buffered: one barrier per region */
    const fpsim_spec es = a.es;
    float tv[6];
    tensor_values<KIND>(a, tv);
    if (blockIdx.x == 0 && threadIdx.x == 0 && a.tvals)
        for (int i = 0; i < 4; i++) a.tvals[i] = tv[i];
    const int t = threadIdx.x, warp = t >> 5, my_tile = lay::tile(t);
    const int clamp6 = KIND == FPSIM_KIND_NVFP4 && a.chain != FPSIM_NVFP4_TE;
    const float elem_max = fpsim_elem_max_dev(a.elem);
    const float te_mul = __fmul_rn(tv[1], __frcp_rn(6.0f)); /* NVFP4 TE: S_enc * fp32(1/6) */
    const uint32_t nrc = cols / lay::RW, nreg = (rows / T) * nrc;
    /* This thread's K vectors of region rg. */
    auto load_region = [&](uint32_t rg, uint4 (&dst)[lay::K]) {
        const uint32_t q0 = (rg / nrc) * T, p0 = (rg % nrc) * lay::RW + (uint32_t)lay::col(t);
#pragma unroll
        for (int k = 0; k < lay::K; k++) {
            const size_t e = (size_t)(q0 + (uint32_t)lay::row(t, k)) * cols + p0;
            dst[k] = __ldcs(reinterpret_cast<const uint4 *>(a.x) + e / V);
        }
    };
    /* PIPE (tiles of 32 and less, 256-thread CTAs of 128 registers): the next region's loads are
     * issued before this region's barrier and arithmetic, so a CTA always has loads in flight
     * (run 40: the MX 32x32 kernel had waited at its barriers with 42% of its issue slots used).
     * The 128x128 dividing instance measured slower that way, in one CTA of 512 threads an SM
     * (run 217: 80 -> 66% of copy). */
    constexpr int PIPE = T <= 32;
    /* LINE_PF (the dividing instance): the region ahead is prefetched into L2 by 128-byte lines, one
     * plain prefetch a thread. prefetch_l2's bulk form takes warp-uniform operands, which per-thread
     * rows turn into a loop of 7 instructions a row: 8% of that instance's instructions (run 216).
     * Run 219 (H100): 128x128 tiles under vLLM's rules 80.7-80.9 -> 86.1-86.4% of the copy, MX
     * 32x32 unchanged (87.1-87.5 -> 87.3-87.8), the multiplying 128x128 tiles a point slower
     * (89.2-89.4 -> 88.1-88.2), which therefore keep the bulk form. Run 218 measured line
     * prefetch together with the 128x128 bf16 instances staging their next region in shared
     * memory (cp.async, 32 KB a CTA, two CTAs an SM) and region positions stepped without a
     * division: slower, 89 -> 83% multiplying and 80.5 -> 74% dividing (not kept). */
    constexpr int LINE_PF = DIV;
    uint4 w[lay::K];
    if (PIPE && blockIdx.x < nreg) load_region(blockIdx.x, w);
    int buf = 0;
    for (uint32_t reg = blockIdx.x; reg < nreg; reg += gridDim.x, buf ^= 1) {
        const uint32_t r0 = (reg / nrc) * T, c0 = (reg % nrc) * lay::RW + (uint32_t)lay::col(t);
        const uint32_t ahead = reg + (PIPE ? 2u : 1u) * gridDim.x;
        if (LINE_PF && ahead < nreg) { /* a region ahead into L2, one 128-byte line a thread */
            constexpr int LPR = lay::RW * (BF16 ? 2 : 4) / 128, LINES = T * LPR; /* lines a row, a region */
#pragma unroll
            for (int i = t; i < LINES; i += lay::THREADS) {
                const size_t e = (size_t)((ahead / nrc) * T + (uint32_t)(i / LPR)) * cols + (ahead % nrc) * lay::RW;
                prefetch_line_l2(static_cast<const char *>(a.x) + e * (BF16 ? 2 : 4) + (i % LPR) * 128);
            }
        } else if (!LINE_PF && t < T && ahead < nreg) { /* the same, one row a thread (bulk) */
            const size_t e = (size_t)((ahead / nrc) * T + (uint32_t)t) * cols + (ahead % nrc) * lay::RW;
            prefetch_l2(static_cast<const char *>(a.x) + e * (BF16 ? 2 : 4), lay::RW * (BF16 ? 2 : 4));
        }
        const int more = PIPE && reg + gridDim.x < nreg;
        uint4 wn[lay::K];
        if (more) load_region(reg + gridDim.x, wn);
        if (!PIPE) load_region(reg, w);
        /* The tile's max of |x| bits (NaN above Inf): the amax under nan=propagate, and the fast
         * case's test (fast_tile.cuh). */
        uint32_t am = 0;
#pragma unroll
        for (int k = 0; k < lay::K; k++) am = max(am, BF16 ? raw_max_bf16x8(w[k]) : raw_max_f32x4(w[k]));
        const uint32_t raw = tile_max<lay>(am, warp_max[buf], t, warp, my_tile);
        am = raw;
        /* nan=ignore with a NaN in the region (CTA-uniform, rare): the amax again without NaN. */
        if (__syncthreads_or(a.nan_ignore && raw > FPSIM_F32_INF_BITS)) {
            am = 0;
#pragma unroll
            for (int k = 0; k < lay::K; k++) {
                float v[V];
                widen_word<BF16>(w[k], v);
#pragma unroll
                for (int j = 0; j < V; j++)
                    am = max(am, abs_bits(v[j], a.nan_ignore));
            }
            am = tile_max<lay>(am, warp_max[buf], t, warp, my_tile);
        }

        tile_scale ts;
        if (KIND == FPSIM_KIND_NVFP4 && a.hw_nvfp4_scale && raw < FPSIM_F32_INF_BITS)
            ts = nvfp4_te_scale_finite(__uint_as_float(raw), te_mul, tv[5]);
        else
            ts = scale_of_tile<KIND>(a, am, tv);
        int plain = !a.divides; /* a dividing rule's elements take scale_group's exact path */
        if (KIND == FPSIM_KIND_MX) ts.mult = mx_plain_mult(ts.code, a.rule, a.ao, &plain);
        const int fast = !DIV && !clamp6 && tile_is_fast(a.fast_mode, raw, plain, ts.mult, elem_max);
        /* DIV: a finite tile whose scale divide_fast_scale_ok takes, coded by divide_fast.cuh */
        constexpr int DIVF = DIV && KIND == FPSIM_KIND_FP8_BLOCK && (F == FPSIM_E4M3 || F == FPSIM_E5M2);
        const int div_tile = DIVF && raw < FPSIM_F32_INF_BITS && divide_fast_scale_ok(ts.inv);
        divide_scale dsc = {};
        if (DIVF) dsc = divide_scale_of(ts.inv);
        const uint32_t tile_row = r0 / T, tile_col = (c0 - (uint32_t)lay::col(t)) / T + (uint32_t)my_tile;
        uint32_t sat = 0;
#pragma unroll
        for (int k = 0; k < lay::K; k++) {
            float v[V];
            widen_word<BF16>(w[k], v);
            const uint32_t r = r0 + (uint32_t)lay::row(t, k);
            uint8_t *row = a.codes + (size_t)r * a.code_stride + (F == FPSIM_E2M1 ? c0 / 2 : c0);
            float y[V];
            if (fast) {
#pragma unroll
                for (int j = 0; j < V; j++) y[j] = __fmul_rn(v[j], ts.mult);
                if (a.counters)
#pragma unroll
                    for (int j = 0; j < V; j++) sat += fabsf(y[j]) > elem_max;
                uint32_t c[code_words<F, V>::W];
                fast_codes<F, V>(y, es, c);
                store_code_words<F, V>(c, row);
            } else if (divide_tile_group<DIVF, F, V>(a, v, dsc, div_tile, row, &sat)) {
                /* stored */
            } else {
                /* Kernel v4's element arithmetic: scale_group (block_rows_kernel.cuh); a dividing
                 * rule's tiles here divide (the instances other than DIV's see no divide_hw) */
                sat += scale_group<V, KIND>(a, v, y, ts, plain, clamp6, elem_max);
                round_store_group<F, FPSIM_RNE, FULL, V>(y, nullptr, es, row);
            }
            /* the tile's first vector in each row: the cuBLAS swizzled code of that row */
            if (KIND != FPSIM_KIND_FP8_BLOCK && a.want_cublas && (t % lay::L) == 0)
                a.cub8[swizzle128x4(r, tile_col, a.cublas_cols)] = (uint8_t)ts.code;
        }
        if (more)
#pragma unroll
            for (int k = 0; k < lay::K; k++)
                w[k] = wn[k];
        if (sat) atomicAdd(&a.counters[0], (unsigned long long)sat);
        /* The tile's first vector of its first row: the tile's scale, once. */
        if (t >= lay::VR || (t % lay::L) != 0) continue;
        if (a.counters && am == 0) atomicAdd(&a.counters[1], 1ull);
        const size_t si = (size_t)tile_row * a.scols + tile_col;
        if (a.scale_inv) a.scale_inv[si] = ts.inv;
        if (a.scale_codes) a.scale_codes[si] = (uint8_t)ts.code;
        if (KIND == FPSIM_KIND_FP8_BLOCK && a.want_cublas)
            a.cub32[(size_t)tile_row * a.cublas_cols + tile_col] = ts.inv; /* BLK128x128 */
    }
}

typedef void (*block_tiles_kernel_fn)(qargs, uint32_t, uint32_t);

template <int F, int T, int WIDE, int DIV = 0> block_tiles_kernel_fn block_tiles_kernel_of3(int full, int bf16)
{
    if (full) return bf16 ? block_tiles_kernel<F, 1, 1, T, WIDE, DIV> : block_tiles_kernel<F, 1, 0, T, WIDE, DIV>;
    return bf16 ? block_tiles_kernel<F, 0, 1, T, WIDE, DIV> : block_tiles_kernel<F, 0, 0, T, WIDE, DIV>;
}

/* The wide variant (region width 64 V) for T <= 32 when wide is set, else 128 columns. */
template <int F, int T> block_tiles_kernel_fn block_tiles_kernel_of(int full, int bf16, int wide)
{
    if constexpr (T <= 32)
        if (wide) return block_tiles_kernel_of3<F, T, 1>(full, bf16);
    return block_tiles_kernel_of3<F, T, 0>(full, bf16);
}

/* Block FP8 128x128: the dividing instance where divide_hw (before run 215, one instance coded those
 * tiles through divide_store_group, 5 points slower). */
template <int F> block_tiles_kernel_fn block_tiles_fp8_block_of(int full, int bf16, int divide_hw)
{
    if (divide_hw) return block_tiles_kernel_of3<F, 128, 0, 1>(full, bf16);
    return block_tiles_kernel_of3<F, 128, 0>(full, bf16);
}

/* Region width of kernel v6 for tile side T: the wide variant where cols allows it. */
inline uint32_t block_tiles_region_width(int side, int bf16, size_t cols)
{
    const uint32_t wide = bf16 ? 512u : 256u;
    return side <= 32 && cols % wide == 0 ? wide : 128u;
}

/* Threads per CTA of the v6 kernel for square tiles of side `side`. */
inline unsigned block_tiles_kernel_threads(int side) { return side == 128 ? 512u : 256u; }

/* The v6 kernel for scheme kind, square tile side `side` and element spec es (RNE), or NULL.
 * Instantiated only for the 2D tiles each kind has: NVFP4 16x16 (E2M1), MX 32x32 (E4M3, E5M2,
 * E2M3, E3M2, E2M1), block FP8 128x128 (E4M3, E5M2). divide_hw: qargs.divide_hw. */
inline block_tiles_kernel_fn block_tiles_kernel_pick(const fpsim_spec *es, int kind, int side, int bf16, int wide,
                                                     int divide_hw)
{
    const int full = fpsim_spec_full_rules(es) != 0;
    if (es->round != FPSIM_RNE) return NULL;
    const int f = es->format;
    if (kind == FPSIM_KIND_NVFP4 && side == 16 && f == FPSIM_E2M1 && fpsim_elem_fixed_matches<FPSIM_E2M1>(es))
        return block_tiles_kernel_of<FPSIM_E2M1, 16>(full, bf16, wide);
    if (kind == FPSIM_KIND_MX && side == 32) {
        if (f == FPSIM_E4M3 && fpsim_elem_fixed_matches<FPSIM_E4M3>(es)) return block_tiles_kernel_of<FPSIM_E4M3, 32>(full, bf16, wide);
        if (f == FPSIM_E5M2 && fpsim_elem_fixed_matches<FPSIM_E5M2>(es)) return block_tiles_kernel_of<FPSIM_E5M2, 32>(full, bf16, wide);
        if (f == FPSIM_E2M3 && fpsim_elem_fixed_matches<FPSIM_E2M3>(es)) return block_tiles_kernel_of<FPSIM_E2M3, 32>(full, bf16, wide);
        if (f == FPSIM_E3M2 && fpsim_elem_fixed_matches<FPSIM_E3M2>(es)) return block_tiles_kernel_of<FPSIM_E3M2, 32>(full, bf16, wide);
        if (f == FPSIM_E2M1 && fpsim_elem_fixed_matches<FPSIM_E2M1>(es)) return block_tiles_kernel_of<FPSIM_E2M1, 32>(full, bf16, wide);
    }
    if (kind == FPSIM_KIND_FP8_BLOCK && side == 128) {
        if (f == FPSIM_E4M3 && fpsim_elem_fixed_matches<FPSIM_E4M3>(es)) return block_tiles_fp8_block_of<FPSIM_E4M3>(full, bf16, divide_hw);
        if (f == FPSIM_E5M2 && fpsim_elem_fixed_matches<FPSIM_E5M2>(es)) return block_tiles_fp8_block_of<FPSIM_E5M2>(full, bf16, divide_hw);
    }
    return NULL;
}

#endif /* FPSIM_TILES_LAYOUT_ONLY */
#endif
