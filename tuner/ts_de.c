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
** configuration takes its place (ts__realise). Failed configurations rank
** last. Tuned for budgets of a few hundred: DE_LOCAL members per generation
** instead try an unseen configuration one parameter away from the best (a
** memetic local step; on the T4 recordings it lifts pnpoly from ~0 to ~0.5).
*/
#include <stdlib.h>
#include <string.h>

#include "ts_int.h"

#define DE_LOCAL 4        /* trials per generation that step around the best */
#define DE_POP 10          /* population */
#define DE_F 0.6           /* differential weight */
#define DE_CR 0.3          /* crossover rate */

typedef struct de {
  ts__base b;
  int n;                   /* members so far */
  double *x, *u;           /* members' and trials' positions (DE_POP * np) */
  int *c, *tc;             /* their configurations */
  double *f;               /* members' times, INFINITY when failed */
  int ntrial, sent, got;   /* trials built, proposed, observed */
  int init;                /* 1 while the population is being drawn */
} de;

static void *de_create(const tu_ctx *ctx, rt_err *err) {
  (void)err;
  de *s = rt_calloc(1, sizeof *s);
  ts__init(&s->b, ctx);
  int np = s->b.np;
  s->x = rt_malloc((size_t)DE_POP * np * sizeof *s->x);
  s->u = rt_malloc((size_t)DE_POP * np * sizeof *s->u);
  s->c = rt_malloc((size_t)DE_POP * np * sizeof *s->c);
  s->tc = rt_malloc((size_t)DE_POP * np * sizeof *s->tc);
  s->f = rt_malloc((size_t)DE_POP * sizeof *s->f);
  return s;
}

static void de_destroy(void *st) {
  de *s = st;
  ts__fini(&s->b);
  free(s->x);
  free(s->u);
  free(s->c);
  free(s->tc);
  free(s->f);
  free(s);
}

/* Build the next batch of trials: the initial random population, or one
** trial per member. */
static void build(de *s) {
  const gsl_rng *rng = s->b.ctx->rng;
  int np = s->b.np;
  s->ntrial = s->sent = s->got = 0;
  if (s->n < DE_POP) {
    s->init = 1;
    for (int k = 0; k < DE_POP - s->n; k++) {
      int *c = s->tc + (size_t)k * np;
      if (!ts__fresh(&s->b, c, s->tc, k)) break;
      for (int p = 0; p < np; p++) s->u[(size_t)k * np + p] = ts__pos(&s->b, p, c[p]);
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
    if (!(local && ts__local_step(&s->b, s->tc, k, s->c + (size_t)best * np, u)) &&
        !ts__realise(&s->b, s->tc, k, u, s->c + (size_t)k * np))
      break;
    s->ntrial++;
  }
}

static int de_propose(void *st, int *cfgs, int max) {
  de *s = st;
  if (s->got == s->ntrial) build(s);
  return ts__emit(&s->b, s->tc, s->ntrial, &s->sent, cfgs, max);
}

static void de_observe(void *st, const int *cfg, const tu_obs *obs) {
  de *s = st;
  int np = s->b.np;
  (void)cfg;
  if (s->got >= s->sent) return;
  int k = s->got++;
  double f = ts__time(obs);
  int i = s->init ? s->n++ : k;
  if (s->init || f <= s->f[i]) {
    memcpy(s->x + (size_t)i * np, s->u + (size_t)k * np, (size_t)np * sizeof *s->x);
    memcpy(s->c + (size_t)i * np, s->tc + (size_t)k * np, (size_t)np * sizeof *s->c);
    s->f[i] = f;
  }
}

/* Another's result: replaces the slowest member when it is faster (its
** position: cfg's value indices). Members are replaced in place, so the
** trials of the generation being proposed still map to their members. */
static void de_inform(void *st, const int *cfg, const tu_obs *obs) {
  de *s = st;
  int np = s->b.np, w = -1;
  double f = ts__time(obs);
  for (int i = 0; i < s->n; i++)
    if (w < 0 || s->f[i] > s->f[w]) w = i;
  if (w < 0 || !(f < s->f[w])) return;
  for (int p = 0; p < np; p++) s->x[(size_t)w * np + p] = ts__pos(&s->b, p, cfg[p]);
  memcpy(s->c + (size_t)w * np, cfg, (size_t)np * sizeof *cfg);
  s->f[w] = f;
}

const tu_strategy ts_de = {
  .name = "de",
  .summary = "differential evolution (current-to-best/1/bin) on normalised value indices",
  .needs_model = 0,
  .create = de_create,
  .propose = de_propose,
  .observe = de_observe,
  .destroy = de_destroy,
  .inform = de_inform,
};
