/*
** kn.h -- the kernel contract, one type for every backend: a kernel
** template is its buffers, code generator, reference, flop and byte
** counts, tolerance, baseline, element type and search space. The
** measurement harness (measure/ms.h) runs any kn_kernel; each backend
** (targets/tg.h) lists its own (host: targets/host/hk.h, CUDA:
** targets/cuda/gk.h) and says what its generated source must define.
**
** Invariants (every backend):
**  1. A buffer's elements are of its kn_buf.elem (KN_F32 for every
**     built-in template; a kernel described by a T1 file, targets/user/uk.h,
**     may use any kn_elem, scalars, CUDA symbols and OpenCL local memory).
**     Inputs are filled by the harness as kn_buf.fill says (default:
**     deterministic pseudo-random values in [-1, 1]); outputs are checked
**     against `reference` (or the backend's device reference) run on the
**     same inputs.
**  2. The output of a schedule is correct when, per output buffer,
**     max|out - ref| <= tolerance(pb) * max(max|ref|, 1e-30) (kernels with
**     a tolerance function), or element by element
**     |out - ref| <= atol + rtol * |ref| for floating-point elements and
**     out == ref for integer ones (kernels whose tolerance is NULL: T1
**     kernels, numpy.allclose's rule, which Kernel Tuner uses).
**  3. Problem sizes are compile-time constants in generated source; the
**     sizes variables are checked before anything is allocated.
*/
#ifndef KN_H
#define KN_H

#include <stdint.h>

#include "../search_spaces/sp.h"

#define KN_MAXVARS 16
#define KN_MAXBUF 16

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

/* Element types of buffers and scalars (T1's names in targets/user/uk.h:
** bool is KN_U8; a vector type such as float4 is 4 elements of KN_F32).
** KN_F32 is 0, so that a zeroed kn_buf is a float32 buffer. */
typedef enum {
  KN_F32 = 0, KN_F64, KN_F16, KN_I8, KN_U8, KN_I16, KN_U16, KN_I32, KN_U32, KN_I64, KN_U64
} kn_elem;
size_t kn_elem_size(kn_elem e);          /* bytes of one element */
const char *kn_elem_name(kn_elem e);     /* "f32", "u8", ... */
int kn_elem_float(kn_elem e);            /* 1: F16, F32, F64 */

/* What an argument is. Zero (KN_VECTOR) for every built-in buffer. */
typedef enum {
  KN_VECTOR = 0,  /* a device buffer, passed by pointer */
  KN_SCALAR,      /* one value (n == 1) passed by value; never an output */
  KN_SYMBOL,      /* CUDA: the module's __constant__/__device__ variable of
                  ** this name, filled before the run; not a launch argument */
  KN_LOCAL        /* OpenCL: __local memory of n elements (no data) */
} kn_kind;

/* How the harness fills an input, or an output's initial contents. */
typedef enum {
  KN_FILL_RANDOM = 0,  /* seeded (kn_buf.seed; 0: the harness's stream):
                       ** floats uniform in [-1, 1) when value is 0, else
                       ** in [0, value); integers uniform in [0, value)
                       ** (value 0: [0, 100)) */
  KN_FILL_CONSTANT,    /* every element = value */
  KN_FILL_FILE         /* the raw bytes of file, exactly n * kn_elem_size */
} kn_fill;

typedef struct kn_buf {
  const char *name;
  int64_t n;       /* elements of elem (a float4 argument of 10: 40) */
  int out;         /* 1: written by the kernel and verified */
  /* Below: zero for every built-in template (float32 buffers filled at
  ** random, outputs poisoned before the checked run). */
  kn_elem elem;
  kn_kind kind;
  kn_fill fill;
  double value;    /* KN_FILL_CONSTANT's value; KN_FILL_RANDOM's range */
  const char *file;   /* KN_FILL_FILE: an absolute path */
  uint64_t seed;
  int inout;       /* an output whose initial contents are read (T1
                   ** ReadWrite): filled like an input before the checked
                   ** run and the reference run, not poisoned */
  /* Given reference outputs (T1 ReferenceArguments): ref_fill
  ** KN_FILL_CONSTANT (every element ref_value) or KN_FILL_FILE (ref_file's
  ** raw bytes); has_ref 0: the reference computes them. */
  int has_ref;
  kn_fill ref_fill;
  double ref_value;
  const char *ref_file;
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
  double (*tolerance)(const kn_problem *pb);  /* invariant 2; NULL: atol, rtol */
  double atol, rtol;      /* invariant 2, when tolerance is NULL */
  /* Source of the vendor-library baseline with the same rk_run ABI, or
  ** NULL (then the best available code is the reference). *ldflags gets
  ** the link flags it needs (e.g. "-lopenblas"). */
  char *(*baseline)(const kn_problem *pb, const char **ldflags);
  /* Device targets only (targets/cuda/gk.h): source of a plain reference
  ** in the target's language, run on the device to verify candidates; the
  ** host's kernels leave it NULL. A T1 kernel's is its reference
  ** configuration's source, and its `reference` is NULL: its reference
  ** outputs come from the device (or from kn_buf's given references). */
  char *(*device_reference)(const kn_problem *pb);
} kn_kernel;

/* A template whose problem is another kernel's (a backend's template of
** a host kernel: same buffers, reference, flop and byte counts and
** tolerance): defines static NAME_buffers, NAME_reference, NAME_flops,
** NAME_min_bytes and NAME_tolerance calling `from`'s, for its kn_kernel's
** fields (a static initializer cannot copy from's pointers). */
#define KN_SAME_PROBLEM(name, from)                                                        \
  static int name##_buffers(const kn_problem *pb, kn_buf *b) { return (from).buffers(pb, b); } \
  static void name##_reference(const kn_problem *pb, float *const *bufs) {                 \
    (from).reference(pb, bufs);                                                            \
  }                                                                                        \
  static double name##_flops(const kn_problem *pb) { return (from).flops(pb); }            \
  static double name##_min_bytes(const kn_problem *pb) { return (from).min_bytes(pb); }    \
  static double name##_tolerance(const kn_problem *pb) { return (from).tolerance(pb); }

#endif
