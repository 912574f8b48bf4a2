/*
** uk_eval.c -- what a parsed T1 kernel (uk.h) computes: its expressions
** evaluated (ProblemSize, launch geometry, argument sizes, work counts),
** the generated source (defines + the user's source + plan lines in the
** language's syntax) and the reference configuration. uk_spec.c checks a
** file with these at load; uk_kernel.c's slots call them.
*/
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uk.h"

/* ---- evaluation ---- */

/* The slots of an evaluation (uk_spec.c's layout): parameters (cfg's
** values, or with cfg NULL each parameter's list of values), ProblemSize,
** problem variables. */
typedef struct env {
  sx_value *slot;
  sx_list *lists;
  sx_value **lv;
  int nl;
  sx_list ps;
  sx_value psv[UK_MAXPS];
} env;

static void env_free(env *e) {
  for (int i = 0; i < e->nl; i++) free(e->lv[i]);
  free(e->lv), free(e->lists), free(e->slot);
}

/* One value as an int (a float of an integral value counts); 0, or -1
** with err "FIELD: `TEXT` ...". */
static int eval_int(uk_spec *s, const sx_prog *p, const sx_value *slot, const char *field, int64_t *out,
                    rt_err *err) {
  sx_value v;
  rt_err e = {0};
  if (sx_eval(s->vm, p, slot, &v, &e)) {
    rt_err_set(err, "%s: `%s` raised %s", field, sx_prog_text(p), e.msg);
    return -1;
  }
  if (v.t == SX_INT || v.t == SX_BOOL) {
    *out = v.u.i;
    return 0;
  }
  if (v.t == SX_FLOAT && v.u.f == floor(v.u.f) && fabs(v.u.f) < 9.2e18) {
    *out = (int64_t)v.u.f;
    return 0;
  }
  char buf[64];
  sx_repr(&v, buf, sizeof buf);
  rt_err_set(err, "%s: `%s` is %s (%s), not an integer", field, sx_prog_text(p), buf, sx_type_name(v.t));
  return -1;
}

/* Fill e for workload pb: problem variables, ProblemSize, and the
** parameters (cfg's values; cfg NULL: lists; sp NULL: none). */
static int env_init(env *e, uk_spec *s, const kn_problem *pb, const sp_space *sp, const int *cfg, rt_err *err) {
  memset(e, 0, sizeof *e);
  e->slot = rt_calloc((size_t)(s->np + 1 + s->nv), sizeof *e->slot);
  for (int v = 0; v < s->nv; v++)
    for (int i = 0; i < pb->n; i++)
      if (!strcmp(pb->name[i], s->vname[v])) e->slot[s->np + 1 + v] = pb->val[i];
  for (int i = 0; i < s->nps; i++) {
    char field[64];
    int64_t x;
    snprintf(field, sizeof field, "KernelSpecification.ProblemSize[%d]", i);
    if (eval_int(s, s->ps[i], e->slot, field, &x, err)) return -1;
    e->psv[i] = sx_int(x);
  }
  e->ps = (sx_list){.n = (size_t)s->nps, .v = e->psv, .weight = (size_t)s->nps};
  e->slot[s->np].t = SX_LIST;
  e->slot[s->np].u.l = &e->ps;
  if (!sp) return 0;
  if (!cfg) {
    e->lists = rt_calloc((size_t)s->np + 1, sizeof *e->lists);
    e->lv = rt_calloc((size_t)s->np + 1, sizeof *e->lv);
  }
  for (int p = 0; p < s->np; p++) {
    int q = sp_param_index(sp, s->pname[p]);
    if (q < 0) continue;   /* a space of other parameters: names read as None */
    if (cfg) {
      e->slot[p] = *sp_value(sp, q, cfg[q]);
      continue;
    }
    int n = sp_nvalues(sp, q);
    size_t weight = (size_t)n;
    e->lv[e->nl] = rt_calloc((size_t)n, sizeof **e->lv);
    for (int i = 0; i < n; i++) {
      e->lv[e->nl][i] = *sp_value(sp, q, i);
      if (e->lv[e->nl][i].t == SX_STR) weight += e->lv[e->nl][i].u.s->len;
    }
    e->lists[e->nl] = (sx_list){.n = (size_t)n, .v = e->lv[e->nl], .weight = weight};
    e->slot[p].t = SX_LIST;
    e->slot[p].u.l = &e->lists[e->nl++];
  }
  return 0;
}

int uk_problem_size(uk_spec *s, const kn_problem *pb, int64_t *ps, int *n, rt_err *err) {
  env e;
  int rc = env_init(&e, s, pb, NULL, NULL, err);
  for (int i = 0; !rc && i < s->nps; i++) ps[i] = e.psv[i].u.i;
  *n = rc ? 0 : s->nps;
  env_free(&e);
  return rc;
}

static const char xyz[] = "XYZ";

int uk_geometry(uk_spec *s, const kn_problem *pb, const sp_space *sp, const int *cfg, uk_geom *g,
                rt_err *err) {
  env e;
  memset(g, 0, sizeof *g);
  int rc = env_init(&e, s, pb, sp, cfg, err);
  char field[64];
  for (int d = 0; !rc && d < 3; d++) {
    /* local size */
    static const char *const bs[] = {"block_size_x", "block_size_y", "block_size_z"};
    int q = sp_param_index(sp, bs[d]);
    snprintf(field, sizeof field, "KernelSpecification.LocalSize.%c", xyz[d]);
    g->local[d] = 1;
    if (s->local[d]) {
      rc = eval_int(s, s->local[d], e.slot, field, &g->local[d], err);
    } else if (q >= 0) {
      const sx_value *v = sp_value(sp, q, cfg[q]);
      if (v->t != SX_INT) {
        rt_err_set(err, "%s: missing, and the parameter %s is not an int", field, bs[d]);
        rc = -1;
      } else {
        g->local[d] = v->u.i;
      }
    }
    if (!rc && (g->local[d] < 1 || g->local[d] > INT32_MAX)) {
      rt_err_set(err, "%s: the local size is %lld (expected 1 to 2^31 - 1)", field, (long long)g->local[d]);
      rc = -1;
    }
    if (rc) break;
    /* blocks */
    g->blocks[d] = 1;
    if (s->ndiv[d] >= 0) {
      int64_t prod = 1, x, n = d < s->nps ? e.psv[d].u.i : 1;
      for (int i = 0; !rc && i < s->ndiv[d]; i++) {
        snprintf(field, sizeof field, "KernelSpecification.GridDiv%c[%d]", xyz[d], i);
        rc = eval_int(s, s->div[d][i], e.slot, field, &x, err);
        if (!rc && (x < 1 || __builtin_mul_overflow(prod, x, &prod))) {
          rt_err_set(err, "%s: `%s` is %lld: a grid divisor is at least 1", field, sx_prog_text(s->div[d][i]),
                     (long long)x);
          rc = -1;
        }
      }
      snprintf(field, sizeof field, "KernelSpecification.GridDiv%c", xyz[d]);
      if (!rc && n < 0) {
        rt_err_set(err, "KernelSpecification.ProblemSize[%d]: %lld is negative", d, (long long)n);
        rc = -1;
      }
      if (!rc) g->blocks[d] = n / prod + (n % prod != 0);
    } else if (s->global[d]) {
      snprintf(field, sizeof field, "KernelSpecification.GlobalSize.%c", xyz[d]);
      int64_t x;
      rc = eval_int(s, s->global[d], e.slot, field, &x, err);
      if (!rc) g->blocks[d] = s->gs_blocks ? x : x <= 0 ? x : x / g->local[d] + (x % g->local[d] != 0);
    }
    if (!rc && (g->blocks[d] < 1 || g->blocks[d] > INT32_MAX)) {
      rt_err_set(err, "%s: %lld %s in dimension %c (expected 1 to 2^31 - 1)", field, (long long)g->blocks[d],
                 s->lang == UK_CUDA ? "blocks" : "work-groups", xyz[d]);
      rc = -1;
    }
    g->global[d] = g->blocks[d] * g->local[d];
  }
  if (!rc && s->smem) {
    rc = eval_int(s, s->smem, e.slot, "KernelSpecification.SharedMemory", &g->smem, err);
    if (!rc && (g->smem < 0 || g->smem > INT32_MAX)) {
      rt_err_set(err, "KernelSpecification.SharedMemory: %lld bytes (expected 0 to 2^31 - 1)",
                 (long long)g->smem);
      rc = -1;
    }
  }
  env_free(&e);
  return rc;
}

int uk_buffers(uk_spec *s, const kn_problem *pb, const sp_space *sp, kn_buf *b, rt_err *err) {
  env e;
  int ok = !env_init(&e, s, pb, sp, NULL, err), failed = !ok;
  for (int i = 0; i < s->narg; i++) {
    const uk_arg *a = &s->arg[i];
    b[i] = (kn_buf){.name = a->name, .n = 1, .out = a->out, .elem = a->elem, .kind = a->kind,
                    .fill = a->fill, .value = a->value, .file = a->file, .seed = a->seed,
                    .inout = a->inout, .has_ref = a->has_ref, .ref_fill = a->ref_fill,
                    .ref_value = a->ref_value, .ref_file = a->ref_file};
    if (a->fill_expr) {   /* FillValue per workload */
      sx_value v;
      rt_err x = {0};
      int bad = !ok || sx_eval(s->vm, a->fill_expr, e.slot, &v, &x) ||
                !(v.t == SX_INT || v.t == SX_BOOL || v.t == SX_FLOAT);
      if (bad && ok && !failed)
        rt_err_set(err, "KernelSpecification.Arguments[%d].FillValue: `%s` %s%s", i, sx_prog_text(a->fill_expr),
                   x.msg[0] ? "raised " : "is not a number", x.msg);
      failed |= bad;
      b[i].value = bad ? 0 : v.t == SX_FLOAT ? v.u.f : (double)v.u.i;
    }
    if (!a->size) continue;
    char field[64];
    int64_t n = -1;
    snprintf(field, sizeof field, "KernelSpecification.Arguments[%d].Size", i);
    if (!ok || eval_int(s, a->size, e.slot, field, &n, failed ? NULL : err)) {
      b[i].n = -1;
      failed = 1;
      continue;
    }
    if (n < 0 && !failed) {
      rt_err_set(err, "%s: `%s` is %lld, a negative size", field, sx_prog_text(a->size), (long long)n);
      failed = 1;
    }
    b[i].n = kn_size_mul(n, a->lanes);
  }
  env_free(&e);
  return failed ? -1 : s->narg;
}

double uk_work(uk_spec *s, const kn_problem *pb, const sp_space *sp, int which, rt_err *err) {
  const sx_prog *p = which ? s->bytes : s->flops;
  if (!p) return 0;
  env e;
  double r = NAN;
  if (!env_init(&e, s, pb, sp, NULL, err)) {
    sx_value v;
    rt_err x = {0};
    const char *field = which ? "rooftune.Bytes" : "rooftune.Flops";
    if (sx_eval(s->vm, p, e.slot, &v, &x))
      rt_err_set(err, "%s: `%s` raised %s", field, sx_prog_text(p), x.msg);
    else if (v.t == SX_INT || v.t == SX_BOOL) r = (double)v.u.i;
    else if (v.t == SX_FLOAT) r = v.u.f;
    else rt_err_set(err, "%s: `%s` is a %s, not a number", field, sx_prog_text(p), sx_type_name(v.t));
    if (!isnan(r) && !(r >= 0 && isfinite(r))) {
      rt_err_set(err, "%s: `%s` is %g: expected a finite number >= 0", field, sx_prog_text(p), r);
      r = NAN;
    }
  }
  env_free(&e);
  return r;
}

int uk_reference_config(uk_spec *s, sp_space *sp, int *cfg, rt_err *err) {
  int np = sp_nparams(sp), failed = -1;
  if (s->nref) {
    for (int p = 0; p < np; p++) {
      cfg[p] = sp_default(sp, p);
      int named = 0;
      for (int r = 0; r < s->nref; r++) {
        if (strcmp(s->ref_name[r], sp_param_name(sp, p))) continue;
        named = 1;
        cfg[p] = -1;
        for (int i = 0; i < sp_nvalues(sp, p) && cfg[p] < 0; i++)
          if (sx_equal(sp_value(sp, p, i), &s->ref_val[r])) cfg[p] = i;
      }
      if (cfg[p] < 0) {
        rt_err_set(err, "rooftune.ReferenceConfig: %s %s", sp_param_name(sp, p),
                   named ? "has a value not among its Values for this workload"
                         : "is not named and has no Default");
        return -1;
      }
    }
    if (!sp_valid(sp, cfg, &failed)) {
      rt_err_set(err, "rooftune.ReferenceConfig: the configuration breaks the condition `%s`",
                 sp_cond_text(sp, failed));
      return -1;
    }
    return 0;
  }
  if (sp_default_config(sp, cfg) && sp_valid(sp, cfg, NULL)) return 0;
  if (sp_count(sp) > 0 && !sp_unrank(sp, 0, cfg)) return 0;
  rt_err_set(err, "ConfigurationSpace: no valid configuration for this workload: the kernel has no reference");
  return -1;
}

/* ---- code generation ---- */

/* Whether C/C++ source src declares `extern "C"` in its code: comments,
** string and character literals skipped (a comment that mentions it must
** not stop the wrapping: invariant 4). Whitespace between the two tokens
** allowed. */
static int has_extern_c(const char *src) {
  for (const char *p = src; *p;) {
    if (p[0] == '/' && p[1] == '/') {
      p += strcspn(p, "\n");
    } else if (p[0] == '/' && p[1] == '*') {
      const char *e = strstr(p + 2, "*/");
      p = e ? e + 2 : p + strlen(p);
    } else if (*p == '"' || *p == '\'') {
      char q = *p++;
      while (*p && *p != q) p += p[0] == '\\' && p[1] ? 2 : 1;
      if (*p) p++;
    } else if (!strncmp(p, "extern", 6) && (p == src || !(isalnum((unsigned char)p[-1]) || p[-1] == '_'))) {
      const char *q = p + 6;
      while (isspace((unsigned char)*q)) q++;
      if (q > p + 6 && !strncmp(q, "\"C\"", 3)) return 1;
      p += 6;
    } else {
      p++;
    }
  }
  return 0;
}

/* `#define NAME VALUE` (invariant 4's rendering). */
static void define(rt_str *o, const char *name, const sx_value *v) {
  char buf[64];
  switch (v->t) {
  case SX_INT: rt_str_printf(o, "#define %s %lld\n", name, (long long)v->u.i); break;
  case SX_BOOL: rt_str_printf(o, "#define %s %d\n", name, v->u.i ? 1 : 0); break;
  case SX_FLOAT:
    sx_repr(v, buf, sizeof buf);
    rt_str_printf(o, "#define %s %s\n", name, buf);
    break;
  case SX_STR:
    rt_str_printf(o, "#define %s ", name);
    for (const char *c = v->u.s->s; *c; c++) rt_str_printf(o, "%c", *c == '\n' || *c == '\r' ? ' ' : *c);
    rt_str_printf(o, "\n");
    break;
  default: rt_str_printf(o, "/* %s: not a scalar */\n", name); break;
  }
}

static int named(const kn_problem *pb, const sp_space *sp, const char *name) {
  for (int i = 0; i < pb->n; i++)
    if (!strcmp(pb->name[i], name)) return 1;
  return sp_param_index(sp, name) >= 0;
}

char *uk_codegen(uk_spec *s, const kn_problem *pb, const sp_space *sp, const int *cfg) {
  rt_str o = {0};
  uk_geom g;
  rt_err err = {0};
  int bad = uk_geometry(s, pb, sp, cfg, &g, &err);
  rt_str_printf(&o, "// rooftune T1 kernel %s (%s)\n", s->name, s->path);
  if (bad) {
    rt_str_printf(&o, "#error rooftune: ");
    for (const char *c = err.msg; *c; c++) rt_str_printf(&o, "%c", *c == '\n' ? ' ' : *c);
    rt_str_printf(&o, "\n");
  }
  for (int p = 0; p < sp_nparams(sp); p++) define(&o, sp_param_name(sp, p), sp_value(sp, p, cfg[p]));
  for (int i = 0; i < pb->n; i++) define(&o, pb->name[i], &pb->val[i]);
  static const char *const kt[2][3] = {{"block_size_x", "block_size_y", "block_size_z"},
                                       {"grid_size_x", "grid_size_y", "grid_size_z"}};
  for (int k = 0; !bad && k < 2; k++)
    for (int d = 0; d < 3; d++)
      if (!named(pb, sp, kt[k][d])) {
        sx_value v = sx_int(k ? g.blocks[d] : g.local[d]);
        define(&o, kt[k][d], &v);
      }
  int wrap = s->lang == UK_CUDA && !s->entry && !has_extern_c(s->source);
  rt_str_printf(&o, "%s%s%s", wrap ? "extern \"C\" {\n" : "", s->source, wrap ? "}\n" : "");
  if (bad) return o.s;
  const char *pre = s->lang == UK_CUDA ? "//@rk" : "//@oc";
  if (s->options) rt_str_printf(&o, "%s options %s\n", pre, s->options);
  if (s->entry) rt_str_printf(&o, "%s entry %s %s\n", pre, s->kernel_name, s->entry);
  for (int i = 0; i < s->narg; i++)
    if (s->arg[i].kind == KN_SYMBOL) rt_str_printf(&o, "%s symbol %s b%d\n", pre, s->arg[i].name, i);
  rt_str_printf(&o, "%s launch %s", pre, s->kernel_name);
  if (s->lang == UK_CUDA)
    rt_str_printf(&o, " %lld %lld %lld %lld %lld %lld %lld", (long long)g.blocks[0], (long long)g.blocks[1],
                  (long long)g.blocks[2], (long long)g.local[0], (long long)g.local[1],
                  (long long)g.local[2], (long long)g.smem);
  else
    rt_str_printf(&o, " %lld %lld %lld %lld %lld %lld", (long long)g.global[0], (long long)g.global[1],
                  (long long)g.global[2], (long long)g.local[0], (long long)g.local[1],
                  (long long)g.local[2]);
  for (int i = 0; i < s->narg; i++) {
    kn_kind k = s->arg[i].kind;
    if (k != KN_SYMBOL) rt_str_printf(&o, " %c%d", k == KN_SCALAR ? 's' : k == KN_LOCAL ? 'l' : 'b', i);
  }
  rt_str_printf(&o, "\n");
  return o.s;
}

