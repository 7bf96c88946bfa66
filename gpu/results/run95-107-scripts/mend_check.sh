#!/usr/bin/env bash
# run 107: the review mend (shared BF16-pair amax helpers; two kernels' SASS changed in their setup)
set -u
P=$OUT/check.txt; date -u > $P
B=.carry/fpsim-device-mend
for only in "tensor amax" "rht=1" "nvfp4" "fp8-tensor"; do
  $B verify --device gpu --only "$only" > $OUT/v.txt 2>&1; echo "verify --only '$only' rc=$? $(tail -1 $OUT/v.txt)" >> $P
done
$B verify --device gpu --only "rhtsum=mma" --large > $OUT/vl.txt 2>&1; echo "verify --large --only rhtsum=mma rc=$? $(tail -1 $OUT/vl.txt)" >> $P
for b in final mend; do echo "== $b" >> $P; .carry/fpsim-device-$b bench quantize --device gpu --case "rhtsum=mma" --case fp8-tensor --case "nvfp4" 2>&1 | grep -E "e2e" >> $P; done
cat $P
