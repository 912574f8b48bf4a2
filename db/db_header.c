/*
** db_header.c -- the C-header export (db_header.h). The pinned workloads
** come from rtdb_pins, so the target row, kernel row and pin scope are the
** ones rtdb_lookup would use; the generated lookup repeats rtdb_lookup's
** rule over them (see rtdb.h): the variables shared by every pinned
** workload are fixed and left out, the others (the "lookup variables",
** numeric) are passed as a double array in the workload's variable order.
**
** The generated header, for kernel K (P = K with non-identifier
** characters as '_'):
**
**   #define P_TUNED_NVARS n        the lookup variables, names in P_tuned_vars[]
**   enum { P_TUNED_EXACT = 1, P_TUNED_NEAREST = 2, P_TUNED_DEFAULT = 3 };
**   typedef struct P_tuned_result {
**     int match; const char *config, *workload; int pin_version;
**     double time_s, distance;
**   } P_tuned_result;
**   static inline int P_tuned_lookup(const double *vars, P_tuned_result *r);
**     0 with *r filled, or -1 when nothing is pinned near and there is no
**     template default. Needs <math.h> (link -lm).
**
** plus the table P_tuned_table[] (workload key, values, config, version,
** time; sorted by key), P_tuned_default (NULL when none) and
** P_tuned_fixed (the shared variables as text).
*/
#include "db_header.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rtdb.h"

#define MAXV 32

typedef struct hvar {
  char *name;
  int num;           /* 1: x; 0: s */
  double x;
  char *s;
} hvar;

typedef struct hrow {
  char *key, *config;
  int version, nv;
  double time_s;
  hvar v[MAXV];
} hrow;

typedef struct hctx {
  hrow *rows;
  int n;
  rt_err *err;
} hctx;

static const hvar *hfind(const hrow *r, const char *name) {
  for (int i = 0; i < r->nv; i++)
    if (!strcmp(r->v[i].name, name)) return &r->v[i];
  return NULL;
}

static int hequal(const hvar *a, const hvar *b) {
  return a->num == b->num && (a->num ? a->x == b->x : !strcmp(a->s, b->s));
}

/* One pinned workload: its variables as rtdb reads them (numbers and
** booleans numeric, strings and null text, "dtype" added). */
static int take(void *ctx, const char *key, const char *sizes, const char *dtype,
                const char *config, int version, double time_s) {
  hctx *c = ctx;
  json_error_t je;
  json_t *o = json_loads(sizes, 0, &je);
  if (!json_is_object(o) || json_object_size(o) >= MAXV) {
    json_decref(o);
    rt_err_set(c->err, "workload '%s': unexpected sizes %s", key, sizes);
    return 1;
  }
  c->rows = rt_realloc(c->rows, (size_t)(c->n + 1) * sizeof *c->rows);
  hrow *r = &c->rows[c->n++];
  *r = (hrow){.key = rt_strdup(key), .config = rt_strdup(config), .version = version,
              .time_s = time_s};
  const char *name;
  json_t *j;
  json_object_foreach(o, name, j) {
    hvar *v = &r->v[r->nv++];
    v->name = rt_strdup(name);
    v->num = json_is_number(j) || json_is_boolean(j);
    v->x = json_is_number(j) ? json_number_value(j) : json_is_true(j);
    v->s = v->num ? NULL : json_is_string(j) ? rt_strdup(json_string_value(j))
         : json_is_null(j) ? rt_strdup("None") : json_dumps(j, JSON_COMPACT);
  }
  json_decref(o);
  if (!hfind(r, "dtype")) r->v[r->nv++] = (hvar){rt_strdup("dtype"), 0, 0, rt_strdup(dtype)};
  return 0;
}

static int by_key(const void *a, const void *b) {
  const hrow *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : y->version - x->version;   /* a tag naming two versions: the higher first */
}

/* s as a C string literal (octal escapes outside printable ASCII; '?'
** escaped against trigraphs). */
static void literal(rt_str *out, const char *s) {
  rt_str_printf(out, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\' || *p == '?') rt_str_printf(out, "\\%c", *p);
    else if (*p >= 0x20 && *p < 0x7f) rt_str_printf(out, "%c", *p);
    else rt_str_printf(out, "\\%03o", *p);
  }
  rt_str_printf(out, "\"");
}

static const char lookup_fn[] =
    "static inline int P_tuned_lookup(const double *vars, P_tuned_result *r) {\n"
    "  const P_tuned_entry *best = 0;\n"
    "  double bd = 0;\n"
    "  for (int i = 0; i < (int)(sizeof P_tuned_table / sizeof *P_tuned_table); i++) {\n"
    "    const P_tuned_entry *e = &P_tuned_table[i];\n"
    "    double d2 = 0;\n"
    "    int candidate = e->workload != 0;\n"
    "    for (int v = 0; v < P_TUNED_NVARS && candidate; v++) {\n"
    "      double a = vars[v], b = e->vars[v];\n"
    "      if (a > 0 && b > 0 && isfinite(a) && isfinite(b))\n"
    "        d2 += (log2(a) - log2(b)) * (log2(a) - log2(b));\n"
    "      else candidate = a == b;  /* values <= 0 or infinite must be equal */\n"
    "    }\n"
    "    if (candidate && (!best || sqrt(d2) < bd)) best = e, bd = sqrt(d2);\n"
    "  }\n"
    "  if (best) {\n"
    "    r->match = bd == 0 ? P_TUNED_EXACT : P_TUNED_NEAREST;\n"
    "    r->config = best->config;\n"
    "    r->workload = best->workload;\n"
    "    r->pin_version = best->pin_version;\n"
    "    r->time_s = best->time_s;\n"
    "    r->distance = bd;\n"
    "    return 0;\n"
    "  }\n"
    "  if (!P_tuned_default) return -1;\n"
    "  r->match = P_TUNED_DEFAULT;\n"
    "  r->config = P_tuned_default;\n"
    "  r->workload = \"\";\n"
    "  r->pin_version = 0;\n"
    "  r->time_s = -1;\n"
    "  r->distance = 0;\n"
    "  return 0;\n"
    "}\n";

/* Append text with every "P_" / "P_TUNED" replaced by the prefix. */
static void with_prefix(rt_str *out, const char *text, const char *p, const char *P) {
  for (const char *s = text; *s;) {
    if (!strncmp(s, "P_TUNED", 7)) rt_str_printf(out, "%s_TUNED", P), s += 7;
    else if (!strncmp(s, "P_tuned", 7)) rt_str_printf(out, "%s_tuned", p), s += 7;
    else rt_str_printf(out, "%c", *s++);
  }
}

static int emit(rt_str *out, const hctx *c, const char *db_path, const char *target,
                const char *kernel, const char *tag, const char *def, rt_err *err) {
  /* lookup variables: those not shared by every row, in the first row's order */
  const char *lv[MAXV];
  int nlv = 0;
  rt_str fixed = {0};
  rt_str_printf(&fixed, "%s", "");
  for (int i = 0; c->n && i < c->rows[0].nv; i++) {
    const hvar *v0 = &c->rows[0].v[i];
    int shared = 1;
    for (int r = 1; r < c->n && shared; r++) {
      const hvar *v = hfind(&c->rows[r], v0->name);
      shared = v && hequal(v, v0);
    }
    if (shared) {
      if (v0->num) rt_str_printf(&fixed, "%s%s=%.17g", fixed.n ? " " : "", v0->name, v0->x);
      else rt_str_printf(&fixed, "%s%s='%s'", fixed.n ? " " : "", v0->name, v0->s);
    } else {
      lv[nlv++] = v0->name;
    }
  }
  for (int r = 0; r < c->n; r++) {
    for (int i = 0; i < c->rows[r].nv; i++) {
      const hvar *v = &c->rows[r].v[i];
      int known = !!hfind(&c->rows[0], v->name);
      for (int k = 0; k < nlv; k++)
        if (!strcmp(lv[k], v->name) && (!v->num || !isfinite(v->x))) known = 0;
      if (!known) {
        rt_err_set(err, "%s: variable '%s' of workload '%s' is not numeric or not in every "
                   "workload: the header export handles numeric variables only", kernel,
                   v->name, c->rows[r].key);
        free(fixed.s);
        return -1;
      }
    }
    if (c->rows[r].nv != c->rows[0].nv) {
      rt_err_set(err, "%s: workload '%s' has other variables than '%s'", kernel,
                 c->rows[r].key, c->rows[0].key);
      free(fixed.s);
      return -1;
    }
  }
  char p[128], P[128];
  size_t i = 0;
  for (; kernel[i] && i + 1 < sizeof p; i++) {
    int ok = kernel[i] == '_' || (kernel[i] >= 'a' && kernel[i] <= 'z') ||
             (kernel[i] >= 'A' && kernel[i] <= 'Z') || (i && kernel[i] >= '0' && kernel[i] <= '9');
    p[i] = ok ? kernel[i] : '_';
    P[i] = ok && p[i] >= 'a' && p[i] <= 'z' ? (char)(p[i] - 'a' + 'A') : p[i];
  }
  p[i] = P[i] = 0;
  rt_str_printf(out, "/*\n** %s_tuned.h -- pinned schedules of kernel %s on target %s (%s%s),\n"
                "** generated by rooftune " RT_VERSION " from %s. Do not edit.\n**\n"
                "** Lookup variables, in this order: ", p, kernel, target,
                tag ? "release tag " : "current pins", tag ? tag : "", db_path);
  for (int k = 0; k < nlv; k++) rt_str_printf(out, "%s%s", k ? ", " : "", lv[k]);
  rt_str_printf(out, "%s\n** Fixed (shared by every pinned workload): %s\n**\n", nlv ? "" : "(none)",
                fixed.n ? fixed.s : "(none)");
  with_prefix(out,
              "**   P_tuned_result r;\n"
              "**   double vars[P_TUNED_NVARS] = {...};\n"
              "**   if (P_tuned_lookup(vars, &r) == 0) use r.config (a JSON object);\n"
              "** r.match: P_TUNED_EXACT (the pin of this very workload), P_TUNED_NEAREST\n"
              "** (the pin minimising the Euclidean distance of log2 of the variables; values\n"
              "** <= 0 or infinite must be equal; ties to the smallest key), P_TUNED_DEFAULT (the\n"
              "** template default: nothing pinned is comparable). -1: no pin, no default.\n"
              "** Same rule as rtdb_lookup (rtdb.h). Needs <math.h>: link with -lm.\n*/\n",
              p, P);
  rt_str_printf(out, "#ifndef %s_TUNED_H\n#define %s_TUNED_H\n\n#include <math.h>\n\n", P, P);
  rt_str_printf(out, "#define %s_TUNED_NVARS %d\n", P, nlv);
  with_prefix(out,
              "enum { P_TUNED_EXACT = 1, P_TUNED_NEAREST = 2, P_TUNED_DEFAULT = 3 };\n\n"
              "typedef struct P_tuned_result {\n"
              "  int match;\n  const char *config, *workload;\n  int pin_version;\n"
              "  double time_s, distance;\n} P_tuned_result;\n\n"
              "typedef struct P_tuned_entry {\n  const char *workload;\n"
              "  double vars[P_TUNED_NVARS > 0 ? P_TUNED_NVARS : 1];\n"
              "  const char *config;\n  int pin_version;\n  double time_s;\n} P_tuned_entry;\n\n",
              p, P);
  rt_str_printf(out, "static const char *const %s_tuned_vars[] = {", p);
  for (int k = 0; k < nlv; k++) rt_str_printf(out, "%s\"%s\"", k ? ", " : "", lv[k]);
  rt_str_printf(out, "%s};\nstatic const char %s_tuned_fixed[] = ", nlv ? "" : "0", p);
  literal(out, fixed.s);
  free(fixed.s);
  rt_str_printf(out, ";\nstatic const char *const %s_tuned_default = ", p);
  if (def[0]) literal(out, def);
  else rt_str_printf(out, "0");
  rt_str_printf(out, ";\n\nstatic const %s_tuned_entry %s_tuned_table[] = {\n", p, p);
  const char *prev = NULL;
  for (int r = 0; r < c->n; r++) {
    const hrow *w = &c->rows[r];
    if (prev && !strcmp(prev, w->key)) continue;   /* the lower version of a key */
    prev = w->key;
    rt_str_printf(out, "  {");
    literal(out, w->key);
    rt_str_printf(out, ", {");
    for (int k = 0; k < nlv; k++) rt_str_printf(out, "%s%.17g", k ? ", " : "", hfind(w, lv[k])->x);
    rt_str_printf(out, "%s}, ", nlv ? "" : "0");
    literal(out, w->config);
    rt_str_printf(out, ", %d, %.17g},\n", w->version, w->time_s);
  }
  if (!c->n) rt_str_printf(out, "  {0, {0}, 0, 0, -1},  /* nothing pinned */\n");
  rt_str_printf(out, "};\n\n");
  with_prefix(out, lookup_fn, p, P);
  rt_str_printf(out, "\n#endif\n");
  return 0;
}

int db_export_header(const char *db_path, const char *target, const char *kernel,
                     const char *tag, rt_str *out, rt_err *err) {
  rtdb *db;
  int rc = rtdb_open_msg(db_path, &db, err ? err->msg : NULL, err ? sizeof err->msg : 0);
  if (rc) return -1;
  rt_err e = {0};
  hctx c = {.err = &e};
  char def[RTDB_MAXCONFIG];
  rc = rtdb_pins(db, target, kernel, tag, take, &c, def);
  int out_rc = -1;
  if (rc) rt_err_set(err, "%s", rtdb_errmsg(db));
  else if (e.msg[0]) rt_err_set(err, "%s", e.msg);
  else {
    if (c.n) qsort(c.rows, (size_t)c.n, sizeof *c.rows, by_key);
    out_rc = emit(out, &c, db_path, target, kernel, tag, def, err);
  }
  for (int r = 0; r < c.n; r++) {
    for (int k = 0; k < c.rows[r].nv; k++) free(c.rows[r].v[k].name), free(c.rows[r].v[k].s);
    free(c.rows[r].key), free(c.rows[r].config);
  }
  free(c.rows);
  rtdb_close(db);
  return out_rc;
}
