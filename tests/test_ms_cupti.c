/*
** test_ms_cupti.c -- GPU counters through CUPTI (targets/cuda/gd_cupti.c) on a
** machine without a GPU. The host side is real: the replay passes CUPTI
** computes for GH100 are checked against the counts in PLATFORM.md (three
** flop metrics in one pass, DRAM + L2 + L1 bytes in one, those six plus
** sm__cycles_elapsed.avg.per_second in two), an unknown metric or chip is
** an error naming it, and malformed lists are refused. The probe answers
** (not available, with a reason, where no NVIDIA device node exists), and
** counting outside a worker child with a context fails cleanly without
** calling the run. The combining rule is checked on values summed and
** weighted by hand. Tests that need libcupti skip when it is absent
** (looked up here independently of gd_dlopen) and in ASan builds.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/ms.h"
#include "targets/cuda/gd.h"

/* libcupti.so.13 on the loader's path or under $CUDA_HOME. */
static int have_cupti(void) {
  static int known, have;
  if (known) return have;
  known = 1;
#if defined(__SANITIZE_ADDRESS__)
  /* gd_cupti.c refuses CUPTI under ASan (RTLD_DEEPBIND, see there). */
  printf("skipped: CUPTI under AddressSanitizer\n");
  return 0;
#endif
  const char *home = getenv("CUDA_HOME");
  if (!home || !*home) home = "/usr/local/cuda";
  char a[512], b[512];
  snprintf(a, sizeof a, "%s/lib64/libcupti.so.13", home);
  snprintf(b, sizeof b, "%s/extras/CUPTI/lib64/libcupti.so.13", home);
  const char *paths[] = {"libcupti.so.13", a, b};
  for (int i = 0; i < 3 && !have; i++) {
    void *h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
    if (h) have = 1, dlclose(h);
  }
  if (!have) printf("skipped: libcupti.so.13 not found\n");
  return have;
}

#define NEED_CUPTI() \
  do {               \
    if (!have_cupti()) skip(); \
  } while (0)

static const char *const flops[] = {
  "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
  "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
  "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
};
static const char *const bytes[] = {
  "dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
};
static const char *const six_plus[] = {
  "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
  "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
  "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
  "dram__bytes_read.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
  "sm__cycles_elapsed.avg.per_second",
};

static int ndefault(void) {
  int n = 0;
  while (gd_cupti_default_metrics[n]) n++;
  return n;
}

static void passes_as_platform_says(void **state) {
  (void)state;
  NEED_CUPTI();
  rt_err e = {0};
  assert_int_equal(gd_cupti_passes("GH100", flops, 3, &e), 1);
  assert_int_equal(gd_cupti_passes("GH100", bytes, 4, &e), 1);
  assert_int_equal(gd_cupti_passes("GH100", six_plus, 7, &e), 2);
  /* The default list: the eight metrics. It holds flops and bytes
  ** (so at least two passes: they do not share one with the ratio's
  ** weight and the occupancy counter, as six_plus shows) and fits in
  ** three. */
  int n = ndefault();
  assert_int_equal(n, 8);
  int p = gd_cupti_passes("GH100", gd_cupti_default_metrics, n, &e);
  printf("default metrics on GH100: %d passes\n", p);
  assert_in_range(p, 2, 3);
  /* Repeatable: the host object is torn down and made again. */
  assert_int_equal(gd_cupti_passes("GH100", gd_cupti_default_metrics, n, &e), p);
}

static void unknown_names_are_named(void **state) {
  (void)state;
  NEED_CUPTI();
  rt_err e = {0};
  const char *bad[] = {"dram__bytes_read.sum", "dram__bogus_thing.sum", "lts__t_bytes.sum"};
  assert_int_equal(gd_cupti_passes("GH100", bad, 3, &e), -1);
  assert_non_null(strstr(e.msg, "dram__bogus_thing.sum"));
  assert_non_null(strstr(e.msg, "unknown metric"));

  memset(&e, 0, sizeof e);
  assert_int_equal(gd_cupti_passes("GX999", flops, 3, &e), -1);
  assert_non_null(strstr(e.msg, "GX999"));

  /* Malformed lists: refused before CUPTI is asked. */
  const char *dup[] = {"lts__t_bytes.sum", "lts__t_bytes.sum"};
  assert_int_equal(gd_cupti_passes("GH100", dup, 2, &e), -1);
  assert_non_null(strstr(e.msg, "twice"));
  const char *empty[] = {"lts__t_bytes.sum", ""};
  assert_int_equal(gd_cupti_passes("GH100", empty, 2, &e), -1);
  assert_int_equal(gd_cupti_passes("GH100", flops, 0, &e), -1);
}

static void probe_answers(void **state) {
  (void)state;
  const char *why = NULL;
  int a = gd_cupti_available(&why);
  assert_non_null(why);
  printf("cupti available: %d (%s)\n", a, why);
  if (!a) assert_true(strlen(why) > 0);
  /* No NVIDIA device node: no GPU, so not available. */
  if (access("/dev/nvidiactl", F_OK) != 0) assert_int_equal(a, 0);
  /* Probed once: the same answer again. */
  const char *why2 = NULL;
  assert_int_equal(gd_cupti_available(&why2), a);
  assert_string_equal(why, why2);
}

static void run_marks(void *ctx) { *(int *)ctx = 1; }

static void count_needs_a_context(void **state) {
  (void)state;
  /* This process never initialised the driver (gd.h invariant 1): counting
  ** here fails with a message and never calls the run. */
  int ran = 0;
  double v[8];
  rt_err e = {0};
  assert_int_equal(gd_cupti_count(gd_cupti_default_metrics, ndefault(), run_marks, &ran, v,
                                  &e), -1);
  assert_int_equal(ran, 0);
  printf("count without a context: %s\n", e.msg);
  assert_non_null(strstr(e.msg, "counters unavailable"));
}

static void ratios_are_recognised(void **state) {
  (void)state;
  assert_true(gd_cupti_is_ratio("sm__warps_active.avg.pct_of_peak_sustained_active"));
  assert_true(gd_cupti_is_ratio("sm__cycles_elapsed.avg.per_second"));
  assert_true(gd_cupti_is_ratio("lts__t_sector_hit_rate.pct"));
  assert_true(gd_cupti_is_ratio("smsp__inst_executed.avg.per_cycle_active"));
  assert_true(gd_cupti_is_ratio("sm__average_thread_inst_executed_pred_on_per_inst_executed.ratio"));
  assert_false(gd_cupti_is_ratio("dram__bytes_read.sum"));
  assert_false(gd_cupti_is_ratio("sm__sass_thread_inst_executed_op_ffma_pred_on.sum"));
  assert_false(gd_cupti_is_ratio("gpu__time_duration.sum"));
}

static void combining_rule(void **state) {
  (void)state;
  const char *names[] = {"dram__bytes_read.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
                         "gpu__time_duration.sum"};
  /* Three ranges (kernel launches), range-major. */
  const double v[] = {
    100, 50, 1000,
    300, 80, 3000,
    600, 20, 0,
  };
  const double w[] = {1000, 3000, 0};
  double out[3];
  gd_cupti_reduce(names, 3, v, w, 3, out);
  assert_float_equal(out[0], 1000, 1e-9);                       /* 100 + 300 + 600 */
  assert_float_equal(out[1], (50 * 1000 + 80 * 3000) / 4000.0, 1e-9);   /* 72.5 */
  assert_float_equal(out[2], 4000, 1e-9);
  /* No weights, or weights summing to 0: the plain mean. */
  gd_cupti_reduce(names, 3, v, NULL, 3, out);
  assert_float_equal(out[1], 50.0, 1e-9);                       /* (50+80+20)/3 */
  const double zero[] = {0, 0, 0};
  gd_cupti_reduce(names, 3, v, zero, 3, out);
  assert_float_equal(out[1], 50.0, 1e-9);
  assert_float_equal(out[0], 1000, 1e-9);
  /* One range: its own values. */
  gd_cupti_reduce(names, 3, v + 3, w + 1, 1, out);
  assert_float_equal(out[0], 300, 1e-9);
  assert_float_equal(out[1], 80, 1e-9);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(passes_as_platform_says),
    cmocka_unit_test(unknown_names_are_named),
    cmocka_unit_test(probe_answers),
    cmocka_unit_test(count_needs_a_context),
    cmocka_unit_test(ratios_are_recognised),
    cmocka_unit_test(combining_rule),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
