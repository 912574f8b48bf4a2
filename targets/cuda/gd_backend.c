/*
** gd_backend.c -- the CUDA row of the backend table: NVIDIA GPUs through
** the CUDA driver, one instance per device ("cuda:N"; "cuda" is cuda:0),
** CUDA C++ compiled with NVRTC, the worker that runs it on the device,
** CUPTI's range profiler for counters, the GPU ceilings bench, and the
** device limits its spaces bind (max_threads, max_smem, regs_block, sms).
*/
#include "gd.h"
#include "gk.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../cost_model/cm.h"
#include "../../measure/ms.h"

/* "cuda" is cuda:0; "cuda:N" with N in [0, 1024]. */
static int cuda_parse(const char *name, tg_target *t, rt_err *err) {
  if (strncmp(name, "cuda", 4) || (name[4] && name[4] != ':')) return 0;
  int dev = gd_target_device(name);
  if (dev < 0) {
    rt_err_set(err, "target '%s': expected cuda:N, N a device ordinal in [0, 1024]", name);
    return -1;
  }
  t->idx[0] = dev;
  snprintf(t->name, sizeof t->name, "cuda:%d", dev);
  return 1;
}

/* cuda:0 (describe says why when there is no device); the others are
** reached by name. */
static int cuda_list(tg_target *t, int max) {
  if (max < 1) return 0;
  memset(t, 0, sizeof *t);
  t->be = &gd_backend;
  snprintf(t->name, sizeof t->name, "cuda:0");
  return 1;
}

static int cuda_describe(const tg_target *t, tg_desc *d, rt_err *err) {
  return gd_describe(t->idx[0], d, err);
}

static const char *cuda_compiler(const tg_target *t, char *buf, size_t cap) {
  (void)t;
  return gd_nvrtc_version(buf, cap);
}

/* Kernels build with NVRTC for the device: no link flags, no cflags. */
static void cuda_build_key(const tg_target *t, const char *src, const char *ldflags,
                           const ms_opts *o, char key[33]) {
  (void)ldflags, (void)o;
  gd_build_key(t->idx[0], src, key);
}

static void cuda_prebuild(const tg_target *t, const char *const *srcs, int n,
                          const char *ldflags, const ms_opts *o, int jobs) {
  (void)ldflags;
  gd_prebuild(t->idx[0], srcs, n, o, jobs);
}

static int cuda_measure(const tg_target *t, ms_workload *w, const char *src,
                        const char *ldflags, const ms_opts *o, ms_result *r) {
  (void)ldflags;
  return gd_measure(t->idx[0], w, src, o, r);
}

static int cuda_measure_batch(const tg_target *t, ms_workload *w, const char *const *srcs, int n,
                              const ms_opts *o, ms_result *r, const volatile sig_atomic_t *stop,
                              rt_err *err) {
  return gd_measure_batch(t->idx[0], w, srcs, n, o, r, stop, err);
}

static int cuda_counters(const tg_target *t, const char **why) {
  (void)t;
  return gd_cupti_available(why);
}

/* A trial's CUPTI counts as the cost model reads them: bytes through the
** L2 and from DRAM (read + write), with every metric beside them. */
static char *cuda_counted_traffic(const tg_target *t, const ms_result *r) {
  (void)t;
  double v[3] = {NAN, 0, 0};
  int have[3] = {0, 0, 0};
  static const char *const names[3] = {"lts__t_bytes.sum", "dram__bytes_read.sum",
                                        "dram__bytes_write.sum"};
  for (int i = 0; i < r->nev; i++)
    for (int j = 0; j < 3; j++)
      if (!strcmp(r->ev_name[i], names[j])) v[j] = r->ev_val[i], have[j] = 1;
  json_t *j = json_object();
  if (have[0]) json_object_set_new(j, "L2", json_real(v[0]));
  if (have[1] && have[2]) json_object_set_new(j, "DRAM", json_real(v[1] + v[2]));
  json_t *all = json_object();
  for (int i = 0; i < r->nev; i++) json_object_set_new(all, r->ev_name[i], json_real(r->ev_val[i]));
  json_object_set_new(j, "metrics", all);
  char *data = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
  json_decref(j);
  return data;
}

static int cuda_bench(const tg_target *t, const cm_bench_opts *o, cm_ceilings *c, rt_err *err) {
  return gd_bench(t->idx[0], o, c, err);
}

/* The model's counted traffic on a GPU: CUPTI's counts of the trials,
** stored by tune --counters (read back, never counted here). */
static const char *cuda_traffic_source(const tg_target *t, int here, const char **why) {
  (void)t, (void)here, (void)why;
  return "cupti";
}

/* CUPTI counts on the device after an L2 flush (as the campaign measured). */
static const tg_traffic cuda_traffic[] = {{"cupti", 1}, {NULL, 0}};

static int cuda_limits(const tg_target *t, const char *user_set, rt_str *out, rt_err *err) {
  gd_props p;
  if (gd_props_get(t->idx[0], &p, err)) return -1;
  const struct { const char *var; int val; } lim[] = {
    {"max_threads", p.max_threads_block}, {"max_smem", p.smem_block_optin},
    {"regs_block", p.regs_block}, {"sms", p.sms},
  };
  for (size_t i = 0; i < sizeof lim / sizeof *lim; i++)
    if (!tg_binds(user_set, lim[i].var))
      rt_str_printf(out, "%s%s=%d", out->s && out->s[0] ? "," : "", lim[i].var, lim[i].val);
  return 0;
}

/* Family (tg_backend.h): the device's name; the architecture sm_XY of its
** compute capability X.Y. */
static void cuda_family(const tg_desc *d, tg_family *f) {
  int major, minor;
  snprintf(f->model, sizeof f->model, "%s", tg_desc_get(d, "device"));
  if (sscanf(tg_desc_get(d, "compute_capability"), "%d.%d", &major, &minor) == 2 && major >= 0 &&
      minor >= 0 && major < 100 && minor < 10)
    snprintf(f->arch, sizeof f->arch, "sm_%d%d", major, minor);
}

const tg_backend gd_backend = {
  .name = "cuda",
  .summary = "NVIDIA GPUs through the CUDA driver: CUDA C++ compiled with NVRTC",
  .syntax = "cuda:N",
  .gpu = 1,
  .parse = cuda_parse,
  .list = cuda_list,
  .describe = cuda_describe,
  .family = cuda_family,
  .test_fingerprint_env = NULL,
  .compiler = cuda_compiler,
  .build_key = cuda_build_key,
  .prebuild = cuda_prebuild,
  .measure = cuda_measure,
  .measure_batch = cuda_measure_batch,
  .counter_source = "cupti",
  .counters_available = cuda_counters,
  .default_events = gd_cupti_default_metrics,
  .counted_traffic = cuda_counted_traffic,
  .bench = cuda_bench,
  .model_family = "gpu",
  .traffic = cuda_traffic,
  .traffic_source = cuda_traffic_source,
  .traffic_count = NULL,
  .limit_bindings = cuda_limits,
  .kernels = gk_kernels,
  .model_setup = gd_model_setup,
  .gpu_reading = gd_nvml_reading,
};
