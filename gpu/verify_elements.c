/* verify_elements.c: element conversions, GPU kernel vs CPU emulator, byte for byte.
 *
 * The CPU side is the threaded array API of formats/ (fpsim_convert_*), the GPU side the kernels of
 * convert.cu (software core, and the hardware cvt where the spec allows it). Float32 inputs are
 * enumerated by bit pattern: the GPU generates them itself (fpsim_gpu_sweep_f32_dev), the CPU
 * converts the same patterns from memory. Specs are processed in groups so that each chunk of
 * input patterns is written once per group; rows are reported as each group finishes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "fpsim_gpu.h"
#include "fpsim_gpu_verify.h"
#include "fpsim_parallel.h"


#define SR_SEED 0x5EED5EED12345678ull
#define SR_STREAM 7u

typedef struct vcase {
    fpsim_spec spec;
    char name[64];
    int wide;  /* 16-bit codes */
    int hw;    /* the default path is not the core alone (hardware cvt or fast vectors) */
} vcase;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int same_spec(const fpsim_spec *a, const fpsim_spec *b)
{
    fpsim_spec x = *a, y = *b;
    x.policy = y.policy = 0;
    return !memcmp(&x, &y, sizeof x);
}

/* Every (format, policy, mode) that fpsim_spec_make accepts, identical specs listed once. */
static size_t collect_cases(vcase **out, const char *only)
{
    size_t cap = 512, n = 0;
    vcase *v = malloc(cap * sizeof *v);
    if (!v) return 0;
    for (int f = 0; f < FPSIM_FORMAT_COUNT; f++) {
        const fpsim_format *fmt = fpsim_format_get((fpsim_format_id)f);
        for (int p = 0; p < fpsim_policy_count(); p++) {
            const char *policy = fpsim_policy_name(p);
            for (int m = 0; m < FPSIM_ROUND_COUNT; m++) {
                fpsim_spec s;
                if (fpsim_spec_make(&s, (fpsim_format_id)f, policy, (fpsim_round)m, 0) != FPSIM_OK) continue;
                int dup = 0;
                for (size_t i = 0; i < n && !dup; i++) dup = same_spec(&v[i].spec, &s);
                if (dup) continue;
                vcase c;
                memset(&c, 0, sizeof c);
                c.spec = s;
                snprintf(c.name, sizeof c.name, "%s/%s/%s", fmt->name, policy, fpsim_round_name((fpsim_round)m));
                if (only && !strstr(c.name, only)) continue;
                c.wide = f == FPSIM_BF16 || f == FPSIM_F16;
                c.hw = fpsim_gpu_convert_has_fast_path(&s);
                if (n == cap) {
                    vcase *w = realloc(v, 2 * cap * sizeof *v);
                    if (!w) break;
                    v = w;
                    cap *= 2;
                }
                v[n++] = c;
            }
        }
    }
    fpsim_clear_error();
    *out = v;
    return n;
}

/* Mismatching codes between cpu and gpu (n codes, 1 or 2 bytes); *first = index of the first.
 * Compared in up to CMP_BLOCKS blocks on every thread (fpsim_parallel_for): the exhaustive
 * sweep compares 2^32 codes per spec, which one thread could not keep up with. */
#define CMP_BLOCKS 256

typedef struct cmp_ctx {
    const uint8_t *cpu, *gpu;
    size_t n, block; /* codes, codes per block */
    int wide;
    uint64_t bad[CMP_BLOCKS];  /* per block */
    size_t first[CMP_BLOCKS];  /* per block: first mismatching index */
} cmp_ctx;

static void compare_blocks(void *ctx, size_t b0, size_t b1)
{
    cmp_ctx *c = ctx;
    const size_t w = c->wide ? 2 : 1;
    for (size_t b = b0; b < b1; b++) {
        size_t i0 = b * c->block, i1 = i0 + c->block < c->n ? i0 + c->block : c->n;
        c->bad[b] = 0;
        if (!memcmp(c->cpu + i0 * w, c->gpu + i0 * w, (i1 - i0) * w)) continue;
        for (size_t i = i0; i < i1; i++) {
            uint32_t x = c->wide ? ((const uint16_t *)c->cpu)[i] : c->cpu[i];
            uint32_t y = c->wide ? ((const uint16_t *)c->gpu)[i] : c->gpu[i];
            if (x == y) continue;
            if (!c->bad[b]) c->first[b] = i;
            c->bad[b]++;
        }
    }
}

static uint64_t compare_codes(const void *cpu, const void *gpu, size_t n, int wide, size_t *first, int threads)
{
    static const size_t min_block = (size_t)1 << 16;
    cmp_ctx c;
    c.cpu = cpu;
    c.gpu = gpu;
    c.n = n;
    c.wide = wide;
    c.block = (n + CMP_BLOCKS - 1) / CMP_BLOCKS;
    if (c.block < min_block) c.block = min_block;
    size_t nb = (n + c.block - 1) / c.block;
    fpsim_parallel_for(nb, 1, compare_blocks, &c, threads);
    uint64_t total = 0;
    for (size_t b = 0; b < nb; b++) {
        if (c.bad[b] && !total) *first = c.first[b];
        total += c.bad[b];
    }
    return total;
}

typedef struct range {
    uint64_t first;
    size_t n;
} range;

/* Full: 2^32 in chunks of `chunk` consecutive bit patterns. */
static size_t make_ranges(range **out, size_t chunk)
{
    size_t count = (size_t)((1ull << 32) / chunk);
    range *r = malloc(count * sizeof *r);
    if (!r) return 0;
    for (size_t j = 0; j < count; j++) {
        r[j].first = (uint64_t)j * chunk;
        r[j].n = chunk;
    }
    *out = r;
    return count;
}

/* Sample of 2^24 float32 patterns: for each of the 512 sign/exponent fields, the 64 lowest and
 * 64 highest mantissas, every mantissa with only its top 9 bits set (all rounding boundaries of
 * formats with up to 8 mantissa bits, ties included), and random mantissas for the rest. */
static void make_sample(uint32_t *x, size_t n)
{
    size_t per = n / 512, k = 0;
    uint64_t z = 0x243F6A8885A308D3ull;
    for (uint32_t se = 0; se < 512; se++) {
        uint32_t hi = se << 23;
        for (size_t j = 0; j < per; j++) {
            uint32_t m;
            if (j < 64)
                m = (uint32_t)j;
            else if (j < 128)
                m = 0x7FFFFFu - (uint32_t)(j - 64);
            else if (j < 128 + 512)
                m = (uint32_t)(j - 128) << 14;
            else if (j < 128 + 1024)
                m = ((uint32_t)(j - 640) << 14) + 1u; /* one above each boundary */
            else if (j < 128 + 1536)
                m = ((uint32_t)(j - 1152) << 14) - 1u; /* one below */
            else {
                z = z * 6364136223846793005ull + 1442695040888963407ull;
                m = (uint32_t)(z >> 41);
            }
            x[k++] = hi | (m & 0x7FFFFFu);
        }
    }
    (void)k;
}

/* The CPU side of one float32 row, block by block on every thread: each block's inputs (the
 * sample, or the consecutive bit patterns generated in place), the emulator's codes and the
 * GPU's codes meet in cache, so the exhaustive sweep reads only the GPU's codes from memory
 * (one byte per input instead of eight: the device host's memory bandwidth, not its cores,
 * limited the first version to about 1.3 G inputs/s). */
#define CHECK_BLOCK 16384

typedef struct check_ctx {
    const fpsim_spec *spec;
    const uint32_t *sample; /* sample inputs, or NULL: patterns first + i */
    uint64_t first;
    size_t n;
    int wide;
    const void *gpu;        /* the GPU's codes, n of them */
    uint64_t *bad;          /* per block: mismatches */
    size_t *at;             /* per block: index of the first */
    fpsim_status *st;       /* per block */
} check_ctx;

static void check_blocks(void *ctx, size_t b0, size_t b1)
{
    const check_ctx *c = ctx;
    uint32_t xb[CHECK_BLOCK];
    uint16_t cb[CHECK_BLOCK];
    const size_t w = c->wide ? 2 : 1;
    for (size_t b = b0; b < b1; b++) {
        const size_t i0 = b * CHECK_BLOCK, m = c->n - i0 < CHECK_BLOCK ? c->n - i0 : CHECK_BLOCK;
        const uint32_t *xs = xb;
        if (c->sample)
            xs = c->sample + i0;
        else
            for (size_t j = 0; j < m; j++) xb[j] = (uint32_t)(c->first + i0 + j);
        c->bad[b] = 0;
        c->st[b] = fpsim_convert_f32(cb, (const float *)xs, m, c->spec, SR_SEED, SR_STREAM, c->first + i0, 1);
        if (c->st[b] != FPSIM_OK || !memcmp(cb, (const uint8_t *)c->gpu + i0 * w, m * w)) continue;
        for (size_t j = 0; j < m; j++) {
            uint32_t x = c->wide ? cb[j] : ((const uint8_t *)cb)[j];
            uint32_t y = c->wide ? ((const uint16_t *)c->gpu)[i0 + j] : ((const uint8_t *)c->gpu)[i0 + j];
            if (x == y) continue;
            if (!c->bad[b]) c->at[b] = i0 + j;
            c->bad[b]++;
        }
    }
}

/* sample_dev: the sample array on the device (sample mode: one range of n elements whose
 * inputs are x, not consecutive patterns); NULL in full mode (the GPU generates the patterns). */
static fpsim_status run_f32_group(vcase *cases, size_t ncase, const range *rg, size_t nrange, const float *sample_dev,
                                  int threads, const uint32_t *x, void *host_codes, void *dev_codes,
                                  fpsim_gpu_check *rows)
{
    fpsim_status st = FPSIM_OK;
    size_t maxn = 0;
    for (size_t r = 0; r < nrange; r++) maxn = rg[r].n > maxn ? rg[r].n : maxn;
    const size_t nb_max = (maxn + CHECK_BLOCK - 1) / CHECK_BLOCK;
    uint64_t *bad = malloc(nb_max * sizeof *bad);
    size_t *at = malloc(nb_max * sizeof *at);
    fpsim_status *bst = malloc(nb_max * sizeof *bst);
    if (!bad || !at || !bst) st = fpsim_fail(FPSIM_ENOMEM, "verify: no memory for the block table");
    for (size_t r = 0; r < nrange && st == FPSIM_OK; r++) {
        const size_t nb = (rg[r].n + CHECK_BLOCK - 1) / CHECK_BLOCK;
        for (size_t c = 0; c < ncase && st == FPSIM_OK; c++) {
            vcase *vc = &cases[c];
            double t0 = now_s();
            size_t bytes = rg[r].n * (vc->wide ? 2 : 1);
            for (int pass = 0; pass < 1 + vc->hw && st == FPSIM_OK; pass++) {
                fpsim_gpu_check *row = &rows[2 * c + pass];
                unsigned flags = pass ? 0u : FPSIM_GPU_SOFTWARE_ONLY;
                if (sample_dev)
                    st = fpsim_gpu_convert_f32_dev(dev_codes, sample_dev, rg[r].n, &vc->spec, SR_SEED, SR_STREAM,
                                                   rg[r].first, flags, NULL);
                else
                    st = fpsim_gpu_sweep_f32_dev(dev_codes, rg[r].first, rg[r].n, &vc->spec, SR_SEED, SR_STREAM, flags,
                                                 NULL);
                if (st == FPSIM_OK) st = fpsim_gpu_copy(host_codes, dev_codes, bytes, 1);
                if (st != FPSIM_OK) break;
                check_ctx cc = {&vc->spec, sample_dev ? x : NULL, rg[r].first, rg[r].n, vc->wide, host_codes, bad, at, bst};
                fpsim_parallel_for(nb, 1, check_blocks, &cc, threads);
                uint64_t nbad = 0;
                size_t bad_at = 0;
                for (size_t b = 0; b < nb; b++) {
                    if (bst[b] != FPSIM_OK) st = bst[b];
                    if (bad[b] && !nbad) bad_at = at[b];
                    nbad += bad[b];
                }
                if (st != FPSIM_OK) break;
                row->inputs += rg[r].n;
                if (nbad && !row->example[0]) {
                    uint32_t in = sample_dev ? x[bad_at] : (uint32_t)(rg[r].first + bad_at);
                    fpsim_spec cpu_spec = vc->spec;
                    uint32_t rb = cpu_spec.round == FPSIM_SR ? fpsim_sr_word(SR_SEED, SR_STREAM, rg[r].first + bad_at) : 0;
                    uint32_t cpu = fpsim_round_f32(in, &cpu_spec, rb);
                    uint32_t g = vc->wide ? ((const uint16_t *)host_codes)[bad_at] : ((const uint8_t *)host_codes)[bad_at];
                    snprintf(row->example, sizeof row->example, "f32 0x%08x: cpu 0x%x gpu 0x%x", in, cpu, g);
                }
                row->mismatches += nbad;
            }
            rows[2 * c].seconds += now_s() - t0;
        }
    }
    free(bad);
    free(at);
    free(bst);
    return st;
}

/* All 2^16 bf16 or f16 patterns, and decode of every code. */
static fpsim_status run_small(const vcase *vc, fpsim_gpu_check *row, int threads, int what)
{
    size_t n = what == 2 ? (vc->wide ? 65536u : 256u) : 65536u;
    uint16_t *in = malloc(65536 * sizeof *in);
    uint8_t *cpu = malloc(65536 * 4), *gpu = malloc(65536 * 4);
    void *d_in = NULL, *d_out = NULL;
    fpsim_status st = in && cpu && gpu ? FPSIM_OK : fpsim_fail(FPSIM_ENOMEM, "verify: no memory");
    if (st == FPSIM_OK) st = fpsim_gpu_alloc(&d_in, 65536 * 2);
    if (st == FPSIM_OK) st = fpsim_gpu_alloc(&d_out, 65536 * 4);
    double t0 = now_s();
    if (st == FPSIM_OK) {
        for (size_t i = 0; i < 65536; i++) in[i] = (uint16_t)i;
        if (!vc->wide && what == 2)
            for (size_t i = 0; i < 256; i++) ((uint8_t *)in)[i] = (uint8_t)i;
        st = fpsim_gpu_copy(d_in, in, 65536 * 2, 0);
    }
    if (st == FPSIM_OK && what < 2) {
        if (what == 0) {
            st = fpsim_convert_bf16(cpu, in, n, &vc->spec, SR_SEED, SR_STREAM, 0, threads);
            if (st == FPSIM_OK) st = fpsim_gpu_convert_bf16_dev(d_out, d_in, n, &vc->spec, SR_SEED, SR_STREAM, 0, 0, NULL);
        } else {
            st = fpsim_convert_f16(cpu, in, n, &vc->spec, SR_SEED, SR_STREAM, 0, threads);
            if (st == FPSIM_OK) st = fpsim_gpu_convert_f16_dev(d_out, d_in, n, &vc->spec, SR_SEED, SR_STREAM, 0, 0, NULL);
        }
        if (st == FPSIM_OK) st = fpsim_gpu_copy(gpu, d_out, n * (vc->wide ? 2 : 1), 1);
        size_t at = 0;
        uint64_t bad = st == FPSIM_OK ? compare_codes(cpu, gpu, n, vc->wide, &at, 1) : 0;
        if (bad && !row->example[0])
            snprintf(row->example, sizeof row->example, "%s 0x%04zx: cpu 0x%x gpu 0x%x", what ? "f16" : "bf16", at,
                     vc->wide ? ((uint16_t *)cpu)[at] : cpu[at], vc->wide ? ((uint16_t *)gpu)[at] : gpu[at]);
        row->mismatches += bad;
    } else if (st == FPSIM_OK) {
        /* Decode: the CPU scalar core over every code, the GPU kernel over the same codes. */
        uint32_t *yc = (uint32_t *)cpu;
        for (size_t i = 0; i < n; i++)
            yc[i] = fpsim_decode_f32(vc->wide ? in[i] : ((uint8_t *)in)[i], &vc->spec);
        st = fpsim_gpu_decode_f32_dev(d_out, d_in, n, &vc->spec, NULL);
        if (st == FPSIM_OK) st = fpsim_gpu_copy(gpu, d_out, n * 4, 1);
        if (st == FPSIM_OK) {
            const uint32_t *yg = (const uint32_t *)gpu;
            for (size_t i = 0; i < n; i++) {
                if (yc[i] == yg[i]) continue;
                if (!row->example[0])
                    snprintf(row->example, sizeof row->example, "decode code 0x%zx: cpu 0x%08x gpu 0x%08x", i, yc[i],
                             yg[i]);
                row->mismatches++;
            }
        }
        /* and to float64 */
        uint64_t *gc = malloc(n * 8), *gg = malloc(n * 8);
        void *d64 = NULL;
        if (st == FPSIM_OK && gc && gg) st = fpsim_gpu_alloc(&d64, n * 8);
        if (st == FPSIM_OK && gc && gg) {
            for (size_t i = 0; i < n; i++) gc[i] = fpsim_decode_f64(vc->wide ? in[i] : ((uint8_t *)in)[i], &vc->spec);
            st = fpsim_gpu_decode_f64_dev(d64, d_in, n, &vc->spec, NULL);
            if (st == FPSIM_OK) st = fpsim_gpu_copy(gg, d64, n * 8, 1);
            for (size_t i = 0; st == FPSIM_OK && i < n; i++) {
                if (gc[i] == gg[i]) continue;
                if (!row->example[0])
                    snprintf(row->example, sizeof row->example, "decode f64 code 0x%zx: cpu 0x%016llx gpu 0x%016llx",
                             i, (unsigned long long)gc[i], (unsigned long long)gg[i]);
                row->mismatches++;
            }
        }
        fpsim_gpu_free(d64);
        free(gc);
        free(gg);
    }
    row->inputs += n;
    row->seconds += now_s() - t0;
    fpsim_gpu_free(d_in);
    fpsim_gpu_free(d_out);
    free(in);
    free(cpu);
    free(gpu);
    return st;
}

fpsim_status fpsim_gpu_verify_elements(const fpsim_gpu_verify_opts *o, fpsim_gpu_check_fn fn, void *ctx,
                                       uint64_t *total_mismatches)
{
    fpsim_status st = fpsim_gpu_require();
    if (st != FPSIM_OK) return st;
    int threads = o->threads > 0 ? o->threads : fpsim_threads_default();
    *total_mismatches = 0;
    vcase *cases = NULL;
    size_t ncase = collect_cases(&cases, o->only);
    if (!cases) return fpsim_fail(FPSIM_ENOMEM, "verify: no memory for the case list");
    const size_t chunk = (size_t)1 << 27, nsample = (size_t)1 << 24;
    range *rg = NULL, one = {0, nsample};
    size_t nrange = o->full ? make_ranges(&rg, chunk) : 1;
    if (!o->full) rg = malloc(sizeof *rg), rg ? (void)(*rg = one) : (void)0;
    size_t maxn = o->full ? chunk : nsample;
    float *sample_dev = NULL;
    uint32_t *x = NULL;
    void *host_codes = NULL, *dev_codes = NULL;
    fpsim_gpu_check *rows = calloc(2 * (ncase ? ncase : 1), sizeof *rows);
    st = rg && rows ? FPSIM_OK : fpsim_fail(FPSIM_ENOMEM, "verify: no memory");
    if (st == FPSIM_OK && !o->full) st = fpsim_gpu_host_alloc((void **)&x, nsample * 4);
    if (st == FPSIM_OK) st = fpsim_gpu_host_alloc(&host_codes, maxn * 2);
    if (st == FPSIM_OK) st = fpsim_gpu_alloc(&dev_codes, maxn * 2);
    if (st == FPSIM_OK && !o->full) {
        make_sample(x, nsample);
        st = fpsim_gpu_alloc((void **)&sample_dev, nsample * 4);
        if (st == FPSIM_OK) st = fpsim_gpu_copy(sample_dev, x, nsample * 4, 0);
    }
    const size_t group = 16;
    for (size_t g = 0; g < ncase && st == FPSIM_OK; g += group) {
        size_t k = ncase - g < group ? ncase - g : group;
        for (size_t c = 0; c < k; c++) {
            snprintf(rows[2 * (g + c)].name, sizeof rows[0].name, "f32->%s%s", cases[g + c].name,
                     o->full ? "" : " (sample)");
            snprintf(rows[2 * (g + c) + 1].name, sizeof rows[0].name, "f32->%s [fast path]%s", cases[g + c].name,
                     o->full ? "" : " (sample)");
        }
        st = run_f32_group(cases + g, k, rg, nrange, sample_dev, threads, x, host_codes, dev_codes,
                           rows + 2 * g);
        for (size_t c = 0; c < k && st == FPSIM_OK; c++) {
            const vcase *vc = &cases[g + c];
            for (int pass = 0; pass < 1 + vc->hw; pass++) {
                fpsim_gpu_check *row = &rows[2 * (g + c) + pass];
                *total_mismatches += row->mismatches;
                fn(row, ctx);
            }
            for (int what = 0; what < 3 && st == FPSIM_OK; what++) {
                fpsim_gpu_check row;
                memset(&row, 0, sizeof row);
                snprintf(row.name, sizeof row.name, "%s->%s", what == 0 ? "bf16" : what == 1 ? "f16" : "decode",
                         vc->name);
                if (what == 2 && vc->spec.round != FPSIM_RNE) continue; /* decode does not depend on the mode */
                st = run_small(vc, &row, threads, what);
                if (st != FPSIM_OK) break;
                *total_mismatches += row.mismatches;
                fn(&row, ctx);
            }
        }
    }
    fpsim_gpu_free(dev_codes);
    fpsim_gpu_free(sample_dev);
    fpsim_gpu_host_free(host_codes);
    fpsim_gpu_host_free(x);
    free(rows);
    free(rg);
    free(cases);
    return st;
}
