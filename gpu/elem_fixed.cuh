/* elem_fixed.cuh: fpsim_core.h's float32 -> code rounding with the format fixed at compile time.
 *
 * The kernels v1-v3 called fpsim_round_f32 with the whole spec as run-time data, so none of the
 * format arithmetic (shift amounts, bias, the largest code) folded: about 70 lane-instructions per
 * element. Here the FORMAT fields (bits, mantissa bits, bias, largest finite magnitude) and the
 * rounding mode are template constants, while the POLICY fields (overflow, Inf, NaN codes, flags,
 * sr_bits) stay data in the spec. The function called is still fpsim_round_f32_mode of the shared
 * core, on a copy of the spec whose format fields hold the same values as constants: the bits are
 * the core's by construction. The host checks fpsim_elem_fixed_matches() before it picks a fixed
 * kernel (a spec whose fields differ from the constants takes the generic kernel), and passes
 * FULL = fpsim_spec_full_rules(spec) so specs that need no payload/zero/E8M0 rules drop them. */
#ifndef FPSIM_ELEM_FIXED_CUH
#define FPSIM_ELEM_FIXED_CUH

#include <stdint.h>

#include "fpsim_core.h"

/* Format constants (formats/format_table.c). F = -1: nothing fixed (the generic core). */
template <int F> struct fpsim_elem_traits { enum { fixed = 0, bits = 0, mbits = 0, bias = 0, max_mag = 0 }; };
template <> struct fpsim_elem_traits<FPSIM_E4M3> { enum { fixed = 1, bits = 8, mbits = 3, bias = 7, max_mag = 0x7E }; };
template <> struct fpsim_elem_traits<FPSIM_E5M2> { enum { fixed = 1, bits = 8, mbits = 2, bias = 15, max_mag = 0x7B }; };
template <> struct fpsim_elem_traits<FPSIM_E2M1> { enum { fixed = 1, bits = 4, mbits = 1, bias = 1, max_mag = 0x7 }; };
template <> struct fpsim_elem_traits<FPSIM_E2M3> { enum { fixed = 1, bits = 6, mbits = 3, bias = 1, max_mag = 0x1F }; };
template <> struct fpsim_elem_traits<FPSIM_E3M2> { enum { fixed = 1, bits = 6, mbits = 2, bias = 3, max_mag = 0x1F }; };

/* 1 when spec s has exactly the format fields fpsim_elem_traits<F> fixes (host check). */
template <int F> inline int fpsim_elem_fixed_matches(const fpsim_spec *s)
{
    typedef fpsim_elem_traits<F> T;
    return T::fixed && s->format == F && s->bits == T::bits && s->mbits == T::mbits && s->bias == T::bias &&
           s->max_mag == T::max_mag && s->is_signed == 1;
}

/* float32 bits -> code: fpsim_round_f32_mode(x, s, rbits, MODE, FULL) with F's format fields as
 * constants (F = -1: the spec as given). */
template <int F, int MODE, int FULL>
__device__ __forceinline__ uint32_t fpsim_round_f32_fixed(uint32_t x, const fpsim_spec &s, uint32_t rbits)
{
    typedef fpsim_elem_traits<F> T;
    if (!T::fixed) return fpsim_round_f32_mode(x, &s, rbits, MODE, FULL);
    fpsim_spec f = s;
    f.bits = T::bits;
    f.mbits = T::mbits;
    f.bias = T::bias;
    f.max_mag = T::max_mag;
    f.is_signed = 1;
    return fpsim_round_f32_mode(x, &f, rbits, MODE, FULL);
}

#endif
