/*
** tg_desc.h -- a target's description: ordered key/value pairs (hardware,
** toolchain) and the fingerprint that identifies results measured on it.
** Backends fill the pairs (tg_backend.describe); tg.c computes the
** fingerprint with one recipe for every backend (tg.h says which).
*/
#ifndef TG_DESC_H
#define TG_DESC_H

#define TG_MAXKV 32

typedef struct tg_desc {
  int n;
  char key[TG_MAXKV][32];
  char val[TG_MAXKV][256];
  char fingerprint[33];   /* hex hash of what makes results comparable
                          ** (tg.h: the recipe) */
} tg_desc;

/* Append key = printf(fmt, ...); ignored when d is full. */
void tg_desc_add(tg_desc *d, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *tg_desc_get(const tg_desc *d, const char *key); /* "" if absent */
/* The description as a JSON object of its key/value pairs, in order
** (caller frees). */
char *tg_desc_json(const tg_desc *d);

/* Whether "VAR=" starts one of the comma-separated bindings of set (NULL:
** none): for a row's limit_bindings (tg_backend.h). */
int tg_binds(const char *set, const char *var);

#endif
