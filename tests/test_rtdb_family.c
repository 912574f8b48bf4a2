/*
** test_rtdb_family.c -- target families (schema 8) and the reader's
** fallback along them (db/rtdb.h: rtdb_lookup_on). A crafted database of
** host and CUDA targets whose descriptions give their chains through the
** backends' own family functions (the columns checked against values
** written out by hand), pins placed so that each level answers one hand
** case (exact and nearest on the caller's target, then the device model,
** the architecture, the backend, the default; never another backend),
** then random chains and workloads against a brute-force oracle written
** here from the order rtdb.h states. Release tags pin the whole answer
** (later pins and a changed default leave a tagged lookup as it was);
** a schema-7 file migrates with its families computed from the stored
** descriptions, and a schema-7 file is read at levels 1 and 5 only.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"
#include "db/rtdb.h"
#include "tk_exe.h"
#include "tk_run.h"
#include "tk_db.h"

static char dir[64], dbpath[96];

/* The targets, with the chain each description must give (by hand from
** targets/: host = model name, x86-64 + widest SIMD; cuda = device, sm_XY;
** an imported target's own name parses as no backend: all unknown). */
static const struct tgt {
  const char *name, *fp, *desc, *model, *arch, *backend;
} T[] = {
  {"host", "fpA", "{\"model\":\"Xeon A\",\"isa\":\"sse4_2 avx avx2 fma avx512f avx512bw\"}", "Xeon A",
   "x86-64 AVX-512", "host"},
  {"host", "fpB", "{\"model\":\"Xeon A\",\"isa\":\"sse4_2 avx avx2 fma avx512f avx512bw\"}", "Xeon A",
   "x86-64 AVX-512", "host"},
  {"host", "fpC", "{\"model\":\"Xeon C\",\"isa\":\"sse4_2 avx avx2 avx512f\"}", "Xeon C", "x86-64 AVX-512",
   "host"},
  {"host", "fpD", "{\"model\":\"EPYC D\",\"isa\":\"sse4_2 avx avx2 fma\"}", "EPYC D", "x86-64 AVX2", "host"},
  {"cuda:0", "fpH", "{\"device\":\"NVIDIA H100\",\"compute_capability\":\"9.0\",\"sms\":\"132\"}",
   "NVIDIA H100", "sm_90", "cuda"},
  {"cuda:1", "fpI", "{\"device\":\"NVIDIA H200\",\"compute_capability\":\"9.0\",\"sms\":\"132\"}",
   "NVIDIA H200", "sm_90", "cuda"},
  {"A100", "external", "{\"imported_from\":\"a100.json\"}", NULL, NULL, NULL},
};
#define NT ((int)(sizeof T / sizeof *T))
enum { A, B, C, D, H, I, X };

/* The pins: target, M, N, config. */
static const struct pin {
  int t, m, n;
  const char *config;
} P[] = {
  {A, 1024, 1024, "{\"c\":\"A1\"}"}, {B, 1024, 1024, "{\"c\":\"B1\"}"}, {B, 256, 256, "{\"c\":\"B2\"}"},
  {C, 4096, 1024, "{\"c\":\"C1\"}"}, {D, 256, 1024, "{\"c\":\"D1\"}"}, {H, 1024, 1024, "{\"c\":\"H1\"}"},
  {X, 1024, 1024, "{\"c\":\"X1\"}"}, {C, 64, 64, "{\"c\":\"C2\"}"},  {D, 8192, 64, "{\"c\":\"D2\"}"},
};
#define NP ((int)(sizeof P / sizeof *P))
static const char DEF[] = "{\"c\":\"default\"}", DEF2[] = "{\"c\":\"default2\"}";
static int64_t tid[NT];

static void key_of(int m, int n, char *key, size_t cap) { snprintf(key, cap, "gemm f32 M=%d N=%d", m, n); }

/* Pin config on target t for (m, n): a workload, a campaign, one trial. */
static void add_pin(db *d, sqlite3 *h, int64_t t, int64_t kid, int64_t sid, int m, int n, const char *config,
                    int version) {
  rt_err err = {0};
  char key[64], sizes[64];
  int64_t wid, cid, trial;
  key_of(m, n, key, sizeof key);
  snprintf(sizes, sizeof sizes, "{\"M\":%d,\"N\":%d}", m, n);
  ok(db_workload_id(d, kid, key, sizes, "f32", "", &wid, &err), &err);
  db_campaign c = {t, wid, sid, "random", "{}", 1, 1, "measured", "cc", "-O2", "done"};
  ok(db_campaign_new(d, &c, &cid, &err), &err);
  db_trial tr;
  db_trial_init(&tr);
  tr.campaign_id = cid;
  tr.config_json = config;
  tr.status = "ok";
  tr.time_s = 1e-3;
  ok(db_trial_add(d, &tr, &trial, &err), &err);
  sql(h, "INSERT INTO pins(target_id, workload_id, version, trial_id, config, pinned_by, reason)"
         " VALUES(%lld, %lld, %d, %lld, %Q, 'test', 'best')", (long long)t, (long long)wid, version,
      (long long)trial, config);
  sql(h, "INSERT OR REPLACE INTO pin_current VALUES(%lld, %lld, last_insert_rowid())", (long long)t,
      (long long)wid);
}

static int64_t kid_gemm, kid_nodef, sid;

static void build_db(void) {
  rt_err err = {0};
  db *d = db_open(dbpath, DB_CREATE, &err);
  if (!d) fail_msg("%s", err.msg);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(dbpath, &h), SQLITE_OK);
  sqlite3_busy_timeout(h, 5000);
  for (int i = 0; i < NT; i++) ok(db_target_id(d, T[i].name, T[i].fp, T[i].desc, &tid[i], &err), &err);
  ok(db_kernel_id(d, "gemm", "1", &kid_gemm, &err), &err);
  ok(db_kernel_set_default(d, kid_gemm, DEF, &err), &err);
  ok(db_kernel_id(d, "nodef", "1", &kid_nodef, &err), &err);
  ok(db_space_id(d, "{\"test\":1}", &sid, &err), &err);
  for (int i = 0; i < NP; i++) add_pin(d, h, tid[P[i].t], kid_gemm, sid, P[i].m, P[i].n, P[i].config, 1);
  sqlite3_close(h);
  db_close(d);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/rooftune-test-family-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  snprintf(dbpath, sizeof dbpath, "%s/t.db", dir);
  build_db();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tk_rm_rf(dir);
}

static rtdb *open_ok(const char *path) {
  rtdb *rd;
  int rc = rtdb_open(path, &rd);
  if (rc) fail_msg("rtdb_open: %s", rtdb_errstr(rc));
  return rd;
}

/* The chain columns of every target row against T[] (by hand). */
static void test_family_columns(void **state) {
  (void)state;
  sqlite3 *h;
  assert_int_equal(sqlite3_open_v2(dbpath, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  for (int i = 0; i < NT; i++) {
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(h, "SELECT model, arch, backend FROM targets WHERE id = ?1", -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, tid[i]);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    const char *want[] = {T[i].model, T[i].arch, T[i].backend};
    for (int c = 0; c < 3; c++) {
      const char *got = (const char *)sqlite3_column_text(st, c);
      if (!want[c]) assert_null(got);
      else assert_string_equal(got, want[c]);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
}

/* One lookup: its code, and on success the config, level, match and
** answering target's fingerprint ("" for the default). */
static void expect(rtdb *rd, const rtdb_target *on, const char *vars, const char *tag, const char *config,
                   int level, int match, const char *fp) {
  rtdb_result r;
  memset(&r, 0x5a, sizeof r);
  int rc = rtdb_lookup_on(rd, on, "gemm", vars, tag, &r);
  if (rc) fail_msg("%s: %s", vars, rtdb_errmsg(rd));
  assert_string_equal(r.config, config);
  assert_int_equal(r.level, level);
  assert_int_equal(r.match, match);
  assert_string_equal(r.fingerprint, fp);
  if (level == RTDB_LEVEL_DEFAULT) {
    assert_string_equal(r.target, "");
    assert_string_equal(r.workload, "");
  } else {
    int t = -1;
    for (int i = 0; i < NT; i++)
      if (!strcmp(T[i].fp, fp)) t = i;
    assert_true(t >= 0);
    assert_string_equal(r.target, T[t].name);
  }
}

/* Every level by a hand case. */
static void test_levels_by_hand(void **state) {
  (void)state;
  rtdb *rd = open_ok(dbpath);
  const char *avx512 = "x86-64 AVX-512";
  /* 1: exact, then nearest, on the caller's own target -- the nearest
  ** there wins over an exact pin of the same model (B has 256x256) */
  rtdb_target a = {.fingerprint = "fpA", .model = "Xeon A", .arch = avx512, .backend = "host"};
  expect(rd, &a, "M=1024,N=1024", NULL, "{\"c\":\"A1\"}", RTDB_LEVEL_TARGET, RTDB_EXACT, "fpA");
  expect(rd, &a, "M=256,N=256", NULL, "{\"c\":\"A1\"}", RTDB_LEVEL_TARGET, RTDB_NEAREST, "fpA");
  /* 2: a new machine of model Xeon A: B's exact pin */
  rtdb_target m = {.fingerprint = "fpNEW", .model = "Xeon A", .arch = avx512, .backend = "host"};
  expect(rd, &m, "M=256,N=256", NULL, "{\"c\":\"B2\"}", RTDB_LEVEL_MODEL, RTDB_EXACT, "fpB");
  /* ... and nearest among A's and B's: 1024x1024 on both, the more recent target (B) */
  expect(rd, &m, "M=2048,N=2048", NULL, "{\"c\":\"B1\"}", RTDB_LEVEL_MODEL, RTDB_NEAREST, "fpB");
  /* 3: an unknown model of the same architecture: A, B and C are all AVX-512 */
  rtdb_target ar = {.fingerprint = "fpNEW", .model = "Xeon Z", .arch = avx512, .backend = "host"};
  expect(rd, &ar, "M=4096,N=1024", NULL, "{\"c\":\"C1\"}", RTDB_LEVEL_ARCH, RTDB_EXACT, "fpC");
  expect(rd, &ar, "M=64,N=64", NULL, "{\"c\":\"C2\"}", RTDB_LEVEL_ARCH, RTDB_EXACT, "fpC");
  /* D (AVX2) is never reached by an AVX-512 chain before level 4 */
  expect(rd, &ar, "M=8192,N=64", NULL, "{\"c\":\"C1\"}", RTDB_LEVEL_ARCH, RTDB_NEAREST, "fpC");
  /* 4: only when asked; else the default */
  rtdb_target be = {.fingerprint = "fpNEW", .model = "Xeon Z", .arch = "x86-64 SSE4.2", .backend = "host"};
  expect(rd, &be, "M=8192,N=64", NULL, DEF, RTDB_LEVEL_DEFAULT, RTDB_DEFAULT, "");
  be.max_level = RTDB_LEVEL_BACKEND;
  expect(rd, &be, "M=8192,N=64", NULL, "{\"c\":\"D2\"}", RTDB_LEVEL_BACKEND, RTDB_EXACT, "fpD");
  /* max_level 1: the caller's own target only */
  m.max_level = RTDB_LEVEL_TARGET;
  expect(rd, &m, "M=256,N=256", NULL, DEF, RTDB_LEVEL_DEFAULT, RTDB_DEFAULT, "");
  /* never another backend: a CUDA H200 (no pins of its own model) gets
  ** the H100's sm_90 pin, never a host pin of the same workload */
  rtdb_target g = {.fingerprint = "fpNEW", .model = "NVIDIA H200", .arch = "sm_90", .backend = "cuda",
                   .max_level = RTDB_LEVEL_BACKEND};
  expect(rd, &g, "M=256,N=256", NULL, "{\"c\":\"H1\"}", RTDB_LEVEL_ARCH, RTDB_NEAREST, "fpH");
  rtdb_target other = {.fingerprint = "fpNEW", .model = "Xeon A", .arch = avx512, .backend = "opencl",
                       .max_level = RTDB_LEVEL_BACKEND};
  expect(rd, &other, "M=256,N=256", NULL, DEF, RTDB_LEVEL_DEFAULT, RTDB_DEFAULT, "");
  /* unknown parts are skipped: a model without a backend is no level */
  rtdb_target nob = {.fingerprint = "fpNEW", .model = "Xeon A"};
  expect(rd, &nob, "M=256,N=256", NULL, DEF, RTDB_LEVEL_DEFAULT, RTDB_DEFAULT, "");
  /* by name: the named row's chain (cuda:1 is the H200) */
  rtdb_result r;
  assert_int_equal(rtdb_lookup(rd, "cuda:1", "gemm", "M=1024,N=1024", NULL, &r), RTDB_OK);
  assert_string_equal(r.config, "{\"c\":\"H1\"}");
  assert_int_equal(r.level, RTDB_LEVEL_ARCH);
  assert_string_equal(r.target, "cuda:0");
  /* "host" is its most recent row with pins (D); its own nearest first */
  assert_int_equal(rtdb_lookup(rd, "host", "gemm", "M=1024,N=1024", NULL, &r), RTDB_OK);
  assert_string_equal(r.config, "{\"c\":\"D1\"}");
  assert_int_equal(r.level, RTDB_LEVEL_TARGET);
  assert_int_equal(r.match, RTDB_NEAREST);
  /* an imported target answers for its own name only */
  assert_int_equal(rtdb_lookup(rd, "A100", "gemm", "M=512,N=512", NULL, &r), RTDB_OK);
  assert_string_equal(r.config, "{\"c\":\"X1\"}");
  assert_int_equal(r.level, RTDB_LEVEL_TARGET);
  /* a name with a fingerprint it was never stored with: no row, no chain */
  rtdb_target wrong = {.name = "cuda:0", .fingerprint = "fpA"};
  expect(rd, &wrong, "M=1024,N=1024", NULL, DEF, RTDB_LEVEL_DEFAULT, RTDB_DEFAULT, "");
  /* another device under a stored name (cuda:0 is an H100, the caller an
  ** H200 of unknown fingerprint): the row gives the backend only, so the
  ** H100's pin answers at the architecture, not as the caller's target */
  rtdb_target other_dev = {.name = "cuda:0", .model = "NVIDIA H200", .arch = "sm_90"};
  expect(rd, &other_dev, "M=1024,N=1024", NULL, "{\"c\":\"H1\"}", RTDB_LEVEL_ARCH, RTDB_EXACT, "fpH");
  rtdb_target same_dev = {.name = "cuda:0", .model = "NVIDIA H100"};
  expect(rd, &same_dev, "M=1024,N=1024", NULL, "{\"c\":\"H1\"}", RTDB_LEVEL_TARGET, RTDB_EXACT, "fpH");
  /* the name's row fills only what the caller left NULL */
  rtdb_target named = {.name = "cuda:1", .arch = ""};
  expect(rd, &named, "M=1024,N=1024", NULL, DEF, RTDB_LEVEL_DEFAULT, RTDB_DEFAULT, "");
  /* misuse */
  rtdb_target bad = {.backend = "host", .max_level = 5};
  assert_int_equal(rtdb_lookup_on(rd, &bad, "gemm", "M=1", NULL, &r), RTDB_MISUSE);
  assert_int_equal(rtdb_lookup_on(rd, NULL, "gemm", "M=1", NULL, &r), RTDB_MISUSE);
  assert_int_equal(rtdb_lookup_on(rd, &a, "nosuch", "M=1", NULL, &r), RTDB_NOTFOUND);
  rtdb_close(rd);
}

/* ---- the oracle: rtdb.h's order, written out naively ---- */

static int eq(const char *a, const char *b) { return a && b && *a && *b && !strcmp(a, b); }

static int level_of(const struct tgt *t, const rtdb_target *on) {
  if (eq(t->fp, on->fingerprint) && (!on->name || !strcmp(t->name, on->name))) return 1;
  if (eq(t->backend, on->backend) && eq(t->model, on->model)) return 2;
  if (eq(t->backend, on->backend) && eq(t->arch, on->arch)) return 3;
  if (eq(t->backend, on->backend)) return 4;
  return 9;
}

/* The pin the order chooses (index into P), or -1 for the default. */
static int oracle(const rtdb_target *on, int m, int n, int *level) {
  int max = on->max_level ? on->max_level : 3;
  for (int L = 1; L <= max; L++) {
    int best = -1;
    double bd = 0;
    char bkey[64] = "";
    for (int i = 0; i < NP; i++) {
      if (level_of(&T[P[i].t], on) != L) continue;
      double d = sqrt(pow(log2(m) - log2(P[i].m), 2) + pow(log2(n) - log2(P[i].n), 2));
      char key[64];
      key_of(P[i].m, P[i].n, key, sizeof key);
      int c = best < 0 ? -1 : strcmp(key, bkey);
      if (best < 0 || d < bd || (d == bd && (c < 0 || (c == 0 && tid[P[i].t] > tid[P[best].t])))) {
        best = i, bd = d;
        strcpy(bkey, key);
      }
    }
    if (best >= 0) {
      *level = L;
      return best;
    }
  }
  *level = 5;
  return -1;
}

/* Random chains (each part one of the stored values, an unknown one, ""
** or NULL) and workloads against the oracle; twice, the second time from
** the memo. */
static void test_random_against_oracle(void **state) {
  (void)state;
  rtdb *rd = open_ok(dbpath);
  static const char *const fps[] = {"fpA", "fpB", "fpC", "fpD", "fpH", "fpI", "fpZ", ""};
  static const char *const models[] = {"Xeon A", "Xeon C", "EPYC D", "NVIDIA H100", "NVIDIA H200", "Other", ""};
  static const char *const archs[] = {"x86-64 AVX-512", "x86-64 AVX2", "sm_90", "sm_80", ""};
  static const char *const backends[] = {"host", "cuda", "opencl", ""};
  static const int sizes[] = {64, 256, 512, 1024, 4096, 8192};
  unsigned seed = 20261202;
  int levels[6] = {0};
  for (int pass = 0; pass < 2; pass++) {
    srand(seed);
    for (int q = 0; q < 1500; q++) {
      rtdb_target on = {
        .fingerprint = fps[rand() % 8], .model = models[rand() % 7], .arch = archs[rand() % 5],
        .backend = backends[rand() % 4], .max_level = rand() % 5,
      };
      int m = sizes[rand() % 6], n = sizes[rand() % 6], level;
      char vars[64];
      snprintf(vars, sizeof vars, "M=%d N=%d", m, n);
      int want = oracle(&on, m, n, &level);
      rtdb_result r;
      if (rtdb_lookup_on(rd, &on, "gemm", vars, NULL, &r)) fail_msg("%s: %s", vars, rtdb_errmsg(rd));
      if (strcmp(r.config, want < 0 ? DEF : P[want].config) || (int)r.level != level)
        fail_msg("query %d (%s on %s/%s/%s/%s max %d): got %s at level %d, oracle %s at level %d", q, vars,
                 on.fingerprint, on.model, on.arch, on.backend, on.max_level, r.config, r.level,
                 want < 0 ? DEF : P[want].config, level);
      if (want >= 0) assert_string_equal(r.fingerprint, T[P[want].t].fp);
      levels[level]++;
    }
  }
  for (int L = 1; L <= 5; L++) assert_true(levels[L] > 0);   /* every level was exercised */
  rtdb_close(rd);
}

/* Copy a closed database (rollback-journal mode: one file). */
static void copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  assert_non_null(in);
  assert_non_null(out);
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, in)) > 0) assert_int_equal(fwrite(buf, 1, n, out), n);
  fclose(in);
  assert_int_equal(fclose(out), 0);
}

/* A tag pins the whole answer: later pins, a changed default and a
** default given later leave tagged lookups as they were; a tag made
** before schema 8 (no recorded defaults) keeps today's default. */
static void test_tag_pins_whole_answer(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/tag.db", dir);
  copy_file(dbpath, path);
  rt_err err = {0};
  db *d = db_open(path, DB_WRITE, &err);
  if (!d) fail_msg("%s", err.msg);
  int npins;
  ok(db_tag(d, "v1", "release", &npins, &err), &err);
  assert_int_equal(npins, NP);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  sqlite3_busy_timeout(h, 5000);
  sql(h, "INSERT INTO tags(name, note) VALUES('old', 'as before schema 8');"
         "INSERT INTO tag_pins SELECT t.id, c.pin_id FROM tags t, pin_current c WHERE t.name = 'old'");
  /* after the tags: a new pin on A, a new version on C, new defaults */
  add_pin(d, h, tid[A], kid_gemm, sid, 256, 256, "{\"c\":\"A2\"}", 1);
  add_pin(d, h, tid[C], kid_gemm, sid, 4096, 1024, "{\"c\":\"C1v2\"}", 2);
  ok(db_kernel_set_default(d, kid_gemm, DEF2, &err), &err);
  ok(db_kernel_set_default(d, kid_nodef, "{\"late\":1}", &err), &err);
  sqlite3_close(h);
  db_close(d);
  rtdb *rd = open_ok(path);
  rtdb_target a = {.fingerprint = "fpA", .model = "Xeon A", .arch = "x86-64 AVX-512", .backend = "host"};
  rtdb_target ar = {.fingerprint = "fpNEW", .model = "Xeon Z", .arch = "x86-64 AVX-512", .backend = "host"};
  rtdb_target none = {.fingerprint = "fpNEW"};
  expect(rd, &a, "M=256,N=256", NULL, "{\"c\":\"A2\"}", RTDB_LEVEL_TARGET, RTDB_EXACT, "fpA");
  expect(rd, &a, "M=256,N=256", "v1", "{\"c\":\"A1\"}", RTDB_LEVEL_TARGET, RTDB_NEAREST, "fpA");
  expect(rd, &ar, "M=4096,N=1024", NULL, "{\"c\":\"C1v2\"}", RTDB_LEVEL_ARCH, RTDB_EXACT, "fpC");
  expect(rd, &ar, "M=4096,N=1024", "v1", "{\"c\":\"C1\"}", RTDB_LEVEL_ARCH, RTDB_EXACT, "fpC");
  expect(rd, &none, "M=256,N=256", NULL, DEF2, RTDB_LEVEL_DEFAULT, RTDB_DEFAULT, "");
  expect(rd, &none, "M=256,N=256", "v1", DEF, RTDB_LEVEL_DEFAULT, RTDB_DEFAULT, "");
  expect(rd, &none, "M=256,N=256", "old", DEF2, RTDB_LEVEL_DEFAULT, RTDB_DEFAULT, "");
  rtdb_result r;
  assert_int_equal(rtdb_lookup_on(rd, &none, "nodef", "M=1", NULL, &r), RTDB_OK);
  assert_string_equal(r.config, "{\"late\":1}");
  assert_int_equal(rtdb_lookup_on(rd, &none, "nodef", "M=1", "v1", &r), RTDB_NOTFOUND);
  assert_non_null(strstr(rtdb_errmsg(rd), "the tag recorded no template default"));
  assert_int_equal(rtdb_lookup_on(rd, &none, "nodef", "M=1", "old", &r), RTDB_OK);
  rtdb_close(rd);
}

/* A schema-7 file: read at levels 1 and 5 only; migrated, its targets
** get the chains their stored descriptions give (by hand), an imported
** target and an undescribed one none. */
static void test_migration_and_old_files(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/v7.db", dir);
  rt_err err = {0};
  ok(db__make_version(path, 7, &err), &err);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  sql(h, "INSERT INTO targets(id, name, fingerprint, description) VALUES"
         "(1, 'host', 'fpA', '{\"model\":\"Xeon A\",\"isa\":\"sse4_2 avx avx2\"}'),"
         "(2, 'cuda:0', 'fpH', '{\"device\":\"NVIDIA H100 80GB HBM3\",\"compute_capability\":\"9.0\"}'),"
         "(3, 'opencl:0.0', 'fpO', '{\"device\":\"pthread-x\",\"type\":\"cpu\",\"vendor\":\"GenuineIntel\","
         "\"platform\":\"Portable Computing Language\"}'),"
         "(4, 'A100', 'external', '{\"imported_from\":\"f.json\"}'),"
         "(5, 'host', 'fpB', '{\"model\":\"unknown\",\"isa\":\"\"}'),"
         "(6, 'host', 'fpE', '{}');"
         "INSERT INTO kernels(id, name, template_version, default_config) VALUES(1, 'gemm', '1', '{\"c\":\"d\"}');"
         "INSERT INTO workloads(id, kernel_id, key, sizes, dtype, layout, hash)"
         " VALUES(1, 1, 'gemm f32 M=1 N=1', '{\"M\":1,\"N\":1}', 'f32', '', 'h');"
         "INSERT INTO pins(id, target_id, workload_id, version, trial_id, config, pinned_by, reason)"
         " VALUES(1, 1, 1, 1, NULL, '{\"c\":\"old\"}', 't', 'r');"
         "INSERT INTO pin_current VALUES(1, 1, 1)");
  sqlite3_close(h);
  /* read as schema 7 */
  rtdb *rd = open_ok(path);
  rtdb_target a = {.fingerprint = "fpA"}, m = {.fingerprint = "fpN", .model = "Xeon A", .arch = "x86-64 AVX2",
                                                .backend = "host", .max_level = 4};
  expect(rd, &a, "M=2,N=2", NULL, "{\"c\":\"old\"}", RTDB_LEVEL_TARGET, RTDB_NEAREST, "fpA");
  expect(rd, &m, "M=1,N=1", NULL, "{\"c\":\"d\"}", RTDB_LEVEL_DEFAULT, RTDB_DEFAULT, "");
  rtdb_close(rd);
  /* migrate */
  db *d = db_open(path, DB_WRITE, &err);
  if (!d) fail_msg("%s", err.msg);
  assert_int_equal(db_user_version(d), DB_SCHEMA_VERSION);   /* migrated to the newest */
  rt_str report = {0};
  assert_int_equal(db_check(d, &report, &err), 0);
  free(report.s);
  db_close(d);
  static const char *const want[][3] = {
    {"Xeon A", "x86-64 AVX2", "host"},
    {"NVIDIA H100 80GB HBM3", "sm_90", "cuda"},
    {"pthread-x", "cpu GenuineIntel, Portable Computing Language", "opencl"},
    {NULL, NULL, NULL},
    {NULL, NULL, "host"},
    {NULL, NULL, "host"},
  };
  assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  for (int i = 0; i < 6; i++) {
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(h, "SELECT model, arch, backend FROM targets WHERE id = ?1", -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int(st, 1, i + 1);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    for (int c = 0; c < 3; c++) {
      const char *got = (const char *)sqlite3_column_text(st, c);
      if (!want[i][c]) {
        if (got) fail_msg("target %d column %d: '%s', expected NULL", i + 1, c, got);
      } else {
        if (!got) fail_msg("target %d column %d: NULL, expected '%s'", i + 1, c, want[i][c]);
        assert_string_equal(got, want[i][c]);
      }
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  /* now the model level answers */
  rd = open_ok(path);
  expect(rd, &m, "M=1,N=1", NULL, "{\"c\":\"old\"}", RTDB_LEVEL_MODEL, RTDB_EXACT, "fpA");
  rtdb_close(rd);
}

/* `rooftune db lookup` says the level and the target that answered, with
** the chain from the stored row, from options, and --here (this
** machine's chain: its host row is not in the database, so at most the
** default or a pin of the same model or architecture as described here). */
static char exe[4096];

static tk_result lookup(const char *const *extra) {
  const char *argv[32] = {exe, "db", "lookup", "--db", dbpath, "--kernel", "gemm"};
  int n = 7;
  for (; *extra; extra++) argv[n++] = *extra;
  argv[n] = NULL;
  return tk_capture(argv, NULL, NULL);
}

static void test_cli_lookup(void **state) {
  (void)state;
  if (!exe[0]) skip();
  tk_result r = lookup((const char *const[]){"--target", "cuda:1", "--set", "M=1024,N=1024", NULL});
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "exact from gemm f32 M=1024 N=1024 (pin version 1)\n"
                                "level arch: pinned on cuda:0 (fingerprint fpH)\n{\"c\":\"H1\"}\n"));
  tk_result_free(&r);
  r = lookup((const char *const[]){"--target", "host", "--fingerprint", "fpNEW", "--model", "Xeon A", "--set",
                                   "M=256,N=256", "--json", NULL});
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "\"level\":\"model\",\"target\":\"host\",\"fingerprint\":\"fpB\""));
  tk_result_free(&r);
  r = lookup((const char *const[]){"--target", "host", "--fingerprint", "fpNEW", "--model", "", "--arch", "",
                                   "--max-level", "4", "--set", "M=8192,N=64", NULL});
  assert_int_equal(r.rc, 0);
  /* the level, then the schedule as the last line (scripts/demo takes it with tail -n 1) */
  assert_non_null(strstr(r.out, "level backend: pinned on host (fingerprint fpD)\n{\"c\":\"D2\"}\n"));
  tk_result_free(&r);
  r = lookup((const char *const[]){"--target", "host", "--here", "--max-level", "1", "--set", "M=1,N=1", NULL});
  assert_int_equal(r.rc, 0);   /* this machine's fingerprint is none of the crafted ones */
  assert_non_null(strstr(r.out, "level default: nothing comparable pinned along the family\n"));
  tk_result_free(&r);
  r = lookup((const char *const[]){"--target", "host", "--here", "--fingerprint", "x", "--set", "M=1", NULL});
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--here and --fingerprint exclude each other"));
  tk_result_free(&r);
  r = lookup((const char *const[]){"--target", "host", "--max-level", "5", "--set", "M=1", NULL});
  assert_int_equal(r.rc, 2);
  tk_result_free(&r);
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], exe, sizeof exe)) exe[0] = 0;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_family_columns),
    cmocka_unit_test(test_levels_by_hand),
    cmocka_unit_test(test_random_against_oracle),
    cmocka_unit_test(test_tag_pins_whole_answer),
    cmocka_unit_test(test_migration_and_old_files),
    cmocka_unit_test(test_cli_lookup),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
