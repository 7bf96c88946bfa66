/* replay_record.c: the reference run's recording engine and the comparison observers.
 *
 * The reference runs on the fp64 engine wrapped by a recorder that keeps, for every GEMM
 * (layer, site, pass), contiguous copies of both operands in their stored shapes and of the
 * output. The model's canonical points (block outputs, gradients of the residual stream, ...)
 * are copied as they go by. A recipe's runs are then compared against these copies:
 *   accumulated: the recipe's own forward/backward; the recipe engine's observer finds the
 *                reference call with the same key and compares outputs and operands;
 *   local:       each recorded call is re-issued to the recipe engine with the reference's
 *                operands (replay_run.c), compared by the same observer. */
#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"

static fpsim_status rec_copy(double **dst, size_t *cap, const double *src, size_t rows,
                             size_t cols, size_t ld)
{
    size_t n = rows * cols;
    if (n > *cap) {
        double *p = realloc(*dst, n * sizeof *p);
        if (!p) return fpsim_fail(FPSIM_ENOMEM, "replay: cannot allocate a recording of %zu values", n);
        *dst = p;
        *cap = n;
    }
    for (size_t i = 0; i < rows; i++) memcpy(*dst + i * cols, src + i * ld, cols * sizeof **dst);
    return FPSIM_OK;
}

/* Stored shape of operand `which` (0: A, 1: B) of a call. */
static void stored_shape(const fpsim_gemm_call *c, int which, size_t *rows, size_t *cols)
{
    const fpsim_gemm_operand *op = which == 0 ? &c->a : &c->b;
    if (which == 0) {
        *rows = op->trans ? c->K : c->M;
        *cols = op->trans ? c->M : c->K;
    } else {
        *rows = op->trans ? c->N : c->K;
        *cols = op->trans ? c->K : c->N;
    }
}

static fpsim_status recorder_gemm(void *ctx, const fpsim_gemm_call *c)
{
    replay_state *s = ctx;
    fpsim_numerics ref = fpsim_numerics_fp64();
    fpsim_status st = ref.gemm(ref.ctx, c);
    if (st) return st;
    if (c->layer < 0 || c->layer >= s->dims.layers)
        return fpsim_fail(FPSIM_EINVAL, "replay: GEMM call with layer %d out of range", c->layer);
    replay_gemm_record *r = &s->rec[replay_rec_index(s, c->layer, c->site, c->pass)];
    r->M = c->M;
    r->N = c->N;
    r->K = c->K;
    r->a_trans = c->a.trans;
    r->b_trans = c->b.trans;
    r->a_role = c->a.role;
    r->b_role = c->b.role;
    stored_shape(c, 0, &r->a_rows, &r->a_cols);
    stored_shape(c, 1, &r->b_rows, &r->b_cols);
    if ((st = rec_copy(&r->a, &r->a_cap, c->a.data, r->a_rows, r->a_cols, c->a.ld))) return st;
    if ((st = rec_copy(&r->b, &r->b_cap, c->b.data, r->b_rows, r->b_cols, c->b.ld))) return st;
    if ((st = rec_copy(&r->c, &r->c_cap, c->c, c->M, c->N, c->ldc))) return st;
    r->valid = 1;
    return FPSIM_OK;
}

fpsim_numerics replay_recorder_numerics(replay_state *s)
{
    fpsim_numerics nx = fpsim_numerics_fp64();
    nx.name = "fp64 (recorded)";
    nx.ctx = s;
    nx.gemm = recorder_gemm;
    return nx;
}

fpsim_status replay_record_point(void *ctx, fpsim_point point, int layer, const double *data,
                                 size_t rows, size_t cols)
{
    replay_state *s = ctx;
    replay_point_record *p = &s->points[replay_point_slot(s, point, layer)];
    p->rows = rows;
    p->cols = cols;
    p->valid = 1;
    return rec_copy(&p->data, &p->cap, data, rows, cols, cols);
}

fpsim_status replay_compare_point(void *ctx, fpsim_point point, int layer, const double *data,
                                  size_t rows, size_t cols)
{
    replay_state *s = ctx;
    const replay_point_record *p = &s->points[replay_point_slot(s, point, layer)];
    if (!p->valid || p->rows != rows || p->cols != cols) return FPSIM_OK; /* nothing to compare */
    fpsim_stats *st = &s->cur->point[fpsim_replay_point_index(&s->dims, s->step, point, layer)];
    return fpsim_stats_add_f64(st, p->data, data, rows * cols, s->threads);
}

/* The observer of the recipe engine: compares a call's output with the reference's and records
 * both operands' statistics under the current view. */
void replay_observe_gemm(void *ctx, const fpsim_gemm_call *c, const fpsim_operand_report *a,
                         const fpsim_operand_report *b)
{
    replay_state *s = ctx;
    if (s->failed || c->layer < 0 || c->layer >= s->dims.layers) return;
    const replay_gemm_record *r = &s->rec[replay_rec_index(s, c->layer, c->site, c->pass)];
    const fpsim_replay_dims *d = &s->dims;
    fpsim_replay_result *res = s->cur;
    int view = s->view;
    if (r->valid && r->M == c->M && r->N == c->N) {
        fpsim_stats *g = &res->gemm[fpsim_replay_gemm_index(d, s->step, view, c->layer, c->site, c->pass)];
        for (size_t i = 0; i < c->M && !s->failed; i++)
            if (fpsim_stats_add_f64(g, r->c + i * c->N, c->c + i * c->ldc, c->N, s->threads)) s->failed = 1;
    }
    const fpsim_operand_report *ops[2] = {a, b};
    for (int w = 0; w < 2; w++) {
        const fpsim_operand_report *o = ops[w];
        size_t k = fpsim_replay_operand_index(d, s->step, view, c->layer, c->site, c->pass, o->role);
        fpsim_stats_merge(&res->operand[k], &o->quant);
        fpsim_replay_scale *sc = &res->scale[k];
        if (o->scale_count) {
            if (sc->count == 0 || o->scale_log2_min < sc->log2_min) sc->log2_min = o->scale_log2_min;
            if (sc->count == 0 || o->scale_log2_max > sc->log2_max) sc->log2_max = o->scale_log2_max;
            sc->log2_sum += o->scale_log2_sum;
            sc->count += o->scale_count;
        }
        if (view == FPSIM_VIEW_ACCUMULATED && r->valid) {
            const double *ref = w == 0 ? r->a : r->b;
            size_t rr = w == 0 ? r->a_rows : r->b_rows, rc = w == 0 ? r->a_cols : r->b_cols;
            if (rr == o->rows && rc == o->cols) {
                size_t kd = fpsim_replay_operand_index(d, s->step, 0, c->layer, c->site, c->pass, o->role);
                if (fpsim_stats_add_f64(&res->operand_drift[kd], ref, o->received, rr * rc, s->threads))
                    s->failed = 1;
            }
        }
    }
}
