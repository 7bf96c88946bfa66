#!/usr/bin/env bash
# run 108: kernel v8 columns rolled by word pairs (B) and kernel v9 loading the next chunk into
# registers (B: 16x128 chunks; C: 16x64 chunks) against HEAD (A = fpsim-device-mend), three rounds
# alternated; then the per-instruction profile of the SR+RHT rhtsum=mma kernel (HEAD).
set -u
P=$OUT/ab.txt; date -u > $P; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $P
CASES='--case nvfp4 --case mxfp4 --case mxfp8-e4m3 --case fp8-block'
for b in vB vC; do
  .carry/fpsim-device-$b verify --device gpu > $OUT/verify-$b.txt 2>&1
  echo "verify $b rc=$? $(tail -1 $OUT/verify-$b.txt)" >> $P
done
.carry/fpsim-device-vB verify --device gpu --large --only "tile=16x16" > $OUT/vl.txt 2>&1
echo "verify vB --large --only tile=16x16 rc=$? $(tail -1 $OUT/vl.txt)" >> $P
for i in 1 2 3; do
  for b in mend vB vC; do
    echo "== $b $i" >> $P
    .carry/fpsim-device-$b bench quantize --device gpu $CASES 2>&1 | grep -E "copy|bf16 .*(given|rows  *-|cols  *-)" | grep -v "sr=1\|rht=1" >> $P
  done
done
mkdir -p build-devonly && cp .carry/fpsim-device-mend build-devonly/fpsim-device
export OUT
bash gpu/tools/ncu_sass.sh "block_cols_fast" srrhtmma --case "nvfp4:sr=1,rht=1,rhtsum=mma" >> $P 2>&1
cat $P
