/*
** test_workflows.c -- the workflows the command line calls, called from C
** without it (tuner/tu_compare.c, tuner/tu_calibrate.c), against
** independent expectations. Comparison: sources whose curves are scripted
** so that each run's score is known by construction (the optimum from the
** first evaluation scores 1; a curve a fraction f of the way from random
** search's expectation -- computed here by brute force over every subset
** -- to the optimum scores f), the summary statistics by hand, the
** optimum a run beats the sample with, a failing run; then the real
** exhaustive strategy against the score of the canonical order computed
** here, and the random strategy's mean score near 0 over many seeds.
** Calibration: synthetic gemm times made by the model from known
** coefficients come back; the held-out split's share, determinism and
** disjointness; capacity shares fitted to counts the model made with a
** known share (cap_L1); a counter that counts nothing; too few schedules.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost_model/cm.h"
#include "tuner/tu.h"

/* ---- Comparison ---- */

/* Random search's expected best after k draws without replacement from
** v[0..n-1] (NAN: the worst ok value), by averaging the minimum over every
** k-subset (n <= 20). */
static void brute_random(const double *v, int n, int kmax, double *out) {
  double worst = -INFINITY;
  for (int i = 0; i < n; i++)
    if (!isnan(v[i]) && v[i] > worst) worst = v[i];
  for (int k = 1; k <= kmax; k++) {
    double sum = 0;
    long cnt = 0;
    for (unsigned m = 0; m < (1u << n); m++) {
      if (__builtin_popcount(m) != k) continue;
      double best = INFINITY;
      for (int i = 0; i < n; i++)
        if (m >> i & 1) best = fmin(best, isnan(v[i]) ? worst : v[i]);
      sum += best, cnt++;
    }
    out[k - 1] = sum / (double)cnt;
  }
}

/* The score by its definition: the mean over k of (R - S) / (R - opt),
** points where R has reached the optimum left out. */
static double score_by_hand(const double *curve, const double *rnd, double opt, int kmax) {
  double sum = 0;
  int used = 0;
  for (int k = 0; k < kmax; k++)
    if (rnd[k] - opt > 1e-12 * fabs(opt)) sum += (rnd[k] - curve[k]) / (rnd[k] - opt), used++;
  return sum / used;
}

enum { NV = 12, BUDGET = 4 };
static const double vals[NV] = {5, 3, NAN, 8, 2.5, 9, 4, 7, 6, 3.5, 10, 4.5};

typedef struct script {
  double rnd[BUDGET], opt;
  int mode;            /* 0: the optimum at once; 1: f(seed) of the way; 2: beats the sample */
  int fail_at;         /* the call that fails (0: none) */
  int calls;
  uint64_t seeds[64];
} script;

static double frac_of(uint64_t seed) {
  static const double f[] = {0.1, 0.9, 0.2, 0.5};
  return f[(seed - 5) % 4];
}

static int script_run(void *ctx, const tu_strategy *S, uint64_t seed, int64_t budget, double *curve,
                      tu_cmp_run *info, rt_err *err) {
  script *sc = ctx;
  (void)S;
  assert_int_equal(budget, BUDGET);
  sc->seeds[sc->calls] = seed;
  if (++sc->calls == sc->fail_at) {
    rt_err_set(err, "run %d failed", sc->calls);
    return -1;
  }
  for (int k = 0; k < BUDGET; k++)
    curve[k] = sc->mode == 0 ? sc->opt
             : sc->mode == 1 ? sc->rnd[k] - frac_of(seed) * (sc->rnd[k] - sc->opt)
                             : (k == BUDGET - 1 ? sc->opt / 2 : sc->rnd[k]);
  *info = (tu_cmp_run){.evals = budget, .cost = 1, .framework_ms = (double)seed, .tuned = (int)(seed & 1)};
  return 0;
}

static void test_compare_scripted(void **state) {
  (void)state;
  script sc = {.opt = 2.5};
  brute_random(vals, NV, BUDGET, sc.rnd);
  tu_cmp_src src = {.run = script_run, .ctx = &sc, .values = vals, .n = NV, .opt = 2.5};
  const tu_strategy *list[2] = {&ts_random, &ts_annealing};
  tu_cmp_result res;
  rt_err err = {0};
  /* random search's expectation: the library's equals the brute force */
  assert_int_equal(tu_compare(&src, list, 2, BUDGET, 4, 5, &res, &err), 0);
  for (int k = 0; k < BUDGET; k++) assert_true(fabs(res.rnd[k] - sc.rnd[k]) < 1e-12 * sc.rnd[k]);
  /* the optimum from the first evaluation scores 1 on every run */
  for (int s = 0; s < 2; s++) {
    assert_true(fabs(res.st[s].mean - 1) < 1e-12 && res.st[s].sd < 1e-12);
    assert_int_equal(res.st[s].found_opt, 4);
    assert_true(fabs(res.st[s].best_frac - 1) < 1e-15);
    assert_int_equal(res.st[s].tuned, 2);   /* seeds 5..8: two odd */
    assert_true(fabs(res.st[s].ms_per_eval - 6.5) < 1e-12);
  }
  /* strategy by strategy, seeds 5, 6, 7, 8 each */
  for (int i = 0; i < 8; i++) assert_int_equal(sc.seeds[i], 5 + i % 4);
  tu_cmp_result_free(&res);
  /* a curve f of the way from random to the optimum scores f; the
  ** summary by hand over f = 0.1, 0.9, 0.2, 0.5 */
  sc.mode = 1, sc.calls = 0;
  assert_int_equal(tu_compare(&src, list, 1, BUDGET, 4, 5, &res, &err), 0);
  for (int r = 0; r < 4; r++) {
    assert_true(fabs(res.scores[r] - frac_of(5 + (uint64_t)r)) < 1e-12);
    assert_true(fabs(res.scores[r] - score_by_hand(res.curves + r * BUDGET, sc.rnd, 2.5, BUDGET)) < 1e-12);
  }
  double m = (0.1 + 0.9 + 0.2 + 0.5) / 4;
  double sd = sqrt(((0.1 - m) * (0.1 - m) + (0.9 - m) * (0.9 - m) + (0.2 - m) * (0.2 - m) +
                    (0.5 - m) * (0.5 - m)) / 3);
  assert_true(fabs(res.st[0].mean - m) < 1e-12);
  assert_true(fabs(res.st[0].sd - sd) < 1e-12);
  assert_true(fabs(res.st[0].min - 0.1) < 1e-12 && fabs(res.st[0].max - 0.9) < 1e-12);
  assert_true(fabs(res.st[0].median - (0.2 + 0.5) / 2) < 1e-12);
  tu_cmp_result_free(&res);
  /* a run that beats the sample: the optimum is the best known anywhere */
  sc.mode = 2, sc.calls = 0;
  assert_int_equal(tu_compare(&src, list, 1, BUDGET, 3, 1, &res, &err), 0);
  assert_true(res.opt == 1.25);
  assert_int_equal(res.st[0].found_opt, 3);
  tu_cmp_result_free(&res);
  /* a failing run stops the comparison with its error */
  sc.mode = 0, sc.calls = 0, sc.fail_at = 3;
  assert_int_equal(tu_compare(&src, list, 2, BUDGET, 2, 1, &res, &err), -1);
  assert_string_equal(err.msg, "run 3 failed");
  assert_int_equal(sc.calls, 3);
  tu_cmp_result_free(&res);
  /* nothing to compare */
  assert_int_equal(tu_compare(&src, list, 0, BUDGET, 2, 1, &res, &err), -1);
  assert_non_null(strstr(err.msg, "at least 1"));
  tu_cmp_result_free(&res);
}

/* Real strategies on a 12-configuration space whose values are vals[]
** by rank: a run through tu_run_strategy, its curve by tu_run_curve. */
static const char tiny_space[] =
    "{\"ConfigurationSpace\": {\"TuningParameters\": ["
    "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(4))\"},"
    "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(3))\"}]}}";

static int tiny_eval(void *ctx, const int *cfg, tu_obs *obs, rt_err *err) {
  (void)ctx, (void)err;
  double v = vals[cfg[0] * 3 + cfg[1]];
  *obs = (tu_obs){.ok = !isnan(v), .value = isnan(v) ? 0 : v, .status = isnan(v) ? MS_RUNTIME_ERROR : MS_OK,
                  .cost = 1, .origin = TU_REPLAYED};
  return 0;
}

static int strategy_run(void *ctx, const tu_strategy *S, uint64_t seed, int64_t budget, double *curve,
                        tu_cmp_run *info, rt_err *err) {
  sp_space *sp = ctx;
  tu_objective obj = {tiny_eval, NULL, NULL};
  tu_run_opts o = {.strategy = S, .seed = seed, .max_evals = budget};
  tu_run *r = tu_run_strategy(sp, &obj, &o, NULL, err);
  if (!r) return -1;
  tu_run_curve(r, budget, 10, curve);   /* 10: the worst ok value */
  *info = (tu_cmp_run){.evals = tu_run_n(r), .cost = tu_run_cost(r)};
  tu_run_free(r);
  return 0;
}

static void test_compare_strategies(void **state) {
  (void)state;
  rt_err err = {0};
  sp_space *sp = sp_load_string(tiny_space, "tiny", NULL, 0, &err);
  assert_non_null(sp);
  assert_true(sp_count(sp) == NV);
  double rnd[BUDGET];
  brute_random(vals, NV, BUDGET, rnd);
  tu_cmp_src src = {.run = strategy_run, .ctx = sp, .values = vals, .n = NV, .opt = 2.5};
  /* exhaustive: the canonical order (a, then b), whatever the seed */
  const tu_strategy *ex[1] = {&ts_exhaustive};
  tu_cmp_result res;
  assert_int_equal(tu_compare(&src, ex, 1, BUDGET, 3, 9, &res, &err), 0);
  double curve[BUDGET], best = 10;
  for (int k = 0; k < BUDGET; k++) {
    if (!isnan(vals[k]) && vals[k] < best) best = vals[k];
    curve[k] = best;
  }
  double want = score_by_hand(curve, rnd, 2.5, BUDGET);
  for (int r = 0; r < 3; r++) assert_true(fabs(res.scores[r] - want) < 1e-12);
  assert_true(fabs(res.st[0].mean - want) < 1e-12);
  assert_int_equal(res.st[0].found_opt, 0);   /* 2.5 is the fifth */
  assert_true(fabs(res.st[0].best_frac - 2.5 / 3) < 1e-12);
  tu_cmp_result_free(&res);
  /* random: its mean score over many seeds is random search's, 0 (within
  ** four standard errors) */
  const tu_strategy *rs[1] = {&ts_random};
  int R = 400;
  assert_int_equal(tu_compare(&src, rs, 1, BUDGET, R, 1, &res, &err), 0);
  printf("random over %d seeds: score %.4f +- %.4f\n", R, res.st[0].mean, res.st[0].sd / sqrt(R));
  assert_true(fabs(res.st[0].mean) < 4 * res.st[0].sd / sqrt(R));
  assert_true(res.st[0].sd > 0);
  /* the same seeds again: the same result, bit for bit */
  tu_cmp_result again;
  assert_int_equal(tu_compare(&src, rs, 1, BUDGET, R, 1, &again, &err), 0);
  assert_memory_equal(res.curves, again.curves, (size_t)R * BUDGET * sizeof *res.curves);
  assert_memory_equal(res.scores, again.scores, (size_t)R * sizeof *res.scores);
  tu_cmp_result_free(&again);
  tu_cmp_result_free(&res);
  sp_free(sp);
}

/* ---- Calibration ---- */

static sp_space *gemm_space(const char *set) {
  sx_arena *arena = sx_arena_new();
  sp_binding *b = NULL;
  rt_err err = {0};
  int nb = sp_parse_bindings(set, arena, &b, &err);
  assert_true(nb > 0);
  sp_space *sp = sp_load_file("targets/host/gemm.json", b, nb, &err);
  free(b);
  sx_arena_free(arena);
  assert_non_null(sp);
  return sp;
}

static cm_ceilings test_ceilings(void) {
  cm_ceilings c = {.threads = 2, .nclass = 1};
  c.cls[0] = (cm_class){"avx512-fma", 512, 1, {200e9, 380e9}};
  c.peak[0] = 200e9, c.peak[1] = 380e9;
  double bw[CM_NLEVEL][2] = {{400e9, 700e9}, {150e9, 250e9}, {40e9, 60e9}, {15e9, 20e9}};
  memcpy(c.bw, bw, sizeof bw);
  c.cache[0] = 48 * 1024, c.cache[1] = 2 << 20, c.cache[2] = 32 << 20;
  strcpy(c.measured, "test");
  return c;
}

enum { NS = 200 };

typedef struct synth {
  sp_space *sp;
  kn_problem pb;
  cm_ceilings ce;
  cm_coefs truth;
  int *cfgs;
  cm_sample s[NS];
  char hbuf[NS][33];
  const char *hash[NS];
} synth;

/* NS gemm schedules timed by the model with coefficients truth (noise of
** 2%), each with a made-up configuration hash. */
static void synth_make(synth *y) {
  y->sp = gemm_space("M=256,N=256,K=256");
  kn_problem_from_space(&y->pb, y->sp);
  y->ce = test_ceilings();
  cm_coefs_default(&cm_gemm, &y->truth);
  y->truth.v[CM_C_COMPUTE] = 0.6, y->truth.v[CM_C_L2] = 1.3, y->truth.v[CM_C_OVERLAP] = 2.0;
  y->truth.v[CM_C_TRIP] = 2.5e-9;
  for (int j = 0; j < cm_gemm.ncoef; j++)   /* 0.3 of L1 (default 0.75) */
    if (!strcmp(cm_gemm.coefs[j].name, "cap_L1")) y->truth.v[j] = 0.3;
  int np = sp_nparams(y->sp);
  y->cfgs = malloc((size_t)NS * np * sizeof *y->cfgs);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 5);
  rt_err err = {0};
  assert_int_equal(sp_sample(y->sp, rng, NS, 1, y->cfgs, &err), 0);
  for (int i = 0; i < NS; i++) {
    cm_pred p;
    assert_int_equal(cm_predict(&cm_gemm, &y->pb, y->sp, y->cfgs + (size_t)i * np, &y->ce, &y->truth, 0, &p,
                                &err), 0);
    y->s[i] = (cm_sample){&y->pb, y->sp, y->cfgs + (size_t)i * np, p.time * exp(gsl_ran_gaussian(rng, 0.02))};
    snprintf(y->hbuf[i], sizeof y->hbuf[i], "%032x", (unsigned)(i * 2654435761u));
    y->hash[i] = y->hbuf[i];
  }
  gsl_rng_free(rng);
}

static void synth_free(synth *y) {
  free(y->cfgs);
  sp_free(y->sp);
}

/* A counter whose counts are the model's bytes with the true coefficients
** (cap_L1 0.3), of one cold run. */
typedef struct counter {
  synth *y;
  int calls, empty;
} counter;

static int count_model(void *ctx, const int *train, int want, tu_counted *out, char *source, int *cold,
                       rt_err *err) {
  counter *c = ctx;
  c->calls++;
  strcpy(source, "model");
  *cold = 1;
  if (c->empty) {
    rt_err_set(err, "no counter here");
    return 0;
  }
  cm_coefs k = c->y->truth;
  cm_machine mach;
  cm_machine_from_ceilings(&mach, &c->y->ce);
  mach.flush = 1;
  int n = 0;
  for (int i = 0; i < NS && n < want; i++) {
    if (!train[i]) continue;
    cm_work w = {.threads = 1, .imbalance = 1};
    const cm_sample *s = &c->y->s[i];
    assert_int_equal(cm_gemm.work(s->pb, s->sp, s->cfg, &mach, &k, &w, err), 0);
    out[n].idx = i;
    for (int l = 0; l < CM_NLEVEL; l++) out[n].bytes[l] = w.bytes[l];
    n++;
  }
  return n;
}

static void test_calibrate_recovers(void **state) {
  (void)state;
  synth y;
  synth_make(&y);
  const sp_space *wl[1] = {y.sp};
  const char *keys[1] = {"gemm f32 M=256 N=256 K=256"};
  counter cnt = {&y, 0, 0};
  tu_cal_in in = {.km = &cm_gemm, .ce = &y.ce, .s = y.s, .hash = y.hash, .n = NS, .wl = wl, .wl_key = keys,
                  .nwl = 1, .holdout = 0.3, .seed = 3, .counters = 12, .count = count_model, .count_ctx = &cnt};
  cm_coefs_default(&cm_gemm, &in.before);
  tu_cal_out r;
  rt_err err = {0};
  assert_int_equal(tu_calibrate(&in, &r, &err), 0);
  /* the split: complementary, about the share asked, the same again for
  ** the same seed and another for another seed */
  int ntest = 0;
  for (int i = 0; i < NS; i++) {
    assert_int_equal(r.train[i] + r.test[i], 1);
    assert_int_equal(r.test[i], tu_held_out(y.hash[i], 3, 0.3));
    ntest += r.test[i];
  }
  assert_int_equal(ntest, r.ntest);
  assert_int_equal(r.ntrain + r.ntest, NS);
  assert_true(ntest > 0.3 * NS - 4 * sqrt(NS * 0.3 * 0.7) && ntest < 0.3 * NS + 4 * sqrt(NS * 0.3 * 0.7));
  int differ = 0;
  for (int i = 0; i < NS; i++) differ += tu_held_out(y.hash[i], 4, 0.3) != r.test[i];
  assert_true(differ > 0);
  /* the byte terms: 12 counted training schedules; cap_L1 (fitted on the
  ** L2 bytes) found where the counts put it, no error left; L2's and L3's
  ** shares change nothing at this size */
  assert_int_equal(cnt.calls, 1);
  assert_int_equal(r.counted, 12);
  assert_string_equal(r.source, "model");
  assert_string_equal(r.cap[0], "cap_L1");
  assert_string_equal(r.cap[1], "cap_L2");
  for (int l = 0; l < 3; l++)
    printf("%s: median |log error| %.4f -> %.4f, share %.2f\n", r.cap[l], r.berr0[l], r.berr1[l],
           r.start.v[r.cap_idx[l]]);
  assert_true(r.berr0[0] > 0.1 && r.berr1[0] < 1e-9);
  assert_true(fabs(r.start.v[r.cap_idx[0]] - 0.3) < 1e-9);
  for (int l = 1; l < 3; l++) assert_true(r.berr1[l] <= r.berr0[l]);
  /* the time terms: the fit's predictions are the truth's on the held-out
  ** schedules, and it ranks them better than the defaults */
  assert_true(r.fit.rms_after < r.fit.rms_before);
  double worst = 0;
  for (int i = 0; i < NS; i++) {
    if (!r.test[i]) continue;
    cm_pred a, b;
    cm_predict(&cm_gemm, &y.pb, y.sp, y.s[i].cfg, &y.ce, &y.truth, 0, &a, &err);
    cm_predict(&cm_gemm, &y.pb, y.sp, y.s[i].cfg, &y.ce, &r.after, 0, &b, &err);
    worst = fmax(worst, fabs(log(b.time / a.time)));
  }
  printf("calibrate: worst |log(fit / truth)| on the held-out schedules %.4f; spearman %.3f -> %.3f\n",
         worst, r.a_def[0].rho, r.a_after[0].rho);
  assert_true(worst < 0.05);
  assert_int_equal(r.a_after[0].n, r.ntest);
  assert_int_equal(r.t_after[0].n, r.ntrain);
  assert_true(r.a_after[0].rho > 0.95 && r.a_after[0].rho >= r.a_def[0].rho);
  assert_true(fabs(r.after.v[CM_C_COMPUTE] / 0.6 - 1) < 0.1);
  /* the uncertainty (cost_model/cm.h invariant 6), computed here another
  ** way: the two-pass sample SD of log(measured / predicted) over the
  ** held-out schedules, overall and per limiting bound */
  double sum[CM_NBOUND + 1] = {0}, ss[CM_NBOUND + 1] = {0};
  int cnt_b[CM_NBOUND + 1] = {0};
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < NS; i++) {
      if (!r.test[i]) continue;
      cm_pred b;
      cm_predict(&cm_gemm, &y.pb, y.sp, y.s[i].cfg, &y.ce, &r.after, 0, &b, &err);
      double x = log(y.s[i].t / b.time);
      int g[2] = {CM_NBOUND, b.bound};
      for (int k = 0; k < 2; k++) {
        if (pass == 0) sum[g[k]] += x, cnt_b[g[k]]++;
        else ss[g[k]] += (x - sum[g[k]] / cnt_b[g[k]]) * (x - sum[g[k]] / cnt_b[g[k]]);
      }
    }
  double sd_all = sqrt(ss[CM_NBOUND] / (cnt_b[CM_NBOUND] - 1));
  printf("uncertainty: log sd %.5f over %d held-out schedules (by hand %.5f)\n", r.after.unc.all,
         r.after.unc.n, sd_all);
  assert_int_equal(r.after.unc.n, r.ntest);
  assert_int_equal(r.after.unc.held_out, 1);
  assert_true(fabs(r.after.unc.all - sd_all) < 1e-12);
  assert_true(sd_all > 0.005 && sd_all < 0.08);   /* the 2% noise, and the fit's small error */
  for (int b = 0; b < CM_NBOUND; b++) {
    assert_int_equal(r.after.unc.nb[b], cnt_b[b]);
    if (cnt_b[b] >= CM_UNC_MIN)
      assert_true(fabs(r.after.unc.bound[b] - sqrt(ss[b] / (cnt_b[b] - 1))) < 1e-12);
    else
      assert_true(isnan(r.after.unc.bound[b]));
    cm_bound bb = (cm_bound)b;
    assert_true(cm_unc_sigma(&r.after.unc, bb) ==
                (cnt_b[b] >= CM_UNC_MIN ? r.after.unc.bound[b] : r.after.unc.all));
  }
  /* stored in the record, read back the same (as cm_coefs_load reads it) */
  cm_unc back;
  assert_int_equal(cm_unc_parse_fit(r.fit_json, &back, &err), 0);
  assert_true(fabs(back.all - r.after.unc.all) <= 1e-15 * r.after.unc.all);
  assert_int_equal(back.n, r.after.unc.n);
  assert_int_equal(back.held_out, 1);
  for (int b = 0; b < CM_NBOUND; b++) {
    assert_int_equal(back.nb[b], r.after.unc.nb[b]);
    assert_true(isnan(back.bound[b]) ? isnan(r.after.unc.bound[b])
                                     : fabs(back.bound[b] - r.after.unc.bound[b]) <= 1e-15 * back.bound[b]);
  }
  assert_int_equal(cm_unc_parse_fit("{\"uncertainty\": {\"log_sd\": \"x\", \"n\": 1}}", &back, &err), -1);
  assert_int_equal(cm_unc_parse_fit("{\"train\": 3}", &back, &err), 0);   /* an older record */
  assert_true(isnan(back.all) && back.n == 0);
  /* the record stored with the version says the same */
  json_error_t je;
  json_t *j = json_loads(r.fit_json, 0, &je);
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_object_get(j, "train")), r.ntrain);
  assert_int_equal(json_integer_value(json_object_get(j, "test")), r.ntest);
  assert_int_equal(json_integer_value(json_object_get(j, "seed")), 3);
  assert_string_equal(json_string_value(json_array_get(json_object_get(j, "workloads"), 0)), keys[0]);
  json_t *acc = json_object_get(json_array_get(json_object_get(j, "accuracy"), 0), "calibrated");
  assert_true(fabs(json_number_value(json_object_get(acc, "spearman")) - r.a_after[0].rho) < 1e-6);
  json_decref(j);
  /* the same inputs: the same result */
  tu_cal_out r2;
  assert_int_equal(tu_calibrate(&in, &r2, &err), 0);
  assert_memory_equal(&r.after, &r2.after, sizeof r.after);
  assert_string_equal(r.fit_json, r2.fit_json);
  tu_cal_out_free(&r2);
  tu_cal_out_free(&r);
  /* a counter that counts nothing: its reason, no byte terms fitted */
  cnt.empty = 1;
  assert_int_equal(tu_calibrate(&in, &r, &err), 0);
  assert_int_equal(r.counted, 0);
  assert_string_equal(r.count_why, "no counter here");
  assert_true(isnan(r.berr0[0]) && isnan(r.berr1[0]));
  cm_coefs defs;
  cm_coefs_default(&cm_gemm, &defs);
  assert_memory_equal(r.start.v, defs.v, sizeof defs.v);
  tu_cal_out_free(&r);
  /* too few schedules left to fit on */
  in.n = 3, in.holdout = 0.9, in.count = NULL;
  assert_int_equal(tu_calibrate(&in, &r, &err), -1);
  assert_non_null(strstr(err.msg, "schedules left to fit on after holding out 90%"));
  tu_cal_out_free(&r);
  synth_free(&y);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_compare_scripted),
    cmocka_unit_test(test_compare_strategies),
    cmocka_unit_test(test_calibrate_recovers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
