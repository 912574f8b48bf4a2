/*
** cm_tune.c -- a kernel model as the tuner uses it: the predict and refit
** hooks of tu.h over one workload on one target. Refitting always starts
** from the coefficients the model was made with (the stored calibration
** or the defaults), so a run's sequence of refits is deterministic and a
** bad early fit cannot drag later ones along. A prediction's uncertainty
** is the stored calibration's for its limiting bound (cm.h invariant 6).
*/
#include <math.h>
#include <stdlib.h>

#include "cm.h"

#define REFIT_ITER 60     /* a refit is a quick one: the solver's iterations */
#define REFIT_ROUNDS 3    /* and its reweighted solves */

struct cm_tmodel {
  const cm_kmodel *k;
  const kn_problem *pb;
  const sp_space *sp;
  cm_ceilings ce;
  cm_coefs start, cur;
  int flush, refits;
};

cm_tmodel *cm_tmodel_new(const cm_kmodel *k, const kn_problem *pb, const sp_space *sp,
                         const cm_ceilings *ce, const cm_coefs *c, int flush) {
  cm_tmodel *m = rt_calloc(1, sizeof *m);
  *m = (cm_tmodel){.k = k, .pb = pb, .sp = sp, .ce = *ce, .start = *c, .cur = *c,
                   .flush = flush};
  return m;
}

void cm_tmodel_free(cm_tmodel *m) { free(m); }

/* out[i] := the predicted time of cfgs[i] (sigma 0) or its uncertainty
** (sigma 1: the stored calibration's for its limiting bound); NAN when the
** model cannot say. */
static void each(cm_tmodel *m, const int *cfgs, int n, double *out, int sigma) {
  int np = sp_nparams(m->sp);
  for (int i = 0; i < n; i++) {
    cm_pred p;
    rt_err err;
    out[i] = cm_predict(m->k, m->pb, m->sp, cfgs + (size_t)i * np, &m->ce, &m->cur, m->flush, &p, &err) ? NAN
             : sigma ? cm_unc_sigma(&m->start.unc, p.bound)
                     : p.time;
  }
}

int cm_tmodel_predict(void *m, const int *cfgs, int n, double *t) {
  each(m, cfgs, n, t, 0);
  return 0;
}

int cm_tmodel_sigma(void *m, const int *cfgs, int n, double *s) {
  each(m, cfgs, n, s, 1);
  return 0;
}

int cm_tmodel_refit(void *mv, const int *cfgs, const double *t, int n) {
  cm_tmodel *m = mv;
  cm_coefs c = m->start;
  cm_fit_result res;
  rt_err err;
  int np = sp_nparams(m->sp);
  cm_sample *s = rt_malloc((size_t)n * sizeof *s);
  for (int i = 0; i < n; i++)
    s[i] = (cm_sample){m->pb, m->sp, cfgs + (size_t)i * np, t[i]};
  /* quick: the model's own coefficients (tile capacities, issue width,
  ** ...) stay, so each schedule's work is computed once */
  int fixed[CM_MAXCOEF];
  for (int j = 0; j < m->k->ncoef; j++)
    fixed[j] = m->k->coefs[j].hold || j >= CM_C_EFF0 + m->k->neff;
  int rc = cm_calibrate_capped(m->k, s, n, &m->ce, m->flush, &c, fixed, REFIT_ITER, REFIT_ROUNDS,
                               &res, &err);
  free(s);
  if (rc) return -1;
  m->cur = c;
  m->refits++;
  return 0;
}

const cm_coefs *cm_tmodel_coefs(const cm_tmodel *m) { return &m->cur; }
int cm_tmodel_refits(const cm_tmodel *m) { return m->refits; }

void cm_tmodel_reset(cm_tmodel *m) {
  m->cur = m->start;
  m->refits = 0;
}
