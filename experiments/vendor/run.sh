#!/bin/sh
# experiments/vendor/run.sh [ARGS] -- tuned kernels against vendor libraries:
# host gemm across a sweep of shapes (square, skinny, odd) tuned by rooftune
# against OpenBLAS's sgemm, both timed in the same campaign by the same
# harness; then the GPU gemm against cuBLAS from the H200 results when they
# are present. Run it through
#   rooftune experiment run vendor [--quick] [--out DIR] [-- ARGS]
# ARGS (README.md: other inputs):
#   --shapes MxNxK,...   the gemm shapes (default: 9 shapes; quick: 4)
#   --strategy S         search strategy (default model; quick: random)
#   --budget N           trials per shape (default 30; quick: 6)
#   --seed S             the first repeat's seed (default 1)
#   --repeats R          the whole sweep R times with seeds S..S+R-1, each
#                        into its own copy of the database (default 3; quick: 1)
#   --time-cap S         seconds of timing per schedule (default 0.5; quick: 0.2)
#   --threads N          threads_max of the tuned kernel and OpenBLAS's thread
#                        count (default: every CPU, nproc)
#   --db FILE            every repeat starts from a copy of FILE (its trials
#                        are reused)
#   --gpu-db FILE        the GPU results (default experiments/results/h200/h200.db;
#                        'none' skips the GPU section)
. "$RT_ROOT/experiments/lib.sh"

SHAPES="256x256x256,512x512x512,768x768x768,1024x1024x1024"
SHAPES="$SHAPES,2048x64x2048,64x2048x2048,2048x2048x64,1000x777x333,127x255x511"
STRATEGY=model BUDGET=30 SEED=1 REPEATS=3 CAP=0.5 THREADS=$(nproc) FROM_DB=
GPU_DB=experiments/results/h200/h200.db
if [ "$RT_QUICK" = 1 ]; then
  SHAPES=128x128x128,256x32x256,32x256x256,100x77x33 STRATEGY=random BUDGET=6 CAP=0.2 REPEATS=1
fi
while [ $# -gt 0 ]; do
  case $1 in
    --shapes) SHAPES=$2; shift 2 ;;
    --strategy) STRATEGY=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --repeats) REPEATS=$2; shift 2 ;;
    --time-cap) CAP=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --db) FROM_DB=$2; shift 2 ;;
    --gpu-db) GPU_DB=$2; shift 2 ;;
    *) echo "vendor: unknown argument '$1' (experiments/vendor/README.md)" >&2; exit 2 ;;
  esac
done
jget() { sqlite3 -batch -noheader :memory: "SELECT json_extract(readfile('$1'), '$2')"; }

# The fixed environment of OpenBLAS: the core type (Debian's OpenBLAS
# misdetects this VM's CPU; rooftune's worker sets SkylakeX on AVX-512 CPUs
# when unset: set here so the report states it) and its threads.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -q avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
export OPENBLAS_NUM_THREADS="$THREADS"
BLAS_LIB=$(readlink -f "$(ldconfig -p 2>/dev/null | awk '/libopenblas\.so\.0 / { print $NF; exit }')" 2>/dev/null || echo unknown)
SEED_LAST=$((SEED + REPEATS - 1))
SEEDS="repeat r of the sweep: every campaign --seed r, r = $SEED..$SEED_LAST (strategy $STRATEGY, budget $BUDGET); the inputs GSL mt19937 seed 42 (rooftune's harness)"
ENV_FIXED="OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset (OpenBLAS's own detection)}, OPENBLAS_NUM_THREADS=$THREADS (the tuned kernel: threads_max=$THREADS, its threads a tuning parameter)"

report_begin "Tuned gemm against vendor libraries"
# base.db, the database every repeat starts from: FILE's copy or a new one,
# with this host's ceilings (the model strategy needs them; measured once,
# here, so that no repeat measures them in its first campaign).
BASE="$RT_OUT/base.db"
if [ -n "$FROM_DB" ]; then
  copy "$FROM_DB" "$BASE"
  BASE_WHAT="a copy of \`$FROM_DB\`, whose trials are reused"
else
  rt db init --db "$BASE" > /dev/null
  BASE_WHAT="an empty database"
fi
if [ "$STRATEGY" = model ]; then
  rt bench --db "$BASE" > /dev/null
  BASE_WHAT="$BASE_WHAT plus this host's ceilings"
fi

# 1. The host sweep, REPEATS times: one campaign per shape, OpenBLAS timed at
# its end; repeat r into vendor_seed<r>.db, a fresh copy of base.db, so no
# repeat reuses another's trials (host.csv: one row per repeat and shape).
CSV="$RT_OUT/host.csv"
echo "shape,M,N,K,seed,campaign,trial,threads,tuned_s,tuned_lo_s,tuned_hi_s,tuned_repeats,blas_s,blas_lo_s,blas_hi_s,blas_repeats,ratio,gflops_tuned,gflops_blas,pinned" > "$CSV"
QOPT=
[ "$RT_QUICK" = 1 ] && QOPT="--batch $BUDGET"
seed=$SEED
while [ "$seed" -le "$SEED_LAST" ]; do
  DB="$RT_OUT/vendor_seed$seed.db"
  copy "$BASE" "$DB"
  for s in $(echo "$SHAPES" | tr , ' '); do
    M=${s%%x*} r=${s#*x}; N=${r%%x*} K=${r#*x}
    T="$RT_OUT/tune_${s}_seed$seed.json"
    rt tune --db "$DB" --kernel gemm --set "M=$M,N=$N,K=$K,threads_max=$THREADS" --strategy "$STRATEGY" \
      --budget "$BUDGET" --seed "$seed" --time-cap "$CAP" $QOPT --json > "$T"
    [ "$(jget "$T" '$.baseline.what')" = "-lopenblas" ] || { echo "vendor: $s: no OpenBLAS baseline in $T" >&2; exit 1; }
    # the campaign's pin decision: its tuned winner, or the default it did not beat
    camp=$(jget "$T" '$.campaign') trial=$(jget "$T" '$.decision.trial') pinned=$(jget "$T" '$.decision.choice')
    [ -n "$trial" ] || { echo "vendor: $s: nothing pinned: $(jget "$T" '$.decision.reason')" >&2; exit 1; }
    tuned=$(sqlite3 -batch -noheader -separator , "$DB" "SELECT json_extract(config, '\$.threads'), time,
              ci_lo, ci_hi, repeats FROM trials WHERE id = $trial")
    blas=$(sqlite3 -batch -noheader -separator , :memory: "SELECT json_extract(readfile('$T'), '\$.baseline.time_s'),
             json_extract(readfile('$T'), '\$.baseline.ci95[0]'), json_extract(readfile('$T'), '\$.baseline.ci95[1]'),
             ifnull(json_extract(readfile('$T'), '\$.baseline.repeats'), 0)")
    echo "$tuned,$blas" | awk -F, -v s="$s" -v m="$M" -v n="$N" -v k="$K" -v sd="$seed" -v c="$camp" -v tr="$trial" -v pin="$pinned" '{
      f = 2 * m * n * k
      printf "%s,%d,%d,%d,%d,%s,%s,%s,%.9g,%.9g,%.9g,%d,%.9g,%.9g,%.9g,%d,%.6g,%.6g,%.6g,%s\n", s, m, n, k, sd, c, tr,
        $1, $2, $3, $4, $5, $6, $7, $8, $9, $6 / $2, f / $2 * 1e-9, f / $6 * 1e-9, pin }' >> "$CSV"
  done
  seed=$((seed + 1))
done

# Per shape over the repeats (host_summary.csv): the median, lowest and
# highest of the tuned time, OpenBLAS's time and their ratio (medians of the
# R values; the ratio's median is of the per-repeat ratios); how many
# repeats the tuned kernel won and lost with non-overlapping 95% CIs.
SUM="$RT_OUT/host_summary.csv"
echo "shape,M,N,K,repeats,tuned_median_s,tuned_min_s,tuned_max_s,blas_median_s,blas_min_s,blas_max_s,ratio_median,ratio_min,ratio_max,wins,losses,gflops_tuned,gflops_blas" > "$SUM"
for s in $(echo "$SHAPES" | tr , ' '); do
  awk -F, -v s="$s" 'NR > 1 && $1 == s' "$CSV" | awk -F, -v OFS=, '
    function med(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { n++; tu[n] = $9; bl[n] = $13; ra[n] = $17; w += $11 < $14; l += $10 > $15; sh = $1; m = $2; nn = $3; k = $4 }
    END {
      mt = med(tu, n); mb = med(bl, n); mr = med(ra, n)
      f = 2 * m * nn * k
      printf "%s,%d,%d,%d,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6g,%.6g,%.6g,%d,%d,%.6g,%.6g\n", sh, m, nn, k, n,
        mt, tu[1], tu[n], mb, bl[1], bl[n], mr, ra[1], ra[n], w, l, f / mt * 1e-9, f / mb * 1e-9 }' >> "$SUM"
done
HT="$RT_OUT/host_table.md" HS="$RT_OUT/host_summary_table.md"
{
  echo "| shape M×N×K | repeats | tuned (ms): median [min, max] | OpenBLAS (ms): median [min, max] | OpenBLAS / tuned: median [min, max] | tuned won / lost (disjoint CIs) | GFLOP/s tuned | GFLOP/s OpenBLAS |"
  echo "|---|---:|---|---|---|---|---:|---:|"
  awk -F, 'NR > 1 { printf "| %s | %d | %.4f [%.4f, %.4f] | %.4f [%.4f, %.4f] | %.3f [%.3f, %.3f] | %d / %d | %.1f | %.1f |\n",
    $1, $5, $6 * 1e3, $7 * 1e3, $8 * 1e3, $9 * 1e3, $10 * 1e3, $11 * 1e3, $12, $13, $14, $15, $16, $17, $18 }' "$SUM"
} > "$HS"
{
  echo "| shape M×N×K | seed | pinned | tuned (ms) [95% CI], repeats | threads | OpenBLAS (ms) [95% CI], repeats | OpenBLAS / tuned | GFLOP/s tuned | GFLOP/s OpenBLAS |"
  echo "|---|---:|---|---|---|---|---|---|---|"
  awk -F, 'NR > 1 { printf "| %s | %d | %s | %.4f [%.4f, %.4f], %d | %s | %.4f [%.4f, %.4f], %d | %.3f | %.1f | %.1f |\n",
    $1, $5, $20, $9 * 1e3, $10 * 1e3, $11 * 1e3, $12, $8, $13 * 1e3, $14 * 1e3, $15 * 1e3, $16, $17, $18, $19 }' "$CSV"
} > "$HT"
# geometric mean over the shapes of the median ratio; campaigns won and lost
GEO=$(awk -F, 'NR > 1 { s += log($12); n++ } END { printf "%.3f over %d shapes", exp(s / n), n }' "$SUM")
NCAMP=$(awk 'END { print NR - 1 }' "$CSV")
WINS=$(awk -F, 'NR > 1 && $11 < $14 { n++ } END { print n + 0 }' "$CSV")
LOSSES=$(awk -F, 'NR > 1 && $10 > $15 { n++ } END { print n + 0 }' "$CSV")
KEPT=$(awk -F, 'NR > 1 && $20 == "default" { n++ } END { print n + 0 }' "$CSV")
# ratio.dat: index, median ratio, the lowest and highest ratio the 95% CIs
# allow over every repeat (OpenBLAS low / tuned high, OpenBLAS high / tuned low)
awk -F, 'NR == FNR { if (FNR > 1) { l = $14 / $11; h = $15 / $10
                                    if (!($1 in seen) || l < lo[$1]) lo[$1] = l
                                    if (!($1 in seen) || h > hi[$1]) hi[$1] = h
                                    seen[$1] = 1 } next }
         FNR > 1 { printf "%d %.6g %.6g %.6g %s\n", FNR - 2, $12, lo[$1], hi[$1], $1 }' "$CSV" "$SUM" > "$RT_OUT/ratio.dat"
plot ratio <<GP
set title "OpenBLAS sgemm time / tuned gemm time per shape, median of $REPEATS repeats (above 1: the tuned kernel is faster)" noenhanced
set ylabel "OpenBLAS / tuned (bars: the 95% CIs' extremes over the repeats)"
set xtics ($(awk '{ printf "%s\"%s\" %d", (NR > 1 ? ", " : ""), $5, $1 }' "$RT_OUT/ratio.dat")) rotate by -35 noenhanced
set xrange [-0.6:$(awk 'END { print NR - 0.4 }' "$RT_OUT/ratio.dat")]
set yrange [0:*]
set grid ytics lc rgb '#e4e4e4'
set style fill solid 0.6
set boxwidth 0.6
set key top right box opaque
plot '$RT_OUT/ratio.dat' using 1:2 with boxes lc rgb '#0072B2' title "OpenBLAS / tuned (median)", \
     '' using 1:2:3:4 with yerrorbars pt -1 lc rgb '#000000' notitle, \
     1 lw 2 dt 2 lc rgb '#D55E00' title "parity"
GP

report "## Host: tuned gemm against OpenBLAS

OpenBLAS: \`cblas_sgemm\` (row-major, no transposes) from \`$BLAS_LIB\`,
OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}, OPENBLAS_NUM_THREADS=$THREADS. The tuned
kernel may use up to $THREADS threads (threads_max=$THREADS; its thread count is a
tuning parameter: the column *threads* is the winner's). Each shape is one
campaign, \`rooftune tune --kernel gemm --strategy $STRATEGY --budget $BUDGET --seed S
--time-cap $CAP\` (reports \`tune_<shape>_seed<S>.json\`), which times OpenBLAS at its end
through the same harness (same inputs, verification, warm caches, median of
the timing repeats, 95% CI of the median from order statistics). The tuned
time is the schedule the campaign pinned, as stored in its database: its
first trial is the space's default schedule, and it pins its tuned winner only
when that, measured again alternating with the default, beats it with
disjoint 95% CIs, otherwise the default (column *pinned*; the reason is
\`decision.reason\` in the campaign's report). The whole
sweep ran $REPEATS time(s), with seeds S = $SEED..$SEED_LAST, each repeat in its own copy
(\`vendor_seed<S>.db\`) of \`base.db\` ($BASE_WHAT), so no
repeat reuses another's measurements and OpenBLAS is timed again in each:
the spread over repeats is that of whole tuning campaigns, which on this
machine is wider than one campaign's CI."
report "### Over the $REPEATS repeat(s) (\`host_summary.csv\`)"
report_file "$HS"
report "Geometric mean over the shapes of the median OpenBLAS / tuned: $GEO.
Of the $NCAMP campaigns, the tuned kernel was faster with non-overlapping CIs in
$WINS and slower in $LOSSES; $KEPT pinned the default schedule (their tuned
winner did not beat it)."
figure ratio "OpenBLAS time / tuned time per shape, median over $REPEATS repeat(s); bars from the lowest to the highest ratio the 95% CIs allow in any repeat (OpenBLAS low / tuned high, OpenBLAS high / tuned low)"
report "### Every campaign (\`host.csv\`)"
report_file "$HT"

# 2. The GPU: the H200 campaigns' winners against cuBLAS (not measured here).
if [ "$GPU_DB" != none ] && [ -f "$GPU_DB" ]; then
  G="$RT_OUT/gpu.csv"
  echo "campaign,target,strategy,budget,seed,started,workload,trial,tuned_s,tuned_lo_s,tuned_hi_s,tuned_repeats,lib_s,lib_lo_s,lib_hi_s,lib_repeats,ratio,gflops_tuned,gflops_lib,pinned" > "$G"
  # the campaign's pin decision; a campaign recorded before the pin rule
  # (no decision in its report) shows its fastest verified trial, as pinned then
  sqlite3 -batch -noheader -separator '|' "$GPU_DB" "
    SELECT c.id, tg.name, c.strategy, c.budget, c.seed, c.started, replace(w.key, ',', ' '), t.id, t.time,
           t.ci_lo, t.ci_hi, t.repeats, json_extract(c.report, '\$.baseline.time_s'),
           json_extract(c.report, '\$.baseline.ci95[0]'), json_extract(c.report, '\$.baseline.ci95[1]'),
           ifnull(json_extract(c.report, '\$.baseline.repeats'), 0),
           json_extract(c.report, '\$.best.gflops') * json_extract(c.report, '\$.best.time_s') * 1e9,
           coalesce(json_extract(c.report, '\$.decision.choice'), 'fastest (before the rule)')
      FROM campaigns c JOIN targets tg ON tg.id = c.target_id JOIN workloads w ON w.id = c.workload_id
      JOIN kernels k ON k.id = w.kernel_id
      JOIN trials t ON t.id = coalesce(json_extract(c.report, '\$.decision.trial'),
                                       (SELECT id FROM trials WHERE campaign_id = c.id AND status = 'ok'
                                         ORDER BY time, id LIMIT 1))
     WHERE k.name = 'gemm' AND tg.name LIKE 'cuda:%'
       AND json_extract(c.report, '\$.baseline.time_s') IS NOT NULL
     ORDER BY c.id" |
    awk -F'|' '{ printf "%s,%s,%s,%s,%s,%s,%s,%s,%.9g,%.9g,%.9g,%d,%.9g,%.9g,%.9g,%d,%.6g,%.6g,%.6g,%s\n",
      $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $13 / $9,
      $17 / $9 * 1e-9, $17 / $13 * 1e-9, $18 }' >> "$G"
  GT="$RT_OUT/gpu_table.md"
  {
    echo "| campaign | workload | strategy, budget, seed | pinned | tuned (ms) [95% CI], repeats | cuBLAS (ms) [95% CI], repeats | cuBLAS / tuned | TFLOP/s tuned | TFLOP/s cuBLAS |"
    echo "|---|---|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 { printf "| %s (%s, %s UTC) | %s | %s, %s, %s | %s | %.4f [%.4f, %.4f], %d | %.4f [%.4f, %.4f], %s | %.3f | %.2f | %.2f |\n",
      $1, $2, $6, $7, $3, $4, $5, $20, $9 * 1e3, $10 * 1e3, $11 * 1e3, $12, $13 * 1e3, $14 * 1e3, $15 * 1e3,
      ($16 > 0 ? $16 : "not recorded"), $17, $18 * 1e-3, $19 * 1e-3 }' "$G"
  } > "$GT"
  NG=$(awk 'END { print NR - 1 }' "$G")
  report "## GPU: tuned gemm against cuBLAS (recorded, not measured in this run)

Read from \`$GPU_DB\` (the H200 results; see its report.md): every gemm
campaign on a CUDA target whose report holds the library baseline ($NG), the
schedule the campaign pinned (column *pinned*: its decision; campaigns recorded
before rooftune pinned conservatively show their fastest verified trial, which
they pinned) and cuBLAS
(\`cublasSgemm\`, FP32, \`CUBLAS_PEDANTIC_MATH\`) timed at the end of the same
campaign. These were measured on one NVIDIA H200 on 2026-11-29/30 (the
campaigns' start times are in UTC below), not in this run. Times are medians
of CUDA-event timings with the L2 flushed before each repeat; the campaigns'
reports do not record cuBLAS's repeat count (the harness times at least 5).
Data: \`gpu.csv\`."
  report_file "$GT"
else
  report "## GPU

No GPU results: \`$GPU_DB\` is not present (the H200 results are in
experiments/results/h200/h200.db when committed; \`--gpu-db FILE\` names another)."
fi
report_end
