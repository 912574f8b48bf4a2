/*
** test_anyhost.c -- commands on recorded data do not depend on the machine
** that runs them. On copies of the recorded database
** experiments/cost_model/results/cost_model.db (one target: host,
** fingerprint 34f2c7239ccb..., measured on another VM), model accuracy,
** explain, predict, history, calibrate and roofline, replay --db and
** compare --db give the same output -- byte for byte, leaving out only the
** framework's own timings -- run as this machine, as another machine
** (ROOFTUNE_TEST_HOST_FINGERPRINT, test-only, forced to a value no machine
** has) and as the recording machine itself (forced to the recorded
** fingerprint). With a second target holding trials of the same kernel:
** an error listing both with their trial counts (counted here with SQL),
** --fingerprint choosing one (then the same output as on the one-target
** database), a prefix matching both or none refused, --set narrowing to the
** one target holding that workload, and the ceilings of a target that is
** not this machine never measured here. Imported T4 results (fingerprint
** "external") replay from the database as from the file.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tk_exe.h"
#include "tk_exp.h"

/* Only ever copied (cp): even a read-only SQLite connection would leave its
** WAL files beside the committed file. */
#define RECORDED "experiments/cost_model/results/cost_model.db"
#define RECORDED_FP "34f2c7239ccbcf6b0cca94b1499b3252"
#define SECOND_FP "34f2ffff00000000000000000000beef"   /* shares "34f2" with it */

static char rooftune[4096], dir[64], db[128], db2[128], csvdir[128];

typedef tk_result result;

/* rooftune argv[] (NULL-terminated) as host host_fp (NULL: this machine). */
static result run(const char *host_fp, const char *const *args) {
  const char *argv[64] = {rooftune};
  int argc = 1;
  for (int i = 0; args[i] && argc < 63; i++) argv[argc++] = args[i];
  argv[argc] = NULL;
  char set[128];
  snprintf(set, sizeof set, "ROOFTUNE_TEST_HOST_FINGERPRINT=%s", host_fp ? host_fp : "");
  const char *env[] = {host_fp ? set : "ROOFTUNE_TEST_HOST_FINGERPRINT", NULL};
  return tk_capture(argv, NULL, env);
}

static void done(result *r) { tk_result_free(r); }

/* Copy a file byte for byte (the test's own copies; no shell). */
static void copy_file(const char *from, const char *to) {
  FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
  if (!in || !out) fail_msg("copy %s -> %s: cannot open", from, to);
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, in)) > 0;)
    if (fwrite(buf, 1, n, out) != n) fail_msg("copy %s -> %s: write failed", from, to);
  fclose(in);
  if (fclose(out)) fail_msg("copy %s -> %s: write failed", from, to);
}

/* Run SQL on a database file through SQLite (no shell, no sqlite3 program). */
static void sql_exec(const char *path, const char *sql) {
  sqlite3 *h;
  char *msg = NULL;
  if (sqlite3_open(path, &h) != SQLITE_OK || sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
    fail_msg("%s: %s", path, msg ? msg : sqlite3_errmsg(h));
  sqlite3_close(h);
}

static long long sql_int(const char *path, const char *sql) {
  sqlite3 *h;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  long long v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

static char *sql_text(const char *path, const char *sql) {
  sqlite3 *h;
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
  assert_int_equal(sqlite3_step(st), SQLITE_ROW);
  char *v = strdup((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(h);
  return v;
}

/* A fresh copy of the recorded database at db (the same path every time:
** outputs that name the file compare equal). */
static void fresh_copy(void) {
  static const char *const side[] = {"", "-wal", "-shm", "-journal"};
  for (int i = 0; i < 4; i++) {
    char p[600];
    snprintf(p, sizeof p, "%s%s", db, side[i]);
    unlink(p);
  }
  copy_file(RECORDED, db);
}

/* ---- The recorded-data commands, their output made comparable ---- */

/* JSON text without the key "framework_ms_per_eval" (a timing). */
static char *without_timing(const char *text) {
  json_error_t je;
  json_t *j = json_loads(text, 0, &je);
  if (!j) fail_msg("not JSON: %s (%.200s)", je.text, text);
  json_object_del(j, "framework_ms_per_eval");
  char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(j);
  return s;
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* A CSV file's text, each line cut to its first ncols fields (0: whole). */
static char *csv_cut(const char *path, int ncols) {
  FILE *f = fopen(path, "r");
  if (!f) fail_msg("%s is missing", path);
  char line[4096], *out = malloc(1 << 20);
  size_t n = 0;
  while (fgets(line, sizeof line, f)) {
    int commas = 0;
    for (char *p = line; ncols > 0 && *p; p++)
      if (*p == ',' && ++commas == ncols) {
        p[0] = '\n', p[1] = 0;
        break;
      }
    size_t l = strlen(line);
    assert_true(n + l < (1 << 20));
    memcpy(out + n, line, l);
    n += l;
  }
  out[n] = 0;
  fclose(f);
  return out;
}

enum { N_OUT = 11 };

/* Every recorded-data command on a fresh copy, as host host_fp: outputs. */
static void outputs(const char *host_fp, char *out[N_OUT]) {
  fresh_copy();
  char *best = sql_text(db, "SELECT t.config FROM trials t JOIN campaigns c ON c.id = t.campaign_id"
                            " JOIN workloads w ON w.id = c.workload_id WHERE w.key LIKE 'gemm f32 M=512 %'"
                            " AND t.status = 'ok' ORDER BY t.time, t.id LIMIT 1");
  char csv[256];
  char svg[256];
  snprintf(csv, sizeof csv, "%s/roof.csv", dir);
  snprintf(svg, sizeof svg, "%s/roof.svg", dir);
  const char *const cmds[][24] = {
    {"model", "accuracy", "--db", db, "--kernel", "gemm", NULL},
    {"model", "accuracy", "--db", db, "--kernel", "conv2d", "--json", NULL},
    {"model", "explain", "--db", db, "--kernel", "gemm", "--set", "M=512,N=512,K=512", "--config", best, NULL},
    {"model", "explain", "--db", db, "--kernel", "gemm", "--set", "M=512,N=512,K=512", "--config", best,
     "--json", NULL},
    {"model", "predict", "--db", db, "--kernel", "reduction", "--set", "N=1000000", "--config", "default",
     "--json", NULL},
    {"model", "history", "--db", db, "--kernel", "gemm", NULL},
    {"model", "calibrate", "--db", db, "--kernel", "reduction", "--set", "N=1000000", "--counters", "0",
     "--json", NULL},
    {"model", "accuracy", "--db", db, "--kernel", "reduction", "--json", NULL},
    {"replay", "--db", db, "--kernel", "reduction", "--set", "N=4000000", "--space",
     "targets/host/reduction.json", "--strategy", "model", "--budget", "20", "--json", NULL},
    {"compare", "--db", db, "--kernel", "reduction", "--set", "N=4000000", "--space",
     "targets/host/reduction.json", "--strategies", "random,annealing,model", "--budget", "20",
     "--repeats", "2", "--csv", csvdir, NULL},
    {"model", "roofline", "--db", db, "--kernel", "gemm", "--set", "M=1024", "-o", svg, "--data",
     csv, NULL},
  };
  for (int i = 0; i < N_OUT; i++) {
    result r = {0};
    if (i == 10 && tk_run((const char *[]){"gnuplot", "--version", NULL}, &(tk_io){.both = -1})) {
      out[i] = strdup("(no gnuplot: model roofline not run)");
      continue;
    }
    if (i == 10) unlink(csv);
    r = run(host_fp, cmds[i]);
    if (r.rc) fail_msg("rooftune %s %s (host %s): exit %d: %s", cmds[i][0], cmds[i][1],
                       host_fp ? host_fp : "this machine", r.rc, r.err);
    if (i == 8) out[i] = without_timing(r.out);
    else if (i == 9) {   /* curves whole; scores without framework_ms_per_eval */
      char p1[300], p2[300];
      snprintf(p1, sizeof p1, "%s/curves.csv", csvdir);
      snprintf(p2, sizeof p2, "%s/scores.csv", csvdir);
      char *c = csv_cut(p1, 0), *s = csv_cut(p2, 7);
      out[i] = malloc(strlen(c) + strlen(s) + 1);
      strcpy(out[i], c), strcat(out[i], s);
      free(c), free(s);
    } else if (i == 10) {
      out[i] = csv_cut(csv, 0);
    } else {
      out[i] = strdup(r.out);
    }
    done(&r);
  }
  free(best);
}

static void t100_same_on_any_host(void **state) {
  (void)state;
  char *a[N_OUT], *b[N_OUT], *c[N_OUT];
  outputs(NULL, a);
  outputs(TK_OTHER_HOST, b);
  outputs(RECORDED_FP, c);
  for (int i = 0; i < N_OUT; i++) {
    if (strcmp(a[i], b[i])) fail_msg("output %d differs as another machine:\n%s\n---\n%s", i, a[i], b[i]);
    if (strcmp(a[i], c[i])) fail_msg("output %d differs as the recording machine:\n%s\n---\n%s", i, a[i], c[i]);
  }
  /* what they say is the recorded target's: explain names it, history
  ** lists its two stored gemm calibrations, calibrate added version 3 */
  assert_non_null(strstr(a[2], "target     host, fingerprint 34f2c7239ccb (Intel(R) Xeon(R) Processor)"));
  assert_non_null(strstr(a[3], "\"fingerprint\":\"" RECORDED_FP "\""));
  assert_int_equal(count_lines(a[5]), sql_int(db, "SELECT count(*) FROM models WHERE kernel = 'gemm'"));
  assert_non_null(strstr(a[6], "\"version\":3"));
  /* nothing measured: the copy's ceilings are the recorded ones alone */
  assert_int_equal(sql_int(db, "SELECT count(*) FROM ceilings"), 1);
  assert_int_equal(sql_int(db, "SELECT count(*) FROM targets WHERE fingerprint <> '" RECORDED_FP "'"), 0);
  for (int i = 0; i < N_OUT; i++) free(a[i]), free(b[i]), free(c[i]);
}

/* The recorded trials of kernel k on the target of fingerprint fp. */
static long long trials_of(const char *path, const char *k, const char *fp) {
  char sql[600];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM trials t JOIN campaigns c ON c.id = t.campaign_id"
           " JOIN targets g ON g.id = c.target_id JOIN workloads w ON w.id = c.workload_id"
           " JOIN kernels k ON k.id = w.kernel_id WHERE k.name = '%s' AND g.fingerprint = '%s'", k, fp);
  return sql_int(path, sql);
}

static void t200_two_targets(void **state) {
  (void)state;
  /* the one-target answers */
  fresh_copy();
  const char *acc[] = {"model", "accuracy", "--db", db, "--kernel", "reduction", NULL};
  result one = run(NULL, acc);
  assert_int_equal(one.rc, 0);
  const char *rep[] = {"replay", "--db", db, "--kernel", "reduction", "--set", "N=4000000",
                       "--space", "targets/host/reduction.json", "--strategy", "random", "--budget", "30",
                       "--json", NULL};
  result one_rep = run(NULL, rep);
  assert_int_equal(one_rep.rc, 0);
  /* a second machine's 20 trials of reduction N=4000000, no ceilings */
  copy_file(db, db2);
  sql_exec(db2, "INSERT INTO targets(name, fingerprint, description)"
     " VALUES('host', '" SECOND_FP "', '{\"model\":\"Another CPU\"}');"
     " INSERT INTO campaigns(target_id, workload_id, space_id, strategy, options, seed, budget,"
     " rooftune_version, source, compiler, flags, state) SELECT (SELECT id FROM targets WHERE fingerprint"
     " = '" SECOND_FP "'), workload_id, space_id, strategy, options, seed, budget, rooftune_version,"
     " source, compiler, flags, state FROM campaigns WHERE id = (SELECT min(c.id) FROM campaigns c JOIN"
     " workloads w ON w.id = c.workload_id WHERE w.key LIKE 'reduction f32 N=4000000 %');"
     " INSERT INTO trials(campaign_id, config, config_hash, status, time, repeats, created) SELECT"
     " (SELECT max(id) FROM campaigns), config, config_hash, status, time, repeats, created FROM trials"
     " WHERE campaign_id = (SELECT min(c.id) FROM campaigns c JOIN workloads w ON w.id = c.workload_id"
     " WHERE w.key LIKE 'reduction f32 N=4000000 %') ORDER BY id LIMIT 20;");
  long long n1 = trials_of(db2, "reduction", RECORDED_FP), n2 = trials_of(db2, "reduction", SECOND_FP);
  assert_int_equal(n2, 20);
  /* without --fingerprint: both listed with their counts, nothing chosen */
  const char *acc2[] = {"model", "accuracy", "--db", db2, "--kernel", "reduction", NULL};
  result r = run(NULL, acc2);
  assert_int_equal(r.rc, 1);
  char line[300];
  snprintf(line, sizeof line, "host     %s  Intel(R) Xeon(R) Processor  %lld trials (%lld ok)", RECORDED_FP,
           n1, n1);
  if (!strstr(r.err, line)) fail_msg("'%s' is not in: %s", line, r.err);
  snprintf(line, sizeof line, "host     %s  Another CPU  %lld trials (%lld ok)", SECOND_FP, n2, n2);
  if (!strstr(r.err, line)) fail_msg("'%s' is not in: %s", line, r.err);
  assert_non_null(strstr(r.err, "on 2 targets; choose one with --fingerprint PREFIX"));
  assert_string_equal(r.out, "");
  done(&r);
  /* a unique prefix: the one-target answer */
  const char *acc3[] = {"model", "accuracy", "--db", db2, "--kernel", "reduction", "--fingerprint", "34F2C", NULL};
  r = run(TK_OTHER_HOST, acc3);
  assert_int_equal(r.rc, 0);
  assert_string_equal(r.out, one.out);
  done(&r);
  /* a prefix of both, of none, not hex */
  const char *acc4[] = {"model", "accuracy", "--db", db2, "--kernel", "reduction", "--fingerprint", "34f2", NULL};
  r = run(NULL, acc4);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "on 2 targets whose fingerprint starts with 34f2"));
  done(&r);
  const char *acc5[] = {"model", "accuracy", "--db", db2, "--kernel", "reduction", "--fingerprint", "99", NULL};
  r = run(NULL, acc5);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "has a fingerprint starting with 99; stored targets:"));
  assert_non_null(strstr(r.err, SECOND_FP));
  done(&r);
  const char *acc6[] = {"model", "accuracy", "--db", db2, "--kernel", "reduction", "--fingerprint", "34-f", NULL};
  r = run(NULL, acc6);
  assert_int_equal(r.rc, 2);
  assert_non_null(strstr(r.err, "--fingerprint: expected the start of a stored target's fingerprint"));
  done(&r);
  /* a workload only the recorded target holds: no ambiguity */
  const char *acc7[] = {"model", "accuracy", "--db", db2, "--kernel", "reduction", "--set", "N=1000000", NULL};
  r = run(NULL, acc7);
  assert_int_equal(r.rc, 0);
  assert_non_null(strstr(r.out, "reduction f32 N=1000000"));
  assert_null(strstr(r.out, "N=4000000"));
  done(&r);
  /* replay: the same rule */
  const char *rep2[] = {"replay", "--db", db2, "--kernel", "reduction", "--set", "N=4000000",
                        "--space", "targets/host/reduction.json", "--strategy", "random", "--budget", "30",
                        "--json", NULL};
  r = run(NULL, rep2);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "choose one with --fingerprint"));
  done(&r);
  const char *rep3[] = {"replay", "--db", db2, "--fingerprint", "34f2c", "--kernel", "reduction", "--set",
                        "N=4000000", "--space", "targets/host/reduction.json", "--strategy", "random",
                        "--budget", "30", "--json", NULL};
  r = run(NULL, rep3);
  assert_int_equal(r.rc, 0);
  char *x = without_timing(r.out), *y = without_timing(one_rep.out);
  char *xr = strstr(x, "\"recorded\""), *yr = strstr(y, "\"recorded\"");   /* past the file name */
  assert_non_null(xr);
  assert_non_null(yr);
  assert_string_equal(xr, yr);
  free(x), free(y);
  done(&r);
  /* the other machine's ceilings are not here: never measured here */
  const char *ex[] = {"model", "explain", "--db", db2, "--fingerprint", "34f2f", "--kernel", "reduction",
                      "--set", "N=1000000", "--config", "default", NULL};
  r = run(NULL, ex);
  assert_int_equal(r.rc, 1);
  assert_non_null(strstr(r.err, "holds no ceilings of target host (fingerprint " SECOND_FP
                                ", Another CPU), and they can only be measured on that machine"));
  assert_int_equal(sql_int(db2, "SELECT count(*) FROM ceilings"), 1);
  done(&r);
  done(&one);
  done(&one_rep);
}

/* Imported results (fingerprint "external"): replay --db finds their target
** alone, and --fingerprint external names it; both replay what replay --t4
** replays from the file itself. */
static void t300_imported(void **state) {
  (void)state;
  char idb[160];
  snprintf(idb, sizeof idb, "%s/imported.db", dir);
  const char *imp[] = {"db", "import", "--db", idb, "--t4", "data/t4/pnpoly_RTX_3090_T4.json.gz", "--space",
                       "data/t1/pnpoly.json", "--target", "RTX_3090", "--kernel", "pnpoly", NULL};
  result r = run(NULL, imp);
  assert_int_equal(r.rc, 0);
  done(&r);
  const char *t4[] = {"replay", "--t4", "data/t4/pnpoly_RTX_3090_T4.json.gz", "--space", "data/t1/pnpoly.json",
                      "--strategy", "annealing", "--budget", "40", "--json", NULL};
  const char *d1[] = {"replay", "--db", idb, "--kernel", "pnpoly", "--space", "data/t1/pnpoly.json",
                      "--strategy", "annealing", "--budget", "40", "--json", NULL};
  const char *d2[] = {"replay", "--db", idb, "--fingerprint", "ext", "--kernel", "pnpoly", "--space",
                      "data/t1/pnpoly.json", "--strategy", "annealing", "--budget", "40", "--json", NULL};
  result a = run(TK_OTHER_HOST, t4), b = run(NULL, d1), c = run(NULL, d2);
  assert_int_equal(a.rc, 0);
  assert_int_equal(b.rc, 0);
  assert_int_equal(c.rc, 0);
  char *x = without_timing(a.out), *y = without_timing(b.out), *z = without_timing(c.out);
  const char *xs = strstr(x, "\"recorded\""), *ys = strstr(y, "\"recorded\""), *zs = strstr(z, "\"recorded\"");
  assert_non_null(xs);
  assert_non_null(ys);
  assert_non_null(zs);
  assert_string_equal(xs, ys);
  assert_string_equal(ys, zs);
  free(x), free(y), free(z);
  done(&a), done(&b), done(&c);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/rt_anyhost_XXXXXX");
  if (!mkdtemp(dir)) return -1;
  snprintf(db, sizeof db, "%s/cost_model.db", dir);
  snprintf(db2, sizeof db2, "%s/two_targets.db", dir);
  snprintf(csvdir, sizeof csvdir, "%s/compare", dir);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  tk_rm_rf(dir);
  return 0;
}

int main(int argc, char **argv) {
  (void)argc;
  if (find_rooftune(argv[0], rooftune, sizeof rooftune)) return 1;
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(t100_same_on_any_host),
    cmocka_unit_test(t200_two_targets),
    cmocka_unit_test(t300_imported),
  };
  return cmocka_run_group_tests_name("recorded data on any host", tests, setup, teardown);
}
