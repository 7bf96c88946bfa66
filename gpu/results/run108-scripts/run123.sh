#!/usr/bin/env bash
# run 123: probes J2S (SR rhtsum=mma columns by two) and J2N (NVFP4 columns by two) against HEAD
# 4c2d08f's build (ab.sh), then HEAD through ctest -L gpu (with test_f16_rz_hw), the sample
# verify and verify --large of nvfp4 (the float16 SR route in kernels v5, v7 and v8)
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
if [ "$PWD" != /work/main ] && [ ! -e /work/main ]; then mkdir -p /work && ln -s "$PWD" /work/main; fi
bash gpu/tools/ab.sh "J2S J2N" 3 nvfp4 > /dev/null 2>&1
S=$OUT/summary.txt; { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S
t0=$(date +%s)
timeout 120 ctest --test-dir build-devonly -L gpu --output-on-failure > $OUT/ctest.log 2>&1
echo "ctest -L gpu rc=$? ($(( $(date +%s) - t0 )) s) $(grep -E 'tests passed|tests failed' $OUT/ctest.log)" >> $S
timeout 120 build-devonly/fpsim-device verify --device gpu > $OUT/verify.log 2>&1
echo "verify rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify.log)" >> $S
timeout 150 build-devonly/fpsim-device verify --device gpu --large --only nvfp4 > $OUT/verify-large.log 2>&1
echo "verify --large --only nvfp4 rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify-large.log)" >> $S
cat $S; grep -E "verify|all done" $OUT/ab.txt
