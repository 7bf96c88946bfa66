/* cmd_plot.c: `fpsim plot` (not built yet: says so and fails). */
#include <stdio.h>

#include "commands.h"

int cmd_plot(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim plot: not implemented yet\n");
    return 2;
}
