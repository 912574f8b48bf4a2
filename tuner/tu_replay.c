/*
** tu_replay.c -- recordings as objectives: the results of a T4 file or of
** a rooftune database, indexed by configuration, answer a run's
** evaluations with their recorded status, time and cost (compile +
** verification + runs + framework, as Kernel Tuner's simulation mode
** counts it). A T4 file (or a Kernel Tuner cache file) goes through the
** database's own importer (db_import_t4, into a private in-memory
** database), so both paths share one parser and one set of checks.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../measure/ms.h"
#include "tu.h"

struct tu_rec {
  char name[512];
  sp_space *sp;
  tu_cfgmap map;
  tu_obs *obs;
  int64_t cap;
};

static double nz(double x) { return isnan(x) ? 0 : x; }

typedef struct loader {
  tu_rec *r;
  int *cfg;
  rt_err *err;
  int failed;
} loader;

/* One trial row -> one recorded configuration (first one wins). */
static int load_row(void *ctx, const db_trial_row *t) {
  loader *L = ctx;
  tu_rec *r = L->r;
  rt_err e = {0};
  int st = ms_status_parse(t->status);
  if (sp_config_parse(r->sp, t->config, L->cfg, &e) || st < 0) {
    rt_err_set(L->err, "trial %lld: %s", (long long)t->id,
               st < 0 ? "unknown status" : e.msg);
    L->failed = 1;
    return 1;
  }
  int added;
  int64_t i = tu_cfgmap_put(&r->map, L->cfg, &added);
  if (!added) return 0;
  if (i >= r->cap) r->obs = rt_realloc(r->obs, (size_t)(r->cap = r->map.cap) * sizeof *r->obs);
  r->obs[i] = (tu_obs){.ok = st == MS_OK, .value = st == MS_OK ? t->time_s : NAN, .status = st,
                       .cost = nz(t->compile_s) + nz(t->verify_s) + nz(t->bench_s) +
                               nz(t->framework_s),
                       .origin = TU_REPLAYED, .compile_s = nz(t->compile_s) + nz(t->verify_s)};
  return 0;
}

static tu_rec *load(db *d, const db_trial_filter *f, sp_space *sp, const char *name,
                    rt_err *err) {
  tu_rec *r = rt_calloc(1, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  r->sp = sp;
  tu_cfgmap_init(&r->map, sp_nparams(sp));
  loader L = {r, rt_malloc((size_t)sp_nparams(sp) * sizeof(int)), err, 0};
  int n = db_trials(d, f, load_row, &L, err);
  free(L.cfg);
  if (n >= 0 && !L.failed && r->map.n == 0) rt_err_set(err, "no trials recorded there");
  if (n < 0 || L.failed || r->map.n == 0) {
    rt_err_prefix(err, "%s", name);
    tu_rec_free(r);
    return NULL;
  }
  return r;
}

tu_rec *tu_rec_t4(const char *path, sp_space *sp, rt_err *err) {
  db *d = db_open(":memory:", DB_CREATE, err);
  if (!d) return NULL;
  int64_t campaign;
  int n;
  tu_rec *r = NULL;
  if (!db_import_t4(d, path, sp, "recording", sp_name(sp), &campaign, &n, err)) {
    db_trial_filter f = {.campaign = campaign};
    r = load(d, &f, sp, path, err);
  }
  db_close(d);
  return r;
}

tu_rec *tu_rec_db(const char *db_path, const db_trial_filter *f, sp_space *sp, rt_err *err) {
  db *d = db_open(db_path, DB_READ, err);
  if (!d) return NULL;
  tu_rec *r = load(d, f, sp, db_path, err);
  db_close(d);
  return r;
}

void tu_rec_free(tu_rec *r) {
  if (!r) return;
  tu_cfgmap_free(&r->map);
  free(r->obs);
  free(r);
}

const char *tu_rec_name(const tu_rec *r) { return r->name; }
int64_t tu_rec_n(const tu_rec *r) { return r->map.n; }
const int *tu_rec_cfg(const tu_rec *r, int64_t i) { return tu_cfgmap_key(&r->map, i); }
const tu_obs *tu_rec_obs(const tu_rec *r, int64_t i) { return &r->obs[i]; }

static int rec_eval(void *ctx, const int *cfg, tu_obs *obs, rt_err *err) {
  tu_rec *r = ctx;
  int64_t i = tu_cfgmap_get(&r->map, cfg);
  if (i < 0) {
    char *j = sp_config_json(r->sp, cfg);
    rt_err_set(err, "configuration %s is not in the recording %s (replay does not guess: "
               "record it, or replay a space the recording covers)", j, r->name);
    free(j);
    return -1;
  }
  *obs = r->obs[i];
  return 0;
}

tu_objective tu_rec_objective(tu_rec *r) { return (tu_objective){rec_eval, r, NULL}; }

double tu_rec_values(const tu_rec *r, double *values) {
  double best = NAN;
  for (int64_t i = 0; i < r->map.n; i++) {
    values[i] = r->obs[i].ok ? r->obs[i].value : NAN;
    if (r->obs[i].ok && !(values[i] >= best)) best = values[i];
  }
  return best;
}
