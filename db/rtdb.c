/*
** rtdb.c -- the reader library (rtdb.h): read-only lookups of pinned
** schedules for code generators. Depends only on SQLite, libc and
** pthreads; it is shipped as its own library, so nothing of the rest of
** rooftune is used here.
**
** A lookup resolves (target, kernel, tag) to rows with three indexed
** queries (the target/kernel pick, the pinned workloads of the kernel on
** the target, the default) -- trials are reached only by primary key --
** then judges every pinned workload in one pass. A workload's variables
** are its `sizes` JSON object (flat) plus "dtype" (the workloads column)
** unless sizes names one. Answers, errors about vars included, are
** memoised per (target, kernel, vars, tag) text; a handle's mutex guards
** its statements, its memo and its message, so one handle serves many
** threads. The file is trusted for nothing: every column is type-checked
** and bounded, and text that is not what rooftune writes is RTDB_NOTADB.
*/
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L   /* pread, O_CLOEXEC, statvfs when built alone with -std=c11 */
#endif
#include "rtdb.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "rtdb_int.h"

#define RTDB_SCHEMA_MIN 2   /* the schema versions this library reads */
#define RTDB_SCHEMA_MAX 10  /* 4, 7 and 9 added columns, 5 and 6 tables, the reader does not read; 8 families;
                              ** 10 pins.predicted (read from the pinned trial's origin, as pinning sets it) */

#define MAXVARS 32          /* variables of one workload */
#define MAXNAME 64
#define MAXSTR 256          /* a non-numeric value's text */
#define MEMO_KEY 1024       /* longer (target, kernel, vars, tag) texts are not memoised */
#define MEMO_MAX 65536      /* entries; the memo is emptied when it is full */

/* ---- Statements: prepared at open (a missing table is RTDB_NOTADB) ---- */

enum { ST_TAG, ST_PICK, ST_CURRENT, ST_TAGGED, ST_DEFAULT, ST_TIME,
       ST_KERNEL, ST_ROW, ST_KID_CUR, ST_KID_TAG, ST_LEVEL_CUR, ST_LEVEL_TAG, ST_TAGDEF, NST };

/* Pick one target row of the name (several fingerprints) and one kernel row
** of the name (several template versions): those with pins in scope
** (?3: tag id, NULL for the current pins) first, then the most recent. */
#define IN_SCOPE                                                                        \
  "(CASE WHEN ?3 IS NULL THEN EXISTS(SELECT 1 FROM pin_current c WHERE c.target_id ="   \
  " p.target_id AND c.workload_id = p.workload_id AND c.pin_id = p.id)"                 \
  " ELSE EXISTS(SELECT 1 FROM tag_pins tp WHERE tp.tag_id = ?3 AND tp.pin_id = p.id) END)"
#define PIN_COLUMNS "w.key, w.sizes, w.dtype, p.version, p.config, p.trial_id"

/* Families (rtdb.h): the level of target row g for the caller's chain
** (?4 fingerprint, ?5 name or NULL, ?6 model, ?7 arch, ?8 backend; NULL
** where unknown, and NULL never equals): 1 to 4, 9 for none. F(column)
** is the column where the file has it (schema 8), else NULL. */
#define F8(col) col
#define F7(col) "NULL"
#define LEVEL_OF(F)                                                                     \
  "(CASE WHEN g.fingerprint = ?4 AND (?5 IS NULL OR g.name = ?5) THEN 1"                \
  " WHEN " F("g.backend") " = ?8 AND " F("g.model") " = ?6 THEN 2"                     \
  " WHEN " F("g.backend") " = ?8 AND " F("g.arch") " = ?7 THEN 3"                      \
  " WHEN " F("g.backend") " = ?8 THEN 4 ELSE 9 END)"
/* The current pins (c) and a tag's (tp) with their targets (g). The
** targets first (CROSS JOINs keep SQLite's order): a level is a
** test on the few target rows, and each target's pins are then a prefix
** of pin_current's key or of pins' UNIQUE(target_id, ...) index. */
#define FROM_CURRENT                                                                    \
  " FROM targets g CROSS JOIN pin_current c ON c.target_id = g.id CROSS JOIN pins p"    \
  " ON p.id = c.pin_id CROSS JOIN workloads w ON w.id = c.workload_id"                  \
  " WHERE p.target_id = c.target_id AND p.workload_id = c.workload_id"
#define FROM_TAGGED                                                                     \
  " FROM targets g CROSS JOIN pins p ON p.target_id = g.id CROSS JOIN tag_pins tp"      \
  " ON tp.tag_id = ?3 AND tp.pin_id = p.id CROSS JOIN workloads w ON w.id = p.workload_id WHERE 1"

#define SQL_TABLE(F)                                                                    \
  {                                                                                     \
    [ST_TAG] = "SELECT id FROM tags WHERE name = ?1",                                   \
    [ST_PICK] = "SELECT g.id, k.id FROM kernels k LEFT JOIN targets g ON g.name = ?1"  \
                " WHERE k.name = ?2 ORDER BY g.id IS NOT NULL AND EXISTS(SELECT 1 FROM pins p" \
                " JOIN workloads w ON w.id = p.workload_id WHERE p.target_id = g.id"   \
                " AND w.kernel_id = k.id AND " IN_SCOPE ") DESC, g.id DESC, k.id DESC LIMIT 1", \
    [ST_CURRENT] = "SELECT " PIN_COLUMNS " FROM pin_current c JOIN pins p ON p.id = c.pin_id" \
                   " JOIN workloads w ON w.id = c.workload_id"                          \
                   " WHERE c.target_id = ?1 AND w.kernel_id = ?2 AND p.target_id = ?1"  \
                   " AND p.workload_id = c.workload_id",                                \
    [ST_TAGGED] = "SELECT " PIN_COLUMNS " FROM tag_pins tp JOIN pins p ON p.id = tp.pin_id" \
                  " JOIN workloads w ON w.id = p.workload_id"                           \
                  " WHERE tp.tag_id = ?3 AND p.target_id = ?1 AND w.kernel_id = ?2",   \
    [ST_DEFAULT] = ("SELECT default_config FROM kernels WHERE name = ?1 AND default_config IS NOT NULL" \
                    " ORDER BY id = ?2 DESC, id DESC LIMIT 1"),                         \
    /* the pinned trial's time, read for the chosen pin only (trials is big) */        \
    /* and whether it is a prediction (origin 'predicted': db.h invariant 10) */       \
    [ST_TIME] = F##_TIME,                                                               \
    [ST_KERNEL] = "SELECT 1 FROM kernels WHERE name = ?9",                              \
    /* the caller's named row (rtdb_target): with pins in scope first */               \
    [ST_ROW] = "SELECT g.fingerprint, " F("g.model") ", " F("g.arch") ", " F("g.backend") \
               ", ?4 IS NULL OR g.fingerprint = ?4 FROM targets g WHERE g.name = ?5"   \
               " ORDER BY 5 DESC, EXISTS(SELECT 1 FROM pins p JOIN workloads w ON w.id = p.workload_id" \
               " JOIN kernels k ON k.id = w.kernel_id WHERE p.target_id = g.id AND k.name = ?9" \
               " AND " IN_SCOPE ") DESC, g.id DESC LIMIT 1",                            \
    /* the kernel row of a level (?2): the most recent with pins there */             \
    [ST_KID_CUR] = "SELECT k.id FROM kernels k WHERE k.name = ?9 AND EXISTS(SELECT 1"   \
                   FROM_CURRENT " AND w.kernel_id = k.id AND " LEVEL_OF(F) " = ?2)"     \
                   " ORDER BY k.id DESC LIMIT 1",                                       \
    [ST_KID_TAG] = "SELECT k.id FROM kernels k WHERE k.name = ?9 AND EXISTS(SELECT 1"   \
                   FROM_TAGGED " AND w.kernel_id = k.id AND " LEVEL_OF(F) " = ?2)"      \
                   " ORDER BY k.id DESC LIMIT 1",                                       \
    /* the pinned workloads of kernel row ?1 on the targets of level ?2 */            \
    [ST_LEVEL_CUR] = "SELECT " PIN_COLUMNS ", g.id, g.name, g.fingerprint" FROM_CURRENT \
                     " AND w.kernel_id = ?1 AND " LEVEL_OF(F) " = ?2",                  \
    [ST_LEVEL_TAG] = "SELECT " PIN_COLUMNS ", g.id, g.name, g.fingerprint" FROM_TAGGED  \
                     " AND w.kernel_id = ?1 AND " LEVEL_OF(F) " = ?2",                  \
    /* whether tag ?3 recorded defaults, and kernel ?9's */                           \
    [ST_TAGDEF] = F##_TAGDEF,                                                           \
  }
#define F8_TAGDEF "SELECT t.defaults, d.config FROM tags t LEFT JOIN tag_defaults d ON d.tag_id = t.id" \
                  " AND d.kernel = ?9 WHERE t.id = ?3"
#define F7_TAGDEF "SELECT 0, NULL"
/* Files before schema 8 hold no predicted trial (they came with schema 10). */
#define F8_TIME "SELECT time, coalesce(origin = 'predicted', 0) FROM trials WHERE id = ?1"
#define F7_TIME "SELECT time, 0 FROM trials WHERE id = ?1"

/* The statements for files before schema 8 (sql[0]) and since (sql[1]). */
static const char *const sql[2][NST] = {SQL_TABLE(F7), SQL_TABLE(F8)};

/* A memoised answer: rc, the result's fields, and (after the struct) the
** key bytes, then config (or the error message), then the workload key. */
typedef struct memo {
  uint64_t hash;
  size_t klen, clen, wlen, tlen, flen;   /* key, config, workload, target, fingerprint */
  int rc, version;
  rtdb_match match;
  rtdb_level level;
  double time_s, distance;
  int predicted;
} memo;

struct rtdb {
  sqlite3 *h;
  pthread_mutex_t mu;
  sqlite3_stmt *st[NST];
  memo **slot;          /* open addressing, linear probing; cap a power of 2 */
  size_t cap, n;
  char msg[1024];
};

static const char *const errstr[] = {
  [RTDB_OK] = "ok",
  [RTDB_ERROR] = "error",
  [RTDB_CANTOPEN] = "cannot open the file",
  [RTDB_NOTADB] = "not a rooftune database, or corrupt",
  [RTDB_SCHEMA] = "unsupported schema version",
  [RTDB_NOTFOUND] = "no pinned schedule and no default",
  [RTDB_MISUSE] = "bad arguments",
  [RTDB_NOMEM] = "out of memory",
  [RTDB_READONLY] = "SQLite must write beside the file to read it, and cannot here (see rtdb_open)",
};

const char *rtdb_errstr(int code) {
  return code >= 0 && code < (int)(sizeof errstr / sizeof *errstr) ? errstr[code] : "unknown error";
}

const char *rtdb_errmsg(const rtdb *db) { return db ? db->msg : "no handle"; }

static int seterr(rtdb *db, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int seterr(rtdb *db, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(db->msg, sizeof db->msg, fmt, ap);
  va_end(ap);
  return code;
}

/* Map an SQLite result code to a code of ours. */
static int code_of(int rc) {
  switch (rc & 0xff) {
  case SQLITE_OK: return RTDB_OK;
  case SQLITE_CANTOPEN: case SQLITE_PERM: case SQLITE_AUTH: return RTDB_CANTOPEN;
  case SQLITE_NOMEM: return RTDB_NOMEM;
  case SQLITE_READONLY: return RTDB_READONLY;
  case SQLITE_BUSY: case SQLITE_LOCKED: case SQLITE_IOERR: case SQLITE_INTERRUPT: return RTDB_ERROR;
  default: return RTDB_NOTADB;
  }
}

/* Map the handle's last SQLite error to a code, with its message. */
static int sqlerr(rtdb *db, const char *what) {
  return seterr(db, code_of(sqlite3_errcode(db->h)), "%s: %s", what, sqlite3_errmsg(db->h));
}

/* ---- Open and close ---- */

/* 1 when path+suffix exists. */
static int exists(const char *path, const char *suffix) {
  size_t n = strlen(path), m = strlen(suffix);
  char *p = malloc(n + m + 1);
  if (!p) return 0;
  memcpy(p, path, n);
  memcpy(p + n, suffix, m + 1);
  int yes = access(p, F_OK) == 0;
  free(p);
  return yes;
}

/* 1 when the header of h's main file says WAL mode (file format bytes 18,
** 19 = 2). Read through SQLite's own descriptor, never one opened here:
** closing any descriptor of a file drops every POSIX lock the process
** holds on it, those of the application's other connections included. */
static int wal_header(sqlite3 *h) {
  unsigned char b[20];
  sqlite3_file *f = NULL;
  if (sqlite3_file_control(h, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK || !f ||
      !f->pMethods)
    return 0;   /* not open: nothing to read */
  return f->pMethods->xRead(f, b, (int)sizeof b, 0) == SQLITE_OK && b[18] == 2 && b[19] == 2;
}

char *rtdb__uri(const char *path, const char *query) {
  size_t n = strlen(path);
  char *u = malloc(3 * n + strlen(query) + 16), *q = u;
  if (!u) return NULL;
  q += sprintf(q, "file:%s", path[0] == '/' ? "//" : "");
  for (const unsigned char *p = (const unsigned char *)path; *p; p++)
    q += (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                 strchr("/-._~", *p)
             ? sprintf(q, "%c", *p)
             : sprintf(q, "%%%02X", *p);
  sprintf(q, "%s%s", *query ? "?" : "", query);
  return u;
}

/* Read user_version: the first read of the file. SQLite's code. */
static int probe(sqlite3 *h, int *version) {
  sqlite3_stmt *v = NULL;
  int rc = sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &v, NULL);
  if (rc == SQLITE_OK && (rc = sqlite3_step(v)) == SQLITE_ROW) {
    *version = sqlite3_column_int(v, 0);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(v);
  return rc == SQLITE_OK ? rc : sqlite3_extended_errcode(h);
}

int rtdb__open_ro(const char *path, int flags, int busy_ms, sqlite3 **out, int *version,
                  char *msg, size_t cap) {
  sqlite3 *h = NULL;
  char *uri = NULL;
  *out = NULL;
  msg[0] = 0;
  int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY | flags, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(h, busy_ms);
    rc = probe(h, version);
  }
  int wal = 0, shm = 0, rofs = 0;
  struct statvfs vs;
  if (h && ((rc & 0xff) == SQLITE_READONLY || (rc & 0xff) == SQLITE_CANTOPEN) && wal_header(h)) {
    /* WAL mode: SQLite reads the -wal through the -shm and could make
    ** neither. On read-only media nothing can change the file, and with no
    ** -wal everything is in it: read it as immutable. */
    wal = exists(path, "-wal"), shm = exists(path, "-shm");
    rofs = statvfs(path, &vs) == 0 && (vs.f_flag & ST_RDONLY);
    if (rofs && !wal) {
      sqlite3_close(h);
      h = NULL;
      if (!(uri = rtdb__uri(path, "immutable=1"))) rc = SQLITE_NOMEM;
      else if ((rc = sqlite3_open_v2(uri, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | flags, NULL)) == SQLITE_OK)
        rc = probe(h, version);
      free(uri);
    } else {
      snprintf(msg, cap,
               "%s: SQLite cannot read this WAL-mode database here: it needs its -wal and "
               "-shm files, %s (SQLite: %s). The last rooftune writer to close a file leaves it "
               "readable from read-only places: run 'rooftune db init --db %s' once where the "
               "directory is writable, or copy the file to a writable directory",
               path,
               wal && shm ? "which exist but cannot be used"
               : wal      ? "and the -shm is missing and cannot be created here"
                          : "which are missing and cannot be created (read-only directory)",
               sqlite3_errmsg(h), path);
      rc = SQLITE_READONLY;   /* whatever SQLite tripped on: it could not write beside it */
    }
  }
  if (rc != SQLITE_OK && !msg[0]) {
    if (!h)
      snprintf(msg, cap, "%s: out of memory", path);
    else if ((rc & 0xff) == SQLITE_CANTOPEN && access(path, R_OK))
      snprintf(msg, cap, "%s: cannot open: %s", path, strerror(errno));
    else if (rc == SQLITE_READONLY_ROLLBACK)
      snprintf(msg, cap, "%s: a hot journal (%s-journal, left by a writer that stopped) must be "
               "rolled back before the file can be read, and this place is read-only: let a "
               "rooftune writer open it where it can write (rooftune db init --db %s)",
               path, path, path);
    else
      snprintf(msg, cap, "%s: %s", path, sqlite3_errmsg(h));
  }
  if (rc != SQLITE_OK) {
    sqlite3_close(h);
    return rc;
  }
  *out = h;
  return SQLITE_OK;
}

int rtdb_open(const char *path, rtdb **out) { return rtdb_open_msg(path, out, NULL, 0); }

int rtdb_open_msg(const char *path, rtdb **out, char *msg, size_t cap) {
  char none[1];
  if (!msg || !cap) msg = none, cap = sizeof none;
  msg[0] = 0;
  if (!out) return RTDB_MISUSE;
  *out = NULL;
  if (!path) {
    snprintf(msg, cap, "rtdb_open: NULL path");
    return RTDB_MISUSE;
  }
  rtdb *db = calloc(1, sizeof *db);
  if (!db) {
    snprintf(msg, cap, "out of memory");
    return RTDB_NOMEM;
  }
  pthread_mutex_init(&db->mu, NULL);
  int version = -1, rc = rtdb__open_ro(path, SQLITE_OPEN_FULLMUTEX, 2000, &db->h, &version, db->msg,
                                       sizeof db->msg);
  int code = code_of(rc);
  if (code) {
  } else if (version <= 0) {
    code = seterr(db, RTDB_NOTADB, "%s: not a rooftune database (user_version %d%s)", path, version,
                  version ? "" : ": an empty file or another program's");
  } else if (version < RTDB_SCHEMA_MIN || version > RTDB_SCHEMA_MAX) {
    code = seterr(db, RTDB_SCHEMA, "%s: schema version %d; this library reads %d to %d", path,
                  version, RTDB_SCHEMA_MIN, RTDB_SCHEMA_MAX);
  } else {
    for (int i = 0; i < NST && !code; i++)
      if (sqlite3_prepare_v3(db->h, sql[version >= 8][i], -1, SQLITE_PREPARE_PERSISTENT, &db->st[i], NULL) !=
          SQLITE_OK)
        code = sqlerr(db, path);
  }
  if (code) {
    snprintf(msg, cap, "%s", db->msg);
    rtdb_close(db);
    return code;
  }
  *out = db;
  return RTDB_OK;
}

static void memo_clear(rtdb *db) {
  for (size_t i = 0; i < db->cap; i++) free(db->slot[i]);
  free(db->slot);
  db->slot = NULL;
  db->cap = db->n = 0;
}

int rtdb_close(rtdb *db) {
  if (!db) return RTDB_OK;
  for (int i = 0; i < NST; i++) sqlite3_finalize(db->st[i]);
  sqlite3_close(db->h);
  memo_clear(db);
  pthread_mutex_destroy(&db->mu);
  free(db);
  return RTDB_OK;
}

/* ---- Values: the given vars and a workload's sizes ---- */

typedef struct val {
  char name[MAXNAME];
  int num;            /* 1: x holds the number; 0: s holds the text */
  double x;
  char s[MAXSTR];
} val;

typedef struct vars {
  int n;
  val v[MAXVARS];
} vars;

static const val *find(const vars *vs, const char *name) {
  for (int i = 0; i < vs->n; i++)
    if (!strcmp(vs->v[i].name, name)) return &vs->v[i];
  return NULL;
}

static int equal(const val *a, const val *b) {
  return a->num == b->num && (a->num ? a->x == b->x : !strcmp(a->s, b->s));
}

/* Set v from the bare text p[0..n): True/False/true/false are 1/0, text
** strtod takes whole is a number, anything else a string. */
static int bare(val *v, const char *p, size_t n) {
  if (n == 0 || n >= MAXSTR) return -1;
  memcpy(v->s, p, n);
  v->s[n] = 0;
  char *end;
  v->num = 1;
  if (!strcmp(v->s, "True") || !strcmp(v->s, "true")) v->x = 1;
  else if (!strcmp(v->s, "False") || !strcmp(v->s, "false")) v->x = 0;
  else v->x = strtod(v->s, &end), v->num = *end == 0 && !isnan(v->x);
  return 0;
}

/* Read a quoted string at p (quote q, backslash escapes; JSON's \uXXXX
** when json) into out; the position after the closing quote, or NULL. */
static const char *quoted(const char *p, char *out, int json) {
  char q = *p++;
  size_t n = 0;
  for (; *p && *p != q; p++) {
    unsigned c = (unsigned char)*p;
    if (c == '\\') {
      c = (unsigned char)*++p;
      static const char from[] = "bfnrt", to[] = "\b\f\n\r\t";
      const char *e = c ? strchr(from, (int)c) : NULL;
      if (e) c = (unsigned char)to[e - from];
      else if (c == 'u' && json) {
        unsigned u = 0;
        for (int i = 0; i < 4; i++) {
          int d = p[1 + i];
          int h = d >= '0' && d <= '9' ? d - '0' : d >= 'a' && d <= 'f' ? d - 'a' + 10
                : d >= 'A' && d <= 'F' ? d - 'A' + 10 : -1;
          if (h < 0) return NULL;
          u = u * 16 + (unsigned)h;
        }
        p += 4;
        char b[3];   /* UTF-8 of a code unit (surrogates stay unpaired) */
        int k = u < 0x80 ? (b[0] = (char)u, 1)
              : u < 0x800 ? (b[0] = (char)(0xc0 | u >> 6), b[1] = (char)(0x80 | (u & 0x3f)), 2)
              : (b[0] = (char)(0xe0 | u >> 12), b[1] = (char)(0x80 | ((u >> 6) & 0x3f)),
                 b[2] = (char)(0x80 | (u & 0x3f)), 3);
        if (n + (size_t)k >= MAXSTR) return NULL;
        memcpy(out + n, b, (size_t)k);
        n += (size_t)k;
        continue;
      } else if (c == 0) return NULL;
    }
    if (n + 1 >= MAXSTR) return NULL;
    out[n++] = (char)c;
  }
  if (*p != q) return NULL;
  out[n] = 0;
  return p + 1;
}

static int name_char(int c, int first) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9');
}

/* Parse "M=1024,N=1024,layout='nhwc'" (commas and/or blanks between
** assignments; values: numbers, True/False, quoted or bare strings). */
static int parse_vars(const char *p, vars *out) {
  out->n = 0;
  for (;;) {
    while (*p == ',' || *p == ' ' || *p == '\t') p++;
    if (!*p) return 0;
    if (out->n == MAXVARS || !name_char(*p, 1)) return -1;
    val *v = &out->v[out->n];
    size_t n = 0;
    while (name_char(p[n], 0)) n++;
    if (n >= MAXNAME || p[n] != '=') return -1;
    memcpy(v->name, p, n);
    v->name[n] = 0;
    if (find(out, v->name)) return -1;   /* named twice */
    p += n + 1;
    if (*p == '\'' || *p == '"') {
      if (!(p = quoted(p, v->s, 0))) return -1;
      v->num = 0;
    } else {
      n = strcspn(p, ", \t");
      if (bare(v, p, n)) return -1;
      p += n;
    }
    out->n++;
  }
}

/* Skip one JSON array or object at p (balanced, strings respected) into
** out as raw text; the position after it or NULL. */
static const char *raw_json(const char *p, char *out) {
  int depth = 0;
  const char *s = p;
  do {
    if (*p == '"') {
      char tmp[MAXSTR];
      if (!(p = quoted(p, tmp, 1))) return NULL;
      continue;
    }
    if (*p == '[' || *p == '{') depth++;
    else if (*p == ']' || *p == '}') depth--;
    else if (!*p) return NULL;
    p++;
  } while (depth > 0);
  if ((size_t)(p - s) >= MAXSTR) return NULL;
  memcpy(out, s, (size_t)(p - s));
  out[p - s] = 0;
  return p;
}

/* Parse a flat JSON object of the sizes column: numbers and booleans are
** numbers, strings and null ("None") text, nested values their raw text. */
static int parse_sizes(const char *p, vars *out) {
  out->n = 0;
  while (*p == ' ') p++;
  if (*p++ != '{') return -1;
  for (int first = 1;; first = 0) {
    while (*p == ' ') p++;
    if (*p == '}' && first) return p[1] == 0 ? 0 : -1;
    if (out->n == MAXVARS || *p != '"') return -1;
    val *v = &out->v[out->n];
    char name[MAXSTR];
    if (!(p = quoted(p, name, 1)) || strlen(name) >= MAXNAME || find(out, name)) return -1;
    strcpy(v->name, name);
    while (*p == ' ') p++;
    if (*p++ != ':') return -1;
    while (*p == ' ') p++;
    if (*p == '"') {
      if (!(p = quoted(p, v->s, 1))) return -1;
      v->num = 0;
    } else if (*p == '[' || *p == '{') {
      if (!(p = raw_json(p, v->s))) return -1;
      v->num = 0;
    } else if (!strncmp(p, "null", 4)) {
      strcpy(v->s, "None");
      v->num = 0;
      p += 4;
    } else {
      size_t n = strcspn(p, ",} ");
      if (bare(v, p, n) || !v->num) return -1;
      p += n;
    }
    out->n++;
    while (*p == ' ') p++;
    if (*p == '}') return p[1] == 0 ? 0 : -1;
    if (*p++ != ',') return -1;
  }
}

/* ---- Judging the pinned workloads ---- */

/* Variables the caller left out: each must have one value in every
** pinned workload. */
typedef struct freevar {
  val v;
  int count, conflict;
} freevar;

typedef struct scan {
  const vars *given;
  vars row;
  freevar fv[MAXVARS];
  int nfree, nrows, have;
  double best;        /* distance of out's workload */
  sqlite3_int64 trial; /* its pinned trial, 0 if none */
  sqlite3_int64 tid;   /* its target row (family levels), 0 if not read */
} scan;

/* The distance from the given vars to row, or -1 when row is no
** candidate (a variable missing, a non-numeric or non-positive value
** unequal). Records the left-out variables on the way. */
static double judge(scan *s) {
  double d2 = 0;
  int candidate = 1;
  for (int i = 0; i < s->given->n; i++) {
    const val *g = &s->given->v[i], *r = find(&s->row, g->name);
    if (!r) candidate = 0;
    else if (g->num && r->num && g->x > 0 && r->x > 0 && isfinite(g->x) && isfinite(r->x))
      d2 += pow(log2(g->x) - log2(r->x), 2);   /* inf: like a string (inf - inf is NaN) */
    else if (!equal(g, r)) candidate = 0;
  }
  for (int i = 0; i < s->row.n; i++) {
    const val *r = &s->row.v[i];
    if (find(s->given, r->name)) continue;
    int j = 0;
    while (j < s->nfree && strcmp(s->fv[j].v.name, r->name)) j++;
    if (j == s->nfree) {
      if (s->nfree == MAXVARS) return -2;
      s->fv[s->nfree++] = (freevar){*r, 0, 0};
    }
    s->fv[j].count++;
    s->fv[j].conflict |= !equal(&s->fv[j].v, r);
  }
  return candidate ? sqrt(d2) : -1;
}

static int text_col(rtdb *db, sqlite3_stmt *st, int col, const char **out, size_t cap) {
  if (sqlite3_column_type(st, col) != SQLITE_TEXT || !(*out = (const char *)sqlite3_column_text(st, col)))
    return seterr(db, RTDB_NOTADB, "unexpected value in column %s", sqlite3_column_name(st, col));
  if ((size_t)sqlite3_column_bytes(st, col) >= cap || strlen(*out) != (size_t)sqlite3_column_bytes(st, col))
    return seterr(db, RTDB_NOTADB, "over-long or binary value in column %s", sqlite3_column_name(st, col));
  return RTDB_OK;
}

/* 1 when a pin row's key, version or trial id is not what rooftune
** writes: an answer's workload "" means the default, its version 0 too. */
static int odd_pin(sqlite3_stmt *st, const char *key) {
  int tt = sqlite3_column_type(st, 5);
  sqlite3_int64 version = sqlite3_column_int64(st, 3);
  return !key[0] || sqlite3_column_type(st, 3) != SQLITE_INTEGER || version < 1 ||
         version > INT_MAX || (tt != SQLITE_NULL && tt != SQLITE_INTEGER);
}

/* Read one pinned workload (the PIN_COLUMNS of a row) as lookups do:
** every column checked, the sizes parsed into *row with "dtype" added
** unless they name one. RTDB_OK, or RTDB_NOTADB with the message. */
static int read_row(rtdb *db, sqlite3_stmt *st, vars *row, const char **key, const char **config) {
  const char *sizes, *dtype;
  int rc;
  if ((rc = text_col(db, st, 0, key, RTDB_MAXKEY)) || (rc = text_col(db, st, 1, &sizes, 65536)) ||
      (rc = text_col(db, st, 2, &dtype, MAXSTR)) || (rc = text_col(db, st, 4, config, RTDB_MAXCONFIG)))
    return rc;
  if (odd_pin(st, *key) || (*config)[0] != '{' || parse_sizes(sizes, row))
    return seterr(db, RTDB_NOTADB, "unexpected pin of workload '%.200s'", *key);
  if (!find(row, "dtype")) {
    if (row->n == MAXVARS) return seterr(db, RTDB_NOTADB, "too many variables in '%.200s'", *key);
    val *v = &row->v[row->n++];
    strcpy(v->name, "dtype");
    strcpy(v->s, dtype);
    v->num = 0;
  }
  return RTDB_OK;
}

/* One pinned workload (a row of ST_CURRENT/ST_TAGGED, or of
** ST_LEVEL_*, whose columns 6-8 name its target): read, judged; copied
** into out when it beats the best so far (distance, then key, then the
** more recent target, then the higher version). */
static int take_row(rtdb *db, sqlite3_stmt *st, scan *s, rtdb_result *out) {
  const char *key, *config, *tname = "", *tfp = "";
  int rc = read_row(db, st, &s->row, &key, &config), family = sqlite3_column_count(st) > 6;
  if (rc) return rc;
  if (family && ((rc = text_col(db, st, 7, &tname, RTDB_MAXKEY)) ||
                 (rc = text_col(db, st, 8, &tfp, RTDB_MAXKEY))))
    return rc;
  s->nrows++;
  double d = judge(s);
  if (d == -2) return seterr(db, RTDB_NOTADB, "too many variables in '%.200s'", key);
  int version = sqlite3_column_int(st, 3), cmp = s->have ? strcmp(key, out->workload) : 0;
  sqlite3_int64 tid = family ? sqlite3_column_int64(st, 6) : 0;
  if (d < 0 || (s->have && (d > s->best || (d == s->best && (cmp > 0 || (cmp == 0 && (tid < s->tid ||
      (tid == s->tid && version <= out->pin_version))))))))
    return RTDB_OK;
  s->have = 1;
  s->best = d;
  s->tid = tid;
  out->match = d == 0 ? RTDB_EXACT : RTDB_NEAREST;
  out->distance = d;
  out->pin_version = version;
  s->trial = sqlite3_column_int64(st, 5);
  strcpy(out->workload, key);
  strcpy(out->config, config);
  strcpy(out->target, tname);
  strcpy(out->fingerprint, tfp);
  return RTDB_OK;
}

/* Step st: SQLITE_ROW, SQLITE_DONE, or -1 with the error set. */
static int step(rtdb *db, sqlite3_stmt *st, int *code) {
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW || rc == SQLITE_DONE) return rc;
  *code = sqlerr(db, "read");
  return -1;
}

static void reset_all(rtdb *db) {
  for (int i = 0; i < NST; i++) {
    sqlite3_reset(db->st[i]);
    sqlite3_clear_bindings(db->st[i]);
  }
}

/* The time of trial id into *t (-1 when none or unknown), and whether it
** is a prediction into *predicted. */
static int trial_time(rtdb *db, sqlite3_int64 id, double *t, int *predicted) {
  sqlite3_stmt *st = db->st[ST_TIME];
  int rc, code = RTDB_OK, tt;
  *t = -1;
  *predicted = 0;
  if (!id) return RTDB_OK;
  sqlite3_bind_int64(st, 1, id);
  if ((rc = step(db, st, &code)) == SQLITE_ROW) {
    if ((tt = sqlite3_column_type(st, 0)) == SQLITE_FLOAT || tt == SQLITE_INTEGER) *t = sqlite3_column_double(st, 0);
    else if (tt != SQLITE_NULL) code = seterr(db, RTDB_NOTADB, "unexpected time of trial %lld", (long long)id);
    *predicted = sqlite3_column_int(st, 1) != 0;
  }
  sqlite3_reset(st);
  return code;
}

/* Resolve the tag, pick the target and kernel rows, and bind the query of
** the pinned workloads in scope: *pins to step, *kid the kernel row. */
static int open_pins(rtdb *db, const char *target, const char *kernel, const char *tag,
                     sqlite3_stmt **pins, sqlite3_int64 *kid) {
  sqlite3_stmt **st = db->st;
  sqlite3_int64 tag_id = 0;
  int rc, code = RTDB_OK;
  if (tag) {
    sqlite3_bind_text(st[ST_TAG], 1, tag, -1, SQLITE_STATIC);
    if ((rc = step(db, st[ST_TAG], &code)) < 0) return code;
    if (rc == SQLITE_DONE) return seterr(db, RTDB_NOTFOUND, "no tag named '%.200s'", tag);
    tag_id = sqlite3_column_int64(st[ST_TAG], 0);
  }
  sqlite3_bind_text(st[ST_PICK], 1, target, -1, SQLITE_STATIC);
  sqlite3_bind_text(st[ST_PICK], 2, kernel, -1, SQLITE_STATIC);
  if (tag) sqlite3_bind_int64(st[ST_PICK], 3, tag_id);
  if ((rc = step(db, st[ST_PICK], &code)) < 0) return code;
  if (rc == SQLITE_DONE) return seterr(db, RTDB_NOTFOUND, "no kernel named '%.200s'", kernel);
  *kid = sqlite3_column_int64(st[ST_PICK], 1);
  *pins = st[tag ? ST_TAGGED : ST_CURRENT];
  sqlite3_bind_int64(*pins, 1, sqlite3_column_int64(st[ST_PICK], 0)); /* 0: unknown target */
  sqlite3_bind_int64(*pins, 2, *kid);
  if (tag) sqlite3_bind_int64(*pins, 3, tag_id);
  return RTDB_OK;
}

/* Column col of st as a template default (a JSON object's text). */
static int read_default(rtdb *db, sqlite3_stmt *st, int col, const char **config, const char *kernel) {
  int code = text_col(db, st, col, config, RTDB_MAXCONFIG);
  if (!code && (*config)[0] != '{')
    code = seterr(db, RTDB_NOTADB, "unexpected default of kernel %.100s", kernel);
  return code;
}

/* The template default of kernel (row kid preferred) into out:
** RTDB_OK, RTDB_NOTFOUND when there is none, or an error. */
static int get_default(rtdb *db, const char *kernel, sqlite3_int64 kid, char *out) {
  sqlite3_stmt *st = db->st[ST_DEFAULT];
  const char *config;
  int rc, code = RTDB_OK;
  sqlite3_bind_text(st, 1, kernel, -1, SQLITE_STATIC);
  sqlite3_bind_int64(st, 2, kid);
  if ((rc = step(db, st, &code)) < 0) return code;
  if (rc == SQLITE_DONE) return seterr(db, RTDB_NOTFOUND, "no template default for %.100s", kernel);
  if ((code = read_default(db, st, 0, &config, kernel))) return code;
  strcpy(out, config);
  return RTDB_OK;
}

/* The caller's chain (rtdb_target) as bound to the family statements:
** NULL where unknown; the named row's values copied into buf. */
typedef struct chain {
  const char *name, *fp, *model, *arch, *backend;
  int max;
  char buf[4][RTDB_MAXKEY];
} chain;

static const char *known(const char *s) { return s && *s ? s : NULL; }

static void bind_chain(sqlite3_stmt *st, const chain *c, const char *kernel, sqlite3_int64 tag_id) {
  const char *v[] = {c->fp, c->name, c->model, c->arch, c->backend};
  for (int i = 0; i < 5; i++)
    if (v[i]) sqlite3_bind_text(st, 4 + i, v[i], -1, SQLITE_STATIC);   /* unbound: NULL */
  sqlite3_bind_text(st, 9, kernel, -1, SQLITE_STATIC);
  if (tag_id) sqlite3_bind_int64(st, 3, tag_id);
}

/* Fill the chain's unknown parts from the row named c->name (ST_ROW):
** the row of the caller's fingerprint, else the one rtdb_lookup would
** pick; a row that disagrees with what the caller gave, the backend only. */
static int named_row(rtdb *db, chain *c, const rtdb_target *on, const char *kernel, sqlite3_int64 tag_id) {
  sqlite3_stmt *st = db->st[ST_ROW];
  const char **part[] = {&c->fp, &c->model, &c->arch, &c->backend};
  const char *given[] = {on->fingerprint, on->model, on->arch, on->backend};
  int rc, code = RTDB_OK;
  bind_chain(st, c, kernel, tag_id);
  if ((rc = step(db, st, &code)) == SQLITE_ROW) {
    /* a row of another device (a part the caller gave differs) tells the backend only */
    int same = sqlite3_column_int(st, 4);
    for (int i = 1; i < 3; i++) {
      const char *v = (const char *)sqlite3_column_text(st, i);
      if (given[i] && *given[i] && (!v || strcmp(v, given[i]))) same = 0;
    }
    for (int i = 0; i < 4 && !code; i++) {
      if (given[i] || sqlite3_column_type(st, i) == SQLITE_NULL || (i < 3 && !same)) continue;
      const char *t;
      if (!(code = text_col(db, st, i, &t, RTDB_MAXKEY))) *part[i] = known(strcpy(c->buf[i], t));
    }
  }
  (void)rc;   /* no row: nothing known but what the caller gave */
  return code;
}

/* The answer at level L of the chain into out (s->have says whether
** there is one); *kid gets the level's kernel row (0: none). */
static int scan_level(rtdb *db, const chain *c, int L, const char *kernel, sqlite3_int64 tag_id, scan *s, rtdb_result *out, sqlite3_int64 *kid) {
  sqlite3_stmt *k = db->st[tag_id ? ST_KID_TAG : ST_KID_CUR], *pins;
  int rc, code = RTDB_OK;
  *kid = 0;
  sqlite3_reset(k);   /* the level before stepped it */
  bind_chain(k, c, kernel, tag_id);
  sqlite3_bind_int(k, 2, L);
  if ((rc = step(db, k, &code)) < 0) return code;
  if (rc == SQLITE_DONE) return RTDB_OK;
  *kid = sqlite3_column_int64(k, 0);
  pins = db->st[tag_id ? ST_LEVEL_TAG : ST_LEVEL_CUR];
  sqlite3_reset(pins);
  bind_chain(pins, c, kernel, tag_id);
  sqlite3_bind_int64(pins, 1, *kid);
  sqlite3_bind_int(pins, 2, L);
  s->nfree = s->nrows = s->have = 0;
  while (!code && (rc = step(db, pins, &code)) == SQLITE_ROW) code = take_row(db, pins, s, out);
  for (int i = 0; i < s->nfree && !code; i++)
    if (s->fv[i].conflict || s->fv[i].count != s->nrows)
      code = seterr(db, RTDB_MISUSE, "vars leave out '%s', which distinguishes the pinned "
                    "workloads of %.100s", s->fv[i].v.name, kernel);
  return code;
}

/* The default a lookup falls back to: the tag's recorded one when it
** recorded defaults (schema 8), else the template's (kernel row kid
** preferred). */
static int level_default(rtdb *db, const char *kernel, sqlite3_int64 kid, sqlite3_int64 tag_id,
                         char *config_out, int *by_tag) {
  int rc, code = RTDB_OK;
  if (tag_id) {
    sqlite3_stmt *st = db->st[ST_TAGDEF];
    const char *config;
    sqlite3_bind_int64(st, 3, tag_id);
    sqlite3_bind_text(st, 9, kernel, -1, SQLITE_STATIC);
    if ((rc = step(db, st, &code)) < 0) return code;
    if (rc == SQLITE_ROW && sqlite3_column_int(st, 0) == 1) {
      *by_tag = 1;
      if (sqlite3_column_type(st, 1) == SQLITE_NULL)
        return seterr(db, RTDB_NOTFOUND, "the tag recorded no template default for %.100s", kernel);
      if ((code = read_default(db, st, 1, &config, kernel))) return code;
      strcpy(config_out, config);
      return RTDB_OK;
    }
  }
  return get_default(db, kernel, kid, config_out);
}

/* The uncached lookup (rtdb.h: families); the caller holds the mutex. */
static int resolve(rtdb *db, const rtdb_target *on, const char *kernel, const char *vs,
                   const char *tag, rtdb_result *out) {
  scan *s = malloc(sizeof *s + sizeof(vars) + sizeof(chain));
  if (!s) return seterr(db, RTDB_NOMEM, "out of memory");
  vars *g = (vars *)(s + 1);
  chain *c = (chain *)(g + 1);
  *s = (scan){.given = g};
  *c = (chain){.name = known(on->name), .fp = known(on->fingerprint), .model = known(on->model),
               .arch = known(on->arch), .backend = known(on->backend),
               .max = on->max_level ? on->max_level : RTDB_LEVEL_ARCH};
  sqlite3_int64 tag_id = 0, kid = 0, kid0 = 0;
  int code = RTDB_OK, rc;
  if (parse_vars(vs, g)) code = seterr(db, RTDB_MISUSE, "malformed vars '%.200s' (want NAME=VALUE,...)", vs);
  else if (on->max_level < 0 || on->max_level > RTDB_LEVEL_BACKEND)
    code = seterr(db, RTDB_MISUSE, "max_level %d: want 0 (levels up to the architecture) or 1 to 4",
                  on->max_level);
  if (!code && tag) {
    sqlite3_bind_text(db->st[ST_TAG], 1, tag, -1, SQLITE_STATIC);
    if ((rc = step(db, db->st[ST_TAG], &code)) == SQLITE_DONE)
      code = seterr(db, RTDB_NOTFOUND, "no tag named '%.200s'", tag);
    else if (rc == SQLITE_ROW) tag_id = sqlite3_column_int64(db->st[ST_TAG], 0);
  }
  if (!code) {
    sqlite3_bind_text(db->st[ST_KERNEL], 9, kernel, -1, SQLITE_STATIC);
    if ((rc = step(db, db->st[ST_KERNEL], &code)) == SQLITE_DONE)
      code = seterr(db, RTDB_NOTFOUND, "no kernel named '%.200s'", kernel);
  }
  if (!code && c->name && (!on->fingerprint || !on->model || !on->arch || !on->backend))
    code = named_row(db, c, on, kernel, tag_id);
  /* a level needs its part of the chain (and, past 1, the backend) */
  const int need[] = {0, c->fp != NULL, c->backend && c->model, c->backend && c->arch, c->backend != NULL};
  for (int L = RTDB_LEVEL_TARGET; !code && !s->have && L <= c->max; L++) {
    if (!need[L]) continue;
    code = scan_level(db, c, L, kernel, tag_id, s, out, &kid);
    if (L == RTDB_LEVEL_TARGET) kid0 = kid;
    if (!code && s->have) {
      out->level = (rtdb_level)L;
      code = trial_time(db, s->trial, &out->time_s, &out->predicted);
    }
  }
  if (!code && !s->have) {
    int by_tag = 0;
    code = level_default(db, kernel, kid0, tag_id, out->config, &by_tag);
    if (code == RTDB_NOTFOUND)
      seterr(db, code, "nothing pinned near '%.200s' for %.100s on %.100s and %s", vs, kernel,
             c->name ? c->name : c->fp ? c->fp : "the given target",
             by_tag ? "the tag recorded no template default for it" : "no template default");
    if (!code) {
      out->match = RTDB_DEFAULT;
      out->level = RTDB_LEVEL_DEFAULT;
      out->workload[0] = out->target[0] = out->fingerprint[0] = 0;
      out->pin_version = 0;
      out->time_s = -1;
      out->distance = 0;
      out->predicted = 0;
    }
  }
  reset_all(db);
  free(s);
  return code;
}

int rtdb_pins(rtdb *db, const char *target, const char *kernel, const char *tag,
              rtdb_pin_fn fn, void *ctx, char *default_config) {
  if (!db) return RTDB_MISUSE;
  if (!target || !kernel || !fn || !default_config) return RTDB_MISUSE;
  pthread_mutex_lock(&db->mu);
  sqlite3_stmt *pins = NULL;
  sqlite3_int64 kid = 0;
  int code = open_pins(db, target, kernel, tag, &pins, &kid), rc;
  while (!code && (rc = step(db, pins, &code)) == SQLITE_ROW) {
    const char *key, *sizes, *dtype, *config;
    if ((code = text_col(db, pins, 0, &key, RTDB_MAXKEY)) || (code = text_col(db, pins, 1, &sizes, 65536)) ||
        (code = text_col(db, pins, 2, &dtype, MAXSTR)) || (code = text_col(db, pins, 4, &config, RTDB_MAXCONFIG)))
      break;
    double t;
    int pred;
    if (odd_pin(pins, key)) {
      code = seterr(db, RTDB_NOTADB, "unexpected pin of workload '%.200s'", key);
      break;
    }
    if ((code = trial_time(db, sqlite3_column_int64(pins, 5), &t, &pred)) ||
        fn(ctx, key, sizes, dtype, config, sqlite3_column_int(pins, 3), t))
      break;
  }
  default_config[0] = 0;
  if (!code && (code = get_default(db, kernel, kid, default_config)) == RTDB_NOTFOUND) code = RTDB_OK;
  reset_all(db);
  pthread_mutex_unlock(&db->mu);
  return code;
}

/* ---- What rooftune's db check asks of the reader (rtdb_int.h) ---- */

/* Every pin a lookup can reach, with its row id and scope, then every
** template default; the reader's own statements must also prepare. */
static const char *const check_sql[] = {
  "SELECT " PIN_COLUMNS ", p.id, 'current' FROM pin_current c JOIN pins p ON p.id = c.pin_id"
  " JOIN workloads w ON w.id = c.workload_id ORDER BY p.id",
  "SELECT " PIN_COLUMNS ", p.id, 'tag ' || t.name FROM tag_pins tp JOIN tags t ON t.id = tp.tag_id"
  " JOIN pins p ON p.id = tp.pin_id JOIN workloads w ON w.id = p.workload_id ORDER BY t.id, p.id",
  "SELECT default_config, id, name FROM kernels WHERE default_config IS NOT NULL ORDER BY id",
};

static int report(void (*fn)(void *, const char *), void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int report(void (*fn)(void *, const char *), void *ctx, const char *fmt, ...) {
  char line[1200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fn(ctx, line);
  return 1;
}

int rtdb__check(sqlite3 *h, void (*fn)(void *ctx, const char *problem), void *ctx) {
  rtdb *db = calloc(1, sizeof *db);
  vars *row = malloc(sizeof *row);
  int bad = 0;
  if (!db || !row) {
    free(db), free(row);
    return report(fn, ctx, "reader: out of memory");
  }
  db->h = h;   /* borrowed: never closed here */
  int version = 0;
  probe(h, &version);
  for (int i = 0; i < NST; i++)
    if (sqlite3_prepare_v2(h, sql[version >= 8][i], -1, &db->st[i], NULL) != SQLITE_OK)
      bad += report(fn, ctx, "reader: its query cannot run on this file: %s", sqlite3_errmsg(h));
  for (size_t q = 0; !bad && q < sizeof check_sql / sizeof *check_sql; q++) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, check_sql[q], -1, &st, NULL) != SQLITE_OK) {
      bad += report(fn, ctx, "reader: %s", sqlite3_errmsg(h));
      continue;
    }
    int rc, code;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      const char *key, *config;
      double t;
      int pred;
      if (q == 2) {   /* a kernel's default */
        const char *kernel = (const char *)sqlite3_column_text(st, 2);
        if (read_default(db, st, 0, &config, kernel ? kernel : "?"))
          bad += report(fn, ctx, "reader: kernels row %lld: %s", (long long)sqlite3_column_int64(st, 1),
                        db->msg);
      } else if ((code = read_row(db, st, row, &key, &config)) ||
                 (code = trial_time(db, sqlite3_column_int64(st, 5), &t, &pred))) {
        const char *scope = (const char *)sqlite3_column_text(st, 7);
        bad += report(fn, ctx, "reader: pins row %lld (%s): %s", (long long)sqlite3_column_int64(st, 6),
                      scope ? scope : "a tag", db->msg);
      }
    }
    if (rc != SQLITE_DONE) bad += report(fn, ctx, "reader: %s", sqlite3_errmsg(h));
    sqlite3_finalize(st);
  }
  for (int i = 0; i < NST; i++) sqlite3_finalize(db->st[i]);
  free(row);
  free(db);
  return bad;
}

/* ---- The memo ---- */

/* The memo's hash of a key: eight bytes at a time (a multiply and a
** shift each; byte-wise FNV-1a made hashing the longer keys of families
** the largest cost of a memo hit), the tail byte-wise, then mixed. */
static uint64_t key_hash(const char *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ n, w;
  for (; n >= 8; p += 8, n -= 8) {
    memcpy(&w, p, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 32;
  }
  while (n--) h = (h ^ (unsigned char)*p++) * 0x100000001b3ull;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

static memo **memo_find(rtdb *db, uint64_t h, const char *key, size_t klen) {
  for (size_t i = h & (db->cap - 1);; i = (i + 1) & (db->cap - 1)) {
    memo *m = db->slot[i];
    if (!m || (m->hash == h && m->klen == klen && !memcmp(m + 1, key, klen))) return &db->slot[i];
  }
}

/* Remember an answer (best effort: no memory, no memo). */
static void memo_put(rtdb *db, uint64_t h, const char *key, size_t klen, int rc,
                     const rtdb_result *r) {
  if (db->n >= MEMO_MAX) memo_clear(db);
  if (2 * (db->n + 1) > db->cap) {
    size_t cap = db->cap ? 2 * db->cap : 256;
    memo **old = db->slot, **slot = calloc(cap, sizeof *slot);
    if (!slot) return;
    size_t ocap = db->cap;
    db->slot = slot, db->cap = cap;
    for (size_t i = 0; i < ocap; i++)
      if (old[i]) *memo_find(db, old[i]->hash, (const char *)(old[i] + 1), old[i]->klen) = old[i];
    free(old);
  }
  const char *c = rc ? db->msg : r->config, *w = rc ? "" : r->workload, *t = rc ? "" : r->target,
             *f = rc ? "" : r->fingerprint;
  size_t clen = strlen(c), wlen = strlen(w), tlen = strlen(t), flen = strlen(f);
  memo *m = malloc(sizeof *m + klen + clen + wlen + tlen + flen + 4);
  if (!m) return;
  *m = rc ? (memo){h, klen, clen, wlen, tlen, flen, rc, 0, 0, 0, 0, 0, 0}
          : (memo){h, klen, clen, wlen, tlen, flen, rc, r->pin_version, r->match, r->level,
                   r->time_s, r->distance, r->predicted};
  char *p = (char *)(m + 1);
  memcpy(p, key, klen), p += klen;
  memcpy(p, c, clen + 1), p += clen + 1;
  memcpy(p, w, wlen + 1), p += wlen + 1;
  memcpy(p, t, tlen + 1), p += tlen + 1;
  memcpy(p, f, flen + 1);
  *memo_find(db, h, key, klen) = m;
  db->n++;
}

static int memo_get(rtdb *db, const memo *m, rtdb_result *out) {
  const char *p = (const char *)(m + 1) + m->klen;
  if (m->rc) {
    memcpy(db->msg, p, m->clen + 1);
    return m->rc;
  }
  out->match = m->match;
  out->level = m->level;
  out->pin_version = m->version;
  out->time_s = m->time_s;
  out->distance = m->distance;
  out->predicted = m->predicted;
  memcpy(out->config, p, m->clen + 1), p += m->clen + 1;
  memcpy(out->workload, p, m->wlen + 1), p += m->wlen + 1;
  memcpy(out->target, p, m->tlen + 1), p += m->tlen + 1;
  memcpy(out->fingerprint, p, m->flen + 1);
  return RTDB_OK;
}

/* ---- Lookup ---- */

/* Append field f to the memo key at *p (end e): a mark ('-' NULL, '+'
** text) then the text and its NUL. 0, or -1 when it does not fit. */
static int key_put(char **p, const char *e, const char *f) {
  size_t n = f ? strlen(f) + 1 : 0;
  if ((size_t)(e - *p) < n + 1) return -1;
  *(*p)++ = f ? '+' : '-';
  if (f) memcpy(*p, f, n), *p += n;
  return 0;
}

int rtdb_lookup_on(rtdb *db, const rtdb_target *on, const char *kernel, const char *vs,
                   const char *tag, rtdb_result *out) {
  if (!db) return RTDB_MISUSE;
  if (!on || !kernel || !vs || !out) {
    pthread_mutex_lock(&db->mu);
    seterr(db, RTDB_MISUSE, "rtdb_lookup: NULL target, kernel, vars or result");
    pthread_mutex_unlock(&db->mu);
    return RTDB_MISUSE;
  }
  /* the memo key: every field, marked (key_put), then max_level */
  char key[MEMO_KEY], *p = key, *e = key + sizeof key;
  const char *fields[] = {on->name, on->fingerprint, on->model, on->arch, on->backend, kernel, vs, tag};
  int memoise = 1;
  for (size_t i = 0; i < sizeof fields / sizeof *fields && memoise; i++)
    memoise = !key_put(&p, e, fields[i]);
  if (memoise && (size_t)(e - p) > sizeof on->max_level) memcpy(p, &on->max_level, sizeof on->max_level), p += sizeof on->max_level;
  else memoise = 0;
  size_t klen = (size_t)(p - key);
  uint64_t h = memoise ? key_hash(key, klen) : 0;
  pthread_mutex_lock(&db->mu);
  memo **m = memoise && db->cap ? memo_find(db, h, key, klen) : NULL;
  int rc;
  if (m && *m) {
    rc = memo_get(db, *m, out);
  } else {
    rc = resolve(db, on, kernel, vs, tag, out);
    if (memoise && (rc == RTDB_OK || rc == RTDB_NOTFOUND || rc == RTDB_MISUSE))
      memo_put(db, h, key, klen, rc, out);
  }
  pthread_mutex_unlock(&db->mu);
  return rc;
}

int rtdb_lookup(rtdb *db, const char *target, const char *kernel, const char *vs,
                const char *tag, rtdb_result *out) {
  if (db && !target) {
    pthread_mutex_lock(&db->mu);
    seterr(db, RTDB_MISUSE, "rtdb_lookup: NULL target, kernel, vars or result");
    pthread_mutex_unlock(&db->mu);
    return RTDB_MISUSE;
  }
  return rtdb_lookup_on(db, &(rtdb_target){.name = target}, kernel, vs, tag, out);
}

/* ---- For the adapter (rtdb_int.h) ---- */

struct sqlite3 *rtdb__sqlite(rtdb *db) { return db->h; }

int rtdb__distance(const char *vs, const char *sizes_json, const char *dtype, double *d) {
  scan *s = malloc(sizeof *s + sizeof(vars));
  if (!s) return RTDB_NOMEM;
  vars *g = (vars *)(s + 1);
  *s = (scan){.given = g};
  int code = RTDB_OK;
  if (parse_vars(vs, g)) code = RTDB_MISUSE;
  else if (parse_sizes(sizes_json, &s->row) || strlen(dtype) >= MAXSTR) code = RTDB_NOTADB;
  else {
    if (!find(&s->row, "dtype")) {
      if (s->row.n == MAXVARS) code = RTDB_NOTADB;
      else {
        val *v = &s->row.v[s->row.n++];
        strcpy(v->name, "dtype");
        strcpy(v->s, dtype);
        v->num = 0;
      }
    }
    if (!code) {
      *d = judge(s);
      if (*d == -2) code = RTDB_NOTADB;
    }
  }
  free(s);
  return code;
}
