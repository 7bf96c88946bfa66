#!/usr/bin/env bash
# run 110: per-instruction profiles of kernel v8 on NVFP4 and MXFP4 cols (bf16) at this commit
set -u
tar xzf .carry/bundle.tar.gz
export OUT
bash gpu/tools/ncu_sass.sh "block_cols_fast" nvfp4cols --case "nvfp4"
bash gpu/tools/ncu_sass.sh "block_cols_fast" mxfp4cols --case "mxfp4"
ls -la $OUT
