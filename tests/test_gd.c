/*
** test_gd.c -- the CUDA libraries layer (targets/cuda/gd.c) and the plan
** parser (targets/cuda/gk_plan.c). NVRTC needs no GPU: a kernel compiles
** to a cubin that carries the ELF magic and the kernel's name, a syntax
** error is a compile error with NVRTC's log naming the line, a missing
** architecture is NVRTC's own failure. Without a device, asking for the
** device's properties fails with a message and returns (a child probes, so
** nothing hangs and this process never initialises the driver). Plans:
** every line kind parsed to the values written (options, symbols, entries
** and scalars included), checked against the buffers' kinds, and each
** malformed line rejected with its line number. NVRTC options reach the
** compiler (a user -std= replaces rooftune's, as the failed compile's
** options line shows); name expressions lowered to the Itanium names
** worked out by hand; the compile cache keeps an entry's lowered name
** beside its cubin.
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

#include "targets/cuda/gd.h"
#include "targets/cuda/gk.h"

static const char *axpy =
  "extern \"C\" __global__ void axpy(float *x, float *y) {\n"
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
  "  if (i < 1000) y[i] += 2.0f * x[i];\n"
  "}\n";

/* Skip the test, saying why, where NVRTC cannot be loaded. */
static void need_nvrtc(void) {
  const char *why;
  if (!gd_nvrtc_available(&why)) {
    printf("skipped: %s\n", why);
    skip();
  }
}

static void nvrtc_compiles(void **state) {
  (void)state;
  need_nvrtc();
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

/* NVRTC options: extra words reach the compiler (a macro the source
** needs), and a -std= among them replaces rooftune's -std=c++17. */
static const char std_src[] =
  "static_assert(FOO == 3, \"FOO from the options\");\n"
  "static_assert(__cplusplus == STD, \"the standard asked for\");\n"
  "extern \"C\" __global__ void k(int *x) { x[0] = FOO; }\n";

static void nvrtc_options(void **state) {
  (void)state;
  need_nvrtc();
  void *img = NULL;
  size_t n = 0;
  rt_str log = {0};
  rt_err err = {0};
  assert_int_equal(gd_nvrtc_compile(std_src, 9, 0, "-DFOO=3 -DSTD=201703L", &img, &n, &log, &err), 0);
  free(img);
  img = NULL;
  assert_int_equal(gd_nvrtc_compile(std_src, 9, 0, "-DFOO=3  -std=c++14 -DSTD=201402L", &img, &n,
                                    &log, &err), 0);
  free(img);
  img = NULL;
  assert_int_equal(gd_nvrtc_compile(std_src, 9, 0, "--std=c++20 -DFOO=3 -DSTD=202002L", &img, &n,
                                    &log, &err), 0);
  free(img);
  img = NULL;
  free(log.s);
  log = (rt_str){0};
  assert_int_equal(gd_nvrtc_compile(std_src, 9, 0, "-DSTD=201703L", &img, &n, &log, &err), 1);
  assert_null(img);
  if (!log.s || !strstr(log.s, "FOO")) fail_msg("%s", log.s ? log.s : "(no log)");
  assert_non_null(strstr(log.s, "nvrtc options: -std=c++17 -default-device "
                                "--gpu-architecture=sm_90 -DSTD=201703L\n"));
  free(log.s);
  /* the options a failed compile lists: the user's standard alone */
  log = (rt_str){0};
  assert_int_equal(gd_nvrtc_compile(std_src, 9, 0, "-std=c++14 -DSTD=201402L", &img, &n, &log,
                                    &err), 1);
  assert_non_null(strstr(log.s, "nvrtc options: -default-device --gpu-architecture=sm_90 "
                                "-std=c++14 -DSTD=201402L\n"));
  free(log.s);
}

/* Name expressions: templates and a namespace lowered to their Itanium
** names (worked out by hand; c++filt reads them back as
** void vadd<float, 4>(float const*, float const*, float*), ...), each
** found in the cubin. */
static const char tmpl_src[] =
  "template <typename T, int N>\n"
  "__global__ void vadd(const T *a, const T *b, T *c) {\n"
  "  int i = (blockIdx.x * blockDim.x + threadIdx.x) * N;\n"
  "  for (int j = 0; j < N; j++) c[i + j] = a[i + j] + b[i + j];\n"
  "}\n"
  "namespace ns { __global__ void scale(float *x, int k) { x[threadIdx.x] *= k; } }\n";

static void nvrtc_name_expressions(void **state) {
  (void)state;
  need_nvrtc();
  const char *exprs[3] = {"vadd<float, 4>", "vadd<double, 2>", "ns::scale"};
  const char *want[3] = {"_Z4vaddIfLi4EEvPKT_S2_PS0_", "_Z4vaddIdLi2EEvPKT_S2_PS0_",
                         "_ZN2ns5scaleEPfi"};
  char *low[3] = {0};
  void *img = NULL;
  size_t n = 0;
  rt_str log = {0};
  rt_err err = {0};
  assert_int_equal(gd_nvrtc_compile_names(tmpl_src, 9, 0, NULL, exprs, 3, &img, &n, low, &log,
                                          &err), 0);
  for (int i = 0; i < 3; i++) {
    assert_string_equal(low[i], want[i]);
    assert_non_null(memmem(img, n, want[i], strlen(want[i])));
    free(low[i]);
  }
  free(img);
  /* an expression naming nothing: a compile error, not a crash */
  const char *bad[1] = {"vadd<int, 1, 2>"};
  img = NULL;
  assert_int_equal(gd_nvrtc_compile_names(tmpl_src, 9, 0, NULL, bad, 1, &img, &n, low, &log,
                                          &err), 1);
  assert_null(img);
  free(log.s);
}

/* The compile cache of a plan with entries (no GPU: the architecture is
** given): the cubin and its .names file (the lowered names, one a line),
** found again (hit) with the names read back; a damaged names file makes
** it build again; the options line is part of the key. */
static void cubin_cache_with_entries(void **state) {
  (void)state;
  need_nvrtc();
  char dir[] = "/tmp/rt-gd-cache-XXXXXX";
  assert_non_null(mkdtemp(dir));
  rt_str src = {0};
  rt_str_printf(&src, "//@rk options -DWIDTH=4\n//@rk entry add4 vadd<float, WIDTH>\n"
                      "//@rk launch add4 8 1 1 64 1 1 0 b0 b1 b2\n%s", tmpl_src);
  gk_plan p;
  rt_err err = {0};
  assert_int_equal(gk_plan_parse(src.s, 3, &p, &err), 0);
  assert_string_equal(p.options, "-DWIDTH=4");
  assert_int_equal(p.nentry, 1);
  assert_string_equal(p.entry[0].expr, "vadd<float, WIDTH>");
  assert_int_equal(p.step[0].entry, 0);
  char path[4200], names[4300];
  int hit = -1;
  rt_str log = {0};
  if (gd_cubin_build(src.s, &p, 9, 0, dir, path, sizeof path, &hit, &log))
    fail_msg("%s", log.s ? log.s : "");
  assert_int_equal(hit, 0);
  assert_string_equal(p.entry[0].lowered, "_Z4vaddIfLi4EEvPKT_S2_PS0_");
  snprintf(names, sizeof names, "%.*snames", (int)strlen(path) - 5, path);
  FILE *f = fopen(names, "r");
  assert_non_null(f);
  char line[128] = "";
  assert_non_null(fgets(line, sizeof line, f));
  fclose(f);
  assert_string_equal(line, "_Z4vaddIfLi4EEvPKT_S2_PS0_\n");
  gk_plan q;
  assert_int_equal(gk_plan_parse(src.s, 3, &q, &err), 0);
  assert_int_equal(gd_cubin_build(src.s, &q, 9, 0, dir, path, sizeof path, &hit, &log), 0);
  assert_int_equal(hit, 1);
  assert_string_equal(q.entry[0].lowered, "_Z4vaddIfLi4EEvPKT_S2_PS0_");
  f = fopen(names, "w");
  assert_non_null(f);
  fclose(f);
  assert_int_equal(gk_plan_parse(src.s, 3, &q, &err), 0);
  assert_int_equal(gd_cubin_build(src.s, &q, 9, 0, dir, path, sizeof path, &hit, &log), 0);
  assert_int_equal(hit, 0);
  assert_string_equal(q.entry[0].lowered, "_Z4vaddIfLi4EEvPKT_S2_PS0_");
  char path2[4200];
  rt_str src2 = {0};
  rt_str_printf(&src2, "//@rk options -DWIDTH=2\n%s", strchr(src.s, '\n') + 1);
  assert_int_equal(gk_plan_parse(src2.s, 3, &q, &err), 0);
  assert_int_equal(gd_cubin_build(src2.s, &q, 9, 0, dir, path2, sizeof path2, &hit, &log), 0);
  assert_string_not_equal(path, path2);
  assert_string_equal(q.entry[0].lowered, "_Z4vaddIfLi2EEvPKT_S2_PS0_");
  free(src.s);
  free(src2.s);
  free(log.s);
  const char *rm[] = {"rm", "-rf", dir, NULL};
  rt_str out = {0};
  rt_capture((char *const *)rm, 1, 1024, &out);
  free(out.s);
}

/* A compile error is kept too: the same source again is a hit with the
** same log, without NVRTC (the .err file is what answers: doctored, its
** text comes back); the source fixed builds. */
static void compile_errors_cached(void **state) {
  (void)state;
  need_nvrtc();
  char dir[] = "/tmp/rt-gd-err-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *bad = "//@rk launch k 1 1 1 32 1 1 0 b0\n"
                    "extern \"C\" __global__ void k(float *x) { x[0] = undeclared_name; }\n";
  gk_plan p;
  rt_err err = {0};
  assert_int_equal(gk_plan_parse(bad, 1, &p, &err), 0);
  char path[4200], errs[4300];
  int hit = -1;
  rt_str log = {0}, log2 = {0};
  assert_int_equal(gd_cubin_build(bad, &p, 9, 0, dir, path, sizeof path, &hit, &log), 1);
  assert_int_equal(hit, 0);
  assert_non_null(strstr(log.s, "undeclared_name"));
  assert_int_equal(gd_cubin_build(bad, &p, 9, 0, dir, path, sizeof path, &hit, &log2), 1);
  assert_int_equal(hit, 1);
  assert_string_equal(log2.s, log.s);
  snprintf(errs, sizeof errs, "%.*serr", (int)strlen(path) - 5, path);
  FILE *f = fopen(errs, "w");
  assert_non_null(f);
  fputs("doctored log\n", f);
  fclose(f);
  free(log2.s);
  log2 = (rt_str){0};
  assert_int_equal(gd_cubin_build(bad, &p, 9, 0, dir, path, sizeof path, &hit, &log2), 1);
  assert_string_equal(log2.s, "doctored log\n");
  const char *good = "//@rk launch k 1 1 1 32 1 1 0 b0\n"
                     "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n";
  assert_int_equal(gk_plan_parse(good, 1, &p, &err), 0);
  assert_int_equal(gd_cubin_build(good, &p, 9, 0, dir, path, sizeof path, &hit, NULL), 0);
  assert_int_equal(hit, 0);
  free(log.s);
  free(log2.s);
  const char *rm[] = {"rm", "-rf", dir, NULL};
  rt_str out = {0};
  rt_capture((char *const *)rm, 1, 1024, &out);
  free(out.s);
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

/* With a device: the driver's PCI bus id (what NVML's handle is found by,
** gd_nvml.c) names a PCI device that sysfs lists. */
static void pci_bus_id_from_driver(void **state) {
  (void)state;
  gd_props p;
  rt_err err = {0};
  if (gd_props_get(0, &p, &err)) {
    printf("skipped: no CUDA device (%s)\n", err.msg);
    skip();
  }
  printf("cuda:0 is %s at PCI %s\n", p.name, p.pci_bus_id);
  unsigned dom, bus, dev, fn;
  char tail;
  assert_int_equal(sscanf(p.pci_bus_id, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail), 4);
  char path[96];
  snprintf(path, sizeof path, "/sys/bus/pci/devices/%04x:%02x:%02x.%x", dom, bus, dev, fn);
  if (access("/sys/bus/pci/devices", F_OK) == 0) assert_int_equal(access(path, F_OK), 0);
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

  /* the lines of T1 kernels: options, symbols, entries, scalars */
  const char *t1 =
    "//@rk options -DA=1   -use_fast_math\n"
    "//@rk symbol coeffs b3\n"
    "//@rk entry k_f vadd<float, 4>\n"
    "//@rk launch k_f 10 1 1 128 1 1 0 b0 s1 b12\n"
    "//@rk launch plain 1 1 1 32 1 1 0 s2\n";
  assert_int_equal(gk_plan_parse(t1, 13, &p, &err), 0);
  assert_string_equal(p.options, "-DA=1   -use_fast_math");
  assert_int_equal(p.nsym, 1);
  assert_string_equal(p.sym[0].name, "coeffs");
  assert_int_equal(p.sym[0].buf, 3);
  assert_int_equal(p.nentry, 1);
  assert_string_equal(p.entry[0].name, "k_f");
  assert_string_equal(p.entry[0].expr, "vadd<float, 4>");
  assert_int_equal(p.nsteps, 2);
  assert_int_equal(p.step[0].entry, 0);
  assert_int_equal(p.step[1].entry, -1);
  assert_int_equal(p.step[0].nargs, 3);
  assert_int_equal(p.step[0].arg[1], 1);
  assert_int_equal(p.step[0].how[1], GK_ARG_VALUE);
  assert_int_equal(p.step[0].arg[2], 12);
  assert_int_equal(p.step[0].how[2], GK_ARG_BUF);
  /* against the buffers' kinds */
  kn_buf b[13];
  memset(b, 0, sizeof b);
  for (int i = 0; i < 13; i++) b[i].name = "v";
  b[1] = (kn_buf){.name = "n", .n = 1, .kind = KN_SCALAR};
  b[2] = (kn_buf){.name = "m", .n = 1, .kind = KN_SCALAR, .elem = KN_I64};
  b[3] = (kn_buf){.name = "c", .n = 16, .kind = KN_SYMBOL};
  assert_int_equal(gk_plan_check(&p, b, 13, &err), 0);
  b[3].kind = KN_VECTOR;
  assert_int_equal(gk_plan_check(&p, b, 13, &err), -1);
  assert_string_equal(err.msg, "plan: symbol coeffs: b3 names buffer c, which is not a symbol");
  b[3].kind = KN_SYMBOL;
  b[12].kind = KN_SCALAR;
  assert_int_equal(gk_plan_check(&p, b, 13, &err), -1);
  assert_string_equal(err.msg, "plan: step 1 (launch k_f), argument 3: b12 names buffer v, which "
                               "is not a vector");
  b[12].kind = KN_VECTOR;
  b[1].kind = KN_VECTOR;
  assert_int_equal(gk_plan_check(&p, b, 13, &err), -1);
  assert_string_equal(err.msg, "plan: step 1 (launch k_f), argument 2: s1 names buffer n, which "
                               "is not a scalar");
  static const struct { const char *src; const char *msg; } bad2[] = {
    {"//@rk options -DA\n//@rk options -DB\n//@rk launch k 1 1 1 1 1 1 0\n",
     "plan line 2: expected one 'options OPT...'"},
    {"//@rk options\n//@rk launch k 1 1 1 1 1 1 0\n", "plan line 1: expected one 'options"},
    {"//@rk symbol c\n//@rk launch k 1 1 1 1 1 1 0\n", "plan line 1: expected 'symbol NAME bN'"},
    {"//@rk symbol c s1\n//@rk launch k 1 1 1 1 1 1 0\n", "plan line 1: expected 'symbol"},
    {"//@rk symbol c b1 b2\n//@rk launch k 1 1 1 1 1 1 0\n", "plan line 1: expected 'symbol"},
    {"//@rk entry k\n//@rk launch k 1 1 1 1 1 1 0\n", "plan line 1: expected 'entry NAME EXPR'"},
    {"//@rk entry k f<1>\n//@rk entry k f<2>\n//@rk launch k 1 1 1 1 1 1 0\n",
     "plan line 2: expected 'entry NAME EXPR' (a new NAME"},
    {"//@rk entry j f<1>\n//@rk launch k 1 1 1 1 1 1 0\n", "entry j (f<1>) is launched by no"},
    {"//@rk launch k 1 1 1 1 1 1 0 l0\n", "plan line 1: expected 'launch"},   /* OpenCL's */
    {"//@rk launch k 1 1 1 1 1 1 0 b01\n", "plan line 1: expected 'launch"},
    {"//@rk zero s0\n//@rk launch k 1 1 1 1 1 1 0\n", "plan line 1: expected 'zero bN'"},
  };
  for (size_t i = 0; i < sizeof bad2 / sizeof *bad2; i++) {
    rt_err e = {0};
    assert_int_equal(gk_plan_parse(bad2[i].src, 3, &p, &e), -1);
    if (!strstr(e.msg, bad2[i].msg)) fail_msg("case %zu: '%s' lacks '%s'", i, e.msg, bad2[i].msg);
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

/* ---- What ptxas decided, read from the cubin, against ptxas -v ---- */

static const char *spill_src =
  "extern \"C\" __global__ void __launch_bounds__(1024) big(const float *a, float *c, int n) {\n"
  "  float acc[96];\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < 96; i++) acc[i] = a[threadIdx.x + i * n];\n"
  "  for (int k = 0; k < n; k++) {\n"
  "    #pragma unroll\n"
  "    for (int i = 0; i < 96; i++) acc[i] = acc[i] * acc[(i + 7) % 96] + a[k + i];\n"
  "  }\n"
  "  float s = 0;\n"
  "  #pragma unroll\n"
  "  for (int i = 0; i < 96; i++) s += acc[i];\n"
  "  c[threadIdx.x] = s;\n"
  "}\n"
  "extern \"C\" __global__ void small(const float *a, float *c) { c[threadIdx.x] = 2 * a[threadIdx.x]; }\n";

/* ptxas -v's figure for kernel in its output: "Used N registers" (what
** "regs") or "N bytes stack frame" (what "frame"), or -1. */
static long ptxas_figure(const char *out, const char *kernel, const char *what) {
  char head[128];
  snprintf(head, sizeof head, "Function properties for %s\n", kernel);
  const char *p = strstr(out, head);
  if (!p) return -1;
  p += strlen(head);
  long v = -1;
  const char *frame = strstr(p, "bytes stack frame"), *used = strstr(p, "Used ");
  if (!strcmp(what, "frame") && frame) {
    const char *q = frame;
    while (q > p && q[-1] == ' ') q--;
    while (q > p && q[-1] >= '0' && q[-1] <= '9') q--;
    v = strtol(q, NULL, 10);
  } else if (!strcmp(what, "regs") && used) {
    v = strtol(used + 5, NULL, 10);
  }
  return v;
}

static void cubin_resources_match_ptxas(void **state) {
  (void)state;
  need_nvrtc();
  char dir[] = "/tmp/rt_cubin_XXXXXX", cu[64], cubin[64];
  assert_non_null(mkdtemp(dir));
  snprintf(cu, sizeof cu, "%s/k.cu", dir);
  snprintf(cubin, sizeof cubin, "%s/k.cubin", dir);
  FILE *f = fopen(cu, "w");
  assert_non_null(f);
  fputs(spill_src, f);
  fclose(f);
  char *argv[] = {"nvcc", "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", cubin, cu, NULL};
  rt_str out = {0};
  if (rt_capture(argv, 1, 1 << 20, &out) != 0 || !out.s || !strstr(out.s, "Used ")) {
    printf("skipped: nvcc -Xptxas -v did not run here\n");
    free(out.s);
    skip();
  }
  /* nvcc's cubin read here, against ptxas's own report of it */
  f = fopen(cubin, "rb");
  assert_non_null(f);
  static unsigned char img[1 << 20];
  size_t n = fread(img, 1, sizeof img, f);
  fclose(f);
  const char *names[] = {"big", "small"};
  for (int i = 0; i < 2; i++) {
    gd_res r;
    rt_err err = {0};
    assert_int_equal(gd_cubin_resources(img, n, names[i], &r, &err), 0);
    printf("%s: cubin %d registers, %ld bytes frame; ptxas %ld, %ld\n", names[i], r.regs,
           r.frame, ptxas_figure(out.s, names[i], "regs"), ptxas_figure(out.s, names[i], "frame"));
    assert_int_equal(r.regs, ptxas_figure(out.s, names[i], "regs"));
    assert_int_equal(r.frame, ptxas_figure(out.s, names[i], "frame"));
  }
  /* the spilling kernel: launch bounds of 1024 threads cap it at 64
  ** registers, the rest in its frame */
  gd_res big;
  rt_err err = {0};
  assert_int_equal(gd_cubin_resources(img, n, "big", &big, &err), 0);
  assert_int_equal(big.regs, 64);
  assert_true(big.frame > 0);
  assert_int_equal(big.max_threads, 1024);
  /* NVRTC's cubin of the same source says the same */
  void *nimg = NULL;
  size_t nn = 0;
  rt_str log = {0};
  assert_int_equal(gd_nvrtc_compile(spill_src, 9, 0, NULL, &nimg, &nn, &log, &err), 0);
  gd_res nb;
  assert_int_equal(gd_cubin_resources(nimg, nn, "big", &nb, &err), 0);
  assert_int_equal(nb.regs, big.regs);
  assert_int_equal(nb.frame, big.frame);
  /* an unknown kernel and a truncated image are errors, never a crash */
  assert_int_equal(gd_cubin_resources(nimg, nn, "nosuch", &nb, &err), -1);
  assert_non_null(strstr(err.msg, "nosuch"));
  for (size_t cut = 0; cut < nn; cut += nn / 97 + 1)
    (void)gd_cubin_resources(nimg, cut, "big", &nb, &err);
  free(nimg);
  free(log.s);
  free(out.s);
  unlink(cu), unlink(cubin), rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(nvrtc_compiles),
    cmocka_unit_test(nvrtc_options),
    cmocka_unit_test(nvrtc_name_expressions),
    cmocka_unit_test(cubin_cache_with_entries),
    cmocka_unit_test(compile_errors_cached),
    cmocka_unit_test(no_device_is_an_error),
    cmocka_unit_test(pci_bus_id_from_driver),
    cmocka_unit_test(target_names),
    cmocka_unit_test(plan_parses),
    cmocka_unit_test(cubin_resources_match_ptxas),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
