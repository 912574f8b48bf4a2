/*
** kn.c -- what every kernel template shares, whatever its backend: problem
** variables read from a loaded space, tuning-parameter look-up by name for
** the code generators, and the overflow-safe size arithmetic of buffers().
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kn.h"

int64_t kn_size_mul(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0) return -1;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t kn_size_add(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0) return -1;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

void kn_problem_from_space(kn_problem *pb, const sp_space *sp) {
  memset(pb, 0, sizeof *pb);
  for (int v = 0; v < sp_nvars(sp) && pb->n < KN_MAXVARS; v++) {
    pb->name[pb->n] = sp_var_name(sp, v);
    pb->val[pb->n++] = *sp_var_value(sp, v);
  }
}

static const sx_value *find_var(const kn_problem *pb, const char *name) {
  for (int i = 0; i < pb->n; i++)
    if (!strcmp(pb->name[i], name)) return &pb->val[i];
  return NULL;
}

int64_t kn_int(const kn_problem *pb, const char *name) {
  const sx_value *v = find_var(pb, name);
  return v && (v->t == SX_INT || v->t == SX_BOOL) ? v->u.i : 0;
}

const char *kn_str(const kn_problem *pb, const char *name) {
  const sx_value *v = find_var(pb, name);
  return v && v->t == SX_STR ? v->u.s->s : "";
}

static const sx_value *param(const sp_space *sp, const int *cfg, const char *name) {
  int p = sp_param_index(sp, name);
  if (p < 0) {
    fprintf(stderr, "rooftune: internal error: space %s has no parameter '%s' "
            "that its code generator needs\n", sp_name(sp), name);
    abort();
  }
  return sp_value(sp, p, cfg[p]);
}

int64_t kn_param_int(const sp_space *sp, const int *cfg, const char *name) {
  const sx_value *v = param(sp, cfg, name);
  return v->t == SX_FLOAT ? (int64_t)v->u.f : v->u.i;
}

const char *kn_param_str(const sp_space *sp, const int *cfg, const char *name) {
  const sx_value *v = param(sp, cfg, name);
  return v->t == SX_STR ? v->u.s->s : "";
}

/* The element types, in kn_elem order: name, bytes, floating point. */
static const struct { const char *name; size_t size; int fp; } elems[] = {
  [KN_F32] = {"f32", 4, 1}, [KN_F64] = {"f64", 8, 1}, [KN_F16] = {"f16", 2, 1},
  [KN_I8] = {"i8", 1, 0},   [KN_U8] = {"u8", 1, 0},   [KN_I16] = {"i16", 2, 0},
  [KN_U16] = {"u16", 2, 0}, [KN_I32] = {"i32", 4, 0}, [KN_U32] = {"u32", 4, 0},
  [KN_I64] = {"i64", 8, 0}, [KN_U64] = {"u64", 8, 0},
};

size_t kn_elem_size(kn_elem e) { return (unsigned)e <= KN_U64 ? elems[e].size : 0; }
const char *kn_elem_name(kn_elem e) { return (unsigned)e <= KN_U64 ? elems[e].name : "?"; }
int kn_elem_float(kn_elem e) { return (unsigned)e <= KN_U64 && elems[e].fp; }
