/*
** test_demo.c -- the README's first command, `make demo` (scripts/demo),
** run whole with this build's rooftune in a temporary folder: it must end
** with exit 0 having pinned a winner, shown it as the reader library answers
** it (the level and the schedule, the schedule last: the script passes that
** line to model explain), explained it against the measured ceilings, and
** replayed the recorded GPU campaign. It broke once without any test
** noticing (a line added after the schedule in db lookup's output).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rt.h"
#include "tk_exe.h"
#include "tk_run.h"

static char rooftune[4096];

static void demo_runs_whole(void **state) {
  (void)state;
  char exe[4096], build[4096], rel[4096], script[4096], dir[] = "/tmp/rt_demo_XXXXXX";
  snprintf(exe, sizeof exe, "%s", rooftune);
  if (!realpath(dirname(exe), build)) fail_msg("%s: no folder", rooftune);   /* BUILD */
  if (!realpath(rt_project_path("scripts/demo", rel, sizeof rel), script)) fail_msg("no scripts/demo");
  assert_non_null(mkdtemp(dir));
  const char *argv[] = {"sh", script, build, NULL};
  tk_result r = tk_capture(argv, dir, NULL);
  if (r.rc) fail_msg("scripts/demo: exit %d\n%s\n%s", r.rc, r.out, r.err);
  static const char *const want[] = {
      "$ rooftune tune --kernel gemm",   /* the campaign and its report */
      "pinned     version 1",
      "$ rooftune db lookup",            /* the reader's answer, its level */
      "level target: pinned on host",
      "$ rooftune model explain",        /* the winner against the ceilings */
      "<- limits",
      "$ rooftune replay",               /* the recorded GPU campaign */
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    if (!strstr(r.out, want[i])) fail_msg("the demo's output lacks '%s':\n%s", want[i], r.out);
  tk_result_free(&r);
  tk_rm_rf(dir);
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], rooftune, sizeof rooftune)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(demo_runs_whole),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
