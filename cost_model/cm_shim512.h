/*
** cm_shim512.h -- force-included (cc -include) into a host candidate that
** cm_count_cachegrind builds for valgrind, which does not decode AVX-512:
** the candidate is compiled for x86-64-v3 (AVX2, FMA) and this header maps
** the AVX-512 intrinsics the generators use onto portable GCC vector code
** with the same memory footprint, so the cache lines a run touches are those
** of the AVX-512 build. __m512 becomes a 64-byte GCC vector (two ymm
** halves). Cachegrind counts an access that straddles two lines as one miss
** even when both lines miss, so no access made here straddles a line: a
** full load or store is two 32-byte accesses when the address is 32-byte
** aligned (each half inside one line), else sixteen 4-byte ones; masked
** loads and stores touch only the masked elements, one at a time (volatile,
** so the compiler cannot widen them into a full-width access that would
** reach past the buffer). memcpy/memset/memmove become inline copies
** touching exactly the same bytes in the same way (cachegrind would charge
** a libc call to libc, not to the candidate). Not for timing: only the
** traffic of this build counts.
*/
#ifndef CM_SHIM512_H
#define CM_SHIM512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __AVX512F__
#error "cm_shim512.h is for builds without AVX-512 (valgrind cannot decode it)"
#endif
#define __AVX512F__ 1

#pragma GCC diagnostic ignored "-Wpsabi"

typedef float cm_shim_v16 __attribute__((vector_size(64)));
typedef float cm_shim_v16u __attribute__((vector_size(64), aligned(4), may_alias));
typedef char cm_shim_b32 __attribute__((vector_size(32), aligned(32), may_alias));
typedef uint32_t cm_shim_u32 __attribute__((may_alias));

/* No access of n bytes at p straddles a line when p is n-aligned (n <= 64). */
#define CM_SHIM_ALIGNED(p, n) (((uintptr_t)(p) & ((n) - 1)) == 0)

#define __m512 cm_shim_v16
#define __mmask16 unsigned int

#define CM_SHIM_INLINE static inline __attribute__((always_inline, unused))

CM_SHIM_INLINE cm_shim_v16 cm_shim_setzero_ps(void) {
  return (cm_shim_v16){0};
}
CM_SHIM_INLINE cm_shim_v16 cm_shim_set1_ps(float x) {
  return (cm_shim_v16){x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
}
CM_SHIM_INLINE cm_shim_v16 cm_shim_loadu_ps(const void *p) {
  if (CM_SHIM_ALIGNED(p, 32)) return *(const cm_shim_v16u *)p;
  const volatile float *q = (const volatile float *)p;
  cm_shim_v16 r;
  for (int i = 0; i < 16; i++) r[i] = q[i];
  return r;
}
CM_SHIM_INLINE void cm_shim_storeu_ps(void *p, cm_shim_v16 v) {
  if (CM_SHIM_ALIGNED(p, 32)) {
    *(cm_shim_v16u *)p = v;
    return;
  }
  volatile float *q = (volatile float *)p;
  for (int i = 0; i < 16; i++) q[i] = v[i];
}
CM_SHIM_INLINE cm_shim_v16 cm_shim_add_ps(cm_shim_v16 a, cm_shim_v16 b) {
  return a + b;
}
CM_SHIM_INLINE cm_shim_v16 cm_shim_fmadd_ps(cm_shim_v16 a, cm_shim_v16 b,
                                            cm_shim_v16 c) {
  return a * b + c;
}
/* Elements whose mask bit is set are read; the others are 0. */
CM_SHIM_INLINE cm_shim_v16 cm_shim_maskz_loadu_ps(unsigned int m, const void *p) {
  const volatile float *q = (const volatile float *)p;
  cm_shim_v16 r = {0};
  for (int i = 0; i < 16; i++)
    if (m >> i & 1u) r[i] = q[i];
  return r;
}
/* Elements whose mask bit is set are written; the others are untouched. */
CM_SHIM_INLINE void cm_shim_mask_storeu_ps(void *p, unsigned int m, cm_shim_v16 v) {
  volatile float *q = (volatile float *)p;
  for (int i = 0; i < 16; i++)
    if (m >> i & 1u) q[i] = v[i];
}

#define _mm512_setzero_ps() cm_shim_setzero_ps()
#define _mm512_set1_ps(x) cm_shim_set1_ps(x)
#define _mm512_loadu_ps(p) cm_shim_loadu_ps(p)
#define _mm512_storeu_ps(p, v) cm_shim_storeu_ps((p), (v))
#define _mm512_add_ps(a, b) cm_shim_add_ps((a), (b))
#define _mm512_fmadd_ps(a, b, c) cm_shim_fmadd_ps((a), (b), (c))
#define _mm512_maskz_loadu_ps(m, p) cm_shim_maskz_loadu_ps((m), (p))
#define _mm512_mask_storeu_ps(p, m, v) cm_shim_mask_storeu_ps((p), (m), (v))

/* The byte functions: 32-byte blocks while both pointers are 32-byte
** aligned, else 4-byte words while both are 4-byte aligned, else bytes. */
CM_SHIM_INLINE void *cm_shim_memcpy(void *d, const void *s, size_t n) {
  char *dp = d;
  const char *sp = s;
  size_t i = 0;
  if (CM_SHIM_ALIGNED((uintptr_t)dp | (uintptr_t)sp, 32))
    for (; i + 32 <= n; i += 32)
      *(cm_shim_b32 *)(dp + i) = *(const cm_shim_b32 *)(sp + i);
  if (CM_SHIM_ALIGNED((uintptr_t)dp | (uintptr_t)sp, 4))
    for (; i + 4 <= n; i += 4)
      *(volatile cm_shim_u32 *)(dp + i) = *(const volatile cm_shim_u32 *)(sp + i);
  for (; i < n; i++) ((volatile char *)dp)[i] = sp[i];
  return d;
}
CM_SHIM_INLINE void *cm_shim_memmove(void *d, const void *s, size_t n) {
  char *dp = d;
  const char *sp = s;
  if (dp <= sp || dp >= sp + n) return cm_shim_memcpy(d, s, n);
  size_t i = n;   /* backwards: the overlap is read before it is written */
  if (CM_SHIM_ALIGNED((uintptr_t)dp | (uintptr_t)sp | n, 4))
    for (; i >= 4; i -= 4)
      *(volatile cm_shim_u32 *)(dp + i - 4) = *(const volatile cm_shim_u32 *)(sp + i - 4);
  for (; i > 0; i--) ((volatile char *)dp)[i - 1] = sp[i - 1];
  return d;
}
CM_SHIM_INLINE void *cm_shim_memset(void *d, int c, size_t n) {
  char *dp = d;
  size_t i = 0;
  uint32_t w = (unsigned char)c * 0x01010101u;
  if (CM_SHIM_ALIGNED(dp, 32)) {
    cm_shim_b32 v = {0};
    v += (char)c;
    for (; i + 32 <= n; i += 32) *(cm_shim_b32 *)(dp + i) = v;
  }
  if (CM_SHIM_ALIGNED(dp, 4))
    for (; i + 4 <= n; i += 4) *(volatile cm_shim_u32 *)(dp + i) = w;
  for (; i < n; i++) ((volatile char *)dp)[i] = (char)c;
  return d;
}
#define memcpy(d, s, n) cm_shim_memcpy((d), (s), (n))
#define memmove(d, s, n) cm_shim_memmove((d), (s), (n))
#define memset(d, c, n) cm_shim_memset((d), (c), (n))

#endif
