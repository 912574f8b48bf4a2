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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/ms.h"
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

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(reference_verifies),
    cmocka_unit_test(right_then_wrong_then_right),
    cmocka_unit_test(too_much_shared_memory),
    cmocka_unit_test(batch_like_one_by_one),
    cmocka_unit_test(batch_without_device),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
