/*
** db_t4.c -- import of results files into one campaign: community T4
** results (Kernel Tuner, BAT, the autotuning benchmark hub) and Kernel
** Tuner's cache files (what tune_kernel(..., cachefile=...) writes and its
** simulation mode reads), plain or gzip, the format recognised by content.
**
** An import is read and checked whole before any database is touched
** (db_import_read): statuses from T4's invalidity enum or Kernel Tuner's
** error classes, every time converted to seconds, every configuration in
** the space (a T1 file's, or one inferred from the file) and none twice.
** Storing it (db_import_store) is one transaction: a bad file stores
** nothing, and an unreadable one creates nothing.
**
** What a trial keeps of a result: the objective ("time") and the
** statistics of the per-repeat run times, every measurement as the file
** wrote it (name, value, unit), the run times themselves, the compile,
** validation, benchmark, framework and search-algorithm times; the
** campaign keeps the file's provenance (format, tool, schema version, its
** header: everything but the results).
*/
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "db.h"

/* T4 invalidity -> rooftune status. "correct" with correctness 0 is a
** wrong result too, and "invalid" is read as "constraints": rooftune wrote
** both before schema 6; neither is in the T4 schema. */
static const struct { const char *t4, *status; } t4_status[] = {
  {"correct", "ok"}, {"correctness", "wrong_result"}, {"compile", "compile_error"},
  {"runtime", "runtime_error"}, {"timeout", "timeout"}, {"constraints", "invalid"},
  {"invalid", "invalid"},
};
#define T4_SCHEMA_VALUES "\"correct\", \"correctness\", \"compile\", \"runtime\", \"timeout\", \"constraints\""

/* Kernel Tuner's error classes (util.py) -> rooftune status. */
static const struct { const char *name, *status; } kt_errors[] = {
  {"CompilationFailedConfig", "compile_error"}, {"RuntimeFailedConfig", "runtime_error"},
  {"InvalidConfig", "invalid"}, {"ErrorConfig", "runtime_error"},
};

/* The statuses a cache entry's "rooftune_status" may name (rooftune's own
** exports: the failures Kernel Tuner has no class for). */
static const char *const failed_statuses[] = {"compile_error", "runtime_error", "timeout",
                                               "wrong_result", "invalid"};

/* Time units (metadata.timeunit, a measurement's unit), in seconds. */
static const struct { const char *name; double s; } units[] = {
  {"seconds", 1}, {"s", 1}, {"milliseconds", 1e-3}, {"miliseconds", 1e-3}, {"ms", 1e-3},
  {"microseconds", 1e-6}, {"us", 1e-6}, {"nanoseconds", 1e-9}, {"ns", 1e-9},
};

/* One result, normalised. */
typedef struct rec {
  char *where;               /* "results[12]", "cache[\"16,1\"]" */
  json_t *config;            /* its configuration (a reference) */
  db_trial t;                /* strings below owned by the rec */
  char *canon, *measurements, *runtimes;
} rec;

struct db_import {
  char *path, *format, *kernel, *dtype;
  sp_space *sp;
  int own_sp;
  json_t *root;              /* the file (timestamps point into it) */
  json_t *provenance;
  rec *r;
  int n;
};

/* ---- Reading the file ---- */

/* Whole file (gzip or plain: zlib reads both) into a NUL-terminated
** buffer. gzerror's text belongs to the gzFile: it is copied into err
** before the file is closed. */
static char *slurp(const char *path, size_t *n, rt_err *err) {
  errno = 0;
  gzFile f = gzopen(path, "rb");
  if (!f) {
    rt_err_set(err, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
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
  const char *msg = gzerror(f, &zerr);
  if (zerr != Z_OK && zerr != Z_STREAM_END) {
    size_t lp = strlen(path);   /* zlib's message starts "PATH: " */
    if (!strncmp(msg, path, lp) && !strncmp(msg + lp, ": ", 2)) msg += lp + 2;
    rt_err_set(err, "%s: cannot read: %s", path, zerr == Z_ERRNO ? strerror(errno) : msg);
    gzclose(f);
    free(buf);
    return NULL;
  }
  gzclose(f);
  buf[*n] = 0;
  return buf;
}

/* Python's json writes NaN, Infinity and -Infinity, which are not JSON: a
** copy of text with each such token outside strings replaced by null, or
** NULL when there is none. */
static char *python_specials(const char *text, size_t n, size_t *out_n) {
  static const char *const toks[] = {"-Infinity", "Infinity", "NaN"};
  rt_str s = {0};
  int changed = 0;
  for (size_t i = 0; i < n;) {
    if (text[i] == '"') {   /* copy a string whole */
      size_t j = i + 1;
      while (j < n && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      j = j < n ? j + 1 : n;
      rt_str_printf(&s, "%.*s", (int)(j - i), text + i);
      i = j;
      continue;
    }
    size_t k = 0;
    while (k < 3 && strncmp(text + i, toks[k], strlen(toks[k]))) k++;
    if (k < 3) {
      rt_str_printf(&s, "null");
      i += strlen(toks[k]);
      changed = 1;
    } else {
      rt_str_printf(&s, "%c", text[i++]);
    }
  }
  if (!changed) {
    free(s.s);
    return NULL;
  }
  *out_n = s.n;
  return s.s;
}

/* An unclosed Kernel Tuner cache (tune_kernel interrupted) closed as
** util.correct_open_cache does: a trailing comma dropped, "}\n}" added.
** NULL when text does not look like one. */
static char *close_cache(const char *text, size_t n, size_t *out_n) {
  while (n && isspace((unsigned char)text[n - 1])) n--;
  if (!strstr(text, "\"cache\"") || n < 3 || !memcmp(text + n - 3, "}\n}", 3) ||
      !memcmp(text + n - 3, "}}}", 3))
    return NULL;
  if (text[n - 1] == ',') n--;
  rt_str s = {0};
  rt_str_printf(&s, "%.*s}\n}", (int)n, text);
  *out_n = s.n;
  return s.s;
}

/* The file parsed: as it is, else with Python's NaN/Infinity read as null,
** else closed as an interrupted cache. The first error is the one
** reported. */
static json_t *load_json(const char *path, rt_err *err) {
  size_t n;
  char *text = slurp(path, &n, err);
  if (!text) return NULL;
  json_error_t je, je2;
  json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
  for (int attempt = 0; !root && attempt < 2; attempt++) {
    size_t m;
    char *fixed = attempt == 0 ? python_specials(text, n, &m) : close_cache(text, n, &m);
    if (!fixed) continue;
    free(text);
    text = fixed;
    n = m;
    root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je2);
  }
  free(text);
  if (!root)
    rt_err_set(err, "%s:%d:%d: JSON syntax error: %s", path, je.line, je.column, je.text);
  return root;
}

/* ---- Fields ---- */

static const char *unit_name_list(void) {
  return "seconds, s, milliseconds, ms, microseconds, us, nanoseconds, ns";
}

/* Seconds per unit of a unit name; NAN when unknown. */
static double unit_of(const char *name) {
  for (size_t k = 0; k < sizeof units / sizeof *units; k++)
    if (!strcmp(name, units[k].name)) return units[k].s;
  return NAN;
}

/* A time field: absent leaves *x; a finite non-negative number is stored
** times unit; anything else is an error naming WHERE.FIELD. */
static int get_time(json_t *obj, const char *key, double unit, double *x, const char *where,
                    const char *field, rt_err *err) {
  json_t *v = json_object_get(obj, key);
  if (!v) return 0;
  double t = json_is_number(v) ? json_number_value(v) : NAN;
  if (!(t >= 0) || isinf(t)) {
    char *shown = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    rt_err_set(err, "%s.%s: expected a non-negative number (a time), got %s", where, field,
               shown ? shown : "?");
    free(shown);
    return -1;
  }
  *x = t * unit;
  return 0;
}

/* The per-repeat run times (an array of times in unit): their statistics
** into t when the result is ok, and the times in seconds as JSON text.
** bench: the benchmark's own time (NAN: the sum of the runs). */
static int get_runtimes(json_t *runs, double unit, rec *r, const char *field, rt_err *err) {
  if (!runs) return 0;
  if (!json_is_array(runs)) {
    rt_err_set(err, "%s.%s: expected an array of run times", r->where, field);
    return -1;
  }
  size_t nr = json_array_size(runs);
  json_t *secs = json_array();
  double sum = 0, sq = 0, mn = INFINITY, raw = 0;
  for (size_t k = 0; k < nr; k++) {
    json_t *v = json_array_get(runs, k);
    double x = json_is_number(v) ? json_number_value(v) * unit : NAN;
    raw += json_is_number(v) ? json_number_value(v) : 0;
    if (!(x >= 0) || isinf(x)) {
      char *shown = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
      rt_err_set(err, "%s.%s[%zu]: expected a non-negative number (a run time), got %s", r->where,
                 field, k, shown ? shown : "?");
      free(shown);
      json_decref(secs);
      return -1;
    }
    json_array_append_new(secs, json_real(x));
    sum += x;
    sq += x * x;
    mn = fmin(mn, x);
  }
  if (nr) {   /* an empty list records nothing */
    r->runtimes = json_dumps(secs, JSON_COMPACT | JSON_REAL_PRECISION(17));
    r->t.runtimes_json = r->runtimes;
  }
  json_decref(secs);
  if (nr && !strcmp(r->t.status, "ok")) {
    r->t.repeats = (int)nr;
    r->t.mean_s = sum / (double)nr;
    r->t.sd_s = nr > 1 ? sqrt(fmax(0, (sq - sum * sum / (double)nr) / (double)(nr - 1))) : 0;
    r->t.min_s = mn;
    if (isnan(r->t.bench_s)) r->t.bench_s = raw * unit;   /* summed in the file's unit: exports
                                                          ** in ms give back this double */
  }
  return 0;
}

static int get_timestamp(json_t *o, const char *key, rec *r, rt_err *err) {
  json_t *v = json_object_get(o, key);
  if (v && !json_is_string(v)) {
    rt_err_set(err, "%s.%s: expected a string", r->where, key);
    return -1;
  }
  r->t.timestamp = json_string_value(v);
  return 0;
}

static char *where_index(const char *what, size_t i) {
  rt_str s = {0};
  rt_str_printf(&s, "%s[%zu]", what, i);
  return s.s;
}

/* ---- T4 ---- */

/* One T4 result -> r (status, times, measurements; the configuration as
** given). unit: metadata.timeunit in seconds. */
static int t4_result(json_t *res, size_t i, double unit, rec *r, rt_err *err) {
  r->where = where_index("results", i);
  db_trial_init(&r->t);
  json_t *cfg = json_object_get(res, "configuration"), *inv = json_object_get(res, "invalidity");
  if (!json_is_object(res) || !json_is_object(cfg) || !json_is_string(inv)) {
    rt_err_set(err, "%s: expected an object with \"configuration\" (object) and \"invalidity\" "
               "(string)", r->where);
    return -1;
  }
  r->config = json_incref(cfg);
  const char *iv = json_string_value(inv);
  for (size_t k = 0; k < sizeof t4_status / sizeof *t4_status; k++)
    if (!strcmp(iv, t4_status[k].t4)) r->t.status = t4_status[k].status;
  if (!r->t.status) {
    rt_err_set(err, "%s.invalidity: unknown value \"%s\" (the T4 schema's are " T4_SCHEMA_VALUES ")",
               r->where, iv);
    return -1;
  }
  json_t *corr = json_object_get(res, "correctness");
  if (corr && !json_is_number(corr)) {
    rt_err_set(err, "%s.correctness: expected a number", r->where);
    return -1;
  }
  if (!strcmp(r->t.status, "ok") && corr && json_number_value(corr) == 0) r->t.status = "wrong_result";
  int ok = !strcmp(r->t.status, "ok");

  json_t *ms = json_object_get(res, "measurements");
  if (ms && !json_is_array(ms)) {
    rt_err_set(err, "%s.measurements: expected an array", r->where);
    return -1;
  }
  int seen_time = 0;
  for (size_t k = 0; k < json_array_size(ms); k++) {
    json_t *m = json_array_get(ms, k), *name = json_object_get(m, "name"),
           *un = json_object_get(m, "unit");
    if (!json_is_object(m) || !json_is_string(name) || (un && !json_is_string(un))) {
      rt_err_set(err, "%s.measurements[%zu]: expected an object with \"name\" and \"value\" "
                 "(and \"unit\", a string)", r->where, k);
      return -1;
    }
    if (strcmp(json_string_value(name), "time")) continue;
    if (seen_time++) {
      rt_err_set(err, "%s.measurements[%zu]: a second \"time\" measurement", r->where, k);
      return -1;
    }
    double u = unit;
    if (un && json_string_length(un) && isnan(u = unit_of(json_string_value(un)))) {
      rt_err_set(err, "%s.measurements[%zu].unit: \"%s\" is not a time unit (expected %s)",
                 r->where, k, json_string_value(un), unit_name_list());
      return -1;
    }
    json_t *v = json_object_get(m, "value");
    double t = json_is_number(v) ? json_number_value(v) * u : NAN;
    if (ok && (!(t >= 0) || isinf(t))) {
      rt_err_set(err, "%s: a correct result without a numeric \"time\" measurement "
                 "(measurements[%zu].value)", r->where, k);
      return -1;
    }
    if (ok) r->t.time_s = t;   /* failed results carry no time */
  }
  if (ok && !seen_time) {
    rt_err_set(err, "%s: a correct result without a numeric \"time\" measurement", r->where);
    return -1;
  }
  if (json_array_size(ms)) {
    r->measurements = json_dumps(ms, JSON_COMPACT | JSON_REAL_PRECISION(17));
    r->t.measurements_json = r->measurements;
  }

  json_t *times = json_object_get(res, "times");
  if (times && !json_is_object(times)) {
    rt_err_set(err, "%s.times: expected an object", r->where);
    return -1;
  }
  /* Kernel Tuner writes "compilation"; the schema's property is
  ** "compilation_time": either is read. */
  static const struct { const char *key; size_t off; } fields[] = {
    {"compilation", offsetof(db_trial, compile_s)}, {"compilation_time", offsetof(db_trial, compile_s)},
    {"validation", offsetof(db_trial, verify_s)}, {"framework", offsetof(db_trial, framework_s)},
    {"search_algorithm", offsetof(db_trial, strategy_s)}, {"benchmark", offsetof(db_trial, bench_s)},
  };
  for (size_t k = 0; k < sizeof fields / sizeof *fields; k++) {
    char field[48];
    snprintf(field, sizeof field, "times.%s", fields[k].key);
    if (get_time(times, fields[k].key, unit, (double *)((char *)&r->t + fields[k].off), r->where,
                 field, err))
      return -1;
  }
  return get_runtimes(json_object_get(times, "runtimes"), unit, r, "times.runtimes", err) ||
         get_timestamp(res, "timestamp", r, err) ? -1 : 0;
}

static int read_t4(db_import *im, rt_err *err) {
  json_t *root = im->root, *results = json_object_get(root, "results"),
         *meta = json_object_get(root, "metadata"), *ver = json_object_get(root, "schema_version");
  if (!json_is_array(results)) {
    rt_err_set(err, "results: expected an array");
    return -1;
  }
  if (meta && !json_is_object(meta)) {
    rt_err_set(err, "metadata: expected an object");
    return -1;
  }
  if (ver && (!json_is_string(ver) || strncmp(json_string_value(ver), "1.", 2))) {
    rt_err_set(err, "schema_version: expected \"1.x.y\" (this rooftune reads T4 1.x)");
    return -1;
  }
  json_t *tu = json_object_get(meta, "timeunit");
  double unit = 1e-3; /* T4's default: milliseconds */
  if (tu && (!json_is_string(tu) || isnan(unit = unit_of(json_string_value(tu))))) {
    rt_err_set(err, "metadata.timeunit: unknown unit %s%s%s (expected %s)", json_is_string(tu) ? "\"" : "",
               json_is_string(tu) ? json_string_value(tu) : "(not a string)",
               json_is_string(tu) ? "\"" : "", unit_name_list());
    return -1;
  }
  im->n = (int)json_array_size(results);
  im->r = rt_calloc((size_t)(im->n ? im->n : 1), sizeof *im->r);
  for (int i = 0; i < im->n; i++)
    if (t4_result(json_array_get(results, (size_t)i), (size_t)i, unit, &im->r[i], err)) return -1;
  json_t *header = json_copy(root);
  json_object_del(header, "results");
  json_t *tool = json_object_get(meta, "tool");
  im->provenance = json_pack("{s:s, s:O?, s:O?, s:O?, s:o}", "format", "t4", "schema_version", ver,
                             "tool", tool, "objectives",
                             json_object_get(json_array_get(results, 0), "objectives"), "header", header);
  return 0;
}

/* ---- Kernel Tuner's cache ---- */

static int kt_status(const char *s, const char **status) {
  for (size_t k = 0; k < sizeof kt_errors / sizeof *kt_errors; k++)
    if (!strcmp(s, kt_errors[k].name)) {
      *status = kt_errors[k].status;
      return 1;
    }
  return 0;
}

/* Keys of a cache entry that are not measurements (times in ms). */
static const struct { const char *key; size_t off; } kt_times[] = {
  {"compile_time", offsetof(db_trial, compile_s)}, {"verification_time", offsetof(db_trial, verify_s)},
  {"benchmark_time", offsetof(db_trial, bench_s)}, {"framework_time", offsetof(db_trial, framework_s)},
  {"strategy_time", offsetof(db_trial, strategy_s)},
};
static int kt_reserved(const char *k) {
  for (size_t i = 0; i < sizeof kt_times / sizeof *kt_times; i++)
    if (!strcmp(k, kt_times[i].key)) return 1;
  return !strcmp(k, "times") || !strcmp(k, "timestamp") || !strcmp(k, "__error__") ||
         !strcmp(k, "rooftune_status");
}

/* One cache entry -> r. keys: tune_params_keys. */
static int kt_entry(const char *key, json_t *e, json_t *keys, rec *r, rt_err *err) {
  json_t *jk = json_string(key);
  char *shown = json_dumps(jk, JSON_ENCODE_ANY);
  rt_str w = {0};
  rt_str_printf(&w, "cache[%s]", shown);
  free(shown);
  json_decref(jk);
  r->where = w.s;
  db_trial_init(&r->t);
  if (!json_is_object(e)) {
    rt_err_set(err, "%s: expected an object", r->where);
    return -1;
  }
  r->config = json_object();
  size_t i;
  json_t *name;
  json_array_foreach(keys, i, name) {
    json_t *v = json_object_get(e, json_string_value(name));
    if (!v) {
      rt_err_set(err, "%s: no value of tunable parameter '%s'", r->where, json_string_value(name));
      return -1;
    }
    json_object_set(r->config, json_string_value(name), v);
  }
  /* The error: "__error__" (Kernel Tuner 1.x), or a measurement holding an
  ** error class name (older caches; util.read_cache reads both). */
  json_t *er = json_object_get(e, "__error__");
  if (er && (!json_is_string(er) || !kt_status(json_string_value(er), &r->t.status))) {
    rt_err_set(err, "%s.__error__: expected one of Kernel Tuner's error classes "
               "(CompilationFailedConfig, RuntimeFailedConfig, InvalidConfig, ErrorConfig)", r->where);
    return -1;
  }
  const char *k;
  json_t *v;
  json_object_foreach(e, k, v)
    if (!r->t.status && json_is_string(v) && !json_object_get(r->config, k)) kt_status(json_string_value(v), &r->t.status);
  json_t *rs = json_object_get(e, "rooftune_status");
  if (rs) {
    size_t s = 0;
    while (s < sizeof failed_statuses / sizeof *failed_statuses &&
           !(json_is_string(rs) && !strcmp(json_string_value(rs), failed_statuses[s])))
      s++;
    if (!r->t.status || s == sizeof failed_statuses / sizeof *failed_statuses) {
      rt_err_set(err, "%s.rooftune_status: expected a failed status (compile_error, runtime_error, "
                 "timeout, wrong_result, invalid) on an entry with an error", r->where);
      return -1;
    }
    r->t.status = failed_statuses[s];
  }
  if (!r->t.status) {
    r->t.status = "ok";
    json_t *t = json_object_get(e, "time");
    double x = json_is_number(t) ? json_number_value(t) * 1e-3 : NAN;
    if (!(x >= 0) || isinf(x)) {
      rt_err_set(err, "%s.time: an entry without an error needs a non-negative number "
                 "(milliseconds)", r->where);
      return -1;
    }
    r->t.time_s = x;
  }
  for (size_t t = 0; t < sizeof kt_times / sizeof *kt_times; t++)
    if (get_time(e, kt_times[t].key, 1e-3, (double *)((char *)&r->t + kt_times[t].off), r->where,
                 kt_times[t].key, err))
      return -1;
  if (get_runtimes(json_object_get(e, "times"), 1e-3, r, "times", err) ||
      get_timestamp(e, "timestamp", r, err))
    return -1;
  /* everything else is a measurement, with Kernel Tuner's units (its T4
  ** writer: "ms" for names starting with "time") */
  json_t *ms = json_array();
  json_object_foreach(e, k, v)
    if (!json_object_get(r->config, k) && !kt_reserved(k))
      json_array_append_new(ms, json_pack("{s:s, s:O, s:s}", "name", k, "value", v, "unit",
                                          strncmp(k, "time", 4) ? "" : "ms"));
  if (json_array_size(ms)) {
    r->measurements = json_dumps(ms, JSON_COMPACT | JSON_REAL_PRECISION(17));
    r->t.measurements_json = r->measurements;
  }
  json_decref(ms);
  return 0;
}

static int read_kt(db_import *im, rt_err *err) {
  json_t *root = im->root, *keys = json_object_get(root, "tune_params_keys"),
         *tp = json_object_get(root, "tune_params"), *cache = json_object_get(root, "cache");
  size_t i;
  json_t *name;
  int bad = !json_is_array(keys) || !json_array_size(keys) || !json_is_object(tp) ||
            json_object_size(tp) != json_array_size(keys) || !json_is_object(cache);
  json_array_foreach(keys, i, name) bad |= !json_is_string(name) ||
                                           !json_object_get(tp, json_string_value(name));
  if (bad) {
    rt_err_set(err, "expected Kernel Tuner's cache layout: \"tune_params_keys\" (the parameter "
               "names), \"tune_params\" (an object of the same names) and \"cache\" (an object)");
    return -1;
  }
  im->n = (int)json_object_size(cache);
  im->r = rt_calloc((size_t)(im->n ? im->n : 1), sizeof *im->r);
  const char *key;
  json_t *e;
  int k = 0;
  json_object_foreach(cache, key, e)
    if (kt_entry(key, e, keys, &im->r[k++], err)) return -1;
  json_t *header = json_copy(root);
  json_object_del(header, "cache");
  im->provenance = json_pack("{s:s, s:n, s:s, s:o}", "format", "kt-cache", "schema_version",
                             "tool", "kernel_tuner", "header", header);
  return 0;
}

/* ---- The space inferred from the file ---- */

/* A parameter value's kind: 0 number, 1 string, 2 boolean; -1 otherwise. */
static int kind(json_t *v) {
  return json_is_number(v) ? 0 : json_is_string(v) ? 1 : json_is_boolean(v) ? 2 : -1;
}

static int cmp_values(const void *pa, const void *pb) {
  json_t *a = *(json_t *const *)pa, *b = *(json_t *const *)pb;
  switch (kind(a)) {
  case 1: {
    size_t la = json_string_length(a), lb = json_string_length(b);
    int c = memcmp(json_string_value(a), json_string_value(b), la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
  }
  case 2: return json_is_true(a) - json_is_true(b);
  default:
    if (json_is_integer(a) && json_is_integer(b))
      return (json_integer_value(a) > json_integer_value(b)) - (json_integer_value(a) < json_integer_value(b));
    return (json_number_value(a) > json_number_value(b)) - (json_number_value(a) < json_number_value(b));
  }
}

/* A value's identity for deduplication: numbers by value (1 and 1.0 are
** one value, as Python's == has it), strings and booleans as written. */
static char *value_key(json_t *v) {
  rt_str s = {0};
  if (json_is_integer(v)) rt_str_printf(&s, "n%lld", (long long)json_integer_value(v));
  else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
           fabs(json_real_value(v)) < 9e15)
    rt_str_printf(&s, "n%lld", (long long)json_real_value(v));
  else if (json_is_real(v)) rt_str_printf(&s, "n%.17g", json_real_value(v));
  else if (json_is_boolean(v)) rt_str_printf(&s, "b%d", json_is_true(v));
  else rt_str_printf(&s, "s%s", json_string_value(v));
  return s.s;
}

/* The T1 parameter of a list of values: {"Name", "Type", "Values"}; the
** type from the values' kind (numbers: "float" if any is a float). NULL
** with err when the kinds are mixed or a value is not a scalar. */
static json_t *t1_param(const char *name, json_t *values, const char *what, rt_err *err) {
  int k0 = kind(json_array_get(values, 0)), any_real = 0;
  size_t i;
  json_t *v;
  json_array_foreach(values, i, v) {
    if (kind(v) < 0 || kind(v) != k0) {
      rt_err_set(err, "%s: parameter '%s' has %s values (%s): its type cannot be inferred; give "
                 "the space (a T1 file)", what, name, kind(v) < 0 ? "non-scalar" : "mixed",
                 kind(v) < 0 ? "a number, string or boolean expected" : "numbers, strings, booleans");
      return NULL;
    }
    any_real |= json_is_real(v);
  }
  static const char *const types[] = {"int", "string", "bool"};
  return json_pack("{s:s, s:s, s:O}", "Name", name, "Type", k0 == 0 && any_real ? "float" : types[k0],
                   "Values", values);
}

/* Problem variables of an inferred space: a cache's problem_size (int:
** problem_size; 1 to 3 ints: problem_size_x, _y, _z, as Kernel Tuner names
** the dimensions), then the --set names not already there. */
static json_t *t1_vars(json_t *problem_size, const sp_binding *set, int nset) {
  static const char *const dims[] = {"problem_size_x", "problem_size_y", "problem_size_z"};
  json_t *vars = json_array(), *v;
  size_t n = json_array_size(problem_size), i;
  int ints = n >= 1 && n <= 3;
  json_array_foreach(problem_size, i, v) ints &= json_is_integer(v);
  if (json_is_integer(problem_size))
    json_array_append_new(vars, json_pack("{s:s, s:O}", "Name", "problem_size", "Default", problem_size));
  for (i = 0; ints && i < n; i++)
    json_array_append_new(vars, json_pack("{s:s, s:O}", "Name", dims[i], "Default",
                                          json_array_get(problem_size, i)));
  for (int b = 0; b < nset; b++) {
    int dup = 0;
    json_array_foreach(vars, i, v) dup |= !strcmp(json_string_value(json_object_get(v, "Name")), set[b].name);
    if (!dup) json_array_append_new(vars, json_pack("{s:s}", "Name", set[b].name));
  }
  return vars;
}

/* A cache's tune_params as T1 parameters, in tune_params_keys order, each
** with its values as listed. NULL with err. */
static json_t *kt_params(db_import *im, rt_err *err) {
  json_t *tp = json_object_get(im->root, "tune_params"), *params = json_array(), *name;
  size_t i;
  json_array_foreach(json_object_get(im->root, "tune_params_keys"), i, name) {
    const char *nm = json_string_value(name);
    json_t *values = json_object_get(tp, nm), *p = NULL;
    char what[128];
    snprintf(what, sizeof what, "tune_params.%s", nm);
    if (!json_is_array(values) || !json_array_size(values))
      rt_err_set(err, "%s: expected a non-empty list of values", what);
    else
      p = t1_param(nm, values, what, err);
    if (!p) {
      json_decref(params);
      return NULL;
    }
    json_array_append_new(params, p);
  }
  return params;
}

/* A T4 file's parameters: the names of its first configuration, in order,
** each with the distinct values recorded, sorted (numbers numerically,
** strings bytewise, false before true). Every configuration must name
** the same parameters. NULL with err. */
static json_t *t4_params(db_import *im, rt_err *err) {
  if (im->n == 0) {
    rt_err_set(err, "no results: a space cannot be inferred from an empty file; give it (a T1 file)");
    return NULL;
  }
  json_t *first = im->r[0].config, *params = json_array(), *v;
  const char *k;
  for (int i = 0; i < im->n; i++)
    json_object_foreach(im->r[i].config, k, v) if (!json_object_get(first, k)) {
      rt_err_set(err, "%s.configuration: parameter '%s' is not in %s's configuration", im->r[i].where,
                 k, im->r[0].where);
      json_decref(params);
      return NULL;
    }
  json_object_foreach(first, k, v) {
    json_t *seen = json_object(), *p = NULL;
    json_t **vals = rt_malloc((size_t)im->n * sizeof *vals);
    size_t nv = 0;
    for (int i = 0; i < im->n; i++) {
      json_t *x = json_object_get(im->r[i].config, k);
      if (!x || kind(x) < 0) {
        if (x)
          rt_err_set(err, "%s.configuration.%s: expected a number, string or boolean", im->r[i].where, k);
        else
          rt_err_set(err, "%s.configuration: missing parameter '%s' (%s names it)", im->r[i].where, k,
                     im->r[0].where);
        nv = 0;
        break;
      }
      char *vk = value_key(x);
      if (!json_object_get(seen, vk)) {
        json_object_set_new(seen, vk, json_true());
        vals[nv++] = x;
      }
      free(vk);
    }
    if (nv) {
      qsort(vals, nv, sizeof *vals, cmp_values);
      json_t *list = json_array();
      for (size_t i = 0; i < nv; i++) json_array_append(list, vals[i]);
      p = t1_param(k, list, "the recorded configurations", err);
      json_decref(list);
    }
    free(vals);
    json_decref(seen);
    if (!p) {
      json_decref(params);
      return NULL;
    }
    json_array_append_new(params, p);
  }
  return params;
}

/* The space of im when none was given (db_import_opts.space). */
static int infer_space(db_import *im, const db_import_opts *o, rt_err *err) {
  int kt = !strcmp(im->format, "kt-cache");
  json_t *params = kt ? kt_params(im, err) : t4_params(im, err);
  if (!params) return -1;
  json_t *t1 = json_pack("{s:{s:s}, s:{s:o, s:o, s:[]}}", "General", "BenchmarkName", im->kernel,
                         "ConfigurationSpace", "ProblemVariables",
                         t1_vars(kt ? json_object_get(im->root, "problem_size") : NULL, o->set, o->nset),
                         "TuningParameters", params, "Conditions");
  char *text = json_dumps(t1, JSON_COMPACT | JSON_REAL_PRECISION(17));
  im->sp = sp_load_string(text, kt ? "the space of its tune_params" : "the space of its configurations",
                          o->set, o->nset, err);
  im->own_sp = 1;
  free(text);
  json_decref(t1);
  return im->sp ? 0 : -1;
}

/* ---- Checks common to both formats ---- */

/* A kernel name or dtype is a word of the workload key "KERNEL DTYPE
** VAR=VALUE ...": not empty, no whitespace or control character. */
static int check_word(const char *what, const char *s, const char *hint, rt_err *err) {
  const char *p = s;
  while (*p && !isspace((unsigned char)*p) && !iscntrl((unsigned char)*p)) p++;
  if (*s && !*p) return 0;
  json_t *j = json_string(s);
  char *shown = json_dumps(j, JSON_ENCODE_ANY);
  rt_err_set(err, "%s %s: %s a word of the workload key \"KERNEL DTYPE VAR=VALUE ...\": it may not "
             "be empty or hold whitespace or control characters%s", what, shown ? shown : "?",
             !strcmp(what, "kernel name") ? "the kernel name is" : "the dtype is", hint);
  free(shown);
  json_decref(j);
  return -1;
}

/* Every configuration as the space's canonical JSON; the same one twice is
** an error naming both results. */
static int canonicalise(db_import *im, rt_err *err) {
  json_t *seen = json_object();
  int np = sp_nparams(im->sp), rc = 0;
  int *cfg = rt_malloc((size_t)(np ? np : 1) * sizeof *cfg);
  for (int i = 0; i < im->n && !rc; i++) {
    rec *r = &im->r[i];
    char *text = json_dumps(r->config, JSON_COMPACT | JSON_REAL_PRECISION(17));
    rt_err e = {0};
    if (sp_config_parse(im->sp, text, cfg, &e)) {
      rt_err_set(err, "%s.%s", r->where, e.msg);
      rc = -1;
    } else {
      r->canon = sp_config_json(im->sp, cfg);
      r->t.config_json = r->canon;
      json_t *prev = json_object_get(seen, r->canon);
      if (prev) {
        rt_err_set(err, "%s: the same configuration as %s (%s): a results file holds one result "
                   "per configuration", r->where, im->r[json_integer_value(prev)].where, r->canon);
        rc = -1;
      } else {
        json_object_set_new(seen, r->canon, json_integer(i));
      }
    }
    free(text);
  }
  free(cfg);
  json_decref(seen);
  return rc;
}

db_import *db_import_read(const char *path, const db_import_opts *o, rt_err *err) {
  db_import *im = rt_calloc(1, sizeof *im);
  im->path = rt_strdup(path);
  im->root = load_json(path, err);
  if (!im->root) {
    db_import_free(im);
    return NULL;
  }
  json_t *root = im->root;
  int t4 = json_is_object(root) && json_object_get(root, "results"),
      kt = json_is_object(root) && json_object_get(root, "cache") && json_object_get(root, "tune_params_keys");
  int rc = 0;
  if (!t4 && !kt) {
    rt_err_set(err, "%s: neither T4 results (an object with a \"results\" array) nor a Kernel Tuner "
               "cache file (an object with \"tune_params_keys\" and \"cache\")", path);
    rc = -1;
  } else if (o->format && strcmp(o->format, t4 ? "t4" : "kt-cache")) {
    rt_err_set(err, "%s: is %s, not %s: import it with %s", path,
               t4 ? "T4 results" : "a Kernel Tuner cache file",
               t4 ? "a Kernel Tuner cache file" : "T4 results", t4 ? "--t4" : "--kt-cache");
    rc = -1;
  }
  if (rc) {
    db_import_free(im);
    return NULL;
  }
  im->format = rt_strdup(t4 ? "t4" : "kt-cache");
  /* kernel and dtype: as given, else as the space or the file says */
  json_t *fk = kt ? json_object_get(root, "kernel_name") : NULL,
         *fd = json_object_get(t4 ? json_object_get(root, "metadata") : root, "dtype");
  const char *kernel = o->kernel ? o->kernel : o->space ? sp_name(o->space) : json_string_value(fk);
  const char *dtype = json_is_string(fd) ? json_string_value(fd) : DB_DEFAULT_DTYPE;
  if (fd && !json_is_string(fd)) {
    rt_err_set(err, "%s: expected a string", t4 ? "metadata.dtype" : "dtype");
    rc = -1;
  } else if (o->dtype && json_is_string(fd) && strcmp(o->dtype, dtype)) {
    rt_err_set(err, "the file's dtype is \"%s\", --dtype says \"%s\"", dtype, o->dtype);
    rc = -1;
  } else if (!kernel) {
    rt_err_set(err, "a %s names no kernel: give one (--kernel NAME, or a T1 file's BenchmarkName)",
               t4 ? "T4 file" : "cache without \"kernel_name\"");
    rc = -1;
  } else {
    if (o->dtype) dtype = o->dtype;
    rc = check_word("kernel name", kernel, o->kernel ? "" : " (give another with --kernel)", err) ||
         check_word("dtype", dtype, "", err);
  }
  if (!rc) {
    im->kernel = rt_strdup(kernel);
    im->dtype = rt_strdup(dtype);
    rc = t4 ? read_t4(im, err) : read_kt(im, err);
  }
  if (!rc && o->space) {
    im->sp = o->space;
  } else if (!rc) {
    rc = infer_space(im, o, err);
  }
  if (!rc) rc = canonicalise(im, err);
  if (rc) {
    rt_err_prefix(err, "%s", path);
    db_import_free(im);
    return NULL;
  }
  json_object_set_new(im->provenance, "file", json_string(path));
  json_object_set_new(im->provenance, "space", json_string(im->own_sp ? "inferred" : "given"));
  json_object_set_new(im->provenance, "dtype", json_string(im->dtype));
  return im;
}

const sp_space *db_import_space(const db_import *im) { return im->sp; }
const char *db_import_format(const db_import *im) { return im->format; }
const char *db_import_kernel(const db_import *im) { return im->kernel; }
const char *db_import_dtype(const db_import *im) { return im->dtype; }
int db_import_count(const db_import *im) { return im->n; }

void db_import_free(db_import *im) {
  if (!im) return;
  for (int i = 0; i < im->n && im->r; i++) {
    free(im->r[i].where);
    free(im->r[i].canon);
    free(im->r[i].measurements);
    free(im->r[i].runtimes);
    json_decref(im->r[i].config);
  }
  free(im->r);
  if (im->own_sp) sp_free(im->sp);
  json_decref(im->root);
  json_decref(im->provenance);
  free(im->path);
  free(im->format);
  free(im->kernel);
  free(im->dtype);
  free(im);
}

/* ---- Storing ---- */

int db_campaign_set_provenance(db *d, int64_t id, const char *provenance_json, rt_err *err) {
  return db__run(d, db__query(d, err, "UPDATE campaigns SET provenance = ?1 WHERE id = ?2", "ti",
                              provenance_json, id), NULL, err) < 0 ? -1 : 0;
}

static int store(db *d, const db_import *im, const char *target, int64_t *campaign, rt_err *err) {
  int64_t tid = 0, kid = 0, wid = 0, sid = 0;
  sp_space *sp = im->sp;
  char *key = db_workload_key(im->kernel, im->dtype, sp), *sizes = db_workload_sizes(sp),
       *spec = db_space_spec(sp);
  json_t *desc = json_pack("{s:s}", "imported_from", im->path);
  char *desc_text = json_dumps(desc, JSON_COMPACT);
  rt_str source = {0};
  rt_str_printf(&source, "%s:%s", im->format, im->path);
  int rc = db_target_id(d, target, "external", desc_text, &tid, err) ||
           db_kernel_id(d, im->kernel, "external", &kid, err) ||
           db_workload_id(d, kid, key, sizes, im->dtype, "", &wid, err) ||
           db_space_id(d, spec, &sid, err);
  free(key);
  free(sizes);
  free(spec);
  free(desc_text);
  json_decref(desc);
  int *def = rt_malloc((size_t)(sp_nparams(sp) ? sp_nparams(sp) : 1) * sizeof *def);
  if (!rc && sp_default_config(sp, def) && sp_valid(sp, def, NULL)) {
    char *dj = sp_config_json(sp, def);
    rc = db_kernel_set_default(d, kid, dj, err);
    free(dj);
  }
  free(def);
  db_campaign c = {.target_id = tid, .workload_id = wid, .space_id = sid, .strategy = "imported",
                   .options_json = "{}", .seed = 0, .budget = im->n, .source = source.s,
                   .compiler = "", .flags = "", .state = "imported"};
  char *prov = json_dumps(im->provenance, JSON_COMPACT | JSON_REAL_PRECISION(17));
  rc = rc || db_campaign_new(d, &c, campaign, err) ||
       db_campaign_set_provenance(d, *campaign, prov, err);
  free(prov);
  free(source.s);
  for (int i = 0; !rc && i < im->n; i++) {
    db_trial t = im->r[i].t;
    t.campaign_id = *campaign;
    if ((rc = db_trial_add(d, &t, NULL, err))) rt_err_prefix(err, "%s", im->r[i].where);
  }
  return rc ? -1 : 0;
}

int db_import_store(db *d, const db_import *im, const char *target, int64_t *campaign,
                    rt_err *err) {
  int rc = db_begin(d, err);
  if (!rc && (rc = store(d, im, target, campaign, err))) db_rollback(d);
  if (!rc) rc = db_commit(d, err);
  if (rc) rt_err_prefix(err, "%s", im->path);
  return rc;
}

int db_import_t4(db *d, const char *path, sp_space *sp, const char *target, const char *kernel,
                 int64_t *campaign, int *ntrials, rt_err *err) {
  db_import_opts o = {.space = sp, .kernel = kernel};
  db_import *im = db_import_read(path, &o, err);
  if (!im) return -1;
  int rc = db_import_store(d, im, target, campaign, err);
  if (!rc) *ntrials = im->n;
  db_import_free(im);
  return rc;
}
