/* cmd_recipes.c: `fpsim recipes` (not built yet: says so and fails). */
#include <stdio.h>

#include "commands.h"

int cmd_recipes(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "fpsim recipes: not implemented yet\n");
    return 2;
}
