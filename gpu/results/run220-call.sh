#!/usr/bin/env bash
# Run 220: HEAD's bundle (a2769f4): ctest -L gpu, verify, verify --large of the 2D-tile and vLLM
# schemes; then probe TAB (vLLM's dividing scale from a BF16 table) against H: verify, verify
# --large --only vllm, ab.sh 3 rounds of the vllm cases
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
P=$OUT/progress.txt
STEPS="ctest verify" bash gpu/tools/device_final.sh run 150 > "$OUT/final.log" 2>&1
echo "final rc=$? ($(( $(date +%s) - t0 )) s)" >> "$P"
timeout 90 build-devonly/fpsim-device verify --device gpu --large --no-elements --only tile= > "$OUT/verify-large-tiles.log" 2>&1
echo "large tile= rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 "$OUT/verify-large-tiles.log")" >> "$P"
timeout 60 build-devonly/fpsim-device verify --device gpu --large --no-elements --only vllm > "$OUT/verify-large-vllm.log" 2>&1
echo "large vllm rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 "$OUT/verify-large-vllm.log")" >> "$P"
bash gpu/tools/ab.sh "TAB" 3 vllm > "$OUT/ab.log" 2>&1
echo "ab done ($(( $(date +%s) - t0 )) s)" >> "$P"
timeout 60 .carry/fpsim-device-TAB verify --device gpu --large --no-elements --only vllm > "$OUT/verify-large-vllm-TAB.log" 2>&1
echo "TAB large vllm rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 "$OUT/verify-large-vllm-TAB.log")" >> "$P"
echo "all done ($(( $(date +%s) - t0 )) s)" >> "$P"
cat "$P"
