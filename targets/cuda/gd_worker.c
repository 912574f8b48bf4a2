/*
** gd_worker.c -- the CUDA row's worker (moved from measure/ms_cuda.c): the
** measurement of a kernel with a device_reference (targets/cuda/gk.h) on
** device dev, on the harness of measure/ms_backend.h. The parent parses
** the plans, compiles the candidate and the kernel's device reference with
** NVRTC (the plan's options and entries) into the compile cache
** (<cache>/<key>.cubin, and <key>.names: the entries' lowered names); it
** never touches the driver (gd.h invariant 1). Each pass of gd_measure
** runs in a fresh worker child (ms__run_worker: rt_fork's clean child,
** killed at the timeout), because a faulting kernel poisons its CUDA
** context. The child:
**   1. makes a context on device dev, loads the cubins, finds every
**      launch's function (an entry's by its lowered name), checks the
**      device's limits for every launch (invalid: gk.h ABI point 2),
**      allocates every vector (apart for the reference's outputs),
**      copies the inputs and each output's initial contents in (poisoned,
**      or an inout output's initial values: ms__buf_init), copies each
**      symbol's buffer into its module's global;
**   2. built-in kernels: runs the reference plan, then the candidate's
**      once; kernels whose reference is NULL: the candidate's once, its
**      reference outputs having been computed once per workload by the
**      same child running the reference configuration and sending its
**      outputs back (ms__ref_once, kept in the compile cache); it checks
**      the launch and the synchronisation for errors (runtime_error, with
**      CUDA's name of it), checks that no input changed and verifies the
**      outputs (kn.h invariant 2): on the GPU (gd_check.c: against device
**      copies of the initial contents and of the references, which also
**      restore the vectors between a batch's candidates), else, and for
**      an output that fails, copied back and on the host;
**   3. times warmup + repeats with ms_time_loop, each sample one run of
**      the plan between two CUDA events on one stream; with
**      o->flush_cache, a buffer of twice the L2 is written (cuMemsetD32Async)
**      before each sample, outside the events;
**   4. (counter pass, o->counters) runs the plan once more under CUPTI's
**      range profiler (gd_cupti.c), after one warm run.
** Steps 1 to 3 are open_device (the context, the vectors, the built-ins'
** reference run once) and measure_one (one candidate: its module, limits
** and symbols, the checked run, verification, timing; its module unloaded
** after), so that the batch worker (gd_measure_batch, ms__run_batch) runs
** them for many candidates in one context: the outputs written again
** before each (the inputs too after one that was not ok); a candidate
** that fails with a CUDA error (its context may be poisoned) ends the
** child, and a new context serves the rest.
** Scalars (sN) are passed by value from the workload's one element.
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

/* The build key of src for sm_<maj><min> (gd_build_key). */
static void key_for(const char *src, int maj, int min, char key[33]) {
  char head[256], nv[64];
  snprintf(head, sizeof head, "cuda|%s|%s|sm_%d%d|", gd_nvrtc_version(nv, sizeof nv),
           GD_NVRTC_OPTS, maj, min);
  rt_hash h = rt_hash_bytes(RT_HASH_INIT, head, strlen(head));
  rt_hash_hex(rt_hash_bytes(h, src, strlen(src)), key);
}

void gd_build_key_arch(const char *src, int maj, int min, char key[33]) {
  key_for(src, maj, min, key);
}

void gd_build_key(int dev, const char *src, char key[33]) {
  int maj, min;
  arch_of(dev, &maj, &min);
  key_for(src, maj, min, key);
}

/* Read the lowered names of plan's entries from path; 0 or -1. */
static int read_names(const char *path, gk_plan *plan) {
  FILE *f = fopen(path, "re");
  if (!f) return -1;
  int i = 0;
  char line[sizeof plan->entry[0].lowered + 2];
  for (; i < plan->nentry && fgets(line, sizeof line, f); i++) {
    size_t len = strcspn(line, "\n");
    if (!len || line[len] != '\n' || len >= sizeof plan->entry[i].lowered) break;
    memcpy(plan->entry[i].lowered, line, len);
    plan->entry[i].lowered[len] = 0;
  }
  int extra = fgetc(f) != EOF;
  fclose(f);
  return i == plan->nentry && !extra ? 0 : -1;
}

/* Write text to path through a temporary file and rename; 0 or -1. */
static int write_file(const char *path, const void *data, size_t n, rt_str *log) {
  char tmp[PATH_MAX + 64];
  snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
  FILE *f = fopen(tmp, "wbe");
  int ok = f && fwrite(data, 1, n, f) == n;
  if (f && fclose(f)) ok = 0;
  if (!ok || rename(tmp, path)) {
    rt_str_printf(log, "compile cache: cannot write %s: %s", tmp, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

/* The compiler's log of a source that did not compile, kept as <key>.err
** (a compile error is the compiler's answer to the key, as a cubin is:
** found again, it is not compiled again -- the batch's serial build used
** to recompile every failure its parallel prebuild had just found). 1
** with the log appended when path holds one; 0 when it does not. */
static int read_error(const char *path, rt_str *log) {
  FILE *f = fopen(path, "re");
  if (!f) return 0;
  char buf[4096];
  size_t n;
  rt_str text = {0};
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) rt_str_printf(&text, "%.*s", (int)n, buf);
  fclose(f);
  if (log && text.s) rt_str_printf(log, "%s", text.s);
  int ok = text.s != NULL;   /* an empty file is not a log: build again */
  free(text.s);
  return ok;
}

int gd_cubin_build(const char *src, gk_plan *plan, int maj, int min, const char *cache_dir,
                   char *path, size_t cap, int *hit, rt_str *log) {
  char dir[PATH_MAX], key[33], names[PATH_MAX + 64], errs[PATH_MAX + 64];
  ms_cache_path(cache_dir, dir, sizeof dir);
  key_for(src, maj, min, key);
  snprintf(path, cap, "%s/%s.cubin", dir, key);
  snprintf(names, sizeof names, "%s/%s.names", dir, key);
  snprintf(errs, sizeof errs, "%s/%s.err", dir, key);
  struct stat sb;
  if (!stat(path, &sb) && sb.st_size > 0 && (!plan->nentry || !read_names(names, plan))) {
    if (hit) *hit = 1;
    return 0;
  }
  if (read_error(errs, log)) {
    if (hit) *hit = 1;
    return 1;
  }
  if (hit) *hit = 0;
  void *img = NULL;
  size_t n = 0;
  rt_err err = {0};
  const char *exprs[GK_MAXENTRY];
  char *lowered[GK_MAXENTRY] = {0};
  for (int i = 0; i < plan->nentry; i++) exprs[i] = plan->entry[i].expr;
  size_t had = log && log->s ? strlen(log->s) : 0;
  int rc = gd_nvrtc_compile_names(src, maj, min, plan->options, exprs, plan->nentry, &img, &n,
                                  lowered, log, &err);
  if (rc < 0) rt_str_printf(log, "%s", err.msg);
  if (rc > 0 && log && log->s && log->s[had] && !ms_mkdirs(dir))   /* NVRTC's failures are not kept */
    write_file(errs, log->s + had, strlen(log->s + had), log);
  if (rc) return rc;
  rt_str text = {0};
  for (int i = 0; i < plan->nentry; i++) {
    snprintf(plan->entry[i].lowered, sizeof plan->entry[i].lowered, "%s", lowered[i]);
    if (strlen(lowered[i]) >= sizeof plan->entry[i].lowered) rc = 1;
    rt_str_printf(&text, "%s\n", lowered[i]);
    free(lowered[i]);
  }
  if (rc) {
    rt_str_printf(log, "rooftune.cu: error: a lowered name is longer than %zu characters",
                  sizeof plan->entry[0].lowered - 1);
  } else if (ms_mkdirs(dir)) {
    rt_str_printf(log, "compile cache: cannot make %s: %s", dir, strerror(errno));
    rc = -1;
  } else if ((plan->nentry && write_file(names, text.s, strlen(text.s), log)) ||
             write_file(path, img, n, log)) {
    rc = -1;
  }
  free(text.s);
  free(img);
  return rc;
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
  rt_err err = {0};
  gk_plan *plan = rt_malloc(sizeof *plan);
  if (!gk_plan_parse(src, KN_MAXBUF, plan, &err))   /* else the measurement says why */
    gd_cubin_build(src, plan, j->maj, j->min, j->cache_dir, path, sizeof path, &hit, &log);
  free(plan);
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
  const char *cand_cubin, *ref_cubin;  /* cand: "" for a library plan; ref: "" for none */
  gk_plan *cand_plan, *ref_plan;
  int pass;                            /* 0: verify + time; 1: counters */
  int reference;                       /* 1: the reference run of ms__ref_once */
  int nev;
  const char *const *ev;
  /* in the child */
  CUstream s;
  CUdeviceptr buf[KN_MAXBUF], refbuf[KN_MAXBUF], flush;
  void *out[KN_MAXBUF];                /* the candidate's vectors, copied back */
  void *refout[KN_MAXBUF];             /* the reference plan's outputs, copied back */
  /* Verification on the GPU (gd_check.c), when checks: every vector's
  ** contents before the checked run (pristine: restored from there, and
  ** the inputs compared with it) and each output's reference (devref). */
  int checks, pristine;
  gd_check ck;
  CUdeviceptr init[KN_MAXBUF], devref[KN_MAXBUF];
  size_t flush_words;
  unsigned flush_val;
  dev_plan cand, ref;
  CUresult bad;                        /* first error while timed */
  char bad_msg[200];
} cuda_child;

static int fail(ms__report *rep, int status, const char *what, CUresult r) {
  char b[200];
  rep->status = status;
  snprintf(rep->msg, sizeof rep->msg, "%.220s: %s", what, gd_errstr(r, b, sizeof b));
  return -1;
}

/* End the child with rep: the report alone, or in the reference run the
** report and the outputs (ms__send_outputs). */
__attribute__((noreturn)) static void finish(cuda_child *c, int fd, ms__report *rep) {
  if (c->reference) ms__send_outputs(fd, rep, c->w, c->out);
  ms__send(fd, rep);
}

/* The device's limits against launch st of function fn (gk.h ABI point
** 2): 0, or -1 with rep invalid (the limit and both numbers) or
** runtime_error (a query failed). */
static int check_limits(ms__report *rep, const gk_step *st, CUfunction fn, const gd_props *p,
                        const char *who) {
  int max_threads = 0, static_smem = 0;
  CUresult r;
  if ((r = gd_cu.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn)) ||
      (r = gd_cu.cuFuncGetAttribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn)))
    return fail(rep, MS_RUNTIME_ERROR, "harness: cuFuncGetAttribute", r);
  unsigned long long threads =
      (unsigned long long)st->block[0] * st->block[1] * st->block[2];
  unsigned long long smem = (unsigned long long)st->smem + (unsigned long long)static_smem;
  static const char xyz[] = "xyz";
  char pre[64] = "";   /* the candidate's limits need no name */
  if (strcmp(who, "candidate")) snprintf(pre, sizeof pre, "%.40s: ", who);
  rep->status = MS_INVALID;
  for (int d = 0; d < 3; d++) {
    if (st->block[d] > (unsigned)p->max_block[d]) {
      snprintf(rep->msg, sizeof rep->msg, "%slaunch %.40s: block %c dimension %u, over the "
               "device's %d (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_%c)", pre, st->name, xyz[d],
               st->block[d], p->max_block[d], xyz[d] - 32);
      return -1;
    }
    if (st->grid[d] > (unsigned)p->max_grid[d]) {
      snprintf(rep->msg, sizeof rep->msg, "%slaunch %.40s: grid %c dimension %u, over the "
               "device's %d (CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_%c)", pre, st->name, xyz[d],
               st->grid[d], p->max_grid[d], xyz[d] - 32);
      return -1;
    }
  }
  if (threads > (unsigned long long)max_threads) {
    snprintf(rep->msg, sizeof rep->msg, "%slaunch %.40s: a block of %u x %u x %u = %llu "
             "threads, over the kernel's %d (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: its "
             "registers included)", pre, st->name, st->block[0], st->block[1], st->block[2],
             threads, max_threads);
    return -1;
  }
  if (smem > (unsigned long long)p->smem_block_optin) {
    snprintf(rep->msg, sizeof rep->msg, "%slaunch %.40s: %llu bytes of shared memory (%u "
             "dynamic + %d static), over the device's %d per block (opt-in maximum)", pre,
             st->name, smem, st->smem, static_smem, p->smem_block_optin);
    return -1;
  }
  rep->status = MS_OK;
  return 0;
}

/* Load cubin into d: functions (entries by their lowered names), the
** device's limits, the shared-memory opt-in, the workspace. */
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
  char *img = rt_malloc((size_t)(n > 0 ? n : 0) + 1);
  size_t got = n > 0 ? fread(img, 1, (size_t)n, f) : 0;
  fclose(f);
  CUresult r = n > 0 && got == (size_t)n ? gd_cu.cuModuleLoadData(&d->mod, img)
                                         : CUDA_ERROR_FILE_NOT_FOUND;
  free(img);
  if (r) return fail(rep, MS_RUNTIME_ERROR, "cuModuleLoadData", r);
  for (int i = 0; i < d->plan.nsteps; i++) {
    gk_step *st = &d->plan.step[i];
    if (st->kind != GK_LAUNCH) continue;
    const char *fname = st->entry >= 0 ? d->plan.entry[st->entry].lowered : st->name;
    if ((r = gd_cu.cuModuleGetFunction(&d->fn[i], d->mod, fname))) {
      char what[160];
      snprintf(what, sizeof what, "%s: no kernel '%.40s'%s%.60s", who, st->name,
               st->entry >= 0 ? " lowered to " : "", st->entry >= 0 ? fname : "");
      return fail(rep, MS_RUNTIME_ERROR, what, r);
    }
    if (check_limits(rep, st, d->fn[i], p, who)) return -1;
    if (st->smem > 48 * 1024 &&
        (r = gd_cu.cuFuncSetAttribute(d->fn[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      (int)st->smem)))
      return fail(rep, MS_RUNTIME_ERROR, "cuFuncSetAttribute(max dynamic shared memory)", r);
  }
  if (d->plan.workspace && (r = gd_cu.cuMemAlloc(&d->ws, d->plan.workspace)))
    return fail(rep, MS_RUNTIME_ERROR, "workspace cuMemAlloc", r);
  return 0;
}

/* Copy every symbol's buffer into d's module (before the runs). */
static int load_symbols(ms__report *rep, dev_plan *d, const ms_workload *w, const char *who) {
  for (int i = 0; i < d->plan.nsym; i++) {
    const gk_symbol *sy = &d->plan.sym[i];
    size_t need = ms__buf_bytes(&w->b[sy->buf]), have = 0;
    CUdeviceptr ptr;
    char what[200];
    CUresult r = gd_cu.cuModuleGetGlobal(&ptr, &have, d->mod, sy->name);
    if (r) {
      snprintf(what, sizeof what, "%s: symbol %.60s (buffer %.40s): cuModuleGetGlobal", who,
               sy->name, w->b[sy->buf].name);
      return fail(rep, MS_RUNTIME_ERROR, what, r);
    }
    if (have < need) {
      rep->status = MS_RUNTIME_ERROR;
      snprintf(rep->msg, sizeof rep->msg, "%s: symbol %.60s holds %zu bytes, buffer %.40s needs "
               "%zu (%lld elements of %s)", who, sy->name, have, w->b[sy->buf].name, need,
               (long long)w->b[sy->buf].n, kn_elem_name(w->b[sy->buf].elem));
      return -1;
    }
    if ((r = gd_cu.cuMemcpyHtoD(ptr, w->in[sy->buf], need))) {
      snprintf(what, sizeof what, "%s: symbol %.60s: cuMemcpyHtoD", who, sy->name);
      return fail(rep, MS_RUNTIME_ERROR, what, r);
    }
  }
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
      int n = st->arg[a];
      ptr[a] = n == GK_WS ? d->ws : st->how[a] == GK_ARG_VALUE ? 0 : b[n];
      args[a] = st->how[a] == GK_ARG_VALUE ? w->in[n] : (void *)&ptr[a];
    }
    if (st->kind == GK_ZERO) {
      size_t bytes = st->arg[0] == GK_WS ? d->plan.workspace : ms__buf_bytes(&w->b[st->arg[0]]);
      r = bytes % 4 ? gd_cu.cuMemsetD8Async(ptr[0], 0, bytes, s)
                    : gd_cu.cuMemsetD32Async(ptr[0], 0, bytes / 4, s);
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

/* With checks: a device copy of every vector's initial contents (c->init,
** c->pristine); a device without room for them keeps the host path. */
static void keep_pristine(cuda_child *c) {
  const ms_workload *w = c->w;
  if (!c->checks) return;
  CUresult r = CUDA_SUCCESS;
  for (int i = 0; i < w->nbuf && !r; i++)
    if (w->b[i].kind == KN_VECTOR &&
        !(r = gd_cu.cuMemAlloc(&c->init[i], ms__buf_bytes(&w->b[i]))))
      r = gd_cu.cuMemcpyDtoD(c->init[i], c->buf[i], ms__buf_bytes(&w->b[i]));
  if (!r) r = gd_cu.cuCtxSynchronize();   /* DtoD is not ordered with c->s */
  c->pristine = !r;
  for (int i = 0; i < w->nbuf && r; i++) {
    if (c->init[i]) gd_cu.cuMemFree(c->init[i]);
    c->init[i] = 0;
  }
}

/* With checks: each output's reference on the device (c->devref): the
** reference plan's (built-ins), else w->ref's copied in once; an output
** without one, or no room, turns the checks off. */
static void device_refs(cuda_child *c) {
  const ms_workload *w = c->w;
  for (int i = 0; c->checks && i < w->nbuf; i++) {
    if (w->b[i].kind != KN_VECTOR || !w->b[i].out) continue;
    size_t bytes = ms__buf_bytes(&w->b[i]);
    if (c->ref_cubin[0]) c->devref[i] = c->refbuf[i];
    else if (!w->ref[i] || gd_cu.cuMemAlloc(&c->devref[i], bytes) ||
             gd_cu.cuMemcpyHtoD(c->devref[i], w->ref[i], bytes))
      c->checks = 0;
  }
  if (c->checks && gd_cu.cuCtxSynchronize()) c->checks = 0;
}

/* Allocate the vectors (the reference's outputs apart when there is a
** reference plan) and copy in the inputs and the outputs' initial
** contents. 0 or -1 with rep. */
static int load_buffers(cuda_child *c, ms__report *rep) {
  const ms_workload *w = c->w;
  CUresult r;
  for (int i = 0; i < w->nbuf; i++) {
    if (w->b[i].kind != KN_VECTOR) continue;   /* scalars: by value; symbols: in the module */
    size_t bytes = ms__buf_bytes(&w->b[i]);
    int apart = w->b[i].out && c->ref_cubin[0];
    if ((r = gd_cu.cuMemAlloc(&c->buf[i], bytes)) ||
        (apart && (r = gd_cu.cuMemAlloc(&c->refbuf[i], bytes))))
      return fail(rep, MS_RUNTIME_ERROR, "harness: cuMemAlloc of the workload", r);
    if (!apart) c->refbuf[i] = c->buf[i];
    void *init = w->in[i];
    if (!init) ms__buf_init(w, i, init = rt_malloc(bytes));   /* outputs poisoned */
    r = gd_cu.cuMemcpyHtoD(c->buf[i], init, bytes);
    if (!r && apart) r = gd_cu.cuMemcpyHtoD(c->refbuf[i], init, bytes);
    if (init != w->in[i]) free(init);
    if (r) return fail(rep, MS_RUNTIME_ERROR, "harness: cuMemcpyHtoD", r);
  }
  r = gd_cu.cuCtxSynchronize();   /* as write_vectors: c->s does not wait */
  if (r) return fail(rep, MS_RUNTIME_ERROR, "harness: writing the vectors", r);
  keep_pristine(c);
  return 0;
}

/* Write the vectors again before another candidate: every output's
** initial contents (poisoned, or an inout output's initial values) and,
** when inputs, every input. 0 or -1 with rep. */
static int write_vectors(cuda_child *c, int inputs, ms__report *rep) {
  const ms_workload *w = c->w;
  for (int i = 0; i < w->nbuf; i++) {
    if (w->b[i].kind != KN_VECTOR || (!inputs && !w->b[i].out)) continue;
    size_t bytes = ms__buf_bytes(&w->b[i]);
    if (c->pristine) {
      CUresult r = gd_cu.cuMemcpyDtoD(c->buf[i], c->init[i], bytes);
      if (r) return fail(rep, MS_RUNTIME_ERROR, "harness: cuMemcpyDtoD", r);
      continue;
    }
    void *init = w->b[i].out ? NULL : w->in[i];
    if (!init) ms__buf_init(w, i, init = rt_malloc(bytes));
    CUresult r = gd_cu.cuMemcpyHtoD(c->buf[i], init, bytes);
    if (init != w->in[i]) free(init);
    if (r) return fail(rep, MS_RUNTIME_ERROR, "harness: cuMemcpyHtoD", r);
  }
  /* the copies are on the legacy stream, which c->s does not wait for (and
  ** a pageable HtoD may return before its last bytes land) */
  CUresult r = gd_cu.cuCtxSynchronize();
  return r ? fail(rep, MS_RUNTIME_ERROR, "harness: restoring the vectors", r) : 0;
}

/* The child's device: a context, the stream and events, every vector
** allocated and written (load_buffers), and for the built-ins the
** reference plan run once, its outputs copied back into c->refout and,
** for small workloads, checked against the host reference. 0 or -1 with
** rep (a reference that fails is the harness's runtime_error). */
static int open_device(cuda_child *c, gd_props *p, ms__report *rep) {
  const ms_workload *w = c->w;
  rt_err err = {0};
  CUcontext cx;
  CUresult r;
  if (gd_props_get(c->dev, p, &err) || gd_context(c->dev, &cx, &err)) {
    rep->status = MS_RUNTIME_ERROR;
    snprintf(rep->msg, sizeof rep->msg, "harness: %.240s", err.msg);
    return -1;
  }
  if (c->ref_plan) c->ref.plan = *c->ref_plan;
  if (c->ref_cubin[0] && (load_plan(rep, c->ref_cubin, &c->ref, "reference", p) ||
                          load_symbols(rep, &c->ref, w, "reference")))
    return -1;
  if ((r = gd_cu.cuStreamCreate(&c->s, CU_STREAM_NON_BLOCKING)) ||
      (r = gd_cu.cuEventCreate(&ev0, CU_EVENT_DEFAULT)) ||
      (r = gd_cu.cuEventCreate(&ev1, CU_EVENT_DEFAULT)))
    return fail(rep, MS_RUNTIME_ERROR, "harness: stream/events", r);
  c->checks = !c->reference && !gd_check_open(&c->ck, p->sms, &err);
  if (load_buffers(c, rep)) return -1;
  if (!c->ref_cubin[0]) {
    device_refs(c);
    return 0;
  }
  char msg[200] = "";
  if ((r = run_plan(&c->ref, c->refbuf, c->s, w, msg, sizeof msg)) ||
      (r = gd_cu.cuStreamSynchronize(c->s))) {
    char what[256];
    snprintf(what, sizeof what, "harness: the device reference failed (%.100s)", msg);
    return fail(rep, MS_RUNTIME_ERROR, what, r);
  }
  int host_ref = 0;
  for (int i = 0; i < w->nbuf; i++) {
    if (w->b[i].kind != KN_VECTOR || !w->b[i].out) continue;
    size_t bytes = ms__buf_bytes(&w->b[i]);
    c->refout[i] = rt_malloc(bytes);
    if ((r = gd_cu.cuMemcpyDtoH(c->refout[i], c->refbuf[i], bytes)))
      return fail(rep, MS_RUNTIME_ERROR, "cuMemcpyDtoH", r);
    host_ref |= w->ref[i] != NULL;
  }
  double e;
  if (host_ref && ms__verify(w, c->refout, w->ref, &e, rep->msg, sizeof rep->msg)) {
    /* The device reference against the host's (small workloads). */
    char m[256];
    snprintf(m, sizeof m, "harness: the device reference disagrees with the host reference: %.180s",
             rep->msg);
    snprintf(rep->msg, sizeof rep->msg, "%.255s", m);
    rep->status = MS_RUNTIME_ERROR;
    return -1;
  }
  device_refs(c);
  return 0;
}

/* Verification on the GPU (gd_check.c) after the checked run: a changed
** input is the candidate's wrong_result, outputs that pass set
** rep->max_err. 1: decided (or a CUDA error, rep runtime_error); 0: the
** host path decides (no checks, or an output fails: invariant 2). */
static int device_verify(cuda_child *c, ms__report *rep) {
  const ms_workload *w = c->w;
  if (!c->checks || !c->pristine) return 0;
  const kn_kernel *k = w->k;
  CUresult r;
  for (int i = 0; i < w->nbuf; i++) {
    if (w->b[i].kind != KN_VECTOR || w->b[i].out || !w->in[i]) continue;
    int same;
    if ((r = gd_check_same(&c->ck, c->s, c->buf[i], c->init[i], ms__buf_bytes(&w->b[i]), &same))) {
      fail(rep, MS_RUNTIME_ERROR, "harness: the input check on the device", r);
      return 1;
    }
    if (!same) {
      rep->status = MS_WRONG_RESULT;
      snprintf(rep->msg, sizeof rep->msg, "the candidate wrote to its input %s", w->b[i].name);
      return 1;
    }
  }
  double worst = 0;
  for (int i = 0; i < w->nbuf; i++) {
    if (!w->b[i].out) continue;
    gd_check_res res;
    double rel;
    if ((r = gd_check_output(&c->ck, c->s, w->b[i].elem, c->buf[i], c->devref[i], w->b[i].n,
                             k->atol, k->rtol, k->tolerance != NULL, &res))) {
      fail(rep, MS_RUNTIME_ERROR, "harness: verification on the device", r);
      return 1;
    }
    if (gd_check_verdict(&res, k->tolerance != NULL, w->tol, &rel)) return 0;
    if (rel > worst) worst = rel;
  }
  rep->max_err = worst;
  return 1;
}

/* Measure the candidate (c->cand_plan, c->cand_cubin) on the open device,
** its vectors written: its module, functions and limits, symbols, the
** run on poisoned outputs, the input check, verification, then the timed
** runs (pass 0) or the counter pass (pass 1), into rep. Its module and
** workspace are released after, so that the context can serve another
** candidate. The reference run stops after its run, the outputs in
** c->out. */
static void measure_one(cuda_child *c, const gd_props *p, ms__report *rep) {
  const ms_workload *w = c->w;
  const char *who = c->reference ? "the reference configuration" : "candidate";
  rt_err err = {0};
  CUresult r;
  int bad;
  double t0;
  memset(&c->cand, 0, sizeof c->cand);
  c->cand.plan = *c->cand_plan;
  if (load_plan(rep, c->cand_cubin, &c->cand, who, p) ||
      (c->cand_cubin[0] && load_symbols(rep, &c->cand, w, who)))
    goto out;
  /* The candidate once on poisoned outputs. */
  t0 = rt_now();
  run_cand(c);
  if (c->bad) {
    fail(rep, MS_RUNTIME_ERROR, c->bad_msg[0] ? c->bad_msg : "run", c->bad);
    goto out;
  }
  if (device_verify(c, rep)) {
    rep->verify_s = rt_now() - t0;
    if (rep->status != MS_OK) goto out;
    goto timed;
  }
  for (int i = 0; i < w->nbuf; i++) {
    if (w->b[i].kind != KN_VECTOR) continue;
    size_t bytes = ms__buf_bytes(&w->b[i]);
    if (!c->out[i]) c->out[i] = rt_malloc(bytes);
    if ((r = gd_cu.cuMemcpyDtoH(c->out[i], c->buf[i], bytes))) {
      fail(rep, MS_RUNTIME_ERROR, "cuMemcpyDtoH", r);
      goto out;
    }
  }
  if ((bad = ms__changed_input(w, c->out)) >= 0) {
    rep->status = MS_WRONG_RESULT;
    snprintf(rep->msg, sizeof rep->msg, "the %s wrote to its input %s",
             c->reference ? "reference" : "candidate", w->b[bad].name);
  }
  if (c->reference || rep->status != MS_OK) goto out;   /* the reference: its outputs */
  if (ms__verify(w, c->out, c->ref_cubin[0] ? c->refout : w->ref, &rep->max_err, rep->msg,
                 sizeof rep->msg))
    rep->status = MS_WRONG_RESULT;
  rep->verify_s = rt_now() - t0;
  if (rep->status != MS_OK) goto out;
timed:
  if (c->pass == 0) {
    if (c->o->flush_cache && !c->flush) {
      c->flush_words = (size_t)2 * (size_t)p->l2_bytes / 4;
      if ((r = gd_cu.cuMemAlloc(&c->flush, c->flush_words * 4))) {
        fail(rep, MS_RUNTIME_ERROR, "harness: the L2 flush buffer", r);
        goto out;
      }
    }
    t0 = rt_now();
    ms_time_loop(timed_sample, c, c->o, &rep->t);
    rep->bench_s = rt_now() - t0;
    if (c->bad) {
      char what[220];   /* bad_msg: under 200 */
      snprintf(what, sizeof what, "while timed: %.200s", c->bad_msg[0] ? c->bad_msg : "run");
      fail(rep, MS_RUNTIME_ERROR, what, c->bad);
      memset(&rep->t, 0, sizeof rep->t);
    }
  } else {
    run_cand(c);
    if (gd_cupti_count(c->ev, c->nev, run_cand, c, rep->ev, &err)) {
      rep->status = MS_RUNTIME_ERROR;
      snprintf(rep->msg, sizeof rep->msg, "counters: %.240s", err.msg);
    } else if (c->bad) {
      fail(rep, MS_RUNTIME_ERROR, "counter pass", c->bad);
    }
  }
out:
  if (c->cand.mod) gd_cu.cuModuleUnload(c->cand.mod);
  if (c->cand.ws) gd_cu.cuMemFree(c->cand.ws);
  c->cand.mod = NULL, c->cand.ws = 0;
}

static void child_main(int fd, void *ctx) {
  cuda_child *c = ctx;
  ms__report rep;
  memset(&rep, 0, sizeof rep);
  rep.status = MS_OK;
  gd_props p;
  if (!open_device(c, &p, &rep)) measure_one(c, &p, &rep);
  finish(c, fd, &rep);
}

/* ---- the batch worker (gd_measure_batch) ---- */

/* A batch for ms__run_batch: the child's settings (the reference plan
** among them), and item i's plan and cubin. */
typedef struct cuda_batch {
  cuda_child c;
  gk_plan *plan;
  char (*cubin)[PATH_MAX + 64];
} cuda_batch;

/* Items start..n-1 in one context: opened once (open_device: the
** vectors, and the built-ins' reference run once), then per item what a
** single worker does (measure_one), the outputs written again before each
** (the inputs too after an item that was not ok). An item that failed
** with a CUDA error (runtime_error; a faulting kernel poisons the context)
** ends the child: a new context serves the rest (ms_backend.h invariant
** 5). */
static void batch_child(int fd, void *ctx, int start, int n) {
  cuda_batch *b = ctx;

  cuda_child *c = &b->c;
  ms__report rep;
  memset(&rep, 0, sizeof rep);
  rep.status = MS_OK;
  gd_props p;
  int open = !open_device(c, &p, &rep), dirty = 0;
  for (int i = start; i < n; i++) {
    if (i > start) {
      memset(&rep, 0, sizeof rep);
      rep.status = MS_OK;
    }
    rep.item = i;
    c->cand_plan = &b->plan[i];
    c->cand_cubin = b->cubin[i];
    c->bad = CUDA_SUCCESS, c->bad_msg[0] = 0;
    if (open && (i == start || !write_vectors(c, dirty, &rep))) measure_one(c, &p, &rep);
    dirty = rep.status != MS_OK;
    rep.last = !open || rep.status == MS_RUNTIME_ERROR;
    if (ms__send_item(fd, &rep) || rep.last) _exit(0);
  }
  _exit(0);
}

/* ---- the row's measure ---- */

/* A worker's report into r (r's build fields stay). */
static void from_report(ms_result *r, const ms__report *rep) {
  r->status = (ms_status)rep->status;
  snprintf(r->msg, sizeof r->msg, "%s", rep->msg);
  r->t = rep->t;
  r->max_err = rep->max_err;
  r->verify_s = rep->verify_s;
  r->bench_s = rep->bench_s;
}

/* Parse src's plan into plan and check it against w's buffers, then build
** it (unless lib: a library plan) into cubin. 0; MS_COMPILE_ERROR with
** msg (the plan, or the compiler's excerpt); -1: NVRTC or the cache
** failed (msg). */
static int prepare(const ms_workload *w, const char *src, gk_plan *plan, const ms_opts *o,
                   const gd_props *p, char *cubin, size_t cap, int *hit, char *msg, size_t mcap) {
  rt_err err = {0};
  if (gk_plan_parse(src, w->nbuf, plan, &err) || gk_plan_check(plan, w->b, w->nbuf, &err)) {
    snprintf(msg, mcap, "compile error: %.480s", err.msg);
    return MS_COMPILE_ERROR;
  }
  cubin[0] = 0;
  if (plan->step[plan->nsteps - 1].kind == GK_LIBRARY) return 0;
  rt_str log = {0};
  int b = gd_cubin_build(src, plan, p->cc_major, p->cc_minor, o->cache_dir, cubin, cap, hit, &log);
  const char *l = log.s ? log.s : "";
  if (b > 0) {
    const char *e = strstr(l, "error");
    while (e && e > l && e[-1] != '\n') e--;
    snprintf(msg, mcap, "compile error: %.490s", e ? e : l);
  } else if (b < 0) {
    snprintf(msg, mcap, "harness: %.490s", l);
  }
  free(log.s);
  return b > 0 ? MS_COMPILE_ERROR : b;
}

/* The reference outputs of a kernel whose reference is NULL, once per
** workload (ms__ref_once): its device reference, the reference
** configuration, run in a worker that sends them back. 0, or -1 with r. */
static int ensure_reference(int dev, ms_workload *w, const ms_opts *o, const gd_props *p,
                            ms_result *r) {
  if (!ms__ref_missing(w)) return 0;
  if (!w->k->device_reference) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "harness: kernel %s has neither a reference nor a device "
             "reference", w->k->name);
    return -1;
  }
  char *src = w->k->device_reference(&w->pb), cubin[PATH_MAX + 64], key[33], comp[128], nv[64];
  gk_plan *plan = rt_malloc(sizeof *plan);
  cuda_child c = {.w = w, .o = o, .dev = dev, .cand_plan = plan, .ref_cubin = "", .reference = 1};
  ms__report rep;
  memset(&rep, 0, sizeof rep);
  int hit, rc = prepare(w, src, plan, o, p, cubin, sizeof cubin, &hit, rep.msg, sizeof rep.msg);
  if (rc) {
    rep.status = rc > 0 ? rc : MS_RUNTIME_ERROR;
  } else if (!cubin[0]) {
    rep.status = MS_COMPILE_ERROR;
    snprintf(rep.msg, sizeof rep.msg, "a library plan cannot be a reference configuration");
    rc = 1;
  } else {
    c.cand_cubin = cubin;
    gd_build_key(dev, src, key);
    snprintf(comp, sizeof comp, "%s sm_%d%d", gd_nvrtc_version(nv, sizeof nv), p->cc_major,
             p->cc_minor);
    rc = ms__ref_once(w, key, comp, child_main, &c, o, &rep);
  }
  if (rc) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "harness: the reference configuration of %s failed (%s): "
             "%.400s", w->k->name, ms_status_name((ms_status)rep.status), rep.msg);
  }
  free(plan);
  free(src);
  return rc ? -1 : 0;
}

int gd_measure(int dev, ms_workload *w, const char *src, const ms_opts *o, ms_result *r) {
  memset(r, 0, sizeof *r);
  const kn_kernel *k = w->k;
  rt_err err = {0};
  gd_props p;
  if (gd_props_get(dev, &p, &err)) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "no CUDA device: %.480s", err.msg);
    return -1;
  }
  gd_check_build(p.cc_major, p.cc_minor, &err);   /* else the host path verifies */
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
  double t0 = rt_now();
  /* A kernel whose reference is NULL: its reference outputs once; the
  ** built-ins run their device reference beside every candidate. */
  int once = !k->reference;
  if (once && ensure_reference(dev, w, o, &p, r)) return -1;
  char *refsrc = k->device_reference(&w->pb);
  char *own = src ? NULL : rt_strdup(refsrc);   /* src NULL: the reference itself */
  if (!src) src = own;
  gk_plan *plans = rt_calloc(2, sizeof *plans);
  cuda_child c = {.w = w, .o = o, .dev = dev, .ev = evp, .nev = nev, .cand_plan = &plans[0],
                  .ref_plan = once ? NULL : &plans[1], .ref_cubin = ""};
  char cand[PATH_MAX + 64] = "", refc[PATH_MAX + 64] = "";
  int rc = 0, hit = 0;
  if (!once && prepare(w, refsrc, &plans[1], o, &p, refc, sizeof refc, &hit, r->msg,
                       sizeof r->msg)) {
    char m[sizeof r->msg];
    snprintf(m, sizeof m, "harness: the device reference does not build: %.400s", r->msg);
    snprintf(r->msg, sizeof r->msg, "%s", m);
    r->status = MS_RUNTIME_ERROR;
    rc = -1;
    goto out;
  }
  int b = prepare(w, src, &plans[0], o, &p, cand, sizeof cand, &r->cache_hit, r->msg,
                  sizeof r->msg);
  r->compile_s = rt_now() - t0;
  if (b) {
    r->status = b > 0 ? MS_COMPILE_ERROR : MS_RUNTIME_ERROR;
    rc = b > 0 ? 0 : -1;
    goto out;
  }
  c.cand_cubin = cand;
  c.ref_cubin = refc;
  ms__report rep;
  if (ms__run_worker(child_main, &c, o, &rep)) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", rep.msg);
    rc = -1;
    goto out;
  }
  from_report(r, &rep);
  if (r->status != MS_OK || !o->counters) goto out;
  c.pass = 1;
  if (ms__run_worker(child_main, &c, o, &rep)) {
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
  free(plans);
  free(refsrc);
  free(own);
  return rc;
}

int gd_measure_batch(int dev, ms_workload *w, const char *const *srcs, int n, const ms_opts *o,
                     ms_result *r, const volatile sig_atomic_t *stop, rt_err *err) {
  if (n <= 0) return 0;
  memset(r, 0, (size_t)n * sizeof *r);
  const kn_kernel *k = w->k;
  gd_props p;
  if (gd_props_get(dev, &p, err)) {
    rt_err_prefix(err, "no CUDA device");
    return -1;
  }
  rt_err e2 = {0};
  gd_check_build(p.cc_major, p.cc_minor, &e2);   /* else the host path verifies */
  int once = !k->reference;   /* as gd_measure: the reference once, or beside the candidates */
  if (once && ensure_reference(dev, w, o, &p, &r[0])) {
    rt_err_set(err, "%s", r[0].msg);
    return -1;
  }
  cuda_batch *b = rt_calloc(1, sizeof *b);
  b->plan = rt_calloc((size_t)n, sizeof *b->plan);
  b->cubin = rt_calloc((size_t)n, sizeof *b->cubin);
  gk_plan *ref_plan = rt_calloc(1, sizeof *ref_plan);
  char refc[PATH_MAX + 64] = "", *refsrc = k->device_reference(&w->pb);
  int *idx = rt_calloc((size_t)n, sizeof *idx), m = 0, ret = n, hit = 0;
  ms__report *rep = NULL;
  if (!once && prepare(w, refsrc, ref_plan, o, &p, refc, sizeof refc, &hit, r[0].msg,
                       sizeof r[0].msg)) {
    rt_err_set(err, "harness: the device reference does not build: %.400s", r[0].msg);
    memset(&r[0], 0, sizeof r[0]);
    ret = -1;
    goto out;
  }
  b->c = (cuda_child){.w = w, .o = o, .dev = dev, .ref_plan = once ? NULL : ref_plan,
                      .ref_cubin = refc};
  /* Build (or find) every candidate; a plan or build failure is its
  ** result already, the others form the batch. */
  for (int i = 0; i < n; i++) {
    if (stop && *stop) {   /* the complete ones: those before the first unmeasured */
      ret = m ? idx[0] : i;
      goto out;
    }
    double t0 = rt_now();
    int rc = prepare(w, srcs[i], &b->plan[m], o, &p, b->cubin[m], sizeof b->cubin[m],
                     &r[i].cache_hit, r[i].msg, sizeof r[i].msg);
    r[i].compile_s = rt_now() - t0;
    if (rc < 0) {
      rt_err_set(err, "%s", r[i].msg);
      ret = -1;
      goto out;
    }
    if (rc > 0) r[i].status = MS_COMPILE_ERROR;
    else idx[m++] = i;
  }
  rep = rt_calloc((size_t)(m ? m : 1), sizeof *rep);
  if (m) {
    int done = ms__run_batch(batch_child, b, m, o, stop, rep, err);
    for (int j = 0; j < done; j++) from_report(&r[idx[j]], &rep[j]);
    ret = done < 0 ? -1 : done < m ? idx[done] : n;
  }
out:
  free(rep), free(idx), free(refsrc), free(ref_plan), free(b->cubin), free(b->plan), free(b);
  return ret;
}
