/* plot_results.h: a results file of `fpsim replay` (docs/hdf5-layout.md) read whole and checked
 * for `fpsim plot` (plot_results.c), before anything is written: the file's name lists (root
 * attribute `steps`, and `views`, `layers`, `passes`, `roles`, `points`, `point_layers`,
 * `recipes`, bias_variance's `cases`), each dataset's element type, rank and dims against them,
 * the recipe groups against `recipes`, and that every plot has a finite value to draw at the last
 * step. A file that fails is one line on stderr ("fpsim plot: ...") and exit status 2. */
#ifndef FPSIM_PLOT_RESULTS_H
#define FPSIM_PLOT_RESULTS_H

#include <stddef.h>

#include <hdf5.h>

/* The names along one axis of the datasets (a 1-D string-array attribute). */
typedef struct plot_names {
    size_t n;
    char **v;
} plot_names;

/* A numeric dataset read as float64, with its dims (rank at most 4). */
typedef struct plot_table {
    int rank;
    hsize_t dims[4];
    double *v;
} plot_table;

typedef struct plot_results {
    const char *path; /* for messages */
    hid_t file;
    hsize_t steps;    /* root attribute `steps`: the first dim of every per-step dataset */
    plot_names recipes, layers, passes, roles, views, points, players;
    int local, accumulated;      /* indices in views */
    int block_out, grad_stream;  /* indices in points; -1 when the file lacks one (no stream plot) */
    /* per recipe: layer_gemm_rel_l2, point_rel_l2, layer_operand_flush_rate, ..._sat_rate */
    plot_table *gemm, *stream, *flush, *sat;
    int have_bias; /* the /bias_variance group: */
    plot_names cases;
    plot_table bias_n, bias, rmse;
} plot_results;

/* Read and check the whole file r->file (r->path names it in messages; the rest of *r zeroed).
 * HDF5's error printing is to be off (H5E_BEGIN_TRY): each way the file can be wrong is one line
 * of ours. Returns 0, 2 (a bad file) or 1 (out of memory); free *r with plot_results_free either
 * way. */
int plot_results_load(plot_results *r);
void plot_results_free(plot_results *r);

/* A [step, view, layer, k] table (layer_gemm_, layer_operand_) at the last step. */
double plot_last_step_layer(const plot_table *t, size_t view, size_t layer, size_t k);
/* A [step, point, point_layer] table (point_) at the last step. */
double plot_last_step_point(const plot_table *t, size_t point, size_t player);

/* Every plot has a finite value to draw (gnuplot fails on a figure with no point at all): 0, or
 * one line naming the all-NaN data and 2. */
int plot_check_drawable(const plot_results *r);

#endif
