#!/usr/bin/env bash
# run 114: HEAD 21d1420 (H, the bundle) through ctest -L gpu and the sample verify; probes A (MX scale
# and multiplier from the scale code by arithmetic, no second table read) and AB (A plus the bf16
# column-pair amax by unsigned and signed 16x2 maxima, no masks) verified, then three A/B rounds in
# alternating order on the columnwise cases; then per-instruction profiles of H on NVFP4 and MXFP4 cols.
set -u
tar xzf .carry/bundle.tar.gz
cp build-devonly/fpsim-device .carry/fpsim-device-H
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if [ "$PWD" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
P=$OUT/ab.txt; { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $P
t0=$(date +%s)
timeout 90 ctest --test-dir build-devonly -L gpu --output-on-failure > $OUT/ctest.log 2>&1
echo "ctest H rc=$? ($(( $(date +%s) - t0 )) s) $(grep -E 'tests passed|tests failed' $OUT/ctest.log)" >> $P
timeout 120 .carry/fpsim-device-H verify --device gpu > $OUT/verify.log 2>&1
echo "verify H rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify.log)" >> $P
timeout 120 .carry/fpsim-device-AB verify --device gpu > $OUT/verify-AB.log 2>&1
echo "verify AB rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify-AB.log)" >> $P
CASES='--case nvfp4 --case mxfp4 --case mxfp8-e4m3 --case fp8-block'
for i in 1 2 3; do
  case $i in 1) order="H A AB" ;; 2) order="AB A H" ;; 3) order="A H AB" ;; esac
  for b in $order; do
    echo "== $b $i" >> $P
    timeout 60 .carry/fpsim-device-$b bench quantize --device gpu $CASES 2>&1 | grep -E "copy|bf16 .*cols" >> $P
  done
done
echo "ab done ($(( $(date +%s) - t0 )) s)" >> $P
export OUT
bash gpu/tools/ncu_sass.sh "block_cols_fast" nvfp4cols --case "nvfp4" >> $P 2>&1
bash gpu/tools/ncu_sass.sh "block_cols_fast" mxfp4cols --case "mxfp4" >> $P 2>&1
echo "all done ($(( $(date +%s) - t0 )) s)" >> $P
cat $P
