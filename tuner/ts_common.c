/*
** ts_common.c -- the code the search strategies (annealing, genetic, de,
** pso) share, behind the internal header ts_int.h: their common state of
** the space, finding a valid configuration the run has not evaluated
** (random samples, then a seeded permutation walk, so that small spaces are
** finished too), handing a prepared batch out through propose(), and for
** the strategies in the space of normalised value indices (de, pso) the
** rounding of a position to a valid unseen configuration and the local step
** around the best. What makes each strategy itself stays in its own file.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ts_int.h"

void ts__init(ts__base *b, const tu_ctx *ctx) {
  memset(b, 0, sizeof *b);
  b->ctx = ctx;
  int np = b->np = sp_nparams(ctx->sp);
  b->nv = rt_malloc((size_t)np * sizeof *b->nv);
  for (int p = 0; p < np; p++) b->nv[p] = sp_nvalues(ctx->sp, p);
  b->scratch = rt_malloc((size_t)np * sizeof *b->scratch);
  b->ord = rt_malloc((size_t)np * sizeof *b->ord);
}

void ts__fini(ts__base *b) {
  free(b->nv);
  free(b->scratch);
  free(b->ord);
}

int ts__taken(const ts__base *b, const int *cfg, const int *batch, int n) {
  if (b->ctx->known(b->ctx->run, cfg, NULL)) return 1;
  for (int i = 0; i < n; i++)
    if (!memcmp(batch + (size_t)i * b->np, cfg, (size_t)b->np * sizeof *cfg)) return 1;
  return 0;
}

int ts__fresh(ts__base *b, int *cfg, const int *batch, int n) {
  const tu_ctx *ctx = b->ctx;
  for (int t = 0; t < 32; t++) {
    if (sp_sample(ctx->sp, ctx->rng, 1, 0, cfg, NULL)) return 0;
    if (!ts__taken(b, cfg, batch, n)) return 1;
  }
  if (!b->perm_init) {
    b->count = sp_count(ctx->sp);
    tu_perm_init(&b->perm, b->count, ctx->rng);
    b->perm_init = 1;
  }
  while (b->perm_next < b->count) {
    if (sp_unrank(ctx->sp, tu_perm_at(&b->perm, b->perm_next++), cfg)) break;
    if (!ts__taken(b, cfg, batch, n)) return 1;
  }
  return 0;
}

int ts__emit(const ts__base *b, const int *batch, int nbatch, int *sent, int *cfgs, int max) {
  int n = 0;
  while (n < max && *sent < nbatch) {
    memcpy(cfgs + (size_t)n * b->np, batch + (size_t)*sent * b->np, (size_t)b->np * sizeof *cfgs);
    n++;
    (*sent)++;
  }
  return n;
}

double ts__time(const tu_obs *obs) {
  return obs->ok ? obs->value : INFINITY;
}

/* ---- Normalised value indices ---- */

double ts__pos(const ts__base *b, int p, int i) {
  return b->nv[p] > 1 ? (double)i / (double)(b->nv[p] - 1) : 0.5;
}

int ts__index(const ts__base *b, int p, double x) {
  long i = lround(x * (double)(b->nv[p] - 1));
  return i < 0 ? 0 : i >= b->nv[p] ? b->nv[p] - 1 : (int)i;
}

/* Squared distance between a position and a configuration. */
static double dist2(const ts__base *b, const double *x, const int *c) {
  double d = 0;
  for (int p = 0; p < b->np; p++) {
    double e = x[p] - ts__pos(b, p, c[p]);
    d += e * e;
  }
  return d;
}

/* Among cfg's valid neighbours of the given kind that are not taken (by
** the first n of batch or the run), the nearest to x into cfg (ties: the
** first in a random rotation). 0 when there is none. */
static int nearest_neighbour(ts__base *b, int *cfg, const double *x, sp_nb_kind kind,
                             const int *batch, int n) {
  int *nb = NULL, m = sp_neighbours(b->ctx->sp, cfg, kind, &nb), best = -1;
  double bd = INFINITY;
  int off = m > 0 ? (int)gsl_rng_uniform_int(b->ctx->rng, (unsigned long)m) : 0;
  for (int j = 0; j < m; j++) {
    const int *c = nb + (size_t)((j + off) % m) * b->np;
    double d = dist2(b, x, c);
    if (d < bd && !ts__taken(b, c, batch, n)) {
      bd = d;
      best = (j + off) % m;
    }
  }
  if (best >= 0) memcpy(cfg, nb + (size_t)best * b->np, (size_t)b->np * sizeof *cfg);
  free(nb);
  return best >= 0;
}

/* The rounding of u; if invalid, snapped to the nearest valid unseen
** configuration one parameter away, else merged greedily into home; if then
** taken, moved to the nearest unseen adjacent, then Hamming, neighbour;
** failing all that, a random unseen configuration. */
int ts__realise(ts__base *b, int *batch, int k, double *u, const int *home) {
  int np = b->np, *c = batch + (size_t)k * np;
  for (int p = 0; p < np; p++) c[p] = ts__index(b, p, u[p]);
  if (!sp_valid(b->ctx->sp, c, NULL) && !nearest_neighbour(b, c, u, SP_NB_HAMMING, batch, k)) {
    /* Greedy merge: from the valid home, take the trial's values one
    ** parameter at a time (random order) while validity holds. */
    int *m = b->scratch;
    memcpy(m, home, (size_t)np * sizeof *m);
    for (int p = 0; p < np; p++) b->ord[p] = p;
    for (int i = np - 1; i >= 0; i--) {
      int j = (int)gsl_rng_uniform_int(b->ctx->rng, (unsigned long)i + 1), p = b->ord[j];
      b->ord[j] = b->ord[i];
      int old = m[p];
      m[p] = c[p];
      if (!sp_valid(b->ctx->sp, m, NULL)) m[p] = old;
    }
    memcpy(c, m, (size_t)np * sizeof *c);
  }
  if (ts__taken(b, c, batch, k) && !nearest_neighbour(b, c, u, SP_NB_ADJACENT, batch, k) &&
      !nearest_neighbour(b, c, u, SP_NB_HAMMING, batch, k)) {
    if (!ts__fresh(b, c, batch, k)) return 0;
  }
  int same = 1;
  for (int p = 0; p < np; p++) same &= c[p] == ts__index(b, p, u[p]);
  if (!same)
    for (int p = 0; p < np; p++) u[p] = ts__pos(b, p, c[p]);
  return 1;
}

int ts__local_step(ts__base *b, int *batch, int k, const int *cfg, double *u) {
  int *nb = NULL, m = sp_neighbours(b->ctx->sp, cfg, SP_NB_HAMMING, &nb), found = 0;
  int off = m > 0 ? (int)gsl_rng_uniform_int(b->ctx->rng, (unsigned long)m) : 0;
  for (int j = 0; j < m && !found; j++) {
    const int *c = nb + (size_t)((j + off) % m) * b->np;
    if (ts__taken(b, c, batch, k)) continue;
    memcpy(batch + (size_t)k * b->np, c, (size_t)b->np * sizeof *c);
    for (int p = 0; p < b->np; p++) u[p] = ts__pos(b, p, c[p]);
    found = 1;
  }
  free(nb);
  return found;
}
