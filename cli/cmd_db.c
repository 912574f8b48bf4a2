/*
** cmd_db.c -- `rooftune db ...`: create and check a database, import T4
** results, query the best and ranked trials of a workload, pin a trial
** (versions, rollback, history), tag releases, export trials, merge
** other files and copy the whole file safely. One table lists the
** subcommands and the options each accepts.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../db/db.h"
#include "../db/db_header.h"
#include "../db/rtdb.h"
#include "../targets/tg.h"
#include "cli.h"

/* The subcommands, as bits: each option row names those that accept it
** (and those that require it). */
enum {
  D_INIT = 1 << 0, D_CHECK = 1 << 1, D_STATS = 1 << 2, D_IMPORT = 1 << 3, D_BEST = 1 << 4,
  D_LIST = 1 << 5, D_PIN = 1 << 6, D_ROLLBACK = 1 << 7, D_HISTORY = 1 << 8, D_TAG = 1 << 9,
  D_EXPORT = 1 << 10, D_MERGE = 1 << 11, D_HEADER = 1 << 12, D_LOOKUP = 1 << 13, D_COPY = 1 << 14,
  D_ADAPT = 1 << 15,
};

typedef struct dopts {
  const char *db, *t4, *space, *target, *kernel, *set, *reason, *by, *name, *note, *show,
      *format, *out, *tag, *kt, *dtype;
  const char *fingerprint, *model, *arch, *backend;   /* lookup: the caller's family chain */
  int here, max_level;
  db_import *import;   /* import: its input, read before the database is opened */
  int json, limit, best, list, fmt;
  int pin, skip_unmatched;   /* adapt-import */
  int64_t trial, version;
  char **files;   /* positional arguments (merge) */
  int nfiles;
} dopts;

typedef struct db_cmd {
  cli_sub sub;
  int (*fn)(db *d, const dopts *o, const char *cmd);
  unsigned bit;
  int mode;     /* how db_open opens the file (db.h), or VIA_RTDB */
  const char *operands;
} db_cmd;

static int dc_init(db *d, const dopts *o, const char *cmd);
static int dc_check(db *d, const dopts *o, const char *cmd);
static int dc_stats(db *d, const dopts *o, const char *cmd);
static int dc_import(db *d, const dopts *o, const char *cmd);
static int dc_best(db *d, const dopts *o, const char *cmd);
static int dc_list(db *d, const dopts *o, const char *cmd);
static int dc_pin(db *d, const dopts *o, const char *cmd);
static int dc_rollback(db *d, const dopts *o, const char *cmd);
static int dc_history(db *d, const dopts *o, const char *cmd);
static int dc_tag(db *d, const dopts *o, const char *cmd);
static int dc_export(db *d, const dopts *o, const char *cmd);
static int dc_merge(db *d, const dopts *o, const char *cmd);
static int dc_copy(db *d, const dopts *o, const char *cmd);
static int dc_export_header(db *d, const dopts *o, const char *cmd);
static int dc_lookup(db *d, const dopts *o, const char *cmd);
static int dc_adapt_import(db *d, const dopts *o, const char *cmd);

/* The subcommands on one workload (--target, --kernel, --set). */
#define D_WORKLOAD (D_BEST | D_LIST | D_PIN | D_ROLLBACK | D_HISTORY | D_EXPORT | D_LOOKUP)
/* Modes: only commands that store something write (db.h, invariant 1);
** `tag --name` is a writer too. VIA_RTDB: the command reads through the
** reader library (rtdb.h), as a code generator does. */
#define VIA_RTDB (-1)

static const db_cmd subcommands[] = {
  {{"init", "[--db F]", "create a database (or migrate an older one)"}, dc_init, D_INIT, DB_CREATE, NULL},
  {{"check", "[--db F] [--json]", "integrity and rooftune's invariants (exit 1 if a problem is found)"},
   dc_check, D_CHECK, DB_READ, NULL},
  {{"stats", "[--db F] [--json]", "rows per table, trials per status"}, dc_stats, D_STATS, DB_READ, NULL},
  {{"import",
    "[--db F] (--t4 FILE | --kt-cache FILE) [--space T1] --target NAME [--kernel NAME]\n"
    "       [--set VAR=VAL,...] [--dtype D]",
    "import T4 results or a Kernel Tuner cache (all or nothing) as one campaign"},
   dc_import, D_IMPORT, DB_CREATE, NULL},
  {{"best", "[--db F] --target T --kernel K [--set ...] [--json]", "the fastest verified trial of a workload"},
   dc_best, D_BEST, DB_READ, NULL},
  {{"list", "[--db F] --target T --kernel K [--set ...] [--limit N] [--json]",
    "verified trials of a workload, fastest first"}, dc_list, D_LIST, DB_READ, NULL},
  {{"pin",
    "[--db F] --target T --kernel K [--set ...] [--trial ID | --best] [--reason TEXT] [--by WHO]\n"
    "       [--json]",
    "pin a verified trial (default the fastest) as a workload's next version"}, dc_pin, D_PIN, DB_WRITE, NULL},
  {{"rollback", "[--db F] --target T --kernel K [--set ...] --version V", "make pin version V current again"},
   dc_rollback, D_ROLLBACK, DB_WRITE, NULL},
  {{"history", "[--db F] --target T --kernel K [--set ...] [--json]", "every pin version of a workload"},
   dc_history, D_HISTORY, DB_READ, NULL},
  {{"tag", "[--db F] (--name R [--note TEXT] | --list | --show R) [--json]",
    "bind the current pins to release R (immutable), or list/show tags"}, dc_tag, D_TAG, DB_READ, NULL},
  {{"export", "[--db F] --target T --kernel K [--set ...] [--format t4|json|csv|kt-cache] [--out FILE]",
    "write the trials of a kernel (or one workload) as T4, JSON, CSV or a Kernel Tuner cache"},
   dc_export, D_EXPORT, DB_READ, NULL},
  {{"merge", "[--db F] OTHER.db...", "copy campaigns and trials of other files (each all or nothing)"},
   dc_merge, D_MERGE, DB_CREATE, "OTHER.db..."},
  {{"copy", "[--db F] --out FILE",
    "a consistent copy of the whole file (SQLite's backup; complete or not written)"},
   dc_copy, D_COPY, VIA_RTDB, NULL},
  {{"export-header", "[--db F] --target T --kernel K [--tag R] [--out FILE]",
    "a self-contained C header with the pinned schedules and a lookup function"},
   dc_export_header, D_HEADER, VIA_RTDB, NULL},
  {{"lookup",
    "[--db F] --target T --kernel K --set VAR=VAL,... [--tag R] [--here | --fingerprint FP]\n"
    "       [--model M] [--arch A] [--backend B] [--max-level N] [--json]",
    "what a code generator gets from the reader library: exact, nearest or default, and\n"
    "from which level of the target's family"},
   dc_lookup, D_LOOKUP, VIA_RTDB, NULL},
  {{"adapt-import", "[--db F] [--pin] [--skip-unmatched] [--json] LOG...",
    "online-adaptation logs as trials (--pin: proven-faster schedules pinned), each all or nothing"},
   dc_adapt_import, D_ADAPT, DB_WRITE, "LOG..."},
  {{NULL, NULL, NULL}, NULL, 0, 0, NULL},
};
const cli_group cmd_db_group = CLI_GROUP_OF(subcommands);

static const char *const export_formats[] = {"t4", "json", "csv", "kt-cache", NULL};

/* Parse argv (argv[0] the subcommand) for c into *o, with the checks
** between options; 0, CLI_HELP or a usage error's exit code. */
static int parse(const db_cmd *c, int argc, char **argv, dopts *o, const char *cmd) {
  memset(o, 0, sizeof *o);
  o->db = "rooftune.db";
  o->limit = 20;
  int trial = 0;
  const cli_opt opts[] = {
    CLI_OPT_STRING("db", &o->db, "F", "the database file (default rooftune.db)"),
    CLI_OPT_STRING("t4", &o->t4, "FILE", "T4 results, plain or gzip", .mask = D_IMPORT),
    CLI_OPT_STRING("kt-cache", &o->kt, "FILE", "a Kernel Tuner cache file (tune_kernel(cachefile=...)),\n"
                   "plain or gzip", .mask = D_IMPORT),
    CLI_OPT_STRING("space", &o->space, "FILE", "the T1 space the results were recorded on (default:\n"
                   "inferred from the file)", .mask = D_IMPORT),
    CLI_OPT_STRING("target", &o->target, "NAME", "the target (for imports: a name for the machine)",
                   .mask = D_IMPORT | D_WORKLOAD | D_HEADER, .required = D_IMPORT | D_WORKLOAD | D_HEADER),
    CLI_OPT_STRING("kernel", &o->kernel, "NAME", "kernel name (imports: default the space's BenchmarkName,\n"
                   "else the cache's kernel_name)", .mask = D_IMPORT | D_WORKLOAD | D_HEADER,
                   .required = D_WORKLOAD | D_HEADER),
    CLI_OPT_STRING("dtype", &o->dtype, "D", "the data type (default: the file's, else " DB_DEFAULT_DTYPE ")",
                   .mask = D_IMPORT),
    CLI_OPT_STRING("set", &o->set, "VAR=VAL,...", "problem variables of the workload", .check = cli_check_set,
                   .mask = D_IMPORT | D_WORKLOAD),
    CLI_OPT_FLAG("json", &o->json, "machine-readable output",
                 .mask = D_CHECK | D_STATS | D_BEST | D_LIST | D_PIN | D_HISTORY | D_TAG | D_LOOKUP | D_ADAPT),
    CLI_OPT_FLAG("pin", &o->pin, "pin each schedule that replaced a pin in the run (adapt-import)", .mask = D_ADAPT),
    CLI_OPT_FLAG("skip-unmatched", &o->skip_unmatched, "skip sites whose vars match no stored workload\n"
                 "(default: an error)", .mask = D_ADAPT),
    CLI_OPT_INT("limit", &o->limit, "N", 0, 1000000000, "at most N rows (default 20; 0: all)", .mask = D_LIST),
    CLI_OPT_INT64("trial", &o->trial, "ID", 1, 0, "pin this trial (an ok trial of the workload)", .mask = D_PIN,
                  .given = &trial),
    CLI_OPT_FLAG("best", &o->best, "pin the fastest verified trial (the default)", .mask = D_PIN),
    CLI_OPT_STRING("reason", &o->reason, "TEXT", "why (default \"best of N verified trials\")", .mask = D_PIN),
    CLI_OPT_STRING("by", &o->by, "WHO", "who pins (default $USER, else rooftune)", .mask = D_PIN),
    CLI_OPT_INT64("version", &o->version, "V", 1, 0, "the pin version to make current", .mask = D_ROLLBACK,
                  .required = D_ROLLBACK),
    CLI_OPT_STRING("name", &o->name, "R", "create release tag R", .mask = D_TAG),
    CLI_OPT_STRING("note", &o->note, "TEXT", "a note stored with the tag (with --name)", .mask = D_TAG),
    CLI_OPT_FLAG("list", &o->list, "list the tags", .mask = D_TAG),
    CLI_OPT_STRING("show", &o->show, "R", "the pins tag R binds", .mask = D_TAG),
    CLI_OPT_CHOICE("format", &o->fmt, NULL, export_formats, "the format (default t4)", .mask = D_EXPORT),
    CLI_OPT_STRING("out", &o->out, "FILE", "write there (export, export-header: default stdout)",
                   .mask = D_EXPORT | D_HEADER | D_COPY, .required = D_COPY),
    CLI_OPT_STRING("tag", &o->tag, "R", "the pins of release R (default: the current pins)",
                   .mask = D_HEADER | D_LOOKUP),
    CLI_OPT_FLAG("here", &o->here, "the family chain of the target on this machine (its fingerprint,\n"
                 "model, architecture and backend as `rooftune targets` shows them)", .mask = D_LOOKUP),
    CLI_OPT_STRING("fingerprint", &o->fingerprint, "FP", "the caller's fingerprint (default: the stored\n"
                   "target's of that name)", .mask = D_LOOKUP),
    CLI_OPT_STRING("model", &o->model, "M", "the caller's device model (\"\": unknown)", .mask = D_LOOKUP),
    CLI_OPT_STRING("arch", &o->arch, "A", "the caller's architecture (\"\": unknown)", .mask = D_LOOKUP),
    CLI_OPT_STRING("backend", &o->backend, "B", "the caller's backend (\"\": unknown)", .mask = D_LOOKUP),
    CLI_OPT_INT("max-level", &o->max_level, "N", 1, 4, "the last family level tried before the default\n"
                "(1 target, 2 model, 3 architecture (the default), 4 backend)", .mask = D_LOOKUP),
    CLI_OPT_END,
  };
  cli_spec spec = {.cmd = cmd, .usage = c->sub.usage, .about = c->sub.summary, .opts = opts, .mask = c->bit,
                   .operands = c->operands};
  int nop, rc = cli_parse(&spec, argc, argv, &nop);
  if (rc) return rc;
  o->format = export_formats[o->fmt];
  o->files = argv + 1;
  o->nfiles = nop;
  if (trial && o->best) return cli_usage(&spec, "--trial and --best exclude each other");
  if (c->bit == D_TAG && !!o->name + !!o->list + !!o->show != 1)
    return cli_usage(&spec, "expected exactly one of --name, --list, --show");
  if (o->note && !o->name) return cli_usage(&spec, "--note goes with --name");
  if (o->here && o->fingerprint) return cli_usage(&spec, "--here and --fingerprint exclude each other");
  if (c->bit == D_ADAPT && !nop) return cli_usage(&spec, "expected one or more LOG files");
  if (c->bit == D_IMPORT && !!o->t4 + !!o->kt != 1)
    return cli_usage(&spec, "expected exactly one of --t4 and --kt-cache");
  return 0;
}

static db_import *import_read(const dopts *o, const char *cmd, sp_space **space);

int cmd_db(int argc, char **argv) {
  int rc;
  const db_cmd *c = cli_pick("db", &cmd_db_group, argc, argv, &rc);
  if (!c) return rc;
  char cmd[32];
  snprintf(cmd, sizeof cmd, "db %s", c->sub.name);
  dopts o;
  rc = parse(c, argc - 1, argv + 1, &o, cmd);
  if (rc) return rc == CLI_HELP ? EXIT_OK : rc;
  rt_err err = {0};
  /* import reads and checks its input before the database is opened: a
  ** file that cannot be read, or is wrong, creates and changes nothing */
  sp_space *space = NULL;
  if (c->fn == dc_import && !(o.import = import_read(&o, cmd, &space))) return EXIT_FAIL;
  db *d = NULL;
  if (c->mode != VIA_RTDB && !(d = db_open(o.db, o.name ? DB_WRITE : (db_mode)c->mode, &err)))   /* tag --name */
    rc = cli_fail(cmd, "%s", err.msg);
  else
    rc = c->fn(d, &o, cmd);
  db_close(d);
  db_import_free(o.import);
  sp_free(space);
  return rc;
}

/* ---- Subcommands ---- */

static int dc_init(db *d, const dopts *o, const char *cmd) {
  (void)cmd;
  printf("%s: schema version %d\n", o->db, db_user_version(d));
  return EXIT_OK;
}

/* adapt-import: one line (or JSON object) per site of each log. */
typedef struct adapt_out {
  jw w;
  int json;
} adapt_out;

static void adapt_site(void *ctx, const db_adapt_site *s) {
  adapt_out *a = ctx;
  if (!a->json) {
    printf("session %s site %d: %s %s %s: %lld reports, %lld failures", s->session, s->site, s->target, s->kernel,
           s->vars, s->reports, s->failures);
    if (s->campaign) printf("; campaign %lld (%s), %d trials", (long long)s->campaign, s->workload, s->trials);
    if (s->pin_version) printf("; pinned version %lld", (long long)s->pin_version);
    printf("%s%s\n", s->skipped ? "; " : "", s->skipped ? s->skipped : "");
    return;
  }
  jw *w = &a->w;
  jw_begin(w, '{');
  jw_key(w, "session"), jw_str(w, s->session);
  jw_key(w, "site"), jw_int(w, s->site);
  jw_key(w, "target"), jw_str(w, s->target);
  jw_key(w, "kernel"), jw_str(w, s->kernel);
  jw_key(w, "vars"), jw_str(w, s->vars);
  jw_key(w, "workload"), s->workload ? jw_str(w, s->workload) : jw_raw(w, "null");
  jw_key(w, "reports"), jw_int(w, s->reports);
  jw_key(w, "failures"), jw_int(w, s->failures);
  jw_key(w, "campaign"), jw_int(w, s->campaign);
  jw_key(w, "trials"), jw_int(w, s->trials);
  jw_key(w, "pin_version"), jw_int(w, s->pin_version);
  jw_key(w, "skipped"), s->skipped ? jw_str(w, s->skipped) : jw_raw(w, "null");
  jw_end(w, '}');
}

static int dc_adapt_import(db *d, const dopts *o, const char *cmd) {
  adapt_out a = {.json = o->json};
  if (a.json) jw_init(&a.w, stdout), jw_begin(&a.w, '[');
  int rc = EXIT_OK;
  for (int i = 0; i < o->nfiles && rc == EXIT_OK; i++) {
    rt_err err = {0};
    if (db_adapt_import(d, o->files[i], o->pin, o->skip_unmatched, adapt_site, &a, &err))
      rc = cli_fail(cmd, "%s (nothing of this log stored)", err.msg);
  }
  if (a.json) jw_end(&a.w, ']');
  return rc;
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

/* Read and check an import's input (--t4 or --kt-cache, with --space
** and its --set bindings when given); NULL after reporting. *space gets
** the loaded T1 space (the import borrows it; free it after). */
static db_import *import_read(const dopts *o, const char *cmd, sp_space **space) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int nb = o->set ? sp_parse_bindings(o->set, a, &b, &err) : 0;
  *space = nb >= 0 && o->space ? sp_load_file(o->space, b, nb, &err) : NULL;
  db_import *im = NULL;
  if (nb >= 0 && (!o->space || *space)) {
    db_import_opts io = {.format = o->t4 ? "t4" : "kt-cache", .space = *space, .set = b,
                         .nset = nb, .kernel = o->kernel, .dtype = o->dtype};
    im = db_import_read(o->t4 ? o->t4 : o->kt, &io, &err);
  }
  free(b);
  sx_arena_free(a);
  if (!im) {
    sp_free(*space);
    *space = NULL;
    cli_fail(cmd, "%s (nothing was imported)", err.msg);
  }
  return im;
}

static int dc_import(db *d, const dopts *o, const char *cmd) {
  int64_t campaign;
  rt_err err = {0};
  if (db_import_store(d, o->import, o->target, &campaign, &err))
    return cli_fail(cmd, "%s (nothing was imported)", err.msg);
  const sp_space *sp = db_import_space(o->import);
  char *key = db_workload_key(db_import_kernel(o->import), db_import_dtype(o->import), sp);
  printf("imported %d trials as campaign %lld: %s on %s, %s, space %s (%d parameters)\n",
         db_import_count(o->import), (long long)campaign, key, o->target,
         db_import_format(o->import), o->space ? o->space : "inferred from the file", sp_nparams(sp));
  free(key);
  return EXIT_OK;
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
    if (cli_key_matches(keys[i], set, nset)) {
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

/* ---- Pins, tags, export, merge ---- */

typedef struct pin_ctx {
  jw w;
  int json, n;
  int64_t want, trial;   /* find_pin: the version sought, its trial, time and flag */
  double time_s;
  int foreign, predicted;
} pin_ctx;

/* One pin version as a JSON object or a text line ('*' marks current). */
static int print_pin(void *ctx, const db_pin_info *p) {
  pin_ctx *c = ctx;
  c->n++;
  if (c->json) {
    jw_begin(&c->w, '{');
    jw_key(&c->w, "target"); jw_str(&c->w, p->target);
    jw_key(&c->w, "workload"); jw_str(&c->w, p->workload_key);
    jw_key(&c->w, "version"); jw_int(&c->w, p->version);
    jw_key(&c->w, "current"); jw_bool(&c->w, p->current);
    jw_key(&c->w, "created"); jw_str(&c->w, p->created);
    jw_key(&c->w, "trial"); jw_int(&c->w, p->trial_id);
    jw_key(&c->w, "time_s"); jw_double(&c->w, p->time_s);
    jw_key(&c->w, "pinned_by"); jw_str(&c->w, p->by);
    jw_key(&c->w, "reason"); jw_str(&c->w, p->reason);
    jw_key(&c->w, "foreign_origin"); jw_bool(&c->w, p->foreign_origin);
    jw_key(&c->w, "predicted"); jw_bool(&c->w, p->predicted);
    jw_key(&c->w, "config"); jw_raw(&c->w, p->config);
    jw_end(&c->w, '}');
  } else {
    printf("%c v%-3lld %s  trial %-8lld %.6g s%s  by %s%s  (%s)  %s\n", p->current ? '*' : ' ',
           (long long)p->version, p->created, (long long)p->trial_id, p->time_s,
           p->predicted ? " predicted" : "", p->by, p->foreign_origin ? "  [foreign]" : "", p->reason,
           p->config);
  }
  return 0;
}

/* Note the current version c->want (for pin's report). */
static int find_pin(void *ctx, const db_pin_info *p) {
  pin_ctx *c = ctx;
  if (p->version != c->want || !p->current) return 0;
  c->trial = p->trial_id;
  c->time_s = p->time_s;
  c->foreign = p->foreign_origin;
  c->predicted = p->predicted;
  c->n++;
  return 1;
}

/* The highest version of a pin so far, into c->want. */
static int top_pin(void *ctx, const db_pin_info *p) {
  pin_ctx *c = ctx;
  if (p->version > c->want) c->want = p->version;
  return 0;
}

static int dc_pin(db *d, const dopts *o, const char *cmd) {
  char *key = workload_key(d, o, cmd);
  if (!key) return EXIT_FAIL;
  db_pin_req r = {o->target, o->kernel, key, o->trial, o->by, o->reason};
  rt_err err = {0};
  int64_t version, top;
  pin_ctx c = {.n = 0};
  int rc = db_pin_history(d, o->target, o->kernel, key, top_pin, &c, &err) < 0 ||
           db_pin(d, &r, &version, &err);
  top = c.want;   /* the trial already current adds no version (db.h) */
  if (!rc) {
    c.want = version;
    rc = db_pin_history(d, o->target, o->kernel, key, find_pin, &c, &err) < 0 || c.n != 1;
  }
  if (rc) {
    free(key);
    return cli_fail(cmd, "%s", err.msg[0] ? err.msg : "the new pin was not found");
  }
  if (o->json) {
    jw_init(&c.w, stdout);
    jw_begin(&c.w, '{');
    jw_key(&c.w, "workload"); jw_str(&c.w, key);
    jw_key(&c.w, "version"); jw_int(&c.w, version);
    jw_key(&c.w, "trial"); jw_int(&c.w, c.trial);
    jw_key(&c.w, "time_s"); jw_double(&c.w, c.time_s);
    jw_key(&c.w, "foreign_origin"); jw_bool(&c.w, c.foreign);
    jw_key(&c.w, "predicted"); jw_bool(&c.w, c.predicted);
    jw_key(&c.w, "added"); jw_bool(&c.w, version > top);
    jw_end(&c.w, '}');
  } else if (version <= top) {
    printf("trial %lld is the current pin already (version %lld of %s on %s): nothing added\n",
           (long long)c.trial, (long long)version, key, o->target);
  } else {
    printf("pinned trial %lld as version %lld of %s on %s%s%s\n", (long long)c.trial,
           (long long)version, key, o->target,
           c.foreign ? " (foreign origin: not measured on this machine)" : "",
           c.predicted ? " (PREDICTED by the model: never measured)" : "");
  }
  free(key);
  return EXIT_OK;
}

static int dc_rollback(db *d, const dopts *o, const char *cmd) {
  char *key = workload_key(d, o, cmd);
  if (!key) return EXIT_FAIL;
  rt_err err = {0};
  int rc = db_pin_rollback(d, o->target, o->kernel, key, o->version, &err);
  if (!rc) printf("version %lld of %s on %s is current\n", (long long)o->version, key, o->target);
  free(key);
  return rc ? cli_fail(cmd, "%s", err.msg) : EXIT_OK;
}

static int dc_history(db *d, const dopts *o, const char *cmd) {
  char *key = workload_key(d, o, cmd);
  if (!key) return EXIT_FAIL;
  pin_ctx c = {.json = o->json};
  jw_init(&c.w, stdout);
  if (o->json) jw_begin(&c.w, '[');
  else printf("%s on %s\n", key, o->target);
  rt_err err = {0};
  int n = db_pin_history(d, o->target, o->kernel, key, print_pin, &c, &err);
  if (o->json) jw_end(&c.w, ']');
  free(key);
  if (n < 0) return cli_fail(cmd, "%s", err.msg);
  if (!o->json && n == 0) printf("  (never pinned)\n");
  return EXIT_OK;
}

static int print_tag(void *ctx, const char *name, const char *note, const char *created, int npins) {
  pin_ctx *c = ctx;
  if (c->json) {
    jw_begin(&c->w, '{');
    jw_key(&c->w, "name"); jw_str(&c->w, name);
    jw_key(&c->w, "note"); jw_str(&c->w, note);
    jw_key(&c->w, "created"); jw_str(&c->w, created);
    jw_key(&c->w, "pins"); jw_int(&c->w, npins);
    jw_end(&c->w, '}');
  } else {
    printf("%-16s %s  %d pins  %s\n", name, created, npins, note);
  }
  return 0;
}

static int dc_tag(db *d, const dopts *o, const char *cmd) {
  rt_err err = {0};
  if (o->name) {
    int n;
    if (db_tag(d, o->name, o->note, &n, &err)) return cli_fail(cmd, "%s", err.msg);
    if (o->json) {
      jw w;
      jw_init(&w, stdout);
      jw_begin(&w, '{');
      jw_key(&w, "name"); jw_str(&w, o->name);
      jw_key(&w, "pins"); jw_int(&w, n);
      jw_end(&w, '}');
    } else {
      printf("tagged %d pins as %s\n", n, o->name);
    }
    return EXIT_OK;
  }
  pin_ctx c = {.json = o->json};
  jw_init(&c.w, stdout);
  if (o->json) jw_begin(&c.w, '[');
  int n = o->list ? db_tag_list(d, print_tag, &c, &err) : db_tag_show(d, o->show, print_pin, &c, &err);
  if (o->json && n >= 0) jw_end(&c.w, ']');
  return n < 0 ? cli_fail(cmd, "%s", err.msg) : EXIT_OK;
}

/* Write the export to --out through rt_out (a temporary file renamed on
** success: a failed export leaves an existing file as it was; the database
** and its -wal, -shm and -journal files are refused as outputs), or to
** stdout. */
static int dc_export(db *d, const dopts *o, const char *cmd) {
  char *key = o->set ? workload_key(d, o, cmd) : NULL;
  if (o->set && !key) return EXIT_FAIL;
  rt_err err = {0};
  rt_out out = {0};
  int n;
  if (o->out && cli_out_open(&out, cmd, o->out, o->db, NULL)) {
    free(key);
    return EXIT_FAIL;
  }
  int rc = 0;
  {
    rc = db_export(d, o->target, o->kernel, key, o->format, o->out ? out.f : stdout, &n, &err);
    if (o->out && rc) rt_out_abort(&out);
    else if (o->out) rc = rt_out_commit(&out, &err);
  }
  free(key);
  if (rc) return cli_fail(cmd, "%s%s", err.msg, o->out ? " (the output file was not changed)" : "");
  if (o->out) printf("exported %d %s to %s\n", n, strcmp(o->format, "kt-cache") ? "trials" : "cache entries",
                     o->out);
  return EXIT_OK;
}

static int dc_merge(db *d, const dopts *o, const char *cmd) {
  for (int i = 0; i < o->nfiles; i++) {
    rt_err err = {0};
    db_merge_stats s;
    if (db_merge(d, o->files[i], &s, &err))
      return cli_fail(cmd, "%s (nothing was merged from it%s)", err.msg,
                      i ? "; the files before it were" : "");
    printf("%s: %d campaigns, %d trials merged, %d duplicate trials skipped\n", o->files[i],
           s.campaigns, s.trials, s.duplicates);
  }
  return EXIT_OK;
}

/* The source is opened read-only by db_copy itself (any schema version). */
static int dc_copy(db *d, const dopts *o, const char *cmd) {
  (void)d;
  rt_err err = {0};
  int v;
  if (db_copy(o->db, o->out, &v, &err)) return cli_fail(cmd, "%s (%s was not written)", err.msg, o->out);
  printf("copied %s (schema version %d) to %s\n", o->db, v, o->out);
  return EXIT_OK;
}

/* ---- The code generators' view ---- */

static int dc_export_header(db *d, const dopts *o, const char *cmd) {
  (void)d; /* the header is read through the reader library, like a user would */
  rt_str h = {0};
  rt_err err = {0};
  if (db_export_header(o->db, o->target, o->kernel, o->tag, &h, &err)) {
    free(h.s);
    return cli_fail(cmd, "%s", err.msg);
  }
  if (!o->out) {
    int ok = fputs(h.s, stdout) >= 0 && fflush(stdout) == 0;
    free(h.s);
    return ok ? EXIT_OK : cli_fail(cmd, "stdout: cannot write: %s", strerror(errno));
  }
  rt_out out;   /* the README's "Output files": never the database itself */
  int rc = cli_out_open(&out, cmd, o->out, o->db, NULL);
  if (!rc) {
    fputs(h.s, out.f);
    if (rt_out_commit(&out, &err)) rc = cli_fail(cmd, "%s", err.msg);
  }
  free(h.s);
  return rc;
}

static const char *const match_names[] = {"", "exact", "nearest", "default"};
static const char *const level_names[] = {"", "target", "model", "arch", "backend", "default"};

static int dc_lookup(db *d, const dopts *o, const char *cmd) {
  (void)d;
  rtdb *r;
  char why[1024];
  /* the caller's chain: the options, else (--here) this machine's, else
  ** the stored target's of that name (rtdb_target) */
  rtdb_target on = {.name = o->target, .fingerprint = o->fingerprint, .model = o->model, .arch = o->arch,
                    .backend = o->backend, .max_level = o->max_level};
  tg_desc here;
  if (o->here) {
    rt_err err = {0};
    if (tg_describe_name(o->target, &here, &err)) return cli_fail(cmd, "--here: %s", err.msg);
    on.fingerprint = here.fingerprint;
    if (!on.model) on.model = here.family.model;
    if (!on.arch) on.arch = here.family.arch;
    if (!on.backend) on.backend = here.family.backend;
  }
  int rc = rtdb_open_msg(o->db, &r, why, sizeof why);
  if (rc) return cli_fail(cmd, "%s (%s)", why, rtdb_errstr(rc));
  rtdb_result res;
  rc = rtdb_lookup_on(r, &on, o->kernel, o->set ? o->set : "", o->tag, &res);
  if (rc) {
    rc = cli_fail(cmd, "%s (%s)", rtdb_errmsg(r), rtdb_errstr(rc));
    rtdb_close(r);
    return rc;
  }
  rtdb_close(r);
  if (o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_begin(&w, '{');
    jw_key(&w, "match"); jw_str(&w, match_names[res.match]);
    jw_key(&w, "config"); jw_raw(&w, res.config);
    jw_key(&w, "workload"); jw_str(&w, res.workload);
    jw_key(&w, "pin_version"); jw_int(&w, res.pin_version);
    jw_key(&w, "time_s");
    if (res.time_s >= 0) jw_double(&w, res.time_s);
    else jw_raw(&w, "null");
    if (res.match == RTDB_NEAREST) { jw_key(&w, "distance"); jw_double(&w, res.distance); }
    jw_key(&w, "level"); jw_str(&w, level_names[res.level]);
    jw_key(&w, "target"); jw_str(&w, res.target);
    jw_key(&w, "fingerprint"); jw_str(&w, res.fingerprint);
    jw_key(&w, "predicted"); jw_bool(&w, res.predicted);
    jw_end(&w, '}');
  } else {
    /* the schedule last: scripts take it with tail -n 1 (scripts/demo) */
    printf("%s %s%s%s (pin version %d)\n", match_names[res.match], res.workload[0] ? "from " : "",
           res.workload, res.match == RTDB_DEFAULT ? "template default" : "", res.pin_version);
    if (res.level == RTDB_LEVEL_DEFAULT) printf("level default: nothing comparable pinned along the family\n");
    else printf("level %s: pinned on %s (fingerprint %s)%s\n", level_names[res.level], res.target,
                res.fingerprint, res.predicted ? "; PREDICTED by the model, never measured" : "");
    printf("%s\n", res.config);
  }
  return EXIT_OK;
}
