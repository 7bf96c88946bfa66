/* engine_internal.h: the generator / trainer engine's private parts (engine_*.c only). */
#ifndef FPSIM_ENGINE_INTERNAL_H
#define FPSIM_ENGINE_INTERNAL_H

#include "fpsim_block.h"
#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "fpsim_gemm.h"
#include "fpsim_mismatch.h"
#include "fpsim_replay.h"

/* One side's kernel numerics: the recipe engine plus the options of fpsim_engine_config. */
typedef struct engine_kernel {
    fpsim_engine_config cfg;
    fpsim_engine_plan plan;
    fpsim_recipe_engine *re;
    fpsim_numerics rnx;  /* the recipe engine's hook */
    fpsim_accum accum;
    int own_accum;       /* 1: FP8 fprop GEMMs go through fpsim_gemm with `accum` */
} engine_kernel;

struct fpsim_engine {
    engine_kernel k[2];          /* k[0] this engine's, k[1] the swapped-in config's */
    int nk;
    uint64_t swap_layers;
    unsigned swap_parts;
    int style;
    fpsim_model w;               /* the engine's weights (refitted copy of the masters) */
    fpsim_numerics nx;           /* the GEMM hook handed to the layers */
    int threads;
    char name[FPSIM_ENGINE_TEXT_MAX];
    /* KV cache: (L, n, len, kvw) of K and of V, values as the attention reads them */
    size_t cache_n, cache_len, kvw;
    double *kcache, *vcache;
    double *kv_scale;            /* 2 L dequantization multipliers (K, V per layer) */
    uint64_t kv_clipped, kv_seen;
    double *amax;                /* when set: 2 L running amax of K, V (calibration) */
    /* row buffers (grown to the largest row count seen) */
    size_t cap_rows;
    double *ln, *qkv, *atty, *proj, *res2, *gu, *h, *down, *rstd;
    size_t *seq, *pos;
    int32_t *tok;
    double *dec_resid, *dec_lnf; /* decode: one position's canonical points */
    float *scratch;
    size_t scratch_cap;
    /* own-accumulation GEMM buffers */
    fpsim_qtensor qa, qb;
    float *fa, *fb, *fc;
    size_t cap_fa, cap_fb, cap_fc;
    fpsim_spec e4m3;
};

/* The kernel that rules `part` (FPSIM_PART_*) of `layer` (-1 .. L). */
static inline const engine_kernel *engine_kernel_at(const fpsim_engine *e, int layer, unsigned part)
{
    if (e->nk == 2 && ((e->swap_layers >> (unsigned)(layer + 1)) & 1u) && (e->swap_parts & part))
        return &e->k[1];
    return &e->k[0];
}

float fpsim_engine_sum_f32(float *x, int n, int order);
void fpsim_engine_rmsnorm_f32(double *out, const double *x, const double *w, size_t rows,
                              size_t c, double eps, int order, int act_round, float *scratch);
void fpsim_engine_attention_row_f32(double *out, const double *q, const double *k_rows,
                                    const double *v_rows, size_t stride, int t, int hd,
                                    int order, int act_round, float *scratch);
/* The GEMM hook (engine_gemm.c): ctx = the engine. */
fpsim_status fpsim_engine_gemm(void *ctx, const fpsim_gemm_call *call);

#endif
