/*
** ts_bandit.c -- an ensemble of other strategies (its arms) that hands
** each trial to one of them, chosen by OpenTuner's AUC bandit
** meta-technique: an arm's credit is the area under the curve of "this
** arm's proposal improved the global best" over a sliding window of the
** last BD_WINDOW trials (recent successes weigh more), plus an exploration
** term C * sqrt(2 log2(N) / n_arm). Each arm runs in its own sub-context
** (a copy of the run's with its own generator, seeded from the bandit's),
** observes the results of its own proposals, is told (inform, when it
** supports it) every new result the other arms' proposals produce, and is
** restarted with a fresh generator when it has nothing more to propose.
** Proposals an arm makes of configurations the run already knows are
** answered to the arm at once, scored as no improvement, and not passed
** on. The arms are annealing and bayes: on the four T4 recordings (5%
** budget, 200 seeds) this pair with sharing scores 0.45/0.57/0.66/0.83
** (conv A100, conv A4000, dedisp, pnpoly) where annealing, genetic and de
** scored 0.37/0.42/0.64/0.50 without sharing and 0.39/0.51/0.69/0.58 with
** it; bayes alone is the better arm on the convolutions, annealing on
** dedispersion, and the pair keeps close to the better of the two.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tu.h"

#define BD_WINDOW 500      /* trials the credit remembers (OpenTuner: 500) */
#define BD_C 0.05          /* exploration weight (OpenTuner: 0.05) */
#define BD_MAX_ARMS 8
#define BD_TRIES 64        /* known proposals answered per propose call */

/* The arms, named directly rather than looked up in the strategy table
** (which lists the bandit: no circle); ones that need a model the run
** lacks are skipped. */
static const tu_strategy *const bd_arm_list[] = {&ts_annealing, &ts_bayes};

typedef struct bd_arm {
  const tu_strategy *s;
  tu_ctx ctx;              /* the run's context with the arm's own generator */
  void *st;
  int uses;                /* trials in the window */
  int hits;                /* improving trials in the window */
  double auc;              /* sum over improving trials of their position */
} bd_arm;

typedef struct bandit {
  const tu_ctx *ctx;
  int narm;
  bd_arm arm[BD_MAX_ARMS];
  int hist_arm[BD_WINDOW];  /* ring buffer of the window, oldest at head */
  unsigned char hist_val[BD_WINDOW];
  int head, len;
  int pending;              /* the arm whose proposals await their results */
  int npending;             /* how many (several: a batch, tu.h invariant 10) */
  int have_best;
  double best;
} bandit;

/* ---- The AUC credit (OpenTuner's AUCBanditQueue, O(1) per trial) ---- */

/* Record one trial of arm a; value 1 when it improved the global best. */
static void bd_push(bandit *b, int a, int value) {
  if (b->len == BD_WINDOW) {   /* the oldest trial leaves: positions shift */
    int o = b->hist_arm[b->head];
    bd_arm *r = &b->arm[o];
    r->auc -= r->hits;
    if (b->hist_val[b->head]) r->hits--;
    r->uses--;
    b->head = (b->head + 1) % BD_WINDOW;
    b->len--;
  }
  int t = (b->head + b->len) % BD_WINDOW;
  b->hist_arm[t] = a;
  b->hist_val[t] = (unsigned char)(value != 0);
  b->len++;
  bd_arm *r = &b->arm[a];
  r->uses++;
  if (value) {
    r->auc += r->uses;
    r->hits++;
  }
}

/* The AUC credit of arm a in [0, 1]: improving trials weighted by their
** position among the arm's trials in the window, normalised. */
static double bd_exploit(const bandit *b, int a) {
  const bd_arm *r = &b->arm[a];
  return r->uses ? r->auc * 2.0 / (r->uses * (r->uses + 1.0)) : 0.0;
}

/* The bandit score of arm a; infinite for an arm not tried in the window. */
static double bd_score(const bandit *b, int a) {
  const bd_arm *r = &b->arm[a];
  if (!r->uses) return INFINITY;
  return bd_exploit(b, a) + BD_C * sqrt(2.0 * log2((double)b->len) / r->uses);
}

/* The arm to ask next: the best score, ties broken at random. */
static int bd_pick(const bandit *b) {
  int best = -1, nties = 0;
  double bs = -INFINITY;
  for (int a = 0; a < b->narm; a++) {
    double s = bd_score(b, a);
    if (s > bs) {
      bs = s;
      best = a;
      nties = 1;
    } else if (s == bs && gsl_rng_uniform_int(b->ctx->rng, (unsigned long)++nties) == 0) {
      best = a;   /* reservoir choice among equals */
    }
  }
  return best;
}

/* ---- Arms ---- */

/* (Re)start arm a with a fresh generator seeded from the bandit's. */
static int bd_start(bandit *b, int a, rt_err *err) {
  bd_arm *r = &b->arm[a];
  if (r->st) r->s->destroy(r->st);
  gsl_rng_set(r->ctx.rng, gsl_rng_get(b->ctx->rng));
  r->st = r->s->create(&r->ctx, err);
  return r->st ? 0 : -1;
}

static void bd_destroy(void *st) {
  bandit *b = st;
  if (!b) return;
  for (int a = 0; a < b->narm; a++) {
    if (b->arm[a].st) b->arm[a].s->destroy(b->arm[a].st);
    gsl_rng_free(b->arm[a].ctx.rng);
  }
  free(b);
}

/* A bandit over the given arms (strategies that need no model). NULL with
** err when none of them can start. */
static void *bd_new(const tu_ctx *ctx, const tu_strategy *const *arms, int narm, rt_err *err) {
  bandit *b = rt_calloc(1, sizeof *b);
  b->ctx = ctx;
  b->pending = -1;
  for (int i = 0; i < narm && b->narm < BD_MAX_ARMS; i++) {
    if (!arms[i] || (arms[i]->needs_model && !ctx->predict)) continue;
    bd_arm *r = &b->arm[b->narm];
    r->s = arms[i];
    r->ctx = *ctx;
    r->ctx.rng = gsl_rng_alloc(gsl_rng_mt19937);
    b->narm++;
    if (bd_start(b, b->narm - 1, err)) {   /* skip an arm that cannot start */
      gsl_rng_free(r->ctx.rng);
      memset(r, 0, sizeof *r);
      b->narm--;
    }
  }
  if (!b->narm) {
    rt_err_set(err, "bandit: none of its arms could start");
    bd_destroy(b);
    return NULL;
  }
  return b;
}

static void *bd_create(const tu_ctx *ctx, rt_err *err) {
  const tu_strategy *arms[BD_MAX_ARMS];
  int n = 0;
  for (size_t i = 0; i < sizeof bd_arm_list / sizeof *bd_arm_list && n < BD_MAX_ARMS; i++)
    arms[n++] = bd_arm_list[i];
  return bd_new(ctx, arms, n, err);
}

static int bd_propose(void *st, int *cfgs, int max) {
  bandit *b = st;
  if (max < 1) return 0;
  for (int t = 0; t < BD_TRIES; t++) {
    int a = bd_pick(b);
    bd_arm *r = &b->arm[a];
    /* several evaluations at once: a batch of the arm's (bayes: constant liar) */
    int want = max < b->ctx->parallel ? max : b->ctx->parallel;
    int k = r->s->propose(r->st, cfgs, want > 1 ? want : 1);
    if (k < 1) {   /* exhausted: no credit, restart */
      bd_push(b, a, 0);
      if (bd_start(b, a, NULL)) return 0;
      continue;
    }
    tu_obs o;
    if (k == 1 && t + 1 < BD_TRIES && b->ctx->known(b->ctx->run, cfgs, &o)) {
      r->s->observe(r->st, cfgs, &o);
      bd_push(b, a, 0);
      continue;
    }
    b->pending = a;
    b->npending = k;
    return k;
  }
  return 0;
}

static void bd_observe(void *st, const int *cfg, const tu_obs *obs) {
  bandit *b = st;
  int a = b->pending;
  if (a < 0) return;
  if (--b->npending <= 0) b->pending = -1;
  b->arm[a].s->observe(b->arm[a].st, cfg, obs);
  /* The others learn from it. Each is idle: the bandit hands out one
  ** proposal at a time, and a's was the only one out. */
  for (int o = 0; o < b->narm; o++)
    if (o != a && b->arm[o].s->inform) b->arm[o].s->inform(b->arm[o].st, cfg, obs);
  int better = obs->ok && (!b->have_best || obs->value < b->best);
  if (better) {
    b->have_best = 1;
    b->best = obs->value;
  }
  bd_push(b, a, better);
}

/* A result no arm proposed (a campaign's default, evaluated first): every
** arm that can learn from it is told; it raises the bar for improvements
** but credits no arm. */
static void bd_inform(void *st, const int *cfg, const tu_obs *obs) {
  bandit *b = st;
  for (int o = 0; o < b->narm; o++)
    if (b->arm[o].s->inform) b->arm[o].s->inform(b->arm[o].st, cfg, obs);
  if (obs->ok && (!b->have_best || obs->value < b->best)) {
    b->have_best = 1;
    b->best = obs->value;
  }
}

const tu_strategy ts_bandit = {
  .name = "bandit",
  .summary = "AUC bandit over annealing and bayes, sharing results (OpenTuner's meta-technique)",
  .needs_model = 0,
  .create = bd_create,
  .propose = bd_propose,
  .observe = bd_observe,
  .destroy = bd_destroy,
  .inform = bd_inform,
};
