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
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tu.h"

#define GA_POP 10          /* population (mu) */
#define GA_CHILDREN 8     /* children per generation (lambda) */
#define GA_TOURNAMENT 3    /* tournament size */
#define GA_P_CROSS 0.9     /* chance a child is a crossover (else a copy) */
#define GA_P_ADJ 0.5       /* chance a mutation moves by one position */
#define GA_TRIES 16        /* tries at a valid unseen child before a random one */

typedef struct ga {
  const tu_ctx *ctx;
  int np, nvar;            /* parameters; those with more than one value */
  int npop;                /* members of the population so far */
  int *pop;                /* GA_POP + GA_CHILDREN configurations */
  double *f;               /* their times, INFINITY when failed */
  int *kids;               /* the generation being evaluated */
  double *kf;
  int nkids, sent, got;    /* bred, proposed, observed */
  tu_perm perm;            /* fallback source of unknown configurations */
  rt_count perm_next, count;
  int perm_init;
} ga;

/* 1 if cfg was evaluated in the run or is already among the first n kids. */
static int taken(const ga *s, const int *cfg, int n) {
  if (s->ctx->known(s->ctx->run, cfg, NULL)) return 1;
  for (int i = 0; i < n; i++)
    if (!memcmp(s->kids + (size_t)i * s->np, cfg, (size_t)s->np * sizeof *cfg)) return 1;
  return 0;
}

/* A valid configuration not taken (see taken) into cfg: random tries, then
** the next such rank of a seeded permutation. 0: none is left. */
static int fresh(ga *s, int *cfg, int n) {
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

static void *ga_create(const tu_ctx *ctx, rt_err *err) {
  (void)err;
  ga *s = rt_calloc(1, sizeof *s);
  s->ctx = ctx;
  s->np = sp_nparams(ctx->sp);
  for (int p = 0; p < s->np; p++) s->nvar += sp_nvalues(ctx->sp, p) > 1;
  s->pop = rt_malloc((size_t)(GA_POP + GA_CHILDREN) * s->np * sizeof *s->pop);
  s->f = rt_malloc((size_t)(GA_POP + GA_CHILDREN) * sizeof *s->f);
  s->kids = rt_malloc((size_t)(GA_POP + GA_CHILDREN) * s->np * sizeof *s->kids);
  s->kf = rt_malloc((size_t)(GA_POP + GA_CHILDREN) * sizeof *s->kf);
  return s;
}

static void ga_destroy(void *st) {
  ga *s = st;
  free(s->pop);
  free(s->f);
  free(s->kids);
  free(s->kf);
  free(s);
}

/* The index of the winner of a tournament (lowest time; ties: first drawn). */
static int tournament(ga *s) {
  int w = (int)gsl_rng_uniform_int(s->ctx->rng, (unsigned long)s->npop);
  for (int t = 1; t < GA_TOURNAMENT; t++) {
    int c = (int)gsl_rng_uniform_int(s->ctx->rng, (unsigned long)s->npop);
    if (s->f[c] < s->f[w]) w = c;
  }
  return w;
}

/* Change one random gene of c (one with more than one value). */
static void mutate_one(ga *s, int *c) {
  const gsl_rng *rng = s->ctx->rng;
  int k = (int)gsl_rng_uniform_int(rng, (unsigned long)s->nvar), p = 0;
  for (;; p++)
    if (sp_nvalues(s->ctx->sp, p) > 1 && k-- == 0) break;
  int nv = sp_nvalues(s->ctx->sp, p);
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
  if (sp_valid(s->ctx->sp, c, NULL)) return 1;
  int *nb = NULL, n = sp_neighbours(s->ctx->sp, c, SP_NB_HAMMING, &nb);
  if (n > 0) {
    int i = (int)gsl_rng_uniform_int(s->ctx->rng, (unsigned long)n);
    memcpy(c, nb + (size_t)i * s->np, (size_t)s->np * sizeof *c);
  }
  free(nb);
  return n > 0;
}

/* Child number k of the generation into s->kids; 0 when the space has no
** unseen configuration left. */
static int breed(ga *s, int k) {
  const gsl_rng *rng = s->ctx->rng;
  int np = s->np, *c = s->kids + (size_t)k * np;
  if (s->nvar == 0 || s->npop < 2) return fresh(s, c, k);
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
      if (repair(s, c) && !taken(s, c, k)) return 1;
      mutate_one(s, c);
    }
  }
  return fresh(s, c, k);
}

static int ga_propose(void *st, int *cfgs, int max) {
  ga *s = st;
  if (s->got == s->nkids) {
    /* Breed the next generation (the first one is random). */
    s->nkids = s->sent = s->got = 0;
    int want = s->npop < GA_POP ? GA_POP - s->npop : GA_CHILDREN;
    for (int k = 0; k < want; k++) {
      int ok = s->npop < GA_POP ? fresh(s, s->kids + (size_t)k * s->np, k) : breed(s, k);
      if (!ok) break;
      s->nkids++;
    }
  }
  int n = 0;
  while (n < max && s->sent < s->nkids) {
    memcpy(cfgs + (size_t)n * s->np, s->kids + (size_t)s->sent * s->np,
           (size_t)s->np * sizeof *cfgs);
    n++;
    s->sent++;
  }
  return n;
}

/* Population order: by time, then by age (stable insertion). */
static void insert(ga *s, const int *cfg, double f) {
  int np = s->np, i = s->npop;
  if (i == GA_POP && !(f < s->f[GA_POP - 1])) return;
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
  if (s->got < s->sent) s->kf[s->got++] = obs->ok ? obs->value : INFINITY;
  /* The generation joins the population once it is complete, so that
  ** the parents of one generation are one population. */
  if (s->got == s->nkids)
    for (int k = 0; k < s->nkids; k++) insert(s, s->kids + (size_t)k * s->np, s->kf[k]);
  (void)cfg;
}

const tu_strategy ts_genetic = {
  "genetic",
  "genetic algorithm: tournament selection, uniform crossover, mutation, (mu+lambda)", 0,
  ga_create, ga_propose, ga_observe, ga_destroy,
};
