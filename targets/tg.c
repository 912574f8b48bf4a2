/*
** tg.c -- the target table, target names and instances, the device-limit
** bindings of a target's spaces, and the key/value description helpers.
*/
#include "tg.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cuda/gd.h"
#include "cuda/gk.h"
#include "host/hk.h"
#include "opencl/oc.h"

static int host_describe(const char *instance, tg_desc *d, rt_err *err) {
  (void)instance;
  return hw_describe(d, err);
}

static int cuda_describe(const char *instance, tg_desc *d, rt_err *err) {
  int dev = gd_target_device(instance);
  if (dev < 0) dev = 0;
  return gd_describe(dev, d, err);
}

const tg_target tg_targets[] = {
  {"host", "the host CPU: C kernels compiled with the system compiler", host_describe, hk_kernels,
   .measure = NULL},
  {"cuda", "NVIDIA GPUs through the CUDA driver: CUDA C++ compiled with NVRTC (cuda:N)",
   cuda_describe, gk_kernels, .measure = NULL},
  {"opencl", "OpenCL devices through the ICD loader: OpenCL C built with clBuildProgram "
   "(opencl:P.D, platform P device D; opencl is opencl:0.0)", oc_describe, oc_kernels,
   .measure = oc_row_measure, .build_key = oc_row_build_key, .compiler = oc_row_compiler,
   .bench = oc_row_bench, .model_family = "wg-roofline", .limits = oc_limit_bindings,
   .instances = oc_row_instances},
  {NULL, NULL, NULL, NULL, .measure = NULL},
};

const tg_target *tg_find(const char *name) {
  int plat, dev;
  if (gd_target_device(name) >= 0) return &tg_targets[1];
  if (!oc_target_parse(name, &plat, &dev)) return &tg_targets[2];
  for (const tg_target *t = tg_targets; t->name; t++)
    if (!strcmp(t->name, name)) return t;
  return NULL;
}

const kn_kernel *tg_kernel(const tg_target *t, const char *name) {
  for (int i = 0; t && t->kernels[i]; i++)
    if (!strcmp(t->kernels[i]->name, name)) return t->kernels[i];
  return NULL;
}

int tg_device(const char *name) { return gd_target_device(name); }

const char *tg_model_family(const char *name) {
  const tg_target *t = tg_find(name);
  if (t && t->model_family) return t->model_family;
  return gd_target_device(name) >= 0 ? "cuda" : "host";
}

int tg_describe(const char *name, tg_desc *d, rt_err *err) {
  const tg_target *t = tg_find(name);
  if (!t) {
    rt_err_set(err, "unknown target '%s' (rooftune targets lists them)", name);
    return -1;
  }
  return t->describe(name, d, err);
}

/* Whether "VAR=" starts one of the comma-separated bindings of set. */
static int binds(const char *set, const char *var) {
  size_t n = strlen(var);
  for (const char *p = set; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
    while (*p == ' ') p++;
    if (!strncmp(p, var, n) && (p[n] == '=' || p[n] == ' ')) return 1;
  }
  return 0;
}

int tg_limit_bindings(const char *name, const char *user_set, rt_str *out, rt_err *err) {
  const tg_target *t = tg_find(name);
  if (t && t->limits) return t->limits(name, user_set, out, err);
  int dev = gd_target_device(name);
  if (dev < 0) return 0;
  gd_props p;
  if (gd_props_get(dev, &p, err)) return -1;
  const struct { const char *var; int val; } lim[] = {
    {"max_threads", p.max_threads_block}, {"max_smem", p.smem_block_optin},
    {"regs_block", p.regs_block}, {"sms", p.sms},
  };
  for (size_t i = 0; i < sizeof lim / sizeof *lim; i++)
    if (!binds(user_set, lim[i].var))
      rt_str_printf(out, "%s%s=%d", out->s && out->s[0] ? "," : "", lim[i].var, lim[i].val);
  return 0;
}

char *tg_bindings(const char *name, const char *user_set, rt_err *err) {
  rt_str s = {0};
  rt_str_printf(&s, "%s", user_set ? user_set : "");
  if (tg_limit_bindings(name, user_set, &s, err)) {
    free(s.s);
    return NULL;
  }
  return s.s;
}

void tg_desc_add(tg_desc *d, const char *key, const char *fmt, ...) {
  if (d->n == TG_MAXKV) return;
  snprintf(d->key[d->n], sizeof d->key[0], "%s", key);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->val[d->n], sizeof d->val[0], fmt, ap);
  va_end(ap);
  d->n++;
}

const char *tg_desc_get(const tg_desc *d, const char *key) {
  for (int i = 0; i < d->n; i++)
    if (!strcmp(d->key[i], key)) return d->val[i];
  return "";
}

char *tg_desc_json(const tg_desc *d) {
  json_t *j = json_object();
  for (int i = 0; i < d->n; i++) json_object_set_new(j, d->key[i], json_string(d->val[i]));
  char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(j);
  return s;
}
