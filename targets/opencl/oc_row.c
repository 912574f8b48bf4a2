/*
** oc_row.c -- the OpenCL row's operations of the target table (tg.h),
** taking the instance name ("opencl:P.D") where the backend's own
** functions take a platform and a device.
*/
#include "oc.h"

#include <stdio.h>
#include <string.h>

int oc_row_measure(ms_workload *w, const char *src, const char *instance, const ms_opts *o,
                   ms_result *r) {
  int plat, dev;
  if (oc_target_parse(instance, &plat, &dev)) {
    memset(r, 0, sizeof *r);
    r->status = MS_INVALID;
    snprintf(r->msg, sizeof r->msg, "'%.100s' is not an OpenCL target", instance);
    return -1;
  }
  return oc_measure(w, src, plat, dev, o, r);
}

void oc_row_build_key(const char *src, const char *instance, char key[33]) {
  int plat = 0, dev = 0;
  oc_props p;
  rt_err err = {0};
  memset(&p, 0, sizeof p);
  if (!oc_target_parse(instance, &plat, &dev)) oc_props_get(plat, dev, &p, &err);
  oc_build_key(src, &p, key);
}

const char *oc_row_compiler(const char *instance, char *buf, size_t cap) {
  int plat = 0, dev = 0;
  oc_props p;
  rt_err err = {0};
  if (oc_target_parse(instance, &plat, &dev) || oc_props_get(plat, dev, &p, &err)) {
    snprintf(buf, cap, "OpenCL unavailable: %s", err.msg);
    return buf;
  }
  return oc_compiler(&p, buf, cap);
}

int oc_row_bench(const char *instance, const cm_bench_opts *o, cm_ceilings *c, rt_err *err) {
  int plat, dev;
  if (oc_target_parse(instance, &plat, &dev)) {
    rt_err_set(err, "'%s' is not an OpenCL target", instance);
    return -1;
  }
  return oc_bench(plat, dev, o, c, err);
}

int oc_row_instances(char (*names)[32], int max) {
  oc_props p[OC_MAXDEV];
  rt_err err = {0};
  int n = oc_list(p, OC_MAXDEV, &err);
  int k = 0;
  for (int i = 0; i < n && k < max; i++) snprintf(names[k++], 32, "opencl:%d.%d", p[i].plat, p[i].dev);
  return k;
}
