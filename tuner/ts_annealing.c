/*
** ts_annealing.c -- simulated annealing over the space's neighbourhoods.
** The walk starts from the best of a few random samples; each step
** evaluates one not-yet-evaluated neighbour of the current configuration,
** drawn from the adjacent neighbourhood (one parameter moved by one
** position) or the Hamming one (one parameter changed to any value), and
** moves there by the Metropolis rule on log time under a temperature that
** cools geometrically over the budget. The temperature is relative to the
** landscape: a fraction of the spread between the best and the lower
** quartile of the recent ok log times, so that flat landscapes (times a few
** percent apart) and steep ones (orders of magnitude) are both annealed. A failed configuration is infinitely
** bad (never accepted from an ok one). When every neighbour of the current
** configuration has been evaluated, or the walk has not improved for a
** while, it restarts from a random configuration the run has not seen,
** with the temperature reheated. Asynchronous (tu.h invariant 10): with
** several evaluations at once, the steps out are different neighbours of
** the current configuration (a parallel neighbourhood), each remembered
** with its kind, and each result meets the Metropolis rule when it comes.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ts_int.h"

#define SA_INIT 12         /* random samples before the walk starts */
#define SA_P_ADJ 0.5       /* chance a step is drawn from the adjacent set */
#define SA_T0 0.2          /* temperature (times the spread) at the start ... */
#define SA_T1 0.008        /* ... and at the end of the budget */
#define SA_HIST 512        /* recent ok log times the spread is taken from */
#define SA_QUANTILE 0.25   /* spread: this quantile of them minus their best */
#define SA_HORIZON 1000    /* cooling horizon in steps when the budget is unknown */
#define SA_PATIENCE 80     /* steps without a new best of the walk: restart */
#define SA_PEND 64         /* proposals out at once that keep their kind */

typedef struct sa {
  ts__base b;
  int *cur;                /* the walk's current configuration */
  double fcur;             /* log time of cur, INFINITY when it failed */
  int have_cur;            /* 0: the next proposal starts a (re)start */
  int init_left;           /* random samples still to draw before the walk */
  int *nb[2], nnb[2], pos[2];   /* cur's neighbours (adjacent, Hamming),
                                ** shuffled; pos: next one to try */
  int nb_ok;               /* the lists belong to cur */
  double fwalk;            /* best log time of this walk */
  int stale;               /* steps since fwalk improved */
  int64_t steps;           /* evaluations observed */
  int64_t walk_t0;         /* step at which this walk started (reheat) */
  int pend_kind;           /* what was proposed: 0 random (re)start, 1 neighbour */
  int *pend;               /* asynchronous: the SA_PEND last proposals ... */
  int pend_k[SA_PEND], npend;   /* ... their kinds, how many (a ring) */
  double hist[SA_HIST];    /* ring of the last ok log times */
  double tmp[SA_HIST];     /* work copy for the quantile */
  int64_t nhist;           /* ok log times seen */
} sa;

/* The k-th smallest of a[0..n) (0-based, k < n); reorders a. Hoare's
** selection with the middle element as pivot: O(n) expected. */
static double select_kth(double *a, int n, int k) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    double piv = a[lo + (hi - lo) / 2];
    int i = lo, j = hi;
    while (i <= j) {
      while (a[i] < piv) i++;
      while (a[j] > piv) j--;
      if (i <= j) {
        double t = a[i];
        a[i++] = a[j];
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return a[k];
}

/* The landscape's scale: the SA_QUANTILE quantile of the recent ok log
** times minus their best; 0.1 (a 10% step) until two are known. */
static double spread(sa *s) {
  int n = s->nhist < SA_HIST ? (int)s->nhist : SA_HIST;
  if (n < 2) return 0.1;
  memcpy(s->tmp, s->hist, (size_t)n * sizeof *s->tmp);
  double lo = s->tmp[0];
  for (int i = 1; i < n; i++)
    if (s->tmp[i] < lo) lo = s->tmp[i];
  return select_kth(s->tmp, n, (int)(SA_QUANTILE * (n - 1))) - lo;
}

/* Log time of an observation; INFINITY for a failure. */
static double fit(const tu_obs *o) {
  return o->ok ? log(o->value > 1e-300 ? o->value : 1e-300) : INFINITY;
}

static void *sa_create(const tu_ctx *ctx, rt_err *err) {
  (void)err;
  sa *s = rt_calloc(1, sizeof *s);
  ts__init(&s->b, ctx);
  s->cur = rt_malloc((size_t)s->b.np * sizeof *s->cur);
  s->init_left = SA_INIT;
  s->fcur = s->fwalk = INFINITY;
  return s;
}

static void sa_destroy(void *st) {
  sa *s = st;
  ts__fini(&s->b);
  free(s->cur);
  free(s->nb[0]);
  free(s->nb[1]);
  free(s->pend);
  free(s);
}

/* Compute and shuffle the neighbour lists of cur. */
static void load_neighbours(sa *s) {
  for (int k = 0; k < 2; k++) {
    free(s->nb[k]);
    s->nb[k] = NULL;
    s->nnb[k] = sp_neighbours(s->b.ctx->sp, s->cur, k ? SP_NB_HAMMING : SP_NB_ADJACENT, &s->nb[k]);
    s->pos[k] = 0;
    for (int i = s->nnb[k] - 1; i > 0; i--) {
      int j = (int)gsl_rng_uniform_int(s->b.ctx->rng, (unsigned long)i + 1);
      int *a = s->nb[k] + (size_t)i * s->b.np, *b = s->nb[k] + (size_t)j * s->b.np;
      for (int p = 0; p < s->b.np; p++) {
        int t = a[p];
        a[p] = b[p];
        b[p] = t;
      }
    }
  }
  s->nb_ok = 1;
}

/* The next unknown neighbour of list k into out; 0 when the list is spent. */
static int next_neighbour(sa *s, int k, int *out) {
  while (s->pos[k] < s->nnb[k]) {
    const int *c = s->nb[k] + (size_t)s->pos[k]++ * s->b.np;
    if (!s->b.ctx->known(s->b.ctx->run, c, NULL)) {
      memcpy(out, c, (size_t)s->b.np * sizeof *out);
      return 1;
    }
  }
  return 0;
}

/* Asynchronous runs: remember the kind of proposal cfg (a ring of SA_PEND). */
static void pend_push(sa *s, const int *cfg, int kind) {
  if (s->b.ctx->parallel <= 1) return;
  if (!s->pend) s->pend = rt_malloc((size_t)SA_PEND * (s->b.np ? s->b.np : 1) * sizeof *s->pend);
  int i = s->npend++ % SA_PEND;
  memcpy(s->pend + (size_t)i * s->b.np, cfg, (size_t)s->b.np * sizeof *cfg);
  s->pend_k[i] = kind;
}

/* The kind cfg was proposed as (forgotten then); a neighbour when unknown. */
static int pend_take(sa *s, const int *cfg) {
  int n = s->npend < SA_PEND ? s->npend : SA_PEND;
  for (int i = 0; i < n; i++)
    if (s->pend_k[i] >= 0 && !memcmp(s->pend + (size_t)i * s->b.np, cfg, (size_t)s->b.np * sizeof *cfg)) {
      int k = s->pend_k[i];
      s->pend_k[i] = -1;
      return k;
    }
  return 1;
}

/* One proposal at a time: the walk is sequential (asynchronous runs ask
** again while steps are out: pend_push). */
static int sa_propose_one(void *st, int *cfgs, int max) {
  sa *s = st;
  if (max < 1) return 0;
  if (s->have_cur && s->init_left <= 0 && s->stale < SA_PATIENCE) {
    if (!s->nb_ok) load_neighbours(s);
    int first = gsl_rng_uniform(s->b.ctx->rng) < SA_P_ADJ ? 0 : 1;
    if (next_neighbour(s, first, cfgs) || next_neighbour(s, 1 - first, cfgs)) {
      s->pend_kind = 1;
      pend_push(s, cfgs, 1);
      return 1;
    }
  }
  /* Stuck (or starting): a random configuration not seen yet. */
  if (s->have_cur && s->init_left <= 0) {
    s->have_cur = 0;
    s->fwalk = INFINITY;
  }
  if (!ts__fresh(&s->b, cfgs, NULL, 0)) return 0;
  s->pend_kind = 0;
  pend_push(s, cfgs, 0);
  return 1;
}

/* Several evaluations at once in batches (tu.h invariant 10): up to
** `parallel` steps from the same current configuration. */
static int sa_propose(void *st, int *cfgs, int max) {
  sa *s = st;
  int want = max < s->b.ctx->parallel ? max : s->b.ctx->parallel, k = 0;
  if (want < 1) want = 1;
  while (k < want && sa_propose_one(st, cfgs + (size_t)k * s->b.np, 1)) k++;
  return k;
}

static void sa_observe(void *st, const int *cfg, const tu_obs *obs) {
  sa *s = st;
  const tu_ctx *ctx = s->b.ctx;
  double f = fit(obs);
  s->steps++;
  if (!isinf(f)) s->hist[s->nhist++ % SA_HIST] = f;
  int kind = s->b.ctx->parallel > 1 ? pend_take(s, cfg) : s->pend_kind;
  if (kind == 1 && !s->have_cur) kind = 0;   /* a step of a walk since abandoned */
  if (kind == 0) {
    /* A (re)start sample: the initial samples keep the best; a restart
    ** takes its sample as the new current. */
    if (!s->have_cur || f < s->fcur) {
      memcpy(s->cur, cfg, (size_t)s->b.np * sizeof *cfg);
      s->fcur = f;
      s->nb_ok = 0;
    }
    if (!s->have_cur) {
      s->walk_t0 = s->steps;
      s->stale = 0;
    }
    s->have_cur = 1;
    if (s->init_left > 0) s->init_left--;
    if (f < s->fwalk) s->fwalk = f;
    return;
  }
  /* A neighbour: the Metropolis rule on log time. */
  int accept;
  if (isinf(f)) {
    accept = isinf(s->fcur);   /* a walk among failures keeps moving */
  } else if (f <= s->fcur) {
    accept = 1;
  } else {
    double horizon = ctx->budget > 0 ? (double)ctx->budget : SA_HORIZON;
    double frac = (double)(s->steps - s->walk_t0) / horizon;
    if (ctx->budget > 0) frac = (double)s->steps / horizon;
    if (frac > 1) frac = 1;
    double T = SA_T0 * pow(SA_T1 / SA_T0, frac) * spread(s);
    accept = T > 0 && gsl_rng_uniform(ctx->rng) < exp(-(f - s->fcur) / T);
  }
  if (f < s->fwalk) {
    s->fwalk = f;
    s->stale = 0;
  } else {
    s->stale++;
  }
  if (accept) {
    memcpy(s->cur, cfg, (size_t)s->b.np * sizeof *cfg);
    s->fcur = f;
    s->nb_ok = 0;
  }
}

/* Another's result: adopted as the current configuration when it is faster
** than the current one (the walk continues from there, counted as its
** improvement); its time joins the landscape's spread. No pending proposal
** exists here (inform is never called between a propose and its observe). */
static void sa_inform(void *st, const int *cfg, const tu_obs *obs) {
  sa *s = st;
  double f = fit(obs);
  if (!isinf(f)) s->hist[s->nhist++ % SA_HIST] = f;
  if (!(f < s->fcur) || !s->have_cur) return;
  memcpy(s->cur, cfg, (size_t)s->b.np * sizeof *cfg);
  s->fcur = f;
  s->nb_ok = 0;
  if (f < s->fwalk) {
    s->fwalk = f;
    s->stale = 0;
  }
}

const tu_strategy ts_annealing = {
  .name = "annealing",
  .summary = "simulated annealing over adjacent and Hamming neighbours, on log time, with restarts",
  .needs_model = 0,
  .create = sa_create,
  .propose = sa_propose,
  .observe = sa_observe,
  .destroy = sa_destroy,
  .inform = sa_inform,
  .async = 1,
};
