#!/bin/sh
# experiments/fidelity/run.sh -- experiment 4: cost-model fidelity (README.md
# beside this file). Run it with
#   rooftune experiment run fidelity [--quick] [--out DIR] [-- ARGS]
# ARGS (all optional):
#   --db F          the database with the sampled schedules (default the
#                   recorded experiments/cost_model/results/cost_model.db);
#                   it is copied into the output folder and only the copy is
#                   written (new calibration versions, counted traffic)
#   --workloads F   the kernels and workloads to score (default
#                   experiments/fidelity/workloads.txt; its format is there)
#   --kernels K,..  only these kernels of the list (--quick on the default
#                   list: reduction,conv2d)
#   --seeds N       held-out splits with seeds 1..N (--quick 2, full 3)
#   --holdout F     the share of each sample held out of the fit (0.3)
#   --fingerprint P the stored target whose trials are scored (a prefix of its
#                   fingerprint; needed only when several targets of the
#                   database hold trials of a kernel: by default the one that
#                   holds them, whatever machine runs this)
# Measures no time: it calibrates and scores on the recorded trials of the
# database's target. Traffic the database does not hold for a split's
# training schedules is counted with cachegrind (a simulation of that
# target's caches, not a timing) and kept in the copy.
. experiments/lib.sh

DB_IN=experiments/cost_model/results/cost_model.db
LIST=experiments/fidelity/workloads.txt
KERNELS= NSEEDS= HOLD=0.3 FP=
while [ $# -gt 0 ]; do
  case $1 in
    --db) DB_IN=$(rt_abs "$2"); shift 2 ;;
    --workloads) LIST=$(rt_abs "$2"); shift 2 ;;
    --kernels) KERNELS=$2; shift 2 ;;
    --seeds) NSEEDS=$2; shift 2 ;;
    --holdout) HOLD=$2; shift 2 ;;
    --fingerprint) FP=$2; shift 2 ;;
    *) echo "fidelity: unknown argument '$1' (see experiments/fidelity/README.md)" >&2; exit 2 ;;
  esac
done
if [ "$RT_QUICK" = 1 ]; then
  [ "$LIST" = experiments/fidelity/workloads.txt ] && : "${KERNELS:=reduction,conv2d}"
  : "${NSEEDS:=2}"
else
  : "${NSEEDS:=3}"
fi
[ -r "$DB_IN" ] || { echo "fidelity: cannot read the database $DB_IN" >&2; exit 2; }
[ -r "$LIST" ] || { echo "fidelity: cannot read the workload list $LIST" >&2; exit 2; }

DB="$RT_OUT/$(basename "$DB_IN")"
copy "$DB_IN" "$DB"
ACC="$RT_OUT/accuracy.csv"   # one row per split, kernel, workload and setting
CAL="$RT_OUT/calibrations.csv"
echo "seed,kernel,workload,setting,n,spearman,kendall,top1,top5,top10,median_rel_error" > "$ACC"
echo "seed,kernel,setting,version,train,test,counted,counter_source,rms_log_before,rms_log_after,cap_L1,cap_L2,cap_L3" > "$CAL"
SEEDS="held-out splits 1 to $NSEEDS (model calibrate --seed), $HOLD of each sample held out"
ENV_FIXED="none needed (nothing is timed; counted traffic comes from cachegrind)"
rt db stats --db "$DB" > "$RT_OUT/db_stats_before.txt"

# The kernels of the list this run scores, in its order: "K NC SETS" lines.
grep -v '^[[:space:]]*#' "$LIST" | awk -v only=",$KERNELS," 'NF >= 3 && (only == ",," || index(only, "," $1 ","))' \
  > "$RT_OUT/workloads.txt"
[ -s "$RT_OUT/workloads.txt" ] || { echo "fidelity: no kernel of $LIST selected" >&2; exit 2; }

# acc_rows SEED KERNEL SETTING JSON: the accuracy JSON's workloads as rows of
# accuracy.csv (setting time also gives the defaults' rows).
acc_rows() {
  awk -v seed="$1" -v k="$2" -v setting="$3" '
    function val(s, key) {
      if (!match(s, "\"" key "\":[^,}]*")) return "nan"
      s = substr(s, RSTART + length(key) + 3, RLENGTH - length(key) - 3)
      return s == "null" ? "nan" : s == "true" ? 1 : s == "false" ? 0 : s
    }
    function row(w, s, name) {
      printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", seed, k, w, name, val(s, "n"), val(s, "spearman"),
        val(s, "kendall"), val(s, "top1_within_5pct"), val(s, "top5_within_5pct"),
        val(s, "top10_within_5pct"), val(s, "median_rel_error")
    }
    {
      n = split($0, part, "\\{\"workload\":\"")
      for (i = 2; i <= n; i++) {
        w = substr(part[i], 1, index(part[i], "\"") - 1)
        d = index(part[i], "\"defaults\":{"); c = index(part[i], "\"calibrated\":{")
        if (setting == "time") row(w, substr(part[i], d, c - d), "defaults")
        row(w, substr(part[i], c), setting)
      }
    }' "$4"
}

s=1
while [ "$s" -le "$NSEEDS" ]; do
  mkdir -p "$RT_OUT/seed$s"
  while read -r k nc sets; do
    setargs=
    for w in $sets; do setargs="$setargs --set $w"; done
    for setting in time counters; do
      n=0
      [ $setting = counters ] && n=$nc
      f="$RT_OUT/seed$s/${k}_$setting"
      # shellcheck disable=SC2086
      rt model calibrate --db "$DB" ${FP:+--fingerprint "$FP"} --kernel "$k" $setargs --holdout "$HOLD" \
        --seed "$s" --counters "$n" --json > "$f.calibrate.json"
      v=$(sed -n 's/^{"kernel": *"[^"]*", *"version": *\([0-9]*\),.*/\1/p' "$f.calibrate.json")
      # shellcheck disable=SC2086
      rt model accuracy --db "$DB" ${FP:+--fingerprint "$FP"} --kernel "$k" $setargs --version "$v" \
        --json --csv "$f.csv" > "$f.accuracy.json"
      acc_rows "$s" "$k" "$setting" "$f.accuracy.json" >> "$ACC"
      tr -d '\n' < "$f.calibrate.json" | awk -v seed="$s" -v k="$k" -v setting="$setting" -v v="$v" '
        function val(key,   s) {
          if (!match($0, "\"" key "\": *[^,}]*")) return ""
          s = substr($0, RSTART, RLENGTH)
          sub("^\"" key "\": *", "", s)
          return s
        }
        { printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", seed, k, setting, v, val("train"),
            val("test"), val("counted"), val("counter_source"), val("rms_log_before"),
            val("rms_log_after"), val("cap_L1"), val("cap_L2"), val("cap_L3") }' | tr -d '"' >> "$CAL"
    done
  done < "$RT_OUT/workloads.txt"
  s=$((s + 1))
done
rt db stats --db "$DB" > "$RT_OUT/db_stats_after.txt"

# ---- tables ----
# Table 1: the first split (seed 1).
awk -F, 'NR > 1 && !($2 in ki) { ki[$2] = ++nk } NR > 1 && !($3 in wi) { wi[$3] = ++nw }
  NR > 1 && $1 == 1 {
    printf "%04d%04d%d\t", ki[$2], wi[$3], $4 == "defaults" ? 0 : $4 == "time" ? 1 : 2
    w = $3; sub(/^[^ ]* [^ ]* /, "", w)
    name = $4 == "defaults" ? "defaults" : $4 == "time" ? "calibrated: time terms" : "calibrated: time + counted traffic"
    yn1 = $8 ? "yes" : "no"; yn5 = $9 ? "yes" : "no"; yn10 = $10 ? "yes" : "no"
    printf "| %s | %s | %s | %d | %.3f | %.3f | %s | %s | %s | %.1f%% |\n", $2, w, name, $5, $6, $7, yn1, yn5, yn10, 100 * $11
  }' "$ACC" | sort | cut -f 2- > "$RT_OUT/table_split1.md"
# Table 2: mean and sample standard deviation over the splits.
awk -F, '
  function ms(sum, sq, n) {
    if (n < 1) return "-"
    if (n < 2) return sprintf("%.3f", sum)
    return sprintf("%.3f ± %.3f", sum / n, sqrt((sq - sum * sum / n) / (n - 1)))
  }
  function msp(sum, sq, n) {
    if (n < 1) return "-"
    if (n < 2) return sprintf("%.1f%%", 100 * sum)
    return sprintf("%.1f%% ± %.1f%%", 100 * sum / n, 100 * sqrt((sq - sum * sum / n) / (n - 1)))
  }
  NR > 1 {
    key = $2 SUBSEP $3 SUBSEP $4
    if (!($2 in ki)) ki[$2] = ++nki
    if (!($3 in wi)) wi[$3] = ++nwi
    if (!(key in n)) { order[++nk] = key; n[key] = 0; sk[key] = sprintf("%04d%04d%d", ki[$2], wi[$3], $4 == "defaults" ? 0 : $4 == "time" ? 1 : 2) }
    n[key]++
    if ($6 != "nan") { rs[key] += $6; rq[key] += $6 * $6; rn[key]++ }
    if ($7 != "nan") { ts[key] += $7; tq[key] += $7 * $7; tn[key]++ }
    if ($11 != "nan") { es[key] += $11; eq[key] += $11 * $11; en[key]++ }
    h1[key] += $8; h5[key] += $9; h10[key] += $10; held[key] += $5
  }
  END {
    for (i = 1; i <= nk; i++) {
      key = order[i]; split(key, f, SUBSEP)
      w = f[2]; sub(/^[^ ]* [^ ]* /, "", w)
      name = f[3] == "defaults" ? "defaults" : f[3] == "time" ? "calibrated: time terms" : "calibrated: time + counted traffic"
      printf "%s\t", sk[key]
      printf "| %s | %s | %s | %d | %.1f | %s | %s | %d/%d | %d/%d | %d/%d | %s |\n", f[1], w, name, n[key],
        held[key] / n[key], ms(rs[key], rq[key], rn[key]), ms(ts[key], tq[key], tn[key]),
        h1[key], n[key], h5[key], n[key], h10[key], n[key], msp(es[key], eq[key], en[key])
    }
  }' "$ACC" | sort | cut -f 2- > "$RT_OUT/table_splits.md"

# ---- scatter plots of split 1 ----
report_begin "Cost-model fidelity: predicted against measured time"
report_data "$DB"
report "The question: how well does rooftune's analytical cost model (a roofline per schedule, after
Williams, Waterman and Patterson) rank and predict the measured times of each host kernel's
schedules, with its default coefficients, calibrated on measured times (time terms only), and
calibrated with counted cache traffic as well? Data: the random samples of
\`$(echo "$DB_IN" | sed "s|^$RT_ROOT/||")\` (copied to \`$(basename "$DB")\` here, the database this run
used); workloads in \`workloads.txt\`. Each split holds $HOLD of every sample out of the fit and
scores the model on the held-out schedules only."
report "## Accuracy on the held-out schedules of split 1

n: held-out schedules. Spearman's rho and Kendall's tau-b between predicted and measured time;
top-k: one of the model's k fastest predictions is within 5% of the best measured time; median
error: median of |predicted - measured| / measured. Split 1's training schedules are the ones
whose traffic the recorded database holds (counted with cachegrind). The spread over splits is
in the next table."
report "| kernel | workload | model | n | Spearman | Kendall tau-b | top-1 | top-5 | top-10 | median error |
|---|---|---|---|---|---|---|---|---|---|
$(cat "$RT_OUT/table_split1.md")"
report "## Spread over $NSEEDS held-out splits

Mean ± sample standard deviation over the splits (seeds 1 to $NSEEDS; splits: the number of
them, held out: the mean number of held-out schedules); top-k: the splits where it holds."
report "| kernel | workload | model | splits | held out | Spearman | Kendall tau-b | top-1 | top-5 | top-10 | median error |
|---|---|---|---|---|---|---|---|---|---|---|
$(cat "$RT_OUT/table_splits.md")"
report "## Predicted against measured (split 1)"
while read -r k nc sets; do
  f="$RT_OUT/seed1/$k"
  {
    awk -F, 'NR > 1 { print $(NF - 3), $(NF - 2) }' "$f"_time.csv; printf '\n\n'
    awk -F, 'NR > 1 { print $(NF - 3), $(NF - 1) }' "$f"_time.csv; printf '\n\n'
    awk -F, 'NR > 1 { print $(NF - 3), $(NF - 1) }' "$f"_counters.csv
  } > "$RT_OUT/scatter_$k.dat"
  nh=$(awk 'END { print NR - 1 }' "$f"_time.csv)
  plot "scatter_$k" <<EOF
set title "$k: predicted against measured time, $nh held-out schedules (split 1)"
set logscale xy
set format x '%.0e'; set format y '%.0e'
set xlabel 'measured time (s)'; set ylabel 'predicted time (s)'
set key top left box opaque
set grid
plot '$RT_OUT/scatter_$k.dat' index 0 using 1:2 with points pt 7 ps 0.7 lc rgb '#999999' title 'defaults', \
     '' index 1 using 1:2 with points pt 5 ps 0.6 lc rgb '#1f77b4' title 'calibrated: time terms', \
     '' index 2 using 1:2 with points pt 8 ps 1.2 lc rgb '#d62728' title 'calibrated: time + counted traffic', \
     x with lines dt 2 lc rgb 'black' title 'predicted = measured'
EOF
  figure "scatter_$k" "$k ($(echo "$sets" | tr ' ' ';')): predicted against measured time of the $nh schedules held out of split 1, log-log; grey: default coefficients, blue: calibrated time terms, red: calibrated with counted traffic; the dashed line is a perfect prediction"
done < "$RT_OUT/workloads.txt"

before=$(awk '$1 == "counters" { print $2 }' "$RT_OUT/db_stats_before.txt")
after=$(awk '$1 == "counters" { print $2 }' "$RT_OUT/db_stats_after.txt")
report "## Calibrations

Every calibration this run made is in \`calibrations.csv\` (its version in the database copy,
the schedules fitted and held out, how many had counted traffic and from which source, the rms of
log(predicted/measured) on the fitted ones before and after); the JSON of each is under
\`seed*/\`, the scored schedules (workload, configuration, measured, predicted) in
\`seed*/<kernel>_<setting>.csv\`, all rows of the tables in \`accuracy.csv\`. The database held
counted traffic for $before schedules before the run and $after after it ($((after - before)) counted by
this run with cachegrind)."
report "Capacity shares fitted to the counted traffic (split 1; default 0.75 each): where they stay
at the defaults, the counter-data calibration is the time-only one.

| kernel | schedules counted | source | cap_L1 | cap_L2 | cap_L3 | rms log error fitted, before -> after |
|---|---|---|---|---|---|---|
$(awk -F, '$1 == 1 && $3 == "counters" { printf "| %s | %s | %s | %.2f | %.2f | %.2f | %.3f -> %.3f |\n", $2, $7, $8 == "" ? "-" : $8, $11, $12, $13, $9, $10 }' "$CAL")"
report "References: S. Williams, A. Waterman, D. Patterson, \"Roofline: an insightful visual
performance model for multicore architectures\", CACM 52(4), 2009 (the model's bounds);
T. Chen et al., \"Learning to optimize tensor programs\", NeurIPS 2018 (ranking quality of a cost
model that guides tuning, the measure used here)."
report_end
