/*
** cli.c -- command-table dispatch and the subcommand groups, error
** reporting, output files, the checks of option texts and names that
** every command shares (cli.h), and workload keys.
*/
#include "cli.h"

#include "../search_spaces/sp.h"
#include "../targets/host/hk.h"
#include "../targets/tg.h"
#include "../tuner/tu.h"

#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const cli_sub *cli_group_row(const cli_group *g, int i) {
  return (const cli_sub *)((const char *)g->rows + (size_t)i * g->stride);
}

/* "summary: a, b, c" wrapped at 79 columns under column `indent`. */
static void print_summary(FILE *f, const char *summary, const cli_group *g, int indent) {
  int col = indent + fprintf(f, "%s", summary);
  for (int i = 0; g && cli_group_row(g, i)->name; i++) {
    const char *name = cli_group_row(g, i)->name;
    int last = !cli_group_row(g, i + 1)->name, w = (int)strlen(name) + (last ? 0 : 1);
    const char *sep = i ? " " : ": ";
    if (col + (int)strlen(sep) + w > 79) col = fprintf(f, "\n%*s", indent, "") - 1;
    else col += fprintf(f, "%s", sep);
    col += fprintf(f, "%s%s", name, last ? "" : ",");
  }
  fputc('\n', f);
}

void cli_list(FILE *f, const char *prefix, const cli_cmd *cmds) {
  for (const cli_cmd *c = cmds; c->name; c++) {
    fprintf(f, "  %-10s ", c->name);
    print_summary(f, c->summary, c->group, 13);
  }
  fprintf(f, "\nRun '%s COMMAND --help' for a command's options.\n", prefix);
}

int cli_dispatch(const char *prefix, const cli_cmd *cmds, int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s COMMAND [options]\n\ncommands:\n", prefix);
    cli_list(stderr, prefix, cmds);
    return EXIT_USAGE;
  }
  const char *name = argv[1];
  if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
    printf("usage: %s COMMAND [options]\n\ncommands:\n", prefix);
    cli_list(stdout, prefix, cmds);
    return EXIT_OK;
  }
  for (const cli_cmd *c = cmds; c->name; c++)
    if (!strcmp(c->name, name)) return c->fn(argc - 1, argv + 1);
  const char *near = cli_suggest_rows(name, cmds, sizeof *cmds);
  if (near) fprintf(stderr, "%s: unknown command '%s'; did you mean '%s'?\n\ncommands:\n", prefix, name, near);
  else fprintf(stderr, "%s: unknown command '%s'\n\ncommands:\n", prefix, name);
  cli_list(stderr, prefix, cmds);
  return EXIT_USAGE;
}

/* The help of a group: its subcommands and their summaries. */
static void group_help(FILE *f, const char *group, const cli_group *g) {
  fprintf(f, "usage: rooftune %s SUBCOMMAND [options]\n\nsubcommands:\n", group);
  for (int i = 0; cli_group_row(g, i)->name; i++)
    fprintf(f, "  %-14s %s\n", cli_group_row(g, i)->name, cli_group_row(g, i)->summary);
  fprintf(f, "\nRun 'rooftune %s SUBCOMMAND --help' for its options.\n", group);
}

const void *cli_pick(const char *group, const cli_group *g, int argc, char **argv, int *rc) {
  *rc = EXIT_USAGE;
  if (argc < 2) {
    fprintf(stderr, "rooftune %s: a subcommand is required\n\n", group);
    group_help(stderr, group, g);
    return NULL;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    group_help(stdout, group, g);
    *rc = EXIT_OK;
    return NULL;
  }
  for (int i = 0; cli_group_row(g, i)->name; i++)
    if (!strcmp(cli_group_row(g, i)->name, argv[1])) return cli_group_row(g, i);
  const char *near = cli_suggest_rows(argv[1], g->rows, g->stride);
  if (near) fprintf(stderr, "rooftune %s: unknown subcommand '%s'; did you mean '%s'?\n\n", group, argv[1], near);
  else fprintf(stderr, "rooftune %s: unknown subcommand '%s'\n\n", group, argv[1]);
  group_help(stderr, group, g);
  return NULL;
}

int cli_fail(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rooftune %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return EXIT_FAIL;
}

/* Whether path names db's side file (dbpath + suffix), existing or not: the
** folders compared after resolving links, the names as text. */
static int names_side_file(const char *path, const char *dbpath, const char *suffix) {
  char *pc = rt_strdup(path), *dc = rt_strdup(dbpath);
  char *pslash = strrchr(pc, '/'), *dslash = strrchr(dc, '/');
  const char *pbase = pslash ? pslash + 1 : pc, *dbase = dslash ? dslash + 1 : dc;
  if (pslash) *pslash = 0;
  if (dslash) *dslash = 0;
  char pdir[PATH_MAX], ddir[PATH_MAX];
  int same = 0;
  if (realpath(pslash ? (*pc ? pc : "/") : ".", pdir) && realpath(dslash ? (*dc ? dc : "/") : ".", ddir) &&
      !strcmp(pdir, ddir)) {
    size_t n = strlen(dbase);
    same = !strncmp(pbase, dbase, n) && !strcmp(pbase + n, suffix);
  }
  free(pc);
  free(dc);
  return same;
}

int cli_out_open(rt_out *o, const char *cmd, const char *path, const char *dbpath,
                 const char *const *inputs) {
  static const char *const side[] = {"", "-wal", "-shm", "-journal"};
  enum { NSIDE = sizeof side / sizeof *side };
  /* SQLite makes the side files when it needs them: refused by name too */
  for (int i = 1; dbpath && path && i < NSIDE; i++)
    if (names_side_file(path, dbpath, side[i]))
      return cli_fail(cmd, "%s: is the database's %s file (SQLite's); refusing to write it", path, side[i] + 1);
  int n = 0;
  while (inputs && inputs[n]) n++;
  rt_str names[NSIDE] = {{0}};
  const char **protect = rt_calloc((size_t)n + NSIDE + 1, sizeof *protect);
  int k = 0;
  for (int i = 0; dbpath && i < NSIDE; i++) {
    rt_str_printf(&names[i], "%s%s", dbpath, side[i]);
    protect[k++] = names[i].s;
  }
  for (int i = 0; i < n; i++) protect[k++] = inputs[i];
  rt_err err = {0};
  int rc = rt_out_open(o, path, protect, &err);
  for (int i = 0; i < NSIDE; i++) free(names[i].s);
  free(protect);
  return rc ? cli_fail(cmd, "%s", err.msg) : 0;
}

/* ---- Checks of option texts, and names (cli.h) ---- */

int cli_check_set(const char *arg, char *msg, size_t cap) {
  rt_err err = {0};
  sx_arena *a = sx_arena_new();
  sp_binding *b = NULL;
  int n = sp_parse_bindings(arg, a, &b, &err);
  free(b);
  sx_arena_free(a);
  if (n >= 0) return 0;
  const char *m = err.msg;   /* "--set ..." is the option's name, said before it */
  if (!strncmp(m, "--set: ", 7)) m += 7;
  else if (!strncmp(m, "--set ", 6)) m += 6;
  snprintf(msg, cap, "%s", m);
  return -1;
}

int cli_check_budget(const char *arg, char *msg, size_t cap) {
  char *end;
  errno = 0;
  double v = strtod(arg, &end);
  int ok = end != arg && errno != ERANGE &&
           (!strcmp(end, "%") ? v > 0 && v <= 100 : !*end && v >= 1 && v == floor(v) && v < 1e15);
  if (!ok) snprintf(msg, cap, "expected N evaluations (a whole number >= 1) or P%% of the space (0 < P <= 100), got '%s'", arg);
  return ok ? 0 : -1;
}

int cli_check_fingerprint(const char *arg, char *msg, size_t cap) {
  size_t n = strlen(arg);
  if (n && n <= 32 &&
      strspn(arg, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == n)
    return 0;
  snprintf(msg, cap, "expected the start of a stored target's fingerprint (1 to 32 hex digits, or external "
           "for imported results), got '%s'", arg);
  return -1;
}

int cli_find_target(const cli_spec *s, const char *name, tg_target *t) {
  rt_err err = {0};
  if (!tg_resolve(name, t, &err)) return 0;
  const char *names[64];
  int n = 0;
  for (int i = 0; tg_backends[i] && n < 63; i++) names[n++] = tg_backends[i]->name;
  names[n] = NULL;
  for (int i = 0; tg_backends[i]; i++) {   /* one of ours, malformed */
    tg_target u;
    rt_err e2 = {0};
    if (tg_backends[i]->parse(name, &u, &e2) < 0) return cli_usage(s, "%s", e2.msg);
  }
  return cli_unknown(s, "target", name, names, "rooftune targets lists them");
}

const kn_kernel *cli_kernel(const cli_spec *s, const char *target, const char *kernel, int *rc) {
  tg_target tt, *t = &tt;
  if ((*rc = cli_find_target(s, target, t))) return NULL;
  const char *names[64];
  int n = 0;
  const kn_kernel *k = tg_kernel(t, kernel);
  if (k) return k;
  for (int i = 0; t->be->kernels[i] && n < 63; i++) names[n++] = t->be->kernels[i]->name;
  names[n] = NULL;
  const char *near = cli_suggest(kernel, names);
  *rc = cli_usage(s, "unknown kernel '%s' on target %s%s%s%s (rooftune kernels --target %s lists them)", kernel,
                  target, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "", t->name);
  return NULL;
}

const tu_strategy *cli_strategy(const cli_spec *s, const char *name, int *rc) {
  const tu_strategy *S = tu_strategy_find(name);
  if (S) return S;
  const char *names[64];
  int n = 0;
  for (int i = 0; tu_strategies[i] && n < 63; i++) names[n++] = tu_strategies[i]->name;
  names[n] = NULL;
  char hint[96];
  snprintf(hint, sizeof hint, "rooftune %s --help lists them", s->cmd);
  *rc = cli_unknown(s, "strategy", name, names, hint);
  return NULL;
}

char *cli_key_bindings(const char *key) {
  const char *rest = strchr(key, ' ');
  rest = rest ? strchr(rest + 1, ' ') : NULL;
  if (!rest) return NULL;
  char *text = rt_strdup(rest + 1);
  for (char *p = text; *p; p++)
    if (*p == ' ') *p = ',';
  return text;
}

int cli_key_matches(const char *key, const sp_binding *set, int nset) {
  char *text = cli_key_bindings(key);
  if (!text) return nset == 0;
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
