/*
** test_exp_t4.c -- the experiments on T4 recordings, run as a user runs
** them: `rooftune experiment run portability --quick` and `... strategies
** --quick`, each into a fresh temporary folder (never experiments/results).
** Portability: the diagonal is 1, and the A100 -> A4000 entry is recomputed
** here from the T4 files themselves (zlib + jansson: the fastest "correct"
** result of the A100, the same configuration's "time" on the A4000 against
** the A4000's fastest). Strategies: scores.csv holds every strategy that
** runs on a recording x every repeat on every recording, a second run made
** as another machine (host fingerprint forced to TK_OTHER_HOST) gives the
** same tables, byte for byte (portability too), report.md names every
** seed, and the control (random
** search over 50 more seeds) has the mean and SEM its runs give, within 3
** SEM of 0. The binary is found next
** to the test's own directory (BUILD/tests/../rooftune); the run times are
** printed.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../tuner/tu.h"

#include "tk_exe.h"
#include "tk_exp.h"

#define T4 "data/t4/"

static char rooftune[4096];

static json_t *load_t4(const char *path) {
  char *text = tk_slurp(path);
  assert_non_null(text);
  json_error_t je;
  json_t *root = json_loads(text, 0, &je);
  free(text);
  assert_non_null(root);
  return root;
}

/* A T4 result's "time" if it is correct, else NAN. */
static double t4_time(json_t *r) {
  const char *inv = json_string_value(json_object_get(r, "invalidity"));
  json_t *corr = json_object_get(r, "correctness");
  if (!inv || strcmp(inv, "correct") || (json_is_number(corr) && json_number_value(corr) == 0))
    return NAN;
  json_t *ms = json_object_get(r, "measurements");
  for (size_t k = 0; k < json_array_size(ms); k++) {
    json_t *m = json_array_get(ms, k);
    const char *name = json_string_value(json_object_get(m, "name"));
    if (name && !strcmp(name, "time") && json_is_number(json_object_get(m, "value")))
      return json_number_value(json_object_get(m, "value"));
  }
  return NAN;
}

/* The index of the fastest correct result. */
static size_t t4_best(json_t *results) {
  size_t best = (size_t)-1;
  double bt = INFINITY;
  for (size_t i = 0; i < json_array_size(results); i++) {
    double t = t4_time(json_array_get(results, i));
    if (t < bt) {
      bt = t;
      best = i;
    }
  }
  assert_true(best != (size_t)-1);
  return best;
}

/* The CSV line of FILE whose first fields are PREFIX ("A100,A4000,"), or NULL. */
static char *csv_line(const char *text, const char *prefix) {
  size_t n = strlen(prefix);
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (!strncmp(p, prefix, n)) {
      const char *e = strchr(p, '\n');
      size_t len = e ? (size_t)(e - p) : strlen(p);
      char *line = malloc(len + 1);
      memcpy(line, p, len);
      line[len] = 0;
      return line;
    }
  return NULL;
}

/* The FIELD-th (1-based) comma-separated field of LINE, copied into out. */
static const char *field(const char *line, int f, char *out, size_t cap) {
  const char *p = line;
  for (int i = 1; i < f && p; i++) p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL;
  assert_non_null(p);
  size_t len = strcspn(p, ",");
  if (len >= cap) len = cap - 1;
  memcpy(out, p, len);
  out[len] = 0;
  return out;
}

static void portability(void **state) {
  (void)state;
  char dir[] = "/tmp/rooftune-exp-portability-XXXXXX";
  assert_non_null(mkdtemp(dir));
  assert_int_equal(tk_exp_run(rooftune, "portability", dir, NULL), 0);
  char *m = tk_exp_file(dir, "matrix.csv");
  char buf[256];
  /* the diagonal */
  static const char *gpus[] = {"A100", "A4000"};
  for (int g = 0; g < 2; g++) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s,%s,", gpus[g], gpus[g]);
    char *line = csv_line(m, prefix);
    assert_non_null(line);
    assert_string_equal(field(line, 5, buf, sizeof buf), "ok");
    assert_true(fabs(atof(field(line, 8, buf, sizeof buf)) - 1) < 1e-12);
    free(line);
  }
  /* A100 -> A4000 from the T4 files */
  json_t *a = load_t4(T4 "convolution_milo_A100_T4.json.gz"),
         *b = load_t4(T4 "convolution_milo_A4000_T4.json.gz");
  json_t *ra = json_object_get(a, "results"), *rb = json_object_get(b, "results");
  json_t *cfg = json_object_get(json_array_get(ra, t4_best(ra)), "configuration");
  double opt_b = t4_time(json_array_get(rb, t4_best(rb))), on_b = NAN;
  int found = 0;
  for (size_t i = 0; i < json_array_size(rb); i++)
    if (json_equal(json_object_get(json_array_get(rb, i), "configuration"), cfg)) {
      on_b = t4_time(json_array_get(rb, i));
      found++;
    }
  assert_int_equal(found, 1);
  assert_false(isnan(on_b));
  double want = opt_b / on_b;
  char *line = csv_line(m, "A100,A4000,");
  assert_non_null(line);
  assert_string_equal(field(line, 5, buf, sizeof buf), "ok");
  double got = atof(field(line, 8, buf, sizeof buf));
  printf("[ INFO     ] A100 -> A4000: %.6f (recomputed from the T4 files: %.6f)\n", got, want);
  assert_true(fabs(got - want) < 1e-6);
  assert_true(want < 1);
  free(line);
  /* the table shows it */
  char *t = tk_exp_file(dir, "tables.md"), pct[32];
  snprintf(pct, sizeof pct, " %.1f%% |", 100 * want);
  assert_non_null(strstr(t, pct));
  assert_non_null(strstr(t, "58.5%"));
  free(t);
  /* the same tables when another machine runs it */
  char d2[] = "/tmp/rooftune-exp-portability-XXXXXX";
  assert_non_null(mkdtemp(d2));
  assert_int_equal(tk_exp_run_as(rooftune, "portability", d2, NULL, TK_OTHER_HOST), 0);
  char *t1s = tk_exp_tables(dir, "report.md", 5), *t2s = tk_exp_tables(d2, "report.md", 5);
  assert_string_equal(t1s, t2s);
  free(t1s), free(t2s);
  tk_rm_rf(d2);
  /* file operands relative to the folder rooftune runs from, not the
  ** project root the script runs in: the same tables (the old script
  ** looked for the relative name in the root: "not readable") */
  char d3[] = "/tmp/rooftune-exp-portability-XXXXXX", here[4096], t1[4200], a100[4200],
       a4000[4200], link[4200], out3[4200];
  assert_non_null(mkdtemp(d3));
  assert_non_null(getcwd(here, sizeof here));
  snprintf(t1, sizeof t1, "%s/data/t1/convolution_milo.json", here);
  snprintf(a100, sizeof a100, "%s/" T4 "convolution_milo_A100_T4.json.gz", here);
  snprintf(a4000, sizeof a4000, "%s/" T4 "convolution_milo_A4000_T4.json.gz", here);
  snprintf(link, sizeof link, "%s/convolution_milo_A4000_T4.json.gz", d3);
  assert_int_equal(symlink(a4000, link), 0);
  snprintf(out3, sizeof out3, "%s/out", d3);
  assert_int_equal(chdir(d3), 0);
  const char *args3[] = {t1, a100, "convolution_milo_A4000_T4.json.gz", NULL};
  int rc3 = tk_exp_run(rooftune, "portability", out3, args3);
  assert_int_equal(chdir(here), 0);
  assert_int_equal(rc3, 0);
  t1s = tk_exp_tables(dir, "report.md", 5), t2s = tk_exp_tables(out3, "report.md", 5);
  assert_string_equal(t1s, t2s);
  free(t1s), free(t2s);
  tk_rm_rf(d3);
  json_decref(a);
  json_decref(b);
  free(m);
  tk_rm_rf(dir);
}

static void strategies(void **state) {
  (void)state;
  char d1[] = "/tmp/rooftune-exp-strategies-XXXXXX", d2[] = "/tmp/rooftune-exp-strategies-XXXXXX";
  assert_non_null(mkdtemp(d1));
  assert_non_null(mkdtemp(d2));
  assert_int_equal(tk_exp_run(rooftune, "strategies", d1, NULL), 0);
  assert_int_equal(tk_exp_run_as(rooftune, "strategies", d2, NULL, TK_OTHER_HOST), 0);
  /* every strategy that runs on a recording x every repeat x every recording */
  static const char *keys[] = {"convolution_milo_A100", "convolution_milo_A4000",
                               "dedispersion_milo_A100", "pnpoly_RTX_3090"};
  const int repeats = 3;   /* --quick */
  char *s = tk_exp_file(d1, "scores.csv");
  int rows = 0, strats = 0;
  for (const char *p = s; (p = strchr(p, '\n')) && p[1]; p++) rows++;
  for (int k = 0; k < 4; k++)
    for (int i = 0; tu_strategies[i]; i++) {
      if (tu_strategies[i]->needs_model) continue;
      strats += k == 0;
      for (int r = 0; r < repeats; r++) {
        char prefix[200];
        snprintf(prefix, sizeof prefix, "%s,%s,%d,", keys[k], tu_strategies[i]->name, r);
        char *line = csv_line(s, prefix);
        if (!line) fail_msg("scores.csv lacks %s", prefix);
        free(line);
      }
    }
  assert_int_equal(rows, 4 * strats * repeats);
  /* the control: control.csv's mean and SEM recomputed from the control's
  ** runs; random search run must agree with the exact expectation's 0 */
  for (int k = 0; k < 4; k++) {
    char name[200], buf2[64];
    snprintf(name, sizeof name, "%s/control_scores.csv", keys[k]);
    char *c = tk_exp_file(d1, name);
    double sum = 0, sq = 0;
    int n = 0;
    for (const char *p = strchr(c, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
      double v = atof(field(p + 1, 4, buf2, sizeof buf2));   /* the score */
      sum += v, sq += v * v, n++;
    }
    assert_int_equal(n, 50);   /* --quick */
    double mean = sum / n, sd = sqrt((sq - n * mean * mean) / (n - 1)), sem = sd / sqrt(n);
    char *ctl = tk_exp_file(d1, "control.csv"), prefix[200];
    snprintf(prefix, sizeof prefix, "%s,50,", keys[k]);
    char *row = csv_line(ctl, prefix);
    if (!row) fail_msg("control.csv lacks %s", prefix);
    assert_true(fabs(atof(field(row, 3, buf2, sizeof buf2)) - mean) < 2e-6);
    assert_true(fabs(atof(field(row, 5, buf2, sizeof buf2)) - sem) < 2e-6);
    print_message("[ INFO     ] %s: random search over 50 seeds %.3f ± %.3f\n", keys[k], mean, sem);
    assert_true(fabs(mean) < 3 * sem);
    free(row);
    free(ctl);
    free(c);
  }
  /* the same tables from a second run, as another machine */
  char *t1 = tk_exp_file(d1, "tables.md"), *t2 = tk_exp_file(d2, "tables.md");
  assert_true(strlen(t1) > 1000);
  assert_string_equal(t1, t2);
  /* report.md names every seed of scores.csv */
  char *rep = tk_exp_file(d1, "report.md"), *seeds = strstr(rep, "Seeds: ");
  assert_non_null(seeds);
  char *eol = strchr(seeds, '\n');
  if (eol) *eol = 0;
  int listed[1000] = {0};
  for (char *p = seeds; *p;) {
    if (*p >= '0' && *p <= '9' && (p == seeds || p[-1] == ' ')) {
      long v = strtol(p, &p, 10);
      if (*p == ',' || *p == ' ' || *p == 0) {
        if (v >= 0 && v < 1000) listed[v] = 1;
      }
    } else {
      p++;
    }
  }
  char buf[64];
  for (const char *p = strchr(s, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
    long seed = atol(field(p, 4, buf, sizeof buf));
    assert_true(seed >= 0 && seed < 1000);
    if (!listed[seed]) fail_msg("report.md does not name seed %ld", seed);
    if (!strchr(p, '\n')) break;
  }
  free(rep);
  free(t1);
  free(t2);
  free(s);
  tk_rm_rf(d1);
  tk_rm_rf(d2);
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], rooftune, sizeof rooftune)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(portability),
    cmocka_unit_test(strategies),
  };
  return cmocka_run_group_tests_name("experiments on T4 recordings", tests, NULL, NULL);
}
