/* cmd_quantize.c: `fpsim quantize` (not built yet: says so and fails). */
#include <stdio.h>

#include "commands.h"

int cmd_quantize(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim quantize: not implemented yet\n");
    return 2;
}
