/* block_cols_fast_kernel.cuh: kernel v8, the columnwise 1 x TC block quantizer (MX 1x32, NVFP4 TE
 * 1x16 with SR and RHT, block FP8 1x128) with the tiles held in registers instead of shared memory.
 * Included by block_quantize.cu inside its namespace after kernels v5 and v7 (whose helpers it
 * calls); other columnwise cases take kernel v5 or the general kernel.
 *
 * Why: kernel v5 staged a 32 x 64 (or 128 x 16) block in shared memory per CTA pass, so a CTA had
 * 4 KB of loads in flight and nothing to do meanwhile (gpu/RESULTS.md run 10: 20-25% of copy, DRAM
 * 38-50% busy). Here a lane holds 16 consecutive ROWS of NC = 4 (bf16) or 2 (float32) neighbouring
 * columns: sixteen 8-byte loads, all issued before any arithmetic (128 bytes in flight per lane).
 * Warp layout: lane = rg * CG + cg, rg = row group (0 .. LR-1, 16 rows each; LR = 8), cg =
 * column group (0 .. CG-1, CG = 32 / LR = 4, NC columns each): a warp covers 128 rows x 4 NC
 * columns, each loaded row piece is one 32-byte sector, and each column's codes are 128
 * contiguous bytes (64 for E2M1) written by the 8 row groups together. A column's 16 elements
 * are a whole NVFP4 block, half an MX block or an eighth of a block FP8 1x128 block: TL = TC / 16
 * neighbouring row groups share a tile and reduce its amax by xor shuffles. (A first layout with
 * TC rows per warp, 16-byte code stores to 16 different lines per instruction, kept L2 75% busy at
 * 34% of DRAM bandwidth (run 11); this one kept it 67-73% busy at 44-51% (run 12).)
 *
 * Loads go through shared memory (since run 19): a CTA of wx warps (1-8, the widest that divides
 * the columns) owns a tile of 128 rows by wx warp tiles, copied by cp.async in whole 16-byte
 * pieces (a warp copies 512 contiguous bytes where it used to load 32-byte row pieces straight
 * into registers) into one of two buffers while the other is coded, then each lane reads its
 * 16 rows from shared memory. Block FP8 columnwise went from 54% to 72% of the copy, MXFP8
 * from 41% to 57% (runs 19-22), then to 79% and 74% once the kernel carried only its own kind's
 * scale code (run 29 on), then to 83% once the staging and the reads lost their address
 * arithmetic and MX its rule branches (runs 45-47: 11-12 instructions per element, from 17).
 * What limits it since is the wait for the staged tile at the barrier and fixed-latency
 * dependencies, with 16 warps per SM (128 registers).
 *
 * Per column the arithmetic is kernel v5's: the optional 16-point RHT (exact in FP32 when the
 * terms allow it, else the double-precision routine, as v5), the tile amax, the scale rule, the
 * fast-tile case of fast_tile.cuh or the exact path (scale_group and the shared core), and NVFP4
 * SR with the Philox block of the stored elements' counter (one block per 16 elements). The stored
 * operand is x^T: column c of x is stored row c, so a lane writes 16 codes of stored row c at
 * stored column r (16 bytes, or 8 for E2M1). */
#ifndef FPSIM_BLOCK_COLS_FAST_KERNEL_CUH
#define FPSIM_BLOCK_COLS_FAST_KERNEL_CUH

/* Needs <cuda_bf16.h> (included by block_quantize.cu before its namespace). */

/* Row groups (lanes of 16 rows stacked in a warp) of kernel v8: 8 for every tile length (a warp
 * loads 32-byte row pieces and stores 128-byte code runs). 4 row groups (64-byte pieces both ways)
 * measured slower for MX 1x32 (run 13: 1551 against 1734 GB/s). */
__host__ __device__ constexpr int block_cols_fast_row_groups(int tc)
{
    return (void)tc, 8; /* the same for every tc */
}

/* Shared memory of kernel v8: two buffers of 128 staged rows. A staged row holds 16 pieces of 16
 * bytes (256 bytes) whatever the CTA's width wx (2 wx pieces used), so that every shared address a
 * lane reads is its base plus a compile-time offset (run 45: with a row of 2 wx pieces the address
 * arithmetic of the staging and of the reads was about 4 of the 17 instructions per element).
 * Piece c of staged row r sits in slot c ^ (2 (r / 16)): the 4 row groups (16 rows each) that a
 * half-warp reads at once get slots 0, 2, 4, 6 apart, so their 8-byte reads fall in different banks. */
constexpr uint32_t COLS_V8_ROW_BYTES = 256u, COLS_V8_STAGE_BYTES = 128u * COLS_V8_ROW_BYTES;
/* Staging buffers: two (the tile gridDim.x ahead loads while this one is coded), which the pass
 * loop relies on. Three measured slower, whether with one barrier per pass (run 49) or two (run
 * 51): 79% against 82-83% of copy for MXFP8 cols; so had three and four in runs 20-21. (The
 * FPSIM_GPU_COLS_V8_STAGES option that built them is gone since run 121's review.) */
constexpr uint32_t COLS_V8_STAGES = 2;

/* CTAs per SM kernel v8 is compiled for (registers: at most 65536 / (256 x this)); 3 measured
 * slower than 2 (gpu/RESULTS.md run 21). */
#ifndef FPSIM_GPU_COLS_V8_MIN_BLOCKS
#define FPSIM_GPU_COLS_V8_MIN_BLOCKS 2
#endif

/* The RHT argument of kernel v8: none, the exact sum (rht16_full), or the BF16 tensor-core block
 * rule (rhtsum=mma), for which the kernel issues the MMA itself (rht_mma_warp below). */
enum { COLS_V8_RHT_NONE = 0, COLS_V8_RHT_EXACT = 1, COLS_V8_RHT_MMA = 2 };

/* Rows of a lane's 16 whose two staged words (bf16 columns 0-1 and 2-3) the MXFP4 column kernel
 * reads in one 8-byte load (see L64 in the kernel). NVFP4 reads all 16 that way; the MX kernels sit
 * at 128 registers, where 16 spilled (run 134) and 8 do not: run 148, MXFP4 cols 84.0-85.0 ->
 * 87.6-88.1% of copy. For MXFP8 cols 8 rows measured half a point slower: the one-byte-code MX
 * kernels and block FP8 keep 4-byte reads. */
#ifndef FPSIM_GPU_COLS_V8_L64_MXFP4
#define FPSIM_GPU_COLS_V8_L64_MXFP4 8
#endif

/* Tile rows kernel v8 takes together (its tile order, in the kernel; powers of two, 1 = row by
 * row): GROUP where the codes are at most a quarter of the bytes read (E2M1 codes, float32
 * inputs), GROUP_WIDE_CODES where they are half (one-byte codes of bf16 inputs). Run 83 on 16384 x
 * 16384 bf16 (gpu/results/run83-group-sweep.txt), in % of copy:
 *   tile rows together      1      8      32       128 (whole columns of tiles)
 *   NVFP4 cols             72     78      77        77
 *   MXFP4 cols             76     81      80        80
 *   MXFP8 / block FP8 cols 83     84      84-85     86-88
 * Longer runs per stored row pay where the codes are a large part of the traffic; where they are
 * not, the reads' shorter runs per row cost more. Float32 inputs follow the rule unmeasured. The
 * RHT kernels ignore it and keep the row-by-row order compiled in: under rhtsum=mma 8 measured
 * 1.2 points slower (run 84: RHT 63 -> 62%, SR+RHT 44.3 -> 43.1%), and the exact-RHT kernels,
 * bound by their arithmetic, measured the same either way. */
#ifndef FPSIM_GPU_COLS_V8_GROUP
#define FPSIM_GPU_COLS_V8_GROUP 8
#endif
#ifndef FPSIM_GPU_COLS_V8_GROUP_WIDE_CODES
#define FPSIM_GPU_COLS_V8_GROUP_WIDE_CODES 128
#endif
inline uint32_t block_cols_fast_group(int format, int bf16)
{
    return format != FPSIM_E2M1 && bf16 ? FPSIM_GPU_COLS_V8_GROUP_WIDE_CODES : FPSIM_GPU_COLS_V8_GROUP;
}

/* Columns of a lane's NC that the SR kernels code per iteration of their column loop: all four
 * (unrolled) for NVFP4 SR cols and (since run 178) SR under rhtsum=mma, two (one bf16 word's) for
 * the dual kernel and (since run 186, below) SR with the exact RHT. Runs 168 and 172 on 16384 x
 * 16384 bf16, % of copy (1 = the rolled loop of runs 36-167):
 *   columns per iteration         1            2            4
 *   NVFP4 SR cols                 60.3-61.2    66.4-67.5    68.6-69.6
 *   NVFP4 SR both copies          40.9-41.5    43.2-43.4    42.3-42.4
 *   SR+RHT rhtsum=mma cols        57.2-57.8    55.3-55.9    57.1-57.9
 *   SR+RHT exact cols (run 172)   25.5-25.6    26.7-27.5    27.2-27.3
 * and after run 175's shorter SR code (run 178):
 *   NVFP4 SR both copies                       46.9-47.0    46.2-46.3
 *   SR+RHT rhtsum=mma cols        61.9-62.1    61.6-61.7    63.1-63.2
 * Run 36 had rolled the SR loop because four copies of its column code, then about three times
 * today's, overflowed the instruction cache. */
#ifndef FPSIM_GPU_COLS_V8_SR_JU
#define FPSIM_GPU_COLS_V8_SR_JU 4
#endif
#ifndef FPSIM_GPU_COLS_V8_SR_JU_DUAL
#define FPSIM_GPU_COLS_V8_SR_JU_DUAL 2
#endif
#ifndef FPSIM_GPU_COLS_V8_SR_JU_MMA
#define FPSIM_GPU_COLS_V8_SR_JU_MMA 4
#endif
/* The exact-RHT nearest-even kernel: two columns an iteration, one bf16 word's, so that each
 * iteration reads its 16 words once (one column: 52 bytes of spills, two: 12). Run 185 (H100,
 * probe JU2 against 1): RHT cols 1550 -> 1643-1646 GB/s on the default fill, 1784 -> 1919 at
 * --spread 0; verify 1030 checks, 0 mismatches. */
#ifndef FPSIM_GPU_COLS_V8_JU_EXACT_RNE
#define FPSIM_GPU_COLS_V8_JU_EXACT_RNE 2
#endif
/* The exact-RHT SR kernel: two columns an iteration since run 186 (H100, probe SJ2 against 4, run
 * 172's choice before the bounds): SR+RHT cols 1473-1493 -> 1522-1541 GB/s on the default fill,
 * 1651 -> 1778 at --spread 0. */
#ifndef FPSIM_GPU_COLS_V8_SR_JU_EXACT
#define FPSIM_GPU_COLS_V8_SR_JU_EXACT 2
#endif
/* The dividing instance (DIV = 1, vLLM's rules on block FP8): columns per iteration of its column
 * loop, NC (4 for bf16, unrolled: the kernel of runs 212-215) or fewer in a rolled loop. Run 215's
 * profile of the unrolled form: 17.4 instructions per element, as the rowwise kernel (16.8, at 87%
 * of copy), but 19% of the stall samples waiting for instructions (the rowwise kernel: 10%): four
 * copies of the column code with its straddle loops. Run 216 (H100, probes against 4): `vllm-cuda`
 * cols from bf16 72.1-72.3 -> 75.3-75.5% of copy with 2 (one bf16 word's columns, 118
 * registers), 70.8-71.0% with 1 (98). */
#ifndef FPSIM_GPU_COLS_V8_JU_DIV
#define FPSIM_GPU_COLS_V8_JU_DIV 2
#endif

/* rhtsum=mma: a warp's rotated 128 x 16 tile, BF16, one 512-byte run per row group (row group rg,
 * its 16 columns c, 32 bytes each: 16 outputs). */
constexpr uint32_t COLS_V8_MMA_WARP_BYTES = 8u * 512u;

/* Dynamic shared memory of a kernel v8 CTA: its buffers, the same for every width (64 KB; a
 * narrow CTA, wx <= 2 for columns not a multiple of 64, fits fewer of itself per SM for it), and
 * under rhtsum=mma each warp's rotated tile after them. */
inline size_t block_cols_fast_smem(uint32_t wx, int rht)
{
    return (size_t)COLS_V8_STAGES * COLS_V8_STAGE_BYTES +
           (rht == COLS_V8_RHT_MMA ? wx * COLS_V8_MMA_WARP_BYTES : 0u);
}

/* Byte offset, in a warp's rotated tile, of outputs 8 h .. 8 h + 7 (16 bytes) of column c (0-15) of
 * row group rg: 128-byte line rg * 4 + c / 4, 16-byte slot (2 (c % 4) + h) XOR (line % 8). The XOR
 * keeps both accesses free of bank conflicts: the stmatrix of 8 consecutive columns (one h) and the
 * 16-byte reads of 8 lanes (rg, cg) = (2k .. 2k + 1, 0 .. 3) of column 4 cg + j. */
__device__ __forceinline__ uint32_t rht_mma_offset(uint32_t rg, uint32_t c, uint32_t h)
{
    const uint32_t line = rg * 4u + c / 4u;
    return line * 128u + (((2u * (c % 4u) + h) ^ (line % 8u)) * 16u);
}

/* TE's RHT matrix as the B operand of mma.m16n8k16 (k x n, "col"): B[k][n] = 0.25 s_k H16[k][8 h + n]
 * as BF16 (+-0.25 = 0x3E80 / 0xBE80). This lane's registers: (k, n) = (2q, g), (2q + 1, g) and
 * (2q + 8, g), (2q + 9, g), g = lane / 4, q = lane % 4, two per column half h. */
__device__ __forceinline__ void rht_mma_b(uint32_t lane, uint32_t (&b)[2][2])
{
    const uint32_t g = lane / 4u, q = lane % 4u;
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int r = 0; r < 2; r++) {
            const int k = (int)(2u * q) + 8 * r, n = (int)g + 8 * h;
            const uint32_t lo = fpsim_rht_mma_neg(k, n) ? 0xBE80u : 0x3E80u;
            const uint32_t hi = fpsim_rht_mma_neg(k + 1, n) ? 0xBE80u : 0x3E80u;
            b[h][r] = lo | (hi << 16);
        }
}

/* One warp's 128 x 16 staged tile (BF16) through the RHT on the tensor cores, into its rotated
 * tile: per row group, the 16 x 16 block X (rows k, columns m) is read transposed by one
 * ldmatrix.x4.trans as the A operand X^T (m x k), two mma.m16n8k16 with C = 0 give X^T B (m x n:
 * column m's outputs n = 0-7, 8-15) in FP32, rounded to BF16 (cvt.rn.bf16x2.f32, TE's downcast),
 * and one stmatrix.x4 writes each column's 16 outputs contiguously. The arithmetic is the
 * hardware's block rule that formats/rht16_mma.h models (verify compares the two).
 * a_addr: this lane's ldmatrix row address for row group 0 (row groups are 16 rows = 4096 bytes
 * apart); s_addr[p]: its stmatrix row address in the rotated tile for row group p = 0, 1 (row
 * group 2 k + p is k * 1024 bytes further: rht_mma_offset's XOR depends on rg % 2 only). */
__device__ __forceinline__ void rht_mma_warp(uint32_t a_addr, const uint32_t (&s_addr)[2],
                                             const uint32_t (&b)[2][2])
{
    /* all eight A fragments first, so that no row group's ldmatrix waits behind the previous
     * one's stmatrix (both shared memory, never reordered); run 59 measured the same speed as
     * the one-row-group-at-a-time order, and the stage still holds a fifth of the stall samples */
    uint32_t a[8][4];
#pragma unroll
    for (uint32_t rg = 0; rg < 8u; rg++)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(a[rg][0]), "=r"(a[rg][1]), "=r"(a[rg][2]), "=r"(a[rg][3])
                     : "r"(a_addr + rg * 16u * COLS_V8_ROW_BYTES)
                     : "memory");
#pragma unroll
    for (uint32_t rg = 0; rg < 8u; rg++) {
        float d[2][4];
#pragma unroll
        for (int h = 0; h < 2; h++)
            asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                "{%8, %9}, {%10, %10, %10, %10};"
                : "=f"(d[h][0]), "=f"(d[h][1]), "=f"(d[h][2]), "=f"(d[h][3])
                : "r"(a[rg][0]), "r"(a[rg][1]), "r"(a[rg][2]), "r"(a[rg][3]), "r"(b[h][0]), "r"(b[h][1]),
                  "f"(0.0f));
        uint32_t p[4];
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int r = 0; r < 2; r++) {
                const __nv_bfloat162 v =
                    __floats2bfloat162_rn(d[h][2 * r], d[h][2 * r + 1]); /* low: even n */
                memcpy(&p[2 * h + r], &v, 4);
            }
        asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(
                         s_addr[rg % 2u] + (rg / 2u) * 1024u),
                     "r"(p[0]), "r"(p[1]), "r"(p[2]), "r"(p[3])
                     : "memory");
    }
}

/* Column j's 16 outputs (BF16 pairs) from a lane's rows of the rotated tile: cols = the lane's
 * line, x = its slot XOR (see rht_mma_offset). */
__device__ __forceinline__ void read_rotated(uint32_t cols, uint32_t x, uint32_t j, uint32_t (&pw)[8])
{
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(pw[0]), "=r"(pw[1]), "=r"(pw[2]), "=r"(pw[3])
                 : "r"(cols + (((2u * j) ^ x) * 16u))
                 : "memory");
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(pw[4]), "=r"(pw[5]), "=r"(pw[6]), "=r"(pw[7])
                 : "r"(cols + (((2u * j + 1u) ^ x) * 16u))
                 : "memory");
}

/* The double-precision RHT (rht16_bf16), out of line so its registers stay out of the kernel's. */
__device__ __noinline__ v7_elems rht16_double_ool(v7_elems in)
{
    rht16_bf16(in.v);
    return in;
}

/* BF16 (as float bits) of the exact value d: round to odd into FP32 (RZ, then the last bit set
 * if anything was dropped), then nearest-even to BF16. Rounding to odd first keeps the second
 * rounding correct since FP32 has at least two more bits than BF16, subnormals included (FP32's
 * quantum 2^-149 against BF16's 2^-133). */
__device__ __forceinline__ float bf16_of_double(double d)
{
    const float f = __double2float_rz(d);
    const uint32_t b = __float_as_uint(f) | (uint32_t)((double)f != d);
    return __uint_as_float((b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u);
}

/* Whether the FP32 form is taken only when every lane running with this one can take it (1, the
 * default: the active lanes vote, and where any has a wider column all of them run the FP64 form,
 * exact for them too) or lane by lane (0: a warp of mixed columns runs both forms one after the
 * other). The vote is among __activemask()'s lanes: the edge tiles of odd shapes leave some lanes
 * out (a full-warp vote hung there, run 180), and any grouping of the lanes gives the same bits.
 * Run 181, % of copy: NVFP4 RHT cols 28.1 -> 29.7-29.8, SR+RHT cols 27.8-28.0 -> 29.7. */
#ifndef FPSIM_GPU_RHT_EXACT_WARP_VOTE
#define FPSIM_GPU_RHT_EXACT_WARP_VOTE 1
#endif

/* Whether columns wider than the plain FP32 form allows first try the certified bounds of
 * rht16_fp32_bounded (1, the default) or go straight to the FP64 form (0, the kernel before run
 * 183). */
#ifndef FPSIM_GPU_RHT_BOUNDS
#define FPSIM_GPU_RHT_BOUNDS 1
#endif
/* Whether the plain FP32 form (spans up to 12) is tried before the bounds (1) or not (0: the
 * bounds certify those columns too, at twice the adds; not yet timed). */
#ifndef FPSIM_GPU_RHT_PLAIN
#define FPSIM_GPU_RHT_PLAIN 1
#endif
/* Whether the exact RHT kernels take a column's max |y| from the outputs' BF16 pairs by HMNMX2, as
 * the rhtsum=mma kernels do (1, the default: 8 instructions for 16 outputs), or from the 16 floats
 * (0: 32). Run 184 (H100), with FPSIM_GPU_RHT_RANGE3: RHT cols 1500 -> 1534 GB/s, SR+RHT 1429 ->
 * 1478. */
#ifndef FPSIM_GPU_RHT_PAIR_AMAX
#define FPSIM_GPU_RHT_PAIR_AMAX 1
#endif
/* Whether the FWHT in FP64 is inlined (0) or out of line (1: with the bounds it runs in about 1%
 * of the warps, and out of line its code and registers stay out of the column loop). Run 183:
 * with FPSIM_GPU_COLS_V8_JU_EXACT_RNE=4 (probe OOL4), within the spread of the default. */
#ifndef FPSIM_GPU_RHT_FP64_OOL
#define FPSIM_GPU_RHT_FP64_OOL 0
#endif

/* The FWHT in FP64 of u[16], each output rounded once to BF16: exact where rht16_full says. */
__device__ __forceinline__ void rht16_fp64(const float (&u)[16], float (&out)[16])
{
    double w[16];
#pragma unroll
    for (int i = 0; i < 16; i++)
        w[i] = __dmul_rn((double)u[i], 0.25 * (double)rht_sign(i));
#pragma unroll
    for (int h = 1; h < 16; h <<= 1)
#pragma unroll
        for (int i = 0; i < 16; i++)
            if ((i & h) == 0) {
                const double p = w[i], q = w[i + h];
                w[i] = __dadd_rn(p, q);
                w[i + h] = __dsub_rn(p, q);
            }
#pragma unroll
    for (int i = 0; i < 16; i++)
        out[i] = bf16_of_double(__dadd_rn(w[i], 0.0));
}

__device__ __noinline__ v7_elems rht16_fp64_ool(v7_elems in)
{
    v7_elems r;
    rht16_fp64(in.v, r.v);
    return r;
}

/* The 16-point RHT of u[16] into out[16], each output rounded once to BF16, as formats/block_nvfp4.c
 * fpsim_rht16 (y_j = sum_i +-0.25 s_i u_i in double, in index order, then BF16). Where every partial
 * sum is exact, the order of the additions does not matter, so a fast Walsh-Hadamard transform
 * (4 adds per output and group) gives the same value:
 *  - in FP32 when the inputs are BF16 values, none below 2^-124 or above 2^123, whose exponents
 *    span at most 12 binades (rht16.cuh);
 *  - where the reference's double sum is exact (spans up to 41 binades for BF16 inputs, 25 for
 *    FP32 ones: 24 + 25 + 4 <= 53; none subnormal or below 2^-124, none above 2^123), the FP32
 *    bounds of rht16_fp32_bounded give BF16_RNE of the exact sum wherever they certify it (all
 *    but about 1 column in 3000 of the benchmark's fill); the other columns, and all of them
 *    without FPSIM_GPU_RHT_BOUNDS, take the FWHT in FP64, exact there;
 *  - otherwise (NaN, Inf, wider spans) the in-order double routine rht16_bf16, out of line. */
template <int BF16>
__device__ __forceinline__ void rht16_full(const float (&u)[16], const rht16_range r, float (&out)[16],
                                           uint32_t (&pw)[8])
{
    const int fp32_ok = r.ok && r.span <= 12u;
    if (FPSIM_GPU_RHT_PLAIN && (FPSIM_GPU_RHT_EXACT_WARP_VOTE ? __all_sync(__activemask(), fp32_ok) : fp32_ok)) {
        rht16_fp32_packed(u, pw);
        rht_unpack_bf16x2(pw, out);
        return;
    }
    if (r.in_range && r.span <= (r.bf16 ? 41u : 25u)) {
        if (FPSIM_GPU_RHT_BOUNDS) {
            const int certain = rht16_fp32_bounded(u, pw, r.bf16);
            /* the vote as above: where any lane's bounds leave a rounding open, all take FP64 */
            if (FPSIM_GPU_RHT_EXACT_WARP_VOTE ? __all_sync(__activemask(), certain) : certain) {
                rht_unpack_bf16x2(pw, out);
                return;
            }
        }
        if (FPSIM_GPU_RHT_FP64_OOL) {
            v7_elems in;
#pragma unroll
            for (int i = 0; i < 16; i++)
                in.v[i] = u[i];
            const v7_elems r64 = rht16_fp64_ool(in);
#pragma unroll
            for (int i = 0; i < 16; i++)
                out[i] = r64.v[i];
        } else {
            rht16_fp64(u, out);
        }
    } else {
        v7_elems all;
#pragma unroll
        for (int i = 0; i < 16; i++)
            all.v[i] = u[i];
        all = rht16_double_ool(all);
#pragma unroll
        for (int i = 0; i < 16; i++)
            out[i] = all.v[i];
    }
    /* the pairs of the slower forms' outputs: exact for BF16 values; a NaN may lose payload bits
     * below the top 16 (even turn into Inf), but either reads at or above Inf, where the tile's
     * code takes the exact path and its amax from out */
#pragma unroll
    for (int k = 0; k < 8; k++)
        pw[k] = __byte_perm(__float_as_uint(out[2 * k]), __float_as_uint(out[2 * k + 1]), 0x7632u);
}

/* The same with the range of u found here, and without the pairs. */
template <int BF16> __device__ __forceinline__ void rht16_full(const float (&u)[16], float (&out)[16])
{
    uint32_t pw[8];
    rht16_full<BF16>(u, rht16_range_of<BF16>(u), out, pw);
}

/* Whether the exact RHT kernels on bf16 inputs take both columns' ranges of a bf16 word from the
 * loaded words on 16-bit lanes (1: rht16_range_of_pair, where the kernel codes both columns in one
 * iteration) or each column's from its 16 floats (0). Run 186 (H100, probe RP against 0, two
 * columns an iteration): RHT cols 1607-1635 -> 1673-1680 GB/s, SR+RHT 1473-1493 -> 1503-1507. */
#ifndef FPSIM_GPU_RHT_RANGE_PAIRS
#define FPSIM_GPU_RHT_RANGE_PAIRS 1
#endif

/* DUAL: the rowwise copy too, from the same staged tile (see rows_from_stage below). */
template <int KIND, int F, int BF16, int TC, int SR>
__device__ __forceinline__ void rows_from_stage(const qargs &a, const uint4 *stage, uint32_t tile_row0,
                                                uint32_t tile_col0, uint32_t cols, const float (&tv)[6],
                                                float te_mul, float elem_max, const float4 *tab);

/* KIND: scheme kind (NVFP4 = the TE chain); F: element format; BF16: input bf16; TC: tile length
 * (16, 32, 128); SR: NVFP4 stochastic rounding; RHT: its Hadamard transform, COLS_V8_RHT_*; DUAL:
 * also the rowwise copy (a.rw) from the same tiles, so that the input is read once for both; DIV:
 * block FP8's columnwise tiles under vLLM's dividing rules (1) or not (0), fixed at compile time as
 * kernel v7's (-1: a.divide_hw says, for the DUAL instances). */
template <int KIND, int F, int BF16, int TC, int SR, int RHT, int DUAL = 0, int DIV = -1>
__global__ void __launch_bounds__(256, FPSIM_GPU_COLS_V8_MIN_BLOCKS)
    block_cols_fast_kernel(const __grid_constant__ qargs a, uint32_t rows, uint32_t cols)
{
    constexpr int LR = block_cols_fast_row_groups(TC), CG = 32 / LR, NC = BF16 ? 4 : 2, WCOLS = CG * NC,
                  WROWS = 16 * LR, TL = TC / 16;
    constexpr int FP4 = F == FPSIM_E2M1;
    constexpr int MMA = RHT == COLS_V8_RHT_MMA;
    /* rare-tile code out of line (OOL_RARE_SCALE): NVFP4 without RHT, runs 132-133; the NaN tile's
     * amax (OOL_NAN_AMAX): MXFP4, runs 136-138; with either, the amax-only pass too (abs_max16_ool) */
    constexpr int OOL = rare_tile_ool(KIND, F, RHT == COLS_V8_RHT_NONE);
    static_assert(TC % 16 == 0 && TL <= LR && (!RHT || TC == 16) && (!SR || FP4) && (!MMA || BF16) &&
                      (!DUAL || !RHT),
                  "kernel v8 shapes");
    float tv[6];
    tensor_values<KIND>(a, tv);
    if (blockIdx.x == 0 && threadIdx.x == 0 && a.tvals && !a.amax_only)
        for (int i = 0; i < 4; i++)
            a.tvals[i] = tv[i];
    const float elem_max = fpsim_elem_max_dev(a.elem);
    const float te_mul = __fmul_rn(tv[1], __frcp_rn(6.0f)); /* NVFP4 TE: S_enc * fp32(1/6) */
    __shared__ float4 tab[scale_table_size<KIND, BF16, DIV>::N];
    scale_table_fill<KIND, BF16, DIV>(tab, a, tv[5]);
    const uint32_t lane = threadIdx.x & 31u, rg = lane / CG, cg = lane % CG;
    /* the TL lanes of this lane's tiles: row groups rg & ~(TL-1) .. + TL-1 of column group cg */
    uint32_t tile_mask = 0;
#pragma unroll
    for (int i = 0; i < TL; i++)
        tile_mask |= 1u << (cg + (uint32_t)(((rg & ~(uint32_t)(TL - 1)) + (uint32_t)i) * CG));
    /* The CTA tile: WROWS rows by wx warp tiles side by side (wx = blockDim.x / 32, 1-8, chosen by
     * the host so that it divides the shape), staged through shared memory (two buffers). */
    const uint32_t wx = blockDim.x / 32u, warp = threadIdx.x / 32u;
    const uint32_t tcols = cols / (wx * WCOLS);
    const size_t row_bytes = (size_t)cols * (BF16 ? 2 : 4);
    extern __shared__ uint4 cols_stage[];
    /* Staging a CTA tile (128 rows of 2 wx pieces, by cp.async): thread q copies piece p = q % (2 wx)
     * of 8 rows (32 wx threads, 8 pieces each). Piece p of row r sits in slot p ^ 2 (r / 16) (see
     * COLS_V8_ROW_BYTES), so with m = q / (2 wx) (0-15) thread q takes rows 16 (m % 8) + m / 8 + 2 k,
     * k = 0 .. 7: eight rows of ONE row group, whose slot is the same for all eight, and the copies
     * are one offset plus k * 512 bytes (a compile-time offset). Until run 115 thread q took rows
     * m + 16 k, one per row group, whose slot changed with k: an XOR and an add per copy, and NVFP4
     * cols ran 2 points slower (run 115: 79.8 -> 81.7% of copy, MXFP4 cols 83.1 -> 83.7). A warp's
     * copies still cover two rows of 2 wx pieces each. Under rhtsum=mma the slot is p ^ (r % 8)
     * instead, for ldmatrix, which reads 8 consecutive rows of one piece from 8 different slots
     * then (the tile is not read by columns from the staging buffer): thread q keeps rows m + 16 k,
     * whose r % 8 is the same. */
    const uint32_t my_piece = threadIdx.x % (2u * wx), my_m = threadIdx.x / (2u * wx);
    const uint32_t stage_base = (uint32_t)__cvta_generic_to_shared(cols_stage);
    const uint32_t first_row = MMA ? my_m : 16u * (my_m % 8u) + my_m / 8u, row_step = MMA ? 16u : 2u;
    const uint32_t dst0 =
        first_row * COLS_V8_ROW_BYTES + (my_piece ^ (MMA ? first_row % 8u : 2u * (my_m % 8u))) * 16u;
    const size_t src0 = (size_t)first_row * row_bytes + my_piece * 16u, src_step = row_step * row_bytes;
    /* The order of the CTA tiles: bands of K tile rows (K = a.v8_group, block_cols_fast_group, or
     * the largest power of two dividing the tile rows if smaller), each band taken column by
     * column, K tiles down each column: tile t is tile row (t / K / tcols) * K + t % K, tile column
     * (t / K) % tcols. The CTAs at work at one time then cover K tile rows of fewer columns, and
     * each stored row (a column of x) receives K runs of codes side by side instead of one (run
     * 82: the columnwise NVFP4 kernel ran at 72% of copy on 16384 x 16384, at 77% on 262144 x
     * 1024, whose CTAs at work cover 33 tile rows; run 83 measured K). K = 1 is the row-by-row
     * order of runs 19-82. The position is stepped by gridDim.x without dividing: the two
     * divisions by the run-time tcols that each pass did cost about 40 of a thread's instructions
     * per 64 elements (run 47's profile). */
    struct tile_pos {
        uint32_t row, col, grp, k; /* row = grp * K + k */
    };
    const uint32_t trows = rows / WROWS;
    /* the RHT kernels keep the row-by-row order compiled in, whatever a.v8_group says (run 85:
     * with the run-time order at K = 1 the rhtsum=mma kernels measured a point slower) */
    const uint32_t K = RHT ? 1u : min(a.v8_group, trows & (0u - trows)),
                   kshift = RHT ? 0u : (uint32_t)__ffs((int)K) - 1u;
    const uint32_t dk = gridDim.x & (K - 1u), du = gridDim.x >> kshift;
    const uint32_t step_grp = du / tcols, step_col = du % tcols;
    auto advance = [&](tile_pos &p) {
        p.k += dk;
        const uint32_t carry = p.k >= K;
        p.k -= carry ? K : 0u;
        p.grp += step_grp;
        p.col += step_col + carry;
        if (p.col >= tcols) {
            p.col -= tcols;
            p.grp++;
        }
        p.row = (p.grp << kshift) + p.k;
    };
    auto stage_tile = [&](const tile_pos &p, uint32_t buf) {
        if (p.row < trows) {
            const char *src = static_cast<const char *>(a.x) + (size_t)p.row * WROWS * row_bytes +
                              (size_t)p.col * wx * 32u + src0;
            const uint32_t dst = stage_base + buf * COLS_V8_STAGE_BYTES;
#pragma unroll
            for (uint32_t k = 0; k < 8u; k++)
                cp_async16_shared(dst + dst0 + k * row_step * COLS_V8_ROW_BYTES, src + k * src_step);
        }
        cp_async_commit();
    };
    /* rhtsum=mma: the B operand, this lane's ldmatrix and stmatrix row addresses (row group 0 of
     * buffer 0; matrix u / 8 of the x4, row u % 8: column half u & 8, row half / output half u & 16),
     * and its reads of the rotated tile (line rg * 4 + cg, slot (2 j + h) ^ (line % 8)) */
    uint32_t rb[2][2] = {{0, 0}, {0, 0}}, a_addr = 0, s_addr[2] = {0, 0};
    const uint32_t mma_tile =
        stage_base + COLS_V8_STAGES * COLS_V8_STAGE_BYTES + warp * COLS_V8_MMA_WARP_BYTES;
    if (MMA) {
        rht_mma_b(lane, rb);
        const uint32_t t = lane % 8u, ch = (lane / 8u) & 1u, rh = lane / 16u;
        a_addr = stage_base + (8u * rh + t) * COLS_V8_ROW_BYTES + (((2u * warp + ch) ^ t) * 16u);
        s_addr[0] = mma_tile + rht_mma_offset(0, 8u * ch + t, rh);
        s_addr[1] = mma_tile + rht_mma_offset(1, 8u * ch + t, rh);
    }
    const uint32_t mma_line = (rg * 4u + cg) * 128u, mma_x = (rg * 4u + cg) % 8u;
    /* With SR (MMA_TAB) the same values, and the base of the reads (mma_tile + mma_line), go through
     * shared memory, read back once per pass: computed once into registers, they were rebuilt
     * from the thread index on every pass (about 100 of the pass's 1230 instructions: the B
     * operand's signs bit by bit, the addresses' shifts and XORs), the kernel being short of
     * registers. Runs 139-140: SR+RHT 55.4 -> 57.0% of copy. The nearest-even kernel went from 120
     * to 128 registers that way and lost 0.6 points (run 139), and a point with its B operand alone
     * from the table (run 140): it keeps its registers. */
    constexpr int MMA_TAB = MMA && SR;
    __shared__ uint4 mma_tab[MMA_TAB ? 256 + 32 : 1]; /* per thread; then the B operand per lane */
    if (MMA_TAB) {
        mma_tab[threadIdx.x] = make_uint4(a_addr, s_addr[0], s_addr[1], mma_tile + mma_line);
        if (warp == 0) mma_tab[256 + lane] = make_uint4(rb[0][0], rb[0][1], rb[1][0], rb[1][1]);
    }
    uint32_t mma_cols = mma_tile + mma_line;
    /* the float32 scales or the cuBLAS layout wanted: stored column by column (PASS_STORES) */
    const bool per_column_scales = a.scale_inv != nullptr || a.want_cublas;
    /* the first tile starts loading; each pass starts the next one in the other buffer, which the
     * pass before read (the pass's last barrier has let every lane leave it), then waits for its
     * own tile (at most one newer group pending) */
    const uint32_t u0 = blockIdx.x >> kshift, k0 = blockIdx.x & (K - 1u);
    tile_pos cur = {((u0 / tcols) << kshift) + k0, u0 % tcols, u0 / tcols, k0}, ahead = cur;
#pragma unroll
    for (uint32_t s = 0; s + 1u < COLS_V8_STAGES; s++) {
        stage_tile(ahead, s);
        advance(ahead);
    }
    uint32_t buf = 0;
    /* The tile staged at a pass's start (ahead) is the next pass's own, so the next position is
     * copied from ahead instead of stepped a second time (run 117, with the NVFP4 scale code's
     * clamp left out: NVFP4 cols 82.1 -> 83.4% of copy, SR+RHT under rhtsum=mma 47.7 -> 48.9%,
     * block FP8 cols +0.7, MXFP4 cols -0.8 within its spread). */
    tile_pos next = ahead;
    for (; cur.row < trows; cur = next, buf ^= 1u) {
        next = ahead;
        stage_tile(ahead, buf ^ 1u); /* the last pass read it */
        advance(ahead);
        /* this tile has landed (this thread's pieces; after the barrier, everyone's) */
        cp_async_wait<COLS_V8_STAGES - 1>();
        __syncthreads();
        if constexpr (MMA_TAB) { /* written before the barrier above */
            const uint4 ad = mma_tab[threadIdx.x], bq = mma_tab[256 + lane];
            const uint32_t tb[2][2] = {{bq.x, bq.y}, {bq.z, bq.w}}, ts[2] = {ad.y, ad.z};
            mma_cols = ad.w;
            rht_mma_warp(ad.x + buf * COLS_V8_STAGE_BYTES, ts, tb);
            __syncwarp();
        } else if constexpr (MMA) {
            rht_mma_warp(a_addr + buf * COLS_V8_STAGE_BYTES, s_addr, rb);
            __syncwarp();
        }
        const uint32_t r0 = cur.row * WROWS + rg * 16u, c0 = (cur.col * wx + warp) * WCOLS + cg * NC;
        /* this lane's 8 bytes of rows rg*16 .. +15: piece warp*2 + cg/2 of each (slot ^ 2 rg), half
         * cg & 1; row i is i * 256 bytes further (a compile-time offset) */
        const uint32_t *words = reinterpret_cast<const uint32_t *>(cols_stage) +
                                (buf * COLS_V8_STAGE_BYTES + rg * 16u * COLS_V8_ROW_BYTES +
                                 ((warp * 2u + cg / 2u) ^ (2u * rg)) * 16u + (cg & 1u) * 8u) /
                                    4u;
        uint32_t amax_only_max = 0, w[16], pair_max = 0, w_next[16]; /* w_next: L64 below */
        /* E2M1 kernels keep for the pass's end the saturated elements and zero-amax tiles counted
         * and the NC columns' scale codes (byte j: column j), where the tests of those outputs
         * run once per pass instead of once per column. Run 111: NVFP4 cols 78.7 -> 81.6%, MXFP4
         * cols 80.4 -> 83.8% of copy; the one-byte-code kernels measured a point slower that way
         * (83.8-85.9 -> 82.2-84.4%), so they store column by column. */
        constexpr int PASS_STORES = FP4;
        uint32_t sat_sum = 0, zero_tiles = 0, codes4 = 0;
        /* ROLLED: the column code of SR or the exact RHT (Philox, the RHT's FP32 and FP64 forms),
         * and of the dividing rules where FPSIM_GPU_COLS_V8_JU_DIV says so (run 216). SR and the
         * RHT's code ran until run 168 as a rolled loop, one column per iteration: four copies had
         * overflowed the instruction cache (ncu, run 36: "no instruction" was the main stall; 24K
         * instructions per kernel). These kernels take neither the 8-byte reads (L64) nor the
         * nearest-even kernels' pair forms; one column an iteration, they read each column's words
         * from shared memory again. Rolling the rhtsum=mma nearest-even loop too measured slower
         * (run 60). */
        constexpr int ROLLED = SR || RHT == COLS_V8_RHT_EXACT || (DIV == 1 && FPSIM_GPU_COLS_V8_JU_DIV < NC);
        /* columns unrolled together: NC, or SR_JU for SR (FPSIM_GPU_COLS_V8_SR_JU*), and
         * FPSIM_GPU_COLS_V8_JU_EXACT_RNE (2) for the exact RHT without SR. With JU = NC the outer
         * loop runs once; the same arithmetic as one loop over j, but this form measured NVFP4 cols
         * 1.5 points faster (run 108: 78.7 against 76.8-77.4%; its registers differ). Two, a bf16
         * word's pair of columns, measured MXFP4 cols 3 points slower (run 108, build B). */
        constexpr int SR_JU = RHT == COLS_V8_RHT_EXACT ? FPSIM_GPU_COLS_V8_SR_JU_EXACT
                              : MMA ? FPSIM_GPU_COLS_V8_SR_JU_MMA
                              : DUAL ? FPSIM_GPU_COLS_V8_SR_JU_DUAL
                                     : FPSIM_GPU_COLS_V8_SR_JU;
        constexpr int JU = !ROLLED  ? NC
                           : SR     ? (SR_JU < NC ? SR_JU : NC)
                           : DIV == 1 ? FPSIM_GPU_COLS_V8_JU_DIV
                                    : (FPSIM_GPU_COLS_V8_JU_EXACT_RNE < NC ? FPSIM_GPU_COLS_V8_JU_EXACT_RNE : NC);
        static_assert(NC % JU == 0, "whole iterations of the column loop");
#pragma unroll 1
        for (int jo = 0; jo < NC; jo += JU) {
            /* the exact RHT from bf16 with JU even: both columns' ranges from the words, at the
             * even column (FPSIM_GPU_RHT_RANGE_PAIRS) */
            constexpr int RANGE_PAIRS =
                RHT == COLS_V8_RHT_EXACT && BF16 && JU % 2 == 0 && FPSIM_GPU_RHT_RANGE_PAIRS;
            [[maybe_unused]] rht16_range word_range[2];
#pragma unroll
            for (int jj = 0; jj < JU; jj++) {
                const int j = jo + jj;
                /* j % 2, known at compile time wherever JU is even */
                const int jodd = JU % 2 == 0 ? jj & 1 : j & 1;
                /* the lane's 32-bit word k of each of its 16 rows (two bf16 columns or one float32),
                 * read when its first column comes up so that only 16 words are live at a time; the
                 * rolled loop reads them for every column (16 shared loads) rather than keep them
                 * across its iterations, where they spilled to local memory (run 45: 2 local
                 * accesses per element) */
                const int k = BF16 ? j / 2 : j;
                /* NVFP4 and MXFP4 nearest-even from bf16: for the first L64 rows, both words in one
                 * 8-byte read at column 0, the second kept for columns 2-3; the other rows one
                 * 4-byte read per word (run 134: NVFP4 cols +1.7 points with all 16 rows; run 148:
                 * MXFP4 cols +3 with 8, FPSIM_GPU_COLS_V8_L64_MXFP4) */
                constexpr int L64 = !BF16 || ROLLED || MMA       ? 0
                                    : KIND == FPSIM_KIND_NVFP4     ? 16
                                    : KIND == FPSIM_KIND_MX && FP4 ? FPSIM_GPU_COLS_V8_L64_MXFP4
                                                                   : 0;
                if (L64 && (j == 0 || j == 2)) {
#pragma unroll
                    for (int i = 0; i < 16; i++) {
                        if (i >= L64)
                            w[i] = words[i * (int)(COLS_V8_ROW_BYTES / 4u) + k];
                        else if (j == 2)
                            w[i] = w_next[i];
                        else {
                            const uint2 p =
                                *reinterpret_cast<const uint2 *>(words + i * (int)(COLS_V8_ROW_BYTES / 4u));
                            w[i] = p.x;
                            w_next[i] = p.y;
                        }
                    }
                } else if (!MMA && ((ROLLED && JU == 1) || !BF16 || !jodd))
#pragma unroll
                    for (int i = 0; i < 16; i++)
                        w[i] = words[i * (int)(COLS_V8_ROW_BYTES / 4u) + k];
                /* bf16 without RHT: both columns' max |x| (as BF16 bits) at once, 16 x 2, kept for
                 * the odd column (the rolled SR loop too, from run 132: it took the max of the
                 * 16 widened floats per column, 24 instructions) */
                constexpr int PAIR_MAX = BF16 && RHT == COLS_V8_RHT_NONE;
                if (PAIR_MAX && !jodd && FPSIM_GPU_HMAX_AMAX >= 2) {
                    pair_max = bf16x2_max_abs_tree<16>(w);
                } else if (PAIR_MAX && !jodd) {
                    pair_max = __vmaxu2(w[0] & 0x7FFF7FFFu, w[1] & 0x7FFF7FFFu);
#pragma unroll
                    for (int i = 2; i < 16; i += 2)
                        pair_max = __vimax3_u16x2(pair_max, w[i] & 0x7FFF7FFFu, w[i + 1] & 0x7FFF7FFFu);
                }
                /* column j's 16 elements, transformed when RHT; where code_tile16 takes the bf16-pair
                 * forms, the loaded words as they are (eb) and no float32 copies (e unused) */
                constexpr int PAIRS = bf16_pairs_apply<KIND, F, BF16, SR>::value && !ROLLED && !MMA;
                v7_elems e;
                float(&v)[16] = e.v;
                v7_bf16_elems eb;
                uint32_t pw[8]; /* rhtsum=mma and the exact RHT: the column's 16 outputs, BF16 pairs */
                if constexpr (PAIRS) {
#pragma unroll
                    for (int i = 0; i < 16; i++)
                        eb.w[i] = w[i];
                    eb.hi = jodd ? 0xFFFFu : 0u;
                    eb.words_paired = 0;
                } else if constexpr (MMA) {
                    /* column 4 cg + j's 16 outputs: two 16-byte reads of the rotated tile, when
                     * the column comes up (read while the column before was coded, they measured
                     * slower: run 169) */
                    read_rotated(mma_cols, mma_x, (uint32_t)j, pw);
#pragma unroll
                    for (int i = 0; i < 16; i++)
                        v[i] = __uint_as_float((i & 1) ? (pw[i / 2] & 0xFFFF0000u) : (pw[i / 2] << 16));
                } else if constexpr (BF16 && ROLLED && JU == 1) {
                    /* jodd known at run time only: one PRMT per element picks the half (a mask
                     * and a predicated shift before run 132) */
                    const uint32_t half = jodd ? 0x3244u : 0x1044u;
#pragma unroll
                    for (int i = 0; i < 16; i++)
                        v[i] = __uint_as_float(__byte_perm(w[i], 0u, half));
                } else {
#pragma unroll
                    for (int i = 0; i < 16; i++)
                        v[i] = BF16 ? __uint_as_float(jodd ? (w[i] & 0xFFFF0000u) : (w[i] << 16))
                                    : __uint_as_float(w[i]);
                }
                if constexpr (RHT == COLS_V8_RHT_EXACT) {
                    if (RANGE_PAIRS && !jodd) rht16_range_of_pair(w, word_range);
                    float t[16];
                    rht16_full<BF16>(v, RANGE_PAIRS ? word_range[jodd] : rht16_range_of<BF16>(v), t, pw);
#pragma unroll
                    for (int i = 0; i < 16; i++)
                        v[i] = t[i];
                }
                if (a.amax_only) { /* the pass before: the tensor amax of the stored (post-RHT) operand */
                    if constexpr (OOL && PAIRS)
                        amax_only_max = abs_max16_ool(amax_only_max, elems_f32(eb), a.nan_ignore);
                    else if constexpr (OOL)
                        amax_only_max = abs_max16_ool(amax_only_max, e, a.nan_ignore);
                    else {
#pragma unroll
                        for (int i = 0; i < 16; i++)
                            amax_only_max =
                                max(amax_only_max, abs_bits(PAIRS ? elem_f32(eb, i) : v[i], a.nan_ignore));
                    }
                    continue;
                }
                /* max of |x| bits (NaN above Inf) */
                uint32_t raw = 0;
                if constexpr (PAIR_MAX) {
                    raw = jodd ? (pair_max & 0xFFFF0000u) : (pair_max << 16);
                } else if constexpr ((MMA || (RHT == COLS_V8_RHT_EXACT && FPSIM_GPU_RHT_PAIR_AMAX)) &&
                                     FPSIM_GPU_HMAX_AMAX >= 1) {
                    /* 7 HMNMX2 and a mask (run 175), NaN read as 0x7FFF: such a tile takes the
                     * exact path, which recomputes its amax from v under the NaN policy */
                    raw = amax_of_bf16x2(bf16x2_max_abs_tree<8>(pw));
                } else if constexpr (MMA) {
                    /* the BF16 outputs' max as pairs, then the larger half: 8 masks, 4 SIMD maxima
                     * and a fold, where the 16 widened floats took 35 instructions (run 108) */
                    uint32_t pm = __vmaxu2(pw[0] & 0x7FFF7FFFu, pw[1] & 0x7FFF7FFFu);
#pragma unroll
                    for (int i = 2; i < 8; i += 2)
                        pm = __vimax3_u16x2(pm, pw[i] & 0x7FFF7FFFu, pw[i + 1] & 0x7FFF7FFFu);
                    raw = amax_of_bf16x2(pm);
                } else {
#pragma unroll
                    for (int i = 0; i < 16; i++)
                        raw = max(raw, __float_as_uint(v[i]) & 0x7FFFFFFFu);
                }
#pragma unroll
                for (int o = CG; o < CG * TL; o <<= 1)
                    raw = max(raw, __shfl_xor_sync(0xFFFFFFFFu, raw, o));
                const uint32_t srow = c0 + (uint32_t)j;
                /* the stored linear index of the first element: the SR counter */
                const uint32_t f = srow * rows + r0;
                uint8_t *dst = a.codes + (size_t)srow * a.code_stride + (FP4 ? r0 / 2 : r0);
                v7_tile tc;
                if constexpr (PAIRS)
                    tc = code_tile16<KIND, F, BF16, SR, CG, CG * TL, OOL, DIV>(a, eb, raw, tv, te_mul, elem_max, f,
                                                                               tile_mask, tab);
                else
                    tc = code_tile16<KIND, F, BF16, SR, CG, CG * TL, OOL, DIV>(a, e, raw, tv, te_mul, elem_max, f,
                                                                               tile_mask, tab);
                const tile_scale &ts = tc.ts;
                if constexpr (PASS_STORES) {
                    /* codes now; the counts and the scale codes at the pass's end */
                    constexpr int NW = code_words<F, 16>::W;
                    uint32_t cw[NW];
#pragma unroll
                    for (int q = 0; q < NW; q++)
                        cw[q] = tc.c[q];
                    store_code_words<F, 16>(cw, dst);
                    sat_sum += tc.sat;
                    zero_tiles += tc.am == 0;
                    codes4 |= (ts.code & 0xFFu) << (8 * j);
                    if (rg % TL != 0 || !per_column_scales) continue;
                } else {
                    store_tile16<F>(a, tc, dst);
                    if (rg % TL != 0) continue;
                    /* the tile's first row group writes its scale (and counts a zero-amax block) */
                    if (a.counters && tc.am == 0) atomicAdd(&a.counters[1], 1ull);
                }
                const uint32_t sc = r0 / TC;
                const size_t si = (size_t)srow * a.scols + sc;
                if (a.scale_inv) a.scale_inv[si] = ts.inv;
                if (!PASS_STORES && a.scale_codes) a.scale_codes[si] = (uint8_t)ts.code;
                if (!a.want_cublas) continue;
                if (KIND == FPSIM_KIND_FP8_BLOCK)
                    a.cub32[(size_t)sc * a.cublas_cols + srow] = ts.inv; /* VEC128: K-blocks x rows */
                else
                    a.cub8[swizzle128x4(srow, sc, a.cublas_cols)] = (uint8_t)ts.code;
            }
        }
        if (PASS_STORES && !a.amax_only) {
            if (a.counters) {
                if (sat_sum) atomicAdd(&a.counters[0], (unsigned long long)sat_sum);
                if (rg % TL == 0 && zero_tiles) atomicAdd(&a.counters[1], (unsigned long long)zero_tiles);
            }
            if (a.scale_codes && rg % TL == 0) {
                uint8_t *sdst = a.scale_codes + (size_t)c0 * a.scols + r0 / TC;
#pragma unroll
                for (int j = 0; j < NC; j++)
                    sdst[(size_t)j * a.scols] = (uint8_t)(codes4 >> (8 * j));
            }
        }
        if (a.amax_only) {
            for (int o = 16; o; o >>= 1)
                amax_only_max = max(amax_only_max, __shfl_xor_sync(0xFFFFFFFFu, amax_only_max, o));
            if (lane == 0) atomicMax(a.amax_out, amax_only_max);
        }
        if constexpr (DUAL)
            if (!a.amax_only)
                rows_from_stage<KIND, F, BF16, TC, SR>(a, cols_stage + buf * (COLS_V8_STAGE_BYTES / 16u),
                                                             cur.row * WROWS, cur.col * wx * WCOLS, cols, tv,
                                                             te_mul, elem_max, tab);
        __syncthreads(); /* every lane has read buffer buf before the next pass copies into it */
    }
    cp_async_wait<0>();
}

/* The rows of a pass in rows_from_stage: rolled (1), unrolled (0), or -1, the default: rolled
 * for NVFP4, whose two E2M1 codings make the dual kernel long (run 163: NVFP4 both copies 53.6-54.3
 * -> 55.9-56.2% of copy), unrolled for the others (rolled, MXFP8 and MXFP4 lost 1.5 points). */
#ifndef FPSIM_GPU_DUAL_ROLL
#define FPSIM_GPU_DUAL_ROLL -1
#endif

/* The rowwise copy of one staged CTA tile (128 rows from tile_row0, wx * WCOLS columns from
 * tile_col0), coded as kernel v7 codes a row: thread q takes the 16-element piece b = q % P of
 * staged rows q / P + k (blockDim.x / P), P = the tile's pieces per row (wx for bf16, wx / 2 for
 * float32; the host picks DUAL only where the tile's width is a multiple of TC), so the TC / 16
 * lanes of a rowwise tile are xor neighbours in a warp, as in kernel v7, and reduce its amax by
 * shuffles. A piece is 2 (bf16) or 4 (float32) 16-byte slots of the staged row, slot p ^ 2 (r / 16)
 * (COLS_V8_ROW_BYTES). The element codes, scale rule, fast and exact paths are code_tile16's, and
 * the SR counter is the element's index in the rowwise operand, so the codes and scales are those
 * of the rowwise kernels bit for bit (verify compares both copies with the CPU). */
template <int KIND, int F, int BF16, int TC, int SR>
__device__ __forceinline__ void rows_from_stage(const qargs &a, const uint4 *stage, uint32_t tile_row0,
                                                uint32_t tile_col0, uint32_t cols, const float (&tv)[6],
                                                float te_mul, float elem_max, const float4 *tab)
{
    constexpr int PW = BF16 ? 2 : 4, TL = TC / 16, FP4 = F == FPSIM_E2M1;
    constexpr int OOL = rare_tile_ool(KIND, F, 1);
    constexpr uint32_t ELEMS_PER_SLOT = BF16 ? 8u : 4u;
    /* 16-element pieces per staged row (32 wx threads), so the CTA's threads cover RSTEP rows
     * at a time whatever wx is */
    constexpr uint32_t RSTEP = BF16 ? 32u : 64u;
    const uint32_t pieces = blockDim.x / RSTEP, b = threadIdx.x % pieces, lane = threadIdx.x & 31u;
    const uint32_t tile_mask = TL <= 1 ? (1u << lane) : (((1u << TL) - 1u) << (lane & ~(uint32_t)(TL - 1)));
    uint32_t sat = 0, zero_tiles = 0;
    /* Lanes b and b + 4 of a bf16 row read slots 2b and 2b + 8, one bank group: 2-way conflicts.
     * Reading them in opposite orders and swapping the codes back (run 163, probe ROT) measured
     * no faster: not kept (gpu/results/run163-dual-rotate-roll-probes.diff). */
    constexpr int ROLL = FPSIM_GPU_DUAL_ROLL < 0 ? KIND == FPSIM_KIND_NVFP4 : FPSIM_GPU_DUAL_ROLL;
    constexpr int ROW_UNROLL = ROLL ? 1 : (int)(128u / RSTEP);
#pragma unroll ROW_UNROLL
    for (uint32_t pass_row = 0; pass_row < 128u / RSTEP; pass_row++) {
        const uint32_t rl = threadIdx.x / pieces + pass_row * RSTEP;
        const uint4 *srow = stage + rl * (COLS_V8_ROW_BYTES / 16u);
        uint4 p[PW];
#pragma unroll
        for (int k = 0; k < PW; k++)
            p[k] = srow[((uint32_t)PW * b + (uint32_t)k) ^ (2u * (rl / 16u))];
        uint32_t raw = 0; /* max of |x| bits, NaN above Inf */
#pragma unroll
        for (int k = 0; k < PW; k++)
            raw = max(raw, BF16 ? raw_max_bf16x8(p[k]) : raw_max_f32x4(p[k]));
#pragma unroll
        for (int o = 1; o < TL; o <<= 1)
            raw = max(raw, __shfl_xor_sync(0xFFFFFFFFu, raw, o));
        const uint32_t row = tile_row0 + rl, col = tile_col0 + 16u * b, f = row * cols + col;
        v7_tile tc;
        if constexpr (bf16_pairs_apply<KIND, F, BF16, SR>::value) {
            v7_bf16_elems e; /* element j in word j / 2, the high half for odd j */
#pragma unroll
            for (int j = 0; j < 16; j++) {
                const uint4 &q = p[j / 8];
                const uint32_t u[4] = {q.x, q.y, q.z, q.w};
                e.w[j] = u[j / 2 % 4];
            }
            e.hi = 0xAAAAu;
            e.words_paired = 1;
            tc = code_tile16<KIND, F, BF16, SR, 1, (TL > 1 ? TL : 1), OOL>(a, e, raw, tv, te_mul, elem_max, f,
                                                                           tile_mask, tab);
        } else {
            v7_elems e;
#pragma unroll
            for (int k = 0; k < PW; k++)
                widen_word<BF16>(p[k], e.v + ELEMS_PER_SLOT * k);
            tc = code_tile16<KIND, F, BF16, SR, 1, (TL > 1 ? TL : 1), OOL>(a, e, raw, tv, te_mul, elem_max, f,
                                                                           tile_mask, tab);
        }
        constexpr int NW = code_words<F, 16>::W;
        uint32_t cw[NW];
#pragma unroll
        for (int q = 0; q < NW; q++)
            cw[q] = tc.c[q];
        store_code_words<F, 16>(cw, a.rw.codes + (size_t)row * a.rw.code_stride + (FP4 ? col / 2u : col));
        sat += tc.sat;
        if (TL > 1 && (lane & (uint32_t)(TL - 1)) != 0) continue;
        /* the tile's first lane writes its scale and counts a zero-amax block */
        zero_tiles += tc.am == 0;
        const uint32_t sc = col / TC;
        const size_t si = (size_t)row * a.rw.scols + sc;
        if (a.rw.scale_inv) a.rw.scale_inv[si] = tc.ts.inv;
        if (a.rw.scale_codes) a.rw.scale_codes[si] = (uint8_t)tc.ts.code;
        if (!a.want_cublas) continue;
        if (KIND == FPSIM_KIND_FP8_BLOCK)
            a.rw.cub32[(size_t)sc * a.rw.cublas_cols + row] = tc.ts.inv; /* VEC128: K-blocks x rows */
        else
            a.rw.cub8[swizzle128x4(row, sc, a.rw.cublas_cols)] = (uint8_t)tc.ts.code;
    }
    if (a.rw.counters) {
        if (sat) atomicAdd(&a.rw.counters[0], (unsigned long long)sat);
        if (zero_tiles) atomicAdd(&a.rw.counters[1], (unsigned long long)zero_tiles);
    }
}

typedef void (*block_cols_fast_kernel_fn)(qargs, uint32_t, uint32_t);

/* The warp tile of kernel v8: 16 x block_cols_fast_row_groups(tc) rows by 32 / row groups x NC
 * columns; the host's shape check is rows % block_cols_fast_warp_rows == 0 and
 * cols % block_cols_fast_warp_cols == 0. */
inline uint32_t block_cols_fast_warp_rows(int tc)
{
    return 16u * (uint32_t)block_cols_fast_row_groups(tc);
}
inline uint32_t block_cols_fast_warp_cols(int tc, int bf16)
{
    return (uint32_t)(32 / block_cols_fast_row_groups(tc)) * (bf16 ? 4u : 2u);
}

template <int KIND, int F, int TC, int SR, int RHT, int DIV = -1> block_cols_fast_kernel_fn block_cols_fast_of(int bf16)
{
    return bf16 ? block_cols_fast_kernel<KIND, F, 1, TC, SR, RHT, 0, DIV>
                : block_cols_fast_kernel<KIND, F, 0, TC, SR, RHT, 0, DIV>;
}

/* Kernel v8 for scheme kind, tile length tc and element format (the formats each kind has), or
 * NULL. The host has checked: columnwise, 1 x TC tiles, the kind's usual TC, rows % 128 == 0 and
 * cols % block_cols_fast_warp_cols == 0, fewer than 2^31 elements, the NVFP4 chain is TE, sm_89+,
 * and a fast mode other than FAST_NEVER (NVFP4 SR: E2M1 with 8 random bits). */
inline block_cols_fast_kernel_fn block_cols_fast_pick(int kind, int tc, int format, int sr, int rht, int bf16,
                                                      int divide_hw)
{
    if (kind == FPSIM_KIND_NVFP4) {
        if (tc != 16 || format != FPSIM_E2M1) return NULL;
        if (rht == COLS_V8_RHT_MMA) { /* the MMA takes BF16 operands: FP32 inputs take the general kernel */
            if (!bf16) return NULL;
            return sr ? block_cols_fast_kernel<FPSIM_KIND_NVFP4, FPSIM_E2M1, 1, 16, 1, COLS_V8_RHT_MMA>
                      : block_cols_fast_kernel<FPSIM_KIND_NVFP4, FPSIM_E2M1, 1, 16, 0, COLS_V8_RHT_MMA>;
        }
        if (sr)
            return rht ? block_cols_fast_of<FPSIM_KIND_NVFP4, FPSIM_E2M1, 16, 1, 1>(bf16)
                       : block_cols_fast_of<FPSIM_KIND_NVFP4, FPSIM_E2M1, 16, 1, 0>(bf16);
        return rht ? block_cols_fast_of<FPSIM_KIND_NVFP4, FPSIM_E2M1, 16, 0, 1>(bf16)
                   : block_cols_fast_of<FPSIM_KIND_NVFP4, FPSIM_E2M1, 16, 0, 0>(bf16);
    }
    if (sr || rht) return NULL;
    if (kind == FPSIM_KIND_MX && tc == 32) {
        switch (format) {
        case FPSIM_E4M3:
            return block_cols_fast_of<FPSIM_KIND_MX, FPSIM_E4M3, 32, 0, 0>(bf16);
        case FPSIM_E5M2:
            return block_cols_fast_of<FPSIM_KIND_MX, FPSIM_E5M2, 32, 0, 0>(bf16);
        case FPSIM_E2M1:
            return block_cols_fast_of<FPSIM_KIND_MX, FPSIM_E2M1, 32, 0, 0>(bf16);
        case FPSIM_E2M3:
            return block_cols_fast_of<FPSIM_KIND_MX, FPSIM_E2M3, 32, 0, 0>(bf16);
        case FPSIM_E3M2:
            return block_cols_fast_of<FPSIM_KIND_MX, FPSIM_E3M2, 32, 0, 0>(bf16);
        default:
            return NULL;
        }
    }
    if (kind == FPSIM_KIND_FP8_BLOCK && tc == 128) {
        if (format == FPSIM_E4M3)
            return divide_hw ? block_cols_fast_of<FPSIM_KIND_FP8_BLOCK, FPSIM_E4M3, 128, 0, 0, 1>(bf16)
                             : block_cols_fast_of<FPSIM_KIND_FP8_BLOCK, FPSIM_E4M3, 128, 0, 0, 0>(bf16);
        if (format == FPSIM_E5M2)
            return divide_hw ? block_cols_fast_of<FPSIM_KIND_FP8_BLOCK, FPSIM_E5M2, 128, 0, 0, 1>(bf16)
                             : block_cols_fast_of<FPSIM_KIND_FP8_BLOCK, FPSIM_E5M2, 128, 0, 0, 0>(bf16);
    }
    return NULL;
}

/* Kernel v8 with DUAL (both copies from one read) for the schemes TransformerEngine quantizes that
 * way: MXFP8 (E4M3, E5M2) and MXFP4 1x32, NVFP4 1x16 (TE chain, nearest-even or SR, no RHT: TE
 * rotates only the columnwise copy, by a kernel of its own) and block FP8 1x128 from bf16 (a
 * float32 CTA tile is 64 columns, under a 128-wide rowwise block); NULL for the rest, which take
 * two passes. The host has checked kernel v8's conditions and that the CTA tile's width is a
 * multiple of tc. */
inline block_cols_fast_kernel_fn block_cols_dual_pick(int kind, int tc, int format, int sr, int bf16)
{
    if (kind == FPSIM_KIND_NVFP4 && tc == 16 && format == FPSIM_E2M1) {
        if (sr)
            return bf16 ? block_cols_fast_kernel<FPSIM_KIND_NVFP4, FPSIM_E2M1, 1, 16, 1, 0, 1>
                        : block_cols_fast_kernel<FPSIM_KIND_NVFP4, FPSIM_E2M1, 0, 16, 1, 0, 1>;
        return bf16 ? block_cols_fast_kernel<FPSIM_KIND_NVFP4, FPSIM_E2M1, 1, 16, 0, 0, 1>
                    : block_cols_fast_kernel<FPSIM_KIND_NVFP4, FPSIM_E2M1, 0, 16, 0, 0, 1>;
    }
    if (sr) return NULL;
    if (kind == FPSIM_KIND_MX && tc == 32) {
        switch (format) {
        case FPSIM_E4M3:
            return bf16 ? block_cols_fast_kernel<FPSIM_KIND_MX, FPSIM_E4M3, 1, 32, 0, 0, 1>
                        : block_cols_fast_kernel<FPSIM_KIND_MX, FPSIM_E4M3, 0, 32, 0, 0, 1>;
        case FPSIM_E5M2:
            return bf16 ? block_cols_fast_kernel<FPSIM_KIND_MX, FPSIM_E5M2, 1, 32, 0, 0, 1>
                        : block_cols_fast_kernel<FPSIM_KIND_MX, FPSIM_E5M2, 0, 32, 0, 0, 1>;
        case FPSIM_E2M1:
            return bf16 ? block_cols_fast_kernel<FPSIM_KIND_MX, FPSIM_E2M1, 1, 32, 0, 0, 1>
                        : block_cols_fast_kernel<FPSIM_KIND_MX, FPSIM_E2M1, 0, 32, 0, 0, 1>;
        default:
            return NULL;
        }
    }
    if (kind == FPSIM_KIND_FP8_BLOCK && tc == 128 && bf16) {
        if (format == FPSIM_E4M3) return block_cols_fast_kernel<FPSIM_KIND_FP8_BLOCK, FPSIM_E4M3, 1, 128, 0, 0, 1>;
        if (format == FPSIM_E5M2) return block_cols_fast_kernel<FPSIM_KIND_FP8_BLOCK, FPSIM_E5M2, 1, 128, 0, 0, 1>;
    }
    return NULL;
}

#endif
