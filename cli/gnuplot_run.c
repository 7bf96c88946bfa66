/* gnuplot_run.c: one gnuplot process per figure, its inputs quoted and stop signals deferred
 * (see gnuplot_run.h). */
#include "gnuplot_run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the -e text ------------------------------------------------------------------------------ */

static void put(gnuplot_vars *v, char c)
{
    if (v->n + 1 >= sizeof v->text) {
        v->overflow = 1;
        return;
    }
    v->text[v->n++] = c;
    v->text[v->n] = '\0';
}

static void put_text(gnuplot_vars *v, const char *s)
{
    for (; *s; s++) put(v, *s);
}

static void separate(gnuplot_vars *v)
{
    if (v->n) put_text(v, "; ");
}

void gnuplot_set(gnuplot_vars *v, const char *name, const char *value)
{
    separate(v);
    put_text(v, name);
    put_text(v, "='");
    for (const char *c = value; *c; c++) {
        if (*c == '\'') put(v, '\''); /* inside '...' gnuplot reads '' as one quote */
        put(v, *c);
    }
    put(v, '\'');
}

void gnuplot_set_code(gnuplot_vars *v, const char *code)
{
    separate(v);
    put_text(v, code);
}

int gnuplot_is_plain_name(const char *name, size_t max_len)
{
    if (!name) return 0;
    const size_t len = strlen(name);
    if (len == 0 || len > max_len) return 0;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
              *c == '_'))
            return 0;
    return 1;
}

/* ---- stop signals ------------------------------------------------------------------------------ */

static const int stops[3] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction saved[3];
static int hold_depth;
static volatile sig_atomic_t stop_signal;

static void remember_stop_signal(int sig) { stop_signal = sig; }

void gnuplot_hold_stops(void)
{
    if (hold_depth++) return;
    struct sigaction remember;
    memset(&remember, 0, sizeof remember);
    remember.sa_handler = remember_stop_signal; /* no SA_RESTART: waitpid returns EINTR */
    sigemptyset(&remember.sa_mask);
    stop_signal = 0;
    for (int i = 0; i < 3; i++) {
        sigaction(stops[i], NULL, &saved[i]);
        if (saved[i].sa_handler != SIG_IGN) sigaction(stops[i], &remember, NULL);
    }
}

void gnuplot_release_stops(void)
{
    if (hold_depth == 0 || --hold_depth) return;
    for (int i = 0; i < 3; i++) sigaction(stops[i], &saved[i], NULL);
}

int gnuplot_stop_signal(void) { return stop_signal; }

void gnuplot_die_if_stopped(void)
{
    const int sig = stop_signal;
    if (!sig) return;
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- the process ----------------------------------------------------------------------------- */

int gnuplot_run(const gnuplot_vars *vars, const char *script, FILE *log)
{
    if (vars->overflow) return -1;
    gnuplot_hold_stops();
    int status = -1;
    if (stop_signal) { /* a stop arrived during the caller's hold: draw nothing more */
        gnuplot_release_stops();
        return status;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* exec resets the remembering handlers to their defaults */
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
        if (log) dup2(fileno(log), STDERR_FILENO);
        else if (devnull >= 0) dup2(devnull, STDERR_FILENO);
        signal(SIGXFSZ, SIG_DFL); /* main() ignores it; gnuplot over ulimit -f should stop, not go on */
        execlp("gnuplot", "gnuplot", "-e", vars->text, script, (char *)NULL);
        _exit(127);
    }
    int forwarded = 0;
    if (pid > 0) {
        pid_t w;
        while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
            if (stop_signal && !forwarded) {
                kill(pid, stop_signal);
                forwarded = 1;
            }
        if (w != pid) status = -1;
    }
    gnuplot_release_stops();
    return status;
}

int gnuplot_succeeded(int status) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

void gnuplot_describe_status(char *buf, size_t cap, int status)
{
    if (status < 0) snprintf(buf, cap, "could not be run");
    else if (WIFEXITED(status)) snprintf(buf, cap, "exit %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, cap, "killed by signal %d%s", WTERMSIG(status),
                 WTERMSIG(status) == SIGXFSZ ? ": over the file-size limit" : "");
    else snprintf(buf, cap, "wait status %d", status);
}

/* PNG ends with its IEND chunk (length 0, "IEND", CRC AE 42 60 82); SVG with "</svg>" and PDF
 * with "%%EOF", each perhaps followed by white space. */
int gnuplot_image_complete(const char *path, const char *fmt)
{
    static const unsigned char png_end[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
    unsigned char tail[64];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    long n = size < (long)sizeof tail ? size : (long)sizeof tail;
    int ok = n > 0 && fseek(f, size - n, SEEK_SET) == 0 && fread(tail, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (!ok) return 0;
    if (!strcmp(fmt, "png")) return n >= 12 && !memcmp(tail + n - 12, png_end, 12);
    while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r' || tail[n - 1] == ' ')) n--;
    if (!strcmp(fmt, "pdf")) return n >= 5 && !memcmp(tail + n - 5, "%%EOF", 5);
    return n >= 6 && !memcmp(tail + n - 6, "</svg>", 6);
}
