# biasvar_sat.gp: where NVFP4 + stochastic rounding's bias in a summed weight gradient comes from.
#
#   gnuplot -e "datafile='D'; outfile='O'; fmt='png'" biasvar_sat.gp
# Data file (experiments/nvfp4-sr-bias/table.py): a header row, then one row per token count N:
# column 1 N, then per case (nvfp4-sr, nvfp4-sr-rht, and the what-ifs with the block scale rounded
# up) three columns, all relative to ||G_N||: the bias measured over the SR seeds ('?' where the
# estimator clamps to 0), the expected bias in closed form with TE's 8 random bits, and the same
# with unlimited random bits (the clip at 6, plus RHT's BF16 rounding); last column: the noise of
# the measured bias (nvfp4-sr's std / sqrt(seeds)). Points: measured; solid: expected; dashed:
# unlimited bits; black dotted: noise (measured points near or below it are not resolved). The solid and dashed lines of a TE case lie on each other
# when the clip at 6 is the cause; the what-ifs fall to the 8-bit truncation floor.
if (!exists("fmt")) fmt = 'png'
if (!exists("plottitle")) plottitle = 'NVFP4 + SR: bias of the summed weight gradient vs N'
if (fmt eq 'svg') {
    set terminal svg size 960,600 dynamic enhanced font 'Sans,11'
} else {
    set terminal pngcairo size 960,600 enhanced font 'Sans,11'
}
set output outfile
set datafile missing '?'
set title plottitle noenhanced
set xlabel 'tokens summed, N'
set ylabel 'bias of G_N relative to ||G_N||'
set logscale x 2
set logscale y 10
set format y '10^{%L}'
set format x '2^{%L}'
set grid xtics ytics mytics
set key outside right top noenhanced
stats datafile using 1 nooutput
ncases = (STATS_columns - 2) / 3
set yrange [1e-4:1]
plot for [k=0:ncases-1] datafile using 1:(column(2 + 3*k)) with points linecolor (k + 1) \
        pointtype (k + 4) pointsize 1.3 title columnheader(2 + 3*k), \
     for [k=0:ncases-1] datafile using 1:(column(3 + 3*k)) with lines linecolor (k + 1) \
        linewidth 2 dashtype 1 title columnheader(3 + 3*k), \
     for [k=0:ncases-1] datafile using 1:(column(4 + 3*k)) with lines linecolor (k + 1) \
        linewidth 1 dashtype 2 title columnheader(4 + 3*k), \
     datafile using 1:(column(STATS_columns)) with lines linecolor rgb 'black' dashtype 3 \
        title columnheader(STATS_columns)
