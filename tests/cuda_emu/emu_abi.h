/*
** emu_abi.h -- the interface between the CUDA emulator's runner
** (emu_run.c, C, in the test program) and the prelude compiled into every
** emulated kernel library (emu_prelude.h, C++, in a dlopen'ed .so).
**
** The .so defines one global `emu_rt` (extern "C"); the runner finds it
** with dlsym and, before it resumes a thread (fiber), stores that thread's
** index in it. The kernel's built-ins read the fields (threadIdx is
** emu_rt.tid, ...) and call back into the runner through its function
** pointers at barriers, which are the only places a thread yields.
** Plain C, included by both sides.
*/
#ifndef EMU_ABI_H
#define EMU_ABI_H

#include <stdint.h>

#define EMU_ABI_VERSION 1

typedef struct emu_u3 {
  unsigned x, y, z;
} emu_u3;

typedef struct emu_rt_t {
  int abi;                 /* EMU_ABI_VERSION (set by the prelude) */
  emu_u3 tid, bid;         /* the running thread's threadIdx, blockIdx */
  emu_u3 bdim, gdim;       /* blockDim, gridDim of the current launch */
  unsigned lane;           /* the running thread's lane in its warp */
  void *dyn_smem;          /* the block's dynamic shared memory */
  unsigned dyn_smem_bytes; /* its size (the plan's SMEM) */
  /* __syncthreads() at source line `line`: returns when every thread of
  ** the block arrived (a divergent barrier is reported by the runner). */
  void (*syncthreads)(int line);
  /* Warp exchange (shuffles, votes, __syncwarp): the calling thread
  ** deposits val, waits until every live lane named in mask deposited,
  ** and gets the warp's 32 slots (valid until its next exchange but one). */
  const uint64_t *(*xchg)(unsigned mask, uint64_t val, int line);
  /* Stop the kernel with an error message (an unsupported built-in, a
  ** failed check): never returns. */
  void (*fail)(const char *msg, int line);
} emu_rt_t;

#endif
