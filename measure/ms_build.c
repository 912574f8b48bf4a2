/*
** ms_build.c -- the content-addressed compile cache. The key is FNV-1a
** 128 over (source, resolved compiler path, the compiler's other words in
** $CC, the first line of `$CC --version`, cflags, ldflags), each field
** length-prefixed. KEY.c and KEY.so live in the cache directory
** (o->cache_dir, else $ROOFTUNE_CACHE, $XDG_CACHE_HOME/rooftune/cc,
** ~/.cache/rooftune/cc). Both are written under a unique temporary name
** and rename()d into place, so several processes may build the same key
** at once: each produces a complete file and the last rename wins. The
** compiler is $CC (default cc), split at blanks; cflags and ldflags are
** split at blanks too (no quoting); "-shared" is always passed.
** The --version line is cached per process (not thread-safe).
** ms_prebuild_with builds many sources at once in forked children, for
** any backend's builder (ms_prebuild: this cache's shared objects).
*/
#include "ms.h"
#include "ms_backend.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_CAP 8192   /* bytes of compiler output kept in log */

/* ---- argument vectors ---- */

typedef struct argv_t {
  char **v;
  int n, cap;
} argv_t;

static void argv_push(argv_t *a, const char *s) {
  if (a->n + 2 > a->cap) {
    a->cap = a->cap ? 2 * a->cap : 16;
    a->v = rt_realloc(a->v, (size_t)a->cap * sizeof *a->v);
  }
  a->v[a->n++] = rt_strdup(s);
  a->v[a->n] = NULL;
}

/* Push each blank-separated word of s (NULL: none). */
static void argv_words(argv_t *a, const char *s) {
  while (s && *s) {
    while (*s == ' ' || *s == '\t' || *s == '\n') s++;
    size_t len = strcspn(s, " \t\n");
    if (!len) break;
    char *w = rt_malloc(len + 1);
    memcpy(w, s, len);
    w[len] = 0;
    argv_push(a, w);
    free(w);
    s += len;
  }
}

static void argv_free(argv_t *a) {
  for (int i = 0; i < a->n; i++) free(a->v[i]);
  free(a->v);
}

/* Run argv, its stdout and stderr into out (at most LOG_CAP bytes kept).
** Returns the wait status, or -1 if fork/pipe failed (out says why). */
static int run_capture(char *const *argv, rt_str *out) {
  return rt_capture(argv, 1, LOG_CAP, out);
}

/* ---- the key ---- */

/* Hash one field: its length, then its bytes (NULL hashes as ""). */
static rt_hash hash_field(rt_hash h, const char *s) {
  uint64_t len = s ? strlen(s) : 0;
  h = rt_hash_bytes(h, &len, sizeof len);
  return len ? rt_hash_bytes(h, s, len) : h;
}

/* Absolute path of the executable name (searched in $PATH when it has no
** '/'); name itself when not found. */
static void resolve_exe(const char *name, char *out, size_t cap) {
  char cand[PATH_MAX], real[PATH_MAX];
  snprintf(out, cap, "%s", name);
  if (strchr(name, '/')) {
    if (realpath(name, real)) snprintf(out, cap, "%s", real);
    return;
  }
  const char *path = getenv("PATH");
  while (path && *path) {
    size_t len = strcspn(path, ":");
    snprintf(cand, sizeof cand, "%.*s/%s", (int)len, path, name);
    if (len && access(cand, X_OK) == 0 && realpath(cand, real)) {
      snprintf(out, cap, "%s", real);
      return;
    }
    path += len + (path[len] == ':');
  }
}

/* First line of `cc --version`, run once per $CC value. */
static const char *cc_version(argv_t *cc) {
  static char who[1024], line[512];
  char joined[1024] = "";
  for (int i = 0; i < cc->n; i++)
    snprintf(joined + strlen(joined), sizeof joined - strlen(joined), "%s ",
             cc->v[i]);
  if (*who && !strcmp(who, joined)) return line;
  argv_t a = {0};
  for (int i = 0; i < cc->n; i++) argv_push(&a, cc->v[i]);
  argv_push(&a, "--version");
  rt_str out = {0};
  int st = run_capture(a.v, &out);
  snprintf(line, sizeof line, "%.*s", out.s ? (int)strcspn(out.s, "\n") : 0,
           out.s ? out.s : "");
  if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
    snprintf(line, sizeof line, "(--version failed)");
  snprintf(who, sizeof who, "%s", joined);
  free(out.s);
  argv_free(&a);
  return line;
}

/* ---- the cache ---- */

int ms_mkdirs(const char *dir) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s", dir);
  for (char *s = p + 1; *s; s++)
    if (*s == '/') {
      *s = 0;
      if (mkdir(p, 0777) && errno != EEXIST) return -1;
      *s = '/';
    }
  return mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
}

const char *ms_cache_path(const char *cache_dir, char *out, size_t cap) {
  const char *e;
  if (cache_dir && *cache_dir) snprintf(out, cap, "%s", cache_dir);
  else if ((e = getenv("ROOFTUNE_CACHE")) && *e) snprintf(out, cap, "%s", e);
  else if ((e = getenv("XDG_CACHE_HOME")) && *e)
    snprintf(out, cap, "%s/rooftune/cc", e);
  else snprintf(out, cap, "%s/.cache/rooftune/cc",
                getenv("HOME") ? getenv("HOME") : "/tmp");
  return out;
}

/* Write text to path atomically (temporary file, then rename). */
static int write_atomic(const char *path, const char *text, rt_str *log) {
  static unsigned seq;
  char tmp[PATH_MAX + 128];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), seq++);
  FILE *f = fopen(tmp, "we");
  int ok = f && fputs(text, f) >= 0;
  if (f && fclose(f)) ok = 0;
  if (ok && rename(tmp, path) == 0) return 0;
  rt_str_printf(log, "cannot write %s: %s\n", path, strerror(errno));
  unlink(tmp);
  return -1;
}

/* The key of (src, the compiler cc names, cflags, ldflags). */
static rt_hash build_key(const char *src, const char *ldflags, const char *cflags, argv_t *cc) {
  char exe[PATH_MAX];
  resolve_exe(cc->v[0], exe, sizeof exe);
  rt_hash h = hash_field(RT_HASH_INIT, "rooftune-cc-1");
  h = hash_field(h, src);
  h = hash_field(h, exe);
  for (int i = 1; i < cc->n; i++) h = hash_field(h, cc->v[i]);
  h = hash_field(h, cc_version(cc));
  h = hash_field(h, cflags);
  return hash_field(h, ldflags);
}

static void cc_argv(argv_t *cc) {
  const char *ccenv = getenv("CC");
  argv_words(cc, ccenv && *ccenv ? ccenv : "cc");
}

void ms_build_key(const char *src, const char *ldflags, const ms_opts *o, char key[33]) {
  argv_t cc = {0};
  cc_argv(&cc);
  rt_hash_hex(build_key(src, ldflags, o->cflags ? o->cflags : MS_DEFAULT_CFLAGS, &cc), key);
  argv_free(&cc);
}

const char *ms_compiler(char *buf, size_t cap) {
  argv_t cc = {0};
  cc_argv(&cc);
  char exe[PATH_MAX];
  resolve_exe(cc.v[0], exe, sizeof exe);
  snprintf(buf, cap, "%s: %s", exe, cc_version(&cc));
  argv_free(&cc);
  return buf;
}

int ms_build(const char *src, const char *ldflags, const ms_opts *o,
             char *so_path, size_t cap, int *hit, rt_str *log) {
  rt_str sink = {0};
  if (!log) log = &sink;
  const char *cflags = o->cflags ? o->cflags : MS_DEFAULT_CFLAGS;
  argv_t cc = {0};
  cc_argv(&cc);
  rt_hash h = build_key(src, ldflags, cflags, &cc);
  char key[33];

  char dir[PATH_MAX], cpath[PATH_MAX + 64], sopath[PATH_MAX + 64];
  char tmp[PATH_MAX + 128];
  ms_cache_path(o->cache_dir, dir, sizeof dir);
  snprintf(cpath, sizeof cpath, "%s/%s.c", dir, rt_hash_hex(h, key));
  snprintf(sopath, sizeof sopath, "%.*sso", (int)strlen(cpath) - 1, cpath);
  int rc = -1;
  if (hit) *hit = 0;
  if (strlen(sopath) >= cap) {
    rt_str_printf(log, "cache path %s is too long\n", sopath);
  } else if (access(sopath, R_OK) == 0) {
    if (hit) *hit = 1;
    rc = 0;
  } else if (ms_mkdirs(dir)) {
    rt_str_printf(log, "cannot create cache directory %s: %s\n", dir,
                  strerror(errno));
  } else if (write_atomic(cpath, src, log) == 0) {
    static unsigned seq;
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", sopath, (long)getpid(), seq++);
    argv_t a = {0};
    for (int i = 0; i < cc.n; i++) argv_push(&a, cc.v[i]);
    argv_words(&a, cflags);
    argv_push(&a, "-shared");
    argv_push(&a, "-o");
    argv_push(&a, tmp);
    argv_push(&a, cpath);
    argv_words(&a, ldflags);
    rt_str out = {0};
    int st = run_capture(a.v, &out);
    if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
      if (rename(tmp, sopath) == 0) rc = 0;
      else rt_str_printf(log, "rename %s: %s\n", tmp, strerror(errno));
    } else {
      for (int i = 0; i < a.n; i++) rt_str_printf(log, "%s ", a.v[i]);
      rt_str_printf(log, "\n%s", out.s ? out.s : "");
      if (st >= 0 && WIFEXITED(st))
        rt_str_printf(log, "(compiler exit status %d)\n", WEXITSTATUS(st));
      else if (st >= 0 && WIFSIGNALED(st))
        rt_str_printf(log, "(compiler killed by signal %d)\n", WTERMSIG(st));
    }
    if (rc) unlink(tmp);
    free(out.s);
    argv_free(&a);
  }
  if (rc == 0) snprintf(so_path, cap, "%s", sopath);
  argv_free(&cc);
  free(sink.s);
  return rc;
}

void ms_prebuild_with(const char *const *srcs, int n, int jobs,
                      void (*build)(const char *src, void *ctx), void *ctx) {
  if (jobs <= 0) jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (jobs < 1) jobs = 1;
  pid_t *kids = rt_calloc((size_t)jobs, sizeof *kids);
  double deadline = rt_now() + 300;
  for (int i = 0, running = 0; i < n || running > 0;) {
    if (i < n && running < jobs) {
      pid_t pid = rt_fork(0, NULL, 0);
      if (pid == 0) {
        build(srcs[i], ctx);
        _exit(0);
      }
      i++;
      if (pid < 0) continue;   /* the measurement builds it itself */
      for (int j = 0; j < jobs; j++)
        if (!kids[j]) {
          kids[j] = pid;
          break;
        }
      running++;
      continue;
    }
    int st;
    pid_t done = -1;
    for (int j = 0; j < jobs && done <= 0; j++)   /* only our own children */
      if (kids[j] && rt_child_wait(kids[j], &st, WNOHANG) == kids[j]) done = kids[j];
    if (done <= 0) {
      if (rt_now() > deadline)
        for (int j = 0; j < jobs; j++)
          if (kids[j]) kill(-kids[j], SIGKILL);
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
      continue;
    }
    for (int j = 0; j < jobs; j++)
      if (kids[j] == done) {
        kids[j] = 0;
        running--;
      }
  }
  free(kids);
}

typedef struct cc_job {
  const char *ldflags;
  const ms_opts *o;
} cc_job;

static void cc_build(const char *src, void *ctx) {
  cc_job *j = ctx;
  char path[PATH_MAX + 64];
  rt_str log = {0};
  int hit;
  ms_build(src, j->ldflags, j->o, path, sizeof path, &hit, &log);
  free(log.s);
}

void ms_prebuild(const char *const *srcs, int n, const char *ldflags, const ms_opts *o,
                 int jobs) {
  cc_job j = {ldflags, o};
  ms_prebuild_with(srcs, n, jobs, cc_build, &j);
}
