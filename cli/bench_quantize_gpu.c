/* bench_quantize_gpu.c: `fpsim bench quantize --device gpu [--json]`: the CUDA element conversions
 * and block quantizers against a device-to-device copy measured in the same run.
 *
 * Bytes are counted as the least a kernel must move: the input read once plus the codes and the
 * scales written once (scale codes for MX/NVFP4, FP32 scales for block FP8; MX/NVFP4 buffers drop
 * their FP32 copy of the scales, fpsim_gpu_qbuf_drop_scale_inv, unless --with-scale-inv, so the
 * kernels store what is counted: from run 26 of gpu/RESULTS.md). GB/s = bytes / median
 * time; "of copy" = that over the copy's GB/s (a copy of the float32 input: bytes read + written).
 * Recipes that need a tensor-wide amax first (NVFP4's global scale, FP8 current scaling) are timed
 * twice: with the amax given as an input (as TransformerEngine receives it from the preceding op;
 * the bandwidth target applies) and end to end with fpsim's own amax pass (the two-pass roofline
 * moves the input twice). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_block.h"
#include "fpsim_formats.h"
#ifdef FPSIM_HAVE_CUDA
#include "fpsim_gpu.h"
#endif

static const char *const CMD = "bench quantize";

#ifdef FPSIM_HAVE_CUDA

/* Block cases' axis beyond FPSIM_AXIS_ROWS / FPSIM_AXIS_COLS: both copies by
 * fpsim_gpu_block_quantize2_dev (one read where a kernel fuses them), or by two calls (two reads;
 * the baseline the fused kernel must beat). Both count the least bytes of the two copies: the
 * input once, both copies' codes and scales once. */
enum { AXIS_BOTH = 2, AXIS_TWO_CALLS = 3 };
static const char *const axis_names[] = {"rows", "cols", "both", "2x"};

typedef struct gpu_case {
    const char *name;   /* element: "FMT/POLICY/MODE"; block: scheme text */
    int block;          /* 0 element conversion, 1 block quantizer */
    int bf16;           /* input dtype */
    int axis;           /* FPSIM_AXIS_ROWS, FPSIM_AXIS_COLS, AXIS_BOTH, AXIS_TWO_CALLS */
    int amax_given;     /* block: 1 amax given, 0 end to end (own amax pass) */
    int sw_only;        /* element: force the software core (no hardware cvt) */
} gpu_case;

static const gpu_case default_cases[] = {
    {"e4m3/nv/rne", 0, 0, 0, 0, 0},         {"e4m3/nv/rne", 0, 0, 0, 0, 1},
    {"e4m3/torch/rne", 0, 0, 0, 0, 0},      {"e5m2/nv/rne", 0, 0, 0, 0, 0},
    {"e2m1/nv/rne", 0, 0, 0, 0, 0},         {"e2m3/nv/rne", 0, 0, 0, 0, 0},
    {"e8m0/torch/rne", 0, 0, 0, 0, 0},      {"bf16/nv/rne", 0, 0, 0, 0, 0},
    {"e4m3/nv/sr", 0, 0, 0, 0, 0},          {"e4m3/nv/rne", 0, 1, 0, 0, 0},
    {"e4m3/nv/rne", 0, 1, 0, 0, 1},         {"e2m1/nv/rne", 0, 1, 0, 0, 0},
    {"e2m3/nv/rne", 0, 1, 0, 0, 0},         {"mxfp4", 1, 1, 1, 1, 0},
    {"mxfp8-e4m3", 1, 1, 0, 1, 0},          {"mxfp8-e4m3", 1, 0, 0, 1, 0},
    {"mxfp8-e4m3:rule=rceil-sat", 1, 1, 0, 1, 0}, {"mxfp8-e4m3", 1, 1, 1, 1, 0},
    {"mxfp8-e4m3:tile=32x32", 1, 1, 0, 1, 0}, {"mxfp6-e2m3", 1, 1, 0, 1, 0},
    {"mxfp4", 1, 1, 0, 1, 0},               {"fp8-block", 1, 1, 0, 1, 0},
    {"fp8-block", 1, 0, 0, 1, 0},           {"fp8-block:tile=128x128", 1, 1, 0, 1, 0},
    {"fp8-block", 1, 1, 1, 1, 0},           {"fp8-block:scale=vllm-cuda", 1, 1, 0, 1, 0},
    {"fp8-block:scale=vllm-native", 1, 1, 0, 1, 0}, {"fp8-block:scale=vllm-cuda", 1, 1, 1, 1, 0},
    {"fp8-block:tile=128x128,scale=vllm-cuda", 1, 1, 0, 1, 0}, {"fp8-block:scale=vllm-cuda", 1, 0, 0, 1, 0},
    {"nvfp4", 1, 1, 0, 1, 0},
    {"nvfp4", 1, 1, 0, 0, 0},               {"nvfp4:tile=16x16", 1, 1, 0, 1, 0},
    {"nvfp4:sr=1", 1, 1, 0, 1, 0},          {"nvfp4", 1, 1, 1, 1, 0},
    {"nvfp4:sr=1", 1, 1, 1, 1, 0},          {"nvfp4:rht=1", 1, 1, 1, 1, 0},
    {"nvfp4:sr=1,rht=1", 1, 1, 1, 1, 0},
    {"nvfp4:sr=1,rht=1", 1, 1, 1, 0, 0},    {"nvfp4:rht=1,rhtsum=mma", 1, 1, 1, 1, 0},
    {"nvfp4:sr=1,rht=1,rhtsum=mma", 1, 1, 1, 1, 0}, {"nvfp4:sr=1,rht=1,rhtsum=mma", 1, 1, 1, 0, 0},
    {"fp8-tensor", 1, 1, 0, 1, 0},          {"fp8-tensor", 1, 1, 0, 0, 0},
    /* both copies: one read (kernel v8 with the rowwise copy) against two calls */
    {"mxfp8-e4m3", 1, 1, AXIS_BOTH, 1, 0},  {"mxfp8-e4m3", 1, 1, AXIS_TWO_CALLS, 1, 0},
    {"mxfp8-e4m3", 1, 0, AXIS_BOTH, 1, 0},  {"mxfp4", 1, 1, AXIS_BOTH, 1, 0},
    {"mxfp4", 1, 1, AXIS_TWO_CALLS, 1, 0},
    {"fp8-block", 1, 1, AXIS_BOTH, 1, 0},   {"fp8-block", 1, 1, AXIS_TWO_CALLS, 1, 0},
    {"nvfp4", 1, 1, AXIS_BOTH, 1, 0},       {"nvfp4", 1, 1, AXIS_TWO_CALLS, 1, 0},
    {"nvfp4", 1, 1, AXIS_BOTH, 0, 0},       {"nvfp4:sr=1", 1, 1, AXIS_BOTH, 1, 0},
    {"nvfp4:sr=1", 1, 1, AXIS_TWO_CALLS, 1, 0},
};

typedef struct run_ctx {
    const gpu_case *c;
    const void *x;
    void *codes;
    size_t n, rows, cols;
    fpsim_spec spec;
    fpsim_scheme scheme;
    fpsim_qopts opt;
    fpsim_gpu_qbuf buf;  /* the copy along c->axis; the columnwise one for AXIS_BOTH / AXIS_TWO_CALLS */
    fpsim_gpu_qbuf rbuf; /* the rowwise copy for AXIS_BOTH / AXIS_TWO_CALLS */
    int fused;           /* AXIS_BOTH: one kernel wrote both copies */
    void *copy_dst;
    size_t copy_bytes;
} run_ctx;

static fpsim_status run_copy(void *p)
{
    run_ctx *r = p;
    return fpsim_gpu_copy_dev_async(r->copy_dst, r->x, r->copy_bytes);
}

static fpsim_status run_element(void *p)
{
    run_ctx *r = p;
    unsigned flags = r->c->sw_only ? FPSIM_GPU_SOFTWARE_ONLY : 0u;
    if (r->c->bf16) return fpsim_gpu_convert_bf16_dev(r->codes, r->x, r->n, &r->spec, 7, 1, 0, flags, NULL);
    return fpsim_gpu_convert_f32_dev(r->codes, r->x, r->n, &r->spec, 7, 1, 0, flags, NULL);
}

static fpsim_status run_block(void *p)
{
    run_ctx *r = p;
    if (r->c->axis == AXIS_BOTH)
        return fpsim_gpu_block_quantize2_dev(&r->rbuf, &r->buf, &r->scheme, r->x, r->c->bf16, r->rows, r->cols,
                                             &r->opt, &r->fused, NULL);
    if (r->c->axis == AXIS_TWO_CALLS) {
        fpsim_qopts o = r->opt;
        o.axis = FPSIM_AXIS_ROWS;
        fpsim_status st = fpsim_gpu_block_quantize_dev(&r->rbuf, &r->scheme, r->x, r->c->bf16, r->rows, r->cols, &o,
                                                       NULL);
        o.axis = FPSIM_AXIS_COLS;
        if (st == FPSIM_OK)
            st = fpsim_gpu_block_quantize_dev(&r->buf, &r->scheme, r->x, r->c->bf16, r->rows, r->cols, &o, NULL);
        return st;
    }
    return fpsim_gpu_block_quantize_dev(&r->buf, &r->scheme, r->x, r->c->bf16, r->rows, r->cols, &r->opt, NULL);
}

/* "FMT/POLICY/MODE" -> spec. */
static fpsim_status element_spec(fpsim_spec *s, const char *name)
{
    char f[32], p[32], m[16];
    if (sscanf(name, "%31[^/]/%31[^/]/%15s", f, p, m) != 3)
        return fpsim_fail(FPSIM_EINVAL, "element case '%s' is not FMT/POLICY/MODE", name);
    fpsim_format_id id;
    fpsim_round mode;
    fpsim_status st = fpsim_format_lookup(f, &id);
    if (st == FPSIM_OK) st = fpsim_round_find(m, &mode);
    if (st == FPSIM_OK) st = fpsim_spec_make(s, id, p, mode, 0);
    return st;
}

/* Bytes of one quantized copy's codes and scales. */
static double copy_bytes(const fpsim_gpu_qbuf *b, const fpsim_scheme *s)
{
    double codes = (double)b->qrows * (double)b->code_stride;
    double scales = (double)b->srows * (double)b->scols * (s->kind == FPSIM_KIND_MX || s->kind == FPSIM_KIND_NVFP4 ? 1 : 4);
    if (s->kind == FPSIM_KIND_FP8_TENSOR) scales = 4;
    return codes + scales;
}

/* Least bytes a block quantizer moves: input once, codes once, scales once (of both copies where
 * rb is not NULL). */
static double block_bytes(const fpsim_gpu_qbuf *b, const fpsim_gpu_qbuf *rb, const fpsim_scheme *s, size_t n,
                          int bf16)
{
    return (double)n * (bf16 ? 2 : 4) + copy_bytes(b, s) + (rb ? copy_bytes(rb, s) : 0.0);
}

/* The case's device buffers (both copies for AXIS_BOTH / AXIS_TWO_CALLS), without the FP32 scales
 * of MX/NVFP4 unless with_scale_inv. */
static fpsim_status alloc_block_bufs(run_ctx *r, int with_scale_inv)
{
    const int two = r->c->axis >= AXIS_BOTH;
    fpsim_status st = fpsim_gpu_qbuf_alloc(&r->buf, &r->scheme, r->rows, r->cols, two ? FPSIM_AXIS_COLS : r->c->axis);
    if (st == FPSIM_OK && two) st = fpsim_gpu_qbuf_alloc(&r->rbuf, &r->scheme, r->rows, r->cols, FPSIM_AXIS_ROWS);
    if (st == FPSIM_OK && !with_scale_inv && r->buf.scale_codes) st = fpsim_gpu_qbuf_drop_scale_inv(&r->buf);
    if (st == FPSIM_OK && !with_scale_inv && two && r->rbuf.scale_codes) st = fpsim_gpu_qbuf_drop_scale_inv(&r->rbuf);
    return st;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim bench quantize --device gpu [--json] [--size RxC] [--reps N] [--case TEXT]\n"
            "                                         [--spread K]\n\n"
            "GB/s of the CUDA element conversions and block quantizers next to a device-to-device copy\n"
            "of the float32 input measured in the same run (bytes read + written; a kernel is counted\n"
            "for the least it must move: input once, codes and scales once). Axis \"both\": the rowwise and\n"
            "columnwise copies in one call, from one read where a kernel fuses them ([one read]); \"2x\":\n"
            "the same two copies by two calls, the two-read baseline.\n\n"
            "  --size RxC     tensor shape (default 16384x16384: 1 GiB of float32, 512 MiB of bf16)\n"
            "  --reps N       timed runs per figure, median taken (default 20)\n"
            "  --case TEXT    only the cases whose name and axis (\"nvfp4 both\") contain TEXT (repeatable;\n"
            "                 a TEXT that matches no case is an error)\n"
            "  --spread K     the random input: a bell-shaped value in (-2, 2) times 2^k, k drawn from\n"
            "                 [-K, K] for each run of 64 elements (default 8; 0: one scale). Kernels\n"
            "                 with data-dependent paths (the columnwise RHT) depend on it\n"
            "  --with-scale-inv  MX/NVFP4 also store the FP32 copy of each scale (not counted in bytes)\n"
            "  --json         one JSON object with every figure\n");
}

static int matches(const char *name, const char **only, size_t nonly)
{
    if (!nonly) return 1;
    for (size_t i = 0; i < nonly; i++)
        if (strstr(name, only[i])) return 1;
    return 0;
}

/* The text --case matches: the scheme and the axis ("nvfp4 both"); an element case by name. */
static void case_text(const gpu_case *c, char *text, size_t size)
{
    snprintf(text, size, "%s %s", c->name, c->block ? axis_names[c->axis] : "");
}

/* 1 when some case matches TEXT (checked before the GPU is touched: a typo is an error, not an
 * empty table) */
static int some_case_matches(const char *text)
{
    for (size_t ci = 0; ci < sizeof default_cases / sizeof default_cases[0]; ci++) {
        char name[96];
        case_text(&default_cases[ci], name, sizeof name);
        if (strstr(name, text)) return 1;
    }
    return 0;
}

int bench_quantize_gpu(int argc, char **argv)
{
    int json = 0, reps = 20, with_scale_inv = 0, spread = 8;
    size_t rows = 16384, cols = 16384;
    const char *only[16];
    size_t nonly = 0;
    if (fpsim_cli_wants_help(argc, argv)) {
        usage(stdout);
        return FPSIM_EXIT_OK;
    }
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        fpsim_status st = FPSIM_OK;
#define VALUE(name) ((r = fpsim_cli_take_value(CMD, argc, argv, &i, name, &v)) != 0)
        if (VALUE("--size")) st = fpsim_cli_parse_shape(v, "--size", &rows, &cols);
        else if (VALUE("--reps")) {
            long n;
            st = fpsim_cli_parse_int(v, "--reps", 1, 1000, &n);
            reps = (int)n;
        } else if (VALUE("--spread")) {
            long k;
            st = fpsim_cli_parse_int(v, "--spread", 0, 100, &k);
            spread = (int)k;
        } else if ((r = fpsim_cli_take_list_value(CMD, argc, argv, &i, "--case", &v)) != 0) {
            if (nonly == sizeof only / sizeof *only) {
                fpsim_cli_error(CMD, "too many --case options");
                return FPSIM_EXIT_USAGE;
            }
            only[nonly++] = v;
        } else if (VALUE("--device") || VALUE("--threads")) {
            /* --device gpu brought us here; threads do not apply on the GPU */
        } else if (r < 0)
            return FPSIM_EXIT_USAGE;
        else if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--with-scale-inv"))
            with_scale_inv = 1;
        else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
            fpsim_cli_set_quiet(1);
        else
            return fpsim_cli_unknown_option(CMD, argv[i]);
#undef VALUE
        if (r < 0) return FPSIM_EXIT_USAGE;
        if (st) return fpsim_cli_fail(CMD, st);
    }
    for (size_t i = 0; i < nonly; i++)
        if (!some_case_matches(only[i])) {
            fpsim_cli_error(CMD, "--case '%s' matches no case (names look like 'nvfp4:sr=1 both', 'e4m3/nv/rne'; "
                            "the table without --case lists them)", only[i]);
            return FPSIM_EXIT_USAGE;
        }
    char dev[256];
    fpsim_status st = fpsim_gpu_describe(dev, sizeof dev);
    if (st != FPSIM_OK) return fpsim_cli_fail(CMD, st);
    const size_t n = rows * cols;
    void *xf = NULL, *xb = NULL, *dst = NULL, *codes = NULL;
    st = fpsim_gpu_alloc(&xf, n * 4);
    if (st == FPSIM_OK) st = fpsim_gpu_alloc(&xb, n * 2);
    if (st == FPSIM_OK) st = fpsim_gpu_alloc(&dst, n * 4);
    if (st == FPSIM_OK) st = fpsim_gpu_alloc(&codes, n * 2);
    if (st == FPSIM_OK) st = fpsim_gpu_fill_random_dev(xf, n, 0, 11, spread);
    if (st == FPSIM_OK) st = fpsim_gpu_fill_random_dev(xb, n, 1, 12, spread);
    if (st == FPSIM_OK) st = fpsim_gpu_sync();
    run_ctx base;
    memset(&base, 0, sizeof base);
    base.x = xf;
    base.copy_dst = dst;
    base.copy_bytes = n * 4;
    double copy_ms = 0;
    if (st == FPSIM_OK) st = fpsim_gpu_time_ms(&copy_ms, run_copy, &base, 3, reps);
    if (st != FPSIM_OK) {
        fpsim_gpu_free(xf), fpsim_gpu_free(xb), fpsim_gpu_free(dst), fpsim_gpu_free(codes);
        return fpsim_cli_fail(CMD, st);
    }
    const double copy_gbps = 2.0 * (double)n * 4 / (copy_ms * 1e6);
    if (json)
        printf("{\"benchmark\": \"quantize-gpu\", \"device\": \"%s\", \"rows\": %zu, \"cols\": %zu, \"spread\": %d, \"reps\": %d,\n"
               " \"copy\": {\"bytes\": %zu, \"ms\": %.4f, \"gbps\": %.1f},\n \"results\": [",
               dev, rows, cols, spread, reps, 2 * n * 4, copy_ms, copy_gbps);
    else {
        printf("fpsim bench quantize --device gpu: %s\n", dev);
        printf("tensor %zu x %zu (scale spread 2^+-%d per 64 elements); device-to-device copy of the float32\n"
               "input: %.3f ms, %.0f GB/s (read + write)\n",
               rows, cols, spread, copy_ms, copy_gbps);
        printf("%-34s %-5s %-4s %-6s %9s %9s %8s %9s\n", "case", "in", "axis", "amax", "ms", "GB/s", "of copy",
               "Gelem/s");
    }
    int first = 1, failures = 0;
    for (size_t ci = 0; ci < sizeof default_cases / sizeof default_cases[0]; ci++) {
        const gpu_case *c = &default_cases[ci];
        char match_text[96];
        case_text(c, match_text, sizeof match_text);
        if (!matches(match_text, only, nonly)) continue;
        run_ctx r;
        memset(&r, 0, sizeof r);
        r.c = c;
        r.x = c->bf16 ? xb : xf;
        r.codes = codes;
        r.n = n;
        r.rows = rows;
        r.cols = cols;
        double bytes, ms = 0;
        int scale_inv_on = 0; /* the block case stores the FP32 scales too */
        if (!c->block) {
            st = element_spec(&r.spec, c->name);
            size_t code_bytes = fpsim_format_code_bytes((fpsim_format_id)r.spec.format);
            bytes = (double)n * ((c->bf16 ? 2 : 4) + (double)code_bytes);
            if (st == FPSIM_OK) st = fpsim_gpu_time_ms(&ms, run_element, &r, 3, reps);
        } else {
            st = fpsim_scheme_parse(&r.scheme, c->name);
            fpsim_qopts_default(&r.opt);
            r.opt.axis = c->axis;
            r.opt.want = 0; /* codes and scales only: no cuBLAS copy, no dequant, no stats */
            r.opt.seed = 99;
            r.opt.global_amax_given = c->amax_given;
            r.opt.global_amax = 4.0f;
            if (st == FPSIM_OK) st = alloc_block_bufs(&r, with_scale_inv);
            scale_inv_on = st == FPSIM_OK && r.buf.scale_inv != NULL;
            bytes = block_bytes(&r.buf, c->axis >= AXIS_BOTH ? &r.rbuf : NULL, &r.scheme, n, c->bf16);
            if (st == FPSIM_OK) st = fpsim_gpu_time_ms(&ms, run_block, &r, 3, reps);
            fpsim_gpu_qbuf_free(&r.buf);
            fpsim_gpu_qbuf_free(&r.rbuf);
        }
        const char *amax = !c->block || r.scheme.kind == FPSIM_KIND_MX || r.scheme.kind == FPSIM_KIND_FP8_BLOCK
                               ? "-"
                               : (c->amax_given ? "given" : "e2e");
        char label[64];
        snprintf(label, sizeof label, "%s%s%s", c->name, c->sw_only ? " [sw]" : "",
                 c->axis == AXIS_BOTH ? (r.fused ? " [one read]" : " [two passes]") : "");
        if (st != FPSIM_OK) {
            failures++;
            fpsim_cli_error(CMD, "%s: %s", label, fpsim_last_error());
            fpsim_clear_error();
            continue;
        }
        double gbps = bytes / (ms * 1e6);
        if (json) {
            printf("%s\n  {\"case\": \"%s\", \"input\": \"%s\", \"axis\": \"%s\", \"amax\": \"%s\", \"ms\": %.4f, "
                   "\"bytes\": %.0f, \"gbps\": %.1f, \"frac_of_copy\": %.3f, \"gelem_per_s\": %.1f, "
                   "\"scale_inv\": %s}",
                   first ? "" : ",", label, c->bf16 ? "bf16" : "f32", axis_names[c->axis], amax, ms, bytes,
                   gbps, gbps / copy_gbps, (double)n / (ms * 1e6),
                   scale_inv_on ? "true" : "false");
            first = 0;
        } else {
            printf("%-34s %-5s %-4s %-6s %9.3f %9.0f %7.1f%% %9.1f\n", label, c->bf16 ? "bf16" : "f32",
                   axis_names[c->axis], amax, ms, gbps, 100.0 * gbps / copy_gbps, (double)n / (ms * 1e6));
        }
        fflush(stdout);
    }
    if (json) printf("\n ]}\n");
    fpsim_gpu_free(xf), fpsim_gpu_free(xb), fpsim_gpu_free(dst), fpsim_gpu_free(codes);
    return failures ? FPSIM_EXIT_FAILURE : FPSIM_EXIT_OK;
}

#else

int bench_quantize_gpu(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fpsim_cli_error(CMD, "--device gpu: this fpsim was built without CUDA (nvcc was not found at configure time)");
    return FPSIM_EXIT_USAGE;
}

#endif
