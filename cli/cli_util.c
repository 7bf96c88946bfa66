/* cli_util.c: shared helpers of the fpsim executable (see cli_util.h). */
#include "cli_util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int cli_quiet;

void fpsim_cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fpsim %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int fpsim_cli_exit_code(fpsim_status status)
{
    switch (status) {
    case FPSIM_OK: return FPSIM_EXIT_OK;
    case FPSIM_EIO:
    case FPSIM_ENOMEM:
    case FPSIM_EINTERRUPTED: return FPSIM_EXIT_FAILURE;
    default: return FPSIM_EXIT_USAGE;
    }
}

static void print_status(const char *cmd, fpsim_status status)
{
    const char *msg = fpsim_last_error();
    if (!msg || !*msg) msg = fpsim_strerror(status);
    /* library messages of the command's own module start with its name ("gemm: ..."), which the
     * prefix "fpsim gemm: " already says */
    const size_t n = strlen(cmd);
    if (!strncmp(msg, cmd, n) && msg[n] == ':' && msg[n + 1] == ' ') msg += n + 2;
    fpsim_cli_error(cmd, "%s", msg);
}

int fpsim_cli_fail(const char *cmd, fpsim_status status)
{
    print_status(cmd, status);
    return fpsim_cli_exit_code(status);
}

int fpsim_cli_fail_input(const char *cmd, fpsim_status status)
{
    print_status(cmd, status);
    /* an input too large for this machine is not a bad input: exit 1 as every memory refusal */
    return status == FPSIM_ENOMEM ? fpsim_cli_exit_code(status) : FPSIM_EXIT_USAGE;
}

int fpsim_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    return 0;
}

/* 1 if argv[k] is option `name`, alone ("--name") or with its value ("--name=VALUE"). */
static int is_option(const char *arg, const char *name)
{
    size_t len = strlen(name);
    return !strncmp(arg, name, len) && (arg[len] == '\0' || arg[len] == '=');
}

/* The shared body of take_value and take_list_value; `once` refuses a second occurrence. */
static int take(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value, int once)
{
    const char *arg = argv[*i];
    if (!is_option(arg, name)) return 0;
    /* Callers test the result as nonzero and may read *value before they look at its sign. */
    *value = "";
    /* A second occurrence is found by looking back over the arguments before this one. A value
     * that happens to spell the option (`--out --to`) would count too; no option takes such a
     * value. */
    if (once)
        for (int k = 1; k < *i; k++)
            if (is_option(argv[k], name)) {
                fpsim_cli_error(cmd, "option %s given twice (it takes one value)", name);
                return -1;
            }
    size_t len = strlen(name);
    if (arg[len] == '=') {
        *value = arg + len + 1;
    } else {
        if (*i + 1 >= argc) {
            fpsim_cli_error(cmd, "option %s needs a value", name);
            return -1;
        }
        *i += 1;
        *value = argv[*i];
    }
    if (!**value) { /* `--only ''` matched everything; no option takes an empty value */
        fpsim_cli_error(cmd, "option %s needs a value (it is empty)", name);
        return -1;
    }
    return 1;
}

int fpsim_cli_take_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                         const char **value)
{
    return take(cmd, argc, argv, i, name, value, 1);
}

int fpsim_cli_take_list_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                              const char **value)
{
    return take(cmd, argc, argv, i, name, value, 0);
}

int fpsim_cli_unknown_option(const char *cmd, const char *arg)
{
    fpsim_cli_error(cmd, "unknown option '%s' (see fpsim %s --help)", arg, cmd);
    return FPSIM_EXIT_USAGE;
}

/* 1 if `text` starts with a digit (or, when `sign` is set, '-' or '+' and then a digit): the
 * strto* functions would otherwise skip white space and take a sign the caller cannot see. */
static int starts_number(const char *text, int sign)
{
    if (sign && (*text == '-' || *text == '+'))
        text++;
    return isdigit((unsigned char)*text) != 0;
}

fpsim_status fpsim_cli_parse_int(const char *text, const char *what, long min, long max, long *out)
{
    char *end;
    errno = 0;
    /* strtol skips leading white space: refuse it, so the whole text is the number. */
    if (!starts_number(text, 1))
        return fpsim_fail(FPSIM_EINVAL, "%s: '%s' is not an integer", what, text);
    long v = strtol(text, &end, 10);
    if (!*text || *end || errno)
        return fpsim_fail(FPSIM_EINVAL, "%s: '%s' is not an integer", what, text);
    if (v < min || v > max)
        return fpsim_fail(FPSIM_EINVAL, "%s: %ld is out of range [%ld, %ld]", what, v, min, max);
    *out = v;
    return FPSIM_OK;
}

fpsim_status fpsim_cli_parse_u64(const char *text, const char *what, uint64_t *out)
{
    char *end;
    errno = 0;
    /* strtoull skips white space and accepts a '-' (negating): " -1" would become 2^64-1.
     * Only digits may start the text. Decimal, or hexadecimal after 0x; never octal, so that
     * "010" is ten (strtoull base 0 would read it as eight). */
    if (!starts_number(text, 0))
        return fpsim_fail(FPSIM_EINVAL, "%s: '%s' is not an unsigned integer", what, text);
    const int hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (hex && !isxdigit((unsigned char)text[2]))
        return fpsim_fail(FPSIM_EINVAL, "%s: '%s' is not an unsigned 64-bit integer", what, text);
    unsigned long long v = strtoull(hex ? text + 2 : text, &end, hex ? 16 : 10);
    if (*end || errno)
        return fpsim_fail(FPSIM_EINVAL, "%s: '%s' is not an unsigned 64-bit integer", what, text);
    *out = (uint64_t)v;
    return FPSIM_OK;
}

fpsim_status fpsim_cli_parse_double(const char *text, const char *what, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    /* strtod also skips leading white space and takes "nan" and "inf": none is a value here */
    if (!*text || isspace((unsigned char)*text) || *end || errno == ERANGE || !isfinite(v))
        return fpsim_fail(FPSIM_EINVAL, "%s: '%s' is not a finite number", what, text);
    *out = v;
    return FPSIM_OK;
}

fpsim_status fpsim_cli_parse_size(const char *text, const char *what, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!starts_number(text, 0))
        return fpsim_fail(FPSIM_EINVAL, "%s: '%s' is not a size", what, text);
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text) return fpsim_fail(FPSIM_EINVAL, "%s: '%s' is not a size", what, text);
    int shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end)
        return fpsim_fail(FPSIM_EINVAL, "%s: '%s' is not a size (digits with an optional K, M or G)",
                          what, text);
    if (v == 0) return fpsim_fail(FPSIM_EINVAL, "%s: size must be > 0", what);
    if (v > (UINT64_MAX >> shift)) return fpsim_fail(FPSIM_EINVAL, "%s: '%s' is too large", what, text);
    *out = (uint64_t)v << shift;
    return FPSIM_OK;
}

fpsim_status fpsim_cli_parse_shape(const char *text, const char *what, size_t *rows, size_t *cols)
{
    char *end;
    errno = 0;
    if (!starts_number(text, 0)) goto bad;
    unsigned long long r = strtoull(text, &end, 10);
    if (errno || end == text || (*end != 'x' && *end != 'X' && *end != ',')) goto bad;
    const char *c_text = end + 1;
    if (!starts_number(c_text, 0)) goto bad;
    unsigned long long c = strtoull(c_text, &end, 10);
    if (errno || end == c_text || *end) goto bad;
    if (r == 0 || c == 0) return fpsim_fail(FPSIM_ESHAPE, "%s: '%s' has a zero dimension", what, text);
    if (r >= (1ull << 62) / c) return fpsim_fail(FPSIM_ESHAPE, "%s: '%s' is too large", what, text);
    *rows = (size_t)r;
    *cols = (size_t)c;
    return FPSIM_OK;
bad:
    return fpsim_fail(FPSIM_EINVAL, "%s: '%s' is not a shape ROWSxCOLS (e.g. 4096x4096)", what, text);
}

fpsim_status fpsim_cli_parse_threads(const char *text, int *out)
{
    if (!strcmp(text, "auto")) {
        *out = 0;
        return FPSIM_OK;
    }
    long v = 0;
    fpsim_status st = fpsim_cli_parse_int(text, "--threads", 0, 1024, &v);
    if (st) return st;
    *out = (int)v;
    return FPSIM_OK;
}

void fpsim_cli_set_quiet(int quiet) { cli_quiet = quiet; }

int fpsim_cli_quiet(void) { return cli_quiet; }

void fpsim_cli_note(const char *fmt, ...)
{
    if (cli_quiet) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

double fpsim_cli_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress_draw(const fpsim_cli_progress *p, uint64_t done)
{
    enum { WIDTH = 40 };
    double frac = p->total ? (double)done / (double)p->total : 1.0;
    if (frac > 1.0) frac = 1.0;
    int filled = (int)(frac * WIDTH);
    char bar[WIDTH + 1];
    for (int i = 0; i < WIDTH; i++) bar[i] = i < filled ? '#' : '.';
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r%s [%s] %5.1f%%", p->label ? p->label : "", bar, 100.0 * frac);
    fflush(stderr);
}

void fpsim_cli_progress_begin(fpsim_cli_progress *p, const char *label, uint64_t total)
{
    p->label = label;
    p->total = total;
    p->enabled = !cli_quiet && isatty(STDERR_FILENO);
    p->last_draw = -1.0;
    if (p->enabled) progress_draw(p, 0);
}

void fpsim_cli_progress_update(fpsim_cli_progress *p, uint64_t done)
{
    if (!p->enabled) return;
    double now = fpsim_cli_seconds();
    if (p->last_draw >= 0.0 && now - p->last_draw < 0.1) return;
    p->last_draw = now;
    progress_draw(p, done);
}

void fpsim_cli_progress_end(fpsim_cli_progress *p)
{
    if (!p->enabled) return;
    progress_draw(p, p->total);
    fputc('\n', stderr);
    p->enabled = 0;
}

void fpsim_cli_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*c < 0x20) fprintf(out, "\\u%04x", *c);
            else fputc(*c, out);
        }
    }
    fputc('"', out);
}

static char signal_path[4096];
static volatile sig_atomic_t signal_armed;

static void remove_and_reraise(int sig)
{
    if (signal_armed) unlink(signal_path); /* async-signal-safe */
    signal(sig, SIG_DFL);
    raise(sig);
}

void fpsim_cli_remove_on_signal(const char *path)
{
    static int installed;
    signal_armed = 0;
    if (!path) return;
    snprintf(signal_path, sizeof signal_path, "%s", path);
    if (!installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = remove_and_reraise;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        installed = 1;
    }
    signal_armed = 1;
}

/* Append one character if room remains; always count it. */
static void put_char(char *out, size_t cap, size_t *n, char c)
{
    if (*n + 1 < cap) out[*n] = c;
    *n += 1;
}

static int needs_quotes(const char *s)
{
    if (!*s) return 1;
    for (; *s; s++)
        if (strchr(" \t\n'\"\\$`!*?;&|<>()[]{}#~", *s)) return 1;
    return 0;
}

size_t fpsim_cli_command_line(char *out, size_t cap, int argc, char **argv)
{
    size_t n = 0;
    for (const char *s = "fpsim"; *s; s++) put_char(out, cap, &n, *s);
    for (int i = 0; i < argc; i++) {
        put_char(out, cap, &n, ' ');
        int quote = needs_quotes(argv[i]);
        if (quote) put_char(out, cap, &n, '\'');
        for (const char *s = argv[i]; *s; s++) {
            if (*s == '\'') { /* close, escaped quote, reopen: 'it'\''s' */
                put_char(out, cap, &n, '\'');
                put_char(out, cap, &n, '\\');
                put_char(out, cap, &n, '\'');
            }
            put_char(out, cap, &n, *s);
        }
        if (quote) put_char(out, cap, &n, '\'');
    }
    if (cap) out[n < cap ? n : cap - 1] = '\0';
    return n;
}

int fpsim_cli_refuse_input_as_output(const char *cmd, const char *out_option, const char *out,
                                     const char *in_option, const char *in)
{
    struct stat so, si;
    if (!out || !in || stat(out, &so) != 0 || stat(in, &si) != 0) return 0;
    if (so.st_dev != si.st_dev || so.st_ino != si.st_ino) return 0;
    fpsim_cli_error(cmd, "%s '%s' is the %s file: writing it would destroy the input", out_option, out, in_option);
    return 2;
}
