# rates_vs_layer.gp: per-tensor flush-to-zero or saturation rate of GEMM operands vs layer.
#
# Driven by `fpsim plot`:
#   gnuplot -e "datafile='D'; outfile='O'; fmt='png'; plottitle='T'; ylab='Y'; nroles=3" rates_vs_layer.gp
# Data file: a header row, then one row per layer: index, name, then for each recipe `nroles`
# columns (one per operand role: weight, activation, grad), titled "recipe:role". Colour = recipe,
# point and dash = role. Rates are fractions of the operand's elements (0 when none); a
# logarithmic axis would hide the zeros, so the axis is linear in percent.
if (!exists("fmt")) fmt = 'png'
if (!exists("nroles")) nroles = 3
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
set format y '%g%%'
set grid
set key outside right top noenhanced
set offsets 0.2, 0.2, 0, 0
set yrange [0:*]
# all rates zero (e.g. saturation under BF16): give the axis a height instead of a warning
if (exists("ymax") && ymax > 0) set yrange [0:ymax]
# dashtype takes an expression only when it does not start with '(' (that is a dash pattern).
dash_of(i) = ((i - 3) % nroles) + 1
stats datafile using 1 nooutput
ncols = STATS_columns
plot for [i=3:ncols] datafile using 1:(100.0 * column(i)):xtic(2) with linespoints \
    linecolor ((i - 3) / nroles + 1) dashtype dash_of(i) pointtype (((i - 3) % nroles) + 5) \
    linewidth 2 title columnheader(i)
