/* bench_replay.c: not built yet: says so and fails. */
#include <stdio.h>

#include "commands.h"

int bench_replay(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim: 'bench_replay' is not implemented yet\n");
    return 2;
}
