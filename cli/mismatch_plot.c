/* mismatch_plot.c: plots of a mismatch results file (mismatch_plot_draw, mismatch_plot.h).
 *
 * Reads the file (docs/mismatch.md schema), writes plain data files into outdir and runs gnuplot
 * on scripts/plot/mismatch_*.gp (found under FPSIM_PLOT_SCRIPTS, else ./scripts/plot):
 *   mismatch_hist.FMT     histogram of g - p per configuration
 *   mismatch_scatter.FMT  |g - p| vs exp(g), log x
 *   mismatch_attr.FMT     per-layer / per-part attribution bars (configurations with attribution)
 *   mismatch_seqlen.FMT   per-sequence mult_prob_error - 1 vs scored tokens
 * Errors (not a mismatch file, a configuration name that is not a plain name, a missing dataset or one
 * whose dims do not pair with g, gnuplot missing or failing or leaving an image cut off, a failed
 * write) return a status with a message and leave no output: the files are made in a staging
 * directory inside outdir and moved out when all succeeded; a stop signal meanwhile empties it
 * and then ends fpsim (gnuplot_run.h). Nothing is printed here (the caller prints the status). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "fpsim_h5.h"
#include "fpsim_mismatch.h"
#include "gnuplot_run.h"
#include "mismatch_plot.h"

#define MAXC FPSIM_MM_MAX_CONFIGS

/* A dataset larger than this (entries) is no mismatch file fpsim wrote: 1 GiB of float64. The
 * bound also keeps rows x columns x element size from wrapping around. */
#define MAX_ELEMENTS ((hsize_t)1 << 27)

typedef struct plot_cfg {
    char name[64];
    size_t n, len;
    double *g, *p;
    uint8_t *mask;
    int have_attr;
    double attr[70]; /* token_mult_prob_error of each swap: layers then parts */
    int nattr;
} plot_cfg;

static fpsim_status read_2d(hid_t f, const char *path, hid_t type, void **out, size_t *r, size_t *c)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0) /* a link that is there but opens no dataset is damaged, not missing */
        return fpsim_fail(FPSIM_EFORMAT,
                          H5Lexists(f, path, H5P_DEFAULT) > 0 ? "--plot: cannot read dataset %s (damaged file)"
                                                              : "--plot: dataset %s missing",
                          path);
    hid_t sp = H5Dget_space(d);
    hsize_t dims[2] = {0, 0};
    int rank = H5Sget_simple_extent_ndims(sp);
    fpsim_status st = FPSIM_OK;
    if (rank != 2) st = fpsim_fail(FPSIM_ESHAPE, "--plot: %s has rank %d, not 2", path, rank);
    else {
        H5Sget_simple_extent_dims(sp, dims, NULL);
        *r = dims[0];
        *c = dims[1];
        if (dims[0] == 0 || dims[1] == 0 || dims[0] > MAX_ELEMENTS / dims[1])
            st = fpsim_fail(FPSIM_ESHAPE, "--plot: %s has dims %llux%llu: empty or over 2^27 entries", path,
                            (unsigned long long)dims[0], (unsigned long long)dims[1]);
        else if (!(*out = malloc((size_t)(dims[0] * dims[1]) * H5Tget_size(type) + 1)))
            st = fpsim_fail(FPSIM_ENOMEM, "--plot: out of memory");
        else if (H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, *out) < 0)
            st = fpsim_fail(FPSIM_EFORMAT, "--plot: cannot read %s", path);
    }
    H5Sclose(sp);
    H5Dclose(d);
    return st;
}

/* A dataset that pairs element for element with g: the same rows and columns. */
static fpsim_status same_dims(const char *path, size_t r, size_t c, size_t want_r, size_t want_c)
{
    if (r == want_r && c == want_c) return FPSIM_OK;
    return fpsim_fail(FPSIM_ESHAPE, "--plot: %s has dims %zux%zu, expected %zux%zu (as g)", path, r, c, want_r, want_c);
}

/* Close a data file written for gnuplot; a failed write (a full disk) is an error, not a plot of
 * cut-off data. */
static fpsim_status close_data(FILE *f, const char *path)
{
    const int bad = ferror(f);
    if (fclose(f) != 0 || bad) return fpsim_fail(FPSIM_EIO, "--plot: cannot write %s", path);
    return FPSIM_OK;
}

static fpsim_status read_configs(hid_t f, char names[MAXC][64], int *count)
{
    hid_t a = H5Aopen(f, "configs", H5P_DEFAULT);
    if (a < 0) return fpsim_fail(FPSIM_EFORMAT, "--plot: no 'configs' attribute (not a mismatch file)");
    hid_t sp = H5Aget_space(a);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    fpsim_status st = FPSIM_OK;
    if (n < 1 || n > MAXC) st = fpsim_fail(FPSIM_EFORMAT, "--plot: %lld configurations", (long long)n);
    char *vals[MAXC] = {0};
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    if (!st && H5Aread(a, t, vals) < 0) st = fpsim_fail(FPSIM_EFORMAT, "--plot: cannot read 'configs'");
    for (hssize_t i = 0; i < n && !st; i++) {
        if (!gnuplot_is_plain_name(vals[i], 63))
            st = fpsim_fail(FPSIM_EFORMAT, "--plot: 'configs' holds a name that is not a configuration name "
                            "(1 to 63 letters, digits, '-' or '_')");
        else snprintf(names[i], 64, "%s", vals[i]);
    }
    if (!st) *count = (int)n;
    if (n >= 1 && n <= MAXC) H5Dvlen_reclaim(t, sp, H5P_DEFAULT, vals);
    H5Tclose(t);
    H5Sclose(sp);
    H5Aclose(a);
    return st;
}

/* Draw dir/out.fmt with `script`, the data's variables in vars (the output's own are added
 * here). gnuplot's last message line is quoted in the error. */
static fpsim_status gnuplot(const char *dir, const char *script, gnuplot_vars *vars, const char *out,
                            const char *fmt)
{
    const char *pd = getenv("FPSIM_PLOT_SCRIPTS");
    char scr[4096], common[4096], outfile[4096];
    snprintf(scr, sizeof scr, "%s/%s", pd ? pd : "scripts/plot", script);
    snprintf(common, sizeof common, "%s/mismatch_common.gp", pd ? pd : "scripts/plot");
    if (snprintf(outfile, sizeof outfile, "%s/%s.%s", dir, out, fmt) >= (int)sizeof outfile)
        return fpsim_fail(FPSIM_EINVAL, "--plot: path too long in %s", dir);
    if (access(scr, R_OK) != 0)
        return fpsim_fail(FPSIM_EIO, "--plot: script %s not found (run from the source tree or set FPSIM_PLOT_SCRIPTS)", scr);
    gnuplot_set(vars, "outfile", outfile);
    gnuplot_set(vars, "fmt", fmt);
    gnuplot_set(vars, "common", common);
    if (vars->overflow) return fpsim_fail(FPSIM_EINVAL, "--plot: gnuplot's arguments too long for %s", scr);
    FILE *log = tmpfile();
    const int status = gnuplot_run(vars, scr, log);
    if (gnuplot_stop_signal()) {
        if (log) fclose(log);
        return fpsim_fail(FPSIM_EINTERRUPTED, "--plot: interrupted");
    }
    char why[200] = "";
    if (log && fseek(log, 0, SEEK_SET) == 0) { /* its last non-empty line (the first repeats the script's) */
        char line[200];
        while (fgets(line, sizeof line, log))
            if (line[0] != '\n' && line[0] != '^') snprintf(why, sizeof why, "%s", line);
        why[strcspn(why, "\n")] = '\0';
    }
    if (log) fclose(log);
    if (gnuplot_succeeded(status) && !gnuplot_image_complete(outfile, fmt))
        return fpsim_fail(FPSIM_EIO, "--plot: gnuplot left %s.%s incomplete (disk full?)", out, fmt);
    if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 127)
        return fpsim_fail(FPSIM_EUNSUPPORTED, "--plot: gnuplot is not installed");
    if (!gnuplot_succeeded(status)) {
        char how[96];
        gnuplot_describe_status(how, sizeof how, status);
        return fpsim_fail(FPSIM_EIO, "--plot: gnuplot failed on %s (%s)%s%s", scr, how, why[0] ? ": " : "", why);
    }
    return FPSIM_OK;
}

static fpsim_status write_data(const char *dir, plot_cfg *pc, int nc, int layers, const char *fmt)
{
    char path[4096];
    FILE *f;
    fpsim_status st;
    /* histogram: 81 bins over [-m, m], m the largest |g - p| (at least 1e-3) */
    double m = 1e-3;
    for (int c = 0; c < nc; c++)
        for (size_t i = 0; i < pc[c].n * pc[c].len; i++)
            if (pc[c].mask[i] && fabs(pc[c].g[i] - pc[c].p[i]) > m) m = fabs(pc[c].g[i] - pc[c].p[i]);
    enum { B = 81 };
    snprintf(path, sizeof path, "%s/mismatch_hist.dat", dir);
    if (!(f = fopen(path, "w"))) return fpsim_fail(FPSIM_EIO, "--plot: cannot write %s", path);
    static double h[MAXC][B];
    double tot[MAXC] = {0};
    memset(h, 0, sizeof h);
    for (int c = 0; c < nc; c++)
        for (size_t i = 0; i < pc[c].n * pc[c].len; i++) {
            if (!pc[c].mask[i]) continue;
            double d = pc[c].g[i] - pc[c].p[i];
            if (!isfinite(d)) continue; /* no bin for a NaN or infinite difference */
            int b = (int)floor((d + m) / (2 * m) * (B - 1) + 0.5);
            if (b < 0) b = 0;
            if (b >= B) b = B - 1;
            h[c][b] += 1;
            tot[c] += 1;
        }
    fprintf(f, "bin");
    for (int c = 0; c < nc; c++) fprintf(f, " %s", pc[c].name);
    fprintf(f, "\n");
    for (int b = 0; b < B; b++) {
        fprintf(f, "%.9g", -m + 2 * m * b / (B - 1));
        for (int c = 0; c < nc; c++) fprintf(f, " %.9g", tot[c] > 0 ? h[c][b] / tot[c] : 0.0);
        fprintf(f, "\n");
    }
    if ((st = close_data(f, path))) return st;
    gnuplot_vars vars = {.n = 0};
    gnuplot_set(&vars, "datafile", path);
    if ((st = gnuplot(dir, "mismatch_hist.gp", &vars, "mismatch_hist", fmt))) return st;
    /* scatter and sequence length: one file per configuration, dir/mismatch_{scatter,seqlen}_C.dat
     * for C = 0 .. nc - 1; the titles are the names, one word each (read_configs) */
    char titles[MAXC * 64 + 1] = "";
    int scatter_positive = 0, seqlen_positive = 0; /* none (identical engines): no log y axis */
    for (int c = 0; c < nc; c++) {
        snprintf(path, sizeof path, "%s/mismatch_scatter_%d.dat", dir, c);
        if (!(f = fopen(path, "w"))) return fpsim_fail(FPSIM_EIO, "--plot: cannot write %s", path);
        for (size_t i = 0; i < pc[c].n * pc[c].len; i++)
            if (pc[c].mask[i]) {
                double d = fabs(pc[c].g[i] - pc[c].p[i]);
                fprintf(f, "%.9g %.9g\n", exp(pc[c].g[i]), d);
                scatter_positive |= d > 0;
            }
        if ((st = close_data(f, path))) return st;
        snprintf(path, sizeof path, "%s/mismatch_seqlen_%d.dat", dir, c);
        if (!(f = fopen(path, "w"))) return fpsim_fail(FPSIM_EIO, "--plot: cannot write %s", path);
        for (size_t s = 0; s < pc[c].n; s++) {
            double a = 0;
            size_t k = 0;
            for (size_t t = 0; t < pc[c].len; t++) {
                size_t i = s * pc[c].len + t;
                if (!pc[c].mask[i]) continue;
                a += exp(fabs(pc[c].g[i] - pc[c].p[i]));
                k++;
            }
            if (k) fprintf(f, "%zu %.9g\n", k, a / (double)k - 1.0);
            seqlen_positive |= k && a / (double)k - 1.0 > 0;
        }
        if ((st = close_data(f, path))) return st;
        strcat(titles, c ? " " : "");
        strcat(titles, pc[c].name);
    }
    char count[32];
    snprintf(count, sizeof count, "nconfigs=%d", nc);
    const char *const per_config[2] = {"mismatch_scatter", "mismatch_seqlen"};
    const int positive[2] = {scatter_positive, seqlen_positive};
    for (int k = 0; k < 2; k++) {
        gnuplot_vars v = {.n = 0};
        gnuplot_set(&v, "datadir", dir);
        gnuplot_set_code(&v, count);
        gnuplot_set_code(&v, positive[k] ? "allzero=0" : "allzero=1");
        gnuplot_set(&v, "titles", titles);
        char script[64];
        snprintf(script, sizeof script, "%s.gp", per_config[k]);
        if ((st = gnuplot(dir, script, &v, per_config[k], fmt))) return st;
    }
    /* attribution bars */
    int any = 0;
    for (int c = 0; c < nc; c++) any |= pc[c].have_attr;
    if (!any) return FPSIM_OK;
    snprintf(path, sizeof path, "%s/mismatch_attr.dat", dir);
    if (!(f = fopen(path, "w"))) return fpsim_fail(FPSIM_EIO, "--plot: cannot write %s", path);
    fprintf(f, "swap");
    for (int c = 0; c < nc; c++)
        if (pc[c].have_attr) fprintf(f, " %s", pc[c].name);
    fprintf(f, "\n");
    int rows = layers + 2 + 3;
    for (int k = 0; k < rows; k++) {
        if (k == 0) fprintf(f, "embed");
        else if (k <= layers) fprintf(f, "layer%d", k - 1);
        else if (k == layers + 1) fprintf(f, "head");
        else fprintf(f, "all-%s", k == layers + 2 ? "gemm" : (k == layers + 3 ? "reduce" : "kv"));
        for (int c = 0; c < nc; c++) {
            if (!pc[c].have_attr) continue;
            double full = pc[c].attr[rows] - 1.0, v = pc[c].attr[k] - 1.0;
            fprintf(f, " %.9g", full > 0 ? (full - v) / full : 0.0);
        }
        fprintf(f, "\n");
    }
    if ((st = close_data(f, path))) return st;
    gnuplot_vars attr = {.n = 0};
    gnuplot_set(&attr, "datafile", path);
    return gnuplot(dir, "mismatch_attr.gp", &attr, "mismatch_attr", fmt);
}

/* Every file of the staging directory tmp moved into outdir (keep) or removed, then tmp itself. */
static fpsim_status finish_staging(const char *tmp, const char *outdir, int keep)
{
    fpsim_status st = FPSIM_OK;
    DIR *d = opendir(tmp);
    if (!d) return fpsim_fail(FPSIM_EIO, "--plot: cannot read %s: %s", tmp, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char from[4096], to[4096];
        if (snprintf(from, sizeof from, "%s/%s", tmp, e->d_name) >= (int)sizeof from ||
            snprintf(to, sizeof to, "%s/%s", outdir, e->d_name) >= (int)sizeof to) {
            if (!st) st = fpsim_fail(FPSIM_EINVAL, "--plot: path too long in %s", outdir);
            continue;
        }
        if (keep && !st && rename(from, to) != 0)
            st = fpsim_fail(FPSIM_EIO, "--plot: cannot move %s to %s: %s", from, to, strerror(errno));
        if (!keep || st) remove(from);
    }
    closedir(d);
    rmdir(tmp);
    return st;
}

/* Everything the plots draw, from the open file f (HDF5's error printing is off: the caller).
 * pc[0 .. *nc_out - 1] may hold data after a failure too (the caller frees it). */
static fpsim_status read_results(hid_t f, const char *h5, plot_cfg pc[MAXC], int *nc_out, int64_t *layers_out)
{
    char kind[64] = "";
    if (fpsim_h5_read_attr_string(f, ".", "kind", kind, sizeof kind) || strcmp(kind, "fpsim-mismatch"))
        return fpsim_fail(FPSIM_EFORMAT, "--plot: %s is not a mismatch results file (kind '%s')", h5, kind);
    char names[MAXC][64];
    int64_t layers = 0;
    fpsim_status st = fpsim_h5_read_attr_int64(f, ".", "layers", &layers);
    *layers_out = layers;
    if (!st) st = read_configs(f, names, nc_out);
    const int nc = *nc_out;
    for (int c = 0; c < nc && !st; c++) {
        char path[1024];
        size_t r2, c2;
        snprintf(pc[c].name, sizeof pc[c].name, "%.63s", names[c]);
        snprintf(path, sizeof path, "configs/%s/g", names[c]);
        st = read_2d(f, path, H5T_NATIVE_DOUBLE, (void **)&pc[c].g, &pc[c].n, &pc[c].len);
        snprintf(path, sizeof path, "configs/%s/p", names[c]);
        if (!st) st = read_2d(f, path, H5T_NATIVE_DOUBLE, (void **)&pc[c].p, &r2, &c2);
        if (!st) st = same_dims(path, r2, c2, pc[c].n, pc[c].len);
        snprintf(path, sizeof path, "configs/%s/mask", names[c]);
        if (!st) st = read_2d(f, path, H5T_NATIVE_UINT8, (void **)&pc[c].mask, &r2, &c2);
        if (!st) st = same_dims(path, r2, c2, pc[c].n, pc[c].len);
        snprintf(path, sizeof path, "configs/%s/attr_layer", names[c]);
        if (!st && layers + 5 < 70 && H5Lexists(f, path, H5P_DEFAULT) > 0) {
            double *al = NULL, *ap = NULL;
            size_t ar, ac;
            st = read_2d(f, path, H5T_NATIVE_DOUBLE, (void **)&al, &ar, &ac);
            snprintf(path, sizeof path, "configs/%s/attr_part", names[c]);
            if (!st) st = read_2d(f, path, H5T_NATIVE_DOUBLE, (void **)&ap, &r2, &c2);
            /* one row per layer, head and embedding, and one per part (gemm, reduce, kv) */
            if (!st && (ar != (size_t)layers + 2 || r2 != 3 || ac < 1 || c2 < 1))
                st = fpsim_fail(FPSIM_ESHAPE, "--plot: configs/%s/attr_layer and attr_part have %zux%zu and %zux%zu "
                                "entries, expected %lldx1+ and 3x1+", names[c], ar, ac, r2, c2, (long long)layers + 2);
            if (!st) {
                int k = 0;
                for (size_t i = 0; i < ar; i++) pc[c].attr[k++] = al[i * ac];
                for (size_t i = 0; i < r2; i++) pc[c].attr[k++] = ap[i * c2];
                pc[c].nattr = k;
                pc[c].have_attr = 1;
            }
            free(al);
            free(ap);
        }
        /* the full mismatch after the swaps (index layers + 5) */
        if (!st && pc[c].have_attr) {
            double *tm = NULL;
            size_t tr, tcn;
            hid_t d = H5Dopen2(f, (snprintf(path, sizeof path, "configs/%s/token_metrics", names[c]), path), H5P_DEFAULT);
            if (d >= 0) {
                hid_t sp = H5Dget_space(d);
                hsize_t dims[3] = {0, 0, 0};
                const int rank = H5Sget_simple_extent_ndims(sp);
                if (rank == 3) H5Sget_simple_extent_dims(sp, dims, NULL);
                const int sized = rank == 3 && dims[0] && dims[1] && dims[2] && dims[1] <= MAX_ELEMENTS / dims[2] &&
                                  dims[0] <= MAX_ELEMENTS / (dims[1] * dims[2]);
                tr = sized ? (size_t)dims[0] : 0;
                tcn = sized ? (size_t)(dims[1] * dims[2]) : 0;
                if (!sized)
                    st = fpsim_fail(FPSIM_ESHAPE,
                                    "--plot: configs/%s/token_metrics is not a non-empty 3-D dataset of at most 2^27 "
                                    "entries", names[c]);
                tm = st ? NULL : malloc(tr * tcn * sizeof *tm);
                if (tm && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, tm) >= 0)
                    pc[c].attr[pc[c].nattr] = tm[(tr - 1) * tcn]; /* last step, metric 0, mean */
                free(tm);
                H5Sclose(sp);
                H5Dclose(d);
            }
        }
    }
    return st;
}

fpsim_status mismatch_plot_draw(const char *h5, const char *outdir, const char *fmt)
{
    if (strcmp(fmt, "png") && strcmp(fmt, "svg") && strcmp(fmt, "pdf"))
        return fpsim_fail(FPSIM_ENAME, "--plot: unknown format '%s' (valid: png, svg, pdf)", fmt);
    hid_t f;
    fpsim_status st = fpsim_h5_open_read(&f, h5);
    if (st) return st;
    /* HDF5's own error printing off: a damaged file is one line of ours */
    plot_cfg pc[MAXC];
    memset(pc, 0, sizeof pc);
    int nc = 0;
    int64_t layers = 0;
    H5E_BEGIN_TRY { st = read_results(f, h5, pc, &nc, &layers); } H5E_END_TRY;
    fpsim_h5_close_read(f);
    if (!st && mkdir(outdir, 0777) != 0 && errno != EEXIST)
        st = fpsim_fail(FPSIM_EIO, "--plot: cannot create %s: %s", outdir, strerror(errno));
    /* Everything is written into a staging directory inside outdir and moved out only when every
     * plot succeeded: a failure (gnuplot, a full disk) leaves no partial data or image behind. */
    char tmp[2048]; /* with the data files' names, under the 4096 of write_data's paths */
    if (!st && snprintf(tmp, sizeof tmp, "%s/.mismatch-plot-XXXXXX", outdir) >= (int)sizeof tmp)
        st = fpsim_fail(FPSIM_EINVAL, "--plot: output directory name too long");
    /* From the staging directory's creation to its removal a stop signal is held back, so that
     * it cannot leave the directory behind: the plots stop, the directory is emptied and
     * removed, then the signal takes its course. */
    gnuplot_hold_stops();
    if (!st && !mkdtemp(tmp)) st = fpsim_fail(FPSIM_EIO, "--plot: cannot create a directory in %s: %s", outdir, strerror(errno));
    else if (!st) {
        st = write_data(tmp, pc, nc, (int)layers, fmt);
        if (!st && gnuplot_stop_signal()) st = fpsim_fail(FPSIM_EINTERRUPTED, "--plot: interrupted");
        fpsim_status fin = finish_staging(tmp, outdir, st == FPSIM_OK);
        if (!st) st = fin;
    }
    gnuplot_release_stops();
    gnuplot_die_if_stopped();
    for (int c = 0; c < nc; c++) {
        free(pc[c].g);
        free(pc[c].p);
        free(pc[c].mask);
    }
    return st;
}
