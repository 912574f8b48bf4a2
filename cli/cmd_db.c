/*
** cmd_db.c -- `rooftune db ...`: create and check a database, import T4
** results, and query the best and ranked trials of a workload. One table
** lists the subcommands and the options each accepts.
*/
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db/db.h"
#include "cli.h"

enum { D_DB = 1 << 0, D_T4 = 1 << 1, D_SPACE = 1 << 2, D_TARGET = 1 << 3, D_KERNEL = 1 << 4,
       D_SET = 1 << 5, D_JSON = 1 << 6, D_LIMIT = 1 << 7 };

typedef struct dopts {
  const char *db, *t4, *space, *target, *kernel, *set;
  int json, limit;
} dopts;

typedef struct db_cmd {
  const char *name;
  int (*fn)(db *d, const dopts *o, const char *cmd);
  unsigned opts, required;
  int create;   /* the database may be created */
  const char *args, *summary;
} db_cmd;

static int dc_init(db *d, const dopts *o, const char *cmd);
static int dc_check(db *d, const dopts *o, const char *cmd);
static int dc_stats(db *d, const dopts *o, const char *cmd);
static int dc_import(db *d, const dopts *o, const char *cmd);
static int dc_best(db *d, const dopts *o, const char *cmd);
static int dc_list(db *d, const dopts *o, const char *cmd);

static const db_cmd subcommands[] = {
  {"init", dc_init, D_DB, 0, 1, "[--db F]", "create a database (or migrate an older one)"},
  {"check", dc_check, D_DB | D_JSON, 0, 0, "[--db F] [--json]",
   "integrity and rooftune's invariants (exit 1 if a problem is found)"},
  {"stats", dc_stats, D_DB | D_JSON, 0, 0, "[--db F] [--json]", "rows per table, trials per status"},
  {"import", dc_import, D_DB | D_T4 | D_SPACE | D_TARGET | D_KERNEL | D_SET,
   D_T4 | D_SPACE | D_TARGET, 1,
   "[--db F] --t4 FILE[.gz] --space T1 --target NAME [--kernel NAME] [--set VAR=VAL,...]",
   "import T4 results (all or nothing) as one campaign"},
  {"best", dc_best, D_DB | D_TARGET | D_KERNEL | D_SET | D_JSON, D_TARGET | D_KERNEL, 0,
   "[--db F] --target T --kernel K [--set ...] [--json]", "the fastest verified trial of a workload"},
  {"list", dc_list, D_DB | D_TARGET | D_KERNEL | D_SET | D_JSON | D_LIMIT, D_TARGET | D_KERNEL, 0,
   "[--db F] --target T --kernel K [--set ...] [--limit N] [--json]",
   "verified trials of a workload, fastest first"},
  {NULL, NULL, 0, 0, 0, NULL, NULL},
};

static const struct { unsigned bit; const char *name, *help; } option_table[] = {
  {D_DB, "db", "--db F             the database file (default rooftune.db)"},
  {D_T4, "t4", "--t4 FILE          T4 results, plain or gzip"},
  {D_SPACE, "space", "--space FILE       the T1 space the results were recorded on"},
  {D_TARGET, "target", "--target NAME      the target (for imports: a name for the machine)"},
  {D_KERNEL, "kernel", "--kernel NAME      kernel name (imports: default the space's BenchmarkName)"},
  {D_SET, "set", "--set VAR=VAL,...  problem variables of the workload"},
  {D_JSON, "json", "--json             machine-readable output"},
  {D_LIMIT, "limit", "--limit N          at most N rows (default 20; 0: all)"},
};

static void print_help(FILE *f) {
  fprintf(f, "usage: rooftune db SUBCOMMAND [options]\n\nsubcommands:\n");
  for (const db_cmd *c = subcommands; c->name; c++) fprintf(f, "  %-8s %s\n", c->name, c->summary);
  fprintf(f, "\nRun 'rooftune db SUBCOMMAND --help' for its options.\n");
}

static int parse(const db_cmd *c, int argc, char **argv, dopts *o, const char *cmd) {
  static const struct option longopts[] = {
    {"db", required_argument, 0, D_DB}, {"t4", required_argument, 0, D_T4},
    {"space", required_argument, 0, D_SPACE}, {"target", required_argument, 0, D_TARGET},
    {"kernel", required_argument, 0, D_KERNEL}, {"set", required_argument, 0, D_SET},
    {"json", no_argument, 0, D_JSON}, {"limit", required_argument, 0, D_LIMIT},
    {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
  };
  memset(o, 0, sizeof *o);
  o->db = "rooftune.db";
  o->limit = 20;
  optind = 0;
  opterr = 0;
  unsigned seen = 0;
  int ch;
  while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    if (ch == 'h') {
      printf("usage: rooftune %s %s\n\n%s\n\noptions:\n", cmd, c->args, c->summary);
      for (size_t i = 0; i < sizeof option_table / sizeof *option_table; i++)
        if (c->opts & option_table[i].bit) printf("  %s\n", option_table[i].help);
      return -1;
    }
    if (ch == '?') return cli_usage(cmd, c->args, "unknown option or missing value: %s", argv[optind - 1]);
    if (!(c->opts & (unsigned)ch))
      return cli_usage(cmd, c->args, "option %s does not apply here", argv[optind - 1]);
    seen |= (unsigned)ch;
    switch (ch) {
    case D_DB: o->db = optarg; break;
    case D_T4: o->t4 = optarg; break;
    case D_SPACE: o->space = optarg; break;
    case D_TARGET: o->target = optarg; break;
    case D_KERNEL: o->kernel = optarg; break;
    case D_SET: o->set = optarg; break;
    case D_JSON: o->json = 1; break;
    case D_LIMIT: {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (*end || end == optarg || v < 0 || v > 1000000000)
        return cli_usage(cmd, c->args, "--limit: expected a non-negative integer, got '%s'", optarg);
      o->limit = (int)v;
      break;
    }
    }
  }
  if (optind < argc) return cli_usage(cmd, c->args, "unexpected argument '%s'", argv[optind]);
  for (size_t i = 0; i < sizeof option_table / sizeof *option_table; i++)
    if ((c->required & option_table[i].bit) && !(seen & option_table[i].bit))
      return cli_usage(cmd, c->args, "--%s is required", option_table[i].name);
  return 0;
}

int cmd_db(int argc, char **argv) {
  if (argc < 2) {
    print_help(stderr);
    return EXIT_USAGE;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    print_help(stdout);
    return EXIT_OK;
  }
  const db_cmd *c = subcommands;
  while (c->name && strcmp(c->name, argv[1])) c++;
  if (!c->name) {
    fprintf(stderr, "rooftune db: unknown subcommand '%s'\n\n", argv[1]);
    print_help(stderr);
    return EXIT_USAGE;
  }
  char cmd[32];
  snprintf(cmd, sizeof cmd, "db %s", c->name);
  dopts o;
  int rc = parse(c, argc - 1, argv + 1, &o, cmd);
  if (rc) return rc < 0 ? EXIT_OK : rc;
  rt_err err = {0};
  db *d = db_open(o.db, c->create, &err);
  if (!d) return cli_fail(cmd, "%s", err.msg);
  rc = c->fn(d, &o, cmd);
  db_close(d);
  return rc;
}

/* ---- Subcommands ---- */

static int dc_init(db *d, const dopts *o, const char *cmd) {
  (void)cmd;
  printf("%s: schema version %d\n", o->db, db_user_version(d));
  return EXIT_OK;
}

/* Print "name value" lines as text, or as a JSON object of numbers. */
static void print_kv(const char *text, int json) {
  if (!json) {
    fputs(text, stdout);
    return;
  }
  jw w;
  jw_init(&w, stdout);
  jw_begin(&w, '{');
  for (const char *p = text; *p;) {
    const char *sp = strchr(p, ' '), *nl = strchr(p, '\n');
    char key[64];
    snprintf(key, sizeof key, "%.*s", (int)(sp - p), p);
    jw_key(&w, key);
    jw_int(&w, atoll(sp + 1));
    p = nl + 1;
  }
  jw_end(&w, '}');
}

static int dc_stats(db *d, const dopts *o, const char *cmd) {
  rt_str s = {0};
  rt_err err = {0};
  if (db_stats(d, &s, &err)) {
    free(s.s);
    return cli_fail(cmd, "%s", err.msg);
  }
  print_kv(s.s ? s.s : "", o->json);
  free(s.s);
  return EXIT_OK;
}

static int dc_check(db *d, const dopts *o, const char *cmd) {
  rt_str report = {0};
  rt_err err = {0};
  int rc = db_check(d, &report, &err);
  if (rc < 0) return cli_fail(cmd, "%s", err.msg);
  if (o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "ok"); jw_bool(&w, rc == 0);
    jw_key(&w, "problems"); jw_begin(&w, '[');
    for (char *p = report.s; p && *p;) {
      char *nl = strchr(p, '\n');
      *nl = 0;
      jw_str(&w, p);
      p = nl + 1;
    }
    jw_end(&w, ']');
    jw_end(&w, '}');
  } else {
    printf("%s", rc ? report.s : "ok\n");
  }
  free(report.s);
  return rc ? EXIT_FAIL : EXIT_OK;
}

/* Load a space file with --set bindings; NULL after reporting. */
static sp_space *load_space(const char *path, const char *set, const char *cmd) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = set ? sp_parse_bindings(set, a, &b, &err) : 0;
  sp_space *sp = nb < 0 ? NULL : sp_load_file(path, b, nb, &err);
  free(b);
  sx_arena_free(a);
  if (!sp) cli_fail(cmd, "%s", err.msg);
  return sp;
}

static int dc_import(db *d, const dopts *o, const char *cmd) {
  sp_space *sp = load_space(o->space, o->set, cmd);
  if (!sp) return EXIT_FAIL;
  int64_t campaign;
  int n;
  rt_err err = {0};
  int rc = db_import_t4(d, o->t4, sp, o->target, o->kernel ? o->kernel : sp_name(sp), &campaign,
                        &n, &err);
  sp_free(sp);
  if (rc) return cli_fail(cmd, "%s (nothing was imported)", err.msg);
  printf("imported %d trials as campaign %lld\n", n, (long long)campaign);
  return EXIT_OK;
}

/* Does stored workload key match every --set binding? Its assignments
** follow "KERNEL DTYPE" as space-separated VAR=VALUE (Python literals). */
static int key_matches(const char *key, const sp_binding *set, int nset) {
  const char *rest = strchr(key, ' ');
  rest = rest ? strchr(rest + 1, ' ') : NULL;
  if (!rest) return nset == 0;
  char *text = rt_strdup(rest + 1);
  for (char *p = text; *p; p++)
    if (*p == ' ') *p = ',';
  sx_arena *a = sx_arena_new();
  sp_binding *kb = NULL;
  int nk = sp_parse_bindings(text, a, &kb, NULL), ok = nk >= 0;
  for (int i = 0; ok && i < nset; i++) {
    int found = 0;
    for (int j = 0; j < nk; j++)
      found |= !strcmp(kb[j].name, set[i].name) && sx_equal(&kb[j].value, &set[i].value);
    ok = found;
  }
  free(kb);
  free(text);
  sx_arena_free(a);
  return ok;
}

/* The workload key selected by --set (the one stored key whose variables
** include every binding), or the only workload of the kernel on the target
** when --set is left out. NULL after reporting. */
static char *workload_key(db *d, const dopts *o, const char *cmd) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *set = NULL;
  int nset = o->set ? sp_parse_bindings(o->set, a, &set, &err) : 0;
  char **keys = NULL;
  int n = nset < 0 ? -1 : db_workload_keys(d, o->target, o->kernel, &keys, &err), hits = 0;
  char *key = NULL;
  rt_str which = {0};
  for (int i = 0; i < n; i++)
    if (key_matches(keys[i], set, nset)) {
      hits++;
      rt_str_printf(&which, "\n  %s", keys[i]);
      if (!key) key = rt_strdup(keys[i]);
    }
  if (n < 0) {
    cli_fail(cmd, "%s", err.msg);
  } else if (n == 0) {
    cli_fail(cmd, "no results for kernel %s on target %s", o->kernel, o->target);
  } else if (hits != 1) {
    cli_fail(cmd, "%s workload of %s on %s matches%s%s: %s%s", hits ? "more than one" : "no",
             o->kernel, o->target, o->set ? " --set " : "", o->set ? o->set : "",
             hits ? "give more variables with --set" : "stored workloads are",
             hits ? which.s : "");
    if (!hits)
      for (int i = 0; i < n; i++) fprintf(stderr, "  %s\n", keys[i]);
    free(key);
    key = NULL;
  }
  for (int i = 0; i < n; i++) free(keys[i]);
  free(keys);
  free(which.s);
  free(set);
  sx_arena_free(a);
  return key;
}

typedef struct list_ctx { jw w; int json, rank; } list_ctx;

static int print_trial(void *ctx, int64_t id, const char *config, const char *status, double t) {
  list_ctx *c = ctx;
  c->rank++;
  if (c->json) {
    jw_begin(&c->w, '{');
    jw_key(&c->w, "rank"); jw_int(&c->w, c->rank);
    jw_key(&c->w, "trial"); jw_int(&c->w, id);
    jw_key(&c->w, "status"); jw_str(&c->w, status);
    jw_key(&c->w, "time_s"); jw_double(&c->w, t);
    jw_key(&c->w, "config"); jw_raw(&c->w, config);
    jw_end(&c->w, '}');
  } else {
    printf("%4d  trial %-8lld %.6g s  %s\n", c->rank, (long long)id, t, config);
  }
  return 0;
}

static int ranked(db *d, const dopts *o, const char *cmd, int limit) {
  char *key = workload_key(d, o, cmd);
  if (!key) return EXIT_FAIL;
  list_ctx c = {.json = o->json};
  jw_init(&c.w, stdout);
  if (o->json) jw_begin(&c.w, '[');
  else printf("%s on %s\n", key, o->target);
  rt_err err = {0};
  int n = db_ranked(d, o->target, o->kernel, key, limit, print_trial, &c, &err);
  if (o->json) jw_end(&c.w, ']');
  free(key);
  if (n < 0) return cli_fail(cmd, "%s", err.msg);
  if (n == 0) return cli_fail(cmd, "no verified trial for this workload");
  return EXIT_OK;
}

static int dc_best(db *d, const dopts *o, const char *cmd) { return ranked(d, o, cmd, 1); }
static int dc_list(db *d, const dopts *o, const char *cmd) { return ranked(d, o, cmd, o->limit); }
