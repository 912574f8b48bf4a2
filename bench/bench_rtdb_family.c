/*
** bench_rtdb_family.c -- speed of the reader's fallback along target
** families (db/rtdb.h, rtdb_lookup_on) at each level, against the lookup
** by target name (rtdb_lookup, the only one before families). A database
** in /tmp: host target fpA (model "Xeon A", AVX-512) with 200 pinned gemm
** workloads, a host target of another model and a CUDA target with 200
** pins each (which every level query must pass over), and callers whose
** chains answer at each level:
**   name     rtdb_lookup(db, "host", ...): the stored host row with pins
**   target   the chain of fpA itself                        (level 1)
**   model    a new fingerprint of model "Xeon A"            (level 2)
**   arch     a new model of the same architecture           (level 3)
**   backend  a new architecture, max_level 4                (level 4)
**   default  a backend with no target                       (level 5)
** For each: (a) memo hits -- 256 distinct queries asked again and again
** (what a code generator asking the same shapes sees); (b) misses --
** every query text new, so every call resolves (SQLite reads, the
** judging of every pinned workload of the level). Calls per second from
** 1 and 2 threads sharing one handle, 5 runs each: median, min, max. The
** level of each answer is checked first. No target figure: it reports.
*/
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/rtdb.h"

#define NWORK 200
#define NQ 256
#define HITS 400000
#define MISSES 400

static char path[64], queries[NQ][64];

static void die(const char *what, const char *msg) {
  fprintf(stderr, "bench_rtdb_family: %s: %s\n", what, msg);
  exit(1);
}

static int size_of(int i, int d) { return 128 << (d == 0 ? i % 5 : d == 1 ? i / 5 % 5 : i / 25 % 5); }

/* NWORK pinned workloads of kernel kid on target tid (one trial each). */
static void pin_all(db *d, sqlite3 *h, int64_t tid, int64_t kid, int64_t sid, int salt) {
  rt_err err = {0};
  for (int w = 0; w < NWORK; w++) {
    char key[128], sizes[128], cfg[64];
    int m = size_of(w, 0), n = size_of(w, 1), k = size_of(w, 2) + w / 125;
    snprintf(key, sizeof key, "gemm f32 M=%d N=%d K=%d", m, n, k);
    snprintf(sizes, sizeof sizes, "{\"M\":%d,\"N\":%d,\"K\":%d}", m, n, k);
    snprintf(cfg, sizeof cfg, "{\"mc\":%d,\"salt\":%d}", 24 * (1 + w % 11), salt);
    int64_t wid, cid, trial;
    if (db_workload_id(d, kid, key, sizes, "f32", "", &wid, &err)) die("workload", err.msg);
    db_campaign c = {tid, wid, sid, "random", "{}", 1, 1, "measured", "cc", "-O2", "done"};
    if (db_campaign_new(d, &c, &cid, &err)) die("campaign", err.msg);
    db_trial tr;
    db_trial_init(&tr);
    tr.campaign_id = cid, tr.config_json = cfg, tr.status = "ok", tr.time_s = 1e-3;
    if (db_trial_add(d, &tr, &trial, &err)) die("trial", err.msg);
    char *q = sqlite3_mprintf(
        "INSERT INTO pins(target_id, workload_id, version, trial_id, config, pinned_by, reason)"
        " VALUES(%lld, %lld, 1, %lld, %Q, 'bench', 'best');"
        "INSERT INTO pin_current VALUES(%lld, %lld, last_insert_rowid());",
        (long long)tid, (long long)wid, (long long)trial, cfg, (long long)tid, (long long)wid);
    if (sqlite3_exec(h, q, NULL, NULL, NULL) != SQLITE_OK) die("pin", sqlite3_errmsg(h));
    sqlite3_free(q);
  }
}

static void build(void) {
  rt_err err = {0};
  db *d = db_open(path, DB_CREATE, &err);
  if (!d) die(path, err.msg);
  sqlite3 *h;
  if (sqlite3_open(path, &h) != SQLITE_OK) die(path, "sqlite3_open");
  sqlite3_busy_timeout(h, 10000);
  int64_t ta, tb, tc, kid, sid;
  if (db_target_id(d, "host", "fpB", "{\"model\":\"Xeon B\",\"isa\":\"avx2\"}", &tb, &err) ||
      db_target_id(d, "cuda:0", "fpC", "{\"device\":\"NVIDIA H200\",\"compute_capability\":\"9.0\"}", &tc, &err) ||
      db_target_id(d, "host", "fpA", "{\"model\":\"Xeon A\",\"isa\":\"avx2 avx512f\"}", &ta, &err) ||
      db_kernel_id(d, "gemm", "1", &kid, &err) || db_kernel_set_default(d, kid, "{\"mc\":384}", &err) ||
      db_space_id(d, "{}", &sid, &err))
    die("build", err.msg);
  pin_all(d, h, tb, kid, sid, 1);
  pin_all(d, h, tc, kid, sid, 2);
  pin_all(d, h, ta, kid, sid, 3);
  sqlite3_close(h);
  db_close(d);
}

typedef struct caller {
  const char *what;
  int by_name;
  rtdb_target on;
  rtdb_level level;
} caller;

static const caller callers[] = {
  {"name (rtdb_lookup)", 1, {.name = "host"}, RTDB_LEVEL_TARGET},
  {"target", 0, {.fingerprint = "fpA", .model = "Xeon A", .arch = "x86-64 AVX-512", .backend = "host"},
   RTDB_LEVEL_TARGET},
  {"model", 0, {.fingerprint = "fpNEW", .model = "Xeon A", .arch = "x86-64 AVX-512", .backend = "host"},
   RTDB_LEVEL_MODEL},
  {"arch", 0, {.fingerprint = "fpNEW", .model = "Xeon Z", .arch = "x86-64 AVX-512", .backend = "host"},
   RTDB_LEVEL_ARCH},
  {"backend", 0,
   {.fingerprint = "fpNEW", .model = "Xeon Z", .arch = "x86-64 SSE4.2", .backend = "host", .max_level = 4},
   RTDB_LEVEL_BACKEND},
  {"default", 0, {.fingerprint = "fpNEW", .model = "Xeon Z", .arch = "x86-64 AVX-512", .backend = "opencl"},
   RTDB_LEVEL_DEFAULT},
};
#define NCALLERS ((int)(sizeof callers / sizeof *callers))

static int one(rtdb *rd, const caller *c, const char *vars, rtdb_result *r) {
  return c->by_name ? rtdb_lookup(rd, c->on.name, "gemm", vars, NULL, r)
                    : rtdb_lookup_on(rd, &c->on, "gemm", vars, NULL, r);
}

typedef struct run {
  rtdb *rd;
  const caller *c;
  int n, seed, miss;
} run;

static void *run_thread(void *arg) {
  run *w = arg;
  rtdb_result r;
  char vars[64];
  for (int i = 0; i < w->n; i++) {
    const char *v = queries[(i + w->seed) % NQ];
    if (w->miss) {   /* a text never asked before: K differs in its digits */
      snprintf(vars, sizeof vars, "M=%d,N=128,K=%d", 128 << (i % 5), 1000000 + w->seed * w->n + i);
      v = vars;
    }
    if (one(w->rd, w->c, v, &r)) die("lookup", rtdb_errmsg(w->rd));
  }
  return NULL;
}

static int seed_base;

/* Calls per second of nthreads threads sharing rd. */
static double rate(rtdb *rd, const caller *c, int nthreads, int miss) {
  pthread_t th[2];
  run w[2];
  int n = miss ? MISSES : HITS;
  double t0 = rt_now();
  for (int i = 0; i < nthreads; i++) {
    w[i] = (run){rd, c, n / nthreads, seed_base++ * 2 + i, miss};
    pthread_create(&th[i], NULL, run_thread, &w[i]);
  }
  for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);
  return n / (rt_now() - t0);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* With an argument: build the database there and stop (for profiling). */
int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  snprintf(path, sizeof path, "/tmp/rooftune-bench-family-%d.db", (int)getpid());
  if (argc > 1) snprintf(path, sizeof path, "%s", argv[1]);
  unlink(path);
  double t0 = rt_now();
  build();
  if (argc > 1) return 0;
  printf("built %s: 3 targets x %d pinned workloads in %.1f s\n", path, NWORK, rt_now() - t0);
  for (int q = 0; q < NQ; q++)
    snprintf(queries[q], sizeof queries[q], "M=%d,N=%d,K=%d", q % 2 ? size_of(q, 0) : 100 + q * 13,
             size_of(q, 1), q % 2 ? size_of(q, 2) : 3000 - q * 5);
  rtdb *rd;
  if (rtdb_open(path, &rd)) die("open", path);
  for (int i = 0; i < NCALLERS; i++) {   /* each caller answers at its level */
    rtdb_result r;
    if (one(rd, &callers[i], queries[1], &r)) die(callers[i].what, rtdb_errmsg(rd));
    if (r.level != callers[i].level) {
      fprintf(stderr, "bench_rtdb_family: %s answered at level %d, expected %d\n", callers[i].what,
              (int)r.level, (int)callers[i].level);
      return 1;
    }
  }
  printf("%-20s %-8s %9s %9s %9s   %9s %9s %9s\n", "caller", "threads", "hits/s", "min", "max", "misses/s",
         "min", "max");
  for (int i = 0; i < NCALLERS; i++)
    for (int threads = 1; threads <= 2; threads++) {
      double hit[5], miss[5];
      for (int q = 0; q < NQ; q++) {   /* fill the memo with the hit queries */
        rtdb_result r;
        if (one(rd, &callers[i], queries[q], &r)) die(callers[i].what, rtdb_errmsg(rd));
      }
      for (int k = 0; k < 5; k++) hit[k] = rate(rd, &callers[i], threads, 0);
      for (int k = 0; k < 5; k++) miss[k] = rate(rd, &callers[i], threads, 1);
      qsort(hit, 5, sizeof *hit, cmp);
      qsort(miss, 5, sizeof *miss, cmp);
      printf("%-20s %-8d %8.2fM %8.2fM %8.2fM   %8.0f  %8.0f  %8.0f\n", callers[i].what, threads,
             hit[2] * 1e-6, hit[0] * 1e-6, hit[4] * 1e-6, miss[2], miss[0], miss[4]);
    }
  rtdb_close(rd);
  static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
  for (int i = 0; i < 4; i++) {
    char p[96];
    snprintf(p, sizeof p, "%s%s", path, sfx[i]);
    unlink(p);
  }
  return 0;
}
