/* block_cols_kernel.cuh: the fast block quantizer (kernel v5) for columnwise copies with 1 x TC
 * stored tiles (MX 1x32, NVFP4 1x16 with or without the RHT, block FP8 1x128). Included by
 * block_quantize.cu inside its namespace, after block_rows_kernel.cuh, whose helpers it shares.
 *
 * The stored operand is the transpose: stored row c is input column c, and a tile is TC
 * consecutive input rows of one column. A CTA stages an input block of RIN = max(TC, 32) rows x
 * CIN = 2048 / RIN columns in shared memory (16-byte loads along input rows, coalesced), then each
 * thread takes 8 consecutive stored elements (one input column, 8 input rows), so the tile amax is
 * a shuffle over TC / 8 neighbouring lanes and the codes of a stored row leave as 8-byte stores.
 * Shapes: rows % RIN == 0 and cols % CIN == 0 (others take the general kernel). The element
 * arithmetic is the rows kernel's: same scale rules, same rare path, same fixed rounding. With
 * a.amax_only the kernel only reduces the tensor amax of the stored operand (after the RHT: the
 * first pass of NVFP4 with RHT when the amax is not given). */
#ifndef FPSIM_BLOCK_COLS_KERNEL_CUH
#define FPSIM_BLOCK_COLS_KERNEL_CUH

/* Outputs h*8 .. h*8+7 of the 16-point RHT of u[16] (BF16 values held in floats), as
 * rht16_bf16 computes them: y_j = sum_i +-0.25 s_i u_i added in index order from +0, then one
 * rounding to BF16 (RNE). In FP32 that sum is exact when every nonzero u_i is finite with
 * exponent field 3..250 and the fields span at most 12 binades: the terms are 8-bit significands
 * times 2^(e-2), so every partial sum is a multiple of 2^(emin-9) below 2^(emax+3), 24 bits or
 * fewer, and no FP32 operation rounds; zeros get the same signs as in double (same operations in
 * the same order, all exact). The BF16 rounding of an exact FP32 value (subnormals included: BF16
 * is the top half of FP32) is the integer RNE on its top 16 bits. Otherwise: rht16_bf16 (double). */
/* The double-precision RHT (rht16_bf16), out of line: its registers stay out of the kernel's. */
__device__ __noinline__ void rht16_half_double(const float u[16], int h, float out[8])
{
    float all[16];
    for (int i = 0; i < 16; i++) all[i] = u[i];
    rht16_bf16(all);
    for (int j = 0; j < 8; j++) out[j] = h ? all[8 + j] : all[j];
}

__device__ __forceinline__ void rht16_half_fp32(const float (&u)[16], int h, float out[8])
{
    const rht16_range r = rht16_range_of<0>(u); /* rht16.cuh: the FP32 form's conditions */
    if (!(r.ok && r.span <= 12u)) {
        rht16_half_double(u, h, out);
        return;
    }
    float w[16];
#pragma unroll
    for (int i = 0; i < 16; i++) w[i] = __fmul_rn(__fmul_rn(0.25f, u[i]), rht_sign(i));
#pragma unroll
    for (int jj = 0; jj < 8; jj++) {
        const int j = 8 * h + jj;
        float acc = 0.0f;
#pragma unroll
        for (int i = 0; i < 16; i++) acc = __fadd_rn(acc, (__popc(i & j) & 1) ? -w[i] : w[i]);
        const uint32_t b = __float_as_uint(acc);
        out[jj] = __uint_as_float((b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u);
    }
}

template <int F, int SR, int FULL, int BF16, int TC, int RHT>
__global__ void __launch_bounds__(256, RHT ? 2 : 3) block_cols_kernel(qargs a, uint32_t rows, uint32_t cols)
{
    constexpr int RIN = TC > 32 ? TC : 32, CIN = 2048 / RIN, P = RIN / 8, L = TC / 8;
    constexpr int VL = BF16 ? 8 : 4; /* input elements per 16-byte load */
    constexpr int MODE = SR ? FPSIM_SR : FPSIM_RNE;
    __shared__ float tile[RIN][CIN + 1];
    const fpsim_spec es = a.es;
    float tv[6];
    tensor_values(a, tv);
    if (blockIdx.x == 0 && threadIdx.x == 0 && a.tvals && !a.amax_only)
        for (int i = 0; i < 4; i++) a.tvals[i] = tv[i];
    const int t = threadIdx.x, c = t / P, part = t % P;
    const int clamp6 = a.kind == FPSIM_KIND_NVFP4 && a.chain != FPSIM_NVFP4_TE;
    const float elem_max = fpsim_elem_max_dev(a.elem);
    const float te_mul = __fmul_rn(tv[1], __frcp_rn(6.0f)); /* NVFP4 TE: S_enc * fp32(1/6) */
    const uint32_t nbc = cols / CIN, nblk = (rows / RIN) * nbc;
    for (uint32_t blk = blockIdx.x; blk < nblk; blk += gridDim.x) {
        const uint32_t r0 = (blk / nbc) * RIN, c0 = (blk % nbc) * CIN;
        if (t < RIN && blk + gridDim.x < nblk) { /* the CTA's next block into L2, one row a thread */
            const uint32_t nx = blk + gridDim.x;
            const size_t e = (size_t)((nx / nbc) * RIN + (uint32_t)t) * cols + (nx % nbc) * CIN;
            prefetch_l2(static_cast<const char *>(a.x) + e * (BF16 ? 2 : 4), CIN * (BF16 ? 2 : 4));
        }
        __syncthreads(); /* the previous block's reads are done */
        for (int i = t; i < RIN * CIN / VL; i += 256) {
            const int rr = i / (CIN / VL), cv = i % (CIN / VL);
            const size_t e = (size_t)(r0 + rr) * cols + c0 + (uint32_t)(cv * VL);
            const uint4 w = __ldcs(reinterpret_cast<const uint4 *>(a.x) + e / VL);
            const uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
            for (int q = 0; q < 4; q++) {
                if (BF16) {
                    tile[rr][cv * VL + 2 * q] = __uint_as_float(u[q] << 16);
                    tile[rr][cv * VL + 2 * q + 1] = __uint_as_float(u[q] & 0xFFFF0000u);
                } else {
                    tile[rr][cv * VL + q] = __uint_as_float(u[q]);
                }
            }
        }
        __syncthreads();
        float v[8];
        if (RHT) {
            float u[16];
#pragma unroll
            for (int i = 0; i < 16; i++) u[i] = tile[(part / 2) * 16 + i][c];
            rht16_half_fp32(u, part & 1, v);
        } else {
#pragma unroll
            for (int j = 0; j < 8; j++) v[j] = tile[part * 8 + j][c];
        }
        uint32_t am = 0;
        if (a.amax_only) { /* the pass before: the tensor amax of the stored (post-RHT) operand */
#pragma unroll
            for (int j = 0; j < 8; j++) am = max(am, abs_bits(v[j], a.nan_ignore));
            for (int o = 16; o; o >>= 1) am = max(am, __shfl_xor_sync(0xFFFFFFFFu, am, o));
            if ((t & 31) == 0) atomicMax(a.amax_out, am);
            continue;
        }
        /* The tile's max of |x| bits (NaN above Inf) over its L lanes: the fast case's test and,
         * when the tile takes it, the amax under every NaN policy (fast_tile.cuh). */
        uint32_t raw = 0;
#pragma unroll
        for (int j = 0; j < 8; j++) raw = max(raw, __float_as_uint(v[j]) & 0x7FFFFFFFu);
#pragma unroll
        for (int o = 1; o < L; o <<= 1) raw = max(raw, __shfl_xor_sync(0xFFFFFFFFu, raw, o));
        tile_scale ts;
        int plain = !a.divides; /* a dividing rule's elements take scale_group's exact path */
        if (a.hw_nvfp4_scale && raw < FPSIM_F32_INF_BITS)
            ts = nvfp4_te_scale_finite(__uint_as_float(raw), te_mul, tv[5]);
        else
            ts = scale_of_tile(a, raw, tv);
        if (a.kind == FPSIM_KIND_MX) ts.mult = mx_plain_mult(ts.code, a.rule, a.ao, &plain);
        /* the SR fast form takes 2^-14 times the multiplier, exact from 2^-112 on */
        const int fast = !clamp6 && tile_is_fast(a.fast_mode, raw, plain, ts.mult, elem_max) &&
                         (!SR || ts.mult >= 0x1p-112f);
        am = raw;
        if (raw >= FPSIM_F32_INF_BITS) { /* NaN/Inf: the amax under the NaN policy, and its scale */
            const uint32_t lane = (uint32_t)t & 31u;
            const uint32_t tile_mask = L <= 1 ? (1u << lane) : (((1u << L) - 1u) << (lane & ~(uint32_t)(L - 1)));
            am = 0;
#pragma unroll
            for (int j = 0; j < 8; j++) am = max(am, abs_bits(v[j], a.nan_ignore));
#pragma unroll
            for (int o = 1; o < L; o <<= 1) am = max(am, __shfl_xor_sync(tile_mask, am, o));
            ts = scale_of_tile(a, am, tv);
            plain = !a.divides;
            if (a.kind == FPSIM_KIND_MX) ts.mult = mx_plain_mult(ts.code, a.rule, a.ao, &plain);
        }
        const uint32_t srow = c0 + (uint32_t)c, k0 = r0 + (uint32_t)(part * 8);
        const uint32_t f = srow * rows + k0; /* stored linear index: the SR counter */
        uint32_t rb[8];
        if (SR)
            sr_bytes<8>(rb, a, f);
        else
#pragma unroll
            for (int j = 0; j < 8; j++) rb[j] = 0;
        float y[8];
        uint8_t *dst = a.codes + (size_t)srow * a.code_stride + (F == FPSIM_E2M1 ? k0 / 2 : k0);
        uint32_t sat = 0;
        if (fast) {
#pragma unroll
            for (int j = 0; j < 8; j++) y[j] = __fmul_rn(v[j], ts.mult);
            if (a.counters)
#pragma unroll
                for (int j = 0; j < 8; j++) sat += fabsf(y[j]) > elem_max;
            uint32_t cw[code_words<F, 8>::W];
            if constexpr (SR) {
                const float m14 = __fmul_rn(ts.mult, 0x1p-14f);
                float t[8];
                uint32_t sg[8], w[2];
#pragma unroll
                for (int j = 0; j < 8; j++) {
                    t[j] = __fmul_rn(FPSIM_GPU_SR_SIGNED ? v[j] : fabsf(v[j]), m14);
                    sg[j] = __float_as_uint(v[j]);
                }
                /* the bytes back into their words: element j's in byte j % 4 of w[j / 4] */
#pragma unroll
                for (int m = 0; m < 2; m++)
                    w[m] = __byte_perm(__byte_perm(rb[4 * m], rb[4 * m + 1], 0x0073u),
                                       __byte_perm(rb[4 * m + 2], rb[4 * m + 3], 0x0073u), 0x5410u);
                if (FPSIM_GPU_SR_SIGNED)
                    fast_codes_sr_f16_signed<8>(t, w, cw);
                else
                    fast_codes_sr_f16<8>(t, sg, w, cw);
            } else {
                fast_codes<F, 8>(y, es, cw);
            }
            store_code_words<F, 8>(cw, dst);
        } else if (!divide_store_group<F, 8>(a, v, ts, raw < FPSIM_F32_INF_BITS, dst, &sat)) {
            sat = scale_group<8>(a, v, y, ts, plain, clamp6, elem_max);
            round_store_group<F, MODE, FULL, 8>(y, rb, es, dst);
        }
        if (sat) atomicAdd(&a.counters[0], (unsigned long long)sat);
        if ((part % L) != 0) continue;
        if (a.counters && am == 0) atomicAdd(&a.counters[1], 1ull);
        const uint32_t sc = k0 / TC;
        const size_t si = (size_t)srow * a.scols + sc;
        if (a.scale_inv) a.scale_inv[si] = ts.inv;
        if (a.scale_codes) a.scale_codes[si] = (uint8_t)ts.code;
        if (!a.want_cublas) continue;
        if (a.kind == FPSIM_KIND_FP8_BLOCK)
            a.cub32[(size_t)sc * a.cublas_cols + srow] = ts.inv;
        else
            a.cub8[swizzle128x4(srow, sc, a.cublas_cols)] = (uint8_t)ts.code;
    }
}

typedef void (*block_cols_kernel_fn)(qargs, uint32_t, uint32_t);

template <int F, int SR, int TC, int RHT> block_cols_kernel_fn block_cols_kernel_of(int full, int bf16)
{
    if (full) return bf16 ? block_cols_kernel<F, SR, 1, 1, TC, RHT> : block_cols_kernel<F, SR, 1, 0, TC, RHT>;
    return bf16 ? block_cols_kernel<F, SR, 0, 1, TC, RHT> : block_cols_kernel<F, SR, 0, 0, TC, RHT>;
}

/* The v5 kernel for scheme kind/tile width tc and element spec es, or NULL. Instantiated only
 * for the tiles each kind has: NVFP4 1x16 (E2M1, RNE or SR), MX 1x32 (E4M3, E5M2, E2M3, E3M2,
 * E2M1), block FP8 1x128 (E4M3, E5M2). */
inline block_cols_kernel_fn block_cols_kernel_pick(const fpsim_spec *es, int kind, int tc, int sr, int rht, int bf16)
{
    const int full = fpsim_spec_full_rules(es) != 0;
    if (es->round != (sr ? FPSIM_SR : FPSIM_RNE)) return NULL;
    const int f = es->format;
    if (kind == FPSIM_KIND_NVFP4 && tc == 16 && f == FPSIM_E2M1 && fpsim_elem_fixed_matches<FPSIM_E2M1>(es))
    {
        if (rht) return sr ? block_cols_kernel_of<FPSIM_E2M1, 1, 16, 1>(full, bf16) : block_cols_kernel_of<FPSIM_E2M1, 0, 16, 1>(full, bf16);
        return sr ? block_cols_kernel_of<FPSIM_E2M1, 1, 16, 0>(full, bf16) : block_cols_kernel_of<FPSIM_E2M1, 0, 16, 0>(full, bf16);
    }
    if (sr) return NULL;
    if (kind == FPSIM_KIND_MX && tc == 32) {
        if (f == FPSIM_E4M3 && fpsim_elem_fixed_matches<FPSIM_E4M3>(es)) return block_cols_kernel_of<FPSIM_E4M3, 0, 32, 0>(full, bf16);
        if (f == FPSIM_E5M2 && fpsim_elem_fixed_matches<FPSIM_E5M2>(es)) return block_cols_kernel_of<FPSIM_E5M2, 0, 32, 0>(full, bf16);
        if (f == FPSIM_E2M3 && fpsim_elem_fixed_matches<FPSIM_E2M3>(es)) return block_cols_kernel_of<FPSIM_E2M3, 0, 32, 0>(full, bf16);
        if (f == FPSIM_E3M2 && fpsim_elem_fixed_matches<FPSIM_E3M2>(es)) return block_cols_kernel_of<FPSIM_E3M2, 0, 32, 0>(full, bf16);
        if (f == FPSIM_E2M1 && fpsim_elem_fixed_matches<FPSIM_E2M1>(es)) return block_cols_kernel_of<FPSIM_E2M1, 0, 32, 0>(full, bf16);
    }
    if (kind == FPSIM_KIND_FP8_BLOCK && tc == 128) {
        if (f == FPSIM_E4M3 && fpsim_elem_fixed_matches<FPSIM_E4M3>(es)) return block_cols_kernel_of<FPSIM_E4M3, 0, 128, 0>(full, bf16);
        if (f == FPSIM_E5M2 && fpsim_elem_fixed_matches<FPSIM_E5M2>(es)) return block_cols_kernel_of<FPSIM_E5M2, 0, 128, 0>(full, bf16);
    }
    return NULL;
}

#endif
