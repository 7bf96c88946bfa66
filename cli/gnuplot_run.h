/* gnuplot_run.h: running gnuplot for fpsim's figures (`fpsim plot`, `fpsim mismatch --plot`).
 *
 * - The values handed to a script (`gnuplot -e "name='value'; ..."`) are quoted here, every
 *   single quote doubled (gnuplot's escape inside '...'): a name read from a results file is
 *   text, never gnuplot code (gnuplot's system() would otherwise run whatever a damaged or
 *   crafted file held).
 * - A stop signal (SIGINT, SIGTERM, SIGHUP; unless ignored, as under nohup) that arrives while
 *   gnuplot runs, or while the caller holds them (gnuplot_hold_stops), is remembered and passed
 *   on to gnuplot instead of killing fpsim at once: the caller removes its partial outputs,
 *   then takes the signal (gnuplot_die_if_stopped), so the exit status still says which signal.
 * - gnuplot 5's png and svg terminals exit 0 after a failed write (full disk, ulimit -f) and
 *   leave a truncated image: gnuplot_image_complete checks the file's ending. */
#ifndef FPSIM_GNUPLOT_RUN_H
#define FPSIM_GNUPLOT_RUN_H

#include <stddef.h>
#include <stdio.h>

/* The -e text of one gnuplot run, built by gnuplot_set / gnuplot_set_code. */
typedef struct gnuplot_vars {
    char text[16384];
    size_t n;
    int overflow; /* the text did not fit: do not run */
} gnuplot_vars;

/* Append `name='value'`, the value quoted (a ' written as ''). */
void gnuplot_set(gnuplot_vars *v, const char *name, const char *value);
/* Append gnuplot text as it is ("paired=1"): only fpsim's own constants, never file content. */
void gnuplot_set_code(gnuplot_vars *v, const char *code);

/* 1 when `name` is 1 to max_len letters, digits, '-' or '_': safe as one word of a gnuplot word
 * list and as part of a file name (names read from a results file are checked by this). */
int gnuplot_is_plain_name(const char *name, size_t max_len);

/* gnuplot -e VARS SCRIPT, its stdout to /dev/null and its stderr into `log` (/dev/null when
 * NULL). Returns the wait status; -1 when it could not be run, when vars overflowed, or when a
 * stop signal is already pending (gnuplot is then not started). Exit 127: gnuplot not found. */
int gnuplot_run(const gnuplot_vars *vars, const char *script, FILE *log);

/* 1 when the wait status is a normal exit 0. */
int gnuplot_succeeded(int status);

/* "exit 1", "killed by signal 25: over the file-size limit", "could not be run", ... */
void gnuplot_describe_status(char *buf, size_t cap, int status);

/* 1 when the image gnuplot wrote at `path` ends as a whole file of its format does (png: the
 * IEND chunk; svg: "</svg>"; pdf: "%%EOF"). */
int gnuplot_image_complete(const char *path, const char *fmt);

/* Remember stop signals from now until gnuplot_release_stops (nestable), so that a series of
 * files and gnuplot runs can be cleaned up as a whole. */
void gnuplot_hold_stops(void);
/* Undo one gnuplot_hold_stops; the outermost restores the earlier handlers. */
void gnuplot_release_stops(void);

/* The stop signal remembered (0: none). */
int gnuplot_stop_signal(void);

/* A remembered stop signal takes its default action now (after the caller's clean-up); returns
 * only when none was remembered (or the signal did not end the process). */
void gnuplot_die_if_stopped(void);

#endif
