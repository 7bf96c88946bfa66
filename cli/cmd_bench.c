/* cmd_bench.c: `fpsim bench <what>`: dispatch to cli/bench_<what>.c. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

int cmd_bench(int argc, char **argv)
{
    static const struct { const char *name; int (*run)(int, char **); const char *summary; } subs[] = {
        {"convert", bench_convert, "element conversions vs memcpy (Gelem/s)"},
        {"quantize", bench_quantize, "block quantizers vs memcpy (CPU) or a device copy (--device gpu)"},
        {"replay", bench_replay, "instrumented replay step vs plain FP32 step; GEMM rate vs sgemm"},
        {"gemm", bench_gemm, "accumulation-model GEMMs, and cuBLASLt on the GPU"},
    };
    size_t n = sizeof subs / sizeof subs[0];
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *out = argc < 2 ? stderr : stdout;
        fprintf(out, "usage: fpsim bench <what> [--json] [options]\n\n");
        for (size_t i = 0; i < n; i++) fprintf(out, "  %-9s %s\n", subs[i].name, subs[i].summary);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < n; i++)
        if (!strcmp(argv[1], subs[i].name)) return subs[i].run(argc - 1, argv + 1);
    fprintf(stderr, "fpsim bench: unknown benchmark '%s'; valid:", argv[1]);
    for (size_t i = 0; i < n; i++) fprintf(stderr, " %s", subs[i].name);
    fprintf(stderr, "\n");
    return 2;
}
