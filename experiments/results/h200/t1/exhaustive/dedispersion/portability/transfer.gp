set termoption noenhanced
set title 'Each configuration of the source by its rank there, on the target'
set xlabel 'rank on the source GPU (1 = its optimum)'; set logscale x
set ylabel 'fraction of the target''s optimum on the target'; set yrange [0:1.02]; set grid
set key top right
plot '/work/main/experiments/results/h200/t1/exhaustive/dedispersion/portability/transfer.dat' index 0 using 1:2 with points pt 7 ps 0.4 title 'H200 -> A100', '/work/main/experiments/results/h200/t1/exhaustive/dedispersion/portability/transfer.dat' index 1 using 1:2 with points pt 7 ps 0.4 title 'A100 -> H200'
