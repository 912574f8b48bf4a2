set title "OpenBLAS sgemm time / tuned gemm time per shape, median of 3 repeats (above 1: the tuned kernel is faster)" noenhanced
set ylabel "OpenBLAS / tuned (bars: the 95% CIs' extremes over the repeats)"
set xtics ("256x256x256" 0, "512x512x512" 1, "768x768x768" 2, "1024x1024x1024" 3, "2048x64x2048" 4, "64x2048x2048" 5, "2048x2048x64" 6, "1000x777x333" 7, "127x255x511" 8) rotate by -35 noenhanced
set xrange [-0.6:8.6]
set yrange [0:*]
set grid ytics lc rgb '#e4e4e4'
set style fill solid 0.6
set boxwidth 0.6
set key top right box opaque
plot '/work/main/experiments/results/34f2c7239ccb/vendor/ratio.dat' using 1:2 with boxes lc rgb '#0072B2' title "OpenBLAS / tuned (median)",      '' using 1:2:3:4 with yerrorbars pt -1 lc rgb '#000000' notitle,      1 lw 2 dt 2 lc rgb '#D55E00' title "parity"
