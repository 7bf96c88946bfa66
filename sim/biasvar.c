/* biasvar.c: bias vs variance of a summed weight gradient under RNE and stochastic rounding.
 *
 * The claim to measure (rl-and-recipes.md 4.4, 6.3 E8): the backward pass sums over many tokens,
 * so random rounding error averages out while bias does not. For a weight gradient
 * G_N = dY[:N]^T X[:N] (N tokens of one linear layer's wgrad GEMM), each case quantizes both
 * operands along the token dimension, as the wgrad GEMM does (columnwise copies), multiplies the
 * dequantized values in FP32 (sgemm) and compares with G_N computed in FP64. Over S seeds:
 *     mean      Gbar = (1/S) sum_s G^_s
 *     variance  V = sum_s ||G^_s - Gbar||^2 / (S - 1)                (per-seed total variance)
 *     bias^2    ||Gbar - G||^2 - V / S   (the seed mean still carries V/S of noise; clamped at 0)
 *     rmse^2    (1/S) sum_s ||G^_s - G||^2
 * each reported relative to ||G_N||. Deterministic cases (RNE) have one seed: bias = rmse.
 * Expected: SR's error falls ~N^-1/2 (independent errors add in quadrature while G grows ~N),
 * RNE's flattens at its bias floor.
 *
 * Cases (fixed list):
 *   e4m3-rne, e4m3-sr    per-tensor E4M3 with TE current-scaling arithmetic: scale =
 *                        fp32(448 / amax), element = e4m3(fp32(x * scale)) (RNE, or SR with
 *                        fpsim_sr_word bits), dequant = decode * fp32(1 / scale);
 *   nvfp4-rne, nvfp4-sr, nvfp4-sr-rht   fpsim_block_quantize with scheme nvfp4 (TE chain, 1x16
 *                        blocks along tokens) with sr=0|1, rht=0|1;
 *   nvfp4-sr-up, nvfp4-sr-rht-up   a what-if, not a TE policy: the same chain with the E4M3 block
 *                        scale rounded UP instead of RNE (so block_amax * enc <= 6 and nothing
 *                        saturates), from the reference quantizer sim/nvfp4_ref.c.
 *
 * Why NVFP4 + SR keeps a bias (docs/replay.md, experiments/nvfp4-sr-bias): the E4M3 block scale
 * is rounded to nearest, so in about half of the blocks it rounds DOWN and the block maximum
 * lands above 6 (up to 6 * (1 + 2^-4) for normal scales); satfinite clips it to 6 whatever the
 * random bits, a shrink toward zero of the largest elements that no number of seeds removes.
 * Each NVFP4 case therefore also gets the closed-form expectation of its G^ from the reference
 * quantizer: with TE's 8 random bits, with unlimited bits (the clip alone), without the clip,
 * and the fraction of blocks and elements above 6. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_arith.h"
#include "fpsim_core.h"
#include "fpsim_formats.h"
#include "fpsim_h5.h"
#include "fpsim_nvfp4ref.h"
#include "fpsim_sgemm.h"
#include "replay_internal.h"

typedef struct bv_case {
    const char *name;
    const char *scheme; /* NULL: not the block quantizer (per-tensor E4M3, or the reference) */
    int sr;
    int nvfp4;          /* NVFP4: 1 from fpsim_block_quantize, 2 from the reference quantizer */
    int rht, scale_up;  /* the reference's settings for this case (NVFP4 only) */
} bv_case;

static const bv_case bv_cases[] = {
    {"e4m3-rne", NULL, 0, 0, 0, 0},
    {"e4m3-sr", NULL, 1, 0, 0, 0},
    {"nvfp4-rne", "nvfp4:sr=0,rht=0", 0, 1, 0, 0},
    {"nvfp4-sr", "nvfp4:sr=1,rht=0", 1, 1, 0, 0},
    {"nvfp4-sr-rht", "nvfp4:sr=1,rht=1", 1, 1, 1, 0},
    {"nvfp4-sr-up", NULL, 1, 2, 0, 1},
    {"nvfp4-sr-rht-up", NULL, 1, 2, 1, 1},
};
enum { BV_NCASES = sizeof bv_cases / sizeof bv_cases[0] };

/* Per-tensor E4M3 of the transposed operand x (rows x cols stored; quantized as cols x rows,
 * element index = position in that columnwise copy, so SR bits follow TE's columnwise order).
 * Output: the dequantized values in the input's rows x cols shape. */
static void e4m3_tensor(float *deq, const float *x, size_t rows, size_t cols, const fpsim_spec *spec,
                        uint64_t seed, uint32_t stream)
{
    float amax = 0.0f;
    for (size_t i = 0; i < rows * cols; i++) {
        float a = fabsf(x[i]);
        if (a > amax) amax = a;
    }
    float scale = amax > 0.0f ? 448.0f / amax : 1.0f;
    float scale_inv = 1.0f / scale;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            float y = x[i * cols + j] * scale;
            uint64_t index = (uint64_t)j * rows + i;
            uint32_t rb = spec->round == FPSIM_SR ? fpsim_sr_word(seed, stream, index) : 0;
            uint32_t code = fpsim_round_f32(f2u(y), spec, rb);
            deq[i * cols + j] = u2f(fpsim_decode_f32(code, spec)) * scale_inv;
        }
}

typedef struct bv_work {
    float *xa, *xb;      /* the N-prefix of dY and X as float */
    float *da, *db;      /* dequantized */
    float *g;            /* out x in, one estimate */
    double *gsum;        /* sum over seeds */
    fpsim_qtensor qa, qb;
} bv_work;

typedef struct bv_work_dims {
    size_t out, in;
    int threads;
} bv_work_dims;

/* One estimate G^ (into w->g) of case c for prefix n under `seed`. */
static fpsim_status bv_estimate(bv_work *w, const bv_case *c, const fpsim_scheme *scheme,
                                const fpsim_spec *spec, const fpsim_biasvar_config *cfg, size_t n,
                                uint64_t seed)
{
    uint32_t sa = fpsim_replay_stream(cfg->layer, cfg->site, FPSIM_PASS_WGRAD, FPSIM_ROLE_GRAD);
    uint32_t sb = fpsim_replay_stream(cfg->layer, cfg->site, FPSIM_PASS_WGRAD, FPSIM_ROLE_ACT);
    const float *a = w->da, *b = w->db;
    if (c->nvfp4 == 2) {
        fpsim_nvfp4ref_opts o = {FPSIM_NVFP4REF_SR, c->scale_up, c->rht, seed, sa, cfg->threads};
        fpsim_status st = fpsim_nvfp4ref_quantize(w->da, NULL, w->xa, n, cfg->out, &o);
        o.stream = sb;
        if (!st) st = fpsim_nvfp4ref_quantize(w->db, NULL, w->xb, n, cfg->in, &o);
        if (st) return st;
    } else if (!c->scheme) {
        e4m3_tensor(w->da, w->xa, n, cfg->out, spec, seed, sa);
        e4m3_tensor(w->db, w->xb, n, cfg->in, spec, seed, sb);
    } else {
        fpsim_qopts o;
        fpsim_qopts_default(&o);
        o.axis = FPSIM_AXIS_COLS;
        o.seed = seed;
        o.want = FPSIM_QWANT_DEQUANT;
        o.threads = cfg->threads;
        o.stream = sa;
        fpsim_status st = fpsim_block_quantize(&w->qa, scheme, w->xa, n, cfg->out, &o);
        if (st) return st;
        o.stream = sb;
        if ((st = fpsim_block_quantize(&w->qb, scheme, w->xb, n, cfg->in, &o))) return st;
        a = w->qa.dequant;
        b = w->qb.dequant;
    }
    /* G^ (out x in) = A^T B with A (n x out), B (n x in): FP32 accumulation. */
    fpsim_sgemm(CblasTrans, CblasNoTrans, (int)cfg->out, (int)cfg->in, (int)n, a, (int)cfg->out, b,
                (int)cfg->in, w->g, (int)cfg->in);
    return FPSIM_OK;
}

/* ||E^T F - G|| / ||G|| for operands e (n x out) and f (n x in) given as float, G = gref. */
static double bv_rel_err(bv_work *w, const bv_work_dims *d, const float *e, const float *f, size_t n,
                         const double *gref, double gnorm)
{
    fpsim_sgemm(CblasTrans, CblasNoTrans, (int)d->out, (int)d->in, (int)n, e, (int)d->out, f, (int)d->in,
                w->g, (int)d->in);
    double s = 0;
    for (size_t i = 0; i < d->out * d->in; i++) {
        double x = (double)w->g[i] - gref[i];
        s += x * x;
    }
    return sqrt(s) / gnorm;
}

/* The closed-form side of an NVFP4 case at prefix n: ||E[G^] - G|| with both operands replaced by
 * their expectation under `elem` (independent streams: E[A^T B] = E[A]^T E[B]), and the counts. */
static fpsim_status bv_expect(double *rel, fpsim_nvfp4ref_counts cnt[2], bv_work *w, const bv_case *c,
                              const bv_work_dims *d, int elem, size_t n, const double *gref,
                              double gnorm)
{
    fpsim_nvfp4ref_opts o = {elem, c->scale_up, c->rht, 0, 0, d->threads};
    fpsim_status st = fpsim_nvfp4ref_quantize(w->da, &cnt[0], w->xa, n, d->out, &o);
    if (!st) st = fpsim_nvfp4ref_quantize(w->db, &cnt[1], w->xb, n, d->in, &o);
    if (!st) *rel = bv_rel_err(w, d, w->da, w->db, n, gref, gnorm);
    return st;
}

fpsim_status fpsim_biasvar_run(fpsim_biasvar_result *out, const fpsim_biasvar_config *cfg)
{
    memset(out, 0, sizeof *out);
    if (cfg->tokens < 64 || cfg->seeds < 2)
        return fpsim_fail(FPSIM_EINVAL, "bias-variance: need at least 64 tokens and 2 seeds");
    fpsim_spec rne, sr;
    fpsim_status st = fpsim_spec_make(&rne, FPSIM_E4M3, NULL, FPSIM_RNE, 0);
    if (!st) st = fpsim_spec_make(&sr, FPSIM_E4M3, NULL, FPSIM_SR, 0);
    if (st) return st;
    fpsim_scheme schemes[BV_NCASES];
    for (int k = 0; k < BV_NCASES; k++) {
        if (bv_cases[k].scheme && (st = fpsim_scheme_parse(&schemes[k], bv_cases[k].scheme))) return st;
        snprintf(out->case_names[k], sizeof out->case_names[k], "%s", bv_cases[k].name);
        if (bv_cases[k].scheme) {
            if ((st = fpsim_scheme_format(out->case_schemes[k], sizeof out->case_schemes[k], &schemes[k])))
                return st;
        } else if (bv_cases[k].nvfp4) {
            snprintf(out->case_schemes[k], sizeof out->case_schemes[k],
                     "what-if: nvfp4 TE chain, sr, rht=%d, E4M3 block scale rounded up (not RNE); "
                     "sim/nvfp4_ref.c", bv_cases[k].rht);
        } else {
            snprintf(out->case_schemes[k], sizeof out->case_schemes[k],
                     "e4m3 per-tensor, scale fp32(448/amax), %s", bv_cases[k].sr ? "sr" : "rne");
        }
    }
    out->ncases = BV_NCASES;
    out->seeds = cfg->seeds;
    for (size_t n = 64; n <= cfg->tokens && out->nns < FPSIM_BIASVAR_MAX_NS && n <= 65536; n *= 2)
        out->ns[out->nns++] = n;

    size_t T = out->ns[out->nns - 1], nout = cfg->out, nin = cfg->in;
    bv_work w;
    memset(&w, 0, sizeof w);
    w.xa = malloc(T * nout * sizeof *w.xa);
    w.xb = malloc(T * nin * sizeof *w.xb);
    w.da = malloc(T * nout * sizeof *w.da);
    w.db = malloc(T * nin * sizeof *w.db);
    w.g = malloc(nout * nin * sizeof *w.g);
    w.gsum = malloc(nout * nin * sizeof *w.gsum);
    double *gref = malloc(nout * nin * sizeof *gref);
    if (!w.xa || !w.xb || !w.da || !w.db || !w.g || !w.gsum || !gref) {
        st = fpsim_fail(FPSIM_ENOMEM, "bias-variance: out of memory");
        goto done;
    }
    /* The operands as the quantizers read them: float32 (RNE cast of the FP64 values). */
    for (size_t i = 0; i < T * nout; i++) w.xa[i] = (float)cfg->dy[i];
    for (size_t i = 0; i < T * nin; i++) w.xb[i] = (float)cfg->x[i];

    for (int j = 0; j < out->nns; j++) {
        size_t n = out->ns[j];
        /* The FP64 reference G_N on the same float32 operands. */
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)nout, (int)nin, (int)n, 1.0, cfg->dy,
                    (int)nout, cfg->x, (int)nin, 0.0, gref, (int)nin);
        double gnorm2 = 0;
        for (size_t i = 0; i < nout * nin; i++) gnorm2 += gref[i] * gref[i];
        for (int k = 0; k < BV_NCASES; k++) {
            const bv_case *c = &bv_cases[k];
            int S = c->sr ? cfg->seeds : 1;
            double sq = 0; /* sum_s ||G^_s - G||^2 */
            memset(w.gsum, 0, nout * nin * sizeof *w.gsum);
            for (int s = 0; s < S; s++) {
                uint64_t seed = fpsim_replay_step_seed(cfg->seed, (uint64_t)s);
                if ((st = bv_estimate(&w, c, &schemes[k], c->sr ? &sr : &rne, cfg, n, seed))) goto done;
                for (size_t i = 0; i < nout * nin; i++) {
                    double g = w.g[i], e = g - gref[i];
                    w.gsum[i] += g;
                    sq += e * e;
                }
            }
            double b2 = 0, dot = 0, mnorm2 = 0;
            for (size_t i = 0; i < nout * nin; i++) {
                double m = w.gsum[i] / S, e = m - gref[i];
                b2 += e * e;
                dot += m * gref[i];
                mnorm2 += m * m;
            }
            /* sum_s ||G^_s - Gbar||^2 = sum_s ||G^_s - G||^2 - S ||Gbar - G||^2 */
            double var = S > 1 ? fmax(0.0, (sq - S * b2) / (S - 1)) : 0.0;
            double bias2 = fmax(0.0, b2 - var / S);
            double gn = sqrt(gnorm2);
            out->bias[k][j] = sqrt(bias2) / gn;
            out->std[k][j] = sqrt(var) / gn;
            out->rmse[k][j] = sqrt(sq / S) / gn;
            out->cosine[k][j] = dot / (sqrt(mnorm2) * gn);

            /* NVFP4: the expectation in closed form, with TE's bits, unlimited bits, no clip */
            out->bias_expect[k][j] = out->bias_clip[k][j] = out->bias_noclip[k][j] = NAN;
            out->over6[k][j] = out->sat[k][j] = out->sat_dy[k][j] = out->sat_x[k][j] = NAN;
            if (c->nvfp4) {
                bv_work_dims dims = {nout, nin, cfg->threads};
                fpsim_nvfp4ref_counts cnt[2];
                int first = c->sr ? FPSIM_NVFP4REF_EXPECT_TE : FPSIM_NVFP4REF_RNE;
                st = bv_expect(&out->bias_expect[k][j], cnt, &w, c, &dims, first, n, gref, gn);
                if (!st && c->sr)
                    st = bv_expect(&out->bias_clip[k][j], cnt, &w, c, &dims, FPSIM_NVFP4REF_EXPECT_IDEAL,
                                   n, gref, gn);
                if (!st && c->sr)
                    st = bv_expect(&out->bias_noclip[k][j], cnt, &w, c, &dims, FPSIM_NVFP4REF_NOCLIP, n,
                                   gref, gn);
                if (st) goto done;
                double nb = (double)(cnt[0].blocks + cnt[1].blocks);
                double ne = (double)(cnt[0].elems + cnt[1].elems);
                out->over6[k][j] = nb > 0 ? (double)(cnt[0].blocks_over6 + cnt[1].blocks_over6) / nb : 0.0;
                out->sat[k][j] = ne > 0 ? (double)(cnt[0].elems_sat + cnt[1].elems_sat) / ne : 0.0;
                out->sat_dy[k][j] = cnt[0].elems ? (double)cnt[0].elems_sat / (double)cnt[0].elems : 0.0;
                out->sat_x[k][j] = cnt[1].elems ? (double)cnt[1].elems_sat / (double)cnt[1].elems : 0.0;
            }
        }
    }
done:
    fpsim_qtensor_free(&w.qa);
    fpsim_qtensor_free(&w.qb);
    free(w.xa);
    free(w.xb);
    free(w.da);
    free(w.db);
    free(w.g);
    free(w.gsum);
    free(gref);
    return st;
}

/* ---- Gathering the operands from the replay's reference model ---------------------------- */

typedef struct bv_capture {
    int layer, site;
    double *dy, *x;     /* (cap, out), (cap, in) */
    size_t rows, cap, out, in;
} bv_capture;

/* The fp32 engine, also copying the wgrad operands of (layer, site). */
static fpsim_status capture_gemm(void *ctx, const fpsim_gemm_call *c)
{
    bv_capture *cap = ctx;
    fpsim_numerics ref = fpsim_numerics_fp32();
    fpsim_status st = ref.gemm(ref.ctx, c);
    if (st || c->layer != cap->layer || (int)c->site != cap->site || c->pass != FPSIM_PASS_WGRAD)
        return st;
    /* wgrad: A = dY stored (T x out), B = X stored (T x in); see fpsim_numerics.h. */
    size_t T = c->K, take = T < cap->cap - cap->rows ? T : cap->cap - cap->rows;
    for (size_t i = 0; i < take; i++) {
        memcpy(cap->dy + (cap->rows + i) * cap->out, c->a.data + i * c->a.ld, cap->out * sizeof(double));
        memcpy(cap->x + (cap->rows + i) * cap->in, c->b.data + i * c->b.ld, cap->in * sizeof(double));
    }
    cap->rows += take;
    return FPSIM_OK;
}

fpsim_status fpsim_replay_biasvar(fpsim_replay *r, fpsim_biasvar_result *out, int seeds,
                                  size_t max_tokens)
{
    replay_state *s = r->state;
    const fpsim_model_config *m = &r->config.model;
    size_t N = fpsim_model_tokens(m), C = (size_t)m->d;
    int L = m->layers;
    bv_capture cap;
    memset(&cap, 0, sizeof cap);
    /* The last block's attention output projection: a d x d weight (the cheapest wgrad of a
     * block) whose gradient needs only the head's and one block's backward. */
    cap.layer = L - 1;
    cap.site = FPSIM_SITE_ATTN_OUT;
    cap.out = C;
    cap.in = C;
    size_t want = 64;
    while (want * 2 <= max_tokens && want * 2 <= 65536) want *= 2;
    cap.cap = want;
    cap.dy = malloc(want * cap.out * sizeof *cap.dy);
    cap.x = malloc(want * cap.in * sizeof *cap.x);
    fpsim_status st = FPSIM_OK;
    if (!cap.dy || !cap.x) st = fpsim_fail(FPSIM_ENOMEM, "bias-variance: out of memory");
    /* Realistic operands, gathered cheaply: the FP32 engine (the sweep's own reference G_N is
     * FP64 on these values), forward, then the head's and the last block's backward only. */
    fpsim_numerics fwd = fpsim_numerics_fp32();
    fpsim_numerics nx = fpsim_numerics_fp32();
    nx.ctx = &cap;
    nx.gemm = capture_gemm;
    double *dtop = s->acts.dresid + (size_t)L * N * C, *dblock = s->acts.dresid + (size_t)(L - 1) * N * C;
    /* Fresh batches, far from the replay's own (index 2^20 + b). */
    for (uint64_t b = 0; !st && cap.rows < want; b++) {
        st = fpsim_task_batch(&r->config.task, m, (UINT64_C(1) << 20) + b, s->tokens, s->targets, s->mask);
        if (!st) st = fpsim_model_forward(&s->ref, &fwd, &s->acts, s->tokens, s->targets, s->mask, NULL, NULL, NULL);
        if (!st) st = fpsim_head_backward(&s->ref, &nx, &s->acts.head, dtop, &s->ref.grads);
        if (!st) st = fpsim_block_backward(&s->ref, &nx, L - 1, dtop, &s->acts.blocks[L - 1], dblock, &s->ref.grads);
    }
    if (!st) {
        fpsim_biasvar_config bc = {cap.dy, cap.x, cap.rows, cap.out, cap.in, cap.layer, cap.site,
                                   seeds, r->config.seed, r->config.threads};
        st = fpsim_biasvar_run(out, &bc);
        out->layer = cap.layer;
        out->site = cap.site;
    }
    free(cap.dy);
    free(cap.x);
    return st;
}

/* ---- HDF5 --------------------------------------------------------------------------------- */

fpsim_status replay_biasvar_write(hid_t file, const fpsim_biasvar_result *bv)
{
    hid_t g;
    fpsim_status st = fpsim_h5_group_create(&g, file, "bias_variance");
    if (st) return st;
    const char *names[FPSIM_BIASVAR_MAX_CASES], *schemes[FPSIM_BIASVAR_MAX_CASES];
    for (int k = 0; k < bv->ncases; k++) {
        names[k] = bv->case_names[k];
        schemes[k] = bv->case_schemes[k];
    }
    int64_t ns[FPSIM_BIASVAR_MAX_NS];
    for (int j = 0; j < bv->nns; j++) ns[j] = (int64_t)bv->ns[j];
    st = fpsim_h5_attr_strings(g, "cases", names, (size_t)bv->ncases);
    if (!st) st = fpsim_h5_attr_strings(g, "case_schemes", schemes, (size_t)bv->ncases);
    if (!st) st = fpsim_h5_attr_int64(g, "seeds", bv->seeds);
    if (!st) st = fpsim_h5_attr_int64(g, "layer", bv->layer);
    if (!st) st = fpsim_h5_attr_string(g, "site", fpsim_site_name(bv->site));
    if (!st) st = fpsim_h5_attr_string(g, "pass", "wgrad");
    if (!st) st = fpsim_h5_attr_string(g, "definition",
                                       "G_N = dY[:N]^T X[:N]; bias = sqrt(max(0, ||mean_s G^_s - G||^2 - V/S)), "
                                       "std = sqrt(V), V = sum_s ||G^_s - mean||^2/(S-1), rmse = "
                                       "sqrt(mean_s ||G^_s - G||^2); all divided by ||G_N||");
    size_t dn[1] = {(size_t)bv->nns};
    if (!st) st = fpsim_h5_write(g, "n", FPSIM_H5_I64, 1, dn, ns, 0);
    size_t d2[2] = {(size_t)bv->ncases, (size_t)bv->nns};
    double buf[FPSIM_BIASVAR_MAX_CASES * FPSIM_BIASVAR_MAX_NS];
    enum { NT = 11 };
    const double (*tabs[NT])[FPSIM_BIASVAR_MAX_NS] = {
        bv->bias,      bv->std,         bv->rmse,  bv->cosine, bv->bias_expect, bv->bias_clip,
        bv->bias_noclip, bv->over6,     bv->sat,   bv->sat_dy, bv->sat_x};
    static const char *const tnames[NT] = {"bias",      "std",         "rmse",  "cosine",
                                           "bias_expect", "bias_clip", "bias_noclip", "over6",
                                           "sat",       "sat_dy",      "sat_x"};
    if (!st) st = fpsim_h5_attr_string(g, "definition_nvfp4",
                                       "NVFP4 cases (NaN otherwise), from sim/nvfp4_ref.c: bias_expect = "
                                       "||E[A]^T E[B] - G||/||G|| with E over the SR draws in closed form "
                                       "(TE's 8 random bits: lo + step floor(256 frac)/256; RNE case: its "
                                       "one result); bias_clip = same with unlimited random bits "
                                       "(min(|y|,6)); bias_noclip = unlimited bits, no clip at 6; over6 = "
                                       "fraction of nonzero blocks with block_amax*enc > 6; sat = fraction "
                                       "of nonzero elements with |x*enc| > 6; both operands (sat_dy, sat_x: each "
                                       "operand alone)");
    for (int t = 0; t < NT && !st; t++) {
        for (int k = 0; k < bv->ncases; k++)
            for (int j = 0; j < bv->nns; j++) buf[k * bv->nns + j] = tabs[t][k][j];
        st = fpsim_h5_write(g, tnames[t], FPSIM_H5_F64, 2, d2, buf, 0);
        if (!st) {
            hid_t ds = H5Dopen2(g, tnames[t], H5P_DEFAULT);
            st = fpsim_h5_attr_string(ds, "dims", "case,n");
            H5Dclose(ds);
        }
    }
    H5Gclose(g);
    return st;
}
