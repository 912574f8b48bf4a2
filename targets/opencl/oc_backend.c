/*
** oc_backend.c -- the OpenCL row of the backend table (tg_backend.h):
** OpenCL devices through the ICD loader, one instance per platform and
** device ("opencl:P.D"; "opencl" is opencl:0.0), OpenCL C built with
** clBuildProgram and run in the harness's worker (oc_measure.c), the
** ceilings bench (oc_bench.c), the "wg-roofline" model family
** (cost_model/cm_wgroof.c), and the device limits its spaces bind
** (max_wg, max_local, cus). No counters.
*/
#include "oc.h"

#include <stdio.h>
#include <string.h>

/* "opencl" is opencl:0.0; "opencl:P.D" with P, D in [0, 999]. */
static int ocb_parse(const char *name, tg_target *t, rt_err *err) {
  if (strncmp(name, "opencl", 6) || (name[6] && name[6] != ':')) return 0;
  int plat, dev;
  if (oc_target_parse(name, &plat, &dev)) {
    rt_err_set(err, "target '%s': expected opencl:P.D, platform P and device D in [0, 999] "
               "(rooftune targets lists them)", name);
    return -1;
  }
  t->be = &oc_backend;
  t->idx[0] = plat, t->idx[1] = dev;
  snprintf(t->name, sizeof t->name, "opencl:%d.%d", plat, dev);
  return 1;
}

/* Every device of every platform; opencl:0.0 alone when there is none
** (its describe says why). */
static int ocb_list(tg_target *t, int max) {
  oc_props p[OC_MAXDEV];
  rt_err err = {0};
  int n = oc_list(p, OC_MAXDEV, &err), k = 0;
  for (int i = 0; i < n && k < max; i++, k++) {
    memset(&t[k], 0, sizeof t[k]);
    t[k].be = &oc_backend;
    t[k].idx[0] = p[i].plat, t[k].idx[1] = p[i].dev;
    snprintf(t[k].name, sizeof t[k].name, "opencl:%d.%d", p[i].plat, p[i].dev);
  }
  if (k == 0 && max >= 1) {
    memset(t, 0, sizeof *t);
    t->be = &oc_backend;
    snprintf(t->name, sizeof t->name, "opencl:0.0");
    k = 1;
  }
  return k;
}

static int ocb_describe(const tg_target *t, tg_desc *d, rt_err *err) {
  return oc_describe(t->idx[0], t->idx[1], d, err);
}

static const char *ocb_compiler(const tg_target *t, char *buf, size_t cap) {
  oc_props p;
  rt_err err = {0};
  if (oc_props_get(t->idx[0], t->idx[1], &p, &err)) {
    snprintf(buf, cap, "OpenCL unavailable: %s", err.msg);
    return buf;
  }
  return oc_compiler(&p, buf, cap);
}

static void ocb_build_key(const tg_target *t, const char *src, const char *ldflags,
                          const ms_opts *o, char key[33]) {
  (void)ldflags, (void)o;   /* OpenCL C links nothing; OC_BUILD_OPTS are fixed */
  oc_props p;
  rt_err err = {0};
  memset(&p, 0, sizeof p);
  oc_props_get(t->idx[0], t->idx[1], &p, &err);   /* absent: a key no build matches */
  oc_build_key(src, &p, key);
}

static void ocb_prebuild(const tg_target *t, const char *const *srcs, int n, const char *ldflags,
                         const ms_opts *o, int jobs) {
  (void)ldflags;
  oc_prebuild(srcs, n, t->idx[0], t->idx[1], o, jobs);
}

static int ocb_measure(const tg_target *t, ms_workload *w, const char *src, const char *ldflags,
                       const ms_opts *o, ms_result *r) {
  (void)ldflags;
  return oc_measure(w, src, t->idx[0], t->idx[1], o, r);
}

static int ocb_measure_batch(const tg_target *t, ms_workload *w, const char *const *srcs, int n,
                             const ms_opts *o, ms_result *r, const volatile sig_atomic_t *stop,
                             rt_err *err) {
  return oc_measure_batch(w, srcs, n, t->idx[0], t->idx[1], o, r, stop, err);
}

static int ocb_counters(const tg_target *t, const char **why) {
  (void)t;
  if (why) *why = "the OpenCL backend has no counters (timers and the model's counts only)";
  return 0;
}

static const char *const no_events[] = {NULL};

static int ocb_bench(const tg_target *t, const cm_bench_opts *o, cm_ceilings *c, rt_err *err) {
  return oc_bench(t->idx[0], t->idx[1], o, c, err);
}

static const tg_traffic ocb_traffic[] = {{NULL, 0}};

static const char *ocb_traffic_source(const tg_target *t, int here, const char **why) {
  (void)t, (void)here;
  if (why) *why = "the OpenCL backend counts no cache traffic";
  return NULL;
}

static int ocb_limits(const tg_target *t, const char *user_set, rt_str *out, rt_err *err) {
  return oc_limit_bindings(t->idx[0], t->idx[1], user_set, out, err);
}

/* Family (tg_backend.h): the device's name; the architecture is its type
** and vendor under its platform ("cpu GenuineIntel, Portable Computing
** Language"): OpenCL names no instruction set. */
static void ocb_family(const tg_desc *d, tg_family *f) {
  const char *type = tg_desc_get(d, "type"), *vendor = tg_desc_get(d, "vendor"),
             *platform = tg_desc_get(d, "platform");
  snprintf(f->model, sizeof f->model, "%s", tg_desc_get(d, "device"));
  if (*type && *vendor && *platform)
    snprintf(f->arch, sizeof f->arch, "%.20s %.50s, %.50s", type, vendor, platform);
}

const tg_backend oc_backend = {
  .name = "opencl",
  .summary = "OpenCL devices through the ICD loader: OpenCL C built with clBuildProgram",
  .syntax = "opencl:P.D",
  .gpu = 0,
  .parse = ocb_parse,
  .list = ocb_list,
  .describe = ocb_describe,
  .family = ocb_family,
  .test_fingerprint_env = NULL,
  .compiler = ocb_compiler,
  .build_key = ocb_build_key,
  .prebuild = ocb_prebuild,
  .measure = ocb_measure,
  .measure_batch = ocb_measure_batch,
  .counter_source = "none",
  .counters_available = ocb_counters,
  .default_events = no_events,
  .counted_traffic = NULL,
  .bench = ocb_bench,
  .model_family = "wg-roofline",
  .traffic = ocb_traffic,
  .traffic_source = ocb_traffic_source,
  .traffic_count = NULL,
  .limit_bindings = ocb_limits,
  .kernels = oc_kernels,
};
