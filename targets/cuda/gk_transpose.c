/*
** gk_transpose.c -- the CUDA "transpose": out[N][M] = in[M][N], row-major
** fp32, the same buffers, problem and semantics as the host's transpose
** (targets/host/hk_transpose.c), whose reference, byte count and tolerance
** (0: an exact copy) it reuses. One block moves `tiles` TILE x TILE tiles
** (consecutive along in's rows) through shared memory: all are read
** (coalesced along in's rows), one barrier, all are written (coalesced
** along out's rows), so tiles * TILE^2 / threads loads are in flight per
** thread. A schedule (targets/cuda/transpose.json):
**   tile   TILE, the side of a tile (16, 32, 64);
**   rows   BLOCK_ROWS: tile rows read per pass of the block; the block has
**          TILE / vr * rows threads (one vr-vector each per pass);
**   vr     read width: float, float2, float4 (needs N % vr == 0);
**   vw     write width (needs M % vw == 0); the write pass covers
**          threads / (TILE / vw) tile rows;
**   pad    floats added to each shared-memory row (bank conflicts);
**   tiles  tiles per block.
** Reads and writes past M or N are guarded only when TILE (times tiles
** along N) does not divide them; a vector is then wholly in or out (the
** divisibility conditions above).
**
** The device reference: one thread per element, 32 x 8 blocks, the grid's
** y dimension striding over in's rows.
*/
#include "../host/hk.h"
#include "gk.h"

static int tr_buffers(const kn_problem *pb, kn_buf *b) { return hk_transpose.buffers(pb, b); }

static const char *const vtype[5] = {NULL, "float", "float2", NULL, "float4"};
static const char *const comp[5][4] = {
  {0}, {""}, {".x", ".y"}, {0}, {".x", ".y", ".z", ".w"},
};

static char *tr_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  long long m = kn_int(pb, "M"), n = kn_int(pb, "N");
  int tile = (int)kn_param_int(sp, cfg, "tile"), rows = (int)kn_param_int(sp, cfg, "rows");
  int vr = (int)kn_param_int(sp, cfg, "vr"), vw = (int)kn_param_int(sp, cfg, "vw");
  int pad = (int)kn_param_int(sp, cfg, "pad"), tpb = (int)kn_param_int(sp, cfg, "tiles");
  int nth = tile / vr * rows, wrows = nth / (tile / vw);
  long long tcols = (n + tile - 1) / tile;                 /* tiles along N */
  long long gx = (tcols + tpb - 1) / tpb, gy = (m + tile - 1) / tile;
  int guard_m = m % tile != 0, guard_n = n % ((long long)tile * tpb) != 0;
  int smem = 4 * tpb * tile * (tile + pad);
  rt_str s = {0};
  rt_str_printf(&s,
    "//@rk launch transpose %lld %lld 1 %d 1 1 %d b0 b1\n"
    "// transpose M=%lld N=%lld: tile %d, rows %d, vr %d, vw %d, pad %d, tiles %d\n"
    "#define M %lldLL\n#define N %lldLL\n#define TILE %d\n#define TPB %d\n#define NTH %d\n"
    "#define LDS (TILE + %d)       /* shared-memory row */\n"
    "#define RROWS %d              /* tile rows per read pass */\n"
    "#define WROWS %d              /* tile rows per write pass */\n"
    "typedef %s vr_t;\ntypedef %s vw_t;\n"
    "extern \"C\" __global__ void __launch_bounds__(NTH) transpose(const float *__restrict__ in, "
    "float *__restrict__ out) {\n"
    "  extern __shared__ float sm[];\n"
    "  const long long i0 = (long long)blockIdx.y * TILE;\n"
    "  const long long jt = (long long)blockIdx.x * TPB * TILE;   /* first tile's column */\n"
    "  const int rx = threadIdx.x %% (TILE / %d), ry = threadIdx.x / (TILE / %d);\n"
    "  const int wx = threadIdx.x %% (TILE / %d), wy = threadIdx.x / (TILE / %d);\n"
    "  #pragma unroll\n"
    "  for (int k = 0; k < TPB; k++)\n"
    "    #pragma unroll\n"
    "    for (int r = 0; r < TILE; r += RROWS) {\n"
    "      const long long i = i0 + r + ry, j = jt + k * TILE + rx * %d;\n",
    gx, gy, nth, smem, m, n, tile, rows, vr, vw, pad, tpb, m, n, tile, tpb, nth, pad, rows,
    wrows, vtype[vr], vtype[vw], vr, vr, vw, vw, vr);
  if (guard_m || guard_n)
    rt_str_printf(&s, "      if (%s%s%s) {\n", guard_m ? "i < M" : "",
                  guard_m && guard_n ? " && " : "", guard_n ? "j < N" : "");
  else
    rt_str_printf(&s, "      {\n");
  rt_str_printf(&s,
    "        const vr_t v = __ldg(reinterpret_cast<const vr_t *>(in + i * N + j));\n"
    "        float *t = sm + (k * TILE + r + ry) * LDS + rx * %d;\n", vr);
  for (int e = 0; e < vr; e++) rt_str_printf(&s, "        t[%d] = v%s;\n", e, comp[vr][e]);
  rt_str_printf(&s,
    "      }\n    }\n"
    "  __syncthreads();\n"
    "  #pragma unroll\n"
    "  for (int k = 0; k < TPB; k++)\n"
    "    #pragma unroll\n"
    "    for (int r = 0; r < TILE; r += WROWS) {\n"
    "      const long long j = jt + k * TILE + r + wy, i = i0 + wx * %d;\n", vw);
  if (guard_m || guard_n)
    rt_str_printf(&s, "      if (%s%s%s) {\n", guard_n ? "j < N" : "",
                  guard_m && guard_n ? " && " : "", guard_m ? "i < M" : "");
  else
    rt_str_printf(&s, "      {\n");
  rt_str_printf(&s,
    "        const float *t = sm + (k * TILE + wx * %d) * LDS + r + wy;\n"
    "        vw_t v;\n", vw);
  for (int e = 0; e < vw; e++) rt_str_printf(&s, "        v%s = t[%d * LDS];\n", comp[vw][e], e);
  rt_str_printf(&s,
    "        *reinterpret_cast<vw_t *>(out + j * M + i) = v;\n"
    "      }\n    }\n}\n");
  return s.s;
}

static char *tr_device_reference(const kn_problem *pb) {
  long long m = kn_int(pb, "M"), n = kn_int(pb, "N");
  long long gx = (n + 31) / 32, gy = (m + 7) / 8;
  if (gy > 65535) gy = 65535;
  rt_str s = {0};
  rt_str_printf(&s,
    "//@rk launch transpose_ref %lld %lld 1 32 8 1 0 b0 b1\n"
    "// transpose reference: one thread per element\n"
    "#define M %lldLL\n#define N %lldLL\n"
    "extern \"C\" __global__ void transpose_ref(const float *in, float *out) {\n"
    "  const long long j = (long long)blockIdx.x * 32 + threadIdx.x;\n"
    "  for (long long i = (long long)blockIdx.y * 8 + threadIdx.y; i < M; "
    "i += (long long)gridDim.y * 8)\n"
    "    if (j < N) out[j * M + i] = in[i * N + j];\n"
    "}\n",
    gx, gy, m, n);
  return s.s;
}

static void tr_reference(const kn_problem *pb, float *const *bufs) {
  hk_transpose.reference(pb, bufs);
}
static double tr_flops(const kn_problem *pb) { return hk_transpose.flops(pb); }
static double tr_min_bytes(const kn_problem *pb) { return hk_transpose.min_bytes(pb); }
static double tr_tolerance(const kn_problem *pb) { return hk_transpose.tolerance(pb); }

const kn_kernel gk_transpose = {
  .name = "transpose",
  .summary = "out[N][M] = in[M][N] on the GPU: shared-memory tile, rows per pass, "
             "read and write vector widths, padding, tiles per block",
  .space = "targets/cuda/transpose.json",
  .dtype = "f32",
  .sizes = "M N",
  .buffers = tr_buffers,
  .codegen = tr_codegen,
  .reference = tr_reference,
  .flops = tr_flops,
  .min_bytes = tr_min_bytes,
  .tolerance = tr_tolerance,
  .baseline = NULL,
  .device_reference = tr_device_reference,
};
