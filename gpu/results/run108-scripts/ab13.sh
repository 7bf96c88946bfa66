#!/usr/bin/env bash
# run 115: probes against HEAD 21d1420 (H, the bundle): D (kernel v8's staging, each thread copying
# 8 rows of one row group so that its shared-memory slot XOR is constant and the 8 copies take
# immediate offsets) and BCD (D, the column-pair amax by unsigned and signed 16x2 maxima, and the
# NVFP4 E2M1 coding's first bf16x2 sum as an add with an immediate). Verify of both, then three
# A/B rounds in alternating order.
set -u
tar xzf .carry/bundle.tar.gz
cp build-devonly/fpsim-device .carry/fpsim-device-H
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=$OUT/ab.txt; { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $P
t0=$(date +%s)
for b in D BCD; do
  timeout 120 .carry/fpsim-device-$b verify --device gpu > $OUT/verify-$b.log 2>&1
  echo "verify $b rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify-$b.log)" >> $P
done
CASES='--case nvfp4 --case mxfp4 --case mxfp8-e4m3 --case fp8-block'
for i in 1 2 3; do
  case $i in 1) order="H D BCD" ;; 2) order="BCD D H" ;; 3) order="D H BCD" ;; esac
  for b in $order; do
    echo "== $b $i" >> $P
    timeout 60 .carry/fpsim-device-$b bench quantize --device gpu $CASES 2>&1 | grep -E "copy|bf16" >> $P
  done
done
echo "all done ($(( $(date +%s) - t0 )) s)" >> $P
cat $P
