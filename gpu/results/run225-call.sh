#!/usr/bin/env bash
# Run 225: run 224 on the H200 (the bundle of 2e9ed2c): test_divide_fast_hw, the whole
# `bench quantize --device gpu` three times (text), then ab.sh 5 rounds of the vllm cases against
# BASE (main at ca824e3, as run 223 on the H100)
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
P=$OUT/progress.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > "$P"
tar xzf .carry/bundle.tar.gz
timeout 60 build-devonly/tests/test_divide_fast_hw > "$OUT/divide-test.log" 2>&1
echo "test_divide_fast_hw rc=$? ($(( $(date +%s) - t0 )) s)" >> "$P"
for i in 1 2 3; do
    timeout 200 build-devonly/fpsim-device bench quantize --device gpu > "$OUT/bench-$i.txt" 2>&1
    echo "bench $i rc=$? ($(( $(date +%s) - t0 )) s)" >> "$P"
done
AB_VERIFY=0 bash gpu/tools/ab.sh "BASE" 5 vllm > "$OUT/ab.log" 2>&1
echo "ab done ($(( $(date +%s) - t0 )) s)" >> "$P"
echo "all done ($(( $(date +%s) - t0 )) s)" >> "$P"
cat "$P"
