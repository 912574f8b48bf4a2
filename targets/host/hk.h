/*
** hk.h -- the host CPU target's kernel templates: the contract between a
** kernel (code generator, reference, flop/byte counts, search space) and
** the measurement harness. One file per kernel (hk_gemm.c, ...) defines one
** hk_kernel; the table hk_kernels[] in hk_table.c lists them all.
**
** Invariants:
**  1. Generated C source defines `int rk_run(float *const *bufs)` that
**     computes the kernel on the buffers in the order of hk_kernel.buffers
**     and returns 0. Problem sizes are compile-time constants in the source.
**     It may use OpenMP (compiled with -O3 -march=native -fopenmp).
**  2. All buffers are float32 (hk_kernel.dtype "f32", the element type
**     the workload key names). Input buffers are filled by the harness with
**     deterministic pseudo-random values in [-1, 1]; outputs are checked
**     against `reference` run on the same inputs.
**  3. The output of a schedule is correct when
**     max|out - ref| <= tolerance(pb) * max(max|ref|, 1e-30).
*/
#ifndef HK_H
#define HK_H

#include <stdint.h>

#include "../../search_spaces/sp.h"

#define HK_MAXVARS 16
#define HK_MAXBUF 4

/* A workload's problem variables (bound values of the space's problem
** variables, e.g. M, N, K, layout). */
typedef struct hk_problem {
  int n;
  const char *name[HK_MAXVARS];
  sx_value val[HK_MAXVARS];
} hk_problem;

/* Value of an int problem variable (0 if absent: spaces declare them). */
int64_t hk_int(const hk_problem *pb, const char *name);
/* Value of a string problem variable ("" if absent). */
const char *hk_str(const hk_problem *pb, const char *name);
/* Fill pb from the problem variables of a loaded space. */
void hk_problem_from_space(hk_problem *pb, const sp_space *sp);

/* Value of a tuning parameter of configuration cfg, by name (aborts on
** an unknown name: a code generator and its space file disagree). */
int64_t hk_param_int(const sp_space *sp, const int *cfg, const char *name);
const char *hk_param_str(const sp_space *sp, const int *cfg, const char *name);

/* The largest value a size variable (hk_kernel.sizes) may take: 2^40. */
#define HK_SIZE_MAX ((int64_t)1 << 40)
/* Arithmetic on sizes for buffers(): a*b and a+b of non-negative sizes,
** saturating at INT64_MAX (so that the harness's check, not the C
** arithmetic, refuses what is too large); a negative operand gives -1. */
int64_t hk_size_mul(int64_t a, int64_t b);
int64_t hk_size_add(int64_t a, int64_t b);

typedef struct hk_buf {
  const char *name;
  int64_t n;       /* number of float32 elements */
  int out;         /* 1: written by the kernel and verified */
} hk_buf;

typedef struct hk_kernel {
  const char *name;       /* "gemm" */
  const char *summary;    /* one line for `rooftune kernels` */
  const char *space;      /* space file, relative to the project root */
  /* Element type of the buffers, as workload keys name it ("KERNEL DTYPE
  ** VAR=VALUE ..."): "f32", the only type the harnesses fill today. */
  const char *dtype;
  /* The problem variables that set buffer sizes, blank-separated
  ** ("M N K"): each must be an integer in [0, HK_SIZE_MAX] before
  ** anything else of the kernel runs (measure/ms.h invariant 5). */
  const char *sizes;
  /* Buffers of the workload: fills b[0..n-1], returns n (<= HK_MAXBUF).
  ** Defined for any values (sizes through hk_size_mul/add; -1 or
  ** INT64_MAX where they make no buffer), so that it can be checked. */
  int (*buffers)(const hk_problem *pb, hk_buf *b);
  /* C source of schedule cfg for this workload (malloc'ed). */
  char *(*codegen)(const hk_problem *pb, const sp_space *sp, const int *cfg);
  /* Plain reference: compute the outputs from the inputs. */
  void (*reference)(const hk_problem *pb, float *const *bufs);
  double (*flops)(const hk_problem *pb);      /* exact floating-point ops */
  double (*min_bytes)(const hk_problem *pb);  /* compulsory memory traffic */
  double (*tolerance)(const hk_problem *pb);  /* see invariant 3 */
  /* Source of the vendor-library baseline with the same rk_run ABI, or
  ** NULL (then the best available code is the reference). *ldflags gets
  ** the link flags it needs (e.g. "-lopenblas"). */
  char *(*baseline)(const hk_problem *pb, const char **ldflags);
  /* Device targets only (targets/cuda/gk.h): source of a plain reference
  ** in the target's language, run on the device to verify candidates; the
  ** host's kernels leave it NULL. */
  char *(*device_reference)(const hk_problem *pb);
} hk_kernel;

extern const hk_kernel *const hk_kernels[];   /* NULL-terminated */
const hk_kernel *hk_find(const char *name);   /* NULL if unknown */

/* The kernels (one file each). */
extern const hk_kernel hk_gemm, hk_conv2d, hk_stencil, hk_transpose,
    hk_reduction;

#endif
