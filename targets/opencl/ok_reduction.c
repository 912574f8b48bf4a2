/*
** ok_reduction.c -- the OpenCL "reduction": out[0] = x[0] + ... + x[N-1]
** in fp32, the host's problem (targets/host/hk_reduction.c), whose
** buffers, reference, flop and byte counts and tolerance it reuses. A
** schedule (targets/opencl/reduction.json), the CUDA template's
** parameters in OpenCL's words:
**   wg     work-items per work-group (a power of two);
**   vec    width of each load: vloadN of 1, 2, 4, 8 or 16 floats;
**   ilp    independent loads per work-item per iteration, each with its
**          own fp32 accumulator (ilp * vec elements per iteration);
**   waves  work-groups per compute unit: waves * cus groups walk the
**          array group-stride;
**   block  'tree': a local-memory tree over the work-group (log2 wg
**          barriers); 'serial': work-item 0 adds the local array in order;
**   order  'strided': in each step the group's items read consecutive
**          vectors (a GPU's coalesced access; work-group-stride chunks of
**          wg*ilp vectors); 'blocked': each item sums its own contiguous
**          run of N / (vec * groups * wg) vectors, ilp at a time (a CPU's
**          access: a CPU device runs one item's loop after another's).
** Each group writes its sum to the workspace; a second launch (one group
** of wg items) adds the partials into out. Whole chunks (strided) or runs
** (blocked) are read unguarded; the vectors after them and the N % vec
** scalars after the last vector are added by guarded code emitted only
** when N leaves them. The rounding bound of the host (one sequential chain)
** holds: every chain here is shorter and the rest is a tree or a sequence
** of partials.
*/
#include <stdlib.h>
#include <string.h>

#include "../host/hk.h"
#include "oc.h"

/* The sum of the lanes [lo, lo+n) of v as a balanced tree of additions. */
static void lanes(rt_str *s, int lo, int n) {
  if (n == 1) {
    rt_str_printf(s, "v.s%x", lo);
    return;
  }
  rt_str_printf(s, "(");
  lanes(s, lo, n / 2);
  rt_str_printf(s, " + ");
  lanes(s, lo + n / 2, n / 2);
  rt_str_printf(s, ")");
}

/* The in-group sum of every item's `s` into `s` of item 0 (local sm[WG]). */
static void group_sum(rt_str *s, int tree) {
  if (tree)
    rt_str_printf(s,
      "  sm[l] = s;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  for (int o = WG / 2; o > 0; o >>= 1) {\n"
      "    if (l < o) sm[l] += sm[l + o];\n"
      "    barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  }\n"
      "  s = sm[0];\n");
  else
    rt_str_printf(s,
      "  sm[l] = s;\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  if (l == 0) {\n"
      "    s = 0.0f;\n"
      "    for (int i = 0; i < WG; i++) s += sm[i];\n"
      "  }\n");
}

static char *red_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  long long n = kn_int(pb, "N");
  int wg = (int)kn_param_int(sp, cfg, "wg"), vec = (int)kn_param_int(sp, cfg, "vec");
  int ilp = (int)kn_param_int(sp, cfg, "ilp");
  int tree = !strcmp(kn_param_str(sp, cfg, "block"), "tree");
  int blocked = !strcmp(kn_param_str(sp, cfg, "order"), "blocked");
  long long groups = kn_param_int(sp, cfg, "waves") * kn_int(pb, "cus");
  if (groups < 1) groups = 1;
  long long nv = n / vec, chunk = (long long)wg * ilp, full = nv / chunk;
  rt_str s = {0}, sum = {0};
  if (vec == 1) rt_str_printf(&sum, "v");
  else lanes(&sum, 0, vec);
  rt_str_printf(&s,
    "//@oc workspace %lld\n"
    "//@oc launch reduce %lld 1 1 %d 1 1 b0 ws\n"
    "//@oc launch combine %d 1 1 %d 1 1 ws b1\n"
    "// reduction N=%lld: wg %d, vec %d, ilp %d, groups %lld, group sum %s, order %s\n"
    "#define N %lldL\n#define WG %d\n#define ILP %d\n#define GROUPS %lldL\n"
    "#define NV (N / %d)          /* whole vectors */\n"
    "#define CHUNK ((long)WG * ILP) /* vectors per group per iteration */\n"
    "#define FULL (NV / CHUNK)     /* whole chunks */\n"
    "#define LOAD(i) %s\n"
    "__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))\n"
    "void reduce(__global const float *restrict x, __global float *restrict ws) {\n"
    "  __local float sm[WG];\n"
    "  const int l = get_local_id(0);\n"
    "  const long g = get_group_id(0);\n"
    "  float acc[ILP];\n"
    "  for (int j = 0; j < ILP; j++) acc[j] = 0.0f;\n",
    4 * groups, groups * wg, wg, wg, wg, n, wg, vec, ilp, groups, tree ? "tree" : "serial",
    blocked ? "blocked" : "strided", n, wg,
    ilp, groups, vec, vec == 1 ? "x[i]" : vec == 2 ? "vload2(i, x)" : vec == 4 ? "vload4(i, x)"
                      : vec == 8 ? "vload8(i, x)" : "vload16(i, x)");
  const char *vt = vec == 1 ? "float" : vec == 2 ? "float2" : vec == 4 ? "float4"
                 : vec == 8 ? "float8" : "float16";
  if (blocked) {
    /* each work-item its own contiguous run of PER vectors, ILP at a time */
    long long per = nv / (groups * wg);
    rt_str_printf(&s, "#define PER %lldL   /* vectors per work-item */\n", per);
    if (per >= ilp)
      rt_str_printf(&s,
        "  const long start = (g * WG + l) * PER;\n"
        "  for (long k = 0; k < PER / ILP * ILP; k += ILP) {\n"
        "    #pragma unroll\n"
        "    for (int j = 0; j < ILP; j++) { const %s v = LOAD(start + k + j); acc[j] += %s; }\n"
        "  }\n", vt, sum.s);
    if (per % ilp)
      rt_str_printf(&s,
        "  for (long k = PER / ILP * ILP; k < PER; k++) {\n"
        "    const %s v = LOAD((g * WG + l) * PER + k);\n    acc[0] += %s;\n  }\n", vt, sum.s);
    if (nv % (groups * wg))
      rt_str_printf(&s,
        "  for (long i = GROUPS * WG * PER + g * WG + l; i < NV; i += GROUPS * WG) {\n"
        "    const %s v = LOAD(i);\n    acc[0] += %s;\n  }\n", vt, sum.s);
  } else {
    if (full > 0)
      rt_str_printf(&s,
        "  for (long c = g; c < FULL; c += GROUPS) {   /* group-stride */\n"
        "    const long base = c * CHUNK + l;\n"
        "    #pragma unroll\n"
        "    for (int j = 0; j < ILP; j++) { const %s v = LOAD(base + j * WG); acc[j] += %s; }\n"
        "  }\n", vt, sum.s);
    if (nv % chunk)
      rt_str_printf(&s,
        "  for (long i = FULL * CHUNK + g * WG + l; i < NV; i += GROUPS * WG) {\n"
        "    const %s v = LOAD(i);\n    acc[0] += %s;\n  }\n", vt, sum.s);
  }
  if (n % vec)
    rt_str_printf(&s, "  if (g == GROUPS - 1 && l < N - NV * %d) acc[0] += x[NV * %d + l];\n",
                  vec, vec);
  rt_str_printf(&s, "  float s = 0.0f;\n  for (int j = 0; j < ILP; j++) s += acc[j];\n");
  group_sum(&s, tree);
  rt_str_printf(&s,
    "  if (l == 0) ws[g] = s;\n}\n"
    "__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))\n"
    "void combine(__global const float *restrict ws, __global float *restrict out) {\n"
    "  __local float sm[WG];\n"
    "  const int l = get_local_id(0);\n"
    "  float s = 0.0f;\n"
    "  for (long i = l; i < GROUPS; i += WG) s += ws[i];\n");
  group_sum(&s, tree);
  rt_str_printf(&s, "  if (l == 0) out[0] = s;\n}\n");
  free(sum.s);
  return s.s;
}

static int red_buffers(const kn_problem *pb, kn_buf *b) { return hk_reduction.buffers(pb, b); }
static void red_reference(const kn_problem *pb, float *const *bufs) {
  hk_reduction.reference(pb, bufs);
}
static double red_flops(const kn_problem *pb) { return hk_reduction.flops(pb); }
static double red_min_bytes(const kn_problem *pb) { return hk_reduction.min_bytes(pb); }
static double red_tolerance(const kn_problem *pb) { return hk_reduction.tolerance(pb); }

const kn_kernel ok_reduction = {
  .name = "reduction",
  .summary = "sum of N floats in OpenCL C: work-group size, vector loads, ILP, groups per "
             "compute unit, local-memory tree or serial group sum, two launches",
  .space = "targets/opencl/reduction.json",
  .dtype = "f32",
  .sizes = "N",
  .buffers = red_buffers,
  .codegen = red_codegen,
  .reference = red_reference,
  .flops = red_flops,
  .min_bytes = red_min_bytes,
  .tolerance = red_tolerance,
  .baseline = NULL,
  .device_reference = NULL,
};
