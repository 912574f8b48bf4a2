/*
** gd_check.c -- verification on the GPU: the worker child decides what
** ms__changed_input and ms__verify decide on the host (measure/
** ms_backend.h) without copying a candidate's vectors back, which for the
** hub's kernels cost more than compiling and timing them together (pnpoly:
** 240 MB per candidate, 0.25 s of its 0.42 s).
**
** The check kernels (check_src) are compiled once per process by NVRTC in
** the parent (gd_check_build; NVRTC needs no GPU, gd.h invariant 3) with
** --fmad=false, so that every double operation rounds as the host's does;
** the worker child, forked after, loads the image it inherited
** (gd_check_open). Invariants:
**  1. Same answer as the host: an output's kernel computes, in the same
**     double arithmetic and order-free reductions (a count and two
**     maxima of non-negative doubles, compared as their bit patterns),
**     ms__verify's nbad, emax and rmax; the host applies its rule to them
**     (gd_check_verdict). An f16 element is widened exactly as the host's
**     f16_value does. Tested against ms__verify on the GPU (test_ms_cuda).
**  2. The device never writes a message: an output that fails is checked
**     again by the host path (the vectors copied back, ms__verify), which
**     writes the one message the host would; a pass sets max_err.
**  3. ROOFTUNE_HOST_VERIFY=1, a check image that does not build, or a
**     device that cannot hold the pristine copies: the host path, as
**     before (the worker says nothing; results are the same).
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gd.h"

static const char check_src[] =
    "typedef unsigned long long u64;\n"
    "typedef long long i64;\n"
    "__device__ __forceinline__ u64 bits(double x) { return (u64)__double_as_longlong(x); }\n"
    "__device__ __forceinline__ double dbl(u64 b) { return __longlong_as_double((i64)b); }\n"
    "__device__ __forceinline__ double absd(double x) { return dbl(bits(x) & 0x7fffffffffffffffULL); }\n"
    "__device__ __forceinline__ int fin(double x) { return ((bits(x) >> 52) & 0x7ff) != 0x7ff; }\n"
    "#define INF dbl(0x7ff0000000000000ULL)\n"
    "/* measure/ms_workload.c f16_value, exactly: both products are exact */\n"
    "__device__ double f16(unsigned short h) {\n"
    "  int e = (h >> 10) & 0x1f, m = h & 0x3ff;\n"
    "  double v = e == 0 ? (double)m * 5.9604644775390625e-08\n"
    "           : e == 31 ? (m ? dbl(0x7ff8000000000000ULL) : INF)\n"
    "           : (double)(m + 1024) * dbl((u64)(e - 25 + 1023) << 52);\n"
    "  return h & 0x8000 ? -v : v;\n"
    "}\n"
    "#define PLAIN(x) ((double)(x))\n"
    "/* ms__verify's loop: res[0] += elements that fail (tolmode 0), res[1] =\n"
    "** max |o - r| (infinite o or NaN: INF), res[2] = max |r| (NaN never) */\n"
    "#define CMP(NAME, T, FP, GET)                                                   \\\n"
    "extern \"C\" __global__ void NAME(const T *o, const T *r, i64 n, double atol,     \\\n"
    "                                double rtol, int tolmode, u64 *res) {          \\\n"
    "  u64 bad = 0;                                                                 \\\n"
    "  double emax = 0, rmax = 0;                                                   \\\n"
    "  for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < n;              \\\n"
    "       j += (i64)gridDim.x * blockDim.x) {                                     \\\n"
    "    double ov = GET(o[j]), rv = GET(r[j]);                                     \\\n"
    "    double d = fin(ov) ? absd(ov - rv) : INF;                                  \\\n"
    "    if (d != d) d = INF;                                                       \\\n"
    "    if (d > emax) emax = d;                                                    \\\n"
    "    if (absd(rv) > rmax) rmax = absd(rv);                                      \\\n"
    "    if (!tolmode)                                                              \\\n"
    "      bad += !(FP ? (fin(ov) && fin(rv) ? absd(ov - rv) <= atol + rtol * absd(rv) \\\n"
    "                                        : ov == rv)                            \\\n"
    "                  : o[j] == r[j]);                                             \\\n"
    "  }                                                                            \\\n"
    "  if (bad) atomicAdd(&res[0], bad);                                            \\\n"
    "  if (emax > 0) atomicMax(&res[1], bits(emax));                                \\\n"
    "  if (rmax > 0) atomicMax(&res[2], bits(rmax));                                \\\n"
    "}\n"
    "CMP(rt_cmp_f32, float, 1, PLAIN)\n"
    "CMP(rt_cmp_f64, double, 1, PLAIN)\n"
    "CMP(rt_cmp_f16, unsigned short, 1, f16)\n"
    "CMP(rt_cmp_i8, signed char, 0, PLAIN)\n"
    "CMP(rt_cmp_u8, unsigned char, 0, PLAIN)\n"
    "CMP(rt_cmp_i16, short, 0, PLAIN)\n"
    "CMP(rt_cmp_u16, unsigned short, 0, PLAIN)\n"
    "CMP(rt_cmp_i32, int, 0, PLAIN)\n"
    "CMP(rt_cmp_u32, unsigned, 0, PLAIN)\n"
    "CMP(rt_cmp_i64, i64, 0, PLAIN)\n"
    "CMP(rt_cmp_u64, u64, 0, PLAIN)\n"
    "/* res[0] += 1 when a's bytes differ from b's: words, then the tail */\n"
    "extern \"C\" __global__ void rt_same(const u64 *a, const u64 *b, i64 words,\n"
    "                                   const unsigned char *ta, const unsigned char *tb,\n"
    "                                   int tail, u64 *res) {\n"
    "  int diff = 0;\n"
    "  for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < words;\n"
    "       j += (i64)gridDim.x * blockDim.x)\n"
    "    diff |= a[j] != b[j];\n"
    "  if (blockIdx.x == 0 && (int)threadIdx.x < tail) diff |= ta[threadIdx.x] != tb[threadIdx.x];\n"
    "  if (diff) atomicAdd(&res[0], 1ULL);\n"
    "}\n";

/* The kernel of each kn_elem, in kn_elem's order. */
static const char *const cmp_name[GD_CHECK_NELEM] = {
    "rt_cmp_f32", "rt_cmp_f64", "rt_cmp_f16", "rt_cmp_i8",  "rt_cmp_u8",  "rt_cmp_i16",
    "rt_cmp_u16", "rt_cmp_i32", "rt_cmp_u32", "rt_cmp_i64", "rt_cmp_u64"};

/* The process's image (built once; inherited by the children forked after). */
static struct {
  int tried;
  void *img;
  size_t n;
  char why[200];
} im;

const char *gd_check_source(void) { return check_src; }

int gd_check_build(int cc_major, int cc_minor, rt_err *err) {
  if (!im.tried) {
    im.tried = 1;
    const char *e = getenv("ROOFTUNE_HOST_VERIFY");
    rt_str log = {0};
    rt_err e2 = {0};
    if (e && *e && strcmp(e, "0")) {
      snprintf(im.why, sizeof im.why, "ROOFTUNE_HOST_VERIFY=%s", e);
    } else {
      int rc = gd_nvrtc_compile(check_src, cc_major, cc_minor, "--fmad=false", &im.img, &im.n,
                                &log, &e2);
      if (rc) snprintf(im.why, sizeof im.why, "the check kernels do not build: %.150s",
                       rc < 0 ? e2.msg : log.s ? log.s : "");
    }
    free(log.s);
  }
  if (im.img) return 0;
  rt_err_set(err, "%s", im.why);
  return -1;
}

int gd_check_open(gd_check *ck, int sms, rt_err *err) {
  memset(ck, 0, sizeof *ck);
  if (!im.img) {
    rt_err_set(err, "%s", im.tried ? im.why : "gd_check_build was not called");
    return -1;
  }
  char b[200];
  CUresult r = gd_cu.cuModuleLoadData(&ck->mod, im.img);
  for (int i = 0; !r && i < GD_CHECK_NELEM; i++)
    r = gd_cu.cuModuleGetFunction(&ck->cmp[i], ck->mod, cmp_name[i]);
  if (!r) r = gd_cu.cuModuleGetFunction(&ck->same, ck->mod, "rt_same");
  if (!r) r = gd_cu.cuMemAlloc(&ck->res, 3 * sizeof(uint64_t));
  if (r) {
    rt_err_set(err, "check kernels: %s", gd_errstr(r, b, sizeof b));
    gd_check_close(ck);
    return -1;
  }
  ck->blocks = sms > 0 ? 8 * sms : 1024;
  return 0;
}

void gd_check_close(gd_check *ck) {
  if (ck->res) gd_cu.cuMemFree(ck->res);
  if (ck->mod) gd_cu.cuModuleUnload(ck->mod);
  memset(ck, 0, sizeof *ck);
}

/* Launch f over n items (grid-stride, at most ck->blocks blocks of 256)
** on s after zeroing res, then read res back into out[3]. */
static CUresult launch(gd_check *ck, CUfunction f, CUstream s, int64_t n, void **args,
                       uint64_t out[3]) {
  int64_t g = (n + 255) / 256;
  unsigned grid = (unsigned)(g < 1 ? 1 : g > ck->blocks ? ck->blocks : g);
  CUresult r = gd_cu.cuMemsetD32Async(ck->res, 0, 6, s);
  if (!r) r = gd_cu.cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, 0, s, args, NULL);
  if (!r) r = gd_cu.cuStreamSynchronize(s);
  if (!r) r = gd_cu.cuMemcpyDtoH(out, ck->res, 3 * sizeof *out);
  return r;
}

CUresult gd_check_same(gd_check *ck, CUstream s, CUdeviceptr a, CUdeviceptr b, size_t bytes,
                       int *same) {
  long long words = (long long)(bytes / 8);
  int tail = (int)(bytes % 8);
  CUdeviceptr ta = a + (CUdeviceptr)words * 8, tb = b + (CUdeviceptr)words * 8, res = ck->res;
  void *args[] = {&a, &b, &words, &ta, &tb, &tail, &res};
  uint64_t out[3];
  CUresult r = launch(ck, ck->same, s, words, args, out);
  *same = !r && out[0] == 0;
  return r;
}

CUresult gd_check_output(gd_check *ck, CUstream s, kn_elem e, CUdeviceptr out, CUdeviceptr ref,
                         int64_t n, double atol, double rtol, int tolmode, gd_check_res *res) {
  long long nn = n;
  int tm = tolmode;
  CUdeviceptr rp = ck->res;
  void *args[] = {&out, &ref, &nn, &atol, &rtol, &tm, &rp};
  uint64_t v[3];
  CUresult r = launch(ck, ck->cmp[e], s, n, args, v);
  if (r) return r;
  res->nbad = v[0];
  memcpy(&res->emax, &v[1], sizeof res->emax);
  memcpy(&res->rmax, &v[2], sizeof res->rmax);
  return CUDA_SUCCESS;
}

int gd_check_verdict(const gd_check_res *res, int tolmode, double tol, double *rel) {
  double x = res->emax / fmax(res->rmax, 1e-30);
  if (x != x) x = INFINITY;
  *rel = x;
  return tolmode ? x > tol : res->nbad > 0;
}
