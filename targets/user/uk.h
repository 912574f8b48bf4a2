/*
** uk.h -- the user's own kernels: a T1 file's KernelSpecification loaded
** into a kn_kernel (targets/kn.h) that the rest of rooftune runs like a
** built-in template (campaigns, database, pins, reader, reports).
** uk_spec.c parses the file (every error names the T1 field), uk_eval.c
** computes what the kernel needs (geometry, buffers, generated source,
** reference configuration, work counts), uk_kernel.c is the registry of
** loaded kernels that targets/tg.c's tg_kernel searches.
**
** What a KernelSpecification means to rooftune (the README's "Your own
** kernels: --t1" says it for users):
**  1. The T1 file is the kernel's space: ConfigurationSpace (with
**     ProblemVariables bound by --set as for the built-ins) and its
**     KernelSpecification. Language "CUDA" runs on cuda:N (NVRTC),
**     "OpenCL" on opencl:P.D; another backend is an error naming
**     KernelSpecification.Language. The kernel's name (the database's,
**     pins', reader's) is General.BenchmarkName, else the file's name
**     without ".json"; it must not be a built-in kernel's name on its
**     backend (the command line refuses it).
**  2. Expressions (ProblemSize, GlobalSize, LocalSize, GridDivX/Y/Z,
**     SharedMemory, Arguments[i].Size and FillValue, rooftune.Flops/Bytes) are the
**     space language (search_spaces/sx.h: Python semantics), compiled once
**     at load. Names: `ProblemSize` (the list of its evaluated entries),
**     every problem variable (its bound value) and every tuning parameter:
**     the configuration's value in launch geometry (GlobalSize, LocalSize,
**     GridDiv, SharedMemory); the LIST of its values in the per-workload
**     expressions (Size, FillValue, Flops, Bytes: `max(filter_width)`). ProblemSize's
**     own entries see the problem variables only. Another name is an error
**     naming the field. A size or geometry value is an int (a float with
**     an integral value is taken as that int).
**  3. Launch geometry per configuration, dimension d of X, Y, Z: local
**     size = LocalSize.d (missing: the parameter block_size_x/y/z where
**     the space has it, else 1); blocks = ceil(ProblemSize[d] / product of
**     GridDivd's expressions) where GridDivd is given (Kernel Tuner's rule;
**     ProblemSize[d] missing: 1), else from GlobalSize.d (missing: 1),
**     which counts blocks (GlobalSizeType "CUDA") or work items
**     (GlobalSizeType "OpenCL": blocks = ceil(items / local)); the default
**     GlobalSizeType is the Language's. CUDA launches that grid of blocks;
**     OpenCL's global size is blocks x local size in each dimension.
**     Every value must be in [1, 2^31 - 1]. SharedMemory (default 0) is
**     the dynamic shared memory of a CUDA launch, bytes.
**  4. Generated source = "// rooftune T1 kernel" comment + `#define NAME
**     VALUE` lines: the configuration's parameters in the space's order
**     (ints and floats as Python's repr writes them, booleans 1/0, strings
**     as their text unquoted: Kernel Tuner's rule), then the problem
**     variables, then, as Kernel Tuner does, block_size_x/y/z (the local
**     size) and grid_size_x/y/z (the blocks) where no parameter or problem
**     variable has that name; then the user's source (KernelFile, then
**     each of rooftune.KernelFiles not already included, in order); CUDA
**     source without `extern "C"` is wrapped in `extern "C" { ... }`
**     unless KernelTypeNames is given (templates); then the plan lines of
**     targets/cuda/gk.h (`//@rk options|entry|symbol|launch`) or
**     targets/opencl/oc.h (`//@oc options|launch`, 3-D). The options line
**     holds CompilerOptions and the include path of the kernel file's
**     folder (CUDA --include-path=DIR, OpenCL -IDIR; left out when the
**     path holds a blank). A configuration whose geometry does not
**     evaluate gets an `#error` line naming the field, and no launch: a
**     compile_error trial, never a crash.
**  5. Arguments, in launch order: Type (uk_types in uk_spec.c: bool ...
**     double16; half is f16; a vector type is `lanes` elements of its
**     element type, 3-vectors 3 in CUDA and 4 in OpenCL), MemoryType
**     Vector (bN) | Scalar (sN, by value; one value, never an output, not
**     a vector type) | Local (OpenCL __local: lN) | Symbol (CUDA
**     __constant__ variable named as the argument: `//@rk symbol`, not a
**     launch argument); MemType "Constant" makes a CUDA Vector a Symbol
**     (the hub's spelling) and is an ordinary buffer in OpenCL. Size: its
**     elements (of Type). FillType Constant (FillValue) | Random (seeded:
**     RandomSeed, default 42 + the argument's index; FillValue the range,
**     kn.h's KN_FILL_RANDOM) | BinaryRaw (DataSource relative to the T1
**     file, exactly Size elements); missing: Constant when FillValue is
**     given, else Random. FillValue may be an expression, per workload
**     like Size (a Scalar passing a problem size: "M"). Output 1: compared (AccessType ReadWrite: its
**     initial contents are filled and read, kn_buf.inout). Generator,
**     Script, BinaryHDF and anything else: an error naming the field.
**     ReferenceArguments (TargetName an Output; FillType Constant or
**     BinaryRaw) give reference outputs; the others come from the
**     reference configuration run on the device (kn_kernel.reference is
**     NULL): rooftune.ReferenceConfig (parameters not named take their
**     Default), else the space's default configuration when it is
**     complete and valid, else the first valid configuration.
**  6. Work per launch (kn_kernel.flops, min_bytes): rooftune.Flops and
**     rooftune.Bytes; without Flops 0, without Bytes the bytes of every
**     Vector and Symbol argument once (a ReadWrite output twice).
**     The cost model of a loaded kernel (registered for every model family
**     while it is loaded) is cost_model/cm_stated.c's: that work's
**     roofline with the configuration's blocks over the device's units.
**     Tolerance: numpy.allclose's rule with atol 1e-6 (Kernel Tuner's
**     default) and rtol 1e-5 (numpy's), --atol/--rtol override.
**  7. Everything is checked at load for the bindings given (every
**     expression of the reference configuration and the per-workload
**     ones evaluated, kernel and data files read and sized), so a file
**     that loads runs; a later workload whose sizes do not evaluate gets
**     buffers of -1 elements, which the harness refuses (ms.h).
**  8. kn_kernel's functions take no context pointer, so each loaded T1
**     kernel takes one of UK_SLOTS slots whose functions are generated
**     trampolines (uk_kernel.c: UK_TRAMPOLINES) calling the shared code
**     with the slot's spec. Slots are process-global and not locked: load
**     and unload from one thread, before workers fork.
*/
#ifndef UK_H
#define UK_H

#include <stdint.h>

#include "../../common/rt.h"
#include "../../search_spaces/sp.h"
#include "../kn.h"

#define UK_SLOTS 8     /* T1 kernels loaded at once (invariant 8) */
#define UK_MAXDIV 8    /* expressions of one GridDivX/Y/Z */
#define UK_MAXPS 8     /* entries of ProblemSize */

typedef enum { UK_CUDA = 0, UK_OPENCL } uk_lang;

/* One argument (invariant 5). */
typedef struct uk_arg {
  char *name, *type;      /* Name; Type as written */
  kn_elem elem;
  int lanes;              /* elements per value of Type (float4: 4) */
  kn_kind kind;
  sx_prog *size;          /* Size (NULL: a Scalar's one value) */
  kn_fill fill;
  double value;
  sx_prog *fill_expr;     /* FillValue as an expression (value per workload), or NULL */
  char *file;             /* BinaryRaw: absolute path */
  uint64_t seed;
  int out, inout;
  int has_ref;
  kn_fill ref_fill;
  double ref_value;
  char *ref_file;
} uk_arg;

/* A parsed KernelSpecification. */
typedef struct uk_spec {
  char *path;             /* the T1 file, absolute */
  char *text;             /* its text: the space is loaded from it */
  char *name;             /* the kernel's name (invariant 1) */
  uk_lang lang;
  char *kernel_name;      /* KernelName */
  char *entry;            /* CUDA name expression (KernelTypeNames), or NULL */
  char *source;           /* the kernel files, concatenated */
  char *options;          /* the plan's options (blank-separated), or NULL */
  int np, nv;             /* tuning parameters, problem variables */
  char **pname, **vname;
  int nps;                /* ProblemSize */
  sx_prog *ps[UK_MAXPS];
  sx_prog *local[3], *global[3];   /* NULL: not given */
  int ndiv[3];                     /* -1: GridDivd not given */
  sx_prog *div[3][UK_MAXDIV];
  int gs_blocks;          /* 1: GlobalSize counts blocks */
  sx_prog *smem;          /* NULL: 0 */
  int narg;
  uk_arg arg[KN_MAXBUF];
  sx_prog *flops, *bytes; /* rooftune block; NULL: invariant 6 */
  int nref;               /* rooftune.ReferenceConfig entries */
  char **ref_name;
  sx_value *ref_val;
  double atol, rtol;
  char dtype[8];          /* the workload keys' dtype: the first output's */
  sx_arena *arena;
  sx_vm *vm;
} uk_spec;

/* ---- Parsing (uk_spec.c) ---- */
/* Parse the T1 file path (kernel files relative to it, or to kernel_dir
** when not NULL) and check it for the bindings set (invariant 7). NULL
** with err: "FILE: KernelSpecification.Arguments[2].Size: ...". */
uk_spec *uk_spec_load(const char *path, const char *kernel_dir, const sp_binding *set, int nset,
                      rt_err *err);
void uk_spec_free(uk_spec *s);                            /* NULL: no-op */
/* The backend that runs s's Language ("cuda", "opencl"), and the target a
** command takes when none is given ("cuda:0", "opencl"). */
const char *uk_spec_backend(const uk_spec *s);
const char *uk_spec_default_target(const uk_spec *s);
const char *uk_spec_language(const uk_spec *s);           /* "CUDA", "OpenCL" */

/* ---- Evaluation (uk_eval.c) ---- */
/* The launch geometry of configuration cfg of space sp (invariant 3). */
typedef struct uk_geom {
  int64_t blocks[3], local[3], global[3];   /* global = blocks x local */
  int64_t smem;
} uk_geom;
/* ProblemSize of workload pb into ps[0..*n); 0, or -1 with err naming the
** field. */
int uk_problem_size(uk_spec *s, const kn_problem *pb, int64_t *ps, int *n, rt_err *err);
int uk_geometry(uk_spec *s, const kn_problem *pb, const sp_space *sp, const int *cfg, uk_geom *g,
                rt_err *err);
/* The arguments of workload pb of space sp (loaded with pb's bindings) as
** buffers (invariant 7: -1 elements where a Size fails; err says why when
** not NULL); how many. */
int uk_buffers(uk_spec *s, const kn_problem *pb, const sp_space *sp, kn_buf *b, rt_err *err);
/* Generated source of cfg (invariant 4), malloc'ed. */
char *uk_codegen(uk_spec *s, const kn_problem *pb, const sp_space *sp, const int *cfg);
/* The reference configuration of sp (invariant 5) into cfg; 0, or -1 with
** err. */
int uk_reference_config(uk_spec *s, sp_space *sp, int *cfg, rt_err *err);
/* rooftune.Flops (which 0) or Bytes (which 1) of workload pb (invariant 6). */
double uk_work(uk_spec *s, const kn_problem *pb, const sp_space *sp, int which, rt_err *err);

/* ---- The registry (uk_kernel.c) ---- */
/* Parse path (uk_spec_load) and register it in a free slot: its kernel,
** or NULL with err (the parse's, all slots taken, or a T1 kernel of that
** name and backend loaded already). */
const kn_kernel *uk_load(const char *path, const char *kernel_dir, const sp_binding *set, int nset,
                         rt_err *err);
/* The loaded T1 kernel name of backend (a tg_backend's name), or NULL. */
const kn_kernel *uk_find(const char *backend, const char *name);
/* The spec of a loaded T1 kernel; NULL when k is not one. */
uk_spec *uk_spec_of(const kn_kernel *k);
/* Where s came from, as a JSON object (malloc'ed), stored with a
** campaign (tu_campaign_opts.provenance): {"t1": its path, "t1_fnv128":
** the hash of its text, "source_fnv128": of the kernel sources read,
** "inputs": [{"name", "type", "kind", "fill", "seed"|"value"|"file"},
** ...]} -- what reproducing its inputs needs (invariant 5's seeds). */
char *uk_provenance_json(const uk_spec *s);
/* Override the tolerance of a loaded T1 kernel (invariant 6). */
void uk_set_tolerance(const kn_kernel *k, double atol, double rtol);
/* Free k's slot (a no-op for a kernel that is not a loaded T1 kernel). */
void uk_unload(const kn_kernel *k);

#endif
