/*
** gd.c -- the CUDA libraries loaded at run time (gd.h): the dlopen search,
** the driver's entry points through cuGetProcAddress, the device's
** properties asked of a forked child (so the calling process never
** initialises the driver and can keep forking workers), the target
** description and fingerprint, NVRTC compilation to cubin, and cuBLAS SGEMM
** for the baseline.
*/
#include "gd.h"
#include <cudaTypedefs.h>

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

#include <cublas_api.h>
#include <nvrtc.h>

/* ---- dlopen ---- */

void *gd_dlopen(const char *const *names, const char **why) {
  static char msg[512];
  const char *home = getenv("CUDA_HOME");
  if (!home || !*home) home = "/usr/local/cuda";
  static const char *const dirs[] = {"", "lib64/", "extras/CUPTI/lib64/", "targets/x86_64-linux/lib/"};
  for (int i = 0; names[i]; i++)
    for (size_t d = 0; d < sizeof dirs / sizeof *dirs; d++) {
      char path[1024];
      if (d == 0) snprintf(path, sizeof path, "%s", names[i]);
      else snprintf(path, sizeof path, "%s/%s%s", home, dirs[d], names[i]);
      void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h) return h;
    }
  snprintf(msg, sizeof msg, "%s not found (loader path, %s/lib64, %s/extras/CUPTI/lib64)",
           names[0], home, home);
  if (why) *why = msg;
  return NULL;
}

/* ---- the driver ---- */

gd_driver gd_cu;
static int driver_ok;

const char *gd_errstr(CUresult r, char *buf, size_t cap) {
  const char *name = NULL, *text = NULL;
  if (gd_cu.cuGetErrorName) gd_cu.cuGetErrorName(r, &name);
  if (gd_cu.cuGetErrorString) gd_cu.cuGetErrorString(r, &text);
  snprintf(buf, cap, "%s: %s", name ? name : "CUDA error", text ? text : "(no description)");
  if (!name) snprintf(buf, cap, "CUDA error %d", (int)r);
  return buf;
}

/* The version asked of cuGetProcAddress for an entry point: CUDA_VERSION,
** but for those whose newest version up to it has another signature than
** the header's undecorated declaration, which __typeof__ gives gd_cu
** (cudaTypedefs.h PFN_<name>_v<N>): those at the declaration's version
** (gd.h invariant 2). Calling CUDA 13's cuCtxSynchronize (a CUcontext
** argument) through the void prototype passed whatever was in the first
** argument register: "context is destroyed", or a crash. */
static const struct { const char *name; int version; } abi_pin[] = {
    {"cuCtxSynchronize", 2000},
};
#if CUDA_VERSION >= 13000
_Static_assert(__builtin_types_compatible_p(__typeof__(&cuCtxSynchronize),
                                            PFN_cuCtxSynchronize_v2000),
               "cuCtxSynchronize: the header's declaration is not the v2000 ABI any more");
#endif

static int abi_version(const char *name) {
  for (size_t i = 0; i < sizeof abi_pin / sizeof abi_pin[0]; i++)
    if (!strcmp(abi_pin[i].name, name)) return abi_pin[i].version;
  return CUDA_VERSION;
}

int gd_driver_init(rt_err *err) {
  if (driver_ok) return 0;
  static const char *const names[] = {"libcuda.so.1", "libcuda.so", NULL};
  const char *why = NULL;
  void *h = gd_dlopen(names, &why);
  if (!h) {
    rt_err_set(err, "no CUDA driver: %s", why);
    return -1;
  }
  typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t,
                             CUdriverProcAddressQueryResult *);
  gpa_fn gpa = (gpa_fn)(uintptr_t)dlsym(h, "cuGetProcAddress_v2");
  if (!gpa) {
    rt_err_set(err, "CUDA driver too old: no cuGetProcAddress_v2 (need a CUDA %d.%d driver)",
               CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    return -1;
  }
#define GD_LOAD(name)                                                              \
  {                                                                                \
    void *p = NULL;                                                                \
    CUdriverProcAddressQueryResult q;                                              \
    int v = abi_version(#name);                                                    \
    if (gpa(#name, &p, v, CU_GET_PROC_ADDRESS_DEFAULT, &q) || !p) {                \
      rt_err_set(err, "CUDA driver lacks %s for CUDA %d (status %d)", #name, v,    \
                 (int)q);                                                          \
      return -1;                                                                   \
    }                                                                              \
    memcpy(&gd_cu.name, &p, sizeof p);                                             \
  }
  GD_DRIVER_FNS(GD_LOAD)
#undef GD_LOAD
  CUresult r = gd_cu.cuInit(0);
  if (r) {
    char b[256];
    rt_err_set(err, "cuInit: %s", gd_errstr(r, b, sizeof b));
    return -1;
  }
  driver_ok = 1;
  return 0;
}

int gd_context(int dev, CUcontext *ctx, rt_err *err) {
  if (gd_driver_init(err)) return -1;
  CUdevice d;
  int n = 0;
  char b[256];
  CUresult r = gd_cu.cuDeviceGetCount(&n);
  if (!r && dev >= n) {
    rt_err_set(err, "no CUDA device %d (%d present)", dev, n);
    return -1;
  }
  if (r || (r = gd_cu.cuDeviceGet(&d, dev)) || (r = gd_cu.cuDevicePrimaryCtxRetain(ctx, d)) ||
      (r = gd_cu.cuCtxSetCurrent(*ctx))) {
    rt_err_set(err, "CUDA context on device %d: %s", dev, gd_errstr(r, b, sizeof b));
    return -1;
  }
  return 0;
}

int gd_target_device(const char *target) {
  if (!strcmp(target, "cuda")) return 0;
  if (strncmp(target, "cuda:", 5) || !target[5]) return -1;
  char *end;
  long v = strtol(target + 5, &end, 10);
  return *end || v < 0 || v > 1024 ? -1 : (int)v;
}

/* ---- properties, from a child ---- */

static int child_props(int dev, gd_props *p, rt_err *err) {
  CUcontext ctx;
  if (gd_context(dev, &ctx, err)) return -1;
  CUdevice d;
  gd_cu.cuDeviceGet(&d, dev);
  memset(p, 0, sizeof *p);
  gd_cu.cuDeviceGetName(p->name, sizeof p->name, d);
  static const struct { CUdevice_attribute a; size_t off; } attrs[] = {
#define A(attr, field) {CU_DEVICE_ATTRIBUTE_##attr, offsetof(gd_props, field)}
    A(COMPUTE_CAPABILITY_MAJOR, cc_major), A(COMPUTE_CAPABILITY_MINOR, cc_minor),
    A(MULTIPROCESSOR_COUNT, sms), A(WARP_SIZE, warp), A(CLOCK_RATE, clock_khz),
    A(MEMORY_CLOCK_RATE, mem_clock_khz), A(GLOBAL_MEMORY_BUS_WIDTH, bus_bits),
    A(MAX_THREADS_PER_BLOCK, max_threads_block),
    A(MAX_THREADS_PER_MULTIPROCESSOR, max_threads_sm),
    A(MAX_BLOCKS_PER_MULTIPROCESSOR, max_blocks_sm),
    A(MAX_REGISTERS_PER_BLOCK, regs_block), A(MAX_REGISTERS_PER_MULTIPROCESSOR, regs_sm),
    A(MAX_SHARED_MEMORY_PER_BLOCK, smem_block),
    A(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, smem_block_optin),
    A(MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, smem_sm), A(L2_CACHE_SIZE, l2_bytes),
    A(MAX_BLOCK_DIM_X, max_block[0]), A(MAX_BLOCK_DIM_Y, max_block[1]),
    A(MAX_BLOCK_DIM_Z, max_block[2]), A(MAX_GRID_DIM_X, max_grid[0]),
    A(MAX_GRID_DIM_Y, max_grid[1]), A(MAX_GRID_DIM_Z, max_grid[2]),
#undef A
  };
  for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
    int v = 0;
    gd_cu.cuDeviceGetAttribute(&v, attrs[i].a, d);
    memcpy((char *)p + attrs[i].off, &v, sizeof v);
  }
  size_t mem = 0;
  gd_cu.cuDeviceTotalMem(&mem, d);
  p->mem_bytes = (double)mem;
  gd_cu.cuDriverGetVersion(&p->driver_version);
  if (gd_cu.cuDeviceGetPCIBusId(p->pci_bus_id, (int)sizeof p->pci_bus_id, d)) p->pci_bus_id[0] = 0;
  return 0;
}

static int read_full(int fd, void *buf, size_t n, double deadline) {
  size_t got = 0;
  while (got < n) {
    double left = deadline - rt_now();
    if (left <= 0) return -1;
    struct pollfd pf = {.fd = fd, .events = POLLIN};
    int pr = poll(&pf, 1, (int)(left * 1000) + 1);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) return -1;
    ssize_t k = read(fd, (char *)buf + got, n - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    got += (size_t)k;
  }
  return 0;
}

/* A child process (rt_fork: dies with rooftune, no descriptor but the
** pipe and stdio, stdout on stderr) with a pipe to its parent: in the
** parent (return > 0), *fd is the read end; in the child (return 0), the
** write end. -1 with err when pipe or fork failed. */
static pid_t spawn(int *fd, rt_err *err) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC)) {
    rt_err_set(err, "pipe: %s", strerror(errno));
    return -1;
  }
  int keep[1] = {fds[1]};
  pid_t pid = rt_fork(RT_CHILD_STDOUT_TO_STDERR, keep, 1);
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    rt_err_set(err, "fork: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    *fd = keep[0];
    return 0;
  }
  close(fds[1]);
  *fd = fds[0];
  return pid;
}

/* Close the read end, kill the child's group when bad (it hung or sent
** less than expected), reap it; its wait status. */
static int reap_child(pid_t pid, int fd, int bad) {
  close(fd);
  if (bad) return rt_child_kill(pid);
  int st = 0;
  rt_child_wait(pid, &st, 0);
  return st;
}

static double deadline_in(double seconds) { return rt_now() + seconds; }

int gd_props_get(int dev, gd_props *p, rt_err *err) {
  static gd_props cache[8];
  static int cached[8];
  if (dev >= 0 && dev < 8 && cached[dev]) {
    *p = cache[dev];
    return 0;
  }
  struct { int rc; gd_props p; char msg[512]; } rep;
  int fd;
  pid_t pid = spawn(&fd, err);
  if (pid < 0) return -1;
  if (pid == 0) {
    rt_err e = {0};
    memset(&rep, 0, sizeof rep);
    rep.rc = child_props(dev, &rep.p, &e);
    snprintf(rep.msg, sizeof rep.msg, "%s", e.msg);
    ssize_t w = write(fd, &rep, sizeof rep);
    _exit(w == (ssize_t)sizeof rep ? 0 : 1);
  }
  int bad = read_full(fd, &rep, sizeof rep, deadline_in(60)), st = reap_child(pid, fd, bad);
  if (bad) {
    rt_err_set(err, "CUDA device %d: the probe process died or hung (status %d)", dev, st);
    return -1;
  }
  if (rep.rc) {
    rt_err_set(err, "%s", rep.msg);
    return -1;
  }
  *p = rep.p;
  if (dev >= 0 && dev < 8) cache[dev] = rep.p, cached[dev] = 1;
  return 0;
}

int gd_describe(int dev, tg_desc *d, rt_err *err) {
  gd_props p;
  if (gd_props_get(dev, &p, err)) return -1;
  char nv[64];
  memset(d, 0, sizeof *d);
  tg_desc_add(d, "device", "%s", p.name);
  tg_desc_add(d, "compute_capability", "%d.%d", p.cc_major, p.cc_minor);
  tg_desc_add(d, "sms", "%d", p.sms);
  tg_desc_add(d, "warp", "%d", p.warp);
  tg_desc_add(d, "clock_mhz", "%d", p.clock_khz / 1000);
  tg_desc_add(d, "memory", "%.1f GiB, %d-bit bus, %d MHz", p.mem_bytes / 1073741824.0,
              p.bus_bits, p.mem_clock_khz / 1000);
  tg_desc_add(d, "l2", "%d KiB", p.l2_bytes / 1024);
  tg_desc_add(d, "smem", "%d KiB per SM, %d KiB per block (opt-in %d KiB)", p.smem_sm / 1024,
              p.smem_block / 1024, p.smem_block_optin / 1024);
  tg_desc_add(d, "registers", "%d per SM, %d per block", p.regs_sm, p.regs_block);
  tg_desc_add(d, "threads", "%d per block, %d per SM, %d blocks per SM", p.max_threads_block,
              p.max_threads_sm, p.max_blocks_sm);
  tg_desc_add(d, "driver", "%d.%d", p.driver_version / 1000, p.driver_version % 1000 / 10);
  tg_desc_add(d, "compiler", "%s", gd_nvrtc_version(nv, sizeof nv));
  return 0;
}

/* ---- NVRTC (in children only: see nv_run) ---- */

static struct {
  int tried, ok;
  const char *why;
  nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                        const char *const *);
  nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*cubin_size)(nvrtcProgram, size_t *);
  nvrtcResult (*cubin)(nvrtcProgram, char *);
  nvrtcResult (*log_size)(nvrtcProgram, size_t *);
  nvrtcResult (*log)(nvrtcProgram, char *);
  nvrtcResult (*destroy)(nvrtcProgram *);
  nvrtcResult (*version)(int *, int *);
  const char *(*errstr)(nvrtcResult);
  nvrtcResult (*add_name)(nvrtcProgram, const char *const);
  nvrtcResult (*lowered)(nvrtcProgram, const char *const, const char **);
} nv;

static int nvrtc_load(void) {
  if (nv.tried) return nv.ok;
  nv.tried = 1;
  static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
  void *h = gd_dlopen(names, &nv.why);
  if (!h) return 0;
  static const struct { const char *sym; size_t off; } syms[] = {
    {"nvrtcCreateProgram", offsetof(__typeof__(nv), create)},
    {"nvrtcCompileProgram", offsetof(__typeof__(nv), compile)},
    {"nvrtcGetCUBINSize", offsetof(__typeof__(nv), cubin_size)},
    {"nvrtcGetCUBIN", offsetof(__typeof__(nv), cubin)},
    {"nvrtcGetProgramLogSize", offsetof(__typeof__(nv), log_size)},
    {"nvrtcGetProgramLog", offsetof(__typeof__(nv), log)},
    {"nvrtcDestroyProgram", offsetof(__typeof__(nv), destroy)},
    {"nvrtcVersion", offsetof(__typeof__(nv), version)},
    {"nvrtcGetErrorString", offsetof(__typeof__(nv), errstr)},
    {"nvrtcAddNameExpression", offsetof(__typeof__(nv), add_name)},
    {"nvrtcGetLoweredName", offsetof(__typeof__(nv), lowered)},
  };
  for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
    void *p = dlsym(h, syms[i].sym);
    if (!p) {
      static char msg[128];
      snprintf(msg, sizeof msg, "NVRTC lacks %s", syms[i].sym);
      nv.why = msg;
      return 0;
    }
    memcpy((char *)&nv + syms[i].off, &p, sizeof p);
  }
  return nv.ok = 1;
}

/* NVRTC runs only in forked children: a process that loaded libnvrtc
** forks children whose cuInit fails (CUDA_ERROR_NOT_INITIALIZED, seen on
** the H200), and the harness forks its workers from the caller. A child
** does one NVRTC task and writes its answer to a pipe: an int status, then
** three length-prefixed byte strings (the cubin or the version, the log or
** the reason, the lowered names of the name expressions, one a line). */
typedef struct nv_answer {
  int status;                  /* 0 ok, 1 compile error, -1 NVRTC failed */
  char *a, *b, *c;             /* malloc'ed, NUL-terminated */
  size_t na, nb, nc;
} nv_answer;


__attribute__((noreturn)) static void send_answer3(int fd, int status, const void *a, size_t na,
                                                 const char *b, const char *c) {
  size_t nb = b ? strlen(b) : 0, nc = c ? strlen(c) : 0;
  if (rt_write_all(fd, &status, sizeof status) || rt_write_all(fd, &na, sizeof na) ||
      (na && rt_write_all(fd, a, na)) || rt_write_all(fd, &nb, sizeof nb) ||
      (nb && rt_write_all(fd, b, nb)) || rt_write_all(fd, &nc, sizeof nc) || (nc && rt_write_all(fd, c, nc)))
    _exit(1);
  _exit(0);
}

__attribute__((noreturn)) static void send_answer(int fd, int status, const void *a, size_t na,
                                                const char *b) {
  send_answer3(fd, status, a, na, b, NULL);
}

/* Read one length-prefixed string (at most 1 GiB). */
static int read_blob(int fd, char **p, size_t *n, double deadline) {
  if (read_full(fd, n, sizeof *n, deadline) || *n > ((size_t)1 << 30)) return -1;
  *p = rt_malloc(*n + 1);
  (*p)[*n] = 0;
  return *n ? read_full(fd, *p, *n, deadline) : 0;
}

typedef struct nv_task {
  int kind;                    /* 0 probe (version or why), 1 compile */
  const char *src, *extra;
  int maj, min;
  const char *const *exprs;    /* name expressions (nexpr) */
  int nexpr;
} nv_task;

/* Whether option word o sets the language standard. */
static int std_option(const char *o) { return !strncmp(o, "-std=", 5) || !strncmp(o, "--std=", 6); }

/* The option words of a compile: GD_NVRTC_OPTS (less its -std= when extra
** has one), the architecture, extra's words; into argv (at most max), the
** words in buf. Their count, or -1 when there are more than max. */
static int nv_options(const nv_task *t, char *buf, size_t cap, const char **argv, int max) {
  char *extra = rt_strdup(t->extra ? t->extra : ""), *save = NULL;
  int user_std = 0;
  for (char *w = strtok_r(extra, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
    user_std |= std_option(w);
  free(extra);
  snprintf(buf, cap, "%s --gpu-architecture=sm_%d%d %s", GD_NVRTC_OPTS, t->maj, t->min,
           t->extra ? t->extra : "");
  int argc = 0, fixed = 1;
  save = NULL;
  for (char *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
    if (!strncmp(w, "--gpu-architecture=", 19)) fixed = 0;   /* GD_NVRTC_OPTS came before it */
    if (fixed && user_std && std_option(w)) continue;
    if (argc == max) return -1;
    argv[argc++] = w;
  }
  return argc;
}

__attribute__((noreturn)) static void nv_child(int fd, const nv_task *t) {
  if (!nvrtc_load()) send_answer(fd, -1, NULL, 0, nv.why);
  if (t->kind == 0) {
    int maj = 0, min = 0;
    char v[64];
    nv.version(&maj, &min);
    snprintf(v, sizeof v, "nvrtc %d.%d", maj, min);
    send_answer(fd, 0, v, strlen(v), NULL);
  }
  size_t cap = strlen(GD_NVRTC_OPTS) + (t->extra ? strlen(t->extra) : 0) + 64;
  char *opts = rt_malloc(cap), msg[512];
  const char *argv[128];
  int argc = nv_options(t, opts, cap, argv, 128);
  if (argc < 0) send_answer(fd, 1, NULL, 0, "more than 128 NVRTC options");
  nvrtcProgram prog;
  nvrtcResult r = nv.create(&prog, t->src, "rooftune.cu", 0, NULL, NULL);
  if (r) {
    snprintf(msg, sizeof msg, "nvrtcCreateProgram: %s", nv.errstr(r));
    send_answer(fd, -1, NULL, 0, msg);
  }
  for (int i = 0; i < t->nexpr; i++)
    if ((r = nv.add_name(prog, t->exprs[i]))) {
      snprintf(msg, sizeof msg, "nvrtcAddNameExpression(\"%.200s\"): %s", t->exprs[i],
               nv.errstr(r));
      send_answer(fd, -1, NULL, 0, msg);
    }
  r = nv.compile(prog, argc, argv);
  size_t ls = 0;
  char *log = NULL;
  if (!nv.log_size(prog, &ls) && ls > 1) {
    log = rt_malloc(ls);
    if (nv.log(prog, log)) log[0] = 0;
  }
  if (r == NVRTC_ERROR_COMPILATION) {   /* the log, after the options it was compiled with */
    rt_str text = {0};
    rt_str_printf(&text, "nvrtc options:");
    for (int i = 0; i < argc; i++) rt_str_printf(&text, " %s", argv[i]);
    rt_str_printf(&text, "\n%s", log ? log : "");
    send_answer(fd, 1, NULL, 0, text.s);
  }
  if (r) {
    snprintf(msg, sizeof msg, "nvrtcCompileProgram: %s", nv.errstr(r));
    send_answer(fd, -1, NULL, 0, msg);
  }
  size_t n = 0;
  if ((r = nv.cubin_size(prog, &n)) || n == 0) {
    snprintf(msg, sizeof msg, "nvrtcGetCUBINSize: %s", r ? nv.errstr(r) : "empty cubin");
    send_answer(fd, -1, NULL, 0, msg);
  }
  char *img = rt_malloc(n);
  if ((r = nv.cubin(prog, img))) {
    snprintf(msg, sizeof msg, "nvrtcGetCUBIN: %s", nv.errstr(r));
    send_answer(fd, -1, NULL, 0, msg);
  }
  rt_str names = {0};
  for (int i = 0; i < t->nexpr; i++) {
    const char *low = NULL;
    if ((r = nv.lowered(prog, t->exprs[i], &low)) || !low || !*low || strchr(low, '\n')) {
      /* NVRTC compiled, but the expression names no kernel or variable */
      snprintf(msg, sizeof msg, "rooftune.cu: error: the name expression \"%.200s\" (an entry "
               "line) has no lowered name: %s\n%s", t->exprs[i], r ? nv.errstr(r) : "empty",
               log ? log : "");
      send_answer(fd, 1, NULL, 0, msg);
    }
    rt_str_printf(&names, "%s\n", low);
  }
  send_answer3(fd, 0, img, n, log, names.s);
}

/* Run task t in a child; 0 with *ans filled, -1 with err (the child died,
** hung for 10 minutes, or could not be forked). */
static int nv_run(const nv_task *t, nv_answer *ans, rt_err *err) {
  memset(ans, 0, sizeof *ans);
  int fd;
  pid_t pid = spawn(&fd, err);
  if (pid < 0) return -1;
  if (pid == 0) nv_child(fd, t);
  double deadline = deadline_in(600);
  int bad = read_full(fd, &ans->status, sizeof ans->status, deadline) ||
            read_blob(fd, &ans->a, &ans->na, deadline) ||
            read_blob(fd, &ans->b, &ans->nb, deadline) ||
            read_blob(fd, &ans->c, &ans->nc, deadline);
  int st = reap_child(pid, fd, bad);
  if (bad) {
    free(ans->a), free(ans->b), free(ans->c);
    rt_err_set(err, "NVRTC's process died or hung (wait status %d)", st);
    return -1;
  }
  return 0;
}

/* The probe's answer, asked once per process. */
static struct { int done, ok; char version[64], why[600]; } probe;

static void nv_probe(void) {
  if (probe.done) return;
  probe.done = 1;
  nv_answer a;
  rt_err err = {0};
  nv_task t = {.kind = 0};
  if (nv_run(&t, &a, &err)) {
    snprintf(probe.why, sizeof probe.why, "%s", err.msg);
    return;
  }
  probe.ok = a.status == 0;
  snprintf(probe.ok ? probe.version : probe.why, sizeof probe.why, "%s",
           probe.ok ? a.a : a.b);
  free(a.a), free(a.b), free(a.c);
}

int gd_nvrtc_available(const char **why) {
  nv_probe();
  if (!probe.ok && why) *why = probe.why;
  return probe.ok;
}

const char *gd_nvrtc_version(char *buf, size_t cap) {
  nv_probe();
  snprintf(buf, cap, "%s", probe.ok ? probe.version : "nvrtc unavailable");
  return buf;
}

int gd_nvrtc_compile_names(const char *src, int cc_major, int cc_minor, const char *extra,
                           const char *const *exprs, int nexpr, void **image, size_t *size,
                           char **lowered, rt_str *log, rt_err *err) {
  if (nexpr < 0 || nexpr > GD_MAXNAMES) {
    rt_err_set(err, "NVRTC: %d name expressions (at most %d)", nexpr, GD_MAXNAMES);
    return -1;
  }
  nv_task t = {.kind = 1, .src = src, .extra = extra, .maj = cc_major, .min = cc_minor,
               .exprs = exprs, .nexpr = nexpr};
  nv_answer a;
  if (nv_run(&t, &a, err)) return -1;
  if (log && a.nb) rt_str_printf(log, "%s", a.b);
  if (a.status < 0) rt_err_set(err, "NVRTC: %s", a.b);
  int got = 0;
  for (const char *p = a.c; a.status == 0 && p && *p && got <= nexpr; got++)
    p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
  if (a.status == 0 && got != nexpr) {
    rt_err_set(err, "NVRTC: %d lowered names for %d name expressions", got, nexpr);
    a.status = -1;
  }
  if (a.status == 0) {
    const char *p = a.c;
    for (int i = 0; i < nexpr; i++) {
      size_t len = strcspn(p, "\n");
      lowered[i] = rt_malloc(len + 1);
      memcpy(lowered[i], p, len);
      lowered[i][len] = 0;
      p += len + 1;
    }
    *image = a.a, *size = a.na;
    a.a = NULL;
  }
  free(a.a), free(a.b), free(a.c);
  return a.status;
}

int gd_nvrtc_compile(const char *src, int cc_major, int cc_minor, const char *extra,
                     void **image, size_t *size, rt_str *log, rt_err *err) {
  return gd_nvrtc_compile_names(src, cc_major, cc_minor, extra, NULL, 0, image, size, NULL, log,
                                err);
}

/* ---- cuBLAS ---- */

static struct {
  int tried;
  const char *why;
  cublasHandle_t h;
  cublasStatus_t (*create)(cublasHandle_t *);
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
  cublasStatus_t (*set_math)(cublasHandle_t, cublasMath_t);
  cublasStatus_t (*version)(cublasHandle_t, int *);
  cublasStatus_t (*sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                          const float *, const float *, int, const float *, int, const float *,
                          float *, int);
} cb;

static int cublas_load(rt_err *err) {
  if (cb.h) return 0;
  if (cb.tried) {
    rt_err_set(err, "cuBLAS unavailable: %s", cb.why);
    return -1;
  }
  cb.tried = 1;
  static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
  void *h = gd_dlopen(names, &cb.why);
  if (h) {
    void *p[5] = {dlsym(h, "cublasCreate_v2"), dlsym(h, "cublasSetStream_v2"),
                  dlsym(h, "cublasSetMathMode"), dlsym(h, "cublasGetVersion_v2"),
                  dlsym(h, "cublasSgemm_v2")};
    for (int i = 0; i < 5; i++)
      if (!p[i]) cb.why = "libcublas lacks an entry point", h = NULL;
    if (h) {
      memcpy(&cb.create, &p[0], sizeof p[0]);
      memcpy(&cb.set_stream, &p[1], sizeof p[0]);
      memcpy(&cb.set_math, &p[2], sizeof p[0]);
      memcpy(&cb.version, &p[3], sizeof p[0]);
      memcpy(&cb.sgemm, &p[4], sizeof p[0]);
      cublasStatus_t s = cb.create(&cb.h);
      if (s == CUBLAS_STATUS_SUCCESS) s = cb.set_math(cb.h, CUBLAS_PEDANTIC_MATH);
      if (s != CUBLAS_STATUS_SUCCESS) {
        static char msg[64];
        snprintf(msg, sizeof msg, "cublasCreate/SetMathMode: status %d", (int)s);
        cb.why = msg;
        cb.h = NULL;
      }
    }
  }
  if (!cb.h) {
    rt_err_set(err, "cuBLAS unavailable: %s", cb.why);
    return -1;
  }
  return 0;
}

int gd_cublas_sgemm(CUstream s, int M, int N, int K, CUdeviceptr A, CUdeviceptr B,
                    CUdeviceptr C, rt_err *err) {
  if (cublas_load(err)) return -1;
  cublasStatus_t st = cb.set_stream(cb.h, (cudaStream_t)s);
  const float one = 1.0f, zero = 0.0f;
  /* Row-major C = A*B is column-major C^T = B^T * A^T. */
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cb.sgemm(cb.h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, (const float *)(uintptr_t)B, N,
                  (const float *)(uintptr_t)A, K, &zero, (float *)(uintptr_t)C, N);
  if (st != CUBLAS_STATUS_SUCCESS) {
    rt_err_set(err, "cublasSgemm: status %d", (int)st);
    return -1;
  }
  return 0;
}

const char *gd_cublas_version(char *buf, size_t cap) {
  rt_err e = {0};
  int v = 0;
  if (cublas_load(&e) || cb.version(cb.h, &v)) snprintf(buf, cap, "cuBLAS unavailable");
  else snprintf(buf, cap, "cuBLAS %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
  return buf;
}
