/*
** test_cm_bench_cuda.c -- the CUDA ceilings bench (targets/cuda/
** gd_bench.c). Without a GPU: its microbenchmarks compile with NVRTC
** for sm_90 (and sm_80) into a cubin holding every kernel the bench looks
** up by name; bad options are refused before anything runs; with no
** device, gd_bench fails with a message naming the device and
** returns (an alarm turns a hang into a failure). With a device (the GPU
** machine): a quick bench checked for structure against the device's own
** properties -- both classes, the peak the FMA class and below the FP32
** lanes' theoretical rate, the all-SM figures above the one-SM ones,
** shared memory faster than L2 faster than DRAM, no L3, the capacities
** and the gpu member those of the device, the L2 figure the sweep's point
** at a third of the L2.
** Skipped where NVRTC is missing.
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
#include <unistd.h>

#include "cost_model/cm.h"
#include "targets/cuda/gd.h"

/* The kernels gd_bench looks up in the module. */
static const char *const kernels[] = {"rt_fma", "rt_add", "rt_read", "rt_copy", "rt_smem"};

static void skip_without_nvrtc(void) {
  const char *why;
  if (!gd_nvrtc_available(&why)) {
    printf("skipped: %s\n", why);
    skip();
  }
}

static void sources_compile(void **state) {
  (void)state;
  skip_without_nvrtc();
  const char *src = gd_bench_source();
  assert_null(strstr(src, "#include"));   /* self-contained for NVRTC */
  static const int cc[][2] = {{9, 0}, {8, 0}};
  for (size_t a = 0; a < sizeof cc / sizeof *cc; a++) {
    void *img = NULL;
    size_t n = 0;
    rt_str log = {0};
    rt_err err = {0};
    int rc = gd_nvrtc_compile(src, cc[a][0], cc[a][1], NULL, &img, &n, &log, &err);
    if (rc) fail_msg("sm_%d%d: %s %s", cc[a][0], cc[a][1], err.msg, log.s ? log.s : "");
    assert_true(n > 64);
    assert_memory_equal(img, "\177ELF", 4);
    for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++)
      if (!memmem(img, n, kernels[k], strlen(kernels[k]) + 1))
        fail_msg("sm_%d%d: kernel %s missing from the cubin", cc[a][0], cc[a][1], kernels[k]);
    free(img);
    free(log.s);
  }
}

static void bad_options(void **state) {
  (void)state;
  cm_bench_opts o;
  cm_bench_opts_default(&o);
  o.repeats = 0;
  cm_ceilings c;
  rt_err err = {0};
  assert_int_equal(gd_bench(0, &o, &c, &err), -1);
  assert_non_null(strstr(err.msg, "repeats"));
  cm_bench_opts_default(&o);
  o.time_per_point = 0;
  err = (rt_err){0};
  assert_int_equal(gd_bench(0, &o, &c, &err), -1);
  assert_non_null(strstr(err.msg, "time per point"));
}

static void no_device_fails(void **state) {
  (void)state;
  skip_without_nvrtc();
  gd_props p;
  rt_err err = {0};
  if (gd_props_get(0, &p, &err) == 0) {
    printf("skipped: a CUDA device is present (%s)\n", p.name);
    skip();
  }
  cm_bench_opts o;
  cm_bench_opts_default(&o);
  o.quick = 1;
  cm_ceilings c;
  err = (rt_err){0};
  alarm(120);   /* a hang kills the test program: run-tests reports it */
  assert_int_equal(gd_bench(0, &o, &c, &err), -1);
  alarm(0);
  assert_non_null(strstr(err.msg, "cuda:0"));
  assert_true(strlen(err.msg) > strlen("cuda:0: "));
  assert_int_equal(c.nclass, 0);
}

static void quick_bench_on_a_device(void **state) {
  (void)state;
  skip_without_nvrtc();
  gd_props p;
  rt_err err = {0};
  if (gd_props_get(0, &p, &err)) {
    printf("skipped: no CUDA device (%s)\n", err.msg);
    skip();
  }
  cm_bench_opts o;
  cm_bench_opts_default(&o);
  o.quick = 1;
  o.time_per_point = 0.005;
  o.repeats = 3;
  cm_ceilings c;
  alarm(300);
  if (gd_bench(0, &o, &c, &err)) fail_msg("%s", err.msg);
  alarm(0);
  assert_int_equal(c.threads, p.sms);
  assert_int_equal(c.nclass, 2);
  assert_string_equal(c.cls[0].name, "fp32-fma");
  assert_string_equal(c.cls[1].name, "fp32-add");
  /* at most 128 FP32 lanes per SM, 2 flops per FMA, at the boost clock */
  double lanes = 2.0 * 128 * p.sms * p.clock_khz * 1e3 * 1.15;
  for (int m = 0; m < 2; m++) {
    assert_true(c.peak[m] == c.cls[0].flops[m]);
    assert_true(c.peak[m] > 0 && c.peak[m] < lanes);
    assert_true(c.cls[0].flops[m] > c.cls[1].flops[m]);   /* 2 flops per FMA */
  }
  assert_true(c.peak[1] > 4 * c.peak[0]);
  for (int l = 0; l < CM_NLEVEL; l++)
    if (l != 2) assert_true(c.bw[l][1] > c.bw[l][0]);
  assert_true(c.bw[0][1] > c.bw[1][1]);   /* shared memory > L2 > DRAM */
  assert_true(c.bw[1][1] > c.bw[3][1]);
  assert_true(c.bw[2][0] == 0 && c.bw[2][1] == 0);
  assert_int_equal(c.gpu.sms, p.sms);
  assert_int_equal(c.gpu.cc_major, p.cc_major);
  assert_int_equal(c.gpu.l2_bytes, p.l2_bytes);
  assert_int_equal(c.gpu.smem_block_optin, p.smem_block_optin);
  assert_true(c.cache[0] == p.smem_sm);
  assert_true(c.cache[1] == p.l2_bytes);
  assert_true(c.cache[2] == 0 && c.cache[3] == 0);
  /* sweep: increasing from 1 MiB; the L2 figure is its point at l2 / 3 */
  assert_true(c.nsweep >= 4);
  assert_true(c.sweep[0].bytes == 1048576);
  for (int k = 1; k < c.nsweep; k++) assert_true(c.sweep[k].bytes > c.sweep[k - 1].bytes);
  double l2 = floor(p.l2_bytes / 3.0 / 1048576) * 1048576;
  int found = 0;
  for (int k = 0; k < c.nsweep; k++)
    if (c.sweep[k].bytes == l2) {
      found = 1;
      assert_true(c.bw[1][0] == c.sweep[k].bw[0] && c.bw[1][1] == c.sweep[k].bw[1]);
    }
  assert_true(found);
  printf("cuda:0 (%s): FMA %.1f TFLOP/s (one SM %.1f GFLOP/s), smem %.0f GB/s, L2 %.0f GB/s, "
         "DRAM %.0f GB/s\n", p.name, c.peak[1] * 1e-12, c.peak[0] * 1e-9, c.bw[0][1] * 1e-9,
         c.bw[1][1] * 1e-9, c.bw[3][1] * 1e-9);
  /* round trip through the stored form */
  char *j = cm_ceilings_json(&c);
  cm_ceilings back;
  assert_int_equal(cm_ceilings_parse(j, &back, &err), 0);
  assert_true(back.peak[1] == c.peak[1] && back.nsweep == c.nsweep);
  assert_int_equal(back.gpu.regs_sm, p.regs_sm);
  free(j);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(sources_compile),
    cmocka_unit_test(bad_options),
    cmocka_unit_test(no_device_fails),
    cmocka_unit_test(quick_bench_on_a_device),
  };
  return cmocka_run_group_tests_name("cm_bench_cuda", tests, NULL, NULL);
}
