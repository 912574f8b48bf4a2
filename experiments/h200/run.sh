#!/bin/sh
# experiments/h200/run.sh PHASE OUT -- rooftune's campaigns on the H200,
# run through the device tool from the repository root of a working tree
# that carries build/device-bundle (make device-bundle). Each phase fits
# one device call (under 10 minutes); the database travels between calls
# in experiments/results/h200/h200.db and comes back under OUT.
#
#   smoke  the target, the GPU tests, the ceilings, every kernel's default
#          schedule with counters, cuBLAS, and a random sample of gemm
#          schedules with counters (the calibration data)
#   gemm   the model-guided gemm campaign at 4096^3 with counters
#   mem    the memory-bound kernels (reduction, transpose, stencil)
#
# Everything is measured with the L2 flushed between repeats (--flush).
set -u
phase=$1 out=$2
B=build/device-bundle
RT="$B/bin/rooftune"
DB=experiments/results/h200/h200.db
mkdir -p experiments/results/h200 "$out"
export ROOFTUNE_CACHE=/tmp/rt-cache
log="$out/$phase.log"
step() {   # step SECONDS NAME COMMAND...: run, log, keep going
  lim=$1 name=$2
  shift 2
  echo "=== $name ($(date -u +%T))" | tee -a "$log"
  timeout "$lim" "$@" >>"$log" 2>&1
  echo "=== $name: exit $? ($(date -u +%T))" | tee -a "$log"
}
G="M=4096,N=4096,K=4096"
case $phase in
smoke)
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,driver_version --format=csv >"$out/nvidia-smi.txt" 2>&1
  step 20 targets "$RT" targets
  for t in test_gd test_ms_cuda test_ms_cupti test_cm_bench_cuda; do
    step 120 "$t" "$B/tests/$t"
  done
  step 120 bench "$RT" bench --target cuda:0 --db "$DB"
  step 60 cublas "$RT" baseline --target cuda:0 --kernel gemm --set "$G" --flush --json
  for w in "gemm $G" "reduction N=268435456" "transpose M=16384,N=16384" "stencil NX=16382,NY=16382,STEPS=4"; do
    set -- $w
    step 60 "default $1" "$RT" measure --target cuda:0 --kernel "$1" --set "$2" --config default --flush --counters --json
  done
  step 240 "gemm random" "$RT" tune --target cuda:0 --kernel gemm --set "$G" --strategy random --budget 60 --seed 7 --flush --counters --no-pin --db "$DB"
  ;;
gemm)
  step 540 "gemm model" "$RT" tune --target cuda:0 --kernel gemm --set "$G" --strategy model --budget 200 --flush --counters --db "$DB"
  ;;
mem)
  step 170 reduction "$RT" tune --target cuda:0 --kernel reduction --set N=268435456 --strategy model --budget 60 --flush --counters --db "$DB"
  step 170 transpose "$RT" tune --target cuda:0 --kernel transpose --set M=16384,N=16384 --strategy model --budget 60 --flush --counters --db "$DB"
  step 170 stencil "$RT" tune --target cuda:0 --kernel stencil --set NX=16382,NY=16382,STEPS=4 --strategy model --budget 60 --flush --counters --db "$DB"
  ;;
*) echo "usage: $0 smoke|gemm|mem OUT" >&2; exit 2 ;;
esac
cp "$DB" "$out/" 2>/dev/null
tail -n 60 "$log"
