#!/usr/bin/env bash
# Run 223: the working tree's bundle (H: the BF16 scale table's bounds as one least raw per entry,
# divide_table_floor; test_divide_fast_hw's floor sweep; verify's vLLM schemes under other eps):
# ctest -L gpu, verify, verify --large --only vllm; then ab.sh 5 rounds of the vllm cases against
# BASE (main at ca824e3, verified in run 222, so AB_VERIFY=0)
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
P=$OUT/progress.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > "$P"
STEPS="ctest verify" bash gpu/tools/device_final.sh run 150 > "$OUT/final.log" 2>&1
echo "final rc=$? ($(( $(date +%s) - t0 )) s)" >> "$P"
timeout 90 build-devonly/fpsim-device verify --device gpu --large --no-elements --only vllm > "$OUT/verify-large-vllm.log" 2>&1
echo "large vllm rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 "$OUT/verify-large-vllm.log")" >> "$P"
AB_VERIFY=0 bash gpu/tools/ab.sh "BASE" 5 vllm > "$OUT/ab.log" 2>&1
echo "ab done ($(( $(date +%s) - t0 )) s)" >> "$P"
echo "all done ($(( $(date +%s) - t0 )) s)" >> "$P"
cat "$P"
