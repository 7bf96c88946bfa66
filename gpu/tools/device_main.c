/* device_main.c: a minimal `fpsim` for machines that lack GSL/HDF5/BLAS (the device machine's
 * image may have only CUDA): the commands that exercise the GPU kernels and nothing of sim/.
 * Built by gpu/tools/build_min.sh when the full CMake configure fails; same subcommand syntax:
 *   fpsim-min verify [--device cpu|gpu] ...      fpsim-min bench quantize --device gpu ... */
#include <stdio.h>
#include <string.h>

#include "commands.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "verify")) return verify_formats(argc - 1, argv + 1);
    if (argc >= 3 && !strcmp(argv[1], "bench") && !strcmp(argv[2], "quantize"))
        return bench_quantize_gpu(argc - 2, argv + 2);
    fprintf(stderr, "usage: fpsim-min verify [options] | fpsim-min bench quantize --device gpu [options]\n");
    return 2;
}
