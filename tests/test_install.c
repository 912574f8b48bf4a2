/*
** test_install.c -- `make install PREFIX=...` as a user of the reader
** library meets it: the installed rooftune finds its space files (host and
** CUDA) from any directory and says that experiments run from a source
** tree; a program and examples/codegen_gemm.c built with `pkg-config
** --cflags --libs rtdb` against the installed header and shared library
** link and run without LD_LIBRARY_PATH; `make uninstall` removes every file
** install made and nothing else.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wordexp.h>

#include "tk_run.h"

static char build[4096], prefix[64];

/* Files (not folders) under a tree, and the first few of their names. */
static int walk_files;
static char *walk_names;
static size_t walk_cap;
static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st;
  (void)ftw;
  if (type != FTW_D && type != FTW_DP) {
    walk_files++;
    size_t used = strlen(walk_names);
    if (used + strlen(path) + 2 < walk_cap) snprintf(walk_names + used, walk_cap - used, "%s ", path);
  }
  return 0;
}
static void tk_walk_files(const char *root, int *files, char *names, size_t cap) {
  walk_files = 0;
  walk_names = names;
  walk_cap = cap;
  names[0] = 0;
  nftw(root, walk_one, 16, FTW_PHYS);
  *files = walk_files;
}

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
  assert_int_equal(tk_run((const char *[]){exe, "kernels", "--target", "cuda:0", NULL},
                          &(tk_io){.cwd = "/", .out = out, .cap = sizeof out, .both = 1}), 0);
  assert_non_null(strstr(out, "targets/cuda/gemm.json"));
  assert_null(strstr(out, "space file missing"));
  /* experiments need a source tree, and say so */
  assert_int_equal(tk_run((const char *[]){exe, "experiment", "run", "roofline", "--quick", NULL},
                          &(tk_io){.cwd = "/", .out = out, .cap = sizeof out, .both = 1}), 1);
  if (!strstr(out, "the experiments run from a source tree")) fail_msg("experiment run installed:\n%s", out);
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
  /* the run path comes from rtdb.pc: no -rpath here, no LD_LIBRARY_PATH */
  unsetenv("LD_LIBRARY_PATH");
  char client[128], example[128];
  snprintf(client, sizeof client, "%s/client", prefix);
  snprintf(example, sizeof example, "%s/codegen_gemm", prefix);
  const char *const progs[][2] = {{client, src}, {example, "examples/codegen_gemm.c"}};
  for (int p = 0; p < 2; p++) {
    const char *cc[64] = {"cc"};
    n = 1;
#if defined(__SANITIZE_ADDRESS__)
    cc[n++] = "-fsanitize=address,undefined";   /* the library is instrumented too */
#endif
    cc[n++] = "-o", cc[n++] = progs[p][0], cc[n++] = progs[p][1];
    char words[4096], *save = NULL;
    snprintf(words, sizeof words, "%s", pc);
    for (char *w = strtok_r(words, " \t\n", &save); w && n < 62; w = strtok_r(NULL, " \t\n", &save)) cc[n++] = w;
    cc[n] = NULL;
    if (tk_run(cc, &(tk_io){.out = out, .cap = sizeof out, .both = 1}))
      fail_msg("building %s with pkg-config failed:\n%s", progs[p][1], out);
  }
  assert_int_equal(tk_run((const char *[]){client, NULL}, &(tk_io){.out = out, .cap = sizeof out}), 0);
  assert_string_equal(out, "2 cannot open the file 1\n");
  assert_int_equal(tk_run((const char *[]){example, "/nonexistent/tuned.db", "host", "1", "1", "1", NULL},
                          &(tk_io){.out = out, .cap = sizeof out, .both = 1}), 1);
  assert_non_null(strstr(out, "cannot open the file"));

  /* uninstall: every installed file goes, a file of the user's stays */
  char mine[160], mine_share[200];
  snprintf(mine, sizeof mine, "%s/bin/my-tool", prefix);
  snprintf(mine_share, sizeof mine_share, "%s/share/rooftune/notes.txt", prefix);
  for (int k = 0; k < 2; k++) {
    f = fopen(k ? mine_share : mine, "w");
    assert_non_null(f);
    fputs("mine\n", f);
    fclose(f);
  }
  unlink(src);
  unlink(client);
  unlink(example);
  const char *un[64] = {"make", "-s", "uninstall"};
  n = 3;
  snprintf(dest, sizeof dest, "BUILD=%s", build);
  un[n++] = dest;
  snprintf(lib, sizeof lib, "PREFIX=%s", prefix);
  un[n++] = lib;
  un[n] = NULL;
  if (tk_run(un, &(tk_io){.out = out, .cap = sizeof out, .both = 1})) fail_msg("make uninstall failed:\n%s", out);
  assert_int_equal(access(mine, F_OK), 0);
  assert_int_equal(access(mine_share, F_OK), 0);
  unlink(mine);
  unlink(mine_share);
  /* what is left is folders only, all empty: count the files under prefix */
  int files = 0;
  char left[4096] = "";
  tk_walk_files(prefix, &files, left, sizeof left);
  if (files) fail_msg("make uninstall left %d files: %s", files, left);
  /* a second uninstall finds no manifest and says so */
  assert_int_not_equal(tk_run(un, &(tk_io){.out = out, .cap = sizeof out, .both = 1}), 0);
  assert_non_null(strstr(out, "nothing installed there by rooftune"));
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
