/* test_mismatch_cli.c: engine texts of `fpsim mismatch`, checked whole before any work.
 *
 * Each bad request below used to be taken (or refused only after the pretraining):
 *   - an accumulation model the recipe's FP8 GEMMs refuse (block scales with hopper-qgmma:fast:
 *     exit 2 after ~37 s of pretraining) or that reaches no GEMM (bf16,accum=fp64: the same
 *     metrics as fp32); replay's RECIPE@accum= suffix (it bypassed the engine's accum and fell
 *     back to sgemm in silence); accum given twice through '@' and ',';
 *   - a custom recipe whose scheme has two keys (`bf16;x=nvfp4:sr=1,rht=1`) was cut at its ','
 *     ("engine: unknown key 'rht'");
 *   - first_hp covering every layer, a token line longer than the model's context (the message
 *     named neither file nor line), a temperature where vLLM samples greedily.
 * Each is exit 2 with one line; the requests that must be refused before the pretraining run
 * with --pretrain 1000000 under an alarm, so a refusal after it fails the test. The accepted
 * forms parse to one canonical text (each key once) and a custom multi-key recipe runs.
 * argv[1] is the fpsim executable. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fpsim_block.h"
#include "fpsim_h5.h"
#include "fpsim_mismatch.h"
#include "test_util.h"

static test_counter tc = TEST_COUNTER_INIT("mismatch cli");
static const char *fpsim;
static char dir[256];
static char err[8192];

static const char *SMALL = "layers=1,d=64,heads=2,kv_heads=2,ffn=128,vocab=32,seq=48,batch=2";

/* Run fpsim with args (NULL-terminated), stderr into err; killed after `limit` seconds (alarm),
 * which is then reported as exit -1. */
static int run(unsigned limit, char *const args[])
{
    char errfile[512];
    snprintf(errfile, sizeof errfile, "%s/stderr.txt", dir);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int out = open("/dev/null", O_WRONLY);
        dup2(fd, 2);
        dup2(out, 1);
        alarm(limit);
        execv(fpsim, args);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    FILE *f = fopen(errfile, "r");
    size_t n = f ? fread(err, 1, sizeof err - 1, f) : 0;
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

/* `fpsim mismatch -q --generator G --trainer T` on the small model with a pretraining that would
 * outlast the alarm: it must be refused (exit 2, one line naming `needle`) before it starts. */
static void expect_refused(const char *gen, const char *train, const char *needle, const char *extra_opt,
                           const char *extra_val)
{
    char out[512];
    snprintf(out, sizeof out, "%s/m.h5", dir);
    char *a[] = {"fpsim", "mismatch", "-q", "--generator", (char *)gen, "--trainer", (char *)train, "--model",
                 (char *)SMALL, "--pretrain", "1000000", "--no-attribution", "--out", out, (char *)extra_opt,
                 (char *)extra_val, NULL};
    int rc = run(60, a);
    int ok = rc == 2 && lines(err) == 1 && strstr(err, needle) && access(out, F_OK) != 0;
    TEST_CHECK(&tc, ok, "generator '%s' trainer '%s'%s%s: exit %d, want 2 and one line naming '%s'; stderr: %s", gen,
               train, extra_opt ? " " : "", extra_opt ? extra_opt : "", rc, needle, err);
    if (ok) printf("ok   %s | %s: %s", gen, train, err);
}

/* The engine text grammar through the library: canonical text, refusals. */
static void engine_texts(void)
{
    fpsim_engine_config c;
    char text[FPSIM_ENGINE_TEXT_MAX + 256];
    static const struct {
        const char *in, *canonical;
    } good[] = {
        /* a custom recipe keeps its scheme's ',' up to the first engine key */
        {"bf16;x=nvfp4:sr=1,rht=1", "bf16;x=nvfp4:sr=1,rht=1,accum=fp32,reduce=pairwise,kv=hp,kv_scales=fresh,"
                                    "style=decode,refit=bf16"},
        {"bf16;x=nvfp4:sr=1,rht=1,kv=fp8,kv_scales=stale",
         "bf16;x=nvfp4:sr=1,rht=1,accum=fp32,reduce=pairwise,kv=fp8,kv_scales=stale,style=decode,refit=bf16"},
        /* one spelling per model; accum keeps its own ",splitk=" option */
        {"te-current,accum=hopper-qgmma",
         "te-current,accum=hopper-qgmma:promote=128,reduce=pairwise,kv=hp,kv_scales=fresh,style=decode,refit=bf16"},
        {"te-current,accum=hopper-qgmma:fast,splitk=2,reduce=seq",
         "te-current,accum=hopper-qgmma:fast,splitk=2,reduce=seq,kv=hp,kv_scales=fresh,style=decode,refit=bf16"},
        {"nemo-rl-fp8,accum=hopper-qgmma",
         "nemo-rl-fp8,accum=hopper-qgmma:promote=128,reduce=pairwise,kv=hp,kv_scales=fresh,style=decode,refit=bf16"},
        /* the default, named: the canonical text of every engine says it */
        {"bf16,accum=fp32", "bf16,accum=fp32,reduce=pairwise,kv=hp,kv_scales=fresh,style=decode,refit=bf16"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        fpsim_engine_config_generator(&c, "bf16");
        fpsim_status st = fpsim_engine_config_parse(&c, good[i].in);
        if (!st) st = fpsim_engine_config_format(&c, text, sizeof text);
        TEST_CHECK(&tc, !st && !strcmp(text, good[i].canonical), "'%s' -> '%s' (%s), want '%s'", good[i].in,
                   st ? "" : text, st ? fpsim_last_error() : "", good[i].canonical);
        /* the canonical text parses back to itself */
        fpsim_engine_config back;
        fpsim_engine_config_trainer(&back, "bf16");
        char again[sizeof text];
        st = st ? st : fpsim_engine_config_parse(&back, text);
        if (!st) st = fpsim_engine_config_format(&back, again, sizeof again);
        TEST_CHECK(&tc, !st && !strcmp(text, again), "canonical '%s' parses back to '%s' (%s)", text, again,
                   st ? fpsim_last_error() : "");
    }
    static const struct {
        const char *in, *needle;
    } bad[] = {
        {"nemo-rl-fp8,accum=hopper-qgmma:fast", "promote every 128"},
        {"nemo-rl-fp8@accum=hopper-qgmma:fast", "'nemo-rl-fp8,accum=hopper-qgmma:fast'"},
        {"bf16@accum=fp64,accum=fp32", "replay's recipe suffix"},
        {"bf16@foo=1", "unknown suffix '@foo=1'"},
        {"bf16,accum=fp64", "no effect"},
        {"bf16,accum=hopper-qgmma:fast", "no FP8 GEMM"},
        {"te-nvfp4,accum=hopper-qgmma", "no FP8 GEMM"},
        {"bf16;x=fp8-tensor;w=fp8-block,accum=hopper-qgmma", "both block FP8 or both per-tensor"},
        {"nemo-rl-fp8,accum=hopper-hgmma", "BF16/FP16"},
        {"te-current,accum=fp32,splitk=2", "no effect on BLAS sgemm"},
        {"te-current,accum=hopper-qgmma,fold=fma", "fold has no effect"},
        {"te-current,accum=hopper-qgmma,accum=fp32", "given twice"},
        {"bf16,kv=fp8,kv=hp", "given twice"},
        {"bf16,foo=1", "unknown key 'foo'"},
        {"bf16,kv=fp8,foo=1", "unknown key 'foo'"},
        {"bf16;x=nvfp4:sr=1,foo=1", "unknown scheme key 'foo'"},
        {"bf16,", "empty clause"},
        {"bf16,kv=fp8,", "empty clause"},
        {"fp64;x=nvfp4", "takes no overrides"},
        {"nosuch,kv=fp8", "unknown recipe 'nosuch'"},
        {"bf16,kv_scales=stale", "without kv=fp8"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fpsim_engine_config_generator(&c, "bf16");
        fpsim_status st = fpsim_engine_config_parse(&c, bad[i].in);
        TEST_CHECK(&tc, st && strstr(fpsim_last_error(), bad[i].needle), "'%s': status %d, message '%s', want '%s'",
                   bad[i].in, (int)st, st ? fpsim_last_error() : "", bad[i].needle);
    }
    /* The recipe of an engine text ends at the first ",KEY=" with KEY an engine key, which is
     * unambiguous only while no scheme takes an engine key's name: */
    static const char *const engine_keys[] = {"accum", "reduce", "kv", "kv_scales", "style", "refit"};
    size_t nnames;
    const char *const *names = fpsim_scheme_names(&nnames);
    for (size_t i = 0; i < nnames; i++)
        for (size_t k = 0; k < sizeof engine_keys / sizeof engine_keys[0]; k++) {
            char s[128];
            fpsim_scheme sc;
            snprintf(s, sizeof s, "%s:%s=1", names[i], engine_keys[k]);
            TEST_CHECK(&tc, fpsim_scheme_parse(&sc, s) != FPSIM_OK, "scheme '%s' takes engine key '%s'", names[i],
                       engine_keys[k]);
        }
    /* the suite's configurations are all valid engine texts */
    fpsim_mm_config suite;
    fpsim_mm_config_default(&suite);
    TEST_CHECK(&tc, fpsim_mm_config_suite(&suite) == FPSIM_OK, "suite: %s", fpsim_last_error());
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: test_mismatch_cli PATH/TO/fpsim\n");
        return 2;
    }
    fpsim = argv[1];
    snprintf(dir, sizeof dir, "%s/fpsim-mismatch-cli-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        printf("cannot make a temporary directory\n");
        return 1;
    }
    engine_texts();

    /* Refused before the pretraining (it would outlast the alarm). */
    expect_refused("nemo-rl-fp8,accum=hopper-qgmma:fast", "fp32", "promote every 128", NULL, NULL);
    expect_refused("nemo-rl-fp8@accum=hopper-qgmma:fast", "fp32", "nemo-rl-fp8,accum=hopper-qgmma:fast", NULL, NULL);
    expect_refused("bf16,accum=fp64", "fp32", "no effect", NULL, NULL);
    expect_refused("bf16", "te-current@accum=hopper-qgmma:fast", "te-current,accum=hopper-qgmma:fast", NULL, NULL);
    expect_refused("te-nvfp4;first_hp=1", "fp32", "quantize nothing", NULL, NULL);
    expect_refused("bf16", "te-mxfp8;last_hp=3", "quantize nothing", NULL, NULL);
    expect_refused("bf16", "fp32", "greedily", "--temperature", "1e-300");
    expect_refused("bf16", "fp32", "greedily", "--temperature", "9e-6");
    /* a token line longer than the model's context (seq=48): the file and line are named */
    char tokens[600];
    snprintf(tokens, sizeof tokens, "%s/long.txt", dir);
    FILE *f = fopen(tokens, "w");
    if (f) {
        fprintf(f, "# comment\n1 2 | 3 4\n");
        for (int i = 0; i < 60; i++) fprintf(f, "%d ", 1 + i % 20);
        fprintf(f, "\n");
        fclose(f);
    }
    {
        char out[512], needle[700];
        snprintf(out, sizeof out, "%s/m.h5", dir);
        snprintf(needle, sizeof needle, "%s line 3 has 60 tokens, more than the model's context (seq=48)", tokens);
        char *a[] = {"fpsim", "mismatch", "-q", "--generator", "bf16", "--trainer", "fp32", "--model", (char *)SMALL,
                     "--pretrain", "1000000", "--tokens", tokens, "--out", out, NULL};
        int rc = run(60, a);
        TEST_CHECK(&tc, rc == 2 && lines(err) == 1 && strstr(err, needle),
                   "long token line: exit %d, want 2 naming '%s': %s", rc, needle, err);
    }

    /* A custom recipe with a two-key scheme, as a generator: runs, and is recorded as given. */
    {
        snprintf(tokens, sizeof tokens, "%s/ok.txt", dir);
        f = fopen(tokens, "w");
        if (f) {
            fprintf(f, "1 2 3 | 4 5 6 7\n2 3 | 4 5 6 7 8 9\n");
            fclose(f);
        }
        char out[512];
        snprintf(out, sizeof out, "%s/ok.h5", dir);
        char *a[] = {"fpsim", "mismatch", "-q", "--generator", "bf16;x=nvfp4:sr=1,rht=1,kv=fp8", "--trainer", "fp32",
                     "--model", (char *)SMALL, "--pretrain", "0", "--tokens", tokens, "--no-attribution", "--out", out,
                     NULL};
        int rc = run(300, a);
        char gen[1024] = "";
        hid_t h;
        if (rc == 0 && (h = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0) {
            fpsim_h5_read_attr_string(h, "configs/run", "generator", gen, sizeof gen);
            H5Fclose(h);
        }
        const char *want = "bf16;x=nvfp4:sr=1,rht=1,accum=fp32,reduce=pairwise,kv=fp8,kv_scales=fresh,style=decode,"
                           "refit=bf16";
        TEST_CHECK(&tc, rc == 0 && !strcmp(gen, want), "custom two-key recipe: exit %d, generator '%s', want '%s'; %s",
                   rc, gen, want, err);
    }

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("note: could not remove %s\n", dir);
    return test_summary(&tc);
}
