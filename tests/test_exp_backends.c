/*
** test_exp_backends.c -- the experiment `backends` (one kernel on every
** backend of this machine) run end to end in its quick form into a
** temporary folder (never experiments/results/), and its outputs checked
** against expectations computed here:
**  - the targets: every target `rooftune targets --json` shows available
**    (read here with jansson, not the script's sqlite3) and timed is
**    measured, host first; every one it shows unavailable or untimed
**    (emulated: "timed": false) is named in the report as skipped, with
**    its reason. With no OpenCL device available, the OpenCL
**    checks are skipped with a message;
**  - backends.csv: for each kernel and measured target exactly R rows, rounds
**    1..R, the rounds in order (round r of every target before round r+1 of
**    any: the targets alternate); each median inside its 95% CI; the bytes
**    the compulsory bytes recomputed here from the workload; each row's
**    measurement the campaign's pinned schedule (the measure report's
**    schedule = the pin lookup's = the campaign's decision);
**  - summary.csv and the report's table: the median of the round medians,
**    the fastest and slowest round, GB/s, recomputed in C from the CSV rows;
**    every ratio the quotient of its target's and host's medians (also of
**    the two medians the table prints), its min-max the extremes of the same
**    round's quotients;
**  - the report states the machine's CPUs and /proc/loadavg before and after,
**    and the exact commands (bench --quick and tune --strategy model
**    --budget 6 per target).
** The binary is found next to the test's own directory (BUILD/tests/..).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tk_exe.h"
#include "tk_exp.h"

static char rooftune[4096];

enum { R = 2, MAXT = 16, NK = 2 };   /* --quick: 2 rounds; two kernels */
static const char *const kernels[NK] = {"reduction", "transpose"};

/* The quick workloads' compulsory bytes, written down from the kernels'
** definitions: a sum of N floats reads N and writes 1; a transpose of
** M x N floats reads and writes each once. */
static double bytes_of(const char *k) {
  if (!strcmp(k, "reduction")) return 4.0 * (1048576 + 1);
  return 8.0 * 512 * 512;
}

static void near(double got, double want, double rel, const char *what, const char *k, const char *t) {
  if (!(fabs(got - want) <= rel * fabs(want)))
    fail_msg("%s on %s: %s: %.9g, expected %.9g", k, t, what, got, want);
}

/* Split a line at sep in place (no quoting in these files); the count. */
static int split(char *line, char sep, char **f, int max) {
  int n = 0;
  for (char *p = line; n < max;) {
    f[n++] = p;
    char *c = strchr(p, sep);
    if (!c) break;
    *c = 0;
    p = c + 1;
  }
  return n;
}

/* The median of n values (sorted here). */
static double median_of(double *v, int n) {
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double x = v[j];
      v[j] = v[j - 1], v[j - 1] = x;
    }
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* DIR/NAME parsed as JSON (the test fails when it is missing or bad). */
static json_t *load_json(const char *dir, const char *name) {
  char *s = tk_exp_file(dir, name);
  json_error_t e;
  json_t *j = json_loads(s, 0, &e);
  if (!j) fail_msg("%s/%s: %s (line %d)", dir, name, e.text, e.line);
  free(s);
  return j;
}

/* A target's name as the script writes it into file names. */
static void fname(const char *t, char *out, size_t cap) {
  snprintf(out, cap, "%s", t);
  for (char *p = out; *p; p++)
    if (*p == ':' || *p == '.') *p = '_';
}

static void backends(void **state) {
  (void)state;
  char d[] = "/tmp/rt_exp_backends_XXXXXX";
  assert_non_null(mkdtemp(d));
  assert_int_equal(tk_exp_run(rooftune, "backends", d, NULL), 0);
  char *rep = tk_exp_file(d, "report.md"), *csv = tk_exp_file(d, "backends.csv");

  /* the targets, as rooftune targets --json gave them to the run */
  json_t *tj = load_json(d, "targets.json");
  assert_true(json_is_array(tj));
  const char *tname[MAXT];
  int nt = 0, nocl = 0;
  size_t i;
  json_t *e;
  json_array_foreach(tj, i, e) {
    const char *n = json_string_value(json_object_get(e, "name"));
    assert_non_null(n);
    if (json_is_true(json_object_get(e, "model_only"))) {   /* model:FILE: nothing to run */
      char line[300];
      snprintf(line, sizeof line, "- `%s`: skipped, a model-only target: it runs nothing", n);
      if (!strstr(rep, line)) fail_msg("report.md lacks \"%s\"", line);
      continue;
    }
    if (!json_is_true(json_object_get(e, "available"))) {   /* named, with its reason */
      char line[1200];
      snprintf(line, sizeof line, "- `%s`: skipped, not available here: %s", n,
               json_string_value(json_object_get(e, "why")));
      if (!strstr(rep, line)) fail_msg("report.md lacks \"%s\"", line);
      continue;
    }
    if (json_is_false(json_object_get(e, "timed"))) {   /* verifies only (emulated): skipped too */
      char line[1200];
      snprintf(line, sizeof line, "- `%s`: skipped, not available here: it does not time: %s", n,
               json_string_value(json_object_get(e, "untimed_why")));
      if (!strstr(rep, line)) fail_msg("report.md lacks \"%s\"", line);
      continue;
    }
    assert_true(nt < MAXT);
    tname[nt++] = n;
    nocl += !strncmp(n, "opencl:", 7);
    char cell[200];
    snprintf(cell, sizeof cell, "| `%s` |", n);
    assert_non_null(strstr(rep, cell));
  }
  assert_true(nt >= 1);
  assert_string_equal(tname[0], "host");
  if (!nocl) printf("[ SKIPPED  ] no OpenCL device available here: the OpenCL target's checks left out\n");

  /* backends.csv: every (kernel, target) R rounds, rounds in order */
  double t_round[NK][MAXT][R + 1];
  int seen[NK][MAXT][R + 1];
  memset(seen, 0, sizeof seen);
  int last_round = 0, rows = 0;
  char *save = NULL;
  for (char *line = strtok_r(csv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "kernel,", 7)) {
      assert_string_equal(line, "kernel,target,round,median_s,ci_lo,ci_hi,repeats,bytes");
      continue;
    }
    char *f[12];
    assert_int_equal(split(line, ',', f, 12), 8);
    int k = 0, t = 0, r = atoi(f[2]);
    while (k < NK && strcmp(kernels[k], f[0])) k++;
    while (t < nt && strcmp(tname[t], f[1])) t++;
    if (k == NK || t == nt) fail_msg("backends.csv: unexpected row %s,%s", f[0], f[1]);
    assert_true(r >= 1 && r <= R);
    assert_true(r >= last_round);   /* the targets alternate round by round */
    last_round = r;
    assert_int_equal(seen[k][t][r], 0);
    seen[k][t][r] = 1;
    double med = atof(f[3]);
    assert_true(med > 0 && atof(f[4]) <= med && med <= atof(f[5]));
    assert_true(atoi(f[6]) >= 1);
    near(atof(f[7]), bytes_of(f[0]), 1e-5, "compulsory bytes", f[0], f[1]);
    t_round[k][t][r] = med;
    rows++;
    /* the measurement is of the campaign's pinned schedule */
    char ft[64], name[200];
    fname(f[1], ft, sizeof ft);
    snprintf(name, sizeof name, "measure_%s_%s_r%d.json", f[0], ft, r);
    json_t *m = load_json(d, name);
    snprintf(name, sizeof name, "pin_%s_%s.json", f[0], ft);
    json_t *pin = load_json(d, name);
    snprintf(name, sizeof name, "tune_%s_%s.json", f[0], ft);
    json_t *tune = load_json(d, name);
    assert_string_equal(json_string_value(json_object_get(pin, "match")), "exact");
    assert_true(json_equal(json_object_get(m, "what"), json_object_get(pin, "config")));
    assert_true(json_equal(json_object_get(pin, "config"),
                           json_object_get(json_object_get(tune, "decision"), "config")));
    assert_string_equal(json_string_value(json_object_get(tune, "strategy")), "model");
    assert_int_equal(json_integer_value(json_object_get(tune, "budget")), 6);
    near(json_real_value(json_object_get(json_object_get(m, "time_s"), "median")), med, 1e-6,
         "median against the measure report", f[0], f[1]);
    json_decref(m);
    json_decref(pin);
    json_decref(tune);
  }
  assert_int_equal(rows, NK * nt * R);
  for (int k = 0; k < NK; k++)
    for (int t = 0; t < nt; t++)
      for (int r = 1; r <= R; r++) assert_int_equal(seen[k][t][r], 1);

  /* summary.csv and the report's tables, recomputed from the rows */
  double md[NK][MAXT];
  for (int k = 0; k < NK; k++)
    for (int t = 0; t < nt; t++) {
      double v[R];
      for (int r = 1; r <= R; r++) v[r - 1] = t_round[k][t][r];
      md[k][t] = median_of(v, R);
    }
  char *sum = tk_exp_file(d, "summary.csv");
  int srows = 0;
  save = NULL;
  for (char *line = strtok_r(sum, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "kernel,", 7)) continue;
    char *f[12];
    /* kernel,target,rounds,median_s,min_s,max_s,gbs,ratio,ratio_min,ratio_max */
    assert_int_equal(split(line, ',', f, 12), 10);
    int k = 0, t = 0;
    while (k < NK && strcmp(kernels[k], f[0])) k++;
    while (t < nt && strcmp(tname[t], f[1])) t++;
    assert_true(k < NK && t < nt);
    double lo = INFINITY, hi = 0, qlo = INFINITY, qhi = 0;
    for (int r = 1; r <= R; r++) {
      double x = t_round[k][t][r], q = x / t_round[k][0][r];
      lo = fmin(lo, x), hi = fmax(hi, x), qlo = fmin(qlo, q), qhi = fmax(qhi, q);
    }
    double ratio = md[k][t] / md[k][0], gbs = bytes_of(f[0]) / md[k][t] * 1e-9;
    assert_int_equal(atoi(f[2]), R);
    near(atof(f[3]), md[k][t], 1e-7, "median of the round medians", f[0], f[1]);
    near(atof(f[4]), lo, 1e-7, "fastest round", f[0], f[1]);
    near(atof(f[5]), hi, 1e-7, "slowest round", f[0], f[1]);
    near(atof(f[6]), gbs, 1e-5, "GB/s", f[0], f[1]);
    near(atof(f[7]), ratio, 1e-7, "ratio = target median / host median", f[0], f[1]);
    near(atof(f[8]), qlo, 1e-7, "lowest round quotient", f[0], f[1]);
    near(atof(f[9]), qhi, 1e-7, "highest round quotient", f[0], f[1]);
    /* the report's row: the same figures as printed */
    char key[200], row[1000];
    snprintf(key, sizeof key, "| %s | %s | %d |", f[0], f[1], R);
    const char *at = strstr(rep, key);
    if (!at) fail_msg("report.md has no row \"%s\"", key);
    snprintf(row, sizeof row, "%.*s", (int)(strchr(at, '\n') - at), at);
    char *c[12];
    /* "", kernel, target, rounds, median, min-max, GB/s, ratio, min-max, "" */
    assert_int_equal(split(row, '|', c, 12), 10);
    double pm = atof(c[4]) * 1e-3, pmin = atof(c[5]) * 1e-3, pmax = atof(strchr(c[5], '-') + 1) * 1e-3;
    near(pm, md[k][t], 1e-4, "the table's median", f[0], f[1]);
    near(pmin, lo, 1e-4, "the table's fastest round", f[0], f[1]);
    near(pmax, hi, 1e-4, "the table's slowest round", f[0], f[1]);
    near(atof(c[6]), gbs, 1e-3, "the table's GB/s", f[0], f[1]);
    double pr = atof(c[7]);
    if (fabs(pr - ratio) > 5e-5 + 1e-6 * ratio)
      fail_msg("%s on %s: the table's ratio %s, expected %.4f", f[0], f[1], c[7], ratio);
    /* the printed ratio is the quotient of the two printed medians */
    snprintf(key, sizeof key, "| %s | host | %d |", f[0], R);
    const char *h = strstr(rep, key);
    assert_non_null(h);
    const char *hcell = h + strlen(key);   /* " median (ms) | ..." */
    double host_printed = atof(hcell) * 1e-3;
    if (fabs(pr - pm / host_printed) > 5e-5 + 2e-4 * pr)
      fail_msg("%s on %s: the table's ratio %s is not its medians' quotient %.6g", f[0], f[1], c[7],
               pm / host_printed);
    if (fabs(atof(c[8]) - qlo) > 5e-5 + 1e-6 * qlo || fabs(atof(strchr(c[8], '-') + 1) - qhi) > 5e-5 + 1e-6 * qhi)
      fail_msg("%s on %s: the table's ratio min-max %s, expected %.4f-%.4f", f[0], f[1], c[8], qlo, qhi);
    srows++;
  }
  assert_int_equal(srows, NK * nt);

  /* the machine, its load and the exact commands */
  char cpus[64];
  snprintf(cpus, sizeof cpus, "This machine has %ld CPU(s).", sysconf(_SC_NPROCESSORS_ONLN));
  if (!strstr(rep, cpus)) fail_msg("report.md lacks \"%s\"", cpus);
  assert_non_null(strstr(rep, "/proc/loadavg before the run: `"));
  assert_non_null(strstr(rep, "after it: `"));
  assert_non_null(strstr(rep, "wide spreads"));
  char *cmds = tk_exp_file(d, "commands.txt");
  for (int t = 0; t < nt; t++) {
    char c1[9000];
    snprintf(c1, sizeof c1, "rooftune bench --target %s --db %s/backends.db --quick\n", tname[t], d);
    if (!strstr(cmds, c1)) fail_msg("commands.txt lacks \"%s\"", c1);
    snprintf(c1, sizeof c1,
             "rooftune tune --db %s/backends.db --target %s --kernel reduction --set N=1048576 "
             "--strategy model --budget 6 --seed 1 --json\n", d, tname[t]);
    if (!strstr(cmds, c1)) fail_msg("commands.txt lacks \"%s\"", c1);
  }
  free(cmds);
  free(sum);
  json_decref(tj);
  free(rep);
  free(csv);
  tk_rm_rf(d);
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], rooftune, sizeof rooftune)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(backends),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
