/*
** db_t4.c -- import of community T4 results files (Kernel Tuner, BAT, the
** autotuning benchmark hub; plain or gzip) into one campaign. Every
** result's configuration must belong to the space it was recorded on;
** the status comes from T4's invalidity/correctness, times are converted
** to seconds. One transaction: a bad file stores nothing.
*/
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "db.h"

/* T4 invalidity -> rooftune status (correctness 0 on "correct" is a wrong
** result). */
static const struct { const char *t4, *status; } status_table[] = {
  {"correct", "ok"}, {"compile", "compile_error"}, {"runtime", "runtime_error"},
  {"timeout", "timeout"}, {"invalid", "invalid"}, {"constraints", "invalid"},
};

/* Time units of metadata.timeunit, in seconds. */
static const struct { const char *name; double s; } units[] = {
  {"seconds", 1}, {"s", 1}, {"milliseconds", 1e-3}, {"miliseconds", 1e-3}, {"ms", 1e-3},
  {"microseconds", 1e-6}, {"us", 1e-6}, {"nanoseconds", 1e-9}, {"ns", 1e-9},
};

/* Whole file (gzip or plain: zlib reads both) into a NUL-terminated buffer. */
static char *slurp(const char *path, size_t *n, rt_err *err) {
  gzFile f = gzopen(path, "rb");
  if (!f) {
    rt_err_set(err, "%s: cannot open", path);
    return NULL;
  }
  size_t cap = 1 << 20;
  char *buf = rt_malloc(cap);
  *n = 0;
  for (int got; (got = gzread(f, buf + *n, (unsigned)(cap - *n - 1))) > 0;) {
    *n += (size_t)got;
    if (cap - *n - 1 == 0) buf = rt_realloc(buf, cap *= 2);
  }
  int zerr;
  const char *msg = gzerror(f, &zerr);   /* belongs to f: used before gzclose */
  if (zerr != Z_OK && zerr != Z_STREAM_END) {
    rt_err_set(err, "%s: %s", path, msg);
    gzclose(f);
    free(buf);
    return NULL;
  }
  gzclose(f);
  buf[*n] = 0;
  return buf;
}

static double num(json_t *j) { return json_is_number(j) ? json_number_value(j) : NAN; }

/* One result -> a trial row; -1 with err naming results[i]. */
static int add_result(db *d, json_t *r, size_t i, sp_space *sp, double unit, int64_t campaign,
                      rt_err *err) {
  json_t *cfg = json_object_get(r, "configuration");
  const char *inv = json_string_value(json_object_get(r, "invalidity"));
  if (!json_is_object(cfg) || !inv) {
    rt_err_set(err, "results[%zu]: expected \"configuration\" (object) and \"invalidity\" (string)", i);
    return -1;
  }
  db_trial t;
  db_trial_init(&t);
  t.campaign_id = campaign;
  for (size_t k = 0; k < sizeof status_table / sizeof *status_table; k++)
    if (!strcmp(inv, status_table[k].t4)) t.status = status_table[k].status;
  if (!t.status) {
    rt_err_set(err, "results[%zu].invalidity: unknown value \"%s\"", i, inv);
    return -1;
  }
  json_t *corr = json_object_get(r, "correctness");
  if (!strcmp(t.status, "ok") && corr && num(corr) == 0) t.status = "wrong_result";
  char *text = json_dumps(cfg, JSON_COMPACT);
  int *c = rt_malloc((size_t)sp_nparams(sp) * sizeof *c);
  rt_err e = {0};
  int bad = sp_config_parse(sp, text, c, &e);
  free(text);
  if (bad) {
    free(c);
    rt_err_set(err, "results[%zu].%s", i, e.msg);
    return -1;
  }
  char *canon = sp_config_json(sp, c);
  free(c);
  t.config_json = canon;
  json_t *ms = json_object_get(r, "measurements");
  for (size_t k = 0; k < json_array_size(ms); k++) {
    json_t *m = json_array_get(ms, k);
    if (json_is_string(json_object_get(m, "name")) &&
        !strcmp(json_string_value(json_object_get(m, "name")), "time"))
      t.time_s = num(json_object_get(m, "value")) * unit;
  }
  if (!strcmp(t.status, "ok") && !(t.time_s >= 0)) {
    free(canon);
    rt_err_set(err, "results[%zu]: a correct result without a numeric \"time\" measurement", i);
    return -1;
  }
  if (strcmp(t.status, "ok")) t.time_s = NAN;   /* failed trials carry no time */
  json_t *times = json_object_get(r, "times"), *runs = json_object_get(times, "runtimes");
  t.compile_s = num(json_object_get(times, "compilation")) * unit;
  t.verify_s = num(json_object_get(times, "validation")) * unit;
  t.framework_s = num(json_object_get(times, "framework")) * unit;
  size_t nr = json_array_size(runs);
  if (nr && !strcmp(t.status, "ok")) {
    double sum = 0, sq = 0, mn = INFINITY;
    for (size_t k = 0; k < nr; k++) {
      double x = num(json_array_get(runs, k)) * unit;
      sum += x;
      sq += x * x;
      mn = fmin(mn, x);
    }
    t.repeats = (int)nr;
    t.mean_s = sum / (double)nr;
    t.sd_s = nr > 1 ? sqrt(fmax(0, (sq - sum * sum / (double)nr) / (double)(nr - 1))) : 0;
    t.min_s = mn;
    t.bench_s = sum;
  }
  t.timestamp = json_string_value(json_object_get(r, "timestamp"));
  int rc = db_trial_add(d, &t, NULL, err);
  if (rc) rt_err_prefix(err, "results[%zu]", i);
  free(canon);
  return rc;
}

static int import_json(db *d, json_t *root, const char *path, sp_space *sp, const char *target,
                       const char *kernel, int64_t *campaign, int *ntrials, rt_err *err) {
  json_t *results = json_object_get(root, "results");
  if (!json_is_object(root) || !json_is_array(results)) {
    rt_err_set(err, "expected a T4 object with a \"results\" array");
    return -1;
  }
  const char *tu = json_string_value(json_object_get(json_object_get(root, "metadata"), "timeunit"));
  double unit = tu ? NAN : 1e-3; /* T4 default: milliseconds */
  for (size_t k = 0; tu && k < sizeof units / sizeof *units; k++)
    if (!strcmp(tu, units[k].name)) unit = units[k].s;
  if (isnan(unit)) {
    rt_err_set(err, "metadata.timeunit: unknown unit \"%s\"", tu);
    return -1;
  }
  int64_t tid, kid, wid, sid;
  char *key = db_workload_key(kernel, "f32", sp), *sizes = db_workload_sizes(sp),
       *spec = db_space_spec(sp), desc[600], source[600];
  json_t *jp = json_string(path);
  char *jpath = json_dumps(jp, JSON_ENCODE_ANY);
  snprintf(desc, sizeof desc, "{\"imported_from\":%s}", jpath);
  snprintf(source, sizeof source, "t4:%s", path);
  free(jpath);
  json_decref(jp);
  int rc = db_target_id(d, target, "external", desc, &tid, err) ||
           db_kernel_id(d, kernel, "external", &kid, err) ||
           db_workload_id(d, kid, key, sizes, "f32", "", &wid, err) ||
           db_space_id(d, spec, &sid, err);
  free(key);
  free(sizes);
  free(spec);
  if (rc) return -1;
  int *def = rt_malloc((size_t)sp_nparams(sp) * sizeof *def);
  if (sp_default_config(sp, def) && sp_valid(sp, def, NULL)) {
    char *dj = sp_config_json(sp, def);
    rc = db_kernel_set_default(d, kid, dj, err);
    free(dj);
  }
  free(def);
  if (rc) return -1;
  db_campaign c = {.target_id = tid, .workload_id = wid, .space_id = sid, .strategy = "imported",
                   .options_json = "{}", .seed = 0, .budget = (int64_t)json_array_size(results),
                   .source = source, .compiler = "", .flags = "", .state = "imported"};
  if (db_campaign_new(d, &c, campaign, err)) return -1;
  for (size_t i = 0; i < json_array_size(results); i++)
    if (add_result(d, json_array_get(results, i), i, sp, unit, *campaign, err)) return -1;
  *ntrials = (int)json_array_size(results);
  return 0;
}

int db_import_t4(db *d, const char *path, sp_space *sp, const char *target, const char *kernel,
                 int64_t *campaign, int *ntrials, rt_err *err) {
  size_t n;
  char *text = slurp(path, &n, err);
  if (!text) return -1;
  json_error_t je;
  json_t *root = json_loadb(text, n, 0, &je);
  free(text);
  if (!root) {
    rt_err_set(err, "%s:%d:%d: JSON syntax error: %s", path, je.line, je.column, je.text);
    return -1;
  }
  int rc = db_begin(d, err);
  if (!rc && (rc = import_json(d, root, path, sp, target, kernel, campaign, ntrials, err))) {
    db_rollback(d);
    rt_err_prefix(err, "%s", path);
  }
  if (!rc) rc = db_commit(d, err);
  json_decref(root);
  return rc;
}
