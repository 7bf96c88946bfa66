#!/usr/bin/env bash
# Not run yet (no device time left on 2026-12-08): for a bundle built with
# gpu/results/probe-fp8-table.diff applied (H: block FP8's multiplying rules from BF16 take a tile's
# multiplier and scale_inv from a 128-entry table, fp8_block_scale_from_table): ctest -L gpu,
# verify; then ab.sh 3 rounds of every
# fp8-block case against HB (run 223's build, verified there, so AB_VERIFY=0)
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
P=$OUT/progress.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > "$P"
STEPS="ctest verify" bash gpu/tools/device_final.sh run 150 > "$OUT/final.log" 2>&1
echo "final rc=$? ($(( $(date +%s) - t0 )) s) $(grep -E 'tests passed|tests failed' "$OUT/ctest.log"); $(tail -1 "$OUT/verify.log")" >> "$P"
AB_VERIFY=0 bash gpu/tools/ab.sh "HB" 3 fp8-block > "$OUT/ab.log" 2>&1
echo "ab done ($(( $(date +%s) - t0 )) s)" >> "$P"
echo "all done ($(( $(date +%s) - t0 )) s)" >> "$P"
cat "$P"
