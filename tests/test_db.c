/*
** test_db.c -- the database: import of every shared T4 recording checked
** against the counts and best times published with the data
** (data/README.md), all-or-nothing imports of malformed files,
** refusal of newer schemas and of files that are not databases, hostile
** strings stored verbatim, the integrity check catching a planted
** violation, concurrent writers, and a writer killed with SIGKILL at
** random moments losing nothing it had committed.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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

#define T1 "data/t1/"
#define T4 "data/t4/"

static char dbpath[64];

static int setup(void **state) {
  (void)state;
  snprintf(dbpath, sizeof dbpath, "/tmp/rooftune-test-db-%d.db", (int)getpid());
  return 0;
}

static void remove_db(void) {
  char p[96];
  static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
    snprintf(p, sizeof p, "%s%s", dbpath, sfx[i]);
    unlink(p);
  }
}

static sp_space *load(const char *path) {
  rt_err err = {0};
  sp_space *sp = sp_load_file(path, NULL, 0, &err);
  if (!sp) fail_msg("%s", err.msg);
  return sp;
}

static db *fresh(void) {
  remove_db();
  rt_err err = {0};
  db *d = db_open(dbpath, 1, &err);
  if (!d) fail_msg("%s", err.msg);
  return d;
}

typedef struct best_ctx { double t; int n; } best_ctx;

static int take_first(void *ctx, int64_t id, const char *config, const char *status, double t) {
  (void)id, (void)config;
  best_ctx *b = ctx;
  assert_string_equal(status, "ok");
  if (b->n++ == 0) b->t = t;
  return 0;
}

static int64_t count(db *d, const char *what) {
  rt_str s = {0};
  rt_err err = {0};
  assert_int_equal(db_stats(d, &s, &err), 0);
  char key[64];
  snprintf(key, sizeof key, "%s ", what);
  const char *p = strstr(s.s, key);
  int64_t n = p && (p == s.s || p[-1] == '\n') ? atoll(p + strlen(key)) : 0;
  free(s.s);
  return n;
}

/* ---- Import of the shared recordings ---- */

static const struct {
  const char *t4, *t1, *target;
  long ok, runtime, compile;
  double best_ms;
} recordings[] = {
  {"convolution_milo_A100_T4.json.gz", "convolution_milo.json", "A100", 4201, 155, 6, 0.5536},
  {"convolution_milo_A4000_T4.json.gz", "convolution_milo.json", "A4000", 4201, 155, 6, 1.0212},
  {"dedispersion_milo_A100_T4.json.gz", "dedispersion_milo.json", "A100", 11130, 0, 0, 68.117},
  {"pnpoly_RTX_3090_T4.json.gz", "pnpoly.json", "RTX_3090", 3762, 330, 0, 7.2242},
};

static void test_import_shared(void **state) {
  (void)state;
  db *d = fresh();
  for (size_t i = 0; i < sizeof recordings / sizeof *recordings; i++) {
    char t4[256], t1[256];
    snprintf(t4, sizeof t4, T4 "%s", recordings[i].t4);
    snprintf(t1, sizeof t1, T1 "%s", recordings[i].t1);
    sp_space *sp = load(t1);
    rt_err err = {0};
    int64_t campaign;
    int n;
    int64_t before_ok = count(d, "trials.ok"), before_rt = count(d, "trials.runtime_error"),
            before_ce = count(d, "trials.compile_error");
    if (db_import_t4(d, t4, sp, recordings[i].target, sp_name(sp), &campaign, &n, &err))
      fail_msg("%s", err.msg);
    assert_int_equal(n, recordings[i].ok + recordings[i].runtime + recordings[i].compile);
    assert_int_equal(count(d, "trials.ok") - before_ok, recordings[i].ok);
    assert_int_equal(count(d, "trials.runtime_error") - before_rt, recordings[i].runtime);
    assert_int_equal(count(d, "trials.compile_error") - before_ce, recordings[i].compile);
    char *key = db_workload_key(sp_name(sp), "f32", sp);
    best_ctx b = {0};
    assert_int_equal(db_ranked(d, recordings[i].target, sp_name(sp), key, 0, take_first, &b, &err),
                     recordings[i].ok);
    /* the README gives the best time in ms to 4 decimals (5 digits) */
    assert_true(fabs(b.t * 1e3 - recordings[i].best_ms) <= 1e-4 * recordings[i].best_ms);
    free(key);
    sp_free(sp);
  }
  rt_str report = {0};
  rt_err err = {0};
  assert_int_equal(db_check(d, &report, &err), 0);
  free(report.s);
  db_close(d);
  /* every campaign records the rooftune version and commit that made it */
  sqlite3 *h;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open(dbpath, &h), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT count(*) FROM campaigns WHERE rooftune_version = ?1"
                                         " AND rooftune_commit = ?2", -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_text(st, 1, RT_VERSION, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, rt_commit(), -1, SQLITE_STATIC);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  assert_int_equal(sqlite3_column_int(st, 0), 4);
  sqlite3_finalize(st);
  sqlite3_close(h);
  assert_true(strlen(rt_commit()) > 0);
  remove_db();
}

/* ---- All or nothing ---- */

/* Write a modified copy of the pnpoly recording: edit(root) changes it. */
static void write_variant(const char *out, void (*edit)(json_t *root)) {
  json_error_t je;
  json_t *root = json_load_file(T4 "pnpoly_RTX_3090_T4.json.gz", 0, &je);
  if (!root) { /* jansson cannot read gzip: go through the importer's reader */
    FILE *p = popen("gzip -dc " T4 "pnpoly_RTX_3090_T4.json.gz", "r");
    root = json_loadf(p, 0, &je);
    pclose(p);
  }
  assert_non_null(root);
  edit(root);
  assert_int_equal(json_dump_file(root, out, JSON_COMPACT), 0);
  json_decref(root);
}

static void bad_config(json_t *root) {
  json_t *r = json_array_get(json_object_get(root, "results"), 3000);
  json_object_set_new(json_object_get(r, "configuration"), "block_size_x", json_integer(33));
}
static void bad_status(json_t *root) {
  json_object_set_new(json_array_get(json_object_get(root, "results"), 10), "invalidity",
                      json_string("sideways"));
}
static void duplicate_config(json_t *root) {
  json_t *res = json_object_get(root, "results");
  json_array_append(res, json_array_get(res, 0));
}
static void no_time(json_t *root) {
  json_t *r = json_array_get(json_object_get(root, "results"), 0);
  json_object_set_new(r, "measurements", json_array());
}

static void test_import_all_or_nothing(void **state) {
  (void)state;
  db *d = fresh();
  sp_space *sp = load(T1 "pnpoly.json");
  rt_err err = {0};
  int64_t c;
  int n;
  assert_int_equal(db_import_t4(d, T4 "pnpoly_RTX_3090_T4.json.gz", sp, "gpu", "pnpoly", &c, &n, &err), 0);
  static const struct { void (*edit)(json_t *); const char *msg; } cases[] = {
    {bad_config, "results[3000].configuration: 33 is not among the values of 'block_size_x'"},
    {bad_status, "results[10].invalidity: unknown value \"sideways\""},
    {duplicate_config, "results[4092]"},
    {no_time, "results[0]: a correct result without a numeric \"time\""},
  };
  char path[96];
  snprintf(path, sizeof path, "/tmp/rooftune-test-t4-%d.json", (int)getpid());
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    write_variant(path, cases[i].edit);
    assert_int_equal(db_import_t4(d, path, sp, "gpu", "pnpoly", &c, &n, &err), -1);
    if (!strstr(err.msg, cases[i].msg)) fail_msg("case %zu: %s", i, err.msg);
    assert_int_equal(count(d, "trials"), 4092);
    assert_int_equal(count(d, "campaigns"), 1);
  }
  /* truncated and unreadable files */
  FILE *f = fopen(path, "w");
  fputs("{\"results\": [{\"configuration\": {", f);
  fclose(f);
  assert_int_equal(db_import_t4(d, path, sp, "gpu", "pnpoly", &c, &n, &err), -1);
  assert_non_null(strstr(err.msg, "JSON syntax error"));
  assert_int_equal(db_import_t4(d, "/nonexistent.json", sp, "gpu", "pnpoly", &c, &n, &err), -1);
  assert_int_equal(count(d, "trials"), 4092);
  unlink(path);
  sp_free(sp);
  db_close(d);
  remove_db();
}

/* ---- Versions and foreign files ---- */

static int user_version(const char *path) {
  sqlite3 *h;
  sqlite3_stmt *st;
  int v = -1;
  assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  if (sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

static void test_versions(void **state) {
  (void)state;
  remove_db();
  sqlite3 *h;
  assert_int_equal(sqlite3_open(dbpath, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, "CREATE TABLE other(x); PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  rt_err err = {0};
  assert_null(db_open(dbpath, 1, &err));
  assert_non_null(strstr(err.msg, "schema version 99 is newer"));
  assert_int_equal(user_version(dbpath), 99);   /* unchanged */
  remove_db();
  /* every older version migrates forward, keeping its rows */
  for (int v = 1; v < DB_SCHEMA_VERSION; v++) {
    remove_db();
    assert_int_equal(db__make_version(dbpath, v, &err), 0);
    assert_int_equal(user_version(dbpath), v);
    assert_int_equal(sqlite3_open(dbpath, &h), SQLITE_OK);
    assert_int_equal(sqlite3_exec(h, "INSERT INTO kernels(name, template_version) VALUES('k', '1')",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
    db *m = db_open(dbpath, 0, &err);
    if (!m) fail_msg("from version %d: %s", v, err.msg);
    assert_int_equal(db_user_version(m), DB_SCHEMA_VERSION);
    int64_t kid;
    assert_int_equal(db_kernel_id(m, "k", "1", &kid, &err), 0);
    assert_int_equal(kid, 1);   /* the old row, not a new one */
    assert_int_equal(db_kernel_set_default(m, kid, "{\"a\":1}", &err), 0);
    rt_str report = {0};
    assert_int_equal(db_check(m, &report, &err), 0);
    free(report.s);
    db_close(m);
  }
  /* an empty (version 0) file is migrated to the current version */
  db *d = db_open(dbpath, 1, &err);
  assert_non_null(d);
  assert_int_equal(db_user_version(d), DB_SCHEMA_VERSION);
  db_close(d);
  assert_int_equal(user_version(dbpath), DB_SCHEMA_VERSION);
  /* opening without create does not make a file */
  remove_db();
  assert_null(db_open(dbpath, 0, &err));
  assert_int_equal(access(dbpath, F_OK), -1);
  /* a file that is not a database */
  FILE *f = fopen(dbpath, "w");
  for (int i = 0; i < 4096; i++) fputc("not a database"[i % 14], f);
  fclose(f);
  assert_null(db_open(dbpath, 1, &err));
  assert_non_null(strstr(err.msg, dbpath));
  f = fopen(dbpath, "r");
  char head[15] = {0};
  assert_int_equal(fread(head, 1, 14, f), 14);
  fclose(f);
  assert_string_equal(head, "not a database");
  remove_db();
}

/* ---- Hostile strings ---- */

static int find_config(void *ctx, int64_t id, const char *config, const char *status, double t) {
  (void)id, (void)status, (void)t;
  ++*(int *)ctx;
  assert_non_null(strstr(config, "\"use_method\""));
  return 1;
}

static void test_hostile_strings(void **state) {
  (void)state;
  db *d = fresh();
  sp_space *sp = load(T1 "pnpoly.json");
  const char *target = "x'); DROP TABLE trials; --", *kernel = "k\"\\'\n; DELETE FROM pins";
  rt_err err = {0};
  int64_t c;
  int n;
  assert_int_equal(db_import_t4(d, T4 "pnpoly_RTX_3090_T4.json.gz", sp, target, kernel, &c, &n, &err), 0);
  char *key = db_workload_key(kernel, "f32", sp);
  int seen = 0;
  assert_int_equal(db_ranked(d, target, kernel, key, 1, find_config, &seen, &err), 1);
  assert_int_equal(seen, 1);
  char **keys;
  assert_int_equal(db_workload_keys(d, target, kernel, &keys, &err), 1);
  assert_string_equal(keys[0], key);
  free(keys[0]);
  free(keys);
  assert_int_equal(count(d, "trials"), 4092);
  free(key);
  sp_free(sp);
  db_close(d);
  remove_db();
}

/* Workload sizes are valid JSON whatever the values: a string problem
** variable with quotes and backslashes round-trips through a JSON parser. */
static void test_workload_sizes_json(void **state) {
  (void)state;
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = sp_parse_bindings("M=96,layout='n\"h\\\\wc'", a, &b, &err);
  assert_int_equal(nb, 2);
  sp_space *sp = sp_load_string(
      "{\"ConfigurationSpace\": {\"ProblemVariables\": [{\"Name\": \"M\"}, {\"Name\": \"layout\"},"
      " {\"Name\": \"x\", \"Default\": 0.5}],"
      " \"TuningParameters\": [{\"Name\": \"t\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}]}}",
      "sizes.json", b, nb, &err);
  if (!sp) fail_msg("%s", err.msg);
  char *js = db_workload_sizes(sp);
  json_error_t je;
  json_t *o = json_loads(js, 0, &je);
  if (!o) fail_msg("not JSON: %s", js);
  assert_int_equal(json_integer_value(json_object_get(o, "M")), 96);
  /* the text --set gave, quote and backslash included */
  assert_non_null(strchr(b[1].value.u.s->s, '"'));
  assert_non_null(strchr(b[1].value.u.s->s, '\\'));
  assert_string_equal(json_string_value(json_object_get(o, "layout")), b[1].value.u.s->s);
  assert_true(json_real_value(json_object_get(o, "x")) == 0.5);
  json_decref(o);
  free(js);
  sp_free(sp);
  free(b);
  sx_arena_free(a);
}

/* ---- The check finds planted violations ---- */

static void test_check_detects(void **state) {
  (void)state;
  db *d = fresh();
  sp_space *sp = load(T1 "pnpoly.json");
  rt_err err = {0};
  int64_t c;
  int n;
  assert_int_equal(db_import_t4(d, T4 "pnpoly_RTX_3090_T4.json.gz", sp, "gpu", "pnpoly", &c, &n, &err), 0);
  db_close(d);
  sp_free(sp);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(dbpath, &h), SQLITE_OK);
  /* version 2 without a version 1, and no current version */
  assert_int_equal(sqlite3_exec(h, "INSERT INTO pins(target_id, workload_id, version, config, pinned_by, reason)"
                                   " VALUES(1, 1, 2, '{}', 'test', 'planted')", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  d = db_open(dbpath, 0, &err);
  rt_str report = {0};
  assert_int_equal(db_check(d, &report, &err), 1);
  assert_non_null(strstr(report.s, "pin versions not numbered 1..n"));
  assert_non_null(strstr(report.s, "without a current version"));
  free(report.s);
  db_close(d);
  remove_db();
}

/* ---- Several writers, and a writer killed at random ---- */

/* Child: import the pnpoly recording `times` times, writing one byte to
** fd after each committed import. */
static void importer(int fd, int times) {
  rt_err err = {0};
  db *d = db_open(dbpath, 1, &err);
  sp_space *sp = sp_load_file(T1 "pnpoly.json", NULL, 0, &err);
  if (!d || !sp) _exit(2);
  for (int i = 0; i < times; i++) {
    int64_t c;
    int n;
    if (db_import_t4(d, T4 "pnpoly_RTX_3090_T4.json.gz", sp, "gpu", "pnpoly", &c, &n, &err)) _exit(3);
    if (fd >= 0 && write(fd, "x", 1) != 1) _exit(4);
  }
  db_close(d);
  sp_free(sp);
  _exit(0);
}

static void test_concurrent_writers(void **state) {
  (void)state;
  db_close(fresh());
  pid_t kids[3];
  for (int i = 0; i < 3; i++)
    if ((kids[i] = fork()) == 0) importer(-1, 2);
  for (int i = 0; i < 3; i++) {
    int st;
    waitpid(kids[i], &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  rt_err err = {0};
  db *d = db_open(dbpath, 0, &err);
  assert_int_equal(count(d, "trials"), 6 * 4092);
  assert_int_equal(count(d, "campaigns"), 6);
  rt_str report = {0};
  assert_int_equal(db_check(d, &report, &err), 0);
  free(report.s);
  db_close(d);
  remove_db();
}

static void test_sigkill_loses_nothing_committed(void **state) {
  (void)state;
  srand(20261129);
  for (int round = 0; round < 5; round++) {
    db_close(fresh());
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]);
      importer(fd[1], 1000);
    }
    close(fd[1]);
    struct timespec nap = {0, (long)(50 + rand() % 700) * 1000000L};
    nanosleep(&nap, NULL);
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    int acked = 0;
    char b;
    while (read(fd[0], &b, 1) == 1) acked++;
    close(fd[0]);
    rt_err err = {0};
    db *d = db_open(dbpath, 0, &err);
    if (!d) fail_msg("round %d: %s", round, err.msg);
    rt_str report = {0};
    assert_int_equal(db_check(d, &report, &err), 0);
    free(report.s);
    /* every acknowledged import is there, complete; at most one more
    ** (committed, killed before its acknowledgement) */
    int64_t trials = count(d, "trials"), campaigns = count(d, "campaigns");
    assert_int_equal(trials, campaigns * 4092);
    assert_true(campaigns == acked || campaigns == acked + 1);
    db_close(d);
  }
  remove_db();
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_import_shared),
    cmocka_unit_test(test_import_all_or_nothing),
    cmocka_unit_test(test_versions),
    cmocka_unit_test(test_hostile_strings),
    cmocka_unit_test(test_workload_sizes_json),
    cmocka_unit_test(test_check_detects),
    cmocka_unit_test(test_concurrent_writers),
    cmocka_unit_test(test_sigkill_loses_nothing_committed),
  };
  return cmocka_run_group_tests_name("db", tests, setup, NULL);
}
