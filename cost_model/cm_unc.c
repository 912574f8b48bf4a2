/*
** cm_unc.c -- the uncertainty of a calibrated model (cm.h invariant 6):
** the spread of log(measured / predicted) over the schedules a calibration
** was not fitted to, over all of them and per limiting bound, a
** prediction's uncertainty from the bound that limits it, and the JSON
** form kept in the calibration's fit record ("uncertainty") in the
** database, read back when the version is loaded.
*/
#include "cost_model/cm.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_statistics_double.h>

void cm_unc_from(cm_unc *u, const double *r, const cm_bound *bound, int n, int held_out) {
  cm_unc_none(u);
  double *x = rt_malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(r[i])) x[m++] = r[i];
  u->n = m;
  u->held_out = held_out;
  if (m >= 2) u->all = gsl_stats_sd(x, 1, (size_t)m);
  for (int b = 0; b < CM_NBOUND; b++) {
    int k = 0;
    for (int i = 0; i < n; i++)
      if (bound[i] == (cm_bound)b && isfinite(r[i])) x[k++] = r[i];
    u->nb[b] = k;
    if (k >= CM_UNC_MIN) u->bound[b] = gsl_stats_sd(x, 1, (size_t)k);
  }
  free(x);
}

double cm_unc_sigma(const cm_unc *u, cm_bound b) {
  if ((int)b >= 0 && b < CM_NBOUND && isfinite(u->bound[b])) return u->bound[b];
  return u->all;
}

char *cm_unc_json(const cm_unc *u) {
  rt_str s = {0};
  rt_str_printf(&s, "{\"log_sd\": ");
  if (isfinite(u->all)) rt_str_printf(&s, "%.17g", u->all);
  else rt_str_printf(&s, "null");
  rt_str_printf(&s, ", \"n\": %d, \"on\": \"%s\", \"by_bound\": {", u->n,
                u->held_out ? "held-out" : "fitted");
  int first = 1;
  for (int b = 0; b < CM_NBOUND; b++) {
    if (!u->nb[b]) continue;
    rt_str_printf(&s, "%s\"%s\": {\"log_sd\": ", first ? "" : ", ", cm_bound_name((cm_bound)b));
    if (isfinite(u->bound[b])) rt_str_printf(&s, "%.17g", u->bound[b]);
    else rt_str_printf(&s, "null");
    rt_str_printf(&s, ", \"n\": %d}", u->nb[b]);
    first = 0;
  }
  rt_str_printf(&s, "}}");
  return s.s;
}

/* x := the number j, or NAN when j is null; -1 when it is neither. */
static int num_or_null(json_t *j, double *x) {
  if (json_is_null(j)) return *x = NAN, 0;
  if (!json_is_number(j)) return -1;
  *x = json_number_value(j);
  return 0;
}

int cm_unc_parse_fit(const char *fit_json, cm_unc *u, rt_err *err) {
  cm_unc_none(u);
  json_error_t je;
  json_t *fit = json_loads(fit_json, 0, &je), *o = fit ? json_object_get(fit, "uncertainty") : NULL;
  if (!fit) {
    rt_err_set(err, "fit record: not JSON: %s", je.text);
    return -1;
  }
  int bad = 0;
  if (o) {
    json_t *bb = json_object_get(o, "by_bound"), *on = json_object_get(o, "on");
    bad = !json_is_object(o) || num_or_null(json_object_get(o, "log_sd"), &u->all) ||
          !json_is_integer(json_object_get(o, "n")) || (bb && !json_is_object(bb));
    if (!bad) u->n = (int)json_integer_value(json_object_get(o, "n"));
    u->held_out = json_is_string(on) && !strcmp(json_string_value(on), "held-out");
    const char *key;
    json_t *v;
    if (!bad && bb) json_object_foreach(bb, key, v) {
      int b = 0;
      while (b < CM_NBOUND && strcmp(cm_bound_name((cm_bound)b), key)) b++;
      if (b == CM_NBOUND || !json_is_object(v) || num_or_null(json_object_get(v, "log_sd"), &u->bound[b]) ||
          !json_is_integer(json_object_get(v, "n"))) {
        bad = 1;
        break;
      }
      u->nb[b] = (int)json_integer_value(json_object_get(v, "n"));
    }
  }
  json_decref(fit);
  if (bad) {
    cm_unc_none(u);
    rt_err_set(err, "fit record: \"uncertainty\": expected {\"log_sd\": number, \"n\": integer, "
               "\"by_bound\": {bound: {\"log_sd\", \"n\"}}}");
    return -1;
  }
  return 0;
}
