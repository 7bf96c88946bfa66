/* gemm_accum.c: accumulation-model names -> fpsim_accum descriptors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpsim_gemm.h"

static const char *const fold_names[FPSIM_FOLD_COUNT] = {"auto", "fma", "mul-add", "mul-mul-add", "mula-fma",
                                                          "mulb-fma"};

const char *fpsim_fold_name(fpsim_fold fold)
{
    return (unsigned)fold < FPSIM_FOLD_COUNT ? fold_names[fold] : "?";
}

int fpsim_fold_find(const char *name)
{
    for (int i = 0; i < FPSIM_FOLD_COUNT; i++)
        if (!strcmp(name, fold_names[i])) return i;
    return -1;
}

const char *fpsim_accum_names(void)
{
    return "fp64, fp32, fp32:seq, hopper-qgmma:fast, hopper-qgmma:promote=N (N a multiple of 32; "
           "hopper-qgmma = promote=128), hopper-hgmma, mma-sync-fp8 "
           "(options: ',fold=auto|fma|mul-add|mul-mul-add|mula-fma|mulb-fma' for block scales, "
           "',splitk=S' for cuBLASLt split-K)";
}

/* Set the block rule of a tensor-core model (gpu-numerics.md 3.2, Khattak & Mikaitis' H100/H200
 * parameters): QGMMA fma 32, neab -10 (13 fraction bits), 14-bit result; HGMMA/HMMA fma 16,
 * neab 2 (grid 2^(E-25)), 24-bit RZ result. */
static void set_block_rule(fpsim_accum *a, int block, int grid_bits, int result_bits)
{
    a->block = block;
    a->grid_bits = grid_bits;
    a->result_bits = result_bits;
}

fpsim_status fpsim_accum_parse(fpsim_accum *out, const char *name)
{
    if (!out || !name) return fpsim_fail(FPSIM_EINVAL, "accumulation model: NULL argument");
    fpsim_accum a;
    memset(&a, 0, sizeof a);
    a.fold = FPSIM_FOLD_AUTO;

    /* Split off ",fold=X" and ",splitk=S" (in any order). */
    char base[64];
    size_t len = strlen(name);
    if (len == 0 || len >= sizeof base)
        return fpsim_fail(FPSIM_ENAME, "unknown accumulation model '%s'; valid: %s", name, fpsim_accum_names());
    memcpy(base, name, len + 1);
    int has_fold = 0, has_splitk = 0;
    a.splitk = 1;
    char *comma = strchr(base, ',');
    if (comma) *comma = '\0';
    for (char *opt = comma ? comma + 1 : NULL; opt;) {
        char *next = strchr(opt, ',');
        if (next) *next++ = '\0';
        if ((!strncmp(opt, "fold=", 5) && has_fold) || (!strncmp(opt, "splitk=", 7) && has_splitk))
            return fpsim_fail(FPSIM_EINVAL, "accumulation model '%s': '%.*s' is given twice", name,
                              (int)(strchr(opt, '=') - opt), opt);
        if (!strncmp(opt, "fold=", 5) && fpsim_fold_find(opt + 5) >= 0) {
            a.fold = (fpsim_fold)fpsim_fold_find(opt + 5);
            has_fold = 1;
        } else if (!strncmp(opt, "splitk=", 7)) {
            has_splitk = 1;
            char *end = NULL;
            long n = strtol(opt + 7, &end, 10);
            if (end == opt + 7 || *end || n < 1 || n > 1024)
                return fpsim_fail(FPSIM_EINVAL, "accumulation model '%s': splitk=S needs S in 1..1024", name);
            a.splitk = (int)n;
        } else {
            return fpsim_fail(FPSIM_ENAME, "unknown option '%s' in accumulation model '%s'; valid: fold=auto|fma|"
                              "mul-add|mul-mul-add|mula-fma|mulb-fma, splitk=S", opt, name);
        }
        opt = next;
    }

    if (!strcmp(base, "fp64")) {
        a.kind = FPSIM_ACCUM_FP64;
    } else if (!strcmp(base, "fp32")) {
        a.kind = FPSIM_ACCUM_FP32_BLAS;
    } else if (!strcmp(base, "fp32:seq")) {
        a.kind = FPSIM_ACCUM_FP32_SEQ;
    } else if (!strcmp(base, "hopper-qgmma") || !strncmp(base, "hopper-qgmma:", 13)) {
        a.kind = FPSIM_ACCUM_HOPPER_QGMMA;
        set_block_rule(&a, 32, 13, 14);
        const char *mode = base[12] ? base + 13 : "promote=128";
        if (!strcmp(mode, "fast")) {
            a.promote = 0;
        } else if (!strncmp(mode, "promote=", 8)) {
            char *end = NULL;
            long n = strtol(mode + 8, &end, 10);
            if (end == mode + 8 || *end || n <= 0 || n > (1L << 30) || n % 32)
                return fpsim_fail(FPSIM_EINVAL, "accumulation model '%s': promote=N needs N a positive multiple of "
                                  "32 (the QGMMA K per instruction)", name);
            a.promote = (int)n;
        } else {
            return fpsim_fail(FPSIM_ENAME, "unknown accumulation model '%s'; valid: %s", name, fpsim_accum_names());
        }
    } else if (!strcmp(base, "hopper-hgmma")) {
        a.kind = FPSIM_ACCUM_HOPPER_HGMMA;
        set_block_rule(&a, 16, 25, 24);
    } else if (!strcmp(base, "mma-sync-fp8")) {
        a.kind = FPSIM_ACCUM_MMA_SYNC_FP8;
        set_block_rule(&a, 16, 25, 24);
    } else {
        return fpsim_fail(FPSIM_ENAME, "unknown accumulation model '%s'; valid: %s", name, fpsim_accum_names());
    }

    /* Canonical name. */
    const char *kind_name = a.kind == FPSIM_ACCUM_FP64          ? "fp64"
                            : a.kind == FPSIM_ACCUM_FP32_BLAS   ? "fp32"
                            : a.kind == FPSIM_ACCUM_FP32_SEQ    ? "fp32:seq"
                            : a.kind == FPSIM_ACCUM_HOPPER_HGMMA ? "hopper-hgmma"
                            : a.kind == FPSIM_ACCUM_MMA_SYNC_FP8 ? "mma-sync-fp8"
                                                                 : NULL;
    char fold_suffix[40] = "";
    if (has_fold) snprintf(fold_suffix, sizeof fold_suffix, ",fold=%s", fold_names[a.fold]);
    if (a.splitk > 1)
        snprintf(fold_suffix + strlen(fold_suffix), sizeof fold_suffix - strlen(fold_suffix), ",splitk=%d", a.splitk);
    if (kind_name)
        snprintf(a.name, sizeof a.name, "%s%s", kind_name, fold_suffix);
    else if (a.promote == 0)
        snprintf(a.name, sizeof a.name, "hopper-qgmma:fast%s", fold_suffix);
    else
        snprintf(a.name, sizeof a.name, "hopper-qgmma:promote=%d%s", a.promote, fold_suffix);
    *out = a;
    return FPSIM_OK;
}
