/*
** test_tm.c -- model-only targets (targets/model/tm.h): the description
** file's parser (every member checked, each error naming the file and the
** JSON field), the H200 file read back against the recorded database's
** ceilings row independently (sqlite3 and jansson here, not tm_load), the
** content hash (spacing does not change it, a number does).
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

#include "targets/model/tm.h"
#include "targets/tg.h"

#define H200_FILE "targets/model/h200.json"
#define H200_DB "experiments/results/h200/h200.db"

/* The H200 file as a jansson tree (the test's own reading). */
static json_t *h200_json(void) {
  json_error_t je;
  json_t *j = json_load_file(H200_FILE, 0, &je);
  assert_non_null(j);
  return j;
}

/* Error of tm_parse on j after edit, as text. */
static const char *parse_err(json_t *j, rt_err *err) {
  char *text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
  tm_file *f = malloc(sizeof *f);
  memset(err, 0, sizeof *err);
  int rc = tm_parse("h200.json", text, f, err);
  free(text);
  assert_int_equal(rc, -1);
  assert_string_equal(f->name, "");   /* zeroed on error */
  free(f);
  return err->msg;
}

/* The file loads, and its members are what the file says. */
static void test_load_h200(void **state) {
  (void)state;
  tm_file *f = malloc(sizeof *f);
  rt_err err = {0};
  assert_int_equal(tm_load(H200_FILE, f, &err), 0);
  assert_string_equal(f->borrows, "cuda");
  assert_string_equal(f->path, H200_FILE);
  assert_string_equal(tg_desc_get(&f->desc, "device"), "NVIDIA H200");
  assert_string_equal(tg_desc_get(&f->desc, "compute_capability"), "9.0");
  assert_string_equal(f->limits, "max_threads=1024,max_smem=232448,regs_block=65536,sms=132");
  assert_int_equal(f->ce.gpu.sms, 132);
  assert_int_equal(f->ce.threads, 132);
  assert_int_equal(strlen(f->hash), 32);
  assert_null(f->be);
  assert_int_equal(tm_row(f, tg_backend_find, &err), 0);
  assert_ptr_equal(f->be, tg_backend_find("cuda"));
  free(f);
}

/* The ceilings are the recorded database's latest ceilings row of cuda:0,
** bit for bit (read here with sqlite3 and jansson). */
static void test_h200_ceilings_from_db(void **state) {
  (void)state;
  if (access(H200_DB, R_OK)) skip();
  sqlite3 *db;
  assert_int_equal(sqlite3_open_v2(H200_DB, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db,
                                      "SELECT c.data FROM ceilings c JOIN targets t ON t.id = "
                                      "c.target_id WHERE t.name = 'cuda:0' ORDER BY c.id DESC LIMIT 1",
                                      -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  json_t *rec = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
  sqlite3_finalize(st);
  sqlite3_close(db);
  json_t *file = h200_json();
  json_t *ce = json_object_get(file, "ceilings");
  const char *k;
  json_t *v;
  json_object_foreach(rec, k, v) assert_true(json_equal(v, json_object_get(ce, k)));
  /* the file adds the device's properties only */
  json_object_foreach(ce, k, v) if (!json_object_get(rec, k)) assert_string_equal(k, "gpu");
  json_decref(rec);
  json_decref(file);
}

/* Each broken member: the message names the file and the field. */
static void test_errors_name_fields(void **state) {
  (void)state;
  rt_err err;
  struct {
    const char *path;   /* member to change: "a" or "a.b" or "a.b.c" */
    json_t *val;        /* NULL: delete it */
    const char *want;   /* the message's start */
  } cases[] = {
    {"rooftune_target", json_integer(2), "h200.json: rooftune_target: expected 1"},
    {"name", NULL, "h200.json: name: missing"},
    {"name", json_string(""), "h200.json: name: expected a string"},
    {"borrows", json_integer(3), "h200.json: borrows: expected a string"},
    {"extra", json_true(), "h200.json: extra: unknown member"},
    {"ceilings", json_string("x"), "h200.json: ceilings: expected an object"},
    {"ceilings.bw.DRAM", json_pack("[f]", 1.0),
     "h200.json: ceilings.bw.DRAM: expected an array of 2 numbers"},
    {"ceilings.peak", NULL, "h200.json: ceilings.peak: missing"},
    {"ceilings.gpu.sms", json_integer(-1), "h200.json: ceilings.gpu.sms: expected a non-negative"},
    {"describe.device", json_integer(1), "h200.json: describe.device: expected a string"},
    {"describe", json_array(), "h200.json: describe: expected an object"},
    {"limits.max_threads", json_string("1024"), "h200.json: limits.max_threads: expected an integer"},
    {"limits.max_smem", json_integer(0), "h200.json: limits.max_smem: expected an integer >= 1"},
    {"provenance.ceilings", NULL, "h200.json: provenance.ceilings: missing"},
    {"provenance.bogus", json_string("x"), "h200.json: provenance.bogus: not a field"},
    {"provenance.limits", json_string(""), "h200.json: provenance.limits: expected a non-empty"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    json_t *j = h200_json(), *o = j;
    char path[64], *save = NULL, *part, *next;
    snprintf(path, sizeof path, "%s", cases[i].path);
    part = strtok_r(path, ".", &save);
    while ((next = strtok_r(NULL, ".", &save))) {
      o = json_object_get(o, part);
      assert_non_null(o);
      part = next;
    }
    if (cases[i].val) json_object_set_new(o, part, cases[i].val);
    else json_object_del(o, part);
    const char *m = parse_err(j, &err);
    if (strncmp(m, cases[i].want, strlen(cases[i].want)))
      fail_msg("case %s: got '%s', want '%s...'", cases[i].path, m, cases[i].want);
    json_decref(j);
  }
  /* not JSON: the line and column */
  tm_file *f = malloc(sizeof *f);
  assert_int_equal(tm_parse("bad.json", "{\n  \"name\": }", f, &err), -1);
  assert_true(!strncmp(err.msg, "bad.json: line 2", 16));
  /* a file that is not there */
  assert_int_equal(tm_load("/nonexistent/x.json", f, &err), -1);
  assert_true(!strncmp(err.msg, "/nonexistent/x.json: cannot read", 32));
  /* borrows a row that does not exist, or a GPU row without the gpu member */
  json_t *j = h200_json();
  json_object_set_new(j, "borrows", json_string("nosuch"));
  char *text = json_dumps(j, 0);
  assert_int_equal(tm_parse("h200.json", text, f, &err), 0);
  assert_int_equal(tm_row(f, tg_backend_find, &err), -1);
  assert_true(!strncmp(err.msg, "h200.json: borrows: 'nosuch'", 28));
  free(text);
  json_object_set_new(j, "borrows", json_string("cuda"));
  json_object_del(json_object_get(j, "ceilings"), "gpu");
  text = json_dumps(j, 0);
  assert_int_equal(tm_parse("h200.json", text, f, &err), 0);
  assert_int_equal(tm_row(f, tg_backend_find, &err), -1);
  assert_true(!strncmp(err.msg, "h200.json: ceilings.gpu: missing", 32));
  free(text);
  json_decref(j);
  free(f);
}

/* The hash follows the content, not its spacing or key order. */
static void test_hash(void **state) {
  (void)state;
  json_t *j = h200_json();
  tm_file *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  rt_err err = {0};
  char *t1 = json_dumps(j, JSON_INDENT(4) | JSON_REAL_PRECISION(17));
  char *t2 = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  assert_int_equal(tm_parse("a", t1, a, &err), 0);
  assert_int_equal(tm_parse("b", t2, b, &err), 0);
  assert_string_equal(a->hash, b->hash);
  json_object_set_new(json_object_get(json_object_get(j, "ceilings"), "cache"), "L2",
                      json_real(31457280.0));
  free(t2);
  t2 = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
  assert_int_equal(tm_parse("b", t2, b, &err), 0);
  assert_string_not_equal(a->hash, b->hash);
  assert_true(b->ce.cache[CM_L2 - CM_L1] == 31457280.0);
  free(t1), free(t2), free(a), free(b);
  json_decref(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_load_h200),
    cmocka_unit_test(test_h200_ceilings_from_db),
    cmocka_unit_test(test_errors_name_fields),
    cmocka_unit_test(test_hash),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
