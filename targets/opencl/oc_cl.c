/*
** oc_cl.c -- the OpenCL runtime as rooftune reaches it (oc.h): the ICD
** loader opened with dlopen, entry points typed by the headers, target
** names, the devices' properties asked of a child (invariant 1), the
** description, the compiler identity and build key, the
** device-limit bindings of the spaces, building a program, and the plan
** lines of generated source.
*/
#include "oc.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

oc_api oc_cl;

/* ---- the loader (children only) ---- */

int oc_load(rt_err *err) {
  static int done;
  if (done) return 0;
  static const char *const names[] = {"libOpenCL.so.1", "libOpenCL.so", NULL};
  void *h = NULL;
  for (int i = 0; names[i] && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    rt_err_set(err, "no OpenCL ICD loader (libOpenCL.so.1: %s; Debian: ocl-icd-libopencl1, "
               "and a platform such as pocl-opencl-icd)", dlerror());
    return -1;
  }
#define OC_LOAD(name)                                                              \
  if (!(*(void **)&oc_cl.name = dlsym(h, #name))) {                                \
    rt_err_set(err, "the OpenCL ICD loader lacks %s (an OpenCL 1.2 entry point)", #name); \
    return -1;                                                                     \
  }
  OC_FNS(OC_LOAD)
#undef OC_LOAD
  done = 1;
  return 0;
}

const char *oc_errname(cl_int e) {
  static const struct { cl_int e; const char *name; } t[] = {
    {CL_SUCCESS, "CL_SUCCESS"}, {CL_DEVICE_NOT_FOUND, "CL_DEVICE_NOT_FOUND"},
    {CL_DEVICE_NOT_AVAILABLE, "CL_DEVICE_NOT_AVAILABLE"},
    {CL_COMPILER_NOT_AVAILABLE, "CL_COMPILER_NOT_AVAILABLE"},
    {CL_MEM_OBJECT_ALLOCATION_FAILURE, "CL_MEM_OBJECT_ALLOCATION_FAILURE"},
    {CL_OUT_OF_RESOURCES, "CL_OUT_OF_RESOURCES"}, {CL_OUT_OF_HOST_MEMORY, "CL_OUT_OF_HOST_MEMORY"},
    {CL_PROFILING_INFO_NOT_AVAILABLE, "CL_PROFILING_INFO_NOT_AVAILABLE"},
    {CL_BUILD_PROGRAM_FAILURE, "CL_BUILD_PROGRAM_FAILURE"},
    {CL_INVALID_VALUE, "CL_INVALID_VALUE"}, {CL_INVALID_PLATFORM, "CL_INVALID_PLATFORM"},
    {CL_INVALID_DEVICE, "CL_INVALID_DEVICE"}, {CL_INVALID_BINARY, "CL_INVALID_BINARY"},
    {CL_INVALID_BUILD_OPTIONS, "CL_INVALID_BUILD_OPTIONS"},
    {CL_INVALID_PROGRAM_EXECUTABLE, "CL_INVALID_PROGRAM_EXECUTABLE"},
    {CL_INVALID_KERNEL_NAME, "CL_INVALID_KERNEL_NAME"},
    {CL_INVALID_ARG_INDEX, "CL_INVALID_ARG_INDEX"}, {CL_INVALID_ARG_SIZE, "CL_INVALID_ARG_SIZE"},
    {CL_INVALID_KERNEL_ARGS, "CL_INVALID_KERNEL_ARGS"},
    {CL_INVALID_WORK_DIMENSION, "CL_INVALID_WORK_DIMENSION"},
    {CL_INVALID_WORK_GROUP_SIZE, "CL_INVALID_WORK_GROUP_SIZE"},
    {CL_INVALID_WORK_ITEM_SIZE, "CL_INVALID_WORK_ITEM_SIZE"},
    {CL_INVALID_GLOBAL_WORK_SIZE, "CL_INVALID_GLOBAL_WORK_SIZE"},
    {CL_INVALID_BUFFER_SIZE, "CL_INVALID_BUFFER_SIZE"},
    {CL_INVALID_EVENT, "CL_INVALID_EVENT"}, {CL_INVALID_OPERATION, "CL_INVALID_OPERATION"},
    {CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"},
    {-1001, "CL_PLATFORM_NOT_FOUND_KHR"},
  };
  static char buf[64];
  for (size_t i = 0; i < sizeof t / sizeof *t; i++)
    if (t[i].e == e) {
      snprintf(buf, sizeof buf, "%s (%d)", t[i].name, (int)e);
      return buf;
    }
  snprintf(buf, sizeof buf, "OpenCL error %d", (int)e);
  return buf;
}

int oc_ids(int plat, int dev, cl_platform_id *pid, cl_device_id *did, rt_err *err) {
  if (oc_load(err)) return -1;
  cl_platform_id ps[OC_MAXDEV];
  cl_device_id ds[OC_MAXDEV];
  cl_uint np = 0, nd = 0;
  cl_int e = oc_cl.clGetPlatformIDs(OC_MAXDEV, ps, &np);
  if (e == -1001 || (e == CL_SUCCESS && np == 0)) {
    rt_err_set(err, "no OpenCL platform (the ICD loader lists none; Debian: pocl-opencl-icd)");
    return -1;
  }
  if (e) {
    rt_err_set(err, "clGetPlatformIDs: %s", oc_errname(e));
    return -1;
  }
  if (plat < 0 || (cl_uint)plat >= np) {
    rt_err_set(err, "opencl:%d.%d: no platform %d (there are %u; rooftune targets lists them)",
               plat, dev, plat, np);
    return -1;
  }
  e = oc_cl.clGetDeviceIDs(ps[plat], CL_DEVICE_TYPE_ALL, OC_MAXDEV, ds, &nd);
  if (e && e != CL_DEVICE_NOT_FOUND) {
    rt_err_set(err, "clGetDeviceIDs: %s", oc_errname(e));
    return -1;
  }
  if (e == CL_DEVICE_NOT_FOUND) nd = 0;
  if (dev < 0 || (cl_uint)dev >= nd) {
    rt_err_set(err, "opencl:%d.%d: platform %d has no device %d (it has %u)", plat, dev, plat,
               dev, nd);
    return -1;
  }
  if (pid) *pid = ps[plat];
  *did = ds[dev];
  return 0;
}

int oc_queue(cl_device_id did, cl_context *cx, cl_command_queue *q, rt_err *err) {
  cl_int e;
  *cx = oc_cl.clCreateContext(NULL, 1, &did, NULL, NULL, &e);
  if (!*cx) {
    rt_err_set(err, "clCreateContext: %s", oc_errname(e));
    return -1;
  }
  *q = oc_cl.clCreateCommandQueue(*cx, did, CL_QUEUE_PROFILING_ENABLE, &e);
  if (!*q) {
    rt_err_set(err, "clCreateCommandQueue (profiling): %s", oc_errname(e));
    return -1;
  }
  return 0;
}

const char *oc_build_options(const char *extra, char *buf, size_t cap) {
  snprintf(buf, cap, "%s%s%s", OC_BUILD_OPTS, extra && *extra ? " " : "", extra ? extra : "");
  return buf;
}

int oc_build_source(cl_context cx, cl_device_id did, const char *src, const char *extra,
                    cl_program *prog, rt_str *log, rt_err *err) {
  cl_int e;
  char opts[OC_MAXOPTS + 64];
  oc_build_options(extra, opts, sizeof opts);
  *prog = oc_cl.clCreateProgramWithSource(cx, 1, &src, NULL, &e);
  if (!*prog) {
    rt_err_set(err, "clCreateProgramWithSource: %s", oc_errname(e));
    return -1;
  }
  e = oc_cl.clBuildProgram(*prog, 1, &did, opts, NULL, NULL);
  if (e == CL_SUCCESS) return 0;
  size_t n = 0;
  char *text = NULL;
  if (!oc_cl.clGetProgramBuildInfo(*prog, did, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) && n) {
    text = rt_calloc(1, n + 1);
    if (oc_cl.clGetProgramBuildInfo(*prog, did, CL_PROGRAM_BUILD_LOG, n, text, NULL)) text[0] = 0;
  }
  rt_str_printf(log, "clBuildProgram (options %s): %s\n%s", opts, oc_errname(e),
                text ? text : "");
  free(text);
  if (e == CL_BUILD_PROGRAM_FAILURE || e == CL_INVALID_BUILD_OPTIONS) return 1;
  rt_err_set(err, "%.400s", log->s);
  return -1;
}

/* ---- target names ---- */

int oc_target_parse(const char *name, int *plat, int *dev) {
  if (!name || strncmp(name, "opencl", 6)) return -1;
  if (!name[6]) {
    *plat = *dev = 0;
    return 0;
  }
  const char *s = name + 6;
  if (*s++ != ':') return -1;
  int v[2];
  for (int k = 0; k < 2; k++) {
    if (*s < '0' || *s > '9') return -1;
    long x = 0;
    while (*s >= '0' && *s <= '9' && x < 1000) x = x * 10 + (*s++ - '0');
    if (x >= 1000) return -1;
    v[k] = (int)x;
    if (k == 0 && *s++ != '.') return -1;
  }
  if (*s) return -1;
  *plat = v[0], *dev = v[1];
  return 0;
}

/* ---- the devices, from a child ---- */

typedef struct list_rep {
  int rc, n;
  char msg[256];
  oc_props p[OC_MAXDEV];
} list_rep;

static void str_info(cl_device_id d, cl_device_info what, char *buf, size_t cap) {
  buf[0] = 0;
  if (oc_cl.clGetDeviceInfo(d, what, cap, buf, NULL)) snprintf(buf, cap, "?");
  buf[cap - 1] = 0;
}

static unsigned long long num_info(cl_device_id d, cl_device_info what, size_t size) {
  union { cl_uint u; cl_ulong l; size_t z; cl_device_type t; } v;
  memset(&v, 0, sizeof v);
  if (oc_cl.clGetDeviceInfo(d, what, size, &v, NULL)) return 0;
  return size == sizeof(cl_uint) ? v.u : size == sizeof(cl_ulong) ? v.l : v.z;
}

static void fill_props(cl_platform_id pl, cl_device_id d, oc_props *p) {
  oc_cl.clGetPlatformInfo(pl, CL_PLATFORM_NAME, sizeof p->platform, p->platform, NULL);
  oc_cl.clGetPlatformInfo(pl, CL_PLATFORM_VERSION, sizeof p->platform_version,
                          p->platform_version, NULL);
  p->platform[sizeof p->platform - 1] = p->platform_version[sizeof p->platform_version - 1] = 0;
  str_info(d, CL_DEVICE_NAME, p->device, sizeof p->device);
  str_info(d, CL_DEVICE_VENDOR, p->vendor, sizeof p->vendor);
  str_info(d, CL_DRIVER_VERSION, p->driver, sizeof p->driver);
  str_info(d, CL_DEVICE_VERSION, p->device_version, sizeof p->device_version);
  str_info(d, CL_DEVICE_OPENCL_C_VERSION, p->c_version, sizeof p->c_version);
  cl_device_type t = (cl_device_type)num_info(d, CL_DEVICE_TYPE, sizeof(cl_device_type));
  snprintf(p->type, sizeof p->type, "%s", t & CL_DEVICE_TYPE_GPU ? "gpu"
           : t & CL_DEVICE_TYPE_CPU ? "cpu" : t & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator"
           : "other");
  p->cus = (int)num_info(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl_uint));
  p->max_wg = (int)num_info(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size_t));
  size_t items[3] = {0, 0, 0};
  if (!oc_cl.clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof items, items, NULL))
    for (int i = 0; i < 3; i++) p->max_item[i] = (int)items[i];
  p->clock_mhz = (int)num_info(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(cl_uint));
  p->vec_float = (int)num_info(d, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, sizeof(cl_uint));
  p->native_vec_float = (int)num_info(d, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, sizeof(cl_uint));
  p->cacheline = (int)num_info(d, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, sizeof(cl_uint));
  p->local_mem = (double)num_info(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(cl_ulong));
  p->global_mem = (double)num_info(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(cl_ulong));
  p->global_cache = (double)num_info(d, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof(cl_ulong));
  p->max_alloc = (double)num_info(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(cl_ulong));
  p->const_mem = (double)num_info(d, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, sizeof(cl_ulong));
  p->local_is_global =
      num_info(d, CL_DEVICE_LOCAL_MEM_TYPE, sizeof(cl_device_local_mem_type)) == CL_GLOBAL;
  p->timer_ns = num_info(d, CL_DEVICE_PROFILING_TIMER_RESOLUTION, sizeof(size_t));
}

static void list_child(int fd, void *ctx) {
  (void)ctx;
  list_rep *r = rt_calloc(1, sizeof *r);
  rt_err err = {0};
  cl_platform_id ps[OC_MAXDEV];
  cl_uint np = 0;
  cl_int e;
  if (oc_load(&err)) {
    r->rc = -1;
    snprintf(r->msg, sizeof r->msg, "%.250s", err.msg);
  } else if ((e = oc_cl.clGetPlatformIDs(OC_MAXDEV, ps, &np)) == -1001 || (!e && !np)) {
    r->rc = -1;
    snprintf(r->msg, sizeof r->msg, "no OpenCL platform (the ICD loader lists none; Debian: "
             "pocl-opencl-icd)");
  } else if (e) {
    r->rc = -1;
    snprintf(r->msg, sizeof r->msg, "clGetPlatformIDs: %s", oc_errname(e));
  } else {
    for (cl_uint i = 0; i < np && i < OC_MAXDEV; i++) {
      cl_device_id ds[OC_MAXDEV];
      cl_uint nd = 0;
      if (oc_cl.clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, OC_MAXDEV, ds, &nd)) nd = 0;
      for (cl_uint j = 0; j < nd && j < OC_MAXDEV && r->n < OC_MAXDEV; j++) {
        oc_props *p = &r->p[r->n++];
        p->plat = (int)i, p->dev = (int)j;
        fill_props(ps[i], ds[j], p);
      }
    }
  }
  ssize_t k = write(fd, r, sizeof *r);
  _exit(k == (ssize_t)sizeof *r ? 0 : 1);
}

static list_rep cached;
static int have_list;   /* 1: cached holds the probe's answer */

static const list_rep *probe(rt_err *err) {
  if (have_list) return &cached;
  ms_child_end end;
  int rc = ms_run_child(list_child, NULL, 60.0, &cached, sizeof cached, &end);
  if (rc) {
    char why[256];
    rt_err_set(err, "OpenCL: the probe of the devices failed: %s",
               ms_child_why(&end, "probe", why, sizeof why));
    memset(&cached, 0, sizeof cached);
    return NULL;
  }
  have_list = 1;
  return &cached;
}

int oc_list(oc_props *p, int max, rt_err *err) {
  const list_rep *r = probe(err);
  if (!r) return -1;
  if (r->rc) {
    rt_err_set(err, "%s", r->msg);
    return -1;
  }
  int n = r->n < max ? r->n : max;
  memcpy(p, r->p, (size_t)n * sizeof *p);
  return n;
}

int oc_available(const char **why) {
  static char msg[300];
  rt_err err = {0};
  const list_rep *r = probe(&err);
  if (!r || r->rc || !r->n) {
    snprintf(msg, sizeof msg, "%.290s", !r ? err.msg : r->rc ? r->msg : "no OpenCL device");
    if (why) *why = msg;
    return 0;
  }
  if (why) *why = "";
  return 1;
}

int oc_props_get(int plat, int dev, oc_props *p, rt_err *err) {
  const list_rep *r = probe(err);
  if (!r) return -1;
  if (r->rc) {
    rt_err_set(err, "%s", r->msg);   /* the caller names the target, as for CUDA */
    return -1;
  }
  for (int i = 0; i < r->n; i++)
    if (r->p[i].plat == plat && r->p[i].dev == dev) {
      *p = r->p[i];
      return 0;
    }
  rt_err_set(err, "no OpenCL device %d on platform %d here (rooftune targets lists the OpenCL "
             "devices)", dev, plat);
  return -1;
}

const char *oc_compiler(const oc_props *p, char *buf, size_t cap) {
  snprintf(buf, cap, "%s %s / driver %s", p->platform, p->platform_version, p->driver);
  return buf;
}

void oc_build_key(const char *src, const oc_props *p, char key[33]) {
  char head[1024], comp[512];
  snprintf(head, sizeof head, "opencl|%s|%s|%s|", oc_compiler(p, comp, sizeof comp), p->device,
           OC_BUILD_OPTS);
  rt_hash h = rt_hash_bytes(RT_HASH_INIT, head, strlen(head));
  rt_hash_hex(rt_hash_bytes(h, src, strlen(src)), key);
}

static const char *bytes_text(double b, char *buf, size_t cap) {
  if (b >= 1073741824.0) snprintf(buf, cap, "%.1f GiB", b / 1073741824.0);
  else if (b >= 1048576.0) snprintf(buf, cap, "%.1f MiB", b / 1048576.0);
  else snprintf(buf, cap, "%.0f KiB", b / 1024.0);
  return buf;
}

int oc_describe(int plat, int dev, tg_desc *d, rt_err *err) {
  oc_props p;
  if (oc_props_get(plat, dev, &p, err)) return -1;
  char b1[32], b2[32], comp[512];
  memset(d, 0, sizeof *d);
  /* What makes timings comparable (the table hashes every pair): the
  ** device, its size and clock, its memory, and the platform and driver
  ** that compile for it. */
  tg_desc_add(d, "device", "%s", p.device);
  tg_desc_add(d, "platform", "%s", p.platform);
  tg_desc_add(d, "platform_version", "%s", p.platform_version);
  tg_desc_add(d, "vendor", "%s", p.vendor);
  tg_desc_add(d, "type", "%s", p.type);
  tg_desc_add(d, "driver", "%s", p.driver);
  tg_desc_add(d, "device_version", "%s", p.device_version);
  tg_desc_add(d, "opencl_c", "%s", p.c_version);
  tg_desc_add(d, "compute_units", "%d", p.cus);
  tg_desc_add(d, "clock_mhz", "%d", p.clock_mhz);
  tg_desc_add(d, "max_work_group", "%d (items %d x %d x %d)", p.max_wg, p.max_item[0],
              p.max_item[1], p.max_item[2]);
  tg_desc_add(d, "local_memory", "%s%s", bytes_text(p.local_mem, b1, sizeof b1),
              p.local_is_global ? " (in global memory)" : "");
  /* A CPU device's global memory is the host's, and its size is what the
  ** implementation grants this process (PoCL: physical memory capped by
  ** RLIMIT_DATA and POCL_MEMORY_LIMIT; `ulimit -d` changed it here, and it
  ** differed between two processes on the GPU machine), not a property of
  ** the device: left out, or the fingerprint would change from one
  ** process to the next. */
  if (strcmp(p.type, "cpu"))
    tg_desc_add(d, "global_memory", "%s, max allocation %s", bytes_text(p.global_mem, b1, sizeof b1),
                bytes_text(p.max_alloc, b2, sizeof b2));
  tg_desc_add(d, "global_cache", "%s, %d-byte lines", bytes_text(p.global_cache, b1, sizeof b1),
              p.cacheline);
  tg_desc_add(d, "vector_float", "preferred %d, native %d", p.vec_float, p.native_vec_float);
  tg_desc_add(d, "timer_ns", "%llu", p.timer_ns);
  tg_desc_add(d, "compiler", "%s", oc_compiler(&p, comp, sizeof comp));
  return 0;
}

int oc_limit_bindings(int plat, int dev, const char *user_set, rt_str *out, rt_err *err) {
  oc_props p;
  if (oc_props_get(plat, dev, &p, err)) return -1;
  const struct { const char *var; long long val; } lim[] = {
    {"max_wg", p.max_wg}, {"max_local", (long long)p.local_mem}, {"cus", p.cus},
  };
  for (size_t i = 0; i < sizeof lim / sizeof *lim; i++)
    if (!tg_binds(user_set, lim[i].var))
      rt_str_printf(out, "%s%s=%lld", out->s && out->s[0] ? "," : "", lim[i].var, lim[i].val);
  return 0;
}

/* ---- plans ---- */

/* An argument word: bN, sN, lN (N < nbuf) or ws. 0, or -1. */
static int plan_arg(const char *a, int nbuf, int *idx, unsigned char *how) {
  if (!strcmp(a, "ws")) {
    *idx = OC_WS, *how = OC_ARG_BUF;
    return 0;
  }
  static const char kinds[] = "bsl";   /* in oc_arg_kind order */
  const char *k = a[0] ? strchr(kinds, a[0]) : NULL;
  if (!k || a[1] < '0' || a[1] > '9' || (a[1] == '0' && a[2])) return -1;
  char *end = NULL;
  long v = strtol(a + 1, &end, 10);
  if (*end || v >= nbuf) return -1;
  *idx = (int)v, *how = (unsigned char)(k - kinds);
  return 0;
}

int oc_plan_parse(const char *src, int nbuf, oc_plan *p, rt_err *err) {
  memset(p, 0, sizeof *p);
  int line = 1, nopts = 0;
  for (const char *s = src; *s; line++) {
    const char *eol = strchr(s, '\n');
    size_t len = eol ? (size_t)(eol - s) : strlen(s);
    if (len > 6 && !strncmp(s, "//@oc ", 6)) {
      char text[OC_MAXOPTS + 64], *save = NULL;
      if (len - 6 >= sizeof text) {
        rt_err_set(err, "plan line %d: longer than %zu characters", line, sizeof text - 1);
        return -1;
      }
      snprintf(text, sizeof text, "%.*s", (int)(len - 6), s + 6);
      char *w = strtok_r(text, " \t\r", &save);
      if (w && !strcmp(w, "options")) {
        for (char *o; (o = strtok_r(NULL, " \t\r", &save));) {
          size_t at = strlen(p->options);
          if (at + strlen(o) + 2 > sizeof p->options) nopts = 2;
          else snprintf(p->options + at, sizeof p->options - at, "%s%s", at ? " " : "", o);
        }
        if (nopts++ || !p->options[0]) {
          rt_err_set(err, "plan line %d: expected one '//@oc options OPT...' (at least one "
                     "option, at most %d characters)", line, OC_MAXOPTS - 1);
          return -1;
        }
      } else if (w && !strcmp(w, "workspace")) {
        char *v = strtok_r(NULL, " \t\r", &save), *end = NULL;
        long long b = v ? strtoll(v, &end, 10) : -1;
        if (!v || *end || b < 1 || b > ((long long)1 << 40) || p->workspace ||
            strtok_r(NULL, " \t\r", &save)) {
          rt_err_set(err, "plan line %d: expected '//@oc workspace BYTES' (one, 1..2^40)", line);
          return -1;
        }
        p->workspace = (size_t)b;
      } else if (w && !strcmp(w, "launch")) {
        if (p->nsteps == OC_MAXSTEP) {
          rt_err_set(err, "plan line %d: more than %d launches", line, OC_MAXSTEP);
          return -1;
        }
        oc_step *st = &p->step[p->nsteps];
        char *name = strtok_r(NULL, " \t\r", &save);
        size_t *dims[6] = {&st->global[0], &st->global[1], &st->global[2],
                           &st->local[0], &st->local[1], &st->local[2]};
        int ok = name && strlen(name) < sizeof st->name;
        for (int i = 0; i < 6 && ok; i++) {
          char *v = strtok_r(NULL, " \t\r", &save), *end = NULL;
          long long x = v ? strtoll(v, &end, 10) : 0;
          ok = v && !*end && x >= 1 && x <= ((long long)1 << 40);
          if (ok) *dims[i] = (size_t)x;
        }
        for (int d = 0; d < 3 && ok; d++) ok = st->global[d] % st->local[d] == 0;
        for (char *a; ok && (a = strtok_r(NULL, " \t\r", &save));) {
          ok = st->nargs < OC_MAXARG && !plan_arg(a, nbuf, &st->arg[st->nargs], &st->how[st->nargs]);
          st->nargs += ok;
        }
        if (!ok) {
          rt_err_set(err, "plan line %d: expected '//@oc launch NAME GX GY GZ LX LY LZ ARG...' "
                     "(sizes 1..2^40, each global a multiple of its local, ARG bN, sN or lN with "
                     "N < %d, or ws; at most %d)", line, nbuf, OC_MAXARG);
          return -1;
        }
        snprintf(st->name, sizeof st->name, "%s", name);
        p->nsteps++;
      } else {
        rt_err_set(err, "plan line %d: unknown plan line (expected options, workspace or launch)",
                   line);
        return -1;
      }
    }
    s += len + (eol != NULL);
  }
  for (int i = 0; i < p->nsteps; i++)
    for (int a = 0; a < p->step[i].nargs; a++)
      if (p->step[i].arg[a] == OC_WS && !p->workspace) {
        rt_err_set(err, "plan: launch %s uses ws, but no workspace line gives its size",
                   p->step[i].name);
        return -1;
      }
  if (!p->nsteps) {
    rt_err_set(err, "plan: no '//@oc launch' line (the source launches nothing)");
    return -1;
  }
  return 0;
}

int oc_plan_check(const oc_plan *p, const kn_buf *b, int nbuf, rt_err *err) {
  static const struct { char letter; kn_kind kind; const char *what; } need[] = {
    [OC_ARG_BUF] = {'b', KN_VECTOR, "a vector"},
    [OC_ARG_VALUE] = {'s', KN_SCALAR, "a scalar"},
    [OC_ARG_LOCAL] = {'l', KN_LOCAL, "local memory"},
  };
  for (int i = 0; i < p->nsteps; i++)
    for (int a = 0; a < p->step[i].nargs; a++) {
      int n = p->step[i].arg[a], h = p->step[i].how[a];
      if (n == OC_WS) continue;
      if (n < 0 || n >= nbuf || b[n].kind != need[h].kind) {
        rt_err_set(err, "plan: launch %s, argument %d: %c%d names %s%s, which is not %s",
                   p->step[i].name, a + 1, need[h].letter, n, n < 0 || n >= nbuf ? "no buffer" :
                   "buffer ", n < 0 || n >= nbuf ? "" : b[n].name, need[h].what);
        return -1;
      }
    }
  return 0;
}
