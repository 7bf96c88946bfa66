#!/usr/bin/env bash
# run 103: the dedicated rhtsum=exact amax pass (rhtexact, also carrying run 102's mma pass) against HEAD~1 (run97)
set -u
P=$OUT/ab.txt; date -u > $P
B=.carry/fpsim-device-rhtexact
$B verify --device gpu --only "rht=1" > $OUT/v.txt 2>&1; echo "verify --only rht=1 rc=$? $(tail -1 $OUT/v.txt)" >> $P
$B verify --device gpu --only "rht=1" --large > $OUT/vl.txt 2>&1; echo "verify --large --only rht=1 rc=$? $(tail -1 $OUT/vl.txt)" >> $P
grep -E "rht=1" $OUT/v.txt $OUT/vl.txt >> $P
C="--case nvfp4:sr=1,rht=1 --case nvfp4:rht=1"
for i in 1 2; do
  for b in run97 rhtexact; do echo "== $b $i" >> $P; .carry/fpsim-device-$b bench quantize --device gpu $C 2>&1 | grep -E "given|e2e" >> $P; done
done
for sp in 0 2 20; do
  for b in run97 rhtexact; do echo "== $b spread $sp" >> $P; .carry/fpsim-device-$b bench quantize --device gpu --spread $sp --case nvfp4:sr=1,rht=1 2>&1 | grep -E "given|e2e" >> $P; done
done
cat $P
