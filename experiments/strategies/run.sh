#!/bin/sh
# experiments/strategies/run.sh -- comparing optimisation algorithms on T4
# recordings with the methodology of Willemsen et al. (README.md: the
# question, the method, how to read the result). Run it as
#   rooftune experiment run strategies [--quick] [-- OPTIONS [T4FILE T1FILE]...]
# OPTIONS: --repeats R, --cutoff P, --budget N, --strategies LIST, --seed S,
# --jobs J, --control N (README.md). Everything it writes goes under $RT_OUT.
. "$RT_ROOT/experiments/lib.sh"
export LC_ALL=C

# ---- options and inputs ----
if [ "$RT_QUICK" = 1 ]; then REPEATS=3; CAP=100; CONTROL=50; else REPEATS=10; CAP=0; CONTROL=200; fi
CUTOFF=0.95 BUDGET= STRATS=all SEED=1 JOBS=$(nproc 2>/dev/null || echo 1)
die() { echo "strategies: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --repeats|--cutoff|--budget|--strategies|--seed|--jobs|--control)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --repeats) REPEATS=$2 ;; --cutoff) CUTOFF=$2 ;; --budget) BUDGET=$2 ;;
        --strategies) STRATS=$2 ;; --seed) SEED=$2 ;; --jobs) JOBS=$2 ;;
        --control) CONTROL=$2 ;;
      esac
      shift 2 ;;
    --) shift ;;
    -*) die "unknown option $1 (README.md lists them)" ;;
    *) break ;;
  esac
done
if [ $# -eq 0 ]; then
  D="$RT_ROOT/data"
  set -- "$D/t4/convolution_milo_A100_T4.json.gz" "$D/t1/convolution_milo.json" \
         "$D/t4/convolution_milo_A4000_T4.json.gz" "$D/t1/convolution_milo.json" \
         "$D/t4/dedispersion_milo_A100_T4.json.gz" "$D/t1/dedispersion_milo.json" \
         "$D/t4/pnpoly_RTX_3090_T4.json.gz" "$D/t1/pnpoly.json"
fi
[ $(( $# % 2 )) -eq 0 ] || die "expected pairs T4FILE T1FILE, got $# files"
SEED_LAST=$((SEED + REPEATS - 1))
SEEDS=$(i=$SEED; s=; while [ $i -le $SEED_LAST ]; do s="$s${s:+, }$i"; i=$((i + 1)); done; echo "$s")
SEEDS="$SEEDS (repeat r of every strategy on every recording runs with seed $SEED + r)"
[ "$CONTROL" -gt 0 ] &&
  SEEDS="$SEEDS; the control: random search with seeds 100001..$((100000 + CONTROL))"
ENV_FIXED="LC_ALL=C (sorting and number formats of the tables)"
DB="$RT_OUT/strategies.db"

report_begin "Comparing optimisation algorithms on T4 recordings"

# rt_log ARGS: log a rooftune command in commands.txt without running it
# (the parallel jobs below run what was logged).
rt_log() { log rooftune "$@"; }

# ---- 1. every recording into the database; its statistics and budget ----
# inputs.csv: key,t4,t1,kernel,configs,valid,optimum_s,median_s,target_s,
#             cutoff_budget,budget,median_eval_cost_s
echo "key,t4,t1,kernel,configs,valid,optimum_s,median_s,target_s,cutoff_budget,budget,median_eval_cost_s" \
  > "$RT_OUT/inputs.csv"
while [ $# -gt 0 ]; do
  t4=$(rt_abs "$1") t1=$(rt_abs "$2")
  shift 2
  [ -r "$t4" ] || die "$t4: not readable"
  [ -r "$t1" ] || die "$t1: not readable"
  kernel=$(basename "$t1" .json)
  key=$(basename "$t4"); key=${key%.gz}; key=${key%.json}; key=${key%_T4}
  mkdir -p "$RT_OUT/$key/runs"
  rt db import --db "$DB" --t4 "$t4" --space "$t1" --target "$key" --kernel "$kernel" >/dev/null
  rt db export --db "$DB" --target "$key" --kernel "$kernel" --format csv \
     --out "$RT_OUT/$key/trials.csv" >/dev/null
  # the valid times sorted; the recorded cost of each evaluation sorted
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
           $c["status"] == "ok" { print $c["time"] }' "$RT_OUT/$key/trials.csv" | sort -g \
    > "$RT_OUT/$key/.times"
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
           { print $c["compile_s"] + $c["verify_s"] + $c["bench_s"] + $c["framework_s"] }' \
    "$RT_OUT/$key/trials.csv" | sort -g > "$RT_OUT/$key/.costs"
  configs=$(($(wc -l < "$RT_OUT/$key/trials.csv") - 1))
  cost=$(awk '{ v[++n] = $1 } END { printf "%.6g", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }' \
         "$RT_OUT/$key/.costs")
  # Willemsen et al.'s cutoff: the target value opt + (median - opt)(1 - P);
  # i valid configurations are worse than it, and random search needs
  # ceil(i / (N + 1 - i)) evaluations to reach it; their software adds 10%
  # for invalid evaluations.
  awk -v p="$CUTOFF" -v cap="$CAP" -v fixed="$BUDGET" -v key="$key" -v t4="$t4" -v t1="$t1" \
      -v kernel="$kernel" -v configs="$configs" -v cost="$cost" -v root="$RT_ROOT/" '
    { v[++n] = $1 }
    END {
      if (n == 0) { print "strategies: " t4 ": no valid configuration" > "/dev/stderr"; exit 1 }
      med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      opt = v[1]; target = opt + (med - opt) * (1 - p)
      i = 0; for (k = 1; k <= n; k++) if (v[k] > target) i++
      f = i / (n + 1 - i); fe = int(f); if (fe < f) fe++
      b = 1.1 * fe; bud = int(b); if (bud < b) bud++
      if (bud < 2) bud = 2
      cut = bud
      if (fixed != "") bud = fixed
      if (cap > 0 && bud > cap) bud = cap
      if (bud > configs) bud = configs
      if (index(t4, root) == 1) t4 = substr(t4, length(root) + 1)
      if (index(t1, root) == 1) t1 = substr(t1, length(root) + 1)
      printf "%s,%s,%s,%s,%d,%d,%.9g,%.9g,%.9g,%d,%d,%s\n", key, t4, t1, kernel, configs, n, opt,
             med, target, cut, bud, cost
    }' "$RT_OUT/$key/.times" >> "$RT_OUT/inputs.csv"
  rm -f "$RT_OUT/$key/.times" "$RT_OUT/$key/.costs"
done

# ---- 2. the strategies: those `compare --strategies all` runs on a recording ----
first=$(awk -F, 'NR == 2 { print $1 }' "$RT_OUT/inputs.csv")
if [ "$STRATS" = all ]; then
  set -- $(awk -F, 'NR == 2 { print $2, $3 }' "$RT_OUT/inputs.csv")
  case $1 in /*) ;; *) set -- "$RT_ROOT/$1" "$RT_ROOT/$2" ;; esac
  rt compare --t4 "$1" --space "$2" --strategies all --repeats 1 --budget 1 \
     --csv "$RT_OUT/.probe" >/dev/null 2>&1
  STRATS=$(awk -F, 'NR > 1 { printf "%s%s", n++ ? "," : "", $1 }' "$RT_OUT/.probe/scores.csv")
  rm -rf "$RT_OUT/.probe"
fi
echo "$STRATS" | tr , '\n' | awk '{ printf "%02d %s\n", NR, $1 }' > "$RT_OUT/.order"

# ---- 3. the runs. Full run: one job per recording x strategy x chunk of
# <= 10 seeds, the model-based strategies and the largest budgets first,
# $JOBS at a time; quick run: one job per recording. Every job's command is
# logged; a run depends only on its strategy, seed and budget, so the split
# changes nothing in the data ----
if [ "$RT_QUICK" = 1 ]; then CHUNK=$REPEATS; GROUPS_=$STRATS
else CHUNK=10; GROUPS_=$(awk '$2 ~ /^(bayes|bandit|model)$/ { print $2 }' "$RT_OUT/.order"
                        awk '$2 !~ /^(bayes|bandit|model)$/ { print $2 }' "$RT_OUT/.order"); fi
: > "$RT_OUT/.jobs"
for g in $GROUPS_; do
  tail -n +2 "$RT_OUT/inputs.csv" | sort -t, -k11,11nr -k1,1 | while IFS=, read -r key t4 t1 kernel rest; do
    case $t4 in /*) ;; *) t4="$RT_ROOT/$t4" ;; esac
    case $t1 in /*) ;; *) t1="$RT_ROOT/$t1" ;; esac
    bud=$(echo "$rest" | cut -d, -f7)
    c=$SEED
    while [ "$c" -le "$SEED_LAST" ]; do
      n=$((SEED_LAST - c + 1)); [ "$n" -gt "$CHUNK" ] && n=$CHUNK
      dir="$RT_OUT/$key/runs/$(echo "$g" | tr , +)-$c"
      rt_log compare --t4 "$t4" --space "$t1" --strategies "$g" --repeats "$n" --seed "$c" \
             --budget "$bud" --csv "$dir"
      echo "compare --t4 $t4 --space $t1 --strategies $g --repeats $n --seed $c --budget $bud --csv $dir" \
        >> "$RT_OUT/.jobs"
      c=$((c + n))
    done
  done
done
# the control: random search over CONTROL seeds of its own (from 100001,
# apart from the repeats') on every recording, to check that the runs'
# random row and the exact expectation agree (section 6)
CSEED=100001
if [ "$CONTROL" -gt 0 ]; then
  tail -n +2 "$RT_OUT/inputs.csv" | while IFS=, read -r key t4 t1 kernel rest; do
    case $t4 in /*) ;; *) t4="$RT_ROOT/$t4" ;; esac
    case $t1 in /*) ;; *) t1="$RT_ROOT/$t1" ;; esac
    bud=$(echo "$rest" | cut -d, -f7)
    rt_log compare --t4 "$t4" --space "$t1" --strategies random --repeats "$CONTROL" --seed "$CSEED" \
           --budget "$bud" --csv "$RT_OUT/$key/control"
    echo "compare --t4 $t4 --space $t1 --strategies random --repeats $CONTROL --seed $CSEED --budget $bud --csv $RT_OUT/$key/control" \
      >> "$RT_OUT/.jobs"
  done
fi
# xargs splits on blanks: the paths must not contain any (README.md)
xargs -P "$JOBS" -L 1 "$ROOFTUNE" < "$RT_OUT/.jobs" > "$RT_OUT/jobs.log" 2>&1 ||
  die "a compare job failed (jobs.log)"

# ---- 4. merged raw data, in the order strategy, seed, evaluation: per
# recording and over all of them ----
# merge FILE: the runs' FILE (scores.csv or curves.csv) of one recording
merge() {
  head -n 1 "$(ls "$RT_OUT/$key/runs"/*/"$1" | head -n 1)"
  for f in "$RT_OUT/$key/runs"/*/"$1"; do
    awk -F, -v OFS=, -v s0="$SEED" 'NR == FNR { split($0, o, " "); idx[o[2]] = o[1]; next }
      FNR > 1 { $2 = $3 - s0; print idx[$1], $0 }' "$RT_OUT/.order" "$f"
  done | sort -t, -k1,1 -k4,4n -k5,5n | cut -d, -f2-
}
echo "recording,strategy,repeat,seed,score,best_s,evaluations,cost_s,framework_ms_per_eval" \
  > "$RT_OUT/scores.csv"
for key in $(tail -n +2 "$RT_OUT/inputs.csv" | cut -d, -f1); do
  merge scores.csv > "$RT_OUT/$key/scores.csv"
  merge curves.csv > "$RT_OUT/$key/curves.csv"
  rm -rf "$RT_OUT/$key/runs"
  if [ "$CONTROL" -gt 0 ]; then
    mv "$RT_OUT/$key/control/scores.csv" "$RT_OUT/$key/control_scores.csv"
    rm -rf "$RT_OUT/$key/control"
  fi
  tail -n +2 "$RT_OUT/$key/scores.csv" | sed "s/^/$key,/" >> "$RT_OUT/scores.csv"
done

# ---- 5. statistics ----
# qstats: "GROUP VALUE" lines sorted by group, then value -> "GROUP n mean sd
# sem min q1 median q3 max" (quartiles interpolated linearly between order
# statistics; sd with n - 1; sem = sd / sqrt(n))
qstats() {
  sort -k1,1 -k2,2g | awk '
    function flush(   i, m, s, h, l, q, r) {
      if (n == 0) return
      m = 0; for (i = 1; i <= n; i++) m += v[i]; m /= n
      s = 0; for (i = 1; i <= n; i++) s += (v[i] - m) ^ 2
      s = n > 1 ? sqrt(s / (n - 1)) : 0
      for (r = 1; r <= 3; r++) {
        h = (n - 1) * r / 4 + 1; l = int(h)
        q[r] = l < n ? v[l] + (h - l) * (v[l + 1] - v[l]) : v[n]
      }
      printf "%s %d %.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", g, n, m, s, s / sqrt(n), v[1], q[1], q[2], q[3], v[n]
      n = 0
    }
    $1 != g { flush(); g = $1 }
    { v[++n] = $2 }
    END { flush() }'
}
# the strategy of an index and back: .order holds "NN name"
KEYS=$(tail -n +2 "$RT_OUT/inputs.csv" | cut -d, -f1)
echo "recording,strategy,n,score_mean,score_sd,score_sem,score_min,score_q1,score_median,score_q3,score_max,best_fraction_mean,best_fraction_sem,runs_finding_optimum,cost_mean_s,cost_sem_s,evaluations_mean,random_expected_best_s" \
  > "$RT_OUT/summary.csv"
echo "recording,strategy,n,framework_ms_per_eval_mean,framework_ms_per_eval_sem" > "$RT_OUT/overhead.csv"
for key in $KEYS; do
  opt=$(awk -F, -v k="$key" '$1 == k { print $7 }' "$RT_OUT/inputs.csv")
  bud=$(awk -F, -v k="$key" '$1 == k { print $11 }' "$RT_OUT/inputs.csv")
  rnd=$(awk -F, -v b="$bud" 'NR > 1 && $4 == b { print $6; exit }' "$RT_OUT/$key/curves.csv")
  S="$RT_OUT/$key/scores.csv"
  # strategy name -> its index, on every line of a per-run metric
  metric() {
    awk -F, -v opt="$opt" -v m="$1" 'NR == FNR { split($0, o, " "); idx[o[2]] = o[1]; next }
      FNR > 1 {
        if (m == "score") v = $4; else if (m == "frac") v = opt / $5
        else if (m == "found") v = $5 <= opt * (1 + 1e-8); else if (m == "cost") v = $7
        else if (m == "evals") v = $6; else v = $8
        print idx[$1], v
      }' "$RT_OUT/.order" "$S" | qstats
  }
  metric score > "$RT_OUT/.score"; metric frac > "$RT_OUT/.frac"; metric found > "$RT_OUT/.found"
  metric cost > "$RT_OUT/.cost"; metric evals > "$RT_OUT/.evals"; metric overhead > "$RT_OUT/.over"
  join "$RT_OUT/.order" "$RT_OUT/.score" | join - "$RT_OUT/.frac" | join - "$RT_OUT/.found" |
    join - "$RT_OUT/.cost" | join - "$RT_OUT/.evals" |
    awk -v key="$key" -v rnd="$rnd" -v OFS=, '{
      # 1 idx, 2 name, then n mean sd sem min q1 median q3 max of: 3..11 the
      # score, 12..20 best/optimum, 21..29 found, 30..38 cost, 39..47 evaluations
      printf "%s,%s,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%.6g,%.6g,%.6g,%.9g\n",
        key, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $13, $15, int($21 * $22 + 0.5), $31, $33, $40, rnd }' \
    >> "$RT_OUT/summary.csv"
  join "$RT_OUT/.order" "$RT_OUT/.over" |
    awk -v key="$key" '{ printf "%s,%s,%d,%.4f,%.4f\n", key, $2, $3, $4, $6 }' >> "$RT_OUT/overhead.csv"
  rm -f "$RT_OUT/.score" "$RT_OUT/.frac" "$RT_OUT/.found" "$RT_OUT/.cost" "$RT_OUT/.evals" "$RT_OUT/.over"

  # curves: per strategy and evaluation k, the quartiles over repeats of the
  # best so far as a fraction of the optimum; random search's expectation
  awk -F, -v opt="$opt" 'NR == FNR { split($0, o, " "); idx[o[2]] = o[1]; next }
    FNR > 1 { print idx[$1] "_" sprintf("%07d", $4), opt / $5 }' "$RT_OUT/.order" "$RT_OUT/$key/curves.csv" |
    qstats | awk -v opt="$opt" -F'[ _]' 'NR == FNR { if (FNR > 1 && !($4 in r)) r[$4 + 0] = opt / $6; next }
      $1 != last { if (NR > FNR && last != "") printf "\n\n"; last = $1 }
      { printf "%s %d %.6f %.6f %.6f %.6f\n", $1, $2, $8, $9, $10, r[$2 + 0] }' \
      FS=, "$RT_OUT/$key/curves.csv" FS='[ _]' - > "$RT_OUT/curves_$key.dat"
done

# aggregate scores: per strategy the mean over recordings of the mean score,
# its standard error propagated from the recordings' (sqrt(sum sem^2) / F)
echo "strategy,recordings,score_mean,score_sem,min_recording_mean,max_recording_mean,best_fraction_mean" \
  > "$RT_OUT/aggregate.csv"
awk -F, 'NR == FNR { split($0, o, " "); idx[o[2]] = o[1]; next } FNR > 1 { print idx[$2], $2, $4, $6, $12 }' \
  "$RT_OUT/.order" "$RT_OUT/summary.csv" | sort -k1,1 -s |
  awk -v OFS=, '$1 != g { if (g != "") out(); g = $1; name = $2; n = s = e = f = 0; lo = hi = $3 }
    { n++; s += $3; e += $4 * $4; f += $5; if ($3 < lo) lo = $3; if ($3 > hi) hi = $3 }
    function out() { printf "%s,%d,%.6f,%.6f,%.6f,%.6f,%.6f\n", name, n, s / n, sqrt(e) / n, lo, hi, f / n }
    END { if (g != "") out() }' >> "$RT_OUT/aggregate.csv"

# the control: per recording, random search's mean score over CONTROL seeds,
# its SEM and z = mean / SEM (|z| < 3 expected when the random strategy and
# the exact expectation agree)
echo "recording,n,score_mean,score_sd,score_sem,z" > "$RT_OUT/control.csv"
if [ "$CONTROL" -gt 0 ]; then
  for key in $KEYS; do
    awk -F, 'FNR > 1 { print "x", $4 }' "$RT_OUT/$key/control_scores.csv" | qstats |
      awk -v key="$key" '{ printf "%s,%d,%.6f,%.6f,%.6f,%.3f\n", key, $2, $3, $4, $5, ($5 > 0 ? $3 / $5 : 0) }' \
      >> "$RT_OUT/control.csv"
  done
fi

# aggregate curve: at q = 1..100% of each recording's budget, the
# standardised score of the best so far, (E_random[k] - best[k]) /
# (E_random[k] - optimum), averaged over the recordings for each repeat;
# then the quartiles over repeats
for key in $KEYS; do
  opt=$(awk -F, -v k="$key" '$1 == k { print $7 }' "$RT_OUT/inputs.csv")
  bud=$(awk -F, -v k="$key" '$1 == k { print $11 }' "$RT_OUT/inputs.csv")
  awk -F, -v opt="$opt" -v b="$bud" -v key="$key" '
    BEGIN { for (q = 1; q <= 100; q++) { k = int((q * b + 99) / 100); want[k] = want[k] " " q } }
    NR == FNR { split($0, o, " "); idx[o[2]] = o[1]; next }
    FNR > 1 && ($4 in want) && $6 - opt > 1e-12 * opt {
      nq = split(want[$4], qs, " ")
      for (i = 1; i <= nq; i++) print idx[$1], $2, qs[i], ($6 - $5) / ($6 - opt)
    }' "$RT_OUT/.order" "$RT_OUT/$key/curves.csv"
done | sort -k1,1 -k2,2n -k3,3n | awk '
  { g = $1 " " $2 " " $3 }
  g != last { if (last != "") print out, s / n; last = g; out = $1 "_" sprintf("%03d", $3); s = n = 0 }
  { s += $4; n++ }
  END { if (last != "") print out, s / n }' | qstats | awk -F'[ _]' '
  $1 != last { if (last != "") printf "\n\n"; last = $1 }
  { printf "%s %d %.6f %.6f %.6f\n", $1, $2, $8, $9, $10 }' > "$RT_OUT/curves_aggregate.dat"

# ---- 6. tables (tables.md: from the CSV files only) ----
T="$RT_OUT/tables.md"
{
  echo "### The recordings and their budgets"
  echo
  echo "| recording | space | configurations | valid | optimum (s) | median (s) | cutoff target (s) | cutoff budget | budget used | time budget (s) |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$RT_OUT/inputs.csv" | awk -F, '{ printf "| %s | %s | %d | %d | %.6g | %.6g | %.6g | %d | %d | %.1f |\n",
    $1, $4, $5, $6, $7, $8, $9, $10, $11, $11 * $12 }'
  echo
  echo "The cutoff target is optimum + (median - optimum) x (1 - $CUTOFF); the cutoff"
  echo "budget the evaluations random search needs to reach it, + 10%; the time budget"
  echo "the budget used x the median recorded cost of one evaluation (compile +"
  echo "verify + runs + framework)."
  echo
  for key in $KEYS; do
    awk -F, -v k="$key" -v R="$REPEATS" '
      NR == FNR { if ($1 == k) { opt = $7; bud = $11 } next }
      FNR == 2 && $1 == k || $1 == k && !done { done = 1
        printf "### %s: %d evaluations, %d repeats\n\n", k, bud, R
        printf "Random search'\''s expected best after %d evaluations (computed exactly over the\n", bud
        printf "recording): %.6g s, %.2f%% of the optimum %.6g s; its standardised score is 0.\n\n", $18, 100 * opt / $18, opt
        print "| strategy | score (mean ± SEM) | sd | min | Q1 | median | Q3 | max | best/optimum (mean ± SEM) | runs finding the optimum | recorded time (s, mean ± SEM) |"
        print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      }
      $1 == k { printf "| %s | %.3f ± %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f%% ± %.2f | %d/%d | %.1f ± %.1f |\n",
        $2, $4, $6, $5, $7, $8, $9, $10, $11, 100 * $12, 100 * $13, $14, $3, $15, $16 }' \
      "$RT_OUT/inputs.csv" "$RT_OUT/summary.csv"
    echo
  done
  echo "### Over all recordings"
  echo
  echo "| strategy | recordings | mean score ± SEM | lowest recording's mean | highest recording's mean | best/optimum (mean) |"
  echo "|---|---:|---:|---:|---:|---:|"
  tail -n +2 "$RT_OUT/aggregate.csv" | awk -F, '{ printf "| %s | %d | %.3f ± %.3f | %.3f | %.3f | %.2f%% |\n",
    $1, $2, $3, $4, $5, $6, 100 * $7 }'
  echo
  if [ "$CONTROL" -gt 0 ]; then
    echo "### Control: random search over $CONTROL seeds ($CSEED..$((CSEED + CONTROL - 1)))"
    echo
    echo "Its mean score estimates the exact expectation's 0; z = mean / SEM."
    echo
    echo "| recording | runs | score (mean ± SEM) | sd | z |"
    echo "|---|---:|---:|---:|---:|"
    tail -n +2 "$RT_OUT/control.csv" | awk -F, '{ printf "| %s | %d | %.3f ± %.3f | %.3f | %.2f |\n",
      $1, $2, $3, $5, $4, $6 }'
    echo
  fi
} > "$T"

# ---- 7. figures ----
NS=$(wc -l < "$RT_OUT/.order")
# col I: the I-th colour (1-based; black is random search's expectation)
col() {
  echo "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf" |
    awk -v i="$1" '{ print $(1 + (i - 1) % NF) }'
}
# bands FILE: the plot clauses of every strategy's quartile band and median
# line from FILE (blocks in .order's order: x, Q1, median, Q3 in columns 2-5)
bands() {
  i=0
  while read -r idx s; do
    printf "'%s' index %d using 2:3:5 with filledcurves fs transparent solid 0.15 noborder lc rgb '%s' notitle, " \
      "$1" "$i" "$(col $((i + 1)))"
    printf "'' index %d using 2:4 with lines lw 2 lc rgb '%s' title '%s', " "$i" "$(col $((i + 1)))" "$s"
    i=$((i + 1))
  done < "$RT_OUT/.order"
}
for key in $KEYS; do
  {
    echo "set termoption noenhanced"
    echo "set title '$key: best so far over the budget (median and quartiles of $REPEATS repeats)' noenhanced"
    echo "set xlabel 'evaluations'; set ylabel 'best found / optimum'; set key bottom right"
    echo "set grid; set yrange [*:1.005]"
    printf "plot "
    bands "$RT_OUT/curves_$key.dat"
    printf "'' index 0 using 2:6 with lines lw 2 dt 2 lc rgb 'black' title 'random search (expected)'\n"
  } | plot "curve_$key"
done
{
  echo "set termoption noenhanced; set yrange [-1:1.05]"
  echo "set title 'All recordings: standardised score of the best so far (median and quartiles of $REPEATS repeats)'"
  echo "set xlabel 'budget used (% of each recording''s budget)'"
  echo "set ylabel 'score: 0 = random search expected, 1 = optimum'; set key bottom right; set grid"
  printf "plot "
  bands "$RT_OUT/curves_aggregate.dat"
  printf "0 with lines lw 1 dt 2 lc rgb 'black' title 'random search (expected)'\n"
} | plot curve_aggregate
# the spread of the scores: per strategy, one box (quartiles, median line,
# whiskers to the extremes) per recording
NF=$(echo "$KEYS" | wc -w)
awk -F, -v nf="$NF" 'NR == FNR { split($0, o, " "); idx[o[2]] = o[1] + 0; next }
  FNR > 1 { if (!($1 in f)) f[$1] = ++nfile
    x = idx[$2] + (f[$1] - (nf + 1) / 2) * 0.8 / nf
    print f[$1], x, $7, $8, $9, $10, $11 }' "$RT_OUT/.order" "$RT_OUT/summary.csv" |
  sort -k1,1n -k2,2g | awk 'NR > 1 && $1 != last { printf "\n\n" } { last = $1; print }' > "$RT_OUT/spread.dat"
{
  echo "set termoption noenhanced; set yrange [-1:1.05]"
  echo "set title 'Spread of the scores over $REPEATS repeats (box: quartiles and median; whiskers: min and max)'"
  echo "set ylabel 'score: 0 = random search expected, 1 = optimum'; set grid ytics; set key bottom right"
  echo "set xrange [0.4:$NS.6]; set boxwidth $(awk -v n="$NF" 'BEGIN { printf "%.3f", 0.7 / n }') absolute"
  printf "set xtics ("
  awk '{ printf "%s\"%s\" %d", (NR > 1 ? ", " : ""), $2, $1 + 0 }' "$RT_OUT/.order"
  echo ") noenhanced"
  printf "plot "
  i=0
  for key in $KEYS; do
    printf "'%s' index %d using 2:4:3:7:6 with candlesticks whiskerbars lw 1.5 lc rgb '%s' title '%s', " \
      "$RT_OUT/spread.dat" "$i" "$(col $((i + 1)))" "$key"
    printf "'' index %d using 2:5:5:5:5 with candlesticks lw 2 lc rgb '%s' notitle, " "$i" "$(col $((i + 1)))"
    i=$((i + 1))
  done
  echo "0 with lines dt 2 lc rgb 'black' notitle"
} | plot spread

# ---- 8. the report ----
report "## The question and the method

Which search strategy finds fast configurations with the fewest evaluations?
Every strategy that \`rooftune compare --strategies $STRATS\` runs on a recording
was replayed on each T4 recording below, $REPEATS times (seeds $SEED..$SEED_LAST),
with the budget of evaluations in the table (Willemsen et al.'s cutoff at
P = $CUTOFF$( [ -n "$BUDGET" ] && echo ", replaced by --budget $BUDGET")$( [ "$CAP" -gt 0 ] && echo ", capped at $CAP evaluations in this quick run")).
The score of a run (tuner/tu_score.c) is the mean over k = 1..budget of
(E_random[k] - best[k]) / (E_random[k] - optimum): 0 is random search without
replacement in expectation (computed exactly, not sampled), 1 the optimum from
the first evaluation. The \`random\` row is random search actually run: its
mean score estimates 0, but the score is skewed (an unlucky start costs more
than a lucky one gains), so over $REPEATS repeats its mean can sit a few SEM from
0$( [ "$CONTROL" -gt 0 ] && echo "; the control table runs it over $CONTROL further seeds, where the
mean must come within 3 SEM of 0 if the strategy and the exact expectation
agree")."
report "## Tables"
report_file "$T"
report "## Curves"
for key in $KEYS; do
  figure "curve_$key" "$key: the best configuration found so far as a fraction of the optimum (time of the optimum / time of the best), median over $REPEATS repeats with the band between the quartiles; dashed: random search's exact expectation."
done
figure curve_aggregate "All recordings: the standardised score of the best so far at each percentage of each recording's budget, averaged over the recordings for each repeat; median and quartiles over $REPEATS repeats. 0 (dashed) is random search's expectation."
report "## Spread over repeats"
figure spread "The scores of the $REPEATS repeats per strategy and recording: box from the first to the third quartile with the median, whiskers to the lowest and highest score."
report "## Strategy overhead (measured here, not part of the tables)

Wall time of the strategy itself per evaluation on this machine (ms, mean ±
SEM over $REPEATS runs); unlike everything above it varies from run to run.

| recording | strategy | ms per evaluation |
|---|---|---:|
$(tail -n +2 "$RT_OUT/overhead.csv" | awk -F, '{ printf "| %s | %s | %.4f ± %.4f |\n", $1, $2, $4, $5 }')"
report "## Files

\`inputs.csv\` (recordings, budgets), \`scores.csv\` (every run: score, best,
evaluations, recorded cost, overhead), \`summary.csv\`, \`aggregate.csv\`,
\`overhead.csv\`, \`control.csv\`, per recording \`KEY/trials.csv\` (the recording as rooftune
stores it), \`KEY/scores.csv\`, \`KEY/control_scores.csv\` (the control's runs) and
\`KEY/curves.csv\` (the best so far of every run at every evaluation, with random
search's expectation; this and trials.csv gzipped in the full run), the plotted data
(\`*.dat\`), the gnuplot scripts (\`*.gp\`), \`strategies.db\` (the recordings
imported), \`jobs.log\` (what the compare jobs printed)."
rm -f "$RT_OUT/.order" "$RT_OUT/.jobs"
# the full run's large CSVs, compressed (zcat reads them)
if [ "$RT_QUICK" != 1 ]; then
  for key in $KEYS; do gzip -f -9 "$RT_OUT/$key/curves.csv" "$RT_OUT/$key/trials.csv"; done
fi
report_end
