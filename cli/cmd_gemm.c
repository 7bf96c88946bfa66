/* cmd_gemm.c: `fpsim gemm`: C = A B^T under a tensor-core accumulation model (or on the GPU
 * through cuBLASLt), from .npy operands to a .npy result.
 *
 * A is (M, K), B is (N, K), both float32 whose values are exact in the input format (the
 * "TN" layout of cuBLASLt FP8 GEMMs); C is float32 (M, N). Scales are per-tensor numbers, or
 * .npy arrays of block scales whose shape says the mode: (M, ceil(K/128)) is VEC128 (1x128),
 * (ceil(M/128), ceil(K/128)) is BLK128x128 (likewise for B with N). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_gemm.h"
#include "fpsim_file.h"
#include "fpsim_npy.h"
#ifdef FPSIM_HAVE_CUDA
#include "fpsim_gpu_gemm.h"
#endif

static const char *CMD = "gemm";

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fpsim gemm --a A.npy --b B.npy --accum MODEL --out C.npy [options]\n\n"
            "C (M,N) = A (M,K) * B (N,K)^T in float32, under an accumulation model of the GPU's tensor cores.\n"
            "A and B are float32 .npy arrays whose values must be exact in the input format.\n\n"
            "  --accum MODEL      %s\n"
            "  --in-format F      e4m3 | e5m2 | bf16 | f16 | f32 (default: e4m3 for FP8 models, bf16 for\n"
            "                     hopper-hgmma, f32 (no check) for fp32 and fp64)\n"
            "  --in-format-b F    format of B if it differs from A's (e.g. e4m3 x e5m2)\n"
            "  --scale-a S        per-tensor scale of A (default 1): D = acc * fp32(scale_a * scale_b),\n"
            "                     as cuBLASLt does (measured on the H200); or S.npy: block scales,\n"
            "                     shape (M, ceil(K/128)) = VEC128 (1x128) or (ceil(M/128), ceil(K/128)) =\n"
            "                     BLK128x128; block scales need both operands blocked and promote=128\n"
            "  --scale-b S        likewise for B (N instead of M)\n"
            "  --fold ORDER       how block scales fold a promoted chain into fp32: auto (default: what\n"
            "                     cuBLASLt 13.1 does on the H200, measured: mulb-fma for VEC128 x VEC128,\n"
            "                     fma with a BLK128x128 operand), fma, mul-add, mul-mul-add, mula-fma, mulb-fma\n"
            "  --threads N        CPU threads (default: FPSIM_THREADS or all cores); bits do not depend on it\n"
            "  --device cpu|gpu   gpu: run cuBLASLt on the H200 instead (hopper-qgmma:fast = FAST_ACCUM 1,\n"
            "                     hopper-qgmma[:promote=128] = FAST_ACCUM 0, hopper-hgmma = bf16 GEMM)\n"
            "  --quiet, -q        no notes on stderr\n",
            fpsim_accum_names());
}

static int parse_format(const char *name, fpsim_format_id *out)
{
    static const struct { const char *name; fpsim_format_id id; } names[] = {
        {"e4m3", FPSIM_E4M3}, {"e4m3fn", FPSIM_E4M3}, {"e5m2", FPSIM_E5M2}, {"bf16", FPSIM_BF16},
        {"bfloat16", FPSIM_BF16}, {"f16", FPSIM_F16}, {"fp16", FPSIM_F16}, {"f32", FPSIM_GEMM_IN_F32},
        {"fp32", FPSIM_GEMM_IN_F32}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i].name)) {
            *out = names[i].id;
            return 1;
        }
    return 0;
}

/* A 2-D float32 .npy array; one error line naming the file otherwise. */
static int load_matrix(const char *path, const char *what, float **data, size_t *rows, size_t *cols)
{
    fpsim_npy_info info;
    void *p = NULL;
    fpsim_status st = fpsim_npy_load(path, &info, &p);
    if (st) return fpsim_cli_fail_input(CMD, st);
    if (info.dtype != FPSIM_NPY_F32) {
        free(p);
        fpsim_cli_error(CMD, "%s '%s' has dtype '%s'; expected float32 ('<f4')", what, path,
                        fpsim_npy_dtype_descr(info.dtype));
        return FPSIM_EXIT_USAGE;
    }
    if (info.ndim != 2 || info.shape[0] == 0 || info.shape[1] == 0) {
        free(p);
        char shape[96] = "(";
        for (int d = 0; d < info.ndim; d++) {
            char one[24];
            snprintf(one, sizeof one, d ? ", %zu" : "%zu", info.shape[d]);
            strncat(shape, one, sizeof shape - strlen(shape) - 2);
        }
        strcat(shape, ")");
        fpsim_cli_error(CMD, "%s '%s' has shape %s; expected a non-empty 2-D array", what, path, shape);
        return FPSIM_EXIT_USAGE;
    }
    *data = p;
    *rows = info.shape[0];
    *cols = info.shape[1];
    return 0;
}

/* A scale option: a number, or a .npy of block scales for an operand with `rows` rows. */
typedef struct scale_arg {
    float value;
    float *blocks;       /* block scales (rows_per_block set), or NULL */
    int rows_per_block;
} scale_arg;

static int parse_scale(const char *text, const char *opt, size_t rows, size_t K, scale_arg *out)
{
    out->value = 1.0f;
    out->blocks = NULL;
    out->rows_per_block = 0;
    if (!text) return 0;
    if (fpsim_file_name_has_ext(text, ".npy")) {
        size_t r, c, L = (K + 127) / 128, T = (rows + 127) / 128;
        int rc = load_matrix(text, opt, &out->blocks, &r, &c);
        if (rc) return rc;
        if (c == L && r == rows) out->rows_per_block = 1;
        else if (c == L && r == T) out->rows_per_block = 128;
        else {
            fpsim_cli_error(CMD, "%s '%s' has shape (%zu, %zu); expected (%zu, %zu) for VEC128 (1x128) or (%zu, %zu) "
                            "for BLK128x128", opt, text, r, c, rows, L, T, L);
            free(out->blocks);
            out->blocks = NULL;
            return FPSIM_EXIT_USAGE;
        }
        for (size_t i = 0; i < r * c; i++)
            if (!isfinite(out->blocks[i])) {
                fpsim_cli_error(CMD, "%s '%s': element %zu is %g; scales must be finite", opt, text, i,
                                (double)out->blocks[i]);
                free(out->blocks);
                out->blocks = NULL;
                return FPSIM_EXIT_USAGE;
            }
        return 0;
    }
    double d;
    if (fpsim_cli_parse_double(text, opt, &d) || !isfinite(d) || fabs(d) > 3.4028234663852886e38) {
        fpsim_cli_error(CMD, "%s: '%s' is not a finite number or a .npy file of block scales", opt, text);
        return FPSIM_EXIT_USAGE;
    }
    out->value = (float)d;
    /* D = acc * fp32(scale_a * scale_b): a scale that rounds to 0 (1e-50), a subnormal one or a
     * negative one would not be a scale (1e-50 gave an all-zero C, exit 0) */
    if (!(out->value > 0.0f) || !isnormal(out->value)) {
        fpsim_cli_error(CMD, "%s %s is %.9g in float32: a scale must be a positive normal float32 (%.9g to %.9g)",
                        opt, text, (double)out->value, (double)FLT_MIN, (double)FLT_MAX);
        return FPSIM_EXIT_USAGE;
    }
    if ((double)out->value != d)
        fpsim_cli_note("fpsim gemm: %s %s rounded to float32 %.9g (cuBLASLt takes fp32 scales)", opt, text,
                       (double)out->value);
    return 0;
}

/* Every value of an operand exact in its format; the error names the row and column. */
static int check_operand(const float *x, size_t rows, size_t cols, fpsim_format_id f, const char *path)
{
    if (f == FPSIM_GEMM_IN_F32) return 0;
    for (size_t r = 0; r < rows; r++) {
        char what[64];
        snprintf(what, sizeof what, "row %zu", r);
        if (fpsim_gemm_check_exact(x + r * cols, cols, f, what) != FPSIM_OK) {
            fpsim_cli_error(CMD, "'%s': %s", path, fpsim_last_error());
            return FPSIM_EXIT_USAGE;
        }
    }
    return 0;
}

#ifdef FPSIM_HAVE_CUDA
static int run_gpu(float *C, const float *A, const float *B, size_t M, size_t N, size_t K, const fpsim_accum *acc,
                   fpsim_format_id fa, fpsim_format_id fb, const scale_arg *sa, const scale_arg *sb)
{
    fpsim_gpu_gemm_config cfg = {fa, fb, FPSIM_GPU_SCALE_TENSOR, FPSIM_GPU_SCALE_TENSOR, 0};
    if (acc->kind == FPSIM_ACCUM_HOPPER_QGMMA && (acc->promote == 0 || acc->promote == 128)) {
        cfg.fast_accum = acc->promote == 0;
    } else if (acc->kind != FPSIM_ACCUM_HOPPER_HGMMA) {
        fpsim_cli_error(CMD, "--device gpu runs cuBLASLt: model %s has no cuBLASLt configuration; valid: "
                        "hopper-qgmma:fast, hopper-qgmma:promote=128, hopper-hgmma", acc->name);
        return FPSIM_EXIT_USAGE;
    }
    if (sa->blocks) {
        cfg.a_scale = sa->rows_per_block == 1 ? FPSIM_GPU_SCALE_VEC128 : FPSIM_GPU_SCALE_BLK128;
        cfg.b_scale = sb->rows_per_block == 1 ? FPSIM_GPU_SCALE_VEC128 : FPSIM_GPU_SCALE_BLK128;
    }
    fpsim_gpu_gemm_info info;
    fpsim_status st = fpsim_gpu_gemm_tn(C, A, B, M, N, K, &cfg, sa->value, sb->value, sa->blocks, sb->blocks, &info);
    if (st) return fpsim_cli_fail(CMD, st);
    fpsim_cli_note("fpsim gemm: %s; cuBLASLt %zu; %s", info.device, info.cublaslt_version, info.algo);
    return 0;
}
#endif

int cmd_gemm(int argc, char **argv)
{
    const char *path_a = NULL, *path_b = NULL, *model = NULL, *out = NULL, *fmt_name = NULL, *fmt_b_name = NULL;
    const char *scale_a_text = NULL, *scale_b_text = NULL, *fold_name = NULL, *threads_text = NULL;
    const char *device = "cpu";
    for (int i = 1; i < argc; i++) {
        int r = 0;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return FPSIM_EXIT_OK;
        }
        if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            fpsim_cli_set_quiet(1);
            continue;
        }
        const struct { const char *name; const char **dst; } opts[] = {
            {"--a", &path_a}, {"--b", &path_b}, {"--accum", &model}, {"--out", &out}, {"--in-format", &fmt_name},
            {"--in-format-b", &fmt_b_name}, {"--scale-a", &scale_a_text}, {"--scale-b", &scale_b_text},
            {"--fold", &fold_name}, {"--threads", &threads_text}, {"--device", &device}};
        for (size_t o = 0; o < sizeof opts / sizeof opts[0] && !r; o++)
            r = fpsim_cli_take_value(CMD, argc, argv, &i, opts[o].name, opts[o].dst);
        if (r < 0) return FPSIM_EXIT_USAGE;
        if (!r) return fpsim_cli_unknown_option(CMD, argv[i]);
    }
    if (!path_a || !path_b || !model || !out) {
        fpsim_cli_error(CMD, "missing %s (see fpsim gemm --help)",
                        !path_a ? "--a A.npy" : !path_b ? "--b B.npy" : !model ? "--accum MODEL" : "--out C.npy");
        return FPSIM_EXIT_USAGE;
    }
    fpsim_accum acc;
    fpsim_status st = fpsim_accum_parse(&acc, model);
    if (st) return fpsim_cli_fail(CMD, st);
    if (fold_name) {
        int f = fpsim_fold_find(fold_name);
        if (f < 0) {
            fpsim_cli_error(CMD, "unknown fold order '%s'; valid: auto, fma, mul-add, mul-mul-add, mula-fma, mulb-fma",
                            fold_name);
            return FPSIM_EXIT_USAGE;
        }
        if (strstr(model, "fold=")) {
            fpsim_cli_error(CMD, "--fold %s and the model's own fold= ('%s') both set the fold order; give one",
                            fold_name, model);
            return FPSIM_EXIT_USAGE;
        }
        acc.fold = (fpsim_fold)f;
    }
    if (!fpsim_file_name_has_ext(out, ".npy")) {
        fpsim_cli_error(CMD, "--out '%s': the result is written as .npy; the name must end in .npy", out);
        return FPSIM_EXIT_USAGE;
    }
    fpsim_format_id fa, fb;
    if (fmt_name) {
        if (!parse_format(fmt_name, &fa)) {
            fpsim_cli_error(CMD, "unknown input format '%s'; valid: e4m3, e5m2, bf16, f16, f32", fmt_name);
            return FPSIM_EXIT_USAGE;
        }
    } else {
        fa = acc.kind == FPSIM_ACCUM_HOPPER_HGMMA ? FPSIM_BF16
             : (acc.kind == FPSIM_ACCUM_FP32_BLAS || acc.kind == FPSIM_ACCUM_FP32_SEQ || acc.kind == FPSIM_ACCUM_FP64)
                 ? FPSIM_GEMM_IN_F32
                 : FPSIM_E4M3;
    }
    fb = fa;
    if (fmt_b_name && !parse_format(fmt_b_name, &fb)) {
        fpsim_cli_error(CMD, "unknown input format '%s'; valid: e4m3, e5m2, bf16, f16, f32", fmt_b_name);
        return FPSIM_EXIT_USAGE;
    }
    int threads = 0;
    if (threads_text && fpsim_cli_parse_threads(threads_text, &threads)) return fpsim_cli_fail(CMD, FPSIM_EINVAL);
    if (strcmp(device, "cpu") && strcmp(device, "gpu")) {
        fpsim_cli_error(CMD, "unknown device '%s'; valid: cpu, gpu", device);
        return FPSIM_EXIT_USAGE;
    }
#ifndef FPSIM_HAVE_CUDA
    if (!strcmp(device, "gpu")) {
        fpsim_cli_error(CMD, "this fpsim was built without CUDA; --device gpu is not available");
        return FPSIM_EXIT_USAGE;
    }
#endif
    if (fpsim_cli_refuse_input_as_output(CMD, "--out", out, "--a", path_a) ||
        fpsim_cli_refuse_input_as_output(CMD, "--out", out, "--b", path_b))
        return FPSIM_EXIT_USAGE;
    st = fpsim_file_check_writable(out);
    if (st) return fpsim_cli_fail_input(CMD, st);

    float *A = NULL, *B = NULL, *C = NULL;
    size_t M, K, N, KB;
    scale_arg sa = {1.0f, NULL, 0}, sb = {1.0f, NULL, 0};
    int rc = load_matrix(path_a, "--a", &A, &M, &K);
    if (!rc) rc = load_matrix(path_b, "--b", &B, &N, &KB);
    if (!rc && K != KB) {
        fpsim_cli_error(CMD, "K mismatch: A '%s' is (%zu, %zu) and B '%s' is (%zu, %zu); B must be (N, K)", path_a, M,
                        K, path_b, N, KB);
        rc = FPSIM_EXIT_USAGE;
    }
    if (!rc) rc = check_operand(A, M, K, fa, path_a);
    if (!rc) rc = check_operand(B, N, K, fb, path_b);
    if (!rc) rc = parse_scale(scale_a_text, "--scale-a", M, K, &sa);
    if (!rc) rc = parse_scale(scale_b_text, "--scale-b", N, K, &sb);
    if (!rc && (!sa.blocks != !sb.blocks)) {
        fpsim_cli_error(CMD, "block scales (a .npy) for one operand need block scales for the other (cuBLASLt's "
                        "VEC128/BLK128x128 modes pair only with each other)");
        rc = FPSIM_EXIT_USAGE;
    }
    /* the fold order decides only how block scales enter the sum; per-tensor scales multiply the
     * finished accumulator, so a fold order without block scales would be ignored */
    if (!rc && !sa.blocks && acc.fold != FPSIM_FOLD_AUTO) {
        fpsim_cli_error(CMD, "a fold order other than auto (--fold or fold=) needs block scales (--scale-a/--scale-b "
                             "as .npy)");
        rc = FPSIM_EXIT_USAGE;
    }
    if (!rc && sa.rows_per_block == 128 && sb.rows_per_block == 128 && M > 1 && N > 1) {
        fpsim_cli_error(CMD, "BLK128x128 scales on both operands: cuBLASLt on sm_90 has no such mode; give one "
                        "operand 1x128 (VEC128) scales");
        rc = FPSIM_EXIT_USAGE;
    }
    /* split-K cuts K into at most ceil(K / unit) chunks: a larger splitk gives the same bits (the
     * fp64 and BLAS models take no splitk at all: fpsim_gemm_tn_ex says so) */
    if (!rc && acc.splitk > 1 && acc.kind != FPSIM_ACCUM_FP64 && acc.kind != FPSIM_ACCUM_FP32_BLAS) {
        fpsim_gemm_scales usa = {sa.blocks, sa.rows_per_block}, usb = {sb.blocks, sb.rows_per_block};
        size_t most = fpsim_gemm_splitk_max(K, sa.blocks ? &usa : NULL, sb.blocks ? &usb : NULL);
        if ((size_t)acc.splitk > most) {
            fpsim_cli_error(CMD, "splitk=%d is more than the %zu chunk(s) that K=%zu can be split into (units of "
                            "128 elements, 512 with a BLK128x128 operand); a larger splitk changes nothing",
                            acc.splitk, most, K);
            rc = FPSIM_EXIT_USAGE;
        }
    }
    if (!rc && !(C = malloc(M * N * sizeof *C))) {
        fpsim_cli_error(CMD, "out of memory for a %zu x %zu result", M, N);
        rc = FPSIM_EXIT_FAILURE;
    }
    if (!rc && !strcmp(device, "gpu")) {
#ifdef FPSIM_HAVE_CUDA
        rc = run_gpu(C, A, B, M, N, K, &acc, fa, fb, &sa, &sb);
#endif
    } else if (!rc) {
        fpsim_gemm_scales bsa = {sa.blocks, sa.rows_per_block}, bsb = {sb.blocks, sb.rows_per_block};
        fpsim_gemm_args args = {fa, fb, sa.value, sb.value, sa.blocks ? &bsa : NULL, sb.blocks ? &bsb : NULL, threads};
        st = fpsim_gemm_tn_ex(C, A, B, M, N, K, &acc, &args);
        if (st) rc = fpsim_cli_fail(CMD, st);
    }
    if (!rc) {
        size_t shape[2] = {M, N};
        st = fpsim_npy_save(out, FPSIM_NPY_F32, 2, shape, C);
        if (st) rc = fpsim_cli_fail(CMD, st); /* the path was checked before: an I/O failure, exit 1 */
        else fpsim_cli_note("fpsim gemm: wrote %s (%zu x %zu, model %s)", out, M, N, acc.name);
    }
    free(A), free(B), free(C), free(sa.blocks), free(sb.blocks);
    return rc;
}
