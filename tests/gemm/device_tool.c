/* device_tool.c: a small `fpsim` with only the GEMM commands (gemm, verify gemm, bench gemm),
 * built by gpu/device_gemm.sh for the GPU machine, which has CUDA but not GSL/HDF5. The commands
 * are the same source files as in the full fpsim (cli/cmd_gemm.c, verify_gemm.c, bench_gemm.c). */
#include <stdio.h>
#include <string.h>

#include "commands.h"

/* The test programs' mains, compiled in with -Dmain=... so that one binary travels. */
int test_gemm_gpu_main(void);
int test_gemm_model_main(void);

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "test-gpu")) return test_gemm_gpu_main();
    if (argc >= 2 && !strcmp(argv[1], "test-model")) return test_gemm_model_main();
    if (argc >= 2 && !strcmp(argv[1], "gemm")) return cmd_gemm(argc - 1, argv + 1);
    if (argc >= 3 && !strcmp(argv[1], "verify") && !strcmp(argv[2], "gemm")) return verify_gemm(argc - 2, argv + 2);
    if (argc >= 3 && !strcmp(argv[1], "bench") && !strcmp(argv[2], "gemm")) return bench_gemm(argc - 2, argv + 2);
    fprintf(stderr, "usage: fpsim-gemm gemm|verify gemm|bench gemm|test-gpu|test-model [options]\n");
    return 2;
}
