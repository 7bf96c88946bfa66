/* plot_gnuplot.h: `fpsim plot`'s figures drawn with gnuplot (plot_gnuplot.c): the checks made
 * before anything is written (gnuplot on PATH, the .gp scripts readable, the output directory
 * writable: plot_check_outdir, declared in commands.h as `fpsim replay --plots` uses it too),
 * then per figure a .dat table and gnuplot run on it. Both outputs are written under temporary
 * names and renamed onto DIR/BASE.dat and DIR/BASE.FMT only once gnuplot has drawn a whole image;
 * removed otherwise. A stop signal that arrives while gnuplot runs is passed on to it, the
 * temporaries are removed, then fpsim takes the signal; every value reaches gnuplot quoted
 * (gnuplot_run.h). */
#ifndef FPSIM_PLOT_GNUPLOT_H
#define FPSIM_PLOT_GNUPLOT_H

#include <stdio.h>

/* One `fpsim plot` run: the results file (for messages), --outdir, --format, the scripts'
 * directory, and how many figures were made. */
typedef struct plot_ctx {
    const char *path, *outdir, *fmt, *scripts;
    int made;
} plot_ctx;

/* One figure's outputs, DIR/BASE.dat and DIR/BASE.FMT, each under its temporary name
 * (fpsim_file_temp_name) until gnuplot has drawn the image. */
typedef struct plot_output {
    char dat[4096], img[4096], dat_tmp[4200], img_tmp[4200];
    FILE *f; /* the .dat temporary, open for writing */
} plot_output;

/* 1 when `gnuplot --version` runs. */
int plot_gnuplot_available(void);

/* The scripts the plots need (bias_vs_n.gp only when have_bias) are readable in `scripts`: 0, or
 * one line and 2. */
int plot_check_scripts(const char *scripts, int have_bias);

/* Open DIR/BASE.dat's temporary for writing into o->f (an interrupted run leaves no partial
 * file): 0, or one line and the exit status. */
int plot_output_open(const plot_ctx *p, const char *base, plot_output *o);

/* Close the .dat, run gnuplot with `script` from p->scripts on it (title, ylab, and `extra`
 * gnuplot assignments or NULL), and rename both outputs onto their names (p->made counts it);
 * on any failure both are removed and one line says why: returns 1 (or the exit status). */
int plot_output_finish(plot_ctx *p, plot_output *o, const char *script, const char *title, const char *ylab,
                       const char *extra);

/* A .dat value: " %.9g", or " ?" when not finite. */
void plot_put(FILE *f, double v);
/* A .dat label field: " a" or " a:b" (b may be NULL), white space and control characters as '_'. */
void plot_put_label(FILE *f, const char *a, const char *b);

#endif
