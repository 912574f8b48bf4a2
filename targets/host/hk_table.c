/*
** hk_table.c -- the host target's kernel table (hk.h).
*/
#include <string.h>

#include "hk.h"

const kn_kernel *const hk_kernels[] = {
  &hk_gemm, &hk_conv2d, &hk_stencil, &hk_transpose, &hk_reduction, NULL,
};

const kn_kernel *hk_find(const char *name) {
  for (int i = 0; hk_kernels[i]; i++)
    if (!strcmp(hk_kernels[i]->name, name)) return hk_kernels[i];
  return NULL;
}
