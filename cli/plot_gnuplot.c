/* plot_gnuplot.c: `fpsim plot`'s figures drawn with gnuplot, each output under a temporary name
 * until gnuplot has drawn it (see plot_gnuplot.h). */
#include "plot_gnuplot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "commands.h"
#include "fpsim_file.h"
#include "gnuplot_run.h"

static const char *const CMD = "plot";

/* ---- the output directory -------------------------------------------------------------------- */

int plot_check_outdir(const char *cmd, const char *option, const char *dir, int keep_created)
{
    if (!*dir) {
        fpsim_cli_error(cmd, "%s: empty directory name", option);
        return 2;
    }
    struct stat sb;
    int created = 0;
    if (stat(dir, &sb) != 0) {
        if (errno != ENOENT || mkdir(dir, 0777) != 0) {
            fpsim_cli_error(cmd, "%s '%s': cannot create the directory: %s", option, dir, strerror(errno));
            return 2;
        }
        created = 1;
    } else if (!S_ISDIR(sb.st_mode)) {
        fpsim_cli_error(cmd, "%s '%s' exists and is not a directory", option, dir);
        return 2;
    }
    /* A file can be created in it (a read-only file system or mount passes the checks above). */
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.fpsim-plot-probe.%ld", dir, (long)getpid());
    FILE *f = fopen(probe, "wb");
    int err = errno;
    if (f) {
        fclose(f);
        remove(probe);
    }
    if (created && !keep_created) rmdir(dir);
    if (!f) {
        fpsim_cli_error(cmd, "%s '%s': cannot write in the directory: %s", option, dir, strerror(err));
        return 2;
    }
    return 0;
}

/* ---- gnuplot ------------------------------------------------------------------------------------ */

int plot_gnuplot_available(void)
{
    int rc = system("gnuplot --version >/dev/null 2>&1");
    return rc == 0;
}

/* The scripts the plots need, readable (FPSIM_PLOT_SCRIPTS may point anywhere). */
int plot_check_scripts(const char *scripts, int have_bias)
{
    const char *const needed[] = {"error_vs_layer.gp", "rates_vs_layer.gp", "bias_vs_n.gp"};
    for (int i = 0; i < (have_bias ? 3 : 2); i++) {
        char scr[4200];
        snprintf(scr, sizeof scr, "%s/%s", scripts, needed[i]);
        if (access(scr, R_OK) != 0) {
            fpsim_cli_error(CMD, "cannot read plot script %s: %s (FPSIM_PLOT_SCRIPTS names the scripts' directory)",
                            scr, strerror(errno));
            return 2;
        }
    }
    return 0;
}

/* gnuplot's own lines after fpsim's (at most 4 KiB of them). */
static void print_log(FILE *log)
{
    char buf[4096];
    if (!log || fseek(log, 0, SEEK_SET) != 0) return;
    size_t n = fread(buf, 1, sizeof buf - 1, log);
    buf[n] = '\0';
    const char *text = buf + strspn(buf, "\n"); /* gnuplot starts its messages with an empty line */
    if (!*text) return;
    fputs(text, stderr);
    if (buf[n - 1] != '\n') fputc('\n', stderr);
}

/* ---- writing ----------------------------------------------------------------------------------- */

static void output_discard(plot_output *o)
{
    fpsim_cli_remove_on_signal(NULL);
    if (o->f) fclose(o->f);
    o->f = NULL;
    fpsim_file_discard(o->dat_tmp);
    fpsim_file_discard(o->img_tmp);
}

int plot_output_open(const plot_ctx *p, const char *base, plot_output *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->dat, sizeof o->dat, "%s/%s.dat", p->outdir, base);
    snprintf(o->img, sizeof o->img, "%s/%s.%s", p->outdir, base, p->fmt);
    fpsim_status st = fpsim_file_temp_name(o->img_tmp, sizeof o->img_tmp, o->img);
    if (!st) st = fpsim_file_open_temp(&o->f, o->dat_tmp, sizeof o->dat_tmp, o->dat);
    if (st) {
        o->img_tmp[0] = '\0';
        return fpsim_cli_fail_input(CMD, st);
    }
    fpsim_cli_remove_on_signal(o->dat_tmp); /* an interrupted run leaves no partial file */
    return 0;
}

/* Close the .dat, run gnuplot on it, and rename both outputs onto their names; on any failure
 * both are removed and one fpsim line says why (gnuplot's own lines may follow it). */
int plot_output_finish(plot_ctx *p, plot_output *o, const char *script, const char *title, const char *ylab,
                         const char *extra)
{
    int write_failed = ferror(o->f) != 0;
    write_failed |= fclose(o->f) != 0;
    int err = errno;
    o->f = NULL;
    fpsim_cli_remove_on_signal(NULL);
    if (write_failed) {
        output_discard(o);
        fpsim_cli_error(CMD, "cannot write %s: %s", o->dat, strerror(err));
        return 1;
    }
    char scr[4200];
    snprintf(scr, sizeof scr, "%s/%s", p->scripts, script);
    gnuplot_vars vars = {.n = 0};
    gnuplot_set(&vars, "datafile", o->dat_tmp);
    gnuplot_set(&vars, "outfile", o->img_tmp);
    gnuplot_set(&vars, "fmt", p->fmt);
    gnuplot_set(&vars, "plottitle", title);
    gnuplot_set(&vars, "ylab", ylab ? ylab : "");
    if (extra) gnuplot_set_code(&vars, extra);
    FILE *log = tmpfile();
    int status = gnuplot_run(&vars, scr, log);
    const int drawn = gnuplot_succeeded(status);
    if (!drawn || gnuplot_stop_signal() || !gnuplot_image_complete(o->img_tmp, p->fmt)) {
        output_discard(o);
        gnuplot_die_if_stopped();
        char how[96];
        gnuplot_describe_status(how, sizeof how, status);
        if (drawn) fpsim_cli_error(CMD, "gnuplot left %s incomplete (disk full?); nothing written for it", o->img);
        else fpsim_cli_error(CMD, "gnuplot failed (%s) drawing %s with %s; nothing written for it%s", how, o->img,
                             scr, log && ftell(log) > 0 ? "; gnuplot said:" : "");
        if (!drawn) print_log(log);
        if (log) fclose(log);
        return 1;
    }
    if (log) fclose(log);
    fpsim_status st = fpsim_file_commit(o->img_tmp, o->img);
    if (st) {
        fpsim_file_discard(o->dat_tmp);
        return fpsim_cli_fail(CMD, st);
    }
    if ((st = fpsim_file_commit(o->dat_tmp, o->dat))) return fpsim_cli_fail(CMD, st);
    p->made++;
    return 0;
}

void plot_put(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, " %.9g", v);
    else fprintf(f, " ?");
}

/* One whitespace-separated field of a .dat: " a" or " a:b", white space and control characters
 * written as '_' (gnuplot splits on them), an empty name as '_'. */
void plot_put_label(FILE *f, const char *a, const char *b)
{
    fputc(' ', f);
    if (!*a) fputc('_', f);
    for (const char *c = a; *c; c++) fputc((unsigned char)*c <= ' ' ? '_' : *c, f);
    if (b) {
        fputc(':', f);
        for (const char *c = b; *c; c++) fputc((unsigned char)*c <= ' ' ? '_' : *c, f);
    }
}
