/*
** db.c -- the database file: opening (WAL, busy timeout, foreign keys),
** the schema and its forward migrations, transactions, the integrity
** check, statistics, and the get-or-insert of targets, kernels, workloads,
** spaces, campaigns and trials. Every statement binds its parameters.
*/
#include "db.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rtdb_int.h"
#include "../targets/tg.h"

struct db {
  sqlite3 *h;
  sqlite3_stmt *trial_ins;   /* db_trial_add's statement, prepared once */
  int writer;                /* a file opened read-write (invariant 8 at close) */
};

/* Migrations: migrations[v] takes a file from version v to v + 1. The
** first creates the schema. Append, never edit: files in the field were
** made by the old steps. */
static const char *const migrations[] = {
  /* 0 -> 1 */
  "CREATE TABLE targets("
  "  id INTEGER PRIMARY KEY, name TEXT NOT NULL, fingerprint TEXT NOT NULL,"
  "  description TEXT NOT NULL, created TEXT NOT NULL DEFAULT (datetime('now')),"
  "  UNIQUE(name, fingerprint));"
  "CREATE TABLE kernels("
  "  id INTEGER PRIMARY KEY, name TEXT NOT NULL, template_version TEXT NOT NULL,"
  "  UNIQUE(name, template_version));"
  "CREATE TABLE workloads("
  "  id INTEGER PRIMARY KEY, kernel_id INTEGER NOT NULL REFERENCES kernels(id),"
  "  key TEXT NOT NULL, sizes TEXT NOT NULL, dtype TEXT NOT NULL, layout TEXT NOT NULL,"
  "  hash TEXT NOT NULL, UNIQUE(kernel_id, key));"
  "CREATE TABLE spaces(id INTEGER PRIMARY KEY, spec TEXT NOT NULL, hash TEXT NOT NULL UNIQUE);"
  "CREATE TABLE campaigns("
  "  id INTEGER PRIMARY KEY, target_id INTEGER NOT NULL REFERENCES targets(id),"
  "  workload_id INTEGER NOT NULL REFERENCES workloads(id),"
  "  space_id INTEGER NOT NULL REFERENCES spaces(id),"
  "  strategy TEXT NOT NULL, options TEXT NOT NULL, seed INTEGER, budget INTEGER,"
  "  rooftune_version TEXT NOT NULL, source TEXT NOT NULL, compiler TEXT NOT NULL,"
  "  flags TEXT NOT NULL, started TEXT NOT NULL DEFAULT (datetime('now')), ended TEXT,"
  "  state TEXT NOT NULL CHECK(state IN ('running','done','stopped','imported')));"
  "CREATE TABLE trials("
  "  id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL REFERENCES campaigns(id),"
  "  config TEXT NOT NULL, config_hash TEXT NOT NULL,"
  "  status TEXT NOT NULL CHECK(status IN ('ok','compile_error','runtime_error',"
  "    'timeout','wrong_result','invalid')),"
  "  time REAL, mean REAL, sd REAL, min REAL, ci_lo REAL, ci_hi REAL,"
  "  repeats INTEGER NOT NULL DEFAULT 0, noisy INTEGER NOT NULL DEFAULT 0,"
  "  counters TEXT, predicted REAL, compile_s REAL, verify_s REAL, bench_s REAL,"
  "  framework_s REAL, created TEXT NOT NULL,"
  "  CHECK((status = 'ok') = (time IS NOT NULL)),"
  "  UNIQUE(campaign_id, config_hash));"
  "CREATE INDEX trials_by_time ON trials(campaign_id, status, time);"
  "CREATE TABLE pins("
  "  id INTEGER PRIMARY KEY, target_id INTEGER NOT NULL REFERENCES targets(id),"
  "  workload_id INTEGER NOT NULL REFERENCES workloads(id), version INTEGER NOT NULL,"
  "  trial_id INTEGER REFERENCES trials(id), config TEXT NOT NULL,"
  "  pinned_by TEXT NOT NULL, reason TEXT NOT NULL, foreign_origin INTEGER NOT NULL DEFAULT 0,"
  "  created TEXT NOT NULL DEFAULT (datetime('now')), UNIQUE(target_id, workload_id, version));"
  "CREATE TABLE pin_current("
  "  target_id INTEGER NOT NULL, workload_id INTEGER NOT NULL,"
  "  pin_id INTEGER NOT NULL REFERENCES pins(id), PRIMARY KEY(target_id, workload_id));"
  "CREATE TABLE tags(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, note TEXT NOT NULL,"
  "  created TEXT NOT NULL DEFAULT (datetime('now')));"
  "CREATE TABLE tag_pins(tag_id INTEGER NOT NULL REFERENCES tags(id),"
  "  pin_id INTEGER NOT NULL REFERENCES pins(id), PRIMARY KEY(tag_id, pin_id));",
  /* 1 -> 2: the template's default schedule, the readers' last resort */
  "ALTER TABLE kernels ADD COLUMN default_config TEXT;",
  /* 2 -> 3: the commit rooftune was built from, with its version */
  "ALTER TABLE campaigns ADD COLUMN rooftune_commit TEXT;",
  /* 3 -> 4: tuning campaigns: what a trial measured (the compile key of
  ** its source and toolchain, for reuse), where its result came from, and
  ** a campaign's final report (default and baseline measurements) */
  "ALTER TABLE trials ADD COLUMN source_hash TEXT;"
  "ALTER TABLE trials ADD COLUMN origin TEXT;"
  "ALTER TABLE campaigns ADD COLUMN report TEXT;"
  "CREATE INDEX trials_by_source ON trials(source_hash) WHERE source_hash IS NOT NULL;",
  /* 4 -> 5: the cost model's data: measured ceilings per target, versioned
  ** model coefficients per (target, kernel), counted cache traffic per
  ** schedule of a workload */
  "CREATE TABLE ceilings("
  "  id INTEGER PRIMARY KEY, target_id INTEGER NOT NULL REFERENCES targets(id),"
  "  measured TEXT NOT NULL, data TEXT NOT NULL,"
  "  created TEXT NOT NULL DEFAULT (datetime('now')));"
  "CREATE INDEX ceilings_by_target ON ceilings(target_id, id);"
  "CREATE TABLE models("
  "  id INTEGER PRIMARY KEY, target_id INTEGER NOT NULL REFERENCES targets(id),"
  "  kernel TEXT NOT NULL, version INTEGER NOT NULL, coefs TEXT NOT NULL, fit TEXT NOT NULL,"
  "  created TEXT NOT NULL DEFAULT (datetime('now')), UNIQUE(target_id, kernel, version));"
  "CREATE TABLE counters("
  "  id INTEGER PRIMARY KEY, target_id INTEGER NOT NULL REFERENCES targets(id),"
  "  workload_id INTEGER NOT NULL REFERENCES workloads(id), config_hash TEXT NOT NULL,"
  "  config TEXT NOT NULL, source TEXT NOT NULL CHECK(source IN ('papi','cachegrind','cupti')),"
  "  data TEXT NOT NULL, created TEXT NOT NULL DEFAULT (datetime('now')),"
  "  UNIQUE(target_id, workload_id, config_hash, source));",
  /* 5 -> 6: conservative pins and exclusive campaigns: the re-measurements
  ** that decide a campaign's pin (its best candidates alternated with the
  ** default schedule, stored together; sequence_hash names the ordered
  ** sources so that an identical sequence can be reused), and the lease
  ** of the one process that runs a campaign (db_campaign.c) */
  "CREATE TABLE remeasurements("
  "  id INTEGER PRIMARY KEY, campaign_id INTEGER NOT NULL REFERENCES campaigns(id),"
  "  seq INTEGER NOT NULL, role TEXT NOT NULL CHECK(role IN ('default','candidate')),"
  "  trial_id INTEGER REFERENCES trials(id), config TEXT NOT NULL,"
  "  source_hash TEXT NOT NULL, sequence_hash TEXT NOT NULL,"
  "  status TEXT NOT NULL CHECK(status IN ('ok','compile_error','runtime_error',"
  "    'timeout','wrong_result','invalid')),"
  "  time REAL, mean REAL, sd REAL, min REAL, ci_lo REAL, ci_hi REAL,"
  "  repeats INTEGER NOT NULL DEFAULT 0, noisy INTEGER NOT NULL DEFAULT 0,"
  "  compile_s REAL, verify_s REAL, bench_s REAL, origin TEXT NOT NULL,"
  "  created TEXT NOT NULL DEFAULT (datetime('now')),"
  "  CHECK((status = 'ok') = (time IS NOT NULL)));"
  "CREATE INDEX remeasurements_by_sequence ON remeasurements(sequence_hash, campaign_id, seq);"
  "CREATE TABLE leases("
  "  campaign_id INTEGER PRIMARY KEY REFERENCES campaigns(id), pid INTEGER NOT NULL,"
  "  host TEXT NOT NULL, boot TEXT NOT NULL, started INTEGER NOT NULL, action TEXT NOT NULL,"
  "  taken TEXT NOT NULL DEFAULT (datetime('now')));",
  /* 6 -> 7: what an imported file holds beyond the objective: a trial's
  ** every measurement with its unit, its per-repeat run times and the
  ** search algorithm's time; a campaign's provenance (format, tool, schema
  ** version, the file's header) */
  "ALTER TABLE trials ADD COLUMN measurements TEXT;"
  "ALTER TABLE trials ADD COLUMN runtimes TEXT;"
  "ALTER TABLE trials ADD COLUMN strategy_s REAL;"
  "ALTER TABLE campaigns ADD COLUMN provenance TEXT;",
  /* 7 -> 8: target families: every target's chain after its fingerprint
  ** (device model, architecture, backend; NULL where unknown), which the
  ** reader falls back along (rtdb.h). The rows already stored get theirs
  ** from their stored descriptions (fills[] below); and what a release
  ** tag answers when nothing is pinned: the template default of each
  ** kernel when the tag was made (tag_defaults, tags.defaults = 1 for a
  ** tag that recorded them) */
  "ALTER TABLE targets ADD COLUMN model TEXT;"
  "ALTER TABLE targets ADD COLUMN arch TEXT;"
  "ALTER TABLE targets ADD COLUMN backend TEXT;"
  "ALTER TABLE tags ADD COLUMN defaults INTEGER NOT NULL DEFAULT 0;"
  "CREATE TABLE tag_defaults(tag_id INTEGER NOT NULL REFERENCES tags(id), kernel TEXT NOT NULL,"
  "  config TEXT NOT NULL, PRIMARY KEY(tag_id, kernel));",
  /* 8 -> 9: the load guard (measure/ms.h "Load"): a trial measured while
  ** the machine was busy; such trials are not reused, calibrated on or
  ** pinned from */
  "ALTER TABLE trials ADD COLUMN loaded INTEGER NOT NULL DEFAULT 0;",
  /* 9 -> 10: model-only targets (targets/model/tm.h): a pin made from a
  ** predicted trial (trials.origin 'predicted', never measured) says so;
  ** pins before this version were all made from measurements */
  "ALTER TABLE pins ADD COLUMN predicted INTEGER NOT NULL DEFAULT 0;",
};

#define NMIGRATIONS ((int)(sizeof migrations / sizeof *migrations))
_Static_assert(NMIGRATIONS == DB_SCHEMA_VERSION, "one migration per schema version");

/* What a migration step computes beyond its SQL, in its transaction:
** fills[v] runs after migrations[v] (NULL: nothing). */
static int fill_families(db *d, rt_err *err);
static int (*const fills[NMIGRATIONS])(db *d, rt_err *err) = {[7] = fill_families};

/* SQLite's message on h, with the system's reason for an I/O error ("disk
** I/O error (No space left on device)"). */
static const char *errmsg(sqlite3 *h, char *buf, size_t cap) {
  int code = sqlite3_errcode(h) & 0xff, sys = sqlite3_system_errno(h);
  if ((code == SQLITE_IOERR || code == SQLITE_FULL || code == SQLITE_CANTOPEN) && sys > 0)
    snprintf(buf, cap, "%s (%s)", sqlite3_errmsg(h), strerror(sys));
  else
    snprintf(buf, cap, "%s", sqlite3_errmsg(h));
  return buf;
}

int db__fail(db *d, rt_err *err, const char *what) {
  char m[256];
  rt_err_set(err, "%s: %s", what, errmsg(d->h, m, sizeof m));
  return -1;
}

static int exec(db *d, const char *sql, rt_err *err) {
  char *msg = NULL;
  if (sqlite3_exec(d->h, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
  rt_err_set(err, "%s", msg ? msg : sqlite3_errmsg(d->h));
  sqlite3_free(msg);
  return -1;
}

/* The file's user_version into *v: 0, or -1 with err (SQLite's message). */
static int read_version(sqlite3 *h, int *v, rt_err *err) {
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL);
  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) *v = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  if (rc == SQLITE_ROW) return 0;
  rt_err_set(err, "%s", sqlite3_errmsg(h));
  return -1;
}

int db_user_version(db *d) {
  int v;
  return read_version(d->h, &v, NULL) ? INT_MIN : v;
}

int db_begin(db *d, rt_err *err) { return exec(d, "BEGIN IMMEDIATE", err); }
int db_commit(db *d, rt_err *err) { return exec(d, "COMMIT", err); }
void db_rollback(db *d) {
  if (!sqlite3_get_autocommit(d->h)) sqlite3_exec(d->h, "ROLLBACK", NULL, NULL, NULL);
}

/* Bring the file to version `to` (DB_SCHEMA_VERSION but in tests), all
** steps in one transaction; the version is read again under the lock. */
static int migrate(db *d, const char *path, int to, rt_err *err) {
  if (db_begin(d, err)) return -1;
  int v;
  if (read_version(d->h, &v, err)) {
    db_rollback(d);
    rt_err_prefix(err, "%s", path);
    return -1;
  }
  if (v < 0 || v > DB_SCHEMA_VERSION) {
    db_rollback(d);
    rt_err_set(err, "%s: schema version %d changed while it was opened: the file was not changed",
               path, v);
    return -1;
  }
  for (; v < to; v++) {
    char pragma[48];
    snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", v + 1);
    if (exec(d, migrations[v], err) || (fills[v] && fills[v](d, err)) || exec(d, pragma, err)) {
      rt_err_prefix(err, "%s: migrating from schema %d", path, v);
      db_rollback(d);
      return -1;
    }
  }
  return db_commit(d, err);
}

static db *open_at(const char *path, db_mode mode, int version, rt_err *err);

db *db_open(const char *path, db_mode mode, rt_err *err) {
  return open_at(path, mode, DB_SCHEMA_VERSION, err);
}

int db__make_version(const char *path, int version, rt_err *err) {
  if (version < 0 || version > DB_SCHEMA_VERSION) {
    rt_err_set(err, "no schema version %d", version);
    return -1;
  }
  db *d = open_at(path, DB_CREATE, version, err);
  db_close(d);
  return d ? 0 : -1;
}

/* Open path read-write, as a URI (any file name means itself, and ATTACH
** then takes URIs: db_merge attaches its source read-only); ":memory:"
** and "" (a temporary database) as they are. SQLite's code. */
static int open_rw(const char *path, int create, sqlite3 **h) {
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | (create ? SQLITE_OPEN_CREATE : 0);
  int plain = !*path || !strcmp(path, ":memory:");
  char *uri = plain ? NULL : rtdb__uri(path, "");
  int rc = plain || uri ? sqlite3_open_v2(plain ? path : uri, h, flags, NULL) : SQLITE_NOMEM;
  free(uri);
  if (*h) {
    sqlite3_busy_timeout(*h, 10000);
    sqlite3_extended_result_codes(*h, 1);
  }
  return rc;
}

/* Open an existing file read-only and say what it is (invariant 1): 0
** with *h open when mode may go on with it, else -1 with err (empty on
** entry) and nothing changed. */
static int inspect(const char *path, db_mode mode, int version, sqlite3 **h, rt_err *err) {
  int v = 0, rc = rtdb__open_ro(path, 0, 10000, h, &v, err->msg, sizeof err->msg);
  if (rc == SQLITE_READONLY_ROLLBACK && mode != DB_READ) {
    /* A hot journal (a writer died in a transaction): a writer rolls it
    ** back, as SQLite does at its first read, then looks at the file. */
    err->msg[0] = 0;
    if (open_rw(path, 0, h) != SQLITE_OK || read_version(*h, &v, err)) {
      rt_err_set(err, "%s: %s", path, *h ? sqlite3_errmsg(*h) : "out of memory");
      sqlite3_close(*h);
      *h = NULL;
      return -1;
    }
  } else if (rc != SQLITE_OK) {
    return -1;
  }
  sqlite3_stmt *st = NULL;
  int n = 0;
  const char *other = "";
  rc = 0;
  if (v == 0) {   /* empty, or another program's file */
    rc = sqlite3_prepare_v2(*h, "SELECT count(*), min(name) FROM sqlite_schema", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
      n = sqlite3_column_int(st, 0);
      other = n ? (const char *)sqlite3_column_text(st, 1) : "";
      rc = 0;
    }
  }
  if (rc)
    rt_err_set(err, "%s: %s", path, sqlite3_errmsg(*h));
  else if (v < 0)
    rt_err_set(err, "%s: not a rooftune database (user_version %d; rooftune's schema versions "
               "are 1 to %d): the file was not changed", path, v, DB_SCHEMA_VERSION);
  else if (v == 0 && n)
    rt_err_set(err, "%s: not a rooftune database (user_version 0, and tables of its own such "
               "as '%.100s'): the file was not changed", path, other ? other : "");
  else if (v == 0 && mode != DB_CREATE)
    rt_err_set(err, "%s: an empty file, not yet a rooftune database: 'rooftune db init --db %s' "
               "makes one (the file was not changed)", path, path);
  else if (v > DB_SCHEMA_VERSION)
    rt_err_set(err, "%s: schema version %d is newer than this rooftune's (%d): upgrade rooftune "
               "(if it is a rooftune file); the file was not changed", path, v, DB_SCHEMA_VERSION);
  else if (mode == DB_READ && v != version)
    rt_err_set(err, "%s: schema version %d is older than this rooftune's (%d): 'rooftune db init "
               "--db %s' migrates it (read-only commands change nothing)", path, v, version, path);
  sqlite3_finalize(st);
  if (err->msg[0]) {
    sqlite3_close(*h);
    *h = NULL;
    return -1;
  }
  return 0;
}

/* Run a journal_mode pragma (sql) and say whether its answer is "wal":
** 1, 0, or -1 with err. */
static int journal_mode(db *d, const char *sql, rt_err *err) {
  sqlite3_stmt *st;
  int wal = 0, rc = sqlite3_prepare_v2(d->h, sql, -1, &st, NULL);
  if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    wal = !sqlite3_stricmp((const char *)sqlite3_column_text(st, 0), "wal");
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_OK ? wal : db__fail(d, err, "journal mode");
}

/* Invariant 8: a writer works in WAL mode. The switch from rollback-
** journal mode rewrites the header's mode bytes, one page; through
** journal_mode OFF that write needs no journal, so a writer killed during
** it leaves no hot journal (which no reader can roll back: rtdb.h). A file
** in WAL mode already is left alone (OFF would leave WAL); where WAL is
** refused (memory, a VFS without shared memory) the writer works in
** rollback-journal mode, never OFF. 0, or -1 (-2: see below) with err. */
static int enter_wal(db *d, rt_err *err) {
  int wal = journal_mode(d, "PRAGMA journal_mode", err);
  if (wal < 0) return -1;
  if (wal || !d->writer) return journal_mode(d, "PRAGMA journal_mode = WAL", err) < 0 ? -1 : 0;
  if (journal_mode(d, "PRAGMA journal_mode = OFF", err) < 0 ||
      (wal = journal_mode(d, "PRAGMA journal_mode = WAL", err)) < 0)
    return -1;
  if (!wal) return journal_mode(d, "PRAGMA journal_mode = DELETE", err) < 0 ? -1 : 0;
  /* The first read makes the WAL's -shm. Where it cannot (a full disk)
  ** the file must not stay in WAL mode, which readers could not open
  ** either: -2, and the caller closes d and takes the file back to
  ** rollback-journal mode (leave_wal_alone). */
  int v;
  if (!read_version(d->h, &v, err)) return 0;
  char m[256];
  rt_err_set(err, "%s (the file was not changed)", errmsg(d->h, m, sizeof m));
  return -2;
}

/* After enter_wal's -2, with its connection closed: back to rollback-
** journal mode through a connection alone with the file in exclusive
** locking mode (its WAL index in memory: no -shm needed). */
static void leave_wal_alone(const char *path) {
  sqlite3 *h = NULL;
  if (open_rw(path, 0, &h) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 0);   /* another connection: WAL mode is theirs now */
    sqlite3_exec(h, "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = OFF", NULL, NULL, NULL);
  }
  sqlite3_close(h);
}

static db *open_at(const char *path, db_mode mode, int version, rt_err *err) {
  rt_err e = {0};
  if (mode != DB_READ && mode != DB_WRITE && mode != DB_CREATE) {
    rt_err_set(err, "%s: db_open: no mode %d", path, (int)mode);
    return NULL;
  }
  struct stat sb;
  int memory = !*path || !strcmp(path, ":memory:");
  int missing = !memory && stat(path, &sb) && errno == ENOENT;
  if (memory && mode == DB_READ) {
    rt_err_set(err, "%s: an in-memory database holds nothing to read", path);
    return NULL;
  }
  if (missing && mode != DB_CREATE) {
    rt_err_set(err, "%s: cannot open: no such file ('rooftune db init --db %s' makes a database)",
               path, path);
    return NULL;
  }
  db *d = rt_calloc(1, sizeof *d);
  if (!memory && !missing && inspect(path, mode, version, &d->h, &e)) {
    rt_err_set(err, "%s", e.msg);
    free(d);
    return NULL;
  }
  if (mode == DB_READ) {   /* the inspected read-only handle is the handle */
    sqlite3_extended_result_codes(d->h, 1);
    return d;
  }
  sqlite3_close(d->h);
  d->h = NULL;
  if (open_rw(path, mode == DB_CREATE, &d->h) != SQLITE_OK) {
    rt_err_set(err, "%s: cannot open: %s", path, d->h ? sqlite3_errmsg(d->h) : "out of memory");
    db_close(d);
    return NULL;
  }
  d->writer = !memory;
  /* The mode and the version were checked above, read-only; a file that
  ** changed since is checked again under the migration's lock.
  ** journal_mode answers a row; exec ignores it. */
  int wal = 0;
  if (exec(d, "PRAGMA foreign_keys = ON", &e) || migrate(d, path, version, err) ||
      (wal = enter_wal(d, &e)) || exec(d, "PRAGMA synchronous = NORMAL", &e)) {
    if (e.msg[0]) rt_err_set(err, "%s: %s", path, e.msg);
    d->writer = 0;
    db_close(d);
    if (wal == -2) leave_wal_alone(path);
    return NULL;
  }
  return d;
}

void db_close(db *d) {
  if (!d) return;
  sqlite3_finalize(d->trial_ins);
  if (d->writer && sqlite3_get_autocommit(d->h)) {
    /* Invariant 8: leave for rollback-journal mode. It needs the only
    ** connection to the file: with another one open it fails at once
    ** (no busy wait) and the file stays in WAL mode, for them. Through
    ** OFF, as enter_wal: the header's one-page rewrite after the
    ** checkpoint needs no journal, so a writer killed here leaves none
    ** hot (the file then reads as rollback mode; OFF is not stored). */
    sqlite3_busy_timeout(d->h, 0);
    sqlite3_exec(d->h, "PRAGMA journal_mode = OFF", NULL, NULL, NULL);
  }
  sqlite3_close(d->h);
  free(d);
}

/* ---- Statements ---- */

/* Bind "s" text, "i" int64, "d" double (NAN binds NULL), "t" text or NULL. */
static int bindv(sqlite3_stmt *st, const char *types, va_list ap) {
  for (int i = 1; *types; types++, i++) {
    int rc;
    switch (*types) {
    case 's': case 't': {
      const char *s = va_arg(ap, const char *);
      rc = s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
      break;
    }
    case 'i': rc = sqlite3_bind_int64(st, i, va_arg(ap, int64_t)); break;
    default: {
      double x = va_arg(ap, double);
      rc = isnan(x) ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, x);
    }
    }
    if (rc != SQLITE_OK) return rc;
  }
  return SQLITE_OK;
}

/* Prepare sql with bound values (see bindv); NULL with err on failure. */
static sqlite3_stmt *vquery(db *d, rt_err *err, const char *sql, const char *types,
                            va_list ap) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(d->h, sql, -1, &st, NULL) != SQLITE_OK) {
    db__fail(d, err, "prepare");
    return NULL;
  }
  if (bindv(st, types, ap) != SQLITE_OK) {
    db__fail(d, err, "bind");
    sqlite3_finalize(st);
    return NULL;
  }
  return st;
}

static sqlite3_stmt *query(db *d, rt_err *err, const char *sql, const char *types, ...) {
  va_list ap;
  va_start(ap, types);
  sqlite3_stmt *st = vquery(d, err, sql, types, ap);
  va_end(ap);
  return st;
}

/* *id := the first column of the first row of a query: 0 found, 1 no
** row, -1 error. */
static int select_id(db *d, int64_t *id, rt_err *err, const char *sql, const char *types, ...) {
  va_list ap;
  va_start(ap, types);
  sqlite3_stmt *st = vquery(d, err, sql, types, ap);
  va_end(ap);
  if (!st) return -1;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 0 : rc == SQLITE_DONE ? 1 : db__fail(d, err, "read");
}

/* Run a statement to completion; with want_id, *id = the first column of
** its single row (SELECT) or the inserted rowid. 0, 1 (no row), -1. */
static int run(db *d, sqlite3_stmt *st, int64_t *id, rt_err *err) {
  if (!st) return -1;
  int rc = sqlite3_step(st), out = 0;
  if (rc == SQLITE_ROW) {
    if (id) *id = sqlite3_column_int64(st, 0);
  } else if (rc == SQLITE_DONE && sqlite3_stmt_readonly(st)) {
    out = 1;   /* a query with no row (sqlite3_changes would describe an older write) */
  } else if (rc == SQLITE_DONE) {
    if (id) *id = sqlite3_last_insert_rowid(d->h);
    out = sqlite3_changes(d->h) ? 0 : 1;
  } else {
    out = db__fail(d, err, sqlite3_stmt_readonly(st) ? "read" : "write");
  }
  sqlite3_finalize(st);
  return out;
}

/* Families (schema 8): the chain of every target row whose backend is
** unknown (NULL) from its name and stored description (targets/tg.h,
** tg_family_of); what a row does not tell stays NULL. A row's known chain
** is never changed. */
static int fill_families(db *d, rt_err *err) {
  sqlite3_stmt *st = query(d, err, "SELECT id, name, description FROM targets WHERE backend IS NULL"
                                   " ORDER BY id", "");
  int rc = 0, step;
  while (st && !rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 1),
               *desc = (const char *)sqlite3_column_text(st, 2);
    tg_family f;
    tg_family_of(name ? name : "", desc ? desc : "", &f);
    if (f.backend[0])
      rc = run(d, query(d, err, "UPDATE targets SET model = NULLIF(?1, ''), arch = NULLIF(?2, ''),"
                                " backend = ?3 WHERE id = ?4", "sssi", f.model, f.arch, f.backend,
                        (int64_t)sqlite3_column_int64(st, 0)), NULL, err) < 0;
  }
  if (st && !rc && step != SQLITE_DONE) rc = db__fail(d, err, "read") != 0;
  sqlite3_finalize(st);
  return st && !rc ? 0 : -1;
}

int db__fill_families(db *d, rt_err *err) { return fill_families(d, err); }

int db_target_id(db *d, const char *name, const char *fingerprint,
                 const char *description_json, int64_t *id, rt_err *err) {
  int rc = db_target_find(d, name, fingerprint, id, err);
  if (rc <= 0) return rc;
  return run(d, query(d, err, "INSERT INTO targets(name, fingerprint, description) VALUES(?1, ?2, ?3)",
                      "sss", name, fingerprint, description_json), id, err) < 0 ||
                 fill_families(d, err) ? -1 : 0;
}

int db_target_find(db *d, const char *name, const char *fingerprint, int64_t *id, rt_err *err) {
  return select_id(d, id, err, "SELECT id FROM targets WHERE name = ?1 AND fingerprint = ?2",
                   "ss", name, fingerprint);
}

int db_target_latest(db *d, const char *name, int64_t *id, rt_err *err) {
  return select_id(d, id, err, "SELECT id FROM targets WHERE name = ?1 ORDER BY id DESC LIMIT 1",
                   "s", name);
}

int db_kernel_id(db *d, const char *name, const char *template_version, int64_t *id,
                 rt_err *err) {
  int rc = select_id(d, id, err, "SELECT id FROM kernels WHERE name = ?1 AND template_version = ?2",
                     "ss", name, template_version);
  if (rc <= 0) return rc;
  return run(d, query(d, err, "INSERT INTO kernels(name, template_version) VALUES(?1, ?2)", "ss",
                      name, template_version), id, err) < 0 ? -1 : 0;
}

int db_kernel_set_default(db *d, int64_t kernel_id, const char *config_json, rt_err *err) {
  return run(d, query(d, err, "UPDATE kernels SET default_config = ?1 WHERE id = ?2", "si",
                      config_json, kernel_id), NULL, err) < 0 ? -1 : 0;
}

int db_workload_id(db *d, int64_t kernel_id, const char *key, const char *sizes_json,
                   const char *dtype, const char *layout, int64_t *id, rt_err *err) {
  int rc = select_id(d, id, err, "SELECT id FROM workloads WHERE kernel_id = ?1 AND key = ?2",
                     "is", kernel_id, key);
  if (rc <= 0) return rc;
  char hex[33];
  rt_hash_hex(rt_hash_bytes(RT_HASH_INIT, key, strlen(key)), hex);
  return run(d, query(d, err, "INSERT INTO workloads(kernel_id, key, sizes, dtype, layout, hash) "
                              "VALUES(?1, ?2, ?3, ?4, ?5, ?6)", "isssss",
                      kernel_id, key, sizes_json, dtype, layout, hex), id, err) < 0 ? -1 : 0;
}

int db_space_id(db *d, const char *spec, int64_t *id, rt_err *err) {
  char hex[33];
  rt_hash_hex(rt_hash_bytes(RT_HASH_INIT, spec, strlen(spec)), hex);
  int rc = select_id(d, id, err, "SELECT id FROM spaces WHERE hash = ?1", "s", hex);
  if (rc <= 0) return rc;
  return run(d, query(d, err, "INSERT INTO spaces(spec, hash) VALUES(?1, ?2)", "ss", spec, hex),
             id, err) < 0 ? -1 : 0;
}

int db_campaign_new(db *d, const db_campaign *c, int64_t *id, rt_err *err) {
  return run(d, query(d, err,
                      "INSERT INTO campaigns(target_id, workload_id, space_id, strategy, options,"
                      " seed, budget, rooftune_version, source, compiler, flags, state,"
                      " rooftune_commit) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                      "iiissiissssss", c->target_id, c->workload_id, c->space_id, c->strategy,
                      c->options_json, c->seed, c->budget, RT_VERSION, c->source,
                      c->compiler, c->flags, c->state, rt_commit()),
             id, err) < 0 ? -1 : 0;
}

int db_campaign_end(db *d, int64_t id, const char *state, rt_err *err) {
  return run(d, query(d, err, "UPDATE campaigns SET state = ?1, ended = datetime('now') WHERE id = ?2",
                      "si", state, id), NULL, err) < 0 ? -1 : 0;
}

int db_campaign_set_report(db *d, int64_t id, const char *report_json, rt_err *err) {
  return run(d, query(d, err, "UPDATE campaigns SET report = ?1 WHERE id = ?2", "ti", report_json, id),
             NULL, err) < 0 ? -1 : 0;
}

static char *col_dup(sqlite3_stmt *st, int i) {
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? rt_strdup((const char *)t) : NULL;
}

int db_campaign_get(db *d, int64_t id, db_campaign_info *c, rt_err *err) {
  memset(c, 0, sizeof *c);
  sqlite3_stmt *st = query(d, err,
                           "SELECT c.id, c.target_id, c.workload_id, c.strategy, c.options, c.state,"
                           " g.name, g.fingerprint, k.name, w.key, c.report, c.seed, c.budget, c.source"
                           " FROM campaigns c JOIN targets g ON g.id = c.target_id"
                           " JOIN workloads w ON w.id = c.workload_id JOIN kernels k ON k.id = w.kernel_id"
                           " WHERE c.id = ?1", "i", id);
  if (!st) return -1;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    c->id = sqlite3_column_int64(st, 0);
    c->target_id = sqlite3_column_int64(st, 1);
    c->workload_id = sqlite3_column_int64(st, 2);
    c->strategy = col_dup(st, 3);
    c->options = col_dup(st, 4);
    c->state = col_dup(st, 5);
    c->target = col_dup(st, 6);
    c->fingerprint = col_dup(st, 7);
    c->kernel = col_dup(st, 8);
    c->workload_key = col_dup(st, 9);
    c->report = col_dup(st, 10);
    c->seed = sqlite3_column_int64(st, 11);
    c->budget = sqlite3_column_int64(st, 12);
    c->source = col_dup(st, 13);
  }
  sqlite3_finalize(st);
  if (rc == SQLITE_ROW) return 0;
  if (rc == SQLITE_DONE) {
    rt_err_set(err, "no campaign %lld", (long long)id);
    return 1;
  }
  return db__fail(d, err, "read");
}

void db_campaign_info_free(db_campaign_info *c) {
  char **s[] = {&c->strategy, &c->options, &c->state, &c->target, &c->fingerprint, &c->kernel,
                &c->workload_key, &c->report, &c->source};
  for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
    free(*s[i]);
    *s[i] = NULL;
  }
}

/* The trials query: its text is the select plus one constant condition
** per filter that is set (so that SQLite can use the index of each --
** "?N IS NULL OR ..." guards would force a scan of every trial); the values
** are bound, never written into the text. */
static const char trials_select[] =
    "SELECT t.id, t.campaign_id, t.config, t.status, t.time, t.ci_lo, t.ci_hi, t.repeats,"
    " t.compile_s, t.verify_s, t.bench_s, t.framework_s, t.source_hash, t.origin, t.mean, t.sd,"
    " t.min, t.noisy, t.loaded"
    " FROM trials t JOIN campaigns c ON c.id = t.campaign_id JOIN targets g ON g.id = c.target_id"
    " JOIN workloads w ON w.id = c.workload_id JOIN kernels k ON k.id = w.kernel_id WHERE 1";

static sqlite3_stmt *trials_query(db *d, const db_trial_filter *f, rt_err *err) {
  const struct { int set; const char *cond; int is_text; int64_t i; const char *t; } w[] = {
    {f->campaign != 0, " AND t.campaign_id = ?", 0, f->campaign, NULL},
    {f->target != NULL, " AND g.name = ?", 1, 0, f->target},
    {f->kernel != NULL, " AND k.name = ?", 1, 0, f->kernel},
    {f->workload_key != NULL, " AND w.key = ?", 1, 0, f->workload_key},
    {f->target_id != 0, " AND c.target_id = ?", 0, f->target_id, NULL},
    {f->workload_id != 0, " AND c.workload_id = ?", 0, f->workload_id, NULL},
    {f->source_hash != NULL,
     " AND t.source_hash = ? AND coalesce(t.origin, 'measured') = 'measured'", 1, 0, f->source_hash},
  };
  /* predictions are not measurements (invariant 10): left out unless asked */
  const char *measured = f->predicted ? "" : " AND coalesce(t.origin, '') <> 'predicted'";
  enum { NW = sizeof w / sizeof *w };
  rt_str sql = {0};
  rt_str_printf(&sql, "%s%s", trials_select, measured);
  for (int i = 0; i < NW; i++)
    if (w[i].set) rt_str_printf(&sql, "%s", w[i].cond);
  rt_str_printf(&sql, " ORDER BY t.id");
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(d->h, sql.s, -1, &st, NULL);
  free(sql.s);
  if (rc != SQLITE_OK) {
    db__fail(d, err, "prepare");
    return NULL;
  }
  for (int i = 0, k = 1; i < NW && rc == SQLITE_OK; i++)
    if (w[i].set)
      rc = w[i].is_text ? sqlite3_bind_text(st, k++, w[i].t, -1, SQLITE_TRANSIENT)
                        : sqlite3_bind_int64(st, k++, w[i].i);
  if (rc != SQLITE_OK) {
    db__fail(d, err, "bind");
    sqlite3_finalize(st);
    return NULL;
  }
  return st;
}

static double col_num(sqlite3_stmt *st, int i) {
  return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

int db_trials(db *d, const db_trial_filter *f, db_row_fn fn, void *ctx, rt_err *err) {
  sqlite3_stmt *st = trials_query(d, f, err);
  if (!st) return -1;
  int n = 0, rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    db_trial_row r = {
      .id = sqlite3_column_int64(st, 0), .campaign_id = sqlite3_column_int64(st, 1),
      .config = (const char *)sqlite3_column_text(st, 2),
      .status = (const char *)sqlite3_column_text(st, 3),
      .time_s = col_num(st, 4), .ci_lo_s = col_num(st, 5), .ci_hi_s = col_num(st, 6),
      .repeats = sqlite3_column_int(st, 7), .compile_s = col_num(st, 8),
      .verify_s = col_num(st, 9), .bench_s = col_num(st, 10), .framework_s = col_num(st, 11),
      .source_hash = (const char *)sqlite3_column_text(st, 12),
      .origin = (const char *)sqlite3_column_text(st, 13), .mean_s = col_num(st, 14),
      .sd_s = col_num(st, 15), .min_s = col_num(st, 16), .noisy = sqlite3_column_int(st, 17),
      .loaded = sqlite3_column_int(st, 18),
    };
    n++;
    if (fn(ctx, &r)) break;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) n = db__fail(d, err, "read");
  sqlite3_finalize(st);
  return n;
}

void db_trial_init(db_trial *t) {
  memset(t, 0, sizeof *t);
  t->time_s = t->mean_s = t->sd_s = t->min_s = t->ci_lo_s = t->ci_hi_s = NAN;
  t->predicted_s = t->compile_s = t->verify_s = t->bench_s = t->framework_s = NAN;
  t->strategy_s = NAN;
}

static const char trial_ins_sql[] =
    "INSERT INTO trials(campaign_id, config, config_hash, status, time, mean, sd,"
    " min, ci_lo, ci_hi, repeats, noisy, counters, predicted, compile_s,"
    " verify_s, bench_s, framework_s, created, source_hash, origin, measurements,"
    " runtimes, strategy_s, loaded)"
    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
    " ?16, ?17, ?18, coalesce(?19, datetime('now')), ?20, ?21, ?22, ?23, ?24, ?25)";

/* Bind through a va_list (bindv's types) on an already prepared statement. */
static int bind_all(sqlite3_stmt *st, const char *types, ...) {
  va_list ap;
  va_start(ap, types);
  int rc = bindv(st, types, ap);
  va_end(ap);
  return rc;
}

int db_trial_add(db *d, const db_trial *t, int64_t *id, rt_err *err) {
  char hex[33];
  rt_hash_hex(rt_hash_bytes(RT_HASH_INIT, t->config_json, strlen(t->config_json)), hex);
  /* Prepared once per handle (imports add thousands of rows). */
  if (!d->trial_ins && sqlite3_prepare_v3(d->h, trial_ins_sql, -1, SQLITE_PREPARE_PERSISTENT,
                                          &d->trial_ins, NULL) != SQLITE_OK)
    return db__fail(d, err, "prepare");
  sqlite3_stmt *st = d->trial_ins;
  int rc = bind_all(st, "isssddddddiitdddddtttttdi", t->campaign_id, t->config_json, hex, t->status,
                    t->time_s, t->mean_s, t->sd_s, t->min_s, t->ci_lo_s, t->ci_hi_s,
                    (int64_t)t->repeats, (int64_t)t->noisy, t->counters_json, t->predicted_s,
                    t->compile_s, t->verify_s, t->bench_s, t->framework_s, t->timestamp,
                    t->source_hash, t->origin, t->measurements_json, t->runtimes_json,
                    t->strategy_s, (int64_t)t->loaded);
  rc = rc != SQLITE_OK ? db__fail(d, err, "bind")
       : sqlite3_step(st) != SQLITE_DONE ? db__fail(d, err, "write") : 0;
  if (!rc && id) *id = sqlite3_last_insert_rowid(d->h);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return rc;
}

/* ---- Workload keys ---- */

char *db_workload_key(const char *kernel, const char *dtype, const sp_space *sp) {
  rt_str s = {0};
  rt_str_printf(&s, "%s %s", kernel, dtype);
  for (int v = 0; v < sp_nvars(sp); v++) {
    char buf[256];
    sx_repr(sp_var_value(sp, v), buf, sizeof buf);
    rt_str_printf(&s, " %s=%s", sp_var_name(sp, v), buf);
  }
  return s.s;
}

char *db_workload_sizes(const sp_space *sp) { return sp_vars_json(sp); }

/* The canonical text of a space: parameters with their values, conditions
** and bound problem variables, as compact JSON. */
char *db_space_spec(const sp_space *sp) {
  rt_str s = {0};
  char buf[256];
  rt_str_printf(&s, "{\"parameters\":[");
  for (int p = 0; p < sp_nparams(sp); p++) {
    rt_str_printf(&s, "%s[\"%s\"", p ? "," : "", sp_param_name(sp, p));
    for (int v = 0; v < sp_nvalues(sp, p); v++) {
      sx_repr(sp_value(sp, p, v), buf, sizeof buf);
      json_t *j = json_string(buf);
      char *t = json_dumps(j, JSON_ENCODE_ANY);
      rt_str_printf(&s, ",%s", t);
      free(t);
      json_decref(j);
    }
    rt_str_printf(&s, "]");
  }
  rt_str_printf(&s, "],\"conditions\":[");
  for (int c = 0; c < sp_nconds(sp); c++) {
    json_t *j = json_string(sp_cond_text(sp, c));
    char *t = json_dumps(j, JSON_ENCODE_ANY);
    rt_str_printf(&s, "%s%s", c ? "," : "", t);
    free(t);
    json_decref(j);
  }
  char *sizes = db_workload_sizes(sp);
  rt_str_printf(&s, "],\"variables\":%s}", sizes);
  free(sizes);
  return s.s;
}


/* ---- Queries ---- */

static const char ranked_sql[] =
    "SELECT t.id, t.config, t.status, t.time FROM trials t"
    " JOIN campaigns c ON c.id = t.campaign_id JOIN targets g ON g.id = c.target_id"
    " JOIN workloads w ON w.id = c.workload_id JOIN kernels k ON k.id = w.kernel_id"
    " WHERE g.name = ?1 AND k.name = ?2 AND w.key = ?3 AND t.status = 'ok'"
    " AND coalesce(t.origin, '') <> 'predicted'"   /* measured only: invariant 10 */
    " ORDER BY t.time, t.id";

int db_ranked(db *d, const char *target, const char *kernel, const char *workload_key,
              int limit, db_trial_fn fn, void *ctx, rt_err *err) {
  sqlite3_stmt *st = query(d, err, ranked_sql, "sss", target, kernel, workload_key);
  if (!st) return -1;
  int n = 0, rc = SQLITE_DONE;
  while ((limit <= 0 || n < limit) && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    n++;
    if (fn(ctx, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
           (const char *)sqlite3_column_text(st, 2), sqlite3_column_double(st, 3)))
      break;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) n = db__fail(d, err, "read");
  sqlite3_finalize(st);
  return n;
}

int db_workload_keys(db *d, const char *target, const char *kernel, char ***keys,
                     rt_err *err) {
  sqlite3_stmt *st = query(d, err,
                           "SELECT DISTINCT w.key FROM campaigns c JOIN targets g ON g.id = c.target_id"
                           " JOIN workloads w ON w.id = c.workload_id JOIN kernels k ON k.id = w.kernel_id"
                           " WHERE g.name = ?1 AND k.name = ?2 ORDER BY w.key", "ss", target, kernel);
  if (!st) return -1;
  int n = 0, rc;
  *keys = NULL;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *k = (const char *)sqlite3_column_text(st, 0);
    *keys = rt_realloc(*keys, (size_t)(n + 1) * sizeof **keys);
    (*keys)[n++] = rt_strdup(k ? k : "");
  }
  if (rc != SQLITE_DONE) {
    db__fail(d, err, "read");
    while (n) free((*keys)[--n]);
    free(*keys);
    *keys = NULL;
    n = -1;
  }
  sqlite3_finalize(st);
  return n;
}

/* ---- Check and statistics ---- */

/* Append every row of a one-column query to out (a NULL as "(null)"),
** and a query that fails as a problem too; returns the problems. */
static int rows_to(sqlite3 *h, const char *sql, rt_str *out, const char *prefix) {
  sqlite3_stmt *st;
  int n = 0, rc;
  if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
    rt_str_printf(out, "%scannot run the check: %s\n", prefix, sqlite3_errmsg(h));
    return 1;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const unsigned char *t = sqlite3_column_text(st, 0);
    rt_str_printf(out, "%s%s\n", prefix, t ? (const char *)t : "(null)");
    n++;
  }
  if (rc != SQLITE_DONE) {
    rt_str_printf(out, "%scannot finish the check: %s\n", prefix, sqlite3_errmsg(h));
    n++;
  }
  sqlite3_finalize(st);
  return n;
}

/* rooftune's own invariants, each a query listing its violations (each
** row names the table and row). */
static const struct { const char *what, *sql; } invariants[] = {
  {"trial of a missing campaign",
   "SELECT 'trial ' || id FROM trials WHERE campaign_id NOT IN (SELECT id FROM campaigns)"},
  {"ok trial without a time / failed trial with one",
   "SELECT 'trial ' || id FROM trials WHERE (status = 'ok') != (time IS NOT NULL)"},
  {"pin versions not numbered 1..n",
   "SELECT 'target ' || target_id || ' workload ' || workload_id FROM pins"
   " GROUP BY target_id, workload_id HAVING max(version) != count(*) OR min(version) != 1"},
  {"current pin of another (target, workload)",
   "SELECT 'pin_current target ' || c.target_id || ' workload ' || c.workload_id || ' -> pins row '"
   " || c.pin_id FROM pin_current c JOIN pins p ON p.id = c.pin_id"
   " WHERE p.target_id != c.target_id OR p.workload_id != c.workload_id"},
  {"pinned (target, workload) without a current version",
   "SELECT DISTINCT 'target ' || target_id || ' workload ' || workload_id FROM pins p"
   " WHERE NOT EXISTS (SELECT 1 FROM pin_current c WHERE c.target_id = p.target_id"
   " AND c.workload_id = p.workload_id)"},
  {"pin of a trial of another (target, workload)",
   "SELECT 'pins row ' || p.id || ' -> trials row ' || t.id FROM pins p JOIN trials t ON t.id = p.trial_id"
   " JOIN campaigns c ON c.id = t.campaign_id"
   " WHERE c.target_id != p.target_id OR c.workload_id != p.workload_id"},
  {"pin of a trial that is not verified (ok)",
   "SELECT 'pins row ' || p.id || ' -> trials row ' || t.id || ' (' || t.status || ')' FROM pins p"
   " JOIN trials t ON t.id = p.trial_id WHERE t.status != 'ok'"},
  {"pin whose configuration is not its trial's",
   "SELECT 'pins row ' || p.id || ' -> trials row ' || t.id FROM pins p"
   " JOIN trials t ON t.id = p.trial_id WHERE p.config != t.config"},
  {"pin marked predicted or not other than its trial (db.h invariant 10)",
   "SELECT 'pins row ' || p.id || ' -> trials row ' || t.id FROM pins p"
   " JOIN trials t ON t.id = p.trial_id WHERE p.predicted != coalesce(t.origin = 'predicted', 0)"},
  {"tag binding no pin",
   "SELECT 'tags row ' || id || ' (' || name || ')' FROM tags t"
   " WHERE NOT EXISTS (SELECT 1 FROM tag_pins tp WHERE tp.tag_id = t.id)"},
  {"tag binding two versions of one (target, workload)",
   "SELECT 'tag_pins of tags row ' || tp.tag_id || ': target ' || p.target_id || ' workload '"
   " || p.workload_id FROM tag_pins tp JOIN pins p ON p.id = tp.pin_id"
   " GROUP BY tp.tag_id, p.target_id, p.workload_id HAVING count(*) > 1"},
  {"model versions not numbered 1..n",
   "SELECT 'target ' || target_id || ' kernel ' || kernel FROM models"
   " GROUP BY target_id, kernel HAVING max(version) != count(*) OR min(version) != 1"},
};

/* Columns holding JSON text that rooftune parses: each a JSON object
** when not NULL. */
static const struct { const char *table, *column; } json_columns[] = {
  {"workloads", "sizes"}, {"kernels", "default_config"}, {"pins", "config"},
  {"trials", "config"}, {"trials", "counters"}, {"campaigns", "options"},
  {"campaigns", "report"}, {"ceilings", "data"}, {"models", "coefs"},
  {"models", "fit"}, {"counters", "config"}, {"counters", "data"},
};

/* The schema of version v (its migrations run on an empty database)
** against the file's: every table, index and column must be there, each
** defined as the migrations define it. Returns the problems. */
static int check_schema(db *d, int v, rt_str *out) {
  sqlite3 *ref;
  sqlite3_stmt *st = NULL, *have = NULL, *col = NULL, *rcol = NULL;
  int bad = 0, rc = sqlite3_open(":memory:", &ref);
  for (int i = 0; i < v && rc == SQLITE_OK; i++) rc = sqlite3_exec(ref, migrations[i], NULL, NULL, NULL);
  if (rc != SQLITE_OK ||
      sqlite3_prepare_v2(ref, "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL"
                              " ORDER BY rowid", -1, &st, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(ref, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", -1, &rcol,
                         NULL) != SQLITE_OK) {
    rt_str_printf(out, "schema: cannot build version %d's for comparison: %s\n", v, sqlite3_errmsg(ref));
    bad++;
  } else if (sqlite3_prepare_v2(d->h, "SELECT sql FROM sqlite_schema WHERE type = ?1 AND name = ?2",
                                -1, &have, NULL) != SQLITE_OK ||
             sqlite3_prepare_v2(d->h, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", -1, &col,
                                NULL) != SQLITE_OK) {
    rt_str_printf(out, "schema: cannot read it: %s\n", sqlite3_errmsg(d->h));
    bad++;
  }
  while (!bad && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *type = (const char *)sqlite3_column_text(st, 0),
               *name = (const char *)sqlite3_column_text(st, 1),
               *sql = (const char *)sqlite3_column_text(st, 2);
    sqlite3_bind_text(have, 1, type, -1, SQLITE_STATIC);
    sqlite3_bind_text(have, 2, name, -1, SQLITE_STATIC);
    int hr = sqlite3_step(have), missing_cols = 0;
    if (hr == SQLITE_DONE) {
      rt_str_printf(out, "schema: no %s %s\n", type, name);
      bad++;
    } else if (hr != SQLITE_ROW) {
      rt_str_printf(out, "schema: %s %s: %s\n", type, name, sqlite3_errmsg(d->h));
      bad++;
    } else {
      const char *fsql = (const char *)sqlite3_column_text(have, 0);
      sqlite3_bind_text(rcol, 1, name, -1, SQLITE_STATIC);
      while (!strcmp(type, "table") && sqlite3_step(rcol) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(rcol, 0);
        sqlite3_bind_text(col, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(col, 2, c, -1, SQLITE_STATIC);
        int cr = sqlite3_step(col);
        if (cr != SQLITE_ROW) {
          rt_str_printf(out, "schema: table %s has no column %s%s%s\n", name, c,
                        cr == SQLITE_DONE ? "" : ": ", cr == SQLITE_DONE ? "" : sqlite3_errmsg(d->h));
          missing_cols++;
        }
        sqlite3_reset(col);
      }
      sqlite3_reset(rcol);
      if (!missing_cols && (!fsql || strcmp(fsql, sql)))
        rt_str_printf(out, "schema: %s %s is not defined as schema version %d defines it\n", type,
                      name, v);
      bad += missing_cols + (!missing_cols && (!fsql || strcmp(fsql, sql)));
    }
    sqlite3_reset(have);
  }
  if (!bad && rc != SQLITE_DONE) {
    rt_str_printf(out, "schema: %s\n", sqlite3_errmsg(ref));
    bad++;
  }
  sqlite3_finalize(st), sqlite3_finalize(have), sqlite3_finalize(col), sqlite3_finalize(rcol);
  sqlite3_close(ref);
  return bad;
}

/* The reader's problems as report lines. */
static void reader_problem(void *ctx, const char *problem) {
  rt_str_printf(ctx, "%s\n", problem);
}

int db_check(db *d, rt_str *report, rt_err *err) {
  (void)err;   /* a check that cannot run is a problem of the file: reported */
  int bad = rows_to(d->h, "SELECT integrity_check FROM pragma_integrity_check"
                          " WHERE integrity_check != 'ok'", report, "integrity: ");
  bad += rows_to(d->h, "SELECT \"table\" || ' row ' || rowid || ' -> ' || parent FROM pragma_foreign_key_check",
                 report, "foreign key: ");
  int v = db_user_version(d);
  if (v != DB_SCHEMA_VERSION) {
    rt_str_printf(report, "schema version %d, expected %d\n", v, DB_SCHEMA_VERSION);
    bad++;
  }
  if (v >= 1 && v <= NMIGRATIONS) bad += check_schema(d, v, report);
  for (size_t i = 0; i < sizeof json_columns / sizeof *json_columns; i++) {
    char sql[320], prefix[96];
    /* CASE: json_type() of text that is not JSON is an error, not a value */
    snprintf(sql, sizeof sql, "SELECT '%s row ' || rowid FROM %s WHERE %s IS NOT NULL AND"
             " CASE WHEN json_valid(%s) THEN json_type(%s) != 'object' ELSE 1 END ORDER BY rowid",
             json_columns[i].table, json_columns[i].table, json_columns[i].column,
             json_columns[i].column, json_columns[i].column);   /* names are ours */
    snprintf(prefix, sizeof prefix, "%s.%s is not a JSON object: ", json_columns[i].table,
             json_columns[i].column);
    bad += rows_to(d->h, sql, report, prefix);
  }
  for (size_t i = 0; i < sizeof invariants / sizeof *invariants; i++) {
    char prefix[96];
    snprintf(prefix, sizeof prefix, "%s: ", invariants[i].what);
    bad += rows_to(d->h, invariants[i].sql, report, prefix);
  }
  bad += rtdb__check(d->h, reader_problem, report);
  return bad ? 1 : 0;
}

int db_stats(db *d, rt_str *out, rt_err *err) {
  static const char *const tables[] = {"targets", "kernels", "workloads", "spaces", "campaigns",
                                       "trials", "pins", "tags", "ceilings", "models",
                                       "counters"};
  for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
    char sql[64];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[i]); /* table names are ours */
    int64_t n = 0;
    if (run(d, query(d, err, sql, ""), &n, err) < 0) return -1;
    rt_str_printf(out, "%s %lld\n", tables[i], (long long)n);
  }
  sqlite3_stmt *st = query(d, err, "SELECT status, count(*) FROM trials GROUP BY status ORDER BY status", "");
  if (!st) return -1;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *status = (const char *)sqlite3_column_text(st, 0);
    rt_str_printf(out, "trials.%s %lld\n", status ? status : "NULL",
                  (long long)sqlite3_column_int64(st, 1));
  }
  rc = rc == SQLITE_DONE ? 0 : db__fail(d, err, "read");
  sqlite3_finalize(st);
  return rc;
}

/* ---- For the other db_*.c files (see "Internal" in db.h) ---- */

sqlite3 *db__sqlite(db *d) { return d->h; }

sqlite3_stmt *db__query(db *d, rt_err *err, const char *sql, const char *types, ...) {
  va_list ap;
  va_start(ap, types);
  sqlite3_stmt *st = vquery(d, err, sql, types, ap);
  va_end(ap);
  return st;
}

int db__run(db *d, sqlite3_stmt *st, int64_t *id, rt_err *err) { return run(d, st, id, err); }
