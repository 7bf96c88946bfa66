#!/usr/bin/env bash
# run 141: pipe utilisation and per-instruction stall samples of the SR+RHT rhtsum=mma kernel (HEAD = MT2)
set -u
tar xzf .carry/bundle.tar.gz
cp .carry/fpsim-device-MT2 build-devonly/fpsim-device
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
M=smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active
for p in alu fma fmaheavy fmalite fp16 lsu uniform xu cbu adu; do
  M="$M,sm__inst_executed_pipe_${p}.avg.pct_of_peak_sustained_active"
done
M="$M,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"
M="$M,sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active"
M="$M,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum"
for c in "nvfp4:sr=1,rht=1,rhtsum=mma" "nvfp4:sr=1"; do
  timeout 120 ncu --clock-control none --kernel-name "regex:block_(cols|rows)_fast" --launch-count 3 --metrics "$M" \
    build-devonly/fpsim-device bench quantize --device gpu --reps 1 --case "$c" >> $OUT/ncu-pipes.txt 2>&1
done
grep -E "void|pct|duration" $OUT/ncu-pipes.txt | sed -e 's/(<unnamed>::qargs.*//' | awk '{$1=$1; print}'
bash gpu/tools/ncu_sass.sh "block_cols_fast" srmma --case "nvfp4:sr=1,rht=1,rhtsum=mma"
