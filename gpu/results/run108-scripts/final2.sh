#!/usr/bin/env bash
# run 112: the committed device code (HEAD) end to end: ctest -L gpu, verify, the full bench
set -u
export OUT
STEPS="ctest verify bench" bash gpu/tools/device_final.sh run 300 > /dev/null 2>&1
timeout 150 build-devonly/fpsim-device verify --device gpu --large --only "mxfp8" > $OUT/verify-large.log 2>&1
echo "verify --large --only mxfp8 rc=$? $(tail -1 $OUT/verify-large.log)" >> $OUT/summary.txt
timeout 150 build-devonly/fpsim-device verify --device gpu --large --only "fp8-block" >> $OUT/verify-large.log 2>&1
echo "verify --large --only fp8-block rc=$? $(tail -1 $OUT/verify-large.log)" >> $OUT/summary.txt
cat $OUT/summary.txt
