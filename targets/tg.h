/*
** tg.h -- the target table: where code can run. Each target describes
** itself as ordered key/value pairs (hardware, toolchain) plus a
** fingerprint that identifies results measured on it. The host CPU is the
** first target; the CUDA target joins the table in its own issue.
*/
#ifndef TG_H
#define TG_H

#include "../common/rt.h"

#define TG_MAXKV 32

typedef struct tg_desc {
  int n;
  char key[TG_MAXKV][32];
  char val[TG_MAXKV][256];
  char fingerprint[33];   /* hex hash of what makes results comparable */
} tg_desc;

typedef struct tg_target {
  const char *name;       /* "host" */
  const char *summary;
  /* Describe the target; -1 with err when it is not available here. */
  int (*describe)(tg_desc *d, rt_err *err);
} tg_target;

extern const tg_target tg_targets[];        /* ends with a NULL name */
const tg_target *tg_find(const char *name);  /* NULL if unknown */
void tg_desc_add(tg_desc *d, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *tg_desc_get(const tg_desc *d, const char *key); /* "" if absent */
/* The description as a JSON object of its key/value pairs, in order
** (caller frees). */
char *tg_desc_json(const tg_desc *d);

/* The host CPU (targets/host/hw.c). */
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
