/*
** test_measure.c -- the measurement harness against independent
** expectations: fault isolation on test-only candidates (a crash, an abort,
** a division by zero, a hang, a far out-of-bounds write, wrong, unwritten
** and NaN outputs, compile errors each become their status, and no child
** survives); the compile cache (hits keep the same file, any change of
** flags changes the key, parallel builds of one key from several processes
** are safe); statistics against values computed by hand and CI ranks
** against binomial probabilities summed directly; the stopping rule on
** synthetic timers; PAPI's probe and the event-list parser; the batch
** runner (ms__run_batch) on synthetic children that succeed, crash, hang,
** write garbage, exit early or end on purpose, item by item, with no
** process group left behind.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>
#include <sqlite3.h>

#include "measure/ms.h"
#include "measure/ms_backend.h"
#include "targets/host/hw.h"

/* ---- a test-only kernel: y = 2 x over N floats ---- */

#define N 4096

static int tw_buffers(const kn_problem *pb, kn_buf *b) {
  (void)pb;
  b[0] = (kn_buf){.name = "x", .n = N, .out = 0};
  b[1] = (kn_buf){.name = "y", .n = N, .out = 1};
  return 2;
}

static void tw_reference(const kn_problem *pb, float *const *bufs) {
  (void)pb;
  for (int i = 0; i < N; i++) bufs[1][i] = 2 * bufs[0][i];
}

static double tw_tolerance(const kn_problem *pb) {
  (void)pb;
  return 1e-6;
}

static const kn_kernel twice = {
  .name = "twice", .summary = "y = 2x (test only)", .buffers = tw_buffers,
  .reference = tw_reference, .tolerance = tw_tolerance,
};

#define HEAD "int rk_run(float *const *b) {\n"
#define CORRECT HEAD "for (int i = 0; i < 4096; i++) b[1][i] = 2 * b[0][i];\nreturn 0; }\n"

/* A fresh cache directory per test run (removed at the end). */
static char cache[64];

static int rm_one(const char *p, const struct stat *s, int f, struct FTW *w) {
  (void)s, (void)f, (void)w;
  return remove(p);
}

static int setup(void **state) {
  (void)state;
  snprintf(cache, sizeof cache, "/tmp/rooftune-test-measure-XXXXXX");
  return mkdtemp(cache) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  return nftw(cache, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void quick_opts(ms_opts *o) {
  ms_opts_default(o);
  o->cache_dir = cache;
  o->time_cap = 0.05;
  o->timeout = 10;
}

static ms_workload *twice_workload(void) {
  kn_problem pb = {0};
  ms_workload *w = ms_workload_new(&twice, &pb, NULL);
  assert_non_null(w);
  return w;
}

/* A candidate's library calls bind to the libraries it links, not to
** copies inside rooftune: rooftune uses GSL, whose CBLAS defines the same
** cblas_* symbols as OpenBLAS; a baseline calling cblas_sgemm must get
** OpenBLAS. The candidate fails (returns 1) if cblas_sdot is not from it. */
static void test_library_binding(void **state) {
  (void)state;
  static const char src[] =
      "#define _GNU_SOURCE\n#include <dlfcn.h>\n#include <string.h>\n#include <cblas.h>\n"
      HEAD "Dl_info info;\n"
      "if (!dladdr((void *)cblas_sdot, &info) || !strstr(info.dli_fname, \"openblas\")) return 1;\n"
      "for (int i = 0; i < 4096; i++) b[1][i] = 2 * b[0][i];\nreturn 0; }\n";
  ms_opts o;
  quick_opts(&o);
  ms_workload *w = twice_workload();
  ms_result r;
  assert_int_equal(hw_measure(w, src, "-lopenblas", &o, &r), 0);
  if (r.status != MS_OK) fail_msg("status %s: %s", ms_status_name(r.status), r.msg);
  ms_workload_free(w);
}

/* ---- (1) fault isolation ---- */

static void check_ok(const ms_result *r, const ms_opts *o) {
  assert_int_equal(r->status, MS_OK);
  assert_string_equal(r->msg, "");
  assert_true(r->max_err <= 1e-6);
  assert_true(r->t.n >= 1 && r->t.n <= o->max_reps);
  assert_true(r->t.min > 0 && r->t.min <= r->t.median && r->t.median <= r->t.max);
  assert_true(r->t.ci_lo <= r->t.median && r->t.median <= r->t.ci_hi);
  assert_true(r->verify_s > 0 && r->bench_s > 0);
}

static const struct {
  const char *what, *src;
  ms_status want;
  const char *msg;   /* a substring of r.msg */
} faults[] = {
  {"segfault", HEAD "*(volatile int *)0 = 1; return 0; }\n", MS_RUNTIME_ERROR, "SIGSEGV"},
  {"abort", "#include <stdlib.h>\n" HEAD "(void)b; abort(); }\n", MS_RUNTIME_ERROR, "SIGABRT"},
  {"divide by zero", HEAD "volatile int z = 0, one = 1; (void)b; return one / z; }\n",
   MS_RUNTIME_ERROR, "SIGFPE"},
  {"nonzero return", HEAD "(void)b; return 3; }\n", MS_RUNTIME_ERROR, "rk_run returned 3"},
  {"no rk_run", "int rk_other(void) { return 0; }\n", MS_RUNTIME_ERROR, "no rk_run"},
  {"wrong", HEAD "for (int i = 0; i < 4096; i++) b[1][i] = 2 * b[0][i];\n"
   "b[1][17] += 0.5f; return 0; }\n", MS_WRONG_RESULT, "at element 17"},
  {"accumulating", HEAD "for (int i = 0; i < 4096; i++) b[1][i] += 2 * b[0][i];\n"
   "return 0; }\n", MS_WRONG_RESULT, "output y wrong"},
  {"unwritten output", HEAD "(void)b; return 0; }\n", MS_WRONG_RESULT, "output y wrong"},
  {"NaN", HEAD "for (int i = 0; i < 4096; i++) b[1][i] = 2 * b[0][i];\n"
   "volatile float z = 0; b[1][9] = z / z; return 0; }\n", MS_WRONG_RESULT, "at element 9"},
  {"compile error", HEAD "return undeclared_thing; }\n", MS_COMPILE_ERROR, "undeclared_thing"},
  {"link-time symbol", "int missing_fn(void);\n" HEAD "(void)b; return missing_fn(); }\n",
   MS_RUNTIME_ERROR, "missing_fn"},
  /* the contract: inputs are not written (the CUDA path checked it; the
  ** host did not) */
  {"writes its input", HEAD "for (int i = 0; i < 4096; i++) b[1][i] = 2 * b[0][i];\n"
   "b[0][3] = 7; return 0; }\n", MS_WRONG_RESULT, "the candidate wrote to its input x"},
  {"writes its input later", HEAD "static int calls;\n"
   "for (int i = 0; i < 4096; i++) b[1][i] = 2 * b[0][i];\n"
   "if (++calls == 3) b[0][0] += 1; return 0; }\n", MS_WRONG_RESULT,
   "the candidate wrote to its input x while timed"},
  /* bytes into every descriptor, the harness's pipe among them */
  {"junk into the pipe", "#include <unistd.h>\n" HEAD
   "for (int fd = 3; fd < 1024; fd++) if (write(fd, \"{\\\"status\\\":0}\", 12)) {}\n"
   "for (int i = 0; i < 4096; i++) b[1][i] = 2 * b[0][i];\nreturn 0; }\n",
   MS_RUNTIME_ERROR, "report is garbled"},
};

static void test_fault_isolation(void **state) {
  (void)state;
  ms_workload *w = twice_workload();
  ms_opts o;
  quick_opts(&o);
  ms_result r;
  assert_int_equal(hw_measure(w, CORRECT, NULL, &o, &r), 0);
  check_ok(&r, &o);
  assert_int_equal(r.counters, 0);

  for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) {
    assert_int_equal(hw_measure(w, faults[i].src, NULL, &o, &r), 0);
    if (r.status != faults[i].want || !strstr(r.msg, faults[i].msg))
      fail_msg("%s: got %s \"%s\", want %s \"%s\"", faults[i].what,
               ms_status_name(r.status), r.msg, ms_status_name(faults[i].want),
               faults[i].msg);
    assert_int_equal(r.t.n, 0);   /* never timed */
    assert_true(r.t.median == 0);
  }

  /* far out of bounds: a crash or a wrong result, never the caller */
  assert_int_equal(hw_measure(w, HEAD "b[1][(long)1 << 34] = 1; return 0; }\n",
                              NULL, &o, &r), 0);
  assert_true(r.status == MS_RUNTIME_ERROR || r.status == MS_WRONG_RESULT);

  /* a hang: killed within timeout + 1 s */
  o.timeout = 1.0;
  double t0 = rt_now();
  assert_int_equal(hw_measure(w, HEAD "volatile int s = 1; while (s) {} (void)b; return 0; }\n",
                              NULL, &o, &r), 0);
  double dt = rt_now() - t0 - r.compile_s;
  assert_int_equal(r.status, MS_TIMEOUT);
  assert_non_null(strstr(r.msg, "timeout"));
  assert_true(dt >= 1.0 && dt < 2.0);

  /* nothing left behind, and the harness still works */
  int st;
  errno = 0;
  assert_int_equal(waitpid(-1, &st, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
  o.timeout = 10;
  assert_int_equal(hw_measure(w, CORRECT, NULL, &o, &r), 0);
  check_ok(&r, &o);
  assert_int_equal(r.cache_hit, 1);
  ms_workload_free(w);
}

/* In the sandbox a candidate can neither create, write, truncate nor
** remove a file (it returns 0 only when every attempt failed); with
** ROOFTUNE_SANDBOX=off it can, so the status says which ran. */
static void test_sandbox(void **state) {
  (void)state;
  const char *why;
  if (!ms_sandbox_available(&why)) {
    fprintf(stderr, "test_sandbox: skipped: %s\n", why);
    return;
  }
  char victim[128], src[2048];
  snprintf(victim, sizeof victim, "%s/victim", cache);
  FILE *f = fopen(victim, "w");
  assert_non_null(f);
  fputs("precious", f);
  fclose(f);
  snprintf(src, sizeof src,
           "#include <fcntl.h>\n#include <unistd.h>\n#include <stdio.h>\n" HEAD
           "int done = 0, fd;\n"
           "if ((fd = open(\"%s/new\", O_WRONLY | O_CREAT, 0600)) >= 0) done |= 1, close(fd);\n"
           "if ((fd = open(\"%s\", O_WRONLY)) >= 0) done |= 2, close(fd);\n"
           "if (truncate(\"%s\", 0) == 0) done |= 4;\n"
           "if (rename(\"%s\", \"%s.moved\") == 0) done |= 8;\n"
           "if (done) return 100 + done;\n"
           "for (int i = 0; i < 4096; i++) b[1][i] = 2 * b[0][i];\nreturn 0; }\n",
           cache, victim, victim, victim, victim);
  ms_workload *w = twice_workload();
  ms_opts o;
  quick_opts(&o);
  ms_result r;
  assert_int_equal(hw_measure(w, src, NULL, &o, &r), 0);
  if (r.status != MS_OK) fail_msg("sandboxed: %s: %s", ms_status_name(r.status), r.msg);
  struct stat sb;
  assert_int_equal(stat(victim, &sb), 0);
  assert_int_equal(sb.st_size, 8);
  setenv("ROOFTUNE_SANDBOX", "off", 1);
  assert_int_equal(hw_measure(w, src, NULL, &o, &r), 0);
  unsetenv("ROOFTUNE_SANDBOX");
  assert_int_equal(r.status, MS_RUNTIME_ERROR);
  assert_non_null(strstr(r.msg, "rk_run returned 115"));   /* all four done */
  ms_workload_free(w);
}

/* With no source, the harness times the kernel's reference itself (the
** baseline of kernels without a library): exact by construction. */
static void test_reference_as_candidate(void **state) {
  (void)state;
  ms_opts o;
  quick_opts(&o);
  ms_workload *w = twice_workload();
  ms_result r;
  assert_int_equal(hw_measure(w, NULL, NULL, &o, &r), 0);
  check_ok(&r, &o);
  assert_true(r.max_err == 0);
  assert_int_equal(r.cache_hit, 0);
  ms_workload_free(w);
}

/* Options that change the worker: pinning, cache flushing, a bad CPU. */
static void test_worker_options(void **state) {
  (void)state;
  ms_workload *w = twice_workload();
  ms_opts o;
  quick_opts(&o);
  o.pin_cpu = 0;
  o.flush_cache = 1;
  o.warmup = 0;
  o.min_reps = o.max_reps = 3;
  ms_result r;
  assert_int_equal(hw_measure(w, CORRECT, NULL, &o, &r), 0);
  check_ok(&r, &o);
  assert_int_equal(r.t.n, 3);
  o.pin_cpu = 1000;   /* no such CPU */
  assert_int_equal(hw_measure(w, CORRECT, NULL, &o, &r), 0);
  assert_int_equal(r.status, MS_RUNTIME_ERROR);
  assert_non_null(strstr(r.msg, "cannot pin to CPU 1000"));
  ms_workload_free(w);
}

/* ---- (2) the compile cache ---- */

static void test_compile_cache(void **state) {
  (void)state;
  ms_opts o;
  quick_opts(&o);
  char p1[PATH_MAX], p2[PATH_MAX], p3[PATH_MAX], p4[PATH_MAX];
  int hit = -1;
  rt_str log = {0};
  const char *src = CORRECT "/* cache test */\n";
  assert_int_equal(ms_build(src, NULL, &o, p1, sizeof p1, &hit, &log), 0);
  assert_int_equal(hit, 0);
  struct stat s1, s2;
  assert_int_equal(stat(p1, &s1), 0);
  assert_int_equal(ms_build(src, NULL, &o, p2, sizeof p2, &hit, &log), 0);
  assert_int_equal(hit, 1);
  assert_string_equal(p1, p2);
  assert_int_equal(stat(p2, &s2), 0);
  assert_true(s1.st_ino == s2.st_ino && s1.st_mtim.tv_sec == s2.st_mtim.tv_sec &&
              s1.st_mtim.tv_nsec == s2.st_mtim.tv_nsec);
  /* another flag, other link flags: other keys */
  o.cflags = "-O2 -fPIC";
  assert_int_equal(ms_build(src, NULL, &o, p3, sizeof p3, &hit, &log), 0);
  assert_int_equal(hit, 0);
  assert_string_not_equal(p1, p3);
  o.cflags = NULL;   /* the default flags: the first key again */
  assert_int_equal(ms_build(src, NULL, &o, p3, sizeof p3, &hit, &log), 0);
  assert_int_equal(hit, 1);
  assert_string_equal(p1, p3);
  assert_int_equal(ms_build(src, "-lm", &o, p4, sizeof p4, &hit, &log), 0);
  assert_int_equal(hit, 0);
  assert_string_not_equal(p1, p4);
  assert_null(log.s);   /* successes log nothing */

  /* a compile error keeps the compiler's words; no .so appears */
  assert_int_equal(ms_build(HEAD "return nope_nope; }\n", NULL, &o, p3, sizeof p3,
                            &hit, &log), -1);
  assert_non_null(strstr(log.s, "nope_nope"));
  free(log.s);
  log = (rt_str){0};

  /* a missing compiler */
  const char *old = getenv("CC");
  char *saved = old ? strdup(old) : NULL;
  setenv("CC", "/nonexistent/cc", 1);
  assert_int_equal(ms_build(src, NULL, &o, p3, sizeof p3, &hit, &log), -1);
  assert_non_null(strstr(log.s, "cannot run /nonexistent/cc"));
  if (saved) setenv("CC", saved, 1);
  else unsetenv("CC");
  free(saved);
  free(log.s);

  /* four processes build one new key at once into a fresh directory */
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s/par/sub", cache);
  o.cache_dir = dir;
  const char *psrc = CORRECT "/* parallel */\n";
  pid_t kids[4];
  for (int i = 0; i < 4; i++) {
    kids[i] = fork();
    assert_true(kids[i] >= 0);
    if (kids[i] == 0) {
      char p[PATH_MAX];
      int h;
      _exit(ms_build(psrc, NULL, &o, p, sizeof p, &h, NULL) ? 1 : 0);
    }
  }
  for (int i = 0; i < 4; i++) {
    int st;
    assert_int_equal(waitpid(kids[i], &st, 0), kids[i]);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  assert_int_equal(ms_build(psrc, NULL, &o, p3, sizeof p3, &hit, NULL), 0);
  assert_int_equal(hit, 1);
  void *h = dlopen(p3, RTLD_NOW | RTLD_LOCAL);
  assert_non_null(h);
  assert_non_null(dlsym(h, "rk_run"));
  dlclose(h);
  DIR *d = opendir(dir);
  assert_non_null(d);
  int files = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') {
      files++;
      assert_null(strstr(e->d_name, ".tmp."));   /* no temporaries left */
    }
  closedir(d);
  assert_int_equal(files, 2);   /* KEY.c, KEY.so */
}

/* ---- (3) statistics ---- */

/* Largest j with P(j <= X <= n-j) >= 0.95, X ~ Binomial(n, 1/2), by
** summing the probabilities directly; 0 when none. */
static int ranks_by_sum(int n) {
  int best = 0;
  for (int j = 1; 2 * j <= n; j++) {
    double cov = 0;
    for (int i = j; i <= n - j; i++)
      cov += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0));
    if (cov >= 0.95) best = j;
  }
  return best;
}

static void test_statistics(void **state) {
  (void)state;
  ms_stats st;
  double x[] = {5, 1, 4, 2, 3, 9, 7, 6, 8, 10};
  ms_stats_compute(x, 10, &st);
  assert_int_equal(st.n, 10);
  assert_true(fabs(st.median - 5.5) < 1e-12 && fabs(st.mean - 5.5) < 1e-12);
  assert_true(fabs(st.sd - sqrt(82.5 / 9)) < 1e-12);   /* sum of squares 82.5 */
  assert_true(st.min == 1 && st.max == 10);
  assert_true(st.ci_lo == 2 && st.ci_hi == 9);   /* binomial table, n = 10 */
  double odd[] = {3, 1, 2};
  ms_stats_compute(odd, 3, &st);
  assert_true(st.median == 2 && st.sd == 1);

  /* published values: n = 10 -> (2, 9); n = 100 -> (40, 61) */
  assert_int_equal(ranks_by_sum(10), 2);
  assert_int_equal(ranks_by_sum(100), 40);
  static const int ns[] = {1, 2, 5, 6, 7, 10, 11, 20, 37, 50, 100, 101, 500};
  for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
    int n = ns[t], j = ranks_by_sum(n);
    double *v = malloc((size_t)n * sizeof *v);
    for (int i = 0; i < n; i++) v[i] = n - i;   /* x(r) = r once sorted */
    ms_stats_compute(v, n, &st);
    if (j == 0) {
      assert_true(st.ci_lo == 1 && st.ci_hi == n);   /* [min, max] */
    } else {
      assert_true(st.ci_lo == j);
      assert_true(st.ci_hi == n + 1 - j);
    }
    free(v);
  }
  assert_int_equal(ranks_by_sum(5), 0);

  /* the noise flag: tight; one outlier (range rule); spread (sd/mean rule) */
  double tight[] = {1.0, 1.01, 0.99, 1.0, 1.02};
  ms_stats_compute(tight, 5, &st);
  assert_int_equal(st.noisy, 0);
  double outlier[20];
  for (int i = 0; i < 20; i++) outlier[i] = i == 7 ? 1.6 : 1.0;
  ms_stats_compute(outlier, 20, &st);
  assert_true((st.max - st.min) / st.median > 0.5 && st.sd / st.mean <= 0.2);
  assert_int_equal(st.noisy, 1);
  double spread[] = {0.8, 0.8, 0.8, 1.3, 1.3, 1.3};
  ms_stats_compute(spread, 6, &st);
  assert_true((st.max - st.min) / st.median <= 0.5 && st.sd / st.mean > 0.2);
  assert_int_equal(st.noisy, 1);
}

/* ---- (4) the stopping rule on synthetic timers ---- */

typedef struct synth {
  int calls;
  double amp;        /* noise amplitude */
  unsigned long s;   /* LCG state */
} synth;

/* 1 + amp * u, u deterministic in [0, 1). */
static double synth_sample(void *c) {
  synth *y = c;
  y->calls++;
  y->s = y->s * 6364136223846793005UL + 1442695040888963407UL;
  return 1.0 + y->amp * (double)(y->s >> 11) / 9007199254740992.0;
}

static void test_stopping_rule(void **state) {
  (void)state;
  ms_opts o;
  ms_opts_default(&o);
  o.time_cap = 1e9;
  o.max_reps = 400;
  ms_stats st;
  synth quiet = {0, 1e-3, 1};
  ms_time_loop(synth_sample, &quiet, &o, &st);
  assert_int_equal(st.n, o.min_reps);   /* stops at once */
  assert_int_equal(quiet.calls, o.min_reps + o.warmup);
  assert_int_equal(st.noisy, 0);
  assert_true(st.median >= 1.0 && st.median < 1.001);

  o.min_reps = 20;
  synth q2 = {0, 1e-3, 1};
  ms_time_loop(synth_sample, &q2, &o, &st);
  assert_int_equal(st.n, 20);

  o.min_reps = 5;
  synth loud = {0, 0.9, 7};
  ms_time_loop(synth_sample, &loud, &o, &st);
  assert_int_equal(st.n, 400);   /* CI never reaches 1% */
  assert_int_equal(st.noisy, 1);
  assert_true(0.5 * (st.ci_hi - st.ci_lo) / st.median > o.ci_target);

  /* moderate spread: only the unmet CI target at the stop flags it */
  synth moderate = {0, 0.3, 7};
  ms_time_loop(synth_sample, &moderate, &o, &st);
  assert_int_equal(st.n, 400);
  assert_true((st.max - st.min) / st.median <= 0.5 && st.sd / st.mean <= 0.2);
  assert_int_equal(st.noisy, 1);

  o.time_cap = 50;   /* samples in [1, 1.9]: the cap stops it at 27..51 */
  synth capped = {0, 0.9, 7};
  ms_time_loop(synth_sample, &capped, &o, &st);
  assert_true(st.n >= 27 && st.n <= 51);
  assert_int_equal(st.noisy, 1);
  assert_true(st.mean * st.n > 50 && st.mean * st.n <= 50 + 1.9);
}

/* ---- (5) counters ---- */

static void test_counters(void **state) {
  (void)state;
  const char *why = NULL;
  int avail = hw_papi_available(&why);
  assert_non_null(why);
  ms_workload *w = twice_workload();
  ms_opts o;
  quick_opts(&o);
  o.counters = 1;
  ms_result r;
  assert_int_equal(hw_measure(w, CORRECT, NULL, &o, &r), 0);
  assert_int_equal(r.status, MS_OK);
  if (avail) {   /* real hardware: the default events were counted */
    assert_int_equal(r.counters, 1);
    assert_int_equal(r.nev, 6);
    assert_string_equal(r.ev_name[0], "PAPI_TOT_CYC");
    assert_true(r.ev_val[0] > 0);
  } else {       /* this VM (PLATFORM.md): unavailable, with the reason */
    assert_non_null(strstr(why, "counters"));
    assert_int_equal(r.counters, 0);
  }
  o.events = "PAPI_TOT_CYC,,PAPI_L1_DCM";
  assert_int_equal(hw_measure(w, CORRECT, NULL, &o, &r), 0);
  assert_int_equal(r.status, MS_INVALID);
  assert_non_null(strstr(r.msg, "is empty"));
  ms_workload_free(w);
}

static void test_parse_events(void **state) {
  (void)state;
  char names[MS_MAXEV][MS_EVNAME];
  rt_err err = {0};
  assert_int_equal(ms_parse_events("PAPI_TOT_CYC,PAPI_L1_DCM", hw_papi_default_events, names, MS_MAXEV, &err), 2);
  assert_string_equal(names[0], "PAPI_TOT_CYC");
  assert_string_equal(names[1], "PAPI_L1_DCM");
  assert_int_equal(ms_parse_events("  PAPI_TOT_INS ,\tperf::CYCLES  ", hw_papi_default_events, names, MS_MAXEV, &err), 2);
  assert_string_equal(names[0], "PAPI_TOT_INS");
  assert_string_equal(names[1], "perf::CYCLES");
  assert_int_equal(ms_parse_events(NULL, hw_papi_default_events, names, MS_MAXEV, &err), 6);
  assert_string_equal(names[0], "PAPI_TOT_CYC");
  assert_string_equal(names[5], "PAPI_SP_OPS");
  char n47[64];
  memset(n47, 'A', 47);
  n47[47] = 0;
  assert_int_equal(ms_parse_events(n47, hw_papi_default_events, names, MS_MAXEV, &err), 1);
  assert_string_equal(names[0], n47);

  static const struct { const char *list; const char *msg; } bad[] = {
    {"", "event 1 of \"\" is empty"},
    {"A,,B", "event 2 of \"A,,B\" is empty"},
    {"A, ", "event 2"},
    {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "longer than 63"},
    {"a,b,c,d,e,f,g,h,i", "too many events"},
    {"A, B ,A", "\"A\" is listed twice"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err.msg[0] = 0;
    assert_int_equal(ms_parse_events(bad[i].list, hw_papi_default_events, names, MS_MAXEV, &err), -1);
    if (!strstr(err.msg, bad[i].msg))
      fail_msg("\"%s\": error \"%s\", want \"%s\"", bad[i].list, err.msg, bad[i].msg);
  }
}

/* ---- (6) typed workloads (kn.h: element types, kinds, fills, given
** references, inout outputs, atol/rtol), each against values worked
** out by hand or drawn here from GSL's mt19937 as the rule says ---- */

static kn_buf tb[KN_MAXBUF];   /* the typed kernel's buffers, set by each test */
static int tb_n;

static int ty_buffers(const kn_problem *pb, kn_buf *b) {
  (void)pb;
  memcpy(b, tb, sizeof *tb * (size_t)tb_n);
  return tb_n;
}
static double ty_flops(const kn_problem *pb) { (void)pb; return 1; }

/* No reference, no tolerance: a T1 kernel's shape (atol 0.25, rtol 0.5). */
static const kn_kernel typed = {
  .name = "typed", .summary = "typed buffers (test only)", .buffers = ty_buffers,
  .flops = ty_flops, .atol = 0.25, .rtol = 0.5,
};

static ms_workload *typed_workload(rt_err *err) {
  kn_problem pb = {0};
  return ms_workload_new(&typed, &pb, err);
}

static uint16_t u16_at(const void *p, int j) { return ((const uint16_t *)p)[j]; }

static void test_typed_fills(void **state) {
  (void)state;
  char raw[PATH_MAX];
  snprintf(raw, sizeof raw, "%s/raw.bin", cache);
  const int16_t file_vals[4] = {-2, 0, 300, 32767};
  FILE *f = fopen(raw, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(file_vals, sizeof file_vals, 1, f), 1);
  fclose(f);
  tb_n = 0;
  tb[tb_n++] = (kn_buf){.name = "r0", .n = 3};                          /* shared stream */
  tb[tb_n++] = (kn_buf){.name = "i", .n = 4, .elem = KN_I32, .fill = KN_FILL_CONSTANT,
                        .value = -7.9};                                  /* -7 */
  tb[tb_n++] = (kn_buf){.name = "u", .n = 2, .elem = KN_U8, .fill = KN_FILL_CONSTANT,
                        .value = -3};                                    /* clamped to 0 */
  tb[tb_n++] = (kn_buf){.name = "c", .n = 2, .elem = KN_I8, .fill = KN_FILL_CONSTANT,
                        .value = 300};                                   /* clamped to 127 */
  tb[tb_n++] = (kn_buf){.name = "h", .n = 1, .elem = KN_F16, .fill = KN_FILL_CONSTANT,
                        .value = 0.1};                                   /* 0x2E66 */
  tb[tb_n++] = (kn_buf){.name = "hinf", .n = 1, .elem = KN_F16, .fill = KN_FILL_CONSTANT,
                        .value = 65520};             /* a tie, to even: the carry gives inf */
  tb[tb_n++] = (kn_buf){.name = "hsub", .n = 1, .elem = KN_F16, .fill = KN_FILL_CONSTANT,
                        .value = 3.0 / 33554432};    /* 1.5 x 2^-24: a tie, to even: 2 x 2^-24 */
  tb[tb_n++] = (kn_buf){.name = "big", .n = 1, .elem = KN_U64, .fill = KN_FILL_CONSTANT,
                        .value = 1e20};                                  /* UINT64_MAX */
  tb[tb_n++] = (kn_buf){.name = "neg", .n = 1, .elem = KN_I64, .fill = KN_FILL_CONSTANT,
                        .value = -1e30};                                 /* INT64_MIN */
  tb[tb_n++] = (kn_buf){.name = "d", .n = 3, .elem = KN_F64, .seed = 5};  /* own stream */
  tb[tb_n++] = (kn_buf){.name = "k", .n = 4, .elem = KN_I32, .seed = 9, .value = 10};
  tb[tb_n++] = (kn_buf){.name = "f", .n = 4, .elem = KN_I16, .fill = KN_FILL_FILE, .file = raw};
  tb[tb_n++] = (kn_buf){.name = "r1", .n = 2};                          /* the stream goes on */
  tb[tb_n++] = (kn_buf){.name = "s", .n = 1, .elem = KN_F64, .kind = KN_SCALAR,
                        .fill = KN_FILL_CONSTANT, .value = 2.5};
  tb[tb_n++] = (kn_buf){.name = "loc", .n = 100, .kind = KN_LOCAL};
  tb[tb_n++] = (kn_buf){.name = "y", .n = 2, .elem = KN_F16, .out = 1};
  rt_err err = {0};
  ms_workload *w = typed_workload(&err);
  if (!w) fail_msg("%s", err.msg);
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937), *own = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, 42);
  float shared[5];
  for (int j = 0; j < 5; j++) shared[j] = (float)(2.0 * gsl_rng_uniform(g) - 1.0);
  assert_memory_equal(w->in[0], shared, 3 * sizeof(float));
  assert_memory_equal(w->in[12], shared + 3, 2 * sizeof(float));
  for (int j = 0; j < 4; j++) assert_int_equal(((int32_t *)w->in[1])[j], -7);
  assert_int_equal(((uint8_t *)w->in[2])[1], 0);
  assert_int_equal(((int8_t *)w->in[3])[1], 127);
  assert_int_equal(u16_at(w->in[4], 0), 0x2E66);
  assert_int_equal(u16_at(w->in[5], 0), 0x7C00);
  assert_int_equal(u16_at(w->in[6], 0), 0x0002);
  assert_true(((uint64_t *)w->in[7])[0] == UINT64_MAX);
  assert_true(((int64_t *)w->in[8])[0] == INT64_MIN);
  gsl_rng_set(own, 5);
  for (int j = 0; j < 3; j++)
    assert_true(((double *)w->in[9])[j] == 2.0 * gsl_rng_uniform(own) - 1.0);
  gsl_rng_set(own, 9);
  for (int j = 0; j < 4; j++)
    assert_int_equal(((int32_t *)w->in[10])[j], (int)(10 * gsl_rng_uniform(own)));
  assert_memory_equal(w->in[11], file_vals, sizeof file_vals);
  assert_true(((double *)w->in[13])[0] == 2.5);
  assert_null(w->in[14]);                    /* local memory has no data */
  assert_null(w->in[15]);                    /* a plain output has none either */
  assert_null(w->ref[15]);                   /* no reference: the backend computes it */
  assert_int_equal(ms__buf_bytes(&w->b[15]), 4);
  uint16_t y[2];
  ms__buf_init(w, 15, y);                    /* poisoned: 65504 */
  assert_int_equal(y[0], 0x7BFF);
  assert_int_equal(y[1], 0x7BFF);
  ms_workload_free(w);
  gsl_rng_free(g);
  gsl_rng_free(own);
  /* a raw file of the wrong size: named, with both sizes */
  tb_n = 2;
  tb[0] = (kn_buf){.name = "f", .n = 3, .elem = KN_I16, .fill = KN_FILL_FILE, .file = raw};
  tb[1] = (kn_buf){.name = "y", .n = 1, .out = 1};
  assert_null(typed_workload(&err));
  assert_non_null(strstr(err.msg, "raw.bin holds 8 bytes, expected exactly 6 (3 elements of i16)"));
  assert_non_null(strstr(err.msg, "typed: argument f: file "));
  tb[0].file = "/nonexistent/raw.bin";
  assert_null(typed_workload(&err));
  assert_non_null(strstr(err.msg, "/nonexistent/raw.bin: No such file"));
  /* shapes a kind cannot have */
  tb[0] = (kn_buf){.name = "s", .n = 2, .elem = KN_I32, .kind = KN_SCALAR};
  assert_null(typed_workload(&err));
  assert_string_equal(err.msg, "typed: argument s is a scalar of more than one element");
  tb[0] = (kn_buf){.name = "x", .n = 2, .inout = 1};
  assert_null(typed_workload(&err));
  assert_string_equal(err.msg, "typed: argument x is read-write but not an output");
  tb[1] = (kn_buf){.name = "y", .n = 2, .out = 1, .kind = KN_SYMBOL};
  tb[0] = (kn_buf){.name = "x", .n = 2};
  assert_null(typed_workload(&err));
  assert_non_null(strstr(err.msg, "argument y is an output but not a vector"));
}

/* The memory check counts each buffer's element size, and local memory
** (no host data) not at all. */
static void test_typed_memory(void **state) {
  (void)state;
  setenv("ROOFTUNE_MEM_LIMIT", "1000", 1);
  rt_err err = {0};
  tb_n = 2;
  tb[0] = (kn_buf){.name = "x", .n = 100, .elem = KN_F32};
  tb[1] = (kn_buf){.name = "y", .n = 20, .elem = KN_U8, .out = 1};
  assert_int_equal(ms_workload_check(&typed, &(kn_problem){0}, &err), 0);   /* 2 x 420 */
  tb[0].elem = KN_F64;                                                      /* 2 x 820 */
  assert_int_equal(ms_workload_check(&typed, &(kn_problem){0}, &err), -1);
  assert_non_null(strstr(err.msg, "x 100 f64, y 20 u8"));
  assert_non_null(strstr(err.msg, "twice their 820 bytes"));
  tb[0] = (kn_buf){.name = "l", .n = (int64_t)1 << 40, .kind = KN_LOCAL};
  assert_int_equal(ms_workload_check(&typed, &(kn_problem){0}, &err), 0);
  unsetenv("ROOFTUNE_MEM_LIMIT");
}

/* atol/rtol element by element for f32, f64 and f16, exact for integers
** (u64 beyond a double's 53 bits included), NaN never, the same infinity
** always; the message names the output, the element and both values. */
static void test_typed_verify(void **state) {
  (void)state;
  tb_n = 2;
  tb[0] = (kn_buf){.name = "x", .n = 1, .fill = KN_FILL_CONSTANT};
  tb[1] = (kn_buf){.name = "y", .n = 3, .out = 1};
  rt_err err = {0};
  ms_workload *w = typed_workload(&err);
  assert_non_null(w);
  char msg[256] = "";
  double e = -1;
  /* |out - ref| <= 0.25 + 0.5 |ref|: at ref 2 the bound is exactly 1.25 */
  float of[3] = {1, 3.25f, -4}, rf[3] = {1, 2, -4};
  void *out[2] = {NULL, of}, *ref[2] = {NULL, rf};
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), 0);
  assert_true(e == 1.25 / 4);                  /* max|out-ref| / max|ref| */
  of[1] = 3.5f;                                /* 1.5 > 1.25 */
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), -1);
  assert_string_equal(msg, "output y wrong at element 1: 3.5, expected 2 (|out-ref| > atol 0.25 "
                           "+ rtol 0.5 x |ref|; 1 of 3 elements differ)");
  of[1] = NAN, rf[1] = NAN;                    /* NaN never passes */
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), -1);
  assert_true(isinf(e));
  of[1] = INFINITY, rf[1] = INFINITY;          /* the same infinity does */
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), 0);
  of[1] = 1e30f;                               /* but not a finite value against it */
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), -1);
  ms_workload_free(w);
  /* f64 */
  tb[1] = (kn_buf){.name = "d", .n = 2, .elem = KN_F64, .out = 1};
  w = typed_workload(&err);
  double od[2] = {-10, 0.25}, rd[2] = {-4, 0};   /* bounds 2.25 and 0.25: element 0 fails */
  out[1] = od, ref[1] = rd;
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), -1);
  assert_non_null(strstr(msg, "output d wrong at element 0: -10, expected -4 "));
  assert_true(e == 6.0 / 4);
  od[0] = -6.25;                                 /* 2.25: on the bound */
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), 0);
  ms_workload_free(w);
  /* f16: 2 against 1 (bound 0.75) fails, 1.5 passes */
  tb[1] = (kn_buf){.name = "h", .n = 2, .elem = KN_F16, .out = 1};
  w = typed_workload(&err);
  uint16_t oh[2] = {0x3C00, 0x4000}, rh[2] = {0x3C00, 0x3C00};
  out[1] = oh, ref[1] = rh;
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), -1);
  assert_non_null(strstr(msg, "output h wrong at element 1: 2, expected 1 "));
  oh[1] = 0x3E00;                                /* 1.5 */
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), 0);
  assert_true(e == 0.5);
  ms_workload_free(w);
  /* integers: exact, whatever atol and rtol say */
  tb[1] = (kn_buf){.name = "k", .n = 2, .elem = KN_I32, .out = 1};
  w = typed_workload(&err);
  int32_t oi[2] = {5, -7}, ri[2] = {5, -6};
  out[1] = oi, ref[1] = ri;
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), -1);
  assert_string_equal(msg, "output k wrong at element 1: -7, expected -6 (i32: exact; 1 of 2 "
                           "elements differ)");
  oi[1] = -6;
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), 0);
  assert_true(e == 0);
  ms_workload_free(w);
  tb[1] = (kn_buf){.name = "q", .n = 1, .elem = KN_U64, .out = 1};
  w = typed_workload(&err);
  uint64_t oq = UINT64_MAX, rq = UINT64_MAX - 1;   /* the same double */
  out[1] = &oq, ref[1] = &rq;
  assert_int_equal(ms__verify(w, out, ref, &e, msg, sizeof msg), -1);
  assert_string_equal(msg, "output q wrong at element 0: 18446744073709551615, expected "
                           "18446744073709551614 (u64: exact; 1 of 1 elements differ)");
  ms_workload_free(w);
}

/* An inout output starts at its initial contents in the checked run (a
** kernel that accumulates into it is right; one that ignores them is
** wrong), and the host reference runs on those contents too. */
static void io_reference(const kn_problem *pb, float *const *bufs) {
  (void)pb;
  for (int i = 0; i < 64; i++) bufs[1][i] += bufs[0][i];
}
static int io_buffers(const kn_problem *pb, kn_buf *b) {
  (void)pb;
  b[0] = (kn_buf){.name = "x", .n = 64};
  b[1] = (kn_buf){.name = "y", .n = 64, .out = 1, .inout = 1, .fill = KN_FILL_CONSTANT,
                  .value = 10};
  return 2;
}
static const kn_kernel inout_k = {
  .name = "inout", .summary = "y += x (test only)", .buffers = io_buffers,
  .reference = io_reference, .tolerance = tw_tolerance,
};

static void test_inout(void **state) {
  (void)state;
  kn_problem pb = {0};
  ms_workload *w = ms_workload_new(&inout_k, &pb, NULL);
  assert_non_null(w);
  for (int j = 0; j < 64; j++) {
    assert_true(((float *)w->in[1])[j] == 10);
    assert_true(((float *)w->ref[1])[j] == 10 + ((float *)w->in[0])[j]);
  }
  ms_opts o;
  quick_opts(&o);
  o.max_reps = 5;
  ms_result r;
  assert_int_equal(hw_measure(w, HEAD "for (int i = 0; i < 64; i++) b[1][i] += b[0][i];\n"
                                 "return 0; }\n", NULL, &o, &r), 0);
  if (r.status != MS_OK) fail_msg("%s: %s", ms_status_name(r.status), r.msg);
  assert_int_equal(hw_measure(w, HEAD "for (int i = 0; i < 64; i++) b[1][i] = b[0][i];\n"
                                 "return 0; }\n", NULL, &o, &r), 0);
  assert_int_equal(r.status, MS_WRONG_RESULT);
  assert_non_null(strstr(r.msg, "output y wrong"));
  ms_workload_free(w);
}

/* ---- (7) the once-computed reference outputs (ms__ref_once) ---- */

/* A reference child: y[i] = (int)(100 x[i]) as i32, z is given. */
static void ref_child_ok(int fd, void *ctx) {
  const ms_workload *w = ctx;
  int32_t y[8];
  for (int i = 0; i < 8; i++) y[i] = (int32_t)(100 * ((const float *)w->in[0])[i]);
  ms__report rep = {.status = MS_OK};
  void *bufs[3] = {NULL, y, NULL};
  ms__send_outputs(fd, &rep, w, bufs);
}
static void ref_child_fails(int fd, void *ctx) {
  ms__report rep = {.status = MS_COMPILE_ERROR};
  snprintf(rep.msg, sizeof rep.msg, "the reference does not compile");
  ms__send_outputs(fd, &rep, ctx, (void *[3]){0});
}
static void ref_child_dies(int fd, void *ctx) {
  (void)fd, (void)ctx;
  abort();
}

static int count_ref(void (*child)(int, void *), ms_workload *w, ms__report *rep) {
  ms_opts o;
  quick_opts(&o);
  return ms__ref_once(w, "build-key", "compiler 1.0", child, w, &o, rep);
}

static void test_reference_once(void **state) {
  (void)state;
  tb_n = 3;
  tb[0] = (kn_buf){.name = "x", .n = 8, .seed = 3};
  tb[1] = (kn_buf){.name = "y", .n = 8, .elem = KN_I32, .out = 1};
  tb[2] = (kn_buf){.name = "z", .n = 2, .elem = KN_F64, .out = 1, .has_ref = 1,
                   .ref_fill = KN_FILL_CONSTANT, .ref_value = 2.5};
  rt_err err = {0};
  ms_workload *w = typed_workload(&err);
  assert_non_null(w);
  assert_true(((double *)w->ref[2])[1] == 2.5);   /* given */
  assert_int_equal(ms__ref_missing(w), 1);
  ms__report rep;
  assert_int_equal(count_ref(ref_child_ok, w, &rep), 0);
  assert_int_equal(rep.status, MS_OK);
  assert_string_equal(rep.msg, "");
  assert_int_equal(ms__ref_missing(w), 0);
  gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(g, 3);
  for (int i = 0; i < 8; i++)
    assert_int_equal(((int32_t *)w->ref[1])[i],
                     (int32_t)(100 * (float)(2.0 * gsl_rng_uniform(g) - 1.0)));
  gsl_rng_free(g);
  assert_true(((double *)w->ref[2])[0] == 2.5);   /* the given one kept */
  /* the file: header (16 + 8) + one entry (24) + 32 bytes */
  char key[33], path[PATH_MAX];
  ms__ref_key(w, "build-key", "compiler 1.0", key);
  snprintf(path, sizeof path, "%s/ref-%s.bin", cache, key);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_size, 16 + 8 + 24 + 32);
  /* a second workload (another process would do the same) reads it: the
  ** child that would fail is never asked */
  ms_workload *w2 = typed_workload(&err);
  assert_int_equal(count_ref(ref_child_fails, w2, &rep), 0);
  assert_string_equal(rep.msg, "cached");
  assert_memory_equal(w2->ref[1], w->ref[1], 32);
  ms_workload_free(w2);
  /* a truncated file is not taken: the reference runs again, and its
  ** failure is reported with its status */
  assert_int_equal(truncate(path, 40), 0);
  w2 = typed_workload(&err);
  assert_int_equal(count_ref(ref_child_fails, w2, &rep), 1);
  assert_int_equal(rep.status, MS_COMPILE_ERROR);
  assert_string_equal(rep.msg, "the reference does not compile");
  assert_int_equal(ms__ref_missing(w2), 1);
  assert_int_equal(count_ref(ref_child_dies, w2, &rep), 1);
  assert_int_equal(rep.status, MS_RUNTIME_ERROR);
  assert_non_null(strstr(rep.msg, "reference worker killed by SIGABRT"));
  assert_int_equal(count_ref(ref_child_ok, w2, &rep), 0);   /* and rewritten whole */
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_size, 16 + 8 + 24 + 32);
  ms_workload_free(w2);
  /* the key: other inputs, another build or compiler, another key */
  char k2[33];
  ms__ref_key(w, "build-key2", "compiler 1.0", k2);
  assert_string_not_equal(k2, key);
  ms__ref_key(w, "build-key", "compiler 1.1", k2);
  assert_string_not_equal(k2, key);
  tb[0].seed = 4;
  w2 = typed_workload(&err);
  ms__ref_key(w2, "build-key", "compiler 1.0", k2);
  assert_string_not_equal(k2, key);
  ms_workload_free(w2);
  ms_workload_free(w);
}

static void test_status_names(void **state) {
  (void)state;
  static const char *const want[] = {"ok", "compile_error", "runtime_error",
                                     "timeout", "wrong_result", "invalid"};
  for (int s = MS_OK; s <= MS_INVALID; s++)
    assert_string_equal(ms_status_name((ms_status)s), want[s]);
}


/* ---- (7) batches: ms__run_batch on synthetic children ---- */

/* What the synthetic batch child does at each item (one letter per item):
**  o  an ok report whose median is (item + 1) ms
**  l  the same with `last` set: the child ends, a new one continues
**  s  SIGSEGV          h  hangs                e  _exit(3) without a report
**  p  half a report, then _exit(0)             g  100 bytes of garbage, then goes on
**  w  a sealed report naming another item      x  an ok report with bytes after it
**  d  writes into the guarded database's header, then an ok report
** Every child first appends "START PID" to the log file and forks a
** grandchild into its process group that sleeps (closing the pipe first,
** so that it cannot hold it open): the harness must kill it with the
** group. */
typedef struct batch_ctx {
  const char *plan, *log, *db;
} batch_ctx;

static void batch_child(int fd, void *ctx, int start, int n) {
  const batch_ctx *b = ctx;
  FILE *f = fopen(b->log, "ae");
  if (f) fprintf(f, "%d %d\n", start, (int)getpid()), fclose(f);
  pid_t g = fork();
  if (g == 0) {
    close(fd);
    for (;;) pause();
  }
  for (int i = start; i < n; i++) {
    ms__report r;
    memset(&r, 0, sizeof r);
    r.status = MS_OK;
    r.item = i;
    r.t.median = (i + 1) * 1e-3;
    snprintf(r.msg, sizeof r.msg, "item %d", i);
    switch (b->plan[i]) {
    case 'l': r.last = 1; break;
    case 's': raise(SIGSEGV); break;
    case 'h': for (;;) pause();
    case 'e': _exit(3);
    case 'p': ms__seal(&r); if (write(fd, &r, sizeof r / 2)) {} _exit(0);
    case 'g': {
      char junk[100];
      memset(junk, 'g', sizeof junk);
      if (write(fd, junk, sizeof junk)) {}
      break;
    }
    case 'w': r.item = i + 5; break;
    case 'd': {
      int dfd = open(b->db, O_WRONLY | O_CLOEXEC);
      if (dfd >= 0 && pwrite(dfd, "XQLite", 6, 0)) {}
      if (dfd >= 0) close(dfd);
      break;
    }
    default: break;
    }
    if (b->plan[i] == 'x') {   /* the report and 4 bytes, in one write */
      char both[sizeof r + 4];
      ms__seal(&r);
      memcpy(both, &r, sizeof r);
      memcpy(both + sizeof r, "tail", 4);
      if (write(fd, both, sizeof both)) {}
      _exit(0);
    }
    if (ms__send_item(fd, &r)) _exit(1);
    if (r.last) _exit(0);
  }
  _exit(0);
}

/* The children's starts and pids from the log: how many. */
static int batch_log(const char *log, int *start, int *pid, int max) {
  FILE *f = fopen(log, "re");
  int n = 0;
  while (f && n < max && fscanf(f, "%d %d", &start[n], &pid[n]) == 2) n++;
  if (f) fclose(f);
  return n;
}

/* The live processes (not zombies: a container's init may leave those
** unreaped) of process group pgid, from /proc. */
static int group_alive(int pgid) {
  DIR *d = opendir("/proc");
  struct dirent *e;
  int alive = 0;
  while (d && (e = readdir(d))) {
    char path[300], line[512];
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "re");
    if (!f) continue;
    size_t k = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[k] = 0;
    char *p = strrchr(line, ')'), state = 0;
    int ppid = 0, pgrp = 0;
    if (p && sscanf(p + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 && pgrp == pgid &&
        state != 'Z' && state != 'X')
      alive++;
  }
  if (d) closedir(d);
  return alive;
}

/* No child, and no live process of one's group, is left (a SIGKILLed
** process takes a moment to die: up to 5 s are allowed). */
static void no_batch_orphans(const char *log) {
  int start[64], pid[64], n = batch_log(log, start, pid, 64);
  for (int i = 0; i < n; i++) {
    for (int tries = 0; group_alive(pid[i]) && tries < 500; tries++) {
      struct timespec ts = {0, 10000000};
      nanosleep(&ts, NULL);
    }
    if (group_alive(pid[i]))
      fail_msg("the process group of child %d (pid %d) is still there", i, pid[i]);
  }
  int st;
  errno = 0;
  assert_int_equal(waitpid(-1, &st, WNOHANG), -1);
  assert_int_equal(errno, ECHILD);
}

static void test_batch(void **state) {
  (void)state;
  /* Each letter's expected status and message, worked out from the plan. */
  static const char plan[] = "oosohgoeowoplpoox";
  static const struct { char c; ms_status st; const char *msg; } want[] = {
    {'o', MS_OK, "item "}, {'l', MS_OK, "item "},
    {'s', MS_RUNTIME_ERROR, "worker killed by SIGSEGV"},
    {'h', MS_TIMEOUT, "timeout: worker killed after"},
    {'e', MS_RUNTIME_ERROR, "worker exited with status 3 without a report"},
    {'p', MS_RUNTIME_ERROR, "worker exited with status 0 without a report"},
    {'g', MS_RUNTIME_ERROR, "report is garbled"},
    {'w', MS_RUNTIME_ERROR, "names another item"},
    {'x', MS_RUNTIME_ERROR, "4 bytes more than a report"},
  };
  int n = (int)strlen(plan);
  char log[128];
  snprintf(log, sizeof log, "%s/batch.log", cache);
  batch_ctx b = {plan, log, NULL};
  ms_opts o;
  quick_opts(&o);
  o.timeout = 0.5;
  ms__report rep[sizeof plan];
  rt_err err = {0};
  assert_int_equal(ms__run_batch(batch_child, &b, n, &o, NULL, rep, &err), n);
  for (int i = 0; i < n; i++) {
    size_t k = 0;
    while (want[k].c != plan[i]) k++;
    if ((int)rep[i].status != (int)want[k].st || !strstr(rep[i].msg, want[k].msg) ||
        rep[i].item != i || rep[i].last)
      fail_msg("item %d ('%c'): %s \"%s\" (item %d), want %s \"%s\"", i, plan[i],
               ms_status_name(rep[i].status), rep[i].msg, rep[i].item,
               ms_status_name(want[k].st), want[k].msg);
    if (rep[i].status == MS_OK) {
      char m[32];
      snprintf(m, sizeof m, "item %d", i);
      assert_string_equal(rep[i].msg, m);   /* each item's own report */
      assert_true(rep[i].t.median == (i + 1) * 1e-3);
    }
  }
  /* a new child after every item that ended one: at 0 and after s h e w p l p x */
  int start[64], pid[64], nc = batch_log(log, start, pid, 64), ws = 0;
  int wstart[64] = {0};
  for (int i = 0; i < n - 1; i++)
    if (strchr("shegwlpx", plan[i])) wstart[++ws] = i + 1;
  assert_int_equal(nc, ws + 1);
  for (int i = 0; i < nc; i++) assert_int_equal(start[i], wstart[i]);
  no_batch_orphans(log);

  /* a child that ends with `last` on the final item, and a batch of one */
  unlink(log);
  b.plan = "ool";
  assert_int_equal(ms__run_batch(batch_child, &b, 3, &o, NULL, rep, &err), 3);
  for (int i = 0; i < 3; i++) assert_int_equal(rep[i].status, MS_OK);
  assert_int_equal(batch_log(log, start, pid, 64), 1);
  assert_int_equal(ms__run_batch(batch_child, &b, 1, &o, NULL, rep, &err), 1);
  assert_int_equal(rep[0].status, MS_OK);
  assert_int_equal(ms__run_batch(batch_child, &b, 0, &o, NULL, rep, &err), 0);
  no_batch_orphans(log);
}

/* A single worker that exits without a report after forking into its
** group: ms_run_child ends the group too (it used to reap the worker
** only, leaving the grandchild running). */
static void orphan_child(int fd, void *ctx) {
  batch_ctx b = {"e", ctx, NULL};
  batch_child(fd, &b, 0, 1);
}

static void test_child_group_ends(void **state) {
  (void)state;
  char log[128];
  snprintf(log, sizeof log, "%s/single.log", cache);
  ms__report rep;
  ms_child_end end;
  assert_int_equal(ms_run_child(orphan_child, log, 10, &rep, sizeof rep, &end), 1);
  assert_int_equal(end.timed_out, 0);
  assert_true(WIFEXITED(end.wstatus) && WEXITSTATUS(end.wstatus) == 3);
  int start[4], pid[4];
  assert_int_equal(batch_log(log, start, pid, 4), 1);
  no_batch_orphans(log);
}

/* The stop flag ends a batch at the item in flight (a hang here: without
** the flag it would run into its 30 s timeout and be charged). */
static volatile sig_atomic_t batch_stop;
static void on_alarm(int sig) {
  (void)sig;
  batch_stop = 1;
}

static void test_batch_stop_and_guard(void **state) {
  (void)state;
  char log[128], dbf[128];
  snprintf(log, sizeof log, "%s/batch-stop.log", cache);
  snprintf(dbf, sizeof dbf, "%s/guarded.db", cache);
  batch_ctx b = {"oohoo", log, dbf};
  ms_opts o;
  quick_opts(&o);
  o.timeout = 30;
  ms__report rep[8];
  rt_err err = {0};
  struct sigaction sa = {.sa_handler = on_alarm}, old;
  sigaction(SIGALRM, &sa, &old);
  batch_stop = 0;
  struct itimerval it = {.it_value = {0, 300000}};
  setitimer(ITIMER_REAL, &it, NULL);
  assert_int_equal(ms__run_batch(batch_child, &b, 5, &o, &batch_stop, rep, &err), 2);
  sigaction(SIGALRM, &old, NULL);
  assert_int_equal(rep[0].status, MS_OK);
  assert_int_equal(rep[1].status, MS_OK);
  assert_int_equal(rep[2].status, MS_OK);   /* never filled: still zero */
  assert_string_equal(rep[2].msg, "");
  /* set before the call: nothing measured, no child */
  unlink(log);
  assert_int_equal(ms__run_batch(batch_child, &b, 5, &o, &batch_stop, rep, &err), 0);
  assert_int_equal(batch_log(log, (int[64]){0}, (int[64]){0}, 64), 0);
  no_batch_orphans(log);

  /* the database guard: item 1 overwrites its header; the batch stops
  ** with an error naming the database (which item is not said: the child
  ** may be past the last report the parent read) */
  FILE *f = fopen(dbf, "we");
  assert_non_null(f);
  char head[4096] = "SQLite format 3";
  assert_int_equal(fwrite(head, 1, sizeof head, f), sizeof head);
  fclose(f);
  b.plan = "odoo";
  o.guard = dbf;
  o.timeout = 10;
  unlink(log);
  assert_int_equal(ms__run_batch(batch_child, &b, 4, &o, NULL, rep, &err), -1);
  assert_non_null(strstr(err.msg, "guarded.db changed while a candidate ran (something "
                          "overwrote its header)"));
  no_batch_orphans(log);
}

/* The database guard reads the header while this process's SQLite holds
** the file in WAL mode: another process that opens, reads and closes the
** database must still see this one's locks, so it leaves the WAL file in
** place and this connection's rows visible (a guard that closed its own
** descriptor of the file dropped SQLite's locks, and a `sqlite3` shell
** deleted a live campaign's WAL under it). */
static int count_rows(const char *path) {
  sqlite3 *h = NULL;
  int n = -1;
  sqlite3_stmt *st = NULL;
  if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&   /* as a shell opens it */
      sqlite3_prepare_v2(h, "SELECT count(*) FROM t", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

/* Another process, with no SQLite state of ours (a fork would share it):
** this program again, counting the rows. */
static int reader_sees(const char *path, int want) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 0;
  self[n] = 0;
  char want_s[16];
  snprintf(want_s, sizeof want_s, "%d", want);
  pid_t pid = fork();
  if (pid == 0) {
    execl(self, self, "--count-rows", path, want_s, (char *)NULL);
    _exit(127);
  }
  int status;
  return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_guard_keeps_sqlite_locks(void **state) {
  (void)state;
  char dir[] = "/tmp/rt_tguard_XXXXXX", path[64], wal[72], shm[72];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/g.db", dir);
  snprintf(wal, sizeof wal, "%s-wal", path);
  snprintf(shm, sizeof shm, "%s-shm", path);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, "PRAGMA journal_mode = WAL; CREATE TABLE t(x);"
                                   "INSERT INTO t VALUES (1), (2);", NULL, NULL, NULL), SQLITE_OK);
  for (int round = 0; round < 2; round++) {
    ms__guard g;
    char msg[256];
    ms__guard_take(path, &g);
    assert_true(g.valid);
    assert_int_equal(ms__guard_check(path, &g, msg, sizeof msg), 0);
    assert_true(reader_sees(path, 2 + round));   /* another process opens, reads, closes */
    if (access(wal, F_OK)) fail_msg("the WAL file of a live connection was deleted by a reader");
    assert_int_equal(sqlite3_exec(h, "INSERT INTO t VALUES (3)", NULL, NULL, NULL), SQLITE_OK);
  }
  assert_true(reader_sees(path, 4));   /* the writes after the reads are seen */
  sqlite3_close(h);
  unlink(path), unlink(wal), unlink(shm);
  rmdir(dir);
}

int main(int argc, char **argv) {
  if (argc == 4 && !strcmp(argv[1], "--count-rows")) return count_rows(argv[2]) == atoi(argv[3]) ? 0 : 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fault_isolation),
    cmocka_unit_test(test_library_binding),
    cmocka_unit_test(test_reference_as_candidate),
    cmocka_unit_test(test_sandbox),
    cmocka_unit_test(test_worker_options),
    cmocka_unit_test(test_compile_cache),
    cmocka_unit_test(test_statistics),
    cmocka_unit_test(test_stopping_rule),
    cmocka_unit_test(test_counters),
    cmocka_unit_test(test_parse_events),
    cmocka_unit_test(test_status_names),
    cmocka_unit_test(test_typed_fills),
    cmocka_unit_test(test_typed_memory),
    cmocka_unit_test(test_typed_verify),
    cmocka_unit_test(test_inout),
    cmocka_unit_test(test_reference_once),
    cmocka_unit_test(test_batch),
    cmocka_unit_test(test_child_group_ends),
    cmocka_unit_test(test_batch_stop_and_guard),
    cmocka_unit_test(test_guard_keeps_sqlite_locks),
  };
  return cmocka_run_group_tests_name("measure", tests, setup, teardown);
}
