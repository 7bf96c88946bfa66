/* verify_formats.c: `fpsim verify [--device cpu|gpu]`: the element formats and block quantizers
 * checked against something other than themselves.
 *
 * --device cpu (default): a quick self-check of the CPU emulators: the worked examples of
 *   formats-spec.md §11 (values measured on the H200, torch 2.11, ml_dtypes 0.6 and the CUDA 13
 *   headers: independent of this code), the threaded array path against the scalar core on
 *   special and random inputs for every format x policy x mode, and the block-level worked
 *   examples (§11 #16, #19, #22-24).
 * --device gpu: every GPU kernel against the CPU emulator, byte for byte (gpu/verify_*.c): element
 *   conversions over float32 inputs (a 2^24 sample covering every exponent, or all 2^32 with
 *   --full), all bf16/f16 inputs, decode of every code; the block quantizers on random, odd-shaped
 *   and adversarial tensors. Either way a table (case, inputs, mismatches) and exit 1 on any
 *   mismatch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_block.h"
#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "fpsim_parallel.h"
#ifdef FPSIM_HAVE_CUDA
#include "fpsim_gpu.h"
#include "fpsim_gpu_verify.h"
#endif

static const char *const CMD = "verify";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim verify [--device cpu|gpu] [--full] [--large] [--only TEXT] [--threads N]\n"
            "                    [--no-elements] [--no-blocks]\n\n"
            "Self-checks of the element formats and block quantizers; prints a table (case, inputs,\n"
            "mismatches) and exits 1 on any mismatch. `fpsim verify gemm` checks the GEMM models.\n\n"
            "  --device cpu   (default) worked examples of formats-spec.md §11, the threaded array path\n"
            "                 against the scalar core, block-level worked examples\n"
            "  --device gpu   every CUDA kernel against the CPU emulator, byte for byte\n"
            "  --full         gpu only: every float32 input (2^32) instead of a 2^24 sample\n"
            "  --large        gpu only: block quantizers also on 4096 x 8192 tensors\n"
            "  --only TEXT    only the cases whose name contains TEXT: element cases are named\n"
            "                 FORMAT/POLICY/MODE (e4m3/nv/rne; `fpsim formats` lists formats and\n"
            "                 policies), block cases by scheme text (mxfp8-e4m3:rule=floor); a row\n"
            "                 whose name contains TEXT runs whole. E.g. --only e4m3/nv, --only mxfp8.\n"
            "                 A TEXT that matches no case is an error (exit 2)\n"
            "  --threads N    CPU threads for the emulator side (default: all cores)\n"
            "  --no-elements, --no-blocks   skip the element formats or the block quantizers (not both)\n");
}

typedef struct table {
    uint64_t rows, failed, skipped, mismatches;
} table;

static void table_header(void)
{
    printf("%-56s %14s %11s %8s  %s\n", "case", "inputs", "mismatches", "seconds", "first mismatch / note");
}

static void table_row(table *t, const char *name, uint64_t inputs, uint64_t mism, double sec, const char *note,
                      int skipped)
{
    char m[24];
    if (skipped)
        snprintf(m, sizeof m, "skipped");
    else
        snprintf(m, sizeof m, "%llu", (unsigned long long)mism);
    printf("%-56s %14llu %11s %8.2f  %s\n", name, (unsigned long long)inputs, m, sec, note ? note : "");
    fflush(stdout);
    t->rows++;
    t->skipped += skipped != 0;
    t->failed += !skipped && mism;
    t->mismatches += skipped ? 0 : mism;
}

/* ---- CPU self-check --------------------------------------------------------------------- */

typedef struct worked {
    const char *fmt, *policy;
    uint32_t in;   /* float32 bits (or bf16 bits when from_bf16) */
    uint32_t want; /* code */
    int from_bf16;
} worked;

/* formats-spec.md §11 #1-9, #11-15, #26 and §8 ties: measured values (PTX on the H200, torch
 * 2.11, ml_dtypes 0.6, CUDA 13 host headers). */
static const worked worked_examples[] = {
    {"e4m3", "nv", 0x43E80000u, 0x7E, 0},        {"e4m3", "torch", 0x43E80000u, 0x7E, 0},
    {"e4m3", "ml_dtypes", 0x43E80000u, 0x7E, 0}, {"e4m3", "nv", 0x43E80001u, 0x7E, 0},
    {"e4m3", "torch", 0x43E80001u, 0x7F, 0},     {"e4m3", "ml_dtypes", 0x43E80001u, 0x7F, 0},
    {"e4m3", "nv", 0x7F800000u, 0x7E, 0},        {"e4m3", "nv", 0xFF800000u, 0xFE, 0},
    {"e4m3", "nv-nosat", 0x7F800000u, 0x7F, 0},  {"e4m3", "nv-nosat", 0xFF800000u, 0xFF, 0},
    {"e4m3", "torch", 0xFF800000u, 0xFF, 0},     {"e4m3", "ml_dtypes-sat", 0x7F800000u, 0x7F, 0},
    {"e4m3", "nv", 0xFFC00000u, 0x7F, 0},        {"e4m3", "torch", 0xFFC00000u, 0xFF, 0},
    {"e4m3", "ml_dtypes", 0xFFC00000u, 0xFF, 0}, {"e4m3", "nv", 0x3A800000u, 0x00, 0},
    {"e4m3", "nv", 0x3A800001u, 0x01, 0},        {"e4m3", "nv", 0xAEDBE6FFu, 0x80, 0},
    {"e5m2", "nv", 0xAEDBE6FFu, 0x80, 0},        {"e5m2", "nv", 0x47700000u, 0x7B, 0},
    {"e5m2", "nv", 0x476FFFFFu, 0x7B, 0},        {"e5m2", "nv-nosat", 0x47700000u, 0x7C, 0},
    {"e5m2", "nv-nosat", 0x476FFFFFu, 0x7B, 0},  {"e5m2", "nv", 0x7FC00000u, 0x7F, 0},
    {"e5m2", "torch", 0x7FC00000u, 0x7F, 0},     {"e5m2", "ml_dtypes", 0x7FC00000u, 0x7E, 0},
    {"e4m3", "nv", 0x3F880001u, 0x39, 0},        {"e4m3", "nv", 0x3F88u, 0x38, 1},
    {"e2m1", "nv", 0x3E800000u, 0x0, 0},         {"e2m1", "nv", 0x3F400000u, 0x2, 0},
    {"e2m1", "nv", 0x3FA00000u, 0x2, 0},         {"e2m1", "nv", 0x3FE00000u, 0x4, 0},
    {"e2m1", "nv", 0x40200000u, 0x4, 0},         {"e2m1", "nv", 0x40600000u, 0x6, 0},
    {"e2m1", "nv", 0x40A00000u, 0x6, 0},         {"e2m1", "nv", 0x40E00000u, 0x7, 0},
    {"e2m1", "nv", 0xBDCCCCCDu, 0x8, 0},         {"e2m1", "nv", 0x7FC00000u, 0x7, 0},
    {"e2m1", "nv", 0xFFC00000u, 0x7, 0},         {"e2m1", "ml_dtypes", 0x7FC00000u, 0x8, 0},
    {"e2m1", "ml_dtypes", 0xFFC00000u, 0x0, 0},  {"e2m1", "torchao", 0x7FC00000u, 0x3, 0},
    {"e2m1", "torchao", 0xFFC00000u, 0xB, 0},    {"e2m1", "te", 0x7FC00000u, 0x0, 0},
    {"e2m1", "te", 0xFFC00000u, 0x0, 0},         {"e8m0", "torch", 0x3FC00000u, 0x80, 0},
    {"e8m0", "torch", 0x3FBFFFFFu, 0x7F, 0},     {"e8m0", "torch", 0xBFC00000u, 0x80, 0},
    {"e8m0", "torch", 0x00000000u, 0x00, 0},     {"e8m0", "ml_dtypes", 0x00000000u, 0xFF, 0},
    {"e8m0", "ml_dtypes", 0xBFC00000u, 0xFF, 0}, {"e8m0", "ml_dtypes-sat", 0x00000000u, 0x00, 0},
    {"e8m0", "ml_dtypes-sat", 0xBFC00000u, 0x00, 0}, {"e8m0", "ptx-rp", 0x00400000u, 0x00, 0},
    {"e8m0", "ptx-rp", 0x00400001u, 0x01, 0},    {"e8m0", "ptx-rp", 0x7F800000u, 0xFF, 0},
    {"e8m0", "ptx-rp", 0x7F000001u, 0xFF, 0},    {"e8m0", "ptx-rp-sat", 0x7F800000u, 0xFE, 0},
    {"e8m0", "ptx-rp-sat", 0x7F000001u, 0xFE, 0}, {"bf16", "nv", 0x7FC00000u, 0x7FFF, 0},
    {"bf16", "ml_dtypes", 0x7FC00000u, 0x7FC0, 0}, {"bf16", "ml_dtypes", 0xFFC00000u, 0xFFC0, 0},
    {"bf16", "nv", 0x3F808000u, 0x3F80, 0},      {"bf16", "nv", 0x3F818000u, 0x3F82, 0},
    {"bf16", "nv", 0x807FFFFFu, 0x8080, 0},      {"bf16", "nv", 0x7F7FFFFFu, 0x7F80, 0},
};

/* --only: a case runs when TEXT is in its own name or in the name of its row (which then runs
 * whole), as on the GPU (gpu/verify_elements.c, gpu/verify_blocks.c). */
static int case_selected(const char *only, const char *row_name, const char *case_name)
{
    return !only || strstr(row_name, only) || strstr(case_name, only);
}

static const char *const worked_row_name = "worked examples, element formats (§11)";

/* A worked example's case name, FORMAT/POLICY/MODE as the GPU names its element cases; *s is
 * its spec. Returns 0 if the spec cannot be made (the example then fails, named FORMAT/POLICY). */
static int worked_case(const worked *w, fpsim_spec *s, char *name, size_t cap)
{
    fpsim_format_id f;
    const int ok = fpsim_format_lookup(w->fmt, &f) == FPSIM_OK &&
                   fpsim_spec_make(s, f, w->policy, FPSIM_ROUND_DEFAULT, 0) == FPSIM_OK;
    if (ok)
        snprintf(name, cap, "%s/%s/%s", w->fmt, w->policy, fpsim_round_name(s->round));
    else
        snprintf(name, cap, "%s/%s", w->fmt, w->policy);
    fpsim_clear_error();
    return ok;
}

static size_t worked_selected_count(const char *only)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof worked_examples / sizeof worked_examples[0]; i++) {
        fpsim_spec s;
        char name[96];
        worked_case(&worked_examples[i], &s, name, sizeof name);
        n += case_selected(only, worked_row_name, name);
    }
    return n;
}

static void check_worked(table *t, const char *only)
{
    double t0 = now_s();
    uint64_t bad = 0, n = 0;
    char note[160] = "";
    for (size_t i = 0; i < sizeof worked_examples / sizeof worked_examples[0]; i++) {
        const worked *w = &worked_examples[i];
        fpsim_spec s;
        char name[96];
        const int made = worked_case(w, &s, name, sizeof name);
        if (!case_selected(only, worked_row_name, name))
            continue;
        uint32_t got = 0xFFFFFFFFu;
        if (made) {
            uint32_t bits = w->from_bf16 ? fpsim_bf16_to_f32_bits(w->in) : w->in;
            got = fpsim_round_f32(bits, &s, 0);
        }
        n++;
        if (got != w->want) {
            if (!bad)
                snprintf(note, sizeof note, "%s/%s 0x%08x: want 0x%x got 0x%x", w->fmt, w->policy, w->in, w->want, got);
            bad++;
        }
    }
    fpsim_clear_error();
    table_row(t, worked_row_name, n, bad, now_s() - t0, note, 0);
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void array_row_name(char *name, size_t cap, const fpsim_format *fmt)
{
    snprintf(name, cap, "array vs scalar core: %s (all policies, modes)", fmt->name);
}

/* Whether format f, policy p, mode m is a spec (fpsim_spec_make accepts it) and selected by
 * --only through its case name FORMAT/POLICY/MODE or its row name. */
static int array_case(int f, int p, int m, fpsim_spec *s, const char *only)
{
    const fpsim_format *fmt = fpsim_format_get((fpsim_format_id)f);
    const int made = fpsim_spec_make(s, (fpsim_format_id)f, fpsim_policy_name(p), (fpsim_round)m, 0) == FPSIM_OK;
    fpsim_clear_error();
    if (!made)
        return 0;
    char row[96], name[96];
    array_row_name(row, sizeof row, fmt);
    snprintf(name, sizeof name, "%s/%s/%s", fmt->name, fpsim_policy_name(p), fpsim_round_name((fpsim_round)m));
    return case_selected(only, row, name);
}

static size_t array_selected_count(const char *only, int f)
{
    size_t n = 0;
    for (int p = 0; p < fpsim_policy_count(); p++)
        for (int m = 0; m < FPSIM_ROUND_COUNT; m++) {
            fpsim_spec s;
            n += array_case(f, p, m, &s, only);
        }
    return n;
}

/* Array path (threaded) vs scalar core, per format, over every policy and mode. */
static void check_array_vs_scalar(table *t, int threads, const char *only)
{
    enum { NSPECIAL = 40, NRAND = 1 << 16 };
    static const uint32_t specials[NSPECIAL] = {
        0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu,
        0x7FBFFFFFu, 0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00800000u, 0x80800000u, 0x7F7FFFFFu,
        0xFF7FFFFFu, 0x3F800000u, 0xBF800000u, 0x43E00000u, 0x43E80000u, 0x43E80001u, 0x47600000u, 0x47700000u,
        0x476FFFFFu, 0x40C00000u, 0x40E00000u, 0x3A800000u, 0x3A800001u, 0x37800000u, 0x3F808000u, 0x3F818000u,
        0x3FC00000u, 0x3FBFFFFFu, 0x00400000u, 0x00400001u, 0x7F000001u, 0x3E800000u, 0x3F400000u, 0x41E00000u};
    const size_t n = NSPECIAL + NRAND;
    uint32_t *x = malloc(n * 4);
    uint8_t *a = malloc(n * 2), *b = malloc(n * 2);
    float *da = malloc(65536 * 4);
    uint16_t *codes = malloc(65536 * 2);
    if (!x || !a || !b || !da || !codes) {
        free(x), free(a), free(b), free(da), free(codes);
        table_row(t, "array path vs scalar core", 0, 1, 0, "out of memory", 0);
        return;
    }
    for (size_t i = 0; i < NSPECIAL; i++) x[i] = specials[i];
    for (size_t i = 0; i < NRAND; i++) x[NSPECIAL + i] = (uint32_t)mix64(i);
    const uint64_t seed = 42;
    const uint32_t stream = 3;
    for (int f = 0; f < FPSIM_FORMAT_COUNT; f++) {
        const fpsim_format *fmt = fpsim_format_get((fpsim_format_id)f);
        char name[96];
        array_row_name(name, sizeof name, fmt);
        if (array_selected_count(only, f) == 0) continue;
        if (only && !strstr(name, only))
            snprintf(name, sizeof name, "array vs scalar core: %s (cases with '%.20s')", fmt->name, only);
        uint64_t inputs = 0, bad = 0;
        char note[160] = "";
        double t0 = now_s();
        int wide = fpsim_format_code_bytes((fpsim_format_id)f) == 2;
        for (int p = 0; p < fpsim_policy_count(); p++) {
            for (int m = 0; m < FPSIM_ROUND_COUNT; m++) {
                fpsim_spec s;
                if (!array_case(f, p, m, &s, only)) continue;
                if (fpsim_convert_f32(a, (const float *)x, n, &s, seed, stream, 1000, threads) != FPSIM_OK) {
                    bad++;
                    continue;
                }
                for (size_t i = 0; i < n; i++) {
                    uint32_t r = s.round == FPSIM_SR ? fpsim_sr_word(seed, stream, 1000 + i) : 0;
                    uint32_t want = fpsim_round_f32(x[i], &s, r);
                    uint32_t got = wide ? ((uint16_t *)a)[i] : a[i];
                    if (got != want) {
                        if (!bad)
                            snprintf(note, sizeof note, "%s/%s 0x%08x: array 0x%x scalar 0x%x", fmt->name,
                                     fpsim_policy_name(p), x[i], got, want);
                        bad++;
                    }
                }
                inputs += n;
                if (m == FPSIM_RNE) { /* decode of every code: array vs scalar */
                    size_t nc = wide ? 65536 : 256;
                    for (size_t i = 0; i < nc; i++) {
                        if (wide)
                            codes[i] = (uint16_t)i;
                        else
                            ((uint8_t *)codes)[i] = (uint8_t)i;
                    }
                    if (fpsim_decode_array_f32(da, codes, nc, &s, threads) != FPSIM_OK) {
                        bad++;
                        continue;
                    }
                    for (size_t i = 0; i < nc; i++) {
                        uint32_t want = fpsim_decode_f32((uint32_t)i, &s), got;
                        memcpy(&got, &da[i], 4);
                        if (got != want) {
                            if (!bad)
                                snprintf(note, sizeof note, "decode %s/%s 0x%zx: array 0x%08x scalar 0x%08x",
                                         fmt->name, fpsim_policy_name(p), i, got, want);
                            bad++;
                        }
                    }
                    inputs += nc;
                }
            }
        }
        fpsim_clear_error();
        table_row(t, name, inputs, bad, now_s() - t0, note, 0);
    }
    free(x), free(a), free(b), free(da), free(codes);
}

static const char *const block_row_name = "worked examples, block quantizers (§11 #16,19,22-24)";

/* The schemes check_block_examples runs: --only selects the row by one of these or its name. */
static const char *const block_example_schemes[] = {
    "mxfp8-e4m3:rule=floor",    "mxfp8-e4m3:rule=rceil",         "nvfp4",
    "fp8-block:scale=te-pow2",  "fp8-block:scale=te-fp32",       "fp8-block:scale=deepgemm-fp32",
    "fp8-block:scale=deepgemm-ue8m0",
};

static int block_examples_selected(const char *only)
{
    if (!only || strstr(block_row_name, only))
        return 1;
    for (size_t i = 0; i < sizeof block_example_schemes / sizeof block_example_schemes[0]; i++)
        if (strstr(block_example_schemes[i], only))
            return 1;
    return 0;
}

/* Block-level worked examples (formats-spec.md §11 #16, #19, #22-24: transcribed from the cited
 * implementations' code, independent of fpsim). */
static void check_block_examples(table *t)
{
    double t0 = now_s();
    uint64_t n = 0, bad = 0;
    char note[160] = "";
    fpsim_qopts o;
    fpsim_qopts_default(&o);
    o.want = 0;
    o.threads = 1;
    fpsim_qtensor q;
    memset(&q, 0, sizeof q);
    fpsim_scheme s;
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        n++;                                                                                       \
        if (!(cond)) {                                                                             \
            if (!bad) snprintf(note, sizeof note, __VA_ARGS__);                                    \
            bad++;                                                                                 \
        }                                                                                          \
    } while (0)
    /* #16: MXFP8 E4M3 block with amax 500: FLOOR 0x7F -> 0x7E, RCEIL 0x80 -> 0x78. */
    float mx[32];
    for (int i = 0; i < 32; i++) mx[i] = i == 5 ? 500.0f : 1.0f;
    if (fpsim_scheme_parse(&s, "mxfp8-e4m3:rule=floor") == FPSIM_OK && fpsim_block_quantize(&q, &s, mx, 1, 32, &o) == FPSIM_OK)
        EXPECT(q.scale_codes[0] == 0x7F && q.codes[5] == 0x7E, "#16 floor: scale 0x%02x code 0x%02x", q.scale_codes[0], q.codes[5]);
    else
        EXPECT(0, "#16 floor: %s", fpsim_last_error());
    if (fpsim_scheme_parse(&s, "mxfp8-e4m3:rule=rceil") == FPSIM_OK && fpsim_block_quantize(&q, &s, mx, 1, 32, &o) == FPSIM_OK)
        EXPECT(q.scale_codes[0] == 0x80 && q.codes[5] == 0x78, "#16 rceil: scale 0x%02x code 0x%02x", q.scale_codes[0], q.codes[5]);
    else
        EXPECT(0, "#16 rceil: %s", fpsim_last_error());
    /* #19: NVFP4 TE, global amax 10, block {3.0, 1.0, -0.3, 2.2}: scale 0x70, codes 7, 4, 9, 6. */
    float nv[16] = {3.0f, 1.0f, -0.3f, 2.2f};
    fpsim_qopts og = o;
    og.global_amax_given = 1;
    og.global_amax = 10.0f;
    if (fpsim_scheme_parse(&s, "nvfp4") == FPSIM_OK && fpsim_block_quantize(&q, &s, nv, 1, 16, &og) == FPSIM_OK) {
        uint32_t c[4];
        for (int i = 0; i < 4; i++) c[i] = fpsim_qtensor_code(&q, 0, (size_t)i);
        EXPECT(q.scale_codes[0] == 0x70 && c[0] == 7 && c[1] == 4 && c[2] == 9 && c[3] == 6,
               "#19: scale 0x%02x codes %x %x %x %x", q.scale_codes[0], c[0], c[1], c[2], c[3]);
    } else {
        EXPECT(0, "#19: %s", fpsim_last_error());
    }
    /* #22: block FP8 TE pow2, amax 3.0: scale_inv 2^-7, x = 3 -> 0x7C. */
    float b8[128];
    for (int i = 0; i < 128; i++) b8[i] = i == 0 ? 3.0f : 0.5f;
    if (fpsim_scheme_parse(&s, "fp8-block:scale=te-pow2") == FPSIM_OK && fpsim_block_quantize(&q, &s, b8, 1, 128, &o) == FPSIM_OK)
        EXPECT(q.scale_inv[0] == 0x1p-7f && q.codes[0] == 0x7C, "#22: scale_inv %a code 0x%02x", (double)q.scale_inv[0], q.codes[0]);
    else
        EXPECT(0, "#22: %s", fpsim_last_error());
    /* #23: FP32 scales, amax 1.0, x = 0x3E9B6DB8: TE 0x71, DeepGEMM 0x70. */
    uint32_t xb = 0x3E9B6DB8u;
    for (int i = 0; i < 128; i++) b8[i] = 0.0f;
    b8[0] = 1.0f;
    memcpy(&b8[1], &xb, 4);
    if (fpsim_scheme_parse(&s, "fp8-block:scale=te-fp32") == FPSIM_OK && fpsim_block_quantize(&q, &s, b8, 1, 128, &o) == FPSIM_OK)
        EXPECT(q.codes[1] == 0x71, "#23 te-fp32: code 0x%02x", q.codes[1]);
    else
        EXPECT(0, "#23 te: %s", fpsim_last_error());
    if (fpsim_scheme_parse(&s, "fp8-block:scale=deepgemm-fp32") == FPSIM_OK && fpsim_block_quantize(&q, &s, b8, 1, 128, &o) == FPSIM_OK)
        EXPECT(q.codes[1] == 0x70, "#23 deepgemm-fp32: code 0x%02x", q.codes[1]);
    else
        EXPECT(0, "#23 deepgemm: %s", fpsim_last_error());
    /* #24: an all-zero block: DeepGEMM ue8m0 sf 2^-22, TE scale 1 (scale_inv 1), MX E8M0 0x00. */
    for (int i = 0; i < 128; i++) b8[i] = 0.0f;
    if (fpsim_scheme_parse(&s, "fp8-block:scale=deepgemm-ue8m0") == FPSIM_OK && fpsim_block_quantize(&q, &s, b8, 1, 128, &o) == FPSIM_OK)
        EXPECT(q.scale_inv[0] == 0x1p-22f, "#24 ue8m0: sf %a", (double)q.scale_inv[0]);
    else
        EXPECT(0, "#24 ue8m0: %s", fpsim_last_error());
    if (fpsim_scheme_parse(&s, "fp8-block:scale=te-pow2") == FPSIM_OK && fpsim_block_quantize(&q, &s, b8, 1, 128, &o) == FPSIM_OK)
        EXPECT(q.scale_inv[0] == 1.0f, "#24 te: scale_inv %a", (double)q.scale_inv[0]);
    else
        EXPECT(0, "#24 te: %s", fpsim_last_error());
    if (fpsim_scheme_parse(&s, "mxfp8-e4m3:rule=floor") == FPSIM_OK && fpsim_block_quantize(&q, &s, b8, 1, 32, &o) == FPSIM_OK)
        EXPECT(q.scale_codes[0] == 0x00, "#24 mx: scale 0x%02x", q.scale_codes[0]);
    else
        EXPECT(0, "#24 mx: %s", fpsim_last_error());
#undef EXPECT
    fpsim_qtensor_free(&q);
    fpsim_clear_error();
    table_row(t, block_row_name, n, bad, now_s() - t0, note, 0);
}

/* The number of CPU cases that --only selects in the enabled halves (all when only is NULL). */
static size_t cpu_selected_count(const char *only, int elements, int blocks)
{
    size_t n = 0;
    if (elements) {
        n += worked_selected_count(only);
        for (int f = 0; f < FPSIM_FORMAT_COUNT; f++)
            n += array_selected_count(only, f);
    }
    if (blocks)
        n += (size_t)block_examples_selected(only);
    return n;
}

/* "--only TEXT matches no check": one line naming TEXT and where the names come from. */
static int only_matches_nothing(const char *only, const char *device)
{
    fpsim_cli_error(CMD,
                    "--only '%s' matches no check on the %s; case names are FORMAT/POLICY/MODE (e.g. e4m3/nv/rne, "
                    "see `fpsim formats`) or block scheme texts (e.g. mxfp8-e4m3:rule=floor), and rows as in "
                    "`fpsim verify`'s table",
                    only, device);
    return FPSIM_EXIT_USAGE;
}

static int verify_cpu(int threads, const char *only, int elements, int blocks)
{
    if (only && cpu_selected_count(only, elements, blocks) == 0)
        return only_matches_nothing(only, "cpu");
    table t = {0, 0, 0, 0};
    printf("fpsim verify --device cpu: CPU emulators against measured examples and the scalar core\n");
    table_header();
    if (elements && worked_selected_count(only)) check_worked(&t, only);
    if (elements) check_array_vs_scalar(&t, threads, only);
    if (blocks && block_examples_selected(only)) check_block_examples(&t);
    printf("%llu checks, %llu failed, %llu mismatches\n", (unsigned long long)t.rows, (unsigned long long)t.failed,
           (unsigned long long)t.mismatches);
    return t.failed ? FPSIM_EXIT_FAILURE : FPSIM_EXIT_OK;
}

/* ---- GPU --------------------------------------------------------------------------------- */

#ifdef FPSIM_HAVE_CUDA
/* The table plus the time of the float32 element rows, from which a sample run extrapolates
 * the cost of --full (the same work on 2^32 instead of 2^24 patterns per spec). */
typedef struct gpu_table {
    table t;
    double f32_seconds;
    uint64_t f32_inputs;
    const char *title; /* the table's title lines, printed before its first row */
} gpu_table;

/* The title and header are printed with the first row: the GPU library names its cases only
 * as it runs them, so a --only that selects none is known only at the end, and stdout then
 * stays empty (the error is the one line on stderr). */
static void print_check(const fpsim_gpu_check *row, void *ctx)
{
    gpu_table *g = ctx;
    if (g->title) {
        fputs(g->title, stdout);
        table_header();
        g->title = NULL;
    }
    table_row(&g->t, row->name, row->inputs, row->mismatches, row->seconds, row->example, row->skipped);
    if (!strncmp(row->name, "f32->", 5)) {
        g->f32_seconds += row->seconds;
        if (!strstr(row->name, "[fast path]")) g->f32_inputs += row->inputs;
    }
}

static int verify_gpu(int threads, const char *only, int full, int large, int elements, int blocks)
{
    char dev[256];
    fpsim_status st = fpsim_gpu_describe(dev, sizeof dev);
    if (st != FPSIM_OK) return fpsim_cli_fail(CMD, st);
    char title[1024];
    snprintf(title, sizeof title,
             "fpsim verify --device gpu: CUDA kernels against the CPU emulator, byte for byte\n"
             "device: %s; hardware cvt path: %s; float32 inputs: %s; CPU threads: %d\n",
             dev, fpsim_gpu_hw_cvt_available() ? "yes" : "no", full ? "all 2^32" : "2^24 sample (use --full for all)",
             threads > 0 ? threads : fpsim_threads_default());
    gpu_table g;
    memset(&g, 0, sizeof g);
    g.title = title;
    fpsim_gpu_verify_opts o = {full, threads, only, large};
    uint64_t mism = 0;
    if (elements) {
        st = fpsim_gpu_verify_elements(&o, print_check, &g, &mism);
        if (st != FPSIM_OK) return fpsim_cli_fail(CMD, st);
    }
    if (blocks) {
        st = fpsim_gpu_verify_blocks(&o, print_check, &g, &mism);
        if (st != FPSIM_OK) return fpsim_cli_fail(CMD, st);
    }
    if (g.f32_seconds > 0 && g.f32_inputs) {
        double rate = (double)g.f32_inputs / g.f32_seconds;
        printf("float32 element rows: %.1f s for %llu inputs (%.2f G specs x inputs / s, CPU and GPU side)",
               g.f32_seconds, (unsigned long long)g.f32_inputs, rate * 1e-9);
        if (!full) printf("; --full would take about %.0f s (x 256)", g.f32_seconds * 256.0);
        printf("\n");
    }
    /* The GPU's case names are made by the GPU library as it runs: a filter that matched none
     * is known only now (nothing was checked, so nothing was spent, and nothing printed). */
    if (only && g.t.rows == 0) return only_matches_nothing(only, "gpu");
    printf("%llu checks, %llu failed, %llu skipped, %llu mismatches\n", (unsigned long long)g.t.rows,
           (unsigned long long)g.t.failed, (unsigned long long)g.t.skipped, (unsigned long long)g.t.mismatches);
    return g.t.failed ? FPSIM_EXIT_FAILURE : FPSIM_EXIT_OK;
}
#endif

int verify_formats(int argc, char **argv)
{
    if (fpsim_cli_wants_help(argc, argv)) {
        usage(stdout);
        return FPSIM_EXIT_OK;
    }
    const char *device = "cpu", *only = NULL, *v;
    int full = 0, large = 0, elements = 1, blocks = 1, threads = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--device", &v)) != 0) {
            if (r < 0) return FPSIM_EXIT_USAGE;
            device = v;
        } else if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--only", &v)) != 0) {
            if (r < 0) return FPSIM_EXIT_USAGE;
            only = v;
        } else if ((r = fpsim_cli_take_value(CMD, argc, argv, &i, "--threads", &v)) != 0) {
            if (r < 0) return FPSIM_EXIT_USAGE;
            fpsim_status st = fpsim_cli_parse_threads(v, &threads);
            if (st != FPSIM_OK) return fpsim_cli_fail(CMD, st);
        } else if (!strcmp(argv[i], "--full")) {
            full = 1;
        } else if (!strcmp(argv[i], "--large")) {
            large = 1;
        } else if (!strcmp(argv[i], "--no-elements")) {
            elements = 0;
        } else if (!strcmp(argv[i], "--no-blocks")) {
            blocks = 0;
        } else {
            return fpsim_cli_unknown_option(CMD, argv[i]);
        }
    }
    if (threads <= 0) threads = fpsim_threads_default();
    if (strcmp(device, "cpu") && strcmp(device, "gpu")) {
        fpsim_cli_error(CMD, "unknown device '%s'; valid: cpu, gpu", device);
        return FPSIM_EXIT_USAGE;
    }
    if (!elements && !blocks) {
        fpsim_cli_error(CMD, "--no-elements and --no-blocks together leave nothing to check");
        return FPSIM_EXIT_USAGE;
    }
    if (!strcmp(device, "cpu")) {
        /* The CPU self-check has no float32 sweep to widen and no large tensors: refuse rather
         * than report a run that did not do what was asked. */
        if (full || large) {
            fpsim_cli_error(CMD, "%s applies to --device gpu only (the CPU self-check has %s)", full ? "--full" : "--large",
                            full ? "no float32 sweep to widen" : "no large-tensor cases");
            return FPSIM_EXIT_USAGE;
        }
        return verify_cpu(threads, only, elements, blocks);
    }
#ifdef FPSIM_HAVE_CUDA
    return verify_gpu(threads, only, full, large, elements, blocks);
#else
    (void)full, (void)large, (void)elements, (void)blocks;
    fpsim_cli_error(CMD, "--device gpu: this fpsim was built without CUDA (nvcc was not found at configure time)");
    return FPSIM_EXIT_USAGE;
#endif
}
