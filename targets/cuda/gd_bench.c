/*
** gd_bench.c -- the measured ceilings of a CUDA device (the CUDA row's
** bench; moved from cost_model/cm_bench_cuda.c): the GPU counterpart of
** targets/host/hw_bench.c. The microbenchmarks are one CUDA C++ source
** (gd_bench_source) compiled by NVRTC in the calling process (NVRTC
** needs no GPU) and run through the driver API in a forked child (gd.h
** invariant 1: this process never calls cuInit); the child sends one
** fixed-size report through a pipe and _exits, and the parent kills its
** process group when it overruns a deadline sized from the options.
**
** What is measured, each point the median of o->repeats launches timed
** with CUDA events, each launch sized to take about o->time_per_point
** seconds (at least 2 ms), after one untimed launch:
**  - FP32 peak: 16 independent FMA (or add) chains per thread, 8 steps
**    unrolled per loop trip; all SMs: a grid of sms x (blocks of 256
**    threads that fit on an SM); one SM: one block of the most threads a
**    block may have. Classes "fp32-fma" and "fp32-add".
**  - Read bandwidth: float4 loads through L2 only (ld.global.cg: the L1
**    would otherwise hold an SM's share of a small working set), 4 loads
**    in flight per thread, grid-stride, summed so nothing is dead, passes
**    over a working set; all SMs and one block (one SM). A sweep of
**    working sets from 1 MiB to the DRAM buffer (1 GiB; 256 MiB --quick)
**    in steps of 2 (4 --quick), plus the L2 point (a third of the L2).
**  - Copy bandwidth: float4 grid-stride copy between two buffers far
**    beyond the L2; bytes read + written.
**  - Shared-memory bandwidth: float4 loads, each warp reading 32
**    consecutive elements (conflict-free), 8 per loop trip.
** The ceilings as cm.h reads them on a GPU: threads is the SM count, [0]
** one SM and [1] all SMs; peak the FMA class; bw[L1] shared memory
** (capacity: shared memory per SM), bw[L2] the sweep's L2 point, bw[L3] 0
** (there is none), bw[DRAM] the larger of read and copy over the DRAM
** buffer; gpu the device's properties (gd_props).
*/
#include "gd.h"

#include "../../cost_model/cm.h"
#include "../../measure/ms.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- The microbenchmarks (CUDA C++ for NVRTC: no #include) ---- */

static const char bench_src[] =
    "// rooftune's ceilings microbenchmarks (cost_model/gd_bench.c)\n"
    "#define CHAINS 16\n"
    "#define STEPS 8\n"
    "// FP32 peak: CHAINS independent chains, STEPS per trip; b = 1, c = 0\n"
    "// at launch (unknown to the compiler); never = NaN, so out is not\n"
    "// written but the chains are live.\n"
    "extern \"C\" __global__ void rt_fma(int iters, float b, float c, float never, float *out) {\n"
    "  float a[CHAINS];\n"
    "#pragma unroll\n"
    "  for (int k = 0; k < CHAINS; k++) a[k] = threadIdx.x * 1e-3f + k;\n"
    "  for (int i = 0; i < iters; i++) {\n"
    "#pragma unroll\n"
    "    for (int s = 0; s < STEPS; s++)\n"
    "#pragma unroll\n"
    "      for (int k = 0; k < CHAINS; k++) a[k] = fmaf(a[k], b, c);\n"
    "  }\n"
    "  float sum = 0.0f;\n"
    "#pragma unroll\n"
    "  for (int k = 0; k < CHAINS; k++) sum += a[k];\n"
    "  if (sum == never) out[blockIdx.x * blockDim.x + threadIdx.x] = sum;\n"
    "}\n"
    "extern \"C\" __global__ void rt_add(int iters, float b, float c, float never, float *out) {\n"
    "  float a[CHAINS];\n"
    "#pragma unroll\n"
    "  for (int k = 0; k < CHAINS; k++) a[k] = threadIdx.x * 1e-3f + k;\n"
    "  for (int i = 0; i < iters; i++) {\n"
    "#pragma unroll\n"
    "    for (int s = 0; s < STEPS; s++)\n"
    "#pragma unroll\n"
    "      for (int k = 0; k < CHAINS; k++) a[k] = a[k] + c;\n"
    "  }\n"
    "  float sum = b;\n"
    "#pragma unroll\n"
    "  for (int k = 0; k < CHAINS; k++) sum += a[k];\n"
    "  if (sum == never) out[blockIdx.x * blockDim.x + threadIdx.x] = sum;\n"
    "}\n"
    "__device__ __forceinline__ void acc4(float4 &a, float4 x) {\n"
    "  a.x += x.x; a.y += x.y; a.z += x.z; a.w += x.w;\n"
    "}\n"
    "// Read n float4 through L2 (cache-global loads), passes times.\n"
    "extern \"C\" __global__ void rt_read(const float4 *__restrict__ p, unsigned long long n,\n"
    "                                     int passes, float never, float *out) {\n"
    "  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "  unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  float4 a0 = make_float4(0.f, 0.f, 0.f, 0.f), a1 = a0, a2 = a0, a3 = a0;\n"
    "  for (int r = 0; r < passes; r++) {\n"
    "    unsigned long long i = t;\n"
    "    for (; i + 3 * stride < n; i += 4 * stride) {\n"
    "      float4 x0 = __ldcg(p + i), x1 = __ldcg(p + i + stride);\n"
    "      float4 x2 = __ldcg(p + i + 2 * stride), x3 = __ldcg(p + i + 3 * stride);\n"
    "      acc4(a0, x0); acc4(a1, x1); acc4(a2, x2); acc4(a3, x3);\n"
    "    }\n"
    "    for (; i < n; i += stride) acc4(a0, __ldcg(p + i));\n"
    "  }\n"
    "  acc4(a0, a1); acc4(a2, a3); acc4(a0, a2);\n"
    "  float sum = (a0.x + a0.y) + (a0.z + a0.w);\n"
    "  if (sum == never) out[t] = sum;\n"
    "}\n"
    "// Copy n float4 from src to dst (L2 only), passes times.\n"
    "extern \"C\" __global__ void rt_copy(const float4 *__restrict__ src, float4 *__restrict__ dst,\n"
    "                                     unsigned long long n, int passes) {\n"
    "  unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "  unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  for (int r = 0; r < passes; r++) {\n"
    "    unsigned long long i = t;\n"
    "    for (; i + 3 * stride < n; i += 4 * stride) {\n"
    "      float4 x0 = __ldcg(src + i), x1 = __ldcg(src + i + stride);\n"
    "      float4 x2 = __ldcg(src + i + 2 * stride), x3 = __ldcg(src + i + 3 * stride);\n"
    "      __stcg(dst + i, x0); __stcg(dst + i + stride, x1);\n"
    "      __stcg(dst + i + 2 * stride, x2); __stcg(dst + i + 3 * stride, x3);\n"
    "    }\n"
    "    for (; i < n; i += stride) __stcg(dst + i, __ldcg(src + i));\n"
    "  }\n"
    "}\n"
    "// Shared memory: each warp reads 32 consecutive float4 (conflict-free),\n"
    "// 8 loads per trip at a base that moves every trip (nothing to hoist).\n"
    "#define SM_WIN 1024\n"
    "#define SM_LOADS 8\n"
    "extern \"C\" __global__ void rt_smem(int iters, float never, float *out) {\n"
    "  __shared__ float4 s[SM_WIN + 32 * (SM_LOADS - 1)];\n"
    "  for (int i = threadIdx.x; i < SM_WIN + 32 * (SM_LOADS - 1); i += blockDim.x)\n"
    "    s[i] = make_float4(i * 1e-3f, 1.f, 2.f, 3.f);\n"
    "  __syncthreads();\n"
    "  float4 a0 = make_float4(0.f, 0.f, 0.f, 0.f), a1 = a0, a2 = a0, a3 = a0;\n"
    "  unsigned j = threadIdx.x;\n"
    "  for (int it = 0; it < iters; it++) {\n"
    "    unsigned b = j & (SM_WIN - 1);\n"
    "    acc4(a0, s[b]); acc4(a1, s[b + 32]); acc4(a2, s[b + 64]); acc4(a3, s[b + 96]);\n"
    "    acc4(a0, s[b + 128]); acc4(a1, s[b + 160]); acc4(a2, s[b + 192]); acc4(a3, s[b + 224]);\n"
    "    j += 32;\n"
    "  }\n"
    "  acc4(a0, a1); acc4(a2, a3); acc4(a0, a2);\n"
    "  float sum = (a0.x + a0.y) + (a0.z + a0.w);\n"
    "  if (sum == never) out[blockIdx.x * blockDim.x + threadIdx.x] = sum;\n"
    "}\n";

/* Work per unit of each kernel, in the source's terms. */
#define SRC_CHAINS 16
#define SRC_STEPS 8
#define SRC_SM_LOADS 8
#define BLOCK 256                 /* threads per block of the all-SM runs */

const char *gd_bench_source(void) { return bench_src; }

/* ---- The child: the driver, the launches, the report ---- */

typedef struct report {
  int ok;                       /* 1: c holds the figures */
  char msg[512];                /* why not */
  cm_ceilings c;
  double copy_bw[2];            /* DRAM copy, bytes read + written /s */
  double read_bw[2];            /* DRAM read */
  int blocks_sm;                /* blocks of BLOCK threads per SM */
} report;

typedef struct gpu {
  const gd_props *p;
  const cm_bench_opts *o;
  double target;                /* seconds per launch */
  CUfunction fma, add, rd, cp, smem;
  CUevent e0, e1;
  CUdeviceptr a, d, out;        /* read buffer, copy destination, sink */
  size_t abytes;                /* bytes of a (d has half) */
  float never;                  /* NaN */
} gpu;

/* r is not CUDA_SUCCESS: err says which call failed and why. */
static int cu_fail(CUresult r, const char *what, rt_err *err) {
  char b[256];
  rt_err_set(err, "%s: %s", what, gd_errstr(r, b, sizeof b));
  return -1;
}
#define CK(call, what)                                         \
  do {                                                         \
    CUresult r_ = (call);                                      \
    if (r_ != CUDA_SUCCESS) return cu_fail(r_, what, err);     \
  } while (0)

/* One launch of f (1-D grid and block, arguments args) timed with events:
** *s seconds. */
static int timed(gpu *g, CUfunction f, unsigned grid, unsigned block, void **args, double *s,
                 rt_err *err) {
  CK(gd_cu.cuEventRecord(g->e0, NULL), "cuEventRecord");
  CK(gd_cu.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
  CK(gd_cu.cuEventRecord(g->e1, NULL), "cuEventRecord");
  CK(gd_cu.cuEventSynchronize(g->e1), "kernel run");
  float ms = 0;
  CK(gd_cu.cuEventElapsedTime(&ms, g->e0, g->e1), "cuEventElapsedTime");
  *s = ms * 1e-3;
  return 0;
}

/* A kernel whose run length is one int argument (*units points at it in
** args): units for a launch of about g->target seconds (doubled from the
** start value until a launch takes a tenth of it, then scaled), then the
** median over o->repeats launches of work_per_unit * units / seconds. */
static int measure(gpu *g, CUfunction f, unsigned grid, unsigned block, void **args, int *units,
                   double work_per_unit, double *rate, rt_err *err) {
  double s = 0;
  if (timed(g, f, grid, block, args, &s, err)) return -1;   /* untimed: warm-up */
  for (;;) {
    if (timed(g, f, grid, block, args, &s, err)) return -1;
    if (s >= g->target / 10 || *units >= (1 << 28)) break;
    double next = (double)*units * (s < g->target / 1000 ? 16 : 2);
    *units = next > (1 << 28) ? (1 << 28) : (int)next;
  }
  double u = *units * g->target / (s > 0 ? s : 1e-9);
  *units = u < 1 ? 1 : u > (1 << 30) ? (1 << 30) : (int)u;
  double r[64];
  int n = g->o->repeats > 64 ? 64 : g->o->repeats;
  for (int i = 0; i < n; i++) {
    if (timed(g, f, grid, block, args, &s, err)) return -1;
    r[i] = work_per_unit * *units / (s > 0 ? s : 1e-9);
  }
  for (int i = 1; i < n; i++)   /* insertion sort: n is small */
    for (int k = i; k > 0 && r[k - 1] > r[k]; k--) {
      double x = r[k];
      r[k] = r[k - 1];
      r[k - 1] = x;
    }
  *rate = n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2]);
  return 0;
}

/* The grid and block of figure m: 0 one SM (one block of the most threads
** a block may have), 1 all SMs. */
static void shape(const gpu *g, int blocks_sm, int m, unsigned *grid, unsigned *block) {
  int maxb = g->p->max_threads_block > 0 ? g->p->max_threads_block : 1024;
  *grid = m ? (unsigned)(g->p->sms * blocks_sm) : 1;
  *block = m ? BLOCK : (unsigned)maxb;
}

static int peak(gpu *g, int blocks_sm, int fma, cm_class *cl, rt_err *err) {
  snprintf(cl->name, sizeof cl->name, "%s", fma ? "fp32-fma" : "fp32-add");
  cl->bits = 32;
  cl->fma = fma;
  float b = 1.0f, c = 0.0f;
  for (int m = 0; m < 2; m++) {
    unsigned grid, block;
    shape(g, blocks_sm, m, &grid, &block);
    int iters = 64;
    void *args[] = {&iters, &b, &c, &g->never, &g->out};
    double per = (double)grid * block * SRC_CHAINS * SRC_STEPS * (fma ? 2 : 1);
    if (measure(g, fma ? g->fma : g->add, grid, block, args, &iters, per, &cl->flops[m], err))
      return -1;
  }
  return 0;
}

/* Read bandwidth over the first ws bytes of g->a: [0] one SM, [1] all. */
static int read_bw(gpu *g, int blocks_sm, double ws, double bw[2], rt_err *err) {
  unsigned long long n = (unsigned long long)(ws / 16);
  for (int m = 0; m < 2; m++) {
    unsigned grid, block;
    shape(g, blocks_sm, m, &grid, &block);
    int passes = 1;
    void *args[] = {&g->a, &n, &passes, &g->never, &g->out};
    if (measure(g, g->rd, grid, block, args, &passes, 16.0 * n, &bw[m], err)) return -1;
  }
  return 0;
}

static int copy_bw(gpu *g, int blocks_sm, double bw[2], rt_err *err) {
  unsigned long long n = (unsigned long long)(g->abytes / 2 / 16);
  for (int m = 0; m < 2; m++) {
    unsigned grid, block;
    shape(g, blocks_sm, m, &grid, &block);
    int passes = 1;
    void *args[] = {&g->a, &g->d, &n, &passes};
    if (measure(g, g->cp, grid, block, args, &passes, 2 * 16.0 * n, &bw[m], err)) return -1;
  }
  return 0;
}

static int smem_bw(gpu *g, int blocks_sm, double bw[2], rt_err *err) {
  for (int m = 0; m < 2; m++) {
    unsigned grid, block;
    shape(g, blocks_sm, m, &grid, &block);
    int iters = 64;
    void *args[] = {&iters, &g->never, &g->out};
    double per = (double)grid * block * SRC_SM_LOADS * 16;
    if (measure(g, g->smem, grid, block, args, &iters, per, &bw[m], err)) return -1;
  }
  return 0;
}

/* Blocks of BLOCK threads of f that fit on one SM (at least 1). */
static int fit(CUfunction f, int *blocks, rt_err *err) {
  CK(gd_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, BLOCK, 0), "occupancy");
  if (*blocks < 1) *blocks = 1;
  return 0;
}

/* The DRAM buffer's size: 1 GiB (256 MiB quick), less on a small device. */
static double dram_bytes(const gd_props *p, int quick) {
  double b = quick ? 256.0 * 1048576 : 1024.0 * 1048576;
  while (p->mem_bytes > 0 && 1.5 * b > 0.5 * p->mem_bytes && b > 16.0 * 1048576) b /= 2;
  return b;
}

/* The working set of the L2 figure: a third of the L2, whole MiB. */
static double l2_ws(const gd_props *p) {
  double w = floor(p->l2_bytes / 3.0 / 1048576) * 1048576;
  return w >= 1048576 ? w : 1048576;
}

/* Everything, inside the child with a current context and module. */
static int run_all(gpu *g, CUmodule mod, report *rep, rt_err *err) {
  cm_ceilings *c = &rep->c;
  CK(gd_cu.cuModuleGetFunction(&g->fma, mod, "rt_fma"), "cuModuleGetFunction rt_fma");
  CK(gd_cu.cuModuleGetFunction(&g->add, mod, "rt_add"), "cuModuleGetFunction rt_add");
  CK(gd_cu.cuModuleGetFunction(&g->rd, mod, "rt_read"), "cuModuleGetFunction rt_read");
  CK(gd_cu.cuModuleGetFunction(&g->cp, mod, "rt_copy"), "cuModuleGetFunction rt_copy");
  CK(gd_cu.cuModuleGetFunction(&g->smem, mod, "rt_smem"), "cuModuleGetFunction rt_smem");
  CK(gd_cu.cuEventCreate(&g->e0, CU_EVENT_DEFAULT), "cuEventCreate");
  CK(gd_cu.cuEventCreate(&g->e1, CU_EVENT_DEFAULT), "cuEventCreate");
  g->abytes = (size_t)dram_bytes(g->p, g->o->quick);
  size_t sink = (size_t)(g->p->sms > 0 ? g->p->sms : 1) * 2048 * 4 * sizeof(float);
  CK(gd_cu.cuMemAlloc(&g->a, g->abytes), "cuMemAlloc (read buffer)");
  CK(gd_cu.cuMemAlloc(&g->d, g->abytes / 2), "cuMemAlloc (copy destination)");
  CK(gd_cu.cuMemAlloc(&g->out, sink), "cuMemAlloc (sink)");
  /* 0x3c23d70a is 0.01f: finite, normal values for the sums. */
  CK(gd_cu.cuMemsetD32(g->a, 0x3c23d70a, g->abytes / 4), "cuMemsetD32");
  CK(gd_cu.cuMemsetD32(g->d, 0, g->abytes / 8), "cuMemsetD32");
  CK(gd_cu.cuCtxSynchronize(), "cuCtxSynchronize");

  int bf, ba, br, bc, bs;
  if (fit(g->fma, &bf, err) || fit(g->add, &ba, err) || fit(g->rd, &br, err) ||
      fit(g->cp, &bc, err) || fit(g->smem, &bs, err))
    return -1;
  rep->blocks_sm = bf;
  c->threads = g->p->sms;
  if (peak(g, bf, 1, &c->cls[0], err) || peak(g, ba, 0, &c->cls[1], err)) return -1;
  c->nclass = 2;
  c->peak[0] = c->cls[0].flops[0];
  c->peak[1] = c->cls[0].flops[1];
  if (smem_bw(g, bs, c->bw[0], err)) return -1;
  /* The sweep: 1 MiB up to the DRAM buffer, the L2 point among them. */
  double sizes[CM_MAXSWEEP], l2 = l2_ws(g->p), top = (double)g->abytes;
  int n = 0;
  cm_sweep_insert(sizes, &n, CM_MAXSWEEP, l2);
  cm_sweep_insert(sizes, &n, CM_MAXSWEEP, top);
  for (double b = 1048576; b < top * 0.99; b *= g->o->quick ? 4 : 2)
    cm_sweep_insert(sizes, &n, CM_MAXSWEEP, b);
  for (int k = 0; k < n; k++) {
    cm_sweep_pt *pt = &c->sweep[c->nsweep];
    pt->bytes = sizes[k];
    if (read_bw(g, br, sizes[k], pt->bw, err)) return -1;
    c->nsweep++;
    for (int m = 0; m < 2; m++) {
      if (fabs(sizes[k] - l2) <= 0.01 * l2) c->bw[1][m] = pt->bw[m];
      if (sizes[k] == top) rep->read_bw[m] = pt->bw[m];
    }
  }
  if (copy_bw(g, bc, rep->copy_bw, err)) return -1;
  for (int m = 0; m < 2; m++) {
    c->bw[3][m] = fmax(rep->read_bw[m], rep->copy_bw[m]);
    c->dram_copy[m] = rep->copy_bw[m];
  }
  return 0;
}

/* The child: bench device dev with the compiled image, write the report
** to fd, _exit. */
static void child_main(int fd, int dev, const gd_props *p, const cm_bench_opts *o,
                       const void *image) {
  report *rep = rt_calloc(1, sizeof *rep);
  rt_err err = {0};
  gpu g = {.p = p, .o = o, .never = NAN};
  g.target = o->time_per_point > 0.002 ? o->time_per_point : 0.002;
  CUcontext ctx;
  CUmodule mod;
  CUresult r;
  if (!gd_driver_init(&err) && !gd_context(dev, &ctx, &err)) {
    if ((r = gd_cu.cuModuleLoadData(&mod, image)) != CUDA_SUCCESS)
      cu_fail(r, "cuModuleLoadData", &err);
    else if (!run_all(&g, mod, rep, &err))
      rep->ok = 1;
  }
  if (!rep->ok) snprintf(rep->msg, sizeof rep->msg, "%s", err.msg[0] ? err.msg : "failed");
  rt_write_all(fd, rep, sizeof *rep);   /* a short report is the parent's to see */
  _exit(0);
}

/* What the child needs (ms_run_child's context). */
typedef struct bench_child {
  int dev;
  const gd_props *p;
  const cm_bench_opts *o;
  const void *image;
} bench_child;

static void bench_child_main(int fd, void *ctx) {
  bench_child *b = ctx;
  child_main(fd, b->dev, b->p, b->o, b->image);
}

/* Run the child (measure/ms.h ms_run_child: its own process group, killed
** at the deadline). 0 with *rep read (its ok says whether the bench
** worked), -1 with err (fork failed, timeout, the child died). */
static int run_child(int dev, const gd_props *p, const cm_bench_opts *o, const void *image,
                     double timeout, report *rep, rt_err *err) {
  bench_child b = {dev, p, o, image};
  ms_child_end end;
  if (ms_run_child(bench_child_main, &b, timeout, rep, sizeof *rep, &end) == 0) return 0;
  char why[256];
  rt_err_set(err, "%s", ms_child_why(&end, "bench worker", why, sizeof why));
  return -1;
}

int gd_bench(int dev, const cm_bench_opts *o, cm_ceilings *c, rt_err *err) {
  memset(c, 0, sizeof *c);
  char measured[32];
  if (cm_bench_begin(o, measured, sizeof measured, err)) return -1;
  double t0 = rt_now();
  gd_props p;
  if (gd_props_get(dev, &p, err)) {
    rt_err_prefix(err, "cuda:%d", dev);
    return -1;
  }
  void *image = NULL;
  size_t size = 0;
  rt_str log = {0};
  int rc = gd_nvrtc_compile(bench_src, p.cc_major, p.cc_minor, NULL, &image, &size, &log, err);
  if (rc > 0) rt_err_set(err, "the bench kernels do not compile for sm_%d%d: %.300s", p.cc_major,
                         p.cc_minor, log.s ? log.s : "");
  free(log.s);
  if (rc) {
    free(image);
    return -1;
  }
  /* Deadline: every point's launches at the target length, several times
  ** over, plus a minute for the context and the buffers. */
  double tpl = o->time_per_point > 0.002 ? o->time_per_point : 0.002;
  int points = 2 * (2 + 1 + 1 + 2 + 12);
  double timeout = 60 + 4.0 * points * (o->repeats + 6) * tpl;
  report *rep = rt_calloc(1, sizeof *rep);
  rc = run_child(dev, &p, o, image, timeout, rep, err);
  free(image);
  if (!rc && !rep->ok) {
    rt_err_set(err, "%s", rep->msg);
    rc = -1;
  }
  if (rc) {
    rt_err_prefix(err, "cuda:%d", dev);
    free(rep);
    return -1;
  }
  *c = rep->c;
  free(rep);
  snprintf(c->measured, sizeof c->measured, "%s", measured);
  c->cache[0] = p.smem_sm;
  c->cache[1] = p.l2_bytes;
  c->cache[2] = 0;
  c->cache[3] = 0;
  c->gpu = (cm_gpu){
    .cc_major = p.cc_major, .cc_minor = p.cc_minor, .sms = p.sms, .warp = p.warp,
    .max_threads_block = p.max_threads_block, .max_threads_sm = p.max_threads_sm,
    .max_blocks_sm = p.max_blocks_sm, .regs_block = p.regs_block, .regs_sm = p.regs_sm,
    .smem_sm = p.smem_sm, .smem_block_optin = p.smem_block_optin, .l2_bytes = p.l2_bytes,
    .clock_khz = p.clock_khz,
  };
  c->seconds = rt_now() - t0;
  return 0;
}
