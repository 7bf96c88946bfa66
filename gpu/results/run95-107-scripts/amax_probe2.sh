#!/usr/bin/env bash
# run 96 probe: loads in flight per thread of the amax pass
set -u
B=build-devonly/fpsim-device; O=.carry/fpsim-device-run91
P=$OUT/probe.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $P
for L in 1 2 4 8 16; do
  FPSIM_AMAX_LOADS=$L $B verify --device gpu --only "tensor amax" > $OUT/v.txt 2>&1
  echo "loads $L: verify rc=$? $(tail -1 $OUT/v.txt)" >> $P
done
C="--case fp8-tensor --case nvfp4"
for i in 1 2; do
  echo "== old (run 91) $i" >> $P; $O bench quantize --device gpu $C 2>&1 | grep -E "copy|rows (e2e|given)" | grep -v "tile=\|sr=1" >> $P
  for L in 1 2 4 8 16; do
    echo "== loads $L $i" >> $P
    FPSIM_AMAX_LOADS=$L $B bench quantize --device gpu $C 2>&1 | grep -E "rows (e2e|given)" | grep -v "tile=\|sr=1" >> $P
  done
done
cat $P
