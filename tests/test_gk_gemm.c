/*
** test_gk_gemm.c -- the CUDA gemm template (targets/cuda/gk_gemm.c) without
** a GPU: for workloads from 4096^3 down to 1x1x1 and odd sizes, the space
** loads, is non-empty and its default is valid; the default and a seeded
** sample of about 30 valid configurations each generate source whose plan
** parses to the launch the schedule implies (grid = tiles of C x SPLITK,
** block = warps x 32, shared memory = STAGES * BK * (BM + 4 + BN) floats,
** a zero of C before split-K) and which NVRTC compiles for sm_90 with no
** error; the default at 4096^3 compiles without register spills (ptxas's
** report). Also the device reference and the cuBLAS baseline's plans, the
** buffers, flop/byte counts and tolerance on hand-counted cases, and the
** reference on a 2x2 product by hand. Without NVRTC the compile checks are
** skipped (cmocka skip) and the rest still runs.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <float.h>
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_spaces/sp.h"
#include "targets/cuda/gd.h"
#include "targets/cuda/gk.h"

#define SAMPLES 30

static const char *const workloads[] = {
  "M=4096,N=4096,K=4096", "M=1000,N=777,K=333", "M=1,N=1,K=1", "M=17,N=5,K=3", NULL,
};

static sp_space *load_space(const char *set) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = sp_parse_bindings(set, a, &b, &err);
  sp_space *sp = nb < 0 ? NULL : sp_load_file(gk_gemm.space, b, nb, &err);
  free(b);
  sx_arena_free(a);
  if (!sp) fail_msg("gemm %s: %s", set, err.msg);
  return sp;
}

static int nvrtc_here(void) {
  const char *why = NULL;
  if (gd_nvrtc_available(&why)) return 1;
  printf("skipped: NVRTC unavailable (%s)\n", why ? why : "?");
  return 0;
}

/* Compile src for sm_90 with extra options; fail the test on an error. */
static void compile_ok(const char *src, const char *extra, rt_str *log) {
  void *img = NULL;
  size_t size = 0;
  rt_err err = {0};
  rt_str mylog = {0};
  int rc = gd_nvrtc_compile(src, 9, 0, extra, &img, &size, log ? log : &mylog, &err);
  if (rc != 0)
    fail_msg("NVRTC: %s\n%s\n--- source ---\n%s", rc < 0 ? err.msg : "compile error",
             log ? log->s : mylog.s, src);
  assert_true(size > 0);
  free(img);
  free(mylog.s);
}

/* The plan of src must be the launch that configuration cfg implies. */
static void check_plan(const char *src, const kn_problem *pb, const sp_space *sp,
                       const int *cfg) {
  gk_plan p;
  rt_err err = {0};
  if (gk_plan_parse(src, 3, &p, &err)) fail_msg("plan: %s\n%s", err.msg, src);
  int64_t M = kn_int(pb, "M"), N = kn_int(pb, "N");
#define P(name) kn_param_int(sp, cfg, name)
  int64_t bm = P("BM"), bn = P("BN"), bk = P("BK"), splitk = P("SPLITK");
  int64_t threads = (bm / P("WM")) * (bn / P("WN")) * 32;
  int64_t smem = P("STAGES") * bk * (bm + 4 + bn) * 4;
#undef P
  int s = 0;
  assert_int_equal(p.workspace, 0);
  if (splitk > 1) {
    assert_int_equal(p.nsteps, 2);
    assert_int_equal(p.step[0].kind, GK_ZERO);
    assert_int_equal(p.step[0].arg[0], 2);
    s = 1;
  } else {
    assert_int_equal(p.nsteps, 1);
  }
  const gk_step *st = &p.step[s];
  assert_int_equal(st->kind, GK_LAUNCH);
  assert_string_equal(st->name, "gemm");
  assert_int_equal(st->grid[0], ((M + bm - 1) / bm) * ((N + bn - 1) / bn));
  assert_int_equal(st->grid[1], 1);
  assert_int_equal(st->grid[2], splitk);
  assert_int_equal(st->block[0], threads);
  assert_int_equal(st->block[1], 1);
  assert_int_equal(st->block[2], 1);
  assert_int_equal(st->smem, smem);
  assert_true(threads <= 1024 && smem <= 232448);
  assert_int_equal(st->nargs, 3);
  for (int a = 0; a < 3; a++) assert_int_equal(st->arg[a], a);
}

/* Every workload: the space is non-empty with a valid default; the default
** and SAMPLES distinct sampled configurations (seed 1) generate source with
** the expected plan that NVRTC compiles (when it is here). */
static void test_samples_compile(void **state) {
  (void)state;
  int nvrtc = nvrtc_here();
  for (int w = 0; workloads[w]; w++) {
    sp_space *sp = load_space(workloads[w]);
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    rt_count count = sp_count(sp);
    assert_true(count > 0);
    int np = sp_nparams(sp), n = count < SAMPLES ? (int)count : SAMPLES;
    int *cfgs = calloc((size_t)(n + 1) * np, sizeof(int));
    assert_true(sp_default_config(sp, cfgs));
    int failed = -1;
    if (!sp_valid(sp, cfgs, &failed))
      fail_msg("%s: default fails condition %s", workloads[w], sp_cond_text(sp, failed));
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 1);
    rt_err err = {0};
    if (sp_sample(sp, rng, n, 1, cfgs + np, &err) < 0) fail_msg("sample: %s", err.msg);
    gsl_rng_free(rng);
    for (int i = 0; i <= n; i++) {
      const int *cfg = cfgs + i * np;
      char *src = gk_gemm.codegen(&pb, sp, cfg);
      check_plan(src, &pb, sp, cfg);
      if (nvrtc) compile_ok(src, NULL, NULL);
      free(src);
    }
    free(cfgs);
    sp_free(sp);
  }
  if (!nvrtc) skip();
}

/* The default at 4096^3 keeps its accumulators in registers: ptxas reports
** no spill stores or loads and at most 255 registers. */
static void test_default_no_spills(void **state) {
  (void)state;
  if (!nvrtc_here()) skip();
  sp_space *sp = load_space(workloads[0]);
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  int *cfg = calloc((size_t)sp_nparams(sp), sizeof(int));
  assert_true(sp_default_config(sp, cfg));
  char *src = gk_gemm.codegen(&pb, sp, cfg);
  rt_str log = {0};
  compile_ok(src, "--ptxas-options=-v", &log);
  const char *used = log.s ? strstr(log.s, "Used ") : NULL;
  if (!used) fail_msg("no ptxas report in the log:\n%s", log.s ? log.s : "");
  assert_non_null(strstr(log.s, " 0 bytes spill stores, 0 bytes spill loads"));
  int regs = atoi(used + 5);
  assert_true(regs > 64 && regs <= 255);   /* 64 accumulators at least */
  free(log.s);
  free(src);
  free(cfg);
  sp_free(sp);
}

/* The device reference: one launch of 256-thread blocks covering M*N
** elements, which compiles; the baseline is the cuBLAS plan line. */
static void test_reference_and_baseline(void **state) {
  (void)state;
  int nvrtc = nvrtc_here();
  for (int w = 0; workloads[w]; w++) {
    sp_space *sp = load_space(workloads[w]);
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    int64_t m = kn_int(&pb, "M"), n = kn_int(&pb, "N"), k = kn_int(&pb, "K");
    char *src = gk_gemm.device_reference(&pb);
    gk_plan p;
    rt_err err = {0};
    if (gk_plan_parse(src, 3, &p, &err)) fail_msg("plan: %s", err.msg);
    assert_int_equal(p.nsteps, 1);
    assert_int_equal(p.step[0].kind, GK_LAUNCH);
    assert_int_equal((int64_t)p.step[0].grid[0] * p.step[0].block[0] >= m * n, 1);
    assert_int_equal((int64_t)(p.step[0].grid[0] - 1) * p.step[0].block[0] < m * n, 1);
    assert_int_equal(p.step[0].nargs, 3);
    if (nvrtc) compile_ok(src, NULL, NULL);
    free(src);
    const char *ld = "unset";
    src = gk_gemm.baseline(&pb, &ld);
    assert_null(ld);
    char want[128];
    snprintf(want, sizeof want, "//@rk library cublas_sgemm %ld %ld %ld\n", (long)m, (long)n,
             (long)k);
    assert_string_equal(src, want);
    assert_int_equal(gk_plan_parse(src, 3, &p, &err), 0);
    assert_int_equal(p.step[0].kind, GK_LIBRARY);
    assert_int_equal(p.step[0].nargs, 3);
    assert_int_equal(p.step[0].arg[0], m);
    assert_int_equal(p.step[0].arg[2], k);
    free(src);
    sp_free(sp);
  }
  if (!nvrtc) skip();
}

/* Buffers, counts and tolerance on M=2, N=3, K=4; the kernel is in the
** CUDA table; the reference on [[1,2],[3,4]] * [[5,6],[7,8]]. */
static void test_formulas_and_reference(void **state) {
  (void)state;
  assert_ptr_equal(gk_find("gemm"), &gk_gemm);
  kn_problem pb = {.n = 3, .name = {"M", "N", "K"}};
  int64_t v[3] = {2, 3, 4};
  for (int i = 0; i < 3; i++) pb.val[i] = sx_int(v[i]);
  kn_buf b[KN_MAXBUF];
  assert_int_equal(gk_gemm.buffers(&pb, b), 3);
  assert_int_equal(b[0].n, 8);
  assert_int_equal(b[1].n, 12);
  assert_int_equal(b[2].n, 6);
  assert_true(!b[0].out && !b[1].out && b[2].out);
  assert_true(gk_gemm.flops(&pb) == 48.0);               /* 2 * 2*3*4 */
  assert_true(gk_gemm.min_bytes(&pb) == 4.0 * (8 + 12 + 6));
  assert_true(gk_gemm.tolerance(&pb) == 8.0 * FLT_EPSILON);
  pb.val[1].u.i = 2, pb.val[2].u.i = 2;
  float a[4] = {1, 2, 3, 4}, bb[4] = {5, 6, 7, 8}, c[4] = {0};
  float *bufs[3] = {a, bb, c};
  gk_gemm.reference(&pb, bufs);
  assert_true(c[0] == 19 && c[1] == 22 && c[2] == 43 && c[3] == 50);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_formulas_and_reference),
    cmocka_unit_test(test_reference_and_baseline),
    cmocka_unit_test(test_default_no_spills),
    cmocka_unit_test(test_samples_compile),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
