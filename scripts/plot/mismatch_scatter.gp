# mismatch_scatter.gp: |g - p| against the generator's probability exp(g), log x (the mismatch
# concentrates on low-probability tokens: Liu/Li, DVP). One point set per configuration.
#   gnuplot -e "datadir='D'; nconfigs=N; titles='a b'; outfile='O'; fmt='png'; common='C'; allzero=0" mismatch_scatter.gp
# One file per configuration, D/mismatch_scatter_C.dat for C = 0 .. N - 1, with rows
# "exp(g) |g - p|" of the scored tokens.
load common
set title '|g - p| vs generator probability' noenhanced
set xlabel 'generator probability exp(g)'
set ylabel '|g - p| (nats)'
set logscale x
set format x '10^{%L}'
# allzero=1: no token differs (identical engines), so a linear y axis shows the zeros
if (!exists("allzero")) allzero = 0
if (allzero) {
    set yrange [-0.1:1]
    set label 1 'g = p on every scored token' at graph 0.5, 0.6 center
} else {
    set logscale y
    set format y '10^{%L}'
}
plot for [i=1:nconfigs] sprintf('%s/mismatch_scatter_%d.dat', datadir, i - 1) using 1:(allzero || $2 > 0 ? $2 : 1/0) with points pt 7 ps 0.4 title word(titles, i)
