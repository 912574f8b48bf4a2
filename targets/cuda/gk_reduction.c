/*
** gk_reduction.c -- the CUDA "reduction": out[0] = x[0] + ... + x[N-1] in
** fp32, the same buffers, problem and semantics as the host's reduction
** (targets/host/hk_reduction.c), whose reference, flop and byte counts and
** tolerance it reuses. A schedule (targets/cuda/reduction.json):
**   threads  threads per block;
**   vec      width of each load: 1 float, 2 float2, 4 float4 (16 bytes);
**   ilp      independent vector loads per thread per iteration, each with
**            its own fp32 accumulator (ilp * vec elements per iteration);
**   grid     'sms': waves * sms blocks walk the array grid-stride;
**            'cover': one block per chunk of threads*ilp vectors, one pass;
**   waves    blocks per SM when grid = 'sms' (1 otherwise);
**   block    'shfl': warp shuffles, then one warp over the warps' sums;
**            'smem': a shared-memory tree over all threads;
**   combine  'atomic': out zeroed (//@rk zero b1), each block atomicAdds
**            its sum into out; 'two': block sums to the workspace, a
**            second launch (one block) sums them into out.
** Whole chunks are read unguarded; the vectors after the last whole chunk
** and the N % vec scalars after the last vector are added by guarded code
** emitted only when N leaves them.
**
** Tolerance: the host's bound (FLT_EPSILON * 32 sqrt(N)) was measured for
** its worst order, one sequential fp32 accumulator; here each thread's
** chains are at most N / (grid * threads * ilp * vec) long and the rest
** is a tree (or a sequence of grid partials), so the rounding random walk
** is shorter and the host's bound holds.
**
** The device reference: one block of 256 threads per chunk of 16384
** elements sums it in double (shared-memory tree) into a double partial in
** the workspace; one thread then sums the partials in order, in double.
*/
#include <string.h>

#include "../host/hk.h"
#include "gk.h"

static int red_buffers(const kn_problem *pb, kn_buf *b) {
  return hk_reduction.buffers(pb, b);
}

static const char *const lanes[5] = {NULL, "v", "(v.x + v.y)", NULL,
                                     "((v.x + v.y) + (v.z + v.w))"};
static const char *const vtype[5] = {NULL, "float", "float2", NULL, "float4"};

/* The in-block sum of `s` into thread 0's `s`, with dynamic shared memory
** sm[]; T threads (a multiple of 32). */
static void block_sum(rt_str *s, int shfl) {
  if (shfl)
    rt_str_printf(s,
      "  #pragma unroll\n"
      "  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);\n"
      "  if ((threadIdx.x & 31) == 0) sm[threadIdx.x >> 5] = s;\n"
      "  __syncthreads();\n"
      "  if (threadIdx.x < 32) {\n"
      "    s = threadIdx.x < T / 32 ? sm[threadIdx.x] : 0.0f;\n"
      "    #pragma unroll\n"
      "    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);\n"
      "  }\n");
  else
    rt_str_printf(s,
      "  sm[threadIdx.x] = s;\n"
      "  __syncthreads();\n"
      "  #pragma unroll\n"
      "  for (int o = T / 2; o > 0; o >>= 1) {\n"
      "    if (threadIdx.x < o) sm[threadIdx.x] += sm[threadIdx.x + o];\n"
      "    __syncthreads();\n"
      "  }\n"
      "  s = sm[0];\n");
}

static char *red_codegen(const kn_problem *pb, const sp_space *sp, const int *cfg) {
  long long n = kn_int(pb, "N");
  int t = (int)kn_param_int(sp, cfg, "threads"), vec = (int)kn_param_int(sp, cfg, "vec");
  int ilp = (int)kn_param_int(sp, cfg, "ilp");
  int cover = !strcmp(kn_param_str(sp, cfg, "grid"), "cover");
  int shfl = !strcmp(kn_param_str(sp, cfg, "block"), "shfl");
  int atomic = !strcmp(kn_param_str(sp, cfg, "combine"), "atomic");
  long long nv = n / vec, chunk = (long long)t * ilp, full = nv / chunk;
  long long grid = cover ? (nv + chunk - 1) / chunk
                         : kn_param_int(sp, cfg, "waves") * kn_int(pb, "sms");
  if (grid < 1) grid = 1;
  int smem = 4 * (shfl ? t / 32 : t);
  rt_str s = {0};
  if (!atomic) rt_str_printf(&s, "//@rk workspace %lld\n", 4 * grid);
  else rt_str_printf(&s, "//@rk zero b1\n");
  rt_str_printf(&s, "//@rk launch reduce %lld 1 1 %d 1 1 %d b0 b1%s\n", grid, t, smem,
                atomic ? "" : " ws");
  if (!atomic) rt_str_printf(&s, "//@rk launch combine 1 1 1 %d 1 1 %d ws b1\n", t, smem);
  rt_str_printf(&s,
    "// reduction N=%lld: threads %d, vec %d, ilp %d, grid %lld (%s), block sum %s, "
    "combine %s\n"
    "#define N %lldLL\n#define T %d\n#define VEC %d\n#define ILP %d\n#define GRID %lldLL\n"
    "#define NV (N / VEC)            /* whole vectors */\n"
    "#define CHUNK ((long long)T * ILP) /* vectors per block per iteration */\n"
    "#define FULL (NV / CHUNK)       /* whole chunks */\n"
    "typedef %s vec_t;\n"
    "extern \"C\" __global__ void __launch_bounds__(T) reduce(const float *__restrict__ x, "
    "float *__restrict__ out%s) {\n"
    "  extern __shared__ float sm[];\n"
    "  const vec_t *xv = reinterpret_cast<const vec_t *>(x);\n"
    "  float acc[ILP];\n"
    "  #pragma unroll\n  for (int j = 0; j < ILP; j++) acc[j] = 0.0f;\n",
    n, t, vec, ilp, grid, cover ? "cover" : "sms", shfl ? "shfl" : "smem",
    atomic ? "atomic" : "two", n, t, vec, ilp, grid, vtype[vec], atomic ? "" : ", float *ws");
  if (full > 0)
    rt_str_printf(&s,
      "  %s {\n"
      "    const long long base = (long long)c * CHUNK + threadIdx.x;\n"
      "    vec_t w[ILP];\n"
      "    #pragma unroll\n    for (int j = 0; j < ILP; j++) w[j] = __ldg(xv + base + j * T);\n"
      "    #pragma unroll\n    for (int j = 0; j < ILP; j++) { const vec_t v = w[j]; acc[j] += %s; }\n"
      "  }\n",
      cover ? "if (const unsigned c = blockIdx.x; c < FULL)   /* one pass */"
            : "for (long long c = blockIdx.x; c < FULL; c += GRID)   /* grid-stride */",
      lanes[vec]);
  if (nv % chunk)   /* vectors after the last whole chunk */
    rt_str_printf(&s,
      "  for (long long i = FULL * CHUNK + (long long)blockIdx.x * T + threadIdx.x; i < NV; "
      "i += GRID * T) {\n"
      "    const vec_t v = __ldg(xv + i);\n    acc[0] += %s;\n  }\n", lanes[vec]);
  if (n % vec)      /* scalars after the last vector */
    rt_str_printf(&s,
      "  if (blockIdx.x == GRID - 1 && threadIdx.x < N - NV * VEC)\n"
      "    acc[0] += __ldg(x + NV * VEC + threadIdx.x);\n");
  rt_str_printf(&s, "  float s = 0.0f;\n  #pragma unroll\n  for (int j = 0; j < ILP; j++) s += acc[j];\n");
  block_sum(&s, shfl);
  if (atomic)
    rt_str_printf(&s, "  if (threadIdx.x == 0) atomicAdd(out, s);\n}\n");
  else {
    rt_str_printf(&s,
      "  if (threadIdx.x == 0) ws[blockIdx.x] = s;\n}\n"
      "extern \"C\" __global__ void __launch_bounds__(T) combine(const float *__restrict__ ws, "
      "float *__restrict__ out) {\n"
      "  extern __shared__ float sm[];\n"
      "  float s = 0.0f;\n"
      "  for (long long i = threadIdx.x; i < GRID; i += T) s += ws[i];\n");
    block_sum(&s, shfl);
    rt_str_printf(&s, "  if (threadIdx.x == 0) out[0] = s;\n}\n");
  }
  return s.s;
}

#define REF_T 256
#define REF_CHUNK 16384

static char *red_device_reference(const kn_problem *pb) {
  long long n = kn_int(pb, "N"), nb = (n + REF_CHUNK - 1) / REF_CHUNK;
  rt_str s = {0};
  rt_str_printf(&s,
    "//@rk workspace %lld\n"
    "//@rk launch partial %lld 1 1 %d 1 1 0 b0 ws\n"
    "//@rk launch total 1 1 1 1 1 1 0 ws b1\n"
    "// reduction reference: double partial sums of %d-element chunks, then their sum\n"
    "#define N %lldLL\n#define NB %lldLL\n#define CH %d\n#define T %d\n"
    "extern \"C\" __global__ void partial(const float *x, double *ws) {\n"
    "  __shared__ double t[T];\n"
    "  const long long lo = (long long)blockIdx.x * CH;\n"
    "  const long long hi = lo + CH < N ? lo + CH : N;\n"
    "  double s = 0;\n"
    "  for (long long i = lo + threadIdx.x; i < hi; i += T) s += x[i];\n"
    "  t[threadIdx.x] = s;\n"
    "  __syncthreads();\n"
    "  for (int o = T / 2; o > 0; o /= 2) {\n"
    "    if (threadIdx.x < o) t[threadIdx.x] += t[threadIdx.x + o];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (threadIdx.x == 0) ws[blockIdx.x] = t[0];\n"
    "}\n"
    "extern \"C\" __global__ void total(const double *ws, float *out) {\n"
    "  double s = 0;\n"
    "  for (long long b = 0; b < NB; b++) s += ws[b];\n"
    "  out[0] = (float)s;\n"
    "}\n",
    8 * nb, nb, REF_T, REF_CHUNK, n, nb, REF_CHUNK, REF_T);
  return s.s;
}

static void red_reference(const kn_problem *pb, float *const *bufs) {
  hk_reduction.reference(pb, bufs);
}
static double red_flops(const kn_problem *pb) { return hk_reduction.flops(pb); }
static double red_min_bytes(const kn_problem *pb) { return hk_reduction.min_bytes(pb); }
static double red_tolerance(const kn_problem *pb) { return hk_reduction.tolerance(pb); }

const kn_kernel gk_reduction = {
  .name = "reduction",
  .summary = "sum of N floats on the GPU: threads, vector loads, ILP, grid-stride "
             "or one pass, shuffle or shared-memory tree, atomic or two-pass combine",
  .space = "targets/cuda/reduction.json",
  .dtype = "f32",
  .sizes = "N",
  .buffers = red_buffers,
  .codegen = red_codegen,
  .reference = red_reference,
  .flops = red_flops,
  .min_bytes = red_min_bytes,
  .tolerance = red_tolerance,
  .baseline = NULL,
  .device_reference = red_device_reference,
};
