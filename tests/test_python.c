/*
** test_python.c -- the Python package's pytest tests (python/tests/), one
** cmocka test per file, run by `make test` with this build's rooftune and
** librtdb ($ROOFTUNE, $ROOFTUNE_LIBRTDB). The interpreter: $ROOFTUNE_PYTHON,
** else the first of python3 (PATH) and /usr/bin/python3 that imports
** pytest (Debian's python3-pytest, which scripts/deps.sh installs); without
** one each test is skipped, saying so. In a sanitizer build (make asan) the
** instrumented librtdb.so is loaded into Python with the ASan runtime
** preloaded (leak detection off: the interpreter keeps its memory at exit).
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
#include <unistd.h>

#include "tk_run.h"

#if defined(__SANITIZE_ADDRESS__)
#define TP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TP_ASAN 1
#endif
#endif

static char build[4096], python[4096];

/* The ASan runtime this program runs with (its path from /proc/self/maps),
** into out; 0, or -1 when none is mapped. */
static int asan_runtime(char *out, size_t cap) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[8192];
  int found = -1;
  while (f && found && fgets(line, sizeof line, f)) {
    char *p = strchr(line, '/');
    if (!p || !strstr(p, "/libasan.so")) continue;
    p[strcspn(p, "\n")] = 0;
    snprintf(out, cap, "%s", p);
    found = 0;
  }
  if (f) fclose(f);
  return found;
}

/* Run python/tests/FILE under pytest; fail with its output unless it passes. */
static void run_pytest(const char *file) {
  if (!python[0]) {
    print_message("SKIPPED: no Python with pytest (install Debian's python3-pytest: "
                  "scripts/deps.sh does; or set ROOFTUNE_PYTHON=/path/to/python)\n");
    skip();
  }
  char test[256], exe[4200], lib[4200], preload[4200], asan[4400];
  snprintf(test, sizeof test, "python/tests/%s", file);
  snprintf(exe, sizeof exe, "ROOFTUNE=%s/rooftune", build);
  snprintf(lib, sizeof lib, "ROOFTUNE_LIBRTDB=%s/librtdb.so", build);
  const char *env[8] = {exe, lib, "PYTHONDONTWRITEBYTECODE=1", NULL};
#ifdef TP_ASAN
  char rt[4096];
  if (asan_runtime(rt, sizeof rt)) fail_msg("an ASan build without libasan.so mapped");
  const char *opts = getenv("ASAN_OPTIONS");
  snprintf(preload, sizeof preload, "LD_PRELOAD=%s", rt);
  snprintf(asan, sizeof asan, "ASAN_OPTIONS=%s%sdetect_leaks=0", opts ? opts : "", opts ? ":" : "");
  env[3] = preload, env[4] = asan;
#else
  (void)preload, (void)asan, (void)asan_runtime;
#endif
  const char *argv[] = {python, "-m", "pytest", "-q", "-p", "no:cacheprovider", test, NULL};
  tk_result r = tk_capture(argv, NULL, env);
  print_message("%s%s", r.out, r.err);
  int rc = r.rc;
  tk_result_free(&r);
  if (rc) fail_msg("pytest %s: exit %d", test, rc);
}

static void test_lookup(void **state) { (void)state, run_pytest("test_lookup.py"); }
static void test_records(void **state) { (void)state, run_pytest("test_records.py"); }
static void test_cli(void **state) { (void)state, run_pytest("test_cli.py"); }
static void test_install(void **state) { (void)state, run_pytest("test_install.py"); }
static void test_example(void **state) { (void)state, run_pytest("test_example.py"); }

/* build: this program's BUILD (BUILD/tests/..); python: one with pytest. */
static int setup(void **state) {
  (void)state;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return -1;
  self[n] = 0;
  snprintf(build, sizeof build, "%s/..", dirname(self));
  const char *need[] = {"rooftune", "librtdb.so"};
  for (size_t i = 0; i < 2; i++) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", build, need[i]);
    if (access(p, R_OK)) {
      fprintf(stderr, "test_python: %s not built (make %s)\n", p, p);
      return -1;
    }
  }
  const char *env = getenv("ROOFTUNE_PYTHON");
  const char *const cands[] = {env ? env : "python3", "python3", "/usr/bin/python3"};
  for (size_t i = 0; i < 3 && !python[0]; i++) {
    const char *argv[] = {cands[i], "-c", "import pytest", NULL};
    tk_result r = tk_capture(argv, NULL, NULL);
    if (r.rc == 0) snprintf(python, sizeof python, "%s", cands[i]);
    tk_result_free(&r);
  }
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_lookup), cmocka_unit_test(test_records), cmocka_unit_test(test_cli),
    cmocka_unit_test(test_install), cmocka_unit_test(test_example),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
