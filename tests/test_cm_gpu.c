/*
** test_cm_gpu.c -- the CUDA target's cost models against independent
** expectations: occupancy against hand computations that follow CUDA's
** occupancy rules (cuda_occupancy.h: warps, the block limit, registers per
** warp in units of 256 over four sub-partitions, shared memory plus 1 KiB
** reserved in 128-byte units); waves against a dispatch of blocks to SMs
** counted one by one; sectors against the rows' offsets walked one by
** one; the gemm model's flops against a brute-force walk of blocks,
** split-K slices, steps, threads and their tiles on small odd shapes; its
** DRAM bytes against compulsory traffic when everything fits in L2 and
** against a direct per-block simulation of the wave rule when it does not;
** the roofline combination on GPU ceilings (finite, the right bound, no L3);
** the ceilings' JSON with and without the GPU's fields; the model table per
** target; and calibration recovering coefficients from synthetic times.
** The gemm space is tests/data/cuda_gemm_space.json (a copy of
** targets/cuda/gemm.json's parameters and constraints).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost_model/cm.h"

static const cm_gpu H200 = {.cc_major = 9, .cc_minor = 0, .sms = 132, .warp = 32,
                            .max_threads_block = 1024, .max_threads_sm = 2048,
                            .max_blocks_sm = 32, .regs_block = 65536, .regs_sm = 65536,
                            .smem_sm = 233472, .smem_block_optin = 232448,
                            .l2_bytes = 62914560, .clock_khz = 1980000};

static cm_ceilings gpu_ceilings(void) {
  cm_ceilings c = {.threads = 132};
  c.peak[1] = 65e12, c.peak[0] = 65e12 / 132;
  double bw[CM_NLEVEL][2] = {{33e12 / 132, 33e12}, {10e12 / 132, 10e12}, {0, 0}, {0, 3.6e12}};
  memcpy(c.bw, bw, sizeof bw);
  c.cache[0] = 233472, c.cache[1] = 62914560;
  strcpy(c.measured, "test");
  c.gpu = H200;
  return c;
}

static sp_space *load_space(const char *file, const char *set) {
  sx_arena *arena = sx_arena_new();
  sp_binding *b = NULL;
  rt_err err = {0};
  int nb = sp_parse_bindings(set, arena, &b, &err);
  assert_true(nb > 0);
  sp_space *sp = sp_load_file(file, b, nb, &err);
  if (!sp) fprintf(stderr, "%s\n", err.msg);
  free(b);
  sx_arena_free(arena);
  assert_non_null(sp);
  return sp;
}

static int cfg_of(const sp_space *sp, const char *json, int *cfg) {
  rt_err err = {0};
  return sp_config_parse(sp, json, cfg, &err);
}

/* ---- Occupancy by hand (H200, cc 9.0: 2048 threads, 32 blocks, 65536
** registers in 4 sub-partitions of 16384, 228 KiB shared memory) ---- */

static void test_occupancy(void **state) {
  (void)state;
  static const struct {
    int threads, regs;
    double smem;
    int by_warps, by_regs, by_smem, blocks;
  } cases[] = {
    /* 8 warps; 128 x 32 = 4096 per warp: 16384 / 4096 = 4 warps per
    ** sub-partition, 16 per SM, 2 blocks; 16640 + 1024 = 17664 = 138 x 128:
    ** 233472 / 17664 = 13 */
    {256, 128, 16640, 8, 2, 13, 2},
    /* 4 warps; 40 x 32 = 1280 (5 units): 16384 / 1280 = 12 per sub-partition,
    ** 48 warps, 12 blocks; 1024 bytes: 228 blocks; warps 64 / 4 = 16 */
    {128, 40, 0, 16, 12, 228, 12},
    /* 32 warps; 64 x 32 = 2048: 8 per sub-partition, 32 warps, 1 block */
    {1024, 64, 0, 2, 1, 228, 1},
    /* 2 warps; 255 x 32 = 8160 -> 8192: 2 per sub-partition, 8 warps, 4
    ** blocks; 102400 + 1024 = 103424 = 808 x 128: 2 blocks */
    {64, 255, 102400, 32, 4, 2, 2},
    /* 32 warps of 72 x 32 = 2304: 73728 > 65536 registers of a block */
    {1024, 72, 0, 2, 0, 228, 0},
    /* 3 warps; 1024 per warp: 16 per sub-partition, 64 warps, 21 blocks
    ** (the block is counted as 4 warps only for the per-block check);
    ** 1000 + 1024 = 2024 -> 2048: 114 blocks */
    {96, 32, 1000, 21, 21, 114, 21},
    /* a recorded H200 gemm schedule's cubin (BM 128, BN 64, TM 16, one
    ** stage: 168 registers): 2 warps of 168 x 32 = 5376 (21 units): 16384
    ** / 5376 = 3 per sub-partition, 12 warps, 6 blocks; 6272 + 1024 = 7296
    ** = 57 x 128: 32 blocks */
    {64, 168, 6272, 32, 6, 32, 6},
    /* more shared memory than one block may have: 0 */
    {128, 32, 232449, 16, 16, 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cm_occ o;
    cm_gpu_occupancy(&H200, cases[i].threads, cases[i].regs, cases[i].smem, &o);
    printf("occupancy %d threads %d regs %.0f smem: warps %d regs %d smem %d -> %d\n",
           cases[i].threads, cases[i].regs, cases[i].smem, o.by_warps, o.by_regs, o.by_smem,
           o.blocks);
    assert_int_equal(o.by_warps, cases[i].by_warps);
    assert_int_equal(o.by_regs, cases[i].by_regs);
    assert_int_equal(o.by_smem, cases[i].by_smem);
    assert_int_equal(o.blocks, cases[i].blocks);
    assert_int_equal(o.warps, o.blocks * ((cases[i].threads + 31) / 32));
  }
}

/* ---- Waves against blocks dispatched one by one ---- */

static void test_waves(void **state) {
  (void)state;
  static const struct {
    int nblocks, bps;
  } cases[] = {{133, 1}, {200, 2}, {66, 2}, {396, 2}, {1024, 2}, {4096, 1}, {132, 1}, {1, 8}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    /* round-robin over the SMs: each SM's count of blocks */
    int cnt[132] = {0};
    for (int b = 0; b < cases[i].nblocks; b++) cnt[b % 132]++;
    int mx = 0, active = 0;
    for (int s = 0; s < 132; s++) mx = cnt[s] > mx ? cnt[s] : mx, active += cnt[s] > 0;
    /* the busiest SM's rounds of bps resident blocks */
    int rounds = (mx + cases[i].bps - 1) / cases[i].bps;
    cm_waves w;
    cm_gpu_waves(&H200, cases[i].nblocks, cases[i].bps, &w);
    assert_int_equal(w.active, active);
    assert_true(w.per_sm == mx);
    assert_true(fabs(w.imbalance - mx / ((double)cases[i].nblocks / active)) < 1e-12);
    assert_true(fabs(w.waves - cases[i].nblocks / (132.0 * cases[i].bps)) < 1e-12);
    assert_true(w.whole == ceil(cases[i].nblocks / (132.0 * cases[i].bps)));
    double tail = mx <= cases[i].bps ? 1 : (double)mx / cases[i].bps / rounds;
    assert_true(fabs(w.tail - tail) < 1e-12);
  }
  /* by hand: 396 blocks, 2 per SM: 3 each, rounds 2 of which the last is
  ** half full */
  cm_waves w;
  cm_gpu_waves(&H200, 396, 2, &w);
  assert_true(w.per_sm == 3 && fabs(w.tail - 0.75) < 1e-12 && w.whole == 2);
}

/* ---- Latency hiding over waves against an event-driven SM ---- */

/* h(r): made-up rates of an SM running r blocks (r / 3 below 3, then 1). */
static double h_table(void *ctx, int r) {
  (void)ctx;
  return r >= 3 ? 1 : r / 3.0;
}

/* One SM with bps slots and n identical blocks of one unit of work each,
** started as slots free, every resident block progressing at h(r) / r:
** the time until the last one finishes, by events. */
static double sm_events(int n, int bps) {
  double left[64], t = 0;
  int started = 0, res = 0;
  for (;;) {
    while (res < bps && started < n) left[res++] = 1, started++;
    if (!res) return t;
    double rate = h_table(NULL, res) / res, dt = INFINITY;
    for (int i = 0; i < res; i++) dt = fmin(dt, left[i] / rate);
    t += dt;
    int k = 0;
    for (int i = 0; i < res; i++)
      if ((left[i] -= dt * rate) > 1e-12) left[k++] = left[i];
    res = k;
  }
}

static void test_hiding(void **state) {
  (void)state;
  for (int n = 1; n <= 40; n++)
    for (int bps = 1; bps <= 8; bps++) {
      double want = n / sm_events(n, bps);
      assert_true(fabs(cm_gpu_hiding(n, bps, h_table, NULL) - want) < 1e-9);
    }
  /* by hand: 7 blocks, 3 at once: waves 3, 3, 1 block-times 3 + 3 + 3 */
  assert_true(fabs(cm_gpu_hiding(7, 3, h_table, NULL) - 7.0 / 9) < 1e-12);
  /* the busiest SM's waves are ceil(blocks / (SMs x bps)): the same
  ** count the event walk above steps through for every grid */
  for (int nb = 1; nb <= 2000; nb += 37)
    for (int bps = 1; bps <= 4; bps++) {
      cm_waves w;
      cm_gpu_waves(&H200, nb, bps, &w);
      assert_true(ceil(w.per_sm / bps) == ceil(nb / (132.0 * bps)));
    }
}

/* ---- Sectors against a walk over row starts ---- */

static void test_sectors(void **state) {
  (void)state;
  double bytes[] = {32, 4, 12, 64, 100, 512, 36};
  double stride[] = {128, 116, 4 * 37, 4 * 1024, 4 * 45, 4 * 29, 40};
  for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++)
    for (size_t j = 0; j < sizeof stride / sizeof stride[0]; j++) {
      double s = 0;
      int rows = 32 * 8;                       /* whole periods of every offset */
      for (int r = 0; r < rows; r++) {
        long a = (long)(r * stride[j]), e = a + (long)bytes[i];
        s += (double)((e - 1) / 32 - a / 32 + 1);
      }
      assert_true(fabs(cm_gpu_sectors(bytes[i], stride[j]) - s / rows) < 1e-12);
    }
  assert_true(fabs(cm_gpu_sectors(32, 116) - 15.0 / 8) < 1e-12);   /* by hand */
}

/* ---- gemm flops: a walk of the launch ---- */

typedef struct gcfg {
  long BM, BN, BK, WM, WN, TM, TN, SPLITK;
} gcfg;

static gcfg read_cfg(const sp_space *sp, const int *cfg) {
  return (gcfg){kn_param_int(sp, cfg, "BM"), kn_param_int(sp, cfg, "BN"),
                kn_param_int(sp, cfg, "BK"), kn_param_int(sp, cfg, "WM"),
                kn_param_int(sp, cfg, "WN"), kn_param_int(sp, cfg, "TM"),
                kn_param_int(sp, cfg, "TN"), kn_param_int(sp, cfg, "SPLITK")};
}

/* FMAs the launch executes: every block of every slice, its BK steps (the
** slice's share of ceil(K / BK) steps), every thread of the block, its
** TM x TN tile for each k of the step, whether in range or guarded (a
** guarded element loads 0 and is multiplied all the same); *useful counts
** the in-range ones. */
static double walk_fma(long M, long N, long K, const gcfg *g, double *useful) {
  long tm = (M + g->BM - 1) / g->BM, tn = (N + g->BN - 1) / g->BN, kt = (K + g->BK - 1) / g->BK;
  long tps = (kt + g->SPLITK - 1) / g->SPLITK;
  long wtm = g->WM / g->TM, wtn = g->WN / g->TN;
  long warps_n = g->BN / g->WN, threads = (g->BM / g->WM) * warps_n * 32;
  long sm = g->TM < 4 ? g->TM : 4, sn = g->TN < 4 ? g->TN : 4;
  double fma = 0;
  *useful = 0;
  for (long z = 0; z < g->SPLITK; z++)
    for (long blk = 0; blk < tm * tn; blk++) {
      long by = blk / tn, bx = blk % tn;
      for (long st = z * tps; st < (z + 1) * tps && st < kt; st++)
        for (long t = 0; t < threads; t++) {
          long warp = t / 32, lane = t % 32;
          long wy = warp / warps_n, wx = warp % warps_n, ly = lane / wtn, lx = lane % wtn;
          for (long kk = 0; kk < g->BK; kk++) {
            long k = st * g->BK + kk;
            for (long i = 0; i < g->TM; i++) {
              /* row i of the thread: sub-tile i / sm, WTM x sm rows apart */
              long r = by * g->BM + wy * g->WM + (i / sm) * wtm * sm + ly * sm + i % sm;
              for (long j = 0; j < g->TN; j++) {
                long cc = bx * g->BN + wx * g->WN + (j / sn) * wtn * sn + lx * sn + j % sn;
                fma++;
                if (r < M && cc < N && k < K) (*useful)++;
              }
            }
          }
        }
    }
  return fma;
}

static void test_gemm_flops_walk(void **state) {
  (void)state;
  static const long shapes[][3] = {{37, 45, 29}, {19, 70, 33}, {64, 17, 41}};
  cm_ceilings ce = gpu_ceilings();
  cm_coefs c;
  cm_coefs_default(&cm_gpu_gemm, &c);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 5);
  int checked = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    char set[96];
    snprintf(set, sizeof set, "M=%ld,N=%ld,K=%ld", shapes[s][0], shapes[s][1], shapes[s][2]);
    sp_space *sp = load_space("tests/data/cuda_gemm_space.json", set);
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    int np = sp_nparams(sp), n = 12;
    int *cfgs = malloc((size_t)n * np * sizeof *cfgs);
    rt_err err = {0};
    assert_int_equal(sp_sample(sp, rng, n, 0, cfgs, &err), 0);
    for (int i = 0; i < n; i++) {
      const int *cfg = cfgs + (size_t)i * np;
      gcfg g = read_cfg(sp, cfg);
      double useful, fma = walk_fma(shapes[s][0], shapes[s][1], shapes[s][2], &g, &useful);
      cm_pred p;
      assert_int_equal(cm_predict(&cm_gpu_gemm, &pb, sp, cfg, &ce, &c, 1, &p, &err), 0);
      assert_true(useful == (double)shapes[s][0] * shapes[s][1] * shapes[s][2]);
      assert_true(p.w.flops == 2 * fma);
      assert_true(isfinite(p.time) && p.time > 0);
      checked++;
    }
    free(cfgs);
    sp_free(sp);
  }
  gsl_rng_free(rng);
  printf("gemm flops: %d schedules of 3 odd shapes match the walk\n", checked);
}

/* ---- gemm DRAM bytes ---- */

/* The wave rule simulated block by block: tile (row, col) of block id q of
** a slice in Triton's grouped order, each wave of conc blocks reading the
** distinct panels it touches, less the share min(1, cap / F) of those the
** previous wave touched (F the mean of both waves' panel and C-tile bytes). */
static double sim_waves(long tm, long tn, long G, long splitk, long conc, const double *pa,
                        const double *pbn, double ctile, double cap) {
  long T = tm * tn, nb = T * splitk;
  char *ra = calloc((size_t)(tm * splitk), 1), *ca = calloc((size_t)(tn * splitk), 1);
  char *rp = calloc((size_t)(tm * splitk), 1), *cp = calloc((size_t)(tn * splitk), 1);
  double reads = 0, fprev = 0;
  for (long a = 0, w = 0; a < nb; a += conc, w++) {
    memset(ra, 0, (size_t)(tm * splitk)), memset(ca, 0, (size_t)(tn * splitk));
    long e = a + conc < nb ? a + conc : nb;
    for (long b = a; b < e; b++) {
      long z = b / T, q = b % T, grp = q / (G * tn), first = grp * G;
      long gsz = tm - first < G ? tm - first : G;
      long row = first + (q % (G * tn)) % gsz, col = (q % (G * tn)) / gsz;
      ra[z * tm + row] = 1, ca[z * tn + col] = 1;
    }
    double here = 0, both = 0;
    for (long i = 0; i < tm * splitk; i++) here += ra[i] * pa[i / tm], both += ra[i] * rp[i] * pa[i / tm];
    for (long j = 0; j < tn * splitk; j++) here += ca[j] * pbn[j / tn], both += ca[j] * cp[j] * pbn[j / tn];
    double f = here + (double)(e - a) * ctile;
    reads += here;
    if (w > 0) reads -= both * fmin(1, cap / ((fprev + f) / 2));
    fprev = f;
    memcpy(rp, ra, (size_t)(tm * splitk)), memcpy(cp, ca, (size_t)(tn * splitk));
  }
  free(ra), free(ca), free(rp), free(cp);
  return reads;
}

static void test_gemm_dram(void **state) {
  (void)state;
  cm_ceilings ce = gpu_ceilings();
  cm_coefs c;
  cm_coefs_default(&cm_gpu_gemm, &c);
  rt_err err = {0};
  /* 1. everything fits in L2 (3 MiB): A and B once when flushed, nothing
  ** when warm; C stays in L2 (written back later, not in this run) */
  {
    sp_space *sp = load_space("tests/data/cuda_gemm_space.json", "M=512,N=512,K=512");
    kn_problem pb;
    kn_problem_from_space(&pb, sp);
    int np = sp_nparams(sp), n = 20;
    int *cfgs = malloc((size_t)n * np * sizeof *cfgs);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 3);
    assert_int_equal(sp_sample(sp, rng, n, 0, cfgs, &err), 0);
    for (int i = 0; i < n; i++) {
      cm_pred p;
      assert_int_equal(cm_predict(&cm_gpu_gemm, &pb, sp, cfgs + (size_t)i * np, &ce, &c, 1, &p, &err), 0);
      assert_true(fabs(p.w.bytes[CM_DRAM - CM_L1] - 4.0 * 2 * 512 * 512) < 1e-6);
      assert_int_equal(cm_predict(&cm_gpu_gemm, &pb, sp, cfgs + (size_t)i * np, &ce, &c, 0, &p, &err), 0);
      assert_true(p.w.bytes[CM_DRAM - CM_L1] == 0);
    }
    free(cfgs);
    gsl_rng_free(rng);
    sp_free(sp);
  }
  /* 2. 8192^3 (768 MiB): the wave rule, simulated block by block; the
  ** default tile 128 x 128, 256 threads, 2 blocks per SM (occupancy test) */
  sp_space *sp = load_space("tests/data/cuda_gemm_space.json", "M=8192,N=8192,K=8192");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  int *cfg = malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  double cap = 0.8 * H200.l2_bytes, K = 8192, compulsory = 4.0 * 2 * 8192 * 8192;
  double prev = 0;
  static const long groups[] = {1, 4, 8, 16};
  for (int gi = 0; gi < 4; gi++) {
    char js[320];
    snprintf(js, sizeof js,
             "{\"BM\": 128, \"BN\": 128, \"BK\": 8, \"WM\": 32, \"WN\": 64, \"TM\": 8, \"TN\": 8, "
             "\"VEC\": 4, \"STAGES\": 2, \"UNROLL\": 8, \"SPLITK\": 1, \"GROUP_M\": %ld}",
             groups[gi]);
    assert_int_equal(cfg_of(sp, js, cfg), 0);
    cm_pred p;
    assert_int_equal(cm_predict(&cm_gpu_gemm, &pb, sp, cfg, &ce, &c, 1, &p, &err), 0);
    double pa = 4 * K * 128, total = 3 * 4.0 * 8192 * 8192;
    double reads = sim_waves(64, 64, groups[gi], 1, 132 * 2, &pa, &pa, 4.0 * 128 * 128, cap);
    double writes = 4.0 * 8192 * 8192 * (total - cap) / total;
    printf("gemm 8192^3 GROUP_M %ld: DRAM %.3g bytes (compulsory reads %.3g)\n", groups[gi],
           p.w.bytes[3], compulsory);
    assert_true(fabs(p.w.bytes[3] / (reads + writes) - 1) < 1e-9);
    assert_true(reads > compulsory);
    /* a wave of 264 blocks covers a whole group of 4 rows (256 blocks) and
    ** so all 64 B panels, as the row raster does; groups of 8 and 16 rows
    ** cover 33 and 17 columns of them: fewer panels per wave */
    if (gi == 0) prev = p.w.bytes[3];
    if (gi >= 2) assert_true(p.w.bytes[3] < 0.8 * prev);
  }
  free(cfg);
  sp_free(sp);
}

/* ---- cm_time on GPU ceilings ---- */

static void test_time_bounds(void **state) {
  (void)state;
  cm_ceilings ce = gpu_ceilings();
  rt_err err = {0};
  /* compute-bound: the default gemm tile on 4096^3 */
  sp_space *sp = load_space("tests/data/cuda_gemm_space.json", "M=4096,N=4096,K=4096");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  int *cfg = malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  assert_int_equal(cfg_of(sp, "{\"BM\": 128, \"BN\": 128, \"BK\": 8, \"WM\": 32, \"WN\": 64, "
                              "\"TM\": 8, \"TN\": 8, \"VEC\": 4, \"STAGES\": 2, \"UNROLL\": 8, "
                              "\"SPLITK\": 1, \"GROUP_M\": 8}", cfg), 0);
  cm_coefs c;
  cm_coefs_default(&cm_gpu_gemm, &c);
  cm_pred p;
  assert_int_equal(cm_predict(&cm_gpu_gemm, &pb, sp, cfg, &ce, &c, 1, &p, &err), 0);
  printf("gemm 4096^3 default: %.3f ms, %.1f TFLOP/s, bound %s; t compute %.3g L1 %.3g L2 %.3g "
         "DRAM %.3g; eff occ %.2f tail %.2f issue %.2f lat %.2f\n",
         p.time * 1e3, 2.0 * 4096 * 4096 * 4096 / p.time / 1e12, cm_bound_name(p.bound),
         p.t[CM_COMPUTE], p.t[CM_L1], p.t[CM_L2], p.t[CM_DRAM], p.w.eff[0], p.w.eff[1],
         p.w.eff[2], p.w.eff[3]);
  assert_true(isfinite(p.time) && p.time > 0);
  assert_int_equal(p.bound, CM_COMPUTE);
  assert_true(p.t[CM_L3] == 0 && p.frac[CM_L3] == 0 && isfinite(p.frac[CM_DRAM]));
  /* the useful rate is below the peak and not absurdly far from it */
  double rate = 2.0 * 4096 * 4096 * 4096 / p.time;
  assert_true(rate < 65e12 && rate > 20e12);
  free(cfg);
  sp_free(sp);
  /* memory-bound: a reduction of 2^28 floats */
  sp = load_space("tests/data/cuda_reduction_space.json", "N=268435456");
  kn_problem_from_space(&pb, sp);
  cfg = malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  assert_int_equal(cfg_of(sp, "{\"threads\": 256, \"vec\": 4, \"ilp\": 4, \"waves\": 8}", cfg), 0);
  cm_coefs_default(&cm_gpu_reduction, &c);
  assert_int_equal(cm_predict(&cm_gpu_reduction, &pb, sp, cfg, &ce, &c, 1, &p, &err), 0);
  printf("reduction 2^28: %.3f ms, %.2f TB/s, bound %s\n", p.time * 1e3,
         4.0 * 268435456 / p.time / 1e12, cm_bound_name(p.bound));
  assert_true(isfinite(p.time) && p.time > 0);
  assert_int_equal(p.bound, CM_DRAM);
  assert_true(p.w.bytes[3] >= 4.0 * 268435456);
  /* few bytes in flight (1 float per thread, 32 threads, one block per
  ** SM): latency-bound, slower */
  assert_int_equal(cfg_of(sp, "{\"threads\": 32, \"vec\": 1, \"ilp\": 1, \"waves\": 1}", cfg), 0);
  cm_pred q;
  assert_int_equal(cm_predict(&cm_gpu_reduction, &pb, sp, cfg, &ce, &c, 1, &q, &err), 0);
  assert_true(q.time > 4 * p.time);
  free(cfg);
  sp_free(sp);
}

/* ---- Ceilings JSON with and without the GPU ---- */

static void test_ceilings_json(void **state) {
  (void)state;
  cm_ceilings a = gpu_ceilings(), b;
  rt_err err = {0};
  char *js = cm_ceilings_json(&a);
  assert_non_null(strstr(js, "\"gpu\""));
  assert_int_equal(cm_ceilings_parse(js, &b, &err), 0);
  assert_memory_equal(&a.gpu, &b.gpu, sizeof a.gpu);
  assert_true(b.bw[2][1] == 0 && b.peak[1] == a.peak[1] && b.threads == 132);
  free(js);
  /* a host's: no member, zeros back */
  a.gpu = (cm_gpu){0};
  js = cm_ceilings_json(&a);
  assert_null(strstr(js, "\"gpu\""));
  memset(&b.gpu, 7, sizeof b.gpu);
  assert_int_equal(cm_ceilings_parse(js, &b, &err), 0);
  cm_gpu zero = {0};
  assert_memory_equal(&b.gpu, &zero, sizeof zero);
  free(js);
  /* ceilings stored before the field existed */
  const char *old = "{\"threads\":2,\"measured\":\"2026-11-01 10:00\",\"seconds\":3.5,\"classes\":[],"
                    "\"peak\":[1e9,2e9],\"bw\":{\"L1\":[1,2],\"L2\":[1,2],\"L3\":[1,2],\"DRAM\":[1,2]},"
                    "\"cache\":{\"L1\":1,\"L2\":2,\"L3\":3,\"DRAM\":0},\"sweep\":[]}";
  assert_int_equal(cm_ceilings_parse(old, &b, &err), 0);
  assert_int_equal(b.gpu.sms, 0);
  /* a wrong field is named */
  const char *bad = "{\"threads\":2,\"measured\":\"x\",\"seconds\":1,\"classes\":[],"
                    "\"peak\":[1,2],\"bw\":{\"L1\":[1,2],\"L2\":[1,2],\"L3\":[1,2],\"DRAM\":[1,2]},"
                    "\"cache\":{\"L1\":1,\"L2\":2,\"L3\":3,\"DRAM\":0},\"sweep\":[],\"gpu\":{\"sms\":-1}}";
  assert_int_equal(cm_ceilings_parse(bad, &b, &err), -1);
  assert_non_null(strstr(err.msg, "gpu.sms"));
  /* the machine a model sees carries the GPU */
  cm_machine m;
  a = gpu_ceilings();
  cm_machine_from_ceilings(&m, &a);
  assert_memory_equal(&m.gpu, &a.gpu, sizeof a.gpu);
}

/* ---- Models per target ---- */

static void test_find_on(void **state) {
  (void)state;
  assert_ptr_equal(cm_kmodel_find("gemm"), &cm_gemm);
  assert_ptr_equal(cm_kmodel_find_on("cpu", "gemm"), &cm_gemm);
  assert_ptr_equal(cm_kmodel_find_on(NULL, "reduction"), &cm_reduction);
  assert_ptr_equal(cm_kmodel_find_on("gpu", "gemm"), &cm_gpu_gemm);
  assert_ptr_equal(cm_kmodel_find_on("gpu", "reduction"), &cm_gpu_reduction);
  assert_ptr_equal(cm_kmodel_find_on("gpu", "transpose"), &cm_gpu_transpose);
  assert_ptr_equal(cm_kmodel_find_on("gpu", "stencil"), &cm_gpu_stencil);
  assert_null(cm_kmodel_find_on("gpu", "conv2d"));
  assert_null(cm_kmodel_find_on("opencl", "gemm"));
  /* every model's table: generic rows, then exponents, then its own */
  for (int i = 0; cm_kmodels[i]; i++) {
    const cm_kmodel *k = cm_kmodels[i];
    assert_true(k->ncoef >= CM_NGENERIC + k->neff && k->ncoef <= CM_MAXCOEF);
    assert_string_equal(k->coefs[CM_C_FIXED].name, "fixed_s");
    for (int j = 0; j < k->ncoef; j++) assert_true(k->coefs[j].value > 0);
  }
}

/* Added models: found after the table, "*" on every family, gone when
** unregistered; at most CM_MAXADDED. */
static int no_work(const kn_problem *pb, const sp_space *sp, const int *cfg, const cm_machine *m,
                   const cm_coefs *c, cm_work *w, rt_err *err) {
  (void)pb, (void)sp, (void)cfg, (void)m, (void)c, (void)w, (void)err;
  return 0;
}

static void test_registered_models(void **state) {
  (void)state;
  static cm_kmodel any[CM_MAXADDED + 1];
  for (int i = 0; i <= CM_MAXADDED; i++)
    any[i] = (cm_kmodel){.kernel = "mine", .family = "*", .ncoef = CM_STATED_NCOEF,
                         .coefs = cm_stated_coefs, .work = no_work};
  cm_kmodel gemm_too = any[0];
  gemm_too.kernel = "gemm";
  assert_null(cm_kmodel_find_on("gpu", "mine"));
  assert_int_equal(cm_kmodel_register(&any[0]), 0);
  assert_ptr_equal(cm_kmodel_find_on("gpu", "mine"), &any[0]);
  assert_ptr_equal(cm_kmodel_find_on("wg-roofline", "mine"), &any[0]);
  assert_ptr_equal(cm_kmodel_find_on(NULL, "mine"), &any[0]);
  /* the table comes first: a registered "gemm" does not shadow it */
  assert_int_equal(cm_kmodel_register(&gemm_too), 0);
  assert_ptr_equal(cm_kmodel_find_on("gpu", "gemm"), &cm_gpu_gemm);
  cm_kmodel_unregister(&gemm_too);
  assert_int_equal(cm_kmodel_register(&any[0]), 0);   /* again: the same slot */
  for (int i = 1; i < CM_MAXADDED; i++) assert_int_equal(cm_kmodel_register(&any[i]), 0);
  assert_int_equal(cm_kmodel_register(&any[CM_MAXADDED]), -1);
  for (int i = 0; i < CM_MAXADDED; i++) cm_kmodel_unregister(&any[i]);
  assert_null(cm_kmodel_find_on("gpu", "mine"));
}

/* Stated work: blocks over the units in rounds, worked out by hand. */
static void test_stated_work(void **state) {
  (void)state;
  cm_ceilings ce = gpu_ceilings();
  cm_machine m;
  cm_machine_from_ceilings(&m, &ce);
  assert_int_equal(m.units, ce.threads);
  m.units = 132;
  cm_work w = {0};
  cm_stated_work(2e9, 4e8, 264, &m, &w);   /* two full rounds */
  assert_true(w.flops == 2e9 && w.bytes[CM_DRAM - CM_L1] == 4e8);
  assert_int_equal(w.threads, 132);
  assert_true(fabs(w.imbalance - 1) < 1e-12 && w.launches == 1 && w.trips == 264);
  cm_stated_work(1, 1, 133, &m, &w);        /* one block in the second round */
  assert_true(fabs(w.imbalance - 2 * 132.0 / 133) < 1e-12);
  cm_stated_work(0, 0, 10, &m, &w);         /* fewer blocks than SMs */
  assert_int_equal(w.threads, 10);
  assert_true(w.imbalance == 1);
  /* the roofline of that work: 264 blocks, memory-bound at these numbers */
  cm_kmodel k = {.kernel = "mine", .family = "*", .ncoef = CM_STATED_NCOEF, .coefs = cm_stated_coefs};
  cm_coefs c;
  cm_coefs_default(&k, &c);
  cm_stated_work(1e6, 4e9, 264, &m, &w);
  cm_pred p;
  cm_time(&k, &w, &ce, &c, &p);
  assert_int_equal(p.bound, CM_DRAM);
}

/* ---- Calibration recovers the coefficients that made the data ---- */

static void test_calibration_recovers(void **state) {
  (void)state;
  int iss = 0;   /* exp_issue, by name */
  while (iss < cm_gpu_gemm.ncoef && strcmp(cm_gpu_gemm.coefs[iss].name, "exp_issue")) iss++;
  assert_true(iss < cm_gpu_gemm.ncoef);
  sp_space *sp = load_space("tests/data/cuda_gemm_space.json", "M=1024,N=1024,K=1024");
  kn_problem pb;
  kn_problem_from_space(&pb, sp);
  cm_ceilings ce = gpu_ceilings();
  cm_coefs truth, start;
  cm_coefs_default(&cm_gpu_gemm, &truth);
  start = truth;
  truth.v[CM_C_COMPUTE] = 0.6, truth.v[CM_C_OVERLAP] = 2.0, truth.v[CM_C_FIXED] = 7e-6;
  truth.v[iss] = 0.6;
  int np = sp_nparams(sp), n = 160;
  int *cfgs = malloc((size_t)n * np * sizeof *cfgs);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 17);
  rt_err err = {0};
  assert_int_equal(sp_sample(sp, rng, n, 1, cfgs, &err), 0);
  cm_sample *s = malloc((size_t)n * sizeof *s);
  for (int i = 0; i < n; i++) {
    cm_pred p;
    assert_int_equal(cm_predict(&cm_gpu_gemm, &pb, sp, cfgs + (size_t)i * np, &ce, &truth, 1, &p, &err), 0);
    double noise = exp(gsl_ran_gaussian(rng, 0.02));
    if (i % 20 == 3) noise *= 3;
    s[i] = (cm_sample){&pb, sp, cfgs + (size_t)i * np, p.time * noise};
  }
  /* the model's own coefficients kept (as the tuner's quick refits) */
  int fixed[CM_MAXCOEF] = {0};
  for (int j = 0; j < cm_gpu_gemm.ncoef; j++)
    fixed[j] = cm_gpu_gemm.coefs[j].hold || j >= CM_C_EFF0 + cm_gpu_gemm.neff;
  cm_coefs fit = start;
  cm_fit_result res;
  assert_int_equal(cm_calibrate(&cm_gpu_gemm, s, n, &ce, 1, &fit, fixed, &res, &err), 0);
  printf("gpu calibration: rms %.4f -> %.4f, %d outliers; compute %.3f (0.6) overlap %.3f (2.0) "
         "fixed %.3g (7e-6) exp_issue %.3f (0.6)\n", res.rms_before, res.rms_after,
         res.n_outliers, fit.v[CM_C_COMPUTE], fit.v[CM_C_OVERLAP], fit.v[CM_C_FIXED],
         fit.v[iss]);
  assert_true(res.rms_after < res.rms_before);
  double worst = 0;
  for (int i = 0; i < n; i++) {
    cm_pred a, b;
    cm_predict(&cm_gpu_gemm, &pb, sp, s[i].cfg, &ce, &truth, 1, &a, &err);
    cm_predict(&cm_gpu_gemm, &pb, sp, s[i].cfg, &ce, &fit, 1, &b, &err);
    worst = fmax(worst, fabs(log(b.time / a.time)));
  }
  printf("gpu calibration: worst |log(fit / truth)| %.4f\n", worst);
  assert_true(worst < 0.05);
  assert_true(fabs(fit.v[CM_C_COMPUTE] / 0.6 - 1) < 0.10);
  assert_true(fabs(fit.v[iss] / 0.6 - 1) < 0.15);
  free(s), free(cfgs);
  gsl_rng_free(rng);
  sp_free(sp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_occupancy),
    cmocka_unit_test(test_waves),
    cmocka_unit_test(test_hiding),
    cmocka_unit_test(test_sectors),
    cmocka_unit_test(test_gemm_flops_walk),
    cmocka_unit_test(test_gemm_dram),
    cmocka_unit_test(test_time_bounds),
    cmocka_unit_test(test_ceilings_json),
    cmocka_unit_test(test_find_on),
    cmocka_unit_test(test_registered_models),
    cmocka_unit_test(test_stated_work),
    cmocka_unit_test(test_calibration_recovers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
