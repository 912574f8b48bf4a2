/*
** tm.h -- model-only targets: a machine described by a JSON file instead
** of measured here. The file names the backend whose code generation,
** kernels and model family it borrows, the ceilings its models use (what
** `rooftune bench --json` prints), the description pairs that backend's
** family reads, the limits its spaces bind and where every number comes
** from. `model:FILE` is the target (tm_backend.c: its row); it describes
** and predicts, it never runs code.
**
** The file (README.md "File formats", format version 1):
**   {"rooftune_target": 1,
**    "name": "NVIDIA H200 (measured)",        a label, 1..63 characters
**    "borrows": "cuda",                       a backend row's name
**    "ceilings": {...},                       cm_ceilings_json's text; a GPU
**                                             family's needs its "gpu" member
**    "describe": {"device": "NVIDIA H200", ...},  string pairs for the
**                                             borrowed row's family
**    "limits": {"max_threads": 1024, ...},    integers binding the spaces'
**                                             declared limits (may be {})
**    "provenance": {"ceilings": "measured on ... by rooftune bench on ...",
**                   "describe": "...", ...}}  where each field comes from
** Every member is required; no other member is allowed.
**
** Invariants:
**  1. tm_load reads and checks the whole file before returning; an error
**     names the file and the JSON field ("h200.json: ceilings.bw.DRAM:
**     expected an array of 2 numbers") and leaves *f zeroed.
**  2. tm_load depends on common/, tg_desc and cm_ceilings_parse only: it
**     does not look the borrowed name up in the backend table (a row may
**     call it without a circle of files); tm_row does, given the table's
**     look-up.
**  3. The content hash (tm_file.hash) is FNV-1a 128 of the file's
**     canonical JSON (keys sorted, compact, reals with 17 digits): the same
**     content is the same target whatever its spacing, two different
**     contents are two targets. The row adds it to the description as
**     the pair "description_hash", so the fingerprint follows it.
**  4. provenance has a string for "ceilings" at least; each of its keys is
**     a top-level member or a dotted path starting with one
**     ("ceilings.bw.DRAM", "limits.max_smem").
**  5. A model target's instance (tg_target) carries no path: idx[0] is a
**     slot of the process's registry of loaded files (tm_backend.c), at
**     most TM_MAXFILES; name is "model:" + the path as given when that
**     fits TG_NAME, else "model:" + the file's base name (the registry
**     maps it back in this process; another process must be given the
**     path again).
*/
#ifndef TM_H
#define TM_H

#include <limits.h>

#include "../../common/rt.h"
#include "../../cost_model/cm.h"
#include "../tg_backend.h"
#include "../tg_desc.h"

#define TM_VERSION 1           /* "rooftune_target" */
#define TM_ROW_NAME "model"     /* the row's name: "model:FILE" */
#define TM_MAXFILES 16         /* description files one process loads */
#define TM_MAXPAIRS (TG_MAXKV - 4)   /* room for the row's own pairs */

typedef struct tm_file {
  char path[PATH_MAX];          /* as given to tm_load */
  char name[64];                /* "name" */
  char borrows[32];             /* "borrows": a backend row's name */
  const tg_backend *be;         /* that row (tm_row); NULL after tm_load */
  cm_ceilings ce;               /* "ceilings" */
  tg_desc desc;                 /* "describe" (fingerprint, family unset) */
  char limits[1024];            /* "limits" as "VAR=VAL,VAR=VAL" ("" none) */
  char provenance[4096];        /* "provenance" as compact JSON */
  char hash[33];                /* invariant 3 */
} tm_file;

/* Read and check description file path into *f (invariant 1). 0, or -1
** with err "PATH: FIELD: what is wrong". */
int tm_load(const char *path, tm_file *f, rt_err *err);
/* Check it from text (path only names it in errors). */
int tm_parse(const char *path, const char *text, tm_file *f, rt_err *err);
/* Set f->be to the borrowed row through find (the table's look-up by
** name, tg.h's tg_backend_find). 0, or -1 with err "PATH: borrows: ..."
** when no row has that name or the row cannot be borrowed (a model row). */
int tm_row(tm_file *f, const tg_backend *(*find)(const char *name), rt_err *err);

/* The row of model-only targets (tm_backend.c). */
extern const tg_backend tm_backend;
/* The loaded file of a model target's instance (invariant 5), or NULL
** when t is not one. */
const tm_file *tm_file_of(const tg_target *t);

#endif
