/*
** tu_campaign.c -- a live tuning campaign: one strategy run whose
** objective builds each proposed schedule (the kernel's code generator),
** measures it in the harness's isolated worker and stores the trial at
** once (one transaction per trial, so a campaign killed at any point
** loses only the trial in flight). The space's default schedule is the
** first trial. A configuration this campaign already stored is answered
** from the database (resume), one measured earlier from the same source
** on the same target and workload is copied instead of re-measured
** (reuse). The end re-measures the best candidates alternating with the
** default and pins by tu.h's invariant 6 (conservative pins), then
** measures the baseline library in the same run. Where the target's row
** measures batches (tg_batches), the batch a strategy proposes is
** measured together in camp_prepare, after its parallel build, and
** camp_eval takes each candidate's result from there in order (tu.h
** invariant 9). Given an asynchronous pool (MPI), camp_submit and
** camp_collect measure an asynchronous strategy's candidates on it and
** store each when its result arrives (tu.h invariant 11).
**
** Invariants:
**  1. A trial is stored only from a complete, uninterrupted measurement:
**     once the stop flag is set, the measurement in flight is discarded
**     (Ctrl-C also reaches the compiler, which would fake a compile error).
**     The re-measurements of the end are stored together, all or none.
**  2. Resume replays the strategy from the stored options and seed; the
**     stored trials answer its first proposals in their original order, so
**     it continues where the campaign stopped without measuring any stored
**     configuration again. A campaign stored before the default came first
**     (its options lack "default_first") is replayed without it. One that
**     ran asynchronously (or runs so now) gets every stored trial first,
**     in id order (tu.h invariant 11).
**  3. Reuse is keyed by ms_build_key (source, compiler, flags) plus the
**     measurement options that change a time: a timeout is never reused,
**     nor a trial measured while the machine was busy (db_trial.loaded).
**     A sequence of re-measurements is reused whole, keyed by its ordered
**     sources.
**  4. One process at a time runs a campaign: it holds the campaign's
**     lease (db_lease_take) from registration or resume to its return.
**  5. A batch holds only candidates that would be measured: among the
**     proposals the budget still allows, those neither stored by this
**     campaign (resume) nor reusable, one per source. A candidate whose
**     source is not in the batch, or whose batch result was taken already
**     (the same source proposed twice, its first a timeout), is measured
**     alone as before. Stopped in the middle of a batch, the candidates
**     it finished are stored (as each would have been, one by one), the
**     one in flight and those after it are not; a harness failure of a
**     batch stores nothing of it and ends the run when camp_eval reaches
**     its first candidate.
*/
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cost_model/cm.h"
#include "../targets/tg.h"
#include "tu.h"

static double nz(double x) { return isnan(x) ? 0 : x; }

/* One evaluation as stored: what the report needs besides tu_obs. */
typedef struct trial_rec {
  int64_t id;
  double ci_lo, ci_hi, compile_s, verify_s, bench_s;
  int repeats, noisy;
} trial_rec;

typedef struct camp {
  const tu_campaign_opts *o;
  db *d;
  sp_space *sp;
  const kn_kernel *k;
  kn_problem pb;
  ms_workload *w;
  ms_opts ms;
  tg_target tg;                /* where it runs (its backend row) */
  int64_t id, target_id, workload_id, budget;
  double time_limit;
  /* this campaign's stored trials (resume), by configuration */
  tu_cfgmap own;
  tu_obs *own_obs;
  trial_rec *own_rec;
  /* every evaluation of this session, in run order */
  trial_rec *rec;
  int64_t nrec, caprec;
  int64_t measured, reused, resumed, failures;
  double t0, best_s, spent;   /* spent: compile + verify + bench of rec[] */
  double compile_s, verify_s, bench_s;   /* this session's, every measurement */
  int *cfg_tmp;
  cm_tmodel *model;            /* the cost model, for strategies that need one */
  int leased;                  /* this process holds the campaign's lease */
  /* the batch camp_prepare measured (invariant 5): nb items, their reuse
  ** keys and results (bdone of them complete), taken by camp_eval */
  int nb, bdone, bcap;
  char (*bhash)[33];
  ms_result *bres;
  int *bused;
  double *bshare;              /* the last prepare's parallel build: each built
                               ** source's share of its wall time, until a
                               ** trial of that source carries it (then 0) */
  int npre;                    /* sources that build made: bhash[0 .. npre) */
  char berr[512];              /* why the batch failed (bdone < nb, not stopped) */
  /* the load guard: looks after measurements, and what they saw */
  ms_load_guard guard;
  int64_t load_looks, load_busy, load_retries, load_kept, load_signs[MS_NSIGNS];
  double load_wait_s, ref_max;
  int64_t load_skip, load_skip_next;   /* busy measurements not waited for after a
                               ** wait ran out busy; the next such skip */
  char load_why[160];
  int last_busy, bbusy;        /* the last single measurement's look; the batch's */
  char last_why[160];          /* the last busy look's reason */
  /* asynchronous (tu.h invariant 11): every evaluation submitted, by job id */
  struct aslot {
    int *cfg;
    char hash[33];
    int state;                 /* A_FREE, A_WORKER, A_WAIT (its source at a worker), A_READY */
    tu_obs ob;                 /* A_READY: the answer, and its record */
    trial_rec tr;
  } *as;
  int64_t nas, capas;
  int64_t *ready, nready, ready_at;   /* A_READY slots, in the order answered */
} camp;

enum { A_FREE, A_WORKER, A_WAIT, A_READY };

/* The load guard's look after n measurements (tu_report.load_*): 1 when
** they were made while the machine was busy. */
static int look(camp *c, int n) {
  ms_load_view v;
  if (!c->guard.on || n <= 0) return 0;
  c->load_looks += n;
  int busy = ms_load_check(&c->guard, &v);
  for (int k = 0; k < MS_NSIGNS; k++) c->load_signs[k] += (v.signs >> k & 1) * n;
  if (v.ref > c->ref_max) c->ref_max = v.ref;
  if (!busy) return 0;
  c->load_busy += n;
  if (!c->load_why[0]) snprintf(c->load_why, sizeof c->load_why, "%s", v.why);
  snprintf(c->last_why, sizeof c->last_why, "%s", v.why);
  return 1;
}

/* The wait policy (tu.h "load_policy") after a busy look at a
** measurement of status st: 1 when it is to be measured again (a quiet
** machine came within the wait, and retries are left: k made so far),
** 0 when what was measured is kept as it is (loaded when it was busy).
** After a wait that runs out busy, the next 1, then 2, 4, 8 ... busy
** measurements are kept without waiting (until a wait ends quiet): a
** machine busy for long costs a few waits, not one per measurement. */
static int load_retry(camp *c, int k, int st) {
  if (c->o->load_policy != TU_LOAD_WAIT || !c->guard.on || k >= MS_LOAD_RETRIES ||
      (st != MS_OK && st != MS_TIMEOUT) || (c->o->stop && *c->o->stop))
    return 0;   /* a build or a verification fails the same on a quiet machine */
  if (k == 0 && c->load_skip > 0) {
    c->load_skip--;
    return 0;
  }
  ms_load_view v;
  c->load_wait_s += ms_load_wait(&c->guard, c->o->load_wait > 0 ? c->o->load_wait : MS_LOAD_WAIT,
                                 c->o->stop, &v);
  if (!c->load_skip_next) c->load_skip_next = 1;
  if (v.busy && !(c->o->stop && *c->o->stop)) c->load_skip = c->load_skip_next, c->load_skip_next *= 2;
  else if (!v.busy) c->load_skip_next = 1;
  if (v.busy || (c->o->stop && *c->o->stop)) return 0;
  c->load_retries++;
  return 1;
}

/* ms.h invariant 8: a result that is not a measurement (an emulated
** run) is never stored. 0, or -1 with r->msg saying why (the caller
** reports it as the harness's failure: the campaign stops). */
static int refuse_untimed(ms_result *r) {
  if (!r->origin[0]) return 0;
  char why[sizeof r->msg];
  snprintf(why, sizeof why, "%s", r->msg);
  snprintf(r->msg, sizeof r->msg, "this target's results are %s (%.200s): they verify a schedule "
           "and time nothing, and are never stored as trials; verify with `rooftune measure`, "
           "time on a target that measures", r->origin, why);
  return -1;
}

/* Measure src (generated from cfg; NULL cfg: the baseline) with the
** harness or the injected function, counting the time it spent; after a
** busy look, by the load policy again (load_retry). */
static int measure(camp *c, const int *cfg, const char *src, const char *ldflags, ms_result *r) {
  int rc;
  for (int k = 0;; k++) {
    r->origin[0] = 0;   /* set only by a measurement that says so */
    rc = c->o->measure ? c->o->measure(c->o->measure_ctx, cfg, src, ldflags, &c->ms, r)
                       : tg_measure(&c->tg, c->w, src, ldflags, &c->ms, r);
    c->compile_s += nz(r->compile_s);
    c->verify_s += nz(r->verify_s);
    c->bench_s += nz(r->bench_s);
    c->last_busy = look(c, 1);
    if (rc || !c->last_busy || !load_retry(c, k, r->status)) break;
  }
  c->load_kept += c->last_busy;
  return rc ? rc : refuse_untimed(r);
}

static void push_rec(camp *c, const trial_rec *t) {
  if (c->nrec == c->caprec)
    c->rec = rt_realloc(c->rec, (size_t)(c->caprec = c->caprec ? 2 * c->caprec : 256) * sizeof *c->rec);
  c->rec[c->nrec++] = *t;
  c->spent += t->compile_s + t->verify_s + t->bench_s;
}

/* The reuse key: the compile key plus what changes a measured time. */
static void source_hash(camp *c, const char *src, char out[33]) {
  char key[33], extra[64];
  tg_build_key(&c->tg, src, NULL, &c->ms, key);
  /* A campaign that counts reuses only trials that were counted too. */
  snprintf(extra, sizeof extra, "flush=%d%s", c->ms.flush_cache, c->ms.counters ? ",counters=1" : "");
  rt_hash h = rt_hash_bytes(RT_HASH_INIT, key, 32);
  rt_hash_hex(rt_hash_bytes(h, extra, strlen(extra)), out);
}

/* ---- Reuse: the first earlier measurement of the same source ---- */

typedef struct reuse_hit {
  int found;
  db_trial t;
  char *config, *status;
} reuse_hit;

static int reuse_row(void *ctx, const db_trial_row *r) {
  reuse_hit *h = ctx;
  if (!strcmp(r->status, "timeout") || r->loaded) return 0;   /* invariant 3 */
  h->found = 1;
  db_trial_init(&h->t);
  h->status = rt_strdup(r->status);
  h->t.status = h->status;
  h->t.time_s = r->time_s, h->t.mean_s = r->mean_s, h->t.sd_s = r->sd_s, h->t.min_s = r->min_s;
  h->t.ci_lo_s = r->ci_lo_s, h->t.ci_hi_s = r->ci_hi_s, h->t.repeats = r->repeats;
  h->t.noisy = r->noisy, h->t.compile_s = r->compile_s, h->t.verify_s = r->verify_s;
  h->t.bench_s = r->bench_s;
  return 1;
}

/* The counter pass's values as a JSON object {name: value} (caller frees). */
static char *counters_json(const ms_result *r) {
  json_t *j = json_object();
  for (int i = 0; i < r->nev; i++) json_object_set_new(j, r->ev_name[i], json_real(r->ev_val[i]));
  char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  json_decref(j);
  return s;
}

/* A trial's counts as the cost model reads them, when the backend turns
** them into traffic (tg_backend.counted_traffic): into the counters
** table under the row's counter source. */
static int store_traffic(camp *c, const int *cfg, const ms_result *r, rt_err *err) {
  char *data = c->tg.be->counted_traffic ? c->tg.be->counted_traffic(&c->tg, r) : NULL;
  if (!data) return 0;
  char *config = sp_config_json(c->sp, cfg);
  int rc = db_counters_put(c->d, c->target_id, c->workload_id, config, c->tg.be->counter_source,
                           data, err);
  free(config);
  free(data);
  return rc;
}

/* Store one trial of this campaign; 0 or -1 with err. */
static int store(camp *c, const int *cfg, db_trial *t, const char *hash, const char *origin,
                 int64_t *id, rt_err *err) {
  char *j = sp_config_json(c->sp, cfg);
  t->campaign_id = c->id;
  t->config_json = j;
  t->source_hash = hash;
  t->origin = origin;
  int rc = db_trial_add(c->d, t, id, err);
  free(j);
  return rc;
}

/* A measured trial into the database (its counts and their traffic too);
** *id gets its id. 0 or -1 with err. */
static int store_measured(camp *c, const int *cfg, const char *hash, const ms_result *r,
                          int loaded, int64_t *id, rt_err *err) {
  if (r->origin[0]) {   /* ms.h invariant 8: the last gate before the database */
    rt_err_set(err, "a result that is %s is never stored as a trial: %s", r->origin, r->msg);
    return -1;
  }
  db_trial t;
  db_trial_init(&t);
  t.loaded = loaded;
  t.status = ms_status_name(r->status);
  if (r->status == MS_OK) {
    t.time_s = r->t.median, t.mean_s = r->t.mean, t.sd_s = r->t.sd, t.min_s = r->t.min;
    t.ci_lo_s = r->t.ci_lo, t.ci_hi_s = r->t.ci_hi, t.repeats = r->t.n, t.noisy = r->t.noisy;
  }
  t.compile_s = r->compile_s, t.verify_s = r->verify_s, t.bench_s = r->bench_s;
  char *cj = r->counters ? counters_json(r) : NULL;
  t.counters_json = cj;
  int rc = store(c, cfg, &t, hash, "measured", id, err);
  if (!rc && cj) rc = store_traffic(c, cfg, r, err);
  free(cj);
  return rc;
}

/* ---- The objective ---- */

/* Whether this campaign measures a strategy's batches together: an
** injected batch measurement, or a row that measures batches, and no
** counter pass (those stay per candidate). */
static int batching(const camp *c) {
  if (c->ms.counters) return 0;
  return c->o->measure_batch ? 1 : !c->o->measure && tg_batches(&c->tg, &c->ms);
}

/* The batch item of reuse key hash not taken yet, or -1. */
static int batch_item(const camp *c, const char *hash) {
  for (int k = 0; k < c->nb; k++)
    if (!c->bused[k] && !strcmp(c->bhash[k], hash)) return k;
  return -1;
}

/* Source hash's share of the last parallel build, taken once: a trial's
** compile_s is what compiling it cost, and a build of m sources in
** parallel costs each its wall time over m (the trial's own build is then a
** cache hit). The shares of a batch add up to the build's wall time. */
static double take_share(camp *c, const char *hash) {
  for (int k = 0; k < c->npre; k++)
    if (c->bshare[k] > 0 && !strcmp(c->bhash[k], hash)) {
      double s = c->bshare[k];
      c->bshare[k] = 0;
      return s;
    }
  return 0;
}

/* r's compile_s with source hash's share of the last parallel build. */
static void charge_share(camp *c, const char *hash, ms_result *r) {
  double s = take_share(c, hash);
  if (s > 0) r->compile_s = nz(r->compile_s) + s;
}

/* Whether an earlier measurement of the source whose reuse key is hash
** can be reused. A database error answers 1 too: camp_eval meets and
** reports it. */
static int reusable(camp *c, const char *hash) {
  reuse_hit h = {0};
  rt_err e = {0};
  db_trial_filter f = {.target_id = c->target_id, .workload_id = c->workload_id, .source_hash = hash};
  int r = db_trials(c->d, &f, reuse_row, &h, &e) < 0 || h.found;
  free(h.status);
  return r;
}

/* Measure the batch (invariant 5): the m schedules cfgs (sources src)
** that need a measurement, whose reuse keys camp_prepare put in
** c->bhash; stopped, store what it finished. */
static void batch_measure(camp *c, const int *bcfg, const char **bsrc, int m) {
  int np = sp_nparams(c->sp);
  for (int k = 0; k < m; k++) c->bused[k] = 0;
  if (m > 1) {   /* one alone is measured alone */
    int done;
    for (int r = 0;; r++) {   /* busy: the whole batch again, by the load policy */
      rt_err err = {0};
      for (int k = 0; k < m; k++) c->bres[k].origin[0] = 0;   /* set only by who says so */
      done = c->o->measure_batch
                 ? c->o->measure_batch(c->o->measure_ctx, bcfg, bsrc, m, &c->ms, c->bres,
                                       c->o->stop, &err)
                 : tg_measure_batch(&c->tg, c->w, bsrc, m, &c->ms, c->bres, c->o->stop, &err);
      if (done < 0) snprintf(c->berr, sizeof c->berr, "%s", err.msg[0] ? err.msg : "batch failed");
      c->bbusy = look(c, done);
      for (int k = 0; k < done; k++) {
        c->compile_s += nz(c->bres[k].compile_s);
        c->verify_s += nz(c->bres[k].verify_s);
        c->bench_s += nz(c->bres[k].bench_s);
      }
      if (done < m || !c->bbusy || !load_retry(c, r, MS_OK)) break;
    }
    c->load_kept += c->bbusy ? done : 0;
    c->nb = m, c->bdone = done < 0 ? 0 : done;
    /* stopped: camp_eval will not be called; keep what was finished */
    for (int k = 0; done >= 0 && done < m && c->o->stop && *c->o->stop && k < done; k++) {
      int64_t id;
      rt_err e = {0};
      charge_share(c, c->bhash[k], &c->bres[k]);
      if (!store_measured(c, bcfg + (size_t)k * np, c->bhash[k], &c->bres[k], c->bbusy, &id, &e))
        c->bused[k] = 1;
    }
  }
}

/* ---- The time limit's priors (tu.h invariant 12) ---- */

/* What earlier trials of the kernel on this target cost: compile (and
** verify) seconds of each fresh build, measuring seconds per second of a
** verified trial's time. */
typedef struct cost_hist {
  double *comp, *ratio;
  int ncomp, nratio, cap;
} cost_hist;

static int cost_row(void *ctx, const db_trial_row *r) {
  cost_hist *h = ctx;
  if (h->ncomp == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 256;
    h->comp = rt_realloc(h->comp, (size_t)h->cap * sizeof *h->comp);
    h->ratio = rt_realloc(h->ratio, (size_t)h->cap * sizeof *h->ratio);
  }
  if (r->compile_s > 0) h->comp[h->ncomp++] = r->compile_s + (r->verify_s > 0 ? r->verify_s : 0);
  if (!strcmp(r->status, "ok") && r->time_s > 0 && r->bench_s > 0) h->ratio[h->nratio++] = r->bench_s / r->time_s;
  return 0;
}

/* The run's priors for a time limit from the kernel's history on this
** target (medians; NAN where it has none). */
static void cost_priors(camp *c, tu_run_opts *ro) {
  cost_hist h = {0};
  db_trial_filter f = {.target_id = c->target_id, .kernel = c->k->name};
  rt_err err = {0};
  ro->compile_prior = ro->run_prior = NAN;
  if (db_trials(c->d, &f, cost_row, &h, &err) >= 0) {
    if (h.ncomp) ro->compile_prior = gsl_stats_median(h.comp, 1, (size_t)h.ncomp);
    if (h.nratio) ro->run_prior = gsl_stats_median(h.ratio, 1, (size_t)h.nratio);
  }
  free(h.comp), free(h.ratio);
}

/* Build a batch's schedules in parallel, then, where the campaign measures
** batches, measure them together (tu_objective.prepare). Only the
** schedules that need a measurement are built: within the budget left,
** not resumed, not reusable, not a repeat of an earlier one's source
** (a resumed or reused campaign on a machine with a cold compile cache
** would otherwise compile every reused schedule again). */
static void camp_prepare(void *ctx, const int *cfgs, int n) {
  camp *c = ctx;
  c->nb = c->bdone = c->npre = 0;   /* what the last batch left untaken is dropped */
  c->berr[0] = 0;
  int batch = batching(c), injected = c->o->measure || c->o->measure_batch;
  if (injected && !batch) return;   /* an injected measurement builds nothing */
  int np = sp_nparams(c->sp), m = 0;
  if (n > c->bcap) {
    c->bcap = n;
    c->bhash = rt_realloc(c->bhash, (size_t)n * sizeof *c->bhash);
    c->bres = rt_realloc(c->bres, (size_t)n * sizeof *c->bres);
    c->bused = rt_realloc(c->bused, (size_t)n * sizeof *c->bused);
    c->bshare = rt_realloc(c->bshare, (size_t)n * sizeof *c->bshare);
  }
  char **src = rt_malloc((size_t)n * sizeof *src);
  int *bcfg = rt_malloc((size_t)n * np * sizeof *bcfg);
  int64_t left = c->budget - c->nrec;
  for (int i = 0; i < n && i < left; i++) {
    const int *cfg = cfgs + (size_t)i * np;
    if (tu_cfgmap_get(&c->own, cfg) >= 0) continue;   /* resumed: not even generated */
    char *s = c->k->codegen(&c->pb, c->sp, cfg), hash[33];
    source_hash(c, s, hash);
    int dup = 0;
    for (int k = 0; k < m && !dup; k++) dup = !strcmp(c->bhash[k], hash);
    if (dup || reusable(c, hash)) {
      free(s);
      continue;
    }
    memcpy(c->bhash[m], hash, sizeof hash);
    memcpy(bcfg + (size_t)m * np, cfg, (size_t)np * sizeof *cfg);
    src[m++] = s;
  }
  if (!injected && m > 0) {
    double t0 = rt_now();
    tg_prebuild(&c->tg, (const char *const *)src, m, NULL, &c->ms, 0);
    double wall = rt_now() - t0;
    c->compile_s += wall;   /* the trials carry it as they are stored (take_share) */
    for (int k = 0; k < m; k++) c->bshare[k] = wall / m;
    c->npre = m;
  }
  if (batch) batch_measure(c, bcfg, (const char **)src, m);
  for (int i = 0; i < m; i++) free(src[i]);
  free(src);
  free(bcfg);
}

static void obs_from(tu_obs *ob, int status, double time_s, double cost, tu_origin origin) {
  *ob = (tu_obs){.ok = status == MS_OK, .value = status == MS_OK ? time_s : NAN,
                 .status = status, .cost = cost, .origin = origin};
}

static void progress(camp *c) {
  if (!c->o->progress) return;
  int64_t done = c->nrec;
  double el = rt_now() - c->t0, rem = NAN, spent = c->spent;
  if (c->measured > 0 && c->budget > 0) rem = spent / (double)c->measured * (double)(c->budget - done);
  if (c->time_limit > 0 && !(rem < c->time_limit - spent)) rem = fmax(0, c->time_limit - spent);
  tu_progress p = {.done = done, .budget = c->budget, .measured = c->measured,
                   .reused = c->reused, .resumed = c->resumed, .failures = c->failures,
                   .best_s = c->best_s, .best_gflops = c->best_s > 0 ? c->k->flops(&c->pb) / c->best_s * 1e-9 : NAN,
                   .elapsed_s = el, .remaining_s = rem};
  c->o->progress(c->o->progress_ctx, &p);
}

static int camp_eval(void *ctx, const int *cfg, tu_obs *ob, rt_err *err) {
  camp *c = ctx;
  trial_rec tr = {0};
  int64_t i = tu_cfgmap_get(&c->own, cfg);
  if (i >= 0) {   /* stored by this campaign before it stopped */
    *ob = c->own_obs[i];
    tr = c->own_rec[i];
    c->resumed++;
  } else {
    char *src = c->k->codegen(&c->pb, c->sp, cfg), hash[33];
    source_hash(c, src, hash);
    reuse_hit h = {0};
    db_trial_filter f = {.target_id = c->target_id, .workload_id = c->workload_id, .source_hash = hash};
    if (db_trials(c->d, &f, reuse_row, &h, err) < 0) {
      free(src);
      return -1;
    }
    int rc = 0;
    if (h.found) {
      rc = store(c, cfg, &h.t, hash, "reused", &tr.id, err);
      obs_from(ob, ms_status_parse(h.status), h.t.time_s, 0, TU_REUSED);
      tr.ci_lo = h.t.ci_lo_s, tr.ci_hi = h.t.ci_hi_s, tr.repeats = h.t.repeats, tr.noisy = h.t.noisy;
      c->reused++;
      free(h.status);
    } else {
      ms_result r;
      int k = batch_item(c, hash);   /* measured in camp_prepare (invariant 5) */
      if (k >= 0 && k < c->bdone) r = c->bres[k], c->bused[k] = 1;
      if (k >= 0 ? k >= c->bdone : measure(c, cfg, src, NULL, &r)) {
        rt_err_set(err, "the harness failed: %s", k < 0 ? r.msg : c->berr[0] ? c->berr : "interrupted");
        rc = -1;
      } else if (k < 0 && c->o->stop && *c->o->stop) {
        rt_err_set(err, "interrupted");   /* invariant 1: not stored */
        rc = -1;
      } else {
        int loaded = k >= 0 ? c->bbusy : c->last_busy;
        charge_share(c, hash, &r);   /* its part of the parallel build, in its cost too */
        rc = store_measured(c, cfg, hash, &r, loaded, &tr.id, err);
        obs_from(ob, r.status, r.t.median, r.compile_s + r.verify_s + r.bench_s, TU_MEASURED);
        ob->loaded = loaded;
        ob->compile_s = r.compile_s + r.verify_s;   /* invariant 12's compile part */
        tr = (trial_rec){tr.id, r.t.ci_lo, r.t.ci_hi, r.compile_s, r.verify_s, r.bench_s, r.t.n,
                         r.t.noisy};
        c->measured++;
      }
    }
    free(src);
    if (rc) return -1;
  }
  c->failures += !ob->ok;
  if (ob->ok && !(ob->value >= c->best_s)) c->best_s = ob->value;
  push_rec(c, &tr);
  progress(c);
  return 0;
}

/* ---- Asynchronous measurement (tu.h invariant 11) ---- */

/* Answer slot a from an earlier measurement of its source when there is
** one (stored as reused, queued as ready): 1; 0 when none; -1 with err. */
static int async_reuse(camp *c, int64_t a, rt_err *err) {
  struct aslot *s = &c->as[a];
  reuse_hit h = {0};
  db_trial_filter f = {.target_id = c->target_id, .workload_id = c->workload_id, .source_hash = s->hash};
  if (db_trials(c->d, &f, reuse_row, &h, err) < 0) return -1;
  if (!h.found) return 0;
  s->tr = (trial_rec){0};
  int rc = store(c, s->cfg, &h.t, s->hash, "reused", &s->tr.id, err);
  obs_from(&s->ob, ms_status_parse(h.status), h.t.time_s, 0, TU_REUSED);
  s->tr.ci_lo = h.t.ci_lo_s, s->tr.ci_hi = h.t.ci_hi_s, s->tr.repeats = h.t.repeats;
  s->tr.noisy = h.t.noisy;
  free(h.status);
  if (rc) return -1;
  c->reused++;
  s->state = A_READY;
  c->ready[c->nready++] = a;
  return 1;
}

/* Send slot a's source to a worker. 0, or -1 with err. */
static int async_send(camp *c, int64_t a, rt_err *err) {
  char *src = c->k->codegen(&c->pb, c->sp, c->as[a].cfg);
  int rc = c->o->measure_submit(c->o->measure_ctx, a, c->as[a].cfg, src, NULL, err);
  free(src);
  c->as[a].state = A_WORKER;
  return rc;
}

/* tu_run_opts.submit: answer cfg at once when this campaign stored it
** (resume) or an earlier measurement of its source can be reused; wait
** behind the same source at a worker; else send it to a worker. */
static int camp_submit(void *ctx, const int *cfg, rt_err *err) {
  camp *c = ctx;
  int np = sp_nparams(c->sp);
  if (c->nas == c->capas) {
    c->capas = c->capas ? 2 * c->capas : 64;
    c->as = rt_realloc(c->as, (size_t)c->capas * sizeof *c->as);
    c->ready = rt_realloc(c->ready, (size_t)c->capas * sizeof *c->ready);
  }
  int64_t a = c->nas++;
  struct aslot *s = &c->as[a];
  *s = (struct aslot){.cfg = rt_malloc((size_t)(np ? np : 1) * sizeof *s->cfg)};
  memcpy(s->cfg, cfg, (size_t)np * sizeof *cfg);
  int64_t i = tu_cfgmap_get(&c->own, cfg);
  if (i >= 0) {   /* stored by this campaign before it stopped */
    s->ob = c->own_obs[i], s->tr = c->own_rec[i], s->state = A_READY;
    c->resumed++;
    c->ready[c->nready++] = a;
    return 0;
  }
  char *src = c->k->codegen(&c->pb, c->sp, cfg);
  source_hash(c, src, s->hash);
  free(src);
  int r = async_reuse(c, a, err);
  if (r) return r < 0 ? -1 : 0;
  for (int64_t b = 0; b < a; b++)
    if (c->as[b].state == A_WORKER && !strcmp(c->as[b].hash, s->hash)) {
      s->state = A_WAIT;   /* measured once: reused (or measured) when that result comes */
      return 0;
    }
  return async_send(c, a, err);
}

/* Slot a answered: its configuration into cfg, the campaign's records,
** the slot freed. */
static void async_done(camp *c, int64_t a, int *cfg, tu_obs *ob) {
  struct aslot *s = &c->as[a];
  memcpy(cfg, s->cfg, (size_t)sp_nparams(c->sp) * sizeof *cfg);
  *ob = s->ob;
  free(s->cfg);
  s->cfg = NULL, s->state = A_FREE;
  c->failures += !ob->ok;
  if (ob->ok && !(ob->value >= c->best_s)) c->best_s = ob->value;
  push_rec(c, &s->tr);
  progress(c);
}

/* tu_run_opts.collect: the next answer, those given at submission first,
** else the next measurement a worker reports, stored at once. Stopped, an
** answer is dropped (campaign invariant 1). */
static int camp_collect(void *ctx, int *cfg, tu_obs *ob, rt_err *err) {
  camp *c = ctx;
  int stopped = c->o->stop && *c->o->stop;
  if (c->ready_at < c->nready) {
    int64_t a = c->ready[c->ready_at++];
    if (c->ready_at == c->nready) c->ready_at = c->nready = 0;
    if (stopped) {
      free(c->as[a].cfg);
      c->as[a].cfg = NULL, c->as[a].state = A_FREE;
      rt_err_set(err, "interrupted");
      return -1;
    }
    async_done(c, a, cfg, ob);
    return 0;
  }
  int64_t a;
  int rc;
  ms_result r;
  memset(&r, 0, sizeof r);
  if (c->o->measure_collect(c->o->measure_ctx, &a, &rc, &r, err)) return -1;
  if (a < 0 || a >= c->nas || c->as[a].state != A_WORKER) {
    rt_err_set(err, "an MPI worker answered job %lld, which is not at a worker", (long long)a);
    return -1;
  }
  struct aslot *s = &c->as[a];
  c->compile_s += nz(r.compile_s);
  c->verify_s += nz(r.verify_s);
  c->bench_s += nz(r.bench_s);
  int busy = look(c, 1);   /* asynchronous: flagged only (the workers are elsewhere) */
  c->load_kept += busy;
  stopped = c->o->stop && *c->o->stop;   /* set while it was measured */
  if (rc || stopped) {   /* dropped: invariant 1 */
    if (rc) rt_err_set(err, "the harness failed: %s", r.msg);
    else rt_err_set(err, "interrupted");
    free(s->cfg);
    s->cfg = NULL, s->state = A_FREE;
    return -1;
  }
  s->tr = (trial_rec){0};
  if (store_measured(c, s->cfg, s->hash, &r, busy, &s->tr.id, err)) return -1;
  obs_from(&s->ob, r.status, r.t.median, r.compile_s + r.verify_s + r.bench_s, TU_MEASURED);
  s->ob.loaded = busy;
  s->tr = (trial_rec){s->tr.id, r.t.ci_lo, r.t.ci_hi, r.compile_s, r.verify_s, r.bench_s, r.t.n,
                      r.t.noisy};
  c->measured++;
  s->state = A_READY;   /* until async_done, so that no waiter matches it */
  for (int64_t b = 0; b < c->nas; b++)   /* those waiting behind its source */
    if (c->as[b].state == A_WAIT && !strcmp(c->as[b].hash, s->hash)) {
      int u = async_reuse(c, b, err);
      if (u < 0 || (!u && async_send(c, b, err))) return -1;
      if (!u) break;   /* the others wait behind this one */
    }
  async_done(c, a, cfg, ob);
  return 0;
}

/* ---- Setting up ---- */

/* Whether this session runs asynchronously (tu.h invariant 11). */
static int campaign_async(const tu_campaign_opts *o) {
  const tu_strategy *S = tu_strategy_find(o->strategy);
  return o->parallel > 1 && o->measure_submit && o->measure_collect && S && S->async;
}

/* The campaign's options as stored (enough to resume it). default_first:
** the default schedule is the first trial (invariant 2). */
static char *options_json(const tu_campaign_opts *o) {
  json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:I, s:i, s:f, s:f, s:i, s:f, s:i, s:b, s:b, s:b, s:b}",
                        "target", o->target, "kernel", o->kernel, "set", o->set ? o->set : "",
                        "space", o->space ? o->space : "",
                        "strategy", o->strategy, "budget", o->budget, "time_limit", o->time_limit,
                        "seed", (json_int_t)o->seed, "batch", o->batch, "ci", o->ms.ci_target,
                        "time_cap", o->ms.time_cap, "min_reps", o->ms.min_reps,
                        "timeout", o->ms.timeout, "flush", o->ms.flush_cache, "no_pin", o->no_pin,
                        "counters", o->ms.counters, "default_first", 1,
                        "asynchronous", campaign_async(o));
  json_t *prov = o->provenance ? json_loads(o->provenance, 0, NULL) : NULL;
  if (json_is_object(prov)) json_object_set(j, "kernel_source", prov);
  json_decref(prov);
  char *s = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  return s;
}

/* Fill *o from a stored campaign's options (strings point into *keep);
** *default_first: whether its first trial is the default schedule;
** *was_async: whether a session of it ran asynchronously. */
static int options_from(const char *text, tu_campaign_opts *o, int *default_first, int *was_async,
                        json_t **keep, rt_err *err) {
  json_error_t je;
  json_t *j = json_loads(text, 0, &je);
  json_int_t seed = 0;
  const char *set = NULL, *space = NULL;
  int no_pin = 0;
  *default_first = 0;   /* campaigns stored before it was */
  *was_async = 0;
  if (!j || json_unpack_ex(j, &je, 0, "{s:s, s:s, s:s, s?s, s:s, s:s, s:F, s:I, s:i, s:F, s:F, s:i, s:F, s:i, s?b, s?b, s?b, s?b}",
                           "target", &o->target, "kernel", &o->kernel, "set", &set,
                           "space", &space,
                           "strategy", &o->strategy, "budget", &o->budget, "time_limit",
                           &o->time_limit, "seed", &seed, "batch", &o->batch, "ci",
                           &o->ms.ci_target, "time_cap", &o->ms.time_cap, "min_reps",
                           &o->ms.min_reps, "timeout", &o->ms.timeout, "flush",
                           &o->ms.flush_cache, "no_pin", &no_pin, "counters",
                           &o->ms.counters, "default_first", default_first,
                           "asynchronous", was_async)) {
    rt_err_set(err, "the campaign's stored options are not rooftune's: %s", je.text);
    json_decref(j);
    return -1;
  }
  o->set = set && *set ? set : NULL;
  o->space = space && *space ? space : NULL;
  o->seed = (uint64_t)seed;
  o->no_pin |= no_pin;   /* --no-pin given now or when the campaign began */
  *keep = j;
  return 0;
}

/* Evaluations of a budget "N" or "P%" of count valid configurations. */
static int budget_evals(const char *b, rt_count count, int64_t *out, rt_err *err) {
  char *end;
  double v = strtod(b, &end);
  if (end != b && v > 0 && !strcmp(end, "%") && v <= 100) {
    long double e = ceill((long double)v / 100 * (long double)count - 1e-9L);
    *out = e < 1 ? 1 : e > 1e15L ? (int64_t)1e15 : (int64_t)e;
    return 0;
  }
  if (end != b && v >= 1 && !*end && v == floor(v) && v < 1e15) {
    *out = (int64_t)v;
    return 0;
  }
  rt_err_set(err, "budget: expected N evaluations or P%% of the space, got '%s'", b);
  return -1;
}

/* The kernel's space, or a user's space file for it: that must have the
** kernel's parameters, the same names in the same order (the code
** generator reads them by name; its values may be any subset). */
static int load_space(camp *c, const char *set, const char *space, rt_err *err) {
  char path[4096];
  sx_arena *arena = sx_arena_new();
  sp_binding *b = NULL;
  int nb = set && *set ? sp_parse_bindings(set, arena, &b, err) : 0;
  const char *file = space ? space : c->k->space;
  c->sp = nb < 0 ? NULL : sp_load_file(space ? space : rt_project_path(c->k->space, path, sizeof path),
                                       b, nb, err);
  sp_space *own = c->sp && space ? sp_load_file(rt_project_path(c->k->space, path, sizeof path), b, nb, err) : NULL;
  free(b);
  sx_arena_free(arena);
  if (!c->sp) return -1;
  if (space) {
    int same = own && sp_nparams(own) == sp_nparams(c->sp);
    for (int p = 0; same && p < sp_nparams(own); p++)
      same = !strcmp(sp_param_name(own, p), sp_param_name(c->sp, p));
    sp_free(own);
    if (!same) {
      rt_err_set(err, "%s: not a space of kernel %s: it must have the parameters of %s, "
                 "with the same names in the same order", space, c->k->name, c->k->space);
      return -1;
    }
  }
  if (sp_count(c->sp) == 0) {
    rt_err_set(err, "the space of %s is empty for this workload (rooftune space info %s)",
               c->k->name, file);
    return -1;
  }
  return 0;
}

/* Register target, kernel, workload, space and the campaign row. */
static int register_campaign(camp *c, const tu_campaign_opts *o, const tg_desc *desc,
                             const char *desc_json, rt_err *err) {
  int64_t kid, sid;
  char *key = db_workload_key(c->k->name, c->k->dtype, c->sp), *sizes = db_workload_sizes(c->sp),
       *spec = db_space_spec(c->sp), *opts = options_json(o), compiler[600];
  int *def = rt_malloc((size_t)sp_nparams(c->sp) * sizeof *def);
  char *dj = sp_default_config(c->sp, def) && sp_valid(c->sp, def, NULL) ? sp_config_json(c->sp, def) : NULL;
  db_campaign cr = {.strategy = o->strategy, .options_json = opts, .seed = (int64_t)o->seed,
                    .budget = c->budget, .source = "measured",
                    .compiler = tg_compiler(&c->tg, compiler, sizeof compiler),
                    .flags = c->ms.cflags ? c->ms.cflags : MS_DEFAULT_CFLAGS, .state = "running"};
  int rc = db_begin(c->d, err) ||
           db_target_id(c->d, c->tg.name, desc->fingerprint, desc_json, &c->target_id, err) ||
           db_kernel_id(c->d, c->k->name, "rooftune-" RT_VERSION, &kid, err) ||
           (dj && db_kernel_set_default(c->d, kid, dj, err)) ||
           db_workload_id(c->d, kid, key, sizes, c->k->dtype, kn_str(&c->pb, "layout"), &c->workload_id, err) ||
           db_space_id(c->d, spec, &sid, err);
  if (!rc) {
    cr.target_id = c->target_id, cr.workload_id = c->workload_id, cr.space_id = sid;
    rc = db_campaign_new(c->d, &cr, &c->id, err) || db_lease_take(c->d, c->id, "run", err) ||
         db_commit(c->d, err);
  }
  if (rc) db_rollback(c->d);
  else c->leased = 1;
  free(key), free(sizes), free(spec), free(opts), free(def), free(dj);
  return rc ? -1 : 0;
}

/* This campaign's stored trials, for resume. */
static int own_row(void *ctx, const db_trial_row *r) {
  camp *c = ctx;
  rt_err e = {0};
  if (sp_config_parse(c->sp, r->config, c->cfg_tmp, &e)) return 0;   /* space changed: re-measure */
  int added;
  int64_t i = tu_cfgmap_put(&c->own, c->cfg_tmp, &added);
  if (!added) return 0;
  c->own_obs = rt_realloc(c->own_obs, (size_t)c->own.cap * sizeof *c->own_obs);
  c->own_rec = rt_realloc(c->own_rec, (size_t)c->own.cap * sizeof *c->own_rec);
  int reused = r->origin && !strcmp(r->origin, "reused");
  obs_from(&c->own_obs[i], ms_status_parse(r->status), r->time_s,
           reused ? 0 : nz(r->compile_s) + nz(r->verify_s) + nz(r->bench_s), TU_RESUMED);
  c->own_obs[i].loaded = r->loaded;
  c->own_rec[i] = (trial_rec){r->id, r->ci_lo_s, r->ci_hi_s, reused ? 0 : nz(r->compile_s),
                              reused ? 0 : nz(r->verify_s), reused ? 0 : nz(r->bench_s),
                              r->repeats, r->noisy};
  return 0;
}

/* The report's "load" object (null when the guard did not look): the
** looks and the busy ones, the first reason, the policy's retries and
** wait, the measurements kept though busy, how many looks each sign
** judged busy, the reference loop's slowest ratio, the GPU's last reading. */
static json_t *load_json(const tu_report *r) {
  if (!r->load_on) return json_null();
  json_t *signs = json_object();
  for (int k = 0; k < MS_NSIGNS; k++)
    json_object_set_new(signs, ms_sign_names[k], json_integer(r->load_signs[k]));
  json_t *gpu = json_null();
  if (r->load_gpu) {
    const ms_gpu_reading *g = &r->load_gpu_last;
#define NS(x) ((x) == MS_GPU_UNKNOWN ? json_null() : json_real(1e-9 * (double)(x)))
    gpu = json_pack("{s:i, s:i, s:I, s:o, s:o}", "sm_mhz", (int)g->sm_mhz, "sm_top_mhz",
                    (int)r->load_sm_top, "reasons", (json_int_t)g->reasons, "thermal_s",
                    NS(g->thermal_ns), "power_s", NS(g->power_ns));
#undef NS
  } else if (r->load_gpu_why) {
    gpu = json_pack("{s:s}", "error", r->load_gpu_why);
  }
  return json_pack("{s:I, s:I, s:o, s:s, s:I, s:f, s:I, s:o, s:o, s:o}", "looks",
                   (json_int_t)r->load_looks, "busy", (json_int_t)r->load_busy, "why",
                   r->load_why ? json_string(r->load_why) : json_null(), "policy",
                   r->load_policy == TU_LOAD_WAIT ? "wait" : "flag", "retries",
                   (json_int_t)r->load_retries, "waited_s", r->load_wait_s, "loaded",
                   (json_int_t)r->load_kept, "signs", signs, "ref_max",
                   r->load_ref_max > 0 ? json_real(r->load_ref_max) : json_null(), "gpu", gpu);
}

/* ---- The end: the pin decision (tu.h invariant 6), baseline, report ---- */

#define TU_RECHECK 3   /* candidates measured again at the end */

/* One position of the end's sequence D c1 D c2 ... D. */
typedef struct rm_pos {
  int is_default;
  int64_t trial;            /* this campaign's trial of the configuration; 0: none */
  const int *cfg;
  char *config, *src, hash[33];
  int status;
  ms_stats t;               /* when status is MS_OK */
  double compile_s, verify_s, bench_s;
  const char *origin;       /* "measured", "reused", "resumed" */
} rm_pos;

typedef struct rm_seq {
  rm_pos *p;
  int n;
  char hash[33];            /* of the ordered roles and sources */
  int64_t from;             /* the campaign whose stored sequence answered */
} rm_seq;

/* A stored sequence's rows, in seq order, onto q's positions. */
typedef struct rm_found {
  rm_seq *q;
  int n, bad;
} rm_found;

static int rm_row(void *ctx, const db_remeasurement *m) {
  rm_found *f = ctx;
  int st = ms_status_parse(m->status);
  if (f->n >= f->q->n || m->seq != f->n + 1 || st < 0 || strcmp(m->source_hash, f->q->p[f->n].hash)) {
    f->bad = 1;
    return 1;
  }
  rm_pos *p = &f->q->p[f->n++];
  p->status = st;
  p->t = (ms_stats){.n = m->repeats, .median = m->time_s, .mean = m->mean_s, .sd = m->sd_s,
                    .min = m->min_s, .ci_lo = m->ci_lo_s, .ci_hi = m->ci_hi_s, .noisy = m->noisy};
  p->compile_s = nz(m->compile_s), p->verify_s = nz(m->verify_s), p->bench_s = nz(m->bench_s);
  f->q->from = m->campaign_id;
  return 0;
}

/* Answer q from a stored identical sequence (this campaign's own when it
** has one: resume; else an earlier campaign's: reuse, stored again as
** this campaign's). 1 answered, 0 not stored, -1 with err. */
static int rm_lookup(camp *c, rm_seq *q, rt_err *err) {
  rm_found f = {q, 0, 0};
  if (db_remeasurements_find(c->d, c->id, c->target_id, c->workload_id, q->hash, rm_row, &f, err) < 0)
    return -1;
  if (f.bad || f.n != q->n) return 0;
  for (int i = 0; i < q->n; i++) q->p[i].origin = q->from == c->id ? "resumed" : "reused";
  return 1;
}

/* Measure q's positions in order. 0, 1 when stopped first (nothing
** kept), -1 with err. */
static int rm_measure(camp *c, rm_seq *q, rt_err *err) {
  for (int i = 0; i < q->n; i++) {
    rm_pos *p = &q->p[i];
    ms_result r;
    if (measure(c, p->cfg, p->src, NULL, &r)) {
      rt_err_set(err, "the harness failed: %s", r.msg);
      return -1;
    }
    if (c->o->stop && *c->o->stop) return 1;
    p->status = r.status;
    p->t = r.status == MS_OK ? r.t : (ms_stats){0};
    p->compile_s = r.compile_s, p->verify_s = r.verify_s, p->bench_s = r.bench_s;
    p->origin = "measured";
  }
  return 0;
}

/* Store q as this campaign's re-measurements, all in one transaction. */
static int rm_store(camp *c, const rm_seq *q, rt_err *err) {
  db_remeasurement *m = rt_calloc((size_t)q->n, sizeof *m);
  for (int i = 0; i < q->n; i++) {
    const rm_pos *p = &q->p[i];
    int ok = p->status == MS_OK;
    m[i] = (db_remeasurement){.campaign_id = c->id, .trial_id = p->trial, .seq = i + 1,
                              .role = p->is_default ? "default" : "candidate",
                              .config_json = p->config, .source_hash = p->hash,
                              .sequence_hash = q->hash, .status = ms_status_name(p->status),
                              .time_s = ok ? p->t.median : NAN, .mean_s = ok ? p->t.mean : NAN,
                              .sd_s = ok ? p->t.sd : NAN, .min_s = ok ? p->t.min : NAN,
                              .ci_lo_s = ok ? p->t.ci_lo : NAN, .ci_hi_s = ok ? p->t.ci_hi : NAN,
                              .repeats = ok ? p->t.n : 0, .noisy = ok && p->t.noisy,
                              .compile_s = p->compile_s, .verify_s = p->verify_s,
                              .bench_s = p->bench_s, .origin = p->origin};
  }
  int rc = db_remeasurements_add(c->d, m, q->n, err);
  free(m);
  return rc;
}

/* "T ms [LO, HI]" of a measurement. */
static const char *fmt_ci(char *buf, size_t cap, const ms_stats *t) {
  snprintf(buf, cap, "%.4g ms [%.4g, %.4g]", t->median * 1e3, t->ci_lo * 1e3, t->ci_hi * 1e3);
  return buf;
}

/* The re-measurements as the report's JSON array. */
static char *rm_json(const rm_seq *q) {
  json_t *a = json_array();
  for (int i = 0; i < q->n; i++) {
    const rm_pos *p = &q->p[i];
    int ok = p->status == MS_OK;
    json_t *e = json_pack("{s:i, s:s, s:o, s:o, s:s, s:o, s:[o, o], s:i, s:b, s:s}", "seq", i + 1,
                          "role", p->is_default ? "default" : "candidate", "trial",
                          p->trial ? json_integer(p->trial) : json_null(), "config",
                          json_loads(p->config, 0, NULL), "status", ms_status_name(p->status),
                          "time_s", ok ? json_real(p->t.median) : json_null(), "ci95",
                          ok ? json_real(p->t.ci_lo) : json_null(),
                          ok ? json_real(p->t.ci_hi) : json_null(), "repeats", ok ? p->t.n : 0,
                          "noisy", ok && p->t.noisy, "origin", p->origin);
    json_array_append_new(a, e);
  }
  char *s = json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(17));
  json_decref(a);
  return s;
}

static void choose(tu_report *rep, const char *choice, int64_t trial, char *config, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void choose(tu_report *rep, const char *choice, int64_t trial, char *config, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  rep->choice = rt_strdup(choice);
  rep->choice_trial = trial;
  rep->choice_config = config;
  rep->reason = rt_strdup(buf);
}

/* The default's trial in this campaign for a default that is not in the
** run (a campaign stored before it came first): the one stored earlier,
** or its first re-measurement stored now as a trial. 0 or -1 with err. */
static int default_trial(camp *c, rm_seq *q, const int *def, int loaded, rt_err *err) {
  int64_t i = tu_cfgmap_get(&c->own, def);
  int64_t id = i >= 0 ? c->own_rec[i].id : 0;
  if (!id) {
    const rm_pos *p = &q->p[0];
    db_trial t;
    db_trial_init(&t);
    t.status = "ok";
    t.time_s = p->t.median, t.mean_s = p->t.mean, t.sd_s = p->t.sd, t.min_s = p->t.min;
    t.ci_lo_s = p->t.ci_lo, t.ci_hi_s = p->t.ci_hi, t.repeats = p->t.n, t.noisy = p->t.noisy;
    t.compile_s = p->compile_s, t.verify_s = p->verify_s, t.bench_s = p->bench_s;
    t.loaded = loaded;
    if (store(c, def, &t, p->hash, strcmp(p->origin, "measured") ? "reused" : "measured", &id, err))
      return -1;
  }
  for (int k = 0; k < q->n; k++)
    if (q->p[k].is_default) q->p[k].trial = id;
  return 0;
}

/* Decide the pin by invariant 6 into rep (choice, reason, trial, the
** re-measurements). 0; 1 when stopped while re-measuring (nothing
** decided); -1 with err. */
static int decide(camp *c, tu_run *run, tu_report *rep, rt_err *err) {
  int np = sp_nparams(c->sp), rc = -1;
  int64_t n = run ? tu_run_n(run) : 0, di = -1, cand[TU_RECHECK], nok = 0;
  int nc = 0;
  int *def = rt_malloc((size_t)np * sizeof *def);
  int has_def = sp_default_config(c->sp, def) && sp_valid(c->sp, def, NULL);
  for (int64_t i = 0; has_def && i < n && di < 0; i++)
    if (!memcmp(tu_run_cfg(run, i), def, (size_t)np * sizeof *def)) di = i;
  /* the fastest verified trials but the default (ties: the earlier first) */
  for (int64_t i = 0; i < n; i++) {
    const tu_obs *ob = tu_run_obs(run, i);
    if (!ob->ok) continue;
    nok++;
    if (i == di) continue;
    int k = nc < TU_RECHECK ? nc++ : TU_RECHECK;
    if (k == TU_RECHECK && !(ob->value < tu_run_obs(run, cand[k - 1])->value)) continue;
    if (k == TU_RECHECK) k--;
    while (k > 0 && ob->value < tu_run_obs(run, cand[k - 1])->value) cand[k] = cand[k - 1], k--;
    cand[k] = i;
  }
  rm_seq q = {0};
  char a[96], b[96];
  if (!nok) {
    choose(rep, "none", 0, NULL, "nothing to pin: no verified trial");
    rc = 0;
    goto out;
  }
  if (di >= 0 && tu_run_best(run) == di) {
    const trial_rec *t = &c->rec[di];
    ms_stats s = {.median = tu_run_obs(run, di)->value, .ci_lo = t->ci_lo, .ci_hi = t->ci_hi};
    choose(rep, "default", t->id, sp_config_json(c->sp, def),
           "kept the default: it is the fastest verified trial (%s)", fmt_ci(a, sizeof a, &s));
    rc = 0;
    goto out;
  }
  /* the sequence: D c1 D c2 ... D with a default to compare with, else c1 ... */
  int use_def = has_def && !(di >= 0 && !tu_run_obs(run, di)->ok);
  q.n = use_def ? 2 * nc + 1 : nc;
  q.p = rt_calloc((size_t)q.n, sizeof *q.p);
  rt_hash h = RT_HASH_INIT;
  for (int k = 0; k < q.n; k++) {
    rm_pos *p = &q.p[k];
    p->is_default = use_def && k % 2 == 0;
    int64_t idx = p->is_default ? di : cand[use_def ? k / 2 : k];
    p->cfg = p->is_default ? def : tu_run_cfg(run, idx);
    p->trial = idx >= 0 ? c->rec[idx].id : 0;
    p->config = sp_config_json(c->sp, p->cfg);
    p->src = c->k->codegen(&c->pb, c->sp, p->cfg);
    source_hash(c, p->src, p->hash);
    h = rt_hash_bytes(h, p->is_default ? "D:" : "C:", 2);
    h = rt_hash_bytes(h, p->hash, 32);
  }
  rt_hash_hex(h, q.hash);
  int found = rm_lookup(c, &q, err);
  if (found < 0) goto out;
  int64_t busy0 = c->load_kept;
  if (!found) {
    int m = rm_measure(c, &q, err);
    if (m) {
      rc = m;
      goto out;
    }
  }
  /* re-measured on a busy machine: nothing to compare, nothing kept for reuse */
  int busy_rm = c->load_kept > busy0;
  int first_def_ok = use_def && q.p[0].status == MS_OK;
  if (use_def && di < 0 && first_def_ok && default_trial(c, &q, def, busy_rm, err)) goto out;
  if ((!found || q.from != c->id) && !busy_rm && rm_store(c, &q, err)) goto out;
  rep->remeasured = q.n, rep->remeasured_candidates = nc;
  for (int k = 0; k < q.n; k++) {
    if (strcmp(q.p[k].origin, "measured")) rep->remeasured_reused++;
    else rep->remeasure_s += q.p[k].compile_s + q.p[k].verify_s + q.p[k].bench_s;
  }
  rep->remeasurements = rm_json(&q);
  if (busy_rm) {   /* invariant 6: no pin from measurements made under load */
    if (use_def)
      choose(rep, "default", q.p[0].trial, sp_config_json(c->sp, def),
             "kept the default: the machine was busy while the candidates were measured again "
             "(%s)", c->last_why);
    else
      choose(rep, "none", 0, NULL, "nothing to pin: the machine was busy while the candidates "
             "were measured again (%s)", c->last_why);
    rc = 0;
    goto out;
  }
  /* the default's measurements must all be verified to compare with */
  const rm_pos *dfail = NULL;
  for (int k = 0; use_def && k < q.n && !dfail; k++)
    if (q.p[k].is_default && q.p[k].status != MS_OK) dfail = &q.p[k];
  if (use_def && !dfail) {
    const rm_pos *win = NULL, *wind = NULL, *close = NULL, *closed = NULL;
    for (int k = 1; k < q.n; k += 2) {
      const rm_pos *p = &q.p[k], *d = q.p[k - 1].t.ci_lo <= q.p[k + 1].t.ci_lo ? &q.p[k - 1] : &q.p[k + 1];
      if (p->status != MS_OK) continue;
      if (!close || p->t.median < close->t.median) close = p, closed = d;
      if (p->t.ci_hi < d->t.ci_lo && (!win || p->t.median < win->t.median)) win = p, wind = d;
    }
    const rm_pos *shown = win ? win : close, *shownd = win ? wind : closed;
    if (shown) {
      rep->cand_trial = shown->trial;
      rep->cand_s = shown->t.median, rep->cand_lo = shown->t.ci_lo, rep->cand_hi = shown->t.ci_hi;
      rep->def_s = shownd->t.median, rep->def_lo = shownd->t.ci_lo, rep->def_hi = shownd->t.ci_hi;
    }
    if (win) {
      choose(rep, "tuned", win->trial, rt_strdup(win->config),
             "trial %lld beats the default: %s against %s, disjoint 95%% CIs (re-measured alternately)",
             (long long)win->trial, fmt_ci(a, sizeof a, &win->t), fmt_ci(b, sizeof b, &wind->t));
    } else if (close) {
      choose(rep, "default", q.p[0].trial, sp_config_json(c->sp, def),
             "kept the default: best %s (trial %lld) does not beat the default %s (re-measured "
             "alternately; a pin needs disjoint 95%% CIs)",
             fmt_ci(a, sizeof a, &close->t), (long long)close->trial, fmt_ci(b, sizeof b, &closed->t));
    } else {
      choose(rep, "default", q.p[0].trial, sp_config_json(c->sp, def),
             "kept the default: no candidate was verified when measured again (trial %lld: %s)",
             (long long)q.p[1].trial, ms_status_name(q.p[1].status));
    }
  } else {   /* no default to keep: the fastest candidate verified again */
    char why[160];
    if (!has_def) snprintf(why, sizeof why, "the space has no valid default schedule");
    else if (dfail) snprintf(why, sizeof why, "the default schedule failed when measured again (%s)",
                             ms_status_name(dfail->status));
    else snprintf(why, sizeof why, "the default schedule failed (%s)",
                  ms_status_name(tu_run_obs(run, di)->status));
    const rm_pos *best = NULL;
    for (int k = 0; k < q.n; k++)
      if (!q.p[k].is_default && q.p[k].status == MS_OK && (!best || q.p[k].t.median < best->t.median))
        best = &q.p[k];
    if (best) {
      rep->cand_trial = best->trial;
      rep->cand_s = best->t.median, rep->cand_lo = best->t.ci_lo, rep->cand_hi = best->t.ci_hi;
      choose(rep, "tuned", best->trial, rt_strdup(best->config),
             "%s: pinned the fastest candidate verified again, trial %lld (%s)", why,
             (long long)best->trial, fmt_ci(a, sizeof a, &best->t));
    } else {
      choose(rep, "none", 0, NULL, "nothing to pin: %s and no candidate was verified when measured again",
             why);
    }
  }
  rc = 0;
out:
  for (int k = 0; k < q.n; k++) free(q.p[k].config), free(q.p[k].src);
  free(q.p);
  free(def);
  return rc;
}

/* The run's counts, best trial and default (rep), and this session's time. */
static void finish_report(camp *c, tu_run *run, tu_report *rep) {
  int np = sp_nparams(c->sp);
  rep->flops = c->k->flops(&c->pb);
  rep->min_bytes = c->k->min_bytes(&c->pb);
  for (int64_t i = 0; run && i < tu_run_n(run); i++) rep->status_count[tu_run_obs(run, i)->status]++;
  rep->evaluations = run ? tu_run_n(run) : 0;
  rep->measured = c->measured, rep->reused = c->reused, rep->resumed = c->resumed;
  rep->search_s = run ? tu_run_framework_s(run) : 0;
  tu_guide g = run ? tu_run_guide(run) : (tu_guide){0, 0, NULL, NAN, 0};
  rep->guide_model = g.model, rep->guide_fallback = g.fallback;
  rep->guide_fallback_name = g.fallback_name, rep->guide_rho = g.rho;
  int64_t b = run ? tu_run_best(run) : -1;
  rep->best_s = rep->best_gflops = rep->best_gbs = rep->best_ci_lo = rep->best_ci_hi = NAN;
  if (b >= 0) {
    rep->best_s = tu_run_obs(run, b)->value;
    rep->best_ci_lo = c->rec[b].ci_lo, rep->best_ci_hi = c->rec[b].ci_hi;
    rep->best_repeats = c->rec[b].repeats, rep->best_noisy = c->rec[b].noisy;
    rep->best_trial = c->rec[b].id;
    rep->best_gflops = rep->flops / rep->best_s * 1e-9;
    rep->best_gbs = rep->min_bytes / rep->best_s * 1e-9;
    rep->best_config = sp_config_json(c->sp, tu_run_cfg(run, b));
  }
  rep->default_s = rep->baseline_s = rep->baseline_ci_lo = rep->baseline_ci_hi = NAN;
  rep->speedup_default = rep->speedup_baseline = NAN;
  rep->cand_s = rep->cand_lo = rep->cand_hi = rep->def_s = rep->def_lo = rep->def_hi = NAN;
  /* The space's default schedule: its trial in the run (the first). */
  int *def = rt_malloc((size_t)np * sizeof *def);
  if (sp_default_config(c->sp, def) && sp_valid(c->sp, def, NULL)) {
    rep->default_config = sp_config_json(c->sp, def);
    for (int64_t j = 0; run && j < tu_run_n(run); j++)
      if (!memcmp(tu_run_cfg(run, j), def, (size_t)np * sizeof *def)) {
        const tu_obs *ob = tu_run_obs(run, j);
        rep->default_s = ob->ok ? ob->value : NAN;
        break;
      }
  }
  free(def);
}

/* The baseline library, or the reference when the kernel has none. */
static void baseline(camp *c, tu_report *rep) {
  const char *ldflags = NULL;
  char *src = c->k->baseline ? c->k->baseline(&c->pb, &ldflags) : NULL;
  ms_result r;
  if (!measure(c, NULL, src, ldflags, &r) && r.status == MS_OK) {
    rep->baseline_s = r.t.median;
    rep->baseline_ci_lo = r.t.ci_lo, rep->baseline_ci_hi = r.t.ci_hi, rep->baseline_repeats = r.t.n;
  }
  char what[160];
  snprintf(what, sizeof what, "%s", src ? (ldflags ? ldflags : "library") : "reference implementation");
  rep->baseline_what = rt_strdup(what);
  free(src);
  /* the default measured only at the end (a campaign from before it came first) */
  if (isnan(rep->default_s) && rep->choice && !strcmp(rep->choice, "default") && !isnan(rep->def_s))
    rep->default_s = rep->def_s;
  rep->speedup_default = rep->default_s / rep->best_s;
  rep->speedup_baseline = rep->baseline_s / rep->best_s;
}

/* The report as JSON (stored with the campaign, printed by --json). */
static char *report_json(const tu_report *r) {
  json_t *j = json_object(), *st = json_object();
  json_t *best = r->best_config ? json_loads(r->best_config, 0, NULL) : json_null();
  json_t *def = r->default_config ? json_loads(r->default_config, 0, NULL) : json_null();
#define NUM(x) (isnan(x) ? json_null() : json_real(x))
  for (int s = 0; s <= MS_INVALID; s++)
    json_object_set_new(st, ms_status_name((ms_status)s), json_integer(r->status_count[s]));
  json_object_set_new(j, "campaign", json_integer(r->campaign));
  json_object_set_new(j, "state", json_string(r->state));
  json_object_set_new(j, "ended", json_string(r->end));
  json_object_set_new(j, "target", json_string(r->target));
  json_object_set_new(j, "fingerprint", json_string(r->fingerprint));
  json_object_set_new(j, "kernel", json_string(r->kernel));
  json_object_set_new(j, "workload", json_string(r->workload));
  json_object_set_new(j, "strategy", json_string(r->strategy));
  json_object_set_new(j, "seed", json_integer((json_int_t)r->seed));
  json_object_set_new(j, "budget", json_integer(r->budget));
  json_object_set_new(j, "evaluations", json_integer(r->evaluations));
  json_object_set_new(j, "measured", json_integer(r->measured));
  json_object_set_new(j, "reused", json_integer(r->reused));
  json_object_set_new(j, "resumed", json_integer(r->resumed));
  json_object_set_new(j, "status", st);
  json_object_set_new(j, "best", json_pack("{s:o, s:o, s:[o, o], s:i, s:b, s:I, s:o, s:o}",
                                           "config", best, "time_s", NUM(r->best_s), "ci95",
                                           NUM(r->best_ci_lo), NUM(r->best_ci_hi), "repeats",
                                           r->best_repeats, "noisy", r->best_noisy, "trial",
                                           (json_int_t)r->best_trial, "gflops", NUM(r->best_gflops),
                                           "gbytes_per_s", NUM(r->best_gbs)));
  json_object_set_new(j, "default", json_pack("{s:o, s:o, s:o}", "config", def, "time_s",
                                              NUM(r->default_s), "speedup", NUM(r->speedup_default)));
  json_object_set_new(j, "baseline", json_pack("{s:s?, s:o, s:[o, o], s:i, s:o}", "what",
                                               r->baseline_what, "time_s", NUM(r->baseline_s),
                                               "ci95", NUM(r->baseline_ci_lo),
                                               NUM(r->baseline_ci_hi), "repeats",
                                               r->baseline_repeats, "speedup",
                                               NUM(r->speedup_baseline)));
  json_t *rm = r->remeasurements ? json_loads(r->remeasurements, 0, NULL) : json_array();
  json_object_set_new(j, "decision", json_pack("{s:s?, s:o, s:o, s:s?, s:i, s:i, s:i, s:{s:o, s:o, s:[o, o]}, s:{s:o, s:[o, o]}, s:o}",
                                               "choice", r->choice, "trial",
                                               r->choice_trial ? json_integer(r->choice_trial) : json_null(),
                                               "config", r->choice_config ? json_loads(r->choice_config, 0, NULL) : json_null(),
                                               "reason", r->reason, "remeasured", r->remeasured, "candidates", r->remeasured_candidates,
                                               "reused", r->remeasured_reused, "candidate", "trial",
                                               r->cand_trial ? json_integer(r->cand_trial) : json_null(),
                                               "time_s", NUM(r->cand_s), "ci95", NUM(r->cand_lo), NUM(r->cand_hi),
                                               "default", "time_s", NUM(r->def_s), "ci95", NUM(r->def_lo),
                                               NUM(r->def_hi), "remeasurements", rm));
  json_object_set_new(j, "spent_s", json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "compile", r->compile_s,
                                              "verify", r->verify_s, "measure", r->bench_s,
                                              "framework", r->framework_s, "elapsed", r->elapsed_s,
                                              "remeasure", r->remeasure_s, "strategy", r->search_s));
  json_object_set_new(j, "load", load_json(r));
  json_object_set_new(j, "guide", r->guide_fallback_name
                                      ? json_pack("{s:I, s:I, s:s, s:o}", "from_model", (json_int_t)r->guide_model,
                                                  "from_fallback", (json_int_t)r->guide_fallback, "fallback",
                                                  r->guide_fallback_name, "agreement_spearman", NUM(r->guide_rho))
                                      : json_null());
  json_object_set_new(j, "pin_version", r->pin_version ? json_integer(r->pin_version) : json_null());
  if (r->pin_note) json_object_set_new(j, "pin_note", json_string(r->pin_note));
#undef NUM
  char *s = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  return s;
}

/* ---- The campaign ---- */

int tu_campaign(const tu_campaign_opts *oin, tu_report *rep, rt_err *err) {
  memset(rep, 0, sizeof *rep);
  tu_campaign_opts o = *oin;
  camp c = {.o = &o, .best_s = NAN, .t0 = rt_now()};
  json_t *keep = NULL;
  db_campaign_info info = {0};
  tu_run *run = NULL;
  int rc = -1, default_first = 1, was_async = 0, *def = NULL;
  c.d = db_open(o.db_path, DB_CREATE, err);
  if (!c.d) return -1;
  if (o.resume > 0) {
    /* the lease first: what is read next cannot change under us */
    if (db_lease_take(c.d, o.resume, "resume", err)) goto out;
    c.leased = 1, c.id = o.resume;
    if (db_campaign_get(c.d, o.resume, &info, err)) goto out;
    if (strcmp(info.source, "measured")) {
      rt_err_set(err, "campaign %lld is not a tuning campaign (source %s)", (long long)o.resume,
                 info.source);
      goto out;
    }
    if (!strcmp(info.state, "done")) {
      rt_err_set(err, "campaign %lld is done already: nothing to resume", (long long)o.resume);
      goto out;
    }
    ms_opts_default(&o.ms);
    if (options_from(info.options, &o, &default_first, &was_async, &keep, err)) goto out;
  }
  tg_desc desc;
  if (tg_resolve(o.target, &c.tg, err) || tg_describe(&c.tg, &desc, err)) goto out;
  o.target = c.tg.name;   /* canonical (a default instance named in full): the stored target's name, the pin's */
  const char *untimed = NULL;
  if (!o.measure && !tg_timed(&c.tg, &untimed)) {   /* ms.h invariant 8: nothing to store */
    rt_err_set(err, "%s does not time schedules: %s", c.tg.name, untimed);
    goto out;
  }
  if (o.resume > 0 && strcmp(desc.fingerprint, info.fingerprint)) {
    rt_err_set(err, "campaign %lld was measured on another machine or toolchain (fingerprint %s, "
               "here %s): it cannot be continued here", (long long)o.resume, info.fingerprint,
               desc.fingerprint);
    goto out;
  }
  const tu_strategy *S = tu_strategy_find(o.strategy);
  if (!(c.k = tg_kernel(&c.tg, o.kernel))) {
    rt_err_set(err, "unknown kernel '%s' on target %s (rooftune kernels --target %s)%s", o.kernel,
               c.tg.name, c.tg.name, o.resume > 0 ? "; a kernel of your own is given again with --t1 FILE "
               "(and --kernel-dir DIR) to resume its campaign" : "");
    goto out;
  }
  if (!S) {
    rt_err_set(err, "unknown strategy '%s'", o.strategy);
    goto out;
  }
  char *set = tg_kernel_bindings(&c.tg, c.k, o.set, err);
  int bad_space = !set || load_space(&c, set, o.space, err);
  free(set);
  if (bad_space) goto out;
  kn_problem_from_space(&c.pb, c.sp);
  if (!(c.w = ms_workload_new(c.k, &c.pb, err))) goto out;   /* sizes checked before anything */
  c.ms = o.ms;
  c.ms.guard = o.db_path;   /* no candidate may touch the database */
  if (o.start && o.start(o.measure_ctx, c.tg.name, o.kernel, o.set, &c.ms, desc.fingerprint, err))
    goto out;   /* the workers (mpi/mp.h) are not ready or not identical */
  const char *lg = getenv("ROOFTUNE_LOAD_GUARD");   /* "off": as --no-load-guard (the tests) */
  if (lg && !strcmp(lg, "off")) o.no_load_guard = 1;
  if (!o.no_load_guard && ((!o.measure && !o.measure_batch) || o.load_hooks)) {
    rt_err lerr = {0};   /* a machine that cannot be read: no guard, and the report says so */
    ms_load_hooks h = {0};
    if (o.load_hooks) h = *o.load_hooks;
    else if (c.tg.be->gpu_reading) h.gpu = c.tg.be->gpu_reading, h.gpu_ctx = &c.tg;
    if (ms_load_start(&c.guard, &h, &lerr)) snprintf(c.load_why, sizeof c.load_why, "%.150s", lerr.msg);
  }
  c.time_limit = o.time_limit;
  if (budget_evals(o.budget, sp_count(c.sp), &c.budget, err)) goto out;
  int np = sp_nparams(c.sp);
  c.cfg_tmp = rt_malloc((size_t)np * sizeof *c.cfg_tmp);
  tu_cfgmap_init(&c.own, np);
  if (o.resume > 0) {
    char *key = db_workload_key(c.k->name, c.k->dtype, c.sp);
    int same = !strcmp(key, info.workload_key);
    free(key);
    if (!same) {
      rt_err_set(err, "campaign %lld's workload (%s) does not match its stored options", (long long)o.resume,
                 info.workload_key);
      goto out;
    }
    c.id = info.id, c.target_id = info.target_id, c.workload_id = info.workload_id;
    db_trial_filter f = {.campaign = c.id};
    if (db_trials(c.d, &f, own_row, &c, err) < 0) goto out;
  } else {
    char *text = tg_desc_json(&desc);
    int bad = register_campaign(&c, &o, &desc, text, err);
    free(text);
    if (bad) goto out;
  }
  tu_objective obj = {camp_eval, &c, camp_prepare};
  tu_run_opts ro = {.strategy = S, .seed = o.seed, .max_evals = c.budget,
                    .max_cost = o.time_limit, .batch = o.batch, .stop = o.stop,
                    .parallel = o.parallel};
  int async = campaign_async(&o);
  if (async) ro.submit = camp_submit, ro.collect = camp_collect;   /* tu.h invariant 11 */
  if (o.time_limit > 0) cost_priors(&c, &ro);   /* tu.h invariant 12 */
  /* the default schedule, the first trial (tu.h 5, 6); resuming a campaign
  ** that ran (or runs now) asynchronously, then every stored trial */
  int feed = (async || was_async) && c.own.n > 0;
  def = rt_malloc((size_t)(1 + (feed ? c.own.n : 0)) * np * sizeof *def);
  if (default_first && sp_default_config(c.sp, def) && sp_valid(c.sp, def, NULL)) ro.nfirst = 1;
  for (int64_t i = 0; feed && i < c.own.n; i++) {
    const int *k = tu_cfgmap_key(&c.own, i);
    if (!ro.nfirst || memcmp(k, def, (size_t)np * sizeof *def))
      memcpy(def + (size_t)ro.nfirst++ * np, k, (size_t)np * sizeof *def);
  }
  if (ro.nfirst) ro.first = def;
  if (S->needs_model) {   /* this target's ceilings and latest calibration */
    if (!(c.model = cm_tmodel_open(c.d, c.target_id, c.tg.name, c.k->name, &c.pb, c.sp, c.ms.flush_cache, err))) {
      db_campaign_end(c.d, c.id, "stopped", NULL);
      goto out;
    }
    ro.predict = cm_tmodel_predict, ro.refit = cm_tmodel_refit, ro.model = c.model;
    ro.sigma = cm_tmodel_sigma;
  }
  tu_run *partial = NULL;
  rt_err rerr = {0};
  run = tu_run_strategy(c.sp, &obj, &ro, &partial, &rerr);
  const char *state = "done";
  if (!run) {
    run = partial;
    state = "stopped";
    if (!(o.stop && *o.stop)) {   /* a real failure, not Ctrl-C */
      rt_err_set(err, "campaign %lld: %s (continue with rooftune tune --resume %lld)", (long long)c.id,
                 rerr.msg, (long long)c.id);
      db_campaign_end(c.d, c.id, "stopped", NULL);
      goto out;
    }
  } else if (tu_run_end(run) == TU_END_STOPPED) {
    state = "stopped";
  }
  rep->campaign = c.id;
  rep->end = rt_strdup(run && !strcmp(state, "done") ? tu_end_name(tu_run_end(run)) : "interrupted");
  rep->kernel = rt_strdup(c.k->name);
  rep->workload = db_workload_key(c.k->name, c.k->dtype, c.sp);
  rep->target = rt_strdup(o.target);
  rep->fingerprint = rt_strdup(desc.fingerprint);
  rep->strategy = rt_strdup(S->name);
  rep->seed = o.seed;
  rep->budget = c.budget;
  finish_report(&c, run, rep);
  /* The end (Ctrl-C: leave promptly): the decision, then the baseline. */
  int stopped_end = 0;
  if (!strcmp(state, "done") && !o.no_recheck) {
    int d = decide(&c, run, rep, err);
    if (d < 0) {
      rt_err_prefix(err, "campaign %lld: deciding the pin (continue with rooftune tune --resume %lld)",
                    (long long)c.id, (long long)c.id);
      db_campaign_end(c.d, c.id, "stopped", NULL);
      goto out;
    }
    if (d > 0) state = "stopped", stopped_end = 1;
  }
  if (!strcmp(state, "done")) baseline(&c, rep);
  rep->state = rt_strdup(state);
  if (!strcmp(state, "done") && rep->choice_trial && !o.no_pin && !o.no_recheck) {
    db_pin_req pr = {.target = o.target, .kernel = c.k->name, .workload_key = rep->workload,
                     .trial_id = rep->choice_trial};
    char reason[1200];
    snprintf(reason, sizeof reason, "campaign %lld (%s, %lld verified trials): %s", (long long)c.id,
             S->name, (long long)rep->status_count[MS_OK], rep->reason);
    pr.reason = reason;
    if (db_pin(c.d, &pr, &rep->pin_version, err)) goto out;
  } else {
    rep->pin_note = rt_strdup(stopped_end ? "not pinned: stopped while re-measuring the candidates"
                              : strcmp(state, "done") ? "not pinned: the campaign was stopped"
                              : o.no_recheck ? "not pinned: no decision was made (no re-measurement)"
                              : !rep->choice_trial ? rep->reason
                              : "not pinned (--no-pin)");
  }
  rep->elapsed_s = rt_now() - c.t0;
  rep->compile_s = c.compile_s, rep->verify_s = c.verify_s, rep->bench_s = c.bench_s;
  rep->framework_s = fmax(0, rep->elapsed_s - c.compile_s - c.verify_s - c.bench_s);
  rep->load_on = c.guard.on, rep->load_looks = c.load_looks, rep->load_busy = c.load_busy;
  rep->load_policy = o.load_policy, rep->load_retries = c.load_retries, rep->load_kept = c.load_kept;
  rep->load_wait_s = c.load_wait_s, rep->load_ref_max = c.ref_max;
  memcpy(rep->load_signs, c.load_signs, sizeof rep->load_signs);
  rep->load_gpu = c.guard.gpu_on, rep->load_gpu_last = c.guard.gpu_last, rep->load_sm_top = c.guard.sm_top;
  rep->load_gpu_why = c.guard.gpu_why[0] ? rt_strdup(c.guard.gpu_why) : NULL;
  rep->load_why = c.load_why[0] ? rt_strdup(c.load_why) : NULL;
  rep->json = report_json(rep);
  if (db_campaign_set_report(c.d, c.id, rep->json, err) || db_campaign_end(c.d, c.id, state, err))
    goto out;
  rc = 0;
out:
  if (rc) tu_report_free(rep);
  if (c.leased) db_lease_release(c.d, c.id, NULL);
  tu_run_free(run);
  ms_workload_free(c.w);
  sp_free(c.sp);
  tu_cfgmap_free(&c.own);
  free(c.own_obs);
  free(c.own_rec);
  free(c.rec);
  free(c.bhash);
  free(c.bres);
  free(c.bused);
  free(c.bshare);
  for (int64_t a = 0; a < c.nas; a++) free(c.as[a].cfg);
  free(c.as);
  free(c.ready);
  free(c.cfg_tmp);
  free(def);
  cm_tmodel_free(c.model);
  ms_load_end(&c.guard);
  db_campaign_info_free(&info);
  json_decref(keep);
  db_close(c.d);
  return rc;
}

void tu_report_free(tu_report *r) {
  char **s[] = {&r->kernel, &r->workload, &r->target, &r->fingerprint, &r->strategy, &r->state,
                &r->end, &r->best_config, &r->default_config, &r->baseline_what, &r->pin_note,
                &r->json, &r->choice, &r->reason, &r->choice_config, &r->remeasurements,
                &r->load_why, &r->load_gpu_why};
  for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
    free(*s[i]);
    *s[i] = NULL;
  }
}
