/*
** fz.c -- the helpers every fuzz harness shares (fz.h): failing loudly,
** the input as text, a private folder for files, a hash of the input.
*/
#include "fz.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/rt.h"

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
