set title "Tuned host kernels on the roofline of this machine (full run)" noenhanced
set logscale xy
set xrange [0.05:200]
set yrange [0.1:975.257]
set xlabel "arithmetic intensity (flops / compulsory byte)"
set ylabel "GFLOP/s (best schedule; bars: 95% CI of its median time)"
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4'
set key bottom right box opaque noenhanced
set samples 1000
peak = 325085785921.297 * 1e-9
roof(x, bw) = (x * bw < peak ? x * bw : peak)
plot roof(x, 518764947496.6 * 1e-9) lw 2 lc rgb '#56B4E9' title sprintf("L1 %.0f GB/s", 518764947496.6 * 1e-9),      roof(x, 235267980184.72 * 1e-9) lw 2 lc rgb '#009E73' title sprintf("L2 %.0f GB/s", 235267980184.72 * 1e-9),      roof(x, 48264912924.0288 * 1e-9) lw 2 lc rgb '#E69F00' title sprintf("L3 %.1f GB/s", 48264912924.0288 * 1e-9),      roof(x, 29052628285.6091 * 1e-9) lw 2 lc rgb '#D55E00' title sprintf("DRAM %.1f GB/s", 29052628285.6091 * 1e-9),      peak lw 2 dt 2 lc rgb '#000000' title sprintf("FP32 peak %.0f GFLOP/s", peak),      '/work/main/experiments/results/34f2c7239ccb/roofline/points.dat' using 2:3:4:5 with yerrorbars pt 7 ps 1.3 lc rgb '#C0306A' title "best schedule of each kernel",      '' using 2:3:6 with labels offset 0,1.2 noenhanced notitle
