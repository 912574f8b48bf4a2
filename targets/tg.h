/*
** tg.h -- the targets: where code can run. One table of backends
** (tg_table.c: tg_backends[], one row per backend, tg_backend.h), and the
** calls the rest of rooftune makes: resolve a name into an instance
** ("host", "cuda:1", "opencl:0.0"), describe it, and thin tg_* calls that
** go to its row (measure, build key, ceilings, counters, limits).
** Nothing outside targets/ names a backend: callers ask the row.
**
** The fingerprint (one recipe for every backend, tg_describe): FNV-1a 128
** (rt_hash) of every "key=value" pair of the description, each followed by
** its NUL, in order. The host's is recipe 2 of hw.c unchanged (its
** databases keep matching). The CUDA fingerprint changed with it (it was
** a hash of "cuda|name|cc|sms|clock|memory|driver|nvrtc"; now every pair of
** its description): a CUDA database recorded before is a different target
** to a new campaign, but commands on recorded data take the target from
** the data (cli_data_target), so old databases still read.
**
** Families: after its fingerprint, a target belongs to a device model,
** an architecture and a backend (tg_family), from specific to general;
** the reader falls back along that chain (db/rtdb.h). Each row's family
** function computes the model and architecture from the description's
** pairs alone (tg_backend.h invariant 4), so the database computes the
** same chain for a description stored before families existed
** (tg_family_of). The chain is not hashed: fingerprints are unchanged.
*/
#ifndef TG_H
#define TG_H

#include "../common/rt.h"
#include "tg_backend.h"
#include "tg_desc.h"

/* tg_backends[] (tg_backend.h): the table, NULL-terminated. */

/* Resolve name ("host", "cuda", "cuda:N", ...) into *t through the rows
** (does not ask the hardware). 0, or -1 with err: unknown (the message
** lists the syntaxes), or malformed. */
int tg_resolve(const char *name, tg_target *t, rt_err *err);
/* A target description file (targets/model/tm.h) as an instance of the
** model_only row: tg_resolve of "ROW:path". 0, or -1 with err naming the
** file and the field that is wrong. */
int tg_file_target(const char *path, tg_target *t, rt_err *err);
/* The row of backend name ("host", "cuda"), or NULL. */
const tg_backend *tg_backend_find(const char *name);
/* Kernel template name of t's backend, else a T1 kernel of that backend
** loaded by targets/user/uk.h's uk_load; NULL if none has that name (t
** NULL: none). */
const struct kn_kernel *tg_kernel(const tg_target *t, const char *name);
/* The row of instance name, or NULL when no row parses it. */
const tg_backend *tg_backend_of(const char *name);
/* Kernel template kernel of the target named target; NULL if either is
** unknown. */
const struct kn_kernel *tg_kernel_of(const char *target, const char *kernel);
/* "host, cuda:N, ..." (the rows' syntaxes) into buf, returned. */
const char *tg_syntaxes(char *buf, size_t cap);

/* Describe t: the row's pairs and the fingerprint (recipe above; the
** row's test_fingerprint_env overrides it, adding the pair
** fingerprint_override). -1 with err. */
int tg_describe(const tg_target *t, tg_desc *d, rt_err *err);
/* The family chain of a stored target: its name's row (NULL family:
** "" model and arch) applied to the description's JSON pairs. 0; -1
** when no row parses the name (an imported target's own name) or the
** description is not a flat object of strings: then f is all "" but for
** what is known (the backend when a row parses the name). */
int tg_family_of(const char *name, const char *description_json, tg_family *f);
/* tg_resolve then tg_describe. */
int tg_describe_name(const char *name, tg_desc *d, rt_err *err);

/* Where a described target's numbers come from (JSON object text, valid
** while the process runs), or NULL for a target measured here. */
const char *tg_provenance(const tg_target *t);
/* The row's operations (tg_backend.h says what each does). */
const char *tg_compiler(const tg_target *t, char *buf, size_t cap);
void tg_build_key(const tg_target *t, const char *src, const char *ldflags,
                  const struct ms_opts *o, char key[33]);
void tg_prebuild(const tg_target *t, const char *const *srcs, int n, const char *ldflags,
                 const struct ms_opts *o, int jobs);
/* Whether t's measure times candidates (tg_backend.timed; 1 when the row
** has no such function); 0 with *why when its runs are emulated. */
int tg_timed(const tg_target *t, const char **why);
int tg_measure(const tg_target *t, struct ms_workload *w, const char *src, const char *ldflags,
               const struct ms_opts *o, struct ms_result *r);
/* Whether t's row measures batches with o: it has measure_batch and o
** asks no counter pass (counter passes stay per candidate). */
int tg_batches(const tg_target *t, const struct ms_opts *o);
/* Measure n candidates (tg_backend.measure_batch's contract): the row's
** measure_batch where tg_batches, else tg_measure one by one, *stop
** looked at between candidates. */
int tg_measure_batch(const tg_target *t, struct ms_workload *w, const char *const *srcs, int n,
                     const struct ms_opts *o, struct ms_result *r,
                     const volatile sig_atomic_t *stop, rt_err *err);
int tg_counters_available(const tg_target *t, const char **why);
int tg_bench(const tg_target *t, const struct cm_bench_opts *o, struct cm_ceilings *c,
             rt_err *err);
/* Whether the counts of traffic source are of one cold run (any row's
** traffic[]); 1 for a source no row names. */
int tg_traffic_cold(const char *source);
/* Appends t's limit bindings to out (tg_backend.limit_bindings). */
int tg_limit_bindings(const tg_target *t, const char *user_set, rt_str *out, rt_err *err);
/* user_set (may be NULL) followed by the limit bindings: the --set text a
** space of t is loaded with (caller frees); NULL with err. */
char *tg_bindings(const tg_target *t, const char *user_set, rt_err *err);
/* tg_bindings for kernel k: a T1 kernel's space (targets/user/uk.h) gets
** only the limit bindings it declares as problem variables. */
char *tg_kernel_bindings(const tg_target *t, const struct kn_kernel *k, const char *user_set,
                         rt_err *err);

#endif
