/*
** ms_stats.c -- timing statistics and the stopping rule.
**
** The median's 95% confidence interval is distribution-free: with n sorted
** durations x(1) <= ... <= x(n), the number of them below the true median
** is X ~ Binomial(n, 1/2), so [x(j), x(k)] covers the median with
** probability P(j <= X < k) = F(k-1) - F(j-1). We take the symmetric pair
** k = n+1-j with the largest j whose coverage is still >= 0.95 (the
** narrowest such interval); when not even j = 1 reaches 0.95 (n <= 5), the
** interval is [min, max].
**
** Noise rule (ms_stats.noisy): the spread is suspicious when
** (max-min)/median > 0.5 or sd/mean > 0.2; ms_time_loop also sets it when
** it stopped (time cap or max_reps) with the CI half-width / median still
** above ci_target.
*/
#include "ms.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>
#include <string.h>

#define MS_CI_LEVEL 0.95
#define MS_NOISE_RANGE 0.5   /* (max-min)/median above this: noisy */
#define MS_NOISE_CV 0.2      /* sd/mean above this: noisy */

/* 1-based ranks (j, k) of the median's CI for n samples; 0 if none. */
static int ci_ranks(int n, int *j, int *k) {
  int best = 0;
  for (int jj = 1; 2 * jj <= n; jj++) {
    int kk = n + 1 - jj;
    double cov = gsl_cdf_binomial_P((unsigned)(kk - 1), 0.5, (unsigned)n) -
                 gsl_cdf_binomial_P((unsigned)(jj - 1), 0.5, (unsigned)n);
    if (cov < MS_CI_LEVEL) break;   /* coverage only shrinks as j grows */
    best = jj;
  }
  if (!best) return 0;
  *j = best;
  *k = n + 1 - best;
  return 1;
}

void ms_stats_compute(double *x, int n, ms_stats *st) {
  memset(st, 0, sizeof *st);
  st->n = n;
  if (n <= 0) return;
  gsl_sort(x, 1, (size_t)n);
  st->min = x[0];
  st->max = x[n - 1];
  st->mean = gsl_stats_mean(x, 1, (size_t)n);
  st->sd = n > 1 ? gsl_stats_sd_m(x, 1, (size_t)n, st->mean) : 0.0;
  st->median = gsl_stats_median_from_sorted_data(x, 1, (size_t)n);
  int j, k;
  if (ci_ranks(n, &j, &k)) {
    st->ci_lo = x[j - 1];
    st->ci_hi = x[k - 1];
  } else {
    st->ci_lo = st->min;
    st->ci_hi = st->max;
  }
  st->noisy = (st->median > 0 && (st->max - st->min) / st->median > MS_NOISE_RANGE) ||
              (st->mean > 0 && st->sd / st->mean > MS_NOISE_CV);
}

/* CI half-width relative to the median (infinite for a zero median). */
static double rel_halfwidth(const ms_stats *st) {
  double hw = 0.5 * (st->ci_hi - st->ci_lo);
  return st->median > 0 ? hw / st->median : (hw > 0 ? 1e300 : 0.0);
}

/* The rule is checked at min_reps and then each time n grew by 5% (so the
** sorting costs O(n log n) amortised, not O(n^2 log n)). */
void ms_time_loop(double (*sample)(void *ctx), void *ctx, const ms_opts *o,
                  ms_stats *st) {
  int maxr = o->max_reps > 0 ? o->max_reps : 1;
  int minr = o->min_reps < 1 ? 1 : o->min_reps > maxr ? maxr : o->min_reps;
  for (int i = 0; i < o->warmup; i++) sample(ctx);
  double *x = rt_malloc((size_t)maxr * sizeof *x);
  double *tmp = rt_malloc((size_t)maxr * sizeof *tmp);
  double sum = 0;
  int n = 0, last_check = 0, converged = 0;
  while (n < maxr) {
    x[n] = sample(ctx);
    sum += x[n++];
    if (sum > o->time_cap) break;
    int step = n / 20 > 1 ? n / 20 : 1;
    if (n >= minr && (last_check == 0 || n - last_check >= step)) {
      last_check = n;
      memcpy(tmp, x, (size_t)n * sizeof *x);
      ms_stats_compute(tmp, n, st);
      if (rel_halfwidth(st) <= o->ci_target) {
        converged = 1;
        break;
      }
    }
  }
  memcpy(tmp, x, (size_t)n * sizeof *x);
  ms_stats_compute(tmp, n, st);
  if (!converged && rel_halfwidth(st) > o->ci_target) st->noisy = 1;
  free(x);
  free(tmp);
}
