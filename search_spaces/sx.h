/*
** sx.h -- the space-expression language: the Python-expression subset that
** T1 space files use in `Values` and `Conditions`. Text is compiled once to
** bytecode (sx_prog) and evaluated many times (sx_eval) with Python
** semantics. This header is the contract; sx_*.c implement it.
**
** Invariants:
**  1. Evaluation never re-parses text and never mallocs for expressions
**     whose intermediate values are ints, floats and bools.
**  2. An expression that would raise in Python (ZeroDivisionError,
**     TypeError, ...) makes sx_eval return -1 with a Python-style message;
**     sx_eval_bool returns 0 for it (a condition that raises is false).
**  3. Ints are 64-bit: a result that Python would compute as a larger
**     int raises "OverflowError" here instead of silently wrapping.
**  4. Every list, tuple and str has a weight of at most SX_MAX_SEQ: a
**     str's is its length in bytes; a list's, its elements plus the weight
**     of each element that is a list, tuple or str, counted every time it
**     appears ([[0] * 1000] * 1000 weighs 1,001,000). A deeper result
**     raises "MemoryError" (where Python would build it by sharing), so
**     whatever walks a value whole (copy, ==, <, in, repr) does bounded
**     work, and copying never multiplies memory.
*/
#ifndef SX_H
#define SX_H

#include <stddef.h>
#include <stdint.h>

#include "../common/rt.h"

typedef enum {
  SX_NONE, SX_BOOL, SX_INT, SX_FLOAT, SX_STR, SX_LIST, SX_TUPLE
} sx_type;

typedef struct sx_value sx_value;
typedef struct sx_str { size_t len; char s[]; } sx_str;  /* s is NUL-terminated */
/* lists and tuples; weight: invariant 4 (n for a list of scalars) */
typedef struct sx_list { size_t n; sx_value *v; size_t weight; } sx_list;
#define SX_MAX_SEQ 10000000   /* the most weight one value may have (invariant 4) */

struct sx_value {
  sx_type t;
  union {
    int64_t i;          /* SX_INT, SX_BOOL (0 or 1) */
    double f;           /* SX_FLOAT */
    const sx_str *s;    /* SX_STR */
    const sx_list *l;   /* SX_LIST, SX_TUPLE */
  } u;
};

static inline sx_value sx_int(int64_t i) { sx_value v; v.t = SX_INT; v.u.i = i; return v; }
static inline sx_value sx_float(double f) { sx_value v; v.t = SX_FLOAT; v.u.f = f; return v; }
static inline sx_value sx_bool(int b) { sx_value v; v.t = SX_BOOL; v.u.i = !!b; return v; }

/* Bump allocator for values that must outlive an evaluation. */
typedef struct sx_arena sx_arena;
sx_arena *sx_arena_new(void);
void sx_arena_free(sx_arena *a);                 /* NULL is a no-op */
void *sx_arena_alloc(sx_arena *a, size_t n);     /* 16-byte aligned */
const sx_str *sx_arena_str(sx_arena *a, const char *s, size_t len);
/* Deep copy of v (strings and lists included) into a. */
sx_value sx_value_copy(sx_arena *a, const sx_value *v);

/* Names an expression may use. slot >= 0: a variable read from
** slots[slot] at evaluation time. slot < 0: a constant (for example a
** problem variable bound at load time), folded in at compile time. */
typedef struct sx_name {
  const char *name;
  int slot;
  sx_value value;   /* used when slot < 0; copied by sx_compile */
} sx_name;

typedef struct sx_prog sx_prog;

/* Compile src. Resolution order for an identifier: comprehension variable,
** then names[], then the builtins (range list len min max abs int float
** bool sum, only when called). On error returns NULL and sets err->msg
** and err->col (1-based byte column in src; err->line = 1). */
sx_prog *sx_compile(const char *src, const sx_name *names, int nnames,
                    rt_err *err);
void sx_prog_free(sx_prog *p);                   /* NULL is a no-op */
const char *sx_prog_text(const sx_prog *p);      /* the source text */
/* The distinct slots p reads, ascending; *n gets their number. */
const int *sx_prog_slots(const sx_prog *p, int *n);

/* Evaluation context: value stack and scratch arena. One per thread. */
typedef struct sx_vm sx_vm;
sx_vm *sx_vm_new(void);
void sx_vm_free(sx_vm *vm);                      /* NULL is a no-op */

/* Evaluate p with variables slots[]. 0: *out holds the result, valid until
** the next sx_eval on vm (copy it with sx_value_copy to keep it). -1: the
** expression raised; err->msg holds e.g. "ZeroDivisionError: division by
** zero". */
int sx_eval(sx_vm *vm, const sx_prog *p, const sx_value *slots,
            sx_value *out, rt_err *err);
/* Python truth of the result; 0 when the expression raises. A program of
** int arithmetic (+ - * // %) and comparisons over int and bool values
** runs on an int-only path first, with the same result (sx_vm.c). */
int sx_eval_bool(sx_vm *vm, const sx_prog *p, const sx_value *slots);

int sx_truth(const sx_value *v);                 /* Python bool(v) */
int sx_equal(const sx_value *a, const sx_value *b); /* Python a == b */
const char *sx_type_name(sx_type t);             /* "int", "str", ... */
/* Python repr(v) into buf (snprintf contract: returns the full length). */
size_t sx_repr(const sx_value *v, char *buf, size_t cap);

#endif
