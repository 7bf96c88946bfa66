/* main.c: `fpsim <command> [options]`, dispatching to one file per command. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"formats", cmd_formats, "list the element formats with their limits"},
    {"convert", cmd_convert, "convert raw values or .npy arrays into an element format (or decode)"},
    {"quantize", cmd_quantize, "block-scaled quantization of a 2-D tensor (MX, NVFP4, block FP8, ...)"},
    {"recipes", cmd_recipes, "list the named training recipes"},
    {"replay", cmd_replay, "replay training steps under recipes; per-layer error (the main job)"},
    {"mismatch", cmd_mismatch, "generator/trainer log-prob mismatch, layer by layer"},
    {"gemm", cmd_gemm, "GEMM under a tensor-core accumulation model"},
    {"plot", cmd_plot, "plot a results file with gnuplot"},
    {"verify", cmd_verify, "self-checks: CPU emulators, GPU kernels against the CPU"},
    {"bench", cmd_bench, "benchmarks with a baseline measured in the same run"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: fpsim <command> [options]     (fpsim <command> --help for details)\n\n"
                 "fpsim " FPSIM_VERSION ": a bit-exact numerics simulator for low-precision LLM training.\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("fpsim %s\n", FPSIM_VERSION);
        return 0;
    }
    /* Over the file-size limit (ulimit -f) a write then fails with EFBIG, which every writer reports
     * as one line and cleans up after (its temporary file removed), instead of SIGXFSZ killing the
     * process with the temporary file left behind. */
    signal(SIGXFSZ, SIG_IGN);
    /* FPSIM_THREADS sets every default thread count; a value the library cannot use would be
     * dropped there in silence (all cores instead), so it is refused here. */
    const char *threads = getenv("FPSIM_THREADS");
    long n;
    if (threads && *threads && fpsim_cli_parse_int(threads, "FPSIM_THREADS", 1, 1024, &n)) {
        fprintf(stderr, "fpsim: %s\n", fpsim_last_error());
        return 2;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "fpsim: unknown command '%s'; valid commands:", argv[1]);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(stderr, " %s", commands[i].name);
    fprintf(stderr, "\n");
    return 2;
}
