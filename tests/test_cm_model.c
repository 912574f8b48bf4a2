/*
** test_cm_model.c -- the cost model's own parts against independent
** expectations: the reuse analysis of cm_nest.c against a brute-force LRU
** simulation of the address trace of the same loops (stack distances over
** a Fenwick tree); the gemm model's flops, masked lanes and thread
** imbalance against an instrumented walk of the generator's loop nest; its
** cold byte terms against cachegrind counting the real generated code
** (skipped without valgrind); the roofline combination against a hand
** computation; calibration recovering coefficients from synthetic times
** made by the model itself; the coefficients' JSON round trip and errors;
** and the tuner's model hooks.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost_model/cm.h"
#include "targets/host/hw.h"
#include "measure/ms.h"
#include "targets/host/hk.h"
#include "tk_run.h"

/* ---- Brute-force LRU: misses of a fully associative LRU cache of cap
** lines over a trace of line addresses, by stack distance ---- */

typedef struct trace {
  uint64_t *a;
  size_t n, cap;
} trace;

static void touch(trace *t, uint64_t byte_addr) {
  if (t->n == t->cap) t->a = realloc(t->a, (t->cap = t->cap ? 2 * t->cap : 4096) * sizeof *t->a);
  t->a[t->n++] = byte_addr / 64;
}

/* Misses of an LRU cache of cap lines (cold start). */
static double lru_misses(const trace *t, size_t cap) {
  size_t n = t->n;
  int64_t *bit = calloc(n + 1, sizeof *bit);
  /* last access time of each line: an open-addressing map */
  size_t hs = 1;
  while (hs < 2 * n + 2) hs <<= 1;
  uint64_t *key = malloc(hs * sizeof *key);
  int64_t *last = malloc(hs * sizeof *last);
  for (size_t i = 0; i < hs; i++) last[i] = -1;
  double misses = 0;
  for (size_t i = 0; i < n; i++) {
    size_t h = (t->a[i] * 0x9E3779B97F4A7C15ull) & (hs - 1);
    while (last[h] >= 0 && key[h] != t->a[i]) h = (h + 1) & (hs - 1);
    if (last[h] < 0) {
      misses++;
    } else {
      /* distinct lines since the last access: markers in (last, i) */
      int64_t d = 0;
      for (size_t j = i; j > 0; j -= j & -j) d += bit[j];
      for (size_t j = (size_t)last[h] + 1; j > 0; j -= j & -j) d -= bit[j];
      if ((size_t)d >= cap) misses++;
      for (size_t j = (size_t)last[h] + 1; j <= n; j += j & -j) bit[j]--;
    }
    key[h] = t->a[i];
    last[h] = (int64_t)i;
    for (size_t j = i + 1; j <= n; j += j & -j) bit[j]++;
  }
  free(bit), free(key), free(last);
  return misses * 64;
}

/* The brute-force simulator itself on a hand case: a b c a b c with 2 and 3
** lines of capacity (LRU thrashes with 2, hits with 3). */
static void test_lru_simulator(void **state) {
  (void)state;
  trace t = {0};
  for (int r = 0; r < 2; r++)
    for (int x = 0; x < 3; x++) touch(&t, (uint64_t)x * 64);
  assert_true(lru_misses(&t, 2) == 6 * 64);
  assert_true(lru_misses(&t, 3) == 3 * 64);
  free(t.a);
}

/* y[i] += A[i][j] * x[j], i outer: x (n floats) is reused across i when a
** row of A, x and y fit. The nest's traffic must equal the simulated
** misses on both sides of the capacity. */
static void test_nest_matvec(void **state) {
  (void)state;
  const int m = 64, n = 512;
  trace t = {0};
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      touch(&t, (1ull << 30) + (uint64_t)(i * n + j) * 4);   /* A */
      touch(&t, (2ull << 30) + (uint64_t)j * 4);             /* x */
      touch(&t, (3ull << 30) + (uint64_t)i * 4);             /* y */
    }
  cm_nest nest = {0};
  cm_nest_loop(&nest, m, "i");
  cm_nest_loop(&nest, n, "j");
  cm_nest_array(&nest, "A", "ij", (double[]){1, 1}, (double[]){m, n}, 4, 0);
  cm_nest_array(&nest, "x", "j", (double[]){1}, (double[]){n}, 4, 0);
  cm_nest_array(&nest, "y", "i", (double[]){1}, (double[]){m}, 4, 0);
  double fp = cm_nest_footprint(&nest, 64);
  assert_true(fp == (m * n / 16 + n / 16 + m / 16) * 64.0);
  /* capacities in lines: x + a row of A + y's line fit (66 lines) or not */
  size_t caps[] = {40, 64, 80, 200, 3000};
  for (size_t k = 0; k < sizeof caps / sizeof *caps; k++) {
    double sim = lru_misses(&t, caps[k]), model = cm_nest_traffic(&nest, caps[k] * 64.0, 64, 0);
    printf("matvec cap %4zu lines: LRU %8.0f B, model %8.0f B\n", caps[k], sim, model);
    assert_true(fabs(model - sim) <= 0.02 * sim);
  }
  /* warm: a nest that fits costs nothing */
  assert_true(cm_nest_traffic(&nest, 3000 * 64.0, 64, 1) == 0);
  free(t.a);
}

/* A tiled transpose-like copy B[j][i] = A[i][j] in tiles of b x b: with the
** tile's lines in cache, each line of A and B is fetched once; with a tile
** that does not fit, B's lines are fetched once per element row. */
static void test_nest_tiled(void **state) {
  (void)state;
  const int n = 256, b = 32;
  trace t = {0};
  for (int ii = 0; ii < n; ii += b)
    for (int jj = 0; jj < n; jj += b)
      for (int i = ii; i < ii + b; i++)
        for (int j = jj; j < jj + b; j++) {
          touch(&t, (1ull << 30) + (uint64_t)(i * n + j) * 4);
          touch(&t, (2ull << 30) + (uint64_t)(j * n + i) * 4);
        }
  cm_nest nest = {0};
  cm_nest_loop(&nest, n / b, "I");
  cm_nest_loop(&nest, n / b, "J");
  cm_nest_loop(&nest, b, "i");
  cm_nest_loop(&nest, b, "j");
  /* A[i][j]: rows i (I moves the tile), B[j][i]: rows j */
  cm_nest_array(&nest, "A", "IiJj", (double[]){1, 1, 1, 1}, (double[]){n / b, b, n / b, b}, 4, 0);
  cm_nest_array(&nest, "B", "JjIi", (double[]){1, 1, 1, 1}, (double[]){n / b, b, n / b, b}, 4, 0);
  size_t caps[] = {48, 96, 1024};
  for (size_t k = 0; k < sizeof caps / sizeof *caps; k++) {
    double sim = lru_misses(&t, caps[k]), model = cm_nest_traffic(&nest, caps[k] * 64.0, 64, 0);
    printf("tiled copy cap %4zu lines: LRU %8.0f B, model %8.0f B\n", caps[k], sim, model);
    assert_true(fabs(model - sim) <= 0.05 * sim);
  }
  free(t.a);
}

/* ---- The gemm model against an instrumented walk of the generator ---- */

static sp_space *gemm_space(const char *set) {
  sx_arena *arena = sx_arena_new();
  sp_binding *b = NULL;
  rt_err err = {0};
  int nb = sp_parse_bindings(set, arena, &b, &err);
  assert_true(nb > 0);
  sp_space *sp = sp_load_file("targets/host/gemm.json", b, nb, &err);
  free(b);
  sx_arena_free(arena);
  assert_non_null(sp);
  return sp;
}

static cm_ceilings test_ceilings(void) {
  cm_ceilings c = {.threads = 2, .nclass = 1};
  c.cls[0] = (cm_class){"avx512-fma", 512, 1, {200e9, 380e9}};
  c.peak[0] = 200e9, c.peak[1] = 380e9;
  double bw[CM_NLEVEL][2] = {{400e9, 700e9}, {150e9, 250e9}, {40e9, 60e9}, {15e9, 20e9}};
  memcpy(c.bw, bw, sizeof bw);
  c.cache[0] = 48 * 1024, c.cache[1] = 2 << 20, c.cache[2] = 32 << 20;
  strcpy(c.measured, "test");
  return c;
}

/* Lanes computed and useful flops per thread, walking slices, blocks,
** panels and micro-kernels the way hk_gemm.c generates them. */
static void walk_gemm(long M, long N, long K, long mc, long nc, long kc, long mr, long nv,
                      int th, char par, double *lanes, double *per_thread_max,
                      double *per_thread_sum) {
  long nr = nv * 16, me = M % mr, ne = N % nr;
  long tile = par == 'n' ? nr : mr, ext = par == 'n' ? N : M;
  long share = th > 1 ? ((ext + th - 1) / th + tile - 1) / tile * tile : ext;
  *lanes = 0, *per_thread_max = 0, *per_thread_sum = 0;
  for (int t = 0; t < (th > 1 ? th : 1); t++) {
    long lo = t * share, hi = lo + share < ext ? lo + share : ext;
    if (lo >= hi) continue;
    long m0 = par == 'm' ? lo : 0, m1 = par == 'm' ? hi : M;
    long n0 = par == 'n' ? lo : 0, n1 = par == 'n' ? hi : N;
    double useful = 0;
    for (long jc = n0; jc < n1; jc += nc)
      for (long ic = m0; ic < m1; ic += mc)
        for (long pc = 0; pc < K; pc += kc) {
          long nb = n1 - jc < nc ? n1 - jc : nc, mb = m1 - ic < mc ? m1 - ic : mc;
          long kb = K - pc < kc ? K - pc : kc;
          for (long ir = 0; ir < mb; ir += mr)
            for (long jr = 0; jr < nb; jr += nr) {
              long rows = mb - ir >= mr ? mr : me;
              long cols = nb - jr >= nr ? nr : ne;
              long vecs = nb - jr >= nr ? nv : (ne + 15) / 16;
              *lanes += 2.0 * rows * vecs * 16 * kb;
              useful += 2.0 * rows * cols * kb;
            }
        }
    *per_thread_sum += useful;
    if (useful > *per_thread_max) *per_thread_max = useful;
  }
}

static void test_gemm_flops_lanes_threads(void **state) {
  (void)state;
  const char *sets[] = {"M=37,N=45,K=29", "M=100,N=200,K=64", "M=64,N=64,K=300"};
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 5);
  cm_ceilings ce = test_ceilings();
  cm_coefs c;
  cm_coefs_default(&cm_gemm, &c);
  for (size_t s = 0; s < sizeof sets / sizeof *sets; s++) {
    sp_space *sp = gemm_space(sets[s]);
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    int np = sp_nparams(sp);
    int *cfgs = malloc(60 * (size_t)np * sizeof *cfgs);
    rt_err err = {0};
    assert_int_equal(sp_sample(sp, rng, 60, 0, cfgs, &err), 0);
    for (int i = 0; i < 60; i++) {
      const int *cfg = cfgs + (size_t)i * np;
      long M = kn_int(&pb, "M"), N = kn_int(&pb, "N"), K = kn_int(&pb, "K");
      int th = (int)kn_param_int(sp, cfg, "threads");
      char par = *kn_param_str(sp, cfg, "parallel_loop");
      if (th < 2 || par == 'n' + 1 || (par != 'm' && par != 'n')) th = 1, par = 0;
      double lanes, tmax, tsum;
      walk_gemm(M, N, K, kn_param_int(sp, cfg, "mc"), kn_param_int(sp, cfg, "nc"),
                kn_param_int(sp, cfg, "kc"), kn_param_int(sp, cfg, "mr"),
                kn_param_int(sp, cfg, "nr_vecs"), th, par, &lanes, &tmax, &tsum);
      cm_pred p;
      assert_int_equal(cm_predict(&cm_gemm, &pb, sp, cfg, &ce, &c, 0, &p, &err), 0);
      assert_true(fabs(p.w.flops - 2.0 * M * N * K) < 1e-6);
      assert_true(fabs(tsum - p.w.flops) < 1e-6);          /* the walk covers C once */
      assert_true(fabs(p.w.eff[0] - tsum / lanes) < 1e-12); /* lanes: useful / computed */
      int active = 0;
      for (int t = 0; t < th; t++) {
        long tile = par == 'n' ? kn_param_int(sp, cfg, "nr_vecs") * 16 : kn_param_int(sp, cfg, "mr");
        long ext = par == 'n' ? N : M, share = ((ext + th - 1) / th + tile - 1) / tile * tile;
        active += t * share < ext;
      }
      assert_int_equal(p.w.threads, th > 1 ? active : 1);
      /* imbalance: the slowest thread's share of the work over the mean
      ** share of the threads that get work */
      double want = th > 1 ? tmax / (tsum / active) : 1;
      assert_true(fabs(p.w.imbalance - want) < 1e-9);
      assert_true(p.time > 0 && isfinite(p.time));
      for (int l = 0; l < CM_NLEVEL; l++) assert_true(p.w.bytes[l] >= 0 && isfinite(p.w.bytes[l]));
    }
    free(cfgs);
    sp_free(sp);
  }
  gsl_rng_free(rng);
}

/* Cold byte terms against cachegrind on the real generated code. */
static void test_gemm_bytes_cachegrind(void **state) {
  (void)state;
  const char *why = NULL;
  if (!hw_cachegrind_available(&why)) {
    printf("skipped: %s\n", why);
    skip();
  }
  char dir[] = "/tmp/rt-cm-model-XXXXXX";
  assert_non_null(mkdtemp(dir));
  sp_space *sp = gemm_space("M=96,N=80,K=128");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  cm_ceilings ce = test_ceilings();
  ce.cache[0] = 48 * 1024, ce.cache[1] = 2 << 20, ce.cache[2] = 256 << 20;
  cm_machine mach;
  cm_machine_from_ceilings(&mach, &ce);
  mach.flush = 1;
  cm_coefs c;
  cm_coefs_default(&cm_gemm, &c);
  const char *cfgs[] = {
    "{\"mc\":48,\"nc\":192,\"kc\":64,\"mr\":6,\"nr_vecs\":2,\"unroll_k\":4,\"loop_order\":\"nkm\","
    "\"macro_order\":\"mn\",\"pack_a\":true,\"pack_b\":true,\"threads\":1,\"parallel_loop\":\"none\"}",
    "{\"mc\":96,\"nc\":192,\"kc\":128,\"mr\":4,\"nr_vecs\":1,\"unroll_k\":2,\"loop_order\":\"mkn\","
    "\"macro_order\":\"nm\",\"pack_a\":false,\"pack_b\":false,\"threads\":1,\"parallel_loop\":\"none\"}",
  };
  int *cfg = malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++) {
    rt_err err = {0};
    assert_int_equal(sp_config_parse(sp, cfgs[i], cfg, &err), 0);
    char *src = hk_gemm.codegen(&pb, sp, cfg);
    cm_traffic tr;
    int rc = hw_count_cachegrind(&hk_gemm, &pb, src, &mach, dir, &tr, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    cm_work w = {.threads = 1, .imbalance = 1};
    assert_int_equal(cm_gemm.work(&pb, sp, cfg, &mach, &c, &w, &err), 0);
    printf("gemm 96x80x128 schedule %zu: L3 fills counted %.0f model %.0f, DRAM counted %.0f "
           "model %.0f, L2 fills counted %.0f model %.0f\n", i, tr.bytes[2], w.bytes[2],
           tr.bytes[3], w.bytes[3], tr.bytes[1], w.bytes[1]);
    /* everything fits in L2 here: both outer levels see the cold footprint,
    ** packing buffers included; L1 fills are the model's roughest term
    ** (set conflicts, hardware-less LRU): within 40% */
    assert_true(fabs(w.bytes[3] - tr.bytes[3]) <= 0.05 * tr.bytes[3]);
    assert_true(fabs(w.bytes[2] - tr.bytes[2]) <= 0.05 * tr.bytes[2]);
    assert_true(fabs(w.bytes[1] - tr.bytes[1]) <= 0.40 * tr.bytes[1]);
    free(src);
  }
  free(cfg);
  sp_free(sp);
  assert_int_equal(tk_rm_rf(dir), 0);
}

/* ---- The roofline combination by hand ---- */

static const char *const one_eff[] = {"e"};
static const cm_coef hand_coefs[CM_NGENERIC + 1] = {
  CM_GENERIC_COEFS,
  {"exp_e", 2.0, CM_POS, "", 0},
};
static int hand_work(const kn_problem *pb, const sp_space *sp, const int *cfg, const cm_machine *m,
                     const cm_coefs *c, cm_work *w, rt_err *err) {
  (void)pb, (void)sp, (void)cfg, (void)m, (void)c, (void)err;
  w->flops = 1e9;
  w->bytes[0] = 4e9, w->bytes[1] = 1e9, w->bytes[2] = 0, w->bytes[3] = 1e8;
  w->eff[0] = 0.5;
  w->threads = 2;
  w->imbalance = 1.25;
  w->trips = 1e6;
  return 0;
}
static const cm_kmodel hand_model = {.kernel = "hand", .neff = 1, .eff_names = one_eff, .ncoef = CM_NGENERIC + 1,
                                     .coefs = hand_coefs, .work = hand_work, .family = "host"};

static void test_time_by_hand(void **state) {
  (void)state;
  cm_ceilings ce = test_ceilings();
  cm_coefs c;
  cm_coefs_default(&hand_model, &c);
  cm_pred p;
  rt_err err;
  assert_int_equal(cm_predict(&hand_model, NULL, NULL, NULL, &ce, &c, 0, &p, &err), 0);
  /* two threads = all threads: the all-thread ceilings */
  double tc = 1e9 * 1.25 / (380e9 * 0.9 * 0.25);
  double t1 = 4e9 * 1.25 / (700e9 * 0.8), t2 = 1e9 * 1.25 / (250e9 * 0.8);
  double td = 1e8 * 1.25 / (20e9 * 0.8);
  double pn = 3, tmax = fmax(fmax(tc, t1), fmax(t2, td));
  double s = tmax * pow(pow(tc / tmax, pn) + pow(t1 / tmax, pn) + pow(t2 / tmax, pn) +
                        pow(td / tmax, pn), 1 / pn);
  double ov = 2e-6 + 4e-6 * 1 + 1e-9 * 1e6 * 1.25 / 2;
  assert_true(fabs(p.time - (s + ov)) < 1e-12 * p.time);
  assert_true(fabs(p.t[CM_COMPUTE] - tc) < 1e-15);
  assert_int_equal(p.bound, tc > t1 && tc > t2 && tc > td ? CM_COMPUTE : CM_L1);
  assert_true(fabs(p.frac[CM_L1] - 4e9 / p.time / 700e9) < 1e-12);
  assert_true(fabs(p.frac[CM_COMPUTE] - 1e9 / p.time / 380e9) < 1e-12);
  assert_true(p.t[CM_L3] == 0);
}

/* ---- Calibration recovers the coefficients that made the data ---- */

static void test_calibration_recovers(void **state) {
  (void)state;
  sp_space *sp = gemm_space("M=256,N=256,K=256");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  cm_ceilings ce = test_ceilings();
  cm_coefs truth, start;
  cm_coefs_default(&cm_gemm, &truth);
  start = truth;
  /* the truth: several coefficients moved well away from the defaults */
  truth.v[CM_C_COMPUTE] = 0.6, truth.v[CM_C_L2] = 1.3, truth.v[CM_C_OVERLAP] = 2.0;
  truth.v[CM_C_TRIP] = 2.5e-9, truth.v[CM_C_EFF0 + 2] = 0.6;   /* exp_issue */
  int np = sp_nparams(sp), n = 200;
  int *cfgs = malloc((size_t)n * np * sizeof *cfgs);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 11);
  rt_err err = {0};
  assert_int_equal(sp_sample(sp, rng, n, 1, cfgs, &err), 0);
  cm_sample *s = malloc((size_t)n * sizeof *s);
  for (int i = 0; i < n; i++) {
    cm_pred p;
    assert_int_equal(cm_predict(&cm_gemm, &pb, sp, cfgs + (size_t)i * np, &ce, &truth, 0, &p, &err), 0);
    double noise = exp(gsl_ran_gaussian(rng, 0.02));
    if (i % 25 == 7) noise *= 3;   /* a few gross outliers */
    s[i] = (cm_sample){&pb, sp, cfgs + (size_t)i * np, p.time * noise};
  }
  cm_coefs fit = start;
  cm_fit_result res;
  assert_int_equal(cm_calibrate(&cm_gemm, s, n, &ce, 0, &fit, NULL, &res, &err), 0);
  printf("calibration: rms log %.4f -> %.4f, %d outliers; compute %.3f (0.6) overlap %.3f (2.0) "
         "trip %.3g (2.5e-9) exp_issue %.3f (0.6) eff_L2 %.3f (1.3)\n", res.rms_before,
         res.rms_after, res.n_outliers, fit.v[CM_C_COMPUTE], fit.v[CM_C_OVERLAP],
         fit.v[CM_C_TRIP], fit.v[CM_C_EFF0 + 2], fit.v[CM_C_L2]);
  /* the rms counts the 8 planted outliers (|log 3| each): it only falls */
  assert_true(res.rms_after < res.rms_before);
  assert_true(res.n_outliers >= 6);
  /* the predictions of the fit match the truth's (noise-free) closely */
  double worst = 0;
  for (int i = 0; i < n; i++) {
    cm_pred a, b;
    cm_predict(&cm_gemm, &pb, sp, s[i].cfg, &ce, &truth, 0, &a, &err);
    cm_predict(&cm_gemm, &pb, sp, s[i].cfg, &ce, &fit, 0, &b, &err);
    worst = fmax(worst, fabs(log(b.time / a.time)));
  }
  printf("calibration: worst |log(fit / truth)| over the schedules %.4f\n", worst);
  assert_true(worst < 0.05);
  /* the coefficients that shape most schedules come back */
  assert_true(fabs(fit.v[CM_C_COMPUTE] / 0.6 - 1) < 0.10);
  assert_true(fabs(fit.v[CM_C_OVERLAP] / 2.0 - 1) < 0.15);
  assert_true(fabs(fit.v[CM_C_EFF0 + 2] / 0.6 - 1) < 0.15);
  free(s), free(cfgs);
  gsl_rng_free(rng);
  sp_free(sp);
}

/* ---- Calibration of a model's own coefficient: work reused where only
** generic coefficients moved (cm_calib.c's memo) ---- */

static const cm_coef own_coefs[CM_NGENERIC + 2] = {
  CM_GENERIC_COEFS,
  {"exp_e", 1.0, CM_POS, "", 0},
  {"shape", 1.0, CM_POS, "exponent of the DRAM bytes' growth (the model's own)", 0},
};
static long own_calls;   /* calls of own_work */
/* cfg[0] = i: the sample's size; the DRAM bytes grow as size^shape, a
** shape that no ceiling's share can imitate. */
static int own_work(const kn_problem *pb, const sp_space *sp, const int *cfg, const cm_machine *m,
                    const cm_coefs *c, cm_work *w, rt_err *err) {
  (void)pb, (void)sp, (void)m, (void)err;
  own_calls++;
  double x = 1 + cfg[0] % 13;
  w->flops = 1e8 * (1 + cfg[0] % 10);
  w->bytes[3] = 2e7 * pow(x, c->v[CM_C_EFF0 + 1]);
  w->eff[0] = 0.5 + 0.05 * (cfg[0] % 9);
  w->threads = 2, w->imbalance = 1;
  return 0;
}
static const cm_kmodel own_model = {.kernel = "own", .neff = 1, .eff_names = one_eff, .ncoef = CM_NGENERIC + 2,
                                    .coefs = own_coefs, .work = own_work, .family = "host"};

static void test_calibration_own_coefficient(void **state) {
  (void)state;
  cm_ceilings ce = test_ceilings();
  enum { N = 120 };
  int size[N];
  cm_sample s[N];
  cm_coefs truth, fit;
  cm_coefs_default(&own_model, &truth);
  fit = truth;
  truth.v[CM_C_COMPUTE] = 0.6, truth.v[CM_C_DRAM] = 0.5, truth.v[CM_C_FIXED] = 3e-4;
  truth.v[CM_C_EFF0 + 1] = 1.4;
  rt_err err = {0};
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);   /* noise: 1% (the robust */
  gsl_rng_set(rng, 5);                             /* weights need a spread) */
  for (int i = 0; i < N; i++) {
    cm_pred p;
    size[i] = i;
    assert_int_equal(cm_predict(&own_model, NULL, NULL, &size[i], &ce, &truth, 0, &p, &err), 0);
    s[i] = (cm_sample){NULL, NULL, &size[i], p.time * exp(gsl_ran_gaussian(rng, 0.01))};
  }
  gsl_rng_free(rng);
  int fixed[CM_NGENERIC + 2];
  for (int j = 0; j < CM_NGENERIC + 2; j++) fixed[j] = 1;
  int freed[] = {CM_C_COMPUTE, CM_C_DRAM, CM_C_FIXED, CM_C_EFF0 + 1};
  for (size_t j = 0; j < sizeof freed / sizeof *freed; j++) fixed[freed[j]] = 0;
  cm_fit_result res;
  own_calls = 0;
  assert_int_equal(cm_calibrate(&own_model, s, N, &ce, 0, &fit, fixed, &res, &err), 0);
  printf("own coefficient: shape %.4f (1.4), eff_DRAM %.4f (0.5), eff_compute %.4f (0.6); "
         "rms %.2g; %d iterations, %ld evaluations, %ld calls of the work function for %d "
         "samples\n", fit.v[CM_C_EFF0 + 1], fit.v[CM_C_DRAM], fit.v[CM_C_COMPUTE], res.rms_after,
         res.iters, res.evals, own_calls, N);
  /* a work reused after the own coefficient moved would leave it wrong */
  assert_true(fabs(fit.v[CM_C_EFF0 + 1] / 1.4 - 1) < 0.03);
  assert_true(fabs(fit.v[CM_C_DRAM] / 0.5 - 1) < 0.10);    /* the prior pulls */
  assert_true(fabs(fit.v[CM_C_COMPUTE] / 0.6 - 1) < 0.10); /* these a little */
  assert_true(res.rms_after < 0.02);
  /* computed afresh, the work would take N calls per evaluation of the
  ** residuals; three of the finite-difference Jacobian's four columns move
  ** only generic coefficients (here: 36% of that) */
  assert_true(res.evals > res.iters);
  assert_true(own_calls >= N && own_calls < 0.5 * N * res.evals);
}

/* ---- Coefficients as JSON ---- */

static void test_coefs_json(void **state) {
  (void)state;
  cm_coefs c, d;
  cm_coefs_default(&cm_gemm, &c);
  c.v[CM_C_OVERLAP] = 1.2345678901234567;
  c.v[CM_C_FIXED] = 3.5e-7;
  char *j = cm_coefs_json(&cm_gemm, &c);
  rt_err err = {0};
  assert_int_equal(cm_coefs_parse(&cm_gemm, j, &d, &err), 0);
  assert_memory_equal(c.v, d.v, sizeof c.v);
  assert_non_null(strstr(j, "\"form\": 1"));
  free(j);
  /* a model of form 2 reads its own calibrations, not those written
  ** before its form changed (no "form": 1), though every name matches */
  cm_kmodel k2 = cm_gemm;
  k2.form = 2;
  j = cm_coefs_json(&k2, &c);
  assert_int_equal(cm_coefs_parse(&k2, j, &d, &err), 0);
  assert_memory_equal(c.v, d.v, sizeof c.v);
  assert_int_equal(cm_coefs_parse(&cm_gemm, j, &d, &err), -1);
  free(j);
  assert_int_equal(cm_coefs_parse(&k2, "{\"overlap\": 2}", &d, &err), -1);
  assert_non_null(strstr(err.msg, "an older form of the model"));
  /* a missing coefficient keeps its default */
  assert_int_equal(cm_coefs_parse(&cm_gemm, "{\"overlap\": 2}", &d, &err), 0);
  assert_true(d.v[CM_C_OVERLAP] == 2 && d.v[CM_C_COMPUTE] == cm_gemm.coefs[CM_C_COMPUTE].value);
  struct { const char *text, *want; } bad[] = {
    {"{\"nonsense\": 1}", "\"nonsense\": not a coefficient"},
    {"{\"overlap\": 0.5}", "\"overlap\": expected a positive number"},
    {"{\"fixed_s\": -1}", "\"fixed_s\": expected"},
    {"{\"fixed_s\": \"x\"}", "\"fixed_s\": expected"},
    {"[1, 2]", "not a JSON object"},
    {"{", "not a JSON object"},
    {"{\"form\": 2, \"overlap\": 2}", "form 2, not this model's form 1"},
    {"{\"form\": \"1\"}", "form -1"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err.msg[0] = 0;
    assert_int_equal(cm_coefs_parse(&cm_gemm, bad[i].text, &d, &err), -1);
    if (!strstr(err.msg, bad[i].want)) fprintf(stderr, "got: %s\n", err.msg);
    assert_non_null(strstr(err.msg, bad[i].want));
  }
}

/* ---- The tuner's hooks ---- */

static void test_tmodel(void **state) {
  (void)state;
  sp_space *sp = gemm_space("M=128,N=128,K=128");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  cm_ceilings ce = test_ceilings();
  cm_coefs c, truth;
  cm_coefs_default(&cm_gemm, &c);
  truth = c;
  truth.v[CM_C_COMPUTE] = 0.5;
  /* an uncertainty known for the compute bound only (sigma: its figure
  ** there, the overall one elsewhere) */
  c.unc.all = 0.3, c.unc.n = 40, c.unc.bound[CM_COMPUTE] = 0.1, c.unc.nb[CM_COMPUTE] = 20;
  cm_tmodel *m = cm_tmodel_new(&cm_gemm, &pb, sp, &ce, &c, 0);
  int np = sp_nparams(sp), n = 40;
  int *cfgs = malloc((size_t)n * np * sizeof *cfgs);
  double *t = malloc((size_t)n * sizeof *t), *want = malloc((size_t)n * sizeof *want);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 3);
  rt_err err = {0};
  assert_int_equal(sp_sample(sp, rng, n, 1, cfgs, &err), 0);
  assert_int_equal(cm_tmodel_predict(m, cfgs, n, t), 0);
  assert_int_equal(cm_tmodel_sigma(m, cfgs, n, want), 0);
  for (int i = 0; i < n; i++) {
    cm_pred p;
    cm_predict(&cm_gemm, &pb, sp, cfgs + (size_t)i * np, &ce, &c, 0, &p, &err);
    assert_true(t[i] == p.time);
    assert_true(want[i] == (p.bound == CM_COMPUTE ? 0.1 : 0.3));
    cm_predict(&cm_gemm, &pb, sp, cfgs + (size_t)i * np, &ce, &truth, 0, &p, &err);
    want[i] = p.time;
  }
  assert_int_equal(cm_tmodel_refit(m, cfgs, want, n), 0);
  assert_int_equal(cm_tmodel_refits(m), 1);
  assert_int_equal(cm_tmodel_predict(m, cfgs, n, t), 0);
  for (int i = 0; i < n; i++) assert_true(fabs(log(t[i] / want[i])) < 0.02);
  cm_tmodel_reset(m);
  assert_memory_equal(cm_tmodel_coefs(m)->v, c.v, sizeof c.v);
  cm_tmodel_free(m);
  free(cfgs), free(t), free(want);
  gsl_rng_free(rng);
  sp_free(sp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_lru_simulator),
    cmocka_unit_test(test_nest_matvec),
    cmocka_unit_test(test_nest_tiled),
    cmocka_unit_test(test_gemm_flops_lanes_threads),
    cmocka_unit_test(test_gemm_bytes_cachegrind),
    cmocka_unit_test(test_time_by_hand),
    cmocka_unit_test(test_calibration_recovers),
    cmocka_unit_test(test_calibration_own_coefficient),
    cmocka_unit_test(test_coefs_json),
    cmocka_unit_test(test_tmodel),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
