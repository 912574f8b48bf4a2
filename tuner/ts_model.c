/*
** ts_model.c -- model-guided search: rank candidates by the cost model's
** predicted time and measure the best predictions, a share of each batch
** spent on exploration. The candidates are the whole space when it is
** small, otherwise a seeded sample refreshed every round with the
** neighbours of the best measured schedules. As results arrive the model
** is recalibrated on all of them (ctx->refit; whenever they have grown by
** half since the last fit) and the candidates are re-ranked; the rank correlation between what the model predicted before
** measuring and what was measured sets the exploration share: a model
** that ranks well is exploited, one that disagrees with the measurements
** is trusted less and less (up to MAX_EXPLORE of each batch at random).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

#include "ts_int.h"

#define POOL_ALL 20000     /* spaces up to this size are ranked whole */
#define POOL_SAMPLE 4096   /* otherwise: this many sampled candidates */
#define MIN_EXPLORE 0.1
#define MAX_EXPLORE 0.8
#define AGREE_WINDOW 48    /* recent results the agreement is measured on */
#define MIN_REFIT 4        /* results before the first recalibration */

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
  double explore;           /* share of the next batch spent at random */
} ms_;

static void pool_add(ms_ *s, const int *cfg) {
  int added;
  int64_t i = tu_cfgmap_put(&s->pool, cfg, &added);
  if (!added) return;
  if (i >= s->cap_pred) {
    s->cap_pred = s->cap_pred ? 2 * s->cap_pred : 1024;
    s->pred = rt_realloc(s->pred, (size_t)s->cap_pred * sizeof *s->pred);
  }
  s->pred[i] = NAN;
}

/* Predict every candidate whose prediction is unknown (all when all),
** in runs of consecutive pool entries (the pool's keys are contiguous). */
static void predict_pool(ms_ *s, int all) {
  const tu_ctx *ctx = s->b.ctx;
  for (int64_t i = 0; i < s->pool.n;) {
    if (!all && !isnan(s->pred[i])) { i++; continue; }
    int64_t j = i;
    while (j < s->pool.n && j - i < 512 && (all || isnan(s->pred[j]))) j++;
    if (ctx->predict(ctx->model, tu_cfgmap_key(&s->pool, i), (int)(j - i), s->pred + i))
      for (int64_t k = i; k < j; k++) s->pred[k] = NAN;
    i = j;
  }
}

static void *mg_create(const tu_ctx *ctx, rt_err *err) {
  ms_ *s = rt_calloc(1, sizeof *s);
  ts__init(&s->b, ctx);
  tu_cfgmap_init(&s->pool, s->b.np);
  s->explore = MIN_EXPLORE;
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
      ts__fini(&s->b), tu_cfgmap_free(&s->pool), free(s);
      return NULL;
    }
    for (int i = 0; i < POOL_SAMPLE; i++) pool_add(s, smp + (size_t)i * s->b.np);
    free(smp);
  }
  free(cfg);
  predict_pool(s, 1);
  return s;
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
** predictions made before measuring against the times, over the recent
** results; sets the exploration share. */
static void update_explore(ms_ *s) {
  int n = s->nok < AGREE_WINDOW ? s->nok : AGREE_WINDOW, m = 0;
  if (n < 8) return;
  double *x = rt_malloc(4 * (size_t)n * sizeof *x), *y = x + n, *work = y + n;  /* work: 2n */
  for (int i = s->nok - n; i < s->nok; i++)
    if (isfinite(s->ok_pred[i])) x[m] = s->ok_pred[i], y[m] = s->ok_t[i], m++;
  double rho = m >= 8 ? gsl_stats_spearman(x, 1, y, 1, (size_t)m, work) : 0;
  free(x);
  if (!isfinite(rho)) rho = 0;
  /* rho >= 0.6: the minimum; falling linearly to the maximum at rho = -1 */
  double e = MIN_EXPLORE + (0.6 - rho) / 1.6 * (MAX_EXPLORE - MIN_EXPLORE);
  s->explore = fmin(MAX_EXPLORE, fmax(MIN_EXPLORE, e));
}

static int cmp_pred(const void *a, const void *b, void *arg) {
  const double *p = arg;
  int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
  double x = isnan(p[i]) ? INFINITY : p[i], y = isnan(p[j]) ? INFINITY : p[j];
  return x < y ? -1 : x > y ? 1 : (i > j) - (i < j);
}

/* Prepare the next batch of max configurations. */
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
  update_explore(s);
  s->batch = rt_realloc(s->batch, (size_t)max * np * sizeof *s->batch);
  s->nbatch = s->sent = 0;
  int nexp = (int)floor(s->explore * max + 0.5);
  if (nexp < 1 && s->nok + max > 8) nexp = max > 1 ? 1 : 0;
  /* exploitation: the best predictions not yet measured */
  int64_t *idx = rt_malloc((size_t)s->pool.n * sizeof *idx);
  for (int64_t i = 0; i < s->pool.n; i++) idx[i] = i;
  qsort_r(idx, (size_t)s->pool.n, sizeof *idx, cmp_pred, s->pred);
  for (int64_t i = 0; i < s->pool.n && s->nbatch < max - nexp; i++) {
    const int *c = tu_cfgmap_key(&s->pool, idx[i]);
    if (isnan(s->pred[idx[i]]) || ts__taken(&s->b, c, s->batch, s->nbatch)) continue;
    memcpy(s->batch + (size_t)s->nbatch++ * np, c, (size_t)np * sizeof *c);
  }
  free(idx);
  /* exploration: fresh random configurations */
  while (s->nbatch < max &&
         ts__fresh(&s->b, s->batch + (size_t)s->nbatch * np, s->batch, s->nbatch))
    pool_add(s, s->batch + (size_t)s->nbatch++ * np);
  predict_pool(s, 0);   /* explored ones too: they measure the agreement */
}

static int mg_propose(void *st, int *cfgs, int max) {
  ms_ *s = st;
  if (s->sent >= s->nbatch) plan(s, max);
  return ts__emit(&s->b, s->batch, s->nbatch, &s->sent, cfgs, max);
}

static void mg_observe(void *st, const int *cfg, const tu_obs *obs) {
  ms_ *s = st;
  if (!obs->ok || obs->loaded) return;   /* a time measured under load teaches nothing */
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
  s->ok_pred[s->nok] = i >= 0 ? s->pred[i] : NAN;
  s->nok++;
}

static void mg_destroy(void *st) {
  ms_ *s = st;
  ts__fini(&s->b);
  tu_cfgmap_free(&s->pool);
  free(s->pred), free(s->ok_cfg), free(s->ok_t), free(s->ok_pred), free(s->batch);
  free(s);
}

const tu_strategy ts_model = {
  .name = "model",
  .summary = "cost-model guided: measure the best predictions, recalibrate, explore when the model disagrees",
  .needs_model = 1,
  .create = mg_create,
  .propose = mg_propose,
  .observe = mg_observe,
  .destroy = mg_destroy,
  .inform = mg_observe,   /* a result it did not propose counts the same */
};
