/*
** cm_gemm.c -- the roofline model of the host gemm schedule
** (targets/host/hk_gemm.c): the work of one schedule as flops, the bytes
** each cache level serves (the schedule's loop nest handed to the reuse
** analysis of cm_nest.c, one thread's slice), the micro-kernel's compute
** efficiency (lanes wasted on the masked edge, FMA chains against the
** latency, issue slots of loads and broadcasts, packing), the split of the
** work between threads, and the loop trips. Every number that is not a
** count is a coefficient in gemm_coefs[].
*/
#include <math.h>
#include <string.h>

#include "cm.h"

#define VW 16.0    /* float32 lanes of one zmm vector (the generator's) */

static const char *const gemm_eff[] = {"lanes", "latency", "issue",
                                       "pack_a", "pack_b"};
enum { E_LANES, E_LATENCY, E_ISSUE, E_PACK_A, E_PACK_B, NEFF };
enum { C_CHAINS = CM_C_EFF0 + NEFF, C_WIDTH, C_CAP_L1, C_CAP_L2, C_CAP_L3,
       NCOEF };

static const cm_coef gemm_coefs[NCOEF] = {
  CM_GENERIC_COEFS,
  {"exp_lanes", 1.0, CM_POS, "weight of the masked lanes of the edge panel", 0},
  {"exp_latency", 1.0, CM_POS, "weight of too few FMA chains for the latency", 0},
  {"exp_issue", 1.0, CM_POS, "weight of load and broadcast issue slots", 0},
  {"exp_pack_a", 0.15, CM_POS, "weight of reading A unpacked (strided rows)", 0},
  {"exp_pack_b", 0.15, CM_POS, "weight of reading B unpacked (strided rows)", 0},
  {"fma_chains", 8, CM_POS, "independent FMA chains that hide the latency", 0},
  {"issue_width", 4, CM_POS, "instructions issued per cycle", 0},
  {"cap_L1", 0.75, CM_POS, "share of L1 a tile may use before it spills", 1},
  {"cap_L2", 0.75, CM_POS, "share of L2 a tile may use before it spills", 1},
  {"cap_L3", 0.75, CM_POS, "share of this thread's L3 a tile may use", 1},
};

/* Compute efficiency of an mr x nv micro-kernel unrolled uk times. */
static void ukernel_eff(double mr, double nv, double uk, const double *v,
                        double *lat, double *issue) {
  double fma = mr * nv;
  *lat = fmin(1, fma / v[C_CHAINS]);
  double cycles = fmax(fma / 2, (mr + nv) / 2);                 /* 2 FMA, 2 load ports */
  cycles = fmax(cycles, (fma + mr + nv + 2 / uk) / v[C_WIDTH]); /* front end */
  *issue = fma / 2 / cycles;
}

static int gemm_work(const kn_problem *pb, const sp_space *sp, const int *cfg,
                     const cm_machine *m, const cm_coefs *c, cm_work *w,
                     rt_err *err) {
  (void)err;
  const double *v = c->v;
  double M = kn_int(pb, "M"), N = kn_int(pb, "N"), K = kn_int(pb, "K");
  double mc = kn_param_int(sp, cfg, "mc"), nc = kn_param_int(sp, cfg, "nc");
  double kc = kn_param_int(sp, cfg, "kc"), mr = kn_param_int(sp, cfg, "mr");
  double nv = kn_param_int(sp, cfg, "nr_vecs"), uk = kn_param_int(sp, cfg, "unroll_k");
  const char *order = kn_param_str(sp, cfg, "loop_order");
  int inner_m = !strcmp(kn_param_str(sp, cfg, "macro_order"), "mn");
  int pa = (int)kn_param_int(sp, cfg, "pack_a"), pbk = (int)kn_param_int(sp, cfg, "pack_b");
  int th = (int)kn_param_int(sp, cfg, "threads");
  const char *par = kn_param_str(sp, cfg, "parallel_loop");
  if (th < 2 || (*par != 'm' && *par != 'n')) th = 1;
  double nr = nv * VW;

  /* Threads: equal shares of the split dimension rounded up to the tile
  ** (as the generator does); the slowest thread has the largest share. */
  double Ms = M, Ns = N, imb = 1;
  int active = th;
  if (th > 1) {
    double ext = *par == 'n' ? N : M, tile = *par == 'n' ? nr : mr;
    double share = ceil(ceil(ext / th) / tile) * tile;
    active = (int)ceil(ext / share);
    if (*par == 'n') Ns = fmin(share, N); else Ms = fmin(share, M);
    imb = (*par == 'n' ? Ns : Ms) / (ext / active);   /* largest share / mean */
  }

  /* Useful flops, and lanes computed: the last column panel is masked. */
  double ne = fmod(N, nr), nve = ceil(ne / VW);
  w->flops = 2 * M * N * K;
  w->eff[E_LANES] = N / (N - ne + nve * VW);
  /* Rows: full micro-kernels and the edge (M % mr rows); columns: full
  ** and the edge panel (nve vectors). Flop-weighted harmonic mean. */
  double me = fmod(M, mr), tl = 0, ti = 0, tw = 0;
  for (int er = 0; er < 2; er++)
    for (int ec = 0; ec < 2; ec++) {
      double rows = er ? me : mr, vecs = ec ? nve : nv;
      double share = (er ? me : M - me) * (ec ? ne : N - ne);
      if (rows <= 0 || vecs <= 0 || share <= 0) continue;
      double lat, iss;
      ukernel_eff(rows, vecs, uk, v, &lat, &iss);
      tl += share / lat, ti += share / iss, tw += share;
    }
  w->eff[E_LATENCY] = tw > 0 ? tw / tl : 1;
  w->eff[E_ISSUE] = tw > 0 ? tw / ti : 1;
  w->eff[E_PACK_A] = pa ? 1 : 0.5;
  w->eff[E_PACK_B] = pbk ? 1 : 0.5;
  w->threads = active;
  w->imbalance = imb;

  /* One thread's loop nest: blocks of the cache loops (average sizes),
  ** then the macro-kernel's panels, then the micro-kernel's k loop. */
  double bm = ceil(Ms / mc), bn = ceil(Ns / nc), bk = ceil(K / kc);
  double mb = Ms / bm, nb = Ns / bn, kb = K / bk;
  cm_nest n = {0};
  int open_m = 0, open_n = 0, open_k = 0, depth_a = 0, depth_b = 0;
  for (int l = 0; l < 3; l++) {
    char d = order[l];
    cm_nest_loop(&n, d == 'm' ? bm : d == 'n' ? bn : bk, d == 'm' ? "m" : d == 'n' ? "n" : "k");
    open_m |= d == 'm', open_n |= d == 'n', open_k |= d == 'k';
    if (!depth_a && open_m && open_k) depth_a = l + 1;
    if (!depth_b && open_n && open_k) depth_b = l + 1;
  }
  double rp = ceil(mb / mr), cp = ceil(nb / nr);   /* panels per block (the last partial) */
  if (inner_m) {
    cm_nest_loop(&n, rp, "mi");
    cm_nest_loop(&n, cp, "nj");
  } else {
    cm_nest_loop(&n, cp, "nj");
    cm_nest_loop(&n, rp, "mi");
  }
  cm_nest_loop(&n, kb, "kpq");
  cm_nest_array(&n, "C", "mn", (double[]){mr, nr}, (double[]){M, N}, 4, 0);
  if (pa) {
    cm_nest_array(&n, "Apack", "ip", (double[]){1, mr}, (double[]){rp, kb * mr}, 4, 0);
    cm_nest_array(&n, "A", "mk", (double[]){mb, kb}, (double[]){M, K}, 4, depth_a);
  } else {
    cm_nest_array(&n, "A", "mk", (double[]){mr, 1}, (double[]){M, K}, 4, 0);
  }
  if (pbk) {
    cm_nest_array(&n, "Bpack", "jq", (double[]){1, nr}, (double[]){cp, kb * nr}, 4, 0);
    cm_nest_array(&n, "B", "kn", (double[]){kb, nb}, (double[]){K, N}, 4, depth_b);
  } else {
    cm_nest_array(&n, "B", "kn", (double[]){1, nr}, (double[]){K, N}, 4, 0);
  }
  /* The smoothed rule: a row-stride set-conflict check
  ** (cm_nest_traffic_shared) ranked the measured schedules worse here. */
  double f2 = cm_nest_traffic_sa(&n, m->cache[0] * v[C_CAP_L1], m->line, 0);
  double f3 = cm_nest_traffic_sa(&n, m->cache[1] * v[C_CAP_L2], m->line, 0);
  double fd = cm_nest_traffic_sa(&n, m->cache[2] / active * v[C_CAP_L3], m->line, !m->flush);

  /* L1: what the instructions load and store. Per micro-kernel call and
  ** k step: nv vectors of B and mr broadcasts of A; per call the C tile
  ** is stored (and loaded after the first k block); packing reads and
  ** writes each packed element once per packing. */
  double calls = bm * bn * bk * rp * cp;
  double l1 = calls * kb * (nv * 64 + mr * 4) +
              calls * mr * nv * 64 * (2 - 1 / bk);
  double packs = 0, visits_a = 1, visits_b = 1;   /* packing calls */
  for (int l = 0; l < depth_a; l++) visits_a *= n.loop[l].trips;
  for (int l = 0; l < depth_b; l++) visits_b *= n.loop[l].trips;
  if (pa) packs += mb * kb * visits_a;
  if (pbk) packs += kb * nb * visits_b;
  l1 += packs * 8;
  /* Totals over the threads: the nest above is the largest share, and
  ** cm_time scales the mean share back up by the imbalance. */
  double per = active / imb;
  w->bytes[0] = per * l1;
  w->bytes[1] = per * f2;
  w->bytes[2] = per * f3;
  w->bytes[3] = per * fd;
  /* Trips: k-loop trips, C vector updates per call, packed elements. */
  w->trips = per * (calls * (kb / uk + mr * nv) + packs / VW);
  w->serial_frac = 0;
  return 0;
}

const cm_kmodel cm_gemm = {
  .kernel = "gemm",
  .family = "cpu",
  .neff = NEFF,
  .eff_names = gemm_eff,
  .ncoef = NCOEF,
  .coefs = gemm_coefs,
  .work = gemm_work,
};
