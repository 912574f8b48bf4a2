/*
** kn.h -- the kernel contract, one type for every backend: a kernel
** template is its buffers, code generator, reference, flop and byte
** counts, tolerance, baseline, element type and search space. The
** measurement harness (measure/ms.h) runs any kn_kernel; each backend
** (targets/tg.h) lists its own (host: targets/host/hk.h, CUDA:
** targets/cuda/gk.h) and says what its generated source must define.
**
** Invariants (every backend):
**  1. Buffers are of the kernel's dtype ("f32": float32, the only type the
**     harness fills today). Input buffers are filled by the harness with
**     deterministic pseudo-random values in [-1, 1]; outputs are checked
**     against `reference` (or the backend's device reference) run on the
**     same inputs.
**  2. The output of a schedule is correct when
**     max|out - ref| <= tolerance(pb) * max(max|ref|, 1e-30).
**  3. Problem sizes are compile-time constants in generated source; the
**     sizes variables are checked before anything is allocated.
*/
#ifndef KN_H
#define KN_H

#include <stdint.h>

#include "../search_spaces/sp.h"

#define KN_MAXVARS 16
#define KN_MAXBUF 4

/* A workload's problem variables (bound values of the space's problem
** variables, e.g. M, N, K, layout). */
typedef struct kn_problem {
  int n;
  const char *name[KN_MAXVARS];
  sx_value val[KN_MAXVARS];
} kn_problem;

/* Value of an int problem variable (0 if absent: spaces declare them). */
int64_t kn_int(const kn_problem *pb, const char *name);
/* Value of a string problem variable ("" if absent). */
const char *kn_str(const kn_problem *pb, const char *name);
/* Fill pb from the problem variables of a loaded space. */
void kn_problem_from_space(kn_problem *pb, const sp_space *sp);

/* Value of a tuning parameter of configuration cfg, by name (aborts on
** an unknown name: a code generator and its space file disagree). */
int64_t kn_param_int(const sp_space *sp, const int *cfg, const char *name);
const char *kn_param_str(const sp_space *sp, const int *cfg, const char *name);

/* The largest value a size variable (kn_kernel.sizes) may take: 2^40. */
#define KN_SIZE_MAX ((int64_t)1 << 40)
/* Arithmetic on sizes for buffers(): a*b and a+b of non-negative sizes,
** saturating at INT64_MAX (so that the harness's check, not the C
** arithmetic, refuses what is too large); a negative operand gives -1. */
int64_t kn_size_mul(int64_t a, int64_t b);
int64_t kn_size_add(int64_t a, int64_t b);

typedef struct kn_buf {
  const char *name;
  int64_t n;       /* number of float32 elements */
  int out;         /* 1: written by the kernel and verified */
} kn_buf;

typedef struct kn_kernel {
  const char *name;       /* "gemm" */
  const char *summary;    /* one line for `rooftune kernels` */
  const char *space;      /* space file, relative to the project root */
  /* Element type of the buffers, as workload keys name it ("KERNEL DTYPE
  ** VAR=VALUE ..."): "f32", the only type the harnesses fill today. */
  const char *dtype;
  /* The problem variables that set buffer sizes, blank-separated
  ** ("M N K"): each must be an integer in [0, KN_SIZE_MAX] before
  ** anything else of the kernel runs (measure/ms.h invariant 5). */
  const char *sizes;
  /* Buffers of the workload: fills b[0..n-1], returns n (<= KN_MAXBUF).
  ** Defined for any values (sizes through kn_size_mul/add; -1 or
  ** INT64_MAX where they make no buffer), so that it can be checked. */
  int (*buffers)(const kn_problem *pb, kn_buf *b);
  /* C source of schedule cfg for this workload (malloc'ed). */
  char *(*codegen)(const kn_problem *pb, const sp_space *sp, const int *cfg);
  /* Plain reference: compute the outputs from the inputs. */
  void (*reference)(const kn_problem *pb, float *const *bufs);
  double (*flops)(const kn_problem *pb);      /* exact floating-point ops */
  double (*min_bytes)(const kn_problem *pb);  /* compulsory memory traffic */
  double (*tolerance)(const kn_problem *pb);  /* see invariant 3 */
  /* Source of the vendor-library baseline with the same rk_run ABI, or
  ** NULL (then the best available code is the reference). *ldflags gets
  ** the link flags it needs (e.g. "-lopenblas"). */
  char *(*baseline)(const kn_problem *pb, const char **ldflags);
  /* Device targets only (targets/cuda/gk.h): source of a plain reference
  ** in the target's language, run on the device to verify candidates; the
  ** host's kernels leave it NULL. */
  char *(*device_reference)(const kn_problem *pb);
} kn_kernel;

#endif
