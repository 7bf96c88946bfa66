/* test_block_convert.c: the block kernels' fast element conversion (formats/block_convert.c)
 * against the core's fpsim_round_f32, which defines every conversion.
 *
 * For every element format a block scheme uses (E4M3, E5M2, E2M3, E3M2, E2M1) and every policy
 * the core defines for it, under RNE and RNA: every FP32 exponent with dense mantissa samples
 * (all values within 64 ulp of every rounding boundary of the target grid, plus random
 * mantissas), both signs, zeros, subnormals, Inf and NaN payloads, times scale factors. The
 * `exhaustive` argument runs every FP32 bit pattern instead (label exhaustive). */
#define FPSIM_BLOCK_INTERNAL
#include "fpsim_block.h"
#include "fpsim_formats.h"
#include "fpsim_parallel.h"
#include "core_batch.h"
#include "test_util.h"

#include <string.h>

static test_counter tc = TEST_COUNTER_INIT("block fast conversion vs core");

enum { CHUNK = 4096 };

static void check_chunk_sr(const fpsim_block_fast *fc, const float *x, size_t n, float f, const char *what);

/* x[i] * f as float32 bits: the value the fast path converts */
static void scaled_bits(uint32_t *xb, const float *x, size_t n, float f)
{
    for (size_t i = 0; i < n; i++)
        xb[i] = test_f32_bits(x[i] * f);
}

static void check_chunk(const fpsim_block_fast *fc, const float *x, size_t n, float f, const char *what)
{
    uint8_t got[CHUNK];
    uint32_t xb[CHUNK], want[CHUNK];
    if (fc->sr) {
        check_chunk_sr(fc, x, n, f, what);
        return;
    }
    fpsim_block_fast_run(got, x, n, f, fc, 1e30f);
    scaled_bits(xb, x, n, f);
    test_core_batch(want, xb, n, &fc->spec, NULL);
    for (size_t i = 0; i < n; i++)
        if (got[i] != (uint8_t)want[i])
            test_fail(&tc, "%s x=0x%08x f=%a: fast 0x%02x, core 0x%02x", what, test_f32_bits(x[i]), (double)f,
                      got[i], want[i]);
    test_count(&tc, n);
}

/* Random bytes derived from each input's bits (thread-safe, reproducible). */
static void check_chunk_sr(const fpsim_block_fast *fc, const float *x, size_t n, float f, const char *what)
{
    uint8_t got[CHUNK];
    uint32_t rb[CHUNK] = {0}, xb[CHUNK], want[CHUNK];
    for (size_t i = 0; i < n; i++) {
        uint64_t st = test_f32_bits(x[i]) * 0x9E3779B97F4A7C15ull + i;
        rb[i] = (uint32_t)test_splitmix64(&st) & 0xFF000000u;
    }
    fpsim_block_fast_sr_run(got, x, n, f, rb, fc, 1e30f);
    scaled_bits(xb, x, n, f);
    test_core_batch(want, xb, n, &fc->spec, rb);
    for (size_t i = 0; i < n; i++)
        if (got[i] != (uint8_t)want[i])
            test_fail(&tc, "%s SR x=0x%08x f=%a r=0x%08x: fast 0x%02x, core 0x%02x", what, test_f32_bits(x[i]),
                      (double)f, rb[i], got[i], want[i]);
    test_count(&tc, n);
}

typedef struct exhaustive_ctx {
    const fpsim_block_fast *fc;
    const char *what;
} exhaustive_ctx;

/* Every FP32 bit pattern, in chunks of CHUNK (one buffer per call). */
static void exhaustive_range(void *ctx, size_t b, size_t e)
{
    const exhaustive_ctx *c = ctx;
    /* The factor is read at run time, as in the kernels: a literal 1.0f would let the compiler
     * fold x * 1.0f to x, which keeps a signaling NaN's quiet bit clear where the hardware
     * multiply (and torch's) sets it, and payload-dependent NaN rules (torchao) then differ. */
    static volatile float one = 1.0f;
    float *x = malloc(CHUNK * sizeof(float));
    for (size_t k = b; k < e; k++) {
        for (size_t i = 0; i < CHUNK; i++)
            x[i] = test_f32_from_bits((uint32_t)(k * CHUNK + i));
        check_chunk(c->fc, x, CHUNK, one, c->what);
    }
    free(x);
}

static void sweep_spec(const fpsim_spec *s, const char *what, int exhaustive)
{
    fpsim_block_fast fc;
    fpsim_block_fast_init(&fc, s);
    static float x[CHUNK];
    size_t n = 0;
    uint64_t rng = 12345;
    if (exhaustive) {
        exhaustive_ctx c = {&fc, what};
        fpsim_parallel_for((size_t)1 << 20, 16, exhaustive_range, &c, 0); /* 2^20 chunks of 4096 */
        return;
    }
    static const float factors[] = {1.0f, 0x1p-20f, 3.0f, 0x1.8p+7f};
    const uint32_t d = 23u - s->mbits;
    for (uint32_t sign = 0; sign < 2; sign++)
        for (uint32_t e = 0; e < 256; e++) {
            /* values around every rounding boundary of the target grid at this exponent, at the
             * normal spacing and at every subnormal spacing the target may use */
            for (uint32_t k = 0; k < (1u << s->mbits) * 2 + 2; k++)
                for (uint32_t dd = d; dd < d + 12 && dd < 24; dd += 1)
                    for (int32_t off = -3; off <= 3; off++) {
                        uint32_t mant = ((k << dd) + (1u << (dd - 1)) + (uint32_t)off) & 0x7FFFFFu;
                        x[n++] = test_f32_from_bits((sign << 31) | (e << 23) | mant);
                        if (n == CHUNK) {
                            for (size_t fi = 0; fi < 4; fi++)
                                check_chunk(&fc, x, n, factors[fi], what);
                            n = 0;
                        }
                    }
            for (int k = 0; k < 64; k++) {
                uint32_t mant = (uint32_t)test_splitmix64(&rng) & 0x7FFFFFu;
                x[n++] = test_f32_from_bits((sign << 31) | (e << 23) | mant);
                if (n == CHUNK) {
                    for (size_t fi = 0; fi < 4; fi++)
                        check_chunk(&fc, x, n, factors[fi], what);
                    n = 0;
                }
            }
        }
    if (n)
        for (size_t fi = 0; fi < 4; fi++)
            check_chunk(&fc, x, n, factors[fi], what);
}

int main(int argc, char **argv)
{
    int exhaustive = argc > 1 && strcmp(argv[1], "exhaustive") == 0;
    static const int fmts[] = {FPSIM_E4M3, FPSIM_E5M2, FPSIM_E2M3, FPSIM_E3M2, FPSIM_E2M1};
    static const fpsim_round modes[] = {FPSIM_RNE, FPSIM_RNA, FPSIM_SR};
    int fast_specs = 0;
    for (size_t fi = 0; fi < 5; fi++) {
        char names[512];
        snprintf(names, sizeof names, "%s", fpsim_policy_names(fmts[fi]));
        for (char *p = strtok(names, ", "); p; p = strtok(NULL, ", ")) {
            char pol[32];
            snprintf(pol, sizeof pol, "%s", p);
            for (size_t mi = 0; mi < 3; mi++) {
                fpsim_spec s;
                if (fpsim_spec_make(&s, (fpsim_format_id)fmts[fi], pol, modes[mi], mi == 2 ? 8 : 0) != FPSIM_OK)
                    continue;
                fpsim_block_fast fc;
                fpsim_block_fast_init(&fc, &s);
                fast_specs += fc.ok;
                char what[96];
                snprintf(what, sizeof what, "%s %s %s%s", fpsim_format_get((fpsim_format_id)fmts[fi])->name, pol,
                         mi == 2 ? "sr8" : mi ? "rna" : "rne", fc.ok ? "" : " (core path)");
                /* exhaustive: the element casts the block schemes use by default (nv, clamp,
                 * torchao; RNE and TE's 8-bit SR), the others are sampled in the fast run */
                int deflt = (strcmp(pol, "nv") == 0 || strcmp(pol, "clamp") == 0 ||
                             strcmp(pol, "torchao") == 0) &&
                            (mi == 0 || (mi == 2 && fmts[fi] == FPSIM_E2M1));
                if (!exhaustive || (fc.ok && deflt))
                    sweep_spec(&s, what, exhaustive);
            }
        }
    }
    TEST_CHECK(&tc, fast_specs >= 8, "the fast path serves the common specs (%d)", fast_specs);
    return test_summary(&tc);
}
