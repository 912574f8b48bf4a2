/*
** db_pin.c -- pins, their versions, rollback and release tags. A pin
** chooses the schedule of one (target, workload): each pin adds version
** max + 1 (rows are never edited) and pin_current says which version
** is in force; rollback only moves pin_current. A tag binds the current
** version of every pinned (target, workload) once and for all, and
** (schema 8) every kernel's template default, so a lookup against it is
** reproducible whatever is pinned or defaulted later. A pin made
** from a trial that came from another machine or tool (target fingerprint
** or kernel template_version "external") is marked foreign_origin: its
** schedule was never verified here.
*/
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"

/* The trials of (target name, kernel name, workload key), as joined rows. */
#define TRIALS_OF                                                                           \
  " FROM trials t JOIN campaigns c ON c.id = t.campaign_id JOIN targets g ON g.id = c.target_id" \
  " JOIN workloads w ON w.id = c.workload_id JOIN kernels k ON k.id = w.kernel_id"

/* The columns of a db_pin_info, in its order; the pins of a selector. */
#define PIN_SELECT                                                                          \
  "SELECT g.name, w.key, p.created, p.config, p.pinned_by, p.reason, p.version,"            \
  " p.trial_id, t.time, p.foreign_origin, cur.pin_id IS NOT NULL, p.predicted"              \
  " FROM pins p JOIN targets g ON g.id = p.target_id JOIN workloads w ON w.id = p.workload_id" \
  " JOIN kernels k ON k.id = w.kernel_id LEFT JOIN trials t ON t.id = p.trial_id"           \
  " LEFT JOIN pin_current cur ON cur.pin_id = p.id"

/* Step a PIN_SELECT statement, calling fn per row; finalizes st. Returns
** the rows visited or -1. */
static int visit_pins(db *d, sqlite3_stmt *st, db_pin_fn fn, void *ctx, rt_err *err) {
  if (!st) return -1;
  int n = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *text[6];
    for (int i = 0; i < 6; i++) text[i] = (const char *)sqlite3_column_text(st, i);
    db_pin_info p = {.target = text[0], .workload_key = text[1], .created = text[2],
                     .config = text[3], .by = text[4], .reason = text[5],
                     .version = sqlite3_column_int64(st, 6),
                     .trial_id = sqlite3_column_int64(st, 7),
                     .time_s = sqlite3_column_type(st, 8) == SQLITE_NULL ? NAN
                                                                        : sqlite3_column_double(st, 8),
                     .foreign_origin = sqlite3_column_int(st, 9),
                     .current = sqlite3_column_int(st, 10),
                     .predicted = sqlite3_column_int(st, 11)};
    n++;
    if (fn(ctx, &p)) break;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) n = db__fail(d, err, "read");
  sqlite3_finalize(st);
  return n;
}

/* The trial to pin: r->trial_id checked against the selector, or the
** fastest ok trial. Fills its target and workload ids, config, foreign
** flag and the number of ok trials of the selector. 0 or -1 with err. */
typedef struct chosen {
  int64_t trial, target, workload, nok;
  char *config;
  int foreign, predicted;   /* predicted: the trial's origin is "predicted" (db.h 10) */
} chosen;

static int choose(db *d, const db_pin_req *r, chosen *c, rt_err *err) {
  int64_t id = r->trial_id;
  if (db__run(d, db__query(d, err, "SELECT count(*)" TRIALS_OF " WHERE g.name = ?1 AND k.name = ?2"
                                   " AND w.key = ?3 AND t.status = 'ok'",
                           "sss", r->target, r->kernel, r->workload_key),
              &c->nok, err) < 0)
    return -1;
  if (!id) {
    int rc = db__run(d, db__query(d, err, "SELECT t.id" TRIALS_OF " WHERE g.name = ?1 AND k.name = ?2"
                                          " AND w.key = ?3 AND t.status = 'ok'"
                                          " ORDER BY coalesce(t.origin = 'predicted', 0), t.time, t.id LIMIT 1",
                                   "sss", r->target, r->kernel, r->workload_key),
                      &id, err);
    if (rc) {
      if (rc > 0) rt_err_set(err, "no verified trial of %s on %s to pin", r->workload_key, r->target);
      return -1;
    }
  }
  sqlite3_stmt *st = db__query(d, err,
                               "SELECT c.target_id, c.workload_id, t.config, t.status,"
                               " g.name = ?2 AND k.name = ?3 AND w.key = ?4,"
                               " g.fingerprint = 'external' OR k.template_version = 'external',"
                               " coalesce(t.origin = 'predicted', 0)"
                               TRIALS_OF " WHERE t.id = ?1",
                               "isss", id, r->target, r->kernel, r->workload_key);
  if (!st) return -1;
  int rc = sqlite3_step(st), out = -1;
  if (rc == SQLITE_ROW) {
    const char *status = (const char *)sqlite3_column_text(st, 3);
    if (!sqlite3_column_int(st, 4)) {
      rt_err_set(err, "trial %lld is not a trial of %s on %s", (long long)id, r->workload_key, r->target);
    } else if (strcmp(status, "ok")) {
      rt_err_set(err, "trial %lld has status %s: only verified (ok) trials can be pinned",
                 (long long)id, status);
    } else {
      *c = (chosen){id, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), c->nok,
                    rt_strdup((const char *)sqlite3_column_text(st, 2)), sqlite3_column_int(st, 5),
                    sqlite3_column_int(st, 6)};
      out = 0;
    }
  } else if (rc == SQLITE_DONE) {
    rt_err_set(err, "no trial %lld", (long long)id);
  } else {
    db__fail(d, err, "read");
  }
  sqlite3_finalize(st);
  return out;
}

static int pin_in(db *d, const db_pin_req *r, int64_t *version, rt_err *err) {
  chosen c = {0};
  if (choose(d, r, &c, err)) return -1;
  /* The trial already current: no new winner, no new version (a campaign
  ** resumed after a kill between its pin and its end pins it again). */
  sqlite3_stmt *cur = db__query(d, err, "SELECT p.version, p.trial_id FROM pin_current cp"
                                        " JOIN pins p ON p.id = cp.pin_id"
                                        " WHERE cp.target_id = ?1 AND cp.workload_id = ?2",
                                "ii", c.target, c.workload);
  int step = cur ? sqlite3_step(cur) : SQLITE_ERROR, same = 0;
  if (step == SQLITE_ROW && sqlite3_column_int64(cur, 1) == c.trial) {
    *version = sqlite3_column_int64(cur, 0);
    same = 1;
  } else if (step != SQLITE_ROW && step != SQLITE_DONE && cur) {
    db__fail(d, err, "read");
  }
  sqlite3_finalize(cur);
  if (same || (step != SQLITE_ROW && step != SQLITE_DONE)) {
    free(c.config);
    return same ? 0 : -1;
  }
  const char *by = r->by;
  if (!by) by = getenv("USER");
  if (!by || !*by) by = "rooftune";
  rt_str reason = {0};
  if (r->reason) rt_str_printf(&reason, "%s", r->reason);
  else if (c.predicted) rt_str_printf(&reason, "best predicted of %lld (predictions, not measured)", (long long)c.nok);
  else rt_str_printf(&reason, "best of %lld verified trials", (long long)c.nok);
  int64_t pin;
  int rc = db__run(d, db__query(d, err, "SELECT coalesce(max(version), 0) + 1 FROM pins"
                                        " WHERE target_id = ?1 AND workload_id = ?2",
                                "ii", c.target, c.workload), version, err) < 0 ||
           db__run(d, db__query(d, err, "INSERT INTO pins(target_id, workload_id, version, trial_id,"
                                        " config, pinned_by, reason, foreign_origin, predicted)"
                                        " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                                "iiiisssii", c.target, c.workload, *version, c.trial, c.config, by,
                                reason.s, (int64_t)c.foreign, (int64_t)c.predicted), &pin, err) ||
           db__run(d, db__query(d, err, "INSERT OR REPLACE INTO pin_current(target_id, workload_id, pin_id)"
                                        " VALUES(?1, ?2, ?3)", "iii", c.target, c.workload, pin),
                   NULL, err);
  free(c.config);
  free(reason.s);
  return rc ? -1 : 0;
}

/* End the open transaction: commit when rc is 0, else roll back (-1). */
static int in_transaction(db *d, int rc, rt_err *err) {
  if (rc) {
    db_rollback(d);
    return -1;
  }
  return db_commit(d, err);
}

int db_pin(db *d, const db_pin_req *r, int64_t *version, rt_err *err) {
  if (db_begin(d, err)) return -1;
  return in_transaction(d, pin_in(d, r, version, err), err);
}

int db_pin_rollback(db *d, const char *target, const char *kernel, const char *workload_key,
                    int64_t version, rt_err *err) {
  if (db_begin(d, err)) return -1;
  sqlite3_stmt *st = db__query(d, err,
                               "SELECT p.id, p.target_id, p.workload_id FROM pins p"
                               " JOIN targets g ON g.id = p.target_id JOIN workloads w ON w.id = p.workload_id"
                               " JOIN kernels k ON k.id = w.kernel_id"
                               " WHERE g.name = ?1 AND k.name = ?2 AND w.key = ?3 AND p.version = ?4",
                               "sssi", target, kernel, workload_key, version);
  int rc = st ? sqlite3_step(st) : SQLITE_ERROR, n = 0;
  int64_t pin = 0, tid = 0, wid = 0;
  for (; rc == SQLITE_ROW; rc = sqlite3_step(st), n++) {
    pin = sqlite3_column_int64(st, 0);
    tid = sqlite3_column_int64(st, 1);
    wid = sqlite3_column_int64(st, 2);
  }
  sqlite3_finalize(st);
  int bad = -1;
  if (rc != SQLITE_DONE) {
    if (st) db__fail(d, err, "read");
  } else if (n == 0) {
    rt_err_set(err, "%s on %s has no pin version %lld", workload_key, target, (long long)version);
  } else if (n > 1) {
    rt_err_set(err, "%s on %s: several targets of that name are pinned", workload_key, target);
  } else {
    bad = db__run(d, db__query(d, err, "UPDATE pin_current SET pin_id = ?3"
                                       " WHERE target_id = ?1 AND workload_id = ?2",
                               "iii", tid, wid, pin), NULL, err) ? -1 : 0;
  }
  return in_transaction(d, bad, err);
}

int db_pin_history(db *d, const char *target, const char *kernel, const char *workload_key,
                   db_pin_fn fn, void *ctx, rt_err *err) {
  return visit_pins(d, db__query(d, err, PIN_SELECT " WHERE g.name = ?1 AND k.name = ?2 AND w.key = ?3"
                                         " ORDER BY p.target_id, p.version",
                                 "sss", target, kernel, workload_key), fn, ctx, err);
}

/* ---- Tags ---- */

static int tag_in(db *d, const char *name, const char *note, int *npins, rt_err *err) {
  int64_t id, n;
  int rc = db__run(d, db__query(d, err, "SELECT id FROM tags WHERE name = ?1", "s", name), &id, err);
  if (rc <= 0) {
    if (!rc) rt_err_set(err, "tag %s already exists (tags are immutable)", name);
    return -1;
  }
  if (db__run(d, db__query(d, err, "SELECT count(*) FROM pin_current", ""), &n, err) < 0) return -1;
  if (!n) {
    rt_err_set(err, "nothing is pinned: a tag of no pins would bind nothing");
    return -1;
  }
  /* the pins in force, and (schema 8) each kernel's template default as
  ** the reader falls back to it now: the newest template version's */
  if (db__run(d, db__query(d, err, "INSERT INTO tags(name, note, defaults) VALUES(?1, ?2, 1)", "ss",
                           name, note), &id, err) ||
      db__run(d, db__query(d, err, "INSERT INTO tag_pins(tag_id, pin_id) SELECT ?1, pin_id FROM pin_current",
                           "i", id), NULL, err) < 0 ||
      db__run(d, db__query(d, err, "INSERT INTO tag_defaults(tag_id, kernel, config)"
                           " SELECT ?1, k.name, k.default_config FROM kernels k"
                           " WHERE k.id = (SELECT max(k2.id) FROM kernels k2 WHERE k2.name = k.name"
                           " AND k2.default_config IS NOT NULL)", "i", id), NULL, err) < 0)
    return -1;
  *npins = (int)n;
  return 0;
}

int db_tag(db *d, const char *name, const char *note, int *npins, rt_err *err) {
  if (db_begin(d, err)) return -1;
  return in_transaction(d, tag_in(d, name, note ? note : "", npins, err), err);
}

int db_tag_list(db *d, db_tag_fn fn, void *ctx, rt_err *err) {
  sqlite3_stmt *st = db__query(d, err,
                               "SELECT t.name, t.note, t.created, count(tp.pin_id) FROM tags t"
                               " LEFT JOIN tag_pins tp ON tp.tag_id = t.id GROUP BY t.id ORDER BY t.id", "");
  if (!st) return -1;
  int n = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    n++;
    if (fn(ctx, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
           (const char *)sqlite3_column_text(st, 2), sqlite3_column_int(st, 3)))
      break;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) n = db__fail(d, err, "read");
  sqlite3_finalize(st);
  return n;
}

int db_tag_show(db *d, const char *name, db_pin_fn fn, void *ctx, rt_err *err) {
  int64_t id;
  int rc = db__run(d, db__query(d, err, "SELECT id FROM tags WHERE name = ?1", "s", name), &id, err);
  if (rc) {
    if (rc > 0) rt_err_set(err, "no tag %s", name);
    return -1;
  }
  return visit_pins(d, db__query(d, err, PIN_SELECT " JOIN tag_pins tp ON tp.pin_id = p.id"
                                         " WHERE tp.tag_id = ?1 ORDER BY g.name, w.key, p.target_id",
                                 "i", id), fn, ctx, err);
}

int db__pin_in(db *d, const db_pin_req *r, int64_t *version, rt_err *err) { return pin_in(d, r, version, err); }
