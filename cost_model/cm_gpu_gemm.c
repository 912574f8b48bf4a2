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
** occupancy (registers, shared memory, threads: cm_gpu_occupancy), the
** busiest SM's last partial round of blocks, the issue slots the thread
** tile leaves to FFMAs, and the global-load latency one or two stages
** expose. Every number that is not a count is a coefficient in
** ggemm_coefs[].
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

static const char *const gg_eff[] = {"occupancy", "tail", "issue", "latency"};
enum { E_OCC, E_TAIL, E_ISSUE, E_LAT, NEFF };
enum { C_OCC_WARPS = CM_C_EFF0 + NEFF, C_REG_BASE, C_LATENCY, C_K_INSTR, C_STEP_INSTR,
       C_CAP_L2, NCOEF };

static const cm_coef ggemm_coefs[NCOEF] = {
  CM_GPU_GENERIC_COEFS,
  {"exp_occupancy", 1.0, CM_POS, "weight of too few resident warps per scheduler", 0},
  {"exp_tail", 0.5, CM_POS, "weight of the busiest SM's partial last round of blocks", 0},
  {"exp_issue", 1.0, CM_POS, "weight of issue slots spent on other than FFMA", 0},
  {"exp_latency", 1.0, CM_POS, "weight of exposed global-load latency", 0},
  {"occ_warps", 2.0, CM_POS, "resident warps per scheduler that hide the inner loop's latencies", 0},
  {"reg_base", 32, CM_POS, "registers of a thread besides the tile and fragments (the space's estimate)", 1},
  {"mem_latency", 700, CM_POS, "cycles from a global load to its use", 0},
  {"k_instr", 3, CM_POS, "instructions of one k-loop trip not unrolled (counter, branch, addresses)", 0},
  {"step_instr", 20, CM_POS, "instructions per BK step besides loads and stores (addresses, barriers)", 0},
  {"cap_L2", 0.8, CM_POS, "share of the L2 that keeps panels between waves", 1},
};

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

  /* Occupancy: registers as the space estimates them, shared memory as
  ** the generator lays it out. */
  double la = (double)BM * BK / VEC / threads, lb = (double)BK * BN / VEC / threads;
  double stage_regs = (STAGES - 1) * (double)(BM + BN) * BK / threads;
  int regs = (int)ceil(TM * TN + TM + TN + stage_regs + v[C_REG_BASE]);
  if (regs > 255) regs = 255;
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
  double res = fmin(o.blocks, wv.per_sm);      /* blocks resident at once */
  w->eff[E_OCC] = fmin(1, res * warps / 4 / v[C_OCC_WARPS]);
  w->eff[E_TAIL] = wv.tail;

  /* Issue: per BK step of one warp, FFMAs against all instructions. */
  long sm_ = TM < 4 ? TM : 4, sn_ = TN < 4 ? TN : 4;
  double ffma = (double)BK * TM * TN;
  double lds = (double)BK * (TM / sm_ + TN / sn_);
  int a_scalar = (long)K % VEC != 0, b_scalar = (long)N % VEC != 0;
  double ldg = la * (a_scalar ? VEC : 1) + lb * (b_scalar ? VEC : 1);
  double sts = la * VEC + lb;                  /* A transposed: scalar stores */
  double other = ldg + sts + v[C_STEP_INSTR] + (UNROLL >= BK ? 0 : BK / UNROLL * v[C_K_INSTR]);
  double instr = ffma + lds + other;
  w->eff[E_ISSUE] = ffma / instr;
  /* Latency: one block's step keeps the SM's schedulers busy c cycles;
  ** the global loads of a step take mem_latency, exposed whole with one
  ** stage and beyond c with two; other resident blocks fill the gap. */
  double cyc = instr * fmax(1, warps / 4.0);
  double stall = STAGES >= 2 ? fmax(0, v[C_LATENCY] - cyc) : v[C_LATENCY];
  w->eff[E_LAT] = fmin(1, res * cyc / (cyc + stall));

  /* L1: shared-memory wavefronts (an LDS of the warp moves the distinct
  ** bytes its lanes read, in 128-byte wavefronts), the stores filling the
  ** tiles, global loads (32-byte sectors) and the C epilogue. */
  double wf_a = 128 * ceil(wtm * sm_ * 4 / 128.0), wf_b = 128 * ceil(wtn * sn_ * 4 / 128.0);
  double steps = (double)tiles_m * tiles_n * kt;            /* block BK steps, all slices */
  double lds_bytes = steps * warps * BK * ((TM / sm_) * wf_a + (TN / sn_) * wf_b);
  double sts_bytes = steps * 4.0 * BK * (BM + BN);
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
  w->bytes[0] = lds_bytes + sts_bytes + ab_l2 + SPLITK * Cb;
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
};
