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
#include <unistd.h>
#include <wordexp.h>

#include "tk_run.h"

static char build[4096], prefix[64];

static void test_install(void **state) {
  (void)state;
  char out[4096], dest[4200], lib[4200];
  /* RT_BUILD_FLAGS: the flags the build dir was made with (make asan sets
  ** it, shell-quoted), so that install never relinks objects with other
  ** flags; split into words by wordexp, which runs no command (WRDE_NOCMD) */
  const char *flags = getenv("RT_BUILD_FLAGS");
  wordexp_t we = {0};
  if (wordexp(flags ? flags : "", &we, WRDE_NOCMD)) fail_msg("RT_BUILD_FLAGS: cannot split '%s'", flags);
  const char *make[64] = {"make", "-s", "install"};
  int n = 3;
  snprintf(dest, sizeof dest, "BUILD=%s", build);
  make[n++] = dest;
  snprintf(lib, sizeof lib, "PREFIX=%s", prefix);
  make[n++] = lib;
  for (size_t i = 0; i < we.we_wordc && n < 63; i++) make[n++] = we.we_wordv[i];
  make[n] = NULL;
  int rc = tk_run(make, &(tk_io){.out = out, .cap = sizeof out, .both = 1});
  wordfree(&we);
  if (rc) fail_msg("make install failed:\n%s", out);
  /* the installed program finds its kernels' spaces from elsewhere */
  char exe[128];
  snprintf(exe, sizeof exe, "%s/bin/rooftune", prefix);
  assert_int_equal(tk_run((const char *[]){exe, "kernels", NULL},
                          &(tk_io){.cwd = "/", .out = out, .cap = sizeof out, .both = 1}), 0);
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
  char pc[4096];
  snprintf(lib, sizeof lib, "%s/lib/pkgconfig", prefix);
  setenv("PKG_CONFIG_PATH", lib, 1);
  rc = tk_run((const char *[]){"pkg-config", "--cflags", "--libs", "rtdb", NULL},
              &(tk_io){.out = pc, .cap = sizeof pc});
  unsetenv("PKG_CONFIG_PATH");
  if (rc) fail_msg("pkg-config --cflags --libs rtdb failed:\n%s", pc);
  char client[128], rpath[128];
  snprintf(client, sizeof client, "%s/client", prefix);
  snprintf(rpath, sizeof rpath, "-Wl,-rpath,%s/lib", prefix);
  const char *cc[64] = {"cc"};
  n = 1;
#if defined(__SANITIZE_ADDRESS__)
  cc[n++] = "-fsanitize=address,undefined";   /* the library is instrumented too */
#endif
  cc[n++] = "-o", cc[n++] = client, cc[n++] = src;
  char *save = NULL;
  for (char *w = strtok_r(pc, " \t\n", &save); w && n < 62; w = strtok_r(NULL, " \t\n", &save)) cc[n++] = w;
  cc[n++] = rpath;
  cc[n] = NULL;
  if (tk_run(cc, &(tk_io){.out = out, .cap = sizeof out, .both = 1}))
    fail_msg("building a client with pkg-config failed:\n%s", out);
  assert_int_equal(tk_run((const char *[]){client, NULL}, &(tk_io){.out = out, .cap = sizeof out}), 0);
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
  tk_rm_rf(prefix);
  return rc;
}
