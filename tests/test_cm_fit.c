/*
** test_cm_fit.c -- the calibration solver (cm_fit) recovers known
** coefficients from synthetic data made with a fixed-seed gsl_rng: an
** exponential decay from a far start, the same with 10% gross outliers
** (the robust fit recovers it, the plain least-squares fit measurably does
** not), a roofline-shaped model in log time (two bounds joined by a p-norm
** plus an overhead) over schedules on both sides of the ridge, prior rows
** that hold the solution at the prior (and a hand-solved small problem),
** and the documented errors. Each test prints the errors it measured.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "cost_model/cm.h"

#define assert_near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

/* ---- y = a exp(-b x) + c ---- */

#define EXP_N 100
static const double EXP_TRUTH[3] = {5.0, 0.4, 1.0};

typedef struct exp_data {
  int n;
  double x[EXP_N], y[EXP_N];
  int outlier[EXP_N];
} exp_data;

/* n points x uniform in [0, 10], y = truth + N(0, sigma); with outliers,
** every point the rng picks with probability 0.1 gets y * 10. */
static void exp_make(exp_data *d, double sigma, int outliers, int *n_out) {
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 12345);
  d->n = EXP_N;
  *n_out = 0;
  for (int i = 0; i < EXP_N; i++) {
    d->x[i] = 10.0 * i / (EXP_N - 1);
    d->y[i] = EXP_TRUTH[0] * exp(-EXP_TRUTH[1] * d->x[i]) + EXP_TRUTH[2] +
              gsl_ran_gaussian(rng, sigma);
    d->outlier[i] = 0;
  }
  if (outliers) {
    /* exactly 10% of the points, chosen by the rng */
    while (*n_out < EXP_N / 10) {
      int i = (int)gsl_rng_uniform_int(rng, EXP_N);
      if (d->outlier[i]) continue;
      d->outlier[i] = 1;
      d->y[i] *= 10;
      (*n_out)++;
    }
  }
  gsl_rng_free(rng);
}

static int exp_resid(void *ctx, const double *u, double *r) {
  const exp_data *d = ctx;
  for (int i = 0; i < d->n; i++)
    r[i] = u[0] * exp(-u[1] * d->x[i]) + u[2] - d->y[i];
  return 0;
}

/* Largest relative error of u against truth (n values). */
static double max_rel_err(const double *u, const double *truth, int n) {
  double e = 0;
  for (int i = 0; i < n; i++) e = fmax(e, fabs(u[i] - truth[i]) / fabs(truth[i]));
  return e;
}

static const double EXP_START[3] = {1.0, 2.0, 4.0};   /* far from truth */

/* (a) clean data (sigma 0.01): within 2%, robust and plain. */
static void test_exp_recover(void **state) {
  (void)state;
  exp_data d;
  int n_out;
  exp_make(&d, 0.01, 0, &n_out);
  for (int robust = 0; robust <= 1; robust++) {
    double u[3];
    memcpy(u, EXP_START, sizeof u);
    cm_fit_opts o;
    cm_fit_opts_default(&o);
    assert_int_equal(o.robust, 1);
    assert_int_equal(o.max_iter, 200);
    assert_true(o.lambda == 0 && o.prior == NULL);
    o.robust = robust;
    cm_fit_result res;
    rt_err err;
    assert_int_equal(cm_fit(d.n, 3, exp_resid, &d, u, &o, &res, &err), 0);
    double e = max_rel_err(u, EXP_TRUTH, 3);
    print_message("exp robust=%d: a=%.5f b=%.5f c=%.5f max rel err %.3g%% "
                  "(iters %d, irls %d, rms %.3g -> %.3g, outliers %d)\n",
                  robust, u[0], u[1], u[2], 100 * e, res.iters,
                  res.irls_rounds, res.rms_before, res.rms_after,
                  res.n_outliers);
    assert_true(e < 0.02);
    assert_true(res.iters > 0);
    assert_true(res.rms_after < res.rms_before);
    /* the residual noise is what is left: rms near sigma */
    assert_true(res.rms_after > 0.005 && res.rms_after < 0.02);
    if (robust) assert_true(res.irls_rounds >= 1);
    else assert_int_equal(res.irls_rounds, 0);
    assert_int_equal(res.n_outliers, 0);
  }
}

/* (b) 10% of the points times 10: the robust fit within 3% with exactly
** the planted points weighted 0; the plain fit measurably worse. */
static void test_exp_outliers(void **state) {
  (void)state;
  exp_data d;
  int n_out;
  exp_make(&d, 0.01, 1, &n_out);
  assert_int_equal(n_out, 10);
  double e[2];
  for (int robust = 0; robust <= 1; robust++) {
    double u[3];
    memcpy(u, EXP_START, sizeof u);
    cm_fit_opts o;
    cm_fit_opts_default(&o);
    o.robust = robust;
    cm_fit_result res;
    rt_err err;
    assert_int_equal(cm_fit(d.n, 3, exp_resid, &d, u, &o, &res, &err), 0);
    e[robust] = max_rel_err(u, EXP_TRUTH, 3);
    print_message("exp+outliers robust=%d: a=%.5f b=%.5f c=%.5f max rel err "
                  "%.3g%% (iters %d, irls %d, outliers %d)\n", robust, u[0],
                  u[1], u[2], 100 * e[robust], res.iters, res.irls_rounds,
                  res.n_outliers);
    if (robust) {
      assert_int_equal(res.n_outliers, n_out);
      /* the points weighted 0 are the planted ones: their residuals at the
      ** solution are far larger than every clean point's */
      double r[EXP_N], max_clean = 0, min_out = INFINITY;
      exp_resid(&d, u, r);
      for (int i = 0; i < d.n; i++)
        if (d.outlier[i]) min_out = fmin(min_out, fabs(r[i]));
        else max_clean = fmax(max_clean, fabs(r[i]));
      assert_true(min_out > 20 * max_clean);
    }
  }
  assert_true(e[1] < 0.03);
  assert_true(e[0] > 0.10);           /* plain LS is pulled away */
  assert_true(e[0] > 10 * e[1]);
}

/* ---- (c) a roofline in log time ---- */

#define RL_N 200
#define RL_PEAK 230e9        /* FLOP/s */
#define RL_BW 20e9           /* bytes/s */
typedef struct rl_data {
  double F[RL_N], B[RL_N], logt[RL_N];
} rl_data;

/* log T of one schedule: T = (tF^p + tB^p)^(1/p) + o, tF = F / (P e1),
** tB = B / (W e2); u = (log e1, log e2, log(p - 1), log o). The p-norm is
** taken relative to the larger term so that large p cannot overflow. */
static double rl_logt(const double *u, double F, double B) {
  double tf = F / (RL_PEAK * exp(u[0])), tb = B / (RL_BW * exp(u[1]));
  double p = 1 + exp(u[2]), mx = fmax(tf, tb);
  double pn = mx * pow(pow(tf / mx, p) + pow(tb / mx, p), 1 / p);
  return log(pn + exp(u[3]));
}

static int rl_resid(void *ctx, const double *u, double *r) {
  const rl_data *d = ctx;
  for (int i = 0; i < RL_N; i++) r[i] = rl_logt(u, d->F[i], d->B[i]) - d->logt[i];
  return 0;
}

static void test_roofline_recover(void **state) {
  (void)state;
  /* truth: e1 0.7, e2 0.5, p 3, o 2 us */
  const double truth[4] = {0.7, 0.5, 3.0, 2e-6};
  const double ut[4] = {log(0.7), log(0.5), log(2.0), log(2e-6)};
  rl_data d;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 2024);
  int compute_bound = 0, memory_bound = 0, overhead_bound = 0;
  for (int i = 0; i < RL_N; i++) {
    /* flops log-uniform in [1e4, 1e10], intensity in [0.1, 100] FLOP/byte
    ** (the ridge P e1 / (W e2) = 16.1 lies inside) */
    d.F[i] = pow(10, 4 + 6 * gsl_rng_uniform(rng));
    d.B[i] = d.F[i] / pow(10, -1 + 3 * gsl_rng_uniform(rng));
    d.logt[i] = rl_logt(ut, d.F[i], d.B[i]) + gsl_ran_gaussian(rng, 0.01);
    double tf = d.F[i] / (RL_PEAK * truth[0]), tb = d.B[i] / (RL_BW * truth[1]);
    if (truth[3] > fmax(tf, tb)) overhead_bound++;
    else if (tf > tb) compute_bound++;
    else memory_bound++;
  }
  gsl_rng_free(rng);
  print_message("roofline data: %d compute-bound, %d memory-bound, %d "
                "overhead-bound\n", compute_bound, memory_bound, overhead_bound);
  assert_true(compute_bound >= 20 && memory_bound >= 20 && overhead_bound >= 10);

  double u[4] = {log(0.3), log(0.95), log(0.5), log(1e-5)};  /* p = 1.5 */
  cm_fit_opts o;
  cm_fit_opts_default(&o);
  cm_fit_result res;
  rt_err err;
  assert_int_equal(cm_fit(RL_N, 4, rl_resid, &d, u, &o, &res, &err), 0);
  double got[4] = {exp(u[0]), exp(u[1]), 1 + exp(u[2]), exp(u[3])};
  double e = max_rel_err(got, truth, 4);
  print_message("roofline: e1=%.4f e2=%.4f p=%.4f o=%.4g max rel err %.3g%% "
                "(iters %d, irls %d, rms %.3g -> %.3g)\n", got[0], got[1],
                got[2], got[3], 100 * e, res.iters, res.irls_rounds,
                res.rms_before, res.rms_after);
  assert_true(e < 0.05);
  assert_true(res.rms_after < 0.02);
}

/* ---- (d) prior rows ---- */

static void test_prior(void **state) {
  (void)state;
  exp_data d;
  int n_out;
  exp_make(&d, 0.01, 0, &n_out);
  /* lambda large, prior NULL: the solution stays at the start */
  double u[3];
  memcpy(u, EXP_START, sizeof u);
  cm_fit_opts o;
  cm_fit_opts_default(&o);
  o.lambda = 1e6;
  cm_fit_result res;
  rt_err err;
  assert_int_equal(cm_fit(d.n, 3, exp_resid, &d, u, &o, &res, &err), 0);
  double e = max_rel_err(u, EXP_START, 3);
  print_message("prior=start, lambda 1e6: moved %.3g (relative)\n", e);
  assert_true(e < 1e-4);
  /* an explicit prior away from both start and truth */
  const double prior[3] = {3.0, 0.8, 2.0};
  memcpy(u, EXP_START, sizeof u);
  o.prior = prior;
  assert_int_equal(cm_fit(d.n, 3, exp_resid, &d, u, &o, &res, &err), 0);
  e = max_rel_err(u, prior, 3);
  print_message("explicit prior, lambda 1e6: off the prior by %.3g\n", e);
  assert_true(e < 1e-4);
  /* a small lambda barely moves the least-squares solution */
  memcpy(u, EXP_START, sizeof u);
  o.lambda = 1e-4;
  assert_int_equal(cm_fit(d.n, 3, exp_resid, &d, u, &o, &res, &err), 0);
  assert_true(max_rel_err(u, EXP_TRUTH, 3) < 0.02);
}

/* One observation u0 + u1 - 2, prior (0, 0), lambda 1: minimise
** (u0 + u1 - 2)^2 + u0^2 + u1^2. By symmetry u0 = u1 = t and
** d/dt [(2t - 2)^2 + 2 t^2] = 8t - 8 + 4t = 0, so t = 2/3. */
static int sum_resid(void *ctx, const double *u, double *r) {
  (void)ctx;
  r[0] = u[0] + u[1] - 2;
  return 0;
}

static void test_prior_underdetermined(void **state) {
  (void)state;
  double u[2] = {5, -3};
  const double prior[2] = {0, 0};
  cm_fit_opts o;
  cm_fit_opts_default(&o);
  o.lambda = 1;
  o.prior = prior;
  cm_fit_result res;
  rt_err err;
  assert_int_equal(cm_fit(1, 2, sum_resid, NULL, u, &o, &res, &err), 0);
  assert_near(u[0], 2.0 / 3, 1e-6);
  assert_near(u[1], 2.0 / 3, 1e-6);
  assert_near(res.rms_after, 2.0 / 3, 1e-6);   /* |4/3 - 2| */
  assert_near(res.rms_before, 0.0, 1e-12);     /* 5 - 3 - 2 */
}

/* ---- (e) errors ---- */

typedef struct fail_ctx {
  exp_data *d;
  int calls, fail_at;   /* fail on call number fail_at (1-based) */
  int nan_start;
  rt_err *err;          /* where to say why, or NULL */
} fail_ctx;

static int fail_resid(void *ctx, const double *u, double *r) {
  fail_ctx *f = ctx;
  if (++f->calls == f->fail_at) {
    rt_err_set(f->err, "coefficient %d out of range", 2);
    return -1;
  }
  exp_resid(f->d, u, r);
  if (f->nan_start) r[7] = NAN;
  return 0;
}

static void counting_handler(const char *reason, const char *file, int line,
                             int gsl_errno) {
  (void)reason, (void)file, (void)line, (void)gsl_errno;
}

static void test_errors(void **state) {
  (void)state;
  exp_data d;
  int n_out;
  exp_make(&d, 0.01, 0, &n_out);
  cm_fit_opts o;
  cm_fit_opts_default(&o);
  cm_fit_result res;
  rt_err err;
  double u[3];
  /* the caller's GSL error handler is in place again afterwards */
  gsl_error_handler_t *caller = gsl_set_error_handler(counting_handler);

  /* fn fails at the start, in the first Jacobian, then in the middle of
  ** the solve: -1, u kept */
  const int fail_at[3] = {1, 5, 30};
  for (int k = 0; k < 3; k++) {
    int at = fail_at[k];
    fail_ctx f = {&d, 0, at, 0, NULL};
    memcpy(u, EXP_START, sizeof u);
    assert_int_equal(cm_fit(d.n, 3, fail_resid, &f, u, &o, &res, &err), -1);
    print_message("fn fails at call %d: %s\n", at, err.msg);
    assert_non_null(strstr(err.msg, "residual function failed"));
    assert_memory_equal(u, EXP_START, sizeof u);
  }
  /* a message the function left in err (through its ctx) is kept after
  ** cm_fit's own; a stale message from before the call is not */
  for (int k = 0; k < 3; k++) {
    int at = fail_at[k];
    fail_ctx f = {&d, 0, at, 0, &err};
    rt_err_set(&err, "%s", "stale");
    memcpy(u, EXP_START, sizeof u);
    assert_int_equal(cm_fit(d.n, 3, fail_resid, &f, u, &o, &res, &err), -1);
    print_message("fn fails at call %d with a message: %s\n", at, err.msg);
    assert_null(strstr(err.msg, "stale"));
    assert_non_null(strstr(err.msg, "residual function failed"));
    assert_non_null(strstr(err.msg, ": coefficient 2 out of range"));
  }
  /* a non-finite residual at the start */
  {
    fail_ctx f = {&d, 0, 0, 1, NULL};
    memcpy(u, EXP_START, sizeof u);
    assert_int_equal(cm_fit(d.n, 3, fail_resid, &f, u, &o, &res, &err), -1);
    print_message("NaN at start: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "residual 7 is not finite"));
  }
  /* fewer observations than unknowns without a prior */
  memcpy(u, EXP_START, sizeof u);
  assert_int_equal(cm_fit(2, 3, exp_resid, &d, u, &o, &res, &err), -1);
  print_message("n_obs < n_par: %s\n", err.msg);
  assert_non_null(strstr(err.msg, "2 observations cannot determine 3"));
  /* bad options */
  o.lambda = -1;
  assert_int_equal(cm_fit(d.n, 3, exp_resid, &d, u, &o, &res, &err), -1);
  assert_non_null(strstr(err.msg, "lambda"));
  cm_fit_opts_default(&o);
  o.max_iter = 0;
  assert_int_equal(cm_fit(d.n, 3, exp_resid, &d, u, &o, &res, &err), -1);
  assert_non_null(strstr(err.msg, "max_iter"));
  cm_fit_opts_default(&o);
  u[1] = NAN;
  assert_int_equal(cm_fit(d.n, 3, exp_resid, &d, u, &o, &res, &err), -1);
  assert_non_null(strstr(err.msg, "start value 1"));

  assert_ptr_equal(gsl_set_error_handler(caller), counting_handler);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_exp_recover),
    cmocka_unit_test(test_exp_outliers),
    cmocka_unit_test(test_roofline_recover),
    cmocka_unit_test(test_prior),
    cmocka_unit_test(test_prior_underdetermined),
    cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
