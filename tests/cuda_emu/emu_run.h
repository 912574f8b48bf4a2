/*
** emu_run.h -- a CPU emulator for rooftune's generated CUDA source (the
** gk.h ABI), for tests on machines without a GPU: it checks what a code
** generator's kernels COMPUTE, not only that NVRTC compiles them.
** Linked into the test programs only (not into librooftune).
**
** How it runs a source (emu_run):
**  1. Rewrites `extern __shared__ T name[];` into a pointer to the block's
**     dynamic shared memory (emu_rewrite), then compiles the source as C++
**     with g++ -include tests/cuda_emu/emu_prelude.h into a .so, cached by
**     content hash under $TMPDIR/rooftune-emu-UID/.
**  2. Forks a child (a crashing or hanging kernel cannot take the test
**     down) that dlopens the .so and runs the plan: zero steps first, then
**     the launches in order; each launch runs its blocks one after the
**     other, each block's threads as cooperative fibers (own stacks) that
**     switch only at barriers: __syncthreads, __syncwarp, shuffles, votes.
**  3. Buffers live in shared memory between guard pages with canaries
**     around them; outputs start as NaN (as the harness poisons them), the
**     workspace and the dynamic shared memory too.
** Reported as errors, not hangs or silent successes: compile errors;
** unknown kernels; a __syncthreads() some threads of a block skip
** (exited, or waiting elsewhere), or reached at different source lines; a
** thread exiting while others wait at a barrier; warp exchanges with a
** lane that exited or reading a lane that did not take part; deadlocks;
** segfaults with the buffer whose guard page was hit (out of bounds);
** writes into the canaries around a buffer; a modified input; timeouts.
** Not detected: races as such (a thread runs alone from one barrier to
** the next, in thread order or its reverse (emu_opts.reverse), and the
** last thread to arrive at a barrier runs on first; a missing barrier
** shows only as the wrong values it lets a thread read), reads of static
** __shared__ memory before it is written (it is zero in the first block
** and keeps the previous block's values after that), out-of-bounds
** accesses of static __shared__ arrays, shared memory beyond 48 KiB
** declared statically; floating-point results differ from the GPU's in
** rounding (no FMA contraction; fmaf is exact).
*/
#ifndef EMU_RUN_H
#define EMU_RUN_H

#include "common/rt.h"
#include "targets/cuda/gk.h"

typedef struct emu_opts {
  unsigned timeout_s;   /* kill the child after this (0: 120 s) */
  int runs;             /* run the whole plan this many times (0: 1), as
                        ** the harness's timed repeats (no reset between) */
  size_t stack_bytes;   /* per thread (0: 256 KiB) */
  int reverse;          /* resume a block's threads from the last one: a
                        ** missing barrier shows as a wrong result when a
                        ** thread reads what a thread scheduled after it
                        ** writes, so run both orders to expose both ways */
} emu_opts;

/* Whether the emulator can run here: the C++ compiler ($EMU_CXX or g++)
** runs and the prelude is found. 0 with *why saying what is missing. */
int emu_available(const char **why);

/* Run src's plan p on the buffers described by b[0..nbuf-1] (as
** kn_kernel.buffers gives them): data[i] holds b[i].n floats; inputs are
** read, outputs (b[i].out) are written with the kernel's results. o may be
** NULL. 0, or -1 with err saying what went wrong (data unchanged). */
int emu_run(const char *src, const gk_plan *p, const kn_buf *b, int nbuf,
            float *const *data, const emu_opts *o, rt_err *err);

/* The same with the plan parsed from src (gk_plan_parse). */
int emu_run_src(const char *src, const kn_buf *b, int nbuf, float *const *data,
                const emu_opts *o, rt_err *err);

/* The source with every `extern __shared__ [__align__(N)] T name[];`
** replaced by `T *const name = (T *)emu_rt.dyn_smem;` inside a function,
** or by a macro `#define name ((T *)emu_rt.dyn_smem)` at file scope; line
** numbers kept. malloc'ed; NULL with err on a declaration it cannot read. */
char *emu_rewrite(const char *src, rt_err *err);

#endif
