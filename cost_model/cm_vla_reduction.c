/*
** cm_vla_reduction.c -- the roofline model of the RISC-V vector reduction
** schedule (the RISC-V vector target's template), family "vla" (cm_vla_gemm.c says
** what the family is): s = x[0] + ... + x[N-1], single-threaded. Vector
** adds of lmul * simd_floats lanes: with the "vlmax" strategy accs of
** them per trip while a whole trip fits, then the tail one vl at a time;
** with "strip" one vl-sized add per step. Efficiencies: "lanes" (useful
** adds over the lanes of the add instructions, the final reduction's
** included), "latency" (accs * lmul independent register operations
** against the add latency), "add_only" (adds reach half the FMA peak: a
** constant, held). x streams once through the reuse analysis (warm when it
** fits a cache and the caches are not flushed).
*/
#include <math.h>
#include <string.h>

#include "cm.h"

static const char *const vr_eff[] = {"lanes", "latency", "add_only"};
enum { E_LANES, E_LATENCY, E_ADD, NEFF };
enum { C_CHAINS = CM_C_EFF0 + NEFF, C_CAP_L1, C_CAP_L2, NCOEF };

static const cm_coef vr_coefs[NCOEF] = {
  CM_GENERIC_COEFS,
  {"exp_lanes", 1.0, CM_POS, "weight of the lanes the adds leave empty", 0},
  {"exp_latency", 1.0, CM_POS, "weight of too few accumulators for the add latency", 0},
  {"exp_add_only", 1.0, CM_POS, "weight of adds reaching half the FMA peak (a constant of the kernel: held)", 1},
  {"add_chains", 4, CM_POS, "independent register operations that hide the add latency", 0},
  {"cap_L1", 0.75, CM_POS, "share of L1 data may use before it spills", 1},
  {"cap_L2", 0.75, CM_POS, "share of L2 data may use before it spills", 1},
};

static int vr_work(const kn_problem *pb, const sp_space *sp, const int *cfg, const cm_machine *m,
                   const cm_coefs *c, cm_work *w, rt_err *err) {
  (void)err;
  const double *v = c->v;
  double N = (double)kn_int(pb, "N");
  double L = (double)kn_param_int(sp, cfg, "lmul"), A = (double)kn_param_int(sp, cfg, "accs");
  int vlmax = !strcmp(kn_param_str(sp, cfg, "vl_strategy"), "vlmax");
  double vl = L * (m->simd_floats > 0 ? m->simd_floats : 4);
  double main = vlmax ? floor(N / (A * vl)) : 0, tail = N - main * A * vl;
  double adds = main * A + ceil(tail / vl) + (A - 1) + 1;   /* + combining, + the reduction */
  w->flops = fmax(N - 1, 1);
  w->threads = 1;
  w->imbalance = 1;
  w->eff[E_LANES] = fmin(1, w->flops / (adds * vl));
  w->eff[E_LATENCY] = fmin(1, A * L / v[C_CHAINS]);
  w->eff[E_ADD] = 0.5;
  cm_nest n = {0};
  cm_nest_loop(&n, 1, "i");
  cm_nest_array(&n, "x", "i", (double[]){N}, (double[]){N}, 4, 0);
  w->bytes[0] = 4 * (N + 1);
  w->bytes[1] = cm_nest_traffic(&n, m->cache[0] * v[C_CAP_L1], m->line, !m->flush);
  w->bytes[2] = 0;
  w->bytes[3] = cm_nest_traffic(&n, m->cache[1] * v[C_CAP_L2], m->line, !m->flush);
  w->trips = vlmax ? main + ceil(tail / vl) : ceil(N / vl);
  w->serial_frac = 0;
  return 0;
}

const cm_kmodel cm_vla_reduction = {
  .kernel = "reduction",
  .family = "vla",
  .neff = NEFF,
  .eff_names = vr_eff,
  .ncoef = NCOEF,
  .coefs = vr_coefs,
  .work = vr_work,
};
