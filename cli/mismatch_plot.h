/* mismatch_plot.h: the plots of a `fpsim mismatch` results file (mismatch_plot.c), drawn by
 * `fpsim mismatch --plot` and by `fpsim plot` on such a file. */
#ifndef FPSIM_MISMATCH_PLOT_H
#define FPSIM_MISMATCH_PLOT_H

#include "fpsim_status.h"

/* Plots of a mismatch file with gnuplot (scripts/plot/mismatch_*.gp, found under
 * FPSIM_PLOT_SCRIPTS, else ./scripts/plot): log-prob difference histograms, |g - p| vs generator
 * probability, attribution bars, mismatch vs sequence length, into outdir. fmt: "png", "svg" or
 * "pdf". Returns a status with a one-line message and leaves no output on any failure. A stop
 * signal during the plots removes what was made, then ends fpsim with that signal. */
fpsim_status mismatch_plot_draw(const char *h5, const char *outdir, const char *fmt);

#endif
