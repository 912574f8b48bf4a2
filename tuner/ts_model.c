/*
** ts_model.c -- model-guided search: rank candidates by the cost model's
** predicted time and measure the best predictions, the rest of each round
** handed to a model-free fallback strategy. The candidates are the whole
** space when it is small, otherwise a seeded sample refreshed every round
** with the neighbours of the best measured schedules. A candidate's rank
** is optimistic where the model is unsure: log(predicted) minus KAPPA
** times its uncertainty (ctx->sigma: the spread of the calibration's
** held-out residuals for schedules of its limiting bound), a lower
** confidence bound; under a time limit (ctx->cost) the candidates that
** promise a gain over the best so far are taken by predicted gain per
** predicted second. As results arrive the model is recalibrated on all of
** them (ctx->refit; whenever they have grown by half since the last fit)
** and the candidates are re-ranked. The rank correlation between what the
** model predicted before measuring and what was measured, over the last
** AGREE_WINDOW results, sets the fallback's share of the next round: a
** model that ranks well is exploited (MIN_FALLBACK of each round goes to
** the fallback), one that ranks badly hands more and more of each round to
** the fallback (MAX_FALLBACK of it at rho <= RHO_BAD: the model's few picks
** keep measuring whether a recalibration has mended it), and a model that
** ranks well again gets its share back. Until AGREE_MIN results have come,
** the share follows the calibration's uncertainty instead (the median
** sigma of the candidates: MIN_FALLBACK at SIG_GOOD, MAX_FALLBACK at
** SIG_BAD), so a model its calibration found unsure is not trusted with a
** whole first round. The fallback (FALLBACK: bayes) runs in a
** context of its own with a generator seeded from this one's, proposes
** after the model's picks of a round, observes its own proposals' results
** and is told (inform) every other result, so it searches from everything
** measured. tu_strategy.guide reports the proposals from each.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "ts_int.h"

#define POOL_ALL 20000     /* spaces up to this size are ranked whole */
#define POOL_SAMPLE 4096   /* otherwise: this many sampled candidates */
#define MIN_FALLBACK 0.1   /* the fallback's share of a round when the model ranks well */
#define RHO_GOOD 0.6       /* agreement at and above which the share is the minimum */
#define MAX_FALLBACK 0.8   /* its share when the model ranks badly: the model
                           ** keeps a few picks a round to show a refit works */
#define RHO_BAD 0.1        /* agreement at and below which the share is the maximum */
#define AGREE_WINDOW 32    /* recent results the agreement is measured on */
#define AGREE_MIN 8        /* results before the agreement is trusted */
#define MIN_REFIT 4        /* results before the first recalibration */
#define KAPPA 1.0          /* the lower confidence bound: sigmas below the prediction */
#define SIG_GOOD 0.3       /* before the agreement is measured: a calibration this */
#define SIG_BAD 0.6        /* sure (median sigma) gets MIN_FALLBACK, this unsure MAX */
#define GAIN_SCAN 256      /* candidates (by bound) weighed by gain per second */
#define FB_TRIES 64        /* known proposals of the fallback answered per call */
#define FALLBACK ts_bayes

typedef struct ms_ {
  ts__base b;
  tu_cfgmap pool;           /* candidates; index -> prediction */
  double *pred;             /* pool.n predictions (NAN: unknown) */
  int cap_pred;
  int sampled;              /* 1: the pool is a sample of a larger space */
  int *ok_cfg;              /* successful results: configurations, times */
  double *ok_t, *ok_pred;   /* and the prediction made before measuring */
  int nok, cap_ok, nseen_refit;
  int *batch, nbatch, sent;
  double share;             /* the fallback's share of the next round */
  double *sig;              /* pool.n uncertainties (NAN: unknown) */
  tu_ctx fctx;              /* the fallback's context: its own generator */
  void *fb;                 /* its state */
  int fb_left;              /* proposals of this round still the fallback's */
  int fb_out;               /* its proposals awaiting their results */
  int64_t n_model, n_fb;    /* proposals from the ranking, from the fallback */
  double rho;               /* the last agreement (NAN: not yet) */
  int switches;             /* times the share crossed one half */
} ms_;

static void pool_add(ms_ *s, const int *cfg) {
  int added;
  int64_t i = tu_cfgmap_put(&s->pool, cfg, &added);
  if (!added) return;
  if (i >= s->cap_pred) {
    s->cap_pred = s->cap_pred ? 2 * s->cap_pred : 1024;
    s->pred = rt_realloc(s->pred, (size_t)s->cap_pred * sizeof *s->pred);
    s->sig = rt_realloc(s->sig, (size_t)s->cap_pred * sizeof *s->sig);
  }
  s->pred[i] = s->sig[i] = NAN;
}

/* Predict every candidate whose prediction is unknown (all when all),
** in runs of consecutive pool entries (the pool's keys are contiguous). */
static void predict_pool(ms_ *s, int all) {
  const tu_ctx *ctx = s->b.ctx;
  for (int64_t i = 0; i < s->pool.n;) {
    if (!all && !isnan(s->pred[i])) { i++; continue; }
    int64_t j = i;
    while (j < s->pool.n && j - i < 512 && (all || isnan(s->pred[j]))) j++;
    const int *keys = tu_cfgmap_key(&s->pool, i);
    if (ctx->predict(ctx->model, keys, (int)(j - i), s->pred + i))
      for (int64_t k = i; k < j; k++) s->pred[k] = NAN;
    if (!ctx->sigma || ctx->sigma(ctx->model, keys, (int)(j - i), s->sig + i))
      for (int64_t k = i; k < j; k++) s->sig[k] = NAN;
    i = j;
  }
}

/* (Re)start the fallback with a fresh generator seeded from ours, told
** every result so far. 0, or -1 with err. */
static int fb_start(ms_ *s, rt_err *err) {
  if (s->fb) FALLBACK.destroy(s->fb);
  gsl_rng_set(s->fctx.rng, gsl_rng_get(s->b.ctx->rng));
  s->fb_out = 0;
  if (!(s->fb = FALLBACK.create(&s->fctx, err))) return -1;
  tu_obs o = {.ok = 1};
  for (int i = 0; FALLBACK.inform && i < s->nok; i++) {
    o.value = s->ok_t[i];
    FALLBACK.inform(s->fb, s->ok_cfg + (size_t)i * s->b.np, &o);
  }
  return 0;
}

static void mg_destroy(void *st);
static void prior_share(ms_ *s);

static void *mg_create(const tu_ctx *ctx, rt_err *err) {
  ms_ *s = rt_calloc(1, sizeof *s);
  ts__init(&s->b, ctx);
  tu_cfgmap_init(&s->pool, s->b.np);
  s->share = MIN_FALLBACK;
  s->rho = NAN;
  s->fctx = *ctx;
  s->fctx.rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (fb_start(s, err)) {
    mg_destroy(s);
    return NULL;
  }
  int *cfg = rt_malloc((size_t)s->b.np * sizeof *cfg);
  rt_count count = sp_count(ctx->sp);
  if (count <= POOL_ALL) {
    for (rt_count r = 0; r < count; r++)
      if (!sp_unrank(ctx->sp, r, cfg)) pool_add(s, cfg);
  } else {
    s->sampled = 1;
    int *smp = rt_malloc((size_t)POOL_SAMPLE * s->b.np * sizeof *smp);
    if (sp_sample(ctx->sp, ctx->rng, POOL_SAMPLE, 1, smp, err)) {
      free(smp), free(cfg);
      mg_destroy(s);
      return NULL;
    }
    for (int i = 0; i < POOL_SAMPLE; i++) pool_add(s, smp + (size_t)i * s->b.np);
    free(smp);
  }
  free(cfg);
  predict_pool(s, 1);
  prior_share(s);
  return s;
}

/* The fallback's share before the agreement can be measured, from the
** calibration's uncertainty: the median sigma of the candidates, at or
** below SIG_GOOD the minimum, rising linearly to MAX_FALLBACK at SIG_BAD
** (unknown: the minimum). */
static void prior_share(ms_ *s) {
  double *u = rt_malloc((size_t)(s->pool.n ? s->pool.n : 1) * sizeof *u);
  size_t m = 0;
  for (int64_t i = 0; i < s->pool.n; i++)
    if (isfinite(s->sig[i])) u[m++] = s->sig[i];
  double med = m ? gsl_stats_median(u, 1, m) : NAN, f = MIN_FALLBACK;
  free(u);
  if (isfinite(med))
    f = fmin(MAX_FALLBACK, fmax(MIN_FALLBACK, MIN_FALLBACK + (med - SIG_GOOD) / (SIG_BAD - SIG_GOOD) *
                                                              (MAX_FALLBACK - MIN_FALLBACK)));
  s->share = f;
}

/* Grow the pool of a sampled space: neighbours of the best few results
** and fresh samples, so the ranking can move past the first sample. */
static void refresh_pool(ms_ *s) {
  const tu_ctx *ctx = s->b.ctx;
  int np = s->b.np;
  int order[4], nbest = 0;
  for (int i = 0; i < s->nok; i++) {    /* the 4 best results, in order */
    int k = nbest < 4 ? nbest++ : 4;
    if (k == 4 && s->ok_t[i] >= s->ok_t[order[3]]) continue;
    if (k == 4) k = 3;
    while (k > 0 && s->ok_t[order[k - 1]] > s->ok_t[i]) order[k] = order[k - 1], k--;
    order[k] = i;
  }
  for (int b = 0; b < nbest; b++) {
    int *nb = NULL;
    int n = sp_neighbours(ctx->sp, s->ok_cfg + (size_t)order[b] * np, SP_NB_HAMMING, &nb);
    for (int i = 0; i < n; i++) pool_add(s, nb + (size_t)i * np);
    free(nb);
  }
  int *cfg = rt_malloc((size_t)np * sizeof *cfg);
  for (int i = 0; i < POOL_SAMPLE / 8; i++)
    if (ts__fresh(&s->b, cfg, NULL, 0)) pool_add(s, cfg);
  free(cfg);
}

/* The agreement of the model with the measurements: Spearman rho of the
** predictions made before measuring against the times, over the last
** AGREE_WINDOW results; sets the fallback's share of the next round
** (MIN_FALLBACK at rho >= RHO_GOOD, rising linearly to MAX_FALLBACK at
** RHO_BAD); switches counts its crossings of one half. */
static void update_share(ms_ *s) {
  int n = s->nok < AGREE_WINDOW ? s->nok : AGREE_WINDOW, m = 0;
  if (n < AGREE_MIN) return;
  double *x = rt_malloc(4 * (size_t)n * sizeof *x), *y = x + n, *work = y + n;  /* work: 2n */
  for (int i = s->nok - n; i < s->nok; i++)
    if (isfinite(s->ok_pred[i])) x[m] = s->ok_pred[i], y[m] = s->ok_t[i], m++;
  double rho = m >= AGREE_MIN ? gsl_stats_spearman(x, 1, y, 1, (size_t)m, work) : 0;
  free(x);
  if (!isfinite(rho)) rho = 0;
  s->rho = rho;
  double f = MIN_FALLBACK + (RHO_GOOD - rho) / (RHO_GOOD - RHO_BAD) * (MAX_FALLBACK - MIN_FALLBACK);
  f = fmin(MAX_FALLBACK, fmax(MIN_FALLBACK, f));
  s->switches += (f > 0.5) != (s->share > 0.5);
  s->share = f;
}

/* The lower confidence bound of pool entry i in log seconds (INFINITY:
** no prediction). */
static double bound_of(const ms_ *s, int64_t i) {
  double p = s->pred[i], u = s->sig[i];
  if (!(p > 0)) return INFINITY;
  return log(p) - (u > 0 ? KAPPA * u : 0);
}

typedef struct { double key; int64_t i; } ranked;

static int cmp_ranked(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->i > y->i) - (x->i < y->i);
}

/* Prepare the next round of max proposals: the model's picks into the
** batch, and the fallback's share (fb_left) to be asked for after them. */
static void plan(ms_ *s, int max) {
  const tu_ctx *ctx = s->b.ctx;
  int np = s->b.np;
  /* Recalibrate whenever the results have grown by half since the last
  ** fit: early results change the model most, and a fit costs in
  ** proportion to the results it is fitted to. */
  if (ctx->refit && s->nok >= MIN_REFIT && 2 * s->nok >= 3 * s->nseen_refit) {
    if (!ctx->refit(ctx->model, s->ok_cfg, s->ok_t, s->nok)) predict_pool(s, 1);
    s->nseen_refit = s->nok;
  }
  if (s->sampled && s->nok > 0) {
    refresh_pool(s);
    predict_pool(s, 0);
  }
  update_share(s);
  s->batch = rt_realloc(s->batch, (size_t)max * np * sizeof *s->batch);
  s->nbatch = s->sent = 0;
  int nfb = (int)floor(s->share * max + 0.5);
  if (nfb < 1 && s->nok + max > AGREE_MIN) nfb = max > 1 ? 1 : 0;
  s->fb_left = nfb;
  /* the model's picks: the best bounds not yet measured */
  ranked *rk = rt_malloc((size_t)(s->pool.n ? s->pool.n : 1) * sizeof *rk);
  int64_t nr = 0;
  for (int64_t i = 0; i < s->pool.n; i++)
    if (!isnan(s->pred[i])) rk[nr++] = (ranked){bound_of(s, i), i};
  qsort(rk, (size_t)nr, sizeof *rk, cmp_ranked);
  double best = INFINITY;
  for (int i = 0; i < s->nok; i++) best = fmin(best, s->ok_t[i]);
  if (ctx->cost && best < INFINITY) {
    /* a time limit: of the first GAIN_SCAN untaken by bound, those that
    ** promise a gain go first, by gain (log) per predicted second */
    ranked *g = rt_malloc((size_t)GAIN_SCAN * sizeof *g);
    int ng = 0;
    for (int64_t k = 0; k < nr && ng < GAIN_SCAN; k++) {
      const int *c = tu_cfgmap_key(&s->pool, rk[k].i);
      if (ts__taken(&s->b, c, NULL, 0)) continue;
      double gain = log(best) - rk[k].key, sec = ctx->cost(ctx->run, s->pred[rk[k].i]);
      if (gain > 0 && sec > 0) g[ng++] = (ranked){-gain / sec, rk[k].i};
    }
    qsort(g, (size_t)ng, sizeof *g, cmp_ranked);
    for (int k = 0; k < ng && s->nbatch < max - nfb; k++)
      memcpy(s->batch + (size_t)s->nbatch++ * np, tu_cfgmap_key(&s->pool, g[k].i),
             (size_t)np * sizeof(int));
    free(g);
  }
  for (int64_t k = 0; k < nr && s->nbatch < max - nfb; k++) {
    const int *c = tu_cfgmap_key(&s->pool, rk[k].i);
    if (ts__taken(&s->b, c, s->batch, s->nbatch)) continue;
    memcpy(s->batch + (size_t)s->nbatch++ * np, c, (size_t)np * sizeof *c);
  }
  free(rk);
  s->fb_left = max - s->nbatch;   /* what the ranking could not fill too */
}

/* Up to max of the fallback's proposals of this round into cfgs. A known
** configuration it proposes alone is answered to it at once; when it has
** nothing (exhausted: restarted) or only known ones, a fresh random
** configuration instead (model-free, told to the fallback). */
static int fb_propose(ms_ *s, int *cfgs, int max) {
  const tu_ctx *ctx = s->b.ctx;
  int want = s->fb_left < max ? s->fb_left : max;
  for (int t = 0; t < FB_TRIES; t++) {
    int k = FALLBACK.propose(s->fb, cfgs, want);
    if (k < 1) {
      if (fb_start(s, NULL)) break;
      continue;
    }
    tu_obs o;
    if (k == 1 && ctx->known(ctx->run, cfgs, &o)) {
      FALLBACK.observe(s->fb, cfgs, &o);
      continue;
    }
    s->fb_out += k, s->fb_left -= k, s->n_fb += k;
    return k;
  }
  if (!ts__fresh(&s->b, cfgs, NULL, 0)) return 0;
  s->fb_left--, s->n_fb++;
  return 1;
}

static int mg_propose(void *st, int *cfgs, int max) {
  ms_ *s = st;
  for (int round = 0; round < 2; round++) {
    if (s->sent < s->nbatch) {
      int k = ts__emit(&s->b, s->batch, s->nbatch, &s->sent, cfgs, max);
      s->n_model += k;
      return k;
    }
    if (s->fb_left > 0) {
      int k = fb_propose(s, cfgs, max);
      if (k > 0) return k;
    }
    plan(s, max);
  }
  return 0;
}

/* A result: the fallback's own (it observes it) or another's (it is told);
** a successful one measured on a quiet machine is kept with the
** prediction made before it (a time measured under load teaches the model
** nothing). */
static void note(ms_ *s, const int *cfg, const tu_obs *obs, int own) {
  if (own) FALLBACK.observe(s->fb, cfg, obs);
  else if (FALLBACK.inform) FALLBACK.inform(s->fb, cfg, obs);
  if (!obs->ok || obs->loaded) return;
  int np = s->b.np;
  if (s->nok == s->cap_ok) {
    s->cap_ok = s->cap_ok ? 2 * s->cap_ok : 64;
    s->ok_cfg = rt_realloc(s->ok_cfg, (size_t)s->cap_ok * np * sizeof *s->ok_cfg);
    s->ok_t = rt_realloc(s->ok_t, (size_t)s->cap_ok * sizeof *s->ok_t);
    s->ok_pred = rt_realloc(s->ok_pred, (size_t)s->cap_ok * sizeof *s->ok_pred);
  }
  memcpy(s->ok_cfg + (size_t)s->nok * np, cfg, (size_t)np * sizeof *cfg);
  s->ok_t[s->nok] = obs->value;
  int64_t i = tu_cfgmap_get(&s->pool, cfg);
  if (i < 0) {   /* the fallback's, outside a sampled pool: predicted now */
    pool_add(s, cfg);
    i = tu_cfgmap_get(&s->pool, cfg);
    const tu_ctx *ctx = s->b.ctx;
    if (ctx->predict(ctx->model, cfg, 1, &s->pred[i])) s->pred[i] = NAN;
    if (!ctx->sigma || ctx->sigma(ctx->model, cfg, 1, &s->sig[i])) s->sig[i] = NAN;
  }
  s->ok_pred[s->nok] = s->pred[i];
  s->nok++;
}

static void mg_observe(void *st, const int *cfg, const tu_obs *obs) {
  ms_ *s = st;
  int own = s->fb_out > 0;   /* the fallback proposes after the model's picks */
  if (own) s->fb_out--;
  note(s, cfg, obs, own);
}

static void mg_inform(void *st, const int *cfg, const tu_obs *obs) { note(st, cfg, obs, 0); }

static void mg_guide(void *st, tu_guide *g) {
  const ms_ *s = st;
  g->model += s->n_model, g->fallback += s->n_fb, g->switches += s->switches;
  g->fallback_name = FALLBACK.name;
  if (!isnan(s->rho)) g->rho = s->rho;
}

static void mg_destroy(void *st) {
  ms_ *s = st;
  if (s->fb) FALLBACK.destroy(s->fb);
  if (s->fctx.rng) gsl_rng_free(s->fctx.rng);
  ts__fini(&s->b);
  tu_cfgmap_free(&s->pool);
  free(s->pred), free(s->sig), free(s->ok_cfg), free(s->ok_t), free(s->ok_pred), free(s->batch);
  free(s);
}

const tu_strategy ts_model = {
  .name = "model",
  .summary = "cost-model guided: measure the best predictions (optimistic where unsure), recalibrate, "
             "fall back on bayes while the model ranks the results badly",
  .needs_model = 1,
  .create = mg_create,
  .propose = mg_propose,
  .observe = mg_observe,
  .destroy = mg_destroy,
  .inform = mg_inform,   /* a result it did not propose counts the same */
  .guide = mg_guide,
};
