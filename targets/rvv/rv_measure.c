/*
** rv_measure.c -- the rvv row's measure (rv.h invariants 3 to 6): build
** the artefact through the compile cache, then, in the harness's worker
** child (ms__run_worker), start qemu-riscv64 at the instance's VLEN (in
** the sandbox) or the runner (outside it) with rt_fork, write the
** protocol's header and the buffers to its stdin, read its whole answer,
** parse it (rv_parse_answer), check the VLEN, the inputs and the outputs
** against the host reference, and report. Emulated runs carry no time and
** the origin "emulated"; a runner's times become the statistics.
*/
#include "rv.h"

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
#include <unistd.h>

#include "../../measure/ms_backend.h"

#define RV_TEXT_CAP (1 << 20)   /* bytes of answer text after the buffers */

/* One line of text at *p (up to end), NUL-free, into line; advances *p. */
static int next_line(const char **p, const char *end, char *line, size_t cap) {
  if (*p >= end) return 0;
  const char *nl = memchr(*p, '\n', (size_t)(end - *p));
  size_t len = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
  snprintf(line, cap, "%.*s", (int)(len < cap ? len : cap - 1), *p);
  for (char *c = line; *c; c++)
    if ((unsigned char)*c < 32) *c = '?';
  *p += len + (nl != NULL);
  return 1;
}

int rv_parse_answer(const ms_workload *w, const char *ans, size_t n, int reps, void *const *bufs,
                    double *times, int *vlen, char *msg, size_t cap) {
  size_t need = 0;
  for (int i = 0; i < w->nbuf; i++) need += ms__buf_bytes(&w->b[i]);
  if (n < need) {
    snprintf(msg, cap, "the answer holds %zu bytes, its buffers need %zu before its lines", n, need);
    return -1;
  }
  for (int i = 0, off = 0; i < w->nbuf; i++) {
    memcpy(bufs[i], ans + off, ms__buf_bytes(&w->b[i]));
    off += (int)ms__buf_bytes(&w->b[i]);
  }
  const char *p = ans + need, *end = ans + n;
  char line[160], extra[2];
  int nt = 0, ln = 0;
  *vlen = 0;
  while (next_line(&p, end, line, sizeof line)) {
    ln++;
    double v = NAN;
    long long k = -1;
    if (ln == 1) {
      if (sscanf(line, "rvv-vlen %lld%1s", &k, extra) != 1 || k < 32 || k > 65536) {
        snprintf(msg, cap, "answer line 1: '%s': expected 'rvv-vlen BITS'", line);
        return -1;
      }
      *vlen = (int)k;
    } else if (!strncmp(line, "rvv-error ", 10)) {
      snprintf(msg, cap, "the artefact failed: %s", line + 10);
      return -1;
    } else if (sscanf(line, "rvv-time %lf%1s", &v, extra) == 1 && isfinite(v) && v > 0 &&
               nt < reps) {
      times[nt++] = v;
    } else if (sscanf(line, "rvv-end %lld%1s", &k, extra) == 1 && k == reps && nt == reps) {
      if (p < end) {
        snprintf(msg, cap, "answer: text after its last line 'rvv-end %d'", reps);
        return -1;
      }
      return 0;
    } else {
      snprintf(msg, cap, "answer line %d: '%s' after %d of %d time lines: expected %s", ln, line,
               nt, reps, nt < reps ? "'rvv-time SECONDS' (finite, positive)"
                                   : "'rvv-end N' (N the repeats asked for)");
      return -1;
    }
  }
  if (ln)
    snprintf(msg, cap, "answer: it ends after %d time lines without 'rvv-end %d'", nt, reps);
  else
    snprintf(msg, cap, "answer: no line after the buffers (expected 'rvv-vlen BITS')");
  return -1;
}

int rv_second_vlen(int vlen) { return vlen > 128 ? vlen / 2 : 256; }

/* What the worker child runs. */
typedef struct rv_run {
  const ms_workload *w;
  const char *exe;
  int vlen, reps, warmup;
  char **runner;     /* NULL: qemu */
  double deadline;   /* rt_now() by which the answer must be whole */
} rv_run;

/* Write in[0..nin) to `to` (then close it) while reading `from` into
** out (at most cap bytes) until its end: both at once, so that a program
** that answers before it has read everything cannot block either side.
** 0 at the answer's end (or cap bytes); 1 when deadline passed first. */
static int pump(int to, const char *in, size_t nin, int from, char *out, size_t cap,
                size_t *got, double deadline) {
  size_t off = 0;
  fcntl(to, F_SETFL, fcntl(to, F_GETFL) | O_NONBLOCK);
  for (;;) {
    struct pollfd p[2] = {{.fd = from, .events = POLLIN}, {.fd = to, .events = POLLOUT}};
    double left = deadline - rt_now();
    if (left <= 0) return 1;
    if (poll(p, to >= 0 ? 2 : 1, (int)(left * 1000) + 1) < 0 && errno != EINTR) return 1;
    if (to >= 0 && p[1].revents) {
      ssize_t k = p[1].revents & POLLOUT ? write(to, in + off, nin - off) : -1;
      if (k > 0) off += (size_t)k;
      if (off == nin || (k < 0 && errno != EAGAIN && errno != EINTR)) close(to), to = -1;
    }
    if (p[0].revents) {
      ssize_t k = read(from, out + *got, cap - *got);
      if (k > 0) *got += (size_t)k;
      if (k == 0 || *got == cap || (k < 0 && errno != EAGAIN && errno != EINTR)) {
        if (to >= 0) close(to);
        close(from);
        return 0;
      }
    }
  }
}

/* Start argv with stdin and stdout on pipes; the child's pid, -1. */
static pid_t start(char *const *argv, int *to, int *from) {
  int a[2], b[2];
  if (pipe(a)) return -1;
  if (pipe(b)) {
    close(a[0]), close(a[1]);
    return -1;
  }
  int keep[2] = {a[0], b[1]};
  pid_t pid = rt_fork(RT_CHILD_UNMAP_SHARED, keep, 2);
  if (pid == 0) {
    if (dup2(keep[0], 0) < 0 || dup2(keep[1], 1) < 0) _exit(127);
    if (keep[0] > 1) close(keep[0]);
    if (keep[1] > 1) close(keep[1]);
    execvp(argv[0], argv);
    fprintf(stderr, "rooftune: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(a[0]), close(b[1]);
  if (pid < 0) {
    close(a[1]), close(b[0]);
    return -1;
  }
  *to = a[1], *from = b[0];
  return pid;
}

/* One run of the artefact at vlen (under qemu, or through the runner),
** its answer checked, into rep (status and message; statistics with a
** runner). 0: verified; -1: rep says why not. */
static int run_once(const rv_run *x, int vlen, ms__report *rep) {
  const ms_workload *w = x->w;
  rep->status = MS_RUNTIME_ERROR;
  char reps[32], warm[32], cpu[64], *argv[RV_MAXARGV + 8];
  int n = 0;
  snprintf(reps, sizeof reps, "%d", x->reps);
  snprintf(warm, sizeof warm, "%d", x->warmup);
  snprintf(cpu, sizeof cpu, "rv64,v=true,vlen=%d,vext_spec=v1.0", vlen);
  if (x->runner) {
    for (char **r = x->runner; *r; r++) argv[n++] = *r;
  } else {
    argv[n++] = RV_QEMU, argv[n++] = "-cpu", argv[n++] = cpu;
  }
  argv[n++] = (char *)x->exe, argv[n++] = reps, argv[n++] = warm, argv[n] = NULL;
  const char *who = x->runner ? "the runner" : RV_QEMU;
  int to, from;
  double t0 = rt_now();
  pid_t pid = start(argv, &to, &from);
  if (pid < 0) {
    snprintf(rep->msg, sizeof rep->msg, "harness: cannot start %s: %s", who, strerror(errno));
    return -1;
  }
  rt_str in = {0};   /* the protocol's input: the header, then every buffer */
  rt_str_printf(&in, "rooftune-rvv-in %d", w->nbuf);
  size_t need = 0;
  for (int i = 0; i < w->nbuf; i++) {
    rt_str_printf(&in, " %zu %d", ms__buf_bytes(&w->b[i]), w->b[i].out);
    need += ms__buf_bytes(&w->b[i]);
  }
  rt_str_printf(&in, "\n");
  size_t head = strlen(in.s), nin = head + need, cap = need + RV_TEXT_CAP, got = 0;
  char *inb = rt_malloc(nin), *ans = rt_malloc(cap);
  memcpy(inb, in.s, head);
  void *bufs[KN_MAXBUF];
  for (size_t i = 0, off = head; i < (size_t)w->nbuf; off += ms__buf_bytes(&w->b[i]), i++) {
    bufs[i] = rt_malloc(ms__buf_bytes(&w->b[i]));
    ms__buf_init(w, i, bufs[i]);   /* inputs, or outputs poisoned */
    memcpy(inb + off, bufs[i], ms__buf_bytes(&w->b[i]));
  }
  int st = 0, rc = -1;
  /* the answer, then the program's end, by the deadline; else it is
  ** killed with its whole group (a runner's scp and ssh too) */
  if (pump(to, inb, nin, from, ans, cap, &got, x->deadline) | ms__reap(pid, x->deadline, &st)) {
    rep->status = MS_TIMEOUT;
    snprintf(rep->msg, sizeof rep->msg, "%s did not answer and end within %.3g s: killed with "
             "its process group", who, x->deadline - t0);
    return -1;   /* the worker ends now: nothing to free */
  }
  double *times = rt_calloc((size_t)x->reps + 1, sizeof *times);
  int got_vlen = 0, bad;
  char why[200];
  rep->verify_s += rt_now() - t0;
  if (WIFSIGNALED(st)) {
    snprintf(rep->msg, sizeof rep->msg, "%s was killed by signal %d (%s) at VLEN %d", who,
             WTERMSIG(st), strsignal(WTERMSIG(st)), vlen);
  } else if (rv_parse_answer(w, ans, got, x->reps, bufs, times, &got_vlen, why, sizeof why)) {
    snprintf(rep->msg, sizeof rep->msg, "%s (exit status %d): %s", who, WEXITSTATUS(st), why);
  } else if (WEXITSTATUS(st)) {
    snprintf(rep->msg, sizeof rep->msg, "%s exited with status %d after a whole answer", who,
             WEXITSTATUS(st));
  } else if (got_vlen != vlen) {
    snprintf(rep->msg, sizeof rep->msg, "%s ran the artefact at VLEN %d, the target is rvv:%d",
             who, got_vlen, vlen);
  } else if ((bad = ms__changed_input(w, bufs)) >= 0) {
    rep->status = MS_WRONG_RESULT;
    snprintf(rep->msg, sizeof rep->msg, "the candidate wrote to its input %s (VLEN %d)",
             w->b[bad].name, vlen);
  } else if (ms__verify(w, bufs, w->ref, &rep->max_err, why, sizeof why)) {
    rep->status = MS_WRONG_RESULT;
    snprintf(rep->msg, sizeof rep->msg, "at VLEN %d: %s", vlen, why);
  } else {
    rep->status = MS_OK;
    if (x->reps > 0) {
      ms_stats_compute(times, x->reps, &rep->t);
      rep->bench_s = rt_now() - t0;
    }
    rc = 0;
  }
  for (int i = 0; i < w->nbuf; i++) free(bufs[i]);
  free(in.s), free(inb), free(ans), free(times);
  return rc;
}

/* The worker child: under qemu the artefact at the instance's VLEN and at
** a second one (rv.h invariant 3: the code is vector-length agnostic), or
** once through the runner; report. */
static void worker(int fd, void *ctx) {
  rv_run *x = ctx;
  ms__report rep;
  memset(&rep, 0, sizeof rep);
  rep.status = MS_RUNTIME_ERROR;
  signal(SIGPIPE, SIG_IGN);
  if (!x->runner && ms__sandbox(rep.msg, sizeof rep.msg)) ms__send(fd, &rep);
  int second = rv_second_vlen(x->vlen);
  if (run_once(x, x->vlen, &rep) || (!x->runner && run_once(x, second, &rep))) ms__send(fd, &rep);
  if (x->runner)
    snprintf(rep.msg, sizeof rep.msg, "verified and timed by the runner at VLEN %d", x->vlen);
  else
    snprintf(rep.msg, sizeof rep.msg, "emulated: verified under " RV_QEMU " at VLEN %d and %d, "
             "not timed", x->vlen, second);
  ms__send(fd, &rep);
}

int rv_measure(ms_workload *w, const char *src, int vlen, const ms_opts *o, ms_result *r) {
  memset(r, 0, sizeof *r);
  if (!src) {
    r->status = MS_INVALID;
    snprintf(r->msg, sizeof r->msg, "the rvv target has no baseline: the kernel's reference is "
             "host C, which runs on no RISC-V artefact");
    return 0;
  }
  char rbuf[1024], *runner[RV_MAXARGV];
  int nr = rv_runner(rbuf, sizeof rbuf, runner);
  if (nr < 0) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s holds more than %d words", RV_RUNNER_ENV, RV_MAXARGV - 4);
    return -1;
  }
  char exe[PATH_MAX];
  rt_str log = {0};
  double t0 = rt_now();
  int rc = rv_build(src, o, exe, sizeof exe, &r->cache_hit, &log);
  r->compile_s = rt_now() - t0;
  if (rc) {
    r->status = MS_COMPILE_ERROR;
    snprintf(r->msg, sizeof r->msg, "compile error: %s", ms__log_excerpt(log.s ? log.s : ""));
    free(log.s);
    return 0;
  }
  free(log.s);
  int reps = o->min_reps > 10 ? o->min_reps : 10;
  if (o->max_reps > 0 && reps > o->max_reps) reps = o->max_reps;
  /* the worker's own deadline, a little before the harness kills it */
  double margin = o->timeout > 10 ? 1 : o->timeout / 10;
  rv_run x = {.w = w, .exe = exe, .vlen = vlen, .reps = nr ? reps : 0,
              .warmup = nr ? o->warmup : 0, .runner = nr ? runner : NULL,
              .deadline = rt_now() + o->timeout - margin};
  ms__report rep;
  if (ms__run_worker(worker, &x, o, &rep)) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", rep.msg);
    return -1;
  }
  r->status = (ms_status)rep.status;
  snprintf(r->msg, sizeof r->msg, "%s", rep.msg);
  r->max_err = rep.max_err;
  r->verify_s = rep.verify_s;
  if (r->status == MS_OK && nr) {
    r->t = rep.t;
    r->bench_s = rep.bench_s;
  } else if (r->status == MS_OK) {
    snprintf(r->origin, sizeof r->origin, "emulated");   /* invariant 3: never a measurement */
  }
  return 0;
}
