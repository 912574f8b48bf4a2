/*
** fz_set.c -- fuzz target set: the --set parser (sp_parse_bindings).
** Input: the option's text ("M=1024,N=2**10,layout='nhwc'").
**
** A parse either fails with a message and no bindings, or gives bindings
** with distinct non-empty names that fit sp_binding.name and scalar
** values; written back as NAME=repr(VALUE),... (a non-finite float as
** float('inf') and the like), they parse to the same names and values.
** Caps: one parse of the input and one of its rewriting; each value's
** compile-time folding is bounded by the compiler's own budget.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../search_spaces/sp.h"
#include "fz.h"

/* Append v as text that evaluates to it. */
static void write_value(rt_str *b, const sx_value *v) {
  if (v->t == SX_FLOAT && !isfinite(v->u.f)) {
    rt_str_printf(b, "float('%s')", isnan(v->u.f) ? "nan" : v->u.f > 0 ? "inf" : "-inf");
    return;
  }
  size_t n = sx_repr(v, NULL, 0);
  char *s = rt_malloc(n + 1);
  sx_repr(v, s, n + 1);
  rt_str_printf(b, "%s", s);
  free(s);
}

static int same(const sx_value *a, const sx_value *b) {
  if (a->t != b->t) return 0;
  if (a->t == SX_FLOAT && isnan(a->u.f)) return isnan(b->u.f);
  if (a->t == SX_STR) return a->u.s->len == b->u.s->len && !memcmp(a->u.s->s, b->u.s->s, a->u.s->len);
  return sx_equal(a, b);
}

static void check(const sp_binding *b, int n) {
  for (int i = 0; i < n; i++) {
    size_t len = strnlen(b[i].name, sizeof b[i].name);
    FZ_CHECK(len > 0 && len < sizeof b[i].name, "binding %d: name of %zu bytes", i, len);
    sx_type t = b[i].value.t;
    FZ_CHECK(t == SX_INT || t == SX_FLOAT || t == SX_STR || t == SX_BOOL,
             "binding %d (%s) is a %s", i, b[i].name, sx_type_name(t));
    for (int j = 0; j < i; j++)
      FZ_CHECK(strcmp(b[i].name, b[j].name), "'%s' bound twice", b[i].name);
  }
}

FZ_TARGET(set) {
  char *text = fz_text(data, size);
  sx_arena *arena = sx_arena_new();
  sp_binding *b = NULL, *b2 = NULL;
  rt_err err = {0};
  int n = sp_parse_bindings(text, arena, &b, &err);
  if (n < 0) {
    FZ_CHECK(err.msg[0], "failed without a message");
    FZ_CHECK(!b, "failed but returned bindings");
  } else {
    FZ_CHECK(n == 0 || b, "%d bindings but no array", n);
    check(b, n);
    rt_str again = {0};
    for (int i = 0; i < n; i++) {
      rt_str_printf(&again, "%s%s=", i ? "," : "", b[i].name);
      write_value(&again, &b[i].value);
    }
    int n2 = sp_parse_bindings(again.s ? again.s : "", arena, &b2, &err);
    FZ_CHECK(n2 == n, "`%s` gives %d bindings, written back as `%s` %d (%s)", text, n,
             again.s ? again.s : "", n2, n2 < 0 ? err.msg : "");
    for (int i = 0; i < n; i++) {
      FZ_CHECK(!strcmp(b[i].name, b2[i].name), "binding %d: name '%s' written back is '%s'", i,
               b[i].name, b2[i].name);
      FZ_CHECK(same(&b[i].value, &b2[i].value), "binding %d (%s): value changed when written back as `%s`",
               i, b[i].name, again.s);
    }
    free(again.s);
  }
  free(b2);
  free(b);
  sx_arena_free(arena);
  free(text);
  return 0;
}
