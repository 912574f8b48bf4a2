/*
** tu_run.c -- the run loop: drives one strategy against an objective under
** a budget. It asks for proposals in batches, answers the ones it has seen
** from its own memory (free), evaluates the new ones, keeps every result
** in evaluation order, and restarts a strategy that stops producing new
** configurations. Under a time limit it predicts each candidate's cost
** from what the run has measured (tu.h invariant 12) and ends before one
** that would not fit. Replay, comparison and live campaigns all run here.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_statistics_double.h>

#include "tu.h"

/* A strategy proposing only known configurations this many times in a row
** is restarted; after TU_MAX_RESTARTS restarts the run gives up. */
#define TU_STALL 2000
#define TU_MAX_RESTARTS 200

struct tu_run {
  sp_space *sp;
  int np;
  tu_cfgmap map;          /* configurations in evaluation order */
  tu_obs *obs;            /* their results, map.n of them */
  int64_t best, proposals;
  int restarts;
  double cost, framework_s;
  tu_end end;
  /* invariant 12: per measured evaluation its compile seconds, per
  ** verified one its measuring seconds per second of its time; runc: the
  ** rest of each measured one's cost (no model: its median is the guess) */
  double *comp, *runc, *ratio, *scratch;
  int64_t ncomp, nratio, capm;
  double compile_prior, run_prior;
  tu_guide guide;
};

static const char *const end_names[] = {"budget", "time", "space exhausted", "stopped",
                                        "stalled"};
const char *tu_end_name(tu_end e) { return end_names[e]; }

static int known(void *run, const int *cfg, tu_obs *obs) {
  tu_run *r = run;
  int64_t i = tu_cfgmap_get(&r->map, cfg);
  if (i >= 0 && obs) *obs = r->obs[i];
  return i >= 0;
}

static void add(tu_run *r, const int *cfg, const tu_obs *o) {
  int64_t cap = r->map.cap, i = tu_cfgmap_put(&r->map, cfg, NULL);
  if (r->map.cap != cap) r->obs = rt_realloc(r->obs, (size_t)r->map.cap * sizeof *r->obs);
  r->obs[i] = *o;
  r->cost += o->cost;
  if (o->ok && (r->best < 0 || o->value < r->obs[r->best].value)) r->best = i;
  if (!(o->cost > 0)) return;   /* reused: it cost nothing, and says nothing of cost */
  if (r->ncomp == r->capm) {
    r->capm = r->capm ? 2 * r->capm : 64;
    r->comp = rt_realloc(r->comp, (size_t)r->capm * sizeof *r->comp);
    r->ratio = rt_realloc(r->ratio, (size_t)r->capm * sizeof *r->ratio);
    r->runc = rt_realloc(r->runc, (size_t)r->capm * sizeof *r->runc);
    r->scratch = rt_realloc(r->scratch, (size_t)r->capm * sizeof *r->scratch);
  }
  double c = o->compile_s > 0 ? fmin(o->compile_s, o->cost) : 0;
  r->runc[r->ncomp] = o->cost - c;
  r->comp[r->ncomp++] = c;
  if (o->ok && o->value > 0) r->ratio[r->nratio++] = (o->cost - c) / o->value;
}

/* The median of v[0..n-1] (n > 0), v unchanged. */
static double median_of(tu_run *r, const double *v, int64_t n) {
  memcpy(r->scratch, v, (size_t)n * sizeof *v);
  return gsl_stats_median(r->scratch, 1, (size_t)n);
}

double tu_run_cost_of(const tu_run *rc, double t) {
  tu_run *r = (tu_run *)rc;   /* the scratch only */
  double comp = r->ncomp ? median_of(r, r->comp, r->ncomp) : r->compile_prior;
  double ratio = r->nratio ? median_of(r, r->ratio, r->nratio) : r->run_prior, run = 0;
  if (!(comp >= 0)) comp = 0;
  if (t > 0 && ratio > 0) run = ratio * t;   /* the candidate's own time */
  else if (r->ncomp) run = median_of(r, r->runc, r->ncomp);   /* no model: the typical one */
  return comp + run > 0 ? comp + run : NAN;
}

static double ctx_cost(void *run, double t) { return tu_run_cost_of(run, t); }

/* Invariant 12: 1 when the predicted cost of evaluating cfg, after `out`
** seconds predicted for the evaluations in flight, would take the run past
** its time limit; *pc: that prediction (0 when there is none). */
static int over_time(tu_run *r, const tu_run_opts *o, const int *cfg, double out, double *pc) {
  *pc = 0;
  if (!(o->max_cost > 0)) return 0;
  double t = NAN;
  if (o->predict && o->predict(o->model, cfg, 1, &t)) t = NAN;
  double c = tu_run_cost_of(r, t);
  if (!(c > 0)) return 0;
  *pc = c;
  return r->cost + out + c > o->max_cost * (1 + 1e-9);   /* not by rounding alone */
}

/* Add what strategy S's state st says of its guidance to the run's. */
static void keep_guide(tu_run *r, const tu_strategy *S, void *st) {
  if (!S->guide || !st) return;
  tu_guide g = {0, 0, NULL, NAN, 0};
  S->guide(st, &g);
  r->guide.model += g.model, r->guide.fallback += g.fallback, r->guide.switches += g.switches;
  if (g.fallback_name) r->guide.fallback_name = g.fallback_name;
  if (!isnan(g.rho)) r->guide.rho = g.rho;
}

/* ---- The loop ---- */

/* The generator state for the strategy's restart number `restart`. */
static void seed_rng(gsl_rng *g, uint64_t seed, int restart) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + (uint64_t)restart * 0xd1b54a32d192ed03ull;
  x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull;
  gsl_rng_set(g, (unsigned long)(x ^ (x >> 29)));
}

/* The reason to end now, or -1 to go on; `out` evaluations are in flight
** (invariant 10: they count against the budget and the space). */
static int ending_out(const tu_run *r, const tu_run_opts *o, rt_count count, int64_t out) {
  if (o->stop && *o->stop) return TU_END_STOPPED;
  if ((rt_count)(r->map.n + out) >= count) return TU_END_SPACE;
  if (o->max_evals > 0 && r->map.n + out >= o->max_evals) return TU_END_BUDGET;
  if (o->max_cost > 0 && r->cost >= o->max_cost) return TU_END_COST;
  return -1;
}
static int ending(const tu_run *r, const tu_run_opts *o, rt_count count) {
  return ending_out(r, o, count, 0);
}

/* ---- The asynchronous loop (tu.h invariant 10) ---- */

/* Configurations in flight, and proposals of them made again meanwhile
** (observed when the first one's result comes). */
typedef struct flight {
  tu_cfgmap map;        /* every configuration submitted, dense index */
  int *times;           /* per index: proposals waiting for its result (0: done) */
  double *pred;         /* per index: its predicted cost (invariant 12), 0: none */
  double pred_out;      /* the predicted cost of those in flight */
  int out;              /* evaluations in flight */
  int full;             /* the next would pass the time limit: submit no more */
} flight;

/* Run strategy st asynchronously until an end; 0, or -1 (err set). *end,
** *stall and the restart of the strategy as in the synchronous loop. */
static int run_async(tu_run *r, const tu_objective *obj, const tu_run_opts *o, const tu_strategy *S,
                     void **stp, tu_ctx *ctx, gsl_rng *rng, rt_count count, int *end, double *in_eval,
                     rt_err *err) {
  flight f = {0};
  tu_cfgmap_init(&f.map, r->np);
  int *c = rt_malloc((size_t)(r->np ? r->np : 1) * sizeof *c), rc = 0, stall = 0;
  for (;;) {
    /* fill the free slots */
    while (rc == 0 && !f.full && f.out < o->parallel && (*end = ending_out(r, o, count, f.out)) < 0) {
      int k = S->propose(*stp, c, 1);
      if (k <= 0 && f.out > 0) break;   /* nothing until results come */
      r->proposals += k > 0;
      tu_obs ob;
      int restart = k <= 0;
      if (!restart && !sp_valid(r->sp, c, NULL)) {
        char *j = sp_config_json(r->sp, c);
        rt_err_set(err, "strategy '%s' proposed an invalid configuration %s", S->name, j);
        free(j);
        rc = -1;
        break;
      }
      int64_t fi = restart ? -1 : tu_cfgmap_get(&f.map, c);
      if (!restart && fi >= 0 && f.times[fi] > 0) {   /* in flight: observed with it */
        f.times[fi]++;
        restart = ++stall >= TU_STALL;
      } else if (!restart && known(r, c, &ob)) {
        S->observe(*stp, c, &ob);
        restart = ++stall >= TU_STALL;
      } else if (!restart) {
        double pc;
        if (over_time(r, o, c, f.pred_out, &pc)) {   /* invariant 12, with those in flight */
          f.full = 1;
          break;
        }
        double t1 = rt_now();
        int added;
        int64_t cap = f.map.cap;
        fi = tu_cfgmap_put(&f.map, c, &added);
        if (f.map.cap != cap) {
          f.times = rt_realloc(f.times, (size_t)f.map.cap * sizeof *f.times);
          f.pred = rt_realloc(f.pred, (size_t)f.map.cap * sizeof *f.pred);
        }
        f.times[fi] = 1;
        f.pred[fi] = pc;
        if (o->submit(obj->ctx, c, err)) rc = -1;
        else f.out++, f.pred_out += pc;
        *in_eval += rt_now() - t1;
        stall = 0;
      }
      if (restart) {   /* as the synchronous loop, once nothing is out */
        if (f.out > 0) break;
        if (++r->restarts > TU_MAX_RESTARTS) {
          *end = TU_END_STALLED;
          break;
        }
        keep_guide(r, S, *stp);
        S->destroy(*stp);
        stall = 0;
        seed_rng(rng, o->seed, r->restarts);
        if (!(*stp = S->create(ctx, err))) rc = -1;
      }
    }
    if (f.out == 0 || rc) break;
    /* the next result, whichever finishes first */
    tu_obs ob;
    double t1 = rt_now();
    int bad = o->collect(obj->ctx, c, &ob, err);
    *in_eval += rt_now() - t1;
    if (bad) {
      rc = -1;
      break;
    }
    f.out--;
    int64_t fi = tu_cfgmap_get(&f.map, c);
    if (fi < 0 || f.times[fi] <= 0) {
      rt_err_set(err, "the objective returned a configuration that was not in flight");
      rc = -1;
      break;
    }
    f.pred_out = f.out > 0 ? fmax(0, f.pred_out - f.pred[fi]) : 0;
    add(r, c, &ob);
    if (o->on_eval) o->on_eval(o->on_eval_ctx, r);
    for (; f.times[fi] > 0; f.times[fi]--) S->observe(*stp, c, &ob);
  }
  /* ended or failed with evaluations out: wait for each, add none (an
  ** objective may refuse each one, e.g. a stopped campaign's: invariant 1
  ** of tu_campaign.c; one with nothing in flight fails at once) */
  for (; f.out > 0; f.out--) {
    tu_obs ob;
    rt_err e2 = {0};
    o->collect(obj->ctx, c, &ob, &e2);
  }
  if (*end < 0 && !rc) *end = f.full ? TU_END_COST : ending(r, o, count);
  free(c);
  free(f.times);
  free(f.pred);
  tu_cfgmap_free(&f.map);
  return rc;
}

tu_run *tu_run_strategy(sp_space *sp, const tu_objective *obj, const tu_run_opts *o,
                        tu_run **partial, rt_err *err) {
  const tu_strategy *S = o->strategy;
  if (partial) *partial = NULL;
  if (S->needs_model && !o->predict) {
    rt_err_set(err, "strategy '%s' needs a cost model, and this run has none", S->name);
    return NULL;
  }
  tu_run *r = rt_calloc(1, sizeof *r);
  r->sp = sp;
  r->np = sp_nparams(sp);
  r->best = -1;
  r->compile_prior = o->compile_prior, r->run_prior = o->run_prior;
  r->guide.rho = NAN;
  tu_cfgmap_init(&r->map, r->np);
  rt_count count = sp_count(sp);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  seed_rng(rng, o->seed, 0);
  tu_ctx ctx = {.sp = sp, .rng = rng, .budget = o->max_evals > 0 ? o->max_evals : -1,
                .known = known, .run = r, .predict = o->predict,
                .refit = o->refit, .model = o->model, .parallel = o->parallel > 1 ? o->parallel : 1,
                .sigma = o->sigma, .cost = o->max_cost > 0 ? ctx_cost : NULL};
  int async = o->parallel > 1 && S->async && o->submit && o->collect;
  int batch = o->batch > 0 ? o->batch : 16, failed = 0, end = -1, stall = 0;
  int *buf = rt_malloc((size_t)batch * r->np * sizeof *buf);
  double t0 = rt_now(), in_eval = 0;
  void *st = S->create(&ctx, err);
  if (!st) failed = 1;
  /* The configurations to evaluate first (tu.h invariant 5): counted like
  ** any evaluation, and told to the strategy as results it did not propose. */
  for (int i = 0; !failed && i < o->nfirst && (end = ending(r, o, count)) < 0; i++) {
    const int *c = o->first + (size_t)i * r->np;
    tu_obs ob;
    if (!sp_valid(sp, c, NULL)) {
      char *j = sp_config_json(sp, c);
      rt_err_set(err, "the configuration to evaluate first, %s, is not valid", j);
      free(j);
      failed = 1;
      break;
    }
    if (known(r, c, &ob)) continue;
    double t1 = rt_now();
    int rc = obj->eval(obj->ctx, c, &ob, err);
    in_eval += rt_now() - t1;
    if (rc) {
      failed = 1;
      break;
    }
    add(r, c, &ob);
    if (o->on_eval) o->on_eval(o->on_eval_ctx, r);
    if (S->inform) S->inform(st, c, &ob);
  }
  if (!failed && async && (end = ending(r, o, count)) < 0)
    failed = run_async(r, obj, o, S, &st, &ctx, rng, count, &end, &in_eval, err) != 0;
  while (!async && !failed && (end = ending(r, o, count)) < 0) {
    int k = S->propose(st, buf, batch), restart = k <= 0;
    r->proposals += k > 0 ? k : 0;
    if (obj->prepare && k > 1) {   /* the new, valid proposals, in order */
      int *fresh = rt_malloc((size_t)k * r->np * sizeof *fresh), nf = 0;
      for (int i = 0; i < k; i++) {
        const int *c = buf + (size_t)i * r->np;
        tu_obs ob;
        if (sp_valid(sp, c, NULL) && !known(r, c, &ob))
          memcpy(fresh + (size_t)nf++ * r->np, c, (size_t)r->np * sizeof *c);
      }
      if (o->max_evals > 0 && nf > o->max_evals - r->map.n)   /* never past the budget */
        nf = (int)(o->max_evals - r->map.n);
      if (nf > 1) {   /* the objective's time (building), not the framework's */
        double t1 = rt_now();
        obj->prepare(obj->ctx, fresh, nf);
        in_eval += rt_now() - t1;
      }
      free(fresh);
    }
    for (int i = 0; i < k && !restart; i++) {
      const int *c = buf + (size_t)i * r->np;
      tu_obs ob;
      if ((end = ending(r, o, count)) >= 0) break;
      if (!sp_valid(sp, c, NULL)) {
        char *j = sp_config_json(sp, c);
        rt_err_set(err, "strategy '%s' proposed an invalid configuration %s", S->name, j);
        free(j);
        failed = 1;
        break;
      }
      if (known(r, c, &ob)) {
        restart = ++stall >= TU_STALL;
      } else if (over_time(r, o, c, 0, &(double){0})) {   /* invariant 12: it would not fit */
        end = TU_END_COST;
        break;
      } else {
        double t1 = rt_now();
        int rc = obj->eval(obj->ctx, c, &ob, err);
        in_eval += rt_now() - t1;
        if (rc) {
          failed = 1;
          break;
        }
        stall = 0;
        add(r, c, &ob);
        if (o->on_eval) o->on_eval(o->on_eval_ctx, r);
      }
      S->observe(st, c, &ob);
    }
    if (failed || end >= 0) break;
    if (restart) {
      if (++r->restarts > TU_MAX_RESTARTS) {
        end = TU_END_STALLED;
        break;
      }
      keep_guide(r, S, st);
      S->destroy(st);
      stall = 0;
      seed_rng(rng, o->seed, r->restarts);
      if (!(st = S->create(&ctx, err))) failed = 1;
    }
  }
  keep_guide(r, S, st);
  if (st) S->destroy(st);
  gsl_rng_free(rng);
  free(buf);
  r->framework_s = rt_now() - t0 - in_eval;
  if (!failed) {
    r->end = (tu_end)end;
    return r;
  }
  r->end = TU_END_STOPPED;
  if (partial) *partial = r;
  else tu_run_free(r);
  return NULL;
}

void tu_run_free(tu_run *r) {
  if (!r) return;
  tu_cfgmap_free(&r->map);
  free(r->obs);
  free(r->comp), free(r->runc), free(r->ratio), free(r->scratch);
  free(r);
}

int64_t tu_run_n(const tu_run *r) { return r->map.n; }
const int *tu_run_cfg(const tu_run *r, int64_t i) { return tu_cfgmap_key(&r->map, i); }
const tu_obs *tu_run_obs(const tu_run *r, int64_t i) { return &r->obs[i]; }
int64_t tu_run_best(const tu_run *r) { return r->best; }
double tu_run_cost(const tu_run *r) { return r->cost; }
double tu_run_framework_s(const tu_run *r) { return r->framework_s; }
int64_t tu_run_proposals(const tu_run *r) { return r->proposals; }
int tu_run_restarts(const tu_run *r) { return r->restarts; }
tu_end tu_run_end(const tu_run *r) { return r->end; }
tu_guide tu_run_guide(const tu_run *r) { return r->guide; }
