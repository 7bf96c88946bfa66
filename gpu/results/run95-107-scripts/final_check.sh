#!/usr/bin/env bash
# run 106: the launch refactor (host code only; device SASS equals run 105's): RHT verify and e2e
set -u
P=$OUT/check.txt; date -u > $P
B=.carry/fpsim-device-final
$B verify --device gpu --only "rht=1" > $OUT/v.txt 2>&1; echo "verify --only rht=1 rc=$? $(tail -1 $OUT/v.txt)" >> $P
$B verify --device gpu --only "rht=1" --large > $OUT/vl.txt 2>&1; echo "verify --large --only rht=1 rc=$? $(tail -1 $OUT/vl.txt)" >> $P
$B verify --device gpu --only "tensor amax" > $OUT/va.txt 2>&1; echo "verify --only 'tensor amax' rc=$? $(tail -1 $OUT/va.txt)" >> $P
$B bench quantize --device gpu --case "rht=1" 2>&1 | grep -E "copy|given|e2e" >> $P
cat $P
