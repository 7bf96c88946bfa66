/* cmd_mismatch.c: `fpsim mismatch` (not built yet: says so and fails). */
#include <stdio.h>

#include "commands.h"

int cmd_mismatch(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim mismatch: not implemented yet\n");
    return 2;
}
