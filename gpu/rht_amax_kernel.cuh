/* rht_amax_kernel.cuh: the tensor amax passes of columnwise NVFP4 with the RHT, for bf16 inputs:
 * max |y| over every 16-row column vector y = RHT(x) as the quantizer stores it, without the
 * quantizer's staging. Included by block_quantize.cu after kernel v8, whose RHT routines they
 * share. Under rhtsum=mma (rht_mma_amax_kernel): mma.m16n8k16 in FP32, then cvt.rn.bf16x2; under
 * rhtsum=exact (rht_exact_amax_kernel, below): BF16 of the exact sums, found by bounds.
 *
 * Why: the pass before ran kernel v8 itself with nothing but the max after its transform. Under
 * rhtsum=mma it took as long as the RHT quantization (0.23 ms of the 0.59 ms end-to-end SR+RHT on
 * 16384 x 16384, gpu/RESULTS.md run 101) while reading half the bytes: its shared-memory staging,
 * barrier and ldmatrix/stmatrix round trip are there for the codes' layout, which the amax does
 * not need. Under rhtsum=exact it took 0.52 ms of 1.22, mostly the FP64 transform of every column
 * spanning more than 12 binades, of which the amax needs the largest output only. Runs 102-104:
 * 0.14 and 0.19 ms.
 *
 * rhtsum=mma, exact by construction: each output of mma.m16n8k16 depends only on its row of A
 * and its column of B, so the A operand is built straight from loaded words, its 16 rows m being
 * 16 columns of x in any order, and the same instruction and the same conversion give the same
 * BF16 bits as the quantizer's rht_mma_warp (verify compares the global amax with the CPU's model
 * of the sum). A warp takes units of 16 rows x 64 columns: lane (g = lane / 4, q = lane % 4)
 * loads 16 bytes (columns 8 g .. 8 g + 7) of rows 2q, 2q + 1, 2q + 8, 2q + 9 (per row, the 8 lanes
 * of one q read 128 contiguous bytes). Word k of those (columns c = 8 g + 2 k, c + 1) gives four
 * MMA blocks' A fragments, A row g being column c and row g + 8 column c + 1, A[m][k'] =
 * x[k'][column m] (mma.m16n8k16 .row A: a0 row g, k' = 2q, 2q+1; a1 row g + 8; a2, a3 the same
 * rows at k' + 8):
 *     a0 = (x[2q][c], x[2q+1][c]),      a1 = (x[2q][c+1], x[2q+1][c+1]),
 *     a2 = (x[2q+8][c], x[2q+9][c]),    a3 = (x[2q+8][c+1], x[2q+9][c+1]). */
#ifndef FPSIM_RHT_AMAX_KERNEL_CUH
#define FPSIM_RHT_AMAX_KERNEL_CUH

constexpr unsigned RHT_AMAX_THREADS = 256;
constexpr uint32_t RHT_AMAX_UNIT_ROWS = 16u, RHT_AMAX_UNIT_COLS = 64u;

/* rows % 16 == 0, cols % 64 == 0, x 16-byte aligned, bf16 bits; nan_mode as abs_bits. */
__global__ void __launch_bounds__(RHT_AMAX_THREADS)
    rht_mma_amax_kernel(const uint16_t *x, uint32_t rows, uint32_t cols, uint32_t *amax_out, int nan_mode)
{
    const uint32_t lane = threadIdx.x % 32u, g = lane / 4u, q = lane % 4u;
    uint32_t b[2][2];
    rht_mma_b(lane, b);
    const uint32_t lim = amax_limit_bf16x2(nan_mode);
    const uint32_t strips = cols / RHT_AMAX_UNIT_COLS, units = rows / RHT_AMAX_UNIT_ROWS * strips;
    const uint32_t warps = gridDim.x * (RHT_AMAX_THREADS / 32u);
    const size_t row_words = (size_t)cols / 8u; /* 16-byte words per row */
    const uint4 *xv = reinterpret_cast<const uint4 *>(x);
    uint32_t m2 = 0;
    for (uint32_t u = blockIdx.x * (RHT_AMAX_THREADS / 32u) + threadIdx.x / 32u; u < units; u += warps) {
        const uint32_t band = u / strips, strip = u % strips;
        const uint4 *p = xv + (size_t)band * RHT_AMAX_UNIT_ROWS * row_words + strip * 8u + g;
        const uint4 r[4] = {__ldcs(p + 2u * q * row_words), __ldcs(p + (2u * q + 1u) * row_words),
                            __ldcs(p + (2u * q + 8u) * row_words), __ldcs(p + (2u * q + 9u) * row_words)};
        const uint32_t w[4][4] = {{r[0].x, r[0].y, r[0].z, r[0].w},
                                  {r[1].x, r[1].y, r[1].z, r[1].w},
                                  {r[2].x, r[2].y, r[2].z, r[2].w},
                                  {r[3].x, r[3].y, r[3].z, r[3].w}};
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const uint32_t a0 = __byte_perm(w[0][k], w[1][k], 0x5410u),
                           a1 = __byte_perm(w[0][k], w[1][k], 0x7632u);
            const uint32_t a2 = __byte_perm(w[2][k], w[3][k], 0x5410u),
                           a3 = __byte_perm(w[2][k], w[3][k], 0x7632u);
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float d[4];
                asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                    "{%8, %9}, {%10, %10, %10, %10};"
                    : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                    : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b[h][0]), "r"(b[h][1]), "f"(0.0f));
#pragma unroll
                for (int r2 = 0; r2 < 2; r2++) {
                    const __nv_bfloat162 v = __floats2bfloat162_rn(d[2 * r2], d[2 * r2 + 1]);
                    uint32_t t;
                    memcpy(&t, &v, 4);
                    m2 = amax_fold_bf16x2(m2, t, lim);
                }
            }
        }
    }
    uint32_t m = amax_of_bf16x2(m2);
    for (int o = 16; o; o >>= 1)
        m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
    if (lane == 0) atomicMax(amax_out, m);
}

/* ---- rhtsum=exact ----
 * The quantizer rounds each exact sum y_j once to BF16 (rht16_full; where the inputs are in range
 * and span at most 41 binades its value is the exact sum), and BF16 nearest-even is monotone, so
 * a column's amax is RNE(M), M = max_j |y_j|: it needs M only closely enough to round it. The
 * FP32 FWHT (the terms +-0.25 u_i are exact) gives each y_j within gamma_4 S, S = sum |terms|,
 * gamma_4 = 4u / (1 - 4u), u = 2^-24: four levels of round-to-nearest adds (exact where the result
 * is subnormal; no overflow in range). With S' the FP32 sum of the |terms| (S <= S' (1 + 16u)),
 * e = 2^-21 S' (= 8u S') exceeds that, so M lies in [m - e, m + e], m = max_j |FP32 y_j|; lo and hi
 * computed with directed rounding bound it, and where RNE(lo) == RNE(hi) that is RNE(M). Else
 * (the interval holds a rounding boundary: rare while e is far below BF16's step near M), and
 * for columns out of range, wider than 41 binades, NaN or Inf, the quantizer's own rht16_full
 * gives the outputs. Spans of at most 12 binades make the FP32 FWHT exact (rht16.cuh): e = 0. */
constexpr uint32_t RHT_EXACT_AMAX_UNIT_COLS = 256u; /* a warp: 16 rows x 32 lanes x 8 columns */

/* Whether a column whose bound cannot raise the max found so far skips its FWHT (1, 2) or not (0).
 * M <= S <= S' (1 + 16u) (S' the FP32 sum of the 16 nonnegative |terms|, all normal in range),
 * so with U = RU(S' (1 + 2^-19)) >= M and RNE monotone, RNE(M) <= RNE(U); where RNE(U) is at most
 * the max already held, the column cannot raise it. The max held is the warp's at the unit's
 * start (one redux.sync) and the lane's own since; at 2, also the other warps' so far (an
 * atomicMax per unit whose old value comes back). Columns out of range never skip. A host model
 * of the bench's fill: 94% (default fill) and 30% (--spread 0) of a warp's column iterations
 * skip at 1; at 2, after each warp's first unit, all and 95-98%. Run 191 (H100, where this pass
 * already runs at about 90% of copy): SR+RHT end to end 1097-1098 -> 1106-1109 GB/s (+0.9%) at 1
 * and 2, 1229 -> 1239 at --spread 0 at 2. Run 192 (H200): the pass 0.18-0.19 -> 0.178 ms, +2% end
 * to end at the default fill, where it still reads at only about 72% of copy. */
#ifndef FPSIM_GPU_RHT_AMAX_SKIP
#define FPSIM_GPU_RHT_AMAX_SKIP 2
#endif

/* BF16 nearest-even of finite |f| as float bits (the sign dropped: RD(0 - 0) is -0) */
__device__ __forceinline__ uint32_t bf16_rne_bits_of(float f)
{
    const uint32_t b = __float_as_uint(f) & 0x7FFFFFFFu;
    return (b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u;
}

/* The rare columns: the quantizer's arithmetic (out of line, with its FP64 forms), then the max. */
__device__ __noinline__ uint32_t rht_exact_column_amax_full(v7_elems u, int nan_mode)
{
    float y[16];
    rht16_full<1>(u.v, y);
    uint32_t m = 0;
#pragma unroll
    for (int j = 0; j < 16; j++)
        m = max(m, abs_bits(y[j], nan_mode));
    return m;
}

/* RNE(M) of one column u (BF16 values as floats) as |bits|, under nan_mode; or, with
 * FPSIM_GPU_RHT_AMAX_SKIP on, 0 where RNE(M) cannot exceed held (BF16 bits of a max already
 * found), so that the caller's max is unchanged either way. */
__device__ __forceinline__ uint32_t rht_exact_column_amax(const v7_elems &u, uint32_t held, int nan_mode)
{
    const rht16_range r = rht16_range_of<1>(u.v);
    if (r.in_range && r.span <= 41u) {
        float w[16], s = 0.f;
#pragma unroll
        for (int i = 0; i < 16; i++) {
            w[i] = rht_mul(u.v[i], 0.25f * rht_sign(i));
            s = rht_add(s, fabsf(w[i]));
        }
        if (FPSIM_GPU_RHT_AMAX_SKIP && bf16_rne_bits_of(__fmul_ru(s, 1.0f + 0x1p-19f)) <= held) return 0u;
        rht16_fwht(w);
        float m = 0.f;
#pragma unroll
        for (int j = 0; j < 16; j++)
            m = fmaxf(m, fabsf(w[j]));
        const float e = r.span <= 12u ? 0.f : __fmul_ru(s, 0x1p-21f);
        const uint32_t lo = bf16_rne_bits_of(fmaxf(__fsub_rd(m, e), 0.f)),
                       hi = bf16_rne_bits_of(__fadd_ru(m, e));
        if (lo == hi) return hi;
    }
    return rht_exact_column_amax_full(u, nan_mode);
}

/* This lane's first 16-byte word of unit u (16 rows x 256 columns; the unit's row i at + i
 * row_words): columns 8 lane .. 8 lane + 7 of the unit's strip. */
__device__ __forceinline__ const uint4 *rht_exact_unit_words(const uint4 *xv, uint32_t u, uint32_t strips,
                                                            size_t row_words, uint32_t lane)
{
    const uint32_t band = u / strips, strip = u % strips;
    return xv + (size_t)band * RHT_AMAX_UNIT_ROWS * row_words + strip * 32u + lane;
}

/* Whether a lane tests all 8 of its columns against the max held at the unit's start before any
 * FWHT (1) or each column against the max found up to it (0, runs 191-194). With 0 each column's
 * test waits for the one before (its max is the next one's threshold, and its branch keeps the
 * next column's sum from being moved above it): 8 chains of about 16 dependent adds in a row. With
 * 1 the 8 bounds are one branch-free run of 8 independent trees of adds, and one branch follows;
 * only the columns whose bound is above the max held run rht_exact_column_amax. The bound here is
 * U = RU(RU(0.25 S'') (1 + 2^-19)), S'' the FP32 sum of the 16 |u_i| in a tree: 0.25 S'' is
 * at least (1 - gamma_4) S, S the exact sum of the |terms| (which bounds every |y_j|, also for the
 * FP64 forms of the rare columns: their error is under 2^-50 S), so U >= S. A column is skipped
 * only where U is finite, so that NaN, Inf or an overflowing sum always run the full column; no
 * range test is needed for soundness. Only with FPSIM_GPU_RHT_AMAX_SKIP on. Run 195 (H100, probe
 * B1H against HH, both launched at half the usual grid, and H at the full grid): SR+RHT end to end
 * 1100-1103 -> 1113-1115 GB/s on the default fill, 1227-1232 -> 1244-1246 at --spread 0 (the pass
 * about 0.194 -> 0.187 ms); the half grid alone changed nothing. */
#ifndef FPSIM_GPU_RHT_AMAX_BATCH
#define FPSIM_GPU_RHT_AMAX_BATCH 1
#endif

/* Column c (0-7) of a lane's 16 rows of 16 bytes (columns 2k, 2k + 1 in word k: x y z w), as floats. */
__device__ __forceinline__ v7_elems rht_exact_lane_column(const uint4 (&v)[16], int c)
{
    v7_elems col;
#pragma unroll
    for (int i = 0; i < 16; i++) {
        const uint32_t word = c < 2 ? v[i].x : c < 4 ? v[i].y : c < 6 ? v[i].z : v[i].w;
        col.v[i] = __uint_as_float((c & 1) ? word & 0xFFFF0000u : word << 16);
    }
    return col;
}

/* FPSIM_GPU_RHT_AMAX_BATCH's bound of column u as BF16 bits RNE(U), U as above; at or above
 * 0x7F800000 where U is not finite. */
__device__ __forceinline__ uint32_t rht_exact_column_bound(const v7_elems &u)
{
    float t[8];
#pragma unroll
    for (int i = 0; i < 8; i++)
        t[i] = rht_add(fabsf(u.v[2 * i]), fabsf(u.v[2 * i + 1]));
#pragma unroll
    for (int h = 4; h; h >>= 1)
#pragma unroll
        for (int i = 0; i < h; i++)
            t[i] = rht_add(t[i], t[i + h]);
    return bf16_rne_bits_of(__fmul_ru(__fmul_ru(t[0], 0.25f), 1.0f + 0x1p-19f));
}

/* m folded with the column maxima of a lane's 8 columns (16 rows of 16 bytes: columns 2k, 2k + 1
 * in word k of each row, x y z w). */
__device__ __forceinline__ uint32_t rht_exact_lane_amax(const uint4 (&v)[16], uint32_t m, int nan_mode)
{
    uint32_t need = 0xFFu; /* bit c: column c may raise the max held (all, without the batch) */
    if (FPSIM_GPU_RHT_AMAX_BATCH && FPSIM_GPU_RHT_AMAX_SKIP) {
        need = 0;
#pragma unroll
        for (int c = 0; c < 8; c++) {
            const uint32_t ub = rht_exact_column_bound(rht_exact_lane_column(v, c));
            need |= (ub > m || ub >= 0x7F800000u) ? 1u << c : 0u;
        }
        if (need == 0u) return m; /* the common case after a warp's first units */
    }
#pragma unroll
    for (int c = 0; c < 8; c++)
        if (need >> c & 1u) m = max(m, rht_exact_column_amax(rht_exact_lane_column(v, c), m, nan_mode));
    return m;
}

/* rows % 16 == 0, cols % 256 == 0, x 16-byte aligned, bf16 bits. A warp takes units of 16 rows x
 * 256 columns: lane l loads 16 bytes (columns 8 l .. 8 l + 7) of each of the 16 rows (a warp reads
 * 512 contiguous bytes per row) and takes those 8 columns one after another. Two CTAs per SM (128
 * registers): at one (212 registers) the fallback columns ran slower than kernel v8's pass, 5.73
 * against 4.53 ms end to end at --spread 20 where most columns span more than 41 binades; at two,
 * 4.59 (runs 103-104). */
__global__ void __launch_bounds__(RHT_AMAX_THREADS, 2)
    rht_exact_amax_kernel(const uint16_t *x, uint32_t rows, uint32_t cols, uint32_t *amax_out, int nan_mode)
{
    const uint32_t lane = threadIdx.x % 32u;
    const uint32_t strips = cols / RHT_EXACT_AMAX_UNIT_COLS, units = rows / RHT_AMAX_UNIT_ROWS * strips;
    const uint32_t warps = gridDim.x * (RHT_AMAX_THREADS / 32u);
    const size_t row_words = (size_t)cols / 8u;
    const uint4 *xv = reinterpret_cast<const uint4 *>(x);
    uint32_t m = 0;
    for (uint32_t u = blockIdx.x * (RHT_AMAX_THREADS / 32u) + threadIdx.x / 32u; u < units; u += warps) {
        const uint4 *p = rht_exact_unit_words(xv, u, strips, row_words, lane);
        if (FPSIM_GPU_RHT_AMAX_SKIP) {
            m = __reduce_max_sync(0xFFFFFFFFu, m); /* every lane takes the unit */
            if (FPSIM_GPU_RHT_AMAX_SKIP >= 2) { /* and the other warps' maxima so far */
                const uint32_t others = lane == 0 ? atomicMax(amax_out, m) : 0u;
                m = max(m, __shfl_sync(0xFFFFFFFFu, others, 0));
            }
        }
        uint4 v[16];
#pragma unroll
        for (int i = 0; i < 16; i++)
            v[i] = __ldcs(p + i * row_words);
        m = rht_exact_lane_amax(v, m, nan_mode);
    }
    for (int o = 16; o; o >>= 1)
        m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
    if (lane == 0) atomicMax(amax_out, m);
}

/* FPSIM_GPU_RHT_AMAX_PIPE 1: the same units and arithmetic, with each warp's loads staged through
 * shared memory one unit ahead (cp.async into two 8 KB buffers a warp), so that its next unit is in
 * flight while it computes this one; rht_exact_amax_kernel issues a unit's 16 loads and waits for
 * them before its columns, with nothing in flight meanwhile. The atomicMax of the other warps'
 * maxima is read one unit later, so its round trip does not hold the warp either (a max held
 * earlier is still a max already found: the skip stays sound). A lane reads only the slots it
 * copied, so its own cp.async.wait_group is the only wait; a buffer is refilled one unit after
 * its words were used. CTAs of 4 warps, 64 KB each. Off by default: exact (verify, run 193) but
 * no faster on an H100, where the pass already reads at 94% of copy; the H200, where it reads at
 * about 72%, has not timed it yet. */
#ifndef FPSIM_GPU_RHT_AMAX_PIPE
#define FPSIM_GPU_RHT_AMAX_PIPE 0
#endif
#ifndef FPSIM_GPU_RHT_AMAX_PIPE_CTAS
#define FPSIM_GPU_RHT_AMAX_PIPE_CTAS 3
#endif
constexpr unsigned RHT_AMAX_PIPE_THREADS = 128;
constexpr uint32_t RHT_AMAX_PIPE_SLOTS = 2u * RHT_AMAX_UNIT_ROWS * 32u; /* 16-byte slots a warp: 2 units */
constexpr size_t RHT_AMAX_PIPE_SMEM = (size_t)RHT_AMAX_PIPE_THREADS / 32u * RHT_AMAX_PIPE_SLOTS * 16u;

/* Queue the copies of unit u's 16 rows (this lane's 16 bytes of each) into buffer b of the warp's
 * slots (slot of row i: stage[(b * 16 + i) * 32], stage already offset by the lane). */
__device__ __forceinline__ void rht_amax_pipe_issue(uint4 *stage, const uint4 *xv, uint32_t u, uint32_t b,
                                                    uint32_t strips, size_t row_words, uint32_t lane)
{
    const uint4 *p = rht_exact_unit_words(xv, u, strips, row_words, lane);
#pragma unroll
    for (int i = 0; i < 16; i++)
        cp_async16(stage + (b * 16u + (uint32_t)i) * 32u, p + i * row_words);
}

/* As rht_exact_amax_kernel (the same shapes); dynamic shared memory RHT_AMAX_PIPE_SMEM. */
__global__ void __launch_bounds__(RHT_AMAX_PIPE_THREADS, FPSIM_GPU_RHT_AMAX_PIPE_CTAS)
    rht_exact_amax_pipe_kernel(const uint16_t *x, uint32_t rows, uint32_t cols, uint32_t *amax_out, int nan_mode)
{
    extern __shared__ uint4 rht_amax_stage[];
    const uint32_t lane = threadIdx.x % 32u, per_cta = RHT_AMAX_PIPE_THREADS / 32u;
    const uint32_t strips = cols / RHT_EXACT_AMAX_UNIT_COLS, units = rows / RHT_AMAX_UNIT_ROWS * strips;
    const uint32_t warps = gridDim.x * per_cta;
    const size_t row_words = (size_t)cols / 8u;
    const uint4 *xv = reinterpret_cast<const uint4 *>(x);
    uint4 *stage = rht_amax_stage + (threadIdx.x / 32u) * RHT_AMAX_PIPE_SLOTS + lane;
    uint32_t u = blockIdx.x * per_cta + threadIdx.x / 32u, b = 0, m = 0, others = 0;
    if (u < units) rht_amax_pipe_issue(stage, xv, u, 0u, strips, row_words, lane);
    cp_async_commit();
    for (; u < units; u += warps, b ^= 1u) {
        if (u + warps < units) rht_amax_pipe_issue(stage, xv, u + warps, b ^ 1u, strips, row_words, lane);
        cp_async_commit();
        /* every lane takes the warp's max and the other warps' as of the last unit */
        m = __reduce_max_sync(0xFFFFFFFFu, max(m, __shfl_sync(0xFFFFFFFFu, others, 0)));
        if (FPSIM_GPU_RHT_AMAX_SKIP >= 2 && lane == 0) others = atomicMax(amax_out, m);
        cp_async_wait<1>(); /* unit u's copies, committed one iteration ago */
        uint4 v[16];
#pragma unroll
        for (int i = 0; i < 16; i++)
            v[i] = stage[(b * 16u + (uint32_t)i) * 32u];
        m = rht_exact_lane_amax(v, m, nan_mode);
    }
    cp_async_wait<0>();
    for (int o = 16; o; o >>= 1)
        m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
    if (lane == 0) atomicMax(amax_out, m);
}

/* The tensor amax of the columnwise RHT operand x (rows x cols) into *amax_out (zeroed before) by
 * one of the passes above (mma: rhtsum=mma, else rhtsum=exact), queued on cs; 0 where neither
 * takes the shape (bf16 only, rows a multiple of 16, columns of 64 or 256, 16-byte aligned):
 * kernel v8 or the general kernel then finds it. */
inline int rht_amax_launch(int mma, const void *x, size_t rows, size_t cols, int bf16, uint32_t *amax_out,
                           int nan_mode, cudaStream_t cs)
{
    const size_t unit_cols = mma ? RHT_AMAX_UNIT_COLS : RHT_EXACT_AMAX_UNIT_COLS;
    const size_t units = rows / RHT_AMAX_UNIT_ROWS * (cols / unit_cols);
    /* the MMA needs sm_80; the hardware cvt (sm_89) stands for it, as for kernel v8 */
    if (!bf16 || rows % RHT_AMAX_UNIT_ROWS != 0 || cols % unit_cols != 0 || (uintptr_t)x % 16u != 0 ||
        units == 0 || units >= ((size_t)1 << 32) || (mma && !fpsim_gpu_hw_cvt_available()))
        return 0;
    const size_t want = (units + RHT_AMAX_THREADS / 32u - 1u) / (RHT_AMAX_THREADS / 32u);
    const uint16_t *xb = static_cast<const uint16_t *>(x);
    const uint32_t r = (uint32_t)rows, c = (uint32_t)cols;
    if (mma)
        rht_mma_amax_kernel<<<one_wave_ctas(rht_mma_amax_kernel, RHT_AMAX_THREADS, want, 8), RHT_AMAX_THREADS,
                              0, cs>>>(xb, r, c, amax_out, nan_mode);
    else if (FPSIM_GPU_RHT_AMAX_PIPE) {
        if (cudaFuncSetAttribute(rht_exact_amax_pipe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 (int)RHT_AMAX_PIPE_SMEM) != cudaSuccess) {
            (void)cudaGetLastError(); /* not sticky: the kernel v8 pass finds the amax instead */
            return 0;
        }
        const size_t per = RHT_AMAX_PIPE_THREADS / 32u;
        rht_exact_amax_pipe_kernel<<<one_wave_ctas(rht_exact_amax_pipe_kernel, RHT_AMAX_PIPE_THREADS,
                                                   (units + per - 1u) / per, 1, RHT_AMAX_PIPE_SMEM),
                                     RHT_AMAX_PIPE_THREADS, RHT_AMAX_PIPE_SMEM, cs>>>(xb, r, c, amax_out, nan_mode);
    } else
        rht_exact_amax_kernel<<<one_wave_ctas(rht_exact_amax_kernel, RHT_AMAX_THREADS, want, 2),
                                RHT_AMAX_THREADS, 0, cs>>>(xb, r, c, amax_out, nan_mode);
    return 1;
}

#endif
