/*
** cli_opt.c -- option tables: one table per command gives both the parsing
** of its argv and its --help text (cli.h states the invariants), and the
** "did you mean" suggestions for mistyped options, commands and names.
*/
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cli_strv_free(cli_strv *l) {
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

/* ---- suggestions ---- */

/* Optimal string alignment distance (Damerau-Levenshtein with adjacent
** transpositions), capped: names are short. */
static int edit_distance(const char *a, const char *b) {
  size_t n = strlen(a), m = strlen(b);
  if (n > 63 || m > 63) return 99;
  int d[64][64];
  for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= n; i++)
    for (size_t j = 1; j <= m; j++) {
      int cost = a[i - 1] != b[j - 1];
      int v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (d[i - 1][j - 1] + cost < v) v = d[i - 1][j - 1] + cost;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[n][m];
}

const char *cli_suggest_rows(const char *word, const void *table, size_t stride) {
  if (!word || !*word) return NULL;
  size_t len = strlen(word);
  int limit = (int)(len / 3) > 1 ? (int)(len / 3) : 1;
  const char *best = NULL;
  int bestd = limit + 1;
  for (const char *row = table; *(const char *const *)row; row += stride) {
    const char *c = *(const char *const *)row;
    int dist = strncmp(word, c, len) == 0 ? 0 : edit_distance(word, c);
    if (dist < bestd) best = c, bestd = dist;
  }
  return best;
}

const char *cli_suggest(const char *word, const char *const *cands) {
  return cli_suggest_rows(word, cands, sizeof *cands);
}

/* ---- help ---- */

#define HELP_COL 21   /* where the help text of an option starts */

static int applies(const cli_spec *s, const cli_opt *o) {
  return !s->mask || !o->mask || (o->mask & s->mask);
}

static void opt_label(const cli_opt *o, char *buf, size_t cap) {
  int n = 0;
  if (o->short_name && o->name) n = snprintf(buf, cap, "-%c, --%s", o->short_name, o->name);
  else if (o->short_name) n = snprintf(buf, cap, "-%c", o->short_name);
  else n = snprintf(buf, cap, "--%s", o->name);
  if (o->kind != CLI_FLAG && o->arg && n > 0 && (size_t)n < cap) snprintf(buf + n, cap - (size_t)n, " %s", o->arg);
}

void cli_help(FILE *f, const cli_spec *s) {
  fprintf(f, "usage: rooftune %s %s\n", s->cmd, s->usage ? s->usage : "");
  if (s->about) fprintf(f, "\n%s\n", s->about);
  int any = 0;
  for (const cli_opt *o = s->opts; o->kind != CLI_END; o++) {
    if (!applies(s, o)) continue;
    if (o->kind == CLI_GROUP) {
      fprintf(f, "\n%s:\n", o->name);
      any = 1;
      continue;
    }
    if (!any) fprintf(f, "\noptions:\n");
    any = 1;
    char label[96];
    opt_label(o, label, sizeof label);
    int w = fprintf(f, "  %s", label);
    const char *h = o->help ? o->help : "";
    fprintf(f, "%*s", w < HELP_COL ? HELP_COL - w : 1, "");
    for (const char *p = h; *p; p++) {
      fputc(*p, f);
      if (*p == '\n') fprintf(f, "%*s", HELP_COL + 2, "");
    }
    if (o->kind == CLI_CHOICE && o->choices) {
      fprintf(f, "%s(", *h ? " " : "");
      for (const char *const *c = o->choices; *c; c++) fprintf(f, "%s%s", c == o->choices ? "" : ", ", *c);
      fputc(')', f);
    }
    fputc('\n', f);
  }
  fprintf(f, "%s  -h, --help%*sthis help\n", any ? "" : "\noptions:\n", HELP_COL - 12, "");
  if (s->epilog) fprintf(f, "\n%s", s->epilog);
}

/* ---- parsing ---- */

static int usage_error(const cli_spec *s, const char *fmt, const char *a, const char *b, const char *c) {
  fprintf(stderr, "rooftune %s: ", s->cmd);
  fprintf(stderr, fmt, a, b, c);
  fprintf(stderr, "\nusage: rooftune %s %s\n(rooftune %s --help lists the options)\n", s->cmd,
          s->usage ? s->usage : "", s->cmd);
  return EXIT_USAGE;
}

static const cli_opt *find_long(const cli_spec *s, const char *name, size_t len) {
  for (const cli_opt *o = s->opts; o->kind != CLI_END; o++)
    if (o->kind != CLI_GROUP && o->name && strlen(o->name) == len && !strncmp(o->name, name, len))
      return o;
  return NULL;
}

static const cli_opt *find_short(const cli_spec *s, char c) {
  for (const cli_opt *o = s->opts; o->kind != CLI_END; o++)
    if (o->kind != CLI_GROUP && o->short_name == c) return o;
  return NULL;
}

/* The options of this subcommand as a NULL-terminated name list (for
** suggestions); caller frees. */
static const char **names_of(const cli_spec *s) {
  size_t n = 0;
  for (const cli_opt *o = s->opts; o->kind != CLI_END; o++) n++;
  const char **v = rt_calloc(n + 2, sizeof *v);
  size_t k = 0;
  for (const cli_opt *o = s->opts; o->kind != CLI_END; o++)
    if (o->kind != CLI_GROUP && o->name && applies(s, o)) v[k++] = o->name;
  v[k++] = "help";
  v[k] = NULL;
  return v;
}

static int whole_number(const char *t, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double d = strtod(t, &end);
  if (end == t || *end || errno == ERANGE || !isfinite(d) || d != floor(d)) return -1;
  if (d < lo || (hi > lo && d > hi)) return -1;
  *out = d;
  return 0;
}

/* Store arg into o's value; 0, or EXIT_USAGE after reporting. */
static int store(const cli_spec *s, const cli_opt *o, const char *shown, const char *arg) {
  char range[96] = "", msg[256] = "";
  double d;
  switch (o->kind) {
  case CLI_FLAG: *(int *)o->value = 1; return 0;
  case CLI_STRING: *(const char **)o->value = arg; return 0;
  case CLI_LIST: {
    cli_strv *l = o->value;
    l->v = rt_realloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
    l->v[l->n++] = arg;
    return 0;
  }
  case CLI_INT:
  case CLI_ULONG: {
    double lo = o->lo, hi = o->hi;
    if (o->kind == CLI_INT && !(hi > lo)) hi = 2147483647.0;
    if (o->kind == CLI_ULONG && lo < 0) lo = 0;
    if (o->kind == CLI_ULONG && !(hi > lo)) hi = 9007199254740992.0;   /* exact in a double */
    if (whole_number(arg, lo, hi, &d)) {
      snprintf(range, sizeof range, "a whole number in [%.17g, %.17g]", lo, hi);
      return usage_error(s, "%s: expected %s, got '%s'", shown, range, arg);
    }
    if (o->kind == CLI_INT) *(int *)o->value = (int)d;
    else *(unsigned long *)o->value = (unsigned long)d;
    return 0;
  }
  case CLI_DOUBLE: {
    char *end;
    errno = 0;
    d = strtod(arg, &end);
    if (end == arg || *end || errno == ERANGE || !isfinite(d) || d < o->lo || (o->hi > o->lo && d > o->hi)) {
      if (o->hi > o->lo) snprintf(range, sizeof range, "a number in [%g, %g]", o->lo, o->hi);
      else snprintf(range, sizeof range, "a number >= %g", o->lo);
      return usage_error(s, "%s: expected %s, got '%s'", shown, range, arg);
    }
    *(double *)o->value = d;
    return 0;
  }
  case CLI_CHOICE:
    for (int i = 0; o->choices[i]; i++)
      if (!strcmp(o->choices[i], arg)) {
        *(int *)o->value = i;
        return 0;
      }
    {
      rt_str list = {0};
      for (int i = 0; o->choices[i]; i++) rt_str_printf(&list, "%s%s", i ? ", " : "", o->choices[i]);
      const char *near = cli_suggest(arg, o->choices);
      char hint[96] = "";
      if (near) snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
      snprintf(msg, sizeof msg, "'%s' is not one of %s%s", arg, list.s, hint);
      free(list.s);
      return usage_error(s, "%s: %s%s", shown, msg, "");
    }
  case CLI_CALLBACK:
    if (o->cb(o, arg, msg, sizeof msg)) return usage_error(s, "%s: %s%s", shown, msg, "");
    return 0;
  default: return 0;
  }
}

int cli_parse(const cli_spec *s, int argc, char **argv, int *nopnd) {
  size_t nrows = 0;
  for (const cli_opt *o = s->opts; o->kind != CLI_END; o++) nrows++;
  unsigned char *seen = rt_calloc(nrows + 1, 1);
  char **opnd = rt_calloc((size_t)argc + 1, sizeof *opnd);
  int nop = 0, rc = 0, only_operands = 0;
  for (int i = 1; i < argc && !rc; i++) {
    char *a = argv[i];
    if (only_operands || a[0] != '-' || !a[1]) {
      opnd[nop++] = a;
      continue;
    }
    if (!strcmp(a, "--")) {
      only_operands = 1;
      continue;
    }
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      cli_help(stdout, s);
      rc = CLI_HELP;
      break;
    }
    const cli_opt *o;
    const char *inl = NULL;
    char shown[80];
    if (a[1] == '-') {
      const char *eq = strchr(a + 2, '=');
      size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
      o = find_long(s, a + 2, len);
      if (eq) inl = eq + 1;
      snprintf(shown, sizeof shown, "--%.*s", (int)len, a + 2);
    } else {
      o = a[2] ? NULL : find_short(s, a[1]);
      snprintf(shown, sizeof shown, "%s", a);
    }
    if (!o || !applies(s, o)) {
      if (o) {
        rc = usage_error(s, "%s does not apply to '%s'%s", shown, s->cmd, "");
        break;
      }
      const char **names = names_of(s);
      char want[80];
      snprintf(want, sizeof want, "%s", shown + (shown[1] == '-' ? 2 : 1));
      const char *near = cli_suggest(want, names);
      char hint[120] = "";
      if (near) snprintf(hint, sizeof hint, "; did you mean --%s?", near);
      free(names);
      rc = usage_error(s, "unknown option %s%s%s", shown, hint, "");
      break;
    }
    size_t row = (size_t)(o - s->opts);
    if (seen[row] && o->kind != CLI_LIST) {
      rc = usage_error(s, "%s given twice%s%s", shown, "", "");
      break;
    }
    seen[row] = 1;
    if (o->given) *o->given = 1;
    const char *arg = NULL;
    if (o->kind == CLI_FLAG) {
      if (inl) {
        rc = usage_error(s, "%s takes no value (got '%s')%s", shown, inl, "");
        break;
      }
    } else if (inl) {
      arg = inl;
    } else if (i + 1 < argc) {
      arg = argv[++i];
    } else {
      rc = usage_error(s, "%s needs a value (%s)%s", shown, o->arg ? o->arg : "an argument", "");
      break;
    }
    rc = store(s, o, shown, arg);
  }
  if (rc)   /* help or an error: the command returns at once, owning nothing */
    for (const cli_opt *o = s->opts; o->kind != CLI_END; o++)
      if (o->kind == CLI_LIST) cli_strv_free(o->value);
  if (!rc) {
    for (int k = 0; k < nop; k++) argv[1 + k] = opnd[k];
    if (1 + nop < argc) argv[1 + nop] = NULL;
    *nopnd = nop;
  }
  free(opnd);
  free(seen);
  return rc;
}
