/*
** ms_worker.c -- the target-neutral part of measuring one candidate: the
** isolated child and its report, statuses, options and event lists (the
** workloads and verification are in ms_workload.c).
**
** A backend's worker (under targets/<backend>/) starts its child with
** ms__run_worker, which runs it with ms_run_child (rt_fork: its own
** process group, dies with rooftune, no descriptor but its report pipe and
** stdio, stdout on stderr, no shared writable mapping, default signal
** dispositions, so that the caller's handlers, cmocka's or ASan's, cannot
** swallow a crash), checks the database guard around it, and takes a
** report only when exactly one whole sealed report came (ms__unseal); the
** parent polls the pipe against the deadline o->timeout, kills the whole
** process group (on timeout and after a report) and reaps every child it
** forked.
*/
#include "ms.h"
#include "ms_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


static const char *const status_names[] = {
  "ok", "compile_error", "runtime_error", "timeout", "wrong_result", "invalid",
};

const char *ms_status_name(ms_status s) {
  return (unsigned)s < sizeof status_names / sizeof *status_names
             ? status_names[s] : "unknown";
}

int ms_status_parse(const char *name) {
  for (size_t i = 0; i < sizeof status_names / sizeof *status_names; i++)
    if (!strcmp(status_names[i], name)) return (int)i;
  return -1;
}

void ms_opts_default(ms_opts *o) {
  *o = (ms_opts){.ci_target = 0.01, .time_cap = 2.0, .min_reps = 5,
                 .max_reps = 10000, .warmup = 2, .timeout = 20.0,
                 .flush_cache = 0, .pin_cpu = -1, .cache_dir = NULL,
                 .cflags = MS_DEFAULT_CFLAGS, .events = NULL, .counters = 0};
}

/* Signals a worker may die of, by name. */
static const struct { int sig; const char *name; } signals[] = {
  {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},
  {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"},
  {SIGTERM, "SIGTERM"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},
  {SIGPIPE, "SIGPIPE"}, {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"},
  {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGALRM, "SIGALRM"},
};

static const char *signal_name(int sig) {
  for (size_t i = 0; i < sizeof signals / sizeof *signals; i++)
    if (signals[i].sig == sig) return signals[i].name;
  return "signal";
}

void ms__send(int fd, ms__report *rep) {
  ms__send_item(fd, rep);
  _exit(0);
}

/* The child is left unreaped (WNOWAIT) until its group is killed: a dead
** leader keeps its group's id, so whatever it started in its group is
** ended with it, and never a stranger's group. */
int ms__reap(pid_t pid, double deadline, int *st) {
  int timed_out = 1;
  while (rt_now() < deadline) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
    if ((r < 0 && errno != EINTR) || (r == 0 && si.si_pid == pid)) {
      timed_out = 0;   /* it ended (or is not ours to wait for) */
      break;
    }
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  *st = rt_child_kill(pid);   /* its group, then the child: its own status when it ended */
  return timed_out;
}

int ms_run_child(void (*child)(int fd, void *ctx), void *ctx, double timeout, void *rep,
                 size_t size, ms_child_end *end) {
  memset(end, 0, sizeof *end);
  int fd[2];
  if (pipe2(fd, O_CLOEXEC)) {
    end->err = errno;
    return -1;
  }
  int keep[1] = {fd[1]};
  pid_t pid = rt_fork(RT_CHILD_STDOUT_TO_STDERR | RT_CHILD_UNMAP_SHARED, keep, 1);
  if (pid < 0) {
    end->err = errno;
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    child(keep[0], ctx);
    _exit(0);
  }
  close(fd[1]);
  double start = rt_now(), deadline = start + timeout;
  size_t got = 0;
  while (got < size) {
    double left = deadline - rt_now();
    if (left <= 0) {
      end->timed_out = 1;
      break;
    }
    struct pollfd p = {.fd = fd[0], .events = POLLIN};
    int pr = poll(&p, 1, (int)(left * 1000) + 1);
    if (pr <= 0) continue;   /* EINTR or not yet: the loop rechecks */
    ssize_t k = read(fd[0], (char *)rep + got, size - got);
    if (k > 0) got += (size_t)k;
    else if (k == 0 || errno != EINTR) break;
  }
  int st = 0;
  if (got < size && !end->timed_out) end->timed_out = ms__reap(pid, deadline, &st);
  else st = rt_child_kill(pid);   /* complete, or out of time: end the group, reap */
  /* Whatever the group wrote beyond the report is in the pipe now: a
  ** report with bytes around it is not a report. */
  if (got == size && !fcntl(fd[0], F_SETFL, O_NONBLOCK)) {
    char extra[512];
    ssize_t k;
    while ((k = read(fd[0], extra, sizeof extra)) > 0 || (k < 0 && errno == EINTR))
      if (k > 0) end->extra += (size_t)k;
  }
  close(fd[0]);
  end->seconds = rt_now() - start;
  end->wstatus = st;
  return got == size && !end->extra ? 0 : 1;
}

const char *ms_child_why(const ms_child_end *end, const char *who, char *buf, size_t cap) {
  if (end->err) snprintf(buf, cap, "harness: cannot start the %s: %s", who, strerror(end->err));
  else if (end->extra)
    snprintf(buf, cap, "harness: the %s's report is garbled: %zu bytes more than a report came "
             "through its pipe (the candidate wrote into the harness's pipe?)", who, end->extra);
  else if (end->timed_out) snprintf(buf, cap, "timeout: %s killed after %.2f s", who, end->seconds);
  else if (WIFSIGNALED(end->wstatus))
    snprintf(buf, cap, "%s killed by %s (%s)", who, signal_name(WTERMSIG(end->wstatus)),
             strsignal(WTERMSIG(end->wstatus)));
  else
    snprintf(buf, cap, "%s exited with status %d without a report", who,
             WIFEXITED(end->wstatus) ? WEXITSTATUS(end->wstatus) : -1);
  return buf;
}

int ms__run_worker(void (*child)(int fd, void *ctx), void *ctx, const ms_opts *o,
                   ms__report *rep) {
  memset(rep, 0, sizeof *rep);
  ms__guard g;
  ms__guard_take(o->guard, &g);
  ms_child_end end;
  int rc = ms_run_child(child, ctx, o->timeout, rep, sizeof *rep, &end);
  char why[256];
  if (ms__guard_check(o->guard, &g, why, sizeof why)) {
    memset(rep, 0, sizeof *rep);
    rep->status = MS_RUNTIME_ERROR;
    snprintf(rep->msg, sizeof rep->msg, "%s", why);
    return -1;
  }
  if (rc == 0) {
    ms__unseal(rep);
    return 0;
  }
  memset(rep, 0, sizeof *rep);
  ms_child_why(&end, "worker", rep->msg, sizeof rep->msg);
  if (rc < 0) return -1;
  rep->status = end.timed_out && !end.extra ? MS_TIMEOUT : MS_RUNTIME_ERROR;
  return 0;
}

/* ---- event lists ---- */

int ms_parse_events(const char *list, const char *const *defaults, char names[][MS_EVNAME], int max,
                    rt_err *err) {
  if (!list) {
    int n = 0;
    for (; defaults && defaults[n] && n < max; n++)
      snprintf(names[n], MS_EVNAME, "%s", defaults[n]);
    return n;
  }
  int n = 0;
  const char *p = list;
  for (;;) {
    const char *end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    const char *a = p, *b = end;
    while (a < b && (*a == ' ' || *a == '\t')) a++;
    while (b > a && (b[-1] == ' ' || b[-1] == '\t')) b--;
    size_t len = (size_t)(b - a);
    if (len == 0) {
      rt_err_set(err, "event %d of \"%s\" is empty", n + 1, list);
      return -1;
    }
    if (len > MS_EVNAME - 1) {
      rt_err_set(err, "event name \"%.*s\" is longer than %d characters",
                 (int)len, a, MS_EVNAME - 1);
      return -1;
    }
    if (n == max) {
      rt_err_set(err, "too many events in \"%s\" (at most %d)", list, max);
      return -1;
    }
    memcpy(names[n], a, len);
    names[n][len] = 0;
    for (int i = 0; i < n; i++)
      if (!strcmp(names[i], names[n])) {
        rt_err_set(err, "event \"%s\" is listed twice", names[n]);
        return -1;
      }
    n++;
    if (!*end) return n;
    p = end + 1;
  }
}

const char *ms__log_excerpt(const char *log) {
  if (!log) return "";
  const char *p = strstr(log, "error");
  if (p) {
    while (p > log && p[-1] != '\n') p--;
    return p;
  }
  p = strchr(log, '\n');
  return p ? p + 1 : log;
}
