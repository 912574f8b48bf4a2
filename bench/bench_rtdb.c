/*
** bench_rtdb.c -- speed of the reader library (db/rtdb.h) on a database of
** 100,000 trials (200 gemm workloads x 500 trials, each workload pinned),
** built through db.h in /tmp:
**   (a) cold open + first lookup: 20 fresh handles (the page cache stays
**       warm: dropping it needs root), median, min and max;
**   (b) warm lookups per second from 1 and 2 threads over 256 distinct
**       queries (exact and nearest), 5 runs each, median, min and max.
** Targets: (a) under 1 ms; (b) at least 1,000,000 lookups/s on one thread.
*/
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/db.h"
#include "db/rtdb.h"

#define NWORK 200
#define NTRIALS 500
#define NQ 256
#define WARM_N 2000000

static char path[64], queries[NQ][64];

static void die(const char *what, const char *msg) {
  fprintf(stderr, "bench_rtdb: %s: %s\n", what, msg);
  exit(1);
}

static int size_of(int i, int d) { return 128 << (d == 0 ? i % 5 : d == 1 ? i / 5 % 5 : i / 25 % 5); }

static void build(void) {
  rt_err err = {0};
  db *d = db_open(path, DB_CREATE, &err);
  if (!d) die(path, err.msg);
  int64_t tid, kid, sid;
  if (db_begin(d, &err) || db_target_id(d, "host", "fp", "{}", &tid, &err) ||
      db_kernel_id(d, "gemm", "1", &kid, &err) ||
      db_kernel_set_default(d, kid, "{\"mc\":384}", &err) || db_space_id(d, "{}", &sid, &err))
    die("build", err.msg);
  int64_t wids[NWORK], bests[NWORK];
  for (int w = 0; w < NWORK; w++) {
    char key[128], sizes[128];
    int m = size_of(w, 0), n = size_of(w, 1), k = size_of(w, 2) + w / 125;
    snprintf(key, sizeof key, "gemm f32 M=%d N=%d K=%d threads_max=2 vector_regs=32", m, n, k);
    snprintf(sizes, sizeof sizes, "{\"M\":%d,\"N\":%d,\"K\":%d,\"threads_max\":2,\"vector_regs\":32}", m, n, k);
    int64_t wid, cid, best = 0;
    if (db_workload_id(d, kid, key, sizes, "f32", "", &wid, &err)) die("workload", err.msg);
    db_campaign c = {tid, wid, sid, "random", "{}", 1, NTRIALS, "measured", "cc", "-O2", "done"};
    if (db_campaign_new(d, &c, &cid, &err)) die("campaign", err.msg);
    for (int t = 0; t < NTRIALS; t++) {
      char cfg[96];
      snprintf(cfg, sizeof cfg, "{\"kc\":%d,\"mc\":%d,\"nc\":%d}", 64 + t % 7, 24 * (1 + t % 11), t);
      db_trial tr;
      db_trial_init(&tr);
      tr.campaign_id = cid, tr.config_json = cfg, tr.status = "ok", tr.time_s = 1 + (t * 7919) % NTRIALS;
      int64_t id;
      if (db_trial_add(d, &tr, &id, &err)) die("trial", err.msg);
      if ((t * 7919) % NTRIALS == 0) best = id;
    }
    wids[w] = wid, bests[w] = best;
  }
  if (db_commit(d, &err)) die("commit", err.msg);
  db_close(d);
  /* pins through SQL: the pin commands are not part of db.h */
  sqlite3 *h;
  sqlite3_open(path, &h);
  sqlite3_exec(h, "BEGIN", NULL, NULL, NULL);
  for (int w = 0; w < NWORK; w++) {
    char *q = sqlite3_mprintf(
        "INSERT INTO pins(target_id, workload_id, version, trial_id, config, pinned_by, reason)"
        " SELECT %lld, %lld, 1, id, config, 'bench', 'best' FROM trials WHERE id = %lld;"
        "INSERT INTO pin_current VALUES(%lld, %lld, last_insert_rowid());",
        (long long)tid, (long long)wids[w], (long long)bests[w], (long long)tid, (long long)wids[w]);
    if (sqlite3_exec(h, q, NULL, NULL, NULL) != SQLITE_OK) die("pin", sqlite3_errmsg(h));
    sqlite3_free(q);
  }
  if (sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) die("pin", sqlite3_errmsg(h));
  sqlite3_close(h);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(const char *what, double *v, int n, double scale, const char *unit) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  printf("%-40s median %10.1f  min %10.1f  max %10.1f %s\n", what, v[n / 2] * scale, v[0] * scale,
         v[n - 1] * scale, unit);
}

typedef struct warm { rtdb *rd; int n, seed; } warm;

static void *warm_run(void *arg) {
  warm *w = arg;
  rtdb_result r;
  for (int i = 0; i < w->n; i++)
    if (rtdb_lookup(w->rd, "host", "gemm", queries[(i + w->seed) % NQ], NULL, &r)) die("lookup", rtdb_errmsg(w->rd));
  return NULL;
}

/* Lookups per second of nthreads threads sharing one handle. */
static double warm_rate(rtdb *rd, int nthreads) {
  pthread_t th[8];
  warm w[8];
  double t0 = rt_now();
  for (int i = 0; i < nthreads; i++) {
    w[i] = (warm){rd, WARM_N / nthreads, i * 37};
    pthread_create(&th[i], NULL, warm_run, &w[i]);
  }
  for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
  return WARM_N / (rt_now() - t0);
}

int main(void) {
  snprintf(path, sizeof path, "/tmp/rooftune-bench-rtdb-%d.db", (int)getpid());
  unlink(path);
  double t0 = rt_now();
  build();
  printf("built %s: %d workloads x %d trials in %.1f s\n", path, NWORK, NTRIALS, rt_now() - t0);
  for (int q = 0; q < NQ; q++)
    snprintf(queries[q], sizeof queries[q], "M=%d,N=%d,K=%d", q % 2 ? size_of(q, 0) : 100 + q * 13,
             size_of(q, 1), q % 2 ? size_of(q, 2) : 3000 - q * 5);
  double cold[20];
  for (int i = 0; i < 20; i++) {
    rtdb *rd;
    rtdb_result r;
    double s = rt_now();
    if (rtdb_open(path, &rd) || rtdb_lookup(rd, "host", "gemm", queries[i], NULL, &r))
      die("cold", "open or lookup failed");
    cold[i] = rt_now() - s;
    rtdb_close(rd);
  }
  report("cold open + first lookup", cold, 20, 1e6, "us");
  rtdb *rd;
  if (rtdb_open(path, &rd)) die("open", path);
  for (int threads = 1; threads <= 2; threads++) {
    double rate[5];
    warm_rate(rd, threads);   /* fills the memo */
    for (int i = 0; i < 5; i++) rate[i] = warm_rate(rd, threads);
    char what[64];
    snprintf(what, sizeof what, "warm lookups, %d thread%s", threads, threads > 1 ? "s" : "");
    report(what, rate, 5, 1e-6, "M/s");
  }
  rtdb_close(rd);
  static const char *const sfx[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) {
    char p[96];
    snprintf(p, sizeof p, "%s%s", path, sfx[i]);
    unlink(p);
  }
  return 0;
}
