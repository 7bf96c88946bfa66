/* replay_internal.h: state shared by the replay's own files (replay_*.c); not a public API. */
#ifndef FPSIM_REPLAY_INTERNAL_H
#define FPSIM_REPLAY_INTERNAL_H

#include <hdf5.h>

#include "fpsim_replay.h"

/* One recorded reference GEMM: operands in their stored shapes and the output, contiguous. */
typedef struct replay_gemm_record {
    int valid;
    size_t M, N, K;
    int a_trans, b_trans;
    fpsim_role a_role, b_role;
    size_t a_rows, a_cols, b_rows, b_cols;
    double *a, *b, *c;
    size_t a_cap, b_cap, c_cap;
} replay_gemm_record;

/* One recorded canonical point of the reference. */
typedef struct replay_point_record {
    int valid;
    size_t rows, cols, cap;
    double *data;
} replay_point_record;

typedef struct replay_state {
    fpsim_replay_dims dims;
    int step;                    /* step being run */
    int view;                    /* FPSIM_VIEW_* the observer records into */
    int failed;                  /* an allocation failed inside an observer */
    int threads;                 /* for the statistics of large arrays (any count: same bits) */
    fpsim_replay_result *cur;    /* the recipe being run */
    replay_gemm_record *rec;     /* [layer][site][pass] */
    replay_point_record *points; /* [point][layer+1] */
    fpsim_model ref;             /* the reference trajectory */
    fpsim_model *cand;           /* [recipe] each recipe's own trajectory */
    fpsim_recipe_engine **engines;
    fpsim_acts acts;             /* shared by all runs (overwritten by each forward) */
    int32_t *tokens, *targets;
    uint8_t *mask;
    double *scratch_c;           /* local view outputs */
    size_t scratch_cap;
} replay_state;

static inline size_t replay_rec_index(const replay_state *s, int layer, int site, int pass)
{
    (void)s;
    return ((size_t)layer * FPSIM_SITE_COUNT + (size_t)site) * FPSIM_PASS_COUNT + (size_t)pass;
}

static inline size_t replay_point_slot(const replay_state *s, int point, int layer)
{
    return (size_t)point * FPSIM_REPLAY_POINT_LAYERS(&s->dims) + (size_t)(layer + 1);
}

fpsim_numerics replay_recorder_numerics(replay_state *s);
fpsim_status replay_record_point(void *ctx, fpsim_point point, int layer, const double *data,
                                 size_t rows, size_t cols);
fpsim_status replay_compare_point(void *ctx, fpsim_point point, int layer, const double *data,
                                  size_t rows, size_t cols);
void replay_observe_gemm(void *ctx, const fpsim_gemm_call *c, const fpsim_operand_report *a,
                         const fpsim_operand_report *b);

/* Group "bias_variance" of an open results file (biasvar.c). */
fpsim_status replay_biasvar_write(hid_t file, const fpsim_biasvar_result *bv);

/* The name of a recipe's group under /recipes: the recipe text with '/' (HDF5's separator)
 * written as '_'. Two recipes with the same group name cannot be in one results file. */
void replay_recipe_group_name(char *out, size_t cap, const char *recipe);

#endif
