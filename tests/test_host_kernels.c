/*
** test_host_kernels.c -- the gemm, conv2d, stencil, transpose and
** reduction host kernels end to end: for workloads with odd sizes (1, primes, sizes below
** the tiles), the default configuration and a seeded uniform sample of
** each space are generated, compiled with the system compiler, run on
** inputs in [-1, 1] and checked against the kernel's reference with the
** error bound of hk.h invariant 3; a result perturbed by a relative 1e-2
** (and, for the reduction, one missing a term) must fail that bound. Also
** the flop and byte formulas on hand-counted cases.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "search_spaces/sp.h"
#include "targets/host/hk.h"
#include "tk_run.h"
#include "tk_space.h"

#define SAMPLES 8

/* ---- Build and run (the harness, measure/ms.h, will take this over) ---- */

/* Compile src into a shared object, run its rk_run on bufs once. 0 on
** success; -1 with the reason (compiler output excerpt) in why. libgomp is
** pinned: its idle worker threads outlive the kernel's dlclose. */
static int build_and_run(const char *src, float *const *bufs, char *why, size_t cap) {
  static void *gomp;
  if (!gomp && !(gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_GLOBAL)))
    return snprintf(why, cap, "libgomp: %s", dlerror()), -1;
  char dir[] = "/tmp/rooftune_hk_XXXXXX", c[64], so[64];
  if (!mkdtemp(dir)) return snprintf(why, cap, "mkdtemp failed"), -1;
  snprintf(c, sizeof c, "%s/k.c", dir);
  snprintf(so, sizeof so, "%s/k.so", dir);
  FILE *f = fopen(c, "w");
  fputs(src, f);
  fclose(f);
  int rc = -1;   /* when the compiler fails, why holds its messages */
  if (!tk_run((const char *[]){"cc", "-O3", "-march=native", "-fopenmp", "-fPIC", "-shared", "-o", so, c, NULL},
              &(tk_io){.out = why, .cap = cap, .both = 1})) {
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    int (*run)(float *const *) = h ? (int (*)(float *const *))dlsym(h, "rk_run") : NULL;
    if (!run) snprintf(why, cap, "dlopen/dlsym: %s", dlerror());
    else if ((rc = run(bufs)) != 0) snprintf(why, cap, "rk_run returned %d", rc);
    if (h) dlclose(h);
  }
  unlink(c), unlink(so), rmdir(dir);
  return rc;
}

/* ---- Checking ---- */

/* max|out - ref| / max(max|ref|, 1e-30) over n elements (NaN: infinite). */
static double rel_err(const float *out, const float *ref, int64_t n) {
  double e = 0, m = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)out[i] - ref[i]);
    e = d <= e ? e : isnan(d) ? INFINITY : d;
    m = fmax(m, fabs(ref[i]));
  }
  return e / fmax(m, 1e-30);
}

/* A workload's buffers: inputs filled from rng in [-1, 1], outputs NaN
** (an element a schedule forgets to write then fails). */
typedef struct bufset {
  int n;
  kn_buf b[KN_MAXBUF];
  float *p[KN_MAXBUF];
} bufset;

static void bufs_alloc(bufset *s, const kn_kernel *k, const kn_problem *pb) {
  s->n = k->buffers(pb, s->b);
  for (int i = 0; i < s->n; i++) {
    assert_true(s->b[i].n >= 1);
    s->p[i] = malloc((size_t)s->b[i].n * sizeof(float));
  }
}

static void bufs_reset_outputs(bufset *s) {
  for (int i = 0; i < s->n; i++)
    if (s->b[i].out)
      for (int64_t j = 0; j < s->b[i].n; j++) s->p[i][j] = NAN;
}

static void bufs_free(bufset *s) {
  for (int i = 0; i < s->n; i++) free(s->p[i]);
}

/* Run every test schedule of kernel k on workload set (VAR=VALUE,...):
** the default (which must be valid) and up to SAMPLES distinct samples.
** Each must meet the bound; the last result, perturbed, must not. Returns
** the number of schedules run. */
static int check_workload(const kn_kernel *k, const char *set, gsl_rng *rng) {
  sp_space *sp = load_space(k, set);
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  int np = sp_nparams(sp);
  rt_count count = sp_count(sp);
  int ns = count < SAMPLES ? (int)count : SAMPLES;
  int *cfgs = malloc((size_t)(ns + 1) * (size_t)np * sizeof *cfgs);
  int failed;
  assert_int_equal(sp_default_config(sp, cfgs), 1);
  if (!sp_valid(sp, cfgs, &failed))
    fail_msg("%s %s: default configuration fails `%s`", k->name, set,
             sp_cond_text(sp, failed));
  rt_err err = {0};
  if (sp_sample(sp, rng, ns, 1, cfgs + np, &err)) fail_msg("%s", err.msg);

  bufset run, ref;   /* the schedule's buffers, the reference's */
  bufs_alloc(&run, k, &pb);
  bufs_alloc(&ref, k, &pb);
  for (int i = 0; i < run.n; i++)
    if (!run.b[i].out)
      for (int64_t j = 0; j < run.b[i].n; j++)
        run.p[i][j] = ref.p[i][j] = (float)(2 * gsl_rng_uniform(rng) - 1);
  k->reference(&pb, ref.p);
  double tol = k->tolerance(&pb);
  assert_true(tol >= 0 && tol < 1e-2);

  char why[2048];
  for (int c = 0; c <= ns; c++) {
    char *src = k->codegen(&pb, sp, cfgs + (size_t)c * np);
    bufs_reset_outputs(&run);
    if (build_and_run(src, run.p, why, sizeof why)) {
      char *js = sp_config_json(sp, cfgs + (size_t)c * np);
      fail_msg("%s %s %s: %s\n%s", k->name, set, js, why, src);
    }
    free(src);
    for (int i = 0; i < run.n; i++)
      if (run.b[i].out) {
        double e = rel_err(run.p[i], ref.p[i], run.b[i].n);
        if (!(e <= tol)) {
          char *js = sp_config_json(sp, cfgs + (size_t)c * np);
          fail_msg("%s %s %s: buffer %s error %g > tolerance %g", k->name, set, js,
                   run.b[i].name, e, tol);
        }
      }
  }
  /* the bound is not vacuous: a relative 1e-2 error at the largest element */
  for (int i = 0; i < run.n; i++)
    if (run.b[i].out) {
      int64_t big = 0;
      for (int64_t j = 0; j < run.b[i].n; j++)
        if (fabsf(ref.p[i][j]) > fabsf(ref.p[i][big])) big = j;
      run.p[i][big] += 1e-2f * ref.p[i][big];
      assert_false(rel_err(run.p[i], ref.p[i], run.b[i].n) <= tol);
    }
  bufs_free(&run);
  bufs_free(&ref);
  free(cfgs);
  sp_free(sp);
  return ns + 1;
}

static void check_kernel(const char *name, const char *const *sets) {
  const kn_kernel *k = hk_find(name);
  assert_non_null(k);
  assert_string_equal(k->name, name);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 20261129);
  for (int w = 0; sets[w]; w++) assert_true(check_workload(k, sets[w], rng) >= 2);
  gsl_rng_free(rng);
}

/* ---- The kernels ---- */

static void test_gemm(void **state) {
  (void)state;
  static const char *const sets[] = {
    "M=1,N=1,K=1", "M=7,N=13,K=97", "M=97,N=101,K=13", "M=31,N=17,K=1",
    "M=130,N=17,K=300", "M=64,N=48,K=33,threads_max=3", NULL,
  };
  check_kernel("gemm", sets);
}

static void test_reduction(void **state) {
  (void)state;
  static const char *const sets[] = {
    "N=1", "N=7", "N=31", "N=1000", "N=65537", "N=300007,threads_max=3", NULL,
  };
  check_kernel("reduction", sets);
}

/* The tolerance rejects a sum that misses one term of magnitude >= 0.5,
** at the sizes the documented bound claims (N up to ~10^5). */
static void test_reduction_missing_term(void **state) {
  (void)state;
  const kn_kernel *k = hk_find("reduction");
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 7);
  static const int64_t ns[] = {2, 13, 1000, 100000};
  for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
    char set[32];
    snprintf(set, sizeof set, "N=%lld", (long long)ns[t]);
    sp_space *sp = load_space(k, set);
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    float *x = malloc((size_t)ns[t] * sizeof *x), ref = 0, miss = 0;
    float *bufs[2] = {x, &ref}, *missing[2] = {x, &miss};
    for (int64_t i = 0; i < ns[t]; i++) x[i] = (float)(2 * gsl_rng_uniform(rng) - 1);
    x[ns[t] / 2] = 0.5f;
    k->reference(&pb, bufs);
    x[ns[t] / 2] = 0;
    k->reference(&pb, missing);
    assert_false(rel_err(&miss, &ref, 1) <= k->tolerance(&pb));
    free(x);
    sp_free(sp);
  }
  gsl_rng_free(rng);
}

static void test_transpose(void **state) {
  (void)state;
  static const char *const sets[] = {
    "M=1,N=1", "M=7,N=13", "M=31,N=5", "M=1,N=37", "M=64,N=64", "M=257,N=129", NULL,
  };
  check_kernel("transpose", sets);
}

static void test_stencil(void **state) {
  (void)state;
  static const char *const sets[] = {
    "NX=1,NY=1,STEPS=1", "NX=7,NY=13,STEPS=3", "NX=31,NY=5,STEPS=8",
    "NX=13,NY=31,STEPS=9", "NX=64,NY=100,STEPS=16", "NX=40,NY=300,STEPS=17", NULL,
  };
  check_kernel("stencil", sets);
}

static void test_conv2d(void **state) {
  (void)state;
  static const char *const sets[] = {
    "N=1,H=1,W=1,C=1,K=1,R=1,S=1",
    "N=1,H=1,W=1,C=1,K=1,R=1,S=1,layout='nhwc'",
    "N=2,H=7,W=13,C=3,K=5,R=3,S=3,pad=1",
    "N=1,H=13,W=7,C=7,K=17,R=3,S=2,stride=2,layout='nhwc'",
    "N=1,H=31,W=31,C=13,K=20,R=5,S=5,pad=2,layout='nhwc'",
    "N=3,H=9,W=11,C=40,K=33,R=1,S=1,stride=3,pad=1",
    "N=1,H=2,W=3,C=5,K=2,R=4,S=5,pad=1",
    NULL,
  };
  check_kernel("conv2d", sets);
}

/* ---- Counts ---- */

/* flops, min_bytes and the buffer list against hand counts. */
static void test_counts(void **state) {
  (void)state;
  static const struct {
    const kn_kernel *k;
    const char *set;
    double flops, bytes;
    int nbuf;
    int64_t nout;   /* elements of the (last, only) output buffer */
  } cases[] = {
    /* P = (7+2-3)/2+1 = 4, Q = (13+2-3)/2+1 = 7 */
    {&hk_conv2d, "N=2,H=7,W=13,C=3,K=5,R=3,S=3,pad=1,stride=2",
     2.0 * 2 * 5 * 4 * 7 * 3 * 3 * 3, 4.0 * (2 * 3 * 7 * 13 + 5 * 3 * 9 + 2 * 5 * 4 * 7),
     3, 2 * 5 * 4 * 7},
    {&hk_gemm, "M=7,N=13,K=5", 2.0 * 7 * 13 * 5, 4.0 * (7 * 5 + 5 * 13 + 2 * 7 * 13), 3, 7 * 13},
    {&hk_stencil, "NX=7,NY=13,STEPS=3", 6.0 * 7 * 13 * 3, 8.0 * 9 * 15, 2, 9 * 15},
    {&hk_transpose, "M=7,N=13", 0, 8.0 * 7 * 13, 2, 7 * 13},
    {&hk_reduction, "N=31", 30, 4.0 * 32, 2, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    sp_space *sp = load_space(cases[i].k, cases[i].set);
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    kn_buf b[KN_MAXBUF];
    assert_true(cases[i].k->flops(&pb) == cases[i].flops);
    assert_true(cases[i].k->min_bytes(&pb) == cases[i].bytes);
    assert_int_equal(cases[i].k->buffers(&pb, b), cases[i].nbuf);
    for (int j = 0; j < cases[i].nbuf; j++) assert_int_equal(b[j].out, j == cases[i].nbuf - 1);
    assert_true(b[cases[i].nbuf - 1].n == cases[i].nout);
    sp_free(sp);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_gemm),
    cmocka_unit_test(test_reduction),
    cmocka_unit_test(test_reduction_missing_term),
    cmocka_unit_test(test_transpose),
    cmocka_unit_test(test_stencil),
    cmocka_unit_test(test_conv2d),
    cmocka_unit_test(test_counts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
