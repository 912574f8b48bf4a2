/*
** db_campaign.c -- what a running tuning campaign keeps besides its trials
** (schema 6): its lease, so that one process at a time runs a campaign
** (two `tune --resume` of one campaign would measure the same
** configurations twice), and the re-measurements that decide its pin (the
** best candidates alternated with the default schedule at the end; see
** tuner/tu.h). A lease names its holder by pid, host, boot and the
** process's start time, so a holder that died (killed, machine rebooted)
** or whose pid was reused is recognised and its lease taken over.
*/
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "db.h"

/* ---- Leases ---- */

typedef struct holder {
  int64_t pid, started;   /* started: clock ticks after boot; -1 unknown */
  char host[256], boot[64];
} holder;

/* The start time of process pid (field 22 of /proc/PID/stat, after the
** parenthesised command name, which may hold spaces); -1 when unknown. */
static int64_t proc_start(int64_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%lld/stat", (long long)pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  char *p = strrchr(buf, ')');   /* p: the space before field 3 (state) */
  if (!p) return -1;
  p++;
  for (int field = 3; field < 22 && p; field++) p = strchr(p + 1, ' ');
  long long v;
  return p && sscanf(p, " %lld", &v) == 1 ? v : -1;
}

static void self_holder(holder *h) {
  memset(h, 0, sizeof *h);
  h->pid = getpid();
  h->started = proc_start(h->pid);
  if (gethostname(h->host, sizeof h->host - 1)) snprintf(h->host, sizeof h->host, "unknown");
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
  if (f) {
    if (!fgets(h->boot, sizeof h->boot, f)) h->boot[0] = 0;
    h->boot[strcspn(h->boot, "\n")] = 0;
    fclose(f);
  }
}

/* Whether the holder of a lease may still be running. Another host's or
** another boot's holder is not: a WAL database is shared only by the
** processes of one machine. Here: its pid must exist and, where /proc
** tells, have the recorded start time (not a reused pid). */
static int holder_alive(const holder *h, const holder *self) {
  if (strcmp(h->host, self->host) || (h->boot[0] && self->boot[0] && strcmp(h->boot, self->boot)))
    return 0;
  if (h->pid <= 0 || (kill((pid_t)h->pid, 0) && errno == ESRCH)) return 0;
  int64_t start = proc_start(h->pid);
  return !(start >= 0 && h->started >= 0 && start != h->started);
}

int db_lease_take(db *d, int64_t campaign, const char *action, rt_err *err) {
  sqlite3 *h = db__sqlite(d);
  int own_tx = sqlite3_get_autocommit(h), rc = -1;
  if (own_tx && db_begin(d, err)) return -1;
  holder self, cur;
  self_holder(&self);
  int64_t id;
  int found = db__run(d, db__query(d, err, "SELECT id FROM campaigns WHERE id = ?1", "i", campaign),
                      &id, err);
  if (found > 0) rt_err_set(err, "no campaign %lld", (long long)campaign);
  if (found) goto out;
  sqlite3_stmt *st = db__query(d, err, "SELECT pid, host, boot, started, action, taken FROM leases"
                                       " WHERE campaign_id = ?1", "i", campaign);
  if (!st) goto out;
  int step = sqlite3_step(st);
  if (step == SQLITE_ROW) {
    memset(&cur, 0, sizeof cur);
    cur.pid = sqlite3_column_int64(st, 0);
    snprintf(cur.host, sizeof cur.host, "%s", (const char *)sqlite3_column_text(st, 1));
    snprintf(cur.boot, sizeof cur.boot, "%s", (const char *)sqlite3_column_text(st, 2));
    cur.started = sqlite3_column_int64(st, 3);
    if (holder_alive(&cur, &self)) {
      const char *what = (const char *)sqlite3_column_text(st, 4);
      rt_err_set(err, "campaign %lld is being %s by pid %lld on %s (since %s UTC): one process at a "
                 "time runs a campaign; wait for it to end, or stop it (Ctrl-C) and resume",
                 (long long)campaign, strcmp(what, "resume") ? "run" : "resumed", (long long)cur.pid,
                 cur.host, (const char *)sqlite3_column_text(st, 5));
      sqlite3_finalize(st);
      rc = 1;
      goto out;
    }
  } else if (step != SQLITE_DONE) {
    db__fail(d, err, "read");
    sqlite3_finalize(st);
    goto out;
  }
  sqlite3_finalize(st);
  /* free, or stale: its holder is gone */
  if (db__run(d, db__query(d, err, "INSERT OR REPLACE INTO leases(campaign_id, pid, host, boot, started,"
                                   " action) VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
                           "iissis", campaign, self.pid, self.host, self.boot, self.started, action),
              NULL, err) < 0)
    goto out;
  rc = 0;
out:
  if (own_tx) {
    if (rc == 0 && db_commit(d, err)) rc = -1;
    if (rc) db_rollback(d);
  }
  return rc;
}

int db_lease_release(db *d, int64_t campaign, rt_err *err) {
  holder self;
  self_holder(&self);
  return db__run(d, db__query(d, err, "DELETE FROM leases WHERE campaign_id = ?1 AND pid = ?2"
                                      " AND host = ?3 AND started = ?4",
                              "iisi", campaign, self.pid, self.host, self.started),
                 NULL, err) < 0 ? -1 : 0;
}

/* ---- Re-measurements ---- */

int db_remeasurements_add(db *d, const db_remeasurement *m, int n, rt_err *err) {
  if (db_begin(d, err)) return -1;
  for (int i = 0; i < n; i++) {
    const db_remeasurement *r = &m[i];
    if (db__run(d, db__query(d, err,
                             "INSERT INTO remeasurements(campaign_id, seq, role, trial_id, config,"
                             " source_hash, sequence_hash, status, time, mean, sd, min, ci_lo, ci_hi,"
                             " repeats, noisy, compile_s, verify_s, bench_s, origin)"
                             " VALUES(?1, ?2, ?3, nullif(?4, 0), ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,"
                             " ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)",
                             "iisissssddddddiiddds", r->campaign_id, (int64_t)r->seq, r->role,
                             r->trial_id, r->config_json, r->source_hash, r->sequence_hash, r->status,
                             r->time_s, r->mean_s, r->sd_s, r->min_s, r->ci_lo_s, r->ci_hi_s,
                             (int64_t)r->repeats, (int64_t)r->noisy, r->compile_s, r->verify_s,
                             r->bench_s, r->origin),
                NULL, err) < 0) {
      db_rollback(d);
      return -1;
    }
  }
  return db_commit(d, err);
}

static double col_num(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? (double)NAN : sqlite3_column_double(st, i);
}

int db_remeasurements_find(db *d, int64_t campaign, int64_t target_id, int64_t workload_id,
                           const char *sequence_hash, db_remeasurement_fn fn, void *ctx,
                           rt_err *err) {
  int64_t from;
  int rc = db__run(d, db__query(d, err,
                                "SELECT r.campaign_id FROM remeasurements r JOIN campaigns c"
                                " ON c.id = r.campaign_id WHERE r.sequence_hash = ?1"
                                " AND c.target_id = ?2 AND c.workload_id = ?3"
                                " ORDER BY r.campaign_id = ?4 DESC, r.campaign_id LIMIT 1",
                                "siii", sequence_hash, target_id, workload_id, campaign),
                   &from, err);
  if (rc) return rc < 0 ? -1 : 0;
  sqlite3_stmt *st = db__query(d, err,
                               "SELECT id, campaign_id, seq, role, coalesce(trial_id, 0), config,"
                               " source_hash, sequence_hash, status, time, mean, sd, min, ci_lo,"
                               " ci_hi, repeats, noisy, compile_s, verify_s, bench_s, origin"
                               " FROM remeasurements WHERE campaign_id = ?1 AND sequence_hash = ?2"
                               " ORDER BY seq, id", "is", from, sequence_hash);
  if (!st) return -1;
  int n = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    db_remeasurement m = {
      .id = sqlite3_column_int64(st, 0), .campaign_id = sqlite3_column_int64(st, 1),
      .seq = sqlite3_column_int(st, 2), .role = (const char *)sqlite3_column_text(st, 3),
      .trial_id = sqlite3_column_int64(st, 4), .config_json = (const char *)sqlite3_column_text(st, 5),
      .source_hash = (const char *)sqlite3_column_text(st, 6),
      .sequence_hash = (const char *)sqlite3_column_text(st, 7),
      .status = (const char *)sqlite3_column_text(st, 8), .time_s = col_num(st, 9),
      .mean_s = col_num(st, 10), .sd_s = col_num(st, 11), .min_s = col_num(st, 12),
      .ci_lo_s = col_num(st, 13), .ci_hi_s = col_num(st, 14), .repeats = sqlite3_column_int(st, 15),
      .noisy = sqlite3_column_int(st, 16), .compile_s = col_num(st, 17),
      .verify_s = col_num(st, 18), .bench_s = col_num(st, 19),
      .origin = (const char *)sqlite3_column_text(st, 20)};
    n++;
    if (fn(ctx, &m)) break;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) n = db__fail(d, err, "read");
  sqlite3_finalize(st);
  return n;
}
