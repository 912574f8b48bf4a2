/*
** test_sp.c -- the space loader and engine against independent
** expectations: the brute-force counts published with the shared T1 files,
** a naive product-then-filter enumeration (every Cartesian combination in
** lexicographic order, each checked condition by condition), randomly
** generated spaces (property tests), a chi-square test of sampling
** uniformity, and the documented errors for malformed input.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_cdf.h>
#include <jansson.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search_spaces/sp.h"

#define SHARED "data/t1/"

/* ---- The naive reference ---- */

/* Every valid configuration, in lexicographic order of value indices, by
** walking the whole Cartesian product. Returns their number; *out holds
** them (n * np ints). */
static long naive_enum(sp_space *sp, int **out) {
  int np = sp_nparams(sp);
  int *cfg = calloc((size_t)np, sizeof *cfg);
  long n = 0, cap = 1024;
  int *res = malloc((size_t)cap * (size_t)np * sizeof *res);
  for (;;) {
    if (sp_valid(sp, cfg, NULL)) {
      if (n == cap) res = realloc(res, (size_t)(cap *= 2) * (size_t)np * sizeof *res);
      memcpy(res + (size_t)n * np, cfg, (size_t)np * sizeof *cfg);
      n++;
    }
    int p = np - 1;
    while (p >= 0 && ++cfg[p] == sp_nvalues(sp, p)) cfg[p--] = 0;
    if (p < 0) break;
  }
  free(cfg);
  *out = res;
  return n;
}

/* The engine agrees with the naive enumeration: count, canonical order by
** sp_next and by unrank, rank(unrank(i)) == i, and sp_next from every
** invalid combination (checked on up to max_invalid of them). */
static void check_against_naive(sp_space *sp) {
  int np = sp_nparams(sp);
  int *ref;
  long n = naive_enum(sp, &ref);
  assert_true(sp_count(sp) == (rt_count)n);
  rt_count prod = 1;
  for (int g = 0; g < sp_ngroups(sp); g++) prod *= sp_group_count(sp, g);
  assert_true(prod == (rt_count)n);

  int *cfg = malloc((size_t)np * sizeof *cfg);
  if (n > 0) {
    assert_int_equal(sp_unrank(sp, 0, cfg), 0);
    for (long i = 0; i < n; i++) {
      assert_memory_equal(cfg, ref + (size_t)i * np, (size_t)np * sizeof *cfg);
      assert_int_equal(sp_next(sp, cfg), i + 1 < n);
    }
  }
  /* unrank/rank in a scattered order so the memo is exercised cold */
  for (long k = 0; k < n; k++) {
    long i = (k * 7919) % n;
    assert_int_equal(sp_unrank(sp, (rt_count)i, cfg), 0);
    assert_memory_equal(cfg, ref + (size_t)i * np, (size_t)np * sizeof *cfg);
    rt_count r;
    assert_int_equal(sp_rank(sp, cfg, &r), 0);
    assert_true(r == (rt_count)i);
  }
  assert_int_equal(sp_unrank(sp, (rt_count)n, cfg), -1);
  free(cfg);
  free(ref);
}

static int lex_cmp(const int *a, const int *b, int n) {
  for (int p = 0; p < n; p++)
    if (a[p] != b[p]) return a[p] < b[p] ? -1 : 1;
  return 0;
}

/* sp_next from an arbitrary (possibly invalid) combination returns the
** first valid one lexicographically after it. */
static void check_next_from_anywhere(sp_space *sp, int trials, unsigned seed) {
  int np = sp_nparams(sp);
  int *ref;
  long n = naive_enum(sp, &ref);
  int *cfg = malloc((size_t)np * sizeof *cfg), *orig = malloc((size_t)np * sizeof *cfg);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, seed);
  for (int t = 0; t < trials; t++) {
    for (int p = 0; p < np; p++) cfg[p] = (int)gsl_rng_uniform_int(rng, (unsigned long)sp_nvalues(sp, p));
    memcpy(orig, cfg, (size_t)np * sizeof *cfg);
    long i = 0; /* the first reference configuration after cfg */
    while (i < n && lex_cmp(ref + (size_t)i * np, cfg, np) <= 0) i++;
    int got = sp_next(sp, cfg);
    assert_int_equal(got, i < n);
    if (got) assert_memory_equal(cfg, ref + (size_t)i * np, (size_t)np * sizeof *cfg);
    else assert_memory_equal(cfg, orig, (size_t)np * sizeof *cfg);
  }
  gsl_rng_free(rng);
  free(cfg);
  free(orig);
  free(ref);
}

static sp_space *load(const char *path, const char *set) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = set ? sp_parse_bindings(set, a, &b, &err) : 0;
  assert_true(nb >= 0);
  sp_space *sp = sp_load_file(path, b, nb, &err);
  if (!sp) fail_msg("%s", err.msg);
  free(b);
  sx_arena_free(a);
  return sp;
}

static sp_space *load_str(const char *text, const char *set, rt_err *err) {
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = set ? sp_parse_bindings(set, a, &b, err) : 0;
  sp_space *sp = nb < 0 ? NULL : sp_load_string(text, "test.json", b, nb, err);
  free(b);
  sx_arena_free(a);
  return sp;
}

/* ---- The shared T1 files ---- */

static const struct { const char *file; long cartesian, valid; } shared[] = {
  {"gemm_milo.json", 663552, 116928},
  {"convolution_milo.json", 10240, 4362},
  {"dedispersion_milo.json", 22272, 11130},
  {"pnpoly.json", 4092, 4092},
};

static void test_shared_counts(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof shared / sizeof *shared; i++) {
    char path[256];
    snprintf(path, sizeof path, SHARED "%s", shared[i].file);
    sp_space *sp = load(path, NULL);
    assert_true(sp_cartesian(sp) == (rt_count)shared[i].cartesian);
    assert_true(sp_count(sp) == (rt_count)shared[i].valid);
    sp_free(sp);
  }
}

static void test_shared_against_naive(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof shared / sizeof *shared; i++) {
    char path[256];
    snprintf(path, sizeof path, SHARED "%s", shared[i].file);
    sp_space *sp = load(path, NULL);
    check_against_naive(sp);
    check_next_from_anywhere(sp, 300, (unsigned)i + 1);
    sp_free(sp);
  }
}

/* ---- Random spaces (property tests) ---- */

/* Condition templates over parameters a, b, c (%s) and a constant (%d). */
static const char *const cond_templates[] = {
  "%s %% %s == 0", "%s * %s <= %d", "%s + %s != %d", "%s < %s",
  "(%s - %s) // 2 >= %d", "%s %% %s + %d > 1", "not (%s == %s and %d > 0)",
  "%s * %s >= %d or %s == 0", "%d <= %s * %s <= 6 * %d",
  "%s / %s > %d", "%s ** 2 <= %s * %d", "%s in [0, 1, %d] or %s > 2",
};

/* A random space: 2..6 parameters with small integer value lists (some
** negative or zero), 0..4 conditions drawn from the templates. */
static char *random_space(gsl_rng *rng) {
  int np = 2 + (int)gsl_rng_uniform_int(rng, 5);
  int nc = (int)gsl_rng_uniform_int(rng, 5);
  size_t cap = 8192, len = 0;
  char *s = malloc(cap);
  len += (size_t)snprintf(s + len, cap - len,
                          "{\"ConfigurationSpace\": {\"TuningParameters\": [");
  for (int p = 0; p < np; p++) {
    int nv = 1 + (int)gsl_rng_uniform_int(rng, 6);
    int base = (int)gsl_rng_uniform_int(rng, 7) - 3;
    len += (size_t)snprintf(s + len, cap - len, "%s{\"Name\": \"p%d\", \"Type\": \"int\", \"Values\": \"[",
                            p ? ", " : "", p);
    for (int v = 0; v < nv; v++)
      len += (size_t)snprintf(s + len, cap - len, "%s%d", v ? ", " : "", base + v * (1 + p % 3));
    len += (size_t)snprintf(s + len, cap - len, "]\", \"Default\": %d}", base);
  }
  len += (size_t)snprintf(s + len, cap - len, "], \"Conditions\": [");
  for (int c = 0; c < nc; c++) {
    const char *t = cond_templates[gsl_rng_uniform_int(rng, sizeof cond_templates / sizeof *cond_templates)];
    char pa[8], pb[8], expr[256];
    snprintf(pa, sizeof pa, "p%d", (int)gsl_rng_uniform_int(rng, (unsigned long)np));
    snprintf(pb, sizeof pb, "p%d", (int)gsl_rng_uniform_int(rng, (unsigned long)np));
    int k = (int)gsl_rng_uniform_int(rng, 9) - 2;
    /* fill the template's holes in order: strings get pa/pb/pa, ints k */
    const char *args_s[3] = {pa, pb, pa};
    int si = 0;
    size_t el = 0;
    for (const char *q = t; *q; q++) {
      if (q[0] == '%' && q[1] == 's') { el += (size_t)snprintf(expr + el, sizeof expr - el, "%s", args_s[si++ % 3]); q++; }
      else if (q[0] == '%' && q[1] == 'd') { el += (size_t)snprintf(expr + el, sizeof expr - el, "%d", k); q++; }
      else if (q[0] == '%' && q[1] == '%') { expr[el++] = '%'; expr[el] = 0; q++; }
      else { expr[el++] = *q; expr[el] = 0; }
    }
    len += (size_t)snprintf(s + len, cap - len, "%s{\"Expression\": \"%s\", \"Parameters\": [\"%s\", \"%s\"]}",
                            c ? ", " : "", expr, pa, pb);
  }
  snprintf(s + len, cap - len, "]}}");
  return s;
}

static void test_random_spaces(void **state) {
  (void)state;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 20261129);
  for (int t = 0; t < 400; t++) {
    char *text = random_space(rng);
    rt_err err = {0};
    sp_space *sp = load_str(text, NULL, &err);
    if (!sp) fail_msg("random space %d: %s\n%s", t, err.msg, text);
    check_against_naive(sp);
    check_next_from_anywhere(sp, 20, (unsigned)t);
    sp_free(sp);
    free(text);
  }
  gsl_rng_free(rng);
}

/* Sampled configurations are valid, distinct when asked, reproducible for
** a seed, and a full distinct sample is a permutation of the space. */
static void test_sample_properties(void **state) {
  (void)state;
  sp_space *sp = load(SHARED "convolution_milo.json", NULL);
  int np = sp_nparams(sp), n = (int)sp_count(sp);
  int *a = malloc((size_t)n * np * sizeof *a), *b = malloc((size_t)n * np * sizeof *b);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  rt_err err = {0};
  gsl_rng_set(rng, 7);
  assert_int_equal(sp_sample(sp, rng, 500, 1, a, &err), 0);
  gsl_rng_set(rng, 7);
  assert_int_equal(sp_sample(sp, rng, 500, 1, b, &err), 0);
  assert_memory_equal(a, b, 500 * (size_t)np * sizeof *a);
  gsl_rng_set(rng, 8);
  assert_int_equal(sp_sample(sp, rng, n, 1, a, &err), 0);
  char *seen = calloc((size_t)n, 1);
  for (int i = 0; i < n; i++) {
    rt_count r;
    assert_true(sp_valid(sp, a + (size_t)i * np, NULL));
    assert_int_equal(sp_rank(sp, a + (size_t)i * np, &r), 0);
    assert_int_equal(seen[(long)r], 0);
    seen[(long)r] = 1;
  }
  assert_int_equal(sp_sample(sp, rng, n + 1, 1, a, &err), -1);
  assert_non_null(strstr(err.msg, "distinct"));
  free(seen);
  free(a);
  free(b);
  gsl_rng_free(rng);
  sp_free(sp);
}

/* Chi-square goodness of fit of sampling with replacement against the
** uniform distribution over the valid configurations. Fixed seed, so the
** test is deterministic; a biased sampler (e.g. uniform over the tree's
** branches instead of its leaves) fails it by a wide margin. */
static void test_sample_uniform(void **state) {
  (void)state;
  static const char *text =
      "{\"ConfigurationSpace\": {\"TuningParameters\": ["
      "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2, 3, 4, 5, 6, 7, 8]\"},"
      "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[1, 2, 4, 8]\"},"
      "{\"Name\": \"c\", \"Type\": \"int\", \"Values\": \"[0, 1, 2]\"}],"
      "\"Conditions\": [{\"Expression\": \"a * b <= 16\", \"Parameters\": [\"a\", \"b\"]},"
      "{\"Expression\": \"c == 0 or a % 2 == 0\", \"Parameters\": [\"a\", \"c\"]}]}}";
  rt_err err = {0};
  sp_space *sp = load_str(text, NULL, &err);
  assert_non_null(sp);
  int k = (int)sp_count(sp), np = sp_nparams(sp), draws = 60000;
  int *cfgs = malloc((size_t)draws * np * sizeof *cfgs);
  long *hist = calloc((size_t)k, sizeof *hist);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 12345);
  assert_int_equal(sp_sample(sp, rng, draws, 0, cfgs, &err), 0);
  for (int i = 0; i < draws; i++) {
    rt_count r;
    assert_int_equal(sp_rank(sp, cfgs + (size_t)i * np, &r), 0);
    hist[(long)r]++;
  }
  double e = (double)draws / k, chi2 = 0;
  for (int i = 0; i < k; i++) chi2 += (hist[i] - e) * (hist[i] - e) / e;
  double pval = gsl_cdf_chisq_Q(chi2, k - 1);
  assert_true(pval > 0.001);
  free(hist);
  free(cfgs);
  gsl_rng_free(rng);
  sp_free(sp);
}

/* Neighbours against brute force over all valid configurations. */
static void test_neighbours(void **state) {
  (void)state;
  sp_space *sp = load(SHARED "dedispersion_milo.json", NULL);
  int np = sp_nparams(sp);
  int *ref;
  long n = naive_enum(sp, &ref);
  for (long i = 0; i < n; i += 97) {
    const int *c = ref + (size_t)i * np;
    for (int kind = 0; kind < 2; kind++) {
      int *nb;
      int m = sp_neighbours(sp, c, kind ? SP_NB_ADJACENT : SP_NB_HAMMING, &nb);
      long expect = 0;
      for (long j = 0; j < n; j++) {
        const int *d = ref + (size_t)j * np;
        int diff = 0, dp = -1;
        for (int p = 0; p < np; p++)
          if (c[p] != d[p]) diff++, dp = p;
        if (diff != 1 || (kind && abs(c[dp] - d[dp]) != 1)) continue;
        int found = 0;
        for (int q = 0; q < m && !found; q++) found = !memcmp(nb + (size_t)q * np, d, (size_t)np * sizeof *d);
        assert_true(found);
        expect++;
      }
      assert_int_equal(m, expect);
      free(nb);
    }
  }
  free(ref);
  sp_free(sp);
}

/* ---- Large spaces ---- */

/* 12 parameters of 10 values in 6 constrained pairs: 10^12 combinations,
** counted without listing; the expectation multiplies brute-force counts
** of one pair. Also a 10^38 space (beyond 2^64) round-trips ranks. */
static void test_large_spaces(void **state) {
  (void)state;
  char text[8192];
  size_t len = (size_t)snprintf(text, sizeof text, "{\"ConfigurationSpace\": {\"TuningParameters\": [");
  for (int p = 0; p < 12; p++)
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "%s{\"Name\": \"x%d\", \"Type\": \"int\", \"Values\": \"list(range(1, 11))\"}", p ? "," : "", p);
  len += (size_t)snprintf(text + len, sizeof text - len, "], \"Conditions\": [");
  /* pair x_i with x_{i+6}: interleaved groups */
  for (int i = 0; i < 6; i++)
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "%s{\"Expression\": \"x%d * x%d <= 30\", \"Parameters\": [\"x%d\", \"x%d\"]}",
                            i ? "," : "", i, i + 6, i, i + 6);
  snprintf(text + len, sizeof text - len, "]}}");
  rt_err err = {0};
  sp_space *sp = load_str(text, NULL, &err);
  assert_non_null(sp);
  long pair = 0;
  for (int a = 1; a <= 10; a++)
    for (int b = 1; b <= 10; b++) pair += a * b <= 30;
  rt_count expect = 1;
  for (int i = 0; i < 6; i++) expect *= (rt_count)pair;
  assert_int_equal(sp_ngroups(sp), 6);
  assert_true(sp_cartesian(sp) == (rt_count)1000000000000ull);
  assert_true(sp_count(sp) == expect);
  int cfg[12];
  rt_count r;
  assert_int_equal(sp_unrank(sp, expect - 1, cfg), 0);
  assert_true(sp_valid(sp, cfg, NULL));
  assert_int_equal(sp_rank(sp, cfg, &r), 0);
  assert_true(r == expect - 1);
  assert_int_equal(sp_next(sp, cfg), 0);
  sp_free(sp);

  len = (size_t)snprintf(text, sizeof text, "{\"ConfigurationSpace\": {\"TuningParameters\": [");
  for (int p = 0; p < 38; p++)
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "%s{\"Name\": \"y%d\", \"Type\": \"int\", \"Values\": \"range(10)\"}", p ? "," : "", p);
  snprintf(text + len, sizeof text - len, "]}}");
  sp = load_str(text, NULL, &err);
  assert_non_null(sp);
  char buf[48];
  assert_string_equal(rt_count_str(sp_count(sp), buf), "100000000000000000000000000000000000000");
  int big[38];
  rt_count target;
  assert_int_equal(rt_count_parse("31415926535897932384626433832795028841", &target), 0);
  assert_int_equal(sp_unrank(sp, target, big), 0);
  /* with no conditions the rank is the decimal number the digits spell */
  for (int p = 0; p < 38; p++) buf[p] = (char)('0' + big[p]);
  buf[38] = 0;
  assert_string_equal(buf, "31415926535897932384626433832795028841");
  assert_int_equal(sp_rank(sp, big, &r), 0);
  assert_true(r == target);
  sp_free(sp);
  /* one more parameter would exceed 2^128: refused by name */
  len = (size_t)snprintf(text, sizeof text, "{\"ConfigurationSpace\": {\"TuningParameters\": [");
  for (int p = 0; p < 40; p++)
    len += (size_t)snprintf(text + len, sizeof text - len,
                            "%s{\"Name\": \"y%d\", \"Type\": \"int\", \"Values\": \"range(10)\"}", p ? "," : "", p);
  snprintf(text + len, sizeof text - len, "]}}");
  assert_null(load_str(text, NULL, &err));
  assert_non_null(strstr(err.msg, "2^128"));
}

/* ---- Order independence ----
** Counting and sampling must not depend on the order in which the file
** lists its parameters: the engine counts and samples in an order of its
** own (sp_engine.c). Every space the project ships is loaded again with
** its TuningParameters reversed and shuffled; the counts and the work they
** took (sp_get_stats) must be equal and the same seed must draw the same
** configurations (compared by parameter name). On spaces small enough to list, the permuted file's canonical
** order (its own file order) is checked against the brute force, and its
** configurations as a set against the original's. */

static const struct { const char *file, *set; } every_space[] = {
  {"data/t1/gemm_milo.json", NULL},
  {"data/t1/convolution_milo.json", NULL},
  {"data/t1/dedispersion_milo.json", NULL},
  {"data/t1/pnpoly.json", NULL},
  {"tests/data/hotspot_bat.json", NULL},
  {"tests/data/cuda_gemm_space.json", "M=512,N=512,K=512"},
  {"tests/data/cuda_reduction_space.json", "N=1048576"},
  {"bench/spaces/hotspot.json", NULL},
  {"bench/spaces/wide.json", NULL},
  {"targets/host/gemm.json", "M=256,N=256,K=256"},
  {"targets/host/conv2d.json", "N=1,H=32,W=32,C=16,K=16,R=3,S=3"},
  {"targets/host/reduction.json", "N=4096"},
  {"targets/host/stencil.json", "NX=256,NY=256,STEPS=4"},
  {"targets/host/transpose.json", "M=512,N=512"},
  {"targets/cuda/gemm.json", "M=512,N=512,K=512"},
  {"targets/cuda/reduction.json", "N=1048576"},
  {"targets/cuda/stencil.json", "NX=1024,NY=1024,STEPS=4"},
  {"targets/cuda/transpose.json", "M=1024,N=1024"},
  {"experiments/spaces/conv2d_slice.json", "N=1,H=32,W=32,C=16,K=16,R=3,S=3"},
  {"experiments/spaces/gemm_slice.json", "M=256,N=256,K=256"},
  {"experiments/spaces/transpose_slice.json", "M=512,N=512"},
  {"experiments/spaces/transpose_tiny.json", "M=512,N=512"},
  {"search_spaces/examples/host_gemm_tiles.json", "M=256,N=256,K=256"},
};

/* The space file at path (or the space text, when path is NULL) with its
** TuningParameters reversed (seed 0) or shuffled by seed. Caller frees. */
static char *permuted_text(const char *path, const char *text, unsigned long seed) {
  json_error_t je;
  json_t *root = path ? json_load_file(path, 0, &je) : json_loads(text, 0, &je);
  if (!root) fail_msg("%s: %s", path ? path : text, je.text);
  json_t *tp = json_object_get(json_object_get(root, "ConfigurationSpace"), "TuningParameters");
  size_t n = json_array_size(tp);
  json_t **item = malloc(n * sizeof *item);
  for (size_t i = 0; i < n; i++) item[i] = json_incref(json_array_get(tp, i));
  if (seed == 0) {
    for (size_t i = 0; i < n / 2; i++) {
      json_t *t = item[i];
      item[i] = item[n - 1 - i];
      item[n - 1 - i] = t;
    }
  } else {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    for (size_t i = n - 1; i > 0; i--) {
      size_t j = gsl_rng_uniform_int(rng, i + 1);
      json_t *t = item[i];
      item[i] = item[j];
      item[j] = t;
    }
    gsl_rng_free(rng);
  }
  json_array_clear(tp);
  for (size_t i = 0; i < n; i++) json_array_append_new(tp, item[i]);
  free(item);
  char *out = json_dumps(root, JSON_PRESERVE_ORDER);
  json_decref(root);
  return out;
}

/* Configurations cfgs (n, in a's parameter order) in b's order, via names. */
static int *reorder(const sp_space *a, const sp_space *b, const int *cfgs, long n) {
  int np = sp_nparams(a);
  int *out = malloc((size_t)(n ? n : 1) * (size_t)np * sizeof *out);
  for (int p = 0; p < np; p++) {
    int q = sp_param_index(b, sp_param_name(a, p));
    assert_true(q >= 0);
    for (long i = 0; i < n; i++) out[(size_t)i * np + q] = cfgs[(size_t)i * np + p];
  }
  return out;
}

static int cmp_np;   /* qsort context: parameters per configuration */
static int cmp_cfg(const void *x, const void *y) { return lex_cmp(x, y, cmp_np); }

/* a and b (the same space, parameters in another order; b freshly
** loaded) agree; want: the engine's work for a's first count. */
static void check_same_space(sp_space *a, sp_space *b, const sp_stats *want, const char *what) {
  int np = sp_nparams(a);
  assert_int_equal(sp_nparams(b), np);
  assert_true(sp_cartesian(a) == sp_cartesian(b));
  assert_int_equal(sp_ngroups(a), sp_ngroups(b));
  rt_count count = sp_count(a);
  if (sp_count(b) != count) fail_msg("%s: counts differ", what);
  sp_stats st;
  sp_get_stats(b, &st);
  if (st.evals != want->evals || st.memo_entries != want->memo_entries)
    fail_msg("%s: the count took %llu evaluations and %zu memo entries, not %llu and %zu", what,
             (unsigned long long)st.evals, st.memo_entries, (unsigned long long)want->evals,
             want->memo_entries);
  if (count == 0) return;
  int n = count < 300 ? (int)count : 300;
  int *sa = malloc((size_t)n * np * sizeof *sa), *sb = malloc((size_t)n * np * sizeof *sb);
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  rt_err err = {0};
  for (int distinct = 0; distinct < 2; distinct++) {
    gsl_rng_set(rng, 4242 + (unsigned long)distinct);
    assert_int_equal(sp_sample(a, rng, n, distinct, sa, &err), 0);
    gsl_rng_set(rng, 4242 + (unsigned long)distinct);
    assert_int_equal(sp_sample(b, rng, n, distinct, sb, &err), 0);
    int *ma = reorder(a, b, sa, n);
    if (memcmp(ma, sb, (size_t)n * np * sizeof *sb))
      fail_msg("%s: the same seed drew different configurations (distinct=%d)", what, distinct);
    for (int i = 0; i < n; i++) assert_true(sp_valid(b, sb + (size_t)i * np, NULL));
    free(ma);
  }
  gsl_rng_free(rng);
  free(sa);
  free(sb);
  if (sp_cartesian(b) > 1000000) return;
  /* Small enough to list: b's canonical operations against the brute
  ** force in b's own order, and b's configurations as a set equal to a's. */
  check_against_naive(b);
  int *ra, *rb;
  long na = naive_enum(a, &ra);
  int *cfg = malloc((size_t)np * sizeof *cfg);
  rb = malloc((size_t)na * np * sizeof *rb);
  long nb = 0;
  assert_int_equal(sp_unrank(b, 0, cfg), 0);
  do {
    assert_true(nb < na);
    memcpy(rb + (size_t)nb++ * np, cfg, (size_t)np * sizeof *cfg);
  } while (sp_next(b, cfg));
  assert_int_equal(nb, na);
  int *back = reorder(b, a, rb, nb);
  cmp_np = np;
  qsort(back, (size_t)nb, (size_t)np * sizeof *back, cmp_cfg);
  assert_memory_equal(back, ra, (size_t)na * np * sizeof *ra);
  free(back);
  free(cfg);
  free(rb);
  free(ra);
}

static void test_order_independence(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof every_space / sizeof *every_space; i++) {
    sp_space *a = load(every_space[i].file, every_space[i].set);
    sp_stats want;
    sp_count(a);
    sp_get_stats(a, &want);
    for (unsigned long seed = 0; seed < 4; seed++) {
      char *text = permuted_text(every_space[i].file, NULL, seed), what[300];
      rt_err err = {0};
      sp_space *b = load_str(text, every_space[i].set, &err);
      if (!b) fail_msg("%s permuted (%lu): %s", every_space[i].file, seed, err.msg);
      snprintf(what, sizeof what, "%s, parameters %s %lu", every_space[i].file,
               seed ? "shuffled by seed" : "reversed", seed);
      check_same_space(a, b, &want, what);
      sp_free(b);
      free(text);
    }
    sp_free(a);
  }
}

/* Random spaces, each against 3 shuffles of itself (the property tests'
** generator, so conditions interleave with parameters in every way). */
static void test_order_independence_random(void **state) {
  (void)state;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 20261130);
  for (int t = 0; t < 150; t++) {
    char *text = random_space(rng);
    rt_err err = {0};
    sp_space *a = load_str(text, NULL, &err);
    assert_non_null(a);
    sp_stats want;
    sp_count(a);
    sp_get_stats(a, &want);
    for (unsigned long seed = 1; seed <= 3; seed++) {
      char *pt = permuted_text(NULL, text, seed + (unsigned long)t * 10);
      sp_space *b = load_str(pt, NULL, &err);
      assert_non_null(b);
      check_same_space(a, b, &want, text);
      sp_free(b);
      free(pt);
    }
    sp_free(a);
    free(text);
  }
  gsl_rng_free(rng);
}

/* Single-valued parameters are constants to the engine: they form groups
** of their own, a condition they alone decide is decided at load, and one
** that raises because of them still raises (is false) at evaluation;
** sp_cond_params still lists every parameter an expression reads. */
static void test_single_valued_folded(void **state) {
  (void)state;
  rt_err err = {0};
#define PL(conds) "{\"ConfigurationSpace\": {\"TuningParameters\": ["                 \
  "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2, 3, 4]\"},"                     \
  "{\"Name\": \"L\", \"Type\": \"int\", \"Values\": \"[3]\"},"                               \
  "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[1, 2, 3, 4]\"}], \"Conditions\": [" conds "]}}"
  sp_space *sp = load_str(PL("{\"Expression\": \"a * b <= L * 2\"}, {\"Expression\": \"L > 5 or a > 1\"}"),
                          NULL, &err);
  if (!sp) fail_msg("%s", err.msg);
  assert_int_equal(sp_ngroups(sp), 2);            /* {a, b} and {L} */
  assert_int_equal(sp_group_of(sp, 0), sp_group_of(sp, 2));
  assert_int_not_equal(sp_group_of(sp, 0), sp_group_of(sp, 1));
  int n;
  const int *ps = sp_cond_params(sp, 0, &n);
  assert_int_equal(n, 3);
  assert_int_equal(ps[0], 0);
  assert_int_equal(ps[1], 1);
  assert_int_equal(ps[2], 2);
  assert_true(sp_count(sp) == 3 + 2 + 1);   /* a*b <= 6, a > 1: a=2: b<=3; a=3: b<=2; a=4: b=1 */
  check_against_naive(sp);
  sp_free(sp);
  /* decided at load: the space is empty, and says so */
  sp = load_str(PL("{\"Expression\": \"L > 5 and a > 0\"}"), NULL, &err);
  assert_non_null(sp);
  assert_true(sp_count(sp) == 0);
  assert_non_null(strstr(sp_warning(sp, 0), "is false for every configuration"));
  sp_free(sp);
  /* a / (L - 3) divides by zero for every a: false, as in Python */
  sp = load_str(PL("{\"Expression\": \"a / (L - 3) > 0 or b == 4\"}"), NULL, &err);
  assert_non_null(sp);
  assert_true(sp_count(sp) == 0);
  sp_free(sp);
  sp = load_str(PL("{\"Expression\": \"b == 4 or a / (L - 3) > 0\"}"), NULL, &err);
  assert_non_null(sp);
  assert_true(sp_count(sp) == 4);
  check_against_naive(sp);
  sp_free(sp);
#undef PL
}

/* ---- Problem variables ---- */

static const char *pv_space =
    "{\"ConfigurationSpace\": {"
    "\"ProblemVariables\": [{\"Name\": \"M\", \"Type\": \"int\"}, {\"Name\": \"N\", \"Type\": \"int\", \"Default\": 64}],"
    "\"TuningParameters\": ["
    "{\"Name\": \"tile_m\", \"Type\": \"int\", \"Values\": \"[t for t in [8, 16, 32, 64, 128] if t <= M]\"},"
    "{\"Name\": \"tile_n\", \"Type\": \"int\", \"Values\": \"[8, 16, 32, 64, 128]\"}],"
    "\"Conditions\": [{\"Expression\": \"M % tile_m == 0 and N % tile_n == 0\", \"Parameters\": [\"tile_m\", \"tile_n\"]}]}}";

static void test_problem_variables(void **state) {
  (void)state;
  rt_err err = {0};
  sp_space *sp = load_str(pv_space, "M=96", &err);
  if (!sp) fail_msg("%s", err.msg);
  /* tile_m in {8,16,32,64} (<= 96), dividing 96: 8,16,32; tile_n dividing 64: 8..64 */
  assert_int_equal(sp_nvalues(sp, 0), 4);
  assert_true(sp_count(sp) == 3 * 4);
  assert_int_equal(sp_var_was_set(sp, 0), 1);
  assert_int_equal(sp_var_was_set(sp, 1), 0);
  sp_free(sp);
  sp = load_str(pv_space, "M=2**7,N=3*32", &err);
  assert_non_null(sp);
  assert_true(sp_count(sp) == 5 * 3); /* 8..128 | 128; 8,16,32 | 96 */
  sp_free(sp);

  /* a string binding survives the parse (its text lives in the arena) */
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  assert_int_equal(sp_parse_bindings("M=64,layout='nhwc',N=8", a, &b, &err), 3);
  sx_arena *junk = sx_arena_new(); /* reuse freed memory, as later loads do */
  for (int i = 0; i < 100; i++) sx_arena_str(junk, "xxxxxxxxxxxxxxxx", 16);
  assert_int_equal(b[1].value.t, SX_STR);
  assert_string_equal(b[1].value.u.s->s, "nhwc");
  sx_arena_free(junk);
  free(b);
  sx_arena_free(a);

  assert_null(load_str(pv_space, NULL, &err));
  assert_non_null(strstr(err.msg, "'M' is unbound"));
  assert_null(load_str(pv_space, "M=64,K=3", &err));
  assert_non_null(strstr(err.msg, "K: unknown problem variable"));
  assert_null(load_str(pv_space, "M", &err));
  assert_non_null(strstr(err.msg, "expected VAR=VALUE"));
  assert_null(load_str(pv_space, "M=96.5", &err));
  assert_non_null(strstr(err.msg, "problem variable 'M' is float 96.5, but its Type is int (from --set)"));
  assert_null(load_str(pv_space, "M='big'", &err));
  assert_non_null(strstr(err.msg, "is str 'big', but its Type is int"));
  assert_null(load_str(pv_space, "M=1/0", &err));
  assert_non_null(strstr(err.msg, "ZeroDivisionError"));
  assert_null(load_str(pv_space, "M=64,M=32", &err));
  assert_non_null(strstr(err.msg, "given twice"));

  /* items split where the expression lexer says a string ends (escaped
  ** quotes, triple quotes); names are identifiers, blanks around them
  ** allowed (fuzz/regress/set/: `vt(anv="""...,"""` gave a binding named
  ** "vt(anv" whose value, written back, no longer parsed) */
  a = sx_arena_new();
  static const struct { const char *text, *name[3], *str; int n; } splits[] = {
    {"s='a\\',b',t=1", {"s", "t"}, "a',b", 2},
    {"s=\"\"\"a\",\"b\"\"\",t=1", {"s", "t"}, "a\",\"b", 2},
    {" M = 1024 ,\tN_2=2,s=('x,' + 'y')", {"M", "N_2", "s"}, "x,y", 3},
  };
  for (size_t i = 0; i < sizeof splits / sizeof *splits; i++) {
    assert_int_equal(sp_parse_bindings(splits[i].text, a, &b, &err), splits[i].n);
    for (int k = 0; k < splits[i].n; k++) assert_string_equal(b[k].name, splits[i].name[k]);
    const sx_value *sv = b[0].value.t == SX_STR ? &b[0].value : &b[splits[i].n - 1].value;
    assert_int_equal(sv->t, SX_STR);
    assert_string_equal(sv->u.s->s, splits[i].str);
    free(b);
  }
  static const char *const bad_names[] = {"vt(anv=1", "a b=1", "2x=1", "=3", "'M'=1", "M.x=2"};
  for (size_t i = 0; i < sizeof bad_names / sizeof *bad_names; i++) {
    assert_int_equal(sp_parse_bindings(bad_names[i], a, &b, &err), -1);
    assert_null(b);
    assert_non_null(strstr(err.msg, "expected VAR=VALUE (VAR a name"));
  }
  sx_arena_free(a);
}

/* ---- Configurations as JSON ---- */

static void test_config_json(void **state) {
  (void)state;
  sp_space *sp = load(SHARED "pnpoly.json", NULL);
  int cfg[4], back[4];
  assert_int_equal(sp_unrank(sp, 1234, cfg), 0);
  char *s = sp_config_json(sp, cfg);
  assert_string_equal(s, "{\"between_method\":1,\"block_size_x\":224,\"tile_size\":8,\"use_method\":1}");
  rt_err err = {0};
  assert_int_equal(sp_config_parse(sp, s, back, &err), 0);
  assert_memory_equal(cfg, back, sizeof cfg);
  free(s);
  assert_int_equal(sp_config_parse(sp, "{\"between_method\":0,\"block_size_x\":448,\"tile_size\":12}", back, &err), -1);
  assert_non_null(strstr(err.msg, "missing parameter 'use_method'"));
  assert_int_equal(sp_config_parse(sp, "{\"between_method\":0,\"block_size_x\":449,\"tile_size\":12,\"use_method\":1}", back, &err), -1);
  assert_non_null(strstr(err.msg, "449 is not among the values of 'block_size_x'"));
  assert_int_equal(sp_config_parse(sp, "{\"between_method\":0,\"bogus\":1}", back, &err), -1);
  assert_non_null(strstr(err.msg, "unknown parameter 'bogus'"));
  assert_int_equal(sp_config_parse(sp, "{\"between_method\":0,", back, &err), -1);
  assert_non_null(strstr(err.msg, "JSON syntax error"));
  assert_int_equal(sp_config_parse(sp, "[1,2]", back, &err), -1);
  sp_free(sp);
}

/* ---- Errors ---- */

#define TP(x) "{\"ConfigurationSpace\": {\"TuningParameters\": [" x "]}}"
#define P_A "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2, 3]\"}"

static const struct { const char *text, *expect; int line, col; } bad_files[] = {
  {"{\"ConfigurationSpace\": {\n  \"TuningParameters\": [,]}}", "JSON syntax error", 2, 24},
  {"[1, 2]", "expected a JSON object", 0, 0},
  {"{}", "ConfigurationSpace: missing field", 0, 0},
  {"{\"ConfigurationSpace\": {}}", "TuningParameters: missing field", 0, 0},
  {TP(""), "expected a non-empty array", 0, 0},
  {TP("{\"Type\": \"int\", \"Values\": \"[1]\"}"), "TuningParameters[0]: missing field \"Name\"", 0, 0},
  {TP("{\"Name\": \"a\", \"Values\": \"[1]\"}"), "missing field \"Type\"", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"int\"}"), "missing field \"Values\"", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"complex\", \"Values\": \"[1]\"}"), "unknown type \"complex\"", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 'x']\"}"), "wrong type: element 1 is str 'x', but Type is int", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"uint\", \"Values\": \"[0, 1, -2]\"}"), "element 2 is int -2, but Type is uint", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[]\"}"), "has no values (empty space)", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"7\"}"), "is a int, expected a list", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2\"}"), "Values (parameter 'a'):", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2 +* 3]\"}"), "at column", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1 // 0]\"}"), "raised ZeroDivisionError", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[M, 2]\"}"), "'M'", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"int\", \"Values\": 5}"), "expected a string (a Python list expression) or an array", 0, 0},
  {TP(P_A ",{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2]\"}"), "name 'a' is defined twice", 0, 0},
  {TP("{\"Name\": \"2a\", \"Type\": \"int\", \"Values\": \"[1]\"}"), "not a valid identifier", 0, 0},
  {"{\"ConfigurationSpace\": {\"TuningParameters\": [" P_A "], \"Conditions\": [{\"Expression\": \"a + b > 1\"}]}}",
   "Conditions[0].Expression: ", 0, 0},
  {"{\"ConfigurationSpace\": {\"TuningParameters\": [" P_A "], \"Conditions\": [{\"Expression\": \"a > (1\"}]}}",
   "in `a > (1`", 0, 0},
  {"{\"ConfigurationSpace\": {\"TuningParameters\": [" P_A "], \"Conditions\": [{\"Expression\": \"a > 1\", \"Parameters\": [\"z\"]}]}}",
   "Conditions[0].Parameters[0]: 'z' is not a tuning parameter", 0, 0},
  {"{\"ConfigurationSpace\": {\"TuningParameters\": [" P_A "], \"Conditions\": {}}}", "Conditions: expected an array", 0, 0},
  {"{\"ConfigurationSpace\": {\"TuningParameters\": [" P_A "], \"Conditions\": [{\"Parameters\": []}]}}",
   "missing field \"Expression\"", 0, 0},
  {"{\"ConfigurationSpace\": {\"TuningParameters\": [" P_A "]}, \"ConfigurationSpace\": 1}", "duplicate object key", 1, 0},
  /* NaN and infinity have no JSON form and NaN never equals itself */
  {TP("{\"Name\": \"a\", \"Type\": \"float\", \"Values\": \"[float('nan'), float('inf'), 1.0]\"}"),
   "TuningParameters[0].Values (parameter 'a'): element 0 is nan: not a finite number", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"float\", \"Values\": \"[1.0, -float('inf')]\"}"), "element 1 is -inf: not a finite number", 0, 0},
  {TP("{\"Name\": \"a\", \"Type\": \"float\", \"Values\": \"[2.0, 1e308 * 10]\"}"), "element 1 is inf: not a finite number", 0, 0},
  /* the lowercase/snake_case spelling of T1's fields */
  {"{\"configuration_space\": {\"tuning_parameters\": [" P_A "]}}",
   "found field \"configuration_space\" where T1 has \"ConfigurationSpace\"", 0, 0},
  {"{\"ConfigurationSpace\": {\"tuning_parameters\": [" P_A "]}}",
   "ConfigurationSpace: found field \"tuning_parameters\" where T1 has \"TuningParameters\"", 0, 0},
  {"{\"ConfigurationSpace\": {\"TuningParameters\": [" P_A "], \"conditions\": [{\"Expression\": \"a > 1\"}]}}",
   "ConfigurationSpace: found field \"conditions\" where T1 has \"Conditions\"", 0, 0},
  {TP("{\"name\": \"a\", \"type\": \"int\", \"values\": \"[1]\"}"),
   "TuningParameters[0]: found field \"name\" where T1 has \"Name\"", 0, 0},
  {TP(P_A ",{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[1]\", \"DEFAULT\": 1}"),
   "TuningParameters[1]: found field \"DEFAULT\" where T1 has \"Default\"", 0, 0},
  {"{\"ConfigurationSpace\": {\"TuningParameters\": [" P_A "], \"Conditions\": [{\"expression\": \"a > 1\"}]}}",
   "Conditions[0]: found field \"expression\" where T1 has \"Expression\"", 0, 0},
  {"{\"ConfigurationSpace\": {\"problem_variables\": [{\"Name\": \"M\"}], \"TuningParameters\": [" P_A "]}}",
   "ConfigurationSpace: found field \"problem_variables\" where T1 has \"ProblemVariables\"", 0, 0},
  {"{\"General\": {\"benchmark_name\": \"x\"}, \"ConfigurationSpace\": {\"TuningParameters\": [" P_A "]}}",
   "General: found field \"benchmark_name\" where T1 has \"BenchmarkName\"", 0, 0},
};

static void test_bad_files(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bad_files / sizeof *bad_files; i++) {
    rt_err err = {0};
    sp_space *sp = load_str(bad_files[i].text, NULL, &err);
    if (sp || !strstr(err.msg, bad_files[i].expect))
      fail_msg("case %zu: expected error containing \"%s\", got \"%s\"", i, bad_files[i].expect,
               sp ? "(loaded)" : err.msg);
    assert_non_null(strstr(err.msg, "test.json"));
    if (bad_files[i].line) assert_int_equal(err.line, bad_files[i].line);
    if (bad_files[i].col) assert_int_equal(err.col, bad_files[i].col);
  }
  rt_err err = {0};
  assert_null(sp_load_file("/nonexistent/space.json", NULL, 0, &err));
  assert_non_null(strstr(err.msg, "cannot open"));
}

/* Expression errors name the column of the offending token. */
static void test_expression_error_column(void **state) {
  (void)state;
  rt_err err = {0};
  assert_null(load_str("{\"ConfigurationSpace\": {\"TuningParameters\": [" P_A "],"
                       "\"Conditions\": [{\"Expression\": \"a % bogus == 0\"}]}}", NULL, &err));
  assert_non_null(strstr(err.msg, "bogus"));
  assert_non_null(strstr(err.msg, "at column 5"));
}

/* An empty space (no valid configuration) loads, counts 0, and says so. */
static void test_empty_space(void **state) {
  (void)state;
  rt_err err = {0};
  sp_space *sp = load_str("{\"ConfigurationSpace\": {\"TuningParameters\": [" P_A "],"
                          "\"Conditions\": [{\"Expression\": \"a > 5\"}]}}", NULL, &err);
  assert_non_null(sp);
  assert_true(sp_count(sp) == 0);
  int cfg[1];
  assert_int_equal(sp_unrank(sp, 0, cfg), -1);
  assert_int_equal(sp_sample(sp, NULL, 1, 0, cfg, &err), -1);
  assert_non_null(strstr(err.msg, "space is empty"));
  sp_free(sp);
  sp = load_str("{\"ConfigurationSpace\": {\"ProblemVariables\": [{\"Name\": \"M\"}], \"TuningParameters\": [" P_A "],"
                "\"Conditions\": [{\"Expression\": \"M > 5\"}]}}", "M=3", &err);
  assert_non_null(sp);
  assert_true(sp_count(sp) == 0);
  assert_int_equal(sp_nwarnings(sp), 1);
  assert_non_null(strstr(sp_warning(sp, 0), "the space is empty"));
  sp_free(sp);
}

/* Values that repeat are kept once (with a warning), and so are parameters
** repeated identically; a Default given as a one-element list (as in
** gemm_milo.json) is accepted. */
static void test_duplicates_and_defaults(void **state) {
  (void)state;
  rt_err err = {0};
  sp_space *sp = load_str(TP("{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2, 1, 3, 2]\", \"Default\": [3]},"
                             "{\"Name\": \"b\", \"Type\": \"float\", \"Values\": [0.5, 1, 2.5], \"Default\": 7}"),
                          NULL, &err);
  assert_non_null(sp);
  assert_int_equal(sp_nvalues(sp, 0), 3);
  assert_int_equal(sp_default(sp, 0), 2);
  assert_int_equal(sp_default(sp, 1), -1);
  assert_int_equal(sp_nwarnings(sp), 3);
  int cfg[2];
  assert_int_equal(sp_default_config(sp, cfg), 0);
  sp_free(sp);
  /* a parameter repeated identically (benchmark hub's metatuning_pso.json) */
  sp = load_str(TP(P_A "," P_A), NULL, &err);
  assert_non_null(sp);
  assert_int_equal(sp_nparams(sp), 1);
  assert_true(sp_count(sp) == 3);
  assert_non_null(strstr(sp_warning(sp, 0), "repeats an identical definition"));
  sp_free(sp);
}

/* The duplicate rule on mixed lists: a value is dropped when an earlier one
** has the same type and is == to it (so -0.0 repeats 0.0, but the int 1 and
** the float 1.0 of a float parameter are two values); the first occurrence
** keeps its place. Past 10 named duplicates per parameter the rest are
** counted in one warning. */
static void test_duplicate_rule(void **state) {
  (void)state;
  rt_err err = {0};
  sp_space *sp = load_str(TP("{\"Name\": \"f\", \"Type\": \"float\", \"Values\": \"[0.5, 1, -0.0, 1.0, 0.0, 1, 0.5]\"},"
                             "{\"Name\": \"s\", \"Type\": \"string\", \"Values\": [\"b\", \"a\", \"b\", \"ab\", \"a\"]}"),
                          NULL, &err);
  if (!sp) fail_msg("%s", err.msg);
  assert_int_equal(sp_nvalues(sp, 0), 4);
  static const struct { sx_type t; double f; } want[] = {{SX_FLOAT, 0.5}, {SX_INT, 1}, {SX_FLOAT, -0.0}, {SX_FLOAT, 1.0}};
  for (int i = 0; i < 4; i++) {
    const sx_value *v = sp_value(sp, 0, i);
    assert_int_equal(v->t, want[i].t);
    assert_true(v->t == SX_INT ? v->u.i == (int64_t)want[i].f : v->u.f == want[i].f);
  }
  assert_true(signbit(sp_value(sp, 0, 2)->u.f));   /* the first of -0.0 and 0.0 */
  assert_int_equal(sp_nvalues(sp, 1), 3);
  assert_string_equal(sp_value(sp, 1, 0)->u.s->s, "b");
  assert_string_equal(sp_value(sp, 1, 1)->u.s->s, "a");
  assert_string_equal(sp_value(sp, 1, 2)->u.s->s, "ab");
  assert_int_equal(sp_nwarnings(sp), 5);
  assert_non_null(strstr(sp_warning(sp, 0), "parameter 'f': duplicate value 0.0 dropped"));
  assert_non_null(strstr(sp_warning(sp, 1), "duplicate value 1 dropped"));
  assert_non_null(strstr(sp_warning(sp, 2), "duplicate value 0.5 dropped"));
  assert_non_null(strstr(sp_warning(sp, 3), "parameter 's': duplicate value 'b' dropped"));
  sp_free(sp);
  sp = load_str(TP("{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"list(range(5)) + [i % 5 for i in range(25)]\"}"),
                NULL, &err);
  assert_non_null(sp);
  assert_int_equal(sp_nvalues(sp, 0), 5);
  assert_int_equal(sp_nwarnings(sp), 11);
  assert_non_null(strstr(sp_warning(sp, 10), "parameter 'a': 15 more duplicate values dropped"));
  sp_free(sp);
}

/* A parameter of a million values (in a scrambled order, plus repeats)
** loads: the duplicate check sorts instead of scanning the list for every
** value, which took minutes. Expected values computed here directly. */
static void test_million_values(void **state) {
  (void)state;
  enum { N = 1000000, P = 1000003, K = 7919 };
  rt_err err = {0};
  /* x*K mod P is one-to-one on 0..P-1 (P prime), so the first N are distinct */
  sp_space *sp = load_str(TP("{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[x * 7919 % 1000003 for x in range(1000000)] + list(range(12))\"},"
                             "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[0, 1]\"}"),
                          NULL, &err);
  if (!sp) fail_msg("%s", err.msg);
  char *seen = calloc(P, 1);
  long distinct = N;
  for (long x = 0; x < N; x++) seen[x * K % P] = 1;
  for (int v = 0; v < 12; v++) distinct += !seen[v];
  free(seen);
  assert_int_equal(sp_nvalues(sp, 0), distinct);
  assert_true(sp_count(sp) == (rt_count)(2 * distinct));
  static const long ranks[] = {0, 1, 2 * 123457 + 1, 2 * 999999, 2 * 999999 + 1};
  for (size_t i = 0; i < sizeof ranks / sizeof *ranks; i++) {
    int cfg[2];
    rt_count r;
    assert_int_equal(sp_unrank(sp, (rt_count)ranks[i], cfg), 0);
    assert_int_equal(cfg[0], ranks[i] / 2);
    assert_int_equal(cfg[1], ranks[i] % 2);
    assert_int_equal(sp_value(sp, 0, cfg[0])->u.i, (ranks[i] / 2) * K % P);
    assert_int_equal(sp_rank(sp, cfg, &r), 0);
    assert_true(r == (rt_count)ranks[i]);
  }
  sp_free(sp);
}

/* A problem variable bound to NaN or infinity is refused like a value. */
static void test_nonfinite_variable(void **state) {
  (void)state;
  rt_err err = {0};
  static const char *text = "{\"ConfigurationSpace\": {\"ProblemVariables\": [{\"Name\": \"X\"}],"
                            "\"TuningParameters\": [" P_A "]}}";
  assert_null(load_str(text, "X=float('nan')", &err));
  assert_non_null(strstr(err.msg, "problem variable 'X' is nan (from --set): not a finite number"));
  assert_null(load_str(text, "X=-1e400", &err));
  assert_non_null(strstr(err.msg, "problem variable 'X' is -inf (from --set)"));
  sp_space *sp = load_str(text, "X=1e300", &err);
  assert_non_null(sp);
  sp_free(sp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_shared_counts),
    cmocka_unit_test(test_shared_against_naive),
    cmocka_unit_test(test_random_spaces),
    cmocka_unit_test(test_sample_properties),
    cmocka_unit_test(test_sample_uniform),
    cmocka_unit_test(test_neighbours),
    cmocka_unit_test(test_order_independence),
    cmocka_unit_test(test_order_independence_random),
    cmocka_unit_test(test_single_valued_folded),
    cmocka_unit_test(test_large_spaces),
    cmocka_unit_test(test_problem_variables),
    cmocka_unit_test(test_config_json),
    cmocka_unit_test(test_bad_files),
    cmocka_unit_test(test_expression_error_column),
    cmocka_unit_test(test_empty_space),
    cmocka_unit_test(test_duplicates_and_defaults),
    cmocka_unit_test(test_duplicate_rule),
    cmocka_unit_test(test_million_values),
    cmocka_unit_test(test_nonfinite_variable),
  };
  return cmocka_run_group_tests_name("search_spaces", tests, NULL, NULL);
}
