/*
** ms_isolate.c -- what keeps a candidate inside its own buffers, beyond
** the clean child rt_fork makes (common/rt.h: no inherited descriptor, no
** shared writable mapping, dies with rooftune):
**   - the sandbox: a host worker that runs foreign code restricts itself
**     with Landlock before it loads the candidate: no file may be opened
**     for writing, created, removed, renamed or truncated anywhere, no TCP
**     bind or connect (ABI 4), no signal to a process outside the worker
**     and no abstract UNIX socket (ABI 6); reading stays allowed (the
**     candidate's libraries, /proc, /sys). Kernels without Landlock
**     (before 5.13, gVisor) run the worker without it;
**     ROOFTUNE_SANDBOX=off turns it off (to debug a candidate that writes
**     files);
**   - the report's seal: a magic number and a hash over the report, so
**     that bytes a candidate wrote into the harness's pipe can never be
**     read as a result (they become runtime_error, never "unknown"), and
**     its sending (ms__send_item);
**   - the database guard: the fields of a SQLite header that no
**     legitimate write changes, and the file's identity, compared before
**     and after each worker (ms_opts.guard). A header destroyed through a
**     path the sandbox did not cover stops the campaign at once. Checking
**     the whole file per trial would cost a read of the database; a stat
**     comparison would misfire on the checkpoints of other processes
**     writing the same database legitimately.
*/
#include "ms.h"
#include "ms_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- the sandbox (Landlock; the constants of its stable ABI, which
** Debian 12's kernel headers predate in part) ---- */

#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_ALL (0x7fULL << 6)   /* char, dir, reg, sock, fifo, block, sym */
#define LL_FS_REFER (1ULL << 13)        /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)     /* ABI 3 */
#define LL_NET_BIND_TCP (1ULL << 0)     /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0)   /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)
#define LL_VERSION (1U << 0)            /* LANDLOCK_CREATE_RULESET_VERSION */

struct ll_attr {
  uint64_t fs, net, scoped;
};

static int sandbox_off(void) {
  const char *e = getenv("ROOFTUNE_SANDBOX");
  return e && (!strcmp(e, "0") || !strcasecmp(e, "off") || !strcasecmp(e, "no"));
}

int ms_sandbox_available(const char **why) {
  static char reason[160];
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_VERSION);
  if (abi < 1)
    snprintf(reason, sizeof reason, "Landlock is not available in this kernel (%s)",
             errno == ENOSYS ? "no such system call" :
             errno == EOPNOTSUPP ? "disabled at boot" : strerror(errno));
  else if (sandbox_off())
    snprintf(reason, sizeof reason, "ROOFTUNE_SANDBOX=%s", getenv("ROOFTUNE_SANDBOX"));
  else
    reason[0] = 0;
  if (why) *why = reason;
  return !reason[0];
}

int ms__sandbox(char *msg, size_t cap) {
  if (sandbox_off()) return 0;
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_VERSION);
  if (abi < 1) return 0;   /* not here: the guard and the closed descriptors remain */
  struct ll_attr a = {.fs = LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_ALL};
  size_t size = 8;
  if (abi >= 2) a.fs |= LL_FS_REFER;
  if (abi >= 3) a.fs |= LL_FS_TRUNCATE;
  if (abi >= 4) a.net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP, size = 16;
  if (abi >= 6) a.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL, size = 24;
  int fd = (int)syscall(SYS_landlock_create_ruleset, &a, size, 0);
  if (fd < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
      syscall(SYS_landlock_restrict_self, fd, 0)) {
    snprintf(msg, cap, "harness: cannot enter the Landlock sandbox (ABI %ld): %s", abi,
             strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
  }
  close(fd);
  return 0;
}

/* ---- the report's seal ---- */

#define REPORT_MAGIC 0x52545750u   /* "RTWP" */

static uint64_t report_hash(const ms__report *r) {
  ms__report c = *r;
  c.check = 0;
  rt_hash h = rt_hash_bytes(RT_HASH_INIT, &c, sizeof c);
  return (uint64_t)h ^ (uint64_t)(h >> 64);
}

void ms__seal(ms__report *r) {
  r->magic = REPORT_MAGIC;
  r->msg[sizeof r->msg - 1] = 0;
  r->check = report_hash(r);
}

int ms__unseal(ms__report *r) {
  if (r->magic != REPORT_MAGIC || r->check != report_hash(r) || r->status < MS_OK ||
      r->status > MS_INVALID) {
    memset(r, 0, sizeof *r);
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "harness: the worker's report is garbled (the candidate "
             "wrote into the harness's pipe?)");
    return -1;
  }
  r->msg[sizeof r->msg - 1] = 0;
  return 0;
}

/* Seal rep and write it whole (ms__send, ms__run_batch's children). */
int ms__send_item(int fd, ms__report *rep) {
  ms__seal(rep);
  return rt_write_all(fd, rep, sizeof *rep);
}

/* ---- the database guard ---- */

/* Header bytes of a SQLite database that no legitimate write changes:
** magic and page size (0-17), reserved space and payload fractions
** (20-23), schema format (44-47), text encoding (56-59), incremental
** vacuum, application id and the reserved zeros (64-91). Not the format
** versions (18-19): they say WAL or rollback journal, and rooftune's own
** writers switch that on open and close (db/db.c), another process's
** included. */
static const struct { int off, len; } fixed[] = {{0, 18}, {20, 4}, {44, 4}, {56, 4}, {64, 28}};

/* The header is read through a descriptor opened once per file and never
** closed: closing any descriptor of a file drops every POSIX lock this
** process holds on it, SQLite's included, and another process's SQLite
** then took itself for the last connection and deleted the WAL file under
** the campaign's (a `sqlite3` shell reading a live campaign's database did
** it). A file replaced since (another inode: none of our locks) is read
** by an open and close of its own. The harness's parent is one thread. */
static struct { dev_t dev; ino_t ino; int fd; } kept[8];
static int nkept;

static int header_fd(const char *path, const struct stat *sb, int *transient) {
  *transient = 0;
  for (int i = 0; i < nkept; i++)
    if (kept[i].dev == sb->st_dev && kept[i].ino == sb->st_ino) return kept[i].fd;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat fb;
  if (fd < 0 || fstat(fd, &fb) || fb.st_dev != sb->st_dev || fb.st_ino != sb->st_ino ||
      nkept == (int)(sizeof kept / sizeof *kept)) {
    *transient = fd >= 0;
    return fd;
  }
  kept[nkept].dev = fb.st_dev, kept[nkept].ino = fb.st_ino, kept[nkept].fd = fd;
  nkept++;
  return fd;
}

void ms__guard_take(const char *path, ms__guard *g) {
  memset(g, 0, sizeof *g);
  struct stat sb;
  if (!path || stat(path, &sb)) return;
  int transient, fd = header_fd(path, &sb, &transient);
  int ok = fd >= 0 && pread(fd, g->head, sizeof g->head, 0) == (ssize_t)sizeof g->head;
  if (transient) close(fd);
  if (!ok) return;   /* no complete header: nothing to guard */
  g->dev = sb.st_dev, g->ino = sb.st_ino;
  g->valid = 1;
}

int ms__guard_check(const char *path, const ms__guard *before, char *msg, size_t cap) {
  if (!before->valid) return 0;
  ms__guard now;
  ms__guard_take(path, &now);
  const char *what = NULL;
  if (!now.valid) what = "removed it or cut it short";
  else if (now.dev != before->dev || now.ino != before->ino) what = "replaced it";
  for (size_t i = 0; !what && i < sizeof fixed / sizeof *fixed; i++)
    if (memcmp(now.head + fixed[i].off, before->head + fixed[i].off, (size_t)fixed[i].len))
      what = "overwrote its header";
  if (!what) return 0;
  snprintf(msg, cap, "the database %.200s changed while a candidate ran (something %s): "
           "stopping; check it with rooftune db check", path, what);
  return -1;
}
