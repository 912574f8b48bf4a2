/*
** test_load.c -- the load guard's eyes (measure/ms_load.c): /proc/stat's
** text parsed against numbers written by hand (the aggregate line wherever
** it is, kernels that stop at four columns, text without it refused); the
** signs between two samples computed here by hand (others' CPUs, steal);
** each threshold's verdict and its message; and on this machine, a child
** spinning for 1.2 s seen as other work (the machine may be busier still:
** the assertion only gets truer); a real host campaign with a spinner
** running through it reports looks at every measurement (its trials, the
** re-measurements and the baseline) and busy ones, and --no-load-guard
** (an injected measurement too) none.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "measure/ms.h"
#include "tuner/tu.h"
#include <sqlite3.h>

static void parses_stat(void **state) {
  (void)state;
  const char *text = "intr 1 2 3\n"
                     "cpu  100 20 30 4000 50 6 7 8 0 0\n"
                     "cpu0 50 10 15 2000 25 3 3 4 0 0\n"
                     "ctxt 99\nprocs_running 3\nprocs_blocked 0\n";
  ms_jiffies j;
  assert_int_equal(ms_load_parse_stat(text, &j), 0);
  assert_true(j.busy == 100 + 20 + 30 + 6 + 7);   /* user nice system irq softirq */
  assert_true(j.idle == 4000 + 50);               /* idle iowait */
  assert_true(j.steal == 8);
  assert_int_equal(j.running, 3);
  assert_int_equal(ms_load_parse_stat("cpu  1 2 3 4\n", &j), 0);   /* a 2.4 kernel's four */
  assert_true(j.busy == 6 && j.idle == 4 && j.steal == 0);
  assert_int_equal(j.running, -1);
  assert_int_equal(ms_load_parse_stat("cpu0 1 2 3 4\n", &j), -1);   /* no aggregate line */
  assert_int_equal(ms_load_parse_stat("cpu  1 2\n", &j), -1);
  assert_int_equal(ms_load_parse_stat("", &j), -1);
}

static void signs_between_samples(void **state) {
  (void)state;
  ms_load_sample_t a = {.t = 10, .own = 5, .j = {.busy = 1000, .idle = 5000, .steal = 0}};
  ms_load_sample_t b = {.t = 12, .own = 6, .j = {.busy = 1300, .idle = 5100, .steal = 20, .running = 4}};
  ms_load_view v;
  ms_load_between(&a, &b, 100, &v);
  /* 3 CPU-seconds busy, 1 of them ours, over 2 s: 1 CPU of others */
  assert_true(fabs(v.others - 1.0) < 1e-12);
  assert_true(fabs(v.steal - 20.0 / 400.0) < 1e-12);   /* 0.2 s of 4 CPU-seconds */
  assert_true(fabs(v.wall - 2) < 1e-12);
  assert_int_equal(v.running, 4);
  b.own = 9;   /* more of ours than the CPUs' busy time (children reaped late): none */
  ms_load_between(&a, &b, 100, &v);
  assert_true(v.others == 0);
  b.t = a.t;   /* no interval: no signs */
  ms_load_between(&a, &b, 100, &v);
  assert_true(v.others == 0 && v.steal == 0);
}

static void verdicts(void **state) {
  (void)state;
  ms_load_guard g = {.max_others = MS_LOAD_OTHERS, .max_steal = MS_LOAD_STEAL,
                     .max_probe = 1.15};   /* the probe as a sign (off by default) */
  ms_load_view v = {.wall = 2, .others = 0.49, .steal = 0.04, .probe = 1.14};
  ms_load_verdict(&g, &v);
  assert_int_equal(v.busy, 0);
  assert_string_equal(v.why, "");
  v.others = 0.6;
  ms_load_verdict(&g, &v);
  assert_int_equal(v.busy, 1);
  assert_string_equal(v.why, "other work used 0.60 CPUs (over 0.50) for 2.0 s");
  v.others = 0, v.steal = 0.1;
  ms_load_verdict(&g, &v);
  assert_string_equal(v.why, "the hypervisor stole 10.0% of the CPU time (over 5.0%)");
  v.steal = 0, v.probe = 1.5;
  ms_load_verdict(&g, &v);
  assert_string_equal(v.why, "the memory probe ran 1.50x its quiet time (over 1.15x)");
}

/* A spinning child is other work: it is not reaped, so not ours yet. */
static void sees_a_spinner(void **state) {
  (void)state;
  ms_load_guard g;
  rt_err err = {0};
  if (ms_load_start(&g, &err)) {
    printf("skipped: %s\n", err.msg);
    skip();
  }
  assert_true(g.on);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    volatile unsigned long x = 0;
    double t0 = rt_now();
    while (rt_now() - t0 < 1.2) x++;
    _exit(0);
  }
  struct timespec ts = {1, 200000000};
  nanosleep(&ts, NULL);
  ms_load_view v;
  int busy = ms_load_check(&g, &v);
  int st;
  waitpid(pid, &st, 0);
  if (!busy) fail_msg("not busy: others %.2f CPUs over %.2f s", v.others, v.wall);
  assert_true(v.others >= 0.5);
  assert_non_null(strstr(v.why, "other work used"));
  ms_load_end(&g);
  assert_null(g.probe_buf);
}

static pid_t spin(double seconds) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    volatile unsigned long x = 0;
    double t0 = rt_now();
    while (rt_now() - t0 < seconds) x++;
    _exit(0);
  }
  return pid;
}

/* One integer from the database (-1 when the query fails). */
static long long q_int(const char *path, const char *sql) {
  sqlite3 *h;
  sqlite3_stmt *st;
  long long v = -1;
  if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return v;
}

static void campaign_reports_load(void **state) {
  (void)state;
  char dbp[64];
  snprintf(dbp, sizeof dbp, "/tmp/rt-load-%d.db", (int)getpid());
  volatile sig_atomic_t stop = 0;
  for (int off = 0; off < 2; off++) {
    tu_campaign_opts o = {.db_path = dbp, .target = "host", .kernel = "reduction",
                          .set = "N=1000000", .strategy = "random", .budget = "4", .seed = 1,
                          .stop = &stop, .no_pin = 1, .no_load_guard = off};
    ms_opts_default(&o.ms);
    o.ms.time_cap = 0.2;
    /* two spinners (on 2 cores one, sharing with the campaign, got under
    ** 0.5 CPU at times); the second campaign: none, and no guard */
    pid_t pid = off ? 0 : spin(30), pid2 = off ? 0 : spin(30);
    tu_report rep;
    rt_err err = {0};
    int rc = tu_campaign(&o, &rep, &err);
    if (pid > 0) kill(pid, SIGKILL), waitpid(pid, NULL, 0);
    if (pid2 > 0) kill(pid2, SIGKILL), waitpid(pid2, NULL, 0);
    if (rc) fail_msg("%s", err.msg);
    if (off) {
      /* the same proposals (same seed): the first campaign's trials are
      ** reused but those measured under load (and timeouts) */
      long long quiet = q_int(dbp, "SELECT count(*) FROM trials WHERE campaign_id = 1 AND "
                                   "loaded = 0 AND status != 'timeout'");
      assert_true(quiet >= 0);
      assert_int_equal(rep.reused, quiet);
      assert_int_equal(rep.measured, 4 - quiet);
      assert_int_equal(q_int(dbp, "SELECT count(*) FROM trials WHERE campaign_id = 2 AND loaded"), 0);
      assert_int_equal(rep.load_on, 0);
      assert_true(rep.load_looks == 0 && rep.load_busy == 0);
      json_t *j = json_loads(rep.json, 0, NULL);
      assert_true(json_is_null(json_object_get(j, "load")));
      json_decref(j);
    } else {
      /* every measurement looked at: 4 trials, the re-measurements, the baseline */
      assert_int_equal(rep.load_on, 1);
      assert_true(rep.load_looks == 4 + rep.remeasured + (rep.baseline_repeats > 0));
      if (rep.load_busy < 1) fail_msg("a spinner ran and no look saw it (%lld looks)",
                                      (long long)rep.load_looks);
      assert_non_null(rep.load_why);
      json_t *j = json_loads(rep.json, 0, NULL);
      json_t *l = json_object_get(j, "load");
      assert_true(json_integer_value(json_object_get(l, "looks")) == rep.load_looks);
      assert_true(json_integer_value(json_object_get(l, "busy")) == rep.load_busy);
      json_decref(j);
      /* busy looks mark the trials they cover; at least one was busy */
      long long loaded = q_int(dbp, "SELECT count(*) FROM trials WHERE campaign_id = 1 AND loaded");
      assert_true(loaded >= 0 && loaded <= 4);
      if (loaded == 0 && rep.load_busy > rep.remeasured + (rep.baseline_repeats > 0))
        fail_msg("%lld busy looks and no trial marked loaded", (long long)rep.load_busy);
      /* the pin: never from re-measurements made under load */
      assert_non_null(rep.choice);
      if (strstr(rep.reason, "busy while the candidates were measured again")) {
        assert_string_equal(rep.choice, "default");
        assert_int_equal(q_int(dbp, "SELECT count(*) FROM remeasurements WHERE campaign_id = 1"), 0);
      }
    }
    tu_report_free(&rep);
  }
  char p[80];
  const char *sfx[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) snprintf(p, sizeof p, "%s%s", dbp, sfx[i]), unlink(p);
}

int main(void) {
  unsetenv("ROOFTUNE_LOAD_GUARD");   /* scripts/run-tests turns the guard off for the others */
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(parses_stat),
    cmocka_unit_test(signs_between_samples),
    cmocka_unit_test(verdicts),
    cmocka_unit_test(sees_a_spinner),
    cmocka_unit_test(campaign_reports_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
