/*
** test_cli_opt.c -- the option tables of cli/cli_opt.c: every kind of
** option parsed from argv against the value set by hand, every usage error
** with its exit code and message, the help text listing exactly the rows
** that apply, and the "did you mean" suggestions.
*/
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

typedef struct vals {
  int json, reps, which, cb_seen;
  uint64_t seed;
  int64_t id;
  double frac, secs;
  const char *db, *budget;
  cli_strv set;
} vals;

static int even_cb(const cli_opt *o, const char *arg, char *msg, size_t cap) {
  int v = atoi(arg);
  if (v % 2) {
    snprintf(msg, cap, "expected an even number, got '%s'", arg);
    return -1;
  }
  *(int *)o->value = v;
  return 0;
}

static const char *const formats[] = {"jsonl", "csv", NULL};

/* The operands the table under test takes (run() passes them on). */
static const char *operands = "[FILE...]";

/* The table under test; sub selects the subcommand bit (1 or 2). */
static int run(vals *v, unsigned sub, char **out_stream, int argc, ...) {
  char *argv[32];
  va_list ap;
  va_start(ap, argc);
  argv[0] = "cmd";
  for (int i = 1; i < argc; i++) argv[i] = va_arg(ap, char *);
  va_end(ap);
  argv[argc] = NULL;
  memset(v, 0, sizeof *v);
  v->which = -1;
  const cli_opt opts[] = {
    CLI_OPT_STRING("db", &v->db, "F", "the database"),
    CLI_OPT_FLAG("json", &v->json, "JSON on stdout"),
    CLI_OPT_INT("min-reps", &v->reps, "N", 1, 1000, "at least N repeats\nsecond line", .mask = 1),
    CLI_OPT_UINT64("seed", &v->seed, "S", "the seed", .short_name = 's'),
    CLI_OPT_DOUBLE("ci", &v->frac, "F", 1e-6, 1, "a fraction", .mask = 2),
    CLI_OPT_LIST("set", &v->set, "VAR=VAL", "a binding (repeat)", .check = cli_check_set),
    CLI_OPT_INT64("trial", &v->id, "ID", -5, 0, "an id, required by 2", .required = 2),
    CLI_OPT_DOUBLE("secs", &v->secs, "S", 0, 0, "seconds > 0", .flags = CLI_OPEN_LO),
    CLI_OPT_STRING("budget", &v->budget, "N|P%", "a budget", .check = cli_check_budget),
    CLI_OPT_GROUP("output"),
    CLI_OPT_CHOICE("format", &v->which, "FMT", formats, "the format"),
    CLI_OPT_CALLBACK("even", &v->cb_seen, "N", even_cb, "an even number"),
    CLI_OPT_END,
  };
  cli_spec s = {.cmd = "test sub", .usage = "[options] FILE", .about = "A test.", .opts = opts, .mask = sub,
                .operands = operands};
  /* capture stdout+stderr */
  fflush(stdout);
  fflush(stderr);
  FILE *cap = tmpfile();
  int o1 = dup(1), o2 = dup(2);
  dup2(fileno(cap), 1);
  dup2(fileno(cap), 2);
  int nop = -1;
  int rc = cli_parse(&s, argc, argv, &nop);
  fflush(stdout);
  fflush(stderr);
  dup2(o1, 1);
  dup2(o2, 2);
  close(o1);
  close(o2);
  long n = ftell(cap);
  rewind(cap);
  static char text[8192];
  size_t got = fread(text, 1, n < 8191 ? (size_t)n : 8191, cap);
  text[got] = 0;
  fclose(cap);
  if (out_stream) *out_stream = text;
  if (rc == 0) {
    /* operands in order, then NULL */
    assert_true(nop >= 0);
    assert_null(argv[1 + nop]);
  }
  return rc == 0 ? -100 - nop : rc;
}

static void test_values(void **state) {
  (void)state;
  vals v;
  char *out;
  assert_int_equal(run(&v, 1, &out, 13, "a.json", "--db", "x.db", "--json", "--min-reps=7", "-s", "42",
                       "--set", "M=1", "b", "--set=N=2", "--format"), EXIT_USAGE);
  assert_non_null(strstr(out, "--format needs a value"));
  cli_strv_free(&v.set);   /* what was stored before the error */
  assert_int_equal(run(&v, 1, NULL, 14, "a.json", "--db", "x.db", "--json", "--min-reps=7", "-s", "42",
                       "--set", "M=1", "b", "--set=N=2", "--format", "csv"), -102);
  assert_string_equal(v.db, "x.db");
  assert_int_equal(v.json, 1);
  assert_int_equal(v.reps, 7);
  assert_int_equal(v.seed, 42);
  assert_int_equal(v.set.n, 2);
  assert_string_equal(v.set.v[0], "M=1");
  assert_string_equal(v.set.v[1], "N=2");
  assert_int_equal(v.which, 1);
  cli_strv_free(&v.set);
  /* "--" ends the options: what follows is an operand, dashes and all */
  assert_int_equal(run(&v, 2, NULL, 8, "--ci", "0.25", "--trial", "-5", "--", "--json", "-"), -102);
  assert_true(v.frac == 0.25);
  assert_int_equal(v.json, 0);
  assert_int_equal(v.id, -5);
  /* whole numbers exactly, to the ends of their types; "7.0" and "1e3" are whole */
  assert_int_equal(run(&v, 1, NULL, 3, "--seed", "18446744073709551615"), -100);
  assert_true(v.seed == UINT64_MAX);
  assert_int_equal(run(&v, 1, NULL, 3, "--seed", "9007199254740993"), -100);   /* 2^53 + 1: not via a double */
  assert_true(v.seed == 9007199254740993ull);
  assert_int_equal(run(&v, 1, NULL, 5, "--seed", "1e3", "--min-reps", "7.0"), -100);
  assert_true(v.seed == 1000);
  assert_int_equal(v.reps, 7);
  assert_int_equal(run(&v, 2, NULL, 3, "--trial", "0"), -100);
  assert_int_equal(v.id, 0);
  /* an open lower end; checked texts stored as given */
  assert_int_equal(run(&v, 1, NULL, 5, "--secs", "1e-9", "--budget", "5%"), -100);
  assert_true(v.secs == 1e-9);
  assert_string_equal(v.budget, "5%");
  /* the callback stores and checks */
  assert_int_equal(run(&v, 1, NULL, 3, "--even", "4"), -100);
  assert_int_equal(v.cb_seen, 4);
}

static void test_errors(void **state) {
  (void)state;
  vals v;
  char *out;
  static const struct { int argc; const char *a[4]; const char *msg; } bad[] = {
    {2, {"--jsno"}, "unknown option --jsno; did you mean --json?"},
    {2, {"--js"}, "unknown option --js; did you mean --json?"},        /* no abbreviations */
    {2, {"--frobnicate"}, "unknown option --frobnicate\n"},
    {2, {"-x"}, "unknown option -x"},
    {3, {"--min-reps", "0"}, "--min-reps: expected a whole number in [1, 1000], got '0'"},
    {3, {"--min-reps", "1.5"}, "expected a whole number"},
    {3, {"--min-reps", "12x"}, "expected a whole number"},
    {3, {"--seed", "-1"}, "--seed: expected a whole number >= 0, got '-1'"},
    {3, {"--format", "cvs"}, "--format: 'cvs' is not one of jsonl, csv; did you mean 'csv'?"},
    {3, {"--even", "3"}, "--even: expected an even number, got '3'"},
    {2, {"--json=1"}, "--json takes no value"},
    {5, {"--db", "a", "--db", "b"}, "--db given twice"},
    {3, {"--ci", "0.5"}, "--ci does not apply to 'test sub'"},      /* subcommand 1 */
    {3, {"--seed", "18446744073709551616"}, "--seed: expected a whole number >= 0, got '18446744073709551616'"},
    {3, {"--seed", "1e300"}, "--seed: expected a whole number >= 0"},  /* not exact as a double */
    {3, {"--secs", "0"}, "--secs: expected a number > 0, got '0'"},
    {3, {"--set", "M="}, "--set: M=: "},                                /* the check's message */
    {3, {"--set", "M"}, "--set: expected VAR=VALUE (VAR a name of letters, digits and _) in \"M\""},
    {3, {"--budget", "0"}, "--budget: expected N evaluations"},
    {3, {"--budget", "101%"}, "--budget: expected N evaluations"},
    {3, {"--budget", "2.5"}, "--budget: expected N evaluations"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    int rc;
    switch (bad[i].argc) {
    case 2: rc = run(&v, 1, &out, 2, bad[i].a[0]); break;
    case 3: rc = run(&v, 1, &out, 3, bad[i].a[0], bad[i].a[1]); break;
    default: rc = run(&v, 1, &out, 5, bad[i].a[0], bad[i].a[1], bad[i].a[2], bad[i].a[3]); break;
    }
    if (rc != EXIT_USAGE || !strstr(out, bad[i].msg))
      fail_msg("case %zu: rc %d, output:\n%s\nexpected: %s", i, rc, out, bad[i].msg);
    assert_non_null(strstr(out, "rooftune test sub: "));
    assert_non_null(strstr(out, "usage: rooftune test sub [options] FILE"));
    cli_strv_free(&v.set);
  }
  /* the range check of a double, both ends */
  assert_int_equal(run(&v, 2, &out, 3, "--ci", "1.5"), EXIT_USAGE);
  assert_non_null(strstr(out, "expected a number in [1e-06, 1]"));
  assert_int_equal(run(&v, 2, &out, 3, "--ci", "nan"), EXIT_USAGE);
  /* the ends of a signed range; a required option of subcommand 2 */
  assert_int_equal(run(&v, 2, &out, 3, "--trial", "1"), EXIT_USAGE);
  assert_non_null(strstr(out, "--trial: expected a whole number in [-5, 0], got '1'"));
  assert_int_equal(run(&v, 2, &out, 3, "--trial", "-6"), EXIT_USAGE);
  assert_int_equal(run(&v, 2, &out, 1), EXIT_USAGE);
  assert_non_null(strstr(out, "rooftune test sub: --trial ID is required\n"));
  assert_int_equal(run(&v, 1, &out, 1), -100);   /* not required by 1 */
  /* a usage error says where the options are listed */
  assert_int_equal(run(&v, 1, &out, 2, "--jsno"), EXIT_USAGE);
  assert_non_null(strstr(out, "(rooftune test sub --help lists the options)"));
}

/* The operands a spec names: required, optional, the rest. */
static void test_operands(void **state) {
  (void)state;
  vals v;
  char *out;
  static const struct { const char *spec; int argc; const char *a[3]; int rc; const char *msg; } cases[] = {
    {"FILE CONFIG_JSON", 3, {"a", "b"}, -102, NULL},
    {"FILE CONFIG_JSON", 2, {"a"}, EXIT_USAGE, "CONFIG_JSON is required"},
    {"FILE CONFIG_JSON", 1, {0}, EXIT_USAGE, "FILE is required"},
    {"FILE CONFIG_JSON", 4, {"a", "b", "c"}, EXIT_USAGE, "unexpected argument 'c'"},
    {"NAME [ARGS...]", 1, {0}, EXIT_USAGE, "NAME is required"},
    {"NAME [ARGS...]", 2, {"n"}, -101, NULL},
    {"NAME [ARGS...]", 4, {"n", "x", "y"}, -103, NULL},
    {"OTHER.db...", 1, {0}, EXIT_USAGE, "OTHER.db is required"},
    {"OTHER.db...", 4, {"a", "b", "c"}, -103, NULL},
    {"[FILE]", 3, {"a", "b"}, EXIT_USAGE, "unexpected argument 'b'"},
    {NULL, 2, {"a"}, EXIT_USAGE, "unexpected argument 'a'"},
    {NULL, 1, {0}, -100, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    operands = cases[i].spec;
    int rc = run(&v, 1, &out, cases[i].argc, cases[i].a[0], cases[i].a[1], cases[i].a[2]);
    if (rc != cases[i].rc || (cases[i].msg && !strstr(out, cases[i].msg)))
      fail_msg("case %zu (%s): rc %d, output:\n%s", i, cases[i].spec ? cases[i].spec : "none", rc, out);
  }
  operands = "[FILE...]";
}

/* The shared checks and the "unknown NAME" report. */
static void test_checks_and_unknown(void **state) {
  (void)state;
  char msg[256];
  static const char *const good_set[] = {"M=1024,N=2**10", "layout='nhwc'", "X=1.5", ""};
  static const char *const bad_set[] = {"M=", "M", "=3", "M=1,M=2", "M=[1,2]"};
  for (size_t i = 0; i < sizeof good_set / sizeof *good_set; i++) assert_int_equal(cli_check_set(good_set[i], msg, sizeof msg), 0);
  for (size_t i = 0; i < sizeof bad_set / sizeof *bad_set; i++) {
    assert_int_equal(cli_check_set(bad_set[i], msg, sizeof msg), -1);
    if (!strncmp(msg, "--set", 5)) fail_msg("'%s': the message repeats the option's name: %s", bad_set[i], msg);
  }
  static const char *const good_budget[] = {"1", "64", "5%", "100%", "0.5%", "1e3"};
  static const char *const bad_budget[] = {"0", "-3", "1.5", "0%", "100.1%", "5%%", "x", "", "5 %"};
  for (size_t i = 0; i < sizeof good_budget / sizeof *good_budget; i++)
    if (cli_check_budget(good_budget[i], msg, sizeof msg)) fail_msg("'%s' refused: %s", good_budget[i], msg);
  for (size_t i = 0; i < sizeof bad_budget / sizeof *bad_budget; i++)
    if (!cli_check_budget(bad_budget[i], msg, sizeof msg)) fail_msg("budget '%s' accepted", bad_budget[i]);
  assert_int_equal(cli_check_fingerprint("34f2c7", msg, sizeof msg), 0);
  assert_int_equal(cli_check_fingerprint("external", msg, sizeof msg), 0);
  assert_int_equal(cli_check_fingerprint("", msg, sizeof msg), -1);
  assert_int_equal(cli_check_fingerprint("34f2-c7", msg, sizeof msg), -1);
  assert_int_equal(cli_check_fingerprint("0123456789abcdef0123456789abcdef0", msg, sizeof msg), -1);   /* 33 */
  /* cli_unknown and cli_kernel: a usage error, with a suggestion when one is close */
  const cli_opt none[] = {CLI_OPT_END};
  cli_spec s = {.cmd = "probe", .usage = "--kernel K", .opts = none};
  fflush(stderr);
  FILE *cap = tmpfile();
  int o2 = dup(2);
  dup2(fileno(cap), 2);
  int rc1, rc2, rc3;
  const void *k1 = cli_kernel(&s, "host", "gem", &rc1), *k2 = cli_kernel(&s, "hots", "gemm", &rc2),
             *k3 = cli_kernel(&s, "host", "gemm", &rc3);
  const char *const cands[] = {"strategies", "portability", NULL};
  int rc4 = cli_unknown(&s, "experiment", "portabilty", cands, "rooftune experiment list");
  fflush(stderr);
  dup2(o2, 2);
  close(o2);
  char text[4096];
  rewind(cap);
  text[fread(text, 1, sizeof text - 1, cap)] = 0;
  fclose(cap);
  assert_null(k1);
  assert_null(k2);
  assert_non_null(k3);
  assert_int_equal(rc1, EXIT_USAGE);
  assert_int_equal(rc2, EXIT_USAGE);
  assert_int_equal(rc4, EXIT_USAGE);
  const char *want[] = {
    "rooftune probe: unknown kernel 'gem' on target host; did you mean 'gemm'? (rooftune kernels --target host lists them)\nusage: rooftune probe --kernel K\n",
    "rooftune probe: unknown target 'hots'; did you mean 'host'? (rooftune targets lists them)\n",
    "rooftune probe: unknown experiment 'portabilty'; did you mean 'portability'? (rooftune experiment list)\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    if (!strstr(text, want[i])) fail_msg("missing:\n%s\nin:\n%s", want[i], text);
}

static void test_help(void **state) {
  (void)state;
  vals v;
  char *out;
  assert_int_equal(run(&v, 1, &out, 2, "-h"), CLI_HELP);
  const char *want[] = {"usage: rooftune test sub [options] FILE\n", "\nA test.\n", "  --db F ", "  --json ",
                        "  --min-reps N ", "second line", "  -s, --seed S ", "  --set VAR=VAL ",
                        "\noutput:\n", "  --format jsonl|csv ", "  --even N ", "  -h, --help "};
  for (size_t i = 0; i < sizeof want / sizeof *want; i++)
    if (!strstr(out, want[i])) fail_msg("help lacks '%s':\n%s", want[i], out);
  assert_null(strstr(out, "--ci"));                 /* not an option of subcommand 1 */
  assert_int_equal(run(&v, 2, &out, 2, "--help"), CLI_HELP);
  assert_non_null(strstr(out, "  --ci F "));
  assert_null(strstr(out, "--min-reps"));
  assert_non_null(strstr(out, "  --trial ID         an id, required by 2; required\n"));   /* required here */
  assert_int_equal(run(&v, 1, &out, 2, "--help"), CLI_HELP);
  assert_non_null(strstr(out, "  --trial ID         an id, required by 2\n"));              /* not here */
  /* every help line's text starts in one column, continuation lines too */
  assert_non_null(strstr(out, "at least N repeats\n                     second line\n"));
  const char *l = strstr(out, "  --db F"), *t = strstr(l, "the database");
  const char *l2 = strstr(out, "  --json"), *t2 = strstr(l2, "JSON on");
  assert_int_equal(t - l, t2 - l2);
}

static void test_suggest(void **state) {
  (void)state;
  const char *const names[] = {"count", "enum", "sample", "check", "rank", "unrank", "neighbours", NULL};
  assert_string_equal(cli_suggest("cuont", names), "count");        /* transposition */
  assert_string_equal(cli_suggest("neighbors", names), "neighbours");
  assert_string_equal(cli_suggest("samp", names), "sample");        /* prefix */
  assert_null(cli_suggest("xyz", names));
  assert_null(cli_suggest("", names));
  assert_string_equal(cli_suggest("rank", names), "rank");
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_values),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_help),
    cmocka_unit_test(test_suggest),
    cmocka_unit_test(test_operands),
    cmocka_unit_test(test_checks_and_unknown),
  };
  return cmocka_run_group_tests_name("cli_opt", tests, NULL, NULL);
}
