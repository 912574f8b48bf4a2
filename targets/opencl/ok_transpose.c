/*
** ok_transpose.c -- the OpenCL "transpose": out[N][M] = in[M][N], row-major
** fp32, the host's problem (targets/host/hk_transpose.c: buffers,
** reference, byte count, tolerance 0: an exact copy). A schedule
** (targets/opencl/transpose.json), the CUDA template's tiling in OpenCL's
** words:
**   tile   side of the square tile one work-group moves;
**   rows   work-group rows: the group is tile x rows work-items, each
**          moving tile / rows elements of a column of the tile per pass
**          (items per work-item);
**   local  'yes': the tile goes through local memory (coalesced reads and
**          writes, one barrier); 'no': each item reads in[i][j] and writes
**          out[j][i] directly (one side strided);
**   pad    floats added to each local row (0 or 1: bank conflicts on a
**          GPU; layout only on a CPU).
** Edge tiles are guarded, so any M and N work.
*/
#include <stdlib.h>
#include <string.h>

#include "../host/hk.h"
#include "oc.h"

static char *tr_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  long long m = kn_int(pb, "M"), n = kn_int(pb, "N");
  int tile = (int)kn_param_int(sp, cfg, "tile"), rows = (int)kn_param_int(sp, cfg, "rows");
  int local = !strcmp(kn_param_str(sp, cfg, "local"), "yes");
  int pad = (int)kn_param_int(sp, cfg, "pad");
  long long gx = (n + tile - 1) / tile * tile, gy = (m + tile - 1) / tile * rows;
  rt_str s = {0};
  rt_str_printf(&s,
    "//@oc launch transpose %lld %lld 1 %d %d 1 b0 b1\n"
    "// transpose M=%lld N=%lld: tile %d, rows %d, local %s, pad %d\n"
    "#define M %lldL\n#define N %lldL\n#define TILE %d\n#define ROWS %d\n#define PAD %d\n"
    "__kernel __attribute__((reqd_work_group_size(TILE, ROWS, 1)))\n"
    "void transpose(__global const float *restrict in, __global float *restrict out) {\n"
    "  const int lx = get_local_id(0), ly = get_local_id(1);\n"
    "  const long j0 = get_group_id(0) * (long)TILE, i0 = get_group_id(1) * (long)TILE;\n",
    gx, gy, tile, rows, m, n, tile, rows, local ? "yes" : "no", pad, m, n, tile, rows, pad);
  if (local)
    rt_str_printf(&s,
      "  __local float t[TILE][TILE + PAD];\n"
      "  for (int r = ly; r < TILE; r += ROWS) {   /* read rows of in */\n"
      "    const long i = i0 + r, j = j0 + lx;\n"
      "    if (i < M && j < N) t[r][lx] = in[i * N + j];\n"
      "  }\n"
      "  barrier(CLK_LOCAL_MEM_FENCE);\n"
      "  for (int r = ly; r < TILE; r += ROWS) {   /* write rows of out */\n"
      "    const long j = j0 + r, i = i0 + lx;\n"
      "    if (j < N && i < M) out[j * M + i] = t[lx][r];\n"
      "  }\n}\n");
  else
    rt_str_printf(&s,
      "  for (int r = ly; r < TILE; r += ROWS) {\n"
      "    const long i = i0 + r, j = j0 + lx;\n"
      "    if (i < M && j < N) out[j * M + i] = in[i * N + j];\n"
      "  }\n}\n");
  return s.s;
}

static int tr_buffers(const kn_problem *pb, kn_buf *b) { return hk_transpose.buffers(pb, b); }
static void tr_reference(const kn_problem *pb, float *const *bufs) {
  hk_transpose.reference(pb, bufs);
}
static double tr_flops(const kn_problem *pb) { return hk_transpose.flops(pb); }
static double tr_min_bytes(const kn_problem *pb) { return hk_transpose.min_bytes(pb); }
static double tr_tolerance(const kn_problem *pb) { return hk_transpose.tolerance(pb); }

const kn_kernel ok_transpose = {
  .name = "transpose",
  .summary = "out[N][M] = in[M][N] in OpenCL C: tile side, work-group rows (items per "
             "work-item), local-memory tiling or direct, row padding",
  .space = "targets/opencl/transpose.json",
  .dtype = "f32",
  .sizes = "M N",
  .buffers = tr_buffers,
  .codegen = tr_codegen,
  .reference = tr_reference,
  .flops = tr_flops,
  .min_bytes = tr_min_bytes,
  .tolerance = tr_tolerance,
  .baseline = NULL,
  .device_reference = NULL,
};

const kn_kernel *const oc_kernels[] = {&ok_reduction, &ok_transpose, NULL};
