#!/bin/sh
# experiments/h200/summarise.sh [DB] -- everything the H200 report states,
# derived on any machine (no GPU needed) from the database the device runs
# left in experiments/results/h200/: the ceilings, each campaign's report,
# the gemm model's calibration on the counted trials (stored in the
# database as a new version), its accuracy on held-out schedules, the
# winner explained beside its CUPTI counts, and roofline plots. Writes
# experiments/results/h200/*.txt, *.png, *.svg, *.csv; report.md cites them.
set -eu
RT=${RT:-build/rooftune}
DB=${1:-experiments/results/h200/h200.db}
R=experiments/results/h200
G="M=4096,N=4096,K=4096,max_threads=1024,max_smem=232448,regs_block=65536,sms=132"
"$RT" db stats --db "$DB" > "$R/db_stats.txt"
sqlite3 "$DB" "SELECT id, strategy, state, report FROM campaigns ORDER BY id" > "$R/campaigns.txt"
# The gemm model: calibrated on 70% of every measured gemm schedule, bytes
# fitted to the CUPTI counts of the counted ones; 30% held out (seed 1).
"$RT" model calibrate --db "$DB" --target cuda:0 --kernel gemm --set "$G" --flush \
  --counters 200 > "$R/calibrate_gemm.txt"
for k in "reduction N=268435456" "transpose M=16384,N=16384" "stencil NX=16382,NY=16382,STEPS=4"; do
  set -- $k
  "$RT" model calibrate --db "$DB" --target cuda:0 --kernel "$1" \
    --set "$2,max_threads=1024,max_smem=232448,regs_block=65536,sms=132" --flush --counters 200 \
    > "$R/calibrate_$1.txt" 2>&1 || true
done
W=$(sqlite3 "$DB" "SELECT t.config FROM trials t JOIN campaigns c ON c.id = t.campaign_id
                   WHERE c.strategy = 'model' AND t.status = 'ok' AND c.workload_id =
                   (SELECT workload_id FROM campaigns WHERE id = 2) ORDER BY t.time LIMIT 1")
"$RT" model explain --db "$DB" --target cuda:0 --kernel gemm --set "$G" --flush --config "$W" \
  > "$R/explain_gemm_winner.txt"
"$RT" model accuracy --db "$DB" --target cuda:0 --kernel gemm --set "$G" --flush \
  --csv "$R/accuracy_gemm.csv" > "$R/accuracy_gemm.txt"
# (transpose has no flops, so no arithmetic intensity: it has no roofline point)
for k in gemm:2 reduction:3 stencil:5; do
  T="${k%:*} on the H200 (campaign ${k#*:}, model-guided)"
  "$RT" model roofline --db "$DB" --campaign "${k#*:}" -o "$R/roofline_${k%:*}.png" --title "$T" \
    --data "$R/roofline_${k%:*}.csv" > /dev/null
  "$RT" model roofline --db "$DB" --campaign "${k#*:}" -o "$R/roofline_${k%:*}.svg" --title "$T" > /dev/null
done
rm -f "$R"/*.gp
echo "summarised $DB into $R"
