/*
** ms_batch.c -- the batch worker runner (ms_backend.h "Batches"): one
** isolated child measures many candidates in turn, so that what a device
** worker pays once (fork, driver initialisation, a context, the workload's
** buffers and inputs) is paid once per batch instead of once per
** candidate.
**
** The child is forked as ms_run_child forks a single worker (rt_fork: its
** own process group, dies with rooftune, no descriptor but its report
** pipe and stdio, stdout on stderr, no shared writable mapping) and sends
** one sealed ms__report per item, in item order. The parent reads them one
** at a time, each against its own deadline (o->timeout from the previous
** report, or from the fork for the first), and ends the child's group
** when the child is done (its last item, or a report with `last` set), or
** when it dies, hangs or garbles a report at item i: item i then gets the
** status and message ms__run_worker would give a single worker (timeout,
** or runtime_error with the signal or exit status: ms_child_why), and a new
** child continues at item i + 1. Items that never started are never
** charged. The stop flag is looked at every 100 ms: a stopped batch kills
** its child and drops the item in flight. The database guard is checked
** after every report and every child; a change ends the batch as a
** harness failure, without saying which item made it (the child may be
** one item further than its last report).
*/
#include "ms.h"
#include "ms_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* How a read of one report ended. */
enum { READ_WHOLE, READ_EOF, READ_DEADLINE, READ_STOPPED };

/* Read size bytes from fd into buf before deadline, waking at least every
** 100 ms to look at *stop. */
static int read_report(int fd, void *buf, size_t size, double deadline,
                       const volatile sig_atomic_t *stop) {
  size_t got = 0;
  while (got < size) {
    if (stop && *stop) return READ_STOPPED;
    double left = deadline - rt_now();
    if (left <= 0) return READ_DEADLINE;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int ms = left > 0.1 ? 100 : (int)(left * 1000) + 1;
    if (poll(&p, 1, ms) <= 0) continue;   /* EINTR or not yet: the loop rechecks */
    ssize_t k = read(fd, (char *)buf + got, size - got);
    if (k > 0) got += (size_t)k;
    else if (k == 0 || errno != EINTR) return READ_EOF;
  }
  return READ_WHOLE;
}

/* Bytes left in the pipe once its writers are dead (a report with bytes
** after it is not a report: ms_run_child's rule). */
static size_t extra_bytes(int fd) {
  size_t extra = 0;
  char buf[512];
  ssize_t k;
  if (fcntl(fd, F_SETFL, O_NONBLOCK)) return 0;
  while ((k = read(fd, buf, sizeof buf)) > 0 || (k < 0 && errno == EINTR))
    if (k > 0) extra += (size_t)k;
  return extra;
}

/* Item i's report when the child did not send it whole. */
static void charge(ms__report *r, int i, const ms_child_end *end) {
  memset(r, 0, sizeof *r);
  r->item = i;
  r->status = end->timed_out && !end->extra ? MS_TIMEOUT : MS_RUNTIME_ERROR;
  ms_child_why(end, "worker", r->msg, sizeof r->msg);
}

int ms__run_batch(void (*child)(int fd, void *ctx, int start, int n), void *ctx, int n,
                  const ms_opts *o, const volatile sig_atomic_t *stop, ms__report *rep,
                  rt_err *err) {
  memset(rep, 0, (size_t)(n > 0 ? n : 0) * sizeof *rep);
  ms__guard g;
  ms__guard_take(o->guard, &g);
  char why[256];
  int i = 0;
  while (i < n) {
    if (stop && *stop) return i;
    int fd[2];
    if (pipe2(fd, O_CLOEXEC)) {
      rt_err_set(err, "harness: cannot start the worker: pipe: %s", strerror(errno));
      return -1;
    }
    int keep[1] = {fd[1]};
    pid_t pid = rt_fork(RT_CHILD_STDOUT_TO_STDERR | RT_CHILD_UNMAP_SHARED, keep, 1);
    if (pid < 0) {
      rt_err_set(err, "harness: cannot start the worker: %s", strerror(errno));
      close(fd[0]);
      close(fd[1]);
      return -1;
    }
    if (pid == 0) {
      child(keep[0], ctx, i, n);
      _exit(0);
    }
    close(fd[1]);
    int stopped = 0, changed = 0;
    for (int done = 0; !done;) {
      double start = rt_now();
      ms__report r;
      int how = read_report(fd[0], &r, sizeof r, start + o->timeout, stop);
      if (how == READ_STOPPED) {
        rt_child_kill(pid);
        stopped = done = 1;
      } else if (how == READ_WHOLE) {
        int good = !ms__unseal(&r);
        if (good && r.item != i) {
          memset(&r, 0, sizeof r);
          r.status = MS_RUNTIME_ERROR;
          snprintf(r.msg, sizeof r.msg, "harness: the worker's report is garbled (it names "
                   "another item than the one it measured: the candidate wrote into the "
                   "harness's pipe?)");
          good = 0;
        }
        r.item = i;
        rep[i] = r;
        done = !good || r.last || i + 1 == n;
        if (done) {   /* end the group, then look behind the report */
          ms_child_end end = {.wstatus = rt_child_kill(pid)};
          end.extra = extra_bytes(fd[0]);   /* its writers are dead now */
          end.seconds = rt_now() - start;
          if (good && end.extra) charge(&rep[i], i, &end);
        }
        rep[i].last = 0;
        i++;
        if (ms__guard_check(o->guard, &g, why, sizeof why)) {
          if (!done) rt_child_kill(pid);
          changed = done = 1;
        }
      } else {   /* died, closed its pipe, or hung at item i */
        ms_child_end end = {.timed_out = how == READ_DEADLINE};
        if (end.timed_out) end.wstatus = rt_child_kill(pid);
        else end.timed_out = ms__reap(pid, start + o->timeout, &end.wstatus);
        end.seconds = rt_now() - start;
        charge(&rep[i], i, &end);
        i++;
        done = 1;
      }
    }
    close(fd[0]);
    if (stopped) return i;
    if (changed || ms__guard_check(o->guard, &g, why, sizeof why)) {
      rt_err_set(err, "%s", why);
      return -1;
    }
  }
  return n;
}
