/* test_gpu_blocks.c: the GPU block quantizers against the CPU emulators of formats/, byte for
 * byte. The two are independent implementations of formats-spec.md §4-7 (gpu/block_rules.cuh is
 * written apart from formats/block_*.c; only the element core is shared, and that core is itself
 * checked against measured values in tests/formats). Cases: every scheme in gpu/verify_blocks.c on
 * random, odd-shaped and adversarial tensors, float32 and BF16 inputs, rowwise and columnwise;
 * codes, scales, cuBLAS layouts, per-tensor values, the dequantized tensor and the statistics;
 * both copies by one call (fpsim_gpu_block_quantize2_dev), fused where a kernel takes them.
 * Without a CUDA device: prints "no CUDA device: skipped" and exits 77. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_block.h"
#include "fpsim_gpu.h"
#include "fpsim_gpu_verify.h"

/* The device buffers' codes and scale codes (NULL where the buffer has none: the FP8 kinds),
 * copied to the host (caller frees). */
static int fetch(const fpsim_gpu_qbuf *b, uint8_t **codes, uint8_t **scodes)
{
    size_t nc = b->qrows * b->code_stride, ns = b->srows * b->scols;
    *codes = malloc(nc);
    *scodes = b->scale_codes ? malloc(ns) : NULL;
    return *codes && (*scodes || !b->scale_codes) && fpsim_gpu_copy(*codes, b->codes, nc, 1) == FPSIM_OK &&
           (!b->scale_codes || fpsim_gpu_copy(*scodes, b->scale_codes, ns, 1) == FPSIM_OK);
}

/* fpsim_gpu_qbuf_drop_scale_inv: MX and NVFP4 buffers without scale_inv get the same codes and
 * scale codes as with it (whose bits verify compares with the CPU), on every kernel path the
 * shapes reach (rows and cols, bf16 and float32); a block FP8 buffer cannot drop it, nor be
 * quantized without it. Returns the number of failures. */
static int check_codes_only(void)
{
    static const char *const schemes[] = {"mxfp8-e4m3", "mxfp4:rule=rceil-sat", "nvfp4", "nvfp4:sr=1,rht=1",
                                          "mxfp8-e4m3:tile=32x32", "nvfp4:tile=16x16"};
    const size_t rows = 256, cols = 512, n = rows * cols;
    int fails = 0;
    void *x = NULL;
    if (fpsim_gpu_alloc(&x, n * 4) != FPSIM_OK || fpsim_gpu_fill_random_dev(x, n, 0, 5, 20) != FPSIM_OK) return 1;
    for (size_t si = 0; si < sizeof schemes / sizeof *schemes; si++)
        for (int axis = 0; axis < 2; axis++)
            for (int bf16 = 0; bf16 < 2; bf16++) {
                fpsim_scheme s;
                fpsim_qopts o;
                fpsim_qopts_default(&o);
                o.axis = axis ? FPSIM_AXIS_COLS : FPSIM_AXIS_ROWS;
                o.want = 0;
                fpsim_gpu_qbuf full, lean;
                uint8_t *c1 = NULL, *s1 = NULL, *c2 = NULL, *s2 = NULL;
                int ok = fpsim_scheme_parse(&s, schemes[si]) == FPSIM_OK &&
                         fpsim_gpu_qbuf_alloc(&full, &s, rows, cols, o.axis) == FPSIM_OK &&
                         fpsim_gpu_qbuf_alloc(&lean, &s, rows, cols, o.axis) == FPSIM_OK &&
                         fpsim_gpu_qbuf_drop_scale_inv(&lean) == FPSIM_OK && !lean.scale_inv &&
                         fpsim_gpu_block_quantize_dev(&full, &s, x, bf16, rows, cols, &o, NULL) == FPSIM_OK &&
                         fpsim_gpu_block_quantize_dev(&lean, &s, x, bf16, rows, cols, &o, NULL) == FPSIM_OK &&
                         fpsim_gpu_sync() == FPSIM_OK && fetch(&full, &c1, &s1) && fetch(&lean, &c2, &s2);
                if (!ok || memcmp(c1, c2, full.qrows * full.code_stride) || memcmp(s1, s2, full.srows * full.scols)) {
                    printf("FAIL codes only: %s %s %s: %s\n", schemes[si], axis ? "cols" : "rows",
                           bf16 ? "bf16" : "f32", ok ? "codes or scale codes differ" : fpsim_last_error());
                    fails++;
                }
                free(c1), free(s1), free(c2), free(s2);
                fpsim_gpu_qbuf_free(&full);
                fpsim_gpu_qbuf_free(&lean);
            }
    /* block FP8 keeps its FP32 scales: no drop, no quantize without them */
    fpsim_scheme s;
    fpsim_qopts o;
    fpsim_qopts_default(&o);
    fpsim_gpu_qbuf b;
    if (fpsim_scheme_parse(&s, "fp8-block") != FPSIM_OK || fpsim_gpu_qbuf_alloc(&b, &s, rows, cols, 0) != FPSIM_OK) {
        fails++;
    } else {
        if (fpsim_gpu_qbuf_drop_scale_inv(&b) != FPSIM_EINVAL) fails += printf("FAIL: fp8-block dropped scale_inv\n") > 0;
        float *keep = b.scale_inv;
        b.scale_inv = NULL;
        if (fpsim_gpu_block_quantize_dev(&b, &s, x, 0, rows, cols, &o, NULL) != FPSIM_EINVAL)
            fails += printf("FAIL: fp8-block quantized with scale_inv NULL\n") > 0;
        else
            printf("expected error: %s\n", fpsim_last_error());
        b.scale_inv = keep;
        fpsim_gpu_qbuf_free(&b);
    }
    fpsim_gpu_free(x);
    printf("codes only (scale_inv dropped): %s\n", fails ? "FAILED" : "same codes and scale codes on every path");
    return fails;
}

/* fpsim_gpu_block_quantize2_dev: which schemes get both copies from one kernel (the fused flag),
 * the same bytes as two single calls either way (verify's "[both copies]" rows compare them with
 * the CPU), and the errors for buffers of the wrong axis or shape. Returns the number of failures. */
static int check_one_read(void)
{
    static const struct {
        const char *scheme;
        int bf16, fused;
    } cases[] = {
        {"mxfp8-e4m3", 1, 1},      {"mxfp8-e4m3", 0, 1},     {"mxfp8-e5m2:rule=rceil-sat", 1, 1},
        {"mxfp4", 1, 1},           {"mxfp4", 0, 1},          {"nvfp4", 1, 1},
        {"nvfp4", 0, 1},           {"nvfp4:sr=1", 1, 1},     {"fp8-block", 1, 1},
        {"fp8-block:fmt=e5m2", 1, 1},
        /* two passes: a float32 CTA tile is narrower than a 1x128 block; RHT rotates the columnwise
         * copy only; 2D tiles and per-tensor scaling have no dual kernel; nor has MXFP6 */
        {"fp8-block", 0, 0},       {"nvfp4:rht=1,rhtsum=mma", 1, 0}, {"nvfp4:tile=16x16", 1, 0},
        {"fp8-tensor", 1, 0},      {"mxfp6-e2m3", 1, 0},
    };
    const size_t rows = 256, cols = 512, n = rows * cols;
    int fails = 0;
    void *x = NULL;
    if (fpsim_gpu_alloc(&x, n * 4) != FPSIM_OK || fpsim_gpu_fill_random_dev(x, n, 0, 6, 12) != FPSIM_OK) return 1;
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        fpsim_scheme s;
        fpsim_qopts o;
        fpsim_qopts_default(&o);
        o.want = 0;
        o.seed = 7;
        fpsim_gpu_qbuf r2, c2, r1, c1;
        memset(&r2, 0, sizeof r2), memset(&c2, 0, sizeof c2), memset(&r1, 0, sizeof r1), memset(&c1, 0, sizeof c1);
        int fused = -1;
        uint8_t *a = NULL, *as = NULL, *b = NULL, *bs = NULL, *cc = NULL, *cs = NULL, *d = NULL, *ds = NULL;
        int ok = fpsim_scheme_parse(&s, cases[ci].scheme) == FPSIM_OK &&
                 fpsim_gpu_qbuf_alloc(&r2, &s, rows, cols, FPSIM_AXIS_ROWS) == FPSIM_OK &&
                 fpsim_gpu_qbuf_alloc(&c2, &s, rows, cols, FPSIM_AXIS_COLS) == FPSIM_OK &&
                 fpsim_gpu_qbuf_alloc(&r1, &s, rows, cols, FPSIM_AXIS_ROWS) == FPSIM_OK &&
                 fpsim_gpu_qbuf_alloc(&c1, &s, rows, cols, FPSIM_AXIS_COLS) == FPSIM_OK &&
                 fpsim_gpu_block_quantize2_dev(&r2, &c2, &s, x, cases[ci].bf16, rows, cols, &o, &fused, NULL) ==
                     FPSIM_OK;
        o.axis = FPSIM_AXIS_ROWS;
        ok = ok && fpsim_gpu_block_quantize_dev(&r1, &s, x, cases[ci].bf16, rows, cols, &o, NULL) == FPSIM_OK;
        o.axis = FPSIM_AXIS_COLS;
        ok = ok && fpsim_gpu_block_quantize_dev(&c1, &s, x, cases[ci].bf16, rows, cols, &o, NULL) == FPSIM_OK &&
             fpsim_gpu_sync() == FPSIM_OK;
        /* scale codes: MX/NVFP4; block FP8 and per-tensor compare their codes (verify: the scales) */
        const int has_sc = r1.scale_codes != NULL;
        ok = ok && fetch(&r2, &a, &as) && fetch(&r1, &b, &bs) && fetch(&c2, &cc, &cs) && fetch(&c1, &d, &ds);
        const char *why = !ok                                                     ? fpsim_last_error()
                          : fused != cases[ci].fused                              ? "fused flag"
                          : memcmp(a, b, r1.qrows * r1.code_stride)               ? "rowwise codes differ"
                          : memcmp(cc, d, c1.qrows * c1.code_stride)              ? "columnwise codes differ"
                          : has_sc && memcmp(as, bs, r1.srows * r1.scols)         ? "rowwise scale codes differ"
                          : has_sc && memcmp(cs, ds, c1.srows * c1.scols)         ? "columnwise scale codes differ"
                                                                                  : NULL;
        if (why) {
            printf("FAIL both copies: %s %s: %s (fused %d, expected %d)\n", cases[ci].scheme,
                   cases[ci].bf16 ? "bf16" : "f32", why, fused, cases[ci].fused);
            fails++;
        } else {
            printf("both copies: %-28s %-4s %s, the bytes of two single calls\n", cases[ci].scheme,
                   cases[ci].bf16 ? "bf16" : "f32", fused ? "one kernel" : "two passes");
        }
        free(a), free(as), free(b), free(bs), free(cc), free(cs), free(d), free(ds);
        /* the buffers in the wrong order, and rowwise buffers of another shape: refused */
        if (ci == 0) {
            if (fpsim_gpu_block_quantize2_dev(&c2, &r2, &s, x, 1, rows, cols, &o, &fused, NULL) != FPSIM_EINVAL)
                fails += printf("FAIL: both copies into swapped buffers accepted\n") > 0;
            else
                printf("expected error: %s\n", fpsim_last_error());
            fpsim_gpu_qbuf other;
            if (fpsim_gpu_qbuf_alloc(&other, &s, rows / 2, cols, FPSIM_AXIS_ROWS) == FPSIM_OK) {
                if (fpsim_gpu_block_quantize2_dev(&other, &c2, &s, x, 1, rows, cols, &o, &fused, NULL) != FPSIM_EINVAL)
                    fails += printf("FAIL: both copies into a rowwise buffer of another shape accepted\n") > 0;
                else
                    printf("expected error: %s\n", fpsim_last_error());
                fpsim_gpu_qbuf_free(&other);
            }
        }
        fpsim_gpu_qbuf_free(&r2), fpsim_gpu_qbuf_free(&c2), fpsim_gpu_qbuf_free(&r1), fpsim_gpu_qbuf_free(&c1);
    }
    fpsim_gpu_free(x);
    return fails;
}

static void show(const fpsim_gpu_check *row, void *ctx)
{
    int *bad = ctx;
    if (row->mismatches) (*bad)++;
    printf("%-48s %10llu %8s %llu  %s\n", row->name, (unsigned long long)row->inputs, row->skipped ? "skipped" : "",
           (unsigned long long)row->mismatches, row->example);
}

int main(void)
{
    if (fpsim_gpu_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    fpsim_gpu_verify_opts o = {0, 0, NULL, 0};
    uint64_t mism = 0;
    int bad = 0;
    fpsim_status st = fpsim_gpu_verify_blocks(&o, show, &bad, &mism);
    if (st != FPSIM_OK) {
        fprintf(stderr, "FAIL: %s\n", fpsim_last_error());
        return 1;
    }
    printf("%llu mismatches in %d schemes\n", (unsigned long long)mism, bad);
    const int codes_only_fails = check_codes_only();
    const int one_read_fails = check_one_read();
    return mism || codes_only_fails || one_read_fails ? 1 : 0;
}
