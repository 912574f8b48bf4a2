/*
** fz.c -- the helpers every fuzz harness shares (fz.h): failing loudly,
** the input as text, a private folder for files, a hash of the input, the
** checks of a reader-library answer (targets rtdb and lookup).
*/
#include "fz.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/rt.h"
#include "../db/rtdb.h"

void fz_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fuzz: invariant broken: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

char *fz_text(const uint8_t *data, size_t size) {
  char *s = rt_malloc(size + 1);
  if (size) memcpy(s, data, size);
  s[size] = 0;
  return s;
}

static char tmpdir[256];

/* Remove the folder's files (harnesses make no sub-folders), then it. */
static void remove_tmpdir(void) {
  DIR *d = opendir(tmpdir);
  if (d) {
    for (struct dirent *e; (e = readdir(d));) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char p[512];
      snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(tmpdir);
}

const char *fz_tmpdir(void) {
  if (!tmpdir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/rooftune-fuzz.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir)) fz_fail("mkdtemp %s failed", tmpdir);
    atexit(remove_tmpdir);
  }
  return tmpdir;
}

void fz_write_file(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
    fz_fail("cannot write %s", path);
}

uint64_t fz_hash(const uint8_t *data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 0x100000001b3ull;
  return h;
}

void fz_check_result(int rc, const rtdb_result *r, const rtdb *rd, size_t i) {
  FZ_CHECK(rc >= RTDB_OK && rc <= RTDB_READONLY, "lookup %zu: code %d", i, rc);
  if (rc != RTDB_OK) {
    const char *m = rtdb_errmsg(rd);
    FZ_CHECK(m && m[0], "lookup %zu: %s without a message", i, rtdb_errstr(rc));
    return;
  }
  FZ_CHECK(r->match >= RTDB_EXACT && r->match <= RTDB_DEFAULT, "lookup %zu: match %d", i, r->match);
  FZ_CHECK(memchr(r->config, 0, sizeof r->config) && memchr(r->workload, 0, sizeof r->workload),
           "lookup %zu: texts not NUL-terminated", i);
  if (r->match == RTDB_EXACT)
    FZ_CHECK(r->distance == 0 && r->pin_version >= 1 && r->workload[0],
             "lookup %zu: exact with distance %g, version %d", i, r->distance, r->pin_version);
  if (r->match == RTDB_NEAREST)
    FZ_CHECK(r->distance > 0 && !isnan(r->distance) && r->pin_version >= 1 && r->workload[0],
             "lookup %zu: nearest with distance %g, version %d", i, r->distance, r->pin_version);
  if (r->match == RTDB_DEFAULT)
    FZ_CHECK(r->pin_version == 0 && !r->workload[0], "lookup %zu: default with version %d", i,
             r->pin_version);
  /* families: the level agrees with the match; a pin names its target */
  FZ_CHECK(memchr(r->target, 0, sizeof r->target) && memchr(r->fingerprint, 0, sizeof r->fingerprint),
           "lookup %zu: target texts not NUL-terminated", i);
  FZ_CHECK(r->level >= RTDB_LEVEL_TARGET && r->level <= RTDB_LEVEL_DEFAULT &&
               (r->level == RTDB_LEVEL_DEFAULT) == (r->match == RTDB_DEFAULT) &&
               (r->match == RTDB_DEFAULT ? !r->target[0] && !r->fingerprint[0] : r->target[0] && r->fingerprint[0]),
           "lookup %zu: level %d with match %d, target '%s'", i, r->level, r->match, r->target);
}

int fz_same_result(const rtdb_result *a, const rtdb_result *b) {
  return a->match == b->match && a->level == b->level && !strcmp(a->target, b->target) &&
         !strcmp(a->fingerprint, b->fingerprint) && !strcmp(a->config, b->config) &&
         !strcmp(a->workload, b->workload) && a->pin_version == b->pin_version &&
         !memcmp(&a->time_s, &b->time_s, sizeof a->time_s) &&
         !memcmp(&a->distance, &b->distance, sizeof a->distance);
}
