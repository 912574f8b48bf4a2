/*
** cm_stencil.c -- the roofline model of the host stencil schedule
** (targets/host/hk_stencil.c): STEPS Jacobi steps of the 5-point stencil
** over TX x TY tiles, in time blocks of TB steps (TB > 1: each tile grows
** by a halo of TB cells, copies it into two private buffers, runs the
** block's steps there on a shrinking region and writes its centre back).
** The work of one schedule: the useful flops; the bytes each level fills,
** from one thread's tile loops of a time block handed to the reuse
** analysis of cm_nest.c (windows sized so that a tile's halo and the
** partial lines at its edges count once where neighbouring tiles share
** them, see shared_traffic), the three grids (input, out, the static
** scratch grid the blocks ping-pong through) touched once when a block's
** data fits, the private buffers by the regime their tiles fall in;
** the compute efficiency (lanes of the vectorised rows and their
** epilogues, the redundant halo work of temporal blocking, 6 flops in 5
** instructions); the split between threads and the loop trips. Every
** number that is not a count is a coefficient in st_coefs[].
**
** The L1 term counts access slots: each load or store instruction is
** charged the bytes of a full-vector access (the L1 ceiling is measured
** with full-vector loads; a narrow access takes a whole port slot), a
** store store_slots times a load. Buffers start on a line; a tile's run
** starts mid-line (a fixed lead when rows are line-aligned, half a line on
** average when not).
*/
#include <math.h>
#include <string.h>

#include "cm.h"

#define CM_MAXTHREADS 256   /* threads the model follows one by one */

static const char *const st_eff[] = {"lanes", "redundant", "fma"};
enum { E_LANES, E_REDUNDANT, E_FMA, NEFF };
enum { C_STORE = CM_C_EFF0 + NEFF, C_CAP_L1, C_CAP_L2, C_CAP_L3, NCOEF };

static const cm_coef st_coefs[NCOEF] = {
  CM_GENERIC_COEFS,
  {"exp_lanes", 1.0, CM_POS, "weight of the lanes of the row epilogues", 0},
  {"exp_redundant", 1.0, CM_POS, "weight of the halo recomputed by temporal blocking", 0},
  {"exp_fma", 1.0, CM_POS, "weight of 6 flops in 5 instructions (a constant "
   "of the kernel: held)", 1},
  {"store_slots", 2, CM_POS, "L1 slots of one store, in loads", 0},
  {"cap_L1", 0.75, CM_POS, "share of L1 the tiles may use before they spill", 1},
  {"cap_L2", 0.75, CM_POS, "share of L2 the tiles may use before they spill", 1},
  {"cap_L3", 0.75, CM_POS, "share of this thread's L3 the tiles may use", 1},
};

/* Vector iterations of a vectorised row of len points: 16-lane body,
** then one 8-, one 4-lane step and scalar points (the code GCC makes of
** the `omp simd` loop with AVX-512). */
static double vec_iters(double len, double vw) {
  double r = fmod(len, vw), it = floor(len / vw);
  for (double h = vw / 2; h >= 4; h /= 2)
    if (r >= h) it++, r -= h;
  return it + r;
}

/* Distinct lines of rows [0, rows) of a buffer with row stride ld floats,
** each touched on its first cols floats (line-aligned base). */
static double rows_lines(double rows, double cols, double ld, double lf) {
  if (rows <= 0 || cols <= 0) return 0;
  if (cols >= ld) return ceil(rows * ld / lf);
  double n = 0, last = -1;
  for (double r = 0; r < rows; r++) {
    double a = floor(r * ld / lf), b = floor((r * ld + cols - 1) / lf);
    n += b - fmax(a, last + 1) + 1;
    last = b;
  }
  return n;
}

/* One dimension of the tiling: interior 1..ext, tiles of t from 1. */
typedef struct st_dim {
  double ext, t, tiles;
} st_dim;

/* Over the tiles [lo, hi) of d: points of the regions grown by g (clipped
** to the interior: the region a step computes) and their vector
** iterations (f = vec_iters) or plain sum (f = NULL); clip0: clip to the
** whole grid instead (the region a tile copies). */
static double dim_sum(const st_dim *d, double lo, double hi, double g, int clip0,
                      double vw, int iters) {
  double s = 0;
  for (double k = lo; k < hi; k++) {
    double x0 = 1 + k * d->t, x1 = fmin(x0 + d->t, d->ext + 1);
    double a = fmax(clip0 ? 0 : 1, x0 - g), b = fmin(clip0 ? d->ext + 2 : d->ext + 1, x1 + g);
    s += iters ? vec_iters(b - a, vw) : b - a;
  }
  return s;
}

/* The longest region a tile of d copies (grown by g, clipped to the
** grid). */
static double dim_max_region(const st_dim *d, double g) {
  double r = 0;
  for (double k = 0; k < d->tiles; k++) {
    double x0 = 1 + k * d->t, x1 = fmin(x0 + d->t, d->ext + 1);
    r = fmax(r, fmin(d->ext + 2, x1 + g) - fmax(0, x0 - g));
  }
  return r;
}

/* The tiles [lo, hi) of d grouped by shape for a block of g steps: tile
** size, and the cells its copied region adds below and above it (fewer
** at the grid's edges). At most ST_MAXCLASS distinct shapes. */
#define ST_MAXCLASS 8
typedef struct st_class {
  double n, size, below, above;
} st_class;

static void add_class(const st_dim *d, double k, double n, double g, st_class *c, int *nc) {
  double x0 = 1 + k * d->t, x1 = fmin(x0 + d->t, d->ext + 1);
  st_class t = {n, x1 - x0, x0 - fmax(0, x0 - g), fmin(d->ext + 2, x1 + g) - x1};
  for (int i = 0; i < *nc; i++)
    if (c[i].size == t.size && c[i].below == t.below && c[i].above == t.above) {
      c[i].n += n;
      return;
    }
  c[(*nc)++] = t;
}

/* Tiles within 3 of either end of the grid can be clipped (halos are at
** most 8 cells, tiles at least 4); those between are all alike. */
static int tile_classes(const st_dim *d, double lo, double hi, double g, st_class *c) {
  int nc = 0;
  for (double k = lo; k < hi; k++) {
    if (k >= 3 && k < d->tiles - 3 && k < hi - 1) {
      double last = fmin(hi, d->tiles - 3);
      add_class(d, k, last - k, g, c, &nc);
      k = last - 1;
      continue;
    }
    add_class(d, k, 1, g, c, &nc);
  }
  return nc;
}

/* Lines of a run of len elements, its lead included (aligned rows: whole
** lines; else the expected lines at a random offset, the lead being half
** a line then). */
static double run_lines(double len, double lf, int aligned) {
  return aligned ? ceil(len / lf) : (len - lf / 2 + lf - 1) / lf;
}

/* Lines of a grid (row stride ld, rows 0..nx+1) its boundary copy
** touches: the first and last rows whole, the first and last cell of
** every other row. */
static double boundary_lines(double nx, double ld, double lf) {
  double n = 0, last = -1;
  for (double x = 0; x < nx + 2; x++) {
    double l0 = floor(x * ld / lf), l1 = floor((x * ld + ld - 1) / lf);
    if (x == 0 || x == nx + 1) {
      n += l1 - fmax(l0, last + 1) + 1;
    } else {
      n += l0 > last;
      n += l1 > fmax(l0, last);
    }
    last = l1;
  }
  return n;
}


/* The loop nest of one time block of one thread: ko x kn tiles of
** average ax x ay points (TB = 1: rows of a tile are a loop, the body one
** row; TB > 1: the body one tile), the source window's halo h. */
typedef struct st_shape {
  double NX, NY, ko, kn, ax, ay, h, lf;
  int tb1;                  /* TB == 1 */
} st_shape;

/* Elements before a tile's run in its first line: tiles start at column
** 1 + k * TY, their windows off cells earlier (rows of ld elements:
** aligned, the same for every row; else half a line on average). */
static double lead(double ld, double off, double lf) {
  return fmod(ld, lf) == 0 ? fmod(fmod(off, lf) + lf, lf) : cm_nest_overhang(ld, lf);
}

static void build(cm_nest *n, const void *ctx, int js) {
  const st_shape *s = ctx;
  memset(n, 0, sizeof *n);
  int ix = -1, iy = -1;
  double tx = 1, ty = 1;
  if (s->ko > 1) ix = n->nloops, tx = s->ko, cm_nest_loop(n, s->ko, "x");
  if (s->kn > 1) iy = n->nloops, ty = s->kn, cm_nest_loop(n, s->kn, "y");
  if (s->tb1 && s->ax > 1) ix = n->nloops, tx = s->ax, cm_nest_loop(n, s->ax, "x");
  double rows = s->tb1 ? 1 : s->ax, h2 = 2 * s->h;
  double ps = lead(s->NY + 2, 1 - s->h, s->lf), pd = lead(s->NY + 2, 1, s->lf);
  double full[2] = {s->NX + 2, s->NY + 2};
  cm_nest_array(n, "src", "xy", (double[]){cm_nest_window(rows + h2, h2, tx, ix, js),
                cm_nest_window(s->ay + h2 + ps, h2 + ps, ty, iy, js)}, full, 4, 0);
  cm_nest_array(n, "dst", "xy", (double[]){rows, cm_nest_window(s->ay + pd, pd, ty, iy, js)},
                full, 4, 0);
}

/* Lines the private buffers of TB > 1 fill into a cache of capacity cap
** for one thread (its tiles: rows ko x kn of them, or all tile columns
** of its tile rows), per tile shape: none beyond their first fill (ab)
** when a tile's data (source region, destination tile, both buffers) fits;
** what does not fit of it re-read by each tile's copy when the buffers
** fit; else every step streams its regions of both. */
static double private_traffic(const st_dim *dx, const st_dim *dy, double ko, double kn,
                              int tiles, int t, int th, double TB, double lastnt, double nb,
                              double cap, double ab, double lf, double line, double LD) {
  double LY = dy->t + 2 * TB, total = 0, first = ab;
  int aligned = fmod(LD, lf) == 0;
  for (int b = 0; b < 2; b++) {            /* full blocks, the last one */
    double nblk = b ? 1 : nb - 1, nt = b ? lastnt : TB;
    if (nblk <= 0) continue;
    st_class cx[ST_MAXCLASS], cy[ST_MAXCLASS];
    double lo, hi;
    if (tiles) lo = 0, hi = dx->tiles;     /* scaled to its share below */
    else {
      double q = floor(dx->tiles / th), r = dx->tiles - q * th;
      lo = t < r ? t * (q + 1) : q * t + r, hi = lo + (t < r ? q + 1 : q);
    }
    int nx = tile_classes(dx, lo, hi, nt, cx), ny = tile_classes(dy, 0, dy->tiles, nt, cy);
    double scale = tiles ? ko * kn / (dx->tiles * dy->tiles) : 1, sum = 0;
    for (int i = 0; i < nx; i++)
      for (int j = 0; j < ny; j++) {
        double rr = cx[i].size + cx[i].below + cx[i].above;
        double rc = cy[j].size + cy[j].below + cy[j].above;
        double R = rows_lines(rr, rc, LY, lf) * line;
        double src = rr * run_lines(rc + lead(LD, 1 - nt, lf), lf, aligned) * line;
        double dst = cx[i].size * run_lines(cy[j].size + lead(LD, 1, lf), lf, aligned) * line;
        double tile = src + dst + 2 * R, x;
        if (tile <= cap) x = 0;
        else if (2 * R <= cap) x = fmin(tile - cap, 2 * R);
        else {
          /* copy in, each step's read and written regions, copy out */
          x = 2 * R + rows_lines(cx[i].size, cy[j].size, LY, lf) * line;
          for (double k = 1; k <= nt; k++) {
            double g = nt - k;
            double wr = cx[i].size + fmin(g, cx[i].below) + fmin(g, cx[i].above);
            double wc = cy[j].size + fmin(g, cy[j].below) + fmin(g, cy[j].above);
            x += (rows_lines(fmin(wr + 2, rr), fmin(wc + 2, rc), LY, lf) +
                  rows_lines(wr, wc, LY, lf)) * line;
          }
        }
        sum += cx[i].n * cy[j].n * x;
      }
    total += nblk * sum * scale;
  }
  return total + first;
}

static int st_work(const kn_problem *pb, const sp_space *sp, const int *cfg,
                   const cm_machine *m, const cm_coefs *c, cm_work *w,
                   rt_err *err) {
  const double *v = c->v;
  double NX = (double)kn_int(pb, "NX"), NY = (double)kn_int(pb, "NY");
  double STEPS = (double)kn_int(pb, "STEPS");
  double TX = (double)kn_param_int(sp, cfg, "tx"), TY = (double)kn_param_int(sp, cfg, "ty");
  double TB = (double)kn_param_int(sp, cfg, "tb");
  int tiles = !strcmp(kn_param_str(sp, cfg, "parallel"), "tiles");
  int th = (int)kn_param_int(sp, cfg, "threads");
  if (th < 1) th = 1;
  if (th > CM_MAXTHREADS) {
    rt_err_set(err, "stencil model: %d threads (at most %d)", th, CM_MAXTHREADS);
    return -1;
  }
  double vw = m->simd_floats > 0 ? m->simd_floats : 16, slot = vw * 4;
  double lf = m->line / 4.0, line = m->line, LD = NY + 2, G = (NX + 2) * LD;
  double nb = ceil(STEPS / TB), lastnt = STEPS - (nb - 1) * TB;
  st_dim dx = {NX, TX, ceil(NX / TX)}, dy = {NY, TY, ceil(NY / TY)};
  double LY = TY + 2 * TB;     /* row stride of the private buffers */

  /* Executed points and vector iterations of all blocks (tiles are
  ** separable: sums over tile rows times sums over tile columns), and the
  ** private-buffer copies of TB > 1 in vector loads. */
  double pts = 0, iters = 0, rows = 0, copy_vecs = 0, copy_rows = 0;
  for (int b = 0; b < 2; b++) {
    double nblk = b ? 1 : nb - 1, ntb = b ? lastnt : TB;
    if (nblk <= 0) continue;
    for (double k = 1; k <= ntb; k++) {
      double g = TB > 1 ? ntb - k : 0;
      double rx = dim_sum(&dx, 0, dx.tiles, g, 0, vw, 0);
      pts += nblk * rx * dim_sum(&dy, 0, dy.tiles, g, 0, vw, 0);
      iters += nblk * rx * dim_sum(&dy, 0, dy.tiles, g, 0, vw, 1);
      rows += nblk * rx * dy.tiles;
    }
    if (TB > 1) {
      double rx = dim_sum(&dx, 0, dx.tiles, ntb, 1, vw, 0);
      double cy = 0, ty = 0;   /* vectors of a copied region row, tile row */
      for (double k = 0; k < dy.tiles; k++) {
        double y0 = 1 + k * TY, y1 = fmin(y0 + TY, NY + 1);
        cy += ceil((fmin(NY + 2, y1 + ntb) - fmax(0, y0 - ntb)) / vw);
        ty += ceil((y1 - y0) / vw);
      }
      copy_vecs += nblk * (2 * rx * cy + NX * ty);
      copy_rows += nblk * (2 * rx + NX) * dy.tiles;
    }
  }
  double useful = NX * NY * STEPS;
  double bound = 2 * (NY + 2) + 2 * NX;     /* boundary cells copied */

  /* Footprints of the whole call: input and out whole grids, scratch
  ** whole when blocks ping-pong through it (else its boundary), the
  ** private buffers (the longest regions a tile copies). */
  double Gl = ceil(G / lf) * line, bl = boundary_lines(NX, LD, lf) * line;
  double scratch = nb >= 2 ? Gl : bl, ab = 0, R = 0;
  if (TB > 1) {
    double ar = dim_max_region(&dx, TB), ac = dim_max_region(&dy, TB);
    R = rows_lines(ar, ac, LY, lf) * line;
    ab = 2 * R;
  }

  /* Threads: tile rows, or ranges of the collapsed tile space. */
  double share[CM_MAXTHREADS], ko[CM_MAXTHREADS], kn[CM_MAXTHREADS];
  int active = 0;
  for (int t = 0; t < th; t++) {
    double lo, hi;
    cm_omp_static(tiles ? dx.tiles * dy.tiles : dx.tiles, th, t, &lo, &hi);
    if (tiles) {
      double cnt = hi - lo, r0 = floor(lo / dy.tiles), r1 = floor((hi - 1) / dy.tiles);
      share[t] = 0;
      for (double r = r0; r <= r1 && cnt > 0; r++) {   /* rows of tiles it has */
        double a = fmax(lo, r * dy.tiles) - r * dy.tiles, e = fmin(hi, (r + 1) * dy.tiles) - r * dy.tiles;
        double h = fmin((r + 1) * TX, NX) - r * TX;
        share[t] += h * (fmin(e * TY, NY) - fmin(a * TY, NY));
      }
      ko[t] = cnt >= dy.tiles ? cnt / dy.tiles : 1, kn[t] = cnt > 0 ? cnt / ko[t] : 0;
    } else {
      double x0 = fmin(lo * TX, NX), x1 = fmin(hi * TX, NX);
      share[t] = (x1 - x0) * NY;
      ko[t] = hi - lo, kn[t] = dy.tiles;
    }
    active += share[t] > 0;
  }
  if (active < 1) active = 1;

  /* Bytes per level, thread by thread. */
  double caps[3] = {m->cache[0] * v[C_CAP_L1], m->cache[1] * v[C_CAP_L2],
                    m->cache[2] / active * v[C_CAP_L3]};
  double f[3] = {0, 0, 0}, smax = 0, total = NX * NY;
  for (int t = 0; t < th; t++) {
    if (share[t] <= 0) continue;
    smax = fmax(smax, share[t]);
    /* the thread's average tile */
    double ax, ay;
    if (tiles) ax = fmin(TX, NX), ay = share[t] / (ko[t] * kn[t]) / ax;
    else ax = share[t] / NY / ko[t], ay = NY / dy.tiles;
    double all = (2 * Gl + scratch) * share[t] / total + ab;
    for (int l = 0; l < 3; l++) {
      double cap = caps[l], fb = 0, one = 0;
      st_shape s = {NX, NY, ko[t], kn[t], ax, ay, 1, lf, TB == 1};
      cm_nest n;
      for (int b = 0; b < 2; b++) {          /* full blocks, the last one */
        double nblk = b ? 1 : nb - 1;
        if (nblk <= 0) continue;
        if (TB > 1) s.h = b ? lastnt : TB;
        build(&n, &s, -1);
        one = fmax(one, cm_nest_footprint(&n, m->line));
        fb += nblk * cm_nest_traffic_shared(build, &s, fmax(cap - ab, 0), m->line, NULL);
      }
      if (TB > 1) fb += private_traffic(&dx, &dy, ko[t], kn[t], tiles, t, th, TB, lastnt, nb,
                                        cap, ab, lf, line, LD);
      if (t == 0) fb += 3 * bl;              /* the boundary copy */
      if (one + ab <= cap)                    /* each grid once */
        f[l] += l == 2 && !m->flush && all <= cap ? 0 : all;
      else
        f[l] += fb;
    }
  }

  w->flops = 6 * useful;
  w->eff[E_LANES] = iters > 0 ? fmin(1, pts / (iters * vw)) : 1;
  w->eff[E_REDUNDANT] = pts > 0 ? fmin(1, useful / pts) : 1;
  w->eff[E_FMA] = 0.6;
  w->threads = active;
  w->imbalance = smax > 0 ? smax / (total / active) : 1;
  w->bytes[0] = slot * (iters * (5 + v[C_STORE]) + copy_vecs * (1 + v[C_STORE]) +
                        bound * (1 + 2 * v[C_STORE]));
  w->bytes[1] = f[0];
  w->bytes[2] = f[1];
  w->bytes[3] = f[2];
  w->trips = rows + iters + copy_rows;
  w->serial_frac = 0;
  return 0;
}

const cm_kmodel cm_stencil = {
  .kernel = "stencil",
  .family = "cpu",
  .neff = NEFF,
  .eff_names = st_eff,
  .ncoef = NCOEF,
  .coefs = st_coefs,
  .work = st_work,
};
