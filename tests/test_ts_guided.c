/*
** test_ts_guided.c -- the model-guided strategy (tuner/ts_model.c) on
** synthetic objectives with synthetic models whose quality is known: a
** perfect model finds the brute-force optimum in its first batch; a model
** that ranks backwards but learns from refit (its sign is fitted to the
** results) recovers after the first batch; a model that ranks backwards
** and never learns makes the strategy explore (its later batches are
** mostly the random ones, not the model's picks); the strategy refuses to
** run without a model, never repeats or proposes invalid configurations,
** is deterministic, and works on a space far too large to rank whole.
** The fallback: a model that ranks backwards and never learns hands most
** of each round to the fallback and still finds the optimum within half
** of random search's expected trials ((N + 1) / 2 for one optimum among
** N); a model that ranks backwards for its first 48 results and then well
** is handed back its share (the fallback's share rises above one half and
** falls below it again). The uncertainty: the first round's picks are
** those of the lower confidence bound log(predicted) - sigma, and its
** share of the first round follows the calibration's sigma.
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

#include "tuner/tu.h"
#include "tu_synth.h"

static const char small_space[] =
  "{\"ConfigurationSpace\": {\"TuningParameters\": ["
  "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(12))\"},"
  "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(12))\"},"
  "{\"Name\": \"c\", \"Type\": \"int\", \"Values\": \"list(range(6))\"}],"
  "\"Conditions\": [{\"Expression\": \"a + b != 7\", \"Parameters\": [\"a\", \"b\"]}]}}";

static const char huge_space[] =
  "{\"ConfigurationSpace\": {\"TuningParameters\": ["
  "{\"Name\": \"p0\", \"Type\": \"int\", \"Values\": \"list(range(100))\"},"
  "{\"Name\": \"p1\", \"Type\": \"int\", \"Values\": \"list(range(100))\"},"
  "{\"Name\": \"p2\", \"Type\": \"int\", \"Values\": \"list(range(100))\"},"
  "{\"Name\": \"p3\", \"Type\": \"int\", \"Values\": \"list(range(100))\"},"
  "{\"Name\": \"p4\", \"Type\": \"int\", \"Values\": \"list(range(100))\"},"
  "{\"Name\": \"p5\", \"Type\": \"int\", \"Values\": \"list(range(100))\"}],"
  "\"Conditions\": []}}";

/* A rugged bowl: its optimum is a=9, b=3, c=4 (a + b = 12, allowed). */
static double bowl(const int *c, int np) {
  (void)np;
  double x = c[0] - 9, y = c[1] - 3, z = c[2] - 4;
  return 1 + x * x + 2 * y * y + 0.5 * z * z + 0.3 * ((c[0] * 7 + c[1] * 3 + c[2]) % 5);
}

/* Six parameters, optimum at all 37s. */
static double bowl6(const int *c, int np) {
  double s = 1;
  for (int i = 0; i < np; i++) s += (c[i] - 37.0) * (c[i] - 37.0);
  return s;
}

/* A synthetic model: sign * f, and refit learns the sign from the data
** when learns is set (the sign of the correlation of f with the times). */
typedef struct synth_model {
  fn f;
  int np, learns, refits, last_n;
  double sign;
  int learn_after;   /* > 0: refit learns only from this many results on */
} synth_model;

static int sm_predict(void *m, const int *cfgs, int n, double *t) {
  synth_model *s = m;
  for (int i = 0; i < n; i++) t[i] = s->sign * s->f(cfgs + (size_t)i * s->np, s->np);
  return 0;
}

static int sm_refit(void *m, const int *cfgs, const double *t, int n) {
  synth_model *s = m;
  s->refits++;
  s->last_n = n;
  if (!s->learns || n < s->learn_after) return -1;
  double sx = 0, sy = 0, sxy = 0;
  for (int i = 0; i < n; i++) {
    double x = s->f(cfgs + (size_t)i * s->np, s->np);
    sx += x, sy += t[i], sxy += x * t[i];
  }
  s->sign = sxy - sx * sy / n >= 0 ? 1 : -1;
  return 0;
}

static sp_space *load(const char *text) {
  rt_err err = {0};
  sp_space *sp = sp_load_string(text, "guided", NULL, 0, &err);
  assert_non_null(sp);
  return sp;
}

static tu_run *guided_run_sig(sp_space *sp, fn f, synth_model *m, uint64_t seed, int64_t budget,
                              int (*sigma)(void *, const int *, int, double *)) {
  obj_ctx o = {sp, f, 0};
  tu_objective obj = {synth_eval, &o, NULL};
  tu_run_opts opts = {.strategy = &ts_model, .seed = seed, .max_evals = budget, .batch = 16,
                      .predict = sm_predict, .refit = sm_refit, .model = m, .sigma = sigma};
  rt_err err = {0};
  tu_run *r = tu_run_strategy(sp, &obj, &opts, NULL, &err);
  if (!r) fprintf(stderr, "%s\n", err.msg);
  assert_non_null(r);
  return r;
}

static tu_run *guided_run(sp_space *sp, fn f, synth_model *m, uint64_t seed, int64_t budget) {
  return guided_run_sig(sp, f, m, seed, budget, NULL);
}

/* The evaluation at which the optimum was first found (1-based), 0 if not. */
static int64_t found_at(tu_run *r, double opt) {
  for (int64_t i = 0; i < tu_run_n(r); i++) {
    const tu_obs *o = tu_run_obs(r, i);
    if (o->ok && o->value <= opt) return i + 1;
  }
  return 0;
}

static void test_needs_model(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  obj_ctx o = {sp, bowl, 0};
  tu_objective obj = {synth_eval, &o, NULL};
  tu_run_opts opts = {.strategy = &ts_model, .seed = 1, .max_evals = 10};
  rt_err err = {0};
  assert_null(tu_run_strategy(sp, &obj, &opts, NULL, &err));
  assert_non_null(strstr(err.msg, "model"));
  sp_free(sp);
}

static void test_perfect_model(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  double opt = brute_optimum(sp, bowl);
  for (uint64_t seed = 1; seed <= 5; seed++) {
    synth_model m = {bowl, 3, 1, 0, 0, 1, 0};
    tu_run *r = guided_run(sp, bowl, &m, seed, 16);
    int64_t at = found_at(r, opt);
    assert_true(at >= 1 && at <= 16);
    tu_run_free(r);
  }
  sp_free(sp);
}

static void test_learning_model(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  double opt = brute_optimum(sp, bowl);
  synth_model m = {bowl, 3, 1, 0, 0, -1, 0};   /* backwards until it learns */
  tu_run *r = guided_run(sp, bowl, &m, 7, 48);
  int64_t at = found_at(r, opt);
  assert_true(m.refits >= 1);
  assert_true(m.sign == 1);
  /* refit sees every successful result so far */
  assert_true(m.last_n >= 16 && m.last_n <= 48);
  /* found in the batch after the first refit */
  assert_true(at > 16 && at <= 32);
  tu_run_free(r);
  sp_free(sp);
}

/* A model that never learns: after its picks disagree with the results,
** most of each batch is random. Measured on evaluations 33..48: how many
** are among the 48 worst configurations of the space (what a backwards
** model without exploration would pick: all 16), and for a good model
** among the 48 best (what it picks: all but its random share). */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void test_explores_when_wrong(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  int np = sp_nparams(sp), n = 0, *c = malloc((size_t)np * sizeof *c);
  double *all = malloc((size_t)sp_count(sp) * sizeof *all);
  assert_int_equal(sp_unrank(sp, 0, c), 0);
  do all[n++] = bowl(c, np); while (sp_next(sp, c));
  qsort(all, (size_t)n, sizeof *all, cmp_double);
  double worst48 = all[n - 48], best48 = all[47];
  synth_model bad = {bowl, 3, 0, 0, 0, -1, 0}, good = {bowl, 3, 0, 0, 0, 1, 0};
  tu_run *rb = guided_run(sp, bowl, &bad, 3, 48), *rg = guided_run(sp, bowl, &good, 3, 48);
  int64_t nb = 0, ng = 0;
  for (int64_t i = 32; i < 48; i++) {
    nb += tu_run_obs(rb, i)->value >= worst48;
    ng += tu_run_obs(rg, i)->value <= best48;
  }
  printf("evaluations 33..48: backwards model %lld among the 48 worst, good model %lld among "
         "the 48 best\n", (long long)nb, (long long)ng);
  assert_true(nb <= 6);    /* at most the model's share (~20%) plus chance */
  assert_true(ng >= 12);   /* the good model keeps exploiting (~90%) */
  assert_true(bad.refits > 0);
  tu_run_free(rb);
  tu_run_free(rg);
  free(c), free(all);
  sp_free(sp);
}

static void test_valid_distinct_deterministic(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  int np = sp_nparams(sp);
  synth_model m1 = {bowl, 3, 1, 0, 0, -1, 0}, m2 = m1, m3 = m1;
  tu_run *a = guided_run(sp, bowl, &m1, 42, 80), *b = guided_run(sp, bowl, &m2, 42, 80),
         *c = guided_run(sp, bowl, &m3, 43, 80);
  assert_int_equal(tu_run_n(a), 80);
  assert_int_equal(tu_run_n(a), tu_run_n(b));
  int differ = 0;
  for (int64_t i = 0; i < tu_run_n(a); i++) {
    assert_true(sp_valid(sp, tu_run_cfg(a, i), NULL));
    for (int64_t j = 0; j < i; j++)
      assert_false(!memcmp(tu_run_cfg(a, i), tu_run_cfg(a, j), (size_t)np * sizeof(int)));
    assert_memory_equal(tu_run_cfg(a, i), tu_run_cfg(b, i), (size_t)np * sizeof(int));
    differ |= memcmp(tu_run_cfg(a, i), tu_run_cfg(c, i), (size_t)np * sizeof(int)) != 0;
  }
  assert_true(differ);
  tu_run_free(a), tu_run_free(b), tu_run_free(c);
  /* the whole space: it ends on the space, every configuration once */
  synth_model m4 = {bowl, 3, 1, 0, 0, 1, 0};
  tu_run *all = guided_run(sp, bowl, &m4, 1, 0);
  assert_int_equal(tu_run_n(all), (int64_t)sp_count(sp));
  assert_int_equal(tu_run_end(all), TU_END_SPACE);
  tu_run_free(all);
  sp_free(sp);
}

/* 10^12 configurations: ranked from a sample plus the neighbours of the
** best results, it walks to the optimum with a perfect model. */
static void test_huge_space(void **state) {
  (void)state;
  sp_space *sp = load(huge_space);
  synth_model m = {bowl6, 6, 1, 0, 0, 1, 0};
  tu_run *r = guided_run(sp, bowl6, &m, 5, 160);
  double best = INFINITY;
  for (int64_t i = 0; i < tu_run_n(r); i++) best = fmin(best, tu_run_obs(r, i)->value);
  printf("huge space: best %.0f after 160 evaluations (optimum 1; a random sample of 160 "
         "expects about %.0f)\n", best, 1 + 6 * 817.0 * 0.35);
  assert_true(best <= 50);
  tu_run_free(r);
  sp_free(sp);
}

/* An adversarial model (backwards, never learns): the fallback takes most
** of each round, and the optimum is found in at most half of random
** search's expected trials, (N + 1) / 2 (median over 9 seeds); a perfect
** model leaves the fallback its minimum. */
static void test_fallback_adversarial(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  double opt = brute_optimum(sp, bowl);
  int64_t n = (int64_t)sp_count(sp);
  double at[9];
  double rnd = (n + 1) / 2.0;
  for (int k = 0; k < 9; k++) {
    synth_model bad = {bowl, 3, 0, 0, 0, -1, 0};
    int64_t half = (int64_t)ceil(rnd / 2);   /* not found within it: counted as half + 1 */
    tu_run *r = guided_run(sp, bowl, &bad, 100 + (uint64_t)k, half);
    at[k] = (double)found_at(r, opt);
    if (!at[k]) at[k] = (double)half + 1;
    tu_guide g = tu_run_guide(r);
    assert_non_null(g.fallback_name);
    assert_string_equal(g.fallback_name, "bayes");
    if (k == 0)
      printf("adversarial model, seed 100: optimum at %.0f; proposals %lld model, %lld %s; last rho %.2f\n",
             at[k], (long long)g.model, (long long)g.fallback, g.fallback_name, g.rho);
    assert_true(g.rho < 0);
    tu_run_free(r);
    synth_model bad48 = {bowl, 3, 0, 0, 0, -1, 0};
    r = guided_run(sp, bowl, &bad48, 100 + (uint64_t)k, 96);
    g = tu_run_guide(r);
    assert_true(g.fallback >= 0.6 * (double)(g.model + g.fallback));
    tu_run_free(r);
  }
  qsort(at, 9, sizeof *at, cmp_double);
  printf("adversarial model: median trials to the optimum %.0f of %lld (random search expects %.1f)\n",
         at[4], (long long)n, rnd);
  assert_true(at[4] <= rnd / 2);
  synth_model good = {bowl, 3, 0, 0, 0, 1, 0};
  tu_run *r = guided_run(sp, bowl, &good, 3, 96);
  tu_guide g = tu_run_guide(r);
  assert_true(g.fallback <= 0.2 * (double)(g.model + g.fallback));
  assert_int_equal(g.switches, 0);
  tu_run_free(r);
  sp_free(sp);
}

/* Backwards for the first 48 results, then (refit) right: the fallback's
** share rises above one half, then falls below it again, and the model's
** last agreement is good. */
static void test_fallback_and_back(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  synth_model m = {bowl, 3, 1, 0, 0, -1, 48};
  tu_run *r = guided_run(sp, bowl, &m, 11, 200);
  tu_guide g = tu_run_guide(r);
  printf("backwards then right: %d switches, last rho %.2f, proposals %lld model %lld fallback\n",
         g.switches, g.rho, (long long)g.model, (long long)g.fallback);
  assert_true(m.sign == 1);
  assert_true(g.switches >= 2);
  assert_true(g.rho > 0.6);
  tu_run_free(r);
  sp_free(sp);
}

/* The first round's picks are the best lower confidence bounds: a perfect
** model unsure (sigma 3) of the configurations with c == 5 only, sure of
** the rest: those come first (log(pred) - 3 puts them below every sure
** one), the best of them first. */
static int sig_c5(void *m, const int *cfgs, int n, double *s) {
  synth_model *sm = m;
  for (int i = 0; i < n; i++) s[i] = cfgs[(size_t)i * sm->np + 2] == 5 ? 3.0 : 0.0;
  return 0;
}

static void test_lower_bound(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  synth_model m = {bowl, 3, 0, 0, 0, 1, 0};
  tu_run *r = guided_run_sig(sp, bowl, &m, 1, 14, sig_c5);
  /* the model's picks of the first round (14 of 16: the fallback's 2 after) */
  double prev = 0;
  for (int64_t i = 0; i < tu_run_n(r); i++) {
    assert_int_equal(tu_run_cfg(r, i)[2], 5);
    double v = tu_run_obs(r, i)->value;
    assert_true(v >= prev);
    prev = v;
  }
  tu_run_free(r);
  sp_free(sp);
}

/* Before the agreement is measured the share follows the calibration's
** uncertainty: a model sure of everything (sigma 0) keeps 14 of its first
** 16 proposals (the minimum share, 10%, rounds to 2), one unsure of
** everything (sigma 1, beyond SIG_BAD) only 3 (80% to the fallback). */
static int sig_0(void *m, const int *cfgs, int n, double *s) {
  (void)m, (void)cfgs;
  for (int i = 0; i < n; i++) s[i] = 0;
  return 0;
}
static int sig_1(void *m, const int *cfgs, int n, double *s) {
  (void)m, (void)cfgs;
  for (int i = 0; i < n; i++) s[i] = 1;
  return 0;
}

static void test_prior_share(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  synth_model m = {bowl, 3, 0, 0, 0, 1, 0};
  tu_run *sure = guided_run_sig(sp, bowl, &m, 1, 16, sig_0), *unsure = guided_run_sig(sp, bowl, &m, 1, 16, sig_1);
  tu_guide a = tu_run_guide(sure), b = tu_run_guide(unsure);
  printf("first round: sure model %lld + %lld fallback, unsure %lld + %lld\n", (long long)a.model,
         (long long)a.fallback, (long long)b.model, (long long)b.fallback);
  assert_int_equal(a.model, 14);
  assert_int_equal(a.fallback, 2);
  assert_int_equal(b.model, 3);
  assert_int_equal(b.fallback, 13);
  tu_run_free(sure), tu_run_free(unsure);
  sp_free(sp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_needs_model),
    cmocka_unit_test(test_perfect_model),
    cmocka_unit_test(test_learning_model),
    cmocka_unit_test(test_explores_when_wrong),
    cmocka_unit_test(test_valid_distinct_deterministic),
    cmocka_unit_test(test_huge_space),
    cmocka_unit_test(test_fallback_adversarial),
    cmocka_unit_test(test_fallback_and_back),
    cmocka_unit_test(test_lower_bound),
    cmocka_unit_test(test_prior_share),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
