/*
** test_exp_model.c -- experiments 4 (fidelity) and 5 (search): each runs
** `rooftune experiment run NAME --quick --out <temp dir>` twice on the
** recorded database and checks its report against expectations computed
** here from the raw CSV: one Spearman of the fidelity table from the
** accuracy CSV (mid-ranks, Pearson on the ranks), one "trials to within 5%"
** row of the search table from the curves CSV (first trial within 5% of the
** optimum per run, median and quartiles by linear interpolation), and that
** the second run's tables equal the first's byte for byte, the second run
** made as another machine (host fingerprint forced to TK_OTHER_HOST): the
** recorded data's target comes from the data, not from the machine. Never
** writes into experiments/results/.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tk_exe.h"
#include "tk_exp.h"

static char rooftune[4096];

/* A fresh folder in DIR (len bytes) with NAME's quick run in it, made as
** host host_fp (NULL: this machine). */
static void run_quick(const char *name, char *dir, size_t len, const char *host_fp) {
  snprintf(dir, len, "/tmp/rt_exp_model_XXXXXX");
  assert_non_null(mkdtemp(dir));
  assert_int_equal(tk_exp_run_as(rooftune, name, dir, NULL, host_fp), 0);
}

/* The report's table row that starts with PREFIX: its cells into cell[]
** (trimmed); returns how many. */
static int row_cells(const char *dir, const char *prefix, char cell[][256], int max) {
  char path[4200], line[8192];
  snprintf(path, sizeof path, "%s/report.md", dir);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, prefix, strlen(prefix))) continue;
    char *p = line + 1;
    for (char *bar; n < max && (bar = strchr(p, '|')); p = bar + 1) {
      *bar = 0;
      while (*p == ' ') p++;
      size_t l = strlen(p);
      while (l && p[l - 1] == ' ') p[--l] = 0;
      snprintf(cell[n++], 256, "%.255s", p);
    }
    break;
  }
  fclose(f);
  return n;
}

/* ---- Spearman with mid-ranks ---- */

static const double *sort_key;
static int by_key(const void *a, const void *b) {
  double x = sort_key[*(const int *)a], y = sort_key[*(const int *)b];
  return (x > y) - (x < y);
}

static void midranks(const double *v, int n, double *rank) {
  int *ix = malloc((size_t)n * sizeof *ix);
  for (int i = 0; i < n; i++) ix[i] = i;
  sort_key = v;
  qsort(ix, (size_t)n, sizeof *ix, by_key);
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && v[ix[j + 1]] == v[ix[i]]) j++;
    for (int k = i; k <= j; k++) rank[ix[k]] = 0.5 * (i + j) + 1;   /* the mean of ranks i+1..j+1 */
    i = j + 1;
  }
  free(ix);
}

static double spearman(const double *x, const double *y, int n) {
  double *rx = malloc((size_t)n * sizeof *rx), *ry = malloc((size_t)n * sizeof *ry);
  midranks(x, n, rx);
  midranks(y, n, ry);
  double mx = 0, my = 0;
  for (int i = 0; i < n; i++) mx += rx[i], my += ry[i];
  mx /= n, my /= n;
  double sxy = 0, sxx = 0, syy = 0;
  for (int i = 0; i < n; i++) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  free(rx), free(ry);
  return sxy / sqrt(sxx * syy);
}

/* The last four comma-separated fields of an accuracy CSV line (the
** workload and configuration before them are quoted and hold commas):
** measured, predicted with defaults, predicted calibrated. */
static int last_fields(char *line, double *meas, double *pdef, double *pcal) {
  char *c[4], *p = line + strlen(line);
  for (int i = 0; i < 4; i++) {
    while (p > line && *p != ',') p--;
    if (p == line) return -1;
    c[i] = p + 1;
    *p = 0;
  }
  *meas = atof(c[3]), *pdef = atof(c[2]), *pcal = atof(c[1]);
  return 0;
}

static void check_spearman(const char *dir, const char *kernel, const char *setting,
                           const char *label) {
  char path[4200], line[8192];
  snprintf(path, sizeof path, "%s/seed1/%s_%s.csv", dir, kernel, setting);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  double meas[4096], pdef[4096], pcal[4096];
  int n = 0;
  assert_non_null(fgets(line, sizeof line, f));   /* header */
  while (n < 4096 && fgets(line, sizeof line, f))
    if (!last_fields(line, &meas[n], &pdef[n], &pcal[n])) n++;
  fclose(f);
  assert_true(n >= 10);
  double rho_cal = spearman(pcal, meas, n), rho_def = spearman(pdef, meas, n);
  char cell[16][256], prefix[256];
  snprintf(prefix, sizeof prefix, "| %s |", kernel);
  /* the row of that setting in table 1 */
  snprintf(path, sizeof path, "%s/report.md", dir);
  f = fopen(path, "r");
  assert_non_null(f);
  int found_cal = 0, found_def = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, prefix, strlen(prefix))) continue;
    char *p = line + 1;
    int m = 0;
    for (char *bar; m < 16 && (bar = strchr(p, '|')); p = bar + 1) {
      *bar = 0;
      while (*p == ' ') p++;
      size_t l = strlen(p);
      while (l && p[l - 1] == ' ') p[--l] = 0;
      snprintf(cell[m++], 256, "%.255s", p);
    }
    if (m != 10) continue;   /* table 1 has 10 columns; table 2 has 11 */
    if (!strcmp(cell[2], label) && !found_cal) {
      assert_int_equal(atoi(cell[3]), n);
      printf("  %s, %s: Spearman %s in the table, %.4f from the CSV (n = %d)\n", kernel, label, cell[4],
             rho_cal, n);
      assert_true(fabs(atof(cell[4]) - rho_cal) <= 0.0006);
      found_cal = 1;
    } else if (!strcmp(cell[2], "defaults") && !found_def) {
      assert_true(fabs(atof(cell[4]) - rho_def) <= 0.0006);
      found_def = 1;
    }
  }
  fclose(f);
  assert_true(found_cal && found_def);
}

static void t100_fidelity(void **state) {
  (void)state;
  char d1[64], d2[64];
  run_quick("fidelity", d1, sizeof d1, NULL);
  static const char *const files[] = {"report.md", "accuracy.csv", "calibrations.csv", "cost_model.db",
                                      "commands.txt", "scatter_reduction.png", "scatter_reduction.svg",
                                      "scatter_conv2d.png", "scatter_conv2d.svg"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    if (!tk_exp_exists(d1, files[i])) fail_msg("%s/%s is missing", d1, files[i]);
  }
  check_spearman(d1, "reduction", "time", "calibrated: time terms");
  check_spearman(d1, "conv2d", "counters", "calibrated: time + counted traffic");
  /* a second run on the same recorded data, as another machine: the same
  ** tables (and the recorded target named in the report) */
  run_quick("fidelity", d2, sizeof d2, TK_OTHER_HOST);
  char *a = tk_exp_tables(d1, "report.md", 5), *b = tk_exp_tables(d2, "report.md", 5);
  assert_non_null(strstr(a, "| host | 34f2c7239ccbcf6b0cca94b1499b3252 |"));
  assert_string_equal(a, b);
  free(a), free(b);
  tk_rm_rf(d1);
  tk_rm_rf(d2);
}

/* ---- trials to within 5% from the curves ---- */

static int cmp_int(const void *a, const void *b) {
  return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static double quantile(const int *x, int n, double p) {   /* sorted x; type 7 */
  double h = (n - 1) * p;
  int lo = (int)h;
  return lo + 1 < n ? x[lo] + (h - lo) * (x[lo + 1] - x[lo]) : x[lo];
}

static void check_trials(const char *dir, const char *space, const char *strategy) {
  char path[4200], line[1024], strat[64];
  snprintf(path, sizeof path, "%s/%s/curves.csv", dir, space);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  assert_non_null(fgets(line, sizeof line, f));
  assert_string_equal(line, "strategy,repeat,seed,k,best_s,random_expected_s,spent_s\n");
  /* two passes: the optimum, then each run's first trial within 5% */
  double opt = INFINITY;
  int kmax = 0, rep, seed, k;
  double best, rexp;
  while (fgets(line, sizeof line, f)) {
    assert_int_equal(sscanf(line, "%63[^,],%d,%d,%d,%lf,%lf", strat, &rep, &seed, &k, &best, &rexp), 6);
    if (best < opt) opt = best;
    if (k > kmax) kmax = k;
  }
  rewind(f);
  assert_non_null(fgets(line, sizeof line, f));
  int first[256];
  for (int i = 0; i < 256; i++) first[i] = 0;
  int nrep = 0;
  while (fgets(line, sizeof line, f)) {
    sscanf(line, "%63[^,],%d,%d,%d,%lf,%lf", strat, &rep, &seed, &k, &best, &rexp);
    if (strcmp(strat, strategy)) continue;
    assert_true(rep >= 0 && rep < 256);
    if (rep + 1 > nrep) nrep = rep + 1;
    if (!first[rep] && best <= 1.05 * opt) first[rep] = k;
  }
  fclose(f);
  assert_true(nrep >= 2);
  for (int i = 0; i < nrep; i++)
    if (!first[i]) first[i] = kmax + 1;
  qsort(first, (size_t)nrep, sizeof *first, cmp_int);
  double med = quantile(first, nrep, 0.5), q1 = quantile(first, nrep, 0.25),
         q3 = quantile(first, nrep, 0.75);
  char cell[16][256], prefix[256], expect[256];
  snprintf(prefix, sizeof prefix, "| %s | %s |", space, strategy);
  assert_int_equal(row_cells(dir, prefix, cell, 16), 7);
  printf("  %s, %s: %s trials %s in the table; %g [%g, %g] from the curves (%d runs, optimum %g s)\n",
         space, strategy, cell[3], cell[4], med, q1, q3, nrep, opt);
  assert_int_equal(atoi(cell[2]), nrep);
  snprintf(expect, sizeof expect, "%g", med);
  assert_string_equal(cell[3], expect);
  snprintf(expect, sizeof expect, "[%g, %g]", q1, q3);
  assert_string_equal(cell[4], expect);
}

static void t200_search(void **state) {
  (void)state;
  char d1[64], d2[64];
  run_quick("search", d1, sizeof d1, NULL);
  static const char *const files[] = {"report.md", "trials_to_5pct.csv", "cost_model.db", "commands.txt",
                                      "gemm/curves.csv", "gemm/scores.csv", "curves_gemm.png",
                                      "curves_gemm.svg", "curves_reduction.png", "curves_reduction.svg"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    if (!tk_exp_exists(d1, files[i])) fail_msg("%s/%s is missing", d1, files[i]);
  }
  check_trials(d1, "gemm", "random");
  check_trials(d1, "reduction", "annealing");
  /* random's own ratio is 1 */
  char cell[16][256];
  assert_int_equal(row_cells(d1, "| gemm | random |", cell, 16), 7);
  assert_string_equal(cell[6], "1.00");
  run_quick("search", d2, sizeof d2, TK_OTHER_HOST);
  char *a = tk_exp_tables(d1, "report.md", 5), *b = tk_exp_tables(d2, "report.md", 5);
  assert_string_equal(a, b);
  free(a), free(b);
  tk_rm_rf(d1);
  tk_rm_rf(d2);
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], rooftune, sizeof rooftune)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(t100_fidelity),
    cmocka_unit_test(t200_search),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
