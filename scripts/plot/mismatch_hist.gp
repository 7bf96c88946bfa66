# mismatch_hist.gp: histogram of the log-prob difference g - p, one line per configuration.
# Driven by `fpsim mismatch --plot` (cli/mismatch_plot.c):
#   gnuplot -e "datafile='D'; outfile='O'; fmt='png'; common='C'" mismatch_hist.gp
# Data: header row (bin, then configuration names), one row per bin: bin centre, then the
# fraction of scored tokens of each configuration in that bin.
load common
set title 'log-prob difference g - p (generator - trainer), per configuration' noenhanced
set xlabel 'g - p (nats)'
set ylabel 'fraction of scored tokens'
set logscale y
stats datafile using 1 nooutput
ncols = STATS_columns
plot for [i=2:ncols] datafile using 1:(column(i) > 0 ? column(i) : 1/0) with steps lw 2 title columnheader(i)
