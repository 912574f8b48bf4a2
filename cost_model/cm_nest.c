/*
** cm_nest.c -- reuse analysis of a loop nest under an LRU cache: how many
** bytes a cache of a given capacity must fetch from the next level for one
** execution of the nest (see cm.h, "Reuse analysis"): the exact LRU rule
** (cm_nest_traffic), its smoothed form for set-associative caches
** (cm_nest_traffic_sa), and the form for nests whose windows share halos
** with their neighbours and whose power-of-two row strides reach few sets
** (cm_nest_traffic_shared). Every kernel model describes its schedule as a
** cm_nest; this file is the one place that decides what fits and how often
** a tile is re-read.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"

/* Extent of array a in its dimension c during one execution of loop j
** (j = nloops: the innermost body). */
static double extent(const cm_nest *n, const cm_array *a, int c, int j) {
  int d = a->depth > 0 && a->depth < n->nloops ? a->depth : n->nloops;
  double e = a->ext[c];
  for (int i = j; i < d; i++)
    for (const char *m = n->loop[i].moves; *m; m++)
      if (*m == a->dims[c]) e *= n->loop[i].trips;
  return e < a->full[c] ? e : a->full[c];
}

static int ndims(const cm_array *a) {
  int k = 0;
  while (k < 4 && a->dims[k]) k++;
  return k;
}

/* Whole lines of array a touched in one execution of loop j (0 when a is
** touched only outside j). */
static double fp_array(const cm_nest *n, const cm_array *a, int j, int line) {
  int d = a->depth > 0 && a->depth < n->nloops ? a->depth : n->nloops;
  if (j > d || (j == d && d < n->nloops)) return 0;
  int nd = ndims(a), k = nd - 1;
  double ext[4];
  for (int c = 0; c < nd; c++) ext[c] = extent(n, a, c, j);
  double run = ext[k] * a->elem;
  while (k > 0 && ext[k] >= a->full[k]) run *= ext[--k];
  double rows = 1;
  for (int c = 0; c < k; c++) rows *= ext[c];
  return rows * ceil(run / line - 1e-9) * line;
}

/* The block an array with a packing depth touches per visit. */
static double block(const cm_nest *n, const cm_array *a, int line) {
  int d = a->depth;
  cm_nest one = *n;
  one.nloops = d;                 /* the array's own view: loops < depth */
  cm_array b = *a;
  b.depth = 0;
  return fp_array(&one, &b, d, line);
}

static double fp_all(const cm_nest *n, int j, int line) {
  double s = 0;
  for (int x = 0; x < n->narrays; x++) s += fp_array(n, &n->arr[x], j, line);
  return s;
}

double cm_nest_footprint(const cm_nest *n, int line) {
  double s = 0;
  for (int x = 0; x < n->narrays; x++) {
    const cm_array *a = &n->arr[x];
    if (a->depth > 0 && a->depth < n->nloops) {
      /* all visits of the block: the loops outside its depth */
      cm_nest outer = *n;
      outer.nloops = a->depth;
      cm_array b = *a;
      b.depth = 0;
      s += fp_array(&outer, &b, 0, line);
    } else {
      s += fp_array(n, a, 0, line);
    }
  }
  return s;
}

static int moves(const cm_loop *l, const cm_array *a) {
  for (const char *m = l->moves; *m; m++)
    for (int c = 0; c < ndims(a); c++)
      if (*m == a->dims[c]) return 1;
  return 0;
}

/* Bytes fetched when loop js is the outermost whose execution stays in
** the cache (js = nloops: only the innermost body). */
static double traffic_at(const cm_nest *n, int js, double cap, int line) {
  double bytes = 0;
  for (int x = 0; x < n->narrays; x++) {
    const cm_array *a = &n->arr[x];
    int d = a->depth > 0 && a->depth < n->nloops ? a->depth : n->nloops;
    int j = js < d ? js : d;
    double fp, reuse_dist;
    if (j == d && d < n->nloops) {
      fp = block(n, a, line);
      reuse_dist = fp + fp_all(n, j, line);
    } else {
      fp = fp_array(n, a, j, line);
      reuse_dist = fp_all(n, j, line);
    }
    double e = 1;
    for (int i = 0; i < j; i++) e *= n->loop[i].trips;
    if (j > 0 && !moves(&n->loop[j - 1], a) && reuse_dist <= cap) {
      e /= n->loop[j - 1].trips;      /* reused across the loop outside */
    } else if (j > 0 && !(j == d && d < n->nloops) && moves(&n->loop[j - 1], a)) {
      /* streamed by the loop outside: one iteration's lines stay while the
      ** next starts, so lines shared by neighbours are fetched once */
      e /= n->loop[j - 1].trips;
      fp = fp_array(n, a, j - 1, line);
    }
    bytes += fp * e;
  }
  return bytes;
}

/* The outermost loop whose whole execution fits in cap. */
static int fitting_loop(const cm_nest *n, double cap, int line) {
  for (int j = 0; j <= n->nloops; j++)
    if (fp_all(n, j, line) <= cap) return j;
  return n->nloops;
}

double cm_nest_traffic(const cm_nest *n, double cap, int line, int warm) {
  double total = cm_nest_footprint(n, line);
  if (total <= cap) return warm ? 0 : total;
  double bytes = traffic_at(n, fitting_loop(n, cap, line), cap, line);
  /* Never less than what the nest touches at all. */
  return bytes < total ? total : bytes;
}

double cm_nest_traffic_sa(const cm_nest *n, double cap, int line, int warm) {
  double total = cm_nest_footprint(n, line);
  if (total <= cap) return warm ? 0 : total;
  int js = fitting_loop(n, cap, line);
  double hi = traffic_at(n, js, cap, line);
  if (js > 0) {
    /* The loop just outside overflows by f / cap: the lines it would have
    ** reused survive in proportion (random replacement's steady state). */
    double f = fp_all(n, js - 1, line);
    double lo = traffic_at(n, js - 1, f, line);   /* as if it had fitted */
    double keep = f > cap ? cap / f : 1;
    if (lo < hi) hi = hi - (hi - lo) * keep;
  }
  return hi < total ? total : hi;
}

/* A model built a nest larger than the fixed bounds: a programming error. */
static void overflow(const char *what) {
  fprintf(stderr, "cm_nest: too many %s\n", what);
  abort();
}

void cm_nest_loop(cm_nest *n, double trips, const char *moves) {
  if (n->nloops >= CM_MAXLOOP) overflow("loops");
  cm_loop *l = &n->loop[n->nloops++];
  l->trips = trips > 0 ? trips : 0;
  size_t len = strlen(moves);     /* a plain copy: snprintf was a tenth of a calibration */
  if (len >= sizeof l->moves) overflow("dimensions a loop moves");
  memcpy(l->moves, moves, len + 1);
}

void cm_nest_array(cm_nest *n, const char *name, const char *dims,
                   const double *ext, const double *full, double elem,
                   int depth) {
  if (n->narrays >= CM_MAXARR) overflow("arrays");
  cm_array *a = &n->arr[n->narrays++];
  memset(a, 0, sizeof *a);
  a->name = name;
  for (int c = 0; c < 4 && dims[c]; c++) {
    a->dims[c] = dims[c];
    a->ext[c] = ext[c];
    a->full[c] = full[c];
  }
  a->elem = elem;
  a->depth = depth;
}

/* ---- Reuse between neighbouring executions: windows whose halos and
** partial lines neighbours share, set conflicts, and reuse across every
** enclosing loop that leaves an array in place (cm_nest_traffic_shared) ---- */

/* Does array x of n, in one execution of loop j, fit a set-associative
** cache of sets x ways lines (sets <= 1: fully associative)? The rows of
** a two-dimensional window fall on the sets its row stride reaches (a
** power-of-two stride reaches few): its lines must fit their ways. */
static int fits_sets(const cm_nest *n, int x, int j, int line, double sets, double ways) {
  const cm_array *a = &n->arr[x];
  if (sets <= 1 || !a->dims[1] || a->dims[2]) return 1;
  double ext[2];
  for (int c = 0; c < 2; c++) {
    ext[c] = a->ext[c];
    for (int i = j; i < n->nloops; i++)
      if (strchr(n->loop[i].moves, a->dims[c])) ext[c] *= n->loop[i].trips;
    ext[c] = fmin(ext[c], a->full[c]);
  }
  double stride = a->full[1] * a->elem / line;   /* row stride in lines */
  if (ext[1] >= a->full[1] || ext[0] <= 1 || stride != floor(stride)) return 1;
  double g = sets, b = fmod(stride, sets);      /* gcd(stride, sets) */
  while (b > 0) {
    double t = fmod(g, b);
    g = b, b = t;
  }
  double run = ceil(ext[1] * a->elem / line);
  double used = fmin(sets, fmin(ext[0], sets / g) * run);
  return ext[0] * run <= ways * used;
}

/* The outermost loop of n one execution of which fits in cap (and, with
** assoc = {ways, sets}, in the sets its rows reach); nloops + 1 when not
** even the body fits. */
static int fit_loop(const cm_nest *n, double cap, int line, const double *assoc) {
  for (int j = 0; j <= n->nloops; j++) {
    cm_nest sub = *n;
    sub.nloops = n->nloops - j;
    memmove(sub.loop, n->loop + j, (size_t)sub.nloops * sizeof *sub.loop);
    int ok = cm_nest_footprint(&sub, line) <= cap;
    for (int x = 0; ok && assoc && x < n->narrays; x++)
      ok = fits_sets(n, x, j, line, assoc[1], assoc[0]);
    if (ok) return j;
  }
  return n->nloops + 1;
}

/* Footprint of array x of n during one execution of loop j, in lines of
** line bytes (line 4: the bytes themselves, runs not rounded to lines). */
static double fp_one(const cm_nest *n, int x, int j, int line) {
  cm_nest sub = *n;
  sub.nloops = n->nloops - j;
  memmove(sub.loop, n->loop + j, (size_t)sub.nloops * sizeof *sub.loop);
  sub.narrays = 1;
  sub.arr[0] = n->arr[x];
  return cm_nest_footprint(&sub, line);
}

/* A capacity that makes loop js the outermost that fits n by footprint
** alone: the footprint of one execution of it (js > nloops: just below
** the body's). */
static double fit_cap(const cm_nest *n, int js, int line) {
  if (js > n->nloops) return 0.999 * fit_cap(n, n->nloops, line);
  cm_nest sub = *n;
  sub.nloops = n->nloops - js;
  memmove(sub.loop, n->loop + js, (size_t)sub.nloops * sizeof *sub.loop);
  return cm_nest_footprint(&sub, line);
}

/* Extent in the body of a window of w elements along one dimension, of
** which halo elements (the window's overlap with its neighbour's, and
** half a line of overhang when the array's rows are not line-aligned)
** are shared with the neighbouring iteration of the innermost loop that
** moves it (t trips, index at; -1: none). Suited to one execution of loop
** j: averaged over the t trips when that loop is inside it (so that the
** loop's execution spans exactly its iterations' union), else whole. */
double cm_nest_window(double w, double halo, double t, int at, int j) {
  return at >= 0 && at >= j ? w - halo + halo / t : w;
}

/* Half a line of overhang for the contiguous dimension of rows of row
** elements that are not line-aligned (the expected extra bytes of a run
** at a random offset, as whole lines round them). */
double cm_nest_overhang(double row, double lf) {
  return fmod(row, lf) != 0 ? lf / 2 : 0;
}


/* Lines filled into a cache of capacity cap by the nest of ctx. The loop
** that fits (js) is found with windows suited to it, and to the set
** conflicts of assoc = {ways, sets} (NULL: none); when not even the body
** fits, each of its executions fetches all of it. Else cm_nest_traffic
** counts the nest with windows suited to the loop just outside it, whose
** union it charges for the arrays that loop moves (neighbours share their
** halos and partial lines), made to agree on js. An array that several
** enclosing loops leave in place stays across all of them (each execution
** touches it again before the cache could drop it): cm_nest_traffic
** credits the innermost one only, the others are credited here. */
double cm_nest_traffic_shared(cm_nest_fn build, const void *ctx, double cap, int line,
                              const double *assoc) {
  cm_nest a;
  build(&a, ctx, -1);
  int js = fit_loop(&a, cap, line, assoc);
  for (int it = 0; it < 3; it++) {
    build(&a, ctx, js);
    int j2 = fit_loop(&a, cap, line, assoc);
    if (j2 == js) break;
    js = j2;
  }
  if (js == 0) return cm_nest_traffic(&a, cap, line, 0);
  if (js > a.nloops) {
    /* not even the body fits: every execution of it fetches its whole
    ** windows (its neighbours' lines are gone by then) */
    double e = 1;
    for (int i = 0; i < a.nloops; i++) e *= a.loop[i].trips;
    return fmax(fit_cap(&a, a.nloops, line) * e, cm_nest_footprint(&a, line));
  }
  build(&a, ctx, js - 1);
  double t = cm_nest_traffic(&a, fit_cap(&a, js, line), line, 0);
  double e = 1, cut = 0;
  for (int i = 0; i < js; i++) e *= a.loop[i].trips;
  for (int x = 0; x < a.narrays; x++) {
    const cm_array *ar = &a.arr[x];
    if (moves(&a.loop[js - 1], ar)) continue;
    double div = 1;
    for (int k = js - 1; k >= 0 && !moves(&a.loop[k], ar); k--) div *= a.loop[k].trips;
    cut += fp_one(&a, x, js, line) * e * (1 / a.loop[js - 1].trips - 1 / div);
  }
  return fmax(t - cut, cm_nest_footprint(&a, line));

}
