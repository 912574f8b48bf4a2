/*
** test_ts_search.c -- the search strategies annealing, genetic, de and pso
** run through tu_run_strategy on synthetic objectives whose optimum is
** known by brute force over small spaces (a separable quadratic bowl with
** conditions, a deceptive rugged landscape, a bowl whose best region borders
** one that fails, a plateau full of ties, the bowl on a flat landscape), and on a space of 10^12
** configurations. Asserted for every strategy: every evaluation is valid
** and distinct, hardly any proposal repeats a known configuration, the
** evaluation sequence depends only on the seed, a generous budget finds the
** optimum, and a huge space runs its budget without trouble. And inform():
** a strategy told of a much better result it did not find (as the bandit
** tells its arms) continues its search from there (bayes included).
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

#include "tuner/tu.h"
#include "tu_synth.h"

static const tu_strategy *const strategies[] = {&ts_annealing, &ts_genetic, &ts_de, &ts_pso};
#define NSTRAT 4
#define BATCH 16

/* ---- Spaces ---- */

/* 5 parameters, 10*10*5*8*2 = 8000 combinations, two conditions. */
static const char *small_space =
    "{\"ConfigurationSpace\": {\"TuningParameters\": ["
    "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(10))\"},"
    "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(10))\"},"
    "{\"Name\": \"c\", \"Type\": \"int\", \"Values\": \"[1, 2, 4, 8, 16]\"},"
    "{\"Name\": \"d\", \"Type\": \"int\", \"Values\": \"list(range(8))\"},"
    "{\"Name\": \"e\", \"Type\": \"int\", \"Values\": \"[0, 1]\"},"
    "{\"Name\": \"k\", \"Type\": \"int\", \"Values\": \"[7]\"}],"
    "\"Conditions\": ["
    "{\"Expression\": \"a + b <= 14\", \"Parameters\": [\"a\", \"b\"]},"
    "{\"Expression\": \"c * d <= 48 or e == 1\", \"Parameters\": [\"c\", \"d\", \"e\"]}]}}";

/* 12 parameters of 10 values (10^12 combinations) with two conditions. */
static const char *huge_space_text(void) {
  static char text[4096];
  size_t n = (size_t)snprintf(text, sizeof text, "{\"ConfigurationSpace\": {\"TuningParameters\": [");
  for (int p = 0; p < 12; p++)
    n += (size_t)snprintf(text + n, sizeof text - n,
                          "%s{\"Name\": \"p%d\", \"Type\": \"int\", \"Values\": \"list(range(10))\"}",
                          p ? "," : "", p);
  snprintf(text + n, sizeof text - n,
           "], \"Conditions\": ["
           "{\"Expression\": \"p0 + p1 <= 15\", \"Parameters\": [\"p0\", \"p1\"]},"
           "{\"Expression\": \"p2 * p3 != 12\", \"Parameters\": [\"p2\", \"p3\"]}]}}");
  return text;
}

static sp_space *load(const char *text) {
  rt_err err = {0};
  sp_space *sp = sp_load_string(text, "test.json", NULL, 0, &err);
  if (!sp) fprintf(stderr, "%s\n", err.msg);
  assert_non_null(sp);
  return sp;
}

/* ---- Objectives over value indices (time in seconds; NAN: failure) ---- */


/* A separable quadratic bowl, minimum 1 at (6, 9, 3, 5, 1) where the
** condition a + b <= 14 cuts it off: the constrained optimum lies on the
** boundary. */
static double f_bowl(const int *c, int np) {
  static const double t[] = {6, 9, 3, 5, 1}, w[] = {1, 0.7, 2, 0.5, 3};
  double s = 1;
  for (int p = 0; p < 5 && p < np; p++) s += w[p] * (c[p] - t[p]) * (c[p] - t[p]);
  return s;
}

/* Deterministic pseudo-random bits of a configuration. */
static uint32_t hash_cfg(const int *c, int np) {
  uint32_t h = 2166136261u;
  for (int p = 0; p < np; p++) h = (h ^ (uint32_t)c[p]) * 16777619u;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  return h ^ (h >> 12);
}

/* Rugged and deceptive: a broad basin around (2, 2, .., ..) with hashed
** noise, and the global optimum alone in a narrow pit at the far corner
** (9, 5, 4, 0, 0) whose surroundings are worse than the broad basin. */
static double f_rugged(const int *c, int np) {
  double broad = 10 + 0.5 * ((c[0] - 2) * (c[0] - 2) + (c[1] - 2) * (c[1] - 2)) +
                 abs(c[2] - 1) + 0.3 * abs(c[3] - 6) + c[4];
  double noise = (double)(hash_cfg(c, np) % 1000) / 250.0;   /* 0 .. 4 */
  int dpit = abs(c[0] - 9) + abs(c[1] - 5) + abs(c[2] - 4) + abs(c[3]) + abs(c[4]);
  if (dpit == 0) return 1;
  if (dpit <= 3) return 5 + dpit;
  return broad + noise;
}

/* The bowl, failing (compile or runtime error) wherever a >= 7 or
** d >= 6 -- right next to the unconstrained optimum. */
static double f_fail(const int *c, int np) {
  if (c[0] >= 7 || c[3] >= 6) return NAN;
  return f_bowl(c, np);
}

/* Plateaus: the bowl quantised, so most moves tie. */
static double f_plateau(const int *c, int np) { return floor(f_bowl(c, np) / 6); }
/* The bowl on a flat landscape: times within 0.3% of each other (the
** strategies must not need large relative differences to make progress). */
static double f_flat(const int *c, int np) { return 1e4 + f_bowl(c, np); }

/* A bowl over 12 parameters (for the huge space). */
static double f_huge(const int *c, int np) {
  double s = 1;
  for (int p = 0; p < np; p++) s += (c[p] - (p % 7)) * (c[p] - (p % 7)) * (1 + 0.1 * p);
  return s;
}

static tu_run *run(sp_space *sp, const tu_strategy *s, fn f, uint64_t seed, int64_t budget) {
  return synth_run(sp, s, f, seed, budget, BATCH);
}

static int cmp_count(const void *a, const void *b) {
  rt_count x = *(const rt_count *)a, y = *(const rt_count *)b;
  return (x > y) - (x < y);
}

/* Every evaluation of r is valid and they are pairwise distinct (by rank);
** the strategy proposed at most a batch beyond its evaluations (so it
** hardly ever proposed a known configuration). */
static void check_run(sp_space *sp, const tu_run *r) {
  int64_t n = tu_run_n(r);
  rt_count *ranks = malloc((size_t)(n > 0 ? n : 1) * sizeof *ranks);
  for (int64_t i = 0; i < n; i++) {
    assert_true(sp_valid(sp, tu_run_cfg(r, i), NULL));
    assert_int_equal(sp_rank(sp, tu_run_cfg(r, i), &ranks[i]), 0);
  }
  qsort(ranks, (size_t)n, sizeof *ranks, cmp_count);
  for (int64_t i = 1; i < n; i++) assert_true(ranks[i - 1] != ranks[i]);
  free(ranks);
  assert_true(tu_run_proposals(r) < n + BATCH);
  assert_int_equal(tu_run_restarts(r), 0);
}

static double best_of(const tu_run *r) {
  int64_t b = tu_run_best(r);
  return b < 0 ? INFINITY : tu_run_obs(r, b)->value;
}

/* ---- Tests ---- */

/* Valid, distinct evaluations on every objective; the run ends on its
** budget; the best it reports is the best of its evaluations. */
static void test_valid_distinct(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  fn fs[] = {f_bowl, f_rugged, f_fail, f_plateau};
  for (int s = 0; s < NSTRAT; s++)
    for (int k = 0; k < 4; k++)
      for (uint64_t seed = 1; seed <= 3; seed++) {
        tu_run *r = run(sp, strategies[s], fs[k], seed, 400);
        assert_int_equal(tu_run_n(r), 400);
        assert_int_equal(tu_run_end(r), TU_END_BUDGET);
        check_run(sp, r);
        double b = INFINITY;
        for (int64_t i = 0; i < tu_run_n(r); i++)
          if (tu_run_obs(r, i)->ok && tu_run_obs(r, i)->value < b) b = tu_run_obs(r, i)->value;
        assert_true(best_of(r) == b);
        tu_run_free(r);
      }
  sp_free(sp);
}

/* The same seed gives the same evaluations in the same order; another
** seed gives another sequence. */
static void test_determinism(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  for (int s = 0; s < NSTRAT; s++) synth_check_determinism(sp, strategies[s], f_fail, 300, BATCH);
  sp_free(sp);
}

/* At a generous budget (a fraction of the valid space) every strategy finds
** the brute-force optimum, for several seeds, on every objective. */
static void test_finds_optimum(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  int64_t count = (int64_t)sp_count(sp);
  struct { fn f; double frac; } cases[] = {
    {f_bowl, 0.10}, {f_plateau, 0.10}, {f_fail, 0.15}, {f_rugged, 0.60}, {f_flat, 0.10},
  };
  for (int k = 0; k < 5; k++) {
    double opt = brute_optimum(sp, cases[k].f);
    for (int s = 0; s < NSTRAT; s++)
      for (uint64_t seed = 1; seed <= 5; seed++) {
        tu_run *r = run(sp, strategies[s], cases[k].f, seed, (int64_t)(cases[k].frac * count));
        if (best_of(r) != opt)
          fprintf(stderr, "%s case %d seed %d: best %g, optimum %g\n", strategies[s]->name, k,
                  (int)seed, best_of(r), opt);
        assert_true(best_of(r) == opt);
        tu_run_free(r);
      }
  }
  sp_free(sp);
}

/* Without a budget a run goes on until every valid configuration was
** evaluated exactly once: the strategies find the last unseen ones. */
static void test_exhausts_space(void **state) {
  (void)state;
  sp_space *sp = load(
      "{\"ConfigurationSpace\": {\"TuningParameters\": ["
      "{\"Name\": \"x\", \"Type\": \"int\", \"Values\": \"list(range(7))\"},"
      "{\"Name\": \"y\", \"Type\": \"int\", \"Values\": \"list(range(6))\"},"
      "{\"Name\": \"z\", \"Type\": \"int\", \"Values\": \"[3]\"}],"
      "\"Conditions\": [{\"Expression\": \"x != y\", \"Parameters\": [\"x\", \"y\"]}]}}");
  for (int s = 0; s < NSTRAT; s++) {
    tu_run *r = run(sp, strategies[s], f_bowl, 7, 0);
    assert_int_equal(tu_run_end(r), TU_END_SPACE);
    assert_true((rt_count)tu_run_n(r) == sp_count(sp));
    check_run(sp, r);
    tu_run_free(r);
  }
  sp_free(sp);
}

/* A space of 10^12 combinations (too large to list) runs a budget of a
** few hundred: valid distinct evaluations, no restarts, and the search
** improves well beyond its first evaluations. */
static void test_huge_space(void **state) {
  (void)state;
  sp_space *sp = load(huge_space_text());
  assert_true(sp_cartesian(sp) == (rt_count)1000000000000ull);
  for (int s = 0; s < NSTRAT; s++) {
    tu_run *r = run(sp, strategies[s], f_huge, 5, 400);
    assert_int_equal(tu_run_n(r), 400);
    check_run(sp, r);
    double first = INFINITY;
    for (int64_t i = 0; i < 20; i++)
      if (tu_run_obs(r, i)->value < first) first = tu_run_obs(r, i)->value;
    assert_true(best_of(r) < 0.5 * first);
    tu_run_free(r);
  }
  sp_free(sp);
}

/* ---- inform: a strategy driven directly, one proposal at a time (as the
** bandit drives its arms), with the run's memory in a map ---- */

typedef struct drive {
  sp_space *sp;
  tu_cfgmap seen;
  tu_ctx ctx;
  const tu_strategy *s;
  void *st;
} drive;

static int drive_known(void *run, const int *cfg, tu_obs *obs) {
  drive *d = run;
  if (tu_cfgmap_get(&d->seen, cfg) < 0) return 0;
  if (obs) { /* not needed by these strategies' known() calls */
    memset(obs, 0, sizeof *obs);
  }
  return 1;
}

static tu_obs obs_of(double v) {
  tu_obs o = {.ok = 1, .value = v, .status = 0, .cost = 1, .origin = TU_REPLAYED};
  return o;
}

/* One proposal of d's strategy into cfg, evaluated on the bowl and observed. */
static void drive_step(drive *d, int *cfg) {
  assert_int_equal(d->s->propose(d->st, cfg, 1), 1);
  int added;
  tu_cfgmap_put(&d->seen, cfg, &added);
  assert_true(added);
  tu_obs o = obs_of(f_bowl(cfg, sp_nparams(d->sp)));
  d->s->observe(d->st, cfg, &o);
}

static int hamming(const int *a, const int *b, int np) {
  int h = 0;
  for (int p = 0; p < np; p++) h += a[p] != b[p];
  return h;
}

/* After 40 evaluations of the bowl, each strategy is informed of a
** configuration X it never proposed, at least two parameters away from
** everything evaluated, with a time far below the bowl's minimum of 1: a
** result it did not find. Within `within` proposals it proposes a
** configuration one parameter away from X (annealing: its walk continues
** from X at once; de and pso: the local steps of the next generation go
** around the best member; bayes: its next local step polishes the
** incumbent) -- which it can only do by having adopted X. */
static void test_inform_adopts(void **state) {
  (void)state;
  sp_space *sp = load(small_space);
  int np = sp_nparams(sp);
  struct { const tu_strategy *s; int within; } cases[] = {
    {&ts_annealing, 1}, {&ts_de, 20}, {&ts_pso, 20}, {&ts_bayes, 3},
  };
  int *cfg = malloc((size_t)np * sizeof *cfg), *x = malloc((size_t)np * sizeof *x);
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    for (uint64_t seed = 1; seed <= 5; seed++) {
      drive d = {.sp = sp, .s = cases[k].s};
      tu_cfgmap_init(&d.seen, np);
      gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937), *pick = gsl_rng_alloc(gsl_rng_mt19937);
      gsl_rng_set(rng, seed);
      gsl_rng_set(pick, 1000 + seed);
      d.ctx = (tu_ctx){.sp = sp, .rng = rng, .budget = 400, .known = drive_known, .run = &d};
      assert_non_null(cases[k].s->inform);
      d.st = cases[k].s->create(&d.ctx, NULL);
      assert_non_null(d.st);
      for (int i = 0; i < 40; i++) drive_step(&d, cfg);
      int far = 0;
      while (!far) {   /* X: two or more parameters from every evaluation */
        assert_int_equal(sp_sample(sp, pick, 1, 0, x, NULL), 0);
        far = 1;
        for (int64_t i = 0; i < d.seen.n && far; i++) far = hamming(x, tu_cfgmap_key(&d.seen, i), np) >= 2;
      }
      int added;
      tu_cfgmap_put(&d.seen, x, &added);
      tu_obs o = obs_of(0.01);
      cases[k].s->inform(d.st, x, &o);
      int near = 0;
      for (int i = 0; i < cases[k].within && !near; i++) {
        drive_step(&d, cfg);
        near = hamming(cfg, x, np) == 1;
      }
      if (!near) fprintf(stderr, "%s seed %d: nothing near X\n", cases[k].s->name, (int)seed);
      assert_true(near);
      cases[k].s->destroy(d.st);
      tu_cfgmap_free(&d.seen);
      gsl_rng_free(rng);
      gsl_rng_free(pick);
    }
  free(cfg);
  free(x);
  sp_free(sp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_valid_distinct),
    cmocka_unit_test(test_determinism),
    cmocka_unit_test(test_finds_optimum),
    cmocka_unit_test(test_exhausts_space),
    cmocka_unit_test(test_huge_space),
    cmocka_unit_test(test_inform_adopts),
  };
  return cmocka_run_group_tests_name("ts_search", tests, NULL, NULL);
}
