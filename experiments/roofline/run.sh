#!/bin/sh
# experiments/roofline/run.sh [ARGS] -- the roofline of tuned host kernels
# (Williams, Waterman and Patterson, CACM 2009). Run it through
#   rooftune experiment run roofline [--quick] [--out DIR] [-- ARGS]
# It measures this machine's ceilings, tunes every selected host kernel on
# one workload into one database ($RT_OUT/roofline.db), explains each
# campaign's pinned schedule (its tuned winner, or the default it did not
# beat) with the cost model (which bound limits it) and places them on one
# roofline. ARGS (README.md: other inputs):
#   --kernels K1,K2,...   which kernels (default: every host kernel)
#   --workload K:SET      kernel K's workload, e.g. gemm:M=512,N=512,K=512
#                         (repeatable; replaces that kernel's default)
#   --strategy S          search strategy (default model; quick: random)
#   --budget N            trials per kernel (default 40; quick: 6)
#   --seed S              the strategies' seed (default 1)
#   --time-cap S          seconds of timing per schedule (default 0.5; quick: 0.2)
#   --db FILE             start from a copy of FILE: its ceilings and trials
#                         are reused (a rerun on recorded data)
#   --ceilings FILE       take this host's latest stored ceilings from FILE
#                         (measured earlier, e.g. on a quiet machine) instead
#                         of measuring them; other machines measure
. "$RT_ROOT/experiments/lib.sh"

KERNELS=gemm,conv2d,stencil,transpose,reduction
STRATEGY=model BUDGET=40 SEED=1 CAP=0.5 FROM_DB= CEIL_DB= WORKLOADS=
if [ "$RT_QUICK" = 1 ]; then STRATEGY=random BUDGET=6 CAP=0.2; fi
while [ $# -gt 0 ]; do
  case $1 in
    --kernels) KERNELS=$2; shift 2 ;;
    --workload) WORKLOADS="$WORKLOADS $2"; shift 2 ;;
    --strategy) STRATEGY=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --time-cap) CAP=$2; shift 2 ;;
    --db) FROM_DB=$(rt_abs "$2"); shift 2 ;;
    --ceilings) CEIL_DB=$(rt_abs "$2"); shift 2 ;;
    *) echo "roofline: unknown argument '$1' (experiments/roofline/README.md)" >&2; exit 2 ;;
  esac
done

# The default workloads: moderate sizes (quick: small ones).
default_workload() {
  if [ "$RT_QUICK" = 1 ]; then
    case $1 in
      gemm) echo M=256,N=256,K=256 ;;
      conv2d) echo N=1,H=28,W=28,C=16,K=16,R=3,S=3,pad=1 ;;
      stencil) echo NX=512,NY=512,STEPS=4 ;;
      transpose) echo M=1024,N=1024 ;;
      reduction) echo N=4194304 ;;
    esac
  else
    case $1 in
      gemm) echo M=1024,N=1024,K=1024 ;;
      conv2d) echo N=1,H=56,W=56,C=64,K=64,R=3,S=3,pad=1 ;;
      stencil) echo NX=2048,NY=2048,STEPS=8 ;;
      transpose) echo M=4096,N=4096 ;;
      reduction) echo N=33554432 ;;
    esac
  fi
}
workload_of() {
  w=
  for kw in $WORKLOADS; do [ "${kw%%:*}" = "$1" ] && w=${kw#*:}; done
  [ -n "$w" ] || w=$(default_workload "$1")
  [ -n "$w" ] || { echo "roofline: no workload for kernel '$1' (--workload $1:SET)" >&2; exit 2; }
  echo "$w"
}
# One value of a JSON file (sqlite3's json_extract; PATH like $.best.time_s).
jget() { sqlite3 -batch -noheader :memory: "SELECT json_extract(readfile('$1'), '$2')"; }

DB="$RT_OUT/roofline.db"
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-$(grep -q avx512f /proc/cpuinfo && echo SkylakeX || echo unset)}"
[ "$OPENBLAS_CORETYPE" = unset ] && unset OPENBLAS_CORETYPE
SEEDS="every campaign --seed $SEED (strategy $STRATEGY, budget $BUDGET); the kernels' inputs GSL mt19937 seed 42 (rooftune's harness)"
ENV_FIXED="OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} (the gemm campaign's OpenBLAS baseline, in tune_gemm.json)"

report_begin "The roofline of tuned host kernels"

# 1. The database and the ceilings.
if [ -n "$FROM_DB" ]; then
  copy "$FROM_DB" "$DB"
  CEIL_SRC="stored in \`$FROM_DB\` (copied; its trials are reused)"
else
  rt db init --db "$DB" > /dev/null
fi
if [ -n "$CEIL_DB" ]; then
  n=$(sqlite3 -batch -noheader "$DB" "ATTACH '$CEIL_DB' AS s;
    SELECT count(*) FROM s.ceilings c JOIN s.targets t ON t.id = c.target_id
     WHERE t.name = 'host' AND t.fingerprint = '$RT_FINGERPRINT';")
  if [ "$n" -gt 0 ]; then
    sqlite3 -batch "$DB" "ATTACH '$CEIL_DB' AS s;
      INSERT OR IGNORE INTO targets(name, fingerprint, description, created)
        SELECT name, fingerprint, description, created FROM s.targets
         WHERE name = 'host' AND fingerprint = '$RT_FINGERPRINT';
      INSERT INTO ceilings(target_id, measured, data, created)
        SELECT (SELECT id FROM main.targets WHERE name = 'host' AND fingerprint = '$RT_FINGERPRINT'),
               c.measured, c.data, c.created
          FROM s.ceilings c JOIN s.targets t ON t.id = c.target_id
         WHERE t.name = 'host' AND t.fingerprint = '$RT_FINGERPRINT' ORDER BY c.id DESC LIMIT 1;"
    CEIL_SRC="measured earlier on this host and taken from \`$CEIL_DB\` (--ceilings)"
  else
    CEIL_SRC="measured in this run: \`$CEIL_DB\` holds no ceilings of this host (fingerprint $RT_FINGERPRINT)"
  fi
fi
if [ "$RT_QUICK" = 1 ]; then rt bench --db "$DB" --quick > "$RT_OUT/ceilings.txt" 2>&1
else rt bench --db "$DB" > "$RT_OUT/ceilings.txt" 2>&1; fi
rt bench --db "$DB" --json > "$RT_OUT/ceilings.json" 2> /dev/null
: "${CEIL_SRC:=measured in this run ($( [ "$RT_QUICK" = 1 ] && echo 'rooftune bench --quick' || echo 'rooftune bench'))}"
CJ="$RT_OUT/ceilings.json"
# the higher of the one-thread and all-thread figure of a ceiling
jmax() { sqlite3 -batch -noheader :memory: "SELECT max(json_extract(readfile('$1'), '$2[0]'), json_extract(readfile('$1'), '$2[1]'))"; }
PEAK=$(jmax "$CJ" '$.peak')
BW_L1=$(jmax "$CJ" '$.bw.L1') BW_L2=$(jmax "$CJ" '$.bw.L2')
BW_L3=$(jmax "$CJ" '$.bw.L3') BW_DRAM=$(jmax "$CJ" '$.bw.DRAM')

# 2. Tune each kernel; explain its pinned schedule; one CSV row per kernel.
CSV="$RT_OUT/roofline.csv"
echo "kernel,workload,campaign,trial,threads,time_s,ci_lo_s,ci_hi_s,repeats,noisy,flops,bytes,intensity,gflops,gbs,bound,bound_work,bound_ceiling,fraction,coefficients,pinned" > "$CSV"
QOPT=
[ "$RT_QUICK" = 1 ] && QOPT="--batch $BUDGET"
for k in $(echo "$KERNELS" | tr , ' '); do
  w=$(workload_of "$k")
  T="$RT_OUT/tune_$k.json" E="$RT_OUT/explain_$k.json"
  rt tune --db "$DB" --kernel "$k" --set "$w" --strategy "$STRATEGY" --budget "$BUDGET" \
    --seed "$SEED" --time-cap "$CAP" $QOPT --json > "$T"
  # the campaign's pin decision (tuned, or the default it did not beat)
  camp=$(jget "$T" '$.campaign') trial=$(jget "$T" '$.decision.trial') pinned=$(jget "$T" '$.decision.choice')
  [ -n "$trial" ] || { echo "roofline: $k: nothing pinned: $(jget "$T" '$.decision.reason')" >&2; exit 1; }
  # the pinned schedule's row, straight from the database
  row=$(sqlite3 -batch -noheader -separator , "$DB" "SELECT time, ci_lo, ci_hi, repeats, noisy,
         json_extract(config, '\$.threads') FROM trials WHERE id = $trial")
  cfg=$(sqlite3 -batch -noheader "$DB" "SELECT config FROM trials WHERE id = $trial")
  # the campaign just measured here: this machine's trials (the copied --db may hold others)
  rt model explain --db "$DB" --fingerprint "$RT_FINGERPRINT" --kernel "$k" --set "$w" --config "$cfg" \
    --json > "$E"
  # flops and compulsory bytes of the workload (the report's rates x its time)
  t=$(jget "$T" '$.best.time_s')
  fb=$(sqlite3 -batch -noheader -separator , :memory: "SELECT
         printf('%.0f', json_extract(readfile('$T'), '\$.best.gflops') * 1e9 * $t),
         printf('%.0f', json_extract(readfile('$T'), '\$.best.gbytes_per_s') * 1e9 * $t)")
  b=$(jget "$E" '$.bound')
  bw=$(jget "$E" "\$.bounds.$b.work") bc=$(jget "$E" "\$.bounds.$b.ceiling") co=$(jget "$E" '$.coefficients')
  echo "$row,$fb,$b,$bw,$bc,$co" | awk -F, -v k="$k" -v w="$(echo "$w" | tr , ' ')" -v c="$camp" -v tr="$trial" -v pin="$pinned" '{
    time = $1; flops = $7; bytes = $8
    # compute: achieved FLOP/s of the ceiling; a memory level: the traffic the
    # model puts there (explain) per second, of that level'"'"'s bandwidth
    # overhead-bound (the model: launch, threads, loop trips): no ceiling, -1
    frac = ($11 > 0 ? ($9 == "compute" ? flops : $10) / time / $11 : -1)
    printf "%s,%s,%s,%s,%s,%.9g,%.9g,%.9g,%s,%s,%.0f,%.0f,%.6g,%.6g,%.6g,%s,%.6g,%.6g,%.6g,%s,%s\n",
      k, w, c, tr, $6, time, $2, $3, $4, $5, flops, bytes, (flops > 0 ? flops / bytes : 0),
      flops / time * 1e-9, bytes / time * 1e-9, $9, ($9 == "compute" ? flops : $10), $11, frac, $12, pin
  }' >> "$CSV"
done

# 3. The table (from the CSV only).
TABLE="$RT_OUT/roofline_table.md"
{
  echo "| kernel | workload | pinned | threads | time (ms) [95% CI] | repeats | GFLOP/s | GB/s (compulsory) | intensity (flop/B) | bound (model explain) | of that bound |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  awk -F, 'NR > 1 {
    fl = ($14 > 0 ? sprintf("%.2f", $14) : "- (no flops)")
    ai = ($13 > 0 ? sprintf("%.3g", $13) : "-")
    bd = ($16 == "compute" ? sprintf("compute, %.1f GFLOP/s", $18 * 1e-9) : sprintf("%s, %.1f GB/s", $16, $18 * 1e-9))
    warn = ($19 > 1.05 ? " (above: see below)" : "")
    of = ($19 < 0 ? "- (no ceiling)" : sprintf("%.1f%%%s", $19 * 100, warn))
    if ($16 == "overhead") bd = "overhead (launch, threads, loop trips)"
    printf "| %s | %s | %s | %s | %.4f [%.4f, %.4f] | %d%s | %s | %.2f | %s | %s | %s |\n",
      $1, $2, $21, $5, $6 * 1e3, $7 * 1e3, $8 * 1e3, $9, ($10 == 1 ? " (noisy)" : ""), fl, $15, ai, bd, of
  }' "$CSV"
} > "$TABLE"

# 4. Ceilings table.
CT="$RT_OUT/ceilings_table.md"
{
  echo "| ceiling | 1 thread | $(jget "$CJ" '$.threads') threads |"
  echo "|---|---|---|"
  sqlite3 -batch -noheader -separator '|' :memory: "SELECT json_extract(readfile('$CJ'), '\$.peak[0]'),
          json_extract(readfile('$CJ'), '\$.peak[1]')" | awk -F'|' '{ printf "| FP32 peak (GFLOP/s) | %.1f | %.1f |\n", $1 * 1e-9, $2 * 1e-9 }'
  for lv in L1 L2 L3 DRAM; do
    sqlite3 -batch -noheader -separator '|' :memory: "SELECT json_extract(readfile('$CJ'), '\$.bw.$lv[0]'),
            json_extract(readfile('$CJ'), '\$.bw.$lv[1]')" |
      awk -F'|' -v l=$lv '{ printf "| %s read bandwidth (GB/s) | %.1f | %.1f |\n", l, $1 * 1e-9, $2 * 1e-9 }'
  done
} > "$CT"

# 5. The figures: every kernel with flops on one roofline; every kernel's
#    compulsory GB/s against the bandwidth ceilings (transpose included).
awk -F, 'NR > 1 && $14 > 0 {
  printf "%s %.6g %.6g %.6g %.6g \"%s\"\n", $1, $13, $14, $11 / $8 * 1e-9, $11 / $7 * 1e-9, $1 }' "$CSV" > "$RT_OUT/points.dat"
awk -F, 'NR > 1 { printf "%d %.6g %.6g %.6g \"%s\"\n", NR - 2, $15, $12 / $8 * 1e-9, $12 / $7 * 1e-9, $1 }' "$CSV" > "$RT_OUT/bandwidth.dat"
plot roofline <<GP
set title "Tuned host kernels on the roofline of this machine ($( [ "$RT_QUICK" = 1 ] && echo 'quick run' || echo 'full run'))" noenhanced
set logscale xy
set xrange [0.05:200]
set yrange [0.1:$(awk -v p="$PEAK" 'BEGIN { print p * 1e-9 * 3 }')]
set xlabel "arithmetic intensity (flops / compulsory byte)"
set ylabel "GFLOP/s (pinned schedule; bars: 95% CI of its median time)"
set grid xtics ytics mxtics mytics lc rgb '#e4e4e4'
set key bottom right box opaque noenhanced
set samples 1000
peak = $PEAK * 1e-9
roof(x, bw) = (x * bw < peak ? x * bw : peak)
plot roof(x, $BW_L1 * 1e-9) lw 2 lc rgb '#56B4E9' title sprintf("L1 %.0f GB/s", $BW_L1 * 1e-9), \
     roof(x, $BW_L2 * 1e-9) lw 2 lc rgb '#009E73' title sprintf("L2 %.0f GB/s", $BW_L2 * 1e-9), \
     roof(x, $BW_L3 * 1e-9) lw 2 lc rgb '#E69F00' title sprintf("L3 %.1f GB/s", $BW_L3 * 1e-9), \
     roof(x, $BW_DRAM * 1e-9) lw 2 lc rgb '#D55E00' title sprintf("DRAM %.1f GB/s", $BW_DRAM * 1e-9), \
     peak lw 2 dt 2 lc rgb '#000000' title sprintf("FP32 peak %.0f GFLOP/s", peak), \
     '$RT_OUT/points.dat' using 2:3:4:5 with yerrorbars pt 7 ps 1.3 lc rgb '#C0306A' title "pinned schedule of each kernel", \
     '' using 2:3:6 with labels offset 0,1.2 noenhanced notitle
GP
plot bandwidth <<GP
set title "Compulsory bytes per second of each tuned kernel against the read-bandwidth ceilings" noenhanced
set logscale y
set yrange [0.1:$(awk -v b="$BW_L1" 'BEGIN { print b * 1e-9 * 12 }')]
set xrange [-0.6:$(awk 'END { print NR - 0.4 }' "$RT_OUT/bandwidth.dat")]
set ylabel "GB/s (compulsory bytes / median time; bars: 95% CI)"
set xtics ($(awk '{ printf "%s%s %d", (NR > 1 ? ", " : ""), $5, $1 }' "$RT_OUT/bandwidth.dat")) noenhanced
set grid ytics lc rgb '#e4e4e4'
set key top right box opaque
set style fill solid 0.6
set boxwidth 0.5
plot '$RT_OUT/bandwidth.dat' using 1:2 with boxes lc rgb '#C0306A' title "pinned schedule", \
     '' using 1:2:3:4 with yerrorbars pt -1 lc rgb '#000000' notitle, \
     $BW_L1 * 1e-9 lw 2 lc rgb '#56B4E9' title "L1", $BW_L2 * 1e-9 lw 2 lc rgb '#009E73' title "L2", \
     $BW_L3 * 1e-9 lw 2 lc rgb '#E69F00' title "L3", $BW_DRAM * 1e-9 lw 2 lc rgb '#D55E00' title "DRAM"
GP

# 6. The report.
report "## Ceilings

The ceilings were $CEIL_SRC, stored with the target in \`roofline.db\`
($(jget "$CJ" '$.measured'); full sweep in \`ceilings.txt\`, JSON in \`ceilings.json\`).
The roofs of the figure are the higher of the one-thread and the all-thread
figure of each ceiling; the bound of each kernel (below) uses the figure of
the pinned schedule's own thread count, as \`rooftune model explain\` does."
report_file "$CT"
report "## The tuned kernels

Each kernel was tuned with \`rooftune tune --strategy $STRATEGY --budget $BUDGET --seed $SEED
--time-cap $CAP\` (reports: \`tune_<kernel>.json\`); the row is the schedule the
campaign pinned, as stored in \`roofline.db\` (\`roofline.csv\`). A campaign's first
trial is the space's default schedule, and it pins its tuned winner only when
that, measured again alternating with the default, beats it with disjoint 95%
CIs; otherwise it pins the default (column *pinned*; the reason is the
report's \`decision.reason\`, below). The row gives the pinned trial's median time
with the 95% confidence interval of the median (order statistics) over the
number of timed repeats shown, at warm caches. GFLOP/s = flops / median time,
GB/s = compulsory bytes (each input read once, each output written once) /
median time, intensity = flops / compulsory bytes. The bound is the one
\`rooftune model explain\` names for it (\`explain_<kernel>.json\`,
coefficients: $(awk -F, 'NR > 1 { print $20 }' "$CSV" | sort -u | tr '\n' ' ' | sed 's/ $//')), and the last column
is the fraction of that bound's ceiling the schedule achieves: FLOP/s over the
compute ceiling, or the bytes the model places at that memory level per
second over that level's bandwidth."
report_file "$TABLE"
above=$(awk -F, 'NR > 1 && $19 > 1.05 { printf "%s%s (%.0f%%)", (n++ ? ", " : ""), $1, $19 * 100 }' "$CSV")
[ -n "$above" ] && report "**Above the measured ceiling:** $above. A kernel faster than its
ceiling means the ceiling was measured low (the machine was busy while
\`rooftune bench\` ran: take the ceilings from a quiet run with
\`--ceilings FILE\`) or, for a memory level, that the model places more traffic
at that level than the schedule moves there (its data stays in a nearer
cache); a streaming kernel at its level's bandwidth can also land a few
percent above a ceiling within the ceiling's own spread."
report "### The pin decisions

$(for k in $(echo "$KERNELS" | tr , ' '); do printf -- '- %s: %s\n' "$k" "$(jget "$RT_OUT/tune_$k.json" '$.decision.reason')"; done)"
figure roofline "Every tuned kernel with flops at (intensity, GFLOP/s) on the measured roofs; transpose has no flops and is in the next figure and the table"
figure bandwidth "Compulsory GB/s of every tuned kernel, transpose included, against the read bandwidth of each level"
report_end
