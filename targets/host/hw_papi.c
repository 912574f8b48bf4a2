/*
** hw_papi.c -- the host's hardware counters through PAPI (was
** measure/ms_counters.c): a one-time probe of whether this machine has any
** (a VM usually has none: "no counters" is a normal state, reported once
** with its reason), the default events, and the counting of one call of a
** function on machines that have counters. The probe shuts PAPI down
** again, so the calling process holds no PAPI state; the counting runs in
** a fresh worker child (hw_worker.c), which initialises the library
** itself.
*/
#include "hw.h"

#include "../../measure/ms.h"

#include <papi.h>
#include <stdio.h>
#include <string.h>

const char *const hw_papi_default_events[] = {
  "PAPI_TOT_CYC", "PAPI_TOT_INS", "PAPI_L1_DCM", "PAPI_L2_TCM", "PAPI_L3_TCM",
  "PAPI_SP_OPS", NULL,
};

/* PAPI_library_init, accepting an already initialised library. */
static int papi_init(char *why, size_t cap) {
  if (PAPI_is_initialized() != PAPI_NOT_INITED) return 0;
  int v = PAPI_library_init(PAPI_VER_CURRENT);
  if (v == PAPI_VER_CURRENT) return 0;
  if (v < 0) snprintf(why, cap, "PAPI_library_init: %s", PAPI_strerror(v));
  else snprintf(why, cap, "PAPI_library_init: version mismatch (%#x)", v);
  return -1;
}

/* The probe: counters exist when an enabled component reports some and
** an event set accepts PAPI_TOT_CYC. 1 available, 0 not (why filled). */
static int probe(char *why, size_t cap) {
  if (papi_init(why, cap)) return 0;
  int hw = 0, nc = PAPI_num_components();
  const char *reason = "";
  for (int c = 0; c < nc; c++) {
    const PAPI_component_info_t *ci = PAPI_get_component_info(c);
    if (!ci) continue;
    if (ci->disabled) {
      if (!strcmp(ci->name, "perf_event")) reason = ci->disabled_reason;
      continue;
    }
    int n = PAPI_num_cmp_hwctrs(c);
    if (n > 0) hw += n;
  }
  if (hw == 0) {
    snprintf(why, cap,
             "no hardware counters: PAPI reports 0 counters (virtual machine)%s%.200s",
             *reason ? "; perf_event: " : "", reason);
    PAPI_shutdown();
    return 0;
  }
  int es = PAPI_NULL, rc = PAPI_create_eventset(&es);
  if (rc == PAPI_OK) {
    rc = PAPI_add_named_event(es, "PAPI_TOT_CYC");
    PAPI_cleanup_eventset(es);
    PAPI_destroy_eventset(&es);
  }
  if (rc != PAPI_OK)
    snprintf(why, cap, "no usable counters: PAPI_TOT_CYC: %s (%d)",
             PAPI_strerror(rc), rc);
  PAPI_shutdown();
  return rc == PAPI_OK;
}

int hw_papi_available(const char **why) {
  static int probed, avail;
  static char reason[512];
  if (!probed) {
    avail = probe(reason, sizeof reason);
    probed = 1;
  }
  if (why) *why = avail ? "" : reason;
  return avail;
}

int hw_papi_count(char names[][MS_EVNAME], int nev, void (*fn)(void *ctx),
                      void *ctx, long long *vals, rt_err *err) {
  char why[256];
  if (papi_init(why, sizeof why)) {
    rt_err_set(err, "%s", why);
    return -1;
  }
  int es = PAPI_NULL, rc = PAPI_create_eventset(&es);
  if (rc != PAPI_OK) {
    rt_err_set(err, "PAPI_create_eventset: %s", PAPI_strerror(rc));
    return -1;
  }
  const char *what = "PAPI_add_named_event";
  for (int i = 0; i < nev && rc == PAPI_OK; i++) {
    rc = PAPI_add_named_event(es, names[i]);
    if (rc != PAPI_OK) what = names[i];
  }
  if (rc == PAPI_OK && (rc = PAPI_start(es)) != PAPI_OK) what = "PAPI_start";
  if (rc == PAPI_OK) {
    fn(ctx);
    if ((rc = PAPI_stop(es, vals)) != PAPI_OK) what = "PAPI_stop";
  }
  if (rc != PAPI_OK)
    rt_err_set(err, "%s: %s (%d)", what, PAPI_strerror(rc), rc);
  PAPI_cleanup_eventset(es);
  PAPI_destroy_eventset(&es);
  return rc == PAPI_OK ? 0 : -1;
}
