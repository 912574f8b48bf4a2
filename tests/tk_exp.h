/*
** tk_exp.h -- for the tests of `rooftune experiment`: run one experiment's
** quick form into a folder, read what it wrote, remove the folder. Include
** after <cmocka.h> (a missing output file fails the test).
*/
#ifndef TK_EXP_H
#define TK_EXP_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "tk_run.h"

/* `ROOFTUNE experiment run NAME --quick --out DIR [-- ARGS...]` (ARGS NULL
** or NULL-terminated), its output in DIR.log (the tail on stderr when it
** fails, then removed); prints the wall time; the exit status. */
static inline int tk_exp_run(const char *rooftune, const char *name, const char *dir,
                      const char *const *args) {
  const char *argv[40] = {rooftune, "experiment", "run", name, "--quick", "--out", dir};
  int argc = 7;
  if (args && args[0]) {
    argv[argc++] = "--";
    for (int i = 0; args[i] && argc < 39; i++) argv[argc++] = args[i];
  }
  argv[argc] = NULL;
  char log[4200];
  snprintf(log, sizeof log, "%s.log", dir);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execv(rooftune, (char *const *)argv);
    _exit(127);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid) return -1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("[ INFO     ] experiment %s --quick: %.1f s\n", name,
         (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  if (rc) {   /* the last 20 lines of the log */
    char *text = tk_gunzip(log, NULL);
    const char *from = text ? text + strlen(text) : NULL;
    for (int lines = 0; from && from > text && lines <= 20; lines += *from == '\n') from--;
    if (from) fprintf(stderr, "%s", from == text ? from : from + 1);
    free(text);
  }
  unlink(log);
  return rc;
}

/* A whole file, plain or gzip, NUL-terminated (malloc'd), or NULL. */
static inline char *tk_slurp(const char *path) { return tk_gunzip(path, NULL); }

/* DIR/NAME's text (malloc'd); the test fails when it is missing. */
static inline char *tk_exp_file(const char *dir, const char *name) {
  char path[4300];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *s = tk_slurp(path);
  if (!s) fail_msg("%s is missing", path);
  return s;
}

/* Whether DIR/NAME is readable. */
static inline int tk_exp_exists(const char *dir, const char *name) {
  char path[4300];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  return access(path, R_OK) == 0;
}

#endif
