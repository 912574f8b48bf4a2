/*
** tu_synth.h -- what the strategy tests share: a synthetic objective (a
** function of the value indices; NAN means the configuration fails), its
** brute-force optimum over a small space, and one run of a strategy on it
** through tu_run_strategy. Include after <cmocka.h> and "tuner/tu.h".
*/
#ifndef TU_SYNTH_H
#define TU_SYNTH_H

typedef double (*fn)(const int *c, int np);

typedef struct obj_ctx {
  sp_space *sp;
  fn f;
  int64_t evals;
} obj_ctx;

static inline int synth_eval(void *vctx, const int *cfg, tu_obs *obs, rt_err *err) {
  obj_ctx *o = vctx;
  (void)err;
  double v = o->f(cfg, sp_nparams(o->sp));
  memset(obs, 0, sizeof *obs);
  obs->ok = !isnan(v);
  obs->value = obs->ok ? v : 0;
  obs->status = obs->ok ? 0 : 1;
  obs->cost = 1;
  obs->origin = TU_REPLAYED;
  o->evals++;
  return 0;
}

/* The brute-force optimum of f over the valid configurations of sp. */
static inline double brute_optimum(sp_space *sp, fn f) {
  int np = sp_nparams(sp), *c = malloc((size_t)np * sizeof *c);
  double best = INFINITY;
  if (sp_unrank(sp, 0, c) == 0) do {
      double v = f(c, np);
      if (!isnan(v) && v < best) best = v;
    } while (sp_next(sp, c));
  free(c);
  return best;
}

/* Run strategy s with seed, budget (0: no limit) and batch (0: the run's
** default) on f over sp; every evaluation went through the objective. */
static inline tu_run *synth_run(sp_space *sp, const tu_strategy *s, fn f, uint64_t seed,
                                int64_t budget, int batch) {
  obj_ctx o = {sp, f, 0};
  tu_objective obj = {synth_eval, &o, NULL};
  tu_run_opts opts = {.strategy = s, .seed = seed, .max_evals = budget, .batch = batch};
  rt_err err = {0};
  tu_run *r = tu_run_strategy(sp, &obj, &opts, NULL, &err);
  if (!r) fprintf(stderr, "%s: %s\n", s->name, err.msg);
  assert_non_null(r);
  assert_int_equal(o.evals, tu_run_n(r));
  return r;
}

/* Seed 42 twice gives the same evaluations in the same order; seed 43
** another sequence (budget evaluations, batch as for synth_run). */
static inline void synth_check_determinism(sp_space *sp, const tu_strategy *s, fn f,
                                           int64_t budget, int batch) {
  int np = sp_nparams(sp);
  tu_run *a = synth_run(sp, s, f, 42, budget, batch), *b = synth_run(sp, s, f, 42, budget, batch),
         *c = synth_run(sp, s, f, 43, budget, batch);
  assert_int_equal(tu_run_n(a), tu_run_n(b));
  int differ = 0;
  for (int64_t i = 0; i < tu_run_n(a); i++) {
    assert_memory_equal(tu_run_cfg(a, i), tu_run_cfg(b, i), (size_t)np * sizeof(int));
    differ |= i >= tu_run_n(c) || memcmp(tu_run_cfg(a, i), tu_run_cfg(c, i), (size_t)np * sizeof(int)) != 0;
  }
  assert_true(differ);
  tu_run_free(a);
  tu_run_free(b);
  tu_run_free(c);
}

#endif
