/* bench_convert.c: not built yet: says so and fails. */
#include <stdio.h>

#include "commands.h"

int bench_convert(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim: 'bench_convert' is not implemented yet\n");
    return 2;
}
