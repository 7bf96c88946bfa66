set terminal pngcairo size 1400,560 font ",10"
set output "accum_vs_k.png"
set multiplot layout 1,2
set logscale xy
set xlabel "K"
set ylabel "relative error vs fp64"
set key top left
set grid
set format y "10^{%L}"
set xtics (256,1024,4096,16384)
set xrange [200:20000]
set title "FP8 E4M3 GEMM 64x64xK, gaussian data: solid = rel. Frobenius, dashed = max elementwise"
plot "plotdata/gaussian_fp32.dat" u 1:2 w lp lc 1 pt 4 title "fp32", "plotdata/gaussian_fp32.dat" u 1:3 w l lc 1 dt 2 notitle, "plotdata/gaussian_hopper-qgmma_fast.dat" u 1:2 w lp lc 2 pt 5 title "hopper-qgmma:fast", "plotdata/gaussian_hopper-qgmma_fast.dat" u 1:3 w l lc 2 dt 2 notitle, "plotdata/gaussian_hopper-qgmma_promote128.dat" u 1:2 w lp lc 3 pt 6 title "hopper-qgmma:promote=128", "plotdata/gaussian_hopper-qgmma_promote128.dat" u 1:3 w l lc 3 dt 2 notitle, "plotdata/gaussian_mma-sync-fp8.dat" u 1:2 w lp lc 4 pt 7 title "mma-sync-fp8", "plotdata/gaussian_mma-sync-fp8.dat" u 1:3 w l lc 4 dt 2 notitle, "plotdata/gaussian_h200-cublaslt-fast.dat" u 1:2 w lp lc 5 pt 8 title "h200-cublaslt-fast", "plotdata/gaussian_h200-cublaslt-fast.dat" u 1:3 w l lc 5 dt 2 notitle, "plotdata/gaussian_h200-cublaslt-nonfast.dat" u 1:2 w lp lc 6 pt 9 title "h200-cublaslt-nonfast", "plotdata/gaussian_h200-cublaslt-nonfast.dat" u 1:3 w l lc 6 dt 2 notitle
set title "FP8 E4M3 GEMM 64x64xK, positive data: solid = rel. Frobenius, dashed = max elementwise"
plot "plotdata/positive_fp32.dat" u 1:2 w lp lc 1 pt 4 title "fp32", "plotdata/positive_fp32.dat" u 1:3 w l lc 1 dt 2 notitle, "plotdata/positive_hopper-qgmma_fast.dat" u 1:2 w lp lc 2 pt 5 title "hopper-qgmma:fast", "plotdata/positive_hopper-qgmma_fast.dat" u 1:3 w l lc 2 dt 2 notitle, "plotdata/positive_hopper-qgmma_promote128.dat" u 1:2 w lp lc 3 pt 6 title "hopper-qgmma:promote=128", "plotdata/positive_hopper-qgmma_promote128.dat" u 1:3 w l lc 3 dt 2 notitle, "plotdata/positive_mma-sync-fp8.dat" u 1:2 w lp lc 4 pt 7 title "mma-sync-fp8", "plotdata/positive_mma-sync-fp8.dat" u 1:3 w l lc 4 dt 2 notitle, "plotdata/positive_h200-cublaslt-fast.dat" u 1:2 w lp lc 5 pt 8 title "h200-cublaslt-fast", "plotdata/positive_h200-cublaslt-fast.dat" u 1:3 w l lc 5 dt 2 notitle, "plotdata/positive_h200-cublaslt-nonfast.dat" u 1:2 w lp lc 6 pt 9 title "h200-cublaslt-nonfast", "plotdata/positive_h200-cublaslt-nonfast.dat" u 1:3 w l lc 6 dt 2 notitle
unset multiplot
