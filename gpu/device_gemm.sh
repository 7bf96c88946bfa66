#!/usr/bin/env bash
# device_gemm.sh: everything the GEMM work needs from the H200, in one call.
#
#   build   (here, before the call)  gpu/device_gemm.sh build
#           -> build-devgemm/fpsim-gemm: the gemm / verify gemm / bench gemm commands plus the tests
#              test_gemm_gpu and test_gemm_model (fpsim-gemm test-gpu | test-model), OpenBLAS and
#              cudart linked statically, the GPU quantizers (gpu/*.cu) for the speed experiment,
#              cuBLASLt from the machine (one ~38 MB file travels)
#   run     (on the GPU machine)     gpu/device_gemm.sh run     [carry build-devgemm]
#           -> $OUT/: device.txt, test_gemm.log, verify_gemm.md/.log (with the block-scaled split-K
#              alternatives), splitk_dump.tar.gz (those GEMMs' operands and outputs),
#              bench_linear.json/.txt (experiments/fp8-linear-speed)
#   probe   gpu/device_gemm.sh probe-inputs (here), then gpu/device_gemm.sh probe (there): raw
#           cuBLASLt outputs (block-scaled K=256/384/1024, split-K BF16 and FP8) into $OUT
# The run step rebuilds on the machine only if the carried binaries do not start there.
set -u
cd "$(dirname "$0")/.."
B=build-devgemm
OUT=${OUT:-/tmp/fpsim-device-out}
CUDA=${CUDA_HOME:-/usr/local/cuda}

build() {
    rm -rf $B/obj
    mkdir -p $B/obj
    local CF="-std=c11 -O2 -Wall -Wextra -ffp-contract=off -fno-fast-math -fexcess-precision=standard
        -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DFPSIM_HAVE_CUDA=1 -DFPSIM_VERSION=\"0.1.0\"
        -Isim -Iformats -Igpu -Icli -I$CUDA/include"
    # The GPU quantizers are built as gpu/tools/build_min.sh builds them (same nvcc flags).
    local NVF="-O3 -std=c++17 -gencode=arch=compute_90,code=sm_90 -fmad=false -Iformats -Igpu -DFPSIM_VERSION=\"gemm\""
    local J=${JOBS:-$(nproc)} objs=() srcs=(sim/gemm_accum.c sim/gemm_model.c sim/gemm_tn.c sim/gemm_layout.c sim/npy.c sim/file.c cli/cli_util.c
        cli/cmd_gemm.c cli/verify_gemm.c cli/bench_gemm.c cli/bench_gemm_linear.c formats/*.c)
    for f in "${srcs[@]}"; do
        o=$B/obj/$(echo "$f" | tr / _).o
        while [ "$(jobs -rp | wc -l)" -ge "$J" ]; do wait -n; done
        gcc $CF -c "$f" -o "$o" &
        objs+=("$o")
    done
    for f in gpu/*.cu; do
        o=$B/obj/$(echo "$f" | tr / _).o
        while [ "$(jobs -rp | wc -l)" -ge "$J" ]; do wait -n; done
        $CUDA/bin/nvcc $NVF -c "$f" -o "$o" &
        objs+=("$o")
    done
    wait
    for o in "${objs[@]}"; do [ -s "$o" ] || { echo "compile failed: $o" >&2; return 1; }; done
    local BLAS=/usr/lib/x86_64-linux-gnu/libopenblas.a
    [ -f $BLAS ] || BLAS=-lopenblas
    local LIBS="-L$CUDA/lib64 -lcublasLt -Wl,-Bstatic -lcudart_static -Wl,-Bdynamic $BLAS -lpthread -ldl -lrt -lm"
    gcc $CF -c tests/gemm/device_tool.c -o $B/obj/device_tool.o || return 1
    gcc $CF -Dmain=test_gemm_gpu_main -c tests/gemm/test_gemm_gpu.c -o $B/obj/test_gemm_gpu.o || return 1
    gcc $CF -Dmain=test_gemm_model_main -c tests/gemm/test_gemm_model.c -o $B/obj/test_gemm_model.o || return 1
    g++ -o $B/fpsim-gemm $B/obj/device_tool.o $B/obj/test_gemm_gpu.o $B/obj/test_gemm_model.o "${objs[@]}" $LIBS \
        || return 1
    strip $B/fpsim-gemm
    rm -rf $B/obj
    echo "built $B/fpsim-gemm"
}

run() {
    mkdir -p "$OUT"
    export LD_LIBRARY_PATH=$CUDA/lib64:$CUDA/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}
    export FPSIM_THREADS=${FPSIM_THREADS:-$(nproc)}
    {
        date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
        $CUDA/bin/nvcc --version | tail -2; ls $CUDA/lib64/libcublasLt.so.* 2>/dev/null; nproc; ldd $B/fpsim-gemm
    } > "$OUT/device.txt" 2>&1
    if ! $B/fpsim-gemm verify gemm --device cpu >> "$OUT/device.txt" 2>&1; then
        echo "carried binaries do not run here; rebuilding" | tee -a "$OUT/device.txt"
        build >> "$OUT/device.txt" 2>&1 || { echo "rebuild failed"; tail -20 "$OUT/device.txt"; return 1; }
        $B/fpsim-gemm verify gemm --device cpu >> "$OUT/device.txt" 2>&1
    fi
    {
        echo "== test_gemm_model"; $B/fpsim-gemm test-model 2>&1 | tail -3
        echo "== test_gemm_gpu"; timeout 40 $B/fpsim-gemm test-gpu 2>&1; echo "exit $?"
    } > "$OUT/test_gemm.log" 2>&1
    tail -12 "$OUT/test_gemm.log"
    echo "== verify gemm --device gpu"
    mkdir -p /tmp/gemm-dump
    timeout 110 $B/fpsim-gemm verify gemm --device gpu --md "$OUT/verify_gemm.md" --dump /tmp/gemm-dump \
        > "$OUT/verify_gemm.log" 2>&1
    echo "exit $?"; grep -v "^fpsim verify gemm: model" "$OUT/verify_gemm.log" | grep -v algorithms
    # The block-scaled split-K operands and outputs, for fitting offline (at most 16 MB back).
    (cd /tmp/gemm-dump && tar czf "$OUT/splitk_dump.tar.gz" $(ls | grep -E "_d[01]_") 2>/dev/null)
    echo "== fp8-linear-speed (bench gemm --device gpu --linear)"
    timeout 50 $B/fpsim-gemm bench gemm --device gpu --linear --reps 20 --json > "$OUT/bench_linear.json" \
        2> "$OUT/bench_linear.txt"; echo "exit $?"
    timeout 40 $B/fpsim-gemm bench gemm --device gpu --linear --reps 20 >> "$OUT/bench_linear.txt" 2>&1
    echo "exit $?"; cat "$OUT/bench_linear.txt"
}

# Inputs for `probe` (here: python3 with numpy and ml_dtypes), written to $B/probe.
probe_inputs() {
    mkdir -p $B/probe
    python3 - "$B/probe" <<'PY'
import sys, numpy as np, ml_dtypes
out = sys.argv[1]; rng = np.random.default_rng(7)
def e4m3(shape):
    x = np.clip(rng.standard_normal(shape) * 2.0 ** rng.integers(-3, 3, shape), -448, 448)
    return x.astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
def scales(shape): return (0.5 + rng.random(shape)).astype(np.float32)
for K in (256, 384, 1024):
    np.save(f"{out}/A{K}.npy", e4m3((128, K))); np.save(f"{out}/B{K}.npy", e4m3((128, K)))
    L = (K + 127) // 128
    np.save(f"{out}/SA{K}.npy", scales((128, L))); np.save(f"{out}/SB{K}.npy", scales((128, L)))
np.save(f"{out}/ONES256.npy", np.ones((128, 2), np.float32))
bf = lambda x: x.astype(ml_dtypes.bfloat16).astype(np.float32)
np.save(f"{out}/Abf.npy", bf(rng.standard_normal((128, 4096)).astype(np.float32)))
np.save(f"{out}/Bbf.npy", bf(rng.standard_normal((128, 4096)).astype(np.float32)))
np.save(f"{out}/A8k.npy", e4m3((64, 8192))); np.save(f"{out}/B8k.npy", e4m3((64, 8192)))
PY
}

# Raw cuBLASLt outputs for offline model fitting (docs/gemm.md: how the block-scale fold order
# and the split-K rule were found; tests/gemm/data keeps a subset as a test oracle).
probe() {
    mkdir -p "$OUT"
    export LD_LIBRARY_PATH=$CUDA/lib64:${LD_LIBRARY_PATH:-}
    local P=$B/probe G="$B/fpsim-gemm gemm --device gpu"
    {
        for K in 256 384 1024; do
            $G --a $P/A$K.npy --b $P/B$K.npy --accum hopper-qgmma --scale-a $P/SA$K.npy --scale-b $P/SB$K.npy \
                --out "$OUT/C_vv$K.npy"
        done
        $G --a $P/A256.npy --b $P/B256.npy --accum hopper-qgmma --scale-a $P/SA256.npy --scale-b $P/ONES256.npy \
            --out "$OUT/C_vv256_sbone.npy"
        $G --a $P/A256.npy --b $P/B256.npy --accum hopper-qgmma --scale-a $P/ONES256.npy --scale-b $P/SB256.npy \
            --out "$OUT/C_vv256_saone.npy"
        $G --a $P/Abf.npy --b $P/Bbf.npy --accum hopper-hgmma --out "$OUT/C_bf16_4096.npy"
        $G --a $P/A8k.npy --b $P/B8k.npy --accum hopper-qgmma:fast --scale-a 0.5 --scale-b 2 --out "$OUT/C_fast8192.npy"
    } > "$OUT/probe.log" 2>&1
    cat "$OUT/probe.log"
}

case "${1:-}" in
build) build ;;
run) run ;;
probe-inputs) probe_inputs ;;
probe) probe ;;
*) echo "usage: gpu/device_gemm.sh build|run|probe-inputs|probe" >&2; exit 2 ;;
esac
