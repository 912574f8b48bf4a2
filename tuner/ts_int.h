/*
** ts_int.h -- internal to the search strategies (tuner/ts_*.c), never
** included elsewhere: the state every strategy keeps of its space
** (ts__base), finding valid configurations the run has not seen, handing a
** prepared batch out through propose(), and -- for the strategies that move
** in the space of normalised value indices (de, pso) -- the mapping between
** positions and configurations: rounding a position to a valid, unseen
** configuration and a local step around a given configuration. The code
** lives in ts_common.c; all randomness comes from the context's generator,
** so each function consumes it in a fixed order (tu.h, invariant 3).
*/
#ifndef TS_INT_H
#define TS_INT_H

#include "tu.h"

/* What a strategy keeps of its space. Embed it in the strategy's state;
** ts__init fills it, ts__fini frees what it holds. */
typedef struct ts__base {
  const tu_ctx *ctx;
  int np;                  /* parameters */
  int *nv;                 /* values per parameter */
  int *scratch, *ord;      /* work arrays (np) */
  tu_perm perm;            /* fallback source of unseen configurations */
  rt_count perm_next, count;
  int perm_init;
} ts__base;

/* Fill b for a strategy running in ctx (draws nothing from ctx->rng). */
void ts__init(ts__base *b, const tu_ctx *ctx);
/* Free what b holds (not b itself). */
void ts__fini(ts__base *b);

/* 1 if cfg was evaluated in the run or equals one of the first n
** configurations of batch (n * np ints; NULL when n is 0). */
int ts__taken(const ts__base *b, const int *cfg, const int *batch, int n);

/* A valid configuration not taken (ts__taken with batch, n) into cfg: up to
** 32 random samples, then the next such rank of a seeded permutation (so
** the last few configurations of a small space are still found). 0: none. */
int ts__fresh(ts__base *b, int *cfg, const int *batch, int n);

/* propose() from a prepared batch of nbatch configurations: up to max of
** them, from *sent on, into cfgs; advances *sent and returns how many. */
int ts__emit(const ts__base *b, const int *batch, int nbatch, int *sent, int *cfgs, int max);

/* An observation's time, INFINITY when it failed (so failures rank last). */
double ts__time(const tu_obs *obs);

/* ---- Normalised value indices: value index i of parameter p sits at
** i / (nvalues - 1) in [0, 1] (0.5 for a parameter of one value) ---- */

/* The position of value index i of parameter p. */
double ts__pos(const ts__base *b, int p, int i);
/* The value index of parameter p nearest to position x (clamped). */
int ts__index(const ts__base *b, int p, double x);

/* Trial k of batch (batch + k * np) := the valid configuration nearest to
** position u that neither the run nor batch's first k hold (see ts_common.c);
** u follows it when it is not u's rounding. 0: nothing unseen is left. */
int ts__realise(ts__base *b, int *batch, int k, double *u, const int *home);

/* Trial k of batch := a random unseen valid configuration one parameter
** away from cfg (a local step around the best), u := its position. 0 if none. */
int ts__local_step(ts__base *b, int *batch, int k, const int *cfg, double *u);

#endif
