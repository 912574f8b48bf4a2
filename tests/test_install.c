/*
** test_install.c -- `make install PREFIX=...` as a user of the reader
** library meets it: the installed rooftune finds its space files from any
** directory, and a program built with `pkg-config --cflags --libs rtdb`
** against the installed header and shared library links and runs.
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
#include <sys/wait.h>
#include <unistd.h>

static char build[4096], prefix[64];

/* Run a shell command; its stdout (first 4 KiB) into out. Exit status. */
static int sh(char *out, size_t cap, const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  FILE *p = popen(cmd, "r");
  size_t n = p ? fread(out, 1, cap - 1, p) : 0;
  out[n] = 0;
  int st = p ? pclose(p) : -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_install(void **state) {
  (void)state;
  char out[4096];
  /* RT_BUILD_FLAGS: the flags the build dir was made with (make asan sets
  ** it), so that install never relinks objects with other flags */
  const char *flags = getenv("RT_BUILD_FLAGS");
  if (sh(out, sizeof out, "make -s install BUILD=%s PREFIX=%s %s 2>&1", build, prefix,
         flags ? flags : ""))
    fail_msg("make install failed:\n%s", out);
  /* the installed program finds its kernels' spaces from elsewhere */
  assert_int_equal(sh(out, sizeof out, "cd / && %s/bin/rooftune kernels 2>&1", prefix), 0);
  assert_non_null(strstr(out, "gemm"));
  assert_null(strstr(out, "space file missing"));
  /* a client of the reader library, built through pkg-config */
  char src[128];
  snprintf(src, sizeof src, "%s/client.c", prefix);
  FILE *f = fopen(src, "w");
  fputs("#include <rtdb.h>\n#include <stdio.h>\n"
        "int main(void) {\n"
        "  rtdb *db;\n"
        "  int rc = rtdb_open(\"/nonexistent/tuned.db\", &db);\n"
        "  printf(\"%d %s %d\\n\", rc, rtdb_errstr(rc), db == NULL);\n"
        "  return rtdb_close(NULL);\n}\n", f);
  fclose(f);
#if defined(__SANITIZE_ADDRESS__)
  const char *san = "-fsanitize=address,undefined"; /* the library is instrumented too */
#else
  const char *san = "";
#endif
  if (sh(out, sizeof out,
         "cc %s -o %s/client %s $(PKG_CONFIG_PATH=%s/lib/pkgconfig pkg-config --cflags --libs rtdb) "
         "-Wl,-rpath,%s/lib 2>&1", san, prefix, src, prefix, prefix))
    fail_msg("building a client with pkg-config failed:\n%s", out);
  assert_int_equal(sh(out, sizeof out, "%s/client", prefix), 0);
  assert_string_equal(out, "2 cannot open the file 1\n");
}

int main(int argc, char **argv) {
  (void)argc;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 1;
  self[n] = 0;
  /* BUILD/tests/x -> BUILD, relative to the project root (the cwd) */
  const char *dir = dirname(dirname(self));
  char cwd[4096];
  size_t len = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
  snprintf(build, sizeof build, "%s",
           len && !strncmp(dir, cwd, len) && dir[len] == '/' ? dir + len + 1 : dir);
  snprintf(prefix, sizeof prefix, "/tmp/rooftune-install-XXXXXX");
  if (!mkdtemp(prefix)) return 1;
  (void)argv;
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_install)};
  int rc = cmocka_run_group_tests_name("install", tests, NULL, NULL);
  char out[256];
  sh(out, sizeof out, "rm -rf %s", prefix);
  return rc;
}
