# loss_gap.gp: relative training-loss gap to the FP64 reference against the step, one line per
# recipe (experiments/nvfp4-ablation).
#   gnuplot -e "datafile='D'; outfile='O'; fmt='png'" loss_gap.gp
# Data: a header row (step, then the recipe labels), then per step each recipe's gap, smoothed.
if (!exists("fmt")) fmt = 'png'
if (fmt eq 'svg') {
    set terminal svg size 960,600 dynamic enhanced font 'Sans,11'
} else {
    set terminal pngcairo size 960,600 enhanced font 'Sans,11'
}
set output outfile
set title 'training loss gap to the FP64 reference (trailing mean of 10 steps)' noenhanced
set xlabel 'optimizer step'
set ylabel '(loss - reference) / reference'
set grid
set key outside right top noenhanced
set format y '%.1e'
stats datafile using 1 nooutput
ncols = STATS_columns
plot for [i=2:ncols] datafile using 1:i with lines linewidth 2 title columnheader(i)
