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
** block cycles through, each costing nt_partial whole ones), the share of
** the L1 fills that stores make (a read for ownership and a dirty
** write-back each: they take L2 dirty_refill more of its time, through
** mem_eff), the L1 access slots of the scalar copy (GCC
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
       C_WAYS_L1, C_WAYS_L2, C_WAYS_L3, C_DIRTY, C_WC_EXP, C_NT_PARTIAL, NCOEF };

static const cm_coef tr_coefs[NCOEF] = {
  CM_GENERIC_COEFS,
  {"store_slots", 2, CM_POS, "L1 slots of one store, in loads", 0},
  {"nt_write", 0.5, CM_POS, "DRAM cost of a streamed line against a filled one "
   "(write-backs of ordinary stores are not counted)", 0},
  {"wc_buffers", 6, CM_POS, "write-combining buffers (lines a streamed block "
   "may cycle through and still write whole lines)", 1},
  {"cap_L1", 0.75, CM_POS, "share of L1 the tiles may use before they spill", 1},
  {"cap_L2", 0.75, CM_POS, "share of L2 the tiles may use before they spill", 1},
  {"cap_L3", 0.75, CM_POS, "share of this thread's L3 the tiles may use", 1},
  {"ways_L1", 12, CM_POS, "associativity of L1 (power-of-two row strides reach few sets)", 1},
  {"ways_L2", 16, CM_POS, "associativity of L2", 1},
  {"ways_L3", 20, CM_POS, "associativity of L3", 1},
  {"dirty_refill", 3, CM_POS, "extra L2 cost of a line L1 fills for a store (the "
   "read for ownership, the dirty line's write-back), in load fills", 0},
  {"wc_exp", 4, CM_POS, "how fast a streamed line's run shrinks when a block "
   "cycles through more lines than there are write-combining buffers", 0},
  {"nt_partial", 3, CM_POS, "DRAM cost of a partly written streamed line against "
   "a whole one (read-modify-write at the memory)", 0},
};


/* One thread's nest: tile loops (outer, inner) of ko x kn tiles of
** average ao x an elements, the block loops of an average tile, the block
** (the body). Loops of one trip are left out. */
typedef struct tr_shape {
  double M, N, ko, kn, ao, an, B, lf;
  int ij, nt;
  int stores;       /* 1: the nest of out alone (the lines stores fill) */
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
  double lf = s->lf, hi = cm_nest_overhang(s->N, lf), ho = cm_nest_overhang(s->M, lf);
  double ej = cm_nest_window(bj + hi, hi, tr[1], at[1], js);
  if (!s->stores)
    cm_nest_array(n, "in", "ij", (double[]){bi, ej}, (double[]){s->M, s->N}, 4, 0);
  double ei = cm_nest_window(bi + ho, ho, tr[0], at[0], js);
  if (!s->nt)     /* streamed stores fill no line */
    cm_nest_array(n, "out", "ji", (double[]){bj, ei}, (double[]){s->N, s->M}, 4, 0);
}

/* Lines of out that L1 fills for the stores of the nest of s (of total
** fills x): those of out's nest alone, which has the cache to itself and
** the same row strides (a lower bound of its share when in competes),
** at most x. A store's fill reads the line for ownership and later writes
** it back dirty: it costs L2 more than a load's (dirty_refill). */
static double store_fills(const tr_shape *s, double x, double cap, int line,
                          const double *assoc) {
  tr_shape o = *s;
  o.stores = 1;
  return fmin(x, cm_nest_traffic_shared(build, &o, cap, line, assoc));
}

/* Elements a streamed line of out gets while it stays in one of wc
** write-combining buffers (whole lines: lf). 'ij' stores cycle through the
** block's B rows of out, B elements each: the tile's TI when its TJ rows
** stay in the buffers until the next block row, else the block's B.
** 'ji' writes rows contiguously: a block row of B elements, continued by
** the next block of the tile (whole lines when the tile is a line wide)
** or of the next tile (when the tile's rows stay in the buffers). A block
** of more rows than buffers keeps the share (wc / B)^wc_exp of what it
** would have written into a line before losing it (measured on the
** recorded host: 'ij' B=8 streams runs of about 2 elements of 8 with
** 4 < wc < 8, 'ji' B=8 half lines while B=4 writes whole ones). */
static double nt_run(int ij, double TI, double TJ, double B, double lf, double wc,
                     double wexp) {
  double keep = B > wc ? pow(wc / B, wexp) : 1;
  if (ij) {
    double run = TJ <= wc ? fmin(TI, lf) : fmin(B, lf);
    return fmax(1, run * keep);
  }
  if (B >= lf) return lf;
  double run = TI >= lf || TJ <= wc ? lf : fmin(TI, lf);
  return B + (run - B) * keep;
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

static int tr_work(const kn_problem *pb, const sp_space *sp, const int *cfg,
                   const cm_machine *m, const cm_coefs *c, cm_work *w,
                   rt_err *err) {
  const double *v = c->v;
  double M = (double)kn_int(pb, "M"), N = (double)kn_int(pb, "N");
  double TI = (double)kn_param_int(sp, cfg, "ti"), TJ = (double)kn_param_int(sp, cfg, "tj");
  double B = (double)kn_param_int(sp, cfg, "block");
  int ij = !strcmp(kn_param_str(sp, cfg, "order"), "ij");
  int nt = kn_param_int(sp, cfg, "nt") != 0;
  int collapse = !strcmp(kn_param_str(sp, cfg, "parallel"), "collapse");
  int th = (int)kn_param_int(sp, cfg, "threads");
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
  double share[CM_MAXTHREADS], f[3] = {0, 0, 0}, smax = 0, st = 0;
  int active = 0;
  for (int t = 0; t < th; t++) {
    double lo, hi;
    cm_omp_static(collapse ? nto * ntn : nto, th, t, &lo, &hi);
    share[t] = collapse ? flat_elems(hi, eo, en, to, tn, ntn) - flat_elems(lo, eo, en, to, tn, ntn)
                        : (fmin(hi * to, eo) - fmin(lo * to, eo)) * en;
    active += share[t] > 0;
  }
  if (active < 1) active = 1;
  for (int t = 0; t < th; t++) {
    if (share[t] <= 0) continue;
    smax = fmax(smax, share[t]);
    double lo, hi, ko, kn, ao, an;   /* tile trips and average tile sizes */
    cm_omp_static(collapse ? nto * ntn : nto, th, t, &lo, &hi);
    if (collapse) {
      double cnt = hi - lo;
      ko = cnt >= ntn ? cnt / ntn : 1, kn = cnt / ko;
      ao = eo / nto, an = share[t] / (ko * kn * ao);
    } else {
      ko = hi - lo, kn = ntn;
      ao = share[t] / en / ko, an = en / ntn;
    }
    tr_shape sh = {M, N, ko, kn, ao, an, B, lf, ij, nt, 0};
    double caps[3] = {m->cache[0] * v[C_CAP_L1], m->cache[1] * v[C_CAP_L2],
                      m->cache[2] / active * v[C_CAP_L3]};
    for (int l = 0; l < 3; l++) {
      /* ways and sets of the level (L3: of this thread's share) */
      double assoc[2] = {v[C_WAYS_L1 + l], floor(m->cache[l] / (v[C_WAYS_L1 + l] * m->line))};
      if (l == 2) assoc[1] = floor(assoc[1] / active);
      cm_nest n;
      build(&n, &sh, -1);
      double x = l == 2 && !m->flush && cm_nest_footprint(&n, m->line) <= caps[l] ? 0
                 : cm_nest_traffic_shared(build, &sh, caps[l], m->line, assoc);
      if (l == 0 && !nt && x > 0) st += store_fills(&sh, x, caps[0], m->line, assoc);
      f[l] += x;
    }
  }

  /* Streamed stores: elements written to a line while it stays in the
  ** write-combining buffers (nt_run); a partly written line costs DRAM
  ** nt_partial whole ones (the memory reads it to merge the write). */
  double run = nt ? nt_run(ij, TI, TJ, B, lf, v[C_WC], v[C_WC_EXP]) : lf;
  double streamed = nt ? elems / run * m->line * v[C_NT_WRITE] *
                         (run < lf - 1e-9 ? v[C_NT_PARTIAL] : 1) : 0;

  /* Inside a block. The strided side (out in 'ij', in in 'ji') touches B
  ** rows at the row stride; when they reach too few L1 sets to hold B
  ** lines in their ways, each of its accesses misses L1 (the block's own
  ** element loops run between), not once per line: B*B lines a block, of
  ** which the nest counted about B. In 'ij' they are store fills. */
  double sets1 = floor(m->cache[0] / (v[C_WAYS_L1] * m->line));
  double rstride = (ij ? M : N) * 4 / m->line;     /* strided side's rows, lines */
  if (!(ij && nt) && sets1 > 1 && B > 1 && rstride == floor(rstride)) {
    double g = sets1, b = fmod(rstride, sets1);
    while (b > 0) {
      double t = fmod(g, b);
      g = b, b = t;
    }
    double used = fmin(B, sets1 / g);
    if (B > v[C_WAYS_L1] * used) {
      f[0] += elems * (1 - 1 / B) * m->line;
      if (ij) st += elems * (1 - 1 / B) * m->line;
    }
  }

  /* L1 slots: one scalar load and store per element, except that GCC's
  ** SLP vectoriser packs the four contiguous stores of an 'ji' block of
  ** four (one xmm row of out) into one (assembly of -O3 -march=native). */
  double xmm = 16 / 4.0;
  double st_slots = !nt && !ij && B == xmm ? 1 / xmm : 1;

  /* Blocks: full ones are straight-line code (one trip); edge blocks run
  ** their element loops. */
  double blocks = dti.blocks * dtj.blocks, full = dti.full * dtj.full;
  w->flops = 0;
  w->threads = active;
  w->imbalance = smax > 0 ? smax / (elems / active) : 1;
  w->bytes[0] = slot * elems * (1 + v[C_STORE] * st_slots);
  w->bytes[1] = f[0];
  w->bytes[2] = f[1];
  w->bytes[3] = f[2] + streamed;
  /* The L2 bound's bytes stay the lines L1 fills (cm.h invariant 4);
  ** store fills cost 1 + dirty_refill load fills of L2's time. */
  w->mem_eff[1] = f[0] > 0 ? f[0] / (f[0] + v[C_DIRTY] * fmin(st, f[0])) : 1;
  w->trips = blocks + (elems - full * B * B);
  w->serial_frac = 0;
  return 0;
}

const cm_kmodel cm_transpose = {
  .kernel = "transpose",
  .family = "cpu",
  .neff = 0,
  .eff_names = NULL,
  .ncoef = NCOEF,
  .coefs = tr_coefs,
  .work = tr_work,
  .form = 2,   /* 2: partial streamed lines, store fills (issue 21) */
};
