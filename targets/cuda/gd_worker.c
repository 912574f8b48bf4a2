/*
** gd_worker.c -- the CUDA row's worker (moved from measure/ms_cuda.c): the
** measurement of a kernel with a device_reference (targets/cuda/gk.h) on
** device dev, on the harness of measure/ms_backend.h. The parent compiles the candidate
** and the kernel's device reference with NVRTC into the compile cache
** (<cache>/<key>.cubin; the key hashes the source, NVRTC's version, the
** options and the architecture) and parses their plans; it never touches
** the driver (gd.h invariant 1). Each pass runs in a fresh worker child
** (ms__run_worker: rt_fork's clean child, killed at the timeout), because a
** faulting kernel poisons its CUDA context. The child:
**   1. makes a context on device dev, loads both cubins, allocates every
**      buffer for the candidate and the reference's outputs apart, copies
**      the workload's inputs in;
**   2. runs the reference plan, then the candidate's once with every
**      output poisoned (MS_POISON), checks the launch and the
**      synchronisation for errors (runtime_error, with CUDA's name of it),
**      copies outputs and reference outputs back and verifies them as the
**      host does (hk.h invariant 3), and checks that no input changed;
**   3. times warmup + repeats with ms_time_loop, each sample one run of
**      the plan between two CUDA events on one stream; with
**      o->flush_cache, a buffer of twice the L2 is written (cuMemsetD32Async)
**      before each sample, outside the events;
**   4. (counter pass, o->counters) runs the plan once more under CUPTI's
**      range profiler (gd_cupti.c), after one warm run.
*/
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gd.h"
#include "gk.h"
#include "../../measure/ms.h"
#include "../../measure/ms_backend.h"

#define MS_POISON_BITS 0x7149f2caU   /* 1.0e30f */

/* ---- the parent: keys, builds ---- */

static void arch_of(int dev, int *maj, int *min) {
  gd_props p;
  rt_err err = {0};
  *maj = *min = 0;
  if (!gd_props_get(dev, &p, &err)) *maj = p.cc_major, *min = p.cc_minor;
}

void gd_build_key(int dev, const char *src, char key[33]) {
  int maj, min;
  arch_of(dev, &maj, &min);
  char head[256], nv[64];
  snprintf(head, sizeof head, "cuda|%s|%s|sm_%d%d|", gd_nvrtc_version(nv, sizeof nv),
           GD_NVRTC_OPTS, maj, min);
  rt_hash h = rt_hash_bytes(RT_HASH_INIT, head, strlen(head));
  rt_hash_hex(rt_hash_bytes(h, src, strlen(src)), key);
}

/* Build src into <cache>/<key>.cubin unless there. 0; 1: compile error
** (log); -1: NVRTC or the cache failed (log says). */
static int cuda_build(const char *src, int dev, const char *cache_dir, int maj, int min,
                      char *path, size_t cap, int *hit, rt_str *log) {
  char dir[PATH_MAX], key[33];
  ms_cache_path(cache_dir, dir, sizeof dir);
  gd_build_key(dev, src, key);
  snprintf(path, cap, "%s/%s.cubin", dir, key);
  struct stat sb;
  if (!stat(path, &sb) && sb.st_size > 0) {
    if (hit) *hit = 1;
    return 0;
  }
  if (hit) *hit = 0;
  void *img = NULL;
  size_t n = 0;
  rt_err err = {0};
  int rc = gd_nvrtc_compile(src, maj, min, NULL, &img, &n, log, &err);
  if (rc) {
    if (rc < 0) rt_str_printf(log, "%s", err.msg);
    return rc;
  }
  char tmp[PATH_MAX + 64];
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  FILE *f = ms_mkdirs(dir) ? NULL : fopen(tmp, "wbe");
  int ok = f && fwrite(img, 1, n, f) == n;
  if (f && fclose(f)) ok = 0;
  free(img);
  if (!ok || rename(tmp, path)) {
    rt_str_printf(log, "compile cache: cannot write %s: %s", tmp, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

typedef struct cubin_job {
  int dev, maj, min;
  const char *cache_dir;
} cubin_job;

static void cubin_build(const char *src, void *ctx) {
  cubin_job *j = ctx;
  char path[PATH_MAX + 64];
  rt_str log = {0};
  int hit;
  cuda_build(src, j->dev, j->cache_dir, j->maj, j->min, path, sizeof path, &hit, &log);
  free(log.s);
}

void gd_prebuild(int dev, const char *const *srcs, int n, const ms_opts *o, int jobs) {
  cubin_job j = {.dev = dev, .cache_dir = o->cache_dir};
  arch_of(dev, &j.maj, &j.min);
  ms_prebuild_with(srcs, n, jobs, cubin_build, &j);
}

/* ---- the child ---- */

typedef struct dev_plan {
  gk_plan plan;
  CUmodule mod;
  CUfunction fn[GK_MAXSTEP];
  CUdeviceptr ws;
} dev_plan;

typedef struct cuda_child {
  const ms_workload *w;
  const ms_opts *o;
  int dev;                             /* the device ordinal */
  const char *cand_cubin, *ref_cubin;  /* cand: "" for a library plan */
  gk_plan cand_plan, ref_plan;
  int pass;                            /* 0: verify + time; 1: counters */
  int nev;
  const char *const *ev;
  /* in the child */
  CUstream s;
  CUdeviceptr buf[KN_MAXBUF], refbuf[KN_MAXBUF], flush;
  size_t flush_words;
  unsigned flush_val;
  dev_plan cand, ref;
  CUresult bad;                        /* first error while timed */
  char bad_msg[200];
} cuda_child;

static int fail(ms__report *rep, int status, const char *what, CUresult r) {
  char b[200];
  rep->status = status;
  snprintf(rep->msg, sizeof rep->msg, "%s: %s", what, gd_errstr(r, b, sizeof b));
  return -1;
}

static int load_plan(ms__report *rep, const char *cubin, dev_plan *d, const char *who,
                     const gd_props *p) {
  if (!cubin[0]) return 0;   /* a library plan */
  FILE *f = fopen(cubin, "rbe");
  if (!f) {
    rep->status = MS_RUNTIME_ERROR;
    snprintf(rep->msg, sizeof rep->msg, "harness: %s: cannot read %s", who, cubin);
    return -1;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *img = rt_malloc((size_t)n + 1);
  size_t got = fread(img, 1, (size_t)n, f);
  fclose(f);
  CUresult r = got == (size_t)n ? gd_cu.cuModuleLoadData(&d->mod, img) : CUDA_ERROR_FILE_NOT_FOUND;
  free(img);
  if (r) return fail(rep, MS_RUNTIME_ERROR, "cuModuleLoadData", r);
  for (int i = 0; i < d->plan.nsteps; i++) {
    gk_step *st = &d->plan.step[i];
    if (st->kind != GK_LAUNCH) continue;
    if ((r = gd_cu.cuModuleGetFunction(&d->fn[i], d->mod, st->name))) {
      char what[96];
      snprintf(what, sizeof what, "%s: no kernel '%.40s'", who, st->name);
      return fail(rep, MS_RUNTIME_ERROR, what, r);
    }
    if (st->smem > (unsigned)p->smem_block_optin) {
      rep->status = MS_RUNTIME_ERROR;
      snprintf(rep->msg, sizeof rep->msg, "%s: kernel %.40s asks %u bytes of shared memory, "
               "the device allows %d per block", who, st->name, st->smem, p->smem_block_optin);
      return -1;
    }
    if (st->smem > 48 * 1024 &&
        (r = gd_cu.cuFuncSetAttribute(d->fn[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      (int)st->smem)))
      return fail(rep, MS_RUNTIME_ERROR, "cuFuncSetAttribute(max dynamic shared memory)", r);
  }
  if (d->plan.workspace && (r = gd_cu.cuMemAlloc(&d->ws, d->plan.workspace)))
    return fail(rep, MS_RUNTIME_ERROR, "workspace cuMemAlloc", r);
  return 0;
}

/* Enqueue one run of plan d over buffers b on stream s. */
static CUresult run_plan(dev_plan *d, const CUdeviceptr *b, CUstream s, const ms_workload *w,
                         char *msg, size_t cap) {
  CUresult r = CUDA_SUCCESS;
  for (int i = 0; i < d->plan.nsteps && !r; i++) {
    gk_step *st = &d->plan.step[i];
    CUdeviceptr ptr[GK_MAXARG];
    void *args[GK_MAXARG];
    for (int a = 0; a < st->nargs && st->kind != GK_LIBRARY; a++) {
      ptr[a] = st->arg[a] == GK_WS ? d->ws : b[st->arg[a]];
      args[a] = &ptr[a];
    }
    if (st->kind == GK_ZERO) {
      size_t words = st->arg[0] == GK_WS ? d->plan.workspace / 4
                                         : ms__buf_bytes(&w->b[st->arg[0]]) / 4;
      r = gd_cu.cuMemsetD32Async(ptr[0], 0, words, s);
    } else if (st->kind == GK_LAUNCH) {
      r = gd_cu.cuLaunchKernel(d->fn[i], st->grid[0], st->grid[1], st->grid[2], st->block[0],
                               st->block[1], st->block[2], st->smem, s, args, NULL);
      if (r) snprintf(msg, cap, "launch of %.40s (grid %u,%u,%u block %u,%u,%u smem %u)",
                      st->name, st->grid[0], st->grid[1], st->grid[2], st->block[0],
                      st->block[1], st->block[2], st->smem);
    } else if (!strcmp(st->name, "cublas_sgemm") && st->nargs == 3) {
      rt_err err = {0};
      if (gd_cublas_sgemm(s, st->arg[0], st->arg[1], st->arg[2], b[0], b[1], b[2], &err)) {
        snprintf(msg, cap, "%.180s", err.msg);
        r = CUDA_ERROR_UNKNOWN;
      }
    } else {
      snprintf(msg, cap, "unknown library routine '%.40s' (or wrong arguments)", st->name);
      r = CUDA_ERROR_NOT_SUPPORTED;
    }
  }
  return r;
}

static void run_cand(void *ctx) {
  cuda_child *c = ctx;
  if (c->bad) return;
  CUresult r = run_plan(&c->cand, c->buf, c->s, c->w, c->bad_msg, sizeof c->bad_msg);
  if (!r) r = gd_cu.cuStreamSynchronize(c->s);
  if (r) c->bad = r;
}

static CUevent ev0, ev1;
static double timed_sample(void *ctx) {
  cuda_child *c = ctx;
  if (c->bad) return 0;
  CUresult r = CUDA_SUCCESS;
  if (c->flush_words) r = gd_cu.cuMemsetD32Async(c->flush, ++c->flush_val, c->flush_words, c->s);
  if (!r) r = gd_cu.cuEventRecord(ev0, c->s);
  if (!r) r = run_plan(&c->cand, c->buf, c->s, c->w, c->bad_msg, sizeof c->bad_msg);
  if (!r) r = gd_cu.cuEventRecord(ev1, c->s);
  if (!r) r = gd_cu.cuEventSynchronize(ev1);
  float ms = 0;
  if (!r) r = gd_cu.cuEventElapsedTime(&ms, ev0, ev1);
  if (r) {
    c->bad = r;
    return 0;
  }
  return 1e-3 * (double)ms;
}

static void child_main(int fd, void *ctx) {
  cuda_child *c = ctx;
  const ms_workload *w = c->w;
  ms__report rep;
  memset(&rep, 0, sizeof rep);
  rep.status = MS_OK;
  rt_err err = {0};
  CUcontext cx;
  gd_props p;
  CUresult r;
  if (gd_props_get(c->dev, &p, &err) || gd_context(c->dev, &cx, &err)) {
    rep.status = MS_RUNTIME_ERROR;
    snprintf(rep.msg, sizeof rep.msg, "harness: %.240s", err.msg);
    ms__send(fd, &rep);
  }
  c->cand.plan = c->cand_plan;
  c->ref.plan = c->ref_plan;
  if (load_plan(&rep, c->ref_cubin, &c->ref, "reference", &p) ||
      load_plan(&rep, c->cand_cubin, &c->cand, "candidate", &p))
    ms__send(fd, &rep);
  if ((r = gd_cu.cuStreamCreate(&c->s, CU_STREAM_NON_BLOCKING)) ||
      (r = gd_cu.cuEventCreate(&ev0, CU_EVENT_DEFAULT)) ||
      (r = gd_cu.cuEventCreate(&ev1, CU_EVENT_DEFAULT))) {
    fail(&rep, MS_RUNTIME_ERROR, "harness: stream/events", r);
    ms__send(fd, &rep);
  }
  for (int i = 0; i < w->nbuf; i++) {
    size_t bytes = ms__buf_bytes(&w->b[i]);
    if ((r = gd_cu.cuMemAlloc(&c->buf[i], bytes)) ||
        (w->b[i].out && (r = gd_cu.cuMemAlloc(&c->refbuf[i], bytes)))) {
      fail(&rep, MS_RUNTIME_ERROR, "harness: cuMemAlloc of the workload", r);
      ms__send(fd, &rep);
    }
    if (!w->b[i].out) {
      c->refbuf[i] = c->buf[i];
      if ((r = gd_cu.cuMemcpyHtoD(c->buf[i], w->in[i], bytes))) {
        fail(&rep, MS_RUNTIME_ERROR, "harness: cuMemcpyHtoD", r);
        ms__send(fd, &rep);
      }
    }
  }
  /* The reference, then the candidate once on poisoned outputs. */
  double t0 = rt_now();
  char msg[200] = "";
  if ((r = run_plan(&c->ref, c->refbuf, c->s, w, msg, sizeof msg)) ||
      (r = gd_cu.cuStreamSynchronize(c->s))) {
    char what[256];
    snprintf(what, sizeof what, "harness: the device reference failed (%.100s)", msg);
    fail(&rep, MS_RUNTIME_ERROR, what, r);
    ms__send(fd, &rep);
  }
  for (int i = 0; i < w->nbuf; i++)
    if (w->b[i].out &&
        (r = gd_cu.cuMemsetD32(c->buf[i], MS_POISON_BITS, ms__buf_bytes(&w->b[i]) / 4))) {
      fail(&rep, MS_RUNTIME_ERROR, "harness: poisoning outputs", r);
      ms__send(fd, &rep);
    }
  run_cand(c);
  if (c->bad) {
    char what[256];
    snprintf(what, sizeof what, "%s", c->bad_msg[0] ? c->bad_msg : "run");
    fail(&rep, MS_RUNTIME_ERROR, what, c->bad);
    ms__send(fd, &rep);
  }
  void *out[KN_MAXBUF] = {0}, *ref[KN_MAXBUF] = {0};
  for (int i = 0; i < w->nbuf && rep.status == MS_OK; i++) {
    size_t bytes = ms__buf_bytes(&w->b[i]);
    out[i] = rt_malloc(bytes);
    if ((r = gd_cu.cuMemcpyDtoH(out[i], c->buf[i], bytes))) {
      fail(&rep, MS_RUNTIME_ERROR, "cuMemcpyDtoH", r);
      break;
    }
    if (w->b[i].out) {
      ref[i] = rt_malloc(bytes);
      if ((r = gd_cu.cuMemcpyDtoH(ref[i], c->refbuf[i], bytes))) {
        fail(&rep, MS_RUNTIME_ERROR, "cuMemcpyDtoH", r);
        break;
      }
    } else if (memcmp(out[i], w->in[i], bytes)) {
      rep.status = MS_WRONG_RESULT;
      snprintf(rep.msg, sizeof rep.msg, "the candidate wrote to its input %s", w->b[i].name);
    }
  }
  int host_ref = 0;
  for (int i = 0; i < w->nbuf; i++) host_ref |= w->b[i].out && w->ref[i];
  if (rep.status == MS_OK && host_ref) {
    /* The device reference against the host's (small workloads). */
    double e;
    if (ms__verify(w, ref, w->ref, &e, rep.msg, sizeof rep.msg)) {
      char m[256];
      snprintf(m, sizeof m, "harness: the device reference disagrees with the host reference: %.180s",
               rep.msg);
      snprintf(rep.msg, sizeof rep.msg, "%.255s", m);
      rep.status = MS_RUNTIME_ERROR;
    }
  }
  if (rep.status == MS_OK) {
    if (ms__verify(w, out, ref, &rep.max_err, rep.msg, sizeof rep.msg))
      rep.status = MS_WRONG_RESULT;
  }
  rep.verify_s = rt_now() - t0;
  if (rep.status != MS_OK) ms__send(fd, &rep);
  if (c->pass == 0) {
    if (c->o->flush_cache) {
      c->flush_words = (size_t)2 * (size_t)p.l2_bytes / 4;
      if ((r = gd_cu.cuMemAlloc(&c->flush, c->flush_words * 4))) {
        fail(&rep, MS_RUNTIME_ERROR, "harness: the L2 flush buffer", r);
        ms__send(fd, &rep);
      }
    }
    t0 = rt_now();
    ms_time_loop(timed_sample, c, c->o, &rep.t);
    rep.bench_s = rt_now() - t0;
    if (c->bad) {
      char what[256];
      snprintf(what, sizeof what, "while timed: %s", c->bad_msg[0] ? c->bad_msg : "run");
      fail(&rep, MS_RUNTIME_ERROR, what, c->bad);
      memset(&rep.t, 0, sizeof rep.t);
    }
  } else {
    run_cand(c);
    if (gd_cupti_count(c->ev, c->nev, run_cand, c, rep.ev, &err)) {
      rep.status = MS_RUNTIME_ERROR;
      snprintf(rep.msg, sizeof rep.msg, "counters: %.240s", err.msg);
    } else if (c->bad) {
      fail(&rep, MS_RUNTIME_ERROR, "counter pass", c->bad);
    }
  }
  ms__send(fd, &rep);
}

/* ---- the row's measure ---- */

int gd_measure(int dev, ms_workload *w, const char *src, const ms_opts *o, ms_result *r) {
  memset(r, 0, sizeof *r);
  const kn_kernel *k = w->k;
  rt_err err = {0};
  gd_props p;
  const ms_opts *od = o;
  if (gd_props_get(dev, &p, &err)) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "no CUDA device: %.480s", err.msg);
    return -1;
  }
  /* Metrics: CUPTI's names (the PAPI parser checks the shape). */
  char ev[MS_MAXEV][MS_EVNAME];
  const char *evp[MS_MAXEV];
  int nev = 0;
  if (o->counters) {
    if (o->events) {
      if ((nev = ms_parse_events(o->events, NULL, ev, MS_MAXEV, &err)) < 0) {
        r->status = MS_INVALID;
        snprintf(r->msg, sizeof r->msg, "events: %.500s", err.msg);
        return 0;
      }
    } else {
      for (; gd_cupti_default_metrics[nev] && nev < MS_MAXEV; nev++)
        snprintf(ev[nev], sizeof ev[nev], "%s", gd_cupti_default_metrics[nev]);
    }
    for (int i = 0; i < nev; i++) evp[i] = ev[i];
  }
  char *refsrc = k->device_reference(&w->pb);
  char *own = src ? NULL : rt_strdup(refsrc);   /* src NULL: the reference itself */
  if (!src) src = own;
  cuda_child c = {.w = w, .o = od, .dev = dev, .ev = evp, .nev = nev};
  char cand[PATH_MAX + 64] = "", refc[PATH_MAX + 64] = "";
  rt_str log = {0};
  int rc = 0;
  double t0 = rt_now();
  if (gk_plan_parse(refsrc, w->nbuf, &c.ref_plan, &err) ||
      cuda_build(refsrc, dev, o->cache_dir, p.cc_major, p.cc_minor, refc, sizeof refc, NULL, &log)) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "harness: the device reference does not build: %.400s",
             err.msg[0] ? err.msg : log.s ? log.s : "");
    rc = -1;
    goto out;
  }
  free(log.s);
  log = (rt_str){0};
  if (gk_plan_parse(src, w->nbuf, &c.cand_plan, &err)) {
    r->status = MS_COMPILE_ERROR;
    snprintf(r->msg, sizeof r->msg, "compile error: %.480s", err.msg);
    goto out;
  }
  int lib = c.cand_plan.step[c.cand_plan.nsteps - 1].kind == GK_LIBRARY;
  int b = lib ? 0 : cuda_build(src, dev, o->cache_dir, p.cc_major, p.cc_minor, cand, sizeof cand,
                              &r->cache_hit, &log);
  r->compile_s = rt_now() - t0;
  if (b) {
    r->status = MS_COMPILE_ERROR;
    const char *l = log.s ? log.s : "";
    const char *e = strstr(l, "error");
    while (e && e > l && e[-1] != '\n') e--;
    snprintf(r->msg, sizeof r->msg, "compile error: %.490s", e ? e : l);
    goto out;
  }
  c.cand_cubin = cand;
  c.ref_cubin = refc;
  ms__report rep;
  if (ms__run_worker(child_main, &c, od, &rep)) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", rep.msg);
    rc = -1;
    goto out;
  }
  r->status = (ms_status)rep.status;
  snprintf(r->msg, sizeof r->msg, "%s", rep.msg);
  r->t = rep.t;
  r->max_err = rep.max_err;
  r->verify_s = rep.verify_s;
  r->bench_s = rep.bench_s;
  if (r->status != MS_OK || !o->counters) goto out;
  c.pass = 1;
  if (ms__run_worker(child_main, &c, od, &rep)) {
    snprintf(r->msg, sizeof r->msg, "counter pass: %s", rep.msg);
    rc = -1;
    goto out;
  }
  if (rep.status != MS_OK) {   /* the timing stands; the counts are missing */
    snprintf(r->msg, sizeof r->msg, "counter pass: %s: %.200s",
             ms_status_name((ms_status)rep.status), rep.msg);
    goto out;
  }
  r->counters = 1;
  r->nev = nev;
  memcpy(r->ev_name, ev, sizeof ev[0] * (size_t)nev);
  memcpy(r->ev_val, rep.ev, sizeof rep.ev[0] * (size_t)nev);
out:
  free(log.s);
  free(refsrc);
  free(own);
  return rc;
}
