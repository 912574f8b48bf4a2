set title "Compulsory bytes per second of each tuned kernel against the read-bandwidth ceilings" noenhanced
set logscale y
set yrange [0.1:6225.18]
set xrange [-0.6:4.6]
set ylabel "GB/s (compulsory bytes / median time; bars: 95% CI)"
set xtics ("gemm" 0, "conv2d" 1, "stencil" 2, "transpose" 3, "reduction" 4) noenhanced
set grid ytics lc rgb '#e4e4e4'
set key top right box opaque
set style fill solid 0.6
set boxwidth 0.5
plot '/work/main/experiments/results/34f2c7239ccb/roofline/bandwidth.dat' using 1:2 with boxes lc rgb '#C0306A' title "best schedule",      '' using 1:2:3:4 with yerrorbars pt -1 lc rgb '#000000' notitle,      518764947496.6 * 1e-9 lw 2 lc rgb '#56B4E9' title "L1", 235267980184.72 * 1e-9 lw 2 lc rgb '#009E73' title "L2",      48264912924.0288 * 1e-9 lw 2 lc rgb '#E69F00' title "L3", 29052628285.6091 * 1e-9 lw 2 lc rgb '#D55E00' title "DRAM"
