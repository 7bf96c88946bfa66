/* cmd_quantize.c: `fpsim quantize`: block-scaled quantization of one 2-D tensor.
 *
 * Reads the tensor (.npy, HDF5 or raw: sim/fpsim_tensor_io.h), quantizes it with
 * fpsim_block_quantize (formats/fpsim_block.h) and writes an HDF5 file holding codes, scales,
 * the cuBLAS-layout scales, the dequantized tensor and, for NVFP4, the global scale, with every
 * parameter that decides the bits and the statistics as attributes (docs/hdf5-layout.md), or
 * a .npy holding the dequantized tensor only. --axis both writes the rowwise and the columnwise
 * copies into groups of one file (on the GPU from one read of the input where a kernel fuses them).
 * Nothing is written unless the whole run succeeds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_block.h"
#include "fpsim_file.h"
#include "fpsim_formats.h"
#include "fpsim_h5.h"
#include "fpsim_npy.h"
#include "fpsim_parallel.h"
#include "fpsim_tensor_io.h"
#if defined(FPSIM_HAVE_CUDA)
#include "fpsim_gpu.h"
#endif

static const char *const CMD = "quantize";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim quantize --scheme NAME[:key=value,...] --in X --out Y.h5|Y.npy [options]\n"
            "       fpsim quantize --list\n\n"
            "Block-scaled quantization of a 2-D float32 or bfloat16 tensor, bit-exact to the named\n"
            "implementation. Writes codes, scales (plain and cuBLAS layout), the dequantized tensor\n"
            "and statistics to HDF5 (docs/hdf5-layout.md); an --out ending in .npy gets the\n"
            "dequantized tensor only.\n\n"
            "  --scheme TEXT       scheme and options, e.g. nvfp4, mxfp8-e4m3:rule=rceil-sat,\n"
            "                      fp8-block:tile=128x128,scale=deepgemm-fp32 (see --list)\n"
            "  --list              print the schemes, their keys and defaults, and exit\n"
            "  --in FILE           input: .npy ('<f4', '<f8', bf16 with --dtype bf16), HDF5, or raw\n"
            "  --dataset PATH      HDF5 dataset to read (default: the file's only dataset)\n"
            "  --shape RxC         raw input of R rows and C columns (little-endian)\n"
            "  --dtype f32|bf16    raw (or .npy 2-byte) element type (default f32)\n"
            "  --axis rows|cols|both  blocks along rows (default; the stored last dim), along\n"
            "                      columns (quantizes the transpose: TE's columnwise copy), or\n"
            "                      both copies into groups rowwise/ and columnwise/ (.h5 only);\n"
            "                      nvfp4 rht=1 rotates the columnwise copy only, so needs cols or both\n"
            "  --out FILE          output .h5/.hdf5 (everything) or .npy (dequantized only)\n"
            "  --seed N            stochastic-rounding key (default 0; recorded in the file; sr=1 only)\n"
            "  --stream N          stochastic-rounding stream id of this tensor (default 0; sr=1 only)\n"
            "  --threads T         worker threads (default: FPSIM_THREADS or all cores);\n"
            "                      the bits do not depend on T\n"
            "  --device cpu|gpu    where to quantize (default cpu)\n"
            "  --gzip L            HDF5 gzip level 0-9 (default 0: uncompressed; not for .npy)\n"
            "  --quiet, -q         no statistics summary on stderr\n");
}

struct quantize_args {
    const char *scheme_text, *out, *axis_text, *device;
    fpsim_tensor_source src;
    uint64_t seed;
    uint64_t stream;
    int threads;
    int gzip;
    int list;
    int seed_given, stream_given, gzip_given; /* options that only some schemes or outputs use */
};

/* Parse argv; returns -1 on success, else the exit status to return. */
static int parse_args(struct quantize_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->axis_text = "rows";
    a->device = "cpu";
    for (int i = 1; i < argc; i++) {
        const char *v;
        int r;
        fpsim_status st = FPSIM_OK;
#define VALUE(name) ((r = fpsim_cli_take_value(CMD, argc, argv, &i, name, &v)) != 0)
        if (VALUE("--scheme")) a->scheme_text = v;
        else if (VALUE("--in")) a->src.path = v;
        else if (VALUE("--dataset")) a->src.dataset = v;
        else if (VALUE("--shape")) st = fpsim_cli_parse_shape(v, "--shape", &a->src.rows, &a->src.cols);
        else if (VALUE("--dtype")) a->src.dtype = v;
        else if (VALUE("--axis")) a->axis_text = v;
        else if (VALUE("--out")) a->out = v;
        else if (VALUE("--seed")) {
            st = fpsim_cli_parse_u64(v, "--seed", &a->seed);
            a->seed_given = 1;
        } else if (VALUE("--stream")) {
            st = fpsim_cli_parse_u64(v, "--stream", &a->stream);
            a->stream_given = 1;
            if (!st && a->stream > UINT32_MAX) st = fpsim_fail(FPSIM_EINVAL, "--stream: %s exceeds 2^32-1", v);
        } else if (VALUE("--threads")) st = fpsim_cli_parse_threads(v, &a->threads);
        else if (VALUE("--device")) a->device = v;
        else if (VALUE("--gzip")) {
            long level;
            st = fpsim_cli_parse_int(v, "--gzip", 0, 9, &level);
            a->gzip = (int)level;
            a->gzip_given = 1;
        } else if (r < 0) return FPSIM_EXIT_USAGE;
        else if (!strcmp(argv[i], "--list")) a->list = 1;
        else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) fpsim_cli_set_quiet(1);
        else return fpsim_cli_unknown_option(CMD, argv[i]);
#undef VALUE
        if (r < 0) return FPSIM_EXIT_USAGE;
        if (st) return fpsim_cli_fail(CMD, st);
    }
    return -1;
}

static int list_schemes(void)
{
    printf("Schemes: fpsim quantize --scheme NAME[:key=value,...]. Under each NAME, its canonical\n"
           "text shows every key with its default; docs/quantizers.md explains each key.\n\n");
    size_t n;
    fpsim_scheme_names(&n);
    for (size_t i = 0; i < n; i++) {
        char line[1024];
        fpsim_status st = fpsim_scheme_list(i, line, sizeof line);
        if (st) return fpsim_cli_fail(CMD, st);
        printf("%s\n", line);
    }
    return FPSIM_EXIT_OK;
}

/* The name of the scheme's scale rule, whatever field holds it for this kind. */
static const char *scale_rule_name(const fpsim_scheme *s)
{
    switch (s->kind) {
    case FPSIM_KIND_MX: return fpsim_mx_rule_name(s->rule);
    case FPSIM_KIND_NVFP4: return fpsim_nvfp4_chain_name(s->chain);
    case FPSIM_KIND_FP8_BLOCK: return fpsim_fp8_block_scale_name(s->scale);
    default: return fpsim_tensor_mode_name(s->mode);
    }
}

static const char *scale_format_name(const fpsim_scheme *s)
{
    switch (s->kind) {
    case FPSIM_KIND_MX: return "e8m0";
    case FPSIM_KIND_NVFP4: return "e4m3";
    default: return "f32";
    }
}

/* --axis both: the two copies side by side (AXIS_BOTH is not an FPSIM_AXIS_* of the library). */
enum { AXIS_BOTH = 2 };

/* Root attributes: provenance, the parameters that decide the bits, input (axis_text: rows, cols
 * or both). */
static fpsim_status write_root_attrs(hid_t f, const struct quantize_args *a, const fpsim_qtensor *q,
                                     const fpsim_tensor2d *x, const char *canonical,
                                     const char *command_line, int threads, const char *axis_text)
{
    const fpsim_scheme *s = &q->scheme;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(canonical, ":"), canonical);
    const fpsim_format *elem = fpsim_format_get((fpsim_format_id)s->elem);
    fpsim_status st = fpsim_h5_write_provenance(f, command_line, a->seed);
#define ATTR(call) if (!st) st = (call)
    ATTR(fpsim_h5_attr_string(f, "scheme", canonical));
    ATTR(fpsim_h5_attr_string(f, "scheme_name", name));
    ATTR(fpsim_h5_attr_string(f, "element_format", elem ? elem->name : "?"));
    ATTR(fpsim_h5_attr_string(f, "scale_format", scale_format_name(s)));
    ATTR(fpsim_h5_attr_string(f, "scale_rule", scale_rule_name(s)));
    ATTR(fpsim_h5_attr_string(f, "policy", s->cast[0] ? s->cast : "default"));
    ATTR(fpsim_h5_attr_string(f, "nan_policy", s->nan == FPSIM_NAN_IGNORE ? "ignore" : "propagate"));
    ATTR(fpsim_h5_attr_int64(f, "block_rows", s->tile_rows));
    ATTR(fpsim_h5_attr_int64(f, "block_cols", s->tile_cols));
    ATTR(fpsim_h5_attr_string(f, "axis", axis_text));
    ATTR(fpsim_h5_attr_int64(f, "sr", s->sr));
    ATTR(fpsim_h5_attr_int64(f, "rht", s->rht));
    ATTR(fpsim_h5_attr_string(f, "rht_sum", s->rhtsum == FPSIM_RHT_MMA ? "mma" : "exact"));
    ATTR(fpsim_h5_attr_uint64(f, "stream", a->stream));
    ATTR(fpsim_h5_attr_string(f, "device", a->device));
    ATTR(fpsim_h5_attr_int64(f, "threads", threads));
    ATTR(fpsim_h5_attr_string(f, "input_file", a->src.path));
    ATTR(fpsim_h5_attr_string(f, "input_dataset", x->dataset));
    ATTR(fpsim_h5_attr_string(f, "input_format", x->format));
    ATTR(fpsim_h5_attr_string(f, "input_dtype", x->source_dtype));
    ATTR(fpsim_h5_attr_int64(f, "input_rounded_to_f32", x->rounded));
    ATTR(fpsim_h5_attr_int64(f, "rows", (int64_t)q->rows));
    ATTR(fpsim_h5_attr_int64(f, "cols", (int64_t)q->cols));
#undef ATTR
    return st;
}

/* The statistics and the per-tensor values of one copy, as attributes of f (the root, or the
 * copy's group under --axis both). */
static fpsim_status write_stats_attrs(hid_t f, const fpsim_qtensor *q)
{
    const fpsim_scheme *s = &q->scheme;
    const fpsim_qstats *t = &q->stats;
    fpsim_status st = FPSIM_OK;
#define ATTR(call) if (!st) st = (call)
    /* statistics (formats/fpsim_qstats.h defines each) */
    ATTR(fpsim_h5_attr_double(f, "amax", t->amax));
    ATTR(fpsim_h5_attr_double(f, "rel_l2", fpsim_qstats_rel_l2(t)));
    ATTR(fpsim_h5_attr_double(f, "sqnr_db", fpsim_qstats_sqnr_db(t)));
    ATTR(fpsim_h5_attr_double(f, "mean_err", fpsim_qstats_mean_err(t)));
    ATTR(fpsim_h5_attr_double(f, "max_abs_err", t->max_abs_err));
    ATTR(fpsim_h5_attr_uint64(f, "count", t->count));
    ATTR(fpsim_h5_attr_uint64(f, "finite", t->finite));
    ATTR(fpsim_h5_attr_uint64(f, "nan_count", t->nan));
    ATTR(fpsim_h5_attr_uint64(f, "inf_count", t->inf));
    ATTR(fpsim_h5_attr_uint64(f, "nan_out", t->nan_out));
    ATTR(fpsim_h5_attr_uint64(f, "flushed", t->flushed));
    ATTR(fpsim_h5_attr_uint64(f, "saturated", t->saturated));
    ATTR(fpsim_h5_attr_uint64(f, "zero_blocks", t->zero_blocks));
    ATTR(fpsim_h5_attr_uint64(f, "blocks", t->blocks));
    if (s->kind == FPSIM_KIND_NVFP4 || s->kind == FPSIM_KIND_FP8_TENSOR) {
        ATTR(fpsim_h5_attr_double(f, "global_amax", q->global_amax));
        ATTR(fpsim_h5_attr_double(f, "global_scale", q->global_scale));
    }
    if (s->kind == FPSIM_KIND_NVFP4) ATTR(fpsim_h5_attr_double(f, "s_enc", q->s_enc));
    if (s->kind == FPSIM_KIND_FP8_TENSOR) ATTR(fpsim_h5_attr_double(f, "tensor_scale", q->tensor_scale));
#undef ATTR
    return st;
}

/* Dataset `name` (2-D) with string attributes `key`=`value` pairs, NULL-terminated. */
static fpsim_status write_2d(hid_t f, const char *name, fpsim_h5_type type, size_t rows, size_t cols,
                             const void *data, int gzip, const char *const *attrs)
{
    size_t dims[2] = {rows, cols};
    fpsim_status st = fpsim_h5_write(f, name, type, 2, dims, data, gzip);
    if (st || !attrs) return st;
    hid_t d;
    H5E_BEGIN_TRY { d = H5Dopen2(f, name, H5P_DEFAULT); } H5E_END_TRY;
    if (d < 0) return fpsim_fail(FPSIM_EIO, "cannot reopen dataset '%s'", name);
    for (size_t i = 0; attrs[i] && !st; i += 2) st = fpsim_h5_attr_string(d, attrs[i], attrs[i + 1]);
    H5Dclose(d);
    return st;
}

static fpsim_status write_datasets(hid_t f, const fpsim_qtensor *q, int gzip)
{
    const fpsim_scheme *s = &q->scheme;
    const fpsim_format *elem = fpsim_format_get((fpsim_format_id)s->elem);
    const char *layout = q->axis == FPSIM_AXIS_COLS ? "columnwise: the transposed operand, cols x rows"
                                                    : "rowwise: the operand as stored, rows x cols";
    const char *packing = elem && elem->bits == 4 ? "two codes per byte, even element in the low nibble"
                                                  : "one code per byte";
    const char *codes_attrs[] = {"format", elem ? elem->name : "?", "packing", packing, "layout", layout, NULL};
    fpsim_status st = write_2d(f, "codes", FPSIM_H5_U8, q->qrows, q->code_stride, q->codes, gzip, codes_attrs);
    if (st) return st;

    if (q->scale_codes) {
        const char *sa[] = {"format", scale_format_name(s), "layout",
                            "row-major, one per block of the stored operand, edges zero-padded", NULL};
        st = write_2d(f, "scales", FPSIM_H5_U8, q->srows, q->scols, q->scale_codes, gzip, sa);
        const char *ia[] = {"meaning", "the decoded block scale as float32 (dequant multiplier, global scale excluded)", NULL};
        if (!st && q->scale_inv) st = write_2d(f, "scale_inv", FPSIM_H5_F32, q->srows, q->scols, q->scale_inv, gzip, ia);
    } else if (q->scale_inv) {
        const char *sa[] = {"format", "f32", "meaning", "scale_inv: dequantization multiplier of each block", NULL};
        st = write_2d(f, "scales", FPSIM_H5_F32, q->srows, q->scols, q->scale_inv, gzip, sa);
    }
    if (st) return st;

    if (q->cublas_codes) {
        const char *ca[] = {"layout", "cuBLAS 128x4 block-scaling swizzle (VEC32_UE8M0 / VEC16_UE4M3), padding 0", NULL};
        st = write_2d(f, "scales_cublas", FPSIM_H5_U8, q->cublas_rows, q->cublas_cols, q->cublas_codes, gzip, ca);
    } else if (q->cublas_f32) {
        const char *ca[] = {"layout", fpsim_scheme_is_2d(s) ? "cuBLASLt BLK128x128_32F, columns padded to 4, padding 0"
                                                            : "cuBLASLt VEC128_32F: transposed, rows padded to 4, padding 0",
                            NULL};
        st = write_2d(f, "scales_cublas", FPSIM_H5_F32, q->cublas_rows, q->cublas_cols, q->cublas_f32, gzip, ca);
    } else if (s->kind == FPSIM_KIND_FP8_TENSOR) {
        const char *ca[] = {"layout", "cuBLASLt SCALAR_32F: the one scale_inv", NULL};
        st = write_2d(f, "scales_cublas", FPSIM_H5_F32, 1, 1, &q->global_scale, 0, ca);
    }
    if (st) return st;

    const char *da[] = {"meaning", "dequantized tensor, float32, the input's rows x cols", NULL};
    st = write_2d(f, "dequant", FPSIM_H5_F32, q->rows, q->cols, q->dequant, gzip, da);
    if (st) return st;

    if (s->kind == FPSIM_KIND_NVFP4) {
        st = fpsim_h5_write(f, "global_scale", FPSIM_H5_F32, 0, NULL, &q->global_scale, 0);
        if (!st) {
            hid_t d;
            H5E_BEGIN_TRY { d = H5Dopen2(f, "global_scale", H5P_DEFAULT); } H5E_END_TRY;
            if (d >= 0) {
                st = fpsim_h5_attr_string(d, "meaning", "per-tensor dequantization factor (TE S_dec = amax/2688 chain; torchao per_tensor_scale)");
                H5Dclose(d);
            }
        }
    }
    return st;
}

/* Group `name` holding one copy's datasets and statistics (--axis both). */
static fpsim_status write_copy_group(hid_t f, const char *name, const fpsim_qtensor *q, int gzip)
{
    hid_t g;
    H5E_BEGIN_TRY { g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT); } H5E_END_TRY;
    if (g < 0) return fpsim_fail(FPSIM_EIO, "cannot create group '%s'", name);
    fpsim_status st = fpsim_h5_attr_string(g, "axis", q->axis == FPSIM_AXIS_COLS ? "cols" : "rows");
    /* the RHT this copy really had: the root's rht=1 rotates the columnwise copy only */
    if (!st) st = fpsim_h5_attr_int64(g, "rht", fpsim_scheme_rotates(&q->scheme, q->axis));
    if (!st) st = write_stats_attrs(g, q);
    if (!st) st = write_datasets(g, q, gzip);
    H5Gclose(g);
    return st;
}

/* q: the copy (rows_q NULL), or the columnwise copy with rows_q the rowwise one (--axis both). */
static fpsim_status write_hdf5(const struct quantize_args *a, const fpsim_qtensor *q, const fpsim_qtensor *rows_q,
                               const fpsim_tensor2d *x, const char *canonical, const char *command_line, int threads)
{
    fpsim_h5_file f;
    fpsim_status st = fpsim_h5_create(&f, a->out);
    if (st) return st;
    fpsim_cli_remove_on_signal(f.tmp);
    if (rows_q) {
        st = write_root_attrs(f.id, a, rows_q, x, canonical, command_line, threads, "both");
        if (!st) st = write_copy_group(f.id, "rowwise", rows_q, a->gzip);
        if (!st) st = write_copy_group(f.id, "columnwise", q, a->gzip);
    } else {
        st = write_root_attrs(f.id, a, q, x, canonical, command_line, threads,
                              q->axis == FPSIM_AXIS_COLS ? "cols" : "rows");
        if (!st) st = write_stats_attrs(f.id, q);
        if (!st) st = write_datasets(f.id, q, a->gzip);
    }
    if (st) fpsim_h5_discard(&f);
    else st = fpsim_h5_commit(&f);
    fpsim_cli_remove_on_signal(NULL);
    return st;
}

static void print_summary(const struct quantize_args *a, const fpsim_qtensor *q, const char *canonical)
{
    const fpsim_qstats *t = &q->stats;
    /* NaN and Inf inputs have no finite error: the statistics cover the other elements, and say so */
    fpsim_cli_note("%s  %zux%zu axis=%s: amax %.6g  sqnr %.2f dB  rel_l2 %.4g  bias %.3g  max_err %.4g%s",
                   canonical, q->rows, q->cols, q->axis == FPSIM_AXIS_COLS ? "cols" : "rows", t->amax,
                   fpsim_qstats_sqnr_db(t), fpsim_qstats_rel_l2(t), fpsim_qstats_mean_err(t), t->max_abs_err,
                   t->nan || t->inf ? "  (over the finite inputs only)" : "");
    fpsim_cli_note("  blocks %llu (zero %llu)  flushed %llu  saturated %llu  nan %llu  inf %llu  nan_out %llu  -> %s",
                   (unsigned long long)t->blocks, (unsigned long long)t->zero_blocks,
                   (unsigned long long)t->flushed, (unsigned long long)t->saturated,
                   (unsigned long long)t->nan, (unsigned long long)t->inf,
                   (unsigned long long)t->nan_out, a->out);
}

/* --device gpu: refused with one clear line unless this build has CUDA and a device is present. */
static fpsim_status check_device(const char *device)
{
    if (!strcmp(device, "cpu")) return FPSIM_OK;
    if (strcmp(device, "gpu") != 0) return fpsim_fail(FPSIM_ENAME, "unknown device '%s'; valid: cpu, gpu", device);
#if defined(FPSIM_HAVE_CUDA)
    fpsim_status st = fpsim_gpu_require();
    if (st) {
        char why[256];
        snprintf(why, sizeof why, "%s", fpsim_last_error());
        return fpsim_fail(st, "--device gpu: %s", why);
    }
    return FPSIM_OK;
#else
    return fpsim_fail(FPSIM_ENODEV, "--device gpu: this fpsim was built without CUDA (no nvcc at configure time)");
#endif
}

#if defined(FPSIM_HAVE_CUDA)
/* 1 if the n-byte arrays differ (both NULL: equal). */
static int differs(const void *a, const void *b, size_t n)
{
    if (!a || !b) return a != b;
    return memcmp(a, b, n) != 0;
}

/* Name of the first output in which the GPU's bits differ from the CPU's, or NULL. */
static const char *first_difference(const fpsim_qtensor *c, const fpsim_qtensor *g)
{
    if (c->qrows != g->qrows || c->code_stride != g->code_stride || c->srows != g->srows || c->scols != g->scols)
        return "shape";
    if (differs(c->codes, g->codes, c->qrows * c->code_stride)) return "codes";
    if (differs(c->scale_codes, g->scale_codes, c->srows * c->scols)) return "scales";
    if (differs(c->scale_inv, g->scale_inv, c->srows * c->scols * sizeof(float))) return "scale_inv";
    if (c->cublas_rows != g->cublas_rows || c->cublas_cols != g->cublas_cols) return "scales_cublas shape";
    if (differs(c->cublas_codes, g->cublas_codes, c->cublas_rows * c->cublas_cols)) return "scales_cublas";
    if (differs(c->cublas_f32, g->cublas_f32, c->cublas_rows * c->cublas_cols * sizeof(float))) return "scales_cublas";
    /* Per-tensor values, where the kind defines them (formats/fpsim_block.h). */
    int nvfp4 = c->scheme.kind == FPSIM_KIND_NVFP4, tensor = c->scheme.kind == FPSIM_KIND_FP8_TENSOR;
    if ((nvfp4 || tensor) && memcmp(&c->global_scale, &g->global_scale, sizeof(float))) return "global scale";
    if (nvfp4 && memcmp(&c->s_enc, &g->s_enc, sizeof(float))) return "encode scale (s_enc)";
    if (tensor && memcmp(&c->tensor_scale, &g->tensor_scale, sizeof(float))) return "tensor scale";
    if (differs(c->dequant, g->dequant, c->rows * c->cols * sizeof(float))) return "dequant";
    /* Statistics: counts, maxima and the exact sums (fpsim_qstats.h), all equal by construction
     * (gpu/block_stats.cuh keeps the CPU's summation order). */
    const fpsim_qstats *a = &c->stats, *b = &g->stats;
    if (a->count != b->count || a->finite != b->finite || a->nan != b->nan || a->inf != b->inf ||
        a->nan_out != b->nan_out || a->flushed != b->flushed || a->saturated != b->saturated ||
        a->zero_blocks != b->zero_blocks || a->blocks != b->blocks)
        return "statistics (counts)";
    const double ca[5] = {a->amax, a->max_abs_err, fpsim_xsum_value(&a->sum_ref2), fpsim_xsum_value(&a->sum_err2),
                          fpsim_xsum_value(&a->sum_err)};
    const double gb[5] = {b->amax, b->max_abs_err, fpsim_xsum_value(&b->sum_ref2), fpsim_xsum_value(&b->sum_err2),
                          fpsim_xsum_value(&b->sum_err)};
    if (memcmp(ca, gb, sizeof ca)) return "statistics (maxima or sums)";
    return NULL;
}
#endif

/* Quantize on the chosen device. With --device gpu the GPU (gpu/fpsim_gpu.h) produces every
 * output (codes, scales, cuBLAS layout, per-tensor values, the dequantized tensor and the
 * statistics); the CPU emulator runs as well and each GPU output is checked bit for bit against
 * it; the GPU's tensor is the one written. *mismatch receives the name of an output where they
 * differ (an exit-1 failure). */
static fpsim_status quantize_on(fpsim_qtensor *q, const char *device, const fpsim_scheme *s,
                                const fpsim_tensor2d *x, const fpsim_qopts *o, const char **mismatch)
{
    *mismatch = NULL;
    if (o->axis == AXIS_BOTH) return fpsim_fail(FPSIM_EINVAL, "quantize_on: both copies go through quantize_both_on");
    fpsim_status st = x->dtype == FPSIM_TENSOR_BF16 ? fpsim_block_quantize_bf16(q, s, x->bf16, x->rows, x->cols, o)
                                                    : fpsim_block_quantize(q, s, x->f32, x->rows, x->cols, o);
    if (st || strcmp(device, "gpu") != 0) return st;
#if defined(FPSIM_HAVE_CUDA)
    fpsim_qtensor g;
    memset(&g, 0, sizeof g);
    st = x->dtype == FPSIM_TENSOR_BF16 ? fpsim_gpu_block_quantize_bf16(&g, s, x->bf16, x->rows, x->cols, o)
                                       : fpsim_gpu_block_quantize(&g, s, x->f32, x->rows, x->cols, o);
    if (!st) *mismatch = first_difference(q, &g);
    if (!st && !*mismatch) { /* write the GPU's result (equal to the CPU's in every byte) */
        fpsim_qtensor t = *q;
        *q = g;
        g = t;
    }
    fpsim_qtensor_free(&g);
#endif
    return st;
}

/* --axis both: rows_q gets the rowwise copy, q the columnwise one, each as quantize_on would make
 * it; on the GPU by one call (fpsim_gpu_block_quantize2: one read where a kernel fuses the copies),
 * each copy checked against the CPU's. */
static fpsim_status quantize_both_on(fpsim_qtensor *rows_q, fpsim_qtensor *q, const char *device,
                                     const fpsim_scheme *s, const fpsim_tensor2d *x, const fpsim_qopts *o,
                                     const char **mismatch)
{
    *mismatch = NULL;
    fpsim_qopts ro = *o, co = *o;
    ro.axis = FPSIM_AXIS_ROWS;
    co.axis = FPSIM_AXIS_COLS;
    fpsim_status st = quantize_on(rows_q, "cpu", s, x, &ro, mismatch);
    if (!st) st = quantize_on(q, "cpu", s, x, &co, mismatch);
    if (st || strcmp(device, "gpu") != 0) return st;
#if defined(FPSIM_HAVE_CUDA)
    fpsim_qtensor gr, gc;
    memset(&gr, 0, sizeof gr);
    memset(&gc, 0, sizeof gc);
    int fused = 0;
    st = fpsim_gpu_block_quantize2(&gr, &gc, s, x->dtype == FPSIM_TENSOR_BF16 ? (const void *)x->bf16 : (const void *)x->f32,
                                   x->dtype == FPSIM_TENSOR_BF16, x->rows, x->cols, &ro, &fused);
    if (!st) {
        *mismatch = first_difference(rows_q, &gr);
        if (!*mismatch) *mismatch = first_difference(q, &gc);
    }
    if (!st && !*mismatch) { /* write the GPU's copies (equal to the CPU's in every byte) */
        fpsim_qtensor t = *rows_q;
        *rows_q = gr, gr = t;
        t = *q;
        *q = gc, gc = t;
        fpsim_cli_note("--device gpu: both copies %s", fused ? "from one read of the input (one kernel)"
                                                          : "by two passes (no fused kernel for this scheme or shape)");
    }
    fpsim_qtensor_free(&gr);
    fpsim_qtensor_free(&gc);
#endif
    return st;
}

/* Bytes per input element that quantizing holds besides the input, a lower bound: a copy has
 * codes (at least half a byte: FP4 packs two) and the float32 dequantized tensor; a columnwise
 * copy also its float32 stored operand and stored-orientation dequant (fpsim_qtensor's work_src,
 * work_dq); scales (at most 5/16 byte) are left out. Measured peak RSS (/usr/bin/time, 4096 x 4096
 * float32, 2026-12-07): nvfp4 rows 9.6, cols 17.4, both 22.2 bytes per element with the input's 4,
 * against 8.5, 16.5 and 21 estimated; mxfp8-e4m3 rows 9.9. */
static double quantize_output_bytes(int axis)
{
    const double copy = 0.5 + 4.0, columnwise = copy + 8.0;
    return axis == AXIS_BOTH ? copy + columnwise : axis == FPSIM_AXIS_COLS ? columnwise : copy;
}

int cmd_quantize(int argc, char **argv)
{
    if (fpsim_cli_wants_help(argc, argv)) {
        usage(stdout);
        return FPSIM_EXIT_OK;
    }
    struct quantize_args a;
    int rc = parse_args(&a, argc, argv);
    if (rc >= 0) return rc;
    if (a.list) return list_schemes();
    if (!a.scheme_text || !a.src.path || !a.out) {
        fpsim_cli_error(CMD, "--scheme, --in and --out are required (fpsim quantize --help)");
        return FPSIM_EXIT_USAGE;
    }

    /* Everything the user could have got wrong is checked before the input is read. */
    fpsim_scheme scheme;
    fpsim_status st = fpsim_scheme_parse(&scheme, a.scheme_text);
    if (st) return fpsim_cli_fail(CMD, st);
    int axis;
    if (!strcmp(a.axis_text, "rows")) axis = FPSIM_AXIS_ROWS;
    else if (!strcmp(a.axis_text, "cols")) axis = FPSIM_AXIS_COLS;
    else if (!strcmp(a.axis_text, "both")) axis = AXIS_BOTH;
    else {
        fpsim_cli_error(CMD, "unknown axis '%s'; valid: rows, cols, both", a.axis_text);
        return FPSIM_EXIT_USAGE;
    }
    /* The RHT rotates columnwise copies only (TE's wgrad operands): on a rowwise copy rht=1 would
     * be recorded and change nothing. --axis both rotates its columnwise copy, as TE does. */
    if (scheme.kind == FPSIM_KIND_NVFP4 && scheme.rht && axis == FPSIM_AXIS_ROWS) {
        fpsim_cli_error(CMD, "rht=1 applies to columnwise quantization (TE's wgrad operands): give --axis cols "
                        "(or both), or drop rht=1 ('%s')", a.scheme_text);
        return FPSIM_EXIT_USAGE;
    }
    int to_npy = fpsim_file_name_has_ext(a.out, ".npy");
    if (!to_npy && !fpsim_file_name_is_hdf5(a.out)) {
        fpsim_cli_error(CMD, "--out '%s': the name must end in .h5, .hdf5 or .npy", a.out);
        return FPSIM_EXIT_USAGE;
    }
    /* Options that would change nothing are refused, as convert refuses --seed without --round sr:
     * the random bits are drawn only by NVFP4's stochastic rounding, and .npy has no compression. */
    if ((a.seed_given || a.stream_given) && !(scheme.kind == FPSIM_KIND_NVFP4 && scheme.sr)) {
        fpsim_cli_error(CMD, "--%s has no effect: '%s' draws no random bits (only nvfp4 with sr=1 does)",
                        a.seed_given ? "seed" : "stream", a.scheme_text);
        return FPSIM_EXIT_USAGE;
    }
    if (to_npy && a.gzip_given) {
        fpsim_cli_error(CMD, "--gzip has no effect on a .npy output ('%s'); it compresses HDF5 datasets", a.out);
        return FPSIM_EXIT_USAGE;
    }
    if (to_npy && axis == AXIS_BOTH) {
        fpsim_cli_error(CMD, "--axis both writes two copies: --out must be .h5 or .hdf5, not '%s'", a.out);
        return FPSIM_EXIT_USAGE;
    }
    if ((st = check_device(a.device))) return fpsim_cli_fail_input(CMD, st);
    if (fpsim_cli_refuse_input_as_output(CMD, "--out", a.out, "--in", a.src.path)) return FPSIM_EXIT_USAGE;
    if ((st = fpsim_file_check_writable(a.out))) return fpsim_cli_fail_input(CMD, st);

    fpsim_tensor2d x;
    /* A missing or unreadable input (FPSIM_EIO) is the user's error here: exit 2. A run larger
     * than the machine's available memory is refused before anything is allocated (exit 1): the
     * allocation would succeed (overcommit) and the kernel kill fpsim later, without a word. */
    if ((st = fpsim_tensor_check_memory(&a.src, quantize_output_bytes(axis))) ||
        (st = fpsim_tensor_read(&x, &a.src)))
        return st == FPSIM_EIO ? fpsim_cli_fail_input(CMD, st) : fpsim_cli_fail(CMD, st);

    fpsim_qopts opts;
    fpsim_qopts_default(&opts);
    opts.axis = axis;
    opts.seed = a.seed;
    opts.stream = (uint32_t)a.stream;
    opts.threads = a.threads > 0 ? a.threads : fpsim_threads_default();
    opts.want = FPSIM_QWANT_ALL;
    fpsim_qtensor q, rows_q;
    memset(&q, 0, sizeof q);
    memset(&rows_q, 0, sizeof rows_q);
    const char *mismatch;
    st = axis == AXIS_BOTH ? quantize_both_on(&rows_q, &q, a.device, &scheme, &x, &opts, &mismatch)
                           : quantize_on(&q, a.device, &scheme, &x, &opts, &mismatch);
    if (st || mismatch) {
        fpsim_tensor2d_free(&x);
        fpsim_qtensor_free(&q);
        fpsim_qtensor_free(&rows_q);
        if (!mismatch) return fpsim_cli_fail(CMD, st);
        fpsim_cli_error(CMD, "--device gpu: the GPU's %s differ from the CPU emulator's; nothing written "
                             "(a bug: please report with this command line)", mismatch);
        return FPSIM_EXIT_FAILURE;
    }

    char canonical[FPSIM_SCHEME_TEXT_MAX];
    fpsim_scheme_format(canonical, sizeof canonical, &q.scheme);
    if (to_npy) {
        /* fpsim_npy_save writes under fpsim_file_temp_name(out), then renames. */
        size_t shape[2] = {q.rows, q.cols};
        char tmp[4096];
        if (fpsim_file_temp_name(tmp, sizeof tmp, a.out) == FPSIM_OK) fpsim_cli_remove_on_signal(tmp);
        st = fpsim_npy_save(a.out, FPSIM_NPY_F32, 2, shape, q.dequant);
        fpsim_cli_remove_on_signal(NULL);
    } else {
        char command_line[8192];
        fpsim_cli_command_line(command_line, sizeof command_line, argc, argv);
        st = write_hdf5(&a, &q, axis == AXIS_BOTH ? &rows_q : NULL, &x, canonical, command_line, opts.threads);
    }
    if (!st && axis == AXIS_BOTH) print_summary(&a, &rows_q, canonical);
    if (!st) print_summary(&a, &q, canonical);
    fpsim_tensor2d_free(&x);
    fpsim_qtensor_free(&q);
    fpsim_qtensor_free(&rows_q);
    return st ? fpsim_cli_fail(CMD, st) : FPSIM_EXIT_OK;
}
