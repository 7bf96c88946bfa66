# plot.gp: run in the output directory (run.sh does): speedup.dat, breakdown.dat -> fp8_linear_speed.png
set terminal pngcairo size 1500,620 font ",11" noenhanced
set output "fp8_linear_speed.png"
set multiplot layout 1,2
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.9 border -1
set boxwidth 0.9
set grid ytics
set key below font ",9" maxrows 4
set title "FP8 vs BF16 linear layers, Llama-3.1-8B, 8192 tokens (H200, cuBLASLt); green band: NeMo RL 1.15-1.25x"
set ylabel "speedup vs BF16 GEMM (x)"
set yrange [0:*]
set object 1 rect from graph 0, first 1.15 to graph 1, first 1.25 fc rgb "#9ad29a" fs solid 0.5 noborder behind
plot "speedup.dat" using 2:xtic(1) title "per-tensor: GEMM" lc rgb "#1f4e9e", \
     "" using 3 title "per-tensor: step (quantize X, W, recalibrate)" lc rgb "#4a7fd0", \
     "" using 4 title "per-tensor: W cached" lc rgb "#8fb5ea", \
     "" using 5 title "per-tensor: step, quantizers at copy roofline (est.)" lc rgb "#d3e3f7", \
     "" using 6 title "block 1x128 x 128x128: GEMM" lc rgb "#b34700", \
     "" using 7 title "block: step (quantize X, W)" lc rgb "#e0701f", \
     "" using 8 title "block: W cached" lc rgb "#f2a766", \
     "" using 9 title "block: step, quantizers at copy roofline (est.)" lc rgb "#f9dcc0", \
     1 with lines lc rgb "black" dt 2 notitle
unset object 1
set title "where the time goes, all four layers (per-tensor quantizers include their amax pass)"
set ylabel "ms"
set style histogram rowstacked
plot "breakdown.dat" using 2:xtic(1) title "GEMM" lc rgb "#555555", "" using 3 title "quantize X" lc rgb "#4a7fd0", \
     "" using 4 title "quantize W"  lc rgb "#e0701f"
unset multiplot
