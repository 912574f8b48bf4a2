/*
** test_exp_host.c -- experiments 3 (roofline) and 6 (vendor) run end to end
** in their quick form into temporary folders (never experiments/results/),
** and their tables checked against what they were made from:
**  - roofline: every kernel's row against the database trial it names
**    (time) and the campaign's pin decision (that trial, tuned or default,
**    its reason in the report), the kernel's flops and compulsory bytes recomputed here from
**    the workload's sizes (GFLOP/s, GB/s), the fraction of the bound
**    recomputed from the row's ceiling; fractions positive, and any
**    fraction above 105% flagged in the report; a second run on the first
**    run's database gives the identical table. Both run as one host that
**    is no real machine (TK_OTHER_HOST): --ceilings names the committed
**    cost_model.db, which then holds no ceilings of this host, whichever
**    machine runs the test, so the run measures its own (and says so);
**  - vendor, two repeats of the sweep: the ratio column is the two times'
**    ratio, the tuned time is its repeat's database trial's (the campaign's
**    pin decision; the report counts those that kept the default), OpenBLAS's
**    time the campaign report's baseline; the summary's medians, extremes
**    and won/lost counts over the repeats and the report's geometric mean
**    recomputed from the rows; the report states OPENBLAS_CORETYPE,
**    OpenBLAS's threads and the seeds;
**    the GPU table (when the H200 database is present) holds the cuBLAS
**    baseline recorded in the model-guided campaign.
** The binary is found next to the test's own directory (BUILD/tests/..).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tk_exe.h"
#include "tk_exp.h"

static char rooftune[4096];

/* Split a CSV line (no quoted fields in these files) in place. */
static int split(char *line, char **f, int max) {
  int n = 0;
  for (char *p = line; n < max;) {
    f[n++] = p;
    char *c = strchr(p, ',');
    if (!c) break;
    *c = 0;
    p = c + 1;
  }
  return n;
}

/* The value of VAR in a workload "M=256 N=256 K=256" (def when absent). */
static double var(const char *w, const char *name, double def) {
  size_t n = strlen(name);
  for (const char *p = w; *p;) {
    while (*p == ' ') p++;
    if (!strncmp(p, name, n) && p[n] == '=') return atof(p + n + 1);
    while (*p && *p != ' ') p++;
  }
  return def;
}

/* The kernels' flops and compulsory bytes, written down here from their
** definitions (not rooftune's code): gemm 2MNK over A, B read and C read
** and written; conv2d 2*N*K*P*Q*C*R*S; the 5-point stencil 6 flops a point
** a step over a grid with its fixed boundary; a sum of N floats N-1 adds. */
static void work_of(const char *k, const char *w, double *flops, double *bytes) {
  *flops = *bytes = 0;
  if (!strcmp(k, "gemm")) {
    double m = var(w, "M", 0), n = var(w, "N", 0), kk = var(w, "K", 0);
    *flops = 2 * m * n * kk;
    *bytes = 4 * (m * kk + kk * n + 2 * m * n);
  } else if (!strcmp(k, "conv2d")) {
    double N = var(w, "N", 0), H = var(w, "H", 0), W = var(w, "W", 0), C = var(w, "C", 0);
    double K = var(w, "K", 0), R = var(w, "R", 0), S = var(w, "S", 0);
    double pad = var(w, "pad", 0), stride = var(w, "stride", 1);
    double P = floor((H + 2 * pad - R) / stride) + 1, Q = floor((W + 2 * pad - S) / stride) + 1;
    *flops = 2 * N * K * P * Q * C * R * S;
    *bytes = 4 * (N * C * H * W + K * C * R * S + N * K * P * Q);
  } else if (!strcmp(k, "stencil")) {
    double nx = var(w, "NX", 0), ny = var(w, "NY", 0), steps = var(w, "STEPS", 0);
    *flops = 6 * nx * ny * steps;
    *bytes = 8 * (nx + 2) * (ny + 2);
  } else if (!strcmp(k, "transpose")) {
    *flops = 0;
    *bytes = 8 * var(w, "M", 0) * var(w, "N", 0);
  } else if (!strcmp(k, "reduction")) {
    double n = var(w, "N", 0);
    *flops = n - 1;
    *bytes = 4 * (n + 1);
  } else {
    fail_msg("unknown kernel %s", k);
  }
}

static double trial_time(sqlite3 *db, long long id) {
  sqlite3_stmt *s;
  assert_int_equal(sqlite3_prepare_v2(db, "SELECT time FROM trials WHERE id = ? AND status = 'ok'",
                                      -1, &s, NULL), SQLITE_OK);
  sqlite3_bind_int64(s, 1, id);
  assert_int_equal(sqlite3_step(s), SQLITE_ROW);
  double t = sqlite3_column_double(s, 0);
  sqlite3_finalize(s);
  return t;
}

static void near(double got, double want, double rel, const char *what) {
  if (!(fabs(got - want) <= rel * fabs(want)))
    fail_msg("%s: %.9g, expected %.9g", what, got, want);
}

static const char *const kernels[] = {"gemm", "conv2d", "stencil", "transpose", "reduction"};

static void roofline(void **state) {
  (void)state;
  char d1[] = "/tmp/rt_exp_roofline1_XXXXXX", d2[] = "/tmp/rt_exp_roofline2_XXXXXX";
  assert_non_null(mkdtemp(d1));
  assert_non_null(mkdtemp(d2));
  static const char *const args1[] = {"--ceilings", "experiments/cost_model/results/cost_model.db",
                                      NULL};
  assert_int_equal(tk_exp_run_as(rooftune, "roofline", d1, args1, TK_OTHER_HOST), 0);
  char *rep = tk_exp_file(d1, "report.md"), *csv = tk_exp_file(d1, "roofline.csv");
  assert_non_null(rep);
  assert_non_null(csv);
  assert_non_null(strstr(rep, "Seeds: every campaign --seed 1"));
  assert_non_null(strstr(rep, "OPENBLAS_CORETYPE="));
  assert_non_null(strstr(rep, "rooftune tune --db"));
  assert_non_null(strstr(rep, "holds no ceilings of this host (fingerprint " TK_OTHER_HOST ")"));
  for (const char *f = "roofline.png\0roofline.svg\0bandwidth.png\0bandwidth.svg\0roofline.gp\0"
                       "roofline.db\0ceilings.json\0";
       *f; f += strlen(f) + 1)
    assert_true(tk_exp_exists(d1, f));
  char db_path[4200];
  snprintf(db_path, sizeof db_path, "%s/roofline.db", d1);
  sqlite3 *db;
  assert_int_equal(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  int rows = 0, seen[5] = {0};
  char *save = NULL;
  for (char *line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "kernel,", 7)) continue;
    char *f[24];
    /* kernel,workload,campaign,trial,threads,time_s,ci_lo_s,ci_hi_s,repeats,noisy,flops,
    ** bytes,intensity,gflops,gbs,bound,bound_work,bound_ceiling,fraction,coefficients,pinned */
    assert_int_equal(split(line, f, 24), 21);
    rows++;
    /* the row is the campaign's pin decision (tuned, or the default kept) */
    char jn[64];
    snprintf(jn, sizeof jn, "tune_%s.json", f[0]);
    char *js = tk_exp_file(d1, jn);
    json_t *j = json_loads(js, 0, NULL), *dec = json_object_get(j, "decision");
    assert_non_null(dec);
    assert_int_equal(json_integer_value(json_object_get(dec, "trial")), atoll(f[3]));
    assert_string_equal(json_string_value(json_object_get(dec, "choice")), f[20]);
    assert_true(!strcmp(f[20], "tuned") || !strcmp(f[20], "default"));
    assert_non_null(strstr(rep, json_string_value(json_object_get(dec, "reason"))));
    json_decref(j);
    free(js);
    for (int i = 0; i < 5; i++) seen[i] += !strcmp(f[0], kernels[i]);
    double t = trial_time(db, atoll(f[3])), flops, bytes;
    work_of(f[0], f[1], &flops, &bytes);
    near(atof(f[5]), t, 1e-6, "time against the database trial");
    assert_true(atof(f[6]) <= t && t <= atof(f[7]));
    assert_true(atoi(f[8]) >= 1);
    near(atof(f[10]) + 1, flops + 1, 1e-9, "flops");
    near(atof(f[11]), bytes, 1e-9, "compulsory bytes");
    if (flops > 0) near(atof(f[13]), flops / t * 1e-9, 1e-4, "GFLOP/s = flops / time");
    else assert_true(atof(f[13]) == 0);
    near(atof(f[14]), bytes / t * 1e-9, 1e-4, "GB/s = bytes / time");
    double frac = atof(f[18]), ceil = atof(f[17]);
    int compute = !strcmp(f[15], "compute");
    if (!strcmp(f[15], "overhead")) {   /* the model finds no ceiling limits it */
      assert_true(frac == -1);
      continue;
    }
    assert_true(compute || !strcmp(f[15], "L1") || !strcmp(f[15], "L2") ||
                !strcmp(f[15], "L3") || !strcmp(f[15], "DRAM"));
    near(frac, (compute ? flops : atof(f[16])) / t / ceil, 2e-3, "fraction of the bound");
    assert_true(frac > 0);
    /* a fraction above 105% is flagged in the table and named below it */
    char key[160];
    snprintf(key, sizeof key, "| %s | %s |", f[0], f[1]);
    const char *row = strstr(rep, key);
    assert_non_null(row);
    const char *eol = strchr(row, '\n');
    const char *flag = strstr(row, "(above: see below)");
    assert_int_equal(frac > 1.05, flag && flag < eol);
    if (frac > 1.05) {
      const char *para = strstr(rep, "**Above the measured ceiling:**");
      assert_non_null(para);
      assert_non_null(strstr(para, f[0]));
    }
  }
  sqlite3_close(db);
  assert_int_equal(rows, 5);
  for (int i = 0; i < 5; i++) assert_int_equal(seen[i], 1);
  /* a second run on the recorded data: the identical table */
  char from[4200];
  snprintf(from, sizeof from, "%s/roofline.db", d1);
  const char *args2[] = {"--db", from, NULL};
  assert_int_equal(tk_exp_run_as(rooftune, "roofline", d2, args2, TK_OTHER_HOST), 0);
  char *t1 = tk_exp_file(d1, "roofline_table.md"), *t2 = tk_exp_file(d2, "roofline_table.md");
  assert_non_null(t1);
  assert_non_null(t2);
  assert_string_equal(t1, t2);
  free(t1);
  free(t2);
  free(rep);
  free(csv);
  tk_rm_rf(d1);
  tk_rm_rf(d2);
}

/* The median of n values (sorted here). */
static double median_of(double *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j];
      v[j] = v[j - 1], v[j - 1] = t;
    }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void vendor(void **state) {
  (void)state;
  char d[] = "/tmp/rt_exp_vendor_XXXXXX";
  assert_non_null(mkdtemp(d));
  enum { R = 2, SHAPES = 4 };   /* --quick: 4 shapes; two repeats of the sweep */
  static const char *const args[] = {"--repeats", "2", NULL};
  assert_int_equal(tk_exp_run(rooftune, "vendor", d, args), 0);
  char *rep = tk_exp_file(d, "report.md"), *csv = tk_exp_file(d, "host.csv");
  assert_non_null(strstr(rep, "every campaign --seed r, r = 1..2"));
  assert_non_null(strstr(rep, "Fixed environment: OPENBLAS_CORETYPE="));
  assert_non_null(strstr(rep, "OPENBLAS_NUM_THREADS="));
  for (const char *f = "ratio.png\0ratio.svg\0ratio.gp\0vendor_seed1.db\0vendor_seed2.db\0"
                       "host_table.md\0host_summary.csv\0base.db\0";
       *f; f += strlen(f) + 1)
    assert_true(tk_exp_exists(d, f));
  /* the exact commands include each repeat's copy of base.db */
  char *cmds = tk_exp_file(d, "commands.txt");
  for (int r = 1; r <= R; r++) {
    char cp[9000];
    snprintf(cp, sizeof cp, "rooftune db copy --db %s/base.db --out %s/vendor_seed%d.db\n", d, d, r);
    if (!strstr(cmds, cp)) fail_msg("commands.txt lacks \"%s\"", cp);
  }
  free(cmds);
  sqlite3 *db[R + 1] = {NULL};
  for (int r = 1; r <= R; r++) {
    char db_path[4200];
    snprintf(db_path, sizeof db_path, "%s/vendor_seed%d.db", d, r);
    assert_int_equal(sqlite3_open_v2(db_path, &db[r], SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  }
  char *table = tk_exp_file(d, "host_table.md");
  /* per shape (in host.csv's order): the repeats' tuned and OpenBLAS times,
  ** ratios, and the campaigns won and lost with disjoint CIs */
  char shape[SHAPES][96];
  double tuned_v[SHAPES][R], blas_v[SHAPES][R], ratio_v[SHAPES][R];
  int nshape = 0, per[SHAPES] = {0}, won[SHAPES] = {0}, lost[SHAPES] = {0}, rows = 0, kept = 0;
  char *save = NULL;
  for (char *line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "shape,", 6)) continue;
    char *f[24];
    /* shape,M,N,K,seed,campaign,trial,threads,tuned_s,tuned_lo_s,tuned_hi_s,tuned_repeats,
    ** blas_s,blas_lo_s,blas_hi_s,blas_repeats,ratio,gflops_tuned,gflops_blas,pinned */
    assert_int_equal(split(line, f, 24), 20);
    rows++;
    kept += !strcmp(f[19], "default");
    double m = atof(f[1]), n = atof(f[2]), k = atof(f[3]);
    int seed = atoi(f[4]);
    assert_true(seed >= 1 && seed <= R);
    char name[96];
    snprintf(name, sizeof name, "%.0fx%.0fx%.0f", m, n, k);
    assert_string_equal(f[0], name);
    double tuned = atof(f[8]), blas = atof(f[12]);
    near(tuned, trial_time(db[seed], atoll(f[6])), 1e-6, "tuned time against its repeat's database trial");
    /* OpenBLAS: the baseline the same campaign's report recorded */
    char jn[160];
    snprintf(jn, sizeof jn, "tune_%s_seed%d.json", f[0], seed);
    char *js = tk_exp_file(d, jn);
    json_error_t je;
    json_t *j = json_loads(js, 0, &je);
    assert_non_null(j);
    json_t *b = json_object_get(j, "baseline");
    assert_string_equal(json_string_value(json_object_get(b, "what")), "-lopenblas");
    assert_int_equal(json_integer_value(json_object_get(j, "campaign")), atoll(f[5]));
    json_t *dec = json_object_get(j, "decision");   /* the trial is the pin decision's */
    assert_int_equal(json_integer_value(json_object_get(dec, "trial")), atoll(f[6]));
    assert_string_equal(json_string_value(json_object_get(dec, "choice")), f[19]);
    near(blas, json_real_value(json_object_get(b, "time_s")), 1e-6, "OpenBLAS time");
    assert_int_equal(json_integer_value(json_object_get(b, "repeats")), atoi(f[15]));
    assert_true(atoi(f[15]) >= 1 && atoi(f[11]) >= 1);
    json_decref(j);
    free(js);
    assert_true(atof(f[13]) <= blas && blas <= atof(f[14]));
    near(atof(f[16]), blas / tuned, 1e-5, "ratio = OpenBLAS time / tuned time");
    near(atof(f[17]), 2 * m * n * k / tuned * 1e-9, 1e-5, "tuned GFLOP/s");
    near(atof(f[18]), 2 * m * n * k / blas * 1e-9, 1e-5, "OpenBLAS GFLOP/s");
    char cell[160];
    snprintf(cell, sizeof cell, "| %s | %d |", f[0], seed);
    const char *row = strstr(table, cell);
    assert_non_null(row);
    /* the table rounds the exact ratio to 3 decimals, the CSV's times are
    ** rounded too: near a rounding boundary either neighbour is right */
    int found = 0;
    for (int e = -1; e <= 1 && !found; e++) {
      snprintf(cell, sizeof cell, "| %.3f |", blas / tuned * (1 + e * 2e-5));
      found = strstr(row, cell) && strstr(row, cell) < strchr(row, '\n');
    }
    if (!found) fail_msg("the table's ratio for %s seed %d is not %.3f", f[0], seed, blas / tuned);
    int s = 0;
    while (s < nshape && strcmp(shape[s], f[0])) s++;
    if (s == nshape) {
      assert_true(nshape < SHAPES);
      snprintf(shape[nshape++], sizeof shape[0], "%s", f[0]);
    }
    assert_true(per[s] < R);
    tuned_v[s][per[s]] = tuned, blas_v[s][per[s]] = blas, ratio_v[s][per[s]] = blas / tuned;
    per[s]++;
    won[s] += atof(f[10]) < atof(f[13]);
    lost[s] += atof(f[9]) > atof(f[14]);
  }
  assert_int_equal(rows, R * SHAPES);
  assert_int_equal(nshape, SHAPES);
  /* host_summary.csv: medians, extremes and counts recomputed from the rows */
  char *sum = tk_exp_file(d, "host_summary.csv");
  int srows = 0;
  double log_sum = 0;
  save = NULL;
  for (char *line = strtok_r(sum, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "shape,", 6)) continue;
    char *f[24];
    /* shape,M,N,K,repeats,tuned_median_s,tuned_min_s,tuned_max_s,blas_median_s,blas_min_s,
    ** blas_max_s,ratio_median,ratio_min,ratio_max,wins,losses,gflops_tuned,gflops_blas */
    assert_int_equal(split(line, f, 24), 18);
    int s = 0;
    while (s < nshape && strcmp(shape[s], f[0])) s++;
    assert_true(s < nshape);
    assert_int_equal(per[s], R);
    assert_int_equal(atoi(f[4]), R);
    double mt = median_of(tuned_v[s], R), mb = median_of(blas_v[s], R), mr = median_of(ratio_v[s], R);
    near(atof(f[5]), mt, 1e-6, "median tuned time");
    near(atof(f[6]), tuned_v[s][0], 1e-6, "fastest tuned time");
    near(atof(f[7]), tuned_v[s][R - 1], 1e-6, "slowest tuned time");
    near(atof(f[8]), mb, 1e-6, "median OpenBLAS time");
    near(atof(f[9]), blas_v[s][0], 1e-6, "fastest OpenBLAS time");
    near(atof(f[10]), blas_v[s][R - 1], 1e-6, "slowest OpenBLAS time");
    near(atof(f[11]), mr, 1e-5, "median ratio");
    near(atof(f[12]), ratio_v[s][0], 1e-5, "lowest ratio");
    near(atof(f[13]), ratio_v[s][R - 1], 1e-5, "highest ratio");
    assert_int_equal(atoi(f[14]), won[s]);
    assert_int_equal(atoi(f[15]), lost[s]);
    log_sum += log(mr);
    srows++;
  }
  assert_int_equal(srows, SHAPES);
  char geo[96];
  snprintf(geo, sizeof geo, "median OpenBLAS / tuned: %.3f over %d shapes", exp(log_sum / SHAPES), SHAPES);
  if (!strstr(rep, geo)) fail_msg("report.md lacks \"%s\"", geo);
  snprintf(geo, sizeof geo, "; %d pinned the default schedule", kept);
  if (!strstr(rep, geo)) fail_msg("report.md lacks \"%s\"", geo);
  for (int r = 1; r <= R; r++) sqlite3_close(db[r]);
  free(sum);
  /* the GPU: the cuBLAS baseline of the H200's model-guided campaign (2) */
  if (access("experiments/results/h200/h200.db", R_OK) == 0) {
    assert_non_null(strstr(rep, "not in this run"));
    char *g = tk_exp_file(d, "gpu.csv");
    assert_non_null(g);
    int found = 0;
    save = NULL;
    for (char *line = strtok_r(g, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
      if (!strncmp(line, "campaign,", 9)) continue;
      char *f[24];
      assert_int_equal(split(line, f, 24), 20);
      near(atof(f[16]), atof(f[12]) / atof(f[8]), 1e-5, "GPU ratio");
      if (!strcmp(f[0], "2")) {
        found = 1;
        near(atof(f[12]), 0.00268105602264404, 1e-6, "cuBLAS time of campaign 2");
        near(atof(f[8]), 0.0030029759407043458, 1e-6, "tuned time of campaign 2");
      }
    }
    assert_true(found);
    free(g);
  }
  free(table);
  free(rep);
  free(csv);
  tk_rm_rf(d);
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], rooftune, sizeof rooftune)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(roofline),
    cmocka_unit_test(vendor),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
