/* cmd_replay.c: `fpsim replay` (not built yet: says so and fails). */
#include <stdio.h>

#include "commands.h"

int cmd_replay(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim replay: not implemented yet\n");
    return 2;
}
