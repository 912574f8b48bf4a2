/*
** mp.h -- distributed campaigns on MPI: `mpirun -n N rooftune tune ...`
** (or srun) makes rank 0 the campaign (the strategy, the one SQLite
** writer, the report) and ranks 1..N-1 workers that build and measure what
** rank 0 sends them, each through its own target of the backend table;
** `replay --mpi` makes the workers sleep each evaluation's recorded cost
** (scaled), so that scaling can be measured without hardware. Built
** without MPI (no `pkg-config ompi-c` at build time) or run without an MPI
** launcher, every function here is a no-op and rooftune behaves exactly as
** it does without this file.
**
** Invariants:
**  1. MPI is initialised only when a launcher started this process (its
**     environment says so: OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK);
**     a plain `rooftune ...` never touches MPI.
**  2. Only rank 0 opens the database, runs the strategy and prints the
**     report; a worker never writes a file of rooftune's but its compile
**     cache (one per node: $XDG_CACHE_HOME of that node) and measures only
**     what rank 0 sent, with rank 0's harness options.
**  3. Every worker describes the campaign's target with the same
**     fingerprint, or the campaign does not start and the error names the
**     first odd worker (rank, host, target, fingerprint).
**  4. Rank 0 hands a job to the lowest-numbered idle worker, at once when
**     one is idle, else queued in submission order; a worker gets the next
**     queued job as soon as it reports a result (asynchronous dispatch).
**     Single measurements therefore go to worker 1 whenever the pool is
**     idle (a campaign's re-measurements, D c1 D c2 ... D, stay on one
**     device).
**  5. Nobody spins: ranks waiting for a message sleep between polls
**     (MP_POLL_US), so idle ranks leave the cores to the measured ones.
**  6. On the host, each worker of a node is bound (sched_setaffinity) to a
**     disjoint share of the node's CPUs when there are at least as many
**     CPUs as workers there; otherwise the workers share them (stated
**     as "shared" in the worker list). The report lists every worker.
**  7. A worker rank that dies ends the job (MPI's default error handler):
**     the trials rank 0 had evaluated are already stored, the batch in
**     flight is not, and `tune --resume ID` under a new mpirun measures it.
**     Test-only: ROOFTUNE_TEST_MPI_KILL=R:N makes worker rank R kill
**     itself (SIGKILL) when its (N+1)-th measurement arrives
**     (tests/test_mpi.c, test_kill_and_resume). ROOFTUNE_TEST_MPI_SLOW=R:S
**     makes worker rank R sleep S seconds (0 < S < 60) before each
**     measurement (test_async_campaign: a slow worker gets fewer jobs).
*/
#ifndef MP_H
#define MP_H

#include <signal.h>
#include <stdint.h>

#include "../common/rt.h"
#include "../measure/ms.h"

#define MP_POLL_US 200     /* microseconds between two polls of a waiting rank */

/* Initialise MPI when a launcher started this process (invariant 1). */
void mp_init(int *argc, char ***argv);
/* Whether this binary was built with MPI. */
int mp_built(void);
/* This process's rank (0 without MPI) and the number of worker ranks
** (0 without MPI or alone). */
int mp_rank(void);
int mp_workers(void);
/* Rank 0: tell every worker to quit. Every rank: finalise MPI. No-op
** without MPI; safe to call twice. */
void mp_end(void);

/* A worker: serve rank 0's setups and jobs until it says quit (or dies).
** Returns the exit code. */
int mp_serve(void);

/* ---- Rank 0 ---- */

/* Set every worker up for a campaign of kernel on target (its device:
** devices[(w - 1) % n] of the comma-separated list `devices` when not
** NULL, else the target itself, or for a GPU backend given without an
** index its local rank's device), its problem variables `set`, measuring
** with *ms; check every worker's fingerprint against `fingerprint`
** (invariant 3). 0, or -1 with err. */
int mp_start_tune(const char *target, const char *devices, const char *kernel, const char *set,
                  const ms_opts *ms, const char *fingerprint, rt_err *err);
/* Set every worker up for emulated evaluations (replay --mpi). */
int mp_start_sleep(rt_err *err);
/* The worker list, one line per worker ("rank 1 on HOST: host, CPUs 0-3;
** 5 measurements": the results it sent since the last mp_start_*), as
** set up by the last mp_start_*; NULL before. */
const char *mp_worker_list(void);
/* The workers as a JSON array of objects {rank, host, target, cpus, jobs}. */
char *mp_worker_json(void);

/* Measure src (ldflags) on a worker (invariant 4), waiting for it:
** tg_measure's result and return value. */
int mp_measure(const char *src, const char *ldflags, ms_result *r);
/* Measure the n sources srcs on the workers at once (invariant 4);
** r[i] gets srcs[i]'s result. Stopped (*stop), no more are sent and what
** was in flight is waited for. Returns how many leading results are
** filled (n unless stopped), or -1 with err. */
int mp_measure_batch(const char *const *srcs, int n, ms_result *r,
                     const volatile sig_atomic_t *stop, rt_err *err);

/* Asynchronous measurements (a live campaign, tu.h invariant 10): start
** measuring src as job `id` on a worker (queued when none is idle) and
** return at once; 0, or -1 with err (no workers set up by mp_start_tune). */
int mp_measure_submit(int64_t id, const char *src, const char *ldflags, rt_err *err);
/* Wait for the next finished measurement: its id, tg_measure's return in
** *rc and its result in *r. 0, or -1 with err when none is in flight. */
int mp_measure_collect(int64_t *id, int *rc, ms_result *r, rt_err *err);

/* Emulated evaluations: job `id` sleeps `seconds` on a worker (queued
** when none is idle). 0, or -1 with err. */
int mp_sleep_submit(int64_t id, double seconds, rt_err *err);
/* Wait for the next finished sleep: its id. -1 with err when none is in
** flight or queued. */
int mp_sleep_collect(int64_t *id, rt_err *err);
/* Jobs submitted and not yet collected. */
int mp_pending(void);

#endif
