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
** found there by the first pass over the input); the compute efficiency
** of the register block from the cycles of one (c, r, s) step as GCC 12
** compiles it (-O3 -march=sapphirerapids, the recorded target: 256-bit
** vectors, vec_lanes): FMA, load and store ports and the issue width for
** the step's instructions -- FMAs, vectors and broadcasts, filter
** pointers reloaded when rows outnumber the general registers, spilled
** accumulators, the loop's control and the rows' set-up each time the
** innermost reduction loop starts (s for 'crs', the channel tile for
** 'rsc') --, against the FMA latency (form 3, issue 21; see block_eff);
** the split between threads and the loop trips. Every number that is
** not a count is a coefficient in cv_coefs[].
**
** The L1 term counts the bytes the loads and stores move (each access
** its lanes x 4 bytes, a pointer 8, a store store_slots times a load):
** the ports that issue them are the compute term's. Buffers start on a
** line; runs in rows that are not line-aligned cost half a line more on
** average.
*/
#include <math.h>
#include <string.h>

#include "cm.h"

#define CM_MAXTHREADS 256   /* threads the model follows one by one */

static const char *const cv_eff[] = {"lanes", "latency", "issue"};
enum { E_LANES, E_LATENCY, E_ISSUE, NEFF };
enum { C_CHAINS = CM_C_EFF0 + NEFF, C_WIDTH, C_STORE, C_CAP_L1, C_CAP_L2,
       C_CAP_L3, C_VL, C_LOADS, C_GPR, C_ROW, C_EDGE, NCOEF };

static const cm_coef cv_coefs[NCOEF] = {
  CM_GENERIC_COEFS,
  {"exp_lanes", 1.0, CM_POS, "weight of the lanes the register block leaves empty", 0},
  {"exp_latency", 1.0, CM_POS, "weight of too few FMA chains for the latency", 0},
  {"exp_issue", 1.0, CM_POS, "weight of the load and store ports and issue width beyond the FMA ports", 0},
  {"fma_chains", 8, CM_POS, "FMA latency x FMA ports: a step takes at least half as many cycles", 0},
  {"issue_width", 6, CM_POS, "instructions issued per cycle", 0},
  {"store_slots", 2, CM_POS, "L1 slots of one store, in loads", 0},
  {"cap_L1", 0.75, CM_POS, "share of L1 the tiles may use before they spill", 1},
  {"cap_L2", 0.75, CM_POS, "share of L2 the tiles may use before they spill", 1},
  {"cap_L3", 0.75, CM_POS, "share of this thread's L3 the tiles may use", 1},
  {"vec_lanes", 8, CM_POS, "float lanes of GCC's vectors (8: the 256 bits GCC prefers on Intel AVX-512)", 1},
  {"load_ports", 3, CM_POS, "loads per cycle", 0},
  {"gpr_rows", 12, CM_POS, "block rows whose filter pointers stay in general registers", 1},
  {"row_insns", 3.5, CM_POS, "instructions per block row each time the innermost reduction loop starts", 0},
  {"edge_insns", 10, CM_POS, "shuffles and inserts per FMA of a block of runtime bounds", 0},
};

typedef struct conv {
  double n, h, w, c, k, r, s, st, pad, p, q, hp, wp;
  int nhwc;
} conv;

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
  double hb = cm_nest_window(d->r, d->r - d->st, tr[0], at[0], js);
  if (!d->nhwc) {
    double pi = cm_nest_overhang(d->wp, lf), po = cm_nest_overhang(d->q, lf);
    double wb = cm_nest_window(ww + pi, ww + pi - s->qba * d->st, tr[1], at[1], js);
    cm_nest_array(n, "in", "nchw", (double[]){1, s->cta, hb, wb},
                  (double[]){d->n, d->c, d->hp, d->wp}, 4, 0);
    cm_nest_array(n, "filter", "kcx", (double[]){s->kba, s->cta, rs},
                  (double[]){d->k, d->c, rs}, 4, 0);
    cm_nest_array(n, "out", "nkpq", (double[]){1, s->kba, 1,
                  cm_nest_window(s->qba + po, po, tr[1], at[1], js)},
                  (double[]){d->n, d->k, d->p, d->q}, 4, 0);
  } else {
    double pi = cm_nest_overhang(d->c, lf), pk = cm_nest_overhang(d->k, lf);
    double wb = cm_nest_window(ww, ww - s->qba * d->st, tr[1], at[1], js);
    cm_nest_array(n, "in", "nhwc", (double[]){1, hb, wb, cm_nest_window(s->cta + pi, pi, tr[2], at[2], js)},
                  (double[]){d->n, d->hp, d->wp, d->c}, 4, 0);
    double kb = cm_nest_window(s->kba + pk, pk, tr[3], at[3], js);
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
** elements, from the instructions of one (c, r, s) step as GCC 12 emits
** them (-O3 -march=sapphirerapids assembly of hk_conv2d.c's micro-kernel,
** issue 21): FMAs, loads (vectors of the contiguous operand, broadcasts
** of the other -- fused into the FMA when a row has one vector --, filter
** row pointers reloaded from the stack when the rows outnumber the free
** general registers, spilled accumulators), stores (spills), and the
** loop's own instructions (its control, and each block row's pointer set
** up again whenever the innermost reduction loop starts, shared by its
** trips). lanes: the lanes of the widest vector the FMAs fill; issue:
** the FMA ports' share of the busiest port or of the issue width;
** latency: that share against the FMA chains' latency. */
typedef struct blk_eff {
  double lanes, lat, issue;
  double lbytes, sbytes;    /* bytes its loads and stores move */
} blk_eff;

/* What the block of a step depends on beyond its shape. */
typedef struct blk_ctx {
  double vl;                /* lanes of GCC's vectors (vec_lanes) */
  double simd;              /* lanes of the widest vector (the peak's) */
  double regs;              /* vector registers */
  double inner;             /* trips of the innermost reduction loop */
  int strided;              /* the contiguous operand is strided */
  const double *c;          /* the coefficients */
} blk_ctx;

/* Vector instructions of a loop of n contiguous elements as GCC
** vectorises it: vw-lane main loop, then one half-width epilogue at each
** width down to xmm (4 lanes), a pair in an xmm (an 8-byte load), then
** scalars. */
static double vec_ops(double n, double vw) {
  double ops = floor(n / vw), r = n - ops * vw;
  for (double x = vw / 2; x >= 4; x /= 2)
    if (r >= x) ops++, r -= x;
  if (r >= 2) ops++, r -= 2;
  return ops + r;
}

/* The kinds of register block (hk_conv2d.c's micro-kernel): a full block
** (constant bounds, vectors of the largest power of two lanes <= v, at
** most vec_lanes), an edge whose bounds the compiler knows (the row's
** only q block: q0 = 0, qn = Q, vectorised as vec_ops says, accumulators
** in registers), an edge with runtime bounds (vec_ops, accumulators in
** memory: a load and a store per FMA instruction, and edge_insns
** shuffles and inserts more per FMA). */
enum { BLK_FULL, BLK_CONST, BLK_RUNTIME };

static blk_eff block_eff(double u, double v, int kind, const blk_ctx *x) {
  const double *c = x->c;
  blk_eff e;
  double vl = fmax(1, fmin(x->vl, x->simd)), w = 1, nv;
  if (kind == BLK_FULL) {
    while (w * 2 <= fmin(v, vl)) w *= 2;
    if (v >= 2 && v < 4) w = 4;            /* GCC packs 2 into an xmm */
    nv = ceil(v / w);
  } else {
    nv = vec_ops(v, vl), w = v >= 2 ? 4 : 1;
  }
  double fma = u * nv;
  e.lanes = u * v / (fma * x->simd);
  double bcast = nv > 1 ? u : 0;           /* separate broadcasts */
  double reload = u > c[C_GPR] ? u : 0;    /* row pointers off the stack */
  double spill = kind == BLK_RUNTIME ? fma
                 : fmax(0, fma - (x->regs - nv - (nv > 1 ? 1 : 0)));
  double loads = (x->strided && w > 1 ? v : nv) + u + reload + spill, stores = spill;
  double sw = kind == BLK_RUNTIME ? v / nv : w;  /* lanes a spill moves */
  e.lbytes = 4 * (v + u + sw * spill) + 8 * reload;
  e.sbytes = 4 * sw * spill;
  double insns = fma + nv + bcast + reload + spill + 3 +
                 (c[C_ROW] * u + 3) / fmax(1, x->inner) +
                 (kind == BLK_RUNTIME ? c[C_EDGE] * fma : 0);
  double port = fma / 2;
  double cyc = fmax(fmax(port, loads / c[C_LOADS]), stores);
  cyc = fmax(cyc, insns / c[C_WIDTH]);
  e.issue = port / cyc;
  e.lat = cyc / fmax(cyc, c[C_CHAINS] / 2);
  return e;
}

static int cv_work(const kn_problem *pb, const sp_space *sp, const int *cfg,
                   const cm_machine *m, const cm_coefs *c, cm_work *w,
                   rt_err *err) {
  const double *v = c->v;
  conv d = {
    (double)kn_int(pb, "N"), (double)kn_int(pb, "H"), (double)kn_int(pb, "W"),
    (double)kn_int(pb, "C"), (double)kn_int(pb, "K"), (double)kn_int(pb, "R"),
    (double)kn_int(pb, "S"), (double)kn_int(pb, "stride"), (double)kn_int(pb, "pad"),
    0, 0, 0, 0, !strcmp(kn_str(pb, "layout"), "nhwc"),
  };
  if (d.st < 1) d.st = 1;
  d.p = floor((d.h + 2 * d.pad - d.r) / d.st) + 1;
  d.q = floor((d.w + 2 * d.pad - d.s) / d.st) + 1;
  d.hp = d.h + 2 * d.pad, d.wp = d.w + 2 * d.pad;
  double KB = (double)kn_param_int(sp, cfg, "kb"), QB = (double)kn_param_int(sp, cfg, "qb");
  double CT = (double)kn_param_int(sp, cfg, "ct"), KT = (double)kn_param_int(sp, cfg, "kt");
  double PT = (double)kn_param_int(sp, cfg, "pt");
  int kp = !strcmp(kn_param_str(sp, cfg, "loop_order"), "kp");
  int cd = (int)strlen(kn_param_str(sp, cfg, "parallel"));
  int th = (int)kn_param_int(sp, cfg, "threads");
  if (th < 1) th = 1;
  if (cd < 1 || cd > 3) cd = 3;
  if (th > CM_MAXTHREADS) {
    rt_err_set(err, "conv2d model: %d threads (at most %d)", th, CM_MAXTHREADS);
    return -1;
  }
  double vw = m->simd_floats > 0 ? m->simd_floats : 16;
  double lf = m->line / 4.0, line = m->line;

  /* Tiles and blocks: k tiles of KT in k blocks of KB (the last of each
  ** tile short), p tiles of PT, c tiles of CT, q blocks of QB. */
  double nkt = ceil(d.k / KT), npt = ceil(d.p / PT), nc = ceil(d.c / CT);
  double nq = ceil(d.q / QB), qfull = floor(d.q / QB);
  double klast = d.k - (nkt - 1) * KT;
  double nkb = (nkt - 1) * ceil(KT / KB) + ceil(klast / KB);
  double kfull = (nkt - 1) * floor(KT / KB) + floor(klast / KB);
  double rs = d.r * d.s;

  /* Compute: full blocks (k block of KB and q block of QB) and the edge
  ** kinds (runtime bounds kn, qn: the k edge, of ke rows on average, with
  ** full q blocks, the q edge of qe columns with full k blocks, and both).
  ** GCC vectorises an edge along its contiguous dimension (q in nchw, k in
  ** nhwc) as a loop of runtime length -- a main loop of vec_lanes and
  ** narrower epilogues -- with its accumulators in memory, except the
  ** row's only q block (Q < QB: q0 = 0 and qn = Q are constants once mk
  ** is inlined), which keeps them in registers where the innermost
  ** reduction loop has runtime trips: with 'crs' and R x S > 1 the
  ** constant r and s loops are unrolled into it and it is compiled as an
  ** edge (-O3 -march=sapphirerapids: KB=2, QB=32, Q=26 takes 426
  ** instructions of shuffles, loads and stores per trip with 'crs', 24
  ** with 'rsc'). The innermost reduction loop: s (crs, S > 1), r (crs, R
  ** > 1) or c (a channel tile). The three terms multiply to the flop-
  ** weighted harmonic mean of the kinds' products. */
  int crs = !strcmp(kn_param_str(sp, cfg, "red_order"), "crs") && rs > 1;
  blk_ctx bx = {v[C_VL], vw, m->vector_regs,
                crs ? (d.s > 1 ? d.s : d.r) : d.c / nc, !d.nhwc && d.st > 1, v};
  double flops = 2 * d.n * d.k * d.p * d.q * d.c * rs;
  double ke = nkb > kfull ? (d.k - kfull * KB) / (nkb - kfull) : 0;
  double qe = d.q - qfull * QB;
  struct { double blocks, kn, qn; } kinds[4] = {
    {kfull * qfull, KB, QB}, {(nkb - kfull) * qfull, ke, QB},
    {kfull * (nq - qfull), KB, qe}, {(nkb - kfull) * (nq - qfull), ke, qe},
  };
  double tl = 0, tli = 0, tall = 0, tw = 0;
  double l1 = 0, acc_el = 0;   /* L1 bytes; accumulator elements */
  for (int i = 0; i < 4; i++) {
    double fl = kinds[i].blocks * kinds[i].kn * kinds[i].qn;   /* FMAs per step */
    if (fl <= 0) continue;
    double eu = d.nhwc ? kinds[i].qn : kinds[i].kn, ev = d.nhwc ? kinds[i].kn : kinds[i].qn;
    int known = i == 2 && qfull == 0 && !crs;   /* the row's only q block */
    blk_eff e = block_eff(eu, ev, i == 0 ? BLK_FULL : known ? BLK_CONST : BLK_RUNTIME, &bx);
    tl += fl / e.lanes, tli += fl / (e.lanes * e.issue);
    tall += fl / (e.lanes * e.issue * e.lat), tw += fl;
    double steps = d.n * d.p * d.c * rs * kinds[i].blocks;
    l1 += steps * (e.lbytes + v[C_STORE] * e.sbytes);
    acc_el += d.n * d.p * nc * kinds[i].blocks * eu * ev;
  }
  w->flops = flops;
  w->eff[E_LANES] = tw > 0 ? tw / tl : 1;
  w->eff[E_ISSUE] = tw > 0 ? tl / tli : 1;
  w->eff[E_LATENCY] = tw > 0 ? tli / tall : 1;

  /* Calls, steps, L1 slots and trips. Per (n, p, c tile): nkb x nq calls;
  ** a call of a c tile of cc channels takes cc x R x S steps (an edge
  ** step, one trip of its vector loop per row). A call loads its
  ** accumulators from out unless c0 == 0 and stores them. */
  double calls = d.n * d.p * nc * nkb * nq;
  double fsteps = d.n * d.p * d.c * rs * kfull * qfull;
  double esteps = d.n * d.p * d.c * rs * (nkb * nq - kfull * qfull);
  double acc_st = acc_el, acc_ld = (nc - 1) / nc * acc_st;
  l1 += 4 * (acc_ld + v[C_STORE] * acc_st);
  double trips = calls + fsteps + esteps * (d.nhwc ? QB : KB);

  /* The padding copy (serial, before the parallel region): rows of the
  ** input into the interior of the zero-bordered copy. */
  double in_lines = ceil(d.n * d.c * d.h * d.w / lf) * line, cp_lines = 0, xp_lines = 0;
  if (d.pad > 0) {
    double planes = d.nhwc ? d.n : d.n * d.c, rows = d.h, len = d.nhwc ? d.w * d.c : d.w;
    double stride = d.nhwc ? d.wp * d.c : d.wp, pstride = d.hp * stride;
    double first = d.pad * stride + d.pad * (d.nhwc ? d.c : 1);
    cp_lines = run_lines(planes, rows, pstride, first, stride, len, lf) * line;
    xp_lines = ceil(d.n * d.c * d.hp * d.wp / lf) * line;
    l1 += planes * rows * 4 * len * (1 + v[C_STORE]);
    trips += planes * rows;
  }

  /* Threads: static ranges of the collapsed (n, k tile, p tile) loops. */
  double units[CM_MAXTHREADS], lo[CM_MAXTHREADS], hi[CM_MAXTHREADS];
  double iters = cd == 1 ? d.n : cd == 2 ? d.n * nkt : d.n * nkt * npt;
  int active = 0;
  for (int t = 0; t < th; t++) {
    cm_omp_static(iters, th, t, &lo[t], &hi[t]);
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
  int prev = -1;                /* the last thread whose nest was analysed */
  for (int t = 0; t < th; t++) {
    if (units[t] <= 0) continue;
    umax = fmax(umax, units[t]);
    double full[3] = {d.n, nkt, npt}, rem = hi[t] - lo[t];
    if (prev >= 0 && hi[prev] - lo[prev] == rem) {
      /* the same count of iterations: the same nest (static ranges give
      ** most threads one count), so the same footprints and traffic */
      fin[t] = fin[prev], fall[t] = fall[prev];
      for (int l = 0; l < 3; l++) mains[l][t] = mains[l][prev];
      fp_in += fin[t], fp_fo += fall[t] - fin[t];
      continue;
    }
    prev = t;
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
    for (int l = 0; l < 3; l++) mains[l][t] = cm_nest_traffic_shared(build, &s, caps[l], m->line, NULL);
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
  w->bytes[0] = l1;
  w->bytes[1] = f[0];
  w->bytes[2] = f[1];
  w->bytes[3] = f[2];
  w->trips = trips;
  w->serial_frac = 0;
  return 0;
}

const cm_kmodel cm_conv2d = {
  .kernel = "conv2d",
  .family = "cpu",
  .neff = NEFF,
  .eff_names = cv_eff,
  .ncoef = NCOEF,
  .coefs = cv_coefs,
  .work = cv_work,
  .form = 3,   /* 2: a q block of constant bounds is a register block; 3: the
              ** step's cycles from its instructions (issue 21) */
};
