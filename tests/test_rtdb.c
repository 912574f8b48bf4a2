/*
** test_rtdb.c -- the reader library (db/rtdb.h), the C-header export
** (db/db_header.h) and examples/codegen_gemm.c, on a database built through
** the writer API (pins, current pins and tags inserted with SQL). Nearest
** answers are checked against a brute-force distance computed here; the
** exported header is compiled with cc and must answer as rtdb_lookup does;
** missing, foreign, truncated, corrupted and newer files must give an
** error code or an answer, never a crash, and rtdb_open_msg says why; a
** handle writes nothing.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/db.h"
#include "db/db_header.h"
#include "db/rtdb.h"
#include "tk_run.h"
#include "tk_db.h"

static char dir[64], dbpath[96];

/* The pinned gemm workloads: every (M, N, K) of SIZES^3 on target "host"
** (fingerprint fpA; a newer fpB row has no pins and must not be chosen). */
static const int SIZES[] = {256, 512, 1024, 2048};
#define NS 4
#define NW (NS * NS * NS)
static char wkey[NW][128];
static int wm[NW], wn[NW], wk[NW];
static char wconfig[NW][128];
static double wtime[NW];
static const char DEFAULT_CFG[] = "{\"kc\":256,\"loop_order\":\"ijk\",\"mc\":384,\"nc\":768}";
static const char *const TAGGED_KEY = "gemm f32 M=1024 N=1024 K=1024 threads_max=2 vector_regs=32";

/* One workload of kernel kid with three trials; the fastest is pinned
** (version 1, current) on target tid. */
static void add_pinned(db *d, sqlite3 *h, int64_t tid, int64_t kid, int64_t sid, const char *key,
                       const char *sizes, const char *config, double t) {
  rt_err err = {0};
  int64_t wid, cid, trial = 0;
  ok(db_workload_id(d, kid, key, sizes, "f32", "", &wid, &err), &err);
  db_campaign c = {tid, wid, sid, "random", "{}", 1, 3, "measured", "cc", "-O2", "done"};
  ok(db_campaign_new(d, &c, &cid, &err), &err);
  for (int i = 0; i < 3; i++) {
    db_trial tr;
    db_trial_init(&tr);
    char cfg[160];
    snprintf(cfg, sizeof cfg, "{\"trial\":%d}", i);
    tr.campaign_id = cid;
    tr.config_json = i == 1 ? config : cfg;
    tr.status = "ok";
    tr.time_s = i == 1 ? t : t * (2 + i);
    int64_t id;
    ok(db_trial_add(d, &tr, &id, &err), &err);
    if (i == 1) trial = id;
  }
  sql(h, "INSERT INTO pins(target_id, workload_id, version, trial_id, config, pinned_by, reason)"
         " VALUES(%lld, %lld, 1, %lld, %Q, 'test', 'best')", (long long)tid, (long long)wid,
      (long long)trial, config);
  sql(h, "INSERT INTO pin_current VALUES(%lld, %lld, last_insert_rowid())", (long long)tid,
      (long long)wid);
}

static void build_db(void) {
  rt_err err = {0};
  db *d = db_open(dbpath, DB_CREATE, &err);
  if (!d) fail_msg("%s", err.msg);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(dbpath, &h), SQLITE_OK);
  sqlite3_busy_timeout(h, 5000);
  int64_t ta, tb, tother, kid, kconv, knone, ktr, sid;
  ok(db_target_id(d, "host", "fpA", "{}", &ta, &err), &err);
  ok(db_target_id(d, "host", "fpB", "{}", &tb, &err), &err);
  ok(db_target_id(d, "other", "fpC", "{}", &tother, &err), &err);
  ok(db_kernel_id(d, "gemm", "1", &kid, &err), &err);
  ok(db_kernel_set_default(d, kid, DEFAULT_CFG, &err), &err);
  ok(db_kernel_id(d, "conv2d", "1", &kconv, &err), &err);
  ok(db_kernel_set_default(d, kconv, "{\"tile\":8}", &err), &err);
  ok(db_kernel_id(d, "nodefault", "1", &knone, &err), &err);
  ok(db_kernel_id(d, "transpose", "1", &ktr, &err), &err);
  ok(db_space_id(d, "{\"test\":1}", &sid, &err), &err);
  for (int i = 0; i < NW; i++) {
    wm[i] = SIZES[i / (NS * NS)], wn[i] = SIZES[i / NS % NS], wk[i] = SIZES[i % NS];
    snprintf(wkey[i], sizeof wkey[i], "gemm f32 M=%d N=%d K=%d threads_max=2 vector_regs=32",
             wm[i], wn[i], wk[i]);
    char sizes[160];
    snprintf(sizes, sizeof sizes, "{\"M\":%d,\"N\":%d,\"K\":%d,\"threads_max\":2,\"vector_regs\":32}",
             wm[i], wn[i], wk[i]);
    snprintf(wconfig[i], sizeof wconfig[i], "{\"kc\":%d,\"loop_order\":\"kij\",\"mc\":%d,\"nc\":%d}",
             64 + i, 24 * (1 + i % 5), 192 * (1 + i % 3));
    wtime[i] = 1e-3 * (1 + i);
    add_pinned(d, h, ta, kid, sid, wkey[i], sizes, wconfig[i], wtime[i]);
  }
  /* transpose: a string variable distinguishes two layouts */
  static const struct { int m; const char *layout, *config; } tr[] = {
    {128, "nchw", "{\"t\":1}"}, {1024, "nchw", "{\"t\":2}"}, {128, "nhwc", "{\"t\":3}"}};
  for (size_t i = 0; i < sizeof tr / sizeof *tr; i++) {
    char key[96], sizes[96];
    snprintf(key, sizeof key, "transpose f32 M=%d layout='%s'", tr[i].m, tr[i].layout);
    snprintf(sizes, sizeof sizes, "{\"M\":%d,\"layout\":\"%s\"}", tr[i].m, tr[i].layout);
    add_pinned(d, h, ta, ktr, sid, key, sizes, tr[i].config, 1);
  }
  /* release v1 holds every current pin; then 1024^3 gets version 2 */
  sql(h, "INSERT INTO tags(name, note) VALUES('v1', 'first release');"
         "INSERT INTO tag_pins SELECT t.id, c.pin_id FROM tags t, pin_current c WHERE t.name = 'v1';"
         "INSERT INTO pins(target_id, workload_id, version, trial_id, config, pinned_by, reason)"
         " SELECT target_id, workload_id, 2, NULL, '{\"kc\":1,\"v\":2}', 'test', 'newer'"
         " FROM pins p JOIN workloads w ON w.id = p.workload_id WHERE w.key = %Q;"
         "UPDATE pin_current SET pin_id = last_insert_rowid() WHERE workload_id ="
         " (SELECT id FROM workloads WHERE key = %Q)", TAGGED_KEY, TAGGED_KEY);
  sqlite3_close(h);
  db_close(d);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/rooftune-test-rtdb-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  snprintf(dbpath, sizeof dbpath, "%s/t.db", dir);
  build_db();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tk_rm_rf(dir);
}

static rtdb *open_ok(void) {
  rtdb *rd;
  int rc = rtdb_open(dbpath, &rd);
  if (rc) fail_msg("rtdb_open: %s", rtdb_errstr(rc));
  return rd;
}

static int index_of(const char *key) {
  for (int i = 0; i < NW; i++)
    if (!strcmp(wkey[i], key)) return i;
  return -1;
}

/* ---- Exact, nearest, default, not found ---- */

static void test_exact(void **state) {
  (void)state;
  rtdb *rd = open_ok();
  rtdb_result r;
  for (int i = 0; i < NW; i += 7) {
    char vars[96];
    snprintf(vars, sizeof vars, "M=%d,N=%d,K=%d", wm[i], wn[i], wk[i]);
    assert_int_equal(rtdb_lookup(rd, "host", "gemm", vars, NULL, &r), RTDB_OK);
    assert_int_equal(r.match, RTDB_EXACT);
    assert_string_equal(r.workload, wkey[i]);
    if (strcmp(wkey[i], TAGGED_KEY)) {
      assert_string_equal(r.config, wconfig[i]);
      assert_int_equal(r.pin_version, 1);
      assert_true(r.time_s == wtime[i]);
    }
  }
  /* the shared variables may be given too, in any order, quoted or not */
  assert_int_equal(rtdb_lookup(rd, "host", "gemm", "K=512 M=256,N=2048.0,threads_max=2,dtype='f32'",
                               NULL, &r), RTDB_OK);
  assert_int_equal(r.match, RTDB_EXACT);
  assert_string_equal(r.workload, "gemm f32 M=256 N=2048 K=512 threads_max=2 vector_regs=32");
  /* the string variable must be equal; M nearest within the layout */
  assert_int_equal(rtdb_lookup(rd, "host", "transpose", "M=1000,layout=nchw", NULL, &r), RTDB_OK);
  assert_int_equal(r.match, RTDB_NEAREST);
  assert_string_equal(r.config, "{\"t\":2}");
  assert_int_equal(rtdb_lookup(rd, "host", "transpose", "M=1000,layout='nhwc'", NULL, &r), RTDB_OK);
  assert_string_equal(r.config, "{\"t\":3}");
  assert_int_equal(rtdb_lookup(rd, "host", "transpose", "M=1000,layout=nhcw", NULL, &r), RTDB_NOTFOUND);
  rtdb_close(rd);
}

/* Brute force: the smallest log2-Euclidean distance and the smallest key
** within 1e-9 of it. */
static int brute_nearest(double m, double n, double k, double *best) {
  double d[NW];
  *best = INFINITY;
  for (int i = 0; i < NW; i++) {
    double a = log2(m / wm[i]), b = log2(n / wn[i]), c = log2(k / wk[i]);
    d[i] = sqrt(a * a + b * b + c * c);
    if (d[i] < *best) *best = d[i];
  }
  int pick = -1;
  for (int i = 0; i < NW; i++)
    if (d[i] <= *best + 1e-9 && (pick < 0 || strcmp(wkey[i], wkey[pick]) < 0)) pick = i;
  return pick;
}

static void test_nearest_brute_force(void **state) {
  (void)state;
  rtdb *rd = open_ok();
  srand(7);
  for (int q = 0; q < 500; q++) {
    int m = 100 + rand() % 4000, n = 100 + rand() % 4000, k = q % 50 ? 100 + rand() % 4000 : 512;
    char vars[96];
    snprintf(vars, sizeof vars, "M=%d,N=%d,K=%d", m, n, k);
    rtdb_result r;
    assert_int_equal(rtdb_lookup(rd, "host", "gemm", vars, NULL, &r), RTDB_OK);
    double best;
    int want = brute_nearest(m, n, k, &best);
    assert_true(fabs(r.distance - best) < 1e-9);
    assert_string_equal(r.workload, wkey[want]);
    assert_int_equal(r.match, best == 0 ? RTDB_EXACT : RTDB_NEAREST);
  }
  rtdb_close(rd);
}

static void test_default_and_notfound(void **state) {
  (void)state;
  rtdb *rd = open_ok();
  rtdb_result r;
  assert_int_equal(rtdb_lookup(rd, "host", "conv2d", "N=1,H=56", NULL, &r), RTDB_OK);
  assert_int_equal(r.match, RTDB_DEFAULT);
  assert_string_equal(r.config, "{\"tile\":8}");
  assert_string_equal(r.workload, "");
  assert_int_equal(r.pin_version, 0);
  /* nothing pinned on this target; an unknown target; a size 0 or an
  ** infinite one that no pin is comparable with: the template default
  ** (M=inf was the nearest at distance inf, and NaN from a stored inf:
  ** fuzz/regress/lookup/inf-size) */
  for (int i = 0; i < 4; i++) {
    static const char *const t[] = {"other", "nosuchtarget", "host", "host"};
    static const char *const v[] = {"M=1,N=1,K=1", "M=1,N=1,K=1", "M=0,N=1,K=1", "M=inf,N=1024,K=1024"};
    assert_int_equal(rtdb_lookup(rd, t[i], "gemm", v[i], NULL, &r), RTDB_OK);
    assert_int_equal(r.match, RTDB_DEFAULT);
    assert_string_equal(r.config, DEFAULT_CFG);
  }
  assert_int_equal(rtdb_lookup(rd, "host", "nodefault", "M=1", NULL, &r), RTDB_NOTFOUND);
  assert_int_equal(rtdb_lookup(rd, "host", "nosuchkernel", "M=1", NULL, &r), RTDB_NOTFOUND);
  assert_int_equal(rtdb_lookup(rd, "host", "gemm", "M=1,N=1,K=1", "nosuchtag", &r), RTDB_NOTFOUND);
  assert_non_null(strstr(rtdb_errmsg(rd), "nosuchtag"));
  rtdb_close(rd);
}

static void test_tag_reproducible(void **state) {
  (void)state;
  rtdb *rd = open_ok();
  rtdb_result r;
  int i = index_of(TAGGED_KEY);
  assert_int_equal(rtdb_lookup(rd, "host", "gemm", "M=1024,N=1024,K=1024", NULL, &r), RTDB_OK);
  assert_int_equal(r.pin_version, 2);
  assert_string_equal(r.config, "{\"kc\":1,\"v\":2}");
  assert_true(r.time_s < 0);   /* no trial behind version 2 */
  assert_int_equal(rtdb_lookup(rd, "host", "gemm", "M=1024,N=1024,K=1024", "v1", &r), RTDB_OK);
  assert_int_equal(r.match, RTDB_EXACT);
  assert_int_equal(r.pin_version, 1);
  assert_string_equal(r.config, wconfig[i]);
  assert_true(r.time_s == wtime[i]);
  rtdb_close(rd);
}

/* ---- Errors ---- */

static void copy_file(const char *from, const char *to, long len) {
  FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
  assert_non_null(f);
  assert_non_null(g);
  int c;
  for (long n = 0; (len < 0 || n < len) && (c = getc(f)) != EOF; n++) putc(c, g);
  fclose(f);
  fclose(g);
}

static long file_size(const char *p) {
  struct stat st;
  return stat(p, &st) ? -1 : (long)st.st_size;
}

static void remove_db(const char *p) {
  static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
  char q[160];
  for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
    snprintf(q, sizeof q, "%s%s", p, sfx[i]);
    unlink(q);
  }
}

/* Open and look a few things up: any code, never a crash. */
static int poke(const char *path) {
  rtdb *rd;
  int rc = rtdb_open(path, &rd);
  if (rc) {
    assert_null(rd);
    assert_true(rc > RTDB_OK && rc <= RTDB_READONLY);
    return rc;
  }
  static const char *const q[][3] = {{"gemm", "M=1024,N=1024,K=1024", NULL},
                                     {"gemm", "M=300,N=3000,K=30", NULL},
                                     {"gemm", "M=1024,N=1024,K=1024", "v1"},
                                     {"conv2d", "N=1", NULL},
                                     {"transpose", "M=5,layout=nchw", NULL}};
  for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
    rtdb_result r;
    int lr = rtdb_lookup(rd, "host", q[i][0], q[i][1], q[i][2], &r);
    assert_true(lr >= RTDB_OK && lr <= RTDB_READONLY);
    if (lr == RTDB_OK) {
      assert_true(r.match >= RTDB_EXACT && r.match <= RTDB_DEFAULT);
      assert_true(memchr(r.config, 0, sizeof r.config) && memchr(r.workload, 0, sizeof r.workload));
    }
  }
  rtdb_close(rd);
  return RTDB_OK;
}

static void test_bad_files(void **state) {
  (void)state;
  char p[160];
  rtdb *rd = (rtdb *)1;
  snprintf(p, sizeof p, "%s/missing.db", dir);
  assert_int_equal(rtdb_open(p, &rd), RTDB_CANTOPEN);
  assert_null(rd);
  snprintf(p, sizeof p, "%s/text.db", dir);
  FILE *f = fopen(p, "w");
  for (int i = 0; i < 200; i++) fprintf(f, "this is not a database, line %d\n", i);
  fclose(f);
  assert_int_equal(rtdb_open(p, &rd), RTDB_NOTADB);
  /* an SQLite file that rooftune did not make: version 0, then tables missing */
  snprintf(p, sizeof p, "%s/foreign.db", dir);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(p, &h), SQLITE_OK);
  sql(h, "CREATE TABLE x(a)");
  assert_int_equal(rtdb_open(p, &rd), RTDB_NOTADB);
  sql(h, "PRAGMA user_version = 2");
  assert_int_equal(rtdb_open(p, &rd), RTDB_NOTADB);
  sqlite3_close(h);
  /* a newer schema */
  snprintf(p, sizeof p, "%s/v99.db", dir);
  copy_file(dbpath, p, -1);
  assert_int_equal(sqlite3_open(p, &h), SQLITE_OK);
  sql(h, "PRAGMA user_version = 99");
  sqlite3_close(h);
  assert_int_equal(rtdb_open(p, &rd), RTDB_SCHEMA);
  assert_null(rd);
  remove_db(p);
}

/* rtdb_open_msg says why, naming the file; a handle never writes: the
** file (left in rollback-journal mode by its writer) keeps its bytes and
** gets no -wal/-shm/-journal beside it. */
static void test_open_messages_and_nothing_written(void **state) {
  (void)state;
  char p[160], msg[1024];
  rtdb *rd = (rtdb *)1;
  snprintf(p, sizeof p, "%s/missing.db", dir);
  assert_int_equal(rtdb_open_msg(p, &rd, msg, sizeof msg), RTDB_CANTOPEN);
  assert_null(rd);
  assert_non_null(strstr(msg, p));
  assert_non_null(strstr(msg, "No such file or directory"));
  assert_int_equal(access(p, F_OK), -1);
  assert_int_equal(rtdb_open_msg(NULL, &rd, msg, sizeof msg), RTDB_MISUSE);
  assert_int_equal(rtdb_open_msg(p, &rd, NULL, 0), RTDB_CANTOPEN);   /* msg may be NULL */
  static const struct { const char *set; int code; const char *says; } odd[] = {
    {"PRAGMA user_version = -1", RTDB_NOTADB, "not a rooftune database (user_version -1)"},
    {"PRAGMA user_version = 0", RTDB_NOTADB, "not a rooftune database (user_version 0"},
    {"PRAGMA user_version = 1", RTDB_SCHEMA, "schema version 1; this library reads 2 to"},
    {"PRAGMA user_version = 2147483647", RTDB_SCHEMA, "schema version 2147483647; this library reads"},
  };
  snprintf(p, sizeof p, "%s/odd.db", dir);
  for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
    remove_db(p);
    copy_file(dbpath, p, -1);
    sqlite3 *h;
    assert_int_equal(sqlite3_open(p, &h), SQLITE_OK);
    sql(h, "%s", odd[i].set);
    sqlite3_close(h);
    assert_int_equal(rtdb_open_msg(p, &rd, msg, sizeof msg), odd[i].code);
    if (!strstr(msg, odd[i].says) || !strstr(msg, p)) fail_msg("%s: '%s'", odd[i].set, msg);
  }
  remove_db(p);
  FILE *f = fopen(p, "w");   /* an empty file */
  fclose(f);
  assert_int_equal(rtdb_open_msg(p, &rd, msg, sizeof msg), RTDB_NOTADB);
  assert_int_equal(file_size(p), 0);
  remove_db(p);
  assert_string_equal(rtdb_errstr(RTDB_READONLY),
                      "SQLite must write beside the file to read it, and cannot here (see rtdb_open)");
  /* nothing written */
  struct stat before, after;
  assert_int_equal(stat(dbpath, &before), 0);
  char side[160];
  snprintf(side, sizeof side, "%s-wal", dbpath);
  assert_int_equal(access(side, F_OK), -1);
  rd = open_ok();
  rtdb_result r;
  assert_int_equal(rtdb_lookup(rd, "host", "gemm", "M=1024,N=1024,K=1024", "v1", &r), RTDB_OK);
  assert_int_equal(rtdb_lookup(rd, "host", "gemm", "M=300,N=3000,K=30", NULL, &r), RTDB_OK);
  rtdb_close(rd);
  assert_int_equal(stat(dbpath, &after), 0);
  assert_int_equal(after.st_size, before.st_size);
  assert_true(after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
  static const char *const sfx[] = {"-wal", "-shm", "-journal"};
  for (int i = 0; i < 3; i++) {
    snprintf(side, sizeof side, "%s%s", dbpath, sfx[i]);
    assert_int_equal(access(side, F_OK), -1);
  }
}

static void test_truncated_and_corrupt(void **state) {
  (void)state;
  char p[160];
  snprintf(p, sizeof p, "%s/broken.db", dir);
  long size = file_size(dbpath);
  assert_true(size > 8192);
  const long cuts[] = {0, 1, 50, 100, 512, 4095, 4096, 4097, 8192, size / 3, size / 2, size - 4096, size - 1};
  int errors = 0;
  for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
    remove_db(p);
    copy_file(dbpath, p, cuts[i]);
    errors += poke(p) != RTDB_OK;
  }
  assert_true(errors >= 5);   /* at least the cuts inside the first page fail */
  unsigned seed = 12345;
  int answered = 0;
  for (int v = 0; v < 200; v++) {
    remove_db(p);
    copy_file(dbpath, p, -1);
    FILE *f = fopen(p, "r+b");
    int flips = 1 + v % 8;
    for (int k = 0; k < flips; k++) {
      seed = seed * 1103515245u + 12345u;
      long off = (long)((seed >> 4) % (unsigned)size);
      if (v % 4 == 0) off %= 4096;        /* a quarter hit the schema page */
      fseek(f, off, SEEK_SET);
      int c = getc(f);
      fseek(f, off, SEEK_SET);
      putc(c ^ (int)(1u + (seed >> 20) % 255u), f);
    }
    fclose(f);
    answered += poke(p) == RTDB_OK;
  }
  assert_true(answered > 0);   /* most flips hit pages a lookup never reads */
  remove_db(p);
}

static void test_misuse(void **state) {
  (void)state;
  rtdb *rd;
  rtdb_result r;
  assert_int_equal(rtdb_close(NULL), RTDB_OK);
  assert_int_equal(rtdb_open(NULL, &rd), RTDB_MISUSE);
  assert_int_equal(rtdb_open(dbpath, NULL), RTDB_MISUSE);
  assert_int_equal(rtdb_lookup(NULL, "host", "gemm", "M=1", NULL, &r), RTDB_MISUSE);
  assert_string_equal(rtdb_errstr(RTDB_MISUSE), "bad arguments");
  rd = open_ok();
  assert_string_equal(rtdb_errmsg(rd), "");
  assert_int_equal(rtdb_lookup(rd, NULL, "gemm", "M=1", NULL, &r), RTDB_MISUSE);
  assert_int_equal(rtdb_lookup(rd, "host", NULL, "M=1", NULL, &r), RTDB_MISUSE);
  assert_int_equal(rtdb_lookup(rd, "host", "gemm", NULL, NULL, &r), RTDB_MISUSE);
  assert_int_equal(rtdb_lookup(rd, "host", "gemm", "M=1", NULL, NULL), RTDB_MISUSE);
  static const char *const bad[] = {"M=", "=3", "M=1,M=2", "M", "M=1;N=2", "M='x", "1M=2"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    assert_int_equal(rtdb_lookup(rd, "host", "gemm", bad[i], NULL, &r), RTDB_MISUSE);
  /* K distinguishes the pinned workloads: leaving it out is an error (twice: memoised) */
  for (int i = 0; i < 2; i++) {
    assert_int_equal(rtdb_lookup(rd, "host", "gemm", "M=1024,N=1024", NULL, &r), RTDB_MISUSE);
    assert_non_null(strstr(rtdb_errmsg(rd), "'K'"));
  }
  rtdb_close(rd);
}

/* ---- Threads ---- */

#define NQ 64
static char queries[NQ][64];
static rtdb_result expect[NQ];
static int expect_rc[NQ];
typedef struct worker { rtdb *rd; int seed, bad; } worker;

static void *run_worker(void *arg) {
  worker *w = arg;
  for (int i = 0; i < 20000; i++) {
    int q = (i * 7 + w->seed) % NQ;
    rtdb_result r;
    int rc = rtdb_lookup(w->rd, "host", q % 9 ? "gemm" : "conv2d", queries[q], q % 5 ? NULL : "v1", &r);
    if (rc != expect_rc[q] ||
        (!rc && (r.match != expect[q].match || strcmp(r.config, expect[q].config) ||
                 strcmp(r.workload, expect[q].workload) || r.pin_version != expect[q].pin_version)))
      w->bad++;
  }
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  rtdb *single = open_ok(), *shared = open_ok();
  srand(11);
  for (int q = 0; q < NQ; q++) {
    snprintf(queries[q], sizeof queries[q], "M=%d,N=%d,K=%d", 1 + rand() % 3000, 1 + rand() % 3000,
             q % 4 ? 1 + rand() % 3000 : 1024);
    expect_rc[q] = rtdb_lookup(single, "host", q % 9 ? "gemm" : "conv2d", queries[q],
                               q % 5 ? NULL : "v1", &expect[q]);
    assert_int_equal(expect_rc[q], RTDB_OK);
  }
  pthread_t th[4];
  worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){shared, i * 13, 0};
    assert_int_equal(pthread_create(&th[i], NULL, run_worker, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(w[i].bad, 0);
  }
  rtdb_close(single);
  rtdb_close(shared);
}

/* ---- The exported header, compiled and run ---- */

/* Run the compiler's argument vector; the test fails with its output when it fails. */
static void compile(const char *const *argv) {
  char out[8192];
  int rc = tk_run(argv, &(tk_io){.out = out, .cap = sizeof out, .both = 1});
  if (rc) fail_msg("%s failed (%d):\n%s", argv[0], rc, out);
}

/* Export kernel's header, compile a program answering each query (lines of
** three numbers) with "match|workload|config|version", compare with
** rtdb_lookup. */
static void check_header(const char *kernel, const char *tag, const int (*q)[3], int nq) {
  rt_str h = {0};
  rt_err err = {0};
  if (db_export_header(dbpath, "host", kernel, tag, &h, &err)) fail_msg("%s", err.msg);
  char path[160], exe[160], qpath[160];
  snprintf(path, sizeof path, "%s/%s_tuned.h", dir, kernel);
  FILE *f = fopen(path, "w");
  fputs(h.s, f);
  fclose(f);
  free(h.s);
  snprintf(path, sizeof path, "%s/use_%s.c", dir, kernel);
  f = fopen(path, "w");
  fprintf(f, "#include <stdio.h>\n#include \"%s_tuned.h\"\n"
             "int main(void) {\n  double v[3];\n"
             "  while (scanf(\"%%lf %%lf %%lf\", &v[0], &v[1], &v[2]) == 3) {\n"
             "    %s_tuned_result r;\n"
             "    if (%s_tuned_lookup(v, &r)) { puts(\"none\"); continue; }\n"
             "    printf(\"%%d|%%s|%%s|%%d\\n\", r.match, r.workload, r.config, r.pin_version);\n"
             "  }\n  return 0;\n}\n", kernel, kernel, kernel);
  fclose(f);
  snprintf(exe, sizeof exe, "%s/use_%s", dir, kernel);
  compile((const char *[]){"cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", exe, path, "-lm", NULL});
  snprintf(qpath, sizeof qpath, "%s/q_%s.txt", dir, kernel);
  f = fopen(qpath, "w");
  for (int i = 0; i < nq; i++) fprintf(f, "%d %d %d\n", q[i][0], q[i][1], q[i][2]);
  fclose(f);
  static char answers[1 << 20];
  assert_int_equal(tk_run((const char *[]){exe, NULL},
                          &(tk_io){.in = qpath, .out = answers, .cap = sizeof answers}), 0);
  rtdb *rd = open_ok();
  int seen[4] = {0};
  char *save = NULL, *next = answers;
  for (int i = 0; i < nq; i++) {
    char want[8192], vars[96];
    const char *line = strtok_r(next, "\n", &save);
    next = NULL;
    assert_non_null(line);
    snprintf(vars, sizeof vars, "M=%d,N=%d,K=%d", q[i][0], q[i][1], q[i][2]);
    rtdb_result r;
    int rc = rtdb_lookup(rd, "host", kernel, !strcmp(kernel, "gemm") ? vars : "", tag, &r);
    if (rc) snprintf(want, sizeof want, "none");
    else snprintf(want, sizeof want, "%d|%s|%s|%d", r.match, r.workload, r.config, r.pin_version);
    assert_string_equal(line, want);
    seen[rc ? 0 : r.match]++;
  }
  rtdb_close(rd);
  if (!strcmp(kernel, "gemm")) assert_true(seen[RTDB_EXACT] && seen[RTDB_NEAREST] && seen[RTDB_DEFAULT]);
  else assert_int_equal(seen[RTDB_DEFAULT], nq);
}

static void test_exported_header(void **state) {
  (void)state;
  int q[40][3];
  srand(5);
  for (int i = 0; i < 40; i++) {
    int e = i % 4 == 0, w = (i * 11) % NW;
    q[i][0] = i == 39 ? 0 : e ? wm[w] : 1 + rand() % 4000;   /* M=0: no pin comparable */
    q[i][1] = e ? wn[w] : 1 + rand() % 4000;
    q[i][2] = e ? wk[w] : 1 + rand() % 4000;
  }
  q[1][0] = q[1][1] = q[1][2] = 1024;   /* the workload whose tagged version differs */
  check_header("gemm", NULL, (const int (*)[3])q, 40);
  check_header("gemm", "v1", (const int (*)[3])q, 40);
  check_header("conv2d", NULL, (const int (*)[3])q, 3);
  /* a variable that is not numeric cannot be a lookup variable */
  rt_str h = {0};
  rt_err err = {0};
  assert_int_equal(db_export_header(dbpath, "host", "transpose", NULL, &h, &err), -1);
  assert_non_null(strstr(err.msg, "layout"));
  free(h.s);
}

/* ---- examples/codegen_gemm.c ---- */

static void test_codegen_example(void **state) {
  (void)state;
  char exe[160], out[4096], missing[160];
  snprintf(exe, sizeof exe, "%s/codegen_gemm", dir);
  compile((const char *[]){"cc", "-std=c11", "-O1", "-Idb", "-o", exe, "examples/codegen_gemm.c", "db/rtdb.c",
                           "-lsqlite3", "-lpthread", "-lm", NULL});
  static const struct { const char *args[5], *want[3]; } runs[] = {
    {{"256", "512", "2048"}, {"exact match", "#define GEMM_MATCH \"exact\"", "#define GEMM_MC 72"}},
    {{"1024", "1024", "1024"}, {"exact match", "pin version 2", "#define GEMM_V 2"}},
    {{"1024", "1024", "1024", "--tag", "v1"}, {"exact match", "pin version 1", "#define GEMM_LOOP_ORDER \"kij\""}},
    {{"300", "3000", "30"}, {"nearest match", "M=256 N=2048 K=256", "#define GEMM_KC"}},
    {{"0", "1", "1"}, {"default match", "#define GEMM_MC 384", "#define GEMM_NC 768"}},
  };
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    const char *argv[10] = {exe, dbpath, "host"};
    for (int k = 0; k < 5 && runs[i].args[k]; k++) argv[3 + k] = runs[i].args[k];
    assert_int_equal(tk_run(argv, &(tk_io){.out = out, .cap = sizeof out}), 0);
    for (int k = 0; k < 3; k++)
      if (!strstr(out, runs[i].want[k])) fail_msg("%s: no '%s' in:\n%s", runs[i].args[0], runs[i].want[k], out);
  }
  snprintf(missing, sizeof missing, "%s/missing.db", dir);
  assert_int_not_equal(tk_run((const char *[]){exe, missing, "host", "1", "1", "1", NULL}, &(tk_io){.both = -1}), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_exact),
    cmocka_unit_test(test_nearest_brute_force),
    cmocka_unit_test(test_default_and_notfound),
    cmocka_unit_test(test_tag_reproducible),
    cmocka_unit_test(test_bad_files),
    cmocka_unit_test(test_open_messages_and_nothing_written),
    cmocka_unit_test(test_truncated_and_corrupt),
    cmocka_unit_test(test_misuse),
    cmocka_unit_test(test_threads),
    cmocka_unit_test(test_exported_header),
    cmocka_unit_test(test_codegen_example),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
