#!/usr/bin/env bash
# cli_check.sh: the full fpsim binary's GPU paths (`convert --device gpu`, `quantize --device gpu`,
# including `--axis both`) run on the device machine, which has no HDF5, GSL or OpenBLAS: the
# binary travels with the shared libraries it links that the CUDA image lacks.
#
#   here:   bash gpu/tools/cli_check.sh pack   -> .carry-cli/cli.tar.xz (build/fpsim and its libraries)
#   there:  bash gpu/tools/cli_check.sh run    (device tool, carry [".carry-cli"])
#
# On the device: random float32 and bf16 inputs of odd and tile-aligned shapes (numpy, with NaN,
# Inf, ties and subnormals planted); for each case the CPU run and the GPU run of the same command.
#  - convert: the two code files must be byte-identical (cmp);
#  - quantize: the GPU run checks every output against the CPU emulator itself (exit 1 and
#    nothing written on any difference), and gpu/tools/cli_compare.py then compares its .h5 with
#    the CPU run's, every dataset's bytes and every attribute but those naming the run (h5py
#    travels as a wheel: WHEEL, default the newest h5py-*cp312*.whl in /tmp/wh, fetched by
#    `python3 -m pip download h5py==3.14.0 --no-deps --python-version 3.12 --only-binary=:all:
#    --platform manylinux_2_17_x86_64 -d /tmp/wh` for the device's Python 3.12).
# Output: $OUT/cli.txt (one line per case: rc of both runs and the verdict; the comparison).
# Exit status of run: 0 when every case passed and every pair compared identical, else 1.
set -u
cd "$(dirname "$0")/../.."

pack() {
    [ -x build/fpsim ] || { echo "cli_check.sh: build build/fpsim first (scripts/setup.sh)" >&2; exit 2; }
    local tmp
    tmp=$(mktemp -d)
    mkdir -p "$tmp/cli/lib" .carry-cli
    cp build/fpsim "$tmp/cli/fpsim"
    # every library except glibc's own, the C++ runtime and CUDA's (the image has those)
    ldd build/fpsim | awk '/=>/ {print $3}' | while read -r lib; do
        case "$(basename "$lib")" in
        libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux* | libcudart* | libcublas* | \
            libstdc++* | libgcc_s*) ;;
        *) cp -L "$lib" "$tmp/cli/lib/" ;;
        esac
    done
    local wheel=${WHEEL:-$(ls -t /tmp/wh/h5py-*cp312*.whl 2>/dev/null | head -1)}
    [ -f "$wheel" ] || { echo "cli_check.sh: no h5py wheel (WHEEL=...; see the top)" >&2; exit 2; }
    mkdir -p "$tmp/cli/py"
    python3 -m zipfile -e "$wheel" "$tmp/cli/py"
    cp gpu/tools/cli_compare.py "$tmp/cli/"
    tar cJf .carry-cli/cli.tar.xz -C "$tmp" cli  # xz: a third smaller than gzip, for the 64 MiB carry
    rm -rf "$tmp"
    ls -la .carry-cli/cli.tar.xz
}

run() {
    OUT=${OUT:-/tmp/fpsim-cli}
    mkdir -p "$OUT"
    local P=$OUT/cli.txt w
    w=$(mktemp -d)
    tar xJf .carry-cli/cli.tar.xz -C "$w"
    export LD_LIBRARY_PATH=$w/cli/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
    local F=$w/cli/fpsim
    { date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; "$F" --help | head -3; } > "$P" 2>&1
    python3 - "$w" <<'EOF'
import sys, numpy as np
w = sys.argv[1]
rng = np.random.default_rng(7)
def planted(shape, spread):
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-spread, spread + 1, shape))).astype(np.float32)
    flat = x.reshape(-1)
    flat[5] = np.nan; flat[17] = np.inf; flat[40] = -np.inf; flat[63] = 0.0; flat[64] = -0.0
    flat[100:164] = np.float32(2.5) * np.exp2(rng.integers(-6, 6, 64)).astype(np.float32)  # ties
    flat[200:232] = np.float32(1e-40)                                                   # subnormals
    return x
np.save(f"{w}/odd.npy", planted((333, 1040), 6))       # partial tiles both ways
big = planted((1024, 2048), 8)
np.save(f"{w}/big.npy", big)
np.save(f"{w}/big_bf16.npy", (big.view(np.uint32) >> 16).astype(np.uint16))  # bf16 by truncation
np.save(f"{w}/tile.npy", np.abs(planted((256, 512), 3)))  # every finite block
v = planted((1 << 20,), 20)
np.save(f"{w}/vec.npy", v)
u = v.view(np.uint32)
np.save(f"{w}/vec_bf16.npy", (u >> 16).astype(np.uint16))  # bf16 bit patterns, as --from bf16 reads
EOF
    echo "inputs: rc=$?" >> "$P"
    local fails=0
    conv() { # name, args...
        local name=$1
        shift
        "$F" convert "$@" --device cpu --out "$w/$name.cpu.npy" 2> "$w/$name.cpu.err"
        local rc_c=$?
        "$F" convert "$@" --device gpu --out "$w/$name.gpu.npy" 2> "$w/$name.gpu.err"
        local rc_g=$?
        local v=differ
        [ $rc_c = 0 ] && [ $rc_g = 0 ] && cmp -s "$w/$name.cpu.npy" "$w/$name.gpu.npy" && v=identical
        [ $v = identical ] || fails=$((fails + 1))
        echo "convert $name: cpu rc=$rc_c gpu rc=$rc_g: $v $(head -c 200 "$w/$name.gpu.err" | tr '\n' ' ')" >> "$P"
    }
    conv e4m3-nv --to e4m3 --policy nv --in "$w/vec.npy"
    conv e5m2-nv --to e5m2 --policy nv --in "$w/vec.npy"
    conv e4m3-torch --to e4m3 --policy torch --in "$w/vec.npy"
    conv e2m1 --to e2m1 --in "$w/vec.npy"
    conv e2m3 --to e2m3 --in "$w/vec.npy"
    conv e8m0 --to e8m0 --in "$w/vec.npy"
    conv bf16 --to bf16 --in "$w/vec.npy"
    conv e4m3fnuz --to e4m3fnuz --in "$w/vec.npy"
    conv e4m3-rz --to e4m3 --round rz --in "$w/vec.npy"
    conv e2m1-sr --to e2m1 --round sr --seed 11 --in "$w/vec.npy"
    conv e4m3-from-bf16 --to e4m3 --policy nv --from bf16 --in "$w/vec_bf16.npy"
    mkdir -p "$w/h5"
    quant() { # name, input, args...
        local name=$1 in=$2
        shift 2
        "$F" quantize "$@" --in "$w/$in.npy" --out "$w/h5/$name.cpu.h5" --quiet 2> "$w/$name.cpu.err"
        local rc_c=$?
        "$F" quantize "$@" --in "$w/$in.npy" --out "$w/h5/$name.gpu.h5" --device gpu 2> "$w/$name.gpu.err"
        local rc_g=$?
        [ $rc_c = 0 ] && [ $rc_g = 0 ] || fails=$((fails + 1))
        echo "quantize $name: cpu rc=$rc_c gpu rc=$rc_g; gpu stderr: $(grep -iE 'gpu|differ|error|kernel|read' "$w/$name.gpu.err" | head -3 | tr '\n' ' ')" >> "$P"
    }
    for axis in rows cols both; do
        quant "mxfp8-$axis" big --scheme mxfp8-e4m3 --axis $axis
        quant "mxfp4-$axis" big --scheme mxfp4 --axis $axis
        quant "nvfp4-$axis" big --scheme nvfp4 --axis $axis
        quant "nvfp4sr-$axis" big --scheme nvfp4:sr=1 --axis $axis --seed 3
        quant "fp8block-$axis" big --scheme fp8-block --axis $axis
        quant "nvfp4-odd-$axis" odd --scheme nvfp4 --axis $axis
        quant "mxfp8-odd-$axis" odd --scheme mxfp8-e4m3:rule=rceil-sat --axis $axis
        quant "mxfp8-bf16-$axis" big_bf16 --scheme mxfp8-e4m3 --dtype bf16 --axis $axis
        quant "nvfp4-bf16-$axis" big_bf16 --scheme nvfp4 --dtype bf16 --axis $axis
        quant "fp8block-bf16-$axis" big_bf16 --scheme fp8-block --dtype bf16 --axis $axis
        quant "mxfp4-bf16-$axis" big_bf16 --scheme mxfp4 --dtype bf16 --axis $axis
        quant "nvfp4sr-bf16-$axis" big_bf16 --scheme nvfp4:sr=1 --dtype bf16 --axis $axis --seed 4
    done
    quant nvfp4-rhtmma-cols big_bf16 --scheme nvfp4:rht=1,rhtsum=mma --dtype bf16 --axis cols
    quant nvfp4-srrhtmma-cols big_bf16 --scheme nvfp4:sr=1,rht=1,rhtsum=mma --dtype bf16 --axis cols --seed 9
    quant nvfp4-rht-cols big --scheme nvfp4:rht=1 --axis cols
    quant nvfp4-srrht-cols big --scheme nvfp4:sr=1,rht=1 --axis cols --seed 5
    quant nvfp4-16x16 big --scheme nvfp4:tile=16x16
    quant fp8-128x128 big --scheme fp8-block:tile=128x128
    quant fp8-tensor tile --scheme fp8-tensor
    quant mxfp6-both tile --scheme mxfp6-e2m3 --axis both
    quant nvfp4-torchao big --scheme nvfp4:chain=torchao
    quant nvfp4-torchao-cuda-cols big --scheme nvfp4:chain=torchao-cuda --axis cols
    quant nvfp4-torchao-noglobal big --scheme nvfp4:chain=torchao,global=0
    quant nvfp4-torchao-16x16 big --scheme nvfp4:chain=torchao-cuda,tile=16x16
    quant mxfp8-ao018 big --scheme mxfp8-e4m3:rule=rceil,ao=0.18
    quant mxfp8-e5m2-both big --scheme mxfp8-e5m2 --axis both
    quant mxfp6-e3m2-cols big --scheme mxfp6-e3m2 --axis cols
    quant fp8-tensor-torchao big --scheme fp8-tensor:mode=torchao,pow2=1
    quant fp8-tensor-delayed-cols big --scheme fp8-tensor:mode=delayed --axis cols
    quant fp8-deepgemm big --scheme fp8-block:tile=128x128,scale=deepgemm-ue8m0
    echo "cases failed: $fails" >> "$P"
    PYTHONPATH=$w/cli/py python3 "$w/cli/cli_compare.py" "$w/h5" >> "$P" 2>&1
    local rc_cmp=$?
    echo "cli_compare.py: rc=$rc_cmp" >> "$P"
    rm -rf "$w"
    cat "$P"
    [ $fails = 0 ] && [ $rc_cmp = 0 ]
}

case "${1:-}" in
pack) pack ;;
run) run ;;
*) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; [ "${1:-}" = -h ] || [ "${1:-}" = --help ] ;;
esac
