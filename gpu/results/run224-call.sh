#!/usr/bin/env bash
# Run 224: the same bundle as run 223 (2e9ed2c): test_divide_fast_hw's printed table (ctest keeps a
# passing test's output to itself), then the whole `bench quantize --device gpu` twice (text), for
# the standings on one machine
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
P=$OUT/progress.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > "$P"
tar xzf .carry/bundle.tar.gz
timeout 60 build-devonly/tests/test_divide_fast_hw > "$OUT/divide-test.log" 2>&1
echo "test_divide_fast_hw rc=$? ($(( $(date +%s) - t0 )) s)" >> "$P"
for i in 1 2; do
    timeout 200 build-devonly/fpsim-device bench quantize --device gpu > "$OUT/bench-$i.txt" 2>&1
    echo "bench $i rc=$? ($(( $(date +%s) - t0 )) s)" >> "$P"
done
echo "all done ($(( $(date +%s) - t0 )) s)" >> "$P"
cat "$P"
