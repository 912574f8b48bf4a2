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
#include "bk_rtdb.h"

#define NWORK 200
#define NTRIALS 500
#define NQ 256
#define WARM_N 2000000

static char path[64], queries[NQ][64];

static void die(const char *what, const char *msg) {
  fprintf(stderr, "bench_rtdb: %s: %s\n", what, msg);
  exit(1);
}

static void build(void) { bk_build_pinned(path, NWORK, NTRIALS, " threads_max=2 vector_regs=32", ",\"threads_max\":2,\"vector_regs\":32", die); }

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
    snprintf(queries[q], sizeof queries[q], "M=%d,N=%d,K=%d", q % 2 ? bk_size_of(q, 0) : 100 + q * 13,
             bk_size_of(q, 1), q % 2 ? bk_size_of(q, 2) : 3000 - q * 5);
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
