/*
** db_copy.c -- a consistent copy of a database file: what the experiments
** start from (experiments/lib.sh `copy`) and what a user keeps aside. A
** byte copy (cp) of an SQLite file is not one: a WAL-mode file's latest
** transactions live in its -wal until a checkpoint moves them, and a file
** being written is read half old, half new. db_copy reads the source
** through SQLite's online backup in one read transaction (a snapshot of
** what was committed when it began, whatever writers do meanwhile),
** writes a temporary file beside the target, leaves it in rollback-journal
** mode (no -wal/-shm needed to read it, like a file rooftune closed),
** checks it and renames it over the target (rt_out): killed at any point,
** the target is absent or what it was. The source is opened read-only
** (rtdb_int.h) and never written; a WAL-mode source nobody has open is
** read as immutable, checked unchanged afterwards, so that the copy leaves
** no -wal/-shm beside it (the experiments copy committed databases).
*/
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "rtdb_int.h"

/* The backup, retried while a writer holds a lock it needs (10 s). */
static int backup(sqlite3 *src, sqlite3 *dst) {
  sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
  if (!b) return sqlite3_errcode(dst);
  int rc;
  for (int waited = 0; (rc = sqlite3_backup_step(b, -1)) == SQLITE_BUSY || rc == SQLITE_LOCKED;) {
    if (waited++ >= 1000) break;
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  int fin = sqlite3_backup_finish(b);
  return rc == SQLITE_DONE ? fin : rc;
}

/* The first text column of the first row of sql on h into out (cap
** bytes); SQLite's code. */
static int one_text(sqlite3 *h, const char *sql, char *out, size_t cap) {
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(h, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) return rc;
  out[0] = 0;
  if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    snprintf(out, cap, "%s", t ? t : "");
    rc = SQLITE_OK;
  } else if (rc == SQLITE_DONE) {
    rc = SQLITE_OK;
  }
  sqlite3_finalize(st);
  return rc;
}

/* Copy the open source h into the empty file tmp: backup, rollback-
** journal mode (a backup keeps the source's WAL flag in the header; the
** round trip through WAL rewrites it), quick_check. 0 or -1 with err. */
static int copy_into(sqlite3 *h, const char *tmp, rt_err *err) {
  sqlite3 *t = NULL;
  char *uri = rtdb__uri(tmp, "");
  char mode[32] = "", check[256] = "";
  int rc = uri ? sqlite3_open_v2(uri, &t, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, NULL) : SQLITE_NOMEM;
  free(uri);
  const char *what = "cannot open the temporary copy";
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(t, 10000);
    what = "backup";
    rc = backup(h, t);
  }
  if (rc == SQLITE_OK) {
    what = "journal mode";
    rc = one_text(t, "PRAGMA journal_mode = WAL", mode, sizeof mode);
    if (rc == SQLITE_OK) rc = one_text(t, "PRAGMA journal_mode = DELETE", mode, sizeof mode);
    if (rc == SQLITE_OK && strcmp(mode, "delete")) rc = SQLITE_ERROR;
  }
  if (rc == SQLITE_OK) {
    what = "check of the copy";
    rc = one_text(t, "PRAGMA quick_check", check, sizeof check);
    if (rc == SQLITE_OK && strcmp(check, "ok")) rc = SQLITE_CORRUPT;
  }
  if (rc != SQLITE_OK) {
    int sys = t && (rc & 0xff) != SQLITE_CORRUPT ? sqlite3_system_errno(t) : 0;
    rt_err_set(err, "%s: %s%s%s%s", what, check[0] && strcmp(check, "ok") ? check
                                          : t ? sqlite3_errmsg(t) : sqlite3_errstr(rc),
               sys > 0 ? " (" : "", sys > 0 ? strerror(sys) : "", sys > 0 ? ")" : "");
  }
  if (sqlite3_close(t) != SQLITE_OK && rc == SQLITE_OK) {
    rt_err_set(err, "closing the copy: %s", sqlite3_errmsg(t));
    rc = SQLITE_ERROR;
  }
  return rc == SQLITE_OK ? 0 : -1;
}

/* The files SQLite keeps beside path: name with suffix. */
static char *beside(const char *path, const char *suffix) {
  rt_str s = {0};
  rt_str_printf(&s, "%s%s", path, suffix);
  return s.s;
}

/* Whether src is a WAL-mode file that nobody has open: header mode 2 and
** no -wal or -shm beside it (SQLite makes them when a connection opens a
** WAL-mode file and removes them at the last close). *sb gets its stat.
** Its own descriptor is closed before any connection to src exists in
** this process (db_copy's only caller is `db copy`), so the close drops
** no POSIX lock of SQLite's (closing a descriptor drops all of the
** process's locks on the file: rtdb.c's wal_header reads through
** SQLite's descriptor for that reason). */
static int quiet_wal(const char *src, struct stat *sb) {
  unsigned char h[100];
  int fd = open(src, O_RDONLY | O_CLOEXEC), wal = 0;
  if (fd >= 0 && fstat(fd, sb) == 0 && pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h)
    wal = !memcmp(h, "SQLite format 3", 16) && h[18] == 2 && h[19] == 2;
  if (fd >= 0) close(fd);
  static const char *const side[] = {"-wal", "-shm"};
  for (int i = 0; wal && i < 2; i++) {
    char *p = beside(src, side[i]);
    struct stat x;
    wal = lstat(p, &x) != 0 && errno == ENOENT;
    free(p);
  }
  return wal;
}

/* Whether src is still as quiet_wal saw it: no -wal, same size and times
** (a writer that came meanwhile made a -wal, or changed the file). */
static int still_quiet(const char *src, const struct stat *a) {
  struct stat b;
  char *p = beside(src, "-wal");
  int wal = lstat(p, &b) == 0;
  free(p);
  return !wal && stat(src, &b) == 0 && b.st_size == a->st_size && b.st_ino == a->st_ino &&
         b.st_mtim.tv_sec == a->st_mtim.tv_sec && b.st_mtim.tv_nsec == a->st_mtim.tv_nsec &&
         b.st_ctim.tv_sec == a->st_ctim.tv_sec && b.st_ctim.tv_nsec == a->st_ctim.tv_nsec;
}

/* Open the source read-only with its schema version in *v: a quiet
** WAL-mode file (quiet_wal, when allowed) as immutable, so that nothing is
** left beside it (a read-only connection cannot remove the -wal and -shm
** SQLite makes for it); else as every reader opens (rtdb_int.h). */
static sqlite3 *open_source(const char *src, int allow_quiet, int *quiet, struct stat *sb, int *v,
                            rt_err *err) {
  sqlite3 *h = NULL;
  *quiet = allow_quiet && quiet_wal(src, sb);
  if (*quiet) {
    char *uri = rtdb__uri(src, "mode=ro&immutable=1");
    sqlite3_stmt *st = NULL;
    int rc = uri ? sqlite3_open_v2(uri, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) : SQLITE_NOMEM;
    free(uri);
    if (rc == SQLITE_OK && (rc = sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL)) == SQLITE_OK &&
        (rc = sqlite3_step(st)) == SQLITE_ROW) {
      *v = sqlite3_column_int(st, 0);
      rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_OK) return h;
    sqlite3_close(h);   /* whatever it was, the usual way says it */
    h = NULL;
    *quiet = 0;
  }
  rt_err e = {0};
  if (rtdb__open_ro(src, 0, 10000, &h, v, e.msg, sizeof e.msg) != SQLITE_OK) {
    rt_err_set(err, "%s", e.msg);
    return NULL;
  }
  return h;
}

int db_copy(const char *src, const char *dst, int *version, rt_err *err) {
  int v = 0, quiet;
  struct stat sb;
  for (int allow_quiet = 1;; allow_quiet = 0) {
    sqlite3 *h = open_source(src, allow_quiet, &quiet, &sb, &v, err);
    if (!h) return -1;
    if (v < 1 || v > DB_SCHEMA_VERSION) {
      rt_err_set(err, v > DB_SCHEMA_VERSION
                          ? "%s: schema version %d is newer than this rooftune's (%d): upgrade rooftune"
                          : "%s: not a rooftune database (schema version %d)", src, v, DB_SCHEMA_VERSION);
      sqlite3_close(h);
      return -1;
    }
    /* A -wal or hot -journal beside the target would be applied to the
    ** new file by the next opener: the target must have neither. */
    static const char *const side[] = {"-wal", "-journal"};
    for (int i = 0; i < 2; i++) {
      char *p = beside(dst, side[i]);
      struct stat x;
      int there = lstat(p, &x) == 0;
      free(p);
      if (there) {
        rt_err_set(err, "%s: a %s file lies beside it (it is open in another program, or one "
                   "stopped while writing it): rooftune does not replace it; open it with a "
                   "rooftune writer (rooftune db init --db %s) or remove it with its -wal, -shm "
                   "and -journal files", dst, side[i], dst);
        sqlite3_close(h);
        return -1;
      }
    }
    char *protect[5] = {rt_strdup(src), beside(src, "-wal"), beside(src, "-shm"), beside(src, "-journal"), NULL};
    rt_out o;
    int rc = rt_out_open(&o, dst, (const char *const *)protect, err);
    for (int i = 0; i < 4; i++) free(protect[i]);
    if (rc) {
      sqlite3_close(h);
      return -1;
    }
    /* SQLite writes the temporary file through its own descriptor; o.f
    ** stays empty and rt_out_commit syncs and renames it. */
    rc = copy_into(h, o.tmp, err);
    sqlite3_close(h);
    int redo = quiet && !still_quiet(src, &sb);   /* its error too may be the writer's doing */
    if (rc || redo) {
      char *j = beside(o.tmp, "-journal");
      unlink(j);
      free(j);
      rt_out_abort(&o);
      if (redo) continue;   /* a writer came: read it the usual way */
      rt_err_prefix(err, "%s", dst);
      return -1;
    }
    if (rt_out_commit(&o, err)) return -1;
    if (version) *version = v;
    return 0;
  }
}
