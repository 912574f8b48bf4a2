/*
** ts_random.c -- random search without replacement: the valid
** configurations in the order of a seeded pseudo-random permutation of
** their ranks (tu_perm), so no configuration is proposed twice and no list
** of the space is ever held.
*/
#include <stdlib.h>

#include "tu.h"

typedef struct rs {
  const tu_ctx *ctx;
  tu_perm perm;
  rt_count next, count;
} rs;

static void *rs_create(const tu_ctx *ctx, rt_err *err) {
  (void)err;
  rs *s = rt_calloc(1, sizeof *s);
  s->ctx = ctx;
  s->count = sp_count(ctx->sp);
  tu_perm_init(&s->perm, s->count, ctx->rng);
  return s;
}

static int rs_propose(void *st, int *cfgs, int max) {
  rs *s = st;
  int np = sp_nparams(s->ctx->sp), k = 0;
  while (k < max && s->next < s->count) {
    int *c = cfgs + (size_t)k * np;
    if (sp_unrank(s->ctx->sp, tu_perm_at(&s->perm, s->next++), c)) break;
    if (!s->ctx->known(s->ctx->run, c, NULL)) k++;
  }
  return k;
}

static void rs_observe(void *st, const int *cfg, const tu_obs *obs) {
  (void)st;
  (void)cfg;
  (void)obs;
}

const tu_strategy ts_random = {
  .name = "random",
  .summary = "uniform random search without replacement (a seeded permutation of the ranks)",
  .needs_model = 0,
  .create = rs_create,
  .propose = rs_propose,
  .observe = rs_observe,
  .destroy = free,
  .async = 1,   /* observe ignores results: any order will do */
};
