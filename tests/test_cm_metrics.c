/*
** test_cm_metrics.c -- the ranking accuracy metrics against values
** computed by hand (worked in the comments) and, for Kendall's tau-b,
** against an independent brute force written here (concordant and
** discordant pairs counted over all pairs, ties counted from tie groups
** of the sorted values) on random vectors with many ties; top-k with ties
** at the boundary and tolerances either side of the limit; the median
** relative error; and the documented NaN and degenerate cases.
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

#include <gsl/gsl_rng.h>

#include "cost_model/cm.h"

#define assert_near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

/* ---- Spearman ---- */

static void test_spearman_hand(void **state) {
  (void)state;
  /* no ties: x = 1..5, y = {2,1,4,3,5}; d = {-1,1,-1,1,0}, sum d^2 = 4,
  ** rho = 1 - 6 * 4 / (5 * 24) = 0.8 */
  const double x[5] = {1, 2, 3, 4, 5}, y[5] = {2, 1, 4, 3, 5};
  assert_near(cm_spearman(x, y, 5), 0.8, 1e-12);
  /* ties in y: y = {5,6,7,8,7} has ranks {1,2,3.5,5,3.5}; about the mean 3,
  ** dx = {-2,-1,0,1,2}, dy = {-2,-1,.5,2,.5}: sum dx dy = 8, sum dx^2 = 10,
  ** sum dy^2 = 9.5, rho = 8 / sqrt(95) = 0.8207826816681233 */
  const double y2[5] = {5, 6, 7, 8, 7};
  assert_near(cm_spearman(x, y2, 5), 8 / sqrt(95), 1e-12);
  assert_near(cm_spearman(x, y2, 5), 0.8207826816681233, 1e-12);
  /* ties on both sides: x = {1,1,2,3} ranks {1.5,1.5,3,4}, y = {1,2,2,3}
  ** ranks {1,2.5,2.5,4}; about 2.5: dx = {-1,-1,.5,1.5},
  ** dy = {-1.5,0,0,1.5}: sum dx dy = 3.75, sum dx^2 = sum dy^2 = 4.5,
  ** rho = 3.75 / 4.5 = 5/6 */
  const double x3[4] = {1, 1, 2, 3}, y3[4] = {1, 2, 2, 3};
  assert_near(cm_spearman(x3, y3, 4), 5.0 / 6, 1e-12);
  /* symmetric in its arguments */
  assert_near(cm_spearman(y3, x3, 4), 5.0 / 6, 1e-12);
  /* perfect, reversed, and invariant under monotone maps */
  const double r[5] = {5, 4, 3, 2, 1};
  double e[5];
  for (int i = 0; i < 5; i++) e[i] = exp(3 * x[i]);
  assert_near(cm_spearman(x, x, 5), 1.0, 1e-12);
  assert_near(cm_spearman(x, r, 5), -1.0, 1e-12);
  assert_near(cm_spearman(x, e, 5), 1.0, 1e-12);
}

static void test_spearman_degenerate(void **state) {
  (void)state;
  /* NaN in either skips the pair: {1,2,3} vs {1,2,3} is left: 1 */
  const double x[5] = {1, NAN, 2, 3, 4}, y[5] = {1, 5, 2, 3, NAN};
  assert_near(cm_spearman(x, y, 5), 1.0, 1e-12);
  /* the same pairs reversed: -1 */
  const double yr[5] = {3, 0, 2, 1, NAN};
  assert_near(cm_spearman(x, yr, 5), -1.0, 1e-12);
  /* fewer than 2 complete pairs, n 0 or 1, a constant side: NAN */
  const double c[3] = {2, 2, 2}, z[3] = {1, 2, 3};
  const double one[3] = {1, NAN, NAN};
  assert_true(isnan(cm_spearman(z, z, 0)));
  assert_true(isnan(cm_spearman(z, z, 1)));
  assert_true(isnan(cm_spearman(z, one, 3)));
  assert_true(isnan(cm_spearman(c, z, 3)));
  assert_true(isnan(cm_spearman(z, c, 3)));
}

/* ---- Kendall tau-b ---- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Pairs tied in v (m values): sum over groups of equal values of
** t (t - 1) / 2, from a sorted copy. */
static double tied_pairs(const double *v, int m) {
  double *s = malloc((size_t)m * sizeof *s), t = 0;
  memcpy(s, v, (size_t)m * sizeof *s);
  qsort(s, (size_t)m, sizeof *s, cmp_double);
  for (int i = 0; i < m;) {
    int j = i;
    while (j < m && s[j] == s[i]) j++;
    t += (double)(j - i) * (j - i - 1) / 2;
    i = j;
  }
  free(s);
  return t;
}

/* tau-b by the textbook formula (nc - nd) / sqrt((n0 - n1)(n0 - n2)),
** n0 = m (m - 1) / 2, after dropping pairs with a NaN. */
static double kendall_brute(const double *x, const double *y, int n) {
  double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (x[i] == x[i] && y[i] == y[i]) a[m] = x[i], b[m] = y[i], m++;
  double nc = 0, nd = 0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      if (i == j) continue;
      /* ordered pairs, halved below */
      if ((a[i] < a[j] && b[i] < b[j]) || (a[i] > a[j] && b[i] > b[j])) nc++;
      if ((a[i] < a[j] && b[i] > b[j]) || (a[i] > a[j] && b[i] < b[j])) nd++;
    }
  nc /= 2, nd /= 2;
  double n0 = (double)m * (m - 1) / 2;
  double n1 = tied_pairs(a, m), n2 = tied_pairs(b, m);
  free(a), free(b);
  return (nc - nd) / sqrt((n0 - n1) * (n0 - n2));
}

static void test_kendall_hand(void **state) {
  (void)state;
  /* x = 1..5, y = {2,1,4,3,5}: of 10 pairs (1,2) and (3,4) are discordant:
  ** (8 - 2) / 10 = 0.6 */
  const double x[5] = {1, 2, 3, 4, 5}, y[5] = {2, 1, 4, 3, 5};
  assert_near(cm_kendall(x, y, 5), 0.6, 1e-12);
  /* x = {1,1,2,3}, y = {1,2,2,3}: pair (1,2) tied in x, (2,3) tied in y,
  ** the other 4 concordant: 4 / sqrt((6 - 1)(6 - 1)) = 0.8 */
  const double x3[4] = {1, 1, 2, 3}, y3[4] = {1, 2, 2, 3};
  assert_near(cm_kendall(x3, y3, 4), 0.8, 1e-12);
  /* perfect and reversed */
  const double r[5] = {5, 4, 3, 2, 1};
  assert_near(cm_kendall(x, x, 5), 1.0, 1e-12);
  assert_near(cm_kendall(x, r, 5), -1.0, 1e-12);
  /* perfect with ties on both sides in the same places: 1 (tau-b; tau-a
  ** would give 5/6 here) */
  const double t[4] = {1, 1, 2, 3};
  assert_near(cm_kendall(t, t, 4), 1.0, 1e-12);
  /* NaN pairs skipped: {1,2,3} vs {3,2,1} */
  const double xn[4] = {1, 2, NAN, 3}, yn[4] = {3, 2, 0, 1};
  assert_near(cm_kendall(xn, yn, 4), -1.0, 1e-12);
  /* degenerate: NAN */
  const double c[3] = {2, 2, 2};
  assert_true(isnan(cm_kendall(x, x, 0)));
  assert_true(isnan(cm_kendall(x, x, 1)));
  assert_true(isnan(cm_kendall(c, x, 3)));
  assert_true(isnan(cm_kendall(x, c, 3)));
}

static void test_kendall_brute(void **state) {
  (void)state;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 777);
  enum { N = 300 };
  double x[N], y[N];
  for (int trial = 0; trial < 20; trial++) {
    int n = 2 + (int)gsl_rng_uniform_int(rng, N - 1);
    int levels = 2 + (int)gsl_rng_uniform_int(rng, 12);   /* many ties */
    for (int i = 0; i < n; i++) {
      x[i] = (double)gsl_rng_uniform_int(rng, (unsigned long)levels);
      /* y follows x with noise so tau is far from 0 in some trials */
      y[i] = trial % 2 ? x[i] + (double)gsl_rng_uniform_int(rng, 4)
                       : (double)gsl_rng_uniform_int(rng, (unsigned long)levels);
      if (gsl_rng_uniform(rng) < 0.03) (gsl_rng_uniform(rng) < 0.5 ? x : y)[i] = NAN;
    }
    double want = kendall_brute(x, y, n), got = cm_kendall(x, y, n);
    if (isnan(want)) assert_true(isnan(got));
    else assert_near(got, want, 1e-12);
  }
  gsl_rng_free(rng);
}

/* ---- top k ---- */

static void test_topk(void **state) {
  (void)state;
  /* the model ranks the true best (actual 6.1) last */
  const double p[5] = {1, 2, 3, 4, 5}, a[5] = {10, 9, 8, 7, 6.1};
  assert_int_equal(cm_topk_hit(p, a, 5, 1, 0.05), 0);
  assert_int_equal(cm_topk_hit(p, a, 5, 4, 0.05), 0);   /* 7 > 6.405 */
  assert_int_equal(cm_topk_hit(p, a, 5, 4, 0.15), 1);   /* 7 <= 7.015 */
  assert_int_equal(cm_topk_hit(p, a, 5, 5, 0.0), 1);
  assert_int_equal(cm_topk_hit(p, a, 5, 50, 0.0), 1);   /* k > n: all */
  assert_int_equal(cm_topk_hit(p, a, 5, 0, 1.0), 0);    /* k < 1 */
  /* the tolerance either side of the limit: best 100, limit 105 */
  const double p2[3] = {1, 2, 3}, hit[3] = {104.9, 200, 100},
               miss[3] = {105.1, 200, 100};
  assert_int_equal(cm_topk_hit(p2, hit, 3, 1, 0.05), 1);
  assert_int_equal(cm_topk_hit(p2, miss, 3, 1, 0.05), 0);
  assert_int_equal(cm_topk_hit(p2, miss, 3, 2, 0.05), 0);
  assert_int_equal(cm_topk_hit(p2, miss, 3, 3, 0.05), 1);
  /* ties in pred at the boundary: the 2nd smallest prediction is 2, so all
  ** three items predicted 2 are in the top 2, among them the best */
  const double pt[5] = {1, 2, 2, 2, 3}, at[5] = {5, 4, 4, 1, 3};
  assert_int_equal(cm_topk_hit(pt, at, 5, 2, 0.0), 1);
  assert_int_equal(cm_topk_hit(pt, at, 5, 1, 0.0), 0);
  /* order of the items does not matter */
  const double pt2[5] = {2, 3, 2, 1, 2}, at2[5] = {1, 3, 4, 5, 4};
  assert_int_equal(cm_topk_hit(pt2, at2, 5, 2, 0.0), 1);
  assert_int_equal(cm_topk_hit(pt2, at2, 5, 1, 0.0), 0);
  /* NaN: an item with a NaN prediction is not ranked and not the best;
  ** here the best complete actual is 7 (item 3), predicted 4th */
  const double pn[5] = {1, 2, 3, 4, NAN}, an[5] = {10, 9, 8, 7, 1};
  assert_int_equal(cm_topk_hit(pn, an, 5, 3, 0.0), 0);
  assert_int_equal(cm_topk_hit(pn, an, 5, 4, 0.0), 1);
  /* a NaN actual does not count as best either */
  const double an2[5] = {10, NAN, 8, 7, 1};
  assert_int_equal(cm_topk_hit(p, an2, 5, 2, 0.0), 0);
  assert_int_equal(cm_topk_hit(p, an2, 5, 5, 0.0), 1);
  /* nothing complete, or n 0 */
  const double allnan[2] = {NAN, NAN};
  assert_int_equal(cm_topk_hit(allnan, a, 2, 1, 1.0), 0);
  assert_int_equal(cm_topk_hit(p, a, 0, 1, 1.0), 0);
}

/* ---- median relative error ---- */

static void test_median_rel_err(void **state) {
  (void)state;
  /* errors {0.1, 0, 0.1, 0.25}: median of four = (0.1 + 0.1) / 2 */
  const double p[4] = {1.1, 2, 2.7, 5}, a[4] = {1, 2, 3, 4};
  assert_near(cm_median_rel_err(p, a, 4), 0.1, 1e-12);
  /* errors {0.5, 0, 0.25}: 0.25 */
  const double p2[3] = {1.5, 2, 3}, a2[3] = {1, 2, 4};
  assert_near(cm_median_rel_err(p2, a2, 3), 0.25, 1e-12);
  /* an under-prediction counts by its absolute value: |1 - 4| / 4 */
  const double p3[1] = {1}, a3[1] = {4};
  assert_near(cm_median_rel_err(p3, a3, 1), 0.75, 1e-12);
  /* skipped: NaN on either side, actual 0; errors left {0.5, 0, 0.25} */
  const double p4[6] = {1.5, 2, 3, NAN, 7, 1}, a4[6] = {1, 2, 4, 5, NAN, 0};
  assert_near(cm_median_rel_err(p4, a4, 6), 0.25, 1e-12);
  /* none left, n 0: NAN */
  const double z[2] = {0, 0};
  assert_true(isnan(cm_median_rel_err(p, z, 2)));
  assert_true(isnan(cm_median_rel_err(p, a, 0)));
  /* the inputs are not reordered */
  const double keep[4] = {1.1, 2, 2.7, 5};
  assert_memory_equal(p, keep, sizeof keep);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_spearman_hand),
    cmocka_unit_test(test_spearman_degenerate),
    cmocka_unit_test(test_kendall_hand),
    cmocka_unit_test(test_kendall_brute),
    cmocka_unit_test(test_topk),
    cmocka_unit_test(test_median_rel_err),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
