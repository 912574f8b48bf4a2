#!/bin/sh
# side_by_side.sh [BUILD] [REPEATS] [KT_RESULTS] -- rooftune's strategies on
# the same four recordings, budget (5%) and seeds (1..REPEATS, default 10 as
# run_kt.py) as Kernel Tuner's, through `rooftune compare`, into
# results/rooftune_<REPEATS>seeds/<file>/; then the side-by-side table
# results/side_by_side_<REPEATS>seeds.md against KT_RESULTS/runs.csv
# (default results/, written by run_kt.py). Run from the project root.
set -eu
build=${1:-build}
reps=${2:-10}
kt=${3:-experiments/kt_compare/results}
out=experiments/kt_compare/results/rooftune_${reps}seeds
mkdir -p "$out"
for f in convolution_milo_A100 convolution_milo_A4000 dedispersion_milo_A100 pnpoly_RTX_3090; do
  case $f in conv*) s=convolution_milo ;; dedisp*) s=dedispersion_milo ;; *) s=pnpoly ;; esac
  "$build/rooftune" compare --t4 "data/t4/${f}_T4.json.gz" --space "data/t1/$s.json" \
    --strategies all --budget 5% --repeats "$reps" --seed 1 --csv "$out/$f" > "$out/$f.txt"
  gzip -f "$out/$f/curves.csv"
  cat "$out/$f.txt"
done
python3 experiments/kt_compare/side_by_side.py "$reps" "$out" "$kt/runs.csv" \
  > "experiments/kt_compare/results/side_by_side_${reps}seeds.md"
cat "experiments/kt_compare/results/side_by_side_${reps}seeds.md"
