# mismatch_scatter.gp: |g - p| against the generator's probability exp(g), log x (the mismatch
# concentrates on low-probability tokens: Liu/Li, DVP). One point set per configuration.
#   gnuplot -e "files='A B'; titles='a b'; outfile='O'; fmt='png'; common='C'" mismatch_scatter.gp
# Each file: rows "exp(g) |g - p|" of the scored tokens.
load common
set title '|g - p| vs generator probability' noenhanced
set xlabel 'generator probability exp(g)'
set ylabel '|g - p| (nats)'
set logscale x
set logscale y
set format x '10^{%L}'
set format y '10^{%L}'
plot for [i=1:words(files)] word(files, i) using 1:($2 > 0 ? $2 : 1/0) with points pt 7 ps 0.4 title word(titles, i)
