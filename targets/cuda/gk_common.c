/*
** gk_common.c -- the CUDA target's kernel table (gk.h).
*/
#include <string.h>

#include "gk.h"

const kn_kernel *const gk_kernels[] = {
  &gk_gemm, &gk_reduction, &gk_transpose, &gk_stencil, NULL,
};

const kn_kernel *gk_find(const char *name) {
  for (int i = 0; gk_kernels[i]; i++)
    if (!strcmp(gk_kernels[i]->name, name)) return gk_kernels[i];
  return NULL;
}
