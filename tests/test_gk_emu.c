/*
** test_gk_emu.c -- what the CUDA code generators' kernels COMPUTE, checked
** without a GPU by the tests' CPU emulator (tests/cuda_emu/emu_run.h): for
** every kernel of gk_kernels[] (gemm, reduction, transpose, stencil) and a
** few small workloads (odd sizes, tiny ones, edges in every dimension),
** the default schedule and a deterministic selection of sampled valid
** schedules (a seeded sp_sample pool, from which a greedy pass first takes
** schedules covering every value of the kernel's important parameters
** that the pool holds, then fills up in pool order), and the kernel's
** device reference, run on inputs of pseudo-random values in [-1, 1] (GSL
** mt19937 seed 42, as measure/ms_worker.c) with outputs poisoned (NaN), in
** both thread orders (emu_opts.reverse: a missing barrier shows in one of
** them; cheap, the compiled source is reused), are compared with the
** kernel's host reference (kn_kernel.reference) within its tolerance
** (hk.h invariant 3: max|out-ref| <= tol * max(max|ref|, 1e-30)). Every
** value of the important parameters must have been checked on some
** workload. A failure names the kernel, workload, schedule (JSON) and the
** worst element; all failures of a kernel are listed before it fails.
** Prints how many schedules were run. Skipped ("skipped: ...") where the
** emulator cannot run (emu_available: no g++, e.g. a device machine).
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
#include <time.h>

#include "search_spaces/sp.h"
#include "targets/cuda/gk.h"
#include "tests/cuda_emu/emu_run.h"
#include "tk_space.h"

#define POOL 256         /* schedules sampled per workload to select from
                         ** (64 missed gemm's GROUP_M = 16, 2.5% of the
                         ** M=130 space, about one draw in five) */
#define NSEL 10          /* sampled schedules run per workload (+ default);
                         ** $TEST_GK_EMU_SAMPLES overrides it for a deeper
                         ** sweep (the pool grows to twice as many) */
#define SEED 20260707u   /* the pool's generator seed, per workload */
#define MAXIMP 6         /* important parameters per kernel, at most */
#define MAXVAL 16        /* values per important parameter, at most */

static const char *emu_why;  /* set in main: why the emulator cannot run */
static int total_runs, total_schedules;
static int nsel = NSEL;     /* NSEL or $TEST_GK_EMU_SAMPLES (main) */

typedef struct workload {
  const char *set;   /* problem bindings */
  int both_orders;   /* also run every schedule in reverse thread order
                     ** (all do: ~2x the run time, no new compiles) */
} workload;

typedef struct kernel_case {
  const kn_kernel *k;
  const char *important[MAXIMP];   /* NULL-terminated */
  workload w[6];                   /* terminated by a NULL set */
} kernel_case;

/* The buffers of one workload: inputs filled as the harness fills them,
** the host reference's outputs, and outputs to run into. */
typedef struct bufs {
  int n;
  kn_buf b[KN_MAXBUF];
  float *data[KN_MAXBUF];   /* inputs; outputs for the run under test */
  float *ref[KN_MAXBUF];    /* inputs shared; host reference outputs */
} bufs;

static void bufs_init(bufs *w, const kn_kernel *k, const kn_problem *pb) {
  w->n = k->buffers(pb, w->b);
  assert_true(w->n >= 1 && w->n <= KN_MAXBUF);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 42);
  for (int i = 0; i < w->n; i++) {
    size_t n = (size_t)w->b[i].n;
    w->data[i] = malloc(n * sizeof(float));
    assert_non_null(w->data[i]);
    if (w->b[i].out) {
      w->ref[i] = malloc(n * sizeof(float));
      assert_non_null(w->ref[i]);
      for (size_t j = 0; j < n; j++) w->ref[i][j] = NAN;
    } else {
      w->ref[i] = w->data[i];
      for (size_t j = 0; j < n; j++) w->data[i][j] = (float)(2.0 * gsl_rng_uniform(rng) - 1.0);
    }
  }
  gsl_rng_free(rng);
  k->reference(pb, w->ref);
}

static void bufs_free(bufs *w) {
  for (int i = 0; i < w->n; i++) {
    if (w->b[i].out) free(w->ref[i]);
    free(w->data[i]);
  }
}

/* Run src on w's inputs (outputs poisoned first) and compare every output
** with the host reference within tol. 0 if correct; else 1 with the error
** (emulator message, or the worst element) printed after what. */
static int run_check(const char *src, bufs *w, double tol, int reverse, const char *what) {
  for (int i = 0; i < w->n; i++)
    if (w->b[i].out)
      for (int64_t j = 0; j < w->b[i].n; j++) w->data[i][j] = NAN;
  emu_opts o = {.reverse = reverse};
  rt_err err = {0};
  total_runs++;
  if (emu_run_src(src, w->b, w->n, w->data, &o, &err)) {
    print_error("%s%s: emulator: %s\n", what, reverse ? " (reverse order)" : "", err.msg);
    return 1;
  }
  int bad = 0;
  for (int i = 0; i < w->n; i++) {
    if (!w->b[i].out) continue;
    double maxref = 0, maxerr = 0;
    int64_t worst = -1;
    for (int64_t j = 0; j < w->b[i].n; j++) {
      double r = w->ref[i][j], o2 = w->data[i][j];
      maxref = fmax(maxref, fabs(r));
      double e = isnan(o2) || isnan(r) ? INFINITY : fabs(o2 - r);
      if (worst < 0 || e > maxerr) maxerr = e, worst = j;
    }
    double bound = tol * fmax(maxref, 1e-30);
    if (!(maxerr <= bound)) {
      print_error("%s%s: output %s[%lld] = %.9g, reference %.9g (|err| %.3g > %.3g = tol %.3g * "
                  "max|ref| %.3g)\n",
                  what, reverse ? " (reverse order)" : "", w->b[i].name, (long long)worst,
                  (double)w->data[i][worst], (double)w->ref[i][worst], maxerr, bound, tol, maxref);
      bad = 1;
    }
  }
  return bad;
}

/* Index of important parameter name in sp (fails if the space lacks it). */
static int param(const sp_space *sp, const char *name) {
  int p = sp_param_index(sp, name);
  if (p < 0) fail_msg("space %s has no parameter %s", sp_name(sp), name);
  assert_true(sp_nvalues(sp, p) <= MAXVAL);
  return p;
}

/* How many (important parameter, value) pairs of cfg are not yet in cov. */
static int new_pairs(const int *imp, int nimp, const int *cfg, unsigned char cov[][MAXVAL]) {
  int n = 0;
  for (int i = 0; i < nimp; i++) n += !cov[i][cfg[imp[i]]];
  return n;
}
static void add_pairs(const int *imp, int nimp, const int *cfg, unsigned char cov[][MAXVAL]) {
  for (int i = 0; i < nimp; i++) cov[i][cfg[imp[i]]] = 1;
}

/* The schedules of a workload: the default first (if valid), then up to
** nsel (nsel + 1 without the default) from a
** seeded pool of distinct valid samples: greedily the one adding the most
** uncovered important values (first in pool order on ties) while any adds
** one, then the rest of the pool in order. Returns how many (>= 1) into
** *out (malloc'ed, n * nparams); *has_default: whether the first is the
** default. */
static int select_schedules(sp_space *sp, const int *imp, int nimp, int **out, int *has_default) {
  int np = sp_nparams(sp);
  rt_count count = sp_count(sp);
  assert_true(count > 0);
  int want = nsel * 2 > POOL ? nsel * 2 : POOL;
  int npool = count < (rt_count)want ? (int)count : want;
  int *pool = malloc((size_t)npool * (size_t)np * sizeof *pool);
  int *sel = malloc((size_t)(nsel + 1) * (size_t)np * sizeof *sel);
  char *used = calloc((size_t)npool, 1);
  unsigned char cov[MAXIMP][MAXVAL] = {{0}};
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, SEED);
  rt_err err = {0};
  if (sp_sample(sp, rng, npool, 1, pool, &err)) fail_msg("%s: %s", sp_name(sp), err.msg);
  gsl_rng_free(rng);
  int n = 0;
  assert_int_equal(sp_default_config(sp, sel), 1);
  int dflt = sp_valid(sp, sel, NULL);   /* invalid: e.g. more steps than a plan holds */
  if (dflt) {
    n = 1;
    add_pairs(imp, nimp, sel, cov);
    for (int c = 0; c < npool; c++)   /* the default is run already */
      if (!memcmp(pool + (size_t)c * np, sel, (size_t)np * sizeof *sel)) used[c] = 1;
  }
  while (n < nsel + 1) {
    int best = -1, bestn = 0;
    for (int c = 0; c < npool; c++) {
      if (used[c]) continue;
      int a = new_pairs(imp, nimp, pool + (size_t)c * np, cov);
      if (a > bestn) best = c, bestn = a;
    }
    if (best < 0)
      for (int c = 0; c < npool && best < 0; c++)
        if (!used[c]) best = c;
    if (best < 0) break;
    used[best] = 1;
    memcpy(sel + (size_t)n * np, pool + (size_t)best * np, (size_t)np * sizeof *sel);
    add_pairs(imp, nimp, pool + (size_t)best * np, cov);
    n++;
  }
  free(used);
  free(pool);
  *out = sel;
  *has_default = dflt;
  return n;
}

/* The values a parameter took over all workloads (their lists may depend
** on the problem), by text, and whether a schedule ran with each. */
typedef struct cover {
  int n;
  char text[2 * MAXVAL][32];
  unsigned char ran[2 * MAXVAL];
} cover;

static void cover_add(cover *c, const sx_value *v, int ran) {
  char t[32];
  sx_repr(v, t, sizeof t);
  int i = 0;
  while (i < c->n && strcmp(c->text[i], t)) i++;
  if (i == c->n) {
    assert_true(c->n < 2 * MAXVAL);
    snprintf(c->text[c->n++], sizeof c->text[0], "%s", t);
  }
  c->ran[i] |= (unsigned char)ran;
}

static void check_kernel(const kernel_case *kc) {
  if (emu_why) {
    printf("skipped: %s on the CUDA emulator: %s\n", kc->k->name, emu_why);
    skip();
  }
  const kn_kernel *k = kc->k;
  assert_non_null(k->device_reference);
  int nimp = 0;
  while (nimp < MAXIMP && kc->important[nimp]) nimp++;
  cover all[MAXIMP] = {{0}};   /* each important parameter's values, all workloads */
  int failures = 0, schedules = 0, runs0 = total_runs;
  double t0 = rt_now();
  for (int wi = 0; kc->w[wi].set; wi++) {
    const workload *wl = &kc->w[wi];
    double tw = rt_now();
    sp_space *sp = load_space(k, wl->set);
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    int np = sp_nparams(sp), imp[MAXIMP];
    for (int i = 0; i < nimp; i++) {
      imp[i] = param(sp, kc->important[i]);
      for (int v = 0; v < sp_nvalues(sp, imp[i]); v++) cover_add(&all[i], sp_value(sp, imp[i], v), 0);
    }
    bufs w;
    bufs_init(&w, k, &pb);
    double tol = k->tolerance(&pb);
    char what[1024];
    /* the device reference */
    char *ref = k->device_reference(&pb);
    snprintf(what, sizeof what, "%s %s device reference", k->name, wl->set);
    for (int rev = 0; rev <= wl->both_orders; rev++) failures += run_check(ref, &w, tol, rev, what);
    free(ref);
    int *cfgs, dflt;
    int n = select_schedules(sp, imp, nimp, &cfgs, &dflt);
    for (int c = 0; c < n; c++) {
      const int *cfg = cfgs + (size_t)c * np;
      char *js = sp_config_json(sp, cfg);
      snprintf(what, sizeof what, "%s %s %s", k->name, wl->set, js);
      char *src = k->codegen(&pb, sp, cfg);
      int bad = 0;
      for (int rev = 0; rev <= wl->both_orders; rev++) bad |= run_check(src, &w, tol, rev, what);
      failures += bad;
      for (int i = 0; i < nimp; i++) cover_add(&all[i], sp_value(sp, imp[i], cfg[imp[i]]), 1);
      free(src);
      free(js);
    }
    schedules += n;
    printf("  %s %s: %d schedules (%s) + device reference%s, %.1f s\n", k->name, wl->set, n,
           dflt ? "the default first" : "the default is invalid",
           wl->both_orders ? ", both thread orders" : "", rt_now() - tw);
    free(cfgs);
    bufs_free(&w);
    sp_free(sp);
  }
  /* every value of every important parameter ran on some workload */
  for (int i = 0; i < nimp; i++)
    for (int v = 0; v < all[i].n; v++)
      if (!all[i].ran[v]) {
        print_error("%s: no workload ran a schedule with %s = %s\n", k->name, kc->important[i],
                    all[i].text[v]);
        failures++;
      }
  total_schedules += schedules;
  printf("%s: %d schedules checked (%d runs), %.1f s, %d failures\n", k->name, schedules,
         total_runs - runs0, rt_now() - t0, failures);
  if (failures) fail_msg("%s: %d wrong schedules or uncovered values (listed above)", k->name,
                         failures);
}

/* The kernels and their workloads: odd sizes, tiny ones, edges in every
** dimension; for every value of the important parameters some workload
** admits it (STEPS=9: temporal blocking up to tb = 8). STEPS=70, more
** than a plan's GK_MAXSTEP (64) launches: the default (tb = 1) is invalid,
** the device reference is one block running every step. */
static const kernel_case cases[] = {
  {&gk_gemm, {"STAGES", "SPLITK", "VEC", "GROUP_M", "BK", NULL},
   {{"M=1,N=1,K=1", 1}, {"M=37,N=53,K=29", 1}, {"M=130,N=70,K=300", 1}, {NULL, 0}}},
  {&gk_reduction, {"combine", "block", "grid", "vec", "threads", NULL},
   {{"N=1", 1}, {"N=1000", 1}, {"N=1000003", 1}, {NULL, 0}}},
  {&gk_transpose, {"tiles", "pad", "tile", "vr", "vw", NULL},
   {{"M=7,N=13", 1}, {"M=257,N=129", 1}, {"M=1,N=4096", 1}, {"M=100,N=36", 1}, {NULL, 0}}},
  {&gk_stencil, {"mode", "tb", "vec", "rx", NULL},
   {{"NX=7,NY=13,STEPS=3", 1}, {"NX=40,NY=302,STEPS=5", 1}, {"NX=21,NY=34,STEPS=9", 1},
    {"NX=9,NY=11,STEPS=70", 1}, {NULL, 0}}},
};
enum { NCASES = sizeof cases / sizeof *cases };

static void test_gemm(void **state) { (void)state; check_kernel(&cases[0]); }
static void test_reduction(void **state) { (void)state; check_kernel(&cases[1]); }
static void test_transpose(void **state) { (void)state; check_kernel(&cases[2]); }
static void test_stencil(void **state) { (void)state; check_kernel(&cases[3]); }

/* Every kernel of gk_kernels[] has its case above. */
static void test_every_kernel(void **state) {
  (void)state;
  for (int i = 0; gk_kernels[i]; i++) {
    int found = 0;
    for (int c = 0; c < NCASES; c++) found |= cases[c].k == gk_kernels[i];
    if (!found) fail_msg("gk_kernels[] has %s, which this test does not run", gk_kernels[i]->name);
  }
}

int main(void) {
  const char *ns = getenv("TEST_GK_EMU_SAMPLES");
  if (ns && atoi(ns) > 0) nsel = atoi(ns);
  if (!emu_available(&emu_why)) {
    if (!emu_why) emu_why = "unavailable";
  } else {
    emu_why = NULL;
  }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_every_kernel),
    cmocka_unit_test(test_gemm),
    cmocka_unit_test(test_reduction),
    cmocka_unit_test(test_transpose),
    cmocka_unit_test(test_stencil),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  printf("test_gk_emu: %d schedules checked on the CUDA emulator (%d runs)\n", total_schedules,
         total_runs);
  return rc;
}
