/*
** hk_transpose.c -- "transpose": out[N][M] = in[M][N], row-major fp32, the
** purely memory-bound kernel (no flops; one side is always strided). A
** schedule walks TI x TJ cache tiles, inside them B x B blocks (constant
** bounds, fully unrolled by the compiler; edge blocks use min() bounds),
** with one loop order 'ij' (read rows) or 'ji' (write rows) at every level,
** optional nontemporal stores (movnti; each thread fences its own), and threads
** over the outer tile loop or both tile loops (collapse). The result is
** an exact copy: tolerance 0.
*/
#include <string.h>

#include "hk.h"

static int tr_buffers(const kn_problem *pb, kn_buf *b) {
  int64_t n = kn_size_mul(kn_int(pb, "M"), kn_int(pb, "N"));
  b[0] = (kn_buf){.name = "in", .n = n, .out = 0};
  b[1] = (kn_buf){.name = "out", .n = n, .out = 1};
  return 2;
}

/* Two nested loops over (i, j) in the schedule's order; lim_i/lim_j are
** the bounds' text. */
static void loops2(rt_str *s, int ij, const char *ind, const char *lim_i,
                   const char *lim_j) {
  const char *v[2] = {"i", "j"}, *lim[2] = {lim_i, lim_j};
  for (int d = 0; d < 2; d++) {
    int x = ij ? d : 1 - d;
    rt_str_printf(s, "%s%*sfor (long %s = 0; %s < %s; %s++)\n", ind, 2 * d, "",
                  v[x], v[x], lim[x], v[x]);
  }
}

static char *tr_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  int ij = !strcmp(kn_param_str(sp, cfg, "order"), "ij");
  int nt = (int)kn_param_int(sp, cfg, "nt");
  int collapse = !strcmp(kn_param_str(sp, cfg, "parallel"), "collapse");
  rt_str s = {0};
  rt_str_printf(&s,
    "#include <immintrin.h>\n#include <string.h>\n"
    "#define M %lldL\n#define N %lldL\n#define TI %lldL\n#define TJ %lldL\n#define B %lld\n"
    "#define MIN(a, b) ((a) < (b) ? (a) : (b))\n",
    (long long)kn_int(pb, "M"), (long long)kn_int(pb, "N"),
    (long long)kn_param_int(sp, cfg, "ti"), (long long)kn_param_int(sp, cfg, "tj"),
    (long long)kn_param_int(sp, cfg, "block"));
  if (nt)
    rt_str_printf(&s, "static inline void put(float *p, float v) {\n"
                  "  int b;\n  memcpy(&b, &v, sizeof b);\n  _mm_stream_si32((int *)p, b);\n}\n");
  else
    rt_str_printf(&s, "static inline void put(float *p, float v) { *p = v; }\n");
  /* The block body: constant bounds (full blocks) and runtime ones (edges). */
  const char *blk[2][3] = {{"blk_full", "B", "B"}, {"blk_edge", "ni", "nj"}};
  for (int e = 0; e < 2; e++) {
    rt_str_printf(&s, "static inline void %s(const float *restrict in, float *restrict out, "
                  "long i0, long j0%s) {\n", blk[e][0], e ? ", long ni, long nj" : "");
    loops2(&s, ij, "  ", blk[e][1], blk[e][2]);
    rt_str_printf(&s, "      put(&out[(j0 + j) * M + i0 + i], in[(i0 + i) * N + j0 + j]);\n}\n");
  }
  rt_str_printf(&s,
    "int rk_run(float *const *bufs) {\n"
    "  const float *restrict in = bufs[0];\n  float *restrict out = bufs[1];\n"
    "#pragma omp parallel num_threads(%lld)\n  {\n#pragma omp for schedule(static)%s\n",
    (long long)kn_param_int(sp, cfg, "threads"), collapse ? " collapse(2)" : "");
  /* tile loops over tile indices (collapse needs rectangular loops) */
  const char *tv[2] = {"ti", "tj"}, *tl[2] = {"(M + TI - 1) / TI", "(N + TJ - 1) / TJ"};
  for (int d = 0; d < 2; d++) {
    int x = ij ? d : 1 - d;
    rt_str_printf(&s, "  %*sfor (long %s = 0; %s < %s; %s++)\n", 2 * d, "", tv[x], tv[x],
                  tl[x], tv[x]);
  }
  rt_str_printf(&s,
    "    {\n      long i0 = ti * TI, j0 = tj * TJ;\n"
    "      long ie = MIN(i0 + TI, M), je = MIN(j0 + TJ, N);\n");
  const char *bv[2] = {"bi", "bj"}, *bs[2] = {"i0", "j0"}, *be[2] = {"ie", "je"};
  for (int d = 0; d < 2; d++) {
    int x = ij ? d : 1 - d;
    rt_str_printf(&s, "      %*sfor (long %s = %s; %s < %s; %s += B)\n", 2 * d, "", bv[x],
                  bs[x], bv[x], be[x], bv[x]);
  }
  rt_str_printf(&s,
    "          if (bi + B <= ie && bj + B <= je) blk_full(in, out, bi, bj);\n"
    "          else blk_edge(in, out, bi, bj, MIN(B, ie - bi), MIN(B, je - bj));\n"
    "    }\n%s  }\n  return 0;\n}\n", nt ? "  _mm_sfence();   /* each thread orders its own stores */\n" : "");
  return s.s;
}

static void tr_reference(const kn_problem *pb, float *const *bufs) {
  int64_t m = kn_int(pb, "M"), n = kn_int(pb, "N");
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) bufs[1][j * m + i] = bufs[0][i * n + j];
}

static double tr_flops(const kn_problem *pb) {
  (void)pb;
  return 0;
}

/* Read in once, write out once (write-allocate traffic not counted). */
static double tr_min_bytes(const kn_problem *pb) {
  return 8.0 * (double)kn_int(pb, "M") * (double)kn_int(pb, "N");
}

static double tr_tolerance(const kn_problem *pb) {
  (void)pb;
  return 0;
}

const kn_kernel hk_transpose = {
  .name = "transpose",
  .summary = "out[N][M] = in[M][N] (memory-bound, strided): cache tiles, inner "
             "block, loop order, nontemporal stores, threads",
  .space = "targets/host/transpose.json",
  .dtype = "f32",
  .sizes = "M N",
  .buffers = tr_buffers,
  .codegen = tr_codegen,
  .reference = tr_reference,
  .flops = tr_flops,
  .min_bytes = tr_min_bytes,
  .tolerance = tr_tolerance,
  .baseline = NULL,
};
