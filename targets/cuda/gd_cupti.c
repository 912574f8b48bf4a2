/*
** gd_cupti.c -- GPU hardware counters (moved from measure/ms_cupti.c) through CUPTI's range profiler
** (cupti_range_profiler.h + cupti_profiler_host.h; the older session API of
** cupti_profiler_target.h is deprecated in CUDA 13). libcupti.so.13 is
** loaded with gd_dlopen, never linked: a machine without it builds and runs,
** and says why there are no GPU counters.
**
** Two sides. The host side (gd_cupti_passes) needs no GPU: a profiler host
** object for a named chip, the metrics added, the config image and its
** number of replay passes. The device side (gd_cupti_count) runs in a worker
** child whose CUDA context is current (gd.h invariant 1): auto ranges (one
** range per kernel launch) with kernel replay (CUPTI replays each launch
** once per pass, saving and restoring device memory), decoded and evaluated
** range by range, then combined (gd_cupti_reduce). gd_cupti_available asks a
** forked child to open such a session on device 0, so the caller never
** initialises the driver.
**
** Every CUptiResult is checked and reported with the function's name; a
** session (profiler initialised, host object, range profiler object, three
** images) is torn down in reverse order on every path.
**
** cupti_profiler_host.h includes the C++ header <string> (and uses nothing
** of it): the Makefile puts targets/cuda/cupti_c, which holds an empty file of
** that name, on this object's include path.
*/
#include "gd.h"

#include "../../measure/ms.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cupti_activity.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>


const char *const gd_cupti_default_metrics[] = {
  "dram__bytes_read.sum",
  "dram__bytes_write.sum",
  "lts__t_bytes.sum",
  "l1tex__t_bytes.sum",
  "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
  "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
  "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
  "sm__warps_active.avg.pct_of_peak_sustained_active",
  NULL,
};

/* The weight of ratio metrics: each range's duration. */
#define WEIGHT_METRIC "gpu__time_duration.sum"
/* Ranges (kernel launches) one counted run may hold. */
#define MAX_RANGES 64

/* ---- libcupti ---- */

#define CUPTI_FNS(X)                                                                  \
  X(cuptiGetResultString) X(cuptiGetErrorMessage) X(cuptiGetDeviceId)                 \
  X(cuptiProfilerInitialize) X(cuptiProfilerDeInitialize) X(cuptiDeviceGetChipName)   \
  X(cuptiProfilerGetCounterAvailability) X(cuptiProfilerHostInitialize)               \
  X(cuptiProfilerHostDeinitialize) X(cuptiProfilerHostGetMetricProperties)            \
  X(cuptiProfilerHostConfigAddMetrics) X(cuptiProfilerHostGetConfigImageSize)         \
  X(cuptiProfilerHostGetConfigImage) X(cuptiProfilerHostGetNumOfPasses)               \
  X(cuptiProfilerHostEvaluateToGpuValues) X(cuptiRangeProfilerEnable)                 \
  X(cuptiRangeProfilerDisable) X(cuptiRangeProfilerGetCounterDataSize)                \
  X(cuptiRangeProfilerCounterDataImageInitialize) X(cuptiRangeProfilerSetConfig)      \
  X(cuptiRangeProfilerStart) X(cuptiRangeProfilerStop) X(cuptiRangeProfilerDecodeData) \
  X(cuptiRangeProfilerGetCounterDataInfo)

static struct {
#define CP_FIELD(name) __typeof__(&name) name;
  CUPTI_FNS(CP_FIELD)
#undef CP_FIELD
} cp;

/* libcupti dlopens libnvperf_host.so with RTLD_DEEPBIND, which the
** AddressSanitizer runtime refuses by aborting the process: a sanitized
** build has no CUPTI (and says so). */
#if defined(__SANITIZE_ADDRESS__)
#define NO_CUPTI_WHY "libcupti loads libnvperf with RTLD_DEEPBIND, which AddressSanitizer refuses"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_CUPTI_WHY "libcupti loads libnvperf with RTLD_DEEPBIND, which AddressSanitizer refuses"
#endif
#endif

/* Load libcupti.so.13 and every entry point, once. 0, or -1 with *why. */
static int cupti_load(const char **why) {
  static int state;              /* 0 not tried, 1 loaded, -1 failed */
  static char reason[512];
#ifdef NO_CUPTI_WHY
  if (state == 0) {
    snprintf(reason, sizeof reason, "%s", NO_CUPTI_WHY);
    state = -1;
  }
#endif
  if (state == 0) {
    static const char *const names[] = {"libcupti.so.13", "libcupti.so", NULL};
    const char *w = NULL;
    void *h = gd_dlopen(names, &w);
    state = 1;
    if (!h) {
      snprintf(reason, sizeof reason, "libcupti: %s", w ? w : "not found");
      state = -1;
    }
#define CP_LOAD(name)                                                          \
    if (state == 1) {                                                          \
      void *p = dlsym(h, #name);                                               \
      if (!p) {                                                                \
        snprintf(reason, sizeof reason, "libcupti lacks %s", #name);           \
        state = -1;                                                            \
      }                                                                        \
      memcpy(&cp.name, &p, sizeof p);                                          \
    }
    CUPTI_FNS(CP_LOAD)
#undef CP_LOAD
  }
  if (why) *why = state == 1 ? "" : reason;
  return state == 1 ? 0 : -1;
}

/* "fn: CUPTI_ERROR_X (message)" into err; returns -1. */
static int cupti_fail(rt_err *err, const char *fn, CUptiResult r) {
  const char *name = NULL, *msg = NULL;
  if (cp.cuptiGetResultString(r, &name) != CUPTI_SUCCESS) name = NULL;
  if (cp.cuptiGetErrorMessage(r, &msg) != CUPTI_SUCCESS) msg = NULL;
  if (!name) rt_err_set(err, "%s: CUPTI error %d", fn, (int)r);
  else if (msg && *msg && strcmp(msg, name))
    rt_err_set(err, "%s: %s (%s)", fn, name, msg);
  else rt_err_set(err, "%s: %s", fn, name);
  return -1;
}

/* Call a CUPTI entry point with its parameter block; on failure report it
** by name and jump to `fail`. */
#define CALL(fn, params)                                             \
  do {                                                               \
    CUptiResult r_ = cp.fn(params);                                  \
    if (r_ != CUPTI_SUCCESS) {                                       \
      cupti_fail(err, #fn, r_);                                      \
      goto fail;                                                     \
    }                                                                \
  } while (0)

/* A CUPTI parameter block: its size set, every other field zero (NULL). */
#define PARAMS(type, var) type var = {.structSize = type##_STRUCT_SIZE}

/* ---- the metric list ---- */

int gd_cupti_is_ratio(const char *name) {
  return strstr(name, ".pct") || strstr(name, ".ratio") || strstr(name, ".per_") ||
         strstr(name, "per_second") || strstr(name, ".peak_");
}

/* The names CUPTI is asked for: names[0..n-1], then the weight metric when
** a ratio is among them and the weight is not (*wi: its index, -1 none).
** list has room for GD_CUPTI_MAXM + 1. Returns the count, or -1 with err. */
static int metric_list(const char *const *names, int n, const char **list, int *wi,
                       rt_err *err) {
  if (n < 1 || n > GD_CUPTI_MAXM) {
    rt_err_set(err, "%d metrics asked for (1 to %d)", n, GD_CUPTI_MAXM);
    return -1;
  }
  int ratio = 0;
  *wi = -1;
  for (int i = 0; i < n; i++) {
    if (!names[i] || !*names[i]) {
      rt_err_set(err, "metric %d is empty", i + 1);
      return -1;
    }
    for (int j = 0; j < i; j++)
      if (!strcmp(names[i], names[j])) {
        rt_err_set(err, "metric \"%s\" is listed twice", names[i]);
        return -1;
      }
    list[i] = names[i];
    ratio |= gd_cupti_is_ratio(names[i]);
    if (!strcmp(names[i], WEIGHT_METRIC)) *wi = i;
  }
  if (ratio && *wi < 0) {
    list[n] = WEIGHT_METRIC;
    *wi = n++;
  }
  return n;
}

void gd_cupti_reduce(const char *const *names, int n, const double *v, const double *w,
                     int nr, double *out) {
  double wsum = 0;
  for (int r = 0; r < nr; r++) wsum += w ? w[r] : 0;
  for (int i = 0; i < n; i++) {
    int ratio = gd_cupti_is_ratio(names[i]);
    double s = 0;
    for (int r = 0; r < nr; r++) {
      double x = v[(size_t)r * (size_t)n + (size_t)i];
      s += ratio && wsum > 0 ? x * w[r] : x;
    }
    out[i] = !ratio ? s : nr == 0 ? 0 : wsum > 0 ? s / wsum : s / nr;
  }
}

/* ---- a profiling session and its teardown ---- */

typedef struct session {
  int prof_init;                        /* cuptiProfilerInitialize done */
  CUpti_Profiler_Host_Object *host;
  CUpti_RangeProfiler_Object *rp;
  int started;                          /* Start without its Stop */
  uint8_t *avail, *config, *data;
  size_t config_size, data_size;
  size_t passes;
  char chip[64];
} session;

/* Tear s down in reverse order. Results are checked and the first failure
** is reported into err when err is not NULL (the success path); on an error
** path pass NULL: the first error is the one that counts. -1 on failure. */
static int session_end(session *s, rt_err *err) {
  int rc = 0;
  CUptiResult r;
  if (s->started) {
    PARAMS(CUpti_RangeProfiler_Stop_Params, p);
    p.pRangeProfilerObject = s->rp;
    if ((r = cp.cuptiRangeProfilerStop(&p)) != CUPTI_SUCCESS && !rc)
      rc = err ? cupti_fail(err, "cuptiRangeProfilerStop", r) : -1;
    s->started = 0;
  }
  if (s->rp) {
    PARAMS(CUpti_RangeProfiler_Disable_Params, p);
    p.pRangeProfilerObject = s->rp;
    if ((r = cp.cuptiRangeProfilerDisable(&p)) != CUPTI_SUCCESS && !rc)
      rc = err ? cupti_fail(err, "cuptiRangeProfilerDisable", r) : -1;
    s->rp = NULL;
  }
  if (s->host) {
    PARAMS(CUpti_Profiler_Host_Deinitialize_Params, p);
    p.pHostObject = s->host;
    if ((r = cp.cuptiProfilerHostDeinitialize(&p)) != CUPTI_SUCCESS && !rc)
      rc = err ? cupti_fail(err, "cuptiProfilerHostDeinitialize", r) : -1;
    s->host = NULL;
  }
  if (s->prof_init) {
    PARAMS(CUpti_Profiler_DeInitialize_Params, p);
    if ((r = cp.cuptiProfilerDeInitialize(&p)) != CUPTI_SUCCESS && !rc)
      rc = err ? cupti_fail(err, "cuptiProfilerDeInitialize", r) : -1;
    s->prof_init = 0;
  }
  free(s->avail), free(s->config), free(s->data);
  s->avail = s->config = s->data = NULL;
  return rc;
}

/* The host side: a host object for s->chip (with the counter availability
** image s->avail, or none), metrics list[0..nm-1] checked one by one (an
** unknown one is named), added, the config image built and its passes
** counted. 0, or -1 with err (the caller ends the session). */
static int host_config(session *s, const char **list, int nm, rt_err *err) {
  PARAMS(CUpti_Profiler_Host_Initialize_Params, ip);
  ip.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  ip.pChipName = s->chip;
  ip.pCounterAvailabilityImage = s->avail;
  CUptiResult r = cp.cuptiProfilerHostInitialize(&ip);
  if (r != CUPTI_SUCCESS) {
    cupti_fail(err, "cuptiProfilerHostInitialize", r);
    rt_err_prefix(err, "chip \"%s\"", s->chip);
    return -1;
  }
  s->host = ip.pHostObject;
  for (int i = 0; i < nm; i++) {
    PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params, mp);
    mp.pHostObject = s->host;
    mp.pMetricName = list[i];
    if ((r = cp.cuptiProfilerHostGetMetricProperties(&mp)) != CUPTI_SUCCESS) {
      if (r == CUPTI_ERROR_INVALID_METRIC_NAME)
        rt_err_set(err, "unknown metric \"%s\" on %s", list[i], s->chip);
      else {
        cupti_fail(err, "cuptiProfilerHostGetMetricProperties", r);
        rt_err_prefix(err, "metric \"%s\"", list[i]);
      }
      return -1;
    }
  }
  PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params, ap);
  ap.pHostObject = s->host;
  ap.ppMetricNames = list;
  ap.numMetrics = (size_t)nm;
  CALL(cuptiProfilerHostConfigAddMetrics, &ap);
  PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params, sp);
  sp.pHostObject = s->host;
  CALL(cuptiProfilerHostGetConfigImageSize, &sp);
  if (sp.configImageSize == 0) {
    rt_err_set(err, "cuptiProfilerHostGetConfigImageSize: an empty config image");
    return -1;
  }
  s->config_size = sp.configImageSize;
  s->config = rt_malloc(s->config_size);
  PARAMS(CUpti_Profiler_Host_GetConfigImage_Params, gp);
  gp.pHostObject = s->host;
  gp.configImageSize = s->config_size;
  gp.pConfigImage = s->config;
  CALL(cuptiProfilerHostGetConfigImage, &gp);
  PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params, np);
  np.configImageSize = s->config_size;
  np.pConfigImage = s->config;
  CALL(cuptiProfilerHostGetNumOfPasses, &np);
  s->passes = np.numOfPasses;
  return 0;
fail:
  return -1;
}

int gd_cupti_passes(const char *chip, const char *const *names, int n, rt_err *err) {
  const char *why;
  if (cupti_load(&why)) {
    rt_err_set(err, "counters unavailable: %s", why);
    return -1;
  }
  const char *list[GD_CUPTI_MAXM + 1];
  int wi, nm = metric_list(names, n, list, &wi, err);
  if (nm < 0) return -1;
  session s = {0};
  snprintf(s.chip, sizeof s.chip, "%s", chip ? chip : "");
  if (host_config(&s, list, nm, err)) {
    session_end(&s, NULL);
    return -1;
  }
  int passes = (int)s.passes;
  if (session_end(&s, err)) return -1;
  return passes;
}

/* The device side up to an enabled range profiler on context cu: the
** profiler initialised, the chip of cu's device, its counter availability,
** the host side (host_config), the range profiler enabled. 0, or -1 with
** err (the caller ends the session). */
static int session_open(session *s, CUcontext cu, const char **list, int nm, rt_err *err) {
  PARAMS(CUpti_Profiler_Initialize_Params, ip);
  CALL(cuptiProfilerInitialize, &ip);
  s->prof_init = 1;
  uint32_t dev = 0;
  CUptiResult r = cp.cuptiGetDeviceId(cu, &dev);
  if (r != CUPTI_SUCCESS) return cupti_fail(err, "cuptiGetDeviceId", r);
  PARAMS(CUpti_Device_GetChipName_Params, cn);
  cn.deviceIndex = dev;
  CALL(cuptiDeviceGetChipName, &cn);
  snprintf(s->chip, sizeof s->chip, "%s", cn.pChipName ? cn.pChipName : "");
  PARAMS(CUpti_Profiler_GetCounterAvailability_Params, ca);
  ca.ctx = cu;
  CALL(cuptiProfilerGetCounterAvailability, &ca);          /* the size */
  if (ca.counterAvailabilityImageSize == 0) {
    rt_err_set(err, "cuptiProfilerGetCounterAvailability: an empty image");
    return -1;
  }
  s->avail = rt_malloc(ca.counterAvailabilityImageSize);
  ca.pCounterAvailabilityImage = s->avail;
  CALL(cuptiProfilerGetCounterAvailability, &ca);          /* the image */
  if (host_config(s, list, nm, err)) return -1;
  PARAMS(CUpti_RangeProfiler_Enable_Params, ep);
  ep.ctx = cu;
  CALL(cuptiRangeProfilerEnable, &ep);
  s->rp = ep.pRangeProfilerObject;
  return 0;
fail:
  return -1;
}

/* The current context (the worker child made it current through gd.c);
** NULL with err when there is none. */
static CUcontext current_context(rt_err *err) {
  CUcontext cu = NULL;
  if (!gd_cu.cuCtxGetCurrent) {
    rt_err_set(err, "the CUDA driver is not initialised in this process "
                    "(counting runs in the worker child, with its context current)");
    return NULL;
  }
  CUresult r = gd_cu.cuCtxGetCurrent(&cu);
  char b[256];
  if (r) rt_err_set(err, "cuCtxGetCurrent: %s", gd_errstr(r, b, sizeof b));
  else if (!cu) rt_err_set(err, "no CUDA context is current");
  return r ? NULL : cu;
}

/* gd_cupti_count after the checks: stage says which prefix a failure gets
** (0 setup: "counters unavailable", 1 counting). */
static int count(const char **list, int nm, int wi, void (*run)(void *ctx), void *ctx,
                 double *out, int *stage, rt_err *err) {
  session s = {0};
  double *v = NULL, *w = NULL;
  *stage = 0;
  CUcontext cu = current_context(err);
  if (!cu) return -1;
  if (session_open(&s, cu, list, nm, err)) goto fail;

  PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params, ds);
  ds.pRangeProfilerObject = s.rp;
  ds.pMetricNames = list;
  ds.numMetrics = (size_t)nm;
  ds.maxNumOfRanges = MAX_RANGES;
  ds.maxNumRangeTreeNodes = MAX_RANGES;
  CALL(cuptiRangeProfilerGetCounterDataSize, &ds);
  if (ds.counterDataSize == 0) {
    rt_err_set(err, "cuptiRangeProfilerGetCounterDataSize: an empty image");
    goto fail;
  }
  s.data_size = ds.counterDataSize;
  s.data = rt_calloc(1, s.data_size);
  PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params, di);
  di.pRangeProfilerObject = s.rp;
  di.counterDataSize = s.data_size;
  di.pCounterData = s.data;
  CALL(cuptiRangeProfilerCounterDataImageInitialize, &di);

  PARAMS(CUpti_RangeProfiler_SetConfig_Params, sc);
  sc.pRangeProfilerObject = s.rp;
  sc.configSize = s.config_size;
  sc.pConfig = s.config;
  sc.counterDataImageSize = s.data_size;
  sc.pCounterDataImage = s.data;
  sc.range = CUPTI_AutoRange;
  sc.replayMode = CUPTI_KernelReplay;
  sc.maxRangesPerPass = MAX_RANGES;
  sc.numNestingLevels = 1;                                 /* auto ranges: 1 */
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  CALL(cuptiRangeProfilerSetConfig, &sc);

  /* With kernel replay CUPTI replays each launch for every pass inside
  ** run(), so one Start/run/Stop normally submits all passes; the loop
  ** (as in NVIDIA's samples) is bounded by the pass count. */
  *stage = 1;
  for (size_t it = 0;; it++) {
    PARAMS(CUpti_RangeProfiler_Start_Params, st);
    st.pRangeProfilerObject = s.rp;
    CALL(cuptiRangeProfilerStart, &st);
    s.started = 1;
    run(ctx);
    CUresult cr = gd_cu.cuCtxSynchronize();
    if (cr) {
      char b[256];
      rt_err_set(err, "the profiled run failed: cuCtxSynchronize: %s", gd_errstr(cr, b, sizeof b));
      goto fail;
    }
    PARAMS(CUpti_RangeProfiler_Stop_Params, sp);
    sp.pRangeProfilerObject = s.rp;
    s.started = 0;
    CALL(cuptiRangeProfilerStop, &sp);
    if (sp.isAllPassSubmitted) break;
    if (it + 1 >= s.passes + 1) {
      rt_err_set(err, "cuptiRangeProfilerStop: passes still unsubmitted after %zu runs "
                      "(%zu passes)", it + 1, s.passes);
      goto fail;
    }
  }

  PARAMS(CUpti_RangeProfiler_DecodeData_Params, dd);
  dd.pRangeProfilerObject = s.rp;
  CALL(cuptiRangeProfilerDecodeData, &dd);
  if (dd.numOfRangeDropped) {
    rt_err_set(err, "%zu ranges dropped: the run launched more than %d kernels",
               dd.numOfRangeDropped, MAX_RANGES);
    goto fail;
  }
  PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params, ci);
  ci.pCounterDataImage = s.data;
  ci.counterDataImageSize = s.data_size;
  CALL(cuptiRangeProfilerGetCounterDataInfo, &ci);
  size_t nr = ci.numTotalRanges;
  if (nr == 0) {
    rt_err_set(err, "no range recorded: the run launched no kernel");
    goto fail;
  }
  if (nr > MAX_RANGES) {
    rt_err_set(err, "cuptiRangeProfilerGetCounterDataInfo: %zu ranges (at most %d)", nr,
               MAX_RANGES);
    goto fail;
  }
  v = rt_malloc(nr * (size_t)nm * sizeof *v);
  w = rt_malloc(nr * sizeof *w);
  for (size_t r = 0; r < nr; r++) {
    PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params, ev);
    ev.pHostObject = s.host;
    ev.pCounterDataImage = s.data;
    ev.counterDataImageSize = s.data_size;
    ev.rangeIndex = r;
    ev.ppMetricNames = list;
    ev.numMetrics = (size_t)nm;
    ev.pMetricValues = v + r * (size_t)nm;
    CALL(cuptiProfilerHostEvaluateToGpuValues, &ev);
    w[r] = wi >= 0 ? v[r * (size_t)nm + (size_t)wi] : 0;
  }
  gd_cupti_reduce(list, nm, v, wi >= 0 ? w : NULL, (int)nr, out);
  free(v), free(w);
  return session_end(&s, err);
fail:
  free(v), free(w);
  session_end(&s, NULL);
  return -1;
}

int gd_cupti_count(const char *const *names, int n, void (*run)(void *ctx), void *ctx,
                   double *vals, rt_err *err) {
  const char *why;
  if (cupti_load(&why)) {
    rt_err_set(err, "counters unavailable: %s", why);
    return -1;
  }
  const char *list[GD_CUPTI_MAXM + 1];
  double out[GD_CUPTI_MAXM + 1];
  int wi, stage, nm = metric_list(names, n, list, &wi, err);
  if (nm < 0) return -1;
  if (count(list, nm, wi, run, ctx, out, &stage, err)) {
    if (strncmp(err ? err->msg : "", "unknown metric", 14))
      rt_err_prefix(err, stage ? "CUPTI counting failed" : "counters unavailable");
    return -1;
  }
  memcpy(vals, out, (size_t)n * sizeof *vals);
  return 0;
}

/* ---- the probe, in a child ---- */

/* The child's side: a context on device 0 and a session with the default
** metrics opened and closed. 0 with chip filled, or -1 with err. */
static int probe_child(char *chip, size_t cap, rt_err *err) {
  CUcontext cu;
  if (gd_context(0, &cu, err)) return -1;
  const char *list[GD_CUPTI_MAXM + 1];
  int wi, n = 0;
  while (gd_cupti_default_metrics[n]) n++;
  int nm = metric_list(gd_cupti_default_metrics, n, list, &wi, err);
  if (nm < 0) return -1;
  session s = {0};
  if (session_open(&s, cu, list, nm, err)) {
    session_end(&s, NULL);
    return -1;
  }
  snprintf(chip, cap, "%s", s.chip);
  return session_end(&s, err);
}

int gd_cupti_available(const char **why) {
  static int probed, avail;
  static char reason[600];
  if (probed) {
    if (why) *why = avail ? "" : reason;
    return avail;
  }
  probed = 1;
  const char *w;
  if (cupti_load(&w)) {
    snprintf(reason, sizeof reason, "%s", w);
    if (why) *why = reason;
    return 0;
  }
  struct { int rc; char chip[64]; char msg[512]; } rep;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC)) {
    snprintf(reason, sizeof reason, "pipe: %s", strerror(errno));
    if (why) *why = reason;
    return 0;
  }
  int keep[1] = {fds[1]};
  pid_t pid = rt_fork(RT_CHILD_STDOUT_TO_STDERR, keep, 1);
  if (pid == 0) {
    rt_err e = {0};
    memset(&rep, 0, sizeof rep);
    rep.rc = probe_child(rep.chip, sizeof rep.chip, &e);
    snprintf(rep.msg, sizeof rep.msg, "%s", e.msg);
    ssize_t k = write(keep[0], &rep, sizeof rep);
    _exit(k == (ssize_t)sizeof rep ? 0 : 1);
  }
  close(fds[1]);
  int got = 0;
  if (pid > 0) {
    double t0 = rt_now();
    while (got < (int)sizeof rep) {
      int left = 60000 - (int)((rt_now() - t0) * 1000);
      struct pollfd pf = {.fd = fds[0], .events = POLLIN};
      int pr = left > 0 ? poll(&pf, 1, left) : 0;
      if (pr < 0 && errno == EINTR) continue;
      if (pr <= 0) break;
      ssize_t k = read(fds[0], (char *)&rep + got, sizeof rep - (size_t)got);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) break;
      got += (int)k;
    }
    if (got < (int)sizeof rep) rt_child_kill(pid);
    else rt_child_wait(pid, NULL, 0);
  }
  close(fds[0]);
  if (pid < 0) snprintf(reason, sizeof reason, "fork: %s", strerror(errno));
  else if (got < (int)sizeof rep)
    snprintf(reason, sizeof reason, "the CUPTI probe process died or hung");
  else if (rep.rc) snprintf(reason, sizeof reason, "%s", rep.msg);
  else avail = 1;
  if (why) *why = avail ? "" : reason;
  return avail;
}
