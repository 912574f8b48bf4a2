/*
** cm.h -- the cost model: a target's measured ceilings (peak FLOP/s and
** the bandwidth of each memory level), per-kernel analytical roofline
** models (the work a schedule does at each level of the machine), the
** roofline combination that turns work into a predicted time and a
** limiting bound, calibration of the model's coefficients against
** measured trials (GSL nonlinear least squares in log time, robust), cache
** the comparison with traffic counted on the real code (counted by the
** target's backend row: tg_backend.traffic_count), and accuracy metrics of
** a ranking.
**
** Invariants:
**  1. A kernel model is one function from (workload, schedule, machine) to
**     cm_work: exact flops, bytes moved at each level, efficiency terms,
**     parallel terms. It has no tunable numbers in it: every coefficient
**     lives in the kernel's coefficient table (cm_coef) with a default, and
**     calibrated values are data (cm_coefs, stored versioned in the db).
**  2. The combination is the same for every kernel (cm_time): each bound b
**     takes t_b = work_b / (ceiling_b * eff_b); they overlap as a p-norm,
**     T = overhead + (sum_b t_b^p)^(1/p); the bound of the largest t_b is
**     the limiting one.
**  3. Prediction is deterministic and pure: no clock, no randomness.
**  4. Byte terms count lines filled into a level from the next one out
**     (64-byte lines; write-allocate; write-backs are not counted), the
**     quantity cachegrind and the cache-miss counters report. On a GPU
**     (cm_kmodel.family "gpu") they count what the device's counters
**     count instead: L1 = shared-memory wavefronts x 128 bytes plus the
**     global bytes through l1tex (l1tex__t_bytes), L2 = bytes of L2
**     requests (lts__t_bytes: reads, writes, atomics), L3 = 0 (no such
**     level: its ceiling is 0), DRAM = bytes read plus bytes written
**     (dram__bytes_read + dram__bytes_write: stores need no fill, and
**     write-backs during the kernel cost it bandwidth).
**  5. Models are per model family, which a backend row names
**     (tg_backend.model_family): the CPU family ("cpu") and the GPU
**     family ("gpu") share the kernel names; cm_kmodel_find_on picks.
**  6. A calibration carries its uncertainty (cm_unc): the spread of
**     log(measured / predicted) over the schedules it was not fitted to
**     (its held-out ones; the fitted ones when none was held out, which
**     understates it, and the record says which), over all of them and
**     per limiting bound. A prediction's uncertainty is that of its
**     bound (cm_unc_sigma), stored in the version's fit record; the
**     defaults and older calibrations have none (NAN).
*/
#ifndef CM_H
#define CM_H

#include "../common/rt.h"
#include "../targets/kn.h"

/* ---- Bounds and levels ---- */
typedef enum { CM_COMPUTE, CM_L1, CM_L2, CM_L3, CM_DRAM, CM_OVERHEAD,
               CM_NBOUND } cm_bound;
#define CM_NLEVEL 4           /* CM_L1 .. CM_DRAM */
#define CM_LEVEL(i) ((cm_bound)(CM_L1 + (i)))
const char *cm_bound_name(cm_bound b);   /* "compute", "L1", ..., "overhead" */

/* ---- Ceilings (measured by each backend: tg_bench; stored per target in the db) ---- */
#define CM_MAXCLASS 16
#define CM_MAXSWEEP 48
typedef struct cm_class {       /* one instruction class of the peak bench */
  char name[24];                /* "avx512-fma", "scalar-add", ... */
  int bits;                     /* vector width in bits (32: scalar) */
  int fma;                      /* 1: fused multiply-add (2 flops/lane) */
  double flops[2];              /* FLOP/s: [0] one thread, [1] all threads */
} cm_class;
/* A GPU's properties (the fields of the GPU backend's device properties
** the models need); all 0 on a CPU. */
typedef struct cm_gpu {
  int cc_major, cc_minor;       /* compute capability */
  int sms;                      /* streaming multiprocessors */
  int warp;                     /* threads per warp (32) */
  int max_threads_block, max_threads_sm, max_blocks_sm;
  int regs_block, regs_sm;      /* 32-bit registers */
  int smem_sm;                  /* shared memory per SM, bytes */
  int smem_block_optin;         /* most one block may ask for, bytes */
  int l2_bytes;
  int clock_khz;                /* SM clock */
} cm_gpu;
typedef struct cm_sweep_pt {    /* bandwidth of one working-set size */
  double bytes;                 /* working set */
  double bw[2];                 /* read bytes/s: one thread, all threads */
} cm_sweep_pt;
/* On a GPU: threads = SMs; peak[0] one SM's FP32 FMA FLOP/s, peak[1] all
** SMs'; bw[L1] shared memory + L1, bw[L2] L2, bw[L3] 0 (none), bw[DRAM]
** HBM, each [0] one SM, [1] all SMs ([0] 0: scaled from [1] by SMs);
** cache[L1] shared memory per SM, cache[L2] the L2; gpu set. */
typedef struct cm_ceilings {
  int threads;                  /* threads of the multi-thread figures */
  int nclass;
  cm_class cls[CM_MAXCLASS];
  double peak[2];               /* best FP32 FLOP/s: one thread, all */
  double bw[CM_NLEVEL][2];      /* bytes/s of L1, L2, L3, DRAM: 1, all */
  double cache[CM_NLEVEL];      /* capacity in bytes (L1, L2 per core; L3
                                ** shared; DRAM 0); from the target */
  double ways[CM_NLEVEL];       /* associativity of each cache (0: unknown) */
  int nsweep;
  cm_sweep_pt sweep[CM_MAXSWEEP];
  char measured[32];            /* UTC date and time of the measurement */
  double seconds;               /* how long the bench took */
  double dram_copy[2];          /* GPU: DRAM copy bandwidth counting bytes
                                ** read + written, 1 SM / all (0: none) */
  cm_gpu gpu;                   /* the device (JSON member "gpu", written
                                ** when gpu.sms > 0; absent: zeros) */
} cm_ceilings;

typedef struct cm_bench_opts {
  double time_per_point;        /* seconds per measured point (0.05) */
  int repeats;                  /* medians of this many runs (5) */
  int threads;                  /* multi-thread figures (0: all CPUs) */
  int quick;                    /* fewer sweep points (tests) */
} cm_bench_opts;
void cm_bench_opts_default(cm_bench_opts *o);
/* The start of every backend's bench: checks o (time per point > 0,
** repeats >= 1) and stamps the UTC date and time into measured (cap >= 21:
** "2026-12-02T01:08:22Z"). 0, or -1 with err. */
int cm_bench_begin(const cm_bench_opts *o, char *measured, size_t cap, rt_err *err);
/* Insert working-set size x into the sorted set v[0..*n) (at most cap)
** unless within 1% of a member: the sweep's sizes (both benches). */
void cm_sweep_insert(double *v, int *n, int cap, double x);
/* The benches that measure ceilings are backend operations
** (tg_backend.bench, tg_bench: targets/); cm_ceilings.c holds the rest. */
/* JSON text of c (caller frees) and its inverse (-1 with err naming the
** field that is missing or wrong). */
char *cm_ceilings_json(const cm_ceilings *c);
int cm_ceilings_parse(const char *json, cm_ceilings *c, rt_err *err);

/* ---- A kernel model's output: the work of one schedule ---- */
#define CM_MAXEFF 6
typedef struct cm_work {
  double flops;                 /* floating-point operations executed */
  double bytes[CM_NLEVEL];      /* bytes served by L1 (loads+stores issued),
                                ** L2, L3, DRAM (invariant 4) */
  double eff[CM_MAXEFF];        /* compute-efficiency terms in (0, 1], named
                                ** by the model (cm_kmodel.eff_names) */
  int threads;                  /* threads the schedule runs */
  double imbalance;             /* largest thread share / mean share, >= 1 */
  double trips;                 /* trips of generated inner loops (loop and
                                ** call overhead) */
  double serial_frac;           /* fraction of flops outside the parallel
                                ** region (packing done once, ...) */
  double launches;              /* GPU kernel launches and memsets of one
                                ** run (fixed_s each; 0 or 1: one call) */
  double mem_eff[CM_NLEVEL];    /* share of each level's ceiling the
                                ** schedule's memory parallelism sustains
                                ** (a GPU's bytes in flight against the
                                ** latency: Little's law), in (0, 1]; 0: 1 */
} cm_work;
/* On a GPU a model's threads are the SMs that get blocks and imbalance is
** the busiest SM's blocks over the mean; trips are the blocks of a run
** (trip_s per block round of the busiest SM). */

/* What a model knows of the machine: capacities and registers. */
typedef struct cm_machine {
  double cache[CM_NLEVEL];      /* L1d, L2 per core, L3 shared, 0 */
  double ways[CM_NLEVEL];       /* associativity (0: unknown, taken as full) */
  int line;                     /* bytes per cache line (64) */
  int vector_regs;              /* SIMD registers (32) */
  int simd_floats;              /* float32 lanes per register (16) */
  int flush;                    /* 1: caches flushed between repeats, so
                                ** compulsory traffic comes from DRAM */
  cm_gpu gpu;                   /* the device's properties (0 on a host) */
  int units;                    /* the ceilings' threads: cores, SMs or
                                ** compute units that the all-unit figures use */
} cm_machine;
void cm_machine_from_ceilings(cm_machine *m, const cm_ceilings *c);

/* ---- Coefficients (invariant 1) ---- */
typedef enum { CM_POS, CM_GE1 } cm_coef_kind;  /* x > 0 ; x >= 1 */
typedef struct cm_coef {
  const char *name;             /* "eff_L2", "overlap", ... */
  double value;                 /* default */
  cm_coef_kind kind;
  const char *what;             /* one line for `model explain` */
  int hold;                     /* 1: calibration keeps it unless asked
                                ** (thresholds the fit cannot see through) */
} cm_coef;
#define CM_MAXCOEF 24
/* The uncertainty of a calibration (invariant 6): the sample standard
** deviation of log(measured / predicted) over n schedules (all) and over
** the nb[b] of them whose limiting bound is b (bound[b]; NAN when fewer
** than CM_UNC_MIN); held_out 1 when they were held out of the fit, 0 when
** they were the fitted ones. all NAN: unknown. */
#define CM_UNC_MIN 5
typedef struct cm_unc {
  double all, bound[CM_NBOUND];
  int n, nb[CM_NBOUND], held_out;
} cm_unc;
/* A coefficient vector of one kernel model (defaults or calibrated). */
typedef struct cm_coefs {
  int n;
  double v[CM_MAXCOEF];         /* in the order of cm_kmodel.coefs */
  int version;                  /* db version; 0: the defaults */
  char source[64];              /* "defaults", "calibrated 2026-11-29 ..." */
  cm_unc unc;                   /* its uncertainty (all NAN: unknown) */
} cm_coefs;

/* The generic coefficients every kernel model starts with (cm_time reads
** them by these indices); a model appends its own after them. */
enum { CM_C_COMPUTE, CM_C_L1, CM_C_L2, CM_C_L3, CM_C_DRAM, CM_C_OVERLAP,
       CM_C_FIXED, CM_C_THREAD, CM_C_TRIP, CM_C_EFF0, CM_NGENERIC = CM_C_EFF0 };
/* Exponent of efficiency term j is coefficient CM_C_EFF0 + j: the compute
** time divides by prod_j eff[j]^exponent_j. A model's own coefficients
** (byte-term factors, ...) follow at CM_C_EFF0 + neff. */
/* The first CM_NGENERIC rows of every kernel's coefficient table. */
#define CM_GENERIC_COEFS \
  {"eff_compute", 0.9, CM_POS, "fraction of the FMA peak the best code reaches", 0}, \
  {"eff_L1", 0.8, CM_POS, "fraction of the L1 ceiling reached", 0}, \
  {"eff_L2", 0.8, CM_POS, "fraction of the L2 ceiling reached", 0}, \
  {"eff_L3", 0.8, CM_POS, "fraction of the L3 ceiling reached", 0}, \
  {"eff_DRAM", 0.8, CM_POS, "fraction of the DRAM ceiling reached", 0}, \
  {"overlap", 3.0, CM_GE1, "p of the p-norm joining the bounds (1: no overlap)", 0}, \
  {"fixed_s", 2e-6, CM_POS, "fixed cost per call, seconds", 0}, \
  {"thread_s", 4e-6, CM_POS, "fork/join cost per extra thread, seconds", 0}, \
  {"trip_s", 1e-9, CM_POS, "cost per generated inner-loop trip, seconds", 0}

/* The same rows for a GPU model, with a GPU's defaults: fixed_s is paid
** per launch (cm_work.launches), thread_s per SM that gets blocks, trip_s
** per block of the busiest SM. */
#define CM_GPU_GENERIC_COEFS CM_GPU_GENERIC_COEFS_H(0)
/* The same with eff_DRAM held at its default when hold_dram is 1: a model
** whose time data never reaches the DRAM roof (gemm calibrated on
** compute-bound workloads) cannot see it, and a fit left free drives it
** anywhere (0.0995 on the H200's 4096^3 gemm), ruining the workloads that
** are DRAM-bound; its bytes are fitted to counted traffic instead. */
#define CM_GPU_GENERIC_COEFS_H(hold_dram) \
  {"eff_compute", 0.85, CM_POS, "fraction of the FP32 FMA peak the best code reaches", 0}, \
  {"eff_L1", 0.8, CM_POS, "fraction of the shared-memory/L1 ceiling reached", 0}, \
  {"eff_L2", 0.7, CM_POS, "fraction of the L2 ceiling reached", 0}, \
  {"eff_L3", 1.0, CM_POS, "unused on a GPU (no L3)", 1}, \
  {"eff_DRAM", 0.85, CM_POS, "fraction of the HBM ceiling reached", hold_dram}, \
  {"overlap", 3.0, CM_GE1, "p of the p-norm joining the bounds (1: no overlap)", 0}, \
  {"fixed_s", 4e-6, CM_POS, "cost per kernel launch or memset, seconds", 0}, \
  {"thread_s", 1e-9, CM_POS, "cost per SM that gets blocks, seconds", 0}, \
  {"trip_s", 2e-7, CM_POS, "cost per block the busiest SM runs (start, prologue, epilogue), seconds", 0}

typedef struct cm_kmodel {
  const char *kernel;           /* "gemm" */
  int neff;
  const char *const *eff_names; /* neff names, e.g. "vector", "registers" */
  int ncoef;                    /* CM_NGENERIC + neff (+ model's own) */
  const cm_coef *coefs;         /* defaults (invariant 1) */
  /* The work of schedule cfg of workload pb on machine m: 0, or -1 with
  ** err when cfg is not a schedule of this kernel. c holds the model's own
  ** coefficients (byte-term factors, ...) at c->v[CM_C_EFF0 + neff ...].
  ** A pure function of its arguments that reads no other coefficient:
  ** calibration computes it once per sample when no own coefficient is
  ** free, and reuses it where only generic ones moved (cm_calib.c). */
  int (*work)(const kn_problem *pb, const sp_space *sp, const int *cfg,
              const cm_machine *m, const cm_coefs *c, cm_work *w, rt_err *err);
  const char *family;           /* the model family it belongs to (a
                                ** backend row's model_family): "cpu"
                                ** (NULL: "cpu"), "gpu" */
  int form;                     /* the form of its terms (0: 1): raised when
                                ** a coefficient's meaning changes; a
                                ** calibration of another form is not used
                                ** (cm_coefs_parse, cm_coefs_load) */
} cm_kmodel;

/* ---- Reuse analysis of a loop nest (cm_nest.c), shared by the models ----
** A loop nest, outermost loop first, touches arrays. Each loop moves some
** dimensions (letters); an array's extent in dimension d inside loop j is
** its extent in the innermost body times the trips of every loop at or
** inside j that moves d. Under a fully associative LRU cache of capacity
** S, an array's lines are loaded once per execution of the outermost loop
** whose whole footprint (all arrays) fits in S, and reused across the
** iterations of the loop just outside it when the array does not move
** with that loop. An array with depth < nloops is touched only by the
** loops outside depth (a packing step): its innermost extent is the block
** it touches there. */
#define CM_MAXLOOP 12
#define CM_MAXARR 8
typedef struct cm_loop {
  double trips;                 /* average trips (range / step, fractional) */
  char moves[8];                /* dimension letters this loop moves */
} cm_loop;
typedef struct cm_array {
  const char *name;
  char dims[4];                 /* dimension letters, row-major: last is
                                ** contiguous */
  double ext[4];                /* extent in the innermost body (elements) */
  double full[4];               /* size of each dimension in memory: a run
                                ** covering the whole last dimension
                                ** continues into the next row */
  double elem;                  /* bytes per element */
  int depth;                    /* touched by loops < depth (0: all loops) */
} cm_array;
typedef struct cm_nest {
  int nloops, narrays;
  cm_loop loop[CM_MAXLOOP];
  cm_array arr[CM_MAXARR];
} cm_nest;
/* Builders: append a loop (outermost first) / an array of ndims = strlen
** (dims) dimensions with the given innermost extents and full sizes. */
void cm_nest_loop(cm_nest *n, double trips, const char *moves);
void cm_nest_array(cm_nest *n, const char *name, const char *dims,
                   const double *ext, const double *full, double elem,
                   int depth);
/* Bytes filled into a cache of capacity cap (bytes, line-sized lines) from
** the next level by one execution of the nest; warm: the nest ran just
** before, so a nest that fits entirely costs nothing. */
double cm_nest_traffic(const cm_nest *n, double cap, int line, int warm);
/* The same for a set-associative cache: the loop whose execution first
** overflows cap keeps the share cap / footprint of the reuse it would have
** had (a smooth step where the exact LRU rule jumps). */
double cm_nest_traffic_sa(const cm_nest *n, double cap, int line, int warm);
/* Traffic of a nest whose windows depend on the level asked about: build
** fills n for ctx with its windows' extents suited to one execution of loop
** j (j < 0: a first guess; see cm_nest_window). The loop that fits cap (and,
** with assoc = {ways, sets}, the sets a power-of-two row stride reaches) is
** found with windows suited to it; neighbours share their halos and partial
** lines; an array every enclosing loop leaves in place is fetched once. */
typedef void (*cm_nest_fn)(cm_nest *n, const void *ctx, int j);
double cm_nest_traffic_shared(cm_nest_fn build, const void *ctx, double cap, int line,
                              const double *assoc);
/* Extent in the body of a window of w elements along one dimension, halo
** of which the neighbouring iteration of the innermost loop moving it (t
** trips, index at; -1: none) shares: averaged over the t trips when that
** loop is inside loop j, else whole. */
double cm_nest_window(double w, double halo, double t, int at, int j);
/* Half a line (lf elements) of overhang for rows of row elements that are
** not line-aligned. */
double cm_nest_overhang(double row, double lf);
/* Distinct bytes (whole lines) touched by one full execution of the nest. */
double cm_nest_footprint(const cm_nest *n, int line);

/* The table of kernel models (cm_table.c), NULL-terminated. */
extern const cm_kmodel *const cm_kmodels[];
/* The model of kernel in a model family (tg_backend.model_family: "cpu",
** "gpu"; NULL: "cpu"), or NULL if none. */
const cm_kmodel *cm_kmodel_find_on(const char *family, const char *kernel);
/* Models added at run time (a T1 kernel's, targets/user/uk.h), searched
** after the table; family "*" serves every family. 0, or -1 when
** CM_MAXADDED are registered already. Not locked: register and
** unregister from one thread, before workers fork. */
#define CM_MAXADDED 8
int cm_kmodel_register(const cm_kmodel *k);
void cm_kmodel_unregister(const cm_kmodel *k);   /* not registered: no-op */

/* ---- Stated work (cm_stated.c) ----
** The model of a kernel whose work is stated rather than derived (a T1
** kernel's rooftune.Flops and rooftune.Bytes per launch): the roofline of
** those FLOPs and DRAM bytes on the whole device, with the launch's blocks
** (work-groups) spread over the device's units (m->units: SMs, compute
** units or cores) in rounds: threads = the units that get blocks,
** imbalance = the last round's. One launch; its generic coefficients
** (cm_stated_coefs, CM_STATED_NCOEF) are the GPU model's defaults. */
#define CM_STATED_NCOEF CM_NGENERIC
extern const cm_coef cm_stated_coefs[CM_STATED_NCOEF];
void cm_stated_work(double flops, double bytes, double blocks, const cm_machine *m, cm_work *w);
const cm_kmodel *cm_kmodel_find(const char *kernel);  /* the CPU family's */
extern const cm_kmodel cm_gemm, cm_conv2d, cm_stencil, cm_transpose,
    cm_reduction;
/* The GPU family's (cm_gpu_gemm.c, cm_gpu_mem.c). */
extern const cm_kmodel cm_gpu_gemm, cm_gpu_reduction, cm_gpu_transpose,
    cm_gpu_stencil;
/* The "wg-roofline" family (cm_wgroof.c): work-group kernels on a device
** measured as a whole. */
extern const cm_kmodel cm_wg_reduction, cm_wg_transpose;
/* The "vla" family (cm_vla_gemm.c, cm_vla_reduction.c): the CPU roofline
** for vector-length agnostic code (RISC-V vector templates) on described
** ceilings. */
extern const cm_kmodel cm_vla_gemm, cm_vla_reduction;

/* ---- GPU occupancy and waves (cm_gpu.c), shared by the GPU models ----
** NVIDIA's occupancy rules (its occupancy calculator): blocks per SM limited by
** warps (max_threads_sm / warp over the block's warps), by the block limit,
** by registers (regs x warp rounded up to 256 per warp, allocated per
** quarter-SM sub-partition: floor(regs_sm / 4 / per_warp) x 4 warps), and
** by shared memory (smem + 1 KiB reserved on cc >= 8, rounded up to 128
** bytes, against smem_sm). 0 when one block does not fit. */
typedef struct cm_occ {
  int blocks;                   /* resident blocks per SM */
  int by_warps, by_blocks, by_regs, by_smem;   /* each limit alone */
  int warps;                    /* resident warps per SM (blocks x warps) */
} cm_occ;
void cm_gpu_occupancy(const cm_gpu *g, int threads_block, int regs_thread,
                      double smem_block, cm_occ *o);
/* How nblocks blocks of a grid spread over the SMs when bps fit on one:
** active SMs, the busiest SM's blocks (ceil(nblocks / sms)), waves
** (nblocks / (sms x bps), whole and fractional). */
typedef struct cm_waves {
  int active;                   /* SMs that get a block */
  double per_sm;                /* blocks of the busiest SM */
  double imbalance;             /* per_sm / (nblocks / active), >= 1 */
  double waves, whole;          /* nblocks / (sms x bps), and its ceiling */
  double tail;                  /* busiest SM's rounds: (per_sm / bps) /
                                ** ceil(per_sm / bps), in (0, 1] */
} cm_waves;
void cm_gpu_waves(const cm_gpu *g, double nblocks, int bps, cm_waves *w);
/* The share of its cycles an SM issues over the busiest SM's per_sm
** blocks when bps fit at once: waves = ceil(per_sm / bps) (= ceil(blocks /
** (SMs x bps))), all full but the last (per_sm - (waves - 1) x bps
** blocks); a wave of r resident blocks runs at h(ctx, r) in (0, 1] of the
** SM's rate, so the SM takes sum over waves of r / h(r) block-times
** against per_sm: per_sm / that sum, in (0, 1]. */
double cm_gpu_hiding(double per_sm, int bps, double (*h)(void *ctx, int r), void *ctx);
/* Average 32-byte sectors of a run of `bytes` contiguous bytes starting at
** a 4-byte-aligned offset that advances by `stride` bytes from one run to
** the next (row starts of a row-major array), over the offsets mod 32. */
double cm_gpu_sectors(double bytes, double stride);
/* The device a GPU model uses: m's; without one (ceilings of a host, a
** model asked about before a GPU was benched), an H200 (sm_90) with the
** space's device limits (problem variables sms, max_threads, max_smem,
** regs_block) where it has them. */
void cm_gpu_props(const cm_machine *m, const kn_problem *pb, cm_gpu *g);
/* What the compiler decided for a schedule's kernel (registers per
** thread, local memory per thread: the stack frame of spills and local
** arrays), from the compiled kernel, as its backend reads it (the
** backend table's rows, targets/). A GPU model asks through one hook that the
** backend installs (tg_backend.model_setup); with none, or when the hook
** does not know the schedule (not built, compiling off), the model uses
** its own estimate. The hook must answer the same for the same schedule
** while it is installed (invariant 3 holds for a fixed hook). */
typedef struct cm_gpu_res {
  int regs;                     /* registers per thread */
  double local;                 /* bytes of local memory per thread */
} cm_gpu_res;
typedef int (*cm_gpu_res_fn)(void *ctx, const char *kernel, const kn_problem *pb,
                             const sp_space *sp, const int *cfg, cm_gpu_res *r);
void cm_gpu_resources_set(cm_gpu_res_fn fn, void *ctx);   /* NULL: none */
/* 0 with r filled when the hook knows cfg's kernel; -1 otherwise. */
int cm_gpu_resources(const char *kernel, const kn_problem *pb, const sp_space *sp,
                     const int *cfg, cm_gpu_res *r);
/* A parameter by name that a space may lack: its value, or dflt. */
int64_t cm_param_int(const sp_space *sp, const int *cfg, const char *name, int64_t dflt);
const char *cm_param_str(const sp_space *sp, const int *cfg, const char *name,
                         const char *dflt);
void cm_coefs_default(const cm_kmodel *k, cm_coefs *c);

/* Coefficients as a JSON object {name: value} (caller frees) and back: a
** name the model lacks or a non-positive value is an error naming it; a
** coefficient the text lacks keeps its default. */
char *cm_coefs_json(const cm_kmodel *k, const cm_coefs *c);
int cm_coefs_parse(const cm_kmodel *k, const char *json, cm_coefs *c, rt_err *err);

/* The share of thread t of th under OpenMP's schedule(static) without a
** chunk, as libgomp splits it: iterations [*lo, *hi) of n (the first
** n % th threads get one more). How the generators' loops divide work. */
void cm_omp_static(double n, int th, int t, double *lo, double *hi);

/* ---- The roofline combination (invariant 2) ---- */
typedef struct cm_pred {
  double time;                  /* predicted seconds */
  double t[CM_NBOUND];          /* time of each bound alone (overhead: its
                                ** additive part) */
  cm_bound bound;               /* the largest of t[] */
  double ceiling[CM_NBOUND];    /* the ceiling each bound used (FLOP/s,
                                ** bytes/s; overhead 0) */
  double frac[CM_NBOUND];       /* fraction of each ceiling the schedule
                                ** achieves: (work_b / time) / ceiling_b */
  cm_work w;
} cm_pred;
/* Combine w with ceilings ce and coefficients c. */
void cm_time(const cm_kmodel *k, const cm_work *w, const cm_ceilings *ce,
             const cm_coefs *c, cm_pred *p);
/* work + time in one call. */
int cm_predict(const cm_kmodel *k, const kn_problem *pb, const sp_space *sp,
               const int *cfg, const cm_ceilings *ce, const cm_coefs *c,
               int flush, cm_pred *p, rt_err *err);

/* ---- Calibration (cm_fit.c) ---- */
/* Robust nonlinear least squares: minimise sum_i w_i r_i(u)^2 over u
** (n_par unknowns) with r_i for i < n_obs from fn, plus prior rows
** lambda * (u_j - prior_j) when lambda > 0. Robust weights (Tukey
** bisquare on the residuals scaled by their MAD, re-fitted until stable)
** when robust is set. u holds the start and gets the solution. */
typedef int (*cm_resid_fn)(void *ctx, const double *u, double *r);
typedef struct cm_fit_opts {
  int robust;                   /* 1: bisquare IRLS (default 1) */
  double lambda;                /* prior weight (default 0) */
  const double *prior;          /* n_par values (NULL: the start) */
  int max_iter;                 /* per solve (default 200) */
  int max_rounds;               /* reweighted solves at most (default 20) */
} cm_fit_opts;
typedef struct cm_fit_result {
  int iters;                    /* solver iterations in all */
  long evals;                   /* calls of the residual function in all */
  int irls_rounds;
  double rms_before, rms_after; /* unweighted rms of r over the n_obs rows */
  int n_outliers;               /* observations with weight 0 at the end */
} cm_fit_result;
void cm_fit_opts_default(cm_fit_opts *o);
int cm_fit(int n_obs, int n_par, cm_resid_fn fn, void *ctx, double *u,
           const cm_fit_opts *o, cm_fit_result *res, rt_err *err);

/* One measured schedule: its workload, configuration and time. */
typedef struct cm_sample {
  const kn_problem *pb;
  const sp_space *sp;
  const int *cfg;
  double t;                     /* seconds */
} cm_sample;
/* Fit kernel model k's coefficients to n measured schedules (of one or
** several workloads). c holds the start (usually the defaults) and gets
** the result; fixed[j] != 0 keeps coefficient j (NULL: the table's hold
** flags). Residuals are log(predicted) - log(measured). */
int cm_calibrate(const cm_kmodel *k, const cm_sample *s, int n, const cm_ceilings *ce,
                 int flush, cm_coefs *c, const int *fixed, cm_fit_result *res,
                 rt_err *err);
/* The same with a cap on the solver's work (the tuner's quick refits):
** max_iter iterations per solve and max_rounds reweighted solves. */
int cm_calibrate_capped(const cm_kmodel *k, const cm_sample *s, int n, const cm_ceilings *ce,
                        int flush, cm_coefs *c, const int *fixed, int max_iter,
                        int max_rounds, cm_fit_result *res, rt_err *err);

/* ---- A model as the tuner sees it (cm_tune.c): tu.h's predict and
** refit hooks over one workload of one kernel on one target ---- */
typedef struct cm_tmodel cm_tmodel;
/* Copies ce and c; pb and sp must outlive the model. */
cm_tmodel *cm_tmodel_new(const cm_kmodel *k, const kn_problem *pb, const sp_space *sp,
                         const cm_ceilings *ce, const cm_coefs *c, int flush);
void cm_tmodel_free(cm_tmodel *m);                  /* NULL is a no-op */
int cm_tmodel_predict(void *m, const int *cfgs, int n, double *t);
/* tu.h's sigma hook: each schedule's uncertainty (cm_unc_sigma of its
** limiting bound under the calibration the model was made with). */
int cm_tmodel_sigma(void *m, const int *cfgs, int n, double *s);
/* Calibrate from the model's first coefficients on the n results. */
int cm_tmodel_refit(void *m, const int *cfgs, const double *t, int n);
const cm_coefs *cm_tmodel_coefs(const cm_tmodel *m);
int cm_tmodel_refits(const cm_tmodel *m);           /* successful refits */
/* Back to the coefficients it was made with (a new run starts afresh). */
void cm_tmodel_reset(cm_tmodel *m);

/* ---- What the database keeps for the model (defined in tuner/tu_store.c:
** loading measures missing ceilings through the target's backend) ---- */
struct db;
/* The latest ceilings of a target (named target: an instance name). None
** stored: with measure set, measure them now (the target's bench,
** tg_bench, default options; a note on stderr) and store
** them, *fresh = 1; otherwise -1 with err saying how to measure them. */
int cm_ceilings_load(struct db *d, int64_t target_id, const char *target, int measure,
                     cm_ceilings *ce, int *fresh, rt_err *err);
/* Version `version` (0: the latest) of kernel k's coefficients on a target
** into c; none stored and version 0: the defaults (c->version 0). */
int cm_coefs_load(struct db *d, int64_t target_id, const cm_kmodel *k, int version,
                  cm_coefs *c, rt_err *err);
/* The tuner's model of a workload on a target: ceilings (measured now if
** missing) and the latest calibration. NULL with err. */
cm_tmodel *cm_tmodel_open(struct db *d, int64_t target_id, const char *target,
                          const char *kernel, const kn_problem *pb, const sp_space *sp,
                          int flush, rt_err *err);

/* ---- Uncertainty (cm_unc.c; invariant 6) ---- */
void cm_unc_none(cm_unc *u);                      /* unknown: all NAN, n 0 */
/* u from the residuals r[i] = log(measured_i / predicted_i) of n schedules
** limited by bound[i]; held_out as the schedules were. */
void cm_unc_from(cm_unc *u, const double *r, const cm_bound *bound, int n, int held_out);
/* The uncertainty of a prediction limited by bound b: bound[b] when
** known, else all (NAN: unknown). */
double cm_unc_sigma(const cm_unc *u, cm_bound b);
/* u as a JSON object {"log_sd", "n", "on": "held-out"|"fitted", "by_bound":
** {NAME: {"log_sd", "n"}}} (malloc'ed); and back from a calibration's fit
** record that holds it under "uncertainty" (absent: unknown, 0). 0, or -1
** with err when the record is not JSON or the object is malformed. */
char *cm_unc_json(const cm_unc *u);
int cm_unc_parse_fit(const char *fit_json, cm_unc *u, rt_err *err);

/* ---- Accuracy of a ranking (cm_metrics.c) ---- */
double cm_spearman(const double *x, const double *y, int n);   /* ties: mid-ranks */
double cm_kendall(const double *x, const double *y, int n);    /* tau-b */
/* 1 when some item among the k smallest pred[] has actual[] within
** (1 + tol) of the smallest actual[]; 0 otherwise. */
int cm_topk_hit(const double *pred, const double *actual, int n, int k,
                double tol);
/* Median over items of |pred - actual| / actual. */
double cm_median_rel_err(const double *pred, const double *actual, int n);

/* ---- Counted cache traffic (as a backend counts it) ---- */
typedef struct cm_traffic {
  char source[16];              /* the counter source (tg_traffic.source) */
  double bytes[CM_NLEVEL];      /* as cm_work.bytes (NAN: not counted) */
  double instructions;          /* NAN when not counted */
  char config[160];             /* how it was counted (cache geometry) */
} cm_traffic;
/* Counting traffic is a backend operation (tg_backend.traffic_count,
** under targets/). */

#endif
