/*
** test_campaign.c -- live campaigns (tuner/tu_campaign.c) with an injected
** measurement whose answers the test chooses per configuration and per
** measurement, so that the conservative pin rule (tu.h invariant 6) is
** checked against decisions worked out here by hand:
**  - the default is the first trial (strategies then see it, in order);
**  - a candidate that looked faster in the run but is not, measured again
**    beside the default: the default is pinned, the report says why;
**  - a candidate that clearly wins (disjoint CIs) is pinned;
**  - a noisy trial is measured again before it can be pinned, and loses
**    its place when it was only noise (or stays too noisy to beat it);
**  - a wrong result in the re-measurement is never pinned, even where the
**    default itself failed;
**  - same seed and answers, same run and same decision; an identical end
**    sequence is reused from the database;
**  - resume: of a stopped campaign (same trials as one uninterrupted), and
**    of a campaign stored before the default came first (replayed without
**    it); a lease whose holder is dead, reused or on another host is taken
**    over, a live one refused.
** Then the rooftune program: two concurrent `tune --resume` of one
** campaign (the second refused, naming the first's pid; nothing measured
** twice), the report's wording on a real host workload (whatever wins),
** the compile time of a cold cache (the parallel builds are compile
** time; compile + verify + measure + framework = elapsed), and compare's
** live runs decided as tune decides.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "targets/host/hk.h"
#include "targets/tg.h"
#include "tuner/tu.h"
#include "tk_exe.h"
#include "tk_run.h"
#include "tk_space.h"

#define SET "N=100000,threads_max=2"
#define MAXR 4096

static char rooftune[4096];

/* ---- The injected measurement ---- */

typedef struct fake fake;
/* The answer for the configuration of rank `rank`: its trial in the run
** (again 0) or a measurement at the end (again 1). */
typedef void (*answer_fn)(const fake *f, int64_t rank, int again, ms_result *r);

struct fake {
  sp_space *sp;
  int64_t def_rank;
  answer_fn answer;
  int nth[MAXR];         /* measurements per rank */
  int run_calls;         /* the first run_calls measurements are the run's */
  int64_t log[512];      /* ranks in measurement order; -1: the baseline */
  int nlog;
  int stop_at;          /* set *stop at this measurement (1-based); 0: never */
  volatile sig_atomic_t *stop;
  int batches[128];      /* sizes of the batches measured together */
  int nbatch;
  int fail_batch;        /* 1: a batch measurement fails (harness failure) */
  struct apool *pool;    /* the injected asynchronous pool (test_async_pool) */
};

static void ok_ms(ms_result *r, double ms, double rel, int noisy) {
  memset(r, 0, sizeof *r);
  r->status = MS_OK;
  r->t.n = 20;
  r->t.median = r->t.mean = ms * 1e-3;
  r->t.ci_lo = r->t.min = ms * (1 - rel) * 1e-3;
  r->t.ci_hi = r->t.max = ms * (1 + rel) * 1e-3;
  r->t.noisy = noisy;
  r->compile_s = r->verify_s = 0.001, r->bench_s = 0.01;
}

static void ci_ms(ms_result *r, double ms, double lo, double hi, int noisy) {
  ok_ms(r, ms, 0, noisy);
  r->t.ci_lo = r->t.min = lo * 1e-3;
  r->t.ci_hi = r->t.max = hi * 1e-3;
}

static void failed(ms_result *r, ms_status s) {
  memset(r, 0, sizeof *r);
  r->status = s;
  snprintf(r->msg, sizeof r->msg, "%s (injected)", ms_status_name(s));
}

static int fake_measure(void *ctx, const int *cfg, const char *src, const char *ldflags,
                        const ms_opts *o, ms_result *r) {
  fake *f = ctx;
  (void)src, (void)ldflags, (void)o;
  int64_t rank = -1;
  if (cfg) {
    rt_count rc;
    assert_int_equal(sp_rank(f->sp, cfg, &rc), 0);
    rank = (int64_t)rc;
    assert_true(rank < MAXR);
  }
  assert_true(f->nlog < 512);
  f->log[f->nlog++] = rank;
  if (rank < 0) ok_ms(r, 2.0, 0.01, 0);   /* the baseline */
  else f->answer(f, rank, f->nlog > f->run_calls, r), f->nth[rank]++;
  if (f->stop_at && f->nlog == f->stop_at) *f->stop = 1;
  return 0;
}

/* The injected batch measurement: each item answered (and logged) as
** fake_measure answers it alone; the item whose measurement sets *stop is
** the one in flight, not complete. */
static int fake_measure_batch(void *ctx, const int *cfgs, const char *const *srcs, int n,
                              const ms_opts *o, ms_result *r, const volatile sig_atomic_t *stop,
                              rt_err *err) {
  fake *f = ctx;
  int np = sp_nparams(f->sp);
  assert_true(f->nbatch < 128 && n > 1);
  f->batches[f->nbatch++] = n;
  if (f->fail_batch) {
    rt_err_set(err, "injected harness failure");
    return -1;
  }
  for (int i = 0; i < n; i++) {
    if (stop && *stop) return i;
    fake_measure(ctx, cfgs + (size_t)i * np, srcs[i], NULL, o, &r[i]);
    if (stop && *stop) return i;
  }
  return n;
}

/* An asynchronous pool (tu_campaign_opts.measure_submit/collect): jobs
** finish in a seeded shuffled order, each answered as fake_measure
** answers it alone when it finishes. */
#define APOOL 16
#define APARAMS 16
typedef struct apool {
  int64_t id[APOOL];
  int cfg[APOOL][APARAMS], n, most;
  uint64_t lcg;
  int64_t sent[512], done[512];   /* ranks submitted; ranks in completion order */
  int nsent, ndone;
} apool;

static int apool_submit(void *ctx, int64_t id, const int *cfg, const char *src, const char *ldflags,
                        rt_err *err) {
  fake *f = ctx;
  apool *p = f->pool;
  (void)src, (void)ldflags, (void)err;
  int np = sp_nparams(f->sp);
  assert_true(p->n < APOOL && np <= APARAMS && p->nsent < 512);
  rt_count rc;
  assert_int_equal(sp_rank(f->sp, cfg, &rc), 0);
  p->sent[p->nsent++] = (int64_t)rc;
  p->id[p->n] = id;
  memcpy(p->cfg[p->n++], cfg, (size_t)np * sizeof *cfg);
  if (p->n > p->most) p->most = p->n;
  return 0;
}

static int apool_collect(void *ctx, int64_t *id, int *rc, ms_result *r, rt_err *err) {
  fake *f = ctx;
  apool *p = f->pool;
  if (!p->n) {
    rt_err_set(err, "nothing in flight");
    return -1;
  }
  p->lcg = p->lcg * 6364136223846793005ull + 1442695040888963407ull;
  int i = (int)((p->lcg >> 33) % (uint64_t)p->n), np = sp_nparams(f->sp), cfg[APARAMS];
  *id = p->id[i];
  memcpy(cfg, p->cfg[i], sizeof cfg);
  memmove(p->id + i, p->id + i + 1, (size_t)(p->n - i - 1) * sizeof *p->id);
  memmove(p->cfg[i], p->cfg[i + 1], (size_t)(p->n - i - 1) * sizeof p->cfg[0]);
  p->n--;
  *rc = fake_measure(f, cfg, NULL, NULL, NULL, r);
  rt_count rk;
  assert_int_equal(sp_rank(f->sp, cfg, &rk), 0);
  (void)np;
  p->done[p->ndone++] = (int64_t)rk;
  return 0;
}

/* Every configuration but the default: 1.5 ms and slower by rank, 0.5%. */
static void slower(const fake *f, int64_t rank, ms_result *r) {
  if (rank == f->def_rank) ok_ms(r, 1.0, 0.005, 0);
  else ok_ms(r, 1.5 + 0.01 * (double)rank, 0.005, 0);
}

/* ---- Fixtures ---- */

typedef struct fx {
  char db[64];
  fake f;
  volatile sig_atomic_t stop;
} fx;

static const kn_kernel *reduction(void) { return tg_kernel_of("host", "reduction"); }

static void rm_db(const char *path) {
  static const char *const sfx[] = {"", "-wal", "-shm"};
  char p[128];
  for (int i = 0; i < 3; i++) {
    snprintf(p, sizeof p, "%s%s", path, sfx[i]);
    unlink(p);
  }
}

static int setup(void **state) {
  static int n;
  fx *x = calloc(1, sizeof *x);
  snprintf(x->db, sizeof x->db, "/tmp/rooftune-tcamp-%d-%d.db", (int)getpid(), n++);
  rm_db(x->db);
  x->f.sp = load_space(reduction(), SET);
  int np = sp_nparams(x->f.sp), *def = malloc((size_t)np * sizeof *def);
  assert_true(sp_default_config(x->f.sp, def));
  rt_count r;
  assert_int_equal(sp_rank(x->f.sp, def, &r), 0);
  x->f.def_rank = (int64_t)r;
  free(def);
  x->f.stop = &x->stop;
  *state = x;
  return 0;
}

static int teardown(void **state) {
  fx *x = *state;
  sp_free(x->f.sp);
  rm_db(x->db);
  free(x);
  return 0;
}

static tu_campaign_opts opts(fx *x, const char *strategy, const char *budget, uint64_t seed) {
  x->f.run_calls = atoi(budget);
  tu_campaign_opts o = {.db_path = x->db, .target = "host", .kernel = "reduction", .set = SET,
                        .strategy = strategy, .budget = budget, .seed = seed, .batch = 4,
                        .stop = &x->stop, .measure = fake_measure, .measure_ctx = &x->f};
  ms_opts_default(&o.ms);
  return o;
}

static void run_ok(const tu_campaign_opts *o, tu_report *rep) {
  rt_err err = {0};
  if (tu_campaign(o, rep, &err)) fail_msg("%s", err.msg);
}

/* One integer (or -1) and one text (malloc'ed, or NULL) from the database. */
static long long q_int(const char *path, const char *sql) {
  sqlite3 *h;
  sqlite3_stmt *st;
  long long v = -1;
  assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_busy_timeout(h, 10000);
  if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s: %s", sql, sqlite3_errmsg(h));
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

static char *q_text(const char *path, const char *sql) {
  sqlite3 *h;
  sqlite3_stmt *st;
  char *v = NULL;
  assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_busy_timeout(h, 10000);
  if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s: %s", sql, sqlite3_errmsg(h));
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    v = strdup((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

static void exec_sql(const char *path, const char *sql) {
  sqlite3 *h;
  char *msg = NULL;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  sqlite3_busy_timeout(h, 5000);
  if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s", sql, msg);
  sqlite3_close(h);
}

/* The rank of a stored configuration's JSON. */
static int64_t rank_of(fx *x, const char *json) {
  int np = sp_nparams(x->f.sp), *cfg = malloc((size_t)np * sizeof *cfg);
  rt_err err = {0};
  assert_int_equal(sp_config_parse(x->f.sp, json, cfg, &err), 0);
  rt_count r;
  assert_int_equal(sp_rank(x->f.sp, cfg, &r), 0);
  free(cfg);
  return (int64_t)r;
}

/* The rank of a trial's configuration (by id). */
static int64_t trial_rank(fx *x, long long id) {
  char sql[96];
  snprintf(sql, sizeof sql, "SELECT config FROM trials WHERE id = %lld", id);
  char *c = q_text(x->db, sql);
  assert_non_null(c);
  int64_t r = rank_of(x, c);
  free(c);
  return r;
}

/* The ranks exhaustive search evaluates with a budget of b: the default
** first, then ranks 0, 1, ... without it. */
static int expected_run(const fx *x, int b, int64_t *ranks) {
  int n = 0;
  ranks[n++] = x->f.def_rank;
  for (int64_t r = 0; n < b; r++)
    if (r != x->f.def_rank) ranks[n++] = r;
  return n;
}

/* The current pin's rank and reason (reason malloc'ed). */
static int64_t pinned_rank(fx *x, char **reason) {
  char *c = q_text(x->db, "SELECT p.config FROM pin_current pc JOIN pins p ON p.id = pc.pin_id");
  assert_non_null(c);
  int64_t r = rank_of(x, c);
  free(c);
  if (reason) *reason = q_text(x->db, "SELECT p.reason FROM pin_current pc JOIN pins p ON p.id = pc.pin_id");
  return r;
}

/* The ranks of the stored re-measurements, in seq order, and their roles
** ('D' or 'C'); returns how many. */
static int remeasured(fx *x, int64_t *ranks, char *roles) {
  sqlite3 *h;
  sqlite3_stmt *st;
  int n = 0;
  assert_int_equal(sqlite3_open_v2(x->db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_busy_timeout(h, 10000);
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT config, role FROM remeasurements ORDER BY campaign_id, seq",
                                      -1, &st, NULL), SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) {
    ranks[n] = rank_of(x, (const char *)sqlite3_column_text(st, 0));
    roles[n++] = !strcmp((const char *)sqlite3_column_text(st, 1), "default") ? 'D' : 'C';
  }
  roles[n] = 0;
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

/* ---- The default first ---- */

static void all_slower(const fake *f, int64_t rank, int again, ms_result *r) {
  (void)again;
  slower(f, rank, r);
}

/* Every configuration but the default measured 0.9 ms and up in the run,
** 1.2 ms and up at the end: each looks better than the default once. */
static void all_lucky(const fake *f, int64_t rank, int again, ms_result *r) {
  if (rank == f->def_rank) ok_ms(r, 1.0, 0.005, 0);
  else ok_ms(r, (again ? 1.2 : 0.9) + 0.001 * (double)rank, 0.005, 0);
}

/* The default is the first trial and the first measurement; when it is
** also the fastest, it is pinned without measuring anything again. */
static void test_default_first_and_fastest(void **state) {
  fx *x = *state;
  x->f.answer = all_slower;
  tu_campaign_opts o = opts(x, "exhaustive", "6", 1);
  tu_report rep;
  run_ok(&o, &rep);
  int64_t want[8];
  int n = expected_run(x, 6, want);
  assert_int_equal(rep.evaluations, 6);
  assert_int_equal(x->f.nlog, n + 1);   /* the run, then the baseline */
  for (int i = 0; i < n; i++) assert_int_equal(x->f.log[i], want[i]);
  assert_int_equal(x->f.log[n], -1);
  assert_int_equal(trial_rank(x, q_int(x->db, "SELECT min(id) FROM trials")), x->f.def_rank);
  assert_string_equal(rep.choice, "default");
  assert_non_null(strstr(rep.reason, "kept the default: it is the fastest verified trial"));
  assert_int_equal(rep.remeasured, 0);
  assert_int_equal(pinned_rank(x, NULL), x->f.def_rank);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM remeasurements"), 0);
  tu_report_free(&rep);
}

/* Strategies that learn from results see the default as their first
** observation: the same seed with the default first and without it (a
** plain run loop on the same answers) makes different proposals, and a
** campaign's run equals the run loop given the default first. */
typedef struct synth_ctx {
  fake *f;
  int64_t log[64];
  int n;
} synth_ctx;

static int synth_eval(void *vctx, const int *cfg, tu_obs *ob, rt_err *err) {
  synth_ctx *s = vctx;
  (void)err;
  rt_count r;
  assert_int_equal(sp_rank(s->f->sp, cfg, &r), 0);
  ms_result m;
  slower(s->f, (int64_t)r, &m);
  *ob = (tu_obs){.ok = 1, .value = m.t.median, .status = MS_OK, .cost = 1, .origin = TU_MEASURED};
  s->log[s->n++] = (int64_t)r;
  return 0;
}

static void test_strategy_sees_default(void **state) {
  fx *x = *state;
  x->f.answer = all_slower;
  tu_campaign_opts o = opts(x, "annealing", "10", 7);
  tu_report rep;
  run_ok(&o, &rep);
  tu_report_free(&rep);
  int np = sp_nparams(x->f.sp), *def = malloc((size_t)np * sizeof *def);
  sp_default_config(x->f.sp, def);
  synth_ctx with = {&x->f, {0}, 0}, without = {&x->f, {0}, 0};
  for (int k = 0; k < 2; k++) {
    synth_ctx *s = k ? &without : &with;
    tu_objective obj = {synth_eval, s, NULL};
    tu_run_opts ro = {.strategy = tu_strategy_find("annealing"), .seed = 7, .max_evals = 10, .batch = 4,
                      .first = k ? NULL : def, .nfirst = k ? 0 : 1};
    rt_err err = {0};
    tu_run *r = tu_run_strategy(x->f.sp, &obj, &ro, NULL, &err);
    assert_non_null(r);
    tu_run_free(r);
  }
  assert_int_equal(with.n, 10);
  assert_int_equal(with.log[0], x->f.def_rank);
  for (int i = 0; i < 10; i++) assert_int_equal(x->f.log[i], with.log[i]);   /* the campaign's run */
  int differ = 0;   /* annealing starts from the informed default: another walk */
  for (int i = 0; i < 10; i++) differ |= with.log[i] != without.log[i];
  assert_true(differ);
  free(def);
}

/* ---- The pin rule ---- */

#define LUCKY 2   /* looked faster in the run than it is */
#define WINS 3    /* truly faster */
#define NOISY 1   /* a noisy measurement in the run */

/* Rank LUCKY measured 0.9 ms in the run, 1.2 ms since; the default 1.0. */
static void lucky(const fake *f, int64_t rank, int again, ms_result *r) {
  if (rank == LUCKY) ok_ms(r, again ? 1.2 : 0.9, 0.005, 0);
  else slower(f, rank, r);
}

static void test_default_truly_fastest(void **state) {
  fx *x = *state;
  assert_true(x->f.def_rank > 8);   /* the ranks used below are other configurations */
  x->f.answer = lucky;
  tu_campaign_opts o = opts(x, "exhaustive", "8", 1);
  tu_report rep;
  run_ok(&o, &rep);
  /* the run's best is the lucky one ... */
  assert_int_equal(trial_rank(x, rep.best_trial), LUCKY);
  /* ... the three fastest other trials (by hand: LUCKY, then ranks 0 and 1,
  ** the slower-by-rank ones) are measured again alternating with the default */
  int64_t rm[16];
  char roles[16];
  assert_int_equal(remeasured(x, rm, roles), 7);
  assert_string_equal(roles, "DCDCDCD");
  int64_t want[7] = {x->f.def_rank, LUCKY, x->f.def_rank, 0, x->f.def_rank, 1, x->f.def_rank};
  for (int i = 0; i < 7; i++) assert_int_equal(rm[i], want[i]);
  for (int i = 0; i < 7; i++) assert_int_equal(x->f.log[8 + i], want[i]);   /* in that order */
  /* none beats the default: it is pinned, and the report says why */
  assert_string_equal(rep.choice, "default");
  assert_int_equal(trial_rank(x, rep.choice_trial), x->f.def_rank);
  assert_int_equal(pinned_rank(x, NULL), x->f.def_rank);
  char want_reason[256];
  snprintf(want_reason, sizeof want_reason,
           "kept the default: best 1.2 ms [1.194, 1.206] (trial %lld) does not beat the default "
           "1 ms [0.995, 1.005]", (long long)rep.best_trial);
  if (!strstr(rep.reason, want_reason)) fail_msg("reason \"%s\" lacks \"%s\"", rep.reason, want_reason);
  assert_true(fabs(rep.cand_s - 1.2e-3) < 1e-12 && fabs(rep.def_s - 1.0e-3) < 1e-12);
  /* the pin, the campaign's stored report and --json say the same */
  char *reason;
  pinned_rank(x, &reason);
  assert_non_null(strstr(reason, want_reason));
  free(reason);
  char *rj = q_text(x->db, "SELECT json_extract(report, '$.decision.reason') FROM campaigns");
  assert_string_equal(rj, rep.reason);
  free(rj);
  json_t *j = json_loads(rep.json, 0, NULL);
  assert_string_equal(json_string_value(json_object_get(json_object_get(j, "decision"), "choice")), "default");
  assert_int_equal(json_array_size(json_object_get(json_object_get(j, "decision"), "remeasurements")), 7);
  json_decref(j);
  tu_report_free(&rep);
}

/* Rank WINS is 0.5 ms against the default's 1.0 ms, 1% CIs. */
static void wins(const fake *f, int64_t rank, int again, ms_result *r) {
  (void)again;
  if (rank == WINS) ok_ms(r, 0.5, 0.01, 0);
  else slower(f, rank, r);
}

static void test_candidate_clearly_wins(void **state) {
  fx *x = *state;
  x->f.answer = wins;
  tu_campaign_opts o = opts(x, "exhaustive", "8", 1);
  tu_report rep;
  run_ok(&o, &rep);
  assert_string_equal(rep.choice, "tuned");
  assert_int_equal(trial_rank(x, rep.choice_trial), WINS);
  assert_int_equal(pinned_rank(x, NULL), WINS);
  assert_true(rep.pin_version == 1);
  char want_reason[256];
  snprintf(want_reason, sizeof want_reason, "trial %lld beats the default: 0.5 ms [0.495, 0.505] "
           "against 1 ms [0.995, 1.005], disjoint 95%% CIs", (long long)rep.choice_trial);
  if (!strstr(rep.reason, want_reason)) fail_msg("reason \"%s\" lacks \"%s\"", rep.reason, want_reason);
  tu_report_free(&rep);
}

/* Rank NOISY: 0.3 ms in the run with a CI of [0.1, 5] ms; measured again
** 2.0 ms (noise_then_slow) or still too noisy to tell (noise_stays). Rank
** WINS: 0.6 ms. */
static void noise_then_slow(const fake *f, int64_t rank, int again, ms_result *r) {
  if (rank == NOISY) {
    if (!again) ci_ms(r, 0.3, 0.1, 5.0, 1);
    else ok_ms(r, 2.0, 0.01, 0);
  } else if (rank == WINS) {
    ok_ms(r, 0.6, 0.01, 0);
  } else {
    slower(f, rank, r);
  }
}

static void noise_stays(const fake *f, int64_t rank, int again, ms_result *r) {
  if (rank == NOISY) ci_ms(r, again ? 0.5 : 0.3, again ? 0.2 : 0.1, again ? 3.0 : 5.0, 1);
  else slower(f, rank, r);
}

static void test_noisy_remeasured(void **state) {
  fx *x = *state;
  x->f.answer = noise_then_slow;
  tu_campaign_opts o = opts(x, "exhaustive", "8", 1);
  tu_report rep;
  run_ok(&o, &rep);
  assert_int_equal(trial_rank(x, rep.best_trial), NOISY);   /* the run's apparent winner */
  assert_true(rep.best_noisy);
  assert_int_equal(x->f.nth[NOISY], 2);                      /* measured again */
  assert_string_equal(rep.choice, "tuned");
  assert_int_equal(pinned_rank(x, NULL), WINS);              /* not the noisy one */
  tu_report_free(&rep);
}

static void test_noisy_stays_noisy(void **state) {
  fx *x = *state;
  x->f.answer = noise_stays;
  tu_campaign_opts o = opts(x, "exhaustive", "8", 1);
  tu_report rep;
  run_ok(&o, &rep);
  assert_int_equal(trial_rank(x, rep.best_trial), NOISY);
  assert_int_equal(x->f.nth[NOISY], 2);
  assert_string_equal(rep.choice, "default");   /* [0.2, 3] ms overlaps [0.995, 1.005] */
  assert_int_equal(pinned_rank(x, NULL), x->f.def_rank);
  assert_non_null(strstr(rep.reason, "best 0.5 ms [0.2, 3]"));
  tu_report_free(&rep);
}

/* Rank 1 verified in the run (0.4 ms), a wrong result measured again;
** rank 2 a wrong result in the run; rank WINS 0.8 ms. With the default
** verified, or failing to compile. */
static void wrong_again(const fake *f, int64_t rank, int again, ms_result *r) {
  if (rank == 1 && !again) ok_ms(r, 0.4, 0.01, 0);
  else if (rank == 1 || rank == 2) failed(r, MS_WRONG_RESULT);
  else if (rank == WINS) ok_ms(r, 0.8, 0.01, 0);
  else slower(f, rank, r);
}

static void wrong_again_no_default(const fake *f, int64_t rank, int again, ms_result *r) {
  if (rank == f->def_rank) failed(r, MS_COMPILE_ERROR);
  else wrong_again(f, rank, again, r);
}

static void test_wrong_result_never_pinned(void **state) {
  fx *x = *state;
  for (int k = 0; k < 2; k++) {
    if (k) {
      teardown(state);
      setup(state);
      x = *state;
    }
    x->f.answer = k ? wrong_again_no_default : wrong_again;
    tu_campaign_opts o = opts(x, "exhaustive", "8", 1);
    tu_report rep;
    run_ok(&o, &rep);
    assert_int_equal(trial_rank(x, rep.best_trial), 1);
    assert_int_equal(x->f.nth[1], 2);
    /* rank 1's re-measurement is stored as the wrong result it was */
    assert_int_equal(q_int(x->db, "SELECT count(*) FROM remeasurements WHERE status = 'wrong_result'"), 1);
    assert_string_equal(rep.choice, "tuned");   /* WINS: 0.8 against 1.0, or no default */
    assert_int_equal(pinned_rank(x, NULL), WINS);
    if (k) {
      int64_t rm[16];
      char roles[16];
      assert_int_equal(remeasured(x, rm, roles), 3);   /* no default to alternate with */
      assert_string_equal(roles, "CCC");
      assert_non_null(strstr(rep.reason, "the default schedule failed (compile_error): pinned the "
                                         "fastest candidate verified again"));
    }
    /* no pinned trial is anything but verified */
    assert_int_equal(q_int(x->db, "SELECT count(*) FROM pins p JOIN trials t ON t.id = p.trial_id"
                                  " WHERE t.status != 'ok'"), 0);
    tu_report_free(&rep);
  }
}

/* ---- Determinism, reuse ---- */

/* s without the trial ids ("trial 12" -> "trial #"), into out. */
static void no_ids(const char *s, char *out, size_t cap) {
  size_t n = 0;
  for (const char *p = s; *p && n + 2 < cap;) {
    if (!strncmp(p, "trial ", 6)) {
      memcpy(out + n, "trial #", 7), n += 7, p += 6;
      while (*p >= '0' && *p <= '9') p++;
    } else {
      out[n++] = *p++;
    }
  }
  out[n] = 0;
}

static void test_deterministic_and_reused(void **state) {
  fx *x = *state;
  char *reason[2] = {NULL, NULL}, *rjson[2] = {NULL, NULL};
  int64_t log[2][512];
  int nlog[2];
  for (int k = 0; k < 2; k++) {
    if (k) {
      teardown(state);
      setup(state);
      x = *state;
    }
    x->f.answer = all_lucky;
    tu_campaign_opts o = opts(x, "bandit", "12", 5);
    tu_report rep;
    run_ok(&o, &rep);
    assert_int_equal(rep.remeasured, 7);
    reason[k] = strdup(rep.reason);
    rjson[k] = q_text(x->db, "SELECT json_extract(report, '$.decision.remeasurements') FROM campaigns");
    memcpy(log[k], x->f.log, sizeof log[k]);
    nlog[k] = x->f.nlog;
    tu_report_free(&rep);
  }
  assert_int_equal(nlog[0], 12 + 7 + 1);
  assert_int_equal(nlog[0], nlog[1]);
  for (int i = 0; i < nlog[0]; i++) assert_int_equal(log[0][i], log[1][i]);
  assert_string_equal(reason[0], reason[1]);
  assert_string_equal(rjson[0], rjson[1]);
  assert_non_null(strstr(reason[0], "kept the default: best "));
  /* the same campaign again in the same database: every trial and the whole
  ** end sequence reused, the same decision, nothing measured but the baseline */
  x->f.nlog = 0;
  tu_campaign_opts o = opts(x, "bandit", "12", 5);
  tu_report rep;
  run_ok(&o, &rep);
  assert_int_equal(rep.reused, 12);
  assert_int_equal(rep.remeasured, 7);
  assert_int_equal(rep.remeasured_reused, 7);
  assert_int_equal(x->f.nlog, 1);
  assert_int_equal(x->f.log[0], -1);
  char a[600], b[600];
  no_ids(rep.reason, a, sizeof a);   /* the new campaign's own trials */
  no_ids(reason[1], b, sizeof b);
  assert_string_equal(a, b);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM remeasurements WHERE campaign_id = 2 AND origin = 'reused'"
                                " AND trial_id IN (SELECT id FROM trials WHERE campaign_id = 2)"), 7);
  for (int k = 0; k < 2; k++) free(reason[k]), free(rjson[k]);
  tu_report_free(&rep);
}

/* ---- Resume ---- */

static void test_resume_stopped(void **state) {
  fx *x = *state;
  /* uninterrupted, for reference */
  x->f.answer = all_lucky;
  tu_campaign_opts o = opts(x, "bandit", "12", 3);
  tu_report rep;
  run_ok(&o, &rep);
  int64_t ref[64];
  int nref = x->f.nlog;
  memcpy(ref, x->f.log, (size_t)nref * sizeof *ref);
  char *ref_reason = strdup(rep.reason);
  tu_report_free(&rep);
  teardown(state);
  setup(state);
  x = *state;
  /* stopped at the 5th measurement (discarded), then resumed */
  x->f.answer = all_lucky;
  x->f.stop_at = 5;
  o = opts(x, "bandit", "12", 3);
  run_ok(&o, &rep);
  assert_string_equal(rep.state, "stopped");
  assert_null(rep.choice);
  tu_report_free(&rep);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM trials"), 4);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM leases"), 0);
  x->stop = 0, x->f.stop_at = 0;
  x->f.run_calls = 8 + 5;   /* this session's run: 8 trials after the 5 before */
  tu_campaign_opts r = {.db_path = x->db, .resume = 1, .stop = &x->stop, .measure = fake_measure,
                        .measure_ctx = &x->f};
  run_ok(&r, &rep);
  assert_string_equal(rep.state, "done");
  assert_int_equal(rep.resumed, 4);
  assert_int_equal(rep.measured, 8);
  /* the measurements: those of the uninterrupted campaign, the 5th twice */
  assert_int_equal(x->f.nlog, nref + 1);
  for (int i = 0; i < 5; i++) assert_int_equal(x->f.log[i], ref[i]);
  for (int i = 5; i < x->f.nlog; i++) assert_int_equal(x->f.log[i], ref[i - 1]);
  assert_string_equal(rep.reason, ref_reason);
  assert_int_equal(q_int(x->db, "SELECT count(DISTINCT config) FROM trials"), 12);
  assert_int_equal(trial_rank(x, q_int(x->db, "SELECT min(id) FROM trials")), x->f.def_rank);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM leases"), 0);
  free(ref_reason);
  tu_report_free(&rep);
}

/* A campaign stored before the default came first: no "default_first" in
** its options and its trials in the strategy's own order. Resume replays
** that order (the default is not put first), measures the rest, then
** measures the default at the end with the candidates and stores it as a
** trial when it is kept. */
static void test_resume_old_campaign(void **state) {
  fx *x = *state;
  x->f.answer = all_slower;
  /* the old order: the run loop alone */
  synth_ctx old = {&x->f, {0}, 0};
  tu_objective obj = {synth_eval, &old, NULL};
  tu_run_opts ro = {.strategy = tu_strategy_find("random"), .seed = 9, .max_evals = 8, .batch = 4};
  rt_err err = {0};
  tu_run *run = tu_run_strategy(x->f.sp, &obj, &ro, NULL, &err);
  assert_non_null(run);
  char *cj[8];
  for (int i = 0; i < 8; i++) {
    cj[i] = sp_config_json(x->f.sp, tu_run_cfg(run, i));
    assert_true(old.log[i] != x->f.def_rank);   /* seed 9 never draws it */
  }
  tu_run_free(run);
  /* the campaign row, registered and stopped at once (nothing measured) */
  x->stop = 1;
  tu_campaign_opts o = opts(x, "random", "8", 9);
  tu_report rep;
  run_ok(&o, &rep);
  tu_report_free(&rep);
  assert_int_equal(x->f.nlog, 0);
  exec_sql(x->db, "UPDATE campaigns SET options = json_remove(options, '$.default_first')");
  db *d = db_open(x->db, 0, &err);
  assert_non_null(d);
  for (int i = 0; i < 4; i++) {
    db_trial t;
    db_trial_init(&t);
    ms_result m;
    slower(&x->f, old.log[i], &m);
    t.campaign_id = 1, t.config_json = cj[i], t.status = "ok", t.time_s = m.t.median;
    t.ci_lo_s = m.t.ci_lo, t.ci_hi_s = m.t.ci_hi, t.repeats = 20, t.origin = "measured";
    assert_int_equal(db_trial_add(d, &t, NULL, &err), 0);
  }
  db_close(d);
  x->stop = 0;
  x->f.run_calls = 4;
  tu_campaign_opts r = {.db_path = x->db, .resume = 1, .stop = &x->stop, .measure = fake_measure,
                        .measure_ctx = &x->f};
  run_ok(&r, &rep);
  assert_int_equal(rep.resumed, 4);
  assert_int_equal(rep.measured, 4);
  for (int i = 0; i < 4; i++) assert_int_equal(x->f.log[i], old.log[4 + i]);   /* the old order */
  /* the end: the default measured with the candidates, kept, stored as a trial */
  assert_int_equal(x->f.log[4], x->f.def_rank);
  assert_int_equal(rep.remeasured, 7);
  assert_string_equal(rep.choice, "default");
  assert_int_equal(trial_rank(x, rep.choice_trial), x->f.def_rank);
  assert_int_equal(q_int(x->db, "SELECT max(id) FROM trials"), rep.choice_trial);
  assert_int_equal(pinned_rank(x, NULL), x->f.def_rank);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM remeasurements WHERE role = 'default'"
                                " AND trial_id = (SELECT max(id) FROM trials)"), 4);
  for (int i = 0; i < 8; i++) free(cj[i]);
  tu_report_free(&rep);
}

/* ---- Leases ---- */

static void test_leases(void **state) {
  fx *x = *state;
  x->f.answer = all_slower;
  x->stop = 1;   /* a registered, stopped campaign */
  tu_campaign_opts o = opts(x, "random", "6", 1);
  tu_report rep;
  run_ok(&o, &rep);
  tu_report_free(&rep);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM leases"), 0);   /* given back */
  x->stop = 0;
  char host[256] = "", boot[64] = "", sql[1024];
  gethostname(host, sizeof host - 1);
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    if (fgets(boot, sizeof boot, f)) boot[strcspn(boot, "\n")] = 0;
    fclose(f);
  }
  /* this test's own process, with its start time: alive, refused */
  long long start = -1;
  f = fopen("/proc/self/stat", "r");
  if (f) {
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    char *p = strrchr(buf, ')');
    for (int i = 0; i < 20 && p; i++) p = strchr(p + 1, ' ');
    if (p) start = atoll(p);
  }
  snprintf(sql, sizeof sql, "INSERT INTO leases(campaign_id, pid, host, boot, started, action)"
           " VALUES(1, %d, '%s', '%s', %lld, 'resume')", (int)getpid(), host, boot, start);
  exec_sql(x->db, sql);
  db *d;
  rt_err err = {0};
  assert_non_null(d = db_open(x->db, 0, &err));
  assert_int_equal(db_lease_take(d, 1, "resume", &err), 1);
  char want[400];
  snprintf(want, sizeof want, "campaign 1 is being resumed by pid %d on %s", (int)getpid(), host);
  if (!strstr(err.msg, want)) fail_msg("\"%s\" lacks \"%s\"", err.msg, want);
  assert_int_equal(db_lease_take(d, 2, "resume", &err), -1);   /* no such campaign */
  assert_non_null(strstr(err.msg, "no campaign 2"));
  db_close(d);
  tu_campaign_opts r = {.db_path = x->db, .resume = 1, .stop = &x->stop, .measure = fake_measure,
                        .measure_ctx = &x->f};
  assert_int_equal(tu_campaign(&r, &rep, &err), -1);
  assert_non_null(strstr(err.msg, want));
  assert_int_equal(x->f.nlog, 0);   /* nothing measured */
  /* stale: a dead pid; this pid with another start time (a reused pid);
  ** another host; another boot: each is taken over */
  pid_t kid = fork();
  if (!kid) _exit(0);
  waitpid(kid, NULL, 0);
  struct { int pid; const char *host, *boot; long long start; } stale[] = {
    {kid, host, boot, start}, {(int)getpid(), host, boot, start + 1},
    {(int)getpid(), "another-host", boot, start}, {(int)getpid(), host, "another-boot", start},
  };
  for (size_t i = 0; i < sizeof stale / sizeof *stale; i++) {
    if (start < 0 && i == 1) continue;   /* no /proc: start times unknown */
    if (!boot[0] && i == 3) continue;
    snprintf(sql, sizeof sql, "DELETE FROM leases; INSERT INTO leases(campaign_id, pid, host, boot,"
             " started, action) VALUES(1, %d, '%s', '%s', %lld, 'run')", stale[i].pid, stale[i].host,
             stale[i].boot, stale[i].start);
    exec_sql(x->db, sql);
    assert_non_null(d = db_open(x->db, 0, &err));
    if (db_lease_take(d, 1, "resume", &err)) fail_msg("stale lease %zu: %s", i, err.msg);
    assert_int_equal(db_lease_release(d, 1, &err), 0);
    db_close(d);
    assert_int_equal(q_int(x->db, "SELECT count(*) FROM leases"), 0);
  }
  /* and a campaign resumes over a stale lease */
  snprintf(sql, sizeof sql, "INSERT INTO leases(campaign_id, pid, host, boot, started, action)"
           " VALUES(1, %d, '%s', '%s', %lld, 'run')", kid, host, boot, start);
  exec_sql(x->db, sql);
  run_ok(&r, &rep);
  assert_string_equal(rep.state, "done");
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM leases"), 0);
  tu_report_free(&rep);
}

/* ---- Batches (tu.h invariant 9) ---- */

/* Statuses of every kind by rank, the default the fastest of the ok. */
static void mixed(const fake *f, int64_t rank, int again, ms_result *r) {
  (void)again;
  if (rank == f->def_rank) ok_ms(r, 1.0, 0.005, 0);
  else if (rank % 5 == 1) failed(r, MS_WRONG_RESULT);
  else if (rank % 7 == 2) failed(r, MS_RUNTIME_ERROR);
  else if (rank % 4 == 3) failed(r, MS_TIMEOUT);
  else ok_ms(r, 0.8 + 0.01 * (double)rank, 0.005, 0);
}

/* The trials as text, in id order: configuration, status, time, origin. */
static char *trials_text(fx *x) {
  return q_text(x->db, "SELECT group_concat(config || '|' || status || '|' || ifnull(time, '-') "
                       "|| '|' || origin, ';') FROM (SELECT * FROM trials ORDER BY id)");
}

/* --time-limit spent by predicted cost (tu.h invariant 12): every injected
** measurement costs 0.012 s (compile 0.001, verify 0.001, measure 0.01), so
** after the default the campaign predicts 0.012 s a candidate and stops
** before the one that would pass 0.1 s: 8 trials, 0.096 s (stopping only
** once the limit is reached, as before, made 9 and spent 0.108 s). */
static void test_time_limit_predicted(void **state) {
  fx *x = *state;
  x->f.answer = all_slower;
  tu_campaign_opts o = opts(x, "exhaustive", "50", 1);
  o.time_limit = 0.1;
  tu_report rep;
  run_ok(&o, &rep);
  assert_int_equal(rep.evaluations, 8);
  assert_int_equal(rep.measured, 8);
  assert_string_equal(rep.end, "time");
  assert_true(q_int(x->db, "SELECT count(*) FROM trials") == 8);
  char *t = q_text(x->db, "SELECT total(compile_s + verify_s + bench_s) FROM trials");
  assert_non_null(t);
  assert_true(fabs(atof(t) - 0.096) < 1e-9 && atof(t) <= o.time_limit);   /* what was spent, as stored */
  free(t);
  tu_report_free(&rep);
}

/* A campaign measuring batches stores what one measuring one by one
** stores, measures the same configurations in the same order, and decides
** the same; again in the same database, both reuse the same trials (a
** timeout is measured again). */
static void test_batch_same_as_single(void **state) {
  fx *x = *state;
  char *trials[2][2], *reason[2];
  int64_t log[2][512];
  int nlog[2], measured[2][2], reused[2][2];
  for (int k = 0; k < 2; k++) {
    if (k) {
      teardown(state);
      setup(state);
      x = *state;
    }
    for (int again = 0; again < 2; again++) {
      x->f.answer = mixed;
      tu_campaign_opts o = opts(x, "exhaustive", "23", 1);
      if (k) o.measure_batch = fake_measure_batch;
      tu_report rep;
      run_ok(&o, &rep);
      trials[k][again] = trials_text(x);
      measured[k][again] = (int)rep.measured, reused[k][again] = (int)rep.reused;
      if (!again) reason[k] = strdup(rep.reason);
      tu_report_free(&rep);
    }
    memcpy(log[k], x->f.log, sizeof log[k]);
    nlog[k] = x->f.nlog;
  }
  int sum = 0;
  for (int i = 0; i < x->f.nbatch; i++) sum += x->f.batches[i];
  /* the first campaign: 22 after the default in batches of 4 (less the
  ** default where exhaustive search meets it again); the second: what is
  ** not reused, the timeouts, alone or in batches */
  assert_true(x->f.nbatch >= 6);
  assert_true(sum >= 22 && sum <= 22 + measured[1][1]);
  assert_int_equal(nlog[0], nlog[1]);
  for (int i = 0; i < nlog[0]; i++) assert_int_equal(log[0][i], log[1][i]);
  for (int again = 0; again < 2; again++) {
    assert_string_equal(trials[0][again], trials[1][again]);
    assert_int_equal(measured[0][again], measured[1][again]);
    assert_int_equal(reused[0][again], reused[1][again]);
  }
  assert_int_equal(measured[1][0], 23);
  assert_true(measured[1][1] > 0);   /* the timeouts, measured again */
  assert_int_equal(measured[1][1] + reused[1][1], 23);
  assert_string_equal(reason[0], reason[1]);
  for (int k = 0; k < 2; k++) free(trials[k][0]), free(trials[k][1]), free(reason[k]);
}

/* A batch never goes beyond the budget: 7 evaluations with batches of 4 are
** the default, a batch of 4 and a batch of 2; every measurement a trial. */
static void test_batch_budget(void **state) {
  fx *x = *state;
  x->f.answer = all_slower;
  tu_campaign_opts o = opts(x, "exhaustive", "7", 1);
  o.measure_batch = fake_measure_batch;
  tu_report rep;
  run_ok(&o, &rep);
  int64_t want[8];
  int n = expected_run(x, 7, want);
  assert_int_equal(rep.evaluations, 7);
  assert_int_equal(x->f.nlog, n + 1);   /* the run, then the baseline */
  for (int i = 0; i < n; i++) assert_int_equal(x->f.log[i], want[i]);
  assert_int_equal(x->f.nbatch, 2);
  assert_int_equal(x->f.batches[0], 4);
  assert_int_equal(x->f.batches[1], 2);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM trials"), 7);
  tu_report_free(&rep);
}

/* Ctrl-C in the middle of a batch: the items it finished are stored, the
** one in flight is not (as one by one: test_resume_stopped's counts), and
** resume measures the rest in batches to the same end. */
static void test_batch_stop_resume(void **state) {
  fx *x = *state;
  x->f.answer = all_lucky;
  tu_campaign_opts o = opts(x, "exhaustive", "12", 3);
  tu_report rep;
  run_ok(&o, &rep);
  int64_t ref[64];
  int nref = x->f.nlog;
  memcpy(ref, x->f.log, (size_t)nref * sizeof *ref);
  char *ref_reason = strdup(rep.reason), *ref_trials = trials_text(x);
  tu_report_free(&rep);
  teardown(state);
  setup(state);
  x = *state;
  x->f.answer = all_lucky;
  x->f.stop_at = 5;   /* the 4th item of the first batch */
  o = opts(x, "exhaustive", "12", 3);
  o.measure_batch = fake_measure_batch;
  run_ok(&o, &rep);
  assert_string_equal(rep.state, "stopped");
  tu_report_free(&rep);
  assert_int_equal(x->f.nbatch, 1);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM trials"), 4);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM trials WHERE origin = 'measured'"), 4);
  x->stop = 0, x->f.stop_at = 0;
  x->f.run_calls = 8 + 5;
  tu_campaign_opts r = {.db_path = x->db, .resume = 1, .stop = &x->stop, .measure = fake_measure,
                        .measure_batch = fake_measure_batch, .measure_ctx = &x->f};
  run_ok(&r, &rep);
  assert_string_equal(rep.state, "done");
  assert_int_equal(rep.resumed, 4);
  assert_int_equal(rep.measured, 8);
  assert_true(x->f.nbatch > 1);
  assert_int_equal(x->f.nlog, nref + 1);   /* the 5th twice */
  for (int i = 0; i < 5; i++) assert_int_equal(x->f.log[i], ref[i]);
  for (int i = 5; i < x->f.nlog; i++) assert_int_equal(x->f.log[i], ref[i - 1]);
  assert_string_equal(rep.reason, ref_reason);
  char *got = trials_text(x);
  assert_string_equal(got, ref_trials);   /* the same trials in the same order */
  free(got);
  free(ref_reason);
  free(ref_trials);
  tu_report_free(&rep);
}

/* The asynchronous campaign (tu.h invariant 11) on the injected pool of 3:
** random, annealing and genetic make the budget exactly, each
** configuration once, with 3 jobs in flight; the trials are stored in
** completion order (not submission order), each with the answer its
** configuration gets alone; run again, random reuses every trial without
** sending one. Stopped at a measurement, what finished is
** stored and what was in flight dropped; resume (by configuration, the
** stored trials first) completes the budget sending no stored
** configuration to the pool again, the old trials untouched (annealing at
** budget 40: without the stored trials first, 8 of 29 are never proposed
** again and the run loses them). */
static void test_async_pool(void **state) {
  const char *names[] = {"random", "annealing", "genetic"};
  int reordered = 0;
  for (int s = 0; s < 3; s++) {
    fx *x = *state;
    apool p = {.lcg = (uint64_t)s + 1};
    x->f.answer = all_slower;
    x->f.pool = &p;
    tu_campaign_opts o = opts(x, names[s], "12", 5);
    o.parallel = 3, o.measure_submit = apool_submit, o.measure_collect = apool_collect;
    tu_report rep;
    run_ok(&o, &rep);
    assert_string_equal(rep.state, "done");
    assert_int_equal(rep.evaluations, 12);
    tu_report_free(&rep);
    assert_int_equal(q_int(x->db, "SELECT count(*) FROM trials"), 12);
    assert_int_equal(q_int(x->db, "SELECT count(DISTINCT config) FROM trials"), 12);
    assert_int_equal(q_int(x->db, "SELECT count(*) FROM campaigns WHERE options LIKE "
                                  "'%\"asynchronous\":true%'"), 1);
    assert_int_equal(p.most, 3);
    assert_int_equal(p.n, 0);
    /* after the default (measured alone), the measured trials in completion order */
    assert_int_equal(trial_rank(x, q_int(x->db, "SELECT min(id) FROM trials")), x->f.def_rank);
    assert_int_equal(q_int(x->db, "SELECT count(*) FROM trials WHERE origin = 'measured'"), 1 + p.ndone);
    assert_int_equal(p.ndone, p.nsent);
    sqlite3 *h;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_open_v2(x->db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h, "SELECT config, time FROM trials WHERE origin = 'measured' "
                                        "ORDER BY id", -1, &st, NULL), SQLITE_OK);
    for (int i = -1; sqlite3_step(st) == SQLITE_ROW; i++) {
      int64_t rk = rank_of(x, (const char *)sqlite3_column_text(st, 0));
      if (i >= 0) assert_int_equal(rk, p.done[i]);
      ms_result want;
      slower(&x->f, rk, &want);   /* the answer it gets alone */
      assert_true(fabs(sqlite3_column_double(st, 1) - want.t.median) <= 1e-12);
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    for (int i = 0; i < p.ndone; i++) reordered |= p.done[i] != p.sent[i];
    if (s == 0) {   /* again: every trial reused at submission, nothing sent */
      p = (apool){.lcg = 99};
      run_ok(&o, &rep);
      assert_string_equal(rep.state, "done");
      assert_int_equal(rep.reused, 12);
      assert_int_equal(rep.measured, 0);
      tu_report_free(&rep);
      assert_int_equal(p.nsent, 0);
      assert_int_equal(q_int(x->db, "SELECT count(*) FROM trials WHERE campaign_id = 2 AND "
                                    "origin = 'reused'"), 12);
    }
    teardown(state);
    setup(state);
  }
  assert_true(reordered);   /* the pool did finish out of order */
  /* stopped at the 30th measurement: the default and 28 results stored */
  fx *x = *state;
  apool p = {.lcg = 7};
  x->f.answer = all_slower;
  x->f.pool = &p;
  x->f.stop_at = 30;
  tu_campaign_opts o = opts(x, "annealing", "40", 5);
  o.parallel = 3, o.measure_submit = apool_submit, o.measure_collect = apool_collect;
  tu_report rep;
  run_ok(&o, &rep);
  assert_string_equal(rep.state, "stopped");
  tu_report_free(&rep);
  assert_int_equal(p.n, 0);   /* the 2 others in flight waited for, dropped */
  assert_int_equal(p.ndone, 29 + 2);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM trials"), 29);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM leases"), 0);
  int64_t stored[29];
  for (int i = 0; i < 29; i++) {
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT id FROM trials ORDER BY id LIMIT 1 OFFSET %d", i);
    stored[i] = trial_rank(x, q_int(x->db, sql));
  }
  for (int i = 1; i < 29; i++) assert_int_equal(stored[i], p.done[i - 1]);
  char *before = trials_text(x);
  x->stop = 0, x->f.stop_at = 0;
  p = (apool){.lcg = 8};
  tu_campaign_opts r = {.db_path = x->db, .resume = 1, .stop = &x->stop, .measure = fake_measure,
                        .measure_ctx = &x->f, .parallel = 3, .measure_submit = apool_submit,
                        .measure_collect = apool_collect};
  run_ok(&r, &rep);
  assert_string_equal(rep.state, "done");
  assert_int_equal(rep.resumed, 29);
  assert_int_equal(rep.measured, 11);
  tu_report_free(&rep);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM trials"), 40);
  assert_int_equal(q_int(x->db, "SELECT count(DISTINCT config) FROM trials"), 40);
  for (int i = 0; i < p.nsent; i++)
    for (int k = 0; k < 29; k++) assert_true(p.sent[i] != stored[k]);   /* nothing measured twice */
  char *after = trials_text(x);
  assert_true(!strncmp(after, before, strlen(before)));   /* the old trials untouched, first */
  free(before);
  free(after);
}

/* A batch the harness fails stores nothing of it and ends the campaign
** with the harness's message; with --counters nothing is batched. */
static void test_batch_failure_and_counters(void **state) {
  fx *x = *state;
  x->f.answer = all_slower;
  x->f.fail_batch = 1;
  tu_campaign_opts o = opts(x, "exhaustive", "7", 1);
  o.measure_batch = fake_measure_batch;
  tu_report rep;
  rt_err err = {0};
  assert_int_equal(tu_campaign(&o, &rep, &err), -1);
  assert_non_null(strstr(err.msg, "the harness failed: injected harness failure"));
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM trials"), 1);   /* the default, alone */
  assert_int_equal(x->f.nlog, 1);
  teardown(state);
  setup(state);
  x = *state;
  x->f.answer = all_slower;
  x->f.fail_batch = 1;
  o = opts(x, "exhaustive", "7", 1);
  o.measure_batch = fake_measure_batch;
  o.ms.counters = 1;
  run_ok(&o, &rep);
  assert_int_equal(x->f.nbatch, 0);
  assert_int_equal(rep.measured, 7);
  tu_report_free(&rep);
}

/* ---- The rooftune program ---- */

typedef tk_result result;

/* Run rooftune with argv (NULL-terminated) and env (NAME=VALUE or NULL). */
static result run_env(const char *env, const char *const *args) {
  const char *argv[48] = {rooftune};
  int n = 1;
  for (; args[n - 1] && n < 47; n++) argv[n] = args[n - 1];
  argv[n] = NULL;
  const char *envs[] = {env, NULL};
  return tk_capture(argv, NULL, env ? envs : NULL);
}

static void done(result *r) { tk_result_free(r); }

/* rooftune with argv in the background, its output to /dev/null. */
static pid_t start_bg(const char *const *args) {
  const char *argv[48] = {rooftune};
  int n = 1;
  for (; args[n - 1]; n++) argv[n] = args[n - 1];
  argv[n] = NULL;
  fflush(NULL);
  pid_t pid = fork();
  if (!pid) {
    int nul = open("/dev/null", O_WRONLY);
    dup2(nul, 1);
    dup2(nul, 2);
    execv(rooftune, (char *const *)argv);
    _exit(127);
  }
  return pid;
}

/* Poll sql (an integer query) until it gives at least want; 0 or -1 after
** 60 s. */
static int wait_for(const char *path, const char *sql, long long want) {
  for (int i = 0; i < 6000; i++) {
    sqlite3 *h = NULL;
    sqlite3_stmt *st;
    long long v = -1;   /* the file or its tables may not be there yet */
    if (access(path, F_OK) == 0 && sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
      sqlite3_busy_timeout(h, 1000);
      if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
      }
    }
    sqlite3_close(h);
    if (v >= want) return 0;
    usleep(10000);
  }
  return -1;
}

static int exit_code(pid_t pid) {
  int st;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Two `tune --resume` of one campaign at once: the second is refused with
** the first's pid, the first completes, no configuration twice. */
static void test_cli_concurrent_resume(void **state) {
  fx *x = *state;
  const char *const start[] = {"tune", "--db", x->db, "--kernel", "reduction", "--set", SET,
                               "--strategy", "random", "--budget", "16", "--time-cap", "0.15",
                               "--ci", "0.000001", "--no-pin", NULL};
  pid_t p = start_bg(start);   /* stopped by Ctrl-C after two trials */
  assert_int_equal(wait_for(x->db, "SELECT count(*) FROM trials", 2), 0);
  kill(p, SIGINT);
  assert_int_equal(exit_code(p), 130);
  long long before = q_int(x->db, "SELECT count(*) FROM trials");
  assert_true(before >= 2 && before < 16);
  const char *const resume[] = {"tune", "--db", x->db, "--resume", "1", NULL};
  pid_t first = start_bg(resume);
  assert_int_equal(wait_for(x->db, "SELECT count(*) FROM trials", before + 1), 0);   /* it measures */
  result r = run_env(NULL, resume);
  int first_rc = exit_code(first);
  assert_int_equal(r.rc, 1);
  char want[96];
  snprintf(want, sizeof want, "campaign 1 is being resumed by pid %d", (int)first);
  if (!strstr(r.err, want)) fail_msg("stderr \"%s\" lacks \"%s\"", r.err, want);
  assert_null(strstr(r.err, "UNIQUE"));
  done(&r);
  assert_int_equal(first_rc, 0);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM trials WHERE campaign_id = 1"), 16);
  assert_int_equal(q_int(x->db, "SELECT count(DISTINCT config) FROM trials WHERE campaign_id = 1"), 16);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM leases"), 0);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM campaigns WHERE state = 'done'"), 1);
}

/* The report on a real host workload, whatever wins: a decision line that
** is the pin's reason, and a pinned line naming the kind of schedule. */
static void test_cli_report_wording(void **state) {
  fx *x = *state;
  const char *const args[] = {"tune", "--db", x->db, "--kernel", "reduction", "--set", "N=20000",
                              "--strategy", "random", "--budget", "6", "--time-cap", "0.05", NULL};
  result r = run_env(NULL, args);
  assert_int_equal(r.rc, 0);
  char *choice = q_text(x->db, "SELECT json_extract(report, '$.decision.choice') FROM campaigns");
  char *reason = q_text(x->db, "SELECT json_extract(report, '$.decision.reason') FROM campaigns");
  char *pin = q_text(x->db, "SELECT reason FROM pins");
  assert_non_null(choice);
  assert_non_null(reason);
  assert_non_null(pin);
  char line[1200];
  snprintf(line, sizeof line, "\ndecision   %s\n", reason);
  if (!strstr(r.out, line)) fail_msg("the report lacks \"%s\":\n%s", line, r.out);
  assert_non_null(strstr(pin, reason));
  int tuned = !strcmp(choice, "tuned");
  assert_true(tuned || !strcmp(choice, "default"));
  assert_non_null(strstr(reason, tuned ? " beats the default: " : "kept the default: "));
  assert_non_null(strstr(r.out, tuned ? "pinned     version 1: the tuned schedule"
                                      : "pinned     version 1: the default schedule"));
  /* the first trial is the default */
  char *first = q_text(x->db, "SELECT config FROM trials ORDER BY id LIMIT 1");
  char *def = q_text(x->db, "SELECT default_config FROM kernels WHERE name = 'reduction'");
  assert_string_equal(first, def);
  free(first), free(def), free(choice), free(reason), free(pin);
  done(&r);
}

/* A live comparison decides every run as tune would (pinning nothing):
** its count of runs beating the default per strategy is that of the
** campaigns' stored decisions; the reference sample decides nothing. */
static void test_cli_compare_live_decisions(void **state) {
  fx *x = *state;
  const char *const args[] = {"compare", "--target", "host", "--kernel", "reduction", "--set", "N=20000",
                              "--strategies", "random,annealing", "--budget", "5", "--repeats", "2",
                              "--reference", "8", "--time-cap", "0.02", "--db", x->db, "--json", NULL};
  result r = run_env(NULL, args);
  assert_int_equal(r.rc, 0);
  json_t *j = json_loads(r.out, 0, NULL), *e;
  assert_non_null(j);
  size_t i;
  json_array_foreach(json_object_get(j, "strategies"), i, e) {
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM campaigns WHERE strategy = '%s' AND"
             " json_extract(report, '$.decision.choice') = 'tuned'",
             json_string_value(json_object_get(e, "name")));
    assert_int_equal(json_integer_value(json_object_get(e, "runs_beating_default")), q_int(x->db, sql));
  }
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM campaigns WHERE json_extract(report, '$.decision.choice')"
                                " IS NOT NULL"), 4);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM remeasurements WHERE campaign_id = 1"), 0);
  assert_int_equal(q_int(x->db, "SELECT count(*) FROM pins"), 0);
  json_decref(j);
  done(&r);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

static int cache_files;
static int count_file(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)path, (void)sb, (void)ftw;
  cache_files += flag == FTW_F;
  return 0;
}

/* A cold compile cache: the parallel builds count as compile time, the
** trials carry it (their shares of each build add up to the report's
** compile time), and compile + verify + measure + framework = elapsed (to
** the printed rounding), within the wall time the test saw. */
static void test_cli_compile_time(void **state) {
  fx *x = *state;
  char cache[] = "/tmp/rt_tcamp_cache_XXXXXX", env[128];
  assert_non_null(mkdtemp(cache));
  snprintf(env, sizeof env, "ROOFTUNE_CACHE=%s", cache);
  const char *const args[] = {"tune", "--db", x->db, "--kernel", "reduction", "--set", "N=20000",
                              "--strategy", "random", "--budget", "7", "--batch", "8",
                              "--time-cap", "0.05", "--json", NULL};
  double t0 = rt_now();
  result r = run_env(env, args);
  double wall = rt_now() - t0;
  assert_int_equal(r.rc, 0);
  json_t *j = json_loads(r.out, 0, NULL);
  assert_non_null(j);
  json_t *sp = json_object_get(j, "spent_s");
  double c = json_real_value(json_object_get(sp, "compile")), v = json_real_value(json_object_get(sp, "verify"));
  double m = json_real_value(json_object_get(sp, "measure")), f = json_real_value(json_object_get(sp, "framework"));
  double e = json_real_value(json_object_get(sp, "elapsed"));
  /* the six schedules after the default were built together before they
  ** were measured (six gcc runs: far more than 20 ms); their own builds
  ** were then cache hits, and each trial carries a sixth of the parallel
  ** build's wall time: what the trials store adds up to the report's */
  double stored = 0;
  sqlite3 *h;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open_v2(x->db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_busy_timeout(h, 10000);
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT total(compile_s) FROM trials UNION ALL"
                                         " SELECT total(compile_s) FROM remeasurements", -1, &st, NULL),
                   SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) stored += sqlite3_column_double(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  if (!(c > 0.02) || !(fabs(c - stored) < 1e-6))
    fail_msg("compile %.6f s, of which outside the trials %.6f s", c, c - stored);
  assert_true(fabs(c + v + m + f - e) < 1e-3);
  assert_true(e <= wall);
  assert_true(f >= 0);
  json_decref(j);
  done(&r);
  /* again on the same database with the cache emptied: every trial is
  ** reused, and a reused schedule is not built again (the batch's parallel
  ** build once compiled them all, which on a GPU machine with a cold
  ** cache took minutes per batch of 256) */
  assert_int_equal(nftw(cache, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
  assert_int_equal(mkdir(cache, 0700), 0);
  r = run_env(env, args);
  assert_int_equal(r.rc, 0);
  j = json_loads(r.out, 0, NULL);
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_object_get(j, "measured")), 0);
  done(&r);
  json_decref(j);
  cache_files = 0;
  assert_int_equal(nftw(cache, count_file, 16, FTW_PHYS), 0);
  if (cache_files > 0) fail_msg("%d files compiled again for reused trials", cache_files);
  assert_int_equal(nftw(cache, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);   /* made by this test only */
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], rooftune, sizeof rooftune)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_default_first_and_fastest, setup, teardown),
    cmocka_unit_test_setup_teardown(test_strategy_sees_default, setup, teardown),
    cmocka_unit_test_setup_teardown(test_default_truly_fastest, setup, teardown),
    cmocka_unit_test_setup_teardown(test_candidate_clearly_wins, setup, teardown),
    cmocka_unit_test_setup_teardown(test_noisy_remeasured, setup, teardown),
    cmocka_unit_test_setup_teardown(test_noisy_stays_noisy, setup, teardown),
    cmocka_unit_test_setup_teardown(test_wrong_result_never_pinned, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deterministic_and_reused, setup, teardown),
    cmocka_unit_test_setup_teardown(test_resume_stopped, setup, teardown),
    cmocka_unit_test_setup_teardown(test_resume_old_campaign, setup, teardown),
    cmocka_unit_test_setup_teardown(test_leases, setup, teardown),
    cmocka_unit_test_setup_teardown(test_batch_same_as_single, setup, teardown),
    cmocka_unit_test_setup_teardown(test_batch_budget, setup, teardown),
    cmocka_unit_test_setup_teardown(test_time_limit_predicted, setup, teardown),
    cmocka_unit_test_setup_teardown(test_batch_stop_resume, setup, teardown),
    cmocka_unit_test_setup_teardown(test_batch_failure_and_counters, setup, teardown),
    cmocka_unit_test_setup_teardown(test_async_pool, setup, teardown),
    cmocka_unit_test_setup_teardown(test_cli_concurrent_resume, setup, teardown),
    cmocka_unit_test_setup_teardown(test_cli_report_wording, setup, teardown),
    cmocka_unit_test_setup_teardown(test_cli_compile_time, setup, teardown),
    cmocka_unit_test_setup_teardown(test_cli_compare_live_decisions, setup, teardown),
  };
  return cmocka_run_group_tests_name("campaign", tests, NULL, NULL);
}
