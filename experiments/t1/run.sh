#!/bin/sh
# experiments/t1/run.sh [ARGS] -- a kernel of your own, described by a T1
# file, tuned end to end on one target: the target's ceilings, a campaign
# (by default every valid configuration: --strategy exhaustive --budget
# 100%), the pinned winner, the T4 export of every trial, the roofline
# explanation of the winner, and, given recordings of the same space made
# elsewhere (--compare), the portability matrix and rank correlations of
# the experiment `portability`. Run it through
#   rooftune experiment run t1 [--quick] [--out DIR] [-- ARGS]
# ARGS (README.md):
#   --t1 FILE          the kernel (default: examples/t1/blur1d.json, OpenCL)
#   --kernel-dir DIR   where its sources are (default: beside FILE)
#   --target T         (default: the Language's, as tune --t1 takes it)
#   --set VAR=VAL,...  the workload (default: the file's Defaults; quick
#                      with the default kernel: N=100003)
#   --strategy S       (default exhaustive)   --budget B   (default 100%)
#   --seed S           (default 1)            --atol A  --rtol R
#   --batch B          candidates built and measured together (tune --batch;
#                      on a GPU a few hundred spread the worker's start)
#   --db FILE          start from a copy of FILE instead of an empty
#                      database: configurations measured there on the same
#                      target and workload are copied, not measured again
#                      (tune's reuse): a brute force stopped at the end of
#                      one session is finished by the next
#   --label L          the target's name in file names and the matrix
#                      (default: the target's name, ':' and '.' as '_')
#   --compare T4       a recording of the same space on another machine
#                      (repeatable); --space-t1 FILE is the T1 space the
#                      recordings name (default --t1's)
. "$RT_ROOT/experiments/lib.sh"

T1= KDIR= TARGET= SET= STRATEGY=exhaustive BUDGET=100% SEED=1 ATOL= RTOL= LABEL= SPACE_T1= BATCH= DBIN=
COMPARE=
die() { echo "t1: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --t1|--kernel-dir|--target|--set|--strategy|--budget|--seed|--atol|--rtol|--label|--compare|--space-t1|--batch|--db)
      [ $# -ge 2 ] || die "$1 needs a value" ;;
  esac
  case $1 in
    --t1) T1=$(rt_abs "$2") ;;
    --kernel-dir) KDIR=$(rt_abs "$2") ;;
    --target) TARGET=$2 ;;
    --set) SET=$2 ;;
    --strategy) STRATEGY=$2 ;;
    --budget) BUDGET=$2 ;;
    --seed) SEED=$2 ;;
    --atol) ATOL=$2 ;;
    --rtol) RTOL=$2 ;;
    --label) LABEL=$2 ;;
    --compare) COMPARE="$COMPARE $(rt_abs "$2")" ;;
    --space-t1) SPACE_T1=$(rt_abs "$2") ;;
    --batch) BATCH=$2 ;;
    --db) DBIN=$(rt_abs "$2") ;;
    --) shift; continue ;;
    *) die "unknown argument '$1' (experiments/t1/README.md)" ;;
  esac
  shift 2
done
if [ -z "$T1" ]; then
  T1="$RT_ROOT/examples/t1/blur1d.json"
  [ -z "$SET" ] && [ "$RT_QUICK" = 1 ] && SET=N=100003
fi
[ -r "$T1" ] || die "$T1: not readable"
[ -n "$SPACE_T1" ] || SPACE_T1=$T1
# the options every command on the kernel takes, as positional parameters
set -- --t1 "$T1"
[ -n "$KDIR" ] && set -- "$@" --kernel-dir "$KDIR"
[ -n "$TARGET" ] && set -- "$@" --target "$TARGET"
[ -n "$SET" ] && set -- "$@" --set "$SET"
[ -n "$ATOL" ] && set -- "$@" --atol "$ATOL"
[ -n "$RTOL" ] && set -- "$@" --rtol "$RTOL"
jget() { sqlite3 -batch -noheader :memory: "SELECT json_extract(readfile('$1'), '$2')"; }

SEEDS="the campaign --seed $SEED (strategy $STRATEGY, budget $BUDGET); the inputs as the T1 file's FillType says (Random: its RandomSeed, default 42 + the argument's index)"
ENV_FIXED="LC_ALL=C"
export LC_ALL=C
report_begin "A kernel of your own from a T1 file, tuned end to end"
DB="$RT_OUT/t1.db"
if [ -n "$DBIN" ]; then
  [ -r "$DBIN" ] || die "$DBIN: not readable"
  rt db copy --db "$DBIN" --out "$DB" > /dev/null
else
  rt db init --db "$DB" > /dev/null
fi

# 1. The campaign: its report names the kernel, the target and the workload.
rt tune "$@" --db "$DB" --strategy "$STRATEGY" --budget "$BUDGET" --seed "$SEED" ${BATCH:+--batch "$BATCH"} \
  --json > "$RT_OUT/tune.json"
KERNEL=$(jget "$RT_OUT/tune.json" '$.kernel')
T=$(jget "$RT_OUT/tune.json" '$.target')
[ -n "$LABEL" ] || LABEL=$(echo "$T" | tr ':.' '__')
STEM=$(basename "$SPACE_T1" .json)

# 2. The target's ceilings (what the roofline explanation measures against).
QB=
[ "$RT_QUICK" = 1 ] && QB=--quick
rt bench --target "$T" --db "$DB" $QB > "$RT_OUT/ceilings.txt"

# 3. The pin and every trial as T4; the winner explained against the ceilings.
rt db lookup --db "$DB" --target "$T" --kernel "$KERNEL" ${SET:+--set "$SET"} --json > "$RT_OUT/pin.json"
OWN="$RT_OUT/${STEM}_${LABEL}_T4.json"
rt db export --db "$DB" --target "$T" --kernel "$KERNEL" ${SET:+--set "$SET"} --format t4 --out "$OWN" > /dev/null
BEST=$(jget "$RT_OUT/tune.json" '$.best.config')
[ -n "$BEST" ] || die "the campaign found no verified configuration ($RT_OUT/tune.json)"
rt model explain "$@" --db "$DB" --config "$BEST" > "$RT_OUT/explain.txt"

# 4. Portability against the recordings given (the experiment portability).
if [ -n "$COMPARE" ]; then
  # shellcheck disable=SC2086
  rt experiment run portability --out "$RT_OUT/portability" -- "$SPACE_T1" "$OWN" $COMPARE > /dev/null
fi

# ---- The report ----
n=$(jget "$RT_OUT/tune.json" '$.evaluations')
el=$(jget "$RT_OUT/tune.json" '$.spent_s.elapsed')
report "**The kernel** \`$KERNEL\` ($(basename "$T1")), workload \`$(jget "$RT_OUT/tune.json" '$.workload')\`, on \`$T\` (fingerprint \`$(jget "$RT_OUT/tune.json" '$.fingerprint')\`)."
num() { awk -v x="$1" 'BEGIN { if (x == "") print "-"; else printf "%.4g", x }'; }
{
  echo "| | |"
  echo "|---|---|"
  echo "| strategy, budget | $STRATEGY, $BUDGET: $n configurations evaluated, $(jget "$RT_OUT/tune.json" '$.measured') measured here, $(jget "$RT_OUT/tune.json" '$.reused') reused${DBIN:+ (from --db $(basename "$DBIN"))} |"
  for s in ok compile_error runtime_error timeout wrong_result invalid; do
    echo "| $s | $(jget "$RT_OUT/tune.json" "\$.status.$s") |"
  done
  echo "| best | $(num "$(jget "$RT_OUT/tune.json" '$.best.time_s')") s, 95% CI [$(num "$(jget "$RT_OUT/tune.json" '$.best.ci95[0]')"), $(num "$(jget "$RT_OUT/tune.json" '$.best.ci95[1]')")], $(jget "$RT_OUT/tune.json" '$.best.repeats') repeats: \`$BEST\` |"
  echo "| default (the reference configuration) | $(num "$(jget "$RT_OUT/tune.json" '$.default.time_s')") s; best / default speedup $(num "$(jget "$RT_OUT/tune.json" '$.default.speedup')") (in the campaign) |"
  echo "| pin decision | $(jget "$RT_OUT/tune.json" '$.decision.reason') |"
  echo "| pin (db lookup) | $(jget "$RT_OUT/pin.json" '$.match'): \`$(jget "$RT_OUT/pin.json" '$.config')\` |"
  echo "| time | $(num "$el") s in all: compile $(num "$(jget "$RT_OUT/tune.json" '$.spent_s.compile')") s, verify $(num "$(jget "$RT_OUT/tune.json" '$.spent_s.verify')") s, measure $(num "$(jget "$RT_OUT/tune.json" '$.spent_s.measure')") s, framework $(num "$(jget "$RT_OUT/tune.json" '$.spent_s.framework')") s; $(awk -v e="$el" -v n="$n" 'BEGIN { printf "%.3g", e / n }') s per configuration |"
} > "$RT_OUT/summary.md"
report_file "$RT_OUT/summary.md"
report "Every trial as T4: [$(basename "$OWN")]($(basename "$OWN")). The ceilings ([ceilings.txt](ceilings.txt)) and the winner's roofline explanation (\`rooftune model explain\`):"
{ echo '```'; cat "$RT_OUT/explain.txt"; echo '```'; } > "$RT_OUT/explain.md"
report_file "$RT_OUT/explain.md"
if [ -n "$COMPARE" ]; then
  report "**Portability** against the recordings given: [portability/report.md](portability/report.md) (the matrix and Spearman's rho of each pair)."
  [ -r "$RT_OUT/portability/matrix.csv" ] && { echo '```'; cat "$RT_OUT/portability/matrix.csv"; echo '```'; } > "$RT_OUT/matrix.md" && report_file "$RT_OUT/matrix.md"
fi
report_end
