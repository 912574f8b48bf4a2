/*
** emu_prelude.h -- the CUDA built-ins for running rooftune's generated
** CUDA C++ on the host CPU (the tests' emulator, emu_run.h). The runner
** compiles a generated source as C++ with
**   g++ -std=gnu++17 -O1 -shared -fPIC -include emu_prelude.h
** after rewriting its `extern __shared__ T name[];` declarations (see
** emu_run.c, emu_rewrite), and runs every thread of a block as a fiber.
**
** What a thread sees: threadIdx/blockIdx/blockDim/gridDim read emu_rt (set
** by the runner before it resumes the thread); __shared__ variables are
** `static` (blocks run one at a time, all threads of a block share them);
** barriers (__syncthreads, __syncwarp, shuffles, votes) call back into the
** runner, which switches fibers only there. Atomics are plain
** read-modify-writes: a fiber is never preempted. Device memory is the
** host's. Anything not defined here fails to compile, loudly: add it here
** rather than guess (PTX `asm` cannot be emulated).
*/
#ifndef EMU_PRELUDE_H
#define EMU_PRELUDE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include "emu_abi.h"
}

/* The runner's view of this library (dlsym "emu_rt"). */
extern "C" __attribute__((visibility("default"))) emu_rt_t emu_rt;
emu_rt_t emu_rt = {EMU_ABI_VERSION, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1},
                   0, nullptr, 0, nullptr, nullptr, nullptr};

/* ---- qualifiers ---- */
#define __global__
#define __device__
#define __host__
#define __noinline__ __attribute__((noinline))
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __shared__ static
#define __constant__ static
#define __managed__
#define __align__(n) __attribute__((aligned(n)))
#define __grid_constant__

/* ---- vector types (aligned as CUDA's) ---- */
#define EMU_VEC(T, N, A)                                                    \
  struct __attribute__((aligned(A))) N##1 { T x; };                         \
  struct __attribute__((aligned(2 * A))) N##2 { T x, y; };                  \
  struct N##3 { T x, y, z; };                                               \
  struct __attribute__((aligned(4 * A < 16 ? 4 * A : 16))) N##4 { T x, y, z, w; }; \
  static inline N##1 make_##N##1(T x) { N##1 r; r.x = x; return r; }        \
  static inline N##2 make_##N##2(T x, T y) { N##2 r; r.x = x; r.y = y; return r; } \
  static inline N##3 make_##N##3(T x, T y, T z) {                           \
    N##3 r; r.x = x; r.y = y; r.z = z; return r; }                          \
  static inline N##4 make_##N##4(T x, T y, T z, T w) {                      \
    N##4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
EMU_VEC(float, float, 4)
EMU_VEC(int, int, 4)
EMU_VEC(unsigned, uint, 4)
EMU_VEC(char, char, 1)
EMU_VEC(unsigned char, uchar, 1)
EMU_VEC(short, short, 2)
EMU_VEC(unsigned short, ushort, 2)
#undef EMU_VEC
struct __attribute__((aligned(16))) double2 { double x, y; };
static inline double2 make_double2(double x, double y) { double2 r; r.x = x; r.y = y; return r; }

/* ---- the thread's coordinates ---- */
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
  constexpr dim3(uint3 u) : x(u.x), y(u.y), z(u.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};
static inline uint3 emu_u3_(emu_u3 v) { return uint3{v.x, v.y, v.z}; }
#define threadIdx (emu_u3_(emu_rt.tid))
#define blockIdx (emu_u3_(emu_rt.bid))
#define blockDim (dim3(emu_u3_(emu_rt.bdim)))
#define gridDim (dim3(emu_u3_(emu_rt.gdim)))
static constexpr int warpSize = 32;

/* ---- barriers and warp exchange ---- */
#define __syncthreads() (emu_rt.syncthreads(__LINE__))
static inline void emu_syncwarp_(int line, unsigned mask = 0xffffffffu) {
  emu_rt.xchg(mask, 0, line);
}
#define __syncwarp(...) emu_syncwarp_(__LINE__, ##__VA_ARGS__)
#define __threadfence() ((void)0)
#define __threadfence_block() ((void)0)
#define __threadfence_system() ((void)0)

/* Exchange v among the lanes of mask and return lane src's value; a lane
** that did not take part is an error (undefined on the GPU). */
template <class T>
static inline T emu_shfl_(unsigned mask, T v, unsigned src, int line) {
  static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
  uint64_t u = 0;
  memcpy(&u, &v, sizeof v);
  const uint64_t *s = emu_rt.xchg(mask, u, line);
  if (!(s[32] >> src & 1)) emu_rt.fail("shuffle reads a lane that did not take part", line);
  T r;
  memcpy(&r, &s[src], sizeof r);
  return r;
}
template <class T>
static inline T emu_shfl_idx_(unsigned mask, T v, int src, int width, int line) {
  unsigned lane = emu_rt.lane;
  return emu_shfl_(mask, v, (lane & ~(unsigned)(width - 1)) + ((unsigned)src & (unsigned)(width - 1)), line);
}
template <class T>
static inline T emu_shfl_up_(unsigned mask, T v, unsigned d, int width, int line) {
  unsigned lane = emu_rt.lane;
  return emu_shfl_(mask, v, (lane & (unsigned)(width - 1)) < d ? lane : lane - d, line);
}
template <class T>
static inline T emu_shfl_down_(unsigned mask, T v, unsigned d, int width, int line) {
  unsigned lane = emu_rt.lane;
  return emu_shfl_(mask, v, (lane & (unsigned)(width - 1)) + d >= (unsigned)width ? lane : lane + d, line);
}
template <class T>
static inline T emu_shfl_xor_(unsigned mask, T v, int m, int width, int line) {
  unsigned lane = emu_rt.lane, src = lane ^ (unsigned)m;
  return emu_shfl_(mask, v, src >= (lane & ~(unsigned)(width - 1)) + (unsigned)width ? lane : src, line);
}
#define __shfl_sync(m, v, s, ...) emu_shfl_idx_(m, v, s, EMU_WIDTH_(__VA_ARGS__), __LINE__)
#define __shfl_up_sync(m, v, d, ...) emu_shfl_up_(m, v, d, EMU_WIDTH_(__VA_ARGS__), __LINE__)
#define __shfl_down_sync(m, v, d, ...) emu_shfl_down_(m, v, d, EMU_WIDTH_(__VA_ARGS__), __LINE__)
#define __shfl_xor_sync(m, v, x, ...) emu_shfl_xor_(m, v, x, EMU_WIDTH_(__VA_ARGS__), __LINE__)
/* The optional width argument (32 when absent). */
#define EMU_WIDTH_(...) emu_width_(0, ##__VA_ARGS__)
static inline int emu_width_(int, int w = 32) { return w; }

static inline unsigned emu_ballot_(unsigned mask, int pred, int line) {
  const uint64_t *s = emu_rt.xchg(mask, pred != 0, line);
  unsigned r = 0;
  for (int i = 0; i < 32; i++)
    if ((s[32] >> i & 1) && s[i]) r |= 1u << i;
  return r;
}
#define __ballot_sync(m, p) emu_ballot_(m, p, __LINE__)
#define __any_sync(m, p) (emu_ballot_(m, p, __LINE__) != 0)
#define __all_sync(m, p) (emu_ballot_(m, !(p), __LINE__) == 0)

/* ---- memory ---- */
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }
template <class T> static inline T __ldca(const T *p) { return *p; }
template <class T> static inline T __ldcs(const T *p) { return *p; }
template <class T> static inline T __ldlu(const T *p) { return *p; }
template <class T> static inline T __ldcv(const T *p) { return *p; }
template <class T> static inline void __stcg(T *p, T v) { *p = v; }
template <class T> static inline void __stcs(T *p, T v) { *p = v; }
template <class T> static inline void __stwb(T *p, T v) { *p = v; }
template <class T> static inline void __stwt(T *p, T v) { *p = v; }

/* Atomics: a fiber runs alone until its next barrier. */
#define EMU_ATOMIC(T)                                                        \
  static inline T atomicAdd(T *p, T v) { T o = *p; *p = o + v; return o; }   \
  static inline T atomicSub(T *p, T v) { T o = *p; *p = o - v; return o; }   \
  static inline T atomicExch(T *p, T v) { T o = *p; *p = v; return o; }      \
  static inline T atomicMin(T *p, T v) { T o = *p; *p = v < o ? v : o; return o; } \
  static inline T atomicMax(T *p, T v) { T o = *p; *p = v > o ? v : o; return o; }
EMU_ATOMIC(int)
EMU_ATOMIC(unsigned)
EMU_ATOMIC(unsigned long long)
EMU_ATOMIC(float)
EMU_ATOMIC(double)
#undef EMU_ATOMIC
#define EMU_ATOMIC_INT(T)                                                    \
  static inline T atomicCAS(T *p, T c, T v) { T o = *p; if (o == c) *p = v; return o; } \
  static inline T atomicAnd(T *p, T v) { T o = *p; *p = o & v; return o; }   \
  static inline T atomicOr(T *p, T v) { T o = *p; *p = o | v; return o; }    \
  static inline T atomicXor(T *p, T v) { T o = *p; *p = o ^ v; return o; }
EMU_ATOMIC_INT(int)
EMU_ATOMIC_INT(unsigned)
EMU_ATOMIC_INT(unsigned long long)
#undef EMU_ATOMIC_INT

/* ---- arithmetic ---- */
template <class A, class B>
static inline auto min(A a, B b) -> decltype(a < b ? a : b) { return b < a ? b : a; }
template <class A, class B>
static inline auto max(A a, B b) -> decltype(a < b ? a : b) { return a < b ? b : a; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fdividef(float a, float b) { return a / b; }
static inline float __frcp_rn(float a) { return 1.0f / a; }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline float rsqrtf(float a) { return 1.0f / sqrtf(a); }
/* glibc's math.h declares these names itself: macros, not functions */
#define __expf(a) expf(a)
#define __logf(a) logf(a)
#define __sinf(a) sinf(a)
#define __cosf(a) cosf(a)
#define __powf(a, b) powf(a, b)
static inline float __saturatef(float a) { return a < 0.0f ? 0.0f : a > 1.0f ? 1.0f : a; }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline int __float_as_int(float a) { int r; memcpy(&r, &a, 4); return r; }
static inline unsigned __float_as_uint(float a) { unsigned r; memcpy(&r, &a, 4); return r; }
static inline float __int_as_float(int a) { float r; memcpy(&r, &a, 4); return r; }
static inline float __uint_as_float(unsigned a) { float r; memcpy(&r, &a, 4); return r; }
static inline int __float2int_rn(float a) { return (int)lrintf(a); }
static inline int __float2int_rz(float a) { return (int)a; }
static inline int __float2int_rd(float a) { return (int)floorf(a); }
static inline int __float2int_ru(float a) { return (int)ceilf(a); }
static inline float __int2float_rn(int a) { return (float)a; }
static inline int __popc(unsigned a) { return __builtin_popcount(a); }
static inline int __popcll(unsigned long long a) { return __builtin_popcountll(a); }
static inline int __clz(int a) { return a ? __builtin_clz((unsigned)a) : 32; }
static inline int __ffs(int a) { return __builtin_ffs(a); }
static inline unsigned __brev(unsigned a) {
  unsigned r = 0;
  for (int i = 0; i < 32; i++) r |= (a >> i & 1u) << (31 - i);
  return r;
}
static inline int __mul24(int a, int b) { return a * b; }
static inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }

#endif
