#!/usr/bin/env bash
# run 111: kernel v8 with its counts and scale-code stores once per pass (F, this build) against
# run 109's build (D): ctest -L gpu and verify of F (bundle), then three A/B rounds alternated.
set -u
export OUT
STEPS="ctest verify" bash gpu/tools/device_final.sh run 200 > /dev/null 2>&1
P=$OUT/ab.txt; { date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat $OUT/summary.txt; } > $P
timeout 150 build-devonly/fpsim-device verify --device gpu --large --only "nvfp4" > $OUT/vl.txt 2>&1
echo "verify --large --only nvfp4 rc=$? $(tail -1 $OUT/vl.txt)" >> $P
timeout 150 build-devonly/fpsim-device verify --device gpu --large --only "mxfp" > $OUT/vl2.txt 2>&1
echo "verify --large --only mxfp rc=$? $(tail -1 $OUT/vl2.txt)" >> $P
cp build-devonly/fpsim-device .carry/fpsim-device-F
CASES='--case nvfp4 --case mxfp4 --case mxfp8-e4m3 --case fp8-block'
for i in 1 2 3; do
  if [ $((i % 2)) = 1 ]; then order="D F"; else order="F D"; fi
  for b in $order; do
    echo "== $b $i" >> $P
    .carry/fpsim-device-$b bench quantize --device gpu $CASES 2>&1 | grep -E "copy|bf16 .*(given|e2e|rows  *-|cols  *-)" >> $P
  done
done
cat $P
