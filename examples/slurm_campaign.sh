#!/bin/bash
# examples/slurm_campaign.sh -- one rooftune campaign across the nodes of a
# SLURM job: rank 0 runs the campaign (the strategy, the one database
# writer, the report), every other rank measures on its own device
# (README: "Campaigns on a cluster"). Submit it with
#   sbatch examples/slurm_campaign.sh
# or run its mpirun line here, without SLURM (the tests do):
#   NP=3 MPIRUN_ARGS=--oversubscribe KERNEL=transpose SET=M=256,N=256 BUDGET=8 \
#     bash examples/slurm_campaign.sh
# Two nodes of four GPUs each: eight workers plus rank 0, which shares the
# first node (it sleeps while it waits: mpi/mp.h invariant 5). Each worker
# takes the GPU of its rank among the node's workers (cuda:0..3), or
# DEVICES=cuda:0,cuda:1,... assigns them in rank order. All the workers must
# be the same GPU model, driver and toolchain (the same fingerprint) or the
# campaign refuses to start and names the odd one.
#SBATCH --job-name=rooftune-campaign
#SBATCH --nodes=2
#SBATCH --ntasks=9
#SBATCH --gpus-per-node=4
#SBATCH --time=02:00:00
set -euo pipefail

ROOFTUNE=${ROOFTUNE:-rooftune}
NP=${NP:-${SLURM_NTASKS:-9}}       # ranks: 1 campaign + NP - 1 workers
TARGET=${TARGET:-host}             # cuda for the GPUs (one per local worker)
KERNEL=${KERNEL:-gemm}
SET=${SET:-M=1024,N=1024,K=1024}
STRATEGY=${STRATEGY:-bandit}
BUDGET=${BUDGET:-256}
# The database: rank 0 alone opens it. Keep it on a file system with working
# POSIX locks (node-local scratch, then copy it back; SQLite's WAL must not
# live on NFS), or tune shards on separate machines and `rooftune db merge`.
DB=${DB:-${SLURM_SUBMIT_DIR:-$PWD}/rooftune.db}
DEVICES=${DEVICES:-}
read -r -a MPIRUN_EXTRA <<< "${MPIRUN_ARGS:-}"
read -r -a TUNE_EXTRA <<< "${TUNE_ARGS:-}"

args=(tune --db "$DB" --target "$TARGET" --kernel "$KERNEL" --set "$SET" --strategy "$STRATEGY"
      --budget "$BUDGET")
[ -n "$DEVICES" ] && args+=(--devices "$DEVICES")
# A campaign stopped or killed (a node lost: the whole job ends) continues
# under a new job with: mpirun -n NP rooftune tune --resume ID --db DB
mpirun ${MPIRUN_EXTRA[@]+"${MPIRUN_EXTRA[@]}"} -n "$NP" "$ROOFTUNE" "${args[@]}" \
  ${TUNE_EXTRA[@]+"${TUNE_EXTRA[@]}"}
