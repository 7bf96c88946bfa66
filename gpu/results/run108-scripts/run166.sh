#!/usr/bin/env bash
# run 166: the both-copies bench cases with the 2x baselines of every dual scheme, two rounds
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out166}; mkdir -p "$OUT"
tar xzf .carry/bundle.tar.gz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
for r in 1 2; do
  build-devonly/fpsim-device bench quantize --device gpu --case both --case 2x >> "$OUT/bench-both.txt" 2>&1
done
cat "$OUT/bench-both.txt"
