/*
** cm_gpu_gemm.c -- the roofline model of the GPU family's gemm schedule
** (the GPU backend's gemm generator and its space file): C = A*B, float32, row-major, FFMA
** only. The work of one schedule as the FFMAs the generated code executes
** (whole BM x BN x BK tiles: out-of-range elements load as 0 and are
** multiplied all the same), the bytes each level serves (shared-memory
** wavefronts of the inner loop and the global loads through L1; every
** block's A and B panels from L2; from DRAM, the panels each wave of
** resident blocks touches, less what the previous wave left in L2, by the
** raster order and GROUP_M swizzle), and the efficiency terms of the SM:
** latency hiding over the busiest SM's waves of resident blocks
** (cm_gpu_hiding; residency by cm_gpu_occupancy from the registers and
** stack frame ptxas gave the schedule's cubin, cm_gpu_resources, else
** estimated), with the shared-memory and global-load latencies the
** thread tile's FFMAs and one or two stages cover, and the issue slots
** the thread tile leaves to FFMAs (spills' local accesses included).
** Every number that is not a count is a coefficient in ggemm_coefs[].
**
** The generated code as the model follows it (the generator's header):
** threads = (BM/WM)(BN/WN) x 32; lanes of a warp WTM x WTN = (WM/TM) x
** (WN/TN); a thread's TM rows are sub-tiles of SM = min(TM, 4) rows read
** from shared memory with one LDS of SM floats each (TN likewise);
** As[STAGES][BK][BM + 4] (A transposed: VEC scalar stores per vector
** load), Bs[STAGES][BK][BN]; grid tiles_m x tiles_n (1-D, GROUP_M
** grouped) x SPLITK, K split in whole BK steps (ceil(kt / SPLITK) each);
** SPLITK > 1 zeroes C (a memset) and adds partial sums with atomics.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cm.h"

static const char *const gg_eff[] = {"hiding", "issue"};
enum { E_HIDE, E_ISSUE, NEFF };
enum { C_LAT_SMEM = CM_C_EFF0 + NEFF, C_REG_BASE, C_LATENCY, C_K_INSTR, C_STEP_INSTR,
       C_CAP_L2, C_LOCAL, NCOEF };

static const cm_coef ggemm_coefs[NCOEF] = {
  CM_GPU_GENERIC_COEFS_H(1),
  {"exp_hiding", 1.0, CM_POS, "weight of the SM's latency hiding over the busiest SM's waves of blocks", 1},
  {"exp_issue", 1.0, CM_POS, "weight of issue slots spent on other than FFMA", 0},
  {"lat_smem", 24, CM_POS, "cycles a warp waits from a shared-memory load to the FFMAs that use it", 0},
  {"reg_base", 32, CM_POS, "registers of a thread besides the tile and fragments, when the cubin's count is unknown", 1},
  {"mem_latency", 700, CM_POS, "cycles from a global load to its use", 0},
  {"k_instr", 3, CM_POS, "instructions of one k-loop trip not unrolled (counter, branch, addresses)", 0},
  {"step_instr", 20, CM_POS, "instructions per BK step besides loads and stores (addresses, barriers)", 0},
  {"cap_L2", 0.8, CM_POS, "share of the L2 that keeps panels between waves", 1},
  {"local_rate", 0.5, CM_POS, "local-memory accesses per byte of a thread's stack frame per k of the inner loop (spills)", 0},
};

/* Shared-memory wavefronts of one warp's scalar stores of the A tile
** transposed (as[(c + j) * LDA + r], lane t: r = t / (BK / VEC), c = t %
** (BK / VEC) * VEC), summed over the VEC stores: each store takes as many
** wavefronts as the most distinct words one of the 32 banks holds. */
static double sts_a_wavefronts(long bm, long bk, long vec, long threads) {
  long lda = bm + 4, q = bk / vec, lanes = threads < 32 ? threads : 32;
  double wf = 0;
  for (long j = 0; j < vec; j++) {
    long words[32], nw = 0;
    int per_bank[32] = {0}, most = 0;
    for (long t = 0; t < lanes; t++) {
      long r = t / q, c = t % q * vec, a = (c + j) * lda + r, seen = 0;
      for (long i = 0; i < nw && !seen; i++) seen = words[i] == a;
      if (seen) continue;
      words[nw++] = a;
      if (++per_bank[a % 32] > most) most = per_bank[a % 32];
    }
    wf += most;
  }
  return wf;
}

/* Latency hiding of one SM running r blocks of the schedule at once. */
typedef struct hide_ctx {
  double warps, ilp, lat_s, instr, lat_g;
  int stages;
} hide_ctx;
static double hide_at(void *ctx, int r) {
  const hide_ctx *x = ctx;
  double w = r * x->warps / 4;                    /* warps per scheduler */
  double hs = fmin(1, w * x->ilp / x->lat_s);     /* LDS -> FFMA */
  double cyc = x->instr * fmax(1, w);             /* a BK step of all of them */
  double stall = x->stages >= 2 ? fmax(0, x->lat_g - cyc) : x->lat_g;
  return fmax(hs * cyc / (cyc + stall), 1e-6);
}

/* ---- Sets of panels a range of blocks touches ---- */

typedef struct ivl {
  long z, lo, hi;             /* slice z, tiles [lo, hi) */
} ivl;
typedef struct ivset {
  ivl *v;
  int n, cap;
} ivset;

static void ivset_add(ivset *s, long z, long lo, long hi) {
  if (hi <= lo) return;
  /* merge with the last interval of the same slice when they touch */
  if (s->n && s->v[s->n - 1].z == z && lo <= s->v[s->n - 1].hi && hi >= s->v[s->n - 1].lo) {
    s->v[s->n - 1].lo = s->v[s->n - 1].lo < lo ? s->v[s->n - 1].lo : lo;
    s->v[s->n - 1].hi = s->v[s->n - 1].hi > hi ? s->v[s->n - 1].hi : hi;
    return;
  }
  if (s->n == s->cap) s->v = rt_realloc(s->v, (size_t)(s->cap = s->cap ? 2 * s->cap : 16) * sizeof *s->v);
  s->v[s->n++] = (ivl){z, lo, hi};
}

static int ivl_cmp(const void *a, const void *b) {
  const ivl *x = a, *y = b;
  if (x->z != y->z) return x->z < y->z ? -1 : 1;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sort and merge overlapping intervals: a set. */
static void ivset_norm(ivset *s) {
  if (s->n < 2) return;
  qsort(s->v, (size_t)s->n, sizeof *s->v, ivl_cmp);
  int k = 0;
  for (int i = 1; i < s->n; i++) {
    if (s->v[i].z == s->v[k].z && s->v[i].lo <= s->v[k].hi) {
      if (s->v[i].hi > s->v[k].hi) s->v[k].hi = s->v[i].hi;
    } else {
      s->v[++k] = s->v[i];
    }
  }
  s->n = k + 1;
}

/* Tiles in the set, each weighted by w[z] (bytes of a panel of slice z). */
static double ivset_bytes(const ivset *s, const double *w) {
  double b = 0;
  for (int i = 0; i < s->n; i++) b += (double)(s->v[i].hi - s->v[i].lo) * w[s->v[i].z];
  return b;
}

/* Bytes of the tiles in both (normalised) sets. */
static double ivset_common(const ivset *a, const ivset *b, const double *w) {
  double c = 0;
  int i = 0, j = 0;
  while (i < a->n && j < b->n) {
    const ivl *x = &a->v[i], *y = &b->v[j];
    if (x->z != y->z) {
      if (x->z < y->z) i++; else j++;
      continue;
    }
    long lo = x->lo > y->lo ? x->lo : y->lo, hi = x->hi < y->hi ? x->hi : y->hi;
    if (hi > lo) c += (double)(hi - lo) * w[x->z];
    if (x->hi < y->hi) i++; else j++;
  }
  return c;
}

typedef struct raster {
  long tm, tn, g;             /* tiles of C; GROUP_M */
} raster;

/* The A rows (tile rows) and B columns (tile columns) the blocks with
** linear ids [a, e) of slice z touch, in Triton's grouped order: group
** q / (g tn) covers tile rows [first, first + gsz); inside it ids run down
** the gsz rows of one tile column, then to the next column. */
static void raster_range(const raster *r, long z, long a, long e, ivset *rows, ivset *cols) {
  long per = r->g * r->tn;
  while (a < e) {
    long grp = a / per, first = grp * r->g, gsz = r->tm - first < r->g ? r->tm - first : r->g;
    long base = grp * per, end = base + gsz * r->tn;
    long b = e < end ? e : end;
    long qa = a - base, qe = b - base;     /* local ids [qa, qe) */
    if (qe - qa >= gsz) {
      ivset_add(rows, z, first, first + gsz);
    } else {
      long ra = qa % gsz, re = (qe - 1) % gsz;
      if (ra <= re) ivset_add(rows, z, first + ra, first + re + 1);
      else ivset_add(rows, z, first, first + re + 1), ivset_add(rows, z, first + ra, first + gsz);
    }
    ivset_add(cols, z, qa / gsz, (qe - 1) / gsz + 1);
    a = b;
  }
}

/* DRAM bytes read for A and B (bytes of one tile row panel of slice z in
** pa[z], of one tile column panel in pb_[z]): each wave of `conc`
** concurrently resident blocks reads the panels it touches once; those the
** previous wave also touched are kept in proportion min(1, cap / F), F the
** data streamed between the two uses (the mean of both waves' panels and C
** tiles). */
static double wave_reads(const raster *r, long splitk, double conc, const double *pa,
                         const double *pb_, double ctile, double cap) {
  long T = r->tm * r->tn, nb = T * splitk, step = (long)conc;
  if (step < 1) step = 1;
  ivset rows[2] = {{0}}, cols[2] = {{0}};
  double reads = 0, fprev = 0;
  int cur = 0;
  for (long a = 0, w = 0; a < nb; a += step, w++, cur ^= 1) {
    long e = a + step < nb ? a + step : nb;
    rows[cur].n = cols[cur].n = 0;
    for (long x = a; x < e;) {          /* split at slice boundaries */
      long z = x / T, xe = (z + 1) * T < e ? (z + 1) * T : e;
      raster_range(r, z, x - z * T, xe - z * T, &rows[cur], &cols[cur]);
      x = xe;
    }
    ivset_norm(&rows[cur]);
    ivset_norm(&cols[cur]);
    double here = ivset_bytes(&rows[cur], pa) + ivset_bytes(&cols[cur], pb_);
    double f = here + (double)(e - a) * ctile;
    reads += here;
    if (w > 0) {
      double both = ivset_common(&rows[cur], &rows[cur ^ 1], pa) +
                    ivset_common(&cols[cur], &cols[cur ^ 1], pb_);
      double dist = (fprev + f) / 2;
      reads -= both * (dist > 0 ? fmin(1, cap / dist) : 1);
    }
    fprev = f;
  }
  for (int i = 0; i < 2; i++) free(rows[i].v), free(cols[i].v);
  return reads;
}

static int ggemm_work(const kn_problem *pb, const sp_space *sp, const int *cfg,
                      const cm_machine *m, const cm_coefs *c, cm_work *w, rt_err *err) {
  const double *v = c->v;
  cm_gpu g;
  cm_gpu_props(m, pb, &g);
  double M = (double)kn_int(pb, "M"), N = (double)kn_int(pb, "N"), K = (double)kn_int(pb, "K");
  long BM = kn_param_int(sp, cfg, "BM"), BN = kn_param_int(sp, cfg, "BN");
  long BK = kn_param_int(sp, cfg, "BK"), WM = kn_param_int(sp, cfg, "WM");
  long WN = kn_param_int(sp, cfg, "WN"), TM = kn_param_int(sp, cfg, "TM");
  long TN = kn_param_int(sp, cfg, "TN"), VEC = kn_param_int(sp, cfg, "VEC");
  long STAGES = cm_param_int(sp, cfg, "STAGES", 1), UNROLL = cm_param_int(sp, cfg, "UNROLL", 1);
  long SPLITK = cm_param_int(sp, cfg, "SPLITK", 1), GROUP_M = cm_param_int(sp, cfg, "GROUP_M", 1);
  if (SPLITK < 1) SPLITK = 1;
  if (GROUP_M < 1) GROUP_M = 1;
  if (UNROLL < 1) UNROLL = 1;
  long warps = (BM / WM) * (BN / WN), threads = warps * 32;
  long wtm = WM / TM, wtn = WN / TN;
  if (wtm * wtn != 32 || BM % WM || BN % WN || !(M > 0 && N > 0 && K > 0)) {
    rt_err_set(err, "gpu gemm model: warp tile %ldx%ld of thread tiles %ldx%ld is not 32 lanes "
               "(or a block tile does not divide)", WM, WN, TM, TN);
    return -1;
  }
  long tiles_m = (long)ceil(M / BM), tiles_n = (long)ceil(N / BN), kt = (long)ceil(K / BK);
  long tps = (kt + SPLITK - 1) / SPLITK;
  double nb = (double)tiles_m * tiles_n * SPLITK;

  /* Flops: every block multiplies whole BM x BN x BK tiles over its steps;
  ** the steps of all slices add up to kt. */
  w->flops = 2.0 * tiles_m * BM * tiles_n * BN * BK * kt;

  /* Occupancy: registers and local memory as the cubin has them (the
  ** backend's hook), else as the space estimates them; shared memory as
  ** the generator lays it out. */
  double la = (double)BM * BK / VEC / threads, lb = (double)BK * BN / VEC / threads;
  double stage_regs = (STAGES - 1) * (double)(BM + BN) * BK / threads;
  cm_gpu_res rs;
  int regs;
  double local = 0;
  if (!cm_gpu_resources("gemm", pb, sp, cfg, &rs)) {
    regs = rs.regs, local = rs.local;
  } else {
    regs = (int)ceil(TM * TN + TM + TN + stage_regs + v[C_REG_BASE]);
    int cap = threads > 0 ? (int)fmin(255, g.regs_block / threads / 8 * 8) : 255;
    if (regs > cap) local = 4.0 * (regs - cap), regs = cap;   /* ptxas spills the rest */
  }
  double smem = 4.0 * STAGES * BK * (BM + 4 + BN);
  cm_occ o;
  cm_gpu_occupancy(&g, (int)threads, regs, smem, &o);
  if (o.blocks < 1) {
    rt_err_set(err, "gpu gemm model: a block of %ld threads, %d registers each and %.0f bytes "
               "of shared memory does not fit on an SM", threads, regs, smem);
    return -1;
  }
  cm_waves wv;
  cm_gpu_waves(&g, nb, o.blocks, &wv);

  /* Issue: per BK step of one warp, FFMAs against all instructions. */
  long sm_ = TM < 4 ? TM : 4, sn_ = TN < 4 ? TN : 4;
  double ffma = (double)BK * TM * TN;
  double lds = (double)BK * (TM / sm_ + TN / sn_);
  int a_scalar = (long)K % VEC != 0, b_scalar = (long)N % VEC != 0;
  double ldg = la * (a_scalar ? VEC : 1) + lb * (b_scalar ? VEC : 1);
  double sts = la * VEC + lb;                  /* A transposed: scalar stores */
  double ldl = BK * local * v[C_LOCAL] / 4;    /* local loads and stores of spills */
  double other = ldg + sts + ldl + v[C_STEP_INSTR] + (UNROLL >= BK ? 0 : BK / UNROLL * v[C_K_INSTR]);
  double instr = ffma + lds + other;
  w->eff[E_ISSUE] = ffma / instr;
  /* Hiding: over the busiest SM's waves of blocks (ceil(blocks / (SMs x
  ** blocks per SM)), the last one partial), the share of cycles its
  ** schedulers issue: r resident blocks give r x warps / 4 warps per
  ** scheduler, each with TM x TN independent FFMAs per k to cover a
  ** shared-memory load's latency, and one BK step of all of them to cover
  ** the global loads (whole with one stage, beyond it with two). */
  hide_ctx hx = {.warps = (double)warps, .ilp = (double)TM * TN, .lat_s = v[C_LAT_SMEM],
                 .instr = instr, .lat_g = v[C_LATENCY], .stages = (int)STAGES};
  w->eff[E_HIDE] = cm_gpu_hiding(wv.per_sm, o.blocks, hide_at, &hx);

  /* L1: shared-memory wavefronts (an LDS of the warp moves the distinct
  ** bytes its lanes read, in 128-byte wavefronts), the stores filling the
  ** tiles, global loads (32-byte sectors) and the C epilogue. */
  double wf_a = 128 * ceil(wtm * sm_ * 4 / 128.0), wf_b = 128 * ceil(wtn * sn_ * 4 / 128.0);
  double steps = (double)tiles_m * tiles_n * kt;            /* block BK steps, all slices */
  double lds_bytes = steps * warps * BK * ((TM / sm_) * wf_a + (TN / sn_) * wf_b);
  double sts_bytes = steps * warps * 128.0 *
                     (la * sts_a_wavefronts(BM, BK, VEC, threads) + lb * VEC);
  double local_bytes = steps * threads * BK * local * v[C_LOCAL];
  /* L2: each block's panels, in sectors (rows of A: BK floats at stride K;
  ** rows of B: BN floats at stride N); the k tail and the n edge short */
  double kfull = floor(K / BK), krem = K - kfull * BK;
  double nfull = floor(N / BN), nrem = N - nfull * BN;
  double a_sec = tiles_n * M * (kfull * cm_gpu_sectors(BK * 4.0, K * 4) +
                                (krem > 0 ? cm_gpu_sectors(krem * 4, K * 4) : 0));
  double b_sec = tiles_m * K * (nfull * cm_gpu_sectors(BN * 4.0, N * 4) +
                                (nrem > 0 ? cm_gpu_sectors(nrem * 4, N * 4) : 0));
  double ab_l2 = 32 * (a_sec + b_sec);
  double Cb = 4 * M * N;
  double c_l2 = SPLITK > 1 ? Cb + SPLITK * Cb : Cb;         /* memset + atomics, or stores */
  w->bytes[0] = lds_bytes + sts_bytes + local_bytes + ab_l2 + SPLITK * Cb;
  w->bytes[1] = ab_l2 + c_l2;
  w->bytes[2] = 0;

  /* DRAM: the waves' panels, unless the whole problem stays in L2. */
  double cap = v[C_CAP_L2] * g.l2_bytes;
  double Ab = 4 * M * K, Bb = 4 * K * N, total = Ab + Bb + Cb;
  double reads;
  if (total <= cap) {
    reads = m->flush ? Ab + Bb : 0;
  } else {
    double *pa = rt_malloc((size_t)SPLITK * 2 * sizeof *pa), *pbn = pa + SPLITK;
    for (long z = 0; z < SPLITK; z++) {
      double k0 = (double)z * tps * BK, k1 = fmin(K, (double)(z + 1) * tps * BK);
      double kl = fmax(0, k1 - k0);
      pa[z] = 4 * kl * M / tiles_m;             /* a tile row's panel (mean rows) */
      pbn[z] = 4 * kl * N / tiles_n;
    }
    raster r = {tiles_m, tiles_n, GROUP_M};
    double conc = fmin(nb, (double)g.sms * o.blocks);
    reads = wave_reads(&r, SPLITK, conc, pa, pbn, 4.0 * BM * BN, cap);
    free(pa);
  }
  /* C: written back during the kernel for the share of the data that
  ** does not fit; split-K's atomics re-read C between slices when a
  ** slice's data pushes it out. */
  double wshare = total > cap ? (total - cap) / total : 0;
  double cmiss = 0;
  if (SPLITK > 1) {
    double fslice = (Ab + Bb) / SPLITK + Cb;
    cmiss = fslice > cap ? 1 - cap / fslice : 0;
  }
  double writes = Cb * wshare * (1 + (SPLITK - 1) * cmiss);
  w->bytes[3] = reads + SPLITK * Cb * cmiss + writes;

  w->threads = wv.active;
  w->imbalance = wv.imbalance;
  w->trips = nb;
  w->launches = SPLITK > 1 ? 2 : 1;
  w->serial_frac = 0;
  return 0;
}

const cm_kmodel cm_gpu_gemm = {
  .kernel = "gemm",
  .family = "gpu",
  .neff = NEFF,
  .eff_names = gg_eff,
  .ncoef = NCOEF,
  .coefs = ggemm_coefs,
  .work = ggemm_work,
  .form = 2,   /* 2: the cubin's registers, hiding over waves (issue 21) */
};
