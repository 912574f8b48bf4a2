/*
** db.h -- the tuned-config database: one SQLite file (WAL mode) holding
** targets, kernels, workloads, spaces, campaigns and their trials,
** versioned pins and release tags. This header is the
** writer's contract; the read-only reader library for code generators
** will have its own.
**
** Invariants:
**  1. The schema version lives in PRAGMA user_version. A DB_WRITE or
**     DB_CREATE open migrates an older file forward (every step in one
**     transaction); only DB_CREATE makes a file or writes the schema into
**     an empty one. Every open refuses, without changing a byte, a newer
**     version and a file that is not rooftune's (user_version 0 with
**     tables of its own, or negative); a DB_READ open also an older
**     version. DB_READ is SQLITE_OPEN_READONLY: it never writes.
**  2. Every write runs in a transaction; an import is all-or-nothing.
**  3. Every statement uses bound parameters; no SQL text is built from
**     user data.
**  4. Writers wait for each other (busy timeout) instead of failing.
**  5. Pins are never edited: a pin adds version max + 1 of its (target,
**     workload), or nothing when its trial is the current pin already;
**     pin and rollback only move pin_current. A tag is never changed once
**     made.
**  6. Model coefficients are never edited either: a fit adds version
**     max + 1 of its (target, kernel). Ceilings add a row per measurement
**     (the latest is in force); counters keep one row per (target,
**     workload, config, source), replaced by a new count.
**  7. Every statement's result is checked: an SQLite error (a corrupt
**     page, a missing table) reaches the caller, never "no rows".
**  8. While a writer has the file open it is in WAL mode; a writer that
**     closes it while no other connection has it open leaves it in
**     rollback-journal mode with no -wal/-shm, so readers can open it in
**     read-only places (rtdb.h, rtdb_open). Both switches rewrite the
**     header's page without a journal (journal_mode OFF between), so a
**     writer killed at any point leaves no hot journal, which a reader
**     could not roll back. A writer that cannot make the WAL's -shm (a
**     full disk) takes the file back to rollback-journal mode and fails.
**  9. A target row's family chain (schema 8: model, arch, backend) is
**     computed from its name and description when the row is stored,
**     migrated or merged in (targets/tg.h, tg_family_of), NULL where they
**     do not tell, and never changed once its backend is known.
** 10. Predictions are never taken for measurements: a trial of origin
**     "predicted" (a model-only target's, tuner/tu.h tu_predict) is not
**     reused, calibrated on, compared against or exported as a measured
**     one; a pin of such a trial has predicted = 1 (schema 10: set from
**     the trial when the pin is made), and the reader reports it
**     (rtdb_result.predicted).
*/
#ifndef DB_H
#define DB_H

#include <stdint.h>
#include <stdio.h>

#include "../common/rt.h"
#include "../search_spaces/sp.h"

#define DB_SCHEMA_VERSION 10

typedef struct db db;

/* How db_open opens a file. Only commands that store results (init,
** import, merge, tune, pin, rollback, tag --name, bench, model calibrate
** ...) write; every other command reads. (0 and 1 keep the meaning of
** the older `create` flag.) */
typedef enum db_mode {
  DB_WRITE = 0,    /* an existing rooftune file, read-write; older schemas migrated */
  DB_CREATE = 1,   /* DB_WRITE, making a missing file, or the schema in an empty one */
  DB_READ = 2,     /* read-only, this schema version only; nothing is ever written */
} db_mode;

/* Open path (invariant 1). NULL with err on failure, saying why and what
** to do: no such file, not a database, not rooftune's, newer or (DB_READ)
** older schema, a read-only place (rtdb.h), I/O. */
db *db_open(const char *path, db_mode mode, rt_err *err);
void db_close(db *d);                       /* NULL is a no-op */
int db_user_version(db *d);                 /* the file's schema version; INT_MIN on error */

/* For migration tests: create path as schema `version` would have made
** it (the first `version` migration steps). */
int db__make_version(const char *path, int version, rt_err *err);

/* Transactions (BEGIN IMMEDIATE: a writer takes the lock up front). */
int db_begin(db *d, rt_err *err);
int db_commit(db *d, rt_err *err);
void db_rollback(db *d);

/* Integrity: SQLite's integrity and foreign-key checks; the schema (every
** table, column and index of this version, as the migrations make them);
** the JSON columns; rooftune's own invariants; and the reader's view
** (every pin and template default rtdb_lookup can reach, read as it reads
** them). Problems are appended to report, a line each naming the table
** and row (a check that cannot run, on a damaged file, is one). 0 when
** all is well, 1 with problems. */
int db_check(db *d, rt_str *report, rt_err *err);

/* Rows per table and trials per status, as "name count" lines. */
int db_stats(db *d, rt_str *out, rt_err *err);

/* ---- Entities: get the id of a row, inserting it when new ---- */
/* (A new target row gets its family chain: invariant 9.) */
int db_target_id(db *d, const char *name, const char *fingerprint,
                 const char *description_json, int64_t *id, rt_err *err);
int db_kernel_id(db *d, const char *name, const char *template_version,
                 int64_t *id, rt_err *err);
/* The target of this name and fingerprint without adding it: 0 with *id,
** 1 when there is none, -1 with err. */
int db_target_find(db *d, const char *name, const char *fingerprint, int64_t *id, rt_err *err);
/* The most recently registered target of this name (any fingerprint): 0
** with *id, 1 when there is none, -1 with err. For working on a device's
** results where the device is not (cost-model commands on a copied db). */
int db_target_latest(db *d, const char *name, int64_t *id, rt_err *err);
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
/* The canonical text of a space (parameters with their values,
** conditions, bound problem variables) as compact JSON: what
** db_space_id stores. Caller frees. */
char *db_space_spec(const sp_space *sp);

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
/* Store a campaign's final report (JSON: default and baseline timings). */
int db_campaign_set_report(db *d, int64_t id, const char *report_json, rt_err *err);
/* Store where an imported campaign came from (schema 7; JSON: the file's
** format, tool, schema version and header, see db_t4.c). */
int db_campaign_set_provenance(db *d, int64_t id, const char *provenance_json, rt_err *err);

/* A campaign as stored, with its target, kernel and workload (strings
** malloc'ed; db_campaign_info_free). 0; 1 when there is no such campaign
** (err says so); -1 on error. */
typedef struct db_campaign_info {
  int64_t id, target_id, workload_id, seed, budget;
  char *strategy, *options, *state, *target, *fingerprint, *kernel, *workload_key, *report,
      *source;
} db_campaign_info;
int db_campaign_get(db *d, int64_t id, db_campaign_info *c, rt_err *err);
void db_campaign_info_free(db_campaign_info *c);

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
  const char *source_hash;   /* ms_build_key of what was measured; NULL */
  const char *origin;        /* "measured", "reused" (copied from an
                             ** earlier campaign), "predicted" (a model
                             ** target's prediction: time_s is predicted,
                             ** nothing ran; invariant 10); NULL:
                             ** imported/unknown */
  /* Schema 6, what imports keep of a file (NULL/NAN when none): */
  const char *measurements_json; /* every recorded measurement, as the file
                                 ** wrote it: [{"name","value","unit"}...] */
  const char *runtimes_json; /* the per-repeat run times in seconds: [...] */
  double strategy_s;         /* the search algorithm's time (T4's
                             ** times.search_algorithm) */
  int loaded;                /* schema 9: measured while the machine was busy
                             ** (the load guard): never reused, calibrated on
                             ** or pinned from */
} db_trial;
/* Insert a trial; a config already in the campaign is an error. */
int db_trial_add(db *d, const db_trial *t, int64_t *id, rt_err *err);
void db_trial_init(db_trial *t);           /* every number NAN, 0 repeats */

/* Trials as read back (strings valid during the callback only). */
typedef struct db_trial_row {
  int64_t id, campaign_id;
  const char *config, *status, *source_hash, *origin;
  double time_s, mean_s, sd_s, min_s, ci_lo_s, ci_hi_s;      /* NAN: none */
  double compile_s, verify_s, bench_s, framework_s;          /* NAN: unknown */
  int repeats, noisy, loaded;
} db_trial_row;
typedef int (*db_row_fn)(void *ctx, const db_trial_row *t);
/* Which trials: every field left 0/NULL matches all. source_hash selects
** trials measured (origin "measured" or NULL) from that source. */
typedef struct db_trial_filter {
  int64_t campaign, target_id, workload_id;
  const char *target, *kernel, *workload_key, *source_hash;
  int predicted;             /* 0: measured (and imported) trials only, the
                             ** predicted ones left out (invariant 10);
                             ** 1: predicted ones too */
} db_trial_filter;
/* Call fn for each matching trial in id order (stop when it returns
** nonzero); the number visited, or -1 with err. */
int db_trials(db *d, const db_trial_filter *f, db_row_fn fn, void *ctx, rt_err *err);

/* ---- Import of results files (db_t4.c) ----
** Two formats, plain or gzip, recognised by their content: community T4
** results (an object with a "results" array) and Kernel Tuner's cache
** files (an object with "tune_params_keys" and a "cache" object; an
** unclosed cache, as an interrupted tune_kernel leaves it, is closed the
** way Kernel Tuner closes it). README's `db import` section is the
** reference for the mapping of statuses, times and units. */

/* The dtype of imported data whose file does not name one (a T4 file's
** metadata.dtype, a Kernel Tuner cache's top-level "dtype"). */
#define DB_DEFAULT_DTYPE "f32"

typedef struct db_import_opts {
  const char *format;        /* "t4", "kt-cache", or NULL: whichever it is */
  sp_space *space;           /* the space it was recorded on (a T1 file);
                             ** NULL: inferred from the file -- a T4 file's
                             ** recorded configurations (each parameter's
                             ** values sorted, typed as recorded), a cache's
                             ** tune_params */
  const sp_binding *set;     /* with an inferred space: problem variables */
  int nset;                  /* that key the workload (VAR=VALUE) */
  const char *kernel;        /* NULL: the space's BenchmarkName (T1), else
                             ** the cache's kernel_name; T4 alone names none */
  const char *dtype;         /* NULL: the file's, else DB_DEFAULT_DTYPE */
} db_import_opts;

/* A results file read and checked whole, ready to store. */
typedef struct db_import db_import;

/* Read and check path: every configuration in the space, none twice,
** statuses and numbers as the format defines them, kernel and dtype free
** of whitespace. The database is not involved: a file that cannot be read
** or is wrong is reported here. NULL with err ("PATH: results[i].field:
** what was expected"). */
db_import *db_import_read(const char *path, const db_import_opts *o, rt_err *err);
const sp_space *db_import_space(const db_import *im);   /* given or inferred */
const char *db_import_format(const db_import *im);      /* "t4", "kt-cache" */
const char *db_import_kernel(const db_import *im);
const char *db_import_dtype(const db_import *im);
int db_import_count(const db_import *im);                /* results read */
/* Store it as one campaign of state "imported" for (target, kernel, the
** workload bound in the space), with its provenance, in one transaction:
** on any error nothing is stored. *campaign gets the new campaign's id. */
int db_import_store(db *d, const db_import *im, const char *target, int64_t *campaign,
                    rt_err *err);
void db_import_free(db_import *im);                      /* NULL: no-op */

/* Read and store in one call (space sp required; kernel as given; the
** format whichever it is). *ntrials gets the number of trials stored. */
int db_import_t4(db *d, const char *path, sp_space *sp, const char *target,
                 const char *kernel, int64_t *campaign, int *ntrials,
                 rt_err *err);

/* The measured trials (invariant 10) of (target, kernel, workload key)
** with status ok, fastest first: calls fn for each (at most limit, 0: all); stops when fn returns
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

/* ---- Which target holds recorded data (db_target.c) ---- */

/* One stored target and one workload of the kernel asked for, with the
** trials it holds of it (strings valid during the callback only). */
typedef struct db_data_row {
  int64_t target_id;
  const char *target, *fingerprint, *description;   /* name, hex, JSON */
  const char *workload_key;   /* NULL: no campaign of the kernel (trials 0) */
  int64_t trials, ok;         /* its trials, and those of status ok */
} db_data_row;
typedef int (*db_data_fn)(void *ctx, const db_data_row *r);
/* Every stored target named name (NULL: any name) whose fingerprint starts
** with fp_prefix (NULL or "": any), once per workload of kernel (NULL: of
** any kernel) it holds campaigns of, or once with workload_key NULL when it
** holds none; by target id, then workload key. fn returning nonzero stops.
** The number of rows visited, or -1 with err. Where a command's data comes
** from: the caller keeps the targets whose rows match the workloads it
** was asked for (cli_data_target). */
int db_data_targets(db *d, const char *name, const char *fp_prefix, const char *kernel,
                    db_data_fn fn, void *ctx, rt_err *err);

/* ---- Pins, versions, rollback and release tags (db_pin.c) ---- */

/* Pin a trial for (target, kernel, workload key): trial_id (an ok trial of
** that target and workload) or, when 0, the fastest ok trial. Adds version
** max + 1 (config copied from the trial; foreign_origin when the trial's
** target fingerprint or kernel template_version is "external") and makes
** it current, in one transaction. by/reason NULL: defaults ($USER or
** "rooftune"; "best of N verified trials"). *version gets the new one;
** a trial that is the current pin already adds nothing, and *version gets
** its version (pinning is idempotent: a retry after a kill pins once).
** A trial of origin "predicted" makes a pin marked predicted (invariant 10;
** its default reason says so). */
typedef struct db_pin_req {
  const char *target, *kernel, *workload_key;
  int64_t trial_id;
  const char *by, *reason;
} db_pin_req;
int db_pin(db *d, const db_pin_req *r, int64_t *version, rt_err *err);

/* Make an existing version current again; nothing else is written. */
int db_pin_rollback(db *d, const char *target, const char *kernel, const char *workload_key,
                    int64_t version, rt_err *err);

/* One version of a pin; time_s from its trial (NAN without one). */
typedef struct db_pin_info {
  const char *target, *workload_key, *created, *config, *by, *reason;
  int64_t version, trial_id;
  double time_s;
  int foreign_origin, current;
  int predicted;             /* schema 10: made from a predicted trial (invariant 10) */
} db_pin_info;
typedef int (*db_pin_fn)(void *ctx, const db_pin_info *p);
/* Every version of a pin, oldest first; returns how many, -1 with err. */
int db_pin_history(db *d, const char *target, const char *kernel, const char *workload_key,
                   db_pin_fn fn, void *ctx, rt_err *err);

/* Create release tag `name` binding the current pin of every (target,
** workload). An existing name or nothing pinned is an error; *npins gets
** the number bound. */
int db_tag(db *d, const char *name, const char *note, int *npins, rt_err *err);
typedef int (*db_tag_fn)(void *ctx, const char *name, const char *note, const char *created,
                         int npins);
int db_tag_list(db *d, db_tag_fn fn, void *ctx, rt_err *err);   /* oldest first */
/* The pins a tag binds (target, key, version, ... set; current as of now).
** An unknown tag is an error. */
int db_tag_show(db *d, const char *name, db_pin_fn fn, void *ctx, rt_err *err);

/* ---- Export (db_export.c) ---- */

/* Write the trials of (target, kernel[, workload key: NULL for all]) to
** out, in trial order, as "t4" (a T4 results file valid against the T4
** 1.0.0 results schema, times in ms), "json" (an array of objects, every
** column), "csv" (a header, then one row per trial with a column per
** configuration parameter) or "kt-cache" (a Kernel Tuner cache file, the
** input of its simulation mode: one workload, whose space gives
** tune_params; the first trial of each configuration). Predicted trials
** (invariant 10) are refused as t4 and kt-cache, files of measurements;
** json and csv carry them with their origin column. */
int db_export(db *d, const char *target, const char *kernel, const char *workload_key,
              const char *format, FILE *out, int *ntrials, rt_err *err);

/* ---- Merge (db_merge.c) ---- */

/* Copy the campaigns and trials of another database file (and the
** targets, kernels, workloads and spaces they need, matched by natural
** key) into d. All-or-nothing. A trial identical to one d already held
** (same target name+fingerprint, kernel name+template_version, workload
** key, config_hash, status, time and timestamp) is skipped, and so is a
** campaign all of whose trials are skipped. Pins and tags are not copied,
** nor are re-measurements and leases.
** A newer-schema or non-rooftune file is refused. Ceilings and counted
** traffic are copied too (ceilings and counters: rows added); model
** coefficients are not. */
typedef struct db_merge_stats { int campaigns, trials, duplicates, ceilings, counters; } db_merge_stats;
int db_merge(db *d, const char *path, db_merge_stats *stats, rt_err *err);

/* ---- Copy (db_copy.c) ---- */

/* Copy the database file src to dst as a consistent snapshot (SQLite's
** backup, in one read transaction: what was committed when it began,
** -wal included, whatever writers do meanwhile), in rollback-journal
** mode, checked, written beside dst and renamed over it: dst is complete
** or as it was. src is opened read-only; any rooftune schema version
** (1..DB_SCHEMA_VERSION) is copied as it is (*version, when given). A dst
** with a -wal or -journal beside it, a link, a folder, or src itself is
** refused. */
int db_copy(const char *src, const char *dst, int *version, rt_err *err);

/* ---- What the cost model keeps (db_model.c; schema 5) ---- */

/* The hex config_hash of a configuration's canonical JSON, as trials and
** counters store it (FNV-1a 128 of the text). Returns hex. */
char *db_config_hash(const char *config_json, char hex[33]);

/* Store a measurement of a target's ceilings (json: a JSON object, the
** cm_ceilings text; measured: its UTC date). *id (when id) gets the row. */
int db_ceilings_put(db *d, int64_t target_id, const char *measured, const char *json,
                    int64_t *id, rt_err *err);
/* The latest ceilings of a target: 1 found (*json malloc'ed, measured
** filled; either may be NULL), 0 none, -1 error. */
int db_ceilings_get(db *d, int64_t target_id, char **json, char measured[32], rt_err *err);

/* Add version max + 1 of kernel's model coefficients on a target (coefs: a
** JSON object name -> number; fit: a JSON object saying what the fit used
** and how well it did). *version (when given) gets the new version. */
int db_model_put(db *d, int64_t target_id, const char *kernel, const char *coefs_json,
                 const char *fit_json, int *version, rt_err *err);
/* One version (0: the latest) of a kernel's coefficients on a target: 1
** found (strings malloc'ed; any out pointer may be NULL), 0 none, -1 error. */
int db_model_get(db *d, int64_t target_id, const char *kernel, int version, char **coefs_json,
                 char **fit_json, int *version_out, char created[32], rt_err *err);
/* Every version of the models of a target (kernel NULL: all kernels), by
** kernel then version; strings valid during the call only. fn returning
** nonzero stops. The number visited, or -1 with err. */
typedef int (*db_model_fn)(void *ctx, const char *kernel, int version, const char *coefs_json,
                           const char *fit_json, const char *created);
int db_model_list(db *d, int64_t target_id, const char *kernel, db_model_fn fn, void *ctx,
                  rt_err *err);

/* Store counted traffic of one schedule (config_json canonical, hashed
** with db_config_hash) of a workload on a target, from a counter source
** (data: a JSON object); replaces an earlier count of the same (target,
** workload, config, source). The sources the table accepts are stored
** data, fixed by migration 4 -> 5's CHECK (db.c): the names the backend
** rows use (tg_backend.counter_source, .traffic); a row with a new source
** needs a migration that widens it (issue 17). */
int db_counters_put(db *d, int64_t target_id, int64_t workload_id, const char *config_json,
                    const char *source, const char *data_json, rt_err *err);
/* 1 found (*data_json malloc'ed), 0 none, -1 error. */
int db_counters_get(db *d, int64_t target_id, int64_t workload_id, const char *config_hash,
                    const char *source, char **data_json, rt_err *err);
/* Counter rows of (target, workload[, source: NULL for all]) in id order
** (strings valid during the call only); fn returning nonzero stops. The
** number visited, or -1 with err. */
typedef struct db_counter_row {
  int64_t id, target_id, workload_id;
  const char *config_hash, *config, *source, *data, *created;
} db_counter_row;
typedef int (*db_counter_fn)(void *ctx, const db_counter_row *r);
int db_counters_each(db *d, int64_t target_id, int64_t workload_id, const char *source,
                     db_counter_fn fn, void *ctx, rt_err *err);

/* ---- A running campaign: its lease and re-measurements (db_campaign.c; schema 6) ---- */

/* Take campaign's lease for this process (action "run" or "resume"): one
** process at a time runs a campaign. 0 taken; 1 held by a live process (err
** names it: pid, host, since when); -1 error (no such campaign, I/O). A
** lease whose holder is gone (no such pid, a reused pid of another start
** time, another host or boot) is taken over. Runs in the caller's
** transaction when one is open, else in its own. */
int db_lease_take(db *d, int64_t campaign, const char *action, rt_err *err);
/* Give back this process's lease of campaign (none held: nothing changes). */
int db_lease_release(db *d, int64_t campaign, rt_err *err);

/* One re-measurement of the end of a campaign (tuner/tu.h, the pin rule):
** a configuration measured again, in position seq (1..) of a sequence
** alternating the default schedule with the best candidates. */
typedef struct db_remeasurement {
  int64_t id, campaign_id;
  int64_t trial_id;          /* the campaign's trial of this config; 0: none */
  int seq;
  const char *role;          /* "default" or "candidate" */
  const char *config_json, *source_hash;
  const char *sequence_hash; /* identifies the whole ordered sequence */
  const char *status;        /* as trials' */
  double time_s, mean_s, sd_s, min_s, ci_lo_s, ci_hi_s;   /* NAN: none */
  int repeats, noisy;
  double compile_s, verify_s, bench_s;
  const char *origin;        /* "measured", or "reused" (an earlier campaign's) */
} db_remeasurement;
/* Store n re-measurements (one sequence) in one transaction. */
int db_remeasurements_add(db *d, const db_remeasurement *m, int n, rt_err *err);
/* The stored sequence sequence_hash of (target, workload): campaign's own
** when it has one, else the earliest campaign's; fn gets its rows in seq
** order (strings valid during the call; nonzero stops). Returns the rows
** visited (0: no such sequence), -1 with err. */
typedef int (*db_remeasurement_fn)(void *ctx, const db_remeasurement *m);
int db_remeasurements_find(db *d, int64_t campaign, int64_t target_id, int64_t workload_id,
                           const char *sequence_hash, db_remeasurement_fn fn, void *ctx,
                           rt_err *err);

/* ---- Online adaptation's side log (db_adapt.c) ---- */

/* What adapt-import did with one site of the log (strings valid during
** the callback). */
typedef struct db_adapt_site {
  const char *target, *kernel, *vars, *session, *workload;   /* workload NULL: not stored */
  int site;
  long long reports, failures;
  int64_t campaign;          /* 0: none (no reports, or skipped) */
  int trials;
  int64_t pin_version;       /* > 0: the new pin */
  const char *skipped;       /* why nothing (or no pin) was stored; NULL */
} db_adapt_site;
typedef void (*db_adapt_fn)(void *ctx, const db_adapt_site *s);
/* Import the rtdb_adapt log at path (rtdb.h, A5): read and check it whole,
** then in one transaction one campaign (strategy "adapt") per site with
** reports, of the stored workload its vars name exactly, one trial per arm
** that ran (ok with the reported times, or runtime_error when a run of it
** failed); pin: the replacing arm of a site whose incumbent was replaced
** is pinned (next version) unless the workload's pin changed since. A site
** whose vars match no stored workload is an error, or skipped with
** skip_unmatched. fn gets each site once the log is stored (never for a
** log rolled back). 0, or -1 with err (nothing stored). */
int db_adapt_import(db *d, const char *path, int pin, int skip_unmatched, db_adapt_fn fn, void *ctx,
                    rt_err *err);
/* db_pin's work inside the caller's transaction (db_pin.c). */
int db__pin_in(db *d, const db_pin_req *r, int64_t *version, rt_err *err);

/* ---- Internal: for the db/ files only (defined in db.c) ---- */
struct sqlite3;
struct sqlite3_stmt;
struct sqlite3 *db__sqlite(db *d);
/* err := "what: SQLite's message"; returns -1. */
int db__fail(db *d, rt_err *err, const char *what);
/* Prepare sql binding "s" text, "t" text or NULL, "i" int64, "d" double
** (NAN binds NULL); NULL with err. */
struct sqlite3_stmt *db__query(db *d, rt_err *err, const char *sql, const char *types, ...);
/* Step st once and finalize it. A query: *id (when id) = the first column
** of its first row; 0, or 1 when it has no row. A write: *id = the
** inserted rowid; 0, or 1 when it changed nothing. -1 on error. */
int db__run(db *d, struct sqlite3_stmt *st, int64_t *id, rt_err *err);
/* The family chain (schema 8) of every target row that has none yet,
** from its name and description: after rows are copied in (merge). */
int db__fill_families(db *d, rt_err *err);

#endif
