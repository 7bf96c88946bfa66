#!/usr/bin/env bash
# Run 222: main at 2e40927 as a whole build (bundle): verify --device gpu, ctest -L gpu (with
# test_divide_fast_hw on the packed codes), verify --large --only vllm
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
P=$OUT/progress.txt
STEPS="verify ctest" bash gpu/tools/device_final.sh run 150 > "$OUT/final.log" 2>&1
echo "final rc=$? ($(( $(date +%s) - t0 )) s)" >> "$P"
timeout 60 build-devonly/fpsim-device verify --device gpu --large --no-elements --only vllm > "$OUT/verify-large-vllm.log" 2>&1
echo "large vllm rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 "$OUT/verify-large-vllm.log")" >> "$P"
echo "all done ($(( $(date +%s) - t0 )) s)" >> "$P"
cat "$P"
