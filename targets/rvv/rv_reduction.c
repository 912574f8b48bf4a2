/*
** rv_reduction.c -- the rvv reduction template: s = x[0] + ... + x[N-1]
** in fp32 (the host reduction's problem, buffers, double-precision host
** reference, counts and tolerance: targets/host/hk_reduction.c, whose
** comment derives the tolerance, FLT_EPSILON * max(4, 32 sqrt(N)) relative
** to |s|, for inputs uniform in [-1, 1]). The generator writes RVV 1.0 C
** intrinsics, vector-length agnostic: accs accumulators of type
** vfloat32m<lmul>_t, zeroed over the whole register group; the vl
** strategy "vlmax" adds vsetvlmax-wide vectors to each accumulator in turn
** while accs of them fit, then the tail a vsetvl at a time into the first;
** "strip" asks vsetvl before every vector (N - i left), its adds
** tail-undisturbed (_tu) so that the lanes past a short vl keep their
** partial sums. At the end the accumulators are added and reduced once
** (vfredusum: unordered, as the tolerance allows).
*/
#include <string.h>

#include "rv.h"
#include "../host/hk.h"

static char *red_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  int L = (int)kn_param_int(sp, cfg, "lmul"), A = (int)kn_param_int(sp, cfg, "accs");
  int vlmax = !strcmp(kn_param_str(sp, cfg, "vl_strategy"), "vlmax");
  rt_str s = {0};
  rt_str_printf(&s,
      "/* rooftune rvv reduction: lmul %d, accs %d, vl strategy %s */\n"
      "#include <riscv_vector.h>\n#include <stddef.h>\n#define N %lldL\n"
      "int rk_run(float *const *bufs) {\n  const float *x = bufs[0];\n"
      "  size_t vlmax = __riscv_vsetvlmax_e32m%d();\n  long i = 0;\n",
      L, A, vlmax ? "vlmax" : "strip", (long long)kn_int(pb, "N"), L);
  for (int a = 0; a < A; a++)
    rt_str_printf(&s, "  vfloat32m%d_t a%d = __riscv_vfmv_v_f_f32m%d(0.0f, vlmax);\n", L, a, L);
  if (vlmax) {
    rt_str_printf(&s, "  for (; i + %d * (long)vlmax <= N; i += %d * (long)vlmax) {\n", A, A);
    for (int a = 0; a < A; a++)
      rt_str_printf(&s, "    a%d = __riscv_vfadd_vv_f32m%d(a%d, __riscv_vle32_v_f32m%d(x + i + %d * "
                    "(long)vlmax, vlmax), vlmax);\n", a, L, a, L, a);
    rt_str_printf(&s, "  }\n  while (i < N) {\n"
                  "    size_t vl = __riscv_vsetvl_e32m%d((size_t)(N - i));\n"
                  "    a0 = __riscv_vfadd_vv_f32m%d_tu(a0, a0, __riscv_vle32_v_f32m%d(x + i, vl), vl);\n"
                  "    i += (long)vl;\n  }\n", L, L, L);
  } else {
    rt_str_printf(&s, "  while (i < N) {\n    size_t vl;\n");
    for (int a = 0; a < A; a++)
      rt_str_printf(&s, "    vl = __riscv_vsetvl_e32m%d((size_t)(i < N ? N - i : 0));\n"
                    "    a%d = __riscv_vfadd_vv_f32m%d_tu(a%d, a%d, __riscv_vle32_v_f32m%d(x + i, vl), vl);\n"
                    "    i += (long)vl;\n", L, a, L, a, a, L);
    rt_str_printf(&s, "  }\n");
  }
  for (int a = 1; a < A; a++)
    rt_str_printf(&s, "  a0 = __riscv_vfadd_vv_f32m%d(a0, a%d, vlmax);\n", L, a);
  rt_str_printf(&s,
      "  vfloat32m1_t z = __riscv_vfmv_s_f_f32m1(0.0f, 1);\n"
      "  bufs[1][0] = __riscv_vfmv_f_s_f32m1_f32(__riscv_vfredusum_vs_f32m%d_f32m1(a0, z, vlmax));\n"
      "  return 0;\n}\n", L);
  return s.s;
}

/* The host template's problem: its buffers, reference, counts, tolerance. */
KN_SAME_PROBLEM(red, hk_reduction)

const kn_kernel rv_reduction = {
  .name = "reduction",
  .summary = "sum of N floats, RVV 1.0 intrinsics: LMUL, accumulators, vl strategy",
  .space = "targets/rvv/reduction.json",
  .dtype = "f32",
  .sizes = "N",
  .buffers = red_buffers,
  .codegen = red_codegen,
  .reference = red_reference,
  .flops = red_flops,
  .min_bytes = red_min_bytes,
  .tolerance = red_tolerance,
  .baseline = NULL,
};
