/* rht16_mma.h: TE's 16-point RHT as a BF16 tensor-core MMA computes it (scheme key rhtsum=mma),
 * bit for bit. Compiled by gcc for the CPU quantizer and by nvcc for the GPU kernels that do not
 * issue the MMA themselves (FPSIM_HD).
 *
 * TE's wgrad RHT is a BF16 matmul with FP32 accumulation, y = BF16(x . (0.25 diag(s) H16)), done
 * on tensor cores by both its reference path and its fused kernel (formats-spec.md 5.5). A
 * 16-term dot product is one tensor-core block on Hopper and Blackwell (HMMA.16816.F32.BF16 and
 * HGMMA; Khattak & Mikaitis' H100/H200/B200 parameters: 16 products per block, 2 extra alignment
 * bits), and one block computes (gpu-numerics.md 3.2, the `hopper-hgmma` model of sim/, which
 * reproduced cuBLASLt BF16 GEMMs on the H200 bit for bit):
 *   1. each product exactly; here b = +-0.25, so a product is a_i scaled by 2^-2;
 *   2. E = the largest product exponent over the nonzero products (a subnormal a counts with
 *      exponent -126 and no hidden bit);
 *   3. every product's magnitude truncated to a multiple of 2^(E - 25), then the sign applied;
 *   4. the exact sum of those, truncated (RZ) to 24 significant bits and then to FP32's
 *      subnormal grid; beyond FLT_MAX +-Inf; a zero sum +0 (C = 0 adds nothing);
 *   5. NaN in, or +Inf with -Inf among the products, gives NaN; one infinity passes through.
 * The FP32 result is then rounded to BF16, nearest-even (TE's downcast; cvt.rn.bf16x2.f32 on the
 * GPU, whose NaN is 0x7FFF).
 * It differs from rhtsum=exact (one rounding of the exact sum) only when the nonzero inputs'
 * exponents lie more than 12 apart (fpsim_rht16_mma_is_exact, fpsim_block.h, has the argument): terms more than 18 binades below the largest lose bits in step 3, and a
 * sum wider than 24 bits loses its low bits, and the sticky information, in step 4.
 *
 * Inputs that are not BF16 values are first rounded to BF16 (nearest-even), as the operand cast of
 * a BF16 matmul would; BF16 inputs (TE's only case) are taken as they are. */
#ifndef FPSIM_RHT16_MMA_H
#define FPSIM_RHT16_MMA_H

#include <stdint.h>
#include <string.h>

#include "fpsim_core_types.h"

/* FP32 bits of BF16 nearest-even of FP32 bits u (NaN -> 0x7FFF0000, the GPU's canonical NaN). */
FPSIM_HD uint32_t fpsim_rht_mma_bf16_bits(uint32_t u)
{
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF0000u;
    return (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
}

/* Sign of TE's RHT matrix entry (i, j): s_i (-1 at i = 3, 5, 6, 7, 8, 9, 10, 12, 14, 15) times
 * H16[i][j] = (-1)^popcount(i & j). Returns 1 for a negative entry. */
FPSIM_HD uint32_t fpsim_rht_mma_neg(int i, int j)
{
    uint32_t p = (uint32_t)(i & j);
    p ^= p >> 2;
    p ^= p >> 1;
    return ((0xD7E8u >> i) & 1u) ^ (p & 1u);
}

/* FP32 bits of sign * mag * 2^q, mag truncated to 24 significant bits and then to the grid 2^-149
 * (both toward zero); +-Inf beyond FLT_MAX (step 4). mag != 0. */
FPSIM_HD uint32_t fpsim_rht_mma_pack_rz(uint32_t neg, uint64_t mag, int q)
{
#if defined(__CUDA_ARCH__)
    int nb = 64 - __clzll((long long)mag);
#else
    int nb = 64 - __builtin_clzll(mag);
#endif
    if (nb > 24) {
        mag >>= nb - 24;
        q += nb - 24;
        nb = 24;
    }
    const uint32_t sign = neg << 31;
    const int e = q + nb - 1; /* exponent of the leading bit */
    if (e > 127) return sign | 0x7F800000u;
    if (e < -126) { /* subnormal: the value on the grid 2^-149, whichever side of it q lies */
        const int s = q + 149;
        return sign | (uint32_t)(s >= 0 ? mag << s : (-s >= 64 ? 0 : mag >> -s));
    }
    /* normal: mag has nb <= 24 bits; shift its leading bit to bit 23, then the field carries it */
    const uint32_t m24 = (uint32_t)(mag << (24 - nb));
    return sign | (((uint32_t)(e + 126) << 23) + m24);
}

/* sums[j] = the tensor-core block's FP32 result for output j of the RHT of x[16] (FP32 bits in and
 * out), steps 1-5 above: what the MMA writes before TE's downcast to BF16. */
FPSIM_HD void fpsim_rht16_mma_sums(uint32_t sums[16], const uint32_t x[16])
{
    /* decoded operands: sign, exponent e (-126 for subnormals), 8-bit significand m (hidden bit
     * included), value m * 2^(e - 7); class 0 finite, 1 Inf, 2 NaN */
    uint32_t sg[16], m[16], cls[16];
    int e[16], emax = -1000;
    for (int i = 0; i < 16; i++) {
        const uint32_t b = fpsim_rht_mma_bf16_bits(x[i]) >> 16;
        const uint32_t ef = (b >> 7) & 0xFFu;
        sg[i] = b >> 15;
        cls[i] = ef == 0xFFu ? ((b & 0x7Fu) ? 2u : 1u) : 0u;
        m[i] = ef ? (b & 0x7Fu) | 0x80u : b & 0x7Fu;
        e[i] = ef ? (int)ef - 127 : -126;
        if (cls[i] == 0u && m[i] && e[i] > emax) emax = e[i];
    }
    /* Each product's truncated magnitude (step 3) is the same in every output; only its sign
     * changes with H16's column. In units of the grid 2^(E - 25), E = emax - 2 (the products'
     * exponents are the inputs' minus 2): m * 2^(e - 7 - 2) / 2^(emax - 27) = m * 2^(18 - (emax - e)),
     * signed by the input and by s_i. The 16 exact sums are then a Walsh-Hadamard transform of
     * these integers (below 2^30 in magnitude: no overflow). */
    int64_t t[16];
    uint32_t special = 0;
    for (int i = 0; i < 16; i++) {
        special |= cls[i];
        const int d = emax - e[i];
        const int64_t mag = cls[i] || !m[i] ? 0
                            : d <= 18       ? (int64_t)m[i] << (18 - d)
                            : d - 18 >= 8   ? 0
                                            : (int64_t)(m[i] >> (d - 18));
        t[i] = (sg[i] ^ fpsim_rht_mma_neg(i, 0)) ? -mag : mag;
    }
    for (int h = 1; h < 16; h <<= 1)
        for (int i = 0; i < 16; i++)
            if ((i & h) == 0) {
                const int64_t a = t[i], b = t[i + h];
                t[i] = a + b;
                t[i + h] = a - b;
            }
    for (int j = 0; j < 16; j++) {
        /* step 5 for NaN and infinities, whose signs do depend on the output */
        int nan = 0, pinf = 0, ninf = 0;
        for (int i = 0; special && i < 16; i++) {
            nan |= cls[i] == 2u;
            if (cls[i] == 1u) {
                if (sg[i] ^ fpsim_rht_mma_neg(i, j))
                    ninf = 1;
                else
                    pinf = 1;
            }
        }
        const int64_t sum = t[j];
        uint32_t r;
        if (nan || (pinf && ninf))
            r = 0x7FFFFFFFu;
        else if (pinf || ninf)
            r = pinf ? 0x7F800000u : 0xFF800000u;
        else if (sum == 0)
            r = 0u;
        else
            r = fpsim_rht_mma_pack_rz(sum < 0, (uint64_t)(sum < 0 ? -sum : sum), emax - 27);
        sums[j] = r;
    }
}

/* y[j] (as FP32 bits of a BF16 value) = the RHT of x[16] under rhtsum=mma: the block results
 * rounded to BF16. x and y may alias. */
FPSIM_HD void fpsim_rht16_mma_bits(uint32_t y[16], const uint32_t x[16])
{
    uint32_t sums[16];
    fpsim_rht16_mma_sums(sums, x);
    for (int j = 0; j < 16; j++)
        y[j] = fpsim_rht_mma_bf16_bits(sums[j]);
}

#endif
