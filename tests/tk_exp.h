/*
** tk_exp.h -- for the tests of `rooftune experiment`: run one experiment's
** quick form into a folder (as this machine, or with the host fingerprint
** forced to another value: ROOFTUNE_TEST_HOST_FINGERPRINT, test-only), read
** what it wrote, compare its tables, remove the folder. Include after
** <cmocka.h> (a missing output file fails the test).
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

/* A host fingerprint no machine has (the recipe's hash of a description
** never gives it in practice): forced with tk_exp_run_as, rooftune runs as
** "some other machine". */
#define TK_OTHER_HOST "feedfacefeedfacefeedfacefeedface"

/* `ROOFTUNE experiment run NAME --quick --out DIR [-- ARGS...]` (ARGS NULL
** or NULL-terminated) with the host fingerprint forced to host_fp (NULL:
** this machine's), its output in DIR.log (the tail on stderr when it
** fails, then removed); prints the wall time; the exit status. */
static inline int tk_exp_run_as(const char *rooftune, const char *name, const char *dir,
                                const char *const *args, const char *host_fp) {
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
    if (host_fp) setenv("ROOFTUNE_TEST_HOST_FINGERPRINT", host_fp, 1);
    else unsetenv("ROOFTUNE_TEST_HOST_FINGERPRINT");
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
  printf("[ INFO     ] experiment %s --quick%s%s: %.1f s\n", name, host_fp ? " as host " : "",
         host_fp ? host_fp : "", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
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

/* tk_exp_run_as as this machine. */
static inline int tk_exp_run(const char *rooftune, const char *name, const char *dir,
                             const char *const *args) {
  return tk_exp_run_as(rooftune, name, dir, args, NULL);
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

/* The table lines ("|...") of DIR/NAME (a report), concatenated in order
** (malloc'd); the test fails when the file is missing or has fewer than
** min_rows of them. Two runs on the same recorded data must give the same. */
static inline char *tk_exp_tables(const char *dir, const char *name, int min_rows) {
  char *text = tk_exp_file(dir, name);
  size_t n = 0;
  int rows = 0;
  char *out = malloc(strlen(text) + 1);
  for (char *line = text; line && *line;) {
    char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line + 1) : strlen(line);
    if (line[0] == '|') {
      memcpy(out + n, line, len);
      n += len;
      rows++;
    }
    line = eol ? eol + 1 : NULL;
  }
  out[n] = 0;
  free(text);
  if (rows < min_rows) fail_msg("%s/%s: %d table rows, expected at least %d", dir, name, rows, min_rows);
  return out;
}

#endif
