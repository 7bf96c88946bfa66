#!/usr/bin/env bash
# build_min.sh BUILD_DIR: build fpsim-min (verify + bench quantize --device gpu) and the gpu tests
# from formats/, gpu/ and three CLI files with gcc + nvcc alone, for a machine where the full
# CMake configure fails (no GSL, HDF5 or BLAS). Same flags as CMake: no contraction, no fast math.
set -eu
B=${1:-build-min}
mkdir -p "$B/obj"
J=$(nproc)
CFLAGS="-O2 -std=c11 -Wall -ffp-contract=off -fno-fast-math -fexcess-precision=standard -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DFPSIM_VERSION=\"min\" -DFPSIM_HAVE_CUDA=1 -Iformats -Igpu -Icli -Itests"
NVFLAGS="-O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -fmad=false -Iformats -Igpu -DFPSIM_VERSION=\"min\""
pids=()
for f in formats/*.c gpu/*.c cli/verify_formats.c cli/bench_quantize_gpu.c cli/cli_util.c gpu/tools/device_main.c tests/gpu/*.c; do
  o="$B/obj/$(echo "$f" | tr / _).o"
  gcc $CFLAGS -c "$f" -o "$o" &
  pids+=($!)
done
for f in gpu/*.cu; do
  case "$f" in gpu/gemm_*) continue ;; esac   # the GEMM engineer's cuBLASLt files need sim/
  o="$B/obj/$(echo "$f" | tr / _).o"
  nvcc $NVFLAGS -c "$f" -o "$o" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
LIB=$(ls $B/obj/formats_*.o $B/obj/gpu_*.o | grep -v device_main)
nvcc -o "$B/fpsim-min" $LIB $B/obj/cli_*.o $B/obj/gpu_tools_device_main.c.o -lpthread -lm
for t in test_gpu_convert test_gpu_blocks; do
  nvcc -o "$B/$t" $LIB "$B/obj/tests_gpu_$t.c.o" -lpthread -lm
done
echo "built $B/fpsim-min $B/test_gpu_convert $B/test_gpu_blocks"
