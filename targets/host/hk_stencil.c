/*
** hk_stencil.c -- "stencil": STEPS Jacobi steps of the 2D 5-point stencil
**   u'[x][y] = C0*u[x][y] + C1*((u[x-1][y] + u[x+1][y]) + (u[x][y-1] + u[x][y+1]))
** with C0 = 1/2, C1 = 1/8, over an NX x NY interior. Both buffers are the
** full (NX+2) x (NY+2) grid, row-major (x rows, y contiguous); the ring of
** boundary cells is fixed. `grid` (input) holds the initial state and is
** never written; `out` receives the state after STEPS steps, boundary
** included. Bandwidth-bound for one step, compute-bound-ish with temporal
** blocking.
**
** Schedule: TX x TY tiles of the interior; time blocks of TB steps. TB = 1
** sweeps tiles from a source to a destination grid. TB > 1 is overlapped
** (ghost-zone) temporal blocking: each tile copies its region grown by TB
** cells into two private buffers, runs the block's steps there on a region
** that shrinks by one cell per step (redundant halo work), and writes its
** centre to the destination. Time blocks ping-pong between `out` and a
** static scratch grid, arranged so that the last block writes `out`.
** Threads split the tile-row loop ('rows') or both tile loops ('tiles').
**
** Flops: 6 per interior point per step (2 mul, 4 add), redundant halo
** work not counted. Tolerance: C0, C1 are powers of two, so every product
** is exact and the schedules evaluate the reference's expression in the
** same order: results are bitwise equal unless a compiler re-rounds. The
** weights are non-negative with sum 1, so errors do not grow: STEPS
** roundings of at most FLT_EPSILON/2 * max|u| each; max|ref| >= the
** boundary's maximum. tolerance = 2*STEPS*FLT_EPSILON.
*/
#include <float.h>
#include <string.h>

#include "hk.h"

#define C0 0.5f
#define C1 0.125f

static int64_t grid_size(const kn_problem *pb) {
  return kn_size_mul(kn_size_add(kn_int(pb, "NX"), 2), kn_size_add(kn_int(pb, "NY"), 2));
}

static int st_buffers(const kn_problem *pb, kn_buf *b) {
  b[0] = (kn_buf){.name = "grid", .n = grid_size(pb), .out = 0};
  b[1] = (kn_buf){.name = "out", .n = grid_size(pb), .out = 1};
  return 2;
}

/* One step at point (x, y), s -> d: the same expression, in the same
** order, as sweep_ref below. */
#define SWEEP_BODY \
  "d[x * ld + y] = C0 * s[x * ld + y] + C1 * ((s[(x - 1) * ld + y] + " \
  "s[(x + 1) * ld + y]) + (s[x * ld + y - 1] + s[x * ld + y + 1]));"

static char *st_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  int64_t tb = kn_param_int(sp, cfg, "tb");
  int tiles = !strcmp(kn_param_str(sp, cfg, "parallel"), "tiles");
  rt_str s = {0};
  rt_str_printf(&s,
    "#include <stdlib.h>\n#include <string.h>\n"
    "#define NX %lldL\n#define NY %lldL\n#define STEPS %lldL\n"
    "#define TX %lldL\n#define TY %lldL\n#define TB %lldL\n"
    "#define LD (NY + 2)\n#define LY (TY + 2 * TB)\n#define LX (TX + 2 * TB)\n"
    "#define C0 %.9gf\n#define C1 %.9gf\n"
    "#define MIN(a, b) ((a) < (b) ? (a) : (b))\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
    "static float scratch[(NX + 2) * (NY + 2)];\n"
    "static inline void sweep(const float *restrict s, float *restrict d, long ld,\n"
    "                         long x0, long x1, long y0, long y1) {\n"
    "  for (long x = x0; x < x1; x++)\n#pragma omp simd\n"
    "    for (long y = y0; y < y1; y++)\n      " SWEEP_BODY "\n}\n",
    (long long)kn_int(pb, "NX"), (long long)kn_int(pb, "NY"),
    (long long)kn_int(pb, "STEPS"), (long long)kn_param_int(sp, cfg, "tx"),
    (long long)kn_param_int(sp, cfg, "ty"), (long long)tb, (double)C0, (double)C1);
  if (tb > 1)
    rt_str_printf(&s,
      "/* nt steps of interior tile [x0,x1) x [y0,y1) from src into dst, in the\n"
      "   private buffers a, b holding the tile grown by nt cells */\n"
      "static void tile_steps(const float *restrict src, float *restrict dst, float *a,\n"
      "                       float *b, long x0, long x1, long y0, long y1, long nt) {\n"
      "  long ax = MAX(0, x0 - nt), bx = MIN(NX + 2, x1 + nt);\n"
      "  long ay = MAX(0, y0 - nt), by = MIN(NY + 2, y1 + nt);\n"
      "  for (long x = ax; x < bx; x++) {\n"
      "    memcpy(a + (x - ax) * LY, src + x * LD + ay, (size_t)(by - ay) * sizeof *a);\n"
      "    memcpy(b + (x - ax) * LY, src + x * LD + ay, (size_t)(by - ay) * sizeof *b);\n"
      "  }\n"
      "  for (long k = 1; k <= nt; k++) {\n"
      "    long g = nt - k;   /* cells beyond the tile still needed after this step */\n"
      "    sweep(a, b, LY, MAX(1, x0 - g) - ax, MIN(NX + 1, x1 + g) - ax,\n"
      "          MAX(1, y0 - g) - ay, MIN(NY + 1, y1 + g) - ay);\n"
      "    float *t = a; a = b; b = t;\n"
      "  }\n"
      "  for (long x = x0; x < x1; x++)\n"
      "    memcpy(dst + x * LD + y0, a + (x - ax) * LY + (y0 - ay), (size_t)(y1 - y0) * sizeof *a);\n"
      "}\n");
  rt_str_printf(&s,
    "int rk_run(float *const *bufs) {\n"
    "  const float *in = bufs[0];\n  float *out = bufs[1];\n"
    "  for (long x = 0; x < NX + 2; x++)   /* the fixed boundary, in both grids */\n"
    "    for (long y = 0; y < NY + 2; y += (x == 0 || x == NX + 1) ? 1 : NY + 1)\n"
    "      out[x * LD + y] = scratch[x * LD + y] = in[x * LD + y];\n"
    "  const long nb = (STEPS + TB - 1) / TB;   /* block b writes out iff nb-1-b is even */\n"
    "#pragma omp parallel num_threads(%lld)\n  {\n",
    (long long)kn_param_int(sp, cfg, "threads"));
  if (tb > 1)
    rt_str_printf(&s, "    float *a = malloc(LX * LY * sizeof *a), *b = malloc(LX * LY * sizeof *b);\n");
  rt_str_printf(&s,
    "    for (long blk = 0; blk < nb; blk++) {\n"
    "      const float *src = blk == 0 ? in : (nb - blk) %% 2 == 0 ? out : scratch;\n"
    "      float *dst = (nb - 1 - blk) %% 2 == 0 ? out : scratch;\n"
    "      long nt = MIN(TB, STEPS - blk * TB);\n"
    "#pragma omp for schedule(static)%s\n"
    "      for (long tx = 0; tx < (NX + TX - 1) / TX; tx++)\n"
    "        for (long ty = 0; ty < (NY + TY - 1) / TY; ty++) {\n"
    "          long x0 = 1 + tx * TX, y0 = 1 + ty * TY;\n"
    "          long x1 = MIN(x0 + TX, NX + 1), y1 = MIN(y0 + TY, NY + 1);\n",
    tiles ? " collapse(2)" : "");
  if (tb > 1)
    rt_str_printf(&s, "          tile_steps(src, dst, a, b, x0, x1, y0, y1, nt);\n");
  else
    rt_str_printf(&s, "          (void)nt;\n          sweep(src, dst, LD, x0, x1, y0, y1);\n");
  rt_str_printf(&s, "        }\n    }\n%s  }\n  return 0;\n}\n",
                tb > 1 ? "    free(a);\n    free(b);\n" : "");
  return s.s;
}

static void sweep_ref(const float *s, float *d, int64_t nx, int64_t ny) {
  int64_t ld = ny + 2;
  for (int64_t x = 1; x <= nx; x++)
    for (int64_t y = 1; y <= ny; y++) d[x * ld + y] = C0 * s[x * ld + y] +
        C1 * ((s[(x - 1) * ld + y] + s[(x + 1) * ld + y]) +
              (s[x * ld + y - 1] + s[x * ld + y + 1]));
}

static void st_reference(const kn_problem *pb, float *const *bufs) {
  int64_t nx = kn_int(pb, "NX"), ny = kn_int(pb, "NY"), n = grid_size(pb);
  float *t = rt_malloc((size_t)n * sizeof *t);
  memcpy(t, bufs[0], (size_t)n * sizeof *t);
  memcpy(bufs[1], bufs[0], (size_t)n * sizeof *t);
  for (int64_t k = 0; k < kn_int(pb, "STEPS"); k++) {
    sweep_ref(t, bufs[1], nx, ny);
    memcpy(t, bufs[1], (size_t)n * sizeof *t);
  }
  free(t);
}

static double st_flops(const kn_problem *pb) {
  return 6.0 * (double)kn_int(pb, "NX") * (double)kn_int(pb, "NY") *
         (double)kn_int(pb, "STEPS");
}

/* Read the grid once, write it once. */
static double st_min_bytes(const kn_problem *pb) { return 8.0 * (double)grid_size(pb); }

static double st_tolerance(const kn_problem *pb) {
  return 2.0 * (double)kn_int(pb, "STEPS") * FLT_EPSILON;
}

const kn_kernel hk_stencil = {
  .name = "stencil",
  .summary = "2D 5-point Jacobi, STEPS steps, fixed boundary: tiles, temporal "
             "blocking depth, threads",
  .space = "targets/host/stencil.json",
  .dtype = "f32",
  .sizes = "NX NY",
  .buffers = st_buffers,
  .codegen = st_codegen,
  .reference = st_reference,
  .flops = st_flops,
  .min_bytes = st_min_bytes,
  .tolerance = st_tolerance,
  .baseline = NULL,
};
