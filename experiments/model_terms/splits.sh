#!/bin/sh
# experiments/model_terms/splits.sh -- the time-terms calibration of experiment fidelity in short: for
# splits 1..SEEDS of the recorded sample, the held-out Spearman with the defaults and
# calibrated, then the whole measured slice of experiment search scored with split 1's
# calibration. Works on a copy in $TMPDIR; BIN defaults to build/rooftune.
# usage: splits.sh KERNEL SET_FIT SET_SLICE SEEDS BIN: held-out Spearman per split, and the slice's with split 1's calibration
k=$1; fit=$2; sl=$3; seeds=$4; bin=${5:-build/rooftune}
db=${TMPDIR:-/tmp}/splits_$k.db; cp experiments/cost_model/results/cost_model.db $db
for s in $(seq 1 $seeds); do
  v=$($bin model calibrate --db $db --kernel $k --set $fit --holdout 0.3 --seed $s --counters 0 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
  $bin model accuracy --db $db --kernel $k --set $fit --version $v --json | python3 -c '
import json,sys; d=json.load(sys.stdin); w=d["workloads"][0]; print("seed '$s' v'$v' held-out spearman defaults %.3f calibrated %.3f top1 %s" % (w["defaults"]["spearman"], w["calibrated"]["spearman"], w["calibrated"].get("top1")))'
  [ $s = 1 ] && v1=$v
done
$bin model accuracy --db $db --kernel $k --set $sl --version $v1 --all --json | python3 -c '
import json,sys; d=json.load(sys.stdin); w=d["workloads"][0]; print("slice '$sl' with v'$v1': spearman defaults %.3f calibrated %.3f" % (w["defaults"]["spearman"], w["calibrated"]["spearman"]))'
