/*
** cm_vla_gemm.c -- the roofline model of the RISC-V vector gemm schedule
** (the RISC-V vector target's template: vector-length agnostic RVV 1.0
** code; this room names no backend, scripts/deps.py), family
** "vla": the host CPU family's roofline (cm_time: the p-norm of the
** compute and per-level byte bounds, the reuse analysis of cm_nest.c) with
** the work of this template, on ceilings that describe a RISC-V vector
** machine (the SpacemiT K1's description file). The vector length is the machine's: a
** strip holds lmul * simd_floats lanes (simd_floats = VLEN / 32, from the
** widest instruction class of the ceilings). Single-threaded (the
** template runs one thread). Every number that is not a count is a
** coefficient in vg_coefs[].
**
** Per strip of columns and k step, a tile of r rows issues one vector load
** of B (lmul registers), r scalar loads of A and r vfmacc.vf (r * lmul
** register operations). Efficiencies: "lanes" (the last strip's empty
** lanes), "latency" (r * lmul independent accumulators against the FMA
** latency, flop-weighted over full and one-row edge tiles), "issue" (the
** B load shares the vector pipe with the FMAs: load_cost register
** operations per loaded register), "front" (an in-order dual issue front
** end: scalar loads, vector instructions and the loop against the cycles
** the vector operations take, reg_cycles per register operation: VLEN over
** the datapath width DLEN).
*/
#include <math.h>
#include <string.h>

#include "cm.h"

static const char *const vg_eff[] = {"lanes", "latency", "issue", "front"};
enum { E_LANES, E_LATENCY, E_ISSUE, E_FRONT, NEFF };
enum { C_CHAINS = CM_C_EFF0 + NEFF, C_LOAD, C_WIDTH, C_REGCYC, C_CAP_L1, C_CAP_L2, NCOEF };

static const cm_coef vg_coefs[NCOEF] = {
  CM_GENERIC_COEFS,
  {"exp_lanes", 1.0, CM_POS, "weight of the last strip's empty lanes", 0},
  {"exp_latency", 1.0, CM_POS, "weight of too few accumulators for the FMA latency", 0},
  {"exp_issue", 1.0, CM_POS, "weight of B's vector loads in the vector pipe", 0},
  {"exp_front", 1.0, CM_POS, "weight of the in-order front end", 0},
  {"fma_chains", 8, CM_POS, "independent register operations that hide the FMA latency", 0},
  {"load_cost", 1, CM_POS, "vector-pipe cost of one loaded register, in FMA register operations", 0},
  {"issue_width", 2, CM_POS, "instructions issued per cycle (in-order dual issue)", 1},
  {"reg_cycles", 2, CM_POS, "cycles of one register operation (VLEN / DLEN)", 1},
  {"cap_L1", 0.75, CM_POS, "share of L1 the tiles may use before they spill", 1},
  {"cap_L2", 0.75, CM_POS, "share of L2 the tiles may use before they spill", 1},
};

static int vg_work(const kn_problem *pb, const sp_space *sp, const int *cfg, const cm_machine *m,
                   const cm_coefs *c, cm_work *w, rt_err *err) {
  (void)err;
  const double *v = c->v;
  double M = (double)kn_int(pb, "M"), N = (double)kn_int(pb, "N"), K = (double)kn_int(pb, "K");
  double L = (double)kn_param_int(sp, cfg, "lmul"), mr = (double)kn_param_int(sp, cfg, "mr");
  double uk = (double)kn_param_int(sp, cfg, "unroll_k"), kc = (double)kn_param_int(sp, cfg, "kc");
  int strip = !strcmp(kn_param_str(sp, cfg, "vl_strategy"), "strip");
  double vl = L * (m->simd_floats > 0 ? m->simd_floats : 4);
  double strips = ceil(N / vl), bk = ceil(K / kc), kb = K / bk;
  double full = floor(M / mr), edge = M - full * mr, tiles = full + edge;

  w->flops = 2 * M * N * K;
  w->threads = 1;
  w->imbalance = 1;
  w->eff[E_LANES] = N / (strips * vl);
  double lat_full = fmin(1, mr * L / v[C_CHAINS]), lat_edge = fmin(1, L / v[C_CHAINS]);
  w->eff[E_LATENCY] = M / (full * mr / lat_full + edge / lat_edge);
  double fma = M * L, loads = tiles * L;   /* register operations per strip and k step */
  w->eff[E_ISSUE] = fma / (fma + v[C_LOAD] * loads);
  double instr = 2 * M + tiles * (1 + 2 / uk), cycles = (fma + loads) * v[C_REGCYC];
  w->eff[E_FRONT] = fmin(1, cycles / (instr / v[C_WIDTH]));

  /* The nest: k blocks, strips, row tiles, k steps. */
  cm_nest n = {0};
  cm_nest_loop(&n, bk, "k");
  cm_nest_loop(&n, strips, "n");
  cm_nest_loop(&n, M / mr, "m");
  cm_nest_loop(&n, kb, "k");
  cm_nest_array(&n, "C", "mn", (double[]){mr, vl}, (double[]){M, N}, 4, 0);
  cm_nest_array(&n, "A", "mk", (double[]){mr, 1}, (double[]){M, K}, 4, 0);
  cm_nest_array(&n, "B", "kn", (double[]){1, vl}, (double[]){K, N}, 4, 0);
  /* L1: what the instructions load and store, exactly: B's rows once per
  ** tile (the strips' widths add up to N), A's elements once per strip, C
  ** stored per k block and loaded after the first; L2 serves L1's misses,
  ** DRAM L2's (no L3). */
  w->bytes[0] = 4 * (tiles * K * N + strips * M * K + M * N * (2 * bk - 1));
  w->bytes[1] = cm_nest_traffic_sa(&n, m->cache[0] * v[C_CAP_L1], m->line, 0);
  w->bytes[2] = 0;
  w->bytes[3] = cm_nest_traffic_sa(&n, m->cache[1] * v[C_CAP_L2], m->line, !m->flush);
  w->trips = bk * strips * (tiles * (floor(kb / uk) + fmod(kb, uk)) + (strip ? 1 : 0));
  w->serial_frac = 0;
  return 0;
}

const cm_kmodel cm_vla_gemm = {
  .kernel = "gemm",
  .family = "vla",
  .neff = NEFF,
  .eff_names = vg_eff,
  .ncoef = NCOEF,
  .coefs = vg_coefs,
  .work = vg_work,
};
