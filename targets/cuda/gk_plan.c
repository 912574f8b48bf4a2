/*
** gk_plan.c -- the parser of the //@rk plan lines of generated CUDA source
** (gk.h, ABI point 2).
*/
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk.h"

/* The next whitespace-separated word of *p into w (cap bytes): 0 at the
** end of the line. */
static int word(const char **p, char *w, size_t cap) {
  const char *s = *p;
  while (*s == ' ' || *s == '\t') s++;
  size_t n = 0;
  while (*s && !isspace((unsigned char)*s)) {
    if (n + 1 < cap) w[n++] = *s;
    s++;
  }
  w[n] = 0;
  *p = s;
  return n > 0;
}

static int num(const char *w, unsigned long long max, unsigned long long *v) {
  if (!isdigit((unsigned char)*w)) return -1;
  errno = 0;
  char *end;
  *v = strtoull(w, &end, 10);
  return *end || errno || *v > max ? -1 : 0;
}

/* An argument: bN (N < nbuf) or ws. */
static int arg(const char *w, int nbuf, int *a) {
  unsigned long long v;
  if (!strcmp(w, "ws")) return *a = GK_WS, 0;
  if (w[0] != 'b' || num(w + 1, (unsigned long long)nbuf - 1, &v)) return -1;
  *a = (int)v;
  return 0;
}

int gk_plan_parse(const char *src, int nbuf, gk_plan *p, rt_err *err) {
  memset(p, 0, sizeof *p);
  int line = 0, ws = 0, nlaunch = 0, nlib = 0;
  for (const char *s = src; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
    line++;
    if (strncmp(s, "//@rk ", 6)) continue;
    const char *q = s + 6;
    char w[64], what[16];
    unsigned long long v;
    if (!word(&q, what, sizeof what)) goto bad_kind;
    if (p->nsteps == GK_MAXSTEP && strcmp(what, "workspace")) {
      rt_err_set(err, "plan line %d: more than %d steps", line, GK_MAXSTEP);
      return -1;
    }
    gk_step *st = &p->step[p->nsteps];
    if (!strcmp(what, "workspace")) {
      if (ws++ || !word(&q, w, sizeof w) || num(w, (1ull << 40), &v)) {
        rt_err_set(err, "plan line %d: expected one 'workspace BYTES'", line);
        return -1;
      }
      p->workspace = (size_t)v;
      continue;
    } else if (!strcmp(what, "zero")) {
      st->kind = GK_ZERO;
      if (!word(&q, w, sizeof w) || arg(w, nbuf, &st->arg[0])) {
        rt_err_set(err, "plan line %d: expected 'zero bN' (N < %d) or 'zero ws'", line, nbuf);
        return -1;
      }
      st->nargs = 1;
    } else if (!strcmp(what, "launch")) {
      st->kind = GK_LAUNCH;
      nlaunch++;
      unsigned *dims[7] = {&st->grid[0], &st->grid[1], &st->grid[2], &st->block[0],
                           &st->block[1], &st->block[2], &st->smem};
      if (!word(&q, st->name, sizeof st->name)) goto bad_launch;
      for (int i = 0; i < 7; i++) {
        if (!word(&q, w, sizeof w) || num(w, 0xffffffffull, &v) || (i < 6 && v == 0))
          goto bad_launch;
        *dims[i] = (unsigned)v;
      }
      while (word(&q, w, sizeof w)) {
        if (st->nargs == GK_MAXARG || arg(w, nbuf, &st->arg[st->nargs])) goto bad_launch;
        st->nargs++;
      }
    } else if (!strcmp(what, "library")) {
      st->kind = GK_LIBRARY;
      nlib++;
      if (!word(&q, st->name, sizeof st->name)) goto bad_lib;
      while (word(&q, w, sizeof w)) {
        if (st->nargs == GK_MAXARG || num(w, 0x7fffffffull, &v)) goto bad_lib;
        st->arg[st->nargs++] = (int)v;
      }
    } else {
      goto bad_kind;
    }
    p->nsteps++;
    continue;
  bad_kind:
    rt_err_set(err, "plan line %d: expected workspace, zero, launch or library after '//@rk'",
               line);
    return -1;
  bad_launch:
    rt_err_set(err, "plan line %d: expected 'launch NAME GX GY GZ BX BY BZ SMEM ARG...' "
               "(positive grid and block, at most %d arguments bN or ws)", line, GK_MAXARG);
    return -1;
  bad_lib:
    rt_err_set(err, "plan line %d: expected 'library NAME INT...'", line);
    return -1;
  }
  if (nlaunch + nlib == 0 || (nlaunch && nlib)) {
    rt_err_set(err, "plan: expected launch lines or one library line (found %d launch, %d library)",
               nlaunch, nlib);
    return -1;
  }
  for (int i = 0; i < p->nsteps; i++)
    for (int a = 0; a < p->step[i].nargs; a++)
      if (p->step[i].kind != GK_LIBRARY && p->step[i].arg[a] == GK_WS && !p->workspace) {
        rt_err_set(err, "plan: step %d uses ws but no workspace line gives its size", i + 1);
        return -1;
      }
  return 0;
}
