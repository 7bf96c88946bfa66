/* cmd_formats.c: `fpsim formats` (not built yet: says so and fails). */
#include <stdio.h>

#include "commands.h"

int cmd_formats(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim formats: not implemented yet\n");
    return 2;
}
