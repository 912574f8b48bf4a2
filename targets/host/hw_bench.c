/*
** hw_bench.c -- the measured ceilings of the host, in the spirit of the
** Empirical Roofline Toolkit, compiled into rooftune (no compiler at bench
** time): peak FP32 FLOP/s of each instruction class the CPU supports
** (scalar, SSE, AVX2, AVX-512; add, mul, FMA), each a loop of 12
** independent dependency chains per thread, and read bandwidth over a
** sweep of working-set sizes from 4 KiB to beyond the last-level cache,
** one thread and all threads (threads pinned to CPUs, started together at
** a barrier; a figure is total work / wall time from the first start to
** the last end). Each point is the median of o->repeats timed runs of
** about o->time_per_point seconds. The bandwidth of a level is the sweep's
** value at a working set well inside it: half the level's per-thread share
** of its capacity for L1; for L2 and L3 the geometric middle between the
** level below's capacity and that half (a shared L3 is shared with other
** cores and tenants too: half of what sysfs lists may not be cache any
** more); DRAM's is the largest working set. Cache sizes come from sysfs.
** The host row's ceilings bench (hw_bench; moved from
** cost_model/cm_bench.c, whose JSON and options helpers stay in
** cost_model/cm_ceilings.c).
*/
#include "hw.h"

#include "../../cost_model/cm.h"

#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif



/* ---- Peak kernels: 12 independent chains of one instruction ---- */

#define CHAINS 12

#if defined(__x86_64__)
/* Kernels run uninstrumented under sanitizers (the measured loop is
** the loop, not its checks). One string per sanitizer: clang ignores a
** comma-separated list ("unknown sanitizer 'address,undefined'"). */
#define NO_SAN __attribute__((no_sanitize("address", "undefined")))

/* One kernel: iters iterations of CHAINS operations OP on registers of
** type T. b = 1 and c = 0 are hidden from the compiler, so the chains keep
** finite, normal values and nothing can be folded; the empty asm with
** every accumulator as an in/out operand consumes each result and stops
** the compiler from merging chains into wider vectors. */
#define PEAK_KERNEL(NAME, ATTR, T, SET1, C, OP)                                          \
  static NO_SAN ATTR void NAME(long iters) {                                             \
    T b = SET1(1.0f), c = SET1(0.0f);                                                    \
    __asm__ volatile("" : C(b), C(c));                                                   \
    T a0 = SET1(1.0f), a1 = SET1(1.1f), a2 = SET1(1.2f), a3 = SET1(1.3f), a4 = SET1(1.4f), \
      a5 = SET1(1.5f), a6 = SET1(1.6f), a7 = SET1(1.7f), a8 = SET1(1.8f), a9 = SET1(1.9f), \
      a10 = SET1(2.0f), a11 = SET1(2.1f);                                                \
    for (long i = 0; i < iters; i++) {                                                   \
      a0 = OP(a0); a1 = OP(a1); a2 = OP(a2); a3 = OP(a3); a4 = OP(a4); a5 = OP(a5);      \
      a6 = OP(a6); a7 = OP(a7); a8 = OP(a8); a9 = OP(a9); a10 = OP(a10); a11 = OP(a11);  \
      __asm__ volatile("" : C(a0), C(a1), C(a2), C(a3), C(a4), C(a5), C(a6), C(a7),     \
                       C(a8), C(a9), C(a10), C(a11));                                    \
    }                                                                                    \
  }

#define T_FMA __attribute__((target("fma")))
#define T_AVX2 __attribute__((target("avx2")))
#define T_AVX2FMA __attribute__((target("avx2,fma")))
#define T_AVX512 __attribute__((target("avx512f")))

#define OP_ADD_SS(a) _mm_add_ss(a, c)
#define OP_FMA_SS(a) _mm_fmadd_ss(a, b, c)
#define OP_ADD_PS(a) _mm_add_ps(a, c)
#define OP_MUL_PS(a) _mm_mul_ps(a, b)
#define OP_FMA_PS(a) _mm_fmadd_ps(a, b, c)
#define OP_ADD_256(a) _mm256_add_ps(a, c)
#define OP_FMA_256(a) _mm256_fmadd_ps(a, b, c)
#define OP_ADD_512(a) _mm512_add_ps(a, c)
#define OP_FMA_512(a) _mm512_fmadd_ps(a, b, c)

PEAK_KERNEL(k_scalar_add, , __m128, _mm_set1_ps, "+x", OP_ADD_SS)
PEAK_KERNEL(k_scalar_fma, T_FMA, __m128, _mm_set1_ps, "+x", OP_FMA_SS)
PEAK_KERNEL(k_sse_add, , __m128, _mm_set1_ps, "+x", OP_ADD_PS)
PEAK_KERNEL(k_sse_mul, , __m128, _mm_set1_ps, "+x", OP_MUL_PS)
PEAK_KERNEL(k_sse_fma, T_FMA, __m128, _mm_set1_ps, "+x", OP_FMA_PS)
PEAK_KERNEL(k_avx2_add, T_AVX2, __m256, _mm256_set1_ps, "+x", OP_ADD_256)
PEAK_KERNEL(k_avx2_fma, T_AVX2FMA, __m256, _mm256_set1_ps, "+x", OP_FMA_256)
PEAK_KERNEL(k_avx512_add, T_AVX512, __m512, _mm512_set1_ps, "+v", OP_ADD_512)
PEAK_KERNEL(k_avx512_fma, T_AVX512, __m512, _mm512_set1_ps, "+v", OP_FMA_512)

enum { ISA_BASE, ISA_FMA, ISA_AVX2FMA, ISA_AVX512 };

/* Whether the CPU (and the OS's saved register state) supports isa. */
static int has_isa(int isa) {
  __builtin_cpu_init();
  switch (isa) {
  case ISA_FMA: return __builtin_cpu_supports("fma");
  case ISA_AVX2FMA: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  case ISA_AVX512: return __builtin_cpu_supports("avx512f");
  default: return 1;
  }
}

typedef struct peak_def {
  const char *name;
  int bits, fma, lanes, isa;
  void (*kernel)(long iters);
} peak_def;

static const peak_def peak_defs[] = {
  {"scalar-add", 32, 0, 1, ISA_BASE, k_scalar_add},
  {"scalar-fma", 32, 1, 1, ISA_FMA, k_scalar_fma},
  {"sse-add", 128, 0, 4, ISA_BASE, k_sse_add},
  {"sse-mul", 128, 0, 4, ISA_BASE, k_sse_mul},
  {"sse-fma", 128, 1, 4, ISA_FMA, k_sse_fma},
  {"avx2-add", 256, 0, 8, ISA_AVX2FMA, k_avx2_add},
  {"avx2-fma", 256, 1, 8, ISA_AVX2FMA, k_avx2_fma},
  {"avx512-add", 512, 0, 16, ISA_AVX512, k_avx512_add},
  {"avx512-fma", 512, 1, 16, ISA_AVX512, k_avx512_fma},
};
#define NPEAK ((int)(sizeof peak_defs / sizeof *peak_defs))

/* ---- Read kernels: passes over n floats (a multiple of 128), 8 chains ---- */

/* GCC vector types: loads and adds written as plain C on them stay in the
** NO_SAN function (the intrinsics' inline bodies would be instrumented). */
typedef float v4sf __attribute__((vector_size(16)));
typedef float v8sf __attribute__((vector_size(32)));
typedef float v16sf __attribute__((vector_size(64)));

/* The loads stay inside the buffer by construction; a sanitizer's check of
** each would measure the check instead of the memory. */
#define READ_KERNEL(NAME, ATTR, T, C)                                                    \
  static NO_SAN ATTR void NAME(const float *p, size_t n, long passes) {                 \
    enum { W = sizeof(T) / sizeof(float) };                                              \
    T a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};    \
    for (long r = 0; r < passes; r++)                                                    \
      for (size_t i = 0; i < n; i += 8 * W) {                                            \
        const T *q = (const T *)(p + i);                                                 \
        a0 += q[0]; a1 += q[1]; a2 += q[2]; a3 += q[3];                                  \
        a4 += q[4]; a5 += q[5]; a6 += q[6]; a7 += q[7];                                  \
      }                                                                                  \
    T sum = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));                           \
    __asm__ volatile("" : : C(sum));                                                     \
  }

READ_KERNEL(r_sse, , v4sf, "x")
READ_KERNEL(r_avx2, T_AVX2, v8sf, "x")
READ_KERNEL(r_avx512, T_AVX512, v16sf, "v")

typedef void (*read_fn)(const float *p, size_t n, long passes);

static read_fn widest_read(void) {
  return has_isa(ISA_AVX512) ? r_avx512 : has_isa(ISA_AVX2FMA) ? r_avx2 : r_sse;
}
#endif /* __x86_64__ */

/* ---- A team of pinned threads started together ---- */

#define MAXTHREADS 256

typedef struct team {
  int n;                      /* threads */
  const int *cpus;            /* thread i runs on cpus[i % ncpus] */
  int ncpus;
  void (*work)(void *ctx, int tid, long units);
  void *ctx;
  long units;                 /* work units per thread */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int go;                     /* 1: all threads exist; -1: give up */
  pthread_barrier_t bar;
  double t0[MAXTHREADS], t1[MAXTHREADS];
} team;

typedef struct member { team *t; int tid; } member;

static void *member_main(void *arg) {
  member *m = arg;
  team *t = m->t;
  pthread_mutex_lock(&t->mu);
  while (!t->go) pthread_cond_wait(&t->cv, &t->mu);
  int go = t->go;
  pthread_mutex_unlock(&t->mu);
  if (go < 0) return NULL;
  pthread_barrier_wait(&t->bar);
  t->t0[m->tid] = rt_now();
  t->work(t->ctx, m->tid, t->units);
  t->t1[m->tid] = rt_now();
  return NULL;
}

/* Run work(ctx, tid, units) on t->n pinned threads that pass a barrier
** together once all exist: the seconds from the first start to the last
** end, or -1 with err. */
static double team_run(team *t, rt_err *err) {
  pthread_t th[MAXTHREADS];
  member m[MAXTHREADS];
  pthread_mutex_init(&t->mu, NULL);
  pthread_cond_init(&t->cv, NULL);
  pthread_barrier_init(&t->bar, NULL, (unsigned)t->n);
  t->go = 0;
  int started = 0, rc = 0;
  for (int i = 0; i < t->n; i++) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(t->cpus[i % t->ncpus], &set);
    pthread_attr_setaffinity_np(&attr, sizeof set, &set);
    m[i] = (member){t, i};
    rc = pthread_create(&th[i], &attr, member_main, &m[i]);
    pthread_attr_destroy(&attr);
    if (rc) rc = pthread_create(&th[i], NULL, member_main, &m[i]);  /* pinning refused */
    if (rc) {
      rt_err_set(err, "cannot start thread %d of %d: %s", i + 1, t->n, strerror(rc));
      break;
    }
    started++;
  }
  pthread_mutex_lock(&t->mu);
  t->go = rc ? -1 : 1;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->mu);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&t->bar);
  pthread_cond_destroy(&t->cv);
  pthread_mutex_destroy(&t->mu);
  if (rc) return -1;
  double lo = t->t0[0], hi = t->t1[0];
  for (int i = 1; i < t->n; i++) {
    if (t->t0[i] < lo) lo = t->t0[i];
    if (t->t1[i] > hi) hi = t->t1[i];
  }
  return hi - lo;
}

/* Units of work for one thread to take about target seconds: doubled
** from 1 until a run takes a tenth of it, then scaled. 0 with err. */
static long calibrate(team *t, double target, rt_err *err) {
  int n = t->n;
  t->n = 1;
  long units = 1;
  double s = 0;
  for (;;) {
    t->units = units;
    if ((s = team_run(t, err)) < 0) {
      t->n = n;
      return 0;
    }
    if (s >= target / 10 || units > (1L << 50)) break;
    units *= s < target / 1000 ? 16 : 2;
  }
  t->n = n;
  double u = (double)units * target / (s > 0 ? s : 1e-9);
  return u < 1 ? 1 : u > 9e15 ? (long)9e15 : (long)u;
}

/* The median of `repeats` rates work_per_run / seconds (t->units set). */
static int median_rate(team *t, int repeats, double work_per_run, double *out, rt_err *err) {
  double r[64];
  if (repeats > 64) repeats = 64;
  for (int i = 0; i < repeats; i++) {
    double s = team_run(t, err);
    if (s < 0) return -1;
    r[i] = work_per_run / (s > 0 ? s : 1e-9);
  }
  gsl_sort(r, 1, (size_t)repeats);
  *out = gsl_stats_median_from_sorted_data(r, 1, (size_t)repeats);
  return 0;
}

/* ---- The machine: CPUs and caches ---- */

/* The CPUs this process may run on; returns their number (>= 1). */
static int allowed_cpus(int *cpus, int cap) {
  cpu_set_t set;
  int n = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
      if (CPU_ISSET(c, &set)) cpus[n++] = c;
  if (!n) cpus[n++] = 0;
  return n;
}

/* Data/unified cache capacities of cpu0 by level (bytes), their
** associativity and how many CPUs share each; levels sysfs does not list
** get 32 KiB, 1 MiB, 8 MiB and are taken as private. */
static void read_caches(double cache[CM_NLEVEL], double ways[CM_NLEVEL], int sharers[CM_NLEVEL]) {
  static const double fallback[3] = {32768, 1048576, 8388608};
  hw_cache hc[16];
  int n = hw_caches(hc, 16);
  for (int l = 0; l < CM_NLEVEL; l++) {
    const hw_cache *h = l < 3 ? hw_cache_find(hc, n, l + 1, 0) : NULL;
    int ok = h && h->bytes > 0;
    cache[l] = ok ? h->bytes : l < 3 ? fallback[l] : 0;
    ways[l] = ok ? h->ways : 0;
    sharers[l] = ok ? h->sharers : 1;
  }
}

/* ---- The measurements ---- */

#if defined(__x86_64__)
typedef struct peak_ctx { const peak_def *def; } peak_ctx;

static void peak_work(void *ctx, int tid, long units) {
  (void)tid;
  ((peak_ctx *)ctx)->def->kernel(units);
}

/* Fill c->cls with every class the CPU supports, 1 and n threads. */
static int bench_peak(const cm_bench_opts *o, team *t, cm_ceilings *c, rt_err *err) {
  c->nclass = 0;
  for (int k = 0; k < NPEAK && c->nclass < CM_MAXCLASS; k++) {
    const peak_def *d = &peak_defs[k];
    if (!has_isa(d->isa)) continue;
    peak_ctx pc = {d};
    t->work = peak_work;
    t->ctx = &pc;
    long iters = calibrate(t, o->time_per_point, err);
    if (!iters) return -1;
    double per_thread = (double)iters * CHAINS * d->lanes * (d->fma ? 2 : 1);
    cm_class *cl = &c->cls[c->nclass];
    memset(cl, 0, sizeof *cl);
    snprintf(cl->name, sizeof cl->name, "%s", d->name);
    cl->bits = d->bits;
    cl->fma = d->fma;
    int n = t->n;
    t->units = iters;
    t->n = 1;
    int bad = median_rate(t, o->repeats, per_thread, &cl->flops[0], err);
    t->n = n;
    if (bad || median_rate(t, o->repeats, per_thread * n, &cl->flops[1], err)) return -1;
    c->nclass++;
  }
  return 0;
}

typedef struct read_ctx {
  float *buf[MAXTHREADS];
  size_t nfloats;             /* per thread, a multiple of 128 */
  read_fn fn;
} read_ctx;

static void read_work(void *ctx, int tid, long units) {
  read_ctx *r = ctx;
  r->fn(r->buf[tid], r->nfloats, units);
}

/* First touch: each thread fills its own buffer (pages placed near it;
** written, so no read ever sees the shared zero page). */
static void fill_work(void *ctx, int tid, long units) {
  read_ctx *r = ctx;
  float *p = r->buf[tid];
  for (size_t i = 0; i < (size_t)units; i++) p[i] = 0.001f;
}
#endif

/* Round a working set to whole 512-byte blocks (one unrolled step of the
** widest read kernel), at least one. */
static double round_ws(double b) {
  double r = floor(b / 512) * 512;
  return r < 512 ? 512 : r;
}

#if defined(__x86_64__)
/* The sweep and the level figures. */
static int bench_bw(const cm_bench_opts *o, team *t, cm_ceilings *c, rt_err *err) {
  int sharers[CM_NLEVEL];
  read_caches(c->cache, c->ways, sharers);
  c->cache[3] = 0;
  double cap = o->quick ? 64.0 * 1048576 : 512.0 * 1048576;
  double max_ws = round_ws(fmin(4 * c->cache[2], cap));
  if (max_ws < 4096) max_ws = 4096;
  /* Working sets of the levels, per thread: [level][0: one thread, 1: all]
  ** (see the top of this file). */
  double at[CM_NLEVEL][2];
  for (int l = 0; l < 3; l++)
    for (int m = 0; m < 2; m++) {
      int share = m ? (t->n < sharers[l] ? t->n : sharers[l]) : 1;
      double hi = fmin(c->cache[l] / share / 2, max_ws / 2), lo = l ? c->cache[l - 1] : hi;
      at[l][m] = round_ws(lo < hi ? sqrt(lo * hi) : hi);
    }
  at[3][0] = at[3][1] = max_ws;
  /* The sweep: the levels' working sets first (always kept), then a
  ** geometric series from 4 KiB in steps of sqrt(2) (4 in quick mode). */
  double sizes[CM_MAXSWEEP];
  int n = 0;
  for (int l = 0; l < CM_NLEVEL; l++)
    for (int m = 0; m < 2; m++) cm_sweep_insert(sizes, &n, CM_MAXSWEEP, at[l][m]);
  double step = o->quick ? 4.0 : M_SQRT2;
  for (double b = 4096; b < max_ws * 0.99 && n < CM_MAXSWEEP; b *= step)
    cm_sweep_insert(sizes, &n, CM_MAXSWEEP, round_ws(b));
  read_ctx rc = {.fn = widest_read()};
  size_t maxf = (size_t)(max_ws / sizeof(float));
  int bad = 0;
  for (int i = 0; i < t->n && !bad; i++) {
    rc.buf[i] = aligned_alloc(64, maxf * sizeof(float));
    if (!rc.buf[i]) {
      rt_err_set(err, "cannot allocate %d buffers of %.0f MiB for the bandwidth sweep", t->n,
                 max_ws / 1048576);
      bad = 1;
    }
  }
  t->ctx = &rc;
  if (!bad) {
    t->work = fill_work;
    t->units = (long)maxf;
    bad = team_run(t, err) < 0;
  }
  c->nsweep = 0;
  for (int k = 0; k < n && !bad; k++) {
    cm_sweep_pt *pt = &c->sweep[c->nsweep];
    pt->bytes = sizes[k];
    rc.nfloats = (size_t)(sizes[k] / sizeof(float));
    t->work = read_work;
    long passes = calibrate(t, o->time_per_point, err);   /* also warms the caches */
    if (!passes) {
      bad = 1;
      break;
    }
    int nt = t->n;
    t->units = passes;
    t->n = 1;
    bad = median_rate(t, o->repeats, sizes[k] * (double)passes, &pt->bw[0], err);
    t->n = nt;
    if (bad) break;
    t->units = 1;   /* warm every thread's cache */
    bad = team_run(t, err) < 0;
    t->units = passes;
    if (bad || (bad = median_rate(t, o->repeats, sizes[k] * (double)passes * nt, &pt->bw[1], err))) break;
    c->nsweep++;
  }
  for (int i = 0; i < t->n; i++) free(rc.buf[i]);
  if (bad) return -1;
  for (int l = 0; l < CM_NLEVEL; l++)
    for (int m = 0; m < 2; m++)
      for (int k = 0; k < c->nsweep; k++)
        if (fabs(c->sweep[k].bytes - at[l][m]) <= 0.01 * at[l][m]) c->bw[l][m] = c->sweep[k].bw[m];
  return 0;
}
#endif

int hw_bench(const cm_bench_opts *o, cm_ceilings *c, rt_err *err) {
  memset(c, 0, sizeof *c);
#if !defined(__x86_64__)
  (void)o;
  rt_err_set(err, "the ceilings microbenchmarks are written for x86-64 CPUs");
  return -1;
#else
  if (cm_bench_begin(o, c->measured, sizeof c->measured, err)) return -1;
  double t0 = rt_now();
  int cpus[MAXTHREADS];
  int ncpus = allowed_cpus(cpus, MAXTHREADS);
  int n = o->threads > 0 ? o->threads : ncpus;
  if (n > MAXTHREADS) {
    rt_err_set(err, "at most %d threads", MAXTHREADS);
    return -1;
  }
  team *t = rt_calloc(1, sizeof *t);
  *t = (team){.n = n, .cpus = cpus, .ncpus = ncpus};
  c->threads = n;
  int rc = bench_peak(o, t, c, err) || bench_bw(o, t, c, err) ? -1 : 0;
  free(t);
  if (rc) return -1;
  for (int k = 0; k < c->nclass; k++)
    for (int m = 0; m < 2; m++)
      if (c->cls[k].flops[m] > c->peak[m]) c->peak[m] = c->cls[k].flops[m];
  c->seconds = rt_now() - t0;
  return 0;
#endif
}

/* ---- JSON ---- */

/* A number, or null for a non-finite one (JSON has neither). */
