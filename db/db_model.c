/*
** db_model.c -- what the cost model keeps in the database (schema 5): a
** target's measured ceilings (one row per measurement; the latest is in
** force), the versioned coefficients of each kernel model per target (a
** fit adds version max + 1 and never edits an older one), and counted
** cache traffic of one schedule of a workload per counter source (the
** backend rows' names, db.h; a new count replaces the old one). Every statement
** binds its values; text stored as JSON is checked to be JSON first.
*/
#include <jansson.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

/* 0 when text is a JSON object (numbers only when numeric is set), else
** -1 with err naming what. */
static int check_object(const char *text, const char *what, int numeric, rt_err *err) {
  json_error_t je;
  json_t *j = text ? json_loads(text, 0, &je) : NULL;
  int rc = 0;
  if (!j) {
    rt_err_set(err, "%s: not JSON%s%s", what, text ? ": " : "", text ? je.text : "");
    return -1;
  }
  if (!json_is_object(j)) {
    rt_err_set(err, "%s: expected a JSON object", what);
    rc = -1;
  }
  const char *key;
  json_t *v;
  if (!rc && numeric)
    json_object_foreach(j, key, v) if (!rc && !json_is_number(v)) {
      rt_err_set(err, "%s: %s: expected a number", what, key);
      rc = -1;
    }
  json_decref(j);
  return rc;
}

/* Copy column i (text) into out[cap] (NULL: "" ). */
static void col_copy(sqlite3_stmt *st, int i, char *out, size_t cap) {
  const unsigned char *t = sqlite3_column_text(st, i);
  snprintf(out, cap, "%s", t ? (const char *)t : "");
}

static char *col_dup(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return rt_strdup(t ? (const char *)t : "");
}

char *db_config_hash(const char *config_json, char hex[33]) {
  return rt_hash_hex(rt_hash_bytes(RT_HASH_INIT, config_json, strlen(config_json)), hex);
}

/* ---- Ceilings ---- */

int db_ceilings_put(db *d, int64_t target_id, const char *measured, const char *json, int64_t *id,
                    rt_err *err) {
  if (check_object(json, "ceilings", 0, err)) return -1;
  return db__run(d, db__query(d, err, "INSERT INTO ceilings(target_id, measured, data) VALUES(?1, ?2, ?3)",
                              "iss", target_id, measured, json),
                 id, err) < 0 ? -1 : 0;
}

int db_ceilings_get(db *d, int64_t target_id, char **json, char measured[32], rt_err *err) {
  sqlite3_stmt *st = db__query(d, err, "SELECT data, measured FROM ceilings WHERE target_id = ?1"
                                       " ORDER BY id DESC LIMIT 1", "i", target_id);
  if (!st) return -1;
  int rc = sqlite3_step(st), out = 0;
  if (rc == SQLITE_ROW) {
    if (json) *json = col_dup(st, 0);
    if (measured) col_copy(st, 1, measured, 32);
    out = 1;
  } else if (rc != SQLITE_DONE) {
    out = db__fail(d, err, "read ceilings");
  }
  sqlite3_finalize(st);
  return out;
}

/* ---- Model coefficients ---- */

int db_model_put(db *d, int64_t target_id, const char *kernel, const char *coefs_json,
                 const char *fit_json, int *version, rt_err *err) {
  if (check_object(coefs_json, "coefficients", 1, err) || check_object(fit_json, "fit", 0, err))
    return -1;
  /* One statement: the max is read under the write lock it takes. */
  int64_t id, v;
  if (db__run(d, db__query(d, err, "INSERT INTO models(target_id, kernel, version, coefs, fit)"
                                   " SELECT ?1, ?2, coalesce(max(version), 0) + 1, ?3, ?4 FROM models"
                                   " WHERE target_id = ?1 AND kernel = ?2",
                           "isss", target_id, kernel, coefs_json, fit_json),
              &id, err) < 0 ||
      db__run(d, db__query(d, err, "SELECT version FROM models WHERE id = ?1", "i", id), &v, err))
    return -1;
  if (version) *version = (int)v;
  return 0;
}

int db_model_get(db *d, int64_t target_id, const char *kernel, int version, char **coefs_json,
                 char **fit_json, int *version_out, char created[32], rt_err *err) {
  sqlite3_stmt *st =
      version > 0
          ? db__query(d, err, "SELECT coefs, fit, version, created FROM models"
                              " WHERE target_id = ?1 AND kernel = ?2 AND version = ?3",
                      "isi", target_id, kernel, (int64_t)version)
          : db__query(d, err, "SELECT coefs, fit, version, created FROM models"
                              " WHERE target_id = ?1 AND kernel = ?2 ORDER BY version DESC LIMIT 1",
                      "is", target_id, kernel);
  if (!st) return -1;
  int rc = sqlite3_step(st), out = 0;
  if (rc == SQLITE_ROW) {
    if (coefs_json) *coefs_json = col_dup(st, 0);
    if (fit_json) *fit_json = col_dup(st, 1);
    if (version_out) *version_out = sqlite3_column_int(st, 2);
    if (created) col_copy(st, 3, created, 32);
    out = 1;
  } else if (rc != SQLITE_DONE) {
    out = db__fail(d, err, "read models");
  }
  sqlite3_finalize(st);
  return out;
}

int db_model_list(db *d, int64_t target_id, const char *kernel, db_model_fn fn, void *ctx,
                  rt_err *err) {
  sqlite3_stmt *st = db__query(d, err, "SELECT kernel, version, coefs, fit, created FROM models"
                                       " WHERE target_id = ?1 AND (?2 IS NULL OR kernel = ?2)"
                                       " ORDER BY kernel, version", "it", target_id, kernel);
  if (!st) return -1;
  int n = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    n++;
    if (fn(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int(st, 1),
           (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
           (const char *)sqlite3_column_text(st, 4)))
      break;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) n = db__fail(d, err, "read models");
  sqlite3_finalize(st);
  return n;
}

/* ---- Counted traffic ---- */

int db_counters_put(db *d, int64_t target_id, int64_t workload_id, const char *config_json,
                    const char *source, const char *data_json, rt_err *err) {
  if (check_object(data_json, "counters", 0, err)) return -1;
  char hex[33];
  db_config_hash(config_json, hex);
  return db__run(d, db__query(d, err, "INSERT INTO counters(target_id, workload_id, config_hash,"
                                      " config, source, data) VALUES(?1, ?2, ?3, ?4, ?5, ?6)"
                                      " ON CONFLICT(target_id, workload_id, config_hash, source)"
                                      " DO UPDATE SET config = excluded.config, data = excluded.data,"
                                      " created = datetime('now')",
                              "iissss", target_id, workload_id, hex, config_json, source, data_json),
                 NULL, err) < 0 ? -1 : 0;
}

int db_counters_get(db *d, int64_t target_id, int64_t workload_id, const char *config_hash,
                    const char *source, char **data_json, rt_err *err) {
  sqlite3_stmt *st = db__query(d, err, "SELECT data FROM counters WHERE target_id = ?1"
                                       " AND workload_id = ?2 AND config_hash = ?3 AND source = ?4",
                               "iiss", target_id, workload_id, config_hash, source);
  if (!st) return -1;
  int rc = sqlite3_step(st), out = 0;
  if (rc == SQLITE_ROW) {
    if (data_json) *data_json = col_dup(st, 0);
    out = 1;
  } else if (rc != SQLITE_DONE) {
    out = db__fail(d, err, "read counters");
  }
  sqlite3_finalize(st);
  return out;
}

int db_counters_each(db *d, int64_t target_id, int64_t workload_id, const char *source,
                     db_counter_fn fn, void *ctx, rt_err *err) {
  sqlite3_stmt *st = db__query(d, err, "SELECT id, config_hash, config, source, data, created"
                                       " FROM counters WHERE target_id = ?1 AND workload_id = ?2"
                                       " AND (?3 IS NULL OR source = ?3) ORDER BY id",
                               "iit", target_id, workload_id, source);
  if (!st) return -1;
  int n = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    db_counter_row r = {.id = sqlite3_column_int64(st, 0), .target_id = target_id,
                        .workload_id = workload_id,
                        .config_hash = (const char *)sqlite3_column_text(st, 1),
                        .config = (const char *)sqlite3_column_text(st, 2),
                        .source = (const char *)sqlite3_column_text(st, 3),
                        .data = (const char *)sqlite3_column_text(st, 4),
                        .created = (const char *)sqlite3_column_text(st, 5)};
    n++;
    if (fn(ctx, &r)) break;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) n = db__fail(d, err, "read counters");
  sqlite3_finalize(st);
  return n;
}
