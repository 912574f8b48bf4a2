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
** its place (the particle jumps there). Failed configurations rank last.
** Tuned for budgets of a few hundred: PS_LOCAL particles per iteration
** instead jump to an unseen configuration one parameter away from the
** swarm's best (a memetic local step).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tu.h"

#define PS_LOCAL 4        /* trials per generation that step around the best */
#define PS_N 10            /* particles */
#define PS_W0 0.7          /* inertia at the start ... */
#define PS_W1 0.3          /* ... and at the end of the budget */
#define PS_C1 1.4          /* pull towards the particle's best */
#define PS_C2 1.4          /* pull towards the swarm's best */
#define PS_VMAX 0.4        /* largest step per coordinate */
#define PS_HORIZON 1000    /* inertia horizon when the budget is unknown */

typedef struct ps {
  const tu_ctx *ctx;
  int np;
  int *nv;                 /* values per parameter */
  int n;                   /* particles placed so far */
  double *x, *v, *bx;      /* positions, velocities, best positions */
  int *tc, *bc;            /* current and best configurations */
  double *bf;              /* best times, INFINITY when failed */
  int gbest;               /* the particle holding the swarm's best */
  int ntrial, sent, got;   /* positions realised, proposed, observed */
  int init;                /* 1 while the swarm is being placed */
  int64_t evals;
  int *scratch, *ord;      /* work arrays (np) */
  tu_perm perm;            /* fallback source of unknown configurations */
  rt_count perm_next, count;
  int perm_init;
} ps;

/* 1 if cfg was evaluated in the run or is among the first n trials. */
static int taken(const ps *s, const int *cfg, int n) {
  if (s->ctx->known(s->ctx->run, cfg, NULL)) return 1;
  for (int i = 0; i < n; i++)
    if (!memcmp(s->tc + (size_t)i * s->np, cfg, (size_t)s->np * sizeof *cfg)) return 1;
  return 0;
}

/* A valid configuration not taken into cfg: random tries, then the next
** such rank of a seeded permutation. 0: none is left. */
static int fresh(ps *s, int *cfg, int n) {
  const tu_ctx *ctx = s->ctx;
  for (int t = 0; t < 32; t++) {
    if (sp_sample(ctx->sp, ctx->rng, 1, 0, cfg, NULL)) return 0;
    if (!taken(s, cfg, n)) return 1;
  }
  if (!s->perm_init) {
    s->count = sp_count(ctx->sp);
    tu_perm_init(&s->perm, s->count, ctx->rng);
    s->perm_init = 1;
  }
  while (s->perm_next < s->count) {
    if (sp_unrank(ctx->sp, tu_perm_at(&s->perm, s->perm_next++), cfg)) break;
    if (!taken(s, cfg, n)) return 1;
  }
  return 0;
}

/* Position <-> value index. */
static double pos_of(const ps *s, int p, int i) {
  return s->nv[p] > 1 ? (double)i / (double)(s->nv[p] - 1) : 0.5;
}
static int index_of(const ps *s, int p, double x) {
  long i = lround(x * (double)(s->nv[p] - 1));
  return i < 0 ? 0 : i >= s->nv[p] ? s->nv[p] - 1 : (int)i;
}

/* Squared distance between a position and a configuration. */
static double dist2(const ps *s, const double *x, const int *c) {
  double d = 0;
  for (int p = 0; p < s->np; p++) {
    double e = x[p] - pos_of(s, p, c[p]);
    d += e * e;
  }
  return d;
}

/* Among cfg's valid neighbours of the given kind that are not taken (by
** the first n trials or the run), the nearest to x into cfg (ties: the
** first in a random rotation). 0 when there is none. */
static int nearest_neighbour(ps *s, int *cfg, const double *x, sp_nb_kind kind, int n) {
  int *nb = NULL, m = sp_neighbours(s->ctx->sp, cfg, kind, &nb), best = -1;
  double bd = INFINITY;
  int off = m > 0 ? (int)gsl_rng_uniform_int(s->ctx->rng, (unsigned long)m) : 0;
  for (int j = 0; j < m; j++) {
    const int *c = nb + (size_t)((j + off) % m) * s->np;
    double d = dist2(s, x, c);
    if (d < bd && !taken(s, c, n)) {
      bd = d;
      best = (j + off) % m;
    }
  }
  if (best >= 0) memcpy(cfg, nb + (size_t)best * s->np, (size_t)s->np * sizeof *cfg);
  free(nb);
  return best >= 0;
}

/* Trial k: the configuration nearest to position u (its rounding, snapped
** or merged into valid, moved off configurations already taken) into
** s->tc; u follows when the configuration is not its rounding. 0 when the
** space has nothing unseen left. */
static int realise(ps *s, int k, double *u, const int *home) {
  int np = s->np, *c = s->tc + (size_t)k * np;
  for (int p = 0; p < np; p++) c[p] = index_of(s, p, u[p]);
  if (!sp_valid(s->ctx->sp, c, NULL) && !nearest_neighbour(s, c, u, SP_NB_HAMMING, k)) {
    /* Greedy merge: from the valid home, take the trial's values one
    ** parameter at a time (random order) while validity holds. */
    int *m = s->scratch;
    memcpy(m, home, (size_t)np * sizeof *m);
    for (int p = 0; p < np; p++) s->ord[p] = p;
    for (int i = np - 1; i >= 0; i--) {
      int j = (int)gsl_rng_uniform_int(s->ctx->rng, (unsigned long)i + 1), p = s->ord[j];
      s->ord[j] = s->ord[i];
      int old = m[p];
      m[p] = c[p];
      if (!sp_valid(s->ctx->sp, m, NULL)) m[p] = old;
    }
    memcpy(c, m, (size_t)np * sizeof *c);
  }
  if (taken(s, c, k) && !nearest_neighbour(s, c, u, SP_NB_ADJACENT, k) &&
      !nearest_neighbour(s, c, u, SP_NB_HAMMING, k)) {
    if (!fresh(s, c, k)) return 0;
  }
  int same = 1;
  for (int p = 0; p < np; p++) same &= c[p] == index_of(s, p, u[p]);
  if (!same)
    for (int p = 0; p < np; p++) u[p] = pos_of(s, p, c[p]);
  return 1;
}

/* Trial k := a random unseen valid configuration one parameter away from
** cfg (a local step around the best), with its position. 0 if none. */
static int local_step(ps *s, int k, const int *cfg, double *u) {
  int *nb = NULL, m = sp_neighbours(s->ctx->sp, cfg, SP_NB_HAMMING, &nb), found = 0;
  int off = m > 0 ? (int)gsl_rng_uniform_int(s->ctx->rng, (unsigned long)m) : 0;
  for (int j = 0; j < m && !found; j++) {
    const int *c = nb + (size_t)((j + off) % m) * s->np;
    if (taken(s, c, k)) continue;
    memcpy(s->tc + (size_t)k * s->np, c, (size_t)s->np * sizeof *c);
    for (int p = 0; p < s->np; p++) u[p] = pos_of(s, p, c[p]);
    found = 1;
  }
  free(nb);
  return found;
}

static void *ps_create(const tu_ctx *ctx, rt_err *err) {
  (void)err;
  ps *s = rt_calloc(1, sizeof *s);
  s->ctx = ctx;
  int np = s->np = sp_nparams(ctx->sp);
  s->nv = rt_malloc((size_t)np * sizeof *s->nv);
  for (int p = 0; p < np; p++) s->nv[p] = sp_nvalues(ctx->sp, p);
  s->x = rt_malloc((size_t)PS_N * np * sizeof *s->x);
  s->v = rt_malloc((size_t)PS_N * np * sizeof *s->v);
  s->bx = rt_malloc((size_t)PS_N * np * sizeof *s->bx);
  s->tc = rt_malloc((size_t)PS_N * np * sizeof *s->tc);
  s->bc = rt_malloc((size_t)PS_N * np * sizeof *s->bc);
  s->bf = rt_malloc((size_t)PS_N * sizeof *s->bf);
  s->scratch = rt_malloc((size_t)np * sizeof *s->scratch);
  s->ord = rt_malloc((size_t)np * sizeof *s->ord);
  return s;
}

static void ps_destroy(void *st) {
  ps *s = st;
  free(s->nv);
  free(s->x);
  free(s->v);
  free(s->bx);
  free(s->tc);
  free(s->bc);
  free(s->bf);
  free(s->scratch);
  free(s->ord);
  free(s);
}

/* Place the swarm (random unseen configurations, small random velocities)
** or move every particle once; their configurations go to s->tc. */
static void build(ps *s) {
  const tu_ctx *ctx = s->ctx;
  int np = s->np;
  s->ntrial = s->sent = s->got = 0;
  s->init = s->n < PS_N;
  if (s->init) {
    for (int k = s->n; k < PS_N; k++) {
      int *c = s->tc + (size_t)s->ntrial * np;
      if (!fresh(s, c, s->ntrial)) break;
      for (int p = 0; p < np; p++) {
        s->x[(size_t)k * np + p] = pos_of(s, p, c[p]);
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
    if (!(local && local_step(s, k, s->bc + (size_t)s->gbest * np, x)) &&
        !realise(s, k, x, s->bc + (size_t)k * np))
      break;
    s->ntrial++;
  }
}

static int ps_propose(void *st, int *cfgs, int max) {
  ps *s = st;
  if (s->got == s->ntrial) build(s);
  int n = 0;
  while (n < max && s->sent < s->ntrial) {
    memcpy(cfgs + (size_t)n * s->np, s->tc + (size_t)s->sent * s->np,
           (size_t)s->np * sizeof *cfgs);
    n++;
    s->sent++;
  }
  return n;
}

static void ps_observe(void *st, const int *cfg, const tu_obs *obs) {
  ps *s = st;
  int np = s->np;
  (void)cfg;
  if (s->got >= s->sent) return;
  int t = s->got++, k = s->init ? s->n++ : t;
  double f = obs->ok ? obs->value : INFINITY;
  s->evals++;
  if (s->init || f <= s->bf[k]) {
    memcpy(s->bx + (size_t)k * np, s->x + (size_t)k * np, (size_t)np * sizeof *s->bx);
    memcpy(s->bc + (size_t)k * np, s->tc + (size_t)t * np, (size_t)np * sizeof *s->bc);
    s->bf[k] = f;
  }
  if (k == 0 || f < s->bf[s->gbest]) s->gbest = k;
}

const tu_strategy ts_pso = {
  "pso",
  "particle swarm optimisation on normalised value indices", 0,
  ps_create, ps_propose, ps_observe, ps_destroy,
};
