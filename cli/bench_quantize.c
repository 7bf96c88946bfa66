/* bench_quantize.c: not built yet: says so and fails. */
#include <stdio.h>

#include "commands.h"

int bench_quantize(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim: 'bench_quantize' is not implemented yet\n");
    return 2;
}
