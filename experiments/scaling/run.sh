#!/bin/sh
# experiments/scaling/run.sh -- distributed campaigns on MPI, emulated:
# replay --mpi of a hub T4 recording (each evaluation sleeps its recorded
# cost, scaled) at 1, 2, 4 and 8 worker ranks, oversubscribed on this
# machine (the workers sleep), and the batch rule's loss in score against
# the sequential run over seeds (README.md: the question, the method, how
# to read the result). Run it as
#   rooftune experiment run scaling [--quick] [-- [--seeds N] [--budget B] [--scale F]
#                                   [--strategies A,B,...] [T4FILE]]
# Everything it writes goes under $RT_OUT.
. "$RT_ROOT/experiments/lib.sh"
export LC_ALL=C

if [ "$RT_QUICK" = 1 ]; then NSEEDS=3 BUDGET=48 SCALE=0.02 WORKERS="1 2 4"; else NSEEDS=10 BUDGET=256 SCALE=0.1 WORKERS="1 2 4 8"; fi
STRATS="random annealing genetic bayes bandit"
die() { echo "scaling: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --seeds|--budget|--scale|--strategies)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in --seeds) NSEEDS=$2 ;; --budget) BUDGET=$2 ;; --scale) SCALE=$2 ;;
                 --strategies) STRATS=$(echo "$2" | tr , ' ') ;; esac
      shift 2 ;;
    --) shift ;;
    -*) die "unknown option $1 (README.md lists them)" ;;
    *) break ;;
  esac
done
T4=${1:-$RT_ROOT/data/t4/pnpoly_RTX_3090_T4.json.gz}
[ -r "$T4" ] || die "$T4: not readable"
MPIRUN=$(command -v mpirun) || die "mpirun is missing (Debian: openmpi-bin; the README's package list)"
[ "$(id -u)" -eq 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MAXW=$(echo $WORKERS | awk '{ print $NF }')
# the batch-rule comparison: short sleeps (only their order matters there)
SCALE2=$(awk -v s="$SCALE" 'BEGIN { printf "%g", s / 5 }')
SEEDS="scaling: seed 1; the batch rule: seeds 1..$NSEEDS, sequential and at $MAXW workers"
ENV_FIXED="LC_ALL=C; mpirun --oversubscribe (the worker ranks sleep, so more ranks than cores is the point)"

# mpi N ARGS: rooftune ARGS under mpirun -n N, logged
mpi() {
  n=$1
  shift
  log mpirun --oversubscribe -n "$n" rooftune "$@"
  "$MPIRUN" --oversubscribe -n "$n" "$ROOFTUNE" "$@"
}
# field NAME: the number after "NAME": in the JSON line on stdin
field() { sed -n "s/.*\"$1\": *\([^,}]*\).*/\1/p"; }

report_begin "Distributed campaigns on MPI: scaling and the batch rule (emulated)"

# ---- 1. scaling: wall time at 1..8 workers, seed 1 ----
echo "strategy,workers,asynchronous,evaluations,slept_s,wall_s,score" > "$RT_OUT/scaling.csv"
for s in $STRATS; do
  for w in $WORKERS; do
    j=$(mpi $((w + 1)) replay --t4 "$T4" --strategy "$s" --budget "$BUDGET" --seed 1 --mpi \
          --sleep-scale "$SCALE" --json)
    printf '%s,%s,%s,%s,%s,%s,%s\n' "$s" "$w" "$(echo "$j" | field asynchronous)" \
      "$(echo "$j" | field evaluations)" "$(echo "$j" | field slept_s)" "$(echo "$j" | field wall_s)" \
      "$(echo "$j" | field score)" >> "$RT_OUT/scaling.csv"
  done
done
# efficiency against 1 worker: wall(1) / (w * wall(w)); against the sleep: slept / (w * wall)
awk -F, 'NR > 1 { if ($2 == 1) one[$1] = $6; n[NR] = $0 }
         END { print "strategy,workers,asynchronous,wall_s,speedup,efficiency,sleep_efficiency"
               for (i = 2; i <= NR; i++) { split(n[i], f, ","); w = f[2]
                 printf "%s,%d,%s,%.3f,%.2f,%.3f,%.3f\n", f[1], w, f[3], f[6], one[f[1]] / f[6],
                        one[f[1]] / (w * f[6]), f[5] / (w * f[6]) } }' "$RT_OUT/scaling.csv" \
  > "$RT_OUT/efficiency.csv"

# ---- 2. the batch rule: score at the same budget, sequential against MAXW workers ----
echo "strategy,seed,score_sequential,score_parallel" > "$RT_OUT/batch.csv"
for s in $STRATS; do
  i=1
  while [ $i -le "$NSEEDS" ]; do
    a=$(rt replay --t4 "$T4" --strategy "$s" --budget "$BUDGET" --seed $i --json | field score)
    b=$(mpi $((MAXW + 1)) replay --t4 "$T4" --strategy "$s" --budget "$BUDGET" --seed $i --mpi \
          --sleep-scale "$SCALE2" --json | field score)
    echo "$s,$i,$a,$b" >> "$RT_OUT/batch.csv"
    i=$((i + 1))
  done
done
awk -F, 'NR > 1 { n[$1]++; a[$1] += $3; b[$1] += $4; d = $3 - $4; l[$1] += d; l2[$1] += d * d
                  if (!($1 in o)) o[$1] = ++k; name[o[$1]] = $1 }
         END { print "strategy,seeds,score_sequential,score_parallel,loss_mean,loss_sd"
               for (i = 1; i <= k; i++) { s = name[i]; m = l[s] / n[s]
                 sd = n[s] > 1 ? sqrt((l2[s] - n[s] * m * m) / (n[s] - 1)) : 0
                 printf "%s,%d,%.3f,%.3f,%.3f,%.3f\n", s, n[s], a[s] / n[s], b[s] / n[s], m, sd } }' \
  "$RT_OUT/batch.csv" > "$RT_OUT/batch_summary.csv"

# ---- the report ----
{
  echo "plot \\"
  sep=
  for s in $STRATS; do
    printf "%s'%s' using 2:(strcol(1) eq '%s' ? \$6 : 1/0) with linespoints lw 2 title '%s'" "$sep" \
      "$RT_OUT/efficiency.csv" "$s" "$s"
    sep=", \\
  "
  done
  echo
} > "$RT_OUT/.plot_lines"
{
  echo "set datafile separator ','"
  echo "set key bottom left"
  echo "set xlabel 'worker ranks'"
  echo "set ylabel 'efficiency against 1 worker'"
  echo "set yrange [0:1.1]"
  echo "set logscale x 2"
  echo "set grid"
  cat "$RT_OUT/.plot_lines"
} | plot efficiency
rm -f "$RT_OUT/.plot_lines"

table() {   # a CSV file as a markdown table
  awk -F, 'NR == 1 { printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; printf "\n|"
                     for (i = 1; i <= NF; i++) printf "---|"; printf "\n"; next }
           { printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; printf "\n" }' "$1"
}
report "## Scaling

\`replay --mpi\` of \`$(basename "$T4")\`, budget $BUDGET, seed 1, every evaluation
sleeping its recorded cost x $SCALE on a worker rank; rank 0 runs the strategy
(random, annealing and genetic asynchronously, bayes and bandit in batches as
wide as the workers by the constant liar). Efficiency is wall(1) / (w x wall(w));
sleep efficiency is the emulated cost / (w x wall)."
report "$(table "$RT_OUT/efficiency.csv")"
figure efficiency "Efficiency against 1 worker rank, by strategy"
report "## The batch rule's loss in score

The score of Willemsen et al. (0: random search's expectation, 1: the optimum
from the first evaluation) of each run at the same budget ($BUDGET evaluations),
sequential (\`replay\`) against $MAXW workers (\`replay --mpi\`, sleeps x $SCALE2),
over seeds 1..$NSEEDS; loss = sequential - parallel (positive: parallel is worse),
its mean and sample standard deviation over the seeds."
report "$(table "$RT_OUT/batch_summary.csv")"
report_end
