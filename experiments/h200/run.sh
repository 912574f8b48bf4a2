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
#   main   the GPU tests, the ceilings, cuBLAS and every kernel's default
#          with counters, the gemm model calibrated on the random sample,
#          then the model-guided gemm campaign at 4096^3 with counters
#   gemm   the model-guided gemm campaign at 4096^3 with counters
#   mem    the memory-bound kernels (reduction, transpose, stencil)
#   backends  issue 17's check after the backend table: the GPU tests and
#          test_opencl, the targets (NVIDIA's OpenCL among them), and on
#          cuda:0 and on NVIDIA's OpenCL device (OCL, default opencl:1.0)
#          the ceilings, a model-guided reduction and transpose campaign
#          each, and model explain of the winners, into backends.db
#   pins   the GPU tests, then the two 40-trial model-guided gemm campaigns
#          that once pinned a schedule slower than the default (2048^3 and
#          8192x8192x128), again under the conservative-pin rule, into
#          pins.db (a copy of h200.db: its ceilings and calibrations)
# A step interrupted at the call's deadline stops like Ctrl-C: a campaign
# keeps what it stored and can be resumed (tune --resume).
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
end=$(( $(date +%s) + ${BUDGET_S:-550} ))   # the call's 10 minutes, with room to copy back
step() {   # step SECONDS NAME COMMAND...: run (within what is left), log, keep going
  lim=$1 name=$2
  shift 2
  left=$(( end - $(date +%s) ))
  [ "$left" -lt "$lim" ] && lim=$left
  if [ "$lim" -le 5 ]; then echo "=== $name: skipped, no time left" | tee -a "$log"; return; fi
  echo "=== $name (limit ${lim}s, $(date -u +%T))" | tee -a "$log"
  timeout -s INT -k 10 "$lim" "$@" >>"$log" 2>&1
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
main)
  for t in test_gd test_ms_cuda test_cm_bench_cuda; do
    step 60 "$t" "$B/tests/$t"
  done
  step 90 bench "$RT" bench --target cuda:0 --db "$DB"
  step 30 cublas "$RT" baseline --target cuda:0 --kernel gemm --set "$G" --flush --json
  for w in "gemm $G" "reduction N=268435456" "transpose M=16384,N=16384" "stencil NX=16382,NY=16382,STEPS=4"; do
    set -- $w
    step 40 "default $1" "$RT" measure --target cuda:0 --kernel "$1" --set "$2" --config default --flush --counters --json
  done
  step 60 "calibrate gemm" "$RT" model calibrate --target cuda:0 --kernel gemm --set "$G" --flush --db "$DB"
  step 400 "gemm model" "$RT" tune --target cuda:0 --kernel gemm --set "$G" --strategy model --budget 150 --flush --counters --db "$DB"
  ;;
gemm)
  step 540 "gemm model" "$RT" tune --target cuda:0 --kernel gemm --set "$G" --strategy model --budget 200 --flush --counters --db "$DB"
  ;;
mem)
  step 60 test_ms_cuda "$B/tests/test_ms_cuda"
  step 60 bench "$RT" bench --target cuda:0 --db "$DB" --force
  # W: the schedule to count (default: the model-guided gemm campaign's winner)
  W=${W:-$(sqlite3 "$DB" "SELECT config FROM trials t JOIN campaigns c ON c.id = t.campaign_id WHERE c.strategy = 'model' AND t.status = 'ok' ORDER BY t.time LIMIT 1" 2>/dev/null)}
  [ -n "$W" ] || W=default
  step 40 "gemm winner counted" "$RT" measure --target cuda:0 --kernel gemm --set "$G" --config "$W" --flush --counters --json
  step 130 reduction "$RT" tune --target cuda:0 --kernel reduction --set N=268435456 --strategy model --budget 50 --flush --counters --db "$DB"
  step 130 transpose "$RT" tune --target cuda:0 --kernel transpose --set M=16384,N=16384 --strategy model --budget 50 --flush --counters --db "$DB"
  step 130 stencil "$RT" tune --target cuda:0 --kernel stencil --set NX=16382,NY=16382,STEPS=4 --strategy model --budget 50 --flush --counters --db "$DB"
  step 150 "gemm random counted" "$RT" tune --target cuda:0 --kernel gemm --set "$G" --strategy random --budget 60 --seed 11 --flush --counters --no-pin --db "$DB"
  ;;
finish)   # what the mem phase's 10 minutes left: the winner counted, the campaigns resumed
  W=${W:-default}
  step 40 "gemm winner counted" "$RT" measure --target cuda:0 --kernel gemm --set "$G" --config "$W" --flush --counters --json
  for id in ${RESUME:-}; do
    step 170 "resume $id" "$RT" tune --resume "$id" --db "$DB"
  done
  ;;
pins)
  for t in test_gd test_ms_cuda test_ms_cupti test_cm_bench_cuda; do
    step 120 "$t" "$B/tests/$t"
  done
  "$RT" db copy --db "$DB" --out "$out/pins.db" >/dev/null
  DB="$out/pins.db"
  for g in M=2048,N=2048,K=2048 M=8192,N=8192,K=128; do
    step 200 "gemm model $g" "$RT" tune --target cuda:0 --kernel gemm --set "$g" --strategy model --budget 40 --seed 1 --flush --db "$DB" --json
  done
  ;;
backends)
  for t in test_gd test_ms_cuda test_ms_cupti test_cm_bench_cuda test_gk_kernels test_opencl; do
    step 120 "$t" "$B/tests/$t"
  done
  step 30 targets "$RT" targets
  DB="$out/backends.db"
  OCL=${OCL:-opencl:1.0}
  for t in cuda:0 "$OCL"; do
    step 60 "bench $t" "$RT" bench --target "$t" --db "$DB"
    step 60 "reduction $t" "$RT" tune --target "$t" --kernel reduction --set N=67108864 --strategy model --budget 20 --seed 1 --flush --db "$DB"
    step 60 "transpose $t" "$RT" tune --target "$t" --kernel transpose --set M=8192,N=8192 --strategy model --budget 20 --seed 1 --flush --db "$DB"
    W=$("$RT" db best --db "$DB" --target "$t" --kernel reduction --set N=67108864 2>/dev/null | sed -n 's/.* s  *\({.*}\)$/\1/p' | head -n 1)
    step 20 "explain reduction $t" "$RT" model explain --target "$t" --kernel reduction --set N=67108864 --config "${W:-default}" --flush --db "$DB"
  done
  ;;
*) echo "usage: $0 smoke|main|gemm|mem|finish|pins|backends OUT" >&2; exit 2 ;;
esac
# the database back through SQLite's backup: a step killed at its deadline
# can leave committed trials in the -wal, which a plain cp would drop
[ "$DB" = "$out/$(basename "$DB")" ] || "$RT" db copy --db "$DB" --out "$out/$(basename "$DB")" >/dev/null
tail -n 60 "$log"
