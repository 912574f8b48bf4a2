/*
** hw_worker.c -- the host's worker (moved from measure/ms_worker.c): the
** candidate is C source built into a shared object through the compile
** cache (ms_build), run in the harness's isolated child (ms__run_worker,
** measure/ms_backend.h). The child optionally pins itself to a CPU,
** enters the sandbox (ms_isolate.c), sets OPENBLAS_CORETYPE=SkylakeX when
** unset and the CPU has AVX-512 (Debian's OpenBLAS misdetects this VM's
** CPU as Prescott; PLATFORM.md: the fair baseline), dlopens the .so, moves
** to /, runs rk_run once on fresh copies of the inputs with every output
** poisoned (MS_POISON: an output the kernel does not write, or accumulates
** into, fails verification), checks that no input changed, verifies, then
** times warmup + repeats with ms_time_loop and checks the inputs again.
** rk_run is assumed to overwrite its outputs and not modify its inputs, so
** buffers are not reset between repeats. With o->flush_cache, a buffer of
** twice the last-level cache (sysfs; capped at 1 GiB) is written between
** repeats, outside the timing. The counter pass (o->counters, when
** hw_papi_available()) is a second worker that runs rk_run once to warm
** up, then once under PAPI.
*/
#include "hw.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../measure/ms.h"
#include "../../measure/ms_backend.h"

#define FLUSH_MAX ((size_t)1 << 30)
#define buf_bytes ms__buf_bytes

typedef ms__report report;

typedef int (*rk_fn)(float *const *bufs);

typedef struct runctx {
  rk_fn run;
  float **bufs;
  volatile char *flush;
  size_t flush_n;
  int bad_rc;   /* first nonzero return of rk_run while timing */
} runctx;

/* The kernel's own reference as a candidate (hw_measure with src NULL);
** set in the worker child only, which is single-threaded here. */
static const ms_workload *reference_of;
static int run_reference(float *const *bufs) {
  reference_of->k->reference(&reference_of->pb, bufs);
  return 0;
}

static void run_once(void *c) {
  runctx *x = c;
  int rc = x->run(x->bufs);
  if (rc && !x->bad_rc) x->bad_rc = rc;
}

static double timed_sample(void *c) {
  runctx *x = c;
  for (size_t i = 0; i < x->flush_n; i += 64) x->flush[i]++;
  double t0 = rt_now();
  run_once(x);
  return rt_now() - t0;
}

/* Size in bytes of the highest-level cache of cpu0 (sysfs), or 64 MiB. */
static size_t llc_bytes(void) {
  hw_cache hc[16];
  int n = hw_caches(hc, 16), best_level = 0;
  size_t best = (size_t)64 << 20;
  for (int i = 0; i < n; i++)
    if (hc[i].bytes > 0 && hc[i].level > best_level)
      best_level = hc[i].level, best = (size_t)hc[i].bytes;
  return best;
}

enum { PASS_TIME, PASS_COUNT };

/* The first input of w that bufs no longer hold exactly (its index), or
** -1: all unchanged (the contract: rk_run does not modify its inputs). */
static int changed_input(const ms_workload *w, float *const *bufs) {
  return ms__changed_input(w, (void *const *)bufs);
}

/* Build the report of one pass in the child (never returns). */
static void child_main(int fd, const ms_workload *w, const char *so,
                       const ms_opts *o, int pass, char ev[][MS_EVNAME], int nev) {
  report rep;
  memset(&rep, 0, sizeof rep);
  rep.status = MS_OK;
  void *h = NULL;
  rk_fn run = NULL;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (o->pin_cpu >= 0) CPU_SET(o->pin_cpu, &cpus);
  if (o->pin_cpu >= 0 && sched_setaffinity(0, sizeof cpus, &cpus)) {
    rep.status = MS_RUNTIME_ERROR;
    snprintf(rep.msg, sizeof rep.msg, "harness: cannot pin to CPU %d: %s",
             o->pin_cpu, strerror(errno));
  } else if (ms__sandbox(rep.msg, sizeof rep.msg)) {
    rep.status = MS_RUNTIME_ERROR;
  } else {
    if (__builtin_cpu_supports("avx512f")) setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    if (!so[0]) {
      reference_of = w;
      run = run_reference;
    } else if (!(h = dlopen(so, RTLD_NOW | RTLD_LOCAL))) {
      rep.status = MS_RUNTIME_ERROR;
      snprintf(rep.msg, sizeof rep.msg, "dlopen: %s", dlerror());
    } else if (!(*(void **)&run = dlsym(h, "rk_run"))) {
      rep.status = MS_RUNTIME_ERROR;
      snprintf(rep.msg, sizeof rep.msg, "the candidate defines no rk_run");
    }
    if (chdir("/")) {}   /* relative paths lead nowhere of the caller's */
  }
  float *bufs[KN_MAXBUF];
  runctx x = {.run = run, .bufs = bufs};
  int bad;
  if (rep.status == MS_OK) {
    for (int i = 0; i < w->nbuf; i++) {
      size_t bytes = (buf_bytes(&w->b[i]) + 63) / 64 * 64;
      bufs[i] = aligned_alloc(64, bytes);
      ms__buf_init(w, i, bufs[i]);   /* inputs, or outputs poisoned */
    }
    double t0 = rt_now();
    run_once(&x);
    if (x.bad_rc) {
      rep.status = MS_RUNTIME_ERROR;
      snprintf(rep.msg, sizeof rep.msg, "rk_run returned %d", x.bad_rc);
    } else if ((bad = changed_input(w, bufs)) >= 0) {
      rep.status = MS_WRONG_RESULT;
      snprintf(rep.msg, sizeof rep.msg, "the candidate wrote to its input %s", w->b[bad].name);
    } else {
      if (ms__verify(w, (void *const *)bufs, w->ref, &rep.max_err, rep.msg, sizeof rep.msg))
        rep.status = MS_WRONG_RESULT;
    }
    rep.verify_s = rt_now() - t0;
  }
  if (rep.status == MS_OK && pass == PASS_TIME) {
    if (o->flush_cache) {
      x.flush_n = 2 * llc_bytes() < FLUSH_MAX ? 2 * llc_bytes() : FLUSH_MAX;
      x.flush = rt_calloc(1, x.flush_n);
    }
    double t0 = rt_now();
    ms_time_loop(timed_sample, &x, o, &rep.t);
    rep.bench_s = rt_now() - t0;
    if (x.bad_rc) {
      rep.status = MS_RUNTIME_ERROR;
      snprintf(rep.msg, sizeof rep.msg, "rk_run returned %d while timed", x.bad_rc);
      memset(&rep.t, 0, sizeof rep.t);
    } else if ((bad = changed_input(w, bufs)) >= 0) {   /* the timed runs were not of this work */
      rep.status = MS_WRONG_RESULT;
      snprintf(rep.msg, sizeof rep.msg, "the candidate wrote to its input %s while timed",
               w->b[bad].name);
      memset(&rep.t, 0, sizeof rep.t);
    }
  } else if (rep.status == MS_OK) {
    rt_err err = {0};
    run_once(&x);
    long long vals[MS_MAXEV];
    if (hw_papi_count(ev, nev, run_once, &x, vals, &err)) {
      rep.status = MS_RUNTIME_ERROR;
      snprintf(rep.msg, sizeof rep.msg, "counters: %.240s", err.msg);
    }
    for (int i = 0; i < nev; i++) rep.ev[i] = (double)vals[i];
  }
  ms__send(fd, &rep);
}

/* The host worker's child: one pass over one shared object. */
typedef struct host_child {
  const ms_workload *w;
  const char *so;
  const ms_opts *o;
  int pass, nev;
  char (*ev)[MS_EVNAME];
} host_child;

static void host_child_main(int fd, void *ctx) {
  host_child *h = ctx;
  child_main(fd, h->w, h->so, h->o, h->pass, h->ev, h->nev);
}

static int run_worker(const ms_workload *w, const char *so, const ms_opts *o,
                      int pass, char ev[][MS_EVNAME], int nev, report *rep) {
  host_child h = {w, so, o, pass, nev, ev};
  return ms__run_worker(host_child_main, &h, o, rep);
}

int hw_measure(ms_workload *w, const char *src, const char *ldflags, const ms_opts *o,
               ms_result *r) {
  memset(r, 0, sizeof *r);
  char ev[MS_MAXEV][MS_EVNAME];
  int nev = 0;
  if (o->counters) {
    rt_err err = {0};
    if ((nev = ms_parse_events(o->events, hw_papi_default_events, ev, MS_MAXEV, &err)) < 0) {
      r->status = MS_INVALID;
      snprintf(r->msg, sizeof r->msg, "events: %.500s", err.msg);
      return 0;
    }
  }
  if (ms__ref_missing(w)) {   /* a kernel without a host reference: not a host kernel */
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "harness: kernel %s has no host reference to verify against",
             w->k->name);
    return -1;
  }
  char so[PATH_MAX] = "";   /* "": the reference itself */
  rt_str log = {0};
  double t0 = rt_now();
  int rc = src ? ms_build(src, ldflags, o, so, sizeof so, &r->cache_hit, &log) : 0;
  r->compile_s = rt_now() - t0;
  if (rc) {
    r->status = MS_COMPILE_ERROR;
    snprintf(r->msg, sizeof r->msg, "compile error: %s", ms__log_excerpt(log.s));
    free(log.s);
    return 0;
  }
  free(log.s);
  report rep;
  if (run_worker(w, so, o, PASS_TIME, ev, nev, &rep)) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", rep.msg);
    return -1;
  }
  r->status = (ms_status)rep.status;
  snprintf(r->msg, sizeof r->msg, "%s", rep.msg);
  r->t = rep.t;
  r->max_err = rep.max_err;
  r->verify_s = rep.verify_s;
  r->bench_s = rep.bench_s;
  if (r->status != MS_OK || !o->counters || !hw_papi_available(NULL))
    return 0;
  if (run_worker(w, so, o, PASS_COUNT, ev, nev, &rep)) {
    snprintf(r->msg, sizeof r->msg, "counter pass: %s", rep.msg);
    return -1;
  }
  if (rep.status != MS_OK) {   /* timing stands; the counts are missing */
    snprintf(r->msg, sizeof r->msg, "counter pass: %s: %s",
             ms_status_name((ms_status)rep.status), rep.msg);
    return 0;
  }
  r->counters = 1;
  r->nev = nev;
  memcpy(r->ev_name, ev, sizeof ev[0] * (size_t)nev);
  for (int i = 0; i < nev; i++) r->ev_val[i] = (double)rep.ev[i];
  return 0;
}
