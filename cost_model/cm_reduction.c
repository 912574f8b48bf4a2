/*
** cm_reduction.c -- the roofline model of the host reduction schedule
** (targets/host/hk_reduction.c): s = x[0] + ... + x[N-1]. The work of one
** schedule as the algorithm's N-1 additions, the bytes each level serves
** (x streamed once per call: one thread's range handed to the reuse
** analysis of cm_nest.c, which says whether it is still resident from the
** previous call), the compute efficiency of the add chains (lanes of the
** vector type, ACC independent chains against the add latency, adds using
** half of the FMA peak), the split between threads (contiguous ranges or
** static chunks) and the loop trips. Every number that is not a count is
** a coefficient in red_coefs[].
**
** The L1 term counts access slots: each load or store instruction is
** charged the bytes of a full-vector access (the L1 ceiling is measured
** with full-vector loads, and a scalar or narrow access takes a whole port
** slot), a store store_slots times a load.
*/
#include <math.h>
#include <string.h>

#include "cm.h"

#define CM_MAXTHREADS 256   /* threads the model follows one by one */

static const char *const red_eff[] = {"lanes", "latency", "add_only"};
enum { E_LANES, E_LATENCY, E_ADD, NEFF };
enum { C_CHAINS = CM_C_EFF0 + NEFF, C_STORE, C_CAP_L1, C_CAP_L2, C_CAP_L3,
       NCOEF };

static const cm_coef red_coefs[NCOEF] = {
  CM_GENERIC_COEFS,
  {"exp_lanes", 1.0, CM_POS, "weight of the lanes the vector type leaves empty", 0},
  {"exp_latency", 1.0, CM_POS, "weight of too few add chains for the latency", 0},
  {"exp_add_only", 1.0, CM_POS, "weight of adds reaching half the FMA peak (a constant of the kernel: held)", 1},
  {"add_chains", 8, CM_POS, "independent add chains that hide the latency", 0},
  {"store_slots", 2, CM_POS, "L1 slots of one store, in loads", 0},
  {"cap_L1", 0.75, CM_POS, "share of L1 data may use before it spills", 1},
  {"cap_L2", 0.75, CM_POS, "share of L2 data may use before it spills", 1},
  {"cap_L3", 0.75, CM_POS, "share of this thread's L3 data may use", 1},
};

/* What sum_range does on len elements: adds issued (vector and scalar
** instructions), load instructions, and loop trips. */
typedef struct range_work {
  double instr, loads, trips;
} range_work;

static void sum_range(double len, double vec, double acc, double unroll,
                      range_work *rw) {
  double step = vec * acc, main = floor(len / step), tail = len - main * step;
  /* main loop: acc vector adds and loads per step; then acc-1 vector adds,
  ** vec lane adds, the tail's scalar adds */
  rw->instr += main * acc + (acc - 1) + vec + tail;
  rw->loads += main * acc + tail;
  rw->trips += ceil(main / unroll) + tail + vec + acc;
}

static int red_work(const kn_problem *pb, const sp_space *sp, const int *cfg,
                    const cm_machine *m, const cm_coefs *c, cm_work *w,
                    rt_err *err) {
  const double *v = c->v;
  double N = (double)kn_int(pb, "N");
  double vec = (double)kn_param_int(sp, cfg, "vec");
  double acc = (double)kn_param_int(sp, cfg, "accs");
  double unroll = (double)kn_param_int(sp, cfg, "unroll");
  double chunk = (double)kn_param_int(sp, cfg, "chunk");
  int th = (int)kn_param_int(sp, cfg, "threads");
  if (th < 1) th = 1;
  if (th > CM_MAXTHREADS) {
    rt_err_set(err, "reduction model: %d threads (at most %d)", th, CM_MAXTHREADS);
    return -1;
  }
  double vw = m->simd_floats > 0 ? m->simd_floats : 16;
  double slot = vw * 4;

  /* Each thread's range: contiguous (chunk 0: ceil(N/th) elements each)
  ** or a static block of chunks, and its sum_range calls. */
  double elems[CM_MAXTHREADS], calls[CM_MAXTHREADS];
  int nth = th, active = 0;
  double nch = chunk > 0 ? ceil(N / chunk) : 1;
  range_work rw = {0, 0, 0};
  for (int t = 0; t < nth; t++) {
    if (chunk <= 0) {
      double per = ceil(N / th), lo = t * per, hi = fmin(lo + per, N);
      elems[t] = fmax(0, hi - lo);
      calls[t] = elems[t] > 0;
      if (elems[t] > 0) sum_range(elems[t], vec, acc, unroll, &rw);
    } else {
      double lo, hi;
      cm_omp_static(nch, th, t, &lo, &hi);
      elems[t] = fmax(0, fmin(hi * chunk, N) - lo * chunk);
      calls[t] = hi - lo;
      if (calls[t] > 0) {
        /* full chunks, then the last (short) one of x if this thread has it */
        int has_last = hi >= nch;
        range_work one = {0, 0, 0};
        sum_range(chunk, vec, acc, unroll, &one);
        double full = calls[t] - has_last;
        rw.instr += full * one.instr, rw.loads += full * one.loads,
        rw.trips += full * one.trips;
        if (has_last) sum_range(N - (nch - 1) * chunk, vec, acc, unroll, &rw);
      }
    }
    active += elems[t] > 0;
  }
  if (active < 1) active = 1;

  /* One thread's nest: its calls, each streaming its share of x; the
  ** master also writes the sum. L3 is shared by the active threads. */
  double share_max = 0, f[3] = {0, 0, 0};
  for (int t = 0; t < nth; t++) {
    if (elems[t] <= 0) continue;
    share_max = fmax(share_max, elems[t]);
    cm_nest n = {0};
    cm_nest_loop(&n, calls[t], "i");
    cm_nest_array(&n, "x", "i", (double[]){elems[t] / calls[t]}, (double[]){N}, 4, 0);
    if (t == 0) cm_nest_array(&n, "sum", "s", (double[]){1}, (double[]){1}, 4, 0);
    f[0] += cm_nest_traffic(&n, m->cache[0] * v[C_CAP_L1], m->line, 0);
    f[1] += cm_nest_traffic(&n, m->cache[1] * v[C_CAP_L2], m->line, 0);
    f[2] += cm_nest_traffic(&n, m->cache[2] / active * v[C_CAP_L3], m->line, !m->flush);
  }

  w->flops = N - 1;
  /* lanes: useful adds over the lane slots of the add instructions */
  w->eff[E_LANES] = rw.instr > 0 ? fmin(1, fmax(N - 1, 1) / (rw.instr * vw)) : 1;
  w->eff[E_LATENCY] = fmin(1, acc / v[C_CHAINS]);
  w->eff[E_ADD] = 0.5;
  w->threads = active;
  w->imbalance = share_max > 0 ? share_max / (N / active) : 1;
  w->bytes[0] = slot * (rw.loads + v[C_STORE]);
  w->bytes[1] = f[0];
  w->bytes[2] = f[1];
  w->bytes[3] = f[2];
  w->trips = rw.trips;
  w->serial_frac = 0;
  return 0;
}

const cm_kmodel cm_reduction = {
  .kernel = "reduction",
  .family = "cpu",
  .neff = NEFF,
  .eff_names = red_eff,
  .ncoef = NCOEF,
  .coefs = red_coefs,
  .work = red_work,
};
