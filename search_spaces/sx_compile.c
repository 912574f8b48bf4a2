/*
** sx_compile.c -- compiles space-expression text to sx_prog bytecode. A
** lexer turns the text into tokens; a recursive-descent parser (precedence
** climbing for the binary operators) builds a small AST; a resolve pass
** binds names (comprehension variable, then sx_name slot or constant, then
** builtin when called); a fold pass replaces every closed sub-expression
** (one reading no slot) by its value, computed by running it on a VM --
** when that raises, the code stays and raises at run time; code
** generation then emits the bytecode, tracking the value-stack depth.
*/
#include "sx_int.h"

#include <ctype.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NEST 200          /* parser recursion: brackets, unary operators */
#define MAX_DEPTH 1000        /* AST depth */
#define FOLD_BUDGET 1000000   /* loop iterations + elements one fold may spend */

/* ---- tokens --------------------------------------------------------- */

typedef enum {
  T_END, T_INT, T_BIGINT, T_FLOAT, T_STR, T_NAME,
  T_AND, T_OR, T_NOT, T_IN, T_IS, T_IF, T_ELSE, T_FOR, T_TRUE, T_FALSE, T_NONE,
  T_DSTAR, T_DSLASH, T_LSHIFT, T_RSHIFT, T_LE, T_GE, T_EQ, T_NE,
  T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT, T_AMP, T_PIPE, T_CARET,
  T_TILDE, T_LT, T_GT, T_LPAR, T_RPAR, T_LBR, T_RBR, T_COMMA, T_COLON, T_DOT,
  T_ASSIGN
} tok_kind;

static const struct { const char *text; tok_kind kind; } keywords[] = {
  {"and", T_AND}, {"or", T_OR}, {"not", T_NOT}, {"in", T_IN}, {"is", T_IS},
  {"if", T_IF}, {"else", T_ELSE}, {"for", T_FOR}, {"True", T_TRUE},
  {"False", T_FALSE}, {"None", T_NONE}};

/* Two-character operators first, so that the longest match wins. */
static const struct { const char *text; tok_kind kind; } puncts[] = {
  {"**", T_DSTAR}, {"//", T_DSLASH}, {"<<", T_LSHIFT}, {">>", T_RSHIFT},
  {"<=", T_LE}, {">=", T_GE}, {"==", T_EQ}, {"!=", T_NE}, {"+", T_PLUS},
  {"-", T_MINUS}, {"*", T_STAR}, {"/", T_SLASH}, {"%", T_PERCENT},
  {"&", T_AMP}, {"|", T_PIPE}, {"^", T_CARET}, {"~", T_TILDE}, {"<", T_LT},
  {">", T_GT}, {"(", T_LPAR}, {")", T_RPAR}, {"[", T_LBR}, {"]", T_RBR},
  {",", T_COMMA}, {":", T_COLON}, {".", T_DOT}, {"=", T_ASSIGN}};

/* Binary operators below comparisons, loosest first. */
static const struct { tok_kind tok; int prec; sx_op op; } binops[] = {
  {T_PIPE, 1, OP_BOR}, {T_CARET, 2, OP_BXOR}, {T_AMP, 3, OP_BAND},
  {T_LSHIFT, 4, OP_LSH}, {T_RSHIFT, 4, OP_RSH}, {T_PLUS, 5, OP_ADD},
  {T_MINUS, 5, OP_SUB}, {T_STAR, 6, OP_MUL}, {T_SLASH, 6, OP_TDIV},
  {T_DSLASH, 6, OP_FDIV}, {T_PERCENT, 6, OP_MOD}};

static const struct { tok_kind tok; sx_op op; } cmpops[] = {
  {T_LT, OP_LT}, {T_LE, OP_LE}, {T_GT, OP_GT}, {T_GE, OP_GE},
  {T_EQ, OP_EQ}, {T_NE, OP_NE}, {T_IN, OP_IN}};

static const struct { tok_kind tok; sx_op op; } unops[] = {
  {T_MINUS, OP_NEG}, {T_PLUS, OP_POS}, {T_TILDE, OP_INV}};

typedef struct token {
  tok_kind kind;
  int pos, len;        /* byte offset and length in the source */
  union {
    int64_t i;         /* T_INT; T_BIGINT: 1 when the value is exactly 2^63 */
    double f;
    const sx_str *s;
  } v;
} token;

/* ---- AST ------------------------------------------------------------ */

typedef enum {
  N_CONST, N_NAME, N_SLOT, N_LOCAL, N_RAISE, N_UNARY, N_NOT, N_BINARY,
  N_COMPARE, N_AND, N_OR, N_IFEXP, N_LIST, N_TUPLE, N_CALL, N_SUBSCR,
  N_COMP, N_FOR, N_IF
} node_kind;

/* Kids by kind: N_IFEXP (body, cond, orelse); N_COMP (element, clauses);
** N_FOR (iterable) and N_IF (condition) are clauses of an N_COMP. */
typedef struct node node;
struct node {
  node_kind kind;
  int op;              /* N_UNARY/N_BINARY: opcode; N_CALL: builtin;
                          N_COMP: 1 for a generator expression */
  int pos;             /* byte offset of the construct, for messages */
  int n;
  node **kid;
  unsigned char *cmp;  /* N_COMPARE: the n-1 comparison opcodes */
  sx_value v;          /* N_CONST: the value; N_RAISE: its message */
  int idx;             /* N_SLOT: slot; N_LOCAL, N_FOR: variable */
  int namelen;         /* N_NAME, N_CALL, N_FOR: the name is src + pos */
  int uses_slot;       /* reads a slot */
  int lref;            /* lowest variable read but bound outside; INT_MAX: none */
};

typedef struct {
  sx_ins *code;
  int n, cap;
  sx_value *k;         /* constants */
  int nk, capk;
  int depth, max;      /* value-stack depth now and at most */
} emitter;

typedef struct {
  const char *src;
  token *tok;
  int ntok, captok, cur;
  sx_arena *ast;       /* nodes and scratch text */
  sx_prog *prog;       /* being built; its arena takes the constants */
  const sx_name *names;
  int nnames;
  struct { const char *name; int len, idx; } *scope;  /* comprehension variables */
  int nscope, capscope;
  int nlocals, nest;
  sx_vm *vm;           /* runs folds; made on first use */
  emitter main;
  rt_err *err;
  jmp_buf jb;
} cc;

__attribute__((format(printf, 3, 4), noreturn))
static void cfail(cc *c, int pos, const char *fmt, ...) {
  if (c->err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err->msg, sizeof c->err->msg, fmt, ap);
    va_end(ap);
    c->err->line = 1;
    c->err->col = pos + 1;
  }
  longjmp(c->jb, 1);
}

/* ---- lexer ---------------------------------------------------------- */

static token *push_tok(cc *c, tok_kind kind, int pos, int end) {
  if (c->ntok == c->captok) {
    c->captok = c->captok ? 2 * c->captok : 64;
    c->tok = rt_realloc(c->tok, (size_t)c->captok * sizeof(token));
  }
  token *t = &c->tok[c->ntok++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->pos = pos;
  t->len = end - pos;
  return t;
}

static int digit_val(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return 99;
}

static int ident_char(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

/* Push an int token for v (T_BIGINT when it does not fit). */
static void int_tok(cc *c, int pos, int end, uint64_t v, int ovf) {
  token *t = push_tok(c, ovf || v > INT64_MAX ? T_BIGINT : T_INT, pos, end);
  t->v.i = t->kind == T_INT ? (int64_t)v : !ovf && v == (uint64_t)INT64_MAX + 1;
}

/* 0x/0o/0b literal at i; returns the end. */
static int lex_based(cc *c, int i) {
  static const char *const what[] = {"binary", "octal", "hexadecimal"};
  const char *s = c->src;
  int start = i, p = tolower((unsigned char)s[i + 1]);
  int base = p == 'x' ? 16 : p == 'o' ? 8 : 2, nd = 0, ovf = 0;
  uint64_t v = 0;
  for (i += 2;; i++) {
    if (s[i] == '_' && digit_val(s[i + 1]) < base) continue;
    int d = digit_val(s[i]);
    if (d >= base) break;
    ovf |= __builtin_mul_overflow(v, (uint64_t)base, &v) ||
           __builtin_add_overflow(v, (uint64_t)d, &v);
    nd++;
  }
  if (!nd || ident_char(s[i]) || s[i] == '.')
    cfail(c, start, "invalid %s literal", what[base == 16 ? 2 : base == 8]);
  int_tok(c, start, i, v, ovf);
  return i;
}

/* Decimal digits with single underscores between them, from i. */
static int scan_digits(const char *s, int i) {
  while (isdigit((unsigned char)s[i]) ||
         (s[i] == '_' && i > 0 && isdigit((unsigned char)s[i - 1]) &&
          isdigit((unsigned char)s[i + 1])))
    i++;
  return i;
}

/* Number literal at i; returns the end. */
static int lex_number(cc *c, int i) {
  const char *s = c->src;
  int start = i, isfloat = 0;
  if (s[i] == '0' && s[i + 1] && strchr("xXoObB", s[i + 1])) return lex_based(c, i);
  i = scan_digits(s, i);
  if (s[i] == '.') {
    isfloat = 1;
    i = scan_digits(s, i + 1);
  }
  if ((s[i] == 'e' || s[i] == 'E') &&
      (isdigit((unsigned char)s[i + 1]) ||
       ((s[i + 1] == '+' || s[i + 1] == '-') && isdigit((unsigned char)s[i + 2])))) {
    isfloat = 1;
    i = scan_digits(s, i + (isdigit((unsigned char)s[i + 1]) ? 1 : 2));
  }
  if (s[i] == 'j' || s[i] == 'J') cfail(c, start, "complex literals are not supported");
  if (ident_char(s[i])) cfail(c, start, "invalid decimal literal");
  char *text = sx_arena_alloc(c->ast, (size_t)(i - start) + 1);
  int n = 0;
  for (int k = start; k < i; k++)
    if (s[k] != '_') text[n++] = s[k];
  text[n] = 0;
  if (isfloat) {
    push_tok(c, T_FLOAT, start, i)->v.f = strtod(text, NULL);
    return i;
  }
  if (text[0] == '0' && text[strspn(text, "0")])
    cfail(c, start, "leading zeros in decimal integer literals are not permitted");
  uint64_t v = 0;
  int ovf = 0;
  for (int k = 0; k < n; k++)
    ovf |= __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(text[k] - '0'), &v);
  int_tok(c, start, i, v, ovf);
  return i;
}

static int utf8(char *o, uint32_t cp) {
  if (cp < 0x80) {
    o[0] = (char)cp;
    return 1;
  }
  if (cp < 0x800) {
    o[0] = (char)(0xc0 | cp >> 6);
    o[1] = (char)(0x80 | (cp & 0x3f));
    return 2;
  }
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | cp >> 12);
    o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f));
    return 3;
  }
  o[0] = (char)(0xf0 | cp >> 18);
  o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
  o[3] = (char)(0x80 | (cp & 0x3f));
  return 4;
}

/* String literal whose token starts at start (prefix included) and whose
** quote is at q; returns the end. Escapes as in Python; none when raw. */
static int lex_string(cc *c, int start, int q, int raw) {
  static const char esc_in[] = "abfnrtv\\'\"", esc_out[] = "\a\b\f\n\r\t\v\\'\"";
  const char *s = c->src;
  char quote = s[q];
  int triple = s[q + 1] == quote && s[q + 2] == quote;
  int i = q + (triple ? 3 : 1);
  char *buf = sx_arena_alloc(c->ast, strlen(s + i) + 1);   /* decoding never grows */
  size_t n = 0;
  for (;;) {
    char ch = s[i];
    if (!ch || (ch == '\n' && !triple) || (ch == '\\' && !s[i + 1]))
      cfail(c, start, "unterminated %sstring literal", triple ? "triple-quoted " : "");
    if (ch == quote && (!triple || (s[i + 1] == quote && s[i + 2] == quote))) {
      i += triple ? 3 : 1;
      break;
    }
    if (ch != '\\' || raw) {
      buf[n++] = ch;
      if (ch == '\\') buf[n++] = s[i + 1];   /* raw: keeps \' inside */
      i += ch == '\\' ? 2 : 1;
      continue;
    }
    char e = s[i + 1];
    const char *simple = strchr(esc_in, e);
    int at = i;
    i += 2;
    if (e == '\n') continue;                 /* line continuation */
    if (simple) {
      buf[n++] = esc_out[simple - esc_in];
    } else if (e >= '0' && e <= '7') {
      uint32_t cp = (uint32_t)(e - '0');
      for (int k = 0; k < 2 && s[i] >= '0' && s[i] <= '7'; k++) cp = cp * 8 + (uint32_t)(s[i++] - '0');
      n += (size_t)utf8(buf + n, cp);
    } else if (e == 'x' || e == 'u' || e == 'U') {
      int want = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      uint32_t cp = 0;
      for (int k = 0; k < want; k++, i++) {
        if (digit_val(s[i]) > 15) cfail(c, at, "truncated \\%c escape", e);
        cp = cp * 16 + (uint32_t)digit_val(s[i]);
      }
      if (cp > 0x10ffff) cfail(c, at, "illegal Unicode character in \\U escape");
      n += (size_t)utf8(buf + n, cp);
    } else if (e == 'N') {
      cfail(c, at, "\\N{...} escapes are not supported");
    } else {
      buf[n++] = '\\';                       /* unknown escapes stay */
      buf[n++] = e;
    }
  }
  push_tok(c, T_STR, start, i)->v.s = sx_arena_str(c->prog->arena, buf, n);
  return i;
}

/* Name, keyword or prefixed string at i; returns the end. */
static int lex_name(cc *c, int i) {
  const char *s = c->src;
  int start = i;
  while (ident_char(s[i])) i++;
  int len = i - start;
  if (s[i] == '\'' || s[i] == '"') {
    if (len == 1 && strchr("rRuU", s[start])) return lex_string(c, start, i, tolower((unsigned char)s[start]) == 'r');
    if (len <= 2 && strspn(s + start, "rRbBfFuU") >= (size_t)len)
      cfail(c, start, "bytes and f-string literals are not supported");
  }
  for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
    if ((int)strlen(keywords[k].text) == len && !memcmp(keywords[k].text, s + start, (size_t)len)) {
      push_tok(c, keywords[k].kind, start, i);
      return i;
    }
  push_tok(c, T_NAME, start, i);
  return i;
}

static void lex(cc *c) {
  const char *s = c->src;
  int i = 0;
  for (;;) {
    if (s[i] == '#') {
      while (s[i] && s[i] != '\n') i++;
    } else if (s[i] == '\\' && s[i + 1] == '\n') {
      i += 2;
    } else if (isspace((unsigned char)s[i])) {
      i++;
    } else if (!s[i]) {
      push_tok(c, T_END, i, i);
      return;
    } else if (isdigit((unsigned char)s[i]) || (s[i] == '.' && isdigit((unsigned char)s[i + 1]))) {
      i = lex_number(c, i);
    } else if (isalpha((unsigned char)s[i]) || s[i] == '_') {
      i = lex_name(c, i);
    } else if (s[i] == '\'' || s[i] == '"') {
      i = lex_string(c, i, i, 0);
    } else {
      size_t k = 0, np = sizeof puncts / sizeof puncts[0];
      while (k < np && strncmp(s + i, puncts[k].text, strlen(puncts[k].text))) k++;
      if (k == np) {
        if (isprint((unsigned char)s[i])) cfail(c, i, "invalid character '%c'", s[i]);
        cfail(c, i, "invalid character (byte 0x%02x)", (unsigned char)s[i]);
      }
      push_tok(c, puncts[k].kind, i, i + (int)strlen(puncts[k].text));
      i += (int)strlen(puncts[k].text);
    }
  }
}

/* ---- parser --------------------------------------------------------- */

static token *peek(cc *c) { return &c->tok[c->cur]; }

static token *next(cc *c) {
  token *t = &c->tok[c->cur];
  if (t->kind != T_END) c->cur++;
  return t;
}

static int accept(cc *c, tok_kind kind) {
  if (peek(c)->kind != kind) return 0;
  c->cur++;
  return 1;
}

__attribute__((noreturn))
static void unexpected(cc *c, const token *t) {
  if (t->kind == T_END) cfail(c, t->pos, "unexpected end of expression");
  cfail(c, t->pos, "unexpected '%.*s'", t->len, c->src + t->pos);
}

static void expect(cc *c, tok_kind kind) {
  if (!accept(c, kind)) unexpected(c, peek(c));
}

/* Consume the closer of the bracket opened at byte open. */
static void close_bracket(cc *c, tok_kind closer, int open) {
  if (accept(c, closer)) return;
  if (peek(c)->kind == T_END) cfail(c, open, "'%c' was never closed", c->src[open]);
  unexpected(c, peek(c));
}

static void enter(cc *c, int pos) {
  if (++c->nest > MAX_NEST) cfail(c, pos, "expression nested too deeply");
}

static node *mk(cc *c, node_kind kind, int pos, int n) {
  node *x = sx_arena_alloc(c->ast, sizeof *x);
  memset(x, 0, sizeof *x);
  x->kind = kind;
  x->pos = pos;
  x->n = n;
  x->kid = sx_arena_alloc(c->ast, (size_t)n * sizeof(node *));
  x->lref = INT_MAX;
  return x;
}

static node *mk2(cc *c, node_kind kind, int op, int pos, node *a, node *b) {
  node *x = mk(c, kind, pos, 2);
  x->op = op;
  x->kid[0] = a;
  x->kid[1] = b;
  return x;
}

static node *const_node(cc *c, int pos, sx_value v) {
  node *x = mk(c, N_CONST, pos, 0);
  x->v = v;
  return x;
}

/* Make room for element n of the arena array *v of capacity *cap. */
static void *arena_grow_array(cc *c, void *v, int n, int *cap, size_t elem) {
  if (n < *cap) return v;
  *cap = *cap ? 2 * *cap : 4;
  void *w = sx_arena_alloc(c->ast, (size_t)*cap * elem);
  if (n) memcpy(w, v, (size_t)n * elem);
  return w;
}

typedef struct { node **v; int n, cap; } nodevec;

static void nv_push(cc *c, nodevec *nv, node *x) {
  nv->v = arena_grow_array(c, nv->v, nv->n, &nv->cap, sizeof(node *));
  nv->v[nv->n++] = x;
}

static node *mk_vec(cc *c, node_kind kind, int pos, const nodevec *nv) {
  node *x = mk(c, kind, pos, 0);
  x->n = nv->n;
  x->kid = nv->v;
  return x;
}

static node *parse_test(cc *c);
static node *parse_or(cc *c);
static node *parse_unary(cc *c);

/* Comprehension clauses after the element expression elt. */
static node *parse_comp(cc *c, node *elt) {
  nodevec nv = {0};
  nv_push(c, &nv, elt);
  while (peek(c)->kind == T_FOR || (nv.n > 1 && peek(c)->kind == T_IF)) {
    tok_kind kind = next(c)->kind;
    node *cl;
    if (kind == T_FOR) {
      token *name = peek(c);
      if (name->kind != T_NAME) unexpected(c, name);
      next(c);
      if (peek(c)->kind == T_COMMA)
        cfail(c, peek(c)->pos, "only a single name can be a comprehension variable");
      expect(c, T_IN);
      cl = mk(c, N_FOR, name->pos, 1);
      cl->namelen = name->len;
    } else {
      cl = mk(c, N_IF, peek(c)->pos, 1);
    }
    cl->kid[0] = parse_or(c);
    nv_push(c, &nv, cl);
  }
  return mk_vec(c, N_COMP, elt->pos, &nv);
}

/* Items after first, up to closer, into a node of kind. */
static node *parse_items(cc *c, node_kind kind, node *first, tok_kind closer, int open) {
  nodevec nv = {0};
  nv_push(c, &nv, first);
  while (accept(c, T_COMMA) && peek(c)->kind != closer) nv_push(c, &nv, parse_test(c));
  close_bracket(c, closer, open);
  return mk_vec(c, kind, open, &nv);
}

static node *parse_paren(cc *c, int open) {
  if (accept(c, T_RPAR)) return mk(c, N_TUPLE, open, 0);
  node *e = parse_test(c);
  if (peek(c)->kind == T_FOR)
    cfail(c, peek(c)->pos, "generator expressions are only supported as the argument of a builtin");
  if (peek(c)->kind == T_COMMA) return parse_items(c, N_TUPLE, e, T_RPAR, open);
  close_bracket(c, T_RPAR, open);
  return e;
}

static node *parse_bracket(cc *c, int open) {
  if (accept(c, T_RBR)) return mk(c, N_LIST, open, 0);
  node *e = parse_test(c);
  if (peek(c)->kind != T_FOR) return parse_items(c, N_LIST, e, T_RBR, open);
  e = parse_comp(c, e);
  close_bracket(c, T_RBR, open);
  return e;
}

static node *parse_atom(cc *c) {
  token *t = next(c);
  switch (t->kind) {
  case T_INT: return const_node(c, t->pos, sx_int(t->v.i));
  case T_FLOAT: return const_node(c, t->pos, sx_float(t->v.f));
  case T_TRUE: case T_FALSE: return const_node(c, t->pos, sx_bool(t->kind == T_TRUE));
  case T_NONE: return const_node(c, t->pos, (sx_value){.t = SX_NONE});
  case T_BIGINT: {
    node *x = mk(c, N_RAISE, t->pos, 0);
    const char *msg = "OverflowError: int literal does not fit in 64 bits";
    x->v.t = SX_STR;
    x->v.u.s = sx_arena_str(c->prog->arena, msg, strlen(msg));
    return x;
  }
  case T_STR: {
    sx_value v = {.t = SX_STR, .u.s = t->v.s};
    for (; peek(c)->kind == T_STR; next(c)) {   /* 'a' 'b' is 'ab' */
      const sx_str *a = v.u.s, *b = peek(c)->v.s;
      char *cat = sx_arena_alloc(c->ast, a->len + b->len + 1);
      memcpy(cat, a->s, a->len);
      memcpy(cat + a->len, b->s, b->len);
      v.u.s = sx_arena_str(c->prog->arena, cat, a->len + b->len);
    }
    return const_node(c, t->pos, v);
  }
  case T_NAME: {
    node *x = mk(c, N_NAME, t->pos, 0);
    x->namelen = t->len;
    return x;
  }
  case T_LPAR: return parse_paren(c, t->pos);
  case T_LBR: return parse_bracket(c, t->pos);
  default: unexpected(c, t);
  }
}

/* atom followed by calls and subscripts */
static node *parse_primary(cc *c) {
  node *e = parse_atom(c);
  for (;;) {
    token *t = peek(c);
    if (t->kind == T_LPAR) {
      if (e->kind != N_NAME) cfail(c, t->pos, "only builtin functions can be called");
      next(c);
      nodevec nv = {0};
      if (peek(c)->kind != T_RPAR) {
        node *a = parse_test(c);
        if (peek(c)->kind == T_FOR) {
          a = parse_comp(c, a);
          a->op = 1;
          nv_push(c, &nv, a);
        } else {
          nv_push(c, &nv, a);
          while (accept(c, T_COMMA) && peek(c)->kind != T_RPAR) nv_push(c, &nv, parse_test(c));
        }
      }
      close_bracket(c, T_RPAR, t->pos);
      node *call = mk_vec(c, N_CALL, e->pos, &nv);
      call->namelen = e->namelen;
      e = call;
    } else if (t->kind == T_LBR) {
      next(c);
      node *ix = parse_test(c);
      if (peek(c)->kind == T_COLON) cfail(c, peek(c)->pos, "slices are not supported");
      close_bracket(c, T_RBR, t->pos);
      e = mk2(c, N_SUBSCR, 0, t->pos, e, ix);
    } else if (t->kind == T_DOT) {
      cfail(c, t->pos, "attribute access is not supported");
    } else {
      return e;
    }
  }
}

/* primary ['**' unary]: ** binds tighter than a unary minus on its left */
static node *parse_power(cc *c) {
  node *base = parse_primary(c);
  token *t = peek(c);
  if (t->kind != T_DSTAR) return base;
  next(c);
  return mk2(c, N_BINARY, OP_POW, t->pos, base, parse_unary(c));
}

static node *parse_unary(cc *c) {
  token *t = peek(c);
  /* -9223372036854775808 is an int even though its literal is not. */
  if (t->kind == T_MINUS && t[1].kind == T_BIGINT && t[1].v.i && t[2].kind != T_DSTAR &&
      t[2].kind != T_LPAR && t[2].kind != T_LBR && t[2].kind != T_DOT) {
    c->cur += 2;
    return const_node(c, t->pos, sx_int(INT64_MIN));
  }
  for (size_t k = 0; k < sizeof unops / sizeof unops[0]; k++)
    if (t->kind == unops[k].tok) {
      next(c);
      enter(c, t->pos);
      node *x = mk(c, N_UNARY, t->pos, 1);
      x->op = unops[k].op;
      x->kid[0] = parse_unary(c);
      c->nest--;
      return x;
    }
  return parse_power(c);
}

/* Precedence climbing over binops[] (all left-associative). */
static node *parse_binary(cc *c, int minprec) {
  node *left = parse_unary(c);
  for (;;) {
    token *t = peek(c);
    size_t k = 0, nb = sizeof binops / sizeof binops[0];
    while (k < nb && binops[k].tok != t->kind) k++;
    if (k == nb || binops[k].prec < minprec) return left;
    next(c);
    left = mk2(c, N_BINARY, binops[k].op, t->pos, left, parse_binary(c, binops[k].prec + 1));
  }
}

/* a < b < c ...: operands and operators of one chain in one node */
static node *parse_comparison(cc *c) {
  node *first = parse_binary(c, 1);
  nodevec nv = {0};
  unsigned char *ops = NULL;
  int capops = 0;
  nv_push(c, &nv, first);
  for (;;) {
    token *t = peek(c);
    int op = -1;
    if (t->kind == T_NOT && t[1].kind == T_IN) {
      op = OP_NOTIN;
      c->cur++;
    } else if (t->kind == T_IS) {
      cfail(c, t->pos, "'is' is not supported (use == or !=)");
    }
    for (size_t k = 0; k < sizeof cmpops / sizeof cmpops[0] && op < 0; k++)
      if (t->kind == cmpops[k].tok) op = cmpops[k].op;
    if (op < 0) break;
    next(c);
    ops = arena_grow_array(c, ops, nv.n - 1, &capops, 1);
    ops[nv.n - 1] = (unsigned char)op;
    nv_push(c, &nv, parse_binary(c, 1));
  }
  if (nv.n == 1) return first;
  node *x = mk_vec(c, N_COMPARE, first->pos, &nv);
  x->cmp = ops;
  return x;
}

static node *parse_not(cc *c) {
  token *t = peek(c);
  if (t->kind != T_NOT) return parse_comparison(c);
  next(c);
  enter(c, t->pos);
  node *x = mk(c, N_NOT, t->pos, 1);
  x->kid[0] = parse_not(c);
  c->nest--;
  return x;
}

/* a and b and c as and(a, and(b, c)): same value, jumps go to the end. */
static node *parse_chain(cc *c, tok_kind tok, node_kind kind, node *(*sub)(cc *)) {
  nodevec nv = {0};
  nv_push(c, &nv, sub(c));
  while (accept(c, tok)) nv_push(c, &nv, sub(c));
  node *x = nv.v[nv.n - 1];
  for (int k = nv.n - 2; k >= 0; k--) x = mk2(c, kind, 0, nv.v[k]->pos, nv.v[k], x);
  return x;
}

static node *parse_and(cc *c) { return parse_chain(c, T_AND, N_AND, parse_not); }
static node *parse_or(cc *c) { return parse_chain(c, T_OR, N_OR, parse_and); }

/* or_test ['if' or_test 'else' test] */
static node *parse_test(cc *c) {
  enter(c, peek(c)->pos);
  node *e = parse_or(c);
  token *t = peek(c);
  if (t->kind == T_IF) {
    next(c);
    node *x = mk(c, N_IFEXP, t->pos, 3);
    x->kid[0] = e;
    x->kid[1] = parse_or(c);
    expect(c, T_ELSE);
    x->kid[2] = parse_test(c);
    e = x;
  }
  c->nest--;
  return e;
}

/* test [',' test]* [','] -- a bare tuple at the top level */
static node *parse_top(cc *c) {
  node *e = parse_test(c);
  if (peek(c)->kind == T_COMMA) {
    nodevec nv = {0};
    nv_push(c, &nv, e);
    while (accept(c, T_COMMA) && peek(c)->kind != T_END) nv_push(c, &nv, parse_test(c));
    e = mk_vec(c, N_TUPLE, e->pos, &nv);
  }
  if (peek(c)->kind != T_END) unexpected(c, peek(c));
  return e;
}

/* ---- name resolution ------------------------------------------------ */

static int same_name(const char *a, int alen, const char *b, int blen) {
  return alen == blen && !memcmp(a, b, (size_t)alen);
}

static int find_local(const cc *c, const node *n) {
  for (int i = c->nscope - 1; i >= 0; i--)
    if (same_name(c->scope[i].name, c->scope[i].len, c->src + n->pos, n->namelen))
      return c->scope[i].idx;
  return -1;
}

static const sx_name *find_name(const cc *c, const node *n) {
  for (int i = 0; i < c->nnames; i++)
    if (c->names[i].name &&
        same_name(c->names[i].name, (int)strlen(c->names[i].name), c->src + n->pos, n->namelen))
      return &c->names[i];
  return NULL;
}

static int find_builtin(const cc *c, const node *n) {
  for (int i = 0; i < SX_NBUILTINS; i++)
    if (same_name(sx__builtins[i].name, (int)strlen(sx__builtins[i].name), c->src + n->pos, n->namelen))
      return i;
  return -1;
}

static void resolve_name(cc *c, node *n) {
  int local = find_local(c, n);
  const sx_name *nm = local < 0 ? find_name(c, n) : NULL;
  if (local >= 0) {
    n->kind = N_LOCAL;
    n->idx = n->lref = local;
  } else if (nm && nm->slot >= 0) {
    n->kind = N_SLOT;
    n->idx = nm->slot;
    n->uses_slot = 1;
  } else if (nm) {
    n->kind = N_CONST;
    n->v = sx_value_copy(c->prog->arena, &nm->value);
  } else if (find_builtin(c, n) >= 0) {
    cfail(c, n->pos, "builtin '%.*s' can only be called", n->namelen, c->src + n->pos);
  } else {
    cfail(c, n->pos, "name '%.*s' is not defined", n->namelen, c->src + n->pos);
  }
}

static void check_call(cc *c, node *n) {
  const char *name = c->src + n->pos;
  if (find_local(c, n) >= 0 || find_name(c, n))
    cfail(c, n->pos, "'%.*s' is not callable", n->namelen, name);
  int b = find_builtin(c, n);
  if (b < 0) cfail(c, n->pos, "name '%.*s' is not defined", n->namelen, name);
  const sx_builtin *bi = &sx__builtins[b];
  if (n->n < bi->min_args || (bi->max_args >= 0 && n->n > bi->max_args)) {
    char want[64];
    if (bi->max_args < 0) snprintf(want, sizeof want, "at least %d", bi->min_args);
    else if (bi->min_args == bi->max_args) snprintf(want, sizeof want, "exactly %d", bi->min_args);
    else snprintf(want, sizeof want, "%d to %d", bi->min_args, bi->max_args);
    cfail(c, n->pos, "%s() takes %s argument(s) (%d given)", bi->name, want, n->n);
  }
  if (n->n == 1 && n->kid[0]->kind == N_COMP && n->kid[0]->op && !bi->iterates)
    cfail(c, n->kid[0]->pos, "a generator expression cannot be the argument of %s()", bi->name);
  n->op = b;
}

static void absorb(node *n, const node *k) {
  n->uses_slot |= k->uses_slot;
  if (k->lref < n->lref) n->lref = k->lref;
}

static void resolve(cc *c, node *n, int depth);

/* Python 3 scoping: the first iterable is outside the comprehension; each
** later clause and the element see the variables bound before them. */
static void resolve_comp(cc *c, node *n, int depth) {
  int scope0 = c->nscope, base = -1;
  for (int i = 1; i < n->n; i++) {
    node *cl = n->kid[i];
    resolve(c, cl->kid[0], depth + i);
    absorb(n, cl->kid[0]);
    if (cl->kind != N_FOR) continue;
    cl->idx = c->nlocals++;
    if (base < 0) base = cl->idx;
    if (c->nscope == c->capscope) {
      c->capscope = c->capscope ? 2 * c->capscope : 8;
      c->scope = rt_realloc(c->scope, (size_t)c->capscope * sizeof c->scope[0]);
    }
    c->scope[c->nscope].name = c->src + cl->pos;
    c->scope[c->nscope].len = cl->namelen;
    c->scope[c->nscope++].idx = cl->idx;
  }
  resolve(c, n->kid[0], depth + n->n);
  absorb(n, n->kid[0]);
  c->nscope = scope0;
  /* Variables numbered from base on are this one's or inner ones'. */
  if (n->lref >= base) n->lref = INT_MAX;
}

/* Bind names, check calls, and compute uses_slot and lref bottom-up. */
static void resolve(cc *c, node *n, int depth) {
  if (depth > MAX_DEPTH) cfail(c, n->pos, "expression nested too deeply");
  if (n->kind == N_NAME) {
    resolve_name(c, n);
    return;
  }
  if (n->kind == N_COMP) {
    resolve_comp(c, n, depth);
    return;
  }
  if (n->kind == N_CALL) check_call(c, n);
  for (int i = 0; i < n->n; i++) {
    resolve(c, n->kid[i], depth + 1);
    absorb(n, n->kid[i]);
  }
}

/* ---- code generation ------------------------------------------------ */

#define VAR 99   /* stack effect 1 - arg */

/* Stack effect of each opcode on the path that falls through. */
static const signed char op_effect[OP_COUNT] = {
  [OP_CONST] = 1, [OP_SLOT] = 1, [OP_LOCAL] = 1, [OP_STORE] = -1, [OP_NIP] = -1,
  [OP_ADD ... OP_NOTIN] = -1, [OP_K_FIRST ... OP_S_LAST] = 0, [OP_CMPKEEP] = 0,
  [OP_NEG ... OP_NOT] = 0, [OP_SUBSCR] = -1, [OP_JUMP] = 0,
  [OP_JUMP_IF_FALSE_OR_POP ... OP_POP_JUMP_IF_FALSE] = -1,
  [OP_BUILD_LIST] = VAR, [OP_BUILD_TUPLE] = VAR, [OP_BUILDER] = 1,
  [OP_APPEND] = -1, [OP_BUILDER_END] = 0, [OP_ITER] = 1, [OP_FOR_ITER] = 1,
  [OP_CALL] = VAR, [OP_RAISE] = 1, [OP_RET] = -1};

static int emit(emitter *e, int op, int sub, int arg) {
  if (e->n == e->cap) {
    e->cap = e->cap ? 2 * e->cap : 32;
    e->code = rt_realloc(e->code, (size_t)e->cap * sizeof(sx_ins));
  }
  e->code[e->n].op = (uint8_t)op;
  e->code[e->n].sub = (uint8_t)sub;
  e->code[e->n].arg = arg;
  e->depth += op_effect[op] == VAR ? 1 - arg : op_effect[op];
  if (e->depth > e->max) e->max = e->depth;
  return e->n++;
}

/* Make the jump at `at` go to the next instruction. */
static void patch(emitter *e, int at) { e->code[at].arg = e->n; }

static int konst(emitter *e, sx_value v) {
  if (e->nk == e->capk) {
    e->capk = e->capk ? 2 * e->capk : 16;
    e->k = rt_realloc(e->k, (size_t)e->capk * sizeof(sx_value));
  }
  e->k[e->nk] = v;
  return e->nk++;
}

static void gen(emitter *e, const node *n);

/* Binary opcode op with right operand r: a constant or a slot goes into
** the instruction (the K and S variants) instead of onto the stack. */
static void gen_binop(emitter *e, int op, const node *r) {
  if (r->kind == N_CONST) {
    emit(e, OP_K_FIRST + op - OP_ADD, 0, konst(e, r->v));
  } else if (r->kind == N_SLOT) {
    emit(e, OP_S_FIRST + op - OP_ADD, 0, r->idx);
  } else {
    gen(e, r);
    emit(e, op, 0, 0);
  }
}

/* a op1 b op2 c: [a b] CMPKEEP, and-jump to a cleanup that drops b. */
static void gen_compare(emitter *e, const node *n) {
  int chain = -1;   /* pending jumps, linked through their arg */
  gen(e, n->kid[0]);
  for (int i = 1; i < n->n; i++) {
    if (i == n->n - 1) {
      gen_binop(e, n->cmp[i - 1], n->kid[i]);
    } else {
      gen(e, n->kid[i]);
      emit(e, OP_CMPKEEP, n->cmp[i - 1], 0);
      chain = emit(e, OP_JUMP_IF_FALSE_OR_POP, 0, chain);
    }
  }
  if (chain < 0) return;
  int end = emit(e, OP_JUMP, 0, 0);
  e->depth++;   /* the cleanup sees [b result] */
  while (chain >= 0) {
    int prev = e->code[chain].arg;
    patch(e, chain);
    chain = prev;
  }
  emit(e, OP_NIP, 0, 0);
  patch(e, end);
}

/* Clauses i.. of comprehension n, then the append of its element. */
static void gen_clauses(emitter *e, const node *n, int i) {
  if (i == n->n) {
    gen(e, n->kid[0]);
    emit(e, OP_APPEND, 0, 0);
    return;
  }
  const node *cl = n->kid[i];
  gen(e, cl->kid[0]);
  if (cl->kind == N_IF) {
    int skip = emit(e, OP_POP_JUMP_IF_FALSE, 0, 0);
    gen_clauses(e, n, i + 1);
    patch(e, skip);
    return;
  }
  emit(e, OP_ITER, 0, 0);
  int top = emit(e, OP_FOR_ITER, 0, 0);
  emit(e, OP_STORE, 0, cl->idx);
  gen_clauses(e, n, i + 1);
  emit(e, OP_JUMP, 0, top);
  patch(e, top);
  e->depth -= 2;   /* the loop's exit pops sequence and index */
}

static void gen(emitter *e, const node *n) {
  int j, end;
  switch (n->kind) {
  case N_CONST: emit(e, OP_CONST, 0, konst(e, n->v)); break;
  case N_SLOT: emit(e, OP_SLOT, 0, n->idx); break;
  case N_LOCAL: emit(e, OP_LOCAL, 0, n->idx); break;
  case N_RAISE: emit(e, OP_RAISE, 0, konst(e, n->v)); break;
  case N_UNARY: case N_NOT:
    gen(e, n->kid[0]);
    emit(e, n->kind == N_NOT ? OP_NOT : n->op, 0, 0);
    break;
  case N_BINARY:
    gen(e, n->kid[0]);
    gen_binop(e, n->op, n->kid[1]);
    break;
  case N_SUBSCR:
    gen(e, n->kid[0]);
    gen(e, n->kid[1]);
    emit(e, OP_SUBSCR, 0, 0);
    break;
  case N_COMPARE: gen_compare(e, n); break;
  case N_AND: case N_OR:
    gen(e, n->kid[0]);
    j = emit(e, n->kind == N_AND ? OP_JUMP_IF_FALSE_OR_POP : OP_JUMP_IF_TRUE_OR_POP, 0, 0);
    gen(e, n->kid[1]);
    patch(e, j);
    break;
  case N_IFEXP:
    gen(e, n->kid[1]);
    j = emit(e, OP_POP_JUMP_IF_FALSE, 0, 0);
    gen(e, n->kid[0]);
    end = emit(e, OP_JUMP, 0, 0);
    e->depth--;   /* the else branch starts without the body's value */
    patch(e, j);
    gen(e, n->kid[2]);
    patch(e, end);
    break;
  case N_LIST: case N_TUPLE: case N_CALL:
    for (int i = 0; i < n->n; i++) gen(e, n->kid[i]);
    emit(e, n->kind == N_CALL ? OP_CALL : n->kind == N_LIST ? OP_BUILD_LIST : OP_BUILD_TUPLE,
         n->kind == N_CALL ? n->op : 0, n->n);
    break;
  case N_COMP:
    emit(e, OP_BUILDER, 0, 0);
    gen_clauses(e, n, 1);
    emit(e, OP_BUILDER_END, 0, 0);
    break;
  default: break;   /* N_NAME is resolved away; N_FOR, N_IF: gen_clauses */
  }
}

/* ---- folding -------------------------------------------------------- */

/* Evaluate closed n; on success it becomes an N_CONST. */
static int try_eval(cc *c, node *n) {
  emitter e = {0};
  gen(&e, n);
  emit(&e, OP_RET, 0, 0);
  sx_prog t = {0};
  t.code = e.code;
  t.consts = e.k;
  t.nlocals = c->nlocals;
  t.depth = e.max;
  if (!c->vm) c->vm = sx_vm_new();
  sx_value v;
  int ok = sx__run(c->vm, &t, NULL, &v, NULL, FOLD_BUDGET) == 0;
  if (ok) {
    n->kind = N_CONST;
    n->v = sx_value_copy(c->prog->arena, &v);
    n->n = 0;
  }
  free(e.code);
  free(e.k);
  return ok;
}

/* Top-down: fold the largest closed sub-expressions that evaluate; then
** drop the dead side of `and`, `or` and `x if c else y` on constants. */
static void fold(cc *c, node **np) {
  node *n = *np;
  if (n->kind == N_CONST) return;
  if (n->kind != N_FOR && n->kind != N_IF && !n->uses_slot && n->lref == INT_MAX &&
      try_eval(c, n))
    return;
  for (int i = 0; i < n->n; i++) fold(c, &n->kid[i]);
  if ((n->kind == N_AND || n->kind == N_OR) && n->kid[0]->kind == N_CONST)
    *np = sx_truth(&n->kid[0]->v) == (n->kind == N_OR) ? n->kid[0] : n->kid[1];
  else if (n->kind == N_IFEXP && n->kid[1]->kind == N_CONST)
    *np = sx_truth(&n->kid[1]->v) ? n->kid[0] : n->kid[2];
}

/* ---- programs ------------------------------------------------------- */

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The opcodes sx_vm.c's int fast path runs (on int and bool operands). */
static int int_path_op(int op) {
  static const unsigned char ok[OP_COUNT] = {
    [OP_CONST] = 1, [OP_SLOT] = 1, [OP_NIP] = 1,
    [OP_ADD] = 1, [OP_SUB] = 1, [OP_MUL] = 1, [OP_FDIV] = 1, [OP_MOD] = 1,
    [OP_LT ... OP_NE] = 1, [OP_CMPKEEP] = 1, [OP_NEG] = 1, [OP_POS] = 1,
    [OP_INV] = 1, [OP_NOT] = 1, [OP_JUMP ... OP_POP_JUMP_IF_FALSE] = 1, [OP_RET] = 1};
  for (int b = OP_ADD; b <= OP_NOTIN; b++)
    if (op == OP_K_FIRST + b - OP_ADD || op == OP_S_FIRST + b - OP_ADD) return ok[b];
  return op < OP_COUNT && ok[op];
}

/* Whether p can run on the int fast path: its opcodes and its constants. */
static int int_path_ok(const sx_prog *p, int n) {
  for (int i = 0; i < n; i++) {
    int op = p->code[i].op;
    if (!int_path_op(op)) return 0;
    if (op == OP_CMPKEEP && (p->code[i].sub < OP_LT || p->code[i].sub > OP_NE)) return 0;
    if ((op == OP_CONST || (op >= OP_K_FIRST && op <= OP_K_LAST)) &&
        p->consts[p->code[i].arg].t != SX_INT && p->consts[p->code[i].arg].t != SX_BOOL)
      return 0;
  }
  return 1;
}

/* Move the main emitter's code into p and list the slots it reads. */
static void finish(cc *c, sx_prog *p) {
  emitter *e = &c->main;
  emit(e, OP_RET, 0, 0);
  p->code = e->code;
  p->consts = e->k;
  p->depth = e->max;
  p->nlocals = c->nlocals;
  e->code = NULL;
  e->k = NULL;
  p->slots = rt_malloc((size_t)e->n * sizeof(int));
  for (int i = 0; i < e->n; i++)
    if (p->code[i].op == OP_SLOT || (p->code[i].op >= OP_S_FIRST && p->code[i].op <= OP_S_LAST))
      p->slots[p->nslots++] = p->code[i].arg;
  qsort(p->slots, (size_t)p->nslots, sizeof(int), cmp_int);
  int n = 0;
  for (int i = 0; i < p->nslots; i++)
    if (!n || p->slots[n - 1] != p->slots[i]) p->slots[n++] = p->slots[i];
  p->nslots = n;
  p->int_ok = int_path_ok(p, e->n);
}

static void cc_free(cc *c) {
  free(c->tok);
  free(c->scope);
  free(c->main.code);
  free(c->main.k);
  sx_arena_free(c->ast);
  sx_vm_free(c->vm);
  free(c);
}

sx_prog *sx_compile(const char *src, const sx_name *names, int nnames, rt_err *err) {
  sx_prog *p = rt_calloc(1, sizeof *p);
  p->text = rt_strdup(src);
  p->arena = sx_arena_new();
  cc *c = rt_calloc(1, sizeof *c);   /* on the heap: it changes across setjmp */
  c->src = p->text;
  c->ast = sx_arena_new();
  c->prog = p;
  c->names = names;
  c->nnames = nnames;
  c->err = err;
  if (setjmp(c->jb)) {
    cc_free(c);
    sx_prog_free(p);
    return NULL;
  }
  lex(c);
  node *root = parse_top(c);
  resolve(c, root, 0);
  fold(c, &root);
  gen(&c->main, root);
  finish(c, p);
  cc_free(c);
  return p;
}

void sx_prog_free(sx_prog *p) {
  if (!p) return;
  free(p->text);
  free(p->code);
  free(p->consts);
  free(p->slots);
  sx_arena_free(p->arena);
  free(p);
}

const char *sx_prog_text(const sx_prog *p) { return p->text; }

const int *sx_prog_slots(const sx_prog *p, int *n) {
  *n = p->nslots;
  return p->slots;
}
