/*
** bench_adapt.c -- the cost of online adaptation in the reader library
** (rtdb.h, "Online adaptation") against today's warm rtdb_lookup, on a
** database of 20,000 trials (200 gemm workloads x 100 trials, each
** pinned), built through db.h in /tmp. Over 256 distinct sites (exact and
** nearest workloads), 5 runs each, median, min and max, from 1 and 2
** threads sharing one handle / one adapter:
**   (a) warm rtdb_lookup calls per second (memoised answers);
**   (b) rtdb_adapt_choose + rtdb_adapt_report pairs per second, no log;
**   (c) the same with the side log written to /tmp;
** and the overhead per call of (b) and (c) over (a) in nanoseconds.
** Warm-up (each site's first call) is excluded, as (a) excludes the
** memo's filling.
*/
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/rtdb.h"
#include "bk_rtdb.h"

#define NWORK 200
#define NTRIALS 100
#define NQ 256
#define CALLS 1000000

static char path[64], logpath[80], queries[NQ][64];

static void die(const char *what, const char *msg) {
  fprintf(stderr, "bench_adapt: %s: %s\n", what, msg);
  exit(1);
}

static void build(void) { bk_build_pinned(path, NWORK, NTRIALS, "", "", die); }

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sort v and print its median, min and max times scale; the median. */
static double report(const char *what, double *v, int n, double scale, const char *unit) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  printf("%-44s median %9.2f  min %9.2f  max %9.2f %s\n", what, v[n / 2] * scale, v[0] * scale,
         v[n - 1] * scale, unit);
  return v[n / 2];
}

typedef struct job {
  rtdb *rd;
  rtdb_adapt *ad;
  int n, seed;
} job;

static void *run(void *arg) {
  job *j = arg;
  rtdb_result r;
  rtdb_choice c;
  for (int i = 0; i < j->n; i++) {
    const char *q = queries[(i + j->seed) % NQ];
    if (!j->ad) {
      if (rtdb_lookup(j->rd, "host", "gemm", q, NULL, &r)) die("lookup", rtdb_errmsg(j->rd));
    } else if (rtdb_adapt_choose(j->ad, "host", "gemm", q, NULL, &c) ||
               rtdb_adapt_report(j->ad, &c, 1e-3 * (1 + c.arm) * (1 + 0.001 * (i % 13)))) {
      die("adapt", rtdb_adapt_errmsg(j->ad));
    }
  }
  return NULL;
}

/* Calls per second of nthreads threads (ad NULL: rtdb_lookup). */
static double rate(rtdb *rd, rtdb_adapt *ad, int nthreads) {
  pthread_t th[8];
  job j[8];
  double t0 = rt_now();
  for (int i = 0; i < nthreads; i++) {
    j[i] = (job){rd, ad, CALLS / nthreads, i * 37};
    pthread_create(&th[i], NULL, run, &j[i]);
  }
  for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
  return CALLS / (rt_now() - t0);
}

int main(void) {
  snprintf(path, sizeof path, "/tmp/rooftune-bench-adapt-%d.db", (int)getpid());
  snprintf(logpath, sizeof logpath, "/tmp/rooftune-bench-adapt-%d.log", (int)getpid());
  unlink(path);
  double t0 = rt_now();
  build();
  printf("built %s: %d workloads x %d trials in %.1f s\n", path, NWORK, NTRIALS, rt_now() - t0);
  for (int q = 0; q < NQ; q++)
    snprintf(queries[q], sizeof queries[q], "M=%d,N=%d,K=%d", q % 2 ? bk_size_of(q, 0) : 100 + q * 13,
             bk_size_of(q, 1), q % 2 ? bk_size_of(q, 2) : 3000 - q * 5);
  rtdb *rd;
  if (rtdb_open(path, &rd)) die("open", path);
  char msg[512];
  for (int threads = 1; threads <= 2; threads++) {
    double base = 0;
    for (int mode = 0; mode < 3; mode++) {
      rtdb_adapt *ad = NULL;
      unlink(logpath);
      if (mode && rtdb_adapt_open(rd, &(rtdb_adapt_opts){.log_path = mode == 2 ? logpath : NULL}, &ad, msg,
                                  sizeof msg))
        die("adapt open", msg);
      double r[5], ns[5];
      rate(rd, ad, threads);   /* warm-up: the memo, or every site */
      for (int i = 0; i < 5; i++) r[i] = rate(rd, ad, threads);
      char what[64];
      static const char *const name[] = {"rtdb_lookup (warm)", "adapt choose+report, no log",
                                         "adapt choose+report, log"};
      snprintf(what, sizeof what, "%s, %d thread%s", name[mode], threads, threads > 1 ? "s" : "");
      for (int i = 0; i < 5; i++) ns[i] = r[i];
      double med = report(what, r, 5, 1e-6, "M calls/s");
      if (!mode) base = med;
      else {
        for (int i = 0; i < 5; i++) ns[i] = 1e9 / ns[i] - 1e9 / base;
        snprintf(what, sizeof what, "  overhead per call over rtdb_lookup");
        report(what, ns, 5, 1, "ns");
      }
      if (rtdb_adapt_close(ad)) die("adapt close", "log");
    }
  }
  rtdb_close(rd);
  static const char *const sfx[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) {
    char p[96];
    snprintf(p, sizeof p, "%s%s", path, sfx[i]);
    unlink(p);
  }
  unlink(logpath);
  return 0;
}
