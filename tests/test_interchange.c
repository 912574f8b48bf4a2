/*
** test_interchange.c -- results files in and out as the community's formats
** define them: every T4 invalidity value and what a result keeps
** (measurements with units, run times, search-algorithm and benchmark
** times, provenance); bad values refused with the result and field named
** (non-numeric run times, a configuration twice, kernel names with
** blanks); spaces inferred from a T4 file without its T1 file, checked
** against the T1 files; Kernel Tuner cache files in (as Kernel Tuner 1.5
** writes them, unclosed) and out; T4 exports validated against the
** published schema (tests/data/t4-results-schema-1.0.0.json) by Python's
** jsonschema; Kernel Tuner's simulation mode run on an exported cache when
** kernel_tuner is importable; a truncated gzip file (a use-after-free
** once); dtypes; merge keeping what imports keep; and the CLI: an import
** of an unreadable file creates no database, an export never overwrites
** the database nor, when it fails, an existing output file.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "db/db.h"
#include "targets/tg.h"
#include "targets/host/hk.h"
#include "tuner/tu.h"
#include "tk_exe.h"

#define T1 "data/t1/"
#define T4 "data/t4/"
#define SCHEMA "tests/data/t4-results-schema-1.0.0.json"

static char rooftune[4096], tmp[256];

/* ---- Helpers ---- */

/* A scratch path under this test's folder (static buffer, one at a time). */
static const char *scratch(const char *name) {
  static char p[16][512];
  static int k;
  k = (k + 1) % 16;
  snprintf(p[k], sizeof p[k], "%s/%s", tmp, name);
  return p[k];
}

static void remove_db(const char *path) {
  static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof sfx / sizeof *sfx; i++) {
    char p[600];
    snprintf(p, sizeof p, "%s%s", path, sfx[i]);
    unlink(p);
  }
}

static db *fresh(const char *path) {
  remove_db(path);
  rt_err err = {0};
  db *d = db_open(path, 1, &err);
  if (!d) fail_msg("%s", err.msg);
  return d;
}

static sp_space *load(const char *path) {
  rt_err err = {0};
  sp_space *sp = sp_load_file(path, NULL, 0, &err);
  if (!sp) fail_msg("%s", err.msg);
  return sp;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  rt_str s = {0};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) rt_str_printf(&s, "%.*s", (int)n, buf);
  fclose(f);
  return s.s ? s.s : rt_strdup("");
}

/* A T4 or JSON file (gzip or plain) read independently of the importer. */
static json_t *read_json(const char *path) {
  gzFile f = gzopen(path, "rb");
  assert_non_null(f);
  rt_str s = {0};
  char buf[65536];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) rt_str_printf(&s, "%.*s", n, buf);
  gzclose(f);
  json_error_t je;
  json_t *j = json_loadb(s.s, s.n, 0, &je);
  if (!j) fail_msg("%s: %s", path, je.text);
  free(s.s);
  return j;
}

typedef struct result {
  int rc;        /* exit status; 127: the program could not be run */
  char *out;     /* stdout and stderr together */
} result;

/* Run argv (argv[0] looked up in PATH unless it has a slash); capture. */
static result run_argv(const char *const *argv) {
  char out[600];
  snprintf(out, sizeof out, "%s/run.out", tmp);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    FILE *f = fopen(out, "w");
    if (!f) _exit(126);
    dup2(fileno(f), 1);
    dup2(fileno(f), 2);
    execvp(argv[0], (char *const *)argv);
    _exit(127);
  }
  int status;
  waitpid(pid, &status, 0);
  result r = {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), read_text(out)};
  if (!r.out) r.out = rt_strdup("");
  return r;
}

/* Run rooftune with the NULL-terminated arguments. */
static result rt(const char *arg0, ...) {
  const char *argv[64] = {rooftune};
  int argc = 1;
  va_list ap;
  va_start(ap, arg0);
  for (const char *a = arg0; a && argc < 63; a = va_arg(ap, const char *)) argv[argc++] = a;
  va_end(ap);
  argv[argc] = NULL;
  return run_argv(argv);
}

static int64_t scalar(db *d, const char *sql) {
  sqlite3_stmt *st = db__query(d, NULL, sql, "");
  assert_non_null(st);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static double real(db *d, const char *sql) {
  sqlite3_stmt *st = db__query(d, NULL, sql, "");
  assert_non_null(st);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  double v = sqlite3_column_double(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* Every row of a query as text lines (columns separated by '|'). */
static char *dump(db *d, const char *sql) {
  sqlite3_stmt *st = db__query(d, NULL, sql, "");
  assert_non_null(st);
  rt_str s = {0};
  while (sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const unsigned char *t = sqlite3_column_text(st, i);
      if (sqlite3_column_type(st, i) == SQLITE_FLOAT)
        rt_str_printf(&s, "%s%.17g", i ? "|" : "", sqlite3_column_double(st, i));
      else
        rt_str_printf(&s, "%s%s", i ? "|" : "", t ? (const char *)t : "NULL");
    }
    rt_str_printf(&s, "\n");
  }
  sqlite3_finalize(st);
  return s.s ? s.s : rt_strdup("");
}

/* a and b equal, else fail showing the first line where they differ. */
static void same_text(const char *a, const char *b) {
  size_t line = 1;
  const char *pa = a, *pb = b;
  while (*pa && *pa == *pb) {
    if (*pa == '\n') line++, a = pa + 1, b = pb + 1;
    pa++, pb++;
  }
  if (*pa || *pb)
    fail_msg("line %zu differs:\n  %.*s\n  %.*s", line, (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
}

static int64_t import_opts(db *d, const char *path, const db_import_opts *o, const char *target) {
  rt_err err = {0};
  db_import *im = db_import_read(path, o, &err);
  if (!im) fail_msg("%s", err.msg);
  int64_t c;
  if (db_import_store(d, im, target, &c, &err)) fail_msg("%s", err.msg);
  db_import_free(im);
  return c;
}

/* The error of reading path (which must fail). */
static const char *read_fails(const char *path, const db_import_opts *o) {
  static rt_err err;
  memset(&err, 0, sizeof err);
  db_import *im = db_import_read(path, o, &err);
  if (im) fail_msg("%s: read, expected an error", path);
  return err.msg;
}

static void export_to(db *d, const char *target, const char *kernel, const char *format,
                      const char *path) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  rt_err err = {0};
  int n;
  if (db_export(d, target, kernel, NULL, format, f, &n, &err)) fail_msg("%s", err.msg);
  fclose(f);
}

/* ---- Every T4 invalidity value, and what a result keeps ---- */

static const char statuses_t4[] =
    "{\"schema_version\": \"1.0.0\", \"metadata\": {\"timeunit\": \"milliseconds\","
    " \"tool\": {\"name\": \"kernel_tuner\", \"version\": \"1.5.0\"}}, \"results\": ["
    "{\"timestamp\": \"2025-01-01 00:00:00\", \"configuration\": {\"a\": 1, \"b\": \"x\"},"
    " \"times\": {\"compilation\": 10, \"benchmark\": 7, \"search_algorithm\": 0.5, \"framework\": 1,"
    " \"validation\": 2, \"runtimes\": [1, 2, 3]}, \"invalidity\": \"correct\", \"correctness\": 1,"
    " \"measurements\": [{\"name\": \"time\", \"value\": 2, \"unit\": \"ms\"},"
    " {\"name\": \"GFLOP/s\", \"value\": 123.5, \"unit\": \"GFLOP/s\"},"
    " {\"name\": \"power\", \"value\": [1, 2], \"unit\": \"W\"}], \"objectives\": [\"time\"]},"
    "{\"configuration\": {\"a\": 2, \"b\": \"x\"}, \"times\": {\"runtimes\": [5]},"
    " \"invalidity\": \"correctness\", \"correctness\": 0,"
    " \"measurements\": [{\"name\": \"time\", \"value\": 9, \"unit\": \"\"}]},"
    "{\"configuration\": {\"a\": 1, \"b\": \"y\"}, \"times\": {}, \"invalidity\": \"compile\", \"correctness\": 0},"
    "{\"configuration\": {\"a\": 2, \"b\": \"y\"}, \"times\": {}, \"invalidity\": \"runtime\", \"correctness\": 0},"
    "{\"configuration\": {\"a\": 3, \"b\": \"x\"}, \"times\": {}, \"invalidity\": \"timeout\", \"correctness\": 0},"
    "{\"configuration\": {\"a\": 3, \"b\": \"y\"}, \"times\": {}, \"invalidity\": \"constraints\", \"correctness\": 0},"
    "{\"configuration\": {\"a\": 4, \"b\": \"x\"}, \"times\": {}, \"invalidity\": \"correct\", \"correctness\": 0,"
    " \"measurements\": [{\"name\": \"time\", \"value\": 1.5}]},"
    "{\"configuration\": {\"a\": 4, \"b\": \"y\"}, \"times\": {}, \"invalidity\": \"invalid\", \"correctness\": 0}"
    "]}";

/* The statuses of statuses_t4's results, in order: the schema's six
** values, then rooftune's two pre-schema-6 spellings. */
static const char expected_statuses[] =
    "ok\nwrong_result\ncompile_error\nruntime_error\ntimeout\ninvalid\nwrong_result\ninvalid\n";

static void test_t4_statuses_and_fields(void **state) {
  (void)state;
  const char *in = scratch("statuses.json"), *dbp = scratch("st.db");
  write_text(in, statuses_t4);
  db *d = fresh(dbp);
  db_import_opts o = {.kernel = "k"};
  int64_t c = import_opts(d, in, &o, "gpu");
  char *st = dump(d, "SELECT status FROM trials ORDER BY id");
  assert_string_equal(st, expected_statuses);
  free(st);
  /* the correct result: times in seconds (as the file's value times the
  ** unit), the benchmark time as recorded (not the sum of the runs, 6 ms),
  ** the mean and standard deviation of its run times 1, 2, 3 ms */
  char *row = dump(d, "SELECT time, min, repeats, bench_s, strategy_s, compile_s, verify_s,"
                      " framework_s, created FROM trials ORDER BY id LIMIT 1");
  char want[512];
  snprintf(want, sizeof want, "%.17g|%.17g|3|%.17g|%.17g|%.17g|%.17g|%.17g|2025-01-01 00:00:00\n",
           2 * 1e-3, 1 * 1e-3, 7 * 1e-3, 0.5 * 1e-3, 10 * 1e-3, 2 * 1e-3, 1 * 1e-3);
  assert_string_equal(row, want);
  free(row);
  assert_true(fabs(real(d, "SELECT mean FROM trials ORDER BY id LIMIT 1") - 2e-3) < 1e-15);
  assert_true(fabs(real(d, "SELECT sd FROM trials ORDER BY id LIMIT 1") - 1e-3) < 1e-15);
  /* every measurement with its unit, and the run times */
  char *ms = dump(d, "SELECT measurements, runtimes FROM trials ORDER BY id LIMIT 1");
  json_t *m = json_loadb(ms, strchr(ms, '|') - ms, 0, NULL), *rt_ = json_loads(strchr(ms, '|') + 1, 0, NULL);
  assert_int_equal(json_array_size(m), 3);
  assert_string_equal(json_string_value(json_object_get(json_array_get(m, 1), "unit")), "GFLOP/s");
  assert_true(json_real_value(json_object_get(json_array_get(m, 1), "value")) == 123.5);
  assert_int_equal(json_array_size(json_object_get(json_array_get(m, 2), "value")), 2);
  assert_int_equal(json_array_size(rt_), 3);
  assert_true(json_number_value(json_array_get(rt_, 2)) == 3 * 1e-3);
  json_decref(m);
  json_decref(rt_);
  free(ms);
  /* failed results carry no time; the wrong result keeps its run times */
  assert_int_equal(scalar(d, "SELECT count(*) FROM trials WHERE status != 'ok' AND time IS NOT NULL"), 0);
  assert_int_equal(scalar(d, "SELECT count(*) FROM trials WHERE status = 'wrong_result' AND runtimes = '[0.0050000000000000001]'"), 1);
  /* provenance: format, schema version, tool, the file's header */
  rt_str q = {0};
  rt_str_printf(&q, "SELECT json_extract(provenance, '$.format') || ' ' || json_extract(provenance,"
                " '$.schema_version') || ' ' || json_extract(provenance, '$.tool.name') || ' ' ||"
                " json_extract(provenance, '$.header.metadata.timeunit') || ' ' ||"
                " json_extract(provenance, '$.space') FROM campaigns WHERE id = %lld", (long long)c);
  char *prov = dump(d, q.s);
  free(q.s);
  assert_string_equal(prov, "t4 1.0.0 kernel_tuner milliseconds inferred\n");
  free(prov);
  /* exported and imported again: the same statuses, the GFLOP/s
  ** measurement with its unit, the run times */
  const char *out = scratch("statuses.out.json");
  export_to(d, "gpu", "k", "t4", out);
  db *e = fresh(scratch("st2.db"));
  import_opts(e, out, &o, "gpu");
  st = dump(e, "SELECT status FROM trials ORDER BY id");
  assert_string_equal(st, expected_statuses);
  free(st);
  static const char cmp[] = "SELECT config, status, time, mean, sd, min, repeats, bench_s, strategy_s,"
                            " compile_s, verify_s, framework_s, runtimes, created FROM trials ORDER BY id";
  char *a = dump(d, cmp), *b = dump(e, cmp);
  same_text(a, b);
  free(a);
  free(b);
  assert_int_equal(scalar(e, "SELECT count(*) FROM trials WHERE json_extract(measurements, '$[1].unit') = 'GFLOP/s'"
                             " AND json_extract(measurements, '$[1].value') = 123.5"), 1);
  /* the same through a Kernel Tuner cache: the statuses it has no class
  ** for (timeout, wrong result) come back through rooftune_status */
  const char *kt = scratch("statuses.kt.json");
  export_to(d, "gpu", "k", "kt-cache", kt);
  db *f = fresh(scratch("st3.db"));
  import_opts(f, kt, &o, "gpu");
  static const char cmp2[] = "SELECT config, status, time, bench_s, strategy_s, compile_s, verify_s,"
                             " framework_s, runtimes, created FROM trials ORDER BY config";
  a = dump(d, cmp2), b = dump(f, cmp2);
  same_text(a, b);
  free(a);
  free(b);
  db_close(d);
  db_close(e);
  db_close(f);
}

/* ---- Bad values: the result and the field named, nothing stored ---- */

static const char small_t4[] =
    "{\"results\": ["
    "{\"configuration\": {\"a\": 1}, \"times\": {\"runtimes\": [1, 2]}, \"invalidity\": \"correct\","
    " \"correctness\": 1, \"measurements\": [{\"name\": \"time\", \"value\": 1.5}]},"
    "{\"configuration\": {\"a\": 2}, \"times\": {\"runtimes\": [RUNTIME]}, \"invalidity\": \"correct\","
    " \"correctness\": 1, \"measurements\": [{\"name\": \"time\", \"value\": 2}]},"
    "{\"configuration\": {\"a\": THIRD}, \"times\": {}, \"invalidity\": \"INVALIDITY\", \"correctness\": 0}"
    "]}";

/* small_t4 with its placeholders replaced. */
static void write_small(const char *path, const char *runtime, const char *third, const char *inv) {
  rt_str s = {0};
  for (const char *p = small_t4; *p;) {
    static const struct { const char *ph; int which; } ph[] = {{"RUNTIME", 0}, {"THIRD", 1}, {"INVALIDITY", 2}};
    size_t k = 0;
    while (k < 3 && strncmp(p, ph[k].ph, strlen(ph[k].ph))) k++;
    if (k < 3) {
      rt_str_printf(&s, "%s", k == 0 ? runtime : k == 1 ? third : inv);
      p += strlen(ph[k].ph);
    } else {
      rt_str_printf(&s, "%c", *p++);
    }
  }
  write_text(path, s.s);
  free(s.s);
}

static void test_bad_values(void **state) {
  (void)state;
  const char *in = scratch("bad.json");
  db_import_opts o = {.kernel = "k"};
  /* the file as written imports */
  write_small(in, "3", "3", "runtime");
  db *d = fresh(scratch("bad.db"));
  import_opts(d, in, &o, "gpu");
  assert_int_equal(scalar(d, "SELECT count(*) FROM trials"), 3);
  static const struct { const char *runtime, *third, *inv, *msg; } cases[] = {
    /* non-numeric run times (once imported as mean NULL, sd 0) */
    {"\"abc\"", "3", "runtime", "results[1].times.runtimes[0]: expected a non-negative number (a run time), got \"abc\""},
    {"1, null", "3", "runtime", "results[1].times.runtimes[1]: expected a non-negative number (a run time), got null"},
    {"-1", "3", "runtime", "results[1].times.runtimes[0]: expected a non-negative number"},
    /* a configuration twice (once the raw "UNIQUE constraint failed") */
    {"3", "1", "runtime", "results[2]: the same configuration as results[0] ({\"a\":1})"},
    /* outside the schema's enum */
    {"3", "3", "sideways", "results[2].invalidity: unknown value \"sideways\" (the T4 schema's are \"correct\", \"correctness\""},
    /* mixed types: no type to infer */
    {"3", "\"three\"", "runtime", "parameter 'a' has mixed values"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    write_small(in, cases[i].runtime, cases[i].third, cases[i].inv);
    const char *msg = read_fails(in, &o);
    if (!strstr(msg, cases[i].msg)) fail_msg("case %zu: %s", i, msg);
    assert_non_null(strstr(msg, in));   /* the file is named */
  }
  /* a kernel name with a blank (once imported, then never found by the
  ** CLI's workload keys): refused, saying why */
  write_small(in, "3", "3", "runtime");
  db_import_opts blank = {.kernel = "my kernel"};
  const char *msg = read_fails(in, &blank);
  assert_non_null(strstr(msg, "kernel name \"my kernel\": the kernel name is a word of the workload key"));
  db_import_opts nl = {.kernel = "k\n"}, dt = {.kernel = "k", .dtype = "f 32"};
  assert_non_null(strstr(read_fails(in, &nl), "kernel name \"k\\n\""));
  assert_non_null(strstr(read_fails(in, &dt), "dtype \"f 32\""));
  assert_int_equal(scalar(d, "SELECT count(*) FROM trials"), 3);
  db_close(d);
  /* through the CLI: refused with exit 1; a name without blanks is found */
  const char *dbp = scratch("bad-cli.db");
  remove_db(dbp);
  result r = rt("db", "import", "--db", dbp, "--t4", in, "--target", "g", "--kernel", "my kernel", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.out, "may not be empty or hold whitespace"));
  free(r.out);
  r = rt("db", "import", "--db", dbp, "--t4", in, "--target", "g", "--kernel", "my_kernel", NULL);
  assert_int_equal(r.rc, 0);
  free(r.out);
  r = rt("db", "best", "--db", dbp, "--target", "g", "--kernel", "my_kernel", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "\"a\":1"));   /* 1.5 ms beats 2 ms */
  free(r.out);
  remove_db(dbp);
}

/* ---- A space inferred from a T4 file, checked against its T1 file ---- */

static const struct { const char *t4, *t1; } data[] = {
  {"convolution_milo_A100_T4.json.gz", "convolution_milo.json"},
  {"convolution_milo_A4000_T4.json.gz", "convolution_milo.json"},
  {"dedispersion_milo_A100_T4.json.gz", "dedispersion_milo.json"},
  {"pnpoly_RTX_3090_T4.json.gz", "pnpoly.json"},
};

/* JSON of a space value (as the recorded configurations hold it). */
static json_t *value_json(const sx_value *v) {
  switch (v->t) {
  case SX_INT: return json_integer(v->u.i);
  case SX_FLOAT: return json_real(v->u.f);
  case SX_BOOL: return json_boolean(v->u.i);
  default: return json_stringn(v->u.s->s, v->u.s->len);
  }
}

static double num(const sx_value *v) { return v->t == SX_FLOAT ? v->u.f : (double)v->u.i; }

static void test_infer_space_from_t4(void **state) {
  (void)state;
  db *d = fresh(scratch("infer.db"));
  for (size_t f = 0; f < sizeof data / sizeof *data; f++) {
    char t4[256], t1[256];
    snprintf(t4, sizeof t4, T4 "%s", data[f].t4);
    snprintf(t1, sizeof t1, T1 "%s", data[f].t1);
    sp_space *given = load(t1);
    json_t *raw = read_json(t4), *results = json_object_get(raw, "results");
    rt_err err = {0};
    db_import_opts o = {.kernel = sp_name(given)};
    db_import *im = db_import_read(t4, &o, &err);
    if (!im) fail_msg("%s", err.msg);
    assert_int_equal(db_import_count(im), (int)json_array_size(results));
    const sp_space *sp = db_import_space(im);
    /* the T1 file's parameters, in its order */
    assert_int_equal(sp_nparams(sp), sp_nparams(given));
    int values = 0, unused = 0;
    for (int p = 0; p < sp_nparams(sp); p++) {
      assert_string_equal(sp_param_name(sp, p), sp_param_name(given, p));
      /* the T1 values some result records, in ascending order: the
      ** inferred list, value for value, type for type */
      int k = 0;
      double prev = -INFINITY;
      for (int v = 0; v < sp_nvalues(given, p); v++) {
        json_t *want = value_json(sp_value(given, p, v));
        size_t i;
        json_t *r;
        int recorded = 0;
        json_array_foreach(results, i, r) if (json_equal(json_object_get(json_object_get(r, "configuration"),
                                                                         sp_param_name(given, p)), want)) {
          recorded = 1;
          break;
        }
        json_decref(want);
        unused += !recorded;
        if (!recorded) continue;
        /* present in the inferred list, which is sorted */
        int found = -1;
        for (int u = 0; u < sp_nvalues(sp, p); u++)
          if (sp_value(sp, p, u)->t == sp_value(given, p, v)->t &&
              sx_equal(sp_value(sp, p, u), sp_value(given, p, v)))
            found = u;
        assert_true(found >= 0);
        k++;
      }
      assert_int_equal(sp_nvalues(sp, p), k);
      for (int u = 0; u < sp_nvalues(sp, p); u++) {
        if (sp_value(sp, p, u)->t != SX_INT && sp_value(sp, p, u)->t != SX_FLOAT) break;
        assert_true(num(sp_value(sp, p, u)) > prev);
        prev = num(sp_value(sp, p, u));
      }
      values += k;
    }
    /* every recorded configuration is in the inferred space */
    int *cfg = malloc((size_t)sp_nparams(sp) * sizeof *cfg);
    size_t i;
    json_t *r;
    json_array_foreach(results, i, r) {
      char *text = json_dumps(json_object_get(r, "configuration"), JSON_COMPACT);
      if (sp_config_parse(sp, text, cfg, &err)) fail_msg("%s results[%zu]: %s", t4, i, err.msg);
      free(text);
    }
    free(cfg);
    int64_t c;
    if (db_import_store(d, im, data[f].t4, &c, &err)) fail_msg("%s", err.msg);
    print_message("%s: inferred %d parameters, %d values; %d T1 values never recorded\n", data[f].t4,
                  sp_nparams(sp), values, unused);
    db_import_free(im);
    json_decref(raw);
    sp_free(given);
  }
  assert_int_equal(scalar(d, "SELECT count(*) FROM trials"), 4362 + 4362 + 11130 + 4092);
  /* the inferred space is recorded as such */
  assert_int_equal(scalar(d, "SELECT count(*) FROM campaigns WHERE json_extract(provenance, '$.space') = 'inferred'"), 4);
  db_close(d);
}

/* ---- Kernel Tuner cache files ---- */

/* As Kernel Tuner 1.5 writes a cache during tune_kernel (util.py
** process_cache and store_cache): the header with indent="", then one
** entry per line, each followed by a comma, never closed when the run was
** interrupted; an error as "__error__" (1.x) or in "time" (older); NaN
** where Python's json writes it. */
static const char kt_cache[] =
    "{\n\"device_name\": \"NVIDIA A100-PCIE-40GB\",\n\"kernel_name\": \"vector_add\",\n"
    "\"problem_size\": [\n10000000\n],\n\"tune_params_keys\": [\n\"block_size_x\",\n\"use_shared\",\n\"factor\"\n],\n"
    "\"tune_params\": {\n\"block_size_x\": [\n128,\n64,\n256\n],\n\"use_shared\": [\ntrue,\nfalse\n],\n"
    "\"factor\": [\n0.5,\n1.0\n]\n},\n\"objective\": \"time\",\n\"cache\": {"
    "\n\"128,True,0.5\": {\"block_size_x\": 128, \"use_shared\": true, \"factor\": 0.5, \"time\": 0.25,"
    " \"times\": [0.24, 0.26], \"compile_time\": 100.0, \"verification_time\": 0, \"benchmark_time\": 1.5,"
    " \"GFLOP/s\": 12.5, \"timestamp\": \"2025-01-01 00:00:00.000000+00:00\"},"
    "\n\"64,True,0.5\": {\"block_size_x\": 64, \"use_shared\": true, \"factor\": 0.5,"
    " \"__error__\": \"RuntimeFailedConfig\", \"compile_time\": 90.0, \"verification_time\": 0,"
    " \"benchmark_time\": 0, \"timestamp\": \"2025-01-01 00:00:01.000000+00:00\"},"
    "\n\"256,False,1.0\": {\"block_size_x\": 256, \"use_shared\": false, \"factor\": 1.0,"
    " \"time\": \"CompilationFailedConfig\", \"compile_time\": 5.0, \"timestamp\": \"2025-01-01 00:00:02\"},"
    "\n\"128,False,1.0\": {\"block_size_x\": 128, \"use_shared\": false, \"factor\": 1.0, \"time\": 0.5,"
    " \"times\": [0.5], \"compile_time\": 80.0, \"verification_time\": 0, \"benchmark_time\": 0.5,"
    " \"GFLOP/s\": NaN, \"timestamp\": \"2025-01-01 00:00:03\"},"
    "\n\"64,False,0.5\": {\"block_size_x\": 64, \"use_shared\": false, \"factor\": 0.5,"
    " \"__error__\": \"InvalidConfig\", \"compile_time\": 0, \"verification_time\": 0, \"benchmark_time\": 0,"
    " \"timestamp\": \"2025-01-01 00:00:04\"},";

static void test_kt_cache_import(void **state) {
  (void)state;
  const char *in = scratch("cache.json");
  write_text(in, kt_cache);
  db *d = fresh(scratch("kt.db"));
  db_import_opts o = {0};   /* kernel, space, problem size: all from the file */
  rt_err err = {0};
  db_import *im = db_import_read(in, &o, &err);
  if (!im) fail_msg("%s", err.msg);
  assert_string_equal(db_import_format(im), "kt-cache");
  assert_string_equal(db_import_kernel(im), "vector_add");
  assert_string_equal(db_import_dtype(im), DB_DEFAULT_DTYPE);
  /* tune_params as listed, typed as written */
  const sp_space *sp = db_import_space(im);
  assert_int_equal(sp_nparams(sp), 3);
  assert_int_equal(sp_nvalues(sp, 0), 3);
  assert_int_equal(sp_value(sp, 0, 1)->u.i, 64);
  assert_int_equal(sp_value(sp, 1, 0)->t, SX_BOOL);
  assert_int_equal(sp_value(sp, 2, 1)->t, SX_FLOAT);
  int64_t c;
  assert_int_equal(db_import_store(d, im, "a100", &c, &err), 0);
  db_import_free(im);
  char *rows = dump(d, "SELECT config, status, time, compile_s, bench_s, json_extract(measurements, '$[#-1].value')"
                       " FROM trials ORDER BY id");
  char want[1024];
  snprintf(want, sizeof want,
           "{\"block_size_x\":128,\"use_shared\":true,\"factor\":0.5}|ok|%.17g|%.17g|%.17g|12.5\n"
           "{\"block_size_x\":64,\"use_shared\":true,\"factor\":0.5}|runtime_error|NULL|%.17g|0|NULL\n"
           "{\"block_size_x\":256,\"use_shared\":false,\"factor\":1.0}|compile_error|NULL|%.17g|NULL|CompilationFailedConfig\n"
           "{\"block_size_x\":128,\"use_shared\":false,\"factor\":1.0}|ok|%.17g|%.17g|%.17g|NULL\n"
           "{\"block_size_x\":64,\"use_shared\":false,\"factor\":0.5}|invalid|NULL|0|0|NULL\n",
           0.25 * 1e-3, 100.0 * 1e-3, 1.5 * 1e-3, 90.0 * 1e-3, 5.0 * 1e-3, 0.5 * 1e-3, 80.0 * 1e-3,
           0.5 * 1e-3);
  assert_string_equal(rows, want);
  free(rows);
  /* its workload carries the problem size; provenance says Kernel Tuner */
  char *w = dump(d, "SELECT w.key, json_extract(c.provenance, '$.tool'), json_extract(c.provenance,"
                    " '$.header.device_name') FROM campaigns c JOIN workloads w ON w.id = c.workload_id");
  assert_string_equal(w, "vector_add f32 problem_size_x=10000000|kernel_tuner|NVIDIA A100-PCIE-40GB\n");
  free(w);
  /* the closed form of the same file (util.close_cache) reads the same */
  rt_str closed = {0};
  rt_str_printf(&closed, "%.*s}\n}", (int)strlen(kt_cache) - 1, kt_cache);
  write_text(in, closed.s);
  free(closed.s);
  im = db_import_read(in, &o, &err);
  assert_non_null(im);
  assert_int_equal(db_import_count(im), 5);
  db_import_free(im);
  /* --t4 on a cache says what it is */
  db_import_opts t4only = {.format = "t4"};
  assert_non_null(strstr(read_fails(in, &t4only), "is a Kernel Tuner cache file, not T4 results: import it with --kt-cache"));
  db_close(d);

  /* round trip through rooftune's own cache export: a recording with
  ** failures and one without, trials identical */
  for (size_t f = 1; f < sizeof data / sizeof *data; f += 2) {
    char t4[256], t1[256];
    snprintf(t4, sizeof t4, T4 "%s", data[f].t4);
    snprintf(t1, sizeof t1, T1 "%s", data[f].t1);
    sp_space *sp1 = load(t1);
    db *a = fresh(scratch("kta.db")), *b = fresh(scratch("ktb.db"));
    db_import_opts g = {.space = sp1};
    import_opts(a, t4, &g, "gpu");
    const char *out = scratch("kt.out.json");
    export_to(a, "gpu", sp_name(sp1), "kt-cache", out);
    db_import_opts back = {.format = "kt-cache", .space = sp1};
    import_opts(b, out, &back, "gpu");
    static const char cmp[] = "SELECT config, status, time, mean, sd, min, repeats, compile_s, verify_s,"
                              " bench_s, framework_s, strategy_s, runtimes, created FROM trials ORDER BY config";
    char *x = dump(a, cmp), *y = dump(b, cmp);
    same_text(x, y);
    free(x);
    free(y);
    /* the same workload key (Kernel Tuner's problem_size is [] here: the
    ** T1 space binds no problem variable) */
    char *ka = dump(a, "SELECT key FROM workloads"), *kb = dump(b, "SELECT key FROM workloads");
    assert_string_equal(ka, kb);
    free(ka);
    free(kb);
    db_close(a);
    db_close(b);
    sp_free(sp1);
  }
}

/* ---- A truncated gzip file (once a use-after-free of gzerror's text) ---- */

static void test_truncated_gzip(void **state) {
  (void)state;
  const char *cut = scratch("t.gz");
  char *whole = NULL;
  size_t n = 0;
  FILE *f = fopen(T4 "pnpoly_RTX_3090_T4.json.gz", "rb");
  assert_non_null(f);
  whole = malloc(240000);
  n = fread(whole, 1, 240000, f);
  fclose(f);
  assert_int_equal(n, 240000);   /* head -c 240000 */
  f = fopen(cut, "wb");
  assert_int_equal(fwrite(whole, 1, n, f), n);
  fclose(f);
  free(whole);
  sp_space *sp = load(T1 "pnpoly.json");
  db *d = fresh(scratch("gz.db"));
  rt_err err = {0};
  int64_t c;
  int nt;
  assert_int_equal(db_import_t4(d, cut, sp, "gpu", "pnpoly", &c, &nt, &err), -1);
  assert_non_null(strstr(err.msg, cut));
  if (!strstr(err.msg, "cannot read: unexpected end of file")) fail_msg("%s", err.msg);
  assert_int_equal(scalar(d, "SELECT count(*) FROM trials"), 0);
  /* replay --t4 and compare --t4 read it through tu_rec_t4 */
  memset(&err, 0, sizeof err);
  assert_null(tu_rec_t4(cut, sp, &err));
  assert_non_null(strstr(err.msg, "cannot read: unexpected end of file"));
  db_close(d);
  sp_free(sp);
}

/* ---- T4 exports against the published schema ---- */

/* Run tests/t4_validate.py on files with the first Python that has
** jsonschema (python3, then Debian's /usr/bin/python3). 0 all valid, 1
** one is not; skips the test when no python3 can be run. */
static int validate(const char *const *files, int nfiles, char **report) {
  static const char *const pythons[] = {"python3", "/usr/bin/python3"};
  int saw_python = 0;
  for (size_t p = 0; p < sizeof pythons / sizeof *pythons; p++) {
    const char *argv[40] = {pythons[p], "tests/t4_validate.py", SCHEMA};
    for (int i = 0; i < nfiles && i < 36; i++) argv[3 + i] = files[i];
    result r = run_argv(argv);
    if (r.rc == 0 || r.rc == 1) {
      *report = r.out;
      return r.rc;
    }
    saw_python |= r.rc == 77;
    free(r.out);
  }
  if (!saw_python) {
    print_message("SKIPPED: no python3 to run the JSON-schema validator\n");
    skip();
  }
  fail_msg("python3 has no jsonschema package: install python3-jsonschema (scripts/deps.sh does)");
  return -1;
}

/* A small campaign as a tuning run stores it: one trial per status, the
** harness's statistics, counters. */
/* The saxpy space of the small campaigns, its target, workload and space
** rows in d, and a new campaign of strategy with state done: *cid. */
static sp_space *saxpy_campaign(db *d, const char *strategy, int64_t *cid) {
  rt_err err = {0};
  sp_space *sp = sp_load_string(
      "{\"General\": {\"BenchmarkName\": \"saxpy\"}, \"ConfigurationSpace\": {\"ProblemVariables\":"
      " [{\"Name\": \"N\", \"Default\": 4096}], \"TuningParameters\": [{\"Name\": \"tile\", \"Type\": \"int\","
      " \"Values\": \"[1, 2, 4, 8, 16, 32]\", \"Default\": 4}, {\"Name\": \"order\", \"Type\": \"string\","
      " \"Values\": \"['ij', 'ji']\", \"Default\": \"ij\"}], \"Conditions\": [{\"Expression\": \"tile <= N\"}]}}",
      "saxpy.json", NULL, 0, &err);
  if (!sp) fail_msg("%s", err.msg);
  int64_t tid, kid, wid, sid;
  char *key = db_workload_key("saxpy", "f32", sp), *sizes = db_workload_sizes(sp), *spec = db_space_spec(sp);
  assert_int_equal(db_target_id(d, "host", "0123abcd", "{}", &tid, &err), 0);
  assert_int_equal(db_kernel_id(d, "saxpy", "rooftune-test", &kid, &err), 0);
  assert_int_equal(db_workload_id(d, kid, key, sizes, "f32", "", &wid, &err), 0);
  assert_int_equal(db_space_id(d, spec, &sid, &err), 0);
  db_campaign c = {.target_id = tid, .workload_id = wid, .space_id = sid, .strategy = strategy,
                   .options_json = "{}", .seed = 1, .budget = 6, .source = "measured", .compiler = "cc",
                   .flags = "-O2", .state = "done"};
  assert_int_equal(db_campaign_new(d, &c, cid, &err), 0);
  free(key);
  free(sizes);
  free(spec);
  return sp;
}

static void small_campaign(db *d) {
  rt_err err = {0};
  int64_t cid;
  sp_space *sp = saxpy_campaign(d, "random", &cid);
  static const char *const st[] = {"ok", "compile_error", "runtime_error", "timeout", "wrong_result", "invalid"};
  for (int i = 0; i < 6; i++) {
    int cfg[2] = {i, i % 2};
    char *j = sp_config_json(sp, cfg);
    db_trial t;
    db_trial_init(&t);
    t.campaign_id = cid;
    t.config_json = j;
    t.status = st[i];
    if (i == 0) {
      t.time_s = 1.25e-3;
      t.mean_s = 1.3e-3, t.sd_s = 1e-5, t.min_s = 1.2e-3, t.ci_lo_s = 1.24e-3, t.ci_hi_s = 1.26e-3;
      t.repeats = 7;
      t.counters_json = "{\"l1_misses\": 12}";
    }
    t.compile_s = 0.1 * (i + 1);
    t.origin = "measured";
    assert_int_equal(db_trial_add(d, &t, NULL, &err), 0);
    free(j);
  }
  sp_free(sp);
}

/* Two campaigns over the same configurations (a sample, then the brute
** force that reuses and re-measures some): the T4 export holds one result
** per configuration, the latest unless it was measured on a busy machine,
** says how many rows it left out, and imports again (db import refuses two
** results of one configuration). */
static void test_t4_export_one_per_config(void **state) {
  (void)state;
  db *d = fresh(scratch("dup.db"));
  rt_err err = {0};
  static const struct { int camp, tile; double ms; int loaded; const char *origin; } rows[] = {
    {0, 0, 1.0, 0, "measured"}, {0, 1, 2.0, 0, "measured"}, {0, 2, 3.0, 0, "measured"},
    {1, 0, 9.0, 1, "measured"},   /* busy: the quiet 1.0 stays */
    {1, 1, 2.0, 0, "reused"}, {1, 2, 3.5, 0, "measured"}, {1, 3, 4.0, 0, "measured"},
  };
  int64_t cid[2];
  sp_space *sp = NULL;
  for (int k = 0; k < 2; k++) {
    if (sp) sp_free(sp);
    sp = saxpy_campaign(d, k ? "exhaustive" : "random", &cid[k]);
  }
  for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
    int cfg[2] = {rows[i].tile, 0};
    char *j = sp_config_json(sp, cfg);
    db_trial t;
    db_trial_init(&t);
    t.campaign_id = cid[rows[i].camp], t.config_json = j, t.status = "ok", t.origin = rows[i].origin;
    t.time_s = t.mean_s = t.min_s = t.ci_lo_s = t.ci_hi_s = rows[i].ms * 1e-3;
    t.repeats = 5, t.loaded = rows[i].loaded;
    assert_int_equal(db_trial_add(d, &t, NULL, &err), 0);
    free(j);
  }
  const char *out = scratch("dup.t4.json");
  export_to(d, "host", "saxpy", "t4", out);
  json_t *doc = read_json(out), *res = json_object_get(doc, "results"), *r;
  assert_int_equal(json_array_size(res), 4);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "metadata"), "rooftune_repeats_omitted")), 3);
  static const double want[] = {1.0, 2.0, 3.5, 4.0};   /* tiles 1, 2, 4, 8 in first-seen order */
  size_t i;
  json_array_foreach(res, i, r) {
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "configuration"), "tile")), 1 << i);
    json_t *m = json_array_get(json_object_get(r, "measurements"), 0);   /* the time, in ms */
    assert_true(fabs(json_number_value(json_object_get(m, "value")) - want[i]) < 1e-9);
  }
  json_decref(doc);
  /* the Kernel Tuner cache keeps the same rows */
  const char *kt = scratch("dup.kt.json");
  export_to(d, "host", "saxpy", "kt-cache", kt);
  doc = read_json(kt);
  json_t *cache = json_object_get(doc, "cache");
  assert_int_equal(json_object_size(cache), 4);
  assert_true(fabs(json_number_value(json_object_get(json_object_get(cache, "1,ij"), "time")) - 1.0) < 1e-9);
  assert_true(fabs(json_number_value(json_object_get(json_object_get(cache, "4,ij"), "time")) - 3.5) < 1e-9);
  json_decref(doc);
  db *e = fresh(scratch("dup2.db"));
  db_import_opts o = {.space = sp};
  import_opts(e, out, &o, "host");
  assert_int_equal(scalar(e, "SELECT count(*) FROM trials"), 4);
  db_close(e);
  db_close(d);
  sp_free(sp);
}

static void test_t4_export_validates(void **state) {
  (void)state;
  const char *files[8];
  int n = 0;
  /* (a) a small campaign, every status */
  db *d = fresh(scratch("val.db"));
  small_campaign(d);
  files[n++] = scratch("campaign.t4.json");
  export_to(d, "host", "saxpy", "t4", files[n - 1]);
  db_close(d);
  /* (b) every shared recording, imported and exported again */
  static char paths[4][512];
  for (size_t f = 0; f < sizeof data / sizeof *data; f++) {
    char t4[256], t1[256];
    snprintf(t4, sizeof t4, T4 "%s", data[f].t4);
    snprintf(t1, sizeof t1, T1 "%s", data[f].t1);
    sp_space *sp = load(t1);
    db *e = fresh(scratch("val2.db"));
    db_import_opts o = {.space = sp};
    import_opts(e, t4, &o, "gpu");
    snprintf(paths[f], sizeof paths[f], "%s/re-%s.json", tmp, data[f].t4);
    export_to(e, "gpu", sp_name(sp), "t4", paths[f]);
    files[n++] = paths[f];
    db_close(e);
    sp_free(sp);
  }
  char *report = NULL;
  int rc = validate(files, n, &report);
  print_message("%s", report);
  assert_int_equal(rc, 0);
  for (int i = 0; i < n; i++) assert_non_null(strstr(report, files[i]));
  free(report);
  /* the validator does reject what rooftune wrote before: a wrong
  ** result as "correct" is valid, but "invalid" is not in the enum */
  const char *old = scratch("old.t4.json");
  write_text(old, "{\"schema_version\": \"1.0.0\", \"results\": [{\"configuration\": {}, \"times\": {},"
                  " \"invalidity\": \"invalid\", \"correctness\": 0}]}");
  const char *bad[] = {old};
  assert_int_equal(validate(bad, 1, &report), 1);
  assert_non_null(strstr(report, "INVALID"));
  free(report);
  /* every field the schema requires, in every result */
  json_t *j = read_json(files[0]);
  size_t i;
  json_t *r;
  json_array_foreach(json_object_get(j, "results"), i, r) {
    static const char *const req[] = {"configuration", "times", "invalidity", "correctness"};
    for (size_t k = 0; k < 4; k++) assert_non_null(json_object_get(r, req[k]));
    assert_true(json_is_array(json_object_get(json_object_get(r, "times"), "runtimes")));
  }
  assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(j, "results"), 4),
                                                        "invalidity")), "correctness");
  json_decref(j);
}

/* ---- Kernel Tuner's simulation mode on an exported cache ---- */

static void test_kt_simulation(void **state) {
  (void)state;
  /* the Python with kernel_tuner: $ROOFTUNE_KT_PYTHON, the kt_compare
  ** experiment's venv (experiments/kt_compare/setup.sh), python3 */
  const char *env = getenv("ROOFTUNE_KT_PYTHON");
  const char *const pythons[] = {env ? env : "experiments/kt_compare/.venv/bin/python",
                                 "experiments/kt_compare/.venv/bin/python", "python3"};
  const char *py = NULL;
  for (size_t p = 0; p < 3 && !py; p++) {
    if (strchr(pythons[p], '/') && access(pythons[p], X_OK)) continue;
    const char *argv[] = {pythons[p], "-c", "import kernel_tuner", NULL};
    result r = run_argv(argv);
    if (r.rc == 0) py = pythons[p];
    free(r.out);
  }
  if (!py) {
    print_message("SKIPPED: kernel_tuner is not importable (set ROOFTUNE_KT_PYTHON, or run "
                  "sh experiments/kt_compare/setup.sh)\n");
    skip();
  }
  /* a full recording (with its T1 space) and a partial campaign */
  sp_space *sp = load(T1 "pnpoly.json");
  db *d = fresh(scratch("sim.db"));
  db_import_opts o = {.space = sp};
  import_opts(d, T4 "pnpoly_RTX_3090_T4.json.gz", &o, "RTX_3090");
  small_campaign(d);
  const char *full = scratch("pnpoly.kt.json"), *part = scratch("saxpy.kt.json");
  export_to(d, "RTX_3090", "pnpoly", "kt-cache", full);
  export_to(d, "host", "saxpy", "kt-cache", part);
  db_close(d);
  sp_free(sp);
  static const struct { const char *file, *strategy, *fevals; } runs[] = {
    {NULL, "random_sample", "20"}, {NULL, "greedy_ils", "30"}, {NULL, "random_sample", "6"},
  };
  for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
    const char *argv[] = {py, "tests/kt_simulate.py", i < 2 ? full : part, runs[i].strategy,
                          runs[i].fevals, "1", NULL};
    result r = run_argv(argv);
    print_message("%s", r.out);
    if (r.rc) fail_msg("kt_simulate.py %s %s: exit %d", argv[2], runs[i].strategy, r.rc);
    assert_non_null(strstr(r.out, "ok: kernel_tuner"));
    free(r.out);
  }
}

/* ---- dtypes ---- */

static void test_dtype(void **state) {
  (void)state;
  /* every kernel of every target says its dtype (the harnesses fill f32
  ** buffers only: hk.h invariant 2) */
  int n = 0;
  for (const tg_backend *const *tb = tg_backends; *tb; tb++)
    for (int k = 0; (*tb)->kernels[k]; k++, n++) {
      assert_non_null((*tb)->kernels[k]->dtype);
      assert_string_equal((*tb)->kernels[k]->dtype, "f32");
    }
  assert_true(n >= 9);
  /* an imported file's dtype: its own, else --dtype, else the default; a
  ** disagreement is an error */
  const char *in = scratch("dtype.json");
  write_text(in, "{\"metadata\": {\"dtype\": \"f16\"}, \"results\": [{\"configuration\": {\"a\": 1},"
                 " \"times\": {}, \"invalidity\": \"compile\", \"correctness\": 0}]}");
  db *d = fresh(scratch("dtype.db"));
  db_import_opts o = {.kernel = "k"};
  import_opts(d, in, &o, "g");
  db_import_opts same = {.kernel = "k", .dtype = "f16"}, other = {.kernel = "k", .dtype = "f64"};
  import_opts(d, in, &same, "g");
  assert_non_null(strstr(read_fails(in, &other), "the file's dtype is \"f16\", --dtype says \"f64\""));
  write_text(in, "{\"results\": [{\"configuration\": {\"a\": 1}, \"times\": {}, \"invalidity\": \"compile\","
                 " \"correctness\": 0}]}");
  import_opts(d, in, &o, "g");
  import_opts(d, in, &other, "g");
  char *keys = dump(d, "SELECT key, dtype FROM workloads ORDER BY id");
  assert_string_equal(keys, "k f16|f16\nk " DB_DEFAULT_DTYPE "|" DB_DEFAULT_DTYPE "\nk f64|f64\n");
  free(keys);
  /* exports say it: T4 metadata.dtype, the cache's dtype */
  const char *out = scratch("dtype.out.json");
  FILE *f = fopen(out, "w");
  rt_err err = {0};
  int nt;
  assert_int_equal(db_export(d, "g", "k", "k f64", "t4", f, &nt, &err), 0);
  fclose(f);
  json_t *j = read_json(out);
  assert_string_equal(json_string_value(json_object_get(json_object_get(j, "metadata"), "dtype")), "f64");
  json_decref(j);
  db_close(d);
}

/* ---- Merge keeps what an import keeps ---- */

static void test_merge_keeps_import_fields(void **state) {
  (void)state;
  const char *in = scratch("merge.json"), *src = scratch("msrc.db");
  write_text(in, statuses_t4);
  db *a = fresh(src);
  db_import_opts o = {.kernel = "k"};
  import_opts(a, in, &o, "gpu");
  db_close(a);
  db *b = fresh(scratch("mdst.db"));
  rt_err err = {0};
  db_merge_stats s;
  if (db_merge(b, src, &s, &err)) fail_msg("%s", err.msg);
  assert_int_equal(s.trials, 8);
  a = db_open(src, 0, &err);
  static const char cmp[] = "SELECT t.config, t.measurements, t.runtimes, t.strategy_s, c.provenance"
                            " FROM trials t JOIN campaigns c ON c.id = t.campaign_id ORDER BY t.id";
  char *x = dump(a, cmp), *y = dump(b, cmp);
  assert_string_equal(x, y);
  assert_non_null(strstr(y, "GFLOP/s"));
  free(x);
  free(y);
  db_close(a);
  db_close(b);
}

/* ---- The CLI: nothing created, nothing overwritten ---- */

static void test_cli_import_creates_nothing(void **state) {
  (void)state;
  const char *dbp = scratch("never.db"), *bad = scratch("bad-input.json");
  write_text(bad, "{\"results\": [{\"configuration\": {\"a\": 1}, \"invalidity\": \"sideways\"}]}");
  static const struct { const char *opt, *file, *space, *msg; } cases[] = {
    {"--t4", "/nonexistent/results.json", NULL, "cannot open: No such file or directory"},
    {"--kt-cache", "/nonexistent/cache.json", NULL, "cannot open"},
    {"--t4", "data", NULL, "cannot read"},                               /* a folder */
    {"--t4", NULL, NULL, "unknown value \"sideways\""},                  /* wrong content */
    {"--t4", T4 "pnpoly_RTX_3090_T4.json.gz", "/nonexistent/t1.json", "cannot open"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    remove_db(dbp);
    result r = cases[i].space
                   ? rt("db", "import", "--db", dbp, cases[i].opt, cases[i].file, "--space", cases[i].space,
                        "--target", "g", "--kernel", "k", NULL)
                   : rt("db", "import", "--db", dbp, cases[i].opt, cases[i].file ? cases[i].file : bad,
                        "--target", "g", "--kernel", "k", NULL);
    if (r.rc != 1 || !strstr(r.out, cases[i].msg)) fail_msg("case %zu: exit %d: %s", i, r.rc, r.out);
    free(r.out);
    assert_int_equal(access(dbp, F_OK), -1);   /* no database left behind */
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", dbp);
    assert_int_equal(access(wal, F_OK), -1);
  }
  /* and a readable file does create it; --set names the inferred space's
  ** problem variables (the workload key) */
  result r = rt("db", "import", "--db", dbp, "--t4", T4 "pnpoly_RTX_3090_T4.json.gz", "--target", "g",
                "--kernel", "pnpoly", "--set", "points=20000000", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "imported 4092 trials as campaign 1: pnpoly f32 points=20000000 on g, t4,"
                                " space inferred from the file (4 parameters)"));
  free(r.out);
  assert_int_equal(access(dbp, F_OK), 0);
  remove_db(dbp);
}

static void test_cli_export_never_destroys(void **state) {
  (void)state;
  const char *dbp = scratch("e.db"), *old = scratch("old.csv");
  remove_db(dbp);
  result r = rt("db", "import", "--db", dbp, "--t4", T4 "pnpoly_RTX_3090_T4.json.gz", "--space",
                T1 "pnpoly.json", "--target", "g", NULL);
  assert_int_equal(r.rc, 0);
  free(r.out);
  struct stat before, after;
  assert_int_equal(stat(dbp, &before), 0);
  /* --out the database itself (once deleted it), or its -wal file (which
  ** need not exist: the writers leave the file in rollback mode) */
  char wal[600];
  snprintf(wal, sizeof wal, "%s-wal", dbp);
  const char *outs[] = {dbp, wal};
  const char *why[] = {"is the same file as the input", "is the database's wal file"};
  for (int i = 0; i < 2; i++) {
    r = rt("db", "export", "--db", dbp, "--target", "g", "--kernel", "pnpoly", "--out", outs[i], NULL);
    assert_int_equal(r.rc, 1);
    if (!strstr(r.out, why[i])) fail_msg("--out %s: %s", outs[i], r.out);
    free(r.out);
  }
  assert_int_equal(access(wal, F_OK), -1);
  assert_int_equal(stat(dbp, &after), 0);
  assert_true(after.st_ino == before.st_ino);
  r = rt("db", "check", "--db", dbp, NULL);
  assert_int_equal(r.rc, 0);
  assert_string_equal(r.out, "ok\n");
  free(r.out);
  r = rt("db", "stats", "--db", dbp, NULL);
  assert_non_null(strstr(r.out, "trials 4092\n"));
  free(r.out);
  /* a failed export (once: fopen("w") first, unlink on error) leaves the
  ** old output file exactly as it was */
  write_text(old, "the user's file\n");
  static const char *const fail_args[][2] = {{"--kernel", "nosuch"}, {"--format", "xml"}};
  for (int i = 0; i < 2; i++) {
    r = i == 0 ? rt("db", "export", "--db", dbp, "--target", "g", fail_args[i][0], fail_args[i][1], "--out", old, NULL)
               : rt("db", "export", "--db", dbp, "--target", "g", "--kernel", "pnpoly", fail_args[i][0],
                    fail_args[i][1], "--out", old, NULL);
    /* an unknown kernel fails on the database (1); an unknown format is a
    ** usage error (2), found before anything is opened */
    assert_int_equal(r.rc, i == 0 ? 1 : 2);
    assert_non_null(strstr(r.out, i == 0 ? "the output file was not changed" : "--format: 'xml' is not one of"));
    free(r.out);
    char *text = read_text(old);
    assert_string_equal(text, "the user's file\n");
    free(text);
  }
  /* no temporary file left beside it */
  r = rt("db", "export", "--db", dbp, "--target", "g", "--kernel", "pnpoly", "--format", "csv", "--out", old, NULL);
  assert_int_equal(r.rc, 0);
  free(r.out);
  char *text = read_text(old);
  assert_int_equal(strncmp(text, "target,", 7), 0);
  free(text);
  DIR *dir = opendir(tmp);
  assert_non_null(dir);
  for (struct dirent *e; (e = readdir(dir));)
    if (strstr(e->d_name, ".tmp-")) fail_msg("left behind: %s", e->d_name);
  closedir(dir);
  remove_db(dbp);
  unlink(old);
}

static int setup(void **state) {
  (void)state;
  snprintf(tmp, sizeof tmp, "/tmp/rooftune-test-interchange-%d", (int)getpid());
  mkdir(tmp, 0700);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  const char *argv[] = {"rm", "-rf", "--", tmp, NULL};
  result r = run_argv(argv);
  free(r.out);
  return 0;
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], rooftune, sizeof rooftune)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_t4_statuses_and_fields),
    cmocka_unit_test(test_bad_values),
    cmocka_unit_test(test_infer_space_from_t4),
    cmocka_unit_test(test_kt_cache_import),
    cmocka_unit_test(test_truncated_gzip),
    cmocka_unit_test(test_t4_export_validates),
    cmocka_unit_test(test_t4_export_one_per_config),
    cmocka_unit_test(test_kt_simulation),
    cmocka_unit_test(test_dtype),
    cmocka_unit_test(test_merge_keeps_import_fields),
    cmocka_unit_test(test_cli_import_creates_nothing),
    cmocka_unit_test(test_cli_export_never_destroys),
  };
  return cmocka_run_group_tests_name("interchange", tests, setup, teardown);
}
