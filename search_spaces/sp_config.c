/*
** sp_config.c -- configurations as JSON: the canonical text of a
** configuration (an object with keys in parameter order, compact) and the
** parser that maps a user's JSON object back to value indices.
*/
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "sp_int.h"

static json_t *value_json(const sx_value *v) {
  switch (v->t) {
  case SX_INT: return json_integer((json_int_t)v->u.i);
  case SX_FLOAT: return json_real(v->u.f);
  case SX_BOOL: return json_boolean(v->u.i);
  case SX_STR: return json_stringn(v->u.s->s, v->u.s->len);
  default: return json_null(); /* the loader admits scalars only */
  }
}

char *sp_config_json(const sp_space *sp, const int *cfg) {
  json_t *o = json_object();
  for (int p = 0; p < sp->np; p++)
    json_object_set_new(o, sp->params[p].name, value_json(&sp->params[p].v[cfg[p]]));
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  json_decref(o);
  return s;
}

char *sp_vars_json(const sp_space *sp) {
  json_t *o = json_object();
  for (int v = 0; v < sp->nvar; v++)
    json_object_set_new(o, sp->vars[v].name, value_json(&sp->vars[v].value));
  char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  json_decref(o);
  return s;
}

/* Index of the value of parameter p equal to j: a value of j's own type
** first (a float parameter may hold both 1 and 1.0, which print as 1 and
** 1.0), then a number of the other type equal to it exactly (Python's ==:
** 2**53 + 1 is not 2.0**53); bools match only bools. -1: none. */
static int find_value(const sp_param_t *pa, json_t *j) {
  sx_value x;
  switch (json_typeof(j)) {
  case JSON_INTEGER: x = sx_int((int64_t)json_integer_value(j)); break;
  case JSON_REAL: x = sx_float(json_real_value(j)); break;
  case JSON_TRUE: case JSON_FALSE: x = sx_bool(json_is_true(j)); break;
  case JSON_STRING:
    for (int i = 0; i < pa->nv; i++) {
      const sx_value *v = &pa->v[i];
      if (v->t == SX_STR && v->u.s->len == json_string_length(j) &&
          !memcmp(v->u.s->s, json_string_value(j), v->u.s->len))
        return i;
    }
    return -1;
  default: return -1;
  }
  for (int other = 0; other <= 1; other++)
    for (int i = 0; i < pa->nv; i++) {
      const sx_value *v = &pa->v[i];
      int fits = other ? v->t != x.t && (v->t == SX_INT || v->t == SX_FLOAT) && x.t != SX_BOOL
                       : v->t == x.t;
      if (fits && sx_equal(v, &x)) return i;
    }
  return -1;
}

int sp_config_parse(const sp_space *sp, const char *text, int *cfg, rt_err *err) {
  json_error_t je;
  /* ALLOW_NUL: a string value may hold a NUL ('\x00' in Values), which
  ** sp_config_json writes as \u0000 */
  json_t *o = json_loads(text, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
  int rc = -1;
  if (!o) {
    if (err) err->line = je.line, err->col = je.column;
    rt_err_set(err, "configuration: JSON syntax error at line %d column %d: %s",
               je.line, je.column, je.text);
    return -1;
  }
  if (!json_is_object(o)) {
    rt_err_set(err, "configuration: expected a JSON object {\"param\": value, ...}");
    goto out;
  }
  const char *key;
  json_t *val;
  json_object_foreach(o, key, val) {
    if (sp_param_index(sp, key) < 0) {
      rt_err_set(err, "configuration: unknown parameter '%s'", key);
      goto out;
    }
  }
  for (int p = 0; p < sp->np; p++) {
    const sp_param_t *pa = &sp->params[p];
    json_t *j = json_object_get(o, pa->name);
    if (!j) {
      rt_err_set(err, "configuration: missing parameter '%s'", pa->name);
      goto out;
    }
    cfg[p] = find_value(pa, j);
    if (cfg[p] < 0) {
      char *shown = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
      rt_err_set(err, "configuration: %s is not among the values of '%s' (%s)",
                 shown ? shown : "value", pa->name, pa->values_text);
      free(shown);
      goto out;
    }
  }
  rc = 0;
out:
  json_decref(o);
  return rc;
}
