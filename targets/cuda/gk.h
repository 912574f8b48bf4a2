/*
** gk.h -- the CUDA target's kernel templates. A GPU kernel is an
** kn_kernel (targets/kn.h: buffers, code generator, reference, flop
** and byte counts, tolerance, space file) whose code generator writes CUDA
** C++ for NVRTC instead of C for the system compiler, and which adds a
** device reference (device_reference) and a launch plan in its source.
** One file per kernel (gk_gemm.c + gemm.json, ...); gk_kernels[] lists them.
**
** The ABI of generated CUDA source (what targets/cuda/gd_worker.c runs):
**  1. Self-contained CUDA C++17 for NVRTC: no #include; kernels are
**     `extern "C" __global__`; problem sizes are compile-time constants.
**  2. Plan lines say what one run does, in order. Each is a line comment
**     starting `//@rk ` at the start of a line:
**       //@rk workspace BYTES
**           device scratch reachable as the argument `ws` (at most one).
**       //@rk zero ARG
**           set ARG to 0 (cuMemsetD32Async, whole buffer) before launching.
**       //@rk launch NAME GX GY GZ BX BY BZ SMEM ARG...
**           launch kernel NAME with that grid, block and dynamic shared
**           memory (bytes; above 48 KiB the harness raises the kernel's
**           limit); arguments, in order: bN (the device pointer of buffer N
**           in kn_kernel.buffers order) or ws.
**       //@rk library NAME INT...
**           a library routine instead of launches (baselines only):
**           cublas_sgemm M N K (row-major C = A*B, FP32 without tensor
**           cores), buffers b0 b1 b2.
**     zero lines run first, then launch lines in file order, all on one
**     stream. A run must produce the whole output from the inputs: the
**     harness poisons every output before verification and does not reset
**     buffers between timed repeats.
**  3. Inputs are never written. Outputs are float32, checked as on the
**     host (kn.h invariant 2) against the device reference's outputs.
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
#define GK_MAXARG 8
typedef enum { GK_ZERO, GK_LAUNCH, GK_LIBRARY } gk_step_kind;
typedef struct gk_step {
  gk_step_kind kind;
  char name[64];               /* kernel or library routine */
  unsigned grid[3], block[3], smem;
  int nargs;
  int arg[GK_MAXARG];          /* buffer index, or GK_WS; library: ints */
} gk_step;
#define GK_WS (-1)
typedef struct gk_plan {
  size_t workspace;            /* bytes (0: none) */
  int nsteps;
  gk_step step[GK_MAXSTEP];
} gk_plan;
/* Parse the plan lines of src for a kernel with nbuf buffers. 0, or -1
** with err naming the line and what was expected. */
int gk_plan_parse(const char *src, int nbuf, gk_plan *p, rt_err *err);

#endif
