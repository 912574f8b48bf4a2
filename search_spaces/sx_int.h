/*
** sx_int.h -- private interface between the files that implement sx.h:
** the bytecode (opcodes, instruction and program layout) that sx_compile.c
** writes and sx_vm.c runs, the builtin table, and the few value helpers
** (arena reset, ordering) that sx_value.c provides to the other two.
** Nothing outside search_spaces/sx_*.c includes it.
*/
#ifndef SX_INT_H
#define SX_INT_H

#include "sx.h"

/* Opcodes. "arg" is the instruction's int argument, "sub" its byte one. */
typedef enum {
  OP_CONST,            /* push consts[arg] */
  OP_SLOT,             /* push slots[arg] */
  OP_LOCAL,            /* push comprehension variable arg */
  OP_STORE,            /* pop into comprehension variable arg */
  OP_NIP,              /* [a b] -> [b] */
  /* binary arithmetic, [a b] -> [a op b]; OP_ADD..OP_BXOR contiguous */
  OP_ADD, OP_SUB, OP_MUL, OP_TDIV, OP_FDIV, OP_MOD, OP_POW,
  OP_LSH, OP_RSH, OP_BAND, OP_BOR, OP_BXOR,
  /* comparisons, [a b] -> [bool]; OP_LT..OP_GE contiguous (orderings) */
  OP_LT, OP_LE, OP_GT, OP_GE, OP_EQ, OP_NE, OP_IN, OP_NOTIN,
  /* OP_ADD..OP_NOTIN again, with the right operand consts[arg] (K) or
  ** slots[arg] (S) instead of the stack top: [a] -> [a op b] */
  OP_K_FIRST, OP_K_LAST = OP_K_FIRST + OP_NOTIN - OP_ADD,
  OP_S_FIRST, OP_S_LAST = OP_S_FIRST + OP_NOTIN - OP_ADD,
  OP_CMPKEEP,          /* chained comparison: [a b] -> [b (a sub b)] */
  OP_NEG, OP_POS, OP_INV, OP_NOT,   /* unary, in place */
  OP_SUBSCR,           /* [a i] -> [a[i]] */
  OP_JUMP,             /* jump to arg */
  OP_JUMP_IF_FALSE_OR_POP, OP_JUMP_IF_TRUE_OR_POP, /* `and`, `or` */
  OP_POP_JUMP_IF_FALSE,
  OP_BUILD_LIST, OP_BUILD_TUPLE,    /* pop arg values, push the sequence */
  OP_BUILDER,          /* comprehension: push a builder mark */
  OP_APPEND,           /* pop a value into the innermost builder */
  OP_BUILDER_END,      /* [mark] -> [the list built since mark] */
  OP_ITER,             /* [seq] -> [seq 0]; raises if seq is not iterable */
  OP_FOR_ITER,         /* [seq i] -> [seq i+1 seq[i]], or pop both, jump */
  OP_CALL,             /* builtin sub on the top arg values */
  OP_RAISE,            /* raise with the message string consts[arg] */
  OP_RET,              /* the top value is the result */
  OP_COUNT
} sx_op;

typedef struct sx_ins {
  uint8_t op, sub;
  int32_t arg;
} sx_ins;

struct sx_prog {
  char *text;          /* the source */
  sx_ins *code;
  sx_value *consts;    /* their strings and lists live in arena */
  int *slots, nslots;  /* distinct slots read, ascending */
  int nlocals;         /* comprehension variables */
  int depth;           /* deepest value stack the code reaches */
  int int_ok;          /* only opcodes of the int fast path, int/bool constants */
  sx_arena *arena;
};

/* Builtins: the compiler resolves a called name to its index here. */
typedef int (*sx_builtin_fn)(sx_vm *vm, const sx_value *args, int n,
                             sx_value *out);
typedef struct sx_builtin {
  const char *name;
  int min_args, max_args;  /* max_args < 0: no maximum */
  int iterates;            /* accepts a generator expression argument */
  sx_builtin_fn fn;
} sx_builtin;
#define SX_NBUILTINS 10
extern const sx_builtin sx__builtins[SX_NBUILTINS];

/* Run p like sx_eval, but give up with an error once more than budget
** loop iterations plus created sequence elements are spent (the compiler
** folds constants with a small budget; sx_eval passes INT64_MAX). */
int sx__run(sx_vm *vm, const sx_prog *p, const sx_value *slots,
           sx_value *out, rt_err *err, int64_t budget);

/* Forget everything allocated in a, keeping (some of) its memory. */
void sx__arena_reset(sx_arena *a);

/* Python ordering of a and b. SX_ORD_UNORDERED: a NaN is involved.
** SX_ORD_TYPE: `<` raises TypeError; *bad_a / *bad_b get the pair of
** values whose types do not compare (elements, for lists and tuples). */
enum { SX_ORD_LT, SX_ORD_EQ, SX_ORD_GT, SX_ORD_UNORDERED, SX_ORD_TYPE };
int sx__order(const sx_value *a, const sx_value *b, const sx_value **bad_a,
             const sx_value **bad_b);

#endif
