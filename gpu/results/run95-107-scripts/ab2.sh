#!/usr/bin/env bash
# run 98 probe: SR + rhtsum=mma column loop unrolled by 2 (unroll2) against 1 (run97 = HEAD)
set -u
P=$OUT/ab.txt; date -u > $P
C="--case nvfp4:sr=1,rht=1,rhtsum=mma --case nvfp4:rht=1,rhtsum=mma"
.carry/fpsim-device-unroll2 verify --device gpu --only "sr=1,rht=1,rhtsum=mma" > $OUT/verify.txt 2>&1; echo "verify rc=$? $(tail -1 $OUT/verify.txt)" >> $P
for i in 1 2 3; do
  for b in run97 unroll2; do echo "== $b $i" >> $P; .carry/fpsim-device-$b bench quantize --device gpu $C 2>&1 | grep -E "given|e2e" >> $P; done
done
cat $P
