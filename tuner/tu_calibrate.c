/*
** tu_calibrate.c -- the calibration workflow (tu.h, "Calibration"): a
** kernel model's coefficients fitted to measured schedules. The schedules
** are split into fitted and held-out ones by their configuration's hash
** and a seed (tu_held_out: the same split comes back later); the byte
** terms' capacity shares are fitted to counted traffic (a grid: the
** model's traffic is a step function of them); the time terms by robust
** nonlinear least squares in log time (cm_calibrate); then the accuracy of
** the defaults, the coefficients in use and the new ones per workload, and
** the record stored with a version (fit_json). It reads and writes nothing
** but its arguments and what its counter callback does: the command line
** (`rooftune model calibrate`, cli/cmd_model.c) loads the schedules, counts
** traffic, stores the version and prints.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "tu.h"

const int tu_topk[TU_NTOPK] = {1, 5, 10};

int tu_held_out(const char *hash, uint64_t seed, double share) {
  rt_hash h = rt_hash_bytes(RT_HASH_INIT, hash, strlen(hash));
  h = rt_hash_bytes(h, &seed, sizeof seed);
  return (double)(uint64_t)(h % 1000000) / 1e6 < share;
}

void tu_accuracy(const cm_kmodel *k, const cm_ceilings *ce, const cm_coefs *c, int flush,
                 const cm_sample *s, const int *use, int n, const sp_space *only, tu_acc *a) {
  double *pred = rt_malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof *pred), *act = pred + n;
  int m = 0;
  memset(a, 0, sizeof *a);
  for (int i = 0; i < n; i++) {
    if (!use[i] || s[i].sp != only) continue;
    cm_pred p;
    rt_err err;
    pred[m] = cm_predict(k, s[i].pb, s[i].sp, s[i].cfg, ce, c, flush, &p, &err) ? NAN : p.time;
    act[m++] = s[i].t;
  }
  a->n = m;
  a->rho = cm_spearman(pred, act, m);
  a->tau = cm_kendall(pred, act, m);
  a->mre = cm_median_rel_err(pred, act, m);
  for (int j = 0; j < TU_NTOPK; j++) a->top[j] = cm_topk_hit(pred, act, m, tu_topk[j], 0.05);
  free(pred);
}

void tu_acc_json(jw *w, const tu_acc *a) {
  jw_begin(w, '{');
  jw_key(w, "n"); jw_int(w, a->n);
  jw_key(w, "spearman"); jw_double(w, a->rho);
  jw_key(w, "kendall"); jw_double(w, a->tau);
  for (int j = 0; j < TU_NTOPK; j++) {
    char key[32];
    snprintf(key, sizeof key, "top%d_within_5pct", tu_topk[j]);
    jw_key(w, key); jw_bool(w, a->top[j]);
  }
  jw_key(w, "median_rel_error"); jw_double(w, a->mre);
  jw_end(w, '}');
}

/* ---- Counted traffic and the byte terms ---- */

/* The capacity share fitted to the counted bytes of level L2, L3, DRAM:
** on a host each cache's share sets the fills of the level below it; on a
** GPU (in->gpu) the L2's share sets DRAM traffic (and L2 bytes have none). */
static const char *const cap_names[3] = {"cap_L1", "cap_L2", "cap_L3"};
static const char *const cap_names_gpu[3] = {NULL, NULL, "cap_L2"};

static int coef_index(const cm_kmodel *k, const char *name) {
  for (int i = 0; i < k->ncoef; i++)
    if (!strcmp(k->coefs[i].name, name)) return i;
  return -1;
}

/* Median over the counted schedules of |log(model / counted)| of level
** l's bytes, and (*ratio) the median of model / counted. NAN: none. cold:
** the counts are of one cold run (the counter says; tu_count_fn). */
static double byte_error(const tu_cal_in *in, const tu_counted *ct, int n, int l,
                         const cm_coefs *c, int cold, double *ratio) {
  double *e = rt_malloc(2 * (size_t)n * sizeof *e), *r = e + n;
  int k = 0;
  cm_machine mach;
  cm_machine_from_ceilings(&mach, in->ce);
  mach.flush = cold;
  for (int i = 0; i < n; i++) {
    const cm_sample *s = &in->s[ct[i].idx];
    cm_work w = {.threads = 1, .imbalance = 1};
    rt_err err;
    if (!isfinite(ct[i].bytes[l]) || ct[i].bytes[l] <= 0 ||
        in->km->work(s->pb, s->sp, s->cfg, &mach, c, &w, &err) || !(w.bytes[l] > 0))
      continue;
    r[k] = w.bytes[l] / ct[i].bytes[l];
    e[k] = fabs(log(r[k]));
    k++;
  }
  double med = NAN;
  *ratio = NAN;
  if (k) {
    gsl_sort(e, 1, (size_t)k);
    gsl_sort(r, 1, (size_t)k);
    med = gsl_stats_median_from_sorted_data(e, 1, (size_t)k);
    *ratio = gsl_stats_median_from_sorted_data(r, 1, (size_t)k);
  }
  free(e);
  return med;
}

/* The calibrated model's uncertainty (cm.h invariant 6) into o->after.unc:
** the residuals log(measured / predicted) of the schedules eval selects
** (the held-out ones, else the fitted ones) under o->after, by bound. */
static void uncertainty(const tu_cal_in *in, tu_cal_out *o, const int *eval) {
  double *r = rt_malloc((size_t)(in->n > 0 ? in->n : 1) * sizeof *r);
  cm_bound *b = rt_malloc((size_t)(in->n > 0 ? in->n : 1) * sizeof *b);
  int m = 0;
  for (int i = 0; i < in->n; i++) {
    cm_pred p;
    rt_err err;
    if (!eval[i] || cm_predict(in->km, in->s[i].pb, in->s[i].sp, in->s[i].cfg, in->ce, &o->after,
                               in->flush, &p, &err) || !(p.time > 0) || !(in->s[i].t > 0))
      continue;
    r[m] = log(in->s[i].t / p.time), b[m++] = p.bound;
  }
  cm_unc_from(&o->after.unc, r, b, m, o->ntest > 0);
  free(r), free(b);
}

/* The record stored with the version: what it was fitted on and how well
** (malloc'ed, without a newline at its end). */
static char *fit_record(const tu_cal_in *in, const tu_cal_out *o) {
  char *fit = NULL;
  size_t fit_len = 0;
  FILE *mf = open_memstream(&fit, &fit_len);
  if (!mf) {   /* out of memory, as rt_malloc treats it */
    perror("rooftune: open_memstream");
    abort();
  }
  jw w;
  jw_init(&w, mf);
  jw_begin(&w, '{');
  jw_key(&w, "workloads");
  jw_begin(&w, '[');
  for (int i = 0; i < in->nwl; i++) jw_str(&w, in->wl_key[i]);
  jw_end(&w, ']');
  jw_key(&w, "schedules"); jw_int(&w, in->n);
  jw_key(&w, "train"); jw_int(&w, o->ntrain);
  jw_key(&w, "test"); jw_int(&w, o->ntest);
  jw_key(&w, "holdout"); jw_double(&w, in->holdout);
  jw_key(&w, "seed"); jw_int(&w, (long long)in->seed);
  jw_key(&w, "flush"); jw_bool(&w, in->flush);
  jw_key(&w, "rms_log_before"); jw_double(&w, o->fit.rms_before);
  jw_key(&w, "rms_log_after"); jw_double(&w, o->fit.rms_after);
  jw_key(&w, "iterations"); jw_int(&w, o->fit.iters);
  jw_key(&w, "irls_rounds"); jw_int(&w, o->fit.irls_rounds);
  jw_key(&w, "outliers"); jw_int(&w, o->fit.n_outliers);
  jw_key(&w, "counted"); jw_int(&w, o->counted);
  jw_key(&w, "counter_source"); jw_str(&w, o->source);
  char *unc = cm_unc_json(&o->after.unc);
  jw_key(&w, "uncertainty"); jw_raw(&w, unc);
  free(unc);
  jw_key(&w, "accuracy");
  jw_begin(&w, '[');
  for (int i = 0; i < in->nwl; i++) {
    jw_begin(&w, '{');
    jw_key(&w, "workload"); jw_str(&w, in->wl_key[i]);
    jw_key(&w, "defaults"); tu_acc_json(&w, &o->a_def[i]);
    jw_key(&w, "calibrated"); tu_acc_json(&w, &o->a_after[i]);
    jw_key(&w, "calibrated_on_fitted"); tu_acc_json(&w, &o->t_after[i]);
    jw_end(&w, '}');
  }
  jw_end(&w, ']');
  jw_end(&w, '}');
  fclose(mf);
  if (fit_len && fit[fit_len - 1] == '\n') fit[--fit_len] = 0;
  return fit;
}

int tu_calibrate(const tu_cal_in *in, tu_cal_out *o, rt_err *err) {
  memset(o, 0, sizeof *o);
  if (in->nwl < 1 || in->nwl > TU_MAXWL) {
    rt_err_set(err, "calibrate: %d workloads (expected 1 to %d)", in->nwl, TU_MAXWL);
    return -1;
  }
  if (!(in->holdout >= 0 && in->holdout < 1)) {
    rt_err_set(err, "calibrate: held-out share %g (expected 0 <= share < 1)", in->holdout);
    return -1;
  }
  const cm_kmodel *km = in->km;
  int n = in->n;
  o->train = rt_malloc((size_t)(n > 0 ? n : 1) * sizeof *o->train);
  o->test = rt_malloc((size_t)(n > 0 ? n : 1) * sizeof *o->test);
  for (int i = 0; i < n; i++) {
    o->test[i] = tu_held_out(in->hash[i], in->seed, in->holdout);
    o->train[i] = !o->test[i];
    o->ntrain += o->train[i];
  }
  o->ntest = n - o->ntrain;
  if (o->ntrain < 2) {
    rt_err_set(err, "only %d of %d schedules left to fit on after holding out %.0f%%", o->ntrain, n,
               100 * in->holdout);
    return -1;
  }
  /* Byte terms: the capacity shares of each level fitted to counted
  ** traffic (a grid: the model's traffic is a step function of them). On
  ** a GPU the grid starts at 0.05 (the H200's counts put the L2's reuse
  ** between waves near nothing; the coefficient must stay positive). */
  cm_coefs_default(km, &o->defs);
  o->start = o->defs;
  for (int j = 0; j < km->ncoef; j++) o->fixed[j] = km->coefs[j].hold;
  int want = in->count ? in->counters : 0;
  tu_counted *ct = rt_calloc((size_t)(want > 0 ? want : 1), sizeof *ct);
  int cold = 1;
  rt_err cerr = {0};
  o->counted = want > 0 ? in->count(in->count_ctx, o->train, want, ct, o->source, &cold, &cerr) : 0;
  if (o->counted < 0) o->counted = 0;
  snprintf(o->count_why, sizeof o->count_why, "%s", cerr.msg);
  int gpu = in->gpu, nct = o->counted;
  const char *const *caps = gpu ? cap_names_gpu : cap_names;
  for (int l = 0; l < 3; l++) {
    o->cap[l] = caps[l];
    int ci = o->cap_idx[l] = caps[l] ? coef_index(km, caps[l]) : -1;
    o->berr0[l] = nct ? byte_error(in, ct, nct, l + 1, &o->start, cold, &o->brat0[l]) : NAN;
    if (!nct) o->brat0[l] = NAN;
    if (ci < 0 || !nct || isnan(o->berr0[l])) {
      o->berr1[l] = o->berr0[l], o->brat1[l] = nct ? o->brat0[l] : NAN;
      continue;
    }
    double best = o->berr0[l], bestv = o->start.v[ci];
    for (double v = gpu ? 0.05 : 0.25; v <= 1.0001; v += 0.05) {
      cm_coefs t = o->start;
      t.v[ci] = v;
      double r, e = byte_error(in, ct, nct, l + 1, &t, cold, &r);
      if (e < best - 1e-12) best = e, bestv = v;
    }
    o->start.v[ci] = bestv;
    o->berr1[l] = byte_error(in, ct, nct, l + 1, &o->start, cold, &o->brat1[l]);
  }
  free(ct);
  /* Time terms: robust nonlinear least squares in log time. */
  cm_sample *tr = rt_malloc((size_t)o->ntrain * sizeof *tr);
  for (int i = 0, k = 0; i < n; i++)
    if (o->train[i]) tr[k++] = in->s[i];
  o->after = o->start;
  int rc = cm_calibrate(km, tr, o->ntrain, in->ce, in->flush, &o->after, o->fixed, &o->fit, err);
  free(tr);
  if (rc) return -1;
  const int *eval = o->ntest ? o->test : o->train;
  uncertainty(in, o, eval);
  for (int i = 0; i < in->nwl; i++) {   /* per workload */
    const sp_space *w = in->wl[i];
    tu_accuracy(km, in->ce, &o->defs, in->flush, in->s, eval, n, w, &o->a_def[i]);
    tu_accuracy(km, in->ce, &in->before, in->flush, in->s, eval, n, w, &o->a_before[i]);
    tu_accuracy(km, in->ce, &o->after, in->flush, in->s, eval, n, w, &o->a_after[i]);
    tu_accuracy(km, in->ce, &o->after, in->flush, in->s, o->train, n, w, &o->t_after[i]);
  }
  o->fit_json = fit_record(in, o);
  return 0;
}

void tu_cal_out_free(tu_cal_out *o) {
  free(o->train), free(o->test), free(o->fit_json);
  o->train = o->test = NULL, o->fit_json = NULL;
}
