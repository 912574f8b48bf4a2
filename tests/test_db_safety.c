/*
** test_db_safety.c -- the database when files are not what they should be
** (issue 16, items 9-13). Read-only commands leave every file byte for
** byte as it was, mtime included, and make nothing beside it: a newer
** schema in rollback-journal mode, another program's SQLite file, an empty
** file, a normal database. Writers refuse what is not theirs. Corrupted
** pages reach the user as SQLite's "malformed" error. `db check` fails,
** naming the table and row, on every broken invariant the reader relies
** on. Read-only directories (as user nobody when run as root) and
** read-only media (a tmpfs remounted read-only in a mount namespace).
** Odd user_version values. Files live in one temporary folder.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "db/db.h"
#include "db/rtdb.h"
#include "tk_run.h"

#include "tk_exe.h"

#define T1 "data/t1/pnpoly.json"
#define T4 "data/t4/pnpoly_RTX_3090_T4.json.gz"
#define SKIPPED 77   /* a child's exit status: could not set the scene up */

static char rooftune[4096];
static char dir[64];      /* the test's folder */
static char base[128];    /* a normal database: trials, a pin, a tag, a default */

/* ---- Files ---- */

static void path_in(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", dir, name); }

static void copy_file(const char *from, const char *to) {
  FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
  if (!f || !g) fail_msg("copy %s -> %s: %s", from, to, strerror(errno));
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) assert_int_equal(fwrite(buf, 1, n, g), n);
  fclose(f);
  assert_int_equal(fclose(g), 0);
}

static void sql(const char *path, const char *text) {
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  char *msg = NULL;
  if (sqlite3_exec(h, text, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s: %s", path, text, msg);
  sqlite3_close(h);
}

/* The first column of the first row of a query, read-only. */
static int64_t one_int(const char *path, const char *query) {
  sqlite3 *h;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h, query, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

/* What a read must not change: the bytes, the size, the mtime, and which
** of the -wal, -shm, -journal files exist. */
typedef struct snap {
  rt_hash hash;
  off_t size;
  struct timespec mtime;
  int side;
} snap;

static snap take(const char *path) {
  snap s = {0};
  struct stat st;
  if (stat(path, &st)) fail_msg("%s: %s", path, strerror(errno));
  s.size = st.st_size;
  s.mtime = st.st_mtim;
  s.hash = RT_HASH_INIT;
  FILE *f = fopen(path, "rb");
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) s.hash = rt_hash_bytes(s.hash, buf, n);
  fclose(f);
  static const char *const sfx[] = {"-wal", "-shm", "-journal"};
  for (int i = 0; i < 3; i++) {
    char p[300];
    snprintf(p, sizeof p, "%s%s", path, sfx[i]);
    s.side |= access(p, F_OK) == 0 ? 1 << i : 0;
  }
  return s;
}

static void unchanged(const snap *a, const char *path, const char *what) {
  snap b = take(path);
  if (a->hash != b.hash || a->size != b.size) fail_msg("%s changed %s", what, path);
  if (a->mtime.tv_sec != b.mtime.tv_sec || a->mtime.tv_nsec != b.mtime.tv_nsec)
    fail_msg("%s touched %s (mtime)", what, path);
  if (a->side != b.side) fail_msg("%s made or removed -wal/-shm/-journal of %s (%d -> %d)", what, path, a->side, b.side);
}

/* The journal-mode bytes of the header: 1 rollback, 2 WAL. */
static int header_mode(const char *path) {
  unsigned char b[20] = {0};
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fread(b, 1, sizeof b, f), sizeof b);
  fclose(f);
  assert_int_equal(b[18], b[19]);
  return b[18];
}

/* ---- Running the program ---- */

typedef tk_result result;

/* Run `exe argv...` (NULL-terminated), capturing its output. */
static result runv(const char *exe, const char *const *argv) {
  const char *a[40] = {exe};
  int n = 1;
  while (argv[n - 1] && n < 39) a[n] = argv[n - 1], n++;
  a[n] = NULL;
  return tk_capture(a, NULL, NULL);
}

static void done(result *r) { tk_result_free(r); }

/* Run `rooftune WORDS... --db path` (words NULL-terminated). */
static result run_db(const char *exe, const char *const *words, const char *path) {
  const char *a[40];
  int n = 0;
  while (words[n]) a[n] = words[n], n++;
  a[n++] = "--db";
  a[n++] = path;
  a[n] = NULL;
  return runv(exe, a);
}

/* ---- The normal database ---- */

static void make_base(const char *path) {
  rt_err err = {0};
  db *d = db_open(path, DB_CREATE, &err);
  if (!d) fail_msg("%s", err.msg);
  sp_space *sp = sp_load_file(T1, NULL, 0, &err);
  if (!sp) fail_msg("%s", err.msg);
  int64_t c, kid, version;
  int n;
  char **keys;
  if (db_import_t4(d, T4, sp, "gpu", "pnpoly", &c, &n, &err) ||
      db_kernel_id(d, "pnpoly", "external", &kid, &err) ||
      db_kernel_set_default(d, kid, "{\"between_method\":0,\"block_size_x\":32,\"tile_size\":1,\"use_method\":0}", &err) ||
      db_workload_keys(d, "gpu", "pnpoly", &keys, &err) != 1)
    fail_msg("%s", err.msg);
  db_pin_req r = {"gpu", "pnpoly", keys[0], 0, "test", "base"};
  if (db_pin(d, &r, &version, &err) || db_tag(d, "r1", "first", &n, &err)) fail_msg("%s", err.msg);
  free(keys[0]);
  free(keys);
  sp_free(sp);
  db_close(d);
}

static void remove_all(const char *folder) {
  DIR *dp = opendir(folder);
  if (!dp) return;
  struct dirent *e;
  while ((e = readdir(dp))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[512];
    snprintf(p, sizeof p, "%s/%s", folder, e->d_name);
    struct stat st;
    if (!lstat(p, &st) && S_ISDIR(st.st_mode)) {
      remove_all(p);
      rmdir(p);
    } else {
      unlink(p);
    }
  }
  closedir(dp);
}

static int setup(void **state) {
  (void)state;
  if (find_rooftune("test_db_safety", rooftune, sizeof rooftune)) return -1;
  snprintf(dir, sizeof dir, "/tmp/rooftune-test-safety-XXXXXX");
  if (!mkdtemp(dir) || chmod(dir, 0755)) return -1;   /* 0755: readable by the reader (nobody) */
  snprintf(base, sizeof base, "%s/base.db", dir);
  make_base(base);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  remove_all(dir);
  return rmdir(dir);
}

/* ---- Item 9: read-only means unchanged ---- */

/* The commands that only read, as `rooftune WORDS... --db F`. */
#define GPU "--target", "gpu", "--kernel", "pnpoly"
static const char *const read_cmds[][12] = {
  {"db", "check", NULL},
  {"db", "stats", NULL},
  {"db", "best", GPU, NULL},
  {"db", "list", GPU, "--limit", "3", NULL},
  {"db", "history", GPU, NULL},
  {"db", "tag", "--list", NULL},
  {"db", "tag", "--show", "r1", NULL},
  {"db", "export", GPU, "--format", "csv", NULL},
  {"db", "lookup", GPU, NULL},
  {"db", "export-header", GPU, NULL},
  {"model", "history", "--target", "host", NULL},
};
enum { NREAD = sizeof read_cmds / sizeof *read_cmds };

/* Commands that write, refused on a file that is not (or not yet) a
** rooftune database of this version; `creates`: they may make one in an
** empty file. */
static const struct { const char *words[14]; int creates; } write_cmds[] = {
  {{"db", "init", NULL}, 1},
  {{"db", "pin", GPU, NULL}, 0},
  {{"db", "rollback", GPU, "--version", "1", NULL}, 0},
  {{"db", "tag", "--name", "r2", NULL}, 0},
  {{"db", "import", "--t4", T4, "--space", T1, "--target", "x", NULL}, 1},
};
enum { NWRITE = sizeof write_cmds / sizeof *write_cmds };

/* The odd files: how to make each from scratch, and what a read says. */
typedef struct odd {
  const char *name, *db_says, *rtdb_says;
  void (*make)(const char *path);
} odd;

static void make_newer(const char *path) {
  copy_file(base, path);
  sql(path, "PRAGMA user_version = 99");
  assert_int_equal(header_mode(path), 1);   /* rollback-journal mode: the case of the issue */
}

static void make_other(const char *path) {
  sql(path, "CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT);"
            "INSERT INTO notes(text) VALUES('not rooftune''s')");
}

static void make_empty(const char *path) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fclose(f);
}

static const odd odds[] = {
  {"newer.db", "schema version 99 is newer than this rooftune's", "schema version 99; this library reads", make_newer},
  {"other.db", "not a rooftune database (user_version 0, and tables of its own such as 'notes')",
   "not a rooftune database (user_version 0", make_other},
  {"empty.db", "an empty file, not yet a rooftune database", "not a rooftune database (user_version 0", make_empty},
};

static void t_read_commands_change_nothing(void **state) {
  (void)state;
  char p[160];
  /* the normal database: every read succeeds and changes nothing */
  path_in(p, sizeof p, "normal.db");
  copy_file(base, p);
  assert_int_equal(header_mode(p), 1);   /* its writer left rollback-journal mode (db.h, 8) */
  snap s = take(p);
  assert_int_equal(s.side, 0);
  for (int c = 0; c < NREAD; c++) {
    result r = run_db(rooftune, read_cmds[c], p);
    if (r.rc) fail_msg("%s %s on a normal database: exit %d: %s", read_cmds[c][0], read_cmds[c][1], r.rc, r.err);
    unchanged(&s, p, read_cmds[c][1]);
    done(&r);
  }
  /* the odd files: every read and every write is refused with a message
  ** saying why, and nothing changes */
  for (size_t k = 0; k < sizeof odds / sizeof *odds; k++) {
    path_in(p, sizeof p, odds[k].name);
    odds[k].make(p);
    s = take(p);
    for (int c = 0; c < NREAD; c++) {
      result r = run_db(rooftune, read_cmds[c], p);
      int via_rtdb = !strcmp(read_cmds[c][1], "lookup") || !strcmp(read_cmds[c][1], "export-header");
      const char *want = via_rtdb ? odds[k].rtdb_says : odds[k].db_says;
      if (r.rc != 1 || !strstr(r.err, want))
        fail_msg("%s %s on %s: exit %d, '%s' (expected 1 and '%s')", read_cmds[c][0], read_cmds[c][1],
                 odds[k].name, r.rc, r.err, want);
      unchanged(&s, p, read_cmds[c][1]);
      done(&r);
    }
    for (int c = 0; c < NWRITE; c++) {
      if (write_cmds[c].creates && odds[k].make == make_empty) continue;   /* db init's job */
      result r = run_db(rooftune, write_cmds[c].words, p);
      if (r.rc != 1 || !strstr(r.err, odds[k].db_says))
        fail_msg("%s %s on %s: exit %d, '%s'", write_cmds[c].words[0], write_cmds[c].words[1],
                 odds[k].name, r.rc, r.err);
      unchanged(&s, p, write_cmds[c].words[1]);
      done(&r);
    }
    /* merged from: refused, and the source unchanged */
    char dst[160];
    path_in(dst, sizeof dst, "merge-dst.db");
    const char *merge[] = {"db", "merge", p, NULL};
    result r = run_db(rooftune, merge, dst);
    assert_int_equal(r.rc, 1);
    unchanged(&s, p, "db merge (source)");
    done(&r);
  }
}

/* The same through the library, for every mode. */
static void t_open_modes(void **state) {
  (void)state;
  char p[160];
  rt_err err = {0};
  for (size_t k = 0; k < sizeof odds / sizeof *odds; k++) {
    path_in(p, sizeof p, odds[k].name);
    unlink(p);
    odds[k].make(p);
    snap s = take(p);
    static const db_mode modes[] = {DB_READ, DB_WRITE, DB_CREATE};
    for (int m = 0; m < 3; m++) {
      if (modes[m] == DB_CREATE && odds[k].make == make_empty) continue;
      memset(&err, 0, sizeof err);
      assert_null(db_open(p, modes[m], &err));
      if (!strstr(err.msg, odds[k].db_says) || !strstr(err.msg, p)) fail_msg("%s: %s", odds[k].name, err.msg);
      unchanged(&s, p, "db_open");
    }
    rtdb *rd = (rtdb *)1;
    char msg[1024];
    assert_int_not_equal(rtdb_open_msg(p, &rd, msg, sizeof msg), RTDB_OK);
    assert_null(rd);
    assert_non_null(strstr(msg, odds[k].rtdb_says));
    unchanged(&s, p, "rtdb_open");
  }
  /* an empty file becomes a database only when asked to create one */
  path_in(p, sizeof p, "empty.db");
  db *d = db_open(p, DB_CREATE, &err);
  assert_non_null(d);
  assert_int_equal(db_user_version(d), DB_SCHEMA_VERSION);
  db_close(d);
  /* a missing file: read and write refuse without making it */
  path_in(p, sizeof p, "missing.db");
  assert_null(db_open(p, DB_READ, &err));
  assert_non_null(strstr(err.msg, "no such file"));
  assert_null(db_open(p, DB_WRITE, &err));
  assert_int_equal(access(p, F_OK), -1);
  /* an older schema: a read refuses (nothing is migrated), a write migrates */
  path_in(p, sizeof p, "v3.db");
  assert_int_equal(db__make_version(p, 3, &err), 0);
  snap s = take(p);
  assert_null(db_open(p, DB_READ, &err));
  assert_non_null(strstr(err.msg, "schema version 3 is older than this rooftune's"));
  assert_non_null(strstr(err.msg, "rooftune db init --db"));
  unchanged(&s, p, "db_open(DB_READ) of an older schema");
  assert_non_null(d = db_open(p, DB_WRITE, &err));
  assert_int_equal(db_user_version(d), DB_SCHEMA_VERSION);
  db_close(d);
}

/* A writer killed in a rollback-mode transaction leaves a hot journal:
** a read refuses the file, saying so, and changes nothing; a writer rolls
** it back, whatever the transaction had written. */
static void t_hot_journal(void **state) {
  (void)state;
  char p[160], journal[200];
  path_in(p, sizeof p, "hot.db");
  snprintf(journal, sizeof journal, "%s-journal", p);
  copy_file(base, p);
  int64_t sum = one_int(base, "SELECT CAST(sum(time) * 1e6 AS INTEGER) FROM trials");
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {   /* a writer that dies in its transaction, pages spilled */
    sqlite3 *h;
    if (sqlite3_open(p, &h) || sqlite3_exec(h, "PRAGMA cache_size = 2; BEGIN;"
                                               " UPDATE trials SET time = time * 2", NULL, NULL, NULL))
      _exit(1);
    _exit(0);
  }
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_int_equal(WEXITSTATUS(st), 0);
  assert_int_equal(access(journal, F_OK), 0);
  snap s = take(p), b = take(base);
  assert_true(s.hash != b.hash);   /* pages of the transaction reached the file */
  rt_err err = {0};
  assert_null(db_open(p, DB_READ, &err));
  assert_non_null(strstr(err.msg, "hot journal"));
  char msg[1024];
  rtdb *rd;
  assert_int_equal(rtdb_open_msg(p, &rd, msg, sizeof msg), RTDB_READONLY);
  assert_non_null(strstr(msg, "hot journal"));
  unchanged(&s, p, "reading a file with a hot journal");
  db *d = db_open(p, DB_WRITE, &err);
  if (!d) fail_msg("%s", err.msg);
  db_close(d);
  assert_int_equal(access(journal, F_OK), -1);
  assert_int_equal(one_int(p, "SELECT CAST(sum(time) * 1e6 AS INTEGER) FROM trials"), sum);
}

/* ---- Item 13: user_version oddities ---- */

static void t_user_version_oddities(void **state) {
  (void)state;
  static const struct { const char *set, *db_says; int rtdb_code; const char *rtdb_says; } cases[] = {
    {"PRAGMA user_version = -1", "not a rooftune database (user_version -1; rooftune's schema versions are 1 to",
     RTDB_NOTADB, "not a rooftune database (user_version -1)"},
    {"PRAGMA user_version = -2147483648", "not a rooftune database (user_version -2147483648;",
     RTDB_NOTADB, "user_version -2147483648"},
    {"PRAGMA user_version = 2147483647", "schema version 2147483647 is newer than this rooftune's",
     RTDB_SCHEMA, "schema version 2147483647; this library reads"},
    {"PRAGMA user_version = 0", "not a rooftune database (user_version 0, and tables of its own such as 'campaigns')",
     RTDB_NOTADB, "not a rooftune database (user_version 0"},
  };
  char p[160];
  path_in(p, sizeof p, "odd-version.db");
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    unlink(p);
    copy_file(base, p);
    sql(p, cases[i].set);
    snap s = take(p);
    rt_err err = {0};
    assert_null(db_open(p, DB_WRITE, &err));
    if (!strstr(err.msg, cases[i].db_says)) fail_msg("%s: '%s'", cases[i].set, err.msg);
    assert_null(strstr(err.msg, "not an error"));
    rtdb *rd;
    char msg[1024];
    assert_int_equal(rtdb_open_msg(p, &rd, msg, sizeof msg), cases[i].rtdb_code);
    if (!strstr(msg, cases[i].rtdb_says)) fail_msg("%s: rtdb: '%s'", cases[i].set, msg);
    const char *check[] = {"db", "check", NULL};
    result r = run_db(rooftune, check, p);
    assert_int_equal(r.rc, 1);
    if (!strstr(r.err, cases[i].db_says)) fail_msg("%s: db check: '%s'", cases[i].set, r.err);
    done(&r);
    unchanged(&s, p, cases[i].set);
  }
}

/* ---- Item 10: corruption reaches the user ---- */

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A varint of the file format; *n its length. */
static int64_t varint(const unsigned char *p, int *n) {
  uint64_t v = 0;
  for (int i = 0; i < 9; i++) {
    if (i == 8) {
      *n = 9;
      return (int64_t)(v << 8 | p[i]);
    }
    v = v << 7 | (p[i] & 0x7f);
    if (!(p[i] & 0x80)) {
      *n = i + 1;
      return (int64_t)v;
    }
  }
  return 0;
}

/* The leaf page of table b-tree `root` holding rowid (descending the
** interior pages as SQLite does: the first cell whose key >= rowid). */
static uint32_t leaf_of(FILE *f, uint32_t page_size, uint32_t root, int64_t rowid) {
  unsigned char *pg = malloc(page_size);
  uint32_t page = root;
  for (int depth = 0; depth < 20; depth++) {
    assert_int_equal(fseek(f, (long)(page - 1) * page_size, SEEK_SET), 0);
    assert_int_equal(fread(pg, 1, page_size, f), page_size);
    const unsigned char *h = pg + (page == 1 ? 100 : 0);
    if (h[0] == 0x0d) break;            /* a table leaf */
    assert_int_equal(h[0], 0x05);       /* a table interior page */
    int ncells = h[3] << 8 | h[4];
    uint32_t next = be32(h + 8);        /* the right-most child */
    for (int c = 0; c < ncells; c++) {
      const unsigned char *cell = pg + (h[12 + 2 * c] << 8 | h[13 + 2 * c]);
      int n;
      if (rowid <= varint(cell + 4, &n)) {
        next = be32(cell);
        break;
      }
    }
    page = next;
  }
  free(pg);
  return page;
}

/* Overwrite the 8-byte header of page `page` with 0xff (no valid page
** type): SQLite finds it corrupt whenever it reads that page. */
static void smash(const char *path, uint32_t page_size, uint32_t page) {
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  assert_int_equal(fseek(f, (long)(page - 1) * page_size, SEEK_SET), 0);
  for (int i = 0; i < 8; i++) fputc(0xff, f);
  assert_int_equal(fclose(f), 0);
}

typedef struct seen { int n; } seen;
static int count_rows(void *ctx, int64_t id, const char *config, const char *status, double t) {
  (void)id, (void)config, (void)status, (void)t;
  ((seen *)ctx)->n++;
  return 0;
}

static void t_corruption_reported(void **state) {
  (void)state;
  uint32_t ps = (uint32_t)one_int(base, "PRAGMA page_size");
  /* 1: the root pages of trials and of its indexes: every read of a trial fails */
  char p[160];
  path_in(p, sizeof p, "roots.db");
  copy_file(base, p);
  sqlite3 *h;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open_v2(base, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT rootpage FROM sqlite_schema WHERE tbl_name = 'trials'"
                                         " AND rootpage > 1 ORDER BY rootpage", -1, &st, NULL), SQLITE_OK);
  int nroots = 0;
  while (sqlite3_step(st) == SQLITE_ROW) smash(p, ps, (uint32_t)sqlite3_column_int(st, 0)), nroots++;
  sqlite3_finalize(st);
  sqlite3_close(h);
  assert_true(nroots >= 3);   /* the table, its unique index, trials_by_time... */
  static const char *const fail_cmds[][12] = {
    {"db", "best", GPU, NULL}, {"db", "list", GPU, NULL}, {"db", "history", GPU, NULL},
    {"db", "tag", "--show", "r1", NULL}, {"db", "export", GPU, NULL}, {"db", "stats", NULL},
    {"db", "lookup", GPU, NULL},
  };
  for (size_t c = 0; c < sizeof fail_cmds / sizeof *fail_cmds; c++) {
    result r = run_db(rooftune, fail_cmds[c], p);
    if (r.rc != 1 || !strstr(r.err, "database disk image is malformed"))
      fail_msg("%s %s on corrupt trials: exit %d: '%s'", fail_cmds[c][0], fail_cmds[c][1], r.rc, r.err);
    assert_null(strstr(r.err, "no verified trial"));
    done(&r);
  }
  const char *check[] = {"db", "check", NULL};
  result r = run_db(rooftune, check, p);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.out, "integrity: "));
  done(&r);
  rt_err err = {0};
  db *d = db_open(p, DB_READ, &err);
  assert_non_null(d);
  seen n = {0};
  char **keys;
  assert_int_equal(db_workload_keys(d, "gpu", "pnpoly", &keys, &err), 1);
  assert_int_equal(db_ranked(d, "gpu", "pnpoly", keys[0], 0, count_rows, &n, &err), -1);
  assert_non_null(strstr(err.msg, "malformed"));
  db_close(d);

  /* 2: the leaf holding the median verified trial (not the best one's):
  ** a full listing fails when it reaches it, whatever rows came before */
  path_in(p, sizeof p, "leaf.db");
  copy_file(base, p);
  int64_t nok = one_int(base, "SELECT count(*) FROM trials WHERE status = 'ok'");
  char q[160];
  snprintf(q, sizeof q, "SELECT id FROM trials WHERE status = 'ok' ORDER BY time, id LIMIT 1 OFFSET %lld",
           (long long)nok / 2);
  int64_t median = one_int(base, q),
          best = one_int(base, "SELECT id FROM trials WHERE status = 'ok' ORDER BY time, id LIMIT 1");
  uint32_t root = (uint32_t)one_int(base, "SELECT rootpage FROM sqlite_schema WHERE name = 'trials'");
  FILE *f = fopen(base, "rb");
  uint32_t leaf = leaf_of(f, ps, root, median), best_leaf = leaf_of(f, ps, root, best);
  fclose(f);
  assert_int_not_equal(leaf, best_leaf);
  smash(p, ps, leaf);
  const char *list[] = {"db", "list", GPU, "--limit", "0", NULL};
  r = run_db(rooftune, list, p);
  if (r.rc != 1 || !strstr(r.err, "database disk image is malformed"))
    fail_msg("db list over a corrupt leaf: exit %d: '%s'", r.rc, r.err);
  done(&r);
  assert_non_null(d = db_open(p, DB_READ, &err));
  n.n = 0;
  assert_int_equal(db_ranked(d, "gpu", "pnpoly", keys[0], 0, count_rows, &n, &err), -1);
  assert_non_null(strstr(err.msg, "malformed"));
  assert_true(n.n < nok);
  db_close(d);
  r = run_db(rooftune, check, p);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.out, "integrity: "));
  done(&r);
  free(keys[0]);
  free(keys);
}

/* ---- Item 11: db check finds what the reader relies on ---- */

static void t_check_finds_reader_invariants(void **state) {
  (void)state;
  /* each: SQL that breaks the base (foreign keys off, as any tool could),
  ** and what the report must say (the table, the row) */
  static const struct { const char *sql, *says[2]; } cases[] = {
    {"DROP TABLE tag_pins", {"schema: no table tag_pins", "reader: its query cannot run on this file: no such table: tag_pins"}},
    {"UPDATE workloads SET sizes = 'not json'", {"workloads.sizes is not a JSON object: workloads row 1",
                                                 "reader: pins row 1 (current): unexpected pin of workload"}},
    {"UPDATE workloads SET sizes = '[1, 2]'", {"workloads.sizes is not a JSON object: workloads row 1", NULL}},
    {"UPDATE workloads SET sizes = '{\"s\": \"' || replace(hex(zeroblob(150)), '0', 'x') || '\"}'",
     {"reader: pins row 1 (current): unexpected pin of workload", NULL}},   /* JSON, but not for the reader */
    {"UPDATE workloads SET key = CAST(key AS BLOB)", {"reader: pins row 1 (current): unexpected value in column key", NULL}},
    /* an answer's workload "" and version 0 mean the default (fuzz/regress/lookup/crash-f238...) */
    {"UPDATE workloads SET key = ''", {"reader: pins row 1 (current): unexpected pin of workload ''", NULL}},
    {"UPDATE pins SET version = 0", {"reader: pins row 1 (current): unexpected pin of workload", NULL}},
    {"UPDATE pins SET trial_id = 999999", {"foreign key: pins row 1 -> trials", NULL}},
    {"UPDATE pin_current SET pin_id = 999", {"foreign key: pin_current row 1 -> pins", NULL}},
    {"INSERT INTO tag_pins VALUES(1, 999)", {"foreign key: tag_pins row", "-> pins"}},
    {"DELETE FROM tag_pins", {"tag binding no pin: tags row 1 (r1)", NULL}},
    {"UPDATE pins SET trial_id = (SELECT min(id) FROM trials WHERE status != 'ok')",
     {"pin of a trial that is not verified (ok): pins row 1 -> trials row", "pin whose configuration is not its trial's: pins row 1"}},
    {"UPDATE pins SET config = '{\"a\":\"' || replace(hex(zeroblob(2500)), '0', 'y') || '\"}'",
     {"reader: pins row 1 (current): over-long or binary value in column config", NULL}},
    {"UPDATE trials SET time = 'fast' WHERE id = (SELECT trial_id FROM pins)",
     {"reader: pins row 1 (current): unexpected time of trial", NULL}},
    {"UPDATE kernels SET default_config = '[1]'", {"kernels.default_config is not a JSON object: kernels row 1",
                                                   "reader: kernels row 1: unexpected default of kernel pnpoly"}},
    {"ALTER TABLE kernels DROP COLUMN default_config", {"schema: table kernels has no column default_config", NULL}},
    {"DROP INDEX trials_by_time", {"schema: no index trials_by_time", NULL}},
    {"INSERT INTO pins(target_id, workload_id, version, config, pinned_by, reason)"
     " VALUES(1, 1, 2, '{}', 't', 'r');"
     "INSERT INTO tag_pins VALUES(1, last_insert_rowid())",
     {"tag binding two versions of one (target, workload): tag_pins of tags row 1: target 1 workload 1", NULL}},
    {"INSERT INTO workloads(kernel_id, key, sizes, dtype, layout, hash) VALUES(1, 'k2', '{}', 'f32', '', 'h');"
     "UPDATE pins SET workload_id = last_insert_rowid(); UPDATE pin_current SET workload_id = last_insert_rowid()",
     {"pin of a trial of another (target, workload): pins row 1 -> trials row", NULL}},
    {"INSERT INTO workloads(kernel_id, key, sizes, dtype, layout, hash) VALUES(1, 'k2', '{}', 'f32', '', 'h');"
     "INSERT INTO pins(target_id, workload_id, version, config, pinned_by, reason)"
     " VALUES(1, last_insert_rowid(), 1, '{}', 't', 'r');"
     "UPDATE pin_current SET pin_id = last_insert_rowid()",
     {"current pin of another (target, workload): pin_current target 1 workload 1 -> pins row 2",
      "pinned (target, workload) without a current version: target 1 workload 2"}},
  };
  char p[160];
  path_in(p, sizeof p, "broken.db");
  /* the base itself is clean */
  const char *check[] = {"db", "check", NULL};
  result r = run_db(rooftune, check, base);
  if (r.rc != 0 || strcmp(r.out, "ok\n")) fail_msg("db check on the base: exit %d: %s%s", r.rc, r.out, r.err);
  done(&r);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    unlink(p);
    copy_file(base, p);
    sql(p, cases[i].sql);
    r = run_db(rooftune, check, p);
    for (int k = 0; k < 2; k++)
      if (cases[i].says[k] && !strstr(r.out, cases[i].says[k]))
        fail_msg("%s: db check said (exit %d)\n%s%s\nexpected '%s'", cases[i].sql, r.rc, r.out, r.err,
                 cases[i].says[k]);
    if (r.rc != 1) fail_msg("%s: db check exit %d", cases[i].sql, r.rc);
    done(&r);
    /* the library says the same */
    rt_err err = {0};
    db *d = db_open(p, DB_READ, &err);
    assert_non_null(d);
    rt_str rep = {0};
    assert_int_equal(db_check(d, &rep, &err), 1);
    assert_non_null(strstr(rep.s, cases[i].says[0]));
    free(rep.s);
    db_close(d);
  }
}

/* ---- Item 12: read-only places ---- */

/* In a child, become someone who cannot write `folder`: user nobody when
** root; else the folder is made 0555 by the caller. 0, or SKIPPED. */
static int cannot_write(const char *folder) {
  if (geteuid() == 0 && (setgroups(0, NULL) || setgid(65534) || setuid(65534))) {
    fprintf(stderr, "cannot become nobody: %s\n", strerror(errno));
    return SKIPPED;
  }
  char probe[300];
  snprintf(probe, sizeof probe, "%s/probe", folder);
  int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd >= 0) {
    close(fd);
    unlink(probe);
    fprintf(stderr, "%s stays writable for this user: cannot test a read-only directory\n", folder);
    return SKIPPED;
  }
  return 0;
}

#define CHECK(cond, ...)                                                                      \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      fprintf(stderr, "line %d: ", __LINE__);                                                 \
      fprintf(stderr, __VA_ARGS__);                                                           \
      fputc('\n', stderr);                                                                    \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

/* What a reader must manage with ok (a file a rooftune writer closed),
** kept (a WAL file with its -wal and -shm) and wal (a WAL file without
** them): the first two read, the last refused saying what is needed
** (unless `media`: then nothing can change it and it reads too). */
static int read_checks(const char *exe, const char *ok, const char *kept, const char *wal, int media) {
  char msg[1024];
  rtdb *rd;
  rtdb_result res;
  rt_err err = {0};
  const char *best[] = {"db", "best", GPU, NULL}, *lookup[] = {"db", "lookup", GPU, NULL},
             *check[] = {"db", "check", NULL};
  const char *readable[] = {ok, kept, media ? wal : NULL};
  for (int i = 0; i < 3 && readable[i]; i++) {
    int rc = rtdb_open_msg(readable[i], &rd, msg, sizeof msg);
    CHECK(rc == RTDB_OK, "rtdb_open %s: %s (%s)", readable[i], rtdb_errstr(rc), msg);
    CHECK(rtdb_lookup(rd, "gpu", "pnpoly", "", NULL, &res) == RTDB_OK && res.match == RTDB_EXACT,
          "lookup in %s: %s", readable[i], rtdb_errmsg(rd));
    rtdb_close(rd);
    db *d = db_open(readable[i], DB_READ, &err);
    CHECK(d, "db_open(DB_READ) %s: %s", readable[i], err.msg);
    db_close(d);
    const char *const *cmds[] = {best, lookup, check};
    for (int c = 0; c < 3; c++) {
      result r = run_db(exe, cmds[c], readable[i]);
      int good = r.rc == 0;
      if (!good) fprintf(stderr, "rooftune %s %s on %s: exit %d: %s", cmds[c][0], cmds[c][1], readable[i], r.rc, r.err);
      done(&r);
      CHECK(good, "see above");
    }
  }
  if (!media) {
    int rc = rtdb_open_msg(wal, &rd, msg, sizeof msg);
    CHECK(rc == RTDB_READONLY && strstr(msg, "WAL-mode") && strstr(msg, "-wal and -shm") &&
              strstr(msg, "rooftune db init --db"),
          "rtdb_open of a WAL file without -wal/-shm: %s: %s", rtdb_errstr(rc), msg);
    CHECK(!db_open(wal, DB_READ, &err) && strstr(err.msg, "which are missing and cannot be created"),
          "db_open: %s", err.msg);
    result r = run_db(exe, best, wal);
    int good = r.rc == 1 && strstr(r.err, "SQLite cannot read this WAL-mode database here") &&
               !strstr(r.err, "not a rooftune database");
    if (!good) fprintf(stderr, "db best on %s: exit %d: %s", wal, r.rc, r.err);
    done(&r);
    CHECK(good, "see above");
  }
  return 0;
}

/* Run fn in a child process; skip() when it could not set up. */
static void in_child(int (*fn)(void *), void *ctx) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(fn(ctx));
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  if (WEXITSTATUS(st) == SKIPPED) skip();
  assert_int_equal(WEXITSTATUS(st), 0);
}

typedef struct ro_scene { char folder[128], exe[256], ok[256], kept[256], wal[256], walonly[256]; } ro_scene;

/* The three files of read_checks in folder, and the program beside them
** (readable by anyone: the worktree may not be). */
static void make_scene(ro_scene *s, const char *name) {
  path_in(s->folder, sizeof s->folder, name);
  assert_int_equal(mkdir(s->folder, 0755), 0);
  snprintf(s->exe, sizeof s->exe, "%s/rooftune", s->folder);
  copy_file(rooftune, s->exe);
  assert_int_equal(chmod(s->exe, 0755), 0);
  snprintf(s->ok, sizeof s->ok, "%s/ok.db", s->folder);
  snprintf(s->kept, sizeof s->kept, "%s/kept.db", s->folder);
  snprintf(s->wal, sizeof s->wal, "%s/wal.db", s->folder);
  copy_file(base, s->ok);
  assert_int_equal(header_mode(s->ok), 1);
  copy_file(base, s->wal);
  sql(s->wal, "PRAGMA journal_mode = WAL");   /* an older rooftune's file */
  assert_int_equal(header_mode(s->wal), 2);
  assert_int_equal(take(s->wal).side, 0);
  /* kept: a copy of a WAL file with its -wal (one more commit) and -shm,
  ** made while a connection had them open */
  char tmp[200], from[300], to[300];
  snprintf(tmp, sizeof tmp, "%s/live.db", dir);
  copy_file(s->wal, tmp);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(tmp, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, "PRAGMA journal_mode = WAL; UPDATE tags SET note = 'kept'", NULL, NULL, NULL), SQLITE_OK);
  static const char *const sfx[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) {
    snprintf(from, sizeof from, "%s%s", tmp, sfx[i]);
    snprintf(to, sizeof to, "%s%s", s->kept, sfx[i]);
    copy_file(from, to);
  }
  sqlite3_close(h);
  assert_int_equal(take(s->kept).side, 3);
}

static int ro_dir_child(void *ctx) {
  ro_scene *s = ctx;
  int rc = cannot_write(s->folder);
  return rc ? rc : read_checks(s->exe, s->ok, s->kept, s->wal, 0);
}

static void t_read_only_directory(void **state) {
  (void)state;
  ro_scene s;
  make_scene(&s, "ro-dir");
  snap a = take(s.ok), b = take(s.kept), c = take(s.wal);
  if (geteuid() != 0) assert_int_equal(chmod(s.folder, 0555), 0);
  in_child(ro_dir_child, &s);
  if (geteuid() != 0) assert_int_equal(chmod(s.folder, 0755), 0);
  unchanged(&a, s.ok, "reading in a read-only directory");
  unchanged(&b, s.kept, "reading in a read-only directory");
  unchanged(&c, s.wal, "reading in a read-only directory");
}

/* Read-only media: a tmpfs in a mount namespace of the child, remounted
** read-only. As root, or in a user namespace where the kernel allows. */
static int ro_media_child(void *ctx) {
  ro_scene *s = ctx;
  if (geteuid() == 0 ? unshare(CLONE_NEWNS) : unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
    fprintf(stderr, "no mount namespace here (%s): cannot test read-only media\n", strerror(errno));
    return SKIPPED;
  }
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {   /* nothing leaks out */
    fprintf(stderr, "mount --make-rprivate /: %s\n", strerror(errno));
    return SKIPPED;
  }
  char mnt[160];
  snprintf(mnt, sizeof mnt, "%s/media", s->folder);
  if (mount("tmpfs", mnt, "tmpfs", 0, "size=64m")) {
    fprintf(stderr, "mount tmpfs: %s: cannot test read-only media\n", strerror(errno));
    return SKIPPED;
  }
  ro_scene m = *s;
  snprintf(m.ok, sizeof m.ok, "%s/ok.db", mnt);
  snprintf(m.kept, sizeof m.kept, "%s/kept.db", mnt);
  snprintf(m.wal, sizeof m.wal, "%s/wal.db", mnt);
  snprintf(m.walonly, sizeof m.walonly, "%s/walonly.db", mnt);
  static const char *const sfx[] = {"", "-wal", "-shm"};
  char from[300], to[300];
  for (int i = 0; i < 3; i++) {
    snprintf(from, sizeof from, "%s%s", s->kept, sfx[i]);
    snprintf(to, sizeof to, "%s%s", m.kept, sfx[i]);
    copy_file(from, to);
  }
  copy_file(s->ok, m.ok);
  copy_file(s->wal, m.wal);
  /* walonly: a -wal left without its -shm */
  copy_file(s->kept, m.walonly);
  snprintf(from, sizeof from, "%s-wal", s->kept);
  snprintf(to, sizeof to, "%s-wal", m.walonly);
  copy_file(from, to);
  if (mount(NULL, mnt, NULL, MS_REMOUNT | MS_RDONLY, NULL)) {
    fprintf(stderr, "remount read-only: %s\n", strerror(errno));
    return SKIPPED;
  }
  snprintf(to, sizeof to, "%s/probe", mnt);
  CHECK(mkdir(to, 0755) && errno == EROFS, "the media is writable");
  int rc = read_checks(s->exe, m.ok, m.kept, m.wal, 1);
  if (rc) return rc;
  char msg[1024];
  rtdb *rd;
  rc = rtdb_open_msg(m.walonly, &rd, msg, sizeof msg);
  CHECK(rc == RTDB_READONLY && strstr(msg, "the -shm is missing"), "walonly: %s: %s", rtdb_errstr(rc), msg);
  return 0;
}

static void t_read_only_media(void **state) {
  (void)state;
  ro_scene s;
  make_scene(&s, "ro-media");
  char mnt[160];
  snprintf(mnt, sizeof mnt, "%s/media", s.folder);
  assert_int_equal(mkdir(mnt, 0755), 0);
  in_child(ro_media_child, &s);
}

/* ---- Writers leave rollback-journal mode (db.h, invariant 8) ---- */

static void t_writers_leave_rollback_mode(void **state) {
  (void)state;
  char p[160];
  path_in(p, sizeof p, "writer.db");
  copy_file(base, p);
  sql(p, "PRAGMA journal_mode = WAL");
  rt_err err = {0};
  /* another connection open: the file stays in WAL mode, for it */
  sqlite3 *other;
  assert_int_equal(sqlite3_open(p, &other), SQLITE_OK);
  assert_int_equal(sqlite3_exec(other, "SELECT count(*) FROM trials", NULL, NULL, NULL), SQLITE_OK);
  db *d = db_open(p, DB_WRITE, &err);
  assert_non_null(d);
  int64_t id;
  assert_int_equal(db_kernel_id(d, "k", "1", &id, &err), 0);
  db_close(d);
  assert_int_equal(header_mode(p), 2);
  sqlite3_close(other);
  /* alone: rollback mode, nothing beside it, every write kept */
  assert_non_null(d = db_open(p, DB_WRITE, &err));
  assert_int_equal(db_kernel_id(d, "k2", "1", &id, &err), 0);
  db_close(d);
  assert_int_equal(header_mode(p), 1);
  assert_int_equal(take(p).side, 0);
  assert_int_equal(one_int(p, "SELECT count(*) FROM kernels WHERE name IN ('k', 'k2')"), 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(t_read_commands_change_nothing),
    cmocka_unit_test(t_open_modes),
    cmocka_unit_test(t_hot_journal),
    cmocka_unit_test(t_user_version_oddities),
    cmocka_unit_test(t_corruption_reported),
    cmocka_unit_test(t_check_finds_reader_invariants),
    cmocka_unit_test(t_read_only_directory),
    cmocka_unit_test(t_read_only_media),
    cmocka_unit_test(t_writers_leave_rollback_mode),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
