/*
** db_target.c -- which stored target holds recorded data. Commands that
** work on recorded trials (model, replay and compare on a database) take
** their target from the data, not from the machine they run on: this is
** the query they ask, one row per (target, workload of the kernel) with
** its trial counts, so that the caller can pick the one target holding
** what it was asked for, or list the candidates when there are several.
*/
#include <sqlite3.h>
#include <stdlib.h>

#include "db.h"

int db_data_targets(db *d, const char *name, const char *fp_prefix, const char *kernel,
                    db_data_fn fn, void *ctx, rt_err *err) {
  sqlite3_stmt *st = db__query(
      d, err,
      "SELECT g.id, g.name, g.fingerprint, g.description, cw.key, count(t.id),"
      " coalesce(sum(t.status = 'ok'), 0)"
      " FROM targets g"
      " LEFT JOIN (SELECT c.id AS cid, c.target_id AS tid, w.key AS key FROM campaigns c"
      "   JOIN workloads w ON w.id = c.workload_id JOIN kernels k ON k.id = w.kernel_id"
      "   WHERE ?3 IS NULL OR k.name = ?3) cw ON cw.tid = g.id"
      " LEFT JOIN trials t ON t.campaign_id = cw.cid"
      " WHERE (?1 IS NULL OR g.name = ?1) AND substr(g.fingerprint, 1, length(?2)) = ?2"
      " GROUP BY g.id, cw.key ORDER BY g.id, cw.key",
      "tst", name, fp_prefix ? fp_prefix : "", kernel);
  if (!st) return -1;
  int n = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    db_data_row r = {
      .target_id = sqlite3_column_int64(st, 0),
      .target = (const char *)sqlite3_column_text(st, 1),
      .fingerprint = (const char *)sqlite3_column_text(st, 2),
      .description = (const char *)sqlite3_column_text(st, 3),
      .workload_key = (const char *)sqlite3_column_text(st, 4),
      .trials = sqlite3_column_int64(st, 5),
      .ok = sqlite3_column_int64(st, 6),
    };
    n++;
    if (fn(ctx, &r)) break;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    db__fail(d, err, "stored targets");
    n = -1;
  }
  sqlite3_finalize(st);
  return n;
}
