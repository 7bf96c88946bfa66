#!/usr/bin/env bash
# run 121: HEAD 6a52234's device code (the bundle) through ctest -L gpu and verify --large of the
# four kernel-v8 schemes (the sample verify ran on its SASS-identical probe build in run 117)
set -u
tar xzf .carry/bundle.tar.gz
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if [ "$PWD" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
S=$OUT/summary.txt; { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S
t0=$(date +%s)
timeout 90 ctest --test-dir build-devonly -L gpu --output-on-failure > $OUT/ctest.log 2>&1
echo "ctest -L gpu rc=$? ($(( $(date +%s) - t0 )) s) $(grep -E 'tests passed|tests failed' $OUT/ctest.log)" >> $S
: > $OUT/verify-large.log
for o in mxfp8 fp8-block nvfp4 mxfp4; do
  timeout 120 build-devonly/fpsim-device verify --device gpu --large --only "$o" >> $OUT/verify-large.log 2>&1
  echo "verify --large --only $o rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify-large.log)" >> $S
done
cat $S
