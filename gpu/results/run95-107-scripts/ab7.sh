#!/usr/bin/env bash
# run 104: rhtsum=exact amax pass at 128 registers (rhtexact2) against 212 (rhtexact) and HEAD~ (run97)
set -u
P=$OUT/ab.txt; date -u > $P
B=.carry/fpsim-device-rhtexact2
$B verify --device gpu --only "rht=1" > $OUT/v.txt 2>&1; echo "verify --only rht=1 rc=$? $(tail -1 $OUT/v.txt)" >> $P
$B verify --device gpu --only "rht=1" --large > $OUT/vl.txt 2>&1; echo "verify --large --only rht=1 rc=$? $(tail -1 $OUT/vl.txt)" >> $P
for sp in 8 0 20 8; do
  for b in run97 rhtexact rhtexact2; do echo "== $b spread $sp" >> $P; .carry/fpsim-device-$b bench quantize --device gpu --spread $sp --case nvfp4:sr=1,rht=1 2>&1 | grep -E "e2e" >> $P; done
done
cat $P
