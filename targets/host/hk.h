/*
** hk.h -- the host CPU target's kernel templates (kn_kernel, targets/kn.h).
** One file per kernel (hk_gemm.c, ...) defines one; hk_table.c lists them.
**
** The ABI of generated host source (what targets/host's worker runs):
**  1. C source defining `int rk_run(float *const *bufs)` that computes the
**     kernel on the buffers in the order of kn_kernel.buffers and returns
**     0. Problem sizes are compile-time constants in the source. It may
**     use OpenMP (compiled with -O3 -march=native -fopenmp).
**  2. Buffers and correctness as kn.h says (invariants 1 and 2).
*/
#ifndef HK_H
#define HK_H

#include "../kn.h"

extern const kn_kernel *const hk_kernels[];   /* NULL-terminated */
const kn_kernel *hk_find(const char *name);   /* NULL if unknown */

/* The kernels (one file each). */
extern const kn_kernel hk_gemm, hk_conv2d, hk_stencil, hk_transpose,
    hk_reduction;

#endif
