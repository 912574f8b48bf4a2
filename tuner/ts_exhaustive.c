/*
** ts_exhaustive.c -- every valid configuration in the space's canonical
** order (sp.h: itertools.product order restricted to valid ones), from
** rank 0. Ignores the seed; on a space larger than the budget it measures
** a prefix of that order, which is what the name promises.
*/
#include <string.h>

#include "tu.h"

typedef struct ex {
  const tu_ctx *ctx;
  int *cur;
  int started, done;
} ex;

static void *ex_create(const tu_ctx *ctx, rt_err *err) {
  (void)err;
  ex *s = rt_calloc(1, sizeof *s);
  s->ctx = ctx;
  s->cur = rt_calloc((size_t)sp_nparams(ctx->sp), sizeof *s->cur);
  return s;
}

static int ex_propose(void *st, int *cfgs, int max) {
  ex *s = st;
  int np = sp_nparams(s->ctx->sp), k = 0;
  while (k < max && !s->done) {
    if (!s->started) {
      s->started = 1;
      s->done = sp_unrank(s->ctx->sp, 0, s->cur) != 0;
    } else {
      s->done = !sp_next(s->ctx->sp, s->cur);
    }
    if (s->done) break;
    if (!s->ctx->known(s->ctx->run, s->cur, NULL))
      memcpy(cfgs + (size_t)k++ * np, s->cur, (size_t)np * sizeof *s->cur);
  }
  return k;
}

static void ex_observe(void *st, const int *cfg, const tu_obs *obs) {
  (void)st;
  (void)cfg;
  (void)obs;
}

static void ex_destroy(void *st) {
  ex *s = st;
  if (!s) return;
  free(s->cur);
  free(s);
}

const tu_strategy ts_exhaustive = {
  .name = "exhaustive",
  .summary = "every valid configuration in canonical order (rank 0, 1, ...)",
  .needs_model = 0,
  .create = ex_create,
  .propose = ex_propose,
  .observe = ex_observe,
  .destroy = ex_destroy,
};
