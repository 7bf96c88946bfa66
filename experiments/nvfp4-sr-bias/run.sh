#!/bin/sh
# NVFP4 + stochastic rounding: where the bias floor of a summed weight gradient comes from.
# Usage: experiments/nvfp4-sr-bias/run.sh [FPSIM_BINARY] [OUTDIR]
#   writes OUTDIR/nvfp4-sr-bias.h5 (the replay file, group /bias_variance), OUTDIR/table.md,
#   OUTDIR/bias_sat.dat and OUTDIR/bias_sat.png (scripts/plot/biasvar_sat.gp).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
FPSIM=${1:-fpsim}; OUT=${2:-nvfp4-sr-bias}
TOKENS=${BV_TOKENS:-65536}; SEEDS=${BV_SEEDS:-8}
mkdir -p "$OUT"
# The default model after 5 FP32 pretraining steps; the sweep takes the last block's attn_out
# wgrad operands (dY, X) over up to 65536 tokens of fresh batches (docs/replay.md).
time "$FPSIM" replay --recipe bf16 --steps 1 --pretrain 5 --bias-variance --bv-seeds "$SEEDS" \
    --bv-tokens "$TOKENS" --threads 2 --no-plots --quiet --out "$OUT/nvfp4-sr-bias.h5"
python3 "$HERE/table.py" "$OUT/nvfp4-sr-bias.h5" "$OUT/bias_sat.dat" > "$OUT/table.md"
gnuplot -e "datafile='$OUT/bias_sat.dat'; outfile='$OUT/bias_sat.png'; fmt='png'" \
    "$ROOT/scripts/plot/biasvar_sat.gp"
cat "$OUT/table.md"
