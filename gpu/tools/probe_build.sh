#!/usr/bin/env bash
# probe_build.sh: a probe build of fpsim-device for gpu/tools/ab.sh, without a CMake tree per probe.
#   bash gpu/tools/probe_build.sh NAME "-DFLAGS..." [GPU_SRC_DIR]
# Compiles GPU_SRC_DIR/block_quantize.cu (default: this tree's gpu/; a patched copy for a probe
# diff) with build-devonly's CUDA flags plus FLAGS, swaps the object into a copy of
# libfpsim_gpu.a and links fpsim-device against that copy, in /tmp/fpsim-probe/NAME (ptxas.log
# holds the registers and spills). Then: cp /tmp/fpsim-probe/NAME/fpsim-device .carry/fpsim-device-NAME.
# The library is named in the link's response file (linkLibs.rsp), not in link.txt; a probe binary
# equal to build-devonly's is refused (runs 144 and 146 timed such copies: gpu/RESULTS.md run 148).
set -euo pipefail
case "${1:-}" in -h | --help | "") sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; [ -n "${1:-}" ]; exit ;; esac
name=$1 flags=${2:-} root=$(cd "$(dirname "$0")/../.." && pwd)
src=${3:-$root/gpu}
b=$root/build-devonly
[ -f "$b/gpu/CMakeFiles/fpsim_gpu.dir/includes_CUDA.rsp" ] && [ -x "$b/fpsim-device" ] ||
    { echo "probe_build.sh: build build-devonly's fpsim-device first (docs/gpu.md)" >&2; exit 2; }
[ -f "$src/block_quantize.cu" ] || { echo "probe_build.sh: no $src/block_quantize.cu" >&2; exit 2; }
d=/tmp/fpsim-probe/$name
rm -rf "$d" && mkdir -p "$d"
# shellcheck disable=SC2086
(cd "$b/gpu" && nvcc -forward-unknown-to-host-compiler -DFPSIM_VERSION=\"0.1.0\" \
    --options-file CMakeFiles/fpsim_gpu.dir/includes_CUDA.rsp -O3 -DNDEBUG \
    --generate-code=arch=compute_90,code=[compute_90,sm_90] -fmad=false -Xcompiler=-Wall -std=c++17 \
    $flags -Xptxas -v -c "$src/block_quantize.cu" -o "$d/block_quantize.cu.o" 2> "$d/ptxas.log") ||
    { tail -5 "$d/ptxas.log" >&2; exit 1; }
cp "$b/gpu/libfpsim_gpu.a" "$d/libfpsim_gpu.a"
ar r "$d/libfpsim_gpu.a" "$d/block_quantize.cu.o"
sed "s#gpu/libfpsim_gpu.a#$d/libfpsim_gpu.a#g" "$b/CMakeFiles/fpsim-device.dir/linkLibs.rsp" > "$d/linkLibs.rsp"
grep -q "$d/libfpsim_gpu.a" "$d/linkLibs.rsp" || { echo "probe_build.sh: libfpsim_gpu.a not in linkLibs.rsp" >&2; exit 1; }
link=$(cat "$b/CMakeFiles/fpsim-device.dir/link.txt")
link=${link//@CMakeFiles\/fpsim-device.dir\/linkLibs.rsp/@$d/linkLibs.rsp}
link=${link/-o fpsim-device/-o $d/fpsim-device}
(cd "$b" && eval "$link")
if cmp -s "$d/fpsim-device" "$b/fpsim-device"; then
    echo "probe_build.sh: $name's fpsim-device equals build-devonly's: the probe did not take" >&2
    exit 1
fi
grep -c "spill stores" "$d/ptxas.log" | sed "s/^/$name: kernels compiled: /"
echo "$d/fpsim-device"
