/*
** ts_genetic.c -- a steady (mu + lambda) genetic algorithm on value
** indices. A generation of children is bred from the population by
** tournament selection, uniform crossover of the parents' value indices and
** per-gene mutation (one position along the value list or a uniformly
** random value), and proposed as one batch; the next population is the best
** of parents and children. A child that breaks a condition is repaired to a
** random valid configuration one parameter away, one the run has already
** evaluated (or a sibling) is mutated again, and after a few failed tries
** it is replaced by a random unseen configuration; so only valid, new
** configurations are proposed. Failed configurations rank last.
*/
#include <stdlib.h>
#include <string.h>

#include "ts_int.h"

#define GA_POP 10          /* population (mu) */
#define GA_CHILDREN 8     /* children per generation (lambda) */
#define GA_TOURNAMENT 3    /* tournament size */
#define GA_P_CROSS 0.9     /* chance a child is a crossover (else a copy) */
#define GA_P_ADJ 0.5       /* chance a mutation moves by one position */
#define GA_TRIES 16        /* tries at a valid unseen child before a random one */

typedef struct ga {
  ts__base b;
  int nvar;                /* parameters with more than one value */
  int npop;                /* members of the population so far */
  int *pop;                /* GA_POP + GA_CHILDREN configurations */
  double *f;               /* their times, INFINITY when failed */
  int *kids;               /* the generation being evaluated */
  double *kf;
  int nkids, sent, got;    /* bred, proposed, observed */
} ga;

static void *ga_create(const tu_ctx *ctx, rt_err *err) {
  (void)err;
  ga *s = rt_calloc(1, sizeof *s);
  ts__init(&s->b, ctx);
  int np = s->b.np;
  for (int p = 0; p < np; p++) s->nvar += s->b.nv[p] > 1;
  s->pop = rt_malloc((size_t)(GA_POP + GA_CHILDREN) * np * sizeof *s->pop);
  s->f = rt_malloc((size_t)(GA_POP + GA_CHILDREN) * sizeof *s->f);
  s->kids = rt_malloc((size_t)(GA_POP + GA_CHILDREN) * np * sizeof *s->kids);
  s->kf = rt_malloc((size_t)(GA_POP + GA_CHILDREN) * sizeof *s->kf);
  return s;
}

static void ga_destroy(void *st) {
  ga *s = st;
  ts__fini(&s->b);
  free(s->pop);
  free(s->f);
  free(s->kids);
  free(s->kf);
  free(s);
}

/* The index of the winner of a tournament (lowest time; ties: first drawn). */
static int tournament(ga *s) {
  int w = (int)gsl_rng_uniform_int(s->b.ctx->rng, (unsigned long)s->npop);
  for (int t = 1; t < GA_TOURNAMENT; t++) {
    int c = (int)gsl_rng_uniform_int(s->b.ctx->rng, (unsigned long)s->npop);
    if (s->f[c] < s->f[w]) w = c;
  }
  return w;
}

/* Change one random gene of c (one with more than one value). */
static void mutate_one(ga *s, int *c) {
  const gsl_rng *rng = s->b.ctx->rng;
  int k = (int)gsl_rng_uniform_int(rng, (unsigned long)s->nvar), p = 0;
  for (;; p++)
    if (s->b.nv[p] > 1 && k-- == 0) break;
  int nv = s->b.nv[p];
  if (gsl_rng_uniform(rng) < GA_P_ADJ) {
    int d = gsl_rng_uniform(rng) < 0.5 ? -1 : 1;
    if (c[p] + d < 0 || c[p] + d >= nv) d = -d;
    c[p] += d;
  } else {
    int v = (int)gsl_rng_uniform_int(rng, (unsigned long)nv - 1);
    c[p] = v >= c[p] ? v + 1 : v;
  }
}

/* Make c valid: c itself, else a random valid configuration one parameter
** away from it. 0 when none is. */
static int repair(ga *s, int *c) {
  if (sp_valid(s->b.ctx->sp, c, NULL)) return 1;
  int *nb = NULL, n = sp_neighbours(s->b.ctx->sp, c, SP_NB_HAMMING, &nb);
  if (n > 0) {
    int i = (int)gsl_rng_uniform_int(s->b.ctx->rng, (unsigned long)n);
    memcpy(c, nb + (size_t)i * s->b.np, (size_t)s->b.np * sizeof *c);
  }
  free(nb);
  return n > 0;
}

/* Child number k of the generation into s->kids, unlike the run's
** configurations and its k elder siblings; 0 when the space has no unseen
** configuration left. */
static int breed(ga *s, int k) {
  const gsl_rng *rng = s->b.ctx->rng;
  int np = s->b.np, *c = s->kids + (size_t)k * np;
  if (s->nvar == 0 || s->npop < 2) return ts__fresh(&s->b, c, s->kids, k);
  for (int t = 0; t < GA_TRIES; t++) {
    const int *a = s->pop + (size_t)tournament(s) * np, *b = s->pop + (size_t)tournament(s) * np;
    int cross = gsl_rng_uniform(rng) < GA_P_CROSS;
    for (int p = 0; p < np; p++) c[p] = cross && gsl_rng_uniform(rng) < 0.5 ? b[p] : a[p];
    /* Mutation: each varying gene with chance 1/nvar, and at least one
    ** change when the child copies a parent. */
    int m = 0;
    for (int p = 0; p < s->nvar; p++) m += gsl_rng_uniform(rng) * s->nvar < 1;
    if (!m && (!memcmp(c, a, (size_t)np * sizeof *c) || !memcmp(c, b, (size_t)np * sizeof *c)))
      m = 1;
    while (m-- > 0) mutate_one(s, c);
    for (int r = 0; r < 4; r++) {
      if (repair(s, c) && !ts__taken(&s->b, c, s->kids, k)) return 1;
      mutate_one(s, c);
    }
  }
  return ts__fresh(&s->b, c, s->kids, k);
}

static int ga_propose(void *st, int *cfgs, int max) {
  ga *s = st;
  /* asynchronous (steady state): the next generation is bred from the
  ** population as it is once the last one is out, not back */
  if (s->b.ctx->parallel > 1 ? s->sent == s->nkids : s->got == s->nkids) {
    /* Breed the next generation (the first one is random). */
    s->nkids = s->sent = s->got = 0;
    int want = s->npop < GA_POP ? GA_POP - s->npop : GA_CHILDREN;
    for (int k = 0; k < want; k++) {
      int ok = s->npop < GA_POP ? ts__fresh(&s->b, s->kids + (size_t)k * s->b.np, s->kids, k)
                                : breed(s, k);
      if (!ok) break;
      s->nkids++;
    }
  }
  return ts__emit(&s->b, s->kids, s->nkids, &s->sent, cfgs, max);
}

/* Population order: by time, then by age (stable insertion). */
static void insert(ga *s, const int *cfg, double f) {
  int np = s->b.np, i = s->npop;
  if (i == GA_POP && !(f < s->f[GA_POP - 1])) return;
  for (int j = 0; j < s->npop; j++)   /* already a member (an informed result) */
    if (!memcmp(s->pop + (size_t)j * np, cfg, (size_t)np * sizeof *cfg)) return;
  if (i == GA_POP) i--;
  else s->npop++;
  while (i > 0 && f < s->f[i - 1]) {
    memcpy(s->pop + (size_t)i * np, s->pop + (size_t)(i - 1) * np, (size_t)np * sizeof *cfg);
    s->f[i] = s->f[i - 1];
    i--;
  }
  memcpy(s->pop + (size_t)i * np, cfg, (size_t)np * sizeof *cfg);
  s->f[i] = f;
}

static void ga_observe(void *st, const int *cfg, const tu_obs *obs) {
  ga *s = st;
  if (s->b.ctx->parallel > 1) {   /* steady state: each child joins as it comes */
    insert(s, cfg, ts__time(obs));
    s->got++;
    return;
  }
  if (s->got < s->sent) s->kf[s->got++] = ts__time(obs);
  /* The generation joins the population once it is complete, so that
  ** the parents of one generation are one population. */
  if (s->got == s->nkids)
    for (int k = 0; k < s->nkids; k++) insert(s, s->kids + (size_t)k * s->b.np, s->kf[k]);
  (void)cfg;
}

/* Another's result: offered to the population at once, like a child (it
** stays when it is among the GA_POP best); the generation being proposed
** is unaffected. */
static void ga_inform(void *st, const int *cfg, const tu_obs *obs) {
  insert(st, cfg, ts__time(obs));
}

const tu_strategy ts_genetic = {
  .name = "genetic",
  .summary = "genetic algorithm: tournament selection, uniform crossover, mutation, (mu+lambda)",
  .needs_model = 0,
  .create = ga_create,
  .propose = ga_propose,
  .observe = ga_observe,
  .async = 1,
  .destroy = ga_destroy,
  .inform = ga_inform,
};
