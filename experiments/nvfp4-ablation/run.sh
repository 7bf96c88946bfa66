#!/bin/sh
# The NVFP4 training recipe one component at a time (rl-and-recipes.md E8, second part): TE's
# NVFP4BlockScaling as the `te-nvfp4` preset, then each of its four parts taken out or added,
# and MXFP4 beside it, all trained from the same FP32-pretrained weights on the same batches.
# Usage: experiments/nvfp4-ablation/run.sh [FPSIM_BINARY] [OUTDIR]   (STEPS=N, default 150;
#        SEED=S, default 1: the seed of stochastic rounding and of the task's batches)
#   writes OUTDIR/nvfp4-ablation.h5 (the replay file), OUTDIR/table.md, OUTDIR/loss_gap.dat and
#   OUTDIR/loss_gap.png (scripts/plot/loss_gap.gp).
set -e
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
FPSIM=${1:-fpsim}; OUT=${2:-nvfp4-ablation}
STEPS=${STEPS:-150}; SEED=${SEED:-1}
mkdir -p "$OUT"
# The recipe texts (docs/quantizers.md, "Recipes"): te-nvfp4 is W 16x16 2-D, X 1x16, dY 1x16 with
# stochastic rounding, RHT on the wgrad copies of X and dY; each variant changes one part.
time "$FPSIM" replay --steps "$STEPS" --seed "$SEED" --no-local --no-plots --quiet --out "$OUT/nvfp4-ablation.h5" \
    --recipe bf16 \
    --recipe te-nvfp4 \
    --recipe "te-nvfp4;wgrad.x=nvfp4;wgrad.g=nvfp4:sr=1" \
    --recipe "te-nvfp4;g=nvfp4;wgrad.g=nvfp4:rht=1" \
    --recipe "te-nvfp4;w=nvfp4" \
    --recipe "te-nvfp4;last_hp=1" \
    --recipe "hp=bf16;w=mxfp4;x=mxfp4;g=mxfp4"
python3 "$HERE/table.py" "$OUT/nvfp4-ablation.h5" "$OUT/loss_gap.dat" > "$OUT/table.md"
gnuplot -e "datafile='$OUT/loss_gap.dat'; outfile='$OUT/loss_gap.png'; fmt='png'" \
    "$ROOT/scripts/plot/loss_gap.gp"
cat "$OUT/table.md"
