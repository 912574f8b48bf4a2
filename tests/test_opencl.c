/*
** test_opencl.c -- the OpenCL backend (targets/opencl/oc.h) on whatever
** OpenCL device is here (PoCL's CPU device on the development machine and
** in CI): target names; the device's description against what the machine
** says independently; the generated reduction and transpose code verified
** on the device for the default and sampled schedules of odd and tiny
** workloads; hand-written wrong, input-writing, crashing, hanging and
** non-compiling kernels get wrong_result, wrong_result, runtime_error,
** timeout and compile_error (with the build options and log) and the test
** process carries on; the compile cache; the ceilings bench against
** physical bounds; the command line end to end (targets, bench, a tuning
** campaign that pins, model explain), and without a platform (the loader
** pointed at no vendor) the target absent with the reason. Without an OpenCL platform every test that needs one
** is skipped with the reason.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/ms.h"
#include "search_spaces/sp.h"
#include "targets/opencl/oc.h"
#include "targets/tg.h"
#include "tk_exe.h"
#include "tk_run.h"
#include "tk_space.h"

static char cache_dir[64];
static int have_cl;
static const char *why_not;

#define NEED_CL()                                                  \
  do {                                                             \
    if (!have_cl) {                                                \
      print_message("skipped: no OpenCL device here: %s\n", why_not); \
      skip();                                                      \
    }                                                              \
  } while (0)

static void fast_opts(ms_opts *o) {
  ms_opts_default(o);
  o->cache_dir = cache_dir;
  o->min_reps = 3;
  o->max_reps = 5;
  o->warmup = 1;
  o->time_cap = 0.05;
  o->timeout = 20;
}

/* Measure src on opencl:0.0 for kernel k with bindings set. */
static void measure(const kn_kernel *k, const char *set, const char *src, const ms_opts *o,
                    ms_result *r) {
  sp_space *sp = load_space(k, set);
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  rt_err err = {0};
  ms_workload *w = ms_workload_new(k, &pb, &err);
  if (!w) fail_msg("%s", err.msg);
  assert_int_equal(oc_measure(w, src, 0, 0, o, r), 0);
  ms_workload_free(w);
  sp_free(sp);
}

static void test_target_names(void **state) {
  (void)state;
  int p = -1, d = -1;
  assert_int_equal(oc_target_parse("opencl", &p, &d), 0);
  assert_int_equal(p, 0);
  assert_int_equal(d, 0);
  assert_int_equal(oc_target_parse("opencl:2.13", &p, &d), 0);
  assert_int_equal(p, 2);
  assert_int_equal(d, 13);
  const char *bad[] = {"opencl:", "opencl:1", "opencl:1.", "opencl:.1", "opencl:1.2.3",
                       "opencl:a.b", "opencl:-1.0", "opencl0.0", "openclx", "cuda:0", "host",
                       "opencl:99999.0", ""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    if (!oc_target_parse(bad[i], &p, &d)) fail_msg("'%s' parsed as opencl:%d.%d", bad[i], p, d);
}

static void test_describe(void **state) {
  (void)state;
  rt_err err = {0};
  tg_target t;
  /* names through the table: the row parses them without the hardware */
  assert_int_equal(tg_resolve("opencl", &t, &err), 0);
  assert_ptr_equal(t.be, &oc_backend);
  assert_string_equal(t.name, "opencl:0.0");
  assert_int_equal(tg_resolve("opencl:1.2", &t, &err), 0);
  assert_string_equal(t.name, "opencl:1.2");
  assert_int_equal(t.idx[0], 1);
  assert_int_equal(t.idx[1], 2);
  assert_int_equal(tg_resolve("opencl:x", &t, &err), -1);
  assert_non_null(strstr(err.msg, "expected opencl:P.D"));
  NEED_CL();
  tg_desc d;
  if (tg_describe_name("opencl:0.0", &d, &err)) fail_msg("%s", err.msg);
  assert_int_equal(strlen(d.fingerprint), 32);
  int cus = atoi(tg_desc_get(&d, "compute_units"));
  assert_true(cus >= 1);
  /* PoCL's CPU device has one compute unit per CPU it may use */
  if (!strcmp(tg_desc_get(&d, "type"), "cpu") && strstr(tg_desc_get(&d, "platform"), "Portable"))
    assert_int_equal(cus, (int)sysconf(_SC_NPROCESSORS_ONLN));
  assert_non_null(strstr(tg_desc_get(&d, "compiler"), tg_desc_get(&d, "driver")));
  /* opencl is opencl:0.0: the same fingerprint */
  tg_desc d2;
  assert_int_equal(tg_describe_name("opencl", &d2, &err), 0);
  assert_string_equal(d.fingerprint, d2.fingerprint);
  /* a device that is not there: an error naming it */
  assert_int_equal(tg_describe_name("opencl:0.57", &d2, &err), -1);
  assert_non_null(strstr(err.msg, "no OpenCL device 57 on platform 0"));
  assert_int_equal(tg_describe_name("opencl:9.0", &d2, &err), -1);
  assert_non_null(strstr(err.msg, "device 0 on platform 9"));
  /* the row lists the device (rooftune targets) */
  tg_target list[OC_MAXDEV];
  int n = oc_backend.list(list, OC_MAXDEV), found = 0;
  for (int i = 0; i < n; i++) found |= !strcmp(list[i].name, "opencl:0.0");
  assert_true(found);
  /* the limit bindings come from the device, and leave the user's alone */
  rt_str s = {0};
  assert_int_equal(tg_resolve("opencl:0.0", &t, &err), 0);
  assert_int_equal(tg_limit_bindings(&t, "cus=3", &s, &err), 0);
  char want[64];
  snprintf(want, sizeof want, "max_wg=%d", atoi(tg_desc_get(&d, "max_work_group")));
  assert_non_null(strstr(s.s, want));
  assert_null(strstr(s.s, "cus="));
  free(s.s);
}

/* The default and ns sampled schedules of k for bindings set (plus the
** device's limits) verify on the device. */
static void verify_schedules(const kn_kernel *k, const char *user, int ns, gsl_rng *rng,
                             const char *also) {
  rt_err err = {0};
  rt_str set = {0};
  rt_str_printf(&set, "%s", user);
  tg_target t;
  assert_int_equal(tg_resolve("opencl:0.0", &t, &err), 0);
  assert_int_equal(tg_limit_bindings(&t, user, &set, &err), 0);
  sp_space *sp = load_space(k, set.s);
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  int np = sp_nparams(sp);
  int *cfgs = calloc((size_t)(ns + 1) * (size_t)np, sizeof *cfgs);
  assert_int_equal(sp_default_config(sp, cfgs), 1);
  assert_true(sp_valid(sp, cfgs, NULL));
  if (sp_sample(sp, rng, ns, 1, cfgs + np, &err)) fail_msg("%s", err.msg);
  if (also) {   /* a schedule the sample may miss replaces the last sampled */
    if (sp_config_parse(sp, also, cfgs + (size_t)ns * np, &err)) fail_msg("%s: %s", also, err.msg);
    assert_true(sp_valid(sp, cfgs + (size_t)ns * np, NULL));
  }
  ms_workload *w = ms_workload_new(k, &pb, &err);
  if (!w) fail_msg("%s", err.msg);
  ms_opts o;
  fast_opts(&o);
  for (int c = 0; c <= ns; c++) {
    char *src = k->codegen(&pb, sp, cfgs + (size_t)c * np);
    char *js = sp_config_json(sp, cfgs + (size_t)c * np);
    ms_result r;
    assert_int_equal(oc_measure(w, src, 0, 0, &o, &r), 0);
    if (r.status != MS_OK)
      fail_msg("%s %s %s: %s: %s\n%s", k->name, set.s, js, ms_status_name(r.status), r.msg, src);
    assert_true(r.t.n >= 3 && r.t.median > 0);
    free(js);
    free(src);
  }
  ms_workload_free(w);
  free(cfgs);
  sp_free(sp);
  free(set.s);
}

static void test_reduction_verifies(void **state) {
  (void)state;
  NEED_CL();
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 7);
  /* every remainder path of both orders */
  verify_schedules(&ok_reduction, "N=100003", 3, rng,
                   "{\"wg\":32,\"vec\":4,\"ilp\":4,\"waves\":2,\"block\":\"serial\","
                   "\"order\":\"blocked\"}");
  verify_schedules(&ok_reduction, "N=37", 1, rng,        /* fewer items than a group */
                   "{\"wg\":16,\"vec\":2,\"ilp\":1,\"waves\":1,\"block\":\"tree\","
                   "\"order\":\"blocked\"}");
  gsl_rng_free(rng);
}

static void test_transpose_verifies(void **state) {
  (void)state;
  NEED_CL();
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 11);
  verify_schedules(&ok_transpose, "M=67,N=45", 3, rng,   /* partial edge tiles */
                   "{\"tile\":32,\"rows\":8,\"local\":\"no\",\"pad\":0}");
  verify_schedules(&ok_transpose, "M=128,N=64", 1, rng, NULL);
  gsl_rng_free(rng);
}

/* Hand-written candidates for the reduction workload N=4096 (x, out). */
#define RED_HEAD "//@oc launch k 1 1 1 1 b0 b1\n"
static const char wrong_src[] = RED_HEAD
  "__kernel void k(__global const float *x, __global float *out) {\n"
  "  float s = 0.0f;\n"
  "  for (int i = 1; i < 4096; i++) s += x[i];   /* misses x[0] */\n"
  "  out[0] = s + 1.0f;\n"
  "}\n";
static const char right_src[] = RED_HEAD
  "__kernel void k(__global const float *x, __global float *out) {\n"
  "  float s = 0.0f;\n"
  "  for (int i = 0; i < 4096; i++) s += x[i];\n"
  "  out[0] = s;\n"
  "}\n";
static const char writes_input_src[] = RED_HEAD
  "__kernel void k(__global float *x, __global float *out) {\n"
  "  float s = 0.0f;\n"
  "  for (int i = 0; i < 4096; i++) s += x[i];\n"
  "  out[0] = s;\n"
  "  x[17] = 0.5f;\n"
  "}\n";
static const char crash_src[] = RED_HEAD
  "__kernel void k(__global const float *x, __global float *out) {\n"
  "  __global float *far = out + (1L << 40);   /* far outside any buffer */\n"
  "  for (long i = 0; i < 64; i++) far[i << 20] = x[0];\n"
  "  out[0] = 0.0f;\n"
  "}\n";
static const char hang_src[] = RED_HEAD
  "__kernel void k(__global const float *x, __global float *out) {\n"
  "  volatile int go = 1;\n"
  "  float s = 0.0f;\n"
  "  while (go) s += x[0];\n"
  "  out[0] = s;\n"
  "}\n";
static const char syntax_src[] = RED_HEAD
  "__kernel void k(__global const float *x, __global float *out) {\n"
  "  out[0] = undeclared_thing + x[0];\n"
  "}\n";
static const char no_plan_src[] =
  "__kernel void k(__global const float *x, __global float *out) { out[0] = x[0]; }\n";

static void test_right_and_cache(void **state) {
  (void)state;
  NEED_CL();
  ms_opts o;
  fast_opts(&o);
  ms_result r;
  measure(&ok_reduction, "N=4096", right_src, &o, &r);
  if (r.status != MS_OK) fail_msg("%s: %s", ms_status_name(r.status), r.msg);
  assert_false(r.cache_hit);
  measure(&ok_reduction, "N=4096", right_src, &o, &r);
  assert_int_equal(r.status, MS_OK);
  assert_true(r.cache_hit);       /* invariant 3: the binary from the cache */
  measure(&ok_reduction, "N=4096", NULL, &o, &r);   /* the host reference: the baseline */
  if (r.status != MS_OK) fail_msg("%s: %s", ms_status_name(r.status), r.msg);
  assert_true(r.t.n >= 3 && r.t.median > 0 && r.max_err == 0);
}

static void test_wrong_result(void **state) {
  (void)state;
  NEED_CL();
  ms_opts o;
  fast_opts(&o);
  ms_result r;
  measure(&ok_reduction, "N=4096", wrong_src, &o, &r);
  assert_int_equal(r.status, MS_WRONG_RESULT);
  assert_non_null(strstr(r.msg, "output sum wrong"));
  assert_int_equal(r.t.n, 0);     /* never timed */
  measure(&ok_reduction, "N=4096", writes_input_src, &o, &r);
  assert_int_equal(r.status, MS_WRONG_RESULT);
  assert_string_equal(r.msg, "the candidate wrote to its input x");
}

static void test_crash(void **state) {
  (void)state;
  NEED_CL();
  ms_opts o;
  fast_opts(&o);
  ms_result r;
  measure(&ok_reduction, "N=4096", crash_src, &o, &r);
  assert_int_equal(r.status, MS_RUNTIME_ERROR);
  if (!strstr(r.msg, "SIGSEGV") && !strstr(r.msg, "SIGBUS")) fail_msg("%s", r.msg);
}

static void test_hang(void **state) {
  (void)state;
  NEED_CL();
  ms_opts o;
  fast_opts(&o);
  o.timeout = 4;
  ms_result r;
  double t0 = rt_now();
  measure(&ok_reduction, "N=4096", hang_src, &o, &r);
  assert_int_equal(r.status, MS_TIMEOUT);
  assert_non_null(strstr(r.msg, "killed after"));
  assert_true(rt_now() - t0 < 60);
}

static void test_compile_error(void **state) {
  (void)state;
  NEED_CL();
  ms_opts o;
  fast_opts(&o);
  ms_result r;
  measure(&ok_reduction, "N=4096", syntax_src, &o, &r);
  assert_int_equal(r.status, MS_COMPILE_ERROR);
  if (!strstr(r.msg, "options " OC_BUILD_OPTS) || !strstr(r.msg, "undeclared_thing"))
    fail_msg("%s", r.msg);
  measure(&ok_reduction, "N=4096", no_plan_src, &o, &r);
  assert_int_equal(r.status, MS_COMPILE_ERROR);
  assert_non_null(strstr(r.msg, "no '//@oc launch' line"));
}

static void test_plan_parse(void **state) {
  (void)state;
  oc_plan p;
  rt_err err = {0};
  assert_int_equal(oc_plan_parse("//@oc workspace 64\n//@oc launch a 8 2 4 1 b0 ws\n"
                                 "//@oc launch b 4 1 4 1 ws b1\n", 2, &p, &err), 0);
  assert_int_equal(p.nsteps, 2);
  assert_int_equal(p.workspace, 64);
  assert_int_equal(p.step[0].global[0], 8);
  assert_int_equal(p.step[0].local[0], 4);
  assert_int_equal(p.step[0].arg[1], OC_WS);
  assert_int_equal(p.step[1].arg[1], 1);
  const char *bad[] = {
    "//@oc launch a 6 1 4 1 b0\n",           /* global not a multiple of local */
    "//@oc launch a 8 1 4 1 b2\n",           /* no buffer 2 */
    "//@oc launch a 8 1 4 1 ws\n",           /* ws without workspace */
    "//@oc launch a 8 1 0 1 b0\n",           /* zero size */
    "//@oc workspace 0\n//@oc launch a 8 1 4 1 b0\n",
    "//@oc frobnicate\n//@oc launch a 8 1 4 1 b0\n",
    "// no plan\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    if (!oc_plan_parse(bad[i], 2, &p, &err)) fail_msg("parsed: %s", bad[i]);
}

static void test_bench(void **state) {
  (void)state;
  NEED_CL();
  cm_bench_opts bo;
  cm_bench_opts_default(&bo);
  bo.quick = 1;
  bo.time_per_point = 0.01;
  bo.repeats = 3;
  cm_ceilings c;
  rt_err err = {0};
  if (oc_bench(0, 0, &bo, &c, &err)) fail_msg("%s", err.msg);
  oc_props p;
  assert_int_equal(oc_props_get(0, 0, &p, &err), 0);
  assert_int_equal(c.threads, p.cus);
  /* physical bounds: at most 64 flops per cycle per compute unit (two
  ** 16-lane FMA pipes) on a CPU, at least 0.1 GFLOP/s */
  assert_true(c.peak[1] > 1e8);
  if (!strcmp(p.type, "cpu"))
    assert_true(c.peak[1] < 64.0 * p.cus * p.clock_mhz * 1e6 * 1.5);
  assert_true(c.bw[CM_DRAM - CM_L1][1] > 1e8 && c.bw[CM_DRAM - CM_L1][1] < 1e13);
  assert_true(c.dram_copy[1] > 1e8 && c.dram_copy[1] < 1e13);
  char *js = cm_ceilings_json(&c);
  cm_ceilings back;
  assert_int_equal(cm_ceilings_parse(js, &back, &err), 0);
  assert_true(back.peak[1] == c.peak[1]);
  free(js);
}

/* The wg-roofline models against the roofline computed here by hand. */
static void test_model(void **state) {
  (void)state;
  cm_ceilings ce;
  memset(&ce, 0, sizeof ce);
  ce.threads = 2;
  ce.peak[0] = 5e10;   /* as oc_bench sets it: the device / compute units */
  ce.peak[1] = 1e11;
  ce.bw[0][1] = 4e10;
  ce.bw[CM_DRAM - CM_L1][1] = 1e10;
  const cm_kmodel *km = cm_kmodel_find_on("wg-roofline", "reduction");
  assert_ptr_equal(km, &cm_wg_reduction);
  sp_space *sp = load_space(&ok_reduction, "N=1048576,cus=2,max_wg=4096,max_local=65536");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  int cfg[16];
  assert_int_equal(sp_default_config(sp, cfg), 1);   /* wg 64, waves 4: 8 groups */
  cm_coefs co;
  cm_coefs_default(km, &co);
  cm_pred p;
  rt_err err = {0};
  assert_int_equal(cm_predict(km, &pb, sp, cfg, &ce, &co, 0, &p, &err), 0);
  double groups = 4 * 2, bytes = 4.0 * 1048576 + 8 * groups + 4;
  assert_true(fabs(p.w.bytes[CM_DRAM - CM_L1] - bytes) < 1e-6);
  assert_true(fabs(p.t[CM_DRAM] - bytes / (1e10 * 0.8)) < 1e-12);   /* both units, eff 0.8 */
  assert_int_equal(p.bound, CM_DRAM);
  assert_true(fabs(p.t[CM_OVERHEAD] - (2 * 2e-5 + 1e-6 + 2e-7 * groups * 7 / 2)) < 1e-12);
  assert_true(p.time >= p.t[CM_DRAM] + p.t[CM_OVERHEAD]);
  sp_free(sp);
  /* transpose: 8 M N bytes (tile 16: whole 64-byte lines), local memory twice that */
  km = cm_kmodel_find_on("wg-roofline", "transpose");
  assert_ptr_equal(km, &cm_wg_transpose);
  sp = load_space(&ok_transpose, "M=512,N=256,cus=2,max_wg=4096,max_local=65536");
  kn_problem_from_space(&pb, sp);
  assert_int_equal(sp_default_config(sp, cfg), 1);
  cm_coefs_default(km, &co);
  assert_int_equal(cm_predict(km, &pb, sp, cfg, &ce, &co, 0, &p, &err), 0);
  assert_true(fabs(p.t[CM_DRAM] - 8.0 * 512 * 256 / (1e10 * 0.8)) < 1e-12);
  assert_true(fabs(p.t[CM_L1] - 8.0 * 512 * 256 / (4e10 * 0.8)) < 1e-12);
  sp_free(sp);
}

static char exe[4200];

/* rooftune ARGS in folder dir, output (stdout and stderr) into out. */
static int run_rooftune(const char *dir, const char *const *args, char *out, size_t cap) {
  const char *argv[32] = {exe};
  int n = 1;
  for (; args[n - 1] && n < 31; n++) argv[n] = args[n - 1];
  argv[n] = NULL;
  tk_io io = {.cwd = dir, .out = out, .cap = cap, .both = 1};
  return tk_run(argv, &io);
}

/* The command line end to end: targets lists the device, bench stores the
** ceilings, a short campaign pins a verified winner, model explain gives
** its roofline on those ceilings with the wg-roofline model. */
static void test_cli_end_to_end(void **state) {
  (void)state;
  NEED_CL();
  if (!exe[0]) skip();
  char dir[] = "/tmp/rt-oc-cli-XXXXXX", out[16384];
  assert_non_null(mkdtemp(dir));
  setenv("ROOFTUNE_CACHE", cache_dir, 1);
  const char *targets[] = {"targets", NULL};
  assert_int_equal(run_rooftune(dir, targets, out, sizeof out), 0);
  assert_non_null(strstr(out, "opencl:0.0 -- OpenCL devices"));
  const char *bench[] = {"bench", "--target", "opencl:0.0", "--quick", "--db", "t.db", NULL};
  if (run_rooftune(dir, bench, out, sizeof out)) fail_msg("%s", out);
  if (!strstr(out, "opencl-fma") || !strstr(out, "DRAM copy")) fail_msg("%s", out);
  const char *tune[] = {"tune", "--target", "opencl:0.0", "--kernel", "reduction", "--set",
                        "N=65536", "--strategy", "random", "--budget", "3", "--time-cap", "0.05",
                        "--db", "t.db", NULL};
  if (run_rooftune(dir, tune, out, sizeof out)) fail_msg("%s", out);
  if (!strstr(out, "trials     3: ok 3 ") || !strstr(out, "pinned     version 1"))
    fail_msg("%s", out);
  const char *hist[] = {"db", "history", "--target", "opencl:0.0", "--kernel", "reduction",
                        "--db", "t.db", NULL};
  if (run_rooftune(dir, hist, out, sizeof out)) fail_msg("%s", out);
  assert_non_null(strstr(out, "\"wg\""));
  const char *explain[] = {"model", "explain", "--target", "opencl:0.0", "--kernel", "reduction",
                           "--set", "N=65536", "--config", "default", "--db", "t.db", NULL};
  if (run_rooftune(dir, explain, out, sizeof out)) fail_msg("%s", out);
  /* the device's limits bound as tune bound them: the same workload, so
  ** the campaign's measurement of the default is shown beside the model */
  if (!strstr(out, "<- limits") || !strstr(out, "opencl:0.0") || !strstr(out, "DRAM") ||
      !strstr(out, "(trial ") || strstr(out, "not in"))
    fail_msg("%s", out);
  assert_int_equal(tk_rm_rf(dir), 0);
}

/* The fingerprint of opencl:0.0 from `rooftune targets` in a fresh process
** with the environment env (NULL: as it is); "" when there is none. */
static void fingerprint_with(const char *const *env, char *fp, size_t cap) {
  const char *argv[] = {exe, "targets", NULL};
  tk_result r = tk_capture(argv, ".", env);
  fp[0] = 0;
  const char *o = r.rc == 0 ? strstr(r.out, "opencl:0.0 -- ") : NULL;
  const char *f = o ? strstr(o, "fingerprint  ") : NULL;
  if (f) snprintf(fp, cap, "%.32s", f + 13);
  tk_result_free(&r);
}

/* A CPU device's global memory is what PoCL grants the process (capped
** by RLIMIT_DATA and POCL_MEMORY_LIMIT): it must not change the
** fingerprint, or a campaign's target is not "this machine" to the next
** command (found on the GPU machine: model explain did not bind the
** device's limits). POCL_MEMORY_LIMIT=1 (GB) rather than a data limit,
** which AddressSanitizer's shadow memory cannot live under. */
static void test_fingerprint_stable(void **state) {
  (void)state;
  NEED_CL();
  if (!exe[0]) skip();
  char a[40], b[40];
  const char *const lim[] = {"POCL_MEMORY_LIMIT=1", NULL};
  fingerprint_with(NULL, a, sizeof a);
  fingerprint_with(lim, b, sizeof b);
  if (!a[0] || !b[0]) fail_msg("no fingerprint of opencl:0.0 from rooftune targets");
  assert_string_equal(a, b);
}

/* No platform (the ICD loader pointed at an empty folder of vendors): the
** target is listed as absent with the reason, and commands on it fail
** with it, exit 1, rooftune itself unharmed. Needs no OpenCL device. */
static void test_absent(void **state) {
  (void)state;
  if (!exe[0]) skip();
  char dir[] = "/tmp/rt-oc-none-XXXXXX", env[64];
  assert_non_null(mkdtemp(dir));
  snprintf(env, sizeof env, "OCL_ICD_VENDORS=%s", dir);
  const char *const envs[] = {env, NULL};
  const char *targets[] = {exe, "targets", NULL};
  tk_result r = tk_capture(targets, dir, envs);
  assert_int_equal(r.rc, 0);
  const char *sec = strstr(r.out, "opencl:0.0 -- ");
  if (sec && !strstr(sec, "not available: ") && strstr(sec, "fingerprint")) {
    /* the GPU machine's loader still found its platforms: it does not
    ** read OCL_ICD_VENDORS, so nothing here can hide them */
    printf("[ SKIP ] this ICD loader ignores OCL_ICD_VENDORS: no way to hide the platforms\n");
    tk_result_free(&r);
    assert_int_equal(tk_rm_rf(dir), 0);
    skip();
  }
  if (!sec || !strstr(r.out, "not available: ") ||
      (!strstr(r.out, "no OpenCL platform") && !strstr(r.out, "no OpenCL ICD loader")))
    fail_msg("%s", r.out);
  tk_result_free(&r);
  const char *bench[] = {exe, "bench", "--target", "opencl:0.0", "--db", "t.db", NULL};
  r = tk_capture(bench, dir, envs);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "OpenCL"));
  tk_result_free(&r);
  assert_int_equal(tk_rm_rf(dir), 0);
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], exe, sizeof exe)) exe[0] = 0;
  snprintf(cache_dir, sizeof cache_dir, "/tmp/rt-oc-test-%d", (int)getpid());
  have_cl = oc_available(&why_not);
  if (!have_cl) printf("test_opencl: no OpenCL device (%s): the device tests are skipped\n",
                       why_not);
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_target_names),
    cmocka_unit_test(test_plan_parse),
    cmocka_unit_test(test_model),
    cmocka_unit_test(test_describe),
    cmocka_unit_test(test_right_and_cache),
    cmocka_unit_test(test_wrong_result),
    cmocka_unit_test(test_crash),
    cmocka_unit_test(test_hang),
    cmocka_unit_test(test_compile_error),
    cmocka_unit_test(test_reduction_verifies),
    cmocka_unit_test(test_transpose_verifies),
    cmocka_unit_test(test_bench),
    cmocka_unit_test(test_cli_end_to_end),
    cmocka_unit_test(test_fingerprint_stable),
      cmocka_unit_test(test_absent),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  tk_rm_rf(cache_dir);   /* the test's own compile cache (made by this process) */
  return rc;
}
