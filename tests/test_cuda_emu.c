/*
** test_cuda_emu.c -- the tests' CUDA emulator (tests/cuda_emu/emu_run.h)
** on hand-written kernels in the gk.h ABI whose results are known: a
** vector add, a shared-memory block reduction, warp shuffles (down, xor,
** up, broadcast) and a ballot, a tiled matrix multiply in dynamic shared
** memory against a naive loop, a two-launch plan with a zeroed workspace,
** a missing barrier exposed by the reverse schedule; and the errors it
** must report instead of hanging or passing: divergent or skipped
** __syncthreads, a deadlock between a warp exchange and a block barrier,
** out-of-bounds writes (canary and guard page), a written input, an
** endless loop; the rewrite of extern __shared__.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/rt.h"
#include "tests/cuda_emu/emu_run.h"

/* Deterministic values in [-1, 1]. */
static void fill(float *x, int n, unsigned seed) {
  for (int i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((seed >> 8) / 8388608.0 - 1.0);
  }
}

/* Run src (its own plan) on buffers; assert success. */
static void run_ok(const char *src, const kn_buf *b, int nbuf, float *const *data) {
  rt_err err = {0};
  int rc = emu_run_src(src, b, nbuf, data, NULL, &err);
  if (rc) fprintf(stderr, "emu_run: %s\n", err.msg);
  assert_int_equal(rc, 0);
}

/* Run src; assert it fails with a message containing want. */
static void run_fails(const char *src, const kn_buf *b, int nbuf, float *const *data,
                      const emu_opts *o, const char *want) {
  rt_err err = {0};
  int rc = emu_run_src(src, b, nbuf, data, o, &err);
  if (rc == 0 || !strstr(err.msg, want))
    fprintf(stderr, "expected an error with '%s', got rc %d: %s\n", want, rc, err.msg);
  assert_int_equal(rc, -1);
  assert_non_null(strstr(err.msg, want));
}

static const char vadd_src[] =
    "//@rk launch vadd 4 1 1 256 1 1 0 b0 b1 b2\n"
    "#define N 1000\n"
    "extern \"C\" __global__ void __launch_bounds__(256) vadd(const float *__restrict__ a,\n"
    "    const float *__restrict__ b, float *__restrict__ c) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < N) c[i] = __ldg(&a[i]) + b[i];\n"
    "}\n";

static void test_vadd(void **state) {
  (void)state;
  enum { N = 1000 };
  float *a = malloc(N * 4), *b = malloc(N * 4), *c = malloc(N * 4);
  fill(a, N, 1);
  fill(b, N, 2);
  kn_buf bd[3] = {{.name = "a", .n = N, .out = 0}, {.name = "b", .n = N, .out = 0}, {.name = "c", .n = N, .out = 1}};
  float *d[3] = {a, b, c};
  run_ok(vadd_src, bd, 3, d);
  for (int i = 0; i < N; i++) assert_true(c[i] == a[i] + b[i]);
  free(a), free(b), free(c);
}

/* Block sums by a shared-memory tree (16 blocks of 256), and the total by
** atomicAdd into a zeroed output. */
static const char bred_src[] =
    "//@rk zero b2\n"
    "//@rk launch bred 16 1 1 256 1 1 0 b0 b1 b2\n"
    "extern \"C\" __global__ void bred(const float *x, float *part, float *total) {\n"
    "  __shared__ float s[256];\n"
    "  unsigned t = threadIdx.x;\n"
    "  s[t] = x[blockIdx.x * 256 + t];\n"
    "  __syncthreads();\n"
    "  for (unsigned h = 128; h > 0; h >>= 1) {\n"
    "    if (t < h) s[t] += s[t + h];\n"
    "    __syncthreads();\n"
    "  }\n"
    "  if (t == 0) { part[blockIdx.x] = s[0]; atomicAdd(total, s[0]); }\n"
    "}\n";

static void test_block_reduction(void **state) {
  (void)state;
  enum { N = 4096 };
  float *x = malloc(N * 4), part[16], total[1];
  fill(x, N, 3);
  kn_buf bd[3] = {{.name = "x", .n = N, .out = 0}, {.name = "part", .n = 16, .out = 1}, {.name = "total", .n = 1, .out = 1}};
  float *d[3] = {x, part, total};
  run_ok(bred_src, bd, 3, d);
  double all = 0;
  for (int b = 0; b < 16; b++) {
    double s = 0;
    for (int i = 0; i < 256; i++) s += x[b * 256 + i];
    assert_true(fabs(part[b] - s) <= 1e-4);
    all += s;
  }
  assert_true(fabs(total[0] - all) <= 1e-3);
  free(x);
}

/* Warp sums by __shfl_down_sync, block sums of the warp sums by
** __shfl_xor_sync, an inclusive warp scan by __shfl_up_sync, lane 3's
** value broadcast by __shfl_sync, and the count of positives by ballot. */
static const char shfl_src[] =
    "//@rk launch wred 2 1 1 128 1 1 0 b0 b1 b2 b3\n"
    "#define FULL 0xffffffffu\n"
    "__device__ __forceinline__ float warp_sum(float v) {\n"
    "#pragma unroll\n"
    "  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(FULL, v, o);\n"
    "  return v;\n"
    "}\n"
    "extern \"C\" __global__ void wred(const float *x, float *wsum, float *bsum, float *misc) {\n"
    "  __shared__ float w[4];\n"
    "  unsigned t = threadIdx.x, lane = t % warpSize, warp = t / warpSize;\n"
    "  unsigned g = blockIdx.x * blockDim.x + t;\n"
    "  float v = x[g];\n"
    "  float s = warp_sum(v);\n"
    "  if (lane == 0) { w[warp] = s; wsum[blockIdx.x * 4 + warp] = s; }\n"
    "  __syncthreads();\n"
    "  if (warp == 0) {\n"
    "    float u = lane < 4 ? w[lane] : 0.0f;\n"
    "    for (int m = 1; m < 32; m <<= 1) u += __shfl_xor_sync(FULL, u, m);\n"
    "    if (lane == 7) bsum[blockIdx.x] = u;\n"
    "  }\n"
    "  float p = v;\n"
    "  for (int d = 1; d < 32; d <<= 1) {\n"
    "    float q = __shfl_up_sync(FULL, p, d);\n"
    "    if (lane >= (unsigned)d) p += q;\n"
    "  }\n"
    "  misc[g] = p;\n"
    "  float l3 = __shfl_sync(FULL, v, 3);\n"
    "  unsigned pos = __popc(__ballot_sync(FULL, v > 0.0f));\n"
    "  __syncwarp();\n"
    "  misc[256 + g] = l3 + 10.0f * pos;\n"
    "}\n";

static void test_warp_shuffles(void **state) {
  (void)state;
  enum { N = 256 };
  float *x = malloc(N * 4), wsum[8], bsum[2], *misc = malloc(2 * N * 4);
  fill(x, N, 4);
  kn_buf bd[4] = {{.name = "x", .n = N, .out = 0}, {.name = "wsum", .n = 8, .out = 1}, {.name = "bsum", .n = 2, .out = 1}, {.name = "misc", .n = 2 * N, .out = 1}};
  float *d[4] = {x, wsum, bsum, misc};
  run_ok(shfl_src, bd, 4, d);
  for (int b = 0; b < 2; b++) {
    double bs = 0;
    for (int w = 0; w < 4; w++) {
      double s = 0;
      int pos = 0;
      for (int l = 0; l < 32; l++) s += x[b * 128 + w * 32 + l];
      assert_true(fabs(wsum[b * 4 + w] - s) <= 1e-5);
      bs += s;
      double scan = 0;
      for (int l = 0; l < 32; l++) pos += x[b * 128 + w * 32 + l] > 0;
      for (int l = 0; l < 32; l++) {
        int g = b * 128 + w * 32 + l;
        scan += x[g];
        assert_true(fabs(misc[g] - scan) <= 1e-5);
        assert_true(fabs(misc[N + g] - (x[b * 128 + w * 32 + 3] + 10.0 * pos)) <= 1e-5);
      }
    }
    assert_true(fabs(bsum[b] - bs) <= 1e-4);
  }
  free(x), free(misc);
}

/* C = A*B (64x64x64, row-major) by 16x16 tiles in dynamic shared memory
** (two tiles, 2 KiB), 256-thread blocks, float4 loads of A's tile rows. */
static const char gemm_src[] =
    "//@rk launch mm 4 4 1 16 16 1 2048 b0 b1 b2\n"
    "#define M 64\n#define N 64\n#define K 64\n#define T 16\n"
    "extern \"C\" __global__ void __launch_bounds__(256) mm(const float *__restrict__ A,\n"
    "    const float *__restrict__ B, float *__restrict__ C) {\n"
    "  extern __shared__ __align__(16) float smem[];\n"
    "  float *As = smem, *Bs = smem + T * T;\n"
    "  int tx = threadIdx.x, ty = threadIdx.y;\n"
    "  int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;\n"
    "  float acc = 0.0f;\n"
    "  for (int k0 = 0; k0 < K; k0 += T) {\n"
    "    if (tx < T / 4) {\n"
    "      float4 v = *reinterpret_cast<const float4 *>(&A[row * K + k0 + 4 * tx]);\n"
    "      *reinterpret_cast<float4 *>(&As[ty * T + 4 * tx]) = v;\n"
    "    }\n"
    "    Bs[ty * T + tx] = B[(k0 + ty) * N + col];\n"
    "    __syncthreads();\n"
    "#pragma unroll\n"
    "    for (int k = 0; k < T; k++) acc = fmaf(As[ty * T + k], Bs[k * T + tx], acc);\n"
    "    __syncthreads();\n"
    "  }\n"
    "  C[row * N + col] = acc;\n"
    "}\n";

static void test_tiled_gemm(void **state) {
  (void)state;
  enum { S = 64 };
  float *A = malloc(S * S * 4), *B = malloc(S * S * 4), *C = malloc(S * S * 4);
  fill(A, S * S, 5);
  fill(B, S * S, 6);
  kn_buf bd[3] = {{.name = "A", .n = S * S, .out = 0}, {.name = "B", .n = S * S, .out = 0}, {.name = "C", .n = S * S, .out = 1}};
  float *d[3] = {A, B, C};
  run_ok(gemm_src, bd, 3, d);
  double maxerr = 0;
  for (int i = 0; i < S; i++)
    for (int j = 0; j < S; j++) {
      double s = 0;
      for (int k = 0; k < S; k++) s += (double)A[i * S + k] * B[k * S + j];
      maxerr = fmax(maxerr, fabs(C[i * S + j] - s));
    }
  assert_true(maxerr <= 1e-4);
  free(A), free(B), free(C);
}

/* Two launches through a zeroed workspace: per-block sums accumulated
** into ws[blockIdx.x % 4] by atomicAdd, then one thread sums ws; twice
** (emu_opts.runs), so the zero step must run before each repeat. */
static const char ws_src[] =
    "//@rk workspace 16\n"
    "//@rk launch part 8 1 1 64 1 1 0 b0 ws\n"
    "//@rk launch fin 1 1 1 32 1 1 0 ws b1\n"
    "//@rk zero ws\n"
    "extern \"C\" __global__ void part(const float *x, float *ws) {\n"
    "  atomicAdd(&ws[blockIdx.x % 4], x[blockIdx.x * blockDim.x + threadIdx.x]);\n"
    "}\n"
    "extern \"C\" __global__ void fin(const float *ws, float *out) {\n"
    "  if (threadIdx.x == 0) out[0] = ws[0] + ws[1] + ws[2] + ws[3];\n"
    "}\n";

static void test_workspace_plan(void **state) {
  (void)state;
  enum { N = 512 };
  float *x = malloc(N * 4), out[1];
  fill(x, N, 7);
  kn_buf bd[2] = {{.name = "x", .n = N, .out = 0}, {.name = "out", .n = 1, .out = 1}};
  float *d[2] = {x, out};
  emu_opts o = {.runs = 2};
  rt_err err = {0};
  assert_int_equal(emu_run_src(ws_src, bd, 2, d, &o, &err), 0);
  double s = 0;
  for (int i = 0; i < N; i++) s += x[i];
  assert_true(fabs(out[0] - s) <= 1e-3);
  /* without the zero line the workspace starts as NaN (as on a device,
  ** uninitialised): the output shows it */
  char *nozero = rt_strdup(ws_src);
  memcpy(strstr(nozero, "//@rk zero ws"), "//           ", 13);
  assert_int_equal(emu_run_src(nozero, bd, 2, d, NULL, &err), 0);
  assert_true(isnan(out[0]));
  free(nozero);
  free(x);
}

/* A missing barrier between writing s[t] and reading s[t-1]: hidden when
** the threads run in order, a wrong (NaN) value in reverse order. */
static void test_missing_barrier(void **state) {
  (void)state;
  float x[64], y[64];
  fill(x, 64, 9);
  kn_buf bd[2] = {{.name = "x", .n = 64, .out = 0}, {.name = "y", .n = 64, .out = 1}};
  float *d[2] = {x, y};
  const char *src = "//@rk launch k 1 1 1 64 1 1 256 b0 b1\n"
                    "extern \"C\" __global__ void k(const float *x, float *y) {\n"
                    "  extern __shared__ float s[];\n"
                    "  unsigned t = threadIdx.x;\n"
                    "  s[t] = x[t];\n"
                    "  y[t] = t ? s[t - 1] : 0.0f;\n"
                    "}\n";
  rt_err err = {0};
  assert_int_equal(emu_run_src(src, bd, 2, d, NULL, &err), 0);
  for (int t = 1; t < 64; t++) assert_true(y[t] == x[t - 1]);
  emu_opts rev = {.reverse = 1};
  assert_int_equal(emu_run_src(src, bd, 2, d, &rev, &err), 0);
  for (int t = 1; t < 64; t++) assert_true(isnan(y[t]));
}

static const char *const bad_sync_src[] = {
    /* a barrier half the block skips */
    "//@rk launch k 1 1 1 256 1 1 0 b0\n"
    "extern \"C\" __global__ void k(float *o) {\n"
    "  if (threadIdx.x < 128) __syncthreads();\n"
    "  o[threadIdx.x] = 1.0f;\n"
    "}\n",
    /* threads that return before a barrier */
    "//@rk launch k 1 1 1 256 1 1 0 b0\n"
    "extern \"C\" __global__ void k(float *o) {\n"
    "  if (threadIdx.x >= 200) return;\n"
    "  __syncthreads();\n"
    "  o[threadIdx.x] = 1.0f;\n"
    "}\n",
    /* two different barriers */
    "//@rk launch k 1 1 1 64 1 1 0 b0\n"
    "extern \"C\" __global__ void k(float *o) {\n"
    "  if (threadIdx.x % 2) { o[threadIdx.x] = 1.0f; __syncthreads(); }\n"
    "  else { __syncthreads(); o[threadIdx.x] = 2.0f; }\n"
    "}\n",
};

static void test_divergent_sync(void **state) {
  (void)state;
  float o[256];
  kn_buf bd[1] = {{.name = "o", .n = 256, .out = 1}};
  float *d[1] = {o};
  const char *want[] = {"a barrier some threads skip", "a barrier some threads skip",
                        "divergent __syncthreads()"};
  for (int i = 0; i < 3; i++) run_fails(bad_sync_src[i], bd, 1, d, NULL, want[i]);
  /* a lane of warp 0 at the block barrier while the rest of its warp
  ** waits for it in a shuffle */
  run_fails("//@rk launch k 1 1 1 64 1 1 0 b0\n"
            "extern \"C\" __global__ void k(float *o) {\n"
            "  float v = threadIdx.x;\n"
            "  if (threadIdx.x != 5) v = __shfl_down_sync(0xffffffffu, v, 1);\n"
            "  __syncthreads();\n"
            "  o[threadIdx.x] = v;\n"
            "}\n",
            bd, 1, d, NULL, "deadlock");
}

static void test_out_of_bounds(void **state) {
  (void)state;
  float *x = malloc(2048 * 4), *y = malloc(2048 * 4);
  fill(x, 2048, 8);
  /* past the end into the canaries (1000 floats, 1024 threads) */
  kn_buf b1[2] = {{.name = "x", .n = 1000, .out = 0}, {.name = "y", .n = 1000, .out = 1}};
  float *d[2] = {x, y};
  const char *src =
      "//@rk launch cp 4 1 1 256 1 1 0 b0 b1\n"
      "extern \"C\" __global__ void cp(const float *x, float *y) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  y[i] = i < 1000 ? x[i] : 0.0f;\n"
      "}\n";
  run_fails(src, b1, 2, d, NULL, "out of bounds of b1");
  /* into the guard page (1024 floats, 2048 threads) */
  kn_buf b2[2] = {{.name = "x", .n = 1024, .out = 0}, {.name = "y", .n = 1024, .out = 1}};
  const char *src2 =
      "//@rk launch cp 8 1 1 256 1 1 0 b0 b1\n"
      "extern \"C\" __global__ void cp(const float *x, float *y) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  y[i] = x[i % 1024];\n"
      "}\n";
  run_fails(src2, b2, 2, d, NULL, "past the end of b1");
  /* a written input */
  run_fails("//@rk launch cp 4 1 1 256 1 1 0 b0 b1\n"
            "extern \"C\" __global__ void cp(float *x, float *y) {\n"
            "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            "  x[i] = 0.0f; y[i] = 1.0f;\n"
            "}\n",
            b2, 2, d, NULL, "input b0 (x) was written");
  free(x), free(y);
}

static void test_errors(void **state) {
  (void)state;
  float o[32];
  kn_buf bd[1] = {{.name = "o", .n = 32, .out = 1}};
  float *d[1] = {o};
  emu_opts quick = {.timeout_s = 1};
  run_fails("//@rk launch k 1 1 1 32 1 1 0 b0\n"
            "extern \"C\" __global__ void k(float *o) {\n"
            "  volatile int go = 1;\n"
            "  while (go) {}\n"
            "}\n",
            bd, 1, d, &quick, "timed out");
  run_fails("//@rk launch nope 1 1 1 32 1 1 0 b0\n"
            "extern \"C\" __global__ void k(float *o) { o[0] = 1; }\n",
            bd, 1, d, NULL, "no kernel named nope");
  run_fails("//@rk launch k 1 1 1 32 1 1 0 b0\n"
            "extern \"C\" __global__ void k(float *o) { o[0] = undefined_thing; }\n",
            bd, 1, d, NULL, "undefined_thing");
  run_fails("//@rk launch k 1 1 1 2048 1 1 0 b0\n"
            "extern \"C\" __global__ void k(float *o) { o[0] = 1; }\n",
            bd, 1, d, NULL, "at most 1024");
}

static void test_rewrite(void **state) {
  (void)state;
  rt_err err = {0};
  char *r = emu_rewrite("extern __shared__ float4 top[]; int x;\n"
                        "__global__ void k() {\n"
                        "  // extern __shared__ float no[];\n"
                        "  extern __shared__ __align__(16) unsigned char\n  raw[];\n"
                        "  int y = __LINE__;\n"
                        "}\n",
                        &err);
  assert_non_null(r);
  assert_string_equal(r, "\n#define top ((float4 *)emu_rt.dyn_smem)\n#line 1\n int x;\n"
                         "__global__ void k() {\n"
                         "  // extern __shared__ float no[];\n"
                         "  unsigned char *const raw = (unsigned char *)emu_rt.dyn_smem;\n\n"
                         "  int y = __LINE__;\n"
                         "}\n");
  free(r);
  assert_null(emu_rewrite("void f() { extern __shared__ float bad; }", &err));
  assert_non_null(strstr(err.msg, "line 1"));
}

int main(void) {
  const char *why = NULL;
  if (!emu_available(&why)) {   /* e.g. a device machine without g++ */
    printf("skipped: the CUDA emulator: %s\n", why);
    return 0;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rewrite),
      cmocka_unit_test(test_vadd),
      cmocka_unit_test(test_block_reduction),
      cmocka_unit_test(test_warp_shuffles),
      cmocka_unit_test(test_tiled_gemm),
      cmocka_unit_test(test_workspace_plan),
      cmocka_unit_test(test_missing_barrier),
      cmocka_unit_test(test_divergent_sync),
      cmocka_unit_test(test_out_of_bounds),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
