/* cmd_gemm.c: `fpsim gemm` (not built yet: says so and fails). */
#include <stdio.h>

#include "commands.h"

int cmd_gemm(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim gemm: not implemented yet\n");
    return 2;
}
