/*
** hw.h -- the host CPU backend: its description (hw.c), cache geometry,
** and its row of the backend table (hw_backend.c).
*/
#ifndef HW_H
#define HW_H

#include "../../measure/ms.h"
#include "../tg_backend.h"

/* The host row (tg_table.c lists it). */
extern const tg_backend hw_backend;

/* The host's worker (hw_worker.c): the row's measure -- C source into a
** shared object (ms_build), run, verified and timed in the isolated child
** (measure/ms.h, ms_backend.h); src NULL measures the kernel's reference;
** PAPI counts in a second child with o->counters. 0, or -1 for harness
** failures. */
int hw_measure(ms_workload *w, const char *src, const char *ldflags, const ms_opts *o,
               ms_result *r);

/* PAPI (hw_papi.c): whether this machine has counters (probed once; *why
** says why not), the default events (NULL-terminated), and the counting
** of events names[0..nev-1] over one call fn(ctx) in this process
** (initialises PAPI; the worker child calls it). 0: vals filled; -1 with
** err. */
int hw_papi_available(const char **why);
extern const char *const hw_papi_default_events[];
int hw_papi_count(char names[][MS_EVNAME], int nev, void (*fn)(void *ctx), void *ctx,
                  long long *vals, rt_err *err);

/* Measure the host's ceilings (hw_bench.c; the row's bench). 0, or -1
** with err. */
struct cm_bench_opts;
struct cm_ceilings;
int hw_bench(const struct cm_bench_opts *o, struct cm_ceilings *c, rt_err *err);

/* ---- Counted cache traffic (hw_count.c; the row's traffic_count) ---- */
struct cm_machine;
struct cm_traffic;
/* Count the traffic of one run of schedule src of workload (k, pb) under
** cachegrind with the caches of m (two runs: last level = L2, then L3),
** building src for an ISA valgrind decodes. 0, or -1 with err. */
int hw_count_cachegrind(const kn_kernel *k, const kn_problem *pb,
                        const char *src, const struct cm_machine *m,
                        const char *cache_dir, struct cm_traffic *tr, rt_err *err);
/* Whether cachegrind can be used here (*why says why not). */
int hw_cachegrind_available(const char **why);
/* Run src once natively, built as hw_count_cachegrind builds it (x86-64-v3
** with the AVX-512 shim cost_model/cm_shim512.h) under the same driver, on
** k's buffers bufs: inputs as given, outputs get the results (shows that
** the shim computes what the AVX-512 build computes). 0, or -1 with err. */
int hw_run_shimmed(const kn_kernel *k, const kn_problem *pb, const char *src,
                   const char *cache_dir, float *const *bufs, rt_err *err);
/* Count misses of one warm run of src with PAPI through the harness's
** counter pass (hw_measure with o, counters on; PAPI_L1_DCM, PAPI_L2_TCM,
** PAPI_L3_TCM times the line size; the calling thread only). -1 with err
** "no hardware counters: ..." where there are none (then use cachegrind). */
int hw_count_papi(const kn_kernel *k, const kn_problem *pb, const char *src,
                  const ms_opts *o, struct cm_traffic *tr, rt_err *err);

/* The host CPU's description pairs (hw.c): model, cpus (online),
** usable_cpus (this process's affinity), cores, numa_nodes, isa,
** simd_bits, the data/unified caches (L1d, L2, L3: size and sharing CPUs),
** compiler, cflags. The fingerprint is tg_describe's (tg.h). */
int hw_describe(tg_desc *d, rt_err *err);
/* The family's model and architecture from a host description's pairs
** (tg_backend.h family): the CPU's model name ("" when unknown) and
** "x86-64 " with the widest SIMD extension among its isa flags (AVX-512,
** AVX2, AVX, SSE4.2; "" with none of them, as on other machines). */
void hw_family(const tg_desc *d, tg_family *f);

/* One of cpu0's caches as sysfs lists it (the text as sysfs writes it,
** and parsed: bytes 0 when unreadable, ways 0 when unknown). */
typedef struct hw_cache {
  int level;                 /* 1, 2, 3, ... */
  int instruction;           /* 1: an instruction cache */
  char type[16], size[16], shared[64];   /* "Data", "48K", "0-1" */
  double bytes;
  int ways;
  int sharers;               /* CPUs in shared (at least 1) */
} hw_cache;
/* cpu0's caches in sysfs index order, at most max into c; how many. */
int hw_caches(hw_cache *c, int max);
/* The data or unified (instr: the instruction) cache of a level, or NULL. */
const hw_cache *hw_cache_find(const hw_cache *c, int n, int level, int instr);

#endif
