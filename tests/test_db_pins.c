/*
** test_db_pins.c -- pins, versions, rollback and tags; export and merge.
** Expectations are independent of the code under test: best times and
** status counts published with the shared data (data/README.md),
** raw SQLite dumps of tables compared byte for byte, version numbers
** counted by hand, the trial counts of each recording. Every test ends
** with db_check passing.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/db.h"

#define T1 "data/t1/"
#define T4 "data/t4/"

/* The shared recordings with their published counts and best times. */
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
enum { CONV_A100, CONV_A4000, DEDISP, PNPOLY };

/* Scratch file i of this process (0..3), and its removal. */
static const char *path(int i) {
  static char p[4][64];
  snprintf(p[i], sizeof p[i], "/tmp/rooftune-test-pins-%d-%d.db", (int)getpid(), i);
  return p[i];
}

static void remove_file(const char *f) {
  static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
    char p[300];
    snprintf(p, sizeof p, "%s%s", f, sfx[i]);
    unlink(p);
  }
}

static db *fresh(int i) {
  remove_file(path(i));
  rt_err err = {0};
  db *d = db_open(path(i), 1, &err);
  if (!d) fail_msg("%s", err.msg);
  return d;
}

static sp_space *space_of(int r) {
  char t1[256];
  snprintf(t1, sizeof t1, T1 "%s", recordings[r].t1);
  rt_err err = {0};
  sp_space *sp = sp_load_file(t1, NULL, 0, &err);
  if (!sp) fail_msg("%s", err.msg);
  return sp;
}

/* Import recording r (or the file `file` recorded on its space). */
static void import(db *d, int r, const char *file) {
  char t4[256];
  snprintf(t4, sizeof t4, T4 "%s", recordings[r].t4);
  sp_space *sp = space_of(r);
  rt_err err = {0};
  int64_t c;
  int n;
  if (db_import_t4(d, file ? file : t4, sp, recordings[r].target, sp_name(sp), &c, &n, &err))
    fail_msg("%s", err.msg);
  sp_free(sp);
}

static char *key_of(int r) {
  sp_space *sp = space_of(r);
  char *key = db_workload_key(sp_name(sp), "f32", sp);
  sp_free(sp);
  return key;
}

static void check_ok(db *d) {
  rt_str report = {0};
  rt_err err = {0};
  int rc = db_check(d, &report, &err);
  if (rc) fail_msg("db check: %s%s", report.s ? report.s : "", err.msg);
  free(report.s);
}

/* Every row of a query over the file at p, rendered with quote(),
** read through a separate raw SQLite connection. */
static char *dump(const char *p, const char *sql) {
  sqlite3 *h;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open_v2(p, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
  rt_str s = {0};
  rt_str_printf(&s, "%s", "");
  while (sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const unsigned char *t = sqlite3_column_text(st, i);
      rt_str_printf(&s, "%s%s", i ? "|" : "", t ? (const char *)t : "NULL");
    }
    rt_str_printf(&s, "\n");
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return s.s;
}

static int64_t scalar(const char *p, const char *sql) {
  char *s = dump(p, sql);
  int64_t v = atoll(s);
  free(s);
  return v;
}

/* Every table of a file, for "unchanged" comparisons. */
static char *dump_all(const char *p) {
  static const char *const tables[] = {"targets", "kernels", "workloads", "spaces", "campaigns",
                                       "trials", "pins", "pin_current", "tags", "tag_pins"};
  rt_str s = {0};
  for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT * FROM %s ORDER BY rowid", tables[i]);
    char *t = dump(p, sql);
    rt_str_printf(&s, "%s:\n%s", tables[i], t);
    free(t);
  }
  return s.s;
}

typedef struct hist { int n; int64_t version[16], trial[16]; int current[16], foreign[16]; double t[16]; } hist;

static int collect(void *ctx, const db_pin_info *p) {
  hist *h = ctx;
  assert_true(h->n < 16);
  h->version[h->n] = p->version;
  h->trial[h->n] = p->trial_id;
  h->current[h->n] = p->current;
  h->foreign[h->n] = p->foreign_origin;
  h->t[h->n++] = p->time_s;
  return 0;
}

static hist history(db *d, int r, const char *key) {
  hist h = {0};
  rt_err err = {0};
  int n = db_pin_history(d, recordings[r].target, "pnpoly", key, collect, &h, &err);
  if (n < 0) fail_msg("%s", err.msg);
  assert_int_equal(n, h.n);
  return h;
}

/* ---- Pins and versions ---- */

static void test_pin_versions(void **state) {
  (void)state;
  db *d = fresh(0);
  import(d, PNPOLY, NULL);
  import(d, CONV_A4000, NULL);
  char *key = key_of(PNPOLY);
  const char *tg = recordings[PNPOLY].target;
  rt_err err = {0};
  int64_t v, ok_trial = scalar(path(0), "SELECT id FROM trials WHERE status = 'ok' AND campaign_id = 1"
                                        " ORDER BY id DESC LIMIT 1"),
             failed = scalar(path(0), "SELECT id FROM trials WHERE status != 'ok' AND campaign_id = 1 LIMIT 1"),
             other = scalar(path(0), "SELECT id FROM trials WHERE status = 'ok' AND campaign_id = 2 LIMIT 1");
  /* best, a chosen trial, best again: versions 1, 2, 3 */
  db_pin_req best = {tg, "pnpoly", key, 0, NULL, NULL}, chosen = {tg, "pnpoly", key, ok_trial, "me", "why"};
  assert_int_equal(db_pin(d, &best, &v, &err), 0);
  assert_int_equal(v, 1);
  assert_int_equal(db_pin(d, &chosen, &v, &err), 0);
  assert_int_equal(v, 2);
  assert_int_equal(db_pin(d, &best, &v, &err), 0);
  assert_int_equal(v, 3);
  hist h = history(d, PNPOLY, key);
  assert_int_equal(h.n, 3);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(h.version[i], i + 1);
    assert_int_equal(h.current[i], i == 2);
    assert_int_equal(h.foreign[i], 1);   /* imported: another machine's trial */
  }
  assert_int_equal(h.trial[1], ok_trial);
  assert_true(fabs(h.t[0] * 1e3 - recordings[PNPOLY].best_ms) <= 1e-4 * recordings[PNPOLY].best_ms);
  char *by = dump(path(0), "SELECT pinned_by, reason FROM pins ORDER BY version");
  char want[256];
  snprintf(want, sizeof want, "%s|best of %ld verified trials\nme|why\n",
           getenv("USER") && *getenv("USER") ? getenv("USER") : "rooftune", recordings[PNPOLY].ok);
  assert_true(!strncmp(by, want, strlen(want)));
  free(by);
  /* refused: a failed trial, a trial of another workload, no such trial */
  char *before = dump_all(path(0));
  static const char *const msgs[] = {"only verified (ok) trials can be pinned", "is not a trial of",
                                     "no trial"};
  int64_t bad[] = {failed, other, 999999};
  for (int i = 0; i < 3; i++) {
    db_pin_req r = {tg, "pnpoly", key, bad[i], NULL, NULL};
    assert_int_equal(db_pin(d, &r, &v, &err), -1);
    if (!strstr(err.msg, msgs[i])) fail_msg("case %d: %s", i, err.msg);
  }
  db_pin_req none = {tg, "pnpoly", "pnpoly f32 nothing=1", 0, NULL, NULL};
  assert_int_equal(db_pin(d, &none, &v, &err), -1);
  char *after = dump_all(path(0));
  assert_string_equal(before, after);
  free(before);
  free(after);
  check_ok(d);
  free(key);
  db_close(d);
  remove_file(path(0));
}

/* A trial measured here (not "external") is not foreign. */
static void test_pin_native_not_foreign(void **state) {
  (void)state;
  db *d = fresh(0);
  rt_err err = {0};
  int64_t tid, kid, wid, sid, cid, trial, v;
  assert_int_equal(db_target_id(d, "host", "cpu:abc", "{}", &tid, &err), 0);
  assert_int_equal(db_kernel_id(d, "gemm", "3", &kid, &err), 0);
  assert_int_equal(db_workload_id(d, kid, "gemm f32 M=8", "{\"M\":8}", "f32", "", &wid, &err), 0);
  assert_int_equal(db_space_id(d, "{}", &sid, &err), 0);
  db_campaign c = {tid, wid, sid, "random", "{}", 1, 10, "measured", "cc", "-O2", "done"};
  assert_int_equal(db_campaign_new(d, &c, &cid, &err), 0);
  db_trial t;
  db_trial_init(&t);
  t.campaign_id = cid;
  t.config_json = "{\"a\":1}";
  t.status = "ok";
  t.time_s = 0.5;
  assert_int_equal(db_trial_add(d, &t, &trial, &err), 0);
  db_pin_req r = {"host", "gemm", "gemm f32 M=8", 0, "ci", NULL};
  assert_int_equal(db_pin(d, &r, &v, &err), 0);
  assert_int_equal(scalar(path(0), "SELECT foreign_origin FROM pins"), 0);
  assert_int_equal(scalar(path(0), "SELECT trial_id FROM pins"), trial);
  check_ok(d);
  db_close(d);
  remove_file(path(0));
}

static void test_rollback_moves_only_current(void **state) {
  (void)state;
  db *d = fresh(0);
  import(d, PNPOLY, NULL);
  char *key = key_of(PNPOLY);
  const char *tg = recordings[PNPOLY].target;
  rt_err err = {0};
  int64_t v;
  for (int i = 0; i < 3; i++) {
    db_pin_req r = {tg, "pnpoly", key, 1 + i, NULL, NULL};
    assert_int_equal(db_pin(d, &r, &v, &err), 0);
  }
  static const char pins_sql[] = "SELECT * FROM pins ORDER BY id";
  char *before = dump(path(0), pins_sql), *tags_before = dump(path(0), "SELECT count(*) FROM tags");
  assert_int_equal(db_pin_rollback(d, tg, "pnpoly", key, 1, &err), 0);
  char *after = dump(path(0), pins_sql);
  assert_string_equal(before, after);   /* pins byte-identical */
  free(after);
  assert_int_equal(scalar(path(0), "SELECT p.version FROM pin_current c JOIN pins p ON p.id = c.pin_id"), 1);
  hist h = history(d, PNPOLY, key);
  assert_int_equal(h.current[0] + h.current[1] + h.current[2], 1);
  assert_int_equal(h.current[0], 1);
  /* a version that does not exist: error, nothing moves */
  assert_int_equal(db_pin_rollback(d, tg, "pnpoly", key, 4, &err), -1);
  assert_non_null(strstr(err.msg, "no pin version 4"));
  assert_int_equal(scalar(path(0), "SELECT p.version FROM pin_current c JOIN pins p ON p.id = c.pin_id"), 1);
  /* the next pin is version 4, whatever is current */
  db_pin_req r = {tg, "pnpoly", key, 0, NULL, NULL};
  assert_int_equal(db_pin(d, &r, &v, &err), 0);
  assert_int_equal(v, 4);
  after = dump(path(0), "SELECT * FROM pins WHERE version < 4 ORDER BY id");
  assert_string_equal(before, after);
  free(after);
  after = dump(path(0), "SELECT count(*) FROM tags");
  assert_string_equal(tags_before, after);
  free(after);
  free(before);
  free(tags_before);
  check_ok(d);
  free(key);
  db_close(d);
  remove_file(path(0));
}

/* ---- Tags ---- */

typedef struct tags_seen { int n, pins[4]; char names[4][16]; } tags_seen;

static int collect_tag(void *ctx, const char *name, const char *note, const char *created, int npins) {
  (void)note, (void)created;
  tags_seen *t = ctx;
  snprintf(t->names[t->n], sizeof t->names[t->n], "%s", name);
  t->pins[t->n++] = npins;
  return 0;
}

static void test_tags_immutable(void **state) {
  (void)state;
  db *d = fresh(0);
  rt_err err = {0};
  int n;
  assert_int_equal(db_tag(d, "empty", NULL, &n, &err), -1);   /* nothing pinned yet */
  import(d, PNPOLY, NULL);
  import(d, CONV_A4000, NULL);
  char *pk = key_of(PNPOLY), *ck = key_of(CONV_A4000);
  int64_t v, slow = scalar(path(0), "SELECT id FROM trials WHERE status = 'ok' AND campaign_id = 1"
                                      " ORDER BY time DESC LIMIT 1");
  db_pin_req p1 = {recordings[PNPOLY].target, "pnpoly", pk, 0, NULL, NULL},
             p2 = {recordings[PNPOLY].target, "pnpoly", pk, slow, NULL, NULL},
             c1 = {recordings[CONV_A4000].target, "convolution_milo", ck, 0, NULL, NULL};
  assert_int_equal(db_pin(d, &p1, &v, &err), 0);
  assert_int_equal(db_pin(d, &c1, &v, &err), 0);
  assert_int_equal(db_tag(d, "r1", "first release", &n, &err), 0);
  assert_int_equal(n, 2);
  /* a later pin does not change r1; r2 sees it */
  assert_int_equal(db_pin(d, &p2, &v, &err), 0);
  assert_int_equal(v, 2);
  hist h = {0};
  assert_int_equal(db_tag_show(d, "r1", collect, &h, &err), 2);
  assert_int_equal(h.version[0] + h.version[1], 2);   /* both version 1 */
  assert_int_equal(h.current[0] + h.current[1], 1);   /* pnpoly's v1 is no longer current */
  char *r1 = dump(path(0), "SELECT * FROM tag_pins WHERE tag_id = 1 ORDER BY pin_id");
  assert_int_equal(db_tag(d, "r2", NULL, &n, &err), 0);
  hist h2 = {0};
  assert_int_equal(db_tag_show(d, "r2", collect, &h2, &err), 2);
  assert_int_equal(h2.version[0] + h2.version[1], 3);
  /* tags are immutable: the name cannot be reused, r1 stays as it was */
  char *before = dump_all(path(0));
  assert_int_equal(db_tag(d, "r1", "again", &n, &err), -1);
  assert_non_null(strstr(err.msg, "already exists"));
  assert_int_equal(db_pin_rollback(d, recordings[PNPOLY].target, "pnpoly", pk, 1, &err), 0);
  char *r1_after = dump(path(0), "SELECT * FROM tag_pins WHERE tag_id = 1 ORDER BY pin_id");
  assert_string_equal(r1, r1_after);
  char *tags_after = dump(path(0), "SELECT * FROM tags ORDER BY id"),
       *tags_before = strstr(before, "tags:\n");
  assert_true(!strncmp(tags_before + 6, tags_after, strlen(tags_after)));
  tags_seen ts = {0};
  assert_int_equal(db_tag_list(d, collect_tag, &ts, &err), 2);
  assert_string_equal(ts.names[0], "r1");
  assert_string_equal(ts.names[1], "r2");
  assert_int_equal(ts.pins[0], 2);
  assert_int_equal(db_tag_show(d, "nope", collect, &h, &err), -1);
  free(r1);
  free(r1_after);
  free(before);
  free(tags_after);
  check_ok(d);
  free(pk);
  free(ck);
  db_close(d);
  remove_file(path(0));
}

/* ---- Export ---- */

typedef struct best { double t; char *config; } best;

static int take_best(void *ctx, int64_t id, const char *config, const char *status, double t) {
  (void)id, (void)status;
  best *b = ctx;
  b->t = t;
  b->config = strdup(config);
  return 1;
}

static best best_of(db *d, int r) {
  best b = {NAN, NULL};
  rt_err err = {0};
  sp_space *sp = space_of(r);
  char *key = db_workload_key(sp_name(sp), "f32", sp);
  assert_int_equal(db_ranked(d, recordings[r].target, sp_name(sp), key, 1, take_best, &b, &err), 1);
  free(key);
  sp_free(sp);
  return b;
}

static const char *const statuses[] = {"ok", "compile_error", "runtime_error", "timeout",
                                       "wrong_result", "invalid"};

static int64_t status_count(const char *p, const char *status) {
  char sql[96];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE status = '%s'", status);  /* ours */
  return scalar(p, sql);
}

static void test_export_round_trip(void **state) {
  (void)state;
  char out[96];
  snprintf(out, sizeof out, "/tmp/rooftune-test-pins-%d.export", (int)getpid());
  for (int r = 0; r < 4; r++) {
    db *a = fresh(0), *b = fresh(1);
    import(a, r, NULL);
    sp_space *sp = space_of(r);
    rt_err err = {0};
    int n;
    FILE *f = fopen(out, "w");
    assert_int_equal(db_export(a, recordings[r].target, sp_name(sp), NULL, "t4", f, &n, &err), 0);
    fclose(f);
    long total = recordings[r].ok + recordings[r].runtime + recordings[r].compile;
    assert_int_equal(n, total);
    import(b, r, out);
    for (size_t s = 0; s < sizeof statuses / sizeof *statuses; s++)
      assert_int_equal(status_count(path(1), statuses[s]), status_count(path(0), statuses[s]));
    assert_int_equal(status_count(path(1), "ok"), recordings[r].ok);
    assert_int_equal(status_count(path(1), "runtime_error"), recordings[r].runtime);
    best ba = best_of(a, r), bb = best_of(b, r);
    assert_true(fabs(bb.t * 1e3 - recordings[r].best_ms) <= 1e-4 * recordings[r].best_ms);
    assert_true(bb.t == ba.t);   /* export picks the ms that import maps back exactly */
    assert_string_equal(ba.config, bb.config);
    free(ba.config);
    free(bb.config);
    /* the same trials, timestamps and compile times on both sides */
    static const char cmp[] = "SELECT config, status, time, created, compile_s, verify_s, framework_s"
                              " FROM trials ORDER BY id";
    char *da = dump(path(0), cmp), *dbb = dump(path(1), cmp);
    assert_string_equal(da, dbb);
    free(da);
    free(dbb);
    check_ok(b);
    if (r == PNPOLY) {   /* csv: a header and a row per trial; json: an array of them */
      f = fopen(out, "w");
      assert_int_equal(db_export(a, recordings[r].target, sp_name(sp), NULL, "csv", f, &n, &err), 0);
      fclose(f);
      f = fopen(out, "r");
      char line[4096];
      int lines = 0;
      assert_non_null(fgets(line, sizeof line, f));
      for (int p = 0; p < sp_nparams(sp); p++) assert_non_null(strstr(line, sp_param_name(sp, p)));
      assert_non_null(strstr(line, "status"));
      while (fgets(line, sizeof line, f)) lines++;
      fclose(f);
      assert_int_equal(lines, total);
      f = fopen(out, "w");
      assert_int_equal(db_export(a, recordings[r].target, sp_name(sp), NULL, "json", f, &n, &err), 0);
      fclose(f);
      json_error_t je;
      json_t *j = json_load_file(out, 0, &je);
      assert_int_equal(json_array_size(j), total);
      assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "status")), "ok");
      assert_true(json_is_object(json_object_get(json_array_get(j, 0), "config")));
      json_decref(j);
      f = fopen(out, "w");
      assert_int_equal(db_export(a, recordings[r].target, sp_name(sp), NULL, "xml", f, &n, &err), -1);
      assert_int_equal(db_export(a, "nobody", sp_name(sp), NULL, "csv", f, &n, &err), -1);
      fclose(f);
    }
    sp_free(sp);
    db_close(a);
    db_close(b);
  }
  unlink(out);
  remove_file(path(0));
  remove_file(path(1));
}

/* ---- Merge ---- */

static void test_merge(void **state) {
  (void)state;
  db *f = fresh(0), *same = fresh(1), *other = fresh(2);
  import(f, PNPOLY, NULL);
  import(same, PNPOLY, NULL);
  import(other, CONV_A4000, NULL);
  char *ck = key_of(CONV_A4000);
  int64_t v;
  int n;
  rt_err err = {0};
  db_pin_req r = {recordings[CONV_A4000].target, "convolution_milo", ck, 0, NULL, NULL};
  assert_int_equal(db_pin(other, &r, &v, &err), 0);   /* pins are not merged */
  assert_int_equal(db_tag(other, "r", NULL, &n, &err), 0);
  db_close(same);
  db_close(other);
  db_merge_stats s;
  /* the same file imported on both sides: one copy */
  assert_int_equal(db_merge(f, path(1), &s, &err), 0);
  assert_int_equal(s.trials, 0);
  assert_int_equal(s.duplicates, 4092);
  assert_int_equal(scalar(path(0), "SELECT count(*) FROM trials"), 4092);
  assert_int_equal(scalar(path(0), "SELECT count(*) FROM campaigns"), 1);
  /* a different file: the union */
  assert_int_equal(db_merge(f, path(2), &s, &err), 0);
  assert_int_equal(s.campaigns, 1);
  assert_int_equal(s.trials, 4362);
  assert_int_equal(scalar(path(0), "SELECT count(*) FROM trials"), 4092 + 4362);
  assert_int_equal(scalar(path(0), "SELECT count(*) FROM targets"), 2);
  assert_int_equal(scalar(path(0), "SELECT count(*) FROM pins") + scalar(path(0), "SELECT count(*) FROM tags"), 0);
  best b = best_of(f, CONV_A4000);
  assert_true(fabs(b.t * 1e3 - recordings[CONV_A4000].best_ms) <= 1e-4 * recordings[CONV_A4000].best_ms);
  free(b.config);
  static const char conv[] = "SELECT config, status, time, created FROM trials WHERE campaign_id = ";
  char sql[128];
  snprintf(sql, sizeof sql, "%s1 ORDER BY id", conv);
  char *src = dump(path(2), sql);
  snprintf(sql, sizeof sql, "%s2 ORDER BY id", conv);
  char *dst = dump(path(0), sql);
  assert_string_equal(src, dst);
  free(src);
  free(dst);
  assert_int_equal(db_merge(f, path(2), &s, &err), 0);   /* again: nothing new */
  assert_int_equal(s.trials, 0);
  check_ok(f);
  /* bad sources leave F unchanged: a text file, a newer schema, none */
  char *before = dump_all(path(0));
  FILE *t = fopen(path(3), "w");
  for (int i = 0; i < 4096; i++) fputc("not a database\n"[i % 15], t);
  fclose(t);
  assert_int_equal(db_merge(f, path(3), &s, &err), -1);
  assert_non_null(strstr(err.msg, path(3)));
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path(2), &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  assert_int_equal(db_merge(f, path(2), &s, &err), -1);
  assert_non_null(strstr(err.msg, "newer"));
  assert_int_equal(db_merge(f, "/nonexistent/x.db", &s, &err), -1);
  assert_int_equal(access("/nonexistent/x.db", F_OK), -1);
  char *after = dump_all(path(0));
  assert_string_equal(before, after);
  free(before);
  free(after);
  check_ok(f);
  free(ck);
  db_close(f);
  for (int i = 0; i < 4; i++) remove_file(path(i));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_pin_versions),
    cmocka_unit_test(test_pin_native_not_foreign),
    cmocka_unit_test(test_rollback_moves_only_current),
    cmocka_unit_test(test_tags_immutable),
    cmocka_unit_test(test_export_round_trip),
    cmocka_unit_test(test_merge),
  };
  return cmocka_run_group_tests_name("db_pins", tests, NULL, NULL);
}
