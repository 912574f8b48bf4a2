/*
** ms_worker.c -- the target-neutral part of measuring one candidate:
** workloads, verification, the isolated child and its report, event lists.
**
** A workload is made only after its sizes passed ms_workload_check (every
** size variable of the kernel an integer in [0, KN_SIZE_MAX], the buffers'
** sizes computed without overflow, twice their bytes within ms_mem_limit).
** It holds the inputs (deterministic: GSL mt19937, seed 42, uniform in
** [-1, 1]) and the reference outputs (k->reference run on a copy of the
** inputs, outputs zeroed first). A backend's worker (under
** targets/<backend>/) starts its child with
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

#include <gsl/gsl_rng.h>


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

/* ---- workloads ---- */

size_t ms__buf_bytes(const kn_buf *b) {
  return (size_t)(b->n > 0 ? b->n : 1) * sizeof(float);
}
#define buf_bytes ms__buf_bytes

/* "K1=V1 K2=V2" of the kernel's size variables, into buf. */
static const char *size_text(const kn_kernel *k, const kn_problem *pb, char *buf, size_t cap) {
  buf[0] = 0;
  for (const char *s = k->sizes ? k->sizes : ""; *s;) {
    size_t len = strcspn(s, " ");
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), s);
    size_t at = strlen(buf);
    if (len) snprintf(buf + at, cap - at, "%s%s=%lld", at ? " " : "", name, (long long)kn_int(pb, name));
    s += len + (s[len] == ' ');
  }
  return buf;
}

/* Whether pb binds name to an integer (kn_int reads 0 otherwise). */
static int int_var(const kn_problem *pb, const char *name, int64_t *v) {
  for (int i = 0; i < pb->n; i++)
    if (!strcmp(pb->name[i], name)) {
      *v = pb->val[i].u.i;
      return pb->val[i].t == SX_INT;
    }
  return 0;
}

/* Size in bytes from the text of ROOFTUNE_MEM_LIMIT: digits, then K, M, G
** or T (powers of 1024, an optional trailing "B" or "iB"). 0: not one. */
static uint64_t parse_size(const char *s) {
  char *end;
  if (!s || *s < '0' || *s > '9') return 0;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno) return 0;
  int shift = 0;
  switch (*end == 0 ? 0 : end[0] & ~0x20) {
  case 0: break;
  case 'K': shift = 10; end++; break;
  case 'M': shift = 20; end++; break;
  case 'G': shift = 30; end++; break;
  case 'T': shift = 40; end++; break;
  default: return 0;
  }
  if (shift && (!strcmp(end, "iB") || !strcmp(end, "B"))) end += strlen(end);
  if (*end || v == 0 || v > (UINT64_MAX >> shift)) return 0;
  return (uint64_t)v << shift;
}

/* The memory limit of this process's cgroup (v2), or 0. */
static uint64_t cgroup_limit(void) {
  char line[512], path[700];
  FILE *f = fopen("/proc/self/cgroup", "re");
  uint64_t lim = 0;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "0::", 3)) {
      line[strcspn(line, "\n")] = 0;
      snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", line + 3);
      FILE *m = fopen(path, "re");
      unsigned long long v;
      if (m && fscanf(m, "%llu", &v) == 1) lim = v;
      if (m) fclose(m);
    }
  if (f) fclose(f);
  return lim;
}

uint64_t ms_mem_limit(const char **what, rt_err *err) {
  const char *e = getenv("ROOFTUNE_MEM_LIMIT");
  if (e && *e) {
    uint64_t v = parse_size(e);
    if (!v) rt_err_set(err, "ROOFTUNE_MEM_LIMIT: expected a size in bytes such as 16G, 512M or "
                       "1000000 (K, M, G, T: powers of 1024), got '%.100s'", e);
    if (what) *what = "ROOFTUNE_MEM_LIMIT";
    return v;
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)1 << 32;
  uint64_t cg = cgroup_limit();
  if (what) *what = cg && cg < phys ? "3/4 of this cgroup's memory limit" : "3/4 of physical memory";
  return (cg && cg < phys ? cg : phys) / 4 * 3;
}

int ms_workload_check(const kn_kernel *k, const kn_problem *pb, rt_err *err) {
  char sizes[512];
  /* 1. every size variable an integer in [0, KN_SIZE_MAX] */
  for (const char *s = k->sizes ? k->sizes : ""; *s;) {
    size_t len = strcspn(s, " ");
    char name[32];
    int64_t v = 0;
    snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), s);
    s += len + (s[len] == ' ');
    if (!len) continue;
    if (!int_var(pb, name, &v)) {
      rt_err_set(err, "%s: problem variable %s must be an integer (it sets buffer sizes)", k->name,
                 name);
      return -1;
    }
    if (v < 0 || v > KN_SIZE_MAX) {
      rt_err_set(err, "%s: problem variable %s = %lld is out of range: a size must be in [0, "
                 "2^40 = %lld]", k->name, name, (long long)v, (long long)KN_SIZE_MAX);
      return -1;
    }
  }
  /* 2. buffers that exist, 3. within the memory limit (exact in 128 bits) */
  kn_buf b[KN_MAXBUF];
  int n = k->buffers(pb, b);
  if (n < 1 || n > KN_MAXBUF) {
    rt_err_set(err, "%s: internal error: %d buffers", k->name, n);
    return -1;
  }
  rt_count total = 0;
  for (int i = 0; i < n; i++) {
    if (b[i].n < 1) {
      rt_err_set(err, "%s: these sizes make no workload: buffer %s would hold %lld elements (%s)",
                 k->name, b[i].name, (long long)b[i].n, size_text(k, pb, sizes, sizeof sizes));
      return -1;
    }
    total += (rt_count)b[i].n * sizeof(float);
  }
  const char *what;
  uint64_t limit = ms_mem_limit(&what, err);
  if (!limit) return -1;
  rt_count need = 2 * total;
  if (need > limit || total > SIZE_MAX / 4) {
    char detail[256] = "", nb[48];
    for (int i = 0; i < n; i++)
      snprintf(detail + strlen(detail), sizeof detail - strlen(detail), "%s%s %.3g", i ? ", " : "",
               b[i].name, (double)b[i].n);
    rt_err_set(err, "%s: the workload is too large (%s): its buffers hold %s floats, and the "
               "harness needs twice their %s bytes (%.3g GiB), over the memory limit of %.3g GiB "
               "(%s; set ROOFTUNE_MEM_LIMIT, e.g. 64G, to change it)",
               k->name, size_text(k, pb, sizes, sizeof sizes), detail, rt_count_str(total, nb),
               (double)need / 1073741824.0, (double)limit / 1073741824.0, what);
    return -1;
  }
  return 0;
}

ms_workload *ms_workload_new(const kn_kernel *k, const kn_problem *pb, rt_err *err) {
  if (ms_workload_check(k, pb, err)) return NULL;
  kn_buf b[KN_MAXBUF];
  int n = k->buffers(pb, b);
  ms_workload *w = rt_calloc(1, sizeof *w);
  w->k = k;
  w->pb = *pb;
  w->nbuf = n;
  memcpy(w->b, b, (size_t)n * sizeof *b);
  w->tol = k->tolerance(pb);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 42);
  float *work[KN_MAXBUF];
  for (int i = 0; i < n; i++) {
    work[i] = rt_calloc(1, buf_bytes(&b[i]));
    if (b[i].out) continue;
    w->in[i] = rt_malloc(buf_bytes(&b[i]));
    for (int64_t j = 0; j < b[i].n; j++)
      w->in[i][j] = (float)(2.0 * gsl_rng_uniform(rng) - 1.0);
    memcpy(work[i], w->in[i], buf_bytes(&b[i]));
  }
  gsl_rng_free(rng);
  /* Device kernels are verified against their device reference; small
  ** workloads also get the host reference, which checks the device
  ** reference itself in every measurement (the backend's worker). */
  double bytes = 0;
  for (int i = 0; i < n; i++) bytes += (double)buf_bytes(&b[i]);
  if (k->device_reference && (k->flops(pb) > MS_HOST_CHECK_FLOPS || bytes > 256e6)) {
    for (int i = 0; i < n; i++) free(work[i]);
    return w;
  }
  k->reference(pb, work);
  for (int i = 0; i < n; i++) {
    if (b[i].out) w->ref[i] = work[i];
    else free(work[i]);
  }
  return w;
}

void ms_workload_free(ms_workload *w) {
  if (!w) return;
  for (int i = 0; i < w->nbuf; i++) {
    free(w->in[i]);
    free(w->ref[i]);
  }
  free(w);
}

/* Worst relative error over the outputs; msg describes the first output
** beyond tolerance (left untouched when all pass). NaN/Inf count as
** infinitely wrong. */
double ms__verify(const ms_workload *w, float *const *bufs, float *const *ref, char *msg,
                  size_t cap) {
  double worst = 0;
  for (int i = 0; i < w->nbuf; i++) {
    if (!w->b[i].out) continue;
    double emax = 0, rmax = 0;
    int64_t at = 0;
    for (int64_t j = 0; j < w->b[i].n; j++) {
      double o = bufs[i][j], r = ref[i][j];
      double e = isfinite(o) ? fabs(o - r) : INFINITY;
      if (e > emax) emax = e, at = j;
      if (fabs(r) > rmax) rmax = fabs(r);
    }
    double rel = emax / fmax(rmax, 1e-30);
    if (rel > w->tol && worst <= w->tol)
      snprintf(msg, cap,
               "output %s wrong: max|out-ref|/max|ref| = %.3g > tolerance "
               "%.3g (at element %lld: %g, expected %g)",
               w->b[i].name, rel, w->tol, (long long)at, (double)bufs[i][at],
               (double)ref[i][at]);
    if (rel > worst) worst = rel;
  }
  return worst;
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
