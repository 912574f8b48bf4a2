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
#   full KERNEL  issue 21's fully measured recordings: every schedule of
#          a slice of KERNEL's space (experiments/h200/slices/KERNEL.json:
#          gemm 272 schedules at 2048^3, reduction 216 at N=2^26, transpose
#          284 at 8192^2, stencil 264 at 8190^2 x 4 steps; each about 5
#          minutes), the default first, into full_KERNEL.db (replayed by
#          `rooftune replay --db`: model-guided against random, 20 seeds);
#          a call cut short is finished by RESUME=ID (its campaign id)
#   guided  issue 21's three 40-trial model-guided gemm campaigns (2048^3,
#          4096^3, 8192x8192x128) on a copy of h200.db whose gemm model is
#          first calibrated again (the cubins' registers: model_setup), each
#          measuring the default first and its three best again beside it
#          (the conservative pin), into guided.db
#   t1smoke  issue 18's first check of T1 kernels on the GPU: the GPU tests
#          (test_gd, test_ms_cuda, test_uk), the ceilings, our fir kernel
#          (every configuration) and small random samples of the hub's
#          convolution and dedispersion and of our pnpoly, into t1.db
#   vcheck  verification on the GPU (targets/cuda/gd_check.c): the GPU
#          tests, then VSAMPLE (100) random configurations of the hub's
#          convolution and of our pnpoly verified on the host (cold compile
#          cache), then on the device, into vconvN.db and vpnpolyN.db (each
#          trial's verify_s compared)
#   t1conv, t1pnpoly, t1dedisp  the experiment t1 on cuda:0 (label H200) for
#          the hub's convolution (every valid configuration, portability
#          against the A100 and A4000 recordings), our pnpoly (every valid
#          configuration, against the RTX 3090 recording of the hub's
#          pnpoly: another implementation of the same space) and the hub's
#          dedispersion (every valid configuration, against the A100
#          recording); SAMPLE=N: N configurations at random; DBIN=FILE starts from a copy of
#          FILE (the previous call's t1.db: its trials are reused), so that
#          a brute force longer than one call is finished over several
#   load   issue 21's load guard on the GPU: nvidia-smi's clocks and throttle
#          reasons, test_load (its nvml_here test prints NVML's reading of
#          cuda:0), then two 20-trial random gemm campaigns at 2048^3 into a
#          scratch database with --json (their "load" object: "gpu" holds the
#          SM clock, the highest seen, the reasons and the violation times;
#          "signs" what was busy), the second with a competing cuBLAS gemm
#          loop (rooftune baseline, repeated) on the same GPU beside it
#   ktconv  Kernel Tuner 1.5.0 (cuda-python) timing the convolution's
#          configurations of t1conv's T4 export (KT_SAMPLE, default 300)
# The T1 phases read the hub's kernels from .dev/hub and Debian's sqlite3
# program (the experiment scripts use it) from .dev/bin and .dev/lib,
# carried with the bundle (experiments/results/h200/t1/HOW.md).
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
R=$PWD
H="$R/.dev/hub"
# Debian's sqlite3 for the experiment scripts, its libraries for it alone
if [ -x "$R/.dev/bin/sqlite3" ] && ! command -v sqlite3 >/dev/null 2>&1; then
  mkdir -p /tmp/rt-bin
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$R/.dev/lib" "$R/.dev/bin/sqlite3" > /tmp/rt-bin/sqlite3
  chmod +x /tmp/rt-bin/sqlite3
  export PATH="/tmp/rt-bin:$PATH"
fi
# the experiments the T1 phases run, beside the bundle's rooftune
t1exp() {   # t1exp NAME ARGS...: rooftune experiment run t1 into $out/NAME
  mkdir -p "$B/experiments"
  cp -r experiments/lib.sh experiments/t1 experiments/portability "$B/experiments/"
  n=$1
  shift
  step "${T1_LIMIT:-540}" "t1 $n" "$RT" experiment run t1 --out "$out/$n" --force -- --target cuda:0 --label H200 --batch "${BATCH:-256}" ${DBIN:+--db "$DBIN"} "$@"
  # the campaign's database through SQLite's backup (a stopped step may leave its -wal)
  [ -r "$out/$n/t1.db" ] && "$RT" db copy --db "$out/$n/t1.db" --out "$out/$n.db" >/dev/null
}
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
load)
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks_throttle_reasons.active,power.draw,temperature.gpu,driver_version --format=csv >"$out/nvidia-smi.txt" 2>&1
  step 60 test_load "$B/tests/test_load"
  L="$out/load.db" W2="M=2048,N=2048,K=2048"
  cp "$DB" "$L" 2>/dev/null || :   # its ceilings, if there; the trials are measured anew (--seed 9)
  step 200 "gemm guarded" "$RT" tune --target cuda:0 --kernel gemm --set "$W2" --strategy random --budget 20 --seed 9 --flush --no-pin --db "$L" --json
  # the same beside a competing job on the GPU: cuBLAS's gemm measured over and over
  ( while [ ! -e "$out/.stop" ]; do "$RT" baseline --target cuda:0 --kernel gemm --set M=8192,N=8192,K=8192 >/dev/null 2>&1; done ) &
  comp=$!
  step 240 "gemm guarded, competing" "$RT" tune --target cuda:0 --kernel gemm --set "$W2" --strategy random --budget 20 --seed 10 --flush --no-pin --db "$L" --load-wait 20 --json
  touch "$out/.stop"; wait "$comp"; rm -f "$out/.stop"
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
full)   # KERNEL=${3:-gemm}: the slice measured whole (a resumed call: RESUME=ID)
  k=${3:-gemm}
  case $k in
  gemm) w=M=2048,N=2048,K=2048 ;;
  reduction) w=N=67108864 ;;
  transpose) w=M=8192,N=8192 ;;
  stencil) w=NX=8190,NY=8190,STEPS=4 ;;
  *) echo "full: KERNEL is gemm, reduction, transpose or stencil" >&2; exit 2 ;;
  esac
  DB="$out/full_$k.db"
  [ -r "${DBIN:-}" ] && "$RT" db copy --db "$DBIN" --out "$DB" >/dev/null
  step 30 "bench" "$RT" bench --target cuda:0 --db "$DB"
  if [ -n "${RESUME:-}" ]; then
    step 440 "full $k resumed" "$RT" tune --resume "$RESUME" --db "$DB" --no-pin
  else
    step 440 "full $k" "$RT" tune --target cuda:0 --kernel "$k" --set "$w" --space "$R/experiments/h200/slices/$k.json" \
      --strategy exhaustive --budget 100% --batch 64 --flush --no-pin --db "$DB"
  fi
  ;;
guided)
  step 60 test_gd "$B/tests/test_gd"
  "$RT" db copy --db "$DB" --out "$out/guided.db" >/dev/null
  DB="$out/guided.db"
  step 150 "calibrate gemm" "$RT" model calibrate --target cuda:0 --kernel gemm --set "$G" --flush --db "$DB"
  for g in M=2048,N=2048,K=2048 "$G" M=8192,N=8192,K=128; do
    step 120 "gemm model $g" "$RT" tune --target cuda:0 --kernel gemm --set "$g" --strategy model --budget 40 --seed 1 --flush --db "$DB" --json
  done
  ;;
t1smoke)
  DB="$out/t1.db"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,driver_version --format=csv >"$out/nvidia-smi.txt" 2>&1
  for t in test_gd test_ms_cuda test_uk; do
    step 120 "$t" "$B/tests/$t"
  done
  step 60 bench "$RT" bench --target cuda:0 --db "$DB"
  step 90 "fir every configuration" "$RT" tune --t1 "$R/examples/t1/fir.json" --strategy exhaustive --budget 100% --batch 64 --db "$DB"
  step 60 "convolution sample" "$RT" tune --t1 "$R/data/t1k/convolution_milo.json" --kernel-dir "$H" --strategy random --budget 40 --seed 1 --db "$DB"
  step 60 "pnpoly sample" "$RT" tune --t1 "$R/examples/t1/pnpoly.json" --strategy random --budget 40 --seed 1 --db "$DB"
  step 60 "dedispersion sample" "$RT" tune --t1 "$R/data/t1k/dedispersion_milo.json" --kernel-dir "$H" --strategy random --budget 8 --seed 1 --db "$DB"
  step 30 "explain fir" "$RT" model explain --t1 "$R/examples/t1/fir.json" --db "$DB" --config "$("$RT" db lookup --db "$DB" --target cuda:0 --kernel fir --json | sed -n 's/.*"config": *\({[^}]*}\).*/\1/p')"
  ;;
vcheck)   # verification on the GPU against the host path, in one call
  for t in test_ms_cuda test_gd test_uk; do
    step 150 "$t" "$B/tests/$t"
  done
  i=0
  for v in 1 0; do   # host (cold compile cache), device (warm: its verify_s and framework)
    i=$((i + 1))
    step 120 "convolution ROOFTUNE_HOST_VERIFY=$v" env ROOFTUNE_HOST_VERIFY=$v "$RT" tune --t1 "$R/data/t1k/convolution_milo.json" \
      --kernel-dir "$H" --strategy random --budget "${VSAMPLE:-100}" --seed 3 --batch 256 --no-pin --db "$out/vconv$i.db"
    step 120 "pnpoly ROOFTUNE_HOST_VERIFY=$v" env ROOFTUNE_HOST_VERIFY=$v "$RT" tune --t1 "$R/examples/t1/pnpoly.json" \
      --strategy random --budget "${VSAMPLE:-100}" --seed 3 --batch 256 --no-pin --db "$out/vpnpoly$i.db"
  done
  ;;
t1conv)
  t1exp convolution --t1 "$R/data/t1k/convolution_milo.json" --kernel-dir "$H" ${SAMPLE:+--strategy random --budget "$SAMPLE"} \
    --space-t1 "$R/data/t1/convolution_milo.json" \
    --compare "$R/data/t4/convolution_milo_A100_T4.json.gz" --compare "$R/data/t4/convolution_milo_A4000_T4.json.gz"
  ;;
t1pnpoly)
  t1exp pnpoly --t1 "$R/examples/t1/pnpoly.json" ${SAMPLE:+--strategy random --budget "$SAMPLE"} --space-t1 "$R/data/t1/pnpoly.json" \
    --compare "$R/data/t4/pnpoly_RTX_3090_T4.json.gz"
  ;;
t1dedisp)
  t1exp dedispersion --t1 "$R/data/t1k/dedispersion_milo.json" --kernel-dir "$H" ${SAMPLE:+--strategy random --budget "$SAMPLE"} \
    --space-t1 "$R/data/t1/dedispersion_milo.json" \
    --compare "$R/data/t4/dedispersion_milo_A100_T4.json.gz"
  ;;
ktconv)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    experiments/h200/kt_wheels/*.whl && export PYTHONPATH=/tmp/site
  T4=$(ls "$out"/convolution/convolution_milo_H200_T4.json .dev/prev/convolution_milo_H200_T4.json experiments/results/h200/t1/convolution/convolution_milo_H200_T4.json 2>/dev/null | head -n 1)
  step 560 "kernel tuner" env PYTHONUNBUFFERED=1 python3 experiments/h200/kt_compare.py tune --kernel-dir "$H" \
    --configs "$T4" --sample "${KT_SAMPLE:-300}" ${KT_NOVERIFY:+--no-verify} --out "$out/kt_convolution.json"
  ;;
*) echo "usage: $0 smoke|main|gemm|mem|finish|pins|full [KERNEL]|guided|backends|t1smoke|vcheck|t1conv|t1pnpoly|t1dedisp|ktconv OUT" >&2; exit 2 ;;
esac
# the database back through SQLite's backup: a step killed at its deadline
# can leave committed trials in the -wal, which a plain cp would drop
[ "$DB" = "$out/$(basename "$DB")" ] || "$RT" db copy --db "$DB" --out "$out/$(basename "$DB")" >/dev/null
tail -n 60 "$log"
