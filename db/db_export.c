/*
** db_export.c -- the trials of (target, kernel[, workload]) written out:
** as T4 results valid against the T4 1.0.0 results schema (the inverse of
** db_t4.c's mapping: what it imports back is the same trials), as a JSON
** array of every column, as CSV with a column per configuration
** parameter, or as a Kernel Tuner cache file (the input of its simulation
** mode, kernel_tuner.tune_cache). Rows come in trial order.
*/
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

/* Every column of a trial and its entities' natural keys. */
static const char export_sql[] =
    "SELECT g.name AS target, g.fingerprint AS fingerprint, k.name AS kernel,"
    " k.template_version AS template_version, w.key AS workload, t.*"
    " FROM trials t JOIN campaigns c ON c.id = t.campaign_id JOIN targets g ON g.id = c.target_id"
    " JOIN workloads w ON w.id = c.workload_id JOIN kernels k ON k.id = w.kernel_id"
    " WHERE g.name = ?1 AND k.name = ?2 AND (?3 IS NULL OR w.key = ?3) ORDER BY t.id";

/* Status -> T4 invalidity and correctness (the schema's enum), the time
** measurement's value for a failure (Kernel Tuner's T4 writer puts its
** error class there), and the Kernel Tuner cache's error class; a status
** Kernel Tuner has no class for also writes "rooftune_status". db_t4.c
** maps each back to the same status. */
static const struct {
  const char *status, *invalidity;
  int correct;
  const char *failure, *kt_error;
  int kt_lossy;
} status_map[] = {
  {"ok", "correct", 1, NULL, NULL, 0},
  {"wrong_result", "correctness", 0, "WrongResultConfig", "RuntimeFailedConfig", 1},
  {"compile_error", "compile", 0, "CompilationFailedConfig", "CompilationFailedConfig", 0},
  {"runtime_error", "runtime", 0, "RuntimeFailedConfig", "RuntimeFailedConfig", 0},
  {"timeout", "timeout", 0, "TimeoutConfig", "RuntimeFailedConfig", 1},
  {"invalid", "constraints", 0, "InvalidConfig", "InvalidConfig", 0},
};

static size_t status_index(const char *status) {
  size_t s = 0;
  while (s + 1 < sizeof status_map / sizeof *status_map && strcmp(status_map[s].status, status)) s++;
  return s;
}

/* Columns holding JSON text, exported as JSON values. */
static int is_json_column(const char *name) {
  return !strcmp(name, "config") || !strcmp(name, "counters") || !strcmp(name, "measurements") ||
         !strcmp(name, "runtimes");
}

/* A row as a JSON object of every column (NULL -> null). */
static json_t *row_object(sqlite3_stmt *st) {
  json_t *o = json_object();
  for (int i = 0; i < sqlite3_column_count(st); i++) {
    const char *name = sqlite3_column_name(st, i), *text = (const char *)sqlite3_column_text(st, i);
    json_t *v;
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER: v = json_integer(sqlite3_column_int64(st, i)); break;
    case SQLITE_FLOAT: v = json_real(sqlite3_column_double(st, i)); break;
    case SQLITE_NULL: v = json_null(); break;
    default: v = is_json_column(name) ? json_loads(text, 0, NULL) : NULL;
      if (!v) v = json_string(text);
    }
    json_object_set_new(o, name, v);
  }
  return o;
}

/* Seconds -> milliseconds that db_t4.c (ms * 1e-3) turns back into the
** same double: the shortest decimal (15 to 17 digits) of s * 1e3 that
** does, else s * 1e3 or a neighbour within a few ulps. */
static double to_ms(double s) {
  double ms = s * 1e3, lo = ms, hi = ms;
  for (int digits = 15; digits <= 17; digits++) {
    char buf[40];
    snprintf(buf, sizeof buf, "%.*g", digits, ms);
    double x = strtod(buf, NULL);
    if (x * 1e-3 == s) return x;
  }
  for (int k = 0; k < 4; k++, lo = nextafter(lo, -INFINITY), hi = nextafter(hi, INFINITY)) {
    if (lo * 1e-3 == s) return lo;
    if (hi * 1e-3 == s) return hi;
  }
  return ms;
}

/* Seconds (JSON real or null) -> milliseconds set under key, if known. */
static void set_ms(json_t *o, const char *key, json_t *seconds) {
  if (json_is_number(seconds)) json_object_set_new(o, key, json_real(to_ms(json_number_value(seconds))));
}

/* A stored measurement's value as the T4 schema admits it (number,
** string or array): another JSON value as its text; NULL for null. */
static json_t *t4_value(json_t *v) {
  if (json_is_number(v) || json_is_string(v) || json_is_array(v)) return json_incref(v);
  if (!v || json_is_null(v)) return NULL;
  char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  json_t *s = json_string(t);
  free(t);
  return s;
}

/* A row object (row_object) -> one T4 result: every field the schema
** requires, the times in ms (runtimes always, [] when unknown), the
** objective "time" first among the measurements, then every other
** measurement the trial was imported with. */
static json_t *t4_result(json_t *row) {
  size_t s = status_index(json_string_value(json_object_get(row, "status")));
  json_t *r = json_object(), *times = json_object(), *m = json_object(), *runs = json_array(), *v;
  json_object_set_new(r, "timestamp", json_deep_copy(json_object_get(row, "created")));
  json_object_set(r, "configuration", json_object_get(row, "config"));
  set_ms(times, "compilation", json_object_get(row, "compile_s"));
  set_ms(times, "benchmark", json_object_get(row, "bench_s"));
  set_ms(times, "framework", json_object_get(row, "framework_s"));
  set_ms(times, "search_algorithm", json_object_get(row, "strategy_s"));
  set_ms(times, "validation", json_object_get(row, "verify_s"));
  size_t i;
  json_array_foreach(json_object_get(row, "runtimes"), i, v)
    if (json_is_number(v)) json_array_append_new(runs, json_real(to_ms(json_number_value(v))));
  json_object_set_new(times, "runtimes", runs);
  json_object_set_new(r, "times", times);
  json_object_set_new(r, "invalidity", json_string(status_map[s].invalidity));
  json_object_set_new(r, "correctness", json_integer(status_map[s].correct));
  json_object_set_new(m, "name", json_string("time"));
  if (status_map[s].failure) json_object_set_new(m, "value", json_string(status_map[s].failure));
  else set_ms(m, "value", json_object_get(row, "time"));
  json_object_set_new(m, "unit", json_string("milliseconds"));
  json_t *ms = json_pack("[o]", m);
  json_array_foreach(json_object_get(row, "measurements"), i, v) {
    const char *name = json_string_value(json_object_get(v, "name"));
    json_t *val = t4_value(json_object_get(v, "value")), *unit = json_object_get(v, "unit");
    if (name && strcmp(name, "time") && val)
      json_array_append_new(ms, json_pack("{s:s, s:o, s:s}", "name", name, "value", val, "unit",
                                          json_is_string(unit) ? json_string_value(unit) : ""));
    else
      json_decref(val);
  }
  json_object_set_new(r, "measurements", ms);
  json_object_set_new(r, "objectives", json_pack("[s]", "time"));
  return r;
}

/* RFC 4180 field: quoted when it holds a comma, quote or line break. */
static void csv_field(FILE *out, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

static void csv_value(FILE *out, json_t *v) {
  if (json_is_integer(v)) fprintf(out, "%lld", (long long)json_integer_value(v));
  else if (json_is_real(v)) fprintf(out, "%.17g", json_real_value(v));
  else if (json_is_string(v)) csv_field(out, json_string_value(v));
  else if (v && !json_is_null(v)) {
    char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    csv_field(out, t);
    free(t);
  }
}

/* The columns of the first row but config, then every configuration
** parameter in first-seen order. */
static void write_csv(FILE *out, json_t *rows) {
  json_t *cols = json_array(), *params = json_object(), *row, *v;
  size_t i;
  const char *key;
  json_object_foreach(json_array_get(rows, 0), key, v)
    if (strcmp(key, "config") && strcmp(key, "measurements") && strcmp(key, "runtimes"))
      json_array_append_new(cols, json_string(key));
  json_array_foreach(rows, i, row)
    json_object_foreach(json_object_get(row, "config"), key, v) json_object_set(params, key, json_null());
  json_array_foreach(cols, i, v) {
    fputs(i ? "," : "", out);
    csv_field(out, json_string_value(v));
  }
  json_object_foreach(params, key, v) {
    fputs(json_array_size(cols) ? "," : "", out);
    csv_field(out, key);
  }
  fputc('\n', out);
  json_array_foreach(rows, i, row) {
    size_t c;
    json_array_foreach(cols, c, v) {
      fputs(c ? "," : "", out);
      csv_value(out, json_object_get(row, json_string_value(v)));
    }
    json_t *cfg = json_object_get(row, "config");
    json_object_foreach(params, key, v) {
      fputs(json_array_size(cols) ? "," : "", out);
      csv_value(out, json_object_get(cfg, key));
    }
    fputc('\n', out);
  }
  json_decref(cols);
  json_decref(params);
}

/* ---- What the trials' campaigns say: workloads, dtypes, spaces ---- */

static const char campaigns_sql[] =
    "SELECT c.id, w.key, w.dtype, w.sizes, s.spec, c.provenance FROM campaigns c"
    " JOIN targets g ON g.id = c.target_id JOIN workloads w ON w.id = c.workload_id"
    " JOIN kernels k ON k.id = w.kernel_id JOIN spaces s ON s.id = c.space_id"
    " WHERE g.name = ?1 AND k.name = ?2 AND (?3 IS NULL OR w.key = ?3)"
    " AND EXISTS (SELECT 1 FROM trials t WHERE t.campaign_id = c.id) ORDER BY c.id";

/* The campaigns of the exported trials as objects (row_object), or NULL
** with err. */
static json_t *campaigns_of(db *d, const char *target, const char *kernel, const char *key,
                            rt_err *err) {
  sqlite3_stmt *st = db__query(d, err, campaigns_sql, "sst", target, kernel, key);
  if (!st) return NULL;
  json_t *out = json_array();
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    json_t *o = row_object(st), *v;
    static const char *const json_cols[] = {"sizes", "spec", "provenance"};
    for (size_t i = 0; i < sizeof json_cols / sizeof *json_cols; i++)
      if (json_is_string(v = json_object_get(o, json_cols[i])))
        json_object_set_new(o, json_cols[i], json_loads(json_string_value(v), 0, NULL));
    json_array_append_new(out, o);
  }
  if (rc != SQLITE_DONE) {
    db__fail(d, err, "read");
    json_decref(out);
    out = NULL;
  }
  sqlite3_finalize(st);
  return out;
}

/* The one value of field over the campaigns (a string), or NULL when
** they differ. */
static const char *common(json_t *camps, const char *field) {
  const char *one = NULL;
  size_t i;
  json_t *c;
  json_array_foreach(camps, i, c) {
    const char *v = json_string_value(json_object_get(c, field));
    if (!v || (one && strcmp(one, v))) return NULL;
    one = v;
  }
  return one;
}

/* ---- T4 ---- */

/* One row per configuration and workload (a T4 file holds one result per
** configuration, and db import refuses two): the latest, unless it was
** measured on a busy machine and an earlier one was not. Rows come in id
** order; a reused row is a copy of an earlier measurement. Returns a new
** array of the kept rows in the order of their first appearance;
** *dropped gets how many were left out. */
static int loaded(json_t *row) { return json_integer_value(json_object_get(row, "loaded")) > 0; }

static json_t *one_per_config(json_t *rows, int *dropped) {
  json_t *at = json_object(), *kept = json_array(), *row;
  size_t i;
  *dropped = 0;
  json_array_foreach(rows, i, row) {
    rt_str key = {0};   /* a workload key has no length bound: never truncated */
    rt_str_printf(&key, "%s|%s", json_string_value(json_object_get(row, "workload")),
                  json_string_value(json_object_get(row, "config_hash")));
    json_t *slot = json_object_get(at, key.s);
    if (!slot) json_object_set_new(at, key.s, json_integer((json_int_t)json_array_size(kept)));
    free(key.s);
    if (!slot) {
      json_array_append(kept, row);
      continue;
    }
    ++*dropped;
    size_t k = (size_t)json_integer_value(slot);
    if (!loaded(row) || loaded(json_array_get(kept, k))) json_array_set(kept, k, row);
  }
  json_decref(at);
  return kept;
}

/* rows: one per configuration (one_per_config), dropped left out. */
static json_t *t4_doc(json_t *rows, int dropped, json_t *camps, const char *target, const char *kernel) {
  json_t *results = json_array(), *row, *c, *sources = json_array();
  size_t i;
  json_array_foreach(rows, i, row) json_array_append_new(results, t4_result(row));
  json_array_foreach(camps, i, c)
    if (json_is_object(json_object_get(c, "provenance")))
      json_array_append(sources, json_object_get(c, "provenance"));
  json_t *meta = json_pack("{s:s, s:{s:s, s:s, s:s}, s:s, s:s}", "timeunit", "milliseconds", "tool",
                           "name", "rooftune", "version", RT_VERSION, "commit", rt_commit(), "target",
                           target, "kernel", kernel);
  const char *dtype = common(camps, "dtype"), *key = common(camps, "key");
  if (dtype) json_object_set_new(meta, "dtype", json_string(dtype));
  if (key) json_object_set_new(meta, "workload", json_string(key));
  if (json_array_size(sources)) json_object_set(meta, "sources", sources);
  if (dropped)   /* say so: the file is not every stored trial */
    json_object_set_new(meta, "rooftune_repeats_omitted", json_integer(dropped));
  json_decref(sources);
  return json_pack("{s:s, s:o, s:o}", "schema_version", "1.0.0", "metadata", meta, "results", results);
}

/* ---- Kernel Tuner's cache ---- */

/* Python's str() of a parameter value (Kernel Tuner's cache keys are
** ",".join(str(v) for v in the configuration)). */
static void py_str(rt_str *s, json_t *v) {
  if (json_is_string(v)) {
    rt_str_printf(s, "%s", json_string_value(v));
  } else if (json_is_integer(v)) {
    rt_str_printf(s, "%lld", (long long)json_integer_value(v));
  } else if (json_is_boolean(v)) {
    rt_str_printf(s, "%s", json_is_true(v) ? "True" : "False");
  } else {
    sx_value x = sx_float(json_number_value(v));
    char buf[64];
    sx_repr(&x, buf, sizeof buf);
    rt_str_printf(s, "%s", buf);
  }
}

/* A value's repr (as db_space_spec stores it) evaluated back to JSON. */
static json_t *from_repr(sx_vm *vm, const char *repr, rt_err *err) {
  sx_prog *p = sx_compile(repr, NULL, 0, err);
  sx_value v;
  json_t *j = NULL;
  if (p && !sx_eval(vm, p, NULL, &v, err)) {
    switch (v.t) {
    case SX_INT: j = json_integer((json_int_t)v.u.i); break;
    case SX_FLOAT: j = json_real(v.u.f); break;
    case SX_BOOL: j = json_boolean(v.u.i); break;
    case SX_STR: j = json_stringn(v.u.s->s, v.u.s->len); break;
    default: rt_err_set(err, "not a scalar");
    }
  }
  sx_prog_free(p);
  return j;
}

/* tune_params (parameter -> values) of the campaigns' spaces: one
** parameter list for all, the values of each in order of first
** appearance. NULL with err. */
static json_t *tune_params(json_t *camps, rt_err *err) {
  json_t *tp = NULL, *c;
  sx_vm *vm = sx_vm_new();
  size_t i;
  json_array_foreach(camps, i, c) {
    json_t *params = json_object_get(json_object_get(c, "spec"), "parameters"), *p;
    json_t *these = json_object();
    size_t k;
    json_array_foreach(params, k, p) {
      json_t *values = json_array();
      for (size_t j = 1; j < json_array_size(p); j++) {
        json_t *v = from_repr(vm, json_string_value(json_array_get(p, j)), err);
        if (!v) {
          rt_err_prefix(err, "the space of campaign %lld, parameter %s, value %s",
                        (long long)json_integer_value(json_object_get(c, "id")),
                        json_string_value(json_array_get(p, 0)), json_string_value(json_array_get(p, j)));
          json_decref(values);
          json_decref(these);
          json_decref(tp);
          sx_vm_free(vm);
          return NULL;
        }
        json_array_append_new(values, v);
      }
      json_object_set_new(these, json_string_value(json_array_get(p, 0)), values);
    }
    if (!tp) {
      tp = these;
      continue;
    }
    const char *name;
    json_t *vs, *mine;
    int same = json_object_size(tp) == json_object_size(these);
    json_object_foreach(these, name, vs) same &= json_object_get(tp, name) != NULL;
    if (!same) {
      rt_err_set(err, "the trials were recorded on spaces with different parameters (campaigns "
                 "%lld and earlier): a Kernel Tuner cache holds one parameter list; export one "
                 "workload recorded on one space", (long long)json_integer_value(json_object_get(c, "id")));
      json_decref(these);
      json_decref(tp);
      sx_vm_free(vm);
      return NULL;
    }
    json_object_foreach(these, name, vs) {
      mine = json_object_get(tp, name);
      size_t a, b;
      json_t *x, *y;
      json_array_foreach(vs, a, x) {
        int found = 0;
        json_array_foreach(mine, b, y) found |= json_equal(x, y);
        if (!found) json_array_append(mine, x);
      }
    }
    json_decref(these);
  }
  sx_vm_free(vm);
  return tp;
}

/* Kernel Tuner's problem_size from a workload's sizes: problem_size, or
** problem_size_x/_y/_z (what db_t4.c makes of a cache's), else every
** integer problem variable in order. */
static json_t *problem_size(json_t *sizes) {
  json_t *ps = json_object_get(sizes, "problem_size"), *out = json_array(), *v;
  if (json_is_integer(ps)) {
    json_decref(out);
    return json_incref(ps);
  }
  static const char *const dims[] = {"problem_size_x", "problem_size_y", "problem_size_z"};
  for (size_t i = 0; i < 3 && json_is_integer(v = json_object_get(sizes, dims[i])); i++)
    json_array_append(out, v);
  const char *k;
  if (!json_array_size(out))
    json_object_foreach(sizes, k, v) if (json_is_integer(v)) json_array_append(out, v);
  return out;
}

static void set_kt_ms(json_t *e, const char *key, json_t *seconds) {
  if (json_is_number(seconds)) json_object_set_new(e, key, json_real(to_ms(json_number_value(seconds))));
}

/* The cache document, or NULL with err; *n gets its number of entries
** (rows: one per configuration, one_per_config). */
static json_t *kt_doc(json_t *rows, json_t *camps, const char *target, const char *kernel, int *n,
                      rt_err *err) {
  const char *key = common(camps, "key");
  if (!key) {
    rt_err_set(err, "the trials span %zu campaigns of several workloads: a Kernel Tuner cache holds "
               "one; choose it with --set", json_array_size(camps));
    return NULL;
  }
  json_t *tp = tune_params(camps, err);
  if (!tp) return NULL;
  json_t *keys = json_array(), *cache = json_object(), *row, *v;
  const char *name;
  json_object_foreach(tp, name, v) json_array_append_new(keys, json_string(name));
  size_t i;
  json_array_foreach(rows, i, row) {
    json_t *cfg = json_object_get(row, "config"), *e = json_object();
    rt_str k = {0};
    size_t p;
    json_array_foreach(keys, p, v) {
      if (p) rt_str_printf(&k, ",");
      py_str(&k, json_object_get(cfg, json_string_value(v)));
      json_object_set(e, json_string_value(v), json_object_get(cfg, json_string_value(v)));
    }
    if (json_object_get(cache, k.s)) {   /* two configurations Python prints alike: the first */
      free(k.s);
      json_decref(e);
      continue;
    }
    size_t s = status_index(json_string_value(json_object_get(row, "status")));
    if (status_map[s].kt_error) {
      json_object_set_new(e, "__error__", json_string(status_map[s].kt_error));
      if (status_map[s].kt_lossy) json_object_set_new(e, "rooftune_status", json_string(status_map[s].status));
    } else {
      set_kt_ms(e, "time", json_object_get(row, "time"));
    }
    json_t *times = json_array();
    json_array_foreach(json_object_get(row, "runtimes"), p, v)
      if (json_is_number(v)) json_array_append_new(times, json_real(to_ms(json_number_value(v))));
    if (json_is_array(json_object_get(row, "runtimes"))) json_object_set(e, "times", times);
    json_decref(times);
    set_kt_ms(e, "compile_time", json_object_get(row, "compile_s"));
    set_kt_ms(e, "verification_time", json_object_get(row, "verify_s"));
    set_kt_ms(e, "benchmark_time", json_object_get(row, "bench_s"));
    set_kt_ms(e, "strategy_time", json_object_get(row, "strategy_s"));
    set_kt_ms(e, "framework_time", json_object_get(row, "framework_s"));
    json_object_set(e, "timestamp", json_object_get(row, "created"));
    json_array_foreach(json_object_get(row, "measurements"), p, v) {
      const char *mn = json_string_value(json_object_get(v, "name"));
      if (mn && !json_object_get(e, mn) && strcmp(mn, "time"))
        json_object_set(e, mn, json_object_get(v, "value"));
    }
    json_object_set_new(cache, k.s, e);
    free(k.s);
  }
  *n = (int)json_object_size(cache);
  json_t *first = json_array_get(camps, 0), *spaces = json_array(), *c;
  json_array_foreach(camps, i, c) json_array_append(spaces, json_object_get(c, "spec"));
  return json_pack("{s:s, s:s, s:o, s:o, s:o, s:s, s:O?, s:{s:s, s:s, s:s, s:o}, s:o}", "device_name",
                   target, "kernel_name", kernel, "problem_size",
                   problem_size(json_object_get(first, "sizes")), "tune_params_keys", keys,
                   "tune_params", tp, "objective", "time", "dtype", json_object_get(first, "dtype"),
                   "rooftune", "version", RT_VERSION, "commit", rt_commit(), "workload", key, "spaces",
                   spaces, "cache", cache);
}

/* ---- The formats ---- */

static const char *const formats[] = {"t4", "json", "csv", "kt-cache"};

int db_export(db *d, const char *target, const char *kernel, const char *workload_key,
              const char *format, FILE *out, int *ntrials, rt_err *err) {
  size_t f = 0;
  while (f < sizeof formats / sizeof *formats && strcmp(formats[f], format)) f++;
  if (f == sizeof formats / sizeof *formats) {
    rt_err_set(err, "unknown export format '%s' (expected t4, json, csv or kt-cache)", format);
    return -1;
  }
  sqlite3_stmt *st = db__query(d, err, export_sql, "sst", target, kernel, workload_key);
  if (!st) return -1;
  json_t *rows = json_array(), *camps = NULL, *doc = NULL;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) json_array_append_new(rows, row_object(st));
  if (rc != SQLITE_DONE) db__fail(d, err, "read");
  sqlite3_finalize(st);
  int ok = rc == SQLITE_DONE;
  if (ok && !json_array_size(rows)) {
    rt_err_set(err, "no trials of kernel %s on target %s%s%s", kernel, target,
               workload_key ? " for " : "", workload_key ? workload_key : "");
    ok = 0;
  }
  int dropped = 0;
  for (size_t i = 0; ok && (!strcmp(format, "t4") || !strcmp(format, "kt-cache")) &&
                     i < json_array_size(rows); i++) {
    const char *origin = json_string_value(json_object_get(json_array_get(rows, i), "origin"));
    if (origin && !strcmp(origin, "predicted")) {   /* db.h invariant 10 */
      rt_err_set(err, "trial %lld of %s on %s is a prediction, not a measurement: %s files hold "
                 "measurements (export predictions as json or csv, which carry their origin)",
                 (long long)json_integer_value(json_object_get(json_array_get(rows, i), "id")), kernel,
                 target, format);
      ok = 0;
    }
  }
  if (ok && (!strcmp(format, "t4") || !strcmp(format, "kt-cache"))) {
    ok = (camps = campaigns_of(d, target, kernel, workload_key, err)) != NULL;
    json_t *kept = one_per_config(rows, &dropped);   /* results files: one per configuration */
    json_decref(rows);
    rows = kept;
  }
  if (ok) {
    *ntrials = (int)json_array_size(rows);
    if (!strcmp(format, "csv")) write_csv(out, rows);
    else if (!strcmp(format, "json")) doc = json_incref(rows);
    else if (!strcmp(format, "t4")) doc = t4_doc(rows, dropped, camps, target, kernel);
    else ok = (doc = kt_doc(rows, camps, target, kernel, ntrials, err)) != NULL;
  }
  if (doc) {
    json_dumpf(doc, out, JSON_COMPACT | JSON_REAL_PRECISION(17));
    fputc('\n', out);
  }
  if (ok && (fflush(out) || ferror(out))) {
    rt_err_set(err, "write error");
    ok = 0;
  }
  json_decref(doc);
  json_decref(camps);
  json_decref(rows);
  return ok ? 0 : -1;
}
