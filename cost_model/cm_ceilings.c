/*
** cm_ceilings.c -- a target's ceilings as data: the bench options'
** defaults, the sweep's working-set sizes (shared by every backend's
** bench), and the JSON text of cm_ceilings with its parser (what the
** database stores). The benches themselves are backend operations
** (tg_backend.bench, under targets/).
*/
#include "cm.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const level_names[CM_NLEVEL] = {"L1", "L2", "L3", "DRAM"};

void cm_bench_opts_default(cm_bench_opts *o) {
  o->time_per_point = 0.05;
  o->repeats = 5;
  o->threads = 0;
  o->quick = 0;
}

int cm_bench_begin(const cm_bench_opts *o, char *measured, size_t cap, rt_err *err) {
  if (!(o->time_per_point > 0) || o->repeats < 1) {
    rt_err_set(err, "time per point must be > 0 and repeats >= 1");
    return -1;
  }
  time_t wall = time(NULL);
  struct tm tm;
  gmtime_r(&wall, &tm);
  strftime(measured, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return 0;
}

void cm_sweep_insert(double *v, int *n, int cap, double x) {
  for (int i = 0; i < *n; i++)
    if (fabs(v[i] - x) <= 0.01 * x) return;
  if (*n >= cap) return;
  int i = *n;
  while (i > 0 && v[i - 1] > x) {
    v[i] = v[i - 1];
    i--;
  }
  v[i] = x;
  ++*n;
}

static json_t *jnum(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *jpair(const double v[2]) {
  json_t *a = json_array();
  json_array_append_new(a, jnum(v[0]));
  json_array_append_new(a, jnum(v[1]));
  return a;
}

/* The GPU's properties as JSON members (cm.h cm_gpu): one table for the
** writer and the parser. */
#define GPU_FIELD(f) {#f, offsetof(cm_gpu, f)}
static const struct { const char *name; size_t off; } gpu_fields[] = {
  GPU_FIELD(cc_major), GPU_FIELD(cc_minor), GPU_FIELD(sms), GPU_FIELD(warp),
  GPU_FIELD(max_threads_block), GPU_FIELD(max_threads_sm), GPU_FIELD(max_blocks_sm),
  GPU_FIELD(regs_block), GPU_FIELD(regs_sm), GPU_FIELD(smem_sm),
  GPU_FIELD(smem_block_optin), GPU_FIELD(l2_bytes), GPU_FIELD(clock_khz),
};
#define NGPU_FIELDS (sizeof gpu_fields / sizeof gpu_fields[0])

char *cm_ceilings_json(const cm_ceilings *c) {
  json_t *j = json_object(), *cls = json_array(), *bw = json_object(), *cache = json_object(),
         *sweep = json_array();
  json_object_set_new(j, "threads", json_integer(c->threads));
  json_object_set_new(j, "measured", json_string(c->measured));
  json_object_set_new(j, "seconds", jnum(c->seconds));
  for (int k = 0; k < c->nclass; k++) {
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(c->cls[k].name));
    json_object_set_new(o, "bits", json_integer(c->cls[k].bits));
    json_object_set_new(o, "fma", json_boolean(c->cls[k].fma));
    json_object_set_new(o, "flops", jpair(c->cls[k].flops));
    json_array_append_new(cls, o);
  }
  json_object_set_new(j, "classes", cls);
  json_object_set_new(j, "peak", jpair(c->peak));
  if (c->dram_copy[1] > 0) json_object_set_new(j, "dram_copy", jpair(c->dram_copy));
  for (int l = 0; l < CM_NLEVEL; l++) {
    json_object_set_new(bw, level_names[l], jpair(c->bw[l]));
    json_object_set_new(cache, level_names[l], jnum(c->cache[l]));
  }
  json_object_set_new(j, "bw", bw);
  json_object_set_new(j, "cache", cache);
  json_t *ways = json_object();
  for (int l = 0; l < 3; l++) json_object_set_new(ways, level_names[l], jnum(c->ways[l]));
  json_object_set_new(j, "ways", ways);
  for (int k = 0; k < c->nsweep; k++) {
    json_t *p = json_array();
    json_array_append_new(p, jnum(c->sweep[k].bytes));
    json_array_append_new(p, jnum(c->sweep[k].bw[0]));
    json_array_append_new(p, jnum(c->sweep[k].bw[1]));
    json_array_append_new(sweep, p);
  }
  json_object_set_new(j, "sweep", sweep);
  if (c->gpu.sms > 0) {
    json_t *g = json_object();
    for (size_t k = 0; k < NGPU_FIELDS; k++)
      json_object_set_new(g, gpu_fields[k].name,
                          json_integer(*(const int *)((const char *)&c->gpu + gpu_fields[k].off)));
    json_object_set_new(j, "gpu", g);
  }
  char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(j);
  return s;
}

/* A number (null reads as NaN) into *out; -1 with err naming field. */
static int get_num(json_t *v, const char *field, double *out, rt_err *err) {
  if (json_is_null(v)) {
    *out = NAN;
    return 0;
  }
  if (!json_is_number(v)) {
    rt_err_set(err, "%s: expected a number", field);
    return -1;
  }
  *out = json_number_value(v);
  return 0;
}

/* An array of exactly n numbers into out. */
static int get_nums(json_t *v, const char *field, int n, double *out, rt_err *err) {
  if (!json_is_array(v) || (int)json_array_size(v) != n) {
    rt_err_set(err, "%s: expected an array of %d numbers", field, n);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    char f[96];
    snprintf(f, sizeof f, "%s[%d]", field, i);
    if (get_num(json_array_get(v, (size_t)i), f, &out[i], err)) return -1;
  }
  return 0;
}

/* Field `key` of object o, or NULL with err "FIELD: missing". */
static json_t *need(json_t *o, const char *key, const char *field, rt_err *err) {
  json_t *v = json_object_get(o, key);
  if (!v) rt_err_set(err, "%s: missing", field);
  return v;
}

static int parse_class(json_t *o, int k, cm_class *cl, rt_err *err) {
  char f[64];
  json_t *v;
  if (!json_is_object(o)) {
    rt_err_set(err, "classes[%d]: expected an object", k);
    return -1;
  }
  snprintf(f, sizeof f, "classes[%d].name", k);
  if (!(v = need(o, "name", f, err))) return -1;
  if (!json_is_string(v) || json_string_length(v) >= sizeof cl->name || !json_string_length(v)) {
    rt_err_set(err, "%s: expected a string of 1 to %d characters", f, (int)sizeof cl->name - 1);
    return -1;
  }
  snprintf(cl->name, sizeof cl->name, "%s", json_string_value(v));
  snprintf(f, sizeof f, "classes[%d].bits", k);
  if (!(v = need(o, "bits", f, err))) return -1;
  if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 4096) {
    rt_err_set(err, "%s: expected an integer from 1 to 4096", f);
    return -1;
  }
  cl->bits = (int)json_integer_value(v);
  snprintf(f, sizeof f, "classes[%d].fma", k);
  if (!(v = need(o, "fma", f, err))) return -1;
  if (!json_is_boolean(v)) {
    rt_err_set(err, "%s: expected true or false", f);
    return -1;
  }
  cl->fma = json_is_true(v);
  snprintf(f, sizeof f, "classes[%d].flops", k);
  if (!(v = need(o, "flops", f, err))) return -1;
  return get_nums(v, f, 2, cl->flops, err);
}

static int parse_root(json_t *j, cm_ceilings *c, rt_err *err) {
  json_t *v;
  if (!json_is_object(j)) {
    rt_err_set(err, "expected a JSON object");
    return -1;
  }
  if (!(v = need(j, "threads", "threads", err))) return -1;
  if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 1 << 20) {
    rt_err_set(err, "threads: expected an integer >= 1");
    return -1;
  }
  c->threads = (int)json_integer_value(v);
  if (!(v = need(j, "measured", "measured", err))) return -1;
  if (!json_is_string(v) || json_string_length(v) >= sizeof c->measured) {
    rt_err_set(err, "measured: expected a date string of at most %d characters", (int)sizeof c->measured - 1);
    return -1;
  }
  snprintf(c->measured, sizeof c->measured, "%s", json_string_value(v));
  if (!(v = need(j, "seconds", "seconds", err)) || get_num(v, "seconds", &c->seconds, err)) return -1;
  if (!(v = need(j, "classes", "classes", err))) return -1;
  if (!json_is_array(v) || json_array_size(v) > CM_MAXCLASS) {
    rt_err_set(err, "classes: expected an array of at most %d classes", CM_MAXCLASS);
    return -1;
  }
  c->nclass = (int)json_array_size(v);
  for (int k = 0; k < c->nclass; k++)
    if (parse_class(json_array_get(v, (size_t)k), k, &c->cls[k], err)) return -1;
  if (!(v = need(j, "peak", "peak", err)) || get_nums(v, "peak", 2, c->peak, err)) return -1;
  if ((v = json_object_get(j, "dram_copy")) && get_nums(v, "dram_copy", 2, c->dram_copy, err))
    return -1;   /* optional: GPU ceilings only */
  json_t *bw = need(j, "bw", "bw", err), *cache = bw ? need(j, "cache", "cache", err) : NULL;
  if (!bw || !cache) return -1;
  if (!json_is_object(bw) || !json_is_object(cache)) {
    rt_err_set(err, "%s: expected an object with members L1, L2, L3, DRAM",
               json_is_object(bw) ? "cache" : "bw");
    return -1;
  }
  for (int l = 0; l < CM_NLEVEL; l++) {
    char f[32];
    snprintf(f, sizeof f, "bw.%s", level_names[l]);
    if (!(v = need(bw, level_names[l], f, err)) || get_nums(v, f, 2, c->bw[l], err)) return -1;
    snprintf(f, sizeof f, "cache.%s", level_names[l]);
    if (!(v = need(cache, level_names[l], f, err)) || get_num(v, f, &c->cache[l], err)) return -1;
  }
  /* ways: optional (ceilings stored before they were recorded: unknown) */
  json_t *ways = json_object_get(j, "ways");
  for (int l = 0; l < 3; l++) {
    json_t *x = json_is_object(ways) ? json_object_get(ways, level_names[l]) : NULL;
    c->ways[l] = json_is_number(x) ? json_number_value(x) : 0;
  }
  if (!(v = need(j, "sweep", "sweep", err))) return -1;
  if (!json_is_array(v) || json_array_size(v) > CM_MAXSWEEP) {
    rt_err_set(err, "sweep: expected an array of at most %d points", CM_MAXSWEEP);
    return -1;
  }
  c->nsweep = (int)json_array_size(v);
  for (int k = 0; k < c->nsweep; k++) {
    char f[32];
    double x[3];
    snprintf(f, sizeof f, "sweep[%d]", k);
    if (get_nums(json_array_get(v, (size_t)k), f, 3, x, err)) return -1;
    c->sweep[k] = (cm_sweep_pt){x[0], {x[1], x[2]}};
  }
  /* gpu: optional (a host's ceilings have none: zeros) */
  json_t *g = json_object_get(j, "gpu");
  if (g) {
    if (!json_is_object(g)) {
      rt_err_set(err, "gpu: expected an object");
      return -1;
    }
    for (size_t k = 0; k < NGPU_FIELDS; k++) {
      json_t *x = json_object_get(g, gpu_fields[k].name);
      if (!x) continue;
      if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > INT32_MAX) {
        rt_err_set(err, "gpu.%s: expected a non-negative integer", gpu_fields[k].name);
        return -1;
      }
      *(int *)((char *)&c->gpu + gpu_fields[k].off) = (int)json_integer_value(x);
    }
  }
  return 0;
}

int cm_ceilings_parse(const char *json, cm_ceilings *c, rt_err *err) {
  memset(c, 0, sizeof *c);
  json_error_t je;
  json_t *j = json_loads(json, 0, &je);
  if (!j) {
    rt_err_set(err, "ceilings: line %d column %d: %s", je.line, je.column, je.text);
    return -1;
  }
  int rc = parse_root(j, c, err);
  json_decref(j);
  if (rc) {
    rt_err_prefix(err, "ceilings");
    memset(c, 0, sizeof *c);
  }
  return rc;
}
