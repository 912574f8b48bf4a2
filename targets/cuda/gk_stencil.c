/*
** gk_stencil.c -- the CUDA "stencil": STEPS Jacobi steps of the 5-point
** stencil over an NX x NY interior with a fixed boundary, the same buffers
** (grid, out: (NX+2) x (NY+2), x rows, y contiguous), problem and
** semantics as the host's (targets/host/hk_stencil.c), whose reference,
** flop and byte counts and tolerance it reuses: every point is computed
** with the reference's expression in the reference's order, and C0, C1
** are powers of two, so a fused multiply-add rounds the same.
**
** Every launch writes the whole destination grid: interior points get a
** step, boundary points a copy of the source (the fixed boundary), so no
** launch is spent on the boundary. Launches ping-pong between out and a
** workspace grid, arranged so that the last writes out (launch b of nb
** writes out iff nb-1-b is even; the first reads `grid`).
**
** A schedule (targets/cuda/stencil.json):
**   mode  'ldg': each thread reads its points straight from global memory
**         (__ldg): per column of vec points, rx consecutive rows with a
**         three-row window in registers (rx+2 row loads for rx rows) and
**         scalar loads of the left and right neighbours; one step per
**         launch.
**         'smem': a block loads its tile grown by a halo of tb rows (and
**         tb rounded up to vec columns) into shared memory, runs tb steps
**         there on a region shrinking by one cell per step (overlapped
**         temporal blocking: redundant halo work; each thread steps
**         strips of rx rows of one column, consecutive threads taking
**         consecutive columns), ping-ponging two shared buffers, and
**         writes the tile's centre; STEPS % tb steps,
**         if any, run in a last launch of the same code with that depth.
**   by    threads of a block along y (threadIdx.x, contiguous);
**   bx    threads of a block along x (threadIdx.y, rows);
**   vec   points per thread along y, loaded and stored as float/float2/
**         float4 (needs (NY+2) % vec == 0: rows must stay aligned);
**   rx    points per thread along x (register blocking: rows);
**   tb    steps per launch ('smem' only).
** A block's tile is bx*rx rows by by*vec columns of the full grid;
** threads past the grid's edge are guarded only when the tile does not
** divide it.
**
** The device reference: one thread per point, 32 x 8 blocks, one launch
** per step. A plan has at most GK_MAXSTEP steps: for STEPS beyond that the
** reference is one block of 1024 threads running every step with a block
** barrier between them (slow, for small problems only).
*/
#include <string.h>

#include "../host/hk.h"
#include "gk.h"

static int st_buffers(const kn_problem *pb, kn_buf *b) { return hk_stencil.buffers(pb, b); }

static const char *const vtype[5] = {NULL, "float", "float2", NULL, "float4"};
static const char *const comp[5][4] = {
  {0}, {""}, {".x", ".y"}, {0}, {".x", ".y", ".z", ".w"},
};

/* The i-th argument text of launch b of nb: its source and destination. */
static const char *src_arg(int b, int nb) {
  return b == 0 ? "b0" : (nb - b) % 2 == 0 ? "b1" : "ws";
}
static const char *dst_arg(int b, int nb) { return (nb - 1 - b) % 2 == 0 ? "b1" : "ws"; }

static void ldg_kernel(rt_str *s, int vec, int guard_x, int guard_y) {
  rt_str_printf(s,
    "__device__ __forceinline__ vec_t row(const float *__restrict__ s, int x, int y0) {\n"
    "  return __ldg(reinterpret_cast<const vec_t *>(s + (long long)x * LD + y0));\n}\n"
    "extern \"C\" __global__ void __launch_bounds__(BX * BY) stencil(const float *__restrict__ s, "
    "float *__restrict__ d) {\n"
    "  const int y0 = ((int)blockIdx.x * BY + (int)threadIdx.x) * VEC;\n"
    "  const int x0 = ((int)blockIdx.y * BX + (int)threadIdx.y) * RX;\n");
  if (guard_y) rt_str_printf(s, "  if (y0 >= LD) return;\n");
  if (guard_x) rt_str_printf(s, "  if (x0 >= NXG) return;\n");
  rt_str_printf(s,
    "  vec_t up = x0 > 0 ? row(s, x0 - 1, y0) : vzero(), ce = row(s, x0, y0);\n"
    "  #pragma unroll\n"
    "  for (int i = 0; i < RX; i++) {\n"
    "    const int x = x0 + i;\n");
  if (guard_x) rt_str_printf(s, "    if (x >= NXG) break;\n");
  rt_str_printf(s,
    "    const vec_t dn = x + 1 < NXG ? row(s, x + 1, y0) : vzero();\n"
    "    const float *sr = s + (long long)x * LD + y0;\n"
    "    const float l = y0 > 0 ? __ldg(sr - 1) : 0.0f, r = y0 + VEC < LD ? __ldg(sr + VEC) : 0.0f;\n"
    "    const bool xin = x >= 1 && x <= NX;\n"
    "    vec_t o;\n");
  for (int e = 0; e < vec; e++) {
    char left[16], right[16];
    if (e == 0) snprintf(left, sizeof left, "l");
    else snprintf(left, sizeof left, "ce%s", comp[vec][e - 1]);
    if (e == vec - 1) snprintf(right, sizeof right, "r");
    else snprintf(right, sizeof right, "ce%s", comp[vec][e + 1]);
    rt_str_printf(s,
      "    o%s = xin && y0 + %d >= 1 && y0 + %d <= NY ? C0 * ce%s + C1 * ((up%s + dn%s) + "
      "(%s + %s)) : ce%s;\n",
      comp[vec][e], e, e, comp[vec][e], comp[vec][e], comp[vec][e], left, right, comp[vec][e]);
  }
  rt_str_printf(s,
    "    *reinterpret_cast<vec_t *>(d + (long long)x * LD + y0) = o;\n"
    "    up = ce;\n    ce = dn;\n  }\n}\n");
}

static void smem_kernel(rt_str *s, int vec, int tb, int rem) {
  rt_str_printf(s,
    "/* NT steps of this block's tile: load it grown by NT rows and HY columns,\n"
    "   step a region shrinking by one cell per step, write the centre. */\n"
    "template <int NT> __device__ __forceinline__ void tile_steps(const float *__restrict__ s, "
    "float *__restrict__ d) {\n"
    "  extern __shared__ float sm[];\n"
    "  constexpr int HY = (NT + VEC - 1) / VEC * VEC;\n"
    "  constexpr int R = TXB + 2 * NT, W = TYB + 2 * HY;\n"
    "  float *a = sm, *b = sm + R * W;\n"
    "  const int xs = (int)blockIdx.y * TXB - NT, ys = (int)blockIdx.x * TYB - HY;\n"
    "  const int tid = (int)threadIdx.y * BY + (int)threadIdx.x;\n"
    "  for (int q = tid; q < R * (W / VEC); q += BX * BY) {\n"
    "    const int r = q / (W / VEC), c = q %% (W / VEC) * VEC, gx = xs + r, gy = ys + c;\n"
    "    vec_t v = vzero();\n"
    "    if (gx >= 0 && gx < NXG && gy >= 0 && gy < LD)\n"
    "      v = __ldg(reinterpret_cast<const vec_t *>(s + (long long)gx * LD + gy));\n");
  for (int e = 0; e < vec; e++) rt_str_printf(s, "    a[r * W + c + %d] = v%s;\n", e, comp[vec][e]);
  rt_str_printf(s,
    "  }\n"
    "  __syncthreads();\n"
    "  #pragma unroll\n"
    "  for (int k = 1; k <= NT; k++) {   /* region [r0, r1) x [c0, c1): RX-row strips */\n"
    "    const int r0 = k, r1 = R - k, c0 = HY - NT + k, c1 = W - c0;\n"
    "    const int nc = c1 - c0, ns = (r1 - r0 + RX - 1) / RX;\n"
    "    for (int q = tid; q < nc * ns; q += BX * BY) {\n"
    "      const int c = c0 + q %% nc, rb = r0 + q / nc * RX, gy = ys + c;\n"
    "      const bool yin = gy >= 1 && gy <= NY;\n"
    "      float up = a[(rb - 1) * W + c], ce = a[rb * W + c];\n"
    "      #pragma unroll\n"
    "      for (int i = 0; i < RX; i++) {\n"
    "        const int r = rb + i, gx = xs + r;\n"
    "        if (r < r1) {\n"
    "          const float dn = a[(r + 1) * W + c];\n"
    "          b[r * W + c] = yin && gx >= 1 && gx <= NX ? C0 * ce + C1 * ((up + dn) + "
    "(a[r * W + c - 1] + a[r * W + c + 1])) : ce;\n"
    "          up = ce;\n          ce = dn;\n"
    "        }\n"
    "      }\n"
    "    }\n"
    "    __syncthreads();\n"
    "    float *t = a;\n    a = b;\n    b = t;\n"
    "  }\n"
    "  for (int q = tid; q < TXB * (TYB / VEC); q += BX * BY) {\n"
    "    const int r = NT + q / (TYB / VEC), c = HY + q %% (TYB / VEC) * VEC;\n"
    "    const int gx = xs + r, gy = ys + c;\n"
    "    if (gx < NXG && gy < LD) {\n"
    "      vec_t v;\n");
  for (int e = 0; e < vec; e++) rt_str_printf(s, "      v%s = a[r * W + c + %d];\n", comp[vec][e], e);
  rt_str_printf(s,
    "      *reinterpret_cast<vec_t *>(d + (long long)gx * LD + gy) = v;\n"
    "    }\n  }\n}\n"
    "extern \"C\" __global__ void __launch_bounds__(BX * BY) stencil(const float *__restrict__ s, "
    "float *__restrict__ d) {\n  tile_steps<%d>(s, d);\n}\n", tb);
  if (rem)
    rt_str_printf(s,
      "extern \"C\" __global__ void __launch_bounds__(BX * BY) stencil_rem(const float "
      "*__restrict__ s, float *__restrict__ d) {\n  tile_steps<%d>(s, d);\n}\n", rem);
}

/* Dynamic shared memory of the 'smem' kernel running nt steps. */
static int smem_bytes(int txb, int tyb, int vec, int nt) {
  int hy = (nt + vec - 1) / vec * vec;
  return 2 * 4 * (txb + 2 * nt) * (tyb + 2 * hy);
}

static char *st_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  long long nx = kn_int(pb, "NX"), ny = kn_int(pb, "NY"), steps = kn_int(pb, "STEPS");
  int smem = !strcmp(kn_param_str(sp, cfg, "mode"), "smem");
  int by = (int)kn_param_int(sp, cfg, "by"), bx = (int)kn_param_int(sp, cfg, "bx");
  int vec = (int)kn_param_int(sp, cfg, "vec"), rx = (int)kn_param_int(sp, cfg, "rx");
  int tb = smem ? (int)kn_param_int(sp, cfg, "tb") : 1;
  int txb = bx * rx, tyb = by * vec;
  long long nxg = nx + 2, ld = ny + 2;
  long long gx = (ld + tyb - 1) / tyb, gy = (nxg + txb - 1) / txb;
  int nb = (int)((steps + tb - 1) / tb), rem = (int)(steps % tb);
  rt_str s = {0};
  if (nb > 1) rt_str_printf(&s, "//@rk workspace %lld\n", 4 * nxg * ld);
  for (int b = 0; b < nb; b++) {
    int last_rem = smem && rem && b == nb - 1;
    rt_str_printf(&s, "//@rk launch %s %lld %lld 1 %d %d 1 %d %s %s\n",
                  last_rem ? "stencil_rem" : "stencil", gx, gy, by, bx,
                  smem ? smem_bytes(txb, tyb, vec, last_rem ? rem : tb) : 0, src_arg(b, nb),
                  dst_arg(b, nb));
  }
  rt_str_printf(&s,
    "// stencil NX=%lld NY=%lld STEPS=%lld: mode %s, by %d, bx %d, vec %d, rx %d, tb %d\n"
    "#define NX %lld\n#define NY %lld\n#define NXG (NX + 2)\n#define LD (NY + 2)\n"
    "#define BY %d\n#define BX %d\n#define VEC %d\n#define RX %d\n"
    "#define TXB (BX * RX)   /* tile rows */\n#define TYB (BY * VEC)  /* tile columns */\n"
    "#define C0 0.5f\n#define C1 0.125f\n"
    "typedef %s vec_t;\n"
    "__device__ __forceinline__ vec_t vzero() {\n  vec_t v;\n",
    nx, ny, steps, smem ? "smem" : "ldg", by, bx, vec, rx, tb, nx, ny, by, bx, vec, rx,
    vtype[vec]);
  for (int e = 0; e < vec; e++) rt_str_printf(&s, "  v%s = 0.0f;\n", comp[vec][e]);
  rt_str_printf(&s, "  return v;\n}\n");
  if (smem) smem_kernel(&s, vec, tb, rem);
  else ldg_kernel(&s, vec, nxg % txb != 0, ld % tyb != 0);
  return s.s;
}

static char *st_device_reference(const kn_problem *pb) {
  long long nx = kn_int(pb, "NX"), ny = kn_int(pb, "NY"), steps = kn_int(pb, "STEPS");
  long long nxg = nx + 2, ld = ny + 2;
  rt_str s = {0};
  int one_block = steps > GK_MAXSTEP;
  if (steps > 1) rt_str_printf(&s, "//@rk workspace %lld\n", 4 * nxg * ld);
  if (one_block)
    rt_str_printf(&s, "//@rk launch stencil_all 1 1 1 1024 1 1 0 b0 b1 ws\n");
  else
    for (int b = 0; b < steps; b++)
      rt_str_printf(&s, "//@rk launch stencil_ref %lld %lld 1 32 8 1 0 %s %s\n", (ld + 31) / 32,
                    (nxg + 7) / 8, src_arg(b, (int)steps), dst_arg(b, (int)steps));
  rt_str_printf(&s,
    "// stencil reference: one thread per point, %s\n"
    "#define NX %lldLL\n#define NY %lldLL\n#define STEPS %lld\n#define LD (NY + 2)\n"
    "__device__ void point(const float *s, float *d, long long x, long long y) {\n"
    "  if (x >= 1 && x <= NX && y >= 1 && y <= NY)\n"
    "    d[x * LD + y] = 0.5f * s[x * LD + y] + 0.125f * ((s[(x - 1) * LD + y] + "
    "s[(x + 1) * LD + y]) + (s[x * LD + y - 1] + s[x * LD + y + 1]));\n"
    "  else\n"
    "    d[x * LD + y] = s[x * LD + y];\n"
    "}\n",
    one_block ? "one block, all steps" : "one launch per step", nx, ny, steps);
  if (one_block)
    rt_str_printf(&s,
      "extern \"C\" __global__ void stencil_all(const float *g, float *out, float *ws) {\n"
      "  for (long long k = 0; k < STEPS; k++) {\n"
      "    const float *s = k == 0 ? g : (STEPS - k) %% 2 == 0 ? out : ws;\n"
      "    float *d = (STEPS - 1 - k) %% 2 == 0 ? out : ws;\n"
      "    for (long long p = threadIdx.x; p < (NX + 2) * LD; p += blockDim.x)\n"
      "      point(s, d, p / LD, p %% LD);\n"
      "    __syncthreads();\n"
      "  }\n"
      "}\n");
  else
    rt_str_printf(&s,
      "extern \"C\" __global__ void stencil_ref(const float *s, float *d) {\n"
      "  const long long y = (long long)blockIdx.x * 32 + threadIdx.x;\n"
      "  const long long x = (long long)blockIdx.y * 8 + threadIdx.y;\n"
      "  if (x < NX + 2 && y < LD) point(s, d, x, y);\n"
      "}\n");
  return s.s;
}

static void st_reference(const kn_problem *pb, float *const *bufs) {
  hk_stencil.reference(pb, bufs);
}
static double st_flops(const kn_problem *pb) { return hk_stencil.flops(pb); }
static double st_min_bytes(const kn_problem *pb) { return hk_stencil.min_bytes(pb); }
static double st_tolerance(const kn_problem *pb) { return hk_stencil.tolerance(pb); }

const kn_kernel gk_stencil = {
  .name = "stencil",
  .summary = "2D 5-point Jacobi, STEPS steps, fixed boundary, on the GPU: block shape, "
             "vector width, rows per thread, direct or shared-memory tiles, steps per launch",
  .space = "targets/cuda/stencil.json",
  .dtype = "f32",
  .sizes = "NX NY",
  .buffers = st_buffers,
  .codegen = st_codegen,
  .reference = st_reference,
  .flops = st_flops,
  .min_bytes = st_min_bytes,
  .tolerance = st_tolerance,
  .baseline = NULL,
  .device_reference = st_device_reference,
};
