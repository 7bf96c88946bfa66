#!/usr/bin/env bash
# run 164: HEAD's device code (the dual kernels with NVFP4's rolled rowwise pass): ctest -L gpu,
# verify, verify --large of four "[both copies]" rows, the full bench and the both-copies cases
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out164}; mkdir -p "$OUT"
STEPS="ctest verify bench" bash gpu/tools/device_final.sh run 280 > "$OUT/final.txt" 2>&1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
for s in "nvfp4 [both" "nvfp4:sr=1 [both" "mxfp8-e4m3:rule=floor [both" "fp8-block [both"; do
  timeout 100 build-devonly/fpsim-device verify --device gpu --large --no-elements --only "$s" 2>&1 | tail -n 3 >> "$OUT/verify-large-both.log"
done
for r in 1 2; do
  build-devonly/fpsim-device bench quantize --device gpu --case both --case 2x --case "mxfp8-e4m3 rows" --case "mxfp8-e4m3 cols" --case "fp8-block rows" --case "fp8-block cols" --case "nvfp4 rows" --case "nvfp4 cols" --case "mxfp4 rows" --case "mxfp4 cols" --case "nvfp4:sr=1 rows" --case "nvfp4:sr=1 cols" >> "$OUT/bench-both.txt" 2>&1
done
cat "$OUT/summary.txt" "$OUT/verify-large-both.log" "$OUT/bench-both.txt"
