#!/usr/bin/env bash
# run 102: the dedicated rhtsum=mma amax pass (rhtamax) against HEAD (run97)
set -u
P=$OUT/ab.txt; date -u > $P
for only in "rhtsum=mma" "nvfp4"; do
  .carry/fpsim-device-rhtamax verify --device gpu --only "$only" > $OUT/v.txt 2>&1; echo "verify --only $only rc=$? $(tail -1 $OUT/v.txt)" >> $P
done
.carry/fpsim-device-rhtamax verify --device gpu --only "rhtsum=mma" --large > $OUT/vl.txt 2>&1; echo "verify --large --only rhtsum=mma rc=$? $(tail -1 $OUT/vl.txt)" >> $P
grep -E "rhtsum=mma" $OUT/v.txt $OUT/vl.txt >> $P
C="--case nvfp4:sr=1,rht=1,rhtsum=mma --case nvfp4:rht=1,rhtsum=mma"
for i in 1 2 3; do
  for b in run97 rhtamax; do echo "== $b $i" >> $P; .carry/fpsim-device-$b bench quantize --device gpu $C 2>&1 | grep -E "given|e2e" >> $P; done
done
for s in 262144x1024 1024x262144 4096x4096; do
  for b in run97 rhtamax; do echo "== $b $s" >> $P; .carry/fpsim-device-$b bench quantize --device gpu --size $s --case nvfp4:sr=1,rht=1,rhtsum=mma 2>&1 | grep -E "e2e" >> $P; done
done
cat $P
