/*
** tu.h -- the tuner: search strategies behind one small interface (one
** file each, listed in one table), the run loop that drives a strategy
** against an objective under a budget, the objectives (a recording to
** replay; live measurement lives in tu_campaign.c), the scoring
** methodology used to compare strategies, and the workflows the command
** line calls: strategy comparison (tu_compare.c) and the calibration of a
** cost model (tu_calibrate.c).
**
** Invariants:
**  1. A run evaluates each configuration at most once. A proposal that
**     already has a result is answered from the run's memory at no cost
**     and does not count against the budget.
**  2. Every configuration a strategy proposes gets exactly one observe()
**     call, in proposal order, before the strategy is asked to propose
**     again -- unless the run ends first (budget, stop flag).
**  3. Given the same space, seed, budget and objective answers, a run
**     makes the same evaluations in the same order (strategies draw all
**     randomness from ctx->rng; nothing reads clocks or addresses).
**  4. Strategies reach the space only through sp.h (sampling, rank/unrank,
**     neighbours, validity), never by listing it, so they work on spaces
**     of any size; every configuration they propose is valid.
**  5. A run may be given configurations to evaluate first (a campaign's
**     default schedule): they are evaluated before the strategy's first
**     proposal, in order, count against the budget like any evaluation,
**     and reach the strategy as results it did not propose (inform; a
**     strategy without inform finds them known).
**  6. A campaign pins conservatively: when unsure, it does not transform.
**     Its first trial is the space's default schedule. At the end the best
**     few verified trials (by median, the apparent winner among them) are
**     measured again, alternating with the default in one time window
**     (D c1 D c2 ... D), and a candidate is pinned only if its
**     re-measured 95% CI of the median lies wholly below that of both
**     default measurements beside it; otherwise the default is pinned, and
**     the report and the pin's reason say why. Only re-measured candidates
**     can be pinned, so a noisy trial is measured again first; a candidate
**     whose re-measurement is not verified (wrong result, crash) is never
**     pinned; without a verified default the fastest re-measured verified
**     candidate is pinned. The re-measurements are stored (table
**     remeasurements) and an identical sequence is reused, like a trial.
**  7. The workflows (comparison, calibration) read and write nothing but
**     their arguments and what their callbacks do, and print nothing: the
**     same inputs and callback answers give the same result, bit for bit.
**  8. A calibration's held-out split is a pure function of each
**     schedule's configuration hash, the seed and the share: asked again
**     later (model accuracy), the same schedules are held out.
**  9. Where the target's row measures batches (tg_batches: the device
**     backends, without --counters), a campaign measures the batch a
**     strategy proposes together in one worker child (after the batch's
**     parallel build), and each candidate's evaluation takes its result
**     from there in proposal order. Per trial nothing changes: the same
**     statuses, the same trials stored in the same order, the same reuse
**     (a candidate stored by this campaign or measured earlier from the
**     same source is not measured again; a timeout is never reused), the
**     budget never exceeded. Ctrl-C in the middle of a batch stores the
**     candidates it finished, as one by one would have, and not the one
**     in flight; resume measures the rest. Measured but not evaluated:
**     a batch's candidates after the run's end by time limit, stall or
**     failure (their results are dropped).
** 10. A run with parallel > 1 (MPI workers: mpi/mp.h) that can submit
**     and collect evaluations (tu_run_opts) runs an asynchronous strategy (tu_strategy.async)
**     asynchronously: whenever fewer than `parallel` evaluations are in
**     flight it asks for one proposal, and each result is added and
**     observed as it finishes; the budget counts evaluations in flight, so
**     it is never exceeded. Invariants 2 and 3 then hold per result but
**     not in order: which results a proposal saw depends on timing. Other
**     strategies keep the batch path (prepare, then eval in proposal
**     order); bayes then proposes `parallel` at once by the constant liar
**     (ts_bayes.c). With parallel <= 1 nothing changes.
** 11. A live campaign given measure_submit/collect (tu_campaign_opts: an
**     MPI pool) with parallel > 1 and an asynchronous strategy runs by
**     invariant 10: every worker is kept busy, and each trial is stored
**     (one transaction) the moment its result arrives, in completion
**     order. A proposal this campaign stored before (resume) or that an
**     earlier measurement answers (reuse) is answered without a worker; one
**     whose source is at a worker waits for that result and is then reused
**     (or measured when it cannot be: a timeout, a busy machine). Budget,
**     invariant 1 and the campaign invariants 1-4 hold as sequentially;
**     resume feeds every stored trial first (invariant 5, in id order), so
**     that trials answer the replayed strategy by configuration whatever
**     their order. Stopped, what is in flight is dropped. The default
**     first and the end (re-measurements, pin, baseline) stay sequential,
**     on the lowest idle worker. Which configurations a seed gives then
**     depends on timing (random's: never; its order: yes).
** 12. A run with a time limit (max_cost > 0) spends it by predicted cost:
**     before each new evaluation it predicts the candidate's cost, compile
**     (the median compile_s of the run's evaluations so far; before any,
**     tu_run_opts.compile_prior) plus measurement (the candidate's
**     predicted time, the model's, times the median ratio of measuring
**     cost to measured time so far -- before any, run_prior; without a
**     model, the median measuring cost so far), and ends (TU_END_COST)
**     when what is spent plus that prediction exceeds the limit. Without
**     a prediction (nothing to go on yet) it ends only once the spent cost
**     reaches the limit. Strategies see the prediction through
**     tu_ctx.cost. A batch's parallel build is spent as its trials are:
**     each carries its share (the build's wall time over the sources it
**     built) in its compile_s and cost. The asynchronous loop (invariant
**     10) counts the predicted costs of the evaluations in flight as
**     spent, submits none that would pass the limit, and ends (TU_END_COST)
**     once those in flight are in.
*/
#ifndef TU_H
#define TU_H

#include <gsl/gsl_rng.h>
#include <signal.h>
#include <stdint.h>

#include "../common/jw.h"
#include "../common/rt.h"
#include "../cost_model/cm.h"
#include "../db/db.h"
#include "../measure/ms.h"
#include "../search_spaces/sp.h"

/* ---- Observations ---- */

/* Where a result came from. */
typedef enum {
  TU_MEASURED,   /* built and run now */
  TU_REUSED,     /* an earlier campaign's measurement of the same source */
  TU_RESUMED,    /* this campaign's own stored trial (--resume) */
  TU_REPLAYED    /* a recording (replay, compare) */
} tu_origin;

/* The result of evaluating one configuration. The objective is time in
** seconds, lower is better. */
typedef struct tu_obs {
  int ok;          /* 1: verified, value holds its time; 0: it failed */
  double value;    /* seconds (only when ok) */
  int status;      /* ms_status (measure/ms.h): MS_OK, MS_COMPILE_ERROR, ... */
  double cost;     /* seconds the evaluation took or would have taken */
  tu_origin origin;
  int loaded;      /* 1: measured while the machine was busy (db_trial.loaded):
                   ** a model does not learn from it */
  double compile_s; /* the part of cost spent building and verifying (the
                    ** rest ran the candidate); 0 when not known */
} tu_obs;

/* ---- Strategies ---- */

/* What a strategy sees of its run. Valid for the strategy's lifetime. */
typedef struct tu_ctx {
  sp_space *sp;
  gsl_rng *rng;          /* the strategy's own generator (mt19937, seeded) */
  int64_t budget;        /* evaluations the run may make; -1 unknown (time) */
  /* 1 with *obs (may be NULL) when cfg already has a result in this run. */
  int (*known)(void *run, const int *cfg, tu_obs *obs);
  void *run;
  /* Predicted time of n configurations (cost-model issue): t[i] seconds,
  ** NAN when the model cannot say. NULL when the run has no model. */
  int (*predict)(void *model, const int *cfgs, int n, double *t);
  /* Recalibrate the model on the n successful results so far (cfgs and
  ** their times, in the order observed); 0, or -1 when the fit failed and
  ** the model kept its coefficients. NULL when the model cannot learn. */
  int (*refit)(void *model, const int *cfgs, const double *t, int n);
  void *model;
  /* The uncertainty of n predictions: s[i] the standard deviation of
  ** log(measured / predicted) expected for cfgs[i] (from the held-out
  ** residuals of the model's calibration), NAN when unknown. NULL: none. */
  int (*sigma)(void *model, const int *cfgs, int n, double *s);
  /* The predicted cost in seconds of evaluating a configuration whose
  ** predicted time is t (NAN: unknown), compile and measurement together
  ** (invariant 12); NAN when the run cannot say yet. NULL unless the run
  ** spends a time limit (tu_run_opts.max_cost). */
  double (*cost)(void *run, double t);
  /* Evaluations the run makes at once (tu_run_opts.parallel; 0 or 1: one
  ** at a time). A strategy that proposes one configuration at a time may
  ** then propose up to this many (bayes: the constant liar). */
  int parallel;
} tu_ctx;

struct tu_guide;
typedef struct tu_strategy {
  const char *name;      /* on the command line: --strategy NAME */
  const char *summary;   /* one line for --help */
  int needs_model;       /* 1: refuses to run when ctx->predict is NULL */
  /* A fresh search state; NULL with err. ctx outlives the state. */
  void *(*create)(const tu_ctx *ctx, rt_err *err);
  /* Up to max valid configurations to evaluate next, into cfgs
  ** (max * nparams ints). Returns how many; 0 means the strategy has
  ** nothing more to propose (the run then restarts it, see tu_run). */
  int (*propose)(void *st, int *cfgs, int max);
  /* The result of one configuration it proposed (invariant 2). */
  void (*observe)(void *st, const int *cfg, const tu_obs *obs);
  void (*destroy)(void *st);
  /* Optional (NULL: not supported): a result the strategy did not propose
  ** (e.g. another arm's in an ensemble). Never called between a propose
  ** and the observes of that batch. */
  void (*inform)(void *st, const int *cfg, const tu_obs *obs);
  /* 1: asynchronous (invariant 10): propose may be called while earlier
  ** proposals are still out, and observe takes results in the order they
  ** finish, each matched by its configuration. */
  int async;
  /* Optional: add what the strategy did to *g (a strategy that guides
  ** itself by a model and falls back on another: model). The run sums it
  ** over restarts (tu_run_guide). */
  void (*guide)(void *st, struct tu_guide *g);
} tu_strategy;

/* What a model-guided strategy did: proposals it took from the model's
** ranking and from its model-free fallback (named), the rank correlation
** of its last agreement window (NAN: not measured) and how often the
** share of the fallback rose above one half or fell back below it. */
typedef struct tu_guide {
  int64_t model, fallback;
  const char *fallback_name;
  double rho;
  int switches;
} tu_guide;

/* The strategy table (tu_strategies.c), NULL-terminated. */
extern const tu_strategy *const tu_strategies[];
const tu_strategy *tu_strategy_find(const char *name);   /* NULL if unknown */

/* The strategies (one file each: ts_NAME.c). */
extern const tu_strategy ts_exhaustive, ts_random, ts_annealing, ts_genetic,
    ts_de, ts_pso, ts_bayes, ts_bandit, ts_model;

/* ---- Helpers for strategies (tu_util.c) ---- */

/* A pseudo-random permutation of [0, n) (a keyed Feistel network with
** cycle walking): visits every rank exactly once in a seeded order, in O(1)
** memory, for any n up to 2^126. */
typedef struct tu_perm {
  rt_count n, half_mask;
  int half_bits;
  uint64_t key[4];
} tu_perm;
void tu_perm_init(tu_perm *p, rt_count n, const gsl_rng *rng);
rt_count tu_perm_at(const tu_perm *p, rt_count i);      /* i < n */

/* A uniformly random valid configuration that the run has not evaluated
** yet (tries up to `tries` samples; returns 0 if all were known, and then
** cfg holds the last sample). */
int tu_random_unknown(const tu_ctx *ctx, int *cfg, int tries);

/* A map from configurations to dense indices 0, 1, ... in insertion
** order (the run's memory, a recording's index). */
typedef struct tu_cfgmap {
  int np;
  int64_t n, cap, nslot;
  int *keys;              /* n * np, insertion order */
  int64_t *slot;          /* open addressing: index + 1, 0 empty */
} tu_cfgmap;
void tu_cfgmap_init(tu_cfgmap *m, int np);
void tu_cfgmap_free(tu_cfgmap *m);
int64_t tu_cfgmap_get(const tu_cfgmap *m, const int *cfg);     /* -1: absent */
/* The index of cfg, inserting it (as index n) when absent; *added says which. */
int64_t tu_cfgmap_put(tu_cfgmap *m, const int *cfg, int *added);
const int *tu_cfgmap_key(const tu_cfgmap *m, int64_t i);

/* ---- Objectives ---- */

typedef struct tu_objective {
  /* Evaluate cfg (valid) into *obs. 0, or -1 with err to abort the run
  ** (harness failure, a configuration absent from a recording). */
  int (*eval)(void *ctx, const int *cfg, tu_obs *obs, rt_err *err);
  void *ctx;
  /* Optional: the n configurations (valid, not yet evaluated) that eval
  ** is about to get, in order, so that it can prepare them together
  ** (build them in parallel). Changes no result. */
  void (*prepare)(void *ctx, const int *cfgs, int n);
} tu_objective;

/* ---- Recordings (tu_replay.c): recorded results as the objective ---- */

typedef struct tu_rec tu_rec;
/* The results of a T4 file (plain or gzip) recorded on sp. */
tu_rec *tu_rec_t4(const char *path, sp_space *sp, rt_err *err);
/* The trials of a rooftune database matching f, for configurations of sp;
** a configuration recorded more than once keeps its first trial (id
** order). An empty selection is an error. */
tu_rec *tu_rec_db(const char *db_path, const db_trial_filter *f, sp_space *sp, rt_err *err);
void tu_rec_free(tu_rec *r);                       /* NULL is a no-op */
const char *tu_rec_name(const tu_rec *r);          /* where it came from */
int64_t tu_rec_n(const tu_rec *r);                 /* configurations recorded */
const int *tu_rec_cfg(const tu_rec *r, int64_t i);
const tu_obs *tu_rec_obs(const tu_rec *r, int64_t i);   /* origin TU_REPLAYED */
/* The objective answering from the recording; a configuration it lacks
** aborts the run with an error naming it (replay never guesses). */
tu_objective tu_rec_objective(tu_rec *r);
/* values[i] := time of recorded configuration i, NAN when it failed
** (tu_random_expect's input); returns the fastest ok time (NAN: none). */
double tu_rec_values(const tu_rec *r, double *values);

/* ---- Runs ---- */

typedef struct tu_run tu_run;

typedef struct tu_run_opts {
  const tu_strategy *strategy;
  uint64_t seed;
  int64_t max_evals;     /* stop after this many evaluations; 0: no limit */
  double max_cost;       /* stop once this much evaluation cost (seconds)
                         ** is spent; 0: no limit */
  int batch;             /* most proposals asked for at once (0: 16) */
  volatile sig_atomic_t *stop;   /* set (e.g. by SIGINT): stop after the
                                 ** evaluation in progress */
  /* Called after every new evaluation (progress lines, storing). */
  void (*on_eval)(void *ctx, const tu_run *r);
  void *on_eval_ctx;
  int (*predict)(void *model, const int *cfgs, int n, double *t);
  int (*refit)(void *model, const int *cfgs, const double *t, int n);
  void *model;
  /* The model's uncertainty (tu_ctx.sigma); NULL: none. */
  int (*sigma)(void *model, const int *cfgs, int n, double *s);
  /* Invariant 12's priors, used until the run has measured something:
  ** seconds of compile (and verify) per candidate, and measuring seconds
  ** per second of the candidate's time (the measurement policy's
  ** repeats); 0 or NAN: none. */
  double compile_prior, run_prior;
  const int *first;      /* nfirst configurations to evaluate first
                         ** (invariant 5); NULL: none */
  int nfirst;
  int parallel;          /* evaluations at once (invariant 10); 0, 1: one */
  /* Optional, both or neither (invariant 10), called with the objective's
  ** ctx: submit starts evaluating cfg (valid, not evaluated, not in
  ** flight) and returns at once; collect waits for any submitted
  ** evaluation to finish and gives its configuration (into cfg) and
  ** result. 0, or -1 with err (the run ends). */
  int (*submit)(void *ctx, const int *cfg, rt_err *err);
  int (*collect)(void *ctx, int *cfg, tu_obs *obs, rt_err *err);
} tu_run_opts;

/* Why a run ended. */
typedef enum { TU_END_BUDGET, TU_END_COST, TU_END_SPACE, TU_END_STOPPED,
               TU_END_STALLED } tu_end;
const char *tu_end_name(tu_end e);   /* "budget", "time", ... */

/* Run strategy o->strategy on sp against obj until the budget, the cost
** limit, the stop flag, or the end of the space (every valid
** configuration evaluated). A strategy that proposes nothing or only
** known configurations for too long is restarted with a fresh generator;
** after too many restarts the run ends TU_END_STALLED. Returns the run
** (free with tu_run_free), or NULL with err when the objective failed or
** the strategy could not start; a run the objective aborted is still
** returned through *partial when partial is not NULL. */
tu_run *tu_run_strategy(sp_space *sp, const tu_objective *obj, const tu_run_opts *o,
                        tu_run **partial, rt_err *err);
void tu_run_free(tu_run *r);                  /* NULL is a no-op */

/* What a run did, in evaluation order. */
int64_t tu_run_n(const tu_run *r);             /* evaluations made */
const int *tu_run_cfg(const tu_run *r, int64_t i);
const tu_obs *tu_run_obs(const tu_run *r, int64_t i);
int64_t tu_run_best(const tu_run *r);          /* index of the fastest ok, -1 */
double tu_run_cost(const tu_run *r);           /* sum of the evaluations' cost */
double tu_run_framework_s(const tu_run *r);    /* wall time outside eval() and
                                               ** prepare(): the strategy's */
int64_t tu_run_proposals(const tu_run *r);     /* incl. already-known ones */
int tu_run_restarts(const tu_run *r);
tu_end tu_run_end(const tu_run *r);
/* What the strategy said of its guidance (tu_strategy.guide), summed over
** its restarts; all 0 (rho NAN) when it says nothing. */
tu_guide tu_run_guide(const tu_run *r);
/* Invariant 12's predicted cost of evaluating a configuration of
** predicted time t (NAN: no model) after the run's evaluations so far;
** NAN when it has nothing to go on. */
double tu_run_cost_of(const tu_run *r, double t);

/* ---- Scoring (tu_score.c): the methodology of Willemsen et al. ---- */

/* Conventions: values[i] is the time of configuration i of a fully
** recorded space, NAN for a failed one. A best-so-far curve holds, after
** k evaluations (k = 1..kmax, out[k-1]), the fastest time found so far;
** before the first ok result it is the space's worst ok time (so that
** random search's expectation is finite and failures cost what they
** should: nothing found yet). */

/* The expected best-so-far curve of random search without replacement,
** computed exactly from the order statistics: after k draws,
** E[min] = sum_i v_(i) C(n-i, k-1) / C(n, k) over the sorted values
** (failures counted as draws of the worst value). */
void tu_random_expect(const double *values, int64_t n, int64_t kmax, double *out);
/* The best-so-far curve of a run (flat after the run's last evaluation). */
void tu_run_curve(const tu_run *r, int64_t kmax, double worst, double *out);
/* The score of a curve: the mean over k = 1..kmax of
** (R(k) - S(k)) / (R(k) - opt), skipping points where random search's
** expectation has reached the optimum. 0: random search; 1: the optimum
** from the first evaluation; negative: worse than random. */
double tu_score(const double *curve, const double *random_curve, double opt,
                int64_t kmax);

/* ---- Comparison (tu_compare.c): strategies scored over repeats ---- */

/* One run of a comparison, as its source reports it. */
typedef struct tu_cmp_run {
  int64_t evals;
  double cost, framework_ms;   /* seconds measuring; the strategy's ms per evaluation */
  int tuned;                   /* live: the campaign's pin decision (invariant 6)
                               ** chose a tuned schedule over the default */
  int64_t from_model, from_fallback;   /* tu_run_guide's proposals (0, 0: none said) */
  /* Given to the source (budget entries, all NAN): it may fill spent[k-1]
  ** with the cost spent after k evaluations, the time axis of the curve
  ** (tu_cmp_result.spent); a source that assigns *info whole keeps it. */
  double *spent;
} tu_cmp_run;

/* Where a comparison's runs come from. run(ctx, S, seed, budget, curve,
** info, err): one run of strategy S, its best-so-far curve over
** 1..budget in curve[0..budget-1] (the worst known value before its first
** ok result; tu_run_curve), what it cost in *info; 0, or nonzero when it
** failed (why in err; a source that reported it itself may leave err
** empty). Random search's expectation is computed over values[0..n-1]
** (NAN: failed; tu_random_expect); opt is the fastest ok value among them. */
typedef struct tu_cmp_src {
  int (*run)(void *ctx, const tu_strategy *S, uint64_t seed, int64_t budget, double *curve,
             tu_cmp_run *info, rt_err *err);
  void *ctx;
  const double *values;
  int64_t n;
  double opt;
} tu_cmp_src;

/* One strategy's scores over its repeats, and what its runs found. */
typedef struct tu_cmp_stat {
  double mean, sd, min, median, max;   /* of the scores (sd: sample, 0 for one run) */
  double best_frac;     /* mean of optimum / the run's best */
  double ms_per_eval;   /* mean of the runs' framework_ms */
  int found_opt;        /* runs whose best is the optimum */
  int tuned;            /* runs with tuned set */
} tu_cmp_stat;

/* A comparison's result: run r of strategy s (seed + r) is index
** s * repeats + r of runs and scores, its curve at curves + index * budget;
** rnd[k-1] random search's expected best after k evaluations; opt the
** best value known anywhere (the source's or a run's). */
typedef struct tu_cmp_result {
  int ns, repeats;
  int64_t budget;
  uint64_t seed;
  double opt;
  double *curves, *rnd, *scores;
  double *spent;        /* as curves: the cost spent after k evaluations
                        ** (NAN: not said, or after the run's end) */
  tu_cmp_run *runs;
  tu_cmp_stat *st;      /* per strategy */
} tu_cmp_result;

/* Run each of the ns strategies of list `repeats` times through src (seeds
** seed, seed + 1, ...; strategy by strategy, in order) with `budget`
** evaluations, and score every curve (tu_score) against random search's
** expectation and the optimum (invariant 7: the same source answers give
** the same result). 0 with *res; -1 with err (a run failed: the first
** failure stops the comparison; no strategy, budget, repeat or value).
** tu_cmp_result_free after either. */
int tu_compare(const tu_cmp_src *src, const tu_strategy *const *list, int ns, int64_t budget,
               int repeats, uint64_t seed, tu_cmp_result *res, rt_err *err);
void tu_cmp_result_free(tu_cmp_result *res);

/* ---- Live campaigns (tu_campaign.c) ---- */

/* What the progress line shows, after every evaluation. */
typedef struct tu_progress {
  int64_t done, budget;              /* budget 0: none (time limit only) */
  int64_t measured, reused, resumed, failures;
  double best_s, best_gflops;        /* NAN until something verified */
  double elapsed_s, remaining_s;     /* remaining: an estimate, NAN unknown */
} tu_progress;

enum { TU_LOAD_WAIT = 0, TU_LOAD_FLAG = 1 };   /* tu_campaign_opts.load_policy */

typedef struct tu_campaign_opts {
  const char *db_path;         /* created when missing */
  const char *target;          /* "host" */
  const char *kernel, *set;    /* the kernel template and its problem variables */
  const char *space;           /* a space file of the kernel's parameters (a
                               ** subset of their values); NULL: the kernel's */
  const char *strategy;
  /* A JSON object saying where the kernel came from, stored with the
  ** campaign's options under "kernel_source" (a T1 kernel's file, the
  ** hashes of it and of its sources, its inputs' fills and seeds:
  ** uk_provenance_json), or NULL. A resumed campaign keeps the stored one. */
  const char *provenance;
  const char *budget;          /* "N" evaluations, or "P%" of the valid space */
  double time_limit;           /* seconds of measuring; 0: none */
  uint64_t seed;
  int batch, no_pin;
  int no_load_guard;           /* 1: do not look at the machine's load (ms_load.c);
                               ** also $ROOFTUNE_LOAD_GUARD=off */
  /* After a busy look (load_policy): TU_LOAD_WAIT (0, the default) waits
  ** for a quiet machine (ms_load_wait, at most load_wait seconds, 0:
  ** MS_LOAD_WAIT) and measures again, up to MS_LOAD_RETRIES times; a
  ** measurement is stored loaded only when its last look was busy.
  ** TU_LOAD_FLAG stores it loaded at once. Asynchronous (MPI) campaigns
  ** flag only. */
  int load_policy;
  double load_wait;
  /* TEST-ONLY: the guard's readings (ms.h invariant 1); given, the guard
  ** looks even with an injected measurement. NULL: the machine's. */
  const ms_load_hooks *load_hooks;
  int no_recheck;              /* 1: no re-measurement and no pin decision at the
                               ** end (compare's reference sample); implies no pin */
  ms_opts ms;
  int64_t resume;              /* > 0: continue this campaign; the options above
                               ** (but db_path, no_pin, stop, progress) come from it */
  volatile sig_atomic_t *stop;
  void (*progress)(void *ctx, const tu_progress *p);
  void *progress_ctx;
  /* The measurement; NULL: the target's row (tg_measure on the workload, after
  ** building each batch in parallel). Tests inject one: cfg is the
  ** configuration src was generated from (NULL: the baseline library or
  ** the reference); fill *r and return as tg_measure does. */
  int (*measure)(void *ctx, const int *cfg, const char *src, const char *ldflags,
                 const ms_opts *o, ms_result *r);
  /* The batch measurement (invariant 9); NULL: the target row's
  ** (tg_measure_batch, where tg_batches), else none when measure is
  ** injected. Tests inject one: cfgs n configurations (n * nparams ints),
  ** srcs their sources; returns as tg_measure_batch does. */
  int (*measure_batch)(void *ctx, const int *cfgs, const char *const *srcs, int n,
                       const ms_opts *o, ms_result *r, const volatile sig_atomic_t *stop,
                       rt_err *err);
  void *measure_ctx;
  /* Optional: called once the campaign's target (canonical name), kernel,
  ** workload (the user's `set`) and harness options are resolved, before
  ** anything is stored or measured (an MPI pool sets its workers up and
  ** checks their fingerprints against the target's). 0, or -1 with err:
  ** the campaign does not start. */
  int (*start)(void *ctx, const char *target, const char *kernel, const char *set,
               const ms_opts *ms, const char *fingerprint, rt_err *err);
  int parallel;                /* tu_run_opts.parallel (MPI workers); 0: one */
  /* Optional, both or neither (invariant 11): asynchronous measurement
  ** (an MPI pool). measure_submit starts measuring src (generated from
  ** cfg) as job `id` and returns at once; measure_collect waits for any
  ** submitted job: its id, its result and the measure function's return
  ** in *rc. 0, or -1 with err. Used with parallel > 1 and an asynchronous
  ** strategy. */
  int (*measure_submit)(void *ctx, int64_t id, const int *cfg, const char *src, const char *ldflags,
                        rt_err *err);
  int (*measure_collect)(void *ctx, int64_t *id, int *rc, ms_result *r, rt_err *err);
} tu_campaign_opts;

/* The outcome of a campaign (the one-screen report's content). Strings are
** malloc'ed; tu_report_free. Times in seconds, NAN when not measured. */
typedef struct tu_report {
  int64_t campaign, budget, evaluations, measured, reused, resumed, pin_version;
  int64_t status_count[MS_INVALID + 1];
  char *kernel, *workload, *target, *fingerprint, *strategy, *state, *end, *best_config,
      *default_config, *baseline_what, *pin_note, *json;
  uint64_t seed;
  double best_s, best_ci_lo, best_ci_hi, best_gflops, best_gbs;
  int best_repeats, best_noisy;
  int64_t best_trial;
  double default_s, baseline_s, baseline_ci_lo, baseline_ci_hi, speedup_default,
      speedup_baseline;
  int baseline_repeats;   /* timed repeats of the baseline (0: not measured) */
  /* This session's time: compile (parallel builds included), verify and
  ** measure summed over every measurement it made (trials, re-measurements,
  ** baseline); framework is the rest of elapsed (strategy, code generation,
  ** workers starting, the database); search_s the run loop's own time. */
  double compile_s, verify_s, bench_s, elapsed_s, framework_s, search_s;
  /* What a model-guided strategy did (tu_run_guide): proposals from the
  ** model's ranking and from its fallback (guide_fallback_name NULL: the
  ** strategy says nothing), the last agreement (Spearman, NAN: none). */
  int64_t guide_model, guide_fallback;
  const char *guide_fallback_name;   /* static */
  double guide_rho;
  double flops, min_bytes;
  /* The pin decision (invariant 6): choice "tuned", "default" or "none"
  ** (NULL: not decided: stopped, or no_recheck), its reason in one
  ** sentence, the trial chosen (0: none) and its configuration. */
  char *choice, *reason, *choice_config;
  int64_t choice_trial;
  /* The re-measurements it rests on: how many (the default's included),
  ** of how many candidates, how many reused from an earlier campaign or
  ** resumed, seconds measured now; the decisive
  ** candidate and the default beside it as re-measured (NAN: none); the
  ** whole sequence as a JSON array. */
  int remeasured, remeasured_candidates, remeasured_reused;
  double remeasure_s;
  int64_t cand_trial;
  double cand_s, cand_lo, cand_hi, def_s, def_lo, def_hi;
  char *remeasurements;
  /* The load guard (measure/ms.h "Load"): after every measurement (a
  ** batch counts its candidates) the machine was looked at; busy: how
  ** many of them were measured while it was busy, why: the first busy
  ** look's reason (NULL: none). load_on 0: not looked (--no-load-guard,
  ** an injected measurement). */
  int load_on;
  int64_t load_looks, load_busy;
  char *load_why;
  /* and its policy: measurements made again after a busy look, seconds
  ** waited for a quiet machine, results kept though busy (stored
  ** loaded), how many looks each sign (ms_sign_names) judged busy, the
  ** reference loop's highest ratio (0: not timed); the GPU's last reading
  ** (load_gpu 1) and its highest SM clock, or why it was not read. */
  int load_policy;
  int64_t load_retries, load_kept, load_signs[MS_NSIGNS];
  double load_wait_s, load_ref_max;
  int load_gpu;
  ms_gpu_reading load_gpu_last;
  unsigned load_sm_top;
  char *load_gpu_why;
} tu_report;

/* Run (or with o->resume, continue) a tuning campaign: its first trial is
** the space's default schedule; every trial is stored as it completes;
** configurations measured earlier from the same source on the same target
** and workload are reused; at the end the best candidates are measured
** again alternating with the default and the pin is decided by invariant
** 6, the baseline library is measured, and unless no_pin or stopped the
** decision is pinned as a new version. One process at a time runs a
** campaign (a lease in the database; a second gets an error naming the
** first's pid). 0 with *rep filled (also when stopped by o->stop:
** rep->state "stopped"); -1 with err. */
int tu_campaign(const tu_campaign_opts *o, tu_report *rep, rt_err *err);
void tu_report_free(tu_report *r);


/* ---- Predictions (tu_predict.c): a space ranked by the model alone ----
** For targets that cannot run code (a model-only target, tg_backend.h
** invariant 6) and what-if comparisons of described machines: every
** schedule of the space (or a seeded sample of a larger one) predicted by
** the target's kernel model with its ceilings and the coefficients given
** (default: the model's defaults). Nothing is measured or built: GPU
** models get registers from cubins already in the compile cache only
** (model_setup with compile off), their estimate otherwise. */
#define TU_RANK_ALL 20000     /* spaces up to this size are ranked whole */
#define TU_RANK_SAMPLE 4096   /* otherwise a sample of this many */
struct tg_target;
typedef struct tu_rank_opts {
  const struct tg_target *target;
  const char *kernel, *set;     /* the kernel and the user's --set */
  uint64_t seed;                /* the sample's */
  const cm_ceilings *ceilings;  /* NULL: the target's (tg_bench: a model
                                ** target's file, measuring nothing) */
  const cm_coefs *coefs;        /* NULL: the defaults */
  int flush;                    /* cm_predict's */
  const char *cache_dir;        /* the compile cache model_setup reads (NULL: default) */
  int64_t max_ranked, sample;   /* 0: TU_RANK_ALL, TU_RANK_SAMPLE */
} tu_rank_opts;
typedef struct tu_ranking {
  const kn_kernel *k;
  const cm_kmodel *km;
  sp_space *sp;                 /* bound with the target's limits */
  kn_problem pb;
  cm_ceilings ce;
  cm_coefs c;
  rt_count count;               /* the space's valid schedules */
  int sampled;                  /* 1: cfgs are a sample */
  int64_t n;                    /* schedules ranked */
  int *cfgs;                    /* n configurations, in canonical (or sample) order */
  cm_pred *pred;                /* their predictions (time INFINITY: no model answer) */
  int64_t *order;               /* indices by predicted time, fastest first
                                ** (ties: the earlier in cfgs) */
} tu_ranking;
/* Rank o's space; 0, or -1 with err. tu_ranking_free after. */
int tu_rank(const tu_rank_opts *o, tu_ranking *r, rt_err *err);
const int *tu_ranking_cfg(const tu_ranking *r, int64_t i);   /* cfgs of index i */
void tu_ranking_free(tu_ranking *r);

/* Coefficients given by a user as JSON {name: value} over k's defaults
** (cm_coefs_parse; without "form", of the model's current form), source
** "given (--coefs)". 0, or -1 with err. */
int tu_coefs_given(const cm_kmodel *k, const char *json, cm_coefs *c, rt_err *err);
/* Store predictions of a model-only target, or of a target that runs code
** but does not time (tg_timed 0: an emulated one, whose every kept
** prediction is first built, run and verified by its measure; one that
** fails is not stored, the report counts it): tu_rank, then in one
** transaction a campaign (strategy "model", source "predicted", state
** done) holding the keep fastest predictions as trials of origin
** "predicted" (time = predicted time; db.h invariant 10) and the ceilings
** used (a ceilings row when they differ from the stored latest); then,
** unless no_pin, the fastest pinned (a pin the database marks predicted). */
typedef struct tu_predict_opts {
  const char *db_path, *target, *kernel, *set;
  int64_t keep;                 /* predictions stored (tune's --budget) */
  uint64_t seed;
  int no_pin, flush;
  const char *coefs_json;       /* {name: value} over the defaults; NULL: defaults */
  const char *cache_dir;
} tu_predict_opts;
typedef struct tu_predict_row {
  int64_t trial;
  char *config;                 /* canonical JSON */
  double time_s;                /* predicted */
  cm_bound bound;               /* its limiting bound */
  int verified;                 /* 1: built and run by the target's measure
                                ** first, outputs verified (an emulated
                                ** run: never timed) */
} tu_predict_row;
typedef struct tu_predict_report {
  char target[64];              /* canonical name */
  int64_t campaign, ranked, pin_version;   /* pin_version 0: not pinned */
  rt_count count;
  int sampled, n;               /* n rows stored, fastest first */
  tu_predict_row *rows;
  char coefs_source[64];
  int rejected;                 /* predictions that failed verification, not stored */
  char reject_msg[512];         /* the first: its configuration, status and message */
} tu_predict_report;
int tu_predict(const tu_predict_opts *o, tu_predict_report *rep, rt_err *err);
void tu_predict_report_free(tu_predict_report *r);

/* ---- Calibration (tu_calibrate.c): a cost model fitted to measurements ---- */

#define TU_MAXWL 16      /* workloads one calibration fits at once */
#define TU_NTOPK 3
extern const int tu_topk[TU_NTOPK];   /* 1, 5, 10 */

/* How well a model ranks and predicts n measured schedules of one
** workload: Spearman's rho, Kendall's tau-b, the median relative error,
** and for k in tu_topk whether a schedule within 5% of the best measured
** is among the model's k fastest. */
typedef struct tu_acc {
  int n;
  double rho, tau, mre;
  int top[TU_NTOPK];
} tu_acc;

/* Whether the schedule of configuration hash `hash` is held out of a fit
** by seed and share (0 <= share < 1): invariant 8. */
int tu_held_out(const char *hash, uint64_t seed, double share);
/* The accuracy of coefficients c over the samples s[i] of workload space
** `only` that use[i] selects (rankings compare schedules of one
** workload). */
void tu_accuracy(const cm_kmodel *k, const cm_ceilings *ce, const cm_coefs *c, int flush,
                 const cm_sample *s, const int *use, int n, const sp_space *only, tu_acc *a);
/* a as a JSON object: n, spearman, kendall, topK_within_5pct, median_rel_error. */
void tu_acc_json(jw *w, const tu_acc *a);

/* The traffic of one counted schedule: its index in the samples and the
** bytes moved at each level (NAN: not counted). */
typedef struct tu_counted {
  int idx;
  double bytes[CM_NLEVEL];
} tu_counted;
/* A traffic counter: count (or read back) the traffic of up to want
** schedules among those train[] selects into out; name the counter in
** source (15 characters at most) and say in *cold whether its counts are
** of one cold run. Returns how many were counted; when none, why in err. */
typedef int (*tu_count_fn)(void *ctx, const int *train, int want, tu_counted *out,
                           char *source, int *cold, rt_err *err);

/* What a calibration is given. The samples s[0..n-1] (one per schedule,
** its time the fastest measured) are of the workload spaces wl[0..nwl-1]
** (s[i].sp is one of them; wl_key their names for the record); hash[i] is
** the hash of s[i]'s configuration (db_config_hash). */
typedef struct tu_cal_in {
  const cm_kmodel *km;
  const cm_ceilings *ce;       /* the target's */
  const cm_sample *s;
  const char *const *hash;
  int n;
  const sp_space *const *wl;
  const char *const *wl_key;
  int nwl;                     /* 1..TU_MAXWL */
  cm_coefs before;             /* the coefficients in use (version 0: defaults) */
  double holdout;              /* share held out, 0 <= holdout < 1 */
  uint64_t seed;               /* of the split */
  int flush;                   /* the trials were measured with cold caches */
  int gpu;                     /* the target is a GPU (tg_backend.gpu): the L2's
                               ** share sets DRAM traffic */
  int counters;                /* schedules whose traffic to count (0: none) */
  tu_count_fn count;           /* NULL: no byte terms are fitted */
  void *count_ctx;
} tu_cal_in;

/* What a calibration found. Per level l of L2, L3, DRAM (index l - 1):
** the capacity coefficient fitted to its counted bytes (cap[l], its index
** cap_idx[l]; NULL, -1: none), the median |log(model / counted)| and
** median model / counted before (berr0, brat0: with the defaults) and after
** (berr1, brat1: with start), NAN when not counted. */
typedef struct tu_cal_out {
  int ntrain, ntest;
  int *train, *test;           /* n flags each: fitted, held out */
  int counted;                 /* schedules whose traffic was counted */
  char source[16];             /* the counter ("" when none counted) */
  char count_why[512];         /* why none were, when the counter said */
  const char *cap[3];
  int cap_idx[3];
  double berr0[3], berr1[3], brat0[3], brat1[3];
  cm_coefs defs;               /* the model's defaults */
  cm_coefs start;              /* the defaults with the fitted capacity shares */
  cm_coefs after;              /* the calibrated coefficients */
  int fixed[CM_MAXCOEF];       /* coefficients held at their value */
  cm_fit_result fit;           /* the time fit (cm_calibrate) */
  /* per workload wl[i], on the held-out schedules (the fitted ones when
  ** none is held out): the defaults, before, after; t_after: after, on the
  ** fitted schedules */
  tu_acc a_def[TU_MAXWL], a_before[TU_MAXWL], a_after[TU_MAXWL], t_after[TU_MAXWL];
  char *fit_json;              /* the record to store with the version (db_model_put) */
} tu_cal_out;

/* Calibrate in->km (invariants 7, 8): split the samples, fit the capacity
** shares to up to in->counters counted schedules of the training set (a
** grid over 0.25..1, a GPU's from 0.05), then the time terms (cm_calibrate
** from start, the model's held coefficients fixed), then score. 0 with *out;
** -1 with err (fewer than two schedules left to fit on, the fit failed).
** tu_cal_out_free after either. */
int tu_calibrate(const tu_cal_in *in, tu_cal_out *out, rt_err *err);
void tu_cal_out_free(tu_cal_out *out);

#endif
