/*
** gd_nvml.c -- the CUDA row's GPU reading for the load guard (ms.h
** "Load"): the SM clock, the clocks event (throttle) reasons and the
** cumulative thermal and power violation times of one GPU, through NVML
** (libnvidia-ml.so.1, loaded at run time with gd_dlopen, never linked).
** nvml.h is not needed: the few entry points are declared here with the
** signatures of NVIDIA's header, each looked up under a pinned versioned
** name (nvmlInit_v2, nvmlDeviceGetHandleByIndex_v2), as gd.c pins the
** driver's ABI. What the readings mean is decided in measure/ms_load.c
** (ms_load_gpu_between, ms_load_verdict), which tests feed injected
** readings; this file only reads.
**
** The device: NVML numbers GPUs in PCI order and ignores
** CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER, so cuda:N is found by the PCI
** bus id its driver gives (gd_props, asked of a child); only where that is
** unknown, by the N-th entry of CUDA_VISIBLE_DEVICES when set (an index,
** or a "GPU-..." UUID), else NVML index N (CUDA's default order, fastest
** first, is the PCI order on machines of one GPU model).
*/
#include "gd.h"

#include "../../measure/ms.h"
#include "../tg_backend.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_ret;                  /* nvmlReturn_t: 0 NVML_SUCCESS */
typedef struct nvml_dev_st *nvml_dev;  /* nvmlDevice_t */
typedef struct {
  unsigned long long reference_us, violation_ns;   /* nvmlViolationTime_t */
} nvml_violation;
enum { NVML_CLOCK_SM = 1, NVML_PERF_POLICY_POWER = 0, NVML_PERF_POLICY_THERMAL = 1 };

static struct {
  int tried, ok;
  char why[200];
  nvml_ret (*init)(void);
  nvml_ret (*by_index)(unsigned, nvml_dev *);
  nvml_ret (*by_uuid)(const char *, nvml_dev *);
  nvml_ret (*by_pci)(const char *, nvml_dev *);
  nvml_ret (*clock)(nvml_dev, int, unsigned *);
  nvml_ret (*reasons)(nvml_dev, unsigned long long *);
  nvml_ret (*violation)(nvml_dev, int, nvml_violation *);
  const char *(*error)(nvml_ret);
} nv;

/* Load NVML and initialise it, once. 0 or -1 (nv.why). */
static int nvml_load(void) {
  if (nv.tried) return nv.ok ? 0 : -1;
  nv.tried = 1;
  static const char *const names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so", NULL};
  const char *why = NULL;
  void *h = gd_dlopen(names, &why);
  if (!h) {
    snprintf(nv.why, sizeof nv.why, "no NVML: %s", why);
    return -1;
  }
  /* the event-reasons name is the current one (r535+), the throttle-reasons
  ** one the older drivers'; the same signature */
  const char *reasons = dlsym(h, "nvmlDeviceGetCurrentClocksEventReasons")
                            ? "nvmlDeviceGetCurrentClocksEventReasons"
                            : "nvmlDeviceGetCurrentClocksThrottleReasons";
  static const struct { const char *sym; size_t off; } syms[] = {
#define S(name, field) {name, offsetof(__typeof__(nv), field)}
    S("nvmlInit_v2", init), S("nvmlDeviceGetHandleByIndex_v2", by_index),
    S("nvmlDeviceGetHandleByUUID", by_uuid), S("nvmlDeviceGetHandleByPciBusId_v2", by_pci),
    S("nvmlDeviceGetClockInfo", clock),
    S(NULL, reasons), S("nvmlDeviceGetViolationStatus", violation), S("nvmlErrorString", error),
#undef S
  };
  for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
    const char *sym = syms[i].sym ? syms[i].sym : reasons;
    void *p = dlsym(h, sym);
    if (!p) {
      snprintf(nv.why, sizeof nv.why, "NVML lacks %s", sym);
      return -1;
    }
    memcpy((char *)&nv + syms[i].off, &p, sizeof p);
  }
  nvml_ret r = nv.init();
  if (r) {
    snprintf(nv.why, sizeof nv.why, "nvmlInit_v2: %s", nv.error(r));
    return -1;
  }
  nv.ok = 1;
  return 0;
}

/* The NVML handle of CUDA ordinal dev (the file's header). */
static nvml_ret device(int dev, nvml_dev *d) {
  gd_props p;
  rt_err e = {0};
  if (!gd_props_get(dev, &p, &e) && p.pci_bus_id[0]) return nv.by_pci(p.pci_bus_id, d);
  const char *vis = getenv("CUDA_VISIBLE_DEVICES");
  if (!vis || !*vis) return nv.by_index((unsigned)dev, d);
  char buf[256];
  snprintf(buf, sizeof buf, "%s", vis);
  char *save = NULL, *tok = strtok_r(buf, ",", &save);
  for (int i = 0; tok && i < dev; i++) tok = strtok_r(NULL, ",", &save);
  if (!tok) return 2;   /* NVML_ERROR_INVALID_ARGUMENT */
  while (*tok == ' ') tok++;
  if (!strncmp(tok, "GPU-", 4)) return nv.by_uuid(tok, d);
  return nv.by_index((unsigned)strtoul(tok, NULL, 10), d);
}

int gd_nvml_reading(void *ctx, ms_gpu_reading *r, rt_err *err) {
  const tg_target *t = ctx;
  memset(r, 0, sizeof *r);
  if (nvml_load()) {
    rt_err_set(err, "%s", nv.why);
    return -1;
  }
  nvml_dev d;
  nvml_ret e = device(t->idx[0], &d);
  if (e) {
    rt_err_set(err, "NVML: no device for %s: %s", t->name, nv.error(e));
    return -1;
  }
  if ((e = nv.clock(d, NVML_CLOCK_SM, &r->sm_mhz)) || (e = nv.reasons(d, &r->reasons))) {
    rt_err_set(err, "NVML: the clocks of %s: %s", t->name, nv.error(e));
    return -1;
  }
  nvml_violation v;   /* not every board gives these: unknown, not an error */
  r->thermal_ns = nv.violation(d, NVML_PERF_POLICY_THERMAL, &v) ? MS_GPU_UNKNOWN : v.violation_ns;
  r->power_ns = nv.violation(d, NVML_PERF_POLICY_POWER, &v) ? MS_GPU_UNKNOWN : v.violation_ns;
  return 0;
}
