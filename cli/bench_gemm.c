/* bench_gemm.c: not built yet: says so and fails. */
#include <stdio.h>

#include "commands.h"

int bench_gemm(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim: 'bench_gemm' is not implemented yet\n");
    return 2;
}
