/*
** cm_fit.c -- the generic calibration solver of the cost model: robust
** nonlinear least squares over a caller's residual function (cm.h,
** "Calibration"). Each solve is GSL's trust-region solver
** (gsl_multifit_nlinear, Levenberg-Marquardt with geodesic acceleration,
** QR linear solver, finite-difference Jacobian) driven by our own loop so
** that a failing residual function stops the fit instead of being
** overwritten by the convergence test. Optional prior rows
** lambda * (u_j - prior_j) keep an ill-determined fit near its prior.
** Robustness is iteratively reweighted least squares: Tukey bisquare
** weights on the observation residuals scaled by 1.4826 * MAD, re-solved
** from the current point until the weights settle. GSL's abort-on-error
** handler is switched off for the duration of cm_fit and restored after.
*/
#include "cost_model/cm.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>

#define FIT_XTOL 1e-10       /* relative step size test */
#define FIT_GTOL 1e-10       /* scaled gradient test */
#define FIT_FTOL 0.0         /* no test on the change of ||f|| */
#define FIT_BIG 1e100        /* stands for a non-finite residual at a trial
                             ** point, so the trust region rejects it */
#define FIT_TUKEY_C 4.685    /* bisquare tuning constant (95% efficiency) */
#define FIT_IRLS_MAX 20      /* reweighted solves at most, by default */
#define FIT_W_TOL 1e-6       /* weights settled: max change below this */

void cm_fit_opts_default(cm_fit_opts *o) {
  o->robust = 1;
  o->lambda = 0.0;
  o->prior = NULL;
  o->max_iter = 200;
  o->max_rounds = FIT_IRLS_MAX;
}

/* What the GSL callback needs: the caller's function and the prior rows. */
typedef struct fit_ctx {
  int n_obs, n_par;
  cm_resid_fn fn;
  void *ctx;
  double lambda;
  const double *prior;         /* n_par values */
  double *u, *r;               /* scratch: n_par, n_obs */
  int failed;                  /* fn returned non-zero */
  long evals;                  /* calls of fn */
} fit_ctx;

/* The residual vector of GSL's problem at x: the n_obs observation rows
** (a non-finite value becomes FIT_BIG), then the prior rows. Returns
** GSL_EBADFUNC when fn fails (c->failed is then set). */
static int fit_f(const gsl_vector *x, void *params, gsl_vector *f) {
  fit_ctx *c = params;
  for (int j = 0; j < c->n_par; j++) c->u[j] = gsl_vector_get(x, (size_t)j);
  c->evals++;
  if (c->fn(c->ctx, c->u, c->r)) {
    c->failed = 1;
    return GSL_EBADFUNC;
  }
  for (int i = 0; i < c->n_obs; i++)
    gsl_vector_set(f, (size_t)i, isfinite(c->r[i]) ? c->r[i] : FIT_BIG);
  if (c->lambda > 0)
    for (int j = 0; j < c->n_par; j++)
      gsl_vector_set(f, (size_t)(c->n_obs + j),
                     c->lambda * (c->u[j] - c->prior[j]));
  return GSL_SUCCESS;
}

/* Report a failure of the residual function at `where`: a message the
** function left in err (through its ctx) is kept and prefixed. */
static void fit_fn_failed(rt_err *err, const char *where) {
  if (err && err->msg[0])
    rt_err_prefix(err, "cm_fit: the residual function failed %s", where);
  else
    rt_err_set(err, "cm_fit: the residual function failed %s", where);
}

/* The observation residuals at u into c->r, unweighted. 0, or -1 with err
** when fn fails or (check_finite) a residual is not finite. */
static int fit_eval(fit_ctx *c, const double *u, int check_finite,
                    rt_err *err) {
  c->evals++;
  if (c->fn(c->ctx, u, c->r)) {
    fit_fn_failed(err, check_finite ? "at the start point" : "at the solution");
    return -1;
  }
  if (check_finite)
    for (int i = 0; i < c->n_obs; i++)
      if (!isfinite(c->r[i])) {
        rt_err_set(err, "cm_fit: residual %d is not finite (%g) at the "
                   "start point", i, c->r[i]);
        return -1;
      }
  return 0;
}

/* Unweighted rms of the n observation residuals r. */
static double fit_rms(const double *r, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += r[i] * r[i];
  return sqrt(s / n);
}

/* One (weighted) solve from x, in place. wts: n_obs + prior rows, or NULL
** for unit weights. Adds the iterations to *iters. 0, or -1 with err. */
static int fit_solve(fit_ctx *c, gsl_multifit_nlinear_workspace *w,
                     gsl_multifit_nlinear_fdf *fdf, gsl_vector *x,
                     const gsl_vector *wts, int max_iter, int *iters,
                     rt_err *err) {
  c->failed = 0;
  int st = wts ? gsl_multifit_nlinear_winit(x, wts, fdf, w)
               : gsl_multifit_nlinear_init(x, fdf, w);
  int noprog = 0, it = 0;
  while (!st && !c->failed && it < max_iter) {
    st = gsl_multifit_nlinear_iterate(w);
    if (c->failed) break;
    if (st == GSL_ENOPROG) {
      /* No step lowered the cost: at a minimum to machine precision on
      ** the first iteration or twice in a row (GSL resets mu after one). */
      st = 0;
      if (it == 0 || noprog) break;
      noprog = 1;
      it++;
      continue;
    }
    if (st) break;
    noprog = 0;
    it++;
    int info;
    st = gsl_multifit_nlinear_test(FIT_XTOL, FIT_GTOL, FIT_FTOL, &info, w);
    if (st == GSL_SUCCESS) break;
    if (st == GSL_CONTINUE) st = 0;
  }
  *iters += it;
  if (c->failed) {
    char where[48];
    snprintf(where, sizeof where, "during the solve (iteration %d)", it + 1);
    fit_fn_failed(err, where);
    return -1;
  }
  if (st) {
    rt_err_set(err, "cm_fit: GSL solver failed: %s", gsl_strerror(st));
    return -1;
  }
  gsl_vector_memcpy(x, gsl_multifit_nlinear_position(w));
  return 0;
}

/* Bisquare weights of the observation residuals r into wn (n values);
** returns the number of non-zero weights. */
static int fit_weights(const double *r, int n, double *wn, double *work) {
  double s = gsl_stats_mad(r, 1, (size_t)n, work);  /* 1.4826 * MAD */
  double floor_s = 1e-6 * fit_rms(r, n);
  if (!(s > floor_s)) s = floor_s;
  if (!(s > DBL_MIN)) s = DBL_MIN;
  double cs = FIT_TUKEY_C * s;
  int nz = 0;
  for (int i = 0; i < n; i++) {
    double a = fabs(r[i]) / cs;
    wn[i] = a < 1 ? (1 - a * a) * (1 - a * a) : 0.0;
    nz += wn[i] > 0;
  }
  return nz;
}

/* Validate the arguments. 0, or -1 with err. */
static int fit_check(int n_obs, int n_par, cm_resid_fn fn, const double *u,
                     const cm_fit_opts *o, rt_err *err) {
  if (!fn || !u) return rt_err_set(err, "cm_fit: no residual function or "
                                   "start vector"), -1;
  if (n_obs < 1 || n_par < 1)
    return rt_err_set(err, "cm_fit: need at least one observation and one "
                      "unknown (n_obs %d, n_par %d)", n_obs, n_par), -1;
  if (!(o->lambda >= 0) || !isfinite(o->lambda))
    return rt_err_set(err, "cm_fit: lambda must be a finite number >= 0, "
                      "not %g", o->lambda), -1;
  if (o->max_iter < 1)
    return rt_err_set(err, "cm_fit: max_iter must be >= 1, not %d",
                      o->max_iter), -1;
  if (o->lambda == 0 && n_obs < n_par)
    return rt_err_set(err, "cm_fit: %d observations cannot determine %d "
                      "unknowns (give a prior: lambda > 0)", n_obs, n_par), -1;
  for (int j = 0; j < n_par; j++) {
    if (!isfinite(u[j]))
      return rt_err_set(err, "cm_fit: start value %d is not finite (%g)", j,
                        u[j]), -1;
    if (o->lambda > 0 && o->prior && !isfinite(o->prior[j]))
      return rt_err_set(err, "cm_fit: prior value %d is not finite (%g)", j,
                        o->prior[j]), -1;
  }
  return 0;
}

/* cm.h's contract, and: o NULL means the defaults, res may be NULL; u is
** written only on success. Errors (-1): bad arguments, fn failing (a
** message it left in err through its ctx is kept after cm_fit's), a
** non-finite residual at the start, a GSL failure. A non-finite residual
** at a trial point only rejects that step. Reaching max_iter is not an
** error: the best point so far stands (res->iters says so). Robust
** weighting needs n_obs > n_par; otherwise the plain fit is returned. */
int cm_fit(int n_obs, int n_par, cm_resid_fn fn, void *ctx, double *u,
           const cm_fit_opts *o, cm_fit_result *res, rt_err *err) {
  cm_fit_opts dflt;
  cm_fit_result dummy;
  if (!o) cm_fit_opts_default(&dflt), o = &dflt;
  if (!res) res = &dummy;
  memset(res, 0, sizeof *res);
  res->rms_before = res->rms_after = NAN;
  if (err) err->msg[0] = 0;
  if (fit_check(n_obs, n_par, fn, u, o, err)) return -1;

  int n_rows = n_obs + (o->lambda > 0 ? n_par : 0);
  double *prior = rt_malloc((size_t)n_par * sizeof *prior);
  memcpy(prior, o->prior && o->lambda > 0 ? o->prior : u,
         (size_t)n_par * sizeof *prior);
  fit_ctx c = {n_obs, n_par, fn, ctx, o->lambda, prior,
               rt_malloc((size_t)n_par * sizeof(double)),
               rt_malloc((size_t)n_obs * sizeof(double)), 0, 0};
  double *wn = rt_malloc((size_t)n_obs * sizeof *wn);
  double *work = rt_malloc((size_t)n_obs * sizeof *work);
  gsl_vector *x = gsl_vector_alloc((size_t)n_par);
  gsl_vector *wts = gsl_vector_alloc((size_t)n_rows);
  gsl_multifit_nlinear_workspace *w = NULL;
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  int rc = -1;

  if (!x || !wts) {
    rt_err_set(err, "cm_fit: GSL could not allocate vectors");
    goto done;
  }
  if (fit_eval(&c, u, 1, err)) goto done;
  res->rms_before = fit_rms(c.r, n_obs);

  gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
  par.trs = gsl_multifit_nlinear_trs_lmaccel;
  par.solver = gsl_multifit_nlinear_solver_qr;
  w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par,
                                 (size_t)n_rows, (size_t)n_par);
  if (!w) {
    rt_err_set(err, "cm_fit: GSL could not allocate the solver (%d rows, %d "
               "unknowns)", n_rows, n_par);
    goto done;
  }
  gsl_multifit_nlinear_fdf fdf;
  memset(&fdf, 0, sizeof fdf);
  fdf.f = fit_f;
  fdf.df = NULL;               /* finite-difference Jacobian */
  fdf.fvv = NULL;              /* finite-difference second directional
                               ** derivative for the acceleration */
  fdf.n = (size_t)n_rows;
  fdf.p = (size_t)n_par;
  fdf.params = &c;
  for (int j = 0; j < n_par; j++) gsl_vector_set(x, (size_t)j, u[j]);

  if (fit_solve(&c, w, &fdf, x, NULL, o->max_iter, &res->iters, err))
    goto done;
  /* Reweighting needs redundancy: with n_obs <= n_par the fit interpolates
  ** and the residuals' MAD says nothing, so the plain fit stands. */
  if (o->robust && n_obs > n_par) {
    gsl_vector_set_all(wts, 1.0);    /* prior rows keep weight 1 */
    for (;;) {
      if (fit_eval(&c, x->data, 0, err)) goto done;
      int nz = fit_weights(c.r, n_obs, wn, work);
      double change = 0;
      for (int i = 0; i < n_obs; i++)
        change = fmax(change, fabs(wn[i] - gsl_vector_get(wts, (size_t)i)));
      /* Too few observations left to determine u: keep the last solve. */
      if (o->lambda == 0 && nz < n_par) break;
      for (int i = 0; i < n_obs; i++) gsl_vector_set(wts, (size_t)i, wn[i]);
      if (change < FIT_W_TOL || res->irls_rounds == o->max_rounds) break;
      if (fit_solve(&c, w, &fdf, x, wts, o->max_iter, &res->iters, err))
        goto done;
      res->irls_rounds++;
    }
    for (int i = 0; i < n_obs; i++)
      res->n_outliers += gsl_vector_get(wts, (size_t)i) == 0.0;
  }
  if (fit_eval(&c, x->data, 0, err)) goto done;
  res->rms_after = fit_rms(c.r, n_obs);
  res->evals = c.evals;
  for (int j = 0; j < n_par; j++) u[j] = gsl_vector_get(x, (size_t)j);
  rc = 0;

done:
  gsl_set_error_handler(old);
  if (w) gsl_multifit_nlinear_free(w);
  if (x) gsl_vector_free(x);
  if (wts) gsl_vector_free(wts);
  free(work);
  free(wn);
  free(c.r);
  free(c.u);
  free(prior);
  return rc;
}
