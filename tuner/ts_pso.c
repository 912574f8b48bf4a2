/*
** ts_pso.c -- particle swarm optimisation in the space of normalised value
** indices (parameter p's value index i sits at i / (nvalues - 1) in
** [0, 1]). Each particle has a position and a velocity; every iteration all
** particles move (inertia plus pulls towards their own best and the
** swarm's best, the inertia falling over the budget), each position is
** rounded to the nearest value indices, and the swarm's configurations are
** proposed as one batch. A position that breaks a condition is snapped to
** the nearest valid configuration one parameter away, else merged greedily
** into the particle's best; one the run has already evaluated moves to an
** unseen neighbour; failing all that, a random unseen configuration takes
** its place (the particle jumps there; ts__realise). Failed configurations
** rank last. Tuned for budgets of a few hundred: PS_LOCAL particles per
** iteration instead jump to an unseen configuration one parameter away from
** the swarm's best (a memetic local step).
*/
#include <stdlib.h>
#include <string.h>

#include "ts_int.h"

#define PS_LOCAL 4        /* trials per generation that step around the best */
#define PS_N 10            /* particles */
#define PS_W0 0.7          /* inertia at the start ... */
#define PS_W1 0.3          /* ... and at the end of the budget */
#define PS_C1 1.4          /* pull towards the particle's best */
#define PS_C2 1.4          /* pull towards the swarm's best */
#define PS_VMAX 0.4        /* largest step per coordinate */
#define PS_HORIZON 1000    /* inertia horizon when the budget is unknown */

typedef struct ps {
  ts__base b;
  int n;                   /* particles placed so far */
  double *x, *v, *bx;      /* positions, velocities, best positions */
  int *tc, *bc;            /* current and best configurations */
  double *bf;              /* best times, INFINITY when failed */
  int gbest;               /* the particle holding the swarm's best */
  int ntrial, sent, got;   /* positions realised, proposed, observed */
  int init;                /* 1 while the swarm is being placed */
  int64_t evals;
} ps;

static void *ps_create(const tu_ctx *ctx, rt_err *err) {
  (void)err;
  ps *s = rt_calloc(1, sizeof *s);
  ts__init(&s->b, ctx);
  int np = s->b.np;
  s->x = rt_malloc((size_t)PS_N * np * sizeof *s->x);
  s->v = rt_malloc((size_t)PS_N * np * sizeof *s->v);
  s->bx = rt_malloc((size_t)PS_N * np * sizeof *s->bx);
  s->tc = rt_malloc((size_t)PS_N * np * sizeof *s->tc);
  s->bc = rt_malloc((size_t)PS_N * np * sizeof *s->bc);
  s->bf = rt_malloc((size_t)PS_N * sizeof *s->bf);
  return s;
}

static void ps_destroy(void *st) {
  ps *s = st;
  ts__fini(&s->b);
  free(s->x);
  free(s->v);
  free(s->bx);
  free(s->tc);
  free(s->bc);
  free(s->bf);
  free(s);
}

/* Place the swarm (random unseen configurations, small random velocities)
** or move every particle once; their configurations go to s->tc. */
static void build(ps *s) {
  const tu_ctx *ctx = s->b.ctx;
  int np = s->b.np;
  s->ntrial = s->sent = s->got = 0;
  s->init = s->n < PS_N;
  if (s->init) {
    for (int k = s->n; k < PS_N; k++) {
      int *c = s->tc + (size_t)s->ntrial * np;
      if (!ts__fresh(&s->b, c, s->tc, s->ntrial)) break;
      for (int p = 0; p < np; p++) {
        s->x[(size_t)k * np + p] = ts__pos(&s->b, p, c[p]);
        s->v[(size_t)k * np + p] = PS_VMAX * (gsl_rng_uniform(ctx->rng) - 0.5);
      }
      s->ntrial++;
    }
    return;
  }
  double frac = (double)s->evals / (ctx->budget > 0 ? (double)ctx->budget : PS_HORIZON);
  double w = PS_W0 + (PS_W1 - PS_W0) * (frac < 1 ? frac : 1);
  const double *g = s->bx + (size_t)s->gbest * np;
  int lk = (int)gsl_rng_uniform_int(ctx->rng, PS_N);
  for (int k = 0; k < PS_N; k++) {
    double *x = s->x + (size_t)k * np, *v = s->v + (size_t)k * np;
    const double *b = s->bx + (size_t)k * np;
    for (int p = 0; p < np; p++) {
      double r1 = gsl_rng_uniform(ctx->rng), r2 = gsl_rng_uniform(ctx->rng);
      double vp = w * v[p] + PS_C1 * r1 * (b[p] - x[p]) + PS_C2 * r2 * (g[p] - x[p]);
      vp = vp > PS_VMAX ? PS_VMAX : vp < -PS_VMAX ? -PS_VMAX : vp;
      double xp = x[p] + vp;
      if (xp < 0 || xp > 1) {   /* stop at the wall */
        xp = xp < 0 ? 0 : 1;
        vp = 0;
      }
      x[p] = xp;
      v[p] = vp;
    }
    int local = k != s->gbest && (k - lk + PS_N) % PS_N < PS_LOCAL;
    if (!(local && ts__local_step(&s->b, s->tc, k, s->bc + (size_t)s->gbest * np, x)) &&
        !ts__realise(&s->b, s->tc, k, x, s->bc + (size_t)k * np))
      break;
    s->ntrial++;
  }
}

static int ps_propose(void *st, int *cfgs, int max) {
  ps *s = st;
  if (s->got == s->ntrial) build(s);
  return ts__emit(&s->b, s->tc, s->ntrial, &s->sent, cfgs, max);
}

static void ps_observe(void *st, const int *cfg, const tu_obs *obs) {
  ps *s = st;
  int np = s->b.np;
  (void)cfg;
  if (s->got >= s->sent) return;
  int t = s->got++, k = s->init ? s->n++ : t;
  double f = ts__time(obs);
  s->evals++;
  if (s->init || f <= s->bf[k]) {
    memcpy(s->bx + (size_t)k * np, s->x + (size_t)k * np, (size_t)np * sizeof *s->bx);
    memcpy(s->bc + (size_t)k * np, s->tc + (size_t)t * np, (size_t)np * sizeof *s->bc);
    s->bf[k] = f;
  }
  if (k == 0 || f < s->bf[s->gbest]) s->gbest = k;
}

/* Another's result: replaces the worst personal best when it is faster
** (and becomes the swarm's best when it beats that). Positions and
** velocities stay, so the particles' pending moves still map to them. */
static void ps_inform(void *st, const int *cfg, const tu_obs *obs) {
  ps *s = st;
  int np = s->b.np, w = -1;
  double f = ts__time(obs);
  for (int k = 0; k < s->n; k++)
    if (w < 0 || s->bf[k] > s->bf[w]) w = k;
  if (w < 0 || !(f < s->bf[w])) return;
  for (int p = 0; p < np; p++) s->bx[(size_t)w * np + p] = ts__pos(&s->b, p, cfg[p]);
  memcpy(s->bc + (size_t)w * np, cfg, (size_t)np * sizeof *cfg);
  s->bf[w] = f;
  if (f < s->bf[s->gbest]) s->gbest = w;
}

const tu_strategy ts_pso = {
  .name = "pso",
  .summary = "particle swarm optimisation on normalised value indices",
  .needs_model = 0,
  .create = ps_create,
  .propose = ps_propose,
  .observe = ps_observe,
  .destroy = ps_destroy,
  .inform = ps_inform,
};
