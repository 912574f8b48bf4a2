/*
** tg_desc.h -- a target's description: ordered key/value pairs (hardware,
** toolchain) and the fingerprint that identifies results measured on it.
** Backends fill the pairs (tg_backend.describe); tg.c computes the
** fingerprint with one recipe for every backend (tg.h says which).
*/
#ifndef TG_DESC_H
#define TG_DESC_H

#define TG_MAXKV 32

/* A target's family chain from specific to general, after its
** fingerprint: device model, architecture, backend (tg.h: "Families").
** "" where the description does not tell. */
typedef struct tg_family {
  char model[256];        /* "NVIDIA H200", the CPU's model name */
  char arch[128];         /* "sm_90", "x86-64 AVX-512" */
  char backend[32];       /* the row's name: "host", "cuda" */
} tg_family;

typedef struct tg_desc {
  int n;
  char key[TG_MAXKV][32];
  char val[TG_MAXKV][256];
  char fingerprint[33];   /* hex hash of what makes results comparable
                          ** (tg.h: the recipe) */
  tg_family family;       /* filled by tg_describe (not hashed, not in
                          ** tg_desc_json: the fingerprint is unchanged) */
} tg_desc;

/* Append key = printf(fmt, ...); ignored when d is full. */
void tg_desc_add(tg_desc *d, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *tg_desc_get(const tg_desc *d, const char *key); /* "" if absent */
/* The description as a JSON object of its key/value pairs, in order
** (caller frees). */
char *tg_desc_json(const tg_desc *d);

/* The pairs of a description's JSON object (as tg_desc_json writes it:
** string values) into d (emptied first; the fingerprint is not set).
** 0, or -1 when the text is not a flat object of strings. */
int tg_desc_parse(const char *json, tg_desc *d);

/* Whether "VAR=" starts one of the comma-separated bindings of set (NULL:
** none): for a row's limit_bindings (tg_backend.h). */
int tg_binds(const char *set, const char *var);

#endif
