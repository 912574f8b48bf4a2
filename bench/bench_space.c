/*
** bench_space.c -- speed of the space engine, measured against baselines
** in the same run: loading + exact counting, and drawing 10,000 distinct
** uniform samples, each from a freshly loaded space (cold memo tables),
** repeated to report median, min and max. Baselines: the naive C
** product-then-filter count (sp_valid on every combination) and, for
** spaces up to 3*10^7 combinations, Python's itertools brute force
** (scripts/bruteforce_count.py), which also cross-checks the count.
**
** usage: bench_space [REPEATS] (run from the project root; `make bench`)
*/
#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "search_spaces/sp.h"
#include "tests/tk_run.h"

static const struct { const char *path, *label; } spaces[] = {
  {"data/t1/gemm_milo.json", "gemm_milo (T1)"},
  {"data/t1/convolution_milo.json", "convolution_milo (T1)"},
  {"data/t1/dedispersion_milo.json", "dedispersion_milo (T1)"},
  {"data/t1/pnpoly.json", "pnpoly (T1)"},
  {"bench/spaces/hotspot.json", "hotspot (BAT, 22M)"},
  {"bench/spaces/wide.json", "wide_groups (10^12)"},
};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static sp_space *load(const char *path) {
  rt_err err = {0};
  sp_space *sp = sp_load_file(path, NULL, 0, &err);
  if (!sp) {
    fprintf(stderr, "bench_space: %s\n", err.msg);
    exit(1);
  }
  return sp;
}

/* Naive product-then-filter count, the C baseline. */
static rt_count naive_count(sp_space *sp) {
  int np = sp_nparams(sp);
  int *cfg = calloc((size_t)np, sizeof *cfg);
  rt_count n = 0;
  for (;;) {
    n += (rt_count)sp_valid(sp, cfg, NULL);
    int p = np - 1;
    while (p >= 0 && ++cfg[p] == sp_nvalues(sp, p)) cfg[p--] = 0;
    if (p < 0) break;
  }
  free(cfg);
  return n;
}

/* Seconds Python's brute force took (and its count), or -1. */
static double python_seconds(const char *path, long long *valid) {
  char line[512];
  double s = -1;
  if (!tk_run((const char *[]){"python3", "scripts/bruteforce_count.py", path, NULL},
              &(tk_io){.out = line, .cap = sizeof line, .both = -1})) {
    char *v = strstr(line, "\"valid\": "), *t = strstr(line, "\"seconds\": ");
    if (v && t) {
      *valid = atoll(v + 9);
      s = atof(t + 11);
    }
  }
  return s;
}

typedef struct stats { double med, lo, hi; } stats;

static stats summarize(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, cmp_double);
  return (stats){n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]), x[0], x[n - 1]};
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 7;
  if (reps < 1) reps = 1;
  double *t_count = malloc((size_t)reps * sizeof(double));
  double *t_sample = malloc((size_t)reps * sizeof(double));
  printf("rooftune space engine benchmark: %d repeats each, fresh load (cold memo) per repeat\n", reps);
  printf("times in ms: median [min, max]\n\n");
  printf("%-24s %22s %22s %22s %12s %12s %12s %10s\n", "space", "valid / cartesian",
         "load+count", "sample 10k distinct", "naive C", "naive/engine", "Python", "Py/engine");
  for (size_t s = 0; s < sizeof spaces / sizeof *spaces; s++) {
    rt_count valid = 0, cart = 0;
    for (int r = 0; r < reps; r++) {
      double t0 = rt_now();
      sp_space *sp = load(spaces[s].path);
      valid = sp_count(sp);
      t_count[r] = 1e3 * (rt_now() - t0);
      cart = sp_cartesian(sp);
      sp_free(sp);

      sp = load(spaces[s].path);
      int n = valid < 10000 ? (int)valid : 10000;
      int *cfgs = malloc((size_t)n * (size_t)sp_nparams(sp) * sizeof *cfgs);
      gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
      gsl_rng_set(rng, (unsigned long)r + 1);
      rt_err err = {0};
      t0 = rt_now();
      if (sp_sample(sp, rng, n, 1, cfgs, &err)) {
        fprintf(stderr, "bench_space: %s\n", err.msg);
        return 1;
      }
      t_sample[r] = 1e3 * (rt_now() - t0);
      gsl_rng_free(rng);
      free(cfgs);
      sp_free(sp);
    }
    stats c = summarize(t_count, reps), sm = summarize(t_sample, reps);
    char vb[48], cb[48], sizes[100], cs[64], ss[64], naive[32] = "-", ratio[32] = "-",
                                                        py[32] = "-", pyratio[32] = "-";
    snprintf(sizes, sizeof sizes, "%s / %s", rt_count_str(valid, vb), rt_count_str(cart, cb));
    snprintf(cs, sizeof cs, "%.2f [%.2f, %.2f]", c.med, c.lo, c.hi);
    snprintf(ss, sizeof ss, "%.2f [%.2f, %.2f]", sm.med, sm.lo, sm.hi);
    if (cart <= (rt_count)30000000) {
      sp_space *sp = load(spaces[s].path);
      double t0 = rt_now();
      rt_count nv = naive_count(sp);
      double tn = 1e3 * (rt_now() - t0);
      sp_free(sp);
      if (nv != valid) {
        fprintf(stderr, "bench_space: %s: naive count %s != engine count %s\n", spaces[s].path,
                rt_count_str(nv, cb), rt_count_str(valid, vb));
        return 1;
      }
      snprintf(naive, sizeof naive, "%.1f", tn);
      snprintf(ratio, sizeof ratio, "%.1fx", tn / c.med);
    }
    if (cart <= (rt_count)30000000) {
      long long pv = -1;
      double tp = python_seconds(spaces[s].path, &pv);
      if (tp >= 0) {
        if ((rt_count)pv != valid) {
          fprintf(stderr, "bench_space: %s: Python count %lld != engine count %s\n",
                  spaces[s].path, pv, rt_count_str(valid, vb));
          return 1;
        }
        snprintf(py, sizeof py, "%.1f", 1e3 * tp);
        snprintf(pyratio, sizeof pyratio, "%.0fx", 1e3 * tp / c.med);
      }
    }
    printf("%-24s %22s %22s %22s %12s %12s %12s %10s\n", spaces[s].label, sizes, cs, ss, naive,
           ratio, py, pyratio);
    fflush(stdout);
  }
  free(t_count);
  free(t_sample);
  return 0;
}
