/*
** gk_gemm.c -- the CUDA gemm kernel template: C = A*B in float32,
** row-major, A M x K, B K x N, C M x N (the host gemm's buffers and
** reference), computed with FFMA on CUDA cores only. The code generator
** turns a schedule of targets/cuda/gemm.json into CUDA C++ for NVRTC in
** the gk.h ABI, in the style of CUTLASS's SIMT gemm / siboehm's SGEMM
** kernel 10.
**
** Parameters (targets/cuda/gemm.json):
**   BM, BN, BK   block tile: a block computes a BM x BN tile of C, walking
**                K in steps of BK through shared memory.
**   WM, WN       warp tile: the block's (BM/WM) x (BN/WN) warps each own a
**                WM x WN sub-tile; threads per block = (BM/WM)*(BN/WN)*32.
**   TM, TN       thread tile: each thread accumulates TM x TN outputs in
**                registers. The warp's lanes form WTM x WTN = (WM/TM) x
**                (WN/TN) = 32 (lane = ty*WTN + tx); a thread's TM rows are
**                TM/SM sub-tiles of SM = min(TM, 4) consecutive rows, the
**                sub-tiles WTM*SM rows apart (columns likewise with SN), so
**                each k step reads a thread's A and B fragments from shared
**                memory as float4 (float2 for a tile of 2) and the lanes
**                of a quarter-warp read one contiguous run: conflict-free.
**   VEC          global load width in floats (1, 2, 4): A is loaded as
**                VEC consecutive k of one row, B as VEC consecutive n of
**                one k. When K (for A) or N (for B) is not a multiple of
**                VEC the thread still takes VEC consecutive elements but
**                loads them one by one (a vector load would be misaligned).
**   STAGES       1: one shared buffer, two __syncthreads per BK step;
**                2: two buffers with register-staged prefetch (CUTLASS
**                SIMT): the global loads of step t+1 are issued into
**                registers before the FFMAs of step t and stored to the
**                other buffer after them; one __syncthreads per step.
**   UNROLL       #pragma unroll of the k loop inside BK (UNROLL == BK: the
**                whole loop; the thread-tile loops are always unrolled).
**   SPLITK       K split over gridDim.z in whole BK steps; SPLITK > 1 zeroes
**                C first (`//@rk zero b2`) and each split atomicAdds its
**                partial sums into C (no workspace, one launch; the sum
**                order, hence the last bits, varies from run to run).
**   GROUP_M      the binding of tiles to blockIdx.x: 1 is a row raster
**                (tile_n fastest); G > 1 walks groups of G tile rows column
**                by column (Triton's grouped ordering) for L2 reuse.
** Shared memory (dynamic, extern __shared__): As[STAGES][BK][BM + 4]
** holds A transposed (k-major; the pad of 4 keeps float4 alignment and
** spreads the transposing scalar stores over banks), Bs[STAGES][BK][BN]
** holds B as it is. The plan is one line, `//@rk launch gemm GX 1 SPLITK
** THREADS 1 1 SMEM b0 b1 b2` with GX = tiles of C, preceded by `//@rk zero
** b2` when SPLITK > 1.
**
** Edges: the generator knows M, N, K and emits guards only where they can
** fail: rows of A and C when M % BM != 0, columns of B and C when N % BN
** != 0, k of A and B when K % BK != 0 (out-of-range elements load as 0).
** C is stored as float4/float2 when the thread sub-tile and N allow it.
**
** The default (BM=BN=128, BK=8, WM=32, WN=64, TM=TN=8, VEC=4, STAGES=2,
** UNROLL=8, SPLITK=1, GROUP_M=1) is CUTLASS's SIMT 128x128x8 tile: 256
** threads, warps 4 x 2, lanes 4 x 8, each thread 2 x 2 sub-tiles of 4 x 4;
** per BK step one float4 of A and one of B per thread from global memory,
** then 8 k steps of 2+2 LDS.128 and 64 FFMA, one __syncthreads; 16.6 KB of
** shared memory; 124 registers and no spills (NVRTC 13, sm_90), so two
** blocks (16 warps) fit an SM.
*/
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

#include "../host/hk.h"
#include "gk.h"

/* The schedule of one configuration, its derived quantities, and the sizes
** it is generated for. */
typedef struct gg {
  long m, n, k;
  int bm, bn, bk, wm, wn, tm, tn, vec, stages, unroll, splitk, group_m;
  int threads, wtm, wtn, sm, sn;   /* lanes WTM x WTN; sub-tile rows/cols */
  int la, lb;                      /* global vectors per thread: A, B */
  long tiles_m, tiles_n, kt, tps;  /* tiles of C; BK steps; per split */
  int smem;                        /* bytes of dynamic shared memory */
} gg;

static int gemm_buffers(const kn_problem *pb, kn_buf *b) {
  return hk_gemm.buffers(pb, b);
}

static void gemm_reference(const kn_problem *pb, float *const *bufs) {
  hk_gemm.reference(pb, bufs);
}

static double gemm_flops(const kn_problem *pb) {
  return 2.0 * kn_int(pb, "M") * kn_int(pb, "N") * kn_int(pb, "K");
}

/* A and B read once, C written once (the device never reads C unless
** split-K, whose extra traffic is the schedule's, not the problem's). */
static double gemm_min_bytes(const kn_problem *pb) {
  double m = kn_int(pb, "M"), n = kn_int(pb, "N"), k = kn_int(pb, "K");
  return 4.0 * (m * k + k * n + m * n);
}

/* As the host's (hk_gemm.c): 2*K*FLT_EPSILON relative to max|C|. */
static double gemm_tolerance(const kn_problem *pb) {
  return 2.0 * (double)kn_int(pb, "K") * FLT_EPSILON;
}

static const char *const comp[4] = {"x", "y", "z", "w"};

/* The CUDA type of a vector of w floats (1, 2, 4), and its zero. */
static const char *vtype(int w) {
  return w == 4 ? "float4" : w == 2 ? "float2" : "float";
}
static const char *vzero(int w) {
  return w == 4 ? "make_float4(0.f, 0.f, 0.f, 0.f)"
         : w == 2 ? "make_float2(0.f, 0.f)" : "0.f";
}

/* c1 && c2 into buf, either may be NULL; "" when both are. */
static const char *both(char *buf, size_t cap, const char *c1, const char *c2) {
  snprintf(buf, cap, "%s%s%s", c1 ? c1 : "", c1 && c2 ? " && " : "", c2 ? c2 : "");
  return buf;
}

/* Emit the loads of one operand's BK step into the staging registers
** reg[] (LA or LB of them). Vector idx of the thread covers row r =
** idx / (W/VEC) and columns c .. c+VEC-1 of a tile row of W floats; the
** element (r, c+j) is at off + j. rguard/cguard: the conditions (with %d
** for j) that row and column are in range, NULL when they cannot fail;
** aligned: vectors may be loaded whole (the row length is a multiple of
** VEC, so a vector is either wholly in range or wholly out). */
static void gen_load_op(rt_str *s, const gg *g, const char *reg, const char *cnt,
                        const char *w, const char *ptr, const char *offexpr,
                        const char *rguard, const char *cguard, int aligned) {
  char c0[96], buf[256];
  rt_str_printf(s,
      "    #pragma unroll\n"
      "    for (int i = 0; i < %s; ++i) {\n"
      "      const int idx = tid + i * THREADS;\n"
      "      const int r = idx / (%s / VEC), c = idx %% (%s / VEC) * VEC;\n"
      "      const ix off = %s;\n", cnt, w, w, offexpr);
  if (aligned || g->vec == 1) {
    if (cguard) snprintf(c0, sizeof c0, cguard, 0);
    both(buf, sizeof buf, rguard, cguard ? c0 : NULL);
    if (*buf)
      rt_str_printf(s, "      if (%s) %s[i] = *reinterpret_cast<const %s *>(%s + off);\n"
                    "      else %s[i] = %s;\n", buf, reg, vtype(g->vec), ptr, reg,
                    vzero(g->vec));
    else
      rt_str_printf(s, "      %s[i] = *reinterpret_cast<const %s *>(%s + off);\n",
                    reg, vtype(g->vec), ptr);
  } else {
    for (int j = 0; j < g->vec; j++) {
      snprintf(c0, sizeof c0, cguard, j);
      rt_str_printf(s, "      %s[i].%s = %s ? %s[off + %d] : 0.f;\n", reg, comp[j],
                    both(buf, sizeof buf, rguard, c0), ptr, j);
    }
  }
  rt_str_printf(s, "    }\n");
}

/* Emit the global loads of the BK step starting at k offset k0 (an
** expression) into ra[] (A: row r, VEC consecutive k) and rb[] (B: k r,
** VEC consecutive n); out-of-range elements load as 0. */
static void gen_load(rt_str *s, const gg *g, const char *k0) {
  int grow = g->m % g->bm != 0, gcol = g->n % g->bn != 0, gk = g->k % g->bk != 0;
  char off[128], kc[96], kr[96];
  snprintf(off, sizeof off, "(ix)(m0 + r) * K + %s + c", k0);
  snprintf(kc, sizeof kc, "%s + c + %%d < K", k0);
  snprintf(kr, sizeof kr, "%s + r < K", k0);
  gen_load_op(s, g, "ra", "LA", "BK", "A", off, grow ? "m0 + r < M" : NULL,
              gk ? kc : NULL, g->k % g->vec == 0);
  snprintf(off, sizeof off, "(ix)(%s + r) * N + n0 + c", k0);
  gen_load_op(s, g, "rb", "LB", "BN", "B", off, gk ? kr : NULL,
              gcol ? "n0 + c + %d < N" : NULL, g->n % g->vec == 0);
}

/* Emit the stores of the staging registers into shared buffer buf (an
** expression): A transposed (As[k][m], scalar stores), B as it is. */
static void gen_store(rt_str *s, const gg *g, const char *buf) {
  rt_str_printf(s,
      "    {\n"
      "      float *as = As + (%s) * (BK * LDA), *bs = Bs + (%s) * (BK * BN);\n"
      "      #pragma unroll\n"
      "      for (int i = 0; i < LA; ++i) {\n"
      "        const int idx = tid + i * THREADS;\n"
      "        const int r = idx / (BK / VEC), c = idx %% (BK / VEC) * VEC;\n",
      buf, buf);
  if (g->vec == 1)
    rt_str_printf(s, "        as[c * LDA + r] = ra[i];\n");
  else
    for (int j = 0; j < g->vec; j++)
      rt_str_printf(s, "        as[(c + %d) * LDA + r] = ra[i].%s;\n", j, comp[j]);
  rt_str_printf(s,
      "      }\n"
      "      #pragma unroll\n"
      "      for (int i = 0; i < LB; ++i) {\n"
      "        const int idx = tid + i * THREADS;\n"
      "        const int r = idx / (BN / VEC), c = idx %% (BN / VEC) * VEC;\n"
      "        *reinterpret_cast<%s *>(bs + r * BN + c) = rb[i];\n"
      "      }\n"
      "    }\n", vtype(g->vec));
}

/* Emit the FFMAs of one BK step on shared buffer buf: per k, the thread's
** A fragment (TM/SM vectors of SM) and B fragment (TN/SN vectors of SN),
** then the TM x TN outer product. */
static void gen_compute(rt_str *s, const gg *g, const char *buf) {
  rt_str_printf(s,
      "    {\n"
      "      const float *as = As + (%s) * (BK * LDA) + a_off;\n"
      "      const float *bs = Bs + (%s) * (BK * BN) + b_off;\n", buf, buf);
  if (g->unroll >= g->bk)
    rt_str_printf(s, "      #pragma unroll\n");
  else
    rt_str_printf(s, "      #pragma unroll %d\n", g->unroll);
  rt_str_printf(s,
      "      for (int k = 0; k < BK; ++k) {\n"
      "        float a[TM], b[TN];\n");
  const char *op[2] = {"a", "b"}, *src[2] = {"as + k * LDA", "bs + k * BN"};
  const char *tile[2] = {"TM", "TN"}, *sub[2] = {"SM", "SN"}, *step[2] = {"WTM", "WTN"};
  int w[2] = {g->sm, g->sn};
  for (int o = 0; o < 2; o++) {
    rt_str_printf(s,
        "        #pragma unroll\n"
        "        for (int u = 0; u < %s / %s; ++u) {\n"
        "          const %s v = *reinterpret_cast<const %s *>(%s + u * (%s * %s));\n",
        tile[o], sub[o], vtype(w[o]), vtype(w[o]), src[o], step[o], sub[o]);
    for (int j = 0; j < w[o]; j++)
      rt_str_printf(s, "          %s[u * %s + %d] = v.%s;\n", op[o], sub[o], j, comp[j]);
    rt_str_printf(s, "        }\n");
  }
  rt_str_printf(s,
      "        #pragma unroll\n"
      "        for (int i = 0; i < TM; ++i)\n"
      "          #pragma unroll\n"
      "          for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);\n"
      "      }\n"
      "    }\n");
}

/* Emit the store of the accumulators into C: vectors of SN when N allows
** (SPLITK == 1), else element by element (atomicAdd when SPLITK > 1). */
static void gen_epilogue(rt_str *s, const gg *g) {
  int grow = g->m % g->bm != 0, gcol = g->n % g->bn != 0;
  rt_str_printf(s,
      "  #pragma unroll\n"
      "  for (int u = 0; u < TM / SM; ++u)\n"
      "    #pragma unroll\n"
      "    for (int i = 0; i < SM; ++i) {\n"
      "      const int row = m0 + wm0 + u * (WTM * SM) + ty * SM + i;\n");
  if (grow) rt_str_printf(s, "      if (row >= M) continue;\n");
  rt_str_printf(s,
      "      #pragma unroll\n"
      "      for (int v = 0; v < TN / SN; ++v) {\n"
      "        const int col = n0 + wn0 + v * (WTN * SN) + tx * SN;\n"
      "        float *c = C + (ix)row * N + col;\n");
  if (g->splitk == 1 && g->n % g->sn == 0) {
    rt_str_printf(s, "        %s*reinterpret_cast<%s *>(c) = ", gcol ? "if (col < N) " : "",
                  vtype(g->sn));
    if (g->sn == 4)
      rt_str_printf(s, "make_float4(acc[u * SM + i][v * SN], acc[u * SM + i][v * SN + 1], "
                    "acc[u * SM + i][v * SN + 2], acc[u * SM + i][v * SN + 3]);\n");
    else
      rt_str_printf(s, "make_float2(acc[u * SM + i][v * SN], acc[u * SM + i][v * SN + 1]);\n");
  } else {
    for (int j = 0; j < g->sn; j++) {
      if (gcol) rt_str_printf(s, "        if (col + %d < N) ", j);
      else rt_str_printf(s, "        ");
      if (g->splitk > 1)
        rt_str_printf(s, "atomicAdd(c + %d, acc[u * SM + i][v * SN + %d]);\n", j, j);
      else
        rt_str_printf(s, "c[%d] = acc[u * SM + i][v * SN + %d];\n", j, j);
    }
  }
  rt_str_printf(s, "      }\n    }\n");
}

/* The schedule of configuration cfg for problem pb, with derived values. */
static gg gemm_sched(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  gg g = {
    .m = kn_int(pb, "M"), .n = kn_int(pb, "N"), .k = kn_int(pb, "K"),
    .bm = (int)kn_param_int(sp, cfg, "BM"), .bn = (int)kn_param_int(sp, cfg, "BN"),
    .bk = (int)kn_param_int(sp, cfg, "BK"), .wm = (int)kn_param_int(sp, cfg, "WM"),
    .wn = (int)kn_param_int(sp, cfg, "WN"), .tm = (int)kn_param_int(sp, cfg, "TM"),
    .tn = (int)kn_param_int(sp, cfg, "TN"), .vec = (int)kn_param_int(sp, cfg, "VEC"),
    .stages = (int)kn_param_int(sp, cfg, "STAGES"),
    .unroll = (int)kn_param_int(sp, cfg, "UNROLL"),
    .splitk = (int)kn_param_int(sp, cfg, "SPLITK"),
    .group_m = (int)kn_param_int(sp, cfg, "GROUP_M"),
  };
  g.threads = (g.bm / g.wm) * (g.bn / g.wn) * 32;
  g.wtm = g.wm / g.tm, g.wtn = g.wn / g.tn;
  g.sm = g.tm < 4 ? g.tm : 4, g.sn = g.tn < 4 ? g.tn : 4;
  g.la = g.bm * g.bk / g.vec / g.threads, g.lb = g.bk * g.bn / g.vec / g.threads;
  g.tiles_m = (g.m + g.bm - 1) / g.bm, g.tiles_n = (g.n + g.bn - 1) / g.bn;
  g.kt = (g.k + g.bk - 1) / g.bk;
  g.tps = (g.kt + g.splitk - 1) / g.splitk;
  g.smem = g.stages * g.bk * (g.bm + 4 + g.bn) * 4;
  return g;
}

/* 1 when every index the kernel forms (with a tile's overhang) fits an int. */
static int fits_int(const gg *g) {
  double lim = 2147483647.0, m = g->m + 256, n = g->n + 256, k = g->k + 64;
  return m * k < lim && k * n < lim && m * n < lim;
}

static char *gemm_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  gg g = gemm_sched(pb, sp, cfg);
  rt_str s = {0};
  rt_str_printf(&s,
      "// rooftune gemm M=%ld N=%ld K=%ld: BM=%d BN=%d BK=%d WM=%d WN=%d TM=%d TN=%d "
      "VEC=%d STAGES=%d UNROLL=%d SPLITK=%d GROUP_M=%d\n",
      g.m, g.n, g.k, g.bm, g.bn, g.bk, g.wm, g.wn, g.tm, g.tn, g.vec, g.stages,
      g.unroll, g.splitk, g.group_m);
  if (g.splitk > 1) rt_str_printf(&s, "//@rk zero b2\n");
  rt_str_printf(&s, "//@rk launch gemm %ld 1 %d %d 1 1 %d b0 b1 b2\n\n",
                g.tiles_m * g.tiles_n, g.splitk, g.threads, g.smem);
  rt_str_printf(&s,
      "[[maybe_unused]] constexpr int M = %ld, N = %ld, K = %ld;\n"
      "[[maybe_unused]] constexpr int BM = %d, BN = %d, BK = %d, WM = %d, WN = %d, TM = %d, TN = %d, "
      "VEC = %d;\n"
      "[[maybe_unused]] constexpr int THREADS = %d, WTM = %d, WTN = %d, SM = %d, SN = %d, LDA = BM + 4;\n"
      "[[maybe_unused]] constexpr int LA = %d, LB = %d;            // staged vectors per thread\n"
      "[[maybe_unused]] constexpr int TILES_M = %ld, TILES_N = %ld, KT = %ld, TPS = %ld, GROUP_M = %d;\n"
      "typedef %s ix;\n\n",
      g.m, g.n, g.k, g.bm, g.bn, g.bk, g.wm, g.wn, g.tm, g.tn, g.vec, g.threads, g.wtm,
      g.wtn, g.sm, g.sn, g.la, g.lb, g.tiles_m, g.tiles_n, g.kt, g.tps, g.group_m,
      fits_int(&g) ? "int" : "long long");
  rt_str_printf(&s,
      "extern \"C\" __global__ void __launch_bounds__(THREADS)\n"
      "gemm(const float *__restrict__ A, const float *__restrict__ B, "
      "float *__restrict__ C) {\n"
      "  extern __shared__ __align__(16) float smem[];\n"
      "  float *As = smem;                          // [%d][BK][LDA], A transposed\n"
      "  float *Bs = smem + %d * BK * LDA;          // [%d][BK][BN]\n"
      "  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;\n",
      g.stages, g.stages, g.stages);
  if (g.group_m == 1)
    rt_str_printf(&s,
        "  const int tile_m = blockIdx.x / TILES_N, tile_n = blockIdx.x %% TILES_N;\n");
  else
    rt_str_printf(&s,
        "  // grouped raster: GROUP_M tile rows at a time, column by column\n"
        "  const int pid = blockIdx.x, width = GROUP_M * TILES_N;\n"
        "  const int first = pid / width * GROUP_M;\n"
        "  const int gsz = TILES_M - first < GROUP_M ? TILES_M - first : GROUP_M;\n"
        "  const int tile_m = first + pid %% width %% gsz, tile_n = pid %% width / gsz;\n");
  rt_str_printf(&s,
      "  const int m0 = tile_m * BM, n0 = tile_n * BN;\n"
      "  const int wm0 = warp / (BN / WN) * WM, wn0 = warp %% (BN / WN) * WN;\n"
      "  const int ty = lane / WTN, tx = lane %% WTN;\n"
      "  const int a_off = wm0 + ty * SM, b_off = wn0 + tx * SN;\n");
  if (g.splitk > 1)
    rt_str_printf(&s,
        "  const int kt0 = blockIdx.z * TPS;\n"
        "  const int nt = KT - kt0 < TPS ? KT - kt0 : TPS;\n"
        "  if (nt <= 0) return;\n");
  else
    rt_str_printf(&s, "  constexpr int kt0 = 0, nt = KT;\n");
  rt_str_printf(&s,
      "  float acc[TM][TN];\n"
      "  #pragma unroll\n"
      "  for (int i = 0; i < TM; ++i)\n"
      "    #pragma unroll\n"
      "    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;\n"
      "  %s ra[LA];\n  %s rb[LB];\n", vtype(g.vec), vtype(g.vec));
  if (g.stages == 2) {
    rt_str_printf(&s, "  {\n");
    gen_load(&s, &g, "kt0 * BK");
    gen_store(&s, &g, "0");
    rt_str_printf(&s,
        "  }\n"
        "  __syncthreads();\n"
        "  for (int t = 0; t < nt; ++t) {\n"
        "    const int cur = t & 1;\n"
        "    const bool more = t + 1 < nt;\n"
        "    if (more) {\n");
    gen_load(&s, &g, "(kt0 + t + 1) * BK");
    rt_str_printf(&s, "    }\n");
    gen_compute(&s, &g, "cur");
    rt_str_printf(&s, "    if (more)\n");
    gen_store(&s, &g, "cur ^ 1");
    rt_str_printf(&s, "    __syncthreads();\n  }\n");
  } else {
    rt_str_printf(&s, "  for (int t = 0; t < nt; ++t) {\n");
    gen_load(&s, &g, "(kt0 + t) * BK");
    gen_store(&s, &g, "0");
    rt_str_printf(&s, "    __syncthreads();\n");
    gen_compute(&s, &g, "0");
    rt_str_printf(&s, "    __syncthreads();\n  }\n");
  }
  gen_epilogue(&s, &g);
  rt_str_printf(&s, "}\n");
  return s.s;
}

/* One thread per element of C, a plain dot product in double. */
static char *gemm_device_reference(const kn_problem *pb) {
  long m = kn_int(pb, "M"), n = kn_int(pb, "N"), k = kn_int(pb, "K");
  long blocks = (m * n + 255) / 256;
  rt_str s = {0};
  rt_str_printf(&s,
      "// rooftune gemm device reference M=%ld N=%ld K=%ld\n"
      "//@rk launch gemm_ref %ld 1 1 256 1 1 0 b0 b1 b2\n\n"
      "[[maybe_unused]] constexpr long long M = %ld, N = %ld, K = %ld;\n\n"
      "extern \"C\" __global__ void gemm_ref(const float *__restrict__ A, "
      "const float *__restrict__ B, float *__restrict__ C) {\n"
      "  const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (e >= M * N) return;\n"
      "  const long long i = e / N, j = e %% N;\n"
      "  double sum = 0.0;\n"
      "  for (long long p = 0; p < K; ++p) sum += (double)A[i * K + p] * (double)B[p * N + j];\n"
      "  C[e] = (float)sum;\n"
      "}\n", m, n, k, blocks, m, n, k);
  return s.s;
}

/* cuBLAS SGEMM without tensor cores (gd.h gd_cublas_sgemm). */
static char *gemm_baseline(const kn_problem *pb, const char **ldflags) {
  rt_str s = {0};
  *ldflags = NULL;
  rt_str_printf(&s, "//@rk library cublas_sgemm %ld %ld %ld\n", (long)kn_int(pb, "M"),
                (long)kn_int(pb, "N"), (long)kn_int(pb, "K"));
  return s.s;
}

const kn_kernel gk_gemm = {
  .name = "gemm",
  .summary = "C = A*B, float32 row-major, FFMA; block, warp and thread tiles, "
             "double buffering, split-K",
  .space = "targets/cuda/gemm.json",
  .dtype = "f32",
  .sizes = "M N K",
  .buffers = gemm_buffers,
  .codegen = gemm_codegen,
  .reference = gemm_reference,
  .flops = gemm_flops,
  .min_bytes = gemm_min_bytes,
  .tolerance = gemm_tolerance,
  .baseline = gemm_baseline,
  .device_reference = gemm_device_reference,
};
