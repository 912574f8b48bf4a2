/*
** oc_bench.c -- the ceilings of an OpenCL device (oc.h oc_bench): four
** microbenchmarks in OpenCL C, built and run in one child of the harness
** (ms_run_child, killed when it overruns; invariant 1), timed with
** profiling events, each point the median of o->repeats runs whose length
** was first doubled up to o->time_per_point:
**   fma    8 independent fma() chains per work-item, 8 work-groups per
**          compute unit: the FP32 peak (2 flops per fma);
**   read   a float4 sum (work-items striding by the global size, a GPU's
**          way) and a VW-vector sum of contiguous chunks per work-item (a
**          CPU's), the faster of the two, over a buffer of 512 MiB (64 MiB quick; at most a
**          quarter of the device's memory and its largest allocation), each
**          work-item striding by the global size: global-memory read
**          bandwidth, bw[DRAM];
**   copy   y[i] = x[i] in float4 over the same size: dram_copy (bytes read
**          + written);
**   local  4 independent chains of local-memory loads per work-item: bw[L1].
** fma and the chunked read use the device's native vector width (VW).
** Figures are of the whole device ([1]); [0] is left 0, which the model
** scales by compute units (threads = compute units).
*/
#include "oc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* VW (prepended as "#define VW n": the device's native float vector width,
** at least 1) sets the type of the fma chains and of the chunked read, so
** that a CPU device whose compiler vectorises explicit vectors only (PoCL:
** a loop inside a work-item stops its work-item loop vectorisation) is
** measured at its vector peak, and a GPU (width 1) with scalars. */
static const char bench_src[] =
  "#if VW == 16\ntypedef float16 vt;\n#elif VW == 8\ntypedef float8 vt;\n"
  "#elif VW == 4\ntypedef float4 vt;\n#elif VW == 2\ntypedef float2 vt;\n"
  "#else\ntypedef float vt;\n#endif\n"
  "__kernel void fma8(__global float *out, const float a, const int iters) {\n"
  "  const vt g = (vt)((float)get_global_id(0) * 1e-7f);\n"
  "  vt x0 = g, x1 = g + 0.1f, x2 = g + 0.2f, x3 = g + 0.3f;\n"
  "  vt x4 = g + 0.4f, x5 = g + 0.5f, x6 = g + 0.6f, x7 = g + 0.7f;\n"
  "  const vt va = (vt)(a), vb = (vt)(0.01f);\n"
  "  for (int i = 0; i < iters; i++) {\n"
  "    x0 = fma(x0, va, vb); x1 = fma(x1, va, vb); x2 = fma(x2, va, vb);\n"
  "    x3 = fma(x3, va, vb); x4 = fma(x4, va, vb); x5 = fma(x5, va, vb);\n"
  "    x6 = fma(x6, va, vb); x7 = fma(x7, va, vb);\n"
  "  }\n"
  "  const vt s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));\n"
  "#if VW == 1\n  out[get_global_id(0)] = s;\n#else\n"
  "  out[get_global_id(0)] = dot(s.lo.lo.lo.lo, (float)1);\n#endif\n"
  "}\n"
  "__kernel void rd(__global const float4 *x, __global float *out, const long n4) {\n"
  "  const long g = get_global_id(0), G = get_global_size(0);\n"
  "  float4 s = (float4)(0.0f);\n"
  "  for (long i = g; i < n4; i += G) s += x[i];\n"
  "  out[g] = (s.x + s.y) + (s.z + s.w);\n"
  "}\n"
  "__kernel void rd_chunk(__global const vt *x, __global float *out, const long per) {\n"
  "  const long g = get_global_id(0);\n"
  "  vt s0 = (vt)(0.0f), s1 = (vt)(0.0f);\n"
  "  for (long i = g * per; i < (g + 1) * per; i += 2) { s0 += x[i]; s1 += x[i + 1]; }\n"
  "  const vt s = s0 + s1;\n"
  "#if VW == 1\n  out[g] = s;\n#else\n  out[g] = dot(s.lo.lo.lo.lo, (float)1);\n#endif\n"
  "}\n"
  "__kernel void cp(__global const float4 *x, __global float4 *y) {\n"
  "  const long g = get_global_id(0);\n"
  "  y[g] = x[g];\n"
  "}\n"
  "#define LW 256\n"
  "__kernel __attribute__((reqd_work_group_size(LW, 1, 1)))\n"
  "void lmem(__global float *out, const int iters) {\n"
  "  __local float t[LW];\n"
  "  const int l = get_local_id(0);\n"
  "  t[l] = (float)l;\n"
  "  barrier(CLK_LOCAL_MEM_FENCE);\n"
  "  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;\n"
  "  for (int i = 0; i < iters; i += 4) {\n"
  "    s0 += t[(l + i) & (LW - 1)]; s1 += t[(l + i + 1) & (LW - 1)];\n"
  "    s2 += t[(l + i + 2) & (LW - 1)]; s3 += t[(l + i + 3) & (LW - 1)];\n"
  "  }\n"
  "  out[get_global_id(0)] = (s0 + s1) + (s2 + s3);\n"
  "}\n";

const char *oc_bench_source(void) { return bench_src; }

typedef struct bench_ctx {
  int plat, dev;
  const cm_bench_opts *o;
  const oc_props *p;
} bench_ctx;

typedef struct bench_rep {
  int ok;
  char msg[512];
  double fma, read, copy, local;   /* FLOP/s, bytes/s */
} bench_rep;

/* Seconds of one launch of k over global x wg, by profiling events; -1
** with msg on an error. */
static double launch(cl_command_queue q, cl_kernel k, size_t global, size_t wg, char *msg,
                     size_t cap) {
  cl_event ev = NULL;
  cl_int e = oc_cl.clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &wg, 0, NULL, &ev);
  cl_ulong t0 = 0, t1 = 0;
  if (!e) e = oc_cl.clWaitForEvents(1, &ev);
  if (!e) e = oc_cl.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
  if (!e) e = oc_cl.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
  if (ev) oc_cl.clReleaseEvent(ev);
  if (e) {
    snprintf(msg, cap, "bench launch (global %zu, local %zu): %s", global, wg, oc_errname(e));
    return -1;
  }
  return 1e-9 * (double)(t1 > t0 ? t1 - t0 : 1);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of o->repeats launches (after one warm-up). */
static double median_launch(cl_command_queue q, cl_kernel k, size_t global, size_t wg,
                            const cm_bench_opts *o, char *msg, size_t cap) {
  double t[64];
  int n = o->repeats < 64 ? o->repeats : 64;
  if (launch(q, k, global, wg, msg, cap) < 0) return -1;
  for (int i = 0; i < n; i++)
    if ((t[i] = launch(q, k, global, wg, msg, cap)) < 0) return -1;
  qsort(t, (size_t)n, sizeof *t, cmp_d);
  return t[n / 2];
}

static void bench_child(int fd, void *ctx) {
  bench_ctx *b = ctx;
  bench_rep *r = rt_calloc(1, sizeof *r);
  rt_err err = {0};
  rt_str log = {0};
  cl_device_id did;
  cl_context cx;
  cl_command_queue q;
  cl_program prog;
  cl_int e = CL_SUCCESS;
  const oc_props *p = b->p;
  int rc = -1;
  int vw = p->native_vec_float;
  vw = vw >= 16 ? 16 : vw >= 8 ? 8 : vw >= 4 ? 4 : vw >= 2 ? 2 : 1;
  rt_str src = {0};
  rt_str_printf(&src, "#define VW %d\n%s", vw, bench_src);
  if (!oc_ids(b->plat, b->dev, NULL, &did, &err) && !oc_queue(did, &cx, &q, &err))
    rc = oc_build_source(cx, did, src.s, NULL, &prog, &log, &err);
  free(src.s);
  if (rc) {
    snprintf(r->msg, sizeof r->msg, "%.500s", rc > 0 ? log.s : err.msg);
    goto send;
  }
  size_t wg = p->max_wg >= 256 ? 256 : (size_t)p->max_wg;
  double tpp = b->o->time_per_point;
  /* fma: iterations doubled until one launch takes tpp */
  size_t gf = (size_t)(p->cus > 0 ? p->cus : 1) * 8 * wg;
  cl_mem out = oc_cl.clCreateBuffer(cx, CL_MEM_READ_WRITE, gf * 4 > 1024 * 256 * 4 ? gf * 4 : 1024 * 256 * 4, NULL, &e);
  cl_kernel kf = out ? oc_cl.clCreateKernel(prog, "fma8", &e) : NULL;
  if (!kf) {
    snprintf(r->msg, sizeof r->msg, "bench kernels: %s", oc_errname(e));
    goto send;
  }
  float a = 0.9999f;
  cl_int iters = 256;
  double t;
  oc_cl.clSetKernelArg(kf, 0, sizeof out, &out);
  oc_cl.clSetKernelArg(kf, 1, sizeof a, &a);
  for (;;) {
    oc_cl.clSetKernelArg(kf, 2, sizeof iters, &iters);
    if ((t = launch(q, kf, gf, wg, r->msg, sizeof r->msg)) < 0) goto send;
    if (t >= tpp || iters > (1 << 28)) break;
    iters *= 2;
  }
  if ((t = median_launch(q, kf, gf, wg, b->o, r->msg, sizeof r->msg)) < 0) goto send;
  r->fma = 2.0 * 8 * vw * (double)iters * (double)gf / t;
  /* read and copy over one buffer size */
  double want = b->o->quick ? 64.0 * 1048576 : 512.0 * 1048576;
  if (p->global_mem > 0 && want > p->global_mem / 4) want = p->global_mem / 4;
  if (p->max_alloc > 0 && want > p->max_alloc) want = p->max_alloc;
  size_t bytes = (size_t)want / (16 * wg) * (16 * wg);
  cl_long n4 = (cl_long)(bytes / 16);
  cl_mem x = oc_cl.clCreateBuffer(cx, CL_MEM_READ_WRITE, bytes, NULL, &e);
  cl_mem y = x ? oc_cl.clCreateBuffer(cx, CL_MEM_READ_WRITE, bytes, NULL, &e) : NULL;
  float one = 1.0f;
  if (y) e = oc_cl.clEnqueueFillBuffer(q, x, &one, sizeof one, 0, bytes, 0, NULL, NULL);
  if (y && !e) e = oc_cl.clEnqueueFillBuffer(q, y, &one, sizeof one, 0, bytes, 0, NULL, NULL);
  if (y && !e) e = oc_cl.clFinish(q);
  cl_kernel kr = y && !e ? oc_cl.clCreateKernel(prog, "rd", &e) : NULL;
  cl_kernel kc = kr ? oc_cl.clCreateKernel(prog, "cp", &e) : NULL;
  cl_kernel kl = kc ? oc_cl.clCreateKernel(prog, "lmem", &e) : NULL;
  cl_kernel kk = kl ? oc_cl.clCreateKernel(prog, "rd_chunk", &e) : NULL;
  if (!kk) {
    snprintf(r->msg, sizeof r->msg, "bench buffers of %zu bytes: %s", bytes, oc_errname(e));
    goto send;
  }
  oc_cl.clSetKernelArg(kr, 0, sizeof x, &x);
  oc_cl.clSetKernelArg(kr, 1, sizeof out, &out);
  oc_cl.clSetKernelArg(kr, 2, sizeof n4, &n4);
  size_t gr = (size_t)(p->cus > 0 ? p->cus : 1) * 4 * wg;
  if (gr > 1024 * 256) gr = 1024 * 256;
  gr = gr / wg * wg;
  if ((t = median_launch(q, kr, gr, wg, b->o, r->msg, sizeof r->msg)) < 0) goto send;
  r->read = (double)bytes / t;
  /* the same bytes, each work-item summing its own contiguous chunk of
  ** VW-float vectors (a CPU's way): the read figure is the faster */
  cl_long per = (cl_long)(bytes / (4 * (size_t)vw) / gr);
  per -= per % 2;
  if (per >= 2) {
    oc_cl.clSetKernelArg(kk, 0, sizeof x, &x);
    oc_cl.clSetKernelArg(kk, 1, sizeof out, &out);
    oc_cl.clSetKernelArg(kk, 2, sizeof per, &per);
    if ((t = median_launch(q, kk, gr, wg, b->o, r->msg, sizeof r->msg)) < 0) goto send;
    double bw = 4.0 * vw * (double)per * (double)gr / t;
    if (bw > r->read) r->read = bw;
  }
  oc_cl.clSetKernelArg(kc, 0, sizeof x, &x);
  oc_cl.clSetKernelArg(kc, 1, sizeof y, &y);
  if ((t = median_launch(q, kc, (size_t)n4, wg, b->o, r->msg, sizeof r->msg)) < 0) goto send;
  r->copy = 2.0 * (double)bytes / t;
  /* local memory: 256-item groups when the device has them */
  if (p->max_wg >= 256 && p->local_mem >= 1024) {
    oc_cl.clSetKernelArg(kl, 0, sizeof out, &out);
    iters = 256;
    for (;;) {
      oc_cl.clSetKernelArg(kl, 1, sizeof iters, &iters);
      if ((t = launch(q, kl, gf / wg * 256, 256, r->msg, sizeof r->msg)) < 0) goto send;
      if (t >= tpp || iters > (1 << 28)) break;
      iters *= 2;
    }
    if ((t = median_launch(q, kl, gf / wg * 256, 256, b->o, r->msg, sizeof r->msg)) < 0)
      goto send;
    r->local = 4.0 * (double)iters * (double)(gf / wg * 256) / t;
  }
  r->ok = 1;
send:
  free(log.s);
  {
    ssize_t k = write(fd, r, sizeof *r);
    _exit(k == (ssize_t)sizeof *r ? 0 : 1);
  }
}

int oc_bench(int plat, int dev, const cm_bench_opts *o, cm_ceilings *c, rt_err *err) {
  memset(c, 0, sizeof *c);
  char measured[32];
  if (cm_bench_begin(o, measured, sizeof measured, err)) return -1;
  double t0 = rt_now();
  oc_props p;
  if (oc_props_get(plat, dev, &p, err)) return -1;
  bench_ctx b = {plat, dev, o, &p};
  bench_rep r;
  ms_child_end end;
  /* the build, the buffers, and 4 points of at most 2 x (repeats + 2) runs */
  double timeout = 120 + 4 * 2.0 * (o->repeats + 2) * fmax(o->time_per_point, 0.01) * 4;
  int rc = ms_run_child(bench_child, &b, timeout, &r, sizeof r, &end);
  if (rc) {
    char why[256];
    rt_err_set(err, "opencl:%d.%d: %s", plat, dev,
               ms_child_why(&end, "bench worker", why, sizeof why));
    return -1;
  }
  if (!r.ok) {
    rt_err_set(err, "opencl:%d.%d: %s", plat, dev, r.msg);
    return -1;
  }
  c->threads = p.cus > 0 ? p.cus : 1;
  c->nclass = 1;
  c->cls[0] = (cm_class){.name = "opencl-fma", .bits = 32, .fma = 1,
                         .flops = {r.fma / c->threads, r.fma}};
  c->peak[0] = r.fma / c->threads;
  c->peak[1] = r.fma;
  c->bw[CM_DRAM - CM_L1][1] = r.read;
  /* no local-memory figure (groups under 256 items): local memory is
  ** taken to be as fast as global memory, never 0 (a model divides by it) */
  c->bw[0][1] = r.local > 0 ? r.local : r.read;
  c->dram_copy[1] = r.copy;
  c->cache[0] = p.local_mem;
  c->cache[1] = p.global_cache;
  snprintf(c->measured, sizeof c->measured, "%s", measured);
  c->seconds = rt_now() - t0;
  return 0;
}
