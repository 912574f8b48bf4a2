/*
** gd.h -- the CUDA libraries as rooftune reaches them: loaded at run time
** with dlopen, never linked. The driver (libcuda.so.1), NVRTC
** (libnvrtc.so.13), cuBLAS (libcublas.so.13) and CUPTI (libcupti.so.13)
** are looked up on the loader's path, then under $CUDA_HOME (default
** /usr/local/cuda) lib64/ and extras/CUPTI/lib64/. A machine without them
** still builds and runs rooftune; the cuda target is then absent, with the
** reason.
**
** Invariants:
**  1. The driver is initialised (gd_driver_init) only inside a worker
**     child: a process that called cuInit cannot fork children that use
**     CUDA, and a faulting kernel poisons its context. The parent learns
**     the device's description through gd_describe, which asks a child.
**  2. Driver entry points come from cuGetProcAddress for the CUDA_VERSION
**     of the headers built against, so the versioned symbols (_v2, _v3)
**     are the ones the headers mean; an entry point whose newer version
**     changed its signature without a header #define (CUDA 13's
**     cuCtxSynchronize) is asked for at its declaration's version (gd.c).
**  3. NVRTC needs no GPU: code generators' output compiles on any machine
**     with the toolkit (tests do this).
*/
#ifndef GD_H
#define GD_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "../../common/rt.h"
#include "../kn.h"
#include "../tg_backend.h"

/* ---- The driver (in a worker child only: invariant 1) ---- */
#define GD_DRIVER_FNS(X) \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGet) X(cuDeviceGetCount) \
  X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDeviceGetPCIBusId) \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSynchronize) \
  X(cuCtxSetCurrent) X(cuCtxGetCurrent) \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuModuleGetGlobal) \
  X(cuFuncSetAttribute) X(cuFuncGetAttribute) X(cuLaunchKernel) \
  X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) \
  X(cuMemcpyDtoD) X(cuMemsetD32) X(cuMemsetD32Async) X(cuMemsetD8Async) \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) \
  X(cuEventSynchronize) X(cuEventElapsedTime) \
  X(cuGetErrorName) X(cuGetErrorString) X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

typedef struct gd_driver {
#define GD_FIELD(name) __typeof__(&name) name;
  GD_DRIVER_FNS(GD_FIELD)
#undef GD_FIELD
} gd_driver;
extern gd_driver gd_cu;   /* filled by gd_driver_init */

/* Load libcuda.so.1, fill gd_cu, cuInit(0). 0, or -1 with err (no
** driver, no device, an entry point missing). Idempotent. */
int gd_driver_init(rt_err *err);
/* "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access ..." into buf. */
const char *gd_errstr(CUresult r, char *buf, size_t cap);
/* Create a context on device ordinal dev and make it current. */
int gd_context(int dev, CUcontext *ctx, rt_err *err);

/* ---- The device's description (asked of a child: invariant 1) ---- */
typedef struct gd_props {
  char name[128];
  int cc_major, cc_minor;      /* compute capability */
  int sms, warp, clock_khz, mem_clock_khz, bus_bits;
  int max_threads_block, max_threads_sm, max_blocks_sm;
  int regs_block, regs_sm;
  int smem_block, smem_block_optin, smem_sm;   /* bytes */
  int l2_bytes;
  int max_block[3], max_grid[3];   /* block and grid dimensions, x y z */
  double mem_bytes;
  int driver_version;          /* 13000 */
  char pci_bus_id[32];         /* "0000:65:00.0" (NVML's handle, gd_nvml.c);
                               ** "" when the driver did not say */
} gd_props;
/* The properties of device ordinal dev, from a forked child (cached in
** this process after the first success). 0, or -1 with err. */
int gd_props_get(int dev, gd_props *p, rt_err *err);
/* The description pairs of device dev (the CUDA row's describe; the
** fingerprint is tg_describe's, tg.h). */
int gd_describe(int dev, tg_desc *d, rt_err *err);
/* The device ordinal of a target name: "cuda" 0, "cuda:N" N; -1 when the
** name is not a CUDA target. */
int gd_target_device(const char *target);

/* ---- NVRTC (invariant 3) ---- */
/* Whether NVRTC loads here (*why says why not). */
int gd_nvrtc_available(const char **why);
/* "nvrtc 13.0" into buf (or "nvrtc unavailable"). */
const char *gd_nvrtc_version(char *buf, size_t cap);
/* Compile CUDA C++ source src for sm_<cc_major><cc_minor> into a cubin
** (malloc'ed into *image, *size bytes) with the options GD_NVRTC_OPTS, the
** architecture, then extra (blank-separated, may be NULL; a -std=... or
** --std=... in extra replaces GD_NVRTC_OPTS's). The compiler's log goes
** to log (when not NULL) on success and on failure (then after a first
** line "nvrtc options: ..." listing the options). 0; 1: compile error
** (the log says why); -1 with err: NVRTC is not there or failed itself. */
#define GD_NVRTC_OPTS "-std=c++17 -default-device"
int gd_nvrtc_compile(const char *src, int cc_major, int cc_minor, const char *extra,
                     void **image, size_t *size, rt_str *log, rt_err *err);
/* gd_nvrtc_compile with C++ name expressions: exprs[0..nexpr-1] (at most
** GD_MAXNAMES; `vadd<float, 4>`) are given to nvrtcAddNameExpression
** before the compile, and on success lowered[i] (malloc'ed) gets
** nvrtcGetLoweredName's name of exprs[i]. An expression NVRTC cannot
** lower is a compile error naming it. */
#define GD_MAXNAMES 16
int gd_nvrtc_compile_names(const char *src, int cc_major, int cc_minor, const char *extra,
                           const char *const *exprs, int nexpr, void **image, size_t *size,
                           char **lowered, rt_str *log, rt_err *err);

/* ---- What ptxas decided, from a cubin (gd_cubin.c; no GPU needed) ---- */
typedef struct gd_res {
  int regs;                    /* registers per thread (EIATTR_REGCOUNT) */
  long frame;                  /* stack frame bytes per thread: local
                               ** memory (spills, local arrays) */
  long min_stack, max_stack;   /* EIATTR_MIN/MAX_STACK_SIZE */
  long smem_static;            /* bytes of .nv.shared.<kernel> */
  long max_threads;            /* __launch_bounds__ threads (0: none) */
} gd_res;
/* The resources of kernel (its symbol name) in cubin image[0..n). 0, or
** -1 with err (not an ELF64 cubin, no such kernel, a record out of its
** section). */
int gd_cubin_resources(const void *image, size_t n, const char *kernel, gd_res *r, rt_err *err);
/* The resources of the first kernel a generated source (gk.h ABI)
** launches, on sm_<maj><min>: its cubin built into the compile cache
** (gd_cubin_build: the measurement's key, so found there if built
** before). 0, or -1 with err (compile error, NVRTC missing). */
int gd_kernel_resources(const char *src, int maj, int min, const char *cache_dir, gd_res *r,
                        rt_err *err);

/* The CUDA row's model_setup (tg_backend.h): the GPU models' resource
** hook (cm_gpu_resources_set) answering from the cubins of generated
** schedules for the ceilings' sm_XY, built into cache_dir when compile is
** set, else read only when built before; kept per process. Nothing
** without NVRTC or a GPU in the ceilings. */
struct cm_ceilings;
void gd_model_setup(const tg_target *t, const struct cm_ceilings *ce, const char *cache_dir,
                    int compile);

/* ---- cuBLAS (baselines; in a worker child) ---- */
/* Load libcublas and run C = A*B (row-major M x K times K x N, float32,
** FP32 arithmetic: CUBLAS_PEDANTIC_MATH, no tensor cores) on the current
** context's stream s. The handle is created on the first call. 0, or -1
** with err. */
int gd_cublas_sgemm(CUstream s, int M, int N, int K, CUdeviceptr A, CUdeviceptr B,
                    CUdeviceptr C, rt_err *err);
const char *gd_cublas_version(char *buf, size_t cap);

/* ---- CUPTI: GPU counters (gd_cupti.c; libcupti loaded with gd_dlopen) ---- */
#define GD_CUPTI_MAXM 32       /* metrics per call at most */
/* Whether CUPTI's range profiler works here: libcupti loads, and a forked
** child opens a profiling session on device 0 (this process never
** initialises the driver). Probed once; *why says why not. */
int gd_cupti_available(const char **why);
/* Count metrics names[0..n-1] over one call run(ctx) that launches kernels
** on the current CUDA context (in the worker child): auto ranges (one per
** launch), kernel replay. Counters are summed over the ranges; ratios
** (gd_cupti_is_ratio) are averaged weighted by each range's
** gpu__time_duration.sum (collected too when not asked for). 0: vals
** filled; -1 with err ("counters unavailable: ...", "unknown metric ..."). */
int gd_cupti_count(const char *const *names, int n, void (*run)(void *ctx), void *ctx,
                   double *vals, rt_err *err);
/* The default metrics, NULL-terminated. */
extern const char *const gd_cupti_default_metrics[];
/* Host side, no GPU: the replay passes gd_cupti_count needs for names on
** chip ("GH100"), the duration weight included; -1 with err naming an
** unknown metric or chip. */
int gd_cupti_passes(const char *chip, const char *const *names, int n, rt_err *err);
/* The combining rule (exposed for tests): a ratio is a name holding ".pct",
** ".ratio", ".per_", "per_second" or ".peak_". out[i] from v[r*n + i] over
** nr ranges: the sum, or for ratios sum(v*w)/sum(w) (the plain mean when w
** is NULL or sums to 0). */
int gd_cupti_is_ratio(const char *name);
void gd_cupti_reduce(const char *const *names, int n, const double *v, const double *w,
                     int nr, double *out);

/* ---- Verification on the GPU (gd_check.c: its invariants) ---- */
#define GD_CHECK_NELEM 11   /* one compare kernel per kn_elem */
typedef struct gd_check {
  CUmodule mod;
  CUfunction cmp[GD_CHECK_NELEM], same;
  CUdeviceptr res;   /* three 64-bit results */
  int blocks;        /* the grid's cap: 8 per SM */
} gd_check;
/* ms__verify's per-output sums: elements failing the atol/rtol (or exact)
** rule, max |out - ref| and max |ref|, as the host computes them. */
typedef struct gd_check_res {
  uint64_t nbad;
  double emax, rmax;
} gd_check_res;
/* The CUDA C++ of the check kernels (tests compile it). */
const char *gd_check_source(void);
/* In the parent, before forking workers: build the check kernels for
** sm_<maj><min> once per process. 0, or -1 with err saying why the host
** path verifies instead (ROOFTUNE_HOST_VERIFY set, or NVRTC failed). */
int gd_check_build(int cc_major, int cc_minor, rt_err *err);
/* In the worker child, a context current: load the built image. 0, or -1
** with err (ck zeroed). sms: the device's SM count (the grid's cap). */
int gd_check_open(gd_check *ck, int sms, rt_err *err);
void gd_check_close(gd_check *ck);
/* *same = 1 when the bytes of a and b (device, bytes long) are equal. */
CUresult gd_check_same(gd_check *ck, CUstream s, CUdeviceptr a, CUdeviceptr b, size_t bytes,
                       int *same);
/* The sums of n elements of type e of out against ref (device) into res;
** tolmode: the kernel's tolerance rule (no per-element count). */
CUresult gd_check_output(gd_check *ck, CUstream s, kn_elem e, CUdeviceptr out, CUdeviceptr ref,
                         int64_t n, double atol, double rtol, int tolmode, gd_check_res *res);
/* ms__verify's rule on res: *rel = max|out-ref| / max|ref| (NaN: INF);
** 1 when the output fails (tolmode: *rel > tol; else any element). */
int gd_check_verdict(const gd_check_res *res, int tolmode, double tol, double *rel);

/* ---- The worker (gd_worker.c, on measure/ms_backend.h) ---- */
struct ms_workload;
struct ms_opts;
struct ms_result;
/* Measure a kernel with a device_reference on device dev: cubins built
** with NVRTC into the compile cache, run, verified and timed in the
** isolated child, CUPTI counts in a second one with o->counters (the
** row's measure). A kernel whose reference is NULL (a T1 kernel) gets its
** reference outputs once per workload first (measure/ms_backend.h
** ms__ref_once; -1 when the reference configuration fails). 0, or -1 for
** harness failures. */
int gd_measure(int dev, struct ms_workload *w, const char *src, const struct ms_opts *o,
               struct ms_result *r);
/* The row's measure_batch (targets/tg_backend.h): n candidates srcs (none
** NULL) measured as gd_measure measures each without counters, built
** first (a plan or build failure is that candidate's result), then the
** built ones in batch workers (ms__run_batch: one context, the vectors
** allocated and the inputs copied once, the built-ins' device reference
** run once per worker; per candidate its module, limits, symbols, the
** outputs written again, the checked run, verification, the timed runs,
** the module unloaded; a CUDA error ends the worker and a new context
** serves the rest). Returns n, or fewer when *stop was set (r[0..ret)
** complete); -1 with err for harness failures. */
int gd_measure_batch(int dev, struct ms_workload *w, const char *const *srcs, int n,
                     const struct ms_opts *o, struct ms_result *r,
                     const volatile sig_atomic_t *stop, rt_err *err);
/* The compile-cache key of CUDA source src for device dev's architecture
** (the source with its plan's options and entries, NVRTC's version,
** GD_NVRTC_OPTS, sm_XY). The cubin is <cache>/<key>.cubin; the lowered
** names of the plan's entries, one a line in entry order, are
** <cache>/<key>.names, written before the cubin. */
void gd_build_key(int dev, const char *src, char key[33]);
/* The same key for sm_<maj><min> (no device asked). */
void gd_build_key_arch(const char *src, int maj, int min, char key[33]);
/* Build src (plan: its parsed plan) for sm_<maj><min> into the compile
** cache (cache_dir, as ms_cache_path) unless there (*hit): the cubin at
** path (cap bytes) and the entries' lowered names, into plan and into
** <key>.names beside it (written first; a cubin whose names file is
** missing or does not match the plan is rebuilt). 0; 1: compile error
** (log); -1: NVRTC or the cache failed (log says). A compile error's
** log is kept as <key>.err and found again like a cubin (*hit, 1, the
** same log); NVRTC's own failures (-1) are not kept. */
struct gk_plan;
int gd_cubin_build(const char *src, struct gk_plan *plan, int maj, int min, const char *cache_dir,
                   char *path, size_t cap, int *hit, rt_str *log);
/* Build srcs into the compile cache in jobs children (ms_prebuild_with). */
void gd_prebuild(int dev, const char *const *srcs, int n, const struct ms_opts *o, int jobs);

/* ---- The ceilings bench (gd_bench.c; moved from cost_model/cm_bench_cuda.c) ---- */
/* Measure the ceilings of device ordinal dev: the microbenchmarks
** compiled with NVRTC here, run in a forked child that is killed when it
** overruns (this process never initialises the driver). [0] figures are
** one SM, [1] all SMs (threads = the SM count); L1 is shared memory. 0,
** or -1 with err (no driver or device, timeout, ...). */
struct cm_bench_opts;
struct cm_ceilings;
int gd_bench(int dev, const struct cm_bench_opts *o, struct cm_ceilings *c, rt_err *err);
/* The CUDA C++ source of those microbenchmarks (for tests). */
const char *gd_bench_source(void);

/* The CUDA row (tg_table.c lists it; gd_backend.c). */
extern const tg_backend gd_backend;

/* ---- NVML: clocks and throttling for the load guard (gd_nvml.c) ---- */
/* The GPU of target ctx (a const tg_target *, cuda:N) now: SM clock,
** clocks event reasons, thermal and power violation times (ms.h
** ms_gpu_reading). libnvidia-ml.so.1 is loaded once; 0, or -1 with err
** (no NVML here, or the device not found). */
struct ms_gpu_reading;
int gd_nvml_reading(void *ctx, struct ms_gpu_reading *r, rt_err *err);

/* ---- dlopen helper shared by the loaders ---- */
/* dlopen the first of names[] (NULL-terminated) found on the loader's path
** or under $CUDA_HOME/{lib64,extras/CUPTI/lib64}; NULL with *why. */
void *gd_dlopen(const char *const *names, const char **why);

#endif
