#!/usr/bin/env bash
# run 109: the kept candidate (D: kernel v9 loading the next chunk into registers with the tile
# scale once per lane; kernel v8's column loop nested; the rhtsum=mma amax from BF16 pairs) against
# HEAD (mend): ctest -L gpu and verify of D (bundle), then three A/B rounds in alternating order.
set -u
export OUT
STEPS="ctest verify" bash gpu/tools/device_final.sh run 200 > /dev/null 2>&1
P=$OUT/ab.txt; { date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; cat $OUT/summary.txt; } > $P
build-devonly/fpsim-device verify --device gpu --large --only "rhtsum=mma" > $OUT/vl.txt 2>&1
echo "verify --large --only rhtsum=mma rc=$? $(tail -1 $OUT/vl.txt)" >> $P
build-devonly/fpsim-device verify --device gpu --large --only "tile=16x16" > $OUT/vl2.txt 2>&1
echo "verify --large --only tile=16x16 rc=$? $(tail -1 $OUT/vl2.txt)" >> $P
cp build-devonly/fpsim-device .carry/fpsim-device-D
CASES='--case nvfp4 --case mxfp4 --case mxfp8-e4m3 --case fp8-block'
for i in 1 2 3; do
  if [ $((i % 2)) = 1 ]; then order="mend D"; else order="D mend"; fi
  for b in $order; do
    echo "== $b $i" >> $P
    .carry/fpsim-device-$b bench quantize --device gpu $CASES 2>&1 | grep -E "copy|bf16 .*(given|e2e|rows  *-|cols  *-)" >> $P
  done
done
cat $P
