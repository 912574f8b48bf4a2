/*
** bench_host.c -- the host target through the harness, against baselines
** measured in the same run:
**   1. gemm: the best of a set of candidate schedules from the space (the
**      default and those in bench/gemm_candidates.json) against
**      OpenBLAS sgemm (OPENBLAS_CORETYPE=SkylakeX, see PLATFORM.md) at
**      1024^3 and 2048^3, each measured REPEATS times; medians and spread.
**   2. harness overhead per measurement (fork, dlopen, verification, IPC:
**      wall time of tg_measure minus the kernel's own timed runs), on a
**      tiny kernel with a warm compile cache.
**   3. compile-cache hit rate on a repeated campaign: the same sampled
**      schedules measured twice from an empty cache.
**
** usage: bench_host [REPEATS] (from the project root; `make bench`)
*/
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "measure/ms.h"
#include "targets/host/hk.h"
#include "targets/host/hw.h"
#include "tests/tk_run.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static sp_space *load(const kn_kernel *k, const char *set) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = sp_parse_bindings(set, a, &b, &err);
  char path[4096];
  sp_space *sp = nb < 0 ? NULL : sp_load_file(rt_project_path(k->space, path, sizeof path), b, nb, &err);
  free(b);
  sx_arena_free(a);
  if (!sp) {
    fprintf(stderr, "bench_host: %s\n", err.msg);
    exit(1);
  }
  return sp;
}

/* Candidate schedules: the JSON array in bench/gemm_candidates.json
** (complete configurations). Returns their number; *out gets the texts. */
static int load_candidates(char ***out) {
  json_error_t je;
  json_t *arr = json_load_file("bench/gemm_candidates.json", 0, &je);
  int n = (int)json_array_size(arr);
  *out = rt_calloc((size_t)(n ? n : 1), sizeof **out);
  for (int i = 0; i < n; i++) (*out)[i] = json_dumps(json_array_get(arr, (size_t)i), JSON_COMPACT);
  if (!arr) fprintf(stderr, "bench_host: bench/gemm_candidates.json: %s (racing the default only)\n", je.text);
  json_decref(arr);
  return n;
}

/* cfg := the candidate, if it is a valid configuration of this space. */
static int candidate(sp_space *sp, const char *json, int *cfg) {
  rt_err err = {0};
  return sp_config_parse(sp, json, cfg, &err) == 0 && sp_valid(sp, cfg, NULL);
}

static void stats3(double *x, int n, double *med, double *lo, double *hi) {
  qsort(x, (size_t)n, sizeof *x, cmp_double);
  *med = n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
  *lo = x[0];
  *hi = x[n - 1];
}

static void bench_gemm(int reps, const ms_opts *o) {
  const kn_kernel *k = hk_find("gemm");
  printf("1. gemm: best candidate schedule (1 or 2 threads) vs OpenBLAS sgemm (its default\n"
         "   threading: all CPUs), same harness, %d interleaved runs each\n", reps);
  printf("   GFLOP/s median [min, max] over runs (each run: median time of its repeats)\n\n");
  printf("   %-6s %-26s %-26s %-22s %s\n", "n", "best schedule", "OpenBLAS (SkylakeX)", "ratio best/OpenBLAS", "best config");
  static const int sizes[] = {1024, 2048};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    char set[96];
    snprintf(set, sizeof set, "M=%d,N=%d,K=%d", sizes[s], sizes[s], sizes[s]);
    sp_space *sp = load(k, set);
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    ms_workload *w = ms_workload_new(k, &pb, NULL);
    char **cands;
    int np = sp_nparams(sp), nc = load_candidates(&cands);
    int *cfg = rt_malloc((size_t)np * sizeof *cfg), *best = rt_malloc((size_t)np * sizeof *best);
    double best_t = 1e30;
    /* race the candidates once, keep the fastest */
    for (int c = -1; c < nc; c++) {
      if (c < 0 ? !sp_default_config(sp, cfg) || !sp_valid(sp, cfg, NULL) : !candidate(sp, cands[c], cfg))
        continue;
      char *src = k->codegen(&pb, sp, cfg);
      ms_result r;
      hw_measure(w, src, NULL, o, &r);
      free(src);
      if (r.status == MS_OK && r.t.median < best_t) {
        best_t = r.t.median;
        memcpy(best, cfg, (size_t)np * sizeof *cfg);
      }
    }
    const char *ldflags = NULL;
    char *bsrc = k->baseline(&pb, &ldflags), *src = k->codegen(&pb, sp, best);
    double *gb = rt_malloc((size_t)reps * sizeof *gb), *gl = rt_malloc((size_t)reps * sizeof *gl),
           *ra = rt_malloc((size_t)reps * sizeof *ra);
    for (int r = 0; r < reps; r++) { /* interleaved, so drifts hit both */
      ms_result a, b;
      hw_measure(w, src, NULL, o, &a);
      hw_measure(w, bsrc, ldflags, o, &b);
      gb[r] = a.status == MS_OK ? k->flops(&pb) / a.t.median * 1e-9 : 0;
      gl[r] = b.status == MS_OK ? k->flops(&pb) / b.t.median * 1e-9 : 0;
      ra[r] = gl[r] > 0 ? gb[r] / gl[r] : 0;
    }
    double m1, l1, h1, m2, l2, h2, m3, l3, h3;
    stats3(gb, reps, &m1, &l1, &h1);
    stats3(gl, reps, &m2, &l2, &h2);
    stats3(ra, reps, &m3, &l3, &h3);
    char *js = sp_config_json(sp, best), c1[64], c2[64], c3[64];
    snprintf(c1, sizeof c1, "%.1f [%.1f, %.1f]", m1, l1, h1);
    snprintf(c2, sizeof c2, "%.1f [%.1f, %.1f]", m2, l2, h2);
    snprintf(c3, sizeof c3, "%.3f [%.3f, %.3f]", m3, l3, h3);
    printf("   %-6d %-26s %-26s %-22s %s\n", sizes[s], c1, c2, c3, js);
    fflush(stdout);
    free(js);
    free(gb);
    free(gl);
    free(ra);
    free(src);
    free(bsrc);
    for (int c = 0; c < nc; c++) free(cands[c]);
    free(cands);
    free(cfg);
    free(best);
    ms_workload_free(w);
    sp_free(sp);
  }
}

/* Harness overhead: wall time of tg_measure minus the kernel runs. */
static void bench_overhead(int reps, const ms_opts *base) {
  const kn_kernel *k = hk_find("reduction");
  sp_space *sp = load(k, "N=1024");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  ms_workload *w = ms_workload_new(k, &pb, NULL);
  int *cfg = rt_malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  sp_default_config(sp, cfg);
  char *src = k->codegen(&pb, sp, cfg);
  ms_opts o = *base;
  o.min_reps = 5;
  o.max_reps = 5;
  ms_result r;
  hw_measure(w, src, NULL, &o, &r); /* warm the compile cache */
  int n = 10 * reps;
  double *ov = rt_malloc((size_t)n * sizeof *ov);
  for (int i = 0; i < n; i++) {
    double t0 = rt_now();
    hw_measure(w, src, NULL, &o, &r);
    double wall = rt_now() - t0;
    ov[i] = 1e3 * (wall - (double)(r.t.n + o.warmup + 1) * r.t.mean);
  }
  double m, lo, hi;
  stats3(ov, n, &m, &lo, &hi);
  printf("\n2. harness overhead per measurement (fork, dlopen, verify, report; warm cache; "
         "kernel time excluded), %d measurements: median %.2f ms [%.2f, %.2f]\n", n, m, lo, hi);
  free(ov);
  free(src);
  free(cfg);
  ms_workload_free(w);
  sp_free(sp);
}

/* Compile-cache hit rate: the same 12 sampled schedules, twice. */
static void bench_cache(const ms_opts *base) {
  const kn_kernel *k = hk_find("transpose");
  sp_space *sp = load(k, "M=96,N=80");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  ms_workload *w = ms_workload_new(k, &pb, NULL);
  int np = sp_nparams(sp), n = 12;
  int *cfgs = rt_malloc((size_t)n * (size_t)np * sizeof *cfgs);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 5);
  rt_err err = {0};
  if (sp_sample(sp, rng, n, 1, cfgs, &err)) n = 0;
  char dir[] = "/tmp/rooftune-bench-cache-XXXXXX";
  if (!mkdtemp(dir)) return;
  ms_opts o = *base;
  o.cache_dir = dir;
  o.min_reps = o.max_reps = 3;
  for (int pass = 0; pass < 2; pass++) {
    int hits = 0;
    double compile = 0;
    for (int i = 0; i < n; i++) {
      char *src = k->codegen(&pb, sp, cfgs + (size_t)i * np);
      ms_result r;
      hw_measure(w, src, NULL, &o, &r);
      hits += r.cache_hit;
      compile += r.compile_s;
      free(src);
    }
    printf("%s pass %d: %d/%d compile-cache hits, %.2f s compiling\n",
           pass ? "  " : "\n3. repeated campaign (12 sampled transpose schedules, empty cache):\n  ",
           pass + 1, hits, n, compile);
  }
  if (tk_rm_rf(dir)) fprintf(stderr, "bench_host: could not remove %s\n", dir);
  gsl_rng_free(rng);
  free(cfgs);
  ms_workload_free(w);
  sp_free(sp);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  if (reps < 1) reps = 1;
  ms_opts o;
  ms_opts_default(&o);
  bench_gemm(reps, &o);
  bench_overhead(reps, &o);
  bench_cache(&o);
  return 0;
}
