/*
** sx_vm.c -- the evaluator of the space-expression language: a stack VM
** that runs sx_prog bytecode with Python 3 semantics for None, bool, int
** (64-bit, overflow raises), float, str, list and tuple, and the builtins
** range list len min max abs int float bool sum. Int and comparison
** opcodes have inline fast paths; int/float/bool work never allocates.
** sx_eval_bool first tries run_int, an int64-only interpreter of the same
** bytecode for the programs the compiler marks int_ok (the conditions of
** most spaces), which hands anything it cannot do exactly back to run().
** Strings and lists made during an evaluation live in the vm's scratch
** arena, reset when the next evaluation starts.
*/
#include "sx_int.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


struct sx_vm {
  sx_value *stack;          /* 2 spare, comprehension variables, value stack */
  size_t cap;
  int64_t *istack;          /* the int fast path's value stack */
  size_t icap;
  sx_value *bld;            /* elements of comprehensions being built */
  size_t nbld, capbld;
  sx_arena *scratch;
  int dirty;                /* scratch holds something */
  rt_err *err;              /* where fail() reports; NULL: nowhere */
  int64_t budget;           /* see sx__run */
};

sx_vm *sx_vm_new(void) {
  sx_vm *vm = rt_calloc(1, sizeof *vm);
  vm->scratch = sx_arena_new();
  return vm;
}

void sx_vm_free(sx_vm *vm) {
  if (!vm) return;
  free(vm->stack);
  free(vm->istack);
  free(vm->bld);
  sx_arena_free(vm->scratch);
  free(vm);
}

/* Raise: record the Python-style message (when someone listens), return -1. */
__attribute__((format(printf, 2, 3)))
static int fail(sx_vm *vm, const char *fmt, ...) {
  if (vm->err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(vm->err->msg, sizeof vm->err->msg, fmt, ap);
    va_end(ap);
    vm->err->line = vm->err->col = 0;
  }
  return -1;
}

static int is_int(const sx_value *v) { return v->t == SX_INT || v->t == SX_BOOL; }
static int is_num(const sx_value *v) { return is_int(v) || v->t == SX_FLOAT; }
static int is_seq(const sx_value *v) { return v->t >= SX_STR; }
static double as_f(const sx_value *v) { return v->t == SX_FLOAT ? v->u.f : (double)v->u.i; }
static const char *tn(const sx_value *v) { return sx_type_name(v->t); }
static size_t seq_len(const sx_value *v) { return v->t == SX_STR ? v->u.s->len : v->u.l->n; }

/* Copy a value field by field: a 16-byte load of a value just written as
** two fields (as callers fill slots) would stall store forwarding. */
static inline void copy(sx_value *d, const sx_value *s) {
  d->t = s->t;
  d->u = s->u;
}

/* memcpy of n values; src may be NULL when n is 0 (an empty list). */
static void copy_values(sx_value *d, const sx_value *s, size_t n) {
  if (n) memcpy(d, s, n * sizeof(sx_value));
}

static inline int truthy(const sx_value *v) {
  return v->t == SX_BOOL || v->t == SX_INT ? v->u.i != 0 : sx_truth(v);
}

static void *scratch(sx_vm *vm, size_t n) {
  vm->dirty = 1;
  return sx_arena_alloc(vm->scratch, n);
}

/* Pay for n new elements: enforces SX_MAX_SEQ and the budget. */
static int charge(sx_vm *vm, size_t n) {
  if (n > SX_MAX_SEQ)
    return fail(vm, "MemoryError: sequences are limited to %d elements", SX_MAX_SEQ);
  vm->budget -= (int64_t)n;
  if (vm->budget < 0) return fail(vm, "RuntimeError: evaluation budget exhausted");
  return 0;
}

/* A new list/tuple body of n elements in scratch; NULL: raised. Once
** its elements are in, weigh() it unless they are all scalars. */
static sx_list *new_list(sx_vm *vm, size_t n) {
  if (charge(vm, n)) return NULL;
  sx_list *l = scratch(vm, sizeof *l + n * sizeof(sx_value));
  l->n = n;
  l->v = (sx_value *)(l + 1);
  l->weight = n;
  return l;
}

/* Weight of a value as an element (sx.h invariant 4). */
static size_t weight_of(const sx_value *v) {
  return v->t == SX_STR ? v->u.s->len : v->t == SX_LIST || v->t == SX_TUPLE ? v->u.l->weight : 0;
}

/* Set l's weight from its elements, paying for what nesting adds; -1
** (MemoryError) beyond SX_MAX_SEQ. */
static int weigh(sx_vm *vm, sx_list *l) {
  size_t w = l->n;
  for (size_t i = 0; i < l->n && w <= SX_MAX_SEQ; i++) w += weight_of(&l->v[i]);
  if (w > SX_MAX_SEQ)
    return fail(vm, "MemoryError: sequences are limited to %d elements (nested ones and "
                "string bytes counted each time)", SX_MAX_SEQ);
  l->weight = w;
  return charge(vm, w - l->n);
}

/* A new string of n bytes (NUL-terminated) in scratch; NULL: raised. */
static sx_str *new_str(sx_vm *vm, size_t n) {
  if (charge(vm, n)) return NULL;
  sx_str *s = scratch(vm, sizeof *s + n + 1);
  s->len = n;
  s->s[n] = 0;
  return s;
}

static sx_value mk_seq(sx_type t, const sx_list *l) {
  sx_value v;
  v.t = t;
  v.u.l = l;
  return v;
}

static sx_value mk_str(const sx_str *s) {
  sx_value v;
  v.t = SX_STR;
  v.u.s = s;
  return v;
}

/* Element i of a str, list or tuple (a one-character str for str). */
static int seq_item(sx_vm *vm, const sx_value *s, size_t i, sx_value *out) {
  if (s->t != SX_STR) {
    *out = s->u.l->v[i];
    return 0;
  }
  sx_str *c = new_str(vm, 1);
  if (!c) return -1;
  c->s[0] = s->u.s->s[i];
  *out = mk_str(c);
  return 0;
}

static int need_iterable(sx_vm *vm, const sx_value *v) {
  return is_seq(v) ? 0 : fail(vm, "TypeError: '%s' object is not iterable", tn(v));
}

/* ---- arithmetic ----------------------------------------------------- */

static const char *const op_sym[OP_COUNT] = {
  [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_TDIV] = "/",
  [OP_FDIV] = "//", [OP_MOD] = "%", [OP_POW] = "** or pow()", [OP_LSH] = "<<",
  [OP_RSH] = ">>", [OP_BAND] = "&", [OP_BOR] = "|", [OP_BXOR] = "^",
  [OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">", [OP_GE] = ">=",
  [OP_NEG] = "-", [OP_POS] = "+", [OP_INV] = "~"};

static int overflow(sx_vm *vm) {
  return fail(vm, "OverflowError: integer result does not fit in 64 bits");
}

#define DOUBLE_IS_ODD_INTEGER(x) (fmod(fabs(x), 2.0) == 1.0)

/* x ** y for floats, following CPython's float_pow case by case. */
static int float_pow(sx_vm *vm, double x, double y, sx_value *r) {
  int negate = 0;
  double z;
  if (y == 0) z = 1.0;
  else if (isnan(x)) z = x;
  else if (isnan(y)) z = x == 1.0 ? 1.0 : y;
  else if (isinf(y)) {
    x = fabs(x);
    z = x == 1.0 ? 1.0 : (y > 0) == (x > 1.0) ? fabs(y) : 0.0;
  } else if (isinf(x)) {
    int odd = DOUBLE_IS_ODD_INTEGER(y);
    z = y > 0 ? (odd ? x : fabs(x)) : (odd ? copysign(0.0, x) : 0.0);
  } else if (x == 0) {
    if (y < 0)
      return fail(vm, "ZeroDivisionError: 0.0 cannot be raised to a negative power");
    z = DOUBLE_IS_ODD_INTEGER(y) ? x : 0.0;
  } else {
    if (x < 0) {
      if (y != floor(y))
        return fail(vm, "ValueError: negative number cannot be raised to a "
                        "fractional power (the result would be complex)");
      x = -x;
      negate = DOUBLE_IS_ODD_INTEGER(y);
    }
    z = x == 1.0 ? 1.0 : pow(x, y);
    if (isinf(z)) return fail(vm, "OverflowError: (34, 'Numerical result out of range')");
    if (negate) z = -z;
  }
  *r = sx_float(z);
  return 0;
}

/* CPython's float floor division and modulo (sign of the divisor, signed
** zeros, quotient snapped to an integer). */
static void float_divmod(double x, double y, double *q, double *m) {
  double mod = fmod(x, y), div = (x - mod) / y;
  if (mod) {
    if ((y < 0) != (mod < 0)) {
      mod += y;
      div -= 1.0;
    }
  } else {
    mod = copysign(0.0, y);
  }
  if (div) {
    *q = floor(div);
    if (div - *q > 0.5) *q += 1.0;
  } else {
    *q = copysign(0.0, x / y);
  }
  *m = mod;
}

static int float_binop(sx_vm *vm, int op, double x, double y, sx_value *r) {
  double q, m;
  switch (op) {
  case OP_ADD: *r = sx_float(x + y); return 0;
  case OP_SUB: *r = sx_float(x - y); return 0;
  case OP_MUL: *r = sx_float(x * y); return 0;
  case OP_TDIV:
    if (y == 0) return fail(vm, "ZeroDivisionError: float division by zero");
    *r = sx_float(x / y);
    return 0;
  case OP_FDIV: case OP_MOD:
    if (y == 0)
      return fail(vm, "ZeroDivisionError: float %s by zero",
                  op == OP_FDIV ? "floor division" : "modulo");
    float_divmod(x, y, &q, &m);
    *r = sx_float(op == OP_FDIV ? q : m);
    return 0;
  default: return float_pow(vm, x, y, r);  /* OP_POW; binop keeps others out */
  }
}

/* x ** y for y >= 0 by squaring; -1 on overflow. Squaring only when more
** bits follow, so an overflowing square means an overflowing result. */
static int int_pow(int64_t x, int64_t y, int64_t *r) {
  int64_t acc = 1;
  while (y) {
    if ((y & 1) && __builtin_mul_overflow(acc, x, &acc)) return -1;
    y >>= 1;
    if (y && __builtin_mul_overflow(x, x, &x)) return -1;
  }
  *r = acc;
  return 0;
}

/* x / y correctly rounded when both are exact doubles (|v| <= 2^53). */
static double int_tdiv(int64_t x, int64_t y) {
  const int64_t lim = (int64_t)1 << 53;
  if (x >= -lim && x <= lim && y >= -lim && y <= lim) return (double)x / (double)y;
  return (double)((long double)x / (long double)y);
}

static int int_binop(sx_vm *vm, int op, int64_t x, int64_t y, int both_bool,
                     sx_value *r) {
  int64_t z = 0;
  int ovf = 0;
  switch (op) {
  case OP_ADD: ovf = __builtin_add_overflow(x, y, &z); break;
  case OP_SUB: ovf = __builtin_sub_overflow(x, y, &z); break;
  case OP_MUL: ovf = __builtin_mul_overflow(x, y, &z); break;
  case OP_TDIV:
    if (!y) return fail(vm, "ZeroDivisionError: division by zero");
    *r = sx_float(int_tdiv(x, y));
    return 0;
  case OP_FDIV: case OP_MOD:
    if (!y) return fail(vm, "ZeroDivisionError: integer division or modulo by zero");
    if (y == -1) {   /* x / -1 traps in C for INT64_MIN */
      if (op == OP_FDIV) ovf = __builtin_sub_overflow(0, x, &z);
    } else {
      int64_t q = x / y, m = x % y;
      if (m && (m < 0) != (y < 0)) {
        q--;
        m += y;
      }
      z = op == OP_FDIV ? q : m;
    }
    break;
  case OP_POW:
    if (y < 0) return float_pow(vm, (double)x, (double)y, r);
    ovf = int_pow(x, y, &z);
    break;
  case OP_LSH: case OP_RSH:
    if (y < 0) return fail(vm, "ValueError: negative shift count");
    if (op == OP_RSH) z = y >= 64 ? (x < 0 ? -1 : 0) : x >> y;
    else if (x) {
      ovf = y >= 64;
      if (!ovf) {
        z = (int64_t)((uint64_t)x << y);
        ovf = (z >> y) != x;
      }
    }
    break;
  case OP_BAND: z = x & y; break;
  case OP_BOR: z = x | y; break;
  default: z = x ^ y; break;   /* OP_BXOR */
  }
  if (ovf) return overflow(vm);
  if (both_bool && op >= OP_BAND) *r = sx_bool((int)z);   /* True & False is a bool */
  else *r = sx_int(z);
  return 0;
}

static int concat(sx_vm *vm, const sx_value *a, const sx_value *b, sx_value *r) {
  size_t na = seq_len(a), nb = seq_len(b);
  if (a->t == SX_STR) {
    sx_str *s = new_str(vm, na + nb);
    if (!s) return -1;
    memcpy(s->s, a->u.s->s, na);
    memcpy(s->s + na, b->u.s->s, nb);
    *r = mk_str(s);
    return 0;
  }
  sx_list *l = new_list(vm, na + nb);
  if (!l) return -1;
  copy_values(l->v, a->u.l->v, na);
  copy_values(l->v + na, b->u.l->v, nb);
  if (weigh(vm, l)) return -1;
  *r = mk_seq(a->t, l);
  return 0;
}

static int repeat(sx_vm *vm, const sx_value *s, int64_t count, sx_value *r) {
  size_t len = seq_len(s), n;
  if (count <= 0 || !len) n = 0;
  else if ((uint64_t)count > SX_MAX_SEQ) n = (size_t)SX_MAX_SEQ + 1;  /* charge refuses */
  else n = len * (size_t)count;
  size_t reps = len ? n / len : 0;
  if (s->t == SX_STR) {
    sx_str *c = new_str(vm, n);
    if (!c) return -1;
    for (size_t i = 0; i < reps; i++) memcpy(c->s + i * len, s->u.s->s, len);
    *r = mk_str(c);
    return 0;
  }
  sx_list *l = new_list(vm, n);
  if (!l) return -1;
  for (size_t i = 0; i < reps; i++) copy_values(l->v + i * len, s->u.l->v, len);
  if (weigh(vm, l)) return -1;
  *r = mk_seq(s->t, l);
  return 0;
}

/* a op b for OP_ADD..OP_BXOR and any types; r may alias a or b. */
static int binop(sx_vm *vm, int op, const sx_value *a, const sx_value *b, sx_value *r) {
  if (is_int(a) && is_int(b))
    return int_binop(vm, op, a->u.i, b->u.i, a->t == SX_BOOL && b->t == SX_BOOL, r);
  if (is_num(a) && is_num(b) && op <= OP_POW) return float_binop(vm, op, as_f(a), as_f(b), r);
  if (op == OP_ADD && is_seq(a) && a->t == b->t) return concat(vm, a, b, r);
  if (op == OP_MUL && is_seq(a) && is_int(b)) return repeat(vm, a, b->u.i, r);
  if (op == OP_MUL && is_int(a) && is_seq(b)) return repeat(vm, b, a->u.i, r);
  if (op == OP_MUL && (is_seq(a) || is_seq(b)))
    return fail(vm, "TypeError: can't multiply sequence by non-int of type '%s'",
                tn(is_seq(a) ? b : a));
  if (op == OP_ADD && is_seq(a))
    return fail(vm, "TypeError: can only concatenate %s (not \"%s\") to %s", tn(a),
                tn(b), tn(a));
  return fail(vm, "TypeError: unsupported operand type(s) for %s: '%s' and '%s'",
              op_sym[op], tn(a), tn(b));
}

/* -v, +v, ~v in place. */
static int unop(sx_vm *vm, int op, sx_value *v) {
  if (v->t == SX_FLOAT && op != OP_INV) {
    if (op == OP_NEG) v->u.f = -v->u.f;
    return 0;
  }
  if (!is_int(v))
    return fail(vm, "TypeError: bad operand type for unary %s: '%s'", op_sym[op], tn(v));
  if (op == OP_NEG && __builtin_sub_overflow(0, v->u.i, &v->u.i)) return overflow(vm);
  if (op == OP_INV) v->u.i = ~v->u.i;
  v->t = SX_INT;
  return 0;
}

/* ---- comparisons ---------------------------------------------------- */

static int contains(sx_vm *vm, const sx_value *c, const sx_value *x, int *res) {
  if (is_seq(c) && charge(vm, weight_of(c))) return -1;   /* the walk's bound */
  if (c->t == SX_STR) {
    if (x->t != SX_STR)
      return fail(vm, "TypeError: 'in <string>' requires string as left operand, not %s", tn(x));
    *res = x->u.s->len == 0 || memmem(c->u.s->s, c->u.s->len, x->u.s->s, x->u.s->len);
    return 0;
  }
  if (!is_seq(c)) return fail(vm, "TypeError: argument of type '%s' is not iterable", tn(c));
  *res = 0;
  for (size_t i = 0; i < c->u.l->n && !*res; i++) *res = sx_equal(&c->u.l->v[i], x);
  return 0;
}

/* a op b for OP_LT..OP_NOTIN into *res (0 or 1). */
static int compare(sx_vm *vm, int op, const sx_value *a, const sx_value *b, int *res) {
  /* Outcome of each ordering op for SX_ORD_LT, _EQ, _GT, _UNORDERED. */
  static const unsigned char outcome[4][4] = {
    {1, 0, 0, 0}, {1, 1, 0, 0}, {0, 0, 1, 0}, {0, 1, 1, 0}};
  const sx_value *ba, *bb;
  size_t wa = weight_of(a), wb = weight_of(b);   /* a walk of both stops at the lighter */
  if (op != OP_IN && op != OP_NOTIN && wa && wb && charge(vm, wa < wb ? wa : wb)) return -1;
  switch (op) {
  case OP_EQ: *res = sx_equal(a, b); return 0;
  case OP_NE: *res = !sx_equal(a, b); return 0;
  case OP_IN: return contains(vm, b, a, res);
  case OP_NOTIN:
    if (contains(vm, b, a, res)) return -1;
    *res = !*res;
    return 0;
  default: {
    int o = sx__order(a, b, &ba, &bb);
    if (o == SX_ORD_TYPE)
      return fail(vm, "TypeError: '%s' not supported between instances of '%s' and '%s'",
                  op_sym[op], tn(ba), tn(bb));
    *res = outcome[op - OP_LT][o];
    return 0;
  }
  }
}

static int subscript(sx_vm *vm, const sx_value *s, const sx_value *ix, sx_value *r) {
  if (!is_seq(s)) return fail(vm, "TypeError: '%s' object is not subscriptable", tn(s));
  if (!is_int(ix)) {
    if (s->t == SX_STR)
      return fail(vm, "TypeError: string indices must be integers, not '%s'", tn(ix));
    return fail(vm, "TypeError: %s indices must be integers or slices, not %s", tn(s), tn(ix));
  }
  int64_t n = (int64_t)seq_len(s), i = ix->u.i;
  if (i < 0) i += n;
  if (i < 0 || i >= n)
    return fail(vm, "IndexError: %s index out of range", s->t == SX_STR ? "string" : tn(s));
  return seq_item(vm, s, (size_t)i, r);
}

/* ---- builtins ------------------------------------------------------- */

static int bi_range(sx_vm *vm, const sx_value *a, int n, sx_value *r) {
  __int128 v[3] = {0, 0, 1};
  for (int i = 0; i < n; i++) {
    if (!is_int(&a[i]))
      return fail(vm, "TypeError: '%s' object cannot be interpreted as an integer", tn(&a[i]));
    v[n == 1 ? 1 : i] = a[i].u.i;
  }
  __int128 lo = v[0], hi = v[1], step = v[2], cnt = 0;
  if (!step) return fail(vm, "ValueError: range() arg 3 must not be zero");
  if (step > 0 && lo < hi) cnt = (hi - lo - 1) / step + 1;
  if (step < 0 && lo > hi) cnt = (lo - hi - 1) / -step + 1;
  sx_list *l = new_list(vm, cnt > SX_MAX_SEQ ? (size_t)SX_MAX_SEQ + 1 : (size_t)cnt);
  if (!l) return -1;
  for (size_t i = 0; i < l->n; i++) l->v[i] = sx_int((int64_t)(lo + (__int128)i * step));
  *r = mk_seq(SX_LIST, l);
  return 0;
}

static int bi_list(sx_vm *vm, const sx_value *a, int n, sx_value *r) {
  if (n && need_iterable(vm, a)) return -1;
  size_t len = n ? seq_len(a) : 0;
  sx_list *l = new_list(vm, len);
  if (!l) return -1;
  for (size_t i = 0; i < len; i++)
    if (seq_item(vm, a, i, &l->v[i])) return -1;
  if (weigh(vm, l)) return -1;
  *r = mk_seq(SX_LIST, l);
  return 0;
}

static int bi_len(sx_vm *vm, const sx_value *a, int n, sx_value *r) {
  (void)n;
  if (!is_seq(a)) return fail(vm, "TypeError: object of type '%s' has no len()", tn(a));
  *r = sx_int((int64_t)seq_len(a));
  return 0;
}

/* min/max: one iterable or several arguments; the first extreme wins. */
static int minmax(sx_vm *vm, const sx_value *a, int n, sx_value *r, int op) {
  const char *name = op == OP_LT ? "min" : "max";
  if (n == 1 && need_iterable(vm, a)) return -1;
  size_t cnt = n == 1 ? seq_len(a) : (size_t)n;
  if (!cnt) return fail(vm, "ValueError: %s() arg is an empty sequence", name);
  sx_value best, cur;
  for (size_t i = 0; i < cnt; i++) {
    int better = 1;
    if (n == 1) {
      if (seq_item(vm, a, i, &cur)) return -1;
    } else {
      cur = a[i];
    }
    if (i && compare(vm, op, &cur, &best, &better)) return -1;
    if (better) best = cur;
  }
  *r = best;
  return 0;
}

static int bi_min(sx_vm *vm, const sx_value *a, int n, sx_value *r) {
  return minmax(vm, a, n, r, OP_LT);
}

static int bi_max(sx_vm *vm, const sx_value *a, int n, sx_value *r) {
  return minmax(vm, a, n, r, OP_GT);
}

static int bi_abs(sx_vm *vm, const sx_value *a, int n, sx_value *r) {
  (void)n;
  if (a->t == SX_FLOAT) {
    *r = sx_float(fabs(a->u.f));
    return 0;
  }
  if (!is_int(a)) return fail(vm, "TypeError: bad operand type for abs(): '%s'", tn(a));
  if (a->u.i == INT64_MIN) return overflow(vm);
  *r = sx_int(a->u.i < 0 ? -a->u.i : a->u.i);
  return 0;
}

static int bad_literal(sx_vm *vm, const char *what, const sx_value *s) {
  char buf[256];
  sx_repr(s, buf, sizeof buf);
  return fail(vm, "ValueError: %s: %s", what, buf);
}

/* Python's int(str): blanks, sign, decimal digits with single underscores. */
static int parse_int(sx_vm *vm, const sx_value *sv, sx_value *r) {
  const char *s = sv->u.s->s, *end = s + sv->u.s->len;
  uint64_t mag = 0;
  int neg = 0, ovf = 0, digits = 0;
  while (s < end && isspace((unsigned char)*s)) s++;
  if (s < end && (*s == '+' || *s == '-')) neg = *s++ == '-';
  for (; s < end; s++) {
    if (*s == '_' && digits && s + 1 < end && isdigit((unsigned char)s[1])) continue;
    if (!isdigit((unsigned char)*s)) break;
    digits++;
    ovf |= __builtin_mul_overflow(mag, 10, &mag) || __builtin_add_overflow(mag, (uint64_t)(*s - '0'), &mag);
  }
  while (s < end && isspace((unsigned char)*s)) s++;
  if (!digits || s != end) return bad_literal(vm, "invalid literal for int() with base 10", sv);
  if (ovf || mag > (uint64_t)INT64_MAX + (uint64_t)neg) return overflow(vm);
  *r = sx_int(neg ? (int64_t)(0 - mag) : (int64_t)mag);
  return 0;
}

static int bi_int(sx_vm *vm, const sx_value *a, int n, sx_value *r) {
  if (!n) {
    *r = sx_int(0);
    return 0;
  }
  if (is_int(a)) {
    *r = sx_int(a->u.i);
    return 0;
  }
  if (a->t == SX_STR) return parse_int(vm, a, r);
  if (a->t != SX_FLOAT)
    return fail(vm, "TypeError: int() argument must be a string, a bytes-like object "
                    "or a real number, not '%s'", tn(a));
  double f = trunc(a->u.f);
  if (isnan(f)) return fail(vm, "ValueError: cannot convert float NaN to integer");
  if (isinf(f)) return fail(vm, "OverflowError: cannot convert float infinity to integer");
  if (f >= 9223372036854775808.0 || f < -9223372036854775808.0) return overflow(vm);
  *r = sx_int((int64_t)f);
  return 0;
}

/* Python's float(str): blanks, then inf/infinity/nan with a sign or a
** decimal float whose digit runs may hold single underscores. */
static int parse_float(sx_vm *vm, const sx_value *sv, sx_value *r) {
  static const char *const special[] = {"inf", "infinity", "nan"};
  const char *s = sv->u.s->s, *end = s + sv->u.s->len;
  while (s < end && isspace((unsigned char)*s)) s++;
  while (end > s && isspace((unsigned char)end[-1])) end--;
  size_t n = (size_t)(end - s);
  char *buf = scratch(vm, n + 1), *o = buf;
  const char *p = s;
  if (p < end && (*p == '+' || *p == '-')) *o++ = *p++;
  for (size_t k = 0; k < 3; k++)
    if ((size_t)(end - p) == strlen(special[k]) && !strncasecmp(p, special[k], (size_t)(end - p))) {
      double v = k < 2 ? INFINITY : NAN;
      *r = sx_float(*s == '-' ? -v : v);
      return 0;
    }
  /* mantissa digits, '.', digits, then an optional exponent */
  int mant = 0, ok = 1;
  for (int part = 0; part < 3 && ok; part++) {
    if (part == 1) {
      if (p == end || *p != '.') continue;
      *o++ = *p++;
    }
    if (part == 2) {
      if (p == end || (*p != 'e' && *p != 'E')) break;
      *o++ = *p++;
      if (p < end && (*p == '+' || *p == '-')) *o++ = *p++;
      ok = p < end && isdigit((unsigned char)*p);
    }
    for (; p < end; p++) {
      if (*p == '_' && o > buf && isdigit((unsigned char)o[-1]) && p + 1 < end &&
          isdigit((unsigned char)p[1]))
        continue;
      if (!isdigit((unsigned char)*p)) break;
      *o++ = *p;
      mant += part < 2;
    }
  }
  *o = 0;
  if (!ok || !mant || p != end) return bad_literal(vm, "could not convert string to float", sv);
  *r = sx_float(strtod(buf, NULL));
  return 0;
}

static int bi_float(sx_vm *vm, const sx_value *a, int n, sx_value *r) {
  if (!n) {
    *r = sx_float(0.0);
    return 0;
  }
  if (is_num(a)) {
    *r = sx_float(as_f(a));
    return 0;
  }
  if (a->t == SX_STR) return parse_float(vm, a, r);
  return fail(vm, "TypeError: float() argument must be a string or a real number, not '%s'", tn(a));
}

static int bi_bool(sx_vm *vm, const sx_value *a, int n, sx_value *r) {
  (void)vm;
  *r = sx_bool(n && sx_truth(a));
  return 0;
}

static int bi_sum(sx_vm *vm, const sx_value *a, int n, sx_value *r) {
  (void)n;
  if (need_iterable(vm, a)) return -1;
  sx_value acc = sx_int(0), item;
  for (size_t i = 0; i < seq_len(a); i++)
    if (seq_item(vm, a, i, &item) || binop(vm, OP_ADD, &acc, &item, &acc)) return -1;
  *r = acc;
  return 0;
}

const sx_builtin sx__builtins[SX_NBUILTINS] = {
  {"range", 1, 3, 0, bi_range}, {"list", 0, 1, 1, bi_list},
  {"len", 1, 1, 0, bi_len},     {"min", 1, -1, 1, bi_min},
  {"max", 1, -1, 1, bi_max},    {"abs", 1, 1, 0, bi_abs},
  {"int", 0, 1, 0, bi_int},     {"float", 0, 1, 0, bi_float},
  {"bool", 0, 1, 0, bi_bool},   {"sum", 1, 1, 1, bi_sum},
};

/* ---- the interpreter ------------------------------------------------ */

/* Append v to the comprehension being built. */
static int build_append(sx_vm *vm, const sx_value *v) {
  if (vm->nbld == vm->capbld) {
    if (vm->nbld >= SX_MAX_SEQ) return charge(vm, vm->nbld + 1);
    vm->capbld = vm->capbld ? 2 * vm->capbld : 64;
    vm->bld = rt_realloc(vm->bld, vm->capbld * sizeof(sx_value));
  }
  vm->bld[vm->nbld++] = *v;
  return 0;
}

/* The binary opcodes OP_ADD..OP_NOTIN; each has K and S variants. */
#define BINOPS(X) X(ADD) X(SUB) X(MUL) X(TDIV) X(FDIV) X(MOD) X(POW) X(LSH) \
  X(RSH) X(BAND) X(BOR) X(BXOR) X(LT) X(LE) X(GT) X(GE) X(EQ) X(NE) X(IN) X(NOTIN)

/* Run p; the result (on vm's stack), or NULL when it raised. Threaded
** code: every handler ends in its own indirect jump to the next one. */
static const sx_value *run(sx_vm *vm, const sx_prog *p, const sx_value *slots,
                           rt_err *err, int64_t budget) {
#define LABELS(name) [OP_##name] = &&stack_##name,                           \
    [OP_K_FIRST + OP_##name - OP_ADD] = &&k_##name,                          \
    [OP_S_FIRST + OP_##name - OP_ADD] = &&s_##name,
  static const void *const labels[OP_COUNT] = {
    BINOPS(LABELS)
    [OP_CONST] = &&do_CONST, [OP_SLOT] = &&do_SLOT, [OP_LOCAL] = &&do_LOCAL,
    [OP_STORE] = &&do_STORE, [OP_NIP] = &&do_NIP, [OP_CMPKEEP] = &&do_CMPKEEP,
    [OP_NEG] = &&do_UNARY, [OP_POS] = &&do_UNARY, [OP_INV] = &&do_UNARY,
    [OP_NOT] = &&do_NOT, [OP_SUBSCR] = &&do_SUBSCR, [OP_JUMP] = &&do_JUMP,
    [OP_JUMP_IF_FALSE_OR_POP] = &&do_JUMP_IF_FALSE_OR_POP,
    [OP_JUMP_IF_TRUE_OR_POP] = &&do_JUMP_IF_TRUE_OR_POP,
    [OP_POP_JUMP_IF_FALSE] = &&do_POP_JUMP_IF_FALSE,
    [OP_BUILD_LIST] = &&do_BUILD, [OP_BUILD_TUPLE] = &&do_BUILD,
    [OP_BUILDER] = &&do_BUILDER, [OP_APPEND] = &&do_APPEND,
    [OP_BUILDER_END] = &&do_BUILDER_END, [OP_ITER] = &&do_ITER,
    [OP_FOR_ITER] = &&do_FOR_ITER, [OP_CALL] = &&do_CALL,
    [OP_RAISE] = &&do_RAISE, [OP_RET] = &&do_RET};
#undef LABELS
  /* The 2 spare values keep sp - 2 inside the allocation. */
  size_t need = 2 + (size_t)p->nlocals + (size_t)p->depth;
  if (need > vm->cap) {
    free(vm->stack);
    vm->cap = 2 * need;
    vm->stack = rt_malloc(vm->cap * sizeof(sx_value));
  }
  if (vm->dirty) {
    sx__arena_reset(vm->scratch);
    vm->dirty = 0;
  }
  vm->nbld = 0;
  vm->err = err;
  vm->budget = budget;
  sx_value *const loc = vm->stack + 2;
  sx_value *sp = loc + p->nlocals;   /* next free */
  const sx_value *const k = p->consts;
  const sx_ins *const code = p->code;
  const sx_ins *ip = code, *in;
  sx_value *a, v;
  const sx_value *b;
  int64_t z;
  int res;
#define NEXT do { in = ip++; goto *labels[in->op]; } while (0)
/* The three ways a binary opcode finds its operands a (also the result)
** and b, then the shared body. */
#define OPERANDS(name)                                                       \
  stack_##name: sp--; a = sp - 1; b = sp; goto body_##name;                  \
  k_##name: a = sp - 1; b = &k[in->arg]; goto body_##name;                   \
  s_##name: a = sp - 1; b = &slots[in->arg];                                 \
  body_##name:
/* Int fast path computing z (and true) from a and b, else binop(). */
#define ARITH(name, FAST)                                                    \
  OPERANDS(name)                                                             \
  if (a->t == SX_INT && b->t == SX_INT && (FAST)) a->u.i = z;                \
  else if (binop(vm, OP_##name, a, b, a)) return NULL;                       \
  NEXT;
#define GENERIC(name)                                                        \
  OPERANDS(name)                                                             \
  if (binop(vm, OP_##name, a, b, a)) return NULL;                            \
  NEXT;
/* A comparison: fast path FAST (sets res and is true), else compare(). */
#define CMP(name, FAST)                                                      \
  OPERANDS(name)                                                             \
  if (!(FAST) && compare(vm, OP_##name, a, b, &res)) return NULL;            \
  *a = sx_bool(res);                                                         \
  NEXT;
#define INTS(REL) (a->t == SX_INT && b->t == SX_INT && ((res = a->u.i REL b->u.i), 1))
  NEXT;
  ARITH(ADD, !__builtin_add_overflow(a->u.i, b->u.i, &z))
  ARITH(SUB, !__builtin_sub_overflow(a->u.i, b->u.i, &z))
  ARITH(MUL, !__builtin_mul_overflow(a->u.i, b->u.i, &z))
  ARITH(FDIV, b->u.i > 0 && ((z = a->u.i / b->u.i - (a->u.i % b->u.i < 0)), 1))
  ARITH(MOD, b->u.i > 0 && ((z = a->u.i % b->u.i), (z += z < 0 ? b->u.i : 0), 1))
  GENERIC(TDIV) GENERIC(POW) GENERIC(LSH) GENERIC(RSH)
  GENERIC(BAND) GENERIC(BOR) GENERIC(BXOR)
  CMP(LT, INTS(<)) CMP(LE, INTS(<=)) CMP(GT, INTS(>)) CMP(GE, INTS(>=))
  CMP(EQ, INTS(==)) CMP(NE, INTS(!=)) CMP(IN, 0) CMP(NOTIN, 0)
#undef ARITH
#undef GENERIC
#undef CMP
#undef INTS
#undef OPERANDS
do_CONST: copy(sp++, &k[in->arg]); NEXT;
do_SLOT: copy(sp++, &slots[in->arg]); NEXT;
do_LOCAL: copy(sp++, &loc[in->arg]); NEXT;
do_STORE: copy(&loc[in->arg], --sp); NEXT;
do_NIP: copy(sp - 2, sp - 1); sp--; NEXT;
do_CMPKEEP:   /* [a b] -> [b (a sub b)] */
  if (compare(vm, in->sub, sp - 2, sp - 1, &res)) return NULL;
  copy(sp - 2, sp - 1);
  sp[-1] = sx_bool(res);
  NEXT;
do_UNARY:
  if (unop(vm, in->op, sp - 1)) return NULL;
  NEXT;
do_NOT: sp[-1] = sx_bool(!truthy(sp - 1)); NEXT;
do_SUBSCR:
  if (subscript(vm, sp - 2, sp - 1, &v)) return NULL;
  sp--;
  sp[-1] = v;
  NEXT;
do_JUMP: ip = code + in->arg; NEXT;
do_JUMP_IF_FALSE_OR_POP:
  if (!truthy(sp - 1)) ip = code + in->arg;
  else sp--;
  NEXT;
do_JUMP_IF_TRUE_OR_POP:
  if (truthy(sp - 1)) ip = code + in->arg;
  else sp--;
  NEXT;
do_POP_JUMP_IF_FALSE:
  if (!truthy(--sp)) ip = code + in->arg;
  NEXT;
do_BUILD: {
  sx_list *l = new_list(vm, (size_t)in->arg);
  if (!l) return NULL;
  sp -= in->arg;
  copy_values(l->v, sp, l->n);
  if (weigh(vm, l)) return NULL;
  *sp++ = mk_seq(in->op == OP_BUILD_LIST ? SX_LIST : SX_TUPLE, l);
  NEXT;
}
do_BUILDER: *sp++ = sx_int((int64_t)vm->nbld); NEXT;
do_APPEND:
  if (build_append(vm, --sp)) return NULL;
  NEXT;
do_BUILDER_END: {
  size_t mark = (size_t)sp[-1].u.i;
  sx_list *l = new_list(vm, vm->nbld - mark);
  if (!l) return NULL;
  if (l->n) copy_values(l->v, vm->bld + mark, l->n);   /* bld is NULL until an append */
  vm->nbld = mark;
  if (weigh(vm, l)) return NULL;
  sp[-1] = mk_seq(SX_LIST, l);
  NEXT;
}
do_ITER:
  if (need_iterable(vm, sp - 1)) return NULL;
  *sp++ = sx_int(0);
  NEXT;
do_FOR_ITER:   /* [seq i] */
  if ((size_t)sp[-1].u.i < seq_len(sp - 2)) {
    if (--vm->budget < 0 && charge(vm, 0)) return NULL;
    if (seq_item(vm, sp - 2, (size_t)sp[-1].u.i++, sp)) return NULL;
    sp++;
  } else {
    sp -= 2;
    ip = code + in->arg;
  }
  NEXT;
do_CALL:
  if (sx__builtins[in->sub].fn(vm, sp - in->arg, in->arg, &v)) return NULL;
  sp -= in->arg;
  *sp++ = v;
  NEXT;
do_RAISE:
  fail(vm, "%s", k[in->arg].u.s->s);
  return NULL;
do_RET:
  return sp - 1;
#undef NEXT
}

int sx__run(sx_vm *vm, const sx_prog *p, const sx_value *slots, sx_value *out,
           rt_err *err, int64_t budget) {
  const sx_value *r = run(vm, p, slots, err, budget);
  if (!r) return -1;
  copy(out, r);
  return 0;
}

int sx_eval(sx_vm *vm, const sx_prog *p, const sx_value *slots, sx_value *out,
            rt_err *err) {
  return sx__run(vm, p, slots, out, err, INT64_MAX);
}

/* The int fast path: p (p->int_ok) run on a stack of int64, bools as 0/1
** (exact: Python's bool is an int for every opcode here, and only the
** truth of the result is wanted). 0 or 1, or -1 to leave the evaluation
** to run(): a slot that is not an int or bool, an overflow, a divisor that
** is not positive -- every case where Python would raise or leave ints. */
_Static_assert(SX_INT == SX_BOOL + 1, "run_int's slot test reads SX_BOOL..SX_INT as a range");

static int run_int(sx_vm *vm, const sx_prog *p, const sx_value *slots) {
#define INT_BINOPS(X) X(ADD) X(SUB) X(MUL) X(FDIV) X(MOD) X(LT) X(LE) X(GT) X(GE) X(EQ) X(NE)
#define LABELS(name) [OP_##name] = &&i_stack_##name,                         \
    [OP_K_FIRST + OP_##name - OP_ADD] = &&i_k_##name,                        \
    [OP_S_FIRST + OP_##name - OP_ADD] = &&i_s_##name,
  /* every other opcode bails: a default, then the opcodes it runs */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
  static const void *const labels[OP_COUNT] = {
    [0 ... OP_COUNT - 1] = &&i_bail,
    INT_BINOPS(LABELS)
    [OP_CONST] = &&i_CONST, [OP_SLOT] = &&i_SLOT, [OP_NIP] = &&i_NIP,
    [OP_CMPKEEP] = &&i_CMPKEEP, [OP_NEG] = &&i_NEG, [OP_POS] = &&i_POS,
    [OP_INV] = &&i_INV, [OP_NOT] = &&i_NOT, [OP_JUMP] = &&i_JUMP,
    [OP_JUMP_IF_FALSE_OR_POP] = &&i_JIFOP, [OP_JUMP_IF_TRUE_OR_POP] = &&i_JITOP,
    [OP_POP_JUMP_IF_FALSE] = &&i_PJIF, [OP_RET] = &&i_RET};
#pragma GCC diagnostic pop
#undef LABELS
  if ((size_t)p->depth + 1 > vm->icap) {
    free(vm->istack);
    vm->icap = 2 * ((size_t)p->depth + 1);
    vm->istack = rt_malloc(vm->icap * sizeof *vm->istack);
  }
  int64_t *sp = vm->istack, a, b, z;
  const sx_value *const k = p->consts;
  const sx_ins *const code = p->code;
  const sx_ins *ip = code, *in;
#define NEXT do { in = ip++; goto *labels[in->op]; } while (0)
/* slot ix as an int, or bail: SX_BOOL and SX_INT are 1 and 2 */
#define SLOT_INT(ix, dst)                                                    \
  do {                                                                       \
    if ((unsigned)slots[ix].t - SX_BOOL > SX_INT - SX_BOOL) return -1;       \
    dst = slots[ix].u.i;                                                     \
  } while (0)
/* the three operand forms of a binary opcode, then its body */
#define OPERANDS(name)                                                       \
  i_stack_##name: b = *--sp; a = sp[-1]; goto i_body_##name;                 \
  i_k_##name: a = sp[-1]; b = k[in->arg].u.i; goto i_body_##name;            \
  i_s_##name: a = sp[-1]; SLOT_INT(in->arg, b);                              \
  i_body_##name:
#define ARITH(name, FN) OPERANDS(name) if (FN(a, b, &z)) return -1; sp[-1] = z; NEXT;
#define CMP(name, REL) OPERANDS(name) sp[-1] = a REL b; NEXT;
  NEXT;
  ARITH(ADD, __builtin_add_overflow)
  ARITH(SUB, __builtin_sub_overflow)
  ARITH(MUL, __builtin_mul_overflow)
  OPERANDS(FDIV) if (b <= 0) return -1; sp[-1] = a / b - (a % b < 0); NEXT;
  OPERANDS(MOD) if (b <= 0) return -1; z = a % b; sp[-1] = z < 0 ? z + b : z; NEXT;
  CMP(LT, <) CMP(LE, <=) CMP(GT, >) CMP(GE, >=) CMP(EQ, ==) CMP(NE, !=)
#undef ARITH
#undef CMP
#undef OPERANDS
i_CONST: *sp++ = k[in->arg].u.i; NEXT;
i_SLOT: SLOT_INT(in->arg, *sp); sp++; NEXT;
i_NIP: sp[-2] = sp[-1]; sp--; NEXT;
i_CMPKEEP:   /* [a b] -> [b (a sub b)]; sub is one of LT..NE (int_ok) */
  a = sp[-2];
  b = sp[-1];
  sp[-2] = b;
  switch (in->sub) {
  case OP_LT: sp[-1] = a < b; break;
  case OP_LE: sp[-1] = a <= b; break;
  case OP_GT: sp[-1] = a > b; break;
  case OP_GE: sp[-1] = a >= b; break;
  case OP_EQ: sp[-1] = a == b; break;
  case OP_NE: sp[-1] = a != b; break;
  default: return -1;
  }
  NEXT;
i_NEG: if (sp[-1] == INT64_MIN) return -1; sp[-1] = -sp[-1]; NEXT;
i_POS: NEXT;
i_INV: sp[-1] = ~sp[-1]; NEXT;
i_NOT: sp[-1] = !sp[-1]; NEXT;
i_JUMP: ip = code + in->arg; NEXT;
i_JIFOP: if (!sp[-1]) ip = code + in->arg; else sp--; NEXT;
i_JITOP: if (sp[-1]) ip = code + in->arg; else sp--; NEXT;
i_PJIF: if (!*--sp) ip = code + in->arg; NEXT;
i_RET: return sp[-1] != 0;
i_bail: return -1;   /* not an int-path opcode (int_ok excludes it) */
#undef NEXT
#undef SLOT_INT
#undef INT_BINOPS
}

int sx_eval_bool(sx_vm *vm, const sx_prog *p, const sx_value *slots) {
  if (p->int_ok) {
    int r = run_int(vm, p, slots);
    if (r >= 0) return r;
  }
  const sx_value *r = run(vm, p, slots, NULL, INT64_MAX);
  return r && truthy(r);
}
