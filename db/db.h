/*
** db.h -- the tuned-config database: one SQLite file (WAL mode) holding
** targets, kernels, workloads, spaces, campaigns and their trials, and
** (in later work) versioned pins and release tags. This header is the
** writer's contract; the read-only reader library for code generators
** will have its own.
**
** Invariants:
**  1. The schema version lives in PRAGMA user_version. db_open migrates an
**     older file forward (every step in one transaction) and refuses a
**     newer one without changing it.
**  2. Every write runs in a transaction; an import is all-or-nothing.
**  3. Every statement uses bound parameters; no SQL text is built from
**     user data.
**  4. Writers wait for each other (busy timeout) instead of failing.
*/
#ifndef DB_H
#define DB_H

#include <stdint.h>

#include "../common/rt.h"
#include "../search_spaces/sp.h"

#define DB_SCHEMA_VERSION 2

typedef struct db db;

/* Open (creating when create is set and the file does not exist) and
** migrate. NULL with err on failure: not a database, newer schema, I/O. */
db *db_open(const char *path, int create, rt_err *err);
void db_close(db *d);                       /* NULL is a no-op */
int db_user_version(db *d);                 /* the file's schema version */

/* For migration tests: create path as schema `version` would have made
** it (the first `version` migration steps). */
int db__make_version(const char *path, int version, rt_err *err);

/* Transactions (BEGIN IMMEDIATE: a writer takes the lock up front). */
int db_begin(db *d, rt_err *err);
int db_commit(db *d, rt_err *err);
void db_rollback(db *d);

/* Integrity: SQLite's integrity and foreign-key checks plus rooftune's own
** invariants; problems are appended to report. 0 when all is well. */
int db_check(db *d, rt_str *report, rt_err *err);

/* Rows per table and trials per status, as "name count" lines. */
int db_stats(db *d, rt_str *out, rt_err *err);

/* ---- Entities: get the id of a row, inserting it when new ---- */
int db_target_id(db *d, const char *name, const char *fingerprint,
                 const char *description_json, int64_t *id, rt_err *err);
int db_kernel_id(db *d, const char *name, const char *template_version,
                 int64_t *id, rt_err *err);
/* Record the template's default schedule of a kernel (readers fall back
** to it when nothing near is pinned). */
int db_kernel_set_default(db *d, int64_t kernel_id, const char *config_json,
                          rt_err *err);
/* A workload of a kernel: its canonical key (see db_workload_key), the
** problem sizes as JSON, dtype and layout (may be ""). */
int db_workload_id(db *d, int64_t kernel_id, const char *key,
                   const char *sizes_json, const char *dtype,
                   const char *layout, int64_t *id, rt_err *err);
int db_space_id(db *d, const char *spec, int64_t *id, rt_err *err);

/* The canonical key of a workload: "KERNEL DTYPE VAR=VALUE ..." with the
** space's problem variables in declaration order (values as Python
** literals), e.g. "gemm f32 M=1024 N=1024 K=1024". Caller frees. */
char *db_workload_key(const char *kernel, const char *dtype, const sp_space *sp);
/* The problem variables of sp as a JSON object (caller frees). */
char *db_workload_sizes(const sp_space *sp);

typedef struct db_campaign {
  int64_t target_id, workload_id, space_id;
  const char *strategy, *options_json;
  int64_t seed, budget;
  const char *source;        /* "measured", or "t4:FILE" for imports */
  const char *compiler, *flags;
  const char *state;         /* "running", "done", "stopped", "imported" */
} db_campaign;
int db_campaign_new(db *d, const db_campaign *c, int64_t *id, rt_err *err);
int db_campaign_end(db *d, int64_t id, const char *state, rt_err *err);

/* Statuses in the T4 vocabulary of measure/ms.h: ok, compile_error,
** runtime_error, timeout, wrong_result, invalid. */
typedef struct db_trial {
  int64_t campaign_id;
  const char *config_json;   /* canonical (sp_config_json) */
  const char *status;
  double time_s;             /* the objective: median seconds; NAN if none */
  double mean_s, sd_s, min_s, ci_lo_s, ci_hi_s;   /* NAN when unknown */
  int repeats, noisy;
  const char *counters_json; /* NULL when none */
  double predicted_s;        /* NAN until the cost model predicts */
  double compile_s, verify_s, bench_s, framework_s;  /* NAN when unknown */
  const char *timestamp;     /* NULL: now */
} db_trial;
/* Insert a trial; a config already in the campaign is an error. */
int db_trial_add(db *d, const db_trial *t, int64_t *id, rt_err *err);
void db_trial_init(db_trial *t);           /* every number NAN, 0 repeats */

/* Import a T4 results file (plain or .gz) recorded on space sp, as one
** campaign of state "imported" for (target, kernel, the workload bound in
** sp). All-or-nothing: on any error nothing is stored. *campaign gets the
** new campaign's id; *ntrials the number of trials stored. */
int db_import_t4(db *d, const char *path, sp_space *sp, const char *target,
                 const char *kernel, int64_t *campaign, int *ntrials,
                 rt_err *err);

/* The trials of (target, kernel, workload key) with status ok, fastest
** first: calls fn for each (at most limit, 0: all); stops when fn returns
** nonzero. Returns the number visited, or -1 with err. */
typedef int (*db_trial_fn)(void *ctx, int64_t trial_id, const char *config_json,
                           const char *status, double time_s);
int db_ranked(db *d, const char *target, const char *kernel,
              const char *workload_key, int limit, db_trial_fn fn, void *ctx,
              rt_err *err);
/* The workload keys of a kernel on a target (to default --set when there
** is exactly one). Returns their number; *keys malloc'ed strings. */
int db_workload_keys(db *d, const char *target, const char *kernel,
                     char ***keys, rt_err *err);

#endif
