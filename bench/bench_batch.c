/*
** bench_batch.c -- what measuring a candidate costs beyond its own work,
** one worker child per candidate (tg_measure) against one per batch
** (tg_measure_batch, where the target's row measures batches): N
** configurations of a kernel spread evenly over its space (ranks
** i * count / N), built into a fresh compile cache first, then measured
** both ways in every repeat (alternating, so that drift hits both). A
** candidate's overhead is its wall time less what the harness reports it
** spent building (a cache hit), verifying and timing; per repeat, the
** mean over the N candidates. Prints median [min, max] over the repeats
** of each way, the ratio of the medians, and whether both ways gave every
** candidate the same status.
**
** usage: bench_batch [TARGET [KERNEL [N [REPEATS [SET]]]]] (run from the
** project root; `make bench`); defaults: the first OpenCL device
** (opencl:0.0), reduction, 48 configurations, 5 repeats, N=1048576.
** Skipped, with the reason, where the target is not here.
*/
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure/ms.h"
#include "search_spaces/sp.h"
#include "targets/kn.h"
#include "targets/tg.h"

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

static double work_of(const ms_result *r) { return r->compile_s + r->verify_s + r->bench_s; }

static int rm_entry(const char *p, const struct stat *s, int f, struct FTW *w) {
  (void)s, (void)f, (void)w;
  return remove(p);
}

int main(int argc, char **argv) {
  const char *target = argc > 1 ? argv[1] : "opencl:0.0";
  const char *kname = argc > 2 ? argv[2] : "reduction";
  int n = argc > 3 ? atoi(argv[3]) : 48, reps = argc > 4 ? atoi(argv[4]) : 5;
  const char *user = argc > 5 ? argv[5] : "N=1048576";
  if (n < 2 || reps < 1) {
    fprintf(stderr, "usage: bench_batch [TARGET [KERNEL [N>=2 [REPEATS>=1 [SET]]]]]\n");
    return 2;
  }
  rt_err err = {0};
  tg_target t;
  tg_desc d;
  if (tg_resolve(target, &t, &err) || tg_describe(&t, &d, &err)) {
    printf("bench_batch: skipped: %s\n", err.msg);
    return 0;
  }
  const kn_kernel *k = tg_kernel(&t, kname);
  char *set = k ? tg_bindings(&t, user, &err) : NULL;
  if (!k || !set) {
    fprintf(stderr, "bench_batch: %s\n", k ? err.msg : "no such kernel on this target");
    return 1;
  }
  sx_arena *arena = sx_arena_new();
  sp_binding *b = NULL;
  char path[4096];
  int nb = sp_parse_bindings(set, arena, &b, &err);
  sp_space *sp = nb < 0 ? NULL : sp_load_file(rt_project_path(k->space, path, sizeof path), b, nb, &err);
  free(b);
  if (!sp) {
    fprintf(stderr, "bench_batch: %s: %s\n", k->space, err.msg);
    return 1;
  }
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  ms_workload *w = ms_workload_new(k, &pb, &err);
  if (!w) {
    fprintf(stderr, "bench_batch: %s\n", err.msg);
    return 1;
  }
  rt_count count = sp_count(sp);
  if ((rt_count)n > count) n = (int)count;
  int np = sp_nparams(sp), *cfg = malloc((size_t)np * sizeof *cfg);
  char **src = malloc((size_t)n * sizeof *src);
  for (int i = 0; i < n; i++) {
    if (sp_unrank(sp, count / (rt_count)n * (rt_count)i, cfg)) return 1;
    src[i] = k->codegen(&pb, sp, cfg);
  }
  char cache[64];
  snprintf(cache, sizeof cache, "/tmp/rooftune-bench-batch-XXXXXX");
  if (!mkdtemp(cache)) return 1;
  ms_opts o;
  ms_opts_default(&o);
  o.cache_dir = cache;
  o.time_cap = 0.01, o.min_reps = 3, o.max_reps = 20, o.warmup = 1;
  double t0 = rt_now();
  tg_prebuild(&t, (const char *const *)src, n, NULL, &o, 0);
  double build_s = rt_now() - t0;
  char cn[48];
  printf("bench_batch: %s (%s) on %s: %d configurations spread over its space of %s, %d repeats; "
         "built in %.1f s (in parallel, a fresh cache)\n", kname, set, t.name, n,
         rt_count_str(count, cn), reps, build_s);
  printf("  the row measures batches: %s\n", tg_batches(&t, &o) ? "yes" : "no (one by one both ways)");
  ms_result *one = calloc((size_t)n, sizeof *one), *bat = calloc((size_t)n, sizeof *bat);
  double *ov1 = malloc((size_t)reps * sizeof *ov1), *ovb = malloc((size_t)reps * sizeof *ovb);
  int same = 1, nok = 0;
  for (int r = 0; r < reps; r++) {
    double sum = 0;
    for (int i = 0; i < n; i++) {
      double s = rt_now();
      if (tg_measure(&t, w, src[i], NULL, &o, &one[i])) {
        fprintf(stderr, "bench_batch: the harness failed: %s\n", one[i].msg);
        return 1;
      }
      sum += rt_now() - s - work_of(&one[i]);
    }
    ov1[r] = sum / n;
    double s = rt_now();
    if (tg_measure_batch(&t, w, (const char *const *)src, n, &o, bat, NULL, &err) != n) {
      fprintf(stderr, "bench_batch: the harness failed: %s\n", err.msg);
      return 1;
    }
    double wall = rt_now() - s;
    for (int i = 0; i < n; i++) {
      wall -= work_of(&bat[i]);
      if (one[i].status != bat[i].status) {
        same = 0;
        printf("  configuration %d: %s one by one, %s in a batch (%s)\n", i,
               ms_status_name(one[i].status), ms_status_name(bat[i].status), bat[i].msg);
      }
      nok += r == 0 && bat[i].status == MS_OK;
    }
    ovb[r] = wall / n;
  }
  double m1, lo1, hi1, mb, lob, hib;
  stat3(ov1, reps, &m1, &lo1, &hi1);
  stat3(ovb, reps, &mb, &lob, &hib);
  printf("  overhead per candidate, one worker each:  %8.2f ms [%.2f, %.2f]\n", m1 * 1e3, lo1 * 1e3,
         hi1 * 1e3);
  printf("  overhead per candidate, one per batch:    %8.2f ms [%.2f, %.2f]\n", mb * 1e3, lob * 1e3,
         hib * 1e3);
  printf("  ratio of the medians: %.1fx; statuses %s (%d of %d ok)\n", m1 / mb,
         same ? "the same both ways" : "DIFFER", nok, n);
  for (int i = 0; i < n; i++) free(src[i]);
  free(src), free(cfg), free(one), free(bat), free(ov1), free(ovb), free(set);
  ms_workload_free(w);
  sp_free(sp);
  sx_arena_free(arena);
  nftw(cache, rm_entry, 16, FTW_DEPTH | FTW_PHYS);   /* made by this run only */
  return same ? 0 : 1;
}
