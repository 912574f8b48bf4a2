/*
** test_tm.c -- model-only targets (targets/model/tm.h): the description
** file's parser (every member checked, each error naming the file and the
** JSON field), the H200 file read back against the recorded database's
** ceilings row independently (sqlite3 and jansson here, not tm_load), the
** content hash (spacing does not change it, a number does); the model row
** (family, fingerprint by content, nothing measured, limits); predictions
** stored with origin "predicted" that no reader of measurements sees, the
** predicted pin reported by the C and the Python reader; what-if with half
** the L2 against the direction and the bytes worked out by hand; and the
** H200 check: model:h200.json predicts every recorded trial of the H200
** database as the cuda:0 model does from that database's ceilings and
** calibrations, to 1e-12.
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
#include <sys/stat.h>
#include <unistd.h>

#include "cost_model/cm.h"
#include "db/db.h"
#include "db/rtdb.h"
#include "targets/cuda/gd.h"
#include "targets/kn.h"
#include "targets/model/tm.h"
#include "targets/tg.h"
#include "measure/ms.h"
#include "tuner/tu.h"
#include "tk_exe.h"
#include "tk_run.h"

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
  sqlite3 *h;
  /* immutable: the committed file is in WAL mode, and a plain read-only
  ** open would leave a -shm beside it */
  assert_int_equal(sqlite3_open_v2("file:" H200_DB "?immutable=1", &h,
                                   SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL), SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(h,
                                      "SELECT c.data FROM ceilings c JOIN targets t ON t.id = "
                                      "c.target_id WHERE t.name = 'cuda:0' ORDER BY c.id DESC LIMIT 1",
                                      -1, &st, NULL),
                   SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  json_t *rec = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
  sqlite3_finalize(st);
  sqlite3_close(h);
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

static char dir[64], exe[4096];

/* dir/name with text written into it; its path into out. */
static void write_file(const char *name, const char *text, char *out, size_t cap) {
  snprintf(out, cap, "%s/%s", dir, name);
  FILE *f = fopen(out, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static char *slurp_file(const char *path) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char *s = tk__slurp(f);
  fclose(f);
  return s;
}

/* The model row: the borrowed backend's kernels and model family, the
** family chain of the file's device, a fingerprint that follows the
** content, nothing measured, the file's ceilings and limits. */
static void test_model_row(void **state) {
  (void)state;
  tg_target t, u;
  rt_err err = {0};
  assert_int_equal(tg_resolve("model:" H200_FILE, &t, &err), 0);
  const tg_backend *cuda = tg_backend_find("cuda");
  assert_true(t.be->model_only);
  assert_string_equal(t.name, "model:" H200_FILE);
  assert_ptr_equal(t.be->kernels, cuda->kernels);
  assert_string_equal(t.be->model_family, cuda->model_family);
  assert_non_null(tg_kernel(&t, "gemm"));
  tg_desc d, e;
  assert_int_equal(tg_describe(&t, &d, &err), 0);
  assert_string_equal(d.family.model, "NVIDIA H200");
  assert_string_equal(d.family.arch, "sm_90");
  assert_string_equal(d.family.backend, "model");
  /* the same content elsewhere: the same fingerprint; other content: another */
  char *text = slurp_file(H200_FILE), path[256];
  write_file("copy.json", text, path, sizeof path);
  assert_int_equal(tg_file_target(path, &u, &err), 0);
  assert_int_equal(tg_describe(&u, &e, &err), 0);
  assert_string_equal(d.fingerprint, e.fingerprint);
  assert_string_not_equal(t.name, u.name);
  assert_int_equal(tg_file_target("targets/model/h200-half-l2.json", &u, &err), 0);
  assert_int_equal(tg_describe(&u, &e, &err), 0);
  assert_string_not_equal(d.fingerprint, e.fingerprint);
  /* a path too long for the name: model:BASE, resolved again in this process */
  char longdir[256], lpath[512];
  snprintf(longdir, sizeof longdir, "%s/a-folder-name-long-enough-to-overflow-the-name", dir);
  assert_int_equal(mkdir(longdir, 0700), 0);
  snprintf(lpath, sizeof lpath, "%s/h200x.json", longdir);
  FILE *f = fopen(lpath, "w");
  fputs(text, f);
  fclose(f);
  assert_int_equal(tg_file_target(lpath, &u, &err), 0);
  assert_string_equal(u.name, "model:h200x.json");
  tg_target again;
  assert_int_equal(tg_resolve(u.name, &again, &err), 0);
  assert_int_equal(again.idx[0], u.idx[0]);
  free(text);
  /* errors name the file */
  assert_int_equal(tg_resolve("model:", &u, &err), -1);
  assert_non_null(strstr(err.msg, "expected model:FILE"));
  assert_int_equal(tg_resolve("model:/nonexistent/z.json", &u, &err), -1);
  assert_non_null(strstr(err.msg, "/nonexistent/z.json: cannot read"));
  /* nothing is measured: measure fails every candidate without running it */
  ms_result r;
  assert_int_equal(tg_measure(&t, NULL, "int main(void) { return 0; }", NULL, NULL, &r), -1);
  assert_non_null(strstr(r.msg, "model-only target"));
  const char *why = NULL;
  assert_int_equal(tg_counters_available(&t, &why), 0);
  assert_non_null(why);
  /* the file's ceilings and limits */
  tm_file *tf = malloc(sizeof *tf);
  assert_int_equal(tm_load(H200_FILE, tf, &err), 0);
  cm_ceilings ce;
  assert_int_equal(tg_bench(&t, NULL, &ce, &err), 0);
  assert_memory_equal(&ce, &tf->ce, sizeof ce);
  free(tf);
  char *b = tg_bindings(&t, "M=64,max_threads=512", &err);
  assert_string_equal(b, "M=64,max_threads=512,max_smem=232448,regs_block=65536,sms=132");
  free(b);
  /* a file borrowing the host: its kernels, the CPU models, the host's
  ** family reading of the file's pairs */
  json_t *j = h200_json();
  json_object_set_new(j, "borrows", json_string("host"));
  json_object_set_new(j, "describe", json_pack("{s:s, s:s}", "model", "Test CPU", "isa", "sse4_2 avx avx2 avx512f"));
  json_object_set_new(j, "limits", json_pack("{s:i}", "threads_max", 4));
  char *ht = json_dumps(j, JSON_REAL_PRECISION(17)), hpath[256];
  json_decref(j);
  write_file("cpu.json", ht, hpath, sizeof hpath);
  free(ht);
  assert_int_equal(tg_file_target(hpath, &u, &err), 0);
  const tg_backend *host = tg_backend_find("host");
  assert_ptr_equal(u.be->kernels, host->kernels);
  assert_string_equal(u.be->model_family, host->model_family);
  assert_false(u.be->gpu);
  assert_non_null(tg_kernel(&u, "conv2d"));   /* a host-only template */
  assert_int_equal(tg_describe(&u, &e, &err), 0);
  assert_string_equal(e.family.model, "Test CPU");
  assert_string_equal(e.family.arch, "x86-64 AVX-512");
  assert_string_equal(e.family.backend, "model");
  b = tg_bindings(&u, "M=1", &err);
  assert_string_equal(b, "M=1,threads_max=4");
  free(b);
}

/* The trials and pins rows of the database, read here with sqlite3. */
static long long count_sql(const char *dbf, const char *sql) {
  sqlite3 *h;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open_v2(dbf, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  long long n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

static int count_row(void *ctx, const db_trial_row *r) {
  (void)r;
  ++*(int *)ctx;
  return 0;
}

/* Python's reader: Lookup.predicted of (target, gemm, vars) as "True" or
** "False"; NULL when there is no python3, or in an ASan build (Python would
** need the ASan runtime preloaded; test_python checks the mirror's layout
** there): the caller says so and goes on. */
static char *py_predicted(const char *dbf, const char *target, const char *vars) {
#if defined(__SANITIZE_ADDRESS__)
  (void)dbf, (void)target, (void)vars;
  return NULL;
#endif
  char lib[4200], code[2048];
  char *e = strdup(exe);
  snprintf(lib, sizeof lib, "ROOFTUNE_LIBRTDB=%s/librtdb.so", dirname(e));   /* BUILD/tests/.. */
  free(e);
  snprintf(code, sizeof code,
           "import sys; sys.path.insert(0, 'python')\n"
           "from rooftune import Reader\n"
           "with Reader(%s%s%s) as r: print(r.lookup('%s', 'gemm', '%s').predicted)\n",
           "'", dbf, "'", target, vars);
  const char *argv[] = {"python3", "-c", code, NULL}, *env[] = {lib, "PYTHONDONTWRITEBYTECODE=1", NULL};
  tk_result r = tk_capture(argv, NULL, env);
  if (r.rc == 127) {
    tk_result_free(&r);
    return NULL;
  }
  if (r.rc) fail_msg("python: %s", r.err);
  char *out = strdup(r.out);
  out[strcspn(out, "\n")] = 0;
  tk_result_free(&r);
  return out;
}

/* tune --strategy model on a model target: predictions stored with their
** origin, never seen as measurements; the predicted pin reported. */
static void test_predictions_stored(void **state) {
  (void)state;
  char dbp[128], cmd_target[300];
  snprintf(dbp, sizeof dbp, "%s/pred.db", dir);
  snprintf(cmd_target, sizeof cmd_target, "model:" H200_FILE);
  const char *set = "M=256,N=256,K=256";
  tu_predict_opts o = {.db_path = dbp, .target = cmd_target, .kernel = "gemm", .set = set, .keep = 4,
                       .seed = 1};
  tu_predict_report rep;
  rt_err err = {0};
  assert_int_equal(tu_predict(&o, &rep, &err), 0);
  assert_int_equal(rep.n, 4);
  assert_int_equal(rep.pin_version, 1);
  for (int i = 1; i < rep.n; i++) assert_true(rep.rows[i - 1].time_s <= rep.rows[i].time_s);
  /* the rows, read with sqlite3 */
  assert_int_equal(count_sql(dbp, "SELECT count(*) FROM trials WHERE origin = 'predicted' AND "
                                 "time = predicted AND status = 'ok'"), 4);
  assert_int_equal(count_sql(dbp, "SELECT count(*) FROM trials"), 4);
  assert_int_equal(count_sql(dbp, "SELECT count(*) FROM campaigns WHERE source = 'predicted'"), 1);
  assert_int_equal(count_sql(dbp, "SELECT count(*) FROM pins WHERE predicted = 1"), 1);
  assert_int_equal(count_sql(dbp, "SELECT count(*) FROM ceilings"), 1);
  /* readers of measurements see none of them */
  db *d = db_open(dbp, DB_WRITE, &err);
  assert_non_null(d);
  int n = 0;
  db_trial_filter f = {.target = cmd_target};
  assert_int_equal(db_trials(d, &f, count_row, &n, &err), 0);
  assert_int_equal(n, 0);
  f.predicted = 1;
  assert_int_equal(db_trials(d, &f, count_row, &n, &err), 4);
  db_close(d);
  /* the commands that consume measurements find none */
  const char *cal[] = {exe, "model", "calibrate", "--db", dbp, "--target", cmd_target, "--kernel", "gemm",
                       "--counters", "0", NULL};
  tk_result r = tk_capture(cal, NULL, NULL);
  assert_int_not_equal(r.rc, 0);
  if (!strstr(r.err, "0 measured schedules")) fail_msg("calibrate: %s", r.err);
  tk_result_free(&r);
  char out[200];
  snprintf(out, sizeof out, "%s/x.t4.json", dir);
  const char *exp[] = {exe, "db", "export", "--db", dbp, "--target", cmd_target, "--kernel", "gemm",
                       "--format", "t4", "--out", out, NULL};
  r = tk_capture(exp, NULL, NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "is a prediction, not a measurement"));
  tk_result_free(&r);
  const char *rnd[] = {exe, "tune", "--db", dbp, "--target", cmd_target, "--kernel", "gemm", "--set", set,
                       "--strategy", "random", NULL};
  r = tk_capture(rnd, NULL, NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "model-only"));
  tk_result_free(&r);
  /* given coefficients: half the compute efficiency cannot make the best
  ** prediction faster (every bound's time is the same or longer) */
  char db2[160];
  snprintf(db2, sizeof db2, "%s/coefs.db", dir);
  const char *cf[] = {exe, "tune", "--db", db2, "--target", cmd_target, "--kernel", "gemm", "--set", set,
                      "--strategy", "model", "--budget", "1", "--coefs", "{\"eff_compute\": 0.425}",
                      "--json", NULL};
  r = tk_capture(cf, NULL, NULL);
  if (r.rc) fail_msg("tune --coefs: %s", r.err);
  json_t *cj = json_loads(r.out, 0, NULL);
  assert_string_equal(json_string_value(json_object_get(cj, "coefficients")), "given (--coefs)");
  assert_true(json_is_true(json_object_get(cj, "predicted")));
  double slow = json_real_value(json_object_get(json_array_get(json_object_get(cj, "trials"), 0), "predicted_s"));
  assert_true(slow > rep.rows[0].time_s);
  json_decref(cj);
  tk_result_free(&r);
  /* the C reader and the Python reader report the pin as predicted */
  rtdb *rd;
  assert_int_equal(rtdb_open(dbp, &rd), RTDB_OK);
  rtdb_result res;
  assert_int_equal(rtdb_lookup(rd, cmd_target, "gemm", set, NULL, &res), RTDB_OK);
  assert_int_equal(res.predicted, 1);
  assert_int_equal(res.pin_version, 1);
  assert_true(res.time_s == rep.rows[0].time_s);
  rtdb_close(rd);
  char *py = py_predicted(dbp, cmd_target, set);
  if (py) assert_string_equal(py, "True");
  else print_message("no python3 (or an ASan build): the Python reader's predicted is not checked\n");
  free(py);
  /* a measured trial beside the predictions: pinning by "fastest" takes
  ** the measured one though it is slower, and that pin is not predicted */
  d = db_open(dbp, DB_WRITE, &err);
  assert_non_null(d);
  int64_t tid, wid, sid, cid, tr;
  assert_int_equal(count_sql(dbp, "SELECT count(*) FROM campaigns"), 1);
  sqlite3 *h;
  sqlite3_open_v2(dbp, &h, SQLITE_OPEN_READONLY, NULL);
  sqlite3_stmt *st;
  sqlite3_prepare_v2(h, "SELECT target_id, workload_id, space_id FROM campaigns", -1, &st, NULL);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  tid = sqlite3_column_int64(st, 0), wid = sqlite3_column_int64(st, 1), sid = sqlite3_column_int64(st, 2);
  sqlite3_finalize(st);
  sqlite3_close(h);
  db_campaign c = {.target_id = tid, .workload_id = wid, .space_id = sid, .strategy = "random",
                   .options_json = "{}", .source = "measured", .compiler = "-", .flags = "-",
                   .state = "done"};
  assert_int_equal(db_campaign_new(d, &c, &cid, &err), 0);
  db_trial t;
  db_trial_init(&t);
  t.campaign_id = cid, t.config_json = rep.rows[3].config, t.status = "ok", t.origin = "measured";
  t.time_s = 10 * rep.rows[3].time_s;
  assert_int_equal(db_trial_add(d, &t, &tr, &err), 0);
  char key[512];
  sqlite3_open_v2(dbp, &h, SQLITE_OPEN_READONLY, NULL);
  sqlite3_prepare_v2(h, "SELECT key FROM workloads", -1, &st, NULL);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  snprintf(key, sizeof key, "%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(h);
  db_pin_req pr = {cmd_target, "gemm", key, 0, NULL, NULL};
  int64_t version;
  assert_int_equal(db_pin(d, &pr, &version, &err), 0);
  assert_int_equal(version, 2);
  db_close(d);
  assert_int_equal(count_sql(dbp, "SELECT predicted FROM pins WHERE version = 2"), 0);
  assert_int_equal(count_sql(dbp, "SELECT trial_id FROM pins WHERE version = 2"), tr);
  assert_int_equal(rtdb_open(dbp, &rd), RTDB_OK);
  assert_int_equal(rtdb_lookup(rd, cmd_target, "gemm", set, NULL, &res), RTDB_OK);
  assert_int_equal(res.predicted, 0);
  assert_int_equal(res.pin_version, 2);
  rtdb_close(rd);
  py = py_predicted(dbp, cmd_target, set);
  if (py) assert_string_equal(py, "False");
  free(py);
  /* db check: every pin marked as its trial is (db.h invariant 10) */
  const char *chk[] = {exe, "db", "check", "--db", dbp, NULL};
  r = tk_capture(chk, NULL, NULL);
  if (r.rc) fail_msg("db check: %s%s", r.out, r.err);
  tk_result_free(&r);
  sqlite3_open_v2(dbp, &h, SQLITE_OPEN_READWRITE, NULL);
  assert_int_equal(sqlite3_exec(h, "UPDATE pins SET predicted = 0 WHERE version = 1", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  r = tk_capture(chk, NULL, NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.out, "pin marked predicted or not other than its trial"));
  tk_result_free(&r);
  tu_predict_report_free(&rep);
}

/* What-if with half the L2: gemm 2048^3 (A, B, C of 16 MiB each: 48 MiB)
** fits the model's L2 share on the H200 file (cap_L2 0.8 x 60 MiB = 48
** MiB: no DRAM traffic without --flush) and not with half the L2 (24
** MiB): C is written back for the share (48 - 24) / 48 that does not fit,
** 16 MiB x 0.5 = 8388608 bytes, and A and B are read again, so the DRAM
** bytes go from 0 to more than 8388608 and the time cannot fall; flops,
** L1 and L2 bytes are unchanged. */
static void test_whatif_half_l2(void **state) {
  (void)state;
  const char *cfg = "{\"BM\":128,\"BN\":256,\"BK\":16,\"WM\":128,\"WN\":32,\"TM\":16,\"TN\":8,\"VEC\":2,"
                    "\"STAGES\":2,\"UNROLL\":16,\"SPLITK\":1,\"GROUP_M\":8}";
  const char *argv[] = {exe, "model", "whatif", "--kernel", "gemm", "--set", "M=2048,N=2048,K=2048",
                        "--config", cfg, "--top", "3", "--json", H200_FILE,
                        "targets/model/h200-half-l2.json", NULL};
  tk_result r = tk_capture(argv, NULL, NULL);
  if (r.rc) fail_msg("whatif: %s", r.err);
  json_t *j = json_loads(r.out, 0, NULL);
  assert_non_null(j);
  json_t *c = json_object_get(j, "config"), *a = json_object_get(c, "A"), *b = json_object_get(c, "B");
  json_t *ab = json_object_get(a, "bytes"), *bb = json_object_get(b, "bytes");
  assert_true(json_real_value(json_object_get(ab, "DRAM")) == 0);
  assert_true(json_real_value(json_object_get(bb, "DRAM")) > 8388608);
  assert_true(json_real_value(json_object_get(ab, "L2")) == json_real_value(json_object_get(bb, "L2")));
  assert_true(json_real_value(json_object_get(ab, "L1")) == json_real_value(json_object_get(bb, "L1")));
  assert_true(json_real_value(json_object_get(a, "flops")) == json_real_value(json_object_get(b, "flops")));
  assert_true(json_real_value(json_object_get(b, "time_s")) > json_real_value(json_object_get(a, "time_s")));
  /* the rankings: three best each, other ranks within the space */
  json_t *files = json_object_get(j, "files");
  assert_int_equal(json_array_size(files), 2);
  for (int f = 0; f < 2; f++)
    assert_int_equal(json_array_size(json_object_get(json_array_get(files, (size_t)f), "best")), 3);
  double rho = json_real_value(json_object_get(j, "spearman"));
  assert_true(rho > -1 && rho <= 1);
  json_decref(j);
  tk_result_free(&r);
  /* a broken file: its error, with the field */
  char bad[256];
  char *text = slurp_file(H200_FILE);
  char *p = strstr(text, "\"L2\": [");
  assert_non_null(p);
  memcpy(p, "\"L2\": 7,", 8);   /* bw.L2 no longer an array */
  write_file("bad.json", text, bad, sizeof bad);
  free(text);
  const char *argv2[] = {exe, "model", "whatif", "--kernel", "gemm", "--set", "M=64,N=64,K=64", H200_FILE,
                         bad, NULL};
  r = tk_capture(argv2, NULL, NULL);
  assert_int_equal(r.rc, 1);
  if (!strstr(r.err, "bad.json: line") && !strstr(r.err, "bad.json: ceilings.bw.L2"))
    fail_msg("whatif on a broken file: %s", r.err);
  tk_result_free(&r);
}

/* The H200 check: for every recorded trial of every kernel in the H200
** database, model:h200.json's prediction (its ceilings, its limits bound
** into the space) equals cuda:0's from the database (its latest ceilings
** row, the kernel's coefficients as cm_coefs_load gives them -- the latest
** calibration, or the defaults where it is of an older model form, as
** gemm's two are -- the recorded workload's variables), to 1e-12 relative. Both ask the same register hook, the
** cuda row's (gd_model_setup: the model row forwards to it): with an empty
** compile cache and compiling off, the model's estimate; with NVRTC here,
** three gemm schedules compiled first, so their registers come from cubins
** (no GPU needed) on both sides. */
static void test_h200_check(void **state) {
  (void)state;
  char copy[128], cache[128];
  snprintf(copy, sizeof copy, "%s/h200.db", dir);
  snprintf(cache, sizeof cache, "%s/cache", dir);
  assert_int_equal(mkdir(cache, 0700), 0);
  rt_err err = {0};
  if (access(H200_DB, R_OK)) skip();
  /* a byte copy (the file has no -wal: it is whole), never opened in place */
  char *bytes;
  FILE *in = fopen(H200_DB, "rb"), *out = fopen(copy, "wb");
  assert_true(in && out);
  size_t got;
  bytes = malloc(1 << 16);
  while ((got = fread(bytes, 1, 1 << 16, in)) > 0) assert_int_equal(fwrite(bytes, 1, got, out), got);
  free(bytes);
  fclose(in);
  assert_int_equal(fclose(out), 0);
  db *d = db_open(copy, DB_WRITE, &err);   /* migrated: the copy only */
  assert_non_null(d);
  tg_target cu, mt;
  assert_int_equal(tg_resolve("cuda:0", &cu, &err), 0);
  assert_int_equal(tg_resolve("model:" H200_FILE, &mt, &err), 0);
  int64_t tid;
  assert_int_equal(db_target_latest(d, "cuda:0", &tid, &err), 0);
  cm_ceilings ce_db, ce_file;
  assert_int_equal(cm_ceilings_load(d, tid, "cuda:0", 0, &ce_db, NULL, &err), 0);
  assert_int_equal(tg_bench(&mt, NULL, &ce_file, &err), 0);
  db_close(d);
  sqlite3 *h;
  assert_int_equal(sqlite3_open_v2(copy, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(h,
                       "SELECT k.name, w.key, w.sizes, t.config FROM trials t JOIN campaigns c ON "
                       "c.id = t.campaign_id JOIN workloads w ON w.id = c.workload_id JOIN kernels k ON "
                       "k.id = w.kernel_id JOIN targets g ON g.id = c.target_id WHERE g.name = 'cuda:0' "
                       "AND t.status = 'ok' ORDER BY k.name = 'gemm' DESC, t.id", -1, &st, NULL),
                   SQLITE_OK);
  int compiled = gd_nvrtc_available(NULL) ? 3 : 0, n = 0, kernels = 0, calibrated = 0;
  char seen[256] = ",";
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *kname = (const char *)sqlite3_column_text(st, 0), *key = (const char *)sqlite3_column_text(st, 1);
    json_t *sizes = json_loads((const char *)sqlite3_column_text(st, 2), 0, NULL);
    const char *config = (const char *)sqlite3_column_text(st, 3);
    char item[80];
    snprintf(item, sizeof item, ",%s,", kname);
    if (!strstr(seen, item)) kernels++, snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s,", kname);
    /* cuda:0: the recorded workload's variables, limits included */
    rt_str set = {0}, user = {0};
    const char *var;
    json_t *v;
    json_object_foreach(sizes, var, v) {
      rt_str_printf(&set, "%s%s=%lld", set.n ? "," : "", var, (long long)json_integer_value(v));
      if (!tg_binds("max_threads,max_smem,regs_block,sms", var))
        rt_str_printf(&user, "%s%s=%lld", user.n ? "," : "", var, (long long)json_integer_value(v));
    }
    json_decref(sizes);
    const kn_kernel *k = tg_kernel(&cu, kname);
    assert_non_null(k);
    const cm_kmodel *km = cm_kmodel_find_on(cu.be->model_family, kname);
    assert_non_null(km);
    assert_ptr_equal(cm_kmodel_find_on(mt.be->model_family, kname), km);
    /* the same coefficients: the database's latest calibration of the kernel */
    cm_coefs c;
    d = db_open(copy, DB_READ, &err);
    assert_non_null(d);
    assert_int_equal(cm_coefs_load(d, tid, km, 0, &c, &err), 0);
    calibrated += c.version > 0;   /* gemm's stored ones are of an older form: the defaults, as cuda:0 gets */
    db_close(d);
    /* model:h200.json: the user's variables and the file's limits */
    char *mset = tg_kernel_bindings(&mt, tg_kernel(&mt, kname), user.s, &err);
    assert_non_null(mset);
    sp_space *sc = NULL, *sm = NULL;
    char path[4096];
    sx_arena *ar = sx_arena_new();
    sp_binding *b = NULL;
    int nb = sp_parse_bindings(set.s, ar, &b, &err);
    sc = sp_load_file(rt_project_path(k->space, path, sizeof path), b, nb, &err);
    free(b);
    nb = sp_parse_bindings(mset, ar, &b, &err);
    sm = sp_load_file(rt_project_path(tg_kernel(&mt, kname)->space, path, sizeof path), b, nb, &err);
    free(b);
    sx_arena_free(ar);
    assert_non_null(sc);
    assert_non_null(sm);
    char *km_key = db_workload_key(kname, k->dtype, sm);
    assert_string_equal(km_key, key);   /* the file's limits are the recorded device's */
    free(km_key);
    kn_problem pc, pm;
    kn_problem_from_space(&pc, sc);
    kn_problem_from_space(&pm, sm);
    int *cc = malloc((size_t)sp_nparams(sc) * sizeof *cc), *cm_ = malloc((size_t)sp_nparams(sm) * sizeof *cm_);
    assert_int_equal(sp_config_parse(sc, config, cc, &err), 0);
    assert_int_equal(sp_config_parse(sm, config, cm_, &err), 0);
    int compile = !strcmp(kname, "gemm") && n < compiled;
    cm_pred a, m;
    cu.be->model_setup(&cu, &ce_db, cache, compile);
    assert_int_equal(cm_predict(km, &pc, sc, cc, &ce_db, &c, 0, &a, &err), 0);
    if (compile) {
      cm_gpu_res res;
      assert_int_equal(cm_gpu_resources(kname, &pc, sc, cc, &res), 0);   /* from its cubin */
    }
    mt.be->model_setup(&mt, &ce_file, cache, compile);
    assert_int_equal(cm_predict(km, &pm, sm, cm_, &ce_file, &c, 0, &m, &err), 0);
    if (!(fabs(a.time - m.time) <= 1e-12 * fabs(a.time)) || a.bound != m.bound)
      fail_msg("%s %s: cuda:0 %.17g s (%s), model:h200.json %.17g s (%s)", kname, config, a.time,
               cm_bound_name(a.bound), m.time, cm_bound_name(m.bound));
    n++;
    free(cc), free(cm_), free(mset), free(set.s), free(user.s);
    sp_free(sc), sp_free(sm);
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  print_message("H200 check: %d trials of %d kernels, %d with calibrated coefficients (%d gemm "
                "schedules' registers from cubins)\n", n, kernels, calibrated, compiled);
  assert_true(n >= 267 + 30 + 32 + 32);
  assert_int_equal(calibrated, 30 + 32 + 32);   /* reduction, transpose, stencil: version 1 */
  assert_int_equal(kernels, 4);
}

/* Schema 9 -> 10: pins get predicted, 0 for the pins already there. */
static void test_migrate_9(void **state) {
  (void)state;
  char path[128];
  snprintf(path, sizeof path, "%s/v9.db", dir);
  rt_err err = {0};
  assert_int_equal(db__make_version(path, 9, &err), 0);
  assert_int_equal(count_sql(path, "PRAGMA user_version"), 9);
  db *d = db_open(path, DB_WRITE, &err);
  assert_non_null(d);
  db_close(d);
  assert_int_equal(count_sql(path, "PRAGMA user_version"), 10);
  assert_int_equal(count_sql(path, "SELECT count(*) FROM pragma_table_info('pins') WHERE name = "
                                   "'predicted' AND \"notnull\" = 1 AND dflt_value = '0'"), 1);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/rt-test-tm-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  return find_rooftune("test_tm", exe, sizeof exe);
}

static int teardown(void **state) {
  (void)state;
  tk_rm_rf(dir);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_load_h200),
    cmocka_unit_test(test_h200_ceilings_from_db),
    cmocka_unit_test(test_errors_name_fields),
    cmocka_unit_test(test_hash),
    cmocka_unit_test(test_model_row),
    cmocka_unit_test(test_predictions_stored),
    cmocka_unit_test(test_whatif_half_l2),
    cmocka_unit_test(test_h200_check),
    cmocka_unit_test(test_migrate_9),
  };
  return cmocka_run_group_tests_name("tm", tests, setup, teardown);
}
