/* core_batch.h: the shared core (fpsim_round_f32), the oracle of the fast-path sweeps, over an
 * array.
 *
 * codes[i] = fpsim_round_f32(xbits[i], spec, rbits ? rbits[i] : 0), exactly: the loop calls
 * fpsim_round_f32_mode, the function fpsim_round_f32 calls, with the same arguments, the spec's
 * rounding mode only passed as a constant (one loop per mode) so that the compiler drops the other
 * modes' arithmetic and vectorizes the loop; on x86-64 an AVX2 clone is picked at load time where
 * the CPU has it. The core is integer arithmetic on the input's bits, so the vector loop gives the
 * same codes as the scalar call. Why: the exhaustive sweeps of the fast forms (2^32 inputs per
 * spec) spent most of their time in one scalar core call per element (test_block_convert's: 93% of
 * its samples). */
#ifndef FPSIM_TEST_CORE_BATCH_H
#define FPSIM_TEST_CORE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_core.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define TEST_CORE_BATCH_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TEST_CORE_BATCH_CLONES
#endif

#define TEST_CORE_BATCH_MODE(MODE)                                                                        \
    case MODE:                                                                                           \
        for (size_t i = 0; i < n; i++)                                                                   \
            codes[i] = fpsim_round_f32_mode(xbits[i], &s, rbits ? rbits[i] : 0u, (MODE), 1);             \
        break

TEST_CORE_BATCH_CLONES
static void test_core_batch(uint32_t *codes, const uint32_t *xbits, size_t n, const fpsim_spec *spec,
                            const uint32_t *rbits)
{
    const fpsim_spec s = *spec; /* a local copy: the stores to codes cannot alias it */
    switch (s.round) {
        TEST_CORE_BATCH_MODE(FPSIM_RNE);
        TEST_CORE_BATCH_MODE(FPSIM_RNA);
        TEST_CORE_BATCH_MODE(FPSIM_RZ);
        TEST_CORE_BATCH_MODE(FPSIM_RU);
        TEST_CORE_BATCH_MODE(FPSIM_RD);
        TEST_CORE_BATCH_MODE(FPSIM_SR);
    default: /* a mode added later: the scalar call */
        for (size_t i = 0; i < n; i++)
            codes[i] = fpsim_round_f32(xbits[i], &s, rbits ? rbits[i] : 0u);
    }
}

#undef TEST_CORE_BATCH_MODE

#endif
