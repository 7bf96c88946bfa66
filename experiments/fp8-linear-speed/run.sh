#!/bin/sh
# FP8 vs BF16 linear-layer speed on the GPU at Llama-3.1-8B shapes, 8192 tokens (one command).
#
#   experiments/fp8-linear-speed/run.sh [FPSIM] [OUTDIR]          on a machine with a GPU: runs
#       `FPSIM bench gemm --device gpu --linear --json` (BF16 GEMM, FP8 GEMM alone, FP8 with fpsim's
#       GPU quantizers and scale recalibration; per-tensor and 1x128 x 128x128 block scales), then
#       the table and the plot
#   experiments/fp8-linear-speed/run.sh --plot RESULTS.json [OUTDIR]   table and plot of a saved run
#
# Outputs in OUTDIR (default experiments/fp8-linear-speed/out): results.json, table.md,
# speedup.dat, breakdown.dat, fp8_linear_speed.png (gnuplot).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
if [ "${1:-}" = "--plot" ]; then
    JSON=$2
    OUTDIR=${3:-$HERE/out}
    mkdir -p "$OUTDIR"
    [ "$JSON" -ef "$OUTDIR/results.json" ] || cp "$JSON" "$OUTDIR/results.json"
else
    FPSIM=${1:-fpsim}
    OUTDIR=${2:-$HERE/out}
    mkdir -p "$OUTDIR"
    "$FPSIM" bench gemm --device gpu --linear --tokens 8192 --reps 20 --json > "$OUTDIR/results.json.tmp"
    mv "$OUTDIR/results.json.tmp" "$OUTDIR/results.json"
fi
python3 "$HERE/table.py" "$OUTDIR/results.json" "$OUTDIR"
if command -v gnuplot >/dev/null 2>&1; then
    (cd "$OUTDIR" && gnuplot "$HERE/plot.gp")
    echo "plot: $OUTDIR/fp8_linear_speed.png"
else
    echo "gnuplot not found: table only (replot here with: $0 --plot $OUTDIR/results.json)"
fi
