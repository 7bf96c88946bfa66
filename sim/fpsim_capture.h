/* fpsim_capture.h: load a training step captured from PyTorch (scripts/capture_torch.py) and
 * compare fpsim's engines with it.
 *
 * A capture file (schema in docs/model.md, "Capture") holds a model spec, every weight under its
 * fpsim name and shape, one batch (tokens, targets, loss mask), and PyTorch's float32 results of
 * one step: the residual stream at the canonical points, the final norm output, the logits, the
 * loss and every parameter gradient. Loading validates the whole schema first and fills an fpsim
 * model with the captured weights, so the replay and the mismatch run on PyTorch's exact step.
 *
 * Every fallible function returns fpsim_status with an fpsim_fail() message; nothing prints. */
#ifndef FPSIM_CAPTURE_H
#define FPSIM_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "fpsim_model.h"
#include "fpsim_numerics.h"
#include "fpsim_status.h"

#define FPSIM_CAPTURE_KIND "fpsim-capture"
#define FPSIM_CAPTURE_SCHEMA_VERSION 1

typedef struct fpsim_capture {
    char model_spec[512];     /* root attribute "model", as parsed into model.config */
    fpsim_model model;        /* created from the spec, parameters = the captured weights */
    int32_t *tokens;          /* (N) batch/tokens, row-major (B, T) */
    int32_t *targets;         /* (N) batch/targets */
    uint8_t *mask;            /* (N) batch/mask, 1: the token counts in the loss */
    double *embed;            /* (N, C)    acts/embed: resid[0] */
    double *block_out;        /* (L, N, C) acts/block_out: resid[l+1] */
    double *final_norm;       /* (N, C)    acts/final_norm */
    double *logits;           /* (N, V)    acts/logits */
    double loss;              /* loss[0] */
    double *grads;            /* num_params, grads/<name> in fpsim's slab order */
} fpsim_capture;

/* Read and validate `path`: root attribute kind == "fpsim-capture" and schema_version == 1 (an
 * unknown version is FPSIM_EUNSUPPORTED naming it), model spec accepted by
 * fpsim_model_config_parse, and every dataset present (FPSIM_EFORMAT naming a missing one) with
 * exactly its shape (FPSIM_ESHAPE naming the dataset, its shape and the expected one). Tokens and
 * targets must lie in [0, vocab), mask values in {0, 1} and not all 0, floats finite
 * (FPSIM_EDATA). A root attribute of the wrong type is named as such (FPSIM_EFORMAT). On
 * failure *cap is left empty (nothing to free). */
fpsim_status fpsim_capture_load(fpsim_capture *cap, const char *path);
void fpsim_capture_free(fpsim_capture *cap);

/* One compared tensor: relative L2 difference ||fpsim - torch|| / ||torch|| (absolute L2 when
 * the captured tensor is all zero). */
typedef struct fpsim_capture_diff {
    char name[48]; /* "logits", "block_out[1]", "grad:qkvw", "loss" */
    double rel_l2;
} fpsim_capture_diff;

/* Room for every diff of a model of up to 32 layers. */
#define FPSIM_CAPTURE_MAX_DIFFS (32 + 4 + FPSIM_PARAM_COUNT)

/* Compared tensors: embed, block_out per layer, final_norm, logits, loss, one grad per parameter
 * name (all layers together). */
static inline size_t fpsim_capture_diff_count(const fpsim_capture *cap) {
    return (size_t)cap->model.config.layers + 4 + FPSIM_PARAM_COUNT;
}

/* Run fpsim's forward and backward on the captured weights and batch with engine nx, on a copy
 * of the model (cap is unchanged), and fill diffs (fpsim_capture_diff_count entries; cap_n is the
 * room in diffs). *max_rel (if not NULL) = the largest relative difference. */
fpsim_status fpsim_capture_compare(const fpsim_capture *cap, const fpsim_numerics *nx,
                                   fpsim_capture_diff *diffs, size_t cap_n, double *max_rel);

#endif
