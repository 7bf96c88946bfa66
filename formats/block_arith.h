/* block_arith.h: FP32 helpers shared by the block quantizers (internal; sim/ borrows f2u/u2f).
 *
 * f2u/u2f: the bits of a float and back (memcpy, no aliasing tricks).
 * mul_torch/div_torch: FP32 multiply and divide with the NaN propagation of torch 2.15 CPU
 * kernels on x86 (measured: for tensor * tensor with both operands NaN the SECOND operand's NaN
 * comes out, i.e. the vectorized kernel passes it as the SSE/AVX first source; for a / b the
 * dividend's NaN wins; an invalid operation gives the x86 default NaN 0xFFC00000), written out
 * so that the result does not depend on how this compiler orders commutative operands or on the
 * host's NaN rules. Only the NaN sign and payload are at stake: they decide torch's FP8 NaN sign
 * and torchao's FP4/FP6 NaN codes. */
#ifndef FPSIM_BLOCK_ARITH_H
#define FPSIM_BLOCK_ARITH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* x86-64: an AVX2 clone beside the SSE2 one of a function, picked at load time. Integer ops and
 * single IEEE adds, multiplies and divisions give the same bits on both (no FMA:
 * -ffp-contract=off). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define FPSIM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FPSIM_CLONES
#endif

static inline uint32_t f2u(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float u2f(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline float mul_torch(float a, float b)
{
    if (isnan(b))
        return u2f(f2u(b) | 0x00400000u);
    if (isnan(a))
        return u2f(f2u(a) | 0x00400000u);
    float r = a * b;
    return isnan(r) ? u2f(0xFFC00000u) : r;
}

static inline float div_torch(float a, float b)
{
    if (isnan(a))
        return u2f(f2u(a) | 0x00400000u);
    if (isnan(b))
        return u2f(f2u(b) | 0x00400000u);
    float r = a / b;
    return isnan(r) ? u2f(0xFFC00000u) : r;
}

#endif
