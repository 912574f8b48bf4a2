/*
** tk_run.h -- for the tests that run other programs or clean up after
** them, without a shell: a program run from an argument vector (its
** standard input from a file, its output captured; or its whole stdout
** and stderr kept apart, with environment changes), recursive removal of
** a folder the test made (links removed as links, never followed), and a
** gzip file read whole. The project runs no shell text anywhere, tests
** included (README: "Output files" and HACKING: conventions).
*/
#ifndef TK_RUN_H
#define TK_RUN_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

/* How tk_run runs a program; zero members keep the test's own. */
typedef struct tk_io {
  const char *in;    /* standard input from this file (NULL: the test's) */
  const char *cwd;   /* run there (NULL: the test's working directory) */
  char *out;         /* standard output (and error, with both) captured, NUL-terminated */
  size_t cap;        /* bytes of out (output beyond cap - 1 is read and dropped) */
  int both;          /* 1: standard error into out too; -1: standard error to /dev/null */
} tk_io;

/* Run argv (argv[0] searched in $PATH) as io says and wait for it: its
** exit status, 128 + the signal that ended it, or -1 when it could not be
** started (out then says why). */
static inline int tk_run(const char *const *argv, const tk_io *io) {
  static const tk_io none;
  if (!io) io = &none;
  int fd[2] = {-1, -1};
  if (io->out && io->cap) io->out[0] = 0;
  if (io->out && pipe(fd)) return -1;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (io->in) {
      int i = open(io->in, O_RDONLY);
      if (i < 0 || dup2(i, 0) < 0) _exit(126);
    }
    if (io->out) {
      close(fd[0]);
      if (dup2(fd[1], 1) < 0 || (io->both == 1 && dup2(fd[1], 2) < 0)) _exit(126);
    }
    if (io->both == -1) {
      int nul = open("/dev/null", O_WRONLY);
      if (nul < 0 || dup2(nul, 2) < 0) _exit(126);
    }
    if (io->cwd && chdir(io->cwd)) _exit(126);
    execvp(argv[0], (char *const *)argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  if (io->out) {
    close(fd[1]);
    size_t n = 0;
    char buf[4096];
    for (ssize_t k; (k = read(fd[0], buf, sizeof buf)) != 0;) {
      if (k < 0) {
        if (errno == EINTR) continue;
        break;
      }
      size_t room = io->cap ? io->cap - 1 - n : 0, take = (size_t)k < room ? (size_t)k : room;
      memcpy(io->out + n, buf, take);
      n += take;
    }
    close(fd[0]);
    if (io->cap) io->out[n] = 0;
  }
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static inline int tk__rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw) {
  (void)st, (void)ftw;
  return (type == FTW_DP ? rmdir(path) : unlink(path)) && errno != ENOENT ? -1 : 0;
}

/* Remove path and everything under it (a folder the test made): depth
** first, links removed as links, never followed, never leaving path's file
** system. 0, or -1 (errno set) at the first entry that could not go. */
static inline int tk_rm_rf(const char *path) {
  return nftw(path, tk__rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* A whole file, plain or gzip, NUL-terminated (malloc'd; *n its length
** when n is not NULL), or NULL. */
static inline char *tk_gunzip(const char *path, size_t *n) {
  gzFile f = gzopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, len = 0;
  char *s = malloc(cap);
  int got = 0;
  while (s && (got = gzread(f, s + len, (unsigned)(cap - len - 1))) > 0)
    if ((len += (size_t)got) == cap - 1) s = realloc(s, cap *= 2);
  gzclose(f);
  if (got < 0) {
    free(s);
    return NULL;
  }
  if (s) s[len] = 0;
  if (n) *n = len;
  return s;
}

/* A program's exit status (127: it could not be run; 128 + the signal
** that ended it) and its whole standard output and error (malloc'd). */
typedef struct tk_result {
  int rc;
  char *out, *err;
} tk_result;

static inline char *tk__slurp(FILE *f) {
  rewind(f);
  size_t cap = 4096, n = 0, got;
  char *s = malloc(cap);
  while (s && (got = fread(s + n, 1, cap - n - 1, f)) > 0)
    if ((n += got) == cap - 1) s = realloc(s, cap *= 2);
  if (s) s[n] = 0;
  return s;
}

/* Run argv (argv[0] searched in $PATH unless it holds a slash) in cwd
** (NULL: the test's working directory), with env's "NAME=VALUE" entries
** set and its bare "NAME" entries unset in the child (env NULL: none), and
** wait for it; its stdout and stderr captured whole, apart. */
static inline tk_result tk_capture(const char *const *argv, const char *cwd, const char *const *env) {
  FILE *out = tmpfile(), *err = tmpfile();
  tk_result r = {127, NULL, NULL};
  if (!out || !err) {
    if (out) fclose(out);
    if (err) fclose(err);
    r.out = strdup(""), r.err = strdup("tk_capture: no temporary file");
    return r;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    for (const char *const *e = env; e && *e; e++) {
      const char *eq = strchr(*e, '=');
      if (!eq) {
        unsetenv(*e);
        continue;
      }
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
      setenv(name, eq + 1, 1);
    }
    if (dup2(fileno(out), 1) < 0 || dup2(fileno(err), 2) < 0) _exit(126);
    if (cwd && chdir(cwd)) _exit(126);
    execvp(argv[0], (char *const *)argv);
    _exit(127);
  }
  int st = 0;
  while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (pid > 0) r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.out = tk__slurp(out), r.err = tk__slurp(err);
  fclose(out);
  fclose(err);
  return r;
}

static inline void tk_result_free(tk_result *r) {
  free(r->out);
  free(r->err);
  r->out = r->err = NULL;
}

#endif
