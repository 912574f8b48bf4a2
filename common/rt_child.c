/*
** rt_child.c -- the one way rooftune forks a child process (rt.h, "Child
** processes"): the child dies with rooftune (PR_SET_PDEATHSIG, checked
** against the parent's pid saved before fork), leads a process group of
** its own that the parent kills whole, starts with stdin on /dev/null and
** no descriptor but stdout, stderr and the ones it is given (close_range,
** else /proc/self/fd), default signal dispositions, no core dumps, and on
** request without the shared writable memory maps it inherited. The parent
** keeps a table of its live children so that every exit path (atexit, the
** signal handlers that call rt_child_kill_all) can kill their groups.
*/
#include "rt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the table of live children (the parent's) ---- */

#define MAX_KIDS 256
static volatile sig_atomic_t kids[MAX_KIDS];   /* pids; 0: free slot */
static int exit_hook;

static void remember(pid_t pid) {
  for (int i = 0; i < MAX_KIDS; i++)
    if (!kids[i]) {
      kids[i] = pid;
      return;
    }
  /* Full: the child still dies with rooftune (PR_SET_PDEATHSIG). */
}

static void forget(pid_t pid) {
  for (int i = 0; i < MAX_KIDS; i++)
    if (kids[i] == pid) kids[i] = 0;
}

void rt_child_kill_all(void) {
  int saved = errno;
  for (int i = 0; i < MAX_KIDS; i++) {
    pid_t pid = kids[i];
    if (!pid) continue;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  for (int i = 0; i < MAX_KIDS; i++) {
    pid_t pid = kids[i];
    if (!pid) continue;
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    kids[i] = 0;
  }
  errno = saved;
}

/* ---- the child's side ---- */

/* Close every descriptor from lo to hi (inclusive). */
static void close_span(unsigned lo, unsigned hi) {
  if (lo > hi) return;
  if (close_range(lo, hi, 0) == 0) return;
  /* No close_range (Linux < 5.9, some sandboxes): the open ones by name. */
  int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    char buf[4096];
    long n;
    int found[512], nf = 0, more = 1;
    while (more) {   /* collect, then close: closing while reading is unsafe */
      more = 0;
      nf = 0;
      lseek(dfd, 0, SEEK_SET);
      while ((n = syscall(SYS_getdents64, dfd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < n;) {
          struct dirent64 *d = (struct dirent64 *)(buf + off);
          off += d->d_reclen;
          char *end;
          long fd = strtol(d->d_name, &end, 10);
          if (*end || end == d->d_name || fd == dfd || fd < (long)lo || fd > (long)hi) continue;
          if (nf < (int)(sizeof found / sizeof *found)) found[nf++] = (int)fd;
          else more = 1;
        }
      }
      for (int i = 0; i < nf; i++) close(found[i]);
    }
    close(dfd);
    return;
  }
  /* No /proc either: every number up to the descriptor limit. */
  struct rlimit rl;
  unsigned top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
                         rl.rlim_cur < (1u << 20) ? (unsigned)rl.rlim_cur : (1u << 20);
  for (unsigned fd = lo; fd <= hi && fd < top; fd++) close((int)fd);
}

/* Keep keep[0..n-1] (renumbered above 2 when they sit on 0..2), stdin on
** /dev/null, stdout and stderr as they are; close everything else. */
static void only_these(int *keep, int n) {
  int nul = open("/dev/null", O_RDWR);
  for (int i = 0; i < n; i++)
    if (keep[i] >= 0 && keep[i] < 3) {   /* rooftune started without stdio */
      int moved = fcntl(keep[i], F_DUPFD, 3);
      if (moved < 0) _exit(126);
      if (nul < 0 || dup2(nul, keep[i]) < 0) close(keep[i]);   /* not stdio any more */
      keep[i] = moved;
    }
  if (nul >= 0 && nul != 0) dup2(nul, 0);
  if (nul > 2) close(nul);
  int sorted[16], ns = 0;
  for (int i = 0; i < n && ns < 16; i++) {
    int k = keep[i], j = ns++;
    for (; j > 0 && sorted[j - 1] > k; j--) sorted[j] = sorted[j - 1];
    sorted[j] = k;
  }
  unsigned lo = 3;
  for (int i = 0; i < ns; i++) {
    if (sorted[i] < 3) continue;
    if ((unsigned)sorted[i] > lo) close_span(lo, (unsigned)sorted[i] - 1);
    if ((unsigned)sorted[i] + 1 > lo) lo = (unsigned)sorted[i] + 1;
  }
  close_span(lo, ~0U);
}

/* Unmap every shared writable mapping (SQLite's -shm wal-index, a
** database mapped with mmap_size): writes there would reach the file. */
static void unmap_shared(void) {
  for (int pass = 0; pass < 8; pass++) {
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct { unsigned long lo, hi; } span[64];
    int ns = 0, full = 0;
    char buf[8192], line[512];
    size_t ll = 0;
    ssize_t k;
    while ((k = read(fd, buf, sizeof buf)) > 0)
      for (ssize_t i = 0; i < k; i++) {
        if (buf[i] != '\n') {
          if (ll < sizeof line - 1) line[ll++] = buf[i];
          continue;
        }
        line[ll] = 0;
        ll = 0;
        char *p = line, *end;
        unsigned long lo = strtoul(p, &end, 16);
        if (*end != '-') continue;
        unsigned long hi = strtoul(end + 1, &p, 16);
        if (*p != ' ' || strlen(p) < 5) continue;
        if (p[2] == 'w' && p[4] == 's') {
          if (ns < 64) span[ns].lo = lo, span[ns++].hi = hi;
          else full = 1;
        }
      }
    close(fd);
    for (int i = 0; i < ns; i++) munmap((void *)span[i].lo, span[i].hi - span[i].lo);
    if (!full) return;
  }
}

static void child_setup(pid_t parent, int flags, int *keep, int nkeep) {
  /* 1. die with the parent; it may have died before prctl took effect */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent) _exit(126);
  /* 2. a process group of its own (the parent does the same) */
  setpgid(0, 0);
  /* the parent's table is not the child's */
  for (int i = 0; i < MAX_KIDS; i++) kids[i] = 0;
  /* 4. default signals, none blocked, no core files */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < SIGRTMIN; s++)
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  struct rlimit nocore = {0, 0};
  setrlimit(RLIMIT_CORE, &nocore);
  /* 3. only the descriptors it needs */
  if (flags & RT_CHILD_STDOUT_TO_STDERR) dup2(2, 1);
  only_these(keep, nkeep);
  /* 5. */
  if (flags & RT_CHILD_UNMAP_SHARED) unmap_shared();
}

/* ---- the parent's side ---- */

pid_t rt_fork(int flags, int *keep, int nkeep) {
  if (nkeep < 0 || nkeep > 16) {
    errno = EINVAL;
    return -1;
  }
  if (!exit_hook) {
    exit_hook = 1;
    atexit(rt_child_kill_all);
  }
  fflush(NULL);
  pid_t parent = getpid(), pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    child_setup(parent, flags, keep, nkeep);
    return 0;
  }
  setpgid(pid, pid);   /* also done by the child: kill(-pid) never races */
  remember(pid);
  return pid;
}

pid_t rt_child_wait(pid_t pid, int *status, int options) {
  int st = 0;
  pid_t r;
  while ((r = waitpid(pid, &st, options)) < 0 && errno == EINTR) {}
  if (r > 0) {
    forget(r);
    if (status) *status = st;
  }
  return r;
}

int rt_child_kill(pid_t pid) {
  if (pid <= 0) return -1;
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);   /* in case it had not made its group yet */
  int st = -1;
  if (rt_child_wait(pid, &st, 0) != pid) forget(pid);
  return st;
}

int rt_capture(char *const *argv, int with_stderr, size_t cap, rt_str *out) {
  int fd[2];
  if (pipe2(fd, O_CLOEXEC)) {
    rt_str_printf(out, "pipe: %s\n", strerror(errno));
    return -1;
  }
  int keep[1] = {fd[1]};
  pid_t pid = rt_fork(0, keep, 1);
  if (pid < 0) {
    rt_str_printf(out, "fork: %s\n", strerror(errno));
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(keep[0], 1);
    if (with_stderr) dup2(keep[0], 2);
    else {
      int nul = open("/dev/null", O_WRONLY);
      if (nul >= 0) dup2(nul, 2);
    }
    execvp(argv[0], argv);
    dprintf(with_stderr ? 1 : 2, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(fd[1]);
  char buf[4096];
  size_t kept = 0;
  ssize_t k;
  rt_str_printf(out, "%s", "");
  while ((k = read(fd[0], buf, sizeof buf)) != 0) {
    if (k < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (kept < cap) {
      size_t take = (size_t)k < cap - kept ? (size_t)k : cap - kept;
      rt_str_printf(out, "%.*s", (int)take, buf);
      kept += take;
      if (kept == cap) rt_str_printf(out, "\n... (truncated)\n");
    }
  }
  close(fd[0]);
  int st;
  return rt_child_wait(pid, &st, 0) == pid ? st : -1;
}

int rt_write_all(int fd, const void *p, size_t n) {
  for (size_t off = 0; off < n;) {
    ssize_t k = write(fd, (const char *)p + off, n - off);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    off += (size_t)k;
  }
  return 0;
}
