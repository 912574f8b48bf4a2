#!/bin/sh
# run.sh [BUILD [OUT]] -- the cost model's quality figures (issue 6), measured
# on this machine into one database, OUT/cost_model.db:
#
#  1. the ceilings (rooftune bench --force);
#  2. calibration samples: random schedules of each kernel's whole space at
#     one or two workloads (gemm at 512^3 and 1024^3, 300 each);
#  3. calibration of every kernel model on its samples, 30% held out (seed
#     1), with 6 (gemm) or 2 schedules counted by cachegrind; accuracy on
#     the held-out schedules per workload, before (defaults) and after;
#  4. fully measured spaces at other workloads (gemm 768^3 on a 352-schedule
#     slice, reduction, stencil, transpose and conv2d slices), then a
#     comparison in replay: the model-guided strategy (starting from the
#     calibration of step 3, made on other workloads) against random search
#     and the model-free strategies, 20 seeds, and the trials each needs to
#     come within 5% of the space's best (summarise.py).
#
# Every step prints what it ran; the calibrations go to OUT/calibrate_*.json,
# the comparisons to OUT/<kernel>/ (compare.txt, curves.csv.gz, scores.csv), and
# OUT/summary.md gathers them in tables (summarise.py). A second run
# measures nothing already measured (trials are reused by source) and
# recomputes the tables; the campaigns' seeds are fixed.
set -eu
B=${1:-build}
OUT=${2:-experiments/cost_model/results}
RT="$B/rooftune"
DB="$OUT/cost_model.db"
CAP=0.3                      # seconds of timing per schedule
export OPENBLAS_CORETYPE=SkylakeX
mkdir -p "$OUT"
run() { echo "+ $*" >&2; "$@"; }
# This machine's fingerprint: the calibrations and comparisons below are of
# what this run measured here (OUT's database may hold other machines' trials).
FP=$("$RT" targets --json | python3 -c 'import json, sys
print(next(t["fingerprint"] for t in json.load(sys.stdin) if t["name"] == "host"))')

# 1. ceilings (re-measured unless KEEP_CEILINGS is set)
if [ -z "${KEEP_CEILINGS:-}" ]; then
  run "$RT" bench --db "$DB" --force > "$OUT/ceilings.txt"
fi

# 2. calibration samples: KERNEL SET SAMPLES
samples() {
  run "$RT" tune --db "$DB" --kernel "$1" --set "$2" --strategy random --budget "$3" --seed 7 \
    --time-cap $CAP --no-pin > /dev/null
}
samples gemm M=512,N=512,K=512 300
samples gemm M=1024,N=1024,K=1024 300
samples reduction N=1000000 150
samples stencil NX=512,NY=512,STEPS=4 150
samples transpose M=1024,N=1024 150
samples conv2d N=1,H=28,W=28,C=64,K=64,R=3,S=3 150

# 3. calibration and accuracy on held-out schedules (per workload, in the
#    calibration's JSON)
run "$RT" model calibrate --db "$DB" --fingerprint "$FP" --kernel gemm --set M=512,N=512,K=512 \
  --set M=1024,N=1024,K=1024 --holdout 0.3 --seed 1 --counters 6 --json > "$OUT/calibrate_gemm.json"
for ks in reduction:N=1000000 stencil:NX=512,NY=512,STEPS=4 transpose:M=1024,N=1024 \
          conv2d:N=1,H=28,W=28,C=64,K=64,R=3,S=3; do
  k=${ks%%:*} s=${ks#*:}
  run "$RT" model calibrate --db "$DB" --fingerprint "$FP" --kernel $k --set $s --holdout 0.3 --seed 1 --counters 2 \
    --json > "$OUT/calibrate_$k.json"
done

# 4. fully measured spaces and the search comparison: KERNEL SET SPACE
full() {
  run "$RT" tune --db "$DB" --kernel "$1" --set "$2" --space "$3" --strategy exhaustive \
    --budget 100% --time-cap $CAP --no-pin > /dev/null
  mkdir -p "$OUT/$1"
  run "$RT" compare --db "$DB" --fingerprint "$FP" --kernel "$1" --set "$2" --space "$3" \
    --strategies model,random,annealing,genetic --budget 100% --repeats 20 \
    --csv "$OUT/$1" > "$OUT/$1/compare.txt"
  gzip -f -9 "$OUT/$1/curves.csv"
}
full gemm M=768,N=768,K=768 experiments/spaces/gemm_slice.json
full reduction N=4000000 targets/host/reduction.json
full stencil NX=1024,NY=1024,STEPS=4 targets/host/stencil.json
full transpose M=2048,N=2048 experiments/spaces/transpose_slice.json
full conv2d N=1,H=56,W=56,C=64,K=64,R=3,S=3 experiments/spaces/conv2d_slice.json

python3 experiments/cost_model/summarise.py "$OUT" > "$OUT/summary.md"
cat "$OUT/summary.md"
