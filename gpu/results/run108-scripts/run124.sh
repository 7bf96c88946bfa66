#!/usr/bin/env bash
# run 124: probe SG (the SR sign bits or-ed in by one LOP3) against HEAD 4c2d08f's build, then the
# per-instruction profile of HEAD's SR+RHT rhtsum=mma kernel (kernel v8) after the float16 route
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bash gpu/tools/ab.sh "SG" 3 nvfp4 > /dev/null 2>&1
bash gpu/tools/ncu_sass.sh "block_cols_fast" srrhtmma --case "nvfp4:sr=1,rht=1,rhtsum=mma" > $OUT/ncu.txt 2>&1
cat $OUT/ncu.txt; grep -E "verify|all done" $OUT/ab.txt
