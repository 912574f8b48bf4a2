#!/bin/sh
# experiments/portability/run.sh -- portability of tuned configurations
# across GPUs (README.md: the question, the method, how to read the result).
# Run it as
#   rooftune experiment run portability [--quick] [-- [--top K,K,...] [T1FILE T4FILE T4FILE...]]
# Everything it writes goes under $RT_OUT. The computation is small: the
# quick run is the full run.
. "$RT_ROOT/experiments/lib.sh"
export LC_ALL=C

TOP=1,5,10
die() { echo "portability: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --top) [ $# -ge 2 ] || die "--top needs a value"; TOP=$2; shift 2 ;;
    --) shift ;;
    -*) die "unknown option $1 (README.md lists them)" ;;
    *) break ;;
  esac
done
if [ $# -eq 0 ]; then
  D="$RT_ROOT/data"
  set -- "$D/t1/convolution_milo.json" "$D/t4/convolution_milo_A100_T4.json.gz" \
         "$D/t4/convolution_milo_A4000_T4.json.gz"
fi
[ $# -ge 3 ] || die "expected T1FILE and at least two T4FILEs of that space"
T1=$(rt_abs "$1")
shift
for a in "$@"; do set -- "$@" "$(rt_abs "$a")"; shift; done
[ -r "$T1" ] || die "$T1: not readable"
KERNEL=$(basename "$T1" .json)
DB="$RT_OUT/portability.db"
ENV_FIXED="LC_ALL=C (sorting and number formats of the tables)"
SEEDS="none (nothing here is random: every number is a lookup in the recordings)"

report_begin "Portability of tuned configurations across GPUs"

# ---- 1. each recording into the database; its trials and its ranking ----
: > "$RT_OUT/gpus.txt"
for t4 in "$@"; do
  [ -r "$t4" ] || die "$t4: not readable"
  g=$(basename "$t4"); g=${g%.gz}; g=${g%.json}; g=${g%_T4}; g=${g#"$KERNEL"_}
  n=2; base=$g
  while grep -qx "$g" "$RT_OUT/gpus.txt"; do g="$base-$n"; n=$((n + 1)); done
  echo "$g" >> "$RT_OUT/gpus.txt"
  rt db import --db "$DB" --t4 "$t4" --space "$T1" --target "$g" --kernel "$KERNEL" >/dev/null
  rt db export --db "$DB" --target "$g" --kernel "$KERNEL" --format csv --out "$RT_OUT/trials_$g.csv" >/dev/null
  rt db list --db "$DB" --target "$g" --kernel "$KERNEL" --limit 0 > "$RT_OUT/ranking_$g.txt"
  # ranked_G.csv: rank,trial,config_hash,time_s of the verified trials,
  # fastest first (the order of db list; the times at full precision from
  # the export)
  awk -F, 'NR == FNR { if (FNR == 1) for (i = 1; i <= NF; i++) c[$i] = i
                       else { h[$c["id"]] = $c["config_hash"]; t[$c["id"]] = $c["time"] }
                       next }
           $2 == "trial" && $1 ~ /^[0-9]+$/ { printf "%d,%d,%s,%s\n", $1, $3, h[$3], t[$3] }' \
    "$RT_OUT/trials_$g.csv" FS=' ' "$RT_OUT/ranking_$g.txt" > "$RT_OUT/ranked_$g.csv"
  [ -s "$RT_OUT/ranked_$g.csv" ] || die "$t4: no verified configuration"
done
GPUS=$(cat "$RT_OUT/gpus.txt")

# status_on J: config_hash,status,time_s of every trial on J
status_on() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
           { print $c["config_hash"] "," $c["status"] "," $c["time"] }' "$RT_OUT/trials_$1.csv"
}

# ---- 2. the matrix: source i's optimum looked up on target j ----
echo "source,target,config_hash,source_time_s,target_status,target_time_s,target_optimum_s,fraction" \
  > "$RT_OUT/matrix.csv"
for i in $GPUS; do
  for j in $GPUS; do
    { status_on "$j"; echo "#"; head -n 1 "$RT_OUT/ranked_$i.csv"; echo "#"; head -n 1 "$RT_OUT/ranked_$j.csv"; } |
      awk -F, -v i="$i" -v j="$j" '
        $0 == "#" { part++; next }
        part == 0 { st[$1] = $2; tm[$1] = $3; next }
        part == 1 { h = $3; ts = $4; next }
        part == 2 { opt = $4 }
        END {
          s = (h in st) ? st[h] : "missing"
          if (s == "ok") printf "%s,%s,%s,%s,ok,%s,%s,%.6f\n", i, j, h, ts, tm[h], opt, opt / tm[h]
          else printf "%s,%s,%s,%s,%s,,%s,\n", i, j, h, ts, s, opt
        }' >> "$RT_OUT/matrix.csv"
  done
done

# ---- 3. the top k of i on j, the failures over the whole space, and the
# rank correlation over the configurations valid on both ----
echo "source,target,k,valid_on_target,failed_on_target,missing_on_target,best_fraction,median_fraction,worst_fraction" \
  > "$RT_OUT/topk.csv"
echo "source,target,valid_on_source,valid_on_both,failed_on_target,failed_statuses,missing_on_target,spearman_rho" \
  > "$RT_OUT/failures.csv"
for i in $GPUS; do
  for j in $GPUS; do
    [ "$i" = "$j" ] && continue
    opt=$(head -n 1 "$RT_OUT/ranked_$j.csv" | cut -d, -f4)
    # joined_i_j.csv: rank on i, hash, time on i, status on j, time on j,
    # fraction of j's optimum (empty unless valid on j)
    { status_on "$j"; echo "#"; cat "$RT_OUT/ranked_$i.csv"; } |
      awk -F, -v opt="$opt" -v OFS=, '
        $0 == "#" { part = 1; next }
        !part { st[$1] = $2; tm[$1] = $3; next }
        { s = ($3 in st) ? st[$3] : "missing"
          print $1, $3, $4, s, s == "ok" ? tm[$3] : "", s == "ok" ? sprintf("%.6f", opt / tm[$3]) : "" }' \
      > "$RT_OUT/joined_${i}_$j.csv"
    for k in $(echo "$TOP" | tr , ' '); do
      awk -F, -v k="$k" '$1 <= k' "$RT_OUT/joined_${i}_$j.csv" | sort -t, -k6,6g |
        awk -F, -v i="$i" -v j="$j" -v k="$k" '
          { if ($4 == "ok") v[++n] = $6; else if ($4 == "missing") miss++; else fail++ }
          END {
            if (n) { med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
                     printf "%s,%s,%d,%d,%d,%d,%.6f,%.6f,%.6f\n", i, j, k, n, fail, miss, v[n], med, v[1] }
            else printf "%s,%s,%d,0,%d,%d,,,\n", i, j, k, fail, miss
          }' >> "$RT_OUT/topk.csv"
    done
    # Spearman's rho: ranks within the configurations valid on both
    awk -F, '$4 == "ok"' "$RT_OUT/joined_${i}_$j.csv" | sort -t, -k3,3g | awk -F, -v OFS=, '{ print NR, $5 }' |
      sort -t, -k2,2g | awk -F, '{ d = $1 - NR; s += d * d; n++ }
        END { if (n > 1) printf "%.4f\n", 1 - 6 * s / (n * (n * n - 1)); else print "" }' > "$RT_OUT/.rho"
    awk -F, -v i="$i" -v j="$j" -v rho="$(cat "$RT_OUT/.rho")" '
      { n++; if ($4 == "ok") both++; else if ($4 == "missing") miss++; else { fail++; f[$4]++ } }
      END { s = ""; nk = split("compile_error runtime_error timeout invalid wrong_result", known, " ")
            for (x = 1; x <= nk; x++) if (known[x] in f) { s = s (s == "" ? "" : " ") known[x] ":" f[known[x]]; delete f[known[x]] }
            for (x in f) s = s (s == "" ? "" : " ") x ":" f[x]
            printf "%s,%s,%d,%d,%d,%s,%d,%s\n", i, j, n, both, fail, s, miss, rho }' \
      "$RT_OUT/joined_${i}_$j.csv" >> "$RT_OUT/failures.csv"
  done
done
rm -f "$RT_OUT/.rho"

# ---- 4. tables (tables.md: from the CSV files only) ----
T="$RT_OUT/tables.md"
{
  echo "### The recordings"
  echo
  echo "| GPU | configurations | valid | optimum (s) | optimum's configuration hash |"
  echo "|---|---:|---:|---:|---|"
  for g in $GPUS; do
    awk -F, -v g="$g" 'NR == FNR { if (FNR == 1) { h = $3; t = $4 } ; next }
      FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      { n++; if ($c["status"] == "ok") v++ }
      END { printf "| %s | %d | %d | %.6g | %s |\n", g, n, v, t, h }' \
      "$RT_OUT/ranked_$g.csv" "$RT_OUT/trials_$g.csv"
  done
  echo
  echo "### The matrix: the optimum of the source GPU (row) on the target GPU (column), as a fraction of the target's optimum"
  echo
  printf "| source \\\\ target |"; for j in $GPUS; do printf " %s |" "$j"; done; echo
  printf "|---|"; for j in $GPUS; do printf -- "---:|"; done; echo
  for i in $GPUS; do
    printf "| %s |" "$i"
    for j in $GPUS; do
      awk -F, -v i="$i" -v j="$j" '$1 == i && $2 == j {
        if ($5 == "ok") printf " %.1f%% |", 100 * $8; else printf " %s on target |", $5 }' "$RT_OUT/matrix.csv"
    done
    echo
  done
  echo
  awk -F, 'NR > 1 && $1 != $2 { n++; if ($5 == "ok") { v = $8; if (!lo_set || v < lo) lo = v; if (!lo_set || v > hi) hi = v; lo_set = 1 } else bad++ }
    END { if (lo_set) printf "Off the diagonal (%d pairs): from %.1f%% to %.1f%% of the target'\''s optimum", n, 100 * lo, 100 * hi
          else printf "Off the diagonal (%d pairs): no optimum is valid on another GPU", n
          if (bad) printf "; %d optimum/optima failed or missing on the target", bad
          printf ". BAT 2.0 reports 58.5%% to 99.9%% over its kernels and GPUs.\n" }' "$RT_OUT/matrix.csv"
  echo
  echo "### The top k of the source on the target"
  echo
  echo "The k fastest configurations on the source, each looked up on the target: the"
  echo "best, median and worst of them as a fraction of the target's optimum (over the"
  echo "valid ones), and how many fail or are missing there."
  echo
  echo "| source | target | k | valid on target | failed | missing | best | median | worst |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$RT_OUT/topk.csv" | awk -F, '{ printf "| %s | %s | %d | %d | %d | %d | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6,
    $7 == "" ? "-" : sprintf("%.1f%%", 100 * $7), $8 == "" ? "-" : sprintf("%.1f%%", 100 * $8),
    $9 == "" ? "-" : sprintf("%.1f%%", 100 * $9) }'
  echo
  echo "### The whole space"
  echo
  echo "Of the configurations valid on the source: how many are valid on the target,"
  echo "how many fail there (by the status rooftune gives the target's result) and how"
  echo "many the target's recording lacks; Spearman's rank correlation of their times"
  echo "over those valid on both."
  echo
  echo "| source | target | valid on source | valid on both | failed on target | statuses | missing on target | Spearman's rho |"
  echo "|---|---|---:|---:|---:|---|---:|---:|"
  tail -n +2 "$RT_OUT/failures.csv" | awk -F, '{ printf "| %s | %s | %d | %d | %d | %s | %d | %s |\n", $1, $2, $3, $4, $5,
    $6 == "" ? "-" : $6, $7, $8 == "" ? "-" : $8 }'
  echo
} > "$T"

# ---- 5. figures ----
# the heat map: rows sources, columns targets; failed or missing: 0, "fail"
NG=$(echo "$GPUS" | wc -l)
awk -F, 'NR == FNR { idx[$1] = FNR - 1; next }
  FNR > 1 { printf "%d %d %s %s\n", idx[$2], idx[$1], $5 == "ok" ? $8 : 0,
            $5 == "ok" ? sprintf("%.1f%%", 100 * $8) : $5 }' "$RT_OUT/gpus.txt" "$RT_OUT/matrix.csv" \
  > "$RT_OUT/heatmap.dat"
{
  echo "set termoption noenhanced"
  echo "set title 'Optimum of the source GPU on the target GPU, as a fraction of the target''s optimum'"
  echo "set xlabel 'target GPU'; set ylabel 'source GPU (whose optimum is used)'"
  echo "set xrange [-0.5:$NG - 0.5]; set yrange [$NG - 0.5:-0.5]; set cbrange [0:1]"
  echo "set palette defined (0 '#b2182b', 0.5 '#fddbc7', 0.8 '#d1e5f0', 1 '#2166ac'); set cblabel 'fraction of the target''s optimum'"
  printf "set xtics ("; awk '{ printf "%s\"%s\" %d", (NR > 1 ? ", " : ""), $1, NR - 1 }' "$RT_OUT/gpus.txt"; echo ")"
  printf "set ytics ("; awk '{ printf "%s\"%s\" %d", (NR > 1 ? ", " : ""), $1, NR - 1 }' "$RT_OUT/gpus.txt"; echo ")"
  echo "unset key; set size ratio -1"
  echo "plot '$RT_OUT/heatmap.dat' using 1:2:3 with image, '' using 1:2:4 with labels font ',14'"
} | plot heatmap
# every configuration of the source by its rank there, at its fraction of
# the target's optimum (valid on the target only)
: > "$RT_OUT/transfer.dat"
for i in $GPUS; do
  for j in $GPUS; do
    [ "$i" = "$j" ] && continue
    awk -F, -v p="$i -> $j" '$4 == "ok" { print $1, $6 } END { printf "\n\n" }' "$RT_OUT/joined_${i}_$j.csv" \
      >> "$RT_OUT/transfer.dat"
  done
done
{
  echo "set termoption noenhanced"
  echo "set title 'Each configuration of the source by its rank there, on the target'"
  echo "set xlabel 'rank on the source GPU (1 = its optimum)'; set logscale x"
  echo "set ylabel 'fraction of the target''s optimum on the target'; set yrange [0:1.02]; set grid"
  echo "set key top right"
  printf "plot "
  n=0
  for i in $GPUS; do
    for j in $GPUS; do
      [ "$i" = "$j" ] && continue
      printf "%s'%s' index %d using 1:2 with points pt 7 ps 0.4 title '%s -> %s'" "$( [ $n -gt 0 ] && echo ', ')" \
        "$RT_OUT/transfer.dat" "$n" "$i" "$j"
      n=$((n + 1))
    done
  done
  echo
} | plot transfer

# ---- 6. the report ----
report "## The question and the method

When a kernel is tuned on one GPU, how fast is that configuration on another
GPU, compared with tuning there? From T4 recordings of the whole space
\`$KERNEL\` ($(echo "$GPUS" | tr '\n' ' ' | sed 's/ $//; s/ /, /g')), imported with \`rooftune db import\`, ranked with
\`rooftune db list\` and exported with \`rooftune db export --format csv\`:
for each source GPU i its optimum (the fastest verified configuration) is
looked up on every target GPU j (by the configuration's hash), and the entry
is (optimum time on j) / (time on j of i's optimum): 1 means i's optimum is
also j's, 0.5 that it runs twice as long as j's own. A configuration that
fails on j (compile or runtime error, timeout, wrong result: any status
other than ok) or that j's recording lacks has no time there and is marked
so instead of a fraction."
report "## Tables"
report_file "$T"
report "## Figures"
figure heatmap "The portability matrix: the optimum of each source GPU (row) run on each target GPU (column), as a fraction of the target's own optimum; the diagonal is 1 by definition."
figure transfer "Every configuration valid on the source, by its rank on the source (log scale), at the fraction of the target's optimum it reaches on the target (those failing on the target are left out and counted in the tables)."
report "## Files

\`matrix.csv\` (every source x target: the optimum's hash, its time on
both, the target's status and optimum, the fraction), \`topk.csv\`,
\`failures.csv\`, \`gpus.txt\`, per GPU \`trials_G.csv\` (the export),
\`ranking_G.txt\` (\`db list\`), \`ranked_G.csv\` (the ranking with full-precision
times and hashes), per pair \`joined_I_J.csv\` (each configuration of I by
rank, with its status, time and fraction on J), \`heatmap.dat\`,
\`transfer.dat\`, the figures (\`.png\`, \`.svg\`, \`.gp\`), \`portability.db\`
(the recordings imported)."
report_end
