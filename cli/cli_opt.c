/*
** cli_opt.c -- option tables: one table per command gives both the parsing
** of its argv and its --help text (cli_opt.h states the invariants), and the
** "did you mean" suggestions for mistyped options, commands and names.
*/
#include "cli_opt.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../common/rt.h"

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

static int required(const cli_spec *s, const cli_opt *o) {
  return s->mask ? (o->required & s->mask) != 0 : o->required != 0;
}

static void opt_label(const cli_opt *o, char *buf, size_t cap) {
  int n = 0;
  if (o->short_name && o->name) n = snprintf(buf, cap, "-%c, --%s", o->short_name, o->name);
  else if (o->short_name) n = snprintf(buf, cap, "-%c", o->short_name);
  else n = snprintf(buf, cap, "--%s", o->name);
  if (o->kind == CLI_CHOICE)   /* the choices are the value's name: "--format jsonl|csv" */
    for (const char *const *c = o->choices; *c && n > 0 && (size_t)n < cap; c++)
      n += snprintf(buf + n, cap - (size_t)n, "%c%s", c == o->choices ? ' ' : '|', *c);
  else if (o->kind != CLI_FLAG && o->arg && n > 0 && (size_t)n < cap)
    snprintf(buf + n, cap - (size_t)n, " %s", o->arg);
}

void cli_help(FILE *f, const cli_spec *s) {
  fprintf(f, "usage: rooftune %s%s%s\n", s->cmd, s->usage && *s->usage ? " " : "", s->usage ? s->usage : "");
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
    if (w >= HELP_COL) fprintf(f, "\n%*s", HELP_COL, "");
    else fprintf(f, "%*s", HELP_COL - w, "");
    for (const char *p = h; *p; p++) {
      fputc(*p, f);
      if (*p == '\n') fprintf(f, "%*s", HELP_COL, "");
    }
    if (required(s, o)) fprintf(f, "%srequired", *h ? "; " : "");
    fputc('\n', f);
  }
  fprintf(f, "%s  -h, --help%*sthis help\n", any ? "" : "\noptions:\n", HELP_COL - 12, "");
  if (s->epilog) fprintf(f, "\n%s", s->epilog);
}

/* ---- usage errors ---- */

static void vusage(const cli_spec *s, const char *fmt, va_list ap) {
  fprintf(stderr, "rooftune %s: ", s->cmd);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\nusage: rooftune %s%s%s\n(rooftune %s --help lists the options)\n", s->cmd,
          s->usage && *s->usage ? " " : "", s->usage ? s->usage : "", s->cmd);
}

int cli_usage(const cli_spec *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vusage(s, fmt, ap);
  va_end(ap);
  return EXIT_USAGE;
}

int cli_unknown(const cli_spec *s, const char *what, const char *name, const char *const *cands,
                const char *hint) {
  const char *near = cands ? cli_suggest(name, cands) : NULL;
  return cli_usage(s, "unknown %s '%s'%s%s%s%s%s%s", what, name, near ? "; did you mean '" : "",
                   near ? near : "", near ? "'?" : "", hint ? " (" : "", hint ? hint : "", hint ? ")" : "");
}

/* ---- parsing ---- */

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

/* "a whole number in [lo, hi]" or "a whole number >= lo". */
static void whole_range(char *buf, size_t cap, const char *lo, const char *hi) {
  if (hi) snprintf(buf, cap, "a whole number in [%s, %s]", lo, hi);
  else snprintf(buf, cap, "a whole number >= %s", lo);
}

/* A decimal integer literal (an optional sign, then digits) into *neg and
** *mag; -1 if t is not one or does not fit 64 bits. */
static int int_literal(const char *t, int *neg, unsigned long long *mag) {
  *neg = *t == '-';
  if (*t == '-' || *t == '+') t++;
  if (*t < '0' || *t > '9') return -1;
  char *end;
  errno = 0;
  *mag = strtoull(t, &end, 10);
  return *end || errno == ERANGE ? -1 : 0;
}

/* A whole number written as an integer or as a number with no fraction
** ("7.0", "1e3"), exactly: 0 with *neg and *mag, -1 otherwise. */
static int whole_number(const char *t, int *neg, unsigned long long *mag) {
  if (!int_literal(t, neg, mag)) return 0;
  char *end;
  errno = 0;
  double d = strtod(t, &end);
  if (end == t || *end || errno == ERANGE || !isfinite(d) || d != floor(d) || fabs(d) > 9007199254740992.0)
    return -1;   /* beyond 2^53 a double is not exact: write the integer */
  *neg = d < 0;
  *mag = (unsigned long long)fabs(d);
  return 0;
}

/* Store a whole-number option; 0, or -1 with msg. */
static int store_whole(const cli_opt *o, const char *arg, char *msg, size_t cap) {
  int neg = 0;
  unsigned long long mag = 0;
  char lo[32], hi[32], range[96];
  int ok = !whole_number(arg, &neg, &mag);
  if (o->kind == CLI_UINT64) {
    unsigned long long l = o->lo > 0 ? (unsigned long long)o->lo : 0,
                       h = o->hi > o->lo ? (unsigned long long)o->hi : ULLONG_MAX;
    ok = ok && (!neg || !mag) && mag >= l && mag <= h;
    snprintf(lo, sizeof lo, "%llu", l);
    snprintf(hi, sizeof hi, "%llu", h);
    whole_range(range, sizeof range, lo, o->hi > o->lo ? hi : NULL);
    if (ok) *(uint64_t *)o->value = mag;
  } else {
    long long l = (long long)o->lo,
              h = o->hi > o->lo ? (long long)o->hi : o->kind == CLI_INT ? INT_MAX : LLONG_MAX;
    long long v = 0;
    if (ok && neg) ok = mag <= (unsigned long long)LLONG_MAX + 1, v = ok ? (long long)(0 - mag) : 0;
    else if (ok) ok = mag <= (unsigned long long)LLONG_MAX, v = (long long)mag;
    ok = ok && v >= l && v <= h;
    snprintf(lo, sizeof lo, "%lld", l);
    snprintf(hi, sizeof hi, "%lld", h);
    whole_range(range, sizeof range, lo, o->hi > o->lo ? hi : NULL);
    if (ok && o->kind == CLI_INT) *(int *)o->value = (int)v;
    else if (ok) *(int64_t *)o->value = v;
  }
  if (!ok) snprintf(msg, cap, "expected %s, got '%s'", range, arg);
  return ok ? 0 : -1;
}

/* Store a number option; 0, or -1 with msg. */
static int store_double(const cli_opt *o, const char *arg, char *msg, size_t cap) {
  char *end;
  errno = 0;
  double d = strtod(arg, &end);
  int lo_open = o->flags & CLI_OPEN_LO, hi_open = o->flags & CLI_OPEN_HI, bounded = o->hi > o->lo;
  int ok = end != arg && !*end && errno != ERANGE && isfinite(d) && (lo_open ? d > o->lo : d >= o->lo) &&
           (!bounded || (hi_open ? d < o->hi : d <= o->hi));
  if (ok) {
    *(double *)o->value = d;
    return 0;
  }
  if (bounded)
    snprintf(msg, cap, "expected a number in %c%g, %g%c, got '%s'", lo_open ? '(' : '[', o->lo, o->hi,
             hi_open ? ')' : ']', arg);
  else
    snprintf(msg, cap, "expected a number %s %g, got '%s'", lo_open ? ">" : ">=", o->lo, arg);
  return -1;
}

/* Store arg into o's value; 0, or EXIT_USAGE after reporting. */
static int store(const cli_spec *s, const cli_opt *o, const char *shown, const char *arg) {
  char msg[512] = "";
  int bad = 0;
  switch (o->kind) {
  case CLI_FLAG: *(int *)o->value = 1; return 0;
  case CLI_STRING:
  case CLI_LIST:
    if (o->check && o->check(arg, msg, sizeof msg)) {
      bad = 1;
    } else if (o->kind == CLI_STRING) {
      *(const char **)o->value = arg;
    } else {
      cli_strv *l = o->value;
      l->v = rt_realloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
      l->v[l->n++] = arg;
    }
    break;
  case CLI_INT:
  case CLI_INT64:
  case CLI_UINT64: bad = store_whole(o, arg, msg, sizeof msg); break;
  case CLI_DOUBLE: bad = store_double(o, arg, msg, sizeof msg); break;
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
      bad = 1;
    }
    break;
  case CLI_CALLBACK: bad = o->cb(o, arg, msg, sizeof msg) != 0; break;
  default: break;
  }
  return bad ? cli_usage(s, "%s: %s", shown, msg) : 0;
}

/* Check the operands against s->operands (invariant 3); 0 or EXIT_USAGE. */
static int check_operands(const cli_spec *s, char **opnd, int nop) {
  char words[256];
  snprintf(words, sizeof words, "%s", s->operands ? s->operands : "");
  int k = 0, rest = 0;
  for (char *save, *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
    int optional = *w == '[';
    char *name = w + optional;
    size_t len = strlen(name) - (size_t)optional;   /* without the brackets */
    rest = len > 3 && !strncmp(name + len - 3, "...", 3);
    if (k >= nop && !optional) {
      name[len - (rest ? 3 : 0)] = 0;
      return cli_usage(s, "%s is required", name);
    }
    k++;
    if (rest) break;
  }
  if (!rest && nop > k) return cli_usage(s, "unexpected argument '%s'", opnd[k]);
  return 0;
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
        rc = cli_usage(s, "%s does not apply to '%s'", shown, s->cmd);
        break;
      }
      const char **names = names_of(s);
      char want[80];
      snprintf(want, sizeof want, "%s", shown + (shown[1] == '-' ? 2 : 1));
      const char *near = cli_suggest(want, names);
      char hint[120] = "";
      if (near) snprintf(hint, sizeof hint, "; did you mean --%s?", near);
      free(names);
      rc = cli_usage(s, "unknown option %s%s", shown, hint);
      break;
    }
    size_t row = (size_t)(o - s->opts);
    if (seen[row] && o->kind != CLI_LIST) {
      rc = cli_usage(s, "%s given twice", shown);
      break;
    }
    seen[row] = 1;
    if (o->given) *o->given = 1;
    const char *arg = NULL;
    if (o->kind == CLI_FLAG) {
      if (inl) {
        rc = cli_usage(s, "%s takes no value (got '%s')", shown, inl);
        break;
      }
    } else if (inl) {
      arg = inl;
    } else if (i + 1 < argc) {
      arg = argv[++i];
    } else {
      rc = cli_usage(s, "%s needs a value (%s)", shown, o->arg ? o->arg : "an argument");
      break;
    }
    rc = store(s, o, shown, arg);
  }
  for (const cli_opt *o = s->opts; !rc && o->kind != CLI_END; o++)
    if (o->kind != CLI_GROUP && applies(s, o) && required(s, o) && !seen[o - s->opts]) {
      char label[96];
      opt_label(o, label, sizeof label);
      rc = cli_usage(s, "%s is required", label);
    }
  if (!rc) rc = check_operands(s, opnd, nop);
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
