/* test_rht16.cu: the columnwise kernel's FP32 forms of the 16-point RHT (gpu/rht16.cuh) against
 * the CPU reference fpsim_rht16 (formats/block_nvfp4.c: the sum in double, then one BF16
 * rounding), on the host: the device build differs only in spelling the FP32 adds as __fadd_rn /
 * __fadd_rd / __fadd_ru and the BF16 rounding as cvt.rn.bf16x2 (`fpsim verify --device gpu`
 * covers those). Also checks rht16_range_of, which decides who takes the forms.
 *
 * Part 1, rht16_fp32 (exponent spans up to 12 binades).
 * Inputs, all BF16 values with exponent fields 3..250:
 *  - random vectors of every span 0..12 (both ends present), random signs, mantissas and zeros;
 *  - ties: two terms 2^8 apart, so that every output is a BF16 midpoint (ties to even), alone or
 *    with 1-3 more terms 9-12 binades down that move the outputs off the midpoints;
 *  - signed zeros (the outputs are +0);
 *  - cancellation: terms near 2^-124 whose sums fall into the FP32 subnormal range.
 * Every vector is compared bit for bit; the test also checks that each kind of case occurred.
 *
 * Part 2, rht16_fp32_bounded (the interval FWHT and its certificate), wherever the reference's
 * double sum is exact: BF16 inputs of every span 0..41, FP32 inputs of every span 0..25, the
 * benchmark's fill, BF16 midpoints moved by terms 9..40 binades down (which the nearest FP32 sums
 * lose: the certificate must refuse those or get them right), cancellation, signed zeros. Where
 * the form certifies its outputs they must equal the reference bit for bit; it must certify every
 * vector of span <= 12 (its adds are exact there) and most others, and must refuse some of the
 * moved midpoints (else the test did not reach the boundary it is for).
 *
 * Part 3, with a CUDA device only (else "no CUDA device: device part skipped"): every vector of
 * part 2 through rht16_fp32_bounded on the GPU, where add.rm / add.rp and cvt.rn.bf16x2 do the
 * work: its certificate and its certified outputs must equal the host's, bit for bit.
 *
 * Part 4, rht16_range_of_pair (both columns of a bf16 word's 16 rows on 16-bit lanes) against
 * span_of and the range rule written out element by element, and against rht16_range_of on each
 * column's floats: zeros of both signs, subnormals, fields 1-2 and 251-254, Inf and NaN mixed into
 * random spans. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <vector>

#include "fpsim_block.h"
#include "gpu_test.cuh"
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

/* Random signs, mantissas and zeros with exponent fields in [emax - span, emax] (3..250), both
 * ends present; fp32: the nonzero elements get random low 16 bits too (FP32, not BF16, values;
 * the two ends stay BF16). */
static void random_span_vector(float (&u)[16], uint32_t span, int fp32)
{
    const uint32_t emax = 3u + span + next32() % (248u - span);
    for (int i = 0; i < 16; i++) {
        const uint32_t k = next32();
        const uint32_t field = emax - (span ? next32() % (span + 1u) : 0u);
        u[i] = (k & 0xF00u) == 0 ? 0.0f : bf16_value(k >> 31, field, k);
        if (fp32 && u[i] != 0.0f) u[i] = rht_float(rht_bits(u[i]) | (next32() & 0xFFFFu));
    }
    u[next32() % 16] = bf16_value(next32() >> 31, emax, next32());
    u[next32() % 16] = bf16_value(next32() >> 31, emax - span, next32());
}

/* Two terms 8 binades apart, so that every output is a BF16 midpoint (half of u[a]'s quantum
 * times 4; ties to even), and `more` further terms 9 .. 8 + down binades below u[a] that move the
 * outputs off the midpoints (fewer where they land on a or b). */
static void tie_vector(float (&u)[16], uint32_t e, int more, uint32_t down)
{
    for (int i = 0; i < 16; i++) u[i] = 0.0f;
    const int a = (int)(next32() % 16);
    int b = (int)(next32() % 15);
    b += b >= a;
    u[a] = bf16_value(next32() >> 31, e, next32());
    u[b] = bf16_value(next32() >> 31, e - 8u, 0u);
    for (int k = 0; k < more; k++) {
        const int i = (int)(next32() % 16);
        if (i != a && i != b) u[i] = bf16_value(next32() >> 31, e - 9u - next32() % down, next32());
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

/* Part 2: the certified bounds on u against the reference. */
struct bounded_counts {
    unsigned long long vectors, certified, mismatches, narrow_refused;
};

/* Part 2's vectors, kept for part 3. */
static std::vector<float> bounded_inputs;

static void check_bounded(const float (&u)[16], bounded_counts &c)
{
    bounded_inputs.insert(bounded_inputs.end(), u, u + 16);
    const rht16_range r = rht16_range_of<0>(u); /* <0>: FP32 inputs allowed */
    if (!r.in_range || r.span > (r.bf16 ? 41u : 25u)) {
        if (c.mismatches++ < 5) printf("MISMATCH: the test made an input outside the form's range (span %u)\n", r.span);
        return;
    }
    float ref[16];
    uint32_t got[8];
    fpsim_rht16(ref, u);
    c.vectors++;
    const int certain = rht16_fp32_bounded(u, got, r.bf16);
    if (!certain) {
        /* the adds are exact for spans up to 12: the bounds meet, so the form must certify */
        if (r.bf16 && r.span <= 12u) c.narrow_refused++;
        return;
    }
    c.certified++;
    for (int j = 0; j < 16; j++) {
        const uint32_t g = (j & 1) ? got[j / 2] & 0xFFFF0000u : got[j / 2] << 16;
        if (g != rht_bits(ref[j])) {
            if (c.mismatches++ < 5) {
                printf("MISMATCH (bounded), input:");
                for (int i = 0; i < 16; i++) printf(" %08x", rht_bits(u[i]));
                printf("\n  y[%d]: got %08x, reference %08x\n", j, g, rht_bits(ref[j]));
            }
            return;
        }
    }
}

/* The benchmark's fill (gpu/bench_util.cu fill_kernel), written again here: four uniforms in
 * [1, 2) summed minus 6, times 2^k with k drawn from [-spread, spread] per run of 64 elements,
 * truncated to BF16; u gets column col of rows row0 .. row0 + 15 of a cols-wide tensor. */
static uint32_t fill_mix32(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}
static float bench_fill(uint64_t seed, uint64_t i, int spread)
{
    const uint64_t h = seed * 0x100000001B3ull + i;
    float v = 0.0f;
    for (int k = 0; k < 4; k++) v += rht_float(0x3F800000u | (fill_mix32(h * 4 + (uint64_t)k) >> 9));
    v -= 6.0f;
    const int k = (int)(fill_mix32(seed ^ (i >> 6) ^ 0xABCDull) % (uint32_t)(2 * spread + 1)) - spread;
    v *= rht_float((uint32_t)(127 + k) << 23);
    return rht_float(rht_bits(v) & 0xFFFF0000u);
}

static int bounded_part(void)
{
    bounded_counts c = {0, 0, 0, 0};
    float u[16];
    /* BF16 inputs of every span 0..41 and FP32 inputs of every span 0..25 */
    for (int fp32 = 0; fp32 <= 1; fp32++)
        for (int span = 0; span <= (fp32 ? 25 : 41); span++)
            for (int n = 0; n < 20000; n++) {
                random_span_vector(u, (uint32_t)span, fp32);
                check_bounded(u, c);
            }
    const unsigned long long random_certified = c.certified, random_vectors = c.vectors;
    /* BF16 midpoints, alone or moved by 1-3 terms 9..40 binades down */
    unsigned long long moved_vectors = 0, moved_refused = 0;
    for (int n = 0; n < 400000; n++) {
        tie_vector(u, 50u + next32() % 190u, 1 + (int)(next32() % 3), 32u);
        const unsigned long long before = c.certified;
        check_bounded(u, c);
        moved_vectors++;
        moved_refused += c.certified == before;
    }
    /* the benchmark's default fill (spread 8) and a narrower one (spread 2) */
    unsigned long long fill_vectors = 0, fill_refused = 0;
    for (int spread = 2; spread <= 8; spread += 6)
        for (uint64_t col = 0; col < 20000; col++) {
            for (int i = 0; i < 16; i++) u[i] = bench_fill(12, (uint64_t)i * 16384u + col, spread);
            const unsigned long long before = c.certified;
            check_bounded(u, c);
            fill_vectors++;
            fill_refused += c.certified == before;
        }
    /* cancellation into the FP32 subnormal range, with wider spans; signed zeros */
    for (int n = 0; n < 100000; n++) {
        for (int i = 0; i < 16; i++) {
            const uint32_t k = next32();
            u[i] = (k & 0x300u) == 0 ? 0.0f : bf16_value(k >> 31, 3u + (k >> 4) % 30u, k);
        }
        check_bounded(u, c);
    }
    for (int n = 0; n < 1000; n++) {
        for (int i = 0; i < 16; i++) u[i] = (next32() & 1u) ? -0.0f : 0.0f;
        check_bounded(u, c);
    }
    printf("bounded: %llu vectors, %llu certified, %llu mismatches; random spans %llu of %llu certified; "
           "moved midpoints %llu of %llu refused; benchmark fill %llu of %llu refused\n",
           c.vectors, c.certified, c.mismatches, random_certified, random_vectors, moved_refused, moved_vectors,
           fill_refused, fill_vectors);
    int fail = c.mismatches != 0;
    if (c.narrow_refused) {
        printf("FAIL: %llu vectors of span <= 12 were refused (their adds are exact)\n", c.narrow_refused);
        fail = 1;
    }
    if (moved_refused < 1000) {
        printf("FAIL: the moved midpoints did not reach the certificate's boundary\n");
        fail = 1;
    }
    if (random_certified < random_vectors * 9 / 10 || fill_refused * 100 > fill_vectors) {
        printf("FAIL: the form refuses too many vectors to be the kernel's fast path\n");
        fail = 1;
    }
    return fail;
}

/* Part 3: vector t of x through the device form: certain[t] and out[8 t ..]. */
__global__ void bounded_on_device(const float *x, uint32_t *out, int *certain, int n)
{
    const int t = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (t >= n) return;
    float u[16];
    for (int i = 0; i < 16; i++) u[i] = x[(size_t)t * 16 + i];
    uint32_t w[8];
    certain[t] = rht16_fp32_bounded(u, w, rht16_range_of<0>(u).bf16);
    for (int k = 0; k < 8; k++) out[(size_t)t * 8 + k] = w[k];
}

static int device_part(void)
{
    if (!gpu_test_have_device("device part skipped")) return 0;
    const int n = (int)(bounded_inputs.size() / 16);
    float *x = nullptr;
    uint32_t *out = nullptr;
    int *certain = nullptr;
    if (cudaMalloc(&x, bounded_inputs.size() * sizeof(float)) != cudaSuccess ||
        cudaMalloc(&out, (size_t)n * 8 * sizeof(uint32_t)) != cudaSuccess ||
        cudaMalloc(&certain, (size_t)n * sizeof(int)) != cudaSuccess) {
        printf("FAIL: cudaMalloc\n");
        return 1;
    }
    cudaMemcpy(x, bounded_inputs.data(), bounded_inputs.size() * sizeof(float), cudaMemcpyHostToDevice);
    bounded_on_device<<<(n + 255) / 256, 256>>>(x, out, certain, n);
    std::vector<uint32_t> got((size_t)n * 8);
    std::vector<int> got_certain((size_t)n);
    cudaMemcpy(got.data(), out, got.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost);
    const cudaError_t e = cudaMemcpy(got_certain.data(), certain, got_certain.size() * sizeof(int),
                                     cudaMemcpyDeviceToHost);
    cudaFree(x);
    cudaFree(out);
    cudaFree(certain);
    if (e != cudaSuccess) {
        printf("FAIL: the device part: %s\n", cudaGetErrorString(e));
        return 1;
    }
    unsigned long long mismatches = 0, device_certified = 0;
    for (int t = 0; t < n; t++) {
        float u[16];
        memcpy(u, &bounded_inputs[(size_t)t * 16], sizeof u);
        uint32_t want[8];
        const int host_certain = rht16_fp32_bounded(u, want, rht16_range_of<0>(u).bf16);
        device_certified += got_certain[(size_t)t] != 0;
        int bad = (got_certain[(size_t)t] != 0) != (host_certain != 0);
        for (int k = 0; k < 8 && host_certain && !bad; k++) bad = got[(size_t)t * 8 + k] != want[k];
        if (bad && mismatches++ < 5) {
            printf("MISMATCH (device), input:");
            for (int i = 0; i < 16; i++) printf(" %08x", rht_bits(u[i]));
            printf("\n  certified: device %d, host %d\n", got_certain[(size_t)t], host_certain);
        }
    }
    printf("device: %d vectors, %llu certified, %llu mismatches against the host\n", n, device_certified, mismatches);
    return mismatches != 0;
}

/* Part 4: a random BF16 pattern, mostly normal within `span` binades below field top, sometimes
 * a zero, a subnormal, a field just outside 3..250, Inf or NaN. */
static uint32_t range_test_bf16(uint32_t top, uint32_t span, int specials)
{
    const uint32_t k = next32(), sign = (k >> 31) << 15, mant = k & 0x7Fu;
    switch (specials || (k >> 7) % 16u == 0 ? (k >> 7) % 16u : 5u) {
    case 0: return sign; /* +-0 */
    case 1: return sign | (mant ? mant : 1u); /* subnormal */
    case 2: return sign | ((1u + (k >> 12) % 2u) << 7) | mant; /* field 1 or 2 */
    case 3: return sign | ((251u + (k >> 12) % 4u) << 7) | mant; /* field 251..254 */
    case 4: return (k >> 12) % 4u ? sign | 0x7F80u : sign | 0x7F80u | (mant ? mant : 1u); /* Inf, NaN */
    default: return sign | ((top - (k >> 12) % (span + 1u)) << 7) | mant;
    }
}

/* The range rule of rht16_range_of written out for one column: every element finite with field
 * <= 250, the nonzero ones with field >= 3. */
static int range_rule_in_range(const float (&u)[16])
{
    for (int i = 0; i < 16; i++) {
        const uint32_t b = rht_bits(u[i]) & 0x7FFFFFFFu, f = b >> 23;
        if (f > 250u || (b != 0u && f < 3u)) return 0;
    }
    return 1;
}

static int range_pairs_part(void)
{
    unsigned long long vectors = 0, mismatches = 0, out_of_range = 0;
    for (int n = 0; n < 500000; n++) {
        /* special elements (each about 1 in 16) in an eighth of the vectors; zeros in all */
        const uint32_t top = 3u + next32() % 248u, span = next32() % 48u;
        const int specials = (n % 8) == 0;
        uint32_t w[16];
        float col[2][16];
        for (int i = 0; i < 16; i++) {
            uint32_t h[2];
            for (int c = 0; c < 2; c++) {
                h[c] = range_test_bf16(top, span < top - 3u ? span : top - 3u, specials);
                col[c][i] = rht_float(h[c] << 16);
            }
            w[i] = h[0] | (h[1] << 16);
        }
        rht16_range got[2];
        rht16_range_of_pair(w, got);
        for (int c = 0; c < 2; c++) {
            const rht16_range ref = rht16_range_of<1>(col[c]);
            const int in_range = range_rule_in_range(col[c]);
            vectors++;
            out_of_range += !in_range;
            /* the span matters only where the column is in range */
            const int bad = got[c].in_range != in_range || got[c].ok != in_range || !got[c].bf16 ||
                            (in_range && got[c].span != span_of(col[c])) || got[c].in_range != ref.in_range ||
                            got[c].ok != ref.ok || got[c].span != ref.span;
            if (bad && mismatches++ < 5)
                printf("range pair mismatch: column %d, in_range %d (rule %d), span %u (span_of %u, float form %u)\n", c,
                       got[c].in_range, in_range, got[c].span, span_of(col[c]), ref.span);
        }
    }
    printf("range pairs: %llu columns (%llu out of range), %llu mismatches\n", vectors, out_of_range, mismatches);
    if (out_of_range < vectors / 20 || out_of_range > vectors / 4) {
        printf("FAIL: the range pairs' inputs did not mix in- and out-of-range columns as meant\n");
        return 1;
    }
    return mismatches != 0;
}

int main(void)
{
    counts c = {0, 0, 0};
    float u[16];
    /* random vectors of every span */
    for (int span = 0; span <= 12; span++)
        for (int n = 0; n < 100000; n++) {
            random_span_vector(u, (uint32_t)span, 0);
            check(u, span_of(u), c);
        }
    /* ties, kept or moved by smaller terms */
    for (int n = 0; n < 400000; n++) {
        tie_vector(u, 40u + next32() % 200u, (int)(next32() % 4), 4u);
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
    const int bounded_fail = bounded_part();
    const int device_fail = device_part();
    const int range_pairs_fail = range_pairs_part();
    return c.mismatches || bounded_fail || device_fail || range_pairs_fail ? 1 : 0;
}
