#!/usr/bin/env bash
# run 117: probe G against HEAD (H, the bundle of 58e0766): kernel v8's next tile position copied
# from the tile staged ahead instead of stepped again (FPSIM_GPU_COLS_V8_NEXT_FROM_AHEAD), and the
# NVFP4 scale code's cvt.rn.satfinite without the fminf(., FLT_MAX) before it
# (FPSIM_GPU_NVFP4_CODE_NO_FMIN). Verify of G, then three A/B rounds in alternating order.
set -u
tar xzf .carry/bundle.tar.gz
cp build-devonly/fpsim-device .carry/fpsim-device-H
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
P=$OUT/ab.txt; { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $P
t0=$(date +%s)
timeout 120 .carry/fpsim-device-G verify --device gpu > $OUT/verify-G.log 2>&1
echo "verify G rc=$? ($(( $(date +%s) - t0 )) s) $(tail -1 $OUT/verify-G.log)" >> $P
CASES='--case nvfp4 --case mxfp4 --case mxfp8-e4m3 --case fp8-block'
for i in 1 2 3; do
  if [ $((i % 2)) = 1 ]; then order="H G"; else order="G H"; fi
  for b in $order; do
    echo "== $b $i" >> $P
    timeout 60 .carry/fpsim-device-$b bench quantize --device gpu $CASES 2>&1 | grep -E "copy|bf16" >> $P
  done
done
echo "all done ($(( $(date +%s) - t0 )) s)" >> $P
cat $P
