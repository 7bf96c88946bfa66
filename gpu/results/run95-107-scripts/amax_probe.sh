#!/usr/bin/env bash
# run 95 probe: the amax pass (tensor_amax.cu) against run 91's binary; keep sizes by env
set -u
B=build-devonly/fpsim-device; O=.carry/fpsim-device-run91
P=$OUT/probe.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P
for only in "tensor amax" "fp8-tensor" "nvfp4"; do
  $B verify --device gpu --only "$only" > $OUT/verify-$(echo $only | tr ' ' _).txt 2>&1
  echo "verify --only '$only' rc=$? $(tail -1 $OUT/verify-$(echo $only | tr ' ' _).txt)" >> $P
done
C="--case fp8-tensor --case nvfp4"
F="copy|e2e|given"
for i in 1 2; do
  echo "== old (run 91) $i" >> $P; $O bench quantize --device gpu $C 2>&1 | grep -E "$F" | grep -v "tile=\|sr=1,rht=1 \|rht=1 " >> $P
  for k in 0 16 30 44; do
    echo "== new keep=${k}MiB $i" >> $P
    FPSIM_AMAX_KEEP_MIB=$k $B bench quantize --device gpu $C 2>&1 | grep -E "$F" | grep -v "tile=\|sr=1,rht=1 \|rht=1 " >> $P
  done
done
cat $P
