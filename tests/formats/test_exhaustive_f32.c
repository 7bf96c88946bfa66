/* test_exhaustive_f32: every float32 input (2^32) through fpsim's array conversion, compared
 * with the independent reference (reference.c), for every format of 8 bits or fewer and for
 * bf16/f16, under the policies and rounding modes listed in `cases` below.
 *
 * Usage: test_exhaustive_f32 [--stride S] GROUP...   GROUP: fp8 fp4fp6 e8m0 mldonly b16 all, or
 *        one case as FORMAT/POLICY (e.g. e4m3/nv)
 * With --stride S only every S-th bit pattern is converted (the fast label's sampled run).
 *
 * How the reference keeps up: inputs are visited in increasing magnitude per sign (increasing
 * bit patterns within each half of the code space), and the reference result is a step function
 * of the magnitude whose steps sit at representable values and midpoints (ref_segments), so a
 * monotone walk costs O(1) per input. Zero, Inf and NaN inputs take the slow path (ref_round).
 * Work is split into chunks of consecutive bit patterns, taken by FPSIM_TEST_THREADS (default 2)
 * threads; each chunk is converted by the core with one thread, so the sweep threads are ours. */
#include "fpsim_formats.h"
#include "reference.h"
#include "test_util.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BITS 20
#define MODE_MASK_ALL ((1u << REF_MODE_COUNT) - 1u)
#define MODE_MASK_RNE (1u << REF_RNE)

typedef struct sweep_case {
    const char *group, *format, *policy;
    unsigned modes; /* bit m set: sweep ref_mode m */
} sweep_case;

/* Nearest and tie behaviour of every format under nv and ml_dtypes in every mode; the other
 * policies differ from these only in special values, so they are swept under RNE. */
static const sweep_case cases[] = {
    {"fp8", "e4m3", "nv", MODE_MASK_ALL},
    {"fp8", "e4m3", "ml_dtypes", MODE_MASK_ALL},
    {"fp8", "e4m3", "nv-nosat", MODE_MASK_RNE},
    {"fp8", "e4m3", "torch", MODE_MASK_RNE},
    {"fp8", "e4m3", "ml_dtypes-sat", MODE_MASK_RNE},
    {"fp8", "e4m3", "clamp", MODE_MASK_RNE | (1u << REF_RU)},
    {"fp8", "e4m3", "torch-sat", MODE_MASK_RNE},
    {"fp8", "e5m2", "nv", MODE_MASK_ALL},
    {"fp8", "e5m2", "ml_dtypes", MODE_MASK_ALL},
    {"fp8", "e5m2", "nv-nosat", MODE_MASK_RNE},
    {"fp8", "e5m2", "torch", MODE_MASK_RNE},
    {"fp8", "e5m2", "ml_dtypes-sat", MODE_MASK_RNE},
    {"fp8", "e5m2", "clamp", MODE_MASK_RNE},
    {"fp4fp6", "e2m1", "nv", MODE_MASK_ALL},
    {"fp4fp6", "e2m1", "ml_dtypes", MODE_MASK_ALL},
    {"fp4fp6", "e2m1", "te", MODE_MASK_RNE},
    {"fp4fp6", "e2m1", "deepgemm", MODE_MASK_RNE},
    {"fp4fp6", "e2m1", "torchao", MODE_MASK_RNE},
    {"fp4fp6", "e2m3", "torchao", MODE_MASK_RNE},
    {"fp4fp6", "e3m2", "torchao", MODE_MASK_RNE},
    {"fp4fp6", "e2m3", "nv", MODE_MASK_ALL},
    {"fp4fp6", "e2m3", "ml_dtypes", MODE_MASK_ALL},
    {"fp4fp6", "e3m2", "nv", MODE_MASK_ALL},
    {"fp4fp6", "e3m2", "ml_dtypes", MODE_MASK_ALL},
    {"e8m0", "e8m0", "torch", MODE_MASK_RNE},
    {"e8m0", "e8m0", "ml_dtypes", MODE_MASK_RNE},
    {"e8m0", "e8m0", "ml_dtypes-sat", MODE_MASK_RNE},
    {"e8m0", "e8m0", "ptx-rz", 1u << REF_RZ},
    {"e8m0", "e8m0", "ptx-rp", 1u << REF_RU},
    {"e8m0", "e8m0", "ptx-rz-sat", 1u << REF_RZ},
    {"e8m0", "e8m0", "ptx-rp-sat", 1u << REF_RU},
    {"mldonly", "e4m3fnuz", "ml_dtypes", MODE_MASK_ALL},
    {"mldonly", "e5m2fnuz", "ml_dtypes", MODE_MASK_ALL},
    {"mldonly", "e4m3b11fnuz", "ml_dtypes", MODE_MASK_ALL},
    {"mldonly", "e4m3ieee", "ml_dtypes", MODE_MASK_ALL},
    {"mldonly", "e4m3fnuz", "ml_dtypes-sat", MODE_MASK_RNE},
    {"mldonly", "e4m3ieee", "ml_dtypes-sat", MODE_MASK_RNE},
    {"b16", "bf16", "nv", MODE_MASK_ALL},
    {"b16", "bf16", "ml_dtypes", MODE_MASK_RNE},
    {"b16", "bf16", "torch-cpu", MODE_MASK_RNE},
    {"b16", "bf16", "clamp", MODE_MASK_RNE},
    {"b16", "f16", "nv", MODE_MASK_ALL},
    {"b16", "f16", "ml_dtypes", MODE_MASK_RNE},
    {"b16", "f16", "clamp", MODE_MASK_RNE},
};

/* One (format, policy) sweep: per swept mode the core's spec and the reference's segments. */
typedef struct sweep {
    const sweep_case *c;
    const ref_rules *rules;
    ref_grid *grid;
    int nmodes;
    ref_mode mode[REF_MODE_COUNT];
    fpsim_spec spec[REF_MODE_COUNT];
    ref_segments *seg[REF_MODE_COUNT][2]; /* [mode][negative] */
    uint32_t *bp32[REF_MODE_COUNT][2];    /* the breakpoints as float32 magnitude bits */
    uint32_t special[REF_MODE_COUNT][2][2]; /* [mode][negative][zero, inf] */
    test_counter tc[REF_MODE_COUNT];
    char label[REF_MODE_COUNT][96];
    uint64_t stride;
    atomic_uint_fast64_t next_chunk;
} sweep;

/* Breakpoints as float32 bits, so that the walk compares integers. Every representable value and
 * midpoint of these formats below 2^128 is a float32; those at or above 2^128 (the grid's
 * continuation past E8M0's and BF16's largest value) lie above every finite float32 and become
 * the bits of Inf. */
static uint32_t *breakpoints_f32(const ref_segments *seg)
{
    uint32_t *bp = malloc(sizeof *bp * (size_t)seg->count);
    for (int k = 0; k < seg->count; k++) {
        double v = seg->bp[k];
        if (v >= 0x1p128) {
            bp[k] = 0x7F800000u;
        } else {
            if ((double)(float)v != v) {
                fprintf(stderr, "breakpoint %a is not a float32\n", v);
                abort();
            }
            bp[k] = test_f32_bits((float)v);
        }
    }
    return bp;
}

/* The core's output for one chunk, 1 or 2 bytes per code. */
static fpsim_status core_convert(void *codes, const float *x, size_t n, const fpsim_spec *s)
{
    return fpsim_convert_f32(codes, x, n, s, 0, 0, 0, 1);
}

/* One element whose expected code is known: compare and report. */
static void check_one(sweep *sw, int m, const void *codes, int wide, size_t i, uint32_t b,
                      uint32_t want)
{
    uint32_t got = wide ? ((const uint16_t *)codes)[i] : ((const uint8_t *)codes)[i];
    if (got != want)
        test_fail(&sw->tc[m], "x=0x%08x (%a): got 0x%02x, want 0x%02x", b,
                  (double)test_f32_from_bits(b), got, want);
}

/* Elements [i, i + len) must all be `want`; the plain loop vectorizes. */
static void check_run(sweep *sw, int m, const void *codes, int wide, size_t i, size_t len,
                      uint32_t want, uint64_t first)
{
    uint32_t bad = 0;
    if (wide) {
        const uint16_t *c = (const uint16_t *)codes + i;
        for (size_t j = 0; j < len; j++)
            bad |= c[j] ^ want;
    } else {
        const uint8_t *c = (const uint8_t *)codes + i;
        for (size_t j = 0; j < len; j++)
            bad |= c[j] ^ want;
    }
    if (bad) /* rescan to name the inputs */
        for (size_t j = i; j < i + len; j++)
            check_one(sw, m, codes, wide, j, (uint32_t)(first + j * sw->stride), want);
}

/* Chunk of consecutive bit patterns (every stride-th): the core converts them, then the walk
 * goes through them in runs. A run is a stretch of inputs strictly between two consecutive
 * breakpoints of the reference, where its result is one constant; breakpoints themselves, zeros,
 * Inf and NaN are checked one by one. */
static void check_chunk(sweep *sw, uint64_t chunk, float *x, uint8_t *codes)
{
    uint64_t begin = chunk << CHUNK_BITS, end = begin + (1ull << CHUNK_BITS);
    uint64_t first = (begin + sw->stride - 1) / sw->stride * sw->stride;
    if (first >= end)
        return;
    size_t n = (size_t)((end - 1 - first) / sw->stride + 1);
    for (size_t i = 0; i < n; i++)
        x[i] = test_f32_from_bits((uint32_t)(first + i * sw->stride));
    int negative = (begin >> 31) & 1; /* a chunk never straddles the sign bit */
    int wide = sw->grid->f->bits > 8;
    for (int m = 0; m < sw->nmodes; m++) {
        fpsim_status st = core_convert(codes, x, n, &sw->spec[m]);
        if (st != FPSIM_OK) {
            test_fail(&sw->tc[m], "fpsim_convert_f32 failed: %s", fpsim_last_error());
            continue;
        }
        const ref_segments *seg = sw->seg[m][negative];
        const uint32_t *bp = sw->bp32[m][negative];
        const uint32_t *special = sw->special[m][negative];
        int k = 0;
        size_t i = 0;
        while (i < n) {
            uint32_t b = (uint32_t)(first + i * sw->stride), mag = b & 0x7FFFFFFFu;
            if (mag == 0 || mag >= 0x7F800000u) { /* zero, Inf, NaN (payload may matter) */
                uint32_t want = mag == 0 ? special[0]
                              : mag == 0x7F800000u ? special[1]
                                                   : ref_nan_f32(sw->grid->f, sw->rules, b);
                check_one(sw, m, codes, wide, i, b, want);
                i++;
                continue;
            }
            while (k < seg->count && mag > bp[k])
                k++;
            if (k < seg->count && mag == bp[k]) {
                check_one(sw, m, codes, wide, i, b, seg->at[k]);
                i++;
                continue;
            }
            uint32_t limit = k < seg->count && bp[k] < 0x7F800000u ? bp[k] : 0x7F800000u;
            size_t len = (size_t)((limit - mag + sw->stride - 1) / sw->stride);
            if (len > n - i)
                len = n - i;
            check_run(sw, m, codes, wide, i, len, seg->below[k], first);
            i += len;
        }
        test_count(&sw->tc[m], n);
    }
}

static void *sweep_worker(void *arg)
{
    sweep *sw = arg;
    float *x = malloc(sizeof(float) << CHUNK_BITS);
    uint8_t *codes = malloc(sizeof(uint16_t) << CHUNK_BITS);
    for (;;) {
        uint64_t chunk = atomic_fetch_add(&sw->next_chunk, 1);
        if (chunk >= (1ull << (32 - CHUNK_BITS)))
            break;
        check_chunk(sw, chunk, x, codes);
    }
    free(x);
    free(codes);
    return NULL;
}

/* Sweep one case; returns the number of failing modes (0 if the core rejects the pair, which is
 * reported as a failure too: every listed pair is one formats-spec.md names). */
static int sweep_run(const sweep_case *c, uint64_t stride)
{
    sweep *sw = calloc(1, sizeof *sw);
    sw->c = c;
    sw->stride = stride;
    sw->rules = ref_rules_find(c->format, c->policy);
    const ref_format *rf = ref_format_find(c->format);
    int failed = 0;
    if (!sw->rules || !rf) {
        fprintf(stderr, "FAIL no reference rule for %s/%s\n", c->format, c->policy);
        free(sw);
        return 1;
    }
    sw->grid = malloc(sizeof *sw->grid);
    ref_grid_build(sw->grid, rf);
    const fpsim_format *fmt = fpsim_format_find(c->format);
    for (int m = 0; m < REF_MODE_COUNT; m++) {
        if (!(c->modes & (1u << m)))
            continue;
        int j = sw->nmodes;
        snprintf(sw->label[j], sizeof sw->label[j], "f32->%s %s %s%s", c->format, c->policy,
                 ref_mode_names[m], stride > 1 ? " (sampled)" : "");
        test_counter_reset(&sw->tc[j], sw->label[j]);
        fpsim_round mode;
        if (!fmt || fpsim_round_find(ref_mode_names[m], &mode) != FPSIM_OK ||
            fpsim_spec_make(&sw->spec[j], (fpsim_format_id)fmt->id, c->policy, mode, 0) != FPSIM_OK) {
            fprintf(stderr, "FAIL [%s] the core rejects it: %s\n", sw->label[j], fpsim_last_error());
            failed++;
            continue;
        }
        sw->mode[j] = (ref_mode)m;
        for (int neg = 0; neg < 2; neg++) {
            double s = neg ? -1.0 : 1.0;
            sw->seg[j][neg] = malloc(sizeof(ref_segments));
            ref_segments_build(sw->seg[j][neg], sw->grid, sw->rules, (ref_mode)m, neg);
            sw->bp32[j][neg] = breakpoints_f32(sw->seg[j][neg]);
            sw->special[j][neg][0] = ref_round(sw->grid, sw->rules, (ref_mode)m, s * 0.0);
            sw->special[j][neg][1] = ref_round(sw->grid, sw->rules, (ref_mode)m, s * INFINITY);
        }
        sw->nmodes++;
    }
    double t0 = test_seconds(), c0 = test_cpu_seconds();
    int nthreads = test_threads();
    pthread_t th[256];
    atomic_init(&sw->next_chunk, 0);
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, sweep_worker, sw);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    double dt = test_seconds() - t0, dc = test_cpu_seconds() - c0;
    for (int j = 0; j < sw->nmodes; j++) {
        failed += test_summary(&sw->tc[j]);
        for (int neg = 0; neg < 2; neg++) {
            free(sw->seg[j][neg]);
            free(sw->bp32[j][neg]);
        }
    }
    printf("     %s/%s: %d mode(s) in %.1f s wall, %.1f s cpu\n", c->format, c->policy, sw->nmodes,
           dt, dc);
    fflush(stdout);
    free(sw->grid);
    free(sw);
    return failed;
}

int main(int argc, char **argv)
{
    uint64_t stride = 1;
    int failed = 0, ran = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--stride") == 0 && i + 1 < argc) {
            stride = strtoull(argv[++i], NULL, 0);
            if (stride == 0)
                stride = 1;
            continue;
        }
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            char one[64];
            snprintf(one, sizeof one, "%s/%s", cases[c].format, cases[c].policy);
            if (strcmp(argv[i], "all") == 0 || strcmp(argv[i], cases[c].group) == 0 ||
                strcmp(argv[i], one) == 0) {
                failed += sweep_run(&cases[c], stride);
                ran++;
            }
        }
    }
    if (ran == 0) {
        fprintf(stderr, "usage: %s [--stride S] fp8|fp4fp6|e8m0|mldonly|b16|all|FORMAT/POLICY ...\n",
                argv[0]);
        return 2;
    }
    return failed ? 1 : 0;
}
