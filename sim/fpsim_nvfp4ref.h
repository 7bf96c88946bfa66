/* fpsim_nvfp4ref.h: a slow, scalar, independent reference of TE's NVFP4 chain for the columnwise
 * (wgrad) copy of an operand, with the expectations of stochastic rounding in closed form.
 *
 * Written apart from formats/block_nvfp4.c (no shared code but the Philox random words of
 * fpsim_sr_word): E4M3 and E2M1 values by table search, the Hadamard transform as a 16x16 sum in
 * double. Used by the bias-variance sweep (sim/biasvar.c) to explain where the bias of NVFP4 with
 * stochastic rounding comes from, to measure a what-if recipe whose block scale rounds up, and by
 * tests/biasvar as the oracle of the block quantizer's SR path.
 *
 * Chain (formats-spec.md 5.2, 5.4, 5.5; TransformerEngine core_nvfp4.cuh, ptx.cuh): the input
 * x (rows x cols, row-major) is quantized along its rows (the token dimension of a wgrad operand):
 * column c, tokens 16b..16b+15 form one block; stored element index k = c * rows + t (TE's
 * columnwise copy). Optional 16-point RHT of each block (BF16 RNE output). S_enc = 2688 / amax
 * (FP32), block decode scale d = block_amax * (S_enc * fp32(1/6)), E4M3 (RNE satfinite, or the
 * what-if: rounded up), enc = min(1 / (s * S_dec), FLT_MAX), y = x * enc, E2M1 with clip at 6.
 * Dequantized value: (q * s) * S_dec. */
#ifndef FPSIM_NVFP4REF_H
#define FPSIM_NVFP4REF_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum fpsim_nvfp4ref_elem {
    FPSIM_NVFP4REF_RNE = 0,     /* E2M1 nearest, ties to even (TE cvt.rn.satfinite) */
    FPSIM_NVFP4REF_SR,          /* one draw: TE's byte per element from fpsim_sr_word */
    FPSIM_NVFP4REF_EXPECT_TE,   /* the exact expectation of SR with TE's 8 random bits:
                                   lo + step * floor(256 frac) / 256, 6 above 6 */
    FPSIM_NVFP4REF_EXPECT_IDEAL,/* expectation of SR with unlimited random bits: min(|y|, 6) */
    FPSIM_NVFP4REF_NOCLIP,      /* unlimited bits and no clip: y itself (scale effects only) */
    FPSIM_NVFP4REF_INPUT        /* the (rotated) input itself, except scale-0 blocks -> 0 */
} fpsim_nvfp4ref_elem;

typedef enum fpsim_nvfp4ref_scale {
    FPSIM_NVFP4REF_SCALE_RNE = 0, /* TE: E4M3 round to nearest even, satfinite */
    FPSIM_NVFP4REF_SCALE_UP       /* what-if: the smallest E4M3 value >= d (so |y| <= 6 up to
                                     the FP32 rounding of enc and x * enc) */
} fpsim_nvfp4ref_scale;

typedef struct fpsim_nvfp4ref_opts {
    int elem;      /* fpsim_nvfp4ref_elem */
    int scale;     /* fpsim_nvfp4ref_scale */
    int rht;       /* 1: TE's 16-point random Hadamard transform of each block first */
    uint64_t seed; /* SR draws */
    uint32_t stream;
    int threads;   /* columns in parallel (the bits do not depend on it); <= 0: the default */
} fpsim_nvfp4ref_opts;

/* What the chain did to the blocks and elements of one operand. */
typedef struct fpsim_nvfp4ref_counts {
    uint64_t blocks;        /* blocks with a nonzero amax */
    uint64_t blocks_over6;  /* of those: block_amax * enc > 6 (the block maximum saturates) */
    uint64_t blocks_zero_scale; /* of those: the E4M3 scale is 0 (the block dequantizes to 0) */
    uint64_t elems;         /* nonzero elements */
    uint64_t elems_sat;     /* |x * enc| > 6 */
    double over6_max;       /* largest block_amax * enc seen (6 * d / s) */
} fpsim_nvfp4ref_counts;

/* The dequantized operand (rows x cols, the input's shape and domain: rotated when rht) as float:
 * exact for RNE and SR draws, the expectation (computed in double) rounded once to float
 * otherwise (a relative 2^-24, far below the biases it measures). rows must be a multiple of 16.
 * counts may be NULL. */
fpsim_status fpsim_nvfp4ref_quantize(float *deq, fpsim_nvfp4ref_counts *counts, const float *x,
                                     size_t rows, size_t cols, const fpsim_nvfp4ref_opts *o);

/* Scalar pieces, exposed for tests: E4M3 of d >= 0 by table search (RNE satfinite or up), its
 * value; E2M1 neighbours of |y| < 6 (lo <= |y| < hi on the grid 0, .5, 1, 1.5, 2, 3, 4, 6). */
float fpsim_nvfp4ref_e4m3(float d, int scale_rule);
void fpsim_nvfp4ref_e2m1_bracket(double ay, double *lo, double *hi);
/* The 16-point RHT of one block: y_j = BF16_RNE(0.25 sum_i s_i x_i (-1)^popcount(i & j)). */
void fpsim_nvfp4ref_rht16(float y[16], const float x[16]);

#ifdef __cplusplus
}
#endif
#endif
