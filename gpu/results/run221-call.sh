#!/usr/bin/env bash
# Run 221: probes PK (divide_codes4's words packed by OR and shift, TAB's table) and SL (PK plus
# divide_codes<N>: one settle loop over a tile's 16 elements) against H (HEAD a2769f4's
# build-devonly/fpsim-device, carried alone): SL's test_divide_fast_hw, ab.sh 3 rounds of the vllm
# cases (each probe verified first), verify --large --only vllm of SL and PK
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
P=$OUT/progress.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > "$P"
timeout 120 .carry/test_divide_fast_hw-SL > "$OUT/divide-test-SL.log" 2>&1
echo "test_divide_fast_hw SL rc=$? ($(( $(date +%s) - t0 )) s)" >> "$P"
bash gpu/tools/ab.sh "PK SL" 3 vllm > "$OUT/ab.log" 2>&1
echo "ab done ($(( $(date +%s) - t0 )) s)" >> "$P"
for b in SL PK; do
    timeout 60 .carry/fpsim-device-$b verify --device gpu --large --no-elements --only vllm > "$OUT/verify-large-vllm-$b.log" 2>&1
    echo "$b large vllm rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 "$OUT/verify-large-vllm-$b.log")" >> "$P"
done
echo "all done ($(( $(date +%s) - t0 )) s)" >> "$P"
cat "$P"
