/*
** rt_out.c -- the one way rooftune writes an output file (rt.h states the
** rule): a temporary file beside the target, renamed over it on success;
** symbolic links, folders and the command's own inputs are refused.
*/
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rt_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (!a || !b || stat(a, &sa) || stat(b, &sb)) return 0;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void out_clear(rt_out *o) {
  free(o->path);
  free(o->tmp);
  *o = (rt_out){0};
}

int rt_out_open(rt_out *o, const char *path, const char *const *protect, rt_err *e) {
  *o = (rt_out){0};
  if (!path || !*path) {
    rt_err_set(e, "no output file named");
    return -1;
  }
  struct stat st;
  if (lstat(path, &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      rt_err_set(e, "%s: is a symbolic link; rooftune does not write through links (name the file itself)",
                 path);
      return -1;
    }
    if (!S_ISREG(st.st_mode)) {
      rt_err_set(e, "%s: exists and is not a regular file", path);
      return -1;
    }
    for (const char *const *p = protect; p && *p; p++)
      if (rt_same_file(path, *p)) {
        rt_err_set(e, "%s: is the same file as the input %s; refusing to overwrite it", path, *p);
        return -1;
      }
  } else if (errno != ENOENT) {
    rt_err_set(e, "%s: %s", path, strerror(errno));
    return -1;
  }
  rt_str t = {0};
  rt_str_printf(&t, "%s.tmp-XXXXXX", path);
  int fd = mkostemp(t.s, O_CLOEXEC);
  if (fd < 0) {
    rt_err_set(e, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
    free(t.s);
    return -1;
  }
  /* mkostemp makes 0600; an output gets the usual mode under the umask. */
  mode_t um = umask(0);
  umask(um);
  (void)fchmod(fd, 0666 & ~um);
  o->f = fdopen(fd, "w");
  if (!o->f) {
    rt_err_set(e, "%s: %s", t.s, strerror(errno));
    close(fd);
    unlink(t.s);
    free(t.s);
    return -1;
  }
  o->path = rt_strdup(path);
  o->tmp = t.s;
  return 0;
}

int rt_out_commit(rt_out *o, rt_err *e) {
  if (!o->f) {
    rt_err_set(e, "output file not open");
    return -1;
  }
  int bad = ferror(o->f) || fflush(o->f) || fsync(fileno(o->f));
  int saved = errno;
  if (fclose(o->f)) bad = 1, saved = errno;
  o->f = NULL;
  if (bad) {
    rt_err_set(e, "%s: write failed: %s", o->path, strerror(saved));
  } else if (rename(o->tmp, o->path)) {
    bad = 1;
    rt_err_set(e, "%s: cannot rename the temporary file over it: %s", o->path, strerror(errno));
  }
  if (bad) unlink(o->tmp);
  out_clear(o);
  return bad ? -1 : 0;
}

void rt_out_abort(rt_out *o) {
  if (o->f) {
    fclose(o->f);
    unlink(o->tmp);
  }
  out_clear(o);
}
