/*
** oc_measure.c -- measuring OpenCL candidates (oc.h oc_measure,
** oc_measure_batch) with the target-neutral harness (measure/ms.h): the
** parent parses the plan and never touches OpenCL (invariant 1); three
** kinds of children do.
**   1. The build child (skipped when <cache>/<key>.clbin exists: oc.h
**      invariant 3) builds the source with clBuildProgram and the plan's
**      options; a build failure comes back as compile_error with the
**      options and the build log; a success writes the program's binary
**      into the compile cache (temporary file, then rename).
**   2. The worker (ms__run_worker: rt_fork's clean child, killed with its
**      group at the timeout, a sealed report) makes a context and a
**      profiling queue, loads the binary (rebuilding from source if the
**      platform refuses it), allocates the vectors and the workspace,
**      writes the inputs and every output's initial contents (poisoned,
**      or an inout output's initial values: ms__buf_init), sets the
**      arguments (buffers, scalars by value, local memory), checks the
**      device's limits for every launch (invariant 7: invalid), runs the
**      plan once, reads every vector back: an input that changed is
**      wrong_result, outputs are verified on the host against the
**      workload's reference outputs (kn.h invariant 2); then times warmup
**      + repeats with ms_time_loop, one sample being one run of the plan
**      from the first launch's CL_PROFILING_COMMAND_START to the last's
**      CL_PROFILING_COMMAND_END, and reads the inputs back again.
**   3. The batch worker (oc_measure_batch, ms__run_batch): the same as
**      the worker for several candidates in turn, the device opened once
**      (context, queue, vectors, inputs written) and per candidate
**      measure_one, the single worker's own steps, with the outputs
**      written again before it (and the inputs after a candidate that was
**      not ok); an OpenCL failure (runtime_error) ends the child and a new
**      one serves the rest.
** A kernel whose reference is NULL (a T1 kernel) gets its reference
** outputs once per workload: the same worker runs its device reference
** (the reference configuration's source) and sends the outputs back
** instead of verifying and timing (ms__ref_once; the compile cache keeps
** them). A kernel that faults kills the worker (runtime_error, with the
** signal), one that never ends is killed at the timeout (timeout).
*/
#include "oc.h"
#include "../../measure/ms_backend.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define FLUSH_MAX ((size_t)1 << 30)

/* ---- the build child ---- */

typedef struct build_ctx {
  const char *src, *opts, *path;   /* opts: the plan's options line */
  int plat, dev;
} build_ctx;

typedef struct build_rep {
  int status;                      /* MS_OK, MS_COMPILE_ERROR, MS_RUNTIME_ERROR */
  char msg[1024];
} build_rep;

static void build_child(int fd, void *ctx) {
  build_ctx *b = ctx;
  build_rep *rep = rt_calloc(1, sizeof *rep);
  rt_err err = {0};
  rt_str log = {0};
  cl_device_id did;
  cl_context cx;
  cl_command_queue q;
  cl_program prog;
  int rc = -1;
  if (!oc_ids(b->plat, b->dev, NULL, &did, &err) && !oc_queue(did, &cx, &q, &err))
    rc = oc_build_source(cx, did, b->src, b->opts, &prog, &log, &err);
  if (rc == 1) {
    rep->status = MS_COMPILE_ERROR;
    snprintf(rep->msg, sizeof rep->msg, "%s", log.s ? log.s : "");
  } else if (rc < 0) {
    rep->status = MS_RUNTIME_ERROR;
    snprintf(rep->msg, sizeof rep->msg, "harness: %s", err.msg);
  } else {
    size_t n = 0;
    unsigned char *bin = NULL;
    cl_int e = oc_cl.clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL);
    if (!e && n) {
      bin = rt_malloc(n);
      e = oc_cl.clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
    }
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", b->path, (int)getpid());
    FILE *f = !e && n ? fopen(tmp, "wbe") : NULL;
    int ok = f && fwrite(bin, 1, n, f) == n;
    if (f && fclose(f)) ok = 0;
    if (!ok || rename(tmp, b->path)) {
      rep->status = MS_RUNTIME_ERROR;
      snprintf(rep->msg, sizeof rep->msg, "harness: compile cache: cannot write %s: %s", b->path,
               e ? oc_errname(e) : strerror(errno));
      unlink(tmp);
    }
    free(bin);
  }
  ssize_t k = write(fd, rep, sizeof *rep);
  _exit(k == (ssize_t)sizeof *rep ? 0 : 1);
}

/* ---- the worker ---- */

typedef struct oc_child {
  const ms_workload *w;
  const ms_opts *o;
  const char *src, *bin_path;
  int plat, dev;
  oc_plan plan;
  int reference;                   /* 1: the reference run (ms__ref_once): send the outputs */
  /* in the child */
  cl_command_queue q;
  cl_kernel k[OC_MAXSTEP];
  cl_mem buf[KN_MAXBUF], ws, flush;
  void *out[KN_MAXBUF];            /* vectors read back */
  size_t flush_bytes;             /* 0: no flush between repeats */
  cl_int bad;                      /* first error while timed */
  char bad_msg[160];
} oc_child;

static int fail(ms__report *rep, int status, const char *what, cl_int e) {
  rep->status = status;
  snprintf(rep->msg, sizeof rep->msg, "%.180s: %s", what, oc_errname(e));
  return -1;
}

/* End the child with rep: the report alone, or in the reference run the
** report and the outputs (ms__send_outputs). */
__attribute__((noreturn)) static void finish(oc_child *c, int fd, ms__report *rep) {
  if (c->reference) ms__send_outputs(fd, rep, c->w, c->out);
  ms__send(fd, rep);
}

/* The program from the cached binary (from source if refused). */
static cl_program load_program(oc_child *c, cl_context cx, cl_device_id did, ms__report *rep) {
  cl_program prog = NULL;
  cl_int e = CL_SUCCESS, st = CL_SUCCESS;
  char opts[OC_MAXOPTS + 64];
  oc_build_options(c->plan.options, opts, sizeof opts);
  FILE *f = fopen(c->bin_path, "rbe");
  if (f) {
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *img = n > 0 ? rt_malloc((size_t)n) : NULL;
    size_t got = img ? fread(img, 1, (size_t)n, f) : 0;
    fclose(f);
    if (img && got == (size_t)n) {
      size_t len = got;
      const unsigned char *bins[1] = {img};
      prog = oc_cl.clCreateProgramWithBinary(cx, 1, &did, &len, bins, &st, &e);
      if (prog && (st || oc_cl.clBuildProgram(prog, 1, &did, opts, NULL, NULL))) {
        oc_cl.clReleaseProgram(prog);
        prog = NULL;
      }
    }
    free(img);
  }
  if (prog) return prog;
  rt_err err = {0};
  rt_str log = {0};
  int rc = oc_build_source(cx, did, c->src, c->plan.options, &prog, &log, &err);
  if (rc) {
    rep->status = rc > 0 ? MS_COMPILE_ERROR : MS_RUNTIME_ERROR;
    snprintf(rep->msg, sizeof rep->msg, "%.250s", rc > 0 ? log.s : err.msg);
    prog = NULL;
  }
  free(log.s);
  return prog;
}

/* Enqueue one run of the plan; evs (when not NULL) gets every launch's
** event, the caller releases them. CL_SUCCESS or the first error (bad_msg
** says which launch). */
static cl_int run_plan(oc_child *c, cl_event *evs) {
  cl_int e = CL_SUCCESS;
  for (int i = 0; i < c->plan.nsteps && !e; i++) {
    oc_step *st = &c->plan.step[i];
    e = oc_cl.clEnqueueNDRangeKernel(c->q, c->k[i], 3, NULL, st->global, st->local, 0, NULL,
                                     evs ? &evs[i] : NULL);
    if (e)
      snprintf(c->bad_msg, sizeof c->bad_msg, "launch of %.40s (global %zu x %zu x %zu, local "
               "%zu x %zu x %zu)", st->name, st->global[0], st->global[1], st->global[2],
               st->local[0], st->local[1], st->local[2]);
  }
  return e;
}

static double timed_sample(void *ctx) {
  oc_child *c = ctx;
  if (c->bad) return 0;
  cl_int e = CL_SUCCESS;
  if (c->flush_bytes) {
    cl_uint v = 0x3f800000u;
    e = oc_cl.clEnqueueFillBuffer(c->q, c->flush, &v, sizeof v, 0, c->flush_bytes, 0, NULL, NULL);
    if (e) snprintf(c->bad_msg, sizeof c->bad_msg, "flush buffer fill");
  }
  cl_event ev[OC_MAXSTEP] = {0};
  if (!e) e = run_plan(c, ev);
  int n = c->plan.nsteps;
  if (!e) e = oc_cl.clWaitForEvents(1, &ev[n - 1]);
  cl_ulong t0 = 0, t1 = 0;
  if (!e) e = oc_cl.clGetEventProfilingInfo(ev[0], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
  if (!e) e = oc_cl.clGetEventProfilingInfo(ev[n - 1], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
  if (e && !c->bad_msg[0]) snprintf(c->bad_msg, sizeof c->bad_msg, "timed run");
  for (int i = 0; i < n; i++)
    if (ev[i]) oc_cl.clReleaseEvent(ev[i]);
  if (e) {
    c->bad = e;
    return 0;
  }
  return t1 > t0 ? 1e-9 * (double)(t1 - t0) : 0;
}

/* Read every vector back into c->out[] (malloc'ed); 0 or -1 with rep. */
static int read_back(oc_child *c, ms__report *rep) {
  const ms_workload *w = c->w;
  for (int i = 0; i < w->nbuf; i++) {
    if (w->b[i].kind != KN_VECTOR) continue;
    size_t bytes = ms__buf_bytes(&w->b[i]);
    if (!c->out[i]) c->out[i] = rt_malloc(bytes);
    cl_int e = oc_cl.clEnqueueReadBuffer(c->q, c->buf[i], CL_TRUE, 0, bytes, c->out[i], 0, NULL,
                                         NULL);
    if (e) return fail(rep, MS_RUNTIME_ERROR, "clEnqueueReadBuffer (after the run)", e);
  }
  return 0;
}

/* The device's limits against every launch of the plan (oc.h invariant
** 7), the arguments set: 0, or -1 with rep invalid (the limit and both
** numbers) or runtime_error (a query failed). */
static int check_limits(oc_child *c, cl_device_id did, ms__report *rep) {
  size_t max_wg = 0, max_item[3] = {0, 0, 0};
  cl_ulong max_local = 0;
  cl_int e;
  if ((e = oc_cl.clGetDeviceInfo(did, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof max_wg, &max_wg, NULL)) ||
      (e = oc_cl.clGetDeviceInfo(did, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof max_item, max_item,
                                 NULL)) ||
      (e = oc_cl.clGetDeviceInfo(did, CL_DEVICE_LOCAL_MEM_SIZE, sizeof max_local, &max_local, NULL)))
    return fail(rep, MS_RUNTIME_ERROR, "harness: clGetDeviceInfo (the device's limits)", e);
  for (int i = 0; i < c->plan.nsteps; i++) {
    const oc_step *st = &c->plan.step[i];
    size_t wg = st->local[0] * st->local[1] * st->local[2], kwg = 0, req[3] = {0, 0, 0};
    cl_ulong klocal = 0, dyn = 0;
    for (int a = 0; a < st->nargs; a++)
      if (st->how[a] == OC_ARG_LOCAL) dyn += ms__buf_bytes(&c->w->b[st->arg[a]]);
    if ((e = oc_cl.clGetKernelWorkGroupInfo(c->k[i], did, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg,
                                            &kwg, NULL)) ||
        (e = oc_cl.clGetKernelWorkGroupInfo(c->k[i], did, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                            sizeof req, req, NULL)) ||
        (e = oc_cl.clGetKernelWorkGroupInfo(c->k[i], did, CL_KERNEL_LOCAL_MEM_SIZE, sizeof klocal,
                                            &klocal, NULL)))
      return fail(rep, MS_RUNTIME_ERROR, "harness: clGetKernelWorkGroupInfo", e);
    if (klocal < dyn) klocal = dyn;
    rep->status = MS_INVALID;
    for (int d = 0; d < 3; d++)
      if (st->local[d] > max_item[d]) {
        snprintf(rep->msg, sizeof rep->msg, "launch %.40s: work-group dimension %d is %zu, over "
                 "the device's CL_DEVICE_MAX_WORK_ITEM_SIZES[%d] %zu", st->name, d, st->local[d],
                 d, max_item[d]);
        return -1;
      }
    if (wg > max_wg || wg > kwg) {
      snprintf(rep->msg, sizeof rep->msg, "launch %.40s: a work-group of %zu x %zu x %zu = %zu "
               "work-items, over %s %zu", st->name, st->local[0], st->local[1], st->local[2], wg,
               wg > max_wg ? "the device's CL_DEVICE_MAX_WORK_GROUP_SIZE"
                           : "the kernel's CL_KERNEL_WORK_GROUP_SIZE",
               wg > max_wg ? max_wg : kwg);
      return -1;
    }
    if (req[0] && (req[0] != st->local[0] || req[1] != st->local[1] || req[2] != st->local[2])) {
      snprintf(rep->msg, sizeof rep->msg, "launch %.40s: a work-group of %zu x %zu x %zu, but the "
               "kernel requires %zu x %zu x %zu (reqd_work_group_size)", st->name, st->local[0],
               st->local[1], st->local[2], req[0], req[1], req[2]);
      return -1;
    }
    if (klocal > max_local) {
      snprintf(rep->msg, sizeof rep->msg, "launch %.40s: %llu bytes of local memory, over the "
               "device's CL_DEVICE_LOCAL_MEM_SIZE %llu", st->name, (unsigned long long)klocal,
               (unsigned long long)max_local);
      return -1;
    }
    rep->status = MS_OK;
  }
  return 0;
}

/* Make kernel i of the plan and set its arguments; 0 or -1 with rep. */
static int set_args(oc_child *c, cl_program prog, int i, ms__report *rep) {
  const oc_step *st = &c->plan.step[i];
  char what[128];
  cl_int e;
  if (!(c->k[i] = oc_cl.clCreateKernel(prog, st->name, &e))) {
    snprintf(what, sizeof what, "clCreateKernel '%.40s' (the plan names it)", st->name);
    return fail(rep, MS_RUNTIME_ERROR, what, e);
  }
  for (int a = 0; a < st->nargs; a++) {
    int n = st->arg[a];
    const kn_buf *b = n == OC_WS ? NULL : &c->w->b[n];
    cl_mem m = n == OC_WS ? c->ws : c->buf[n];
    e = st->how[a] == OC_ARG_VALUE
            ? oc_cl.clSetKernelArg(c->k[i], (cl_uint)a, kn_elem_size(b->elem), c->w->in[n])
        : st->how[a] == OC_ARG_LOCAL
            ? oc_cl.clSetKernelArg(c->k[i], (cl_uint)a, ms__buf_bytes(b), NULL)
            : oc_cl.clSetKernelArg(c->k[i], (cl_uint)a, sizeof m, &m);
    if (e) {
      snprintf(what, sizeof what, "clSetKernelArg %d of %.40s", a, st->name);
      return fail(rep, MS_RUNTIME_ERROR, what, e);
    }
  }
  return 0;
}

/* Write the vectors before a run: every output's initial contents
** (poisoned, or an inout output's initial values: ms__buf_init) and,
** when inputs, every input. 0 or -1 with rep. */
static int write_vectors(oc_child *c, int inputs, ms__report *rep) {
  const ms_workload *w = c->w;
  for (int i = 0; i < w->nbuf; i++) {
    if (w->b[i].kind != KN_VECTOR || (!inputs && !w->b[i].out)) continue;
    size_t bytes = ms__buf_bytes(&w->b[i]);
    void *init = w->b[i].out ? NULL : w->in[i];
    if (!init) ms__buf_init(w, i, init = rt_malloc(bytes));
    cl_int e = oc_cl.clEnqueueWriteBuffer(c->q, c->buf[i], CL_TRUE, 0, bytes, init, 0, NULL, NULL);
    if (init != w->in[i]) free(init);
    if (e) return fail(rep, MS_RUNTIME_ERROR, "harness: clEnqueueWriteBuffer", e);
  }
  return 0;
}

/* The child's device: a context and a profiling queue, every vector
** allocated and written (inputs, outputs at their initial contents:
** poisoned, or an inout output's initial values, ms__buf_init). 0 or -1
** with rep. */
static int open_device(oc_child *c, cl_device_id *did, cl_context *cx, ms__report *rep) {
  const ms_workload *w = c->w;
  rt_err err = {0};
  cl_int e;
  if (oc_ids(c->plat, c->dev, NULL, did, &err) || oc_queue(*did, cx, &c->q, &err)) {
    rep->status = MS_RUNTIME_ERROR;
    snprintf(rep->msg, sizeof rep->msg, "harness: %.240s", err.msg);
    return -1;
  }
  for (int i = 0; i < w->nbuf; i++) {
    if (w->b[i].kind != KN_VECTOR) continue;   /* scalars and local memory: arguments */
    c->buf[i] = oc_cl.clCreateBuffer(*cx, CL_MEM_READ_WRITE, ms__buf_bytes(&w->b[i]), NULL, &e);
    if (!c->buf[i]) return fail(rep, MS_RUNTIME_ERROR, "harness: clCreateBuffer of the workload", e);
  }
  return write_vectors(c, 1, rep);
}

/* Measure the candidate c->plan (c->src, c->bin_path) on the open device,
** its vectors written: the program, the workspace and the arguments, the
** limits, the checked run, verification, the timed runs, into rep. What
** it made (program, kernels, workspace) is released, so that the device
** can serve another candidate. The reference run stops after the checked
** run, its outputs in c->out. */
static void measure_one(oc_child *c, cl_device_id did, cl_context cx, ms__report *rep) {
  const ms_workload *w = c->w;
  cl_int e;
  int bad;
  double t0;
  cl_program prog = load_program(c, cx, did, rep);
  if (!prog) return;
  if (c->plan.workspace &&
      !(c->ws = oc_cl.clCreateBuffer(cx, CL_MEM_READ_WRITE, c->plan.workspace, NULL, &e))) {
    fail(rep, MS_RUNTIME_ERROR, "harness: the workspace's clCreateBuffer", e);
    goto out;
  }
  for (int i = 0; i < c->plan.nsteps; i++)
    if (set_args(c, prog, i, rep)) goto out;
  if (check_limits(c, did, rep)) goto out;
  /* The checked run on poisoned outputs (invariant 4). */
  t0 = rt_now();
  if ((e = run_plan(c, NULL)) || (e = oc_cl.clFinish(c->q))) {
    fail(rep, MS_RUNTIME_ERROR, c->bad_msg[0] ? c->bad_msg : "run", e);
    goto out;
  }
  if (read_back(c, rep)) goto out;
  if ((bad = ms__changed_input(w, c->out)) >= 0) {
    rep->status = MS_WRONG_RESULT;
    snprintf(rep->msg, sizeof rep->msg, "the %s wrote to its input %s",
             c->reference ? "reference" : "candidate", w->b[bad].name);
  } else if (c->reference) {
    goto out;   /* the outputs are the reference's */
  } else if (ms__verify(w, c->out, w->ref, &rep->max_err, rep->msg, sizeof rep->msg)) {
    rep->status = MS_WRONG_RESULT;
  }
  rep->verify_s = rt_now() - t0;
  if (rep->status != MS_OK) goto out;
  if (c->flush_bytes && !c->flush &&
      !(c->flush = oc_cl.clCreateBuffer(cx, CL_MEM_READ_WRITE, c->flush_bytes, NULL, &e))) {
    fail(rep, MS_RUNTIME_ERROR, "harness: the cache flush buffer", e);
    goto out;
  }
  t0 = rt_now();
  ms_time_loop(timed_sample, c, c->o, &rep->t);
  rep->bench_s = rt_now() - t0;
  if (c->bad) {
    char what[200];
    snprintf(what, sizeof what, "while timed: %.150s", c->bad_msg[0] ? c->bad_msg : "run");
    fail(rep, MS_RUNTIME_ERROR, what, c->bad);
    memset(&rep->t, 0, sizeof rep->t);
  } else if (read_back(c, rep)) {
    memset(&rep->t, 0, sizeof rep->t);
  } else if ((bad = ms__changed_input(w, c->out)) >= 0) {
    rep->status = MS_WRONG_RESULT;
    snprintf(rep->msg, sizeof rep->msg, "the candidate wrote to its input %s while timed",
             w->b[bad].name);
    memset(&rep->t, 0, sizeof rep->t);
  }
out:
  for (int i = 0; i < c->plan.nsteps; i++)
    if (c->k[i]) oc_cl.clReleaseKernel(c->k[i]), c->k[i] = NULL;
  if (c->ws) oc_cl.clReleaseMemObject(c->ws), c->ws = NULL;
  oc_cl.clReleaseProgram(prog);
}

static void child_main(int fd, void *ctx) {
  oc_child *c = ctx;
  ms__report rep;
  memset(&rep, 0, sizeof rep);
  rep.status = MS_OK;
  cl_device_id did;
  cl_context cx;
  if (!open_device(c, &did, &cx, &rep)) measure_one(c, did, cx, &rep);
  finish(c, fd, &rep);
}

/* ---- the batch worker (oc_measure_batch) ---- */

/* A batch for ms__run_batch: the child's settings, and item i's plan,
** source and binary. */
typedef struct oc_batch {
  oc_child c;
  const oc_plan *plan;
  const char *const *src, *const *bin;
} oc_batch;

/* Items start..n-1 on one device: opened once (context, queue, vectors,
** inputs written), then per item what a single worker does (measure_one),
** the outputs written again before each (poisoned, or an inout's initial
** values) and the inputs too after an item that was not ok (it may have
** written them). An item whose OpenCL call failed (runtime_error) ends the
** child: a new one serves the rest (ms_backend.h invariant 5). */
static void batch_child(int fd, void *ctx, int start, int n) {
  oc_batch *b = ctx;
  oc_child *c = &b->c;
  ms__report rep;
  memset(&rep, 0, sizeof rep);
  rep.status = MS_OK;
  cl_device_id did;
  cl_context cx;
  int open = !open_device(c, &did, &cx, &rep), dirty = 0;
  for (int i = start; i < n; i++) {
    if (i > start) {
      memset(&rep, 0, sizeof rep);
      rep.status = MS_OK;
    }
    rep.item = i;
    c->plan = b->plan[i];
    c->src = b->src[i], c->bin_path = b->bin[i];
    c->bad = CL_SUCCESS, c->bad_msg[0] = 0;
    if (open && (i == start || !write_vectors(c, dirty, &rep))) measure_one(c, did, cx, &rep);
    dirty = rep.status != MS_OK;
    rep.last = !open || rep.status == MS_RUNTIME_ERROR;
    if (ms__send_item(fd, &rep) || rep.last) _exit(0);
  }
  _exit(0);
}

/* ---- the kernel's host reference (oc_measure with src NULL) ---- */

/* The reference on fresh copies of the inputs, outputs poisoned, checked
** like a candidate, then timed with the host clock: the baseline of an
** OpenCL kernel, which has no library. In a worker child. */
typedef struct ref_ctx {
  const ms_workload *w;
  float *bufs[KN_MAXBUF];
} ref_ctx;

static double ref_sample(void *ctx) {
  ref_ctx *x = ctx;
  double t0 = rt_now();
  x->w->k->reference(&x->w->pb, x->bufs);
  return rt_now() - t0;
}

static void ref_child(int fd, void *ctx) {
  const oc_child *c = ctx;
  const ms_workload *w = c->w;
  ms__report rep;
  memset(&rep, 0, sizeof rep);
  rep.status = MS_OK;
  ref_ctx x = {.w = w};
  for (int i = 0; i < w->nbuf; i++) {
    x.bufs[i] = rt_malloc(ms__buf_bytes(&w->b[i]));
    ms__buf_init(w, i, x.bufs[i]);
  }
  double t0 = rt_now();
  ref_sample(&x);
  int bad = ms__changed_input(w, (void *const *)x.bufs);
  if (bad >= 0) {
    rep.status = MS_WRONG_RESULT;
    snprintf(rep.msg, sizeof rep.msg, "the reference wrote to its input %s", w->b[bad].name);
  } else if (ms__verify(w, (void *const *)x.bufs, w->ref, &rep.max_err, rep.msg, sizeof rep.msg)) {
    rep.status = MS_WRONG_RESULT;
  }
  rep.verify_s = rt_now() - t0;
  if (rep.status == MS_OK) {
    t0 = rt_now();
    ms_time_loop(ref_sample, &x, c->o, &rep.t);
    rep.bench_s = rt_now() - t0;
  }
  ms__send(fd, &rep);
}

/* ---- the parent ---- */

/* A worker's report into r (r's build fields stay). */
static void from_report(ms_result *r, const ms__report *rep) {
  r->status = (ms_status)rep->status;
  snprintf(r->msg, sizeof r->msg, "%s", rep->msg);
  r->t = rep->t;
  r->max_err = rep->max_err;
  r->verify_s = rep->verify_s;
  r->bench_s = rep->bench_s;
}

/* Bytes of the buffer written between timed runs with o->flush_cache:
** twice the device's global-memory cache, at most 1 GiB; 0 without. */
static size_t flush_bytes(const oc_props *p, const ms_opts *o) {
  if (!o->flush_cache) return 0;
  double want = 2 * (p->global_cache > 0 ? p->global_cache : 32e6);
  return want > (double)FLUSH_MAX ? FLUSH_MAX : (size_t)want / 4 * 4;
}

/* The binary of src (its plan's options opts) in the compile cache at
** path (cap bytes), built by a build child unless there (*hit). MS_OK, or
** the status with r->msg. -1: the harness failed (the cache folder, the
** child). */
static int build_cached(const char *src, const char *opts, int plat, int dev, const oc_props *p,
                        const ms_opts *o, char *path, size_t cap, int *hit, ms_result *r) {
  char dir[PATH_MAX], key[33];
  ms_cache_path(o->cache_dir, dir, sizeof dir);
  oc_build_key(src, p, key);
  snprintf(path, cap, "%s/%s.clbin", dir, key);
  struct stat sb;
  *hit = !stat(path, &sb) && sb.st_size > 0;
  if (*hit) return MS_OK;
  if (ms_mkdirs(dir)) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "compile cache: cannot make %.400s: %s", dir, strerror(errno));
    return -1;
  }
  build_ctx b = {src, opts, path, plat, dev};
  build_rep *br = rt_calloc(1, sizeof *br);
  ms_child_end end;
  int rc = ms_run_child(build_child, &b, o->timeout > 120 ? o->timeout : 120, br, sizeof *br,
                        &end);
  if (rc) {
    r->status = end.timed_out ? MS_TIMEOUT : MS_RUNTIME_ERROR;
    ms_child_why(&end, "OpenCL compiler", r->msg, sizeof r->msg);
    free(br);
    return rc < 0 ? -1 : (int)r->status;
  }
  rc = br->status;
  if (rc != MS_OK) {
    r->status = (ms_status)rc;
    snprintf(r->msg, sizeof r->msg, "%s%.490s", rc == MS_COMPILE_ERROR ? "compile error: " : "",
             br->msg);
  }
  free(br);
  return rc;
}

/* One build of oc_prebuild, in a child of ms_prebuild_with. */
typedef struct prebuild_ctx {
  int plat, dev;
  const oc_props *p;
  const ms_opts *o;
} prebuild_ctx;

static void prebuild_one(const char *src, void *ctx) {
  const prebuild_ctx *b = ctx;
  char path[PATH_MAX + 64];
  int hit;
  ms_result r;
  memset(&r, 0, sizeof r);
  oc_plan *plan = rt_malloc(sizeof *plan);
  rt_err err = {0};
  if (!oc_plan_parse(src, KN_MAXBUF, plan, &err))   /* else the measurement says why */
    build_cached(src, plan->options, b->plat, b->dev, b->p, b->o, path, sizeof path, &hit, &r);
  free(plan);
}

void oc_prebuild(const char *const *srcs, int n, int plat, int dev, const ms_opts *o, int jobs) {
  oc_props p;
  rt_err err = {0};
  if (oc_props_get(plat, dev, &p, &err)) return;   /* measure says why */
  prebuild_ctx b = {plat, dev, &p, o};
  ms_prebuild_with(srcs, n, jobs, prebuild_one, &b);
}

/* Parse and check the plan of src into c->plan, build src into the
** compile cache (path): MS_OK, or the status with r->msg; -1: the harness
** failed. */
static int prepare(oc_child *c, const char *src, const oc_props *p, char *path, size_t cap,
                   ms_result *r) {
  rt_err err = {0};
  c->src = src;
  if (oc_plan_parse(src, c->w->nbuf, &c->plan, &err) ||
      oc_plan_check(&c->plan, c->w->b, c->w->nbuf, &err)) {
    r->status = MS_COMPILE_ERROR;
    snprintf(r->msg, sizeof r->msg, "compile error: %.480s", err.msg);
    return MS_COMPILE_ERROR;
  }
  int rc = build_cached(src, c->plan.options, c->plat, c->dev, p, c->o, path, cap, &r->cache_hit, r);
  c->bin_path = path;
  return rc;
}

/* The reference outputs of a kernel whose reference is NULL, once per
** workload (ms__ref_once): its device reference run in a worker. 0, or
** -1 with r (the reference configuration cannot be built or run: nothing
** can be verified). */
static int ensure_reference(ms_workload *w, int plat, int dev, const oc_props *p, const ms_opts *o,
                            ms_result *r) {
  if (!ms__ref_missing(w)) return 0;
  if (!w->k->device_reference) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "harness: kernel %s has neither a reference nor a device "
             "reference", w->k->name);
    return -1;
  }
  char *src = w->k->device_reference(&w->pb), path[PATH_MAX + 64], key[33], comp[512];
  oc_child *c = rt_calloc(1, sizeof *c);
  *c = (oc_child){.w = w, .o = o, .plat = plat, .dev = dev, .reference = 1};
  ms_result br;
  memset(&br, 0, sizeof br);
  int rc = prepare(c, src, p, path, sizeof path, &br);
  ms__report rep;
  if (!rc) {
    oc_build_key(src, p, key);
    rc = ms__ref_once(w, key, oc_compiler(p, comp, sizeof comp), child_main, c, o, &rep);
    if (rc) br.status = (ms_status)rep.status;
    snprintf(br.msg, sizeof br.msg, "%s", rep.msg);
  }
  if (rc) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "harness: the reference configuration of %s failed (%s): "
             "%.400s", w->k->name, ms_status_name(br.status), br.msg);
  }
  free(c);
  free(src);
  return rc ? -1 : 0;
}

int oc_measure(ms_workload *w, const char *src, int plat, int dev, const ms_opts *o,
               ms_result *r) {
  memset(r, 0, sizeof *r);
  if (!src && w->k->reference) {   /* the kernel's host reference: the baseline */
    oc_child c = {.w = w, .o = o};
    ms__report rep;
    int rc = ms__run_worker(ref_child, &c, o, &rep);
    from_report(r, &rep);
    if (rc) r->status = MS_RUNTIME_ERROR;
    return rc;
  }
  rt_err err = {0};
  oc_props p;
  if (oc_props_get(plat, dev, &p, &err)) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "no OpenCL device: %.480s", err.msg);
    return -1;
  }
  double t0 = rt_now();
  if (ensure_reference(w, plat, dev, &p, o, r)) return -1;
  char *own = src ? NULL : w->k->device_reference(&w->pb);   /* no host reference: the device's */
  oc_child *c = rt_calloc(1, sizeof *c);
  *c = (oc_child){.w = w, .o = o, .plat = plat, .dev = dev, .flush_bytes = flush_bytes(&p, o)};
  char path[PATH_MAX + 64];
  int rc = prepare(c, src ? src : own, &p, path, sizeof path, r);
  r->compile_s = rt_now() - t0;
  ms__report rep;
  if (rc) {
    rc = rc < 0 ? -1 : 0;
  } else if (ms__run_worker(child_main, c, o, &rep)) {
    r->status = MS_RUNTIME_ERROR;
    snprintf(r->msg, sizeof r->msg, "%s", rep.msg);
    rc = -1;
  } else {
    from_report(r, &rep);
  }
  free(c);
  free(own);
  return rc;
}

int oc_measure_batch(ms_workload *w, const char *const *srcs, int n, int plat, int dev,
                     const ms_opts *o, ms_result *r, const volatile sig_atomic_t *stop,
                     rt_err *err) {
  if (n <= 0) return 0;
  memset(r, 0, (size_t)n * sizeof *r);
  oc_props p;
  if (oc_props_get(plat, dev, &p, err)) {
    rt_err_prefix(err, "no OpenCL device");
    return -1;
  }
  if (ensure_reference(w, plat, dev, &p, o, &r[0])) {
    rt_err_set(err, "%s", r[0].msg);
    return -1;
  }
  /* Build (or find) every candidate; a plan or build failure is its
  ** result already, the others form the batch. */
  oc_batch *b = rt_calloc(1, sizeof *b);
  b->c = (oc_child){.w = w, .o = o, .plat = plat, .dev = dev, .flush_bytes = flush_bytes(&p, o)};
  oc_plan *plan = rt_calloc((size_t)n, sizeof *plan);
  const char **src = rt_calloc((size_t)n, sizeof *src), **bin = rt_calloc((size_t)n, sizeof *bin);
  char (*path)[PATH_MAX + 64] = rt_calloc((size_t)n, sizeof *path);
  int *idx = rt_calloc((size_t)n, sizeof *idx), m = 0, ret = n;
  oc_child *one = rt_malloc(sizeof *one);
  for (int i = 0; i < n && ret == n; i++) {
    if (stop && *stop) {   /* the complete ones: those before the first unmeasured */
      ret = m ? idx[0] : i;
      break;
    }
    *one = b->c;
    double t0 = rt_now();
    int rc = prepare(one, srcs[i], &p, path[m], sizeof path[m], &r[i]);
    r[i].compile_s = rt_now() - t0;
    if (rc < 0) {
      rt_err_set(err, "%s", r[i].msg);
      ret = -1;
    } else if (rc == MS_OK) {
      plan[m] = one->plan, src[m] = srcs[i], bin[m] = path[m];
      idx[m++] = i;
    }
  }
  ms__report *rep = rt_calloc((size_t)(m ? m : 1), sizeof *rep);
  if (ret == n && m) {
    b->plan = plan, b->src = src, b->bin = bin;
    int done = ms__run_batch(batch_child, b, m, o, stop, rep, err);
    for (int k = 0; k < done; k++) from_report(&r[idx[k]], &rep[k]);
    ret = done < 0 ? -1 : done < m ? idx[done] : n;
  }
  free(rep), free(one), free(idx), free(path), free(bin), free(src), free(plan), free(b);
  return ret;
}
