#!/usr/bin/env bash
# run 161: the dual (rowwise + columnwise from one read) kernel v8: ctest -L gpu, verify, bench
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out161}; mkdir -p "$OUT"
STEPS="ctest verify bench" bash gpu/tools/device_final.sh run 280 > "$OUT/final.txt" 2>&1
cuobjdump --dump-resource-usage build-devonly/fpsim-device 2>&1 | gzip > "$OUT/res.txt.gz"
build-devonly/fpsim-device bench quantize --device gpu --case both --case 2x --case "mxfp8-e4m3 rows" --case "mxfp8-e4m3 cols" --case "fp8-block rows" --case "fp8-block cols" --case "nvfp4 rows" --case "nvfp4 cols" --case "mxfp4 rows" --case "mxfp4 cols" --case "nvfp4:sr=1 rows" --case "nvfp4:sr=1 cols" > "$OUT/bench-both.txt" 2>&1
ls -la "$OUT"
