/*
** cm_metrics.c -- accuracy of the cost model's ranking against measured
** times (cm.h, "Accuracy of a ranking"): Spearman's rho with mid-ranks for
** ties, Kendall's tau-b, whether the model's top k holds a near-best
** schedule, and the median relative error of the predicted times.
** Missing values: an item whose x/pred or y/actual is NaN is skipped by
** every metric, so each works on the complete pairs only (infinities are
** ordinary values that rank last or first; two equal infinities tie).
** A correlation over fewer than 2 complete pairs, or with one side
** constant, is NAN (undefined); so is the median of no items.
*/
#include "cost_model/cm.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

/* Copy the complete pairs (neither NaN) of x, y into a, b; their number. */
static int complete_pairs(const double *x, const double *y, int n, double *a,
                          double *b) {
  int m = 0;
  for (int i = 0; i < n; i++)
    if (!isnan(x[i]) && !isnan(y[i])) a[m] = x[i], b[m] = y[i], m++;
  return m;
}

/* Spearman's rho: the Pearson correlation of the ranks, tied values
** sharing their mean rank (GSL's gsl_stats_spearman ranks that way).
** NAN below 2 complete pairs or when either side is constant. */
double cm_spearman(const double *x, const double *y, int n) {
  if (n < 2) return NAN;
  double *a = rt_malloc((size_t)n * sizeof *a);
  double *b = rt_malloc((size_t)n * sizeof *b);
  double *work = rt_malloc(2 * (size_t)n * sizeof *work);
  int m = complete_pairs(x, y, n, a, b);
  double rho = NAN;
  if (m >= 2) {
    rho = gsl_stats_spearman(a, 1, b, 1, (size_t)m, work);
    if (!isfinite(rho)) rho = NAN;   /* a constant side: 0/0 */
  }
  free(work);
  free(b);
  free(a);
  return rho;
}

static int sgn(double v) { return (v > 0) - (v < 0); }

/* Kendall's tau-b over all pairs of complete items (O(m^2)):
** (C - D) / sqrt((P - Tx) (P - Ty)) with C concordant and D discordant
** pairs, P all pairs, Tx (Ty) pairs tied in x (y), ties in both counted in
** each. NAN below 2 complete pairs or when a side is constant. */
double cm_kendall(const double *x, const double *y, int n) {
  if (n < 2) return NAN;
  double *a = rt_malloc((size_t)n * sizeof *a);
  double *b = rt_malloc((size_t)n * sizeof *b);
  int m = complete_pairs(x, y, n, a, b);
  double s = 0, nx = 0, ny = 0;  /* sum of sign products; untied pairs */
  for (int i = 0; i < m; i++)
    for (int j = i + 1; j < m; j++) {
      int dx = sgn(a[i] - a[j]), dy = sgn(b[i] - b[j]);  /* inf-inf: tie */
      s += dx * dy;
      nx += dx != 0;
      ny += dy != 0;
    }
  free(b);
  free(a);
  if (m < 2 || nx == 0 || ny == 0) return NAN;
  return s / sqrt(nx * ny);
}

/* Items are the complete pairs (pred, actual). The model's top k: every
** item whose prediction is <= the k-th smallest prediction, so items tied
** with the k-th are all in (the top k may hold more than k items). Hit
** when one of them has actual <= best + tol * |best|, best the smallest
** actual over all complete items. 0 when k < 1 or no item is complete. */
int cm_topk_hit(const double *pred, const double *actual, int n, int k,
                double tol) {
  if (n < 1 || k < 1) return 0;
  double *p = rt_malloc((size_t)n * sizeof *p);
  double *a = rt_malloc((size_t)n * sizeof *a);
  double *ps = rt_malloc((size_t)n * sizeof *ps);
  int m = complete_pairs(pred, actual, n, p, a);
  int hit = 0;
  if (m > 0) {
    double best = a[0];
    for (int i = 1; i < m; i++) best = fmin(best, a[i]);
    double limit = best + tol * fabs(best);
    for (int i = 0; i < m; i++) ps[i] = p[i];
    gsl_sort(ps, 1, (size_t)m);
    double pk = ps[(k < m ? k : m) - 1];
    for (int i = 0; i < m && !hit; i++) hit = p[i] <= pk && a[i] <= limit;
  }
  free(ps);
  free(a);
  free(p);
  return hit;
}

/* Median over complete items with a finite non-zero actual of
** |pred - actual| / |actual|; NAN when there are none. */
double cm_median_rel_err(const double *pred, const double *actual, int n) {
  if (n < 1) return NAN;
  double *e = rt_malloc((size_t)n * sizeof *e);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (!isnan(pred[i]) && isfinite(actual[i]) && actual[i] != 0)
      e[m++] = fabs(pred[i] - actual[i]) / fabs(actual[i]);
  double med = m ? gsl_stats_median(e, 1, (size_t)m) : NAN;
  free(e);
  return med;
}
