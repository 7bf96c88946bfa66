#!/usr/bin/env bash
# run 97: counters and per-instruction profiles of kernel v8 on NVFP4 and MXFP4 cols (bf16)
set -u
tar xzf .carry/bundle.tar.gz
export OUT
NCU_COUNT=1 bash gpu/tools/ncu_stalls.sh "block_cols_fast" --case "nvfp4" --size 16384x16384 > /dev/null 2>&1
mv $OUT/ncu-stalls.txt $OUT/stalls-nvfp4-cols.txt
NCU_COUNT=1 bash gpu/tools/ncu_stalls.sh "block_cols_fast" --case "mxfp4" > /dev/null 2>&1
mv $OUT/ncu-stalls.txt $OUT/stalls-mxfp4-cols.txt
NCU_COUNT=1 bash gpu/tools/ncu_stalls.sh "block_cols_fast" --case "mxfp8-e4m3" > /dev/null 2>&1
mv $OUT/ncu-stalls.txt $OUT/stalls-mxfp8-cols.txt
bash gpu/tools/ncu_sass.sh "block_cols_fast" nvfp4cols --case "nvfp4"
bash gpu/tools/ncu_sass.sh "block_cols_fast" mxfp4cols --case "mxfp4"
ls -la $OUT
