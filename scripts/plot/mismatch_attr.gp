# mismatch_attr.gp: per-layer attribution bars: how much token_mult_prob_error - 1 drops when one
# layer (or one part, all layers) of the generator runs on the trainer's numerics.
#   gnuplot -e "datafile='D'; outfile='O'; fmt='png'; common='C'" mismatch_attr.gp
# Data: header row (swap, then configuration names), one row per swapped layer/part: its name,
# then the drop for each configuration.
load common
set title 'attribution: drop of token\_mult\_prob\_error - 1 when one layer / part is swapped'
set ylabel 'drop (of the full mismatch)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30
stats datafile using 2 nooutput
ncols = STATS_columns
plot for [i=2:ncols] datafile using i:xtic(1) title columnheader(i)
