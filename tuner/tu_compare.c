/*
** tu_compare.c -- the strategy comparison workflow (tu.h, "Comparison"):
** every strategy of a list run `repeats` times (seeds seed, seed + 1, ...)
** by a source of runs (a recording replayed, or live campaigns: the
** caller's callback), each run's best-so-far curve scored by the
** methodology of Willemsen et al. (tu_score.c) against random search's
** exact expectation over the source's values and the best value known
** anywhere, and the scores summarised per strategy. It prints and writes
** nothing: `rooftune compare` (cli/cmd_replay.c) prints the result and
** writes its CSV files.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tu.h"

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int tu_compare(const tu_cmp_src *src, const tu_strategy *const *list, int ns, int64_t budget,
               int repeats, uint64_t seed, tu_cmp_result *res, rt_err *err) {
  memset(res, 0, sizeof *res);
  if (ns < 1 || budget < 1 || repeats < 1 || src->n < 1) {
    rt_err_set(err, "compare: %d strategies, budget %lld, %d repeats, %lld reference values "
               "(each must be at least 1)", ns, (long long)budget, repeats, (long long)src->n);
    return -1;
  }
  int R = repeats;
  res->ns = ns, res->repeats = R, res->budget = budget, res->seed = seed;
  res->curves = rt_malloc((size_t)ns * R * budget * sizeof *res->curves);
  res->spent = rt_malloc((size_t)ns * R * budget * sizeof *res->spent);
  for (size_t i = 0; i < (size_t)ns * R * budget; i++) res->spent[i] = NAN;
  res->runs = rt_calloc((size_t)ns * R, sizeof *res->runs);
  for (int s = 0; s < ns; s++)
    for (int rep = 0; rep < R; rep++) {
      size_t at = ((size_t)s * R + rep) * budget;
      res->runs[s * R + rep].spent = res->spent + at;
      if (src->run(src->ctx, list[s], seed + (uint64_t)rep, budget, res->curves + at,
                   &res->runs[s * R + rep], err))
        return -1;
      res->runs[s * R + rep].spent = res->spent + at;
    }
  /* The optimum: the best known anywhere (live runs may beat the sample). */
  double opt = src->opt;
  for (size_t i = 0; i < (size_t)ns * R * budget; i++) opt = fmin(opt, res->curves[i]);
  res->opt = opt;
  res->rnd = rt_malloc((size_t)budget * sizeof *res->rnd);
  tu_random_expect(src->values, src->n, budget, res->rnd);
  res->scores = rt_malloc((size_t)ns * R * sizeof *res->scores);
  res->st = rt_calloc((size_t)ns, sizeof *res->st);
  double *sc = rt_malloc((size_t)R * sizeof *sc);
  for (int s = 0; s < ns; s++) {
    tu_cmp_stat *st = &res->st[s];
    double fsum = 0, bsum = 0, m = 0, v = 0;
    for (int rep = 0; rep < R; rep++) {
      const double *curve = res->curves + ((size_t)s * R + rep) * budget;
      const tu_cmp_run *ru = &res->runs[s * R + rep];
      sc[rep] = res->scores[s * R + rep] = tu_score(curve, res->rnd, opt, budget);
      bsum += opt / curve[budget - 1];
      fsum += ru->framework_ms;
      st->found_opt += curve[budget - 1] <= opt;
      st->tuned += ru->tuned;
      m += sc[rep] / R;
    }
    for (int i = 0; i < R; i++) v += (sc[i] - m) * (sc[i] - m);
    qsort(sc, (size_t)R, sizeof *sc, cmp_d);
    st->mean = m;
    st->sd = R > 1 ? sqrt(v / (R - 1)) : 0;
    st->min = sc[0];
    st->median = R % 2 ? sc[R / 2] : (sc[R / 2 - 1] + sc[R / 2]) / 2;
    st->max = sc[R - 1];
    st->best_frac = bsum / R;
    st->ms_per_eval = fsum / R;
  }
  free(sc);
  return 0;
}

void tu_cmp_result_free(tu_cmp_result *res) {
  free(res->curves), free(res->spent), free(res->runs), free(res->rnd), free(res->scores), free(res->st);
  memset(res, 0, sizeof *res);
}
