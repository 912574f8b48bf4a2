/*
** oc.h -- the OpenCL backend: OpenCL devices through the standard ICD
** loader (libOpenCL.so.1, loaded with dlopen at run time, never linked),
** one target instance per platform and device ("opencl:P.D"; "opencl" is
** opencl:0.0). PoCL's CPU device on the development machine, any vendor's
** OpenCL where its ICD is installed. Kernels are OpenCL C generated from a
** schedule (ok_*.c), built with clBuildProgram, run and timed with
** profiling events in the harness's isolated worker (oc_measure.c).
**
** Invariants:
**  1. OpenCL is initialised only in children of the harness (ms_run_child):
**     a process that made an OpenCL context cannot safely fork (the ICD's
**     threads), and a faulting kernel on a CPU device takes its process
**     down. The parent learns everything (devices, properties, build
**     errors, timings) from the children's fixed-size reports.
**  2. Entry points come from the loader with the types of the headers'
**     prototypes (__typeof__), CL_TARGET_OPENCL_VERSION 120: a 1.2 API
**     that every ICD has.
**  3. The compiler identity of an instance is its platform's name and
**     version and the device's driver version; the build key is a hash of
**     (source, OC_BUILD_OPTS, that identity); the plan's options line is
**     in the source. A built program's binary is kept in the compile
**     cache under its key and never rebuilt.
**  4. A kernel's outputs are verified on the host against the workload's
**     reference outputs (kn_kernel's reference, given ones, or, for a
**     kernel whose reference is NULL, its device reference's outputs,
**     computed once per workload in a worker and kept in the compile
**     cache: measure/ms_backend.h ms__ref_once) after one run on poisoned
**     outputs (inout outputs at their initial contents); inputs are read
**     back and compared after the checked run and after the timed runs
**     ("the candidate wrote to its input X": wrong_result). A crash is
**     runtime_error, a hang timeout.
**  5. A machine without the loader or a platform still runs rooftune: the
**     target is then absent with the reason (oc_available).
**  6. The worker is isolated as every worker is (its own process, killed
**     with its group at the timeout, no descriptor but its report pipe, a
**     sealed report, the database guard: measure/ms.h invariants 1 and 2),
**     but not in the host worker's Landlock sandbox: an ICD starts its
**     threads with the context, before any point where the sandbox could
**     be entered for them, and PoCL writes and dlopens the compiled
**     kernels at run time.
**  7. Before any launch, every launch of the plan is checked against the
**     device: each work-group dimension against
**     CL_DEVICE_MAX_WORK_ITEM_SIZES, the work-group size against
**     CL_DEVICE_MAX_WORK_GROUP_SIZE and the kernel's
**     CL_KERNEL_WORK_GROUP_SIZE, against its reqd_work_group_size when it
**     has one, and the kernel's local memory (static and lN arguments)
**     against CL_DEVICE_LOCAL_MEM_SIZE. Beyond one, the status is invalid
**     (T4 "constraints") with the limit and both numbers; a launch that
**     fails anyway is runtime_error.
*/
#ifndef OC_H
#define OC_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/rt.h"
#include "../kn.h"
#include "../tg_backend.h"
#include "../tg_desc.h"
#include "../../measure/ms.h"
#include "../../cost_model/cm.h"

/* Options every program is built with (part of the build key). */
#define OC_BUILD_OPTS "-cl-std=CL1.2"
#define OC_MAXDEV 16

/* ---- Instances ---- */
/* The platform and device of a target name: "opencl" 0.0, "opencl:P.D";
** 0, or -1 when name is not an OpenCL target name. */
int oc_target_parse(const char *name, int *plat, int *dev);

/* ---- What a device is (asked of a child: invariant 1) ---- */
typedef struct oc_props {
  int plat, dev;                   /* indices: opencl:plat.dev */
  char platform[96], platform_version[160], vendor[96];
  char device[128], device_version[96], driver[64], c_version[64];
  char type[16];                   /* "cpu", "gpu", "accelerator", "other" */
  int cus;                         /* compute units */
  int max_wg;                      /* work-items per work-group */
  int max_item[3];                 /* per dimension */
  int clock_mhz;
  int vec_float, native_vec_float; /* preferred / native float vector width */
  int cacheline;                   /* global memory cache line, bytes */
  double local_mem, global_mem, global_cache, max_alloc, const_mem;  /* bytes */
  int local_is_global;             /* CL_GLOBAL: local memory is emulated */
  unsigned long long timer_ns;     /* profiling timer resolution, ns */
} oc_props;

/* Whether the loader and at least one device are there (*why says why
** not; probed once by a child). */
int oc_available(const char **why);
/* Every device of every platform, at most max into p; how many, or -1
** with err (no loader, the probe died). */
int oc_list(oc_props *p, int max, rt_err *err);
/* The properties of opencl:plat.dev (cached in this process). 0, or -1
** with err naming the instance and why. */
int oc_props_get(int plat, int dev, oc_props *p, rt_err *err);
/* The description's pairs of opencl:plat.dev (the row's describe; the
** fingerprint is the table's, tg.h). */
int oc_describe(int plat, int dev, tg_desc *d, rt_err *err);
/* "PLATFORM PLATFORM_VERSION / driver DRIVER": the compiler identity. */
const char *oc_compiler(const oc_props *p, char *buf, size_t cap);
/* The build key of src on p (invariant 3): 32 hex digits. */
void oc_build_key(const char *src, const oc_props *p, char key[33]);
/* Problem-variable bindings of the device limits OpenCL spaces declare:
** max_wg, max_local (bytes of local memory per work-group), cus, of
** opencl:plat.dev; a variable user_set binds is left out (tg_binds).
** Appended to out; 0 or -1 with err. */
int oc_limit_bindings(int plat, int dev, const char *user_set, rt_str *out, rt_err *err);

/* ---- Inside a child only (invariant 1): the loader ---- */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#define OC_FNS(X) \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) \
  X(clCreateContext) X(clReleaseContext) X(clCreateCommandQueue) X(clReleaseCommandQueue) \
  X(clCreateProgramWithSource) X(clCreateProgramWithBinary) X(clBuildProgram) \
  X(clGetProgramBuildInfo) X(clGetProgramInfo) X(clReleaseProgram) \
  X(clCreateKernel) X(clSetKernelArg) X(clReleaseKernel) X(clGetKernelWorkGroupInfo) \
  X(clCreateBuffer) X(clReleaseMemObject) X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer) \
  X(clEnqueueFillBuffer) X(clEnqueueNDRangeKernel) X(clFinish) X(clWaitForEvents) \
  X(clGetEventProfilingInfo) X(clReleaseEvent)

typedef struct oc_api {
#define OC_FIELD(name) __typeof__(&name) name;
  OC_FNS(OC_FIELD)
#undef OC_FIELD
} oc_api;
extern oc_api oc_cl;   /* filled by oc_load */

/* dlopen libOpenCL.so.1 (then libOpenCL.so) and fill oc_cl. 0, or -1 with
** err. Idempotent. */
int oc_load(rt_err *err);
/* "CL_OUT_OF_RESOURCES (-5)" */
const char *oc_errname(cl_int e);
/* The platform and device ids of opencl:plat.dev; 0 or -1 with err. */
int oc_ids(int plat, int dev, cl_platform_id *pid, cl_device_id *did, rt_err *err);
/* A context and an in-order queue with profiling on did; 0 or -1 with err. */
int oc_queue(cl_device_id did, cl_context *cx, cl_command_queue *q, rt_err *err);
/* Build src for did with OC_BUILD_OPTS and extra (NULL: none;
** oc_build_options); 0: *prog; 1: compile error, log holds the options
** and the build log; -1: an OpenCL failure (err). */
int oc_build_source(cl_context cx, cl_device_id did, const char *src, const char *extra,
                    cl_program *prog, rt_str *log, rt_err *err);

/* ---- Plans: what one run of generated source enqueues ----
** Generated OpenCL C carries line comments at the start of a line:
**   //@oc options OPT...        build options after OC_BUILD_OPTS (blank-
**       separated, no quoting; at most one line). They are part of the
**       source, so of the build key (invariant 3).
**   //@oc workspace BYTES       device scratch, the argument `ws` (at most one)
**   //@oc launch NAME GX GY GZ LX LY LZ ARG...
**       enqueue kernel NAME over the 3-D global size GX x GY x GZ work
**       items with work-groups LX x LY x LZ (each global size a multiple
**       of its local one); arguments, in order: bN (buffer N of
**       kn_kernel.buffers, a KN_VECTOR: its device memory), sN (buffer N,
**       a KN_SCALAR: its one value, by value, of its kn_elem's size), lN
**       (buffer N, a KN_LOCAL: __local memory of its n elements) or ws.
**       Launches run in file order on one in-order queue.
** A run must produce its whole output from its inputs: the harness poisons
** outputs (an inout output starts at its initial contents) before the
** checked run and does not reset them between repeats. Before any launch
** the device's limits are checked (invariant 7). */
#define OC_MAXSTEP 16
#define OC_MAXARG (KN_MAXBUF + 1)
#define OC_MAXOPTS 1024
#define OC_WS (-1)
typedef enum { OC_ARG_BUF, OC_ARG_VALUE, OC_ARG_LOCAL } oc_arg_kind;
typedef struct oc_step {
  char name[64];
  size_t global[3], local[3];
  int nargs, arg[OC_MAXARG];       /* buffer index or OC_WS */
  unsigned char how[OC_MAXARG];    /* oc_arg_kind: bN and ws, sN, lN */
} oc_step;
typedef struct oc_plan {
  size_t workspace;
  char options[OC_MAXOPTS];        /* the options line's words ("" : none) */
  int nsteps;
  oc_step step[OC_MAXSTEP];
} oc_plan;
/* Parse the plan lines of src for nbuf buffers; 0 or -1 with err naming
** the line. */
int oc_plan_parse(const char *src, int nbuf, oc_plan *p, rt_err *err);
/* The plan's arguments against the workload's buffers: every bN names a
** KN_VECTOR, sN a KN_SCALAR, lN a KN_LOCAL. 0, or -1 with err naming the
** launch and the argument. */
int oc_plan_check(const oc_plan *p, const kn_buf *b, int nbuf, rt_err *err);
/* OC_BUILD_OPTS, then extra (the plan's options; NULL or "": none), into
** buf. */
const char *oc_build_options(const char *extra, char *buf, size_t cap);

/* ---- Measuring (oc_measure.c) and ceilings (oc_bench.c) ---- */
/* The row's measure of a candidate src (OpenCL C with a plan; NULL: the kernel's
** host reference, timed with the host clock in a worker child: the
** baseline; a kernel without one: its device reference) on
** opencl:plat.dev: the reference outputs first where the workload has
** none (invariant 4; -1 when the reference configuration fails), build in a
** child (compile_error with the options and the build log), then verify
** and time in a fresh worker child (invariants 1 and 4). Always fills r;
** 0, or -1 for harness failures. */
int oc_measure(ms_workload *w, const char *src, int plat, int dev, const ms_opts *o,
               ms_result *r);
/* The row's measure_batch (targets/tg_backend.h): n candidates srcs
** (none NULL) measured as oc_measure measures each, built first (a plan or
** build failure is that candidate's result), then the built ones in batch
** workers (ms__run_batch: one context, the workload's vectors allocated
** and the inputs written once per worker; per candidate its program,
** arguments, limits, the outputs written again, the checked run,
** verification, the timed runs; an OpenCL failure ends a worker and a new
** one serves the rest). Returns n, or fewer when *stop was set (r[0..ret)
** complete); -1 with err for harness failures. */
int oc_measure_batch(ms_workload *w, const char *const *srcs, int n, int plat, int dev,
                     const ms_opts *o, ms_result *r, const volatile sig_atomic_t *stop,
                     rt_err *err);
/* Build n sources into the compile cache ahead of oc_measure, jobs build
** children at a time (0: one per CPU); errors are left for oc_measure. */
void oc_prebuild(const char *const *srcs, int n, int plat, int dev, const ms_opts *o, int jobs);
/* The ceilings of opencl:plat.dev: peak FP32 FMA FLOP/s, global-memory
** read and copy bandwidth (bw[DRAM], dram_copy: bytes read + written),
** local-memory bandwidth (bw[L1]); [1] all compute units, [0] 0 (scaled),
** threads = compute units. Run in a child killed after the bench's time.
** 0, or -1 with err. */
int oc_bench(int plat, int dev, const cm_bench_opts *o, cm_ceilings *c, rt_err *err);
/* The OpenCL C source of those microbenchmarks (for tests). */
const char *oc_bench_source(void);

/* ---- The row of the backend table (oc_backend.c) ---- */
extern const tg_backend oc_backend;

/* ---- The kernels (ok_*.c) ---- */
extern const kn_kernel ok_reduction, ok_transpose;
extern const kn_kernel *const oc_kernels[];   /* NULL-terminated */

#endif
