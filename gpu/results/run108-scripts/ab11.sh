#!/usr/bin/env bash
# run 113: kernel v8 stepping the code pointer per column (I) against HEAD's build (H, the bundle of
# run 112): verify of I, then three A/B rounds in alternating order on the columnwise cases.
set -u
tar xzf .carry/bundle.tar.gz
cp build-devonly/fpsim-device .carry/fpsim-device-H
P=$OUT/ab.txt; { date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $P
timeout 150 .carry/fpsim-device-I verify --device gpu > $OUT/verify.log 2>&1
echo "verify I rc=$? $(tail -1 $OUT/verify.log)" >> $P
CASES='--case nvfp4 --case mxfp4 --case mxfp8-e4m3 --case fp8-block'
for i in 1 2 3; do
  if [ $((i % 2)) = 1 ]; then order="H I"; else order="I H"; fi
  for b in $order; do
    echo "== $b $i" >> $P
    .carry/fpsim-device-$b bench quantize --device gpu $CASES 2>&1 | grep -E "copy|bf16 .*cols" >> $P
  done
done
cat $P
