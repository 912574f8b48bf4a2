/*
** ts_de.c -- differential evolution in the space of normalised value
** indices: parameter p's value index i sits at i / (nvalues - 1) in [0, 1].
** Each generation builds one trial vector per member (current-to-best/1
** mutation with binomial crossover), rounds it to the nearest value
** indices, and proposes the generation as one batch; a trial replaces its
** member when it is at least as fast. A trial that breaks a condition is
** snapped to the nearest valid configuration one parameter away, else
** merged greedily into its (valid) member; one that the run has already
** evaluated moves to an unseen neighbour; failing all that, a random unseen
** configuration takes its place. Failed configurations rank last. Tuned
** for budgets of a few hundred: DE_LOCAL members per generation instead
** try an unseen configuration one parameter away from the best (a memetic
** local step; on the T4 recordings it lifts pnpoly from ~0 to ~0.5).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tu.h"

#define DE_LOCAL 4        /* trials per generation that step around the best */
#define DE_POP 10          /* population */
#define DE_F 0.6           /* differential weight */
#define DE_CR 0.3          /* crossover rate */

typedef struct de {
  const tu_ctx *ctx;
  int np;
  int *nv;                 /* values per parameter */
  int n;                   /* members so far */
  double *x, *u;           /* members' and trials' positions (DE_POP * np) */
  int *c, *tc;             /* their configurations */
  double *f, *tf;          /* their times, INFINITY when failed */
  int ntrial, sent, got;   /* trials built, proposed, observed */
  int init;                /* 1 while the population is being drawn */
  int *scratch, *ord;      /* work arrays (np) */
  tu_perm perm;            /* fallback source of unknown configurations */
  rt_count perm_next, count;
  int perm_init;
} de;

/* 1 if cfg was evaluated in the run or is among the first n trials. */
static int taken(const de *s, const int *cfg, int n) {
  if (s->ctx->known(s->ctx->run, cfg, NULL)) return 1;
  for (int i = 0; i < n; i++)
    if (!memcmp(s->tc + (size_t)i * s->np, cfg, (size_t)s->np * sizeof *cfg)) return 1;
  return 0;
}

/* A valid configuration not taken into cfg: random tries, then the next
** such rank of a seeded permutation. 0: none is left. */
static int fresh(de *s, int *cfg, int n) {
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
static double pos_of(const de *s, int p, int i) {
  return s->nv[p] > 1 ? (double)i / (double)(s->nv[p] - 1) : 0.5;
}
static int index_of(const de *s, int p, double x) {
  long i = lround(x * (double)(s->nv[p] - 1));
  return i < 0 ? 0 : i >= s->nv[p] ? s->nv[p] - 1 : (int)i;
}

/* Squared distance between a position and a configuration. */
static double dist2(const de *s, const double *x, const int *c) {
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
static int nearest_neighbour(de *s, int *cfg, const double *x, sp_nb_kind kind, int n) {
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
static int realise(de *s, int k, double *u, const int *home) {
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
static int local_step(de *s, int k, const int *cfg, double *u) {
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

static void *de_create(const tu_ctx *ctx, rt_err *err) {
  (void)err;
  de *s = rt_calloc(1, sizeof *s);
  s->ctx = ctx;
  int np = s->np = sp_nparams(ctx->sp);
  s->nv = rt_malloc((size_t)np * sizeof *s->nv);
  for (int p = 0; p < np; p++) s->nv[p] = sp_nvalues(ctx->sp, p);
  s->x = rt_malloc((size_t)DE_POP * np * sizeof *s->x);
  s->u = rt_malloc((size_t)DE_POP * np * sizeof *s->u);
  s->c = rt_malloc((size_t)DE_POP * np * sizeof *s->c);
  s->tc = rt_malloc((size_t)DE_POP * np * sizeof *s->tc);
  s->f = rt_malloc((size_t)DE_POP * sizeof *s->f);
  s->tf = rt_malloc((size_t)DE_POP * sizeof *s->tf);
  s->scratch = rt_malloc((size_t)np * sizeof *s->scratch);
  s->ord = rt_malloc((size_t)np * sizeof *s->ord);
  return s;
}

static void de_destroy(void *st) {
  de *s = st;
  free(s->nv);
  free(s->x);
  free(s->u);
  free(s->c);
  free(s->tc);
  free(s->f);
  free(s->tf);
  free(s->scratch);
  free(s->ord);
  free(s);
}

/* Build the next batch of trials: the initial random population, or one
** trial per member. */
static void build(de *s) {
  const gsl_rng *rng = s->ctx->rng;
  int np = s->np;
  s->ntrial = s->sent = s->got = 0;
  if (s->n < DE_POP) {
    s->init = 1;
    for (int k = 0; k < DE_POP - s->n; k++) {
      int *c = s->tc + (size_t)k * np;
      if (!fresh(s, c, k)) break;
      for (int p = 0; p < np; p++) s->u[(size_t)k * np + p] = pos_of(s, p, c[p]);
      s->ntrial++;
    }
    return;
  }
  s->init = 0;
  int best = 0;
  for (int i = 1; i < DE_POP; i++)
    if (s->f[i] < s->f[best]) best = i;
  int lk = (int)gsl_rng_uniform_int(rng, DE_POP);
  for (int k = 0; k < DE_POP; k++) {
    int r1, r2;
    do r1 = (int)gsl_rng_uniform_int(rng, DE_POP); while (r1 == k);
    do r2 = (int)gsl_rng_uniform_int(rng, DE_POP); while (r2 == k || r2 == r1);
    const double *xk = s->x + (size_t)k * np, *xb = s->x + (size_t)best * np,
                 *x1 = s->x + (size_t)r1 * np, *x2 = s->x + (size_t)r2 * np;
    double *u = s->u + (size_t)k * np;
    int jr = (int)gsl_rng_uniform_int(rng, (unsigned long)np);
    for (int p = 0; p < np; p++) {
      if (p == jr || gsl_rng_uniform(rng) < DE_CR) {
        double v = xk[p] + DE_F * (xb[p] - xk[p]) + DE_F * (x1[p] - x2[p]);
        /* Bounce back inside [0, 1] between the member and the wall. */
        if (v < 0) v = xk[p] * gsl_rng_uniform(rng);
        if (v > 1) v = xk[p] + (1 - xk[p]) * gsl_rng_uniform(rng);
        u[p] = v;
      } else {
        u[p] = xk[p];
      }
    }
    int local = k != best && (k - lk + DE_POP) % DE_POP < DE_LOCAL;
    if (!(local && local_step(s, k, s->c + (size_t)best * np, u)) &&
        !realise(s, k, u, s->c + (size_t)k * np))
      break;
    s->ntrial++;
  }
}

static int de_propose(void *st, int *cfgs, int max) {
  de *s = st;
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

static void de_observe(void *st, const int *cfg, const tu_obs *obs) {
  de *s = st;
  int np = s->np;
  (void)cfg;
  if (s->got >= s->sent) return;
  int k = s->got++;
  double f = obs->ok ? obs->value : INFINITY;
  int i = s->init ? s->n++ : k;
  if (s->init || f <= s->f[i]) {
    memcpy(s->x + (size_t)i * np, s->u + (size_t)k * np, (size_t)np * sizeof *s->x);
    memcpy(s->c + (size_t)i * np, s->tc + (size_t)k * np, (size_t)np * sizeof *s->c);
    s->f[i] = f;
  }
}

const tu_strategy ts_de = {
  "de",
  "differential evolution (current-to-best/1/bin) on normalised value indices", 0,
  de_create, de_propose, de_observe, de_destroy,
};
