/*
** sp_int.h -- the inside of an sp_space, shared by the loader (sp_load.c),
** the engine (sp_engine.c) and the configuration codec (sp_config.c).
** Nothing outside search_spaces/ includes this file.
*/
#ifndef SP_INT_H
#define SP_INT_H

#include "sp.h"

typedef struct sp_param_t {
  char *name, *type, *values_text;
  sx_type vtype;            /* SX_INT, SX_FLOAT, SX_STR or SX_BOOL */
  int nonneg;               /* Type "uint": values must be >= 0 */
  int nv;
  sx_value *v;              /* nv distinct values, in the arena */
  int def;                  /* default value index, -1 if none */
} sp_param_t;

typedef struct sp_cond_t {
  char *text;
  sx_prog *prog;            /* single-valued parameters folded in as constants */
  int nread, *read;         /* parameters the expression reads, ascending */
  int np, *p;               /* the multi-valued ones of those, ascending: what
                               the engine depends on (none: decided at load) */
} sp_cond_t;

typedef struct sp_var_t {
  char *name;
  sx_value value;
  int set;                  /* bound by --set (1) or by its Default (0) */
} sp_var_t;

/* Memo of one depth of a chain: frontier code -> exact count. */
typedef struct sp_memo {
  uint64_t *keys;           /* code + 1; 0 marks an empty slot */
  rt_count *vals;
  size_t cap, n;
} sp_memo;

/* A chain is the memoised depth-first search over the parameters of one
** independent group in one order: the group's pruning order (counting,
** sampling) or its file order (the canonical operations). At depth d the
** parameters params[0..d-1] are fixed; the number of valid completions
** depends only on the frontier front[d] (fixed parameters that share a
** condition with an unfixed one), which keys memo[d]. */
typedef struct sp_chain {
  int n, *params;
  int *nfront, **front;     /* per depth 0..n-1 */
  uint64_t **radix;         /* mixed-radix weights of the frontier */
  int *memo_ok;             /* 0 where the frontier code would overflow */
  int *ncheck, **check;     /* conditions whose last parameter is params[d] */
  sp_memo *memo;
} sp_chain;

struct sp_space {
  char *name;
  sx_arena *arena;
  sx_vm *vm;
  int np;
  sp_param_t *params;
  int nc;
  sp_cond_t *conds;
  int nvar;
  sp_var_t *vars;
  int ng, **groups, *gsize, *group_of;  /* members in file order */
  int nwarn;
  char **warn;
  int const_false;          /* a condition that reads no parameter is false */
  sp_chain **fast;          /* per group: pruning order, built on first count */
  sp_chain **canon;         /* per group: file order, built on first canonical
                               operation; fast[g] itself when the orders agree */
  rt_count *gcount;         /* per group: valid count, once gcount_ok[g] */
  unsigned char *gcount_ok;
  int *sorder;              /* groups in sampling order (by smallest name) */
  int *gpos;                /* depth of each parameter in its group's file order */
  int *kwork;               /* scratch: parameters fixed per group */
  sx_value *slots;          /* values of the parameters being visited */
  int *cfg;                 /* scratch configuration for the engine */
  size_t memo_entries;      /* over all chains, capped by SP_MEMO_MAX */
  uint64_t evals;           /* condition checks the chains asked for */
};

#define SP_MEMO_MAX ((size_t)1 << 23)

/* sp_engine.c: build group structure after loading; free chains. */
void sp__build_groups(sp_space *sp);
void sp__free_chains(sp_space *sp);

#endif
