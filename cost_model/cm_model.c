/*
** cm_model.c -- the roofline combination shared by every kernel model
** (cm.h, invariant 2), the helpers the kernel models share, and their
** coefficient defaults (the table of kernel models is cm_table.c, so that
** the models calling these helpers form no circle with it). A kernel model
** says how much work a schedule does at each level; this file turns that
** work into time with the target's measured ceilings and the model's
** coefficients, and names the limiting bound.
*/
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "cm.h"

const char *cm_bound_name(cm_bound b) {
  static const char *const names[CM_NBOUND] = {
    "compute", "L1", "L2", "L3", "DRAM", "overhead"};
  return b >= 0 && b < CM_NBOUND ? names[b] : "?";
}

/* An unknown uncertainty (cm_coefs.unc of the defaults; cm_unc.c fills a
** calibration's). */
void cm_unc_none(cm_unc *u) {
  memset(u, 0, sizeof *u);
  u->all = NAN;
  for (int b = 0; b < CM_NBOUND; b++) u->bound[b] = NAN;
}

void cm_coefs_default(const cm_kmodel *k, cm_coefs *c) {
  memset(c, 0, sizeof *c);
  c->n = k->ncoef;
  for (int i = 0; i < k->ncoef; i++) c->v[i] = k->coefs[i].value;
  strcpy(c->source, "defaults");
  cm_unc_none(&c->unc);
}

void cm_machine_from_ceilings(cm_machine *m, const cm_ceilings *c) {
  memset(m, 0, sizeof *m);
  for (int i = 0; i < CM_NLEVEL; i++) m->cache[i] = c->cache[i], m->ways[i] = c->ways[i];
  m->gpu = c->gpu;
  m->units = c->threads;
  m->line = c->gpu.sms > 0 ? 32 : 64;   /* a GPU's L2 moves 32-byte sectors */
  m->vector_regs = 32;
  m->simd_floats = 16;
  for (int i = 0; i < c->nclass; i++)
    if (c->cls[i].bits / 32 > m->simd_floats) m->simd_floats = c->cls[i].bits / 32;
  if (c->peak[0] > 0) {
    /* the widest class measured decides the lanes; below AVX-512 the
    ** x86 register file has 16 vector registers */
    int widest = 0;
    for (int i = 0; i < c->nclass; i++)
      if (c->cls[i].flops[0] > 0 && c->cls[i].bits > widest) widest = c->cls[i].bits;
    if (widest) {
      m->simd_floats = widest / 32;
      m->vector_regs = widest >= 512 ? 32 : 16;
    }
  }
}

void cm_omp_static(double n, int th, int t, double *lo, double *hi) {
  double q = floor(n / th), r = n - q * th;
  if (t < r) *lo = t * (q + 1), *hi = *lo + q + 1;
  else *lo = q * t + r, *hi = *lo + q;
}

/* A ceiling for `threads` threads: linear between the one-thread and the
** all-thread figures (the machine may share units between threads); with
** no one-thread figure (0), the all-thread one scaled by threads / all. */
static double at_threads(const double v[2], int threads, int all) {
  if (!(v[0] > 0) && v[1] > 0 && all > 1)
    return v[1] * fmin(fmax(threads, 1), all) / all;
  if (threads <= 1 || all <= 1) return v[0];
  if (threads >= all) return v[1];
  return v[0] + (v[1] - v[0]) * (threads - 1) / (double)(all - 1);
}

void cm_time(const cm_kmodel *k, const cm_work *w, const cm_ceilings *ce,
             const cm_coefs *c, cm_pred *p) {
  memset(p, 0, sizeof *p);
  p->w = *w;
  const double *v = c->v;
  int th = w->threads > 0 ? w->threads : 1;
  double imb = w->imbalance >= 1 ? w->imbalance : 1;
  /* Compute: the schedule's efficiency terms, each to its exponent. */
  double e = v[CM_C_COMPUTE];
  for (int j = 0; j < k->neff; j++)
    e *= pow(fmax(w->eff[j], 1e-6), v[CM_C_EFF0 + j]);
  double f1 = ce->peak[0], ft = at_threads(ce->peak, th, ce->threads);
  double ser = fmin(fmax(w->serial_frac, 0), 1);
  p->ceiling[CM_COMPUTE] = ft;
  p->t[CM_COMPUTE] = w->flops * ser / (f1 * e) +
                     w->flops * (1 - ser) * imb / (ft * e);
  for (int l = 0; l < CM_NLEVEL; l++) {
    double bw = at_threads(ce->bw[l], th, ce->threads);
    p->ceiling[CM_LEVEL(l)] = bw;
    /* a level the machine lacks (a GPU's L3: ceiling 0) has no work */
    double me = w->mem_eff[l] > 0 ? fmin(w->mem_eff[l], 1) : 1;
    p->t[CM_LEVEL(l)] = w->bytes[l] > 0 ? w->bytes[l] * imb / (bw * v[CM_C_L1 + l] * me) : 0;
  }
  /* Overlap of the bounds: a p-norm (p = 1 adds them, p -> inf: max). */
  double pn = v[CM_C_OVERLAP], s = 0, tmax = 0;
  for (int b = CM_COMPUTE; b <= CM_DRAM; b++) tmax = fmax(tmax, p->t[b]);
  if (tmax > 0) {
    for (int b = CM_COMPUTE; b <= CM_DRAM; b++) s += pow(p->t[b] / tmax, pn);
    s = tmax * pow(s, 1 / pn);
  }
  p->t[CM_OVERHEAD] = v[CM_C_FIXED] * fmax(w->launches, 1) + v[CM_C_THREAD] * (th - 1) +
                      v[CM_C_TRIP] * w->trips * imb / th;
  p->time = s + p->t[CM_OVERHEAD];
  p->bound = CM_COMPUTE;
  for (int b = CM_COMPUTE; b < CM_NBOUND; b++)
    if (p->t[b] > p->t[p->bound]) p->bound = (cm_bound)b;
  p->frac[CM_COMPUTE] = w->flops / p->time / ft;
  for (int l = 0; l < CM_NLEVEL; l++)
    p->frac[CM_LEVEL(l)] = p->ceiling[CM_LEVEL(l)] > 0
                               ? w->bytes[l] / p->time / p->ceiling[CM_LEVEL(l)] : 0;
  p->frac[CM_OVERHEAD] = p->t[CM_OVERHEAD] / p->time;
}

int cm_predict(const cm_kmodel *k, const kn_problem *pb, const sp_space *sp,
               const int *cfg, const cm_ceilings *ce, const cm_coefs *c,
               int flush, cm_pred *p, rt_err *err) {
  cm_machine m;
  cm_work w;
  cm_machine_from_ceilings(&m, ce);
  m.flush = flush;
  memset(&w, 0, sizeof w);
  w.threads = 1;
  w.imbalance = 1;
  for (int j = 0; j < CM_MAXEFF; j++) w.eff[j] = 1;
  if (k->work(pb, sp, cfg, &m, c, &w, err)) return -1;
  cm_time(k, &w, ce, c, p);
  return 0;
}

/* The model's form (cm_kmodel.form; 0 is 1). */
static int form_of(const cm_kmodel *k) { return k->form > 0 ? k->form : 1; }

char *cm_coefs_json(const cm_kmodel *k, const cm_coefs *c) {
  rt_str s = {0};
  rt_str_printf(&s, "{\"form\": %d", form_of(k));
  for (int i = 0; i < k->ncoef; i++)
    rt_str_printf(&s, ", \"%s\": %.17g", k->coefs[i].name, c->v[i]);
  rt_str_printf(&s, "}");
  return s.s;
}

int cm_coefs_parse(const cm_kmodel *k, const char *json, cm_coefs *c, rt_err *err) {
  json_error_t je;
  json_t *o = json_loads(json, 0, &je);
  if (!o || !json_is_object(o)) {
    rt_err_set(err, "coefficients of %s: not a JSON object (%s)", k->kernel,
               o ? "another type" : je.text);
    json_decref(o);
    return -1;
  }
  cm_coefs_default(k, c);
  /* a calibration of another form of the model (none stored: form 1) */
  json_t *f = json_object_get(o, "form");
  json_int_t form = f ? (json_is_integer(f) ? json_integer_value(f) : -1) : 1;
  if (form != form_of(k)) {
    rt_err_set(err, "coefficients of %s: form %lld, not this model's form %d (an older form of the model)",
               k->kernel, (long long)form, form_of(k));
    json_decref(o);
    return -1;
  }
  const char *key;
  json_t *v;
  json_object_foreach(o, key, v) {
    if (!strcmp(key, "form")) continue;
    int i = 0;
    while (i < k->ncoef && strcmp(k->coefs[i].name, key)) i++;
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (i == k->ncoef || !(x > 0) || !isfinite(x) ||
        (k->coefs[i].kind == CM_GE1 && x < 1)) {
      rt_err_set(err, "coefficients of %s: \"%s\": %s", k->kernel, key,
                 i == k->ncoef ? "not a coefficient of this model"
                               : "expected a positive number (>= 1 for an exponent of overlap)");
      json_decref(o);
      return -1;
    }
    c->v[i] = x;
  }
  json_decref(o);
  return 0;
}
