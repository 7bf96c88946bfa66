# bias_vs_n.gp: error of a summed weight gradient vs the number of tokens N, log-log.
#
# Driven by `fpsim plot`:
#   gnuplot -e "datafile='D'; outfile='O'; fmt='png'; plottitle='T'" bias_vs_n.gp
# Data file: a header row, then one row per N: column 1 N, then per case two columns (rmse, bias),
# both relative to ||G_N||; the last column is an N^-1/2 guide through the first SR case's rmse
# at the smallest N. Solid lines: rmse (total error); dashed: bias (what does not average out).
# Expected: SR's rmse follows the guide down; RNE's flattens at its bias floor.
if (!exists("fmt")) fmt = 'png'
if (fmt eq 'svg') {
    set terminal svg size 960,600 dynamic enhanced font 'Sans,11'
} else {
    set terminal pngcairo size 960,600 enhanced font 'Sans,11'
}
set output outfile
set datafile missing '?'
set title plottitle noenhanced
set xlabel 'tokens summed, N'
set ylabel 'error of G_N relative to ||G_N||'
set logscale xy 2
set logscale y 10
set format y '10^{%L}'
set format x '2^{%L}'
set grid xtics ytics mytics
set key outside right top noenhanced
stats datafile using 1 nooutput
ncols = STATS_columns
ncases = (ncols - 2) / 2
plot for [k=0:ncases-1] datafile using 1:(column(2 + 2*k)) with linespoints linecolor (k + 1) \
        pointtype (k + 4) linewidth 2 dashtype 1 title columnheader(2 + 2*k), \
     for [k=0:ncases-1] datafile using 1:(column(3 + 2*k)) with linespoints linecolor (k + 1) \
        pointtype (k + 4) linewidth 1 dashtype 2 title columnheader(3 + 2*k), \
     datafile using 1:(column(ncols)) with lines linecolor rgb 'black' dashtype 3 title 'N^{-1/2}'
