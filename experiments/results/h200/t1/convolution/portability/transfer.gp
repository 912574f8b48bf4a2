set termoption noenhanced
set title 'Each configuration of the source by its rank there, on the target'
set xlabel 'rank on the source GPU (1 = its optimum)'; set logscale x
set ylabel 'fraction of the target''s optimum on the target'; set yrange [0:1.02]; set grid
set key top right
plot '/root/out/convolution/portability/transfer.dat' index 0 using 1:2 with points pt 7 ps 0.4 title 'H200 -> A100', '/root/out/convolution/portability/transfer.dat' index 1 using 1:2 with points pt 7 ps 0.4 title 'H200 -> A4000', '/root/out/convolution/portability/transfer.dat' index 2 using 1:2 with points pt 7 ps 0.4 title 'A100 -> H200', '/root/out/convolution/portability/transfer.dat' index 3 using 1:2 with points pt 7 ps 0.4 title 'A100 -> A4000', '/root/out/convolution/portability/transfer.dat' index 4 using 1:2 with points pt 7 ps 0.4 title 'A4000 -> H200', '/root/out/convolution/portability/transfer.dat' index 5 using 1:2 with points pt 7 ps 0.4 title 'A4000 -> A100'
