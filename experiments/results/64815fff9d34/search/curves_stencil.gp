set title "stencil (NX=1024 NY=1024 STEPS=4): 306 schedules, 20 runs per strategy"
set logscale x
set xrange [1:306]; set yrange [0:1.02]
set xlabel 'trials'; set ylabel 'optimum time / best time so far'
set key bottom right box opaque
set grid
set style fill transparent solid 0.18 noborder
plot 1/1.05 with lines dt 2 lc rgb 'black' title 'within 5% of the optimum', \
  '/tmp/srch_all/curves_stencil.dat' index 0 using 1:2:4 with filledcurves lc rgb '#d62728' notitle, \
  '' index 0 using 1:3 with lines lw 2 lc rgb '#d62728' title 'model', \
  '/tmp/srch_all/curves_stencil.dat' index 1 using 1:2:4 with filledcurves lc rgb '#555555' notitle, \
  '' index 1 using 1:3 with lines lw 2 lc rgb '#555555' title 'random', \
  '/tmp/srch_all/curves_stencil.dat' index 2 using 1:2:4 with filledcurves lc rgb '#ff7f0e' notitle, \
  '' index 2 using 1:3 with lines lw 2 lc rgb '#ff7f0e' title 'bayes', \
  '/tmp/srch_all/curves_stencil.dat' index 3 using 1:2 with lines dt 3 lw 2 lc rgb '#555555' title 'random, expected (calculated)'
