/*
** tk_exe.h -- for the tests that run the rooftune program: its path, the
** binary built beside the test programs (BUILD/tests/../rooftune).
*/
#ifndef TK_EXE_H
#define TK_EXE_H

#include <libgen.h>
#include <stdio.h>
#include <unistd.h>

/* out (cap bytes) = BUILD/rooftune of this test program; 0, or -1 after
** saying on stderr that it is not built. */
static int find_rooftune(const char *argv0, char *out, size_t cap) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return -1;
  self[n] = 0;
  snprintf(out, cap, "%s/../rooftune", dirname(self));
  if (access(out, X_OK)) {
    fprintf(stderr, "%s: %s not built\n", argv0, out);
    return -1;
  }
  return 0;
}

#endif
