#!/usr/bin/env bash
# Run 218: kernel v6 with the 128x128 bf16 instances staging their next region in shared memory
# (cp.async), L2 prefetch by lines and region positions stepped without dividing (H: the bundle of
# build-devonly at HEAD) against OLD (c751d0e's build); then ctest -L gpu, verify, verify --large of
# the 2D-tile and vLLM schemes
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
AB_VERIFY=0 bash gpu/tools/ab.sh "OLD" 2 tile= vllm > "$OUT/ab.log" 2>&1
echo "ab done ($(( $(date +%s) - t0 )) s)" >> "$OUT/progress.txt"
STEPS="ctest verify" bash gpu/tools/device_final.sh run 150 > "$OUT/final.log" 2>&1
echo "final rc=$? ($(( $(date +%s) - t0 )) s)" >> "$OUT/progress.txt"
timeout 90 build-devonly/fpsim-device verify --device gpu --large --no-elements --only tile= > "$OUT/verify-large-tiles.log" 2>&1
echo "large tile= rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 "$OUT/verify-large-tiles.log")" >> "$OUT/progress.txt"
timeout 60 build-devonly/fpsim-device verify --device gpu --large --no-elements --only vllm > "$OUT/verify-large-vllm.log" 2>&1
echo "large vllm rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 "$OUT/verify-large-vllm.log")" >> "$OUT/progress.txt"
echo "all done ($(( $(date +%s) - t0 )) s)" >> "$OUT/progress.txt"
cat "$OUT/progress.txt"
