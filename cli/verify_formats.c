/* verify_formats.c: not built yet: says so and fails. */
#include <stdio.h>

#include "commands.h"

int verify_formats(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim: 'verify_formats' is not implemented yet\n");
    return 2;
}
