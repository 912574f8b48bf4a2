/*
** cm_calib.c -- calibration of a kernel model's coefficients against
** measured schedules: residuals log(predicted) - log(measured) handed to
** the robust solver of cm_fit.c. Coefficients are fitted in an
** unconstrained form (log x for x > 0, log(x - 1) for x >= 1) with a weak
** prior towards the starting values, so that a coefficient the data cannot
** see stays where it was instead of wandering off.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cm.h"

#define PRIOR_LAMBDA 0.05   /* weight of the prior rows (log units) */

typedef struct calib {
  const cm_kmodel *k;
  const cm_sample *s;
  int n, nfree, flush;
  int idx[CM_MAXCOEF];        /* free coefficient j -> index in c->v */
  const cm_ceilings *ce;
  cm_work *w;                 /* the samples' work when no free coefficient
                              ** changes it (only cm_time then depends on u) */
  struct memo *memo;          /* else each sample's work at two recent points */
  int own0;                   /* the model's own coefficients: own0 .. ncoef-1 */
  int evals;                  /* calls of resid so far */
  cm_coefs c;                 /* scratch: the coefficients being tried */
} calib;

/* A sample's work at the last two values of the model's own coefficients,
** the one used longer ago replaced first. Work depends on nothing else that
** a fit moves (cm.h, cm_kmodel.work), and the solver's finite-difference
** Jacobian moves one coefficient per column: a column that moves a generic
** coefficient (ceilings' shares, overlap, overheads, exponents) finds the
** work of the base point here, one that moves an own coefficient takes
** the other slot. The result is the same to the bit as computing it again. */
typedef struct memo {
  double own[2][CM_MAXCOEF];
  cm_work w[2];
  int used[2];                /* 0: empty; else the evaluation it was last used */
} memo;

/* The work of sample i at the coefficients cb->c, from its memo or
** computed (then kept in the slot used longer ago). */
static int memo_work(calib *cb, int i, int eval, cm_pred *p, rt_err *err) {
  memo *m = &cb->memo[i];
  int nown = cb->k->ncoef - cb->own0;
  const double *own = cb->c.v + cb->own0;
  for (int s = 0; s < 2; s++) {
    if (!m->used[s]) continue;
    int same = 1;
    for (int j = 0; j < nown && same; j++) same = m->own[s][j] == own[j];
    if (same) {
      m->used[s] = eval;
      cm_time(cb->k, &m->w[s], cb->ce, &cb->c, p);
      return 0;
    }
  }
  const cm_sample *x = &cb->s[i];
  if (cm_predict(cb->k, x->pb, x->sp, x->cfg, cb->ce, &cb->c, cb->flush, p, err)) return -1;
  int s = m->used[0] <= m->used[1] ? 0 : 1;
  memcpy(m->own[s], own, (size_t)nown * sizeof *own);
  m->w[s] = p->w;
  m->used[s] = eval;
  return 0;
}

static double to_u(const cm_coef *k, double x) {
  return k->kind == CM_GE1 ? log(fmax(x - 1, 1e-9)) : log(fmax(x, 1e-300));
}
static double from_u(const cm_coef *k, double u) {
  return k->kind == CM_GE1 ? 1 + exp(u) : exp(u);
}

static int resid(void *ctx, const double *u, double *r) {
  calib *cb = ctx;
  for (int j = 0; j < cb->nfree; j++)
    cb->c.v[cb->idx[j]] = from_u(&cb->k->coefs[cb->idx[j]], u[j]);
  cb->evals++;
  for (int i = 0; i < cb->n; i++) {
    cm_pred p;
    rt_err err;
    if (cb->w)
      cm_time(cb->k, &cb->w[i], cb->ce, &cb->c, &p);
    else if (memo_work(cb, i, cb->evals, &p, &err))
      return -1;
    r[i] = log(p.time) - log(cb->s[i].t);   /* non-finite: cm_fit rejects the step */
  }
  return 0;
}

int cm_calibrate(const cm_kmodel *k, const cm_sample *s, int n, const cm_ceilings *ce,
                 int flush, cm_coefs *c, const int *fixed, cm_fit_result *res,
                 rt_err *err) {
  cm_fit_opts o;
  cm_fit_opts_default(&o);
  return cm_calibrate_capped(k, s, n, ce, flush, c, fixed, o.max_iter, o.max_rounds, res, err);
}

int cm_calibrate_capped(const cm_kmodel *k, const cm_sample *s, int n, const cm_ceilings *ce,
                        int flush, cm_coefs *c, const int *fixed, int max_iter,
                        int max_rounds, cm_fit_result *res, rt_err *err) {
  calib cb = {.k = k, .s = s, .n = n, .flush = flush, .ce = ce, .c = *c};
  double u[CM_MAXCOEF], prior[CM_MAXCOEF];
  for (int j = 0; j < k->ncoef; j++)
    if (!(fixed ? fixed[j] : k->coefs[j].hold)) {
      cb.idx[cb.nfree] = j;
      u[cb.nfree] = prior[cb.nfree] = to_u(&k->coefs[j], c->v[j]);
      cb.nfree++;
    }
  for (int i = 0; i < n; i++)
    if (!(s[i].t > 0) || !isfinite(s[i].t)) {
      rt_err_set(err, "calibration: measured time %d is %g, not a positive time", i, s[i].t);
      return -1;
    }
  if (n < 2) {
    rt_err_set(err, "calibration needs at least 2 measured schedules, got %d", n);
    return -1;
  }
  /* The work of each schedule depends only on the model's own
  ** coefficients (after the exponents): when those are all kept, compute
  ** it once. */
  int own_free = 0;
  cb.own0 = CM_C_EFF0 + k->neff;
  for (int j = 0; j < cb.nfree; j++) own_free |= cb.idx[j] >= cb.own0;
  if (!own_free) {
    cb.w = rt_malloc((size_t)n * sizeof *cb.w);
    for (int i = 0; i < n; i++) {
      cm_pred p;
      if (cm_predict(k, s[i].pb, s[i].sp, s[i].cfg, ce, c, flush, &p, err)) {
        free(cb.w);
        return -1;
      }
      cb.w[i] = p.w;
    }
  } else {
    cb.memo = rt_calloc((size_t)n, sizeof *cb.memo);
  }
  cm_fit_opts o;
  cm_fit_opts_default(&o);
  o.lambda = PRIOR_LAMBDA;
  o.prior = prior;
  o.max_iter = max_iter;
  o.max_rounds = max_rounds;
  int rc = cm_fit(n, cb.nfree, resid, &cb, u, &o, res, err);
  free(cb.w);
  free(cb.memo);
  if (rc) {
    rt_err_prefix(err, "calibrating the %s model", k->kernel);
    return -1;
  }
  for (int j = 0; j < cb.nfree; j++)
    c->v[cb.idx[j]] = from_u(&k->coefs[cb.idx[j]], u[j]);
  char date[24];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%d %H:%M", gmtime(&now));
  snprintf(c->source, sizeof c->source, "calibrated on %d schedules, %s UTC", n, date);
  return 0;
}
