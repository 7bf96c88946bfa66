/* cli_util.h: what every `fpsim <command>` shares: error lines, exit codes, option values,
 * number and shape parsing, `--quiet`, a progress bar, JSON strings and a wall clock.
 *
 * Conventions (docs/cli.md):
 *  - an error is ONE line on stderr, "fpsim CMD: message", naming the bad value (and listing
 *    the valid names when a name is unknown);
 *  - exit status 0 success, 1 a failure while running (I/O during the run, out of memory,
 *    interrupted, a mismatch found by verify), 2 bad usage or bad input (unknown name or option,
 *    malformed or truncated file, wrong shape, missing input, unwritable output);
 *  - stdout carries results only (tables, JSON); notes and progress go to stderr, and
 *    `--quiet` silences the notes; the progress bar is drawn only when stderr is a terminal.
 * These are helpers for the executable only: the libraries never print. */
#ifndef FPSIM_CLI_UTIL_H
#define FPSIM_CLI_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fpsim_status.h"

/* Exit statuses of a command. */
enum { FPSIM_EXIT_OK = 0, FPSIM_EXIT_FAILURE = 1, FPSIM_EXIT_USAGE = 2 };

/* Print "fpsim CMD: message" (printf-style, newline added) on stderr. `cmd` may contain a space
 * ("bench quantize"). */
void fpsim_cli_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* The exit status for a library status: 0 for FPSIM_OK; 1 for FPSIM_EIO, FPSIM_ENOMEM and
 * FPSIM_EINTERRUPTED (the run failed); 2 for everything else (the input or request was bad). */
int fpsim_cli_exit_code(fpsim_status status);

/* Print fpsim_last_error() (or the status text if the message is empty) as the command's error
 * line and return fpsim_cli_exit_code(status). Typical use: `if (st) return fpsim_cli_fail(cmd, st);` */
int fpsim_cli_fail(const char *cmd, fpsim_status status);

/* Same, but returns 2: for failures that are the user's input (a missing input file, an output
 * path that cannot be created) even when the library reports them as FPSIM_EIO; FPSIM_ENOMEM (an
 * input larger than the machine) still returns 1. */
int fpsim_cli_fail_input(const char *cmd, fpsim_status status);

/* 1 if any argument is --help or -h. */
int fpsim_cli_wants_help(int argc, char **argv);

/* Option values, accepting both "--name VALUE" and "--name=VALUE".
 * Returns 1 and sets *value if argv[*i] is option `name` (advancing *i past a separate VALUE);
 * 0 if argv[*i] is not `name`; -1 after printing "fpsim CMD: option --name needs a value" (also
 * for an empty value: no option takes one) or, when the option already appeared earlier in
 * argv, "option --name given twice": a second value would silently replace the first. */
int fpsim_cli_take_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                         const char **value);

/* Same, for the options that collect a list (`replay --recipe`, `bench quantize --case`): any
 * number of occurrences. */
int fpsim_cli_take_list_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                              const char **value);

/* Print "fpsim CMD: unknown option 'ARG' (see fpsim CMD --help)" and return 2. */
int fpsim_cli_unknown_option(const char *cmd, const char *arg);

/* Parsers: each returns FPSIM_OK or FPSIM_EINVAL with a message naming `what` and the text.
 * Whole-string parses: trailing characters, empty text and out-of-range values are errors. */
fpsim_status fpsim_cli_parse_int(const char *text, const char *what, long min, long max, long *out);
/* Unsigned: decimal, or hexadecimal with a 0x prefix (a leading 0 does not mean octal). */
fpsim_status fpsim_cli_parse_u64(const char *text, const char *what, uint64_t *out);
fpsim_status fpsim_cli_parse_double(const char *text, const char *what, double *out);
/* A count with an optional binary suffix: "4096", "16K", "64M", "1G" (K = 2^10, M = 2^20,
 * G = 2^30; lower case accepted); must be > 0. */
fpsim_status fpsim_cli_parse_size(const char *text, const char *what, uint64_t *out);
/* A 2-D shape "RxC" (also "RXC" or "R,C"), both > 0, product < 2^62. */
fpsim_status fpsim_cli_parse_shape(const char *text, const char *what, size_t *rows, size_t *cols);
/* A thread count: "0" or "auto" = fpsim's default (caller substitutes), else 1..1024. */
fpsim_status fpsim_cli_parse_threads(const char *text, int *out);

/* --quiet: when set, fpsim_cli_note() prints nothing and no progress bar is drawn. */
void fpsim_cli_set_quiet(int quiet);
int fpsim_cli_quiet(void);
/* A note for the user on stderr (newline added), unless quiet. */
void fpsim_cli_note(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* A progress bar on stderr, drawn only when stderr is a terminal and not quiet; redrawn at
 * most every 0.1 s. begin / update / end, all from one thread. */
typedef struct fpsim_cli_progress {
    const char *label;
    uint64_t total;
    int enabled;
    double last_draw;
} fpsim_cli_progress;
void fpsim_cli_progress_begin(fpsim_cli_progress *p, const char *label, uint64_t total);
void fpsim_cli_progress_update(fpsim_cli_progress *p, uint64_t done);
void fpsim_cli_progress_end(fpsim_cli_progress *p);

/* Remove `path` if the process is stopped by SIGINT, SIGTERM or SIGHUP while it is registered:
 * register an output's temporary name while it is being written, then call with NULL. One path
 * at a time; the signal then takes its default action (the exit status says which signal). */
void fpsim_cli_remove_on_signal(const char *path);

/* 2, after one error line, when the output `out` names the same existing file as the input `in`
 * (same device and inode: links and other spellings included), which writing would destroy;
 * else 0. Either may be NULL. */
int fpsim_cli_refuse_input_as_output(const char *cmd, const char *out_option, const char *out,
                                     const char *in_option, const char *in);

/* Write `s` as a JSON string literal (quotes and escapes included). */
void fpsim_cli_json_string(FILE *out, const char *s);

/* Monotonic wall clock in seconds (for benchmarks). */
double fpsim_cli_seconds(void);

/* The command line as one string: "fpsim " then the command's arguments (main.c passes
 * argv[0] = the command name), separated by spaces, single-quoted when they contain spaces or
 * shell metacharacters (for the `command_line` attribute of output files). Returns the number of
 * characters needed (like snprintf); writes at most cap-1 of them and always terminates. */
size_t fpsim_cli_command_line(char *out, size_t cap, int argc, char **argv);

#endif
