/*
** test_gk_kernels.c -- the CUDA reduction, transpose and stencil templates
** without a GPU: for large, odd and tiny workloads (and other device
** limits) the space loads and is non-empty, its default is valid, and the
** default plus a seeded uniform sample of valid schedules generate source
** whose plan parses (gk_plan_parse), obeys the ABI and the device's limits
** (threads per block, shared memory, grid dimensions, arguments, the
** workspace; the stencil's launches chain from `grid` to `out`; the
** reduction's atomic combine zeroes `out` first), names kernels the source
** defines, and compiles with NVRTC for sm_90. The device references
** likewise. NVRTC absent: the compile checks are skipped ("skipped: ...").
** Running the code needs a GPU (or the CPU emulator): not done here.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_spaces/sp.h"
#include "targets/cuda/gd.h"
#include "targets/cuda/gk.h"
#include "targets/host/hk.h"
#include "tk_space.h"

#define SAMPLES_LARGE 30   /* schedules sampled for a workload marked large */
#define SAMPLES_SMALL 5    /* for the others (NVRTC takes ~0.1-0.5 s each) */

static int have_nvrtc;     /* set once in main */

/* Whether src defines `extern "C" __global__ ... name(` on one line. */
static int defines_kernel(const char *src, const char *name) {
  char pat[80];
  snprintf(pat, sizeof pat, " %s(", name);
  for (const char *l = src; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    char line[512];
    if (n >= sizeof line) continue;
    memcpy(line, l, n);
    line[n] = 0;
    static const char head[] = "extern \"C\" __global__ ";
    if (!strncmp(line, head, sizeof head - 1) && strstr(line, pat)) return 1;
  }
  return 0;
}

/* Check the plan of src (what of which kernel, for messages) against the
** ABI and the workload's device limits; kernel-specific chains below. */
static void check_plan(const kn_kernel *k, const kn_problem *pb, const char *src,
                       const char *what) {
  kn_buf b[KN_MAXBUF];
  int nbuf = k->buffers(pb, b);
  gk_plan p;
  rt_err err = {0};
  if (gk_plan_parse(src, nbuf, &p, &err)) fail_msg("%s: %s\n%s", what, err.msg, src);
  int nlaunch = 0;
  for (int i = 0; i < p.nsteps; i++) {
    const gk_step *st = &p.step[i];
    assert_true(st->kind != GK_LIBRARY);          /* baselines only */
    for (int a = 0; a < st->nargs; a++)
      if (st->arg[a] == GK_WS && p.workspace == 0)
        fail_msg("%s: step %d uses ws without a workspace\n%s", what, i, src);
      else if (st->arg[a] != GK_WS && st->kind == GK_ZERO && !b[st->arg[a]].out)
        fail_msg("%s: zeroes input buffer %d\n%s", what, st->arg[a], src);
    if (st->kind == GK_ZERO) {
      if (nlaunch) fail_msg("%s: zero after a launch\n%s", what, src);
      continue;
    }
    nlaunch++;
    int64_t threads = (int64_t)st->block[0] * st->block[1] * st->block[2];
    if (threads < 1 || threads > kn_int(pb, "max_threads") || st->smem > kn_int(pb, "max_smem") ||
        st->grid[0] < 1 || st->grid[1] < 1 || st->grid[1] > 65535 || st->grid[2] != 1 ||
        st->grid[0] > 2147483647u)
      fail_msg("%s: launch %s %u %u %u %u %u %u %u outside the device's limits\n%s", what,
               st->name, st->grid[0], st->grid[1], st->grid[2], st->block[0], st->block[1],
               st->block[2], st->smem, src);
    if (!defines_kernel(src, st->name))
      fail_msg("%s: launches %s, which the source does not define\n%s", what, st->name, src);
  }
  assert_true(nlaunch >= 1);
  if (!strcmp(k->name, "stencil")) {
    /* every launch reads the previous one's output; the first reads grid
    ** (b0), the last writes out (b1); none writes the input */
    int prev = 0;
    for (int i = 0; i < p.nsteps; i++) {
      const gk_step *st = &p.step[i];
      assert_int_equal(st->kind, GK_LAUNCH);
      int n = st->nargs;
      assert_true(n >= 2);
      if (st->arg[0] != prev || st->arg[n - 1] == 0 || st->arg[n - 1] == prev ||
          (n == 3 && st->arg[1] != 1))
        fail_msg("%s: launch %d breaks the chain grid -> ... -> out\n%s", what, i, src);
      prev = st->arg[n - 1];
    }
    if (p.nsteps > 1 || strstr(src, "stencil_all")) assert_true(p.workspace >= 4 * (size_t)b[0].n);
    if (!strstr(src, "stencil_all")) assert_int_equal(prev, 1);
  }
  if (!strcmp(k->name, "reduction")) {
    /* atomics into out need it zeroed first */
    if (strstr(src, "atomicAdd(out"))
      assert_true(p.step[0].kind == GK_ZERO && p.step[0].arg[0] == 1);
  }
  if (!strcmp(k->name, "transpose")) {
    assert_int_equal(p.nsteps, 1);
    assert_true(p.workspace == 0);
  }
}

static void compile_ok(const char *src, const char *what) {
  if (!have_nvrtc) return;
  void *img = NULL;
  size_t size = 0;
  rt_str log = {0};
  rt_err err = {0};
  int rc = gd_nvrtc_compile(src, 9, 0, NULL, &img, &size, &log, &err);
  if (rc) fail_msg("%s: NVRTC %s\n%s\n%s", what, rc < 0 ? err.msg : "compile error",
                   log.s ? log.s : "", src);
  assert_true(size > 0);
  free(img);
  free(log.s);
}

/* One workload: the space, its default and samples, the device reference.
** ns: how many schedules to sample (fewer if the space is smaller).
** Returns the number of schedules checked. */
static int check_workload(const kn_kernel *k, const char *set, int ns, gsl_rng *rng) {
  sp_space *sp = load_space(k, set);
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  int np = sp_nparams(sp);
  rt_count count = sp_count(sp);
  if (count == 0) fail_msg("%s %s: empty space", k->name, set);
  if (count < (rt_count)ns) ns = (int)count;
  int *cfgs = malloc((size_t)(ns + 1) * (size_t)np * sizeof *cfgs);
  int failed;
  assert_int_equal(sp_default_config(sp, cfgs), 1);
  if (!sp_valid(sp, cfgs, &failed))
    fail_msg("%s %s: default configuration fails `%s`", k->name, set, sp_cond_text(sp, failed));
  rt_err err = {0};
  if (sp_sample(sp, rng, ns, 1, cfgs + np, &err)) fail_msg("%s", err.msg);
  for (int c = 0; c <= ns; c++) {
    char *js = sp_config_json(sp, cfgs + (size_t)c * np), what[512];
    snprintf(what, sizeof what, "%s %s %s", k->name, set, js);
    char *src = k->codegen(&pb, sp, cfgs + (size_t)c * np);
    check_plan(k, &pb, src, what);
    compile_ok(src, what);
    free(src);
    free(js);
  }
  char what[256];
  snprintf(what, sizeof what, "%s %s device reference", k->name, set);
  char *ref = k->device_reference(&pb);
  check_plan(k, &pb, ref, what);
  compile_ok(ref, what);
  free(ref);
  free(cfgs);
  sp_free(sp);
  return ns + 1;
}

/* Workloads: "L:" marks a large one (more samples). */
static void check_kernel(const kn_kernel *k, const char *const *sets) {
  assert_non_null(k->device_reference);
  assert_null(k->baseline);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 20260707);
  for (int w = 0; sets[w]; w++) {
    int large = !strncmp(sets[w], "L:", 2);
    const char *set = sets[w] + (large ? 2 : 0);
    assert_true(check_workload(k, set, large ? SAMPLES_LARGE : SAMPLES_SMALL, rng) >= 1);
  }
  gsl_rng_free(rng);
  if (!have_nvrtc) {   /* the plans were checked; the compiles were not */
    printf("skipped: %s: NVRTC compile of the schedules\n", k->name);
    skip();
  }
}

static void test_reduction(void **state) {
  (void)state;
  static const char *const sets[] = {
    "L:N=268435456", "N=1", "N=7", "N=1000", "N=65537",
    "N=1000003,sms=46,regs_block=32768", NULL,
  };
  check_kernel(&gk_reduction, sets);
}

static void test_transpose(void **state) {
  (void)state;
  static const char *const sets[] = {
    "L:M=16384,N=16384", "M=1,N=1", "M=7,N=13", "M=257,N=129", "M=1,N=4096",
    "M=96,N=64,max_threads=256,max_smem=49152", NULL,
  };
  check_kernel(&gk_transpose, sets);
}

static void test_stencil(void **state) {
  (void)state;
  static const char *const sets[] = {
    "L:NX=16384,NY=16384,STEPS=4", "L:NX=16382,NY=16382,STEPS=8", "NX=1,NY=1,STEPS=1",
    "NX=7,NY=13,STEPS=3", "NX=40,NY=302,STEPS=5", "NX=13,NY=31,STEPS=2,max_smem=49152", NULL,
  };
  check_kernel(&gk_stencil, sets);
}

/* More steps than a plan holds launches (2 * GK_MAXSTEP + 1): the space
** still has schedules (deeper temporal blocking, tb >= 3) though the
** default (one step per launch) is invalid; the device reference falls
** back to one block. */
static void test_stencil_many_steps(void **state) {
  (void)state;
  char set[64];
  snprintf(set, sizeof set, "NX=40,NY=30,STEPS=%d", 2 * GK_MAXSTEP + 1);
  sp_space *sp = load_space(&gk_stencil, set);
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  assert_true(sp_count(sp) > 0);
  int *cfg = malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  assert_int_equal(sp_default_config(sp, cfg), 1);
  assert_false(sp_valid(sp, cfg, NULL));
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 17);
  rt_err err = {0};
  for (int i = 0; i < 4; i++) {
    assert_int_equal(sp_sample(sp, rng, 1, 0, cfg, &err), 0);
    assert_int_equal(kn_param_str(sp, cfg, "mode")[0], 's');
    assert_true(kn_param_int(sp, cfg, "tb") >= 3);
    char *src = gk_stencil.codegen(&pb, sp, cfg);
    check_plan(&gk_stencil, &pb, src, set);
    compile_ok(src, set);
    free(src);
  }
  char *ref = gk_stencil.device_reference(&pb);
  assert_non_null(strstr(ref, "stencil_all"));
  check_plan(&gk_stencil, &pb, ref, "stencil many steps: reference");
  compile_ok(ref, "stencil many steps: reference");
  free(ref);
  gsl_rng_free(rng);
  free(cfg);
  sp_free(sp);

  /* exactly GK_MAXSTEP steps: one step per launch still fits a plan */
  snprintf(set, sizeof set, "NX=9,NY=11,STEPS=%d", GK_MAXSTEP);
  sp = load_space(&gk_stencil, set);
  kn_problem_from_space(&pb, sp);
  cfg = malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  assert_int_equal(sp_default_config(sp, cfg), 1);
  assert_true(sp_valid(sp, cfg, NULL));
  char *src = gk_stencil.codegen(&pb, sp, cfg);
  check_plan(&gk_stencil, &pb, src, set);
  gk_plan p;
  assert_int_equal(gk_plan_parse(src, 2, &p, &err), 0);
  assert_int_equal(p.nsteps, GK_MAXSTEP);
  free(src);
  ref = gk_stencil.device_reference(&pb);
  assert_null(strstr(ref, "stencil_all"));
  assert_int_equal(gk_plan_parse(ref, 2, &p, &err), 0);
  assert_int_equal(p.nsteps, GK_MAXSTEP);
  free(ref);
  free(cfg);
  sp_free(sp);
}

/* The host kernels' buffers, counts and tolerance, and the GPU's space
** files with the device-limit problem variables. */
static void test_same_problem_as_host(void **state) {
  (void)state;
  static const struct { const kn_kernel *g, *h; const char *set; } k[] = {
    {&gk_reduction, &hk_reduction, "N=1000"},
    {&gk_transpose, &hk_transpose, "M=7,N=13"},
    {&gk_stencil, &hk_stencil, "NX=7,NY=13,STEPS=3"},
  };
  for (size_t i = 0; i < sizeof k / sizeof *k; i++) {
    assert_string_equal(k[i].g->name, k[i].h->name);
    sp_space *sp = load_space(k[i].g, k[i].set);
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    kn_buf bg[KN_MAXBUF], bh[KN_MAXBUF];
    int n = k[i].g->buffers(&pb, bg);
    assert_int_equal(n, k[i].h->buffers(&pb, bh));
    for (int j = 0; j < n; j++) {
      assert_string_equal(bg[j].name, bh[j].name);
      assert_true(bg[j].n == bh[j].n && bg[j].out == bh[j].out);
    }
    assert_true(k[i].g->flops(&pb) == k[i].h->flops(&pb));
    assert_true(k[i].g->min_bytes(&pb) == k[i].h->min_bytes(&pb));
    assert_true(k[i].g->tolerance(&pb) == k[i].h->tolerance(&pb));
    static const char *const limits[] = {"max_threads", "max_smem", "regs_block", "sms"};
    static const int64_t h200[] = {1024, 232448, 65536, 132};
    for (int l = 0; l < 4; l++) assert_true(kn_int(&pb, limits[l]) == h200[l]);
    sp_free(sp);
  }
}

int main(void) {
  const char *why = NULL;
  have_nvrtc = gd_nvrtc_available(&why);
  if (!have_nvrtc) printf("skipped: NVRTC compile checks: %s\n", why);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_same_problem_as_host),
    cmocka_unit_test(test_reduction),
    cmocka_unit_test(test_transpose),
    cmocka_unit_test(test_stencil),
    cmocka_unit_test(test_stencil_many_steps),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
