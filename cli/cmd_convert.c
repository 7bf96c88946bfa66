/* cmd_convert.c: `fpsim convert` (not built yet: says so and fails). */
#include <stdio.h>

#include "commands.h"

int cmd_convert(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim convert: not implemented yet\n");
    return 2;
}
