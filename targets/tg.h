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

#endif
