/*
** fz_expr.c -- fuzz target expr: the expression compiler (sx_compile) and
** the VM (sx__run with a step budget). Input: the expression's text.
**
** The text is compiled three ways over the same names -- a, b, s, t (an
** int, a float, a string and a bool) and M, x, layout (an int, a float and
** a string) -- (1) a b s t read from slots, M x layout constants folded at
** compile time, as spaces do; (2) every name a slot; (3) every name a
** constant. All three must compile alike (the same error at the same
** column) and evaluate alike (the same result, or the same exception),
** which checks constant folding against evaluation. Then: evaluation is
** deterministic; sx_eval_bool agrees with sx_truth; sx_repr keeps its
** snprintf contract; a deep copy is equal to the original (NaN aside);
** sx_prog_text gives the text back, sx_prog_slots ascending slots.
** Caps (fz.h invariant 2): every evaluation runs with a budget of BUDGET
** loop iterations plus sequence elements; sx_eval_bool (unbudgeted) runs
** only on programs that finished within it. Constant folding may build a
** million elements within the compiler's own budget: a result whose repr
** is over BIG bytes is compared by type and length only, and repr's
** prefixes are checked on texts under 4 KB.
*/
#include <stdlib.h>
#include <string.h>

#include "../search_spaces/sx.h"
#include "../search_spaces/sx_int.h"
#include "fz.h"

#define BUDGET 200000
#define NNAMES 7
#define BIG (1 << 18)   /* repr bytes beyond which a result is only sized */

typedef struct outcome {
  int rc;              /* 0 value, -1 raised, -2 budget exhausted, -3 did not compile */
  int col;             /* compile error column */
  char msg[512];
  char *repr;          /* the value's repr (malloc'ed) */
  sx_type type;
} outcome;

static sx_str *mkstr(const char *s) {
  size_t n = strlen(s);
  sx_str *r = rt_malloc(sizeof *r + n + 1);
  r->len = n;
  memcpy(r->s, s, n + 1);
  return r;
}

/* The names' values (strings built once). */
static sx_value values[NNAMES];
static const char *const vnames[NNAMES] = {"a", "b", "s", "t", "M", "x", "layout"};

static void init_values(void) {
  static sx_str *s1, *s2;
  if (s1) return;
  s1 = mkstr("ab");
  s2 = mkstr("nhwc");
  values[0] = sx_int(7);
  values[1] = sx_float(2.5);
  values[2].t = SX_STR, values[2].u.s = s1;
  values[3] = sx_bool(1);
  values[4] = sx_int(1024);
  values[5] = sx_float(0.5);
  values[6].t = SX_STR, values[6].u.s = s2;
}

static char *repr_of(const sx_value *v) {
  size_t n = sx_repr(v, NULL, 0);
  char *s = rt_malloc(n + 1);
  FZ_CHECK(sx_repr(v, s, n + 1) == n, "sx_repr returned two lengths");
  FZ_CHECK(strlen(s) <= n, "sx_repr wrote past its length");
  /* every shorter buffer gets a NUL-terminated prefix and the same length
  ** (on texts of a few KB: a folded constant may have a million elements,
  ** whose every repr is a second's work under ASan) */
  for (size_t cap = 1; cap <= n && cap < 64 && n < 4096; cap += 1 + cap / 4) {
    char small[64];
    FZ_CHECK(sx_repr(v, small, cap) == n, "sx_repr into %zu bytes: another length", cap);
    FZ_CHECK(strlen(small) == cap - 1 && !memcmp(small, s, cap - 1),
             "sx_repr into %zu bytes: not a prefix", cap);
  }
  return s;
}

/* Compile src with names per mode (see the top comment) and evaluate. */
static void run(const char *src, int mode, sx_vm *vm, outcome *o) {
  sx_name names[NNAMES];
  for (int i = 0; i < NNAMES; i++) {
    int slot = mode == 2 || (mode == 1 && i < 4);
    names[i] = (sx_name){vnames[i], slot ? i : -1, values[i]};
  }
  memset(o, 0, sizeof *o);
  rt_err e = {0};
  sx_prog *p = sx_compile(src, names, NNAMES, &e);
  if (!p) {
    FZ_CHECK(e.msg[0], "compile failed without a message");
    FZ_CHECK(e.col >= 1 && (size_t)e.col <= strlen(src) + 1, "compile error column %d of %zu",
             e.col, strlen(src));
    o->rc = -3;
    o->col = e.col;
    snprintf(o->msg, sizeof o->msg, "%s", e.msg);
    return;
  }
  FZ_CHECK(!strcmp(sx_prog_text(p), src), "sx_prog_text is not the source");
  int ns;
  const int *slots = sx_prog_slots(p, &ns);
  for (int i = 0; i < ns; i++)
    FZ_CHECK(slots[i] >= 0 && slots[i] < NNAMES && (i == 0 || slots[i] > slots[i - 1]),
             "sx_prog_slots not ascending in range");
  sx_value v;
  int rc = sx__run(vm, p, values, &v, &e, BUDGET);
  size_t len = rc == 0 ? sx_repr(&v, NULL, 0) : 0;
  if (rc == 0 && len > BIG) {   /* a folded constant of ~10^5 elements: type and size */
    o->type = v.t;
    o->repr = rt_malloc(32);
    snprintf(o->repr, 32, "<%zu bytes>", len);
  } else if (rc == 0) {
    o->type = v.t;
    o->repr = repr_of(&v);
    sx_arena *a = sx_arena_new();
    sx_value c = sx_value_copy(a, &v);
    FZ_CHECK(sx_equal(&c, &v) || strstr(o->repr, "nan"), "a copy of %s is not equal to it",
             o->repr);
    FZ_CHECK(sx_equal(&c, &v) == sx_equal(&v, &c), "sx_equal is not symmetric");
    int truth = sx_truth(&v);
    sx_arena_free(a);
    FZ_CHECK(sx_eval_bool(vm, p, values) == truth, "sx_eval_bool disagrees with sx_truth");
    sx_value again;
    FZ_CHECK(sx__run(vm, p, values, &again, &e, BUDGET) == 0, "a second evaluation raised");
    char *r2 = repr_of(&again);
    FZ_CHECK(!strcmp(r2, o->repr), "evaluation is not deterministic: %s then %s", o->repr, r2);
    free(r2);
  } else {
    FZ_CHECK(e.msg[0], "evaluation failed without a message");
    o->rc = strstr(e.msg, "budget exhausted") ? -2 : -1;
    snprintf(o->msg, sizeof o->msg, "%s", e.msg);
    if (o->rc == -1) FZ_CHECK(sx_eval_bool(vm, p, values) == 0, "a raising expression is true");
  }
  sx_prog_free(p);
}

static const char *shown(const outcome *o) { return o->rc == 0 ? o->repr : o->msg; }

FZ_TARGET(expr) {
  init_values();
  char *src = fz_text(data, size);
  sx_vm *vm = sx_vm_new();
  outcome o[3];
  for (int m = 0; m < 3; m++) run(src, m, vm, &o[m]);
  for (int m = 1; m < 3; m++) {
    if (o[0].rc == -2 || o[m].rc == -2) continue;   /* folding spends the budget elsewhere */
    FZ_CHECK(o[m].rc == o[0].rc, "`%s`: mode %d %s (%s), mode 0 %s (%s)", src, m,
             o[m].rc == 0 ? "evaluates" : o[m].rc == -1 ? "raises" : "does not compile", shown(&o[m]),
             o[0].rc == 0 ? "evaluates" : o[0].rc == -1 ? "raises" : "does not compile", shown(&o[0]));
    if (o[0].rc == 0)
      FZ_CHECK(o[m].type == o[0].type && !strcmp(o[m].repr, o[0].repr),
               "`%s`: mode %d gives %s %s, mode 0 %s %s", src, m, sx_type_name(o[m].type),
               o[m].repr, sx_type_name(o[0].type), o[0].repr);
    else if (o[0].rc == -3)
      FZ_CHECK(o[m].col == o[0].col && !strcmp(o[m].msg, o[0].msg),
               "`%s`: mode %d fails to compile with `%s` at %d, mode 0 `%s` at %d", src, m,
               o[m].msg, o[m].col, o[0].msg, o[0].col);
    else
      FZ_CHECK(!strcmp(o[m].msg, o[0].msg), "`%s`: mode %d raises `%s`, mode 0 `%s`", src, m,
               o[m].msg, o[0].msg);
  }
  for (int m = 0; m < 3; m++) free(o[m].repr);
  sx_vm_free(vm);
  free(src);
  return 0;
}
