#!/bin/sh
# experiments/load/run.sh -- the load guard demonstrated (README.md beside
# this file). Run it with
#   rooftune experiment run load [--quick] [--out DIR] [-- ARGS]
# ARGS (all optional):
#   --budget N      schedules sampled per campaign (full 80, --quick 20)
#   --seeds N       held-out splits 1..N of each calibration (full 3, --quick 1)
#   --counters N    schedules whose traffic cachegrind counts per calibration
#                   (full 6, --quick 0)
#   --hog N         busy loops of the competing job (default 2: every CPU
#                   of the development machine)
#   --on S --off S  the competing job runs S seconds, pauses S seconds, over
#                   and over (default 8 and 8)
#   --wait S        tune --load-wait (default 30)
# Measures on this machine: it is only as quiet as the machine is; the
# report says how busy the "quiet" runs found it.
. experiments/lib.sh

SET=M=512,N=512,K=512 CAP=0.3
BUDGET= NSEEDS= COUNTERS= HOG=2 ON=8 OFF=8 WAIT=30
while [ $# -gt 0 ]; do
  case $1 in
    --budget) BUDGET=$2; shift 2 ;;
    --seeds) NSEEDS=$2; shift 2 ;;
    --counters) COUNTERS=$2; shift 2 ;;
    --hog) HOG=$2; shift 2 ;;
    --on) ON=$2; shift 2 ;;
    --off) OFF=$2; shift 2 ;;
    --wait) WAIT=$2; shift 2 ;;
    *) echo "load: unknown argument '$1' (see experiments/load/README.md)" >&2; exit 2 ;;
  esac
done
if [ "$RT_QUICK" = 1 ]; then
  : "${BUDGET:=20}" "${NSEEDS:=1}" "${COUNTERS:=0}"
else
  : "${BUDGET:=80}" "${NSEEDS:=3}" "${COUNTERS:=6}"
fi
export OPENBLAS_CORETYPE=SkylakeX   # the baseline's kernels, stated
SEEDS="campaigns --seed 7 (the same $BUDGET schedules in every run); held-out splits 1 to $NSEEDS"
ENV_FIXED="OPENBLAS_CORETYPE=SkylakeX"

# ---- the competing job: HOG busy loops (awk, started by argv, no shell
# string), stopped and continued by a cycler every ON / OFF seconds; all
# killed at the end, whatever ends the script ----
HOGS= CYCLER=
hog_start() {
  i=0
  while [ $i -lt "$HOG" ]; do
    log awk 'BEGIN { for (;;) x++ }'
    awk 'BEGIN { for (;;) x++ }' &
    HOGS="$HOGS $!"
    i=$((i + 1))
  done
  (
    while :; do
      sleep "$ON"
      kill -STOP $HOGS 2> /dev/null || exit 0
      sleep "$OFF"
      kill -CONT $HOGS 2> /dev/null || exit 0
    done
  ) &
  CYCLER=$!
}
hog_stop() {
  [ -n "$CYCLER" ] && kill -KILL "$CYCLER" 2> /dev/null
  [ -n "$HOGS" ] && kill -KILL $HOGS 2> /dev/null
  for p in $CYCLER $HOGS; do wait "$p" 2> /dev/null || :; done
  HOGS= CYCLER=
}
trap 'hog_stop' EXIT
trap 'hog_stop; exit 130' INT TERM

# val KEY FILE: the first number after "KEY": in a JSON file (null: nan)
val() {
  awk -v key="$1" '{ s = s $0 } END {
    if (!match(s, "\"" key "\": *[^,}]*")) { print "nan"; exit }
    v = substr(s, RSTART, RLENGTH); sub(/^[^:]*: */, "", v); print v == "null" ? "nan" : v }' "$2"
}
# held FILE: the calibrated model's held-out Spearman in a calibration's JSON
held() {
  awk '{ s = s $0 } END {
    if (!match(s, "\"calibrated\": *\\{[^}]*")) { print "nan"; exit }
    c = substr(s, RSTART, RLENGTH)
    if (!match(c, "\"spearman\": *[^,}]*")) { print "nan"; exit }
    v = substr(c, RSTART, RLENGTH); sub(/^[^:]*: */, "", v); print v == "null" ? "nan" : v }' "$1"
}

report_begin "The load guard: a calibration with and without a competing job"

# ---- 0. the ceilings, once, on this machine as it is now ----
BASE="$RT_OUT/ceilings.db"
rt bench --db "$BASE" $( [ "$RT_QUICK" = 1 ] && echo --quick ) > "$RT_OUT/ceilings.txt"

# ---- 1. four campaigns of the same sample, each into a fresh copy: the
# machine quiet or with the competing job, the guard on or off ----
RUNS="$RT_OUT/runs.csv"
CALS="$RT_OUT/calibrations.csv"
echo "machine,guard,trials,loaded,looks,busy_looks,retries,waited_s,ref_busy,ref_max,elapsed_s" > "$RUNS"
echo "machine,guard,seed,train,test,spearman_defaults,spearman_calibrated" > "$CALS"
for machine in quiet busy; do
  for guard in on off; do
    db="$RT_OUT/$machine-$guard.db"
    copy "$BASE" "$db"
    [ "$machine" = busy ] && hog_start
    if [ "$guard" = on ]; then g="--load-wait $WAIT"; else g=--no-load-guard; fi
    # shellcheck disable=SC2086
    rt tune --db "$db" --kernel gemm --set "$SET" --strategy random --budget "$BUDGET" --seed 7 \
      --time-cap "$CAP" --no-pin $g --json > "$RT_OUT/tune-$machine-$guard.json"
    hog_stop
    t="$RT_OUT/tune-$machine-$guard.json"
    trials=$(sqlite3 "$db" "SELECT count(*) FROM trials WHERE status = 'ok'")
    loaded=$(sqlite3 "$db" "SELECT count(*) FROM trials WHERE status = 'ok' AND loaded")
    echo "$machine,$guard,$trials,$loaded,$(val looks "$t"),$(val busy "$t"),$(val retries "$t"),$(val waited_s "$t"),$(val ref "$t"),$(val ref_max "$t"),$(val elapsed "$t")" >> "$RUNS"
    s=1
    while [ $s -le "$NSEEDS" ]; do
      c="$RT_OUT/calibrate-$machine-$guard-$s.json"
      if ! rt model calibrate --db "$db" --kernel gemm --set "$SET" --holdout 0.3 --seed $s \
        --counters "$COUNTERS" --json > "$c"; then
        # the guard kept (nearly) every trial out: nothing to fit, which
        # the table says ("none"); any other failure ends the experiment
        [ "$loaded" -gt 0 ] && [ $((trials - loaded)) -lt 2 ] || exit 1
        echo "$machine,$guard,$s,0,0,nan,nan" >> "$CALS"
        s=$((s + 1))
        continue
      fi
      d=$(awk '{ s = s $0 } END { if (match(s, "\"defaults\": *\\{[^}]*")) { c = substr(s, RSTART, RLENGTH);
             if (match(c, "\"spearman\": *[^,}]*")) { v = substr(c, RSTART, RLENGTH); sub(/^[^:]*: */, "", v); print v; exit } }
             print "nan" }' "$c")
      echo "$machine,$guard,$s,$(val train "$c"),$(val test "$c"),$d,$(held "$c")" |
        sed 's/null/nan/g' >> "$CALS"
      s=$((s + 1))
    done
  done
done

# ---- 2. the reference loop's false positives over a `make demo`
# campaign (its gemm, strategy and budget; the flag policy, so that it
# does not wait): looks at which the loop alone judged the machine busy ----
copy "$BASE" "$RT_OUT/demo.db"
rt tune --db "$RT_OUT/demo.db" --kernel gemm --set "$SET" --strategy bandit --budget 32 --seed 1 \
  --time-cap "$CAP" --no-pin --load-policy flag --json > "$RT_OUT/tune-demo.json"
DEMO="$(val looks "$RT_OUT/tune-demo.json") looks, $(val ref "$RT_OUT/tune-demo.json") judged busy by the
reference loop (slowest ratio $(printf %.2f "$(val ref_max "$RT_OUT/tune-demo.json")")x); the CPU signs judged
$(val others "$RT_OUT/tune-demo.json") busy (other processes' CPU time: other work on this machine)"

# ---- 3. the tables ----
TABLE="$RT_OUT/table.md"
awk -F, 'function num(x) { return x ~ /^-?[0-9.]+(e-?[0-9]+)?$/ }
  NR > 1 { k = $1 "," $2; q[k] = q[k] (q[k] == "" ? "" : ", ") (num($7) ? sprintf("%.3f", $7) : "none")
           if (num($7)) { n[k]++; s[k] += $7 } }
  END {
    print "| machine | guard | held-out Spearman (mean) | per split |"
    print "|---|---|---|---|"
    split("quiet,on quiet,off busy,on busy,off", o, " ")
    for (i = 1; i <= 4; i++) { k = o[i]; split(k, p, ",")
      if (n[k]) m[k] = s[k] / n[k]
      printf "| %s | %s | %s | %s |\n", p[1], p[2], n[k] ? sprintf("%.3f", m[k]) : "none", q[k] }
    printf "\n"
    for (i = 1; i <= 2; i++) { g = i == 1 ? "on" : "off"
      if (!n["quiet," g] || !n["busy," g]) {
        printf "Guard %s: no comparison (a calibration had too few quiet trials to score).\n", g; continue }
      d = m["quiet," g] - m["busy," g]; if (d < 0) d = -d
      printf "Guard %s: quiet and busy %.3f apart (%s 0.05).\n", g, d, d <= 0.05 ? "within" : "not within" }
  }' "$CALS" > "$TABLE"
report "## Held-out Spearman of the calibrated gemm model

Each row: $BUDGET random schedules of gemm $SET (tune --seed 7) measured into
a fresh database, the model calibrated on 70% of the verified ones (trials
stored \`loaded\` left out) and scored on the other 30%, splits 1 to $NSEEDS.
The busy rows ran with $HOG busy loops beside the campaign, $ON s on and $OFF s off."
report_file "$TABLE"
report "## The campaigns

\`loaded\`: verified trials stored as measured on a busy machine (left out of
the calibration); \`busy_looks\`: measurements after which the guard saw a
busy machine (the re-measurements included); \`retries\`: measured again
after a wait; \`ref_busy\`: looks at which the reference loop ran over
1.25x its start time, and \`ref_max\` its slowest ratio. Guard off:
nothing looked at.

\`\`\`
$(cat "$RUNS")
\`\`\`"
report "## The reference loop after gemm measurements

A \`make demo\` campaign (gemm $SET, bandit, 32 trials, flag policy): $DEMO.
The memory probe the loop replaces flagged 38 of 40 such looks on a quiet
machine."
report_end
