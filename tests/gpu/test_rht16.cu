/* test_rht16.cu: the columnwise kernel's FP32 form of the 16-point RHT (gpu/rht16.cuh, exponent
 * spans up to 12 binades) against the CPU reference fpsim_rht16 (formats/block_nvfp4.c: the sum
 * in double, then one BF16 rounding), on the host: the device build differs only in spelling the
 * FP32 adds as __fadd_rn and the BF16 rounding as cvt.rn.bf16x2 (`fpsim verify --device gpu`
 * covers those). Also checks rht16_range_of, which decides who takes the form.
 *
 * Inputs, all BF16 values with exponent fields 3..250:
 *  - random vectors of every span 0..12 (both ends present), random signs, mantissas and zeros;
 *  - ties: two terms 2^8 apart, so that every output is a BF16 midpoint (ties to even), alone or
 *    with 1-3 more terms 9-12 binades down that move the outputs off the midpoints;
 *  - signed zeros (the outputs are +0);
 *  - cancellation: terms near 2^-124 whose sums fall into the FP32 subnormal range.
 * Every vector is compared bit for bit; the test also checks that each kind of case occurred. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fpsim_block.h"
#include "rht16.cuh"
#include "test_util.h"

static uint64_t rng_state = 1;
static uint32_t next32(void)
{
    return (uint32_t)(test_splitmix64(&rng_state) >> 32);
}

/* A BF16 value as float: sign, exponent field, 7 mantissa bits. */
static float bf16_value(uint32_t sign, uint32_t field, uint32_t mant)
{
    return rht_float((sign << 31) | (field << 23) | ((mant & 0x7Fu) << 16));
}

struct counts {
    unsigned long long vectors, mismatches, midpoints;
};

/* Compare the form with fpsim_rht16 on u (whose span the caller made at most 12). */
static void check(const float (&u)[16], uint32_t span, counts &c)
{
    float ref[16], got[16];
    fpsim_rht16(ref, u);
    const rht16_range r = rht16_range_of<1>(u);
    c.vectors++;
    if (!r.ok || r.span != span) {
        if (c.mismatches++ < 5) printf("MISMATCH: rht16_range_of gives span %u, ok %d (expected %u, 1)\n", r.span, r.ok, span);
        return;
    }
    rht16_fp32(u, got);
    if (memcmp(got, ref, sizeof ref) != 0 && c.mismatches++ < 5) {
        printf("MISMATCH, input:");
        for (int i = 0; i < 16; i++) printf(" %08x", rht_bits(u[i]));
        for (int j = 0; j < 16; j++)
            if (rht_bits(got[j]) != rht_bits(ref[j]))
                printf("\n  y[%d]: got %08x, reference %08x", j, rht_bits(got[j]), rht_bits(ref[j]));
        printf("\n");
    }
}

/* Outputs whose exact value (in double, exact here) is a BF16 midpoint: the ties the test is for.
 * Recomputed from the definition, so the count does not trust the form. */
static int midpoints(const float (&u)[16])
{
    int n = 0;
    for (int j = 0; j < 16; j++) {
        double y = 0.0;
        for (int i = 0; i < 16; i++) {
            const double t = 0.25 * (double)rht_sign(i) * (double)u[i];
            y += (__builtin_popcount((unsigned)(i & j)) & 1) ? -t : t;
        }
        const float s = (float)y;
        n += (double)s == y && (rht_bits(s) & 0xFFFFu) == 0x8000u;
    }
    return n;
}

/* The exponent span of u's nonzero elements (0 when all are zero). */
static uint32_t span_of(const float (&u)[16])
{
    uint32_t lo = 255, hi = 0;
    for (int i = 0; i < 16; i++) {
        const uint32_t f = (rht_bits(u[i]) >> 23) & 0xFFu;
        if (rht_bits(u[i]) << 1) {
            lo = f < lo ? f : lo;
            hi = f > hi ? f : hi;
        }
    }
    return hi >= lo ? hi - lo : 0u;
}

int main(void)
{
    counts c = {0, 0, 0};
    float u[16];
    /* random vectors of every span */
    for (int span = 0; span <= 12; span++)
        for (int n = 0; n < 100000; n++) {
            const uint32_t emax = 3u + (uint32_t)span + next32() % (248u - (uint32_t)span);
            for (int i = 0; i < 16; i++) {
                const uint32_t k = next32();
                const uint32_t field = emax - (span ? next32() % (uint32_t)(span + 1) : 0u);
                u[i] = (k & 0xF00u) == 0 ? 0.0f : bf16_value(k >> 31, field, k);
            }
            u[next32() % 16] = bf16_value(next32() >> 31, emax, next32());
            u[next32() % 16] = bf16_value(next32() >> 31, emax - (uint32_t)span, next32());
            check(u, span_of(u), c);
        }
    /* ties, kept or moved by smaller terms */
    for (int n = 0; n < 400000; n++) {
        const uint32_t e = 40u + next32() % 200u;
        for (int i = 0; i < 16; i++) u[i] = 0.0f;
        const int a = (int)(next32() % 16);
        int b = (int)(next32() % 15);
        b += b >= a;
        u[a] = bf16_value(next32() >> 31, e, next32());
        u[b] = bf16_value(next32() >> 31, e - 8u, 0u); /* half of u[a]'s quantum times 4: a BF16 midpoint */
        const int more = (int)(next32() % 4);
        for (int k = 0; k < more; k++) {
            const int i = (int)(next32() % 16);
            if (i != a && i != b) u[i] = bf16_value(next32() >> 31, e - 9u - next32() % 4u, next32());
        }
        c.midpoints += (unsigned long long)midpoints(u);
        check(u, span_of(u), c);
    }
    /* signed zeros only: every output is +0 */
    for (int n = 0; n < 1000; n++) {
        for (int i = 0; i < 16; i++) u[i] = (next32() & 1u) ? -0.0f : 0.0f;
        check(u, 0u, c);
    }
    /* cancellation into the FP32 subnormal range */
    for (int n = 0; n < 200000; n++) {
        for (int i = 0; i < 16; i++) {
            const uint32_t k = next32();
            u[i] = (k & 0x300u) == 0 ? 0.0f : bf16_value(k >> 31, 3u + (k >> 4) % 4u, k);
        }
        check(u, span_of(u), c);
    }
    printf("%llu vectors (%llu outputs exactly at a BF16 midpoint), %llu mismatches\n", c.vectors, c.midpoints,
           c.mismatches);
    if (c.midpoints < 100000) {
        printf("FAIL: the inputs did not reach the ties the test is for\n");
        return 1;
    }
    return c.mismatches ? 1 : 0;
}
