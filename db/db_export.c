/*
** db_export.c -- the trials of (target, kernel[, workload]) written out as
** a T4 results file (the inverse of db_t4.c's mapping: what it imports
** back is the same trials), as a JSON array of every column, or as CSV
** with a column per configuration parameter. Rows come in trial order.
*/
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
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

/* Status -> T4 invalidity, correctness and the measurement's failure
** string (db_t4.c reads "correct" with correctness 0 as wrong_result). */
static const struct { const char *status, *invalidity; int correct; const char *failure; } t4_status[] = {
  {"ok", "correct", 1, NULL},
  {"wrong_result", "correct", 0, "WrongResultConfig"},
  {"compile_error", "compile", 0, "CompilationFailedConfig"},
  {"runtime_error", "runtime", 0, "RuntimeFailedConfig"},
  {"timeout", "timeout", 0, "TimeoutConfig"},
  {"invalid", "invalid", 0, "InvalidConfig"},
};

/* Columns holding JSON text, exported as JSON values. */
static int is_json_column(const char *name) { return !strcmp(name, "config") || !strcmp(name, "counters"); }

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
** same double: s * 1e3 or a neighbour within a few ulps. */
static double to_ms(double s) {
  double ms = s * 1e3, lo = ms, hi = ms;
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

/* A row object (row_object) -> one T4 result. */
static json_t *t4_result(json_t *row) {
  const char *status = json_string_value(json_object_get(row, "status"));
  size_t s = 0;
  while (s + 1 < sizeof t4_status / sizeof *t4_status && strcmp(t4_status[s].status, status)) s++;
  json_t *r = json_object(), *times = json_object(), *m = json_object();
  json_object_set_new(r, "timestamp", json_deep_copy(json_object_get(row, "created")));
  json_object_set(r, "configuration", json_object_get(row, "config"));
  set_ms(times, "compilation", json_object_get(row, "compile_s"));
  set_ms(times, "framework", json_object_get(row, "framework_s"));
  set_ms(times, "validation", json_object_get(row, "verify_s"));
  json_object_set_new(r, "times", times);
  json_object_set_new(r, "invalidity", json_string(t4_status[s].invalidity));
  json_object_set_new(r, "correctness", json_integer(t4_status[s].correct));
  json_object_set_new(m, "name", json_string("time"));
  if (t4_status[s].failure) json_object_set_new(m, "value", json_string(t4_status[s].failure));
  else set_ms(m, "value", json_object_get(row, "time"));
  json_object_set_new(m, "unit", json_string("milliseconds"));
  json_object_set_new(r, "measurements", json_pack("[o]", m));
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
    if (strcmp(key, "config")) json_array_append_new(cols, json_string(key));
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

static const char *const formats[] = {"t4", "json", "csv"};

int db_export(db *d, const char *target, const char *kernel, const char *workload_key,
              const char *format, FILE *out, int *ntrials, rt_err *err) {
  size_t f = 0;
  while (f < sizeof formats / sizeof *formats && strcmp(formats[f], format)) f++;
  if (f == sizeof formats / sizeof *formats) {
    rt_err_set(err, "unknown export format '%s' (expected t4, json or csv)", format);
    return -1;
  }
  sqlite3_stmt *st = db__query(d, err, export_sql, "sst", target, kernel, workload_key);
  if (!st) return -1;
  json_t *rows = json_array();
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) json_array_append_new(rows, row_object(st));
  if (rc != SQLITE_DONE) rt_err_set(err, "read: %s", sqlite3_errmsg(db__sqlite(d)));
  sqlite3_finalize(st);
  if (rc == SQLITE_DONE && !json_array_size(rows)) {
    rt_err_set(err, "no trials of kernel %s on target %s%s%s", kernel, target,
               workload_key ? " for " : "", workload_key ? workload_key : "");
    rc = SQLITE_ERROR;
  }
  if (rc == SQLITE_DONE) {
    *ntrials = (int)json_array_size(rows);
    if (!strcmp(format, "csv")) {
      write_csv(out, rows);
    } else {
      json_t *doc = rows;
      if (!strcmp(format, "t4")) {
        json_t *results = json_array(), *row;
        size_t i;
        json_array_foreach(rows, i, row) json_array_append_new(results, t4_result(row));
        doc = json_pack("{s:s, s:{s:s}, s:o}", "schema_version", "1.0.0", "metadata", "timeunit",
                        "milliseconds", "results", results);
      }
      json_dumpf(doc, out, JSON_COMPACT);
      fputc('\n', out);
      if (doc != rows) json_decref(doc);
    }
    if (fflush(out) || ferror(out)) {
      rt_err_set(err, "write error");
      rc = SQLITE_ERROR;
    }
  }
  json_decref(rows);
  return rc == SQLITE_DONE ? 0 : -1;
}
