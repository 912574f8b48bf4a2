/*
** cm_gpu_mem.c -- roofline models of the GPU family's memory-bound
** kernels: the reduction (the GPU backend's reduction.json), the transpose
** (transpose.json) and the 2D stencil. Each is the compulsory traffic of
** its problem (what must cross DRAM: the input read, the output written
** unless it stays in L2) plus what the schedule adds (partial sums, a
** second launch, shared-memory bank conflicts), and the share of the
** bandwidth the schedule's bytes in flight sustain (Little's law:
** resident threads x bytes each has outstanding, against the bytes per SM
** that cover the memory latency, a coefficient). Parameters are looked up
** by name and tolerated when absent (cm_param_int), so a space that lacks
** one is modelled with the plain choice: a schedule is then as good as its
** compulsory traffic allows. Every number that is not a count is a
** coefficient of the model's table.
*/
#include <math.h>
#include <string.h>

#include "cm.h"

static const char *const mem_eff_names[] = {"occupancy", "tail"};
enum { E_OCC, E_TAIL, NEFF };
enum { C_INFLIGHT = CM_C_EFF0 + NEFF, C_OCC_WARPS, C_REG_BASE, C_CAP_L2, NCOEF };

static const cm_coef mem_coefs[NCOEF] = {
  CM_GPU_GENERIC_COEFS,
  {"exp_occupancy", 1.0, CM_POS, "weight of too few resident warps for the instruction latency", 0},
  {"exp_tail", 0.5, CM_POS, "weight of the busiest SM's partial last round of blocks", 0},
  {"inflight_sm", 24000, CM_POS, "bytes in flight per SM that keep DRAM busy (bandwidth x latency / SMs)", 0},
  {"occ_warps", 2.0, CM_POS, "resident warps per scheduler that hide the instruction latency", 0},
  {"reg_base", 24, CM_POS, "registers of a thread besides its loads in flight", 1},
  {"cap_L2", 0.8, CM_POS, "share of the L2 data may use before it is written back", 1},
};

/* What one schedule of a memory-bound kernel does, before the common
** part turns it into cm_work. */
typedef struct mem_sched {
  double flops;
  double rd, wr;               /* DRAM bytes read and written if nothing stays in L2 */
  double l2_extra;             /* L2 bytes besides rd + wr (partials, atomics) */
  double smem;                 /* shared-memory bytes (wavefronts x 128) */
  double blocks, threads;      /* grid and block */
  double regs, smem_block;     /* per thread; per block (bytes) */
  double inflight_thread;      /* bytes a thread has outstanding */
  double launches;
} mem_sched;

/* The common part: occupancy, waves, Little's law, L2 residency. */
static int mem_finish(const char *kernel, const mem_sched *s, const kn_problem *pb,
                      const cm_machine *m, const cm_coefs *c, cm_work *w, rt_err *err) {
  const double *v = c->v;
  cm_gpu g;
  cm_gpu_props(m, pb, &g);
  cm_occ o;
  cm_gpu_occupancy(&g, (int)s->threads, (int)ceil(s->regs), s->smem_block, &o);
  if (o.blocks < 1) {
    rt_err_set(err, "gpu %s model: a block of %.0f threads does not fit on an SM", kernel,
               s->threads);
    return -1;
  }
  cm_waves wv;
  cm_gpu_waves(&g, s->blocks, o.blocks, &wv);
  double res = fmin(o.blocks, wv.per_sm);
  double warps = res * ceil(s->threads / g.warp);
  double inflight = res * s->threads * s->inflight_thread;
  double me = fmin(1, inflight / v[C_INFLIGHT]);
  double cap = v[C_CAP_L2] * g.l2_bytes, total = s->rd + s->wr;
  double rd = total <= cap && !m->flush ? 0 : s->rd;
  double wr = total > cap ? s->wr * (total - cap) / total : 0;
  w->flops = s->flops;
  w->eff[E_OCC] = fmin(1, warps / 4 / v[C_OCC_WARPS]);
  w->eff[E_TAIL] = wv.tail;
  w->bytes[0] = s->rd + s->wr + s->l2_extra + s->smem;
  w->bytes[1] = s->rd + s->wr + s->l2_extra;
  w->bytes[2] = 0;
  w->bytes[3] = rd + wr;
  w->mem_eff[1] = w->mem_eff[3] = me;
  w->threads = wv.active;
  w->imbalance = wv.imbalance;
  w->trips = s->blocks;
  w->launches = s->launches;
  w->serial_frac = 0;
  return 0;
}

/* ---- reduction: s = x[0] + ... + x[N-1] ---- */
static int red_work(const kn_problem *pb, const sp_space *sp, const int *cfg,
                    const cm_machine *m, const cm_coefs *c, cm_work *w, rt_err *err) {
  cm_gpu g;
  cm_gpu_props(m, pb, &g);
  double N = (double)kn_int(pb, "N");
  double th = (double)cm_param_int(sp, cfg, "threads", 256);
  double vec = (double)cm_param_int(sp, cfg, "vec", 4), ilp = (double)cm_param_int(sp, cfg, "ilp", 4);
  double waves = (double)cm_param_int(sp, cfg, "waves", 8);
  int cover = !strcmp(cm_param_str(sp, cfg, "grid", "sms"), "cover");
  int two = !strcmp(cm_param_str(sp, cfg, "combine", "atomic"), "two");
  int smem_tree = !strcmp(cm_param_str(sp, cfg, "block", "shfl"), "smem");
  mem_sched s = {0};
  s.threads = th;
  s.blocks = cover ? ceil(N / (th * vec * ilp)) : fmin(waves * g.sms, ceil(N / (th * vec)));
  if (s.blocks < 1) s.blocks = 1;
  s.flops = N;                                   /* one add per element, then the trees */
  s.rd = 4 * N;
  s.wr = two ? 4 * s.blocks : 4;
  s.l2_extra = two ? 4 * s.blocks : 4 * s.blocks; /* partials read back, or atomics */
  s.smem = smem_tree ? s.blocks * th * 4 * 2 : s.blocks * (th / g.warp) * 4 * 2;
  s.regs = c->v[C_REG_BASE] + vec * ilp;
  s.smem_block = smem_tree ? th * 4 : (th / g.warp) * 4;
  s.inflight_thread = 4 * vec * ilp;
  s.launches = 2;                                /* the zero, or the second launch */
  return mem_finish("reduction", &s, pb, m, c, w, err);
}

/* ---- transpose: out[N][M] = in[M][N] through shared memory ---- */
static int tr_work(const kn_problem *pb, const sp_space *sp, const int *cfg,
                   const cm_machine *m, const cm_coefs *c, cm_work *w, rt_err *err) {
  double M = (double)kn_int(pb, "M"), N = (double)kn_int(pb, "N");
  double tile = (double)cm_param_int(sp, cfg, "tile", 32), rows = (double)cm_param_int(sp, cfg, "rows", 8);
  double vr = (double)cm_param_int(sp, cfg, "vr", 1), vw = (double)cm_param_int(sp, cfg, "vw", 1);
  double pad = (double)cm_param_int(sp, cfg, "pad", 1), tiles = (double)cm_param_int(sp, cfg, "tiles", 1);
  mem_sched s = {0};
  s.threads = tile / vr * rows;
  s.blocks = ceil(M / tile) * ceil(N / (tile * tiles));
  s.flops = 0;
  /* rows of tile floats: whole sectors unless a row is shorter than one */
  s.rd = 32 * M * ceil(N / tile) * cm_gpu_sectors(4 * fmin(tile, N), 4 * N);
  s.wr = 32 * N * ceil(M / tile) * cm_gpu_sectors(4 * fmin(tile, M), 4 * M);
  /* shared memory: written along rows, read down columns: a column of a
  ** row of tile + pad floats hits the banks (tile + pad) apart, a conflict
  ** of gcd(tile + pad, 32) ways (32 / vw lanes per wavefront at most) */
  long st = (long)(tile + pad), gc = 32;
  for (long a = st % 32; a;) {
    long t = gc % a;
    gc = a, a = t;
  }
  double ways = fmin((double)gc, 32 / vw);
  s.smem = 4 * M * N * (1 + fmax(1, ways));
  s.regs = c->v[C_REG_BASE] + tile * tiles * vr / rows;
  s.smem_block = 4 * tiles * tile * (tile + pad);
  s.inflight_thread = 4 * tile * tile * tiles / s.threads;
  s.launches = 1;
  return mem_finish("transpose", &s, pb, m, c, w, err);
}

/* ---- stencil: STEPS Jacobi steps of the 5-point stencil on NX x NY ---- */
static int st_work(const kn_problem *pb, const sp_space *sp, const int *cfg,
                   const cm_machine *m, const cm_coefs *c, cm_work *w, rt_err *err) {
  double NX = (double)kn_int(pb, "NX"), NY = (double)kn_int(pb, "NY");
  double steps = (double)kn_int(pb, "STEPS");
  if (steps < 1) steps = 1;
  double bx = (double)cm_param_int(sp, cfg, "BX", 32), by = (double)cm_param_int(sp, cfg, "BY", 8);
  double tb = (double)cm_param_int(sp, cfg, "tb", 1);
  if (tb < 1) tb = 1;
  mem_sched s = {0};
  s.threads = bx * by;
  s.blocks = ceil(NX / bx) * ceil(NY / by);
  s.flops = 6 * NX * NY * steps;
  /* one launch per tb steps, each reading the grid (with its boundary) and
  ** writing the interior */
  double launches = ceil(steps / tb);
  s.rd = 4 * (NX + 2) * (NY + 2) * launches;
  s.wr = 4 * NX * NY * launches;
  s.smem = 0;
  s.regs = c->v[C_REG_BASE] + 8;
  s.smem_block = 0;
  s.inflight_thread = 4 * 3;
  s.launches = launches;
  return mem_finish("stencil", &s, pb, m, c, w, err);
}

const cm_kmodel cm_gpu_reduction = {
  .kernel = "reduction", .family = "gpu", .neff = NEFF, .eff_names = mem_eff_names,
  .ncoef = NCOEF, .coefs = mem_coefs, .work = red_work,
};
const cm_kmodel cm_gpu_transpose = {
  .kernel = "transpose", .family = "gpu", .neff = NEFF, .eff_names = mem_eff_names,
  .ncoef = NCOEF, .coefs = mem_coefs, .work = tr_work,
};
const cm_kmodel cm_gpu_stencil = {
  .kernel = "stencil", .family = "gpu", .neff = NEFF, .eff_names = mem_eff_names,
  .ncoef = NCOEF, .coefs = mem_coefs, .work = st_work,
};
