# mismatch_seqlen.gp: per-sequence mult_prob_error - 1 against the number of scored tokens.
#   gnuplot -e "datadir='D'; nconfigs=N; titles='a b'; outfile='O'; fmt='png'; common='C'; allzero=0" mismatch_seqlen.gp
# One file per configuration, D/mismatch_seqlen_C.dat for C = 0 .. N - 1, with rows
# "scored_tokens seq_mult_prob_error-1".
load common
set title 'per-sequence mismatch vs response length' noenhanced
set xlabel 'scored tokens in the sequence'
set ylabel 'seq mult\_prob\_error - 1'
# allzero=1: no sequence differs (identical engines), so a linear y axis shows the zeros
if (!exists("allzero")) allzero = 0
if (allzero) {
    set yrange [-0.1:1]
    set label 1 'g = p on every scored token' at graph 0.5, 0.6 center
} else {
    set logscale y
    set format y '10^{%L}'
}
plot for [i=1:nconfigs] sprintf('%s/mismatch_seqlen_%d.dat', datadir, i - 1) using 1:(allzero || $2 > 0 ? $2 : 1/0) with points pt 7 ps 0.6 title word(titles, i)
