/*
** tg_backend.h -- the backend row: what differs between targets, one row
** per backend (targets/tg_table.c lists them; targets/<backend>/ defines
** each). A backend includes this header, tg_desc.h and the harness's
** measure/ms_backend.h, never tg.h: the table (tg.c, tg_table.c) depends
** on the backends, not the other way round, so there is no circle of
** files. Callers use tg.h (resolve a name, then the thin tg_* calls).
**
** Invariants:
**  1. Every operation takes the resolved instance (tg_target: its row,
**     canonical name and indices), never a name to parse again.
**  2. A row's fields are all set except where a field says "NULL: ..."
**     (then tg.c says what happens).
**  3. describe fills the key/value pairs only; the fingerprint is tg.c's
**     (one recipe: tg.h).
**  4. family reads the description's pairs only, never the hardware.
**  5. measure runs every candidate in the harness's isolated worker
**     (ms_backend.h: ms__run_worker), measure_batch a batch of them in
**     isolated batch workers (ms__run_batch): nothing a candidate does
**     takes the caller down, and each candidate of a batch gets the
**     status, message and statistics measure would give it.
**  6. A model_only row runs nothing (model:FILE, targets/model/tm.h):
**     its measure fails every candidate, its bench returns described
**     ceilings; what is stored for it are predictions (trials of origin
**     "predicted", tuner/tu.h tu_predict), never measurements.
**  7. A row with instance_row gives each instance a row of its own (a
**     copy of the row it borrows, with its own operations): tg_resolve
**     puts that row in t->be, so callers reading t->be->kernels or
**     ->model_family get the borrowed backend's. It finds the borrowed row
**     through the look-up tg_resolve passes it, never the table itself
**     (the table depends on the rows, not the other way round).
**  8. A row whose measure does not time (timed gives 0: an emulated
**     target) fills a verified result's origin with "emulated" and no
**     statistics; it is never stored as a trial (measure/ms.h invariant
**     8), and tune on it stores only predictions (--strategy model).
*/
#ifndef TG_BACKEND_H
#define TG_BACKEND_H

#include <signal.h>
#include <stddef.h>

#include "../common/rt.h"
#include "tg_desc.h"

struct kn_kernel;
struct kn_problem;
struct ms_opts;
struct ms_result;
struct ms_gpu_reading;
struct ms_workload;
struct cm_bench_opts;
struct cm_ceilings;
struct cm_machine;
struct cm_traffic;
struct tg_backend;

/* A source of counted cache traffic (the counters table's source). */
typedef struct tg_traffic {
  const char *source;           /* "papi", ...; NULL ends a list */
  int cold;                     /* 1: the counts are of one cold run;
                                ** 0: of a warm one */
} tg_traffic;

#define TG_NAME 48   /* bytes of a canonical instance name, NUL included */

/* A resolved target instance: where code runs. */
typedef struct tg_target {
  const struct tg_backend *be;  /* its row */
  char name[TG_NAME];           /* canonical: "host", "cuda:1", "opencl:0.0" */
  int idx[2];                   /* the instance's indices (cuda:N: N, 0;
                                ** opencl:P.D: P, D; host: 0, 0) */
} tg_target;

typedef struct tg_backend {
  const char *name;             /* "host", "cuda" */
  const char *summary;          /* one line for `rooftune targets` */
  const char *syntax;           /* instance syntax for help texts: "cuda:N" */
  int gpu;                      /* 1: a GPU (one-SM and all-SM figures,
                                ** device memory); 0: a CPU */
  int model_only;               /* 1: runs nothing, predicts only
                                ** (invariant 6); 0: a device */
  /* Name into *t when it names an instance of this backend ("cuda",
  ** "cuda:3"): 1; 0 when it is not this backend's; -1 with err when it
  ** is but is malformed ("cuda:x"). Does not ask the hardware. */
  int (*parse)(const char *name, tg_target *t, rt_err *err);
  /* The instances `rooftune targets` shows, into t[0..max): at least
  ** the first (whose describe says why when it is absent here); how
  ** many. */
  int (*list)(tg_target *t, int max);
  /* The description's pairs (invariant 3); -1 with err when the instance
  ** is not available here. */
  int (*describe)(const tg_target *t, tg_desc *d, rt_err *err);
  /* The family chain's device model and architecture (tg.h: "Families")
  ** from the description's pairs alone, so that a stored description
  ** gives what describing the device gives. NULL: none ("" both). */
  void (*family)(const tg_desc *d, tg_family *f);
  /* TEST-ONLY: an environment variable whose value (32 lower-case hex
  ** digits) replaces the fingerprint (tg.h), or NULL. */
  const char *test_fingerprint_env;
  /* The compiler's identity stored with trials ("PATH: cc (Debian) 14.2",
  ** "nvrtc 13.0") into buf, returned. */
  const char *(*compiler)(const tg_target *t, char *buf, size_t cap);
  /* The compile-cache key of a candidate (source, flags, compiler and
  ** whatever else decides the artefact): 32 hex digits. */
  void (*build_key)(const tg_target *t, const char *src, const char *ldflags,
                    const struct ms_opts *o, char key[33]);
  /* Build n sources into the compile cache ahead of measure (jobs in
  ** parallel, 0: one per CPU); errors are left for measure to report. */
  void (*prebuild)(const tg_target *t, const char *const *srcs, int n, const char *ldflags,
                   const struct ms_opts *o, int jobs);
  /* Whether measure times candidates here: 0 with *why for a row whose
  ** runs are emulated (they verify and time nothing, ms_result.origin
  ** "emulated": measure/ms.h invariant 8), so that no campaign starts on
  ** it. NULL: it always times. */
  int (*timed)(const tg_target *t, const char **why);
  /* Measure one candidate (build, verify, time, counters when o->counters)
  ** in the isolated worker; src NULL measures the kernel's reference.
  ** Always fills r; 0, or -1 only for harness failures (ms.h). */
  int (*measure)(const tg_target *t, struct ms_workload *w, const char *src,
                 const char *ldflags, const struct ms_opts *o, struct ms_result *r);
  /* Measure n candidates srcs[0..n) (none NULL) as measure measures each,
  ** without counters, several in one worker child (ms__run_batch: one
  ** context and one copy of the workload's buffers for many candidates);
  ** r[i] filled in order. Returns n, or fewer when *stop (may be NULL) was
  ** set: r[0..return) are complete, the rest not measured; -1 with err
  ** for harness failures (nothing of the batch is to be kept). NULL: the
  ** row measures one by one (tg_measure_batch). */
  int (*measure_batch)(const tg_target *t, struct ms_workload *w, const char *const *srcs, int n,
                       const struct ms_opts *o, struct ms_result *r,
                       const volatile sig_atomic_t *stop, rt_err *err);
  /* Counters: the source name stored in the counters table ("papi",
  ** "cupti"), and whether they work here (*why says why not). */
  const char *counter_source;
  int (*counters_available)(const tg_target *t, const char **why);
  /* The default events or metrics when ms_opts.events is NULL,
  ** NULL-terminated. */
  const char *const *default_events;
  /* The traffic a trial's counts r amount to, as a JSON object the
  ** counters table stores under counter_source for the cost model
  ** (level name -> bytes, "metrics": every count), caller frees; NULL:
  ** none stored (the counts stay with the trial only). NULL field: none. */
  char *(*counted_traffic)(const tg_target *t, const struct ms_result *r);
  /* Measure the ceilings (peak FLOP/s, bandwidth per level). */
  int (*bench)(const tg_target *t, const struct cm_bench_opts *o, struct cm_ceilings *c,
               rt_err *err);
  /* The family the cost model registers this backend's kernel models
  ** under (cm_kmodel.family). */
  const char *model_family;
  /* Every source its counted traffic may come from (the sources of
  ** stored counts), ending with a NULL source. */
  const tg_traffic *traffic;
  /* Counted cache traffic for the model's byte terms: the source (one of
  ** traffic[]) that counts it for this target (here: the target is this
  ** machine), or NULL with *why. */
  const char *(*traffic_source)(const tg_target *t, int here, const char **why);
  /* Count one run of src with source (traffic_source's) into tr; NULL:
  ** counts are read back from trials stored by tune --counters only. */
  int (*traffic_count)(const tg_target *t, const char *source, const struct kn_kernel *k,
                       const struct kn_problem *pb, const char *src, const struct cm_machine *m,
                       const char *cache_dir, struct cm_traffic *tr, rt_err *err);
  /* Problem-variable bindings "VAR=VAL" for the limits its spaces declare
  ** (max_threads, ...), appended comma-separated to out, leaving out the
  ** variables user_set binds (tg_binds); NULL: none. 0, or -1 with err. */
  int (*limit_bindings)(const tg_target *t, const char *user_set, rt_str *out, rt_err *err);
  const struct kn_kernel *const *kernels;   /* its templates, NULL-terminated */
  /* Before its models predict: install what they may ask of the
  ** backend (cm_gpu_resources_set) for the device the ceilings describe;
  ** compile: 1 to build a schedule to answer (a few hundred schedules:
  ** calibration, accuracy), 0 to answer only from builds already in the
  ** compile cache (a campaign ranking thousands). NULL: nothing to set. */
  void (*model_setup)(const tg_target *t, const struct cm_ceilings *ce, const char *cache_dir,
                      int compile);
  /* The device's clocks and throttling now, for the load guard (ms.h
  ** "Load"; ctx: the const tg_target *). 0, or -1 with err (the guard
  ** then goes on without it). NULL: the row has none (a CPU). */
  int (*gpu_reading)(void *ctx, struct ms_gpu_reading *r, rt_err *err);
  /* Where a described target's numbers come from: a JSON object {field:
  ** source} (model:FILE's "provenance"). NULL field: measured here. */
  const char *(*provenance)(const tg_target *t);
  /* The row instance t works as (invariant 7), made from find (the
  ** table's look-up by row name: tg_backend_find); NULL with err when it
  ** cannot be made (the borrowed row is unknown). NULL field: the row
  ** itself. */
  const struct tg_backend *(*instance_row)(const tg_target *t,
                                           const struct tg_backend *(*find)(const char *name),
                                           rt_err *err);
} tg_backend;

/* The table (tg_table.c): every row, NULL-terminated. Declared here, not
** in tg.h, so that tg_table.c depends on the rows' headers only. */
extern const tg_backend *const tg_backends[];

#endif
