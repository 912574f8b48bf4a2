set termoption noenhanced
set title 'Optimum of the source GPU on the target GPU, as a fraction of the target''s optimum'
set xlabel 'target GPU'; set ylabel 'source GPU (whose optimum is used)'
set xrange [-0.5:2 - 0.5]; set yrange [2 - 0.5:-0.5]; set cbrange [0:1]
set palette defined (0 '#b2182b', 0.5 '#fddbc7', 0.8 '#d1e5f0', 1 '#2166ac'); set cblabel 'fraction of the target''s optimum'
set xtics ("H200" 0, "A100" 1)
set ytics ("H200" 0, "A100" 1)
unset key; set size ratio -1
plot '/work/main/experiments/results/h200/t1/exhaustive/dedispersion/portability/heatmap.dat' using 1:2:3 with image, '' using 1:2:4 with labels font ',14'
