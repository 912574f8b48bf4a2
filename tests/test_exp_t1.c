/*
** test_exp_t1.c -- the experiment `t1` (a kernel of your own from its T1
** file, tuned end to end) run in its quick form on PoCL's OpenCL device
** into a temporary folder, its outputs checked against expectations
** computed here:
**  - the campaign evaluated every valid configuration of
**    examples/t1/blur1d.json (44: the count worked out by hand in
**    tests/test_t1_files.c) and its status counts add up to them;
**  - the T4 export holds one result per configuration, each configuration
**    once; its fastest correct time (milliseconds) is the campaign's best
**    (seconds) and its configuration the campaign's best;
**  - the pin db lookup reads is the campaign's decision (its config);
**  - the explanation names the limiting bound and places the measured time
**    ("achieved", the nearest roof marked);
**  - the report holds the decision's reason and the exact commands;
**  - run again with --db on the first run's database, every configuration
**    is reused (none measured) and the best time is the same.
** Skipped with a message without an OpenCL device.
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

#include "tk_exe.h"
#include "tk_exp.h"
#include "../targets/opencl/oc.h"

static char rooftune[4096];

static json_t *load_json(const char *dir, const char *name) {
  char *text = tk_exp_file(dir, name);
  json_error_t je;
  json_t *j = json_loads(text, 0, &je);
  if (!j) fail_msg("%s/%s: %s", dir, name, je.text);
  free(text);
  return j;
}

static void t1(void **state) {
  (void)state;
  const char *why;
  if (!oc_available(&why)) {
    print_message("skipped: no OpenCL device: %s\n", why);
    skip();
  }
  char d[] = "/tmp/rt_exp_t1_XXXXXX";
  assert_non_null(mkdtemp(d));
  assert_int_equal(tk_exp_run(rooftune, "t1", d, NULL), 0);
  json_t *tune = load_json(d, "tune.json"), *t4 = load_json(d, "blur1d_opencl_0_0_T4.json");
  json_t *pin = load_json(d, "pin.json");

  /* every valid configuration, statuses adding up */
  assert_int_equal(json_integer_value(json_object_get(tune, "evaluations")), 44);
  json_t *st = json_object_get(tune, "status");
  const char *key;
  json_t *v;
  json_int_t sum = 0;
  json_object_foreach(st, key, v) sum += json_integer_value(v);
  assert_int_equal(sum, 44);

  /* the T4 export: 44 distinct configurations; its fastest correct one */
  json_t *res = json_object_get(t4, "results");
  assert_int_equal(json_array_size(res), 44);
  double best_ms = INFINITY;
  char *best_cfg = NULL;
  for (size_t i = 0; i < json_array_size(res); i++) {
    json_t *r = json_array_get(res, i);
    char *ci = json_dumps(json_object_get(r, "configuration"), JSON_COMPACT | JSON_SORT_KEYS);
    for (size_t k = 0; k < i; k++) {
      char *ck = json_dumps(json_object_get(json_array_get(res, k), "configuration"),
                            JSON_COMPACT | JSON_SORT_KEYS);
      if (!strcmp(ci, ck)) fail_msg("configuration %s twice in the T4 export", ci);
      free(ck);
    }
    if (json_integer_value(json_object_get(r, "correctness")) == 1) {
      json_t *m = json_array_get(json_object_get(r, "measurements"), 0);
      assert_string_equal(json_string_value(json_object_get(m, "unit")), "milliseconds");
      double t = json_number_value(json_object_get(m, "value"));
      if (t < best_ms) best_ms = t, free(best_cfg), best_cfg = ci, ci = NULL;
    }
    free(ci);
  }
  double best_s = json_number_value(json_object_get(json_object_get(tune, "best"), "time_s"));
  if (!(fabs(best_ms * 1e-3 - best_s) <= 1e-9 * best_s)) fail_msg("T4 best %g ms, campaign %g s", best_ms, best_s);
  char *camp_cfg = json_dumps(json_object_get(json_object_get(tune, "best"), "config"),
                              JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(camp_cfg, best_cfg);

  /* the pin the reader gives is the campaign's decision */
  assert_string_equal(json_string_value(json_object_get(pin, "match")), "exact");
  char *dec = json_dumps(json_object_get(json_object_get(tune, "decision"), "config"),
                         JSON_COMPACT | JSON_SORT_KEYS);
  char *pinned = json_dumps(json_object_get(pin, "config"), JSON_COMPACT | JSON_SORT_KEYS);
  assert_non_null(pinned);
  assert_string_equal(pinned, dec);

  /* the explanation and the report */
  char *ex = tk_exp_file(d, "explain.txt"), *rep = tk_exp_file(d, "report.md");
  char *cmds = tk_exp_file(d, "commands.txt");
  if (!strstr(ex, "<- limits") || !strstr(ex, "achieved ") || !strstr(ex, "<- nearest roof"))
    fail_msg("explain.txt: %s", ex);
  const char *reason = json_string_value(json_object_get(json_object_get(tune, "decision"), "reason"));
  if (!strstr(rep, reason)) fail_msg("the report lacks the decision's reason");
  if (!strstr(cmds, "rooftune tune --t1 examples/t1/blur1d.json --set N=100003 --db ") ||
      !strstr(cmds, "--strategy exhaustive --budget 100% --seed 1 --json"))
    fail_msg("commands.txt: %s", cmds);
  free(ex), free(rep), free(cmds), free(pinned), free(dec), free(camp_cfg), free(best_cfg);
  json_decref(t4), json_decref(pin);

  /* --db: a copy of that database; every configuration is reused, none
  ** measured again, and the best is the same trial's time */
  char d2[] = "/tmp/rt_exp_t1db_XXXXXX", db[64];
  assert_non_null(mkdtemp(d2));
  snprintf(db, sizeof db, "%s/t1.db", d);
  const char *args[] = {"--db", db, NULL};
  assert_int_equal(tk_exp_run(rooftune, "t1", d2, args), 0);
  json_t *again = load_json(d2, "tune.json");
  assert_int_equal(json_integer_value(json_object_get(again, "evaluations")), 44);
  assert_int_equal(json_integer_value(json_object_get(again, "measured")), 0);
  assert_int_equal(json_integer_value(json_object_get(again, "reused")), 44);
  assert_true(json_number_value(json_object_get(json_object_get(again, "best"), "time_s")) == best_s);
  char *summary = tk_exp_file(d2, "summary.md");
  if (!strstr(summary, "0 measured here, 44 reused (from --db t1.db)")) fail_msg("summary.md: %s", summary);
  free(summary);
  json_decref(again), json_decref(tune);
  tk_rm_rf(d2);
  tk_rm_rf(d);
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], rooftune, sizeof rooftune)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(t1),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
