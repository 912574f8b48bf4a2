/*
** test_opencl.c -- the OpenCL backend (targets/opencl/oc.h) on whatever
** OpenCL device is here (PoCL's CPU device on the development machine and
** in CI): target names; the device's description against what the machine
** says independently; the generated reduction and transpose code verified
** on the device for the default and sampled schedules of odd and tiny
** workloads; hand-written wrong, input-writing, crashing, hanging and
** non-compiling kernels get wrong_result, wrong_result, runtime_error,
** timeout and compile_error (with the build options and log) and the test
** process carries on; the plan lines (3-D launches, options, scalars,
** local memory) and their errors; a kernel written here with typed
** arguments (int32 and double vectors, double and short scalars, local
** memory, a read-write output) and no host reference: its reference
** configuration's outputs computed once (checked against sums done here),
** kept in the compile cache and read back from it, a wrong candidate
** named by element, the device's limits giving invalid; the compile cache; the ceilings bench against
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

#include <dirent.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <limits.h>
#include <sys/stat.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/ms.h"
#include "measure/ms_backend.h"
#include "search_spaces/sp.h"
#include "targets/opencl/oc.h"
#include "targets/tg.h"
#include "tuner/tu.h"
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
#define RED_HEAD "//@oc launch k 1 1 1 1 1 1 b0 b1\n"
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
  assert_int_equal(oc_plan_parse("//@oc workspace 64\n//@oc launch a 8 2 3 4 1 3 b0 ws\n"
                                 "//@oc launch b 4 1 1 4 1 1 ws b1\n", 2, &p, &err), 0);
  assert_int_equal(p.nsteps, 2);
  assert_int_equal(p.workspace, 64);
  assert_int_equal(p.step[0].global[0], 8);
  assert_int_equal(p.step[0].global[2], 3);
  assert_int_equal(p.step[0].local[0], 4);
  assert_int_equal(p.step[0].local[2], 3);
  assert_int_equal(p.step[0].arg[1], OC_WS);
  assert_int_equal(p.step[1].arg[1], 1);
  assert_string_equal(p.options, "");
  /* options, scalars, local memory, two-digit buffers */
  assert_int_equal(oc_plan_parse("x\n//@oc options  -DA=1   -cl-mad-enable\n"
                                 "//@oc launch k 64 1 1 64 1 1 b11 s2 l10 b0\n", 12, &p, &err), 0);
  assert_string_equal(p.options, "-DA=1 -cl-mad-enable");
  assert_int_equal(p.step[0].nargs, 4);
  const int want_arg[4] = {11, 2, 10, 0};
  const unsigned char want_how[4] = {OC_ARG_BUF, OC_ARG_VALUE, OC_ARG_LOCAL, OC_ARG_BUF};
  for (int a = 0; a < 4; a++) {
    assert_int_equal(p.step[0].arg[a], want_arg[a]);
    assert_int_equal(p.step[0].how[a], want_how[a]);
  }
  char opts[OC_MAXOPTS + 64];
  assert_string_equal(oc_build_options(p.options, opts, sizeof opts),
                      OC_BUILD_OPTS " -DA=1 -cl-mad-enable");
  assert_string_equal(oc_build_options("", opts, sizeof opts), OC_BUILD_OPTS);
  /* the arguments against the buffers' kinds */
  kn_buf b[12];
  memset(b, 0, sizeof b);
  for (int i = 0; i < 12; i++) b[i].name = "v";
  b[2] = (kn_buf){.name = "s", .n = 1, .kind = KN_SCALAR};
  b[10] = (kn_buf){.name = "t", .n = 8, .kind = KN_LOCAL};
  assert_int_equal(oc_plan_check(&p, b, 12, &err), 0);
  b[0].kind = KN_SCALAR;
  assert_int_equal(oc_plan_check(&p, b, 12, &err), -1);
  assert_string_equal(err.msg, "plan: launch k, argument 4: b0 names buffer v, which is not a vector");
  b[0].kind = KN_VECTOR;
  b[2].kind = KN_VECTOR;
  assert_int_equal(oc_plan_check(&p, b, 12, &err), -1);
  assert_string_equal(err.msg, "plan: launch k, argument 2: s2 names buffer s, which is not a scalar");
  const struct { const char *src, *msg; } bad[] = {
    {"//@oc launch a 6 1 1 4 1 1 b0\n", "plan line 1: expected '//@oc launch NAME GX GY GZ"},
    {"//@oc launch a 8 1 2 4 1 4 b0\n", "each global a multiple of its local"},   /* z */
    {"//@oc launch a 8 1 4 1 b0\n", "plan line 1: expected"},        /* the old 2-D line */
    {"//@oc launch a 8 1 1 4 1 1 b2\n", "N < 2"},                    /* no buffer 2 */
    {"//@oc launch a 8 1 1 4 1 1 s01\n", "N < 2"},                   /* not a number */
    {"//@oc launch a 8 1 1 4 1 1 q0\n", "N < 2"},
    {"//@oc launch a 8 1 1 4 1 1 ws\n", "uses ws, but no workspace line"},
    {"//@oc launch a 8 1 1 0 1 1 b0\n", "sizes 1..2^40"},
    {"//@oc workspace 0\n//@oc launch a 8 1 1 4 1 1 b0\n", "plan line 1: expected '//@oc workspace"},
    {"//@oc frobnicate\n//@oc launch a 8 1 1 4 1 1 b0\n", "unknown plan line (expected options"},
    {"//@oc options -DA\n//@oc options -DB\n//@oc launch a 8 1 1 4 1 1 b0\n",
     "plan line 2: expected one '//@oc options OPT...'"},
    {"//@oc options   \n//@oc launch a 8 1 1 4 1 1 b0\n", "at least one option"},
    {"// no plan\n", "no '//@oc launch' line"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    if (!oc_plan_parse(bad[i].src, 2, &p, &err)) fail_msg("parsed: %s", bad[i].src);
    if (!strstr(err.msg, bad[i].msg)) fail_msg("%s: %s, want %s", bad[i].src, err.msg, bad[i].msg);
  }
}

/* ---- A T1-style kernel written here: typed arguments, a reference
** configuration instead of a host reference (reference NULL), computed
** once and kept in the compile cache ---- */

#define TN 1024
static int tk_buffers(const kn_problem *pb, kn_buf *b) {
  (void)pb;
  b[0] = (kn_buf){.name = "a", .n = TN, .elem = KN_I32, .seed = 7, .value = 1000};
  b[1] = (kn_buf){.name = "d", .n = TN, .elem = KN_F64, .seed = 8};
  b[2] = (kn_buf){.name = "alpha", .n = 1, .elem = KN_F64, .kind = KN_SCALAR,
                  .fill = KN_FILL_CONSTANT, .value = 2.5};
  b[3] = (kn_buf){.name = "k", .n = 1, .elem = KN_I16, .kind = KN_SCALAR,
                  .fill = KN_FILL_CONSTANT, .value = -3};
  b[4] = (kn_buf){.name = "tile", .n = 64, .elem = KN_F64, .kind = KN_LOCAL};
  b[5] = (kn_buf){.name = "acc", .n = TN, .elem = KN_F64, .out = 1, .inout = 1,
                  .fill = KN_FILL_CONSTANT, .value = 1};
  b[6] = (kn_buf){.name = "cnt", .n = TN, .elem = KN_I32, .out = 1};
  return 7;
}
static double tk_flops(const kn_problem *pb) { (void)pb; return 3 * TN; }

/* acc[i] += alpha * d[neighbour of i in its group of 64] + a[i] * k;
** cnt[i] = a[i] / KDIV (KDIV from the options line). */
#define TK_FP64 "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
#define TK_BODY(INDEX, CNT)                                                        \
  "__kernel void tk(__global const int *a, __global const double *d, double alpha,\n" \
  "                 short k, __local double *tile, __global double *acc,\n"        \
  "                 __global int *cnt) {\n"                                         \
  "  const int l = get_local_id(0);\n"                                              \
  "  const long i = " INDEX ";\n"                                                   \
  "  tile[l] = d[i];\n"                                                             \
  "  barrier(CLK_LOCAL_MEM_FENCE);\n"                                               \
  "  acc[i] += alpha * tile[(l + 1) % 64] + (double)(a[i] * k);\n"                  \
  "  cnt[i] = " CNT ";\n"                                                          \
  "}\n"
#define TK_ARGS " b0 b1 s2 s3 l4 b5 b6\n" TK_FP64
static const char tk_ref_src[] =
    "//@oc options -DKDIV=10\n//@oc launch tk 1024 1 1 64 1 1" TK_ARGS
    TK_BODY("get_global_id(0)", "a[i] / KDIV");
static char *tk_device_reference(const kn_problem *pb) {
  (void)pb;
  return rt_strdup(tk_ref_src);
}
static const kn_kernel tk_kernel = {
  .name = "typed_cl", .summary = "typed arguments (test only)", .buffers = tk_buffers,
  .flops = tk_flops, .min_bytes = tk_flops, .atol = 1e-12, .rtol = 1e-12,
  .device_reference = tk_device_reference,
};
/* The same work on a 3-D grid: 64 x 4 x 4 groups of 64 x 1 x 1. */
static const char tk_right_src[] =
    "//@oc options -cl-mad-enable  -DKDIV=10\n//@oc launch tk 64 4 4 64 1 1" TK_ARGS
    TK_BODY("(get_global_id(2) * 4 + get_global_id(1)) * 64 + get_global_id(0)", "a[i] / KDIV");
static const char tk_wrong_src[] =
    "//@oc options -DKDIV=10\n//@oc launch tk 1024 1 1 64 1 1" TK_ARGS
    TK_BODY("get_global_id(0)", "a[i] / KDIV + (i == 777)");
static const char tk_no_options_src[] =
    "//@oc launch tk 1024 1 1 64 1 1" TK_ARGS TK_BODY("get_global_id(0)", "a[i] / KDIV");
static const char tk_big_group_src[] =                 /* 64 x 64 x 2 = 8192 work-items */
    "//@oc options -DKDIV=10\n//@oc launch tk 64 64 2 64 64 2" TK_ARGS
    TK_BODY("get_global_id(0)", "a[i] / KDIV");
static const char tk_reqd_src[] =
    "//@oc options -DKDIV=10\n//@oc launch tk 1024 1 1 32 1 1" TK_ARGS
    "__attribute__((reqd_work_group_size(64, 1, 1)))\n" TK_BODY("get_global_id(0)", "a[i] / KDIV");
static const char tk_big_local_src[] =                 /* 4 MiB of __local doubles */
    "//@oc options -DKDIV=10\n//@oc launch tk 1024 1 1 64 1 1" TK_ARGS
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "__kernel void tk(__global const int *a, __global const double *d, double alpha,\n"
    "                 short k, __local double *tile, __global double *acc, __global int *cnt) {\n"
    "  __local double big[1 << 19];\n"
    "  const int l = get_local_id(0);\n"
    "  const long i = get_global_id(0);\n"
    "  big[l * 8191] = d[i];\n"
    "  tile[l] = d[i];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  acc[i] += alpha * tile[(l + 1) % 64] + (double)(a[i] * k) + 0 * big[((l + 1) % 64) * 8191];\n"
    "  cnt[i] = a[i] / KDIV;\n"
    "}\n";

/* The one ref-*.bin file in the test's cache, into path; 0 or -1. */
static int ref_file(char *path, size_t cap) {
  DIR *d = opendir(cache_dir);
  struct dirent *e;
  int n = 0;
  while (d && (e = readdir(d)))
    if (!strncmp(e->d_name, "ref-", 4) && strstr(e->d_name, ".bin"))
      n++, snprintf(path, cap, "%s/%s", cache_dir, e->d_name);
  if (d) closedir(d);
  return n == 1 ? 0 : -1;
}

static void test_typed_kernel(void **state) {
  (void)state;
  NEED_CL();
  ms_opts o;
  fast_opts(&o);
  o.cache_dir = cache_dir;
  kn_problem pb = {0};
  rt_err err = {0};
  ms_workload *w = ms_workload_new(&tk_kernel, &pb, &err);
  if (!w) fail_msg("%s", err.msg);
  assert_int_equal(ms__ref_missing(w), 1);
  ms_result r;
  assert_int_equal(oc_measure(w, tk_right_src, 0, 0, &o, &r), 0);
  if (r.status != MS_OK) fail_msg("%s: %s", ms_status_name(r.status), r.msg);
  assert_true(r.t.n >= 3 && r.t.median > 0);
  /* the once-computed reference against the same sums done here */
  const int32_t *a = w->in[0];
  const double *d = w->in[1], *acc = w->ref[5];
  const int32_t *cnt = w->ref[6];
  for (int i = 0; i < TN; i++) {
    double want = 1 + 2.5 * d[i / 64 * 64 + (i % 64 + 1) % 64] + (double)(a[i] * -3);
    if (fabs(acc[i] - want) > 1e-12 * fabs(want) || cnt[i] != a[i] / 10)
      fail_msg("element %d: acc %.17g cnt %d, want %.17g %d", i, acc[i], cnt[i], want, a[i] / 10);
  }
  assert_true(a[0] >= 0 && a[0] < 1000);   /* seeded ints in [0, 1000) */
  /* wrong: the integer output, element 777, both values named */
  assert_int_equal(oc_measure(w, tk_wrong_src, 0, 0, &o, &r), 0);
  assert_int_equal(r.status, MS_WRONG_RESULT);
  char want[160];
  snprintf(want, sizeof want, "output cnt wrong at element 777: %d, expected %d (i32: exact; "
           "1 of 1024 elements differ)", a[777] / 10 + 1, a[777] / 10);
  if (!strstr(r.msg, want)) fail_msg("%s, want %s", r.msg, want);
  assert_int_equal(r.t.n, 0);
  /* the options line is what defines KDIV: without it, a compile error */
  assert_int_equal(oc_measure(w, tk_no_options_src, 0, 0, &o, &r), 0);
  assert_int_equal(r.status, MS_COMPILE_ERROR);
  if (!strstr(r.msg, "KDIV")) fail_msg("%s", r.msg);
  /* device limits: invalid, the limit and both numbers named */
  assert_int_equal(oc_measure(w, tk_big_group_src, 0, 0, &o, &r), 0);
  assert_int_equal(r.status, MS_INVALID);
  oc_props p;
  assert_int_equal(oc_props_get(0, 0, &p, &err), 0);
  snprintf(want, sizeof want, "launch tk: a work-group of 64 x 64 x 2 = 8192 work-items, over the "
           "device's CL_DEVICE_MAX_WORK_GROUP_SIZE %d", p.max_wg);
  if (p.max_wg < 8192 && strcmp(r.msg, want)) fail_msg("%s", r.msg);
  assert_int_equal(oc_measure(w, tk_reqd_src, 0, 0, &o, &r), 0);
  assert_int_equal(r.status, MS_INVALID);
  assert_string_equal(r.msg, "launch tk: a work-group of 32 x 1 x 1, but the kernel requires "
                             "64 x 1 x 1 (reqd_work_group_size)");
  if (p.local_mem < 4194304) {
    assert_int_equal(oc_measure(w, tk_big_local_src, 0, 0, &o, &r), 0);
    assert_int_equal(r.status, MS_INVALID);
    if (!strstr(r.msg, "bytes of local memory, over the device's CL_DEVICE_LOCAL_MEM_SIZE"))
      fail_msg("%s", r.msg);
  }
  ms_workload_free(w);
  /* the reference outputs are in the compile cache: header, two entries,
  ** acc's 8 KiB, cnt's 4 KiB. A fresh workload reads them from there:
  ** with cnt[0] changed in the file, the right candidate is now wrong. */
  char path[PATH_MAX];
  if (ref_file(path, sizeof path)) fail_msg("no single ref-*.bin in %s", cache_dir);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_size, 24 + 2 * 24 + TN * 8 + TN * 4);
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  int32_t c0;
  assert_int_equal(fseek(f, 24 + 48 + TN * 8, SEEK_SET), 0);
  assert_int_equal(fread(&c0, sizeof c0, 1, f), 1);
  c0 += 1;
  assert_int_equal(fseek(f, 24 + 48 + TN * 8, SEEK_SET), 0);
  assert_int_equal(fwrite(&c0, sizeof c0, 1, f), 1);
  fclose(f);
  w = ms_workload_new(&tk_kernel, &pb, &err);
  assert_int_equal(oc_measure(w, tk_right_src, 0, 0, &o, &r), 0);
  assert_int_equal(r.status, MS_WRONG_RESULT);
  snprintf(want, sizeof want, "output cnt wrong at element 0: %d, expected %d", c0 - 1, c0);
  if (!strstr(r.msg, want)) fail_msg("%s, want %s", r.msg, want);
  ms_workload_free(w);
  /* a truncated file is not this workload's: computed again, rewritten */
  assert_int_equal(truncate(path, 100), 0);
  w = ms_workload_new(&tk_kernel, &pb, &err);
  assert_int_equal(oc_measure(w, tk_right_src, 0, 0, &o, &r), 0);
  if (r.status != MS_OK) fail_msg("%s: %s", ms_status_name(r.status), r.msg);
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_size, 24 + 2 * 24 + TN * 8 + TN * 4);
  /* with no source, the reference configuration itself is the baseline */
  assert_int_equal(oc_measure(w, NULL, 0, 0, &o, &r), 0);
  if (r.status != MS_OK) fail_msg("%s: %s", ms_status_name(r.status), r.msg);
  assert_true(r.max_err == 0);
  ms_workload_free(w);
}

/* A reference configuration that does not build stops the measurement
** with a harness failure that says so (nothing could be verified). */
static char *tk_bad_reference(const kn_problem *pb) {
  (void)pb;
  return rt_strdup(tk_no_options_src);
}
static void test_typed_bad_reference(void **state) {
  (void)state;
  NEED_CL();
  kn_kernel k = tk_kernel;
  k.device_reference = tk_bad_reference;
  ms_opts o;
  fast_opts(&o);
  kn_problem pb = {0};
  ms_workload *w = ms_workload_new(&k, &pb, NULL);
  assert_non_null(w);
  ms_result r;
  assert_int_equal(oc_measure(w, tk_right_src, 0, 0, &o, &r), -1);
  assert_int_equal(r.status, MS_RUNTIME_ERROR);
  if (!strstr(r.msg, "harness: the reference configuration of typed_cl failed (compile_error): "
                     "compile error: ") || !strstr(r.msg, "KDIV"))
    fail_msg("%s", r.msg);
  assert_int_equal(ms__ref_missing(w), 1);
  ms_workload_free(w);
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

/* ---- Batches (oc_measure_batch, tg_measure_batch) ---- */

/* Measure srcs[0..n) of k (bindings set) one by one and in one batch call,
** on cache `sub` of the test's cache; the statuses one by one into one[]. */
static void both_ways(const kn_kernel *k, const char *set, const char *const *srcs, int n,
                      const ms_opts *o, ms_result *one, ms_result *bat) {
  rt_err err = {0};
  tg_target t;
  assert_int_equal(tg_resolve("opencl:0.0", &t, &err), 0);
  assert_true(tg_batches(&t, o));
  sp_space *sp = k->space ? load_space(k, set) : NULL;
  kn_problem pb = {0};
  if (sp) kn_problem_from_space(&pb, sp);
  for (int pass = 0; pass < 2; pass++) {   /* fresh workloads: the reference once each */
    ms_workload *w = ms_workload_new(k, &pb, &err);
    if (!w) fail_msg("%s", err.msg);
    if (pass == 0)
      for (int i = 0; i < n; i++) assert_int_equal(tg_measure(&t, w, srcs[i], NULL, o, &one[i]), 0);
    else if (tg_measure_batch(&t, w, srcs, n, o, bat, NULL, &err) != n)
      fail_msg("%s", err.msg);
    ms_workload_free(w);
  }
  sp_free(sp);
}

/* A batch holding a crashing and a hanging candidate: runtime_error (the
** signal) and timeout for exactly those, and each other candidate the
** status it gets alone -- after one that wrote its input (the inputs are
** written again) and one that left a wrong output (poisoned again). */
static void test_batch_faults(void **state) {
  (void)state;
  NEED_CL();
  ms_opts o;
  fast_opts(&o);
  o.timeout = 4;
  const char *const srcs[] = {right_src, crash_src, right_src, hang_src, writes_input_src,
                              right_src, wrong_src, syntax_src, right_src};
  static const ms_status want[] = {MS_OK, MS_RUNTIME_ERROR, MS_OK, MS_TIMEOUT, MS_WRONG_RESULT,
                                   MS_OK, MS_WRONG_RESULT, MS_COMPILE_ERROR, MS_OK};
  enum { NB = sizeof srcs / sizeof *srcs };
  ms_result one[NB], bat[NB];
  both_ways(&ok_reduction, "N=4096", srcs, NB, &o, one, bat);
  for (int i = 0; i < NB; i++) {
    if (bat[i].status != want[i] || one[i].status != want[i])
      fail_msg("candidate %d: %s \"%s\" in the batch, %s \"%s\" alone, want %s", i,
               ms_status_name(bat[i].status), bat[i].msg, ms_status_name(one[i].status),
               one[i].msg, ms_status_name(want[i]));
    assert_true(want[i] == MS_OK ? bat[i].t.n >= 3 && bat[i].t.median > 0 : bat[i].t.n == 0);
    if (want[i] != MS_TIMEOUT && want[i] != MS_RUNTIME_ERROR && want[i] != MS_COMPILE_ERROR)
      assert_string_equal(bat[i].msg, one[i].msg);   /* the same words */
  }
  assert_non_null(strstr(bat[7].msg, "undeclared_thing"));   /* (PoCL's log names a temporary file) */
  if (!strstr(bat[1].msg, "SIGSEGV") && !strstr(bat[1].msg, "SIGBUS")) fail_msg("%s", bat[1].msg);
  assert_non_null(strstr(bat[3].msg, "timeout: worker killed after"));
  assert_string_equal(bat[4].msg, "the candidate wrote to its input x");
}

/* A T1-style kernel in a batch: the reference computed once, an inout
** output (acc += ...) written again before each candidate (else the second
** right one would add twice), typed verification, limits. */
static void test_batch_typed(void **state) {
  (void)state;
  NEED_CL();
  ms_opts o;
  fast_opts(&o);
  char sub[96];
  snprintf(sub, sizeof sub, "%s/batch-typed", cache_dir);   /* test_typed_kernel edits its ref file */
  o.cache_dir = sub;
  const char *const srcs[] = {tk_right_src, tk_right_src, tk_wrong_src, tk_reqd_src, tk_right_src};
  static const ms_status want[] = {MS_OK, MS_OK, MS_WRONG_RESULT, MS_INVALID, MS_OK};
  enum { NB = sizeof srcs / sizeof *srcs };
  ms_result one[NB], bat[NB];
  both_ways(&tk_kernel, NULL, srcs, NB, &o, one, bat);
  for (int i = 0; i < NB; i++) {
    if (bat[i].status != want[i] || one[i].status != want[i] || strcmp(bat[i].msg, one[i].msg))
      fail_msg("candidate %d: %s \"%s\" in the batch, %s \"%s\" alone, want %s", i,
               ms_status_name(bat[i].status), bat[i].msg, ms_status_name(one[i].status),
               one[i].msg, ms_status_name(want[i]));
  }
}

/* The rows of a campaign's trials, "config status" sorted by config. */
static char *trial_statuses(const char *dbf) {
  sqlite3 *h;
  sqlite3_stmt *st;
  rt_str s = {0};
  assert_int_equal(sqlite3_open_v2(dbf, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h, "SELECT config, status FROM trials ORDER BY config", -1,
                                      &st, NULL), SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW)
    rt_str_printf(&s, "%s %s\n", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1));
  sqlite3_finalize(st);
  sqlite3_close(h);
  return s.s;
}

/* A brute-force campaign of the reduction (a slice of its space, 16
** configurations, the default among them) gives every configuration the
** same status measured in batches (--batch 8: the row's measure_batch) as
** one by one (--batch 1: a strategy asked for one proposal at a time is
** never prepared a batch). */
static void test_batch_campaign(void **state) {
  (void)state;
  NEED_CL();
  char path[PATH_MAX], space[96], dbs[2][96];
  json_error_t je;
  json_t *j = json_load_file(rt_project_path(ok_reduction.space, path, sizeof path), 0, &je);
  assert_non_null(j);
  static const char *const values[][2] = {{"wg", "[16, 64]"}, {"vec", "[1, 4]"},
                                          {"ilp", "[1, 2]"}, {"waves", "[4]"},
                                          {"order", "['strided']"}};
  json_t *tp = json_object_get(json_object_get(j, "ConfigurationSpace"), "TuningParameters");
  size_t i;
  json_t *par;
  json_array_foreach(tp, i, par)
    for (size_t v = 0; v < sizeof values / sizeof *values; v++)
      if (!strcmp(json_string_value(json_object_get(par, "Name")), values[v][0]))
        json_object_set_new(par, "Values", json_string(values[v][1]));
  snprintf(space, sizeof space, "%s-reduction-slice.json", cache_dir);
  assert_int_equal(json_dump_file(j, space, JSON_INDENT(1)), 0);
  json_decref(j);
  char *status[2];
  for (int k = 0; k < 2; k++) {
    snprintf(dbs[k], sizeof dbs[k], "%s-campaign-%d.db", cache_dir, k);
    tu_campaign_opts co = {.db_path = dbs[k], .target = "opencl:0.0", .kernel = "reduction",
                           .set = "N=100003", .space = space, .strategy = "exhaustive",
                           .budget = "100%", .seed = 1, .batch = k ? 1 : 8, .no_recheck = 1};
    fast_opts(&co.ms);
    tu_report rep;
    rt_err err = {0};
    if (tu_campaign(&co, &rep, &err)) fail_msg("%s", err.msg);
    assert_int_equal(rep.evaluations, 16);
    assert_int_equal(rep.measured, 16);
    tu_report_free(&rep);
    status[k] = trial_statuses(dbs[k]);
  }
  assert_string_equal(status[0], status[1]);
  assert_non_null(strstr(status[0], " ok\n"));
  for (int k = 0; k < 2; k++) {
    free(status[k]);
    static const char *const sfx[] = {"", "-wal", "-shm"};
    for (int s = 0; s < 3; s++) {
      snprintf(path, sizeof path, "%s%s", dbs[k], sfx[s]);
      unlink(path);
    }
  }
  unlink(space);
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
    cmocka_unit_test(test_typed_kernel),
    cmocka_unit_test(test_typed_bad_reference),
    cmocka_unit_test(test_reduction_verifies),
    cmocka_unit_test(test_transpose_verifies),
    cmocka_unit_test(test_batch_faults),
    cmocka_unit_test(test_batch_typed),
    cmocka_unit_test(test_batch_campaign),
    cmocka_unit_test(test_bench),
    cmocka_unit_test(test_cli_end_to_end),
    cmocka_unit_test(test_fingerprint_stable),
      cmocka_unit_test(test_absent),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  tk_rm_rf(cache_dir);   /* the test's own compile cache (made by this process) */
  return rc;
}
