/*
** test_gd.c -- the CUDA libraries layer (targets/cuda/gd.c) and the plan
** parser (targets/cuda/gk_plan.c). NVRTC needs no GPU: a kernel compiles
** to a cubin that carries the ELF magic and the kernel's name, a syntax
** error is a compile error with NVRTC's log naming the line, a missing
** architecture is NVRTC's own failure. Without a device, asking for the
** device's properties fails with a message and returns (a child probes, so
** nothing hangs and this process never initialises the driver). Plans:
** every line kind parsed to the values written, and each malformed line
** rejected with its line number.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "targets/cuda/gd.h"
#include "targets/cuda/gk.h"

static const char *axpy =
  "extern \"C\" __global__ void axpy(float *x, float *y) {\n"
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < 1000) y[i] += 2.0f * x[i];\n"
  "}\n";

static void nvrtc_compiles(void **state) {
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
  assert_int_equal(gd_nvrtc_compile(axpy, 9, 0, NULL, &img, &n, &log, &err), 0);
  assert_true(n > 64);
  assert_memory_equal(img, "\177ELF", 4);
  assert_non_null(memmem(img, n, "axpy", 4));
  free(img);
  free(log.s);

  /* A syntax error: 1, and the log names line 2 of rooftune.cu. */
  rt_str log2 = {0};
  img = NULL;
  assert_int_equal(gd_nvrtc_compile("extern \"C\" __global__ void k() {\n  int x = ;\n}\n",
                                    9, 0, NULL, &img, &n, &log2, &err), 1);
  assert_null(img);
  assert_non_null(log2.s);
  assert_non_null(strstr(log2.s, "rooftune.cu(2)"));
  free(log2.s);

  /* An architecture that does not exist: NVRTC refuses (not a crash). */
  rt_str log3 = {0};
  int rc = gd_nvrtc_compile(axpy, 1, 7, NULL, &img, &n, &log3, &err);
  assert_true(rc != 0);
  free(log3.s);

  char v[64];
  assert_non_null(strstr(gd_nvrtc_version(v, sizeof v), "nvrtc "));
}

static void no_device_is_an_error(void **state) {
  (void)state;
  gd_props p;
  rt_err err = {0};
  if (gd_props_get(0, &p, &err) == 0) {
    printf("skipped: a CUDA device is present (%s)\n", p.name);
    skip();
  }
  assert_true(err.msg[0] != 0);
  tg_desc d;
  assert_int_equal(gd_describe(0, &d, &err), -1);
}

static void target_names(void **state) {
  (void)state;
  assert_int_equal(gd_target_device("cuda"), 0);
  assert_int_equal(gd_target_device("cuda:0"), 0);
  assert_int_equal(gd_target_device("cuda:3"), 3);
  assert_int_equal(gd_target_device("host"), -1);
  assert_int_equal(gd_target_device("cuda:"), -1);
  assert_int_equal(gd_target_device("cuda:x"), -1);
  assert_int_equal(gd_target_device("cuda:-1"), -1);
}

static void plan_parses(void **state) {
  (void)state;
  const char *src =
    "// a comment\n"
    "//@rk workspace 4096\n"
    "//@rk zero b2\n"
    "extern \"C\" __global__ void k1(float *a) {}\n"
    "//@rk launch k1 128 2 1 256 1 1 49152 b0 b1 b2 ws\n"
    "  //@rk launch ignored 1 1 1 1 1 1 0 b0\n"
    "//@rk launch k2 1 1 1 32 1 1 0 ws b2\n";
  gk_plan p;
  rt_err err = {0};
  assert_int_equal(gk_plan_parse(src, 3, &p, &err), 0);
  assert_int_equal(p.workspace, 4096);
  assert_int_equal(p.nsteps, 3);
  assert_int_equal(p.step[0].kind, GK_ZERO);
  assert_int_equal(p.step[0].arg[0], 2);
  assert_int_equal(p.step[1].kind, GK_LAUNCH);
  assert_string_equal(p.step[1].name, "k1");
  assert_int_equal(p.step[1].grid[0], 128);
  assert_int_equal(p.step[1].grid[1], 2);
  assert_int_equal(p.step[1].block[0], 256);
  assert_int_equal(p.step[1].smem, 49152);
  assert_int_equal(p.step[1].nargs, 4);
  assert_int_equal(p.step[1].arg[3], GK_WS);
  assert_string_equal(p.step[2].name, "k2");
  assert_int_equal(p.step[2].arg[0], GK_WS);

  assert_int_equal(gk_plan_parse("//@rk library cublas_sgemm 64 32 16\n", 3, &p, &err), 0);
  assert_int_equal(p.step[0].kind, GK_LIBRARY);
  assert_int_equal(p.step[0].nargs, 3);
  assert_int_equal(p.step[0].arg[1], 32);

  static const struct { const char *src; const char *msg; } bad[] = {
    {"//@rk launch k 1 1 1 32 1 1 0 b3\n", "line 1"},         /* buffer out of range */
    {"\n//@rk launch k 0 1 1 32 1 1 0 b0\n", "line 2"},        /* zero grid */
    {"//@rk launch k 1 1 1 32 1 1\n", "line 1"},               /* missing smem */
    {"//@rk zero b9\n//@rk launch k 1 1 1 1 1 1 0\n", "line 1"},
    {"//@rk frobnicate\n", "line 1"},
    {"//@rk workspace 8\n//@rk workspace 8\n", "line 2"},
    {"//@rk launch k 1 1 1 32 1 1 0 ws\n", "no workspace"},
    {"// nothing\n", "found 0 launch"},
    {"//@rk launch k 1 1 1 1 1 1 0\n//@rk library cublas_sgemm 1 1 1\n", "found 1 launch, 1"},
    {"//@rk launch k 1 1 1 32 1 1 -5 b0\n", "line 1"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rt_err e = {0};
    assert_int_equal(gk_plan_parse(bad[i].src, 3, &p, &e), -1);
    if (!strstr(e.msg, bad[i].msg)) fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, bad[i].msg);
  }

  /* at most GK_MAXSTEP steps (zero and launch lines; the workspace line
  ** is not a step): GK_MAXSTEP parse, one more is an error on its line */
  rt_str many = {0};
  rt_str_printf(&many, "//@rk workspace 64\n//@rk zero b2\n");
  for (int i = 1; i < GK_MAXSTEP; i++) rt_str_printf(&many, "//@rk launch k 1 1 1 32 1 1 0 b0 ws\n");
  assert_int_equal(gk_plan_parse(many.s, 3, &p, &err), 0);
  assert_int_equal(p.nsteps, GK_MAXSTEP);
  assert_int_equal(p.step[GK_MAXSTEP - 1].kind, GK_LAUNCH);
  rt_str_printf(&many, "//@rk launch k 1 1 1 32 1 1 0 b0 ws\n");
  assert_int_equal(gk_plan_parse(many.s, 3, &p, &err), -1);
  char want[64];
  snprintf(want, sizeof want, "plan line %d: more than %d steps", GK_MAXSTEP + 2, GK_MAXSTEP);
  if (!strstr(err.msg, want)) fail_msg("'%s' lacks '%s'", err.msg, want);
  free(many.s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(nvrtc_compiles),
    cmocka_unit_test(no_device_is_an_error),
    cmocka_unit_test(target_names),
    cmocka_unit_test(plan_parses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
