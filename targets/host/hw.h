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

/* The host CPU's description pairs (hw.c): model, cpus (online),
** usable_cpus (this process's affinity), cores, numa_nodes, isa,
** simd_bits, the data/unified caches (L1d, L2, L3: size and sharing CPUs),
** compiler, cflags. The fingerprint is tg_describe's (tg.h). */
int hw_describe(tg_desc *d, rt_err *err);

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
