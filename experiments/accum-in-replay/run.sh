#!/bin/sh
# Replay nemo-rl-fp8 (block FP8) and te-current (per-tensor FP8) under three accumulation models.
# Usage: experiments/accum-in-replay/run.sh FPSIM_BINARY OUT.h5
set -e
FPSIM=${1:-fpsim}; OUT=${2:-accum.h5}
M=layers=2,d=128,heads=4,ffn=256,vocab=128,seq=128,batch=2
R=""
for r in nemo-rl-fp8 te-current; do
  for a in fp32 hopper-qgmma:fast hopper-qgmma:promote=128; do R="$R --recipe $r@accum=$a"; done
done
time "$FPSIM" replay $R --model $M --steps 2 --pretrain 10 --threads 2 --no-plots --quiet --out "$OUT"
