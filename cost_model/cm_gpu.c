/*
** cm_gpu.c -- what every GPU kernel model needs of the device: how many
** blocks of a launch are resident on one SM (NVIDIA's occupancy rules, as
** its occupancy calculator header states them for compute capability 8.x
** and 9.x), how a
** grid's blocks spread over the SMs in waves, and the 32-byte sectors a
** run of contiguous bytes touches. Pure functions of the properties.
*/
#include <limits.h>
#include <math.h>
#include <string.h>

#include "cm.h"

#define REG_UNIT 256     /* registers are allocated per warp in these units */
#define SUBPARTS 4       /* register file split over 4 sub-partitions */

static int round_up(int x, int u) { return (x + u - 1) / u * u; }

void cm_gpu_occupancy(const cm_gpu *g, int threads_block, int regs_thread,
                      double smem_block, cm_occ *o) {
  memset(o, 0, sizeof *o);
  int warp = g->warp > 0 ? g->warp : 32;
  if (threads_block < 1 || (g->max_threads_block > 0 && threads_block > g->max_threads_block))
    return;
  int wpb = (threads_block + warp - 1) / warp;
  o->by_warps = g->max_threads_sm / warp / wpb;
  o->by_blocks = g->max_blocks_sm;
  /* registers: per warp, rounded up to the unit; each sub-partition holds
  ** whole warps; the block must fit regs_block (the hardware rounds its
  ** warps up to the sub-partitions) */
  int per_warp = round_up((regs_thread > 0 ? regs_thread : 1) * warp, REG_UNIT);
  if (regs_thread > 256 || (long)per_warp * round_up(wpb, SUBPARTS) > g->regs_block)
    o->by_regs = 0;
  else
    o->by_regs = g->regs_sm / SUBPARTS / per_warp * SUBPARTS / wpb;
  /* shared memory: the driver's 1 KiB per block on cc >= 8, in 128-byte
  ** units (256 before); more than the opt-in limit does not launch */
  int gran = g->cc_major >= 8 ? 128 : 256, reserved = g->cc_major >= 8 ? 1024 : 0;
  double need = smem_block > 0 ? smem_block : 0;
  if (need > g->smem_block_optin) {
    o->by_smem = 0;
  } else {
    int alloc = round_up((int)need + reserved, gran);
    o->by_smem = alloc > 0 ? g->smem_sm / alloc : INT_MAX;
  }
  int b = o->by_warps;
  if (o->by_blocks < b) b = o->by_blocks;
  if (o->by_regs < b) b = o->by_regs;
  if (o->by_smem < b) b = o->by_smem;
  o->blocks = b > 0 ? b : 0;
  o->warps = o->blocks * wpb;
}

void cm_gpu_waves(const cm_gpu *g, double nblocks, int bps, cm_waves *w) {
  memset(w, 0, sizeof *w);
  double sms = g->sms > 0 ? g->sms : 1;
  if (bps < 1) bps = 1;
  if (nblocks < 1) nblocks = 1;
  w->active = (int)fmin(nblocks, sms);
  w->per_sm = ceil(nblocks / sms);
  w->imbalance = w->per_sm / (nblocks / w->active);
  w->waves = nblocks / (sms * bps);
  w->whole = ceil(w->waves);
  w->tail = w->per_sm <= bps ? 1 : (w->per_sm / bps) / ceil(w->per_sm / bps);
}

double cm_gpu_hiding(double per_sm, int bps, double (*h)(void *ctx, int r), void *ctx) {
  if (per_sm <= 0 || bps < 1) return 1;
  double waves = ceil(per_sm / bps), last = per_sm - (waves - 1) * bps;
  double t = (waves - 1) * bps / h(ctx, bps) + last / h(ctx, (int)last);
  return per_sm / t;
}

double cm_gpu_sectors(double bytes, double stride) {
  if (bytes <= 0) return 0;
  /* the offsets (mod 32) the runs start at: the multiples of
  ** gcd(stride mod 32, 32), each as often */
  long st = (long)fmod(fabs(stride), 32), g = 32;
  for (long a = st; a;) {
    long t = g % a;
    g = a, a = t;
  }
  double s = 0;
  int n = 0;
  for (long o = 0; o < 32; o += g, n++) s += ceil((o + bytes) / 32);
  return s / n;
}

void cm_gpu_props(const cm_machine *m, const kn_problem *pb, cm_gpu *g) {
  if (m && m->gpu.sms > 0) {
    *g = m->gpu;
    if (g->warp <= 0) g->warp = 32;
    return;
  }
  *g = (cm_gpu){.cc_major = 9, .cc_minor = 0, .sms = 132, .warp = 32,
                .max_threads_block = 1024, .max_threads_sm = 2048, .max_blocks_sm = 32,
                .regs_block = 65536, .regs_sm = 65536, .smem_sm = 233472,
                .smem_block_optin = 232448, .l2_bytes = 60 << 20, .clock_khz = 1980000};
  int64_t v;
  if ((v = kn_int(pb, "sms")) > 0) g->sms = (int)v;
  if ((v = kn_int(pb, "max_threads")) > 0) g->max_threads_block = (int)v;
  if ((v = kn_int(pb, "max_smem")) > 0) g->smem_block_optin = (int)v;
  if ((v = kn_int(pb, "regs_block")) > 0) g->regs_block = (int)v;
}

static cm_gpu_res_fn res_fn;
static void *res_ctx;

void cm_gpu_resources_set(cm_gpu_res_fn fn, void *ctx) { res_fn = fn, res_ctx = ctx; }

int cm_gpu_resources(const char *kernel, const kn_problem *pb, const sp_space *sp,
                     const int *cfg, cm_gpu_res *r) {
  return res_fn ? res_fn(res_ctx, kernel, pb, sp, cfg, r) : -1;
}

int64_t cm_param_int(const sp_space *sp, const int *cfg, const char *name, int64_t dflt) {
  return sp_param_index(sp, name) < 0 ? dflt : kn_param_int(sp, cfg, name);
}

const char *cm_param_str(const sp_space *sp, const int *cfg, const char *name,
                         const char *dflt) {
  return sp_param_index(sp, name) < 0 ? dflt : kn_param_str(sp, cfg, name);
}
