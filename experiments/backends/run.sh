#!/bin/sh
# experiments/backends/run.sh [ARGS] -- one kernel on every backend of this
# machine, in one run: host C, every OpenCL device and every CUDA GPU that
# `rooftune targets` finds available. Each target gets its ceilings and one
# model-guided campaign per kernel (one database, backends.db); then the
# pinned winners are timed again ALTERNATELY across the targets, R rounds,
# so that load drifts hit every target alike. Run it through
#   rooftune experiment run backends [--quick] [--out DIR] [-- ARGS]
# ARGS (README.md: other inputs):
#   --kernels K1,K2,...   the kernels (default reduction,transpose)
#   --workload K:SET      kernel K's workload, e.g. reduction:N=4194304
#                         (repeatable; replaces that kernel's default)
#   --targets T1,T2,...   the targets (default: host, then every opencl:P.D
#                         and cuda:N that rooftune targets shows available;
#                         model-only targets, model:FILE, are skipped: they
#                         run nothing)
#   --budget N            trials per campaign (default 30; quick: 6)
#   --seed S              the campaigns' seed (default 1)
#   --rounds R            alternating re-measurement rounds (default 5; quick: 2)
. "$RT_ROOT/experiments/lib.sh"

KERNELS=reduction,transpose
BUDGET=30 SEED=1 ROUNDS=5 WORKLOADS= TARGETS=
if [ "$RT_QUICK" = 1 ]; then BUDGET=6 ROUNDS=2; fi
while [ $# -gt 0 ]; do
  case $1 in
    --kernels) KERNELS=$2; shift 2 ;;
    --workload) WORKLOADS="$WORKLOADS $2"; shift 2 ;;
    --targets) TARGETS=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    *) echo "backends: unknown argument '$1' (experiments/backends/README.md)" >&2; exit 2 ;;
  esac
done
case $ROUNDS in ''|*[!0-9]*|0) echo "backends: --rounds wants a positive integer, not '$ROUNDS'" >&2; exit 2 ;; esac

# The default workloads (quick: small ones); other kernels need --workload.
default_workload() {
  if [ "$RT_QUICK" = 1 ]; then
    case $1 in reduction) echo N=1048576 ;; transpose) echo M=512,N=512 ;; esac
  else
    case $1 in reduction) echo N=16777216 ;; transpose) echo M=2048,N=2048 ;; esac
  fi
}
workload_of() {
  w=
  for kw in $WORKLOADS; do [ "${kw%%:*}" = "$1" ] && w=${kw#*:}; done
  [ -n "$w" ] || w=$(default_workload "$1")
  [ -n "$w" ] || { echo "backends: no workload for kernel '$1': give --workload $1:VAR=VAL,..." >&2; exit 2; }
  echo "$w"
}
# jget FILE PATH: a JSON value of FILE (sqlite3's JSON functions)
jget() { sqlite3 -batch -noheader :memory: "SELECT json_extract(readfile('$1'), '$2')"; }
# fname T: a target's name as a file-name part (opencl:0.0 -> opencl_0_0)
fname() { echo "$1" | tr ':.' '__'; }

SEEDS="every campaign --seed $SEED (strategy model, budget $BUDGET); the inputs GSL mt19937 seed 42 (rooftune's harness)"
report_begin "One kernel on every backend of this machine"
LOAD_BEFORE=$(cat /proc/loadavg)

# 1. The targets: every one rooftune targets lists (host first), or --targets;
# those not available are skipped with their reason.
rt targets --json > "$RT_OUT/targets.json"
LISTED=$(sqlite3 -batch -noheader :memory: "SELECT json_extract(value, '\$.name') FROM
           json_each(readfile('$RT_OUT/targets.json')) ORDER BY json_extract(value, '\$.name') != 'host', key")
[ -n "$TARGETS" ] || TARGETS=$(echo $LISTED | tr ' ' ,)
USE= SKIPPED=
: > "$RT_OUT/targets_used.txt"
for t in $(echo "$TARGETS" | tr , ' '); do
  row=$(sqlite3 -batch -noheader -separator '|' :memory: "SELECT CASE WHEN json_extract(value, '\$.model_only')
          THEN 'model' ELSE json_extract(value, '\$.available') AND coalesce(json_extract(value, '\$.timed'), 1) END,
          coalesce(json_extract(value, '\$.why'), 'it does not time: ' || json_extract(value, '\$.untimed_why'), ''),
          coalesce(json_extract(value, '\$.description.model'),
          json_extract(value, '\$.description.device'), ''), coalesce(json_extract(value, '\$.fingerprint'), '')
          FROM json_each(readfile('$RT_OUT/targets.json')) WHERE json_extract(value, '\$.name') = '$t'")
  if [ -z "$row" ]; then
    SKIPPED="$SKIPPED
- \`$t\`: skipped, rooftune targets does not list it"
  elif [ "${row%%|*}" = model ]; then
    SKIPPED="$SKIPPED
- \`$t\`: skipped, a model-only target: it runs nothing (predictions only)"
  elif [ "${row%%|*}" != 1 ]; then
    why=${row#*|}; why=${why%%|*}
    SKIPPED="$SKIPPED
- \`$t\`: skipped, not available here: $why"
  else
    USE="$USE $t"
    rest=${row#*|}; rest=${rest#*|}
    echo "$t|${rest%%|*}|${rest#*|}" >> "$RT_OUT/targets_used.txt"
  fi
done
[ -n "$USE" ] || { echo "backends: no available target among '$TARGETS'" >&2; exit 1; }
NT=$(echo $USE | wc -w)

# 2. Per target: its ceilings, then one model-guided campaign per kernel into
# backends.db; the campaign's pin (rooftune db lookup: the pinned config) is
# the winner re-measured below. A kernel the target lacks is skipped.
DB="$RT_OUT/backends.db"
QB=
[ "$RT_QUICK" = 1 ] && QB=--quick
rt db init --db "$DB" > /dev/null
: > "$RT_OUT/pairs.txt"
for t in $USE; do
  rt bench --target "$t" --db "$DB" $QB > "$RT_OUT/ceilings_$(fname "$t").txt"
  rt kernels --target "$t" --json > "$RT_OUT/kernels_$(fname "$t").json"
  for k in $(echo "$KERNELS" | tr , ' '); do
    w=$(workload_of "$k")
    has=$(sqlite3 -batch -noheader :memory: "SELECT count(*) FROM json_each(readfile('$RT_OUT/kernels_$(fname "$t").json'))
            WHERE json_extract(value, '\$.name') = '$k'")
    if [ "$has" != 1 ]; then
      SKIPPED="$SKIPPED
- \`$k\` on \`$t\`: skipped, the target has no such kernel (rooftune kernels --target $t)"
      continue
    fi
    f="${k}_$(fname "$t")"
    rt tune --db "$DB" --target "$t" --kernel "$k" --set "$w" --strategy model --budget "$BUDGET" \
      --seed "$SEED" --json > "$RT_OUT/tune_$f.json"
    rt db lookup --db "$DB" --target "$t" --kernel "$k" --set "$w" --json > "$RT_OUT/pin_$f.json"
    [ "$(jget "$RT_OUT/pin_$f.json" '$.match')" = exact ] ||
      { echo "backends: $k on $t: no pin after its campaign ($RT_OUT/pin_$f.json)" >&2; exit 1; }
    echo "$k $t $w $(jget "$RT_OUT/pin_$f.json" '$.config')" >> "$RT_OUT/pairs.txt"
  done
done

# 3. The winners timed again, round by round; in each round every kernel's
# targets one after the other, the first target rotating from round to
# round, so that a drift of the machine's load falls on every target alike.
CSV="$RT_OUT/backends.csv"
echo "kernel,target,round,median_s,ci_lo,ci_hi,repeats,bytes" > "$CSV"
r=1
while [ "$r" -le "$ROUNDS" ]; do
  for k in $(echo "$KERNELS" | tr , ' '); do
    awk -v k="$k" '$1 == k' "$RT_OUT/pairs.txt" > "$RT_OUT/round.txt"
    n=$(awk 'END { print NR }' "$RT_OUT/round.txt")
    i=0
    while [ "$i" -lt "$n" ]; do
      line=$(awk -v j=$(( (i + r - 1) % n + 1 )) 'NR == j' "$RT_OUT/round.txt")
      t=$(echo "$line" | cut -d' ' -f2) w=$(echo "$line" | cut -d' ' -f3) c=$(echo "$line" | cut -d' ' -f4-)
      M="$RT_OUT/measure_${k}_$(fname "$t")_r$r.json"
      rt measure --target "$t" --kernel "$k" --set "$w" --config "$c" --json > "$M"
      sqlite3 -batch -noheader -separator , :memory: "SELECT '$k', '$t', $r,
          printf('%.9g', json_extract(readfile('$M'), '\$.time_s.median')),
          printf('%.9g', json_extract(readfile('$M'), '\$.time_s.ci95[0]')),
          printf('%.9g', json_extract(readfile('$M'), '\$.time_s.ci95[1]')),
          json_extract(readfile('$M'), '\$.time_s.repeats'),
          printf('%.0f', json_extract(readfile('$M'), '\$.min_bytes'))" >> "$CSV"
      i=$((i + 1))
    done
  done
  r=$((r + 1))
done
rm -f "$RT_OUT/round.txt"
LOAD_AFTER=$(cat /proc/loadavg)

# 4. Per kernel and target (summary.csv): the median of the round medians,
# the fastest and slowest round, GB/s of the compulsory bytes at the median;
# the ratio target time / host time: the quotient of the two medians, and
# the lowest and highest of the same round's quotients.
SUM="$RT_OUT/summary.csv"
echo "kernel,target,rounds,median_s,min_s,max_s,gbs,ratio,ratio_min,ratio_max" > "$SUM"
for k in $(echo "$KERNELS" | tr , ' '); do
  awk -F, -v k="$k" -v OFS=, '
    function med(a, n,   i, j, t) {
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    NR > 1 && $1 == k {
      if (!($2 in n)) order[++nt] = $2
      n[$2]++; v[$2, n[$2]] = $4; at[$2, $3] = $4; bytes[$2] = $8; rounds[$3] = 1
    }
    END {
      for (i = 1; i <= nt; i++) {
        t = order[i]; m = n[t]
        for (j = 1; j <= m; j++) s[j] = v[t, j]
        md[t] = med(s, m); lo[t] = s[1]; hi[t] = s[m]
      }
      for (i = 1; i <= nt; i++) {
        t = order[i]
        if ("host" in n) {
          rl = rh = ""
          for (r in rounds) if (((t, r) in at) && (("host", r) in at)) {
            q = at[t, r] / at["host", r]
            if (rl == "" || q < rl) rl = q
            if (rh == "" || q > rh) rh = q
          }
          ratio = sprintf("%.9g,%.9g,%.9g", md[t] / md["host"], rl, rh)
        } else ratio = ",,"
        printf "%s,%s,%d,%.9g,%.9g,%.9g,%.9g,%s\n", k, t, n[t], md[t], lo[t], hi[t], bytes[t] / md[t] * 1e-9, ratio
      }
    }' "$CSV" >> "$SUM"
done

# 5. The report.
TT="$RT_OUT/targets_table.md"
{
  echo "| target | CPU or device | fingerprint |"
  echo "|---|---|---|"
  awk -F'|' '{ printf "| `%s` | %s | %s |\n", $1, $2, substr($3, 1, 12) }' "$RT_OUT/targets_used.txt"
} > "$TT"
report "## The targets

The targets measured ($NT), in the order of \`rooftune targets\` (host first):"
report_file "$TT"
if [ -n "$SKIPPED" ]; then report "Left out:
$SKIPPED"; fi
report "## The load

This machine has $(nproc) CPU(s). /proc/loadavg before the run: \`$LOAD_BEFORE\`;
after it: \`$LOAD_AFTER\` (the 1-, 5- and 15-minute load averages, then the
running and existing threads). A machine with few cores shared with other
work gives wide spreads: a round measured while another process runs is
slower, and on a 2-core machine a CPU backend (host C and an OpenCL CPU
device such as PoCL) competes for the same two cores as everything else.
The rounds alternate the targets so that such drifts fall on every target
alike; the min-max columns show how far they went."
for k in $(echo "$KERNELS" | tr , ' '); do
  grep -q "^$k " "$RT_OUT/pairs.txt" || continue
  KT="$RT_OUT/table_$k.md"
  {
    echo "| kernel | target | rounds | median (ms) | min-max over rounds (ms) | GB/s at the median | time / host | min-max over rounds |"
    echo "|---|---|---:|---:|---|---:|---:|---|"
    awk -F, -v k="$k" 'NR > 1 && $1 == k {
      r = $8 == "" ? "-" : sprintf("%.4f", $8); rr = $8 == "" ? "-" : sprintf("%.4f-%.4f", $9, $10)
      printf "| %s | %s | %d | %.5g | %.5g-%.5g | %.4g | %s | %s |\n", $1, $2, $3, $4 * 1e3, $5 * 1e3, $6 * 1e3, $7, r, rr }' "$SUM"
  } > "$KT"
  w=$(workload_of "$k")
  report "## \`$k\` ($w)

Each target's pinned schedule (\`pin_${k}_<target>.json\`, its campaign
\`tune_${k}_<target>.json\`) timed $ROUNDS time(s), alternating with the other targets
(\`backends.csv\`; each time is the median of that measurement's repeats).
*median* is the median of the round medians, GB/s the compulsory bytes
($(awk -F, -v k="$k" 'NR > 1 && $1 == k { print $8; exit }' "$CSV") bytes, rooftune's \`min_bytes\`) over it, *time / host* the quotient
of the target's median and the host's (below 1: faster than host C), its
min-max the lowest and highest quotient of the same round's two times."
  report_file "$KT"
done
report "Every measurement: \`backends.csv\` (kernel, target, round, median and 95% CI
in seconds, timing repeats, compulsory bytes); the summary: \`summary.csv\`;
each target's ceilings: \`ceilings_<target>.txt\`; the campaigns and trials:
\`backends.db\`."
report_end
