/*
** bench_space.c -- speed of the space engine, measured against baselines
** in the same run, in four tables:
**  1. load + exact count and 10,000 distinct uniform samples, each from a
**     freshly loaded space (cold memo tables), median [min, max] over the
**     repeats, next to the naive C product-then-filter count (sp_valid on
**     every combination) and, up to 3*10^7 combinations, Python's
**     itertools brute force (scripts/bruteforce_count.py); both must agree
**     with the engine's count;
**  2. the parameter order: the count (time, and the memory it adds to the
**     loaded space: getrusage's peak RSS after the count minus before it)
**     of each space with its parameters in file order, reversed and
**     shuffled, every one in a fresh process (this program re-executed with
**     --count-order); worst against best must stay within 3x;
**  3. a parameter of a million values: load + count + three unranks;
**  4. Kernel Tuner's Searchspace construction (bench/kt_searchspace.py),
**     when kernel_tuner is importable (KT_PYTHON, else the venv of
**     experiments/kt_compare, else python3), against rooftune's load +
**     count of the same files (wall and CPU time) and its count alone
**     (Kernel Tuner gets its parameter lists already evaluated, rooftune
**     reads and parses the file), and the ratios of the medians.
** Child programs run through fork/exec with argument vectors (no shell).
**
** usage: bench_space [REPEATS [TABLES]]   (from the project root; `make
**        bench`; TABLES: the digits of the tables to run, default 1234)
**        bench_space --count-order FILE SEED [SET]   (one child of table 2)
*/
#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_rng.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "search_spaces/sp.h"

#define BAT_HOTSPOT "tests/data/hotspot_bat.json"

/* Table 1; python: also Python's brute force (about 35 s on a hotspot). */
static const struct { const char *path, *label; int python; } spaces[] = {
  {"data/t1/gemm_milo.json", "gemm_milo (T1)", 1},
  {"data/t1/convolution_milo.json", "convolution_milo (T1)", 1},
  {"data/t1/dedispersion_milo.json", "dedispersion_milo (T1)", 1},
  {"data/t1/pnpoly.json", "pnpoly (T1)", 1},
  {BAT_HOTSPOT, "hotspot (BAT file, 22M)", 1},
  {"bench/spaces/hotspot.json", "hotspot (limits bound)", 0},
  {"bench/spaces/wide.json", "wide_groups (10^12)", 0},
};

/* Table 2: spaces whose count is measured under permutations. */
static const struct { const char *path, *set, *label; } ordered[] = {
  {"data/t1/gemm_milo.json", NULL, "gemm_milo"},
  {"data/t1/convolution_milo.json", NULL, "convolution_milo"},
  {"data/t1/dedispersion_milo.json", NULL, "dedispersion_milo"},
  {"data/t1/pnpoly.json", NULL, "pnpoly"},
  {BAT_HOTSPOT, NULL, "hotspot (BAT file)"},
  {"bench/spaces/wide.json", NULL, "wide_groups"},
  {"targets/cuda/gemm.json", "M=512,N=512,K=512", "cuda gemm 512^3"},
};
#define NSHUFFLE 8   /* orders per space: file, reversed, NSHUFFLE shuffles */

/* Table 4: the shared spaces and the BAT-shaped one. */
static const char *const kt_spaces[] = {
  "data/t1/gemm_milo.json", "data/t1/convolution_milo.json",
  "data/t1/dedispersion_milo.json", "data/t1/pnpoly.json", BAT_HOTSPOT,
};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct stats { double med, lo, hi; } stats;

static stats summarize(double *x, int n) {
  qsort(x, (size_t)n, sizeof *x, cmp_double);
  return (stats){n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]), x[0], x[n - 1]};
}

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static long peak_rss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static void die(const char *fmt, const char *a, const char *b) {
  fprintf(stderr, "bench_space: ");
  fprintf(stderr, fmt, a, b);
  fputc('\n', stderr);
  exit(1);
}

static sp_space *load_text(const char *text, const char *name, const char *set) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = set ? sp_parse_bindings(set, a, &b, &err) : 0;
  sp_space *sp = nb < 0 ? NULL : sp_load_string(text, name, b, nb, &err);
  free(b);
  sx_arena_free(a);
  if (!sp) die("%s: %s", name, err.msg);
  return sp;
}

static sp_space *load(const char *path) {
  rt_err err = {0};
  sp_space *sp = sp_load_file(path, NULL, 0, &err);
  if (!sp) die("%s%s", err.msg, "");
  return sp;
}

/* Run argv (no shell); its stdout (up to cap-1 bytes) into out; its
** resource use into *ru. Returns the exit status, -1 if it did not exit. */
static int run_child(char *const argv[], char *out, size_t cap, struct rusage *ru) {
  int fd[2];
  if (pipe(fd)) die("pipe: %s%s", strerror(errno), "");
  pid_t pid = fork();
  if (pid < 0) die("fork: %s%s", strerror(errno), "");
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 2);
    execvp(argv[0], argv);
    _exit(127);
  }
  close(fd[1]);
  size_t n = 0;
  for (ssize_t got; (got = read(fd[0], out + n, cap - 1 - n)) > 0 || (got < 0 && errno == EINTR);)
    if (got > 0) n += (size_t)got;
  out[n] = 0;
  close(fd[0]);
  int status;
  while (wait4(pid, &status, 0, ru) < 0)
    if (errno != EINTR) die("wait4: %s%s", strerror(errno), "");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- Table 1: the engine against naive C and Python ---- */

/* Naive product-then-filter count, the C baseline. */
static rt_count naive_count(sp_space *sp) {
  int np = sp_nparams(sp);
  int *cfg = calloc((size_t)np, sizeof *cfg);
  rt_count n = 0;
  for (;;) {
    n += (rt_count)sp_valid(sp, cfg, NULL);
    int p = np - 1;
    while (p >= 0 && ++cfg[p] == sp_nvalues(sp, p)) cfg[p--] = 0;
    if (p < 0) break;
  }
  free(cfg);
  return n;
}

/* Seconds Python's brute force took (and its count), or -1. */
static double python_seconds(const char *path, long long *valid) {
  char line[512];
  struct rusage ru;
  char *argv[] = {"python3", "scripts/bruteforce_count.py", (char *)path, NULL};
  if (run_child(argv, line, sizeof line, &ru) != 0) return -1;
  char *v = strstr(line, "\"valid\": "), *t = strstr(line, "\"seconds\": ");
  if (!v || !t) return -1;
  *valid = atoll(v + 9);
  return atof(t + 11);
}

static void table_engine(int reps) {
  double *t_count = malloc((size_t)reps * sizeof(double));
  double *t_sample = malloc((size_t)reps * sizeof(double));
  printf("1. load + count and 10,000 distinct samples: %d repeats, fresh load (cold memo) each\n", reps);
  printf("times in ms: median [min, max]\n\n");
  printf("%-26s %22s %22s %22s %12s %12s %12s %10s\n", "space", "valid / cartesian",
         "load+count", "sample 10k distinct", "naive C", "naive/engine", "Python", "Py/engine");
  for (size_t s = 0; s < sizeof spaces / sizeof *spaces; s++) {
    rt_count valid = 0, cart = 0;
    for (int r = 0; r < reps; r++) {
      double t0 = rt_now();
      sp_space *sp = load(spaces[s].path);
      valid = sp_count(sp);
      t_count[r] = 1e3 * (rt_now() - t0);
      cart = sp_cartesian(sp);
      sp_free(sp);

      sp = load(spaces[s].path);
      int n = valid < 10000 ? (int)valid : 10000;
      int *cfgs = malloc((size_t)n * (size_t)sp_nparams(sp) * sizeof *cfgs);
      gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
      gsl_rng_set(rng, (unsigned long)r + 1);
      rt_err err = {0};
      t0 = rt_now();
      if (sp_sample(sp, rng, n, 1, cfgs, &err)) die("%s: %s", spaces[s].path, err.msg);
      t_sample[r] = 1e3 * (rt_now() - t0);
      gsl_rng_free(rng);
      free(cfgs);
      sp_free(sp);
    }
    stats c = summarize(t_count, reps), sm = summarize(t_sample, reps);
    char vb[48], cb[48], sizes[100], cs[64], ss[64], naive[32] = "-", ratio[32] = "-",
                                                        py[32] = "-", pyratio[32] = "-";
    snprintf(sizes, sizeof sizes, "%s / %s", rt_count_str(valid, vb), rt_count_str(cart, cb));
    snprintf(cs, sizeof cs, "%.2f [%.2f, %.2f]", c.med, c.lo, c.hi);
    snprintf(ss, sizeof ss, "%.2f [%.2f, %.2f]", sm.med, sm.lo, sm.hi);
    if (cart <= (rt_count)30000000) {
      sp_space *sp = load(spaces[s].path);
      double t0 = rt_now();
      rt_count nv = naive_count(sp);
      double tn = 1e3 * (rt_now() - t0);
      sp_free(sp);
      if (nv != valid) die("%s: the naive count %s the engine's", spaces[s].path, "differs from");
      snprintf(naive, sizeof naive, "%.1f", tn);
      snprintf(ratio, sizeof ratio, "%.1fx", tn / c.med);
      long long pv = -1;
      double tp = spaces[s].python ? python_seconds(spaces[s].path, &pv) : -1;
      if (tp >= 0) {
        if ((rt_count)pv != valid) die("%s: Python's count %s the engine's", spaces[s].path, "differs from");
        snprintf(py, sizeof py, "%.1f", 1e3 * tp);
        snprintf(pyratio, sizeof pyratio, "%.0fx", 1e3 * tp / c.med);
      }
    }
    printf("%-26s %22s %22s %22s %12s %12s %12s %10s\n", spaces[s].label, sizes, cs, ss, naive,
           ratio, py, pyratio);
    fflush(stdout);
  }
  free(t_count);
  free(t_sample);
}

/* ---- Table 2: the parameter order ---- */

/* The text of path with its TuningParameters permuted: seed 0 the file's
** order, 1 reversed, else shuffled by seed. Caller frees. */
static char *permuted_text(const char *path, unsigned long seed) {
  json_error_t je;
  json_t *root = json_load_file(path, 0, &je);
  if (!root) die("%s: %s", path, je.text);
  json_t *tp = json_object_get(json_object_get(root, "ConfigurationSpace"), "TuningParameters");
  size_t n = json_array_size(tp);
  json_t **item = malloc((n ? n : 1) * sizeof *item);
  for (size_t i = 0; i < n; i++) item[i] = json_incref(json_array_get(tp, i));
  if (seed == 1) {
    for (size_t i = 0; i < n / 2; i++) {
      json_t *t = item[i];
      item[i] = item[n - 1 - i];
      item[n - 1 - i] = t;
    }
  } else if (seed > 1) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    for (size_t i = n; i > 1; i--) {
      size_t j = gsl_rng_uniform_int(rng, i);
      json_t *t = item[i - 1];
      item[i - 1] = item[j];
      item[j] = t;
    }
    gsl_rng_free(rng);
  }
  json_array_clear(tp);
  for (size_t i = 0; i < n; i++) json_array_append_new(tp, item[i]);
  free(item);
  char *text = json_dumps(root, JSON_PRESERVE_ORDER);
  json_decref(root);
  return text;
}

/* The child of table 2: count once, then unrank the middle rank (the
** first canonical operation: its search runs in file order); print
** "SECONDS RSS_ADDED_KB EVALS MEMO_ENTRIES VALID UNRANK_SECONDS
** UNRANK_EVALS". */
static int count_order(const char *path, unsigned long seed, const char *set) {
  char *text = permuted_text(path, seed);
  sp_space *sp = load_text(text, path, set);
  long before = peak_rss_kb();
  double t0 = rt_now();
  rt_count valid = sp_count(sp);
  double secs = rt_now() - t0;
  sp_stats st, su;
  sp_get_stats(sp, &st);
  long added = peak_rss_kb() - before;
  int *cfg = malloc((size_t)sp_nparams(sp) * sizeof *cfg);
  t0 = rt_now();
  if (valid) sp_unrank(sp, valid / 2, cfg);
  double usecs = rt_now() - t0;
  sp_get_stats(sp, &su);
  free(cfg);
  char vb[48];
  printf("%.6f %ld %llu %zu %s %.6f %llu\n", secs, added, (unsigned long long)st.evals,
         st.memo_entries, rt_count_str(valid, vb), usecs,
         (unsigned long long)(su.evals - st.evals));
  sp_free(sp);
  free(text);
  return 0;
}

typedef struct range { double lo, hi; } range;

static void widen(range *r, double x) {
  if (x < r->lo) r->lo = x;
  if (x > r->hi) r->hi = x;
}

/* hi/lo, each taken as at least floor (below it is noise) */
static double ratio(range r, double floor) {
  return (r.hi > floor ? r.hi : floor) / (r.lo > floor ? r.lo : floor);
}

static void table_orders(const char *self) {
  enum { RUNS = 7, NORD = 2 + NSHUFFLE };
  range unrank_rows[sizeof ordered / sizeof *ordered][2];
  printf("\n2. count under %d orders of the parameters (file, reversed, %d shuffles), each\n"
         "in a fresh process: the deterministic work (conditions evaluated, memo entries:\n"
         "sp_get_stats), the time (the fastest of %d runs of each order) and the peak RSS the\n"
         "count adds to the loaded space (below 1 MB counted as 1 MB). Columns: the best and\n"
         "the worst order, and their ratio. within 3x: work, memory and time all are (on a\n"
         "loaded machine the time alone can differ more between identical runs)\n\n",
         NORD, NSHUFFLE, RUNS);
  printf("%-20s %21s %7s %17s %7s %17s %7s %15s %7s  %s\n", "space", "evaluations", "ratio",
         "memo entries", "ratio", "time ms", "ratio", "memory KB", "ratio", "within 3x");
  for (size_t s = 0; s < sizeof ordered / sizeof *ordered; s++) {
    range ev = {1e300, 0}, me = {1e300, 0}, tm = {1e300, 0}, rs = {1e300, 0};
    range ut = {1e300, 0}, ue = {1e300, 0};
    char valid0[64] = "";
    for (unsigned long o = 0; o < NORD; o++) {
      double t[RUNS], u[RUNS], evals = 0, memo = 0, mem = 0, uevals = 0;
      for (int r = 0; r < RUNS; r++) {
        char seed[32], out[256], valid[64];
        struct rusage ru;
        snprintf(seed, sizeof seed, "%lu", o < 2 ? o : 100 + o);
        char *argv[] = {(char *)self, "--count-order", (char *)ordered[s].path, seed,
                        (char *)ordered[s].set, NULL};
        if (run_child(argv, out, sizeof out, &ru) != 0) die("%s: the count of one order failed%s", ordered[s].path, "");
        long added;
        if (sscanf(out, "%lf %ld %lf %lf %63s %lf %lf", &t[r], &added, &evals, &memo, valid,
                   &u[r], &uevals) != 7)
          die("%s: bad child output %s", ordered[s].path, out);
        if (!valid0[0]) snprintf(valid0, sizeof valid0, "%s", valid);
        if (strcmp(valid, valid0)) die("%s: the count depends on the order (%s)", ordered[s].path, valid);
        if ((double)added > mem) mem = (double)added;
      }
      widen(&ev, evals);
      widen(&me, memo);
      widen(&tm, 1e3 * summarize(t, RUNS).lo);
      widen(&rs, mem);
      widen(&ut, 1e3 * summarize(u, RUNS).lo);
      widen(&ue, uevals);
    }
    double r[4] = {ratio(ev, 1), ratio(me, 1), ratio(tm, 1e-3), ratio(rs, 1024)};
    printf("%-20s %10.0f %10.0f %6.2fx %8.0f %8.0f %6.2fx %8.3f %8.3f %6.2fx %7.0f %7.0f %6.2fx  %s\n",
           ordered[s].label, ev.lo, ev.hi, r[0], me.lo, me.hi, r[1], tm.lo, tm.hi, r[2], rs.lo,
           rs.hi, r[3], r[0] > 3 || r[1] > 3 || r[3] > 3 ? "NO" : r[2] > 3 ? "no: time only" : "yes");
    unrank_rows[s][0] = ut;
    unrank_rows[s][1] = ue;
    fflush(stdout);
  }
  printf("\nthe first unrank after the count (canonical order: a search in file order, which\n"
         "depends on the order; later calls reuse its memo): best and worst order\n\n");
  printf("%-20s %21s %17s\n", "space", "evaluations", "time ms");
  for (size_t s = 0; s < sizeof ordered / sizeof *ordered; s++)
    printf("%-20s %10.0f %10.0f %8.3f %8.3f\n", ordered[s].label, unrank_rows[s][1].lo,
           unrank_rows[s][1].hi, unrank_rows[s][0].lo, unrank_rows[s][0].hi);
}

/* ---- Table 3: a million values ---- */

static void table_million(int reps) {
  static const char *text =
      "{\"ConfigurationSpace\": {\"TuningParameters\": ["
      "{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[x * 7919 % 1000003 for x in range(1000000)]\"},"
      "{\"Name\": \"b\", \"Type\": \"int\", \"Values\": \"[1, 2, 3]\"}],"
      "\"Conditions\": [{\"Expression\": \"a % 3 != b\"}]}}";
  double *t[3];
  for (int k = 0; k < 3; k++) t[k] = malloc((size_t)reps * sizeof(double));
  rt_count valid = 0;
  for (int r = 0; r < reps; r++) {
    double t0 = rt_now();
    sp_space *sp = load_text(text, "million.json", NULL);
    double t1 = rt_now();
    valid = sp_count(sp);
    double t2 = rt_now();
    int cfg[2];
    for (int k = 1; k <= 3; k++) sp_unrank(sp, valid / 4 * (rt_count)k, cfg);
    t[0][r] = 1e3 * (t1 - t0);
    t[1][r] = 1e3 * (t2 - t1);
    t[2][r] = 1e3 * (rt_now() - t2);
    sp_free(sp);
  }
  char vb[48], f[3][64];
  for (int k = 0; k < 3; k++) {
    stats st = summarize(t[k], reps);
    snprintf(f[k], sizeof f[k], "%.1f [%.1f, %.1f]", st.med, st.lo, st.hi);
    free(t[k]);
  }
  printf("\n3. a parameter of 10^6 values (b: 3 values, one condition a %% 3 != b); ms: median [min, max]\n\n");
  printf("%-22s %10s %24s %24s %24s\n", "space", "valid", "load", "count", "3 unranks (file order)");
  printf("%-22s %10s %24s %24s %24s\n", "a: 10^6 values, b: 3", rt_count_str(valid, vb), f[0], f[1], f[2]);
}

/* ---- Table 4: Kernel Tuner ---- */

/* The Python that runs kt_searchspace.py. */
static const char *kt_python(void) {
  const char *env = getenv("KT_PYTHON");
  if (env && *env) return env;
  if (access("experiments/kt_compare/.venv/bin/python", X_OK) == 0)
    return "experiments/kt_compare/.venv/bin/python";
  return "python3";
}

/* Parse {"valid": N, "seconds": [...], "cpu": [...]} into its arrays. */
static int parse_kt(const char *out, long long *valid, double *wall, double *cpu, int max) {
  json_error_t je;
  json_t *j = json_loads(out, 0, &je);
  if (!j) return -1;
  json_t *w = json_object_get(j, "seconds"), *c = json_object_get(j, "cpu");
  int n = (int)json_array_size(w);
  if (n > max) n = max;
  for (int i = 0; i < n; i++) {
    wall[i] = json_number_value(json_array_get(w, (size_t)i));
    cpu[i] = json_number_value(json_array_get(c, (size_t)i));
  }
  *valid = json_integer_value(json_object_get(j, "valid"));
  json_decref(j);
  return n;
}

static void table_kt(int reps) {
  const char *py = kt_python();
  char out[65536], nrep[16];
  struct rusage ru;
  snprintf(nrep, sizeof nrep, "%d", reps);
  printf("\n4. Kernel Tuner's Searchspace construction against rooftune's load + count\n\n");
  char *probe[] = {(char *)py, "bench/kt_searchspace.py", "--version", NULL};
  if (run_child(probe, out, sizeof out, &ru) != 0) {
    printf("skipped: kernel_tuner is not importable by %s (sh experiments/kt_compare/setup.sh\n"
           "makes a venv with it; KT_PYTHON=... picks another interpreter)\n", py);
    return;
  }
  printf("Kernel Tuner %s (%s), %d repeats each; rooftune %d repeats; ms: median [min, max]\n\n",
         strtok(out, "\n"), py, reps, reps);
  printf("%-32s %24s %24s %7s %24s %24s %7s %22s %7s\n", "space", "KT wall", "rooftune wall",
         "ratio", "KT cpu", "rooftune cpu", "ratio", "rooftune count alone", "ratio");
  double *kw = malloc((size_t)reps * sizeof *kw), *kc = malloc((size_t)reps * sizeof *kc);
  double *rw = malloc((size_t)reps * sizeof *rw), *rc = malloc((size_t)reps * sizeof *rc);
  double *ro = malloc((size_t)reps * sizeof *ro);
  for (size_t s = 0; s < sizeof kt_spaces / sizeof *kt_spaces; s++) {
    char *argv[] = {(char *)py, "bench/kt_searchspace.py", (char *)kt_spaces[s], nrep, NULL};
    long long kvalid = -1;
    int n = run_child(argv, out, sizeof out, &ru) == 0 ? parse_kt(out, &kvalid, kw, kc, reps) : -1;
    if (n <= 0) die("%s: %s", kt_spaces[s], "Kernel Tuner's run failed");
    rt_count valid = 0;
    for (int r = 0; r < reps; r++) {
      double t0 = rt_now(), c0 = cpu_now();
      sp_space *sp = load(kt_spaces[s]);
      double t1 = rt_now();
      valid = sp_count(sp);
      rw[r] = rt_now() - t0;
      rc[r] = cpu_now() - c0;
      ro[r] = rt_now() - t1;
      sp_free(sp);
    }
    if ((rt_count)kvalid != valid) die("%s: %s", kt_spaces[s], "Kernel Tuner's count differs from rooftune's");
    stats a = summarize(kw, n), b = summarize(rw, reps), c = summarize(kc, n), d = summarize(rc, reps);
    stats o = summarize(ro, reps);
    char f[5][64];
    snprintf(f[0], sizeof f[0], "%.1f [%.1f, %.1f]", 1e3 * a.med, 1e3 * a.lo, 1e3 * a.hi);
    snprintf(f[1], sizeof f[1], "%.3f [%.3f, %.3f]", 1e3 * b.med, 1e3 * b.lo, 1e3 * b.hi);
    snprintf(f[2], sizeof f[2], "%.1f [%.1f, %.1f]", 1e3 * c.med, 1e3 * c.lo, 1e3 * c.hi);
    snprintf(f[3], sizeof f[3], "%.3f [%.3f, %.3f]", 1e3 * d.med, 1e3 * d.lo, 1e3 * d.hi);
    snprintf(f[4], sizeof f[4], "%.3f [%.3f, %.3f]", 1e3 * o.med, 1e3 * o.lo, 1e3 * o.hi);
    printf("%-32s %24s %24s %6.0fx %24s %24s %6.0fx %22s %6.0fx\n", kt_spaces[s], f[0], f[1],
           a.med / b.med, f[2], f[3], c.med / d.med, f[4], a.med / o.med);
    fflush(stdout);
  }
  free(kw);
  free(kc);
  free(rw);
  free(rc);
  free(ro);
}

int main(int argc, char **argv) {
  if (argc >= 4 && !strcmp(argv[1], "--count-order"))
    return count_order(argv[2], strtoul(argv[3], NULL, 10), argc > 4 ? argv[4] : NULL);
  int reps = argc > 1 ? atoi(argv[1]) : 7;
  const char *which = argc > 2 ? argv[2] : "1234";
  if (reps < 1) reps = 1;
  printf("rooftune space engine benchmark\n\n");
  if (strchr(which, '1')) table_engine(reps);
  if (strchr(which, '2')) table_orders("/proc/self/exe");
  if (strchr(which, '3')) table_million(reps);
  if (strchr(which, '4')) table_kt(reps);
  return 0;
}
