/*
** cm_table.c -- the table of kernel models: every model rooftune knows, one
** row per kernel and model family, and the lookup by kernel and family.
** Adding a model: write cm_NAME.c exposing one `const cm_kmodel`, declare
** it in cm.h, add one row here, and test it in tests/.
*/
#include <string.h>

#include "cm.h"

const cm_kmodel *const cm_kmodels[] = {
  &cm_gemm,
  &cm_conv2d,
  &cm_stencil,
  &cm_transpose,
  &cm_reduction,
  &cm_gpu_gemm,
  &cm_gpu_reduction,
  &cm_gpu_transpose,
  &cm_gpu_stencil,
  &cm_wg_reduction,
  &cm_wg_transpose,
  &cm_vla_gemm,
  &cm_vla_reduction,
  NULL,
};

/* Models registered at run time (cm.h: cm_kmodel_register). */
static const cm_kmodel *added[CM_MAXADDED];

int cm_kmodel_register(const cm_kmodel *k) {
  for (int i = 0; i < CM_MAXADDED; i++)
    if (!added[i] || added[i] == k) {
      added[i] = k;
      return 0;
    }
  return -1;
}

void cm_kmodel_unregister(const cm_kmodel *k) {
  for (int i = 0; i < CM_MAXADDED; i++)
    if (added[i] == k) added[i] = NULL;
}

static int family_is(const cm_kmodel *k, const char *family) {
  const char *f = k->family ? k->family : "cpu";
  return !strcmp(f, "*") || !strcmp(f, family);
}

const cm_kmodel *cm_kmodel_find_on(const char *family, const char *kernel) {
  if (!family) family = "cpu";
  for (int i = 0; cm_kmodels[i]; i++)
    if (!strcmp(cm_kmodels[i]->kernel, kernel) && family_is(cm_kmodels[i], family))
      return cm_kmodels[i];
  for (int i = 0; i < CM_MAXADDED; i++)
    if (added[i] && !strcmp(added[i]->kernel, kernel) && family_is(added[i], family))
      return added[i];
  return NULL;
}

const cm_kmodel *cm_kmodel_find(const char *kernel) { return cm_kmodel_find_on("cpu", kernel); }
