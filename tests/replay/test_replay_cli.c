/* test_replay_cli.c: `fpsim replay` and `fpsim plot` as a user meets them.
 *
 * Bad input: an unknown recipe, a model spec whose dimensions do not divide (by the heads, or by
 * the block a recipe needs), an output path that cannot be created: each gives exit status 2,
 * exactly one line on stderr naming the problem, and no output file. A missing gnuplot is a
 * clear error of `fpsim plot`. A good run of 2 steps of a small config writes the results file
 * (and plots, when gnuplot is installed); its root attribute gemm_accumulation names sgemm, and
 * says "per recipe" when a recipe has its own accumulation model (it named sgemm either way).
 * argv[1] is the fpsim executable. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fpsim_h5.h"

static int failures;
static const char *fpsim;
static char dir[256];

/* Run fpsim with args (NULL-terminated); stderr into err (cap bytes); returns the exit status. */
static int run(char *err, size_t cap, const char *path_env, char *const args[])
{
    char errfile[512];
    snprintf(errfile, sizeof errfile, "%s/stderr.txt", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int out = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        dup2(out, 1);
        if (path_env) setenv("PATH", path_env, 1);
        alarm(120); /* a refusal that comes only after a long pretraining fails, not hangs */
        execv(fpsim, args);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    FILE *f = fopen(errfile, "r");
    size_t n = f ? fread(err, 1, cap - 1, f) : 0;
    err[n] = 0;
    if (f) fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void expect_bad(const char *what, const char *needle, char *const args[], const char *out)
{
    char err[4096];
    int rc = run(err, sizeof err, NULL, args);
    if (rc != 2 || lines(err) != 1 || !strstr(err, needle) || (out && exists(out))) {
        printf("FAIL %s: exit %d, %d line(s), want 2 and one line naming '%s'; stderr: %s", what, rc,
               lines(err), needle, err);
        failures++;
    } else {
        printf("ok   %s: %s", what, err);
    }
}

/* As expect_bad, and the line must not hold `absent`. */
static void expect_bad_without(const char *what, const char *needle, const char *absent, char *const args[],
                               const char *out)
{
    char err[4096];
    int rc = run(err, sizeof err, NULL, args);
    if (rc != 2 || lines(err) != 1 || !strstr(err, needle) || strstr(err, absent) || (out && exists(out))) {
        printf("FAIL %s: exit %d, %d line(s), want 2 and one line naming '%s' without '%s'; stderr: %s", what, rc,
               lines(err), needle, absent, err);
        failures++;
    } else {
        printf("ok   %s: %s", what, err);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_replay_cli PATH/TO/fpsim\n");
        return 2;
    }
    fpsim = argv[1];
    snprintf(dir, sizeof dir, "%s/fpsim-replay-cli-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        printf("cannot make a temporary directory\n");
        return 1;
    }
    char out[512], plots[512];
    snprintf(out, sizeof out, "%s/results.h5", dir);
    snprintf(plots, sizeof plots, "%s/plots", dir);
    const char *small = "layers=2,d=128,heads=2,kv_heads=2,ffn=256,vocab=128,seq=64,batch=2";

    {
        char *a[] = {"fpsim", "replay", "--recipe", "no-such-recipe", "--out", out, "--no-plots", NULL};
        expect_bad("unknown recipe", "no-such-recipe", a, out);
    }
    {
        char *a[] = {"fpsim", "replay", "--model", "d=130,heads=4", "--out", out, "--no-plots", NULL};
        expect_bad("d not divisible by heads", "heads", a, out);
    }
    {
        /* ffn = 200 is not a multiple of the 16-element NVFP4 block */
        char *a[] = {"fpsim", "replay", "--recipe", "te-nvfp4", "--model",
                     "layers=1,d=128,heads=2,kv_heads=2,ffn=200,vocab=128,seq=64,batch=2", "--out", out,
                     "--no-plots", NULL};
        expect_bad("ffn not divisible by the recipe's block", "ffn", a, out);
    }
    /* Recipe messages: fp64 takes no overrides (it was "unknown recipe 'fp64' ... (or fp64, the
     * unrounded control)"); the fp64 note only beside an unknown name (it was appended to every
     * error of the recipe library); an unknown '@' suffix named as such (it was "unknown recipe
     * key 'bf16@foo'"); rht=1 on a rowwise operand; first/last high-precision layers covering
     * the model, refused before the pretraining. */
    {
        char *a[] = {"fpsim", "replay", "--recipe", "fp64;x=nvfp4", "--out", out, "--no-plots", NULL};
        expect_bad_without("fp64 with overrides", "fp64, the unrounded control, takes no overrides", "unknown recipe", a,
                           out);
    }
    {
        char *a[] = {"fpsim", "replay", "--recipe", "bf16;hp=fp16", "--out", out, "--no-plots", NULL};
        expect_bad_without("bad hp value", "unknown precision 'fp16'", "(or fp64", a, out);
    }
    {
        char *a[] = {"fpsim", "replay", "--recipe", "bf16@foo=1", "--out", out, "--no-plots", NULL};
        expect_bad_without("unknown @ suffix", "unknown suffix '@foo=1'", "recipe key", a, out);
    }
    {
        char *a[] = {"fpsim", "replay", "--recipe", "no-such-recipe;first_hp=1", "--out", out, "--no-plots", NULL};
        expect_bad("unknown base name", "or fp64, the unrounded control", a, out);
    }
    {
        char *a[] = {"fpsim", "replay", "--recipe", "bf16;fprop.x=nvfp4:rht=1", "--out", out, "--no-plots", NULL};
        expect_bad("rht=1 on a rowwise operand", "rowwise", a, out);
    }
    {
        char *a[] = {"fpsim", "replay", "--recipe", "te-nvfp4;first_hp=1;last_hp=1", "--model", (char *)small,
                     "--pretrain", "100000", "--out", out, "--no-plots", NULL};
        expect_bad("first_hp + last_hp cover the model", "it would quantize nothing", a, out);
    }
    {
        char bad[600];
        snprintf(bad, sizeof bad, "%s/no/such/dir/results.h5", dir);
        char *a[] = {"fpsim", "replay", "--model", (char *)small, "--out", bad, "--no-plots", NULL};
        expect_bad("unwritable output", "no/such/dir", a, bad);
    }
    {
        char *a[] = {"fpsim", "replay", "--no-such-flag", NULL};
        expect_bad("unknown option", "--no-such-flag", a, NULL);
    }
    {
        char err[4096];
        char *a[] = {"fpsim", "plot", out, "--outdir", plots, NULL};
        int rc = run(err, sizeof err, "/nonexistent-bin", a);
        if (rc == 0 || lines(err) != 1 || !strstr(err, "gnuplot")) {
            printf("FAIL missing gnuplot: exit %d, stderr: %s", rc, err);
            failures++;
        } else {
            printf("ok   missing gnuplot (exit %d): %s", rc, err);
        }
    }
    /* A good run: 2 steps of a small config, two recipes, plots if gnuplot is here. */
    {
        char err[8192];
        char *a[] = {"fpsim", "replay", "--model", (char *)small, "--steps", "2", "--pretrain", "1",
                     "--recipe", "bf16", "--recipe", "nemo-rl-fp8", "--out", out, "--plots", plots,
                     "--quiet", NULL};
        int rc = run(err, sizeof err, NULL, a);
        int have_gnuplot = system("gnuplot --version >/dev/null 2>&1") == 0;
        char png[600];
        snprintf(png, sizeof png, "%s/gemm_error_fprop.png", plots);
        if (rc != 0 || !exists(out) || (have_gnuplot && !exists(png))) {
            printf("FAIL good run: exit %d, results %s, plot %s; stderr: %s", rc, exists(out) ? "yes" : "no",
                   exists(png) ? "yes" : "no", err);
            failures++;
        } else {
            printf("ok   good run: results written%s\n", have_gnuplot ? ", plots drawn" : " (no gnuplot: no plots)");
        }
    }
    /* gemm_accumulation: sgemm by default, "per recipe" with an accumulation model */
    {
        char err[8192], text[256] = "";
        hid_t f;
        int ok = fpsim_h5_open_read(&f, out) == FPSIM_OK;
        if (ok) {
            ok = fpsim_h5_read_attr_string(f, ".", "gemm_accumulation", text, sizeof text) == FPSIM_OK &&
                 !strncmp(text, "fp32 (BLAS sgemm", 16);
            fpsim_h5_close_read(f);
        }
        char *a[] = {"fpsim", "replay", "--model", (char *)small, "--steps", "1", "--pretrain", "0",
                     "--recipe", "nemo-rl-fp8@accum=fp32:seq", "--out", out, "--no-plots", "--quiet", NULL};
        int rc = run(err, sizeof err, NULL, a);
        if (ok && rc == 0 && fpsim_h5_open_read(&f, out) == FPSIM_OK) {
            ok = fpsim_h5_read_attr_string(f, ".", "gemm_accumulation", text, sizeof text) == FPSIM_OK &&
                 !strncmp(text, "per recipe", 10);
            fpsim_h5_close_read(f);
        } else {
            ok = 0;
        }
        if (!ok) {
            printf("FAIL gemm_accumulation attribute: '%s' (exit %d; %s)\n", text, rc, err);
            failures++;
        } else {
            printf("ok   gemm_accumulation attribute follows the recipes' models\n");
        }
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("note: could not remove %s\n", dir);
    if (failures) {
        printf("%d failure(s)\n", failures);
        return 1;
    }
    return 0;
}
