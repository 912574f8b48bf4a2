/*
** uk_kernel.c -- the registry of loaded T1 kernels (uk.h invariant 8):
** one slot each, whose kn_kernel functions are generated trampolines that
** call uk_eval.c with the slot's spec; the space of the last workload's
** bindings kept per slot; tg_kernel (targets/tg.c) searches it.
*/
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uk.h"
#include "../../cost_model/cm.h"

typedef struct uk_slot {
  uk_spec *s;
  kn_kernel k;
  cm_kmodel model;   /* its cost model: the stated work (cost_model/cm_stated.c) */
  char summary[160];
  sp_space *sp;      /* the space for the bindings of sp_key */
  char *sp_key;
} uk_slot;

static uk_slot slots[UK_SLOTS];

/* The space of workload pb (loaded with its bindings; the last one kept);
** NULL with err. */
static sp_space *slot_space(uk_slot *sl, const kn_problem *pb, rt_err *err) {
  rt_str key = {0};
  sp_binding *b = rt_calloc((size_t)pb->n + 1, sizeof *b);
  int nb = 0;
  rt_str_printf(&key, "=");
  for (int i = 0; i < pb->n; i++) {
    char buf[256];
    sx_repr(&pb->val[i], buf, sizeof buf);
    rt_str_printf(&key, "%s=%s\n", pb->name[i], buf);
    for (int v = 0; v < sl->s->nv; v++)
      if (!strcmp(sl->s->vname[v], pb->name[i]) && strlen(pb->name[i]) < sizeof b->name) {
        snprintf(b[nb].name, sizeof b[nb].name, "%s", pb->name[i]);
        b[nb++].value = pb->val[i];
      }
  }
  if (!sl->sp || strcmp(key.s, sl->sp_key)) {
    sp_free(sl->sp);
    free(sl->sp_key);
    sl->sp = sp_load_string(sl->s->text, sl->s->path, b, nb, err);
    sl->sp_key = sl->sp ? key.s : NULL;
    if (!sl->sp) free(key.s);
  } else {
    free(key.s);
  }
  free(b);
  return sl->sp;
}

static int sl_buffers(uk_slot *sl, const kn_problem *pb, kn_buf *b) {
  sp_space *sp = slot_space(sl, pb, NULL);
  if (sp) {
    uk_buffers(sl->s, pb, sp, b, NULL);
  } else {
    for (int i = 0; i < sl->s->narg; i++) b[i] = (kn_buf){.name = sl->s->arg[i].name, .n = -1};
  }
  return sl->s->narg;
}

static double sl_work(uk_slot *sl, const kn_problem *pb, int which) {
  sp_space *sp = slot_space(sl, pb, NULL);
  if (!sp) return 0;
  if (which && !sl->s->bytes) {   /* invariant 6 */
    kn_buf b[KN_MAXBUF];
    double bytes = 0;
    uk_buffers(sl->s, pb, sp, b, NULL);
    for (int i = 0; i < sl->s->narg; i++)
      if ((b[i].kind == KN_VECTOR || b[i].kind == KN_SYMBOL) && b[i].n > 0)
        bytes += (double)b[i].n * (double)kn_elem_size(b[i].elem) * (b[i].inout ? 2 : 1);
    return bytes;
  }
  double v = uk_work(sl->s, pb, sp, which, NULL);
  return isnan(v) ? 0 : v;
}

static char *sl_devref(uk_slot *sl, const kn_problem *pb) {
  rt_err err = {0};
  sp_space *sp = slot_space(sl, pb, &err);
  int *cfg = sp ? rt_calloc((size_t)sp_nparams(sp) + 1, sizeof *cfg) : NULL;
  char *src;
  if (sp && !uk_reference_config(sl->s, sp, cfg, &err)) {
    src = uk_codegen(sl->s, pb, sp, cfg);
  } else {
    rt_str o = {0};
    rt_str_printf(&o, "// rooftune T1 kernel %s: no reference\n#error rooftune: ", sl->s->name);
    for (const char *c = err.msg; *c; c++) rt_str_printf(&o, "%c", *c == '\n' ? ' ' : *c);
    rt_str_printf(&o, "\n");
    src = o.s;
  }
  free(cfg);
  return src;
}

/* The cost model's work of cfg: the stated FLOPs and bytes of the
** workload (invariant 6) with cfg's blocks (invariant 3) over the device's
** units. */
static int sl_model(uk_slot *sl, const kn_problem *pb, const sp_space *sp, const int *cfg,
                    const cm_machine *m, cm_work *w, rt_err *err) {
  uk_geom g;
  if (uk_geometry(sl->s, pb, sp, cfg, &g, err)) return -1;
  cm_stated_work(sl_work(sl, pb, 0), sl_work(sl, pb, 1),
                 (double)g.blocks[0] * (double)g.blocks[1] * (double)g.blocks[2], m, w);
  return 0;
}

#define UK_TRAMPOLINES(i)                                                                          \
  static int buffers_##i(const kn_problem *pb, kn_buf *b) { return sl_buffers(&slots[i], pb, b); } \
  static char *codegen_##i(const kn_problem *pb, const sp_space *sp, const int *cfg) {             \
    return uk_codegen(slots[i].s, pb, sp, cfg);                                                    \
  }                                                                                                \
  static double flops_##i(const kn_problem *pb) { return sl_work(&slots[i], pb, 0); }              \
  static double bytes_##i(const kn_problem *pb) { return sl_work(&slots[i], pb, 1); }              \
  static char *devref_##i(const kn_problem *pb) { return sl_devref(&slots[i], pb); }              \
  static int model_##i(const kn_problem *pb, const sp_space *sp, const int *cfg,                   \
                       const cm_machine *m, const cm_coefs *c, cm_work *w, rt_err *err) {          \
    (void)c;                                                                                       \
    return sl_model(&slots[i], pb, sp, cfg, m, w, err);                                            \
  }
UK_TRAMPOLINES(0)
UK_TRAMPOLINES(1)
UK_TRAMPOLINES(2)
UK_TRAMPOLINES(3)
UK_TRAMPOLINES(4)
UK_TRAMPOLINES(5)
UK_TRAMPOLINES(6)
UK_TRAMPOLINES(7)

static const struct {
  int (*buffers)(const kn_problem *, kn_buf *);
  char *(*codegen)(const kn_problem *, const sp_space *, const int *);
  double (*flops)(const kn_problem *), (*bytes)(const kn_problem *);
  char *(*devref)(const kn_problem *);
  int (*model)(const kn_problem *, const sp_space *, const int *, const cm_machine *,
               const cm_coefs *, cm_work *, rt_err *);
} fns[] = {
#define UK_FNS(i) {buffers_##i, codegen_##i, flops_##i, bytes_##i, devref_##i, model_##i}
  UK_FNS(0), UK_FNS(1), UK_FNS(2), UK_FNS(3), UK_FNS(4), UK_FNS(5), UK_FNS(6), UK_FNS(7),
#undef UK_FNS
};
_Static_assert(sizeof fns / sizeof *fns == UK_SLOTS, "one set of trampolines per slot");
_Static_assert(UK_SLOTS <= CM_MAXADDED, "every loaded T1 kernel registers its cost model");

const kn_kernel *uk_find(const char *backend, const char *name) {
  for (int i = 0; i < UK_SLOTS; i++)
    if (slots[i].s && !strcmp(uk_spec_backend(slots[i].s), backend) && !strcmp(slots[i].s->name, name))
      return &slots[i].k;
  return NULL;
}

const kn_kernel *uk_load(const char *path, const char *kernel_dir, const sp_binding *set, int nset,
                         rt_err *err) {
  uk_spec *s = uk_spec_load(path, kernel_dir, set, nset, err);
  if (!s) return NULL;
  const kn_kernel *old = uk_find(uk_spec_backend(s), s->name);
  int i = 0;
  while (i < UK_SLOTS && slots[i].s) i++;
  if (old || i == UK_SLOTS) {
    if (old) rt_err_set(err, "%s: a T1 kernel named %s for %s is loaded already (from %s)", path, s->name,
                        uk_spec_backend(s), uk_spec_of(old)->path);
    else rt_err_set(err, "%s: %d T1 kernels are loaded already (rooftune's limit, UK_SLOTS)", path, UK_SLOTS);
    uk_spec_free(s);
    return NULL;
  }
  uk_slot *sl = &slots[i];
  sl->s = s;
  snprintf(sl->summary, sizeof sl->summary, "%s kernel %s from the T1 file %s",
           s->lang == UK_CUDA ? "CUDA" : "OpenCL", s->kernel_name, s->path);
  sl->k = (kn_kernel){.name = s->name, .summary = sl->summary, .space = s->path, .dtype = s->dtype,
                      .sizes = "", .buffers = fns[i].buffers, .codegen = fns[i].codegen,
                      .reference = NULL, .flops = fns[i].flops, .min_bytes = fns[i].bytes,
                      .tolerance = NULL, .atol = s->atol, .rtol = s->rtol, .baseline = NULL,
                      .device_reference = fns[i].devref};
  /* its model serves every family: it is registered for as long as it is
  ** loaded (uk_unload), and the slots are as many as the added models */
  sl->model = (cm_kmodel){.kernel = s->name, .family = "*", .ncoef = CM_STATED_NCOEF,
                          .coefs = cm_stated_coefs, .work = fns[i].model};
  if (cm_kmodel_register(&sl->model)) {
    rt_err_set(err, "%s: no room for its cost model (CM_MAXADDED models are registered)", path);
    uk_spec_free(s);
    memset(sl, 0, sizeof *sl);
    return NULL;
  }
  return &sl->k;
}

uk_spec *uk_spec_of(const kn_kernel *k) {
  for (int i = 0; i < UK_SLOTS; i++)
    if (k && slots[i].s && k == &slots[i].k) return slots[i].s;
  return NULL;
}

void uk_set_tolerance(const kn_kernel *k, double atol, double rtol) {
  for (int i = 0; i < UK_SLOTS; i++)
    if (k && slots[i].s && k == &slots[i].k) {
      slots[i].k.atol = slots[i].s->atol = atol;
      slots[i].k.rtol = slots[i].s->rtol = rtol;
    }
}

void uk_unload(const kn_kernel *k) {
  for (int i = 0; i < UK_SLOTS; i++)
    if (k && slots[i].s && k == &slots[i].k) {
      cm_kmodel_unregister(&slots[i].model);
      uk_spec_free(slots[i].s);
      sp_free(slots[i].sp);
      free(slots[i].sp_key);
      memset(&slots[i], 0, sizeof slots[i]);
    }
}

char *uk_provenance_json(const uk_spec *s) {
  static const char *const kinds[] = {"vector", "scalar", "symbol", "local"};
  static const char *const fills[] = {"Random", "Constant", "BinaryRaw"};
  char h1[33], h2[33];
  rt_hash_hex(rt_hash_bytes(RT_HASH_INIT, s->text, strlen(s->text)), h1);
  rt_hash_hex(rt_hash_bytes(RT_HASH_INIT, s->source, strlen(s->source)), h2);
  json_t *in = json_array();
  for (int i = 0; i < s->narg; i++) {
    const uk_arg *a = &s->arg[i];
    json_t *o = json_pack("{s:s, s:s, s:s}", "name", a->name, "type", a->type,
                          "kind", kinds[a->kind <= KN_LOCAL ? a->kind : 0]);
    if (a->kind != KN_LOCAL) {
      json_object_set_new(o, "fill", json_string(fills[a->fill <= KN_FILL_FILE ? a->fill : 0]));
      if (a->fill == KN_FILL_RANDOM) json_object_set_new(o, "seed", json_integer((json_int_t)a->seed));
      if (a->fill != KN_FILL_FILE) json_object_set_new(o, "value", json_real(a->value));
      else json_object_set_new(o, "file", json_string(a->file));
    }
    json_array_append_new(in, o);
  }
  json_t *j = json_pack("{s:s, s:s, s:s, s:o}", "t1", s->path, "t1_fnv128", h1, "source_fnv128", h2,
                        "inputs", in);
  char *out = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(j);
  return out;
}
