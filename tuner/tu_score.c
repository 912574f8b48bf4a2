/*
** tu_score.c -- the scoring methodology of Willemsen et al. ("A
** methodology for comparing optimization algorithms for auto-tuning",
** FGCS 2024), counted in evaluations: a strategy's best-so-far curve is
** standardised against the exact expectation of random search without
** replacement (0) and the optimum (1), and averaged over the budget.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tu.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The worst ok value (NAN when none is ok). */
static double worst_ok(const double *v, int64_t n) {
  double w = NAN;
  for (int64_t i = 0; i < n; i++)
    if (!isnan(v[i]) && (isnan(w) || v[i] > w)) w = v[i];
  return w;
}

void tu_random_expect(const double *values, int64_t n, int64_t kmax, double *out) {
  double w = worst_ok(values, n);
  double *v = rt_malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  for (int64_t i = 0; i < n; i++) v[i] = isnan(values[i]) ? w : values[i];
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  for (int64_t k = 1; k <= kmax; k++) {
    if (k > n) {
      out[k - 1] = out[n - 1];
      continue;
    }
    /* p_i = P(the i-th smallest is the minimum of k draws) =
    ** C(n-i, k-1) / C(n, k); p_1 = k/n, p_{i+1} = p_i (n-i-k+1)/(n-i). */
    double p = (double)k / (double)n, e = 0;
    for (int64_t i = 1; i <= n - k + 1 && p > 0; i++) {
      e += v[i - 1] * p;
      p *= (double)(n - i - k + 1) / (double)(n - i);
    }
    out[k - 1] = e;
  }
  free(v);
}

void tu_run_curve(const tu_run *r, int64_t kmax, double worst, double *out) {
  double best = worst;
  int64_t n = tu_run_n(r);
  for (int64_t k = 1; k <= kmax; k++) {
    if (k <= n) {
      const tu_obs *o = tu_run_obs(r, k - 1);
      if (o->ok && o->value < best) best = o->value;
    }
    out[k - 1] = best;
  }
}

double tu_score(const double *curve, const double *random_curve, double opt, int64_t kmax) {
  double sum = 0;
  int64_t used = 0;
  for (int64_t k = 0; k < kmax; k++) {
    double span = random_curve[k] - opt;
    if (!(span > 1e-12 * fabs(opt))) continue;
    sum += (random_curve[k] - curve[k]) / span;
    used++;
  }
  return used ? sum / (double)used : NAN;
}
