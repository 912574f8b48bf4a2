set title "reduction: predicted against measured time, 40 held-out schedules (split 1)"
set logscale xy
set format x '%.0e'; set format y '%.0e'
set xlabel 'measured time (s)'; set ylabel 'predicted time (s)'
set key top left box opaque
set grid
plot '/work/main/experiments/results/34f2c7239ccb/fidelity/scatter_reduction.dat' index 0 using 1:2 with points pt 7 ps 0.7 lc rgb '#999999' title 'defaults',      '' index 1 using 1:2 with points pt 5 ps 0.6 lc rgb '#1f77b4' title 'calibrated: time terms',      '' index 2 using 1:2 with points pt 8 ps 1.2 lc rgb '#d62728' title 'calibrated: time + counted traffic',      x with lines dt 2 lc rgb 'black' title 'predicted = measured'
