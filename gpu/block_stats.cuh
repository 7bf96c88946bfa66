/* block_stats.cuh: the dequantized tensor and the per-tensor statistics of a GPU-quantized tensor,
 * with the CPU emulator's values (formats/block_quantize.c step 5, formats/qstats.c). Included by
 * block_quantize.cu inside its namespace (it uses rht16_policy and swizzle-free scale indexing).
 *
 * Dequantization, as the CPU's group kernels write it: q = decode(code) * scale_inv[tile], times
 * the NVFP4 global decode factor (TE S_dec; torchao per_tensor_scale when gscale=1), each an FP32
 * multiply with the x86 NaN payload order the CPU build shows; the dequantized tensor is written
 * in the input's shape.
 *
 * Statistics, as fpsim_qstats_add_block forms them: one run per stored row, sums in double over
 * four interleaved lanes (element i into lane i mod 4, in increasing i) skipping NaN/Inf inputs
 * and non-finite dequantized values, the lanes combined as (l0 + l1) + (l2 + l3). Here four
 * threads take the four lanes of a row, so each lane's additions happen in the CPU's order and
 * the combined run sums are the CPU's doubles bit for bit; the host adds them into the exact
 * superaccumulators (fpsim_xsum) like the CPU, so every field equals the CPU's: counts, maxima
 * and all three sums. The stored operand is re-read (input, its transpose, or its RHT recomputed
 * with the quantizer's own rht16_bf16). Counters the quantizer alone sees (saturated elements,
 * zero-amax blocks) come from the quantize kernels (qargs.counters). */
#ifndef FPSIM_BLOCK_STATS_CUH
#define FPSIM_BLOCK_STATS_CUH

/* One stored row's contribution (the CPU's per-run values before the exact sums). */
struct row_stats {
    double sr2, se, se2, amax, maxe;
    unsigned long long finite, nan, inf, nan_out, flushed;
};

struct stats_args {
    const void *x;
    int bf16, axis, rht, rhtmma, fp4, per_tensor, nvfp4;
    size_t rows, cols, qrows, qcols, code_stride, scols;
    int TR, TC;
    const uint8_t *codes;
    const float *scale_inv;
    const float *tvals; /* device: global_amax, s_enc, global_scale, tensor_scale */
    int gdec_from_tvals; /* NVFP4: 1 when the dequant multiplies by global_scale */
    fpsim_spec es;
    float *dq;          /* rows x cols in the input's shape, or NULL */
    row_stats *out;     /* qrows */
};

/* Input element (r, k) of the stored operand, before any RHT. */
__device__ __forceinline__ float stored_input(const stats_args &a, size_t r, size_t k)
{
    const size_t i = a.axis == FPSIM_AXIS_ROWS ? r * a.cols + k : k * a.cols + r;
    return a.bf16 ? __uint_as_float((uint32_t) static_cast<const uint16_t *>(a.x)[i] << 16)
                  : static_cast<const float *>(a.x)[i];
}

/* Element k of stored row r: one stored element and its dequantized value into the lane sums
 * (the second loop of fpsim_qstats_add_block: its semantics equal the first loop's when nothing
 * is special). */
__device__ __forceinline__ void stats_element(const stats_args &a, size_t r, size_t k, float xv, float gdec, row_stats &s)
{
    const uint32_t byte = a.codes[r * a.code_stride + (a.fp4 ? k / 2 : k)];
    const uint32_t code = a.fp4 ? (byte >> (4 * (uint32_t)(k & 1))) & 0xFu : byte;
    const float lut = __uint_as_float(fpsim_decode_f32(code, &a.es));
    const float sinv = a.per_tensor ? a.scale_inv[0] : a.scale_inv[(r / a.TR) * a.scols + k / a.TC];
    /* NaN results carry the CPU's payloads: the C products compile to x86 multiplies that return
     * the scale's NaN before the element's, then the product's before the global factor's
     * (measured on the CPU build: fpsim_mul_x86 takes its second argument's NaN first). */
    float qv = fpsim_mul_x86(lut, sinv);
    if (a.nvfp4) qv = fpsim_mul_x86(gdec, qv);
    if (a.dq) a.dq[a.axis == FPSIM_AXIS_ROWS ? r * a.cols + k : k * a.cols + r] = qv;
    if (isnan(xv)) {
        s.nan++;
        return;
    }
    if (isinf(xv)) {
        s.inf++;
        return;
    }
    s.finite++;
    const double ax = fabs((double)xv);
    s.amax = ax > s.amax ? ax : s.amax;
    if (!isfinite(qv)) {
        s.nan_out++;
        return;
    }
    s.flushed += (xv != 0.0f && qv == 0.0f);
    const double err = __dsub_rn((double)qv, (double)xv);
    s.maxe = fabs(err) > s.maxe ? fabs(err) : s.maxe;
    s.sr2 = __dadd_rn(s.sr2, __dmul_rn((double)xv, (double)xv));
    s.se = __dadd_rn(s.se, err);
    s.se2 = __dadd_rn(s.se2, __dmul_rn(err, err));
}

/* Thread 4 r + l takes lane l of stored row r. */
__global__ void __launch_bounds__(256) dequant_stats_kernel(stats_args a)
{
    const size_t gid = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const size_t r = gid / 4;
    const int lane = (int)(gid % 4);
    row_stats s = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const float gdec = a.gdec_from_tvals ? a.tvals[2] : 1.0f;
    if (r < a.qrows) {
        if (a.rht) { /* 16-element vectors along the stored row (qcols % 16 == 0) */
            for (size_t v0 = 0; v0 < a.qcols; v0 += 16) {
                float u[16];
                for (int j = 0; j < 16; j++) u[j] = stored_input(a, r, v0 + j);
                rht16_policy(u, a.rhtmma);
                for (int j = lane; j < 16; j += 4) stats_element(a, r, v0 + j, u[j], gdec, s);
            }
        } else {
            for (size_t k = lane; k < a.qcols; k += 4) stats_element(a, r, k, stored_input(a, r, k), gdec, s);
        }
    }
    /* The run's sums as the CPU combines its lanes: (l0 + l1) + (l2 + l3). */
    const unsigned full = 0xFFFFFFFFu;
    const double sr2_1 = __shfl_down_sync(full, s.sr2, 1), sr2_2 = __shfl_down_sync(full, s.sr2, 2),
                 sr2_3 = __shfl_down_sync(full, s.sr2, 3);
    const double se_1 = __shfl_down_sync(full, s.se, 1), se_2 = __shfl_down_sync(full, s.se, 2),
                 se_3 = __shfl_down_sync(full, s.se, 3);
    const double se2_1 = __shfl_down_sync(full, s.se2, 1), se2_2 = __shfl_down_sync(full, s.se2, 2),
                 se2_3 = __shfl_down_sync(full, s.se2, 3);
    unsigned long long cnt[5] = {s.finite, s.nan, s.inf, s.nan_out, s.flushed};
    double mx[2] = {s.amax, s.maxe};
    for (int o = 1; o < 4; o <<= 1) {
        for (int i = 0; i < 5; i++) cnt[i] += __shfl_xor_sync(full, cnt[i], o);
        for (int i = 0; i < 2; i++) mx[i] = fmax(mx[i], __shfl_xor_sync(full, mx[i], o));
    }
    if (lane != 0 || r >= a.qrows) return;
    row_stats t;
    t.sr2 = __dadd_rn(__dadd_rn(s.sr2, sr2_1), __dadd_rn(sr2_2, sr2_3));
    t.se = __dadd_rn(__dadd_rn(s.se, se_1), __dadd_rn(se_2, se_3));
    t.se2 = __dadd_rn(__dadd_rn(s.se2, se2_1), __dadd_rn(se2_2, se2_3));
    t.amax = mx[0];
    t.maxe = mx[1];
    t.finite = cnt[0];
    t.nan = cnt[1];
    t.inf = cnt[2];
    t.nan_out = cnt[3];
    t.flushed = cnt[4];
    a.out[r] = t;
}

#endif
