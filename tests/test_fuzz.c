/*
** test_fuzz.c -- the fuzz harnesses (fuzz/fz_*.c) without libFuzzer: each
** target's function runs on every file of fuzz/regress/TARGET/ (the
** inputs fuzzing found crashing, kept after their fix) and of
** fuzz/corpus/TARGET/ (the seeds), so every `make test` and `make asan`
** checks them with the project's compiler, clang or not. A harness that
** finds its invariant broken aborts, which fails this program.
** FUZZ_REPLAY=PATH runs one file (on every target named in FUZZ_TARGET,
** default all), to replay a crash at hand.
*/
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../common/rt.h"
#include "../fuzz/fz.h"

typedef int (*target_fn)(const uint8_t *data, size_t size);
static const struct { const char *name; target_fn fn; } targets[] = {
  {"t1", fz_t1}, {"expr", fz_expr}, {"config", fz_config},
  {"t4", fz_t4}, {"set", fz_set}, {"rtdb", fz_rtdb}, {"lookup", fz_lookup}, {"tm", fz_tm},
};
#define NTARGETS (sizeof targets / sizeof *targets)

/* The input being run, named when the program dies on it (a broken
** invariant aborts; a sanitizer's report ends in its death callback). */
static char current[1024];
static struct sigaction previous[5];
static const int deadly[5] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};

static void say_current(void) {
  static const char pre[] = "test_fuzz: died on input ";
  if (write(2, pre, sizeof pre - 1) < 0 || write(2, current, strlen(current)) < 0 ||
      write(2, "\n", 1) < 0)
    return;
}

static void on_signal(int sig) {
  say_current();
  for (int i = 0; i < 5; i++)
    if (deadly[i] == sig) sigaction(sig, &previous[i], NULL);
  raise(sig);
}

/* Weak: defined only in sanitizer builds (sanitizer/common_interface_defs.h). */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void watch(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_NODEFER;
  for (int i = 0; i < 5; i++) sigaction(deadly[i], &sa, &previous[i]);
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(say_current);
}

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  size_t cap = 4096;
  uint8_t *b = rt_malloc(cap);
  *n = 0;
  for (size_t got; (got = fread(b + *n, 1, cap - *n, f)) > 0;)
    if ((*n += got) == cap) b = rt_realloc(b, cap *= 2);
  fclose(f);
  return b;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run fn on every regular file of dir (in name order); the number run. */
static int replay_dir(target_fn fn, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  char **names = NULL;
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    char path[1024];
    struct stat sb;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (e->d_name[0] == '.' || stat(path, &sb) || !S_ISREG(sb.st_mode)) continue;
    names = rt_realloc(names, (n + 1) * sizeof *names);
    names[n++] = rt_strdup(path);
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, by_name);   /* names is NULL when n is 0 */
  for (size_t i = 0; i < n; i++) {
    size_t size;
    uint8_t *data = slurp(names[i], &size);
    snprintf(current, sizeof current, "%s", names[i]);
    assert_int_equal(fn(data, size), 0);
    free(data);
    free(names[i]);
  }
  free(names);
  return (int)n;
}

/* One target: its regression inputs, then its seeds (there must be some). */
static void test_target(void **state) {
  size_t t = (size_t)(uintptr_t)*state;
  char dir[256];
  watch();   /* after cmocka's own handlers, which it sets per test */
  snprintf(dir, sizeof dir, "fuzz/regress/%s", targets[t].name);
  int nreg = replay_dir(targets[t].fn, dir);
  snprintf(dir, sizeof dir, "fuzz/corpus/%s", targets[t].name);
  int nseed = replay_dir(targets[t].fn, dir);
  print_message("%s: %d regression inputs, %d corpus inputs\n", targets[t].name, nreg, nseed);
  assert_true(nseed > 0);
}

int main(void) {
  const char *one = getenv("FUZZ_REPLAY"), *only = getenv("FUZZ_TARGET");
  if (one) {
    size_t size;
    uint8_t *data = slurp(one, &size);
    for (size_t t = 0; t < NTARGETS; t++)
      if (!only || !strcmp(only, targets[t].name)) targets[t].fn(data, size);
    free(data);
    return 0;
  }
  struct CMUnitTest tests[NTARGETS];
  for (size_t t = 0; t < NTARGETS; t++)
    tests[t] = (struct CMUnitTest){targets[t].name, test_target, NULL, NULL,
                                   (void *)(uintptr_t)t};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
