/*
** test_cli.c -- the `rooftune` program as a user runs it: exit codes (0 ok,
** 1 failure, 2 usage), --help on every level, text and --json output, and
** the error messages of bad input. Tests are grouped in numbered families
** (t1xx top level, t2xx space count, t3xx enum, t4xx sample, t5xx check /
** rank / unrank / neighbours, t6xx info and problem variables, t7xx
** targets, kernels, measure and baseline, t8xx db, t9xx replay, compare
** and tune: campaigns stopped by Ctrl-C and killed by SIGKILL, resumed,
** and reused, t10xx bench: ceilings stored once and reused, t11xx model
** roofline: the plot, its script and data against the trials, t12xx the
** model commands, t13xx experiment, t14xx nothing run as shell text and
** nothing destroyed: experiment output folders, output files never an
** input, a failed command or a link leaving files as they were, t15xx the
** command line as a whole: every command and subcommand that `rooftune
** --help` and the groups list answers -h/--help and refuses unknown options
** with "did you mean", one mistake gives one exit code and one message
** shape in every command, README.md documents every option). The
** binary is found next to the test's own directory (BUILD/tests/..
** /rooftune).
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <signal.h>
#include <sqlite3.h>
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cost_model/cm.h"

#include "tk_exe.h"
#include "tk_run.h"

static char rooftune[4096];

typedef tk_result result;

/* The working directory of the programs run() starts (NULL: the test's). */
static const char *run_cwd;

/* Run rooftune with the NULL-terminated arguments; capture everything. */
static result run(const char *arg0, ...) {
  const char *argv[64] = {rooftune};
  int argc = 1;
  va_list ap;
  va_start(ap, arg0);
  for (const char *a = arg0; a && argc < 63; a = va_arg(ap, const char *)) argv[argc++] = a;
  va_end(ap);
  argv[argc] = NULL;
  return tk_capture(argv, run_cwd, NULL);
}

static void done(result *r) { tk_result_free(r); }

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

#define T1 "data/t1/"
#define GEMM_TILES "search_spaces/examples/host_gemm_tiles.json"

/* ---- t1xx: top level ---- */

static void t100_version_and_help(void **state) {
  (void)state;
  result r = run("--version", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "rooftune 0."));
  done(&r);
  r = run("--help", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "space"));
  done(&r);
  r = run(NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "usage: rooftune COMMAND"));
  done(&r);
  r = run("frobnicate", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "unknown command 'frobnicate'"));
  done(&r);
}

static void t101_space_help_every_level(void **state) {
  (void)state;
  static const char *subs[] = {"count", "enum", "sample", "check", "rank", "unrank", "neighbours", "info"};
  result r = run("space", "--help", NULL);
  assert_int_equal(r.rc, 0);
  for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) assert_non_null(strstr(r.out, subs[i]));
  done(&r);
  for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
    r = run("space", subs[i], "--help", NULL);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.out, "usage: rooftune space"));
    done(&r);
  }
  r = run("space", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  r = run("space", "bogus", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "unknown subcommand 'bogus'"));
  done(&r);
}

/* ---- t2xx: space count ---- */

static void t200_count_shared(void **state) {
  (void)state;
  result r = run("space", "count", T1 "gemm_milo.json", NULL);
  assert_int_equal(r.rc, 0);
  assert_string_equal(r.out, "116928\n");
  done(&r);
  r = run("space", "count", T1 "convolution_milo.json", "--json", NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_object_get(j, "valid")), 4362);
  assert_int_equal(json_integer_value(json_object_get(j, "cartesian")), 10240);
  json_decref(j);
  done(&r);
}

/* Counts above 2^53 (and 2^64) are printed exactly in the JSON. */
static void t201_count_exact_big(void **state) {
  (void)state;
  char path[] = "/tmp/rooftune-cli-XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "{\"ConfigurationSpace\": {\"TuningParameters\": [");
  for (int p = 0; p < 30; p++)
    fprintf(f, "%s{\"Name\": \"p%d\", \"Type\": \"int\", \"Values\": \"range(7)\"}", p ? "," : "", p);
  fprintf(f, "], \"Conditions\": [{\"Expression\": \"p0 != 3\", \"Parameters\": [\"p0\"]}]}}");
  fclose(f);
  result r = run("space", "count", path, "--json", NULL);
  assert_int_equal(r.rc, 0);
  /* 7^30 = 22539340290692258087863249; valid = 6 * 7^29 */
  assert_non_null(strstr(r.out, "\"cartesian\":22539340290692258087863249"));
  assert_non_null(strstr(r.out, "\"valid\":19319434534879078361025642"));
  done(&r);
  unlink(path);
}

static void t202_count_errors(void **state) {
  (void)state;
  result r = run("space", "count", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "usage: rooftune space count"));
  done(&r);
  r = run("space", "count", T1 "pnpoly.json", "--bogus", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  r = run("space", "count", T1 "pnpoly.json", "--seed", "3", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "does not apply"));
  done(&r);
  r = run("space", "count", "/nonexistent.json", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "cannot open"));
  done(&r);
  char path[] = "/tmp/rooftune-cli-XXXXXX";
  int fd = mkstemp(path);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "{\n  \"ConfigurationSpace\": {\n    \"TuningParameters\": [}\n}\n");
  fclose(f);
  r = run("space", "count", path, NULL);
  assert_int_equal(r.rc, 1);
  char expect[128];
  snprintf(expect, sizeof expect, "%s:3:26: JSON syntax error", path);
  assert_non_null(strstr(r.err, expect));
  done(&r);
  unlink(path);
}

/* ---- t3xx: space enum ---- */

static void t300_enum(void **state) {
  (void)state;
  result r = run("space", "enum", T1 "dedispersion_milo.json", NULL);
  assert_int_equal(r.rc, 0);
  assert_int_equal(count_lines(r.out), 11130);
  char *all = r.out;
  r.out = NULL;
  done(&r);
  /* offset/limit are a window of the full enumeration */
  r = run("space", "enum", T1 "dedispersion_milo.json", "--offset", "100", "--limit", "5", NULL);
  assert_int_equal(r.rc, 0);
  char *p = all;
  for (int i = 0; i < 100; i++) p = strchr(p, '\n') + 1;
  assert_int_equal(strncmp(r.out, p, strlen(r.out)), 0);
  assert_int_equal(count_lines(r.out), 5);
  done(&r);
  free(all);
  r = run("space", "enum", T1 "pnpoly.json", "--limit", "2", "--format", "csv", NULL);
  assert_int_equal(r.rc, 0);
  assert_string_equal(r.out, "between_method,block_size_x,tile_size,use_method\n0,32,1,0\n0,32,1,1\n");
  done(&r);
  r = run("space", "enum", T1 "pnpoly.json", "--offset", "99999", NULL);
  assert_int_equal(r.rc, 0);
  assert_string_equal(r.out, "");
  done(&r);
  r = run("space", "enum", T1 "pnpoly.json", "--format", "xml", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
}

/* ---- t4xx: space sample ---- */

static void t400_sample(void **state) {
  (void)state;
  result a = run("space", "sample", T1 "gemm_milo.json", "-n", "20", "--seed", "9", NULL);
  result b = run("space", "sample", T1 "gemm_milo.json", "-n", "20", "--seed", "9", NULL);
  result c = run("space", "sample", T1 "gemm_milo.json", "-n", "20", "--seed", "10", NULL);
  assert_int_equal(a.rc, 0);
  assert_int_equal(count_lines(a.out), 20);
  assert_string_equal(a.out, b.out);
  assert_string_not_equal(a.out, c.out);
  /* every sampled line is a valid configuration */
  char *line = a.out;
  for (int i = 0; i < 20; i++) {
    char *nl = strchr(line, '\n');
    *nl = 0;
    result k = run("space", "check", T1 "gemm_milo.json", line, NULL);
    assert_int_equal(k.rc, 0);
    done(&k);
    line = nl + 1;
  }
  done(&a);
  done(&b);
  done(&c);
  result r = run("space", "sample", T1 "gemm_milo.json", "-n", "3", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--seed"));
  done(&r);
  r = run("space", "sample", T1 "pnpoly.json", "-n", "5000", "--seed", "1", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "distinct"));
  done(&r);
  r = run("space", "sample", T1 "pnpoly.json", "-n", "5000", "--seed", "1", "--replace", NULL);
  assert_int_equal(r.rc, 0);
  assert_int_equal(count_lines(r.out), 5000);
  done(&r);
}

/* ---- t5xx: check, rank, unrank, neighbours ---- */

static void t500_check_rank_unrank(void **state) {
  (void)state;
  const char *cfg = "{\"between_method\":1,\"block_size_x\":224,\"tile_size\":8,\"use_method\":1}";
  result r = run("space", "check", T1 "pnpoly.json", cfg, NULL);
  assert_int_equal(r.rc, 0);
  assert_string_equal(r.out, "valid (rank 1234)\n");
  done(&r);
  r = run("space", "rank", T1 "pnpoly.json", cfg, "--json", NULL);
  assert_int_equal(r.rc, 0);
  assert_string_equal(r.out, "{\"rank\":1234}\n");
  done(&r);
  r = run("space", "unrank", T1 "pnpoly.json", "1234", NULL);
  assert_int_equal(r.rc, 0);
  assert_int_equal(strncmp(r.out, cfg, strlen(cfg)), 0);
  done(&r);
  r = run("space", "unrank", T1 "pnpoly.json", "4092", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "out of range"));
  done(&r);
  r = run("space", "unrank", T1 "pnpoly.json", "-3", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  /* block 128 x 128 with 8 x 8 threads violates the last condition */
  const char *bad = "{\"GEMMK\":0,\"MWG\":128,\"NWG\":128,\"KWG\":32,\"MDIMC\":8,\"NDIMC\":8,\"MDIMA\":8,"
                    "\"NDIMB\":8,\"KWI\":2,\"VWM\":1,\"VWN\":1,\"STRM\":0,\"STRN\":0,\"SA\":0,\"SB\":0,"
                    "\"KREG\":1,\"PRECISION\":32}";
  r = run("space", "check", T1 "gemm_milo.json", bad, "--json", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.out, "\"valid\":false"));
  assert_non_null(strstr(r.out, "not (MWG == 128 and NWG == 128"));
  done(&r);
  r = run("space", "check", T1 "pnpoly.json", "{\"between_method\":1}", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "missing parameter 'block_size_x'"));
  done(&r);
  r = run("space", "check", T1 "pnpoly.json", "{not json", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "JSON syntax error"));
  done(&r);
}

static void t501_neighbours(void **state) {
  (void)state;
  const char *cfg = "{\"between_method\":1,\"block_size_x\":224,\"tile_size\":8,\"use_method\":1}";
  result r = run("space", "neighbours", T1 "pnpoly.json", cfg, NULL);
  assert_int_equal(r.rc, 0);
  /* no conditions: (4-1) + (31-1) + (11-1) + (3-1) */
  assert_int_equal(count_lines(r.out), 45);
  done(&r);
  r = run("space", "neighbours", T1 "pnpoly.json", cfg, "--adjacent", NULL);
  assert_int_equal(r.rc, 0);
  assert_int_equal(count_lines(r.out), 8);
  done(&r);
}

/* ---- t6xx: info and problem variables ---- */

static void t600_info_json(void **state) {
  (void)state;
  result r = run("space", "info", T1 "gemm_milo.json", "--json", NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  assert_non_null(j);
  assert_int_equal(json_array_size(json_object_get(j, "parameters")), 17);
  assert_int_equal(json_array_size(json_object_get(j, "conditions")), 8);
  assert_int_equal(json_integer_value(json_object_get(j, "valid")), 116928);
  /* GEMMK, the 9 connected parameters, and 7 lone ones (KWI has one
  ** value: a constant in KWG % KWI == 0, so it joins no group) */
  assert_int_equal(json_array_size(json_object_get(j, "groups")), 9);
  json_decref(j);
  done(&r);
  r = run("space", "info", T1 "gemm_milo.json", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "valid 116928 of 663552"));
  done(&r);
}

static void t601_problem_variables(void **state) {
  (void)state;
  result r = run("space", "count", GEMM_TILES, NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "problem variable 'M' is unbound"));
  done(&r);
  r = run("space", "count", GEMM_TILES, "--set", "M=1024,N=1024,K=1024", NULL);
  assert_int_equal(r.rc, 0);
  long big = atol(r.out);
  done(&r);
  r = run("space", "count", GEMM_TILES, "--set", "M=64,N=1024,K=1024", NULL);
  assert_int_equal(r.rc, 0);
  assert_true(atol(r.out) > 0 && atol(r.out) < big);
  done(&r);
  r = run("space", "count", GEMM_TILES, "--set", "M=1024,N=1024,K=1024,Q=1", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "Q: unknown problem variable"));
  done(&r);
  r = run("space", "count", GEMM_TILES, "--set", "M1024", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "expected VAR=VALUE"));
  done(&r);
}


/* ---- t7xx: targets, kernels, measure, baseline ---- */

static void t700_targets_and_kernels(void **state) {
  (void)state;
  result r = run("targets", "--json", NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  assert_non_null(j);
  json_t *host = json_array_get(j, 0);
  assert_string_equal(json_string_value(json_object_get(host, "name")), "host");
  assert_true(json_is_true(json_object_get(host, "available")));
  assert_int_equal(strlen(json_string_value(json_object_get(host, "fingerprint"))), 32);
  assert_non_null(json_object_get(json_object_get(host, "description"), "isa"));
  json_decref(j);
  done(&r);
  r = run("targets", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "fingerprint"));
  done(&r);
  r = run("kernels", NULL);
  assert_int_equal(r.rc, 0);
  static const char *names[] = {"gemm", "conv2d", "stencil", "transpose", "reduction"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) assert_non_null(strstr(r.out, names[i]));
  assert_null(strstr(r.out, "space file missing"));
  done(&r);
  r = run("kernels", "--json", NULL);
  assert_int_equal(r.rc, 0);
  j = json_loads(r.out, 0, &je);
  assert_int_equal(json_array_size(j), 5);
  json_decref(j);
  done(&r);
}

static void t701_measure(void **state) {
  (void)state;
  result r = run("measure", "--kernel", "gemm", "--set", "M=37,N=29,K=41", "--config", "default",
                 "--json", "--time-cap", "0.2", NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "status")), "ok");
  assert_true(json_real_value(json_object_get(j, "gflops")) > 0);
  assert_true(json_number_value(json_object_get(j, "flops")) == 2.0 * 37 * 29 * 41);
  json_decref(j);
  done(&r);
  r = run("measure", "--kernel", "reduction", "--set", "N=1000", "--config", "default", "--counters",
          "--time-cap", "0.2", "--json", NULL);
  assert_int_equal(r.rc, 0);
  j = json_loads(r.out, 0, &je);
  assert_non_null(j);
  /* with counters: their values; without (like this VM): null and why */
  json_t *c = json_object_get(j, "counters");
  assert_true(json_is_object(c) || json_is_string(json_object_get(j, "counters_unavailable")));
  json_decref(j);
  done(&r);
  r = run("measure", "--kernel", "gemm", "--set", "M=8,N=8,K=8", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--config"));
  done(&r);
  r = run("measure", "--kernel", "nonesuch", "--config", "default", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "unknown kernel 'nonesuch'"));
  done(&r);
  r = run("measure", "--kernel", "gemm", "--config", "default", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "'M' is unbound"));
  done(&r);
  r = run("measure", "--kernel", "gemm", "--set", "M=8,N=8,K=8", "--config", "{\"bogus\":1}", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "unknown parameter 'bogus'"));
  done(&r);
  /* an impossible workload: its space is empty, nothing is measured */
  r = run("measure", "--kernel", "gemm", "--set", "M=0,N=8,K=8", "--config", "default", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "no valid schedule for this workload"));
  done(&r);
  r = run("baseline", "--kernel", "transpose", "--set", "M=8,N=4.5", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "problem variable 'N' is float 4.5, but its Type is int"));
  done(&r);
  r = run("measure", "--help", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "--config"));
  done(&r);
}

static void t702_baseline(void **state) {
  (void)state;
  result r = run("baseline", "--kernel", "gemm", "--set", "M=64,N=48,K=32", "--time-cap", "0.2", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "status   ok"));
  assert_non_null(strstr(r.out, "vendor library (-lopenblas)"));
  done(&r);
  r = run("baseline", "--kernel", "transpose", "--set", "M=33,N=17", "--time-cap", "0.2", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "reference implementation"));
  done(&r);
}


/* ---- t8xx: db ---- */

static void t800_db(void **state) {
  (void)state;
  char db[64], path[96];
  snprintf(db, sizeof db, "/tmp/rooftune-cli-%d.db", (int)getpid());
  result r = run("db", "init", "--db", db, NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "schema version "));   /* test_db checks which */
  assert_true(atoi(strstr(r.out, "schema version ") + 15) >= 6);
  done(&r);
  r = run("db", "import", "--db", db, "--t4", "data/t4/convolution_milo_A4000_T4.json.gz",
          "--space", T1 "convolution_milo.json", "--target", "A4000", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "imported 4362 trials"));
  done(&r);
  r = run("db", "stats", "--db", db, "--json", NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_object_get(j, "trials")), 4362);
  assert_int_equal(json_integer_value(json_object_get(j, "trials.compile_error")), 6);
  json_decref(j);
  done(&r);
  r = run("db", "best", "--db", db, "--target", "A4000", "--kernel", "convolution_milo", "--json", NULL);
  assert_int_equal(r.rc, 0);
  j = json_loads(r.out, 0, &je);
  assert_int_equal(json_array_size(j), 1);
  double t = json_real_value(json_object_get(json_array_get(j, 0), "time_s"));
  assert_true(fabs(t * 1e3 - 1.0212) < 1e-4);
  json_decref(j);
  done(&r);
  r = run("db", "list", "--db", db, "--target", "A4000", "--kernel", "convolution_milo", "--limit", "5", NULL);
  assert_int_equal(r.rc, 0);
  assert_int_equal(count_lines(r.out), 6);   /* header + 5 */
  done(&r);
  r = run("db", "check", "--db", db, NULL);
  assert_int_equal(r.rc, 0);
  assert_string_equal(r.out, "ok\n");
  done(&r);
  /* errors */
  r = run("db", "best", "--db", db, "--target", "A100", "--kernel", "convolution_milo", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "no results for kernel convolution_milo on target A100"));
  done(&r);
  r = run("db", "import", "--db", db, "--space", T1 "convolution_milo.json", "--target", "x", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "expected exactly one of --t4 and --kt-cache"));
  done(&r);
  r = run("db", "import", "--db", db, "--t4", "data/t4/pnpoly_RTX_3090_T4.json.gz",
          "--space", T1 "convolution_milo.json", "--target", "x", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "nothing was imported"));
  done(&r);
  r = run("db", "frobnicate", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  snprintf(path, sizeof path, "/tmp/rooftune-cli-%d.txt", (int)getpid());
  FILE *f = fopen(path, "w");
  fputs("this is not a database, it is a text file long enough to have a header.........\n", f);
  fclose(f);
  r = run("db", "stats", "--db", path, NULL);
  assert_int_equal(r.rc, 1);
  done(&r);
  r = run("db", "stats", "--db", "/nonexistent/dir/x.db", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "cannot open"));
  done(&r);
  unlink(path);
  static const char *const sfx[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s%s", db, sfx[i]);
    unlink(path);
  }
}

/* pin / history / rollback / tag / export / merge */
static void t801_db_pins(void **state) {
  (void)state;
  char db[64], db2[64], out[64], path[96];
  snprintf(db, sizeof db, "/tmp/rooftune-cli-pins-%d.db", (int)getpid());
  snprintf(db2, sizeof db2, "/tmp/rooftune-cli-pins2-%d.db", (int)getpid());
  snprintf(out, sizeof out, "/tmp/rooftune-cli-pins-%d.t4", (int)getpid());
  const char *t4 = "data/t4/pnpoly_RTX_3090_T4.json.gz", *sp = T1 "pnpoly.json";
  result r = run("db", "import", "--db", db, "--t4", t4, "--space", sp, "--target", "gpu", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  r = run("db", "pin", "--db", db, "--target", "gpu", "--kernel", "pnpoly", "--by", "ci", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "as version 1 of pnpoly f32 on gpu"));
  assert_non_null(strstr(r.out, "foreign origin"));
  done(&r);
  r = run("db", "pin", "--db", db, "--target", "gpu", "--kernel", "pnpoly", "--trial", "1",
          "--reason", "by hand", "--json", NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  assert_int_equal(json_integer_value(json_object_get(j, "version")), 2);
  assert_int_equal(json_integer_value(json_object_get(j, "trial")), 1);
  assert_true(json_is_true(json_object_get(j, "foreign_origin")));
  json_decref(j);
  done(&r);
  static const struct { const char *a, *b; int rc; const char *msg; } bad_pins[] = {
    {"--trial", "999999", 1, "no trial 999999"},
    {"--trial", "0", 2, "--trial: expected a whole number >= 1, got '0'"},
    {"--best", "--trial=1", 2, "exclude each other"},
    {"--version", "1", 2, "--version does not apply to 'db pin'"},
  };
  for (size_t i = 0; i < sizeof bad_pins / sizeof *bad_pins; i++) {
    r = run("db", "pin", "--db", db, "--target", "gpu", "--kernel", "pnpoly", bad_pins[i].a, bad_pins[i].b, NULL);
    assert_int_equal(r.rc, bad_pins[i].rc);
    if (!strstr(r.err, bad_pins[i].msg)) fail_msg("case %zu: %s", i, r.err);
    done(&r);
  }
  r = run("db", "history", "--db", db, "--target", "gpu", "--kernel", "pnpoly", "--json", NULL);
  assert_int_equal(r.rc, 0);
  j = json_loads(r.out, 0, &je);
  assert_int_equal(json_array_size(j), 2);
  assert_true(json_is_true(json_object_get(json_array_get(j, 1), "current")));
  assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "pinned_by")), "ci");
  assert_true(fabs(json_real_value(json_object_get(json_array_get(j, 0), "time_s")) * 1e3 - 7.2242) < 1e-3);
  json_decref(j);
  done(&r);
  r = run("db", "rollback", "--db", db, "--target", "gpu", "--kernel", "pnpoly", "--version", "1", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  r = run("db", "history", "--db", db, "--target", "gpu", "--kernel", "pnpoly", NULL);
  assert_int_equal(count_lines(r.out), 3);
  assert_non_null(strstr(r.out, "* v1 "));
  done(&r);
  r = run("db", "rollback", "--db", db, "--target", "gpu", "--kernel", "pnpoly", "--version", "3", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "no pin version 3"));
  done(&r);
  r = run("db", "rollback", "--db", db, "--target", "gpu", "--kernel", "pnpoly", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  /* tags */
  r = run("db", "tag", "--db", db, "--name", "v1.0", "--note", "first", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "tagged 1 pins as v1.0"));
  done(&r);
  r = run("db", "tag", "--db", db, "--name", "v1.0", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "already exists"));
  done(&r);
  r = run("db", "tag", "--db", db, "--list", "--json", NULL);
  assert_int_equal(r.rc, 0);
  j = json_loads(r.out, 0, &je);
  assert_int_equal(json_array_size(j), 1);
  assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "note")), "first");
  json_decref(j);
  done(&r);
  r = run("db", "tag", "--db", db, "--show", "v1.0", "--json", NULL);
  j = json_loads(r.out, 0, &je);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(j, 0), "version")), 1);
  json_decref(j);
  done(&r);
  r = run("db", "tag", "--db", db, "--list", "--name", "x", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  r = run("db", "tag", "--db", db, "--show", "nope", NULL);
  assert_int_equal(r.rc, 1);
  done(&r);
  /* export */
  r = run("db", "export", "--db", db, "--target", "gpu", "--kernel", "pnpoly", "--format", "csv", NULL);
  assert_int_equal(r.rc, 0);
  assert_int_equal(count_lines(r.out), 1 + 4092);
  assert_non_null(strstr(r.out, "block_size_x"));
  done(&r);
  r = run("db", "export", "--db", db, "--target", "gpu", "--kernel", "pnpoly", "--format", "xml", NULL);
  assert_int_equal(r.rc, 2);   /* a usage error, as space enum --format xml */
  assert_non_null(strstr(r.err, "--format: 'xml' is not one of t4, json, csv, kt-cache"));
  done(&r);
  r = run("db", "export", "--db", db, "--target", "gpu", "--kernel", "pnpoly", "--out", out, NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "exported 4092 trials"));
  done(&r);
  r = run("db", "import", "--db", db2, "--t4", out, "--space", sp, "--target", "gpu", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  /* merge: the export re-imported is the same trials (times exact) */
  r = run("db", "merge", "--db", db, db2, NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "0 trials merged, 4092 duplicate"));
  done(&r);
  r = run("db", "merge", "--db", db, NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  r = run("db", "merge", "--db", db, "/nonexistent/x.db", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "nothing was merged"));
  done(&r);
  r = run("db", "pin", "--help", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "--trial ID"));
  done(&r);
  r = run("db", "check", "--db", db, NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  unlink(out);
  static const char *const sfx[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s%s", db, sfx[i]);
    unlink(path);
    snprintf(path, sizeof path, "%s%s", db2, sfx[i]);
    unlink(path);
  }
}

/* lookup and export-header: the code generators' view of a pinned file */
static void t802_db_lookup_and_header(void **state) {
  (void)state;
  char db[64], hdr[96], prog[96], cmd[512];
  snprintf(db, sizeof db, "/tmp/rooftune-cli-lookup-%d.db", (int)getpid());
  snprintf(hdr, sizeof hdr, "/tmp/rooftune-cli-lookup-%d.h", (int)getpid());
  snprintf(prog, sizeof prog, "/tmp/rooftune-cli-lookup-%d", (int)getpid());
  result r = run("db", "import", "--db", db, "--t4", "data/t4/convolution_milo_A100_T4.json.gz",
                 "--space", T1 "convolution_milo.json", "--target", "A100", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  r = run("db", "lookup", "--db", db, "--target", "A100", "--kernel", "convolution_milo", "--json", NULL);
  assert_int_equal(r.rc, 0);   /* nothing pinned: the template default */
  assert_non_null(strstr(r.out, "\"match\":\"default\""));
  done(&r);
  r = run("db", "pin", "--db", db, "--target", "A100", "--kernel", "convolution_milo", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  r = run("db", "best", "--db", db, "--target", "A100", "--kernel", "convolution_milo", "--json", NULL);
  json_error_t je;
  json_t *best = json_loads(r.out, 0, &je);
  char *best_cfg = json_dumps(json_object_get(json_array_get(best, 0), "config"), JSON_COMPACT);
  json_decref(best);
  done(&r);
  r = run("db", "lookup", "--db", db, "--target", "A100", "--kernel", "convolution_milo", "--json", NULL);
  assert_int_equal(r.rc, 0);
  json_t *j = json_loads(r.out, 0, &je);
  assert_string_equal(json_string_value(json_object_get(j, "match")), "exact");
  char *got = json_dumps(json_object_get(j, "config"), JSON_COMPACT);
  assert_string_equal(got, best_cfg);   /* the pinned schedule is the best trial */
  free(got);
  json_decref(j);
  done(&r);
  r = run("db", "lookup", "--db", db, "--target", "A100", "--kernel", "nonesuch", NULL);
  assert_int_equal(r.rc, 1);
  done(&r);
  /* the exported header compiles and answers the same */
  r = run("db", "export-header", "--db", db, "--target", "A100", "--kernel", "convolution_milo",
          "--out", hdr, NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  char src[128];
  snprintf(src, sizeof src, "%s.c", prog);
  FILE *f = fopen(src, "w");
  fprintf(f, "#include \"%s\"\n#include <stdio.h>\nint main(void) {\n"
             "  convolution_milo_tuned_result r;\n"
             "  if (convolution_milo_tuned_lookup(NULL, &r)) return 1;\n"
             "  printf(\"%%d %%s\", r.match, r.config);\n  return 0;\n}\n", hdr);
  fclose(f);
  char line[4096] = "";
  assert_int_equal(tk_run((const char *[]){"cc", "-Wall", "-Werror", "-o", prog, src, "-lm", NULL}, NULL), 0);
  assert_int_equal(tk_run((const char *[]){prog, NULL}, &(tk_io){.out = line, .cap = sizeof line}), 0);
  char expect[4200];
  snprintf(expect, sizeof expect, "1 %s", best_cfg);
  assert_string_equal(line, expect);
  free(best_cfg);
  unlink(src);
  unlink(prog);
  unlink(hdr);
  static const char *const sfx[] = {"", "-wal", "-shm"};
  for (int i = 0; i < 3; i++) {
    snprintf(cmd, sizeof cmd, "%s%s", db, sfx[i]);
    unlink(cmd);
  }
}


/* ---- t9xx: replay, compare, tune ---- */

#define T4 "data/t4/"

static void t900_replay(void **state) {
  (void)state;
  result r = run("replay", "--t4", T4 "pnpoly_RTX_3090_T4.json.gz", "--space", T1 "pnpoly.json",
                 "--strategy", "random", "--budget", "100%", "--json", NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  assert_non_null(j);
  /* every configuration once: the best found is the recording's optimum */
  assert_int_equal(json_integer_value(json_object_get(j, "evaluations")), 4092);
  assert_int_equal(json_array_size(json_object_get(j, "trace")), 4092);
  assert_string_equal(json_string_value(json_object_get(j, "ended")), "space exhausted");
  json_t *best = json_object_get(j, "best");
  assert_int_equal(json_integer_value(json_object_get(best, "rank")), 1);
  assert_true(fabs(json_real_value(json_object_get(best, "time_s")) - 7.2242e-3) < 1e-7);
  json_decref(j);
  done(&r);
  /* a time budget in recorded seconds; the same seed gives the same text */
  r = run("replay", "--t4", T4 "pnpoly_RTX_3090_T4.json.gz", "--space", T1 "pnpoly.json",
          "--strategy", "annealing", "--time-limit", "60", "--seed", "3", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "ended on time"));
  result r2 = run("replay", "--t4", T4 "pnpoly_RTX_3090_T4.json.gz", "--space", T1 "pnpoly.json",
                  "--strategy", "annealing", "--time-limit", "60", "--seed", "3", NULL);
  char *a = strstr(r.out, "best"), *b = strstr(r2.out, "best");
  assert_non_null(a);
  assert_non_null(b);
  assert_string_equal(strstr(a, "spent") ? (*strstr(a, "spent") = 0, a) : a,
                      strstr(b, "spent") ? (*strstr(b, "spent") = 0, b) : b);
  done(&r2);
  done(&r);
  /* errors: unknown strategy (usage), a space the file was not recorded on */
  r = run("replay", "--t4", T4 "pnpoly_RTX_3090_T4.json.gz", "--space", T1 "pnpoly.json",
          "--strategy", "nonesuch", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  r = run("replay", "--t4", T4 "pnpoly_RTX_3090_T4.json.gz", "--space", T1 "convolution_milo.json",
          "--strategy", "random", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "results[0]"));
  done(&r);
  r = run("replay", "--space", T1 "pnpoly.json", "--strategy", "random", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
}

/* The recorded configurations of a T4 file, read here with jansson: a set
** (JSON object) keyed by each configuration with sorted keys. */
static json_t *t4_configs(const char *path) {
  size_t n;
  char *text = tk_gunzip(path, &n);
  json_error_t je;
  json_t *root = json_loads(text, 0, &je), *set = json_object(), *res;
  size_t i;
  json_array_foreach(json_object_get(root, "results"), i, res) {
    char *key = json_dumps(json_object_get(res, "configuration"), JSON_COMPACT | JSON_SORT_KEYS);
    json_object_set_new(set, key, json_true());
    free(key);
  }
  json_decref(root);
  free(text);
  return set;
}

/* replay and compare on a T4 file without --space: the space inferred from
** the file is exactly the recorded configurations (issue 15 part 3). */
static void t905_replay_t4_without_space(void **state) {
  (void)state;
  /* pnpoly's recording holds every combination of its values, in the T1
  ** file's order: the same run, with or without the T1 file */
  result a = run("replay", "--t4", T4 "pnpoly_RTX_3090_T4.json.gz", "--space", T1 "pnpoly.json",
                 "--strategy", "annealing", "--seed", "5", "--json", NULL);
  result b = run("replay", "--t4", T4 "pnpoly_RTX_3090_T4.json.gz", "--strategy", "annealing", "--seed", "5",
                 "--json", NULL);
  assert_int_equal(a.rc, 0);
  assert_int_equal(b.rc, 0);
  json_error_t je;
  json_t *ja = json_loads(a.out, 0, &je), *jb = json_loads(b.out, 0, &je);
  assert_non_null(ja);
  assert_non_null(jb);
  json_object_del(ja, "framework_ms_per_eval");   /* a timing */
  json_object_del(jb, "framework_ms_per_eval");
  assert_true(json_equal(ja, jb));
  json_decref(ja);
  json_decref(jb);
  done(&a);
  done(&b);
  /* convolution's recording holds 4362 of the 10240 combinations of its
  ** values: an exhaustive replay evaluates exactly those, each once, and
  ** finds the optimum the T1 file's replay finds */
  json_t *want = t4_configs(T4 "convolution_milo_A100_T4.json.gz");
  assert_int_equal(json_object_size(want), 4362);
  a = run("replay", "--t4", T4 "convolution_milo_A100_T4.json.gz", "--strategy", "exhaustive", "--budget",
          "100%", "--json", NULL);
  assert_int_equal(a.rc, 0);
  json_t *j = json_loads(a.out, 0, &je), *e, *seen = json_object();
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_object_get(j, "evaluations")), 4362);
  assert_string_equal(json_string_value(json_object_get(j, "ended")), "space exhausted");
  size_t i;
  json_array_foreach(json_object_get(j, "trace"), i, e) {
    char *key = json_dumps(json_object_get(e, "config"), JSON_COMPACT | JSON_SORT_KEYS);
    if (!json_object_get(want, key)) fail_msg("evaluation %zu: %s is not a recorded configuration", i, key);
    if (json_object_get(seen, key)) fail_msg("evaluation %zu: %s evaluated twice", i, key);
    json_object_set_new(seen, key, json_true());
    free(key);
  }
  assert_int_equal(json_object_size(seen), 4362);
  double opt = json_real_value(json_object_get(j, "optimum_s"));
  json_decref(seen);
  json_decref(j);
  json_decref(want);
  done(&a);
  b = run("replay", "--t4", T4 "convolution_milo_A100_T4.json.gz", "--space", T1 "convolution_milo.json",
          "--strategy", "random", "--json", NULL);
  assert_int_equal(b.rc, 0);
  j = json_loads(b.out, 0, &je);
  assert_true(json_real_value(json_object_get(j, "optimum_s")) == opt);
  json_decref(j);
  done(&b);
  /* compare: random search's expectation is over the whole (inferred) space */
  a = run("compare", "--t4", T4 "convolution_milo_A100_T4.json.gz", "--strategies", "random,annealing",
          "--budget", "20", "--repeats", "2", "--json", NULL);
  assert_int_equal(a.rc, 0);
  j = json_loads(a.out, 0, &je);
  assert_non_null(j);
  assert_true(json_is_true(json_object_get(j, "reference_is_whole_space")));
  assert_int_equal(json_integer_value(json_object_get(j, "reference_configurations")), 4362);
  assert_null(strstr(a.err, "warning"));
  json_decref(j);
  done(&a);
  /* a file whose space cannot be inferred: the reason, exit 1 */
  char path[] = "/tmp/rooftune-t4-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char *empty = "{\"schema_version\": \"1.0.0\", \"results\": []}";
  assert_int_equal(write(fd, empty, strlen(empty)), (int)strlen(empty));
  close(fd);
  a = run("replay", "--t4", path, "--strategy", "random", NULL);
  assert_int_equal(a.rc, 1);
  assert_non_null(strstr(a.err, "a space cannot be inferred from an empty file"));
  done(&a);
  unlink(path);
}

static void t901_compare(void **state) {
  (void)state;
  char dir[64], path[128];
  snprintf(dir, sizeof dir, "/tmp/rooftune-cmp-%d", (int)getpid());
  result r = run("compare", "--t4", T4 "convolution_milo_A100_T4.json.gz", "--space",
                 T1 "convolution_milo.json", "--strategies", "random,exhaustive,annealing",
                 "--budget", "5%", "--repeats", "4", "--json", "--csv", dir, NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_object_get(j, "budget")), 219);   /* ceil(5% of 4362) */
  json_t *st = json_object_get(j, "strategies");
  assert_int_equal(json_array_size(st), 3);
  /* scores.csv holds what the JSON summarises: its mean per strategy */
  snprintf(path, sizeof path, "%s/scores.csv", dir);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char line[512];
  double sum[3] = {0};
  int n[3] = {0};
  assert_non_null(fgets(line, sizeof line, f));   /* header */
  while (fgets(line, sizeof line, f)) {
    char name[32];
    int rep;
    unsigned long long seed;
    double score;
    assert_int_equal(sscanf(line, "%31[^,],%d,%llu,%lf", name, &rep, &seed, &score), 4);
    for (int i = 0; i < 3; i++)
      if (!strcmp(name, json_string_value(json_object_get(json_array_get(st, i), "name"))))
        sum[i] += score, n[i]++;
  }
  fclose(f);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(n[i], 4);
    double mean = json_real_value(json_object_get(json_array_get(st, i), "score_mean"));
    assert_true(fabs(sum[i] / 4 - mean) < 1e-5);
  }
  unlink(path);
  snprintf(path, sizeof path, "%s/curves.csv", dir);
  f = fopen(path, "r");
  assert_non_null(f);
  int lines = 0;
  while (fgets(line, sizeof line, f)) lines++;
  fclose(f);
  assert_int_equal(lines, 1 + 3 * 4 * 219);
  unlink(path);
  rmdir(dir);
  json_decref(j);
  done(&r);
  r = run("compare", "--t4", T4 "convolution_milo_A100_T4.json.gz", "--space",
          T1 "convolution_milo.json", "--strategies", "random,bogus", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
}

/* Rows of one integer query on a database file (-1 on error). */
static long long db_int(const char *db, const char *sql) {
  sqlite3 *h;
  sqlite3_stmt *st;
  long long v = -1;
  if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
    sqlite3_busy_timeout(h, 5000);
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return v;
}

/* Start rooftune tune in the background; signal it once the database
** holds at least `trials` trials. Returns its exit code (128 + signal). */
static int tune_and_signal(const char *db, const char *seed, int trials, int sig,
                           const char *resume) {
  const char *argv[40] = {rooftune, "tune", "--db", db};
  int argc = 4;
  if (resume) {
    argv[argc++] = "--resume", argv[argc++] = resume;
  } else {
    const char *more[] = {"--kernel", "reduction", "--set", "N=100000", "--strategy", "random",
                          "--budget", "12", "--seed", seed, "--time-cap", "0.15", "--ci", "0.000001",
                          "--no-pin"};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++) argv[argc++] = more[i];
  }
  argv[argc] = NULL;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    int nul = open("/dev/null", 1);
    dup2(nul, 1);
    dup2(nul, 2);
    execv(rooftune, (char *const *)argv);
    _exit(127);
  }
  int status;
  for (int i = 0; i < 3000; i++) {   /* 60 s at most */
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (db_int(db, "SELECT count(*) FROM trials") >= trials) break;
    usleep(20000);
  }
  kill(pid, sig);
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void rm_db(const char *db) {
  static const char *const sfx[] = {"", "-wal", "-shm"};
  char p[128];
  for (int i = 0; i < 3; i++) {
    snprintf(p, sizeof p, "%s%s", db, sfx[i]);
    unlink(p);
  }
}

/* Ctrl-C stops cleanly, SIGKILL loses nothing stored, --resume reaches the
** budget without measuring a stored configuration again, and a new
** campaign with the same seed reuses every measurement in the same order. */
static void t902_tune_stop_kill_resume_reuse(void **state) {
  (void)state;
  char db[64];
  snprintf(db, sizeof db, "/tmp/rooftune-tune-%d.db", (int)getpid());
  rm_db(db);
  assert_int_equal(tune_and_signal(db, "4", 2, SIGINT, NULL), 130);
  assert_int_equal(db_int(db, "SELECT count(*) FROM campaigns WHERE state = 'stopped'"), 1);
  long long before = db_int(db, "SELECT count(*) FROM trials");
  assert_true(before >= 2 && before < 12);
  /* resume, kill it mid-way, resume again */
  assert_int_equal(tune_and_signal(db, NULL, (int)before + 2, SIGKILL, "1"), 128 + SIGKILL);
  long long mid = db_int(db, "SELECT count(*) FROM trials");
  assert_true(mid >= before + 2);
  long long max_id = db_int(db, "SELECT max(id) FROM trials");
  result r = run("tune", "--db", db, "--resume", "1", "--json", NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  assert_non_null(j);
  assert_int_equal(json_integer_value(json_object_get(j, "evaluations")), 12);
  assert_int_equal(json_integer_value(json_object_get(j, "resumed")), mid);
  assert_int_equal(json_integer_value(json_object_get(j, "measured")), 12 - mid);
  assert_string_equal(json_string_value(json_object_get(j, "state")), "done");
  json_decref(j);
  done(&r);
  /* nothing lost, nothing twice: 12 distinct configurations, the stored
  ** ones untouched (ids below max_id all still there) */
  assert_int_equal(db_int(db, "SELECT count(DISTINCT config) FROM trials WHERE campaign_id = 1"), 12);
  char sql[160];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE id <= %lld", max_id);
  assert_int_equal(db_int(db, sql), mid);
  assert_int_equal(db_int(db, "SELECT count(*) FROM campaigns WHERE id = 1 AND state = 'done'"), 1);
  /* resuming a finished campaign is an error */
  r = run("tune", "--db", db, "--resume", "1", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "done already"));
  done(&r);
  /* the same campaign again: every configuration reused, in the same order */
  r = run("tune", "--db", db, "--kernel", "reduction", "--set", "N=100000", "--strategy", "random",
          "--budget", "12", "--seed", "4", "--time-cap", "0.15", "--ci", "0.000001", "--json", NULL);
  assert_int_equal(r.rc, 0);
  j = json_loads(r.out, 0, &je);
  assert_int_equal(json_integer_value(json_object_get(j, "reused")), 12);
  assert_int_equal(json_integer_value(json_object_get(j, "measured")), 0);
  assert_int_equal(json_integer_value(json_object_get(j, "pin_version")), 1);
  json_decref(j);
  done(&r);
  assert_int_equal(db_int(db, "SELECT count(*) FROM trials a JOIN trials b ON b.campaign_id = 2"
                              " AND a.campaign_id = 1 AND b.id - (SELECT min(id) FROM trials WHERE campaign_id = 2)"
                              " = (SELECT count(*) FROM trials c WHERE c.campaign_id = 1 AND c.id < a.id)"
                              " AND a.config = b.config"), 12);
  rm_db(db);
}

/* A live comparison runs campaigns into the database; run again, it
** measures nothing (everything reused) and reports the same scores. */
static void t904_compare_live(void **state) {
  (void)state;
  char db[64];
  snprintf(db, sizeof db, "/tmp/rooftune-cmp-live-%d.db", (int)getpid());
  rm_db(db);
  result r[2];
  for (int i = 0; i < 2; i++) {
    r[i] = run("compare", "--target", "host", "--kernel", "reduction", "--set", "N=100000",
               "--strategies", "random,annealing", "--budget", "4", "--repeats", "2", "--reference", "8",
               "--time-cap", "0.02", "--db", db, "--json", NULL);
    assert_int_equal(r[i].rc, 0);
  }
  json_error_t je;
  char *text[2];
  for (int i = 0; i < 2; i++) {   /* equal but for the framework's timing */
    json_t *x = json_loads(r[i].out, 0, &je), *e;
    size_t k;
    assert_non_null(x);
    json_array_foreach(json_object_get(x, "strategies"), k, e) json_object_del(e, "framework_ms_per_eval");
    text[i] = json_dumps(x, JSON_COMPACT);
    json_decref(x);
  }
  assert_string_equal(text[0], text[1]);
  free(text[0]);
  free(text[1]);
  json_t *j = json_loads(r[0].out, 0, &je);
  assert_int_equal(json_integer_value(json_object_get(j, "reference_configurations")), 8);
  assert_int_equal(json_array_size(json_object_get(j, "strategies")), 2);
  json_decref(j);
  done(&r[0]);
  done(&r[1]);
  /* 1 reference + 2 x 2 runs, twice; the second time all reused; no pins */
  assert_int_equal(db_int(db, "SELECT count(*) FROM campaigns"), 10);
  assert_int_equal(db_int(db, "SELECT count(*) FROM trials WHERE campaign_id > 5 AND origin != 'reused'"), 0);
  assert_int_equal(db_int(db, "SELECT count(*) FROM pins"), 0);
  rm_db(db);
}

static void t903_tune_usage(void **state) {
  (void)state;
  result r = run("tune", "--help", NULL);
  assert_int_equal(r.rc, 0);
  for (const char *s[] = {"exhaustive", "random", "annealing", "genetic", "de", "bayes", "bandit", NULL}, **p = s; *p; p++)
    assert_non_null(strstr(r.out, *p));
  done(&r);
  r = run("tune", "--set", "N=10", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--kernel"));
  done(&r);
  r = run("tune", "--kernel", "reduction", "--strategy", "nope", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  r = run("tune", "--resume", "3", "--kernel", "gemm", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  /* a bad value given as its own word: the message names the option */
  r = run("tune", "--kernel", "reduction", "--time-limit", "0", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--time-limit: expected a number > 0, got '0'"));
  done(&r);
  r = run("replay", "--t4", "x", "--space", "y", "--strategy", "random", "--seed", "-3", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--seed: expected a whole number >= 0, got '-3'"));
  done(&r);
  /* a budget's form is a usage error (as in replay and compare), found before the database is made */
  r = run("tune", "--kernel", "reduction", "--set", "N=1000", "--budget", "0", "--db", "/tmp/rooftune-never.db", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--budget: expected N evaluations"));
  done(&r);
  assert_int_equal(access("/tmp/rooftune-never.db", F_OK), -1);
  rm_db("/tmp/rooftune-never.db");
}

/* ---- t10xx: bench ---- */

/* A quick bench stores one row of ceilings for the host; a second call
** shows the stored row without measuring (no new row, the same JSON, its
** date on stderr); --force measures again. */
static void t1000_bench_stores_and_reuses(void **state) {
  (void)state;
  char db[64];
  snprintf(db, sizeof db, "/tmp/rooftune-bench-%d.db", (int)getpid());
  rm_db(db);
  result r = run("bench", "--quick", "--json", "--db", db, NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  if (!j) fail_msg("not JSON: %s", r.out);
  assert_true(json_array_size(json_object_get(j, "classes")) >= 2);
  assert_true(json_number_value(json_array_get(json_object_get(j, "peak"), 0)) > 0);
  const char *measured = json_string_value(json_object_get(j, "measured"));
  assert_non_null(measured);
  char when[32];
  snprintf(when, sizeof when, "%s", measured);
  json_decref(j);
  assert_int_equal(db_int(db, "SELECT count(*) FROM ceilings"), 1);
  assert_int_equal(db_int(db, "SELECT count(*) FROM targets WHERE name = 'host'"), 1);
  char *first = r.out;
  free(r.err);
  r = run("bench", "--quick", "--json", "--db", db, NULL);
  assert_int_equal(r.rc, 0);
  assert_string_equal(r.out, first);
  assert_non_null(strstr(r.err, "stored on"));
  assert_non_null(strstr(r.err, when));
  assert_int_equal(db_int(db, "SELECT count(*) FROM ceilings"), 1);
  done(&r);
  free(first);
  r = run("bench", "--db", db, NULL);   /* the table, from the stored row */
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "stored on"));
  assert_non_null(strstr(r.out, "scalar-add"));
  assert_non_null(strstr(r.out, "DRAM"));
  done(&r);
  r = run("bench", "--quick", "--force", "--threads", "1", "--db", db, NULL);
  assert_int_equal(r.rc, 0);
  assert_null(strstr(r.out, "stored on"));
  assert_non_null(strstr(r.out, "1 thread"));
  done(&r);
  assert_int_equal(db_int(db, "SELECT count(*) FROM ceilings"), 2);
  rm_db(db);
}

static void t1001_bench_usage(void **state) {
  (void)state;
  result r = run("bench", "--help", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "usage: rooftune bench"));
  done(&r);
  r = run("bench", "--frobnicate", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--frobnicate"));
  assert_non_null(strstr(r.err, "usage: rooftune bench"));
  done(&r);
  r = run("bench", "--threads", "0", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--threads: expected a whole number in [1, 256], got '0'"));
  done(&r);
  r = run("bench", "--target", "nowhere", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "unknown target 'nowhere'"));
  done(&r);
  r = run("bench", "extra", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
}

/* ---- t11xx: model roofline ---- */

/* A whole file (NULL when unreadable); *n gets its size. */
static char *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *s = tk__slurp(f);
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fclose(f);
  return s;
}

/* Store ceilings chosen by hand (as the bench stores them: one row of
** cm_ceilings JSON) for the target of campaign 1 of path, so the plot's
** labels and roofs are known in advance. */
static void put_ceilings(const char *path) {
  cm_ceilings ce;
  memset(&ce, 0, sizeof ce);
  ce.threads = 2;
  ce.nclass = 2;
  ce.cls[0] = (cm_class){"avx512-fma", 512, 1, {100e9, 180e9}};
  ce.cls[1] = (cm_class){"avx512-add", 512, 0, {50e9, 90e9}};
  ce.peak[0] = 100e9, ce.peak[1] = 180e9;
  const double bw[CM_NLEVEL][2] = {{400e9, 650e9}, {312e9, 200e9}, {80e9, 95.5e9}, {12.5e9, 20e9}};
  memcpy(ce.bw, bw, sizeof bw);
  ce.cache[0] = 48 << 10, ce.cache[1] = 2 << 20, ce.cache[2] = 260 << 20;
  snprintf(ce.measured, sizeof ce.measured, "2026-01-02T03:04:05Z");
  ce.seconds = 1;
  char *json = cm_ceilings_json(&ce);
  sqlite3 *h;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h, "INSERT INTO ceilings(target_id, measured, data)"
                                         " SELECT target_id, ?1, ?2 FROM campaigns WHERE id = 1", -1, &st, NULL),
                   SQLITE_OK);
  sqlite3_bind_text(st, 1, ce.measured, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, json, -1, SQLITE_STATIC);
  assert_int_equal(sqlite3_step(st), SQLITE_DONE);
  assert_int_equal(sqlite3_changes(h), 1);
  sqlite3_finalize(st);
  sqlite3_close(h);
  free(json);
}

/* The roofline of a small reduction campaign: no ceilings is an error
** naming the bench command; with ceilings, a PNG, an SVG with the
** ceilings' labels, the script beside them, and a CSV whose GFLOP/s are
** flops / time of the trials as `db export` lists them, with the flops
** and compulsory bytes of a sum of N floats counted by hand. */
static void t1100_model_roofline(void **state) {
  (void)state;
  char db[64], png[80], svg[80], gp[80], csv[80], msg[256];
  int pid = (int)getpid();
  snprintf(db, sizeof db, "/tmp/rooftune-roof-%d.db", pid);
  snprintf(png, sizeof png, "/tmp/rooftune-roof-%d.png", pid);
  snprintf(svg, sizeof svg, "/tmp/rooftune-roof-%d.svg", pid);
  snprintf(gp, sizeof gp, "/tmp/rooftune-roof-%d.gp", pid);
  snprintf(csv, sizeof csv, "/tmp/rooftune-roof-%d.csv", pid);
  rm_db(db);
  result r = run("tune", "--db", db, "--kernel", "reduction", "--set", "N=100000", "--strategy", "random",
                 "--budget", "4", "--seed", "5", "--time-cap", "0.02", "--no-pin", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  /* no ceilings yet */
  r = run("model", "roofline", "--db", db, "--campaign", "1", "-o", png, NULL);
  assert_int_equal(r.rc, 1);
  snprintf(msg, sizeof msg, "no measured ceilings for target host in %s: run rooftune bench --target host --db %s",
           db, db);
  assert_non_null(strstr(r.err, msg));
  done(&r);
  put_ceilings(db);
  /* PNG and CSV */
  r = run("model", "roofline", "--db", db, "--campaign", "1", "-o", png, "--data", csv, NULL);
  assert_int_equal(r.rc, 0);
  char line[400];
  snprintf(line, sizeof line, "wrote %s\nwrote %s\nwrote %s\n", png, gp, csv);
  assert_non_null(strstr(r.out, line));
  long long ok = db_int(db, "SELECT count(*) FROM trials WHERE campaign_id = 1 AND status = 'ok'");
  assert_true(ok >= 1);
  snprintf(line, sizeof line, "schedules  %lld verified", ok);
  assert_non_null(strstr(r.out, line));
  done(&r);
  size_t n;
  char *text = read_all(png, &n);
  assert_non_null(text);
  assert_true(n > 1000);
  assert_memory_equal(text, "\x89PNG\r\n\x1a\n", 8);
  free(text);
  text = read_all(gp, &n);
  assert_non_null(text);
  assert_non_null(strstr(text, "set terminal pngcairo size 1000,700"));
  free(text);
  /* the CSV against the trials as db export lists them */
  r = run("db", "export", "--db", db, "--target", "host", "--kernel", "reduction", "--format", "json", NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *rows = json_loads(r.out, 0, &je), *row;
  assert_non_null(rows);
  done(&r);
  const double N = 100000, flops = N - 1, bytes = 4 * (N + 1);   /* N - 1 adds; read N, write 1 */
  const double roof = fmin(180, 20 * flops / bytes);             /* GFLOP/s: peak vs DRAM x intensity */
  text = read_all(csv, &n);
  assert_non_null(text);
  char *save = NULL, *l = strtok_r(text, "\n", &save);
  assert_string_equal(l, "trial,campaign,threads,time_s,flops,bytes,intensity,gflops,roof_gflops,"
                         "roof_fraction,best,config");
  int rows_seen = 0, best_rows = 0;
  double best_g = 0, max_g = 0;
  while ((l = strtok_r(NULL, "\n", &save))) {
    double f[11];
    char *p = l;
    for (int i = 0; i < 11; i++) {   /* the numeric columns (threads may be empty) */
      f[i] = strtod(p, &p);
      assert_int_equal(*p, ',');
      p++;
    }
    int found = 0;
    size_t i;
    json_array_foreach(rows, i, row) {
      if (json_integer_value(json_object_get(row, "id")) != (json_int_t)f[0]) continue;
      found = 1;
      assert_int_equal(json_integer_value(json_object_get(row, "campaign_id")), 1);
      assert_string_equal(json_string_value(json_object_get(row, "status")), "ok");
      double t = json_number_value(json_object_get(row, "time")), want = flops / t / 1e9;
      assert_true(fabs(f[7] - want) <= 1e-12 * want);
      assert_true(f[3] == t);
      assert_int_equal(f[2], json_integer_value(json_object_get(json_object_get(row, "config"), "threads")));
    }
    assert_true(found);
    assert_true(f[4] == flops && f[5] == bytes);
    assert_true(fabs(f[6] - flops / bytes) < 1e-12);
    assert_true(fabs(f[8] - roof) < 1e-9 && fabs(f[9] - f[7] / roof) < 1e-9);
    best_rows += f[10] == 1;
    if (f[10] == 1) best_g = f[7];
    max_g = fmax(max_g, f[7]);
    rows_seen++;
  }
  assert_int_equal(rows_seen, ok);
  assert_int_equal(best_rows, 1);
  assert_true(best_g == max_g);
  json_decref(rows);
  free(text);
  /* SVG: XML with the ceilings' labels and the date in the title */
  r = run("model", "roofline", "--db", db, "--campaign", "1", "-o", svg, NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  text = read_all(svg, &n);
  assert_non_null(text);
  assert_true(!strncmp(text, "<?xml", 5) && strstr(text, "<svg"));
  for (const char *s[] = {"L1 650 GB/s", "L2 312 GB/s", "L3 95.5 GB/s", "DRAM 20.0 GB/s",
                          "FP32 peak 180 GFLOP/s (2 threads)", "FP32 peak 100 GFLOP/s (1 thread)",
                          "no FMA: avx512-add 90.0 GFLOP/s (2 threads)", "2026-01-02T03:04:05Z",
                          "reduction f32 N=100000", NULL}, **p = s; *p; p++)
    if (!strstr(text, *p)) fail_msg("'%s' is not in %s", *p, svg);
  free(text);
  text = read_all(gp, &n);   /* the script of the last plot */
  assert_non_null(strstr(text, "set terminal svg size 1000,700"));
  free(text);
  /* every campaign of the workload: a second campaign reuses every
  ** configuration, and each is plotted once */
  r = run("tune", "--db", db, "--kernel", "reduction", "--set", "N=100000", "--strategy", "random",
          "--budget", "4", "--seed", "5", "--time-cap", "0.02", "--no-pin", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  r = run("model", "roofline", "--db", db, "--kernel", "reduction", "--set", "N=100000", "-o", png, NULL);
  assert_int_equal(r.rc, 0);
  snprintf(line, sizeof line, "schedules  %lld verified",
           db_int(db, "SELECT count(DISTINCT config) FROM trials WHERE status = 'ok'"));
  assert_non_null(strstr(r.out, line));
  assert_non_null(strstr(r.out, "repeated configurations skipped"));
  done(&r);
  unlink(png), unlink(svg), unlink(gp), unlink(csv);
  rm_db(db);
}

static void t1101_model_roofline_usage(void **state) {
  (void)state;
  result r = run("model", "roofline", "--help", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "usage: rooftune model roofline"));
  done(&r);
  r = run("model", "roofline", "--campaign", "1", "-o", "/tmp/rooftune-roof.jpg", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "expected .png or .svg"));
  done(&r);
  r = run("model", "roofline", "--campaign", "1", "--kernel", "gemm", "-o", "x.png", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  r = run("model", "roofline", "--campaign", "1", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "-o FILE.png"));
  done(&r);
  r = run("model", "roofline", "--campaign", "0", "-o", "x.png", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  r = run("model", "roofline", "--db", "/tmp/rooftune-roof-none.db", "--campaign", "1", "-o", "x.png", NULL);
  assert_int_equal(r.rc, 1);
  done(&r);
  /* gnuplot missing: the message names the Debian package */
  char *path = strdup(getenv("PATH"));
  setenv("PATH", "/nonexistent", 1);
  r = run("model", "roofline", "--campaign", "1", "-o", "/tmp/rooftune-roof-x.png", NULL);
  setenv("PATH", path, 1);
  free(path);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "gnuplot-nox"));
  done(&r);
}

/* ---- t12xx: rooftune model predict|explain|calibrate|accuracy|history,
** and the model strategy in replay ---- */

/* A number at path1[.path2] of a JSON text (NAN if absent). */
static double json_num(const char *text, const char *path1, const char *path2) {
  json_error_t je;
  json_t *j = json_loads(text, 0, &je), *v = j ? json_object_get(j, path1) : NULL;
  if (v && path2) v = json_object_get(v, path2);
  double x = json_is_number(v) ? json_number_value(v) : NAN;
  json_decref(j);
  return x;
}

static void t1200_model_commands(void **state) {
  (void)state;
  char db[64], slice[64];
  snprintf(db, sizeof db, "/tmp/rooftune-model-%d.db", (int)getpid());
  snprintf(slice, sizeof slice, "/tmp/rooftune-slice-%d.json", (int)getpid());
  rm_db(db);
  /* a 12-schedule slice of the gemm space, measured whole */
  json_error_t je;
  json_t *sj = json_load_file("targets/host/gemm.json", 0, &je), *tp;
  assert_non_null(sj);
  static const char *const vals[][2] = {
    {"mc", "[48]"}, {"nc", "[192]"}, {"kc", "[64]"}, {"mr", "[2, 4, 6]"}, {"nr_vecs", "[1, 2]"},
    {"unroll_k", "[4]"}, {"loop_order", "['nkm']"}, {"macro_order", "['mn']"},
    {"pack_a", "[False, True]"}, {"pack_b", "[True]"}, {"threads", "[1]"},
    {"parallel_loop", "['none']"}};
  size_t pi;
  json_array_foreach(json_object_get(json_object_get(sj, "ConfigurationSpace"), "TuningParameters"), pi, tp)
    for (size_t v = 0; v < sizeof vals / sizeof *vals; v++)
      if (!strcmp(json_string_value(json_object_get(tp, "Name")), vals[v][0]))
        json_object_set_new(tp, "Values", json_string(vals[v][1]));
  assert_int_equal(json_dump_file(sj, slice, 0), 0);
  json_decref(sj);
  result r = run("tune", "--db", db, "--kernel", "gemm", "--set", "M=64,N=64,K=64", "--space", slice,
                 "--strategy", "exhaustive", "--budget", "100%", "--time-cap", "0.02", "--no-pin", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  assert_int_equal(db_int(db, "SELECT count(*) FROM trials"), 12);
  put_ceilings(db);
  const char *cfg = "{\"mc\":48,\"nc\":192,\"kc\":64,\"mr\":6,\"nr_vecs\":1,\"unroll_k\":4,"
                    "\"loop_order\":\"nkm\",\"macro_order\":\"mn\",\"pack_a\":true,\"pack_b\":true,"
                    "\"threads\":1,\"parallel_loop\":\"none\"}";
  /* predict: the JSON's fractions are work / time / ceiling */
  r = run("model", "predict", "--db", db, "--kernel", "gemm", "--set", "M=64,N=64,K=64",
          "--config", cfg, "--json", NULL);
  assert_int_equal(r.rc, 0);
  double t = json_num(r.out, "predicted_s", NULL);
  assert_true(t > 0);
  json_t *j = json_loads(r.out, 0, NULL), *b = json_object_get(j, "bounds");
  const char *levels[] = {"compute", "L1", "L2", "L3", "DRAM"};
  for (int i = 0; i < 5; i++) {
    json_t *x = json_object_get(b, levels[i]);
    double work = json_number_value(json_object_get(x, "work")),
           ceil_ = json_number_value(json_object_get(x, "ceiling")),
           frac = json_number_value(json_object_get(x, "fraction"));
    assert_true(fabs(frac - work / t / ceil_) <= 1e-5 * frac + 1e-12);
  }
  assert_true(json_number_value(json_object_get(json_object_get(b, "compute"), "work")) ==
              2.0 * 64 * 64 * 64);
  assert_true(fabs(json_num(r.out, "predicted_gflops", NULL) - 2.0 * 64 * 64 * 64 / t * 1e-9) <
              1e-5 * json_num(r.out, "predicted_gflops", NULL));
  json_decref(j);
  done(&r);
  /* explain: the same prediction, with the measurement of the schedule
  ** next to it (the fastest trial of the campaign) */
  r = run("db", "best", "--db", db, "--target", "host", "--kernel", "gemm", "--set", "M=64,N=64,K=64",
          "--json", NULL);
  assert_int_equal(r.rc, 0);
  j = json_loads(r.out, 0, NULL);
  json_t *row = json_array_get(j, 0);
  char *bc = json_dumps(json_object_get(row, "config"), JSON_COMPACT | JSON_PRESERVE_ORDER);
  double bt = json_number_value(json_object_get(row, "time_s"));
  json_decref(j);
  done(&r);
  assert_non_null(bc);
  r = run("model", "explain", "--db", db, "--kernel", "gemm", "--set", "M=64,N=64,K=64", "--config", bc,
          "--json", NULL);
  assert_int_equal(r.rc, 0);
  double mt = json_num(r.out, "measured", "time_s"), pt = json_num(r.out, "predicted_s", NULL);
  assert_true(fabs(mt - bt) <= 1e-5 * bt);
  assert_true(fabs(json_num(r.out, "measured", "model_error") - (pt / bt - 1)) < 1e-4);
  done(&r);
  r = run("model", "explain", "--db", db, "--kernel", "gemm", "--set", "M=64,N=64,K=64", "--config", bc, NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "<- limits"));
  assert_non_null(strstr(r.out, "measured   "));
  assert_non_null(strstr(r.out, "why        "));
  done(&r);
  free(bc);
  /* calibrate (two counted schedules), then history and accuracy */
  r = run("model", "calibrate", "--db", db, "--kernel", "gemm", "--set", "M=64,N=64,K=64",
          "--holdout", "0.3", "--counters", "2", "--json", NULL);
  assert_int_equal(r.rc, 0);
  assert_true(json_num(r.out, "version", NULL) == 1);
  j = json_loads(r.out, 0, NULL);
  json_t *fit = json_object_get(j, "fit");
  long long ntrain = json_integer_value(json_object_get(fit, "train")),
            ntest = json_integer_value(json_object_get(fit, "test"));
  assert_int_equal(ntrain + ntest, db_int(db, "SELECT count(DISTINCT config) FROM trials WHERE status = 'ok'"));
  assert_true(ntrain >= 2);
  json_decref(j);
  done(&r);
  assert_int_equal(db_int(db, "SELECT count(*) FROM models WHERE kernel = 'gemm'"), 1);
  r = run("model", "history", "--db", db, "--kernel", "gemm", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "gemm         1  "));
  done(&r);
  r = run("model", "accuracy", "--db", db, "--kernel", "gemm", "--json", NULL);
  assert_int_equal(r.rc, 0);
  j = json_loads(r.out, 0, NULL);
  json_t *w0 = json_array_get(json_object_get(j, "workloads"), 0);
  assert_true(json_number_value(json_object_get(json_object_get(w0, "calibrated"), "n")) ==
              (double)(ntest ? ntest : ntrain + ntest));
  json_decref(j);
  done(&r);
  /* --csv: one row per scored schedule, its measured time the fastest of
  ** its trials as the database holds them */
  char csv[80];
  snprintf(csv, sizeof csv, "/tmp/rooftune-model-%d.csv", (int)getpid());
  r = run("model", "accuracy", "--db", db, "--kernel", "gemm", "--all", "--csv", csv, NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  size_t n;
  char *text = read_all(csv, &n), *save = NULL, *l = strtok_r(text, "\n", &save);
  assert_string_equal(l, "workload,config,measured_s,predicted_defaults_s,predicted_calibrated_s,bound");
  int rows = 0;
  char fastest[400] = "";   /* the schedule with the least calibrated prediction */
  double fastest_t = INFINITY;
  while ((l = strtok_r(NULL, "\n", &save))) {
    char *cf = strstr(l, "\",\"{") + 3, *end = strstr(cf, "}\",") + 1, *num;
    double meas = strtod(end + 2, &num);
    strtod(num + 1, &num);                       /* predicted, defaults */
    double pcal = strtod(num + 1, NULL);         /* predicted, calibrated */
    char sql[600], unq[400];
    int k = 0;
    for (char *c = cf; c < end; c++) {   /* undouble the CSV quotes */
      if (c[0] == '"' && c[1] == '"') c++;
      unq[k++] = *c;
    }
    unq[k] = 0;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM trials WHERE status = 'ok' AND config = '%s' "
             "AND abs(time - %.9g) <= 1e-8 * time", unq, meas);
    assert_true(db_int(db, sql) >= 1);
    if (pcal < fastest_t) fastest_t = pcal, snprintf(fastest, sizeof fastest, "%s", unq);
    rows++;
  }
  assert_int_equal(rows, ntrain + ntest);
  assert_true(fastest[0]);
  free(text);
  unlink(csv);
  r = run("model", "accuracy", "--db", db, "--kernel", "gemm", "--all", "--json", NULL);
  assert_int_equal(r.rc, 0);
  j = json_loads(r.out, 0, NULL);
  w0 = json_array_get(json_object_get(j, "workloads"), 0);
  assert_true(json_number_value(json_object_get(json_object_get(w0, "defaults"), "n")) ==
              (double)(ntrain + ntest));
  json_decref(j);
  done(&r);
  /* predict uses the latest calibration unless told otherwise */
  r = run("model", "predict", "--db", db, "--kernel", "gemm", "--set", "M=64,N=64,K=64", "--config", cfg, NULL);
  double t_cal = strtod(r.out + strlen("predicted "), NULL);
  done(&r);
  r = run("model", "predict", "--db", db, "--kernel", "gemm", "--set", "M=64,N=64,K=64", "--config", cfg,
          "--defaults", NULL);
  double t_def = strtod(r.out + strlen("predicted "), NULL);
  done(&r);
  assert_true(fabs(t_def - t) <= 1e-5 * t);
  assert_true(t_cal != t_def);
  /* the model strategy replays the database's own measurements */
  r = run("replay", "--db", db, "--kernel", "gemm", "--set", "M=64,N=64,K=64", "--space", slice,
          "--strategy", "model", "--budget", "8", "--json", NULL);
  assert_int_equal(r.rc, 0);
  assert_true(json_num(r.out, "evaluations", NULL) == 8);
  done(&r);
  /* live: tune with the model strategy proposes the schedule the latest
  ** calibration predicts fastest first (measured before: reused) */
  r = run("tune", "--db", db, "--kernel", "gemm", "--set", "M=64,N=64,K=64", "--space", slice,
          "--strategy", "model", "--budget", "3", "--time-cap", "0.02", "--no-pin", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  char sql2[700];
  snprintf(sql2, sizeof sql2, "SELECT count(*) FROM trials WHERE id = (SELECT min(t.id) FROM trials t "
           "JOIN campaigns c ON c.id = t.campaign_id WHERE c.strategy = 'model') AND config = '%s'",
           fastest);
  assert_int_equal(db_int(db, sql2), 1);
  assert_int_equal(db_int(db, "SELECT count(*) FROM trials t JOIN campaigns c ON c.id = t.campaign_id "
                              "WHERE c.strategy = 'model'"), 3);
  /* a space file with other parameters is refused by tune */
  r = run("tune", "--db", db, "--kernel", "gemm", "--set", "N=1000", "--space",
          "targets/host/reduction.json", "--budget", "1", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "not a space of kernel gemm"));
  done(&r);
  /* every trial stored loaded (the load guard's verdict): calibrate has
  ** nothing to fit and says why, not "measure some first" */
  long long ok = db_int(db, "SELECT count(*) FROM trials t JOIN campaigns c ON c.id = t.campaign_id "
                            "WHERE t.status = 'ok' AND t.time > 0 AND c.workload_id = (SELECT "
                            "workload_id FROM campaigns WHERE strategy = 'model' LIMIT 1)");
  assert_true(ok >= 2);
  sqlite3 *h;
  assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
  assert_int_equal(sqlite3_exec(h, "UPDATE trials SET loaded = 1", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  r = run("model", "calibrate", "--db", db, "--kernel", "gemm", "--set", "M=64,N=64,K=64", NULL);
  assert_int_equal(r.rc, 1);
  char want[160];
  snprintf(want, sizeof want, "0 measured schedules of gemm on target host");
  assert_non_null(strstr(r.err, want));
  snprintf(want, sizeof want, "its other %lld verified trials were measured on a busy machine", ok);
  if (!strstr(r.err, want)) fail_msg("expected '%s' in: %s", want, r.err);
  done(&r);
  unlink(slice);
  rm_db(db);
}

/* model history --json stays JSON when a stored fit is not: calibrations
** written by hand before (a NaN figure printed as nan) come out as text. */
static void t1202_model_history_json(void **state) {
  (void)state;
  char db[64];
  snprintf(db, sizeof db, "/tmp/rooftune-model-h-%d.db", (int)getpid());
  rm_db(db);
  result r = run("db", "init", "--db", db, NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  static const char fp[] = "0123456789abcdef0123456789abcdef";
  static const char bad_fit[] = "{\"workloads\": [\"gemm f32 M=64\"], \"rms_log_before\": nan, \"accuracy\": []}";
  sqlite3 *h;
  assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
  char *sql = sqlite3_mprintf("INSERT INTO targets(name, fingerprint, description) VALUES ('host', %Q, '{}');"
                              "INSERT INTO models(target_id, kernel, version, coefs, fit) VALUES (1, 'gemm', 1, "
                              "'{\"eff_L1\": 0.5}', %Q);"
                              "INSERT INTO models(target_id, kernel, version, coefs, fit) VALUES (1, 'gemm', 2, "
                              "'{\"eff_L1\": 0.5}', '{\"schedules\": 3}');", fp, bad_fit);
  assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_free(sql);
  sqlite3_close(h);
  setenv("ROOFTUNE_TEST_HOST_FINGERPRINT", fp, 1);   /* this machine is the stored host */
  r = run("model", "history", "--db", db, "--kernel", "gemm", "--json", NULL);
  unsetenv("ROOFTUNE_TEST_HOST_FINGERPRINT");
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  if (!j) fail_msg("not JSON (%s): %s", je.text, r.out);
  assert_int_equal(json_array_size(j), 2);
  assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "fit")), bad_fit);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(json_array_get(j, 1), "fit"), "schedules")), 3);
  json_decref(j);
  done(&r);
  rm_db(db);
}

static void t1201_model_errors(void **state) {
  (void)state;
  char db[64];
  snprintf(db, sizeof db, "/tmp/rooftune-model-e-%d.db", (int)getpid());
  rm_db(db);
  /* an unknown kernel is a usage error, as in measure and tune (it was 1
  ** here), found before the database is made */
  result r = run("model", "predict", "--kernel", "nosuch", "--config", "default", "--db", db, NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "unknown kernel 'nosuch'"));
  assert_int_equal(access(db, F_OK), -1);
  done(&r);
  r = run("model", "calibrate", "--kernel", "gemm", "--holdout", "1.5", "--db", db, NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--holdout: expected a number in [0, 1), got '1.5'"));
  done(&r);
  r = run("model", "predict", "--kernel", "gemm", "--db", db, NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--config JSON is required"));
  done(&r);
  r = run("model", "nonsense", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
  /* 'all' on a recording without ceilings: every strategy but those that
  ** need a model */
  r = run("compare", "--t4", "data/t4/pnpoly_RTX_3090_T4.json.gz", "--space",
          "data/t1/pnpoly.json", "--strategies", "all", "--budget", "2", "--repeats", "1", NULL);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "\nbandit "));
  assert_null(strstr(r.out, "\nmodel "));
  done(&r);
  /* a strategy that needs a model, on a recording without ceilings */
  r = run("replay", "--t4", "data/t4/pnpoly_RTX_3090_T4.json.gz", "--space",
          "data/t1/pnpoly.json", "--strategy", "model", "--budget", "4", NULL);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "strategy model needs a cost model: a T4 recording carries no ceilings"));
  done(&r);
  rm_db(db);
}

/* ---- t13xx: experiment ---- */

/* The experiment table against the folders on disk (independently:
** experiments/NAME/run.sh and README.md exist for every listed name), and
** the usage errors of run. The runs themselves are tested per experiment
** (tests/test_exp_*.c). */
static void t1300_experiment_list_and_errors(void **state) {
  (void)state;
  result r = run("experiment", "list", "--json", NULL);
  assert_int_equal(r.rc, 0);
  json_error_t je;
  json_t *j = json_loads(r.out, 0, &je);
  assert_non_null(j);
  assert_int_equal(json_array_size(j), 10);   /* strategies ... vendor, backends, t1, scaling, load */
  for (size_t i = 0; i < json_array_size(j); i++) {
    const char *name = json_string_value(json_object_get(json_array_get(j, i), "name"));
    char path[256];
    snprintf(path, sizeof path, "experiments/%s/run.sh", name);
    assert_int_equal(access(path, R_OK) == 0,
                     json_is_true(json_object_get(json_array_get(j, i), "present")));
    snprintf(path, sizeof path, "experiments/%s/README.md", name);
    if (json_is_true(json_object_get(json_array_get(j, i), "present")) && access(path, R_OK))
      fail_msg("experiments/%s has run.sh but no README.md", name);
  }
  json_decref(j);
  done(&r);
  r = run("experiment", "run", "nonesuch", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "unknown experiment 'nonesuch'"));
  done(&r);
  r = run("experiment", "run", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "NAME is required"));
  done(&r);
  r = run("experiment", "frobnicate", NULL);
  assert_int_equal(r.rc, 2);
  done(&r);
}

/* ---- t14xx: no shell text, nothing destroyed (issue 16, items 1 and 2) ---- */

/* buf = dir/rel. */
static char *at(char *buf, size_t cap, const char *dir, const char *rel) {
  if (snprintf(buf, cap, "%s/%s", dir, rel) >= (int)cap) fail_msg("path too long: %s/%s", dir, rel);
  return buf;
}

static void put_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  assert_int_equal(fclose(f), 0);
}

static int exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

/* The test fails unless path holds exactly text. */
static void assert_text(const char *path, const char *text) {
  size_t n;
  char *got = read_all(path, &n);
  if (!got) fail_msg("%s is gone", path);
  if (strcmp(got, text)) fail_msg("%s changed: '%s' (was '%s')", path, got, text);
  free(got);
}

/* The test fails when dir holds a temporary output file (NAME.tmp-XXXXXX). */
static void assert_no_temporaries(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  for (struct dirent *de; (de = readdir(d));)
    if (strstr(de->d_name, ".tmp-")) fail_msg("%s/%s was left behind", dir, de->d_name);
  closedir(d);
}

/* r failed with exit code 1 and an error holding want. */
static void assert_refused(result *r, const char *want) {
  if (r->rc != 1 || !strstr(r->err, want))
    fail_msg("expected exit 1 and '%s', got exit %d: %s", want, r->rc, r->err);
  done(r);
}

/* `rooftune experiment run strategies --quick --out DIR [--force] -- --bogus`:
** the script stops at its option check (after lib.sh made commands.txt),
** so a run that got past the output folder fails with "strategies failed". */
static result exp_run(const char *dir, int force) {
  return force
      ? run("experiment", "run", "strategies", "--quick", "--out", dir, "--force", "--", "--bogus", NULL)
      : run("experiment", "run", "strategies", "--quick", "--out", dir, "--", "--bogus", NULL);
}

/* Quotes in --out ran shell commands (the folder was emptied by
** system() running rm -rf on DIR's contents): now a path the scripts
** cannot embed safely is refused before anything is made or removed. */
static void t1400_experiment_out_no_shell(void **state) {
  (void)state;
  char T[] = "/tmp/rooftune-t1400-XXXXXX", p[512], out[1024];
  assert_non_null(mkdtemp(T));
  assert_int_equal(mkdir(at(p, sizeof p, T, "x"), 0777), 0);
  assert_int_equal(mkdir(at(p, sizeof p, T, "x/victim"), 0777), 0);
  assert_int_equal(mkdir(at(p, sizeof p, T, "x/sib"), 0777), 0);
  put_text(at(p, sizeof p, T, "x/victim/keep"), "keep");
  put_text(at(p, sizeof p, T, "x/sib/keep2"), "keep2");
  snprintf(out, sizeof out, "%s/x/a'; touch %s/x/INJECTED; echo '", T, T);
  result r = exp_run(out, 0);
  assert_refused(&r, "holds the character '");
  assert_false(exists(at(p, sizeof p, T, "x/INJECTED")));
  assert_false(exists(at(p, sizeof p, T, "x/a")));
  snprintf(out, sizeof out, "%s/x/sib' '%s/x/victim", T, T);
  r = exp_run(out, 0);
  assert_refused(&r, "holds the character '");
  assert_text(at(p, sizeof p, T, "x/victim/keep"), "keep");
  assert_text(at(p, sizeof p, T, "x/sib/keep2"), "keep2");
  snprintf(out, sizeof out, "%s/x/new\nline", T);
  r = exp_run(out, 0);
  assert_refused(&r, "control character 0x0a");
  snprintf(out, sizeof out, "%s/x/$(touch %s/x/INJECTED)", T, T);
  r = exp_run(out, 0);
  assert_refused(&r, "holds the character $");
  assert_false(exists(at(p, sizeof p, T, "x/INJECTED")));
  assert_int_equal(tk_rm_rf(T), 0);
}

/* A folder rooftune did not make is refused (and with --force written
** into, nothing deleted, never stamped); a new or empty one is stamped; a
** stamped one is emptied, its links removed as links with their targets
** kept; a symbolic link as --out is refused. */
static void t1401_experiment_out_stamped_folders(void **state) {
  (void)state;
  char T[] = "/tmp/rooftune-t1401-XXXXXX", p[512], q[512], u[512], s[512];
  assert_non_null(mkdtemp(T));
  at(u, sizeof u, T, "u");
  assert_int_equal(mkdir(u, 0777), 0);
  put_text(at(p, sizeof p, u, "mine"), "mine");
  result r = exp_run(u, 0);
  assert_refused(&r, "exists, is not empty and was not made by rooftune experiment");
  assert_text(at(p, sizeof p, u, "mine"), "mine");
  assert_false(exists(at(p, sizeof p, u, "commands.txt")));   /* the script never ran */
  r = exp_run(u, 1);
  assert_non_null(strstr(r.err, "--force: writing into"));
  assert_refused(&r, "strategies failed");   /* the script ran, in the folder as it was */
  assert_text(at(p, sizeof p, u, "mine"), "mine");
  assert_true(exists(at(p, sizeof p, u, "commands.txt")));
  assert_false(exists(at(p, sizeof p, u, ".rooftune-experiment")));
  r = exp_run(u, 0);   /* so it is still not rooftune's */
  assert_refused(&r, "was not made by rooftune experiment");
  /* a new folder (and its parents) is made and stamped */
  at(s, sizeof s, T, "new/s");
  r = exp_run(s, 0);
  assert_refused(&r, "strategies failed");
  size_t n;
  char *stamp = read_all(at(p, sizeof p, s, ".rooftune-experiment"), &n);
  assert_non_null(stamp);
  assert_true(!strncmp(stamp, "rooftune experiment strategies\n", 31));
  free(stamp);
  /* run again into it: what is inside goes, links as links */
  assert_int_equal(mkdir(at(p, sizeof p, T, "outside"), 0777), 0);
  put_text(at(p, sizeof p, T, "outside/precious"), "precious");
  put_text(at(p, sizeof p, T, "outfile"), "outfile");
  put_text(at(p, sizeof p, s, "old.csv"), "old");
  put_text(at(p, sizeof p, s, ".hidden"), "hidden");
  assert_int_equal(mkdir(at(p, sizeof p, s, "sub"), 0777), 0);
  assert_int_equal(mkdir(at(p, sizeof p, s, "sub/deeper"), 0777), 0);
  put_text(at(p, sizeof p, s, "sub/deeper/f"), "f");
  assert_int_equal(symlink(at(q, sizeof q, T, "outside"), at(p, sizeof p, s, "linkdir")), 0);
  assert_int_equal(symlink(at(q, sizeof q, T, "outfile"), at(p, sizeof p, s, "linkfile")), 0);
  assert_int_equal(symlink(at(q, sizeof q, T, "outside"), at(p, sizeof p, s, "sub/deeper/l")), 0);
  r = exp_run(s, 0);
  assert_refused(&r, "strategies failed");
  static const char *const gone[] = {"old.csv", ".hidden", "sub", "linkdir", "linkfile"};
  for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
    if (exists(at(p, sizeof p, s, gone[i]))) fail_msg("%s was not removed", p);
  assert_true(exists(at(p, sizeof p, s, ".rooftune-experiment")));
  assert_text(at(p, sizeof p, T, "outside/precious"), "precious");
  assert_text(at(p, sizeof p, T, "outfile"), "outfile");
  /* an empty folder is taken and stamped */
  at(p, sizeof p, T, "empty");
  assert_int_equal(mkdir(p, 0777), 0);
  r = exp_run(p, 0);
  assert_refused(&r, "strategies failed");
  assert_true(exists(at(q, sizeof q, p, ".rooftune-experiment")));
  /* --out a link, even to a stamped folder: refused, the folder untouched */
  put_text(at(p, sizeof p, s, "kept"), "kept");
  assert_int_equal(symlink(s, at(q, sizeof q, T, "link")), 0);
  r = exp_run(q, 1);
  assert_refused(&r, "is a symbolic link");
  strcat(q, "/");   /* with a slash, too (which would resolve the link) */
  r = exp_run(q, 1);
  assert_refused(&r, "is a symbolic link");
  assert_text(at(p, sizeof p, s, "kept"), "kept");
  assert_int_equal(tk_rm_rf(T), 0);
}

/* $HOME, the folders holding it and those holding the working directory
** are refused even when they hold a stamp, --force or not. */
static void t1402_experiment_out_home_and_wd(void **state) {
  (void)state;
  char T[] = "/tmp/rooftune-t1402-XXXXXX", p[512], h[512], w[512];
  assert_non_null(mkdtemp(T));
  at(h, sizeof h, T, "home");
  at(w, sizeof w, T, "w");
  for (const char *d[] = {h, w}, **x = d; x < d + 2; x++) {
    assert_int_equal(mkdir(*x, 0777), 0);
    put_text(at(p, sizeof p, *x, ".rooftune-experiment"), "rooftune experiment strategies\n");
    put_text(at(p, sizeof p, *x, "mine"), "mine");
  }
  assert_int_equal(mkdir(at(p, sizeof p, w, "in"), 0777), 0);
  char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
  setenv("HOME", h, 1);
  result r = exp_run(h, 0);
  assert_refused(&r, "is your home folder ($HOME)");
  r = exp_run(h, 1);
  assert_refused(&r, "is your home folder ($HOME)");
  assert_int_equal(mkdir(at(p, sizeof p, h, "me"), 0777), 0);   /* $HOME one level down */
  setenv("HOME", p, 1);
  r = exp_run(h, 0);
  assert_refused(&r, "is a folder holding your home folder");
  if (home) setenv("HOME", home, 1);
  else unsetenv("HOME");
  free(home);
  assert_text(at(p, sizeof p, h, "mine"), "mine");
  run_cwd = at(p, sizeof p, w, "in");
  r = exp_run(w, 1);
  run_cwd = NULL;
  assert_refused(&r, "is a folder holding the working directory");
  run_cwd = w;
  r = exp_run(".", 0);
  run_cwd = NULL;
  assert_refused(&r, "is the working directory");
  assert_text(at(p, sizeof p, w, "mine"), "mine");
  assert_int_equal(tk_rm_rf(T), 0);
}

/* `/`, the project root and the folders above it: refused, --force or not
** (the tests run from the project root). */
static void t1403_experiment_out_root_and_project(void **state) {
  (void)state;
  char cwd[4096];
  assert_non_null(getcwd(cwd, sizeof cwd));
  assert_true(exists("experiments/lib.sh"));   /* the project root indeed */
  result r = exp_run("/", 1);
  assert_refused(&r, "/: is the root folder");
  r = exp_run(cwd, 1);
  assert_refused(&r, "is rooftune's project root");
  r = exp_run(".", 1);
  assert_refused(&r, "is rooftune's project root");
  r = exp_run("..", 1);
  assert_refused(&r, "is a folder holding rooftune's project root");
}

/* A database with a campaign of reduction N=100000 (target host), ceilings
** and a pin: what every output below reads. */
static void outputs_db(const char *db) {
  result r = run("tune", "--db", db, "--kernel", "reduction", "--set", "N=100000", "--strategy", "random",
                 "--budget", "4", "--seed", "5", "--time-cap", "0.02", "--no-pin", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  put_ceilings(db);
  r = run("db", "pin", "--db", db, "--target", "host", "--kernel", "reduction", "--set", "N=100000", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
}

/* The database at path passes db check and still holds trials trials. */
static void assert_db_intact(const char *path, long long trials) {
  result r = run("db", "check", "--db", path, NULL);
  if (r.rc || !strstr(r.out, "ok")) fail_msg("db check %s: exit %d: %s%s", path, r.rc, r.out, r.err);
  done(&r);
  assert_int_equal(db_int(path, "SELECT count(*) FROM trials"), trials);
}

static void copy_file(const char *from, const char *to) {
  size_t n;
  char *s = read_all(from, &n);
  assert_non_null(s);
  FILE *f = fopen(to, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(s, 1, n, f), n);
  assert_int_equal(fclose(f), 0);
  free(s);
}

/* Every output option naming the database (or a hard link to it, or the
** plot's script beside it) is refused with the database intact: these
** overwrote it and exited 0. */
static void t1410_outputs_never_the_database(void **state) {
  (void)state;
  char T[] = "/tmp/rooftune-t1410-XXXXXX", db[512], p[512], q[512];
  assert_non_null(mkdtemp(T));
  at(db, sizeof db, T, "t.db");
  outputs_db(db);
  long long n0 = db_int(db, "SELECT count(*) FROM trials");
  assert_true(n0 >= 1);
  const char *same = "is the same file as the input";
  result r = run("db", "export-header", "--db", db, "--target", "host", "--kernel", "reduction", "--out", db, NULL);
  assert_refused(&r, same);
  assert_db_intact(db, n0);
  assert_int_equal(link(db, at(p, sizeof p, T, "hard.h")), 0);
  r = run("db", "export-header", "--db", db, "--target", "host", "--kernel", "reduction", "--out", p, NULL);
  assert_refused(&r, same);
  assert_db_intact(db, n0);
  r = run("model", "roofline", "--db", db, "--campaign", "1", "-o", at(p, sizeof p, T, "p.png"), "--data", db,
          NULL);
  assert_refused(&r, same);
  assert_db_intact(db, n0);
  assert_false(exists(p));   /* no output at all when one is refused */
  assert_false(exists(at(p, sizeof p, T, "p.gp")));
  r = run("model", "accuracy", "--db", db, "--kernel", "reduction", "--set", "N=100000", "--csv", db, NULL);
  assert_refused(&r, same);
  assert_db_intact(db, n0);
  /* the plot, and its script beside it, as the database */
  copy_file(db, at(p, sizeof p, T, "d.png"));
  r = run("model", "roofline", "--db", p, "--campaign", "1", "-o", p, NULL);
  assert_refused(&r, same);
  assert_db_intact(p, n0);
  copy_file(db, at(p, sizeof p, T, "g.gp"));
  r = run("model", "roofline", "--db", p, "--campaign", "1", "-o", at(q, sizeof q, T, "g.png"), NULL);
  assert_refused(&r, same);
  assert_db_intact(p, n0);
  assert_false(exists(q));
  /* compare --csv DIR: DIR/curves.csv is the recording's database */
  assert_int_equal(mkdir(at(q, sizeof q, T, "c"), 0777), 0);
  at(p, sizeof p, T, "c/curves.csv");
  r = run("db", "import", "--db", p, "--t4", "data/t4/pnpoly_RTX_3090_T4.json.gz", "--space",
          "data/t1/pnpoly.json", "--target", "X", NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  r = run("compare", "--db", p, "--target", "X", "--kernel", "pnpoly", "--space", "data/t1/pnpoly.json",
          "--strategies", "random", "--budget", "5", "--repeats", "1", "--csv", q, NULL);
  assert_refused(&r, same);
  assert_db_intact(p, 4092);
  assert_false(exists(at(p, sizeof p, T, "c/scores.csv")));
  assert_no_temporaries(T);
  assert_no_temporaries(q);
  assert_int_equal(tk_rm_rf(T), 0);
}

/* A command that fails leaves its output files as they were (a failing
** gnuplot deleted the old plot and replaced its script); an output that is
** a symbolic link is refused, its target unchanged. */
static void t1411_outputs_failed_and_linked(void **state) {
  (void)state;
  char T[] = "/tmp/rooftune-t1411-XXXXXX", db[512], png[512], gp[512], csv[512], p[512], q[512];
  assert_non_null(mkdtemp(T));
  at(db, sizeof db, T, "t.db");
  outputs_db(db);
  at(png, sizeof png, T, "p.png");
  at(gp, sizeof gp, T, "p.gp");
  at(csv, sizeof csv, T, "p.csv");
  put_text(png, "old png");
  put_text(gp, "old gp");
  put_text(csv, "old csv");
  /* a gnuplot that fails, first on PATH */
  assert_int_equal(mkdir(at(p, sizeof p, T, "bin"), 0777), 0);
  put_text(at(p, sizeof p, T, "bin/gnuplot"), "#!/bin/sh\nexit 3\n");
  assert_int_equal(chmod(p, 0755), 0);
  char *path = strdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin"), newpath[8192];
  snprintf(newpath, sizeof newpath, "%s/bin:%s", T, path);
  setenv("PATH", newpath, 1);
  result r = run("model", "roofline", "--db", db, "--campaign", "1", "-o", png, "--data", csv, NULL);
  setenv("PATH", path, 1);
  free(path);
  assert_refused(&r, "gnuplot failed");
  assert_text(png, "old png");
  assert_text(gp, "old gp");
  assert_text(csv, "old csv");
  /* a header that cannot be made */
  put_text(at(p, sizeof p, T, "h.h"), "old h");
  r = run("db", "export-header", "--db", db, "--target", "host", "--kernel", "nosuch", "--out", p, NULL);
  assert_int_equal(r.rc, 1);
  done(&r);
  assert_text(p, "old h");
  /* links */
  put_text(at(q, sizeof q, T, "precious"), "precious");
  assert_int_equal(symlink(q, at(p, sizeof p, T, "l.h")), 0);
  r = run("db", "export-header", "--db", db, "--target", "host", "--kernel", "reduction", "--out", p, NULL);
  assert_refused(&r, "is a symbolic link");
  assert_int_equal(symlink(q, at(p, sizeof p, T, "l.png")), 0);
  r = run("model", "roofline", "--db", db, "--campaign", "1", "-o", p, NULL);
  assert_refused(&r, "is a symbolic link");
  assert_int_equal(symlink(q, at(p, sizeof p, T, "l.csv")), 0);
  r = run("model", "accuracy", "--db", db, "--kernel", "reduction", "--set", "N=100000", "--csv", p, NULL);
  assert_refused(&r, "is a symbolic link");
  assert_text(q, "precious");
  assert_db_intact(db, db_int(db, "SELECT count(*) FROM trials"));
  /* and the same outputs, written for real, replace the old files whole */
  r = run("model", "roofline", "--db", db, "--campaign", "1", "-o", png, "--data", csv, NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  size_t n;
  char *text = read_all(png, &n);
  assert_true(n > 1000 && !memcmp(text, "\x89PNG\r\n\x1a\n", 8));
  free(text);
  text = read_all(csv, &n);
  assert_true(!strncmp(text, "trial,campaign,", 15));
  free(text);
  assert_no_temporaries(T);
  assert_int_equal(tk_rm_rf(T), 0);
}

/* No shell through gnuplot (a double-quoted string ran `backquotes`; an
** output named |cmd was a pipe to sh) or through $CC (run as shell text to
** read the compiler's version). */
static void t1412_no_shell_through_gnuplot_or_cc(void **state) {
  (void)state;
  char T[] = "/tmp/rooftune-t1412-XXXXXX", db[512], p[512], title[600], inj[512];
  assert_non_null(mkdtemp(T));
  at(db, sizeof db, T, "t.db");
  outputs_db(db);
  snprintf(title, sizeof title, "a`touch %s/INJ1`b 'q'", T);
  result r = run("model", "roofline", "--db", db, "--campaign", "1", "-o", at(p, sizeof p, T, "t.svg"),
                 "--title", title, NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  assert_false(exists(at(inj, sizeof inj, T, "INJ1")));
  size_t n;
  char *svg = read_all(p, &n);
  assert_non_null(strstr(svg, "a`touch "));   /* the title as given, quotes and all */
  assert_non_null(strstr(svg, "INJ1`b 'q'"));
  free(svg);
  r = run("model", "roofline", "--db", db, "--campaign", "1", "-o", at(p, sizeof p, T, "|touch INJ2;.svg"), NULL);
  assert_int_equal(r.rc, 0);
  done(&r);
  assert_false(exists(at(inj, sizeof inj, T, "INJ2")));
  assert_true(exists(p));   /* the file the user named, odd as it is */
  char *gpt = read_all(at(p, sizeof p, T, "|touch INJ2;.gp"), &n);
  assert_non_null(gpt);
  assert_non_null(strstr(gpt, "set output './|touch INJ2;.svg'"));
  free(gpt);
  char *cc = getenv("CC") ? strdup(getenv("CC")) : NULL, bad[600];
  snprintf(bad, sizeof bad, "cc --version; touch %s/INJ3 #", T);
  setenv("CC", bad, 1);
  r = run("targets", NULL);
  if (cc) setenv("CC", cc, 1);
  else unsetenv("CC");
  free(cc);
  assert_int_equal(r.rc, 0);
  done(&r);
  assert_false(exists(at(inj, sizeof inj, T, "INJ3")));
  assert_int_equal(tk_rm_rf(T), 0);
}

/* ---- t15xx: the command line as a whole: option tables, help, exit codes ---- */

/* A command or subcommand as `rooftune --help` and the groups' --help
** list them: "tune", "db pin". */
typedef struct leaf {
  char cmd[32], sub[32];
} leaf;

/* The commands `rooftune --help` lists (lines "  NAME  summary" before
** "Run 'rooftune"), and the text of each command's entry (its summary
** with continuation lines). */
static int top_commands(char names[][32], char entries[][512], int max) {
  result r = run("--help", NULL);
  assert_int_equal(r.rc, 0);
  int n = 0;
  const char *p = strstr(r.out, "commands:\n");
  assert_non_null(p);
  for (p = strchr(p, '\n') + 1; *p && strncmp(p, "\nRun", 4) && n < max;) {
    const char *nl = strchr(p, '\n');
    if (!nl) break;
    if (p[0] == ' ' && p[1] == ' ' && p[2] != ' ') {
      sscanf(p + 2, "%31s", names[n]);
      snprintf(entries[n], 512, "%.*s", (int)(nl - p), p);
      n++;
    } else if (n && p[0] == ' ') {   /* a continuation of the entry above */
      size_t len = strlen(entries[n - 1]);
      snprintf(entries[n - 1] + len, 512 - len, " %.*s", (int)(nl - p), p);
    }
    p = nl + 1;
  }
  done(&r);
  return n;
}

/* Every command and subcommand, from the program's own lists; the groups
** (commands whose --help lists subcommands) are checked to be named in full
** by `rooftune --help`. */
static int all_leaves(leaf *out, int max) {
  char names[64][32], entries[64][512];
  int nc = top_commands(names, entries, 64), n = 0;
  for (int i = 0; i < nc; i++) {
    result r = run(names[i], "--help", NULL);
    if (r.rc != 0) fail_msg("rooftune %s --help: exit %d: %s", names[i], r.rc, r.err);
    const char *subs = strstr(r.out, "\nsubcommands:\n");
    if (!subs) {
      snprintf(out[n].cmd, sizeof out[n].cmd, "%.31s", names[i]);
      out[n++].sub[0] = 0;
    }
    for (const char *p = subs ? strchr(subs + 1, '\n') + 1 : NULL; p && p[0] == ' ' && n < max;) {
      snprintf(out[n].cmd, sizeof out[n].cmd, "%.31s", names[i]);
      sscanf(p, "%31s", out[n].sub);
      /* rooftune --help names it after the group's summary */
      char word[40];
      snprintf(word, sizeof word, " %s", out[n].sub);
      const char *at = strstr(entries[i], word);
      if (!at || (at[strlen(word)] != ',' && at[strlen(word)] != 0))
        fail_msg("rooftune --help does not name %s's subcommand %s:\n%s", names[i], out[n].sub, entries[i]);
      n++;
      p = strchr(p, '\n') + 1;
    }
    done(&r);
  }
  return n;
}

static result run_leaf(const leaf *l, const char *a, const char *b) {
  return l->sub[0] ? run(l->cmd, l->sub, a, b, NULL) : run(l->cmd, a, b, NULL);
}

/* Whether help lists option `name` ("json", or "n" for a short one) as a row. */
static int help_lists(const char *help, const char *name) {
  char a[64], b[64];
  if (strlen(name) == 1) {
    snprintf(a, sizeof a, "\n  -%s ", name);
    snprintf(b, sizeof b, "\n  -%s, ", name);
    return strstr(help, a) || strstr(help, b);
  }
  snprintf(a, sizeof a, "\n  --%s", name);
  snprintf(b, sizeof b, ", --%s", name);
  for (const char *pat[] = {a, b}, **q = pat; q < pat + 2; q++)
    for (const char *t = help; (t = strstr(t, *q)); t++) {
      char c = t[strlen(*q)];
      if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9') && c != '-') return 1;
    }
  return 0;
}

/* The option rows of a help text: long names, or the letter of a short
** one ("n"), without help itself. */
static int help_options(const char *help, char names[][32], int max) {
  int n = 0;
  const char *p = strstr(help, "\n\n");   /* after the usage line(s) */
  for (p = p ? p : help; (p = strstr(p, "\n  -")) && n < max; p++) {
    const char *t = p + 3;   /* "--out", "-o, --out" or "-n N" */
    if (t[1] != '-' && t[2] == ',') t += 6;
    else if (t[1] == '-') t += 2;
    else t += 1;
    size_t len = t[-1] == '-' && t[-2] != '-' ? 1 : strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789-");
    if (!len || (len == 4 && !strncmp(t, "help", 4)) || (len == 1 && *t == 'h')) continue;
    snprintf(names[n++], 32, "%.*s", (int)len, t);
  }
  return n;
}

/* Every command and subcommand: -h and --help print its usage and exit 0;
** an unknown option exits 2 with the usage, and a mistyped one is named
** in a "did you mean"; every option its usage line names is one its help
** lists. */
static void t1500_every_command_help_and_usage(void **state) {
  (void)state;
  leaf l[128];
  int n = all_leaves(l, 128);
  assert_true(n >= 35);   /* 13 commands, 8 + 14 + 6 + 2 subcommands in 4 groups */
  for (int i = 0; i < n; i++) {
    char name[80], usage[96], who[96];
    snprintf(name, sizeof name, "%s%s%s", l[i].cmd, l[i].sub[0] ? " " : "", l[i].sub);
    snprintf(usage, sizeof usage, "usage: rooftune %s", name);
    snprintf(who, sizeof who, "rooftune %s: ", name);
    for (const char *h[] = {"-h", "--help"}, **q = h; q < h + 2; q++) {
      result r = run_leaf(&l[i], *q, NULL);
      if (r.rc != 0 || strncmp(r.out, usage, strlen(usage)))
        fail_msg("rooftune %s %s: exit %d, stdout:\n%s\nstderr:\n%s", name, *q, r.rc, r.out, r.err);
      done(&r);
    }
    result h = run_leaf(&l[i], "--help", NULL);
    /* the usage line(s) name only options the help lists */
    char *end = strstr(h.out, "\n\n");
    if (end) *end = 0;
    char *uline = strdup(h.out);
    if (end) *end = '\n';
    for (const char *t = uline; (t = strstr(t, "--")); t += 2) {
      size_t len = strspn(t + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
      if (!len) continue;
      char opt[32];
      snprintf(opt, sizeof opt, "%.*s", (int)len, t + 2);
      if (!help_lists(h.out, opt)) fail_msg("rooftune %s: its usage names --%s, which its help does not list:\n%s",
                                           name, opt, h.out);
    }
    free(uline);
    /* an unknown option; a mistyped one of its own */
    result r = run_leaf(&l[i], "--frobnicate", NULL);
    if (r.rc != 2 || !strstr(r.err, who) || !strstr(r.err, "unknown option --frobnicate") || !strstr(r.err, usage))
      fail_msg("rooftune %s --frobnicate: exit %d: %s", name, r.rc, r.err);
    done(&r);
    char opts[64][32];
    int no = help_options(h.out, opts, 64);
    for (int k = 0; k < no; k++) {
      if (strlen(opts[k]) < 4) continue;   /* too short to mistype by one letter */
      char typo[40], want[128];
      snprintf(typo, sizeof typo, "--%sx", opts[k]);
      snprintf(want, sizeof want, "unknown option %s; did you mean --%s?", typo, opts[k]);
      r = run_leaf(&l[i], typo, NULL);
      if (r.rc != 2 || !strstr(r.err, want)) fail_msg("rooftune %s %s: exit %d: %s", name, typo, r.rc, r.err);
      done(&r);
      break;   /* one per command is enough: the table's rows all go through one parser */
    }
    done(&h);
  }
  /* unknown commands and subcommands: "did you mean" */
  result r = run("tuen", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "unknown command 'tuen'; did you mean 'tune'?"));
  done(&r);
  r = run("db", "pni", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "unknown subcommand 'pni'; did you mean 'pin'?"));
  done(&r);
  r = run("model", "calibrat", NULL);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "did you mean 'calibrate'?"));
  done(&r);
}

/* One mistake, every command that can make it: the same exit code and the
** same shape of message ("rooftune CMD: ..." then its usage for a usage
** error). The classes are the README's "The command line". */
typedef struct mistake {
  const char *argv[16];
} mistake;

static void expect_all(const mistake *m, size_t n, int rc, const char *msg, const char *msg2, int usage) {
  for (size_t i = 0; i < n; i++) {
    const char *const *a = m[i].argv;
    result r = run(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
                   a[14], NULL);
    char who[64], use[80];
    int grp = !strcmp(a[0], "db") || !strcmp(a[0], "model") || !strcmp(a[0], "space");
    snprintf(who, sizeof who, "rooftune %s%s%s: ", a[0], grp ? " " : "", grp ? a[1] : "");
    snprintf(use, sizeof use, "\nusage: rooftune %s%s%s ", a[0], grp ? " " : "", grp ? a[1] : "");
    if (r.rc != rc || strncmp(r.err, who, strlen(who)) || !strstr(r.err, msg) || (msg2 && !strstr(r.err, msg2)) ||
        !!strstr(r.err, use) != usage)
      fail_msg("rooftune %s %s %s ...: exit %d (want %d), stderr:\n%s\nwant: %s%s%s%s", a[0], a[1], a[2], r.rc, rc,
               r.err, who, msg, msg2 ? " ... " : "", msg2 ? msg2 : "");
    done(&r);
  }
}

static void t1501_same_mistake_same_exit_code(void **state) {
  (void)state;
  char db[64];
  snprintf(db, sizeof db, "/tmp/rooftune-t1501-%d.db", (int)getpid());
  rm_db(db);
  const char *t4 = T4 "pnpoly_RTX_3090_T4.json.gz", *gemm = "targets/host/gemm.json";
  /* an unknown kernel: 2, "did you mean", nothing opened */
  const mistake kernel[] = {
    {{"tune", "--kernel", "gem", "--db", db}},
    {{"measure", "--kernel", "gem", "--config", "default"}},
    {{"baseline", "--kernel", "gem"}},
    {{"model", "predict", "--kernel", "gem", "--config", "default", "--db", db}},
    {{"model", "explain", "--kernel", "gem", "--config", "default", "--db", db}},
    {{"model", "calibrate", "--kernel", "gem", "--db", db}},
    {{"model", "accuracy", "--kernel", "gem", "--db", db}},
    {{"compare", "--target", "host", "--kernel", "gem", "--strategies", "random", "--db", db}},
  };
  expect_all(kernel, sizeof kernel / sizeof *kernel, 2, "unknown kernel 'gem'", "did you mean 'gemm'?", 1);
  /* an unknown target: 2 */
  const mistake target[] = {
    {{"tune", "--target", "hots", "--kernel", "gemm", "--db", db}},
    {{"measure", "--target", "hots", "--kernel", "gemm", "--config", "default"}},
    {{"baseline", "--target", "hots", "--kernel", "gemm"}},
    {{"kernels", "--target", "hots"}},
    {{"bench", "--target", "hots", "--db", db}},
    {{"model", "predict", "--target", "hots", "--kernel", "gemm", "--config", "default", "--db", db}},
  };
  expect_all(target, sizeof target / sizeof *target, 2, "unknown target 'hots'", "did you mean 'host'?", 1);
  /* an unknown strategy: 2 */
  const mistake strategy[] = {
    {{"tune", "--kernel", "gemm", "--strategy", "bandt", "--db", db}},
    {{"replay", "--t4", t4, "--strategy", "bandt"}},
    {{"compare", "--t4", t4, "--strategies", "random,bandt"}},
  };
  expect_all(strategy, sizeof strategy / sizeof *strategy, 2, "unknown strategy 'bandt'", "did you mean 'bandit'?", 1);
  /* --set that is not VAR=VALUE,...: 2, before anything is read */
  const mistake set_syntax[] = {
    {{"space", "count", gemm, "--set", "M="}},
    {{"measure", "--kernel", "gemm", "--set", "M=", "--config", "default"}},
    {{"baseline", "--kernel", "gemm", "--set", "M="}},
    {{"tune", "--kernel", "gemm", "--set", "M=", "--db", db}},
    {{"replay", "--t4", t4, "--set", "M=", "--strategy", "random"}},
    {{"compare", "--t4", t4, "--set", "M=", "--strategies", "random"}},
    {{"db", "import", "--t4", t4, "--target", "x", "--kernel", "k", "--set", "M=", "--db", db}},
    {{"db", "best", "--target", "x", "--kernel", "k", "--set", "M=", "--db", db}},
    {{"db", "lookup", "--target", "x", "--kernel", "k", "--set", "M=", "--db", db}},
    {{"model", "predict", "--kernel", "gemm", "--set", "M=", "--config", "default", "--db", db}},
    {{"model", "calibrate", "--kernel", "gemm", "--set", "M=", "--db", db}},
    {{"model", "roofline", "--kernel", "gemm", "--set", "M=", "-o", "/tmp/never.png", "--db", db}},
  };
  expect_all(set_syntax, sizeof set_syntax / sizeof *set_syntax, 2, "--set: M=: ", NULL, 1);
  /* a budget that is neither N >= 1 nor 0 < P% <= 100: 2 */
  const mistake budget[] = {
    {{"tune", "--kernel", "gemm", "--budget", "0", "--db", db}},
    {{"replay", "--t4", t4, "--strategy", "random", "--budget", "0"}},
    {{"compare", "--t4", t4, "--strategies", "random", "--budget", "101%"}},
  };
  expect_all(budget, sizeof budget / sizeof *budget, 2, "--budget: expected N evaluations", NULL, 1);
  assert_int_equal(access(db, F_OK), -1);   /* no usage error opened the database */
  /* a --set value the space refuses (a float for an int variable): 1, the
  ** space's own message, when the space is loaded */
  const mistake set_type[] = {
    {{"space", "count", gemm, "--set", "M=1.5,N=64,K=64"}},
    {{"measure", "--kernel", "gemm", "--set", "M=1.5,N=64,K=64", "--config", "default"}},
    {{"baseline", "--kernel", "gemm", "--set", "M=1.5,N=64,K=64"}},
    {{"tune", "--kernel", "gemm", "--set", "M=1.5,N=64,K=64", "--db", db}},
    {{"model", "predict", "--kernel", "gemm", "--set", "M=1.5,N=64,K=64", "--config", "default", "--db", db}},
    {{"compare", "--target", "host", "--kernel", "gemm", "--set", "M=1.5,N=64,K=64", "--strategies", "random",
      "--db", db}},
  };
  expect_all(set_type, sizeof set_type / sizeof *set_type, 1,
             "problem variable 'M' is float 1.5, but its Type is int (from --set)", NULL, 0);
  /* a configuration that is not JSON: 1, read against the space */
  const mistake config[] = {
    {{"space", "check", gemm, "{bad", "--set", "M=64,N=64,K=64"}},
    {{"measure", "--kernel", "gemm", "--set", "M=64,N=64,K=64", "--config", "{bad"}},
    {{"model", "predict", "--kernel", "gemm", "--set", "M=64,N=64,K=64", "--config", "{bad", "--db", db}},
    {{"model", "explain", "--kernel", "gemm", "--set", "M=64,N=64,K=64", "--config", "{bad", "--db", db}},
  };
  expect_all(config, sizeof config / sizeof *config, 1, "configuration: JSON syntax error at line 1 column 4", NULL, 0);
  rm_db(db);
}

/* The README documents every option of every command in that command's
** section, and every synopsis it shows (a code line or a table row
** starting with the command) names only options the command accepts. */
static const struct { const char *cmd, *heading; } readme_sections[] = {
  {"space", "### `rooftune space`"},
  {"targets", "### Targets, kernels and measuring one schedule"},
  {"kernels", "### Targets, kernels and measuring one schedule"},
  {"measure", "### Targets, kernels and measuring one schedule"},
  {"baseline", "### Targets, kernels and measuring one schedule"},
  {"tune", "### `rooftune tune`"},
  {"replay", "### `rooftune replay` and `rooftune compare`"},
  {"compare", "### `rooftune replay` and `rooftune compare`"},
  {"bench", "### `rooftune bench` and `rooftune model`"},
  {"model", "### `rooftune bench` and `rooftune model`"},
  {"experiment", "### `rooftune experiment`"},
  {"db", "### `rooftune db`"},
};

/* The README's section of cmd (from its heading to the next "## " or
** "### "); malloc'd, or NULL when it has none. */
static char *readme_section(const char *readme, const char *cmd) {
  for (size_t i = 0; i < sizeof readme_sections / sizeof *readme_sections; i++) {
    if (strcmp(readme_sections[i].cmd, cmd)) continue;
    const char *a = strstr(readme, readme_sections[i].heading);
    if (!a) fail_msg("README.md has no heading %s", readme_sections[i].heading);
    const char *b = a + 4, *h3 = strstr(b, "\n### "), *h2 = strstr(b, "\n## ");
    b = h3 && (!h2 || h3 < h2) ? h3 : h2 ? h2 : a + strlen(a);
    return strndup(a, (size_t)(b - a));
  }
  return NULL;
}

/* Whether text holds option text opt ("--json", "-n") as a whole word. */
static int mentions(const char *text, const char *opt) {
  for (const char *t = text; (t = strstr(t, opt)); t++) {
    char before = t > text ? t[-1] : ' ', after = t[strlen(opt)];
    if (before != '-' && !(after >= 'a' && after <= 'z') && !(after >= '0' && after <= '9') && after != '-')
      return 1;
  }
  return 0;
}

static void t1502_readme_documents_the_options(void **state) {
  (void)state;
  size_t len;
  char *readme = tk_gunzip("README.md", &len);
  assert_non_null(readme);
  leaf l[128];
  int n = all_leaves(l, 128);
  char *helps[128];
  for (int i = 0; i < n; i++) {
    result h = run_leaf(&l[i], "--help", NULL);
    helps[i] = h.out;
    free(h.err);
    char *sec = readme_section(readme, l[i].cmd);
    if (!sec) continue;   /* version: no options */
    char opts[64][32];
    int no = help_options(h.out, opts, 64);
    for (int k = 0; k < no; k++) {
      char opt[40];
      snprintf(opt, sizeof opt, "%s%s", strlen(opts[k]) == 1 ? "-" : "--", opts[k]);
      if (!mentions(sec, opt))
        fail_msg("README.md's section of %s does not document %s %s's option %s", l[i].cmd, l[i].cmd, l[i].sub, opt);
    }
    free(sec);
  }
  /* the synopses: lines starting "rooftune CMD" or "build/rooftune CMD" in
  ** code blocks (with their indented continuation lines), and table rows
  ** starting "| `CMD ..." or "| `rooftune CMD ..." */
  int checked = 0;
  for (char *line = readme; line && *line;) {
    char *nl = strchr(line, '\n');
    size_t ll = nl ? (size_t)(nl - line) : strlen(line);
    char *text = strndup(line, ll);
    const char *t = text;
    if (!strncmp(t, "$ ", 2)) t += 2;
    if (!strncmp(t, "build/", 6)) t += 6;
    int table = !strncmp(t, "| `", 3);
    if (table) t += 3;
    if (!strncmp(t, "rooftune ", 9)) t += 9;
    else if (!table) t = NULL;
    if (t && !table)   /* a code line's continuation lines */
      for (char *c = nl; c && c[1] == ' '; c = strchr(c + 1, '\n')) {
        char *cn = strchr(c + 1, '\n');
        size_t cl = cn ? (size_t)(cn - c) : strlen(c);
        size_t off = (size_t)(t - text), tl = strlen(text);
        text = realloc(text, tl + cl + 1);
        memcpy(text + tl, c, cl);
        text[tl + cl] = 0;
        t = text + off;
        nl = cn;
      }
    char cmd[32] = "", sub[64] = "";
    if (t) sscanf(t, "%31s %63s", cmd, sub);
    if (table) {   /* "| `db import ...` |": the row's first cell only */
      char *close = strchr((char *)t, '`');
      if (close) *close = 0;
    }
    char *rest = t ? strstr((char *)t, " -- ") : NULL;   /* what follows goes to a script */
    if (rest) *rest = 0;
    for (int i = 0; t && i < n; i++) {
      if (strcmp(l[i].cmd, cmd)) continue;
      if (l[i].sub[0]) {   /* "predict|explain" names two */
        char subs[64];
        snprintf(subs, sizeof subs, "|%.60s|", sub);
        char want[40];
        snprintf(want, sizeof want, "|%s|", l[i].sub);
        if (!strstr(subs, want)) continue;
      }
      for (const char *o = t; (o = strstr(o, "--")); o += 2) {
        size_t len2 = strspn(o + 2, "abcdefghijklmnopqrstuvwxyz0123456789-");
        if (!len2) continue;
        char opt[32];
        snprintf(opt, sizeof opt, "%.*s", (int)len2, o + 2);
        if (!help_lists(helps[i], opt))
          fail_msg("README.md shows `%s` with --%s, which rooftune %s %s does not take:\n%s", cmd, opt, l[i].cmd,
                   l[i].sub, text);
      }
      checked++;
    }
    free(text);
    line = nl ? nl + 1 : NULL;
  }
  assert_true(checked >= 40);
  for (int i = 0; i < n; i++) free(helps[i]);
  free(readme);
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], rooftune, sizeof rooftune)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(t100_version_and_help),
    cmocka_unit_test(t1300_experiment_list_and_errors),
    cmocka_unit_test(t101_space_help_every_level),
    cmocka_unit_test(t200_count_shared),
    cmocka_unit_test(t201_count_exact_big),
    cmocka_unit_test(t202_count_errors),
    cmocka_unit_test(t300_enum),
    cmocka_unit_test(t400_sample),
    cmocka_unit_test(t500_check_rank_unrank),
    cmocka_unit_test(t501_neighbours),
    cmocka_unit_test(t600_info_json),
    cmocka_unit_test(t601_problem_variables),
    cmocka_unit_test(t700_targets_and_kernels),
    cmocka_unit_test(t701_measure),
    cmocka_unit_test(t702_baseline),
    cmocka_unit_test(t800_db),
    cmocka_unit_test(t801_db_pins),
    cmocka_unit_test(t802_db_lookup_and_header),
    cmocka_unit_test(t900_replay),
    cmocka_unit_test(t901_compare),
    cmocka_unit_test(t902_tune_stop_kill_resume_reuse),
    cmocka_unit_test(t903_tune_usage),
    cmocka_unit_test(t904_compare_live),
    cmocka_unit_test(t905_replay_t4_without_space),
    cmocka_unit_test(t1000_bench_stores_and_reuses),
    cmocka_unit_test(t1001_bench_usage),
    cmocka_unit_test(t1100_model_roofline),
    cmocka_unit_test(t1101_model_roofline_usage),
    cmocka_unit_test(t1200_model_commands),
    cmocka_unit_test(t1201_model_errors),
    cmocka_unit_test(t1202_model_history_json),
    cmocka_unit_test(t1400_experiment_out_no_shell),
    cmocka_unit_test(t1401_experiment_out_stamped_folders),
    cmocka_unit_test(t1402_experiment_out_home_and_wd),
    cmocka_unit_test(t1403_experiment_out_root_and_project),
    cmocka_unit_test(t1410_outputs_never_the_database),
    cmocka_unit_test(t1411_outputs_failed_and_linked),
    cmocka_unit_test(t1412_no_shell_through_gnuplot_or_cc),
    cmocka_unit_test(t1500_every_command_help_and_usage),
    cmocka_unit_test(t1501_same_mistake_same_exit_code),
    cmocka_unit_test(t1502_readme_documents_the_options),
  };
  return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
