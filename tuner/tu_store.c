/*
** tu_store.c -- the cost model's data in the database, as the workflows
** use it (moved from cost_model/cm_store.c: measuring is not the model's
** business): a target's latest measured ceilings (measured on first use
** through its backend row, tg_bench, when none are stored, so that a model
** is always backed by this machine's own figures) and the versioned
** coefficients of each kernel model; and the tuner's model of a workload
** built from both. The functions keep their cm_ names and their
** declarations in cost_model/cm.h for now, so that their callers in cli/
** (being moved to tuner/ in the same round) need no edit.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../db/db.h"
#include "../targets/tg.h"
#include "../cost_model/cm.h"

int cm_ceilings_load(db *d, int64_t target_id, const char *target, int measure,
                     cm_ceilings *ce, int *fresh, rt_err *err) {
  char *json = NULL;
  if (fresh) *fresh = 0;
  int found = db_ceilings_get(d, target_id, &json, NULL, err);
  if (found < 0) return -1;
  if (found) {
    int rc = cm_ceilings_parse(json, ce, err);
    free(json);
    if (rc) rt_err_prefix(err, "the stored ceilings");
    return rc;
  }
  if (!measure) {
    rt_err_set(err, "no measured ceilings for this target in the database: "
               "run rooftune bench --target %s", target);
    return -1;
  }
  cm_bench_opts o;
  cm_bench_opts_default(&o);
  tg_target t;
  if (tg_resolve(target, &t, err)) return -1;
  if (t.be->model_only)   /* nothing measured: tg_backend.h invariant 6 */
    fprintf(stderr, "rooftune: no ceilings stored for this target: taking its description file's "
            "(they are kept for next time)\n");
  else
    fprintf(stderr, "rooftune: no ceilings stored for this target: measuring them now "
            "(rooftune bench; they are kept for next time)\n");
  if (tg_bench(&t, &o, ce, err)) return -1;
  json = cm_ceilings_json(ce);
  int rc = db_ceilings_put(d, target_id, ce->measured, json, NULL, err);
  free(json);
  if (!rc && fresh) *fresh = 1;
  return rc;
}

int cm_coefs_load(db *d, int64_t target_id, const cm_kmodel *k, int version, cm_coefs *c,
                  rt_err *err) {
  char *json = NULL, *fit = NULL, created[32] = "";
  int v = 0;
  int found = db_model_get(d, target_id, k->kernel, version, &json, &fit, &v, created, err);
  if (found < 0) return -1;
  if (!found) {
    if (version) {
      rt_err_set(err, "no version %d of the %s model for this target", version, k->kernel);
      return -1;
    }
    cm_coefs_default(k, c);
    return 0;
  }
  int rc = cm_coefs_parse(k, json, c, err);
  if (rc && !version && (strstr(err->msg, "not a coefficient of this model") ||
                         strstr(err->msg, "an older form of the model"))) {
    /* the latest calibration is of an older form of the model (its
    ** coefficients renamed, retired or their meaning changed:
    ** cm_kmodel.form): the defaults, saying so */
    free(json), free(fit);
    cm_coefs_default(k, c);
    snprintf(c->source, sizeof c->source, "defaults (version %d: an older model form)", v);
    err->msg[0] = 0;
    return 0;
  }
  if (!rc && cm_unc_parse_fit(fit, &c->unc, err)) {
    rt_err_prefix(err, "version %d of the %s model", v, k->kernel);
    rc = -1;
  }
  free(json), free(fit);
  if (rc) return -1;
  c->version = v;
  snprintf(c->source, sizeof c->source, "version %d, calibrated %s", v, created);
  return 0;
}

cm_tmodel *cm_tmodel_open(db *d, int64_t target_id, const char *target, const char *kernel,
                          const kn_problem *pb, const sp_space *sp, int flush, rt_err *err) {
  tg_target t;
  if (tg_resolve(target, &t, err)) return NULL;
  const cm_kmodel *k = cm_kmodel_find_on(t.be->model_family, kernel);
  cm_ceilings ce;
  cm_coefs c;
  if (!k) {
    rt_err_set(err, "kernel %s has no cost model", kernel);
    return NULL;
  }
  if (cm_ceilings_load(d, target_id, target, 1, &ce, NULL, err) ||
      cm_coefs_load(d, target_id, k, 0, &c, err))
    return NULL;
  /* the backend's answers to its models, from builds already made only
  ** (a campaign ranks thousands of schedules: tg_backend.model_setup) */
  if (t.be->model_setup) t.be->model_setup(&t, &ce, NULL, 0);
  return cm_tmodel_new(k, pb, sp, &ce, &c, flush);
}
