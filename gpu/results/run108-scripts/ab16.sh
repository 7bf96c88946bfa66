#!/usr/bin/env bash
# run 118: probe P against HEAD (H, the bundle of 6a52234): kernel v8 computing the SR counter and
# code pointer of the pass's first column once and stepping them per column
# (FPSIM_GPU_COLS_V8_PASS_ADDR). Verify of P, then four A/B rounds in alternating order.
set -u
tar xzf .carry/bundle.tar.gz
cp build-devonly/fpsim-device .carry/fpsim-device-H
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=$OUT/ab.txt; { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $P
t0=$(date +%s)
timeout 120 .carry/fpsim-device-P verify --device gpu > $OUT/verify-P.log 2>&1
echo "verify P rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify-P.log)" >> $P
CASES='--case nvfp4 --case mxfp4 --case mxfp8-e4m3 --case fp8-block'
for i in 1 2 3 4; do
  if [ $((i % 2)) = 1 ]; then order="H P"; else order="P H"; fi
  for b in $order; do
    echo "== $b $i" >> $P
    timeout 60 .carry/fpsim-device-$b bench quantize --device gpu $CASES 2>&1 | grep -E "copy|bf16" >> $P
  done
done
echo "all done ($(( $(date +%s) - t0 )) s)" >> $P
cat $P
