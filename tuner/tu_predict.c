/*
** tu_predict.c -- tuning by the model alone (tu.h "Predictions"): a
** space ranked by a target's cost model (its backend row's kernel model,
** the target's ceilings, given or default coefficients) without running
** anything, for model-only targets (targets/model/tm.h). tu_rank ranks;
** tu_predict stores the best predictions as one campaign of source
** "predicted" whose trials have origin "predicted" (db.h invariant 10) and
** pins the best of them, a pin the database marks predicted.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>
#include <jansson.h>

#include "tu.h"
#include "../targets/tg.h"

/* Order of a ranking: predicted time, then rank in the space (stable). */
typedef struct ord { double t; int64_t i; } ord;

static int by_time(const void *a, const void *b) {
  const ord *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

int tu_rank(const tu_rank_opts *o, tu_ranking *r, rt_err *err) {
  memset(r, 0, sizeof *r);
  const tg_target *t = o->target;
  if (!(r->k = tg_kernel(t, o->kernel))) {
    rt_err_set(err, "unknown kernel '%s' on target %s (rooftune kernels --target %s)", o->kernel,
               t->name, t->name);
    return -1;
  }
  if (!(r->km = cm_kmodel_find_on(t->be->model_family, o->kernel))) {
    rt_err_set(err, "kernel %s has no cost model on target %s", o->kernel, t->name);
    return -1;
  }
  /* the space with the target's limit bindings after the user's --set */
  char *set = tg_kernel_bindings(t, r->k, o->set, err), path[4096];
  if (!set) return -1;
  sx_arena *arena = sx_arena_new();
  sp_binding *b = NULL;
  int nb = *set ? sp_parse_bindings(set, arena, &b, err) : 0;
  r->sp = nb < 0 ? NULL : sp_load_file(rt_project_path(r->k->space, path, sizeof path), b, nb, err);
  free(b), free(set);
  sx_arena_free(arena);
  if (!r->sp) goto fail;
  kn_problem_from_space(&r->pb, r->sp);
  if (!o->ceilings && tg_bench(t, NULL, &r->ce, err)) goto fail;
  if (o->ceilings) r->ce = *o->ceilings;
  if (o->coefs) r->c = *o->coefs;
  else cm_coefs_default(r->km, &r->c);
  /* the backend's answers to its models (registers from cubins already
  ** built: a ranking of thousands of schedules compiles none) */
  if (t->be->model_setup) t->be->model_setup(t, &r->ce, o->cache_dir, 0);
  r->count = sp_count(r->sp);
  int np = sp_nparams(r->sp);
  int64_t cap = o->max_ranked > 0 ? o->max_ranked : TU_RANK_ALL;
  if (r->count == 0) {
    rt_err_set(err, "the space of %s is empty for this workload", o->kernel);
    goto fail;
  }
  if (r->count <= (rt_count)cap) {   /* the whole space, in canonical order */
    r->n = (int64_t)r->count;
    r->cfgs = rt_malloc((size_t)r->n * np * sizeof *r->cfgs);
    int *cfg = rt_malloc((size_t)np * sizeof *cfg);
    sp_unrank(r->sp, 0, cfg);
    for (int64_t i = 0; i < r->n; i++) {
      memcpy(r->cfgs + (size_t)i * np, cfg, (size_t)np * sizeof *cfg);
      if (i + 1 < r->n) sp_next(r->sp, cfg);
    }
    free(cfg);
  } else {   /* a seeded sample: the same seed, the same schedules */
    r->sampled = 1;
    r->n = o->sample > 0 ? o->sample : TU_RANK_SAMPLE;
    r->cfgs = rt_malloc((size_t)r->n * np * sizeof *r->cfgs);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, (unsigned long)o->seed);
    int rc = sp_sample(r->sp, rng, (int)r->n, 1, r->cfgs, err);
    gsl_rng_free(rng);
    if (rc) goto fail;
  }
  r->pred = rt_malloc((size_t)r->n * sizeof *r->pred);
  r->order = rt_malloc((size_t)r->n * sizeof *r->order);
  ord *ob = rt_malloc((size_t)r->n * sizeof *ob);
  for (int64_t i = 0; i < r->n; i++) {
    rt_err e = {0};
    if (cm_predict(r->km, &r->pb, r->sp, r->cfgs + (size_t)i * np, &r->ce, &r->c, o->flush,
                   &r->pred[i], &e))
      r->pred[i].time = INFINITY;   /* not a schedule the model knows: last */
    ob[i] = (ord){r->pred[i].time, i};
  }
  qsort(ob, (size_t)r->n, sizeof *ob, by_time);
  for (int64_t i = 0; i < r->n; i++) r->order[i] = ob[i].i;
  free(ob);
  return 0;
fail:
  tu_ranking_free(r);
  return -1;
}

const int *tu_ranking_cfg(const tu_ranking *r, int64_t i) {
  return r->cfgs + (size_t)i * sp_nparams(r->sp);
}

void tu_ranking_free(tu_ranking *r) {
  sp_free(r->sp);
  free(r->cfgs), free(r->pred), free(r->order);
  memset(r, 0, sizeof *r);
}

int tu_coefs_given(const cm_kmodel *k, const char *json, cm_coefs *c, rt_err *err) {
  cm_coefs_default(k, c);
  json_error_t je;
  json_t *j = json_loads(json, 0, &je);
  if (!json_is_object(j)) {
    rt_err_set(err, "expected a JSON object {name: value}%s%s", j ? "" : ": ", j ? "" : je.text);
    json_decref(j);
    return -1;
  }
  if (!json_object_get(j, "form"))   /* given now: of the model's current form */
    json_object_set_new(j, "form", json_integer(k->form > 0 ? k->form : 1));
  char *text = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17));
  json_decref(j);
  int rc = cm_coefs_parse(k, text, c, err);
  free(text);
  if (!rc) snprintf(c->source, sizeof c->source, "given (--coefs)");
  return rc;
}

/* ---- Stored predictions ---- */

/* The predictions to keep, fastest first, into pick[0..*keep): the first
** *keep with a finite prediction. On a target that runs code but does not
** time (an emulated one: measure/ms.h invariant 8) each is first built
** and run by the target's measure, its outputs verified (never timed); one
** that fails is counted in rep (rejected, the first's message) and not
** kept. 0, or -1 with err when the harness failed. */
static int verify_picks(const tu_predict_opts *o, const tg_target *t, const tu_ranking *r,
                        int64_t *keep, int64_t *pick, tu_predict_report *rep, rt_err *err) {
  ms_workload *w = t->be->model_only ? NULL : ms_workload_new(r->k, &r->pb, err);
  if (!t->be->model_only && !w) return -1;
  ms_opts mo;
  ms_opts_default(&mo);
  mo.cache_dir = o->cache_dir;
  int64_t n = 0;
  for (int64_t j = 0; j < r->n && n < *keep && isfinite(r->pred[r->order[j]].time); j++) {
    int64_t i = r->order[j];
    if (w) {
      ms_result mr;
      char *src = r->k->codegen(&r->pb, r->sp, tu_ranking_cfg(r, i));
      int hf = tg_measure(t, w, src, NULL, &mo, &mr);
      free(src);
      if (hf) {
        rt_err_set(err, "the harness failed: %s", mr.msg);
        ms_workload_free(w);
        return -1;
      }
      if (mr.status != MS_OK) {
        if (!rep->rejected++) {
          char *cfg = sp_config_json(r->sp, tu_ranking_cfg(r, i));
          snprintf(rep->reject_msg, sizeof rep->reject_msg, "%.200s: %s: %.200s", cfg,
                   ms_status_name(mr.status), mr.msg);
          free(cfg);
        }
        continue;
      }
    }
    pick[n++] = i;
  }
  *keep = n;
  ms_workload_free(w);
  return 0;
}

int tu_predict(const tu_predict_opts *o, tu_predict_report *rep, rt_err *err) {
  memset(rep, 0, sizeof *rep);
  tg_target t;
  tg_desc desc;
  if (tg_resolve(o->target, &t, err) || tg_describe(&t, &desc, err)) return -1;
  const char *untimed = NULL;
  if (!t.be->model_only && tg_timed(&t, &untimed)) {
    rt_err_set(err, "target %s runs code: its campaigns measure (tune --strategy model measures "
               "the model's best picks there); predictions are stored for model-only targets "
               "and targets that do not time", t.name);
    return -1;
  }
  tu_ranking r;
  cm_coefs c;
  const cm_kmodel *km = cm_kmodel_find_on(t.be->model_family, o->kernel);
  if (km) cm_coefs_default(km, &c);
  if (km && o->coefs_json && tu_coefs_given(km, o->coefs_json, &c, err)) {
    rt_err_prefix(err, "--coefs");
    return -1;
  }
  tu_rank_opts ro = {.target = &t, .kernel = o->kernel, .set = o->set, .seed = o->seed,
                     .coefs = km ? &c : NULL, .flush = o->flush, .cache_dir = o->cache_dir};
  if (tu_rank(&ro, &r, err)) return -1;
  int64_t keep = o->keep > 0 ? o->keep : 1, np = sp_nparams(r.sp);
  if (keep > r.n) keep = r.n;
  int64_t *pick = rt_malloc((size_t)(keep ? keep : 1) * sizeof *pick);
  if (verify_picks(o, &t, &r, &keep, pick, rep, err)) {
    free(pick);
    tu_ranking_free(&r);
    return -1;
  }
  rep->ranked = r.n, rep->sampled = r.sampled, rep->count = r.count;
  snprintf(rep->coefs_source, sizeof rep->coefs_source, "%s", r.c.source);
  snprintf(rep->target, sizeof rep->target, "%s", t.name);
  rep->rows = rt_calloc((size_t)(keep ? keep : 1), sizeof *rep->rows);
  db *d = db_open(o->db_path, DB_CREATE, err);
  if (!d) {
    tu_ranking_free(&r);
    return -1;
  }
  char *dj = tg_desc_json(&desc), *key = db_workload_key(r.k->name, r.k->dtype, r.sp),
       *sizes = db_workload_sizes(r.sp), *spec = db_space_spec(r.sp), *cej = cm_ceilings_json(&r.ce),
       *cj = cm_coefs_json(r.km, &r.c), compiler[256];
  rt_str opts = {0};
  rt_str_printf(&opts, "{\"strategy\": \"model\", \"predicted\": true, \"set\": \"%s\", \"ranked\": "
                "%lld, \"sampled\": %s, \"coefficients\": %s}", o->set ? o->set : "",
                (long long)r.n, r.sampled ? "true" : "false", cj);
  int *def = rt_malloc((size_t)np * sizeof *def);
  char *defj = sp_default_config(r.sp, def) && sp_valid(r.sp, def, NULL) ? sp_config_json(r.sp, def) : NULL;
  int64_t target_id, kid, wid, sid;
  db_campaign cr = {.strategy = "model", .options_json = opts.s, .seed = (int64_t)o->seed,
                    .budget = keep, .source = "predicted",
                    .compiler = tg_compiler(&t, compiler, sizeof compiler), .flags = "",
                    .state = "done"};
  int rc = db_begin(d, err) ||
           db_target_id(d, t.name, desc.fingerprint, dj, &target_id, err) ||
           db_kernel_id(d, r.k->name, "rooftune-" RT_VERSION, &kid, err) ||
           (defj && db_kernel_set_default(d, kid, defj, err)) ||
           db_workload_id(d, kid, key, sizes, r.k->dtype, kn_str(&r.pb, "layout"), &wid, err) ||
           db_space_id(d, spec, &sid, err);
  if (!rc) {   /* the ceilings the predictions used, as a bench would have stored them */
    char *stored = NULL;
    int have = db_ceilings_get(d, target_id, &stored, NULL, err);
    rc = have < 0 || ((!have || strcmp(stored, cej)) &&
                      db_ceilings_put(d, target_id, r.ce.measured, cej, NULL, err));
    free(stored);
  }
  if (!rc) {
    cr.target_id = target_id, cr.workload_id = wid, cr.space_id = sid;
    rc = db_campaign_new(d, &cr, &rep->campaign, err) != 0;
  }
  for (int64_t j = 0; !rc && j < keep; j++) {
    int64_t i = pick[j];
    const cm_pred *p = &r.pred[i];
    db_trial tr;
    db_trial_init(&tr);
    char *cfg = sp_config_json(r.sp, tu_ranking_cfg(&r, i));
    tr.campaign_id = rep->campaign, tr.config_json = cfg, tr.status = "ok";
    tr.time_s = tr.predicted_s = p->time;
    tr.origin = "predicted";
    rc = db_trial_add(d, &tr, &rep->rows[j].trial, err) != 0;
    rep->rows[j].config = cfg;
    rep->rows[j].time_s = p->time;
    rep->rows[j].bound = p->bound;
    rep->rows[j].verified = !t.be->model_only;
    rep->n++;
  }
  if (!rc) rc = db_commit(d, err) != 0;
  else db_rollback(d);
  if (!rc && keep && !o->no_pin) {
    char reason[256];
    snprintf(reason, sizeof reason, "best of %lld schedules ranked by the model (%s%s): predicted, "
             "never measured", (long long)r.n, r.sampled ? "a sample; " : "", r.c.source);
    db_pin_req pr = {t.name, r.k->name, key, rep->rows[0].trial, NULL, reason};
    rc = db_pin(d, &pr, &rep->pin_version, err) != 0;
  }
  db_close(d);
  free(dj), free(key), free(sizes), free(spec), free(cej), free(cj), free(opts.s), free(def), free(defj);
  free(pick);
  tu_ranking_free(&r);
  return rc ? -1 : 0;
}

void tu_predict_report_free(tu_predict_report *r) {
  for (int i = 0; r->rows && i < r->n; i++) free(r->rows[i].config);
  free(r->rows);
  memset(r, 0, sizeof *r);
}
