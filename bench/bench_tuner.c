/*
** bench_tuner.c -- the tuner's own cost in replay: every strategy replays
** the dedispersion recording (11,130 configurations, fully measured on an
** A100) for 10,000 evaluations (bayes, and bandit which runs bayes as an
** arm: 1,000 -- the surrogate is the point of them, and it costs), each
** run from a fresh seed, repeated to
** report median [min, max] of the wall time per run and of the framework
** time per evaluation. Baseline in the same run: the objective alone (a
** loop answering the same 10,000 configurations from the recording), so
** the difference is what the run loop and the strategy add. Also the
** loading of the T4 file itself (gunzip + JSON + import into an
** in-memory database), paid once per replay.
**
** usage: bench_tuner [REPEATS] (run from the project root; `make bench`)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tuner/tu.h"

#define T1 "data/t1/dedispersion_milo.json"
#define T4 "data/t4/dedispersion_milo_A100_T4.json.gz"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* median [min, max] of n values (sorted in place) */
static void stat3(double *x, int n, double *med, double *mn, double *mx) {
  qsort(x, (size_t)n, sizeof *x, cmp_double);
  *med = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
  *mn = x[0];
  *mx = x[n - 1];
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  if (reps < 1) reps = 1;
  rt_err err = {0};
  sp_space *sp = sp_load_file(T1, NULL, 0, &err);
  if (!sp) {
    fprintf(stderr, "bench_tuner: %s\n", err.msg);
    return 1;
  }
  double *load = malloc((size_t)reps * sizeof *load), *wall = malloc((size_t)reps * sizeof *wall),
         *fw = malloc((size_t)reps * sizeof *fw), a, b, c;
  tu_rec *rec = NULL;
  for (int r = 0; r < reps; r++) {
    double t0 = rt_now();
    tu_rec_free(rec);
    rec = tu_rec_t4(T4, sp, &err);
    load[r] = rt_now() - t0;
    if (!rec) {
      fprintf(stderr, "bench_tuner: %s\n", err.msg);
      return 1;
    }
  }
  stat3(load, reps, &a, &b, &c);
  printf("tuner: replay of %s (%lld configurations), %d runs per row\n", T4,
         (long long)tu_rec_n(rec), reps);
  printf("  loading the recording: %.1f ms [%.1f, %.1f]\n\n", a * 1e3, b * 1e3, c * 1e3);
  /* Baseline: the objective alone on 10,000 recorded configurations. */
  tu_objective obj = tu_rec_objective(rec);
  int n0 = 10000;
  for (int r = 0; r < reps; r++) {
    double t0 = rt_now();
    for (int i = 0; i < n0; i++) {
      tu_obs ob;
      obj.eval(obj.ctx, tu_rec_cfg(rec, (i * 7919) % tu_rec_n(rec)), &ob, NULL);
    }
    wall[r] = rt_now() - t0;
  }
  stat3(wall, reps, &a, &b, &c);
  printf("  %-12s %6s %24s %30s\n", "strategy", "evals", "wall per run (ms)",
         "framework per evaluation (us)");
  printf("  %-12s %6d %10.2f [%6.2f, %6.2f] %14s\n", "(lookup only)", n0, a * 1e3, b * 1e3, c * 1e3,
         "baseline");
  for (int s = 0; tu_strategies[s]; s++) {
    const tu_strategy *S = tu_strategies[s];
    if (S->needs_model) {   /* a T4 recording has no ceilings to model with */
      printf("  %-12s (needs a cost model: its replay cost over host recordings is the\n"
             "  %-12s  ms/eval column of experiments/cost_model/results/*/compare.txt)\n",
             S->name, "");
      continue;
    }
    int n = strcmp(S->name, "bayes") && strcmp(S->name, "bandit") ? n0 : 1000;
    for (int r = 0; r < reps; r++) {
      tu_run_opts o = {.strategy = S, .seed = (uint64_t)r + 1, .max_evals = n};
      double t0 = rt_now();
      tu_run *run = tu_run_strategy(sp, &obj, &o, NULL, &err);
      wall[r] = rt_now() - t0;
      if (!run) {
        fprintf(stderr, "bench_tuner: %s: %s\n", S->name, err.msg);
        return 1;
      }
      fw[r] = tu_run_framework_s(run) / (double)tu_run_n(run);
      tu_run_free(run);
    }
    double f1, f2, f3;
    stat3(wall, reps, &a, &b, &c);
    stat3(fw, reps, &f1, &f2, &f3);
    printf("  %-12s %6d %10.2f [%6.2f, %6.2f] %10.2f [%6.2f, %6.2f]\n", S->name, n, a * 1e3,
           b * 1e3, c * 1e3, f1 * 1e6, f2 * 1e6, f3 * 1e6);
  }
  tu_rec_free(rec);
  sp_free(sp);
  free(load);
  free(wall);
  free(fw);
  return 0;
}
