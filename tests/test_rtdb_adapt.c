/*
** test_rtdb_adapt.c -- online adaptation in the reader library (rtdb.h,
** "Online adaptation", A1-A5) and `rooftune db adapt-import`, on a
** database crafted here: gemm workloads M=N=K in {256, 512, 1024, 4096},
** each with six verified trials, a failed and a timed-out one, pinned to
** its third fastest; 2048 the same, not pinned; a faster trial on an 'external' target row that must
** never be offered. Checked against expectations computed here: the arms
** in their order (A1); the cap against a ledger of every call (A2); the
** Welch p-value against GSL's Student t and a Monte Carlo of the
** statistic; the whole rule against a reference implementation written
** here (GSL's t tail), call by call; the rate of false replacements and
** the power by simulation; threads; no allocation after warm-up (malloc,
** calloc and realloc wrapped at link time, Makefile); the log's lines;
** the import's campaigns, trials (medians recomputed), pins and refusals.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/rtdb.h"
#include "db/rtdb_int.h"
#include "tk_exe.h"
#include "tk_run.h"
#include "tk_db.h"

/* ---- Counting allocations (-Wl,--wrap=malloc,...: Makefile) ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
static _Thread_local int counting;
static _Thread_local long allocs;
void *__wrap_malloc(size_t n) {
  allocs += counting;
  return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t m) {
  allocs += counting;
  return __real_calloc(n, m);
}
void *__wrap_realloc(void *p, size_t n) {
  allocs += counting;
  return __real_realloc(p, n);
}

/* ---- The crafted database ---- */

static char dir[64], dbpath[96], exe[4096];
static const int SIZES[] = {256, 512, 1024, 4096, 2048};
#define NS 5
#define NPINNED 4   /* 2048 is stored, not pinned */
#define NTR 6

static void cfg(char *out, size_t cap, int m, int i) { snprintf(out, cap, "{\"i\":%d,\"w\":%d}", i, m); }
static void wkey(char *out, size_t cap, int m) { snprintf(out, cap, "gemm f32 M=%d N=%d K=%d", m, m, m); }

static void build_db(void) {
  rt_err err = {0};
  db *d = db_open(dbpath, DB_CREATE, &err);
  if (!d) fail_msg("%s", err.msg);
  int64_t ta, text, kid, kconv, sid;
  ok(db_target_id(d, "host", "fpA", "{}", &ta, &err), &err);
  ok(db_target_id(d, "host", "external", "{}", &text, &err), &err);
  ok(db_kernel_id(d, "gemm", "1", &kid, &err), &err);
  ok(db_kernel_set_default(d, kid, "{\"i\":-1,\"w\":0}", &err), &err);
  ok(db_kernel_id(d, "conv", "1", &kconv, &err), &err);
  ok(db_kernel_set_default(d, kconv, "{\"tile\":8}", &err), &err);
  ok(db_space_id(d, "{\"test\":1}", &sid, &err), &err);
  int64_t wid[NS], pinned[NS];
  for (int w = 0; w < NS; w++) {
    int m = SIZES[w];
    char key[96], sizes[96], c[64];
    wkey(key, sizeof key, m);
    snprintf(sizes, sizeof sizes, "{\"M\":%d,\"N\":%d,\"K\":%d}", m, m, m);
    int64_t cid;
    ok(db_workload_id(d, kid, key, sizes, "f32", "", &wid[w], &err), &err);
    db_campaign camp = {ta, wid[w], sid, "random", "{}", 1, 8, "measured", "cc", "-O2", "done"};
    ok(db_campaign_new(d, &camp, &cid, &err), &err);
    for (int i = 0; i < NTR + 2; i++) {
      db_trial tr;
      db_trial_init(&tr);
      cfg(c, sizeof c, m, i);
      tr.campaign_id = cid, tr.config_json = c;
      tr.status = i < NTR ? "ok" : i == NTR ? "wrong_result" : "timeout";
      if (i < NTR) tr.time_s = (i + 1) * m * 1e-6;
      int64_t id;
      ok(db_trial_add(d, &tr, &id, &err), &err);
      if (i == 2) pinned[w] = id;
    }
    if (m == 512) {   /* faster, but measured on another machine's row */
      db_campaign ext = {text, wid[w], sid, "random", "{}", 1, 1, "measured", "cc", "-O2", "imported"};
      ok(db_campaign_new(d, &ext, &cid, &err), &err);
      db_trial tr;
      db_trial_init(&tr);
      tr.campaign_id = cid, tr.config_json = "{\"ext\":1}", tr.status = "ok", tr.time_s = 1e-9;
      int64_t id;
      ok(db_trial_add(d, &tr, &id, &err), &err);
    }
  }
  db_close(d);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(dbpath, &h), SQLITE_OK);
  for (int w = 0; w < NPINNED; w++) {
    char c[64];
    cfg(c, sizeof c, SIZES[w], 2);
    sql(h, "INSERT INTO pins(target_id, workload_id, version, trial_id, config, pinned_by, reason)"
           " VALUES(%lld, %lld, 1, %lld, %Q, 'test', 'conservative')",
        (long long)ta, (long long)wid[w], (long long)pinned[w], c);
    sql(h, "INSERT INTO pin_current VALUES(%lld, %lld, last_insert_rowid())", (long long)ta, (long long)wid[w]);
  }
  sqlite3_close(h);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/rooftune-test-adapt-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  snprintf(dbpath, sizeof dbpath, "%s/t.db", dir);
  build_db();
  return find_rooftune("test_rtdb_adapt", exe, sizeof exe) ? -1 : 0;
}

static int teardown(void **state) {
  (void)state;
  return tk_rm_rf(dir);
}

static rtdb *open_db(void) {
  rtdb *r;
  int rc = rtdb_open(dbpath, &r);
  if (rc) fail_msg("rtdb_open: %s", rtdb_errstr(rc));
  return r;
}

static rtdb_adapt *open_ad(rtdb *r, const rtdb_adapt_opts *o) {
  rtdb_adapt *a;
  char msg[512];
  int rc = rtdb_adapt_open(r, o, &a, msg, sizeof msg);
  if (rc) fail_msg("rtdb_adapt_open: %s", msg);
  return a;
}

static const char V512[] = "M=512,N=512,K=512";

/* ---- A1: the arms ---- */

static void test_arms(void **state) {
  (void)state;
  rtdb *r = open_db();
  rtdb_adapt *a = open_ad(r, NULL);
  rtdb_choice c;
  assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", V512, NULL, &c), RTDB_OK);
  assert_int_equal(c.match, RTDB_EXACT);
  /* expected: the pin (i=2), the workload's top 3 less the pin (i=0, 1), then
  ** the nearest pinned workloads -- 256 and 1024 at distance sqrt(3), 1024's
  ** key first -- each its pin and its top 3 less the pin */
  static const int want[][2] = {{512, 2}, {512, 0}, {512, 1}, {1024, 2}, {1024, 0}, {1024, 1},
                                {256, 2}, {256, 0}, {256, 1}};
  rtdb_adapt_arm arms[16];
  rtdb_adapt_stats st;
  assert_int_equal(rtdb_adapt_stats_of(a, &c, &st, arms, 16), RTDB_OK);
  assert_int_equal(st.narms, 9);
  for (int i = 0; i < 9; i++) {
    char c1[64], k1[96];
    cfg(c1, sizeof c1, want[i][0], want[i][1]);
    wkey(k1, sizeof k1, want[i][0]);
    assert_string_equal(arms[i].config, c1);
    assert_string_equal(arms[i].workload, k1);
    assert_int_equal(arms[i].pin_version, want[i][1] == 2 ? 1 : 0);
    assert_true((arms[i].trial_id > 0) == (want[i][1] != 2));
  }
  assert_int_equal(st.incumbent, 0);
  assert_string_equal(c.config, arms[0].config);
  rtdb_adapt_close(a);

  /* fewer arms, a nearest site, the default site, errors */
  a = open_ad(r, &(rtdb_adapt_opts){.max_arms = 4, .neighbours = 1});
  assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", "M=600,N=600,K=600", NULL, &c), RTDB_OK);
  assert_int_equal(c.match, RTDB_NEAREST);
  assert_int_equal(rtdb_adapt_stats_of(a, &c, &st, arms, 16), RTDB_OK);
  assert_int_equal(st.narms, 5);   /* pin 512, 512's i=0, 1, then 1024's pin and i=0 */
  static const int want2[][2] = {{512, 2}, {512, 0}, {512, 1}, {1024, 2}, {1024, 0}};
  for (int i = 0; i < 5; i++) {
    char c1[64];
    cfg(c1, sizeof c1, want2[i][0], want2[i][1]);
    assert_string_equal(arms[i].config, c1);
  }
  rtdb_adapt_close(a);
  /* stored without a pin: its own top 3 come before the nearest pin's
  ** (1024 and 4096 at sqrt(3): 1024's key first; then 4096 the neighbour) */
  a = open_ad(r, NULL);
  assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", "M=2048,N=2048,K=2048", NULL, &c), RTDB_OK);
  assert_int_equal(c.match, RTDB_NEAREST);
  assert_int_equal(rtdb_adapt_stats_of(a, &c, &st, arms, 16), RTDB_OK);
  static const int want3[][2] = {{1024, 2}, {2048, 0}, {2048, 1}, {2048, 2}, {1024, 0}, {1024, 1},
                                 {4096, 2}, {4096, 0}, {4096, 1}};
  assert_int_equal(st.narms, 9);
  for (int i = 0; i < 9; i++) {
    char c1[64];
    cfg(c1, sizeof c1, want3[i][0], want3[i][1]);
    assert_string_equal(arms[i].config, c1);
  }
  assert_int_equal(rtdb_adapt_choose(a, "host", "conv", "H=64", NULL, &c), RTDB_OK);
  assert_int_equal(c.match, RTDB_DEFAULT);
  assert_string_equal(c.config, "{\"tile\":8}");
  assert_int_equal(rtdb_adapt_stats_of(a, &c, &st, arms, 16), RTDB_OK);
  assert_int_equal(st.narms, 1);
  for (int i = 0; i < 100; i++) {
    assert_int_equal(rtdb_adapt_choose(a, "host", "conv", "H=64", NULL, &c), RTDB_OK);
    assert_int_equal(c.arm, 0);
    assert_int_equal(rtdb_adapt_report(a, &c, 1e-3), RTDB_OK);
  }
  assert_int_equal(rtdb_adapt_choose(a, "host", "nosuch", V512, NULL, &c), RTDB_NOTFOUND);
  assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", "M=", NULL, &c), RTDB_MISUSE);
  assert_non_null(strstr(rtdb_adapt_errmsg(a), "malformed"));
  assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", V512, NULL, &c), RTDB_OK);
  assert_int_equal(rtdb_adapt_report(a, &c, 0), RTDB_MISUSE);
  assert_int_equal(rtdb_adapt_report(a, &c, NAN), RTDB_MISUSE);
  rtdb_adapt *b = open_ad(r, NULL);
  assert_int_equal(rtdb_adapt_report(b, &c, 1), RTDB_MISUSE);   /* another adapter's choice */
  assert_non_null(strstr(rtdb_adapt_errmsg(b), "not a choice"));
  rtdb_adapt_close(b);
  char msg[256];
  assert_int_equal(rtdb_adapt_open(r, &(rtdb_adapt_opts){.cap = 0.7}, &b, msg, sizeof msg), RTDB_MISUSE);
  assert_null(b);
  assert_int_equal(rtdb_adapt_open(r, &(rtdb_adapt_opts){.confidence = 1}, &b, msg, sizeof msg), RTDB_MISUSE);
  assert_int_equal(rtdb_adapt_open(r, &(rtdb_adapt_opts){.min_samples = 1}, &b, msg, sizeof msg), RTDB_MISUSE);
  rtdb_adapt_close(a);
  rtdb_close(r);
}

/* ---- A2: the cap, against a ledger of every call ---- */

static void test_cap_ledger(void **state) {
  (void)state;
  rtdb *r = open_db();
  static const double caps[] = {0.1, 0.05, 0.25};
  for (int k = 0; k < 3; k++) {
    double cap = caps[k];
    rtdb_adapt *a = open_ad(r, &(rtdb_adapt_opts){.cap = cap, .min_samples = 4, .max_samples = 16});
    /* every arm reports 1.0 s: no test decides (equal means, no variance), so
    ** each alternative retires after 16 reports */
    long long explored = 0, n[16] = {0};
    int narms = 9;
    for (long long call = 1; call <= 3000; call++) {
      rtdb_choice c;
      assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", V512, NULL, &c), RTDB_OK);
      int live = 0, fewest = -1;
      for (int j = 1; j < narms; j++)
        if (n[j] < 16) {
          live = 1;
          if (fewest < 0 || n[j] < n[fewest]) fewest = j;
        }
      int expect = live && (double)(explored + 1) <= cap * (double)call;
      assert_int_equal(c.explore, expect);
      assert_int_equal(c.arm, expect ? fewest : 0);
      explored += expect;
      n[c.arm]++;
      assert_true((double)explored <= cap * (double)call);
      assert_int_equal(rtdb_adapt_report(a, &c, 1.0), RTDB_OK);
    }
    long long want = (long long)floor(cap * 3000 + 1e-9);
    assert_int_equal(explored, want < 8 * 16 ? want : 8 * 16);
    rtdb_choice c;
    rtdb_adapt_stats st;
    assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", V512, NULL, &c), RTDB_OK);
    assert_int_equal(rtdb_adapt_stats_of(a, &c, &st, NULL, 0), RTDB_OK);
    assert_int_equal(st.calls, 3001);
    assert_int_equal(st.explored, explored);
    assert_int_equal(st.replacements, 0);
    rtdb_adapt_close(a);
  }
  rtdb_close(r);
}

/* ---- A3: Welch's p-value ---- */

static void test_welch_p(void **state) {
  (void)state;
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, 7);
  for (int i = 0; i < 2000; i++) {
    double na = 2 + gsl_rng_uniform_int(g, 500), nb = 2 + gsl_rng_uniform_int(g, 500);
    double ma = gsl_rng_uniform(g), mb = ma + gsl_ran_gaussian(g, 0.05);
    double va = pow(10, -4 * gsl_rng_uniform(g)) * 1e-2, vb = pow(10, -4 * gsl_rng_uniform(g)) * 1e-2;
    double sa = va / na, sb = vb / nb, se2 = sa + sb;
    double df = fmin(na, nb) - 1;
    double want = gsl_cdf_tdist_Q((ma - mb) / sqrt(se2), df), got = rtdb__welch_p(na, ma, va, nb, mb, vb);
    if (fabs(got - want) > 1e-9 * fmax(want, 1e-300) && fabs(got - want) > 1e-14)
      fail_msg("welch p %.17g, GSL %.17g (na %g nb %g t %g df %g)", got, want, na, nb, (ma - mb) / sqrt(se2), df);
  }
  assert_true(rtdb__welch_p(5, 2, 0, 5, 1, 0) == 0);
  assert_true(rtdb__welch_p(5, 1, 0, 5, 2, 0) == 1);
  assert_true(rtdb__welch_p(5, 1, 0, 5, 1, 0) == 0.5);
  /* Monte Carlo: normal samples of equal means (sizes 8 and 40, sd 1 and 3):
  ** the share with p < 0.05 is at most 0.05 (conservative; + 3 sd) */
  int hits = 0, runs = 20000;
  for (int r = 0; r < runs; r++) {
    double x[40], sa = 0, sb = 0, qa = 0, qb = 0;
    for (int i = 0; i < 8; i++) x[i] = gsl_ran_gaussian(g, 1), sa += x[i];
    for (int i = 0; i < 8; i++) qa += (x[i] - sa / 8) * (x[i] - sa / 8);
    for (int i = 0; i < 40; i++) x[i] = gsl_ran_gaussian(g, 3), sb += x[i];
    for (int i = 0; i < 40; i++) qb += (x[i] - sb / 40) * (x[i] - sb / 40);
    hits += rtdb__welch_p(8, sa / 8, qa / 7, 40, sb / 40, qb / 39) < 0.05;
  }
  print_message("p < 0.05 in %d of %d null draws\n", hits, runs);
  assert_true((double)hits / runs <= 0.05 + 3 * sqrt(0.05 * 0.95 / runs));
  gsl_rng_free(g);
}

/* ---- A2 + A3: the rule against a reference written here ---- */

typedef struct ref {
  int narms, inc, state[16];
  long long n[16], calls, explored;
  double sum[16], sq[16];
  double cap, conf;
  int min, max, replacements;
} ref;

static int ref_pick(ref *f) {
  f->calls++;
  if ((double)(f->explored + 1) <= f->cap * (double)f->calls) {
    int best = -1;
    for (int j = 0; j < f->narms; j++)
      if (j != f->inc && f->state[j] == 0 && (best < 0 || f->n[j] < f->n[best])) best = j;
    if (best >= 0) return f->explored++, best;
  }
  return f->inc;
}

static double ref_var(const ref *f, int j) {
  double m = f->sum[j] / f->n[j];
  return (f->sq[j] - f->n[j] * m * m) / (f->n[j] - 1);
}

/* P(mean_a - mean_b this large or larger), Welch, through GSL. */
static double ref_p(const ref *f, int a, int b) {
  double va = ref_var(f, a) / f->n[a], vb = ref_var(f, b) / f->n[b], se2 = va + vb;
  double ma = f->sum[a] / f->n[a], mb = f->sum[b] / f->n[b];
  if (!(se2 > 0)) return ma > mb ? 0 : ma < mb ? 1 : 0.5;
  double df = (double)(f->n[a] < f->n[b] ? f->n[a] : f->n[b]) - 1;
  return gsl_cdf_tdist_Q((ma - mb) / sqrt(se2), df);
}

static void ref_report(ref *f, int j, double t) {
  f->n[j]++, f->sum[j] += t, f->sq[j] += t * t;
  if (j == f->inc || f->state[j] || f->n[j] < f->min) return;
  long long q = f->n[j] / f->min;
  int i = 0;
  while ((1LL << i) < q) i++;
  if (f->n[j] % f->min == 0 && (1LL << i) == q && f->n[f->inc] >= f->min) {
    double alpha = (1 - f->conf) / ((f->narms - 1) * pow(2, i + 1));
    if (ref_p(f, f->inc, j) < alpha) {
      f->state[f->inc] = 3, f->inc = j, f->replacements++;
    } else if (ref_p(f, j, f->inc) < 1 - f->conf) {
      f->state[j] = 1;
    } else if (2 * f->n[j] > f->max) {
      f->state[j] = 2;
    }
  } else if (f->n[j] >= f->max) {
    f->state[j] = 2;
  }
}

/* One simulated run: arm j's times ~ N(mean[j], sd). Returns the number of
** replacements; with check, the adapter must agree with ref at every call. */
static int simulate(rtdb *r, gsl_rng *g, const double *mean, double sd, int calls, double conf, int check) {
  rtdb_adapt_opts o = {.cap = 0.25, .confidence = conf, .min_samples = 4, .max_samples = 32};
  rtdb_adapt *a = open_ad(r, &o);
  ref f = {.narms = 9, .cap = o.cap, .conf = conf, .min = 4, .max = 32};
  rtdb_adapt_stats st;
  rtdb_adapt_arm arms[16];
  for (int k = 0; k < calls; k++) {
    rtdb_choice c;
    assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", V512, NULL, &c), RTDB_OK);
    int want = ref_pick(&f);
    double t = fmax(1e-6, mean[c.arm] + gsl_ran_gaussian(g, sd));
    if (check) assert_int_equal(c.arm, want);
    assert_int_equal(rtdb_adapt_report(a, &c, t), RTDB_OK);
    ref_report(&f, c.arm, t);
    if (check) {
      assert_int_equal(rtdb_adapt_stats_of(a, &c, &st, arms, 16), RTDB_OK);
      assert_int_equal(st.incumbent, f.inc);
      for (int j = 0; j < 9; j++) assert_int_equal(arms[j].state, f.state[j]);
    }
  }
  rtdb_choice c;
  assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", V512, NULL, &c), RTDB_OK);
  assert_int_equal(rtdb_adapt_stats_of(a, &c, &st, NULL, 0), RTDB_OK);
  assert_int_equal(st.replacements, f.replacements);
  rtdb_adapt_close(a);
  return st.replacements;
}

static void test_rule_vs_reference(void **state) {
  (void)state;
  rtdb *r = open_db();
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, 11);
  static const double equal[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  static const double faster[9] = {1, 1.1, 1.05, 1.2, 0.7, 1, 1.3, 1.4, 1.02};
  static const double slower[9] = {1, 1.5, 1.6, 1.7, 1.8, 1.9, 2, 2.1, 2.2};
  for (int s = 0; s < 20; s++) {
    simulate(r, g, equal, 0.1, 1500, 0.9, 1);
    assert_true(simulate(r, g, faster, 0.05, 1500, 0.99, 1) >= 1);
    assert_int_equal(simulate(r, g, slower, 0.05, 1500, 0.99, 1), 0);
  }
  gsl_rng_free(g);
  rtdb_close(r);
}

/* A3's guarantee by simulation: no alternative faster, 600 runs at
** confidence 0.9: replacements in at most 10% of them (+3 sd); one
** alternative 20% faster: replaced in at least 95% of 200 runs. */
static void test_false_replacement_rate(void **state) {
  (void)state;
  rtdb *r = open_db();
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, 13);
  static const double equal[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  static const double one[9] = {1, 1, 1, 1, 1, 0.8, 1, 1, 1};
  int runs = 600, replaced = 0;
  for (int i = 0; i < runs; i++) replaced += simulate(r, g, equal, 0.05, 1200, 0.9, 0) > 0;
  double rate = (double)replaced / runs;
  print_message("false replacements: %d of %d runs (%.3f; bound 0.1)\n", replaced, runs, rate);
  assert_true(rate <= 0.1 + 3 * sqrt(0.1 * 0.9 / runs));
  int found = 0;
  for (int i = 0; i < 200; i++) found += simulate(r, g, one, 0.05, 1200, 0.9, 0) > 0;
  print_message("a 20%% faster alternative replaced the pin in %d of 200 runs\n", found);
  assert_true(found >= 190);
  gsl_rng_free(g);
  rtdb_close(r);
}

/* ---- A4: threads, and no allocation after warm-up ---- */

#define NT 4
#define PER 5000
static rtdb_adapt *shared;
static const char *const SITES[] = {V512, "M=600,N=600,K=600", "M=2048,N=2048,K=2048"};
static long long done_per[NT][3];

static void *worker(void *arg) {
  int t = (int)(intptr_t)arg;
  for (int i = 0; i < PER; i++) {
    rtdb_choice c;
    int s = (i + t) % 3;
    if (rtdb_adapt_choose(shared, "host", "gemm", SITES[s], NULL, &c)) return (void *)1;
    if (rtdb_adapt_report(shared, &c, 1e-3 * (1 + c.arm) * (1 + 0.01 * (i % 7)))) return (void *)1;
    done_per[t][s]++;
  }
  return NULL;
}

static void test_threads_and_log(void **state) {
  (void)state;
  rtdb *r = open_db();
  char log[128];
  snprintf(log, sizeof log, "%s/threads.log", dir);
  shared = open_ad(r, &(rtdb_adapt_opts){.cap = 0.1, .log_path = log});
  rtdb_adapt *other;
  char msg[512];
  assert_int_equal(rtdb_adapt_open(r, &(rtdb_adapt_opts){.log_path = log}, &other, msg, sizeof msg), RTDB_CANTOPEN);
  assert_non_null(strstr(msg, "in use"));
  pthread_t th[NT];
  for (int t = 0; t < NT; t++) assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
  for (int t = 0; t < NT; t++) {
    void *rv;
    pthread_join(th[t], &rv);
    assert_null(rv);
  }
  long long reports[3][16] = {{0}};
  int narms[3];
  for (int s = 0; s < 3; s++) {
    rtdb_choice c;
    rtdb_adapt_stats st;
    rtdb_adapt_arm arms[16];
    assert_int_equal(rtdb_adapt_choose(shared, "host", "gemm", SITES[s], NULL, &c), RTDB_OK);
    assert_int_equal(rtdb_adapt_stats_of(shared, &c, &st, arms, 16), RTDB_OK);
    long long want = 0, sum = 0;
    for (int t = 0; t < NT; t++) want += done_per[t][s];
    for (int j = 0; j < st.narms; j++) sum += arms[j].n, reports[s][j] = arms[j].n;
    narms[s] = st.narms;
    assert_int_equal(st.calls, want + 1);
    assert_int_equal(sum, want);
    assert_true((double)st.explored <= 0.1 * (double)st.calls);
  }
  assert_int_equal(rtdb_adapt_close(shared), RTDB_OK);
  /* the log: one session, three sites, every report, as the stats say */
  FILE *f = fopen(log, "r");
  assert_non_null(f);
  char *line = NULL;
  size_t cap = 0;
  int sessions = 0, sites = 0;
  long long seen[3][16] = {{0}};
  while (getline(&line, &cap, f) > 0) {
    json_t *o = json_loads(line, 0, NULL);
    assert_non_null(o);
    if (json_object_get(o, "rtdb_adapt")) sessions++;
    else if (json_object_get(o, "site")) {
      int id = (int)json_integer_value(json_object_get(o, "site"));
      assert_true(id >= 0 && id < 3);
      assert_int_equal((int)json_array_size(json_object_get(o, "arms")), narms[sites]);
      sites++;
    } else if (json_object_get(o, "t")) {
      seen[json_integer_value(json_object_get(o, "s"))][json_integer_value(json_object_get(o, "a"))]++;
    }
    json_decref(o);
  }
  free(line);
  fclose(f);
  assert_int_equal(sessions, 1);
  assert_int_equal(sites, 3);
  /* site numbers follow first use: thread 0's first call is site 0 (V512) only
  ** when it ran first, so match the counts as sets of rows */
  for (int s = 0; s < 3; s++) {
    int matched = 0;
    for (int q = 0; q < 3; q++) matched |= !memcmp(seen[q], reports[s], sizeof reports[s]);
    assert_true(matched);
  }
  rtdb_close(r);
}

static void test_no_alloc_after_warmup(void **state) {
  (void)state;
  rtdb *r = open_db();
  char log[128];
  snprintf(log, sizeof log, "%s/alloc.log", dir);
  rtdb_adapt *a = open_ad(r, &(rtdb_adapt_opts){.cap = 0.2, .log_path = log});
  rtdb_choice c;
  assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", V512, NULL, &c), RTDB_OK);   /* warm-up */
  allocs = 0;
  counting = 1;
  for (int i = 0; i < 20000; i++) {   /* > 64 KiB of log lines: the buffer is written several times */
    if (rtdb_adapt_choose(a, "host", "gemm", V512, NULL, &c) || rtdb_adapt_report(a, &c, 1e-3 * (1 + c.arm)))
      fail_msg("call %d", i);
  }
  counting = 0;
  assert_int_equal(allocs, 0);
  /* the count works: a new site allocates */
  counting = 1;
  assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", "M=1024,N=1024,K=1024", NULL, &c), RTDB_OK);
  counting = 0;
  assert_true(allocs > 0);
  assert_int_equal(rtdb_adapt_close(a), RTDB_OK);
  rtdb_close(r);
}

/* ---- The import ---- */

static long long count(const char *q) {
  sqlite3 *h;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open_v2(dbpath, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h, q, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  long long n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static tk_result run_import(const char *log, const char *a1, const char *a2) {
  const char *argv[] = {exe, "db", "adapt-import", "--db", dbpath, log, a1, a2, NULL};
  return tk_capture(argv, NULL, NULL);
}

static void test_import(void **state) {
  (void)state;
  char log[128], bad[128];
  snprintf(log, sizeof log, "%s/run.log", dir);
  snprintf(bad, sizeof bad, "%s/bad.log", dir);
  rtdb *r = open_db();
  rtdb_adapt *a = open_ad(r, &(rtdb_adapt_opts){.cap = 0.2, .confidence = 0.99, .log_path = log});
  /* arm 4 ({"i":0,"w":1024}) runs in half the pin's time; arm 1 fails once */
  static double times[16][4096];
  int nt[16] = {0}, failed = 0, replaced_at = -1;
  rtdb_choice c;
  for (int i = 0; i < 4000; i++) {
    assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", V512, NULL, &c), RTDB_OK);
    if (c.arm == 1 && !failed) {
      failed = 1;
      assert_int_equal(rtdb_adapt_fail(a, &c), RTDB_OK);
      continue;
    }
    double t = (c.arm == 4 ? 1e-3 : 2e-3 + 1e-4 * (c.arm % 3)) * (1 + 0.02 * ((i * 7919) % 11));
    times[c.arm][nt[c.arm]++] = t;
    assert_int_equal(rtdb_adapt_report(a, &c, t), RTDB_OK);
    rtdb_adapt_stats st;
    assert_int_equal(rtdb_adapt_stats_of(a, &c, &st, NULL, 0), RTDB_OK);
    if (st.replacements && replaced_at < 0) replaced_at = i, assert_int_equal(st.incumbent, 4);
  }
  assert_true(replaced_at > 0);
  assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", V512, NULL, &c), RTDB_OK);
  assert_int_equal(c.arm, c.explore ? c.arm : 4);
  /* a nearest site: no stored workload of M=600 */
  assert_int_equal(rtdb_adapt_choose(a, "host", "gemm", "M=600,N=600,K=600", NULL, &c), RTDB_OK);
  assert_int_equal(rtdb_adapt_report(a, &c, 1e-3), RTDB_OK);
  assert_int_equal(rtdb_adapt_close(a), RTDB_OK);
  rtdb_close(r);

  long long trials0 = count("SELECT count(*) FROM trials"), pins0 = count("SELECT count(*) FROM pins");
  /* unmatched site: an error, nothing stored */
  tk_result x = run_import(log, "--pin", NULL);
  assert_int_equal(x.rc, 1);
  if (!strstr(x.err, "matches vars 'M=600,N=600,K=600'")) fail_msg("%s", x.err);
  if (strstr(x.out, "campaign")) fail_msg("a rolled-back site reported as stored: %s", x.out);
  tk_result_free(&x);
  assert_int_equal(count("SELECT count(*) FROM trials"), trials0);
  /* a garbled line: file and line named, nothing stored */
  FILE *in = fopen(log, "r"), *out = fopen(bad, "w");
  char buf[65536];
  int ln = 0;
  while (fgets(buf, sizeof buf, in)) fputs(++ln == 3 ? "{\"s\":0,\"a\":99,\"t\":1}\n" : buf, out);
  fclose(in), fclose(out);
  x = run_import(bad, "--skip-unmatched", NULL);
  assert_int_equal(x.rc, 1);
  char want[256];
  snprintf(want, sizeof want, "%s:3: a report of an arm the site does not have", bad);
  assert_non_null(strstr(x.err, want));
  tk_result_free(&x);
  assert_int_equal(count("SELECT count(*) FROM trials"), trials0);
  /* without --pin: trials, no pin */
  x = run_import(log, "--skip-unmatched", "--json");
  assert_int_equal(x.rc, 0);
  json_t *j = json_loads(x.out, 0, NULL);
  assert_int_equal((int)json_array_size(j), 2);
  assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "workload")), "gemm f32 M=512 N=512 K=512");
  assert_int_equal(json_integer_value(json_object_get(json_array_get(j, 0), "pin_version")), 0);
  assert_non_null(strstr(json_string_value(json_object_get(json_array_get(j, 1), "skipped")), "no stored workload"));
  json_decref(j);
  tk_result_free(&x);
  assert_int_equal(count("SELECT count(*) FROM pins"), pins0);
  int ran = 0;
  for (int k = 0; k < 16; k++) ran += nt[k] > 0 || k == 1;
  assert_int_equal(count("SELECT count(*) FROM trials"), trials0 + ran);
  assert_int_equal(count("SELECT count(*) FROM trials WHERE origin = 'adapt' AND status = 'runtime_error'"), 1);
  /* arm 0's trial: median and repeats of what was reported */
  qsort(times[0], (size_t)nt[0], sizeof(double), cmp_d);
  double med = nt[0] % 2 ? times[0][nt[0] / 2] : (times[0][nt[0] / 2 - 1] + times[0][nt[0] / 2]) / 2;
  char q[256];
  snprintf(q, sizeof q, "SELECT count(*) FROM trials WHERE origin = 'adapt' AND config = '{\"i\":2,\"w\":512}'"
           " AND repeats = %d AND abs(time - %.17g) < 1e-8 * %.17g", nt[0], med, med);   /* the log keeps 9 digits */
  assert_int_equal(count(q), 1);
  /* again, with --pin: imported before, so nothing */
  x = run_import(log, "--skip-unmatched", "--pin");
  assert_int_equal(x.rc, 0);
  assert_non_null(strstr(x.out, "imported before"));
  tk_result_free(&x);
  assert_int_equal(count("SELECT count(*) FROM trials"), trials0 + ran);
  assert_int_equal(count("SELECT count(*) FROM pins"), pins0);
  /* the same run's log into a fresh copy of the database, with --pin */
  sqlite3 *h;
  assert_int_equal(sqlite3_open(dbpath, &h), SQLITE_OK);
  sql(h, "DELETE FROM trials WHERE origin = 'adapt'; DELETE FROM campaigns WHERE strategy = 'adapt'");
  sqlite3_close(h);
  x = run_import(log, "--skip-unmatched", "--pin");
  assert_int_equal(x.rc, 0);
  assert_non_null(strstr(x.out, "pinned version 2"));
  tk_result_free(&x);
  assert_int_equal(count("SELECT count(*) FROM pins p JOIN pin_current c ON c.pin_id = p.id"
                         " WHERE p.version = 2 AND p.config = '{\"i\":0,\"w\":1024}' AND p.pinned_by = 'adapt-import'"
                         " AND p.reason LIKE 'online adaptation: faster than the pin at confidence 0.99%'"),
                   1);
  const char *check[] = {exe, "db", "check", "--db", dbpath, NULL};   /* rooftune's invariants hold */
  x = tk_capture(check, NULL, NULL);
  if (x.rc) fail_msg("db check: %s%s", x.out, x.err);
  tk_result_free(&x);
  r = open_db();
  rtdb_result res;
  assert_int_equal(rtdb_lookup(r, "host", "gemm", V512, NULL, &res), RTDB_OK);
  assert_string_equal(res.config, "{\"i\":0,\"w\":1024}");
  assert_int_equal(res.pin_version, 2);
  rtdb_close(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_arms),
    cmocka_unit_test(test_cap_ledger),
    cmocka_unit_test(test_welch_p),
    cmocka_unit_test(test_rule_vs_reference),
    cmocka_unit_test(test_false_replacement_rate),
    cmocka_unit_test(test_threads_and_log),
    cmocka_unit_test(test_no_alloc_after_warmup),
    cmocka_unit_test(test_import),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
