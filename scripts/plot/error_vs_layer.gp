# error_vs_layer.gp: an error figure against layer depth, one line per recipe and view.
#
# Driven by `fpsim plot` (cli/cmd_plot.c), which writes the data file and runs
#   gnuplot -e "datafile='D'; outfile='O'; fmt='png'; plottitle='T'; ylab='Y'; paired=1" error_vs_layer.gp
# Data file: a header row, then one row per layer: column 1 the layer index, column 2 its name
# (0, 1, ..., head), then one column per line, titled by the header. With paired=1 the columns
# come in pairs (local view, accumulated view) of one recipe: same colour, local dashed.
# Missing values are written as '?'. With allzero=1 (no value above 0, e.g. the fp64 control
# alone) the axis is linear, since a log axis has nothing to show.
if (!exists("fmt")) fmt = 'png'
if (!exists("paired")) paired = 1
if (!exists("allzero")) allzero = 0
if (fmt eq 'svg') {
    set terminal svg size 960,600 dynamic enhanced font 'Sans,11'
} else {
    set terminal pngcairo size 960,600 enhanced font 'Sans,11'
}
set output outfile
set datafile missing '?'
set title plottitle noenhanced
set xlabel 'layer (input side -> output side)'
set ylabel ylab noenhanced
if (allzero) {
    set yrange [-0.1:1]
    set label 1 'every error is exactly 0' at graph 0.5, 0.6 center
} else {
    set logscale y
    set format y '10^{%L}'
}
set grid xtics ytics mytics
set key outside right top noenhanced
stats datafile using 1 nooutput
ncols = STATS_columns
set offsets 0.2, 0.2, 0, 0
# dashtype takes an expression only when it does not start with '(' (that is a dash pattern).
dash_of(i) = ((i - 3) % 2) == 0 ? 2 : 1
if (paired) {
    plot for [i=3:ncols] datafile using 1:i:xtic(2) with linespoints \
        linecolor ((i - 3) / 2 + 1) dashtype dash_of(i) pointtype ((i - 3) / 2 + 4) \
        linewidth 2 title columnheader(i)
} else {
    plot for [i=3:ncols] datafile using 1:i:xtic(2) with linespoints \
        linecolor (i - 2) pointtype (i + 1) linewidth 2 title columnheader(i)
}
