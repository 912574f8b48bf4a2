/*
** cm_transpose.c -- the roofline model of the host transpose schedule
** (targets/host/hk_transpose.c): out[N][M] = in[M][N], no flops. The work
** of one schedule is its memory traffic: the bytes each cache level fills
** (one thread's tile and block loops handed to the reuse analysis of
** cm_nest.c: partial lines at the edges of tiles narrower than a line, or
** of unaligned ones, count once where neighbouring tiles share them; a
** tile's rows at a power-of-two stride reach few sets of a set-associative
** cache, so that it may not fit where its size says it does), nontemporal
** stores (no fills of out; streamed lines charged to DRAM,
** partial lines when the write-combining buffers cannot hold the rows a
** block cycles through), the L1 access slots of the scalar copy (GCC
** leaves the block scalar: one load and one store per element), the split
** between threads and the loop trips. Every number that is not a count is
** a coefficient in tr_coefs[].
**
** The L1 term counts access slots: each load or store instruction is
** charged the bytes of a full-vector access (the L1 ceiling is measured
** with full-vector loads, and a scalar access takes a whole port slot), a
** store store_slots times a load. With no flops, the model has no
** efficiency terms: everything it knows acts through the byte terms.
*/
#include <math.h>
#include <string.h>

#include "cm.h"

#define CM_MAXTHREADS 256   /* threads the model follows one by one */

enum { C_STORE = CM_C_EFF0, C_NT_WRITE, C_WC, C_CAP_L1, C_CAP_L2, C_CAP_L3,
       C_WAYS_L1, C_WAYS_L2, C_WAYS_L3, NCOEF };

static const cm_coef tr_coefs[NCOEF] = {
  CM_GENERIC_COEFS,
  {"store_slots", 2, CM_POS, "L1 slots of one store, in loads", 0},
  {"nt_write", 0.5, CM_POS, "DRAM cost of a streamed line against a filled one "
   "(write-backs of ordinary stores are not counted)", 0},
  {"wc_buffers", 10, CM_POS, "write-combining buffers (lines a streamed block "
   "may cycle through and still write whole lines)", 1},
  {"cap_L1", 0.75, CM_POS, "share of L1 the tiles may use before they spill", 1},
  {"cap_L2", 0.75, CM_POS, "share of L2 the tiles may use before they spill", 1},
  {"cap_L3", 0.75, CM_POS, "share of this thread's L3 the tiles may use", 1},
  {"ways_L1", 12, CM_POS, "associativity of L1 (power-of-two row strides reach few sets)", 1},
  {"ways_L2", 16, CM_POS, "associativity of L2", 1},
  {"ways_L3", 20, CM_POS, "associativity of L3", 1},
};

/* libgomp's schedule(static) without a chunk: thread t of th gets
** iterations [*lo, *hi) of n. */
static void gomp_static(double n, int th, int t, double *lo, double *hi) {
  double q = floor(n / th), r = n - q * th;
  if (t < r) *lo = t * (q + 1), *hi = *lo + q + 1;
  else *lo = q * t + r, *hi = *lo + q;
}

/* ---- Reuse between neighbouring executions (shared with the other
** kernel models; see shared_traffic) ---- */

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

/* A model's nest builder: the nest of ctx, its windows' extents suited to
** level j (see window; j < 0: a first guess). */
typedef void (*nest_fn)(cm_nest *n, const void *ctx, int j);

/* Extent in the body of a window of w elements along one dimension, of
** which halo elements (the window's overlap with its neighbour's, and
** half a line of overhang when the array's rows are not line-aligned)
** are shared with the neighbouring iteration of the innermost loop that
** moves it (t trips, index at; -1: none). Suited to one execution of loop
** j: averaged over the t trips when that loop is inside it (so that the
** loop's execution spans exactly its iterations' union), else whole. */
static double window(double w, double halo, double t, int at, int j) {
  return at >= 0 && at >= j ? w - halo + halo / t : w;
}

/* Half a line of overhang for the contiguous dimension of rows of row
** elements that are not line-aligned (the expected extra bytes of a run
** at a random offset, as whole lines round them). */
static double overhang(double row, double lf) {
  return fmod(row, lf) != 0 ? lf / 2 : 0;
}

/* Does loop l move array a? */
static int moves(const cm_loop *l, const cm_array *a) {
  for (int k = 0; k < 4 && a->dims[k]; k++)
    if (strchr(l->moves, a->dims[k])) return 1;
  return 0;
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
static double shared_traffic(nest_fn build, const void *ctx, double cap, int line,
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

/* One thread's nest: tile loops (outer, inner) of ko x kn tiles of
** average ao x an elements, the block loops of an average tile, the block
** (the body). Loops of one trip are left out. */
typedef struct tr_shape {
  double M, N, ko, kn, ao, an, B, lf;
  int ij, nt;
} tr_shape;

/* Append a loop of more than one trip; its index, or -1. */
static int loop(cm_nest *n, double trips, const char *moves) {
  if (trips <= 1) return -1;
  cm_nest_loop(n, trips, moves);
  return n->nloops - 1;
}

static void build(cm_nest *n, const void *ctx, int js) {
  const tr_shape *s = ctx;
  memset(n, 0, sizeof *n);
  const char *mo = s->ij ? "i" : "j", *mn = s->ij ? "j" : "i";
  double bo = fmax(1, ceil(s->ao / s->B - 1e-9)), bn = fmax(1, ceil(s->an / s->B - 1e-9));
  int at[2] = {-1, -1};                 /* innermost loops moving i, j */
  double tr[2] = {1, 1};
  int k;
  if ((k = loop(n, s->ko, mo)) >= 0) at[!s->ij] = k, tr[!s->ij] = s->ko;
  if ((k = loop(n, s->kn, mn)) >= 0) at[s->ij] = k, tr[s->ij] = s->kn;
  if ((k = loop(n, bo, mo)) >= 0) at[!s->ij] = k, tr[!s->ij] = bo;
  if ((k = loop(n, bn, mn)) >= 0) at[s->ij] = k, tr[s->ij] = bn;
  double bi = s->ij ? s->ao / bo : s->an / bn, bj = s->ij ? s->an / bn : s->ao / bo;
  double lf = s->lf, hi = overhang(s->N, lf), ho = overhang(s->M, lf);
  double ej = window(bj + hi, hi, tr[1], at[1], js);
  cm_nest_array(n, "in", "ij", (double[]){bi, ej}, (double[]){s->M, s->N}, 4, 0);
  double ei = window(bi + ho, ho, tr[0], at[0], js);
  if (!s->nt)     /* streamed stores fill no line */
    cm_nest_array(n, "out", "ji", (double[]){bj, ei}, (double[]){s->N, s->M}, 4, 0);
}

/* Sizes of one dimension's tiling: ext elements in tiles of t, blocks of
** b: tiles, blocks, and full (b-sized) blocks. */
typedef struct dim_tiling {
  double tiles, blocks, full;
} dim_tiling;

static dim_tiling tiling(double ext, double t, double b) {
  dim_tiling d;
  d.tiles = ceil(ext / t);
  double last = ext - (d.tiles - 1) * t;
  d.blocks = (d.tiles - 1) * ceil(t / b) + ceil(last / b);
  d.full = (d.tiles - 1) * floor(t / b) + floor(last / b);
  return d;
}

/* Elements of the tiles with flat index < x of a collapsed (outer, inner)
** tile space: eo x ei elements in tiles of to x ti, ni inner tiles. */
static double flat_elems(double x, double eo, double ei, double to,
                         double ti, double ni) {
  double r = floor(x / ni), c = x - r * ni;
  double rows = fmin(r * to, eo), row = fmin((r + 1) * to, eo) - r * to;
  return rows * ei + (row > 0 ? row : 0) * fmin(c * ti, ei);
}

static int tr_work(const hk_problem *pb, const sp_space *sp, const int *cfg,
                   const cm_machine *m, const cm_coefs *c, cm_work *w,
                   rt_err *err) {
  const double *v = c->v;
  double M = (double)hk_int(pb, "M"), N = (double)hk_int(pb, "N");
  double TI = (double)hk_param_int(sp, cfg, "ti"), TJ = (double)hk_param_int(sp, cfg, "tj");
  double B = (double)hk_param_int(sp, cfg, "block");
  int ij = !strcmp(hk_param_str(sp, cfg, "order"), "ij");
  int nt = hk_param_int(sp, cfg, "nt") != 0;
  int collapse = !strcmp(hk_param_str(sp, cfg, "parallel"), "collapse");
  int th = (int)hk_param_int(sp, cfg, "threads");
  if (th < 1) th = 1;
  if (th > CM_MAXTHREADS) {
    rt_err_set(err, "transpose model: %d threads (at most %d)", th, CM_MAXTHREADS);
    return -1;
  }
  double lf = m->line / 4.0, slot = (m->simd_floats > 0 ? m->simd_floats : 16) * 4.0;
  double elems = M * N;

  /* The tile loops in the schedule's order: outer (o) and inner (n). */
  double eo = ij ? M : N, en = ij ? N : M, to = ij ? TI : TJ, tn = ij ? TJ : TI;
  dim_tiling dti = tiling(M, TI, B), dtj = tiling(N, TJ, B);
  double nto = ceil(eo / to), ntn = ceil(en / tn);

  /* Each thread's share: outer tiles, or a range of the collapsed tile
  ** space; its nest is the share's tile loops, then the block loops of an
  ** average tile, then the block (the body). */
  double share[CM_MAXTHREADS], f[3] = {0, 0, 0}, smax = 0;
  int active = 0;
  for (int t = 0; t < th; t++) {
    double lo, hi;
    gomp_static(collapse ? nto * ntn : nto, th, t, &lo, &hi);
    share[t] = collapse ? flat_elems(hi, eo, en, to, tn, ntn) - flat_elems(lo, eo, en, to, tn, ntn)
                        : (fmin(hi * to, eo) - fmin(lo * to, eo)) * en;
    active += share[t] > 0;
  }
  if (active < 1) active = 1;
  for (int t = 0; t < th; t++) {
    if (share[t] <= 0) continue;
    smax = fmax(smax, share[t]);
    double lo, hi, ko, kn, ao, an;   /* tile trips and average tile sizes */
    gomp_static(collapse ? nto * ntn : nto, th, t, &lo, &hi);
    if (collapse) {
      double cnt = hi - lo;
      ko = cnt >= ntn ? cnt / ntn : 1, kn = cnt / ko;
      ao = eo / nto, an = share[t] / (ko * kn * ao);
    } else {
      ko = hi - lo, kn = ntn;
      ao = share[t] / en / ko, an = en / ntn;
    }
    tr_shape sh = {M, N, ko, kn, ao, an, B, lf, ij, nt};
    double caps[3] = {m->cache[0] * v[C_CAP_L1], m->cache[1] * v[C_CAP_L2],
                      m->cache[2] / active * v[C_CAP_L3]};
    for (int l = 0; l < 3; l++) {
      /* ways and sets of the level (L3: of this thread's share) */
      double assoc[2] = {v[C_WAYS_L1 + l], floor(m->cache[l] / (v[C_WAYS_L1 + l] * m->line))};
      if (l == 2) assoc[1] = floor(assoc[1] / active);
      cm_nest n;
      build(&n, &sh, -1);
      f[l] += l == 2 && !m->flush && cm_nest_footprint(&n, m->line) <= caps[l] ? 0
              : shared_traffic(build, &sh, caps[l], m->line, assoc);
    }
  }

  /* Streamed stores: elements written to a line while it stays in the
  ** write-combining buffers (whole lines at best). 'ij' stores cycle
  ** through the block's B rows of out, B elements each: one at a time
  ** when the rows outnumber the buffers, the tile's TI when its TJ rows
  ** stay in them until the next block row. 'ji' writes rows contiguously:
  ** a block row of B elements, continued by the next block of the tile
  ** (whole lines when the tile is a line wide) or of the next tile (when
  ** the tile's rows stay in the buffers). */
  double run = lf, wc = v[C_WC];
  if (nt) {
    if (ij) run = B > wc ? 1 : TJ <= wc ? fmin(TI, lf) : fmin(B, lf);
    else run = B >= lf ? lf : B > wc ? B : TI >= lf || TJ <= wc ? lf : TI;
  }
  double streamed = nt ? elems / run * m->line * v[C_NT_WRITE] : 0;

  /* Blocks: full ones are straight-line code (one trip); edge blocks run
  ** their element loops. */
  double blocks = dti.blocks * dtj.blocks, full = dti.full * dtj.full;
  w->flops = 0;
  w->threads = active;
  w->imbalance = smax > 0 ? smax / (elems / active) : 1;
  w->bytes[0] = slot * elems * (1 + v[C_STORE]);
  w->bytes[1] = f[0];
  w->bytes[2] = f[1];
  w->bytes[3] = f[2] + streamed;
  w->trips = blocks + (elems - full * B * B);
  w->serial_frac = 0;
  return 0;
}

const cm_kmodel cm_transpose = {
  .kernel = "transpose",
  .neff = 0,
  .eff_names = NULL,
  .ncoef = NCOEF,
  .coefs = tr_coefs,
  .work = tr_work,
};
