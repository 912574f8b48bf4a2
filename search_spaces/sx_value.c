/*
** sx_value.c -- values of the space-expression language: the bump arena
** that strings and lists live in, deep copies, and the parts of Python's
** semantics that need no evaluation context: truth, equality, ordering,
** type names and repr() (floats as the shortest text that round-trips).
*/
#include "sx_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---------------------------------------------------------- */

typedef struct chunk {
  struct chunk *next;
  size_t size;              /* usable bytes after the header */
} chunk;

#define CHUNK_HDR ((sizeof(chunk) + 15) & ~(size_t)15)
#define ARENA_MIN 4096
#define ARENA_KEEP ((size_t)1 << 20)   /* most bytes a reset keeps */

struct sx_arena {
  unsigned char *p, *end;   /* free space of the newest chunk */
  chunk *head;              /* newest first */
};

sx_arena *sx_arena_new(void) { return rt_calloc(1, sizeof(sx_arena)); }

static void chunks_free(chunk *c) {
  while (c) {
    chunk *next = c->next;
    free(c);
    c = next;
  }
}

void sx_arena_free(sx_arena *a) {
  if (!a) return;
  chunks_free(a->head);
  free(a);
}

/* Start a new chunk with room for at least n bytes (n a multiple of 16). */
static void arena_grow(sx_arena *a, size_t n) {
  size_t size = a->head ? a->head->size * 2 : ARENA_MIN;
  if (size < n) size = n;
  /* A size near SIZE_MAX cannot be allocated: rt_malloc reports OOM. */
  chunk *c = rt_malloc(size > SIZE_MAX - CHUNK_HDR ? SIZE_MAX : CHUNK_HDR + size);
  c->next = a->head;
  c->size = size;
  a->head = c;
  a->p = (unsigned char *)c + CHUNK_HDR;
  a->end = a->p + size;
}

void *sx_arena_alloc(sx_arena *a, size_t n) {
  n = n > SIZE_MAX - 15 ? SIZE_MAX - 15 : (n + 15) & ~(size_t)15;
  if (!a->p || (size_t)(a->end - a->p) < n) arena_grow(a, n);   /* never NULL */
  void *r = a->p;
  a->p += n;
  return r;
}

void sx__arena_reset(sx_arena *a) {
  chunk *c = a->head;
  if (!c) return;
  if (c->next || c->size > ARENA_KEEP) {
    /* Replace the chunks by one big enough for what they held (so that
    ** repeating the same work allocates nothing), up to ARENA_KEEP. */
    size_t total = 0;
    for (chunk *x = c; x; x = x->next) total += x->size;
    chunks_free(c);
    a->head = NULL;
    arena_grow(a, total < ARENA_KEEP ? total : ARENA_KEEP);
    return;
  }
  a->p = (unsigned char *)c + CHUNK_HDR;
}

const sx_str *sx_arena_str(sx_arena *a, const char *s, size_t len) {
  sx_str *r = sx_arena_alloc(a, sizeof(sx_str) + len + 1);
  r->len = len;
  if (len) memcpy(r->s, s, len);
  r->s[len] = 0;
  return r;
}

sx_value sx_value_copy(sx_arena *a, const sx_value *v) {
  sx_value r = *v;
  if (v->t == SX_STR) {
    r.u.s = sx_arena_str(a, v->u.s->s, v->u.s->len);
  } else if (v->t == SX_LIST || v->t == SX_TUPLE) {
    sx_list *l = sx_arena_alloc(a, sizeof *l + v->u.l->n * sizeof(sx_value));
    l->n = v->u.l->n;
    l->weight = v->u.l->weight;
    l->v = (sx_value *)(l + 1);
    for (size_t i = 0; i < l->n; i++) l->v[i] = sx_value_copy(a, &v->u.l->v[i]);
    r.u.l = l;
  }
  return r;
}

/* ---- truth, equality, ordering -------------------------------------- */

int sx_truth(const sx_value *v) {
  switch (v->t) {
  case SX_BOOL: case SX_INT: return v->u.i != 0;
  case SX_FLOAT: return v->u.f != 0.0;   /* NaN is true */
  case SX_STR: return v->u.s->len != 0;
  case SX_LIST: case SX_TUPLE: return v->u.l->n != 0;
  case SX_NONE: break;
  }
  return 0;
}

/* Exact order of an int and a double (also beyond 2^53). */
static int order_int_float(int64_t i, double f) {
  if (isnan(f)) return SX_ORD_UNORDERED;
  if (f >= 9223372036854775808.0) return SX_ORD_LT;
  if (f < -9223372036854775808.0) return SX_ORD_GT;
  int64_t t = (int64_t)f;            /* exact: |f| < 2^63 */
  if (i != t) return i < t ? SX_ORD_LT : SX_ORD_GT;
  double frac = f - (double)t;       /* exact */
  return frac > 0 ? SX_ORD_LT : frac < 0 ? SX_ORD_GT : SX_ORD_EQ;
}

static int is_num(sx_type t) { return t == SX_BOOL || t == SX_INT || t == SX_FLOAT; }

/* Order of two numbers. */
static int order_num(const sx_value *a, const sx_value *b) {
  static const int flip[] = {SX_ORD_GT, SX_ORD_EQ, SX_ORD_LT, SX_ORD_UNORDERED};
  if (a->t != SX_FLOAT && b->t != SX_FLOAT)
    return a->u.i < b->u.i ? SX_ORD_LT : a->u.i > b->u.i ? SX_ORD_GT : SX_ORD_EQ;
  if (a->t != SX_FLOAT) return order_int_float(a->u.i, b->u.f);
  if (b->t != SX_FLOAT) return flip[order_int_float(b->u.i, a->u.f)];
  double x = a->u.f, y = b->u.f;
  return x < y ? SX_ORD_LT : x > y ? SX_ORD_GT : x == y ? SX_ORD_EQ : SX_ORD_UNORDERED;
}

static int order_str(const sx_str *a, const sx_str *b) {
  size_t n = a->len < b->len ? a->len : b->len;
  int c = n ? memcmp(a->s, b->s, n) : 0;
  if (!c) c = (a->len > b->len) - (a->len < b->len);
  return c < 0 ? SX_ORD_LT : c > 0 ? SX_ORD_GT : SX_ORD_EQ;
}

int sx_equal(const sx_value *a, const sx_value *b) {
  if (is_num(a->t) && is_num(b->t)) return order_num(a, b) == SX_ORD_EQ;
  if (a->t != b->t) return 0;
  switch (a->t) {
  case SX_NONE: return 1;
  case SX_STR: return order_str(a->u.s, b->u.s) == SX_ORD_EQ;
  case SX_LIST: case SX_TUPLE:
    if (a->u.l->n != b->u.l->n) return 0;
    for (size_t i = 0; i < a->u.l->n; i++)
      if (!sx_equal(&a->u.l->v[i], &b->u.l->v[i])) return 0;
    return 1;
  default: return 0;   /* numbers were handled above */
  }
}

int sx__order(const sx_value *a, const sx_value *b, const sx_value **bad_a,
             const sx_value **bad_b) {
  if (is_num(a->t) && is_num(b->t)) return order_num(a, b);
  if (a->t == b->t && a->t == SX_STR) return order_str(a->u.s, b->u.s);
  if (a->t == b->t && (a->t == SX_LIST || a->t == SX_TUPLE)) {
    /* Like CPython: the first elements that differ (by ==) decide. */
    const sx_list *x = a->u.l, *y = b->u.l;
    for (size_t i = 0; i < x->n && i < y->n; i++)
      if (!sx_equal(&x->v[i], &y->v[i]))
        return sx__order(&x->v[i], &y->v[i], bad_a, bad_b);
    return x->n < y->n ? SX_ORD_LT : x->n > y->n ? SX_ORD_GT : SX_ORD_EQ;
  }
  *bad_a = a;
  *bad_b = b;
  return SX_ORD_TYPE;
}

const char *sx_type_name(sx_type t) {
  static const char *const names[] = {
    [SX_NONE] = "NoneType", [SX_BOOL] = "bool", [SX_INT] = "int",
    [SX_FLOAT] = "float", [SX_STR] = "str", [SX_LIST] = "list",
    [SX_TUPLE] = "tuple"};
  return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

/* ---- repr ----------------------------------------------------------- */

typedef struct {
  char *buf;
  size_t cap, len;   /* len counts everything, also what did not fit */
} wbuf;

static void put(wbuf *w, const char *s, size_t n) {
  if (w->len < w->cap) {
    size_t room = w->cap - w->len;
    memcpy(w->buf + w->len, s, n < room ? n : room);
  }
  w->len += n;
}

static void puts_(wbuf *w, const char *s) { put(w, s, strlen(s)); }

/* The double that digits dg[0..nd) times 10^(exp+1-nd) reads as. */
static double digits_value(const char *dg, int nd, int exp) {
  char t[48];
  snprintf(t, sizeof t, "0.%.*se%d", nd, dg, exp + 1);
  return strtod(t, NULL);
}

/* Shortest decimal digits of finite d >= 0 that read back as d (the
** nearest such, as Python's repr picks), into dg; returns their number
** and sets *exp to the decimal exponent of the first digit. */
static int shortest_digits(double d, char *dg, int *exp) {
  for (int prec = 0;; prec++) {
    char e[40];
    int nd = 0;
    snprintf(e, sizeof e, "%.*e", prec, d);   /* correctly rounded */
    const char *s = e;
    for (; *s != 'e'; s++)
      if (*s != '.') dg[nd++] = *s;
    *exp = atoi(s + 1);
    if (digits_value(dg, nd, *exp) == d || prec == 16) return nd;
    /* Just above a power of two the interval below d is half as wide,
    ** so the next decimal up may read back when the nearest does not. */
    int k = nd - 1;
    while (k >= 0 && dg[k] == '9') dg[k--] = '0';
    if (k < 0) {
      dg[0] = '1';
      ++*exp;
    } else {
      dg[k]++;
    }
    if (digits_value(dg, nd, *exp) == d) return nd;
  }
}

/* Python's float repr: the shortest digits that read back as d, in fixed
** notation for decimal exponents -4..15 and as d.ddde+XX otherwise. */
static void repr_float(wbuf *w, double d) {
  if (isnan(d)) { puts_(w, "nan"); return; }
  if (isinf(d)) { puts_(w, d > 0 ? "inf" : "-inf"); return; }
  char digits[24], out[64];
  int exp, o = 0, nd = shortest_digits(fabs(d), digits, &exp);
  if (signbit(d)) out[o++] = '-';
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  if (exp < -4 || exp >= 16) {
    out[o++] = digits[0];
    if (nd > 1) {
      out[o++] = '.';
      memcpy(out + o, digits + 1, (size_t)nd - 1);
      o += nd - 1;
    }
    o += snprintf(out + o, sizeof out - (size_t)o, "e%c%02d", exp < 0 ? '-' : '+',
                  exp < 0 ? -exp : exp);
  } else if (exp < 0) {
    out[o++] = '0';
    out[o++] = '.';
    for (int i = -1; i > exp; i--) out[o++] = '0';
    memcpy(out + o, digits, (size_t)nd);
    o += nd;
  } else {
    for (int i = 0; i <= exp; i++) out[o++] = i < nd ? digits[i] : '0';
    out[o++] = '.';
    if (nd > exp + 1) {
      memcpy(out + o, digits + exp + 1, (size_t)(nd - exp - 1));
      o += nd - exp - 1;
    } else {
      out[o++] = '0';
    }
  }
  put(w, out, (size_t)o);
}

/* Python's str repr: prefer single quotes, escape backslash, the quote,
** \t \n \r and other control bytes (bytes >= 0x80 pass through). */
static void repr_str(wbuf *w, const sx_str *s) {
  char q = memchr(s->s, '\'', s->len) && !memchr(s->s, '"', s->len) ? '"' : '\'';
  put(w, &q, 1);
  for (size_t i = 0; i < s->len; i++) {
    unsigned char c = (unsigned char)s->s[i];
    char esc[8];
    if (c == '\\' || c == (unsigned char)q) {
      esc[0] = '\\';
      esc[1] = (char)c;
      put(w, esc, 2);
    } else if (c == '\t' || c == '\n' || c == '\r') {
      esc[0] = '\\';
      esc[1] = c == '\t' ? 't' : c == '\n' ? 'n' : 'r';
      put(w, esc, 2);
    } else if (c < 0x20 || c == 0x7f) {
      put(w, esc, (size_t)snprintf(esc, sizeof esc, "\\x%02x", c));
    } else {
      put(w, (const char *)&c, 1);
    }
  }
  put(w, &q, 1);
}

static void repr_value(wbuf *w, const sx_value *v) {
  char num[32];
  switch (v->t) {
  case SX_NONE: puts_(w, "None"); break;
  case SX_BOOL: puts_(w, v->u.i ? "True" : "False"); break;
  case SX_INT:
    put(w, num, (size_t)snprintf(num, sizeof num, "%lld", (long long)v->u.i));
    break;
  case SX_FLOAT: repr_float(w, v->u.f); break;
  case SX_STR: repr_str(w, v->u.s); break;
  case SX_LIST: case SX_TUPLE: {
    const sx_list *l = v->u.l;
    put(w, v->t == SX_LIST ? "[" : "(", 1);
    for (size_t i = 0; i < l->n; i++) {
      if (i) put(w, ", ", 2);
      repr_value(w, &l->v[i]);
    }
    if (v->t == SX_TUPLE && l->n == 1) put(w, ",", 1);
    put(w, v->t == SX_LIST ? "]" : ")", 1);
    break;
  }
  }
}

size_t sx_repr(const sx_value *v, char *buf, size_t cap) {
  wbuf w = {buf, cap, 0};
  repr_value(&w, v);
  if (cap) buf[w.len < cap ? w.len : cap - 1] = 0;
  return w.len;
}
