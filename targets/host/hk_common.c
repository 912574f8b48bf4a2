/*
** hk_common.c -- what every host kernel shares: problem variables read
** from a loaded space, tuning-parameter look-up by name for the code
** generators, the overflow-safe size arithmetic of buffers(), and the
** kernel table.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hk.h"

const hk_kernel *const hk_kernels[] = {
  &hk_gemm, &hk_conv2d, &hk_stencil, &hk_transpose, &hk_reduction, NULL,
};

int64_t hk_size_mul(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0) return -1;
  return __builtin_mul_overflow(a, b, &r) ? INT64_MAX : r;
}

int64_t hk_size_add(int64_t a, int64_t b) {
  int64_t r;
  if (a < 0 || b < 0) return -1;
  return __builtin_add_overflow(a, b, &r) ? INT64_MAX : r;
}

const hk_kernel *hk_find(const char *name) {
  for (int i = 0; hk_kernels[i]; i++)
    if (!strcmp(hk_kernels[i]->name, name)) return hk_kernels[i];
  return NULL;
}

void hk_problem_from_space(hk_problem *pb, const sp_space *sp) {
  memset(pb, 0, sizeof *pb);
  for (int v = 0; v < sp_nvars(sp) && pb->n < HK_MAXVARS; v++) {
    pb->name[pb->n] = sp_var_name(sp, v);
    pb->val[pb->n++] = *sp_var_value(sp, v);
  }
}

static const sx_value *find_var(const hk_problem *pb, const char *name) {
  for (int i = 0; i < pb->n; i++)
    if (!strcmp(pb->name[i], name)) return &pb->val[i];
  return NULL;
}

int64_t hk_int(const hk_problem *pb, const char *name) {
  const sx_value *v = find_var(pb, name);
  return v && (v->t == SX_INT || v->t == SX_BOOL) ? v->u.i : 0;
}

const char *hk_str(const hk_problem *pb, const char *name) {
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

int64_t hk_param_int(const sp_space *sp, const int *cfg, const char *name) {
  const sx_value *v = param(sp, cfg, name);
  return v->t == SX_FLOAT ? (int64_t)v->u.f : v->u.i;
}

const char *hk_param_str(const sp_space *sp, const int *cfg, const char *name) {
  const sx_value *v = param(sp, cfg, name);
  return v->t == SX_STR ? v->u.s->s : "";
}
