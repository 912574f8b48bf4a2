/*
** cm_wgroof.c -- the "wg-roofline" model family: roofline models of
** work-group kernels on a device measured as one whole (ceilings whose
** figures are the device's: peak FMA FLOP/s, global-memory read bandwidth
** as bw[DRAM], local-memory bandwidth as bw[L1], threads = compute units).
** A schedule is its compulsory global traffic plus what it adds (partial
** sums, lines a narrow tile uses only in part), its local-memory traffic,
** how its work-groups spread over the compute units (imbalance of the
** last round), and fixed costs per launch and per work-group (barriers
** included). Backends whose kernels are work-groups over compute units
** name this family in their row. Every number that is not a count is a
** coefficient of the model's table.
*/
#include <math.h>
#include <string.h>

#include "cm.h"

static const char *const wg_eff_names[] = {"chains"};
enum { E_CHAINS, NEFF };
enum { C_DIRECT = CM_C_EFF0 + NEFF, C_LINE, NCOEF };

static const cm_coef wg_coefs[NCOEF] = {
  {"eff_compute", 0.5, CM_POS, "fraction of the FMA peak the best code reaches", 0},
  {"eff_L1", 0.8, CM_POS, "fraction of the local-memory ceiling reached", 0},
  {"eff_L2", 1.0, CM_POS, "unused (no L2 ceiling measured)", 1},
  {"eff_L3", 1.0, CM_POS, "unused (no L3 ceiling measured)", 1},
  {"eff_DRAM", 0.8, CM_POS, "fraction of the global-memory read ceiling reached", 0},
  {"overlap", 3.0, CM_GE1, "p of the p-norm joining the bounds (1: no overlap)", 0},
  {"fixed_s", 2e-5, CM_POS, "cost per kernel launch, seconds", 0},
  {"thread_s", 1e-6, CM_POS, "cost per compute unit that gets work-groups, seconds", 0},
  {"trip_s", 2e-7, CM_POS, "cost per work-group step between barriers, seconds", 0},
  {"exp_chains", 0.5, CM_POS, "weight of too few independent accumulation chains", 0},
  {"direct_eff", 0.5, CM_POS, "share of the bandwidth a transpose without local memory keeps "
                              "(one side strided)", 0},
  {"line_bytes", 64, CM_POS, "bytes of a global-memory line (a narrower tile row wastes the rest)", 1},
};

/* Work-groups over compute units: active units, imbalance of the rounds. */
static void spread(double groups, double cus, cm_work *w) {
  if (cus < 1) cus = 1;
  double active = groups < cus ? groups : cus;
  w->threads = (int)(active > 1 ? active : 1);
  w->imbalance = groups > cus ? ceil(groups / cus) / (groups / cus) : 1;
}

static int red_work(const kn_problem *pb, const sp_space *sp, const int *cfg, const cm_machine *m,
                    const cm_coefs *c, cm_work *w, rt_err *err) {
  (void)m;
  double n = (double)kn_int(pb, "N"), cus = (double)kn_int(pb, "cus");
  int wg = (int)cm_param_int(sp, cfg, "wg", 64), vec = (int)cm_param_int(sp, cfg, "vec", 1);
  int ilp = (int)cm_param_int(sp, cfg, "ilp", 1);
  int tree = !strcmp(cm_param_str(sp, cfg, "block", "tree"), "tree");
  if (wg < 1 || vec < 1 || ilp < 1 || !(n >= 1)) {
    rt_err_set(err, "wg-roofline reduction model: wg, vec, ilp and N must be positive");
    return -1;
  }
  if (cus < 1) cus = 1;
  double groups = (double)cm_param_int(sp, cfg, "waves", 1) * cus;
  (void)c;
  w->flops = n + groups;
  w->bytes[CM_DRAM - CM_L1] = 4 * n + 8 * groups + 4;
  /* local memory: one store and the tree's (or the serial sum's) loads,
  ** in both launches */
  double per_group = tree ? 4.0 * (3 * wg - 2) : 4.0 * 2 * wg;
  w->bytes[0] = per_group * (groups + 1);
  w->eff[E_CHAINS] = fmin(1.0, ilp * vec / 16.0);
  spread(groups, cus, w);
  w->launches = 2;
  w->trips = groups * (tree ? log2(wg) + 1 : 2);
  return 0;
}

static int tr_work(const kn_problem *pb, const sp_space *sp, const int *cfg, const cm_machine *m,
                   const cm_coefs *c, cm_work *w, rt_err *err) {
  (void)m;
  double mm = (double)kn_int(pb, "M"), nn = (double)kn_int(pb, "N");
  double cus = (double)kn_int(pb, "cus");
  int tile = (int)cm_param_int(sp, cfg, "tile", 16), rows = (int)cm_param_int(sp, cfg, "rows", 1);
  int local = !strcmp(cm_param_str(sp, cfg, "local", "yes"), "yes");
  if (tile < 1 || rows < 1 || !(mm >= 1) || !(nn >= 1)) {
    rt_err_set(err, "wg-roofline transpose model: tile, rows, M and N must be positive");
    return -1;
  }
  const double *v = c->v;
  double groups = ceil(nn / tile) * ceil(mm / tile);
  /* each side moves tile-float runs: a run narrower than a line wastes it */
  double waste = fmax(1.0, v[C_LINE] / (4.0 * tile));
  w->flops = 0;
  w->bytes[CM_DRAM - CM_L1] = 8 * mm * nn * waste;
  w->mem_eff[CM_DRAM - CM_L1] = local ? 1 : v[C_DIRECT];
  w->bytes[0] = local ? 8 * mm * nn : 0;
  w->eff[E_CHAINS] = 1;
  spread(groups, cus, w);
  w->launches = 1;
  w->trips = groups * (local ? 2.0 * tile / rows : 1.0 * tile / rows);
  return 0;
}

const cm_kmodel cm_wg_reduction = {
  .kernel = "reduction", .family = "wg-roofline", .neff = NEFF, .eff_names = wg_eff_names,
  .ncoef = NCOEF, .coefs = wg_coefs, .work = red_work,
};
const cm_kmodel cm_wg_transpose = {
  .kernel = "transpose", .family = "wg-roofline", .neff = NEFF, .eff_names = wg_eff_names,
  .ncoef = NCOEF, .coefs = wg_coefs, .work = tr_work,
};
