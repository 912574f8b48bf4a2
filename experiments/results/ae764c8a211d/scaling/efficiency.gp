set datafile separator ','
set key bottom left
set xlabel 'worker ranks'
set ylabel 'efficiency against 1 worker'
set yrange [0:1.1]
set logscale x 2
set grid
plot \
'/work/wt/mpi/experiments/results/ae764c8a211d/scaling/efficiency.csv' using 2:(strcol(1) eq 'random' ? $6 : 1/0) with linespoints lw 2 title 'random', \
  '/work/wt/mpi/experiments/results/ae764c8a211d/scaling/efficiency.csv' using 2:(strcol(1) eq 'annealing' ? $6 : 1/0) with linespoints lw 2 title 'annealing', \
  '/work/wt/mpi/experiments/results/ae764c8a211d/scaling/efficiency.csv' using 2:(strcol(1) eq 'genetic' ? $6 : 1/0) with linespoints lw 2 title 'genetic', \
  '/work/wt/mpi/experiments/results/ae764c8a211d/scaling/efficiency.csv' using 2:(strcol(1) eq 'bayes' ? $6 : 1/0) with linespoints lw 2 title 'bayes', \
  '/work/wt/mpi/experiments/results/ae764c8a211d/scaling/efficiency.csv' using 2:(strcol(1) eq 'bandit' ? $6 : 1/0) with linespoints lw 2 title 'bandit'
