#!/usr/bin/env bash
# run 120: per-instruction profiles of kernel v8 on NVFP4 and MXFP4 cols (bf16) at 6a52234 (the bundle)
set -u
tar xzf .carry/bundle.tar.gz
export OUT LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
bash gpu/tools/ncu_sass.sh "block_cols_fast" nvfp4cols --case "nvfp4"
bash gpu/tools/ncu_sass.sh "block_cols_fast" mxfp4cols --case "mxfp4"
