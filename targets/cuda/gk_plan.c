/*
** gk_plan.c -- the parser of the //@rk plan lines of generated CUDA source
** (gk.h, ABI point 2), and their check against a workload's buffers.
*/
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gk.h"

/* The next whitespace-separated word of *p into w (cap bytes): 0 at the
** end of the line. A word longer than cap - 1 is cut, and flagged by
** *long_word when given. */
static int word(const char **p, char *w, size_t cap) {
  const char *s = *p;
  while (*s == ' ' || *s == '\t' || *s == '\r') s++;
  size_t n = 0;
  while (*s && !isspace((unsigned char)*s)) {
    if (n + 1 < cap) w[n++] = *s;
    else n = cap;   /* too long: refused below */
    s++;
    if (n == cap) break;
  }
  if (n == cap) {   /* the rest of a word that does not fit */
    while (*s && !isspace((unsigned char)*s)) s++;
    w[0] = 0;
    *p = s;
    return -1;
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

/* An argument: bN or sN (N < nbuf, no leading zero), or ws. */
static int arg(const char *w, int nbuf, int *a, unsigned char *how) {
  unsigned long long v;
  if (!strcmp(w, "ws")) return *a = GK_WS, *how = GK_ARG_BUF, 0;
  if ((w[0] != 'b' && w[0] != 's') || (w[1] == '0' && w[2]) ||
      num(w + 1, (unsigned long long)nbuf - 1, &v))
    return -1;
  *a = (int)v;
  *how = w[0] == 's' ? GK_ARG_VALUE : GK_ARG_BUF;
  return 0;
}

/* The rest of the line from *q, blanks trimmed, into out (cap bytes): its
** length, or -1 when it does not fit. */
static int rest_of_line(const char *q, char *out, size_t cap) {
  while (*q == ' ' || *q == '\t') q++;
  size_t n = strcspn(q, "\n");
  while (n && (q[n - 1] == ' ' || q[n - 1] == '\t' || q[n - 1] == '\r')) n--;
  if (n >= cap) return -1;
  memcpy(out, q, n);
  out[n] = 0;
  return (int)n;
}

int gk_plan_parse(const char *src, int nbuf, gk_plan *p, rt_err *err) {
  memset(p, 0, sizeof *p);
  int line = 0, ws = 0, nlaunch = 0, nlib = 0, nopts = 0;
  for (const char *s = src; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
    line++;
    if (strncmp(s, "//@rk ", 6)) continue;
    const char *q = s + 6;
    char w[128], what[16];
    unsigned long long v;
    if (word(&q, what, sizeof what) != 1) goto bad_kind;
    if (!strcmp(what, "options")) {
      int n = rest_of_line(q, p->options, sizeof p->options);
      if (nopts++ || n <= 0) {
        rt_err_set(err, "plan line %d: expected one 'options OPT...' (at least one option, at "
                   "most %d characters)", line, GK_MAXOPTS - 1);
        return -1;
      }
      continue;
    }
    if (!strcmp(what, "workspace")) {
      if (ws++ || word(&q, w, sizeof w) != 1 || num(w, (1ull << 40), &v)) {
        rt_err_set(err, "plan line %d: expected one 'workspace BYTES'", line);
        return -1;
      }
      p->workspace = (size_t)v;
      continue;
    }
    if (!strcmp(what, "symbol")) {
      gk_symbol *sy = &p->sym[p->nsym];
      unsigned char how = 0;
      if (p->nsym == GK_MAXSYM || word(&q, sy->name, sizeof sy->name) != 1 ||
          word(&q, w, sizeof w) != 1 || arg(w, nbuf, &sy->buf, &how) || how != GK_ARG_BUF ||
          sy->buf == GK_WS || word(&q, w, sizeof w) != 0) {
        rt_err_set(err, "plan line %d: expected 'symbol NAME bN' (N < %d, at most %d symbols)",
                   line, nbuf, GK_MAXSYM);
        return -1;
      }
      p->nsym++;
      continue;
    }
    if (!strcmp(what, "entry")) {
      gk_entry *en = &p->entry[p->nentry];
      int ok = p->nentry < GK_MAXENTRY && word(&q, en->name, sizeof en->name) == 1 &&
               rest_of_line(q, en->expr, sizeof en->expr) > 0;
      for (int i = 0; ok && i < p->nentry; i++) ok = strcmp(p->entry[i].name, en->name) != 0;
      if (!ok) {
        rt_err_set(err, "plan line %d: expected 'entry NAME EXPR' (a new NAME, the C++ name "
                   "expression EXPR at most %zu characters, at most %d entries)", line,
                   sizeof en->expr - 1, GK_MAXENTRY);
        return -1;
      }
      p->nentry++;
      continue;
    }
    if (p->nsteps == GK_MAXSTEP) {
      rt_err_set(err, "plan line %d: more than %d steps", line, GK_MAXSTEP);
      return -1;
    }
    gk_step *st = &p->step[p->nsteps];
    st->entry = -1;
    if (!strcmp(what, "zero")) {
      st->kind = GK_ZERO;
      if (word(&q, w, sizeof w) != 1 || arg(w, nbuf, &st->arg[0], &st->how[0]) ||
          st->how[0] != GK_ARG_BUF) {
        rt_err_set(err, "plan line %d: expected 'zero bN' (N < %d) or 'zero ws'", line, nbuf);
        return -1;
      }
      st->nargs = 1;
    } else if (!strcmp(what, "launch")) {
      st->kind = GK_LAUNCH;
      nlaunch++;
      unsigned *dims[7] = {&st->grid[0], &st->grid[1], &st->grid[2], &st->block[0],
                           &st->block[1], &st->block[2], &st->smem};
      if (word(&q, st->name, sizeof st->name) != 1) goto bad_launch;
      for (int i = 0; i < 7; i++) {
        if (word(&q, w, sizeof w) != 1 || num(w, 0xffffffffull, &v) || (i < 6 && v == 0))
          goto bad_launch;
        *dims[i] = (unsigned)v;
      }
      int r;
      while ((r = word(&q, w, sizeof w))) {
        if (r < 0 || st->nargs == GK_MAXARG || arg(w, nbuf, &st->arg[st->nargs], &st->how[st->nargs]))
          goto bad_launch;
        st->nargs++;
      }
    } else if (!strcmp(what, "library")) {
      st->kind = GK_LIBRARY;
      nlib++;
      if (word(&q, st->name, sizeof st->name) != 1) goto bad_lib;
      int r;
      while ((r = word(&q, w, sizeof w))) {
        if (r < 0 || st->nargs == GK_MAXARG || num(w, 0x7fffffffull, &v)) goto bad_lib;
        st->arg[st->nargs++] = (int)v;
      }
    } else {
      goto bad_kind;
    }
    p->nsteps++;
    continue;
  bad_kind:
    rt_err_set(err, "plan line %d: expected options, workspace, symbol, entry, zero, launch or "
               "library after '//@rk'", line);
    return -1;
  bad_launch:
    rt_err_set(err, "plan line %d: expected 'launch NAME GX GY GZ BX BY BZ SMEM ARG...' "
               "(positive grid and block, at most %d arguments bN, sN or ws, N < %d)", line,
               GK_MAXARG, nbuf);
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
  for (int i = 0; i < p->nsteps; i++) {
    gk_step *st = &p->step[i];
    for (int a = 0; a < st->nargs; a++)
      if (st->kind != GK_LIBRARY && st->arg[a] == GK_WS && !p->workspace) {
        rt_err_set(err, "plan: step %d uses ws but no workspace line gives its size", i + 1);
        return -1;
      }
    for (int e = 0; st->kind == GK_LAUNCH && e < p->nentry; e++)
      if (!strcmp(p->entry[e].name, st->name)) st->entry = e;
  }
  for (int e = 0; e < p->nentry; e++) {
    int used = 0;
    for (int i = 0; i < p->nsteps; i++) used |= p->step[i].entry == e;
    if (!used) {
      rt_err_set(err, "plan: entry %s (%s) is launched by no launch line", p->entry[e].name,
                 p->entry[e].expr);
      return -1;
    }
  }
  return 0;
}

int gk_plan_check(const gk_plan *p, const kn_buf *b, int nbuf, rt_err *err) {
  for (int i = 0; i < p->nsteps; i++) {
    const gk_step *st = &p->step[i];
    for (int a = 0; a < st->nargs && st->kind != GK_LIBRARY; a++) {
      int n = st->arg[a];
      kn_kind want = st->how[a] == GK_ARG_VALUE ? KN_SCALAR : KN_VECTOR;
      if (n == GK_WS) continue;
      if (n < 0 || n >= nbuf || b[n].kind != want) {
        rt_err_set(err, "plan: step %d (%s %s), argument %d: %c%d names %s%s, which is not %s",
                   i + 1, st->kind == GK_ZERO ? "zero" : "launch", st->kind == GK_ZERO ? "" : st->name,
                   a + 1, want == KN_SCALAR ? 's' : 'b', n, n < 0 || n >= nbuf ? "no buffer" : "buffer ",
                   n < 0 || n >= nbuf ? "" : b[n].name, want == KN_SCALAR ? "a scalar" : "a vector");
        return -1;
      }
    }
  }
  for (int i = 0; i < p->nsym; i++) {
    int n = p->sym[i].buf;
    if (n < 0 || n >= nbuf || b[n].kind != KN_SYMBOL) {
      rt_err_set(err, "plan: symbol %s: b%d names %s%s, which is not a symbol", p->sym[i].name, n,
                 n < 0 || n >= nbuf ? "no buffer" : "buffer ", n < 0 || n >= nbuf ? "" : b[n].name);
      return -1;
    }
  }
  return 0;
}
