/*
** test_isolation.c -- a kernel under test reaches nothing but its own
** buffers, no process rooftune forks outlives it, and workload sizes are
** checked before anything is allocated (issue 16, items 3, 4 and 6).
**   (1) rt_fork's child (common/rt.h) checked from inside: descriptors,
**       stdin, stdout, death signal, process group, shared mappings, core
**       limit; rt_child_kill_all ends a whole group.
**   (2) hostile candidates run by the real program: a kernel that looks
**       for open descriptors, writes to every one of them and opens the
**       database by its path finds nothing but its pipe, and the database
**       stays whole (db check, trial count); without the sandbox the guard
**       stops `tune` when the database header is overwritten; bytes written
**       into the harness's pipe give runtime_error, never "unknown", and
**       --json output stays JSON.
**   (3) orphans: SIGKILL of `measure`, and two Ctrl-C to `tune`, while the
**       worker spins: every child of rooftune ends (this process is their
**       subreaper, so a survivor would be found, and is killed).
**   (4) sizes: the reproductions exit 1 with a message naming the
**       variable and the limit; every kernel of every target declares
**       exactly the variables that size its buffers (checked against
**       perturbing each one); ROOFTUNE_MEM_LIMIT is parsed and applied.
** The hostile candidates are the kernels' own generated code with a header
** forced in through $CC ("cc -include FILE"): the header renames the
** candidate's rk_run and puts its own in front of it.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../measure/ms.h"
#include "../targets/tg.h"
#include "tk_exe.h"
#include "tk_run.h"

extern char **environ;

static char rooftune[4096], dir[64];

/* ---- running rooftune with extra environment ---- */

typedef tk_result result;

/* envp = environ with the NAME=VALUE entries of env (NULL-terminated)
** replacing or adding theirs. */
static char **with_env(const char *const *env) {
  size_t n = 0, m = 0;
  while (environ[n]) n++;
  while (env && env[m]) m++;
  char **e = calloc(n + m + 1, sizeof *e);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    int replaced = 0;
    for (size_t j = 0; j < m; j++) {
      size_t len = strcspn(env[j], "=") + 1;
      replaced |= !strncmp(environ[i], env[j], len);
    }
    if (!replaced) e[k++] = environ[i];
  }
  for (size_t j = 0; j < m; j++) e[k++] = (char *)env[j];
  return e;
}

/* Start rooftune argv (argv[0] is its first argument) with env; stdout
** and stderr into the files *out, *err (-1: /dev/null). */
static pid_t start(const char *const *env, const char *const *argv, int out, int err) {
  const char *av[64] = {rooftune};
  int n = 1;
  for (; argv[n - 1] && n < 63; n++) av[n] = argv[n - 1];
  av[n] = NULL;
  char **e = with_env(env);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int nul = open("/dev/null", O_RDWR);
    dup2(out >= 0 ? out : nul, 1);
    dup2(err >= 0 ? err : nul, 2);
    execve(rooftune, (char *const *)av, e);
    _exit(127);
  }
  free(e);
  return pid;
}

static int exit_code(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st); }

static result run(const char *const *env, const char *const *argv) {
  const char *av[64] = {rooftune};
  int n = 1;
  for (; argv[n - 1] && n < 63; n++) av[n] = argv[n - 1];
  av[n] = NULL;
  return tk_capture(av, NULL, env);
}

static void done(result *r) { tk_result_free(r); }

static void must_contain(const result *r, const char *what) {
  if (!strstr(r->err, what) && !strstr(r->out, what))
    fail_msg("expected '%s' in the output; stdout:\n%s\nstderr:\n%s", what, r->out, r->err);
}

/* A file in the test's folder, with text. */
static const char *put(const char *name, const char *text) {
  static char path[8][160];
  static int next;
  char *p = path[next++ % 8];
  snprintf(p, sizeof path[0], "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return p;
}

static long long db_int(const char *db, const char *sql) {
  sqlite3 *h;
  long long v = -1;
  if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
      v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
  }
  sqlite3_close(h);
  return v;
}

/* ---- hostile candidates: a header forced in front of the generated code ---- */

/* The candidate's own rk_run is renamed; HOSTILE(bufs) runs first and
** returns nonzero to fail, else the candidate computes. */
#define HOSTILE_HEAD                                                              \
  "#include <errno.h>\n#include <fcntl.h>\n#include <string.h>\n"                 \
  "#include <sys/stat.h>\n#include <unistd.h>\n"                                  \
  "#define rk_run rk_run_candidate\n"                                             \
  "int rk_run_candidate(float *const *bufs);\n"                                   \
  "static int hostile(void);\n"                                                   \
  "int hostile_rk_run(float *const *bufs) __asm__(\"rk_run\");\n"                 \
  "int hostile_rk_run(float *const *bufs) {\n"                                    \
  "  int bad = hostile();\n"                                                      \
  "  return bad ? bad : rk_run_candidate(bufs);\n}\n"

/* The environment that forces header h into every candidate, with a
** compile cache of the test's own. */
static const char *const *hostile_env(const char *h, const char *extra) {
  static char cc[256], cache[160];
  static const char *env[4];
  snprintf(cc, sizeof cc, "CC=cc -include %s", h);
  snprintf(cache, sizeof cache, "ROOFTUNE_CACHE=%s/cache", dir);
  env[0] = cc, env[1] = cache, env[2] = extra, env[3] = NULL;
  return env;
}

/* Looks for open descriptors (only its report pipe may be there), writes
** to each, opens the database and its -wal and -shm for writing (refused
** where the sandbox exists): returns 10 for a descriptor other than one
** pipe, 20 when a database file opened. */
static const char fd_probe[] =
    HOSTILE_HEAD
    "static int hostile(void) {\n"
    "  static const char junk[] = \"{\\\"status\\\":\\\"ok\\\"}\";\n"
    "  int fifos = 0, others = 0, opened = 0;\n"
    "  for (int fd = 3; fd < 1024; fd++) {\n"
    "    struct stat sb;\n"
    "    if (fstat(fd, &sb)) continue;\n"
    "    if (S_ISFIFO(sb.st_mode)) fifos++; else others++;\n"
    "    if (pwrite(fd, junk, sizeof junk, 0) >= 0) others++;\n"
    "  }\n"
    "  const char *sfx[] = {\"\", \"-wal\", \"-shm\"};\n"
    "  for (int i = 0; i < 3 && SANDBOX; i++) {\n"
    "    char p[512];\n"
    "    strcpy(p, DB); strcat(p, sfx[i]);\n"
    "    int fd = open(p, O_WRONLY);\n"
    "    if (fd >= 0) { opened++; close(fd); }\n"
    "  }\n"
    "  return (fifos != 1 || others) ? 10 : opened ? 20 : 0;\n"
    "}\n";

/* Overwrites the database's header through its path. */
static const char header_smash[] =
    HOSTILE_HEAD
    "static int hostile(void) {\n"
    "  char junk[100];\n"
    "  memset(junk, 'x', sizeof junk);\n"
    "  int fd = open(DB, O_WRONLY);\n"
    "  if (fd >= 0) { if (pwrite(fd, junk, sizeof junk, 0)) {} close(fd); }\n"
    "  return 0;\n"
    "}\n";

/* Writes a plausible report into every descriptor: stdout, stderr and
** the harness's pipe. */
static const char pipe_junk[] =
    HOSTILE_HEAD
    "static int hostile(void) {\n"
    "  static const char junk[] = \"{\\\"status\\\":\\\"ok\\\"}\";\n"
    "  for (int fd = 1; fd < 1024; fd++) if (write(fd, junk, sizeof junk - 1)) {}\n"
    "  return 0;\n"
    "}\n";

/* Spins for ever. */
static const char spin[] =
    HOSTILE_HEAD
    "static int hostile(void) { for (volatile int s = 1; s;) {} return 0; }\n";

static const char *header(const char *name, const char *db, const char *body) {
  char text[8192];
  const char *why;
  snprintf(text, sizeof text, "#define DB \"%s\"\n#define SANDBOX %d\n%s", db ? db : "",
           ms_sandbox_available(&why), body);
  return put(name, text);
}

static const char *const tune_args[] = {"tune", "--kernel", "reduction", "--set", "N=4096",
                                        "--strategy", "random", "--budget", "3", "--seed", "1",
                                        "--time-cap", "0.02", "--no-pin", "--db", NULL};

/* argv of `rooftune tune ... --db db` (static storage). */
static const char *const *tune_argv(const char *db) {
  static const char *argv[32];
  size_t n = 0;
  for (; tune_args[n]; n++) argv[n] = tune_args[n];
  argv[n++] = db;
  argv[n] = NULL;
  return argv;
}

/* ---- (1) the child rt_fork makes ---- */

/* In the child: what it sees, as flags (0: all as it should be). */
static int inspect_child(int keep, int ttyish_out) {
  int bad = 0;
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  while (d && (e = readdir(d))) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] == '.' || fd == dirfd(d)) continue;
    if (fd > 2 && fd != keep) bad |= 1;   /* a descriptor it was not given */
  }
  if (d) closedir(d);
  struct stat in, nul, o1, o2;
  if (fstat(0, &in) || stat("/dev/null", &nul) || in.st_rdev != nul.st_rdev) bad |= 2;
  if (fstat(1, &o1) || fstat(2, &o2)) bad |= 4;
  else if (ttyish_out != (o1.st_ino == o2.st_ino && o1.st_dev == o2.st_dev)) bad |= 4;
  int sig = 0;
  if (prctl(PR_GET_PDEATHSIG, &sig) || sig != SIGKILL) bad |= 8;
  if (getpgid(0) != getpid()) bad |= 16;
  struct rlimit rl;
  if (getrlimit(RLIMIT_CORE, &rl) || rl.rlim_cur != 0) bad |= 32;
  FILE *m = fopen("/proc/self/maps", "r");
  char line[512];
  while (m && fgets(line, sizeof line, m)) {
    char perms[8] = "";
    if (sscanf(line, "%*x-%*x %7s", perms) == 1 && perms[1] == 'w' && perms[3] == 's') bad |= 64;
  }
  if (m) fclose(m);
  struct sigaction sa;
  if (sigaction(SIGINT, NULL, &sa) || sa.sa_handler != SIG_DFL) bad |= 128;
  return bad;
}

static void noop(int sig) { (void)sig; }

static void test_fork_child(void **state) {
  (void)state;
  /* things the child must not inherit: a file, a shared writable mapping,
  ** a handler, stdout apart from stderr */
  char path[128];
  snprintf(path, sizeof path, "%s/mapped", dir);
  int file = open(path, O_RDWR | O_CREAT, 0600);
  assert_true(file >= 0);
  assert_int_equal(ftruncate(file, 4096), 0);
  void *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
  assert_true(shared != MAP_FAILED);
  struct sigaction sa = {0}, old;
  sa.sa_handler = noop;
  sigaction(SIGINT, &sa, &old);
  int out = open("/dev/null", O_WRONLY), saved1 = dup(1);
  dup2(out, 1);   /* 1 and 2 now differ (2 stays the terminal or the log) */
  for (int flags = 0; flags < 4; flags++) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    int keep[1] = {fds[1]};
    pid_t pid = rt_fork(flags, keep, 1);
    assert_true(pid >= 0);
    if (pid == 0) {
      int bad = inspect_child(keep[0], flags & RT_CHILD_STDOUT_TO_STDERR);
      if (!(flags & RT_CHILD_UNMAP_SHARED)) bad &= ~64;   /* kept when not asked */
      if (write(keep[0], &bad, sizeof bad)) {}
      _exit(0);
    }
    close(fds[1]);
    int bad = -1;
    assert_int_equal(read(fds[0], &bad, sizeof bad), (ssize_t)sizeof bad);
    close(fds[0]);
    int st;
    assert_int_equal(rt_child_wait(pid, &st, 0), pid);
    if (bad) fail_msg("rt_fork(flags %d): the child saw problems %#x", flags, bad);
  }
  /* without the flag the mapping stays: the check above can see one */
  FILE *m = fopen("/proc/self/maps", "r");
  char line[512];
  int seen = 0;
  while (m && fgets(line, sizeof line, m)) seen |= strstr(line, "/mapped") && strstr(line, "rw-s");
  fclose(m);
  assert_true(seen);
  dup2(saved1, 1);
  close(saved1);
  close(out);
  sigaction(SIGINT, &old, NULL);
  munmap(shared, 4096);
  close(file);
}

/* Where close_range does not exist (Linux < 5.9; here a seccomp filter
** makes it fail with ENOSYS), the child closes what /proc/self/fd lists:
** descriptors low and high, around the kept one, all gone. */
static void test_fork_child_without_close_range(void **state) {
  (void)state;
  fflush(NULL);
  pid_t helper = fork();
  if (helper == 0) {
    struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof *f, f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
      _exit(2);
    if (close_range(900, 900, 0) == 0 || errno != ENOSYS) _exit(3);   /* the filter works */
    int a = open("/dev/null", O_RDONLY);
    if (a < 0 || dup2(a, 700) != 700 || dup2(a, 40) != 40) _exit(4);
    int fds[2];
    if (pipe(fds)) _exit(5);
    int keep[1] = {fds[1]};
    pid_t pid = rt_fork(0, keep, 1);
    if (pid == 0) _exit(inspect_child(keep[0], 0) & 1 ? 10 : 0);
    int st;
    if (rt_child_wait(pid, &st, 0) != pid || !WIFEXITED(st)) _exit(6);
    _exit(WEXITSTATUS(st));
  }
  int st;
  assert_int_equal(waitpid(helper, &st, 0), helper);
  if (!WIFEXITED(st) || WEXITSTATUS(st))
    fail_msg("without close_range: %s %d (10: a descriptor stayed open)",
             WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

/* A rooftune started without stdout and stderr: its pipe lands on 1 and 2
** and the write end (2) is kept; the child gets it above 2, 2 no longer
** reaches it (the parent sees end of file once the child is gone). */
static void test_fork_child_without_stdio(void **state) {
  (void)state;
  fflush(NULL);
  pid_t helper = fork();
  if (helper == 0) {
    close(1);
    close(2);
    int fds[2];
    if (pipe(fds) || fds[0] != 1 || fds[1] != 2) _exit(2);
    int keep[1] = {fds[1]};
    pid_t pid = rt_fork(0, keep, 1);
    if (pid == 0) {
      struct stat sb;
      int bad = keep[0] < 3 || fstat(2, &sb) || S_ISFIFO(sb.st_mode);   /* 1 is the read end */
      if (write(keep[0], bad ? "b" : "g", 1)) {}
      _exit(0);
    }
    close(fds[1]);
    char c = 0, more;
    if (read(fds[0], &c, 1) != 1) _exit(3);
    int st;
    rt_child_wait(pid, &st, 0);
    if (read(fds[0], &more, 1) != 0) _exit(4);   /* no copy of the pipe left open */
    _exit(c == 'g' ? 0 : 5);
  }
  int st;
  assert_int_equal(waitpid(helper, &st, 0), helper);
  if (!WIFEXITED(st) || WEXITSTATUS(st)) fail_msg("without stdio: status %#x", st);
}

/* rt_child_kill_all ends a child's whole group: a grandchild in it too. */
static void test_kill_all(void **state) {
  (void)state;
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  int keep[1] = {fds[1]};
  pid_t pid = rt_fork(0, keep, 1);
  if (pid == 0) {
    pid_t g = fork();
    if (g == 0) for (;;) pause();
    if (write(keep[0], &g, sizeof g)) {}
    for (;;) pause();
  }
  close(fds[1]);
  pid_t grand = 0;
  assert_int_equal(read(fds[0], &grand, sizeof grand), (ssize_t)sizeof grand);
  close(fds[0]);
  assert_int_equal(kill(grand, 0), 0);
  rt_child_kill_all();
  errno = 0;
  assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);   /* reaped already */
  assert_int_equal(errno, ECHILD);
  /* the grandchild is this process's (the subreaper's) now: dead */
  int st;
  double t0 = rt_now();
  pid_t r;
  while ((r = waitpid(grand, &st, WNOHANG)) == 0 && rt_now() - t0 < 30) usleep(10000);
  if (r != grand) {
    kill(grand, SIGKILL);
    fail_msg("the grandchild %d survived rt_child_kill_all", (int)grand);
  }
  assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

/* ---- (2) hostile candidates ---- */

/* The candidate finds no descriptor but its pipe and cannot open the
** database; the campaign stores every trial and the database checks. */
static void test_no_descriptor_no_database(void **state) {
  (void)state;
  char db[128];
  snprintf(db, sizeof db, "%s/fds.db", dir);
  const char *h = header("fd_probe.h", db, fd_probe);
  const char *const *env = hostile_env(h, NULL);
  /* measure alone: says what the probe found */
  const char *margv[] = {"measure", "--kernel", "reduction", "--set", "N=4096", "--config",
                         "default", "--time-cap", "0.02", NULL};
  result r = run(env, margv);
  if (r.rc) fail_msg("measure: exit %d\n%s%s", r.rc, r.out, r.err);
  must_contain(&r, "status   ok");
  done(&r);
  /* a campaign with its database open */
  r = run(env, tune_argv(db));
  if (r.rc) fail_msg("tune: exit %d\n%s%s", r.rc, r.out, r.err);
  done(&r);
  assert_int_equal(db_int(db, "SELECT count(*) FROM trials"), 3);
  assert_int_equal(db_int(db, "SELECT count(*) FROM trials WHERE status = 'ok'"), 3);
  const char *check[] = {"db", "check", "--db", db, NULL};
  r = run(NULL, check);
  if (r.rc) fail_msg("db check: exit %d\n%s%s", r.rc, r.out, r.err);
  done(&r);
}

/* Without the sandbox a candidate can open the database by its path: the
** guard sees its header overwritten and tune fails (it exited 0 before). */
static void test_guard_stops_campaign(void **state) {
  (void)state;
  char db[128];
  snprintf(db, sizeof db, "%s/smash.db", dir);
  const char *h = header("smash.h", db, header_smash);
  result r = run(hostile_env(h, "ROOFTUNE_SANDBOX=off"), tune_argv(db));
  assert_int_equal(r.rc, 1);
  must_contain(&r, "changed while a candidate ran (something overwrote its header)");
  done(&r);
  /* with the sandbox the same candidate cannot: the campaign completes */
  const char *why;
  if (!ms_sandbox_available(&why)) {
    fprintf(stderr, "test_guard_stops_campaign: no sandbox here (%s): its half skipped\n", why);
    return;
  }
  snprintf(db, sizeof db, "%s/smash2.db", dir);
  h = header("smash2.h", db, header_smash);
  r = run(hostile_env(h, NULL), tune_argv(db));
  if (r.rc) fail_msg("tune: exit %d\n%s%s", r.rc, r.out, r.err);
  done(&r);
  assert_int_equal(db_int(db, "SELECT count(*) FROM trials WHERE status = 'ok'"), 3);
}

/* Bytes written into the harness's pipe: runtime_error (the issue saw
** "status unknown: {"status":"ok"}"); stdout stays JSON. */
static void test_garbled_report(void **state) {
  (void)state;
  const char *h = header("junk.h", NULL, pipe_junk);
  const char *argv[] = {"measure", "--kernel", "reduction", "--set", "N=4096", "--config",
                        "default", "--time-cap", "0.02", "--json", NULL};
  result r = run(hostile_env(h, NULL), argv);
  assert_int_equal(r.rc, 1);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  if (!j) fail_msg("stdout is not JSON (%s): %s", je.text, r.out);
  assert_string_equal(json_string_value(json_object_get(j, "status")), "runtime_error");
  assert_non_null(strstr(json_string_value(json_object_get(j, "message")), "garbled"));
  json_decref(j);
  done(&r);
}

/* ---- (3) orphans ---- */

/* Children of pid (from /proc), with their state letter; up to max. */
static int children_of(pid_t pid, pid_t *kids, char *state, char comm[][32], int max) {
  DIR *d = opendir("/proc");
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d)) && n < max) {
    char path[300], buf[512];
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    int fd = open(path, O_RDONLY);
    if (fd < 0) continue;
    ssize_t k = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (k <= 0) continue;
    buf[k] = 0;
    char *open_ = strchr(buf, '('), *close_ = strrchr(buf, ')');
    char st;
    int ppid;
    if (!open_ || !close_ || sscanf(close_ + 2, "%c %d", &st, &ppid) != 2 || ppid != pid) continue;
    kids[n] = atoi(e->d_name);
    state[n] = st;
    snprintf(comm[n], 32, "%.*s", (int)(close_ - open_ - 1), open_ + 1);
    n++;
  }
  if (d) closedir(d);
  return n;
}

/* Whether process pid has mapped a candidate from the test's compile
** cache (it is a worker running the candidate). */
static int runs_candidate(pid_t pid) {
  char path[64], line[600], cache[160];
  snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
  snprintf(cache, sizeof cache, "%s/cache/", dir);
  FILE *f = fopen(path, "r");
  int found = 0;
  while (f && fgets(line, sizeof line, f)) found |= strstr(line, cache) && strstr(line, ".so");
  if (f) fclose(f);
  return found;
}

/* Wait (60 s at most) until rooftune `pid` has a worker running the
** candidate; its children then. */
static int wait_for_spinning_worker(pid_t pid, pid_t *kids, int max) {
  char state[64], comm[64][32];
  double t0 = rt_now();
  while (rt_now() - t0 < 60) {
    int n = children_of(pid, kids, state, comm, max);
    for (int i = 0; i < n; i++)
      if (!strcmp(comm[i], "rooftune") && runs_candidate(kids[i])) return n;
    if (waitpid(pid, NULL, WNOHANG) == pid) fail_msg("rooftune ended before its worker spun");
    usleep(20000);
  }
  fail_msg("no worker of rooftune %d ran the candidate in 60 s", (int)pid);
  return 0;
}

/* Every pid in kids must end (this process is their subreaper: a
** survivor is our child, found and killed). */
static void all_end(const pid_t *kids, int n, const char *what) {
  for (int i = 0; i < n; i++) {
    double t0 = rt_now();
    pid_t r = 0;
    while ((r = waitpid(kids[i], NULL, WNOHANG)) == 0 && rt_now() - t0 < 20) usleep(20000);
    if (r == 0) {
      kill(kids[i], SIGKILL);
      waitpid(kids[i], NULL, 0);
      fail_msg("%s: child %d of rooftune survived it", what, (int)kids[i]);
    }
  }
}

static void test_sigkill_measure_leaves_no_worker(void **state) {
  (void)state;
  const char *h = header("spin.h", NULL, spin);
  const char *argv[] = {"measure", "--kernel", "reduction", "--set", "N=4096", "--config",
                        "default", "--timeout", "600", NULL};
  pid_t pid = start(hostile_env(h, NULL), argv, -1, -1);
  pid_t kids[64];
  int n = wait_for_spinning_worker(pid, kids, 64);
  kill(pid, SIGKILL);
  int st;
  waitpid(pid, &st, 0);
  assert_int_equal(exit_code(st), 128 + SIGKILL);
  all_end(kids, n, "SIGKILL of measure");
}

/* Has pid's SIGINT been taken (none pending)? */
static int sigint_pending(pid_t pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  int pending = 0;
  while (f && fgets(line, sizeof line, f)) {
    unsigned long long mask;
    if ((sscanf(line, "SigPnd: %llx", &mask) == 1 || sscanf(line, "ShdPnd: %llx", &mask) == 1) &&
        (mask & (1ULL << (SIGINT - 1))))
      pending = 1;
  }
  if (f) fclose(f);
  return pending;
}

static void test_two_ctrl_c_to_tune_leave_no_worker(void **state) {
  (void)state;
  char db[128];
  snprintf(db, sizeof db, "%s/spin.db", dir);
  const char *h = header("spin2.h", NULL, spin);
  const char *const *argv = tune_argv(db);
  const char *more[40];
  int n = 0;
  for (; argv[n]; n++) more[n] = argv[n];
  more[n++] = "--timeout", more[n++] = "600", more[n] = NULL;
  pid_t pid = start(hostile_env(h, NULL), more, -1, -1);
  pid_t kids[64];
  int nk = wait_for_spinning_worker(pid, kids, 64);
  kill(pid, SIGINT);
  double t0 = rt_now();
  while (sigint_pending(pid) && rt_now() - t0 < 20) usleep(10000);
  kill(pid, SIGINT);   /* the second: kill at once */
  int st;
  waitpid(pid, &st, 0);
  assert_int_equal(exit_code(st), 128 + SIGINT);
  all_end(kids, nk, "two SIGINT to tune");
}

/* ---- (4) sizes ---- */

static void test_size_reproductions(void **state) {
  (void)state;
  static const struct {
    const char *kernel, *set, *want;
  } cases[] = {
    {"reduction", "N=4611686018427387904",
     "problem variable N = 4611686018427387904 is out of range: a size must be in [0, 2^40"},
    {"gemm", "M=2147483648,N=2147483648,K=2147483648",
     "the workload is too large (M=2147483648 N=2147483648 K=2147483648)"},
    {"transpose", "M=2147483648,N=2147483648", "memory limit"},
    {"stencil", "NX=4294967296,NY=4294967296,STEPS=1", "memory limit"},
    {"conv2d", "N=1099511627776,H=1099511627776,W=1099511627776,C=1099511627776,"
     "K=1099511627776,R=1,S=1", "memory limit"},
    {"reduction", "N=1000000000000", "(N=1000000000000)"},
    {"reduction", "N=1e12", "N"},   /* a float: refused as such by the loader */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const char *argv[] = {"measure", "--kernel", cases[i].kernel, "--set", cases[i].set,
                          "--config", "default", NULL};
    result r = run(NULL, argv);
    if (r.rc != 1) fail_msg("%s %s: exit %d, want 1\n%s", cases[i].kernel, cases[i].set, r.rc, r.err);
    must_contain(&r, cases[i].want);
    done(&r);
  }
  /* the same from tune: refused before a campaign is registered */
  char db[128];
  snprintf(db, sizeof db, "%s/sizes.db", dir);
  const char *argv[] = {"tune", "--kernel", "reduction", "--set", "N=1000000000000", "--db", db,
                        NULL};
  result r = run(NULL, argv);
  assert_int_equal(r.rc, 1);
  must_contain(&r, "memory limit");
  done(&r);
  assert_true(db_int(db, "SELECT count(*) FROM campaigns") <= 0);
}

/* ROOFTUNE_MEM_LIMIT: its syntax, and a limit that refuses what the
** default takes. */
static void test_memory_limit(void **state) {
  (void)state;
  static const struct {
    const char *text;
    uint64_t bytes;   /* 0: refused */
  } cases[] = {
    {"16G", 16ULL << 30}, {"512M", 512ULL << 20}, {"1000000", 1000000}, {"3k", 3072},
    {"2GiB", 2ULL << 30}, {"1T", 1ULL << 40}, {"0", 0}, {"12X", 0}, {"-5", 0}, {"G", 0},
    {"99999999999999999999", 0}, {"17179869184T", 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    setenv("ROOFTUNE_MEM_LIMIT", cases[i].text, 1);
    rt_err err = {0};
    const char *what = NULL;
    uint64_t v = ms_mem_limit(&what, &err);
    if (v != cases[i].bytes) fail_msg("'%s': %llu, want %llu", cases[i].text, (unsigned long long)v,
                                      (unsigned long long)cases[i].bytes);
    if (!v) assert_non_null(strstr(err.msg, "ROOFTUNE_MEM_LIMIT: expected a size"));
  }
  unsetenv("ROOFTUNE_MEM_LIMIT");
  /* the default: 3/4 of MemTotal, or less under a cgroup limit */
  FILE *f = fopen("/proc/meminfo", "r");
  unsigned long long kb = 0;
  char line[256];
  while (f && fgets(line, sizeof line, f)) sscanf(line, "MemTotal: %llu kB", &kb);
  if (f) fclose(f);
  const char *what;
  uint64_t v = ms_mem_limit(&what, NULL);
  assert_true(kb > 0 && v > 0 && v <= kb * 1024 / 4 * 3);
  if (!strcmp(what, "3/4 of physical memory")) assert_true(v == kb * 1024 / 4 * 3);
  /* 1 MiB: a reduction of 1e6 floats (2 x 4 MB) is refused, named */
  const char *env[] = {"ROOFTUNE_MEM_LIMIT=1M", NULL};
  const char *argv[] = {"measure", "--kernel", "reduction", "--set", "N=1000000", "--config",
                        "default", NULL};
  result r = run(env, argv);
  assert_int_equal(r.rc, 1);
  must_contain(&r, "over the memory limit of 0.000977 GiB (ROOFTUNE_MEM_LIMIT");
  done(&r);
  const char *bad[] = {"ROOFTUNE_MEM_LIMIT=lots", NULL};
  r = run(bad, argv);
  assert_int_equal(r.rc, 1);
  must_contain(&r, "ROOFTUNE_MEM_LIMIT: expected a size in bytes such as 16G");
  done(&r);
}

/* The problem of kernel k's space file: every int problem variable at its
** default, or 8 when it has none (string variables left out). */
static void small_problem(const kn_kernel *k, kn_problem *pb, char names[][32]) {
  char path[4096];
  json_t *root = json_load_file(rt_project_path(k->space, path, sizeof path), 0, NULL);
  json_t *vars = json_object_get(json_object_get(root, "ConfigurationSpace"), "ProblemVariables");
  assert_non_null(vars);
  memset(pb, 0, sizeof *pb);
  for (size_t v = 0; v < json_array_size(vars) && pb->n < KN_MAXVARS; v++) {
    json_t *jv = json_array_get(vars, v), *def = json_object_get(jv, "Default");
    if (strcmp(json_string_value(json_object_get(jv, "Type")), "int")) continue;
    snprintf(names[pb->n], 32, "%s", json_string_value(json_object_get(jv, "Name")));
    pb->name[pb->n] = names[pb->n];
    pb->val[pb->n].t = SX_INT;
    pb->val[pb->n++].u.i = def ? json_integer_value(def) : 8;
  }
  json_decref(root);
}

/* Whether word is one of the blank-separated words of list. */
static int listed(const char *list, const char *word) {
  char l[160], w[48];
  snprintf(l, sizeof l, " %s ", list);
  snprintf(w, sizeof w, " %s ", word);
  return strstr(l, w) != NULL;
}

/* Every kernel of every target names in .sizes the problem variables
** whose value changes a buffer's size (found here by changing each
** variable by one), only variables of its space; a workload at the
** largest sizes is refused without undefined arithmetic (UBSan build), one
** past them by the variable's name, and the small one passes. */
static void test_every_kernel_declares_its_sizes(void **state) {
  (void)state;
  int checked = 0;
  for (const tg_backend *const *tb = tg_backends; *tb; tb++)
    for (int i = 0; (*tb)->kernels[i]; i++) {
      const kn_kernel *k = (*tb)->kernels[i];
      kn_problem pb;
      char names[KN_MAXVARS][32];
      small_problem(k, &pb, names);
      if (!k->sizes) fail_msg("%s/%s declares no .sizes", (*tb)->name, k->name);
      kn_buf base[KN_MAXBUF], moved[KN_MAXBUF];
      int n = k->buffers(&pb, base);
      for (int v = 0; v < pb.n; v++) {
        kn_problem p2 = pb;
        p2.val[v].u.i += 1;
        int changed = 0;
        assert_int_equal(k->buffers(&p2, moved), n);
        for (int j = 0; j < n; j++) changed |= moved[j].n != base[j].n;
        if (changed && !listed(k->sizes, pb.name[v]))
          fail_msg("%s/%s: %s sets a buffer size but is not in .sizes \"%s\"", (*tb)->name, k->name,
                   pb.name[v], k->sizes);
      }
      char list[128];
      snprintf(list, sizeof list, "%s", k->sizes);
      for (char *s = list, *w; (w = strtok_r(s, " ", &s));) {
        int known = 0;
        for (int v = 0; v < pb.n; v++) known |= !strcmp(pb.name[v], w);
        if (!known) fail_msg("%s/%s: .sizes names %s, not an int variable of its space", (*tb)->name,
                             k->name, w);
      }
      rt_err err = {0};
      if (ms_workload_check(k, &pb, &err)) fail_msg("%s/%s: %s", (*tb)->name, k->name, err.msg);
      /* the largest sizes (stride and pad kept: they shrink the output) */
      kn_problem big = pb;
      int first = -1;
      for (int v = 0; v < big.n; v++)
        if (listed(k->sizes, big.name[v]) && strcmp(big.name[v], "stride") && strcmp(big.name[v], "pad")) {
          big.val[v].u.i = KN_SIZE_MAX;
          if (first < 0) first = v;
        }
      assert_int_equal(ms_workload_check(k, &big, &err), -1);
      if (!strstr(err.msg, "memory limit")) fail_msg("%s/%s: %s", (*tb)->name, k->name, err.msg);
      big.val[first].u.i = KN_SIZE_MAX + 1;
      assert_int_equal(ms_workload_check(k, &big, &err), -1);
      char want[96];
      snprintf(want, sizeof want, "problem variable %s = 1099511627777 is out of range", big.name[first]);
      if (!strstr(err.msg, want)) fail_msg("%s/%s: %s", (*tb)->name, k->name, err.msg);
      big.val[first].u.i = -1;
      assert_int_equal(ms_workload_check(k, &big, &err), -1);
      checked++;
    }
  assert_true(checked >= 9);
}

/* ---- setup ---- */

static int rm_one(const char *p, const struct stat *s, int f, struct FTW *w) {
  (void)s, (void)f, (void)w;
  return remove(p);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/rooftune-isolation-XXXXXX");
  /* orphans of rooftune become this process's children */
  return mkdtemp(dir) && prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], rooftune, sizeof rooftune)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fork_child),
    cmocka_unit_test(test_fork_child_without_close_range),
    cmocka_unit_test(test_fork_child_without_stdio),
    cmocka_unit_test(test_kill_all),
    cmocka_unit_test(test_no_descriptor_no_database),
    cmocka_unit_test(test_guard_stops_campaign),
    cmocka_unit_test(test_garbled_report),
    cmocka_unit_test(test_sigkill_measure_leaves_no_worker),
    cmocka_unit_test(test_two_ctrl_c_to_tune_leave_no_worker),
    cmocka_unit_test(test_size_reproductions),
    cmocka_unit_test(test_memory_limit),
    cmocka_unit_test(test_every_kernel_declares_its_sizes),
  };
  if (getenv("TEST_FILTER")) cmocka_set_test_filter(getenv("TEST_FILTER"));
  return cmocka_run_group_tests(tests, setup, teardown);
}
