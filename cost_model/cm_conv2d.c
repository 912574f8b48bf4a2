/*
** cm_conv2d.c -- the roofline model of the host conv2d schedule
** (targets/host/hk_conv2d.c): direct convolution over output tiles of KT
** channels x PT rows split between threads, channel tiles of CT, a KB x QB
** register block summing over (c, r, s). The work of one schedule: the
** flops (padding zeros included, as hk counts them); the bytes each level
** fills, from one thread's loop nest handed to the reuse analysis of
** cm_nest.c (the input window of a call is R rows x (QB - 1) * stride +
** S columns; windows are sized so that the halo neighbouring calls and
** rows share, and the partial lines at the edges of runs, count once
** where neighbours share them, see shared_traffic), plus the serial copy
** into the zero-bordered input when pad > 0 (what it leaves in a cache is
** found there by the first pass over the input); the
** compute efficiency of the register block as GCC vectorises it (the
** block's contiguous dimension -- QB in nchw, KB in nhwc -- becomes the
** vector lanes; edge blocks, with runtime bounds, run scalar with their
** accumulators in memory), FMA chains against the latency, issue slots of
** loads, broadcasts and spills; the split between threads and the loop
** trips. Every number that is not a count is a coefficient in
** cv_coefs[].
**
** The L1 term counts access slots: each load or store instruction is
** charged the bytes of a full-vector access (the L1 ceiling is measured
** with full-vector loads; a broadcast or scalar access takes a whole port
** slot), a store store_slots times a load. Buffers start on a line;
** runs in rows that are not line-aligned cost half a line more on
** average.
*/
#include <math.h>
#include <string.h>

#include "cm.h"

#define CM_MAXTHREADS 256   /* threads the model follows one by one */

static const char *const cv_eff[] = {"lanes", "latency", "issue"};
enum { E_LANES, E_LATENCY, E_ISSUE, NEFF };
enum { C_CHAINS = CM_C_EFF0 + NEFF, C_WIDTH, C_STORE, C_CAP_L1, C_CAP_L2,
       C_CAP_L3, NCOEF };

static const cm_coef cv_coefs[NCOEF] = {
  CM_GENERIC_COEFS,
  {"exp_lanes", 1.0, CM_POS, "weight of the lanes the register block leaves empty", 0},
  {"exp_latency", 1.0, CM_POS, "weight of too few FMA chains for the latency", 0},
  {"exp_issue", 1.0, CM_POS, "weight of load, broadcast and spill issue slots", 0},
  {"fma_chains", 8, CM_POS, "independent FMA chains that hide the latency", 0},
  {"issue_width", 4, CM_POS, "instructions issued per cycle", 0},
  {"store_slots", 2, CM_POS, "L1 slots of one store, in loads", 0},
  {"cap_L1", 0.75, CM_POS, "share of L1 the tiles may use before they spill", 1},
  {"cap_L2", 0.75, CM_POS, "share of L2 the tiles may use before they spill", 1},
  {"cap_L3", 0.75, CM_POS, "share of this thread's L3 the tiles may use", 1},
};

typedef struct conv {
  double n, h, w, c, k, r, s, st, pad, p, q, hp, wp;
  int nhwc;
} conv;

/* libgomp's schedule(static) without a chunk: thread t of th gets
** iterations [*lo, *hi) of n. */
static void gomp_static(double n, int th, int t, double *lo, double *hi) {
  double q = floor(n / th), r = n - q * th;
  if (t < r) *lo = t * (q + 1), *hi = *lo + q + 1;
  else *lo = q * t + r, *hi = *lo + q;
}

/* Output units (one output channel, one row) of the collapsed iterations
** with flat index < x: cd collapsed loops of (N, K tiles, P tiles). */
static double flat_units(const conv *d, int cd, double x, double KT, double PT) {
  double nkt = ceil(d->k / KT), npt = ceil(d->p / PT);
  if (cd == 1) return x * d->k * d->p;
  double per = cd == 2 ? 1 : npt;       /* iterations per k tile */
  double n = floor(x / (nkt * per)), rem = x - n * nkt * per;
  double kt = floor(rem / per), pt = rem - kt * per;
  double ks = fmin((kt + 1) * KT, d->k) - kt * KT;
  return n * d->k * d->p + fmin(kt * KT, d->k) * d->p +
         (cd == 3 && ks > 0 ? ks * fmin(pt * PT, d->p) : 0);
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

/* One thread's loop nest. */
typedef struct cv_shape {
  const conv *d;
  double tr[3];             /* trips of the n, k-tile, p-tile loops */
  double nc, kbt, pta, nq;  /* c tiles, k blocks per k tile, rows per p
                            ** tile, q blocks per row */
  double cta, kba, qba;     /* average c tile, k block, q block */
  int kp;                   /* k blocks outside rows */
  double lf;
} cv_shape;

/* Append a loop of more than one trip along moves, the innermost so far
** along window dimension dim (-1: none): its index and trips go to at[dim],
** tr[dim]. */
static void loop(cm_nest *n, double trips, const char *moves, int dim, int *at,
                 double *tr) {
  if (trips <= 1) return;
  cm_nest_loop(n, trips, moves);
  if (dim >= 0) at[dim] = n->nloops - 1, tr[dim] = trips;
}

/* The nest: the thread's (n, k tile, p tile) loops, c tiles, k blocks
** and rows in the schedule's order, q blocks; the body one call. The
** input window of a call is R rows x (QB - 1) * stride + S columns; its
** rows advance by the stride per row, its columns by QB * stride per call
** (nchw: columns are contiguous; nhwc: channels). */
static void build(cm_nest *n, const void *ctx, int js) {
  const cv_shape *s = ctx;
  const conv *d = s->d;
  memset(n, 0, sizeof *n);
  int at[4] = {-1, -1, -1, -1};         /* innermost loops moving h, w, c, k */
  double tr[4] = {1, 1, 1, 1};
  loop(n, s->tr[0], "n", -1, at, tr);
  loop(n, s->tr[1], "k", 3, at, tr);
  loop(n, s->tr[2], "ph", 0, at, tr);
  loop(n, s->nc, "c", 2, at, tr);
  loop(n, s->kp ? s->kbt : s->pta, s->kp ? "k" : "ph", s->kp ? 3 : 0, at, tr);
  loop(n, s->kp ? s->pta : s->kbt, s->kp ? "ph" : "k", s->kp ? 0 : 3, at, tr);
  loop(n, s->nq, "qw", 1, at, tr);
  double lf = s->lf, rs = d->r * d->s, ww = (s->qba - 1) * d->st + d->s;
  double hb = window(d->r, d->r - d->st, tr[0], at[0], js);
  if (!d->nhwc) {
    double pi = overhang(d->wp, lf), po = overhang(d->q, lf);
    double wb = window(ww + pi, ww + pi - s->qba * d->st, tr[1], at[1], js);
    cm_nest_array(n, "in", "nchw", (double[]){1, s->cta, hb, wb},
                  (double[]){d->n, d->c, d->hp, d->wp}, 4, 0);
    cm_nest_array(n, "filter", "kcx", (double[]){s->kba, s->cta, rs},
                  (double[]){d->k, d->c, rs}, 4, 0);
    cm_nest_array(n, "out", "nkpq", (double[]){1, s->kba, 1,
                  window(s->qba + po, po, tr[1], at[1], js)},
                  (double[]){d->n, d->k, d->p, d->q}, 4, 0);
  } else {
    double pi = overhang(d->c, lf), pk = overhang(d->k, lf);
    double wb = window(ww, ww - s->qba * d->st, tr[1], at[1], js);
    cm_nest_array(n, "in", "nhwc", (double[]){1, hb, wb, window(s->cta + pi, pi, tr[2], at[2], js)},
                  (double[]){d->n, d->hp, d->wp, d->c}, 4, 0);
    double kb = window(s->kba + pk, pk, tr[3], at[3], js);
    cm_nest_array(n, "filter", "xck", (double[]){rs, s->cta, kb},
                  (double[]){rs, d->c, d->k}, 4, 0);
    cm_nest_array(n, "out", "npqk", (double[]){1, 1, s->qba, kb},
                  (double[]){d->n, d->p, d->q, d->k}, 4, 0);
  }
}

/* Lines of planes x rows runs of len elements, run (p, r) starting at
** element first + p * pstride + r * stride (line-aligned buffer; the
** average over alignments when there are too many runs to walk). */
static double run_lines(double planes, double rows, double pstride, double first,
                        double stride, double len, double lf) {
  if (planes * rows > 8192) return planes * rows * (len + lf - 1) / lf;
  double n = 0, last = -1;
  for (double p = 0; p < planes; p++)
    for (double r = 0; r < rows; r++) {
      double a = first + p * pstride + r * stride;
      double l0 = floor(a / lf), l1 = floor((a + len - 1) / lf);
      n += l1 - fmax(l0, last + 1) + 1;
      last = l1;
    }
  return n;
}

/* Footprint of the arrays of n named name (NULL: all but it). */
static double array_fp(const cm_nest *n, const char *name, int line) {
  cm_nest o = *n;
  o.narrays = 0;
  for (int a = 0; a < n->narrays; a++)
    if (name ? !strcmp(n->arr[a].name, name) : !!strcmp(n->arr[a].name, "in"))
      o.arr[o.narrays++] = n->arr[a];
  return cm_nest_footprint(&o, line);
}

/* Compute efficiency of a register block: u rows of v contiguous
** elements in vectors of w lanes (w = 1: scalar); spill: its
** accumulators live in memory. Per (c, r, s) step: FMAs, loads
** (vectors of the contiguous operand, broadcasts of the other; gathered
** elements when the contiguous operand is strided), stores. */
typedef struct blk_eff {
  double lanes, lat, issue, loads, stores;
} blk_eff;

static blk_eff block_eff(double u, double v, double vw, int strided, int mem,
                         double regs, const double *c) {
  blk_eff e;
  double w = 1;
  if (!mem)
    while (w * 2 <= fmin(v, vw)) w *= 2;
  if (!mem && v >= 2 && v < 4) w = 4;       /* GCC packs 2 into an xmm */
  double nv = ceil(v / w), fma = u * nv;
  e.lanes = u * v / (fma * vw);
  e.lat = fmin(1, fma / c[C_CHAINS]);
  e.loads = (strided && w > 1 ? v : nv) + u;
  e.stores = 0;
  double spill = mem ? fma : fmax(0, fma - (regs - 2));
  e.loads += spill, e.stores += spill;
  double cyc = fmax(fmax(fma / 2, e.loads / 2), e.stores);
  cyc = fmax(cyc, (fma + e.loads + e.stores + 1) / c[C_WIDTH]);
  e.issue = fma / 2 / cyc;
  return e;
}

static int cv_work(const hk_problem *pb, const sp_space *sp, const int *cfg,
                   const cm_machine *m, const cm_coefs *c, cm_work *w,
                   rt_err *err) {
  const double *v = c->v;
  conv d = {
    (double)hk_int(pb, "N"), (double)hk_int(pb, "H"), (double)hk_int(pb, "W"),
    (double)hk_int(pb, "C"), (double)hk_int(pb, "K"), (double)hk_int(pb, "R"),
    (double)hk_int(pb, "S"), (double)hk_int(pb, "stride"), (double)hk_int(pb, "pad"),
    0, 0, 0, 0, !strcmp(hk_str(pb, "layout"), "nhwc"),
  };
  if (d.st < 1) d.st = 1;
  d.p = floor((d.h + 2 * d.pad - d.r) / d.st) + 1;
  d.q = floor((d.w + 2 * d.pad - d.s) / d.st) + 1;
  d.hp = d.h + 2 * d.pad, d.wp = d.w + 2 * d.pad;
  double KB = (double)hk_param_int(sp, cfg, "kb"), QB = (double)hk_param_int(sp, cfg, "qb");
  double CT = (double)hk_param_int(sp, cfg, "ct"), KT = (double)hk_param_int(sp, cfg, "kt");
  double PT = (double)hk_param_int(sp, cfg, "pt");
  int kp = !strcmp(hk_param_str(sp, cfg, "loop_order"), "kp");
  int cd = (int)strlen(hk_param_str(sp, cfg, "parallel"));
  int th = (int)hk_param_int(sp, cfg, "threads");
  if (th < 1) th = 1;
  if (cd < 1 || cd > 3) cd = 3;
  if (th > CM_MAXTHREADS) {
    rt_err_set(err, "conv2d model: %d threads (at most %d)", th, CM_MAXTHREADS);
    return -1;
  }
  double vw = m->simd_floats > 0 ? m->simd_floats : 16, slot = vw * 4;
  double lf = m->line / 4.0, line = m->line;

  /* Tiles and blocks: k tiles of KT in k blocks of KB (the last of each
  ** tile short), p tiles of PT, c tiles of CT, q blocks of QB. */
  double nkt = ceil(d.k / KT), npt = ceil(d.p / PT), nc = ceil(d.c / CT);
  double nq = ceil(d.q / QB), qfull = floor(d.q / QB);
  double klast = d.k - (nkt - 1) * KT;
  double nkb = (nkt - 1) * ceil(KT / KB) + ceil(klast / KB);
  double kfull = (nkt - 1) * floor(KT / KB) + floor(klast / KB);
  double rs = d.r * d.s;

  /* Compute: full blocks (k block of KB and q block of QB) and the edges
  ** (runtime bounds: scalar, accumulators in memory); flop-weighted. */
  double u = d.nhwc ? QB : KB, vv = d.nhwc ? KB : QB;
  int strided = !d.nhwc && d.st > 1;
  blk_eff ef = block_eff(u, vv, vw, strided, 0, m->vector_regs, v);
  blk_eff ee = block_eff(1, 1, vw, 0, 1, m->vector_regs, v);
  double flops = 2 * d.n * d.k * d.p * d.q * d.c * rs;
  double ff = (kfull * KB * qfull * QB) / (d.k * d.q);   /* flop share of full blocks */
  w->flops = flops;
  w->eff[E_LANES] = 1 / (ff / ef.lanes + (1 - ff) / ee.lanes);
  w->eff[E_LATENCY] = 1 / (ff / ef.lat + (1 - ff) / ee.lat);
  w->eff[E_ISSUE] = 1 / (ff / ef.issue + (1 - ff) / ee.issue);

  /* Calls, steps, L1 slots and trips. Per (n, p, c tile): nkb x nq calls,
  ** kfull x qfull of them full; a call of a c tile of cc channels takes
  ** cc x R x S steps. A call loads its accumulators from out unless
  ** c0 == 0 and stores them (edges: element by element). */
  double calls = d.n * d.p * nc * nkb * nq, fcalls = d.n * d.p * nc * kfull * qfull;
  double fsteps = d.n * d.p * d.c * rs * kfull * qfull;
  double efma = flops / 2 - fsteps * KB * QB;     /* scalar FMAs of the edges */
  double eout = d.n * d.p * nc * (d.k * d.q - kfull * KB * qfull * QB);
  double accv = u * ceil(vv / fmin(fmax(vv, 1), vw));
  double acc_st = fcalls * accv + eout, acc_ld = (nc - 1) / nc * acc_st;
  double l1 = fsteps * (ef.loads + v[C_STORE] * ef.stores) +
              efma * (ee.loads + v[C_STORE] * ee.stores) + acc_ld + v[C_STORE] * acc_st;
  double trips = calls + fsteps + efma;

  /* The padding copy (serial, before the parallel region): rows of the
  ** input into the interior of the zero-bordered copy. */
  double in_lines = ceil(d.n * d.c * d.h * d.w / lf) * line, cp_lines = 0, xp_lines = 0;
  if (d.pad > 0) {
    double planes = d.nhwc ? d.n : d.n * d.c, rows = d.h, len = d.nhwc ? d.w * d.c : d.w;
    double stride = d.nhwc ? d.wp * d.c : d.wp, pstride = d.hp * stride;
    double first = d.pad * stride + d.pad * (d.nhwc ? d.c : 1);
    cp_lines = run_lines(planes, rows, pstride, first, stride, len, lf) * line;
    xp_lines = ceil(d.n * d.c * d.hp * d.wp / lf) * line;
    l1 += planes * rows * ceil(len / vw) * (1 + v[C_STORE]);
    trips += planes * rows;
  }

  /* Threads: static ranges of the collapsed (n, k tile, p tile) loops. */
  double units[CM_MAXTHREADS], lo[CM_MAXTHREADS], hi[CM_MAXTHREADS];
  double iters = cd == 1 ? d.n : cd == 2 ? d.n * nkt : d.n * nkt * npt;
  int active = 0;
  for (int t = 0; t < th; t++) {
    gomp_static(iters, th, t, &lo[t], &hi[t]);
    units[t] = flat_units(&d, cd, hi[t], KT, PT) - flat_units(&d, cd, lo[t], KT, PT);
    active += units[t] > 0;
  }
  if (active < 1) active = 1;
  double caps[3] = {m->cache[0] * v[C_CAP_L1], m->cache[1] * v[C_CAP_L2],
                    m->cache[2] / active * v[C_CAP_L3]};
  /* Each thread's nest: its iterations as trips of the collapsed loops;
  ** its footprint, that of its input window, its traffic per level. */
  double f[3] = {0, 0, 0}, umax = 0, fp_fo = 0, fp_in = 0;
  double fin[CM_MAXTHREADS], fall[CM_MAXTHREADS], mains[3][CM_MAXTHREADS];
  for (int t = 0; t < th; t++) {
    if (units[t] <= 0) continue;
    umax = fmax(umax, units[t]);
    double full[3] = {d.n, nkt, npt}, rem = hi[t] - lo[t];
    cv_shape s = {&d, {d.n, nkt, npt}, nc, nkb / nkt, d.p / npt, nq,
                  d.c / nc, d.k / nkb, d.q / nq, kp, lf};
    for (int i = cd - 1; i >= 0; i--) {
      s.tr[i] = fmax(1, fmin(full[i], rem));
      rem /= s.tr[i];
    }
    cm_nest n;
    build(&n, &s, -1);
    fin[t] = array_fp(&n, "in", m->line);
    fall[t] = cm_nest_footprint(&n, m->line);
    fp_in += fin[t], fp_fo += fall[t] - fin[t];
    for (int l = 0; l < 3; l++) mains[l][t] = shared_traffic(build, &s, caps[l], m->line, NULL);
  }

  /* Per level: when every thread's data fits (the copy's with thread
  ** 0's), the call's distinct lines once (nothing when warm at the last
  ** level). Else the copy's fills and each thread's nest, less (its share
  ** of) the copied lines the nest's first pass over its input finds where
  ** the copy left them: all when the nest fits, else none when the copy
  ** just fills the cache, all when it fills half of it or less. */
  double all = d.pad > 0 ? in_lines + xp_lines + fp_fo : fp_in + fp_fo;
  for (int l = 0; l < 3; l++) {
    int fits = 1;
    for (int t = 0; t < th; t++)
      if (units[t] > 0 && fall[t] + (t == 0 && d.pad > 0 ? in_lines + xp_lines - fin[t] : 0) > caps[l])
        fits = 0;
    if (fits) {
      f[l] = l == 2 && !m->flush ? 0 : all;
      continue;
    }
    f[l] = d.pad > 0 ? in_lines + cp_lines : 0;
    for (int t = 0; t < th; t++) {
      if (units[t] <= 0) continue;
      double x = mains[l][t];
      if (d.pad > 0) {
        double cp = in_lines + cp_lines, left = fall[t] <= caps[l] ? 1
                    : fmin(1, fmax(0, (caps[l] - cp) / cp));
        x -= left * fmin(fin[t], cp_lines * units[t] / (d.n * d.k * d.p));
      }
      f[l] += fmax(x, 0);
    }
  }

  w->threads = active;
  w->imbalance = umax > 0 ? umax / (d.n * d.k * d.p / active) : 1;
  w->bytes[0] = slot * l1;
  w->bytes[1] = f[0];
  w->bytes[2] = f[1];
  w->bytes[3] = f[2];
  w->trips = trips;
  w->serial_frac = 0;
  return 0;
}

const cm_kmodel cm_conv2d = {
  .kernel = "conv2d",
  .neff = NEFF,
  .eff_names = cv_eff,
  .ncoef = NCOEF,
  .coefs = cv_coefs,
  .work = cv_work,
};
