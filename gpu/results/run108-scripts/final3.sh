#!/usr/bin/env bash
# run 116: HEAD 58e0766 (the bundle, kernel v8 staging of run 115) through ctest -L gpu, the sample
# verify, verify --large of the four kernel-v8 schemes, the whole bench (bench.json); then on two
# other shapes H0 (21d1420's kernel v8, built from that commit's block_cols_fast_kernel.cuh) against
# HEAD, two rounds alternated.
set -u
tar xzf .carry/bundle.tar.gz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if [ "$PWD" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
cp build-devonly/fpsim-device .carry/fpsim-device-D
S=$OUT/summary.txt; { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S
t0=$(date +%s)
timeout 90 ctest --test-dir build-devonly -L gpu --output-on-failure > $OUT/ctest.log 2>&1
echo "ctest -L gpu rc=$? ($(( $(date +%s) - t0 )) s) $(grep -E 'tests passed|tests failed' $OUT/ctest.log)" >> $S
timeout 120 .carry/fpsim-device-D verify --device gpu > $OUT/verify.log 2>&1
echo "verify rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify.log)" >> $S
: > $OUT/verify-large.log
for o in mxfp8 fp8-block nvfp4 mxfp4; do
  timeout 120 .carry/fpsim-device-D verify --device gpu --large --only "$o" >> $OUT/verify-large.log 2>&1
  echo "verify --large --only $o rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify-large.log)" >> $S
done
timeout 90 .carry/fpsim-device-D bench quantize --device gpu --json > $OUT/bench.json 2> /dev/null
echo "bench rc=$? ($(( $(date +%s) - t0 )) s)" >> $S
P=$OUT/ab.txt; : > $P
CASES='--case nvfp4 --case mxfp4 --case mxfp8-e4m3 --case fp8-block'
for size in 4096x65536 262144x1024; do
  for i in 1 2; do
    if [ $i = 1 ]; then order="H0 D"; else order="D H0"; fi
    for b in $order; do
      echo "== $b $size $i" >> $P
      timeout 60 .carry/fpsim-device-$b bench quantize --device gpu --size $size $CASES 2>&1 | grep -E "copy|bf16 .*cols" >> $P
    done
  done
done
echo "all done ($(( $(date +%s) - t0 )) s)" >> $S
cat $S
