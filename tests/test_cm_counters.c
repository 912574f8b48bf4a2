/*
** test_cm_counters.c -- counted cache traffic (targets/host/hw_count.c)
** against independent expectations: hand-written kernels whose line
** counts follow from their buffer sizes (a cold stream: every line once at
** every level; a buffer that fits in L1 re-read 8 times: one pass of L1
** fills; one between L1 and L2 re-read 4 times: 4 passes of L1 fills under
** LRU, one of L2 fills; unaligned 64-byte loads: two lines each), the
** AVX-512 shim (a gemm schedule with masked
** edges built with it matches hk_gemm.reference natively, and its cold
** DRAM traffic lies between the compulsory footprint of A, B and C and that
** plus the packing buffers it fills), a candidate valgrind cannot decode
** (an error carrying valgrind's words), and the PAPI path (no counters
** here: the documented error). The machine's cache sizes are read from
** sysfs here, independently of the code under test. Cachegrind tests skip
** when valgrind is missing.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost_model/cm.h"
#include "measure/ms.h"
#include "targets/host/hk.h"
#include "targets/host/hw.h"
#include "targets/tg.h"

#define LINE 64
#define SLACK 8   /* lines: stack, the output's line, rounding */

static char cache_dir[64];   /* a private compile cache, removed at the end */
static cm_machine mach;

/* ---- The machine, read here from sysfs ---- */

/* Size in bytes of cpu0's data or unified cache of this level; 0 if none. */
static double sysfs_size(int level) {
  for (int i = 0; i < 16; i++) {
    char path[96], type[32];
    int lv = 0;
    long kb = 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (!f) break;
    int ok = fscanf(f, "%d", &lv) == 1;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    if (!ok || lv != level || !(f = fopen(path, "r"))) continue;
    ok = fscanf(f, "%31s", type) == 1;
    fclose(f);
    if (!ok || !strcmp(type, "Instruction")) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!(f = fopen(path, "r"))) continue;
    ok = fscanf(f, "%ldK", &kb) == 1;
    fclose(f);
    if (ok) return (double)kb * 1024;
  }
  return 0;
}

static int setup(void **state) {
  (void)state;
  snprintf(cache_dir, sizeof cache_dir, "/tmp/rooftune_cgtest_XXXXXX");
  if (!mkdtemp(cache_dir)) return -1;
  double fallback[3] = {32768, 1 << 20, 32 << 20};
  memset(&mach, 0, sizeof mach);
  for (int l = 0; l < 3; l++) {
    mach.cache[l] = sysfs_size(l + 1);
    if (mach.cache[l] <= 0) mach.cache[l] = fallback[l];
  }
  mach.line = LINE;
  mach.vector_regs = 32;
  mach.simd_floats = 16;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  DIR *d = opendir(cache_dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    char p[400];
    if (e->d_name[0] == '.') continue;
    snprintf(p, sizeof p, "%s/%s", cache_dir, e->d_name);
    unlink(p);
  }
  if (d) closedir(d);
  rmdir(cache_dir);
  return 0;
}

static void need_cachegrind(void) {
  const char *why;
  if (!hw_cachegrind_available(&why)) {
    print_message("skipped: cachegrind unavailable: %s\n", why);
    skip();
  }
}

/* ---- A test kernel: x (N floats, input) summed R times into out[0] ---- */

static int sum_buffers(const kn_problem *pb, kn_buf *b) {
  b[0] = (kn_buf){.name = "x", .n = kn_int(pb, "N"), .out = 0};
  b[1] = (kn_buf){.name = "out", .n = 16, .out = 1};
  return 2;
}

static const kn_kernel sum_kernel = {
  .name = "sum", .summary = "test: R passes over x", .buffers = sum_buffers,
};

/* Float additions in order: the compiler can neither merge the passes
** nor reorder the sum, so every pass reads all of x. */
static char *sum_src(long n, int passes) {
  rt_str s = {0};
  rt_str_printf(&s,
      "#define N %ldL\n#define R %d\n"
      "int rk_run(float *const *bufs) {\n"
      "  const float *x = bufs[0];\n  float s = 0;\n"
      "  for (int r = 0; r < R; r++)\n"
      "    for (long i = 0; i < N; i++) s += x[i];\n"
      "  bufs[1][0] = s;\n  return 0;\n}\n", n, passes);
  return s.s;
}

static kn_problem problem_n(long n) {
  kn_problem pb;
  memset(&pb, 0, sizeof pb);
  pb.n = 1;
  pb.name[0] = "N";
  pb.val[0] = sx_int(n);
  return pb;
}

/* Count the sum kernel over n floats read `passes` times. */
static void count_sum(long n, int passes, cm_traffic *tr) {
  kn_problem pb = problem_n(n);
  char *src = sum_src(n, passes);
  rt_err err = {0};
  int rc = hw_count_cachegrind(&sum_kernel, &pb, src, &mach, cache_dir, tr, &err);
  free(src);
  if (rc) fail_msg("cm_count_cachegrind: %s", err.msg);
  assert_string_equal(tr->source, "cachegrind");
  assert_true(isnan(tr->bytes[0]));   /* L1: accesses, not counted */
  /* lines filled into L1 >= into L2 >= from DRAM (each miss missed above) */
  assert_true(tr->bytes[1] >= tr->bytes[2] && tr->bytes[2] >= tr->bytes[3]);
  print_message("  sum N=%ld x%d: L2 %.0f L3 %.0f DRAM %.0f bytes, %.0f instr [%s]\n",
                n, passes, tr->bytes[1], tr->bytes[2], tr->bytes[3],
                tr->instructions, tr->config);
}

static long lines_of(double bytes) { return (long)ceil(bytes / LINE); }

static void assert_near_lines(double bytes, long lines, long slack) {
  long got = (long)(bytes / LINE);
  if (got < lines || got > lines + slack)
    fail_msg("%ld lines counted, expected %ld (+%ld)", got, lines, slack);
}

/* A cold stream: each line of x, and out's line, once at every level. */
static void test_stream_cold(void **state) {
  (void)state;
  need_cachegrind();
  long n = 50000;
  cm_traffic tr;
  count_sum(n, 1, &tr);
  long want = lines_of(4.0 * n) + 1;
  assert_near_lines(tr.bytes[1], want, SLACK);
  assert_near_lines(tr.bytes[2], want, SLACK);
  assert_near_lines(tr.bytes[3], want, SLACK);
  assert_true(tr.instructions >= n);   /* at least one per element */
  /* the simulated L3: a power-of-two set count, not larger than the real */
  const char *p = strstr(tr.config, "L3=");
  assert_non_null(p);
  long size = 0;
  int ways = 0;
  assert_int_equal(sscanf(p, "L3=%ld,%d", &size, &ways), 2);
  long sets = size / (LINE * (long)ways);
  assert_true(sets > 0 && (sets & (sets - 1)) == 0 && sets * LINE * ways == size);
  assert_true(size <= mach.cache[2] && size > mach.cache[2] / 2);
}

/* A buffer of a third of L1 read 8 times: L1 fills one pass, not 8. */
static void test_l1_reuse(void **state) {
  (void)state;
  need_cachegrind();
  long n = (long)(mach.cache[0] / 3 / 4);
  cm_traffic tr;
  count_sum(n, 8, &tr);
  long one = lines_of(4.0 * n) + 1;
  assert_near_lines(tr.bytes[1], one, SLACK);
  assert_near_lines(tr.bytes[3], one, SLACK);
  assert_true(tr.instructions >= 8.0 * n);   /* it did read 8 times */
}

/* A buffer of 4 x L1 (below L2) read 4 times: cyclic reads thrash an LRU
** L1, so L1 fills 4 passes; L2 keeps it, so L2 fills one pass. */
static void test_l2_reuse(void **state) {
  (void)state;
  need_cachegrind();
  double bytes = 4 * mach.cache[0];
  if (bytes > mach.cache[1] / 2) bytes = mach.cache[1] / 2;
  if (bytes < 2 * mach.cache[0]) skip();   /* no room between L1 and L2 */
  long n = (long)(bytes / 4);
  cm_traffic tr;
  count_sum(n, 4, &tr);
  long pass = lines_of(4.0 * n);
  assert_near_lines(tr.bytes[1], 4 * pass + 1, SLACK);
  assert_near_lines(tr.bytes[2], pass + 1, SLACK);
  assert_near_lines(tr.bytes[3], pass + 1, SLACK);
}

/* 64-byte loads at byte offset 40 of every other line pair (AVX-512
** intrinsics, as the generators write them): each brings in two lines, so
** L1 fills are 2 per load. (Cachegrind counts a straddling access as one
** miss, so a shim making 32-byte accesses at any alignment would show 1.) */
static void test_unaligned_vectors(void **state) {
  (void)state;
  need_cachegrind();
  long loads = 1000;
  rt_str s = {0};
  rt_str_printf(&s,
      "#include <immintrin.h>\n"
      "#ifndef __AVX512F__\n#error \"needs AVX-512F\"\n#endif\n"
      "int rk_run(float *const *bufs) {\n"
      "  __m512 acc = _mm512_setzero_ps();\n"
      "  for (long j = 0; j < %ld; j++)\n"
      "    acc = _mm512_add_ps(acc, _mm512_loadu_ps(bufs[0] + 10 + 32 * j));\n"
      "  _mm512_storeu_ps(bufs[1], acc);\n  return 0;\n}\n", loads);
  kn_problem pb = problem_n(32 * loads + 32);
  cm_traffic tr;
  rt_err err = {0};
  int rc = hw_count_cachegrind(&sum_kernel, &pb, s.s, &mach, cache_dir, &tr, &err);
  free(s.s);
  if (rc) fail_msg("cm_count_cachegrind: %s", err.msg);
  print_message("  %ld unaligned 64-byte loads: L2 %.0f L3 %.0f DRAM %.0f bytes\n",
                loads, tr.bytes[1], tr.bytes[2], tr.bytes[3]);
  assert_near_lines(tr.bytes[1], 2 * loads + 1, SLACK);
  assert_near_lines(tr.bytes[3], 2 * loads + 1, SLACK);
}

/* ---- The shim, on gemm ---- */

static sp_space *gemm_space(const char *set) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = sp_parse_bindings(set, a, &b, &err);
  sp_space *sp = nb < 0 ? NULL : sp_load_file(hk_gemm.space, b, nb, &err);
  free(b);
  sx_arena_free(a);
  if (!sp) fail_msg("gemm %s: %s", set, err.msg);
  return sp;
}

/* Set bool parameter name of cfg to v. */
static void set_bool(const sp_space *sp, int *cfg, const char *name, int v) {
  int p = sp_param_index(sp, name);
  assert_true(p >= 0);
  for (int i = 0; i < sp_nvalues(sp, p); i++)
    if (sp_value(sp, p, i)->u.i == v) cfg[p] = i;
}

/* The schedule (default, or without packing) of gemm 37 x 45 x 29: mr 6
** leaves a 1-row edge, 45 columns a 3-vector edge with a 13-lane mask. */
static char *gemm_case(sp_space *sp, int pack, kn_problem *pb, long *pa, long *pbl) {
  int cfg[32];
  assert_true(sp_nparams(sp) <= 32);
  assert_true(sp_default_config(sp, cfg));
  set_bool(sp, cfg, "pack_a", pack);
  set_bool(sp, cfg, "pack_b", pack);
  assert_true(sp_valid(sp, cfg, NULL));
  kn_problem_from_space(pb, sp);
  long m = kn_int(pb, "M"), n = kn_int(pb, "N"), k = kn_int(pb, "K");
  long mr = kn_param_int(sp, cfg, "mr"), nr = 16 * kn_param_int(sp, cfg, "nr_vecs");
  assert_true(m % mr != 0 && n % nr != 0 && n % 16 != 0);   /* edges, masked */
  assert_true(kn_param_int(sp, cfg, "mc") >= m && kn_param_int(sp, cfg, "nc") >= n &&
              kn_param_int(sp, cfg, "kc") >= k);            /* one block each */
  /* lines of the packed panels it fills: whole mr-row and nr-column panels */
  *pa = pack ? lines_of(4.0 * ((m + mr - 1) / mr * mr) * k) : 0;
  *pbl = pack ? lines_of(4.0 * ((n + nr - 1) / nr * nr) * k) : 0;
  return hk_gemm.codegen(pb, sp, cfg);
}

/* Built with the shim, run natively under the driver: the same C as
** hk_gemm.reference within hk_gemm.tolerance, packed or not. */
static void test_shim_native(void **state) {
  (void)state;
  sp_space *sp = gemm_space("M=37,N=45,K=29");
  for (int pack = 0; pack <= 1; pack++) {
    kn_problem pb;
    long pa, pbl;
    char *src = gemm_case(sp, pack, &pb, &pa, &pbl);
    kn_buf b[KN_MAXBUF];
    int nb = hk_gemm.buffers(&pb, b);
    float *io[KN_MAXBUF], *ref[KN_MAXBUF];
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    for (int i = 0; i < nb; i++) {
      io[i] = malloc((size_t)b[i].n * sizeof(float));
      ref[i] = malloc((size_t)b[i].n * sizeof(float));
      for (int64_t j = 0; j < b[i].n; j++)
        io[i][j] = b[i].out ? NAN : (float)(2 * gsl_rng_uniform(rng) - 1);
      memcpy(ref[i], io[i], (size_t)b[i].n * sizeof(float));
    }
    gsl_rng_free(rng);
    rt_err err = {0};
    if (hw_run_shimmed(&hk_gemm, &pb, src, cache_dir, io, &err))
      fail_msg("cm_run_shimmed (pack %d): %s", pack, err.msg);
    hk_gemm.reference(&pb, ref);
    double emax = 0, rmax = 0;
    for (int64_t j = 0; j < b[2].n; j++) {
      double d = fabs((double)io[2][j] - ref[2][j]);
      emax = isnan(d) || d > emax ? (isnan(d) ? INFINITY : d) : emax;
      rmax = fmax(rmax, fabs(ref[2][j]));
    }
    print_message("  gemm 37x45x29 pack=%d via shim: max rel err %.3g (tolerance %.3g)\n",
                  pack, emax / rmax, hk_gemm.tolerance(&pb));
    assert_true(emax / rmax <= hk_gemm.tolerance(&pb));
    for (int i = 0; i < nb; i++) free(io[i]), free(ref[i]);
    free(src);
  }
  sp_free(sp);
}

/* Under cachegrind, a cold gemm moves at least every line of A, B and C
** from DRAM, and at most those plus the packed panels it fills. */
static void test_shim_cachegrind(void **state) {
  (void)state;
  need_cachegrind();
  sp_space *sp = gemm_space("M=37,N=45,K=29");
  for (int pack = 0; pack <= 1; pack++) {
    kn_problem pb;
    long pa, pbl;
    char *src = gemm_case(sp, pack, &pb, &pa, &pbl);
    long m = kn_int(&pb, "M"), n = kn_int(&pb, "N"), k = kn_int(&pb, "K");
    long foot = lines_of(4.0 * m * k) + lines_of(4.0 * k * n) + lines_of(4.0 * m * n);
    cm_traffic tr;
    rt_err err = {0};
    if (hw_count_cachegrind(&hk_gemm, &pb, src, &mach, cache_dir, &tr, &err))
      fail_msg("cm_count_cachegrind (pack %d): %s", pack, err.msg);
    long dram = (long)(tr.bytes[3] / LINE);
    print_message("  gemm 37x45x29 pack=%d: DRAM %ld lines (footprint %ld, packing "
                  "%ld), L2 fills %ld, L3 fills %ld, %.0f instr\n", pack, dram,
                  foot, pa + pbl, (long)(tr.bytes[1] / LINE),
                  (long)(tr.bytes[2] / LINE), tr.instructions);
    assert_true(dram >= foot);
    assert_true(dram <= foot + pa + pbl + 2 * SLACK);
    assert_true(tr.bytes[1] >= tr.bytes[2] && tr.bytes[2] >= tr.bytes[3]);
    /* at least one FMA (16 lanes) instruction per 16 multiply-adds */
    assert_true(tr.instructions >= (double)m * n * k / 16);
    free(src);
  }
  sp_free(sp);
}

/* AVX-512 that bypasses the shim: valgrind stops it; the error says so. */
static void test_undecodable(void **state) {
  (void)state;
  need_cachegrind();
  const char *src =
      "int rk_run(float *const *bufs) {\n"
      "  __asm__ volatile(\"vpxord %%zmm1, %%zmm1, %%zmm1\" ::: \"xmm1\");\n"
      "  bufs[1][0] = 1;\n  return 0;\n}\n";
  kn_problem pb = problem_n(16);
  cm_traffic tr;
  rt_err err = {0};
  assert_int_equal(hw_count_cachegrind(&sum_kernel, &pb, src, &mach, cache_dir,
                                       &tr, &err), -1);
  print_message("  error: %s\n", err.msg);
  assert_non_null(strstr(err.msg, "cachegrind"));
  assert_non_null(strstr(err.msg, "SIGILL"));   /* valgrind's own words */
  assert_true(isnan(tr.bytes[3]));
  /* and a compile error is one too */
  assert_int_equal(hw_count_cachegrind(&sum_kernel, &pb, "int rk_run(", &mach,
                                       cache_dir, &tr, &err), -1);
  assert_non_null(strstr(err.msg, "compiling"));
}

/* PAPI: without counters, the documented error; with them, counts. */
static void test_papi(void **state) {
  (void)state;
  sp_space *sp = gemm_space("M=37,N=45,K=29");
  kn_problem pb;
  long pa, pbl;
  char *src = gemm_case(sp, 1, &pb, &pa, &pbl);
  ms_opts o;
  ms_opts_default(&o);
  o.cache_dir = cache_dir;
  o.time_cap = 0.05;
  o.min_reps = 2;
  cm_traffic tr;
  rt_err err = {0};
  int rc = hw_count_papi(&hk_gemm, &pb, src, &o, &tr, &err);
  if (!hw_papi_available(NULL)) {
    assert_int_equal(rc, -1);
    print_message("  papi: %s\n", err.msg);
    assert_true(!strncmp(err.msg, "no hardware counters: ", 22));
  } else {
    if (rc) fail_msg("cm_count_papi: %s", err.msg);
    assert_string_equal(tr.source, "papi");
    assert_true(tr.bytes[1] > 0 && tr.bytes[2] >= 0 && tr.bytes[3] >= 0);
  }
  free(src);
  sp_free(sp);
}

/* The host's cache list (targets/host/hw.c), which sizes the simulated
** caches, against this file's own sysfs reading; and the ways the
** ceilings record come from it. */
static void test_hw_caches(void **state) {
  (void)state;
  hw_cache hc[16];
  int n = hw_caches(hc, 16), found = 0;
  for (int level = 1; level <= 3; level++) {
    const hw_cache *h = hw_cache_find(hc, n, level, 0);
    double want = sysfs_size(level);
    if (!want) {
      assert_true(!h || h->bytes == 0);
      continue;
    }
    assert_non_null(h);
    assert_true(h->bytes == want);
    assert_true(h->sharers >= 1);
    found++;
  }
  assert_true(found >= 1 || n == 0);
  assert_null(hw_cache_find(hc, n, 9, 0));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_stream_cold),
    cmocka_unit_test(test_l1_reuse),
    cmocka_unit_test(test_l2_reuse),
    cmocka_unit_test(test_unaligned_vectors),
    cmocka_unit_test(test_shim_native),
    cmocka_unit_test(test_shim_cachegrind),
    cmocka_unit_test(test_undecodable),
    cmocka_unit_test(test_papi),
    cmocka_unit_test(test_hw_caches),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
