/*
** rv_gemm.c -- the rvv gemm template: C = A*B in float32, row-major, A
** M x K, B K x N (the host gemm's problem, buffers, reference, counts and
** tolerance: targets/host/hk_gemm.c, so its outputs are checked against
** the host's C reference on the same inputs). The generator writes RVV 1.0
** C intrinsics (clang-16's __riscv_ API, rv.h) that are vector-length
** agnostic: the columns of C are walked in strips of vl elements, vl what
** the hardware gives at LMUL lmul (__riscv_vsetvl_e32m<lmul>), so one
** artefact is correct at any VLEN. Per strip, rows go in register tiles of
** mr accumulators (vfloat32m<lmul>_t: mr * lmul vector registers, plus
** lmul for a row of B), each k step loading one vector of B and doing mr
** vfmacc.vf with broadcast elements of A; k runs in blocks of kc (the
** first block starts the accumulators at zero, the others reload C),
** unrolled unroll_k times, the leftover steps one by one; the last M % mr
** rows use one-row tiles. The vl strategy: "strip" asks vsetvl for every
** strip (N - j elements left); "vlmax" takes vsetvlmax-wide strips while a
** whole one fits and asks vsetvl once for the tail.
*/
#include <stdlib.h>
#include <string.h>

#include "rv.h"
#include "../host/hk.h"

/* One tile function tile<rows>: C[i..i+rows) x [j, j+vl) over k in [k0, k1). */
static void gen_tile(rt_str *s, const rv_gemm_sched *g, int rows) {
  int L = g->lmul, U = g->unroll_k;
  rt_str_printf(s,
      "static inline __attribute__((always_inline)) void tile%d(const float *restrict A, "
      "const float *restrict B, float *restrict C, long i, long j, long k0, long k1, size_t vl) {\n",
      rows);
  for (int r = 0; r < rows; r++)
    rt_str_printf(s, "  vfloat32m%d_t c%d = k0 == 0 ? __riscv_vfmv_v_f_f32m%d(0.0f, vl)"
                  " : __riscv_vle32_v_f32m%d(C + (i + %d) * N + j, vl);\n", L, r, L, L, r);
  rt_str_printf(s, "  long k = k0;\n  for (; k + %d <= k1; k += %d) {\n", U, U);
  for (int u = 0; u < U; u++) {
    rt_str_printf(s, "    vfloat32m%d_t b%d = __riscv_vle32_v_f32m%d(B + (k + %d) * N + j, vl);\n",
                  L, u, L, u);
    for (int r = 0; r < rows; r++)
      rt_str_printf(s, "    c%d = __riscv_vfmacc_vf_f32m%d(c%d, A[(i + %d) * K + k + %d], b%d, vl);\n",
                    r, L, r, r, u, u);
  }
  rt_str_printf(s, "  }\n  for (; k < k1; k++) {\n"
                "    vfloat32m%d_t b = __riscv_vle32_v_f32m%d(B + k * N + j, vl);\n", L, L);
  for (int r = 0; r < rows; r++)
    rt_str_printf(s, "    c%d = __riscv_vfmacc_vf_f32m%d(c%d, A[(i + %d) * K + k], b, vl);\n", r, L,
                  r, r);
  rt_str_printf(s, "  }\n");
  for (int r = 0; r < rows; r++)
    rt_str_printf(s, "  __riscv_vse32_v_f32m%d(C + (i + %d) * N + j, c%d, vl);\n", L, r, r);
  rt_str_printf(s, "}\n");
}

char *rv_gemm_source(const rv_gemm_sched *g) {
  rt_str s = {0};
  int L = g->lmul;
  rt_str_printf(&s,
      "/* rooftune rvv gemm: lmul %d, mr %d, unroll_k %d, kc %d, vl strategy %s%s */\n"
      "#include <riscv_vector.h>\n#include <stddef.h>\n"
      "#define M %ldL\n#define N %ldL\n#define K %ldL\n#define KC %dL\n#define MR %d\n",
      L, g->mr, g->unroll_k, g->kc, g->vlmax ? "vlmax" : "strip",
      g->bug ? " (TEST-ONLY: wrong on purpose)" : "", g->m, g->n, g->k, g->kc, g->mr);
  gen_tile(&s, g, g->mr);
  if (g->mr > 1) gen_tile(&s, g, 1);
  rt_str_printf(&s,
      "static void strip(const float *A, const float *B, float *C, long j, long k0, long k1, "
      "size_t vl) {\n  long i = 0;\n"
      "  for (; i + MR <= M; i += MR) tile%d(A, B, C, i, j, k0, k1, vl);\n"
      "  for (; i < M; i++) tile1(A, B, C, i, j, k0, k1, vl);\n}\n"
      "int rk_run(float *const *bufs) {\n"
      "  const float *A = bufs[0], *B = bufs[1];\n  float *C = bufs[2];\n"
      "  for (long k0 = 0; k0 < K; k0 += KC) {\n"
      "    long k1 = k0 + KC < K ? k0 + KC : K;\n", g->mr);
  if (g->bug) rt_str_printf(&s, "    k1--;   /* the injected bug: the block's last k step lost */\n");
  if (g->vlmax)
    rt_str_printf(&s,
        "    size_t vlmax = __riscv_vsetvlmax_e32m%d();\n    long j = 0;\n"
        "    for (; j + (long)vlmax <= N; j += (long)vlmax) strip(A, B, C, j, k0, k1, vlmax);\n"
        "    if (j < N) strip(A, B, C, j, k0, k1, __riscv_vsetvl_e32m%d((size_t)(N - j)));\n", L, L);
  else
    rt_str_printf(&s,
        "    for (long j = 0; j < N;) {\n"
        "      size_t vl = __riscv_vsetvl_e32m%d((size_t)(N - j));\n"
        "      strip(A, B, C, j, k0, k1, vl);\n      j += (long)vl;\n    }\n", L);
  rt_str_printf(&s, "  }\n  return 0;\n}\n");
  return s.s;
}

static char *gemm_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  rv_gemm_sched g = {
      .m = kn_int(pb, "M"), .n = kn_int(pb, "N"), .k = kn_int(pb, "K"),
      .lmul = (int)kn_param_int(sp, cfg, "lmul"), .mr = (int)kn_param_int(sp, cfg, "mr"),
      .unroll_k = (int)kn_param_int(sp, cfg, "unroll_k"), .kc = (int)kn_param_int(sp, cfg, "kc"),
      .vlmax = !strcmp(kn_param_str(sp, cfg, "vl_strategy"), "vlmax")};
  return rv_gemm_source(&g);
}

/* The host template's problem: its buffers, reference, counts and
** tolerance (hk_gemm's: 2*K*FLT_EPSILON relative to max|C|, any blocked
** order of the K-term dot products; a lost k step is far above it). */
KN_SAME_PROBLEM(gemm, hk_gemm)

const kn_kernel rv_gemm = {
  .name = "gemm",
  .summary = "C = A*B, float32 row-major, RVV 1.0 intrinsics: LMUL, register tile, k unroll "
             "and blocking, vl strategy",
  .space = "targets/rvv/gemm.json",
  .dtype = "f32",
  .sizes = "M N K",
  .buffers = gemm_buffers,
  .codegen = gemm_codegen,
  .reference = gemm_reference,
  .flops = gemm_flops,
  .min_bytes = gemm_min_bytes,
  .tolerance = gemm_tolerance,
  .baseline = NULL,
};
