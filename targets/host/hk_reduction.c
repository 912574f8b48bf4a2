/*
** hk_reduction.c -- "reduction": s = x[0] + ... + x[N-1] in fp32, the
** memory-bound kernel with a loop-carried dependence. A schedule sums a
** range with ACC independent accumulators of VEC lanes each (GCC vector
** types; VEC = 1 is scalar), the main loop unrolled UNROLL times; the range
** is split across threads either contiguously (chunk = 0) or in chunks of
** CHUNK elements dealt out statically, the per-thread sums combined by an
** OpenMP reduction.
**
** Tolerance. No bound from N alone can hold for every input: the contract
** measures error relative to |ref|, and a sum of values in [-1,1] can
** cancel to ~0. The bound is therefore statistical, for inputs drawn
** uniformly from [-1,1] (the harness fill): the reference sums in double,
** a fp32 schedule's rounding error is a random walk over its partial sums,
** and |err|/|ref| scales as FLT_EPSILON*sqrt(N). Measured for the worst
** order in the space (one scalar accumulator) over 300 fills per size,
** N = 7..10^7: median 0.1-0.16, p99 <= 5.1, max 21 units of
** FLT_EPSILON*sqrt(N). tolerance = 32*FLT_EPSILON*sqrt(N) (plus 4 ulps for
** tiny N) admits those with margin while rejecting a missing element of
** magnitude >= 0.5 for N up to ~10^5 (|ref| ~ sqrt(N/3)) and a relative
** 1e-2 error for N up to ~7*10^6. Beyond ~10^7 terms fp32 summation itself
** is that inaccurate: no tolerance separates reorderings from a lost term.
*/
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "hk.h"

static int red_buffers(const kn_problem *pb, kn_buf *b) {
  b[0] = (kn_buf){.name = "x", .n = kn_int(pb, "N"), .out = 0};
  b[1] = (kn_buf){.name = "sum", .n = 1, .out = 1};
  return 2;
}

static char *red_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  int64_t vec = kn_param_int(sp, cfg, "vec"), chunk = kn_param_int(sp, cfg, "chunk");
  rt_str s = {0};
  rt_str_printf(&s,
    "#include <omp.h>\n#include <string.h>\n"
    "#define N %lldL\n#define VEC %lld\n#define ACC %lld\n#define STEP (VEC * ACC)\n",
    (long long)kn_int(pb, "N"), (long long)vec,
    (long long)kn_param_int(sp, cfg, "accs"));
  if (vec == 1)
    rt_str_printf(&s, "typedef float vf;\n");
  else
    rt_str_printf(&s, "typedef float vf __attribute__((vector_size(VEC * 4)));\n");
  rt_str_printf(&s,
    "static float sum_range(const float *restrict x, long lo, long hi) {\n"
    "  vf acc[ACC];\n  memset(acc, 0, sizeof acc);\n  long i = lo;\n"
    "#pragma GCC unroll %lld\n"
    "  for (; i + STEP <= hi; i += STEP)\n"
    "    for (int a = 0; a < ACC; a++) {\n"
    "      vf v;\n      memcpy(&v, x + i + a * VEC, sizeof v);\n      acc[a] += v;\n    }\n"
    "  for (int a = 1; a < ACC; a++) acc[0] += acc[a];\n"
    "  float s = 0, lanes[VEC];\n  memcpy(lanes, &acc[0], sizeof lanes);\n"
    "  for (int l = 0; l < VEC; l++) s += lanes[l];\n"
    "  for (; i < hi; i++) s += x[i];\n  return s;\n}\n"
    "int rk_run(float *const *bufs) {\n  const float *x = bufs[0];\n  float s = 0;\n",
    (long long)kn_param_int(sp, cfg, "unroll"));
  int64_t threads = kn_param_int(sp, cfg, "threads");
  if (chunk == 0)
    rt_str_printf(&s,
      "#pragma omp parallel num_threads(%lld) reduction(+ : s)\n  {\n"
      "    long nt = omp_get_num_threads(), t = omp_get_thread_num();\n"
      "    long per = (N + nt - 1) / nt, lo = t * per, hi = lo + per < N ? lo + per : N;\n"
      "    if (lo < hi) s += sum_range(x, lo, hi);\n  }\n", (long long)threads);
  else
    rt_str_printf(&s,
      "#pragma omp parallel for num_threads(%lld) schedule(static) reduction(+ : s)\n"
      "  for (long c = 0; c < N; c += %lld)\n"
      "    s += sum_range(x, c, c + %lld < N ? c + %lld : N);\n",
      (long long)threads, (long long)chunk, (long long)chunk, (long long)chunk);
  rt_str_printf(&s, "  bufs[1][0] = s;\n  return 0;\n}\n");
  return s.s;
}

static void red_reference(const kn_problem *pb, float *const *bufs) {
  double s = 0;
  for (int64_t i = 0; i < kn_int(pb, "N"); i++) s += bufs[0][i];
  bufs[1][0] = (float)s;
}

/* N-1 additions: the algorithm's count, whatever the schedule adds. */
static double red_flops(const kn_problem *pb) { return (double)kn_int(pb, "N") - 1; }

/* Read x once, write the sum. */
static double red_min_bytes(const kn_problem *pb) {
  return 4.0 * ((double)kn_int(pb, "N") + 1);
}

static double red_tolerance(const kn_problem *pb) {
  return FLT_EPSILON * fmax(4.0, 32.0 * sqrt((double)kn_int(pb, "N")));
}

const kn_kernel hk_reduction = {
  .name = "reduction",
  .summary = "sum of N floats (memory-bound, loop-carried): vector width, "
             "accumulators, unroll, chunking, threads",
  .space = "targets/host/reduction.json",
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
