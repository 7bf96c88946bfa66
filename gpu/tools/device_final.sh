#!/usr/bin/env bash
# device_final.sh: one device call that checks everything with binaries built here (no build on the
# GPU machine, which saves its ~100 s of nvcc time when device time is short).
#
#   here:   bash gpu/tools/device_final.sh pack      -> .carry/bundle.tar.gz (git-ignored through
#           .git/info/exclude): the device-only CMake build (build-devonly: fpsim-device, the GPU
#           tests and their CTest files) and build-devgemm/fpsim-gemm (gpu/device_gemm.sh build)
#   there:  bash gpu/tools/device_final.sh run [SECONDS]   (device tool, carry [".carry"])
#           ctest -L gpu, verify --device gpu (sample, every block scheme), the GEMM run of
#           gpu/device_gemm.sh (verify gemm + fp8-linear-speed), then the exhaustive 2^32 sweep of
#           the float32 specs named in SWEEP until SECONDS (default 280) have passed since the start.
#           STEPS="ctest verify gemm sweep" (the default) picks the steps; "large" adds
#           verify --large of the schemes matching each word of LARGE (default
#           nvfp4; e.g. LARGE="tile= vllm", one verify per word), "bench" adds
#           `bench quantize --device gpu --json` (bench.json); "ncu" adds Nsight Compute counters
#           (ncu.txt) for the kernels matching NCU_KERNEL in the bench cases NCU_CASES.
# Files under $OUT (at most 8 come back): summary.txt ctest.log verify.log full.log gemm.log
# verify_gemm.md bench_linear.json test_gemm.log (bench.json replaces verify_gemm.md with bench;
# verify-large.log with large).
set -u
cd "$(dirname "$0")/../.."

pack() {
    [ -x build-devonly/fpsim-device ] || { echo "build build-devonly first (see docs/gpu.md)" >&2; exit 1; }
    local gemm=build-devgemm/fpsim-gemm
    [ -x "$gemm" ] || { echo "no $gemm (gpu/device_gemm.sh build): the gemm step will fail" >&2; gemm=; }
    mkdir -p .carry
    grep -qx '/.carry/' .git/info/exclude 2>/dev/null || echo '/.carry/' >> .git/info/exclude
    tar czf .carry/bundle.tar.gz build-devonly/fpsim-device build-devonly/tests/test_gpu_convert \
        build-devonly/tests/test_gpu_blocks build-devonly/tests/test_log2_rules build-devonly/tests/test_rht_mma_hw \
        build-devonly/tests/test_bf16_pairs_hw build-devonly/tests/test_f16_rz_hw build-devonly/tests/test_half_minmax_hw build-devonly/tests/test_rht16 \
        build-devonly/tests/test_divide_fast_hw \
        $(find build-devonly -name CTestTestfile.cmake) $gemm
    ls -la .carry/bundle.tar.gz
}

run() {
    local limit=${1:-280} t0 left
    t0=$(date +%s)
    OUT=${OUT:-/tmp/fpsim-final}
    mkdir -p "$OUT"
    local S=$OUT/summary.txt
    tar xzf .carry/bundle.tar.gz
    {
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ); commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1
        echo "cpus: $(nproc); repo: $PWD"
    } > "$S"
    # The CTest files name the build's absolute paths (/work/main/...): point them here.
    if [ "$PWD" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
    export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}

    local steps=" ${STEPS:-ctest verify gemm sweep} "
    has() { case "$steps" in *" $1 "*) return 0 ;; esac; return 1; }

    has ctest && {
        timeout 90 ctest --test-dir build-devonly -L gpu --output-on-failure > "$OUT/ctest.log" 2>&1
        echo "ctest -L gpu: rc=$? ($(( $(date +%s) - t0 )) s); $(grep -E 'tests passed|tests failed' "$OUT/ctest.log")" >> "$S"
    }

    has verify && {
        timeout 150 build-devonly/fpsim-device verify --device gpu > "$OUT/verify.log" 2>&1
        echo "verify --device gpu (sample): rc=$? ($(( $(date +%s) - t0 )) s); $(tail -1 "$OUT/verify.log")" >> "$S"
    }
    # large: verify --large (4096 x 8192 block tensors) of the schemes whose name contains each
    # word of $LARGE, all into verify-large.log
    has large && {
        : > "$OUT/verify-large.log"
        for only in ${LARGE:-nvfp4}; do
            echo "== --large --only $only" >> "$OUT/verify-large.log"
            timeout 150 build-devonly/fpsim-device verify --device gpu --large --only "$only" \
                >> "$OUT/verify-large.log" 2>&1
            echo "verify --large --only $only: rc=$? ($(( $(date +%s) - t0 )) s);" \
                "$(tail -1 "$OUT/verify-large.log")" >> "$S"
        done
    }
    has bench && {
        timeout 90 build-devonly/fpsim-device bench quantize --device gpu --json > "$OUT/bench.json" 2> "$OUT/bench.err"
        echo "bench quantize --device gpu: rc=$? ($(( $(date +%s) - t0 )) s)" >> "$S"
        rm -f "$OUT/bench.err"
    }

    # ncu: hardware counters for the kernels named by NCU_KERNEL (a regex) in the bench cases
    # NCU_CASES (--case options), clocks left alone; one profiled launch per kernel and case.
    has ncu && {
        # shellcheck disable=SC2086
        timeout 150 ncu --clock-control none --kernel-name "regex:${NCU_KERNEL:-block_rows_fast}" \
            --launch-count "${NCU_COUNT:-6}" --section SpeedOfLight --section Occupancy --section LaunchStats \
            --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
            build-devonly/fpsim-device bench quantize --device gpu --reps 1 ${NCU_CASES:-} > "$OUT/ncu.txt" 2>&1
        echo "ncu: rc=$? ($(( $(date +%s) - t0 )) s)" >> "$S"
    }

    has gemm && {
        OUT=/tmp/fpsim-gemm timeout 150 bash gpu/device_gemm.sh run > "$OUT/gemm.log" 2>&1
        echo "device_gemm.sh run: rc=$? ($(( $(date +%s) - t0 )) s)" >> "$S"
        for f in verify_gemm.md bench_linear.json test_gemm.log; do cp /tmp/fpsim-gemm/$f "$OUT/" 2>/dev/null; done
    }

    has sweep || { cat "$S"; return; }
    : > "$OUT/full.log"
    for spec in ${SWEEP:-e8m0/ e2m3/nv e3m2/nv bf16/nv f16/nv e2m1/te e2m1/deepgemm e2m3/ml e3m2/ml bf16/ml f16/ml bf16/torch f16/torch bf16/clamp f16/clamp e2m3/torchao e3m2/torchao e2m1/torchao fnuz e4m3ieee e4m3b11}; do
        left=$(( limit - ($(date +%s) - t0) ))
        [ "$left" -gt 10 ] || { echo "sweep: out of time before $spec" >> "$S"; break; }
        echo "== --full --only $spec (limit $left s)" >> "$OUT/full.log"
        timeout "$left" build-devonly/fpsim-device verify --device gpu --full --no-blocks --only "$spec" >> "$OUT/full.log" 2>&1
        echo "sweep $spec: rc=$? ($(( $(date +%s) - t0 )) s); $(tail -1 "$OUT/full.log")" >> "$S"
    done
    cat "$S"
}

case "${1:-}" in
pack) pack ;;
run) run "${2:-280}" ;;
*) echo "usage: gpu/tools/device_final.sh pack | run [SECONDS]" >&2; exit 2 ;;
esac
