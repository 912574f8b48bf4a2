/*
** tm_backend.c -- the model row of the backend table: `model:FILE`, a
** machine described by a file (tm.h) rather than present. Its instances
** work as the backend the file borrows: tg_resolve replaces the row by an
** instance row (tg_backend.instance_row) made here per loaded file, this
** row with the borrowed row's kernels (its code generation), model family,
** family and kind of device; its own operations are the file's: describe
** (the file's pairs and its content hash), bench (the file's ceilings),
** limit bindings (the file's), model_setup (the borrowed row's hook), and
** a measure that runs nothing. The registry of loaded files (tm.h
** invariant 5) lives here.
*/
#include "tm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../measure/ms.h"

/* ---- The registry (tm.h invariant 5) ---- */
typedef struct slot {
  tm_file *f;
  tg_backend row;               /* the instance row: the borrowed row with ours */
  char name[TG_NAME];           /* canonical instance name */
} slot;
static slot reg[TM_MAXFILES];
static int nreg;

#define PREFIX TM_ROW_NAME ":"

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* The slot of canonical name or path, else -1. */
static int find_slot(const char *name, const char *path) {
  for (int i = 0; i < nreg; i++)
    if (!strcmp(reg[i].name, name) || !strcmp(reg[i].f->path, path)) return i;
  return -1;
}

/* "model:PATH", or "model:BASE" when that does not fit (invariant 5). */
static int canonical(const char *path, char out[TG_NAME], rt_err *err) {
  if (strlen(PREFIX) + strlen(path) < TG_NAME) {
    snprintf(out, TG_NAME, PREFIX "%s", path);
    return 0;
  }
  if (strlen(PREFIX) + strlen(base_name(path)) < TG_NAME) {
    snprintf(out, TG_NAME, PREFIX "%s", base_name(path));
    return 0;
  }
  rt_err_set(err, "%s: a description file's name of at most %d characters", path,
             (int)(TG_NAME - strlen(PREFIX) - 1));
  return -1;
}

/* Load path into a new slot (or find it loaded); its index, or -1. */
static int load_slot(const char *path, rt_err *err) {
  char name[TG_NAME];
  if (canonical(path, name, err)) return -1;
  int i = find_slot(name, path);
  if (i >= 0) {
    if (strcmp(reg[i].f->path, path)) {
      rt_err_set(err, "%s: another description file of that name is loaded (%s): give a path of at "
                      "most %d characters", path, reg[i].f->path, (int)(TG_NAME - strlen(PREFIX) - 1));
      return -1;
    }
    return i;
  }
  if (nreg == TM_MAXFILES) {
    rt_err_set(err, "%s: at most %d description files in one run", path, TM_MAXFILES);
    return -1;
  }
  tm_file *f = rt_malloc(sizeof *f);
  if (tm_load(path, f, err)) {
    free(f);
    return -1;
  }
  reg[nreg].f = f;
  snprintf(reg[nreg].name, sizeof reg[nreg].name, "%s", name);
  return nreg++;
}

const tm_file *tm_file_of(const tg_target *t) {
  if (!t || !t->be || strcmp(t->be->name, TM_ROW_NAME) || t->idx[0] < 0 || t->idx[0] >= nreg)
    return NULL;
  return reg[t->idx[0]].f;
}

/* ---- The row's operations ---- */

/* "model:FILE": the file is read and checked here (a name that cannot be
** described is refused at once, naming the file and field). */
static int model_parse(const char *name, tg_target *t, rt_err *err) {
  if (strncmp(name, PREFIX, strlen(PREFIX))) return 0;
  const char *path = name + strlen(PREFIX);
  if (!*path) {
    rt_err_set(err, "target '%s': expected " PREFIX "FILE, FILE a target description (README: "
                    "\"Target description files\")", name);
    return -1;
  }
  int i = find_slot(name, path);   /* a canonical name of a file loaded before */
  if (i < 0 && (i = load_slot(path, err)) < 0) return -1;
  t->idx[0] = i;
  snprintf(t->name, sizeof t->name, "%s", reg[i].name);
  return 1;
}

/* The description file rooftune ships (targets/model/h200.json). */
static int model_list(tg_target *t, int max) {
  if (max < 1) return 0;
  char path[PATH_MAX];
  rt_err err = {0};
  int i = load_slot(rt_project_path("targets/model/h200.json", path, sizeof path), &err);
  if (i < 0) return 0;
  memset(t, 0, sizeof *t);
  t->be = &tm_backend;
  t->idx[0] = i;
  snprintf(t->name, sizeof t->name, "%s", reg[i].name);
  return 1;
}

/* The file's pairs, then what it borrows and its content hash (tm.h
** invariant 3): the fingerprint follows the content. */
static int model_describe(const tg_target *t, tg_desc *d, rt_err *err) {
  const tm_file *f = t->idx[0] >= 0 && t->idx[0] < nreg ? reg[t->idx[0]].f : NULL;
  if (!f) {
    rt_err_set(err, "%s: no description file loaded", t->name);
    return -1;
  }
  *d = f->desc;
  tg_desc_add(d, "model_target", "%s", f->name);
  tg_desc_add(d, "borrows", "%s", f->borrows);
  tg_desc_add(d, "description_hash", "%s", f->hash);
  return 0;
}

static const char *model_provenance(const tg_target *t) {
  return t->idx[0] >= 0 && t->idx[0] < nreg ? reg[t->idx[0]].f->provenance : NULL;
}

static const char *model_compiler(const tg_target *t, char *buf, size_t cap) {
  (void)t;
  snprintf(buf, cap, "none (a model-only target builds nothing)");
  return buf;
}

static void model_build_key(const tg_target *t, const char *src, const char *ldflags,
                            const ms_opts *o, char key[33]) {
  (void)o;
  rt_hash h = rt_hash_bytes(RT_HASH_INIT, t->name, strlen(t->name) + 1);
  h = rt_hash_bytes(h, src ? src : "", src ? strlen(src) + 1 : 1);
  rt_hash_hex(rt_hash_bytes(h, ldflags ? ldflags : "", ldflags ? strlen(ldflags) : 0), key);
}

static void model_prebuild(const tg_target *t, const char *const *srcs, int n,
                           const char *ldflags, const ms_opts *o, int jobs) {
  (void)t, (void)srcs, (void)n, (void)ldflags, (void)o, (void)jobs;
}

/* A model target runs nothing: every candidate is a harness failure
** saying so (nothing is stored from it). */
static int model_measure(const tg_target *t, ms_workload *w, const char *src,
                         const char *ldflags, const ms_opts *o, ms_result *r) {
  (void)w, (void)src, (void)ldflags, (void)o;
  memset(r, 0, sizeof *r);
  r->status = MS_RUNTIME_ERROR;
  snprintf(r->msg, sizeof r->msg,
           "%s is a model-only target: it runs no code (tune --strategy model stores predictions)",
           t->name);
  return -1;
}

static int model_counters(const tg_target *t, const char **why) {
  (void)t;
  if (why) *why = "a model-only target runs nothing to count";
  return 0;
}

/* The file's ceilings: nothing is measured. */
static int model_bench(const tg_target *t, const cm_bench_opts *o, cm_ceilings *c, rt_err *err) {
  (void)o;
  const tm_file *f = t->idx[0] >= 0 && t->idx[0] < nreg ? reg[t->idx[0]].f : NULL;
  if (!f) {
    rt_err_set(err, "%s: no description file loaded", t->name);
    return -1;
  }
  *c = f->ce;
  return 0;
}

static const char *model_traffic_source(const tg_target *t, int here, const char **why) {
  (void)t, (void)here;
  if (why) *why = "a model-only target counts no traffic (the model's own bytes are used)";
  return NULL;
}

static int model_limits(const tg_target *t, const char *user_set, rt_str *out, rt_err *err) {
  (void)err;
  const char *b = reg[t->idx[0]].f->limits;
  while (*b) {   /* "VAR=VAL,VAR=VAL" (tm.c) */
    size_t n = strcspn(b, ","), eq = strcspn(b, "=");
    char var[64];
    snprintf(var, sizeof var, "%.*s", (int)(eq < sizeof var ? eq : sizeof var - 1), b);
    if (!tg_binds(user_set, var))
      rt_str_printf(out, "%s%.*s", out->s && out->s[0] ? "," : "", (int)n, b);
    b += n + (b[n] == ',');
  }
  return 0;
}

/* The borrowed row's hook, for the device the file's ceilings describe
** (the CUDA row: register counts from cubins NVRTC builds without a GPU). */
static void model_setup(const tg_target *t, const cm_ceilings *ce, const char *cache_dir,
                        int compile) {
  const tg_backend *be = reg[t->idx[0]].f->be;
  if (!be || !be->model_setup) return;
  tg_target bt = {.be = be};
  snprintf(bt.name, sizeof bt.name, "%s", be->name);
  be->model_setup(&bt, ce, cache_dir, compile);
}

/* The instance row of t's file: this row with the borrowed row's kernels,
** model family, family and kind of device (tg_backend.instance_row). */
static const tg_backend *model_instance_row(const tg_target *t,
                                            const tg_backend *(*find)(const char *name),
                                            rt_err *err) {
  slot *s = &reg[t->idx[0]];
  if (!s->f->be && tm_row(s->f, find, err)) return NULL;
  if (!s->row.name) {   /* the model row, with what it borrows */
    const tg_backend *be = s->f->be;
    s->row = tm_backend;
    s->row.gpu = be->gpu;
    s->row.family = be->family;
    s->row.model_family = be->model_family;
    s->row.kernels = be->kernels;
    s->row.instance_row = NULL;
  }
  return &s->row;
}

static const struct kn_kernel *const no_kernels[] = {NULL};
static const tg_traffic no_traffic[] = {{NULL, 0}};
static const char *const no_events[] = {NULL};

/* The row as the table lists it: instances get their instance row
** (model_instance_row), so its kernels and model family are those of
** the file's borrowed backend. */
const tg_backend tm_backend = {
  .name = TM_ROW_NAME,
  .summary = "a machine described by a file (ceilings, limits, provenance): predictions only, "
             "with the code generation and models of the backend it borrows",
  .syntax = TM_ROW_NAME ":FILE",
  .gpu = 0,
  .model_only = 1,
  .parse = model_parse,
  .list = model_list,
  .describe = model_describe,
  .provenance = model_provenance,
  .family = NULL,
  .test_fingerprint_env = NULL,
  .compiler = model_compiler,
  .build_key = model_build_key,
  .prebuild = model_prebuild,
  .measure = model_measure,
  .measure_batch = NULL,
  .counter_source = "none",
  .counters_available = model_counters,
  .default_events = no_events,
  .counted_traffic = NULL,
  .bench = model_bench,
  .model_family = "",
  .traffic = no_traffic,
  .traffic_source = model_traffic_source,
  .traffic_count = NULL,
  .limit_bindings = model_limits,
  .kernels = no_kernels,
  .model_setup = model_setup,
  .gpu_reading = NULL,
  .instance_row = model_instance_row,
};
