/*
** cli.c -- command-table dispatch, error and usage reporting, and the
** streaming JSON writer shared by every command.
*/
#include "cli.h"

#include "../search_spaces/sp.h"

#include <getopt.h>
#include <limits.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cli_list(FILE *f, const char *prefix, const cli_cmd *cmds) {
  for (const cli_cmd *c = cmds; c->name; c++)
    fprintf(f, "  %-10s %s\n", c->name, c->summary);
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

const void *cli_pick(const char *group, const void *table, size_t stride, int argc,
                     char **argv, void (*help)(FILE *f), int *rc) {
  *rc = EXIT_USAGE;
  if (argc < 2) {
    help(stderr);
    return NULL;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    help(stdout);
    *rc = EXIT_OK;
    return NULL;
  }
  for (const char *row = table; *(const char *const *)row; row += stride)
    if (!strcmp(*(const char *const *)row, argv[1])) return row;
  const char *near = cli_suggest_rows(argv[1], table, stride);
  if (near) fprintf(stderr, "rooftune %s: unknown subcommand '%s'; did you mean '%s'?\n\n", group, argv[1], near);
  else fprintf(stderr, "rooftune %s: unknown subcommand '%s'\n\n", group, argv[1]);
  help(stderr);
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

/* Whether path names db's side file (db + suffix), existing or not: the
** folders compared after resolving links, the names as text. */
static int names_side_file(const char *path, const char *db, const char *suffix) {
  char *pc = rt_strdup(path), *dc = rt_strdup(db);
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

int cli_out_open(rt_out *o, const char *cmd, const char *path, const char *db,
                 const char *const *inputs) {
  static const char *const side[] = {"", "-wal", "-shm", "-journal"};
  enum { NSIDE = sizeof side / sizeof *side };
  /* SQLite makes the side files when it needs them: refused by name too */
  for (int i = 1; db && path && i < NSIDE; i++)
    if (names_side_file(path, db, side[i]))
      return cli_fail(cmd, "%s: is the database's %s file (SQLite's); refusing to write it", path, side[i] + 1);
  int n = 0;
  while (inputs && inputs[n]) n++;
  rt_str names[NSIDE] = {{0}};
  const char **protect = rt_calloc((size_t)n + NSIDE + 1, sizeof *protect);
  int k = 0;
  for (int i = 0; db && i < NSIDE; i++) {
    rt_str_printf(&names[i], "%s%s", db, side[i]);
    protect[k++] = names[i].s;
  }
  for (int i = 0; i < n; i++) protect[k++] = inputs[i];
  rt_err err = {0};
  int rc = rt_out_open(o, path, protect, &err);
  for (int i = 0; i < NSIDE; i++) free(names[i].s);
  free(protect);
  return rc ? cli_fail(cmd, "%s", err.msg) : 0;
}

int cli_double(const char *s, double lo, double *out) {
  char *end;
  *out = strtod(s, &end);
  return *end || end == s || !(*out >= lo) ? -1 : 0;
}

const char *cli_optname(const struct option *table, int val) {
  for (; table->name; table++)
    if (table->val == val) return table->name;
  return "";
}

int cli_usage(const char *cmd, const char *usage, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "rooftune %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nusage: rooftune %s %s\n", cmd, usage);
  va_end(ap);
  return EXIT_USAGE;
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
