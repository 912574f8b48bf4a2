/*
** gk.h -- the CUDA target's kernel templates. A GPU kernel is an
** kn_kernel (targets/kn.h: buffers, code generator, reference, flop
** and byte counts, tolerance, space file) whose code generator writes CUDA
** C++ for NVRTC instead of C for the system compiler, and which adds a
** device reference (device_reference) and a launch plan in its source.
** One file per kernel (gk_gemm.c + gemm.json, ...); gk_kernels[] lists them.
**
** The ABI of generated CUDA source (what targets/cuda/gd_worker.c runs):
**  1. Self-contained CUDA C++ for NVRTC (C++17 unless an options line says
**     otherwise): no #include; kernels are `extern "C" __global__`, or
**     named by an entry line (templates); problem sizes are compile-time
**     constants.
**  2. Plan lines say what one run does, in order. Each is a line comment
**     starting `//@rk ` at the start of a line:
**       //@rk options OPT...
**           NVRTC options after GD_NVRTC_OPTS (blank-separated, no
**           quoting; a -std=... replaces rooftune's; at most one line).
**           They are part of the source, so of the build key.
**       //@rk workspace BYTES
**           device scratch reachable as the argument `ws` (at most one).
**       //@rk symbol NAME bN
**           before the runs, copy buffer N (a KN_SYMBOL) into the
**           module's global NAME (cuModuleGetGlobal): a __constant__ or
**           __device__ variable; one smaller than the buffer is a
**           runtime_error naming it.
**       //@rk entry NAME EXPR
**           launch lines naming NAME launch the kernel whose C++ name
**           expression is EXPR, the rest of the line (a template:
**           `vadd<float, 4>`): nvrtcAddNameExpression before the
**           compile, nvrtcGetLoweredName after it; the lowered name is
**           kept with the cubin in the compile cache.
**       //@rk zero ARG
**           set ARG to 0 (a memset of the whole buffer) before launching.
**       //@rk launch NAME GX GY GZ BX BY BZ SMEM ARG...
**           launch kernel NAME with that grid, block and dynamic shared
**           memory (bytes; above 48 KiB the harness raises the kernel's
**           limit); arguments, in order: bN (the device pointer of buffer
**           N in kn_kernel.buffers order, a KN_VECTOR), sN (buffer N's
**           one value by value, a KN_SCALAR, of its kn_elem's size) or ws.
**       //@rk library NAME INT...
**           a library routine instead of launches (baselines only):
**           cublas_sgemm M N K (row-major C = A*B, FP32 without tensor
**           cores), buffers b0 b1 b2.
**     zero lines run first, then launch lines in file order, all on one
**     stream. A run must produce the whole output from the inputs: the
**     harness poisons every output (an inout output starts at its
**     initial contents) before verification and does not reset buffers
**     between timed repeats. Before any launch each launch is checked
**     against the device (gd_worker.c): threads per block against the
**     kernel's CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (registers
**     included), block and grid dimensions against the device's, dynamic
**     plus static shared memory against the opt-in maximum per block;
**     beyond one, the status is invalid with the limit and both numbers.
**  3. Inputs are never written. Outputs are checked as on the host (kn.h
**     invariant 2) against the device reference's outputs: run beside
**     every candidate for the built-in kernels, computed once per
**     workload for a kernel whose reference is NULL (a T1 kernel:
**     measure/ms_backend.h ms__ref_once).
**  4. device_reference(pb) returns source in the same ABI, plain and
**     obviously right (one thread per output, double accumulation), and
**     independent of every schedule; tests compare it with the host
**     reference (kn_kernel.reference) on small problems.
**
** Spaces: problem variables max_threads, max_smem (bytes per block,
** opt-in), regs_block and sms are bound from the device's description when
** tuning on cuda:N (targets/cuda/gd.h gd_props); their Default in the space
** file is the H200's, so a space loads anywhere.
*/
#ifndef GK_H
#define GK_H

#include "../kn.h"

extern const kn_kernel *const gk_kernels[];   /* NULL-terminated */
const kn_kernel *gk_find(const char *name);   /* NULL if unknown */

/* The kernels (one file each). */
extern const kn_kernel gk_gemm, gk_reduction, gk_transpose, gk_stencil;

/* ---- Plans (gk_plan.c): the parsed //@rk lines of a source ---- */
#define GK_MAXSTEP 64
#define GK_MAXARG (KN_MAXBUF + 1)
#define GK_MAXSYM KN_MAXBUF
#define GK_MAXENTRY 16
#define GK_MAXOPTS 1024
typedef enum { GK_ZERO, GK_LAUNCH, GK_LIBRARY } gk_step_kind;
typedef enum { GK_ARG_BUF, GK_ARG_VALUE } gk_arg_kind;
typedef struct gk_step {
  gk_step_kind kind;
  char name[64];               /* kernel, entry or library routine */
  int entry;                   /* launch: index of the entry NAME names, or -1 */
  unsigned grid[3], block[3], smem;
  int nargs;
  int arg[GK_MAXARG];          /* buffer index, or GK_WS; library: ints */
  unsigned char how[GK_MAXARG];   /* gk_arg_kind: bN and ws, sN */
} gk_step;
#define GK_WS (-1)
typedef struct gk_symbol {
  char name[128];
  int buf;
} gk_symbol;
typedef struct gk_entry {
  char name[64], expr[256];
  char lowered[512];           /* filled by the build (gd_worker.c), "" before */
} gk_entry;
typedef struct gk_plan {
  size_t workspace;            /* bytes (0: none) */
  char options[GK_MAXOPTS];    /* the options line's words ("": none) */
  int nsym, nentry;
  gk_symbol sym[GK_MAXSYM];
  gk_entry entry[GK_MAXENTRY];
  int nsteps;
  gk_step step[GK_MAXSTEP];
} gk_plan;
/* Parse the plan lines of src for a kernel with nbuf buffers. 0, or -1
** with err naming the line and what was expected. */
int gk_plan_parse(const char *src, int nbuf, gk_plan *p, rt_err *err);
/* The plan's arguments against the workload's buffers: bN (launch and
** zero) names a KN_VECTOR, sN a KN_SCALAR, a symbol line a KN_SYMBOL. 0,
** or -1 with err naming the step and the argument. */
int gk_plan_check(const gk_plan *p, const kn_buf *b, int nbuf, rt_err *err);

#endif
