#!/usr/bin/env bash
# run 137: HEAD (the MXFP4 kernels' NaN-tile amax out of line) through ctest -L gpu, the sample
# verify and verify --large of the MX schemes, then timed against the build of c85f528 (probe PREV)
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if [ "$PWD" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
tar xzf .carry/bundle.tar.gz
S=$OUT/summary.txt; { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S
t0=$(date +%s)
timeout 120 ctest --test-dir build-devonly -L gpu --output-on-failure > $OUT/ctest.log 2>&1
echo "ctest -L gpu rc=$? ($(( $(date +%s) - t0 )) s) $(grep -E 'tests passed|tests failed' $OUT/ctest.log)" >> $S
timeout 120 build-devonly/fpsim-device verify --device gpu > $OUT/verify.log 2>&1
echo "verify rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify.log)" >> $S
timeout 150 build-devonly/fpsim-device verify --device gpu --large --only mxfp4 > $OUT/verify-large.log 2>&1
echo "verify --large --only mxfp4 rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify-large.log)" >> $S
bash gpu/tools/ab.sh "PREV" 4 mxfp nvfp4 > /dev/null 2>&1
cat $S; grep -E "verify|all done" $OUT/ab.txt
