/* verify_amax.c: the GPU's tensor amax pass (fpsim_gpu_amax_dev) against a plain host loop.
 *
 * The oracle is the definition: the max of the bits of |x| over the tensor, leaving out NaN under
 * `ignore` and NaN and Inf under the finite mode (2), where a bf16 value counts as its float32
 * widening (bits << 16). Sizes: tails of 1-7 elements after the 16-byte vectors, and tensors that
 * span several of the kernel's chunks (one load per thread of a one-wave grid: about 17 MB on an
 * H200), so that its wrapped chunk order and both cache policies are read. Each size carries five
 * plantings: the max at the last element (the scalar tail) or the first, NaN and Inf together,
 * negative extremes with a signed NaN payload, and a subnormal-only tensor. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fpsim_block.h"
#include "fpsim_gpu.h"
#include "fpsim_gpu_verify.h"

enum { AMAX_PLANTINGS = 5, AMAX_MODES = 3 };

static uint32_t amax_oracle(const uint32_t *bits, size_t n, int mode)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t a = bits[i] & 0x7FFFFFFFu;
        if (mode == 1 && a > 0x7F800000u) continue;  /* NaN */
        if (mode == 2 && a >= 0x7F800000u) continue; /* NaN or Inf */
        if (a > m) m = a;
    }
    return m;
}

/* xorshift64*: any fixed stream will do, the plantings decide the answer */
static uint64_t amax_rng(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* float32 bits of planting p over n elements (bf16: the caller keeps the high halves). */
static void amax_fill(uint32_t *b, size_t n, int p, uint64_t seed)
{
    uint64_t s = seed | 1u;
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = amax_rng(&s);
        /* sign, exponent 100..139, any significand: finite, below 2^13 */
        uint32_t v =
            (uint32_t)(r >> 63) << 31 | (uint32_t)(100u + (r >> 32) % 40u) << 23 | ((uint32_t)r & 0x7FFFFFu);
        if (p == 4) v = (uint32_t)(r >> 63) << 31 | ((uint32_t)r & 0x7FFFFFu); /* subnormal or zero */
        b[i] = v;
    }
    const uint32_t big = 0x49800000u; /* 2^20 */
    switch (p) {
    case 0:
        b[n - 1] = big;
        break;
    case 1:
        b[0] = big | 0x80000000u;
        break;
    case 2:
        b[0] = big;
        b[n / 2] = 0x7FC00000u;
        b[n - 1] = 0x7F800000u;
        break;
    case 3:
        b[n / 3] = 0xC9800000u;            /* -2^20 */
        if (n > 1) b[1] = 0xFF800000u;     /* -Inf */
        if (n > 2) b[n - 2] = 0xFFC12300u; /* a NaN with payload and sign (bf16: 0xFFC1) */
        break;
    default:
        b[n - 1] = 0x007FFFFFu;
        break;
    }
}

fpsim_status fpsim_gpu_verify_amax(const fpsim_gpu_verify_opts *o, fpsim_gpu_check_fn fn, void *ctx,
                                   uint64_t *total_mismatches)
{
    static const size_t sizes[] = {1, 7, 9, 4103, 1000003, 12000007};
    const size_t maxn = 12000007;
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    uint32_t *b = malloc(maxn * sizeof *b);
    uint16_t *h = malloc(maxn * sizeof *h);
    void *xd = NULL;
    uint32_t *md = NULL;
    if (!b || !h) st = fpsim_fail(FPSIM_ENOMEM, "verify: no memory for the amax tensors");
    if (st == FPSIM_OK) st = fpsim_gpu_alloc(&xd, maxn * sizeof *b);
    if (st == FPSIM_OK) st = fpsim_gpu_alloc((void **)&md, sizeof *md);
    for (int bf16 = 0; bf16 < 2 && st == FPSIM_OK; bf16++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0] && st == FPSIM_OK; si++) {
            const size_t n = sizes[si];
            fpsim_gpu_check row;
            memset(&row, 0, sizeof row);
            snprintf(row.name, sizeof row.name, "tensor amax %s n=%zu", bf16 ? "bf16" : "f32", n);
            if (o->only && !strstr(row.name, o->only)) continue;
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            for (int p = 0; p < AMAX_PLANTINGS && st == FPSIM_OK; p++) {
                amax_fill(b, n, p, 0x5EED0000u + 16u * si + (unsigned)p);
                if (bf16)
                    for (size_t i = 0; i < n; i++) {
                        h[i] = (uint16_t)(b[i] >> 16);
                        b[i] = (uint32_t)h[i] << 16; /* what the GPU reads, widened */
                    }
                st = fpsim_gpu_copy(xd, bf16 ? (const void *)h : (const void *)b, n * (bf16 ? 2u : 4u), 0);
                for (int mode = 0; mode < AMAX_MODES && st == FPSIM_OK; mode++) {
                    const int policy = mode == 0 ? FPSIM_NAN_PROPAGATE : mode == 1 ? FPSIM_NAN_IGNORE : 2;
                    uint32_t got = 0;
                    st = fpsim_gpu_amax_dev(md, xd, bf16, n, policy, NULL);
                    if (st == FPSIM_OK) st = fpsim_gpu_copy(&got, md, sizeof got, 1);
                    if (st != FPSIM_OK) break;
                    const uint32_t want = amax_oracle(b, n, mode);
                    row.inputs += n;
                    if (got != want) {
                        if (!row.mismatches)
                            snprintf(row.example, sizeof row.example,
                                     "planting %d, NaN mode %d: gpu 0x%08X, host loop 0x%08X", p, mode, got,
                                     want);
                        row.mismatches++;
                    }
                }
            }
            clock_gettime(CLOCK_MONOTONIC, &t1);
            row.seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
            if (st != FPSIM_OK) break;
            *total_mismatches += row.mismatches;
            fn(&row, ctx);
        }
    fpsim_gpu_free(xd);
    fpsim_gpu_free(md);
    free(b);
    free(h);
    return st;
}
