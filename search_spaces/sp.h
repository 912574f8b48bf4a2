/*
** sp.h -- search spaces: load a T1 space file (with rooftune's problem
** variables), and the space engine over it: exact counting, enumeration in
** canonical order, rank/unrank, uniform sampling, neighbours, validity.
**
** A configuration is an array of value indices, one per parameter, in the
** space's parameter order: cfg[p] indexes sp_value(sp, p, .). The canonical
** order of configurations is the lexicographic order of these index
** vectors (the order of Python's itertools.product over the parameters in
** file order), restricted to valid ones. rank/unrank are the bijection
** between 0..count-1 and that sequence.
**
** Invariants:
**  1. After sp_load*, every parameter has >= 1 distinct value of its
**     declared type (floats finite), every condition is compiled and names
**     only parameters and problem variables, and every problem variable is
**     bound (to a finite value).
**  2. A condition is checked as soon as the last parameter it reads is
**     fixed, in the order of the search that checks it (sp_engine.c: an
**     order chosen from the conditions for counting and sampling, file
**     order for rank/unrank/next); single-valued parameters are constants
**     in it; one that raises is false.
**  3. The engine's memo tables hold exact counts of valid completions and
**     are filled lazily; all results are independent of call order.
**  4. An sp_space is used by one thread at a time (it owns an sx_vm).
**  5. Counts, sp_get_stats after a count, and samples (for the same
**     generator state, compared by parameter name) are the same for every
**     order of the parameters in the file; only the canonical order
**     (rank, unrank, next, neighbours' order) follows the file.
*/
#ifndef SP_H
#define SP_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "../common/rt.h"
#include "sx.h"

typedef struct sp_space sp_space;

/* A problem variable bound by the user (--set M=1024). */
typedef struct sp_binding {
  char name[64];
  sx_value value;   /* scalar: int, float, bool; strings live in the arena */
} sp_binding;

/* Parse "M=1024,N=2**10,layout='nhwc'" (values are constant expressions).
** Returns the number of bindings (>= 0) or -1 with err set. *out is
** malloc'ed (free it); string values are copied into arena. */
int sp_parse_bindings(const char *text, sx_arena *arena, sp_binding **out,
                      rt_err *err);

/* Load a space. path is used in messages; sp_load_string parses text.
** Errors: JSON syntax (err->line/col set), missing or mistyped fields
** (named by their JSON path), expression errors (field, text, column),
** unknown names, unbound or unknown problem variables, wrong types. */
sp_space *sp_load_file(const char *path, const sp_binding *set, int nset,
                       rt_err *err);
sp_space *sp_load_string(const char *text, const char *name,
                         const sp_binding *set, int nset, rt_err *err);
void sp_free(sp_space *sp);                               /* NULL: no-op */

/* ---- Description ---- */
const char *sp_name(const sp_space *sp);       /* General.BenchmarkName or file */
int sp_nparams(const sp_space *sp);
const char *sp_param_name(const sp_space *sp, int p);
const char *sp_param_type(const sp_space *sp, int p);  /* "int", "float", ... */
const char *sp_param_values_text(const sp_space *sp, int p);
int sp_nvalues(const sp_space *sp, int p);
const sx_value *sp_value(const sp_space *sp, int p, int i);
int sp_default(const sp_space *sp, int p);     /* value index, -1 if none */
int sp_param_index(const sp_space *sp, const char *name); /* -1 if absent */

int sp_nconds(const sp_space *sp);
const char *sp_cond_text(const sp_space *sp, int c);
const int *sp_cond_params(const sp_space *sp, int c, int *n); /* ascending */

int sp_nvars(const sp_space *sp);
const char *sp_var_name(const sp_space *sp, int v);
const sx_value *sp_var_value(const sp_space *sp, int v);
int sp_var_was_set(const sp_space *sp, int v);  /* 0: took its Default */

/* Independent groups: parameters connected through shared conditions.
** Groups are numbered by their first parameter; members ascending. */
int sp_ngroups(const sp_space *sp);
const int *sp_group_params(const sp_space *sp, int g, int *n);
int sp_group_of(const sp_space *sp, int p);

/* Load-time notes that are not errors (e.g. duplicate values dropped). */
int sp_nwarnings(const sp_space *sp);
const char *sp_warning(const sp_space *sp, int i);

/* ---- Counting ---- */
rt_count sp_cartesian(const sp_space *sp);
/* Exact number of valid configurations: the product of the groups'
** counts, each found by the memoised search of the engine. */
rt_count sp_count(sp_space *sp);
rt_count sp_group_count(sp_space *sp, int g);        /* valid in group g */
rt_count sp_group_cartesian(const sp_space *sp, int g);

/* The work the engine has done on sp so far, for benchmarks and
** debugging: the conditions its searches evaluated (sp_valid's are not
** counted) and the memo entries held (SP_MEMO_MAX at most). Deterministic:
** the same for the same calls on the same space, whatever the load. */
typedef struct sp_stats {
  uint64_t evals;
  size_t memo_entries;
} sp_stats;
void sp_get_stats(const sp_space *sp, sp_stats *st);

/* ---- Configurations ---- */
/* 1 if cfg (value indices) satisfies every condition, else 0; *failed (if
** not NULL) gets the first false condition or -1. */
int sp_valid(sp_space *sp, const int *cfg, int *failed);
/* cfg := the configuration of rank r (r < sp_count). -1 if out of range. */
int sp_unrank(sp_space *sp, rt_count r, int *cfg);
/* *r := rank of a valid cfg. -1 if cfg is invalid. */
int sp_rank(sp_space *sp, const int *cfg, rt_count *r);
/* cfg := the next valid configuration in canonical order; 0 at the end. */
int sp_next(sp_space *sp, int *cfg);

/* Uniform random integer in [0, n) from a GSL generator (n >= 1). */
rt_count sp_rand_below(const gsl_rng *rng, rt_count n);
/* Uniform sample of valid configurations: n configurations into cfgs
** (n * sp_nparams ints). distinct: without replacement (n <= count).
** Deterministic for a given generator state, whatever the file's order of
** parameters (invariant 5): uniform ranks are unranked in the engine's own
** order, not the canonical one. -1 with err when impossible. */
int sp_sample(sp_space *sp, const gsl_rng *rng, int n, int distinct,
              int *cfgs, rt_err *err);

/* Neighbours of cfg that are valid: SP_NB_HAMMING differ in exactly one
** parameter (any other value); SP_NB_ADJACENT differ in one parameter by
** one position in its value list. Ordered by parameter, then value index.
** Returns their number; *out (malloc'ed, count * nparams ints). */
typedef enum { SP_NB_HAMMING, SP_NB_ADJACENT } sp_nb_kind;
int sp_neighbours(sp_space *sp, const int *cfg, sp_nb_kind kind, int **out);

/* The default configuration (every parameter's Default); 0 if some
** parameter has none. Its validity is for the caller to check. */
int sp_default_config(const sp_space *sp, int *cfg);

/* ---- Configurations as JSON ---- */
/* Canonical JSON text of cfg: an object with keys in parameter order,
** compact separators. Caller frees. */
char *sp_config_json(const sp_space *sp, const int *cfg);
/* The problem variables and their bound values as a compact JSON object,
** in declaration order. Caller frees. */
char *sp_vars_json(const sp_space *sp);
/* Parse a JSON object naming every parameter once into value indices.
** -1 with err naming the missing/unknown key or the value not in the
** parameter's Values. */
int sp_config_parse(const sp_space *sp, const char *json, int *cfg,
                    rt_err *err);

#endif
