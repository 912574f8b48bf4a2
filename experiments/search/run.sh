#!/bin/sh
# experiments/search/run.sh -- experiment 5: model-guided search efficiency
# (README.md beside this file). Run it with
#   rooftune experiment run search [--quick] [--out DIR] [-- ARGS]
# ARGS (all optional):
#   --db F            the database with the fully measured spaces (default the
#                     recorded experiments/cost_model/results/cost_model.db);
#                     copied into the output folder, only the copy is used
#   --spaces F        the spaces to search (default experiments/search/spaces.txt;
#                     its format is there)
#   --kernels K,..    only these kernels of the list (--quick on the default
#                     list: gemm,reduction)
#   --strategies L    comma-separated strategies (--quick: model,random,
#                     annealing,genetic; full: model,random,annealing,genetic,
#                     de,pso,bayes,bandit)
#   --repeats R       runs per strategy and space, seeds 1..R (--quick 5, full 20)
#   --budget N|P%     trials per run (default 100%: the whole space)
#   --measure         first measure every listed space whole into the copy
#                     (rooftune tune --strategy exhaustive): this times schedules,
#                     so run it on a quiet machine; without it nothing is timed
#   --time-cap S      seconds of timing per schedule with --measure (--quick
#                     0.05, full 0.3)
#   --fingerprint P   the stored target whose trials are replayed (a prefix of
#                     its fingerprint; by default the one target holding them,
#                     whatever machine runs this; with --measure, this machine)
#   --time-share F    the time-limited comparison's limit: this share of the
#                     space's whole recorded cost (default 0.1; 0: none)
#   --timed L         the strategies of the time-limited comparison (default
#                     model,random; those of --strategies only)
#   --recalibrate W   auto (default): a kernel whose latest calibration has no
#                     uncertainty (stored before it was kept) or is of an
#                     older form of the model is calibrated again in the
#                     copy on the same workloads, hold-out, seed and counters
#                     (where only the uncertainty was missing, the same
#                     coefficients, now with their held-out uncertainty,
#                     which the model strategy's lower bound uses); no: never
#                     (the default with --quick: the calibrations take most
#                     of a quick run's time)
. experiments/lib.sh

DB_IN=experiments/cost_model/results/cost_model.db
LIST=experiments/search/spaces.txt
KERNELS= STRATS= REPEATS= BUDGET=100% MEASURE=0 CAP= FP= TSHARE=0.1 TIMED=model,random RECAL=
while [ $# -gt 0 ]; do
  case $1 in
    --db) DB_IN=$(rt_abs "$2"); shift 2 ;;
    --spaces) LIST=$(rt_abs "$2"); shift 2 ;;
    --kernels) KERNELS=$2; shift 2 ;;
    --strategies) STRATS=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --measure) MEASURE=1; shift ;;
    --time-cap) CAP=$2; shift 2 ;;
    --fingerprint) FP=$2; shift 2 ;;
    --time-share) TSHARE=$2; shift 2 ;;
    --timed) TIMED=$2; shift 2 ;;
    --recalibrate) RECAL=$2; shift 2 ;;
    *) echo "search: unknown argument '$1' (see experiments/search/README.md)" >&2; exit 2 ;;
  esac
done
if [ "$RT_QUICK" = 1 ]; then
  [ "$LIST" = experiments/search/spaces.txt ] && : "${KERNELS:=gemm,reduction}"
  : "${STRATS:=model,random,annealing,genetic}" "${REPEATS:=5}" "${CAP:=0.05}" "${RECAL:=no}"
else
  : "${STRATS:=model,random,annealing,genetic,de,pso,bayes,bandit}" "${REPEATS:=20}" "${CAP:=0.3}" "${RECAL:=auto}"
fi
[ -r "$DB_IN" ] || { echo "search: cannot read the database $DB_IN" >&2; exit 2; }
[ -r "$LIST" ] || { echo "search: cannot read the space list $LIST" >&2; exit 2; }
# --measure times the spaces on this machine: replay what it measured
[ $MEASURE = 1 ] && : "${FP:=$RT_FINGERPRINT}"

DB="$RT_OUT/$(basename "$DB_IN")"
copy "$DB_IN" "$DB"
SEEDS="seeds 1 to $REPEATS, one run of every strategy on every space each (rooftune compare --seed 1 --repeats $REPEATS: repeat r, counted from 0, uses seed 1 + r)"
if [ $MEASURE = 1 ]; then
  ENV_FIXED="OPENBLAS_CORETYPE=SkylakeX (as in experiments/cost_model/run.sh); the spaces were measured by this run with --time-cap $CAP"
  export OPENBLAS_CORETYPE=SkylakeX
else
  ENV_FIXED="none needed (replay of recorded trials: nothing is timed)"
fi

# The spaces this run searches: "LABEL KERNEL SET SPACE" lines; LABEL is the
# kernel's name (with the line number when a kernel comes twice).
grep -v '^[[:space:]]*#' "$LIST" | awk -v only=",$KERNELS," '
  NF >= 3 && (only == ",," || index(only, "," $1 ",")) {
    lab = $1; if (seen[$1]++) lab = $1 "_" NR
    sp = $3 == "-" ? "targets/host/" $1 ".json" : $3
    print lab, $1, $2, sp
  }' > "$RT_OUT/spaces.txt"
[ -s "$RT_OUT/spaces.txt" ] || { echo "search: no space of $LIST selected" >&2; exit 2; }

# A latest calibration without an uncertainty (stored before rooftune kept
# it) or of an older form of the model (cm_kmodel.form: its terms changed
# since; model history marks it, and a campaign would start from the
# defaults): calibrated again on what its record says it was fitted on.
RECALS=
if [ "$RECAL" = auto ]; then
  for k in $(awk '{ print $2 }' "$RT_OUT/spaces.txt" | sort -u); do
    rt model history --db "$DB" ${FP:+--fingerprint "$FP"} --kernel "$k" --json > "$RT_OUT/history_$k.json"
    args=$(python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))
if h and ("uncertainty" not in h[-1]["fit"] or not h[-1].get("current", True)):
    f = h[-1]["fit"]
    sets = ["--set " + ",".join(w.split()[2:]) for w in f["workloads"]]
    print(" ".join(sets), "--holdout", f["holdout"], "--seed", f["seed"], "--counters", f.get("counted", 0))' \
      "$RT_OUT/history_$k.json")
    rm -f "$RT_OUT/history_$k.json"
    [ -n "$args" ] || continue
    # shellcheck disable=SC2086  # the words are the options made above
    rt model calibrate --db "$DB" ${FP:+--fingerprint "$FP"} --kernel "$k" $args > "$RT_OUT/recalibrate_$k.txt"
    RECALS="$RECALS $k"
  done
fi

NEED="$RT_OUT/trials_to_5pct.csv"   # one row per run
echo "space,strategy,repeat,seed,trials,reached,budget" > "$NEED"
SECS="$RT_OUT/seconds_to_5pct.csv"   # the same runs on the time axis
echo "space,strategy,repeat,seed,seconds,reached,whole_s" > "$SECS"
TIMEDCSV="$RT_OUT/time_limited.csv"   # the runs under --time-limit
echo "space,strategy,repeat,seed,limit_s,spent_s,evaluations,best_over_opt,within_5pct" > "$TIMEDCSV"
GUIDE="$RT_OUT/guide.csv"             # the model strategy's proposals by source
echo "space,repeat,seed,from_model,from_fallback" > "$GUIDE"
: > "$RT_OUT/spaces_table.md"
while read -r lab k set space; do
  if [ $MEASURE = 1 ]; then
    rt tune --db "$DB" --kernel "$k" --set "$set" --space "$space" --strategy exhaustive \
      --budget 100% --time-cap "$CAP" --no-pin > "$RT_OUT/measure_$lab.txt"
  fi
  mkdir -p "$RT_OUT/$lab"
  rt compare --db "$DB" ${FP:+--fingerprint "$FP"} --kernel "$k" --set "$set" --space "$space" --recorded \
    --strategies "$STRATS" --budget "$BUDGET" --repeats "$REPEATS" --seed 1 \
    --csv "$RT_OUT/$lab" > "$RT_OUT/$lab/compare.txt"
  rt model history --db "$DB" ${FP:+--fingerprint "$FP"} --kernel "$k" > "$RT_OUT/$lab/model_history.txt"
  C="$RT_OUT/$lab/curves.csv"
  # Trials to within 5% of the optimum (the best time of the space: every
  # run of a whole-space budget ends there); never: the budget + 1.
  awk -F, -v lab="$lab" -v strats="$STRATS" '
    NR == FNR { if (FNR > 1 && (opt == "" || $5 + 0 < opt)) opt = $5 + 0; if (FNR > 1 && $4 + 0 > K) K = $4 + 0; next }
    FNR == 1 { next }
    {
      run = $1 SUBSEP $2
      if (!(run in first)) { order[++nr] = run; seed[run] = $3; first[run] = 0 }
      if (!first[run] && $5 + 0 <= 1.05 * opt) first[run] = $4 + 0
    }
    END {
      ns = split(strats, S, ",")
      for (s = 1; s <= ns; s++)
        for (i = 1; i <= nr; i++) {
          split(order[i], f, SUBSEP)
          if (f[1] != S[s]) continue
          printf "%s,%s,%s,%s,%d,%d,%d\n", lab, f[1], f[2], seed[order[i]], (first[order[i]] ? first[order[i]] : K + 1), (first[order[i]] > 0), K
        }
    }' "$C" "$C" >> "$NEED"
  # The same runs on the time axis (curves.csv's spent_s: the recorded
  # compile + verify + measure seconds after each trial): the seconds each
  # run spent until within 5%; whole_s: the space's whole recorded cost.
  awk -F, -v lab="$lab" '
    NR == FNR { if (FNR > 1 && (opt == "" || $5 + 0 < opt)) opt = $5 + 0; if (FNR > 1 && $7 + 0 > W) W = $7 + 0; next }
    FNR == 1 { next }
    {
      run = $1 SUBSEP $2
      if (!(run in got)) { order[++nr] = run; seed[run] = $3; got[run] = 0 }
      if (!got[run] && $7 != "" && $5 + 0 <= 1.05 * opt) { got[run] = 1; sec[run] = $7 + 0 }
    }
    END {
      for (i = 1; i <= nr; i++) {
        split(order[i], f, SUBSEP)
        printf "%s,%s,%s,%s,%.6g,%d,%.6g\n", lab, f[1], f[2], seed[order[i]], got[order[i]] ? sec[order[i]] : W, got[order[i]], W
      }
    }' "$RT_OUT/$lab/curves.csv" "$RT_OUT/$lab/curves.csv" >> "$SECS"
  awk -F, -v lab="$lab" 'NR > 1 && $1 == "model" { printf "%s,%s,%s,%s,%s\n", lab, $2, $3, $9, $10 }' \
    "$RT_OUT/$lab/scores.csv" >> "$GUIDE"
  # Time-limited runs (rooftune compare --time-limit: a run stops before a
  # candidate whose predicted cost would not fit, tu.h invariant 12).
  whole=$(awk -F, 'NR > 1 && $7 + 0 > W { W = $7 + 0 } END { printf "%.6g", W }' "$RT_OUT/$lab/curves.csv")
  lim=$(awk -v w="$whole" -v s="$TSHARE" 'BEGIN { printf "%.6g", w * s }')
  if awk -v l="$lim" 'BEGIN { exit !(l > 0) }'; then
    mkdir -p "$RT_OUT/$lab/timed"
    rt compare --db "$DB" ${FP:+--fingerprint "$FP"} --kernel "$k" --set "$set" --space "$space" --recorded \
      --strategies "$TIMED" --budget 100% --time-limit "$lim" --repeats "$REPEATS" --seed 1 \
      --csv "$RT_OUT/$lab/timed" > "$RT_OUT/$lab/timed/compare.txt"
    awk -F, -v lab="$lab" -v lim="$lim" -v copt="$(awk -F, 'NR > 1 && (o == "" || $5 + 0 < o) { o = $5 + 0 } END { print o }' "$RT_OUT/$lab/curves.csv")" '
      FNR == 1 { next }
      NR == FNR { if ($7 != "") { run = $1 SUBSEP $2; sp[run] = $7 + 0; ev[run] = $4 + 0 } next }
      { run = $1 SUBSEP $2; printf "%s,%s,%s,%s,%s,%.6g,%d,%.6f,%d\n", lab, $1, $2, $3, lim, sp[run], ev[run], $5 / copt, $5 <= 1.05 * copt }
    ' "$RT_OUT/$lab/timed/curves.csv" "$RT_OUT/$lab/timed/scores.csv" >> "$TIMEDCSV"
  fi
  # Tuning curves: per strategy and trial k, quartiles over the runs of
  # optimum / best-so-far (1: the optimum found); a gnuplot block each.
  awk -F, -v strats="$STRATS" '
    function q(p,   h, lo) { h = (m - 1) * p; lo = int(h); return lo + 1 < m ? x[lo] + (h - lo) * (x[lo + 1] - x[lo]) : x[lo] }
    NR == FNR { if (FNR > 1 && (opt == "" || $5 + 0 < opt)) opt = $5 + 0; next }
    FNR == 1 { next }
    {
      key = $1 SUBSEP $2
      if (!(key in nrun)) { nrun[key] = 1; runs[$1] = runs[$1] SUBSEP $2; nr[$1]++ }
      v[$1, $2, $4 + 0] = opt / $5; if ($4 + 0 > K) K = $4 + 0
      if ($6 != "" && $6 + 0 > 0) re[$4 + 0] = opt / $6
    }
    END {
      ns = split(strats, S, ",")
      for (s = 1; s <= ns; s++) {
        n = split(substr(runs[S[s]], 2), R, SUBSEP)
        printf "# %s: k q1 median q3 (of optimum / best-so-far over %d runs)\n", S[s], n
        for (r = 1; r <= n; r++) last[r] = 0
        for (k = 1; k <= K; k++) {
          m = 0
          for (r = 1; r <= n; r++) {
            k3 = S[s] SUBSEP R[r] SUBSEP k
            if (k3 in v) last[r] = v[k3]
            y = last[r]
            for (j = m; j > 0 && x[j - 1] > y; j--) x[j] = x[j - 1]
            x[j] = y; m++
          }
          printf "%d %.6f %.6f %.6f\n", k, q(0.25), q(0.5), q(0.75)
        }
        printf "\n\n"
      }
      printf "# random search, calculated: k optimum / expected best time\n"
      for (k = 1; k <= K; k++) if (k in re) printf "%d %.6f\n", k, re[k]
    }' "$C" "$C" > "$RT_OUT/curves_$lab.dat"
  n=$(awk -F, 'NR > 1 && $4 + 0 > K { K = $4 + 0 } END { print K }' "$C")
  opt=$(awk -F, 'NR > 1 && (o == "" || $5 + 0 < o) { o = $5 + 0 } END { printf "%.6g", o }' "$C")
  # a calibration made again here (--recalibrate) is named by the one it
  # repeats (its own date is this run's: the tables would differ per run)
  again=0; case " $RECALS " in *" $k "*) again=1 ;; esac
  cal=$(awk -v again=$again 'NF { p = l; l = $0 } END {
      if (l == "") { print "none (default coefficients)"; exit }
      split(l, f, " "); split(p, g, " ")
      if (again) print "version " f[2] " (version " g[2] " of " g[3] " " g[4] " calibrated again here)"
      else print "version " f[2] " (" f[3] " " f[4] ")" }' "$RT_OUT/$lab/model_history.txt")
  echo "| $lab | $(echo "$set" | tr ',' ' ') | \`$space\` | $n | $opt | $cal |" >> "$RT_OUT/spaces_table.md"
done < "$RT_OUT/spaces.txt"

# Table: trials to within 5%, median and quartiles (type 7) per space and
# strategy; the ratio of its median to random search's.
awk -F, '
  function q(p,   h, lo) { h = (m - 1) * p; lo = int(h); return lo + 1 < m ? x[lo] + (h - lo) * (x[lo + 1] - x[lo]) : x[lo] }
  function fmt(v) { return v > K[sp] ? ">" K[sp] : sprintf("%g", v) }
  NR == 1 { next }
  {
    K[$1] = $7 + 0
    key = $1 SUBSEP $2
    if (!(key in cnt)) { order[++nk] = key }
    val[key, cnt[key]++] = $5 + 0; hit[key] += $6
  }
  END {
    for (i = 1; i <= nk; i++) {   # the medians first (random is the reference)
      key = order[i]; m = 0
      for (r = 0; r < cnt[key]; r++) {
        y = val[key, r]
        for (j = m; j > 0 && x[j - 1] > y; j--) x[j] = x[j - 1]
        x[j] = y; m++
      }
      q1[key] = q(0.25); med[key] = q(0.5); q3[key] = q(0.75)
    }
    for (i = 1; i <= nk; i++) {
      key = order[i]; split(key, f, SUBSEP); sp = f[1]
      rk = sp SUBSEP "random"
      ratio = (rk in med) && med[rk] > 0 ? sprintf("%.2f", med[key] / med[rk]) : "-"
      printf "| %s | %s | %d | %s | [%s, %s] | %d/%d | %s |\n", sp, f[2], cnt[key], fmt(med[key]),
        fmt(q1[key]), fmt(q3[key]), hit[key], cnt[key], ratio
    }
  }' "$NEED" > "$RT_OUT/table_trials.md"

# Tables on the time axis: seconds to within 5% (median, quartiles, vs
# random); the time-limited runs (median best / optimum, runs within 5%,
# median evaluations and seconds spent); the model's fallback share.
awk -F, '
  function q(p,   h, lo) { h = (m - 1) * p; lo = int(h); return lo + 1 < m ? x[lo] + (h - lo) * (x[lo + 1] - x[lo]) : x[lo] }
  NR == 1 { next }
  { key = $1 SUBSEP $2; if (!(key in cnt)) order[++nk] = key; val[key, cnt[key]++] = $5 + 0; hit[key] += $6 }
  END {
    for (i = 1; i <= nk; i++) {
      key = order[i]; m = 0
      for (r = 0; r < cnt[key]; r++) { y = val[key, r]; for (j = m; j > 0 && x[j - 1] > y; j--) x[j] = x[j - 1]; x[j] = y; m++ }
      q1[key] = q(0.25); med[key] = q(0.5); q3[key] = q(0.75)
    }
    for (i = 1; i <= nk; i++) {
      key = order[i]; split(key, f, SUBSEP); rk = f[1] SUBSEP "random"
      ratio = (rk in med) && med[rk] > 0 ? sprintf("%.2f", med[key] / med[rk]) : "-"   # not in printf: there > redirects
      printf "| %s | %s | %d | %.3g | [%.3g, %.3g] | %d/%d | %s |\n", f[1], f[2], cnt[key], med[key], q1[key], q3[key],
        hit[key], cnt[key], ratio
    }
  }' "$SECS" > "$RT_OUT/table_seconds.md"
awk -F, '
  function q(p,   h, lo) { h = (m - 1) * p; lo = int(h); return lo + 1 < m ? x[lo] + (h - lo) * (x[lo + 1] - x[lo]) : x[lo] }
  function medof(a, key,   r, y, j) { m = 0; for (r = 0; r < cnt[key]; r++) { y = a[key, r]; for (j = m; j > 0 && x[j - 1] > y; j--) x[j] = x[j - 1]; x[j] = y; m++ } return q(0.5) }
  NR == 1 { next }
  { key = $1 SUBSEP $2; if (!(key in cnt)) { order[++nk] = key; lim[key] = $5 }
    b[key, cnt[key]] = $8 + 0; e[key, cnt[key]] = $7 + 0; s[key, cnt[key]++] = $6 + 0; hit[key] += $9 }
  END {
    for (i = 1; i <= nk; i++) {
      key = order[i]; split(key, f, SUBSEP)
      printf "| %s | %s | %.1f | %.3f | %d/%d | %.0f | %.1f |\n", f[1], f[2], lim[key], 1 / medof(b, key), hit[key], cnt[key], medof(e, key), medof(s, key)
    }
  }' "$TIMEDCSV" > "$RT_OUT/table_timed.md"
awk -F, 'NR > 1 { m[$1] += $4; f[$1] += $5; if (!($1 in o)) o[$1] = ++n; } END {
    for (s in o) ord[o[s]] = s
    for (i = 1; i <= n; i++) { s = ord[i]; printf "| %s | %d | %d | %.0f%% |\n", s, m[s], f[s], 100 * f[s] / (m[s] + f[s] > 0 ? m[s] + f[s] : 1) } }' \
  "$GUIDE" > "$RT_OUT/table_guide.md"

# ---- the report ----
report_begin "Model-guided search efficiency: tuning curves and trials to within 5%"
report_data "$DB"
report "The question: on spaces whose every schedule was measured, how quickly does rooftune's
cost-model-guided strategy (\`model\`: measure the best predictions, recalibrate as results
arrive, explore where the model disagrees) come near the optimum, against the model-free
strategies and random search? Every run replays the recorded trials of
\`$(echo "$DB_IN" | sed "s|^$RT_ROOT/||")\` (copied to \`$(basename "$DB")\` here, the database this
run used): a trial costs no time, its result is the one recorded. Strategies: $(echo "$STRATS" | sed 's/,/, /g');
$REPEATS runs each (seeds 1 to $REPEATS) on every space, budget $BUDGET of the space."
report "## The spaces

schedules: the space's size (all measured); optimum: its best measured time; the model-guided
strategy starts from the kernel's latest stored calibration (fitted on other workloads of the
kernel: experiments/fidelity) and recalibrates during the run.

| space | workload | space file | schedules | optimum (s) | model's starting calibration |
|---|---|---|---|---|---|
$(cat "$RT_OUT/spaces_table.md")"
[ -n "$RECALS" ] && report "Calibrated again in the copy (their latest stored calibration predates the
uncertainty, or is of an older form of the model, which a campaign does not use; same workloads,
hold-out, seed and counters: where only the uncertainty was missing, the same coefficients, now with
the held-out spread of log(measured / predicted) per limiting bound, which the model strategy's lower
confidence bound uses): $(echo $RECALS | sed 's/ /, /g') (\`recalibrate_<kernel>.txt\`)."
report "## Trials to come within 5% of the optimum

The first trial whose best-so-far time is within 5% of the optimum, over the runs of each
strategy: median and quartiles (linear interpolation, type 7); a run that never gets there counts
as the budget + 1 (shown >N); vs random: the median over random search's median."
report "| space | strategy | runs | median trials | quartiles | runs within 5% | vs random (median) |
|---|---|---|---|---|---|---|
$(cat "$RT_OUT/table_trials.md")"
report "## The model's fallback

The model-guided strategy hands each round's share to its model-free fallback (bayes) by how well
its recent predictions ranked the measured trials (Spearman over the last 32): the proposals from
each, summed over the model's runs of the whole-space comparison.

| space | from the model | from the fallback | fallback's share |
|---|---|---|---|
$(cat "$RT_OUT/table_guide.md")"
report "## On the time axis

The same runs against the recorded time they spent (compile + verify + measure + framework of each
trial, as recorded): seconds until the best-so-far is within 5% of the optimum (a run that never
gets there counts the space's whole recorded cost), median and quartiles; vs random: the ratio of
the medians."
report "| space | strategy | runs | median seconds | quartiles | runs within 5% | vs random (median) |
|---|---|---|---|---|---|---|
$(cat "$RT_OUT/table_seconds.md")"
report "Time-limited runs (\`rooftune compare --recorded --time-limit S\`, S = $TSHARE of the space's
whole recorded cost; strategies $TIMED): a run stops before a candidate whose predicted cost
(compile median + measuring cost per second x predicted time) would not fit; the model strategy
prefers candidates by predicted gain per predicted second. optimum / best: the optimum's time over
the best found (1: found), median over the runs.

| space | strategy | limit (s) | optimum / best (median) | runs within 5% | evaluations (median) | spent s (median) |
|---|---|---|---|---|---|---|
$(cat "$RT_OUT/table_timed.md")"
report "## Tuning curves"
while read -r lab k set space; do
  n=$(awk -F, 'NR > 1 && $4 + 0 > K { K = $4 + 0 } END { print K }' "$RT_OUT/$lab/curves.csv")
  {
    echo "set title \"$lab ($(echo "$set" | tr ',' ' ')): $n schedules, $REPEATS runs per strategy\""
    echo "set logscale x"
    echo "set xrange [1:$n]; set yrange [0:1.02]"
    echo "set xlabel 'trials'; set ylabel 'optimum time / best time so far'"
    echo "set key bottom right box opaque"
    echo "set grid"
    echo "set style fill transparent solid 0.18 noborder"
    printf "plot 1/1.05 with lines dt 2 lc rgb 'black' title 'within 5%% of the optimum'"
    i=0
    for s in $(echo "$STRATS" | tr ',' ' '); do
      case $s in
        model) c='#d62728' ;; random) c='#555555' ;; annealing) c='#1f77b4' ;; genetic) c='#2ca02c' ;;
        de) c='#9467bd' ;; pso) c='#8c564b' ;; bayes) c='#ff7f0e' ;; bandit) c='#17becf' ;; *) c='#bcbd22' ;;
      esac
      printf ", \\\\\n  '%s' index %d using 1:2:4 with filledcurves lc rgb '%s' notitle" "$RT_OUT/curves_$lab.dat" $i "$c"
      printf ", \\\\\n  '' index %d using 1:3 with lines lw 2 lc rgb '%s' title '%s'" $i "$c" "$s"
      i=$((i + 1))
    done
    printf ", \\\\\n  '%s' index %d using 1:2 with lines dt 3 lw 2 lc rgb '#555555' title 'random, expected (calculated)'\n" "$RT_OUT/curves_$lab.dat" $i
  } | plot "curves_$lab"
  figure "curves_$lab" "$lab: the best time found so far as a fraction of the optimum's speed (optimum time / best time) against trials, median (line) and interquartile band over $REPEATS runs per strategy; dotted grey: the calculated expectation of random search (optimum time / expected best time); dashed: within 5% of the optimum"
done < "$RT_OUT/spaces.txt"
report "The raw data: \`<space>/curves.csv\` (every run's best-so-far time after each trial, the
calculated expectation of random search, and the recorded seconds spent), \`<space>/scores.csv\`
(each run's Willemsen et al. score, and the model's proposals by source), \`<space>/compare.txt\`
(rooftune's summary), \`<space>/timed/\` (the time-limited comparison), \`trials_to_5pct.csv\`
(every run's trials to within 5%), \`seconds_to_5pct.csv\`, \`time_limited.csv\`, \`guide.csv\`,
\`curves_<space>.dat\` (the plotted quartiles)."
report "References: L. Zheng et al., \"Ansor: generating high-performance tensor programs for deep
learning\", OSDI 2020, and T. Chen et al., \"Learning to optimize tensor programs\", NeurIPS 2018
(tuning curves of cost-model-guided search against trials)."
if [ "$RT_QUICK" != 1 ]; then   # the curves are large: compress them once the tables are made
  while read -r lab k set space; do
    gzip -f -9 "$RT_OUT/$lab/curves.csv"
    if [ -f "$RT_OUT/$lab/timed/curves.csv" ]; then gzip -f -9 "$RT_OUT/$lab/timed/curves.csv"; fi
  done < "$RT_OUT/spaces.txt"
fi
report_end
