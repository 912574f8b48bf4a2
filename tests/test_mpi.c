/*
** test_mpi.c -- distributed campaigns (mpi/mp.h, tu.h invariant 10).
** Without MPI: the asynchronous run loop against a pool simulated here
** (results come back in a seeded shuffled order) never exceeds the budget,
** evaluates each configuration once, answers each with the objective's
** value (computed here) and keeps `parallel` evaluations in flight; bayes
** proposes `parallel` distinct configurations at once by the constant
** liar, and one at a time otherwise. Under mpirun (skipped with a message
** where mpirun or an MPI build is missing): a 2-worker host campaign stores
** asynchronously the same trials (configurations, statuses, count) as the
** sequential one and lists its workers; a slow worker (a test-only delay)
** gets fewer of a live campaign's measurements than a fast one; a worker killed mid-campaign leaves the trials
** finished so far stored, and `tune --resume` under a new mpirun completes
** the budget with nothing measured twice and the old trials untouched; a
** worker with another fingerprint stops the campaign before anything is
** stored, naming it; replay --mpi evaluates its budget asynchronously with
** the recorded cost slept; examples/slurm_campaign.sh passes `bash -n`
** and its mpirun line runs a campaign here.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mpi/mp.h"
#include "tuner/tu.h"
#include "tk_exe.h"
#include "tk_exp.h"
#include "tk_run.h"

static char exe[4096], mpirun[4096], dir[256];

/* ---- The asynchronous loop against a simulated pool ---- */

static const char bowl_space[] =
    "{\"ConfigurationSpace\": {\"TuningParameters\": ["
    "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(12))\"},"
    "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"list(range(10))\"},"
    "{\"Name\": \"c\", \"Type\": \"int\", \"Values\": \"[1, 2, 4, 8, 16]\"}],"
    "\"Conditions\": [{\"Parameters\": [\"a\", \"b\"], \"Expression\": \"a + b != 7\"}]}}";

static double bowl(const int *c) {
  return 1 + (c[0] - 5) * (c[0] - 5) + 2.0 * (c[1] - 3) * (c[1] - 3) + c[2];
}

#define POOL 64
typedef struct pool {
  int cfg[POOL][3], n, most, submitted, prepared_max;
  uint64_t lcg;
} pool;

static int pool_eval(void *ctx, const int *cfg, tu_obs *obs, rt_err *err) {
  (void)err;
  pool *p = ctx;
  p->submitted++;
  double v = bowl(cfg);
  *obs = (tu_obs){.ok = 1, .value = v, .status = MS_OK, .cost = 1};
  return 0;
}

static void pool_prepare(void *ctx, const int *cfgs, int n) {
  (void)cfgs;
  pool *p = ctx;
  if (n > p->prepared_max) p->prepared_max = n;
}

static int pool_submit(void *ctx, const int *cfg, rt_err *err) {
  pool *p = ctx;
  if (p->n == POOL) {
    rt_err_set(err, "pool full");
    return -1;
  }
  memcpy(p->cfg[p->n++], cfg, sizeof p->cfg[0]);
  if (p->n > p->most) p->most = p->n;
  p->submitted++;
  return 0;
}

/* A pending evaluation picked by a seeded generator: out of order. */
static int pool_collect(void *ctx, int *cfg, tu_obs *obs, rt_err *err) {
  pool *p = ctx;
  if (!p->n) {
    rt_err_set(err, "nothing in flight");
    return -1;
  }
  p->lcg = p->lcg * 6364136223846793005ull + 1442695040888963407ull;
  int i = (int)((p->lcg >> 33) % (uint64_t)p->n);
  memcpy(cfg, p->cfg[i], sizeof p->cfg[0]);
  memmove(p->cfg[i], p->cfg[i + 1], (size_t)(p->n - i - 1) * sizeof p->cfg[0]);
  p->n--;
  *obs = (tu_obs){.ok = 1, .value = bowl(cfg), .status = MS_OK, .cost = 1};
  return 0;
}

static sp_space *bowl_sp(void) {
  rt_err err = {0};
  sp_space *sp = sp_load_string(bowl_space, "bowl", NULL, 0, &err);
  assert_non_null(sp);
  return sp;
}

static void test_async_loop(void **state) {
  (void)state;
  sp_space *sp = bowl_sp();
  const char *names[] = {"random", "annealing", "genetic"};
  for (int s = 0; s < 3; s++)
    for (int par = 2; par <= 8; par *= 2) {
      pool p = {.lcg = (uint64_t)(s * 10 + par)};
      tu_objective obj = {.eval = pool_eval, .ctx = &p};
      tu_run_opts o = {.strategy = tu_strategy_find(names[s]), .seed = 3, .max_evals = 60,
                       .parallel = par, .submit = pool_submit, .collect = pool_collect};
      assert_true(o.strategy->async);
      rt_err err = {0};
      tu_run *r = tu_run_strategy(sp, &obj, &o, NULL, &err);
      assert_non_null(r);
      assert_int_equal(tu_run_n(r), 60);          /* the budget, exactly */
      assert_int_equal(p.submitted, 60);          /* nothing evaluated past it */
      assert_int_equal(p.n, 0);                   /* nothing left in flight */
      assert_int_equal(p.most, par);              /* the workers kept busy */
      for (int64_t i = 0; i < 60; i++) {
        const int *c = tu_run_cfg(r, i);
        assert_true(sp_valid(sp, c, NULL));
        assert_true(tu_run_obs(r, i)->value == bowl(c));
        for (int64_t j = 0; j < i; j++) assert_false(!memcmp(c, tu_run_cfg(r, j), 3 * sizeof *c));
      }
      tu_run_free(r);
    }
  sp_free(sp);
}

/* Bayes by the constant liar: batches of `parallel` distinct proposals
** (prepare sees them together); one at a time when parallel is 1. */
static void test_constant_liar(void **state) {
  (void)state;
  sp_space *sp = bowl_sp();
  for (int par = 1; par <= 4; par += 3) {
    pool p = {0};
    tu_objective obj = {.eval = pool_eval, .ctx = &p, .prepare = pool_prepare};
    tu_run_opts o = {.strategy = tu_strategy_find("bayes"), .seed = 5, .max_evals = 40,
                     .parallel = par};
    rt_err err = {0};
    tu_run *r = tu_run_strategy(sp, &obj, &o, NULL, &err);
    assert_non_null(r);
    assert_int_equal(tu_run_n(r), 40);
    assert_int_equal(p.submitted, 40);
    assert_int_equal(p.prepared_max, par == 1 ? 0 : par);   /* prepare is called for batches of 2+ */
    for (int64_t i = 0; i < 40; i++)
      for (int64_t j = 0; j < i; j++)
        assert_false(!memcmp(tu_run_cfg(r, i), tu_run_cfg(r, j), 3 * sizeof(int)));
    tu_run_free(r);
  }
  sp_free(sp);
}

/* ---- Under mpirun ---- */

static const char *const mpi_env[] = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                      "ROOFTUNE_TEST_MPI_KILL", "ROOFTUNE_TEST_MPI_SLOW", NULL};

static int find_mpirun(void) {
  const char *path = getenv("PATH");
  char buf[8192];
  snprintf(buf, sizeof buf, "%s", path ? path : "/usr/bin:/bin");
  for (char *save, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    snprintf(mpirun, sizeof mpirun, "%s/mpirun", d);
    if (!access(mpirun, X_OK)) return 0;
  }
  mpirun[0] = 0;
  return -1;
}

#define NEED_MPI()                                                                      \
  do {                                                                                  \
    if (!exe[0] || !mpirun[0] || !mp_built()) {                                         \
      printf("[ SKIP ] %s\n", !exe[0] ? "rooftune is not built"                         \
                              : !mpirun[0] ? "mpirun is missing (openmpi-bin)"          \
                                           : "built without MPI (libopenmpi-dev)");     \
      skip();                                                                           \
    }                                                                                   \
  } while (0)

/* argv of `mpirun --oversubscribe -n N rooftune ARGS...` into v. */
static int mpi_argv(const char **v, int n, const char *const *args) {
  static char nbuf[16];
  int k = 0;
  snprintf(nbuf, sizeof nbuf, "%d", n);
  v[k++] = mpirun, v[k++] = "--oversubscribe", v[k++] = "-n", v[k++] = nbuf, v[k++] = exe;
  for (; *args; args++) v[k++] = *args;
  v[k] = NULL;
  return k;
}

static tk_result run_mpi(int n, const char *const *args, const char *const *env) {
  const char *v[64];
  mpi_argv(v, n, args);
  return tk_capture(v, dir, env ? env : mpi_env);
}

/* The trials of a database as "config_hash status" lines, sorted. */
static char *trial_kinds(const char *file, int *n) {
  sqlite3 *h;
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT config_hash, status FROM trials ORDER BY config_hash", -1,
                                      &st, NULL), SQLITE_OK);
  rt_str s = {0};
  *n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) {
    rt_str_printf(&s, "%s %s\n", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1));
    (*n)++;
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return s.s ? s.s : strdup("");
}

static int64_t query_int(const char *file, const char *sql) {
  sqlite3 *h;
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return -1;
  sqlite3_stmt *st;
  int64_t v = -1;
  if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

#define CAMPAIGN(db, budget) \
  "tune", "--db", db, "--kernel", "transpose", "--set", "M=256,N=256", "--strategy", "random", \
      "--budget", budget, "--time-cap", "0.05", "--min-reps", "3"

static void test_campaign_two_workers(void **state) {
  (void)state;
  NEED_MPI();
  const char *par[] = {CAMPAIGN("par.db", "8"), NULL};
  tk_result r = run_mpi(3, par, NULL);
  if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "workers    2 MPI ranks measured:"));
  assert_non_null(strstr(r.out, "rank 1 on "));
  assert_non_null(strstr(r.out, "rank 2 on "));
  tk_result_free(&r);
  const char *seq[] = {exe, CAMPAIGN("seq.db", "8"), NULL};
  r = tk_capture(seq, dir, NULL);
  assert_int_equal(r.rc, 0);
  assert_null(strstr(r.out, "MPI ranks"));
  tk_result_free(&r);
  int np, ns;
  char *a = trial_kinds("par.db", &np), *b = trial_kinds("seq.db", &ns);
  assert_int_equal(np, 8);
  assert_int_equal(ns, 8);
  assert_string_equal(a, b);   /* random's permutation: the same configurations, statuses */
  free(a), free(b);
  /* measured asynchronously (tu.h invariant 11); the sequential one not */
  assert_int_equal(query_int("par.db", "SELECT count(*) FROM campaigns WHERE options LIKE "
                                       "'%\"asynchronous\":true%'"), 1);
  assert_int_equal(query_int("seq.db", "SELECT count(*) FROM campaigns WHERE options LIKE "
                                       "'%\"asynchronous\":false%'"), 1);
}

/* Asynchrony itself: worker rank 3 sleeps 4 s before each measurement.
** Dispatched as results come, fast rank 2 measures more of the campaign
** than slow rank 3; a barrier per batch of 3 (one job per worker) would
** give them equal shares (checked: 3 and 3 with the batch path). Rank 1
** also measures the default and the end. Not a timing assertion as such:
** it fails only if a fast worker's measurement took about as long as the
** slow one's 4 s sleep. */
static void test_async_campaign(void **state) {
  (void)state;
  NEED_MPI();
  const char *args[] = {CAMPAIGN("slow.db", "10"), "--json", NULL};
  const char *env[] = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                       "ROOFTUNE_TEST_MPI_SLOW=3:4", "ROOFTUNE_TEST_MPI_KILL", NULL};
  const char *v[64];
  int k = mpi_argv(v, 4, args);
  memmove(v + 3, v + 1, (size_t)k * sizeof *v);   /* mpirun -x ROOFTUNE_TEST_MPI_SLOW ... */
  v[1] = "-x", v[2] = "ROOFTUNE_TEST_MPI_SLOW";
  tk_result r = tk_capture(v, dir, env);
  if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
  assert_int_equal(r.rc, 0);
  json_t *j = json_loads(r.out, 0, NULL), *w = json_object_get(j, "workers");
  assert_int_equal(json_array_size(w), 3);
  json_int_t jobs[4] = {0}, total = 0;
  for (size_t i = 0; i < 3; i++) {
    json_t *o = json_array_get(w, i);
    json_int_t rank = json_integer_value(json_object_get(o, "rank"));
    assert_true(rank >= 1 && rank <= 3);
    total += jobs[rank] = json_integer_value(json_object_get(o, "jobs"));
  }
  printf("test_async_campaign: jobs per worker rank 1 %lld, 2 %lld, 3 (slow) %lld\n",
         (long long)jobs[1], (long long)jobs[2], (long long)jobs[3]);
  assert_true(total >= 10);                 /* every trial, the end and baseline besides */
  assert_true(jobs[2] >= jobs[3] + 2);      /* a barrier: jobs[2] == jobs[3] */
  json_decref(j);
  tk_result_free(&r);
  /* the budget exactly, each configuration once */
  assert_int_equal(query_int("slow.db", "SELECT count(*) FROM trials"), 10);
  assert_int_equal(query_int("slow.db", "SELECT count(DISTINCT config_hash) FROM trials"), 10);
}

/* The holder of campaign 1's lease has exited (mpirun may return first). */
static void wait_lease_free(const char *file) {
  int64_t pid = query_int(file, "SELECT pid FROM leases WHERE campaign_id = 1");
  for (int i = 0; pid > 0 && i < 200 && !(kill((pid_t)pid, 0) && errno == ESRCH); i++) {
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

static void test_kill_and_resume(void **state) {
  (void)state;
  NEED_MPI();
  const char *args[] = {CAMPAIGN("kill.db", "12"), NULL};
  /* worker rank 2 dies (SIGKILL) when its second measurement comes (its fourth was
   * not sure to come: on a loaded machine rank 1 could take nine of the twelve) */
  const char *env[] = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                       "ROOFTUNE_TEST_MPI_KILL=2:1", NULL};
  const char *v[64];
  int k = mpi_argv(v, 3, args);
  memmove(v + 3, v + 1, (size_t)k * sizeof *v);   /* mpirun -x ROOFTUNE_TEST_MPI_KILL ... */
  v[1] = "-x", v[2] = "ROOFTUNE_TEST_MPI_KILL";
  tk_result r = tk_capture(v, dir, env);
  assert_int_not_equal(r.rc, 0);
  tk_result_free(&r);
  int64_t before = query_int("kill.db", "SELECT count(*) FROM trials");
  assert_true(before >= 1 && before < 12);
  assert_int_equal(query_int("kill.db", "SELECT count(*) FROM campaigns WHERE state = 'done'"), 0);
  /* what was stored before the kill, to compare after the resume */
  int64_t sum_before = query_int("kill.db", "SELECT sum(id * length(config_hash || status || "
                                            "coalesce(time, 0))) FROM trials");
  int64_t max_id = query_int("kill.db", "SELECT max(id) FROM trials");
  char maxs[32];
  snprintf(maxs, sizeof maxs, "%lld", (long long)max_id);
  wait_lease_free("kill.db");
  const char *res[] = {"tune", "--db", "kill.db", "--resume", "1", NULL};
  r = run_mpi(3, res, NULL);
  if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
  assert_int_equal(r.rc, 0);
  char want[96];
  snprintf(want, sizeof want, "resumed %lld", (long long)before);
  assert_non_null(strstr(r.out, want));
  tk_result_free(&r);
  assert_int_equal(query_int("kill.db", "SELECT count(*) FROM trials"), 12);
  assert_int_equal(query_int("kill.db", "SELECT count(DISTINCT config_hash) FROM trials"), 12);
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT sum(id * length(config_hash || status || coalesce(time, 0))) FROM "
           "trials WHERE id <= %s", maxs);
  assert_int_equal(query_int("kill.db", sql), sum_before);   /* the old trials untouched */
  assert_int_equal(query_int("kill.db", "SELECT count(*) FROM campaigns WHERE state = 'done'"), 1);
}

static void test_odd_fingerprint(void **state) {
  (void)state;
  NEED_MPI();
  /* MPMD: ranks 0 and 1 as they are, rank 2 with another host fingerprint */
  const char *v[64];
  int k = 0;
  v[k++] = mpirun, v[k++] = "--oversubscribe", v[k++] = "-n", v[k++] = "2", v[k++] = exe;
  const char *args[] = {CAMPAIGN("odd.db", "4")};
  for (size_t i = 0; i < sizeof args / sizeof *args; i++) v[k++] = args[i];
  v[k++] = ":", v[k++] = "-n", v[k++] = "1", v[k++] = "-x",
  v[k++] = "ROOFTUNE_TEST_HOST_FINGERPRINT=0123456789abcdef0123456789abcdef", v[k++] = exe;
  for (size_t i = 0; i < sizeof args / sizeof *args; i++) v[k++] = args[i];
  v[k] = NULL;
  tk_result r = tk_capture(v, dir, mpi_env);
  assert_int_not_equal(r.rc, 0);
  assert_non_null(strstr(r.err, "MPI worker rank 2"));
  assert_non_null(strstr(r.err, "0123456789abcdef0123456789abcdef"));
  assert_non_null(strstr(r.err, "the workers must be identical targets"));
  tk_result_free(&r);
  assert_int_equal(query_int("odd.db", "SELECT count(*) FROM campaigns"), 0);
  assert_int_equal(query_int("odd.db", "SELECT count(*) FROM trials"), 0);
}

static void test_replay_mpi(void **state) {
  (void)state;
  if (!exe[0]) skip();
  char rel[4096], t4[4096];
  if (!realpath(rt_project_path("data/t4/pnpoly_RTX_3090_T4.json.gz", rel, sizeof rel), t4)) fail();
  /* without workers: a clear error */
  const char *alone[] = {exe, "replay", "--t4", t4, "--strategy", "random", "--mpi", NULL};
  tk_result r = tk_capture(alone, dir, NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "no MPI workers"));
  tk_result_free(&r);
  NEED_MPI();
  const char *names[] = {"random", "genetic", "bayes"};
  for (int s = 0; s < 3; s++) {
    const char *args[] = {"replay", "--t4", t4, "--strategy", names[s], "--budget", "40", "--mpi",
                          "--sleep-scale", "0.002", "--json", NULL};
    r = run_mpi(4, args, NULL);
    if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
    assert_int_equal(r.rc, 0);
    json_t *j = json_loads(r.out, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_integer_value(json_object_get(j, "evaluations")), 40);
    json_t *m = json_object_get(j, "mpi");
    assert_int_equal(json_integer_value(json_object_get(m, "workers")), 3);
    assert_true(json_is_true(json_object_get(m, "asynchronous")) == (s < 2));
    /* every evaluation slept its recorded cost, scaled */
    double slept = json_real_value(json_object_get(m, "slept_s")),
           cost = json_real_value(json_object_get(j, "recorded_cost_s"));
    assert_true(fabs(slept - 0.002 * cost) <= 1e-3 * slept + 1e-6);
    json_t *tr = json_object_get(j, "trace");
    assert_int_equal(json_array_size(tr), 40);
    for (size_t a = 0; a < 40; a++)
      for (size_t b = 0; b < a; b++)
        assert_false(json_equal(json_object_get(json_array_get(tr, a), "config"),
                                json_object_get(json_array_get(tr, b), "config")));
    json_decref(j);
    tk_result_free(&r);
  }
}

/* examples/slurm_campaign.sh: valid bash, and its mpirun line runs here. */
static void test_slurm_example(void **state) {
  (void)state;
  char rel[4096], script[4096];
  if (!realpath(rt_project_path("examples/slurm_campaign.sh", rel, sizeof rel), script)) fail();
  const char *check[] = {"bash", "-n", script, NULL};
  tk_result r = tk_capture(check, dir, NULL);
  assert_int_equal(r.rc, 0);
  tk_result_free(&r);
  NEED_MPI();
  char rt[4200], dbv[512];
  snprintf(rt, sizeof rt, "ROOFTUNE=%s", exe);
  snprintf(dbv, sizeof dbv, "DB=%s/slurm.db", dir);
  const char *env[] = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", rt, dbv, "NP=3",
                       "MPIRUN_ARGS=--oversubscribe", "KERNEL=transpose", "SET=M=256,N=256",
                       "STRATEGY=random", "BUDGET=4", "TUNE_ARGS=--time-cap 0.05 --min-reps 3",
                       "SLURM_NTASKS", "DEVICES", NULL};
  const char *run[] = {"bash", script, NULL};
  r = tk_capture(run, dir, env);
  if (r.rc) fprintf(stderr, "%s%s", r.out, r.err);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "workers    2 MPI ranks measured:"));
  tk_result_free(&r);
  assert_int_equal(query_int("slurm.db", "SELECT count(*) FROM trials"), 4);
}

/* `experiment run scaling --quick`: every run made its budget at 1, 2 and
** 4 workers, the tables are derived from it, and each sequential score is
** the one `compare` gives that seed (computed by another command). No
** timing is asserted. */
static void test_experiment_quick(void **state) {
  (void)state;
  NEED_MPI();
  char out[512];
  snprintf(out, sizeof out, "%s/scaling", dir);
  /* two strategies without a GP (its fits are slow under ASan; test_replay_mpi runs bayes);
  ** under ASan random alone (the experiment took 150 s of CI's 30 minutes) */
#if defined(__SANITIZE_ADDRESS__)
  const char *args[] = {"--seeds", "1", "--budget", "16", "--strategies", "random", NULL};
  const int nstrat = 1;
#else
  const char *args[] = {"--seeds", "1", "--budget", "16", "--strategies", "random,annealing", NULL};
  const int nstrat = 2;
#endif
  assert_int_equal(tk_exp_run(exe, "scaling", out, args), 0);
  char *sc = tk_exp_file(out, "scaling.csv"), *ef = tk_exp_file(out, "efficiency.csv"),
       *bt = tk_exp_file(out, "batch.csv");
  const char *names[] = {"random", "annealing"};
  for (int i = 0; i < nstrat; i++)
    for (int w = 1; w <= 4; w *= 2) {
      char row[64];
      snprintf(row, sizeof row, "\n%s,%d,true,16,", names[i], w);
      if (!strstr(sc, row)) fail_msg("scaling.csv lacks %s", row + 1);
      snprintf(row, sizeof row, "\n%s,%d,true,", names[i], w);
      assert_non_null(strstr(ef, row));
    }
  assert_null(strstr(sc, "\ngenetic,"));   /* --strategies chose */
  /* random's sequential scores against compare's */
  char t4[4096], rel[4096], cmp[600];
  if (!realpath(rt_project_path("data/t4/pnpoly_RTX_3090_T4.json.gz", rel, sizeof rel), t4)) fail();
  snprintf(cmp, sizeof cmp, "%s/cmp", dir);
  const char *c[] = {exe, "compare", "--t4", t4, "--strategies", "random", "--budget", "16", "--repeats", "1",
                     "--seed", "1", "--csv", cmp, NULL};
  tk_result r = tk_capture(c, dir, NULL);
  assert_int_equal(r.rc, 0);
  tk_result_free(&r);
  char *scores = tk_exp_file(cmp, "scores.csv");
  for (int seed = 1; seed <= 1; seed++) {
    char key[32], *p, *q;
    snprintf(key, sizeof key, "\nrandom,%d,", seed - 1);   /* strategy,repeat,seed,score */
    assert_non_null(p = strstr(scores, key));
    double want = strtod(strchr(p + strlen(key), ',') + 1, NULL);
    snprintf(key, sizeof key, "\nrandom,%d,", seed);        /* strategy,seed,sequential,parallel */
    assert_non_null(q = strstr(bt, key));
    double got = strtod(q + strlen(key), NULL);
    assert_true(fabs(got - want) <= 1e-5 * fabs(want) + 1e-6);
  }
  free(sc), free(ef), free(bt), free(scores);
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], exe, sizeof exe)) exe[0] = 0;
  if (find_mpirun()) printf("test_mpi: mpirun is missing (openmpi-bin): the MPI runs are skipped\n");
  else if (!mp_built()) printf("test_mpi: built without MPI: the MPI runs are skipped\n");
  snprintf(dir, sizeof dir, "/tmp/rt-mpi-test-%d", (int)getpid());
  /* under ASan, Open MPI's own allocations at MPI_Init in the rooftune
  ** processes mpirun starts are not ours (tests/data/lsan_mpi.supp) */
  char rel[4096], supp[4096], lsan[4200];
  if (!getenv("LSAN_OPTIONS") &&
      realpath(rt_project_path("tests/data/lsan_mpi.supp", rel, sizeof rel), supp)) {
    snprintf(lsan, sizeof lsan, "suppressions=%s:fast_unwind_on_malloc=0:print_suppressions=0", supp);
    setenv("LSAN_OPTIONS", lsan, 1);
  }
  mkdir(dir, 0700);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_async_loop),
    cmocka_unit_test(test_constant_liar),
    cmocka_unit_test(test_campaign_two_workers),
    cmocka_unit_test(test_async_campaign),
    cmocka_unit_test(test_kill_and_resume),
    cmocka_unit_test(test_odd_fingerprint),
    cmocka_unit_test(test_replay_mpi),
    cmocka_unit_test(test_slurm_example),
    cmocka_unit_test(test_experiment_quick),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  tk_rm_rf(dir);
  return rc;
}
