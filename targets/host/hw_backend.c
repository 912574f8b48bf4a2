/*
** hw_backend.c -- the host CPU's row of the backend table: C kernels
** compiled with the system compiler into shared objects, run in the
** harness's sandboxed worker, PAPI counters where the machine has a PMU,
** cachegrind for traffic elsewhere, the host ceilings bench.
*/
#include "hw.h"
#include "hk.h"

#include <stdio.h>
#include <string.h>

#include "../../cost_model/cm.h"
#include "../../measure/ms.h"

static int host_parse(const char *name, tg_target *t, rt_err *err) {
  (void)err;
  if (strcmp(name, "host")) return 0;
  snprintf(t->name, sizeof t->name, "host");
  return 1;
}

static int host_list(tg_target *t, int max) {
  if (max < 1) return 0;
  memset(t, 0, sizeof *t);
  t->be = &hw_backend;
  snprintf(t->name, sizeof t->name, "host");
  return 1;
}

static int host_describe(const tg_target *t, tg_desc *d, rt_err *err) {
  (void)t;
  return hw_describe(d, err);
}

static const char *host_compiler(const tg_target *t, char *buf, size_t cap) {
  (void)t;
  return ms_compiler(buf, cap);
}

static void host_build_key(const tg_target *t, const char *src, const char *ldflags,
                           const ms_opts *o, char key[33]) {
  (void)t;
  ms_build_key(src, ldflags, o, key);
}

static void host_prebuild(const tg_target *t, const char *const *srcs, int n,
                          const char *ldflags, const ms_opts *o, int jobs) {
  (void)t;
  ms_prebuild(srcs, n, ldflags, o, jobs);
}

static int host_measure(const tg_target *t, ms_workload *w, const char *src,
                        const char *ldflags, const ms_opts *o, ms_result *r) {
  (void)t;
  return hw_measure(w, src, ldflags, o, r);
}

static int host_counters(const tg_target *t, const char **why) {
  (void)t;
  return hw_papi_available(why);
}

static int host_bench(const tg_target *t, const cm_bench_opts *o, cm_ceilings *c, rt_err *err) {
  (void)t;
  return hw_bench(o, c, err);
}

/* PAPI counts this machine's caches: only for its own trials. Cachegrind
** simulates the target's caches (from its stored ceilings) on the code
** built here, so it counts for any host target. */
static const char *host_traffic_source(const tg_target *t, int here, const char **why) {
  (void)t;
  const char *w = "";
  if (here && hw_papi_available(&w)) return "papi";
  if (hw_cachegrind_available(&w)) return "cachegrind";
  static char msg[512];
  snprintf(msg, sizeof msg, "%s%s", here ? "no counters and no cachegrind here: "
           : "cachegrind is not available (PAPI would count this machine, not the target's): ", w);
  if (why) *why = msg;
  return NULL;
}

static const tg_traffic host_traffic[] = {{"papi", 0}, {"cachegrind", 1}, {NULL, 0}};

static int host_traffic_count(const tg_target *t, const char *source, const kn_kernel *k,
                              const kn_problem *pb, const char *src, const cm_machine *m,
                              const char *cache_dir, cm_traffic *tr, rt_err *err) {
  (void)t;
  ms_opts mo;
  ms_opts_default(&mo);
  mo.cache_dir = cache_dir;
  if (!strcmp(source, "papi")) return hw_count_papi(k, pb, src, &mo, tr, err);
  return hw_count_cachegrind(k, pb, src, m, cache_dir, tr, err);
}

const tg_backend hw_backend = {
  .name = "host",
  .summary = "the host CPU: C kernels compiled with the system compiler",
  .syntax = "host",
  .gpu = 0,
  .parse = host_parse,
  .list = host_list,
  .describe = host_describe,
  .family = hw_family,
  .test_fingerprint_env = "ROOFTUNE_TEST_HOST_FINGERPRINT",
  .compiler = host_compiler,
  .build_key = host_build_key,
  .prebuild = host_prebuild,
  .measure = host_measure,
  .counter_source = "papi",
  .counters_available = host_counters,
  .default_events = hw_papi_default_events,
  .bench = host_bench,
  .model_family = "cpu",
  .traffic = host_traffic,
  .traffic_source = host_traffic_source,
  .traffic_count = host_traffic_count,
  .limit_bindings = NULL,
  .kernels = hk_kernels,
};
