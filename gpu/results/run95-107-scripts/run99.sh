#!/usr/bin/env bash
# run 99: HEAD's device validation (bundle-head: ctest -L gpu, verify) and the probe "pairshfl"
# (v8 shuffles both bf16 columns' amax at once) against HEAD: verify, A/B x3 on the cols cases, bench
set -u
tar xzf .carry/bundle-head.tar.gz
P=$OUT/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader; git rev-parse --short HEAD; } > $P
t=$(date +%s); (cd build-devonly && ctest -L gpu --output-on-failure > $OUT/ctest.log 2>&1); echo "ctest -L gpu (HEAD): rc=$? ($(( $(date +%s)-t )) s); $(grep 'tests passed' $OUT/ctest.log)" >> $P
t=$(date +%s); build-devonly/fpsim-device verify --device gpu > $OUT/verify-head.log 2>&1; echo "verify (HEAD): rc=$? ($(( $(date +%s)-t )) s); $(tail -1 $OUT/verify-head.log)" >> $P
t=$(date +%s); .carry/fpsim-device-pairshfl verify --device gpu > $OUT/verify-pairshfl.log 2>&1; echo "verify (pairshfl): rc=$? ($(( $(date +%s)-t )) s); $(tail -1 $OUT/verify-pairshfl.log)" >> $P
C="--case mxfp8-e4m3 --case fp8-block --case mxfp4 --case nvfp4"
for i in 1 2 3; do
  for b in run97 pairshfl; do echo "== $b $i" >> $OUT/ab.txt; .carry/fpsim-device-$b bench quantize --device gpu $C 2>&1 | grep -E "copy|cols given" | grep -v "rht\|sr=" >> $OUT/ab.txt; done
done
.carry/fpsim-device-pairshfl bench quantize --device gpu --json > $OUT/bench-pairshfl.json 2>$OUT/bench.err; echo "bench (pairshfl): rc=$?" >> $P
cat $P $OUT/ab.txt
