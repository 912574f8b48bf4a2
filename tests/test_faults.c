/*
** test_faults.c -- fault injection on every command that writes a
** database: `tune`, `db import`, `db merge`, `db pin`, `db rollback`,
** `db tag` and `db copy` (the experiments' copy, experiments/lib.sh). The
** real rooftune program runs as a child and is killed with SIGKILL
** part-way, at two kinds of moment:
**   - random: after a delay drawn uniformly from [0, 1.2 x the command's
**     own duration] by a seeded generator (the seed is printed);
**   - deterministic: the child runs under ptrace and is killed at the
**     entry of its Nth system call that changes a file in the round's
**     folder (write, pwrite, truncate, fsync, rename, unlink, a create):
**     every on-disk state a kill can leave, with no hook in rooftune.
**     Every point of a short command; of a long one every name, truncate
**     and sync and an even spread of its writes; of a campaign an even
**     spread and both sides of each commit a reader sees change its phase
**     (stored, pinned, reported, done).
** After each kill the file is checked against an independent expectation:
** `db check` passes (integrity, foreign keys, rooftune's invariants); its
** content (every table, row by row) is exactly the content before the
** command, or the content an uninterrupted run of the same command left
** on another copy (times of day masked) -- all-or-nothing; a command
** that exited 0 before the kill is the latter; the reader library opens
** it and rtdb_lookup answers the current and the tagged pins the file
** holds; the inputs (merge's shard, copy's source) are byte for byte
** unchanged, and a copy is whole or absent. A killed campaign keeps every
** trial a reader saw committed, each complete; `tune --resume` finishes
** it to its budget of distinct configurations, pinned once, as the reader
** answers.
** lib.sh's copy of a file whose last commit is still in its -wal (another
** connection open) copies that commit too; a byte copy would not.
** Then I/O errors: the same commands with a file-size limit (RLIMIT_FSIZE,
** writes fail with EFBIG) and on a full disk (a 2 MiB tmpfs in a private
** mount namespace, as root; skipped with a message elsewhere): each
** fails with an error naming the command, or succeeds; the file is then
** as before (or as after); it still checks and reads, and the command
** (or `tune --resume`) works once there is room.
**
** ROOFTUNE_TEST_FAULT_ROUNDS=N multiplies the rounds (default 1);
** ROOFTUNE_TEST_FAULT_SEED=S replaces the seed (default 20261201);
** ROOFTUNE_TEST_ONLY=PATTERN runs the matching tests (cmocka's filter);
** ROOFTUNE_TEST_SHOW=1 prints every I/O-error message; ROOFTUNE_TEST_KEEP=1
** keeps the test's folder.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/rt.h"
#include "db/rtdb.h"

#include "tk_exe.h"
#include "tk_run.h"

#define T1 "data/t1/pnpoly.json"
#define T4 "data/t4/pnpoly_RTX_3090_T4.json.gz"
#define T4_TRIALS 400   /* the first results of T4, imported (small: many rounds) */
#define SKIPPED 77   /* a child's exit status: could not set the scene up */

static char rooftune[4096];
static char dir[64];          /* the test's folder */
static char base[128];        /* imported trials, pins v1 and v2 (v1 current), tag r1 */
static char shard[128];       /* another target's trials, for merge */
static char t4[128];          /* the first T4_TRIALS results of T4 */
static char pin_trial[32];    /* an ok trial of the base, not pinned yet */
static int mult = 1;          /* ROOFTUNE_TEST_FAULT_ROUNDS */
static uint64_t seed = 20261201, rng;

/* splitmix64: the same sequence from the same seed on every libc. */
static uint64_t next_rand(void) {
  uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static double uniform(void) { return (double)(next_rand() >> 11) / 9007199254740992.0; }

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- Files ---- */

/* Byte copy; 0 or -1 (usable in a child process, where cmocka is not). */
static int copy_bytes(const char *from, const char *to) {
  FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
  char buf[65536];
  size_t n;
  int bad = !f || !g;
  while (!bad && (n = fread(buf, 1, sizeof buf, f)) > 0) bad = fwrite(buf, 1, n, g) != n;
  if (f) fclose(f);
  if (g && fclose(g)) bad = 1;
  return bad ? -1 : 0;
}

static void copy_file(const char *from, const char *to) {
  if (copy_bytes(from, to)) fail_msg("copy %s -> %s: %s", from, to, strerror(errno));
}

static int exists(const char *path) {
  struct stat sb;
  return lstat(path, &sb) == 0;
}

static int exists_beside(const char *path, const char *suffix) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s%s", path, suffix);
  return exists(p);
}

/* FNV-1a 64 of a whole file's bytes (0 when it cannot be read). */
static uint64_t file_hash(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int c; (c = getc(f)) != EOF;) h = (h ^ (uint64_t)c) * 0x100000001b3ULL;
  fclose(f);
  return h;
}

/* A fresh folder for one round: dir/NAME-N. */
static void round_dir(char *out, size_t cap, const char *name, int n) {
  snprintf(out, cap, "%s/%s-%d", dir, name, n);
  for (char *p = out + strlen(dir) + 1; *p; p++)
    if (*p == ' ') *p = '_';
  if (exists(out)) assert_int_equal(tk_rm_rf(out), 0);
  assert_int_equal(mkdir(out, 0755), 0);
}

/* ---- Reading a database without rooftune ---- */

typedef struct dump { char *exact, *masked; } dump;

static void dump_free(dump *d) {
  free(d->exact);
  free(d->masked);
  *d = (dump){0};
}

/* Columns whose value is the time of day the row was written. */
static int is_clock(const char *col) {
  return !strcmp(col, "created") || !strcmp(col, "started") || !strcmp(col, "ended");
}

static void put_value(rt_str *s, sqlite3_stmt *st, int i) {
  switch (sqlite3_column_type(st, i)) {
  case SQLITE_NULL: rt_str_printf(s, "|-"); break;
  case SQLITE_INTEGER: rt_str_printf(s, "|i%lld", (long long)sqlite3_column_int64(st, i)); break;
  case SQLITE_FLOAT: rt_str_printf(s, "|r%.17g", sqlite3_column_double(st, i)); break;
  case SQLITE_TEXT: rt_str_printf(s, "|t%s", (const char *)sqlite3_column_text(st, i)); break;
  default: rt_str_printf(s, "|b%d", sqlite3_column_bytes(st, i)); break;
  }
}

/* Open path read-only (the way a reader would: nothing written). */
static sqlite3 *open_ro(const char *path, char *why, size_t cap) {
  sqlite3 *h = NULL;
  if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    snprintf(why, cap, "%s: cannot open read-only: %s", path, h ? sqlite3_errmsg(h) : "no memory");
    sqlite3_close(h);
    return NULL;
  }
  sqlite3_busy_timeout(h, 10000);
  return h;
}

/* Every table of path, row by row in rowid order, with the schema and
** user_version: exact, and with the clock columns masked. 0, or -1 with
** why. */
static int dump_db(const char *path, dump *d, char *why, size_t cap) {
  *d = (dump){0};
  sqlite3 *h = open_ro(path, why, cap);
  if (!h) return -1;
  rt_str ex = {0}, ma = {0};
  sqlite3_stmt *tables = NULL;
  int rc = sqlite3_exec(h, "BEGIN", NULL, NULL, NULL);   /* one snapshot */
  if (rc == SQLITE_OK)
    rc = sqlite3_prepare_v2(h, "SELECT name, sql FROM sqlite_schema WHERE type = 'table'"
                               " AND name NOT LIKE 'sqlite_%' ORDER BY name", -1, &tables, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step(tables)) == SQLITE_ROW) {
    rc = SQLITE_OK;
    const char *name = (const char *)sqlite3_column_text(tables, 0);
    rt_str_printf(&ex, "table %s\n", name);
    rt_str_printf(&ma, "table %s\n", name);
    rt_str q = {0};
    rt_str_printf(&q, "SELECT * FROM \"%s\" ORDER BY rowid", name);   /* names from the file's own schema */
    sqlite3_stmt *st;
    rc = sqlite3_prepare_v2(h, q.s, -1, &st, NULL);
    free(q.s);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
      rc = SQLITE_OK;
      for (int i = 0; i < sqlite3_column_count(st); i++) {
        put_value(&ex, st, i);
        if (is_clock(sqlite3_column_name(st, i))) rt_str_printf(&ma, "|*");
        else put_value(&ma, st, i);
      }
      rt_str_printf(&ex, "\n");
      rt_str_printf(&ma, "\n");
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(st);
  }
  if (rc == SQLITE_DONE) rc = SQLITE_OK;
  sqlite3_finalize(tables);
  sqlite3_stmt *st;
  if (rc == SQLITE_OK &&
      (rc = sqlite3_prepare_v2(h, "SELECT type, name, coalesce(sql, '') FROM sqlite_schema ORDER BY name",
                               -1, &st, NULL)) == SQLITE_OK) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      for (int i = 0; i < 3; i++) put_value(&ex, st, i), put_value(&ma, st, i);
      rt_str_printf(&ex, "\n");
      rt_str_printf(&ma, "\n");
    }
    if (rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(st);
  }
  if (rc == SQLITE_OK && (rc = sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL)) == SQLITE_OK) {
    if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      rt_str_printf(&ex, "user_version %d\n", sqlite3_column_int(st, 0));
      rt_str_printf(&ma, "user_version %d\n", sqlite3_column_int(st, 0));
      rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
  }
  if (rc != SQLITE_OK) snprintf(why, cap, "%s: reading it: %s", path, sqlite3_errmsg(h));
  sqlite3_exec(h, "COMMIT", NULL, NULL, NULL);
  sqlite3_close(h);
  if (rc != SQLITE_OK) {
    free(ex.s);
    free(ma.s);
    return -1;
  }
  d->exact = ex.s;
  d->masked = ma.s;
  return 0;
}

/* The first line where a and b differ, for a message. */
static void first_difference(const char *a, const char *b, char *out, size_t cap) {
  const char *la = a, *lb = b;
  while (*a && *a == *b) {
    if (*a == '\n') la = a + 1, lb = b + 1;
    a++, b++;
  }
  int na = (int)strcspn(la, "\n"), nb = (int)strcspn(lb, "\n");
  snprintf(out, cap, "found '%.*s', expected '%.*s'", na > 300 ? 300 : na, la, nb > 300 ? 300 : nb, lb);
}

/* One integer from a query on path (read-only); LLONG_MIN on error. */
static long long one_int(const char *path, const char *query) {
  char why[512];
  sqlite3 *h = open_ro(path, why, sizeof why);
  sqlite3_stmt *st;
  long long v = LLONG_MIN;
  if (h && sqlite3_prepare_v2(h, query, -1, &st, NULL) == SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return v;
}

/* ---- Running rooftune ---- */

/* A child's argument vector: "@DB", "@OUT", "@SHARD" stand for the
** round's files. */
typedef struct words { const char *w[24]; } words;

static void expand(const words *in, const char *db, const char *out, const char **argv) {
  int n = 0;
  argv[n++] = rooftune;
  for (int i = 0; in->w[i]; i++)
    argv[n++] = !strcmp(in->w[i], "@DB") ? db : !strcmp(in->w[i], "@OUT") ? out
              : !strcmp(in->w[i], "@SHARD") ? shard : in->w[i];
  argv[n] = NULL;
}

/* How a child runs: traced, a file-size limit, its output in a file. */
typedef struct child_opts {
  int trace;            /* PTRACE_TRACEME before exec */
  long long fsize;      /* RLIMIT_FSIZE in bytes; < 0: none */
  int out;              /* standard output and error to this descriptor (0: /dev/null) */
} child_opts;

static pid_t start(const char *const *argv, const child_opts *o) {
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid) return pid;
  int fd = o->out > 0 ? o->out : open("/dev/null", O_WRONLY);
  if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) _exit(126);
  if (o->fsize >= 0) {
    signal(SIGXFSZ, SIG_IGN);   /* kept across exec: writes fail with EFBIG */
    struct rlimit rl = {(rlim_t)o->fsize, (rlim_t)o->fsize};
    if (setrlimit(RLIMIT_FSIZE, &rl)) _exit(126);
  }
  if (o->trace) {
    /* LeakSanitizer stops the process with ptrace at exit, which a traced
    ** process cannot do: no leak check in traced runs (ASan builds). */
    const char *a = getenv("ASAN_OPTIONS");
    char opts[512];
    snprintf(opts, sizeof opts, "%s%sdetect_leaks=0", a ? a : "", a && *a ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
    if (ptrace(PTRACE_TRACEME, 0, NULL, NULL)) _exit(125);
  }
  execv(argv[0], (char *const *)argv);
  _exit(127);
}

static int status_code(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

/* Run to the end; its exit code (128 + signal). */
static int run_wait(const char *const *argv, const child_opts *o) {
  pid_t pid = start(argv, o);
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return status_code(st);
}

/* Run argv with its output captured into out; the exit code. */
static int run_capture(const char *const *argv, char *out, size_t cap) {
  tk_io io = {.out = out, .cap = cap, .both = 1};
  return tk_run(argv, &io);
}

/* ---- Kill points under ptrace ---- */

/* Read a NUL-terminated string at addr in pid (through /proc/PID/mem). */
static void peek_str(pid_t pid, uint64_t addr, char *out, size_t cap) {
  char mem[64];
  snprintf(mem, sizeof mem, "/proc/%d/mem", (int)pid);
  int fd = open(mem, O_RDONLY);
  out[0] = 0;
  if (fd < 0) return;
  size_t n = 0;
  while (n + 1 < cap) {
    ssize_t k = pread(fd, out + n, 1, (off_t)(addr + n));
    if (k != 1 || !out[n]) break;
    n++;
  }
  out[n] = 0;
  close(fd);
}

static void fd_path(pid_t pid, uint64_t fd, char *out, size_t cap) {
  char link[64];
  snprintf(link, sizeof link, "/proc/%d/fd/%llu", (int)pid, (unsigned long long)fd);
  ssize_t n = readlink(link, out, cap - 1);
  out[n > 0 ? n : 0] = 0;
}

/* Whether the system call about to run changes a file under prefix (p
** gets the file's path); *kind: 'w' data written, 's' a sync, 'n' a name
** made, changed or removed, 't' a truncation. */
static int changes_file(pid_t pid, const struct __ptrace_syscall_info *in, const char *prefix, char *kind,
                        char p[PATH_MAX]) {
  const uint64_t *a = in->entry.args;
  char q[PATH_MAX] = "";
  p[0] = 0;
  long nr = (long)in->entry.nr;
  *kind = 'w';
  if (nr == SYS_write || nr == SYS_pwrite64 || nr == SYS_writev || nr == SYS_pwritev
#ifdef SYS_pwritev2
      || nr == SYS_pwritev2
#endif
  ) {
    fd_path(pid, a[0], p, PATH_MAX);
  } else if (nr == SYS_fsync || nr == SYS_fdatasync) {
    *kind = 's';
    fd_path(pid, a[0], p, PATH_MAX);
  } else if (nr == SYS_ftruncate || nr == SYS_fallocate) {
    *kind = 't';
    fd_path(pid, a[0], p, PATH_MAX);
  } else if (nr == SYS_openat && (a[2] & O_CREAT)) {
    *kind = 'n';
    peek_str(pid, a[1], p, PATH_MAX);
  } else if (nr == SYS_unlinkat || nr == SYS_renameat
#ifdef SYS_renameat2
             || nr == SYS_renameat2
#endif
  ) {
    *kind = 'n';
    peek_str(pid, a[1], p, PATH_MAX);
    if (nr != SYS_unlinkat) peek_str(pid, a[3], q, sizeof q);
#ifdef SYS_open
  } else if ((nr == SYS_open && (a[1] & O_CREAT)) || nr == SYS_creat || nr == SYS_unlink ||
             nr == SYS_rename || nr == SYS_truncate) {
    *kind = nr == SYS_truncate ? 't' : 'n';
    peek_str(pid, a[0], p, PATH_MAX);
    if (nr == SYS_rename) peek_str(pid, a[1], q, sizeof q);
#endif
  } else {
    return 0;
  }
  size_t n = strlen(prefix);
  return !strncmp(p, prefix, n) || !strncmp(q, prefix, n);
}

/* Called with the child stopped at a point (the file it changes). */
typedef struct at_kill { void (*fn)(void *ctx, const char *path); void *ctx; } at_kill;

/* Run argv traced and kill it at the entry of its `at`th system call
** that changes a file under prefix (at 0: never), calling hook (when
** given) first (at 0: at every such call). *points gets the number of such calls seen, kinds (when
** given, cap bytes) one letter each. Returns the exit code (128 + SIGKILL
** when killed), -1 when ptrace is not permitted here. */
static int run_kill_at(const char *const *argv, const char *prefix, long at, long *points, char *kinds,
                       size_t cap, const at_kill *hook) {
  child_opts o = {.trace = 1, .fsize = -1};
  pid_t pid = start(argv, &o);
  int st;
  *points = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  if (!WIFSTOPPED(st)) return WIFEXITED(st) && WEXITSTATUS(st) == 125 ? -1 : status_code(st);
  assert_int_equal(ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)), 0);
  int sig = 0;
  for (;;) {
    if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig)) fail_msg("ptrace: %s", strerror(errno));
    sig = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFEXITED(st) || WIFSIGNALED(st)) break;
    int s = WSTOPSIG(st);
    if (s != (SIGTRAP | 0x80)) {
      if (s != SIGTRAP) sig = s;   /* deliver what the program was sent */
      continue;
    }
    struct __ptrace_syscall_info in;
    if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof in, &in) <= 0) continue;
    char kind, path[PATH_MAX];
    if (in.op != PTRACE_SYSCALL_INFO_ENTRY || !changes_file(pid, &in, prefix, &kind, path)) continue;
    if (kinds && (size_t)*points + 1 < cap) kinds[*points] = kind, kinds[*points + 1] = 0;
    if (hook && (at == 0 || *points + 1 == at)) hook->fn(hook->ctx, path);
    if (++*points == at) {
      kill(pid, SIGKILL);
      assert_int_equal(waitpid(pid, &st, 0), pid);
      break;
    }
  }
  return status_code(st);
}

/* ---- What a file must be after a command ---- */

/* `rooftune db check` passes on path. */
static int check_passes(const char *path, char *why, size_t cap) {
  const char *argv[] = {rooftune, "db", "check", "--db", path, NULL};
  char out[4096];
  int rc = run_capture(argv, out, sizeof out);
  if (rc != 0 || strcmp(out, "ok\n")) {
    snprintf(why, cap, "db check --db %s: exit %d: %.3000s", path, rc, out);
    return -1;
  }
  return 0;
}

/* The reader library opens path, and rtdb_lookup of pnpoly on gpu, with
** the current pins and with each tag, answers the pin the file holds
** (read with SQL: its version and config). */
static int reader_agrees(const char *path, char *why, size_t cap) {
  char msg[1024];
  rtdb *r;
  int rc = rtdb_open_msg(path, &r, msg, sizeof msg);
  if (rc) {
    snprintf(why, cap, "rtdb_open: %s: %s", rtdb_errstr(rc), msg);
    return -1;
  }
  sqlite3 *h = open_ro(path, why, cap);
  sqlite3_stmt *st = NULL;
  int bad = !h || sqlite3_prepare_v2(h,
      "SELECT NULL, p.version, p.config FROM pin_current c JOIN pins p ON p.id = c.pin_id"
      " JOIN targets g ON g.id = p.target_id JOIN workloads w ON w.id = p.workload_id"
      " JOIN kernels k ON k.id = w.kernel_id WHERE g.name = 'gpu' AND k.name = 'pnpoly'"
      " UNION ALL SELECT t.name, p.version, p.config FROM tags t JOIN tag_pins tp ON tp.tag_id = t.id"
      " JOIN pins p ON p.id = tp.pin_id JOIN targets g ON g.id = p.target_id"
      " JOIN workloads w ON w.id = p.workload_id JOIN kernels k ON k.id = w.kernel_id"
      " WHERE g.name = 'gpu' AND k.name = 'pnpoly'", -1, &st, NULL) != SQLITE_OK;
  if (bad && h) snprintf(why, cap, "%s: %s", path, sqlite3_errmsg(h));
  int n = 0;
  while (!bad && sqlite3_step(st) == SQLITE_ROW) {
    const char *tag = (const char *)sqlite3_column_text(st, 0);
    int version = sqlite3_column_int(st, 1);
    const char *config = (const char *)sqlite3_column_text(st, 2);
    rtdb_result res;
    rc = rtdb_lookup(r, "gpu", "pnpoly", "", tag, &res);
    n++;
    if (rc || res.match != RTDB_EXACT || res.pin_version != version || strcmp(res.config, config)) {
      snprintf(why, cap, "rtdb_lookup(gpu, pnpoly, tag %s): %s, match %d, version %d, %.500s; the file pins "
               "version %d, %.500s", tag ? tag : "(current)", rtdb_errstr(rc), (int)res.match,
               res.pin_version, res.config, version, config);
      bad = 1;
    }
  }
  if (!bad && n == 0) {
    snprintf(why, cap, "%s: no pin of pnpoly on gpu to look up", path);
    bad = 1;
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  rtdb_close(r);
  return bad ? -1 : 0;
}

/* ---- The commands on a database ---- */

typedef struct fop {
  const char *name;
  words args;
  int out;      /* writes @OUT (a new file) instead of changing @DB */
  int shard;    /* reads @SHARD */
} fop;

static const fop ops[] = {
  {"db import", {{"db", "import", "--db", "@DB", "--t4", t4, "--space", T1, "--target", "gpu-c", NULL}}, 0, 0},
  {"db merge", {{"db", "merge", "--db", "@DB", "@SHARD", NULL}}, 0, 1},
  {"db pin", {{"db", "pin", "--db", "@DB", "--target", "gpu", "--kernel", "pnpoly", "--trial", pin_trial,
               "--by", "faults", NULL}}, 0, 0},
  {"db rollback", {{"db", "rollback", "--db", "@DB", "--target", "gpu", "--kernel", "pnpoly", "--version", "2",
                    NULL}}, 0, 0},
  {"db tag", {{"db", "tag", "--db", "@DB", "--name", "r2", "--note", "faults", NULL}}, 0, 0},
  {"db copy", {{"db", "copy", "--db", "@DB", "--out", "@OUT", NULL}}, 1, 0},
};
enum { NOPS = sizeof ops / sizeof *ops };

/* What each command must leave: the base's content before it, and after
** it (an uninterrupted run on a copy), with its duration. */
typedef struct expect {
  dump before, after;
  uint64_t shard_bytes;
  double seconds;
} expect;
static expect expects[NOPS];

typedef enum { ST_BEFORE, ST_AFTER, ST_ABSENT } fstate;
static const char *const state_names[] = {"as before", "as after", "not written"};

/* The round's files in folder: db (a copy of the base) and out. */
static void round_files(const char *folder, char *db, char *out, size_t cap) {
  snprintf(db, cap, "%s/f.db", folder);
  snprintf(out, cap, "%s/copy.db", folder);
  copy_file(base, db);
}

/* Check the files after op ran (and perhaps was killed): rc its exit
** code. *st gets which state was found. 0, or -1 with why. */
static int check_after(int op, const char *db, const char *out, int rc, fstate *st, char *why, size_t cap) {
  const fop *f = &ops[op];
  const expect *e = &expects[op];
  int acked = rc == 0, killed = rc == 128 + SIGKILL;
  if (!acked && !killed) {
    snprintf(why, cap, "%s: exit %d (neither done nor killed)", f->name, rc);
    return -1;
  }
  if (f->shard && file_hash(shard) != e->shard_bytes) {
    snprintf(why, cap, "%s: the shard it reads changed", f->name);
    return -1;
  }
  char diff[800];
  dump d;
  if (f->out) {   /* the source as it was; the copy absent or whole */
    if (check_passes(db, why, cap) || dump_db(db, &d, why, cap)) return -1;
    int same = !strcmp(d.exact, e->before.exact);
    if (!same) first_difference(d.exact, e->before.exact, diff, sizeof diff);
    dump_free(&d);
    if (!same) {
      snprintf(why, cap, "%s changed its source: %s", f->name, diff);
      return -1;
    }
    if (!exists(out)) {
      if (acked) {
        snprintf(why, cap, "%s exited 0 without writing %s", f->name, out);
        return -1;
      }
      *st = ST_ABSENT;
      return 0;
    }
    if (exists_beside(out, "-wal") || exists_beside(out, "-journal")) {
      snprintf(why, cap, "%s left a -wal or -journal beside the copy", f->name);
      return -1;
    }
    if (check_passes(out, why, cap) || dump_db(out, &d, why, cap)) return -1;
    same = !strcmp(d.exact, e->before.exact);
    if (!same) first_difference(d.exact, e->before.exact, diff, sizeof diff);
    dump_free(&d);
    if (!same) {
      snprintf(why, cap, "%s: the copy differs from the source: %s", f->name, diff);
      return -1;
    }
    *st = ST_AFTER;
    return reader_agrees(out, why, cap);
  }
  if (check_passes(db, why, cap) || dump_db(db, &d, why, cap)) return -1;
  if (!strcmp(d.exact, e->before.exact)) {
    *st = ST_BEFORE;
  } else if (!strcmp(d.masked, e->after.masked)) {
    *st = ST_AFTER;
  } else {
    first_difference(d.masked, e->after.masked, diff, sizeof diff);
    snprintf(why, cap, "%s: the file is neither as before nor as after: %s", f->name, diff);
    dump_free(&d);
    return -1;
  }
  dump_free(&d);
  if (acked && *st != ST_AFTER) {
    snprintf(why, cap, "%s exited 0 but the file is as before", f->name);
    return -1;
  }
  return reader_agrees(db, why, cap);
}

/* Write the first n results of the T4 file from as the T4 file to. */
static int trim_t4(const char *from, const char *to, size_t n) {
  char *text = tk_gunzip(from, NULL);
  json_error_t je;
  json_t *j = text ? json_loads(text, 0, &je) : NULL, *res = json_object_get(j, "results");
  free(text);
  int rc = -1;
  if (json_array_size(res) > n) {
    while (json_array_size(res) > n) json_array_remove(res, json_array_size(res) - 1);
    rc = json_dump_file(j, to, JSON_COMPACT);
  }
  if (rc) fprintf(stderr, "test_faults: cannot write %s from %s\n", to, from);
  json_decref(j);
  return rc;
}

/* Make the fixtures: the base (gpu: pnpoly imported, pins v1 and v2, tag
** r1, v1 current again), the shard (gpu-b), and each command's expected
** result from an uninterrupted run. */
static int setup(void **state) {
  (void)state;
  if (find_rooftune("test_faults", rooftune, sizeof rooftune)) return -1;
  const char *m = getenv("ROOFTUNE_TEST_FAULT_ROUNDS"), *s = getenv("ROOFTUNE_TEST_FAULT_SEED");
  if (m && atoi(m) > 0) mult = atoi(m);
  if (s && *s) seed = strtoull(s, NULL, 10);
  printf("test_faults: seed %llu (ROOFTUNE_TEST_FAULT_SEED), rounds x%d (ROOFTUNE_TEST_FAULT_ROUNDS)\n",
         (unsigned long long)seed, mult);
  snprintf(dir, sizeof dir, "/tmp/rooftune-faults-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  char cache[128];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  setenv("ROOFTUNE_CACHE", cache, 1);   /* the compile cache of the tune rounds, shared */
  snprintf(t4, sizeof t4, "%s/pnpoly_T4.json", dir);
  if (trim_t4(T4, t4, T4_TRIALS)) return -1;
  snprintf(base, sizeof base, "%s/base.db", dir);
  snprintf(shard, sizeof shard, "%s/shard.db", dir);
  static const words make[] = {
    {{"db", "import", "--db", "@DB", "--t4", t4, "--space", T1, "--target", "gpu", NULL}},
    {{"db", "pin", "--db", "@DB", "--target", "gpu", "--kernel", "pnpoly", "--by", "faults", NULL}},
    {{"db", "pin", "--db", "@DB", "--target", "gpu", "--kernel", "pnpoly", "--trial", "5", "--by", "faults", NULL}},
    {{"db", "tag", "--db", "@DB", "--name", "r1", NULL}},
    {{"db", "rollback", "--db", "@DB", "--target", "gpu", "--kernel", "pnpoly", "--version", "1", NULL}},
    {{"db", "import", "--db", "@SHARD", "--t4", t4, "--space", T1, "--target", "gpu-b", NULL}},
  };
  child_opts quiet = {.fsize = -1};
  for (size_t i = 0; i < sizeof make / sizeof *make; i++) {
    const char *argv[32];
    expand(&make[i], base, NULL, argv);
    if (run_wait(argv, &quiet)) {
      fprintf(stderr, "test_faults: making the fixtures failed at step %zu\n", i);
      return -1;
    }
  }
  long long t = one_int(base, "SELECT id FROM trials WHERE status = 'ok' AND id NOT IN (SELECT trial_id FROM pins)"
                              " ORDER BY time DESC LIMIT 1");
  snprintf(pin_trial, sizeof pin_trial, "%lld", t);
  char why[2048];
  for (int i = 0; i < NOPS; i++) {
    expect *e = &expects[i];
    char folder[160], db[200], out[200];
    snprintf(folder, sizeof folder, "%s/ref-%d", dir, i);
    if (mkdir(folder, 0755)) return -1;
    snprintf(db, sizeof db, "%s/f.db", folder);
    snprintf(out, sizeof out, "%s/copy.db", folder);
    if (copy_bytes(base, db)) return -1;
    e->shard_bytes = file_hash(shard);
    if (dump_db(db, &e->before, why, sizeof why)) {
      fprintf(stderr, "%s\n", why);
      return -1;
    }
    const char *argv[32];
    expand(&ops[i].args, db, out, argv);
    double t0 = now();
    int rc = run_wait(argv, &quiet);
    e->seconds = now() - t0;
    if (rc || dump_db(ops[i].out ? out : db, &e->after, why, sizeof why)) {
      fprintf(stderr, "test_faults: %s (uninterrupted) failed: exit %d %s\n", ops[i].name, rc, rc ? "" : why);
      return -1;
    }
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < NOPS; i++) dump_free(&expects[i].before), dump_free(&expects[i].after);
  if (dir[0] && !getenv("ROOFTUNE_TEST_KEEP")) tk_rm_rf(dir);
  return 0;
}

/* ---- Killed at random moments ---- */

static void test_random_kills(void **state) {
  (void)state;
  rng = seed;
  for (int i = 0; i < NOPS; i++) {
    int count[3] = {0};
    int rounds = 4 * mult;
    for (int r = 0; r < rounds; r++) {
      char folder[160], db[200], out[200], why[4096];
      round_dir(folder, sizeof folder, ops[i].name, r);
      round_files(folder, db, out, sizeof db);
      const char *argv[32];
      expand(&ops[i].args, db, out, argv);
      double delay = uniform() * 1.2 * expects[i].seconds;
      child_opts quiet = {.fsize = -1};
      pid_t pid = start(argv, &quiet);
      struct timespec nap = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
      nanosleep(&nap, NULL);
      kill(pid, SIGKILL);
      int st;
      assert_int_equal(waitpid(pid, &st, 0), pid);
      fstate s;
      if (check_after(i, db, out, status_code(st), &s, why, sizeof why))
        fail_msg("%s killed after %.3f s (seed %llu, round %d): %s", ops[i].name, delay,
                 (unsigned long long)seed, r, why);
      count[s]++;
      tk_rm_rf(folder);
    }
    printf("  %-12s %d random kills in [0, %.2f s]: %d %s, %d %s, %d %s\n", ops[i].name, rounds,
           1.2 * expects[i].seconds, count[0], state_names[0], count[1], state_names[1], count[2],
           state_names[2]);
  }
}

/* ---- Killed at each system call that changes a file ---- */

static void test_kill_points(void **state) {
  (void)state;
  for (int i = 0; i < NOPS; i++) {
    char folder[160], db[200], out[200], why[4096], prefix[200];
    /* count the points of an uninterrupted traced run */
    round_dir(folder, sizeof folder, ops[i].name, 999);
    round_files(folder, db, out, sizeof db);
    snprintf(prefix, sizeof prefix, "%s/", folder);
    const char *argv[32];
    expand(&ops[i].args, db, out, argv);
    long total;
    static char kinds[1 << 16];
    int rc = run_kill_at(argv, prefix, 0, &total, kinds, sizeof kinds, NULL);
    if (rc == -1) {
      printf("  ptrace is not permitted here: no deterministic kill points\n");
      skip();
    }
    assert_int_equal(rc, 0);
    tk_rm_rf(folder);
    /* every point when there are few (48 x mult); else every name,
    ** truncation and sync, and an even spread of 16 x mult writes */
    long few = 48L * mult, spread = 16L * mult, chosen[1 << 12];
    int n = 0;
    for (long p = 1; p <= total && n < (int)(sizeof chosen / sizeof *chosen); p++)
      if (total <= few || (p < (long)sizeof kinds && kinds[p - 1] != 'w') ||
          (p - 1) % ((total + spread - 1) / spread) == 0)
        chosen[n++] = p;
    int count[3] = {0};
    for (int j = 0; j < n; j++) {
      round_dir(folder, sizeof folder, ops[i].name, j);
      round_files(folder, db, out, sizeof db);
      snprintf(prefix, sizeof prefix, "%s/", folder);
      expand(&ops[i].args, db, out, argv);
      long seen;
      rc = run_kill_at(argv, prefix, chosen[j], &seen, NULL, 0, NULL);
      fstate s;
      if (check_after(i, db, out, rc, &s, why, sizeof why))
        fail_msg("%s killed at file-changing system call %ld of %ld ('%c'): %s", ops[i].name, chosen[j], total,
                 chosen[j] < (long)sizeof kinds ? kinds[chosen[j] - 1] : '?', why);
      count[s]++;
      tk_rm_rf(folder);
    }
    int kc[4] = {0};   /* w s n t */
    for (const char *k = kinds; *k; k++) kc[*k == 'w' ? 0 : *k == 's' ? 1 : *k == 'n' ? 2 : 3]++;
    printf("  %-12s %ld points (%d writes, %d syncs, %d names, %d truncations%s%s), %d killed: %d %s, %d %s, "
           "%d %s\n", ops[i].name, total, kc[0], kc[1], kc[2], kc[3], total <= 48 ? ": " : "",
           total <= 48 ? kinds : "", n, count[0], state_names[0], count[1], state_names[1], count[2],
           state_names[2]);
  }
}


/* ---- tune ---- */

#define TUNE_BUDGET 6

/* A campaign on a tiny host workload; seed the strategy's. */
static void tune_argv(const char *db, const char *seed_text, const char **argv) {
  static const char *const w[] = {"tune", "--db", NULL, "--kernel", "reduction", "--set", "N=100000",
                                  "--strategy", "random", "--budget", "6", "--seed", NULL,
                                  "--time-cap", "0.05", NULL};
  int n = 0;
  argv[n++] = rooftune;
  for (int i = 0; w[i] || i == 2 || i == 12; i++) argv[n++] = i == 2 ? db : i == 12 ? seed_text : w[i];
  argv[n] = NULL;
}

/* The trials of path as lines, exact (NULL when they cannot be read
** within busy_ms: a writer holds the file). */
static char *trial_rows(const char *path, int busy_ms) {
  sqlite3 *h = NULL;
  sqlite3_stmt *st;
  rt_str s = {0};
  rt_str_printf(&s, "\n");
  int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL);
  if (rc == SQLITE_OK) sqlite3_busy_timeout(h, busy_ms);
  if (rc == SQLITE_OK && (rc = sqlite3_prepare_v2(h, "SELECT * FROM trials ORDER BY id", -1, &st, NULL)) == SQLITE_OK) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(st); i++) put_value(&s, st, i);
      rt_str_printf(&s, "\n");
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  if (rc != SQLITE_DONE) {
    free(s.s);
    return NULL;
  }
  return s.s;
}

/* Every line of seen (trial rows a reader saw committed) is in now. */
static int rows_kept(const char *seen, const char *now_rows, char *why, size_t cap) {
  for (const char *p = seen + 1; seen && *p;) {
    const char *e = strchr(p, '\n');
    char *line = strndup(p - 1, (size_t)(e - p) + 2);
    int there = strstr(now_rows, line) != NULL;
    if (!there) snprintf(why, cap, "a trial a reader saw committed is gone or changed: %.400s", line + 1);
    free(line);
    if (!there) return -1;
    p = e + 1;
  }
  return 0;
}

/* What a killed campaign left; *how says what was found and done. */
static int check_tune(const char *db, const char *seen, int rc, char *how, size_t hcap, char *why, size_t cap) {
  if (rc != 0 && rc != 128 + SIGKILL) {
    snprintf(why, cap, "tune: exit %d (neither done nor killed)", rc);
    return -1;
  }
  if (check_passes(db, why, cap)) return -1;
  char *rows = trial_rows(db, 10000);
  if (!rows) {
    snprintf(why, cap, "%s: cannot read its trials", db);
    return -1;
  }
  int bad = seen && rows_kept(seen, rows, why, cap);
  free(rows);
  if (bad) return -1;
  /* every stored trial complete */
  long long incomplete = one_int(db, "SELECT count(*) FROM trials WHERE status = 'ok' AND NOT (time > 0"
                                     " AND repeats >= 1 AND source_hash IS NOT NULL AND origin IN ('measured', 'reused'))");
  if (incomplete) {
    snprintf(why, cap, "%lld ok trials are incomplete", incomplete);
    return -1;
  }
  char msg[1024];
  rtdb *r;
  if ((rc = rtdb_open_msg(db, &r, msg, sizeof msg))) {
    snprintf(why, cap, "rtdb_open: %s: %s", rtdb_errstr(rc), msg);
    return -1;
  }
  rtdb_close(r);
  long long id = one_int(db, "SELECT max(id) FROM campaigns");
  long long done = one_int(db, "SELECT count(*) FROM campaigns WHERE state = 'done'");
  long long stored = one_int(db, "SELECT count(*) FROM trials");
  if (id == LLONG_MIN || done == LLONG_MIN) {
    snprintf(why, cap, "%s: cannot read its campaigns", db);
    return -1;
  }
  if (id <= 0) {   /* stopped before the campaign was stored: a new one runs */
    const char *argv[32];
    tune_argv(db, "1", argv);
    child_opts quiet = {.fsize = -1};
    if ((rc = run_wait(argv, &quiet))) {
      snprintf(why, cap, "a campaign after the first stopped before storing one: exit %d", rc);
      return -1;
    }
    snprintf(how, hcap, "no campaign stored; a new one ran");
  } else if (!done) {   /* resume it to its budget */
    char idt[32], out[1 << 16];
    snprintf(idt, sizeof idt, "%lld", id);
    rows = trial_rows(db, 10000);
    const char *argv[] = {rooftune, "tune", "--db", db, "--resume", idt, "--json", NULL};
    tk_io io = {.out = out, .cap = sizeof out, .both = -1};
    rc = tk_run(argv, &io);
    json_error_t je;
    json_t *j = rc ? NULL : json_loads(out, 0, &je);
    long long ev = json_integer_value(json_object_get(j, "evaluations"));
    json_decref(j);
    if (rc || ev != TUNE_BUDGET) {
      snprintf(why, cap, "tune --resume %lld: exit %d, %lld evaluations of %d: %.2000s", id, rc, ev, TUNE_BUDGET, out);
      free(rows);
      return -1;
    }
    char *after = trial_rows(db, 10000);
    bad = !after || rows_kept(rows, after, why, cap);
    free(rows);
    free(after);
    if (bad) return -1;
    snprintf(how, hcap, "resumed from %lld trials", stored);
  } else {
    snprintf(how, hcap, "done");
  }
  /* the campaign complete: its budget of distinct configurations, done,
  ** pinned once, the pin what the reader answers */
  long long n = one_int(db, "SELECT count(*) FROM trials"),
            distinct = one_int(db, "SELECT count(DISTINCT config) FROM trials"),
            state_done = one_int(db, "SELECT count(*) FROM campaigns WHERE state = 'done'"),
            pins = one_int(db, "SELECT count(*) FROM pins");
  if (n != TUNE_BUDGET || distinct != n || state_done != 1) {
    snprintf(why, cap, "after the campaign: %lld trials, %lld distinct configurations (budget %d), %lld campaigns done",
             n, distinct, TUNE_BUDGET, state_done);
    return -1;
  }
  if (pins != 1) {
    snprintf(why, cap, "the campaign was pinned %lld times", pins);
    return -1;
  }
  if ((rc = rtdb_open_msg(db, &r, msg, sizeof msg))) {
    snprintf(why, cap, "rtdb_open: %s: %s", rtdb_errstr(rc), msg);
    return -1;
  }
  rtdb_result res;
  rc = rtdb_lookup(r, "host", "reduction", "N=100000", NULL, &res);
  rtdb_close(r);
  sqlite3 *h = open_ro(db, why, cap);
  sqlite3_stmt *st;
  bad = !h || sqlite3_prepare_v2(h, "SELECT p.config, p.version FROM pin_current c JOIN pins p ON p.id = c.pin_id",
                                 -1, &st, NULL) != SQLITE_OK;
  if (!bad) {
    bad = sqlite3_step(st) != SQLITE_ROW || rc || res.match != RTDB_EXACT ||
          strcmp(res.config, (const char *)sqlite3_column_text(st, 0)) ||
          res.pin_version != sqlite3_column_int(st, 1);
    if (bad) snprintf(why, cap, "rtdb_lookup(host, reduction, N=100000): %s, match %d, %.500s", rtdb_errstr(rc),
                      (int)res.match, res.config);
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return bad ? -1 : 0;
}

/* A database for a campaign: made (acknowledged) before the round. */
static void tune_round(char *folder, size_t fcap, char *db, size_t dcap, int n) {
  round_dir(folder, fcap, "tune", n);
  snprintf(db, dcap, "%s/t.db", folder);
  const char *argv[] = {rooftune, "db", "init", "--db", db, NULL};
  child_opts quiet = {.fsize = -1};
  assert_int_equal(run_wait(argv, &quiet), 0);
}

static double tune_seconds;   /* an uninterrupted campaign's duration */

static void test_tune_random_kills(void **state) {
  (void)state;
  rng = seed ^ 0x70e;
  char folder[160], db[200], why[4096], how[128], seed_text[32];
  const char *argv[32];
  child_opts quiet = {.fsize = -1};
  /* an uninterrupted campaign: its duration (and a warm compile cache) */
  tune_round(folder, sizeof folder, db, sizeof db, 899);
  tune_argv(db, "1", argv);
  assert_int_equal(run_wait(argv, &quiet), 0);   /* the compile cache warm */
  tune_round(folder, sizeof folder, db, sizeof db, 900);
  double t0 = now();
  assert_int_equal(run_wait(argv, &quiet), 0);
  tune_seconds = now() - t0;
  if (check_tune(db, NULL, 0, how, sizeof how, why, sizeof why)) fail_msg("uninterrupted tune: %s", why);
  int rounds = 3 * mult;
  for (int r = 0; r < rounds; r++) {
    tune_round(folder, sizeof folder, db, sizeof db, r);
    snprintf(seed_text, sizeof seed_text, "%d", 1 + (int)(next_rand() % 1000));
    tune_argv(db, seed_text, argv);
    double delay = uniform() * 1.2 * tune_seconds, start_t = now();
    pid_t pid = start(argv, &quiet);
    char *seen = NULL;
    while (now() - start_t < delay) {   /* what a reader sees committed */
      nanosleep(&(struct timespec){0, 20000000}, NULL);
      char *rows = trial_rows(db, 20);
      if (rows) free(seen), seen = rows;
    }
    kill(pid, SIGKILL);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    int bad = check_tune(db, seen, status_code(st), how, sizeof how, why, sizeof why);
    free(seen);
    if (bad) fail_msg("tune --seed %s killed after %.3f s (test seed %llu, round %d): %s", seed_text, delay,
                      (unsigned long long)seed, r, why);
    printf("  tune --seed %-4s killed after %.2f s of %.2f: %s\n", seed_text, delay, tune_seconds, how);
    tk_rm_rf(folder);
  }
}

typedef struct snap_ctx { const char *db; char *seen; } snap_ctx;
static void snapshot(void *ctx, const char *path) {
  (void)path;
  snap_ctx *c = ctx;
  free(c->seen);
  c->seen = trial_rows(c->db, 50);   /* NULL when the stopped writer holds a lock */
}

/* The count run's view at each point where the writer appends to the
** -wal: the campaign's phase as a reader sees it committed ("" at other
** points: a reader opening the file while the stopped writer sets up the
** -shm would stall the writer). */
enum { MAXPOINTS = 4096 };
typedef struct phase_ctx { const char *db; long n; char phase[MAXPOINTS][48]; } phase_ctx;
static void phase(void *ctx, const char *path) {
  phase_ctx *c = ctx;
  sqlite3 *h = NULL;
  sqlite3_stmt *st;
  char *out = c->n < MAXPOINTS ? c->phase[c->n] : NULL;
  c->n++;
  if (!out) return;
  out[0] = 0;
  size_t n = strlen(path);
  if (n < 4 || strcmp(path + n - 4, "-wal")) return;
  if (sqlite3_open_v2(c->db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 50);
    if (sqlite3_prepare_v2(h, "SELECT (SELECT count(*) FROM campaigns), (SELECT count(*) FROM pins),"
                              " (SELECT group_concat(state || (report IS NOT NULL)) FROM campaigns)",
                           -1, &st, NULL) == SQLITE_OK) {
      if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(out, 48, "c%d p%d %s", sqlite3_column_int(st, 0), sqlite3_column_int(st, 1),
                 sqlite3_column_text(st, 2) ? (const char *)sqlite3_column_text(st, 2) : "");
      sqlite3_finalize(st);
    }
  }
  sqlite3_close(h);
}

static void test_tune_kill_points(void **state) {
  (void)state;
  char folder[160], db[200], why[4096], how[128], prefix[200];
  const char *argv[32];
  tune_round(folder, sizeof folder, db, sizeof db, 999);
  snprintf(prefix, sizeof prefix, "%s/", folder);
  tune_argv(db, "2", argv);
  long total;
  static phase_ctx pc;
  pc = (phase_ctx){.db = db};
  at_kill look = {phase, &pc};
  /* count the points, and see the campaign's phase at each (the hook
  ** runs at every point of a run killed at none) */
  int rc = run_kill_at(argv, prefix, 0, &total, NULL, 0, &look);
  if (rc == -1) {
    printf("  ptrace is not permitted here: no deterministic kill points\n");
    skip();
  }
  assert_int_equal(rc, 0);
  /* both sides of every change of phase (the campaign stored, pinned,
  ** its report, its end): at the system call that commits it and at the
  ** next,
  ** and an even spread of 6 x mult points over the trials */
  long chosen[64];
  int n = 0, spread = 6 * mult;
  const char *last = "";
  for (long p = 1; p <= total && p <= MAXPOINTS && n < 63; p++) {
    const char *ph = pc.phase[p - 1];
    int change = ph[0] && last[0] && strcmp(ph, last);
    if (ph[0]) last = ph;
    if (change && n && chosen[n - 1] == p - 1) chosen[n++] = p;
    else if (change) chosen[n++] = p - 1, chosen[n++] = p;
    else if ((p - 1) % ((total + spread - 1) / spread) == 0) chosen[n++] = p;
  }
  for (int j = 0; j < n; j++) {
    tune_round(folder, sizeof folder, db, sizeof db, j);
    snprintf(prefix, sizeof prefix, "%s/", folder);
    tune_argv(db, "2", argv);
    snap_ctx sc = {db, NULL};
    at_kill hook = {snapshot, &sc};
    long seen;
    rc = run_kill_at(argv, prefix, chosen[j], &seen, NULL, 0, &hook);
    int bad = check_tune(db, sc.seen, rc, how, sizeof how, why, sizeof why);
    free(sc.seen);
    if (bad) fail_msg("tune killed at file-changing system call %ld of about %ld: %s", chosen[j], total, why);
    printf("  tune killed at point %ld of about %ld: %s\n", chosen[j], total, how);
    tk_rm_rf(folder);
  }
}

/* ---- The experiments' copy while a writer has the file open ---- */

/* A WAL-mode file whose last import lives in its -wal (a reader's older
** snapshot keeps the checkpoint from moving it): experiments/lib.sh's
** `copy` must copy it whole. A byte copy of the main file (cp, as lib.sh
** did) loses the import. */
static void test_copy_while_written(void **state) {
  (void)state;
  char folder[160], src[200], dst[200], cp[200], out[200];
  round_dir(folder, sizeof folder, "live", 0);
  snprintf(src, sizeof src, "%s/src.db", folder);
  snprintf(dst, sizeof dst, "%s/dst.db", folder);
  snprintf(cp, sizeof cp, "%s/cp.db", folder);
  snprintf(out, sizeof out, "%s/out", folder);
  assert_int_equal(mkdir(out, 0755), 0);
  copy_file(base, src);
  sqlite3 *a, *b;   /* a keeps WAL mode; b holds a snapshot from before the import */
  assert_int_equal(sqlite3_open(src, &a), SQLITE_OK);
  assert_int_equal(sqlite3_exec(a, "PRAGMA journal_mode = WAL", NULL, NULL, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_open_v2(src, &b, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_exec(b, "BEGIN; SELECT count(*) FROM trials", NULL, NULL, NULL), SQLITE_OK);
  const char *imp[] = {rooftune, "db", "import", "--db", src, "--t4", t4, "--space", T1, "--target", "gpu-live", NULL};
  child_opts quiet = {.fsize = -1};
  assert_int_equal(run_wait(imp, &quiet), 0);   /* acknowledged */
  assert_true(exists_beside(src, "-wal"));
  /* what cp would have copied: the main file alone misses the import */
  copy_file(src, cp);
  assert_int_equal(one_int(cp, "SELECT count(*) FROM campaigns"), 1);
  /* lib.sh's copy, as an experiment runs it */
  const char *sh[] = {"sh", "-c", ". experiments/lib.sh && copy \"$1\" \"$2\"", "sh", src, dst, NULL};
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    setenv("ROOFTUNE", rooftune, 1);
    setenv("RT_OUT", out, 1);
    setenv("RT_NAME", "faults", 1);
    setenv("RT_ROOT", "/nonexistent-root", 1);
    execvp("sh", (char *const *)sh);
    _exit(127);
  }
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_int_equal(status_code(st), 0);
  char why[4096];
  if (check_passes(dst, why, sizeof why)) fail_msg("%s", why);
  assert_int_equal(one_int(dst, "SELECT count(*) FROM campaigns"), 2);
  assert_int_equal(one_int(dst, "SELECT count(*) FROM trials"), 2 * T4_TRIALS);
  dump x, y;
  if (dump_db(src, &x, why, sizeof why) || dump_db(dst, &y, why, sizeof why)) fail_msg("%s", why);
  assert_string_equal(x.exact, y.exact);
  dump_free(&x);
  dump_free(&y);
  assert_false(exists_beside(dst, "-wal"));
  unsigned char hdr[20];
  FILE *f = fopen(dst, "rb");
  assert_non_null(f);
  assert_int_equal(fread(hdr, 1, 20, f), 20);
  fclose(f);
  assert_int_equal(hdr[18], 1);   /* rollback-journal mode: readable anywhere */
  if (reader_agrees(dst, why, sizeof why)) fail_msg("%s", why);
  /* the command logged for the report */
  char logf[260], line[1024], want[700];
  snprintf(logf, sizeof logf, "%s/commands.txt", out);
  f = fopen(logf, "r");
  assert_non_null(f);
  snprintf(want, sizeof want, "rooftune db copy --db %s --out %s\n", src, dst);
  int found = 0;
  while (fgets(line, sizeof line, f)) found |= !strcmp(line, want);
  fclose(f);
  if (!found) fail_msg("commands.txt lacks \"%s\"", want);
  sqlite3_exec(b, "COMMIT", NULL, NULL, NULL);
  sqlite3_close(b);
  sqlite3_close(a);
  tk_rm_rf(folder);
}

/* A WAL-mode database nobody has open (as the committed experiment
** databases are) is copied without leaving a -wal or -shm beside it; a
** writer that changes it while the copy reads (the copy stopped at a write
** of its own, under ptrace) makes the copy read it again: the copy holds
** the writer's import. */
static int import_once_at;
static void import_into(void *ctx, const char *path) {
  (void)path;
  if (--import_once_at) return;
  const char *imp[] = {rooftune, "db", "import", "--db", ctx, "--t4", t4, "--space", T1, "--target", "gpu-mid", NULL};
  child_opts quiet = {.fsize = -1};
  assert_int_equal(run_wait(imp, &quiet), 0);
}

static void test_copy_quiet_source(void **state) {
  (void)state;
  char folder[160], src[200], dst[200], why[4096];
  round_dir(folder, sizeof folder, "quiet", 0);
  snprintf(src, sizeof src, "%s/src.db", folder);
  snprintf(dst, sizeof dst, "%s/dst.db", folder);
  copy_file(base, src);
  dump x, y;   /* of the file in rollback-journal mode: nothing made beside it */
  if (dump_db(src, &x, why, sizeof why)) fail_msg("%s", why);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(src, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, "PRAGMA journal_mode = WAL", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  assert_false(exists_beside(src, "-wal") || exists_beside(src, "-shm"));
  uint64_t bytes = file_hash(src);
  const char *argv[] = {rooftune, "db", "copy", "--db", src, "--out", dst, NULL};
  child_opts quiet = {.fsize = -1};
  assert_int_equal(run_wait(argv, &quiet), 0);
  assert_false(exists_beside(src, "-wal") || exists_beside(src, "-shm"));
  assert_true(file_hash(src) == bytes);
  if (dump_db(dst, &y, why, sizeof why)) fail_msg("%s", why);
  assert_string_equal(x.exact, y.exact);
  dump_free(&x);
  dump_free(&y);
  /* a writer while the copy reads */
  assert_int_equal(unlink(dst), 0);
  char prefix[200];
  snprintf(prefix, sizeof prefix, "%s/dst", folder);
  import_once_at = 3;
  at_kill hook = {import_into, src};
  long points;
  int rc = run_kill_at(argv, prefix, 0, &points, NULL, 0, &hook);
  if (rc == -1) {
    printf("  ptrace is not permitted here: no writer in the middle of a copy\n");
    skip();
  }
  assert_int_equal(rc, 0);
  assert_true(points >= 3);
  assert_int_equal(one_int(dst, "SELECT count(*) FROM campaigns"), 2);
  if (dump_db(src, &x, why, sizeof why) || dump_db(dst, &y, why, sizeof why)) fail_msg("%s", why);
  assert_string_equal(x.exact, y.exact);
  dump_free(&x);
  dump_free(&y);
  if (check_passes(dst, why, sizeof why)) fail_msg("%s", why);
  tk_rm_rf(folder);
}

/* ---- I/O errors: a file-size limit and a full disk ---- */

/* What a command must do when its writes fail: exit 0 (then the file is
** as after) or 1 with an error naming the command (then as before); the
** file checks and reads either way; run again with room (fill, when
** given, removed first), it succeeds. */
static int io_error_case(int op, const char *db, const char *out, long long fsize, const char *fill,
                         fstate *stp, char *why, size_t cap) {
  const char *argv[32];
  expand(&ops[op].args, db, out, argv);
  int fd[2];
  if (pipe(fd)) {
    snprintf(why, cap, "pipe: %s", strerror(errno));
    return -1;
  }
  child_opts o = {.fsize = fsize, .out = fd[1]};
  pid_t pid = start(argv, &o);
  close(fd[1]);
  char msg[4096];
  size_t n = 0;
  for (ssize_t k; (k = read(fd[0], msg + n, sizeof msg - 1 - n)) > 0;) n += (size_t)k;
  msg[n] = 0;
  close(fd[0]);
  int wst;
  waitpid(pid, &wst, 0);
  int rc = status_code(wst);
  if (getenv("ROOFTUNE_TEST_SHOW")) printf("    %s (%lld): exit %d: %s", ops[op].name, fsize, rc, msg);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "rooftune %s: ", ops[op].name);
  if (rc != 0 && (rc != 1 || !strstr(msg, prefix) || strstr(msg, "not an error"))) {
    snprintf(why, cap, "%s with writes failing: exit %d, said: %.1500s", ops[op].name, rc, msg);
    return -1;
  }
  /* the same checks as after a kill, for a command that exited 1 */
  fstate st;
  if (check_after(op, db, out, rc == 0 ? 0 : 128 + SIGKILL, &st, why, cap)) return -1;
  if (rc && st == ST_AFTER) {
    snprintf(why, cap, "%s failed (%.500s) but its change is there", ops[op].name, msg);
    return -1;
  }
  *stp = st;
  if (fill) unlink(fill);   /* room again */
  if (rc) {   /* it works now, and leaves what it should */
    child_opts quiet = {.fsize = -1};
    int again = run_wait(argv, &quiet);
    if (again) {
      snprintf(why, cap, "%s, run again with room: exit %d", ops[op].name, again);
      return -1;
    }
    if (check_after(op, db, out, again, &st, why, cap)) return -1;
  }
  return 0;
}

/* Writes beyond fsize bytes of any file fail with EFBIG (RLIMIT_FSIZE):
** 0 (nothing can be written), a few pages, a few dozen. */
static void test_file_size_limit(void **state) {
  (void)state;
  static const long long limits[] = {0, 12 * 1024, 48 * 1024};
  for (int i = 0; i < NOPS; i++) {
    int count[3] = {0};
    for (size_t l = 0; l < sizeof limits / sizeof *limits; l++) {
      char folder[160], db[200], out[200], why[4096];
      round_dir(folder, sizeof folder, ops[i].name, 500 + (int)l);
      round_files(folder, db, out, sizeof db);
      fstate st;
      if (io_error_case(i, db, out, limits[l], NULL, &st, why, sizeof why))
        fail_msg("file size limit %lld: %s", limits[l], why);
      count[st]++;
      tk_rm_rf(folder);
    }
    printf("  %-12s file-size limits 0, 12 KiB, 48 KiB: failed cleanly %d, done %d\n", ops[i].name,
           count[ST_BEFORE] + count[ST_ABSENT], count[ST_AFTER]);
  }
}

/* Fill the file system of path with path, then give back room bytes. */
static int fill_disk(const char *path, long room) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  static char zero[4096];
  off_t size = 0;
  ssize_t k;
  while (fd >= 0 && (k = write(fd, zero, sizeof zero)) > 0) size += k;
  int bad = fd < 0 || errno != ENOSPC || ftruncate(fd, size > room ? size - room : 0);
  if (fd >= 0) close(fd);
  return bad ? -1 : 0;
}

/* A full disk: a 2 MiB tmpfs, mounted in a mount namespace of a child,
** filled up but for `room` bytes before each command. */
static int full_disk_child(void) {
  if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
    printf("  no private mount namespace here (%s): a full disk is not tested\n", strerror(errno));
    return SKIPPED;
  }
  char mnt[160];
  snprintf(mnt, sizeof mnt, "%s/full", dir);
  if (mount("tmpfs", mnt, "tmpfs", 0, "size=2m")) {
    printf("  cannot mount a tmpfs (%s): a full disk is not tested\n", strerror(errno));
    return SKIPPED;
  }
  static const long rooms[] = {0, 40 * 1024};
  for (int i = 0; i < NOPS; i++) {
    int count[3] = {0};
    for (size_t r = 0; r < sizeof rooms / sizeof *rooms; r++) {
      char db[200], out[200], fill[200], why[4096];
      snprintf(db, sizeof db, "%s/f.db", mnt);
      snprintf(out, sizeof out, "%s/copy.db", mnt);
      snprintf(fill, sizeof fill, "%s/fill", mnt);
      if (copy_bytes(base, db)) {
        printf("%s: cannot copy the base there\n", ops[i].name);
        return 1;
      }
      if (fill_disk(fill, rooms[r])) {
        printf("cannot fill the tmpfs: %s\n", strerror(errno));
        return 1;
      }
      fstate st;
      if (io_error_case(i, db, out, -1, fill, &st, why, sizeof why)) {
        printf("full disk, %ld bytes free: %s\n", rooms[r], why);
        return 1;
      }
      count[st]++;
      unlink(db);
      unlink(out);
      char side[220];
      static const char *const sfx[] = {"-wal", "-shm", "-journal"};
      for (int j = 0; j < 3; j++) {
        snprintf(side, sizeof side, "%s%s", db, sfx[j]);
        unlink(side);
      }
    }
    printf("  %-12s full disk (0 and 40 KiB free): failed cleanly %d, done %d\n", ops[i].name,
           count[ST_BEFORE] + count[ST_ABSENT], count[ST_AFTER]);
  }
  /* a campaign: fails naming itself (or finishes); with room, --resume
  ** completes it */
  static const long tune_rooms[] = {0, 96 * 1024, 160 * 1024};
  for (size_t r = 0; r < sizeof tune_rooms / sizeof *tune_rooms; r++) {
    char db[200], fill[200], why[4096], how[128], out[4096];
    snprintf(db, sizeof db, "%s/t.db", mnt);
    snprintf(fill, sizeof fill, "%s/fill", mnt);
    const char *init[] = {rooftune, "db", "init", "--db", db, NULL}, *argv[32];
    child_opts quiet = {.fsize = -1};
    if (run_wait(init, &quiet) || fill_disk(fill, tune_rooms[r])) {
      printf("cannot set up a campaign on a full disk: %s\n", strerror(errno));
      return 1;
    }
    tune_argv(db, "3", argv);
    tk_io io = {.out = out, .cap = sizeof out, .both = 1};
    int rc = tk_run(argv, &io);
    unlink(fill);
    if ((rc != 0 && (rc != 1 || !strstr(out, "rooftune tune: "))) ||
        check_tune(db, NULL, rc ? 128 + SIGKILL : 0, how, sizeof how, why, sizeof why)) {
      printf("tune on a full disk (%ld bytes free): exit %d: %.1000s\n%s\n", tune_rooms[r], rc, out, rc ? why : "");
      return 1;
    }
    if (getenv("ROOFTUNE_TEST_SHOW")) printf("    tune: exit %d: %s", rc, strstr(out, "rooftune tune: ") ? strstr(out, "rooftune tune: ") : "\n");
    printf("  tune         full disk, %ld bytes free: exit %d, then %s\n", tune_rooms[r], rc, how);
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    for (int j = 0; j < 4; j++) {
      char side[220];
      snprintf(side, sizeof side, "%s%s", db, sfx[j]);
      unlink(side);
    }
  }
  return 0;
}

static void test_full_disk(void **state) {
  (void)state;
  char mnt[160];
  snprintf(mnt, sizeof mnt, "%s/full", dir);
  assert_int_equal(mkdir(mnt, 0755), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int rc = full_disk_child();
    fflush(NULL);
    _exit(rc);
  }
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  if (status_code(st) == SKIPPED) skip();
  assert_int_equal(status_code(st), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_random_kills),
    cmocka_unit_test(test_kill_points),
    cmocka_unit_test(test_tune_random_kills),
    cmocka_unit_test(test_tune_kill_points),
    cmocka_unit_test(test_copy_while_written),
    cmocka_unit_test(test_copy_quiet_source),
    cmocka_unit_test(test_file_size_limit),
    cmocka_unit_test(test_full_disk),
  };
  const char *only = getenv("ROOFTUNE_TEST_ONLY");   /* a test's name (cmocka's pattern) */
  if (only && *only) cmocka_set_test_filter(only);
  return cmocka_run_group_tests_name("faults", tests, setup, teardown);
}
