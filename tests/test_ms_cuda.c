/*
** test_ms_cuda.c -- the CUDA worker (targets/cuda/gd_worker.c) on a hand-made
** device kernel, y = 2x over n floats: a right candidate verifies and is
** timed; one that computes the wrong value, leaves outputs unwritten,
** writes to its input, faults (an illegal address), hangs (an endless
** loop) or does not compile gets the matching status, and a right
** candidate measured after each of them is still fine (no state leaks
** from a poisoned context). The device reference is checked against the
** host reference through the harness itself: the reference measured as
** a candidate verifies. A plan that asks more shared memory than the
** device allows is a runtime error naming both. The same candidates in
** one batch (gd_measure_batch) get the same statuses. Without a CUDA
** device every test reports "skipped: no CUDA device" but the batch's
** harness failure, which is checked.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "measure/ms.h"
#include "measure/ms_backend.h"
#include "targets/cuda/gd.h"
#include "targets/tg.h"
#include "tk_run.h"

#define N 1000003   /* odd: no schedule divides it */

static int sc_buffers(const kn_problem *pb, kn_buf *b) {
  (void)pb;
  b[0] = (kn_buf){.name = "x", .n = N, .out = 0};
  b[1] = (kn_buf){.name = "y", .n = N, .out = 1};
  return 2;
}
static void sc_reference(const kn_problem *pb, float *const *b) {
  (void)pb;
  for (int i = 0; i < N; i++) b[1][i] = 2.0f * b[0][i];
}
static double sc_flops(const kn_problem *pb) { (void)pb; return N; }
static double sc_bytes(const kn_problem *pb) { (void)pb; return 8.0 * N; }
static double sc_tol(const kn_problem *pb) { (void)pb; return 0; }

/* A candidate: body computes element i (in range) of y from x. */
static char *cand(const char *body, int block) {
  char *s = rt_malloc(2048);
  snprintf(s, 2048,
           "//@rk launch scale %d 1 1 %d 1 1 0 b0 b1\n"
           "extern \"C\" __global__ void scale(float *x, float *y) {\n"
           "  long i = (long)blockIdx.x * blockDim.x + threadIdx.x;\n"
           "  if (i >= %d) return;\n  %s\n}\n",
           (N + block - 1) / block, block, N, body);
  return s;
}
static char *sc_devref(const kn_problem *pb) {
  (void)pb;
  return cand("y[i] = 2.0f * x[i];", 128);
}

static const kn_kernel scale = {
  .name = "scale", .summary = "y = 2x (test)", .buffers = sc_buffers,
  .reference = sc_reference, .flops = sc_flops, .min_bytes = sc_bytes, .tolerance = sc_tol,
  .device_reference = sc_devref,
};

static ms_workload *w;
static ms_opts o;
static char cache[64];

static int setup(void **state) {
  (void)state;
  gd_props p;
  rt_err err = {0};
  if (gd_props_get(0, &p, &err)) return 0;   /* tests skip */
  snprintf(cache, sizeof cache, "/tmp/rt-mscuda-%d", (int)getpid());
  ms_opts_default(&o);
  o.cache_dir = cache;
  o.timeout = 20;
  o.time_cap = 0.2;
  kn_problem pb = {0};
  w = ms_workload_new(&scale, &pb, NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  ms_workload_free(w);
  if (cache[0]) tk_rm_rf(cache);
  return 0;
}

static void need_device(void) {
  if (!w) {
    printf("skipped: no CUDA device\n");
    skip();
  }
}

static ms_status measure(const char *src, ms_result *r) {
  int rc = gd_measure(0, w, src, &o, r);
  assert_int_equal(rc, 0);
  return r->status;
}

static void right_then_wrong_then_right(void **state) {
  (void)state;
  need_device();
  ms_result r;
  static const struct { const char *body; ms_status want; const char *msg; } cases[] = {
    {"y[i] = 2.0f * x[i];", MS_OK, NULL},
    {"y[i] = 2.0f * x[i] + (i == 777 ? 1e-3f : 0.0f);", MS_WRONG_RESULT, "output y wrong"},
    {"if (i != 12345) y[i] = 2.0f * x[i];", MS_WRONG_RESULT, "output y wrong"},
    {"y[i] = 2.0f * x[i]; if (i == 5) x[i] = 0;", MS_WRONG_RESULT, "wrote to its input x"},
    {"y[i] = 2.0f * x[i]; if (i == 5) ((float *)16)[0] = 1;", MS_RUNTIME_ERROR,
     "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {"volatile float *v = x; while (v[0] < 2.0f) {} y[i] = x[i];", MS_TIMEOUT, "timeout"},
    {"y[i] = 2.0f * x[i] +;", MS_COMPILE_ERROR, "compile error"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    char *src = cand(cases[c].body, 256);
    double saved = o.timeout;
    if (cases[c].want == MS_TIMEOUT) o.timeout = 5;
    ms_status st = measure(src, &r);
    o.timeout = saved;
    free(src);
    if (st != cases[c].want)
      fail_msg("case %zu: status %s, expected %s (%s)", c, ms_status_name(st),
               ms_status_name(cases[c].want), r.msg);
    if (cases[c].msg && !strstr(r.msg, cases[c].msg))
      fail_msg("case %zu: message '%s' lacks '%s'", c, r.msg, cases[c].msg);
    /* A right candidate right after: nothing leaked. */
    src = cand("y[i] = x[i] + x[i];", 128);
    assert_int_equal(measure(src, &r), MS_OK);
    assert_true(r.t.median > 0 && r.t.n >= o.min_reps);
    free(src);
  }
}

static void reference_verifies(void **state) {
  (void)state;
  need_device();
  ms_result r;
  assert_int_equal(measure(NULL, &r), MS_OK);   /* src NULL: the device reference */
  assert_true(r.max_err == 0);
}

static void too_much_shared_memory(void **state) {
  (void)state;
  need_device();
  gd_props p;
  rt_err err = {0};
  assert_int_equal(gd_props_get(0, &p, &err), 0);
  char src[1024];
  snprintf(src, sizeof src,
           "//@rk launch scale 1 1 1 32 1 1 %d b0 b1\n"
           "extern \"C\" __global__ void scale(float *x, float *y) { y[0] = x[0]; }\n",
           p.smem_block_optin + 4096);
  ms_result r;
  /* a device limit, checked before the launch: invalid (T4 "constraints") */
  assert_int_equal(measure(src, &r), MS_INVALID);
  assert_non_null(strstr(r.msg, "shared memory"));
}

/* The same candidates in one batch (gd_measure_batch: one context for
** many, the device reference run once per context): each gets the status
** it gets alone, the right ones after a fault or a hang included (a CUDA
** error ends the context and a new one serves the rest). */
static void batch_like_one_by_one(void **state) {
  (void)state;
  need_device();
  static const struct { const char *body; ms_status want; const char *msg; } cases[] = {
    {"y[i] = 2.0f * x[i];", MS_OK, NULL},
    {"y[i] = 2.0f * x[i] + (i == 777 ? 1e-3f : 0.0f);", MS_WRONG_RESULT, "output y wrong"},
    {"y[i] = x[i] + x[i];", MS_OK, NULL},
    {"if (i != 12345) y[i] = 2.0f * x[i];", MS_WRONG_RESULT, "output y wrong"},
    {"y[i] = x[i] * 2.0f;", MS_OK, NULL},
    {"y[i] = 2.0f * x[i]; if (i == 5) x[i] = 0;", MS_WRONG_RESULT, "wrote to its input x"},
    {"y[i] = 2.0f * x[i] + 0.0f;", MS_OK, NULL},
    {"y[i] = 2.0f * x[i]; if (i == 5) ((float *)16)[0] = 1;", MS_RUNTIME_ERROR,
     "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {"y[i] = x[i] + x[i] + 0.0f;", MS_OK, NULL},
    {"volatile float *v = x; while (v[0] < 2.0f) {} y[i] = x[i];", MS_TIMEOUT, "timeout"},
    {"y[i] = 0.0f + 2.0f * x[i];", MS_OK, NULL},
    {"y[i] = 2.0f * x[i] +;", MS_COMPILE_ERROR, "compile error"},
    {"y[i] = 2.0f * (x[i] + 0.0f);", MS_OK, NULL},
  };
  enum { NC = sizeof cases / sizeof *cases };
  char *src[NC];
  ms_result r[NC];
  for (int c = 0; c < NC; c++) src[c] = cand(cases[c].body, c % 2 ? 256 : 128);
  double saved = o.timeout;
  o.timeout = 5;
  rt_err err = {0};
  int done = gd_measure_batch(0, w, (const char *const *)src, NC, &o, r, NULL, &err);
  o.timeout = saved;
  if (done != NC) fail_msg("gd_measure_batch: %d of %d (%s)", done, NC, err.msg);
  for (int c = 0; c < NC; c++) {
    if (r[c].status != cases[c].want)
      fail_msg("case %d: status %s, expected %s (%s)", c, ms_status_name(r[c].status),
               ms_status_name(cases[c].want), r[c].msg);
    if (cases[c].msg && !strstr(r[c].msg, cases[c].msg))
      fail_msg("case %d: message '%s' lacks '%s'", c, r[c].msg, cases[c].msg);
    if (cases[c].want == MS_OK) assert_true(r[c].t.median > 0 && r[c].t.n >= o.min_reps);
    else assert_int_equal(r[c].t.n, 0);
    free(src[c]);
  }
}

/* Without a device (this test's other half): the batch is a harness
** failure naming why, -1, nothing measured, nothing left behind. */
static void batch_without_device(void **state) {
  (void)state;
  if (w) skip();   /* a device: batch_like_one_by_one */
  kn_problem pb = {0};
  rt_err err = {0};
  ms_workload *w0 = ms_workload_new(&scale, &pb, &err);
  assert_non_null(w0);
  ms_opts o0;
  ms_opts_default(&o0);
  char *src[2] = {cand("y[i] = 2.0f * x[i];", 128), cand("y[i] = x[i] + x[i];", 256)};
  ms_result r[2];
  assert_int_equal(gd_measure_batch(0, w0, (const char *const *)src, 2, &o0, r, NULL, &err), -1);
  if (!strstr(err.msg, "no CUDA device")) fail_msg("%s", err.msg);
  tg_target t;
  assert_int_equal(tg_resolve("cuda:0", &t, &err), 0);
  assert_true(tg_batches(&t, &o0));   /* the row measures batches ... */
  o0.counters = 1;
  assert_false(tg_batches(&t, &o0));  /* ... but not counter passes */
  free(src[0]), free(src[1]);
  ms_workload_free(w0);
}

/* ---- verification on the GPU (gd_check.c) against ms__verify ---- */

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 11;
}

static double tol_fn(const kn_problem *pb) {
  (void)pb;
  return 1e-3;
}

/* Element j of p (type e) set to v's bits: floats from a double, others
** from an integer. */
static void put(void *p, kn_elem e, int64_t j, double v, uint64_t bits) {
  size_t es = kn_elem_size(e);
  if (e == KN_F32) ((float *)p)[j] = (float)v;
  else if (e == KN_F64) ((double *)p)[j] = v;
  else memcpy((char *)p + (size_t)j * es, &bits, es);   /* little-endian: the low bytes */
}

/* One case: out against ref on the host (ms__verify) and on the device
** (gd_check_output + gd_check_verdict); 0 when they agree on the verdict
** and on max_err (bit for bit), else 1 with what differs on stderr. */
static int agree(gd_check *ck, CUstream s, kn_elem e, int64_t n, const void *out, const void *ref,
                 int tolmode, const char *what) {
  kn_kernel k = {.name = "chk", .atol = 1e-6, .rtol = 1e-4, .tolerance = tolmode ? tol_fn : NULL};
  ms_workload wl;
  memset(&wl, 0, sizeof wl);
  wl.k = &k, wl.nbuf = 1, wl.tol = tolmode ? 1e-3 : 0;
  wl.b[0] = (kn_buf){.name = "o", .n = n, .out = 1, .elem = e};
  void *bufs[1] = {(void *)out}, *refs[1] = {(void *)ref};
  double hmax = 0;
  char msg[256];
  int hbad = ms__verify(&wl, bufs, refs, &hmax, msg, sizeof msg) != 0;
  size_t bytes = (size_t)n * kn_elem_size(e);
  CUdeviceptr d_o, d_r;
  gd_check_res res;
  double rel;
  if (gd_cu.cuMemAlloc(&d_o, bytes) || gd_cu.cuMemAlloc(&d_r, bytes) ||
      gd_cu.cuMemcpyHtoD(d_o, out, bytes) || gd_cu.cuMemcpyHtoD(d_r, ref, bytes) ||
      gd_cu.cuCtxSynchronize() ||   /* s does not wait for the legacy stream's copies */
      gd_check_output(ck, s, e, d_o, d_r, n, k.atol, k.rtol, tolmode, &res)) {
    fprintf(stderr, "%s %s: CUDA failed\n", kn_elem_name(e), what);
    return 1;
  }
  gd_cu.cuMemFree(d_o), gd_cu.cuMemFree(d_r);
  int dbad = gd_check_verdict(&res, tolmode, wl.tol, &rel);
  if (dbad != hbad || (!hbad && memcmp(&rel, &hmax, sizeof rel))) {
    fprintf(stderr, "%s %s (tolmode %d): host %s max_err %.17g, device %s rel %.17g (nbad %llu)\n",
            kn_elem_name(e), what, tolmode, hbad ? "fails" : "passes", hmax,
            dbad ? "fails" : "passes", rel, (unsigned long long)res.nbad);
    return 1;
  }
  return 0;
}

/* The child of device_checks_agree_with_host: every element type, exact,
** within and beyond atol/rtol, NaN, infinities, signed zeros, f16's
** special encodings, integers near 2^63, both rules; then rt_same on
** lengths with and without a tail. Exit status: the cases that differ
** (capped), or 100 when the device cannot be used. */
static void check_child(void) {
  rt_err err = {0};
  CUcontext cx;
  CUstream s;
  gd_check ck;
  gd_props p;
  if (gd_props_get(0, &p, &err) || gd_driver_init(&err) || gd_context(0, &cx, &err) ||
      gd_cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) || gd_check_open(&ck, p.sms, &err)) {
    fprintf(stderr, "device: %s\n", err.msg);
    _exit(100);
  }
  int bad = 0;
  uint64_t seed = 7;
  for (int e = KN_F32; e <= KN_U64; e++) {
    int64_t n = 100003 + e;
    size_t es = kn_elem_size((kn_elem)e), bytes = (size_t)n * es;
    char *ref = malloc(bytes), *out = malloc(bytes);
    for (int64_t j = 0; j < n; j++) {
      uint64_t r = lcg(&seed);
      if (e == KN_F16) r &= 0x7bff;   /* finite halves of either sign but the top exponent */
      put(ref, (kn_elem)e, j, ((double)(r % 2000001) - 1000000.0) / 997.0, r);
    }
    if (e == KN_I64 || e == KN_U64) {   /* doubles that round: near 2^63 and 2^64 */
      uint64_t big = e == KN_I64 ? 0x7ffffffffffffc00ULL : 0xfffffffffffff800ULL;
      for (int64_t j = 0; j < 64; j++) put(ref, (kn_elem)e, j * 37, 0, big + (uint64_t)j);
    }
    for (int tolmode = 0; tolmode < 2; tolmode++) {
      int64_t at = n / 3;
      memcpy(out, ref, bytes);
      bad += agree(&ck, s, (kn_elem)e, n, out, ref, tolmode, "equal");
      /* one element off by one unit in its last place (or by 1) */
      memcpy(out, ref, bytes);
      if (e == KN_F32) ((float *)out)[at] = nextafterf(((float *)out)[at], INFINITY);
      else if (e == KN_F64) ((double *)out)[at] = nextafter(((double *)out)[at], INFINITY);
      else out[(size_t)at * es] ^= 1;
      bad += agree(&ck, s, (kn_elem)e, n, out, ref, tolmode, "one ulp");
      if (!kn_elem_float((kn_elem)e)) continue;
      double rv = e == KN_F32 ? ((float *)ref)[at] : e == KN_F64 ? ((double *)ref)[at] : 1;
      /* around the atol + rtol bound (f16: bit patterns instead) */
      for (int k = -2; k <= 2 && e != KN_F16; k++) {
        memcpy(out, ref, bytes);
        double lim = 1e-6 + 1e-4 * fabs(rv), v = rv + lim;
        for (int t = 0; t < abs(k); t++) v = nextafter(v, k < 0 ? -INFINITY : INFINITY);
        put(out, (kn_elem)e, at, v, 0);
        bad += agree(&ck, s, (kn_elem)e, n, out, ref, tolmode, "at the bound");
      }
      /* NaN in out; the same infinity in both; an infinity against a
      ** finite value; -0 against +0 */
      static const uint64_t nan_[3] = {0x7fc00000u, 0x7ff8000000000000ULL, 0x7e00},
                            inf_[3] = {0x7f800000u, 0x7ff0000000000000ULL, 0x7c00},
                            nz_[3] = {0x80000000u, 0x8000000000000000ULL, 0x8000};
      char *rf = malloc(bytes);
      memcpy(rf, ref, bytes);
      memcpy(out, ref, bytes);
      memcpy(out + (size_t)at * es, &nan_[e], es);
      bad += agree(&ck, s, (kn_elem)e, n, out, rf, tolmode, "NaN");
      memcpy(out, ref, bytes);
      memcpy(out + (size_t)at * es, &inf_[e], es);
      memcpy(rf + (size_t)at * es, &inf_[e], es);
      bad += agree(&ck, s, (kn_elem)e, n, out, rf, tolmode, "same infinity");
      memcpy(rf, ref, bytes);
      bad += agree(&ck, s, (kn_elem)e, n, out, rf, tolmode, "infinity against finite");
      memset(rf + (size_t)at * es, 0, es);
      memcpy(out, rf, bytes);
      memcpy(out + (size_t)at * es, &nz_[e], es);
      bad += agree(&ck, s, (kn_elem)e, n, out, rf, tolmode, "-0 against +0");
      free(rf);
    }
    if (e == KN_F16) {   /* every half against every half's neighbour */
      uint16_t *o16 = (uint16_t *)out, *r16 = (uint16_t *)ref;
      for (int64_t j = 0; j < 65536; j++) r16[j] = (uint16_t)j, o16[j] = (uint16_t)(j ^ 1);
      bad += agree(&ck, s, KN_F16, 65536, out, ref, 0, "all halves");
      bad += agree(&ck, s, KN_F16, 65536, out, ref, 1, "all halves");
    }
    free(ref), free(out);
  }
  /* rt_same: equal, then one byte changed at the start, the middle, the tail */
  static const size_t lens[] = {1, 7, 8, 9, 4096, 1000003};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    size_t len = lens[li];
    unsigned char *a = malloc(len);
    for (size_t j = 0; j < len; j++) a[j] = (unsigned char)lcg(&seed);
    CUdeviceptr da, db;
    gd_cu.cuMemAlloc(&da, len), gd_cu.cuMemAlloc(&db, len);
    gd_cu.cuMemcpyHtoD(da, a, len);
    gd_cu.cuCtxSynchronize();
    size_t where[] = {(size_t)-1, 0, len / 2, len - 1};
    for (int wi = 0; wi < 4; wi++) {
      if (wi) a[where[wi]] ^= 0x10;
      gd_cu.cuMemcpyHtoD(db, a, len);
      gd_cu.cuCtxSynchronize();
      if (wi) a[where[wi]] ^= 0x10;
      int same = -1;
      if (gd_check_same(&ck, s, da, db, len, &same) || same != (wi == 0)) {
        fprintf(stderr, "rt_same: %zu bytes, change at %d: same = %d\n", len, wi, same);
        bad++;
      }
    }
    gd_cu.cuMemFree(da), gd_cu.cuMemFree(db);
    free(a);
  }
  _exit(bad > 99 ? 99 : bad);
}

static void device_checks_agree_with_host(void **state) {
  (void)state;
  need_device();
  gd_props p;
  rt_err err = {0};
  assert_int_equal(gd_props_get(0, &p, &err), 0);
  if (gd_check_build(p.cc_major, p.cc_minor, &err)) fail_msg("check kernels: %s", err.msg);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) check_child();
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
}

/* Without a GPU too: the check kernels compile with NVRTC (--fmad=false). */
static void check_kernels_compile(void **state) {
  (void)state;
  const char *why;
  if (!gd_nvrtc_available(&why)) {
    printf("skipped: %s\n", why);
    skip();
  }
  void *img = NULL;
  size_t n = 0;
  rt_str log = {0};
  rt_err err = {0};
  int rc = gd_nvrtc_compile(gd_check_source(), 9, 0, "--fmad=false", &img, &n, &log, &err);
  if (rc) fail_msg("rc %d: %s %s", rc, err.msg, log.s ? log.s : "");
  assert_true(n > 0);
  free(img), free(log.s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(reference_verifies),
    cmocka_unit_test(right_then_wrong_then_right),
    cmocka_unit_test(too_much_shared_memory),
    cmocka_unit_test(batch_like_one_by_one),
    cmocka_unit_test(batch_without_device),
    cmocka_unit_test(device_checks_agree_with_host),
    cmocka_unit_test(check_kernels_compile),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
