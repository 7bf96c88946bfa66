/* cmd_verify.c: `fpsim verify [gemm] [--device cpu|gpu]`: self-checks. Plain `fpsim verify`
 * checks the element formats and block quantizers (cli/verify_formats.c); `fpsim verify gemm`
 * the accumulation models (cli/verify_gemm.c). */
#include <string.h>

#include "commands.h"

int cmd_verify(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "gemm")) return verify_gemm(argc - 1, argv + 1);
    return verify_formats(argc, argv);
}
