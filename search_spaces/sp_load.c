/*
** sp_load.c -- load a space file: the community T1 layout
** (ConfigurationSpace.TuningParameters / Conditions) plus rooftune's
** ConfigurationSpace.ProblemVariables, bound from --set bindings. Every
** error names the file and the JSON field (or line/column for syntax
** errors, and the column inside an expression); a field spelled other than
** T1's PascalCase is refused by name. Values are finite and distinct
** (duplicates found with a hash set: expected O(n) per parameter).
*/
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sp_int.h"

/* Declared Type -> value type ("uint": non-negative ints; "float" also
** accepts int values). The T1 schema names int, uint, float, bool and
** string; the others are common spellings. */
static const struct { const char *name; sx_type t; int nonneg; } type_table[] = {
  {"int", SX_INT, 0}, {"uint", SX_INT, 1}, {"float", SX_FLOAT, 0},
  {"double", SX_FLOAT, 0}, {"string", SX_STR, 0}, {"str", SX_STR, 0},
  {"bool", SX_BOOL, 0},
};

/* Why a NaN or infinite value is refused wherever a value is bound. */
#define NONFINITE_WHY                                                        \
  "not a finite number (JSON has no NaN or Infinity, so a configuration "    \
  "holding it could not be written or read back; and NaN never equals "      \
  "itself, so it could not be found or ranked)"

static const char *const py_keywords[] = {
  "and", "or", "not", "in", "is", "if", "else", "for", "lambda",
  "True", "False", "None",
};

static int is_identifier(const char *s) {
  if (!(isalpha((unsigned char)*s) || *s == '_')) return 0;
  for (const char *q = s; *q; q++)
    if (!(isalnum((unsigned char)*q) || *q == '_')) return 0;
  for (size_t i = 0; i < sizeof py_keywords / sizeof *py_keywords; i++)
    if (!strcmp(s, py_keywords[i])) return 0;
  return 1;
}

static void add_warning(sp_space *sp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_warning(sp_space *sp, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  sp->warn = rt_realloc(sp->warn, (size_t)(sp->nwarn + 1) * sizeof *sp->warn);
  sp->warn[sp->nwarn++] = rt_strdup(buf);
}

/* T1's field names, per object, as the T1 layout spells them (PascalCase). */
static const char *const root_keys[] = {"General", "ConfigurationSpace", "KernelSpecification", NULL};
static const char *const general_keys[] = {"BenchmarkName", "FormatVersion", NULL};
static const char *const space_keys[] = {"TuningParameters", "Conditions", "ProblemVariables", NULL};
static const char *const param_keys[] = {"Name", "Type", "Values", "Default", NULL};
static const char *const cond_keys[] = {"Expression", "Parameters", NULL};
static const char *const var_keys[] = {"Name", "Type", "Default", NULL};

/* a == b ignoring case, '_' and '-' (tuning_parameters ~ TuningParameters) */
static int loose_equal(const char *a, const char *b) {
  for (;;) {
    while (*a == '_' || *a == '-') a++;
    while (*b == '_' || *b == '-') b++;
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    if (!*a) return 1;
    a++, b++;
  }
}

/* A key of obj that spells one of keys[] another way (configuration_space,
** values) is an error naming both: only the PascalCase spelling is T1, and
** ignoring the key would silently drop what it holds (a condition, a
** default). Other unknown keys are T1 extensions and are ignored. */
static int check_spelling(json_t *obj, const char *field,
                          const char *const *keys, rt_err *err) {
  const char *key;
  json_t *val;
  if (!json_is_object(obj)) return 0;
  json_object_foreach(obj, key, val) {
    for (const char *const *k = keys; *k; k++)
      if (strcmp(key, *k) && loose_equal(key, *k)) {
        rt_err_set(err, "%s%sfound field \"%s\" where T1 has \"%s\" (T1 spells "
                   "its fields in PascalCase; rename the field)", field,
                   *field ? ": " : "", key, *k);
        return -1;
      }
  }
  return 0;
}

/* A JSON scalar as an sx_value (strings copied into the arena). */
static int json_scalar(sp_space *sp, json_t *j, sx_value *out) {
  switch (json_typeof(j)) {
  case JSON_INTEGER: *out = sx_int((int64_t)json_integer_value(j)); return 0;
  case JSON_REAL: *out = sx_float(json_real_value(j)); return 0;
  case JSON_TRUE: *out = sx_bool(1); return 0;
  case JSON_FALSE: *out = sx_bool(0); return 0;
  case JSON_STRING:
    out->t = SX_STR;
    out->u.s = sx_arena_str(sp->arena, json_string_value(j),
                            json_string_length(j));
    return 0;
  default: return -1;
  }
}

/* How expressions see the parameters. */
enum { NO_PARAMS, PARAMS, PARAMS_FOLDED };

/* Names visible to expressions: problem variables as constants; with
** PARAMS the parameters as slots, with PARAMS_FOLDED the single-valued ones
** as constants (their only value) and the others as slots. Caller frees. */
static sx_name *expr_names(const sp_space *sp, int params, int *n) {
  sx_name *names = rt_calloc((size_t)(sp->np + sp->nvar), sizeof *names);
  int k = 0;
  for (int v = 0; v < sp->nvar; v++)
    names[k++] = (sx_name){sp->vars[v].name, -1, sp->vars[v].value};
  for (int p = 0; params != NO_PARAMS && p < sp->np; p++) {
    const sp_param_t *pa = &sp->params[p];
    names[k++] = params == PARAMS_FOLDED && pa->nv == 1
                     ? (sx_name){pa->name, -1, pa->v[0]}
                     : (sx_name){pa->name, p, sx_int(0)};
  }
  *n = k;
  return names;
}

/* Compile text; on error the message names the field and shows the text. */
static sx_prog *compile_field(const sp_space *sp, const char *field,
                              const char *text, int params, rt_err *err) {
  int nn;
  sx_name *names = expr_names(sp, params, &nn);
  rt_err e = {0};
  sx_prog *p = sx_compile(text, names, nn, &e);
  free(names);
  if (!p)
    rt_err_set(err, "%s: %s at column %d in `%s`", field, e.msg, e.col, text);
  return p;
}

static int type_ok(const sp_param_t *pa, const sx_value *v) {
  if (pa->nonneg && v->t == SX_INT && v->u.i < 0) return 0;
  return v->t == pa->vtype || (pa->vtype == SX_FLOAT && v->t == SX_INT);
}

/* 1 if a and b are duplicates under the loader's rule: same type and ==
** (so -0.0 repeats 0.0). Non-finite floats never reach it. */
static int same_value(const sx_value *a, const sx_value *b) {
  if (a->t != b->t) return 0;
  switch (a->t) {
  case SX_FLOAT: return a->u.f == b->u.f;
  case SX_STR: return a->u.s->len == b->u.s->len && !memcmp(a->u.s->s, b->u.s->s, a->u.s->len);
  default: return a->u.i == b->u.i;   /* int, bool */
  }
}

/* A hash of v consistent with same_value (splitmix64's finaliser). */
static uint64_t value_hash(const sx_value *v) {
  uint64_t h = 0;
  if (v->t == SX_FLOAT) {
    double f = v->u.f == 0 ? 0.0 : v->u.f;   /* -0.0 and 0.0 alike */
    memcpy(&h, &f, sizeof h);
  } else if (v->t == SX_STR) {
    h = 0xcbf29ce484222325ull;               /* FNV-1a */
    for (size_t i = 0; i < v->u.s->len; i++) h = (h ^ (unsigned char)v->u.s->s[i]) * 0x100000001b3ull;
  } else {
    h = (uint64_t)v->u.i;
  }
  h ^= (uint64_t)v->t << 59;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

#define DUP_WARNINGS 10   /* duplicate values named per parameter, then counted */

/* pa->v := the values of list l, each kept at its first occurrence (a later
** one of the same type that is == to it is dropped with a warning). A hash
** set of the kept values' positions: expected O(n). */
static void set_values(sp_space *sp, sp_param_t *pa, const sx_list *l) {
  size_t n = l->n, cap = 16, dropped = 0;
  while (cap < 2 * n) cap *= 2;
  uint32_t *set = rt_calloc(cap, sizeof *set);   /* kept position + 1; 0: empty */
  pa->v = rt_malloc((n ? n : 1) * sizeof *pa->v);
  pa->nv = 0;
  for (size_t i = 0; i < n; i++) {
    const sx_value *v = &l->v[i];
    size_t h = (size_t)value_hash(v) & (cap - 1);
    while (set[h] && !same_value(&pa->v[set[h] - 1], v)) h = (h + 1) & (cap - 1);
    if (!set[h]) {
      pa->v[pa->nv] = *v;
      set[h] = (uint32_t)++pa->nv;
    } else if (++dropped <= DUP_WARNINGS) {
      char buf[64];
      sx_repr(v, buf, sizeof buf);
      add_warning(sp, "parameter '%s': duplicate value %s dropped", pa->name, buf);
    }
  }
  if (dropped > DUP_WARNINGS)
    add_warning(sp, "parameter '%s': %zu more duplicate values dropped", pa->name,
                dropped - DUP_WARNINGS);
  free(set);
}

static int load_values(sp_space *sp, sp_param_t *pa, json_t *jv,
                       const char *field, rt_err *err) {
  sx_value list;
  if (json_is_string(jv)) {
    pa->values_text = rt_strdup(json_string_value(jv));
    sx_prog *prog = compile_field(sp, field, pa->values_text, NO_PARAMS, err);
    if (!prog) return -1;
    rt_err e = {0};
    int rc = sx_eval(sp->vm, prog, NULL, &list, &e);
    if (rc == 0) list = sx_value_copy(sp->arena, &list);
    sx_prog_free(prog);
    if (rc) {
      rt_err_set(err, "%s: evaluating `%s` raised %s", field, pa->values_text,
                 e.msg);
      return -1;
    }
    if (list.t != SX_LIST && list.t != SX_TUPLE) {
      rt_err_set(err, "%s: `%s` is a %s, expected a list of values", field,
                 pa->values_text, sx_type_name(list.t));
      return -1;
    }
  } else if (json_is_array(jv)) {
    pa->values_text = json_dumps(jv, JSON_COMPACT);
    sx_list *l = sx_arena_alloc(sp->arena, sizeof *l);
    l->n = l->weight = json_array_size(jv);
    l->v = sx_arena_alloc(sp->arena, (l->n ? l->n : 1) * sizeof *l->v);
    for (size_t i = 0; i < l->n; i++)
      if (json_scalar(sp, json_array_get(jv, i), &l->v[i])) {
        rt_err_set(err, "%s[%zu]: expected a number, string or boolean", field,
                   i);
        return -1;
      } else if (l->v[i].t == SX_STR) {
        l->weight += l->v[i].u.s->len;   /* sx.h invariant 4 */
      }
    list.t = SX_LIST;
    list.u.l = l;
  } else {
    rt_err_set(err, "%s: expected a string (a Python list expression) or an "
               "array", field);
    return -1;
  }
  if (list.u.l->n > (size_t)INT_MAX) {
    rt_err_set(err, "%s: %zu values; at most %d are supported", field,
               list.u.l->n, INT_MAX);
    return -1;
  }
  for (size_t i = 0; i < list.u.l->n; i++) {
    sx_value v = list.u.l->v[i];
    int wrong = !type_ok(pa, &v), nonfinite = v.t == SX_FLOAT && !isfinite(v.u.f);
    if (!wrong && !nonfinite) continue;
    char buf[64];
    sx_repr(&v, buf, sizeof buf);
    if (wrong)
      rt_err_set(err, "%s: wrong type: element %zu is %s %s, but Type is %s",
                 field, i, sx_type_name(v.t), buf, pa->type);
    else
      rt_err_set(err, "%s: element %zu is %s: %s", field, i, buf, NONFINITE_WHY);
    return -1;
  }
  set_values(sp, pa, list.u.l);
  if (pa->nv == 0) {
    rt_err_set(err, "%s: parameter '%s' has no values (empty space)", field,
               pa->name);
    return -1;
  }
  return 0;
}

static int load_default(sp_space *sp, sp_param_t *pa, json_t *jd,
                        const char *field) {
  pa->def = -1;
  if (!jd) return 0;
  if (json_is_array(jd) && json_array_size(jd) == 1) jd = json_array_get(jd, 0);
  sx_value d;
  if (json_scalar(sp, jd, &d)) {
    add_warning(sp, "%s: not a scalar; parameter '%s' has no default", field,
                pa->name);
    return 0;
  }
  for (int i = 0; i < pa->nv; i++)
    if (sx_equal(&pa->v[i], &d) && (d.t == SX_BOOL) == (pa->v[i].t == SX_BOOL))
      pa->def = i;
  if (pa->def < 0) {
    char buf[64];
    sx_repr(&d, buf, sizeof buf);
    add_warning(sp, "%s: %s is not among the values of '%s'; no default",
                field, buf, pa->name);
  }
  return 0;
}

static const char *get_string(json_t *obj, const char *key, const char *field,
                              int required, rt_err *err, int *bad) {
  json_t *j = json_object_get(obj, key);
  if (!j) {
    if (required) {
      rt_err_set(err, "%s: missing field \"%s\"", field, key);
      *bad = 1;
    }
    return NULL;
  }
  if (!json_is_string(j)) {
    rt_err_set(err, "%s.%s: expected a string", field, key);
    *bad = 1;
    return NULL;
  }
  return json_string_value(j);
}

static int name_taken(const sp_space *sp, const char *name) {
  for (int v = 0; v < sp->nvar; v++)
    if (!strcmp(sp->vars[v].name, name)) return 1;
  for (int p = 0; p < sp->np; p++)
    if (sp->params[p].name && !strcmp(sp->params[p].name, name)) return 1;
  return 0;
}

static int check_name(const sp_space *sp, const char *name, const char *field,
                      rt_err *err) {
  if (!is_identifier(name)) {
    rt_err_set(err, "%s: \"%s\" is not a valid identifier", field, name);
    return -1;
  }
  if (name_taken(sp, name)) {
    rt_err_set(err, "%s: name '%s' is defined twice", field, name);
    return -1;
  }
  return 0;
}

/* A problem variable's value must have its declared Type, if any. */
static int check_var_type(const sp_var_t *var, json_t *jv, const char *field,
                          rt_err *err) {
  json_t *jt = json_object_get(jv, "Type");
  if (!jt) return 0;
  sp_param_t as = {.name = var->name, .vtype = SX_NONE};
  for (size_t t = 0; t < sizeof type_table / sizeof *type_table; t++)
    if (json_is_string(jt) && !strcmp(json_string_value(jt), type_table[t].name)) {
      as.vtype = type_table[t].t;
      as.nonneg = type_table[t].nonneg;
    }
  if (as.vtype == SX_NONE) {
    rt_err_set(err, "%s.Type: unknown type (expected int, uint, float, string or bool)", field);
    return -1;
  }
  if (type_ok(&as, &var->value)) return 0;
  char buf[64];
  sx_repr(&var->value, buf, sizeof buf);
  rt_err_set(err, "problem variable '%s' is %s %s, but its Type is %s%s", var->name,
             sx_type_name(var->value.t), buf, json_string_value(jt),
             var->set ? " (from --set)" : " (its Default)");
  return -1;
}

/* ProblemVariables: [{Name, Type?, Default?}], bound from set[]. */
static int load_vars(sp_space *sp, json_t *cs, const sp_binding *set, int nset,
                     rt_err *err) {
  json_t *jvars = json_object_get(cs, "ProblemVariables");
  int bad = 0;
  if (jvars && !json_is_array(jvars)) {
    rt_err_set(err, "ConfigurationSpace.ProblemVariables: expected an array");
    return -1;
  }
  size_t n = jvars ? json_array_size(jvars) : 0;
  sp->vars = rt_calloc(n, sizeof *sp->vars);
  for (size_t i = 0; i < n; i++) {
    char field[96];
    snprintf(field, sizeof field, "ConfigurationSpace.ProblemVariables[%zu]", i);
    json_t *jv = json_array_get(jvars, i);
    if (!json_is_object(jv)) {
      rt_err_set(err, "%s: expected an object", field);
      return -1;
    }
    if (check_spelling(jv, field, var_keys, err)) return -1;
    const char *name = get_string(jv, "Name", field, 1, err, &bad);
    if (bad || check_name(sp, name, field, err)) return -1;
    sp_var_t *var = &sp->vars[sp->nvar++];
    var->name = rt_strdup(name);
    var->set = -1;
    for (int b = 0; b < nset; b++)
      if (!strcmp(set[b].name, name)) {
        var->value = set[b].value;
        if (var->value.t == SX_STR)
          var->value = sx_value_copy(sp->arena, &var->value);
        var->set = 1;
      }
    json_t *jd = json_object_get(jv, "Default");
    if (var->set < 0 && jd) {
      if (json_scalar(sp, jd, &var->value)) {
        rt_err_set(err, "%s.Default: expected a number, string or boolean",
                   field);
        return -1;
      }
      var->set = 0;
    }
    if (var->set >= 0 && check_var_type(var, jv, field, err)) return -1;
    if (var->set >= 0 && var->value.t == SX_FLOAT && !isfinite(var->value.u.f)) {
      char buf[64];
      sx_repr(&var->value, buf, sizeof buf);
      rt_err_set(err, "problem variable '%s' is %s%s: %s", var->name, buf,
                 var->set ? " (from --set)" : "", NONFINITE_WHY);
      return -1;
    }
  }
  for (int b = 0; b < nset; b++) {
    int found = 0;
    for (int v = 0; v < sp->nvar; v++) found |= !strcmp(sp->vars[v].name, set[b].name);
    if (!found) {
      char decl[256] = "";
      for (int v = 0; v < sp->nvar; v++)
        snprintf(decl + strlen(decl), sizeof decl - strlen(decl), "%s%s",
                 v ? ", " : "", sp->vars[v].name);
      rt_err_set(err, "--set %s: unknown problem variable (this space declares %s)",
                 set[b].name, sp->nvar ? decl : "none");
      return -1;
    }
  }
  for (int v = 0; v < sp->nvar; v++)
    if (sp->vars[v].set < 0) {
      rt_err_set(err, "problem variable '%s' is unbound: give it with --set %s=VALUE",
                 sp->vars[v].name, sp->vars[v].name);
      return -1;
    }
  return 0;
}

static int load_params_from(sp_space *sp, json_t *jps, size_t n, int *src,
                            rt_err *err) {
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    char field[96], vfield[128];
    snprintf(field, sizeof field, "ConfigurationSpace.TuningParameters[%zu]", i);
    json_t *jp = json_array_get(jps, i);
    if (!json_is_object(jp)) {
      rt_err_set(err, "%s: expected an object", field);
      return -1;
    }
    if (check_spelling(jp, field, param_keys, err)) return -1;
    const char *name = get_string(jp, "Name", field, 1, err, &bad);
    if (bad) return -1;
    /* A parameter repeated with an identical definition (as in some
    ** published files) means what Python's dict would make of it. */
    int prev = sp_param_index(sp, name);
    if (prev >= 0 && json_equal(jp, json_array_get(jps, (size_t)src[prev]))) {
      add_warning(sp, "%s: parameter '%s' repeats an identical definition; "
                  "kept once", field, name);
      continue;
    }
    if (check_name(sp, name, field, err)) return -1;
    const char *type = get_string(jp, "Type", field, 1, err, &bad);
    if (bad) return -1;
    src[sp->np] = (int)i;
    sp_param_t *pa = &sp->params[sp->np++];
    pa->name = rt_strdup(name);
    pa->type = rt_strdup(type);
    pa->vtype = SX_NONE;
    for (size_t t = 0; t < sizeof type_table / sizeof *type_table; t++)
      if (!strcmp(type, type_table[t].name)) {
        pa->vtype = type_table[t].t;
        pa->nonneg = type_table[t].nonneg;
      }
    if (pa->vtype == SX_NONE) {
      rt_err_set(err, "%s.Type: unknown type \"%s\" (expected int, uint, "
                 "float, string or bool)", field, type);
      return -1;
    }
    json_t *jv = json_object_get(jp, "Values");
    snprintf(vfield, sizeof vfield, "%s.Values (parameter '%s')", field, name);
    if (!jv) {
      rt_err_set(err, "%s: missing field \"Values\"", field);
      return -1;
    }
    if (load_values(sp, pa, jv, vfield, err)) return -1;
    snprintf(vfield, sizeof vfield, "%s.Default", field);
    load_default(sp, pa, json_object_get(jp, "Default"), vfield);
  }
  return 0;
}

static int load_params(sp_space *sp, json_t *cs, rt_err *err) {
  json_t *jps = json_object_get(cs, "TuningParameters");
  if (!json_is_array(jps) || json_array_size(jps) == 0) {
    rt_err_set(err, "ConfigurationSpace.TuningParameters: %s",
               jps ? "expected a non-empty array" : "missing field");
    return -1;
  }
  size_t n = json_array_size(jps);
  sp->params = rt_calloc(n, sizeof *sp->params);
  int *src = rt_malloc(n * sizeof *src);  /* param -> its JSON element */
  int rc = load_params_from(sp, jps, n, src, err);
  free(src);
  return rc;
}

static int cmp_int(const void *a, const void *b) {
  return *(const int *)a - *(const int *)b;
}

static int load_conds(sp_space *sp, json_t *cs, rt_err *err) {
  json_t *jcs = json_object_get(cs, "Conditions");
  int bad = 0;
  if (!jcs) return 0;
  if (!json_is_array(jcs)) {
    rt_err_set(err, "ConfigurationSpace.Conditions: expected an array");
    return -1;
  }
  size_t n = json_array_size(jcs);
  sp->conds = rt_calloc(n, sizeof *sp->conds);
  for (size_t i = 0; i < n; i++) {
    char field[96], efield[128];
    snprintf(field, sizeof field, "ConfigurationSpace.Conditions[%zu]", i);
    json_t *jc = json_array_get(jcs, i);
    if (!json_is_object(jc)) {
      rt_err_set(err, "%s: expected an object", field);
      return -1;
    }
    if (check_spelling(jc, field, cond_keys, err)) return -1;
    const char *text = get_string(jc, "Expression", field, 1, err, &bad);
    if (bad) return -1;
    json_t *jpl = json_object_get(jc, "Parameters");
    if (jpl && !json_is_array(jpl)) {
      rt_err_set(err, "%s.Parameters: expected an array of names", field);
      return -1;
    }
    for (size_t k = 0; jpl && k < json_array_size(jpl); k++) {
      json_t *jn = json_array_get(jpl, k);
      if (!json_is_string(jn) || sp_param_index(sp, json_string_value(jn)) < 0) {
        rt_err_set(err, "%s.Parameters[%zu]: %s%s%s is not a tuning parameter",
                   field, k, json_is_string(jn) ? "'" : "",
                   json_is_string(jn) ? json_string_value(jn) : "value",
                   json_is_string(jn) ? "'" : "");
        return -1;
      }
    }
    snprintf(efield, sizeof efield, "%s.Expression", field);
    sp_cond_t *c = &sp->conds[sp->nc];
    c->prog = compile_field(sp, efield, text, PARAMS, err);
    if (!c->prog) return -1;
    c->text = rt_strdup(text);
    sp->nc++;
    /* What the expression reads; a Parameters list that disagrees is only
    ** worth a note. */
    int nfold = 0;
    const int *slots = sx_prog_slots(c->prog, &c->nread);
    c->read = rt_malloc((size_t)(c->nread ? c->nread : 1) * sizeof *c->read);
    memcpy(c->read, slots, (size_t)c->nread * sizeof *c->read);
    qsort(c->read, (size_t)c->nread, sizeof *c->read, cmp_int);
    for (int k = 0; k < c->nread; k++) nfold += sp->params[c->read[k]].nv == 1;
    if (jpl && json_array_size(jpl) != (size_t)c->nread)
      add_warning(sp, "%s: Parameters lists %zu names, the expression reads %d",
                  field, json_array_size(jpl), c->nread);
    /* The engine's dependencies: single-valued parameters (BAT's limits
    ** such as MAX_THREADS) folded in as constants, so that they neither
    ** join groups nor delay the check. Same semantics: a sub-expression
    ** that raises stays code and raises at evaluation. */
    if (nfold) {
      sx_prog_free(c->prog);
      c->prog = compile_field(sp, efield, text, PARAMS_FOLDED, err);
      if (!c->prog) return -1;
    }
    slots = sx_prog_slots(c->prog, &c->np);
    c->p = rt_malloc((size_t)(c->np ? c->np : 1) * sizeof *c->p);
    memcpy(c->p, slots, (size_t)c->np * sizeof *c->p);
    qsort(c->p, (size_t)c->np, sizeof *c->p, cmp_int);
    if (c->np == 0 && !sx_eval_bool(sp->vm, c->prog, NULL)) {
      sp->const_false = 1;
      add_warning(sp, "%s: `%s` is false for every configuration: the space "
                  "is empty", field, text);
    }
  }
  return 0;
}

static sp_space *load_json(json_t *root, const char *name,
                           const sp_binding *set, int nset, rt_err *err) {
  if (!json_is_object(root)) {
    rt_err_set(err, "expected a JSON object at the top level");
    return NULL;
  }
  json_t *cs = json_object_get(root, "ConfigurationSpace");
  if (check_spelling(root, "", root_keys, err) ||
      check_spelling(json_object_get(root, "General"), "General", general_keys, err) ||
      check_spelling(cs, "ConfigurationSpace", space_keys, err))
    return NULL;
  if (!json_is_object(cs)) {
    rt_err_set(err, "ConfigurationSpace: %s",
               cs ? "expected an object" : "missing field");
    return NULL;
  }
  sp_space *sp = rt_calloc(1, sizeof *sp);
  sp->arena = sx_arena_new();
  sp->vm = sx_vm_new();
  json_t *bn = json_object_get(json_object_get(root, "General"), "BenchmarkName");
  sp->name = rt_strdup(json_is_string(bn) ? json_string_value(bn) : name);
  if (load_vars(sp, cs, set, nset, err) || load_params(sp, cs, err) ||
      load_conds(sp, cs, err)) {
    sp_free(sp);
    return NULL;
  }
  rt_count cart = 1;
  for (int p = 0; p < sp->np; p++)
    if (rt_count_mul(cart, (rt_count)sp->params[p].nv, &cart)) {
      rt_err_set(err, "the Cartesian product of the parameters exceeds 2^128");
      sp_free(sp);
      return NULL;
    }
  sp->slots = rt_calloc((size_t)sp->np, sizeof *sp->slots);
  sp->cfg = rt_calloc((size_t)sp->np, sizeof *sp->cfg);
  sp__build_groups(sp);
  return sp;
}

sp_space *sp_load_string(const char *text, const char *name,
                         const sp_binding *set, int nset, rt_err *err) {
  json_error_t je;
  json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
  if (!root) {
    if (err) {
      err->line = je.line;
      err->col = je.column;
    }
    rt_err_set(err, "%s:%d:%d: JSON syntax error: %s", name, je.line,
               je.column, je.text);
    return NULL;
  }
  sp_space *sp = load_json(root, name, set, nset, err);
  json_decref(root);
  if (!sp) rt_err_prefix(err, "%s", name);
  return sp;
}

sp_space *sp_load_file(const char *path, const sp_binding *set, int nset,
                       rt_err *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    rt_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = rt_malloc(cap);
  for (size_t got; (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
    n += got;
    if (cap - n - 1 == 0) buf = rt_realloc(buf, cap *= 2);
  }
  int rerr = ferror(f);
  fclose(f);
  if (rerr) {
    free(buf);
    rt_err_set(err, "%s: read error", path);
    return NULL;
  }
  buf[n] = 0;
  if (strlen(buf) != n) {
    free(buf);
    rt_err_set(err, "%s: contains a NUL byte: not a JSON text file", path);
    return NULL;
  }
  sp_space *sp = sp_load_string(buf, path, set, nset, err);
  free(buf);
  return sp;
}

/* End of the VAR=VALUE item starting at s: the first comma outside
** brackets and string literals, read as the expression lexer reads them
** ('...', "...", triple-quoted, backslash escapes), or the end. */
static const char *binding_end(const char *s) {
  int depth = 0;
  for (; *s; s++) {
    if (*s == '\'' || *s == '"') {
      char q = *s;
      int triple = s[1] == q && s[2] == q;
      for (s += triple ? 3 : 1; *s && !(*s == q && (!triple || (s[1] == q && s[2] == q)));)
        s += *s == '\\' && s[1] ? 2 : 1;
      if (!*s) break;               /* unterminated: the compiler will say so */
      s += triple ? 2 : 0;          /* on the (last) closing quote */
    } else if (*s == '(' || *s == '[') {
      depth++;
    } else if (*s == ')' || *s == ']') {
      depth--;
    } else if (*s == ',' && depth == 0) {
      break;
    }
  }
  return s;
}

int sp_parse_bindings(const char *text, sx_arena *arena, sp_binding **out,
                      rt_err *err) {
  int n = 0;
  *out = NULL;
  sx_vm *vm = sx_vm_new();
  const char *s = text;
  while (*s) {
    const char *comma = binding_end(s), *eq = memchr(s, '=', (size_t)(comma - s));
    /* VAR: an identifier, blanks around it allowed */
    const char *v0 = s, *v1 = eq ? eq : s;
    while (v0 < v1 && (*v0 == ' ' || *v0 == '\t')) v0++;
    while (v1 > v0 && (v1[-1] == ' ' || v1[-1] == '\t')) v1--;
    int ident = v1 > v0 && !isdigit((unsigned char)*v0);
    for (const char *q = v0; q < v1; q++) ident &= isalnum((unsigned char)*q) || *q == '_';
    if (!eq || !ident || (size_t)(v1 - v0) >= sizeof (*out)->name) {
      rt_err_set(err, "--set: expected VAR=VALUE (VAR a name of letters, digits and _) in \"%.*s\"",
                 (int)(comma - s), s);
      goto fail;
    }
    *out = rt_realloc(*out, (size_t)(n + 1) * sizeof **out);
    sp_binding *b = &(*out)[n];
    memset(b, 0, sizeof *b);
    memcpy(b->name, v0, (size_t)(v1 - v0));
    size_t vlen = (size_t)(comma - eq - 1);
    char *vtext = rt_malloc(vlen + 1);
    memcpy(vtext, eq + 1, vlen);
    vtext[vlen] = 0;
    rt_err e = {0};
    sx_prog *prog = sx_compile(vtext, NULL, 0, &e);
    int rc = prog ? sx_eval(vm, prog, NULL, &b->value, &e) : -1;
    if (rc == 0 && (b->value.t == SX_LIST || b->value.t == SX_TUPLE ||
                    b->value.t == SX_NONE)) {
      rc = -1;
      snprintf(e.msg, sizeof e.msg, "a %s is not a scalar", sx_type_name(b->value.t));
    }
    /* copy before the program goes: a constant string lives in it */
    if (rc == 0) b->value = sx_value_copy(arena, &b->value);
    sx_prog_free(prog);
    if (rc) {
      rt_err_set(err, "--set %s=%s: %s", b->name, vtext, e.msg);
      free(vtext);
      goto fail;
    }
    free(vtext);
    for (int k = 0; k < n; k++)
      if (!strcmp((*out)[k].name, b->name)) {
        rt_err_set(err, "--set: %s given twice", b->name);
        goto fail;
      }
    n++;
    s = *comma ? comma + 1 : comma;
  }
  sx_vm_free(vm);
  return n;
fail:
  sx_vm_free(vm);
  free(*out);
  *out = NULL;
  return -1;
}

void sp_free(sp_space *sp) {
  if (!sp) return;
  sp__free_chains(sp);
  for (int p = 0; p < sp->np; p++) {
    free(sp->params[p].name);
    free(sp->params[p].type);
    free(sp->params[p].values_text);
    free(sp->params[p].v);
  }
  for (int c = 0; c < sp->nc; c++) {
    free(sp->conds[c].text);
    sx_prog_free(sp->conds[c].prog);
    free(sp->conds[c].p);
    free(sp->conds[c].read);
  }
  for (int v = 0; v < sp->nvar; v++) free(sp->vars[v].name);
  for (int g = 0; g < sp->ng; g++) free(sp->groups[g]);
  for (int w = 0; w < sp->nwarn; w++) free(sp->warn[w]);
  free(sp->groups);
  free(sp->gsize);
  free(sp->group_of);
  free(sp->gpos);
  free(sp->kwork);
  free(sp->warn);
  free(sp->params);
  free(sp->conds);
  free(sp->vars);
  free(sp->slots);
  free(sp->cfg);
  free(sp->name);
  sx_vm_free(sp->vm);
  sx_arena_free(sp->arena);
  free(sp);
}

/* ---- Accessors ---- */
const char *sp_name(const sp_space *sp) { return sp->name; }
int sp_nparams(const sp_space *sp) { return sp->np; }
const char *sp_param_name(const sp_space *sp, int p) { return sp->params[p].name; }
const char *sp_param_type(const sp_space *sp, int p) { return sp->params[p].type; }
const char *sp_param_values_text(const sp_space *sp, int p) { return sp->params[p].values_text; }
int sp_nvalues(const sp_space *sp, int p) { return sp->params[p].nv; }
const sx_value *sp_value(const sp_space *sp, int p, int i) { return &sp->params[p].v[i]; }
int sp_default(const sp_space *sp, int p) { return sp->params[p].def; }
int sp_nconds(const sp_space *sp) { return sp->nc; }
const char *sp_cond_text(const sp_space *sp, int c) { return sp->conds[c].text; }
int sp_nvars(const sp_space *sp) { return sp->nvar; }
const char *sp_var_name(const sp_space *sp, int v) { return sp->vars[v].name; }
const sx_value *sp_var_value(const sp_space *sp, int v) { return &sp->vars[v].value; }
int sp_var_was_set(const sp_space *sp, int v) { return sp->vars[v].set; }
int sp_nwarnings(const sp_space *sp) { return sp->nwarn; }
const char *sp_warning(const sp_space *sp, int i) { return sp->warn[i]; }

const int *sp_cond_params(const sp_space *sp, int c, int *n) {
  *n = sp->conds[c].nread;
  return sp->conds[c].read;
}

int sp_param_index(const sp_space *sp, const char *name) {
  for (int p = 0; p < sp->np; p++)
    if (!strcmp(sp->params[p].name, name)) return p;
  return -1;
}

int sp_default_config(const sp_space *sp, int *cfg) {
  for (int p = 0; p < sp->np; p++) {
    if (sp->params[p].def < 0) return 0;
    cfg[p] = sp->params[p].def;
  }
  return 1;
}
