/*
** test_tuner.c -- the tuner's machinery against independent expectations:
** the permutation is a bijection (every rank marked once); random search's
** expected best-so-far equals the brute-force average over all orders of
** a tiny space; the score equals a hand computation; the run loop never
** evaluates twice, is deterministic per seed, honours evaluation and cost
** budgets and restarts a stalled strategy; a time limit is spent by
** predicted cost (invariant 12: the stopping decision recomputed here from
** the recorded costs, and with an exact model the candidate it refused);
** exhaustive follows sp_next;
** replay answers exactly what the T4 file records (read here with jansson,
** independently of the importer) and refuses a configuration it lacks.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/ms.h"
#include "tuner/tu.h"
#include "tk_run.h"

#define T1 "data/t1/"
#define T4 "data/t4/"

/* ---- A synthetic objective: a separable bowl over value indices ---- */

static const char bowl_space[] =
    "{\"ConfigurationSpace\": {\"TuningParameters\": ["
    "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(12))\"},"
    "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(10))\"},"
    "{\"Name\": \"c\", \"Type\": \"int\", \"Values\": \"[1, 2, 4, 8, 16]\"}],"
    "\"Conditions\": [{\"Parameters\": [\"a\", \"b\"], \"Expression\": \"a + b != 7\"}]}}";

typedef struct bowl {
  int evals;
  double cost_each;
} bowl;

static int bowl_eval(void *ctx, const int *cfg, tu_obs *obs, rt_err *err) {
  (void)err;
  bowl *b = ctx;
  b->evals++;
  double v = 1 + (cfg[0] - 5) * (cfg[0] - 5) + 2.0 * (cfg[1] - 3) * (cfg[1] - 3) + cfg[2];
  *obs = (tu_obs){.ok = cfg[1] != 9, .value = cfg[1] != 9 ? v : NAN,
                  .status = cfg[1] != 9 ? MS_OK : MS_RUNTIME_ERROR, .cost = b->cost_each};
  return 0;
}

static sp_space *load_str(const char *text) {
  rt_err err = {0};
  sp_space *sp = sp_load_string(text, "test", NULL, 0, &err);
  if (!sp) fprintf(stderr, "%s\n", err.msg);
  assert_non_null(sp);
  return sp;
}

static tu_run *run_on(sp_space *sp, bowl *b, const char *strategy, uint64_t seed, int64_t evals,
                      double cost) {
  tu_objective obj = {bowl_eval, b, NULL};
  tu_run_opts o = {.strategy = tu_strategy_find(strategy), .seed = seed, .max_evals = evals,
                   .max_cost = cost};
  assert_non_null(o.strategy);
  rt_err err = {0};
  tu_run *r = tu_run_strategy(sp, &obj, &o, NULL, &err);
  if (!r) fprintf(stderr, "%s\n", err.msg);
  assert_non_null(r);
  return r;
}

/* ---- The permutation ---- */

static void test_perm_bijection(void **state) {
  (void)state;
  static const rt_count sizes[] = {1, 2, 3, 7, 64, 1000, 4093, 65537};
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    tu_perm p;
    tu_perm_init(&p, sizes[s], g);
    char *seen = calloc((size_t)sizes[s], 1);
    int identity = 1;
    for (rt_count i = 0; i < sizes[s]; i++) {
      rt_count x = tu_perm_at(&p, i);
      assert_true(x < sizes[s]);
      assert_int_equal(seen[x], 0);
      seen[x] = 1;
      identity &= x == i;
    }
    if (sizes[s] >= 64) assert_false(identity);   /* it does shuffle */
    free(seen);
  }
  /* Huge n: distinct images on a prefix, all in range. */
  tu_perm p;
  rt_count big = (rt_count)1 << 100;
  tu_perm_init(&p, big + 12345, g);
  for (rt_count i = 0; i < 1000; i++) assert_true(tu_perm_at(&p, i) < big + 12345);
  gsl_rng_free(g);
}

/* ---- Random search's expectation against every order ---- */

/* Average best-so-far after k draws over all n! orders (failures NAN
** count as the worst ok value), by walking every permutation. */
static void brute_expect(const double *v, int n, double *out) {
  double worst = -INFINITY;
  for (int i = 0; i < n; i++)
    if (!isnan(v[i]) && v[i] > worst) worst = v[i];
  int perm[8], c[8] = {0};
  for (int i = 0; i < n; i++) perm[i] = i, out[i] = 0;
  long count = 0;
  for (int i = 0;;) {   /* Heap's algorithm */
    double best = worst;
    for (int k = 0; k < n; k++) {
      double x = v[perm[k]];
      if (!isnan(x) && x < best) best = x;
      out[k] += best;
    }
    count++;
    while (i < n && c[i] >= i) c[i++] = 0;
    if (i >= n) break;
    int j = i % 2 ? c[i] : 0, t = perm[j];
    perm[j] = perm[i];
    perm[i] = t;
    c[i]++;
    i = 1;
  }
  for (int k = 0; k < n; k++) out[k] /= (double)count;
}

static void test_random_expectation(void **state) {
  (void)state;
  static const double lists[][7] = {
    {3, 1, 4, 1.5, 9, 2.6, 5}, {2, NAN, 7, 7, 1, NAN, 3}, {5, 5, 5, 5, 5, 5, 5},
  };
  for (size_t l = 0; l < 3; l++) {
    double want[7], got[9];
    brute_expect(lists[l], 7, want);
    tu_random_expect(lists[l], 7, 9, got);
    for (int k = 0; k < 7; k++) assert_true(fabs(got[k] - want[k]) < 1e-12 * fabs(want[k]) + 1e-12);
    assert_true(got[7] == got[6] && got[8] == got[6]);   /* flat past n */
  }
}

/* The score of a hand-made recording and run, computed by hand. */
static void test_score_by_hand(void **state) {
  (void)state;
  /* values {4, 2, 1, NAN}: worst ok 4; sorted with the failure as 4:
  ** 1, 2, 4, 4. E1 = (1+2+4+4)/4 = 2.75; E2 = (1*3 + 2*2 + 4*1)/6 = 11/6;
  ** E3 = (1*3 + 2*1)/4 = 1.25; E4 = 1. */
  double v[4] = {4, 2, 1, NAN}, e[4];
  tu_random_expect(v, 4, 4, e);
  assert_true(fabs(e[0] - 2.75) < 1e-12 && fabs(e[1] - 11.0 / 6) < 1e-12);
  assert_true(fabs(e[2] - 1.25) < 1e-12 && fabs(e[3] - 1) < 1e-12);
  /* A run finding 2 then 1: curve 2, 1, 1, 1. Points k=1..3 count (at
  ** k=4 random has reached the optimum): (0.75/1.75 + 1 + 1) / 3. */
  double curve[4] = {2, 1, 1, 1};
  double want = (0.75 / 1.75 + 1 + 1) / 3;
  assert_true(fabs(tu_score(curve, e, 1, 4) - want) < 1e-12);
  /* A run that only ever meets the failure and the worst: below 0. */
  double bad[4] = {4, 4, 4, 1};
  assert_true(tu_score(bad, e, 1, 4) < 0);
  /* Random's own curve scores 0. */
  assert_true(fabs(tu_score(e, e, 1, 4)) < 1e-12);
}

/* ---- The run loop ---- */

static void test_run_random_and_exhaustive(void **state) {
  (void)state;
  sp_space *sp = load_str(bowl_space);
  int64_t count = (int64_t)sp_count(sp), np = sp_nparams(sp);
  bowl b = {0, 1};
  /* Random with budget = the whole space: every valid configuration once. */
  tu_run *r = run_on(sp, &b, "random", 7, 0, 0);
  assert_int_equal(tu_run_n(r), count);
  assert_int_equal(b.evals, count);
  assert_int_equal(tu_run_end(r), TU_END_SPACE);
  rt_count rk;
  char *seen = calloc((size_t)count, 1);
  for (int64_t i = 0; i < count; i++) {
    assert_int_equal(sp_rank(sp, tu_run_cfg(r, i), &rk), 0);
    assert_int_equal(seen[(int64_t)rk], 0);
    seen[(int64_t)rk] = 1;
  }
  free(seen);
  /* The best is the brute-force optimum: a=5, b=3, c=1 (index 0). */
  const int *best = tu_run_cfg(r, tu_run_best(r));
  assert_int_equal(best[0], 5);
  assert_int_equal(best[1], 3);
  assert_int_equal(best[2], 0);
  assert_true(tu_run_cost(r) == (double)count);
  /* Same seed, same sequence; another seed, another one. */
  tu_run *r2 = run_on(sp, &b, "random", 7, 50, 0), *r3 = run_on(sp, &b, "random", 8, 50, 0);
  assert_int_equal(tu_run_n(r2), 50);
  assert_int_equal(tu_run_end(r2), TU_END_BUDGET);
  assert_memory_equal(tu_run_cfg(r, 0), tu_run_cfg(r2, 0), 50 * np * sizeof(int));
  assert_memory_not_equal(tu_run_cfg(r2, 0), tu_run_cfg(r3, 0), 50 * np * sizeof(int));
  tu_run_free(r);
  tu_run_free(r2);
  tu_run_free(r3);
  /* A cost budget: 2.5 s per evaluation, 10 s -> 4 evaluations. */
  b.cost_each = 2.5;
  r = run_on(sp, &b, "random", 1, 0, 10);
  assert_int_equal(tu_run_n(r), 4);
  assert_int_equal(tu_run_end(r), TU_END_COST);
  tu_run_free(r);
  /* Exhaustive: sp_next's order from rank 0. */
  r = run_on(sp, &b, "exhaustive", 99, 0, 0);
  assert_int_equal(tu_run_n(r), count);
  int *cfg = calloc((size_t)np, sizeof *cfg);
  assert_int_equal(sp_unrank(sp, 0, cfg), 0);
  for (int64_t i = 0; i < count; i++) {
    assert_memory_equal(tu_run_cfg(r, i), cfg, np * sizeof *cfg);
    assert_int_equal(sp_next(sp, cfg), i + 1 < count);
  }
  free(cfg);
  tu_run_free(r);
  sp_free(sp);
}

/* A strategy that proposes the same configuration forever. */
static void *stuck_create(const tu_ctx *ctx, rt_err *err) {
  (void)err;
  return (void *)ctx;
}
static int stuck_propose(void *st, int *cfgs, int max) {
  const tu_ctx *ctx = st;
  (void)max;
  return sp_unrank(ctx->sp, 3, cfgs) ? 0 : 1;
}
static void stuck_observe(void *st, const int *cfg, const tu_obs *obs) {
  (void)st;
  (void)cfg;
  (void)obs;
}
static void stuck_destroy(void *st) { (void)st; }
/* One that proposes a=0, b=7: the condition a + b != 7 is false. */
static int invalid_propose(void *st, int *cfgs, int max) {
  (void)st;
  (void)max;
  cfgs[0] = 0, cfgs[1] = 7, cfgs[2] = 0;
  return 1;
}

static void test_run_stall_and_invalid(void **state) {
  (void)state;
  sp_space *sp = load_str(bowl_space);
  bowl b = {0, 1};
  tu_strategy stuck = {.name = "stuck", .summary = "", .create = stuck_create,
                       .propose = stuck_propose, .observe = stuck_observe,
                       .destroy = stuck_destroy};
  tu_objective obj = {bowl_eval, &b, NULL};
  tu_run_opts o = {.strategy = &stuck, .seed = 1, .max_evals = 10};
  rt_err err = {0};
  tu_run *r = tu_run_strategy(sp, &obj, &o, NULL, &err);
  assert_non_null(r);
  assert_int_equal(tu_run_n(r), 1);          /* evaluated once, answered from memory after */
  assert_int_equal(b.evals, 1);
  assert_int_equal(tu_run_end(r), TU_END_STALLED);
  assert_true(tu_run_restarts(r) > 0);
  tu_run_free(r);
  tu_strategy bad = {.name = "bad", .summary = "", .create = stuck_create,
                     .propose = invalid_propose, .observe = stuck_observe,
                     .destroy = stuck_destroy};
  o.strategy = &bad;
  assert_null(tu_run_strategy(sp, &obj, &o, NULL, &err));
  assert_non_null(strstr(err.msg, "invalid configuration"));
  assert_int_equal(b.evals, 1);   /* never evaluated */
  sp_free(sp);
}

/* ---- Replay ---- */

/* The T4 file's correct results, config text (keys sorted) -> time (ms),
** read with jansson directly. */
static json_t *t4_times(const char *path) {
  json_error_t je;
  char *text = tk_gunzip(path, NULL);   /* plain or gzip: jansson reads neither compressed */
  assert_non_null(text);
  json_t *root = json_loads(text, 0, &je), *out = json_object();
  free(text);
  assert_non_null(root);
  size_t i;
  json_t *r;
  json_array_foreach(json_object_get(root, "results"), i, r) {
    char *k = json_dumps(json_object_get(r, "configuration"), JSON_COMPACT | JSON_SORT_KEYS);
    const char *inv = json_string_value(json_object_get(r, "invalidity"));
    json_t *m, *time = json_null();
    size_t j;
    json_array_foreach(json_object_get(r, "measurements"), j, m)
      if (!strcmp(json_string_value(json_object_get(m, "name")), "time"))
        time = json_object_get(m, "value");
    json_object_set(out, k, strcmp(inv, "correct") ? json_null() : time);
    free(k);
  }
  json_decref(root);
  return out;
}

static void test_replay_equals_recording(void **state) {
  (void)state;
  rt_err err = {0};
  sp_space *sp = sp_load_file(T1 "pnpoly.json", NULL, 0, &err);
  assert_non_null(sp);
  tu_rec *rec = tu_rec_t4(T4 "pnpoly_RTX_3090_T4.json.gz", sp, &err);
  if (!rec) fprintf(stderr, "%s\n", err.msg);
  assert_non_null(rec);
  assert_int_equal(tu_rec_n(rec), 4092);
  json_t *want = t4_times(T4 "pnpoly_RTX_3090_T4.json.gz");
  tu_objective obj = tu_rec_objective(rec);
  tu_run_opts o = {.strategy = &ts_random, .seed = 5};
  tu_run *r = tu_run_strategy(sp, &obj, &o, NULL, &err);
  assert_non_null(r);
  assert_int_equal(tu_run_n(r), 4092);
  int ok = 0;
  for (int64_t i = 0; i < tu_run_n(r); i++) {
    char *c = sp_config_json(sp, tu_run_cfg(r, i));
    json_t *cj = json_loads(c, 0, NULL);
    char *k = json_dumps(cj, JSON_COMPACT | JSON_SORT_KEYS);
    json_t *t = json_object_get(want, k);
    assert_non_null(t);
    const tu_obs *ob = tu_run_obs(r, i);
    assert_int_equal(ob->ok, !json_is_null(t));
    assert_int_equal(ob->origin, TU_REPLAYED);
    if (ob->ok) {
      ok++;
      assert_true(fabs(ob->value - json_number_value(t) * 1e-3) <= 1e-12 * ob->value);
    }
    free(k);
    free(c);
    json_decref(cj);
  }
  assert_int_equal(ok, 3762);   /* the data README's status counts */
  json_decref(want);
  tu_run_free(r);
  tu_rec_free(rec);
  sp_free(sp);
}

/* A recording that lacks configurations: replay stops with an error that
** names the missing one, instead of guessing. */
static void test_replay_missing_is_error(void **state) {
  (void)state;
  char dbpath[] = "/tmp/rt-replay-XXXXXX";
  int fd = mkstemp(dbpath);
  assert_true(fd >= 0);
  close(fd);
  unlink(dbpath);
  rt_err err = {0};
  sp_space *sp = load_str(bowl_space);
  db *d = db_open(dbpath, 1, &err);
  assert_non_null(d);
  int64_t tid, kid, wid, sid, cid;
  assert_int_equal(db_target_id(d, "host", "fp", "{}", &tid, &err), 0);
  assert_int_equal(db_kernel_id(d, "bowl", "1", &kid, &err), 0);
  assert_int_equal(db_workload_id(d, kid, "bowl f32", "{}", "f32", "", &wid, &err), 0);
  assert_int_equal(db_space_id(d, "bowl", &sid, &err), 0);
  db_campaign c = {.target_id = tid, .workload_id = wid, .space_id = sid, .strategy = "t",
                   .options_json = "{}", .source = "measured", .compiler = "", .flags = "",
                   .state = "done"};
  assert_int_equal(db_campaign_new(d, &c, &cid, &err), 0);
  int *cfg = calloc(3, sizeof *cfg);
  for (int r = 0; r < 5; r++) {   /* the first 5 configurations only */
    assert_int_equal(sp_unrank(sp, (rt_count)r, cfg), 0);
    char *j = sp_config_json(sp, cfg);
    db_trial t;
    db_trial_init(&t);
    t.campaign_id = cid;
    t.config_json = j;
    t.status = "ok";
    t.time_s = 1.0 + r;
    assert_int_equal(db_trial_add(d, &t, NULL, &err), 0);
    free(j);
  }
  db_close(d);
  db_trial_filter f = {.target = "host", .kernel = "bowl", .workload_key = "bowl f32"};
  tu_rec *rec = tu_rec_db(dbpath, &f, sp, &err);
  assert_non_null(rec);
  assert_int_equal(tu_rec_n(rec), 5);
  tu_objective obj = tu_rec_objective(rec);
  tu_run_opts o = {.strategy = &ts_exhaustive, .seed = 1, .max_evals = 5};
  tu_run *r = tu_run_strategy(sp, &obj, &o, NULL, &err);   /* the 5 recorded: fine */
  assert_non_null(r);
  assert_true(tu_run_obs(r, tu_run_best(r))->value == 1.0);
  tu_run_free(r);
  o.max_evals = 6;
  tu_run *partial = NULL;
  r = tu_run_strategy(sp, &obj, &o, &partial, &err);
  assert_null(r);
  assert_non_null(partial);
  assert_int_equal(tu_run_n(partial), 5);
  assert_int_equal(sp_unrank(sp, 5, cfg), 0);
  char *j = sp_config_json(sp, cfg);
  assert_non_null(strstr(err.msg, j));
  assert_non_null(strstr(err.msg, "not in the recording"));
  free(j);
  free(cfg);
  tu_run_free(partial);
  tu_rec_free(rec);
  sp_free(sp);
  unlink(dbpath);
}

/* ---- Invariant 12: a time limit spent by predicted cost ---- */

/* The bowl's objective with known costs: 2 s of compile, 10 runs of its time. */
static int costly_eval(void *ctx, const int *cfg, tu_obs *obs, rt_err *err) {
  int rc = bowl_eval(ctx, cfg, obs, err);
  obs->compile_s = 2;
  obs->cost = 2 + (obs->ok ? 10 * obs->value : 0.5);
  return rc;
}

/* An exact model of the bowl (its time, failures included as their value). */
static int exact_predict(void *m, const int *cfgs, int n, double *t) {
  (void)m;
  for (int i = 0; i < n; i++) {
    const int *c = cfgs + (size_t)i * 3;
    t[i] = 1 + (c[0] - 5) * (c[0] - 5) + 2.0 * (c[1] - 3) * (c[1] - 3) + c[2];
  }
  return 0;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_n(const double *v, int n) {
  double *c = malloc((size_t)n * sizeof *c);
  memcpy(c, v, (size_t)n * sizeof *c);
  qsort(c, (size_t)n, sizeof *c, cmp_dbl);
  double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
  free(c);
  return m;
}

static void test_time_limit(void **state) {
  (void)state;
  sp_space *sp = load_str(bowl_space);
  const double L = 6000;
  /* No model: before evaluation k (k >= 1) the prediction is the median
  ** compile plus the median of the rest of the cost so far */
  bowl b = {0, 0};
  tu_objective obj = {costly_eval, &b, NULL};
  tu_run_opts o = {.strategy = tu_strategy_find("random"), .seed = 5, .max_cost = L};
  rt_err err = {0};
  tu_run *r = tu_run_strategy(sp, &obj, &o, NULL, &err);
  assert_non_null(r);
  int n = (int)tu_run_n(r);
  double *comp = malloc((size_t)(n + 1) * sizeof *comp), *rest = malloc((size_t)(n + 1) * sizeof *rest), spent = 0;
  for (int k = 0; k <= n; k++) {
    double pred = k ? median_n(comp, k) + median_n(rest, k) : NAN;
    if (k < n) assert_true(k == 0 || spent + pred <= L * (1 + 1e-9));   /* it fitted */
    else assert_true(spent + pred > L);                                   /* the next would not */
    if (k == n) break;
    const tu_obs *ob = tu_run_obs(r, k);
    comp[k] = ob->compile_s, rest[k] = ob->cost - ob->compile_s;
    spent += ob->cost;
  }
  printf("time limit %.0f s, no model: %d evaluations, %.1f s spent\n", L, n, spent);
  assert_int_equal(tu_run_end(r), TU_END_COST);
  assert_true(fabs(spent - tu_run_cost(r)) < 1e-9 * spent);
  tu_run_free(r);
  /* An exact model and the priors (2 s, 10 runs): every prediction is the
  ** cost itself, so the limit is never passed, and the candidate it
  ** refused (random's next proposal: the same seed without a limit) would
  ** have passed it */
  o.predict = exact_predict, o.compile_prior = 2, o.run_prior = 10;
  r = tu_run_strategy(sp, &obj, &o, NULL, &err);
  assert_non_null(r);
  n = (int)tu_run_n(r);
  tu_run_opts o2 = {.strategy = o.strategy, .seed = 5, .max_evals = n + 1};
  tu_run *r2 = tu_run_strategy(sp, &obj, &o2, NULL, &err);
  assert_non_null(r2);
  assert_int_equal(tu_run_n(r2), n + 1);
  assert_memory_equal(tu_run_cfg(r, 0), tu_run_cfg(r2, 0), (size_t)n * 3 * sizeof(int));
  double next;
  exact_predict(NULL, tu_run_cfg(r2, n), 1, &next);
  printf("time limit %.0f s, exact model: %d evaluations, %.1f s spent; the next would cost %.1f s\n", L, n,
         tu_run_cost(r), 2 + 10 * next);
  assert_true(tu_run_cost(r) <= L);
  assert_true(tu_run_cost(r) + 2 + 10 * next > L);
  assert_int_equal(tu_run_end(r), TU_END_COST);
  tu_run_free(r), tu_run_free(r2);
  free(comp), free(rest);
  sp_free(sp);
}

/* The same with three evaluations in flight (invariant 10): submit queues,
** collect answers the oldest. The in-flight evaluations' predicted costs
** count as spent, so with an exact model the limit is never passed (the
** spent-cost rule alone submitted until the spent cost reached the limit,
** and the three in flight then passed it). */
typedef struct aqueue {
  bowl b;                 /* first: costly_eval's context */
  int q[8][3];
  int head, tail;
} aqueue;
static int aq_submit(void *ctx, const int *cfg, rt_err *err) {
  aqueue *a = ctx;
  if (a->tail - a->head >= 8) {
    rt_err_set(err, "more than 8 in flight");
    return -1;
  }
  memcpy(a->q[a->tail++ % 8], cfg, sizeof a->q[0]);
  return 0;
}
static int aq_collect(void *ctx, int *cfg, tu_obs *ob, rt_err *err) {
  aqueue *a = ctx;
  if (a->head == a->tail) {
    rt_err_set(err, "nothing in flight");
    return -1;
  }
  memcpy(cfg, a->q[a->head++ % 8], sizeof a->q[0]);
  return costly_eval(&a->b, cfg, ob, err);
}

static void test_time_limit_async(void **state) {
  (void)state;
  sp_space *sp = load_str(bowl_space);
  const double L = 6000;
  aqueue a = {0};
  tu_objective obj = {costly_eval, &a, NULL};
  tu_run_opts o = {.strategy = tu_strategy_find("random"), .seed = 5, .max_cost = L, .parallel = 3,
                   .submit = aq_submit, .collect = aq_collect, .predict = exact_predict,
                   .compile_prior = 2, .run_prior = 10};
  rt_err err = {0};
  tu_run *r = tu_run_strategy(sp, &obj, &o, NULL, &err);
  assert_non_null(r);
  int n = (int)tu_run_n(r);
  double spent = 0;
  for (int k = 0; k < n; k++) spent += tu_run_obs(r, k)->cost;
  printf("time limit %.0f s, exact model, 3 in flight: %d evaluations, %.1f s spent\n", L, n, spent);
  assert_int_equal(a.head, a.tail);          /* every one submitted was collected */
  assert_int_equal(a.b.evals, n);            /* and added */
  assert_true(fabs(spent - tu_run_cost(r)) < 1e-9 * spent);
  assert_true(spent <= L);
  assert_true(n > 10);
  assert_int_equal(tu_run_end(r), TU_END_COST);
  tu_run_free(r);
  sp_free(sp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_perm_bijection),
    cmocka_unit_test(test_random_expectation),
    cmocka_unit_test(test_score_by_hand),
    cmocka_unit_test(test_run_random_and_exhaustive),
    cmocka_unit_test(test_run_stall_and_invalid),
    cmocka_unit_test(test_time_limit),
    cmocka_unit_test(test_time_limit_async),
    cmocka_unit_test(test_replay_equals_recording),
    cmocka_unit_test(test_replay_missing_is_error),
  };
  return cmocka_run_group_tests_name("tuner", tests, NULL, NULL);
}
